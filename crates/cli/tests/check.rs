//! End-to-end tests of the built `agent-guard` binary with hook inputs on stdin.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

/// Runs the binary with `args`, `stdin`, an empty HOME (so no user settings apply) and no inherited
/// `AGENT_*` variables.
fn run(args: &[&str], stdin: &str, home: &Path) -> Output {
    run_with(args, stdin, home, &[])
}

/// [`run`] with the environment variables `env` set as well.
fn run_with(args: &[&str], stdin: &str, home: &Path, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-guard"));
    command
        .args(args)
        .env("HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, _) in std::env::vars() {
        if key.starts_with("AGENT_") {
            command.env_remove(key);
        }
    }
    command.envs(env.iter().copied());
    let mut child = command.spawn().unwrap();
    feed(&mut child, stdin);
    child.wait_with_output().unwrap()
}

/// Writes `stdin` to the child and closes it. A child that exits before reading everything breaks the pipe; that
/// is not the failure itself, so the caller's assertions on the exit status and output report it instead.
fn feed(child: &mut std::process::Child, stdin: &str) {
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe,
            "cannot write the child's stdin: {e}"
        );
    }
}

fn input(cwd: &Path, tool: &str, tool_input: Value) -> String {
    json!({
        "session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": cwd, "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input,
    })
    .to_string()
}

fn decision(line: &str) -> (String, String) {
    let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"));
    let specific = &value["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], "PreToolUse", "{line}");
    (
        specific["permissionDecision"].as_str().unwrap().to_owned(),
        specific["permissionDecisionReason"].as_str().unwrap().to_owned(),
    )
}

fn dirs() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().join("proj");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    (tmp, cwd, home)
}

#[test]
fn one_input_one_line_exit_zero_for_every_decision() {
    let (_tmp, cwd, home) = dirs();
    for (tool, tool_input, expected) in [
        ("Bash", json!({"command": "git status"}), "allow"),
        // Another system changed: no sandbox contains it, so it asks with contained allows on too.
        ("Bash", json!({"command": "git push origin main"}), "ask"),
        ("Bash", json!({"command": "rm -rf /"}), "deny"),
    ] {
        let out = run(&["check"], &input(&cwd, tool, tool_input), &home);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(stdout.lines().count(), 1, "{stdout}");
        let (decision, reason) = decision(stdout.trim());
        assert_eq!(decision, expected, "{reason}");
        assert!(!reason.is_empty());
    }
}

