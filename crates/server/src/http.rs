//! The HTTP interface: the routes, the checks every request passes (its `Host`, its bearer token, its body's size
//! and time), the headers every answer carries, errors as JSON, and each endpoint's answers.

use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use agent_core::ApprovalAnswer;
use agent_decide::HookInput;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, FromRequestParts, Path, Query, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::{FutureExt as _, StreamExt as _};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

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

/// The longest text a query value may be (a session id, a tool's name, an agent's name).
const MAX_QUERY_TEXT: usize = 256;

/// The Content-Security-Policy of every answer but the page's own files (which carry the page's policy): JSON and
/// event streams load nothing and may not be framed.
const API_POLICY: &str = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// The header that carries, on the lists of asks and sessions, the id of the newest event when the list was read:
/// a client that opens `/v1/events` with it as `Last-Event-ID` misses nothing that happened after the list.
const EVENT_ID_HEADER: &str = "x-event-id";

/// Marks the answer to a request that carried the right token: its connection is kept alive. Every other
/// connection is closed after its answer, so a client without the token holds a connection no longer than one
/// request.
#[derive(Debug, Clone, Copy)]
struct Authorized;

/// The routes: the page's files without a token, everything under `/v1/` behind it.
pub(crate) fn router(app: Arc<App>) -> Router {
    let api = Router::new()
        .route("/v1/decide", post(post_decide))
        .route("/v1/approvals", get(list_approvals).post(create_approval))
        .route("/v1/approvals/{id}", get(get_approval).post(answer_approval))
        .route("/v1/approvals/{id}/clear-taint", post(clear_taint))
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
        .fallback(|request: Request| async move {
            error(
                StatusCode::NOT_FOUND,
                format!("no such endpoint: `{}`", request.uri().path()),
            )
        })
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(middleware::from_fn_with_state(Arc::clone(&app), guard))
        .with_state(app)
}

/// What every request passes first and every answer last: a request to a loopback server through a name that is
/// not its own is refused (`421`); an answer that is an error becomes JSON whatever produced it (a panic
/// included, as a `500`); every answer carries `nosniff`, no referrer and a Content-Security-Policy; and the
/// connection of a request without the right token is closed after the answer.
async fn guard(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    if let Some(refused) = wrong_host(&app, request.headers()) {
        return finish(refused);
    }
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let response = match AssertUnwindSafe(next.run(request)).catch_unwind().await {
        Ok(response) => response,
        Err(_) => {
            tracing::error!(%method, %path, "a request's handler panicked");
            error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal error while answering the request",
            )
        }
    };
    finish(json_error(response, &method, &path).await)
}

/// The refusal of a request whose `Host` is not one of a loopback server's names.
fn wrong_host(app: &App, headers: &HeaderMap) -> Option<Response> {
    let hosts = app.hosts.as_ref()?;
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .trim();
    if hosts.iter().any(|name| name.eq_ignore_ascii_case(host)) {
        return None;
    }
    Some(error(
        StatusCode::MISDIRECTED_REQUEST,
        format!(
            "the request is for `{host}`, not this server: a server on loopback answers only to {}",
            hosts.join(", ")
        ),
    ))
}

/// The headers every answer carries.
fn finish(mut response: Response) -> Response {
    let authorized = response.extensions().get::<Authorized>().is_some();
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers
        .entry(header::CONTENT_SECURITY_POLICY)
        .or_insert(HeaderValue::from_static(API_POLICY));
    if !authorized {
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// An error answer that is not JSON (the router's `405`, an extractor's rejection) as `{"error": "…"}`, with the
/// text it had, or the status's meaning when it had none.
async fn json_error(response: Response, method: &Method, path: &str) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 64 << 10)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_owned())
        .unwrap_or_default();
    let message = if status == StatusCode::METHOD_NOT_ALLOWED {
        let allowed = parts
            .headers
            .get(header::ALLOW)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        format!("`{method}` is not allowed on `{path}`; it takes {allowed}")
    } else if text.is_empty() {
        status.canonical_reason().unwrap_or("error").to_lowercase()
    } else {
        text
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Response::from_parts(parts, Body::from(json!({ "error": message }).to_string()))
}

/// The largest declared body read and thrown away before its `413` is answered.
const MAX_DRAINED: usize = 8 * MAX_BODY;

