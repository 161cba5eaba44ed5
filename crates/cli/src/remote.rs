//! The client side of `agent-guard serve`: `check --server` and `approve` put an ask to the server's queue and
//! wait for a person's answer.

use std::time::{Duration, Instant};

use serde_json::Value;

/// How long a client waits for an answer at most, whatever the server's approval timeout: the server denies an
/// ask at its expiry ([`agent_core::DEFAULT_APPROVAL_TIMEOUT`] unless `--approval-timeout` says otherwise), and this only bounds a server that never
/// does. The hook's `timeout` in the coding agent's settings must be longer than the server's expiry.
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(15 * 60);

/// Each wait request asks the server to hold it this long.
const POLL: Duration = Duration::from_secs(25);

/// How long the server may stay unreachable in the middle of a wait before the client gives up.
const RECONNECT_FOR: Duration = Duration::from_secs(10);

/// What to print when no answer comes: `ask` lets the coding agent ask in its terminal; `deny` blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum OnTimeout {
    /// Let the coding agent ask in its terminal.
    Ask,
    /// Deny the call.
    Deny,
}

// `--server` and `--on-timeout` of `check` and `approve`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct RemoteArgs {
    /// Put asks to the approval queue of `agent-guard serve` at this URL and wait for a person's answer (the
    /// token comes from `AGENT_GUARD_TOKEN`).
    #[arg(long, value_name = "URL", env = "AGENT_GUARD_SERVER")]
    pub(crate) server: Option<String>,
    /// What an ask becomes when the server does not answer before the ask expires, or cannot be reached.
    #[arg(long, value_name = "WHAT", value_enum, default_value = "ask")]
    pub(crate) on_timeout: OnTimeout,
}

/// How an ask put to the server ended.
#[derive(Debug)]
pub(crate) enum RemoteAnswer {
    /// A decision: `allow` or `deny`, with its reason.
    Decided {
        /// `allow` or `deny`.
        allow: bool,
        /// Why, as the server says it.
        reason: String,
        /// Who answered, as the server recorded it (`page:<session>`, `api`).
        answered_by: Option<String>,
        /// The ask's id on the server (`None` when the server decided without queueing an ask).
        ask: Option<String>,
    },
    /// Nobody answered before the ask expired.
    Expired,
    /// The server could not be reached or refused the request; why.
    Unreachable(String),
}

/// Puts the call of `input` (a hook input as JSON) to the queue of `server` and waits for its end.
pub(crate) fn ask_person(server: &str, input: &Value, agent: &str) -> RemoteAnswer {
    match ask(server, input, agent) {
        Ok(answer) => answer,
        Err(why) => RemoteAnswer::Unreachable(why),
    }
}

fn ask(server: &str, input: &Value, agent: &str) -> Result<RemoteAnswer, String> {
    let base = server.trim_end_matches('/');
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(format!("`{server}` is not an http:// or https:// URL"));
    }
    let token = std::env::var("AGENT_GUARD_TOKEN").unwrap_or_default();
    let client = reqwest::blocking::Client::builder()
        .connect_timeout(Duration::from_secs(3))
        .timeout(POLL + Duration::from_secs(10))
        .build()
        .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
    let created = client
        .post(format!("{base}/v1/approvals"))
        .query(&[("agent", agent)])
        .bearer_auth(&token)
        .json(input)
        .send()
        .map_err(|e| format!("cannot reach `{base}`: {e}"))?;
    let status = created.status();
    let body: Value = created
        .json()
        .map_err(|e| format!("`{base}` answered with something that is not JSON: {e}"))?;
    if !status.is_success() {
        return Err(format!("`{base}` answered {status}: {}", error_text(&body)));
    }
    if body.get("state").and_then(Value::as_str) == Some("decided") {
        return ended(&body);
    }
    let id = body
        .get("id")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("`{base}` answered without an ask id"))?
        .to_owned();
    let started = Instant::now();
    let mut unreachable_since: Option<Instant> = None;
    while started.elapsed() < MAX_WAIT {
        let response = client
            .get(format!("{base}/v1/approvals/{id}"))
            .query(&[("wait", POLL.as_secs().to_string())])
            .bearer_auth(&token)
            .send();
        let response = match response {
            Ok(response) => response,
            Err(e) => {
                // The ask stays in the queue while the server restarts: try again for a while.
                let since = *unreachable_since.get_or_insert_with(Instant::now);
                if since.elapsed() > RECONNECT_FOR {
                    return Err(format!("lost `{base}` while waiting: {e}"));
                }
                std::thread::sleep(Duration::from_millis(500));
                continue;
            }
        };
        unreachable_since = None;
        let status = response.status();
        let body: Value = response
            .json()
            .map_err(|e| format!("`{base}` answered with something that is not JSON: {e}"))?;
        if !status.is_success() {
            return Err(format!("`{base}` answered {status}: {}", error_text(&body)));
        }
        match body.get("state").and_then(Value::as_str) {
            Some("pending") => continue,
            Some("expired") => return Ok(RemoteAnswer::Expired),
            _ => return ended(&body),
        }
    }
    Ok(RemoteAnswer::Expired)
}

