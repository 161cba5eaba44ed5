//! The HTTP interface: the routes, the bearer-token check, the body limit, and each endpoint's answers.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use agent_core::ApprovalAnswer;
use agent_decide::HookInput;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::Stream;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::app::{App, Enqueued, HOOK_AGENT, now_ms};
use crate::events::Event;
use crate::page;
use crate::sessions::{self, Cancelled, Started, session_json};
use crate::store::{AnswerResult, AuditQuery, State as AskState};
use crate::token::token_matches;

/// The largest request body: a hook input of a real call is far smaller.
pub(crate) const MAX_BODY: usize = 1 << 20;

/// The longest one `GET /v1/approvals/{id}?wait=…` holds the request open; a client waits longer by asking again.
const MAX_WAIT: Duration = Duration::from_secs(30);

/// The routes: the page's files without a token, everything under `/v1/` behind it.
pub(crate) fn router(app: Arc<App>) -> Router {
    let api = Router::new()
        .route("/v1/decide", post(post_decide))
        .route("/v1/approvals", get(list_approvals).post(create_approval))
        .route("/v1/approvals/{id}", get(get_approval).post(answer_approval))
        .route("/v1/queue", get(queue_page))
        .route("/v1/events", get(events))
        .route("/v1/audit", get(audit))
        .route("/v1/sessions", get(list_sessions).post(start_session))
        .route("/v1/sessions/{id}", get(get_session))
        .route("/v1/sessions/{id}/cancel", post(cancel_session))
        .route("/metrics", get(crate::metrics::prometheus))
        .route_layer(middleware::from_fn_with_state(Arc::clone(&app), authorize));
    Router::new()
        .route("/", get(page::index))
        .route("/app.js", get(page::script))
        .route("/app.css", get(page::style))
        .merge(api)
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such endpoint") })
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(app)
}

/// A JSON error: `{"error": "…"}`.
pub(crate) fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

fn database_error(failure: &sqlx::Error) -> Response {
    tracing::error!(error = %failure, "database error");
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        format!("the database failed: {failure}"),
    )
}

/// Every `/v1/` request needs `Authorization: Bearer <token>`.
async fn authorize(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::trim);
    match presented {
        Some(token) if token_matches(token.as_bytes(), app.token.as_bytes()) => next.run(request).await,
        found => {
            let message = if found.is_some() {
                "wrong bearer token"
            } else {
                "missing bearer token: send `Authorization: Bearer <token>`"
            };
            let mut response = error(StatusCode::UNAUTHORIZED, message);
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            response
        }
    }
}

/// A hook input from a request body: the same checks as `check`, with the problem named. A PermissionRequest
/// input carries the same fields and is read as the call it asks about.
fn hook_input(body: &[u8]) -> Result<HookInput, Box<Response>> {
    let bad = |why: String| {
        Box::new(error(
            StatusCode::BAD_REQUEST,
            format!("invalid hook input: {why}"),
        ))
    };
    let text =
        std::str::from_utf8(body).map_err(|e| bad(format!("not UTF-8 text (byte {})", e.valid_up_to())))?;
    if text.trim().is_empty() {
        return Err(bad("the body is empty".to_owned()));
    }
    let mut value: Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    if let Some(object) = value.as_object_mut()
        && object.get("hook_event_name").and_then(Value::as_str) == Some("PermissionRequest")
    {
        object.remove("hook_event_name");
    }
    let input = HookInput::parse(&value.to_string()).map_err(|e| bad(e.to_string()))?;
    if !std::path::Path::new(&input.cwd).is_absolute() {
        return Err(bad(format!("`cwd` is `{}`, not an absolute path", input.cwd)));
    }
    Ok(input)
}

fn json_text(text: String) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], text).into_response()
}

async fn post_decide(State(app): State<Arc<App>>, body: Bytes) -> Response {
    match hook_input(&body) {
        Ok(input) => json_text(app.decide_over_http(input).await.to_json()),
        Err(response) => *response,
    }
}

#[derive(Debug, Deserialize)]
struct CreateQuery {
    agent: Option<String>,
}

async fn create_approval(
    State(app): State<Arc<App>>,
    Query(query): Query<CreateQuery>,
    body: Bytes,
) -> Response {
    let input = match hook_input(&body) {
        Ok(input) => input,
        Err(response) => return *response,
    };
    let agent = query
        .agent
        .filter(|a| !a.is_empty())
        .unwrap_or_else(|| HOOK_AGENT.to_owned());
    match app.enqueue(input, &agent).await {
        Ok(Enqueued::Decided(output)) => (
            StatusCode::OK,
            Json(json!({ "state": "decided", "output": output })),
        )
            .into_response(),
        Ok(Enqueued::Queued(approval)) => {
            (StatusCode::CREATED, Json(app.approval_json(&approval))).into_response()
        }
        Err(e) => database_error(&e),
    }
}

