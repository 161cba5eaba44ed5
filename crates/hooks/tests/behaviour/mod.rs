//! What the audit log does on every backend, written once: `tests/audit.rs` runs each behaviour on a SQLite file
//! and `tests/audit_postgres.rs` on a PostgreSQL database, each adding the checks only its backend can make.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::sync::Arc;
use std::time::Duration;

use agent_hooks::{
    AgentHook, AuditConfig, AuditDatabase, AuditFilter, AuditLogHook, AuditReader, AuditRow, AuditStatus,
    CallStatus, CancellationHook, HookRegistry, PREVIEW_CHARS, PostToolUseContext, PreToolUseContext,
    SessionContext, SessionStopContext,
};
use agent_tool_traits::{
    CancelRegistry, DecidedBy, Decision, Layer, Provenance, ToolCall, ToolOutput, Verdict,
};
use serde_json::json;

/// The working directory the sessions report; the audit log only stores it, so any path serves.
const CWD: &str = "/work";

/// A finished call of `tool` at `step`: allowed by a rule when it ran (`Ok`, `Fail`), blocked by a hook when
/// `Denied`; it took `step` milliseconds.
pub(crate) fn post_ctx(
    session: &str,
    step: u32,
    tool: &str,
    status: CallStatus,
    content: &str,
) -> PostToolUseContext {
    let verdict = match status {
        CallStatus::Ok | CallStatus::Fail => Verdict::new(
            Decision::Allow,
            "allowed",
            Provenance::layer(Layer::Rules).at(DecidedBy::AllowRule),
        ),
        CallStatus::Denied => Verdict::new(
            Decision::Deny,
            "denied",
            Provenance::layer(Layer::Hooks).at(DecidedBy::HookBlock),
        ),
    };
    PostToolUseContext {
        session_id: session.into(),
        agent_name: "lead".into(),
        step,
        call: ToolCall::new(format!("c{step}"), tool, json!({})),
        cwd: "/work".into(),
        permission_mode: "default".into(),
        output: ToolOutput {
            content: content.into(),
            is_error: status == CallStatus::Fail,
        },
        status,
        verdict,
        elapsed: Duration::from_millis(u64::from(step)),
        sandbox: None,
        approver: None,
    }
}

/// The end of `session` after seven steps, completed or cancelled by the user.
pub(crate) fn stop_ctx(session: &str, cancelled: bool) -> SessionStopContext {
    SessionStopContext {
        session_id: session.into(),
        agent_name: "lead".into(),
        steps: 7,
        reason: if cancelled {
            "cancelled by the user".into()
        } else {
            "completed".into()
        },
        cancelled,
    }
}

/// Opens `db` with the default writer configuration.
pub(crate) async fn open(db: &AuditDatabase) -> AuditLogHook {
    AuditLogHook::open_database(db, AuditConfig::default())
        .await
        .unwrap()
}

/// The rows of `db` that pass `filter`, read through a connection of their own.
pub(crate) async fn query(db: &AuditDatabase, filter: &AuditFilter) -> Vec<AuditRow> {
    AuditLogHook::query_database(db, filter).await.unwrap()
}

/// The rows of `db`, of one session or of all.
pub(crate) async fn rows(db: &AuditDatabase, session: Option<&str>) -> Vec<AuditRow> {
    let filter = AuditFilter {
        session_id: session.map(str::to_owned),
        ..AuditFilter::default()
    };
    query(db, &filter).await
}

