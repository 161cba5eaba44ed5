//! The composition of every agent-guard layer.
//!
//! [`Guard`] is the one decision path that every entry point uses — the `agent-guard check` hook command, a library
//! user, the agent runtime: it describes a call (which files, commands, host, agent it touches), hands it to the
//! shell analysis (L5) and the file-system sandbox (L4), and resolves their findings with the rules, the mode and
//! the hook outcome (L2) into one [`Verdict`](agent_tool_traits::Verdict).
//!
//! **Invariant:** deciding never fails and never panics; only building a guard (loading settings) can fail.
//! **Invariant:** nothing is decided outside [`Guard::decide_with`]; entry points differ only in how they collect
//! the hook outcome and answer an ask.
//!
//! ```
//! use agent_core::{Guard, GuardOptions};
//! use agent_rules::Settings;
//! use agent_tool_traits::Decision;
//!
//! let dir = tempfile::tempdir()?;
//! let guard = Guard::new(&Settings::new(), &GuardOptions { cwd: dir.path().into(), ..Default::default() })?;
//! let read_only = guard.decide("Bash", &serde_json::json!({"command": "ls -la | head -3"}));
//! assert_eq!(read_only.verdict().decision, Decision::Allow);
//! let wipe = guard.decide("Bash", &serde_json::json!({"command": "echo hi; rm -rf /"}));
//! assert_eq!(wipe.verdict().decision, Decision::Deny);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod approval;
mod config;
mod confine;
mod error;
mod executor;
mod guard;
mod guard_handle;
mod hook_io;
mod persist;
mod registry;
mod runtime;
mod runtime_error;
mod scenario;
mod telemetry;
mod tools;

pub use config::{GuardSettings, SandboxMode, settings_schema};
pub use confine::GuardProtection;
pub use error::{Error, Result};
pub use guard::{Decided, Guard, GuardOptions};
pub use hook_io::{HookInput, HookOutput, sandboxed_input, shell_quote};

pub use approval::{
    ApprovalAnswer, ApprovalFuture, ApprovalRequest, Approver, ChannelApprover, HeadlessApprover,
    PendingApproval, TerminalApprover, local_settings_file, save_allow_rules, suggest_rules,
};
pub use guard_handle::GuardHandle;
pub use persist::{OutputStore, Persisted};
pub use registry::ToolRegistry;
pub use runtime::{
    BgNotification, BgNotificationQueue, BgTaskRunTool, COMPACTION_TOOL_NAME, CallReport, ChildModels,
    DEFAULT_APPROVAL_TIMEOUT, DEFAULT_MAX_OUTPUT_CHARS, DEFAULT_MAX_STEPS, DEFAULT_TOOL_TIMEOUT, LimitEvent,
    LimitKind, Model, ModelFuture, ModelTurn, Runtime, RuntimeBuilder, RuntimeConfig, SessionReport,
    StepRecord, SubagentTool, tool_timeout_from_env,
};
pub use runtime_error::RuntimeError;
pub use scenario::{
    PreparedScenario, Scenario, ScenarioCall, ScenarioTurn, ScriptedApprover, ScriptedChildren,
    ScriptedModel, run_scenario,
};
pub use telemetry::DecisionSource;
pub use tools::{
    AskUserTool, BashLimits, FileEditTool, FileWriteTool, GlobFilesTool, GrepFilesTool, ReadFileTool,
    RunBashTool, builtin_tools,
};