async fn list_approvals(State(app): State<Arc<App>>) -> Response {
    match app.store.pending(now_ms()).await {
        Ok(pending) => {
            let list: Vec<Value> = pending.iter().map(|a| app.approval_json(a)).collect();
            Json(Value::Array(list)).into_response()
        }
        Err(e) => database_error(&e),
    }
}

#[derive(Debug, Deserialize)]
struct WaitQuery {
    /// Seconds to wait for the ask to end before answering with it as it is.
    wait: Option<f64>,
}

async fn get_approval(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Query(query): Query<WaitQuery>,
) -> Response {
    let wait = query
        .wait
        .filter(|w| w.is_finite() && *w > 0.0)
        .map_or(Duration::ZERO, |w| Duration::from_secs_f64(w).min(MAX_WAIT));
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        // Registered before reading, so an answer between the read and the wait still wakes this request.
        let woken = app.resolved.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        let approval = match app.store.get(&id).await {
            Ok(Some(approval)) => approval,
            Ok(None) => return error(StatusCode::NOT_FOUND, format!("no ask has the id `{id}`")),
            Err(e) => return database_error(&e),
        };
        let now = tokio::time::Instant::now();
        if approval.state != AskState::Pending || now >= deadline {
            return Json(app.approval_json(&approval)).into_response();
        }
        // Another server's answer arrives as a notification; the poll is the fallback if one is missed.
        let _ = tokio::time::timeout((deadline - now).min(Duration::from_millis(500)), woken).await;
    }
}

async fn answer_approval(State(app): State<Arc<App>>, Path(id): Path<String>, body: Bytes) -> Response {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        answer: ApprovalAnswer,
        version: Option<String>,
        /// The page's own session (one per page load), sent by the page: the answer is then a page user's.
        #[serde(default)]
        page_session: Option<String>,
    }
    let (answer, version, by) = match serde_json::from_slice::<Body>(&body) {
        Ok(body) => (
            body.answer,
            body.version,
            crate::metrics::answerer(body.page_session),
        ),
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!(
                    "invalid answer: {e}; send {{\"answer\": \"allow_once\" | \"allow_always\" | \"deny\" | \
                     \"dont_ask_again\", \"version\": \"…\"}}"
                ),
            );
        }
    };
    if let Some(version) = version
        && let Some(refused) = refuse_other_version(&app, &id, &version).await
    {
        return refused;
    }
    match app.answer(&id, answer, &by).await {
        Ok(AnswerResult::Taken(approval)) => Json(app.approval_json(&approval)).into_response(),
        Ok(AnswerResult::Unknown) => error(StatusCode::NOT_FOUND, format!("no ask has the id `{id}`")),
        Ok(AnswerResult::AlreadyAnswered(approval)) => error(
            StatusCode::CONFLICT,
            format!("ask `{id}` was already answered: {}", approval.state.as_str()),
        ),
        Ok(AnswerResult::Expired) => error(
            StatusCode::GONE,
            format!("ask `{id}` expired before the answer came: it was denied"),
        ),
        Err(e) => database_error(&e),
    }
}

#[derive(Debug, Deserialize)]
struct EventsQuery {
    session: Option<String>,
}

/// `GET /v1/events`: the events after `Last-Event-ID` that are still kept, then every new one, each an SSE
/// event whose name is its kind, whose id is its number and whose data is its JSON object.
async fn events(
    State(app): State<Arc<App>>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let after = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0);
    let (backlog, receiver) = app.events.follow(after);
    let session = query.session.filter(|s| !s.is_empty());
    let state = (backlog.into_iter(), receiver, after, session);
    let stream = futures_util::stream::unfold(
        state,
        |(mut backlog, mut receiver, mut last, session)| async move {
            loop {
                let event = match backlog.next() {
                    Some(event) => event,
                    None => match receiver.recv().await {
                        Ok(event) => event,
                        // A stream that fell behind ends; the client resumes from its last id.
                        Err(_) => return None,
                    },
                };
                if event.id <= last {
                    continue;
                }
                last = event.id;
                if session.as_ref().is_some_and(|s| *s != event.session) {
                    continue;
                }
                let item = sse_event(&event);
                return Some((Ok(item), (backlog, receiver, last, session)));
            }
        },
    );
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

fn sse_event(event: &Event) -> SseEvent {
    SseEvent::default()
        .id(event.id.to_string())
        .event(event.kind.as_str())
        .data(event.data.to_string())
}

async fn audit(State(app): State<Arc<App>>, Query(query): Query<AuditQuery>) -> Response {
    match app.store.recent_audit(&query).await {
        Ok(rows) => Json(rows).into_response(),
        Err(e) => database_error(&e),
    }
}

