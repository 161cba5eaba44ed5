//! Errors of loading rules and settings. Deciding never fails; only loading does.

use std::path::PathBuf;

/// A rule or a settings file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A rule that cannot be parsed.
    #[error("invalid rule `{rule}`{}: {why}", origin.as_ref().map(|o| format!(" in {o}")).unwrap_or_default())]
    Rule {
        /// The rule as written.
        rule: String,
        /// Where it was found (a file and position, or an environment variable).
        origin: Option<String>,
        /// What is wrong with it.
        why: String,
    },
    /// A settings file that cannot be read.
    #[error("cannot read settings file `{}`", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A settings file that is not valid JSON of the expected shape.
    #[error("invalid settings file `{}`: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// Where the JSON is wrong.
        #[source]
        source: serde_json::Error,
    },
    /// A settings file that fails the strict check: every problem, each with its line and column.
    #[error("{}", problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, in the order of the file.
        problems: Vec<crate::Problem>,
    },
    /// A permission mode that does not exist.
    #[error("unknown permission mode `{mode}`{}: expected one of default, acceptEdits, plan, dontAsk, bypassPermissions, auto, bubble", origin.as_ref().map(|o| format!(" in {o}")).unwrap_or_default())]
    Mode {
        /// The mode as written.
        mode: String,
        /// Where it was found.
        origin: Option<String>,
    },
}

impl Error {
    /// The same error, located in `origin` (a file and position, an environment variable).
    #[must_use]
    pub fn at(self, at: impl Into<String>) -> Self {
        match self {
            Self::Rule {
                rule,
                why,
                origin: None,
            } => Self::Rule {
                rule,
                why,
                origin: Some(at.into()),
            },
            Self::Mode { mode, origin: None } => Self::Mode {
                mode,
                origin: Some(at.into()),
            },
            other => other,
        }
    }
}

/// The result type of loading.
pub type Result<T, E = Error> = std::result::Result<T, E>;
