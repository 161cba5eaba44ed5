//! `agent-guard explain` as people type it, and its text and JSON free of Rust debug formatting.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

#[path = "../../../tests/support/poll.rs"]
mod poll;

fn run(args: &[&str], dir: &Path, stdin: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-guard"));
    command
        .args(args)
        .current_dir(dir)
        .env("HOME", dir.join("home"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, _) in std::env::vars() {
        if key.starts_with("AGENT_") {
            command.env_remove(key);
        }
    }
    let mut child = command.spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        pipe.write_all(text.as_bytes()).unwrap();
    }
    drop(pipe);
    child.wait_with_output().unwrap()
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// What Rust's `{:?}` leaves in text: struct braces, `Some(`/`None`, quoted lists, CamelCase variant names.
fn assert_no_debug(text: &str) {
    for artefact in [
        "{ ",
        " }",
        "Some(",
        "None",
        "[\"",
        "Location",
        "kind:",
        "ReadOnly",
        "TopLevel",
        "Pipeline",
        "CommandSubstitution",
        "PackageManager",
        "   Read `",
        "   Write `",
    ] {
        assert!(!text.contains(artefact), "`{artefact}` in\n{text}");
    }
}

#[test]
fn a_command_line_is_explained_without_debug_formatting() {
    let tmp = tempfile::tempdir().unwrap();
    let text = ok(&run(&["explain", "-c", "ls -la"], tmp.path(), None));
    assert_no_debug(&text);
    assert!(text.contains("call: Bash {\"command\":\"ls -la\"}"), "{text}");
    assert!(
        text.contains(&format!("cwd:  {}", tmp.path().display())),
        "{text}"
    );
    assert!(
        text.contains("   1. ls -la\n      top level; class read-only; read-only with these arguments"),
        "{text}"
    );
    assert!(text.contains("decision: ALLOW"), "{text}");

    let text = ok(&run(
        &[
            "explain",
            "--command",
            "cat \"my file\" | grep -c x; echo $(date) && sudo env A=1 rm -rf x",
        ],
        tmp.path(),
        None,
    ));
    assert_no_debug(&text);
    assert!(
        text.contains("1. cat 'my file'\n      in a pipeline; class read-only"),
        "{text}"
    );
    assert!(
        text.contains("in a command substitution $( … ), nested 1 deep, inside command 3"),
        "{text}"
    );
    assert!(text.contains("class privileged; runs rm -rf x"), "{text}");
    assert!(text.contains("read `my file` -> "), "{text}");
    assert!(text.contains("decision: DENY"), "{text}");
}

#[test]
fn files_and_tools_are_explained_from_the_current_or_a_given_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("proj");
    std::fs::create_dir_all(&project).unwrap();

    let text = ok(&run(&["explain", "--read", ".env"], &project, None));
    assert_no_debug(&text);
    assert!(
        text.contains(&format!("read `.env` -> {}", project.join(".env").display())),
        "{text}"
    );
    assert!(text.contains("decision: ASK: protected path"), "{text}");

    // A Write of empty content: the widest write, so a file rule or mode decides as it would for any write.
    let text = ok(&run(
        &["explain", "--write", "src/lib.rs", "--mode", "acceptEdits"],
        &project,
        None,
    ));
    assert_no_debug(&text);
    assert!(
        text.contains("call: Write {\"content\":\"\",\"file_path\":\"src/lib.rs\"}"),
        "{text}"
    );
    assert!(text.contains("write `src/lib.rs` -> "), "{text}");
    assert!(text.contains("decision: ALLOW"), "{text}");

    let text = ok(&run(
        &[
            "explain",
            "--tool",
            "Edit",
            "--input",
            r#"{"file_path":"/etc/passwd","old_string":"a","new_string":"b"}"#,
        ],
        tmp.path(),
        None,
    ));
    assert!(text.contains("decision: DENY"), "{text}");
    let text = ok(&run(
        &[
            "explain",
            "--tool",
            "Read",
            "--input",
            r#"{"file_path":"x.txt"}"#,
            "--cwd",
            "proj",
        ],
        tmp.path(),
        None,
    ));
    assert!(text.contains(&format!("cwd:  {}", project.display())), "{text}");

    let bad = run(
        &["explain", "--tool", "Edit", "--input", "{not json"],
        tmp.path(),
        None,
    );
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("`--input` is not JSON"));
    let both = run(&["explain", "-c", "ls", "--read", "x"], tmp.path(), None);
    assert_eq!(both.status.code(), Some(2), "one call at a time is a usage error");
}

