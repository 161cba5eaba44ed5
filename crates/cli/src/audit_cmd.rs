//! `agent-guard audit`: the audit log as a table or JSON lines, optionally followed as it grows.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use agent_hooks::{AuditDatabase, AuditFilter, AuditReader, AuditRow, AuditStatus};
use agent_telemetry::subject;
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

// What `agent-guard audit` was asked for.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct AuditArgs {
    /// The audit database: a SQLite file, a `sqlite:` URL or a `postgres://` URL (a password is better given
    /// through PGPASSWORD or ~/.pgpass than on the command line) [default: the one AGENT_GUARD_AUDIT names, else
    /// the `.agent-guard/audit.db` of the current directory's project, which the hook writes]
    #[arg(long, value_name = "PATH|URL")]
    db: Option<AuditDatabase>,
    /// Only this session.
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// Only rows at or after this time (RFC 3339 UTC, e.g. 2026-11-30T02:47:15Z, or a date, 2026-11-30).
    #[arg(long, value_name = "TIME", value_parser = parse_since)]
    since: Option<String>,
    /// Only this tool, by any of its names (`Bash` also finds the runtime's `run_bash`, `read_file` the hook's
    /// `Read`); `session` selects the SESSION_STOP and TAINT_CLEARED rows.
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// At most this many rows, the oldest first.
    #[arg(long, value_name = "N")]
    limit: Option<u32>,
    /// Print JSON lines instead of a table.
    #[arg(long)]
    json: bool,
    /// Keep printing new rows as they are written (stop with Ctrl-C). The connection stays open; when a query
    /// fails, the error is shown and the next poll connects again.
    #[arg(long)]
    follow: bool,
    /// How long to wait for a PostgreSQL server to accept the connection.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, value_parser = parse_seconds)]
    connect_timeout: f64,
}

/// A positive, finite number of seconds.
fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds.is_finite() && seconds > 0.0 && seconds <= 86_400.0 => Ok(seconds),
        _ => Err(format!("`{text}` is not a number of seconds between 0 and 86400")),
    }
}

/// A `--since` value that is a time (or a date); anything else is a usage error naming it, not an empty table.
pub(crate) fn parse_since(text: &str) -> Result<String, String> {
    agent_hooks::time_bound(text).map_err(|e| e.to_string())
}

