//! The agent runtime: every agent-guard layer composed around real tool calls.
//!
//! A [`Runtime`] runs an agent's steps under the runtime limits (L7): each call goes through the duplicate detector
//! (L7), the PreToolUse hooks (L3), the decision of `agent-decide` (its [`Guard`](agent_decide::Guard), under the
//! parent's for a subagent, L6), the approver for an ask, the executor (parallel batches, timeouts,
//! cancellation), the PostToolUse hooks and output persistence. The built-in tools enforce what was decided: the
//! file tools open paths race-free beneath their roots (L4), `run_bash` runs a command in its own process group
//! under the kernel sandbox of its decision.
//!
//! **Invariant:** every call is decided by the guard; the runtime adds no check of its own, only the enforcement
//! of the decision, and what the session accumulates (answers, the denial tracker) is kept here, per session.
//! **Invariant:** an ask without an answer is a deny, never an allow.
//!
//! ```
//! use agent_core::{Runtime, RuntimeConfig};
//! use agent_rules::Settings;
//! use agent_tool_traits::Decision;
//!
//! let dir = tempfile::tempdir()?;
//! let runtime = Runtime::builder(Settings::new(), RuntimeConfig::new(dir.path())).build()?;
//! // What the runtime would decide for a call before anyone answers an ask (an inspection: it records nothing).
//! assert_eq!(runtime.decide("run_bash", &serde_json::json!({"command": "ls"})).decision, Decision::Allow);
//! assert_eq!(runtime.decide("run_bash", &serde_json::json!({"command": "rm -rf /"})).decision, Decision::Deny);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod approval;
mod executor;
mod guard_handle;
mod persist;
mod registry;
mod runtime;
mod runtime_error;
#[cfg(feature = "testing")]
mod scripted;
mod telemetry;
mod tools;

pub use approval::{
    AnsweredBy, ApprovalAnswer, ApprovalFuture, ApprovalRequest, Approver, ChannelApprover, PendingApproval,
    answer_project, local_settings_file, save_allow_rules, suggest_rules,
};
pub use guard_handle::GuardHandle;
pub use persist::{OutputStore, Persisted};
pub use registry::{ToolRegistry, ToolSpec};
pub use runtime::{
    BgNotification, BgNotificationQueue, CallReport, ChildModels, DEFAULT_APPROVAL_TIMEOUT, LimitEvent,
    LimitKind, Model, ModelFuture, ModelTurn, Runtime, RuntimeBuilder, RuntimeConfig, SessionReport,
    StepRecord, SubagentTool, SummaryFuture,
};
pub use runtime_error::RuntimeError;
/// Scripted stand-ins for a model, subagents and the user, that drive the runtime without a model: for tests,
/// and for the scenario files `agent-guard run` plays.
#[cfg(feature = "testing")]
pub use scripted::{ScriptedApprover, ScriptedCall, ScriptedChildren, ScriptedModel, ScriptedTurn};
pub use telemetry::DecisionSource;
pub use tools::{BashLimits, RunBashTool};
