//! Tests of owners.rs: a project's local settings file loosens the sandbox only as the user's own.

use std::process::Command;

use agent_rules::{Discovery, PermissionMode};
use agent_tool_traits::{Confinement, Decision};
use serde_json::json;

use super::*;
use crate::guard::{Guard, GuardOptions};

/// A scratch home and project; the project a git work tree when `git` is set.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new(git: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let scratch = Self { dir };
        std::fs::create_dir_all(scratch.proj()).unwrap();
        std::fs::create_dir_all(scratch.root().join("home")).unwrap();
        if git {
            scratch.git(&["init", "-q"]);
        }
        scratch
    }

    fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    fn proj(&self) -> PathBuf {
        self.root().join("proj")
    }

    fn git(&self, args: &[&str]) {
        let status = Command::new("git")
            .args(args)
            .current_dir(self.proj())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    /// Writes the project's `.claude/settings.local.json`.
    fn local(&self, text: &str) -> &Self {
        let file = self.proj().join(".claude/settings.local.json");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
        self
    }

    /// Commits the local file, as a repository that ships it does.
    fn commit_local(&self) -> &Self {
        self.git(&["add", "-f", ".claude/settings.local.json"]);
        self.git(&["commit", "-q", "-m", "ship it"]);
        self
    }

    fn guard(&self) -> Guard {
        let discovery = Discovery {
            cwd: self.proj(),
            home: Some(self.root().join("home")),
            ..Discovery::default()
        };
        let settings = crate::discover_settings(&discovery).unwrap();
        let options = GuardOptions {
            cwd: self.proj(),
            home: Some(self.root().join("home")),
            ..GuardOptions::default()
        };
        Guard::new(&settings, &options).unwrap()
    }
}

const DOCKER: &str = r#"{"permissions": {"allow": ["Bash(docker:*)"]}}"#;

fn docker(guard: &Guard) -> crate::Decided {
    guard.decide("Bash", &json!({"command": "docker ps"}))
}

#[test]
fn an_untracked_local_rule_takes_its_command_out_of_the_sandbox() {
    let scratch = Scratch::new(true);
    let decided = docker(&scratch.local(DOCKER).guard());
    assert_eq!(
        decided.verdict().decision,
        Decision::Allow,
        "{}",
        decided.verdict().reason()
    );
    assert!(decided.outside.is_some());
    assert!(decided.confinement.is_none());
}

#[test]
fn a_tracked_or_unverifiable_local_rule_asks_and_says_why() {
    let tracked = Scratch::new(true);
    tracked.local(DOCKER).commit_local();
    let no_git = Scratch::new(false);
    no_git.local(DOCKER);
    for (scratch, why) in [
        (
            &tracked,
            "`.claude/settings.local.json`, which git tracks (so it came with the repository)",
        ),
        (&no_git, "in a project that is not the top of a git work tree"),
    ] {
        let decided = docker(&scratch.guard());
        let reason = decided.verdict().reason();
        assert_eq!(decided.verdict().decision, Decision::Ask, "{reason}");
        assert!(decided.outside.is_none());
        assert!(reason.contains(why), "{reason}");
        assert!(
            reason.contains("cannot take a command out of the sandbox"),
            "{reason}"
        );
    }
}

#[test]
fn a_local_file_reached_through_a_link_is_the_repositorys() {
    let scratch = Scratch::new(true);
    std::fs::create_dir_all(scratch.proj().join("shipped")).unwrap();
    std::fs::write(scratch.proj().join("shipped/settings.local.json"), DOCKER).unwrap();
    std::os::unix::fs::symlink("shipped", scratch.proj().join(".claude")).unwrap();
    let decided = docker(&scratch.guard());
    assert_eq!(decided.verdict().decision, Decision::Ask);
    assert!(
        decided.verdict().reason().contains("is a symbolic link"),
        "{}",
        decided.verdict().reason()
    );
}