/// Reads the body of an authorized request whole before its handler runs ([`whole_body`]).
async fn read_body(app: &App, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    match whole_body(app, &parts.headers, body).await {
        Ok(bytes) => next.run(Request::from_parts(parts, Body::from(bytes))).await,
        Err(response) => response,
    }
}

/// The body of a request with `headers`, read whole: at most [`MAX_BODY`] (`413` past it), within the header
/// timeout (`408` past it), so a client cannot hold a request open by sending its body slowly.
async fn whole_body(app: &App, headers: &HeaderMap, body: Body) -> Result<Vec<u8>, Response> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<usize>().ok())
        .unwrap_or(0);
    let too_large = || {
        error(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the body is over {} KiB", MAX_BODY >> 10),
        )
    };
    let mut stream = body.into_data_stream();
    if declared > MAX_BODY {
        // A client that sends its whole body before it reads the answer (most do) would find the connection
        // reset under it: a body of a bounded size is read and thrown away first, within the header timeout.
        if declared <= MAX_DRAINED {
            let drain = async { while let Some(Ok(_)) = stream.next().await {} };
            let _elapsed = tokio::time::timeout(app.header_timeout, drain).await;
        }
        return Err(too_large());
    }
    let read = async {
        let mut bytes = Vec::with_capacity(declared);
        while let Some(chunk) = stream.next().await {
            let chunk =
                chunk.map_err(|e| error(StatusCode::BAD_REQUEST, format!("cannot read the body: {e}")))?;
            if bytes.len() + chunk.len() > MAX_BODY {
                return Err(too_large());
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    };
    match tokio::time::timeout(app.header_timeout, read).await {
        Ok(read) => read,
        Err(_) => Err(error(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the body did not arrive within {} s",
                app.header_timeout.as_secs_f64()
            ),
        )),
    }
}

/// A query string read into `T`, or a `400` naming what is wrong with it (a parameter `T` does not know
/// included).
struct Params<T>(T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Params<T> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Query::<T>::try_from_uri(&parts.uri)
            .map(|Query(value)| Self(value))
            .map_err(|rejection| {
                error(
                    StatusCode::BAD_REQUEST,
                    format!("invalid query: {}", rejection.body_text()),
                )
            })
    }
}

/// A `400` when the query value `name` is longer than [`MAX_QUERY_TEXT`] or holds a control character.
fn check_text(name: &str, value: Option<&str>) -> Result<(), Box<Response>> {
    let why = match value {
        Some(text) if text.chars().count() > MAX_QUERY_TEXT => {
            format!("is longer than {MAX_QUERY_TEXT} characters")
        }
        Some(text) if text.chars().any(char::is_control) => "holds a control character".to_owned(),
        _ => return Ok(()),
    };
    Err(Box::new(error(
        StatusCode::BAD_REQUEST,
        format!("invalid query: `{name}` {why}"),
    )))
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

/// Every `/v1/` request needs `Authorization: Bearer <token>`; the body of one that has it is read whole before
/// its handler runs ([`read_body`]).
async fn authorize(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    match presented_token(request.headers()) {
        Some(token) if token_matches(token.as_bytes(), app.token.as_bytes()) => {
            let mut response = read_body(&app, request, next).await;
            response.extensions_mut().insert(Authorized);
            response
        }
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

/// The bearer token of `Authorization: Bearer <token>`, the scheme's name read in any case (`bearer`, `BEARER`),
/// as HTTP's authentication schemes are.
fn presented_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim_start().split_once([' ', '\t']))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
}

/// Whether `POST /v1/decide` may be answered by [`decide_directly`]: a request to it whose `Host` is one of the
/// server's names and that carries the right token (compared in constant time). Any other request goes through the
/// router, whose answer for it (`421`, `401`, `405`…) is then the same as if this path did not exist.
pub(crate) fn takes_directly(app: &App, method: &Method, path: &str, headers: &HeaderMap) -> bool {
    method == Method::POST
        && path == "/v1/decide"
        && wrong_host(app, headers).is_none()
        && presented_token(headers).is_some_and(|token| token_matches(token.as_bytes(), app.token.as_bytes()))
}

/// `POST /v1/decide` of a request that [`takes_directly`] accepted, answered as the router answers it, without its
/// layers: the body read whole within its bounds ([`whole_body`]), a panic answered as a JSON `500` that closes the
/// connection, and the headers every answer carries ([`finish`]). Every answer here is JSON already, so the
/// router's rewriting of other errors has nothing to do.
pub(crate) async fn decide_directly(app: Arc<App>, headers: HeaderMap, body: Body) -> Response {
    let answer = AssertUnwindSafe(async {
        let mut response = match whole_body(&app, &headers, body).await {
            Ok(bytes) => decide_body(&app, &bytes).await,
            Err(response) => response,
        };
        response.extensions_mut().insert(Authorized);
        response
    })
    .catch_unwind()
    .await;
    finish(answer.unwrap_or_else(|_| {
        tracing::error!(method = %Method::POST, path = "/v1/decide", "a request's handler panicked");
        error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error while answering the request",
        )
    }))
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
    // Read once in the common case; a PermissionRequest input is read again without its event name.
    let input = match HookInput::parse(text) {
        Ok(input) => input,
        Err(first) => {
            let mut value: Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
            match value.as_object_mut() {
                Some(object)
                    if object.get("hook_event_name").and_then(Value::as_str) == Some("PermissionRequest") =>
                {
                    object.remove("hook_event_name");
                    HookInput::parse(&value.to_string()).map_err(|e| bad(e.to_string()))?
                }
                _ => return Err(bad(first.to_string())),
            }
        }
    };
    if !std::path::Path::new(&input.cwd).is_absolute() {
        return Err(bad(format!("`cwd` is `{}`, not an absolute path", input.cwd)));
    }
    Ok(input)
}

