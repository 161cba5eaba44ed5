//! The decision table: every case of `decisions.json` (tool, input, settings of each source, mode,
//! files) decided by the one decision path, checked against its expected decision, and the whole table rendered
//! as an insta snapshot (decision, reason, provenance).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Deserialize;
use serde_json::Value;

use crate::workspace::{SourceSettings, Workspace};

/// One case of a decision corpus.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Case {
    /// The bypass class it stands for (adversarial corpus only).
    #[serde(default)]
    pub(crate) class: Option<String>,
    pub(crate) name: String,
    pub(crate) tool: String,
    pub(crate) input: Value,
    #[serde(default)]
    pub(crate) settings: BTreeMap<String, SourceSettings>,
    #[serde(default)]
    pub(crate) env: BTreeMap<String, String>,
    #[serde(default)]
    pub(crate) mode: Option<String>,
    #[serde(default)]
    pub(crate) files: BTreeMap<String, String>,
    #[serde(default)]
    pub(crate) symlinks: BTreeMap<String, String>,
    /// The decision with the analysis alone (`autoAllow` off).
    pub(crate) expect: String,
    /// The decision with contained allows on, where it differs from `expect` (a line the kernel sandbox
    /// contains is allowed to run inside it).
    #[serde(default, rename = "autoAllow")]
    pub(crate) auto_allow: Option<String>,
    /// Whether the line's confinement (with contained allows on) lets git write the repository, where the case
    /// states it: only a line that runs git itself to write it does.
    #[serde(default, rename = "gitWrites")]
    pub(crate) git_writes: Option<bool>,
    /// The names a search tool's call is allowed with left out (`Decided::search_excludes`), where the case states
    /// them.
    #[serde(default, rename = "searchExcludes")]
    pub(crate) search_excludes: Option<Vec<String>>,
    /// Whether the allowed line runs outside the kernel sandbox (`Decided::outside`, no confinement), where the
    /// case states it: only commands no sandbox can contain, each allowed by name by the user's rules, with
    /// nothing else that needs the sandbox.
    #[serde(default)]
    pub(crate) outside: Option<bool>,
}

impl Case {
    /// The decision expected with contained allows on or off.
    pub(crate) fn expected(&self, auto_allow: bool) -> &str {
        match (&self.auto_allow, auto_allow) {
            (Some(contained), true) => contained,
            _ => &self.expect,
        }
    }
}

/// The cases of `<file>` beside this module.
pub(crate) fn load(file: &str) -> Vec<Case> {
    let path = format!("{}/tests/corpus/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn cases() -> Vec<Case> {
    load("decisions.json")
}

/// Decides `case` in a fresh workspace through the one decision path, with contained allows as the settings
/// have them (on by default) or off (`--auto-allow off`): (decision, reason with the temporary directory
/// redacted).
pub(crate) fn decide(case: &Case, auto_allow: bool) -> (String, String) {
    let ws = Workspace::new();
    for (path, text) in &case.files {
        ws.write(path, text);
    }
    for (link, target) in &case.symlinks {
        ws.symlink(link, target);
    }
    let flag = (!auto_allow).then_some(false);
    let guard = ws.guard_with(&case.settings, &case.env, case.mode.as_deref(), flag);
    let decided = guard.decide(&case.tool, &ws.expand(&case.input));
    let verdict = decided.verdict();
    (verdict.decision.as_str().to_owned(), ws.redact(&verdict.reason()))
}

/// The confinement of `case` with contained allows on, as the table shows it: `-` for none.
fn confinement(case: &Case) -> (bool, String) {
    let ws = Workspace::new();
    for (path, text) in &case.files {
        ws.write(path, text);
    }
    for (link, target) in &case.symlinks {
        ws.symlink(link, target);
    }
    let guard = ws.guard_with(&case.settings, &case.env, case.mode.as_deref(), None);
    let decided = guard.decide(&case.tool, &ws.expand(&case.input));
    (
        decided.confinement.is_some_and(|c| c.git_writes),
        decided
            .confinement
            .map_or_else(|| "-".to_owned(), |c| c.to_string()),
    )
}

/// Whether this kernel enforces the sandbox, so that contained allows can be decided at all; where it cannot, the
/// cases are decided with the analysis alone and the run says so.
pub(crate) fn contained_allows_possible() -> bool {
    match agent_os_sandbox::KernelSupport::enforcement_missing() {
        None => true,
        Some(why) => {
            assert!(
                std::env::var_os("AGENT_GUARD_REQUIRE_SANDBOX").is_none_or(|v| v != "1"),
                "AGENT_GUARD_REQUIRE_SANDBOX=1 and the decisions with contained allows cannot be made: {why}"
            );
            eprintln!("skipped: the decisions with contained allows on, since {why}");
            false
        }
    }
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
        if let Some(expected) = &case.search_excludes
            && decided.search_excludes != *expected
        {
            failures.push(format!(
                "{}: expected the search narrowed by {expected:?}, got {:?}",
                case.name, decided.search_excludes
            ));
        }
        if let Some(expected) = case.outside {
            let outside = decided.outside.is_some();
            if outside != expected || (outside && decided.confinement.is_some()) {
                failures.push(format!(
                    "{}: expected outside the sandbox {expected}, got {outside} (confinement {:?}): {}",
                    case.name,
                    decided.confinement,
                    ws.redact(&verdict.reason())
                ));
            }
        }
        if verdict.decision.as_str() != case.expect {
            failures.push(format!(
                "{}: expected {}, got {}: {}",
                case.name,
                case.expect,
                verdict.decision,
                ws.redact(&verdict.reason())
            ));
        }
        // The same case with contained allows on: where its decision or reason differs, the table shows both.
        let contained = contained_allows_possible().then(|| decide(case, true));
        if let Some((decision, reason)) = &contained
            && decision != case.expected(true)
        {
            failures.push(format!(
                "{} (autoAllow on): expected {}, got {decision}: {reason}",
                case.name,
                case.expected(true),
            ));
        }
        // The confinement exists only where the kernel enforces the sandbox.
        let confined = case
            .git_writes
            .filter(|_| contained_allows_possible())
            .map(|expected| (expected, confinement(case)));
        if let Some((expected, (git_writes, _))) = &confined
            && git_writes != expected
        {
            failures.push(format!(
                "{}: expected git writes {expected}, got {git_writes}",
                case.name
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
        let reason_off = ws.redact(&verdict.reason());
        if let Some((decision, reason)) =
            contained.filter(|(d, r)| d != verdict.decision.as_str() || *r != reason_off)
        {
            let _ = writeln!(table, "autoAllow:  {decision}: {reason}");
        }
        if let Some((_, (_, shown))) = &confined {
            let _ = writeln!(table, "sandbox:    {shown}");
        }
        if let Some(outside) = &decided.outside {
            let _ = writeln!(table, "outside:    {:?}", outside.commands);
        }
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
