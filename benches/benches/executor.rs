//! Executor overhead per call: a no-op tool called directly against the same call through the whole runtime
//! pipeline (PreToolUse hooks with the cancellation hook, the guard's resolution, partition, execution under a
//! timeout with cancellation, PostToolUse hooks with metrics, persistence check), and the same with the SQLite
//! audit log; and `read_file` of a small file, directly and through the pipeline (sandbox check twice: decision
//! and race-free open).

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing
)]

use std::hint::black_box;
use std::sync::Arc;

use agent_core::{Runtime, RuntimeConfig};
use agent_hooks::AuditLogHook;
use agent_rules::{Rule, Settings};
use agent_tool_traits::{Decision, Source, Tool, ToolCall, ToolContext, ToolFuture, ToolOutput};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

/// Does nothing, concurrency-safe.
struct Noop;

impl Tool for Noop {
    fn name(&self) -> &str {
        "noop"
    }
    fn description(&self) -> &str {
        "does nothing"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn is_concurrency_safe(&self, _args: &Value) -> bool {
        true
    }
    fn call<'a>(&'a self, _args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async { Ok(ToolOutput::ok("ok")) })
    }
}

fn executor(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small.txt"), "one\ntwo\nthree\n").unwrap();
    let mut settings = Settings::new();
    settings.add_rule(Rule::parse("noop", Decision::Allow, Source::Project).unwrap());
    let plain = Runtime::builder(settings.clone(), RuntimeConfig::new(dir.path()))
        .tool(Arc::new(Noop))
        .build()
        .unwrap();
    let audit = rt
        .block_on(AuditLogHook::open(&dir.path().join("audit.db")))
        .unwrap();
    let audited = rt
        .block_on(async {
            Runtime::builder(settings.clone(), RuntimeConfig::new(dir.path()))
                .tool(Arc::new(Noop))
                .audit(audit)
                .build()
        })
        .unwrap();
    let ctx = ToolContext::default();
    let noop_call = || vec![ToolCall::new("c1", "noop", json!({}))];
    let read_args = json!({"file_path": "small.txt"});
    let read_tool = plain.registry().get("read_file").unwrap();

    let mut group = c.benchmark_group("executor");
    group.bench_function("noop/direct", |b| {
        b.iter(|| rt.block_on(Noop.call(black_box(json!({})), &ctx)).unwrap())
    });
    group.bench_function("noop/pipeline", |b| {
        b.iter(|| rt.block_on(plain.execute("s", 1, black_box(noop_call()))))
    });
    group.bench_function("noop/pipeline_audited", |b| {
        b.iter(|| rt.block_on(audited.execute("s", 1, black_box(noop_call()))))
    });
    group.bench_function("read_file/direct", |b| {
        b.iter(|| {
            rt.block_on(read_tool.call(black_box(read_args.clone()), &ctx))
                .unwrap()
        })
    });
    group.bench_function("read_file/pipeline", |b| {
        b.iter(|| {
            rt.block_on(plain.execute(
                "s",
                1,
                vec![ToolCall::new("r1", "read_file", black_box(read_args.clone()))],
            ))
        })
    });
    group.finish();
}

criterion_group!(benches, executor);
criterion_main!(benches);