async fn start_session(State(app): State<Arc<App>>, body: Bytes) -> Response {
    let spec = match serde_json::from_slice::<Value>(&body) {
        Ok(spec @ Value::Object(_)) => spec,
        Ok(_) => {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid session: the body must be a JSON object",
            );
        }
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("invalid session: {e}")),
    };
    match sessions::start(&app, spec).await {
        Ok(Started::Running(row)) => (StatusCode::CREATED, Json(session_json(&row))).into_response(),
        Ok(Started::NoRunner) => error(StatusCode::NOT_IMPLEMENTED, "this server runs no sessions"),
        Ok(Started::Invalid(why)) => error(StatusCode::BAD_REQUEST, why),
        Err(e) => database_error(&e),
    }
}

async fn list_sessions(State(app): State<Arc<App>>) -> Response {
    match app.store.sessions(None).await {
        Ok(rows) => Json(rows.iter().map(session_json).collect::<Vec<_>>()).into_response(),
        Err(e) => database_error(&e),
    }
}

async fn get_session(State(app): State<Arc<App>>, Path(id): Path<String>) -> Response {
    match app.store.sessions(Some(&id)).await {
        Ok(rows) => match rows.first() {
            Some(row) => Json(session_json(row)).into_response(),
            None => error(StatusCode::NOT_FOUND, format!("no session has the id `{id}`")),
        },
        Err(e) => database_error(&e),
    }
}

async fn cancel_session(State(app): State<Arc<App>>, Path(id): Path<String>) -> Response {
    match sessions::cancel(&app, &id).await {
        Ok(Cancelled::Stopping(row)) => {
            let mut body = session_json(&row);
            if let Some(fields) = body.as_object_mut() {
                fields.insert("state".to_owned(), json!("cancelling"));
            }
            (StatusCode::ACCEPTED, Json(body)).into_response()
        }
        Ok(Cancelled::Unknown) => error(StatusCode::NOT_FOUND, format!("no session has the id `{id}`")),
        Ok(Cancelled::NotRunning(row, why)) => error(
            StatusCode::CONFLICT,
            format!(
                "session `{id}` cannot be cancelled: {why} (state `{}`)",
                row.state
            ),
        ),
        Err(e) => database_error(&e),
    }
}

/// An answer that names a version of the ask other than the stored one was given to something else than the ask:
/// `409` with the stored version. `None` when the versions agree or the ask is unknown (the answer then says so).
async fn refuse_other_version(app: &App, id: &str, version: &str) -> Option<Response> {
    let stored = match app.store.get(id).await {
        Ok(Some(ask)) => ask,
        Ok(None) => return None,
        Err(e) => return Some(database_error(&e)),
    };
    let current = crate::shown::version(&stored);
    (current != version).then(|| {
        let message = format!(
            "the answer names version `{version}` of ask `{id}`, but the ask is at version `{current}`: \
             what was answered is not what the ask holds; show the ask again and answer that"
        );
        (
            StatusCode::CONFLICT,
            Json(json!({ "error": message, "version": current })),
        )
            .into_response()
    })
}

/// The most asks one page of `GET /v1/queue` holds, and how many it holds unless `limit` says otherwise.
const MAX_PAGE: u32 = 500;
const DEFAULT_PAGE: u32 = 100;

#[derive(Debug, Deserialize)]
struct PageQuery {
    after: Option<String>,
    limit: Option<String>,
}

/// `GET /v1/queue[?after=ID][&limit=N]`: one page of the waiting asks, oldest first, with their number and the
/// id of the last event published before the page was read, so a client follows the stream from there without
/// replaying what the page already holds.
async fn queue_page(State(app): State<Arc<App>>, Query(query): Query<PageQuery>) -> Response {
    let limit = match query.limit.as_deref().map(str::parse::<u32>) {
        None => DEFAULT_PAGE,
        Some(Ok(limit)) if limit <= MAX_PAGE => limit,
        Some(_) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("`limit` must be a whole number from 0 to {MAX_PAGE}"),
            );
        }
    };
    // Read first: an event published while the page is read is sent again, never missed.
    let event_id = app.events.last_id();
    let after = match query.after.filter(|a| !a.is_empty()) {
        None => None,
        Some(id) => match app.store.get(&id).await {
            Ok(Some(ask)) => Some(ask),
            Ok(None) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    format!("`after`: no ask has the id `{id}`"),
                );
            }
            Err(e) => return database_error(&e),
        },
    };
    let now = now_ms();
    let (count, page) = match (
        app.store.pending_count(now).await,
        app.store.pending_page(after.as_ref(), limit, now).await,
    ) {
        (Ok(count), Ok(page)) => (count, page),
        (Err(e), _) | (_, Err(e)) => return database_error(&e),
    };
    let next = (page.len() == usize::try_from(limit).unwrap_or(usize::MAX))
        .then(|| page.last().map(|ask| ask.id.clone()))
        .flatten();
    Json(json!({
        "pending": count,
        "asks": page.iter().map(|a| app.approval_json(a)).collect::<Vec<_>>(),
        "next": next,
        "event_id": event_id.to_string(),
    }))
    .into_response()
}
