//! The agent runtime: the permission pipeline every call goes through, the executor (docs/ARCHITECTURE.md), and the loop
//! over a [`Model`].

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use agent_hooks::{
    AgentHook, AuditLogHook, AuditRow, AuditStatus, CallStatus, CancellationHook, CommandHook,
    CompactContext, HookError, HookRegistry, HookSettings, MetricsHook, MetricsSnapshot, PermissionAnswer,
    PostToolUseContext, PreToolUseContext, SessionContext, SessionStopContext, StepContext, SubagentContext,
    SubagentStopContext,
};
use agent_rules::{HookOutcome, PermissionMode, Rule, Settings, ToolName};
use agent_runtime_limits::{
    BudgetAction, CompactionBreaker, DuplicateCheck, DuplicateDetector, LimitsConfig, StepGate, StepLimiter,
    TokenBudget,
};
use agent_subagent::{ChildPlan, SubagentError};
use agent_tool_traits::{
    CancelRegistry, Confinement, DecidedBy, Decision, Layer, PermissionCheck, Provenance, Source, Tool,
    ToolCall, ToolContext, ToolError, ToolOutput, Verdict,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::approval::{
    ApprovalAnswer, ApprovalRequest, Approver, HeadlessApprover, local_settings_file, narrow_rules,
    save_allow_rules, suggest_rules,
};
use crate::background::{BgNotification, BgNotificationQueue, BgTask, BgTaskRunTool, BgTasks};
use crate::compaction::{Context, KEEP_RECENT_STEPS};
use crate::config::GuardSettings;
use crate::executor::{Runnable, partition, poll_cancel, run_batch, run_one};
use crate::guard::{Guard, GuardOptions};
use crate::guard_handle::GuardHandle;
use crate::persist::OutputStore;
use crate::registry::ToolRegistry;
use crate::runtime_error::RuntimeError;
use crate::telemetry::{self, DecisionSource};
use crate::tools::{SubagentTool, builtin_tools};

/// How long one permission decision that reaches the shell analysis may take before the call is denied.
const DEFAULT_DECISION_LIMIT: Duration = Duration::from_secs(5);

/// The decision of `own`, or of `ceiling` (the parent's guard of a subagent) when that one is stricter.
fn stricter_decision(
    own: &Guard,
    ceiling: Option<&Guard>,
    call: &ToolCall,
    hooks: &HookOutcome,
    checks: &[PermissionCheck],
) -> crate::guard::Decided {
    let mine = own.decide_with(&call.name, &call.args, hooks, checks);
    match ceiling {
        Some(parent) => {
            let theirs = parent.decide_with(&call.name, &call.args, hooks, checks);
            let confinement = narrower(mine.confinement, theirs.confinement);
            let mut chosen = if theirs.verdict().decision > mine.verdict().decision {
                theirs
            } else {
                mine
            };
            chosen.confinement = confinement;
            chosen
        }
        None => mine,
    }
}

/// The narrower of two confinements: a child runs with no more power than its parent's decision gives, nor
/// than its own.
fn narrower(a: Option<Confinement>, b: Option<Confinement>) -> Option<Confinement> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Confinement {
            profile: a.profile.min(b.profile),
            network: a.network && b.network,
        }),
        (one, None) | (None, one) => one,
    }
}

/// The per-call timeout when `AGENT_TOOL_TIMEOUT_SECS` is not set.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);
/// How long an ask waits for an answer before it counts as a deny.
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(120);
/// Results longer than this many characters are written to disk and replaced by a stub.
pub const DEFAULT_MAX_OUTPUT_CHARS: usize = 16_000;
/// Steps of the loop with tools before the one final turn without them (runtime limit L7).
pub const DEFAULT_MAX_STEPS: u32 = agent_runtime_limits::DEFAULT_MAX_STEPS;

/// How a runtime is set up.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// The working directory: the sandbox's first root, where commands run.
    pub cwd: PathBuf,
    /// The home directory (`~` in rules and paths).
    pub home: Option<PathBuf>,
    /// A mode overriding the settings' own, with its source.
    pub mode: Option<(PermissionMode, Source)>,
    /// Where large results go (`tool-results/`); default: the settings' `agentGuard.libraryDir`, else
    /// `<cwd>/.agent-guard/library`. It is a root of the sandbox, so the model can read the full results.
    pub library_dir: Option<PathBuf>,
    /// `lead` for the main agent, the subagent's name otherwise.
    pub agent_name: String,
    /// A silent context (a subagent): asks become denies and `ask_user` fails.
    pub silent: bool,
    /// The timeout of one call (`AGENT_TOOL_TIMEOUT_SECS`, default 120 s).
    pub tool_timeout: Duration,
    /// How long an ask waits for the approver (default 120 s); no answer in time is a deny.
    pub approval_timeout: Duration,
    /// Results over this many characters are persisted (default 16,000).
    pub max_output_chars: usize,
    /// The runtime limits (L7): steps (default 8), duplicate calls, token budget; from `AGENT_MAX_STEPS`,
    /// `AGENT_TOKEN_SOFT_LIMIT` and `AGENT_TOKEN_HARD_LIMIT` by default.
    pub limits: LimitsConfig,
    /// How long a decision that reaches the shell analysis may take (default 5 s); past it the call is denied,
    /// since hostile input can make a shell parser run away.
    pub decision_limit: Duration,
}

impl RuntimeConfig {
    /// The defaults for `cwd`, with the tool timeout read from `AGENT_TOOL_TIMEOUT_SECS`.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            home: None,
            mode: None,
            library_dir: None,
            agent_name: "lead".to_owned(),
            silent: false,
            tool_timeout: tool_timeout_from_env(std::env::var("AGENT_TOOL_TIMEOUT_SECS").ok().as_deref()),
            approval_timeout: DEFAULT_APPROVAL_TIMEOUT,
            max_output_chars: DEFAULT_MAX_OUTPUT_CHARS,
            limits: LimitsConfig::from_env(),
            decision_limit: DEFAULT_DECISION_LIMIT,
        }
    }
}

/// The tool timeout for a value of `AGENT_TOOL_TIMEOUT_SECS`: a positive number of seconds, else the default.
pub fn tool_timeout_from_env(value: Option<&str>) -> Duration {
    value
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|secs| *secs > 0)
        .map_or(DEFAULT_TOOL_TIMEOUT, Duration::from_secs)
}

/// One call of a step, as it was decided and ran.
#[derive(Debug, Clone)]
pub struct CallReport {
    /// The call with the arguments that were decided and run (after any hook rewrote them).
    pub call: ToolCall,
    /// The final decision and who made it.
    pub verdict: Verdict,
    /// Who stood behind the decision (telemetry's `source`).
    pub source: DecisionSource,
    /// The answer to an ask, when there was one.
    pub answer: Option<ApprovalAnswer>,
    /// How the call ended.
    pub status: CallStatus,
    /// What the model sees: after PostToolUse hooks and persistence.
    pub output: ToolOutput,
    /// When the tool started and finished; `None` for a call that never ran.
    pub ran: Option<(Instant, Instant)>,
    /// The file holding the full result, when it was too long to keep inline.
    pub persisted: Option<PathBuf>,
    /// Contexts PreToolUse hooks added for the model.
    pub contexts: Vec<String>,
    /// The kernel sandbox an allowed call runs under (shell calls), as its decision assumed.
    pub confinement: Option<Confinement>,
}

impl CallReport {
    /// How long the tool ran (zero when it did not).
    pub fn elapsed(&self) -> Duration {
        self.ran.map_or(Duration::ZERO, |(started, finished)| {
            finished.saturating_duration_since(started)
        })
    }
}

