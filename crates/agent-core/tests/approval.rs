//! The rules an answer saves, through the public API: narrow, never a prefix of an interpreter or wrapper, and none
//! when no allow rule could change the outcome.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use agent_decide::{Guard, GuardOptions};

use agent_core::suggest_rules;
use agent_rules::Settings;
use agent_tool_traits::Decision;
use serde_json::{Value, json};

fn rules_for(dir: &std::path::Path, tool: &str, args: Value) -> (Decision, Vec<String>) {
    let guard = Guard::new(
        &Settings::new(),
        // The rules an ask suggests, so the lines are decided by the analysis alone: inside the sandbox many of
        // them would be contained allows.
        &GuardOptions {
            cwd: dir.to_path_buf(),
            auto_allow: Some(false),
            ..Default::default()
        },
    )
    .unwrap();
    let decided = guard.decide(tool, &args);
    (
        decided.verdict().decision,
        suggest_rules(tool, &args, &decided, dir),
    )
}

fn shell(dir: &std::path::Path, command: &str) -> Vec<String> {
    let (decision, rules) = rules_for(dir, "Bash", json!({ "command": command }));
    assert_eq!(decision, Decision::Ask, "`{command}` should ask");
    rules
}

#[test]
fn shell_rules_are_narrow_prefixes_of_subcommands() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(shell(dir.path(), "git commit -m wip"), vec!["Bash(git commit:*)"]);
    assert_eq!(
        shell(dir.path(), "npm run test -- --watch"),
        vec!["Bash(npm run test:*)"]
    );
    assert_eq!(
        shell(dir.path(), "cargo build --release"),
        vec!["Bash(cargo build:*)"]
    );
}

#[test]
fn interpreters_and_wrappers_get_their_exact_command_line_at_most() {
    let dir = tempfile::tempdir().unwrap();
    for command in [
        "python3 manage.py migrate",
        "node build.js",
        "bash deploy.sh",
        "env FOO=1 python3 tool.py",
        "xargs -n1 touch",
        "perl -e print",
    ] {
        for rule in shell(dir.path(), command) {
            assert!(
                !rule.ends_with(":*)") && !rule.contains('*'),
                "`{command}` would save the prefix rule `{rule}`"
            );
        }
    }
    assert_eq!(
        shell(dir.path(), "python3 manage.py migrate"),
        vec!["Bash(python3 manage.py migrate)"]
    );
}

#[test]
fn files_get_exact_path_rules_and_safety_asks_get_none() {
    let dir = tempfile::tempdir().unwrap();
    let (decision, rules) = rules_for(
        dir.path(),
        "file_write",
        json!({"file_path": "src/new.rs", "content": ""}),
    );
    assert_eq!(decision, Decision::Ask);
    assert_eq!(rules, vec!["Edit(/src/new.rs)"]);
    // A protected path asks whatever the rules say: saving an allow rule would change nothing.
    let (decision, rules) = rules_for(
        dir.path(),
        "Write",
        json!({"file_path": ".git/hooks/pre-commit", "content": ""}),
    );
    assert_eq!(decision, Decision::Ask);
    assert!(rules.is_empty(), "{rules:?}");
    let (_, rules) = rules_for(dir.path(), "mcp__github__create_issue", json!({}));
    assert_eq!(rules, vec!["mcp__github__create_issue"]);
}
