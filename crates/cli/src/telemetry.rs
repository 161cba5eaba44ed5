//! Telemetry of the commands: the hook hands its rows to a sender process it does not wait for; `agent`, `run`,
//! `demo` and `serve` export every row their audit log sees, through agent-telemetry.
//!
//! Design: the coding agent waits for the hook's process, so the hook must not wait for a collector. It starts
//! `agent-guard telemetry-send` (hidden) in a process group of its own, writes the records to its stdin and exits;
//! the sender exports them with the OTLP client's own timeouts and stops within [`SEND_DEADLINE`]. Starting it costs
//! the hook a `posix_spawn` and one pipe write (docs/PERFORMANCE.md), whatever the collector does: one that is down
//! or hangs delays only the sender. The audit row is written before, and does not depend on it.

use std::io::{BufRead as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::Duration;

use agent_core::{ApprovalAnswer, ApprovalFuture, ApprovalRequest, Approver};

use agent_decide::TelemetrySettings;
use agent_hooks::{AuditLogHook, AuditRow};
use agent_telemetry::{ExportConfig, Record, Telemetry};
use anyhow::Result;

/// The hidden subcommand the hook hands its records to.
pub(crate) const SEND_COMMAND: &str = "telemetry-send";

/// How long the sender may spend sending what it was given, past the OTLP client's own timeout per request.
const SEND_DEADLINE: Duration = Duration::from_secs(15);

/// How long a long-lived command (`agent`, `run`, `serve`) spends at its end sending what is queued.
pub(crate) const EXIT_DEADLINE: Duration = Duration::from_secs(3);

/// `agentGuard.telemetry` of the settings of `dir`'s project (the user's settings turn it on; the project's can
/// turn it off); `None` when the settings do not load (the command reports that itself, where it matters).
pub(crate) fn settings_of(dir: &Path) -> Option<TelemetrySettings> {
    let project = crate::load::project(dir);
    let args = crate::DecideArgs {
        settings: Vec::new(),
        mode: None,
        auto_allow: None,
    };
    let settings = crate::load::settings(&project, &args).ok()?;
    agent_decide::GuardSettings::from_settings(&settings)
        .ok()
        .map(|guard| guard.telemetry)
}

/// Exports every row `audit` sees from now on, when `settings` turn telemetry on: the handle to shut down at the
/// end. A collector that cannot be configured is reported on stderr; the command goes on without telemetry.
pub(crate) fn attach(audit: &AuditLogHook, settings: Option<&TelemetrySettings>) -> Option<Telemetry> {
    let settings = settings.filter(|s| s.enabled)?;
    let telemetry = Telemetry::local();
    let config = ExportConfig {
        endpoint: settings.endpoint.clone(),
        delta: false,
        metrics_interval: None,
    };
    if let Err(error) = telemetry.export_to(&config) {
        eprintln!("agent-guard: no telemetry: {error}");
        return None;
    }
    let _first = audit.observe_with(std::sync::Arc::new(telemetry.clone()));
    Some(telemetry)
}

/// The exporter configuration `serve` starts with, when the settings of its directory turn telemetry on.
pub(crate) fn serve_config(dir: &Path) -> Option<ExportConfig> {
    let settings = settings_of(dir).filter(|s| s.enabled)?;
    Some(ExportConfig {
        endpoint: settings.endpoint,
        delta: false,
        metrics_interval: None,
    })
}

/// Hands `rows` to a sender process and returns at once; a sender that cannot be started is reported on stderr
/// and changes nothing else.
pub(crate) fn hand_off(settings: &TelemetrySettings, rows: &[AuditRow]) {
    let mut sender = Sender::default();
    for row in rows {
        sender.send(settings, row);
    }
    sender.finish();
}

/// One sender process for a run (`check --jsonl` hands every batch's rows to the same one), started with the first
/// record.
#[derive(Default)]
pub(crate) struct Sender {
    child: Option<(Child, ChildStdin)>,
    failed: bool,
}

impl Sender {
    /// Writes `row`'s record to the sender, starting it first (with `settings`' endpoint) if needed.
    pub(crate) fn send(&mut self, settings: &TelemetrySettings, row: &AuditRow) {
        if self.failed {
            return;
        }
        if self.child.is_none() {
            match start(settings) {
                Ok(child) => self.child = Some(child),
                Err(why) => {
                    self.failed = true;
                    eprintln!("agent-guard: no telemetry: {why}; the decision stands");
                    return;
                }
            }
        }
        // Redacted by the sender: the redaction's patterns are not compiled in the hook.
        let Ok(line) = serde_json::to_string(&Record::unredacted(row)) else {
            return;
        };
        if let Some((_, stdin)) = &mut self.child
            && writeln!(stdin, "{line}").is_err()
        {
            // The sender is gone: its records are lost, never the decision.
            self.failed = true;
        }
    }

    /// Closes the sender's input; it sends and exits on its own. Not waited for: the hook exits next and the
    /// sender is adopted by init.
    pub(crate) fn finish(self) {
        drop(self.child.map(|(child, stdin)| {
            drop(stdin);
            child
        }));
    }
}

/// Starts `agent-guard telemetry-send` with its input piped and its output discarded, in a process group of its
/// own, so that nothing the coding agent waits on (the hook's stdout and stderr, its process group) waits for it.
fn start(settings: &TelemetrySettings) -> Result<(Child, ChildStdin), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the agent-guard binary: {e}"))?;
    let mut command = Command::new(exe);
    command
        .arg(SEND_COMMAND)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    if let Some(endpoint) = &settings.endpoint {
        command.arg("--endpoint").arg(endpoint);
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start the telemetry sender: {e}"))?;
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| "the telemetry sender has no input".to_owned())?;
    Ok((child, stdin))
}

