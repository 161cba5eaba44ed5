//! The decision corpus: every command in `tests/corpus/*.jsonl` with the decision `verdict()` must give.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::Path;

use agent_bash_guard::{BashConfig, BashGuard};
use agent_tool_traits::Decision;
use serde::Deserialize;

/// One line of a corpus file.
#[derive(Debug, Deserialize)]
struct Case {
    cmd: String,
    expect: Decision,
    note: String,
    /// `false` runs the case with the network unblocked.
    #[serde(default = "blocked")]
    network: bool,
}

fn blocked() -> bool {
    true
}

fn load() -> Vec<(String, Case)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "jsonl"))
    {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        for (n, line) in std::fs::read_to_string(file).unwrap().lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let case: Case = serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}:{}: {e}", n + 1));
            cases.push((format!("{name}:{}", n + 1), case));
        }
    }
    cases
}

#[test]
fn corpus_decisions() {
    let blocked = BashGuard::new(BashConfig {
        block_network: Some(true),
        ..BashConfig::default()
    });
    let open = BashGuard::new(BashConfig {
        block_network: Some(false),
        ..BashConfig::default()
    });
    let cases = load();
    assert!(cases.len() >= 300, "the corpus has only {} commands", cases.len());
    let mut failures = Vec::new();
    for (place, case) in &cases {
        let guard = if case.network { &blocked } else { &open };
        let analysis = guard.analyze(&case.cmd);
        let verdict = analysis.verdict();
        if verdict.decision != case.expect {
            failures.push(format!(
                "{place}: {:?} ({}) expected {}, got {}: {}",
                case.cmd,
                case.note,
                case.expect,
                verdict.decision,
                verdict.reason()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corpus cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn every_class_of_the_corpus_has_each_file() {
    let cases = load();
    for file in [
        "benign",
        "destructive",
        "privileged",
        "network",
        "nested",
        "hidden",
        "runners",
        "flags",
        "writes",
    ] {
        assert!(
            cases.iter().any(|(place, _)| place.starts_with(file)),
            "no cases in {file}.jsonl"
        );
    }
    let allows = cases.iter().filter(|(_, c)| c.expect == Decision::Allow).count();
    let denies = cases.iter().filter(|(_, c)| c.expect == Decision::Deny).count();
    assert!(allows >= 100 && denies >= 100, "allows {allows}, denies {denies}");
}
