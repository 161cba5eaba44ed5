//! A hook matcher and a rule agree on every name of every tool: both read names through the one table of
//! `agent-tool-traits`, so a hook cannot miss a call a rule names (or fire on one it does not).

use agent_hooks::{HookEvent, HookSettings};
use agent_rules::{Anchors, CallFacts, PermissionMode, Policy, Request, Rule, SessionState};
use agent_tool_traits::{DecidedBy, Decision, HookOutcome, Source, ToolName};
use serde_json::json;

/// Every tool the table knows, by its canonical name, and tools it does not know.
const TOOLS: &[&str] = &[
    "Bash",
    "Read",
    "Write",
    "Edit",
    "Glob",
    "Grep",
    "NotebookEdit",
    "NotebookRead",
    "WebFetch",
    "WebSearch",
    "Agent",
    "ask_user",
    "TodoWrite",
    "ExitPlanMode",
    "mcp__memory__save",
    "search_papers",
];

/// Every name of every tool: the canonical names and all their aliases.
fn every_name() -> Vec<String> {
    TOOLS
        .iter()
        .flat_map(|tool| ToolName::new(tool).names().map(str::to_owned).collect::<Vec<_>>())
        .collect()
}

/// Whether a PreToolUse matcher `matcher` selects a call of `subject`.
fn hook_fires(matcher: &str, subject: &str) -> bool {
    let settings = HookSettings::from_json(&json!({"hooks": {"PreToolUse": [
        {"matcher": matcher, "hooks": [{"type": "command", "command": "true"}]}
    ]}}))
    .unwrap();
    !settings.commands(HookEvent::PreToolUse, subject).is_empty()
}

/// Whether the tool-wide deny rule `rule` denies a call of `subject` by its name.
fn rule_denies(rule: &str, subject: &str) -> bool {
    let anchors = Anchors {
        cwd: "/proj".into(),
        home: None,
    };
    let rules = vec![Rule::parse(rule, Decision::Deny, Source::User).unwrap()];
    let policy = Policy::from_rules(rules, PermissionMode::Default, &anchors).unwrap();
    let facts = CallFacts::default();
    let verdict = policy
        .decide(
            &Request {
                tool: subject,
                facts: &facts,
                findings: &[],
                hooks: &HookOutcome::default(),
            },
            &SessionState::default(),
        )
        .verdict;
    verdict.provenance.step == Some(DecidedBy::DenyRule)
}

#[test]
fn a_hook_matcher_and_a_rule_name_the_same_calls() {
    let names = every_name();
    for expected in [
        "LS",
        "AskUserQuestion",
        "TodoRead",
        "todo_write",
        "MultiEdit",
        "Task",
        "subagent",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} is not in the table"
        );
    }
    for matcher in &names {
        for subject in &names {
            assert_eq!(
                hook_fires(matcher, subject),
                rule_denies(matcher, subject),
                "matcher and rule `{matcher}` disagree about a call of `{subject}`"
            );
        }
    }
    // The calls the hooks used to miss: their matchers now see the names the rules always saw.
    assert!(hook_fires("Glob", "LS"));
    assert!(hook_fires("ask_user", "AskUserQuestion"));
    assert!(hook_fires("TodoWrite", "TodoRead"));
    assert!(hook_fires("Edit", "MultiEdit"));
    assert!(!hook_fires("Glob", "Grep"));
}
