//! `agent-guard undo` for real: commands run by `agent-guard sandbox --profile workspace-write` (the line the hook
//! wraps every allowed shell call in) are recorded and taken back; a file changed since makes undo refuse.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agent-guard");

#[path = "../../../tests/support/need.rs"]
mod need;

/// Whether `agent-guard sandbox --probe` says the kernel enforces the sandbox (else skipped, or a failure under
/// `AGENT_GUARD_REQUIRE_SANDBOX=1`).
fn supported() -> bool {
    need::sandbox_report(BIN).is_some()
}

/// A home and a git project with sources, an executable and a link, in a temporary directory.
struct World {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl World {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(project.join("src/deep")).unwrap();
        std::fs::write(project.join("src/lib.rs"), "pub fn a() {}\n").unwrap();
        std::fs::write(project.join("src/deep/x.rs"), "// x\n").unwrap();
        std::fs::write(project.join("build.sh"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(project.join("build.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("src/lib.rs", project.join("link")).unwrap();
        let init = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&project)
            .status()
            .unwrap();
        assert!(init.success());
        Self {
            _dir: dir,
            home,
            project,
        }
    }

    fn agent_guard(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env_remove("XDG_STATE_HOME")
            .env_remove("AGENT_GUARD_UNDO_DIR")
            .env_remove("AGENT_GUARD_UNDO")
            .output()
            .unwrap()
    }

    fn sandboxed(&self, line: &str) -> Output {
        self.sandboxed_in(line, true)
    }

    /// `line` under `agent-guard sandbox --profile workspace-write`, with namespaces where the kernel allows
    /// them, or with Landlock and seccomp alone.
    fn sandboxed_in(&self, line: &str, namespaces: bool) -> Output {
        let root = self.project.to_string_lossy().into_owned();
        let out = Command::new(BIN)
            .args([
                "sandbox",
                "--profile",
                "workspace-write",
                "--root",
                &root,
                "--",
                "bash",
                "-c",
                line,
            ])
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env_remove("XDG_STATE_HOME")
            .env_remove("AGENT_GUARD_UNDO_DIR")
            .env_remove("AGENT_GUARD_UNDO")
            .env(
                "AGENT_GUARD_SANDBOX_NAMESPACES",
                if namespaces { "on" } else { "off" },
            )
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        out
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every file, link and directory below `dir` but `.git` and `.agent-guard`, with contents, executable bits and link targets.
fn tree(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(dir).unwrap().to_path_buf();
            // The repository, and agent-guard's own directory, which holds the snapshots.
            if rel == Path::new(".git") || rel == Path::new(".agent-guard") {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let what = if meta.file_type().is_symlink() {
                format!("link {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                stack.push(path.clone());
                "dir".to_owned()
            } else {
                format!(
                    "{:o} {:?}",
                    meta.permissions().mode() & 0o111,
                    std::fs::read(&path).unwrap()
                )
            };
            out.push((rel, what));
        }
    }
    out.sort();
    out
}

#[test]
fn a_sandboxed_rm_rf_is_listed_and_taken_back() {
    if !supported() {
        return;
    }
    let world = World::new();
    let before = tree(&world.project);
    let ran = world.sandboxed("rm -rf src link build.sh && echo made > new.txt");
    let said = text(&ran.stderr);
    assert!(said.contains("undo id 1: the command changed 5 files"), "{said}");
    assert!(said.contains("`agent-guard undo --id 1` takes it back"), "{said}");

    let list = world.agent_guard(&["undo", "--list"]);
    let listed = text(&list.stdout);
    assert!(list.status.success(), "{}", text(&list.stderr));
    assert!(
        listed.contains("+1 ~0 -4  rm -rf src link build.sh && echo made > new.txt"),
        "{listed}"
    );
    assert!(
        listed.contains("deleted  src/deep/x.rs") && listed.contains("added    new.txt"),
        "{listed}"
    );

    let dry = world.agent_guard(&["undo", "--dry-run"]);
    assert!(
        text(&dry.stdout).contains("+++ b/src/lib.rs\n+pub fn a() {}"),
        "{}",
        text(&dry.stdout)
    );
    assert!(
        world.project.join("new.txt").exists(),
        "a dry run changes nothing"
    );

    let undo = world.agent_guard(&["undo"]);
    assert!(undo.status.success(), "{}", text(&undo.stderr));
    assert_eq!(tree(&world.project), before);
    assert!(text(&world.agent_guard(&["undo", "--list"]).stdout).contains("(taken back)"));
}

#[test]
fn a_file_changed_since_makes_undo_refuse_unless_forced() {
    if !supported() {
        return;
    }
    let world = World::new();
    world.sandboxed("sed -i 's/a()/b()/' src/lib.rs");
    std::fs::write(world.project.join("src/lib.rs"), "the user's own edit\n").unwrap();
    let refused = world.agent_guard(&["undo"]);
    assert_eq!(refused.status.code(), Some(1));
    let said = text(&refused.stderr);
    assert!(
        said.contains("`src/lib.rs` was changed since run 1 by something else"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(world.project.join("src/lib.rs")).unwrap(),
        "the user's own edit\n"
    );
    let forced = world.agent_guard(&["undo", "--force"]);
    assert!(forced.status.success(), "{}", text(&forced.stderr));
    assert_eq!(
        std::fs::read_to_string(world.project.join("src/lib.rs")).unwrap(),
        "pub fn a() {}\n"
    );
}

#[test]
fn a_read_only_run_and_a_run_that_changes_nothing_record_nothing() {
    if !supported() {
        return;
    }
    let world = World::new();
    let read = world.agent_guard(&["sandbox", "--", "cat", "src/lib.rs"]);
    assert!(read.status.success());
    let quiet = world.sandboxed("true");
    assert!(
        !text(&quiet.stderr).contains("undo id"),
        "{}",
        text(&quiet.stderr)
    );
    let list = world.agent_guard(&["undo", "--list"]);
    assert!(text(&list.stdout).contains("no run"), "{}", text(&list.stdout));
}

#[test]
fn snapshots_off_leave_no_store() {
    if !supported() {
        return;
    }
    let world = World::new();
    let root = world.project.to_string_lossy().into_owned();
    let ran = Command::new(BIN)
        .args([
            "sandbox",
            "--profile",
            "workspace-write",
            "--root",
            &root,
            "--",
            "rm",
            "src/lib.rs",
        ])
        .current_dir(&world.project)
        .env("HOME", &world.home)
        .env("AGENT_GUARD_UNDO", "off")
        .output()
        .unwrap();
    assert!(ran.status.success());
    assert!(!text(&ran.stderr).contains("undo id"));
    assert!(!world.project.join(".agent-guard/undo").exists());
}

/// Every file below `dir`, with its contents (unreadable ones marked), for comparing a directory before and after.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_else(|_| b"unreadable".to_vec());
                out.push((path, bytes));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn snapshots_stay_in_the_project_out_of_the_commands_reach() {
    if !supported() {
        return;
    }
    for namespaces in [true, false] {
        snapshots_stay_out_of_reach(namespaces);
    }
}

fn snapshots_stay_out_of_reach(namespaces: bool) {
    let world = World::new();
    std::fs::create_dir_all(world.home.join(".cache")).unwrap();
    std::fs::write(world.home.join(".profile"), "# the user's\n").unwrap();
    let home_before = files(&world.home);
    let out = world.sandboxed_in("echo changed > src/lib.rs", namespaces);
    assert!(text(&out.stderr).contains("undo id 1"), "{}", text(&out.stderr));
    // A run in the sandbox changes nothing of the home directory: the snapshots are the project's.
    assert_eq!(files(&world.home), home_before);
    let stores = world.project.join(".agent-guard/undo");
    assert!(stores.is_dir());
    // The command cannot reach the store: neither write into it, nor remove it, nor move it away.
    for line in [
        "for f in $(find .agent-guard/undo -type f); do echo x > \"$f\"; done; true",
        "rm -rf .agent-guard/undo; true",
        "mv .agent-guard .moved; true",
        "echo y > .agent-guard/undo/planted; true",
    ] {
        world.sandboxed_in(line, namespaces);
        assert!(!stores.join("planted").exists(), "`{line}` wrote into the store");
        assert!(!world.project.join(".moved").exists(), "`{line}` moved the store");
        assert!(
            files(&stores).iter().any(|(path, _)| path.ends_with("HEAD")),
            "`{line}` removed the store"
        );
    }
    // Nor read it: the store holds copies of what rules and the kernel keep from the command (where Landlock works
    // alone, the names of its directories can be listed, none of its files read).
    world.sandboxed_in(
        "cat .agent-guard/undo/*/config > src/read.txt 2>/dev/null; cat .agent-guard/undo/*/HEAD .agent-guard/undo/*/runs/* >> src/read.txt 2>/dev/null; true",
        namespaces,
    );
    assert_eq!(
        std::fs::read_to_string(world.project.join("src/read.txt")).unwrap(),
        ""
    );
    assert!(world.project.join(".agent-guard").is_dir());
    assert!(!world.project.join(".moved").exists());
    // The first run is still there to take back.
    let undo = world.agent_guard(&["undo", "--id", "1", "--force"]);
    assert!(undo.status.success(), "{}", text(&undo.stderr));
    assert_eq!(
        std::fs::read_to_string(world.project.join("src/lib.rs")).unwrap(),
        "pub fn a() {}\n"
    );
}

#[test]
fn explain_says_whether_a_writing_line_is_snapshotted() {
    let world = World::new();
    let explain = |undo: &str| {
        let out = Command::new(BIN)
            .args(["explain", "-c", "rm -rf src", "--mode", "bypassPermissions"])
            .current_dir(&world.project)
            .env("HOME", &world.home)
            .env_remove("XDG_STATE_HOME")
            .env_remove("AGENT_GUARD_UNDO_DIR")
            .env("AGENT_GUARD_UNDO", undo)
            .output()
            .unwrap();
        text(&out.stdout)
    };
    let on = explain("on");
    assert!(
        on.contains("\nundo: `") && on.contains("`agent-guard undo --id ID` takes it back"),
        "{on}"
    );
    let off = explain("off");
    assert!(off.contains("\nundo: off: no snapshot is taken"), "{off}");
    let read_only = Command::new(BIN)
        .args(["explain", "-c", "ls"])
        .current_dir(&world.project)
        .env("HOME", &world.home)
        .output()
        .unwrap();
    assert!(
        !text(&read_only.stdout).contains("\nundo:"),
        "a read-only line writes nothing to take back"
    );
}

/// A directory that is no project (no `.git`, `.claude` or `.agent-guard`) is not made one: its runs are kept in
/// the home directory's `.agent-guard/undo/`, as its audit log is.
#[test]
fn a_directory_that_is_no_project_keeps_its_runs_in_the_home_directory() {
    if !supported() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (home, plain) = (dir.path().join("home"), dir.path().join("plain"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::write(plain.join("notes.md"), "before\n").unwrap();
    let ran = Command::new(BIN)
        .args([
            "sandbox",
            "--profile",
            "workspace-write",
            "--",
            "bash",
            "-c",
            "echo after > notes.md",
        ])
        .current_dir(&plain)
        .env("HOME", &home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("AGENT_GUARD_UNDO_DIR")
        .env_remove("AGENT_GUARD_UNDO")
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", text(&ran.stderr));
    assert!(text(&ran.stderr).contains("undo id 1"), "{}", text(&ran.stderr));
    assert!(!plain.join(".agent-guard").exists());
    assert!(home.join(".agent-guard/undo").is_dir());
    let undo = Command::new(BIN)
        .args(["undo", "--id", "1"])
        .current_dir(&plain)
        .env("HOME", &home)
        .env_remove("AGENT_GUARD_UNDO_DIR")
        .output()
        .unwrap();
    assert!(undo.status.success(), "{}", text(&undo.stderr));
    assert_eq!(
        std::fs::read_to_string(plain.join("notes.md")).unwrap(),
        "before\n"
    );
}

/// A call the hook lets run under the `workspace-write` sandbox is linked to what it changed: the line it hands
/// back names the call's key (the coding agent's `tool_use_id`, or one made for a call without it), the runs
/// `agent-guard undo` records carry the key, the call's row of the audit log keeps it, and `explain --audit-id`
/// shows the run's undo id beside the call.
#[test]
fn a_hook_call_is_linked_to_its_undo_run_in_the_audit_log() {
    if !supported() {
        return;
    }
    let world = World::new();
    let check = |input: serde_json::Value| {
        let mut child = Command::new(BIN)
            .arg("check")
            .current_dir(&world.project)
            .env("HOME", &world.home)
            .env_remove("XDG_STATE_HOME")
            .env_remove("AGENT_GUARD_UNDO_DIR")
            .env_remove("AGENT_GUARD_UNDO")
            .env_remove("AGENT_GUARD_AUDIT")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        answer["hookSpecificOutput"].clone()
    };
    let input = |command: &str, id: Option<&str>| {
        let mut input = serde_json::json!({
            "session_id": "linked",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "cwd": world.project,
            "hook_event_name": "PreToolUse",
            "permission_mode": "acceptEdits",
        });
        if let Some(id) = id {
            input["tool_use_id"] = id.into();
        }
        input
    };
    let hook = check(input("rm -rf src/deep", Some("toolu_01Linked")));
    assert_eq!(hook["permissionDecision"], "allow", "{hook}");
    let line = hook["updatedInput"]["command"].as_str().unwrap().to_owned();
    assert!(line.contains(" sandbox --call 'toolu_01Linked' "), "{line}");
    let ran = Command::new("bash")
        .args(["-c", &line])
        .current_dir(&world.project)
        .env("HOME", &world.home)
        .env_remove("AGENT_GUARD_UNDO")
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", text(&ran.stderr));
    assert!(!world.project.join("src/deep").exists());

    let audit = world.agent_guard(&["audit", "--json"]);
    let rows: Vec<serde_json::Value> = text(&audit.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let row = rows
        .iter()
        .find(|row| row["call"] == "toolu_01Linked")
        .unwrap_or_else(|| panic!("no row keeps the call's key: {rows:?}"));
    let id = row["id"].as_i64().unwrap().to_string();
    let explained = world.agent_guard(&["explain", "--audit-id", &id]);
    let said = text(&explained.stdout);
    assert!(
        said.contains("undo id 1 of `") && said.contains("agent-guard undo --root"),
        "{said}{}",
        text(&explained.stderr)
    );
    let listed = world.agent_guard(&["undo", "--list"]);
    assert!(
        text(&listed.stdout).contains("rm -rf src/deep"),
        "{}",
        text(&listed.stdout)
    );

    // Without the coding agent's id, agent-guard makes a key; a read-only line names none (nothing is recorded).
    let made = check(input("rm -rf src", None));
    let line = made["updatedInput"]["command"].as_str().unwrap();
    assert!(line.contains(" sandbox --call 'ag-"), "{line}");
    let read = check(input("ls src", Some("toolu_02Read")));
    let line = read["updatedInput"]["command"].as_str().unwrap();
    assert!(!line.contains("--call"), "{line}");
}

/// The store of the project's root, once a snapshot made it.
fn store_of(project: &Path) -> PathBuf {
    std::fs::read_dir(project.join(".agent-guard/undo"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.is_dir())
        .unwrap()
}

/// A run that writes a file of the roots through a name of its own making is recorded, or cannot write it, with
/// the change watcher serving the snapshots: a write raises events for the name written through only, so a new
/// name for a file (a hard link, in a watched directory or an ignored one) would let the run change it unseen. A
/// write through a symbolic link is the target's own event.
#[test]
fn a_file_written_through_a_name_of_the_runs_making_is_recorded_or_untouched() {
    if !supported() {
        return;
    }
    for namespaces in [true, false] {
        let world = World::new();
        std::fs::write(world.project.join(".gitignore"), "/target/\n").unwrap();
        std::fs::create_dir(world.project.join("target")).unwrap();
        std::fs::write(world.project.join("src/wip.rs"), "// uncommitted work\n").unwrap();
        // Warm runs, until the watcher serves a snapshot (it starts with the first).
        let mut served = false;
        let started = std::time::Instant::now();
        for n in 0.. {
            world.sandboxed_in(&format!("echo {n} > src/t.txt"), namespaces);
            let state = std::fs::read_to_string(store_of(&world.project).join("watch-state.json"))
                .unwrap_or_default();
            if state.contains("\"walked\":false") {
                served = true;
                break;
            }
            if started.elapsed() > std::time::Duration::from_secs(20) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        if !served {
            eprintln!("no change watcher served a snapshot here (namespaces: {namespaces}): skipped");
            continue;
        }
        for (line, file, was) in [
            (
                "ln src/wip.rs src/.w && : > src/.w; rm -f src/.w; true",
                "src/wip.rs",
                "// uncommitted work\n",
            ),
            (
                "ln src/lib.rs target/x && echo evil > target/x; rm -f target/x; true",
                "src/lib.rs",
                "pub fn a() {}\n",
            ),
            (
                "ln -s wip.rs src/.s && echo evil > src/.s; rm -f src/.s; true",
                "src/wip.rs",
                "// uncommitted work\n",
            ),
        ] {
            let ran = world.sandboxed_in(line, namespaces);
            let now = std::fs::read_to_string(world.project.join(file)).unwrap();
            if now == was {
                continue;
            }
            assert!(
                text(&ran.stderr).contains("undo id"),
                "`{line}` changed {file} unrecorded (namespaces: {namespaces}): {}",
                text(&ran.stderr)
            );
            let undo = world.agent_guard(&["undo"]);
            assert!(undo.status.success(), "{}", text(&undo.stderr));
            assert_eq!(
                std::fs::read_to_string(world.project.join(file)).unwrap(),
                was,
                "`{line}`"
            );
        }
    }
}

/// A file whose content the snapshots did not keep (too large to hash) is one `agent-guard undo` cannot put back:
/// a line that removes it is no contained allow, while one that removes what undo keeps still is.
#[test]
fn a_file_too_large_to_keep_is_no_contained_removal() {
    if !supported() {
        return;
    }
    let world = World::new();
    let ran = world.sandboxed("mkdir data && truncate -s 300M data/big.bin");
    assert!(text(&ran.stderr).contains("undo id 1"), "{}", text(&ran.stderr));
    let decide = |command: &str| {
        let mut child = Command::new(BIN)
            .arg("check")
            .current_dir(&world.project)
            .env("HOME", &world.home)
            .env_remove("XDG_STATE_HOME")
            .env_remove("AGENT_GUARD_UNDO_DIR")
            .env_remove("AGENT_GUARD_UNDO")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let input = serde_json::json!({
            "session_id": "kept",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "cwd": world.project,
            "hook_event_name": "PreToolUse",
            "permission_mode": "acceptEdits",
        });
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        answer["hookSpecificOutput"].clone()
    };
    let kept = decide("rm -rf src/deep");
    assert_eq!(kept["permissionDecision"], "allow", "{kept}");
    let big = decide("rm -rf data");
    assert_ne!(big["permissionDecision"], "allow", "{big}");
}
