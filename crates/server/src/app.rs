//! The server's state and what it does: decide, queue an ask, answer it, expire it, and tell the streams.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use agent_core::{ApprovalAnswer, answer_project, save_allow_rules, suggest_rules};
use agent_decide::{HookInput, HookOutput};
use agent_hooks::{Approver, AuditDetail, AuditLogHook, AuditRow, AuditStatus};
use agent_tool_traits::{DecidedBy, Decision, Layer, Provenance, Verdict};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::decider::{Decide, Outcome};
use crate::events::{EventKind, EventLog};
use crate::store::{AnswerResult, Approval, State, Store};
use crate::token::random_hex;

/// The name the audit log gives calls decided over HTTP for an agent that did not name itself.
pub(crate) const HOOK_AGENT: &str = "hook";

/// The largest event kept whole (see [`App::emit`]).
pub(crate) const MAX_EVENT_BYTES: usize = 16 << 10;

/// The PostgreSQL channel the servers of one database tell each other their events on.
pub(crate) const CHANNEL: &str = "agent_guard_events";

/// The shared state of one server.
pub(crate) struct App {
    pub(crate) decider: Arc<dyn Decide>,
    pub(crate) store: Store,
    pub(crate) audit: AuditLogHook,
    pub(crate) events: EventLog,
    pub(crate) token: String,
    pub(crate) approval_timeout: Duration,
    /// Wakes every request waiting for an ask's answer (they read the database again).
    pub(crate) resolved: Notify,
    /// This server's name among the servers of one database, so it skips its own notifications.
    pub(crate) instance: String,
    /// Runs the sessions of `POST /v1/sessions`, when the host gave a runner.
    pub(crate) runner: std::sync::OnceLock<Arc<dyn crate::sessions::SessionRunner>>,
    /// Where the sessions running here are cancelled.
    pub(crate) cancel: agent_tool_traits::CancelRegistry,
    /// The counts of `/metrics` and, when export is on, the OTLP exporter; it sees every audit row.
    pub(crate) telemetry: agent_telemetry::Telemetry,
    /// The sessions running on this server, each with whether it was cancelled.
    pub(crate) running: std::sync::Mutex<std::collections::HashMap<String, bool>>,
    /// The taint of the sessions running on this server: their runtimes decide with it, the page shows and
    /// clears it.
    pub(crate) taint: Arc<agent_rules::TaintInMemory>,
    /// The `Host` values requests must carry, for a server bound to loopback (see `loopback_hosts`).
    pub(crate) hosts: Option<Vec<String>>,
    /// How long a request's headers, and its body, may take to arrive.
    pub(crate) header_timeout: Duration,
    /// Becomes `true` when the server stops: the event streams end.
    pub(crate) stopping: tokio::sync::watch::Sender<bool>,
    /// The bound of one decision, as `check` holds it.
    pub(crate) bound: agent_decide::DecisionBound,
    /// The threads decisions run on.
    pub(crate) threads: crate::threads::DecisionThreads,
}

/// What putting a call to a person gave.
pub(crate) enum Enqueued {
    /// Decided without a person: denied by the policy, or by an earlier "don't ask again" of the session.
    Decided(HookOutput),
    /// Waiting in the queue.
    Queued(Box<Approval>),
}