/// `agent-guard telemetry-send [--endpoint URL]`: exports the records on stdin (one JSON object a line, as the hook
/// writes them) and exits within [`SEND_DEADLINE`] of the end of its input.
pub(crate) fn send(endpoint: Option<String>) -> Result<ExitCode> {
    let telemetry = Telemetry::local();
    telemetry.export_to(&ExportConfig {
        endpoint,
        delta: true,
        metrics_interval: None,
    })?;
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if let Ok(record) = serde_json::from_str::<Record>(&line) {
            telemetry.observe_record(&record.redacted());
        }
    }
    telemetry.shutdown(SEND_DEADLINE);
    Ok(ExitCode::SUCCESS)
}

/// An approver whose asks count as pending (`agent_guard.asks.pending`) while they wait for the person: the
/// runtime's asks (`agent`, `demo --interactive`) are put to a terminal or a server, and the gauge shows how many
/// of them wait, as `serve`'s do.
pub(crate) struct CountedAsks {
    inner: Arc<dyn Approver>,
    telemetry: Telemetry,
}

impl CountedAsks {
    /// `inner`, counted in `telemetry` when there is one; `inner` itself otherwise.
    pub(crate) fn wrap(inner: Arc<dyn Approver>, telemetry: Option<&Telemetry>) -> Arc<dyn Approver> {
        match telemetry {
            Some(telemetry) => Arc::new(Self {
                inner,
                telemetry: telemetry.clone(),
            }),
            None => inner,
        }
    }
}

/// An ask counted as pending until dropped: an answer, an error and a cancelled wait all close it.
struct Pending<'a>(&'a Telemetry);

impl<'a> Pending<'a> {
    fn open(telemetry: &'a Telemetry) -> Self {
        telemetry.ask_opened();
        Self(telemetry)
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        self.0.ask_closed();
    }
}

impl Approver for CountedAsks {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a, Option<ApprovalAnswer>> {
        Box::pin(async move {
            let _pending = Pending::open(&self.telemetry);
            self.inner.approve(request).await
        })
    }

    fn party(&self, request: &ApprovalRequest) -> agent_hooks::Approver {
        self.inner.party(request)
    }

    fn answer_question<'a>(&'a self, question: &'a str) -> ApprovalFuture<'a, Option<String>> {
        self.inner.answer_question(question)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::ChannelApprover;
    use agent_tool_traits::{Decision, Layer, Provenance, ToolCall, Verdict};

    #[tokio::test]
    async fn an_ask_counts_as_pending_until_it_is_answered_or_dropped() {
        let telemetry = Telemetry::local();
        let (channel, mut asks) = ChannelApprover::new(4);
        let approver = CountedAsks::wrap(Arc::new(channel), Some(&telemetry));
        let request = ApprovalRequest {
            session_id: "s".to_owned(),
            agent_name: "lead".to_owned(),
            call: ToolCall::new("1", "Bash", serde_json::json!({"command": "git push"})),
            verdict: Verdict::new(Decision::Ask, "pushes", Provenance::layer(Layer::Bash)),
            rules: Vec::new(),
            settings_file: std::path::PathBuf::from("/p/.agent-guard/settings.local.json"),
        };
        let waiting = approver.approve(&request);
        let answering = async {
            let pending = asks.recv().await.unwrap();
            assert_eq!(telemetry.tally().asks_pending(), 1);
            pending.respond(ApprovalAnswer::AllowOnce);
        };
        let (answer, ()) = tokio::join!(waiting, answering);
        assert_eq!(answer, Some(ApprovalAnswer::AllowOnce));
        assert_eq!(telemetry.tally().asks_pending(), 0);

        // A wait the runtime gives up on (its timeout drops the future) closes the ask as well.
        let abandoned = approver.approve(&request);
        let opened = async {
            let _pending = asks.recv().await.unwrap();
            assert_eq!(telemetry.tally().asks_pending(), 1);
        };
        tokio::select! {
            _ = abandoned => unreachable!("nobody answered"),
            () = opened => {}
        }
        assert_eq!(telemetry.tally().asks_pending(), 0);
    }
}
