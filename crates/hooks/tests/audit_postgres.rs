//! The audit log in PostgreSQL behaves as in SQLite: every decided call and every stop is in the table when the
//! session stop returns, failures are reported rather than dropped, and an unreachable server is an error naming
//! its URL. The behaviours both backends share are written once in tests/behaviour; the cases here run them on
//! PostgreSQL and add what only the server can show. One throwaway server (tests/pg) serves every case, each in a
//! database of its own; the cases run one after the other and the server is removed at the end.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod behaviour;
mod pg;

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use agent_hooks::{
    AgentHook, AuditConfig, AuditDatabase, AuditError, AuditFilter, AuditLogHook, AuditReader, AuditRow,
    CallStatus, HookError,
};
use behaviour::{post_ctx, stop_ctx};
use pg::PgServer;

type Case = for<'a> fn(&'a PgServer) -> Pin<Box<dyn Future<Output = ()> + 'a>>;

macro_rules! cases {
    ($($name:ident),* $(,)?) => {
        [$((stringify!($name), (|server| Box::pin($name(server))) as Case)),*]
    };
}

fn main() -> ExitCode {
    let filter: Option<String> = std::env::args().skip(1).find(|arg| !arg.starts_with('-'));
    let Some(server) = PgServer::start_or_skip() else {
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
        credentials_are_stored_redacted,
        rows_recorded_directly_and_the_query_filters,
        migrations_are_idempotent_and_reopening_keeps_earlier_rows,
        a_held_reader_sees_later_rows,
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

fn database(url: &str) -> AuditDatabase {
    let db = AuditDatabase::parse(url).unwrap();
    assert!(db.is_postgres(), "{url}");
    db
}

/// A new empty database `name` on `server`.
fn fresh_database(server: &PgServer, name: &str) -> AuditDatabase {
    database(&server.create_database(name))
}

async fn rows(url: &str) -> Vec<AuditRow> {
    behaviour::rows(&database(url), None).await
}

async fn every_call_and_the_stop_are_in_the_table_when_stop_returns(server: &PgServer) {
    let url = server.create_database("every_call");
    let db = database(&url);
    // Without a password the target shown is the URL as written.
    assert_eq!(db.to_string(), url);
    behaviour::every_call_and_the_stop_are_stored_when_stop_returns(&db).await;
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
    behaviour::concurrent_senders_through_a_small_channel_lose_nothing(&fresh_database(server, "concurrent"))
        .await;
}

async fn a_cancelled_run_still_gets_one_row_per_call_and_the_stop_row(server: &PgServer) {
    behaviour::a_cancelled_run_still_gets_one_row_per_call_and_the_stop_row(&fresh_database(
        server,
        "cancelled",
    ))
    .await;
}

async fn rows_recorded_directly_and_the_query_filters(server: &PgServer) {
    behaviour::rows_recorded_directly_and_the_query_filters(&fresh_database(server, "filters")).await;
}

async fn credentials_are_stored_redacted(server: &PgServer) {
    behaviour::credentials_are_stored_redacted(&fresh_database(server, "redacted")).await;
}

async fn a_held_reader_sees_later_rows(server: &PgServer) {
    behaviour::a_held_reader_sees_later_rows(&fresh_database(server, "reader")).await;
}

async fn migrations_are_idempotent_and_reopening_keeps_earlier_rows(server: &PgServer) {
    behaviour::reopening_keeps_earlier_rows(&fresh_database(server, "reopen")).await;
    // Two processes opening a fresh database at once: the migrator's lock lets one create the table.
    let fresh = fresh_database(server, "reopen_together");
    let (one, two) = tokio::join!(behaviour::open(&fresh), behaviour::open(&fresh));
    one.flush().await.unwrap();
    two.flush().await.unwrap();
    assert_eq!(
        server.psql(
            "reopen_together",
            "SELECT count(*) FROM _sqlx_migrations WHERE success"
        ),
        "5"
    );
    assert_eq!(
        server.psql("reopen", "SELECT count(*) FROM _sqlx_migrations WHERE success"),
        "5"
    );
    // The status check is the migrated one: a cleared taint's row is taken, any other status still refused.
    assert_eq!(
        server.psql(
            "reopen",
            "SELECT count(*) FROM pg_constraint WHERE conrelid = 'agent_audit_log'::regclass AND contype = 'c' \
             AND pg_get_constraintdef(oid) LIKE '%TAINT_CLEARED%'"
        ),
        "1"
    );
    assert_eq!(
        server.psql(
            "reopen",
            "SELECT count(*) FROM pg_constraint WHERE conrelid = 'agent_audit_log'::regclass AND contype = 'c'"
        ),
        "1",
        "the older check is gone"
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
    assert_eq!(rows(&tcp).await.len(), 2 * forms.len());
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
    let audit = behaviour::open(&database(&url)).await;
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
    assert_eq!(rows(&url).await.len(), 1);
    // Reported once: the next flush starts clean, and the writer works again once the table takes rows.
    audit.flush().await.unwrap();
    server.psql("refused", "DROP TRIGGER refuse ON agent_audit_log");
    audit.on_session_stop(&stop_ctx("s1", false)).await.unwrap();
    assert_eq!(rows(&url).await.len(), 2);
}

async fn a_lost_server_is_reported_and_the_writer_connects_again(server: &PgServer) {
    let url = server.create_database("lost");
    let audit = behaviour::open(&database(&url)).await;
    for step in 1..=3 {
        audit
            .post_tool_use(&post_ctx("s1", step, "read_file", CallStatus::Ok, "before"))
            .await;
    }
    audit.flush().await.unwrap();
    let mut reader = AuditReader::open(&database(&url), Duration::from_secs(2))
        .await
        .unwrap();
    assert_eq!(reader.query(&AuditFilter::default()).await.unwrap().len(), 3);

    server.stop();
    let lost = reader.query(&AuditFilter::default()).await;
    assert!(
        matches!(lost, Err(AuditError::Query { .. } | AuditError::Open { .. })),
        "{lost:?}"
    );
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
    let stored = rows(&url).await;
    let steps: Vec<u32> = stored.iter().map(|row| row.step).collect();
    assert_eq!(
        steps,
        [1, 2, 3, 6, 7],
        "the rows before and after, and the stop row"
    );
    // The reader held across the restart connects again on its next query.
    assert_eq!(reader.query(&AuditFilter::default()).await.unwrap().len(), 5);
    reader.close().await;
}
