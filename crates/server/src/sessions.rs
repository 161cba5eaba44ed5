//! Sessions run by the server: the host's runner, the hook that turns a session's life into events, and the
//! approver that puts its asks to the queue.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use agent_core::{ApprovalAnswer, ApprovalFuture, ApprovalRequest, Approver};
use agent_hooks::{
    AgentHook, AuditLogHook, HookError, HookFuture, PostToolUseAction, PostToolUseContext, PreToolUseAction,
    PreToolUseContext, SessionStopContext, StepContext,
};
use agent_tool_traits::CancelRegistry;
use serde_json::{Value, json};

use crate::app::{App, now_ms};
use crate::events::EventKind;
use crate::store::{Approval, SessionRow, State};
use crate::token::random_hex;

/// The run of one session: its summary when it ends (the final answer, why it stopped), or why it failed.
pub type SessionFuture = Pin<Box<dyn Future<Output = Result<Value, String>> + Send>>;

/// What a session run by the server is given: its id, the approver that puts its asks to the queue, the hook
/// that streams its events, the cancellation registry the server cancels it through, and the audit log.
#[derive(Clone)]
pub struct SessionHandle {
    /// The session's id (also its audit rows' `session_id`).
    pub session_id: String,
    /// Puts the session's asks to the approval queue and waits for the answers.
    pub approver: Arc<dyn Approver>,
    /// Publishes `tool_start`, `tool_result`, `step` and `session_stop` events; register it with the runtime.
    pub hook: Arc<dyn AgentHook>,
    /// The registry `POST /v1/sessions/{id}/cancel` cancels the session in.
    pub cancel: CancelRegistry,
    /// The server's audit log.
    pub audit: AuditLogHook,
    /// Where the session's taint lives (the server's memory): give it to the runtime
    /// (`RuntimeBuilder::taint_keeper`), so that the page shows the taint beside the session's asks and clears it.
    pub taint: Arc<dyn agent_rules::TaintKeeper>,
}

impl std::fmt::Debug for SessionHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionHandle")
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

/// Starts sessions for the server. The `agent-guard` command implements it with scenario files (the format of
/// `agent-guard run`) run through the runtime.
pub trait SessionRunner: Send + Sync + 'static {
    /// Checks `spec` (the body of `POST /v1/sessions`) and returns the run, or why it cannot run.
    fn start(&self, spec: Value, handle: SessionHandle) -> Result<SessionFuture, String>;
}

/// The hook that publishes a session's life as events.
pub(crate) struct EventHook {
    pub(crate) app: Arc<App>,
}

impl AgentHook for EventHook {
    fn name(&self) -> &str {
        "server-events"
    }

    fn pre_tool_use<'a>(&'a self, ctx: &'a PreToolUseContext) -> HookFuture<'a, PreToolUseAction> {
        Box::pin(async move {
            let data = json!({
                "session_id": ctx.session_id, "agent": ctx.agent_name, "step": ctx.step,
                "call_id": ctx.call.id, "tool": ctx.call.name, "input": ctx.call.args,
            });
            self.app.emit(EventKind::ToolStart, &ctx.session_id, data).await;
            PreToolUseAction::Continue
        })
    }

    fn post_tool_use<'a>(&'a self, ctx: &'a PostToolUseContext) -> HookFuture<'a, PostToolUseAction> {
        Box::pin(async move {
            let preview: String = ctx
                .output
                .content
                .chars()
                .take(agent_hooks::PREVIEW_CHARS)
                .collect();
            let data = json!({
                "session_id": ctx.session_id, "agent": ctx.agent_name, "step": ctx.step,
                "call_id": ctx.call.id, "tool": ctx.call.name, "status": ctx.status.as_str(),
                "decision": ctx.verdict.decision.as_str(), "reason": ctx.verdict.reason(),
                "output": preview, "elapsed_ms": u64::try_from(ctx.elapsed.as_millis()).unwrap_or(u64::MAX),
            });
            self.app.emit(EventKind::ToolResult, &ctx.session_id, data).await;
            PostToolUseAction::Continue
        })
    }

    fn on_step_complete<'a>(&'a self, ctx: &'a StepContext) -> HookFuture<'a, ()> {
        Box::pin(async move {
            let data = json!({
                "session_id": ctx.session_id, "agent": ctx.agent_name, "step": ctx.step, "tool_calls": ctx.tool_calls,
            });
            self.app.emit(EventKind::Step, &ctx.session_id, data).await;
        })
    }

