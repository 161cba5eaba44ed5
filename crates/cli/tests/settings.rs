//! One strict check of settings files, run by every reader: `rules --check`, `doctor`, the hook (`check`), `serve`
//! and `agent` accept the same files, and name each mistake with its file, line, column and the nearest known name.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

mod served;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use served::{TOKEN, serve_in};

/// A settings file with one of each mistake a user makes, among keys of the coding agent's own that are fine.
const MISTAKES: &str = r#"{
  "model": "opus",
  "env": {"FOO": "1"},
  "statusLine": {"type": "command", "command": "x"},
  "enabledPlugins": {},
  "permisions": {"allow": ["Bash"]},
  "permissions": {
    "dney": ["Read(./.env)"],
    "allow": ["Raed(./x)", "bash(ls)"]
  },
  "agentGuard": {
    "blockNetwrk": false,
    "sandbox": "Off"
  }
}
"#;

/// Each mistake of [`MISTAKES`]: `line:column: message`.
const EXPECTED: &[&str] = &[
    ":6:3: unknown key `permisions`: did you mean `permissions`?",
    ":8:5: unknown key `dney` in `permissions`: did you mean `deny`?",
    ":9:15: invalid rule `Raed(./x)` in permissions.allow[0]: unknown tool `Raed`: did you mean `Read(./x)`?",
    ":9:28: invalid rule `bash(ls)` in permissions.allow[1]: unknown tool `bash`: did you mean `Bash(ls)`?",
    ":12:5: unknown key `blockNetwrk` in `agentGuard`: did you mean `blockNetwork`?",
    ":13:16: `agentGuard.sandbox` cannot be `\"Off\"`: expected one of `auto`, `required`, `off` (did you mean `off`?)",
];

/// A scratch HOME and project, with `text` as the project's `.claude/settings.json`.
fn scratch(text: &str) -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("project");
    let file = project.join(".claude/settings.json");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    (
        tmp,
        home,
        project.canonicalize().unwrap(),
        file.canonicalize().unwrap(),
    )
}

/// The binary in `dir` with `home`, a fixed PATH and no inherited `AGENT_*` variables.
fn command(dir: &Path, home: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-guard"));
    command
        .current_dir(dir)
        .env("HOME", home)
        .env("PATH", "/usr/bin:/bin");
    for (key, _) in std::env::vars() {
        if key.starts_with("AGENT_") || key.ends_with("_API_KEY") {
            command.env_remove(key);
        }
    }
    command
}

