//! The kernel sandbox for real: `agent-guard sandbox` runs hostile commands against planted secrets, a project,
//! a TCP and a UDP listener, as the current user and (when the tests run as root) as an unprivileged one; the
//! hook's `updatedInput` runs the original line byte for byte; everyday read-only commands print what they print
//! outside the sandbox.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::io::{Read, Write};
use std::net::{TcpListener, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use poll::wait_until;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_agent-guard");
const NOBODY: u32 = 65_534;

#[path = "../../../tests/support/need.rs"]
mod need;
#[path = "../../../tests/support/scratch.rs"]
mod scratch;

use scratch::{chown_all, is_root, text};
#[path = "../../../tests/support/poll.rs"]
mod poll;

/// Whether the kernel sandbox can be tested here. When `agent-guard sandbox --probe` says the kernel cannot
/// enforce it, the test says it is skipped, or fails under `AGENT_GUARD_REQUIRE_SANDBOX=1`.
fn supported() -> bool {
    need::SANDBOX.met(probe_missing())
}

/// What `agent-guard sandbox --probe` says stands in the way of enforcement, or `None` when the kernel enforces
/// the sandbox.
fn probe_missing() -> Option<String> {
    need::sandbox_probe(BIN).1
}
/// A scratch world: a home with planted credentials, a project with a secret and a git repository, a directory
/// outside the roots. Everything is world-readable up to the secrets' own modes and owned by `owner`.
struct World {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    outside: PathBuf,
    owner: Option<u32>,
    /// Whether the sandbox may use namespaces; without, Landlock and seccomp confine the command alone.
    namespaces: bool,
}

const SECRETS: [&str; 4] = ["SSH-PRIVATE-KEY", "AWS-SECRET", "DOTENV-SECRET", "OUTSIDE-SECRET"];

impl World {
    fn new(owner: Option<u32>, namespaces: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        let outside = dir.path().join("outside");
        for sub in [
            home.join(".ssh"),
            home.join(".aws"),
            project.join("src"),
            project.join(".git"),
            outside.clone(),
        ] {
            std::fs::create_dir_all(sub).unwrap();
        }
        std::fs::write(home.join(".ssh/id_rsa"), SECRETS[0]).unwrap();
        std::fs::write(home.join(".aws/credentials"), SECRETS[1]).unwrap();
        std::fs::write(home.join(".bashrc"), "# rc\n").unwrap();
        std::fs::write(project.join(".env"), SECRETS[2]).unwrap();
        std::fs::write(project.join("src/lib.rs"), "pub fn hello() {}\n").unwrap();
        std::fs::write(project.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(outside.join("notes.txt"), SECRETS[3]).unwrap();
        let world = Self {
            _dir: dir,
            home,
            project,
            outside,
            owner,
            namespaces,
        };
        if let Some(uid) = owner {
            chown_all(world._dir.path(), uid);
        }
        world
    }

    /// `agent-guard sandbox` with `args`, HOME set, credentials planted in the environment, as `owner`.
    fn sandbox(&self, args: &[&str]) -> Output {
        let mut command = Command::new(BIN);
        command
            .arg("sandbox")
            .args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env("GITHUB_TOKEN", "ghp_PLANTEDTOKEN")
            .env("ANTHROPIC_API_KEY", "sk-ant-PLANTED")
            .env("AWS_SECRET_ACCESS_KEY", "PLANTEDAWSKEY")
            .env("DATABASE_URL", "postgres://app:PLANTEDPW@db/app")
            .env("MYSQL_PWD", "PLANTEDMYSQL")
            .env("BUILD_LABEL", "ghp_PLANTEDNEUTRALNAME0123456789")
            .stdin(Stdio::null());
        if !self.namespaces {
            command.env("AGENT_GUARD_SANDBOX_NAMESPACES", "off");
        }
        if let Some(uid) = self.owner {
            command.uid(uid).gid(uid);
        }
        command.output().unwrap()
    }

    fn run(&self, profile: &str, line: &str) -> Output {
        self.sandbox(&["--profile", profile, "--", "bash", "-c", line])
    }
}
/// The worlds to prove the sandbox in: this user and (when the tests run as root) an unprivileged one, each with
/// namespaces and with Landlock and seccomp alone.
fn worlds() -> Vec<World> {
    let users = if is_root() {
        vec![None, Some(NOBODY)]
    } else {
        vec![None]
    };
    users
        .into_iter()
        .flat_map(|owner| [true, false].map(|namespaces| World::new(owner, namespaces)))
        .collect()
}

/// A TCP and a UDP listener on loopback that record whatever reaches them.
struct Listeners {
    tcp_port: u16,
    udp_port: u16,
    stop: Arc<AtomicBool>,
    recorder: Option<JoinHandle<Vec<String>>>,
}

impl Listeners {
    fn start() -> Self {
        let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        tcp.set_nonblocking(true).unwrap();
        udp.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let (tcp_port, udp_port) = (tcp.local_addr().unwrap().port(), udp.local_addr().unwrap().port());
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let recorder = std::thread::spawn(move || {
            let mut seen = Vec::new();
            let mut buffer = [0u8; 256];
            loop {
                // Read before each pass: the pass after the stop still drains what reached the sockets before it.
                let stop = stopping.load(Ordering::Acquire);
                let mut got_any = false;
                if let Ok((mut stream, _)) = tcp.accept() {
                    let mut got = String::new();
                    let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
                    let _ = stream.read_to_string(&mut got);
                    seen.push(format!("tcp: {got}"));
                    got_any = true;
                }
                if let Ok((n, _)) = udp.recv_from(&mut buffer) {
                    seen.push(format!("udp: {}", String::from_utf8_lossy(&buffer[..n])));
                    got_any = true;
                }
                if stop && !got_any {
                    return seen;
                }
            }
        });
        Self {
            tcp_port,
            udp_port,
            stop,
            recorder: Some(recorder),
        }
    }

    /// Everything that reached the listeners so far. A connection or datagram sent before this call is in the
    /// kernel's queues by then, and the recorder drains them before it stops.
    fn seen(mut self) -> Vec<String> {
        self.stop.store(true, Ordering::Release);
        self.recorder.take().unwrap().join().unwrap()
    }
}

impl Drop for Listeners {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

#[test]
fn read_only_keeps_secrets_writes_and_the_network_out() {
    if !supported() {
        return;
    }
    for world in worlds() {
        let owner = (world.owner, world.namespaces);
        let listeners = Listeners::start();
        let stray = std::env::temp_dir().join(format!("agent-guard-stray-{}", std::process::id()));
        let line = format!(
            "cat src/lib.rs; \
             cat ~/.ssh/id_rsa; cat ~/.aws/credentials; cat .env; cat {outside}/notes.txt; \
             base64 < .env; grep -r SECRET . ~ {outside}; \
             echo x > src/new.rs; echo x >> src/lib.rs; echo x > {stray}; echo x > ~/.bashrc; touch ~/new; \
             mkdir {outside}/made; rm -f src/lib.rs; \
             echo hello > /dev/tcp/127.0.0.1/{tcp}; echo hello > /dev/udp/127.0.0.1/{udp}; \
             env; cat /proc/1/environ; echo done",
            outside = world.outside.display(),
            stray = stray.display(),
            tcp = listeners.tcp_port,
            udp = listeners.udp_port,
        );
        let output = world.run("read-only", &line);
        let all = text(&output);
        assert!(all.contains("pub fn hello"), "a project file reads: {all}");
        assert!(all.contains("done"), "{all}");
        for secret in SECRETS {
            assert!(!all.contains(secret), "{owner:?} leaked {secret}: {all}");
        }
        for planted in [
            "ghp_PLANTEDTOKEN",
            "sk-ant-PLANTED",
            "PLANTEDAWSKEY",
            "PLANTEDPW",
            "PLANTEDMYSQL",
            "PLANTEDNEUTRALNAME",
        ] {
            assert!(!all.contains(planted), "{owner:?} leaked {planted}: {all}");
        }
        assert!(!world.project.join("src/new.rs").exists());
        assert_eq!(
            std::fs::read_to_string(world.project.join("src/lib.rs")).unwrap(),
            "pub fn hello() {}\n"
        );
        assert!(!stray.exists(), "{all}");
        assert_eq!(
            std::fs::read_to_string(world.home.join(".bashrc")).unwrap(),
            "# rc\n"
        );
        assert!(!world.home.join("new").exists());
        assert!(!world.outside.join("made").exists());
        // The command has ended: what it sent is in the listeners' queues, no wait needed.
        let seen = listeners.seen();
        assert!(seen.is_empty(), "{owner:?}: {seen:?}");
    }
}

#[test]
fn workspace_write_writes_the_project_but_not_its_protected_paths() {
    if !supported() {
        return;
    }
    for world in worlds() {
        let owner = (world.owner, world.namespaces);
        let output = world.run(
            "workspace-write",
            "echo 'fn main() {}' > src/new.rs; echo evil >> .git/config; mkdir -p .claude; \
             echo '{}' > .claude/settings.json; echo evil >> ~/.bashrc; cat .env; echo done",
        );
        let all = text(&output);
        assert!(all.contains("done"), "{all}");
        assert!(!all.contains(SECRETS[2]), "{all}");
        assert_eq!(
            std::fs::read_to_string(world.project.join("src/new.rs")).unwrap(),
            "fn main() {}\n"
        );
        assert_eq!(
            std::fs::read_to_string(world.project.join(".git/config")).unwrap(),
            "[core]\n"
        );
        assert!(
            !world.project.join(".claude/settings.json").exists(),
            "{owner:?}: {all}"
        );
        assert_eq!(
            std::fs::read_to_string(world.home.join(".bashrc")).unwrap(),
            "# rc\n"
        );
    }
}

#[test]
fn the_configuration_a_command_makes_in_a_git_directory_under_another_name_is_removed() {
    if !supported() {
        return;
    }
    for world in worlds() {
        let owner = (world.owner, world.namespaces);
        // A directory given a `HEAD`, `objects/` and `refs/` is a git directory by what it holds, as a copy of
        // `.git` or its history unpacked elsewhere is: the configuration the command gives it is removed when it
        // ends, the rest stays.
        let output = world.run(
            "workspace-write",
            "mkdir -p src/g/objects src/g/refs && echo 'ref: refs/heads/main' > src/g/HEAD && \
             printf '[core]\\n\\tfsmonitor = x\\n' > src/g/config && mkdir -p src/g/hooks && echo x > src/g/hooks/post-checkout; \
             mkdir -p src/plain && printf 'a: 1\\n' > src/plain/config; echo done",
        );
        let all = text(&output);
        assert!(all.contains("done"), "{owner:?}: {all}");
        assert!(!world.project.join("src/g/config").exists(), "{owner:?}: {all}");
        assert!(!world.project.join("src/g/hooks").exists(), "{owner:?}: {all}");
        assert!(world.project.join("src/g/objects").is_dir(), "{owner:?}: {all}");
        assert!(all.contains("created it at a protected path"), "{owner:?}: {all}");
        // A `config` of an ordinary directory is the project's.
        assert_eq!(
            std::fs::read_to_string(world.project.join("src/plain/config")).unwrap(),
            "a: 1\n"
        );
    }
}

#[test]
fn a_background_loop_leaves_no_process_behind() {
    if !supported() {
        return;
    }
    // With namespaces even a SIGKILL of `agent-guard sandbox` ends everything; without, the coding agent's
    // SIGTERM does.
    for (namespaces, signal) in [(true, "KILL"), (false, "TERM")] {
        let world = World::new(None, namespaces);
        let marker = format!(
            "{}",
            900_000 + std::process::id() % 90_000 + u32::from(namespaces)
        );
        let mut command = Command::new(BIN);
        command
            .args(["sandbox", "--", "bash", "-c"])
            .arg(format!("while true; do sleep {marker} & done"))
            .current_dir(&world.project)
            .env("HOME", &world.home)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if !namespaces {
            command.env("AGENT_GUARD_SANDBOX_NAMESPACES", "off");
        }
        let mut child = command.spawn().unwrap();
        wait_until(Duration::from_secs(30), "the loop never ran", || {
            count_processes(&marker) > 0
        });
        // The coding agent's timeout ends the command it started.
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        child.wait().unwrap();
        wait_until(
            Duration::from_secs(5),
            &format!("namespaces {namespaces}: processes of the loop are left"),
            || count_processes(&marker) == 0,
        );
    }
}

fn count_processes(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(&format!("sleep\0{marker}")))
        })
        .count()
}

