//! The session loop: a session's start and stop, the turns of a [`Model`], and the runtime limits wired into it
//! (step limit, token budget, compaction, forced final turn).

use std::future::Future;
use std::pin::Pin;
use std::sync::PoisonError;
use std::time::Instant;

use agent_hooks::{
    AuditRow, AuditStatus, CompactContext, HookError, SessionContext, SessionStopContext, StepContext,
};
use agent_runtime_limits::{BudgetAction, CompactionBreaker, StepGate, StepLimiter, TokenBudget};
use agent_tool_traits::{DecidedBy, Layer, Provenance, ToolCall};

use super::Runtime;
use super::compaction::{Context, KEEP_RECENT_STEPS};
use super::report::{BgNotification, LimitEvent, LimitKind, SessionReport, StepRecord};
use crate::executor::poll_cancel;
use crate::registry::ToolSpec;

/// What a model answers at a step.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelTurn {
    /// Tool calls to make.
    Calls(Vec<ToolCall>),
    /// The final answer; the session ends.
    Answer(String),
    /// The model could not give a turn (its server failed, after any retries); the session ends without an
    /// answer, with this error as its stop reason.
    Failed(String),
}

/// The future a model returns.
pub type ModelFuture<'a> = Pin<Box<dyn Future<Output = ModelTurn> + Send + 'a>>;

/// The future of a model's own summary of the context ([`Model::summarize`]).
pub type SummaryFuture<'a> = Pin<Box<dyn Future<Output = Option<String>> + Send + 'a>>;

/// The model driving a session: given the steps so far, the next turn.
pub trait Model: Send {
    /// The tools this agent can call, given once before its first turn: the runtime's registry, narrowed for a
    /// subagent, so a model never sees a tool its agent does not have. The default ignores them (a scripted model).
    fn tools(&mut self, _tools: &[ToolSpec]) {}

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

    /// Asked when the runtime compacts the context: the model's own summary of `history` (every step it was
    /// shown before the compaction), given `summary`, the runtime's deterministic one. `None` (the default, and a
    /// model whose server fails) keeps the deterministic summary; `Some` replaces it in [`Model::compacted`].
    fn summarize<'a>(&'a mut self, _history: &'a [StepRecord], _summary: &'a str) -> SummaryFuture<'a> {
        Box::pin(std::future::ready(None))
    }

    /// The tokens the model's context held at its last turn, as its server reported them (prompt and answer),
    /// taken once: the token budget uses it in place of its estimate. `None` (the default) keeps the estimate.
    fn take_reported_tokens(&mut self) -> Option<u64> {
        None
    }

    /// The final turn, without tools, after `reminder` (a runtime limit forces an answer). The default injects
    /// the reminder and asks for the next turn; tool calls it still makes are not run.
    fn final_turn<'a>(&'a mut self, history: &'a [StepRecord], reminder: &'a str) -> ModelFuture<'a> {
        self.notice(reminder);
        self.next_turn(history)
    }
}

/// The `tool_name` of a context compaction's audit row.
pub(crate) const COMPACTION_TOOL_NAME: &str = "compaction";

/// What a compaction left.
struct CompactionEnd {
    /// The estimated tokens of the compacted context.
    tokens: u64,
    /// What happened, for the report, the trace and the audit row.
    message: String,
}

/// How the loop ended.
pub(super) struct LoopEnd {
    pub(super) steps: Vec<StepRecord>,
    /// The background results injected before a turn.
    pub(super) background: Vec<BgNotification>,
    pub(super) answer: Option<String>,
    pub(super) reason: String,
    pub(super) limits: Vec<LimitEvent>,
}

impl Runtime {
    /// Starts a session: the session-start hooks run.
    pub async fn start_session(&self, session_id: &str) {
        let ctx = SessionContext {
            session_id: session_id.to_owned(),
            agent_name: self.agent.config.agent_name.clone(),
            cwd: self.agent.config.cwd.clone(),
            permission_mode: self.mode_name(),
        };
        // Session-start hooks cannot fail today; the registry keeps a `Result` for uniformity.
        let _started = self.agent.services.hooks.session_start(&ctx).await;
    }

