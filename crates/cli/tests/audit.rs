//! `agent-guard audit` on the log the demo session writes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn agent_guard(args: &[&str], dir: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_agent-guard"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

#[test]
fn queries_the_demo_log_as_json_lines_and_a_table() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("audit.db");
    let db_arg = db.to_str().unwrap();
    let demo = agent_guard(&["demo", "--audit-db", db_arg], tmp.path());
    assert!(demo.status.success(), "{}", String::from_utf8_lossy(&demo.stderr));

    let all = agent_guard(&["audit", "--db", db_arg, "--json"], tmp.path());
    assert!(all.status.success(), "{}", String::from_utf8_lossy(&all.stderr));
    let rows: Vec<Value> = String::from_utf8(all.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let stops = rows.iter().filter(|r| r["status"] == "SESSION_STOP").count();
    assert_eq!(stops, 1);
    assert!(rows.len() > 5, "{} rows", rows.len());
    assert!(
        rows.iter()
            .any(|r| r["status"] == "DENIED" && r["decision"] == "deny")
    );
    let session = rows[0]["session_id"].as_str().unwrap().to_owned();

    let bash = agent_guard(
        &[
            "audit",
            "--db",
            db_arg,
            "--json",
            "--tool",
            "run_bash",
            "--session",
            &session,
        ],
        tmp.path(),
    );
    let bash_rows: Vec<Value> = String::from_utf8(bash.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!bash_rows.is_empty());
    // A tool is found under any of its names: the runtime's `run_bash` and the coding agent's `Bash`.
    let shell = |r: &&Value| r["tool_name"] == "run_bash" || r["tool_name"] == "Bash";
    assert!(bash_rows.iter().all(|r| shell(&r)));
    assert_eq!(bash_rows.len(), rows.iter().filter(shell).count());
    assert!(
        bash_rows.iter().any(|r| r["tool_name"] == "Bash"),
        "the demo calls both"
    );

    let table = agent_guard(&["audit", "--db", db_arg, "--limit", "3"], tmp.path());
    let text = String::from_utf8(table.stdout).unwrap();
    assert_eq!(text.lines().count(), 4, "a header and three rows:\n{text}");
    assert!(text.starts_with("ts "));
}

#[test]
fn a_missing_database_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = agent_guard(&["audit", "--db", "nowhere.db"], tmp.path());
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("`nowhere.db`"), "{stderr}");
}

#[path = "../../hooks/tests/pg/mod.rs"]
mod pg;

#[test]
fn a_postgres_url_works_end_to_end() {
    let Some(server) = pg::PgServer::start_or_skip() else {
        return;
    };
    let url = server.create_database("cli");
    let tmp = tempfile::tempdir().unwrap();
    let demo = agent_guard(&["demo", "--audit-db", &url], tmp.path());
    assert!(demo.status.success(), "{}", String::from_utf8_lossy(&demo.stderr));
    let trace = String::from_utf8(demo.stdout).unwrap();
    assert!(trace.contains(&format!("in {url} (")), "{trace}");

    let all = agent_guard(&["audit", "--db", &url, "--json"], tmp.path());
    assert!(all.status.success(), "{}", String::from_utf8_lossy(&all.stderr));
    let rows: Vec<Value> = String::from_utf8(all.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(rows.len() > 5, "{} rows", rows.len());
    assert_eq!(rows.iter().filter(|r| r["status"] == "SESSION_STOP").count(), 1);
    assert_eq!(rows.last().unwrap()["status"], "SESSION_STOP");
    assert!(
        rows.iter()
            .any(|r| r["status"] == "DENIED" && r["decision"] == "deny")
    );
    // The demo's own count, printed from a read-back, matches what `audit` reads.
    assert!(
        trace.contains(&format!("audit log: {} rows", rows.len())),
        "{trace}"
    );
    assert_eq!(
        server.psql("cli", "SELECT count(*) FROM agent_audit_log"),
        rows.len().to_string()
    );

    let table = agent_guard(&["audit", "--db", &url, "--limit", "3"], tmp.path());
    let text = String::from_utf8(table.stdout).unwrap();
    assert_eq!(text.lines().count(), 4, "a header and three rows:\n{text}");
}

#[test]
fn an_unreachable_postgres_server_is_a_clear_error_naming_the_url() {
    let tmp = tempfile::tempdir().unwrap();
    let port = pg::free_port();
    let url = format!("postgresql://audit:s3cret@127.0.0.1:{port}/agent");
    let shown = format!("postgresql://audit:***@127.0.0.1:{port}/agent");
    for args in [
        ["audit", "--db", url.as_str()],
        ["demo", "--audit-db", url.as_str()],
    ] {
        let out = agent_guard(&args, tmp.path());
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains(&format!("`{shown}`")), "{stderr}");
        assert!(stderr.contains("refused"), "{stderr}");
        assert!(!stderr.contains("s3cret"), "{stderr}");
    }
    let out = agent_guard(&["audit", "--db", "mysql://127.0.0.1/agent"], tmp.path());
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("unsupported audit database `mysql://127.0.0.1/agent`"),
        "{stderr}"
    );
}

#[test]
fn follow_prints_the_rows_written_after_it_started() {
    let tmp = tempfile::tempdir().unwrap();
    // A first session makes the database; `--follow` then starts after its rows.
    let first = agent_guard(&["demo", "--audit-db", "audit.db"], tmp.path());
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let before = agent_guard(&["audit", "--db", "audit.db", "--json"], tmp.path());
    let existing = String::from_utf8(before.stdout).unwrap().lines().count();

    let mut follow = Command::new(env!("CARGO_BIN_EXE_agent-guard"))
        .args(["audit", "--db", "audit.db", "--json", "--follow"])
        .current_dir(tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(follow.stdout.take().unwrap()).lines();
    let mut rows: Vec<Value> = Vec::new();
    for _ in 0..existing {
        rows.push(serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap());
    }
    let second = agent_guard(&["demo", "--audit-db", "audit.db"], tmp.path());
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let started = Instant::now();
    while rows.iter().filter(|r| r["status"] == "SESSION_STOP").count() < 2 {
        assert!(started.elapsed() < Duration::from_secs(30), "{rows:?}");
        rows.push(serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap());
    }
    follow.kill().unwrap();
    follow.wait().unwrap();

    assert_eq!(rows.len(), 2 * existing, "the second session's rows, each once");
    let ids: Vec<i64> = rows.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "in order, no repeats: {ids:?}"
    );
    let sessions: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r["session_id"].as_str().unwrap()).collect();
    assert_eq!(sessions.len(), 2);
}

#[test]
fn the_connect_timeout_bounds_a_server_that_never_answers() {
    let tmp = tempfile::tempdir().unwrap();
    // A listener that accepts and never speaks: the connection attempt hangs until the timeout.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let url = format!("postgres://audit@127.0.0.1:{port}/agent");
    let started = Instant::now();
    let out = agent_guard(&["audit", "--db", &url, "--connect-timeout", "0.3"], tmp.path());
    let elapsed = started.elapsed();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("no connection within 300 ms"), "{stderr}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");

    for bad in ["0", "-1", "soon", "inf"] {
        let out = agent_guard(&["audit", &format!("--connect-timeout={bad}")], tmp.path());
        assert_eq!(out.status.code(), Some(2), "a usage error for {bad}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains(&format!("`{bad}`")), "{stderr}");
    }
}
