//! The agent runtime: [`Runtime`], where decisions are enforced on real calls, and its accessors. Each job of the
//! runtime has a file of its own in this folder: how it is set up (`config.rs`), what it reports (`report.rs`), the
//! session loop (`session.rs`), the execution of a step (`step.rs`), asks (`ask.rs`), the `subagent` tool and its
//! host (`subagent.rs`), background tasks (`background.rs`) and context compaction (`compaction.rs`).

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

use agent_decide::{Guard, GuardOptions};
use agent_hooks::{AuditLogHook, HookRegistry, MetricsHook, MetricsSnapshot};
use agent_rules::{SessionState, Settings, TaintKeeper};
use agent_runtime_limits::DuplicateDetector;
use agent_tool_traits::CancelRegistry;
use tokio_util::sync::CancellationToken;

use crate::approval::Approver;
use crate::guard_handle::GuardHandle;
use crate::persist::OutputStore;
use crate::registry::ToolRegistry;

pub use background::BgNotificationQueue;
use background::BgTasks;
pub use config::{DEFAULT_APPROVAL_TIMEOUT, RuntimeBuilder, RuntimeConfig};
pub use report::{BgNotification, CallReport, LimitEvent, LimitKind, SessionReport, StepRecord};
pub use session::{Model, ModelFuture, ModelTurn, SummaryFuture};
use subagent::SubagentHost;
pub use subagent::{ChildModels, SubagentTool};

/// The runtime of one working directory: every call goes through the PreToolUse hooks, the guard
/// ([`Guard::decide_in_session`] with the tool's own checks), the approver for asks, the executor, the PostToolUse hooks
/// and output persistence, in that order.
pub struct Runtime {
    /// What this runtime shares with the host of its `subagent` tool.
    agent: Arc<Agent>,
    /// The tools calls can reach. Not a part of `agent`: the `subagent` tool among them holds the host, which holds
    /// `agent`.
    registry: ToolRegistry,
    tokens: Mutex<HashMap<String, CancellationToken>>,
    /// The duplicate-call detector of each running session.
    duplicates: Mutex<HashMap<String, DuplicateDetector>>,
    /// What each running session has accumulated that its decisions read (the denial tracker of mode `auto`);
    /// the guard holds none of it.
    sessions: Mutex<HashMap<String, SessionState>>,
    /// What the `subagent` tool starts children with, when this runtime has it.
    host: Option<Arc<SubagentHost>>,
    /// The running background tasks and the queue of their results.
    background: BgTasks,
}

/// The agent a runtime runs (the lead or a subagent): how it is set up, its settings and guard, who answers its
/// asks, and the services of its session. The runtime holds it in an `Arc` it shares with its subagent host, which
/// starts children from the parent's parts as they are at that moment.
struct Agent {
    config: RuntimeConfig,
    guard_options: GuardOptions,
    /// The loaded settings plus the rules the user's answers added in this session (a subagent starts from them, so
    /// that it inherits the answers too).
    settings: Mutex<Settings>,
    guard: GuardHandle,
    approver: Arc<dyn Approver>,
    /// A subagent's parent guard: each call is decided by it too and the stricter decision wins.
    ceiling: Option<GuardHandle>,
    /// A subagent in `bubble` mode: its asks go to the parent's approver instead of being denied.
    bubble: bool,
    services: Arc<Services>,
}

/// What every agent of a session uses alike, a subagent its parent's: the hooks (so a child's calls have their
/// audit rows and metrics beside the parent's), where large results go, the registry of cancelled runs, the metrics
/// and the audit log (also given a row per context compaction).
struct Services {
    hooks: HookRegistry,
    store: OutputStore,
    cancel: CancelRegistry,
    metrics: Arc<MetricsHook>,
    audit: Option<AuditLogHook>,
    /// Where the sessions' taint lives: the decisions of every agent of a session read it, and add to it.
    taint: Arc<dyn TaintKeeper>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("config", &self.agent.config)
            .field("tools", &self.registry)
            .field("hooks", &self.agent.services.hooks)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// A runtime of `agent` with the tools of `registry`, no session running yet and no `subagent` tool.
    fn new(agent: Agent, registry: ToolRegistry) -> Self {
        Self {
            agent: Arc::new(agent),
            registry,
            tokens: Mutex::default(),
            duplicates: Mutex::default(),
            sessions: Mutex::default(),
            host: None,
            background: BgTasks::default(),
        }
    }

    /// The tools calls can reach.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// The hooks, in order.
    pub fn hooks(&self) -> &HookRegistry {
        &self.agent.services.hooks
    }

    /// The guard in force (it changes when an answer adds a rule).
    pub fn guard(&self) -> Arc<Guard> {
        self.agent.guard.current()
    }

    /// The registry of cancelled runs.
    pub fn cancel_registry(&self) -> &CancelRegistry {
        &self.agent.services.cancel
    }

    /// The metrics of the calls so far.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.agent.services.metrics.snapshot()
    }

    /// Where large results are written.
    pub fn output_store(&self) -> &OutputStore {
        &self.agent.services.store
    }

    /// The results of finished background tasks not yet injected before a model turn.
    pub fn background_queue(&self) -> &BgNotificationQueue {
        &self.background.queue
    }

    /// Cancels the run of `session_id`: Cancel tools stop at once, Block tools finish, no later call runs.
    pub fn cancel(&self, session_id: &str) {
        self.agent.services.cancel.cancel(session_id);
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
        self.agent.guard.current().policy().mode().to_string()
    }

    /// The working directory.
    pub fn cwd(&self) -> &Path {
        &self.agent.config.cwd
    }
}
