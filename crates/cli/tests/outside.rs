//! Tools no sandbox can contain, on the built binary: with the user's rules `Bash(docker:*)` and
//! `Bash(kubectl get:*)`, the hook answers `docker ps` and `kubectl get pods` with an allow that has no sandbox
//! wrapping (the line runs as written, so the tool reaches its engine or cluster configuration in the home
//! directory), names the rule in its reason, in `explain` and in the audit row; a line mixing such a tool with a script asks, as does
//! the same rule from the repository's own settings (its shared file, a local file git tracks, a project without
//! `.git`, a local file a running sandboxed command made); a read-only line keeps its sandbox.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

mod hook;
#[path = "../../../tests/support/need.rs"]
mod need;
#[path = "../../../tests/support/poll.rs"]
mod poll;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{Value, json};

/// A scratch home whose user settings allow the two tools, with a cluster configuration only the real home holds;
/// a git project; and a directory of stand-in programs: `kubectl` prints the configuration it reads from the home.
struct Scratch {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    proj: PathBuf,
    bin: PathBuf,
}

impl Scratch {
    fn new(user_rules: &[&str]) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let home = root.join("home");
        let proj = root.join("proj");
        let bin = root.join("bin");
        for dir in [
            home.join(".claude"),
            home.join(".kube"),
            proj.clone(),
            bin.clone(),
        ] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let settings = json!({ "permissions": { "allow": user_rules } });
        std::fs::write(home.join(".claude/settings.json"), settings.to_string()).unwrap();
        std::fs::write(home.join(".kube/config"), "current-context: scratch-cluster\n").unwrap();
        let kubectl = bin.join("kubectl");
        std::fs::write(&kubectl, "#!/bin/sh\ncat \"$HOME/.kube/config\"\n").unwrap();
        std::fs::set_permissions(&kubectl, std::fs::Permissions::from_mode(0o755)).unwrap();
        let init = Command::new("git")
            .args(["init", "-q", "."])
            .current_dir(&proj)
            .env("HOME", &home)
            .output()
            .unwrap();
        assert!(init.status.success(), "{}", hook::text(&init.stderr));
        Self {
            _tmp: tmp,
            home,
            proj,
            bin,
        }
    }

    /// The hook's answer to a Bash call of `command` in the project: decision, reason, the command to run instead.
    fn check(&self, command: &str) -> (String, String, Option<String>) {
        let input = hook::input(&self.proj, "Bash", json!({ "command": command }));
        let output = hook::run(&["check"], &input, &self.proj, &self.home);
        assert!(output.status.success(), "{}", hook::text(&output.stderr));
        let line = hook::text(&output.stdout);
        let (decision, reason) = hook::decision(&line);
        let value: Value = serde_json::from_str(&line).unwrap();
        let updated = value["hookSpecificOutput"]["updatedInput"]["command"]
            .as_str()
            .map(str::to_owned);
        (decision, reason, updated)
    }

    /// Runs `line` as the coding agent's Bash tool would, with the stand-in programs first on `PATH`.
    fn run(&self, line: &str) -> Output {
        let path = std::env::var("PATH").unwrap_or_default();
        Command::new("bash")
            .arg("-c")
            .arg(line)
            .current_dir(&self.proj)
            .env("HOME", &self.home)
            .env("PATH", format!("{}:{path}", self.bin.display()))
            .output()
            .unwrap()
    }

    fn explain(&self, command: &str) -> String {
        let input = json!({ "tool_name": "Bash", "tool_input": { "command": command }, "cwd": self.proj });
        let output = hook::run(&["explain"], &input.to_string(), &self.proj, &self.home);
        assert!(output.status.success(), "{}", hook::text(&output.stderr));
        hook::text(&output.stdout)
    }
}

const RULES: &[&str] = &["Bash(docker:*)", "Bash(kubectl get:*)"];

