//! `agent-guard check --jsonl` as a whole process on the shell corpus: the lines read, decided and answered, and
//! the audit log written, the way a caller runs it. agent-guard-benches' `corpus` bench measures the decisions
//! alone; what the command adds per line (parsing and answering the lines, finding each line's audit database,
//! building and writing its row) shows only here. The corpus is bash-guard's
//! (`crates/bash-guard/tests/corpus/*.jsonl`, every command of every file), as Bash hook inputs in a git project.
//!
//! `cargo bench -p agent-guard --bench jsonl`

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing
)]

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

/// Every command of the bash-guard corpus, as hook input lines of Bash calls in `cwd`, one text.
fn corpus(cwd: &Path) -> (String, u64) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bash-guard/tests/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut text = String::new();
    let mut count = 0;
    for file in files {
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let case: Value = serde_json::from_str(line).unwrap();
            let input = json!({
                "cwd": cwd, "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": { "command": case["cmd"] },
            });
            text.push_str(&input.to_string());
            text.push('\n');
            count += 1;
        }
    }
    (text, count)
}

/// Runs `check --jsonl` on `input` with the audit log as `audit` says; the bytes it answered. Every line must be
/// answered with a decision (one output line per input line, none an error), so that a run that stopped early or
/// answered errors cannot pass for a fast one.
fn run(input: &str, home: &Path, audit: Option<&str>, lines: u64) -> usize {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-guard"));
    command
        .args(["check", "--jsonl"])
        .env("HOME", home)
        .env_remove("AGENT_GUARD_AUDIT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(audit) = audit {
        command.env("AGENT_GUARD_AUDIT", audit);
    }
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let text = input.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()).unwrap());
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(output.status.success());
    let answers = output
        .stdout
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty());
    let mut count = 0_u64;
    for answer in answers {
        assert!(
            answer.starts_with(br#"{"hookSpecificOutput":"#),
            "not a decision: {}",
            String::from_utf8_lossy(answer)
        );
        count += 1;
    }
    assert_eq!(count, lines, "one decision per line");
    output.stdout.len()
}

fn bench(c: &mut Criterion) {
    // The project is three levels below the temporary directory, so that the corpus's globs above it (`../*`)
    // match what the bench made; the home holds tool-chain versions, like a developer's.
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let cwd = base.join("w/a/proj");
    std::fs::create_dir_all(cwd.join(".git")).unwrap();
    let home = base.join("home");
    for version in [".nvm/versions/node/v22.2.0/etc", ".pyenv/versions/3.12.1"] {
        std::fs::create_dir_all(home.join(version)).unwrap();
    }
    let (input, lines) = corpus(&cwd);
    let mut group = c.benchmark_group("check_jsonl_process");
    group.throughput(Throughput::Elements(lines));
    group.bench_function("audit_off", |b| {
        b.iter(|| std::hint::black_box(run(&input, &home, Some("off"), lines)))
    });
    // The project's own audit log, `.agent-guard/audit.db`, growing by the corpus on every run.
    group.bench_function("audit_on", |b| {
        b.iter(|| std::hint::black_box(run(&input, &home, None, lines)))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10))
        .sample_size(10);
    targets = bench
}
criterion_main!(benches);
