//! Limits from the settings files, and background tasks: started at once, their results injected before a later
//! turn, decided like any call, cancelled or awaited at session stop.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_core::{
    LimitKind, Model, ModelFuture, ModelTurn, Runtime, RuntimeConfig, ScriptedModel, ScriptedTurn, StepRecord,
};
use agent_hooks::{AuditFilter, AuditLogHook, AuditStatus, CallStatus};
use agent_rules::{Discovery, Rule, Settings};
use agent_tool_traits::{
    CancelRegistry, Decision, InterruptBehavior, Source, Tool, ToolCall, ToolContext, ToolFuture, ToolOutput,
};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_settings_file_sets_the_step_limit() {
    let root = tempfile::tempdir().unwrap();
    let (cwd, home) = (root.path().join("workspace"), root.path().join("home"));
    std::fs::create_dir_all(cwd.join(".agent-guard")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(cwd.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(
        cwd.join(".agent-guard/settings.json"),
        r#"{"agentGuard": {"limits": {"maxSteps": 2}}}"#,
    )
    .unwrap();
    let settings = Settings::discover(&Discovery {
        cwd: cwd.clone(),
        home: Some(home),
        managed: Vec::new(),
        cli_files: Vec::new(),
    })
    .unwrap();
    let mut config = RuntimeConfig::new(&cwd);
    // One more step than the turns: only the settings' limit can stop the model early.
    config.limits.max_steps = 5;
    let cancel = CancelRegistry::new();
    let runtime = Runtime::builder(settings, config)
        .cancel_registry(cancel.clone())
        .build()
        .unwrap();
    let turns: Vec<ScriptedTurn> = serde_json::from_value(json!([
        {"calls": [{"id": "r1", "tool": "Read", "args": {"file_path": "a.txt"}}]},
        {"calls": [{"id": "r2", "tool": "Read", "args": {"file_path": "a.txt", "limit": 1}}]},
        {"calls": [{"id": "r3", "tool": "Read", "args": {"file_path": "a.txt", "limit": 2}}]},
        {"calls": [{"id": "r4", "tool": "Read", "args": {"file_path": "a.txt", "limit": 3}}]}
    ]))
    .unwrap();
    let mut model = ScriptedModel::new(turns, Some("alpha".to_owned()), cancel, "limits");
    let report = runtime.run("limits", &mut model).await;
    assert_eq!(report.steps.len(), 2, "{:?}", report.reason);
    assert_eq!(report.reason, "max steps (2): final answer without tools");
    assert_eq!(report.limits.last().unwrap().kind, LimitKind::MaxSteps);
}

/// A tool that sleeps, then answers; it counts its starts and records that it finished.
struct Slow {
    name: &'static str,
    delay: Duration,
    behavior: InterruptBehavior,
    started: Arc<AtomicUsize>,
    done: Arc<AtomicBool>,
}

impl Slow {
    fn new(name: &'static str, millis: u64, behavior: InterruptBehavior) -> Arc<Self> {
        Arc::new(Self {
            name,
            delay: Duration::from_millis(millis),
            behavior,
            started: Arc::default(),
            done: Arc::default(),
        })
    }
}

impl Tool for Slow {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "sleeps, then answers"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn interrupt_behavior(&self) -> InterruptBehavior {
        self.behavior
    }
    fn call<'a>(&'a self, _args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        self.started.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            self.done.store(true, Ordering::SeqCst);
            Ok(ToolOutput::ok(format!("{} done", self.name)))
        })
    }
}

/// The notices a model was given, each with the number of turns it had taken.
type Notices = Arc<Mutex<Vec<(usize, String)>>>;

/// A model playing `turns` in order, recording each notice with the number of turns it had taken.
struct Scripted {
    turns: Vec<ModelTurn>,
    taken: usize,
    notices: Notices,
}

impl Scripted {
    fn new(turns: Vec<ModelTurn>) -> (Self, Notices) {
        let notices = Arc::default();
        let model = Self {
            turns,
            taken: 0,
            notices: Arc::clone(&notices),
        };
        (model, notices)
    }
}

impl Model for Scripted {
    fn next_turn<'a>(&'a mut self, _history: &'a [StepRecord]) -> ModelFuture<'a> {
        let turn = self
            .turns
            .get(self.taken)
            .cloned()
            .unwrap_or_else(|| ModelTurn::Answer("done".to_owned()));
        self.taken += 1;
        Box::pin(std::future::ready(turn))
    }
    fn notice(&mut self, message: &str) {
        self.notices
            .lock()
            .unwrap()
            .push((self.taken, message.to_owned()));
    }
}

