//! Subagents (L6) through the public API: fresh context, narrowed tools, silent asks, modes that only narrow,
//! hook events, audit rows with the agent's name, cancellation, and the property that a child may do nothing its
//! parent may not.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_core::{
    ApprovalAnswer, Model, ModelFuture, ModelTurn, Runtime, RuntimeConfig, ScriptedApprover,
    ScriptedChildren, StepRecord,
};
use agent_hooks::{
    AgentHook, CallStatus, HookFuture, PreToolUseAction, PreToolUseContext, SubagentContext,
    SubagentStopContext,
};
use agent_rules::{PermissionMode, Rule, Settings};
use agent_tool_traits::{
    CancelRegistry, Decision, Source, Tool, ToolCall, ToolContext, ToolFuture, ToolOutput,
};
use proptest::prelude::*;
use serde_json::{Value, json};

/// A parent model making one turn of calls, then answering.
struct OneTurn(Option<Vec<ToolCall>>);

impl Model for OneTurn {
    fn next_turn<'a>(&'a mut self, _history: &'a [StepRecord]) -> ModelFuture<'a> {
        let turn = match self.0.take() {
            Some(calls) => ModelTurn::Calls(calls),
            None => ModelTurn::Answer("done".into()),
        };
        Box::pin(std::future::ready(turn))
    }
}

fn subagent_call(id: &str, args: Value) -> ToolCall {
    ToolCall::new(id, "Task", args)
}

fn child_turn(calls: Value) -> Value {
    json!([{ "calls": calls }])
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    std::fs::write(dir.path().join("src/x.rs"), "fn x() {}\n").unwrap();
    dir
}

