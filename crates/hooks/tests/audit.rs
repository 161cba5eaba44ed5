//! The audit log: every decided call and every stop is on disk when the session stop returns, and failures are
//! reported rather than dropped.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_hooks::{
    AgentHook, AuditConfig, AuditError, AuditFilter, AuditLogHook, AuditRow, AuditStatus, CallStatus,
    CancellationHook, HookError, HookRegistry, PREVIEW_CHARS, PostToolUseContext, PreToolUseContext,
    SESSION_TOOL_NAME, SessionContext, SessionStopContext, SqliteConnectOptions,
};
use agent_tool_traits::{
    CancelRegistry, DecidedBy, Decision, Layer, Provenance, ToolCall, ToolOutput, Verdict,
};
use serde_json::json;

fn post_ctx(session: &str, step: u32, tool: &str, status: CallStatus, content: &str) -> PostToolUseContext {
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
        output: ToolOutput {
            content: content.into(),
            is_error: status == CallStatus::Fail,
        },
        status,
        verdict,
        elapsed: Duration::from_millis(u64::from(step)),
    }
}

fn stop_ctx(session: &str, cancelled: bool) -> SessionStopContext {
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

async fn rows(path: &Path, session: Option<&str>) -> Vec<AuditRow> {
    let filter = AuditFilter {
        session_id: session.map(str::to_owned),
        ..AuditFilter::default()
    };
    AuditLogHook::query(path, &filter).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_and_the_stop_are_on_disk_when_stop_returns() {
    let dir = tempfile::tempdir().unwrap();
    // The parent directory does not exist yet: the hook creates it.
    let path = dir.path().join("nested/.agent-guard/audit.db");
    let audit = AuditLogHook::open(&path).await.unwrap();
    let mut hooks = HookRegistry::new();
    hooks.register(Arc::new(audit.clone()));
    let session = SessionContext {
        session_id: "s1".into(),
        agent_name: "lead".into(),
        cwd: dir.path().into(),
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
    let stored = rows(&path, None).await;
    assert_eq!(stored.len(), n as usize + 1);
    let first = &stored[0];
    assert_eq!(
        (first.session_id.as_str(), first.step, first.tool_name.as_str()),
        ("s1", 1, "read_file")
    );
    assert_eq!(first.status, AuditStatus::Fail);
    assert_eq!(first.decision.as_deref(), Some("allow"));
    assert_eq!(first.decided_by.as_deref(), Some("rules/allow-rule"));
    assert_eq!(first.output_preview.chars().count(), PREVIEW_CHARS);
    assert!(long.starts_with(&first.output_preview));
    assert_eq!(first.agent_name, "lead");
    assert_eq!(stored[1].status, AuditStatus::Denied);
    assert_eq!(stored[1].decided_by.as_deref(), Some("hooks/hook-block"));
    assert_eq!(stored[2].status, AuditStatus::Ok);
    let last = stored.last().unwrap();
    assert_eq!(
        (last.tool_name.as_str(), last.status),
        (SESSION_TOOL_NAME, AuditStatus::SessionStop)
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_senders_through_a_small_channel_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    // A tiny channel forces the senders to wait for the writer; the send timeout is long enough not to drop.
    let config = AuditConfig {
        capacity: 16,
        max_batch: 64,
        send_timeout: Duration::from_secs(10),
        ..AuditConfig::default()
    };
    let audit = AuditLogHook::open_with(&path, config).await.unwrap();
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

    let stored = rows(&path, Some("s1")).await;
    assert_eq!(stored.len(), (senders * per_sender) as usize + 1);
    let tool_0 = AuditFilter {
        tool: Some("tool_0".into()),
        ..AuditFilter::default()
    };
    let of_tool_0 = AuditLogHook::query(&path, &tool_0).await.unwrap();
    assert_eq!(of_tool_0.len(), per_sender as usize);
    assert!(
        of_tool_0.windows(2).all(|pair| pair[0].step < pair[1].step),
        "one sender's rows keep their order"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_run_still_gets_one_row_per_call_and_the_stop_row() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let cancelled = CancelRegistry::new();
    let mut hooks = HookRegistry::new();
    hooks.register(Arc::new(CancellationHook::new(cancelled.clone())));
    hooks.register(Arc::new(AuditLogHook::open(&path).await.unwrap()));

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
            cwd: dir.path().into(),
            permission_mode: "default".into(),
        };
        let outcome = hooks.run_pre_tool_use(&pre).await;
        assert!(outcome.blocked.is_some());
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

    let stored = rows(&path, Some("run")).await;
    assert_eq!(stored.len(), calls + 1);
    assert_eq!(
        stored
            .iter()
            .filter(|row| row.status == AuditStatus::Denied)
            .count(),
        3
    );
    assert_eq!(stored.last().unwrap().output_preview, "cancelled by the user");
    assert!(!cancelled.is_cancelled("run"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_database_is_reported_at_stop() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    // Create the schema first, then reopen the same file read-only.
    let writable = AuditLogHook::open(&path).await.unwrap();
    writable.flush().await.unwrap();
    drop(writable);

    let options = SqliteConnectOptions::new().filename(&path).read_only(true);
    let audit = AuditLogHook::connect_with(options, AuditConfig::default())
        .await
        .unwrap();
    for step in 1..=5 {
        audit
            .post_tool_use(&post_ctx("s1", step, "read_file", CallStatus::Ok, "x"))
            .await;
    }
    match audit.on_session_stop(&stop_ctx("s1", false)).await {
        Err(HookError::Audit(AuditError::Write { rows, source })) => {
            assert_eq!(rows, 6, "the five calls and the stop row are reported lost");
            assert!(source.to_string().contains("readonly"), "{source}");
        }
        other => panic!("expected a write error, got {other:?}"),
    }
    assert!(rows(&path, None).await.is_empty());
    // The error is reported once; the next flush starts clean.
    audit.flush().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_is_reported_at_stop() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    // SQLite's page limit stands in for a full disk: the same SQLITE_FULL error, without filling a real one.
    let options = SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true)
        .pragma("max_page_count", "12");
    let audit = AuditLogHook::connect_with(options, AuditConfig::default())
        .await
        .unwrap();
    let bulky = "x".repeat(PREVIEW_CHARS);
    for step in 1..=2_000 {
        audit
            .post_tool_use(&post_ctx("s1", step, "read_file", CallStatus::Ok, &bulky))
            .await;
    }
    match audit.on_session_stop(&stop_ctx("s1", false)).await {
        Err(HookError::Audit(AuditError::Write { rows, source })) => {
            assert!(rows > 0);
            assert!(source.to_string().contains("full"), "{source}");
            let stored = rows_count(&path).await;
            assert_eq!(
                stored + rows as usize,
                2_001,
                "every row is either on disk or reported lost"
            );
        }
        other => panic!("expected a write error, got {other:?}"),
    }
}

async fn rows_count(path: &Path) -> usize {
    rows(path, None).await.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_recorded_directly_and_the_query_filters() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let audit = AuditLogHook::open(&path).await.unwrap();
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
    audit.record(manual.clone()).await;
    audit.flush().await.unwrap();

    assert_eq!(rows(&path, Some("a")).await.len(), 3);
    let read_in_b = AuditFilter {
        session_id: Some("b".into()),
        tool: Some("read_file".into()),
        ..AuditFilter::default()
    };
    assert_eq!(AuditLogHook::query(&path, &read_in_b).await.unwrap().len(), 2);
    let limited = AuditFilter {
        limit: Some(2),
        ..AuditFilter::default()
    };
    assert_eq!(AuditLogHook::query(&path, &limited).await.unwrap().len(), 2);
    let future = AuditFilter {
        since: Some("2999-01-01T00:00:00Z".into()),
        ..AuditFilter::default()
    };
    assert!(AuditLogHook::query(&path, &future).await.unwrap().is_empty());
    let past = AuditFilter {
        since: Some("2000-01-01T00:00:00Z".into()),
        ..AuditFilter::default()
    };
    assert_eq!(AuditLogHook::query(&path, &past).await.unwrap().len(), 5);

    let stored = rows(&path, Some("a")).await;
    let written = stored.last().unwrap();
    assert_eq!(
        AuditRow {
            id: None,
            ..written.clone()
        },
        manual
    );

    let missing = AuditLogHook::query(&dir.path().join("missing.db"), &AuditFilter::default()).await;
    assert!(matches!(missing, Err(AuditError::Open { .. })), "{missing:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reopening_keeps_earlier_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    for run in ["first", "second"] {
        let audit = AuditLogHook::open(&path).await.unwrap();
        audit
            .post_tool_use(&post_ctx(run, 1, "read_file", CallStatus::Ok, "ok"))
            .await;
        audit.on_session_stop(&stop_ctx(run, false)).await.unwrap();
    }
    assert_eq!(rows(&path, None).await.len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_opens_the_same_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("by-url.db");
    let audit = AuditLogHook::connect(&format!("sqlite://{}?mode=rwc", path.display()))
        .await
        .unwrap();
    audit
        .post_tool_use(&post_ctx("s1", 1, "read_file", CallStatus::Ok, "ok"))
        .await;
    audit.on_session_stop(&stop_ctx("s1", false)).await.unwrap();
    assert_eq!(rows(&path, None).await.len(), 2);
    assert!(matches!(
        AuditLogHook::connect("postgres://nowhere").await,
        Err(AuditError::Open { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_that_cannot_be_queued_in_time_are_counted_and_reported() {
    use sqlx::{ConnectOptions, Executor};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let config = AuditConfig {
        capacity: 4,
        max_batch: 4,
        send_timeout: Duration::from_millis(5),
        busy_timeout: Duration::from_secs(10),
        ..AuditConfig::default()
    };
    let audit = AuditLogHook::open_with(&path, config).await.unwrap();
    // Another process holds the write lock, so the writer is stuck on its first batch and the channel fills up.
    let mut locker = SqliteConnectOptions::new()
        .filename(&path)
        .connect()
        .await
        .unwrap();
    locker.execute("BEGIN IMMEDIATE").await.unwrap();

    let total = 40u32;
    for step in 1..=total {
        let started = std::time::Instant::now();
        audit
            .post_tool_use(&post_ctx("s1", step, "read_file", CallStatus::Ok, "ok"))
            .await;
        // A full channel costs a caller at most the send timeout, never the writer's wait.
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "post_tool_use waited {:?}",
            started.elapsed()
        );
    }
    locker.execute("COMMIT").await.unwrap();

    match audit.on_session_stop(&stop_ctx("s1", false)).await {
        Err(HookError::Audit(AuditError::Dropped { rows })) => {
            assert!(rows > 0);
            let stored = rows_count(&path).await;
            assert_eq!(
                stored + rows as usize,
                total as usize + 1,
                "every row is either on disk or reported"
            );
            assert_eq!(
                AuditLogHook::query(
                    &path,
                    &AuditFilter {
                        tool: Some(SESSION_TOOL_NAME.into()),
                        ..AuditFilter::default()
                    }
                )
                .await
                .unwrap()
                .len(),
                1,
                "the stop row is never dropped"
            );
        }
        other => panic!("expected dropped rows to be reported, got {other:?}"),
    }
    // Reported once: the next flush is clean.
    audit.flush().await.unwrap();
}
