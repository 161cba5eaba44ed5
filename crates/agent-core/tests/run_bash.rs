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

use agent_decide::{Guard, GuardOptions};

use agent_core::{BashLimits, GuardHandle, RunBashTool};
use agent_rules::Settings;
use agent_tool_traits::{Tool, ToolContext};
use serde_json::json;

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
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(group_members(group), 0, "no process of the bomb is left");
}

/// Whether this machine lets a process make a pids cgroup (cgroup v1's pids hierarchy is writable).
fn pids_cgroup_available() -> bool {
    let probe = std::path::Path::new("/sys/fs/cgroup/pids").join(format!("probe-{}", std::process::id()));
    let made = std::fs::create_dir(&probe).is_ok();
    if made {
        let _ = std::fs::remove_dir(&probe);
    }
    made
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_leaves_the_group_is_still_killed_under_a_cgroup() {
    let dir = tempfile::tempdir().unwrap();
    let bash = tool(dir.path(), BashLimits::default());
    let marker = format!("{}.{}", 40 + std::process::id() % 50, std::process::id() % 1000);
    let output = bash
        .call(
            json!({"command": format!("setsid sleep {marker} & echo started")}),
            &ToolContext::default(),
        )
        .await
        .unwrap();
    assert!(output.content.contains("started"), "{}", output.content);
    std::thread::sleep(Duration::from_millis(100));
    let alive = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .any(|cmdline| {
            String::from_utf8_lossy(&cmdline).replace('\0', " ").trim() == format!("sleep {marker}")
        });
    if pids_cgroup_available() {
        assert!(!alive, "the setsid child escaped its cgroup");
    } else {
        // Without a cgroup only the process group is reachable: the escapee is documented, not contained.
        eprintln!("no writable pids cgroup here: setsid escapees are outside the process group ({alive})");
    }
}

/// Whether this kernel can enforce the sandbox: the guard gives a shell call a confinement only then.
fn sandbox_enforced() -> bool {
    let dir = tempfile::tempdir().unwrap();
    let guard = Guard::new(
        &Settings::new(),
        &GuardOptions {
            cwd: dir.path().to_path_buf(),
            ..Default::default()
        },
    )
    .unwrap();
    guard
        .decide("Bash", &json!({"command": "ls"}))
        .confinement
        .is_some()
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