#[test]
fn a_hook_input_on_stdin_still_works() {
    let tmp = tempfile::tempdir().unwrap();
    let input = format!(
        r#"{{"cwd":"{}","tool_name":"Bash","tool_input":{{"command":"git status"}}}}"#,
        tmp.path().display()
    );
    let text = ok(&run(&["explain"], tmp.path(), Some(&input)));
    assert!(text.contains("1. git status"), "{text}");
    assert!(text.contains("decision: ALLOW"), "{text}");
    // --cwd replaces the input's working directory.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let text = ok(&run(&["explain", "--cwd", "other"], tmp.path(), Some(&input)));
    assert!(text.contains(&format!("cwd:  {}", other.display())), "{text}");
}

#[test]
fn json_carries_plain_structured_fields() {
    let tmp = tempfile::tempdir().unwrap();
    let out = ok(&run(
        &["explain", "--json", "-c", "echo $(cat a.txt) | wc"],
        tmp.path(),
        None,
    ));
    let value: Value = serde_json::from_str(&out).unwrap();
    // Every string in the trace is plain text.
    let mut strings = vec![&value];
    while let Some(next) = strings.pop() {
        match next {
            Value::String(text) => assert_no_debug(text),
            Value::Array(items) => strings.extend(items),
            Value::Object(map) => strings.extend(map.values()),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    let commands = value["commands"].as_array().unwrap();
    assert_eq!(commands[0]["argv"], serde_json::json!(["echo", "$(cat a.txt)"]));
    assert_eq!(commands[0]["class"], "read-only");
    assert_eq!(
        commands[0]["location"],
        serde_json::json!({"kind": "pipeline", "depth": 0, "parent": null})
    );
    let cat = commands.iter().find(|c| c["argv"][0] == "cat").unwrap();
    assert_eq!(cat["location"]["kind"], "command-substitution");
    assert_eq!(cat["location"]["depth"], 1);
    assert_eq!(cat["location"]["parent"], 0);
    assert_eq!(value["paths"][0]["access"], "read");
}

/// Without a call and with a terminal on stdin, explain says what it expects at once (exit 2), instead of waiting
/// for a hook input nobody types.
#[test]
fn without_a_call_on_a_terminal_it_says_what_it_expects() {
    let tmp = tempfile::tempdir().unwrap();
    let pty = nix::pty::openpty(None, None).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-guard"))
        .arg("explain")
        .current_dir(tmp.path())
        .env("HOME", tmp.path())
        .stdin(Stdio::from(pty.slave))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    poll::wait_until(
        std::time::Duration::from_secs(20),
        "explain says what it expects instead of waiting on the terminal",
        || child.try_wait().unwrap().is_some(),
    );
    drop(pty.master);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("explain needs a call: `-c CMD`"), "{stderr}");
    assert!(stderr.contains("or a hook input on stdin"), "{stderr}");
    assert!(out.stdout.is_empty());
}

/// The trace shows the layers in the order of their numbers, L1 first, then how they were weighed.
#[test]
fn the_layers_print_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let settings = tmp.path().join("settings.json");
    std::fs::write(&settings, r#"{"permissions":{"ask":["Bash(git push:*)"]}}"#).unwrap();
    let text = ok(&run(
        &[
            "explain",
            "-c",
            "git push origin main",
            "--settings",
            settings.to_str().unwrap(),
        ],
        tmp.path(),
        None,
    ));
    let at = |heading: &str| {
        text.find(heading)
            .unwrap_or_else(|| panic!("no `{heading}` in\n{text}"))
    };
    let order = [
        at("\nL1 tool checks"),
        at("\nL2 rules\n"),
        at("\nL4 fs-sandbox"),
        at("\nL5 bash-guard"),
        at("\nresolution (first applicable wins)"),
        at("\ndecision: ASK"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
    // The rules layer names the rule that matched.
    let rules = &text[order[1]..order[2]];
    assert!(rules.contains("(`Bash(git push:*)`)"), "{text}");
}
