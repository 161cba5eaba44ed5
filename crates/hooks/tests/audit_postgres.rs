//! The audit log in PostgreSQL behaves as in SQLite: every decided call and every stop is in the table when the
//! session stop returns, failures are reported rather than dropped, and an unreachable server is an error naming
//! its URL. One throwaway server (tests/pg) serves every case, each in a database of its own; the cases run one
//! after the other and the server is removed at the end.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod pg;

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_hooks::{
    AgentHook, AuditConfig, AuditDatabase, AuditError, AuditFilter, AuditLogHook, AuditRow, AuditStatus,
    CallStatus, CancellationHook, HookError, HookRegistry, PREVIEW_CHARS, PostToolUseContext,
    PreToolUseContext, SESSION_TOOL_NAME, SessionContext, SessionStopContext,
};
use agent_tool_traits::{
    CancelRegistry, DecidedBy, Decision, Layer, Provenance, ToolCall, ToolOutput, Verdict,
};
use pg::PgServer;
use serde_json::json;

type Case = for<'a> fn(&'a PgServer) -> Pin<Box<dyn Future<Output = ()> + 'a>>;

macro_rules! cases {
    ($($name:ident),* $(,)?) => {
        [$((stringify!($name), (|server| Box::pin($name(server))) as Case)),*]
    };
}

