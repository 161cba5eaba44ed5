//! The runtime runs an allowed shell call under the kernel sandbox of its decision: code the repository controls
//! that an allowed read-only command runs anyway has the read-only profile's power and no more.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use agent_core::{Runtime, RuntimeConfig};
use agent_hooks::CallStatus;
use agent_rules::Settings;
use agent_tool_traits::{Confinement, Decision, ToolCall};
use serde_json::json;

#[path = "../../../tests/support/need.rs"]
mod need;

/// Whether the kernel sandbox can be tested here; elsewhere the test says it is skipped, or fails under
/// `AGENT_GUARD_REQUIRE_SANDBOX=1`.
fn sandbox_enforced() -> bool {
    need::SANDBOX.met(agent_os_sandbox::KernelSupport::enforcement_missing())
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let output = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@e"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_git_status_runs_the_repositorys_hook_inside_the_read_only_sandbox() {
    if !sandbox_enforced() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(project.join("README"), "hello\n").unwrap();
    std::fs::write(project.join(".env"), "RUNTIME-HOOK-SECRET").unwrap();
    git(&project, &["init", "-q"]);
    git(&project, &["add", "README"]);
    git(&project, &["commit", "-qm", "first"]);
    // A repository that ships a hook: git runs `core.fsmonitor` on `git status`.
    let marker = outside.join("pwned");
    let hook = format!("cat .env > {0}; echo pwned >> {0}; cat .env", marker.display());
    git(&project, &["config", "core.fsmonitor", &hook]);
    let runtime = Runtime::builder(Settings::new(), RuntimeConfig::new(&project))
        .build()
        .unwrap();
    let reports = runtime
        .execute(
            "s",
            1,
            vec![ToolCall::new(
                "c1",
                "run_bash",
                json!({"command": "git status --short"}),
            )],
        )
        .await;
    let report = &reports[0];
    assert_eq!(report.verdict.decision, Decision::Allow, "{report:#?}");
    assert_eq!(report.confinement, Some(Confinement::READ_ONLY), "{report:#?}");
    assert_eq!(report.status, CallStatus::Ok, "{report:#?}");
    assert!(!marker.exists(), "the hook wrote outside the project");
    assert!(
        !report.output.content.contains("RUNTIME-HOOK-SECRET"),
        "{}",
        report.output.content
    );
}

/// A mode's blanket allow never opens the network; an allow of the very line does, for commands that fetch.
#[test]
fn only_a_deliberate_allow_opens_the_network() {
    use agent_decide::{Guard, GuardOptions};
    use agent_rules::{PermissionMode, Rule};
    use agent_tool_traits::{SandboxProfile, Source};
    if !sandbox_enforced() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let confinement = |settings: &Settings, mode: Option<PermissionMode>, line: &str| {
        let guard = Guard::new(
            settings,
            &GuardOptions {
                cwd: dir.path().to_path_buf(),
                mode: mode.map(|m| (m, Source::CliArg)),
                ..Default::default()
            },
        )
        .unwrap();
        guard.decide("Bash", &json!({ "command": line })).confinement
    };
    let bypass = Some(PermissionMode::BypassPermissions);
    let by_mode = confinement(&Settings::new(), bypass, "npm install").unwrap();
    assert_eq!(by_mode.profile, SandboxProfile::WorkspaceWrite);
    assert!(!by_mode.network, "bypassPermissions opened the network");
    let mut settings = Settings::new();
    settings.add_rule(Rule::parse("Bash(npm install)", Decision::Allow, Source::Project).unwrap());
    let by_rule = confinement(&settings, None, "npm install").unwrap();
    assert!(by_rule.network, "an allow rule for `npm install` keeps its fetch");
    let read_only = confinement(&settings, None, "git log").unwrap();
    assert_eq!(read_only, Confinement::READ_ONLY);
}

