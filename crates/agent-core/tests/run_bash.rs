//! `run_bash` containment through its public API: the timeout kills the whole group, output stays bounded, a
//! fork bomb is stopped.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::time::{Duration, Instant};

use poll::wait_until;

use agent_decide::{Guard, GuardOptions};

use agent_core::{BashLimits, GuardHandle, RunBashTool};
use agent_rules::Settings;
use agent_tool_traits::{Tool, ToolContext, ToolError};
use serde_json::json;

#[path = "../../../tests/support/need.rs"]
mod need;
#[path = "../../../tests/support/poll.rs"]
mod poll;

fn tool(dir: &std::path::Path, limits: BashLimits) -> RunBashTool {
    let guard = Guard::new(
        &Settings::new(),
        &GuardOptions {
            cwd: dir.to_path_buf(),
            ..Default::default()
        },
    )
    .unwrap();
    RunBashTool::new(GuardHandle::new(guard), limits)
}

/// Live (not zombie) processes whose process group is `group`.
fn group_members(group: i32) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            let Some((_, rest)) = stat.rsplit_once(')') else {
                return false;
            };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            fields.first() != Some(&"Z") && fields.get(2).and_then(|f| f.parse::<i32>().ok()) == Some(group)
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_command_leaves_no_process_of_its_group_alive() {
    let dir = tempfile::tempdir().unwrap();
    let bash = tool(dir.path(), BashLimits::default());
    let started = Instant::now();
    // The shell prints its pid (the group's id), starts background sleepers and waits past the timeout.
    let args =
        json!({"command": "echo $$; sleep 30 & sleep 30 & (sleep 30; echo never) & wait", "timeout_secs": 1});
    let output = bash.call(args, &ToolContext::default()).await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(
        output.is_error && output.content.contains("timed out"),
        "{}",
        output.content
    );
    let group: i32 = output.content.lines().next().unwrap().trim().parse().unwrap();
    assert_eq!(
        group_members(group),
        0,
        "every process of group {group} was killed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_jobs_do_not_outlive_a_finished_command() {
    let dir = tempfile::tempdir().unwrap();
    let bash = tool(dir.path(), BashLimits::default());
    let started = Instant::now();
    let output = bash
        .call(json!({"command": "echo $$; sleep 30 &"}), &ToolContext::default())
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the call does not wait for its background job"
    );
    assert!(!output.is_error, "{}", output.content);
    let group: i32 = output.content.lines().next().unwrap().trim().parse().unwrap();
    assert_eq!(group_members(group), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_output_within_the_budget_is_read_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let bash = tool(dir.path(), BashLimits::default());
    let output = bash
        .call(
            json!({"command": "seq 1 200000; echo done >&2; exit 3"}),
            &ToolContext::default(),
        )
        .await
        .unwrap();
    assert!(
        output.is_error && output.content.ends_with("[exit code 3]"),
        "{}",
        output.content
    );
    assert!(output.content.starts_with("1\n2\n3\n"));
    assert!(output.content.contains("not shown"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_bomb_is_contained() {
    let dir = tempfile::tempdir().unwrap();
    let limits = BashLimits {
        max_processes: 64,
        ..BashLimits::default()
    };
    let bash = tool(dir.path(), limits);
    let started = Instant::now();
    let output = bash
        .call(
            json!({"command": "echo $$; bomb() { bomb | bomb & }; bomb; sleep 30", "timeout_secs": 20}),
            &ToolContext::default(),
        )
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(
        output.content.contains("started more than 64 processes"),
        "{}",
        output.content
    );
    let group: i32 = output.content.lines().next().unwrap().trim().parse().unwrap();
    wait_until(Duration::from_secs(5), "processes of the bomb are left", || {
        group_members(group) == 0
    });
}

/// Why `run_bash` puts no command in a pids cgroup here, or `None` when it does: as root, where a pids controller
/// is writable (anyone else is bounded by `RLIMIT_NPROC` instead).
fn no_pids_cgroup() -> Option<&'static str> {
    if !nix::unistd::geteuid().is_root() {
        Some("the tests do not run as root, and only root's commands get a pids cgroup")
    } else if !agent_os_sandbox::PidsCgroup::available() {
        Some("this machine has no writable pids controller")
    } else {
        None
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_leaves_the_group_is_still_killed_under_a_cgroup() {
    if let Some(why) = no_pids_cgroup() {
        // Without a cgroup only the process group is reachable: a `setsid` escapee is documented, not contained.
        // No switch requires this test: `sandbox --probe` does not say whether a pids cgroup can be made where a
        // PID namespace bounds the processes instead.
        need::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bash = tool(dir.path(), BashLimits::default());
    let marker = format!("{}.{}", 40 + std::process::id() % 50, std::process::id() % 1000);
    let output = bash
        .call(
            // The line waits until the escapee runs `sleep`, so that a check after the call cannot miss it.
            json!({"command": format!(
                "setsid sleep {marker} & until grep -q '^sleep' /proc/$!/cmdline 2>/dev/null; do sleep 0.01; done; \
                 echo started"
            )}),
            &ToolContext::default(),
        )
        .await
        .unwrap();
    assert!(output.content.contains("started"), "{}", output.content);
    let alive = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(Result::ok)
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .any(|cmdline| {
                String::from_utf8_lossy(&cmdline).replace('\0', " ").trim() == format!("sleep {marker}")
            })
    };
    wait_until(
        Duration::from_secs(5),
        "the setsid child escaped its cgroup",
        || !alive(),
    );
}

/// Whether the kernel sandbox can be tested here: the kernel enforces it, and the guard then gives a shell call a
/// confinement. Elsewhere the test says it is skipped, or fails under `AGENT_GUARD_REQUIRE_SANDBOX=1`.
fn sandbox_enforced() -> bool {
    let missing = agent_os_sandbox::KernelSupport::enforcement_missing();
    let dir = tempfile::tempdir().unwrap();
    let guard = Guard::new(
        &Settings::new(),
        &GuardOptions {
            cwd: dir.path().to_path_buf(),
            ..Default::default()
        },
    )
    .unwrap();
    let confined = guard
        .decide("Bash", &json!({"command": "ls"}))
        .confinement
        .is_some();
    assert_eq!(
        confined,
        missing.is_none(),
        "the guard confines a shell call exactly where the kernel enforces the sandbox ({missing:?})"
    );
    need::SANDBOX.met(missing)
}

/// A project with a secret, a home with a credential, and a file outside both.
fn planted() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(project.join(".env"), "RUNTIME-DOTENV-SECRET").unwrap();
    std::fs::write(project.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    std::fs::write(project.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(outside.join("notes.txt"), "RUNTIME-OUTSIDE-SECRET").unwrap();
    (dir, project, outside)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_call_runs_under_the_read_only_sandbox() {
    if !sandbox_enforced() {
        return;
    }
    let (_dir, project, outside) = planted();
    let bash = tool(&project, BashLimits::default());
    let ctx = ToolContext {
        confinement: Some(agent_tool_traits::Confinement::READ_ONLY),
        ..ToolContext::default()
    };
    let line = format!(
        "cat src/lib.rs; cat .env; cat {0}/notes.txt; echo x > src/new.rs; echo y > {0}/made; env",
        outside.display()
    );
    let output = bash.call(json!({ "command": line }), &ctx).await.unwrap();
    assert!(output.content.contains("pub fn f"), "{}", output.content);
    for secret in ["RUNTIME-DOTENV-SECRET", "RUNTIME-OUTSIDE-SECRET"] {
        assert!(!output.content.contains(secret), "{}", output.content);
    }
    assert!(!project.join("src/new.rs").exists());
    assert!(!outside.join("made").exists());
    // Without a confinement the same tool writes (the analysis decided that such a call may).
    let output = bash
        .call(json!({"command": "echo x > src/new.rs"}), &ToolContext::default())
        .await
        .unwrap();
    assert!(!output.is_error, "{}", output.content);
    assert!(project.join("src/new.rs").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_write_call_writes_the_project_but_not_git() {
    if !sandbox_enforced() {
        return;
    }
    let (_dir, project, _outside) = planted();
    let bash = tool(&project, BashLimits::default());
    let ctx = ToolContext {
        confinement: Some(agent_tool_traits::Confinement {
            profile: agent_tool_traits::SandboxProfile::WorkspaceWrite,
            network: false,
            git_writes: false,
            undo: false,
            background: false,
        }),
        ..ToolContext::default()
    };
    let output = bash
        .call(
            json!({"command": "echo 'fn g() {}' > src/new.rs; echo evil >> .git/config; mkdir -p .claude && echo '{}' > .claude/settings.json; echo done"}),
            &ctx,
        )
        .await
        .unwrap();
    assert!(output.content.contains("done"), "{}", output.content);
    assert_eq!(
        std::fs::read_to_string(project.join("src/new.rs")).unwrap(),
        "fn g() {}\n"
    );
    assert_eq!(
        std::fs::read_to_string(project.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!project.join(".claude").exists(), "{}", output.content);
    assert!(
        output.content.contains("removed what the command created"),
        "{}",
        output.content
    );
}

/// A call whose allow counted on the snapshots holding the ignored data at a place is not run when the snapshot
/// before it left that data out: it grew past the bounds on ignored data after the decision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_counting_on_held_ignored_data_is_not_run_once_the_data_outgrew_the_snapshots() {
    if !sandbox_enforced() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap().join("project");
    std::fs::create_dir_all(project.join("data")).unwrap();
    std::fs::write(project.join(".gitignore"), "/data/\n").unwrap();
    std::fs::write(project.join("data/users.csv"), "id,name\n").unwrap();
    let status = std::process::Command::new("git")
        .args(["init", "-q", "."])
        .current_dir(&project)
        .status()
        .unwrap();
    assert!(status.success());
    let blob = std::fs::File::create(project.join("data/blob.bin")).unwrap();
    blob.set_len(17 << 20).unwrap();
    let bash = tool(&project, BashLimits::default());
    let ctx = ToolContext {
        confinement: Some(agent_tool_traits::Confinement {
            profile: agent_tool_traits::SandboxProfile::WorkspaceWrite,
            network: false,
            git_writes: false,
            undo: true,
            background: false,
        }),
        undo_held: vec![project.join("data")],
        ..ToolContext::default()
    };
    let refused = bash.call(json!({"command": "rm -rf data"}), &ctx).await;
    let Err(ToolError::Failed(why)) = refused else {
        panic!("ran: {refused:?}");
    };
    assert!(
        why.contains("but now") && why.contains("nothing was run"),
        "{why}"
    );
    assert!(project.join("data/users.csv").is_file());
    // Within the bounds, the same call runs.
    blob.set_len(1 << 20).unwrap();
    let output = bash.call(json!({"command": "rm -rf data"}), &ctx).await.unwrap();
    assert!(!output.is_error, "{}", output.content);
    assert!(!project.join("data").exists());
}
