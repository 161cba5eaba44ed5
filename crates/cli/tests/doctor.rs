//! `agent-guard doctor` on a healthy set-up, a broken settings file, a missing hook and a hook that cannot run.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(args: &[&str], dir: &Path, home: &Path, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-guard"));
    // A PATH without a user's own agent-guard, so that the report is the same on every machine.
    command
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("PATH", "/usr/bin:/bin");
    for (key, _) in std::env::vars() {
        if key.starts_with("AGENT_") || key == "NO_COLOR" {
            command.env_remove(key);
        }
    }
    command.envs(env.iter().copied());
    command.output().unwrap()
}

fn scratch() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("proj");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    (tmp, home, project)
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Whether this kernel enforces the sandbox, as `agent-guard sandbox --probe` says.
fn kernel_enforces() -> bool {
    let probe = Command::new(env!("CARGO_BIN_EXE_agent-guard"))
        .args(["sandbox", "--probe"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&probe.stdout).contains("under the kernel sandbox")
}

/// The report's line about `topic` that starts with `level`, or a panic showing the report.
fn line<'a>(report: &'a str, level: &str, topic: &str) -> &'a str {
    report
        .lines()
        .find(|l| l.starts_with(&format!("{level:<8} {topic} ")))
        .unwrap_or_else(|| panic!("no `{level} {topic}` line in\n{report}"))
}

#[test]
fn a_healthy_set_up_is_all_ok() {
    let (_tmp, home, project) = scratch();
    assert!(run(&["install"], &project, &home, &[]).status.success());
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(
        project.join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Bash(npm test)"]}}"#,
    )
    .unwrap();
    let out = run(&["doctor"], &project, &home, &[]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(0), "{report}");
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_agent-guard")).unwrap();
    assert!(
        line(&report, "ok", "binary").contains(&exe.display().to_string()),
        "{report}"
    );
    let hook = line(&report, "ok", "hook");
    assert!(
        hook.contains("user scope") && hook.contains(&format!("{} check", exe.display())),
        "{hook}"
    );
    assert!(
        line(&report, "ok", "settings").contains("(project): valid"),
        "{report}"
    );
    assert!(line(&report, "ok", "mode").contains("default"), "{report}");
    let decision = line(&report, "ok", "decision");
    assert!(
        decision.contains("allow in ") && decision.contains(" ms"),
        "{decision}"
    );
    // The kernel line follows the sandbox probe: ok where the kernel enforces the sandbox, a warning elsewhere.
    if kernel_enforces() {
        assert!(
            line(&report, "ok", "kernel").contains("under the kernel sandbox"),
            "{report}"
        );
        assert!(decision.contains("wrapped in the kernel sandbox"), "{decision}");
    } else {
        assert!(
            line(&report, "warning", "kernel").contains("unconfined"),
            "{report}"
        );
    }
    assert!(!report.contains("server"), "{report}");
    assert!(report.contains("0 problems"), "{report}");
    // Not a terminal: no colour codes.
    assert!(!report.contains('\x1b'), "{report}");
}