/// The calls of one step of the loop.
#[derive(Debug, Clone)]
pub struct StepRecord {
    /// The step, from 1.
    pub step: u32,
    /// Its calls, in the order the model made them.
    pub calls: Vec<CallReport>,
}

/// Which runtime limit acted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    /// A call repeated too often in a row got an error result instead of running.
    Duplicate,
    /// Over the soft token limit: a nudge was injected.
    Nudge,
    /// At the hard token limit the context was compacted: the old steps replaced by a summary (a success when
    /// the estimate fell under the soft limit, else a failure counted by the compaction circuit breaker).
    Compaction,
    /// The hard token limit forced a final answer.
    HardLimit,
    /// Steps without new information forced a final answer.
    DiminishingReturns,
    /// The step limit forced a final answer without tools.
    MaxSteps,
}

impl LimitKind {
    /// A short name for traces.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Duplicate => "duplicate call",
            Self::Nudge => "token soft limit",
            Self::Compaction => "context compaction",
            Self::HardLimit => "token hard limit",
            Self::DiminishingReturns => "diminishing returns",
            Self::MaxSteps => "max steps",
        }
    }
}

/// A runtime limit that acted during a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitEvent {
    /// The step it acted at.
    pub step: u32,
    /// Which limit.
    pub kind: LimitKind,
    /// What happened, or the message injected for the model.
    pub message: String,
}

/// What a model answers at a step.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelTurn {
    /// Tool calls to make.
    Calls(Vec<ToolCall>),
    /// The final answer; the session ends.
    Answer(String),
}

/// The future a model returns.
pub type ModelFuture<'a> = Pin<Box<dyn Future<Output = ModelTurn> + Send + 'a>>;

/// The model driving a session: given the steps so far, the next turn.
pub trait Model: Send {
    /// The next turn. `history` holds the steps the model is shown whole: every step of the session until the
    /// context is compacted, then only the steps after the summary given to [`Model::compacted`].
    fn next_turn<'a>(&'a mut self, history: &'a [StepRecord]) -> ModelFuture<'a>;

    /// A message the runtime injects before the next turn (a nudge of the token budget). The default ignores it.
    fn notice(&mut self, _message: &str) {}

    /// The runtime compacted the context: the steps before the next `history` and the messages injected with
    /// them are replaced by `summary` (deterministic: one line per call with its id, tool, arguments and a preview
    /// of its result). A model keeping its own transcript drops those messages for the summary, and keeps its
    /// task. The default injects the summary as a notice.
    fn compacted(&mut self, summary: &str) {
        self.notice(summary);
    }

    /// The final turn, without tools, after `reminder` (a runtime limit forces an answer). The default injects
    /// the reminder and asks for the next turn; tool calls it still makes are not run.
    fn final_turn<'a>(&'a mut self, history: &'a [StepRecord], reminder: &'a str) -> ModelFuture<'a> {
        self.notice(reminder);
        self.next_turn(history)
    }
}

/// Gives the model of each subagent a `subagent` call starts. A runtime built without one has no `subagent` tool.
pub trait ChildModels: Send + Sync {
    /// The model driving the child `plan` describes, started by a call with `args` (the child's fresh messages
    /// are in `plan.messages`); `None` when no model can drive it (the call then fails).
    fn child_model(&self, plan: &ChildPlan, args: &Value) -> Option<Box<dyn Model>>;
}

/// How a session went.
#[derive(Debug, Clone)]
pub struct SessionReport {
    /// The session.
    pub session_id: String,
    /// Every step with its calls.
    pub steps: Vec<StepRecord>,
    /// The model's final answer, when it gave one.
    pub answer: Option<String>,
    /// Why the session stopped: `completed`, `max steps (8): …`, `token hard limit: …`, `cancelled by the user`.
    pub reason: String,
    /// Every runtime limit that acted, in order.
    pub limits: Vec<LimitEvent>,
    /// Whether the user cancelled the run.
    pub cancelled: bool,
    /// What the session-stop hooks reported (an audit log that could not write every row).
    pub stop_error: Option<String>,
    /// Calls, errors, denials and latencies.
    pub metrics: MetricsSnapshot,
    /// The background calls that finished, in order: first those injected before a turn, then those that ended
    /// at the session's stop (cancelled or awaited) and were never shown to the model.
    pub background: Vec<BgNotification>,
}

impl SessionReport {
    /// Every call of every step, in order.
    pub fn calls(&self) -> impl Iterator<Item = &CallReport> {
        self.steps.iter().flat_map(|step| &step.calls)
    }
}

/// Builds a [`Runtime`].
pub struct RuntimeBuilder {
    settings: Settings,
    config: RuntimeConfig,
    approver: Arc<dyn Approver>,
    hooks: Vec<Arc<dyn AgentHook>>,
    audit: Option<AuditLogHook>,
    tools: Vec<Arc<dyn Tool>>,
    only: Option<Vec<String>>,
    cancel: CancelRegistry,
    child_models: Option<Arc<dyn ChildModels>>,
}

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl RuntimeBuilder {
    /// Who answers asks (default: nobody, so every ask is denied).
    #[must_use]
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// Adds an in-process hook, after the cancellation hook and before the settings' command hooks.
    #[must_use]
    pub fn hook(mut self, hook: Arc<dyn AgentHook>) -> Self {
        self.hooks.push(hook);
        self
    }

    /// Writes the audit log with `audit` (registered last, so it records what the model finally sees).
    #[must_use]
    pub fn audit(mut self, audit: AuditLogHook) -> Self {
        self.audit = Some(audit);
        self
    }

    /// Adds a tool beside the built-in ones (or replaces one of the same name).
    #[must_use]
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// Narrows the tool set to `names` (either family); a call of any other tool is denied.
    #[must_use]
    pub fn only_tools(mut self, names: &[&str]) -> Self {
        self.only = Some(names.iter().map(|name| (*name).to_owned()).collect());
        self
    }

    /// Adds the `subagent` tool (`Task`/`Agent`), its children driven by the models `models` gives.
    #[must_use]
    pub fn subagent_models(mut self, models: Arc<dyn ChildModels>) -> Self {
        self.child_models = Some(models);
        self
    }

    /// Shares `cancel`, the registry of cancelled runs, with the caller (an API that cancels sessions).
    #[must_use]
    pub fn cancel_registry(mut self, cancel: CancelRegistry) -> Self {
        self.cancel = cancel;
        self
    }

    /// Builds the guard, the tools and the hooks. Hooks run in this order: cancellation, the in-process hooks,
    /// the command hooks of agent-guard's settings files, metrics, the audit log.
    ///
    /// The `limits` of the `agentGuard` settings apply over [`RuntimeConfig::limits`], and the environment variables
    /// (`AGENT_MAX_STEPS`, ...) over them; a bad limit value is reported in the trace and keeps the previous value.
    pub fn build(mut self) -> Result<Runtime, RuntimeError> {
        let guard_settings = GuardSettings::from_settings(&self.settings)?;
        if !guard_settings.limits.is_empty() {
            self.config.limits = limits_from_settings(self.config.limits, &guard_settings.limits, |name| {
                std::env::var(name).ok()
            });
        }
        let library_dir = self
            .config
            .library_dir
            .clone()
            .or(guard_settings.library_dir)
            .unwrap_or_else(|| self.config.cwd.join(".agent-guard").join("library"));
        // A missing library dir only means large results cannot be kept; the call itself still reports.
        if let Err(error) = std::fs::create_dir_all(&library_dir) {
            tracing::warn!(dir = %library_dir.display(), %error, "cannot create the library dir");
        }
        let guard_options = GuardOptions {
            cwd: self.config.cwd.clone(),
            home: self.config.home.clone(),
            mode: self.config.mode,
            extra_roots: vec![library_dir.clone()],
        };
        let guard = GuardHandle::new(Guard::new(&self.settings, &guard_options)?);
        let mut registry = builtin_tools(&guard, Arc::clone(&self.approver));
        registry.register(Arc::new(BgTaskRunTool));
        for tool in self.tools {
            registry.register(tool);
        }
        if self.child_models.is_some() {
            // A placeholder so that `only_tools` can keep or drop it; the real tool needs the finished parts.
            registry.register(Arc::new(SubagentTool::placeholder()));
        }
        if let Some(only) = &self.only {
            let names: Vec<&str> = only.iter().map(String::as_str).collect();
            registry = registry.restrict(&names);
        }
        let mut hooks = HookRegistry::new();
        hooks.register(Arc::new(CancellationHook::new(self.cancel.clone())));
        for hook in self.hooks {
            hooks.register(hook);
        }
        let mut commands = HookSettings::default();
        for section in self.settings.hook_sections() {
            let document = serde_json::json!({ "hooks": section.value });
            commands.merge(HookSettings::from_json(&document)?);
        }
        if !commands.is_empty() {
            hooks.register(Arc::new(CommandHook::new(commands)));
        }
        let metrics = Arc::new(MetricsHook::new());
        hooks.register(Arc::clone(&metrics) as Arc<dyn AgentHook>);
        if let Some(audit) = &self.audit {
            hooks.register(Arc::new(audit.clone()));
        }
        let mut runtime = Runtime {
            store: OutputStore::new(&library_dir, self.config.max_output_chars),
            config: self.config,
            guard_options,
            settings: Arc::new(Mutex::new(self.settings)),
            guard,
            registry,
            hooks,
            approver: self.approver,
            cancel: self.cancel,
            metrics,
            tokens: Mutex::default(),
            duplicates: Mutex::default(),
            ceiling: None,
            bubble: false,
            host: None,
            background: BgTasks::default(),
            audit: self.audit,
        };
        if let Some(models) = self.child_models
            && runtime.registry.contains(SubagentTool::NAME)
        {
            let mut parent_tools = runtime.registry.clone();
            parent_tools.remove(SubagentTool::NAME);
            let host = SubagentHost {
                config: runtime.config.clone(),
                guard_options: runtime.guard_options.clone(),
                settings: Arc::clone(&runtime.settings),
                guard: runtime.guard.clone(),
                registry: parent_tools,
                hooks: runtime.hooks.clone(),
                approver: Arc::clone(&runtime.approver),
                store: runtime.store.clone(),
                cancel: runtime.cancel.clone(),
                metrics: Arc::clone(&runtime.metrics),
                models,
                audit: runtime.audit.clone(),
            };
            let host = Arc::new(host);
            runtime
                .registry
                .register(Arc::new(SubagentTool::new(Arc::clone(&host))));
            runtime.host = Some(host);
        }
        Ok(runtime)
    }
}

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