impl App {
    /// Decides `input` on one of the server's decision threads ([`crate::threads`]) and waits at most the
    /// decision's bound for it: past the bound, or when the decision panics, the call is denied (a decision past its
    /// bound finishes on its thread, unheard).
    pub(crate) async fn decide_bounded(
        &self,
        input: HookInput,
        explain: bool,
    ) -> (HookInput, Outcome, Duration) {
        let decider = Arc::clone(&self.decider);
        let started = Instant::now();
        let input = Arc::new(input);
        let shared = Arc::clone(&input);
        let (sender, receiver) = tokio::sync::oneshot::channel();
        self.threads.run(Box::new(move || {
            // A panic is the decision's outcome here (a deny below), not the end of the thread.
            let decided = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                decider.decide_hook_input(&shared, explain)
            }));
            // The request may have stopped waiting (past the bound): then nobody hears the outcome.
            let _heard = sender.send(decided);
        }));
        let deny = |verdict: &Verdict| Outcome {
            output: HookOutput::from_verdict(verdict),
            decided: None,
            explanation: String::new(),
        };
        let outcome = match tokio::time::timeout(self.bound.limit(), receiver).await {
            // The timer has a millisecond's grain and fires late under load: a decision that finished after its
            // bound is the bound's deny however soon it was heard, as on the hook's worker threads.
            Ok(Ok(Ok(_))) if self.bound.is_exceeded_by(started.elapsed()) => {
                deny(self.bound.past_the_bound(&input.tool_name).verdict())
            }
            Ok(Ok(Ok(outcome))) => outcome,
            // The decision panicked (or its thread went away without an answer).
            Ok(Ok(Err(_)) | Err(_)) => deny(&Verdict::new(
                Decision::Deny,
                "internal error while deciding; the call is blocked",
                Provenance::layer(Layer::Rules),
            )),
            Err(_) => deny(self.bound.past_the_bound(&input.tool_name).verdict()),
        };
        // The decision's thread has let go of the input unless it is still deciding past the bound.
        let input = Arc::try_unwrap(input).unwrap_or_else(|shared| (*shared).clone());
        (input, outcome, started.elapsed())
    }

    /// `POST /v1/decide`: the decision, its audit row and its event.
    pub(crate) async fn decide_over_http(&self, input: HookInput) -> HookOutput {
        let (input, outcome, elapsed) = self.decide_bounded(input, false).await;
        let (decision, reason) = output_fields(&outcome.output);
        let decided_by = outcome.decided_by();
        self.record_call(
            &input,
            &decision,
            &decided_by,
            elapsed,
            &reason,
            HOOK_AGENT,
            outcome.detail(),
        )
        .await;
        // The input is not needed after its audit row: its parts move into the event rather than being copied.
        let HookInput {
            session_id,
            tool_name,
            tool_input,
            ..
        } = input;
        let mut data = serde_json::Map::with_capacity(7);
        data.insert("session_id".to_owned(), Value::String(session_id.clone()));
        data.insert("agent".to_owned(), json!(HOOK_AGENT));
        data.insert("tool".to_owned(), Value::String(tool_name));
        data.insert("input".to_owned(), tool_input);
        data.insert("decision".to_owned(), Value::String(decision));
        data.insert("reason".to_owned(), Value::String(reason));
        data.insert("decided_by".to_owned(), Value::String(decided_by));
        self.emit(EventKind::Decision, &session_id, Value::Object(data))
            .await;
        outcome.output
    }

    /// `POST /v1/approvals`: puts a call to a person. The call is decided first: a deny stands (no answer could
    /// make it run), anything else waits in the queue for an answer until its expiry.
    pub(crate) async fn enqueue(&self, input: HookInput, agent: &str) -> Result<Enqueued, sqlx::Error> {
        let (input, outcome, elapsed) = self.decide_bounded(input, true).await;
        let (decision, reason) = output_fields(&outcome.output);
        if decision == Decision::Deny.as_str() {
            let decided_by = outcome.decided_by();
            self.record_call(
                &input,
                &decision,
                &decided_by,
                elapsed,
                &reason,
                agent,
                outcome.detail(),
            )
            .await;
            return Ok(Enqueued::Decided(outcome.output));
        }
        // An answer's rules are relative to the project of the call and saved in its settings, where `check`
        // finds them from any of its subdirectories.
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let project = answer_project(Path::new(&input.cwd), home.as_deref());
        let rules = outcome
            .decided
            .as_ref()
            .map(|decided| suggest_rules(&input.tool_name, &input.tool_input, decided, &project))
            .unwrap_or_default();
        if self
            .store
            .denied_for_session(&input.session_id, &input.tool_name, &rules)
            .await?
        {
            let verdict = Verdict::new(
                Decision::Deny,
                "denied by the user for the rest of the session (don't ask again)",
                Provenance::layer(Layer::Approval).at(DecidedBy::Approver),
            );
            let reason = verdict.reason();
            // The session's own earlier answer decides: the same party answered.
            let detail = AuditDetail {
                approver: Some(Approver::Other("dont-ask-again".to_owned()).to_string()),
                ..AuditDetail::default()
            };
            self.record_call(
                &input,
                "deny",
                "approval/approver",
                elapsed,
                &reason,
                agent,
                detail,
            )
            .await;
            return Ok(Enqueued::Decided(HookOutput::from_verdict(&verdict)));
        }
        let now = now_ms();
        let id = random_hex(16).map_err(|e| sqlx::Error::Protocol(e.to_string()))?;
        let approval = Approval {
            id,
            session_id: input.session_id.clone(),
            agent_name: agent.to_owned(),
            tool_name: input.tool_name.clone(),
            tool_input: input.tool_input.clone(),
            cwd: input.cwd.clone(),
            reason,
            explanation: outcome.explanation,
            rules,
            settings_file: agent_core::local_settings_file(&project).display().to_string(),
            created_ms: now,
            expires_ms: now
                .saturating_add(i64::try_from(self.approval_timeout.as_millis()).unwrap_or(i64::MAX)),
            state: State::Pending,
            answered_ms: None,
            answered_by: None,
        };
        self.store.insert(&approval).await?;
        self.telemetry.ask_opened();
        self.emit(
            EventKind::PermissionRequest,
            &approval.session_id,
            self.approval_json(&approval),
        )
        .await;
        Ok(Enqueued::Queued(Box::new(approval)))
    }

    /// `POST /v1/approvals/{id}`: takes one answer; "allow always" saves the narrow rules as the runtime's
    /// approver does.
    pub(crate) async fn answer(
        &self,
        id: &str,
        answer: ApprovalAnswer,
        by: &Approver,
    ) -> Result<AnswerResult, sqlx::Error> {
        let result = self.store.answer(id, answer, &by.to_string(), now_ms()).await?;
        if let AnswerResult::Taken(approval) = &result {
            if answer == ApprovalAnswer::AllowAlways && !approval.rules.is_empty() {
                let (file, rules) = (PathBuf::from(&approval.settings_file), approval.rules.clone());
                let saved = tokio::task::spawn_blocking(move || save_allow_rules(&file, &rules)).await;
                match saved {
                    Ok(Ok(())) => self.decider.settings_changed(Path::new(&approval.cwd)),
                    Ok(Err(error)) => {
                        tracing::warn!(file = %approval.settings_file, %error, "the allow rule could not be saved");
                    }
                    Err(error) => tracing::warn!(%error, "saving the allow rule stopped"),
                }
            }
            self.resolve(approval).await;
        }
        Ok(result)
    }

    /// Expires the asks past their expiry (each is denied) and tells the streams and waiters.
    pub(crate) async fn expire_due(&self) -> Result<(), sqlx::Error> {
        for approval in self.store.expire_due(now_ms()).await? {
            self.resolve(&approval).await;
        }
        Ok(())
    }

    /// Cancels the pending asks of `session`: each ends as `cancelled` (a deny), with its audit row and event, and
    /// the requests waiting for it are woken. Returns their ids.
    pub(crate) async fn cancel_asks(&self, session: &str) -> Result<Vec<String>, sqlx::Error> {
        let cancelled = self.store.cancel_pending(session, now_ms()).await?;
        for approval in &cancelled {
            self.resolve(approval).await;
        }
        Ok(cancelled.into_iter().map(|a| a.id).collect())
    }

    /// The audit row of a decision made for the hook input `input` (kept with it, so that it can be replayed),
    /// with what it rested on (`detail`).
    #[expect(clippy::too_many_arguments, reason = "one field each of the row")]
    async fn record_call(
        &self,
        input: &HookInput,
        decision: &str,
        decided_by: &str,
        elapsed: Duration,
        reason: &str,
        agent: &str,
        detail: AuditDetail,
    ) {
        self.audit
            .record(audit_row(
                &input.session_id,
                &input.tool_name,
                decision,
                decided_by,
                elapsed,
                reason,
                agent,
                Some(input),
                detail,
            ))
            .await;
    }

    /// The audit row and the `permission_resolved` event of an ask that got its end, and a wake-up for waiters.
    async fn resolve(&self, approval: &Approval) {
        let output = self.resolution(approval);
        let (decision, reason) = output
            .as_ref()
            .map(output_fields)
            .unwrap_or_else(|| ("deny".to_owned(), String::new()));
        let waited = approval
            .answered_ms
            .unwrap_or(approval.created_ms)
            .saturating_sub(approval.created_ms);
        // The rule an "allow always" saved, with its file: the chain `explain` follows from a later call's row.
        let saved =
            approval.state == State::Answered(ApprovalAnswer::AllowAlways) && !approval.rules.is_empty();
        let detail = AuditDetail {
            rule: approval.rules.first().filter(|_| saved).cloned(),
            rule_file: saved.then(|| approval.settings_file.clone()),
            sandbox: None,
            approver: Some(
                approval
                    .answered_by
                    .clone()
                    .unwrap_or_else(|| Approver::Nobody.to_string()),
            ),
            call: None,
        };
        self.audit
            .record(audit_row(
                &approval.session_id,
                &approval.tool_name,
                &decision,
                "approval/approver",
                Duration::from_millis(u64::try_from(waited).unwrap_or(0)),
                &reason,
                &approval.agent_name,
                None,
                detail,
            ))
            .await;
        self.telemetry.ask_closed();
        self.emit(
            EventKind::PermissionResolved,
            &approval.session_id,
            self.approval_json(approval),
        )
        .await;
        self.resolved.notify_waiters();
    }

    /// The hook output an ask ended in; `None` while it waits.
    pub(crate) fn resolution(&self, approval: &Approval) -> Option<HookOutput> {
        let (decision, why) = match approval.state {
            State::Pending => return None,
            State::Answered(ApprovalAnswer::AllowOnce) => {
                (Decision::Allow, "allowed once by the user".to_owned())
            }
            State::Answered(ApprovalAnswer::AllowAlways) if approval.rules.is_empty() => (
                Decision::Allow,
                "allowed by the user (no narrow rule to save)".to_owned(),
            ),
            State::Answered(ApprovalAnswer::AllowAlways) => (
                Decision::Allow,
                format!(
                    "allowed always by the user: {} saved to `{}`",
                    approval.rules.join(", "),
                    approval.settings_file
                ),
            ),
            State::Answered(ApprovalAnswer::Deny) => (Decision::Deny, "denied by the user".to_owned()),
            State::Answered(ApprovalAnswer::DontAskAgain) => (
                Decision::Deny,
                "denied by the user for the rest of the session".to_owned(),
            ),
            State::Expired => (
                Decision::Deny,
                format!(
                    "no answer within {} s",
                    approval.expires_ms.saturating_sub(approval.created_ms) / 1000
                ),
            ),
            State::Cancelled => (
                Decision::Deny,
                "the session was cancelled before an answer came".to_owned(),
            ),
        };
        let provenance = Provenance {
            layer: Layer::Approval,
            step: Some(DecidedBy::Approver),
            rule: approval.rules.first().cloned(),
            source: None,
            file: None,
        };
        let mut verdict = Verdict::new(decision, why, provenance);
        verdict
            .reasons
            .push(format!("asked because: {}", approval.reason));
        Some(HookOutput::from_verdict(&verdict))
    }

    /// An ask as the API and the page show it.
    pub(crate) fn approval_json(&self, a: &Approval) -> Value {
        json!({
            "id": a.id,
            "session_id": a.session_id,
            "agent": a.agent_name,
            "tool": a.tool_name,
            "input": a.tool_input,
            "cwd": a.cwd,
            "reason": a.reason,
            "explanation": a.explanation,
            "allow_always_rules": a.rules,
            "settings_file": a.settings_file,
            "created_at": timestamp(a.created_ms),
            "expires_at": timestamp(a.expires_ms),
            "state": a.state.as_str(),
            "answered_at": a.answered_ms.map(timestamp),
            "answered_by": a.answered_by,
            "output": self.resolution(a),
            "shown": crate::shown::Shown::of(a),
            "version": crate::shown::version(a),
            "taint": self.session_taint(a),
            "undo": self.undo_json(a),
        })
    }

    /// The runs an allowed ask let happen that `agent-guard undo` can take back, each with the command that does
    /// it; empty for an ask that was not allowed or whose command changed nothing (yet).
    fn undo_json(&self, a: &Approval) -> Value {
        let allowed = matches!(
            a.state,
            State::Answered(ApprovalAnswer::AllowOnce | ApprovalAnswer::AllowAlways)
        );
        if !allowed {
            return json!([]);
        }
        let runs = self.decider.undo_runs(Path::new(&a.cwd), &a.id);
        Value::Array(
            runs.iter()
                .map(|run| {
                    json!({
                        "root": run.root,
                        "id": run.id,
                        "undone": run.undone,
                        "command": format!(
                            "agent-guard undo --root {} --id {}",
                            agent_decide::shell_quote(&run.root.to_string_lossy()),
                            run.id
                        ),
                    })
                })
                .collect(),
        )
    }

    /// Where the taint of the session of `ask` lives: this server's memory for a session it runs, else what the
    /// host keeps for the coding agent's sessions in the ask's project (the hook's records, which `agent-guard
    /// agent` keeps too). Showing and clearing a session's taint both go through here.
    pub(crate) fn taint_keeper(&self, ask: &Approval) -> Result<Arc<dyn agent_rules::TaintKeeper>, String> {
        let runs_here = self
            .running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains_key(&ask.session_id);
        if runs_here || self.taint.holds(&ask.session_id) {
            return Ok(Arc::clone(&self.taint) as Arc<dyn agent_rules::TaintKeeper>);
        }
        self.decider.taint_keeper(Path::new(&ask.cwd))
    }

    /// The taint of the session of `ask` as the page shows it; `None` for an ask without a session, a session
    /// that has seen neither untrusted content nor private data, or where no taint is kept.
    pub(crate) fn session_taint(&self, ask: &Approval) -> Option<crate::shown::ShownTaint> {
        if ask.session_id.is_empty() {
            return None;
        }
        let taint = self.taint_keeper(ask).ok()?.load(&ask.session_id);
        crate::shown::ShownTaint::of(&taint)
    }

    /// Clears the taint of the session of `ask` where it lives, and writes the audit row that names who cleared
    /// it (`by`) and what was cleared; answers the taint that was cleared (empty when there was none, and then
    /// no row is written).
    pub(crate) async fn clear_taint(
        &self,
        ask: &Approval,
        by: &Approver,
    ) -> Result<agent_rules::SessionTaint, String> {
        let keeper = self.taint_keeper(ask)?;
        let session = ask.session_id.clone();
        let place = keeper.place();
        let cleared = tokio::task::spawn_blocking(move || keeper.clear(&session))
            .await
            .unwrap_or_else(|_| Err("internal error while clearing".to_owned()))?;
        if cleared != agent_rules::SessionTaint::default() {
            let taint = serde_json::to_value(&cleared).unwrap_or_default();
            let summary = format!("{} (kept in {place})", cleared.summary());
            let cwd = (!ask.cwd.is_empty()).then_some(ask.cwd.as_str());
            self.audit
                .record(AuditRow::taint_cleared(
                    &ask.session_id,
                    "server",
                    &summary,
                    &taint,
                    &by.to_string(),
                    cwd,
                ))
                .await;
        }
        Ok(cleared)
    }

    /// Publishes an event here and, with PostgreSQL, to the other servers of the database. The events kept for
    /// resuming are bounded: an event over [`MAX_EVENT_BYTES`] goes without its `input`, `explanation` and `shown`
    /// (the ask itself keeps them; `GET /v1/approvals/{id}` shows them).
    pub(crate) async fn emit(&self, kind: EventKind, session: &str, mut data: Value) {
        if most_bytes(&data) > MAX_EVENT_BYTES
            && data.to_string().len() > MAX_EVENT_BYTES
            && let Some(fields) = data.as_object_mut()
        {
            for field in ["input", "explanation", "shown"] {
                if fields.contains_key(field) {
                    fields.insert(field.to_owned(), json!({ "truncated": true }));
                }
            }
        }
        if let Some(pool) = self.store.postgres() {
            let message = |data: &Value| {
                json!({"from": self.instance, "kind": kind.as_str(), "session": session, "data": data})
                    .to_string()
            };
            // PostgreSQL refuses notifications of 8,000 bytes or more: a large one goes without its data, and the
            // other servers read the ask from the database when it matters (waiters always do).
            let mut text = message(&data);
            if text.len() >= 7900 {
                text = message(&json!({"id": data.get("id"), "truncated": true}));
            }
            let sent = sqlx::query("SELECT pg_notify($1, $2)")
                .bind(CHANNEL)
                .bind(&text)
                .execute(pool)
                .await;
            if let Err(error) = sent {
                tracing::warn!(%error, "cannot tell the other servers of an event");
            }
        }
        self.events.publish(kind, session, data);
    }
}

