//! The hook's audit log on the built binary: every decision of `check` (one input, `--jsonl`, with a server) and
//! every answer of `approve` lands in the project's `.agent-guard/audit.db`, git-ignored; 50 hooks at once lose no
//! row; a failing log never changes the decision; `audit` and `diff --audit-db` read what the hook wrote.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

mod hook;
mod served;

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hook::{decision, input, run, run_with, text};
use serde_json::{Value, json};
use served::{TOKEN, serve};

/// A project with a `.git` marker and a `src` subdirectory, and a scratch home.
struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    src: PathBuf,
    home: PathBuf,
}

fn project() -> Project {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("proj");
    let src = root.join("src");
    let home = base.join("home");
    for dir in [&root.join(".git"), &src, &home] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(root.join("README.md"), "# proj\n").unwrap();
    Project {
        _tmp: tmp,
        root,
        src,
        home,
    }
}

/// The rows `agent-guard audit --json` reads, from `dir` with its default database (or `args`).
fn rows(dir: &Path, home: &Path, args: &[&str], env: &[(&str, &str)]) -> Vec<Value> {
    let out = run_with(&[&["audit", "--json"], args].concat(), "", dir, home, env);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn every_decision_of_check_is_recorded_in_the_project_from_any_subdirectory() {
    let p = project();
    std::fs::create_dir_all(p.root.join(".claude")).unwrap();
    std::fs::write(
        p.root.join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["Bash(git push:*)"]}}"#,
    )
    .unwrap();
    let calls = [
        ("Bash", json!({"command": "git status"}), "default"),
        ("Bash", json!({"command": "git push origin main"}), "default"),
        ("Read", json!({"file_path": p.root.join("README.md")}), "plan"),
        (
            "Write",
            json!({"file_path": "notes.txt", "content": "x"}),
            "acceptEdits",
        ),
    ];
    let mut printed = Vec::new();
    for (tool, tool_input, mode) in &calls {
        let mut line: Value = serde_json::from_str(&input(&p.src, tool, tool_input.clone())).unwrap();
        line["permission_mode"] = json!(mode);
        let out = run_with(&["check"], &line.to_string(), &p.src, &p.home, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(text(&out.stderr), "", "a written row says nothing");
        printed.push(decision(text(&out.stdout).trim()));
    }

    // The rows are the project's, spooled beside its database (a line each, readable by the user alone), and
    // git-ignored with everything beside them.
    let state = p.root.join(".agent-guard");
    let spool = state.join("audit.db-spool");
    assert_eq!(
        std::fs::read_to_string(&spool).unwrap().lines().count(),
        calls.len()
    );
    assert_eq!(
        std::fs::metadata(&spool).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(!p.src.join(".agent-guard").exists());
    let ignore = std::fs::read_to_string(state.join(".gitignore")).unwrap();
    assert!(ignore.lines().any(|line| line == "*"), "{ignore}");

    // `audit` finds them from any directory of the project, having moved them into the database.
    let rows = rows(&p.src, &p.home, &[], &[]);
    assert!(state.join("audit.db").is_file());
    assert!(!spool.exists());
    assert_eq!(rows.len(), calls.len());
    for ((row, (tool, tool_input, mode)), (decision, reason)) in rows.iter().zip(&calls).zip(&printed) {
        assert_eq!(row["tool_name"], *tool);
        assert_eq!(row["decision"], *decision, "{row}");
        assert_eq!(
            format!("agent-guard: {}", row["output_preview"].as_str().unwrap()),
            reason.chars().take(200 + 13).collect::<String>()
        );
        assert_eq!(row["permission_mode"], *mode);
        assert_eq!(row["tool_input"], *tool_input);
        assert_eq!(row["cwd"], json!(p.src));
        assert_eq!(row["session_id"], "s1");
        assert_eq!(row["agent_name"], "hook");
        let layer = row["decided_by"].as_str().unwrap();
        assert!(!layer.is_empty() && layer != "-", "{row}");
    }
    assert_eq!(rows[0]["subject"], "git status");
    assert_eq!(rows[1]["subject"], "git push origin main");
    assert_eq!(rows[1]["decision"], "deny");
    assert_eq!(rows[1]["status"], "DENIED");
    assert_eq!(rows[1]["decided_by"], "rules/deny-rule");
    assert_eq!(rows[2]["subject"], json!(p.root.join("README.md")));
    assert_eq!(rows[3]["subject"], "notes.txt");

    // The table shows the command or path too.
    let table = run(&["audit"], "", &p.root, &p.home);
    let table = text(&table.stdout);
    assert!(
        table.lines().next().unwrap().contains("command or path"),
        "{table}"
    );
    assert!(table.contains("git push origin main"), "{table}");
    assert!(table.contains("notes.txt"), "{table}");
}

#[test]
fn jsonl_records_each_decided_line_after_its_answer() {
    let p = project();
    let lines = [
        input(&p.src, "Bash", json!({"command": "ls"})),
        String::new(),
        "not json".to_owned(),
        input(&p.root, "Grep", json!({"pattern": "TODO", "path": "src"})),
    ];
    let out = run_with(
        &["check", "--jsonl"],
        &(lines.join("\n") + "\n"),
        &p.root,
        &p.home,
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "two lines are not inputs");
    assert_eq!(text(&out.stdout).lines().count(), 4);
    let rows = rows(&p.root, &p.home, &[], &[]);
    let subjects: Vec<&str> = rows.iter().map(|r| r["subject"].as_str().unwrap()).collect();
    assert_eq!(subjects, ["ls", "TODO in src"]);
}

#[test]
fn the_log_can_be_turned_off_or_moved() {
    let p = project();
    let call = input(&p.src, "Bash", json!({"command": "git status"}));
    let off = run_with(
        &["check"],
        &call,
        &p.src,
        &p.home,
        &[("AGENT_GUARD_AUDIT", "off")],
    );
    assert_eq!(decision(text(&off.stdout).trim()).0, "allow");
    assert!(!p.root.join(".agent-guard").exists(), "nothing written");

    // A relative path is the project's; an absolute one is used as it is.
    let moved = run_with(
        &["check"],
        &call,
        &p.src,
        &p.home,
        &[("AGENT_GUARD_AUDIT", "logs/hook.db")],
    );
    assert_eq!(moved.status.code(), Some(0), "{}", text(&moved.stderr));
    let db = p.root.join("logs/hook.db");
    assert!(p.root.join("logs/hook.db-spool").is_file());
    let env = [("AGENT_GUARD_AUDIT", db.to_str().unwrap())];
    assert_eq!(rows(&p.home, &p.home, &[], &env).len(), 1, "`audit` reads it too");
    assert!(db.is_file());
    assert_eq!(
        rows(&p.home, &p.home, &["--db", db.to_str().unwrap()], &[]).len(),
        1
    );
}

#[test]
fn a_failing_log_never_changes_the_decision() {
    let p = project();
    let allow = input(&p.src, "Bash", json!({"command": "git status"}));
    let deny = input(&p.src, "Bash", json!({"command": "rm -rf /"}));
    // A database under a file cannot be created; a file that is no database cannot be written.
    std::fs::write(p.root.join("file"), "x").unwrap();
    std::fs::write(p.root.join("garbage.db"), vec![b'g'; 8192]).unwrap();
    for (setting, why) in [
        ("file/audit.db", "cannot create the audit directory"),
        ("mysql://h/db", "AGENT_GUARD_AUDIT"),
    ] {
        for (call, want) in [(&allow, "allow"), (&deny, "deny")] {
            let out = run_with(
                &["check"],
                call,
                &p.src,
                &p.home,
                &[("AGENT_GUARD_AUDIT", setting)],
            );
            assert_eq!(out.status.code(), Some(0), "{setting}");
            assert_eq!(decision(text(&out.stdout).trim()).0, want, "{setting}");
            let stderr = text(&out.stderr);
            assert!(
                stderr.contains("no audit row")
                    && stderr.contains(why)
                    && stderr.contains("the decision stands"),
                "{setting}: {stderr}"
            );
            assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        }
    }
    // A file that is no database takes the hook's rows in its spool all the same (nothing is lost); whoever
    // reads it is told.
    let garbage = p.root.join("garbage.db");
    let out = run_with(
        &["check"],
        &allow,
        &p.src,
        &p.home,
        &[("AGENT_GUARD_AUDIT", garbage.to_str().unwrap())],
    );
    assert_eq!(decision(text(&out.stdout).trim()).0, "allow");
    assert_eq!(text(&out.stderr), "");
    assert!(p.root.join("garbage.db-spool").is_file());
    let read = run_with(
        &["audit", "--db", garbage.to_str().unwrap()],
        "",
        &p.src,
        &p.home,
        &[],
    );
    assert!(!read.status.success());
    assert!(
        text(&read.stderr).contains("garbage.db"),
        "{}",
        text(&read.stderr)
    );
    assert!(p.root.join("garbage.db-spool").is_file(), "the row waits");
    // The same through `--jsonl`: every line answered, the trouble said once.
    let out = run_with(
        &["check", "--jsonl"],
        &format!("{allow}\n{deny}\n"),
        &p.src,
        &p.home,
        &[("AGENT_GUARD_AUDIT", "file/audit.db")],
    );
    assert_eq!(out.status.code(), Some(0));
    let decisions: Vec<String> = text(&out.stdout).lines().map(|l| decision(l).0).collect();
    assert_eq!(decisions, ["allow", "deny"]);
    assert_eq!(text(&out.stderr).lines().count(), 1, "{}", text(&out.stderr));
}

/// A database another process keeps locked does not hold the hook: its row waits in the spool, the process ends
/// at once and says nothing; the row is in the database once the lock is gone and somebody reads it.
#[test]
fn a_locked_log_holds_no_hook_and_loses_no_row() {
    use sqlx::{ConnectOptions as _, Executor as _};

    let p = project();
    let db = p.root.join("locked.db");
    let call = input(&p.src, "Bash", json!({"command": "git status"}));
    let env = [("AGENT_GUARD_AUDIT", db.to_str().unwrap())];
    let first = run_with(&["check"], &call, &p.src, &p.home, &env);
    assert_eq!(text(&first.stderr), "");
    // Reading makes the database (and moves the first row in).
    assert_eq!(
        rows(&p.src, &p.home, &["--db", db.to_str().unwrap()], &[]).len(),
        1
    );

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut holder = runtime.block_on(async {
        let mut conn = agent_hooks::SqliteConnectOptions::new()
            .filename(&db)
            .connect()
            .await
            .unwrap();
        conn.execute("BEGIN EXCLUSIVE").await.unwrap();
        conn
    });
    let started = Instant::now();
    let out = run_with(&["check"], &call, &p.src, &p.home, &env);
    let ended = started.elapsed();
    assert_eq!(decision(text(&out.stdout).trim()).0, "allow");
    assert_eq!(
        text(&out.stderr),
        "",
        "the lock is nobody's business but the reader's"
    );
    // Well below the busy timeout (2 s) a write would have waited.
    assert!(ended < Duration::from_secs(2), "ended after {ended:?}");

    runtime.block_on(async { holder.execute("ROLLBACK").await.unwrap() });
    drop(holder);
    assert_eq!(
        rows(&p.src, &p.home, &["--db", db.to_str().unwrap()], &[]).len(),
        2
    );
}

/// 50 hooks at once on one new database (created and migrated by whichever comes first): every decision printed,
/// every row present, nobody held up by the others' writes.
#[test]
fn fifty_hooks_at_once_lose_no_row() {
    let p = project();
    for round in 0..2 {
        let started = Instant::now();
        let children: Vec<_> = (0..50)
            .map(|n| {
                let mut child = Command::new(env!("CARGO_BIN_EXE_agent-guard"))
                    .arg("check")
                    .current_dir(&p.src)
                    .env("HOME", &p.home)
                    .env_remove("AGENT_GUARD_AUDIT")
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                let call = input(&p.src, "Bash", json!({"command": format!("echo {round}-{n}")}));
                child.stdin.take().unwrap().write_all(call.as_bytes()).unwrap();
                child
            })
            .collect();
        let mut slowest = Duration::ZERO;
        for child in children {
            let out = child.wait_with_output().unwrap();
            slowest = slowest.max(started.elapsed());
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
            assert_eq!(text(&out.stderr), "", "no row was lost or late");
            assert_eq!(decision(text(&out.stdout).trim()).0, "allow");
        }
        eprintln!("round {round}: the slowest of 50 hooks at once ended after {slowest:?}");
        // Far below the write's own bound (3 s), which would have said so on stderr.
        assert!(slowest < Duration::from_secs(20), "{slowest:?}");
        let rows = rows(&p.root, &p.home, &["--since", "2000-01-01"], &[]);
        let mut commands: Vec<String> = rows
            .iter()
            .filter_map(|r| r["subject"].as_str())
            .filter(|s| s.starts_with(&format!("echo {round}-")))
            .map(str::to_owned)
            .collect();
        commands.sort();
        commands.dedup();
        assert_eq!(commands.len(), 50, "round {round}: {commands:?}");
        assert_eq!(rows.len(), 50 * (round + 1));
    }
    // The hooks leave their connections to the exit, so the WAL is not checkpointed when the last one closes; the
    // first hook to find it long truncates it, so that the next hook's open does not read a long WAL.
    let last = run(
        &["check"],
        &input(&p.src, "Bash", json!({"command": "ls"})),
        &p.src,
        &p.home,
    );
    assert_eq!(text(&last.stderr), "");
    let wal = std::fs::metadata(p.root.join(".agent-guard/audit.db-wal")).map_or(0, |m| m.len());
    assert!(wal <= 320 * 1024, "the WAL is kept short: {wal} bytes");
}

#[test]
fn audit_filters_by_tool_in_both_families_and_refuses_a_bad_time() {
    let p = project();
    let db = p.root.join("shared.db");
    let db_arg = db.to_str().unwrap();
    // The runtime's rows (`run_bash`, `read_file`, …) and the hook's (`Bash`, `Read`) in one database.
    let demo = run_with(&["demo", "--audit-db", db_arg], "", &p.root, &p.home, &[]);
    assert!(demo.status.success(), "{}", text(&demo.stderr));
    for call in [
        input(&p.src, "Bash", json!({"command": "git status"})),
        input(&p.src, "Read", json!({"file_path": "lib.rs"})),
    ] {
        let out = run_with(
            &["check"],
            &call,
            &p.src,
            &p.home,
            &[("AGENT_GUARD_AUDIT", db_arg)],
        );
        assert_eq!(text(&out.stderr), "");
    }
    let all = rows(&p.root, &p.home, &["--db", db_arg], &[]);
    let count = |names: &[&str]| {
        all.iter()
            .filter(|r| names.contains(&r["tool_name"].as_str().unwrap()))
            .count()
    };
    let shell = count(&["Bash", "run_bash"]);
    assert!(count(&["run_bash"]) > 0, "the runtime's name is in the log");
    assert!(
        all.iter()
            .any(|r| r["tool_name"] == "Bash" && r["agent_name"] == "hook"),
        "the hook's name is in the log"
    );
    for name in ["Bash", "run_bash"] {
        let found = rows(&p.root, &p.home, &["--db", db_arg, "--tool", name], &[]);
        assert_eq!(found.len(), shell, "--tool {name}");
        assert!(
            found.iter().all(|r| !r["subject"].as_str().unwrap().is_empty()),
            "{found:?}"
        );
    }
    let reads = rows(&p.root, &p.home, &["--db", db_arg, "--tool", "read_file"], &[]);
    assert_eq!(reads.len(), count(&["Read", "read_file"]));
    assert!(
        reads
            .iter()
            .any(|r| r["tool_name"] == "Read" && r["subject"] == "lib.rs")
    );

    for bad in ["garbage", "2026-13-01", "yesterday"] {
        let out = run_with(
            &["audit", "--db", db_arg, "--since", bad],
            "",
            &p.root,
            &p.home,
            &[],
        );
        assert_eq!(out.status.code(), Some(2), "--since {bad}");
        let stderr = text(&out.stderr);
        assert!(stderr.contains(&format!("`{bad}`")), "{stderr}");
        assert!(out.stdout.is_empty(), "no table");
    }
    let future = rows(&p.root, &p.home, &["--db", db_arg, "--since", "2999-01-01"], &[]);
    assert!(future.is_empty());
}

#[test]
fn no_log_yet_says_where_the_hook_writes_it() {
    let p = project();
    let out = run(&["audit"], "", &p.src, &p.home);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("`{}`", p.root.join(".agent-guard/audit.db").display())),
        "{stderr}"
    );
    assert!(stderr.contains("agent-guard check"), "{stderr}");
}

