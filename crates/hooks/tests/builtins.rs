//! The cancellation and metrics hooks.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::sync::Arc;
use std::time::Duration;

use agent_hooks::{
    AgentHook, CallStatus, CancellationHook, HookRegistry, MetricsHook, PostToolUseAction,
    PostToolUseContext, PreToolUseAction, PreToolUseContext, SessionContext, SessionStopContext, StepContext,
};
use agent_tool_traits::{
    CancelRegistry, DecidedBy, Decision, Layer, Provenance, ToolCall, ToolOutput, Verdict,
};
use serde_json::json;

fn pre_ctx(session: &str) -> PreToolUseContext {
    PreToolUseContext {
        session_id: session.into(),
        agent_name: "lead".into(),
        step: 1,
        call: ToolCall::new("c1", "read_file", json!({"file_path": "a.txt"})),
        cwd: "/tmp".into(),
        permission_mode: "default".into(),
    }
}

fn post_ctx(tool: &str, status: CallStatus, millis: u64) -> PostToolUseContext {
    let decision = match status {
        CallStatus::Ok | CallStatus::Fail => Decision::Allow,
        CallStatus::Denied => Decision::Deny,
    };
    PostToolUseContext {
        session_id: "s1".into(),
        agent_name: "lead".into(),
        step: 1,
        call: ToolCall::new("c", tool, json!({})),
        cwd: "/work".into(),
        permission_mode: "default".into(),
        output: ToolOutput::ok("x"),
        status,
        verdict: Verdict::new(
            decision,
            "why",
            Provenance::layer(Layer::Rules).at(DecidedBy::Default),
        ),
        elapsed: Duration::from_millis(millis),
        sandbox: None,
        approver: None,
    }
}

fn stop_ctx(session: &str) -> SessionStopContext {
    SessionStopContext {
        session_id: session.into(),
        agent_name: "lead".into(),
        steps: 1,
        reason: "cancelled by the user".into(),
        cancelled: true,
    }
}

#[tokio::test]
async fn cancellation_blocks_only_the_cancelled_session_until_it_stops() {
    let cancelled = CancelRegistry::new();
    let hook = CancellationHook::new(cancelled.clone());
    assert_eq!(
        hook.pre_tool_use(&pre_ctx("s1")).await,
        PreToolUseAction::Continue
    );

    cancelled.cancel("s1");
    assert_eq!(
        hook.pre_tool_use(&pre_ctx("s1")).await,
        PreToolUseAction::Block {
            reason: "cancelled by the user".into()
        }
    );
    assert_eq!(
        hook.pre_tool_use(&pre_ctx("s2")).await,
        PreToolUseAction::Continue
    );

    // Through a registry, the cancellation ends the chain before any later hook.
    let mut hooks = HookRegistry::new();
    hooks.register(Arc::new(hook.clone()));
    hooks.register(Arc::new(MetricsHook::new()));
    let outcome = hooks.run_pre_tool_use(&pre_ctx("s1")).await;
    assert_eq!(
        outcome.permission.block,
        Some(("cancellation".into(), "cancelled by the user".into()))
    );

    hooks.session_stop(&stop_ctx("s1")).await.unwrap();
    assert!(!cancelled.is_cancelled("s1"), "the stop forgets the cancellation");
    assert_eq!(
        hook.pre_tool_use(&pre_ctx("s1")).await,
        PreToolUseAction::Continue
    );
}

#[tokio::test]
async fn metrics_count_calls_errors_denials_and_latency() {
    let metrics = MetricsHook::new();
    let session = SessionContext {
        session_id: "s1".into(),
        agent_name: "lead".into(),
        cwd: "/tmp".into(),
        permission_mode: "default".into(),
    };
    metrics.on_session_start(&session).await;
    for (tool, status, millis) in [
        ("read_file", CallStatus::Ok, 10),
        ("read_file", CallStatus::Ok, 30),
        ("run_bash", CallStatus::Fail, 50),
        ("run_bash", CallStatus::Denied, 0),
        ("file_write", CallStatus::Denied, 0),
    ] {
        assert_eq!(
            metrics.post_tool_use(&post_ctx(tool, status, millis)).await,
            PostToolUseAction::Continue
        );
    }
    for step in 1..=4 {
        let ctx = StepContext {
            session_id: "s1".into(),
            agent_name: "lead".into(),
            step,
            tool_calls: 1,
        };
        metrics.on_step_complete(&ctx).await;
    }
    metrics.on_session_stop(&stop_ctx("s1")).await.unwrap();

    let snapshot = metrics.snapshot();
    assert_eq!(snapshot.session_id.as_deref(), Some("s1"));
    assert_eq!(
        (snapshot.calls, snapshot.errors, snapshot.denied, snapshot.steps),
        (5, 1, 2, 4)
    );
    let read = snapshot.tools["read_file"];
    assert_eq!((read.count, read.errors, read.denied), (2, 0, 0));
    assert_eq!(
        (read.total, read.max),
        (Duration::from_millis(40), Duration::from_millis(30))
    );
    let bash = snapshot.tools["run_bash"];
    assert_eq!(
        (bash.count, bash.errors, bash.denied, bash.max),
        (1, 1, 1, Duration::from_millis(50))
    );
    assert_eq!(
        snapshot.tools["file_write"].count, 0,
        "a denied call never ran, so it has no latency"
    );
    assert_eq!(
        snapshot.summary(),
        "5 calls, 1 errors, 2 denied over 4 steps, slowest `run_bash` 50 ms"
    );

    // Clones share the counters, so the copy registered in a registry is the one queried.
    let shared = metrics.clone();
    shared
        .post_tool_use(&post_ctx("read_file", CallStatus::Ok, 1))
        .await;
    assert_eq!(metrics.snapshot().calls, 6);
}