fn main() -> ExitCode {
    let filter: Option<String> = std::env::args().skip(1).find(|arg| !arg.starts_with('-'));
    let Some(server) = PgServer::start_or_skip("agent-hooks (tests/audit_postgres.rs)") else {
        return ExitCode::SUCCESS;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // The case that stops and restarts the server comes last.
    let cases = cases![
        every_call_and_the_stop_are_in_the_table_when_stop_returns,
        concurrent_senders_through_a_small_channel_lose_nothing,
        a_cancelled_run_still_gets_one_row_per_call_and_the_stop_row,
        rows_recorded_directly_and_the_query_filters,
        migrations_are_idempotent_and_reopening_keeps_earlier_rows,
        every_url_form_selects_postgres,
        an_unreachable_server_is_an_error_naming_the_url,
        a_write_the_server_refuses_is_reported_at_stop,
        a_lost_server_is_reported_and_the_writer_connects_again,
    ];
    let started = Instant::now();
    let mut failed = Vec::new();
    let mut ran = 0;
    for (name, case) in cases {
        if filter.as_deref().is_some_and(|filter| !name.contains(filter)) {
            continue;
        }
        ran += 1;
        let case_started = Instant::now();
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| runtime.block_on(case(&server))));
        let verdict = if outcome.is_ok() { "ok" } else { "FAILED" };
        println!(
            "test {name} ... {verdict} ({:.2} s)",
            case_started.elapsed().as_secs_f64()
        );
        if outcome.is_err() {
            failed.push(name);
        }
    }
    println!(
        "\ntest result: {}. {} passed; {} failed; finished in {:.2}s",
        if failed.is_empty() { "ok" } else { "FAILED" },
        ran - failed.len(),
        failed.len(),
        started.elapsed().as_secs_f64()
    );
    drop(server);
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        println!("failures: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}

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

fn database(url: &str) -> AuditDatabase {
    let db = AuditDatabase::parse(url).unwrap();
    assert!(db.is_postgres(), "{url}");
    db
}

async fn open(url: &str) -> AuditLogHook {
    AuditLogHook::open_database(&database(url), AuditConfig::default())
        .await
        .unwrap()
}

async fn rows(url: &str, session: Option<&str>) -> Vec<AuditRow> {
    let filter = AuditFilter {
        session_id: session.map(str::to_owned),
        ..AuditFilter::default()
    };
    AuditLogHook::query_database(&database(url), &filter)
        .await
        .unwrap()
}

async fn every_call_and_the_stop_are_in_the_table_when_stop_returns(server: &PgServer) {
    let url = server.create_database("every_call");
    let audit = open(&url).await;
    assert_eq!(audit.target(), url);
    let mut hooks = HookRegistry::new();
    hooks.register(Arc::new(audit.clone()));
    let session = SessionContext {
        session_id: "s1".into(),
        agent_name: "lead".into(),
        cwd: "/work".into(),
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
    let stored = rows(&url, None).await;
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
    // The server enforces the preview bound in characters, not bytes: 200 two-byte characters are 400 bytes.
    assert_eq!(
        server.psql(
            "every_call",
            "SELECT max(char_length(output_preview)), max(octet_length(output_preview)) FROM agent_audit_log"
        ),
        "200|400"
    );
}

async fn concurrent_senders_through_a_small_channel_lose_nothing(server: &PgServer) {
    let url = server.create_database("concurrent");
    // A tiny channel forces the senders to wait for the writer; the send timeout is long enough not to drop.
    let config = AuditConfig {
        capacity: 16,
        max_batch: 64,
        send_timeout: Duration::from_secs(10),
        ..AuditConfig::default()
    };
    let audit = AuditLogHook::open_database(&database(&url), config)
        .await
        .unwrap();
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

    let stored = rows(&url, Some("s1")).await;
    assert_eq!(stored.len(), (senders * per_sender) as usize + 1);
    let tool_0 = AuditFilter {
        tool: Some("tool_0".into()),
        ..AuditFilter::default()
    };
    let of_tool_0 = AuditLogHook::query_database(&database(&url), &tool_0)
        .await
        .unwrap();
    assert_eq!(of_tool_0.len(), per_sender as usize);
    assert!(
        of_tool_0.windows(2).all(|pair| pair[0].step < pair[1].step),
        "one sender's rows keep their order"
    );
}

async fn a_cancelled_run_still_gets_one_row_per_call_and_the_stop_row(server: &PgServer) {
    let url = server.create_database("cancelled");
    let cancelled = CancelRegistry::new();
    let mut hooks = HookRegistry::new();
    hooks.register(Arc::new(CancellationHook::new(cancelled.clone())));
    hooks.register(Arc::new(open(&url).await));

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
            cwd: "/work".into(),
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

    let stored = rows(&url, Some("run")).await;
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

async fn rows_recorded_directly_and_the_query_filters(server: &PgServer) {
    let url = server.create_database("filters");
    let db = database(&url);
    let audit = open(&url).await;
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

    assert_eq!(rows(&url, Some("a")).await.len(), 3);
    let read_in_b = AuditFilter {
        session_id: Some("b".into()),
        tool: Some("read_file".into()),
        ..AuditFilter::default()
    };
    assert_eq!(
        AuditLogHook::query_database(&db, &read_in_b).await.unwrap().len(),
        2
    );
    let limited = AuditFilter {
        limit: Some(2),
        ..AuditFilter::default()
    };
    assert_eq!(
        AuditLogHook::query_database(&db, &limited).await.unwrap().len(),
        2
    );
    let future = AuditFilter {
        since: Some("2999-01-01T00:00:00Z".into()),
        ..AuditFilter::default()
    };
    assert!(
        AuditLogHook::query_database(&db, &future)
            .await
            .unwrap()
            .is_empty()
    );
    // A date alone and a time without milliseconds compare as times with the "C" collation of `ts`.
    for since in ["2000-01-01", "2000-01-01T00:00:00Z"] {
        let past = AuditFilter {
            since: Some(since.into()),
            ..AuditFilter::default()
        };
        assert_eq!(AuditLogHook::query_database(&db, &past).await.unwrap().len(), 5);
    }

    let stored = rows(&url, Some("a")).await;
    let written = stored.last().unwrap();
    assert_eq!(
        AuditRow {
            id: None,
            ..written.clone()
        },
        manual
    );
}

async fn migrations_are_idempotent_and_reopening_keeps_earlier_rows(server: &PgServer) {
    let url = server.create_database("reopen");
    for run in ["first", "second"] {
        let audit = open(&url).await;
        audit
            .post_tool_use(&post_ctx(run, 1, "read_file", CallStatus::Ok, "ok"))
            .await;
        audit.on_session_stop(&stop_ctx(run, false)).await.unwrap();
    }
    assert_eq!(rows(&url, None).await.len(), 4);
    // Two processes opening a fresh database at once: the migrator's lock lets one create the table.
    let fresh = server.create_database("reopen_together");
    let (one, two) = tokio::join!(open(&fresh), open(&fresh));
    one.flush().await.unwrap();
    two.flush().await.unwrap();
    assert_eq!(
        server.psql(
            "reopen_together",
            "SELECT count(*) FROM _sqlx_migrations WHERE success"
        ),
        "1"
    );
    assert_eq!(
        server.psql("reopen", "SELECT count(*) FROM _sqlx_migrations WHERE success"),
        "1"
    );
}

async fn every_url_form_selects_postgres(server: &PgServer) {
    server.create_database("url_forms");
    let tcp = server.url("url_forms");
    let forms = [
        tcp.clone(),
        tcp.replacen("postgres://", "postgresql://", 1),
        server.socket_url("url_forms"),
    ];
    for (index, url) in forms.iter().enumerate() {
        let audit = AuditLogHook::connect(url).await.unwrap();
        let session = format!("form{index}");
        audit
            .post_tool_use(&post_ctx(&session, 1, "read_file", CallStatus::Ok, "ok"))
            .await;
        audit.on_session_stop(&stop_ctx(&session, false)).await.unwrap();
    }
    assert_eq!(rows(&tcp, None).await.len(), 2 * forms.len());
}

async fn an_unreachable_server_is_an_error_naming_the_url(_server: &PgServer) {
    // Nobody listens on the port: the connection is refused.
    let url = format!("postgres://audit:s3cret@127.0.0.1:{}/agent", pg::free_port());
    let shown = url.replace("s3cret", "***");
    let started = Instant::now();
    let opened = AuditLogHook::connect(&url).await;
    match &opened {
        Err(error @ AuditError::Open { target, .. }) => {
            assert_eq!(target, &shown);
            let message = error.to_string();
            assert!(message.contains(&format!("`{shown}`")), "{message}");
            assert!(!message.contains("s3cret"), "{message}");
            assert!(
                std::error::Error::source(error)
                    .unwrap()
                    .to_string()
                    .contains("refused"),
                "{message}"
            );
        }
        other => panic!("expected an open error, got {other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let queried = AuditLogHook::query_database(&database(&url), &AuditFilter::default()).await;
    assert!(
        matches!(&queried, Err(AuditError::Open { target, .. }) if target == &shown),
        "{queried:?}"
    );

    // A port that accepts connections and never answers: the connect timeout bounds the wait.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("postgres://audit@{}/agent", silent.local_addr().unwrap());
    let config = AuditConfig {
        connect_timeout: Duration::from_millis(300),
        ..AuditConfig::default()
    };
    let started = Instant::now();
    match AuditLogHook::open_database(&database(&url), config).await {
        Err(error @ AuditError::Open { .. }) => {
            let message = error.to_string();
            assert!(message.contains(&format!("`{url}`")), "{message}");
            assert!(message.contains("no connection within 300 ms"), "{message}");
        }
        other => panic!("expected an open error, got {other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

async fn a_write_the_server_refuses_is_reported_at_stop(server: &PgServer) {
    let url = server.create_database("refused");
    let audit = open(&url).await;
    audit
        .post_tool_use(&post_ctx("s1", 1, "read_file", CallStatus::Ok, "kept"))
        .await;
    audit.flush().await.unwrap();
    // The table turns read-only under the writer, as a revoked grant or a read-only replica would make it.
    server.psql(
        "refused",
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN RAISE EXCEPTION 'audit table is read-only'; END $$; \
         CREATE TRIGGER refuse BEFORE INSERT ON agent_audit_log FOR EACH STATEMENT EXECUTE FUNCTION refuse();",
    );
    for step in 2..=5 {
        audit
            .post_tool_use(&post_ctx("s1", step, "read_file", CallStatus::Ok, "lost"))
            .await;
    }
    match audit.on_session_stop(&stop_ctx("s1", false)).await {
        Err(HookError::Audit(AuditError::Write { rows, source })) => {
            assert_eq!(rows, 5, "the four calls and the stop row are reported lost");
            assert!(source.to_string().contains("read-only"), "{source}");
        }
        other => panic!("expected a write error, got {other:?}"),
    }
    assert_eq!(rows(&url, None).await.len(), 1);
    // Reported once: the next flush starts clean, and the writer works again once the table takes rows.
    audit.flush().await.unwrap();
    server.psql("refused", "DROP TRIGGER refuse ON agent_audit_log");
    audit.on_session_stop(&stop_ctx("s1", false)).await.unwrap();
    assert_eq!(rows(&url, None).await.len(), 2);
}

async fn a_lost_server_is_reported_and_the_writer_connects_again(server: &PgServer) {
    let url = server.create_database("lost");
    let audit = open(&url).await;
    for step in 1..=3 {
        audit
            .post_tool_use(&post_ctx("s1", step, "read_file", CallStatus::Ok, "before"))
            .await;
    }
    audit.flush().await.unwrap();

    server.stop();
    for step in 4..=5 {
        let started = Instant::now();
        audit
            .post_tool_use(&post_ctx("s1", step, "read_file", CallStatus::Ok, "while down"))
            .await;
        assert!(
            started.elapsed() < Duration::from_millis(100),
            "a call never waits for the server"
        );
    }
    match audit.flush().await {
        Err(AuditError::Write { rows, .. }) => assert_eq!(rows, 2),
        other => {
            panic!("expected the two rows written while the server was down to be reported, got {other:?}")
        }
    }

    server.restart();
    audit
        .post_tool_use(&post_ctx("s1", 6, "read_file", CallStatus::Ok, "after"))
        .await;
    audit.on_session_stop(&stop_ctx("s1", false)).await.unwrap();
    let stored = rows(&url, None).await;
    let steps: Vec<u32> = stored.iter().map(|row| row.step).collect();
    assert_eq!(
        steps,
        [1, 2, 3, 6, 7],
        "the rows before and after, and the stop row"
    );
}
