//! Audit rows per second: the batched background writer of `AuditLogHook` against one INSERT per transaction, in
//! SQLite and, when a PostgreSQL server can be started (tests/pg), in PostgreSQL, in the same run.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/pg/mod.rs"]
mod pg;

use std::time::{Duration, Instant};

use agent_hooks::{
    AgentHook, AuditConfig, AuditDatabase, AuditLogHook, AuditRow, CallStatus, PostToolUseContext,
    SqliteConnectOptions,
};
use agent_tool_traits::{DecidedBy, Decision, Layer, Provenance, ToolCall, ToolOutput, Verdict};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use sqlx::postgres::PgConnection;
use sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection};

/// Rows per measured iteration through the hook.
const HOOK_ROWS: u64 = 20_000;
/// Rows per measured iteration of the naive design (slower, so fewer rows keep the run short).
const NAIVE_ROWS: u64 = 2_000;
/// The same in PostgreSQL, where each commit waits for a WAL flush (a few ms on this disk).
const NAIVE_ROWS_POSTGRES: u64 = 200;

const INSERT_ONE: &str = "INSERT INTO agent_audit_log (session_id, step, tool_name, status, decision, decided_by, \
                          elapsed_ms, output_preview, agent_name, ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
const INSERT_ONE_PG: &str = "INSERT INTO agent_audit_log (session_id, step, tool_name, status, decision, \
                             decided_by, elapsed_ms, output_preview, agent_name, ts) \
                             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";

fn call(step: u64) -> PostToolUseContext {
    PostToolUseContext {
        session_id: "bench-session".into(),
        agent_name: "lead".into(),
        step: u32::try_from(step % 1_000).unwrap(),
        call: ToolCall::new(
            format!("c{step}"),
            "read_file",
            json!({"file_path": "src/lib.rs"}),
        ),
        cwd: "/work".into(),
        permission_mode: "default".into(),
        output: ToolOutput::ok("fn main() { println!(\"hello\"); } ".repeat(8)),
        status: CallStatus::Ok,
        verdict: Verdict::new(
            Decision::Allow,
            "read-only",
            Provenance::layer(Layer::Rules).at(DecidedBy::Default),
        ),
        elapsed: Duration::from_millis(3),
        sandbox: None,
        approver: None,
    }
}

fn bench_audit(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("audit_rows");
    group.sample_size(10);

    let hook = runtime
        .block_on(AuditLogHook::open(&dir.path().join("batched.db")))
        .unwrap();
    let contexts: Vec<PostToolUseContext> = (0..HOOK_ROWS).map(call).collect();
    group.throughput(Throughput::Elements(HOOK_ROWS));
    group.bench_function("batched_hook", |b| {
        b.iter_custom(|iters| runtime.block_on(through_the_hook(&hook, &contexts, iters)));
    });

    let mut naive = runtime
        .block_on(
            SqliteConnectOptions::new()
                .filename(dir.path().join("naive.db"))
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .connect(),
        )
        .unwrap();
    // The same schema, through the hook's migrations.
    runtime
        .block_on(AuditLogHook::open(&dir.path().join("naive.db")))
        .unwrap();
    group.throughput(Throughput::Elements(NAIVE_ROWS));
    group.bench_function("one_insert_per_transaction", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    for step in 0..NAIVE_ROWS {
                        let row = AuditRow::for_call(&call(step));
                        let mut tx = naive.begin().await.unwrap();
                        sqlx::query(INSERT_ONE)
                            .bind(&row.session_id)
                            .bind(i64::from(row.step))
                            .bind(&row.tool_name)
                            .bind(row.status.as_str())
                            .bind(&row.decision)
                            .bind(&row.decided_by)
                            .bind(i64::try_from(row.elapsed_ms).unwrap())
                            .bind(&row.output_preview)
                            .bind(&row.agent_name)
                            .bind(&row.ts)
                            .execute(&mut *tx)
                            .await
                            .unwrap();
                        tx.commit().await.unwrap();
                    }
                }
                start.elapsed()
            })
        });
    });

    // The same two designs in PostgreSQL, on a throwaway local server over TCP with its default durability
    // (`synchronous_commit=on`: every commit waits for its WAL flush).
    if let Some(server) = pg::PgServer::start_or_skip() {
        let url = server.create_database("bench");
        let db = AuditDatabase::parse(&url).unwrap();
        let hook = runtime
            .block_on(AuditLogHook::open_database(&db, AuditConfig::default()))
            .unwrap();
        group.throughput(Throughput::Elements(HOOK_ROWS));
        group.bench_function("batched_hook_postgres", |b| {
            b.iter_custom(|iters| runtime.block_on(through_the_hook(&hook, &contexts, iters)));
        });
        let mut naive = runtime.block_on(PgConnection::connect(&url)).unwrap();
        group.throughput(Throughput::Elements(NAIVE_ROWS_POSTGRES));
        group.bench_function("one_insert_per_transaction_postgres", |b| {
            b.iter_custom(|iters| {
                runtime.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        for step in 0..NAIVE_ROWS_POSTGRES {
                            let row = AuditRow::for_call(&call(step));
                            let mut tx = naive.begin().await.unwrap();
                            sqlx::query(INSERT_ONE_PG)
                                .bind(&row.session_id)
                                .bind(i64::from(row.step))
                                .bind(&row.tool_name)
                                .bind(row.status.as_str())
                                .bind(&row.decision)
                                .bind(&row.decided_by)
                                .bind(i64::try_from(row.elapsed_ms).unwrap())
                                .bind(&row.output_preview)
                                .bind(&row.agent_name)
                                .bind(&row.ts)
                                .execute(&mut *tx)
                                .await
                                .unwrap();
                            tx.commit().await.unwrap();
                        }
                    }
                    start.elapsed()
                })
            });
        });
    }
    group.finish();
}

/// Sends `contexts` through the hook `iters` times; the time counts only once every row is committed.
async fn through_the_hook(hook: &AuditLogHook, contexts: &[PostToolUseContext], iters: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        for ctx in contexts {
            hook.post_tool_use(ctx).await;
        }
        hook.flush().await.unwrap();
    }
    start.elapsed()
}

criterion_group!(benches, bench_audit);
criterion_main!(benches);
