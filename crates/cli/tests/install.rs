//! `agent-guard install` and `uninstall` on the settings files of a scratch HOME and project.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

/// Runs the binary in `dir` with HOME set to `home` and no inherited `AGENT_*` variables.
fn run(args: &[&str], dir: &Path, home: &Path) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-guard"));
    command.args(args).current_dir(dir).env("HOME", home);
    for (key, _) in std::env::vars() {
        if key.starts_with("AGENT_") {
            command.env_remove(key);
        }
    }
    command.output().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn scratch() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("proj");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    (tmp, home, project)
}

fn exe() -> PathBuf {
    std::fs::canonicalize(env!("CARGO_BIN_EXE_agent-guard")).unwrap()
}

/// A user settings file as the coding agent writes it, with permissions, another PreToolUse hook, a hook of
/// another event and keys agent-guard does not know.
const USER_SETTINGS: &str = r#"{
  "permissions": {
    "allow": [
      "Bash(npm run test:*)",
      "WebFetch(domain:docs.rs)"
    ],
    "deny": [
      "Read(./.env)"
    ]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "~/bin/log-command.sh",
            "timeout": 5
          }
        ]
      }
    ],
    "Notification": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "notify-send done"
          }
        ]
      }
    ]
  },
  "model": "opus",
  "statusLine": {
    "type": "command",
    "command": "echo hi"
  }
}
"#;

#[test]
fn install_keeps_the_file_a_second_install_is_a_no_op_and_uninstall_restores_it() {
    let (_tmp, home, project) = scratch();
    let settings = home.join(".claude/settings.json");
    let backup = home.join(".claude/settings.json.agent-guard.bak");
    std::fs::write(&settings, USER_SETTINGS).unwrap();

    let out = run(&["install"], &project, &home);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("installed the agent-guard hook"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains(&backup.display().to_string()),
        "{}",
        stdout(&out)
    );
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), USER_SETTINGS);
    let installed = std::fs::read_to_string(&settings).unwrap();
    let value: Value = serde_json::from_str(&installed).unwrap();
    let original: Value = serde_json::from_str(USER_SETTINGS).unwrap();
    // Everything that was there is still there, unchanged.
    assert_eq!(value["permissions"], original["permissions"]);
    assert_eq!(value["hooks"]["Notification"], original["hooks"]["Notification"]);
    assert_eq!(value["model"], "opus");
    assert_eq!(value["statusLine"], original["statusLine"]);
    let groups = value["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(groups[0], original["hooks"]["PreToolUse"][0]);
    assert_eq!(
        groups[1],
        json!({"matcher": "*", "hooks": [{
            "type": "command",
            "command": format!("{} check", exe().display()),
            "timeout": 30,
        }]})
    );
    // Key order and layout: the original's lines come first, in order, and the file keeps two spaces.
    let keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys.len(), 4);
    assert!(installed.starts_with("{\n  \"permissions\": {\n    \"allow\": [\n"));
    assert!(installed.ends_with(
        "  \"statusLine\": {\n    \"type\": \"command\",\n    \"command\": \"echo hi\"\n  }\n}\n"
    ));

    // Again: nothing changes and no backup is written.
    std::fs::remove_file(&backup).unwrap();
    let again = run(&["install"], &project, &home);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(stdout(&again).contains("already installed"), "{}", stdout(&again));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), installed);
    assert!(!backup.exists());

    let out = run(&["uninstall"], &project, &home);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("removed the agent-guard hook"),
        "{}",
        stdout(&out)
    );
    assert_eq!(std::fs::read(&settings).unwrap(), USER_SETTINGS.as_bytes());
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), installed);
    let again = run(&["uninstall"], &project, &home);
    assert!(again.status.success());
    assert!(stdout(&again).contains("nothing changed"), "{}", stdout(&again));
    assert_eq!(std::fs::read(&settings).unwrap(), USER_SETTINGS.as_bytes());
}

#[test]
fn a_file_that_is_not_json_is_refused_with_its_position_and_left_alone() {
    let (_tmp, home, project) = scratch();
    let settings = home.join(".claude/settings.json");
    let broken = "{\n  \"permissions\": {\n    \"allow\": [\"Bash(ls)\",]\n  }\n}\n";
    std::fs::write(&settings, broken).unwrap();
    for args in [&["install"][..], &["install", "--dry-run"], &["uninstall"]] {
        let out = run(args, &project, &home);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let error = stderr(&out);
        assert!(error.contains(&settings.display().to_string()), "{error}");
        assert!(error.contains("line 3, column 26"), "{error}");
        assert!(error.contains("nothing was changed"), "{error}");
        assert_eq!(std::fs::read_to_string(&settings).unwrap(), broken);
        assert!(!home.join(".claude/settings.json.agent-guard.bak").exists());
    }
    std::fs::write(&settings, "[\"not\", \"an object\"]").unwrap();
    let out = run(&["install"], &project, &home);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not a JSON object"), "{}", stderr(&out));
}

#[test]
fn dry_run_prints_the_change_and_writes_nothing() {
    let (_tmp, home, project) = scratch();
    let settings = home.join(".claude/settings.json");
    std::fs::write(&settings, USER_SETTINGS).unwrap();
    let out = run(
        &["install", "--dry-run", "--matcher", "Bash|Read"],
        &project,
        &home,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("+        \"matcher\": \"Bash|Read\","), "{text}");
    assert!(text.contains("@@ "), "{text}");
    assert!(text.contains("nothing was written"), "{text}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), USER_SETTINGS);
    assert!(!home.join(".claude/settings.json.agent-guard.bak").exists());

    // A project without `.claude`: not even the directory is made.
    let out = run(&["install", "--scope", "project", "--dry-run"], &project, &home);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("--- /dev/null"), "{}", stdout(&out));
    assert!(!project.join(".claude").exists());

    run(&["install"], &project, &home);
    let installed = std::fs::read_to_string(&settings).unwrap();
    let out = run(&["uninstall", "--dry-run"], &project, &home);
    assert!(out.status.success());
    assert!(
        stdout(&out).contains("-        \"matcher\": \"*\","),
        "{}",
        stdout(&out)
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), installed);
}

