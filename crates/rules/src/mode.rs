//! Permission modes.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

/// How much the agent may do without asking, from the strictest to the most permissive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PermissionMode {
    /// Never ask: an ask becomes a deny.
    DontAsk,
    /// Plan only: every write and every command that is not read-only is denied.
    Plan,
    /// Ask when a rule or a default says so.
    #[default]
    Default,
    /// File edits inside the roots are allowed without asking.
    AcceptEdits,
    /// A classifier approves or blocks what would otherwise be asked.
    Auto,
    /// Allow everything that no deny rule, layer, hook or safety check stops.
    BypassPermissions,
    /// A subagent whose asks go to its parent's approver.
    Bubble,
}

impl PermissionMode {
    /// The name used in settings files and hook input.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::DontAsk => "dontAsk",
            Self::Plan => "plan",
            Self::Default => "default",
            Self::AcceptEdits => "acceptEdits",
            Self::Auto => "auto",
            Self::BypassPermissions => "bypassPermissions",
            Self::Bubble => "bubble",
        }
    }

    /// Modes a project's own settings cannot turn on (they would let a cloned repository lift the prompts).
    pub const fn needs_trusted_source(self) -> bool {
        matches!(self, Self::BypassPermissions | Self::Auto)
    }
}

impl FromStr for PermissionMode {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.trim() {
            "default" => Self::Default,
            "acceptEdits" => Self::AcceptEdits,
            "plan" => Self::Plan,
            "dontAsk" => Self::DontAsk,
            "bypassPermissions" => Self::BypassPermissions,
            "auto" => Self::Auto,
            "bubble" => Self::Bubble,
            other => {
                return Err(Error::Mode {
                    mode: other.to_owned(),
                    origin: None,
                });
            }
        })
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        for mode in [
            "default",
            "acceptEdits",
            "plan",
            "dontAsk",
            "bypassPermissions",
            "auto",
            "bubble",
        ] {
            assert_eq!(mode.parse::<PermissionMode>().unwrap().as_str(), mode);
        }
        let err = "yolo".parse::<PermissionMode>().unwrap_err().to_string();
        assert!(err.contains("`yolo`"), "{err}");
    }
}