pub(crate) fn run(args: &AuditArgs) -> Result<ExitCode> {
    let db = match &args.db {
        Some(db) => db.clone(),
        None => crate::hook_audit::reading_default()?,
    };
    if let AuditDatabase::SqliteFile(path) = &db
        && !path.exists()
        && !agent_hooks::spool_path(&db).is_some_and(|spool| spool.exists())
    {
        bail!(
            "no audit database at `{}`: the hook (`agent-guard check`) writes one in each project's \
             .agent-guard/ at its first decision, `agent-guard demo` one in the current directory's; or pass \
             --db PATH|URL",
            path.display()
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    runtime.block_on(query_loop(args, &db))?;
    Ok(ExitCode::SUCCESS)
}

async fn query_loop(args: &AuditArgs, db: &AuditDatabase) -> Result<()> {
    let mut filter = AuditFilter {
        session_id: args.session.clone(),
        since: args.since.clone(),
        tool: args.tool.clone(),
        limit: args.limit,
        ..AuditFilter::default()
    };
    let mut last_id: Option<i64> = None;
    let mut header = !args.json;
    let mut reader = AuditReader::open(db, Duration::from_secs_f64(args.connect_timeout))
        .await
        .map_err(one_line)?;
    // While following, a failed query is shown once per outage and retried at the next poll.
    let mut failing = false;
    loop {
        match reader.query(&filter).await {
            Ok(rows) => {
                if failing {
                    eprintln!("agent-guard audit: reading {db} again");
                    failing = false;
                }
                let fresh: Vec<&AuditRow> = rows
                    .iter()
                    .filter(|r| last_id.is_none_or(|last| r.id.is_some_and(|id| id > last)))
                    .collect();
                if !fresh.is_empty() || header {
                    crate::emit(render(&fresh, args.json, header).trim_end())?;
                    header = false;
                }
                if let Some(id) = fresh.iter().filter_map(|r| r.id).max() {
                    last_id = Some(id);
                }
                // Following: only rows from the newest seen on; the id filter drops the ones of the same
                // millisecond.
                if let Some(newest) = fresh.iter().map(|r| r.ts.clone()).max() {
                    filter.since = Some(newest);
                }
            }
            Err(error) if args.follow => {
                if !failing {
                    eprintln!("agent-guard audit: {error}; trying again");
                    failing = true;
                }
            }
            Err(error) => return Err(one_line(error)),
        }
        if !args.follow {
            reader.close().await;
            return Ok(());
        }
        filter.limit = None;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The error's own message names the database (a URL without its password) and the cause; as one line it reads
/// better than the chain, whose every link repeats the cause.
fn one_line(error: agent_hooks::AuditError) -> anyhow::Error {
    anyhow::anyhow!("{error}")
}

fn render(rows: &[&AuditRow], as_json: bool, header: bool) -> String {
    let mut out = String::new();
    if as_json {
        for row in rows {
            let input = row
                .tool_input
                .as_deref()
                .and_then(|text| serde_json::from_str::<Value>(text).ok());
            let line = json!({
                "id": row.id, "ts": row.ts, "session_id": row.session_id, "agent_name": row.agent_name,
                "step": row.step, "tool_name": row.tool_name,
                "subject": input.as_ref().map(|input| subject(&row.tool_name, input)),
                "status": row.status.as_str(), "decision": row.decision, "decided_by": row.decided_by,
                "elapsed_ms": row.elapsed_ms, "output_preview": row.output_preview,
                "cwd": row.cwd, "permission_mode": row.permission_mode, "tool_input": input,
                "rule": row.detail.rule, "rule_file": row.detail.rule_file, "sandbox": row.detail.sandbox,
                "approver": row.detail.approver, "call": row.detail.call,
            });
            let _ = writeln!(out, "{line}");
        }
        return out;
    }
    if header {
        let _ = writeln!(
            out,
            "{:<24} {:<20} {:<8} {:>4} {:<14} {:<40} {:<12} {:<6} {:<22} {:>7}  output",
            "ts", "session", "agent", "step", "tool", "command or path", "status", "dec", "decided by", "ms"
        );
    }
    for row in rows {
        // A cleared taint is no call: it names who cleared it, and what was cleared in full.
        let (subject, decision, decided_by, output) = if row.status == AuditStatus::TaintCleared {
            let by = row.detail.approver.as_deref().unwrap_or("?");
            (
                format!("taint cleared by {by}"),
                "-",
                "-",
                printable(&crate::one_line(&row.output_preview)),
            )
        } else {
            let call = row
                .tool_input
                .as_deref()
                .and_then(|text| serde_json::from_str::<Value>(text).ok())
                .map_or_else(|| "-".to_owned(), |input| subject(&row.tool_name, &input));
            let preview: String = row
                .output_preview
                .chars()
                .take(48)
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            (
                crate::one_line(&call),
                row.decision.as_deref().unwrap_or("-"),
                row.decided_by.as_deref().unwrap_or("-"),
                preview,
            )
        };
        let _ = writeln!(
            out,
            "{:<24} {:<20} {:<8} {:>4} {:<14} {:<40} {:<12} {:<6} {:<22} {:>7}  {}",
            row.ts,
            shorten(&row.session_id, 20),
            shorten(&row.agent_name, 8),
            row.step,
            shorten(&row.tool_name, 14),
            shorten(&subject, 40),
            row.status.as_str(),
            decision,
            shorten(decided_by, 22),
            row.elapsed_ms,
            output
        );
    }
    out
}

/// `text` as a terminal shows it without being driven by it: every control character (an escape sequence
/// would move the cursor and overwrite the rows above: a logged call's input is anyone's text) written as its
/// Rust escape.
fn printable(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

fn shorten(text: &str, width: usize) -> String {
    let text = &printable(text);
    if text.chars().count() <= width {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_logged_input_cannot_drive_the_terminal() {
        // Cursor up and erase line: shown, not obeyed.
        let shown = shorten("ls\u{1b}[1A\u{1b}[2K\r\u{7}", 40);
        assert!(!shown.chars().any(char::is_control), "{shown:?}");
        assert!(shown.starts_with("ls\\u{1b}[1A"), "{shown:?}");
        assert_eq!(shorten("git status", 40), "git status");
    }
}