#[test]
fn project_and_local_scopes_create_the_file_and_uninstall_removes_it_again() {
    let (tmp, home, project) = scratch();
    for (scope, name) in [("project", "settings.json"), ("local", "settings.local.json")] {
        let file = project.join(".claude").join(name);
        // From elsewhere, with --cwd.
        let out = run(
            &["install", "--scope", scope, "--cwd", project.to_str().unwrap()],
            tmp.path(),
            &home,
        );
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("created"), "{}", stdout(&out));
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(value["hooks"]["PreToolUse"][0]["matcher"], "*");
        assert!(
            !home.join(".claude/settings.json").exists(),
            "the user scope is untouched"
        );
        let out = run(&["uninstall", "--scope", scope], &project, &home);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(!file.exists(), "{}", stdout(&out));
    }
}

#[test]
fn a_linked_settings_file_stays_a_link_and_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt as _;
    let (tmp, home, project) = scratch();
    let real = tmp.path().join("dotfiles-settings.json");
    std::fs::write(&real, "{\n  \"model\": \"x\"\n}\n").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = home.join(".claude/settings.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = run(&["install"], &project, &home);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("a link to"), "{}", stdout(&out));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(&real).unwrap().contains("PreToolUse"));
    assert_eq!(
        std::fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o640
    );
    let out = run(&["uninstall"], &project, &home);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&real).unwrap(),
        "{\n  \"model\": \"x\"\n}\n"
    );
}

#[test]
fn an_entry_of_another_agent_guard_is_replaced_not_doubled() {
    let (_tmp, home, project) = scratch();
    let settings = home.join(".claude/settings.json");
    std::fs::write(
        &settings,
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/old/bin/agent-guard check", "timeout": 10}]}]}}"#,
    )
    .unwrap();
    let out = run(&["install"], &project, &home);
    assert!(out.status.success(), "{}", stderr(&out));
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let groups = value["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{value}");
    assert_eq!(
        groups[0]["hooks"][0]["command"],
        format!("{} check", exe().display())
    );
    assert_eq!(groups[0]["hooks"][0]["timeout"], 30);
}

#[test]
fn the_user_scope_needs_a_home() {
    let (_tmp, _home, project) = scratch();
    let out = run(&["install"], &project, Path::new(""));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("HOME is not set"), "{}", stderr(&out));
}

/// The hook runs agent-guard by the path it was found at on `PATH`, a package manager's link included, so that an
/// upgrade that moves the link's target keeps the hook working.
#[test]
fn the_hook_runs_the_binary_by_its_path_on_path_not_the_link_target() {
    let (tmp, home, project) = scratch();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("agent-guard");
    std::os::unix::fs::symlink(exe(), &link).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new("agent-guard")
        .args(["install", "--scope", "local"])
        .current_dir(&project)
        .env("HOME", &home)
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let file = project.join(".claude/settings.local.json");
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        value["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        format!("{} check", link.display()),
        "the link as found on PATH, not `{}`",
        exe().display()
    );
    // Installing again by the same path changes nothing.
    let again = Command::new("agent-guard")
        .args(["install", "--scope", "local"])
        .current_dir(&project)
        .env("HOME", &home)
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(stdout(&again).contains("nothing changed"), "{}", stdout(&again));
}

/// `--scope local` is this checkout's own: its file is git-ignored in `.git/info/exclude`, once, and nothing
/// committed changes; outside a repository nothing else is written.
#[test]
fn the_local_scope_file_is_git_ignored_in_the_checkout() {
    let (_tmp, home, project) = scratch();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let exclude = project.join(".git/info/exclude");
    for _ in 0..2 {
        let out = run(&["install", "--scope", "local"], &project, &home);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let text = std::fs::read_to_string(&exclude).unwrap();
    assert_eq!(
        text.lines()
            .filter(|l| *l == "/.claude/settings.local.json")
            .count(),
        1,
        "{text}"
    );
    assert!(!project.join(".gitignore").exists(), "no committed file changes");
    // A worktree's `.git` file points at its git directory, whose exclude file is the main repository's.
    let (_tmp, home, worktree) = scratch();
    let main = worktree.parent().unwrap().join("main");
    std::fs::create_dir_all(main.join(".git/worktrees/wt")).unwrap();
    std::fs::write(main.join(".git/worktrees/wt/commondir"), "../..\n").unwrap();
    std::fs::write(
        worktree.join(".git"),
        format!("gitdir: {}\n", main.join(".git/worktrees/wt").display()),
    )
    .unwrap();
    let out = run(&["install", "--scope", "local"], &worktree, &home);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("is git-ignored in this checkout"),
        "{}",
        stdout(&out)
    );
    let text = std::fs::read_to_string(main.join(".git/info/exclude")).unwrap();
    assert!(text.contains("/.claude/settings.local.json"), "{text}");
    // Outside a repository: the settings file alone.
    let (_tmp, home, plain) = scratch();
    let out = run(&["install", "--scope", "local"], &plain, &home);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!plain.join(".git").exists());
    assert!(!stdout(&out).contains("git-ignored"), "{}", stdout(&out));
}