/// The `tool_name` of a context compaction's audit row.
pub const COMPACTION_TOOL_NAME: &str = "compaction";

/// What a compaction left.
struct CompactionEnd {
    /// The estimated tokens of the compacted context.
    tokens: u64,
    /// What happened, for the report, the trace and the audit row.
    message: String,
}

/// How the loop ended.
struct LoopEnd {
    steps: Vec<StepRecord>,
    /// The background results injected before a turn.
    background: Vec<BgNotification>,
    answer: Option<String>,
    reason: String,
    limits: Vec<LimitEvent>,
}

/// A call after the permission pipeline: denied (with its report but for the output hooks) or cleared to run.
enum Planned {
    Denied(CallReport),
    Cleared {
        report: CallReport,
        tool: Arc<dyn Tool>,
    },
    /// A `bg_task_run` call (`report`) whose inner call (`inner`, of `tool`) was cleared.
    Background {
        report: CallReport,
        inner: Box<CallReport>,
        tool: Arc<dyn Tool>,
    },
}

impl Runtime {
    /// A builder over loaded `settings`.
    pub fn builder(settings: Settings, config: RuntimeConfig) -> RuntimeBuilder {
        RuntimeBuilder {
            settings,
            config,
            approver: Arc::new(HeadlessApprover),
            hooks: Vec::new(),
            audit: None,
            tools: Vec::new(),
            only: None,
            cancel: CancelRegistry::new(),
            child_models: None,
        }
    }

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

    fn token(&self, session_id: &str) -> CancellationToken {
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(session_id.to_owned())
            .or_default()
            .clone()
    }

    fn mode_name(&self) -> String {
        self.guard.current().policy().mode().to_string()
    }

    /// Starts a session: the session-start hooks run.
    pub async fn start_session(&self, session_id: &str) {
        let ctx = SessionContext {
            session_id: session_id.to_owned(),
            agent_name: self.config.agent_name.clone(),
            cwd: self.config.cwd.clone(),
            permission_mode: self.mode_name(),
        };
        // Session-start hooks cannot fail today; the registry keeps a `Result` for uniformity.
        let _started = self.hooks.session_start(&ctx).await;
    }

