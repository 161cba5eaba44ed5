//! OpenTelemetry export on the built binary, received by a test OTLP/HTTP collector: a hook decision (`check`), a
//! server's answer with the page user who gave it and `/metrics`, a runtime session (`demo`); a collector that is
//! down or hangs changes neither `check`'s latency beyond noise nor its audit log.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

mod collector;
mod hook;
#[path = "../../../tests/support/poll.rs"]
mod poll;
mod served;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use collector::{Collector, Mode};
use hook::{decision, input, run, run_with, text};
use serde_json::{Value, json};
use served::{TOKEN, client, serve_with};

/// The user's settings that turn telemetry on (the endpoint comes from `OTEL_EXPORTER_OTLP_ENDPOINT`).
const TELEMETRY_ON: &str =
    r#"{"agentGuard": {"telemetry": {"enabled": true}, "sandbox": {"autoAllow": false}}}"#;

/// A GitHub token of the well-known format, which agent-secrets recognises.
const TOKEN_IN_COMMAND: &str = "ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7";

/// A project with a `.git` marker and an allow rule, and a home whose user settings say `user_settings`.
struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

fn project(user_settings: &str) -> Project {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("proj");
    let home = base.join("home");
    for dir in [root.join(".git"), root.join(".claude"), home.join(".claude")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(
        root.join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Bash(npm test:*)"]}}"#,
    )
    .unwrap();
    std::fs::write(home.join(".claude/settings.json"), user_settings).unwrap();
    Project {
        _tmp: tmp,
        root,
        home,
    }
}

impl Project {
    fn check(&self, command: &str, env: &[(&str, &str)]) -> std::process::Output {
        let line = input(&self.root, "Bash", json!({ "command": command }));
        run_with(&["check"], &line, &self.root, &self.home, env)
    }

    /// The rows of the project's audit log, as `audit --json` prints them.
    fn audit(&self) -> Vec<Value> {
        let out = run(&["audit", "--json"], "", &self.root, &self.home);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

#[test]
fn a_hook_decision_reaches_the_collector_with_its_rule_mode_and_redacted_input() {
    let collector = Collector::start(Mode::Up);
    let project = project(TELEMETRY_ON);
    let command = format!("npm test -- --token {TOKEN_IN_COMMAND}");
    let out = project.check(&command, &[("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(decision(text(&out.stdout).trim()).0, "allow");

    let record = collector.wait_for("of the hook's decision", |r| {
        r.get("agent_guard.tool") == Some("Bash")
    });
    assert_eq!(record.event, "agent_guard.decision");
    assert_eq!(record.service, "agent-guard");
    assert_eq!(record.get("agent_guard.decision"), Some("allow"));
    assert_eq!(record.get("agent_guard.layer"), Some("rules"));
    assert_eq!(record.get("agent_guard.step"), Some("allow-rule"));
    assert_eq!(record.get("agent_guard.rule"), Some("Bash(npm test:*)"));
    let file = project.root.join(".claude/settings.json");
    assert_eq!(record.get("agent_guard.rule_file"), Some(file.to_str().unwrap()));
    assert_eq!(record.get("agent_guard.mode"), Some("default"));
    assert_eq!(record.get("session.id"), Some("s1"));
    assert_eq!(record.get("agent_guard.agent"), Some("hook"));
    assert!(record.get("agent_guard.latency_ms").is_some());
    // The input leaves only as a redacted summary: the token is nowhere in the record.
    let subject = record.get("agent_guard.subject").unwrap();
    assert!(
        subject.starts_with("npm test -- --token [redacted: GitHub token]"),
        "{subject}"
    );
    assert!(!format!("{record:?}").contains(TOKEN_IN_COMMAND), "{record:#?}");

    // The export carries what the audit log holds, sandbox included.
    let rows = project.audit();
    let row = rows.last().unwrap();
    assert_eq!(row["rule"], "Bash(npm test:*)");
    assert_eq!(row["decided_by"], "rules/allow-rule");
    assert_eq!(record.get("agent_guard.sandbox"), row["sandbox"].as_str());

    // The hook's metrics come too (delta counts, one process each).
    let deadline = Instant::now() + Duration::from_secs(30);
    while !collector
        .metric_names()
        .iter()
        .any(|n| n == "agent_guard.decisions")
    {
        assert!(
            Instant::now() < deadline,
            "no decision metric: {:?}",
            collector.metric_names()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn jsonl_with_the_audit_log_off_still_exports_each_line_with_its_rule_and_mode() {
    let collector = Collector::start(Mode::Up);
    let project = project(TELEMETRY_ON);
    let lines: String = ["npm test -- one", "npm test -- two"]
        .iter()
        .map(|command| input(&project.root, "Bash", json!({ "command": command })) + "\n")
        .collect();
    let out = run_with(
        &["check", "--jsonl"],
        &lines,
        &project.root,
        &project.home,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url),
            ("AGENT_GUARD_AUDIT", "off"),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), 2);
    for subject in ["npm test -- one", "npm test -- two"] {
        let record = collector.wait_for(subject, |r| r.get("agent_guard.subject") == Some(subject));
        assert_eq!(record.get("agent_guard.decision"), Some("allow"));
        assert_eq!(record.get("agent_guard.step"), Some("allow-rule"));
        assert_eq!(record.get("agent_guard.rule"), Some("Bash(npm test:*)"));
        assert_eq!(record.get("agent_guard.mode"), Some("default"));
    }
}

#[test]
fn telemetry_is_off_unless_the_user_turns_it_on_and_a_project_cannot() {
    let collector = Collector::start(Mode::Up);
    // The project's own settings turning it on do not count: a cloned repository must not send the user's commands.
    let project = project(served::USER_SETTINGS);
    std::fs::write(
        project.root.join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Bash(npm test:*)"]}, "agentGuard": {"telemetry": {"enabled": true}}}"#,
    )
    .unwrap();
    let out = project.check("npm test", &[("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // A second hook that does export, after the first: once its record is in, the first would have been too.
    let on = self::project(TELEMETRY_ON);
    let out = on.check(
        "npm test -- marker",
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url)],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    collector.wait_for("of the exporting hook", |r| {
        r.get("agent_guard.subject") == Some("npm test -- marker")
    });
    let subjects: Vec<String> = collector
        .logs()
        .iter()
        .filter_map(|r| r.get("agent_guard.subject").map(str::to_owned))
        .collect();
    assert_eq!(subjects, ["npm test -- marker"], "{subjects:?}");
}

#[test]
fn a_server_answer_names_the_page_user_and_metrics_count_it() {
    let collector = Collector::start(Mode::Up);
    let dir = tempfile::tempdir().unwrap();
    let server = serve_with(
        dir,
        &["--token", TOKEN],
        TELEMETRY_ON,
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url)],
    );
    let ask = server.enqueue("s-page", "npm test");
    let id = ask["id"].as_str().unwrap();
    let metrics = |token: Option<&str>| {
        let mut request = client().get(format!("{}/metrics", server.url));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().unwrap();
        (response.status().as_u16(), response.text().unwrap())
    };
    let (status, text_before) = metrics(Some(TOKEN));
    assert_eq!(status, 200);
    assert!(
        text_before.contains("agent_guard_asks_pending 1\n"),
        "{text_before}"
    );
    assert_eq!(metrics(None).0, 401);

    let (status, answered) = server.post(
        &format!("/v1/approvals/{id}"),
        &json!({"answer": "allow_always", "page_session": "pg-7"}),
    );
    assert_eq!(status, 200, "{answered}");
    assert_eq!(answered["answered_by"], "page:pg-7");

    let record = collector.wait_for("of the page's answer", |r| r.event == "agent_guard.answer");
    assert_eq!(record.get("agent_guard.approver"), Some("page:pg-7"));
    assert_eq!(record.get("agent_guard.decision"), Some("allow"));
    assert_eq!(record.get("agent_guard.layer"), Some("approval"));
    assert_eq!(record.get("agent_guard.step"), Some("approver"));
    assert_eq!(record.get("session.id"), Some("s-page"));
    // "Allow always" saved a rule: the answer names it and the file it went to.
    let rule = answered["allow_always_rules"][0].as_str().unwrap();
    assert_eq!(record.get("agent_guard.rule"), Some(rule));
    assert_eq!(
        record.get("agent_guard.rule_file"),
        answered["settings_file"].as_str()
    );

    let (_, after) = metrics(Some(TOKEN));
    assert!(after.contains("agent_guard_asks_pending 0\n"), "{after}");
    assert!(
        after.contains("agent_guard_answers_total{decision=\"allow\",approver=\"page\"} 1\n"),
        "{after}"
    );
    assert!(
        after.contains("agent_guard_answer_latency_ms_count 1\n"),
        "{after}"
    );

    // A later call decided by the saved rule: `explain` on its audit row follows the chain to the answer.
    let (status, decided) = server.post("/v1/decide", &server.input("s-later", "npm test"));
    assert_eq!(status, 200);
    assert_eq!(
        decided["hookSpecificOutput"]["permissionDecision"], "allow",
        "{decided} {answered}"
    );
    let db = server.dir.path().join(".agent-guard/server.db");
    // The server writes a decision's row after answering (its audit writer gathers rows for one commit).
    let read = || -> Vec<Value> {
        let rows = served::command(server.dir.path())
            .args(["audit", "--json", "--db", db.to_str().unwrap()])
            .output()
            .unwrap();
        text(&rows.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    poll::wait_until(Duration::from_secs(10), "the later call's audit row", || {
        read().iter().any(|r| r["session_id"] == "s-later")
    });
    let rows = read();
    let later = rows.iter().rev().find(|r| r["session_id"] == "s-later").unwrap();
    assert_eq!(later["rule"], rule, "{later}");
    let answer_row = rows.iter().find(|r| r["approver"] == "page:pg-7").unwrap();
    let explained = served::command(server.dir.path())
        .args([
            "explain",
            "--audit-id",
            &later["id"].to_string(),
            "--audit-db",
            db.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let explained = text(&explained.stdout);
    assert!(explained.contains(rule), "{explained}");
    assert!(
        explained.contains("page:pg-7") && explained.contains(&format!("audit row {}", answer_row["id"])),
        "{explained}"
    );
}

#[test]
fn a_runtime_session_exports_each_call_and_its_answers() {
    let collector = Collector::start(Mode::Up);
    let project = project(TELEMETRY_ON);
    let db = project.root.join("demo.db");
    let out = run_with(
        &["demo", "--audit-db", db.to_str().unwrap()],
        "",
        &project.root,
        &project.home,
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url)],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The demo's own user answers an ask (scripted), and every call is a record of the session's agent.
    let answer = collector.wait_for("of the scripted answer", |r| {
        r.get("agent_guard.approver") == Some("scripted")
    });
    assert_eq!(answer.event, "agent_guard.answer");
    assert_eq!(answer.get("agent_guard.agent"), Some("lead"));
    let read = collector.wait_for("of a read", |r| r.get("agent_guard.tool") == Some("read_file"));
    assert_eq!(read.get("agent_guard.decision"), Some("allow"));
    assert!(read.get("agent_guard.session").unwrap().starts_with("demo-"));
    let denied = collector.wait_for("of a deny", |r| r.get("agent_guard.decision") == Some("deny"));
    assert!(denied.get("agent_guard.layer").is_some(), "{denied:#?}");
    // Every row of the log is one record: the export loses none on the way.
    let rows = run_with(
        &["audit", "--json", "--db", db.to_str().unwrap()],
        "",
        &project.root,
        &project.home,
        &[],
    );
    let rows = text(&rows.stdout).lines().count();
    let deadline = Instant::now() + Duration::from_secs(30);
    while collector.logs().len() < rows {
        assert!(
            Instant::now() < deadline,
            "{} records of {rows} rows",
            collector.logs().len()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The median of `samples`.
fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// One `check` of an allowed line, timed from start to exit.
fn timed_check(project: &Project, env: &[(&str, &str)], n: usize) -> Duration {
    let started = Instant::now();
    let out = project.check(&format!("npm test -- run {n}"), env);
    let elapsed = started.elapsed();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(decision(text(&out.stdout).trim()).0, "allow");
    elapsed
}

#[test]
fn a_collector_that_is_down_or_hangs_costs_check_no_latency_and_no_audit_row() {
    const RUNS: usize = 15;
    let hanging = Collector::start(Mode::Hangs);
    let down = Collector::down_url();
    let off = project(served::USER_SETTINGS);
    let on = project(TELEMETRY_ON);
    let mut times: [Vec<Duration>; 3] = Default::default();
    // Paired: each round runs the three variants back to back, so that the machine's load falls on all three.
    for n in 0..RUNS {
        times[0].push(timed_check(&off, &[], n));
        times[1].push(timed_check(&on, &[("OTEL_EXPORTER_OTLP_ENDPOINT", &down)], n));
        times[2].push(timed_check(
            &on,
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", &hanging.url)],
            n,
        ));
    }
    let [off_ms, down_ms, hang_ms] = times.map(median);
    eprintln!(
        "check medians over {RUNS} paired runs: telemetry off {off_ms:?}, collector down {down_ms:?}, hangs {hang_ms:?}"
    );
    // Noise on a loaded machine is some milliseconds; a hook that waited for the collector would take seconds.
    let bound = off_ms * 2 + Duration::from_millis(50);
    assert!(
        down_ms < bound && hang_ms < bound,
        "off {off_ms:?}, down {down_ms:?}, hangs {hang_ms:?}"
    );
    // Every decision is in the local audit log, whatever the collector did.
    assert_eq!(on.audit().len(), 2 * RUNS);
    assert_eq!(off.audit().len(), RUNS);
}