    fn on_session_stop<'a>(&'a self, ctx: &'a SessionStopContext) -> HookFuture<'a, Result<(), HookError>> {
        Box::pin(async move {
            let data = json!({
                "session_id": ctx.session_id, "agent": ctx.agent_name, "steps": ctx.steps,
                "reason": ctx.reason, "cancelled": ctx.cancelled,
            });
            self.app.emit(EventKind::SessionStop, &ctx.session_id, data).await;
            Ok(())
        })
    }
}

/// The approver of a session run by the server: each ask goes to the queue, and the person's answer (or none, at
/// the expiry) goes back to the runtime, which applies it as it applies a terminal's.
pub(crate) struct QueueApprover {
    pub(crate) app: Arc<App>,
    /// Who answered each call's ask (by call id), for [`Approver::party`].
    pub(crate) answered_by: agent_core::AnsweredBy,
}

impl Approver for QueueApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a, Option<ApprovalAnswer>> {
        Box::pin(async move {
            let app = &self.app;
            // A cancelled session asks nobody: its call is denied as if unanswered.
            if app.cancel.is_cancelled(&request.session_id) {
                return None;
            }
            let now = now_ms();
            let provenance = &request.verdict.provenance;
            let approval = Approval {
                id: random_hex(16).ok()?,
                session_id: request.session_id.clone(),
                agent_name: request.agent_name.clone(),
                tool_name: request.call.name.clone(),
                tool_input: request.call.args.clone(),
                cwd: request
                    .settings_file
                    .parent()
                    .and_then(|dir| dir.parent())
                    .map(|dir| dir.display().to_string())
                    .unwrap_or_default(),
                reason: request.verdict.reason(),
                explanation: format!("decided by {}", provenance.layer_step()),
                rules: request.rules.clone(),
                settings_file: request.settings_file.display().to_string(),
                created_ms: now,
                expires_ms: now
                    .saturating_add(i64::try_from(app.approval_timeout.as_millis()).unwrap_or(i64::MAX)),
                state: State::Pending,
                answered_ms: None,
                answered_by: None,
            };
            app.store.insert(&approval).await.ok()?;
            app.telemetry.ask_opened();
            app.emit(
                EventKind::PermissionRequest,
                &approval.session_id,
                app.approval_json(&approval),
            )
            .await;
            // A cancel between the check above and the insert found nothing to cancel: this ask is its to end.
            if app.cancel.is_cancelled(&request.session_id) {
                app.cancel_asks(&request.session_id).await.ok()?;
            }
            loop {
                let woken = app.resolved.notified();
                tokio::pin!(woken);
                woken.as_mut().enable();
                match app.store.get(&approval.id).await.ok()?? {
                    Approval {
                        state: State::Answered(answer),
                        answered_by,
                        ..
                    } => {
                        if let Some(by) = answered_by {
                            self.answered_by.record(&request.call.id, by);
                        }
                        return Some(answer);
                    }
                    Approval {
                        state: State::Expired | State::Cancelled,
                        ..
                    } => return None,
                    Approval {
                        state: State::Pending,
                        ..
                    } => {
                        let _ = tokio::time::timeout(std::time::Duration::from_millis(500), woken).await;
                    }
                }
            }
        })
    }

    fn party(&self, request: &ApprovalRequest) -> agent_hooks::Approver {
        self.answered_by.take(&request.call.id)
    }
}

/// What `POST /v1/sessions` did.
pub(crate) enum Started {
    /// The session runs.
    Running(Box<SessionRow>),
    /// The host gave no runner.
    NoRunner,
    /// The runner refused the body; why.
    Invalid(String),
}