/// A `workspace-write` run of the runtime is recorded like one of `agent-guard sandbox`: its output ends with the
/// undo id, and the store takes it back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_write_run_is_recorded_and_taken_back() {
    if !sandbox_enforced() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let home = dir.path().join("home");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(project.join("src/lib.rs"), "pub fn kept() {}\n").unwrap();
    git(&project, &["init", "-q"]);
    let mut settings = Settings::new();
    settings.add_rule(
        agent_rules::Rule::parse(
            "Bash(rm -rf src)",
            Decision::Allow,
            agent_tool_traits::Source::User,
        )
        .unwrap(),
    );
    let mut config = RuntimeConfig::new(&project);
    config.home = Some(home.clone());
    let runtime = Runtime::builder(settings, config).build().unwrap();
    let reports = runtime
        .execute(
            "s",
            1,
            vec![ToolCall::new("c1", "run_bash", json!({"command": "rm -rf src"}))],
        )
        .await;
    let report = &reports[0];
    assert_eq!(
        report.confinement.map(|c| c.profile),
        Some(agent_tool_traits::SandboxProfile::WorkspaceWrite)
    );
    assert!(!project.join("src").exists());
    assert!(
        report
            .output
            .content
            .contains("undo id 1: the command changed 1 file"),
        "{}",
        report.output.content
    );
    let undo = agent_undo::UndoSettings::from_env(Some(&project), Some(&home));
    let store = agent_undo::Store::existing(&project, &undo).unwrap().unwrap();
    assert!(
        store
            .undo(agent_undo::UndoRequest::default(), &|_| None)
            .unwrap()
            .applied
    );
    assert_eq!(
        std::fs::read_to_string(project.join("src/lib.rs")).unwrap(),
        "pub fn kept() {}\n"
    );
}

/// The runtime's sandboxed runs carry the decision's git writes: a line that runs git to write the repository
/// commits (where namespaces let `.git` be writable at all), and a build the rules allow, whose `Makefile` deletes
/// `HEAD` and the objects, runs with `.git` read-only and leaves the history whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_line_that_runs_git_writes_the_history() {
    if !sandbox_enforced() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(project.join("README"), "hello\n").unwrap();
    std::fs::write(
        project.join("Makefile"),
        "all:\n\t-git update-ref -d HEAD\n\trm -rf .git/objects\n",
    )
    .unwrap();
    git(&project, &["init", "-q"]);
    git(&project, &["add", "-A"]);
    git(&project, &["commit", "-qm", "first"]);
    let head = |project: &std::path::Path| {
        let output = std::process::Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(project)
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let before = head(&project);
    let mut settings = Settings::new();
    for rule in ["Bash(git add:*)", "Bash(git commit:*)", "Bash(make:*)"] {
        settings.add_rule(
            agent_rules::Rule::parse(rule, Decision::Allow, agent_tool_traits::Source::User).unwrap(),
        );
    }
    let mut config = RuntimeConfig::new(&project);
    config.home = Some(home);
    let runtime = Runtime::builder(settings, config).build().unwrap();
    let reports = runtime
        .execute(
            "s",
            1,
            vec![ToolCall::new("c1", "run_bash", json!({"command": "make"}))],
        )
        .await;
    let report = &reports[0];
    assert_eq!(report.verdict.decision, Decision::Allow, "{report:#?}");
    assert_eq!(
        report.confinement.map(|c| c.git_writes),
        Some(false),
        "{report:#?}"
    );
    assert!(report.output.is_error, "{}", report.output.content);
    assert_eq!(head(&project), before, "{}", report.output.content);
    assert!(project.join(".git/objects").is_dir());

    std::fs::write(project.join("README"), "changed\n").unwrap();
    let line = "git add -A && git -c user.name=t -c user.email=t@e commit -qm second";
    let reports = runtime
        .execute(
            "s",
            2,
            vec![ToolCall::new("c2", "run_bash", json!({ "command": line }))],
        )
        .await;
    let report = &reports[0];
    assert_eq!(report.verdict.decision, Decision::Allow, "{report:#?}");
    assert_eq!(
        report.confinement.map(|c| c.git_writes),
        Some(true),
        "{report:#?}"
    );
    let namespaces =
        agent_os_sandbox::KernelSupport::probe().namespaces != agent_os_sandbox::Namespaces::Unavailable;
    if namespaces {
        assert!(!report.output.is_error, "{}", report.output.content);
        assert_ne!(head(&project), before, "{}", report.output.content);
    } else {
        eprintln!(
            "skipped: committing in the sandbox needs namespaces (Landlock alone keeps `.git` read-only)"
        );
    }
}
