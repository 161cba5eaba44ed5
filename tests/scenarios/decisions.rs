//! The decision table: every case of `tests/corpus/decisions.json` (tool, input, settings of each source, mode,
//! files) decided by the one decision path, checked against its expected decision, and the whole table rendered
//! as an insta snapshot (decision, reason, provenance).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Deserialize;
use serde_json::Value;

use crate::workspace::{SourceSettings, Workspace};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    tool: String,
    input: Value,
    #[serde(default)]
    settings: BTreeMap<String, SourceSettings>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    files: BTreeMap<String, String>,
    #[serde(default)]
    symlinks: BTreeMap<String, String>,
    expect: String,
}

fn cases() -> Vec<Case> {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/decisions.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn decision_table() {
    let cases = cases();
    assert!(cases.len() >= 60, "the table has {} cases", cases.len());
    let mut table = String::new();
    let mut failures = Vec::new();
    for case in &cases {
        let ws = Workspace::new();
        for (path, text) in &case.files {
            ws.write(path, text);
        }
        for (link, target) in &case.symlinks {
            ws.symlink(link, target);
        }
        let guard = ws.guard(&case.settings, &case.env, case.mode.as_deref());
        let input = ws.expand(&case.input);
        let decided = guard.decide(&case.tool, &input);
        let verdict = decided.verdict();
        if verdict.decision.as_str() != case.expect {
            failures.push(format!(
                "{}: expected {}, got {}: {}",
                case.name,
                case.expect,
                verdict.decision,
                ws.redact(&verdict.reason())
            ));
        }
        let provenance = &verdict.provenance;
        let _ = writeln!(table, "## {}", case.name);
        let _ = writeln!(table, "call:       {} {}", case.tool, case.input);
        if !case.settings.is_empty() {
            let _ = writeln!(
                table,
                "settings:   {}",
                serde_json::to_string(&case.settings).unwrap()
            );
        }
        if !case.env.is_empty() {
            let _ = writeln!(table, "env:        {}", serde_json::to_string(&case.env).unwrap());
        }
        if let Some(mode) = &case.mode {
            let _ = writeln!(table, "mode:       {mode}");
        }
        let _ = writeln!(table, "decision:   {}", verdict.decision);
        let _ = writeln!(table, "reason:     {}", ws.redact(&verdict.reason()));
        let _ = writeln!(
            table,
            "provenance: layer={} step={} rule={} source={}\n",
            provenance.layer,
            provenance.step.map_or("-", |s| s.as_str()),
            provenance.rule.as_deref().unwrap_or("-"),
            provenance.source.map_or("-", |s| s.as_str()),
        );
    }
    assert!(
        failures.is_empty(),
        "{} case(s) decided otherwise:\n{}",
        failures.len(),
        failures.join("\n")
    );
    insta::assert_snapshot!("decision_table", table);
}
