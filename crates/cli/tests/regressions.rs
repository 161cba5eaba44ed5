//! End-to-end regression tests of answers the built binary got wrong: each names the class of the mistake.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

mod hook;

use std::path::PathBuf;

use hook::{decision, input, run, text};
use serde_json::{Value, json};

/// A scratch home and project (`proj`, with a `.git`).
fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let cwd = root.join("proj");
    let home = root.join("home");
    std::fs::create_dir_all(cwd.join(".git")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    (tmp, cwd, home)
}

/// The component-length check is for paths: a long commit message (or tag, merge, stash, note message) is an
/// option's value, not a file, and is decided like a short one.
#[test]
fn a_long_message_is_not_a_path() {
    let (_tmp, cwd, home) = dirs();
    let long = "x".repeat(300);
    for command in [
        format!("git commit -m \"feat: {long}\""),
        format!("git commit -am \"fix(parser): {long}\""),
        format!("git tag -a v1 -m \"release: {long}\""),
        format!("git stash push -m \"wip: {long}\""),
    ] {
        // Decided by the analysis alone: inside the sandbox a commit is a contained allow.
        let out = run(
            &["check", "--auto-allow", "off"],
            &input(&cwd, "Bash", json!({ "command": command })),
            &cwd,
            &home,
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        let (got, reason) = decision(text(&out.stdout).trim());
        assert_eq!(got, "ask", "{command}: {reason}");
        assert!(!reason.contains("longer than the limit"), "{reason}");
    }
    // A path that long is still refused.
    let out = run(
        &["check"],
        &input(&cwd, "Bash", json!({ "command": format!("cat {long}") })),
        &cwd,
        &home,
    );
    let (got, reason) = decision(text(&out.stdout).trim());
    assert_eq!(got, "deny", "{reason}");
    assert!(reason.contains("longer than the limit"), "{reason}");
}

/// Quoting: a `<<` inside double quotes is text (a shift in a script, a word of a message), not a here-document.
#[test]
fn a_double_quoted_shift_is_not_a_here_document() {
    let (_tmp, cwd, home) = dirs();
    for (command, want) in [
        ("python3 -c \"print(1 << (2))\"", "ask"),
        ("echo \"flags: 1 <<(2)\"", "allow"),
        ("grep -n \"a <<b\" README.md", "allow"),
    ] {
        // Decided by the analysis alone: inside the sandbox the interpreter is a contained allow.
        let out = run(
            &["check", "--auto-allow", "off"],
            &input(&cwd, "Bash", json!({ "command": command })),
            &cwd,
            &home,
        );
        let (got, reason) = decision(text(&out.stdout).trim());
        assert_eq!(got, want, "{command}: {reason}");
        assert!(!reason.contains("here-document"), "{command}: {reason}");
    }
}

/// `--jsonl`: one output line per input line, an empty line included (an error line, like any invalid line).
#[test]
fn jsonl_answers_an_empty_line_in_place() {
    let (_tmp, cwd, home) = dirs();
    let ls = input(&cwd, "Bash", json!({"command": "ls"}));
    let stdin = format!("{ls}\n\n   \n{ls}\n");
    let out = run(&["check", "--jsonl"], &stdin, &cwd, &home);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let got: Vec<&str> = stdout.lines().collect();
    assert_eq!(got.len(), 4, "{stdout}");
    assert_eq!(decision(got[0]).0, "allow");
    for (line, number) in got[1..3].iter().zip([2, 3]) {
        let error: Value = serde_json::from_str(line).unwrap();
        assert_eq!(
            error["error"],
            format!("line {number}: invalid hook input: the line is empty"),
            "{stdout}"
        );
    }
    assert_eq!(decision(got[3]).0, "allow");
}

/// An unknown `permission_mode` is an error naming it, not a silent `default`: the hook exits 2 with the message,
/// `--jsonl` prints an error line.
#[test]
fn an_unknown_permission_mode_is_refused_by_name() {
    let (_tmp, cwd, home) = dirs();
    let mut value: Value = serde_json::from_str(&input(&cwd, "Read", json!({"file_path": "a.txt"}))).unwrap();
    value["permission_mode"] = json!("yolo");
    let line = value.to_string();
    let out = run(&["check"], &line, &cwd, &home);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("`permission_mode`: unknown permission mode `yolo`"),
        "{stderr}"
    );

    let out = run(&["check", "--jsonl"], &format!("{line}\n"), &cwd, &home);
    assert_eq!(out.status.code(), Some(1));
    let error: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    let error = error["error"].as_str().unwrap();
    assert!(
        error.starts_with("line 1: ") && error.contains("unknown permission mode `yolo`"),
        "{error}"
    );

    // Every mode the coding agent sends is accepted.
    for mode in ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"] {
        value["permission_mode"] = json!(mode);
        let out = run(&["check"], &value.to_string(), &cwd, &home);
        assert!(out.status.success(), "{mode}: {}", text(&out.stderr));
    }
}

/// Anchoring: `diff` reads both sides as the content of OLD's file, so two identical files in different places
/// are the same policy, even for a rule anchored at its file's project (`Read(/src/**)`), and replaying a log
/// changes nothing.
#[test]
fn identical_settings_files_in_two_places_are_the_same_policy() {
    let (_tmp, cwd, home) = dirs();
    let out = run(&["demo", "--audit-db", "audit.db"], "", &cwd, &home);
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    let settings = r#"{"permissions":{"deny":["Read(/src/**)"],"allow":["Bash(cargo test:*)"]}}"#;
    std::fs::write(cwd.join("draft.json"), settings).unwrap();
    // Where the demo worked: its calls were logged with that working directory, re-created for a replay.
    let out = run(
        &["diff", "draft.json", "draft.json", "--audit-db", "audit.db"],
        "",
        &cwd,
        &home,
    );
    let stdout = text(&out.stdout);
    let workspace = stdout
        .lines()
        .find_map(|l| {
            l.trim().strip_prefix(
                "working directories that no longer exist were re-created empty for the replay: ",
            )
        })
        .and_then(|dirs| dirs.split(", ").max_by_key(|d| d.len()))
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("{stdout}"));
    // OLD is the workspace's own project settings, whose `/src/**` is the workspace's `src`; NEW is the same text
    // somewhere else.
    let scratch = workspace.parent().unwrap().to_owned();
    std::fs::create_dir_all(workspace.join(".claude")).unwrap();
    let old = workspace.join(".claude/settings.json");
    std::fs::write(&old, settings).unwrap();
    let out = run(
        &[
            "diff",
            old.to_str().unwrap(),
            "draft.json",
            "--audit-db",
            "audit.db",
        ],
        "",
        &cwd,
        &home,
    );
    // The rule does decide logged calls there: without it, they get looser.
    std::fs::write(cwd.join("empty.json"), "{}").unwrap();
    let without = run(
        &[
            "diff",
            old.to_str().unwrap(),
            "empty.json",
            "--audit-db",
            "audit.db",
        ],
        "",
        &cwd,
        &home,
    );
    std::fs::remove_dir_all(&scratch).unwrap();
    let loosened = text(&without.stdout);
    assert!(
        loosened.contains("\nlooser: ") && !loosened.contains("looser: 0 calls"),
        "{loosened}"
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("looser: 0 calls"), "{stdout}");
    assert!(stdout.contains("stricter: 0 calls"), "{stdout}");
    assert!(!stdout.contains("loosens the policy"), "{stdout}");
}