fn run(dir: &Path, home: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = command(dir, home)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn hook_input(cwd: &Path, tool: &str, input: Value) -> Value {
    json!({
        "session_id": "s", "cwd": cwd, "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": input,
    })
}

/// The `file:line:column: message` lines of every mistake in `file`.
fn expected_lines(file: &Path) -> Vec<String> {
    EXPECTED
        .iter()
        .map(|tail| format!("{}{tail}", file.display()))
        .collect()
}

#[test]
fn every_reader_names_each_mistake_with_its_position_and_a_suggestion() {
    let (_tmp, home, project, file) = scratch(MISTAKES);
    let expected = expected_lines(&file);

    // `rules --check`: one line per mistake, in the order of the file, and a failing exit.
    let out = run(&project, &home, &["rules", "--check", file.to_str().unwrap()], "");
    let report = text(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines[..expected.len()], expected[..], "{report}");
    assert!(report.contains("6 problem(s)"), "{report}");

    // `doctor`: the same lines, and the note that every call is denied until the file is fixed.
    let out = run(&project, &home, &["doctor"], "");
    let report = text(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    for line in &expected {
        assert!(report.contains(line.as_str()), "{line}\n{report}");
    }
    assert!(report.contains("every call is denied"), "{report}");

    // The hook denies every call, with the same lines as its reason.
    let input = hook_input(&project, "Bash", json!({"command": "ls"}));
    let out = run(&project, &home, &["check"], &input.to_string());
    let output: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hook = &output["hookSpecificOutput"];
    assert_eq!(hook["permissionDecision"], "deny", "{output}");
    let reason = hook["permissionDecisionReason"].as_str().unwrap();
    assert!(reason.contains("cannot load the settings"), "{reason}");
    assert!(reason.ends_with(&expected.join("; ")), "{reason}");

    // `agent` refuses to start, naming the same mistakes, before it talks to any model.
    let out = command(&project, &home)
        .args([
            "agent",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--api-key-env",
            "TEST_KEY",
        ])
        .args(["--model", "m", "--no-stream", "list the files"])
        .env("TEST_KEY", "k")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report = text(&out);
    assert!(!out.status.success(), "{report}");
    for line in &expected {
        assert!(report.contains(line.as_str()), "{line}\n{report}");
    }
}

#[test]
fn serve_denies_with_the_same_lines_as_the_check() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("project/.claude/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, MISTAKES).unwrap();
    let server = serve_in(dir, &["--token", TOKEN]);
    let file = file.canonicalize().unwrap();
    let (status, output) = server.post("/v1/decide", &server.input("s", "ls"));
    assert_eq!(status, 200, "{output}");
    let hook = &output["hookSpecificOutput"];
    assert_eq!(hook["permissionDecision"], "deny", "{output}");
    let reason = hook["permissionDecisionReason"].as_str().unwrap();
    assert!(reason.ends_with(&expected_lines(&file).join("; ")), "{reason}");
}

#[test]
fn a_syntax_error_is_named_at_its_line_and_column_by_check_and_hook() {
    let (_tmp, home, project, file) = scratch("{\n  \"permissions\": {\"allow\": [\"Read\" \"Bash\"]}\n}\n");
    let expected = format!("{}:2:36: invalid JSON: expected `,` or `]`", file.display());
    let out = run(&project, &home, &["rules", "--check", file.to_str().unwrap()], "");
    assert!(text(&out).starts_with(&expected), "{}", text(&out));
    let input = hook_input(&project, "Read", json!({"file_path": "a.txt"}));
    let out = run(&project, &home, &["check"], &input.to_string());
    let output: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(output["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        output["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .ends_with(&expected),
        "{output}"
    );
}

#[test]
fn a_file_of_the_coding_agent_with_its_own_keys_passes_every_reader() {
    let good = r#"{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus", "env": {"FOO": "1"}, "cleanupPeriodDays": 20, "includeCoAuthoredBy": false,
  "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
  "enabledPlugins": {"x@y": true}, "sandbox": {"enabled": true},
  "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "agent-guard check"}]}]},
  "permissions": {"allow": ["Bash(ls:*)", "Read", "SlashCommand", "Skill", "BashOutput"],
                  "deny": ["Read(./.env)"], "defaultMode": "default", "additionalDirectories": ["../docs"]},
  "agentGuard": {"blockNetwork": false, "sandbox": "auto", "sandboxEnv": {"remove": ["INTERNAL_*"]}}
}"#;
    let (_tmp, home, project, file) = scratch(good);
    let out = run(&project, &home, &["rules", "--check", file.to_str().unwrap()], "");
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains(": ok"), "{}", text(&out));
    let report = text(&run(&project, &home, &["doctor"], ""));
    assert!(report.contains(": valid"), "{report}");
    // The hook loads it: the deny rule applies, and a read-only command is allowed.
    for (tool, input, expected) in [
        ("Read", json!({"file_path": ".env"}), "deny"),
        ("Bash", json!({"command": "ls"}), "allow"),
    ] {
        let out = run(
            &project,
            &home,
            &["check"],
            &hook_input(&project, tool, input).to_string(),
        );
        let output: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            output["hookSpecificOutput"]["permissionDecision"], expected,
            "{output}"
        );
    }
}

