//! Errors of building a runtime; running a call never fails, it reports.

/// Why a runtime could not be built.
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
}
