//! Fuzz the rule parser and the compiled matcher: parsing never panics, and a parsed rule compiles and matches.

#![no_main]

use agent_rules::{Anchors, CallFacts, CommandFact, PermissionMode, Policy, Request, Rule, SessionState};
use agent_tool_traits::{Decision, HookOutcome, Source};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(rule) = Rule::parse(text, Decision::Deny, Source::User) else { return };
    let anchors = Anchors { cwd: "/proj".into(), home: Some("/home/u".into()) };
    let Ok(policy) = Policy::from_rules(vec![rule], PermissionMode::Default, &anchors) else { return };
    let argv: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    let facts = CallFacts { shell: Some(vec![CommandFact { argv: &argv, inner: 0, read_only: true, why: None }]), ..CallFacts::default() };
    let hooks = HookOutcome::default();
    let _ = policy.decide(&Request { tool: "Bash", facts: &facts, findings: &[], hooks: &hooks }, &SessionState::default());
});
