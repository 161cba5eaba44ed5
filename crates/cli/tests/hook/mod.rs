//! Running the built binary as a hook test does: a scratch home, no inherited `AGENT_*` variables, an input line,
//! and reading the decision back. Shared by the test binaries that include it.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

/// Runs the binary in `dir` with `args`, `stdin`, the scratch `home` and no inherited `AGENT_*` variables.
pub(crate) fn run(args: &[&str], stdin: &str, dir: &Path, home: &Path) -> Output {
    run_with(args, stdin, dir, home, &[])
}

/// [`run`] with the variables of `env` set.
pub(crate) fn run_with(args: &[&str], stdin: &str, dir: &Path, home: &Path, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-guard"));
    command
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, _) in std::env::vars() {
        // The project a coding agent declares (`CLAUDE_PROJECT_DIR`) widens the roots: a test declares its own.
        if key.starts_with("AGENT_") || key.ends_with("_PROJECT_DIR") {
            command.env_remove(key);
        }
    }
    command.envs(env.iter().copied());
    let mut child = command.spawn().unwrap();
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

/// A PreToolUse hook input of `tool` with `tool_input`, in `cwd`, mode `default`.
pub(crate) fn input(cwd: &Path, tool: &str, tool_input: Value) -> String {
    json!({
        "session_id": "s1", "cwd": cwd, "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": tool_input,
    })
    .to_string()
}

/// The decision and reason of one output line.
pub(crate) fn decision(line: &str) -> (String, String) {
    let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"));
    let specific = &value["hookSpecificOutput"];
    (
        specific["permissionDecision"].as_str().unwrap().to_owned(),
        specific["permissionDecisionReason"].as_str().unwrap().to_owned(),
    )
}

/// Bytes of output as text.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs git in `dir` with the scratch `home`, no system configuration and a fixed identity; its standard output.
///
/// # Panics
/// When git fails.
#[allow(dead_code, reason = "only the test binaries that make a repository use it")]
pub(crate) fn git(dir: &Path, home: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap_or_else(|e| panic!("cannot run git {args:?}: {e}"));
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}
