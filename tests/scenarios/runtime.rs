//! The runtime end to end: scripted sessions through every layer, the audit log, decision telemetry.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use agent_core::{DecisionSource, Runtime, RuntimeConfig, Scenario, run_scenario};
use agent_hooks::{AuditFilter, AuditLogHook, AuditStatus, CallStatus};
use agent_rules::Settings;
use agent_tool_traits::{DecidedBy, Decision, Layer, ToolCall};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;

const DEMO: &str = include_str!("../../crates/cli/scenarios/demo.json");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_shows_every_layer_deciding_and_audits_every_call_of_a_cancelled_run() {
    let scenario = Scenario::parse("demo.json", DEMO).unwrap();
    let root = tempfile::tempdir().unwrap();
    let db = root.path().join("audit.db");
    let audit = AuditLogHook::open(&db).await.unwrap();
    let (report, cwd) = run_scenario(&scenario, root.path(), Some(audit), None, "demo")
        .await
        .unwrap();

    let seen: HashSet<(Layer, Option<DecidedBy>, Decision)> = report
        .calls()
        .map(|c| {
            (
                c.verdict.provenance.layer,
                c.verdict.provenance.step,
                c.verdict.decision,
            )
        })
        .collect();
    for expected in [
        (Layer::Rules, Some(DecidedBy::Default), Decision::Allow),
        (Layer::Rules, Some(DecidedBy::DenyRule), Decision::Deny),
        (Layer::Bash, Some(DecidedBy::LayerDeny), Decision::Deny),
        (Layer::Sandbox, Some(DecidedBy::LayerDeny), Decision::Deny),
        (Layer::Hooks, Some(DecidedBy::HookBlock), Decision::Deny),
        (Layer::Approval, Some(DecidedBy::Approver), Decision::Allow),
    ] {
        assert!(seen.contains(&expected), "{expected:?} not in {seen:?}");
    }
    let by_id = |id: &str| report.calls().find(|c| c.call.id == id).unwrap();
    assert!(by_id("slow").output.content.contains("timed out"));
    assert_eq!(
        by_id("block-tool").status,
        CallStatus::Ok,
        "a Block tool finishes after the cancel"
    );
    assert!(by_id("after-cancel").output.content.contains("cancelled"));
    assert!(
        report.calls().all(|c| c.call.id != "unreached"),
        "no step runs after the cancellation"
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("NOTES.md")).unwrap(),
        "greet() needs a doc test\n"
    );
    assert!(
        !std::fs::read_to_string(cwd.join("CHANGELOG.md"))
            .unwrap()
            .contains("yanked"),
        "the blocked edit never ran"
    );

    assert!(report.cancelled);
    let rows = AuditLogHook::query(
        &db,
        &AuditFilter {
            session_id: Some("demo".into()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(rows.len(), report.calls().count() + 1);
    assert_eq!(
        rows.iter()
            .filter(|r| r.status == AuditStatus::SessionStop)
            .count(),
        1
    );
    let denied = report.calls().filter(|c| c.status == CallStatus::Denied).count();
    assert_eq!(
        rows.iter().filter(|r| r.status == AuditStatus::Denied).count(),
        denied
    );
}

/// Collects the fields of every `tool_decision` event.
#[derive(Clone, Default)]
struct Decisions(Arc<Mutex<Vec<Event>>>);

/// The fields of one event, by name.
type Event = Vec<(String, String)>;

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push((
            field.name().to_owned(),
            format!("{value:?}").trim_matches('"').to_owned(),
        ));
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Decisions {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: tracing_subscriber::layer::Context<'_, S>) {
        if event.metadata().name() == "tool_decision" {
            let mut fields = Vec::new();
            event.record(&mut Fields(&mut fields));
            self.0.lock().unwrap().push(fields);
        }
    }
}

#[tokio::test(flavor = "current_thread")]
async fn every_decision_is_a_tool_decision_event() {
    let decisions = Decisions::default();
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(decisions.clone()));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let runtime = Runtime::builder(Settings::new(), RuntimeConfig::new(dir.path()))
        .only_tools(&["Read", "Write"])
        .build()
        .unwrap();
    let reports = runtime
        .execute(
            "s",
            1,
            vec![
                ToolCall::new("1", "Read", json!({"file_path": "a.txt"})),
                ToolCall::new("2", "file_write", json!({"file_path": "b.txt", "content": "b"})),
                ToolCall::new("3", "run_bash", json!({"command": "ls"})),
            ],
        )
        .await;
    // A tool outside the narrowed set is denied on the one decision path, by the tool layer.
    assert_eq!(reports[2].verdict.decision, Decision::Deny);
    assert_eq!(reports[2].verdict.provenance.layer, Layer::Tool);
    assert_eq!(
        reports[1].source,
        DecisionSource::UserReject,
        "headless: the ask is refused"
    );

    let events = decisions.0.lock().unwrap().clone();
    assert_eq!(events.len(), reports.len());
    let field = |event: &Event, name: &str| {
        event
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let summary: Vec<(String, String, String, String)> = events
        .iter()
        .map(|e| {
            (
                field(e, "tool"),
                field(e, "decision"),
                field(e, "source"),
                field(e, "layer"),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("Read".into(), "allow".into(), "config".into(), "rules".into()),
            (
                "file_write".into(),
                "deny".into(),
                "user_reject".into(),
                "rules".into()
            ),
            ("run_bash".into(), "deny".into(), "config".into(), "tool".into()),
        ]
    );
}
