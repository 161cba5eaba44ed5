//! Why a subagent request cannot be planned.

/// A subagent request that cannot be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubagentError {
    /// The request's arguments are malformed.
    #[error("invalid subagent request: {0}")]
    InvalidRequest(String),
    /// No agent of that type is defined.
    #[error("no subagent type `{0}` (known: explore, general)")]
    UnknownAgent(String),
}