/// What `POST /v1/sessions/{id}/cancel` did.
pub(crate) enum Cancelled {
    /// The session run here was told to stop; the ids of its asks that were waiting, now cancelled.
    Stopping(Box<SessionRow>, Vec<String>),
    /// A coding agent's session (not run here): the ids of its asks that were waiting, now cancelled.
    Asks(Vec<String>),
    /// No session and no ask has this id.
    Unknown,
    /// It is not running (any more), was cancelled before, or runs on another server.
    NotRunning(Box<SessionRow>, &'static str),
    /// A coding agent's session none of whose asks waits any more.
    NothingWaiting,
}

/// Starts a session with the host's runner: its row, its run on a task of its own, its end recorded.
pub(crate) async fn start(app: &Arc<App>, spec: Value) -> Result<Started, sqlx::Error> {
    let Some(runner) = app.runner.get() else {
        return Ok(Started::NoRunner);
    };
    let id = random_hex(16).map_err(|e| sqlx::Error::Protocol(e.to_string()))?;
    let handle = SessionHandle {
        session_id: id.clone(),
        approver: Arc::new(QueueApprover {
            app: Arc::clone(app),
            answered_by: agent_core::AnsweredBy::default(),
        }),
        hook: Arc::new(EventHook { app: Arc::clone(app) }),
        cancel: app.cancel.clone(),
        audit: app.audit.clone(),
        taint: Arc::clone(&app.taint) as Arc<dyn agent_rules::TaintKeeper>,
    };
    let name = spec
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("session")
        .to_owned();
    let run = match runner.start(spec, handle) {
        Ok(run) => run,
        Err(why) => return Ok(Started::Invalid(why)),
    };
    let now = now_ms();
    app.store.insert_session(&id, &name, now).await?;
    running(app).insert(id.clone(), false);
    let task_app = Arc::clone(app);
    let task_id = id.clone();
    tokio::spawn(async move {
        // A run that panics ends its own task; the session is then recorded as failed.
        let (state, summary) = match tokio::spawn(run).await {
            Ok(Ok(summary)) if summary.get("cancelled") == Some(&Value::Bool(true)) => ("cancelled", summary),
            Ok(Ok(summary)) => ("finished", summary),
            Ok(Err(why)) => ("failed", json!({ "error": why })),
            Err(_) => ("failed", json!({ "error": "the session's run panicked" })),
        };
        if let Err(error) = task_app
            .store
            .end_session(&task_id, state, &summary, now_ms())
            .await
        {
            tracing::warn!(%error, session = %task_id, "cannot record the end of a session");
        }
        running(&task_app).remove(&task_id);
        // Nothing decides in the session any more.
        task_app.taint.forget(&task_id);
    });
    Ok(Started::Running(Box::new(SessionRow {
        id,
        name,
        state: "running".to_owned(),
        created_ms: now,
        ended_ms: None,
        summary: None,
    })))
}

/// Cancels a session: one running here stops (Cancel tools stop, Block tools finish, and the runtime stops the
/// session with its `SESSION_STOP` audit row), and the pending asks of any session, run here or a coding agent's,
/// end as cancelled, which answers whoever waits for them with a deny. A session is cancelled once.
pub(crate) async fn cancel(app: &App, id: &str) -> Result<Cancelled, sqlx::Error> {
    let Some(row) = app.store.sessions(Some(id)).await?.into_iter().next() else {
        let asks = app.cancel_asks(id).await?;
        if !asks.is_empty() {
            return Ok(Cancelled::Asks(asks));
        }
        return Ok(if app.store.has_asks(id).await? {
            Cancelled::NothingWaiting
        } else {
            Cancelled::Unknown
        });
    };
    if row.state != "running" {
        return Ok(Cancelled::NotRunning(Box::new(row), "it is not running"));
    }
    match running(app).get_mut(id) {
        None => return Ok(Cancelled::NotRunning(Box::new(row), "it runs on another server")),
        Some(true) => {
            return Ok(Cancelled::NotRunning(
                Box::new(row),
                "it was cancelled before and is stopping",
            ));
        }
        Some(cancelled) => *cancelled = true,
    }
    app.cancel.cancel(id);
    let asks = app.cancel_asks(id).await?;
    Ok(Cancelled::Stopping(Box::new(row), asks))
}

fn running(app: &App) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, bool>> {
    app.running
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A session as the API shows it.
pub(crate) fn session_json(row: &SessionRow) -> Value {
    json!({
        "id": row.id,
        "name": row.name,
        "state": row.state,
        "created_at": crate::app::timestamp(row.created_ms),
        "ended_at": row.ended_ms.map(crate::app::timestamp),
        "summary": row.summary.as_deref().and_then(|s| serde_json::from_str::<Value>(s).ok()),
    })
}