/// Runs `check` on raw bytes.
fn run_bytes(args: &[&str], stdin: &[u8], home: &Path) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-guard"));
    command
        .args(args)
        .env("HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

/// The coding agent blocks a call on exit code 2 and runs it on any other non-zero code: an input the hook cannot
/// decide must end in 2, with one line of reason on stderr and nothing on stdout that could read as a decision.
fn assert_blocked(out: &Output, what: &str, reason: &str) {
    assert_eq!(
        out.status.code(),
        Some(2),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(stderr.trim().lines().count(), 1, "{what}: {stderr}");
    assert!(stderr.contains(reason), "{what}: {stderr}");
    assert!(stderr.contains("the call is blocked"), "{what}: {stderr}");
}

#[test]
fn malformed_input_is_a_one_line_error_and_exit_two() {
    let (_tmp, cwd, home) = dirs();
    let huge = input(
        &cwd,
        "Write",
        json!({"file_path": "a.txt", "content": "x".repeat(6 << 20)}),
    );
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty stdin", Vec::new(), "stdin is empty"),
        ("blank stdin", b"  \n\n".to_vec(), "stdin is empty"),
        ("not JSON", b"not json".to_vec(), "invalid hook input"),
        (
            "truncated JSON",
            input(&cwd, "Bash", json!({"command": "ls"})).as_bytes()[..40].to_vec(),
            "EOF",
        ),
        ("a JSON list", b"[1, 2]".to_vec(), "invalid hook input"),
        ("an empty object", b"{}".to_vec(), "missing field"),
        ("no tool_name", br#"{"cwd": "/x"}"#.to_vec(), "`tool_name`"),
        (
            "empty tool_name",
            json!({"cwd": cwd, "tool_name": ""}).to_string().into_bytes(),
            "`tool_name` is empty",
        ),
        (
            "no cwd",
            json!({"tool_name": "Bash", "tool_input": {"command": "ls"}})
                .to_string()
                .into_bytes(),
            "`cwd`",
        ),
        (
            "empty cwd",
            json!({"cwd": "", "tool_name": "Bash", "tool_input": {"command": "ls"}})
                .to_string()
                .into_bytes(),
            "`cwd` is empty",
        ),
        (
            "relative cwd",
            json!({"cwd": ".", "tool_name": "Bash", "tool_input": {"command": "ls"}})
                .to_string()
                .into_bytes(),
            "not an absolute path",
        ),
        (
            "another event",
            json!({"cwd": cwd, "tool_name": "Bash", "hook_event_name": "PostToolUse"})
                .to_string()
                .into_bytes(),
            "`PostToolUse`",
        ),
        ("a huge line", huge.into_bytes(), "larger than 4 MiB"),
        (
            "invalid UTF-8",
            [
                &br#"{"cwd":"/tmp","tool_name":"Bash","tool_input":{"command":"ls "#[..],
                b"\xff\xfe\"}}",
            ]
            .concat(),
            "not UTF-8",
        ),
    ];
    for (what, bytes, reason) in cases {
        let out = run_bytes(&["check"], &bytes, &home);
        assert_blocked(&out, what, reason);
        assert!(
            String::from_utf8_lossy(&out.stderr).starts_with("agent-guard: "),
            "{what}"
        );
    }
}

#[test]
fn usage_errors_of_check_exit_two() {
    let (_tmp, cwd, home) = dirs();
    let ls = input(&cwd, "Bash", json!({"command": "ls"}));
    let out = run(&["check", "--no-such-flag"], &ls, &home);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let out = run(&["check", "--settings"], &ls, &home);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    // A `--settings` file that does not exist: the hook command itself is wrong, and the call is blocked.
    let out = run(
        &["check", "--settings", "/nonexistent/agent-guard.json"],
        &ls,
        &home,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(decision(String::from_utf8(out.stdout).unwrap().trim()).0, "deny");
}

#[test]
fn a_panic_blocks_the_call() {
    let (_tmp, cwd, home) = dirs();
    let ls = input(&cwd, "Bash", json!({"command": "ls"}));
    for point in ["check", "decide"] {
        let mut command = Command::new(env!("CARGO_BIN_EXE_agent-guard"));
        command
            .arg("check")
            .env("HOME", &home)
            .env("AGENT_GUARD_FAILPOINT", point)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        feed(&mut child, &ls);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{point}");
        assert!(out.stdout.is_empty(), "{point}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.contains(&format!("internal error: failpoint `{point}` reached")),
            "{stderr}"
        );
        // One line from the panic hook; the deciding thread's panic adds the line saying no decision was made.
        assert!(stderr.lines().count() <= 2, "{stderr}");
        assert!(stderr.lines().all(|l| l.starts_with("agent-guard: ")), "{stderr}");
    }
}

#[test]
fn a_stdin_that_is_never_closed_is_blocked_in_bounded_time() {
    let (_tmp, _cwd, home) = dirs();
    let started = std::time::Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-guard"))
        .arg("check")
        .env("HOME", &home)
        .env("AGENT_GUARD_DECISION_TIMEOUT_MS", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Half an input, and stdin stays open (held by `stdin` until the child has exited).
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(br#"{"cwd":"/tmp","tool_name":"Ba"#).unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_blocked(&out, "stalled stdin", "no decision within");
    // The bound is the decision's (1 ms here) plus ten seconds for reading and loading.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn jsonl_keeps_order_and_reports_a_bad_line_in_place() {
    let (_tmp, cwd, home) = dirs();
    let lines = [
        input(&cwd, "Bash", json!({"command": "ls"})),
        "{broken".to_owned(),
        input(&cwd, "Write", json!({"file_path": "a.txt", "content": "x"})),
        input(&cwd, "Read", json!({"file_path": "/etc/shadow"})),
    ];
    let out = run(&["check", "--jsonl"], &(lines.join("\n") + "\n"), &home);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let got: Vec<&str> = stdout.lines().collect();
    assert_eq!(got.len(), 4, "{stdout}");
    assert_eq!(decision(got[0]).0, "allow");
    let error: Value = serde_json::from_str(got[1]).unwrap();
    assert!(error["error"].as_str().unwrap().contains("line 2"), "{}", got[1]);
    assert_eq!(decision(got[2]).0, "ask");
    assert_eq!(decision(got[3]).0, "deny");
}

/// A script that writes a line and waits for its answer gets it while its stdin stays open: each answer is written
/// and flushed before the next line is read, though another thread writes it.
#[test]
fn jsonl_answers_each_line_before_the_next_is_written() {
    use std::io::BufRead;
    let (_tmp, cwd, home) = dirs();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-guard"))
        .args(["check", "--jsonl"])
        .env("HOME", &home)
        .env("AGENT_GUARD_AUDIT", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (lines, answers) = std::sync::mpsc::channel();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let reader = std::thread::spawn(move || {
        for line in stdout.lines() {
            if lines.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    for (tool_input, expected) in [
        (json!({"command": "ls"}), "allow"),
        (json!({"command": "rm -rf /"}), "deny"),
        (json!({"command": "cat README.md"}), "allow"),
    ] {
        writeln!(stdin, "{}", input(&cwd, "Bash", tool_input)).unwrap();
        stdin.flush().unwrap();
        let answer = answers
            .recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
            .expect("no answer while stdin is open");
        assert_eq!(decision(&answer).0, expected, "{answer}");
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    reader.join().unwrap();
    assert!(answers.try_recv().is_err(), "one answer a line");
}

#[test]
fn jsonl_reports_lines_that_are_not_utf8_or_too_long_in_place() {
    let (_tmp, cwd, home) = dirs();
    let mut stdin = Vec::new();
    stdin.extend(input(&cwd, "Bash", json!({"command": "ls"})).bytes());
    stdin.extend(b"\n{\"cwd\":\"/tmp\",\"tool_name\":\"\xff\"}\n");
    stdin.extend(std::iter::repeat_n(b' ', 5 << 20));
    stdin.extend(b"x\n");
    stdin.extend(input(Path::new("rel"), "Bash", json!({"command": "ls"})).bytes());
    stdin.push(b'\n');
    stdin.extend(input(&cwd, "Bash", json!({"command": "rm -rf /"})).bytes());
    let out = run_bytes(&["check", "--jsonl"], &stdin, &home);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let got: Vec<&str> = stdout.lines().collect();
    assert_eq!(got.len(), 5, "{stdout}");
    assert_eq!(decision(got[0]).0, "allow");
    for (line, (number, why)) in got[1..4].iter().zip([
        (2, "not UTF-8"),
        (3, "longer than 4 MiB"),
        (4, "not an absolute path"),
    ]) {
        let error: Value = serde_json::from_str(line).unwrap();
        let error = error["error"].as_str().unwrap();
        assert!(error.starts_with(&format!("line {number}: ")), "{error}");
        assert!(error.contains(why), "{error}");
    }
    assert_eq!(decision(got[4]).0, "deny");
}

#[test]
fn mode_flag_overrides_the_input_mode() {
    let (_tmp, cwd, home) = dirs();
    let write = input(&cwd, "Write", json!({"file_path": "a.txt", "content": "x"}));
    assert_eq!(
        decision(
            String::from_utf8(run(&["check"], &write, &home).stdout)
                .unwrap()
                .trim()
        )
        .0,
        "ask"
    );
    let accept = run(&["check", "--mode", "acceptEdits"], &write, &home);
    assert_eq!(
        decision(String::from_utf8(accept.stdout).unwrap().trim()).0,
        "allow"
    );
    let plan_input = write.replace("\"default\"", "\"plan\"");
    assert_eq!(
        decision(
            String::from_utf8(run(&["check"], &plan_input, &home).stdout)
                .unwrap()
                .trim()
        )
        .0,
        "deny"
    );
    // A bad mode in the hook's command line is no decision: exit code 2 blocks the call.
    let bad = run(&["check", "--mode", "yolo"], &write, &home);
    assert_eq!(bad.status.code(), Some(2));
    assert!(bad.stdout.is_empty());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("`yolo`"));
}

#[test]
fn settings_files_from_the_command_line_and_the_project() {
    let (tmp, cwd, home) = dirs();
    let cli = tmp.path().join("cli.json");
    std::fs::write(&cli, r#"{"permissions":{"allow":["Bash(npm install)"]}}"#).unwrap();
    let npm = input(&cwd, "Bash", json!({"command": "npm install"}));
    let out = run(&["check", "--settings", cli.to_str().unwrap()], &npm, &home);
    let (decision_text, reason) = decision(String::from_utf8(out.stdout).unwrap().trim());
    assert_eq!(decision_text, "allow");
    assert!(reason.contains("cliArg"), "{reason}");
    std::fs::create_dir_all(cwd.join(".claude")).unwrap();
    std::fs::write(
        cwd.join(".claude/settings.json"),
        r#"{"permissions":{"deny":["Bash(npm:*)"]}}"#,
    )
    .unwrap();
    let out = run(&["check", "--settings", cli.to_str().unwrap()], &npm, &home);
    assert_eq!(decision(String::from_utf8(out.stdout).unwrap().trim()).0, "deny");
}

#[test]
fn broken_settings_deny_instead_of_failing_open() {
    let (_tmp, cwd, home) = dirs();
    std::fs::create_dir_all(cwd.join(".agent-guard")).unwrap();
    std::fs::write(
        cwd.join(".agent-guard/settings.json"),
        r#"{"permissions":{"allow":["Bash(ls"]}}"#,
    )
    .unwrap();
    let out = run(&["check"], &input(&cwd, "Bash", json!({"command": "ls"})), &home);
    assert!(out.status.success());
    let (decision_text, reason) = decision(String::from_utf8(out.stdout).unwrap().trim());
    assert_eq!(decision_text, "deny");
    assert!(
        reason.contains("`Bash(ls`") && reason.contains("allow[0]"),
        "{reason}"
    );
}

#[test]
fn empty_home_means_builtin_defaults() {
    let (_tmp, cwd, _home) = dirs();
    let out = run(
        &["check"],
        &input(&cwd, "Read", json!({"file_path": "x.txt"})),
        Path::new(""),
    );
    assert!(out.status.success());
    assert_eq!(decision(String::from_utf8(out.stdout).unwrap().trim()).0, "allow");
}

/// Recorded hook inputs of every tool family of the coding agent, with the decision expected in a fresh project.
#[test]
fn recorded_inputs_of_every_tool_family() {
    let (_tmp, cwd, home) = dirs();
    std::fs::write(cwd.join("README.md"), "# x").unwrap();
    let fixtures = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/hook-inputs.jsonl"
    ))
    .unwrap();
    let mut inputs = Vec::new();
    let mut expected = Vec::new();
    for line in fixtures.lines().filter(|l| !l.trim().is_empty()) {
        let mut value: Value = serde_json::from_str(line).unwrap();
        expected.push(value["expect"].as_str().unwrap().to_owned());
        value.as_object_mut().unwrap().remove("expect");
        value["cwd"] = json!(cwd);
        inputs.push(value.to_string());
    }
    let out = run(&["check", "--jsonl"], &(inputs.join("\n") + "\n"), &home);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let got: Vec<(String, String)> = stdout.lines().map(decision).collect();
    assert_eq!(got.len(), expected.len());
    for ((decision, reason), (want, input)) in got.iter().zip(expected.iter().zip(&inputs)) {
        assert_eq!(decision, want, "{input}: {reason}");
    }
}

#[test]
fn a_decision_that_does_not_finish_in_time_is_a_deny() {
    let (_tmp, cwd, home) = dirs();
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-guard"));
    command
        .arg("check")
        .env("HOME", &home)
        .env("AGENT_GUARD_DECISION_TIMEOUT_MS", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = command.spawn().unwrap();
    // Thousands of commands take far longer than a millisecond to analyse.
    let long = vec!["echo ok"; 5_000].join(" && ");
    feed(&mut child, &input(&cwd, "Bash", json!({ "command": long })));
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let (decision_text, reason) = decision(String::from_utf8(out.stdout).unwrap().trim());
    assert_eq!(decision_text, "deny");
    assert!(reason.contains("did not finish"), "{reason}");
}

/// A shell glob is expanded and every file it names is checked, so a glob over many files takes far longer than
/// a millisecond to decide. Under a bound that small, `--jsonl` denies each such line exactly as a single `check`
/// denies the input: every decision of both goes through the same bounded entry.
#[test]
fn jsonl_bounds_every_decision_exactly_as_a_single_check() {
    let (_tmp, cwd, home) = dirs();
    for i in 0..1_500 {
        std::fs::write(cwd.join(format!("f{i:04}.txt")), "x").unwrap();
    }
    let glob = input(&cwd, "Bash", json!({"command": "cat *.txt"}));
    // Without the small bound the line is decided on its merits: reading files inside the project.
    let free = run(&["check"], &glob, &home);
    assert!(free.status.success(), "{}", String::from_utf8_lossy(&free.stderr));
    let (merits, reason) = decision(String::from_utf8(free.stdout).unwrap().trim());
    assert_eq!(merits, "allow", "{reason}");

    let bound = [("AGENT_GUARD_DECISION_TIMEOUT_MS", "1")];
    let single = run_with(&["check"], &glob, &home, &bound);
    assert!(
        single.status.success(),
        "{}",
        String::from_utf8_lossy(&single.stderr)
    );
    let single = String::from_utf8(single.stdout).unwrap();
    let (denied, reason) = decision(single.trim());
    assert_eq!(denied, "deny", "{reason}");
    assert!(reason.contains("did not finish within 1 ms"), "{reason}");

    let lines = [glob.clone(), glob.clone(), glob].join("\n") + "\n";
    let jsonl = run_with(&["check", "--jsonl"], &lines, &home, &bound);
    assert!(
        jsonl.status.success(),
        "{}",
        String::from_utf8_lossy(&jsonl.stderr)
    );
    let stdout = String::from_utf8(jsonl.stdout).unwrap();
    let got: Vec<&str> = stdout.lines().collect();
    assert_eq!(got.len(), 3, "{stdout}");
    for line in got {
        assert_eq!(line, single.trim(), "a --jsonl line and the single check differ");
    }
}

/// The hook decides on its only thread under a timer that, past the bound, writes the deny itself: whatever the
/// moment the bound falls (before, during or just after the decision), exactly one complete answer is printed,
/// the decision's or the bound's, and the exit code is 0.
#[test]
fn the_bound_and_the_answer_never_mix() {
    let (_tmp, cwd, home) = dirs();
    // A read-only line long enough that deciding it takes some milliseconds.
    let long = vec!["ls -l"; 400].join(" && ");
    let call = input(&cwd, "Bash", json!({ "command": long }));
    // How long the whole run takes without a tight bound on this machine and build: the sweep of bounds below
    // crosses it, so that the bound falls before, during and after the decision.
    let started = std::time::Instant::now();
    let free = run(&["check"], &call, &home);
    let whole = u64::try_from(started.elapsed().as_millis()).unwrap().max(4);
    assert_eq!(
        decision(String::from_utf8(free.stdout).unwrap().trim()).0,
        "allow"
    );
    let (mut in_time, mut past) = (0, 0);
    for bound in (0..=32).map(|i| whole * i / 16).chain([5_000]) {
        let limit = bound.to_string();
        let out = run_with(
            &["check"],
            &call,
            &home,
            &[("AGENT_GUARD_DECISION_TIMEOUT_MS", limit.as_str())],
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(0), "bound {bound} ms: {stdout}");
        assert!(
            stdout.ends_with('\n') && stdout.matches('\n').count() == 1,
            "bound {bound} ms: not one line: {stdout:?}"
        );
        let (decision_text, reason) = decision(stdout.trim_end());
        match decision_text.as_str() {
            "allow" => in_time += 1,
            "deny" => {
                assert!(
                    reason.contains(&format!("did not finish within {bound} ms")),
                    "{reason}"
                );
                past += 1;
            }
            other => panic!("bound {bound} ms: {other}: {reason}"),
        }
    }
    // Both ends were reached: a bound of 0 ms always passes, 5 s never does.
    assert!(
        in_time > 0 && past > 0,
        "{in_time} in time, {past} past the bound"
    );
}

/// A Grep runs outside the sandbox with nothing to redact its output: a project file holding a credential under an
/// ordinary name is left out of it by the `glob` of its `updatedInput`, or the call asks when it has a glob of its
/// own. So also for a Grep that shows only file names or counts: whether a file matched a pattern guessed a
/// character at a time reads the token out of it, one call per guess.
#[test]
fn a_search_leaves_out_a_file_holding_a_credential() {
    let (_tmp, cwd, home) = dirs();
    std::fs::create_dir_all(cwd.join(".git")).unwrap();
    std::fs::create_dir_all(cwd.join("config")).unwrap();
    std::fs::write(
        cwd.join("config/q7r.yml"),
        "service:\n  api_token: ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7\n",
    )
    .unwrap();
    std::fs::write(cwd.join("config/app.yml"), "service:\n  port: 8080\n").unwrap();
    let check = |tool_input: Value| {
        let out = run(&["check"], &input(&cwd, "Grep", tool_input), &home);
        let line = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let value: Value = serde_json::from_str(&line).unwrap();
        (
            decision(&line),
            value["hookSpecificOutput"]["updatedInput"].clone(),
        )
    };
    let ((verdict, reason), updated) = check(json!({"pattern": "token", "output_mode": "content"}));
    assert_eq!(verdict, "allow", "{reason}");
    let glob = updated["glob"].as_str().unwrap_or_default();
    assert!(glob.contains("q7r.yml") && !glob.contains("app.yml"), "{updated}");
    let ((verdict, reason), _) =
        check(json!({"pattern": "token", "glob": "*.yml", "output_mode": "content"}));
    assert_eq!(verdict, "ask", "{reason}");
    assert!(
        reason.contains("GitHub token") && !reason.contains("ghp_"),
        "{reason}"
    );
    for mode in ["files_with_matches", "count"] {
        let ((verdict, reason), updated) =
            check(json!({"pattern": "ghp_4f[A-M]", "path": "config", "output_mode": mode}));
        assert_eq!(verdict, "allow", "{reason}");
        let glob = updated["glob"].as_str().unwrap_or_default();
        assert!(
            glob.contains("q7r.yml") && !glob.contains("app.yml"),
            "{mode}: {updated}"
        );
    }
    let ((verdict, _), updated) = check(json!({"pattern": "port", "path": "config/app.yml"}));
    assert_eq!(verdict, "allow");
    assert!(updated.is_null(), "a clean file is not narrowed: {updated}");
}

/// A Grep over a project with secret files by name is allowed narrowed: its `updatedInput` adds a `glob` that
/// leaves each of them out (ripgrep excludes a `!` glob at every depth). Where it cannot be narrowed (a `glob` of
/// its own that still reaches one, or a secret file named directly) it asks.
#[test]
fn a_search_over_secret_files_by_name_is_allowed_with_them_left_out() {
    let (_tmp, cwd, home) = dirs();
    std::fs::create_dir_all(cwd.join(".git")).unwrap();
    std::fs::create_dir_all(cwd.join("src")).unwrap();
    std::fs::create_dir_all(cwd.join("deploy/keys")).unwrap();
    std::fs::write(cwd.join(".env"), "TOKEN=x\n").unwrap();
    std::fs::write(cwd.join("deploy/keys/id_ed25519"), "key\n").unwrap();
    std::fs::write(cwd.join("src/a.rs"), "fn a() {}\n").unwrap();
    let check = |tool_input: Value| {
        let out = run(&["check"], &input(&cwd, "Grep", tool_input), &home);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let value: Value = serde_json::from_str(&line).unwrap();
        (
            decision(&line),
            value["hookSpecificOutput"]["updatedInput"].clone(),
        )
    };
    for tool_input in [
        json!({"pattern": "TOKEN"}),
        json!({"pattern": "TOKEN", "output_mode": "content", "-n": true}),
        json!({"pattern": "TOKEN", "path": cwd}),
    ] {
        let ((decision, reason), updated) = check(tool_input.clone());
        assert_eq!(decision, "allow", "{tool_input}: {reason}");
        let glob = updated["glob"].as_str().unwrap();
        let mut names: Vec<&str> = glob
            .trim_start_matches("!{")
            .trim_start_matches('!')
            .trim_end_matches('}')
            .split(',')
            .collect();
        names.sort_unstable();
        assert_eq!(names, [".env", "id_ed25519"], "{glob}");
        // Everything else of the input is kept.
        for (key, value) in tool_input.as_object().unwrap() {
            assert_eq!(&updated[key], value);
        }
    }
    // A search that reaches no secret file is not narrowed.
    let ((decision, _), updated) = check(json!({"pattern": "x", "path": "src"}));
    assert_eq!(decision, "allow");
    assert!(updated.is_null());
    // Its own glob that still reaches `.env`, and `.env` itself, ask.
    for tool_input in [
        json!({"pattern": "TOKEN", "glob": ".env*"}),
        json!({"pattern": "TOKEN", "path": cwd.join(".env")}),
    ] {
        let ((decision, reason), _) = check(tool_input.clone());
        assert_eq!(decision, "ask", "{tool_input}: {reason}");
    }
}