fn bg(id: &str, tool: &str) -> ToolCall {
    ToolCall::new(id, "bg_task_run", json!({"tool": tool, "args": {}}))
}

fn settings(allow: &[&str], deny: &[&str]) -> Settings {
    let mut settings = Settings::new();
    for name in allow {
        settings.add_rule(Rule::parse(name, Decision::Allow, Source::User).unwrap());
    }
    for name in deny {
        settings.add_rule(Rule::parse(name, Decision::Deny, Source::User).unwrap());
    }
    settings
}

async fn runtime(
    dir: &std::path::Path,
    settings: Settings,
    tools: &[Arc<Slow>],
) -> (Runtime, std::path::PathBuf) {
    let db = dir.join("audit.db");
    let mut builder =
        Runtime::builder(settings, RuntimeConfig::new(dir)).audit(AuditLogHook::open(&db).await.unwrap());
    for tool in tools {
        builder = builder.tool(Arc::clone(tool) as Arc<dyn Tool>);
    }
    (builder.build().unwrap(), db)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_result_comes_before_a_later_turn_never_inside_the_current_one() {
    let dir = tempfile::tempdir().unwrap();
    let fetch = Slow::new("slow_fetch", 300, InterruptBehavior::Cancel);
    let pause = Slow::new("pause", 700, InterruptBehavior::Cancel);
    let (runtime, db) = runtime(
        dir.path(),
        settings(&["slow_fetch", "pause"], &[]),
        &[Arc::clone(&fetch), Arc::clone(&pause)],
    )
    .await;
    assert!(runtime.registry().contains("bg_task_run"));
    let (mut model, notices) = Scripted::new(vec![
        ModelTurn::Calls(vec![bg("b1", "slow_fetch")]),
        ModelTurn::Calls(vec![ToolCall::new("p1", "pause", json!({}))]),
        ModelTurn::Answer("fetched".to_owned()),
    ]);
    let report = runtime.run("bg", &mut model).await;
    assert_eq!(report.answer.as_deref(), Some("fetched"));

    let started = &report.steps[0].calls[0];
    assert_eq!(started.status, CallStatus::Ok);
    assert!(started.elapsed() < Duration::from_millis(100), "returns at once");
    assert!(
        started.output.content.contains("`bg-1`"),
        "{}",
        started.output.content
    );

    let notices = notices.lock().unwrap().clone();
    assert_eq!(notices.len(), 1, "{notices:?}");
    let (taken, message) = &notices[0];
    assert_eq!(
        *taken, 2,
        "injected before the third turn, after the step that was running when it finished"
    );
    assert!(
        message.contains("bg-1") && message.contains("slow_fetch done"),
        "{message}"
    );

    assert_eq!(report.background.len(), 1);
    assert_eq!(report.background[0].report.call.name, "slow_fetch");
    assert_eq!(report.background[0].report.status, CallStatus::Ok);
    assert_eq!(fetch.started.load(Ordering::SeqCst), 1);

    let rows = AuditLogHook::query(&db, &AuditFilter::default()).await.unwrap();
    let tools: Vec<&str> = rows.iter().map(|r| r.tool_name.as_str()).collect();
    assert_eq!(
        tools.iter().filter(|t| **t == "slow_fetch").count(),
        1,
        "one row for the background call: {tools:?}"
    );
    assert_eq!(
        tools.iter().filter(|t| **t == "bg_task_run").count(),
        1,
        "{tools:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_inner_call_is_a_denied_bg_task_run_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let danger = Slow::new("danger", 10, InterruptBehavior::Cancel);
    let (runtime, db) = runtime(dir.path(), settings(&[], &["danger"]), &[Arc::clone(&danger)]).await;
    let (mut model, notices) = Scripted::new(vec![
        ModelTurn::Calls(vec![
            bg("b1", "danger"),
            // A shell command the analysis denies whatever the rules say.
            ToolCall::new(
                "b2",
                "bg_task_run",
                json!({"tool": "Bash", "args": {"command": "rm -rf /"}}),
            ),
            ToolCall::new("b3", "bg_task_run", json!({"args": {}})),
            ToolCall::new(
                "b4",
                "bg_task_run",
                json!({"tool": "bg_task_run", "args": {"tool": "danger"}}),
            ),
        ]),
        ModelTurn::Calls(vec![ToolCall::new(
            "r1",
            "Read",
            json!({"file_path": "missing.txt"}),
        )]),
        ModelTurn::Answer("gave up".to_owned()),
    ]);
    assert_eq!(
        runtime.decide("bg_task_run", &json!({"tool": "danger"})).decision,
        Decision::Deny
    );
    let report = runtime.run("deny", &mut model).await;
    for call in &report.steps[0].calls {
        assert_eq!(
            call.status,
            CallStatus::Denied,
            "{}: {}",
            call.call.id,
            call.output.content
        );
        assert_eq!(call.verdict.decision, Decision::Deny);
        assert!(call.output.is_error && call.output.content.starts_with("denied"));
    }
    assert_eq!(danger.started.load(Ordering::SeqCst), 0, "nothing ran");
    assert!(report.background.is_empty() && notices.lock().unwrap().is_empty());
    let rows = AuditLogHook::query(&db, &AuditFilter::default()).await.unwrap();
    let denied = rows.iter().filter(|r| r.status == AuditStatus::Denied).count();
    assert_eq!(denied, 4, "one row per call");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_stop_cancels_cancel_tasks_and_awaits_block_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let crawl = Slow::new("crawl", 30_000, InterruptBehavior::Cancel);
    let save = Slow::new("save", 400, InterruptBehavior::Block);
    let (runtime, db) = runtime(
        dir.path(),
        settings(&["crawl", "save"], &[]),
        &[Arc::clone(&crawl), Arc::clone(&save)],
    )
    .await;
    let (mut model, notices) = Scripted::new(vec![
        ModelTurn::Calls(vec![bg("b1", "crawl"), bg("b2", "save")]),
        ModelTurn::Answer("stopping".to_owned()),
    ]);
    let begun = Instant::now();
    let report = runtime.run("stop", &mut model).await;
    let took = begun.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "the Cancel task did not hold the stop: {took:?}"
    );
    assert!(
        took >= Duration::from_millis(350),
        "the Block task was awaited: {took:?}"
    );
    assert!(save.done.load(Ordering::SeqCst), "the Block task ran to its end");
    assert!(
        !crawl.done.load(Ordering::SeqCst),
        "the Cancel task was cancelled"
    );
    assert!(notices.lock().unwrap().is_empty(), "no turn came after them");

    let ended: Vec<_> = report
        .background
        .iter()
        .map(|n| (n.report.call.name.as_str(), n.report.status))
        .collect();
    assert_eq!(ended.len(), 2, "{ended:?}");
    assert!(ended.contains(&("save", CallStatus::Ok)), "{ended:?}");
    assert!(ended.contains(&("crawl", CallStatus::Fail)), "{ended:?}");

    let rows = AuditLogHook::query(&db, &AuditFilter::default()).await.unwrap();
    let crawl_row = rows.iter().find(|r| r.tool_name == "crawl").unwrap();
    assert!(crawl_row.output_preview.contains("cancelled"), "{crawl_row:?}");
    assert!(
        rows.iter()
            .any(|r| r.tool_name == "save" && r.status == AuditStatus::Ok)
    );
    assert_eq!(
        rows.last().unwrap().status,
        AuditStatus::SessionStop,
        "background rows are written before the session's stop row"
    );
}

/// A model that starts `crawl` in the background, then cancels the run while its next step is under way.
struct Canceller {
    registry: CancelRegistry,
    taken: usize,
}

impl Model for Canceller {
    fn next_turn<'a>(&'a mut self, _history: &'a [StepRecord]) -> ModelFuture<'a> {
        self.taken += 1;
        let turn = match self.taken {
            1 => ModelTurn::Calls(vec![bg("b1", "crawl")]),
            2 => {
                self.registry.cancel("cancel");
                ModelTurn::Calls(vec![bg("b2", "crawl")])
            }
            _ => ModelTurn::Answer("done".to_owned()),
        };
        Box::pin(std::future::ready(turn))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_run_stops_its_background_tasks_and_starts_none() {
    let dir = tempfile::tempdir().unwrap();
    let crawl = Slow::new("crawl", 30_000, InterruptBehavior::Cancel);
    let registry = CancelRegistry::new();
    let runtime = Runtime::builder(settings(&["crawl"], &[]), RuntimeConfig::new(dir.path()))
        .tool(Arc::clone(&crawl) as Arc<dyn Tool>)
        .cancel_registry(registry.clone())
        .build()
        .unwrap();
    let mut model = Canceller { registry, taken: 0 };
    let begun = Instant::now();
    let report = runtime.run("cancel", &mut model).await;
    assert!(begun.elapsed() < Duration::from_secs(10), "{:?}", begun.elapsed());
    assert!(report.cancelled);
    assert_eq!(
        crawl.started.load(Ordering::SeqCst),
        1,
        "nothing starts after the cancellation"
    );
    assert!(!crawl.done.load(Ordering::SeqCst));
    assert_eq!(report.background.len(), 1);
    assert!(report.background[0].report.output.content.contains("cancelled"));
}
