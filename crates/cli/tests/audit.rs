//! `agent-guard audit` on the log the demo session writes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::process::Command;

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
    assert!(bash_rows.iter().all(|r| r["tool_name"] == "run_bash"));
    assert_eq!(
        bash_rows.len(),
        rows.iter().filter(|r| r["tool_name"] == "run_bash").count()
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
    let Some(server) = pg::PgServer::start_or_skip("agent-guard (crates/cli/tests/audit.rs)") else {
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