/// The decision in the `output` of an ended ask.
fn ended(body: &Value) -> Result<RemoteAnswer, String> {
    let specific = body.pointer("/output/hookSpecificOutput");
    let field = |name: &str| {
        specific
            .and_then(|s| s.get(name))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let reason = field("permissionDecisionReason");
    let answered_by = body.get("answered_by").and_then(Value::as_str).map(str::to_owned);
    // An ask the server queued has a state other than `decided` (a decision without a person has no ask).
    let ask = body
        .get("state")
        .and_then(Value::as_str)
        .filter(|state| *state != "decided")
        .and(body.get("id"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    match field("permissionDecision").as_str() {
        "allow" => Ok(RemoteAnswer::Decided {
            allow: true,
            reason,
            answered_by,
            ask,
        }),
        "deny" => Ok(RemoteAnswer::Decided {
            allow: false,
            reason,
            answered_by,
            ask,
        }),
        other => Err(format!("the server's answer has the decision `{other}`")),
    }
}

fn error_text(body: &Value) -> String {
    body.get("error")
        .and_then(Value::as_str)
        .map_or_else(|| body.to_string(), str::to_owned)
}

/// Why a server did not answer a probe.
#[derive(Debug)]
pub(crate) enum ProbeError {
    /// It answered, but refused the request (the token, most likely).
    Refused(String),
    /// It could not be reached, or answered something else than the API.
    Unreachable(String),
}

/// Asks `server` for its pending asks with the token of `AGENT_GUARD_TOKEN`; their number.
pub(crate) fn probe(server: &str) -> Result<usize, ProbeError> {
    let base = server.trim_end_matches('/');
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(ProbeError::Unreachable(format!(
            "`{server}` is not an http:// or https:// URL"
        )));
    }
    let client = reqwest::blocking::Client::builder()
        .connect_timeout(Duration::from_secs(3))
        .timeout(Duration::from_secs(5))
        .build()
        .map_err(|e| ProbeError::Unreachable(e.to_string()))?;
    let response = client
        .get(format!("{base}/v1/approvals"))
        .bearer_auth(std::env::var("AGENT_GUARD_TOKEN").unwrap_or_default())
        .send()
        .map_err(|e| ProbeError::Unreachable(e.to_string()))?;
    let status = response.status();
    let body: Value = response.json().unwrap_or(Value::Null);
    if status.is_client_error() {
        return Err(ProbeError::Refused(format!("{status}: {}", error_text(&body))));
    }
    if !status.is_success() {
        return Err(ProbeError::Unreachable(format!(
            "{status}: {}",
            error_text(&body)
        )));
    }
    body.as_array()
        .map(Vec::len)
        .ok_or_else(|| ProbeError::Unreachable("the answer is not a list of asks".to_owned()))
}

/// The runtime's approver when `agent-guard agent --server URL` is given: each ask goes to the server's queue as the
/// hook input of the call, and the person's answer decides it. The server records the answer and saves an "allow
/// always" rule itself, so an allow here is an allow of this call. No answer (the ask expired, the server cannot be
/// reached) is no answer, which the runtime takes as a deny.
pub(crate) struct RemoteApprover {
    /// The server's URL.
    pub(crate) server: String,
    /// The session's working directory, as the hook input's `cwd`.
    pub(crate) cwd: std::path::PathBuf,
    /// The permission mode the session runs in, when one is given.
    pub(crate) mode: Option<String>,
    /// Who answered each call's ask (by call id), as the server recorded it, for `Approver::party`.
    pub(crate) answered_by: std::sync::Arc<agent_core::AnsweredBy>,
}

impl agent_core::Approver for RemoteApprover {
    fn party(&self, request: &agent_core::ApprovalRequest) -> agent_hooks::Approver {
        self.answered_by.take(&request.call.id)
    }

    fn approve<'a>(
        &'a self,
        request: &'a agent_core::ApprovalRequest,
    ) -> agent_core::ApprovalFuture<'a, Option<agent_core::ApprovalAnswer>> {
        let input = serde_json::json!({
            "session_id": request.session_id,
            "hook_event_name": "PreToolUse",
            "cwd": self.cwd,
            "permission_mode": self.mode,
            "tool_name": request.call.name,
            "tool_input": request.call.args,
        });
        let server = self.server.clone();
        let agent = request.agent_name.clone();
        let answered_by = std::sync::Arc::clone(&self.answered_by);
        let call = request.call.id.clone();
        Box::pin(async move {
            let asked = tokio::task::spawn_blocking(move || ask_person(&server, &input, &agent)).await;
            if let Ok(RemoteAnswer::Decided {
                answered_by: Some(by),
                ..
            }) = &asked
            {
                answered_by.record(&call, by.clone());
            }
            match asked {
                Ok(RemoteAnswer::Decided { allow: true, .. }) => Some(agent_core::ApprovalAnswer::AllowOnce),
                Ok(RemoteAnswer::Decided { allow: false, .. }) => Some(agent_core::ApprovalAnswer::Deny),
                Ok(RemoteAnswer::Expired) => {
                    eprintln!("agent-guard: nobody answered the ask in time; the call is not run");
                    None
                }
                Ok(RemoteAnswer::Unreachable(why)) => {
                    eprintln!(
                        "agent-guard: the ask could not be put to the server ({why}); the call is not run"
                    );
                    None
                }
                Err(_) => None,
            }
        })
    }
}
