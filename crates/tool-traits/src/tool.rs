//! The `Tool` trait: what a tool declares about its own safety, and how it is called.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use crate::{Confinement, Decision, ProxyGrant, Verdict};

/// How a running tool reacts when the user cancels the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum InterruptBehavior {
    /// Stop at once; the result is "cancelled". Right for tools without side effects.
    #[default]
    Cancel,
    /// Finish first, so that a side effect is never left half done (writes, shell commands, subagents).
    Block,
}

/// A permission check a tool asks for its own call, on top of the rules, returned by
/// [`Tool::check_permissions`]. A `Deny` here is step 2 of the resolution; an `Ask` is a safety ask (step 4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionCheck {
    /// `Deny` or `Ask`; an `Allow` adds nothing and is ignored.
    pub decision: Decision,
    /// Why, for the user and the model.
    pub reason: String,
}

impl PermissionCheck {
    /// A tool-level deny.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self {
            decision: Decision::Deny,
            reason: reason.into(),
        }
    }

    /// A tool-level ask.
    pub fn ask(reason: impl Into<String>) -> Self {
        Self {
            decision: Decision::Ask,
            reason: reason.into(),
        }
    }
}

/// What a tool returns: text for the model, and whether it is an error.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolOutput {
    /// The content shown to the model.
    pub content: String,
    /// Whether the call failed (the content then says why).
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: false,
        }
    }

    /// A failed result.
    pub fn error(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: true,
        }
    }
}

/// Why a tool could not produce a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolError {
    /// The arguments do not fit the tool's input schema; names the bad argument.
    InvalidArgs(String),
    /// The call was refused by a check inside the tool (the sandbox at open time, for instance).
    Refused(Verdict),
    /// The call ran and failed.
    Failed(String),
    /// The call was cancelled before it finished.
    Cancelled,
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::InvalidArgs(why) => write!(f, "invalid arguments: {why}"),
            Self::Refused(verdict) => write!(f, "refused: {}", verdict.reason()),
            Self::Failed(why) => write!(f, "failed: {why}"),
            Self::Cancelled => f.write_str("cancelled by the user"),
        }
    }
}

impl std::error::Error for ToolError {}

/// The future a tool call returns. Boxed so that `dyn Tool` works with any executor.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'a>>;

/// What a tool may know about the run it is called in.
#[derive(Debug, Clone, Default)]
pub struct ToolContext {
    /// The session the call belongs to.
    pub session_id: String,
    /// The call's id ([`crate::ToolCall::id`]): a tool that records what it did (`agent-guard undo`'s runs) names
    /// the call by it, as its row of the audit log does.
    pub call_id: String,
    /// `lead` for the main agent, the subagent's name otherwise.
    pub agent_name: String,
    /// A silent context has no user to ask: `ask_user` fails, asks become denies.
    pub silent: bool,
    /// Set when the user cancels the run; `Block` tools may poll it to stop at a safe point.
    pub cancelled: Arc<AtomicBool>,
    /// The kernel sandbox the call's decision assumed, for a tool that runs commands; `None` runs it with its
    /// own limits alone.
    pub confinement: Option<Confinement>,
    /// What the proxy of a confined call with the network lets through beyond the settings' domains, and the limit
    /// of the session's taint.
    pub proxy: ProxyGrant,
    /// The places whose ignored data the call's allow counted on `agent-guard undo`'s snapshots holding: a tool
    /// that records its runs does not run when the snapshot before it left one of them out.
    pub undo_held: Vec<std::path::PathBuf>,
}

impl ToolContext {
    /// Whether the run has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }
}

/// A tool the agent can call. The safety declarations default to the conservative side: cancellable, not
/// concurrency-safe, not read-only, no extra checks, no sibling abort.
pub trait Tool: Send + Sync {
    /// The tool's name as the model calls it (`read_file`, `run_bash`, …).
    fn name(&self) -> &str;

    /// One paragraph for the model.
    fn description(&self) -> &str;

    /// The JSON Schema of the arguments.
    fn input_schema(&self) -> Value;

    /// How the tool reacts to a cancellation.
    fn interrupt_behavior(&self) -> InterruptBehavior {
        InterruptBehavior::Cancel
    }

    /// Whether this call may run at the same time as other concurrency-safe calls.
    fn is_concurrency_safe(&self, _args: &Value) -> bool {
        false
    }

    /// Whether this call only reads.
    fn is_read_only(&self, _args: &Value) -> bool {
        false
    }

    /// Extra checks the tool wants for this call, applied by the permission pipeline.
    fn check_permissions(&self, _args: &Value) -> Vec<PermissionCheck> {
        Vec::new()
    }

    /// Whether a failure of this tool cancels the other calls of its parallel batch.
    fn causes_sibling_abort(&self) -> bool {
        false
    }

    /// Runs the call.
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a>;
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;

    impl Tool for Echo {
        fn name(&self) -> &str {
            "echo"
        }
        fn description(&self) -> &str {
            "returns its input"
        }
        fn input_schema(&self) -> Value {
            serde_json::json!({"type": "object"})
        }
        fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
            Box::pin(async move { Ok(ToolOutput::ok(args.to_string())) })
        }
    }

    #[test]
    fn defaults_are_conservative() {
        let tool = Echo;
        let args = serde_json::json!({});
        assert_eq!(tool.interrupt_behavior(), InterruptBehavior::Cancel);
        assert!(!tool.is_concurrency_safe(&args));
        assert!(!tool.is_read_only(&args));
        assert!(tool.check_permissions(&args).is_empty());
        assert!(!tool.causes_sibling_abort());
    }
}
