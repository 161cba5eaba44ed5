//! Errors of building a runtime and of preparing a scenario; running a call never fails, it reports.

use std::path::PathBuf;

/// Why a runtime could not be built or a scenario could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The guard could not be built from the settings.
    #[error(transparent)]
    Guard(#[from] agent_decide::Error),
    /// A rule or settings file could not be loaded.
    #[error(transparent)]
    Rules(#[from] agent_rules::Error),
    /// The `hooks` section of a settings file is malformed.
    #[error("invalid `hooks` settings: {0}")]
    Hooks(#[from] agent_hooks::HookError),
    /// The audit database could not be opened.
    #[error(transparent)]
    Audit(#[from] agent_hooks::AuditError),
    /// A scenario file is malformed.
    #[error("invalid scenario `{name}`: {why}")]
    Scenario {
        /// The scenario (file name or title).
        name: String,
        /// What is wrong.
        why: String,
    },
    /// A file of the workspace could not be written.
    #[error("cannot write `{path}`: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}
