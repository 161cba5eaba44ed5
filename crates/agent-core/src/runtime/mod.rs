//! The agent runtime: [`Runtime`], where decisions are enforced on real calls, and its accessors. Each job of the
//! runtime has a file of its own in this folder (docs/ARCHITECTURE.md, "agent-core runtime"): how it is set up
//! (`config.rs`), what it reports (`report.rs`), the session loop (`session.rs`), the execution of a step
//! (`step.rs`), asks (`ask.rs`), the subagent host (`subagent.rs`), background tasks (`background.rs`) and context
//! compaction (`compaction.rs`).

mod ask;
mod background;
mod compaction;
mod config;
mod report;
mod session;
mod step;
mod subagent;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use agent_hooks::{AuditLogHook, HookRegistry, MetricsHook, MetricsSnapshot};
use agent_rules::Settings;
use agent_runtime_limits::DuplicateDetector;
use agent_tool_traits::CancelRegistry;
use tokio_util::sync::CancellationToken;

use crate::approval::Approver;
use crate::guard::{Guard, GuardOptions};
use crate::guard_handle::GuardHandle;
use crate::persist::OutputStore;
use crate::registry::ToolRegistry;

use background::BgTasks;
pub use background::{BgNotificationQueue, BgTaskRunTool};
pub use config::{
    DEFAULT_APPROVAL_TIMEOUT, DEFAULT_MAX_OUTPUT_CHARS, DEFAULT_MAX_STEPS, DEFAULT_TOOL_TIMEOUT,
    RuntimeBuilder, RuntimeConfig, tool_timeout_from_env,
};
pub use report::{BgNotification, CallReport, LimitEvent, LimitKind, SessionReport, StepRecord};
pub use session::{COMPACTION_TOOL_NAME, Model, ModelFuture, ModelTurn};
pub use subagent::ChildModels;
pub(crate) use subagent::SubagentHost;

/// The runtime of one working directory: every call goes through the PreToolUse hooks, the guard
/// ([`Guard::decide_with`] with the tool's own checks), the approver for asks, the executor, the PostToolUse hooks
/// and output persistence, in that order.
pub struct Runtime {
    config: RuntimeConfig,
    guard_options: GuardOptions,
    /// The loaded settings plus the rules the user's answers added in this session (shared with the subagents
    /// this runtime starts, so that they inherit the answers too).
    settings: Arc<Mutex<Settings>>,
    guard: GuardHandle,
    registry: ToolRegistry,
    hooks: HookRegistry,
    approver: Arc<dyn Approver>,
    store: OutputStore,
    cancel: CancelRegistry,
    metrics: Arc<MetricsHook>,
    tokens: Mutex<HashMap<String, CancellationToken>>,
    /// The duplicate-call detector of each running session.
    duplicates: Mutex<HashMap<String, DuplicateDetector>>,
    /// A subagent's parent guard: each call is decided by it too and the stricter decision wins.
    ceiling: Option<GuardHandle>,
    /// A subagent in `bubble` mode: its asks go to the parent's approver instead of being denied.
    bubble: bool,
    /// What the `subagent` tool starts children with, when this runtime has it.
    host: Option<Arc<SubagentHost>>,
    /// The running background tasks and the queue of their results.
    background: BgTasks,
    /// The audit log, also given a row per context compaction.
    audit: Option<AuditLogHook>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("config", &self.config)
            .field("tools", &self.registry)
            .field("hooks", &self.hooks)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// The tools calls can reach.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// The hooks, in order.
    pub fn hooks(&self) -> &HookRegistry {
        &self.hooks
    }

    /// The guard in force (it changes when an answer adds a rule).
    pub fn guard(&self) -> Arc<Guard> {
        self.guard.current()
    }

    /// The registry of cancelled runs.
    pub fn cancel_registry(&self) -> &CancelRegistry {
        &self.cancel
    }

    /// The metrics of the calls so far.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.metrics.snapshot()
    }

    /// Where large results are written.
    pub fn output_store(&self) -> &OutputStore {
        &self.store
    }

    /// The results of finished background tasks not yet injected before a model turn.
    pub fn background_queue(&self) -> &BgNotificationQueue {
        &self.background.queue
    }

    /// Cancels the run of `session_id`: Cancel tools stop at once, Block tools finish, no later call runs.
    pub fn cancel(&self, session_id: &str) {
        self.cancel.cancel(session_id);
        self.token(session_id).cancel();
    }

    pub(super) fn token(&self, session_id: &str) -> CancellationToken {
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(session_id.to_owned())
            .or_default()
            .clone()
    }

    pub(super) fn mode_name(&self) -> String {
        self.guard.current().policy().mode().to_string()
    }

    /// The working directory.
    pub fn cwd(&self) -> &Path {
        &self.config.cwd
    }
}
