//! The exported fact of one decision or answer, built once from the audit row that records it.

use agent_hooks::{AuditRow, AuditStatus};
use agent_rules::CallTarget;
use agent_tool_traits::ToolKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most characters of a subject or reason exported: enough to see what a call was about, not a file's content.
pub(crate) const SUMMARY_CHARS: usize = 200;

/// One decision (or one answer to an ask) as telemetry exports it: the audit row's facts, with the call's input
/// reduced to a redacted one-line summary. Whatever the audit log stores the export carries, and nothing else, so
/// the two cannot disagree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The row's key in its audit log, when it was read back from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_id: Option<i64>,
    /// When the row was made (RFC 3339 UTC).
    pub ts: String,
    /// The session: the coding agent's (`check`), the runtime's (`agent`, the server's sessions).
    pub session_id: String,
    /// `hook`, `approve`, `lead` or a subagent's name.
    pub agent: String,
    /// The tool, as the caller named it.
    pub tool: String,
    /// What the call was about (the command line, the files, the URL), credentials replaced by
    /// `[redacted: <kind>]`, at most 200 characters; empty when the input was not kept.
    pub subject: String,
    /// `allow`, `ask` or `deny`; `None` for a session's stop.
    pub decision: Option<String>,
    /// The deciding layer (`rules`, `bash-guard`, `approval`…).
    pub layer: Option<String>,
    /// The resolution step (`allow-rule`, `approver`, …), when there was one.
    pub step: Option<String>,
    /// The text of the rule that decided, or that an "allow always" answer saved.
    pub rule: Option<String>,
    /// The settings file of that rule, or its source when it has no file.
    pub rule_file: Option<String>,
    /// The permission mode the call was decided in.
    pub mode: Option<String>,
    /// The kernel sandbox an allowed shell call runs under.
    pub sandbox: Option<String>,
    /// Who answered an ask (`terminal`, `page:<session>`, `approve-hook:<session>`…).
    pub approver: Option<String>,
    /// `OK`, `FAIL`, `DENIED` or `SESSION_STOP`.
    pub status: String,
    /// How long the decision took (for an answer: how long the ask waited; for a call the runtime ran: how long
    /// it ran).
    pub latency_ms: u64,
    /// The reason given, redacted and cut like the subject.
    pub reason: String,
}

impl Record {
    /// The record of `row`, redacted: what is exported.
    pub fn of_row(row: &AuditRow) -> Self {
        Self::unredacted(row).redacted()
    }

    /// The record of `row` with its subject and reason as they are, neither redacted nor cut: what the hook hands
    /// to its sender process over a pipe, so that the hook does not pay for the redaction's patterns (compiling
    /// them is most of a redaction's cost, and the hook runs once per call). Never exported as it is.
    pub fn unredacted(row: &AuditRow) -> Self {
        let (layer, step) = match row.decided_by.as_deref().map(|text| text.split_once('/')) {
            Some(Some((layer, step))) => (Some(layer.to_owned()), Some(step.to_owned())),
            Some(None) => (row.decided_by.clone(), None),
            None => (None, None),
        };
        let subject = row
            .tool_input
            .as_deref()
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
            .map(|input| subject(&row.tool_name, &input))
            .unwrap_or_default();
        Self {
            audit_id: row.id,
            ts: row.ts.clone(),
            session_id: row.session_id.clone(),
            agent: row.agent_name.clone(),
            tool: row.tool_name.clone(),
            subject,
            decision: row.decision.clone(),
            layer,
            step,
            rule: row.detail.rule.clone(),
            rule_file: row.detail.rule_file.clone(),
            mode: row.permission_mode.clone(),
            sandbox: row.detail.sandbox.clone(),
            approver: row.detail.approver.clone(),
            status: row.status.as_str().to_owned(),
            latency_ms: row.elapsed_ms,
            reason: row.output_preview.clone(),
        }
    }

    /// The record with its subject and reason redacted and cut ([`summary`]).
    #[must_use]
    pub fn redacted(mut self) -> Self {
        self.subject = summary(&self.subject);
        self.reason = summary(&self.reason);
        self
    }

    /// Whether this records an answer to an ask (somebody, a hook or nobody answered) rather than a decision made
    /// by the policy alone.
    pub fn is_answer(&self) -> bool {
        self.approver.is_some()
    }

    /// Whether this records a decision (every row but a session's stop and a compaction).
    pub fn is_decision(&self) -> bool {
        self.decision.is_some() && self.status != AuditStatus::SessionStop.as_str()
    }

    /// The kind of the approver, without its session (`page`, `terminal`, `approve-hook`…): what metrics are
    /// labelled with, so that a label never has one value per session.
    pub fn approver_kind(&self) -> Option<&str> {
        self.approver
            .as_deref()
            .map(|text| text.split_once(':').map_or(text, |(kind, _)| kind))
    }
}

