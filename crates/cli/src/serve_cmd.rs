//! `agent-guard serve` (the server, deciding as `check` does) and `agent-guard approve` (the coding agent's
//! PermissionRequest hook, answered from the server's queue).

use std::collections::HashMap;
use std::io::Read as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use agent_decide::HookInput;
use agent_hooks::Approver;
use agent_server::{
    Decide, Outcome, ServeConfig, Server, SessionFuture, SessionHandle, SessionRunner, TokenSource,
};
use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::DecideArgs;
use crate::check;
use crate::hook_audit;
use crate::hook_timer::HookTimer;
use crate::load::Guards;
use crate::remote::{self, OnTimeout, RemoteAnswer, RemoteArgs};
use crate::scenario::{Scenario, ScenarioHost, run_scenario_with};

/// How long a project's compiled settings are reused before they are loaded again: a rule a person adds to a
/// settings file takes effect within this time (a rule saved by "allow always" at once).
const SETTINGS_TTL: Duration = Duration::from_secs(1);

// `agent-guard serve`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ServeArgs {
    /// The address to listen on. Any address but loopback needs an explicit token.
    #[arg(long, value_name = "ADDR", default_value = agent_server::DEFAULT_LISTEN)]
    listen: SocketAddr,
    /// The database of the approval queue and the audit log: a SQLite file, a `sqlite:` URL, or a `postgres://`
    /// URL that several servers share.
    #[arg(long, value_name = "PATH|URL", default_value = ".agent-guard/server.db")]
    db: agent_hooks::AuditDatabase,
    /// The bearer token clients must send (else `AGENT_GUARD_TOKEN`, else one generated on the first start and
    /// kept with mode 0600 in `.agent-guard/server-token`).
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    /// How long an ask waits for an answer before it is denied, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = agent_core::DEFAULT_APPROVAL_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..=86_400))]
    approval_timeout: u64,
    /// How long a connection may take to send a request's headers (and its body), counted from its opening or
    /// from the previous answer; a connection idle that long is closed too.
    #[arg(long, value_name = "SECONDS", default_value_t = agent_server::DEFAULT_HEADER_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..=300))]
    header_timeout: u64,
    #[command(flatten)]
    decide: DecideArgs,
}

// `agent-guard approve`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ApproveArgs {
    #[command(flatten)]
    remote: RemoteArgs,
}

pub(crate) fn serve(args: &ServeArgs) -> Result<ExitCode> {
    let state_dir = PathBuf::from(".agent-guard");
    let env_token = std::env::var("AGENT_GUARD_TOKEN").ok();
    let (token, source) = agent_server::resolve_token(
        args.token.as_deref(),
        env_token.as_deref(),
        &state_dir,
        args.listen,
    )?;
    let decider = CliDecider::new(args.decide.clone())?;
    let config = ServeConfig {
        listen: args.listen,
        db: args.db.clone(),
        token: token.clone(),
        approval_timeout: Duration::from_secs(args.approval_timeout),
        header_timeout: Duration::from_secs(args.header_timeout),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let server = Server::bind(config, Arc::new(decider))
            .await?
            .with_sessions(Arc::new(ScenarioRunner));
        if let Some(export) = crate::telemetry::serve_config(&std::env::current_dir().unwrap_or_default())
            && let Err(error) = server.export_to(&export)
        {
            eprintln!("agent-guard serve: no telemetry: {error}");
        }
        let address = server.local_addr().unwrap_or(args.listen);
        // The token itself is printed once, when it is made: later starts say where it is kept.
        let token_line = match source {
            TokenSource::Flag => "token: from --token".to_owned(),
            TokenSource::Environment => "token: from AGENT_GUARD_TOKEN".to_owned(),
            TokenSource::Stored => format!(
                "token: read from {}",
                state_dir.join(agent_server::TOKEN_FILE).display()
            ),
            TokenSource::Generated => format!(
                "token (generated, kept in {}): {token}\nopen http://{address}/#token={token}",
                state_dir.join(agent_server::TOKEN_FILE).display()
            ),
        };
        crate::emit(&format!(
            "agent-guard serve: listening on http://{address}/ (database {}, asks expire after {} s)\n{token_line}",
            args.db, args.approval_timeout
        ))?;
        server
            .run(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        anyhow::Ok(ExitCode::SUCCESS)
    })
}

