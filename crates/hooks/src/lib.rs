//! The hook pipeline of agent-guard (layer L3).
//!
//! A hook sees every event of an agent's life: session start and stop, each tool call before it is decided
//! (PreToolUse) and after it got its decision (PostToolUse, denied calls included), each completed step, subagents
//! starting and stopping, and context compaction. [`HookRegistry`] runs the hooks in registration order and combines
//! their PreToolUse answers: the first [`PreToolUseAction::Block`] ends the chain, the last
//! [`PreToolUseAction::MutateInput`] wins while every context accumulates (a hook after a rewrite sees the rewritten
//! call), permission requests accumulate, and the first allow is remembered. The caller turns the
//! [`PreToolUseOutcome`] into steps 3, 4 and 7 of the resolution (docs/rules.md) and checks a mutated input with the
//! rules again.
//!
//! Built in: [`CancellationHook`] blocks the calls of a cancelled run; [`MetricsHook`] counts calls, errors, denials
//! and per-tool latency; [`AuditLogHook`] writes one row per decided call and one `SESSION_STOP` row per session to
//! the table `agent_audit_log` through a batching background writer, in SQLite (the embedded default) or in
//! PostgreSQL (an [`AuditDatabase`] chosen by the URL's scheme); [`CommandHook`] runs external commands
//! with the coding agent's protocol (JSON on stdin, a decision on stdout, exit code 2 blocks).
//!
//! **Invariant:** a hook can only make a call stricter or rewrite it: an allow from a hook is one input of the
//! resolution (step 7) and never overrides a deny or an ask; a rewritten input is checked again by the caller.
//!
//! **Invariant:** a failing, slow or garbled external command makes no decision; a timed-out command is killed with
//! its whole process group.
//!
//! **Invariant:** the audit log never blocks a running tool and never loses a row silently: when
//! `on_session_stop` returns `Ok`, every row queued before it is committed; otherwise the error says how many rows
//! were lost and why.
//!
//! **Invariant:** among the project's crates this one depends on `agent-tool-traits` and on `agent-secrets`, whose
//! scanner redacts every audit row before it is stored.
//!
//! ```
//! use std::sync::Arc;
//!
//! use agent_hooks::{
//!     AgentHook, CancellationHook, HookFuture, HookRegistry, PreToolUseAction, PreToolUseContext,
//! };
//! use agent_tool_traits::{CancelRegistry, ToolCall};
//! use serde_json::json;
//!
//! /// Points every shell call at a dry run.
//! struct DryRun;
//!
//! impl AgentHook for DryRun {
//!     fn name(&self) -> &str {
//!         "dry-run"
//!     }
//!     fn pre_tool_use<'a>(&'a self, ctx: &'a PreToolUseContext) -> HookFuture<'a, PreToolUseAction> {
//!         let mut args = ctx.call.args.clone();
//!         args["dry_run"] = json!(true);
//!         Box::pin(async move { PreToolUseAction::MutateInput { args, context: Some("dry run".into()) } })
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let cancelled = CancelRegistry::new();
//! let mut hooks = HookRegistry::new();
//! hooks.register(Arc::new(CancellationHook::new(cancelled.clone())));
//! hooks.register(Arc::new(DryRun));
//!
//! let ctx = PreToolUseContext {
//!     session_id: "s1".into(),
//!     agent_name: "lead".into(),
//!     step: 1,
//!     call: ToolCall::new("c1", "run_bash", json!({"command": "make"})),
//!     cwd: "/work".into(),
//!     permission_mode: "default".into(),
//! };
//! let outcome = hooks.run_pre_tool_use(&ctx).await;
//! assert!(outcome.mutated && outcome.permission.block.is_none());
//! assert_eq!(outcome.args, json!({"command": "make", "dry_run": true}));
//!
//! cancelled.cancel("s1");
//! let outcome = hooks.run_pre_tool_use(&ctx).await;
//! assert_eq!(outcome.permission.block, Some(("cancellation".into(), "cancelled by the user".into())));
//! # });
//! ```

mod append;
mod audit;
mod cancel;
mod command;
mod error;
mod hook;
mod metrics;
mod registry;
mod spool;
mod state_dir;
mod store;
mod time;

pub use append::AuditAppender;
pub use audit::Approver;
pub use audit::AuditConfig;
pub use audit::AuditDetail;
pub use audit::AuditFilter;
pub use audit::AuditLogHook;
pub use audit::AuditObserver;
pub use audit::AuditReader;
pub use audit::AuditRow;
pub use audit::AuditStatus;
pub use audit::INPUT_MAX_BYTES;
pub use audit::PREVIEW_CHARS;
pub use audit::preview;
pub use cancel::CancellationHook;
pub use command::CommandHook;
pub use command::CommandSpec;
pub use command::HookEvent;
pub use command::HookSettings;
pub use command::MatcherGroup;
pub use error::AuditError;
pub use error::HookError;
pub use hook::AgentHook;
pub use hook::CallStatus;
pub use hook::CompactContext;
pub use hook::HookFuture;
pub use hook::PermissionAnswer;
pub use hook::PostToolUseAction;
pub use hook::PostToolUseContext;
pub use hook::PreToolUseAction;
pub use hook::PreToolUseContext;
pub use hook::SessionContext;
pub use hook::SessionStopContext;
pub use hook::StepContext;
pub use hook::SubagentContext;
pub use hook::SubagentStopContext;
pub use metrics::MetricsHook;
pub use metrics::MetricsSnapshot;
pub use metrics::ToolMetrics;
pub use registry::HookRegistry;
pub use registry::PreToolUseOutcome;
pub use spool::SPOOL_MOVE_BYTES;
pub use spool::spool;
pub use spool::spool_path;
pub use state_dir::STATE_DIR;
pub use state_dir::create_dir_all_ignored;
pub use store::AuditDatabase;
pub use time::rfc3339;
pub use time::time_bound;

/// The sqlx connection options accepted by [`AuditLogHook::connect_with`], re-exported so callers need no direct
/// sqlx dependency.
pub use sqlx::sqlite::SqliteConnectOptions;