/// The hook's reason for a call under `project`'s settings: (decision, reason).
fn hook_decision(project: &Path, home: &Path, command: &str) -> (String, String) {
    let input = hook_input(project, "Bash", json!({ "command": command }));
    let out = run(project, home, &["check"], &input.to_string());
    let output: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hook = &output["hookSpecificOutput"];
    (
        hook["permissionDecision"].as_str().unwrap_or_default().to_owned(),
        hook["permissionDecisionReason"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

#[test]
fn nested_sections_and_values_loading_parses_are_checked_by_every_reader_alike() {
    // Each file: the line `rules --check` prints (after the file name), which doctor reports and the hook denies
    // with. Unknown keys in every nested object of `agentGuard`, and the values only loading parses (sizes, domain
    // patterns, tool names, globs).
    let cases: &[(&str, &str)] = &[
        (
            "{\"agentGuard\": {\"commands\": {\n  \"readOnly\": [\"foo\"],\n  \"dney\": [\"bar\"]}}}",
            ":3:3: unknown key `dney` in `agentGuard.commands`: did you mean `deny`?",
        ),
        (
            r#"{"agentGuard": {"sandbox": {"mode": "auto", "memoryMax": "lots"}}}"#,
            ":1:58: in `agentGuard.sandbox.memoryMax`: `lots` is not a size",
        ),
        (
            r#"{"agentGuard": {"sandbox": {"memoryMax": "0"}}}"#,
            ":1:42: in `agentGuard.sandbox.memoryMax`: `0` is not a size",
        ),
        (
            r#"{"agentGuard": {"sandbox": {"publish": [5173, "9000-8000"]}}}"#,
            ":1:47: in `agentGuard.sandbox.publish[1]`: `9000-8000` is a range whose first port is above its last",
        ),
        (
            r#"{"agentGuard": {"sandbox": {"publish": [70000]}}}"#,
            ":1:41: in `agentGuard.sandbox.publish[0]`: `70000` is not a port from 1 to 65535",
        ),
        (
            "{\"agentGuard\": {\"network\": {\"allow\": [\"crates.io\",\n  \"1.2.3.4\"]}}}",
            ":2:3: in `agentGuard.network.allow[1]`: `1.2.3.4` is not a domain pattern",
        ),
        (
            r#"{"agentGuard": {"network": {"deny": ["x.com:99999"]}}}"#,
            ":1:38: in `agentGuard.network.deny[0]`: `x.com:99999` is not a domain pattern",
        ),
        (
            r#"{"agentGuard": {"taint": {"trustedDomains": ["http://a b"]}}}"#,
            ":1:46: in `agentGuard.taint.trustedDomains[0]`: `http://a b` is not a domain pattern",
        ),
        (
            r#"{"agentGuard": {"taint": {"sinks": ["*"]}}}"#,
            ":1:37: in `agentGuard.taint.sinks[0]`: `*` names no tool",
        ),
        (
            r#"{"agentGuard": {"protectedPaths": ["[unclosed"]}}"#,
            ":1:36: in `agentGuard.protectedPaths[0]`: protected-path pattern `[unclosed` is invalid",
        ),
        (
            r#"{"agentGuard": {"telemetry": {"enabeld": true}}}"#,
            ":1:31: unknown key `enabeld` in `agentGuard.telemetry`: did you mean `enabled`?",
        ),
    ];
    for (settings, tail) in cases {
        let (_tmp, home, project, file) = scratch(settings);
        let line = format!("{}{tail}", file.display());
        let out = run(&project, &home, &["rules", "--check", file.to_str().unwrap()], "");
        let report = text(&out);
        assert_eq!(out.status.code(), Some(1), "{settings}\n{report}");
        assert!(report.starts_with(&line), "{settings}\n{report}");
        let doctor = text(&run(&project, &home, &["doctor"], ""));
        assert!(doctor.contains(&line), "{settings}\n{doctor}");
        let (decision, reason) = hook_decision(&project, &home, "ls");
        assert_eq!(decision, "deny", "{settings}\n{reason}");
        assert!(reason.contains(&line), "{settings}\n{reason}");
    }
}

#[test]
fn a_known_command_in_read_only_is_reported_as_not_applied_and_the_rest_loads() {
    let (_tmp, home, project, file) = scratch(
        r#"{"agentGuard": {"commands": {"readOnly": ["sed", "mytool"], "deny": ["bar"]}, "sandbox": {"autoAllow": false}}}"#,
    );
    let warning = format!(
        "warning: {}:1:43: `agentGuard.commands.readOnly[0]` is not applied: `sed` cannot be declared read-only",
        file.display()
    );
    let out = run(&project, &home, &["rules", "--check", file.to_str().unwrap()], "");
    let report = text(&out);
    assert!(out.status.success(), "{report}");
    assert!(report.starts_with(&warning), "{report}");
    assert!(
        !report.contains("mytool"),
        "only the entry left out is reported: {report}"
    );
    let doctor = text(&run(&project, &home, &["doctor"], ""));
    assert!(doctor.contains(&warning["warning: ".len()..]), "{doctor}");
    // The file loads: the deny list applies, `sed` keeps its own rules (`-i` writes), the unknown tool is read-only.
    assert_eq!(hook_decision(&project, &home, "bar x").0, "deny");
    let (decision, reason) = hook_decision(&project, &home, "sed -i s/a/b/ x.txt");
    assert_eq!(decision, "ask", "{reason}");
    let (decision, reason) = hook_decision(&project, &home, "mytool --list");
    assert_eq!(decision, "allow", "{reason}");
}