/// Decides like `check`: settings discovered for each input's `cwd` (and `--settings`, `--mode`), one bounded
/// decision per input. Compiled settings are shared by the requests of one project for [`SETTINGS_TTL`].
struct CliDecider {
    guards: Mutex<(Guards<'static>, HashMap<String, Instant>)>,
    settings: Vec<PathBuf>,
}

impl CliDecider {
    fn new(args: DecideArgs) -> Result<Self> {
        let guards = Guards::owning(args)?;
        let settings = guards.settings_files().to_vec();
        Ok(Self {
            guards: Mutex::new((guards, HashMap::new())),
            settings,
        })
    }
}

impl Decide for CliDecider {
    fn decide_hook_input(&self, input: &HookInput, explain: bool) -> Outcome {
        let guard = {
            let mut held = self.guards.lock().unwrap_or_else(PoisonError::into_inner);
            let (guards, loaded) = &mut *held;
            let at = loaded.entry(input.cwd.clone()).or_insert_with(Instant::now);
            if at.elapsed() > SETTINGS_TTL {
                guards.forget(&input.cwd);
                *at = Instant::now();
            }
            guards.get(&input.cwd, input.permission_mode.as_deref()).clone()
        };
        match guard {
            Ok(guard) => {
                let (output, decided) = check::decide_with_guard(guard, input, &self.settings);
                let explanation = if explain {
                    crate::explain::render_text(input, &decided)
                } else {
                    String::new()
                };
                Outcome {
                    output,
                    decided: Some(decided),
                    explanation,
                }
            }
            Err(why) => Outcome {
                output: check::settings_deny_output(&why),
                decided: None,
                explanation: String::new(),
            },
        }
    }

    fn settings_changed(&self, cwd: &Path) {
        let mut held = self.guards.lock().unwrap_or_else(PoisonError::into_inner);
        held.0.forget(&cwd.to_string_lossy());
        held.1.remove(&*cwd.to_string_lossy());
    }

    /// The runs of the roots the sandbox of `cwd`'s settings may write that name the ask.
    fn undo_runs(&self, cwd: &Path, ask: &str) -> Vec<agent_server::UndoRun> {
        let guard = {
            let mut held = self.guards.lock().unwrap_or_else(PoisonError::into_inner);
            held.0.get(&cwd.to_string_lossy(), None).clone()
        };
        guard.map_or_else(|_| Vec::new(), |guard| crate::undo_cmd::runs_of_ask(&guard, ask))
    }

