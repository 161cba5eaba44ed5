//! `GET /metrics`: the server's counts of decisions, answers and asks in Prometheus' text format, behind the token
//! like every other endpoint but the page's files; and who an answer over HTTP comes from.

use std::sync::Arc;

use agent_hooks::Approver;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use crate::app::App;

/// The counts as Prometheus text (crates/telemetry's `Tally`: decisions by outcome and layer, answers by outcome
/// and approver, asks pending, answer latency, telemetry records dropped).
pub(crate) async fn prometheus(State(app): State<Arc<App>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        app.telemetry.tally().prometheus_text(),
    )
        .into_response()
}

/// Who answered an ask over `POST /v1/approvals/{id}`: a page user when the page sent its session, else an API
/// client (the token says the caller may answer, not who it is).
pub(crate) fn answerer(page_session: Option<String>) -> Approver {
    match page_session.map(|s| s.trim().chars().take(64).collect::<String>()) {
        Some(session) if !session.is_empty() => Approver::Page { session },
        Some(_) | None => Approver::Api,
    }
}
