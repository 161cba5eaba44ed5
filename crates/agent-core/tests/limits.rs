//! The runtime limits (L7) in the loop: duplicate calls refused, the step limit's final answer, the token budget's
//! nudges and forced answers, each visible in the report and the audit log.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::sync::{Arc, Mutex};

use agent_core::{
    LimitKind, Model, ModelFuture, ModelTurn, Runtime, RuntimeConfig, ScriptedModel, ScriptedTurn,
    SessionReport, StepRecord,
};
use agent_hooks::{AuditFilter, AuditLogHook, AuditStatus, CallStatus};
use agent_rules::{Rule, Settings};
use agent_tool_traits::{
    CancelRegistry, DecidedBy, Decision, Layer, Source, Tool, ToolCall, ToolContext, ToolFuture, ToolOutput,
};
use serde_json::{Value, json};

/// A tool answering every call with the same text, whatever its arguments.
struct Constant(&'static str, String);

impl Tool for Constant {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "answers the same text"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        // `fresh` makes the output depend on the arguments: new information at every step.
        let text = match args.get("fresh") {
            Some(n) => format!("{} #{n}", self.1),
            None => self.1.clone(),
        };
        Box::pin(async move { Ok(ToolOutput::ok(text)) })
    }
}

/// A model calling `tool` forever with `args(step)`, remembering the notices it was given.
struct Looping {
    tool: &'static str,
    args: fn(usize) -> Value,
    turns: usize,
    notices: Arc<Mutex<Vec<String>>>,
}

impl Model for Looping {
    fn next_turn<'a>(&'a mut self, _history: &'a [StepRecord]) -> ModelFuture<'a> {
        self.turns += 1;
        let call = ToolCall::new(format!("c{}", self.turns), self.tool, (self.args)(self.turns));
        Box::pin(std::future::ready(ModelTurn::Calls(vec![call])))
    }
    fn notice(&mut self, message: &str) {
        self.notices.lock().unwrap().push(message.to_owned());
    }
}

fn allowing(name: &str) -> Settings {
    let mut settings = Settings::new();
    settings.add_rule(Rule::parse(name, Decision::Allow, Source::User).unwrap());
    settings
}

fn looping(tool: &'static str, args: fn(usize) -> Value) -> (Looping, Arc<Mutex<Vec<String>>>) {
    let notices = Arc::default();
    let model = Looping {
        tool,
        args,
        turns: 0,
        notices: Arc::clone(&notices),
    };
    (model, notices)
}

/// A model reading `a.txt` in three consecutive steps (once by the runtime's name of the tool), then once with other
/// arguments, answering `alpha`.
fn duplicate_turns() -> Value {
    json!([
        {"calls": [{"id": "r1", "tool": "Read", "args": {"file_path": "a.txt"}}]},
        {"calls": [{"id": "r2", "tool": "read_file", "args": {"file_path": "a.txt"}}]},
        {"calls": [{"id": "r3", "tool": "Read", "args": {"file_path": "a.txt"}}]},
        {"calls": [{"id": "r4", "tool": "Read", "args": {"file_path": "a.txt", "limit": 5}}]}
    ])
}

