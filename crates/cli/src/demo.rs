//! `agent-guard run SCENARIO` and `agent-guard demo`: a scripted session through the runtime, printed as a trace.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use std::sync::Arc;

use agent_core::{Approver, CallReport, SessionReport};
use agent_hooks::{AuditConfig, AuditDatabase, AuditFilter, AuditLogHook};
use agent_tool_traits::DecidedBy;
use anyhow::{Context, Result};

use crate::scenario::{Scenario, run_scenario};
use crate::terminal::TerminalApprover;

/// The bundled demo scenario.
const DEMO: &str = include_str!("../scenarios/demo.json");

/// Runs the bundled demo.
pub(crate) fn demo(audit_db: &AuditDatabase) -> Result<ExitCode> {
    let scenario = Scenario::parse("demo.json", DEMO)?;
    session(&scenario, audit_db, false)
}

/// Runs the scenario in `file`; with `interactive`, asks the scenario does not answer are put to the terminal.
pub(crate) fn run(file: &Path, audit_db: &AuditDatabase, interactive: bool) -> Result<ExitCode> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read `{}`", file.display()))?;
    let scenario = Scenario::parse(&file.display().to_string(), &text)?;
    session(&scenario, audit_db, interactive)
}

fn session(scenario: &Scenario, audit_db: &AuditDatabase, interactive: bool) -> Result<ExitCode> {
    let root = tempfile::tempdir().context("cannot create a temporary workspace")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let session_id = format!(
        "{}-{}",
        scenario.name,
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default()
    );
    let started = Instant::now();
    let (report, rows) = runtime.block_on(async {
        let audit = AuditLogHook::open_database(audit_db, AuditConfig::default())
            .await
            // The message names the database and the cause; the chain would repeat the cause.
            .map_err(|error| anyhow::anyhow!("{error}"))?;
        let here = std::env::current_dir().unwrap_or_default();
        let telemetry = crate::telemetry::attach(&audit, crate::telemetry::settings_of(&here).as_ref());
        let fallback: Option<Arc<dyn Approver>> = interactive
            .then(|| crate::telemetry::CountedAsks::wrap(Arc::new(TerminalApprover), telemetry.as_ref()));
        let (report, cwd) = run_scenario(scenario, root.path(), Some(audit), fallback, &session_id).await?;
        let filter = AuditFilter {
            session_id: Some(session_id.clone()),
            ..AuditFilter::default()
        };
        let rows = AuditLogHook::query_database(audit_db, &filter)
            .await
            .map(|rows| rows.len())
            .ok();
        if let Some(telemetry) = telemetry {
            let _ended =
                tokio::task::spawn_blocking(move || telemetry.shutdown(crate::telemetry::EXIT_DEADLINE))
                    .await;
        }
        anyhow::Ok(((report, cwd), rows))
    })?;
    let (report, cwd) = report;
    print!("{}", render(scenario, &report, &cwd, started));
    println!(
        "audit log: {} rows for session `{}` in {} ({} calls, the subagents' included, + 1 SESSION_STOP)",
        rows.map_or_else(|| "?".to_owned(), |n| n.to_string()),
        report.session_id,
        audit_db,
        report.metrics.calls
    );
    match &report.stop_error {
        Some(error) => {
            eprintln!("agent-guard: the session did not stop cleanly: {error}");
            Ok(ExitCode::FAILURE)
        }
        None => Ok(ExitCode::SUCCESS),
    }
}

/// The readable trace of a session.
fn render(scenario: &Scenario, report: &SessionReport, cwd: &Path, started: Instant) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "agent-guard {}: {}",
        scenario.name,
        wrap(&scenario.description, 100, "")
    );
    let _ = writeln!(out, "workspace: {}", cwd.display());
    for record in &report.steps {
        let index = usize::try_from(record.step.saturating_sub(1)).unwrap_or_default();
        let note = scenario
            .turns
            .get(index)
            .and_then(|t| t.note.as_deref())
            .unwrap_or("");
        let _ = writeln!(
            out,
            "\nstep {}{}{note}",
            record.step,
            if note.is_empty() { "" } else { " — " }
        );
        let step_start = record.calls.iter().filter_map(|c| c.ran.map(|r| r.0)).min();
        for call in &record.calls {
            render_call(&mut out, call, step_start);
        }
    }
    let _ = writeln!(
        out,
        "\nsession stopped: {}{} after {} step(s), {} ms",
        report.reason,
        report
            .answer
            .as_deref()
            .map(|a| format!(" (answer: {a})"))
            .unwrap_or_default(),
        report.steps.len(),
        started.elapsed().as_millis()
    );
    let _ = writeln!(out, "metrics: {}", report.metrics.summary());
    out
}

pub(crate) fn render_call(out: &mut String, call: &CallReport, step_start: Option<Instant>) {
    let verdict = &call.verdict;
    let provenance = &verdict.provenance;
    let step = provenance.step.map_or("finding", DecidedBy::as_str);
    let rule = provenance
        .rule
        .as_deref()
        .map(|r| format!(" `{r}`"))
        .unwrap_or_default();
    let answer = call
        .answer
        .map(|a| format!(" (answer: {})", a.as_str()))
        .unwrap_or_default();
    let args = shorten(&call.call.args.to_string(), 90);
    let _ = writeln!(out, "  [{}] {} {args}", call.call.id, call.call.name);
    let _ = writeln!(
        out,
        "      decided: {} by {}/{step}{rule} [{}]{answer}",
        verdict.decision, provenance.layer, call.source
    );
    let _ = writeln!(out, "      why: {}", shorten(&verdict.reason(), 140));
    let timing = match (call.ran, step_start) {
        (Some((from, to)), Some(zero)) => format!(
            " ran {:.1}–{:.1} ms",
            from.saturating_duration_since(zero).as_secs_f64() * 1e3,
            to.saturating_duration_since(zero).as_secs_f64() * 1e3
        ),
        _ => String::new(),
    };
    let first = call
        .output
        .content
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let more = call
        .output
        .content
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count()
        .saturating_sub(1);
    let more = if more > 0 {
        format!(" (+{more} lines)")
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "      result: {}{timing}: {}{more}",
        call.status.as_str(),
        shorten(first.trim(), 100)
    );
    // A subagent's result lists its own calls with their decisions: each layer decided them too.
    if call.call.tool() == agent_tool_traits::ToolName::new(agent_core::SubagentTool::NAME)
        && let Some(calls) = call.output.content.lines().find(|l| l.starts_with("calls: "))
    {
        let _ = writeln!(out, "      subagent {}", shorten(calls, 200));
    }
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut short: String = text.chars().take(max).collect();
    short.push('…');
    short
}

fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = 0usize;
    for word in text.split_whitespace() {
        if line > 0 && line + word.len() + 1 > width {
            out.push('\n');
            out.push_str(indent);
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += word.len();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_demo_parses() {
        let scenario = Scenario::parse("demo.json", DEMO).unwrap();
        assert!(scenario.turns.len() >= 5);
        assert!(!scenario.approvals.is_empty());
    }
}