    /// Stops a session after `steps` steps: its background tasks end (Cancel tasks are cancelled, Block tasks
    /// awaited; each writes its audit row), then the session-stop hooks run (the audit log's `SESSION_STOP` row is
    /// on disk when this returns `Ok`). Results never injected stay in [`Runtime::background_queue`].
    pub async fn stop_session(&self, session_id: &str, steps: u32, reason: &str) -> Result<(), HookError> {
        self.background.stop(session_id).await;
        let cancelled = self.cancel.is_cancelled(session_id) || self.token(session_id).is_cancelled();
        let ctx = SessionStopContext {
            session_id: session_id.to_owned(),
            agent_name: self.config.agent_name.clone(),
            steps,
            reason: reason.to_owned(),
            cancelled,
        };
        let stopped = self.hooks.session_stop(&ctx).await;
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session_id);
        self.duplicates
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session_id);
        stopped
    }

    /// Runs a session: asks `model` for turns and executes their calls until it answers, a runtime limit forces a
    /// final answer without tools (the step limit, the token hard limit when compaction cannot help, diminishing
    /// returns) or the run is cancelled; then stops the session. At the token hard limit the context is compacted
    /// first (see [`Model::compacted`]) while the compaction circuit breaker allows it. Each limit that acts is in
    /// [`SessionReport::limits`], in the trace and, for a forced answer, in the stop reason (the audit log's
    /// `SESSION_STOP` row); each compaction also has an audit row of its own ([`COMPACTION_TOOL_NAME`]).
    pub async fn run(&self, session_id: &str, model: &mut dyn Model) -> SessionReport {
        self.start_session(session_id).await;
        let ended = self.run_loop(session_id, model).await;
        let token = self.token(session_id);
        let cancelled = self.cancel.is_cancelled(session_id) || token.is_cancelled();
        let count = u32::try_from(ended.steps.len()).unwrap_or(u32::MAX);
        let stop_error = self
            .stop_session(session_id, count, &ended.reason)
            .await
            .err()
            .map(|e| e.to_string());
        let mut background = ended.background;
        background.extend(self.background.queue.take(session_id));
        SessionReport {
            session_id: session_id.to_owned(),
            steps: ended.steps,
            answer: ended.answer,
            reason: ended.reason,
            limits: ended.limits,
            cancelled,
            stop_error,
            metrics: self.metrics.snapshot(),
            background,
        }
    }

    /// The loop of [`Runtime::run`], without the session's start and stop (a subagent runs it inside its
    /// parent's session).
    async fn run_loop(&self, session_id: &str, model: &mut dyn Model) -> LoopEnd {
        let token = self.token(session_id);
        let limits = self.config.limits;
        let mut limiter = StepLimiter::new(&limits);
        let mut budget = TokenBudget::new(&limits);
        let mut breaker = CompactionBreaker::new(&limits);
        // What the model is shown; `steps` keeps every step for the report.
        let mut context = Context::default();
        let mut events: Vec<LimitEvent> = Vec::new();
        let mut forced: Option<(LimitKind, &'static str, String)> = None;
        let mut steps: Vec<StepRecord> = Vec::new();
        let mut background = Vec::new();
        let mut answer = None;
        let reason = loop {
            if self.cancel.is_cancelled(session_id) || token.is_cancelled() {
                break "cancelled by the user".to_owned();
            }
            // Finished background calls reach the model as messages before its next turn, never inside a step.
            for notification in self.background.queue.take(session_id) {
                tracing::info!(
                    session = session_id,
                    agent = %self.config.agent_name,
                    task = %notification.task_id,
                    tool = %notification.report.call.name,
                    "a background result is injected"
                );
                let message = notification.message();
                // What the model is shown counts toward its context like any result.
                budget.add_text(&message);
                model.notice(&message);
                context.push_notice(notification.clone());
                background.push(notification);
            }
            let next = u32::try_from(steps.len()).unwrap_or(u32::MAX).saturating_add(1);
            let (step, final_turn) = match forced.take() {
                Some(force) => (next, Some(force)),
                None => match limiter.next_step() {
                    StepGate::Proceed { step } => (step, None),
                    StepGate::FinalTurn { step, reminder } => {
                        let why = format!("max steps ({})", limits.max_steps);
                        (step, Some((LimitKind::MaxSteps, reminder, why)))
                    }
                    StepGate::Stop => break format!("max steps ({})", limits.max_steps),
                },
            };
            if let Some((kind, reminder, why)) = final_turn {
                self.limit_acted(session_id, &mut events, step, kind, reminder);
                break match model.final_turn(context.steps(), reminder).await {
                    ModelTurn::Answer(text) => {
                        answer = Some(text);
                        format!("{why}: final answer without tools")
                    }
                    ModelTurn::Calls(calls) => format!(
                        "{why}: the final turn asked for {} tool call(s), which were not run",
                        calls.len()
                    ),
                };
            }
            match model.next_turn(context.steps()).await {
                ModelTurn::Answer(text) => {
                    answer = Some(text);
                    break "completed".to_owned();
                }
                ModelTurn::Calls(calls) if calls.is_empty() => break "completed".to_owned(),
                ModelTurn::Calls(calls) => {
                    let count = u32::try_from(calls.len()).unwrap_or(u32::MAX);
                    for call in &calls {
                        budget.add_text(&call.args.to_string());
                    }
                    let reports = self.execute(session_id, step, calls).await;
                    for report in &reports {
                        if report.verdict.provenance.layer == Layer::Limits {
                            let message = report.output.content.clone();
                            self.limit_acted(session_id, &mut events, step, LimitKind::Duplicate, &message);
                        }
                    }
                    let action = budget.record_step(reports.iter().map(|r| r.output.content.as_str()));
                    let ctx = StepContext {
                        session_id: session_id.to_owned(),
                        agent_name: self.config.agent_name.clone(),
                        step,
                        tool_calls: count,
                    };
                    let _completed = self.hooks.step_complete(&ctx).await;
                    let record = StepRecord { step, calls: reports };
                    context.push_step(record.clone());
                    steps.push(record);
                    match action {
                        BudgetAction::Continue => {}
                        BudgetAction::Nudge { message, .. } => {
                            self.limit_acted(session_id, &mut events, step, LimitKind::Nudge, message);
                            model.notice(message);
                        }
                        // At the hard limit the context is compacted while the breaker allows it; the answer is
                        // forced when it is open, or when even the compacted context is at the hard limit.
                        BudgetAction::HardLimit { used, limit, message } => {
                            let mut why = format!("token hard limit ({used} of {limit} estimated tokens)");
                            let mut force = true;
                            if breaker.allows_compaction() {
                                let after = self
                                    .compact(session_id, step, &mut context, &mut budget, &mut breaker, model)
                                    .await;
                                self.limit_acted(
                                    session_id,
                                    &mut events,
                                    step,
                                    LimitKind::Compaction,
                                    &after.message,
                                );
                                force = after.tokens >= limit || !breaker.allows_compaction();
                                if force {
                                    why = format!(
                                        "token hard limit ({used} of {limit} estimated tokens; {} estimated after \
                                         compaction{})",
                                        after.tokens,
                                        if breaker.allows_compaction() {
                                            ""
                                        } else {
                                            ", the compaction circuit breaker is open"
                                        }
                                    );
                                }
                            }
                            if force {
                                forced = Some((LimitKind::HardLimit, message, why));
                            }
                        }
                        BudgetAction::DiminishingReturns { steps, message } => {
                            let why = format!("diminishing returns ({steps} steps without new information)");
                            forced = Some((LimitKind::DiminishingReturns, message, why));
                        }
                    }
                }
            }
        };
        LoopEnd {
            steps,
            background,
            answer,
            reason,
            limits: events,
        }
    }

    /// Compacts `context` at `step` (L7): the PreCompact hooks, the old steps replaced by a summary
    /// ([`Context::compact`]), the summary given to the model, the PostCompact hooks, the budget set to the new
    /// estimate. Success means the estimate fell to the soft limit or under it; either way the breaker learns of
    /// it and the audit log gets a row. Only messages change: rules, modes, approvals and the duplicate detector
    /// are not touched.
    async fn compact(
        &self,
        session_id: &str,
        step: u32,
        context: &mut Context,
        budget: &mut TokenBudget,
        breaker: &mut CompactionBreaker,
        model: &mut dyn Model,
    ) -> CompactionEnd {
        let started = Instant::now();
        let before = budget.used();
        let mut ctx = CompactContext {
            session_id: session_id.to_owned(),
            agent_name: self.config.agent_name.clone(),
            trigger: "auto".to_owned(),
            tokens_before: before,
            tokens_after: None,
        };
        self.hooks.pre_compact(&ctx).await;
        let soft = self.config.limits.token_soft_limit;
        let compacted = context.compact_within(soft, KEEP_RECENT_STEPS);
        if compacted.summarised_steps > 0
            && let Some(summary) = &compacted.summary
        {
            model.compacted(summary);
        }
        let after = context.estimate_tokens();
        ctx.tokens_after = Some(after);
        self.hooks.post_compact(&ctx).await;
        budget.compacted(after);
        let success = after <= soft;
        if success {
            breaker.record_success();
        } else {
            breaker.record_failure();
        }
        let message = format!(
            "{} the context: {before} -> {after} estimated tokens (soft limit {soft}), {} step(s) summarised, {} \
             kept whole",
            if success { "compacted" } else { "could not compact" },
            compacted.summarised_steps,
            context.steps().len()
        );
        if let Some(audit) = &self.audit {
            audit
                .record(self.compaction_row(session_id, step, success, &message, started))
                .await;
        }
        CompactionEnd {
            tokens: after,
            message,
        }
    }

    /// The audit row of a compaction: tool `compaction`, `OK` or `FAIL`, decided by `runtime-limits/limit`.
    fn compaction_row(
        &self,
        session_id: &str,
        step: u32,
        success: bool,
        message: &str,
        started: Instant,
    ) -> AuditRow {
        // The stop row's constructor gives the timestamp and the preview cut the log uses everywhere.
        let stop = SessionStopContext {
            session_id: session_id.to_owned(),
            agent_name: self.config.agent_name.clone(),
            steps: step,
            reason: message.to_owned(),
            cancelled: false,
        };
        AuditRow {
            tool_name: COMPACTION_TOOL_NAME.to_owned(),
            status: if success {
                AuditStatus::Ok
            } else {
                AuditStatus::Fail
            },
            decided_by: Some(format!("{}/{}", Layer::Limits, DecidedBy::Limit.as_str())),
            ..AuditRow::session_stop(&stop, started.elapsed())
        }
    }

    /// Records that a runtime limit acted, in the report and the trace.
    fn limit_acted(
        &self,
        session_id: &str,
        events: &mut Vec<LimitEvent>,
        step: u32,
        kind: LimitKind,
        message: &str,
    ) {
        tracing::info!(
            session = session_id,
            agent = %self.config.agent_name,
            step,
            limit = kind.as_str(),
            message,
            "a runtime limit acted"
        );
        events.push(LimitEvent {
            step,
            kind,
            message: message.to_owned(),
        });
    }

    /// Executes the calls of one step (docs/ARCHITECTURE.md): for each call in order, the PreToolUse hooks, the permission
    /// pipeline and, for an ask, the approver; then the cleared calls in batches (consecutive concurrency-safe
    /// calls in parallel, the others one at a time) with timeout, cancellation and sibling abort; then, for every
    /// call, denied ones included, the PostToolUse hooks and output persistence.
    pub async fn execute(&self, session_id: &str, step: u32, calls: Vec<ToolCall>) -> Vec<CallReport> {
        let token = self.token(session_id);
        let poller = tokio::spawn(poll_cancel(
            self.cancel.clone(),
            session_id.to_owned(),
            token.clone(),
        ));
        // Duplicate detection comes before the hooks: a call the model keeps repeating is refused unseen.
        let checks = self.duplicate_checks(session_id, step, &calls);
        let mut planned = Vec::with_capacity(calls.len());
        for (call, check) in calls.into_iter().zip(checks) {
            planned.push(match check {
                DuplicateCheck::Blocked { count } => Planned::Denied(duplicate_refusal(call, count)),
                DuplicateCheck::Fresh | DuplicateCheck::Repeated { .. } => {
                    if ToolName::new(&call.name) == ToolName::new(BgTaskRunTool::NAME)
                        && self.registry.contains(BgTaskRunTool::NAME)
                    {
                        self.plan_background(session_id, step, call).await
                    } else {
                        self.plan(session_id, step, call).await
                    }
                }
            });
        }
        let mut reports = Vec::with_capacity(planned.len());
        let mut runnable = Vec::new();
        for (index, plan) in planned.into_iter().enumerate() {
            match plan {
                Planned::Denied(report) => reports.push(report),
                Planned::Cleared { report, tool } => {
                    let concurrent = tool.is_concurrency_safe(&report.call.args);
                    runnable.push(Runnable {
                        index,
                        tool,
                        args: report.call.args.clone(),
                        concurrent,
                        confinement: report.confinement,
                    });
                    reports.push(report);
                }
                Planned::Background { mut report, .. }
                    if token.is_cancelled() || self.cancel.is_cancelled(session_id) =>
                {
                    // Nothing starts after a cancellation, in the background neither.
                    report.output = ToolOutput::error("cancelled by the user before it started");
                    report.status = CallStatus::Fail;
                    reports.push(report);
                }
                Planned::Background {
                    mut report,
                    inner,
                    tool,
                } => {
                    let name = inner.call.name.clone();
                    let task_id = self.start_background(session_id, step, *inner, tool);
                    let now = Instant::now();
                    report.output = ToolOutput::ok(format!(
                        "started background task `{task_id}` running `{name}`; its result will be given to you \
                         before a later turn"
                    ));
                    report.status = CallStatus::Ok;
                    report.ran = Some((now, now));
                    reports.push(report);
                }
            }
        }
        let context = ToolContext {
            session_id: session_id.to_owned(),
            agent_name: self.config.agent_name.clone(),
            silent: self.config.silent,
            cancelled: Arc::default(),
            confinement: None,
        };
        for batch in partition(runnable) {
            if token.is_cancelled() {
                // Nothing starts after a cancellation; what already ran keeps its result.
                for call in batch {
                    if let Some(report) = reports.get_mut(call.index) {
                        report.output = ToolOutput::error("cancelled by the user before it started");
                        report.status = CallStatus::Fail;
                    }
                }
                continue;
            }
            for ran in run_batch(batch, &context, &token, self.config.tool_timeout).await {
                if let Some(report) = reports.get_mut(ran.index) {
                    let (output, status) = match ran.result {
                        Ok(output) if !output.is_error => (output, CallStatus::Ok),
                        Ok(output) => (output, CallStatus::Fail),
                        Err(ToolError::Cancelled) if !token.is_cancelled() => (
                            ToolOutput::error("cancelled: a sibling call failed"),
                            CallStatus::Fail,
                        ),
                        Err(error) => (ToolOutput::error(error.to_string()), CallStatus::Fail),
                    };
                    report.output = output;
                    report.status = status;
                    report.ran = Some((ran.started, ran.finished));
                }
            }
        }
        poller.abort();
        for report in &mut reports {
            self.finish(session_id, step, report).await;
        }
        reports
    }

    /// The PostToolUse hooks and output persistence of one call.
    async fn finish(&self, session_id: &str, step: u32, report: &mut CallReport) {
        post_process(
            &self.hooks,
            &self.store,
            &self.config.agent_name,
            session_id,
            step,
            report,
        )
        .await;
    }

    /// The permission pipeline of a `bg_task_run` call: its inner call is planned like any call (hooks, guard,
    /// approver); a denied inner call is a denied `bg_task_run` with the inner call's verdict. Unusable arguments
    /// are denied by the tool's own check on the one path.
    async fn plan_background(&self, session_id: &str, step: u32, call: ToolCall) -> Planned {
        let Ok((name, args)) = BgTaskRunTool::inner(&call.args) else {
            return self.plan(session_id, step, call).await;
        };
        let inner = ToolCall::new(format!("{}.bg", call.id), name, args);
        match self.plan(session_id, step, inner).await {
            Planned::Denied(inner) => Planned::Denied(CallReport { call, ..inner }),
            Planned::Cleared { report, tool } => Planned::Background {
                report: CallReport {
                    call,
                    ..report.clone()
                },
                inner: Box::new(report),
                tool,
            },
            // `plan` never starts a background task itself.
            Planned::Background { report, .. } => Planned::Denied(CallReport { call, ..report }),
        }
    }

    /// Starts the cleared `inner` call of `tool` in the background and returns its task id. The task runs under
    /// the tool timeout, then the PostToolUse hooks (its audit row) and persistence, and pushes its result to the
    /// queue; it never touches the loop's state.
    fn start_background(
        &self,
        session_id: &str,
        step: u32,
        inner: CallReport,
        tool: Arc<dyn Tool>,
    ) -> String {
        let task_id = self.background.next_id();
        let cancel = self.token(session_id).child_token();
        let ctx = ToolContext {
            session_id: session_id.to_owned(),
            agent_name: self.config.agent_name.clone(),
            silent: self.config.silent,
            cancelled: Arc::default(),
            confinement: inner.confinement,
        };
        let behavior = tool.interrupt_behavior();
        let hooks = self.hooks.clone();
        let store = self.store.clone();
        let queue = self.background.queue.clone();
        let timeout = self.config.tool_timeout;
        let (id, token) = (task_id.clone(), cancel.clone());
        tracing::info!(session = session_id, task = %task_id, tool = %inner.call.name, "a background task starts");
        let handle = tokio::spawn(async move {
            let mut report = inner;
            let started = Instant::now();
            let result = run_one(tool.as_ref(), report.call.args.clone(), &ctx, &token, timeout).await;
            report.ran = Some((started, Instant::now()));
            (report.output, report.status) = match result {
                Ok(output) if !output.is_error => (output, CallStatus::Ok),
                Ok(output) => (output, CallStatus::Fail),
                Err(ToolError::Cancelled) => (
                    ToolOutput::error("cancelled: the session stopped before the background task finished"),
                    CallStatus::Fail,
                ),
                Err(error) => (ToolOutput::error(error.to_string()), CallStatus::Fail),
            };
            post_process(
                &hooks,
                &store,
                &ctx.agent_name,
                &ctx.session_id,
                step,
                &mut report,
            )
            .await;
            queue.push(BgNotification {
                session_id: ctx.session_id.clone(),
                task_id: id,
                report,
            });
        });
        self.background.add(
            session_id,
            BgTask {
                task_id: task_id.clone(),
                behavior,
                cancel,
                handle,
            },
        );
        task_id
    }
}

