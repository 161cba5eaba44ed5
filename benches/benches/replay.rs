//! The replay set (shell commands real coding agents ran, benches/replay/) decided in place by one `Guard` per
//! permission mode, in the scratch project `cargo xtask replay` uses: the decision's hot path over real commands
//! rather than the hand-written corpus. One iteration decides the whole set.
//!
//! `cargo bench -p agent-guard-benches --bench replay` (the set from `AGENT_GUARD_REPLAY` or
//! benches/replay/commands.jsonl; without one the bench says it is skipped).

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing
)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::PathBuf;

use agent_decide::{Guard, GuardOptions};
use agent_guard_benches::replay::{self, Scratch};
use agent_rules::{PermissionMode, Settings};
use agent_tool_traits::Source;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

const MODES: [(&str, PermissionMode); 4] = [
    ("default", PermissionMode::Default),
    ("acceptEdits", PermissionMode::AcceptEdits),
    ("plan", PermissionMode::Plan),
    ("bypassPermissions", PermissionMode::BypassPermissions),
];

/// The guards of one mode, one per working directory the set names (built once, as a session builds one).
fn guards(scratch: &Scratch, cwds: &[PathBuf], mode: PermissionMode) -> BTreeMap<PathBuf, Guard> {
    cwds.iter()
        .map(|cwd| {
            let options = GuardOptions {
                cwd: cwd.clone(),
                home: Some(scratch.home.clone()),
                mode: Some((mode, Source::CliArg)),
                project: (*cwd != scratch.project).then(|| scratch.project.clone()),
                ..GuardOptions::default()
            };
            (cwd.clone(), Guard::new(&Settings::new(), &options).unwrap())
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let path = replay::default_path();
    let Ok(commands) = replay::load(&path) else {
        eprintln!(
            "skipped: no replay set at {} (benches/replay/README.md says how it is made)",
            path.display()
        );
        return;
    };
    let base = tempfile::tempdir().unwrap();
    let scratch = Scratch::create(base.path(), &commands).unwrap();
    let calls: Vec<(PathBuf, Value)> = commands
        .iter()
        .map(|command| {
            let (cwd, line) = scratch.localize(command);
            (cwd, json!({ "command": line }))
        })
        .collect();
    let mut cwds: Vec<PathBuf> = calls.iter().map(|(cwd, _)| cwd.clone()).collect();
    cwds.sort();
    cwds.dedup();
    let mut group = c.benchmark_group("replay");
    group.throughput(Throughput::Elements(calls.len() as u64));
    for (name, mode) in MODES {
        let guards = guards(&scratch, &cwds, mode);
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut interrupts = 0_usize;
                for (cwd, args) in &calls {
                    let decided = guards[cwd].decide("Bash", args);
                    interrupts += usize::from(!decided.verdict().is_allowed());
                }
                black_box(interrupts)
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(std::time::Duration::from_secs(1)).measurement_time(std::time::Duration::from_secs(5)).sample_size(10);
    targets = bench
}
criterion_main!(benches);