fn parent(dir: &std::path::Path, settings: Settings, mode: PermissionMode, session: &str) -> Runtime {
    let mut config = RuntimeConfig::new(dir);
    config.mode = Some((mode, Source::CliArg));
    let cancel = CancelRegistry::new();
    Runtime::builder(settings, config)
        .cancel_registry(cancel.clone())
        .subagent_models(Arc::new(ScriptedChildren::new(cancel, session)))
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bypass_parent_starts_a_plan_child_and_no_child_raises_its_mode() {
    let dir = workspace();
    let write = |id: &str, path: &str| json!({"id": id, "tool": "Write", "args": {"file_path": path, "content": "x"}});
    let bypass = parent(
        dir.path(),
        Settings::new(),
        PermissionMode::BypassPermissions,
        "s",
    );
    let plan = bypass
        .plan_subagent(&json!({"prompt": "p", "mode": "plan"}))
        .unwrap()
        .unwrap();
    assert_eq!(plan.mode, PermissionMode::Plan);
    let child = bypass.subagent(&plan).unwrap().unwrap();
    assert_eq!(
        child
            .decide("Write", &json!({"file_path": "b.txt", "content": "x"}))
            .decision,
        Decision::Deny
    );
    assert_eq!(
        bypass
            .decide("Write", &json!({"file_path": "b.txt", "content": "x"}))
            .decision,
        Decision::Allow
    );
    let calls = vec![
        ToolCall::new("own", "Write", json!({"file_path": "own.txt", "content": "x"})),
        subagent_call(
            "plan-child",
            json!({"prompt": "p", "mode": "plan", "turns": child_turn(json!([write("c1", "plan.txt")]))}),
        ),
    ];
    let report = bypass.run("s", &mut OneTurn(Some(calls))).await;
    assert!(dir.path().join("own.txt").exists());
    assert!(
        !dir.path().join("plan.txt").exists(),
        "a plan child of a bypass parent writes nothing"
    );
    assert!(report.calls().all(|c| c.status == CallStatus::Ok));

    let default = parent(dir.path(), Settings::new(), PermissionMode::Default, "t");
    let calls = vec![subagent_call(
        "raise",
        json!({"prompt": "p", "mode": "bypassPermissions", "turns": child_turn(json!([write("c2", "raised.txt")]))}),
    )];
    default.run("t", &mut OneTurn(Some(calls))).await;
    assert!(
        !dir.path().join("raised.txt").exists(),
        "asking for bypassPermissions does not raise a child"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bubble_child_asks_the_parents_approver() {
    let dir = workspace();
    let cancel = CancelRegistry::new();
    let approvals = BTreeMap::from([("c1".to_owned(), ApprovalAnswer::AllowOnce)]);
    let runtime = Runtime::builder(Settings::new(), RuntimeConfig::new(dir.path()))
        .approver(Arc::new(ScriptedApprover::new(
            approvals,
            vec!["never used".into()],
        )))
        .cancel_registry(cancel.clone())
        .subagent_models(Arc::new(ScriptedChildren::new(cancel, "b")))
        .build()
        .unwrap();
    let turns = child_turn(json!([
        {"id": "c1", "tool": "Write", "args": {"file_path": "bubbled.txt", "content": "x"}},
        {"id": "c2", "tool": "Write", "args": {"file_path": "unanswered.txt", "content": "x"}},
        {"id": "c3", "tool": "ask_user", "args": {"question": "?"}}
    ]));
    let calls = vec![subagent_call(
        "bubble",
        json!({"prompt": "p", "mode": "bubble", "turns": turns}),
    )];
    let report = runtime.run("b", &mut OneTurn(Some(calls))).await;
    assert_eq!(report.calls().next().unwrap().status, CallStatus::Ok);
    assert!(
        dir.path().join("bubbled.txt").exists(),
        "the parent's approver allowed it"
    );
    assert!(
        !dir.path().join("unanswered.txt").exists(),
        "nobody answered: denied"
    );
}

/// Records subagent events and the agent of each call.
#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl AgentHook for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }
    fn pre_tool_use<'a>(&'a self, ctx: &'a PreToolUseContext) -> HookFuture<'a, PreToolUseAction> {
        self.0
            .lock()
            .unwrap()
            .push(format!("call {} by {}", ctx.call.name, ctx.agent_name));
        Box::pin(std::future::ready(PreToolUseAction::Continue))
    }
    fn on_subagent_start<'a>(&'a self, ctx: &'a SubagentContext) -> HookFuture<'a, ()> {
        self.0.lock().unwrap().push(format!(
            "start {} of {}: {}",
            ctx.agent_name, ctx.parent_agent, ctx.task
        ));
        Box::pin(std::future::ready(()))
    }
    fn on_subagent_stop<'a>(&'a self, ctx: &'a SubagentStopContext) -> HookFuture<'a, ()> {
        self.0.lock().unwrap().push(format!(
            "stop {} after {}: {}",
            ctx.agent_name, ctx.steps, ctx.outcome
        ));
        Box::pin(std::future::ready(()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagent_events_fire_and_the_parents_hooks_see_the_childs_calls() {
    let dir = workspace();
    let recorder = Arc::new(Recorder::default());
    let cancel = CancelRegistry::new();
    let runtime = Runtime::builder(Settings::new(), RuntimeConfig::new(dir.path()))
        .hook(Arc::clone(&recorder) as Arc<dyn AgentHook>)
        .cancel_registry(cancel.clone())
        .subagent_models(Arc::new(ScriptedChildren::new(cancel, "h")))
        .build()
        .unwrap();
    let turns = child_turn(
        json!([{"id": "r", "tool": "Read", "args": {"file_path": "a.txt"}},
                                 {"id": "n", "tool": "Task", "args": {"prompt": "nested"}}]),
    );
    let calls = vec![subagent_call(
        "e",
        json!({"subagent_type": "explore", "prompt": "read a", "turns": turns, "final_answer": "alpha"}),
    )];
    runtime.run("h", &mut OneTurn(Some(calls))).await;
    let events = recorder.0.lock().unwrap().clone();
    assert_eq!(
        events,
        vec![
            "call Task by lead",
            "start explore of lead: read a",
            "call Read by explore",
            "call Task by explore",
            "stop explore after 1: alpha",
        ]
    );
}

/// A tool that sleeps until cancelled (its 10 s are what a cancellation must cut), and says when it has started.
struct Slow(Arc<AtomicBool>);

impl Tool for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn description(&self) -> &str {
        "sleeps"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn call<'a>(&'a self, _args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async {
            self.0.store(true, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_secs(10)).await;
            Ok(ToolOutput::ok("slept"))
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_parent_stops_a_child_mid_tool() {
    let dir = workspace();
    let mut settings = Settings::new();
    settings.add_rule(Rule::parse("slow", Decision::Allow, Source::User).unwrap());
    let cancel = CancelRegistry::new();
    let slow_started = Arc::new(AtomicBool::new(false));
    let runtime = Runtime::builder(settings, RuntimeConfig::new(dir.path()))
        .tool(Arc::new(Slow(Arc::clone(&slow_started))))
        .cancel_registry(cancel.clone())
        .subagent_models(Arc::new(ScriptedChildren::new(cancel.clone(), "c")))
        .build()
        .unwrap();
    let turns = json!([{"calls": [{"id": "s", "tool": "slow", "args": {}}]},
                       {"calls": [{"id": "later", "tool": "slow", "args": {"n": 2}}]}]);
    let calls = vec![subagent_call("g", json!({"prompt": "wait", "turns": turns}))];
    // The parent is cancelled once the child's tool runs.
    let cancelled = async {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !slow_started.load(Ordering::SeqCst) {
            assert!(Instant::now() < deadline, "the child's tool never started");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        cancel.cancel("c");
        Instant::now()
    };
    let mut model = OneTurn(Some(calls));
    let (report, cancelled_at) = tokio::join!(runtime.run("c", &mut model), cancelled);
    assert!(
        cancelled_at.elapsed() < Duration::from_secs(2),
        "the child's tool ran on for {:?} after the cancel",
        cancelled_at.elapsed()
    );
    assert!(report.cancelled);
    let call = report.calls().next().unwrap();
    assert_eq!(call.status, CallStatus::Fail);
    assert!(call.output.content.contains("cancelled"), "{:?}", call.output);
}

const RULES: [&str; 12] = [
    "Read",
    "Read(./src/**)",
    "Write",
    "Write(./notes.txt)",
    "Edit(./src/**)",
    "Bash",
    "Bash(ls:*)",
    "Bash(rm:*)",
    "Glob",
    "Grep",
    "ask_user",
    "Task(explore)",
];
const MODES: [PermissionMode; 7] = [
    PermissionMode::Default,
    PermissionMode::AcceptEdits,
    PermissionMode::Plan,
    PermissionMode::DontAsk,
    PermissionMode::BypassPermissions,
    PermissionMode::Auto,
    PermissionMode::Bubble,
];
const TOOLS: [&str; 7] = ["Read", "Write", "Edit", "Bash", "Glob", "Grep", "ask_user"];

fn calls() -> Vec<(&'static str, Value)> {
    vec![
        ("Read", json!({"file_path": "a.txt"})),
        ("Read", json!({"file_path": "src/x.rs"})),
        ("Read", json!({"file_path": "/etc/hostname"})),
        ("Write", json!({"file_path": "notes.txt", "content": "n"})),
        ("Write", json!({"file_path": "src/y.rs", "content": "y"})),
        (
            "Edit",
            json!({"file_path": "src/x.rs", "old_string": "x", "new_string": "z"}),
        ),
        ("Bash", json!({"command": "ls -la"})),
        ("Bash", json!({"command": "rm -rf build"})),
        ("Bash", json!({"command": "cargo build"})),
        ("Glob", json!({"pattern": "**/*.rs"})),
        ("Grep", json!({"pattern": "fn"})),
        ("ask_user", json!({"question": "?"})),
        ("Task", json!({"prompt": "nested"})),
    ]
}

fn behavior(n: u8) -> Decision {
    match n % 3 {
        0 => Decision::Allow,
        1 => Decision::Ask,
        _ => Decision::Deny,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_call_a_child_may_make_its_parent_may_make_too(
        rules in proptest::collection::vec((0..RULES.len(), 0u8..3, 0usize..3), 0..6),
        parent_mode in 0..MODES.len(),
        explore in any::<bool>(),
        tools in proptest::option::of(proptest::collection::vec(0..TOOLS.len(), 0..5)),
        child_mode in proptest::option::of(0..MODES.len()),
    ) {
        let dir = workspace();
        let sources = [Source::User, Source::Project, Source::Session];
        let mut settings = Settings::new();
        for (rule, behave, source) in &rules {
            settings.add_rule(Rule::parse(RULES[*rule], behavior(*behave), sources[*source]).unwrap());
        }
        let parent = parent(dir.path(), settings, MODES[parent_mode], "p");
        let mut args = json!({"prompt": "p", "subagent_type": if explore { "explore" } else { "general" }});
        if let Some(tools) = &tools {
            args["tools"] = json!(tools.iter().map(|t| TOOLS[*t]).collect::<Vec<_>>());
        }
        if let Some(mode) = child_mode {
            args["mode"] = json!(MODES[mode].as_str());
        }
        let plan = parent.plan_subagent(&args).unwrap().unwrap();
        let child = parent.subagent(&plan).unwrap().unwrap();
        for (tool, call) in calls() {
            let by_child = child.decide(tool, &call);
            if by_child.decision == Decision::Allow {
                let by_parent = parent.decide(tool, &call);
                prop_assert_eq!(
                    by_parent.decision, Decision::Allow,
                    "the child may call {} {} but its parent may not: child {:?}, parent {:?}",
                    tool, call, by_child, by_parent
                );
            }
        }
    }
}
