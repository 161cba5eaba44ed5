//! Whether a call reads or writes a file: the one access type of every layer.

use serde::{Deserialize, Serialize};

/// What a file is touched for. The rules match `Read(…)` rules against reads and `Edit(…)`/`Write(…)` rules
/// against writes, the file-system sandbox checks a path for one of them, and the shell analysis reports the files
/// a command line reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Reading (the Read, Glob and Grep tools, a command's input).
    Read,
    /// Writing, creating or deleting (the Write, Edit, MultiEdit and NotebookEdit tools, a redirection).
    Write,
}

impl Access {
    /// `read` or `write`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
        }
    }
}

impl std::fmt::Display for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelled_alike_in_text_and_json() {
        for access in [Access::Read, Access::Write] {
            assert_eq!(
                serde_json::to_value(access).unwrap(),
                serde_json::Value::String(access.to_string())
            );
        }
    }
}
