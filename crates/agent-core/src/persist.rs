//! Output persistence: a result longer than the limit is written under the library dir and replaced by a stub.

use std::path::{Path, PathBuf};

/// How many characters of a persisted result the stub keeps, so the model still sees how it starts.
const STUB_HEAD_CHARS: usize = 1_000;

/// Where large results go (`<library dir>/tool-results/<call id>.txt`) and from which size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputStore {
    dir: PathBuf,
    max_chars: usize,
}

/// A result that was written to disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Persisted {
    /// The file holding the full result.
    pub path: PathBuf,
    /// The stub the model sees instead.
    pub stub: String,
}

impl OutputStore {
    /// Results over `max_chars` characters are written under `library_dir/tool-results/`.
    pub fn new(library_dir: &Path, max_chars: usize) -> Self {
        Self {
            dir: library_dir.join("tool-results"),
            max_chars,
        }
    }

    /// The directory results are written to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The size limit in characters.
    pub fn max_chars(&self) -> usize {
        self.max_chars
    }

    /// Writes `content` to `<dir>/<call id>.txt` when it is over the limit and returns the stub; `Ok(None)` when it
    /// is short enough to stay inline. The call id comes from the model, so it is reduced to a safe file name.
    pub fn persist(&self, call_id: &str, content: &str) -> std::io::Result<Option<Persisted>> {
        let chars = content.chars().count();
        if chars <= self.max_chars {
            return Ok(None);
        }
        agent_hooks::create_dir_all_ignored(&self.dir)?;
        let path = self.dir.join(format!("{}.txt", file_stem(call_id)));
        std::fs::write(&path, content)?;
        let head: String = content
            .chars()
            .take(STUB_HEAD_CHARS.min(self.max_chars))
            .collect();
        let stub = format!(
            "[the result has {chars} characters; the full text is in `{}` (read it with read_file)]\n{head}\n[…]",
            path.display()
        );
        Ok(Some(Persisted { path, stub }))
    }
}

/// A file name made of the call id's ASCII letters, digits, `-` and `_`; anything else (a `/`, `..`, an empty
/// id) cannot reach outside the directory because it is replaced.
fn file_stem(call_id: &str) -> String {
    let stem: String = call_id
        .chars()
        .take(100)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() { "call".to_owned() } else { stem }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_results_stay_inline_long_ones_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let store = OutputStore::new(dir.path(), 10);
        assert_eq!(store.persist("c1", "short").unwrap(), None);
        let long = "é".repeat(50);
        let persisted = store.persist("../../evil/c2", &long).unwrap().unwrap();
        assert_eq!(persisted.path, dir.path().join("tool-results/______evil_c2.txt"));
        assert_eq!(std::fs::read_to_string(&persisted.path).unwrap(), long);
        assert!(persisted.stub.contains("50 characters"));
        assert_eq!(file_stem(""), "call");
    }
}