#[test]
fn a_broken_settings_file_is_a_problem_named_with_its_position() {
    let (_tmp, home, project) = scratch();
    assert!(
        run(&["install", "--scope", "local"], &project, &home, &[])
            .status
            .success()
    );
    let broken = project.join(".claude/settings.json");
    std::fs::write(
        &broken,
        "{\n  \"permissions\": {\n    \"allow\": [\"Bash(ls)\" \"Read\"]\n  }\n}\n",
    )
    .unwrap();
    let out = run(&["doctor"], &project, &home, &[]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    let settings = line(&report, "problem", "settings");
    assert!(settings.contains(&broken.display().to_string()), "{settings}");
    assert!(
        settings.contains(&format!("{}:3:26: invalid JSON", broken.display())),
        "{settings}"
    );
    assert!(
        report.contains(&format!("agent-guard rules --check {}", broken.display())),
        "{report}"
    );
    assert!(
        line(&report, "problem", "decision").contains("every call is denied"),
        "{report}"
    );
    // The hook itself is fine, in the local scope.
    assert!(line(&report, "ok", "hook").contains("local scope"), "{report}");

    // A bad rule is named by its place in the file.
    std::fs::write(&broken, r#"{"permissions": {"deny": ["Read(./a)", "Bash(rm"]}}"#).unwrap();
    let out = run(&["doctor"], &project, &home, &[]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        line(&report, "problem", "settings").contains("permissions.deny[1]"),
        "{report}"
    );
}

/// Without the hook the coding agent decides alone: a problem, so that a health check fails.
#[test]
fn a_missing_hook_is_a_problem() {
    let (_tmp, home, project) = scratch();
    let out = run(&["doctor", "--cwd", project.to_str().unwrap()], &home, &home, &[]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    let hook = line(&report, "problem", "hook");
    assert!(hook.contains("not installed"), "{hook}");
    for file in [
        home.join(".claude/settings.json"),
        project.join(".claude/settings.json"),
        project.join(".claude/settings.local.json"),
    ] {
        assert!(hook.contains(&format!("`{}`", file.display())), "{hook}");
    }
    assert!(report.contains("run `agent-guard install`"), "{report}");
    assert!(
        line(&report, "ok", "settings").contains("built-in defaults"),
        "{report}"
    );
    assert!(line(&report, "ok", "decision").contains("allow"), "{report}");
    let summary = if kernel_enforces() {
        "1 problem, 0 warnings"
    } else {
        "1 problem, 1 warning"
    };
    assert!(report.contains(summary), "{report}");
}

#[test]
fn a_hook_whose_program_is_gone_is_a_problem_and_an_old_one_a_warning() {
    let (tmp, home, project) = scratch();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let settings = |command: &str, timeout: u64| {
        format!(
            r#"{{"hooks": {{"PreToolUse": [{{"matcher": "*", "hooks": [{{"type": "command", "command": "{command}", "timeout": {timeout}}}]}}]}}}}"#
        )
    };
    std::fs::write(
        home.join(".claude/settings.json"),
        settings("/nonexistent/bin/agent-guard check", 30),
    )
    .unwrap();
    let out = run(&["doctor"], &project, &home, &[]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    let hook = line(&report, "problem", "hook");
    assert!(
        hook.contains("`/nonexistent/bin/agent-guard` is not an executable file"),
        "{hook}"
    );
    assert!(hook.contains("runs every call without it"), "{hook}");
    assert!(!report.contains("not installed"), "{report}");

    // Another agent-guard that works, with the old ten-second timeout: warnings, not problems.
    let other = tmp.path().join("bin/agent-guard");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_agent-guard"), &other).unwrap();
    std::fs::write(
        home.join(".claude/settings.json"),
        settings(&format!("{} check", other.display()), 10),
    )
    .unwrap();
    let out = run(&["doctor"], &project, &home, &[]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert!(
        line(&report, "warning", "hook").contains("another agent-guard"),
        "{report}"
    );
    std::fs::write(
        home.join(".claude/settings.json"),
        settings(
            &format!(
                "{} check",
                std::fs::canonicalize(env!("CARGO_BIN_EXE_agent-guard"))
                    .unwrap()
                    .display()
            ),
            10,
        ),
    )
    .unwrap();
    let report = text(&run(&["doctor"], &project, &home, &[]));
    assert!(
        line(&report, "warning", "hook").contains("timeout is not above"),
        "{report}"
    );
}

#[test]
fn a_configured_server_is_contacted() {
    let (_tmp, home, project) = scratch();
    let out = run(
        &["doctor"],
        &project,
        &home,
        &[
            ("AGENT_GUARD_SERVER", "http://127.0.0.1:9"),
            ("AGENT_GUARD_TOKEN", "secret-token"),
        ],
    );
    let report = text(&out);
    let server = line(&report, "warning", "server");
    assert!(
        server.contains("http://127.0.0.1:9") && server.contains("cannot be reached"),
        "{server}"
    );
    assert!(!report.contains("secret-token"), "{report}");
}
