//! The session taint corpus (`taint.json`): sequences of calls of one session, each decided with the taint the
//! calls before it left (recorded as a caller records it), in one temporary project per sequence. An attack's
//! marked calls must ask because of the taint, naming the calls that caused it; every other call, and every call
//! of a benign sequence, must be decided exactly as it is in a fresh session.

use std::collections::BTreeMap;

use agent_decide::CallInput;
use agent_rules::SessionState;
use agent_tool_traits::{Decision, Layer};
use serde::Deserialize;
use serde_json::Value;

use crate::workspace::{SourceSettings, Workspace};

/// One sequence of calls of one session.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Sequence {
    name: String,
    /// `attack` (some call asks because of the taint) or `benign` (none does).
    class: String,
    #[serde(default)]
    settings: BTreeMap<String, SourceSettings>,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    files: BTreeMap<String, String>,
    /// Decided with contained allows on (`--auto-allow`), as the hook decides by default: the calls' `proxy`
    /// needs them. Skipped where the kernel cannot enforce the sandbox.
    #[serde(default)]
    contained: bool,
    calls: Vec<Call>,
}

/// One call of a sequence.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Call {
    tool: String,
    input: Value,
    /// The call asks because of the session's taint; its reason names each of these texts (the calls that caused
    /// it).
    #[serde(default)]
    asks: Option<Vec<String>>,
    /// The call is allowed to run with the network, and the session's taint limits its sandbox's proxy to these
    /// domains (none: it reaches no domain).
    #[serde(default)]
    proxy: Option<Vec<String>>,
}

fn sequences() -> Vec<Sequence> {
    let path = format!("{}/tests/corpus/taint.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The failures of one sequence, each naming the call.
fn run(sequence: &Sequence) -> Vec<String> {
    let ws = Workspace::new();
    for (path, text) in &sequence.files {
        ws.write(path, text);
    }
    let env = BTreeMap::new();
    let auto_allow = Some(sequence.contained);
    let guard = ws.guard_with(&sequence.settings, &env, sequence.mode.as_deref(), auto_allow);
    let mut session = SessionState::default();
    let mut failures = Vec::new();
    for (number, call) in sequence.calls.iter().enumerate() {
        let input = ws.expand(&call.input);
        let decided = guard.decide_in_session(&CallInput::new(call.tool.as_str(), input.clone()), &session);
        let fresh = guard.decide(&call.tool, &input);
        let verdict = decided.verdict();
        let reason = ws.redact(&verdict.reason());
        let at = format!(
            "{} (call {}, {} {})",
            sequence.name,
            number + 1,
            call.tool,
            call.input
        );
        match &call.asks {
            Some(named) => {
                if verdict.decision != Decision::Ask || verdict.provenance.layer != Layer::Taint {
                    failures.push(format!(
                        "{at}: expected an ask of the taint, got {}: {reason}",
                        verdict.decision
                    ));
                }
                for text in named.iter().filter(|text| !reason.contains(text.as_str())) {
                    failures.push(format!("{at}: the reason does not name `{text}`: {reason}"));
                }
            }
            None if verdict != fresh.verdict() => failures.push(format!(
                "{at}: decided otherwise than in a fresh session: {} ({reason}) instead of {} ({})",
                verdict.decision,
                fresh.verdict().decision,
                ws.redact(&fresh.verdict().reason())
            )),
            None => {}
        }
        if let Some(expected) = &call.proxy {
            match (&decided.session_limit, decided.confinement) {
                (Some(limit), Some(confinement))
                    if verdict.decision == Decision::Allow && confinement.network =>
                {
                    if limit.domains != *expected {
                        failures.push(format!(
                            "{at}: the proxy lets through {:?}, expected {expected:?}",
                            limit.domains
                        ));
                    }
                }
                _ => failures.push(format!(
                    "{at}: expected an allow with the network and a proxy the taint limits, got {}: {reason}",
                    verdict.decision
                )),
            }
        }
        session.taint_mut().record(&decided.taint, verdict.decision);
    }
    failures
}

#[test]
fn taint_sequences() {
    let sequences = sequences();
    let attacks = sequences.iter().filter(|s| s.class == "attack").count();
    let benign = sequences.iter().filter(|s| s.class == "benign").count();
    assert!(attacks >= 40, "the corpus has {attacks} attack sequences");
    assert!(benign >= 10, "the corpus has {benign} benign sequences");
    assert_eq!(
        attacks + benign,
        sequences.len(),
        "each sequence is an attack or benign"
    );
    let contained = crate::decisions::contained_allows_possible();
    let mut failures = Vec::new();
    for sequence in &sequences {
        if sequence.contained && !contained {
            continue;
        }
        let asks = sequence.calls.iter().any(|c| c.asks.is_some());
        if asks != (sequence.class == "attack") {
            failures.push(format!(
                "{}: an attack has a call that asks, a benign sequence none",
                sequence.name
            ));
        }
        failures.extend(run(sequence));
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
