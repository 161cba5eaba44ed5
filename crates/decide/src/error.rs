//! Errors of building a guard (loading settings); deciding itself never fails.

/// Why a guard could not be built.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A rule or settings file could not be loaded.
    #[error(transparent)]
    Rules(#[from] agent_rules::Error),
    /// The `agentGuard` section of a settings file is malformed.
    #[error("invalid settings `{file}`: {why}")]
    Settings {
        /// The file (or source) holding the section.
        file: String,
        /// What is wrong.
        why: String,
    },
    /// A hook input that cannot be decided.
    #[error("invalid hook input: {0}")]
    Input(String),
}

/// The result type of building a guard.
pub type Result<T, E = Error> = std::result::Result<T, E>;
