//! Step execution: the permission pipeline of each call (PreToolUse hooks, the guard, the approver), the handoff
//! of the cleared calls to the executor's batches, background starts, and the PostToolUse hooks and persistence.

use std::sync::{Arc, PoisonError};
use std::time::Instant;

use agent_decide::{CallInput, Decided, Deciders};
use agent_hooks::{CallStatus, HookRegistry, PostToolUseContext, PreToolUseContext};
use agent_rules::SessionState;
use agent_runtime_limits::{DuplicateCheck, DuplicateDetector};
use agent_tool_traits::{
    Confinement, DecidedBy, Decision, HookOutcome, Layer, PermissionCheck, Provenance, ProxyGrant,
    ProxyLimit, Tool, ToolCall, ToolContext, ToolError, ToolName, ToolOutput, Verdict,
};
use serde_json::Value;

use super::Runtime;
use super::ask::no_prompt;
use super::background::{BgTask, BgTaskRunTool};
use super::report::{BgNotification, CallReport};
use crate::executor::{Runnable, partition, poll_cancel, run_batch, run_one};
use crate::persist::OutputStore;
use crate::telemetry::{self, DecisionSource};

/// A call after the permission pipeline: denied (with its report but for the output hooks) or cleared to run.
enum Planned {
    Denied(CallReport),
    Cleared {
        report: CallReport,
        tool: Arc<dyn Tool>,
        /// What its sandbox's proxy lets through beyond the settings' domains, and the taint's limit.
        proxy: ProxyGrant,
    },
    /// A `bg_task_run` call (`report`) whose inner call (`inner`, of `tool`) was cleared.
    Background {
        report: CallReport,
        inner: Box<CallReport>,
        tool: Arc<dyn Tool>,
        proxy: ProxyGrant,
    },
}