/// The hook input of a Bash call in `cwd`.
fn hook_input(cwd: &Path, command: &str) -> String {
    json!({"session_id": "s", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": command, "description": "kept"}})
    .to_string()
}

fn check(home: &Path, input: &str) -> Value {
    let mut child = Command::new(BIN)
        .arg("check")
        .env("HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn the_hook_wraps_an_allowed_line_and_it_runs_byte_for_byte() {
    if !supported() {
        return;
    }
    let world = World::new(None, true);
    let lines = [
        "echo 'single quoted' \"double $HOME-less\" plain",
        "printf '%s\\n' $'tab\\there' \"it's\" 'say \"hi\"'",
        "cat <<'EOF'\nline one\n  'quoted' $NOT_EXPANDED `not run`\nEOF",
        "echo first\necho second",
        "grep -n hello src/lib.rs | wc -l",
        "printf '%s|' a\\ b 'c\\d' \"e\\\\f\"",
    ];
    for line in lines {
        let decided = check(&world.home, &hook_input(&world.project, line));
        let specific = &decided["hookSpecificOutput"];
        assert_eq!(specific["permissionDecision"], "allow", "{line}: {decided}");
        let updated = &specific["updatedInput"];
        assert_eq!(updated["description"], "kept", "other fields stay: {decided}");
        let wrapped = updated["command"].as_str().unwrap();
        assert!(wrapped.contains(" sandbox --profile read-only "), "{wrapped}");
        let run = |command: &str| {
            Command::new("bash")
                .arg("-c")
                .arg(command)
                .current_dir(&world.project)
                .env("HOME", &world.home)
                .output()
                .unwrap()
        };
        let direct = run(line);
        let sandboxed = run(wrapped);
        assert_eq!(
            String::from_utf8_lossy(&sandboxed.stdout),
            String::from_utf8_lossy(&direct.stdout),
            "{line}\n{wrapped}\n{}",
            String::from_utf8_lossy(&sandboxed.stderr)
        );
        assert_eq!(sandboxed.status.code(), direct.status.code());
    }
}

#[test]
fn usage_errors_name_the_value() {
    let cases: [(&[&str], &str); 3] = [
        (&["sandbox"], "no command"),
        (&["sandbox", "--profile", "rw", "--", "true"], "`rw`"),
        (
            &["sandbox", "--root", "/no/such/root", "--", "true"],
            "`/no/such/root`",
        ),
    ];
    for (args, named) in cases {
        let output = Command::new(BIN).args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(named), "{args:?}: {stderr}");
    }
}

/// Everyday read-only commands in a real git repository print under `read-only` what they print outside it.
#[test]
fn everyday_read_only_commands_print_the_same_inside() {
    if !supported() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(
        repo.join("src/main.rs"),
        "fn main() {\n    println!(\"hi\");\n}\n",
    )
    .unwrap();
    std::fs::write(repo.join("notes.txt"), "b\na\nc\na\n").unwrap();
    std::fs::write(
        repo.join("data.json"),
        "{\"name\": \"x\", \"items\": [1, 2, 3]}\n",
    )
    .unwrap();
    std::fs::write(
        repo.join("Cargo.toml"),
        "[package]\nname = \"repo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@e",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(&repo)
            .output()
            .unwrap();
        assert!(status.status.success(), "{status:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "first"]);
    std::fs::write(repo.join("notes.txt"), "b\na\nc\na\nd\n").unwrap();
    git(&["commit", "-qam", "second"]);
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut commands: Vec<&str> = vec![
        "git log --oneline --format=%s",
        "git log -p -1 --format=%s",
        "git diff HEAD~1 --stat",
        "git diff HEAD~1",
        "git status --short",
        "git show --stat --format=%s HEAD",
        "git blame -s notes.txt | cut -c10-",
        "git ls-files",
        "git branch --show-current",
        "git rev-list --count HEAD",
        "git grep -n println",
        "ls",
        "ls -1 src",
        "find . -name '*.rs' -not -path './.git/*'",
        "grep -rn println src",
        "sed -n 2p src/main.rs",
        "awk '{print NR\": \"$0}' notes.txt",
        "wc -l notes.txt src/main.rs",
        "head -2 notes.txt",
        "tail -1 notes.txt",
        "sort notes.txt",
        "sort -u notes.txt | uniq -c",
        "cut -c1 notes.txt",
        "tr a-z A-Z < notes.txt",
        "cat -n src/main.rs",
        "diff notes.txt src/main.rs; true",
        "md5sum notes.txt",
        "sha256sum notes.txt",
        "basename src/main.rs",
        "dirname src/main.rs",
        "pwd",
        "echo hello; printf '%05d\\n' 42",
        "seq 5 | paste -sd+",
        "expr 6 \\* 7",
        "uname -s",
        "tac notes.txt",
        "nl notes.txt",
        "rev notes.txt",
        "od -c notes.txt | head -2",
        "base64 notes.txt",
        "xxd notes.txt",
        "file src/main.rs",
        "du -s src | cut -f2",
        "test -f notes.txt && echo present",
        "stat -c %s notes.txt",
        "bash --version | head -1",
        "git --version",
        "cargo metadata --offline --no-deps --format-version 1 | jq -r '.packages[0].name'",
        "jq .items data.json",
        "python3 -c 'print(1)'",
        "node -e 'console.log(2)'",
        "node -v",
    ];
    commands.retain(|command| {
        let program = command.split_whitespace().next().unwrap_or_default();
        Command::new("bash")
            .args(["-c", &format!("command -v {program}")])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    assert!(
        commands.len() >= 40,
        "only {} of the commands exist here",
        commands.len()
    );
    for command in commands {
        let outside = Command::new("bash")
            .args(["-c", command])
            .current_dir(&repo)
            .env("HOME", &home)
            .output()
            .unwrap();
        let inside = Command::new(BIN)
            .args(["sandbox", "--profile", "read-only", "--", "bash", "-c", command])
            .current_dir(&repo)
            .env("HOME", &home)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&inside.stdout),
            String::from_utf8_lossy(&outside.stdout),
            "`{command}` differs under read-only; stderr: {}",
            String::from_utf8_lossy(&inside.stderr)
        );
        assert_eq!(inside.status.code(), outside.status.code(), "`{command}`");
    }
}

/// Protected paths a writing command creates, at any depth and in the tools' caches, are gone when it ends, also
/// when it is told to stop half way.
#[test]
fn protected_paths_a_command_creates_do_not_outlive_it() {
    if !supported() {
        return;
    }
    for world in worlds() {
        let owner = (world.owner, world.namespaces);
        std::fs::create_dir_all(world.home.join(".cargo")).unwrap();
        if let Some(uid) = world.owner {
            chown_all(&world.home, uid);
        }
        let output = world.run(
            "workspace-write",
            "mkdir -p src/deep/.claude && echo '{}' > src/deep/.claude/settings.json; \
             mkdir -p src/nested && git init -q src/nested; \
             printf '[build]\\nrustc-wrapper = \"/tmp/x\"\\n' > ~/.cargo/config; echo done",
        );
        let all = text(&output);
        assert!(all.contains("done"), "{owner:?}: {all}");
        assert!(
            !world.project.join("src/deep/.claude").exists(),
            "{owner:?}: {all}"
        );
        assert!(
            !world.project.join("src/nested/.git").exists(),
            "{owner:?}: {all}"
        );
        assert!(!world.home.join(".cargo/config").exists(), "{owner:?}: {all}");
        assert!(all.contains("removed"), "{owner:?}: {all}");
    }
    // Stopped half way: the clean-up still runs before `agent-guard sandbox` dies of the signal.
    let world = World::new(None, true);
    let child = Command::new(BIN)
        .args(["sandbox", "--profile", "workspace-write", "--", "bash", "-c"])
        .arg("mkdir .claude && echo '{}' > .claude/settings.json && sleep 600")
        .current_dir(&world.project)
        .env("HOME", &world.home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(Duration::from_secs(30), "the command never wrote", || {
        world.project.join(".claude/settings.json").exists()
    });
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    assert!(!world.project.join(".claude").exists(), "{}", text(&output));
}

/// A protected name given to an older file or directory (a rename, a hard link) is a name the command made, a
/// directory the command made unreadable hides nothing from the scan after it, and the start-up files and program
/// folders in the writable caches are taken back while the rest of a cache stays.
#[test]
fn renamed_linked_hidden_and_cached_protected_paths_are_taken_back() {
    if !supported() {
        return;
    }
    for world in worlds() {
        let owner = (world.owner, world.namespaces);
        // Older than the run: their birth times are before it starts.
        std::fs::create_dir_all(world.project.join("src/old")).unwrap();
        std::fs::write(world.project.join("src/old/settings.json"), "{}").unwrap();
        std::fs::write(world.project.join("src/hooks.sh"), "#!/bin/sh\n").unwrap();
        std::fs::create_dir_all(world.home.join(".cargo")).unwrap();
        std::fs::write(world.home.join(".cargo/notes.toml"), "[build]\n").unwrap();
        std::fs::create_dir_all(world.home.join(".cache/pip")).unwrap();
        std::fs::create_dir_all(world.home.join(".yarn")).unwrap();
        if let Some(uid) = world.owner {
            chown_all(world.project.parent().unwrap(), uid);
        }
        // Not a wait for a condition: the files' birth times must fall before the run's start, on a clock whose
        // ticks may be coarse.
        std::thread::sleep(Duration::from_millis(20));
        let output = world.run(
            "workspace-write",
            "mv src/old .claude; ln src/hooks.sh .envrc; mv ~/.cargo/notes.toml ~/.cargo/config; \
             mkdir -p src/hide/.git && echo x > src/hide/.git/config && chmod 000 src/hide; \
             mkdir -p .agent-guard && echo x > .agent-guard/hook; \
             echo x > ~/.cache/p10k-instant-prompt-u.zsh; echo x > ~/.cargo/env.fish; \
             mkdir -p ~/.yarn/bin && echo x > ~/.yarn/bin/yarn; echo kept > ~/.cache/pip/build.log; \
             chmod 100 .; echo done",
        );
        let all = text(&output);
        assert!(all.contains("done"), "{owner:?}: {all}");
        for gone in [
            world.project.join(".claude"),
            world.project.join(".envrc"),
            world.project.join("src/hide/.git"),
            // agent-guard's own directory may be there already (undo keeps its snapshots in it): what the command
            // wrote into it is not.
            world.project.join(".agent-guard/hook"),
            world.home.join(".cargo/config"),
            world.home.join(".cache/p10k-instant-prompt-u.zsh"),
            world.home.join(".cargo/env.fish"),
            world.home.join(".yarn/bin"),
        ] {
            assert!(
                std::fs::symlink_metadata(&gone).is_err(),
                "{owner:?}: {} outlived the command: {all}",
                gone.display()
            );
        }
        // What is not protected stays, renamed or not.
        assert!(world.project.join("src/hooks.sh").exists(), "{owner:?}: {all}");
        assert!(world.project.join("src/lib.rs").exists(), "{owner:?}: {all}");
        // The shared cache is never written: with namespaces the log went to the project's layer of it.
        assert!(
            !world.home.join(".cache/pip/build.log").exists(),
            "{owner:?}: {all}"
        );
    }
}

/// Of the home directory, `workspace-write` writes only the package caches, and those only through the project's
/// layer where namespaces exist (the shared cache is never changed): not what a shell sources at start (`~/.cache`
/// holds completion dumps and plugin managers' scripts), nor a tool's settings beside its cache
/// (`~/.gradle/gradle.properties`).
#[test]
fn of_the_home_directory_only_package_caches_are_written() {
    if !supported() {
        return;
    }
    for world in worlds() {
        let owner = (world.owner, world.namespaces);
        for dir in [".cache/zsh", ".cache/pip", ".gradle/caches"] {
            std::fs::create_dir_all(world.home.join(dir)).unwrap();
        }
        if let Some(uid) = world.owner {
            chown_all(&world.home, uid);
        }
        let output = world.run(
            "workspace-write",
            "echo x > ~/.cache/zsh/zcompdump; mkdir -p ~/.cache/antidote; echo y > ~/.gradle/gradle.properties; \
             echo kept > ~/.cache/pip/ok; echo kept > ~/.gradle/caches/ok; \
             cat ~/.cache/pip/ok ~/.gradle/caches/ok | grep -c kept; echo done",
        );
        let all = text(&output);
        assert!(all.contains("done"), "{owner:?}: {all}");
        for never in [
            ".cache/zsh/zcompdump",
            ".cache/antidote",
            ".gradle/gradle.properties",
        ] {
            assert!(
                std::fs::symlink_metadata(world.home.join(never)).is_err(),
                "{owner:?}: {never} was written: {all}"
            );
        }
        for cached in [".cache/pip/ok", ".gradle/caches/ok"] {
            assert!(!world.home.join(cached).exists(), "{owner:?}: {cached}: {all}");
        }
        // With namespaces the caches' writes succeed (in the project's layer); without, the caches are read-only.
        let written = if world.namespaces { "2\n" } else { "0\n" };
        assert!(
            String::from_utf8_lossy(&output.stdout).starts_with(written),
            "{owner:?}: {all}"
        );
    }
}

/// The command has no controlling terminal (nothing can be typed into the user's shell or read from it through
/// `/dev/tty`) and cannot make a user namespace.
#[test]
fn no_terminal_and_no_user_namespace_inside() {
    if !supported() {
        return;
    }
    let world = World::new(None, true);
    let line = "(exec 3>/dev/tty) 2>/dev/null && echo TTY-OPEN || echo tty-closed; \
                unshare -U true 2>/dev/null && echo USERNS || echo no-userns";
    let output = world.run("read-only", line);
    let all = text(&output);
    assert!(all.contains("tty-closed") && all.contains("no-userns"), "{all}");
    // Under a terminal of its own too (`script` gives the sandbox a controlling terminal to lose).
    let script = Command::new("script").arg("--version").output();
    if script.is_ok_and(|o| o.status.success()) {
        let inner = format!(
            "{BIN} sandbox -- bash -c '(exec 3>/dev/tty) 2>/dev/null && echo TTY-OPEN || echo tty-closed'"
        );
        let output = Command::new("script")
            .args(["-qec", &inner, "/dev/null"])
            .current_dir(&world.project)
            .env("HOME", &world.home)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let all = text(&output);
        assert!(all.contains("tty-closed") && !all.contains("TTY-OPEN"), "{all}");
    }
}

/// A repository's own settings cannot switch the sandbox off for its commands.
#[test]
fn a_repository_cannot_switch_the_sandbox_off() {
    if !supported() {
        return;
    }
    let world = World::new(None, true);
    std::fs::create_dir_all(world.project.join(".claude")).unwrap();
    std::fs::write(
        world.project.join(".claude/settings.json"),
        r#"{"agentGuard": {"sandbox": "off", "sandboxEnv": {"keep": ["GITHUB_TOKEN"]}}}"#,
    )
    .unwrap();
    let decided = check(&world.home, &hook_input(&world.project, "ls"));
    let specific = &decided["hookSpecificOutput"];
    assert_eq!(specific["permissionDecision"], "allow", "{decided}");
    assert!(specific["updatedInput"]["command"].is_string(), "{decided}");
}

/// What Landlock does not govern is kept out too: modes, times and extended attributes of files outside the
/// writable places; the programs and configuration inside the caches; a protected path hidden in a directory the
/// command tagged as a cache itself; credential files under names the secret list does not know.
#[test]
fn metadata_cache_programs_and_tagged_hiding_places_are_out_of_reach() {
    if !supported() {
        return;
    }
    for world in worlds() {
        let owner = (world.owner, world.namespaces);
        for dir in [".rustup/toolchains/stable/bin", "go/bin", ".config/containers"] {
            std::fs::create_dir_all(world.home.join(dir)).unwrap();
        }
        std::fs::write(
            world.home.join(".rustup/toolchains/stable/bin/rustc"),
            "#!/bin/sh\necho real\n",
        )
        .unwrap();
        std::fs::write(
            world.home.join(".config/containers/auth.json"),
            "REGISTRY-AUTH-SECRET",
        )
        .unwrap();
        if let Some(uid) = world.owner {
            chown_all(&world.home, uid);
        }
        let outside_note = world.outside.join("notes.txt");
        let line = format!(
            "chmod 666 ~/.bashrc {note}; touch -d 1990-01-01 ~/.bashrc; cat ~/.config/containers/auth.json; \
             echo trojan > ~/.rustup/toolchains/stable/bin/rustc; echo trojan > ~/go/bin/tool; \
             mkdir -p tools/.claude && touch tools/CACHEDIR.TAG && echo '{{}}' > tools/.claude/settings.json; \
             echo done",
            note = outside_note.display()
        );
        for profile in ["read-only", "workspace-write"] {
            let output = world.run(profile, &line);
            let all = text(&output);
            assert!(all.contains("done"), "{owner:?} {profile}: {all}");
            assert!(
                !all.contains("REGISTRY-AUTH-SECRET"),
                "{owner:?} {profile}: {all}"
            );
            let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
            if world.namespaces || profile == "read-only" {
                assert_ne!(
                    mode(&world.home.join(".bashrc")),
                    0o666,
                    "{owner:?} {profile}: {all}"
                );
                assert_ne!(mode(&outside_note), 0o666, "{owner:?} {profile}: {all}");
            }
            assert_eq!(
                std::fs::read_to_string(world.home.join(".rustup/toolchains/stable/bin/rustc")).unwrap(),
                "#!/bin/sh\necho real\n",
                "{owner:?} {profile}"
            );
            assert!(!world.home.join("go/bin/tool").exists(), "{owner:?} {profile}");
            assert!(
                !world.project.join("tools/.claude").exists(),
                "{owner:?} {profile}: {all}"
            );
        }
    }
}