/// Runs 250 calls of session `s1` through a registry, then its stop: once the stop returns, a connection of its
/// own reads every call (fields, preview cut at [`PREVIEW_CHARS`] characters of a two-byte text, order) and the
/// stop row. The first call's output is 250 `é`, for the backends that check the preview's bytes too.
pub(crate) async fn every_call_and_the_stop_are_stored_when_stop_returns(db: &AuditDatabase) {
    let audit = open(db).await;
    assert_eq!(audit.target(), db.to_string());
    let mut hooks = HookRegistry::new();
    hooks.register(Arc::new(audit.clone()));
    let session = SessionContext {
        session_id: "s1".into(),
        agent_name: "lead".into(),
        cwd: CWD.into(),
        permission_mode: "default".into(),
    };
    hooks.session_start(&session).await.unwrap();

    let long = "é".repeat(PREVIEW_CHARS + 50);
    let n = 250u32;
    for step in 1..=n {
        let status = match step % 3 {
            0 => CallStatus::Ok,
            1 => CallStatus::Fail,
            _ => CallStatus::Denied,
        };
        let content = if step == 1 { long.as_str() } else { "result" };
        let final_content = hooks
            .run_post_tool_use(&post_ctx("s1", step, "read_file", status, content))
            .await;
        assert_eq!(final_content, content, "the audit hook never changes the output");
    }
    hooks.session_stop(&stop_ctx("s1", false)).await.unwrap();

    // Read back through a connection of its own, right after the stop returned.
    let stored = rows(db, None).await;
    assert_eq!(stored.len(), n as usize + 1);
    let first = &stored[0];
    assert_eq!(
        (first.session_id.as_str(), first.step, first.tool_name.as_str()),
        ("s1", 1, "read_file")
    );
    assert_eq!(first.status, AuditStatus::Fail);
    assert_eq!(first.decision.as_deref(), Some("allow"));
    assert_eq!(first.decided_by.as_deref(), Some("rules/allow-rule"));
    assert_eq!(first.elapsed_ms, 1);
    assert_eq!(first.output_preview.chars().count(), PREVIEW_CHARS);
    assert!(long.starts_with(&first.output_preview));
    assert_eq!(first.agent_name, "lead");
    assert_eq!(stored[1].status, AuditStatus::Denied);
    assert_eq!(stored[1].decided_by.as_deref(), Some("hooks/hook-block"));
    assert_eq!(stored[2].status, AuditStatus::Ok);
    let last = stored.last().unwrap();
    assert_eq!(
        (last.tool_name.as_str(), last.status),
        ("session", AuditStatus::SessionStop)
    );
    assert_eq!(
        (last.step, last.decision.as_ref(), last.output_preview.as_str()),
        (7, None, "completed")
    );
    assert!(
        stored
            .windows(2)
            .all(|pair| pair[0].ts <= pair[1].ts && pair[0].id < pair[1].id)
    );
    assert!(last.ts.ends_with('Z') && last.ts.len() == "2026-11-30T02:47:15.123Z".len());
}

