//! The audit log in SQLite: every decided call and every stop is on disk when the session stop returns, and
//! failures are reported rather than dropped. The behaviours both backends share are written once in
//! tests/behaviour and run here on a file of a temporary directory; the cases below them are SQLite's own.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod behaviour;

use std::path::Path;
use std::time::Duration;

use agent_hooks::{
    AgentHook, AuditAppender, AuditConfig, AuditDatabase, AuditError, AuditFilter, AuditLogHook, AuditReader,
    AuditRow, CallStatus, HookError, PREVIEW_CHARS, SqliteConnectOptions,
};
use behaviour::{post_ctx, stop_ctx};
use sqlx::{ConnectOptions, Executor};
use tempfile::TempDir;

/// The file `audit.db` in `dir`.
fn sqlite_file(dir: &TempDir) -> AuditDatabase {
    AuditDatabase::SqliteFile(dir.path().join("audit.db"))
}

/// The number of rows in the SQLite file at `path`, read through the query that takes a path.
async fn stored(path: &Path) -> usize {
    AuditLogHook::query(path, &AuditFilter::default())
        .await
        .unwrap()
        .len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_and_the_stop_are_on_disk_when_stop_returns() {
    let dir = tempfile::tempdir().unwrap();
    // The parent directory does not exist yet: the hook creates it.
    let path = dir.path().join("nested/.agent-guard/audit.db");
    behaviour::every_call_and_the_stop_are_stored_when_stop_returns(&AuditDatabase::SqliteFile(path.clone()))
        .await;
    assert!(path.is_file());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_senders_through_a_small_channel_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    behaviour::concurrent_senders_through_a_small_channel_lose_nothing(&sqlite_file(&dir)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_run_still_gets_one_row_per_call_and_the_stop_row() {
    let dir = tempfile::tempdir().unwrap();
    behaviour::a_cancelled_run_still_gets_one_row_per_call_and_the_stop_row(&sqlite_file(&dir)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_recorded_directly_and_the_query_filters() {
    let dir = tempfile::tempdir().unwrap();
    behaviour::rows_recorded_directly_and_the_query_filters(&sqlite_file(&dir)).await;
    // Querying never creates a file: a missing one is an error, not an empty log.
    let missing = AuditLogHook::query(&dir.path().join("missing.db"), &AuditFilter::default()).await;
    assert!(matches!(missing, Err(AuditError::Open { .. })), "{missing:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_are_stored_redacted_and_nowhere_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    behaviour::credentials_are_stored_redacted(&sqlite_file(&dir)).await;
    // Not in the database file nor in its write-ahead log: the bytes on disk never held them.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        // SQLite removes its write-ahead log and shared-memory files when the last connection closes, which may
        // be between the listing and the read: a file gone holds nothing on disk.
        let bytes = match std::fs::read(entry.unwrap().path()) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => panic!("{error}"),
        };
        for secret in [behaviour::GITHUB_TOKEN, behaviour::AWS_KEY, behaviour::KEY_BODY] {
            assert!(
                !bytes
                    .windows(secret.len())
                    .any(|window| window == secret.as_bytes()),
                "{secret} on disk"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_reader_sees_later_rows() {
    let dir = tempfile::tempdir().unwrap();
    behaviour::a_held_reader_sees_later_rows(&sqlite_file(&dir)).await;
    // A reader never creates a file either.
    let missing = AuditReader::open(
        &AuditDatabase::SqliteFile(dir.path().join("missing.db")),
        Duration::from_secs(1),
    )
    .await;
    assert!(matches!(missing, Err(AuditError::Open { .. })), "{missing:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_are_idempotent_and_reopening_keeps_earlier_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    behaviour::reopening_keeps_earlier_rows(&AuditDatabase::SqliteFile(path.clone())).await;
    let mut connection = SqliteConnectOptions::new()
        .filename(&path)
        .connect()
        .await
        .unwrap();
    let applied: i64 = sqlx::query_scalar("SELECT count(*) FROM _sqlx_migrations WHERE success")
        .fetch_one(&mut connection)
        .await
        .unwrap();
    assert_eq!(
        applied, 5,
        "each migration ran once; the second open ran none again"
    );
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
    assert_eq!(stored(&path).await, 0);
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
            let on_disk = stored(&path).await;
            assert_eq!(
                on_disk + rows as usize,
                2_001,
                "every row is either on disk or reported lost"
            );
        }
        other => panic!("expected a write error, got {other:?}"),
    }
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
    assert_eq!(stored(&path).await, 2);
    assert!(matches!(
        AuditLogHook::connect("postgres://nowhere").await,
        Err(AuditError::Open { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_that_cannot_be_queued_in_time_are_counted_and_reported() {
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
            let on_disk = stored(&path).await;
            assert_eq!(
                on_disk + rows as usize,
                total as usize + 1,
                "every row is either on disk or reported"
            );
            assert_eq!(
                AuditLogHook::query(
                    &path,
                    &AuditFilter {
                        tool: Some("session".into()),
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

/// The hook's way in: many processes open a new database at once, each with its own connection. The schema is made
/// exactly once (the migration runs inside `BEGIN IMMEDIATE`, the others wait and find it done), every row is
/// written, and the file records its schema version so that later opens skip the migrator altogether.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn appenders_opening_a_new_database_at_once_migrate_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = AuditDatabase::SqliteFile(dir.path().join(".agent-guard/audit.db"));
    let config = AuditConfig {
        busy_timeout: Duration::from_secs(10),
        ..AuditConfig::default()
    };
    let writers: Vec<_> = (0..24_u32)
        .map(|n| {
            let (db, config) = (db.clone(), config.clone());
            tokio::spawn(async move {
                let mut log = AuditAppender::open(&db, &config).await?;
                let row = AuditRow::for_call(&post_ctx("s", n, "Bash", CallStatus::Ok, "ok"));
                log.append(&[row]).await?;
                log.close().await;
                Ok::<(), AuditError>(())
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap().unwrap();
    }
    let path = dir.path().join(".agent-guard/audit.db");
    assert_eq!(stored(&path).await, 24);
    assert!(dir.path().join(".agent-guard/.gitignore").is_file());
    let mut connection = SqliteConnectOptions::new()
        .filename(&path)
        .connect()
        .await
        .unwrap();
    let applied: i64 = sqlx::query_scalar("SELECT count(*) FROM _sqlx_migrations WHERE success")
        .fetch_one(&mut connection)
        .await
        .unwrap();
    assert_eq!(applied, 5, "each migration ran once");
    let version: i64 = sqlx::query_scalar("PRAGMA user_version")
        .fetch_one(&mut connection)
        .await
        .unwrap();
    assert_eq!(version, applied, "the schema version is the last migration's");
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&mut connection)
        .await
        .unwrap();
    assert_eq!(mode, "wal");

    // A database the runtime made before the version was recorded gets it on the next open, without migrating.
    connection.execute("PRAGMA user_version = 0").await.unwrap();
    let log = AuditAppender::open(&db, &config).await.unwrap();
    log.close().await;
    let version: i64 = sqlx::query_scalar("PRAGMA user_version")
        .fetch_one(&mut connection)
        .await
        .unwrap();
    assert_eq!(version, 5);
    let applied: i64 = sqlx::query_scalar("SELECT count(*) FROM _sqlx_migrations")
        .fetch_one(&mut connection)
        .await
        .unwrap();
    assert_eq!(applied, 5);
}

/// A database another connection holds the write lock of is waited for within the busy timeout, then reported
/// as a write error naming the rows lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_appender_waits_for_a_lock_within_its_busy_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite_file(&dir);
    let config = AuditConfig {
        busy_timeout: Duration::from_millis(300),
        ..AuditConfig::default()
    };
    AuditAppender::open(&db, &config).await.unwrap().close().await;
    let mut holder = SqliteConnectOptions::new()
        .filename(dir.path().join("audit.db"))
        .connect()
        .await
        .unwrap();
    holder.execute("BEGIN IMMEDIATE").await.unwrap();
    let mut log = AuditAppender::open(&db, &config).await.unwrap();
    let started = std::time::Instant::now();
    let error = log
        .append(&[AuditRow::for_call(&post_ctx(
            "s",
            1,
            "Bash",
            CallStatus::Ok,
            "ok",
        ))])
        .await
        .unwrap_err();
    assert!(started.elapsed() >= Duration::from_millis(250), "it waited");
    assert!(matches!(error, AuditError::Write { rows: 1, .. }), "{error}");
    assert!(error.to_string().contains("locked"), "{error}");
    holder.execute("ROLLBACK").await.unwrap();
    log.append(&[AuditRow::for_call(&post_ctx(
        "s",
        1,
        "Bash",
        CallStatus::Ok,
        "ok",
    ))])
    .await
    .unwrap();
    log.close().await;
    assert_eq!(stored(&dir.path().join("audit.db")).await, 1);
}

/// A database written before `TAINT_CLEARED` existed (the first three migrations, a row in it) is migrated on the
/// next open for writing: its rows and their ids are kept, and a cleared taint's row is accepted and read back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_database_is_migrated_to_take_cleared_taints_and_keeps_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let older = dir.path().join("migrations");
    std::fs::create_dir(&older).unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/sqlite");
    let mut files: Vec<_> = std::fs::read_dir(&source)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    files.sort();
    for name in files.iter().take(3) {
        std::fs::copy(source.join(name), older.join(name)).unwrap();
    }
    let path = dir.path().join("audit.db");
    let mut connection = SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true)
        .connect()
        .await
        .unwrap();
    sqlx::migrate::Migrator::new(older.as_path())
        .await
        .unwrap()
        .run(&mut connection)
        .await
        .unwrap();
    connection
        .execute(
            "INSERT INTO agent_audit_log (id, session_id, step, tool_name, status, decision, decided_by, elapsed_ms, \
             output_preview, agent_name, ts, approver) VALUES (41, 's', 0, 'Bash', 'OK', 'allow', 'rules/allow-rule', \
             1, 'ok', 'hook', '2026-12-01T00:00:00.000Z', 'terminal'); PRAGMA user_version = 3;",
        )
        .await
        .unwrap();
    let refused = connection
        .execute(
            "INSERT INTO agent_audit_log (session_id, step, tool_name, status, elapsed_ms, output_preview, \
             agent_name, ts) VALUES ('s', 0, 'session', 'TAINT_CLEARED', 0, '', 'x', '2026-12-01T00:00:01.000Z')",
        )
        .await;
    assert!(refused.is_err(), "the older schema refuses the new status");

    let db = AuditDatabase::SqliteFile(path.clone());
    let mut log = AuditAppender::open(&db, &AuditConfig::default()).await.unwrap();
    let cleared = AuditRow::taint_cleared(
        "s",
        "session-clear",
        "untrusted content: `WebFetch https://a.example` (fetched); private data: none; 0 domains reached",
        &serde_json::json!({"untrusted": {"call": "WebFetch https://a.example", "why": "fetched"}}),
        "cli:mira",
        Some("/p"),
    );
    log.append(std::slice::from_ref(&cleared)).await.unwrap();
    log.close().await;
    let mut reader = AuditReader::open(&db, Duration::from_secs(5)).await.unwrap();
    let rows = reader.query(&AuditFilter::default()).await.unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0].id, Some(41));
    assert_eq!(rows[0].detail.approver.as_deref(), Some("terminal"));
    assert_eq!(rows[0].decided_by.as_deref(), Some("rules/allow-rule"));
    assert_eq!(rows[1].status, agent_hooks::AuditStatus::TaintCleared);
    assert_eq!(rows[1].detail.approver.as_deref(), Some("cli:mira"));
    assert_eq!(rows[1].decision, None);
    assert_eq!(rows[1].cwd.as_deref(), Some("/p"));
    assert!(
        rows[1]
            .tool_input
            .as_deref()
            .unwrap()
            .contains("WebFetch https://a.example")
    );
    reader.close().await;
}