#[test]
fn an_untracked_local_webfetch_rule_and_section_widen_the_proxy() {
    let text = r#"{"permissions": {"allow": ["WebFetch(domain:docs.example.org)"]},
        "agentGuard": {"network": {"allow": ["registry.example.net"]}, "sandbox": {"read": ["~/notes"]}}}"#;
    let untracked = Scratch::new(true);
    untracked.local(text);
    let tracked = Scratch::new(true);
    tracked.local(text).commit_local();
    for (scratch, users) in [(&untracked, true), (&tracked, false)] {
        let guard = scratch.guard();
        let spec = guard.sandbox_spec(Confinement::READ_ONLY);
        assert_eq!(spec.domains.allows("docs.example.org", 443), users);
        assert_eq!(spec.domains.allows("registry.example.net", 443), users);
        assert_eq!(!guard.sandbox_reads.is_empty(), users);
    }
}

#[test]
fn an_untracked_local_mode_is_the_users() {
    let text = r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#;
    let untracked = Scratch::new(true);
    untracked.local(text);
    let guard = untracked.guard();
    assert_eq!(guard.policy().mode(), PermissionMode::BypassPermissions);
    assert!(guard.policy().notes().is_empty(), "{:?}", guard.policy().notes());
    let tracked = Scratch::new(true);
    tracked.local(text).commit_local();
    let guard = tracked.guard();
    assert_eq!(guard.policy().mode(), PermissionMode::Default);
    assert_eq!(guard.policy().notes().len(), 1, "{:?}", guard.policy().notes());
}

#[test]
fn a_git_write_asks_where_it_could_untrack_a_loosening_local_file() {
    let tracked = Scratch::new(true);
    tracked.local(DOCKER).commit_local();
    let guard = tracked.guard();
    if agent_os_sandbox::KernelSupport::enforcement_missing().is_some() {
        return; // no sandbox: no contained allow, and no git writes given to one
    }
    for line in [
        "git rm --cached .claude/settings.local.json",
        "git add src && git commit -m x",
    ] {
        let decided = guard.decide("Bash", &json!({ "command": line }));
        let reason = decided.verdict().reason();
        assert!(decided.confinement.is_some_and(|c| c.git_writes), "{line}");
        assert_eq!(decided.verdict().decision, Decision::Ask, "{line}: {reason}");
        assert!(
            reason.contains("could make git stop tracking `.claude/settings.local.json`, which git tracks"),
            "{line}: {reason}"
        );
    }
    // A tracked local file that loosens nothing, or an untracked one, leaves git writes alone.
    let harmless = Scratch::new(true);
    harmless
        .local(r#"{"permissions": {"allow": ["Bash(npm test)"]}}"#)
        .commit_local();
    let untracked = Scratch::new(true);
    untracked.local(DOCKER);
    for scratch in [&harmless, &untracked] {
        let decided = scratch
            .guard()
            .decide("Bash", &json!({"command": "git commit -m x"}));
        assert!(
            !decided.verdict().reason().contains("stop tracking"),
            "{}",
            decided.verdict().reason()
        );
    }
}

#[test]
fn a_local_file_made_while_a_sandboxed_run_writes_there_is_not_the_users() {
    let scratch = Scratch::new(true);
    // The record a `workspace-write` run leaves in its scratch directory while it runs: started a second ago,
    // writing the project.
    let record_dir = tempfile::Builder::new()
        .prefix(&format!("agent-guard-sandbox-{}-", std::process::id()))
        .tempdir_in(std::env::temp_dir())
        .unwrap();
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - 1;
    let mut record = format!("{started}.000000000\0").into_bytes();
    record.extend_from_slice(scratch.proj().as_os_str().as_encoded_bytes());
    record.push(0);
    std::fs::write(record_dir.path().join("run"), record).unwrap();
    let decided = docker(&scratch.local(DOCKER).guard());
    let reason = decided.verdict().reason();
    assert_eq!(decided.verdict().decision, Decision::Ask, "{reason}");
    assert!(
        reason.contains("while a sandboxed command that may write there was running"),
        "{reason}"
    );
    // Once the run is over (its record gone), the same file is the user's.
    drop(record_dir);
    assert!(docker(&scratch.guard()).outside.is_some());
}
