//! The bundled scenarios run through the runtime: every layer decides in the demo, a loop is stopped and children
//! are confined in `limits-subagents.json`, each call audited.

use std::collections::HashSet;

use agent_hooks::{AuditFilter, AuditLogHook, AuditRow, AuditStatus, CallStatus};
use agent_tool_traits::{DecidedBy, Decision, Layer};

use super::{Scenario, run_scenario};

const DEMO: &str = include_str!("../scenarios/demo.json");
const LIMITS_SUBAGENTS: &str = include_str!("../scenarios/limits-subagents.json");

fn rows_of<'a>(rows: &'a [AuditRow], agent: &str) -> Vec<&'a AuditRow> {
    rows.iter().filter(|r| r.agent_name == agent).collect()
}

fn by_id_status(report: &agent_core::SessionReport, id: &str) -> CallStatus {
    report.calls().find(|c| c.call.id == id).unwrap().status
}

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
        (Layer::Limits, Some(DecidedBy::Limit), Decision::Deny),
    ] {
        assert!(seen.contains(&expected), "{expected:?} not in {seen:?}");
    }
    assert_eq!(by_id_status(&report, "status-2"), CallStatus::Ok);
    assert_eq!(
        by_id_status(&report, "status-3"),
        CallStatus::Denied,
        "the third identical call in a row is refused"
    );
    assert!(
        report
            .calls()
            .find(|c| c.call.id == "explore")
            .unwrap()
            .output
            .content
            .contains("hello, world")
    );
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
    // The subagent's calls have their rows beside the lead's: its read ran, its write was refused by its narrowed
    // tool set.
    let explore = rows_of(&rows, "explore");
    let child: Vec<(&str, AuditStatus, Option<&str>)> = explore
        .iter()
        .map(|r| (r.tool_name.as_str(), r.status, r.decided_by.as_deref()))
        .collect();
    assert_eq!(
        child,
        vec![
            ("read_file", AuditStatus::Ok, Some("rules/default")),
            ("file_write", AuditStatus::Denied, Some("tool/layer-deny")),
        ]
    );
    assert_eq!(rows.len(), report.calls().count() + explore.len() + 1);
    assert_eq!(
        u64::try_from(rows.len() - 1).unwrap(),
        report.metrics.calls,
        "the metrics count every call, the subagent's included"
    );
    assert_eq!(
        rows.iter()
            .filter(|r| r.status == AuditStatus::SessionStop)
            .count(),
        1
    );
    let denied = report.calls().filter(|c| c.status == CallStatus::Denied).count() + 1;
    assert_eq!(
        rows.iter().filter(|r| r.status == AuditStatus::Denied).count(),
        denied
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scenario_stops_a_loop_and_confines_its_children() {
    let scenario = Scenario::parse("limits-subagents.json", LIMITS_SUBAGENTS).unwrap();
    let root = tempfile::tempdir().unwrap();
    let db = root.path().join("audit.db");
    let audit = AuditLogHook::open(&db).await.unwrap();
    let (report, cwd) = run_scenario(&scenario, root.path(), Some(audit), None, "sub")
        .await
        .unwrap();
    let by_id = |id: &str| report.calls().find(|c| c.call.id == id).unwrap();
    assert_eq!(by_id("search-2").status, CallStatus::Ok);
    assert_eq!(by_id("search-3").status, CallStatus::Denied);
    assert_eq!(
        by_id("explore").status,
        CallStatus::Ok,
        "{:?}",
        by_id("explore").output
    );
    assert!(
        by_id("explore")
            .output
            .content
            .contains("greet() is defined in src/lib.rs")
    );
    assert_eq!(
        by_id("general").status,
        CallStatus::Ok,
        "{:?}",
        by_id("general").output
    );
    assert!(!cwd.join("NOTES.md").exists(), "no child wrote anything");
    assert_eq!(report.reason, "completed");

    let rows = AuditLogHook::query(&db, &AuditFilter::default()).await.unwrap();
    let lead = rows_of(&rows, "lead");
    assert_eq!(
        lead.len(),
        report.calls().count() + 1,
        "the children add no SESSION_STOP row"
    );
    assert_eq!(
        lead.iter().find(|r| r.step == 3).unwrap().decided_by.as_deref(),
        Some("runtime-limits/limit")
    );
    let explore = rows_of(&rows, "explore");
    let status = |rows: &[&AuditRow], tool: &str, n: usize| {
        rows.iter()
            .filter(|r| r.tool_name == tool)
            .nth(n)
            .map(|r| (r.status, r.decided_by.clone()))
    };
    assert_eq!(explore.len(), 4, "{explore:#?}");
    assert_eq!(status(&explore, "read_file", 0).unwrap().0, AuditStatus::Ok);
    assert_eq!(status(&explore, "file_write", 0).unwrap().0, AuditStatus::Denied);
    assert!(
        explore
            .iter()
            .any(|r| r.tool_name == "file_write" && r.output_preview.contains("no tool named"))
    );
    assert_eq!(status(&explore, "run_bash", 0).unwrap().0, AuditStatus::Denied);
    let secret = status(&explore, "read_file", 1).unwrap();
    assert_eq!(
        secret,
        (AuditStatus::Denied, Some("rules/deny-rule".into())),
        "the parent's rules hold"
    );
    let general = rows_of(&rows, "general");
    assert_eq!(general.len(), 2, "{general:#?}");
    let ask = general.iter().find(|r| r.tool_name == "ask_user").unwrap();
    assert_eq!(ask.status, AuditStatus::Fail);
    assert!(ask.output_preview.contains("silent context"), "{ask:?}");
    let write = general.iter().find(|r| r.tool_name == "file_write").unwrap();
    assert_eq!(
        (write.status, write.decided_by.as_deref()),
        (AuditStatus::Denied, Some("rules/no-prompt"))
    );
}
