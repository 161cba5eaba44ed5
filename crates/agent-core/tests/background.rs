//! Limits from the settings files, and background tasks: started at once, their results injected before a later
//! turn, decided like any call, cancelled or awaited at session stop.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use agent_core::{LimitKind, Scenario, run_scenario};

const SETTINGS_LIMITS: &str = r#"{
  "name": "limits from settings",
  "settings": {"project": {"agentGuard": {"limits": {"maxSteps": 2}}}},
  "files": {"a.txt": "alpha\n"},
  "turns": [
    {"calls": [{"id": "r1", "tool": "Read", "args": {"file_path": "a.txt"}}]},
    {"calls": [{"id": "r2", "tool": "Read", "args": {"file_path": "a.txt", "limit": 1}}]},
    {"calls": [{"id": "r3", "tool": "Read", "args": {"file_path": "a.txt", "limit": 2}}]},
    {"calls": [{"id": "r4", "tool": "Read", "args": {"file_path": "a.txt", "limit": 3}}]}
  ],
  "final_answer": "alpha"
}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_settings_file_sets_the_step_limit() {
    let scenario = Scenario::parse("settings limits", SETTINGS_LIMITS).unwrap();
    let root = tempfile::tempdir().unwrap();
    let (report, _) = run_scenario(&scenario, root.path(), None, None, "limits")
        .await
        .unwrap();
    assert_eq!(report.steps.len(), 2, "{:?}", report.reason);
    assert_eq!(report.reason, "max steps (2): final answer without tools");
    assert_eq!(report.limits.last().unwrap().kind, LimitKind::MaxSteps);
}