/// What a call is about, as the rules read it from its input: the command line of a shell call, the files of a
/// file tool (a search's pattern first), the URL of a fetch, the type of a subagent; for other tools, their
/// query or prompt when they have one. Not redacted: [`Record::of_row`] redacts what it exports.
pub fn subject(tool: &str, input: &Value) -> String {
    let text = |key: &str| input.get(key).and_then(Value::as_str);
    match agent_rules::describe(tool, input) {
        Ok(CallTarget::Shell(command)) => command.to_owned(),
        Ok(CallTarget::Files(_, paths)) => {
            let paths = paths.join(" ");
            match (agent_tool_traits::kind_of(tool), text("pattern")) {
                (ToolKind::Grep, Some(pattern)) => format!("{pattern} in {paths}"),
                _ => paths,
            }
        }
        Ok(CallTarget::Web { url, .. }) => url.to_owned(),
        Ok(CallTarget::Agent(kind)) => kind
            .or_else(|| text("description"))
            .unwrap_or_default()
            .to_owned(),
        Ok(CallTarget::Opaque) | Err(_) => ["command", "file_path", "path", "url", "query", "prompt"]
            .into_iter()
            .find_map(text)
            .unwrap_or_default()
            .to_owned(),
    }
}

/// `text` on one line, credentials replaced (agent-secrets' [`redact`](agent_secrets::redact)), cut to
/// 200 characters (`SUMMARY_CHARS`). Redacted before the cut, so that a cut never leaves half a token unrecognised.
pub fn summary(text: &str) -> String {
    let redacted = agent_secrets::redact(text.as_bytes());
    String::from_utf8_lossy(&redacted)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(SUMMARY_CHARS)
        .collect()
}

#[cfg(test)]
mod tests {
    use agent_hooks::AuditDetail;
    use serde_json::json;

    use super::*;

    fn row(tool: &str, input: &Value, decided_by: &str) -> AuditRow {
        AuditRow {
            id: Some(7),
            session_id: "s1".into(),
            step: 0,
            tool_name: tool.into(),
            status: AuditStatus::Ok,
            decision: Some("allow".into()),
            decided_by: Some(decided_by.into()),
            elapsed_ms: 4,
            output_preview: "allowed by rule".into(),
            agent_name: "hook".into(),
            ts: "2026-12-02T10:00:00.000Z".into(),
            tool_input: Some(input.to_string()),
            cwd: Some("/p".into()),
            permission_mode: Some("default".into()),
            detail: AuditDetail {
                rule: Some("Bash(npm test:*)".into()),
                rule_file: Some("/p/.claude/settings.json".into()),
                sandbox: Some("read-only".into()),
                approver: None,
                call: None,
            },
        }
    }

    #[test]
    fn a_record_splits_the_layer_and_redacts_the_subject() {
        let token = "ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7";
        let input =
            json!({"command": format!("curl -H 'Authorization: token {token}' https://api.github.com")});
        let record = Record::of_row(&row("Bash", &input, "rules/allow-rule"));
        assert_eq!(record.layer.as_deref(), Some("rules"));
        assert_eq!(record.step.as_deref(), Some("allow-rule"));
        assert!(!record.subject.contains(token), "{}", record.subject);
        assert!(
            record.subject.contains("[redacted: GitHub token]"),
            "{}",
            record.subject
        );
        assert_eq!(record.rule.as_deref(), Some("Bash(npm test:*)"));
        assert!(record.is_decision() && !record.is_answer());
    }

    #[test]
    fn the_approver_kind_drops_the_session() {
        let mut answer = row("Bash", &json!({"command": "ls"}), "approval/approver");
        answer.detail.approver = Some("page:3f2a".into());
        let record = Record::of_row(&answer);
        assert_eq!(record.approver_kind(), Some("page"));
        assert!(record.is_answer());
    }

    #[test]
    fn the_subject_is_the_command_or_the_path() {
        for (tool, input, shown) in [
            ("Bash", json!({"command": "git status"}), "git status"),
            ("run_bash", json!({"command": "ls -la"}), "ls -la"),
            ("Read", json!({"file_path": "/p/README.md"}), "/p/README.md"),
            ("read_file", json!({"path": "src/lib.rs"}), "src/lib.rs"),
            ("Write", json!({"file_path": "a.txt", "content": "x"}), "a.txt"),
            ("Grep", json!({"pattern": "TODO", "path": "src"}), "TODO in src"),
            (
                "WebFetch",
                json!({"url": "https://docs.rs/x"}),
                "https://docs.rs/x",
            ),
            ("WebSearch", json!({"query": "rust sqlx"}), "rust sqlx"),
            ("mcp__x__y", json!({"a": 1}), ""),
        ] {
            assert_eq!(subject(tool, &input), shown, "{tool}");
        }
    }

    #[test]
    fn a_long_subject_is_cut() {
        let input = json!({"command": format!("echo {}", "x".repeat(1000))});
        let record = Record::of_row(&row("Bash", &input, "bash-guard"));
        assert_eq!(record.subject.chars().count(), SUMMARY_CHARS);
        assert_eq!((record.layer.as_deref(), record.step), (Some("bash-guard"), None));
    }
}
