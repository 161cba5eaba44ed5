//! The writer's linger ([`AuditConfig::linger`]): rows gathered for one commit are still committed within the
//! linger without anyone asking, at once when a flush or `commit_queued` asks or the last clone is dropped, and
//! `commit_queued` leaves the failures to the flush that reports them.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::Path;
use std::time::{Duration, Instant};

use agent_hooks::{
    AuditConfig, AuditDetail, AuditError, AuditFilter, AuditLogHook, AuditRow, AuditStatus,
    SqliteConnectOptions,
};

/// Longer than any of these tests may take: a row that waited for it would fail the test's own bound.
const LONG: Duration = Duration::from_secs(600);

/// What no test here may take, on a loaded machine.
const BOUND: Duration = Duration::from_secs(30);

fn row(step: u32) -> AuditRow {
    AuditRow {
        id: None,
        session_id: "s-linger".into(),
        step,
        tool_name: "Bash".into(),
        status: AuditStatus::Ok,
        decision: Some("allow".into()),
        decided_by: Some("rules/allow-rule".into()),
        elapsed_ms: 1,
        output_preview: "allowed".into(),
        agent_name: "hook".into(),
        ts: "2026-12-03T10:00:00.000Z".into(),
        tool_input: Some(r#"{"command":"ls"}"#.into()),
        cwd: Some("/work/p".into()),
        permission_mode: None,
        detail: AuditDetail::default(),
    }
}

fn lingering(linger: Duration) -> AuditConfig {
    AuditConfig {
        linger,
        ..AuditConfig::default()
    }
}

async fn stored(path: &Path) -> usize {
    AuditLogHook::query(path, &AuditFilter::default())
        .await
        .unwrap()
        .len()
}

/// Waits until `path` holds `rows` rows; how long that took.
async fn until_stored(path: &Path, rows: usize) -> Duration {
    let started = Instant::now();
    while stored(path).await < rows {
        assert!(started.elapsed() < BOUND, "the rows were not committed");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    started.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_are_committed_within_the_linger_unasked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let linger = Duration::from_millis(50);
    let audit = AuditLogHook::open_with(&path, lingering(linger)).await.unwrap();
    for step in 1..=20 {
        audit.record(row(step)).await;
    }
    // No flush: the writer commits the rows once its linger is over.
    until_stored(&path, 20).await;
    audit.record(row(21)).await;
    until_stored(&path, 21).await;
    audit.flush().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flush_and_commit_queued_end_the_linger() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let audit = AuditLogHook::open_with(&path, lingering(LONG)).await.unwrap();
    for step in 1..=10 {
        audit.record(row(step)).await;
    }
    tokio::time::timeout(BOUND, audit.commit_queued())
        .await
        .expect("commit_queued waited for the linger")
        .unwrap();
    assert_eq!(stored(&path).await, 10, "every row queued before is committed");
    audit.record(row(11)).await;
    tokio::time::timeout(BOUND, audit.flush())
        .await
        .expect("the flush waited for the linger")
        .unwrap();
    assert_eq!(stored(&path).await, 11);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_last_clone_commits_without_the_linger() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let audit = AuditLogHook::open_with(&path, lingering(LONG)).await.unwrap();
    let clone = audit.clone();
    for step in 1..=10 {
        clone.record(row(step)).await;
    }
    drop(clone);
    audit.record(row(11)).await;
    drop(audit);
    until_stored(&path, 11).await;
}

/// `commit_queued` waits for the write but does not take its failure: the flush still reports it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_queued_leaves_the_failures_to_the_flush() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let writable = AuditLogHook::open(&path).await.unwrap();
    writable.flush().await.unwrap();
    drop(writable);
    let options = SqliteConnectOptions::new().filename(&path).read_only(true);
    let audit = AuditLogHook::connect_with(options, lingering(LONG))
        .await
        .unwrap();
    for step in 1..=3 {
        audit.record(row(step)).await;
    }
    tokio::time::timeout(BOUND, audit.commit_queued())
        .await
        .expect("commit_queued waited for the linger")
        .unwrap();
    match audit.flush().await {
        Err(AuditError::Write { rows, .. }) => assert_eq!(rows, 3),
        other => panic!("expected the write error at the flush, got {other:?}"),
    }
    assert_eq!(stored(&path).await, 0);
}