impl Runtime {
    /// Executes the calls of one step (docs/ARCHITECTURE.md, "From the agent runtime"): for each call in order, the
    /// duplicate check, the PreToolUse hooks, the permission pipeline and, for an ask, the approver; then the cleared
    /// calls in batches (consecutive concurrency-safe calls in parallel, the others one at a time) with timeout,
    /// cancellation and sibling abort; then, for every call, denied ones included, the PostToolUse hooks and output
    /// persistence.
    pub async fn execute(&self, session_id: &str, step: u32, calls: Vec<ToolCall>) -> Vec<CallReport> {
        let token = self.token(session_id);
        let poller = tokio::spawn(poll_cancel(
            self.agent.services.cancel.clone(),
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
                    if call.tool() == ToolName::new(BgTaskRunTool::NAME)
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
                Planned::Cleared { report, tool, proxy } => {
                    let concurrent = tool.is_concurrency_safe(&report.call.args);
                    runnable.push(Runnable {
                        index,
                        tool,
                        args: report.call.args.clone(),
                        concurrent,
                        confinement: report.confinement,
                        undo_held: report.undo_held.clone(),
                        proxy,
                        call_id: report.call.id.clone(),
                    });
                    reports.push(report);
                }
                Planned::Background { mut report, .. }
                    if token.is_cancelled() || self.agent.services.cancel.is_cancelled(session_id) =>
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
                    proxy,
                } => {
                    let name = inner.call.name.clone();
                    let task_id = self.start_background(session_id, step, *inner, tool, proxy);
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
            call_id: String::new(),
            agent_name: self.agent.config.agent_name.clone(),
            silent: self.agent.config.silent,
            cancelled: Arc::default(),
            confinement: None,
            proxy: ProxyGrant::default(),
            undo_held: Vec::new(),
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
            for ran in run_batch(batch, &context, &token, self.agent.config.tool_timeout).await {
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

    /// Where this agent's calls are made, for their PostToolUse context.
    fn site(&self, session_id: &str) -> Site {
        Site {
            session_id: session_id.to_owned(),
            agent_name: self.agent.config.agent_name.clone(),
            cwd: self.agent.config.cwd.clone(),
            permission_mode: self.mode_name(),
        }
    }

    /// The PostToolUse hooks and output persistence of one call.
    async fn finish(&self, session_id: &str, step: u32, report: &mut CallReport) {
        post_process(
            &self.agent.services.hooks,
            &self.agent.services.store,
            &self.site(session_id),
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
            Planned::Cleared { report, tool, proxy } => Planned::Background {
                report: CallReport {
                    call,
                    ..report.clone()
                },
                inner: Box::new(report),
                tool,
                proxy,
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
        proxy: ProxyGrant,
    ) -> String {
        let task_id = self.background.next_id();
        let cancel = self.token(session_id).child_token();
        let ctx = ToolContext {
            session_id: session_id.to_owned(),
            call_id: inner.call.id.clone(),
            agent_name: self.agent.config.agent_name.clone(),
            silent: self.agent.config.silent,
            cancelled: Arc::default(),
            // It runs beside the session's later calls, whose file tools act on paths checked before they act.
            confinement: inner.confinement.map(|confinement| Confinement {
                background: true,
                ..confinement
            }),
            proxy,
            undo_held: inner.undo_held.clone(),
        };
        let behavior = tool.interrupt_behavior();
        let site = self.site(session_id);
        let hooks = self.agent.services.hooks.clone();
        let store = self.agent.services.store.clone();
        let queue = self.background.queue.clone();
        let timeout = self.agent.config.tool_timeout;
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
            post_process(&hooks, &store, &site, step, &mut report).await;
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

    /// The permission pipeline of one call: hooks, the guard, the approver.
    async fn plan(&self, session_id: &str, step: u32, call: ToolCall) -> Planned {
        let tool = self.registry.get(&call.name);
        let pre = PreToolUseContext {
            session_id: session_id.to_owned(),
            agent_name: self.agent.config.agent_name.clone(),
            step,
            call: call.clone(),
            cwd: self.agent.config.cwd.clone(),
            permission_mode: self.mode_name(),
        };
        let outcome = self.agent.services.hooks.run_pre_tool_use(&pre).await;
        let call = ToolCall {
            args: outcome.args,
            ..call
        };
        let hooks = outcome.permission;
        // The tool's own checks are step 2 and 4 inputs of the one resolution; a tool this agent does not have
        // is a tool-level deny there too, so that even it is decided (and audited) on the one path.
        let checks = match &tool {
            Some(tool) => tool.check_permissions(&call.args),
            None => vec![PermissionCheck::deny(format!(
                "no tool named `{}` is available to this agent",
                call.name
            ))],
        };
        let input = CallInput {
            tool: call.name.clone(),
            args: call.args.clone(),
            hooks,
            checks,
        };
        let decided = self.decide_bounded(input, self.session_state(session_id)).await;
        self.record(session_id, &decided);
        let confinement = decided.confinement;
        // The refusal names no command that clears the taint: a runtime's keeper may be memory that no command
        // reaches (a server's sessions are cleared from its page).
        let proxy = ProxyGrant {
            domains: decided.domains.clone(),
            services: decided.services.clone(),
            services_only: decided.services_only,
            limit: decided.session_limit.as_ref().map(|limit| ProxyLimit {
                domains: limit.domains.clone(),
                why: limit.why(None),
            }),
        };
        let verdict = decided.verdict().clone();
        let (verdict, source, answer, approver) = match verdict.decision {
            Decision::Allow | Decision::Deny => {
                let source = DecisionSource::of_guard_verdict(&verdict);
                (verdict, source, None, None)
            }
            Decision::Ask => {
                let pre = PreToolUseContext {
                    call: call.clone(),
                    ..pre
                };
                self.ask(&pre, &decided).await
            }
        };
        // What the call adds to the session's taint counts once it is known whether the call runs.
        self.record_taint(session_id, &decided.taint, verdict.decision);
        telemetry::emit(&call.name, &call.id, &verdict, source);
        let report = CallReport {
            approver,
            output: ToolOutput::error(String::new()),
            status: CallStatus::Denied,
            ran: None,
            persisted: None,
            contexts: outcome.contexts,
            confinement: (verdict.decision == Decision::Allow)
                .then_some(confinement)
                .flatten(),
            undo_held: decided
                .contained
                .as_ref()
                .map(|contained| contained.undo_held.clone())
                .unwrap_or_default(),
            call,
            verdict,
            source,
            answer,
        };
        match (report.verdict.decision, tool) {
            (Decision::Allow, Some(tool)) => Planned::Cleared { report, tool, proxy },
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
        let names: Vec<String> = calls.iter().map(|c| c.tool().to_string()).collect();
        self.duplicates
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(session_id.to_owned())
            .or_insert_with(|| DuplicateDetector::new(&self.agent.config.limits))
            .check_step(
                step,
                names
                    .iter()
                    .map(String::as_str)
                    .zip(calls.iter().map(|c| &c.args)),
            )
    }

    /// The guards this agent's calls are decided by, as they are now: its own and, in a subagent, its parent's.
    fn deciders(&self) -> Deciders {
        let own = Deciders::new(self.agent.guard.current());
        match &self.agent.ceiling {
            Some(parent) => own.under(parent.current()),
            None => own,
        }
    }

    /// The decision of `call` in a session that has accumulated `session`. A call that reaches the shell analysis
    /// goes through the one bounded entry ([`agent_decide::DecisionBound::decide`], with [`RuntimeConfig::decision_bound`]),
    /// awaited on a blocking thread: hostile input can make the shell parser run away, and past the bound the call
    /// is denied and the loop goes on. Every other decision is bounded by its input's size and is made in place,
    /// without the thread handoff (ten times the cost of the decision itself).
    ///
    /// [`RuntimeConfig::decision_bound`]: super::RuntimeConfig::decision_bound
    async fn decide_bounded(&self, call: CallInput, session: SessionState) -> Decided {
        let deciders = self.deciders();
        if !matches!(
            agent_rules::describe(&call.tool, &call.args),
            Ok(agent_rules::CallTarget::Shell(_))
        ) {
            return deciders.decide(&call, &session);
        }
        let bound = self.agent.config.decision_bound;
        let tool = call.tool.clone();
        match tokio::task::spawn_blocking(move || bound.decide(&deciders, call, session)).await {
            Ok(decided) => decided,
            // The deciding thread panicked (a bug): the call is not run.
            Err(_) => Decided::from_verdict(Verdict::new(
                Decision::Deny,
                format!("the decision of `{tool}` stopped before it was made, so it is not allowed"),
                Provenance::layer(Layer::Rules),
            )),
        }
    }

    /// What the session `session_id` has accumulated that its decisions read.
    fn session_state(&self, session_id: &str) -> SessionState {
        let state = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(session_id)
            .cloned()
            .unwrap_or_default();
        state.with_taint(self.agent.services.taint.load(session_id))
    }

    /// Records in the session `session_id` what the decision of a call it acts on did (the classifier's approval
    /// or block in mode `auto`).
    fn record(&self, session_id: &str, decided: &Decided) {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(session_id.to_owned())
            .or_default()
            .record(&decided.resolution);
    }

    /// Records in the session `session_id` what a call answered `decision` adds to its taint (untrusted content,
    /// private data, the domains it reached): the decisions of its later calls read it.
    fn record_taint(&self, session_id: &str, taint: &agent_rules::TaintFacts, decision: Decision) {
        if taint.is_empty() {
            return;
        }
        if let Err(error) = self.agent.services.taint.record(session_id, taint, decision) {
            tracing::warn!(session = %session_id, %error, "the session's taint was not recorded");
        }
    }

    /// What the permission pipeline decides for a call of `tool` with `args` before anyone answers an ask: the
    /// guard with the tool's own checks (in a subagent, under its parent's permissions too), without hooks, as a
    /// fresh session would. In a silent context without `bubble`, an ask is already a deny. An inspection: it
    /// records nothing. A `bg_task_run` call is decided as its inner call.
    pub fn decide(&self, tool: &str, args: &Value) -> Verdict {
        if ToolName::new(tool) == ToolName::new(BgTaskRunTool::NAME)
            && self.registry.contains(BgTaskRunTool::NAME)
            && let Ok((inner, inner_args)) = BgTaskRunTool::inner(args)
        {
            return self.decide(inner, &inner_args);
        }
        let checks = match self.registry.get(tool) {
            Some(tool) => tool.check_permissions(args),
            None => vec![PermissionCheck::deny(format!(
                "no tool named `{tool}` is available to this agent"
            ))],
        };
        let input = CallInput {
            tool: tool.to_owned(),
            args: args.clone(),
            hooks: HookOutcome::default(),
            checks,
        };
        let decided = self.deciders().decide(&input, &SessionState::default());
        let verdict = decided.verdict().clone();
        match verdict.decision {
            Decision::Ask if self.agent.config.silent && !self.agent.bubble => {
                no_prompt(&verdict, "no user to ask in a silent context")
            }
            Decision::Allow | Decision::Ask | Decision::Deny => verdict,
        }
    }
}

/// The session, agent, working directory and mode a call was made in.
struct Site {
    session_id: String,
    agent_name: String,
    cwd: std::path::PathBuf,
    permission_mode: String,
}

/// The PostToolUse hooks (the audit row) and output persistence of one call.
async fn post_process(
    hooks: &HookRegistry,
    store: &OutputStore,
    site: &Site,
    step: u32,
    report: &mut CallReport,
) {
    let ctx = PostToolUseContext {
        session_id: site.session_id.clone(),
        agent_name: site.agent_name.clone(),
        step,
        call: report.call.clone(),
        cwd: site.cwd.clone(),
        permission_mode: site.permission_mode.clone(),
        output: report.output.clone(),
        status: report.status,
        verdict: report.verdict.clone(),
        elapsed: report.elapsed(),
        sandbox: report.confinement.map(|c| c.to_string()),
        approver: report.approver.as_ref().map(ToString::to_string),
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
        undo_held: Vec::new(),
        approver: None,
        call,
        verdict,
        source,
        answer: None,
    }
}