#[test]
fn diff_replays_a_hook_users_log() {
    let p = project();
    std::fs::create_dir_all(p.root.join(".claude")).unwrap();
    let old = p.root.join(".claude/settings.json");
    std::fs::write(&old, "{}\n").unwrap();
    let new = p.root.join("stricter.json");
    std::fs::write(
        &new,
        r#"{"permissions": {"deny": ["Bash(git push:*)", "Read(./secrets/**)"]}}"#,
    )
    .unwrap();
    for call in [
        input(&p.src, "Bash", json!({"command": "git status"})),
        input(&p.src, "Bash", json!({"command": "git push origin main"})),
        input(&p.root, "Read", json!({"file_path": "secrets/key.txt"})),
    ] {
        let out = run_with(&["check"], &call, &p.src, &p.home, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let db = p.root.join(".agent-guard/audit.db");
    let out = run_with(
        &[
            "diff",
            old.to_str().unwrap(),
            new.to_str().unwrap(),
            "--audit-db",
            db.to_str().unwrap(),
        ],
        "",
        &p.root,
        &p.home,
        &[],
    );
    let report = text(&out.stdout);
    assert!(
        report.contains("3 calls replayed"),
        "{report}\n{}",
        text(&out.stderr)
    );
    assert!(report.contains("git push origin main"), "{report}");
    assert!(report.contains("secrets/key.txt"), "{report}");
    assert!(
        !report.contains("Bash: git status"),
        "unchanged calls are not listed: {report}"
    );
    let out = run_with(
        &[
            "diff",
            old.to_str().unwrap(),
            new.to_str().unwrap(),
            "--audit-db",
            db.to_str().unwrap(),
            "--since",
            "nope",
        ],
        "",
        &p.root,
        &p.home,
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("`nope`"));
}

#[test]
fn answers_through_the_server_are_recorded_with_who_answered() {
    let server = serve(&["--token", TOKEN, "--approval-timeout", "2"]);
    let project = server.project.clone();
    let audit_rows = || rows(&project, server.dir.path(), &[], &[]);

    // `check --server`: a person's answer is the decision recorded.
    let waiting = server.spawn_client(&["check"], &server.input("s-check", "npm test"), &[]);
    let pending = server.wait_pending(1);
    server.post(
        &format!("/v1/approvals/{}", pending[0]["id"].as_str().unwrap()),
        &json!({"answer": "allow_once"}),
    );
    assert_eq!(served::decision_of(&waiting.wait_with_output().unwrap()), "allow");
    let rows = audit_rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["decision"], "allow");
    assert_eq!(rows[0]["decided_by"], "approval/approver");
    assert!(
        rows[0]["output_preview"]
            .as_str()
            .unwrap()
            .contains("allowed once by the user")
    );

    // `approve`: the answer, who gave it, and no answer at all.
    let mut request = server.input("s-approve", "npm run build");
    request["hook_event_name"] = json!("PermissionRequest");
    let waiting = server.spawn_client(&["approve"], &request, &[]);
    let pending = server.wait_pending(1);
    server.post(
        &format!("/v1/approvals/{}", pending[0]["id"].as_str().unwrap()),
        &json!({"answer": "deny"}),
    );
    let out = waiting.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let expired = server
        .spawn_client(&["approve"], &request, &[])
        .wait_with_output()
        .unwrap();
    assert!(expired.stdout.is_empty());
    let strict = server
        .spawn_client(
            &["approve", "--on-timeout", "deny"],
            &request,
            &[("AGENT_GUARD_SERVER", "http://127.0.0.1:9")],
        )
        .wait_with_output()
        .unwrap();
    assert!(text(&strict.stdout).contains("deny"));

    let rows = audit_rows();
    let answers: Vec<&Value> = rows.iter().filter(|r| r["agent_name"] == "approve").collect();
    assert_eq!(answers.len(), 3, "{rows:?}");
    for row in &answers {
        assert_eq!(row["subject"], "npm run build");
        assert_eq!(row["session_id"], "s-approve");
    }
    let preview = |i: usize| answers[i]["output_preview"].as_str().unwrap().to_owned();
    assert_eq!(answers[0]["decision"], "deny");
    assert_eq!(answers[0]["decided_by"], "approval/approver");
    assert!(
        preview(0).starts_with("answered by a person, through the agent-guard server http://"),
        "{}",
        preview(0)
    );
    assert!(preview(0).contains("denied by the user"), "{}", preview(0));
    assert_eq!(answers[1]["decision"], "ask");
    assert!(
        preview(1).starts_with("answered by the coding agent's own prompt"),
        "{}",
        preview(1)
    );
    assert_eq!(answers[2]["decision"], "deny");
    assert_eq!(answers[2]["decided_by"], "approval/no-prompt");
    assert!(
        preview(2).starts_with("answered by agent-guard approve, --on-timeout deny"),
        "{}",
        preview(2)
    );
}

/// A directory without `.git`, `.claude` or `.agent-guard` is a project only as the working directory itself; the
/// log does not make it one (an `.agent-guard` there would widen the roots of every directory below it), so its
/// rows go to the user's `~/.agent-guard/audit.db`.
#[test]
fn a_directory_that_is_no_project_is_not_made_one() {
    let p = project();
    let plain = p.home.parent().unwrap().join("plain");
    std::fs::create_dir_all(plain.join("sub")).unwrap();
    let out = run_with(
        &["check"],
        &input(&plain, "Bash", json!({"command": "ls"})),
        &plain,
        &p.home,
        &[],
    );
    assert_eq!(text(&out.stderr), "");
    assert!(!plain.join(".agent-guard").exists());
    assert!(p.home.join(".agent-guard/audit.db-spool").is_file());
    assert!(p.home.join(".agent-guard/.gitignore").is_file());
    let rows = rows(&plain.join("sub"), &p.home, &[], &[]);
    assert!(p.home.join(".agent-guard/audit.db").is_file());
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["cwd"], json!(plain));
}

