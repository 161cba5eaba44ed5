//! `agent-guard explain --audit-id ID`: who or what stood behind one logged decision, following a rule that an
//! "allow always" answer saved back to that answer and the party who gave it, and the runs `agent-guard undo`
//! recorded for the call.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use agent_hooks::{AuditDatabase, AuditFilter, AuditReader, AuditRow};
use anyhow::{Context, Result};
use serde_json::{Value, json};

/// The links of one row's chain, the row first: the row, then the answer that saved its rule, when there is one.
struct Chain {
    row: AuditRow,
    /// The answer row that saved the row's deciding rule ("allow always"), the latest one before the row.
    saved_by: Option<AuditRow>,
    /// The runs `agent-guard undo` recorded for the row's call (found by its key in the stores of the roots the
    /// sandbox of the row's working directory may write).
    runs: Vec<agent_server::UndoRun>,
}

pub(crate) fn run(args: &crate::DecideArgs, db: &AuditDatabase, id: i64, as_json: bool) -> Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let chain = runtime.block_on(chain(db, id))?;
    let Some(mut chain) = chain else {
        anyhow::bail!("no row of `{db}` has the id {id}");
    };
    chain.runs = runs_of_row(args, &chain.row);
    let text = if as_json {
        let runs: Vec<Value> = chain
            .runs
            .iter()
            .map(|run| json!({"root": run.root, "id": run.id, "undone": run.undone}))
            .collect();
        serde_json::to_string_pretty(&json!({
            "row": row_json(&chain.row),
            "saved_by": chain.saved_by.as_ref().map(row_json),
            "undo_runs": runs,
        }))?
    } else {
        render(&chain)
    };
    crate::emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// The runs recorded for the call of `row`, by its key, in the stores of the roots the sandbox of its working
/// directory may write; none for a row without a key or a directory whose settings no longer load.
fn runs_of_row(args: &crate::DecideArgs, row: &AuditRow) -> Vec<agent_server::UndoRun> {
    let (Some(call), Some(cwd)) = (&row.detail.call, &row.cwd) else {
        return Vec::new();
    };
    let Ok(mut guards) = crate::load::Guards::new(args) else {
        return Vec::new();
    };
    match guards.get(cwd, None) {
        Ok(guard) => crate::undo_cmd::runs_of_call(guard, call),
        Err(_) => Vec::new(),
    }
}

async fn chain(db: &AuditDatabase, id: i64) -> Result<Option<Chain>> {
    let mut reader = AuditReader::open(db, Duration::from_secs(10))
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let by_id = AuditFilter {
        id: Some(id),
        ..AuditFilter::default()
    };
    let Some(row) = reader
        .query(&by_id)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .into_iter()
        .next()
    else {
        return Ok(None);
    };
    // A decision by a rule (not itself an answer): the answer that saved the same rule, before it.
    let saved_by = match (&row.detail.rule, &row.detail.approver) {
        (Some(rule), None) => {
            let same_rule = AuditFilter {
                rule: Some(rule.clone()),
                ..AuditFilter::default()
            };
            reader
                .query(&same_rule)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?
                .into_iter()
                .rfind(|r| r.detail.approver.is_some() && r.id < row.id)
        }
        _ => None,
    };
    Ok(Some(Chain {
        row,
        saved_by,
        runs: Vec::new(),
    }))
}

fn render(chain: &Chain) -> String {
    let row = &chain.row;
    let mut out = String::new();
    let subject = row
        .tool_input
        .as_deref()
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .map(|input| agent_telemetry::subject(&row.tool_name, &input))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "audit row {}: {} `{}` in session {} at {} ({})",
        row.id.unwrap_or_default(),
        row.tool_name,
        agent_telemetry::summary(&subject),
        row.session_id,
        row.ts,
        row.agent_name
    );
    let _ = writeln!(
        out,
        "  decision: {} by {}",
        row.decision.as_deref().unwrap_or("-"),
        row.decided_by.as_deref().unwrap_or("-")
    );
    if let Some(rule) = &row.detail.rule {
        let _ = writeln!(
            out,
            "  rule: {rule} from {}",
            row.detail.rule_file.as_deref().unwrap_or("-")
        );
    }
    if let Some(sandbox) = &row.detail.sandbox {
        let _ = writeln!(out, "  sandbox: {sandbox}");
    }
    if let Some(approver) = &row.detail.approver {
        let _ = writeln!(out, "  answered by: {approver}");
    }
    let _ = writeln!(out, "  reason: {}", row.output_preview);
    match (&chain.saved_by, &row.detail.rule, &row.detail.approver) {
        (Some(answer), _, _) => {
            let _ = writeln!(
                out,
                "the rule was saved by the answer of audit row {} at {}: {} by {} (session {})\n  {}",
                answer.id.unwrap_or_default(),
                answer.ts,
                answer.decision.as_deref().unwrap_or("-"),
                answer.detail.approver.as_deref().unwrap_or("-"),
                answer.session_id,
                answer.output_preview
            );
        }
        (None, Some(_), None) => {
            let _ = writeln!(
                out,
                "the rule was written in its settings file (no answer in this audit log saved it)"
            );
        }
        (None, _, _) => {}
    }
    // The profile leads the sandbox's text (`workspace-write with network`); only such a run is recorded.
    let recorded = row.detail.sandbox.as_deref().is_some_and(|sandbox| {
        sandbox
            .split(' ')
            .next()
            .and_then(|profile| profile.parse::<agent_tool_traits::SandboxProfile>().ok())
            == Some(agent_tool_traits::SandboxProfile::WorkspaceWrite)
    });
    if let Some(call) = row.detail.call.as_ref().filter(|_| recorded) {
        if chain.runs.is_empty() {
            let _ = writeln!(
                out,
                "the call (key {call}) ran under the workspace-write sandbox; no run of it is kept (it changed \
                 nothing, or its runs were pruned or taken back and pruned)"
            );
        }
        for run in &chain.runs {
            let _ = writeln!(
                out,
                "undo id {} of `{}`{}: `agent-guard undo --root {} --id {}` takes it back",
                run.id,
                run.root.display(),
                if run.undone { " (taken back)" } else { "" },
                agent_decide::shell_quote(&run.root.to_string_lossy()),
                run.id
            );
        }
    }
    out.trim_end().to_owned()
}

fn row_json(row: &AuditRow) -> Value {
    json!({
        "id": row.id, "ts": row.ts, "session_id": row.session_id, "agent_name": row.agent_name,
        "tool_name": row.tool_name, "decision": row.decision, "decided_by": row.decided_by,
        "rule": row.detail.rule, "rule_file": row.detail.rule_file, "sandbox": row.detail.sandbox,
        "approver": row.detail.approver, "call": row.detail.call, "output_preview": row.output_preview,
    })
}