fn json_text(text: String) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], text).into_response()
}

async fn post_decide(State(app): State<Arc<App>>, body: Bytes) -> Response {
    decide_body(&app, &body).await
}

/// The answer of `POST /v1/decide` with `body`: the hook output, or a `400` naming what is wrong with the input.
async fn decide_body(app: &App, body: &[u8]) -> Response {
    match hook_input(body) {
        Ok(input) => json_text(app.decide_over_http(input).await.to_json()),
        Err(response) => *response,
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateQuery {
    agent: Option<String>,
}

async fn create_approval(
    State(app): State<Arc<App>>,
    Params(query): Params<CreateQuery>,
    body: Bytes,
) -> Response {
    if let Err(response) = check_text("agent", query.agent.as_deref()) {
        return *response;
    }
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
    let newest = event_id_header(&app);
    match app.store.pending(now_ms()).await {
        Ok(pending) => {
            let list: Vec<Value> = pending.iter().map(|a| app.approval_json(a)).collect();
            ([newest], Json(Value::Array(list))).into_response()
        }
        Err(e) => database_error(&e),
    }
}

/// The [`EVENT_ID_HEADER`] of a list read now.
fn event_id_header(app: &App) -> (header::HeaderName, HeaderValue) {
    let id = app.events.id(app.events.newest());
    (
        header::HeaderName::from_static(EVENT_ID_HEADER),
        HeaderValue::from_str(&id).unwrap_or(HeaderValue::from_static("")),
    )
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WaitQuery {
    /// Seconds to wait for the ask to end before answering with it as it is.
    wait: Option<f64>,
}

/// The wait of `?wait=SECONDS`: a number from 0 to [`MAX_WAIT`], else a `400`.
fn wait_of(query: &WaitQuery) -> Result<Duration, Box<Response>> {
    let Some(seconds) = query.wait else {
        return Ok(Duration::ZERO);
    };
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|wait| *wait <= MAX_WAIT)
        .ok_or_else(|| {
            Box::new(error(
                StatusCode::BAD_REQUEST,
                format!(
                    "invalid query: `wait` is {seconds}; give a number of seconds from 0 to {}",
                    MAX_WAIT.as_secs()
                ),
            ))
        })
}

async fn get_approval(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Params(query): Params<WaitQuery>,
) -> Response {
    let wait = match wait_of(&query) {
        Ok(wait) => wait,
        Err(response) => return *response,
    };
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
            match approval.state {
                AskState::Cancelled => format!("ask `{id}` was cancelled with its session"),
                state => format!("ask `{id}` was already answered: {}", state.as_str()),
            },
        ),
        Ok(AnswerResult::Expired) => error(
            StatusCode::GONE,
            format!("ask `{id}` expired before the answer came: it was denied"),
        ),
        Err(e) => database_error(&e),
    }
}

