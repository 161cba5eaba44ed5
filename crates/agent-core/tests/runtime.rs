//! The runtime through its public API: partitioning, cancellation, timeouts, hooks, approvals, audit and persistence.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_core::{
    ApprovalAnswer, ApprovalFuture, ApprovalRequest, Approver, CallReport, ChannelApprover, DecisionSource,
    Runtime, RuntimeConfig, ScriptedApprover,
};
use agent_hooks::{
    AgentHook, AuditFilter, AuditLogHook, AuditStatus, CallStatus, HookFuture, PostToolUseAction,
    PostToolUseContext, PreToolUseAction, PreToolUseContext,
};
use agent_rules::{Rule, Settings};
use agent_tool_traits::{
    DecidedBy, Decision, InterruptBehavior, Layer, Source, Tool, ToolCall, ToolContext, ToolFuture,
    ToolOutput,
};
use serde_json::{Value, json};

/// When each tool ran.
type RunLog = Arc<Mutex<Vec<(&'static str, Instant, Instant)>>>;

/// A tool that sleeps (how long it runs is what the tests of cancellation and concurrency measure), records when
/// it ran, and optionally fails.
struct Sleeper {
    name: &'static str,
    millis: u64,
    /// How many of its calls have started, for a test to wait on.
    started: Arc<AtomicUsize>,
    concurrent: bool,
    behavior: InterruptBehavior,
    fail: bool,
    abort_siblings: bool,
    log: RunLog,
}

impl Sleeper {
    fn new(name: &'static str, millis: u64, log: &RunLog) -> Self {
        Self {
            name,
            millis,
            started: Arc::default(),
            concurrent: true,
            behavior: InterruptBehavior::Cancel,
            fail: false,
            abort_siblings: false,
            log: Arc::clone(log),
        }
    }
}

impl Tool for Sleeper {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "sleeps"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn interrupt_behavior(&self) -> InterruptBehavior {
        self.behavior
    }
    fn is_concurrency_safe(&self, _args: &Value) -> bool {
        self.concurrent
    }
    fn causes_sibling_abort(&self) -> bool {
        self.abort_siblings
    }
    fn call<'a>(&'a self, _args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let started = Instant::now();
            self.started.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(self.millis)).await;
            self.log
                .lock()
                .unwrap()
                .push((self.name, started, Instant::now()));
            if self.fail {
                Ok(ToolOutput::error("failed on purpose"))
            } else {
                Ok(ToolOutput::ok("slept"))
            }
        })
    }
}

fn settings_allowing(names: &[&str]) -> Settings {
    let mut settings = Settings::new();
    for name in names {
        settings.add_rule(Rule::parse(name, Decision::Allow, Source::Project).unwrap());
    }
    settings
}

/// Waits until `done` holds, polling, and fails with `what` when 10 s pass first.
async fn wait_until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "{what} within 10 s");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn call(id: &str, tool: &str, args: Value) -> ToolCall {
    ToolCall::new(id, tool, args)
}