#[test]
fn credentials_in_a_calls_input_are_stored_redacted_and_the_decision_stands() {
    let p = project();
    let token = "ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7";
    let aws = "AKIAYLNKMKFJSA45HBK7";
    let body = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw";
    let calls = [
        (
            "Bash",
            json!({"command": format!("curl -H 'Authorization: token {token}' https://api.github.com/user")}),
        ),
        (
            "Bash",
            json!({"command": format!("AWS_ACCESS_KEY_ID={aws} aws s3 ls")}),
        ),
        (
            "Write",
            json!({"file_path": "deploy/id_rsa",
                "content": format!("-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\n")}),
        ),
    ];
    for (tool, tool_input) in &calls {
        let line = input(&p.src, tool, tool_input.clone());
        // The decision without a log, then with one: the same.
        let unlogged = run_with(
            &["check"],
            &line,
            &p.src,
            &p.home,
            &[("AGENT_GUARD_AUDIT", "off")],
        );
        let logged = run_with(&["check"], &line, &p.src, &p.home, &[]);
        assert_eq!(logged.status.code(), Some(0), "{}", text(&logged.stderr));
        assert_eq!(text(&logged.stdout), text(&unlogged.stdout));
    }
    let rows = rows(&p.src, &p.home, &[], &[]);
    assert_eq!(rows.len(), calls.len());
    assert_eq!(
        rows[0]["tool_input"]["command"],
        "curl -H 'Authorization: token [redacted: GitHub token]' https://api.github.com/user"
    );
    assert_eq!(
        rows[1]["tool_input"]["command"],
        "AWS_ACCESS_KEY_ID=[redacted: AWS access key] aws s3 ls"
    );
    assert_eq!(
        rows[2]["tool_input"],
        json!({"file_path": "deploy/id_rsa", "content": "[redacted: private key]\n"})
    );
    // Nothing of them is in the project's state: not the database, not its write-ahead log, nor the session's
    // taint record, whose mark names the call that read a secret.
    let mut files = Vec::new();
    let mut dirs = vec![p.root.join(".agent-guard")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    assert!(files.iter().any(|file| file.ends_with("audit.db")), "{files:?}");
    for path in files {
        // SQLite removes its write-ahead log when the last connection closes: a file gone holds nothing on disk.
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => panic!("{}: {error}", path.display()),
        };
        for secret in [token, aws, body] {
            assert!(
                !bytes
                    .windows(secret.len())
                    .any(|window| window == secret.as_bytes()),
                "{secret} in {}",
                path.display()
            );
        }
    }
}
