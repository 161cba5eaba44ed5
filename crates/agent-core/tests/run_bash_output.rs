//! `run_bash` output through its public API: a gigabyte of output is cut at the cap with bounded memory. Alone in
//! its test binary, so that the peak memory measured is this command's.

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

/// The high-water mark of this process's resident memory, in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_printing_a_gigabyte_is_cut_at_the_cap_with_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let guard = Guard::new(
        &Settings::new(),
        &GuardOptions {
            cwd: dir.path().to_path_buf(),
            ..Default::default()
        },
    )
    .unwrap();
    let bash = RunBashTool::new(GuardHandle::new(guard), BashLimits::default());
    let before = peak_rss_kib();
    let started = Instant::now();
    let output = bash
        .call(
            json!({"command": "head -c 1000000000 /dev/zero | tr '\\0' a; echo"}),
            &ToolContext::default(),
        )
        .await
        .unwrap();
    let grown_kib = peak_rss_kib().saturating_sub(before);
    assert!(started.elapsed() < Duration::from_secs(60));
    let head: String = output.content.chars().take(4_000).collect();
    assert_eq!(head, "a".repeat(4_000), "the head is kept");
    assert!(
        output.content.chars().count() < 4_300,
        "{} characters",
        output.content.chars().count()
    );
    assert!(
        output.content.contains("output cut at 4000 characters"),
        "{}",
        &output.content[4_000..]
    );
    assert!(grown_kib < 32 * 1024, "peak memory grew by {grown_kib} KiB");
}