/// `POST /v1/approvals/{id}/clear-taint` with `{"session_id": "…"}`: forgets the taint of the session of ask `id`
/// where it lives (the sessions this server runs: its memory; a coding agent's or `agent-guard agent`'s: the
/// records of the ask's project), once a person has looked at it, and writes the audit row naming who cleared it
/// (`page_session`, as for an answer) and what. The body names the session the person saw, and must be the ask's.
/// The answer is `{"id", "session_id", "cleared", "taint"}`, `cleared` saying whether there was a taint.
async fn clear_taint(State(app): State<Arc<App>>, Path(id): Path<String>, body: Bytes) -> Response {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        session_id: String,
        /// The page's own session: the clearing is then a page user's.
        #[serde(default)]
        page_session: Option<String>,
    }
    let (named, by) = match serde_json::from_slice::<Body>(&body) {
        Ok(body) => (body.session_id, crate::metrics::answerer(body.page_session)),
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("invalid request: {e}; send {{\"session_id\": \"…\"}}, the session of the ask"),
            );
        }
    };
    let ask = match app.store.get(&id).await {
        Ok(Some(ask)) => ask,
        Ok(None) => return error(StatusCode::NOT_FOUND, format!("no ask has the id `{id}`")),
        Err(e) => return database_error(&e),
    };
    if ask.session_id.is_empty() {
        return error(
            StatusCode::CONFLICT,
            format!("ask `{id}` belongs to no session: there is no taint to clear"),
        );
    }
    if ask.session_id != named {
        return error(
            StatusCode::CONFLICT,
            format!(
                "ask `{id}` belongs to session `{}`, not `{named}`: show the ask again",
                ask.session_id
            ),
        );
    }
    match app.clear_taint(&ask, &by).await {
        Ok(cleared) => {
            let cleared = cleared != agent_rules::SessionTaint::default();
            tracing::info!(ask = %id, session = %ask.session_id, cleared, by = %by, "a session's taint was cleared");
            Json(json!({
                "id": id,
                "session_id": ask.session_id,
                "cleared": cleared,
                "taint": app.session_taint(&ask),
            }))
            .into_response()
        }
        Err(why) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the taint of session `{}` was not cleared: {why}", ask.session_id),
        ),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EventsQuery {
    session: Option<String>,
}

/// The state of one event stream between two of its events.
struct Stream {
    app: Arc<App>,
    /// A `resync` event to send before any other.
    resync: Option<SseEvent>,
    backlog: std::vec::IntoIter<Arc<Event>>,
    receiver: tokio::sync::broadcast::Receiver<Arc<Event>>,
    /// The number of the last event sent, or skipped.
    last: u64,
    session: Option<String>,
    stopping: tokio::sync::watch::Receiver<bool>,
}

/// `GET /v1/events`: the events after `Last-Event-ID` that are still kept, then every new one, each an SSE
/// event whose name is its kind, whose id is `INSTANCE-N` and whose data is its JSON object. A `Last-Event-ID` the
/// server cannot continue from (another run's, or one whose successors are no longer kept), and a stream that
/// falls behind, get a `resync` event: the client reads the state again.
async fn events(
    State(app): State<Arc<App>>,
    Params(query): Params<EventsQuery>,
    headers: HeaderMap,
) -> Response {
    if let Err(response) = check_text("session", query.session.as_deref()) {
        return *response;
    }
    let last_event_id = headers.get("last-event-id").and_then(|v| v.to_str().ok());
    let follow = app.events.follow(last_event_id);
    let resync = follow.resync.map(|why| resync_event(&app, follow.after, why));
    let state = Stream {
        resync,
        backlog: follow.backlog.into_iter(),
        receiver: follow.receiver,
        last: follow.after,
        session: query.session.filter(|s| !s.is_empty()),
        stopping: app.stopping.subscribe(),
        app,
    };
    let stream = futures_util::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(resync) = state.resync.take() {
                return Some((Ok::<_, Infallible>(resync), state));
            }
            let event = match state.backlog.next() {
                Some(event) => event,
                None => tokio::select! {
                    received = state.receiver.recv() => match received {
                        Ok(event) => event,
                        Err(RecvError::Lagged(_)) => {
                            // Events this stream did not send are gone: it goes on from the newest one.
                            state.last = state.app.events.newest();
                            state.resync = Some(resync_event(
                                &state.app,
                                state.last,
                                "the stream fell behind and missed events",
                            ));
                            continue;
                        }
                        Err(RecvError::Closed) => return None,
                    },
                    () = crate::server::stopped(&mut state.stopping) => return None,
                },
            };
            if event.id <= state.last {
                continue;
            }
            state.last = event.id;
            if state.session.as_ref().is_some_and(|s| *s != event.session) {
                continue;
            }
            let item = sse_event(&state.app, &event);
            return Some((Ok(item), state));
        }
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

