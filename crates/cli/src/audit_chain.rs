//! `agent-guard explain --audit-id ID`: who or what stood behind one logged decision, following a rule that an
//! "allow always" answer saved back to that answer and the party who gave it.

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
}

pub(crate) fn run(db: &AuditDatabase, id: i64, as_json: bool) -> Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let chain = runtime.block_on(chain(db, id))?;
    let Some(chain) = chain else {
        anyhow::bail!("no row of `{db}` has the id {id}");
    };
    let text = if as_json {
        serde_json::to_string_pretty(&json!({
            "row": row_json(&chain.row),
            "saved_by": chain.saved_by.as_ref().map(row_json),
        }))?
    } else {
        render(&chain)
    };
    crate::emit(&text)?;
    Ok(ExitCode::SUCCESS)
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
    Ok(Some(Chain { row, saved_by }))
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
    out.trim_end().to_owned()
}

fn row_json(row: &AuditRow) -> Value {
    json!({
        "id": row.id, "ts": row.ts, "session_id": row.session_id, "agent_name": row.agent_name,
        "tool_name": row.tool_name, "decision": row.decision, "decided_by": row.decided_by,
        "rule": row.detail.rule, "rule_file": row.detail.rule_file, "sandbox": row.detail.sandbox,
        "approver": row.detail.approver, "output_preview": row.output_preview,
    })
}