/// The PostToolUse hooks (the audit row) and output persistence of one call.
async fn post_process(
    hooks: &HookRegistry,
    store: &OutputStore,
    agent_name: &str,
    session_id: &str,
    step: u32,
    report: &mut CallReport,
) {
    let ctx = PostToolUseContext {
        session_id: session_id.to_owned(),
        agent_name: agent_name.to_owned(),
        step,
        call: report.call.clone(),
        output: report.output.clone(),
        status: report.status,
        verdict: report.verdict.clone(),
        elapsed: report.elapsed(),
    };
    let content = hooks.run_post_tool_use(&ctx).await;
    match store.persist(&report.call.id, &content) {
        Ok(Some(persisted)) => {
            report.output.content = persisted.stub;
            report.persisted = Some(persisted.path);
        }
        Ok(None) => report.output.content = content,
        Err(error) => {
            tracing::warn!(call = %report.call.id, %error, "a large result could not be persisted; kept inline");
            report.output.content = content;
        }
    }
}

impl Runtime {
    /// The permission pipeline of one call: hooks, the guard, the approver.
    async fn plan(&self, session_id: &str, step: u32, call: ToolCall) -> Planned {
        let tool = self.registry.get(&call.name);
        let pre = PreToolUseContext {
            session_id: session_id.to_owned(),
            agent_name: self.config.agent_name.clone(),
            step,
            call: call.clone(),
            cwd: self.config.cwd.clone(),
            permission_mode: self.mode_name(),
        };
        let outcome = self.hooks.run_pre_tool_use(&pre).await;
        let call = ToolCall {
            args: outcome.args.clone(),
            ..call
        };
        let hooks = HookOutcome {
            block: outcome.blocked.clone(),
            asks: outcome.permission_required.clone(),
            allow: outcome.allowed.clone(),
        };
        // The tool's own checks are step 2 and 4 inputs of the one resolution; a tool this agent does not have
        // is a tool-level deny there too, so that even it is decided (and audited) on the one path.
        let checks = match &tool {
            Some(tool) => tool.check_permissions(&call.args),
            None => vec![PermissionCheck::deny(format!(
                "no tool named `{}` is available to this agent",
                call.name
            ))],
        };
        let decided = self.decide_bounded(&call, &hooks, &checks).await;
        let confinement = decided.confinement;
        let verdict = decided.verdict().clone();
        let (verdict, source, answer) = match verdict.decision {
            Decision::Allow | Decision::Deny => {
                let source = DecisionSource::of_guard_verdict(&verdict);
                (verdict, source, None)
            }
            Decision::Ask => {
                let pre = PreToolUseContext {
                    call: call.clone(),
                    ..pre
                };
                self.ask(&pre, &decided).await
            }
        };
        telemetry::emit(&call.name, &call.id, &verdict, source);
        let report = CallReport {
            output: ToolOutput::error(String::new()),
            status: CallStatus::Denied,
            ran: None,
            persisted: None,
            contexts: outcome.contexts,
            confinement: (verdict.decision == Decision::Allow)
                .then_some(confinement)
                .flatten(),
            call,
            verdict,
            source,
            answer,
        };
        match (report.verdict.decision, tool) {
            (Decision::Allow, Some(tool)) => Planned::Cleared { report, tool },
            (Decision::Allow | Decision::Ask | Decision::Deny, _) => {
                let mut report = report;
                let verdict = &report.verdict;
                let step = verdict.provenance.step.map_or("finding", DecidedBy::as_str);
                report.output = ToolOutput::error(format!(
                    "denied ({}/{step}): {}",
                    verdict.provenance.layer,
                    verdict.reason()
                ));
                Planned::Denied(report)
            }
        }
    }