/// Eight tasks send 400 calls each through a channel of 16: none is lost, and one sender's rows keep their order.
pub(crate) async fn concurrent_senders_through_a_small_channel_lose_nothing(db: &AuditDatabase) {
    // A tiny channel forces the senders to wait for the writer; the send timeout is long enough not to drop.
    let config = AuditConfig {
        capacity: 16,
        max_batch: 64,
        send_timeout: Duration::from_secs(10),
        ..AuditConfig::default()
    };
    let audit = AuditLogHook::open_database(db, config).await.unwrap();
    let (senders, per_sender) = (8u32, 400u32);
    let mut tasks = Vec::new();
    for sender in 0..senders {
        let audit = audit.clone();
        tasks.push(tokio::spawn(async move {
            for step in 1..=per_sender {
                let tool = format!("tool_{sender}");
                audit
                    .post_tool_use(&post_ctx("s1", step, &tool, CallStatus::Ok, "ok"))
                    .await;
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    audit.on_session_stop(&stop_ctx("s1", false)).await.unwrap();

    let stored = rows(db, Some("s1")).await;
    assert_eq!(stored.len(), (senders * per_sender) as usize + 1);
    let tool_0 = AuditFilter {
        tool: Some("tool_0".into()),
        ..AuditFilter::default()
    };
    let of_tool_0 = query(db, &tool_0).await;
    assert_eq!(of_tool_0.len(), per_sender as usize);
    assert!(
        of_tool_0.windows(2).all(|pair| pair[0].step < pair[1].step),
        "one sender's rows keep their order"
    );
}

/// Three calls run, the user cancels, the cancellation hook blocks three more (reported as denied): every call has
/// its row, the stop row carries the cancellation, and the stop clears the cancellation.
pub(crate) async fn a_cancelled_run_still_gets_one_row_per_call_and_the_stop_row(db: &AuditDatabase) {
    let cancelled = CancelRegistry::new();
    let mut hooks = HookRegistry::new();
    hooks.register(Arc::new(CancellationHook::new(cancelled.clone())));
    hooks.register(Arc::new(open(db).await));

    let mut calls = 0;
    for step in 1..=3 {
        hooks
            .run_post_tool_use(&post_ctx("run", step, "run_bash", CallStatus::Ok, "done"))
            .await;
        calls += 1;
    }
    cancelled.cancel("run");
    for step in 4..=6 {
        let pre = PreToolUseContext {
            session_id: "run".into(),
            agent_name: "lead".into(),
            step,
            call: ToolCall::new(format!("c{step}"), "run_bash", json!({"command": "make"})),
            cwd: CWD.into(),
            permission_mode: "default".into(),
        };
        let outcome = hooks.run_pre_tool_use(&pre).await;
        assert!(outcome.permission.block.is_some());
        // The executor reports the blocked call as denied, so that it has its row.
        hooks
            .run_post_tool_use(&post_ctx(
                "run",
                step,
                "run_bash",
                CallStatus::Denied,
                "cancelled by the user",
            ))
            .await;
        calls += 1;
    }
    hooks.session_stop(&stop_ctx("run", true)).await.unwrap();

    let stored = rows(db, Some("run")).await;
    assert_eq!(stored.len(), calls + 1);
    assert_eq!(
        stored
            .iter()
            .filter(|row| row.status == AuditStatus::Denied)
            .count(),
        3
    );
    let last = stored.last().unwrap();
    assert_eq!(
        (last.status, last.output_preview.as_str()),
        (AuditStatus::SessionStop, "cancelled by the user")
    );
    assert!(!cancelled.is_cancelled("run"));
}

/// Four calls through the hook and one row recorded directly: the query filters by session, tool, limit and time
/// (a full time and a date alone), and the recorded row comes back as it was given.
pub(crate) async fn rows_recorded_directly_and_the_query_filters(db: &AuditDatabase) {
    let audit = open(db).await;
    for (session, tool) in [
        ("a", "read_file"),
        ("a", "run_bash"),
        ("b", "read_file"),
        ("b", "read_file"),
    ] {
        audit
            .post_tool_use(&post_ctx(session, 1, tool, CallStatus::Ok, "ok"))
            .await;
    }
    let mut manual = AuditRow::for_call(&post_ctx(
        "a",
        9,
        "file_write",
        CallStatus::Denied,
        "outside the roots",
    ));
    manual.agent_name = "researcher".into();
    // What the call was, where and in which mode: enough to decide it again under other settings.
    assert_eq!(manual.tool_input.as_deref(), Some("{}"));
    assert_eq!(manual.cwd.as_deref(), Some("/work"));
    assert_eq!(manual.permission_mode.as_deref(), Some("default"));
    audit.record(manual.clone()).await;
    audit.flush().await.unwrap();

    assert_eq!(rows(db, Some("a")).await.len(), 3);
    let read_in_b = AuditFilter {
        session_id: Some("b".into()),
        tool: Some("read_file".into()),
        ..AuditFilter::default()
    };
    assert_eq!(query(db, &read_in_b).await.len(), 2);
    let limited = AuditFilter {
        limit: Some(2),
        ..AuditFilter::default()
    };
    assert_eq!(query(db, &limited).await.len(), 2);
    let future = AuditFilter {
        since: Some("2999-01-01T00:00:00Z".into()),
        ..AuditFilter::default()
    };
    assert!(query(db, &future).await.is_empty());
    // A date alone and a time without milliseconds compare as times with the text of `ts` (bytes in SQLite, the
    // "C" collation in PostgreSQL).
    for since in ["2000-01-01", "2000-01-01T00:00:00Z"] {
        let past = AuditFilter {
            since: Some(since.into()),
            ..AuditFilter::default()
        };
        assert_eq!(query(db, &past).await.len(), 5, "since {since}");
    }

    let stored = rows(db, Some("a")).await;
    let written = stored.last().unwrap();
    assert_eq!(
        AuditRow {
            id: None,
            ..written.clone()
        },
        manual
    );
}

/// Two runs each open the database anew (running the migrations again) and write a call and a stop: the second
/// finds the first's rows still there.
pub(crate) async fn reopening_keeps_earlier_rows(db: &AuditDatabase) {
    for run in ["first", "second"] {
        let audit = open(db).await;
        audit
            .post_tool_use(&post_ctx(run, 1, "read_file", CallStatus::Ok, "ok"))
            .await;
        audit.on_session_stop(&stop_ctx(run, false)).await.unwrap();
    }
    assert_eq!(rows(db, None).await.len(), 4);
}

/// A reader held open (as `agent-guard audit --follow` holds it) sees the rows written after it connected, and
/// answers each filter on the same connection.
pub(crate) async fn a_held_reader_sees_later_rows(db: &AuditDatabase) {
    let audit = open(db).await;
    audit
        .post_tool_use(&post_ctx("s1", 1, "read_file", CallStatus::Ok, "first"))
        .await;
    audit.flush().await.unwrap();
    let mut reader = AuditReader::open(db, Duration::from_secs(5)).await.unwrap();
    let all = AuditFilter::default();
    assert_eq!(reader.query(&all).await.unwrap().len(), 1);

    audit
        .post_tool_use(&post_ctx("s1", 2, "run_bash", CallStatus::Fail, "second"))
        .await;
    audit.on_session_stop(&stop_ctx("s1", false)).await.unwrap();
    let rows = reader.query(&all).await.unwrap();
    let statuses: Vec<AuditStatus> = rows.iter().map(|row| row.status).collect();
    assert_eq!(
        statuses,
        [AuditStatus::Ok, AuditStatus::Fail, AuditStatus::SessionStop],
        "both calls and the stop row, oldest first"
    );
    let bash = AuditFilter {
        tool: Some("run_bash".into()),
        ..AuditFilter::default()
    };
    let only = reader.query(&bash).await.unwrap();
    assert_eq!(only.len(), 1);
    assert_eq!(only[0].output_preview, "second");
    reader.close().await;
}

/// A GitHub token, an AWS access key and a private key, planted in calls' inputs and outputs.
pub(crate) const GITHUB_TOKEN: &str = "ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7";
pub(crate) const AWS_KEY: &str = "AKIAYLNKMKFJSA45HBK7";
pub(crate) const KEY_BODY: &str = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw";

/// Calls whose command line, file content and output hold credentials, through the hook and written directly:
/// each is stored with the credentials replaced by markers naming their kind, in the same JSON shape, and its
/// decision, status and everything else as decided. The secrets appear nowhere in what is read back.
pub(crate) async fn credentials_are_stored_redacted(db: &AuditDatabase) {
    let audit = open(db).await;
    let mut shell = post_ctx("r", 1, "run_bash", CallStatus::Ok, "");
    shell.call.args = json!({"command": format!("git push https://x:{GITHUB_TOKEN}@github.com/o/r.git")});
    shell.output.content = format!("aws_access_key_id = {AWS_KEY}\ndone\n");
    let mut write = post_ctx("r", 2, "file_write", CallStatus::Denied, "outside the roots");
    write.call.args = json!({
        "path": "deploy/id_rsa",
        "content": format!("-----BEGIN RSA PRIVATE KEY-----\n{KEY_BODY}\n-----END RSA PRIVATE KEY-----\n"),
    });
    audit.post_tool_use(&shell).await;
    let mut direct = AuditRow::for_call(&write);
    // A row made elsewhere, its preview not redacted by its maker, is redacted as it is stored.
    direct.output_preview = format!("denied: {AWS_KEY}");
    audit.record(direct.clone()).await;
    audit.flush().await.unwrap();

    let stored = rows(db, Some("r")).await;
    assert_eq!(stored.len(), 2);
    let input = |row: &AuditRow| -> serde_json::Value {
        serde_json::from_str(row.tool_input.as_deref().unwrap()).unwrap()
    };
    assert_eq!(
        input(&stored[0]),
        json!({"command": "git push https://x:[redacted: GitHub token]@github.com/o/r.git"})
    );
    assert_eq!(
        stored[0].output_preview,
        "aws_access_key_id = [redacted: AWS access key]\ndone\n"
    );
    assert_eq!(
        input(&stored[1]),
        json!({"path": "deploy/id_rsa", "content": "[redacted: private key]\n"})
    );
    assert_eq!(stored[1].output_preview, "denied: [redacted: AWS access key]");
    // The decision and everything else are as decided.
    assert_eq!(
        (
            stored[0].decision.as_deref(),
            stored[0].status,
            stored[0].decided_by.as_deref()
        ),
        (Some("allow"), AuditStatus::Ok, Some("rules/allow-rule"))
    );
    assert_eq!(
        AuditRow {
            id: None,
            tool_input: direct.tool_input.clone(),
            output_preview: direct.output_preview.clone(),
            ..stored[1].clone()
        },
        direct
    );
    for row in &stored {
        let text = format!("{row:?}");
        for secret in [GITHUB_TOKEN, AWS_KEY, KEY_BODY] {
            assert!(!text.contains(secret), "{secret} stored: {text}");
        }
    }
}