/// Runs the scripted `turns` (answering `alpha`) in a project under `root` holding `a.txt`, with at most
/// `max_steps` steps, writing the audit log with `audit` when given.
async fn run_script(
    root: &std::path::Path,
    turns: Value,
    max_steps: u32,
    audit: Option<AuditLogHook>,
    session: &str,
) -> SessionReport {
    let cwd = root.join("workspace");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::write(cwd.join("a.txt"), "alpha\n").unwrap();
    let mut config = RuntimeConfig::new(&cwd);
    config.limits.max_steps = max_steps;
    let cancel = CancelRegistry::new();
    let mut builder = Runtime::builder(Settings::new(), config).cancel_registry(cancel.clone());
    if let Some(audit) = audit {
        builder = builder.audit(audit);
    }
    let runtime = builder.build().unwrap();
    let turns: Vec<ScriptedTurn> = serde_json::from_value(turns).unwrap();
    let mut model = ScriptedModel::new(turns, Some("alpha".to_owned()), cancel, session);
    runtime.run(session, &mut model).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_third_identical_call_is_refused_before_the_hooks_and_audited() {
    let root = tempfile::tempdir().unwrap();
    let db = root.path().join("audit.db");
    let audit = AuditLogHook::open(&db).await.unwrap();
    let report = run_script(root.path(), duplicate_turns(), 5, Some(audit), "dup").await;
    let calls: Vec<_> = report.calls().collect();
    assert_eq!(calls.len(), 4);
    assert_eq!(calls[0].status, CallStatus::Ok);
    assert_eq!(
        calls[1].status,
        CallStatus::Ok,
        "aliases are the same tool, but the 2nd call still runs"
    );
    let refused = calls[2];
    assert_eq!(refused.status, CallStatus::Denied);
    assert_eq!(refused.verdict.provenance.layer, Layer::Limits);
    assert_eq!(refused.verdict.provenance.step, Some(DecidedBy::Limit));
    assert!(refused.output.is_error && refused.output.content.contains("3 steps in a row"));
    assert_eq!(
        calls[3].status,
        CallStatus::Ok,
        "other arguments are another call"
    );
    assert_eq!(report.answer.as_deref(), Some("alpha"));
    assert_eq!(report.limits.len(), 1);
    assert_eq!(
        (report.limits[0].step, report.limits[0].kind),
        (3, LimitKind::Duplicate)
    );

    let rows = AuditLogHook::query(&db, &AuditFilter::default()).await.unwrap();
    assert_eq!(rows.len(), 5);
    let row = rows.iter().find(|r| r.step == 3).unwrap();
    assert_eq!(row.status, AuditStatus::Denied);
    assert_eq!(row.decided_by.as_deref(), Some("runtime-limits/limit"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_max_steps_the_model_gives_a_final_answer_without_tools() {
    let root = tempfile::tempdir().unwrap();
    let db = root.path().join("audit.db");
    let audit = AuditLogHook::open(&db).await.unwrap();
    let report = run_script(root.path(), duplicate_turns(), 2, Some(audit), "steps").await;
    assert_eq!(report.steps.len(), 2, "the turns past the limit never run");
    assert_eq!(report.answer.as_deref(), Some("alpha"));
    assert_eq!(report.reason, "max steps (2): final answer without tools");
    assert_eq!(report.limits.last().unwrap().kind, LimitKind::MaxSteps);
    assert_eq!(report.limits.last().unwrap().step, 3);
    let rows = AuditLogHook::query(&db, &AuditFilter::default()).await.unwrap();
    let stop = rows.last().unwrap();
    assert_eq!(stop.status, AuditStatus::SessionStop);
    assert!(stop.output_preview.starts_with("max steps (2)"), "{stop:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_calls_of_the_final_turn_are_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::new(dir.path());
    config.limits.max_steps = 3;
    let runtime = Runtime::builder(allowing("echo"), config)
        .tool(Arc::new(Constant("echo", "x".repeat(200))))
        .build()
        .unwrap();
    let (mut model, notices) = looping("echo", |n| json!({"fresh": n}));
    let report = runtime.run("final", &mut model).await;
    assert_eq!(report.steps.len(), 3);
    assert_eq!(report.calls().count(), 3);
    assert_eq!(report.answer, None);
    assert_eq!(
        report.reason,
        "max steps (3): the final turn asked for 1 tool call(s), which were not run"
    );
    let notices = notices.lock().unwrap();
    assert_eq!(notices.len(), 1, "the reminder was injected: {notices:?}");
    assert!(notices[0].contains("tools are no longer available"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steps_without_new_information_force_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = Runtime::builder(allowing("echo"), RuntimeConfig::new(dir.path()))
        .tool(Arc::new(Constant(
            "echo",
            "the same listing, again and again".repeat(4),
        )))
        .build()
        .unwrap();
    // Different arguments each time (no duplicate), the same output each time (no new information).
    let (mut model, notices) = looping("echo", |n| json!({"page": n}));
    let report = runtime.run("stale", &mut model).await;
    assert_eq!(report.steps.len(), 4, "one new step, then three stale ones");
    assert_eq!(report.limits.last().unwrap().kind, LimitKind::DiminishingReturns);
    assert!(
        report.reason.starts_with("diminishing returns (3 steps"),
        "{}",
        report.reason
    );
    assert!(notices.lock().unwrap()[0].contains("no new information"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_soft_limit_nudges_and_the_hard_limit_forces_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::new(dir.path());
    config.limits.token_soft_limit = 60;
    config.limits.token_hard_limit = 100;
    let runtime = Runtime::builder(allowing("echo"), config)
        .tool(Arc::new(Constant("echo", "y".repeat(240))))
        .build()
        .unwrap();
    let (mut model, notices) = looping("echo", |n| json!({"fresh": n}));
    let report = runtime.run("budget", &mut model).await;
    let kinds: Vec<LimitKind> = report.limits.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        vec![LimitKind::Nudge, LimitKind::Compaction, LimitKind::HardLimit],
        "two steps are both recent: nothing to compact, and the context stays at the hard limit"
    );
    assert!(report.limits[1].message.starts_with("could not compact"));
    assert_eq!(report.steps.len(), 2);
    assert!(
        report.reason.starts_with("token hard limit ("),
        "{}",
        report.reason
    );
    let notices = notices.lock().unwrap();
    assert_eq!(notices.len(), 2);
    assert!(notices[0].contains("summarise"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_run_stops_before_any_limit() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = Runtime::builder(allowing("echo"), RuntimeConfig::new(dir.path()))
        .tool(Arc::new(Constant("echo", "z".into())))
        .build()
        .unwrap();
    runtime.cancel("gone");
    let (mut model, _) = looping("echo", |_| json!({}));
    let report = runtime.run("gone", &mut model).await;
    assert!(report.cancelled);
    assert!(report.steps.is_empty() && report.limits.is_empty());
    assert_eq!(report.reason, "cancelled by the user");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn execute_counts_steps_by_their_number() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = Runtime::builder(allowing("echo"), RuntimeConfig::new(dir.path()))
        .tool(Arc::new(Constant("echo", "e".into())))
        .build()
        .unwrap();
    let call = || vec![ToolCall::new("c", "echo", json!({"n": 1}))];
    for _ in 0..4 {
        let reports = runtime.execute("parts", 1, call()).await;
        assert_eq!(
            reports[0].status,
            CallStatus::Ok,
            "one step given in parts is one step"
        );
    }
    assert_eq!(
        runtime.execute("parts", 2, call()).await[0].status,
        CallStatus::Ok
    );
    let third = runtime.execute("parts", 3, call()).await;
    assert_eq!(third[0].status, CallStatus::Denied);
    assert_eq!(third[0].verdict.provenance.layer, Layer::Limits);
}

/// Records the lifecycle events of a session, in order.
#[derive(Default)]
struct Lifecycle(Mutex<Vec<String>>);

impl agent_hooks::AgentHook for Lifecycle {
    fn name(&self) -> &str {
        "lifecycle"
    }
    fn on_step_complete<'a>(&'a self, ctx: &'a agent_hooks::StepContext) -> agent_hooks::HookFuture<'a, ()> {
        self.0.lock().unwrap().push(format!("step {}", ctx.step));
        Box::pin(std::future::ready(()))
    }
    fn on_pre_compact<'a>(&'a self, ctx: &'a agent_hooks::CompactContext) -> agent_hooks::HookFuture<'a, ()> {
        assert_eq!(ctx.trigger, "auto");
        assert_eq!(ctx.tokens_after, None);
        self.0.lock().unwrap().push(format!("pre {}", ctx.tokens_before));
        Box::pin(std::future::ready(()))
    }
    fn on_post_compact<'a>(
        &'a self,
        ctx: &'a agent_hooks::CompactContext,
    ) -> agent_hooks::HookFuture<'a, ()> {
        let after = ctx.tokens_after.unwrap();
        assert!(after < ctx.tokens_before);
        self.0.lock().unwrap().push(format!("post {after}"));
        Box::pin(std::future::ready(()))
    }
}

/// What a model saw at each turn: the steps of its history (with each call's id, arguments and result) and the
/// summaries it was given.
#[derive(Default)]
struct Seen {
    histories: Vec<Vec<(u32, String, Value, String)>>,
    summaries: Vec<String>,
}

/// A model calling `echo` with fresh arguments for `turns` turns (and `forbidden` at turn `forbidden_at`), then
/// answering.
struct Reader {
    turns: usize,
    done: usize,
    forbidden_at: usize,
    seen: Arc<Mutex<Seen>>,
}

impl Model for Reader {
    fn next_turn<'a>(&'a mut self, history: &'a [StepRecord]) -> ModelFuture<'a> {
        let steps = history
            .iter()
            .flat_map(|step| {
                step.calls.iter().map(|c| {
                    (
                        step.step,
                        c.call.id.clone(),
                        c.call.args.clone(),
                        c.output.content.clone(),
                    )
                })
            })
            .collect();
        self.seen.lock().unwrap().histories.push(steps);
        self.done += 1;
        if self.done > self.turns {
            return Box::pin(std::future::ready(ModelTurn::Answer("all read".into())));
        }
        let tool = if self.done == self.forbidden_at {
            "forbidden"
        } else {
            "echo"
        };
        let call = ToolCall::new(format!("c{}", self.done), tool, json!({"fresh": self.done}));
        Box::pin(std::future::ready(ModelTurn::Calls(vec![call])))
    }
    fn compacted(&mut self, summary: &str) {
        self.seen.lock().unwrap().summaries.push(summary.to_owned());
    }
    fn final_turn<'a>(&'a mut self, _history: &'a [StepRecord], reminder: &'a str) -> ModelFuture<'a> {
        assert!(reminder.contains("token budget is spent"));
        Box::pin(std::future::ready(ModelTurn::Answer("what I have".into())))
    }
}

fn compacting_runtime(
    soft: u64,
    hard: u64,
    output_chars: usize,
    audit: AuditLogHook,
) -> (Runtime, Arc<Lifecycle>) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::new(dir.path());
    config.limits.token_soft_limit = soft;
    config.limits.token_hard_limit = hard;
    config.limits.max_steps = 30;
    let mut settings = allowing("echo");
    settings.add_rule(Rule::parse("forbidden", Decision::Deny, Source::User).unwrap());
    let lifecycle = Arc::new(Lifecycle::default());
    let runtime = Runtime::builder(settings, config)
        .tool(Arc::new(Constant("echo", "r".repeat(output_chars))))
        .tool(Arc::new(Constant("forbidden", "never shown".into())))
        .hook(Arc::clone(&lifecycle) as Arc<dyn agent_hooks::AgentHook>)
        .audit(audit)
        .build()
        .unwrap();
    (runtime, lifecycle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_session_compacts_at_the_hard_limit_and_finishes() {
    let root = tempfile::tempdir().unwrap();
    let db = root.path().join("audit.db");
    let audit = AuditLogHook::open(&db).await.unwrap();
    // About 250 estimated tokens per step: the hard limit (2,000) is reached at the 8th step; two recent steps and
    // a short summary are far under the soft limit (1,500).
    let (runtime, lifecycle) = compacting_runtime(1_500, 2_000, 1_000, audit);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut model = Reader {
        turns: 14,
        done: 0,
        forbidden_at: 10,
        seen: Arc::clone(&seen),
    };
    let report = runtime.run("long", &mut model).await;

    assert_eq!(report.answer.as_deref(), Some("all read"));
    assert_eq!(report.reason, "completed");
    assert_eq!(report.steps.len(), 14, "the report keeps every step");
    let compactions: Vec<_> = report
        .limits
        .iter()
        .filter(|e| e.kind == LimitKind::Compaction)
        .collect();
    assert_eq!(compactions.len(), 2, "{:?}", report.limits);
    assert_eq!(compactions[0].step, 8);
    assert!(compactions[0].message.starts_with("compacted the context: "));
    assert!(
        compactions[0]
            .message
            .contains("6 step(s) summarised, 2 kept whole")
    );
    assert!(!report.limits.iter().any(|e| e.kind == LimitKind::HardLimit));

    // The hooks fire around each compaction, after the step that reached the limit.
    let events = lifecycle.0.lock().unwrap().clone();
    let at = events.iter().position(|e| e.starts_with("pre ")).unwrap();
    assert_eq!(events[at - 1], "step 8");
    assert!(events[at + 1].starts_with("post "), "{events:?}");
    assert_eq!(events[at + 2], "step 9");
    assert_eq!(events.iter().filter(|e| e.starts_with("pre ")).count(), 2);
    assert_eq!(events.iter().filter(|e| e.starts_with("post ")).count(), 2);

    let seen = std::mem::take(&mut *seen.lock().unwrap());
    // After the first compaction the model is shown the two recent steps whole, each result beside its call.
    let after = &seen.histories[8];
    let ids: Vec<&str> = after.iter().map(|(_, id, _, _)| id.as_str()).collect();
    assert_eq!(ids, ["c7", "c8"]);
    for history in &seen.histories {
        for (_, id, args, output) in history {
            assert_eq!(format!("c{}", args["fresh"]), *id);
            if id != "c10" {
                assert!(
                    output.ends_with(&format!(" #{}", args["fresh"])),
                    "{id}: {output}"
                );
            }
        }
    }
    assert_eq!(seen.summaries.len(), 2);
    for id in ["[c1]", "[c6]"] {
        assert!(seen.summaries[0].contains(id), "{}", seen.summaries[0]);
    }
    assert!(!seen.summaries[0].contains("[c7]"));
    assert!(seen.summaries[1].contains("[c1]") && seen.summaries[1].contains("[c10] forbidden"));

    // Compaction changes messages only: the deny rule still holds after it.
    let forbidden = report.calls().find(|c| c.call.id == "c10").unwrap();
    assert_eq!(forbidden.status, CallStatus::Denied);

    let rows = AuditLogHook::query(&db, &AuditFilter::default()).await.unwrap();
    let compaction_rows: Vec<_> = rows.iter().filter(|r| r.tool_name == "compaction").collect();
    assert_eq!(compaction_rows.len(), 2);
    assert_eq!(compaction_rows[0].status, AuditStatus::Ok);
    assert_eq!(compaction_rows[0].step, 8);
    assert_eq!(
        compaction_rows[0].decided_by.as_deref(),
        Some("runtime-limits/limit")
    );
    assert!(
        compaction_rows[0]
            .output_preview
            .starts_with("compacted the context")
    );
    assert_eq!(rows.last().unwrap().status, AuditStatus::SessionStop);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compactions_that_stay_over_the_soft_limit_trip_the_breaker_then_the_answer_is_forced() {
    let root = tempfile::tempdir().unwrap();
    let db = root.path().join("audit.db");
    let audit = AuditLogHook::open(&db).await.unwrap();
    // About 600 estimated tokens per step, and a soft limit (100) under the size of the summary alone: every
    // compaction fails even when it summarises every step, while it still brings the context under the hard limit
    // (2,000) and the session goes on.
    let (runtime, lifecycle) = compacting_runtime(100, 2_000, 2_400, audit);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut model = Reader {
        turns: 100,
        done: 0,
        forbidden_at: 0,
        seen: Arc::clone(&seen),
    };
    let report = runtime.run("tight", &mut model).await;

    let compactions: Vec<_> = report
        .limits
        .iter()
        .filter(|e| e.kind == LimitKind::Compaction)
        .collect();
    assert_eq!(compactions.len(), 3, "the default breaker opens after 3 failures");
    // Each compaction summarises every step (keeping even one whole leaves it over the soft limit); from the
    // summary alone, three steps of 600 tokens bring the context back to the hard limit.
    assert_eq!(compactions.iter().map(|e| e.step).collect::<Vec<_>>(), [4, 7, 10]);
    assert!(
        compactions.iter().all(|e| e.message.ends_with(", 0 kept whole")),
        "{compactions:?}"
    );
    assert!(
        compactions
            .iter()
            .all(|e| e.message.starts_with("could not compact"))
    );
    assert_eq!(report.limits.last().unwrap().kind, LimitKind::HardLimit);
    assert_eq!(report.steps.len(), 10, "forced right after the third failure");
    assert!(
        report.reason.starts_with("token hard limit ("),
        "{}",
        report.reason
    );
    assert!(
        report.reason.contains("the compaction circuit breaker is open"),
        "{}",
        report.reason
    );
    assert!(report.reason.ends_with("final answer without tools"));
    assert_eq!(report.answer.as_deref(), Some("what I have"));
    assert_eq!(
        lifecycle
            .0
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e.starts_with("pre "))
            .count(),
        3
    );
    let rows = AuditLogHook::query(&db, &AuditFilter::default()).await.unwrap();
    let failed = rows
        .iter()
        .filter(|r| r.tool_name == "compaction" && r.status == AuditStatus::Fail)
        .count();
    assert_eq!(failed, 3);
}