    /// How each call of `step` compares with the session's previous steps (tools by canonical name; calls given
    /// again for the same step number belong to that step).
    fn duplicate_checks(&self, session_id: &str, step: u32, calls: &[ToolCall]) -> Vec<DuplicateCheck> {
        let names: Vec<String> = calls.iter().map(|c| ToolName::new(&c.name).to_string()).collect();
        self.duplicates
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(session_id.to_owned())
            .or_insert_with(|| DuplicateDetector::new(&self.config.limits))
            .check_step(
                step,
                names
                    .iter()
                    .map(String::as_str)
                    .zip(calls.iter().map(|c| &c.args)),
            )
    }

    /// The plan of the child a `subagent` call with `args` would start under this runtime (its tools, mode and
    /// messages); `None` when this runtime has no `subagent` tool.
    pub fn plan_subagent(&self, args: &Value) -> Option<Result<ChildPlan, SubagentError>> {
        let host = self.host.as_ref()?;
        Some(crate::tools::plan_subagent(host, args))
    }

    /// The runtime of the child `plan` describes (for inspection: [`Runtime::decide`] on it tells what the
    /// child may do); `None` when this runtime has no `subagent` tool.
    pub fn subagent(&self, plan: &ChildPlan) -> Option<Result<Runtime, RuntimeError>> {
        Some(self.host.as_ref()?.child_runtime(plan))
    }

    /// [`Runtime::decide_with`], bounded by [`RuntimeConfig::decision_limit`] when the call reaches the shell analysis: that
    /// decision runs on a blocking thread, and one that does not finish in time (hostile input that makes the shell
    /// parser run away) is a deny, and the loop goes on.
    async fn decide_bounded(
        &self,
        call: &ToolCall,
        hooks: &HookOutcome,
        checks: &[PermissionCheck],
    ) -> crate::guard::Decided {
        // Only the shell parser can run away; every other decision is bounded by the size of its input and is
        // made here, without the thread handoff (ten times the cost of the decision itself).
        if !matches!(
            agent_rules::describe(&call.name, &call.args),
            Ok(agent_rules::CallTarget::Shell(_))
        ) {
            return self.decide_with(call, hooks, checks);
        }
        let own = self.guard.current();
        let ceiling = self.ceiling.as_ref().map(GuardHandle::current);
        let (job_call, job_hooks, job_checks) = (call.clone(), hooks.clone(), checks.to_vec());
        let task = tokio::task::spawn_blocking(move || {
            stricter_decision(&own, ceiling.as_deref(), &job_call, &job_hooks, &job_checks)
        });
        let limit = self.config.decision_limit;
        match tokio::time::timeout(limit, task).await {
            Ok(Ok(decided)) => decided,
            Ok(Err(_)) | Err(_) => {
                let verdict = Verdict::new(
                    Decision::Deny,
                    format!(
                        "the decision did not finish within {:?}, so `{}` is not run",
                        limit, call.name
                    ),
                    Provenance::layer(Layer::Rules),
                );
                crate::guard::Decided {
                    resolution: agent_rules::Resolution {
                        verdict: verdict.clone(),
                        considered: vec![verdict],
                        conflicts: Vec::new(),
                    },
                    analysis: None,
                    paths: Vec::new(),
                    findings: Vec::new(),
                    confinement: None,
                }
            }
        }
    }