fn overlaps(a: (Instant, Instant), b: (Instant, Instant)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrency_safe_calls_overlap_and_the_others_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::default();
    let mut serial = Sleeper::new("serial", 150, &log);
    serial.concurrent = false;
    let runtime = Runtime::builder(
        settings_allowing(&["par", "serial"]),
        RuntimeConfig::new(dir.path()),
    )
    .tool(Arc::new(Sleeper::new("par", 150, &log)))
    .tool(Arc::new(serial))
    .build()
    .unwrap();
    let calls = vec![
        call("p1", "par", json!({})),
        call("p2", "par", json!({})),
        call("p3", "par", json!({})),
        call("s1", "serial", json!({})),
        call("s2", "serial", json!({})),
    ];
    let reports = runtime.execute("s", 1, calls).await;
    let ran: Vec<(Instant, Instant)> = reports.iter().map(|r| r.ran.unwrap()).collect();
    assert!(reports.iter().all(|r| r.status == CallStatus::Ok), "{reports:#?}");
    assert!(overlaps(ran[0], ran[1]) && overlaps(ran[1], ran[2]) && overlaps(ran[0], ran[2]));
    assert!(
        !overlaps(ran[2], ran[3]),
        "a serial call waits for the parallel batch before it"
    );
    assert!(!overlaps(ran[3], ran[4]), "serial calls run one at a time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancel_tools_stop_within_250_ms_and_block_tools_finish() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::default();
    let mut blocker = Sleeper::new("blocker", 600, &log);
    blocker.behavior = InterruptBehavior::Block;
    let slow = Sleeper::new("slow", 5_000, &log);
    let started = [Arc::clone(&slow.started), Arc::clone(&blocker.started)];
    let runtime = Arc::new(
        Runtime::builder(
            settings_allowing(&["slow", "blocker"]),
            RuntimeConfig::new(dir.path()),
        )
        .tool(Arc::new(slow))
        .tool(Arc::new(blocker))
        .build()
        .unwrap(),
    );
    // Cancelled through the shared registry, as an API would (the executor polls it), once both tools run.
    let registry = runtime.cancel_registry().clone();
    let cancel = async {
        wait_until("both tools started", || {
            started.iter().all(|count| count.load(Ordering::SeqCst) > 0)
        })
        .await;
        registry.cancel("s");
        Instant::now()
    };
    let calls = vec![call("c1", "slow", json!({})), call("c2", "blocker", json!({}))];
    let (reports, cancelled_at) = tokio::join!(runtime.execute("s", 1, calls), cancel);
    let slow = &reports[0];
    assert_eq!(slow.status, CallStatus::Fail);
    assert!(
        slow.output.content.contains("cancelled"),
        "{}",
        slow.output.content
    );
    let stopped_after = slow.ran.unwrap().1.saturating_duration_since(cancelled_at);
    assert!(
        stopped_after <= Duration::from_millis(250),
        "the Cancel tool stopped {stopped_after:?} after the cancel"
    );
    let blocker = &reports[1];
    assert_eq!(
        blocker.status,
        CallStatus::Ok,
        "a Block tool finishes: {blocker:?}"
    );
    assert!(blocker.elapsed() >= Duration::from_millis(590));
    // Nothing runs after the cancellation: the next call is blocked by the cancellation hook.
    let later = runtime.execute("s", 2, vec![call("c3", "slow", json!({}))]).await;
    assert_eq!(later[0].status, CallStatus::Denied);
    assert_eq!(later[0].verdict.provenance.step, Some(DecidedBy::HookBlock));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failing_tool_that_aborts_siblings_cancels_its_batch() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::default();
    let mut failing = Sleeper::new("failing", 50, &log);
    failing.fail = true;
    failing.abort_siblings = true;
    let mut blocker = Sleeper::new("blocker", 300, &log);
    blocker.behavior = InterruptBehavior::Block;
    let runtime = Runtime::builder(
        settings_allowing(&["failing", "slow", "blocker"]),
        RuntimeConfig::new(dir.path()),
    )
    .tool(Arc::new(failing))
    .tool(Arc::new(Sleeper::new("slow", 5_000, &log)))
    .tool(Arc::new(blocker))
    .build()
    .unwrap();
    let started = Instant::now();
    let reports = runtime
        .execute(
            "s",
            1,
            vec![
                call("a", "failing", json!({})),
                call("b", "slow", json!({})),
                call("c", "blocker", json!({})),
            ],
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(reports[0].status, CallStatus::Fail);
    assert!(
        reports[1].output.content.contains("sibling"),
        "{:?}",
        reports[1].output
    );
    assert_eq!(reports[2].status, CallStatus::Ok, "Block siblings finish");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tool_timeout_fails_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::default();
    let mut config = RuntimeConfig::new(dir.path());
    config.tool_timeout = Duration::from_millis(100);
    let runtime = Runtime::builder(settings_allowing(&["slow"]), config)
        .tool(Arc::new(Sleeper::new("slow", 5_000, &log)))
        .build()
        .unwrap();
    let reports = runtime.execute("s", 1, vec![call("c", "slow", json!({}))]).await;
    assert_eq!(reports[0].status, CallStatus::Fail);
    assert!(
        reports[0].output.content.contains("timed out"),
        "{:?}",
        reports[0].output
    );
    assert!(reports[0].elapsed() < Duration::from_secs(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_decision_past_the_decision_limit_is_a_deny() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::default();
    let mut config = RuntimeConfig::new(dir.path());
    config.decision_bound = agent_decide::DecisionBound::new(Duration::from_millis(1));
    let runtime = Runtime::builder(settings_allowing(&["Bash", "slow"]), config)
        .tool(Arc::new(Sleeper::new("Bash", 1, &log)))
        .tool(Arc::new(Sleeper::new("slow", 1, &log)))
        .build()
        .unwrap();
    // Thousands of commands take far longer than a millisecond to analyse.
    let long = vec!["echo ok"; 5_000].join(" && ");
    let reports = runtime
        .execute(
            "s",
            1,
            vec![
                call("c1", "Bash", json!({ "command": long })),
                call("c2", "slow", json!({})),
            ],
        )
        .await;
    assert_eq!(reports[0].status, CallStatus::Denied);
    assert!(
        reports[0].verdict.reason().contains("did not finish"),
        "{:?}",
        reports[0].verdict
    );
    // A decision that never reaches the shell parser is not bounded: it is made in place and the call runs.
    assert_eq!(reports[1].status, CallStatus::Ok, "{:?}", reports[1].verdict);
    assert_eq!(log.lock().unwrap().len(), 1);
}

/// Records the events it sees, and blocks calls of one tool.
struct Recorder {
    name: &'static str,
    events: Arc<Mutex<Vec<String>>>,
    block: Option<&'static str>,
}

impl AgentHook for Recorder {
    fn name(&self) -> &str {
        self.name
    }
    fn pre_tool_use<'a>(&'a self, ctx: &'a PreToolUseContext) -> HookFuture<'a, PreToolUseAction> {
        self.events
            .lock()
            .unwrap()
            .push(format!("pre {} {}", self.name, ctx.call.id));
        let action = match self.block {
            Some(tool) if ctx.call.name == tool => PreToolUseAction::Block {
                reason: "not today".into(),
            },
            _ => PreToolUseAction::Continue,
        };
        Box::pin(std::future::ready(action))
    }
    fn post_tool_use<'a>(&'a self, ctx: &'a PostToolUseContext) -> HookFuture<'a, PostToolUseAction> {
        self.events.lock().unwrap().push(format!(
            "post {} {} {}",
            self.name,
            ctx.call.id,
            ctx.status.as_str()
        ));
        Box::pin(std::future::ready(PostToolUseAction::Continue))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_fire_in_order_and_a_block_stops_the_call() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let first = Recorder {
        name: "first",
        events: Arc::clone(&events),
        block: Some("file_write"),
    };
    let second = Recorder {
        name: "second",
        events: Arc::clone(&events),
        block: None,
    };
    let runtime = Runtime::builder(Settings::new(), RuntimeConfig::new(dir.path()))
        .hook(Arc::new(first))
        .hook(Arc::new(second))
        .build()
        .unwrap();
    let reports = runtime
        .execute(
            "s",
            1,
            vec![
                call("r", "Read", json!({"file_path": "a.txt"})),
                call("w", "file_write", json!({"file_path": "b.txt", "content": "x"})),
            ],
        )
        .await;
    assert_eq!(reports[0].status, CallStatus::Ok);
    assert!(reports[0].output.content.contains("hello"));
    assert_eq!(reports[1].status, CallStatus::Denied);
    assert_eq!(reports[1].verdict.provenance.step, Some(DecidedBy::HookBlock));
    assert_eq!(reports[1].source, DecisionSource::Hook);
    assert!(!dir.path().join("b.txt").exists(), "a blocked call never runs");
    assert_eq!(
        *events.lock().unwrap(),
        vec![
            "pre first r",
            "pre second r",
            "pre first w", // the first Block ends the chain: `second` never sees `w` before it
            "post first r OK",
            "post second r OK",
            "post first w DENIED",
            "post second w DENIED",
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_rows_are_calls_plus_session_stop_also_when_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    let db = dir.path().join("audit.db");
    let audit = AuditLogHook::open(&db).await.unwrap();
    let log = Arc::default();
    let slow = Sleeper::new("slow", 5_000, &log);
    let slow_started = Arc::clone(&slow.started);
    let runtime = Runtime::builder(settings_allowing(&["slow"]), RuntimeConfig::new(dir.path()))
        .tool(Arc::new(slow))
        .audit(audit)
        .build()
        .unwrap();

    struct Turns(Vec<Vec<ToolCall>>);
    impl agent_core::Model for Turns {
        fn next_turn<'a>(
            &'a mut self,
            _history: &'a [agent_core::StepRecord],
        ) -> agent_core::ModelFuture<'a> {
            let turn = if self.0.is_empty() {
                agent_core::ModelTurn::Answer("done".into())
            } else {
                agent_core::ModelTurn::Calls(self.0.remove(0))
            };
            Box::pin(std::future::ready(turn))
        }
    }

    // A complete session: a read, a denied write outside the roots, an unknown tool.
    let mut model = Turns(vec![
        vec![
            call("1", "read_file", json!({"file_path": "a.txt"})),
            call("2", "Write", json!({"file_path": "/etc/x", "content": ""})),
        ],
        vec![call("3", "no_such_tool", json!({}))],
    ]);
    let report = runtime.run("complete", &mut model).await;
    assert_eq!(report.reason, "completed");
    assert_eq!(report.stop_error, None);
    let rows = AuditLogHook::query(
        &db,
        &AuditFilter {
            session_id: Some("complete".into()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(rows.len(), report.calls().count() + 1, "{rows:#?}");
    assert_eq!(
        rows.iter()
            .filter(|r| r.status == AuditStatus::SessionStop)
            .count(),
        1
    );
    assert_eq!(rows.iter().filter(|r| r.status == AuditStatus::Denied).count(), 2);

    // A cancelled session: the first call is cut, the rest of the step is blocked, no later step runs.
    let mut model = Turns(vec![
        vec![
            call("4", "slow", json!({})),
            call("5", "read_file", json!({"file_path": "a.txt"})),
        ],
        vec![call("6", "read_file", json!({"file_path": "a.txt"}))],
    ]);
    let registry = runtime.cancel_registry().clone();
    let cancel = async {
        wait_until("the slow call started", || {
            slow_started.load(Ordering::SeqCst) > 0
        })
        .await;
        registry.cancel("cancelled");
    };
    let (report, ()) = tokio::join!(runtime.run("cancelled", &mut model), cancel);
    assert!(report.cancelled);
    assert_eq!(report.steps.len(), 1);
    let rows = AuditLogHook::query(
        &db,
        &AuditFilter {
            session_id: Some("cancelled".into()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(rows.len(), report.calls().count() + 1, "{rows:#?}");
    assert_eq!(rows.last().unwrap().status, AuditStatus::SessionStop);
}

/// Answers every ask with one answer and remembers the requests.
struct Always(ApprovalAnswer, Arc<Mutex<Vec<ApprovalRequest>>>);

impl Approver for Always {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a, Option<ApprovalAnswer>> {
        self.1.lock().unwrap().push(request.clone());
        Box::pin(std::future::ready(Some(self.0)))
    }
}

fn first_decision(reports: &[CallReport]) -> (Decision, DecisionSource) {
    (reports[0].verdict.decision, reports[0].source)
}

/// In a subdirectory of a project, "allow always" saves its rule, written relative to the project, in the
/// project's settings: never beside the working directory, where an `.agent-guard/` would make the subdirectory a
/// project of its own. The saved rule then allows the call in a later session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_in_a_subdirectory_are_saved_for_the_project() {
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().canonicalize().unwrap().join("proj");
    let src = proj.join("src");
    std::fs::create_dir_all(proj.join(".git")).unwrap();
    std::fs::create_dir_all(&src).unwrap();
    let config = || {
        let mut config = RuntimeConfig::new(&src);
        config.project = Some(proj.clone());
        config.library_dir = Some(dir.path().join("library"));
        config
    };
    let write = |id: &str| call(id, "file_write", json!({"file_path": "b.txt", "content": "x"}));
    let requests = Arc::default();
    let runtime = Runtime::builder(Settings::new(), config())
        .approver(Arc::new(Always(
            ApprovalAnswer::AllowAlways,
            Arc::clone(&requests),
        )))
        .build()
        .unwrap();
    let reports = runtime.execute("s", 1, vec![write("1"), write("2")]).await;
    assert_eq!(
        first_decision(&reports),
        (Decision::Allow, DecisionSource::UserPermanent)
    );
    assert_eq!(
        reports[1].verdict.provenance.step,
        Some(DecidedBy::AllowRule),
        "the saved rule decides next, anchored at the project"
    );
    let request = requests.lock().unwrap()[0].clone();
    assert_eq!(request.rules, vec!["Edit(/src/b.txt)".to_owned()]);
    assert_eq!(request.settings_file, agent_core::local_settings_file(&proj));
    assert!(!src.join(".agent-guard").exists());
    assert_eq!(agent_core::answer_project(&src, None), proj);

    // A later session loads the project's settings and is allowed without asking.
    let settings = Settings::discover(&agent_rules::Discovery {
        cwd: proj.clone(),
        ..Default::default()
    })
    .unwrap();
    let runtime = Runtime::builder(settings, config()).build().unwrap();
    let reports = runtime.execute("s2", 1, vec![write("3")]).await;
    assert_eq!(
        reports[0].verdict.decision,
        Decision::Allow,
        "{:?}",
        reports[0].verdict
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_once_always_never_and_nobody() {
    let dir = tempfile::tempdir().unwrap();
    let write = |id: &str, file: &str| call(id, "file_write", json!({"file_path": file, "content": "x"}));

    // Headless: the ask is denied, nothing is written.
    let runtime = Runtime::builder(Settings::new(), RuntimeConfig::new(dir.path()))
        .build()
        .unwrap();
    let reports = runtime.execute("s", 1, vec![write("1", "a.txt")]).await;
    assert_eq!(
        first_decision(&reports),
        (Decision::Deny, DecisionSource::UserReject)
    );
    assert_eq!(reports[0].verdict.provenance.step, Some(DecidedBy::NoPrompt));
    assert!(!dir.path().join("a.txt").exists());

    // Allow once: runs, and the narrow rule holds for the session only.
    let requests = Arc::default();
    let runtime = Runtime::builder(Settings::new(), RuntimeConfig::new(dir.path()))
        .approver(Arc::new(Always(ApprovalAnswer::AllowOnce, Arc::clone(&requests))))
        .build()
        .unwrap();
    let reports = runtime
        .execute("s", 1, vec![write("2", "a.txt"), write("3", "a.txt")])
        .await;
    assert_eq!(
        first_decision(&reports),
        (Decision::Allow, DecisionSource::UserTemporary)
    );
    assert_eq!(
        reports[1].verdict.provenance.step,
        Some(DecidedBy::AllowRule),
        "the session rule decides next"
    );
    assert_eq!(requests.lock().unwrap().len(), 1);
    assert_eq!(requests.lock().unwrap()[0].rules, vec!["Edit(/a.txt)".to_owned()]);
    assert!(!agent_core::local_settings_file(dir.path()).exists());

    // Allow always: the rule is saved in the project's local settings.
    let runtime = Runtime::builder(Settings::new(), RuntimeConfig::new(dir.path()))
        .approver(Arc::new(Always(ApprovalAnswer::AllowAlways, Arc::default())))
        .build()
        .unwrap();
    let reports = runtime
        .execute(
            "s",
            1,
            // Another system changed: an ask whatever the sandbox contains.
            vec![call("4", "Bash", json!({"command": "git push origin wip"}))],
        )
        .await;
    assert_eq!(
        first_decision(&reports),
        (Decision::Allow, DecisionSource::UserPermanent)
    );
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(agent_core::local_settings_file(dir.path())).unwrap())
            .unwrap();
    assert_eq!(saved["permissions"]["allow"], json!(["Bash(git push:*)"]));

    // Never a whole interpreter: an inline script is saved as its exact command line only.
    let requests = Arc::default();
    let runtime = Runtime::builder(Settings::new(), RuntimeConfig::new(dir.path()))
        .approver(Arc::new(Always(ApprovalAnswer::Deny, Arc::clone(&requests))))
        .build()
        .unwrap();
    let _ = runtime
        .execute(
            "s",
            1,
            vec![call("5", "Bash", json!({"command": "python3 -c print(1)"}))],
        )
        .await;
    let rules = requests.lock().unwrap()[0].rules.clone();
    assert!(
        rules
            .iter()
            .all(|r| !r.ends_with(":*)") || !r.starts_with("Bash(python")),
        "{rules:?}"
    );

    // Don't ask again: denied now and later in the session without asking.
    let requests = Arc::default();
    let runtime = Runtime::builder(Settings::new(), RuntimeConfig::new(dir.path()))
        .approver(Arc::new(Always(
            ApprovalAnswer::DontAskAgain,
            Arc::clone(&requests),
        )))
        .build()
        .unwrap();
    let reports = runtime
        .execute("s", 1, vec![write("6", "b.txt"), write("7", "b.txt")])
        .await;
    assert_eq!(
        first_decision(&reports),
        (Decision::Deny, DecisionSource::UserReject)
    );
    assert_eq!(reports[1].verdict.provenance.step, Some(DecidedBy::DenyRule));
    assert_eq!(requests.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_ask_times_out_as_deny_and_a_channel_approver_answers() {
    let dir = tempfile::tempdir().unwrap();
    let (approver, mut asks) = ChannelApprover::new(4);
    let mut config = RuntimeConfig::new(dir.path());
    config.approval_timeout = Duration::from_millis(200);
    let runtime = Runtime::builder(Settings::new(), config)
        .approver(Arc::new(approver))
        .build()
        .unwrap();
    let write = |id: &str| call(id, "file_write", json!({"file_path": "c.txt", "content": "x"}));
    // Nobody reads the channel: the ask times out.
    let started = Instant::now();
    let reports = runtime.execute("s", 1, vec![write("1")]).await;
    assert_eq!(reports[0].verdict.decision, Decision::Deny);
    assert!(reports[0].verdict.reason().contains("no answer within"));
    assert!(started.elapsed() < Duration::from_secs(2));
    let _stale = asks.try_recv();
    // Someone answers.
    let answering = tokio::spawn(async move {
        let pending = asks.recv().await.unwrap();
        assert_eq!(pending.request.call.id, "2");
        pending.respond(ApprovalAnswer::AllowOnce);
    });
    let reports = runtime.execute("s", 2, vec![write("2")]).await;
    answering.await.unwrap();
    assert_eq!(reports[0].status, CallStatus::Ok);
    assert_eq!(std::fs::read_to_string(dir.path().join("c.txt")).unwrap(), "x");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_context_denies_asks_and_ask_user_fails() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::new(dir.path());
    config.silent = true;
    let approver = ScriptedApprover::new(
        [("1".to_owned(), ApprovalAnswer::AllowOnce)]
            .into_iter()
            .collect(),
        vec!["yes".to_owned()],
    );
    let runtime = Runtime::builder(Settings::new(), config)
        .approver(Arc::new(approver))
        .build()
        .unwrap();
    let reports = runtime
        .execute(
            "s",
            1,
            vec![
                call("1", "file_write", json!({"file_path": "d.txt", "content": "x"})),
                call("2", "ask_user", json!({"question": "ok?"})),
            ],
        )
        .await;
    assert_eq!(
        reports[0].verdict.decision,
        Decision::Deny,
        "no user in a silent context"
    );
    assert_eq!(reports[1].status, CallStatus::Fail);
    assert!(
        reports[1].output.content.contains("silent"),
        "{:?}",
        reports[1].output
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_results_are_persisted_and_replaced_by_a_stub() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.txt"), "line of text\n".repeat(5_000)).unwrap();
    let mut config = RuntimeConfig::new(dir.path());
    config.max_output_chars = 1_000;
    let runtime = Runtime::builder(Settings::new(), config).build().unwrap();
    let reports = runtime
        .execute(
            "s",
            1,
            vec![call("big-1", "read_file", json!({"file_path": "big.txt"}))],
        )
        .await;
    let path = reports[0].persisted.clone().expect("persisted");
    assert_eq!(
        path,
        dir.path().join(".agent-guard/library/tool-results/big-1.txt")
    );
    assert!(std::fs::read_to_string(&path).unwrap().chars().count() > 20_000);
    assert!(
        reports[0].output.content.chars().count() < 1_300,
        "the model sees a stub"
    );
    // The library dir is a root: the model can read the full result back.
    let back = runtime
        .execute(
            "s",
            2,
            vec![call(
                "r",
                "read_file",
                json!({"file_path": path.display().to_string(), "limit": 1}),
            )],
        )
        .await;
    assert_eq!(back[0].verdict.decision, Decision::Allow, "{:?}", back[0].verdict);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutated_input_is_decided_again() {
    struct Redirect;
    impl AgentHook for Redirect {
        fn name(&self) -> &str {
            "redirect"
        }
        fn pre_tool_use<'a>(&'a self, _ctx: &'a PreToolUseContext) -> HookFuture<'a, PreToolUseAction> {
            Box::pin(std::future::ready(PreToolUseAction::MutateInput {
                args: json!({"file_path": "/etc/passwd"}),
                context: Some("redirected".into()),
            }))
        }
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let runtime = Runtime::builder(Settings::new(), RuntimeConfig::new(dir.path()))
        .hook(Arc::new(Redirect))
        .build()
        .unwrap();
    let reports = runtime
        .execute(
            "s",
            1,
            vec![call("1", "read_file", json!({"file_path": "a.txt"}))],
        )
        .await;
    assert_eq!(reports[0].call.args, json!({"file_path": "/etc/passwd"}));
    assert_eq!(
        reports[0].verdict.decision,
        Decision::Deny,
        "the rewritten path is outside the roots"
    );
    assert_eq!(reports[0].verdict.provenance.layer, Layer::Sandbox);
    assert_eq!(reports[0].contexts, vec!["redirected".to_owned()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_asks_go_to_permission_request_hooks_then_deny() {
    struct Answer(bool);
    impl AgentHook for Answer {
        fn name(&self) -> &str {
            "permission"
        }
        fn on_permission_request<'a>(
            &'a self,
            ctx: &'a PreToolUseContext,
            _message: &'a str,
        ) -> HookFuture<'a, Option<agent_hooks::PermissionAnswer>> {
            let answer = (ctx.call.args["file_path"] == "ok.txt").then(|| {
                if self.0 {
                    agent_hooks::PermissionAnswer::Allow {
                        reason: "fine".into(),
                    }
                } else {
                    agent_hooks::PermissionAnswer::Deny { reason: "no".into() }
                }
            });
            Box::pin(std::future::ready(answer))
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let write = |id: &str, file: &str| call(id, "file_write", json!({"file_path": file, "content": "x"}));
    let runtime = Runtime::builder(Settings::new(), RuntimeConfig::new(dir.path()))
        .hook(Arc::new(Answer(true)))
        .build()
        .unwrap();
    let reports = runtime
        .execute("s", 1, vec![write("1", "ok.txt"), write("2", "other.txt")])
        .await;
    assert_eq!(first_decision(&reports), (Decision::Allow, DecisionSource::Hook));
    assert_eq!(reports[0].verdict.provenance.layer, Layer::Hooks);
    assert_eq!(reports[0].status, CallStatus::Ok);
    assert_eq!(
        reports[1].verdict.decision,
        Decision::Deny,
        "no hook answered: deny"
    );
    assert_eq!(reports[1].verdict.provenance.step, Some(DecidedBy::NoPrompt));
    let runtime = Runtime::builder(Settings::new(), RuntimeConfig::new(dir.path()))
        .hook(Arc::new(Answer(false)))
        .build()
        .unwrap();
    let reports = runtime.execute("s", 1, vec![write("3", "ok.txt")]).await;
    assert_eq!(first_decision(&reports), (Decision::Deny, DecisionSource::Hook));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_skips_what_the_rules_deny_and_asks_before_reaching_a_denied_directory() {
    let dir = tempfile::tempdir().unwrap();
    for (file, text) in [
        ("src/lib.rs", "fn greet() {}\n"),
        ("secrets/key.txt", "greet token\n"),
        (".private/notes.txt", "greet private\n"),
    ] {
        std::fs::create_dir_all(dir.path().join(file).parent().unwrap()).unwrap();
        std::fs::write(dir.path().join(file), text).unwrap();
    }
    let mut settings = Settings::new();
    for text in ["Read(./secrets/**)", "Read(./.private/**)"] {
        settings.add_rule(Rule::parse(text, Decision::Deny, Source::Project).unwrap());
    }
    let runtime = Runtime::builder(settings, RuntimeConfig::new(dir.path()))
        .build()
        .unwrap();
    let reports = runtime
        .execute(
            "s",
            1,
            vec![
                call("whole", "grep_files", json!({"pattern": "greet"})),
                call("src", "grep_files", json!({"pattern": "greet", "path": "src"})),
            ],
        )
        .await;
    // The search of the whole project would reach `secrets/`: it asks, and nobody is there to answer.
    assert_eq!(reports[0].status, CallStatus::Denied);
    let why = reports[0].verdict.reason();
    assert!(
        why.contains("the call would have asked") && why.contains("Read(./secrets/**)"),
        "{why}"
    );
    assert_eq!(reports[1].verdict.decision, Decision::Allow);
    assert!(
        reports[1].output.content.contains("fn greet"),
        "{:?}",
        reports[1].output
    );

    // Only a hidden denied directory left: a coding agent's search tool reads hidden files too, so the search
    // still asks. Answered, it runs, and the tool itself leaves out what a rule denies.
    std::fs::remove_dir_all(dir.path().join("secrets")).unwrap();
    let reports = runtime
        .execute(
            "s",
            2,
            vec![call("again", "grep_files", json!({"pattern": "greet"}))],
        )
        .await;
    assert_eq!(reports[0].status, CallStatus::Denied);
    assert!(reports[0].verdict.reason().contains("Read(./.private/**)"));
    struct AllowSearch;
    impl AgentHook for AllowSearch {
        fn name(&self) -> &str {
            "permission"
        }
        fn on_permission_request<'a>(
            &'a self,
            _ctx: &'a PreToolUseContext,
            _message: &'a str,
        ) -> HookFuture<'a, Option<agent_hooks::PermissionAnswer>> {
            Box::pin(std::future::ready(Some(agent_hooks::PermissionAnswer::Allow {
                reason: "searching is fine".into(),
            })))
        }
    }
    let mut settings = Settings::new();
    settings.add_rule(Rule::parse("Read(./.private/**)", Decision::Deny, Source::Project).unwrap());
    let runtime = Runtime::builder(settings, RuntimeConfig::new(dir.path()))
        .hook(Arc::new(AllowSearch))
        .build()
        .unwrap();
    let reports = runtime
        .execute(
            "s",
            3,
            vec![call("answered", "grep_files", json!({"pattern": "greet"}))],
        )
        .await;
    assert_eq!(
        reports[0].verdict.decision,
        Decision::Allow,
        "{:?}",
        reports[0].verdict
    );
    let found = &reports[0].output.content;
    assert!(found.contains("fn greet"), "{found}");
    assert!(!found.contains("private"), "{found}");
}