    /// Stops a session after `steps` steps: its background tasks end (Cancel tasks are cancelled, Block tasks
    /// awaited; each writes its audit row), then the session-stop hooks run (the audit log's `SESSION_STOP` row is
    /// on disk when this returns `Ok`). Results never injected stay in [`Runtime::background_queue`].
    pub async fn stop_session(&self, session_id: &str, steps: u32, reason: &str) -> Result<(), HookError> {
        self.background.stop(session_id).await;
        let cancelled =
            self.agent.services.cancel.is_cancelled(session_id) || self.token(session_id).is_cancelled();
        let ctx = SessionStopContext {
            session_id: session_id.to_owned(),
            agent_name: self.agent.config.agent_name.clone(),
            steps,
            reason: reason.to_owned(),
            cancelled,
        };
        let stopped = self.agent.services.hooks.session_stop(&ctx).await;
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session_id);
        self.duplicates
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session_id);
        self.sessions
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
    /// `SESSION_STOP` row); each compaction also has an audit row of its own (tool name `compaction`).
    pub async fn run(&self, session_id: &str, model: &mut dyn Model) -> SessionReport {
        self.start_session(session_id).await;
        let ended = self.run_loop(session_id, model).await;
        let token = self.token(session_id);
        let cancelled = self.agent.services.cancel.is_cancelled(session_id) || token.is_cancelled();
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
            metrics: self.agent.services.metrics.snapshot(),
            background,
        }
    }

    /// The loop of [`Runtime::run`], without the session's start and stop (a subagent runs it inside its
    /// parent's session).
    pub(super) async fn run_loop(&self, session_id: &str, model: &mut dyn Model) -> LoopEnd {
        let token = self.token(session_id);
        let limits = self.agent.config.limits;
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
        model.tools(&self.registry.specs());
        // A model's turn is raced against the run's cancellation: a cancelled run drops the turn (a streamed
        // answer stops mid-stream); the registry is polled into the token, as the executor does for tools.
        let poller = tokio::spawn(poll_cancel(
            self.agent.services.cancel.clone(),
            session_id.to_owned(),
            token.clone(),
        ));
        let reason = loop {
            if self.agent.services.cancel.is_cancelled(session_id) || token.is_cancelled() {
                break "cancelled by the user".to_owned();
            }
            // Finished background calls reach the model as messages before its next turn, never inside a step.
            for notification in self.background.queue.take(session_id) {
                tracing::info!(
                    session = session_id,
                    agent = %self.agent.config.agent_name,
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
                let turn = tokio::select! {
                    turn = model.final_turn(context.steps(), reminder) => turn,
                    () = token.cancelled() => break "cancelled by the user".to_owned(),
                };
                break match turn {
                    ModelTurn::Answer(text) => {
                        answer = Some(text);
                        format!("{why}: final answer without tools")
                    }
                    ModelTurn::Calls(calls) => format!(
                        "{why}: the final turn asked for {} tool call(s), which were not run",
                        calls.len()
                    ),
                    ModelTurn::Failed(error) => format!("{why}: the model failed: {error}"),
                };
            }
            let turn = tokio::select! {
                turn = model.next_turn(context.steps()) => turn,
                () = token.cancelled() => break "cancelled by the user".to_owned(),
            };
            let reported = model.take_reported_tokens();
            if let Some(tokens) = reported {
                budget.reported(tokens);
            }
            match turn {
                ModelTurn::Answer(text) => {
                    answer = Some(text);
                    break "completed".to_owned();
                }
                ModelTurn::Failed(error) => break format!("the model failed: {error}"),
                ModelTurn::Calls(calls) if calls.is_empty() => break "completed".to_owned(),
                ModelTurn::Calls(calls) => {
                    let count = u32::try_from(calls.len()).unwrap_or(u32::MAX);
                    // A server's count already holds the calls the model wrote.
                    if reported.is_none() {
                        for call in &calls {
                            budget.add_text(&call.args.to_string());
                        }
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
                        agent_name: self.agent.config.agent_name.clone(),
                        step,
                        tool_calls: count,
                    };
                    let _completed = self.agent.services.hooks.step_complete(&ctx).await;
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
        poller.abort();
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
            agent_name: self.agent.config.agent_name.clone(),
            trigger: "auto".to_owned(),
            tokens_before: before,
            tokens_after: None,
        };
        self.agent.services.hooks.pre_compact(&ctx).await;
        let soft = self.agent.config.limits.token_soft_limit;
        let shown = context.steps().to_vec();
        let compacted = context.compact_within(soft, KEEP_RECENT_STEPS);
        let mut by_model = false;
        if compacted.summarised_steps > 0
            && let Some(summary) = &compacted.summary
        {
            // The model may write the summary itself; the deterministic one stands when it does not.
            match model.summarize(&shown, summary).await {
                Some(own) if !own.trim().is_empty() => {
                    by_model = true;
                    model.compacted(&own);
                }
                Some(_) | None => model.compacted(summary),
            }
        }
        let after = context.estimate_tokens();
        ctx.tokens_after = Some(after);
        self.agent.services.hooks.post_compact(&ctx).await;
        budget.compacted(after);
        let success = after <= soft;
        if success {
            breaker.record_success();
        } else {
            breaker.record_failure();
        }
        let message = format!(
            "{} the context: {before} -> {after} estimated tokens (soft limit {soft}), {} step(s) summarised{}, {} \
             kept whole",
            if success { "compacted" } else { "could not compact" },
            compacted.summarised_steps,
            if by_model { " by the model" } else { "" },
            context.steps().len()
        );
        if let Some(audit) = &self.agent.services.audit {
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
            agent_name: self.agent.config.agent_name.clone(),
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
            decided_by: Some(
                Provenance::layer(Layer::Limits)
                    .at(DecidedBy::Limit)
                    .layer_step()
                    .to_string(),
            ),
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
            agent = %self.agent.config.agent_name,
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
}