    /// The guard's decision of `call`; in a subagent, the stricter of its own and its parent's (a child may do
    /// nothing its parent may not).
    fn decide_with(
        &self,
        call: &ToolCall,
        hooks: &HookOutcome,
        checks: &[PermissionCheck],
    ) -> crate::guard::Decided {
        let ceiling = self.ceiling.as_ref().map(GuardHandle::current);
        stricter_decision(&self.guard.current(), ceiling.as_deref(), call, hooks, checks)
    }

    /// What the permission pipeline decides for a call of `tool` with `args` before anyone answers an ask: the
    /// guard with the tool's own checks (in a subagent, under its parent's permissions too), without hooks. In a
    /// silent context without `bubble`, an ask is already a deny.
    /// A `bg_task_run` call is decided as its inner call.
    pub fn decide(&self, tool: &str, args: &Value) -> Verdict {
        if ToolName::new(tool) == ToolName::new(BgTaskRunTool::NAME)
            && self.registry.contains(BgTaskRunTool::NAME)
            && let Ok((inner, inner_args)) = BgTaskRunTool::inner(args)
        {
            return self.decide(inner, &inner_args);
        }
        let call = ToolCall::new("decide", tool, args.clone());
        let checks = match self.registry.get(tool) {
            Some(tool) => tool.check_permissions(args),
            None => vec![PermissionCheck::deny(format!(
                "no tool named `{tool}` is available to this agent"
            ))],
        };
        let decided = self.decide_with(&call, &HookOutcome::default(), &checks);
        let verdict = decided.verdict().clone();
        match verdict.decision {
            Decision::Ask if self.config.silent && !self.bubble => {
                no_prompt(&verdict, "no user to ask in a silent context")
            }
            Decision::Allow | Decision::Ask | Decision::Deny => verdict,
        }
    }

    /// Puts an ask to the approver (or denies it without one) and applies the answer's rules.
    async fn ask(
        &self,
        pre: &PreToolUseContext,
        decided: &crate::guard::Decided,
    ) -> (Verdict, DecisionSource, Option<ApprovalAnswer>) {
        let (session_id, call) = (pre.session_id.as_str(), &pre.call);
        let ask = decided.verdict();
        if self.config.silent && !self.bubble {
            return (
                no_prompt(ask, "no user to ask in a silent context"),
                DecisionSource::UserReject,
                None,
            );
        }
        let rules = suggest_rules(&call.name, &call.args, decided, &self.config.cwd);
        let settings_file = local_settings_file(&self.config.cwd);
        let request = ApprovalRequest {
            session_id: session_id.to_owned(),
            agent_name: self.config.agent_name.clone(),
            call: call.clone(),
            verdict: ask.clone(),
            rules: rules.clone(),
            settings_file: settings_file.clone(),
        };
        let timeout = self.config.approval_timeout;
        let answer = match tokio::time::timeout(timeout, self.approver.approve(&request)).await {
            Ok(Some(answer)) => answer,
            // Nobody answered (headless, or too late): the PermissionRequest hooks may still answer, else deny.
            Ok(None) => return self.ask_hooks(pre, ask, "nobody answered the ask").await,
            Err(_) => {
                let why = format!("no answer within {} s", timeout.as_secs());
                return self.ask_hooks(pre, ask, &why).await;
            }
        };
        let (decision, source, why, added) = match answer {
            ApprovalAnswer::AllowOnce => (
                Decision::Allow,
                DecisionSource::UserTemporary,
                "allowed once by the user",
                (Source::Session, rules),
            ),
            ApprovalAnswer::AllowAlways if rules.is_empty() => (
                Decision::Allow,
                DecisionSource::UserTemporary,
                "allowed by the user (no narrow rule to save)",
                (Source::Session, rules),
            ),
            ApprovalAnswer::AllowAlways => {
                if let Err(error) = save_allow_rules(&settings_file, &rules) {
                    tracing::warn!(file = %settings_file.display(), %error, "the allow rule could not be saved");
                }
                (
                    Decision::Allow,
                    DecisionSource::UserPermanent,
                    "allowed always by the user",
                    (Source::Local, rules),
                )
            }
            ApprovalAnswer::Deny => (
                Decision::Deny,
                DecisionSource::UserReject,
                "denied by the user",
                (Source::Session, Vec::new()),
            ),
            ApprovalAnswer::DontAskAgain => {
                let mut deny = narrow_rules(&call.name, &call.args, decided, &self.config.cwd);
                if deny.is_empty() {
                    deny.push(ToolName::new(&call.name).to_string());
                }
                (
                    Decision::Deny,
                    DecisionSource::UserReject,
                    "denied by the user for the rest of the session",
                    (Source::Session, deny),
                )
            }
        };
        let (rule_source, texts) = added;
        self.add_rules(&texts, decision, rule_source);
        let provenance = Provenance {
            layer: Layer::Approval,
            step: Some(DecidedBy::Approver),
            rule: texts.first().cloned(),
            source: (!texts.is_empty()).then_some(rule_source),
            file: (rule_source == Source::Local && !texts.is_empty())
                .then(|| settings_file.display().to_string()),
        };
        let mut verdict = Verdict::new(decision, why, provenance);
        verdict.reasons.push(format!("asked because: {}", ask.reason()));
        (verdict, source, Some(answer))
    }

    /// The PermissionRequest hooks' answer to an ask nobody else answered; without one, a deny.
    async fn ask_hooks(
        &self,
        pre: &PreToolUseContext,
        ask: &Verdict,
        why: &str,
    ) -> (Verdict, DecisionSource, Option<ApprovalAnswer>) {
        let Some((hook, answer)) = self.hooks.run_permission_request(pre, &ask.reason()).await else {
            return (no_prompt(ask, why), DecisionSource::UserReject, None);
        };
        let (decision, reason) = match answer {
            PermissionAnswer::Allow { reason } => (Decision::Allow, reason),
            PermissionAnswer::Deny { reason } => (Decision::Deny, reason),
        };
        let provenance = Provenance::layer(Layer::Hooks).at(DecidedBy::Approver);
        let mut verdict = Verdict::new(
            decision,
            format!("answered by hook `{hook}`: {reason}"),
            provenance,
        );
        verdict.reasons.push(format!("asked because: {}", ask.reason()));
        (verdict, DecisionSource::Hook, None)
    }

    /// Adds rules the user's answer made and puts a guard with them in force.
    fn add_rules(&self, texts: &[String], behavior: Decision, source: Source) {
        if texts.is_empty() {
            return;
        }
        let mut settings = self.settings.lock().unwrap_or_else(PoisonError::into_inner);
        for text in texts {
            match Rule::parse(text, behavior, source) {
                Ok(rule) => settings.add_rule(rule),
                Err(error) => tracing::warn!(rule = %text, %error, "an answer's rule could not be parsed"),
            }
        }
        match Guard::new(&settings, &self.guard_options) {
            Ok(guard) => self.guard.replace(guard),
            Err(error) => tracing::warn!(%error, "the guard could not be rebuilt with the answer's rules"),
        }
    }

    /// The working directory.
    pub fn cwd(&self) -> &Path {
        &self.config.cwd
    }
}

/// `limits` with the settings' `section` applied, then the variables `env` finds; every value that could not be used
/// is reported in the trace (a typo in a settings file must not pass unnoticed, nor fail the session).
fn limits_from_settings(
    limits: LimitsConfig,
    section: &serde_json::Map<String, Value>,
    env: impl Fn(&str) -> Option<String>,
) -> LimitsConfig {
    let (limits, mut errors) = limits.with_settings(&Value::Object(section.clone()));
    let (limits, env_errors) = limits.with_vars(env);
    errors.extend(env_errors);
    for error in &errors {
        tracing::warn!(%error, "a runtime limit was not applied");
    }
    limits
}

