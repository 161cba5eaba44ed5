//! The combination rules of `HookRegistry`, through the public API.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_hooks::{
    AgentHook, CallStatus, CompactContext, HookError, HookFuture, HookRegistry, PostToolUseAction,
    PostToolUseContext, PreToolUseAction, PreToolUseContext, SessionStopContext, StepContext,
    SubagentContext, SubagentStopContext,
};
use agent_tool_traits::{Decision, Layer, Provenance, ToolCall, ToolOutput, Verdict};
use serde_json::{Value, json};

/// A hook that answers PreToolUse with a fixed action and records what it saw.
struct Scripted {
    name: String,
    action: PreToolUseAction,
    seen: Mutex<Vec<Value>>,
}

impl Scripted {
    fn new(name: &str, action: PreToolUseAction) -> Arc<Self> {
        Arc::new(Self {
            name: name.to_owned(),
            action,
            seen: Mutex::default(),
        })
    }

    fn calls(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

impl AgentHook for Scripted {
    fn name(&self) -> &str {
        &self.name
    }

    fn pre_tool_use<'a>(&'a self, ctx: &'a PreToolUseContext) -> HookFuture<'a, PreToolUseAction> {
        self.seen.lock().unwrap().push(ctx.call.args.clone());
        let action = self.action.clone();
        Box::pin(async move {
            // A real await point, so the registry is exercised as an async chain.
            tokio::task::yield_now().await;
            action
        })
    }
}

/// A PostToolUse hook that appends a marker to whatever content it sees.
struct Append(&'static str);

impl AgentHook for Append {
    fn name(&self) -> &str {
        self.0
    }

    fn post_tool_use<'a>(&'a self, ctx: &'a PostToolUseContext) -> HookFuture<'a, PostToolUseAction> {
        let content = format!("{}+{}", ctx.output.content, self.0);
        Box::pin(async move { PostToolUseAction::MutateOutput { content } })
    }
}

/// Counts every lifecycle event; fails at session stop when asked to.
#[derive(Default)]
struct Lifecycle {
    name: &'static str,
    fail: bool,
    events: Mutex<Vec<&'static str>>,
}

impl Lifecycle {
    fn push(&self, event: &'static str) {
        self.events.lock().unwrap().push(event);
    }
}

impl AgentHook for Lifecycle {
    fn name(&self) -> &str {
        self.name
    }

    fn on_step_complete<'a>(&'a self, _ctx: &'a StepContext) -> HookFuture<'a, ()> {
        self.push("step");
        Box::pin(async {})
    }

    fn on_session_stop<'a>(&'a self, _ctx: &'a SessionStopContext) -> HookFuture<'a, Result<(), HookError>> {
        self.push("stop");
        let result = if self.fail {
            Err(HookError::Failed(format!("{} broke", self.name)))
        } else {
            Ok(())
        };
        Box::pin(async move { result })
    }

    fn on_subagent_start<'a>(&'a self, _ctx: &'a SubagentContext) -> HookFuture<'a, ()> {
        self.push("subagent-start");
        Box::pin(async {})
    }

    fn on_subagent_stop<'a>(&'a self, _ctx: &'a SubagentStopContext) -> HookFuture<'a, ()> {
        self.push("subagent-stop");
        Box::pin(async {})
    }

    fn on_pre_compact<'a>(&'a self, _ctx: &'a CompactContext) -> HookFuture<'a, ()> {
        self.push("pre-compact");
        Box::pin(async {})
    }

    fn on_post_compact<'a>(&'a self, _ctx: &'a CompactContext) -> HookFuture<'a, ()> {
        self.push("post-compact");
        Box::pin(async {})
    }
}

fn pre_ctx(args: Value) -> PreToolUseContext {
    PreToolUseContext {
        session_id: "s1".into(),
        agent_name: "lead".into(),
        step: 1,
        call: ToolCall::new("c1", "run_bash", args),
        cwd: "/tmp".into(),
        permission_mode: "default".into(),
    }
}

fn post_ctx(content: &str) -> PostToolUseContext {
    PostToolUseContext {
        session_id: "s1".into(),
        agent_name: "lead".into(),
        step: 1,
        call: ToolCall::new("c1", "read_file", json!({"file_path": "a.txt"})),
        cwd: "/work".into(),
        permission_mode: "default".into(),
        output: ToolOutput::ok(content),
        status: CallStatus::Ok,
        verdict: Verdict::new(Decision::Allow, "read-only", Provenance::layer(Layer::Rules)),
        elapsed: Duration::from_millis(3),
        sandbox: None,
        approver: None,
    }
}

fn stop_ctx() -> SessionStopContext {
    SessionStopContext {
        session_id: "s1".into(),
        agent_name: "lead".into(),
        steps: 2,
        reason: "completed".into(),
        cancelled: false,
    }
}

fn registry(hooks: &[Arc<dyn AgentHook>]) -> HookRegistry {
    let mut registry = HookRegistry::new();
    for hook in hooks {
        registry.register(Arc::clone(hook));
    }
    registry
}

fn block(reason: &str) -> PreToolUseAction {
    PreToolUseAction::Block {
        reason: reason.into(),
    }
}

fn mutate(args: Value, context: Option<&str>) -> PreToolUseAction {
    PreToolUseAction::MutateInput {
        args,
        context: context.map(str::to_owned),
    }
}

#[tokio::test]
async fn no_hooks_change_nothing() {
    let outcome = HookRegistry::new()
        .run_pre_tool_use(&pre_ctx(json!({"command": "ls"})))
        .await;
    assert_eq!(outcome.permission.block, None);
    assert_eq!(outcome.args, json!({"command": "ls"}));
    assert!(!outcome.mutated && outcome.contexts.is_empty() && outcome.permission.asks.is_empty());
    assert_eq!(outcome.permission.allow, None);
}

#[tokio::test]
async fn first_block_short_circuits() {
    let before = Scripted::new("before", PreToolUseAction::Continue);
    let first = Scripted::new("first", block("first reason"));
    let second = Scripted::new("second", block("second reason"));
    let after = Scripted::new("after", PreToolUseAction::Continue);
    let hooks = registry(&[before.clone(), first.clone(), second.clone(), after.clone()]);

    let outcome = hooks
        .run_pre_tool_use(&pre_ctx(json!({"command": "rm -rf build"})))
        .await;

    assert_eq!(
        outcome.permission.block,
        Some(("first".into(), "first reason".into()))
    );
    assert_eq!(
        (before.calls(), first.calls(), second.calls(), after.calls()),
        (1, 1, 0, 0)
    );
}

#[tokio::test]
async fn block_after_mutation_keeps_what_was_gathered() {
    let rewrite = Scripted::new("rewrite", mutate(json!({"command": "ls -a"}), Some("listing")));
    let ask = Scripted::new(
        "ask",
        PreToolUseAction::PermissionRequired {
            message: "sure?".into(),
        },
    );
    let stop = Scripted::new("stop", block("no"));
    let outcome = registry(&[rewrite, ask, stop])
        .run_pre_tool_use(&pre_ctx(json!({"command": "ls"})))
        .await;
    assert_eq!(outcome.permission.block, Some(("stop".into(), "no".into())));
    assert!(outcome.mutated);
    assert_eq!(outcome.contexts, ["listing"]);
    assert_eq!(outcome.permission.asks, ["sure?"]);
}

#[tokio::test]
async fn last_mutation_wins_and_contexts_accumulate_in_order() {
    let one = Scripted::new("one", mutate(json!({"command": "ls 1"}), Some("first context")));
    let two = Scripted::new("two", mutate(json!({"command": "ls 2"}), None));
    let three = Scripted::new("three", mutate(json!({"command": "ls 3"}), Some("third context")));
    let watcher = Scripted::new("watcher", PreToolUseAction::Continue);
    let hooks = registry(&[one.clone(), two.clone(), three, watcher.clone()]);

    let outcome = hooks.run_pre_tool_use(&pre_ctx(json!({"command": "ls"}))).await;

    assert!(outcome.mutated);
    assert_eq!(outcome.args, json!({"command": "ls 3"}));
    assert_eq!(outcome.contexts, ["first context", "third context"]);
    // Each hook sees the input as rewritten so far, so a later validating hook checks what will run.
    assert_eq!(one.seen.lock().unwrap()[0], json!({"command": "ls"}));
    assert_eq!(two.seen.lock().unwrap()[0], json!({"command": "ls 1"}));
    assert_eq!(watcher.seen.lock().unwrap()[0], json!({"command": "ls 3"}));
}

#[tokio::test]
async fn permission_requests_accumulate_and_the_first_allow_is_remembered() {
    let hooks = registry(&[
        Scripted::new(
            "a",
            PreToolUseAction::PermissionRequired {
                message: "touches prod".into(),
            },
        ),
        Scripted::new(
            "b",
            PreToolUseAction::Allow {
                reason: "trusted script".into(),
            },
        ),
        Scripted::new(
            "c",
            PreToolUseAction::PermissionRequired {
                message: "costs money".into(),
            },
        ),
        Scripted::new(
            "d",
            PreToolUseAction::Allow {
                reason: String::new(),
            },
        ),
    ]);
    let outcome = hooks
        .run_pre_tool_use(&pre_ctx(json!({"command": "deploy"})))
        .await;
    assert_eq!(outcome.permission.block, None);
    assert_eq!(outcome.permission.asks, ["touches prod", "costs money"]);
    assert_eq!(outcome.permission.allow.as_deref(), Some("trusted script"));
    assert!(!outcome.mutated);

    let unnamed = registry(&[Scripted::new(
        "e",
        PreToolUseAction::Allow {
            reason: String::new(),
        },
    )]);
    let outcome = unnamed.run_pre_tool_use(&pre_ctx(json!({}))).await;
    assert_eq!(outcome.permission.allow.as_deref(), Some("allowed by hook `e`"));
}

#[tokio::test]
async fn post_tool_use_chains_mutations_in_order() {
    let hooks = registry(&[
        Arc::new(Append("a")),
        Scripted::new("quiet", PreToolUseAction::Continue),
        Arc::new(Append("b")),
    ]);
    assert_eq!(hooks.run_post_tool_use(&post_ctx("out")).await, "out+a+b");
    assert_eq!(
        HookRegistry::new().run_post_tool_use(&post_ctx("out")).await,
        "out"
    );
}

#[tokio::test]
async fn session_stop_runs_every_hook_and_names_failures() {
    let broken = Arc::new(Lifecycle {
        name: "broken",
        fail: true,
        ..Lifecycle::default()
    });
    let fine = Arc::new(Lifecycle {
        name: "fine",
        ..Lifecycle::default()
    });
    let also_broken = Arc::new(Lifecycle {
        name: "also-broken",
        fail: true,
        ..Lifecycle::default()
    });

    let one = registry(&[broken.clone(), fine.clone()]);
    match one.session_stop(&stop_ctx()).await {
        Err(HookError::Hook { hook, source }) => {
            assert_eq!(hook, "broken");
            assert_eq!(source.to_string(), "broken broke");
        }
        other => panic!("expected one named failure, got {other:?}"),
    }
    assert_eq!(*fine.events.lock().unwrap(), ["stop"]);

    let two = registry(&[broken.clone(), fine.clone(), also_broken.clone()]);
    match two.session_stop(&stop_ctx()).await {
        Err(HookError::Many(errors)) => assert_eq!(errors.len(), 2),
        other => panic!("expected two failures, got {other:?}"),
    }
    assert_eq!(fine.events.lock().unwrap().len(), 2);
    assert!(registry(&[fine]).session_stop(&stop_ctx()).await.is_ok());
}

#[tokio::test]
async fn lifecycle_events_reach_every_hook() {
    let hook = Arc::new(Lifecycle {
        name: "life",
        ..Lifecycle::default()
    });
    let shared: Arc<dyn AgentHook> = hook.clone();
    let hooks = registry(&[shared]);
    let step = StepContext {
        session_id: "s1".into(),
        agent_name: "lead".into(),
        step: 1,
        tool_calls: 2,
    };
    hooks.step_complete(&step).await.unwrap();
    let sub = SubagentContext {
        session_id: "s1".into(),
        parent_agent: "lead".into(),
        agent_name: "researcher".into(),
        task: "find papers".into(),
    };
    hooks.subagent_start(&sub).await;
    let sub_stop = SubagentStopContext {
        session_id: "s1".into(),
        parent_agent: "lead".into(),
        agent_name: "researcher".into(),
        steps: 3,
        outcome: "done".into(),
    };
    hooks.subagent_stop(&sub_stop).await;
    let compact = CompactContext {
        session_id: "s1".into(),
        agent_name: "lead".into(),
        trigger: "auto".into(),
        tokens_before: 40_000,
        tokens_after: None,
    };
    hooks.pre_compact(&compact).await;
    hooks
        .post_compact(&CompactContext {
            tokens_after: Some(9_000),
            ..compact
        })
        .await;
    assert_eq!(
        *hook.events.lock().unwrap(),
        [
            "step",
            "subagent-start",
            "subagent-stop",
            "pre-compact",
            "post-compact"
        ]
    );
}

#[tokio::test]
async fn a_clone_shares_hooks_and_registering_on_it_leaves_the_parent_alone() {
    let counter = Arc::new(AtomicUsize::new(0));
    struct Count(Arc<AtomicUsize>);
    impl AgentHook for Count {
        fn name(&self) -> &str {
            "count"
        }
        fn pre_tool_use<'a>(&'a self, _ctx: &'a PreToolUseContext) -> HookFuture<'a, PreToolUseAction> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Box::pin(async { PreToolUseAction::Continue })
        }
    }
    let mut parent = HookRegistry::new();
    parent.register(Arc::new(Count(counter.clone())));
    let mut child = parent.clone();
    child.run_pre_tool_use(&pre_ctx(json!({}))).await;
    assert_eq!(
        counter.load(Ordering::SeqCst),
        1,
        "the child inherits the parent's hook"
    );

    child.register(Scripted::new("child-only", block("not in the parent")));
    assert_eq!(child.names(), ["count", "child-only"]);
    assert_eq!(parent.names(), ["count"]);
    assert_eq!(
        parent
            .run_pre_tool_use(&pre_ctx(json!({})))
            .await
            .permission
            .block,
        None
    );
}

/// One hook's answer in a generated chain.
#[derive(Debug, Clone)]
enum Answer {
    Continue,
    Block(u8),
    Mutate(u8, bool),
    Ask(u8),
    Allow(u8),
}

impl Answer {
    fn action(&self) -> PreToolUseAction {
        match self {
            Self::Continue => PreToolUseAction::Continue,
            Self::Block(n) => block(&format!("block {n}")),
            Self::Mutate(n, with_context) => mutate(
                json!({"n": n}),
                with_context.then(|| format!("context {n}")).as_deref(),
            ),
            Self::Ask(n) => PreToolUseAction::PermissionRequired {
                message: format!("ask {n}"),
            },
            Self::Allow(n) => PreToolUseAction::Allow {
                reason: format!("allow {n}"),
            },
        }
    }
}

fn answer() -> impl proptest::strategy::Strategy<Value = Answer> {
    use proptest::prelude::*;
    prop_oneof![
        Just(Answer::Continue),
        any::<u8>().prop_map(Answer::Block),
        (any::<u8>(), any::<bool>()).prop_map(|(n, context)| Answer::Mutate(n, context)),
        any::<u8>().prop_map(Answer::Ask),
        any::<u8>().prop_map(Answer::Allow),
    ]
}

proptest::proptest! {
    /// The registry agrees with a plain fold over the answers, and no hook after the first Block runs.
    #[test]
    fn the_registry_matches_a_reference_fold(answers in proptest::collection::vec(answer(), 0..12)) {
        let hooks: Vec<Arc<Scripted>> =
            answers.iter().enumerate().map(|(i, answer)| Scripted::new(&format!("h{i}"), answer.action())).collect();
        let shared: Vec<Arc<dyn AgentHook>> = hooks.iter().map(|hook| Arc::clone(hook) as Arc<dyn AgentHook>).collect();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let outcome = runtime.block_on(registry(&shared).run_pre_tool_use(&pre_ctx(json!({"n": "original"}))));

        let mut expected = PreToolUseOutcomeModel::default();
        for (i, answer) in answers.iter().enumerate() {
            match answer {
                Answer::Continue => {}
                Answer::Block(n) => {
                    expected.blocked = Some((format!("h{i}"), format!("block {n}")));
                    expected.ran = i + 1;
                    break;
                }
                Answer::Mutate(n, with_context) => {
                    expected.args = Some(json!({"n": n}));
                    if *with_context {
                        expected.contexts.push(format!("context {n}"));
                    }
                }
                Answer::Ask(n) => expected.asks.push(format!("ask {n}")),
                Answer::Allow(n) => {
                    expected.allowed.get_or_insert(format!("allow {n}"));
                }
            }
            expected.ran = i + 1;
        }
        proptest::prop_assert_eq!(&outcome.permission.block, &expected.blocked);
        proptest::prop_assert_eq!(outcome.mutated, expected.args.is_some());
        proptest::prop_assert_eq!(&outcome.args, &expected.args.unwrap_or(json!({"n": "original"})));
        proptest::prop_assert_eq!(&outcome.contexts, &expected.contexts);
        proptest::prop_assert_eq!(&outcome.permission.asks, &expected.asks);
        proptest::prop_assert_eq!(&outcome.permission.allow, &expected.allowed);
        let ran = hooks.iter().filter(|hook| hook.calls() == 1).count();
        proptest::prop_assert_eq!(ran, expected.ran);
        proptest::prop_assert!(hooks.iter().skip(expected.ran).all(|hook| hook.calls() == 0));
    }
}

#[derive(Default)]
struct PreToolUseOutcomeModel {
    blocked: Option<(String, String)>,
    args: Option<Value>,
    contexts: Vec<String>,
    asks: Vec<String>,
    allowed: Option<String>,
    ran: usize,
}
