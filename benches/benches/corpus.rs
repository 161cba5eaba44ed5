//! The shell corpus decided the way `agent-guard check --jsonl` decides it: hook input lines in, hook output lines
//! out, every decision through agent-decide's bounded entry with the lines of a batch handed to one worker
//! together (`DecisionBound::decide_in_order`). Against, in the same run: the same lines handed over one by one
//! (`DecisionBound::decide` per line, a hand-off and a wake-up per decision), and the guard deciding them in
//! place without a bound (what the decision itself costs), and in place with each batch's file-system facts kept
//! for the batch as the workers keep them (`agent_fs_sandbox::with_batch_facts`). The corpus is bash-guard's
//! (`crates/bash-guard/tests/corpus/*.jsonl`, every command of every file), in an empty project, with a home
//! directory that holds tool-chain versions. What the command does per line besides the decision (reading and
//! answering the lines, the audit log) is measured as a whole process by agent-guard's own bench
//! (`cargo bench -p agent-guard --bench jsonl`).
//!
//! `cargo bench -p agent-guard-benches --bench corpus`

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing
)]

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use agent_decide::{
    CallInput, Deciders, DecisionBound, DecisionRequest, Guard, GuardOptions, HookInput, HookOutput,
};
use agent_rules::{SessionState, Settings};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

/// The lines of one batch, as `check --jsonl` reads them at most at once.
const BATCH: usize = 256;

/// Every command of the bash-guard corpus, as a hook input line of a Bash call in `cwd`.
fn corpus_lines(cwd: &Path) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/bash-guard/tests/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut lines = Vec::new();
    for file in files {
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let case: Value = serde_json::from_str(line).unwrap();
            let input = json!({
                "session_id": "bench", "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
                "permission_mode": "default", "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": { "command": case["cmd"] },
            });
            lines.push(input.to_string());
        }
    }
    lines
}

/// One line's call, decided by `guard`.
fn request(guard: &Arc<Guard>, line: &str) -> (HookInput, DecisionRequest) {
    let input = HookInput::parse(line).unwrap();
    let request = DecisionRequest {
        deciders: Deciders::new(Arc::clone(guard)),
        call: CallInput::new(input.tool_name.as_str(), input.tool_input.clone()),
        session: SessionState::default(),
    };
    (input, request)
}

/// The output lines of `lines`, decided a batch at a time.
fn batched(guard: &Arc<Guard>, lines: &[String]) -> usize {
    let mut bytes = 0;
    for batch in lines.chunks(BATCH) {
        let requests = batch.iter().map(|line| request(guard, line).1).collect();
        for decided in DecisionBound::default().decide_in_order(requests) {
            bytes += HookOutput::from_verdict(decided.verdict()).to_json().len();
        }
    }
    bytes
}

/// The output lines of `lines`, each handed to a worker on its own.
fn one_by_one(guard: &Arc<Guard>, lines: &[String]) -> usize {
    let mut bytes = 0;
    for line in lines {
        let (_, request) = request(guard, line);
        let decided = DecisionBound::default().decide(&request.deciders, request.call, request.session);
        bytes += HookOutput::from_verdict(decided.verdict()).to_json().len();
    }
    bytes
}

/// The output lines of `lines`, decided in place without a bound, each batch within its file-system facts (what
/// the worker of `check --jsonl`'s batches keeps of the paths it checked, for the next lines of the batch).
fn in_place_batch_facts(guard: &Arc<Guard>, lines: &[String]) -> usize {
    lines
        .chunks(BATCH)
        .map(|batch| agent_fs_sandbox::with_batch_facts(|| in_place(guard, batch)))
        .sum()
}

/// The output lines of `lines`, decided in place without a bound.
fn in_place(guard: &Arc<Guard>, lines: &[String]) -> usize {
    let mut bytes = 0;
    for line in lines {
        let (_, request) = request(guard, line);
        let decided = request.deciders.decide(&request.call, &request.session);
        bytes += HookOutput::from_verdict(decided.verdict()).to_json().len();
    }
    bytes
}

fn bench(c: &mut Criterion) {
    // The project is three levels below the temporary directory, so that the corpus's globs above it (`../*`)
    // match what the bench made, not whatever the system's temporary directory holds.
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().canonicalize().unwrap().join("w/a/proj");
    std::fs::create_dir_all(&cwd).unwrap();
    // A home directory like a developer's, with tool-chain versions installed: the decision looks at what lies
    // there (the secret places of each version), and a guard without a home would skip that work.
    let home = tmp.path().canonicalize().unwrap().join("home");
    for version in [
        ".nvm/versions/node/v20.11.0/etc",
        ".nvm/versions/node/v22.2.0/etc",
        ".pyenv/versions/3.11.7",
        ".pyenv/versions/3.12.1/etc",
    ] {
        std::fs::create_dir_all(home.join(version)).unwrap();
    }
    std::fs::write(home.join(".pyenv/versions/3.12.1/pip.conf"), "[global]\n").unwrap();
    let guard = Arc::new(
        Guard::new(
            &Settings::new(),
            &GuardOptions {
                cwd: cwd.clone(),
                home: Some(home),
                ..GuardOptions::default()
            },
        )
        .unwrap(),
    );
    let lines = corpus_lines(&cwd);
    // The four ways decide alike.
    assert_eq!(batched(&guard, &lines), in_place(&guard, &lines));
    assert_eq!(in_place_batch_facts(&guard, &lines), in_place(&guard, &lines));
    let mut group = c.benchmark_group("corpus");
    group.throughput(Throughput::Elements(lines.len() as u64));
    group.bench_function("check_jsonl_batched", |b| {
        b.iter(|| black_box(batched(&guard, &lines)))
    });
    group.bench_function("one_by_one", |b| b.iter(|| black_box(one_by_one(&guard, &lines))));
    group.bench_function("in_place_unbounded", |b| {
        b.iter(|| black_box(in_place(&guard, &lines)))
    });
    group.bench_function("in_place_batch_facts", |b| {
        b.iter(|| black_box(in_place_batch_facts(&guard, &lines)))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(std::time::Duration::from_secs(1)).measurement_time(std::time::Duration::from_secs(5)).sample_size(10);
    targets = bench
}
criterion_main!(benches);
