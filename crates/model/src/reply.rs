//! What one request to a model's server gives back, in neither protocol's shape.

use agent_tool_traits::ToolCall;

/// A model's answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reply {
    /// Its text.
    pub(crate) text: String,
    /// The calls it made, in order.
    pub(crate) calls: Vec<ToolCall>,
    /// The tokens of the prompt and the answer, when the server reported them.
    pub(crate) tokens: Option<u64>,
}

/// Whether the model may call tools in this request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolChoice {
    /// It may (a normal turn).
    Auto,
    /// It may not (the final turn, a summary); the tools are still described, since the conversation holds calls.
    None,
}

/// What went wrong in a stream: the server reported an error, or the data is not of the protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StreamError {
    /// The server's own error event.
    Server(String),
    /// Data the protocol does not allow, with the offending part.
    Malformed(String),
}
