//! `agent-guard serve` in a subdirectory of a project: an "allow always" answer is saved for the project.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

mod served;

use serde_json::{Value, json};
use served::{TOKEN, serve};

/// After `cd src`, "allow always" saves its rule, written relative to the project, in the project's
/// `.agent-guard/settings.local.json`: never in `src/`, where an `.agent-guard/` would make `src` a project of its
/// own and leave the project's settings behind. The next decision, from `src`, uses the saved rule.
#[test]
fn allow_always_in_a_subdirectory_saves_the_rule_for_the_project() {
    let server = serve(&["--token", TOKEN]);
    let src = server.project.join("src");
    std::fs::create_dir_all(server.project.join(".git")).unwrap();
    std::fs::create_dir_all(&src).unwrap();
    let input = json!({
        "session_id": "s-sub", "cwd": src, "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "Write", "tool_input": {"file_path": "b.txt", "content": "x"},
    });
    let (status, ask) = server.post("/v1/approvals", &input);
    assert_eq!(status, 201, "{ask}");
    assert_eq!(ask["allow_always_rules"], json!(["Edit(/src/b.txt)"]));
    let id = ask["id"].as_str().unwrap();
    let (status, answered) = server.post(&format!("/v1/approvals/{id}"), &json!({"answer": "allow_always"}));
    assert_eq!(status, 200, "{answered}");

    let file = server.project.join(".agent-guard/settings.local.json");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["permissions"]["allow"], json!(["Edit(/src/b.txt)"]));
    assert!(!src.join(".agent-guard").exists());
    let (_, output) = server.post("/v1/decide", &input);
    assert_eq!(
        output["hookSpecificOutput"]["permissionDecision"], "allow",
        "{output}"
    );
}