    /// The records `check` and `/v1/decide` keep for the sessions in the project of `cwd` (`agent-guard agent`
    /// keeps its session's there too).
    fn taint_keeper(&self, cwd: &Path) -> Result<Arc<dyn agent_rules::TaintKeeper>, String> {
        crate::taint_store::TaintStore::for_cwd(cwd)
            .map(|store| Arc::new(store) as Arc<dyn agent_rules::TaintKeeper>)
            .ok_or_else(|| {
                format!(
                    "`{}` is no project and there is no home directory: no session is kept there",
                    cwd.display()
                )
            })
    }
}

/// Runs the sessions of `POST /v1/sessions`: the body is a scenario file's content (the format of `agent-guard
/// run`), run in a temporary workspace through the runtime, with the server's approver for the asks the scenario
/// does not answer, its event hook, its cancellation registry and its audit log.
struct ScenarioRunner;

impl SessionRunner for ScenarioRunner {
    fn start(&self, spec: Value, handle: SessionHandle) -> Result<SessionFuture, String> {
        let name = spec
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("session")
            .to_owned();
        let scenario = Scenario::parse(&name, &spec.to_string()).map_err(|e| format!("{e:#}"))?;
        let root = tempfile::tempdir().map_err(|e| format!("cannot make a workspace: {e}"))?;
        Ok(Box::pin(async move {
            let host = ScenarioHost {
                hooks: vec![handle.hook],
                cancel: Some(handle.cancel),
                taint: Some(handle.taint),
            };
            let run = run_scenario_with(
                &scenario,
                root.path(),
                Some(handle.audit),
                Some(handle.approver),
                &handle.session_id,
                host,
            )
            .await
            .map_err(|e| format!("{e:#}"))?;
            let (report, _workspace) = run;
            // The workspace goes with the session.
            drop(root);
            Ok(json!({
                "answer": report.answer,
                "reason": report.reason,
                "cancelled": report.cancelled,
                "steps": report.steps.len(),
                "calls": report.calls().count(),
                "stop_error": report.stop_error,
            }))
        }))
    }
}

/// `agent-guard approve`: reads the coding agent's PermissionRequest input, puts the call to the server's queue
/// and prints the person's answer in the coding agent's format for that event. No answer in time, or no server,
/// prints nothing (the coding agent shows its own prompt), unless `--on-timeout deny`.
pub(crate) fn approve(args: &ApproveArgs) -> Result<ExitCode> {
    let Some(server) = &args.remote.server else {
        return Err(
            crate::UsageError("`approve` needs `--server URL` or `AGENT_GUARD_SERVER`".to_owned()).into(),
        );
    };
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(check::MAX_INPUT as u64 + 1)
        .read_to_end(&mut bytes)
        .context("cannot read the PermissionRequest input from stdin")?;
    let input: Value = serde_json::from_slice(&bytes).context("invalid PermissionRequest input")?;
    let started = Instant::now();
    let session = input
        .get("session_id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let hook = Approver::ApproveHook {
        session: session.clone(),
    };
    let coding_agent = Approver::CodingAgent { session };
    let (allow, message, answered_by, approver) = match remote::ask_person(server, &input, "hook") {
        RemoteAnswer::Decided {
            allow,
            reason,
            answered_by,
            ..
        } => (
            allow,
            reason,
            format!("a person, through the agent-guard server {server}"),
            answered_by.map_or(Approver::Api, Approver::Other),
        ),
        RemoteAnswer::Expired if args.remote.on_timeout == OnTimeout::Deny => (
            false,
            "agent-guard: nobody answered the ask on the agent-guard server in time (--on-timeout deny)"
                .to_owned(),
            "agent-guard approve, --on-timeout deny".to_owned(),
            hook,
        ),
        RemoteAnswer::Unreachable(why) if args.remote.on_timeout == OnTimeout::Deny => (
            false,
            format!("agent-guard: the agent-guard server cannot be asked ({why}; --on-timeout deny)"),
            "agent-guard approve, --on-timeout deny".to_owned(),
            hook,
        ),
        RemoteAnswer::Expired => {
            let why = "nobody answered on the agent-guard server in time";
            record_answer(
                &input,
                None,
                why,
                "the coding agent's own prompt",
                &coding_agent,
                started,
            );
            return Ok(ExitCode::SUCCESS);
        }
        RemoteAnswer::Unreachable(why) => {
            eprintln!("agent-guard: {why}; the coding agent asks instead");
            let why = format!("the agent-guard server cannot be asked: {why}");
            record_answer(
                &input,
                None,
                &why,
                "the coding agent's own prompt",
                &coding_agent,
                started,
            );
            return Ok(ExitCode::SUCCESS);
        }
    };
    let decision = if allow {
        json!({ "behavior": "allow" })
    } else {
        json!({ "behavior": "deny", "message": message })
    };
    crate::emit(
        &json!({ "hookSpecificOutput": { "hookEventName": "PermissionRequest", "decision": decision } })
            .to_string(),
    )?;
    crate::hook_timer::close_stdout();
    record_answer(&input, Some(allow), &message, &answered_by, &approver, started);
    Ok(ExitCode::SUCCESS)
}

/// The audit row of an answer that reached the PermissionRequest hook: `allow` (`None`: no answer, the coding
/// agent asks itself), why, and who or what answered (in words, and as the party the `approver` column names).
/// Written after the answer is out, in the call's project.
fn record_answer(
    input: &Value,
    allow: Option<bool>,
    why: &str,
    answered_by: &str,
    approver: &Approver,
    started: Instant,
) {
    let text = |key: &str| input.get(key).and_then(Value::as_str).unwrap_or_default();
    let cwd = match text("cwd") {
        "" => std::env::current_dir()
            .map(|dir| dir.display().to_string())
            .unwrap_or_default(),
        cwd => cwd.to_owned(),
    };
    let null = Value::Null;
    let call = hook_audit::Call {
        session_id: text("session_id"),
        cwd: &cwd,
        tool_name: text("tool_name"),
        tool_input: input.get("tool_input").unwrap_or(&null),
        tool_use_id: None,
    };
    let (decision, decided_by) = match allow {
        Some(true) => ("allow", "approval/approver"),
        Some(false) if answered_by.starts_with("a person") => ("deny", "approval/approver"),
        Some(false) => ("deny", "approval/no-prompt"),
        None => ("ask", "approval"),
    };
    let reason = format!(
        "answered by {answered_by}: {}",
        why.trim_start_matches("agent-guard: ")
    );
    let mode = input.get("permission_mode").and_then(Value::as_str);
    let detail = agent_hooks::AuditDetail {
        approver: Some(approver.to_string()),
        ..agent_hooks::AuditDetail::default()
    };
    let answer = hook_audit::Answer {
        decision,
        reason: &reason,
        decided_by,
        mode,
        elapsed: started.elapsed(),
        detail: &detail,
        recorded: false,
    };
    let row = answer.row(&call, hook_audit::APPROVE_AGENT);
    let mut timer = HookTimer::unarmed();
    hook_audit::record_one(call, &row, &mut timer);
    if let Some(settings) = crate::telemetry::settings_of(Path::new(call.cwd)).filter(|t| t.enabled) {
        crate::telemetry::hand_off(&settings, std::slice::from_ref(&row));
    }
}