fn sse_event(app: &App, event: &Event) -> SseEvent {
    SseEvent::default()
        .id(app.events.id(event.id))
        .event(event.kind.as_str())
        .data(event.data.to_string())
}

/// The `resync` event: the client must read the asks and sessions again; its id is the newest event's, so that a
/// client resuming from it later misses nothing after it.
fn resync_event(app: &App, newest: u64, why: &str) -> SseEvent {
    SseEvent::default()
        .id(app.events.id(newest))
        .event("resync")
        .data(json!({ "reason": why }).to_string())
}

async fn audit(State(app): State<Arc<App>>, Params(query): Params<AuditQuery>) -> Response {
    for (name, value) in [("session", &query.session), ("tool", &query.tool)] {
        if let Err(response) = check_text(name, value.as_deref()) {
            return *response;
        }
    }
    if let Some(decision) = query
        .decision
        .as_deref()
        .filter(|d| !["", "allow", "ask", "deny"].contains(d))
    {
        return error(
            StatusCode::BAD_REQUEST,
            format!("invalid query: `decision` is `{decision}`; give allow, ask or deny"),
        );
    }
    if let Some(limit) = query.limit.filter(|limit| !(1..=1000).contains(limit)) {
        return error(
            StatusCode::BAD_REQUEST,
            format!("invalid query: `limit` is {limit}; give a number from 1 to 1000"),
        );
    }
    // The rows of the calls answered before this request are committed first: the writer may be gathering them
    // for one commit (its linger).
    if let Err(error) = app.audit.commit_queued().await {
        tracing::warn!(%error, "the audit rows queued were not committed before reading");
    }
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
    let newest = event_id_header(&app);
    match app.store.sessions(None).await {
        Ok(rows) => ([newest], Json(rows.iter().map(session_json).collect::<Vec<_>>())).into_response(),
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
        Ok(Cancelled::Stopping(row, asks)) => {
            let mut body = session_json(&row);
            if let Some(fields) = body.as_object_mut() {
                fields.insert("state".to_owned(), json!("cancelling"));
                fields.insert("cancelled_asks".to_owned(), json!(asks));
            }
            (StatusCode::ACCEPTED, Json(body)).into_response()
        }
        Ok(Cancelled::Asks(asks)) => Json(json!({
            "id": id,
            "state": "cancelled",
            "cancelled_asks": asks,
        }))
        .into_response(),
        Ok(Cancelled::NothingWaiting) => error(
            StatusCode::CONFLICT,
            format!("session `{id}` has no ask waiting: its asks were answered, expired or cancelled before"),
        ),
        Ok(Cancelled::Unknown) => error(
            StatusCode::NOT_FOUND,
            format!("no session and no ask has the session id `{id}`"),
        ),
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
#[serde(deny_unknown_fields)]
struct PageQuery {
    after: Option<String>,
    limit: Option<String>,
}

/// `GET /v1/queue[?after=ID][&limit=N]`: one page of the waiting asks, oldest first, with their number and the
/// id of the last event published before the page was read, so a client follows the stream from there without
/// replaying what the page already holds.
async fn queue_page(State(app): State<Arc<App>>, Params(query): Params<PageQuery>) -> Response {
    if let Err(response) = check_text("after", query.after.as_deref()) {
        return *response;
    }
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
    let event_id = app.events.id(app.events.newest());
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
        "event_id": event_id,
    }))
    .into_response()
}