#[test]
fn a_tool_the_user_allows_and_no_sandbox_contains_runs_unwrapped() {
    let scratch = Scratch::new(RULES);
    for (command, rule) in [
        ("docker ps", "Bash(docker:*)"),
        ("docker compose up -d", "Bash(docker:*)"),
        ("kubectl get pods", "Bash(kubectl get:*)"),
        ("kubectl get pods -o name | sort", "Bash(kubectl get:*)"),
    ] {
        let (decision, reason, updated) = scratch.check(command);
        assert_eq!(decision, "allow", "{command}: {reason}");
        assert_eq!(updated, None, "{command}: wrapped: {updated:?}");
        assert!(
            reason.contains(&format!("is allowed by your rule `{rule}`"))
                && reason.contains("runs outside the sandbox"),
            "{command}: {reason}"
        );
    }
    // Run as written, the tool reads what only the home directory holds: the cluster's configuration.
    let run = scratch.run("kubectl get pods");
    assert!(run.status.success(), "{}", hook::text(&run.stderr));
    assert_eq!(hook::text(&run.stdout), "current-context: scratch-cluster\n");
    // The audit row says where the line ran.
    let audit = hook::run(&["audit", "--json"], "", &scratch.proj, &scratch.home);
    assert!(audit.status.success(), "{}", hook::text(&audit.stderr));
    let rows: Vec<Value> = hook::text(&audit.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let docker = rows
        .iter()
        .find(|row| row.to_string().contains("docker ps"))
        .unwrap_or_else(|| panic!("no row of `docker ps`: {rows:?}"));
    assert_eq!(
        docker["sandbox"], "none: outside the sandbox, by the user's rule",
        "{docker}"
    );
    let explained = scratch.explain("docker ps");
    assert!(
        explained.contains(
            "kernel sandbox: none: runs outside it, allowed `docker ps` by your rule `Bash(docker:*)`"
        ),
        "{explained}"
    );
}

#[test]
fn a_tool_no_sandbox_contains_cannot_share_a_line_with_code_that_needs_one() {
    let scratch = Scratch::new(RULES);
    let (decision, reason, updated) = scratch.check("docker ps | python3 x.py");
    assert_eq!(decision, "ask", "{reason}");
    assert_eq!(updated, None);
    assert!(
        reason.contains("`docker ps` is allowed by your rule `Bash(docker:*)`")
            && reason.contains("but `python3 x.py` needs one: they cannot share a sandbox"),
        "{reason}"
    );
    // A command the rules allow but which needs the sandbox turns the allow into an ask, saying why.
    let both = Scratch::new(&["Bash(kubectl get:*)", "Bash(npm test:*)"]);
    let (decision, reason, updated) = both.check("kubectl get pods && npm test");
    assert_eq!(decision, "ask", "{reason}");
    assert_eq!(updated, None);
    assert!(reason.contains("`npm test` needs one"), "{reason}");
    // A line of read-only commands alone keeps its sandbox wherever the kernel enforces one.
    let (decision, reason, updated) = scratch.check("git status && ls");
    assert_eq!(decision, "allow", "{reason}");
    if reason.contains("runs under the kernel sandbox") {
        let updated = updated.unwrap_or_default();
        assert!(updated.contains(" sandbox --profile read-only "), "{updated}");
    }
}

#[test]
fn the_repository_s_own_rule_does_not_take_a_tool_out_of_the_sandbox() {
    let scratch = Scratch::new(&[]);
    let project_settings = scratch.proj.join(".claude");
    std::fs::create_dir_all(&project_settings).unwrap();
    std::fs::write(
        project_settings.join("settings.json"),
        json!({ "permissions": { "allow": RULES } }).to_string(),
    )
    .unwrap();
    let (decision, reason, updated) = scratch.check("docker ps");
    assert_eq!(decision, "ask", "{reason}");
    assert_eq!(updated, None);
    assert!(
        reason
            .contains("of the repository's project settings, which cannot take a command out of the sandbox"),
        "{reason}"
    );
}

impl Scratch {
    /// Runs git in the project with no configuration of the user's.
    fn git(&self, args: &[&str]) {
        hook::git(&self.proj, &self.home, args);
    }

    /// Writes the project's `.claude/settings.local.json` as the coding agent does on "don't ask again", git-ignored
    /// as projects ignore it; and a stand-in `docker` that says it ran.
    fn local_rules(&self, rules: &[&str]) {
        std::fs::create_dir_all(self.proj.join(".claude")).unwrap();
        let settings = json!({ "permissions": { "allow": rules } });
        std::fs::write(
            self.proj.join(".claude/settings.local.json"),
            settings.to_string(),
        )
        .unwrap();
        std::fs::write(self.proj.join(".gitignore"), ".claude/settings.local.json\n").unwrap();
        let docker = self.bin.join("docker");
        std::fs::write(&docker, "#!/bin/sh\necho \"docker ran: $*\"\n").unwrap();
        std::fs::set_permissions(&docker, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// "Don't ask again" saves a rule in the project's `.claude/settings.local.json`, which git does not track: the
/// user's own, so its `Bash(docker:*)` runs docker outside the sandbox as a rule of `~/.claude/settings.json` does.
/// Committed (a clone would bring it), the same file is the repository's, and the line asks, saying so.
#[test]
fn a_local_rule_git_does_not_track_is_the_users_and_a_committed_one_the_repositorys() {
    let scratch = Scratch::new(&[]);
    scratch.local_rules(&["Bash(docker:*)"]);
    scratch.git(&["add", ".gitignore"]);
    scratch.git(&["commit", "-q", "-m", "ignore local settings"]);
    let (decision, reason, updated) = scratch.check("docker ps");
    assert_eq!(decision, "allow", "{reason}");
    assert_eq!(updated, None, "wrapped: {updated:?}");
    assert!(
        reason.contains("`docker ps` is allowed by your rule `Bash(docker:*)`")
            && reason.contains("runs outside the sandbox"),
        "{reason}"
    );
    let run = scratch.run("docker ps");
    assert_eq!(
        hook::text(&run.stdout),
        "docker ran: ps\n",
        "{}",
        hook::text(&run.stderr)
    );

    scratch.git(&["add", "-f", ".claude/settings.local.json"]);
    scratch.git(&["commit", "-q", "-m", "ship the local settings"]);
    let (decision, reason, updated) = scratch.check("docker ps");
    assert_eq!(decision, "ask", "{reason}");
    assert_eq!(updated, None);
    assert!(
        reason.contains(
            "of `.claude/settings.local.json`, which git tracks (so it came with the repository): a rule of the \
             repository's settings cannot take a command out of the sandbox"
        ),
        "{reason}"
    );
}

/// Without a `.git` of its own, nothing tells a local file written here from one a download brought: it asks.
#[test]
fn a_local_rule_of_a_project_without_git_asks() {
    let scratch = Scratch::new(&[]);
    std::fs::remove_dir_all(scratch.proj.join(".git")).unwrap();
    scratch.local_rules(&["Bash(docker:*)"]);
    let (decision, reason, updated) = scratch.check("docker ps");
    assert_eq!(decision, "ask", "{reason}");
    assert_eq!(updated, None);
    assert!(
        reason.contains("`.claude/settings.local.json`, in a project that is not the top of a git work tree"),
        "{reason}"
    );
}

/// A sandboxed command running in the background makes `.claude/settings.local.json` (a protected path it may
/// create, removed only when it ends): while it runs, the file is not taken for the user's, and after it the file
/// is gone.
#[test]
fn a_local_file_a_running_sandboxed_command_made_is_not_the_users() {
    let Some(report) = need::sandbox_report(env!("CARGO_BIN_EXE_agent-guard")) else {
        return;
    };
    if !report.contains("namespaces: yes") {
        // The run-time record of a protected path a command creates is kept by the sandbox with namespaces.
        eprintln!(
            "skipped: a protected path made by a running command needs the sandbox's namespaces: {report}"
        );
        return;
    }
    let scratch = Scratch::new(&[]);
    let file = scratch.proj.join(".claude/settings.local.json");
    let rules = json!({ "permissions": { "allow": ["Bash(docker:*)"] } }).to_string();
    let line = format!("mkdir -p .claude && printf '%s' '{rules}' > .claude/settings.local.json && sleep 4",);
    let background = Command::new(env!("CARGO_BIN_EXE_agent-guard"))
        .args(["sandbox", "--profile", "workspace-write", "--", "sh", "-c", &line])
        .current_dir(&scratch.proj)
        .env("HOME", &scratch.home)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    poll::wait_until(
        std::time::Duration::from_secs(20),
        "the sandboxed command makes the file",
        || file.exists(),
    );
    let (decision, reason, updated) = scratch.check("docker ps");
    assert_eq!(decision, "ask", "{reason}");
    assert_eq!(updated, None);
    assert!(
        reason.contains("while a sandboxed command that may write there was running"),
        "{reason}"
    );
    let output = background.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", hook::text(&output.stderr));
    assert!(!file.exists(), "the protected path the command made outlived it");
}