/// The decision and reason of a hook output.
pub(crate) fn output_fields(output: &HookOutput) -> (String, String) {
    (output.decision().to_owned(), output.reason().to_owned())
}

impl Outcome {
    /// Who decided, as the audit row and the event name it: the deciding layer and step, or the rules layer when
    /// the settings could not be loaded.
    fn decided_by(&self) -> String {
        self.decided.as_ref().map_or_else(
            || Layer::Rules.to_string(),
            |d| d.verdict().provenance.layer_step().to_string(),
        )
    }

    /// The rule, its file and the sandbox of the decision, as the audit row keeps them.
    fn detail(&self) -> AuditDetail {
        self.decided
            .as_ref()
            .map(|d| AuditDetail {
                sandbox: d.confinement.map(|c| c.to_string()),
                ..AuditDetail::of_provenance(&d.verdict().provenance)
            })
            .unwrap_or_default()
    }
}

/// The audit row of one decision or answer; `call` is the hook input it was made for, kept (within the audit log's
/// size bound) so that the call can be decided again (`agent-guard diff`).
#[expect(clippy::too_many_arguments, reason = "one field each of the row")]
fn audit_row(
    session: &str,
    tool: &str,
    decision: &str,
    decided_by: &str,
    elapsed: Duration,
    reason: &str,
    agent: &str,
    call: Option<&HookInput>,
    detail: AuditDetail,
) -> AuditRow {
    let tool_input = call
        .and_then(|call| serde_json::to_string(&call.tool_input).ok())
        .filter(|text| text.len() <= agent_hooks::INPUT_MAX_BYTES);
    let kept = tool_input.is_some();
    AuditRow {
        tool_input,
        cwd: call.filter(|_| kept).map(|call| call.cwd.clone()),
        permission_mode: call
            .filter(|_| kept)
            .and_then(|call| call.permission_mode.clone()),
        id: None,
        session_id: session.to_owned(),
        step: 0,
        tool_name: tool.to_owned(),
        status: if decision == "deny" {
            AuditStatus::Denied
        } else {
            AuditStatus::Ok
        },
        decision: Some(decision.to_owned()),
        decided_by: Some(decided_by.to_owned()),
        elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        output_preview: agent_hooks::preview(reason),
        agent_name: agent.to_owned(),
        ts: agent_hooks::rfc3339(SystemTime::now()),
        detail,
    }
}

/// At least as many bytes as `value` takes as JSON text, found without writing it: a string's character may take
/// up to six (`\u001f`), a number up to 24. An event under [`MAX_EVENT_BYTES`] by this count needs no measuring.
fn most_bytes(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 24,
        Value::String(text) => 2 + 6 * text.len(),
        Value::Array(items) => 2 + items.iter().map(|item| most_bytes(item) + 1).sum::<usize>(),
        Value::Object(fields) => {
            2 + fields
                .iter()
                .map(|(key, item)| 4 + 6 * key.len() + most_bytes(item))
                .sum::<usize>()
        }
    }
}

/// Milliseconds since the epoch.
pub(crate) fn now_ms() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

/// Milliseconds since the epoch as RFC 3339.
pub(crate) fn timestamp(ms: i64) -> String {
    let ms = u64::try_from(ms).unwrap_or(0);
    agent_hooks::rfc3339(UNIX_EPOCH + Duration::from_millis(ms))
}