/// The report of a call made in `count` consecutive steps: an error result instead of the call (runtime limit L7).
fn duplicate_refusal(call: ToolCall, count: u32) -> CallReport {
    let reason = format!(
        "`{}` was called with the same arguments in {count} steps in a row: it is not run again; use its \
         earlier result or try something else",
        call.name
    );
    let verdict = Verdict::new(
        Decision::Deny,
        reason,
        Provenance::layer(Layer::Limits).at(DecidedBy::Limit),
    );
    let source = DecisionSource::of_guard_verdict(&verdict);
    telemetry::emit(&call.name, &call.id, &verdict, source);
    CallReport {
        output: ToolOutput::error(format!("refused (runtime-limits/limit): {}", verdict.reason())),
        status: CallStatus::Denied,
        ran: None,
        persisted: None,
        contexts: Vec::new(),
        confinement: None,
        call,
        verdict,
        source,
        answer: None,
    }
}

/// An ask that nobody answered, turned into a deny (headless, silent context, approver timeout).
fn no_prompt(ask: &Verdict, why: &str) -> Verdict {
    let provenance = Provenance {
        step: Some(DecidedBy::NoPrompt),
        ..ask.provenance.clone()
    };
    let mut verdict = Verdict::new(
        Decision::Deny,
        format!("{why}; the call would have asked: {}", ask.reason()),
        provenance,
    );
    verdict.diagnostics = ask.diagnostics.clone();
    verdict
}

/// What a runtime's `subagent` tool needs of its parent to start a child.
pub(crate) struct SubagentHost {
    config: RuntimeConfig,
    guard_options: GuardOptions,
    settings: Arc<Mutex<Settings>>,
    guard: GuardHandle,
    /// The parent's tools without the `subagent` tool.
    registry: ToolRegistry,
    hooks: HookRegistry,
    approver: Arc<dyn Approver>,
    store: OutputStore,
    cancel: CancelRegistry,
    metrics: Arc<MetricsHook>,
    models: Arc<dyn ChildModels>,
    audit: Option<AuditLogHook>,
}

impl SubagentHost {
    /// The parent's mode now.
    pub(crate) fn parent_mode(&self) -> PermissionMode {
        self.guard.current().policy().mode()
    }

    /// The parent's tools (without the `subagent` tool).
    pub(crate) fn parent_tools(&self) -> Vec<&str> {
        self.registry.names()
    }

    /// The runtime of the child `plan` describes: the parent's rules (with the answers so far), hooks, approver
    /// (in `bubble` mode) and output store; the narrowed tools; the child's mode, with the parent's guard as a
    /// ceiling; a silent context; no `subagent` tool.
    pub(crate) fn child_runtime(&self, plan: &ChildPlan) -> Result<Runtime, RuntimeError> {
        let settings = self
            .settings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let guard_options = GuardOptions {
            mode: Some((plan.mode, Source::Session)),
            ..self.guard_options.clone()
        };
        let guard = Guard::new(&settings, &guard_options)?;
        let names: Vec<&str> = plan.tools.iter().map(String::as_str).collect();
        let config = RuntimeConfig {
            agent_name: plan.name.clone(),
            silent: plan.silent,
            mode: guard_options.mode,
            ..self.config.clone()
        };
        Ok(Runtime {
            config,
            guard_options,
            settings: Arc::new(Mutex::new(settings)),
            guard: GuardHandle::new(guard),
            registry: self.registry.restrict(&names),
            hooks: self.hooks.clone(),
            approver: if plan.bubble {
                Arc::clone(&self.approver)
            } else {
                Arc::new(HeadlessApprover)
            },
            store: self.store.clone(),
            cancel: self.cancel.clone(),
            metrics: Arc::clone(&self.metrics),
            tokens: Mutex::default(),
            duplicates: Mutex::default(),
            ceiling: Some(self.guard.clone()),
            bubble: plan.bubble,
            host: None,
            background: BgTasks::default(),
            audit: self.audit.clone(),
        })
    }

    /// Runs the child `plan` describes inside the parent's session ([`SubagentHost::child_runtime`], fresh
    /// messages, its model from the `ChildModels`); the subagent start and stop hooks fire around it. Returns
    /// the child's final answer, or why it stopped.
    pub(crate) async fn run_child(
        &self,
        plan: ChildPlan,
        args: &Value,
        ctx: &ToolContext,
    ) -> Result<String, ToolError> {
        let Some(mut model) = self.models.child_model(&plan, args) else {
            return Err(ToolError::Failed(format!(
                "no model can drive a `{}` subagent",
                plan.name
            )));
        };
        let child = self
            .child_runtime(&plan)
            .map_err(|error| ToolError::Failed(format!("the subagent could not start: {error}")))?;
        let task = plan
            .messages
            .iter()
            .rev()
            .find(|m| m.role == agent_subagent::ChildRole::User)
            .map(|m| m.content.clone())
            .unwrap_or_default();
        let start = SubagentContext {
            session_id: ctx.session_id.clone(),
            parent_agent: ctx.agent_name.clone(),
            agent_name: plan.name.clone(),
            task,
        };
        self.hooks.subagent_start(&start).await;
        tracing::info!(
            session = %ctx.session_id,
            parent = %ctx.agent_name,
            agent = %plan.name,
            mode = %plan.mode,
            tools = ?plan.tools,
            bubble = plan.bubble,
            "a subagent starts"
        );
        let ended = child.run_loop(&ctx.session_id, model.as_mut()).await;
        // The child's background tasks end with it (their audit rows are written as they finish).
        child.background.stop(&ctx.session_id).await;
        let outcome = ended.answer.clone().unwrap_or_else(|| ended.reason.clone());
        let stop = SubagentStopContext {
            session_id: ctx.session_id.clone(),
            parent_agent: ctx.agent_name.clone(),
            agent_name: plan.name.clone(),
            steps: u32::try_from(ended.steps.len()).unwrap_or(u32::MAX),
            outcome: outcome.clone(),
        };
        self.hooks.subagent_stop(&stop).await;
        if self.cancel.is_cancelled(&ctx.session_id) {
            return Err(ToolError::Cancelled);
        }
        // The parent sees what its child did, call by call, as the child's audit rows record it.
        let mut calls = Vec::new();
        for report in ended.steps.iter().flat_map(|step| &step.calls) {
            let provenance = &report.verdict.provenance;
            let step = provenance.step.map_or("finding", DecidedBy::as_str);
            calls.push(format!(
                "[{}] {} {:?} by {}/{step}",
                report.call.id, report.call.name, report.status, provenance.layer
            ));
        }
        Ok(format!(
            "subagent `{}` ({} step(s), {}): {outcome}\ncalls: {}",
            plan.name,
            ended.steps.len(),
            ended.reason,
            if calls.is_empty() {
                "none".to_owned()
            } else {
                calls.join("; ")
            }
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_limits_apply_first_then_the_environment() {
        let section =
            serde_json::json!({"maxSteps": 2, "tokenHardLimit": 900, "duplicateLimit": 0, "speed": 1});
        let Value::Object(section) = section else {
            unreachable!()
        };
        let env = |name: &str| (name == "AGENT_TOKEN_HARD_LIMIT").then(|| "1200".to_owned());
        let limits = limits_from_settings(LimitsConfig::default(), &section, env);
        assert_eq!(limits.max_steps, 2);
        assert_eq!(
            limits.token_hard_limit, 1200,
            "the process environment wins over the files"
        );
        assert_eq!(
            limits.duplicate_limit,
            LimitsConfig::default().duplicate_limit,
            "a bad value is not applied"
        );
    }
}
