//! The resource bounds of `agent-guard sandbox` for real: a runaway allocation and an endless sort end at a low
//! memory bound within seconds, with a message naming the bound and its setting where the kernel tells which bound
//! it was, and leave no process, scratch directory or cgroup behind; the CPU-time and file-size bounds end a
//! command with a message naming them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use poll::wait_until;

const BIN: &str = env!("CARGO_BIN_EXE_agent-guard");
const NOBODY: u32 = 65_534;

/// The bound of these tests: low, so that reaching it is quick.
const BOUND: &str = "256MiB";
const BOUND_MESSAGE: &str =
    "agent-guard: the command used more than 256 MiB of memory (agentGuard.sandbox.memoryMax)";

#[path = "../../../tests/support/need.rs"]
mod need;
#[path = "../../../tests/support/scratch.rs"]
mod scratch;

use scratch::is_root;
#[path = "../../../tests/support/poll.rs"]
mod poll;

/// What `agent-guard sandbox --probe` reports, when the kernel enforces the sandbox; `None` (after saying the test
/// is skipped, or failing under `AGENT_GUARD_REQUIRE_SANDBOX=1`) when it does not.
fn probe() -> Option<String> {
    need::sandbox_report(BIN)
}
/// Whether a program the test runs inside the sandbox is installed; the test says it is skipped otherwise.
fn installed(program: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()));
    if !found {
        eprintln!(
            "skipped: {} needs `{program}`, which is not installed",
            current_test()
        );
    }
    found
}

fn current_test() -> String {
    std::thread::current().name().unwrap_or("a test").to_owned()
}

/// Who runs the command and how: this user, and (as root) an unprivileged one, who can make no memory cgroup and
/// is bounded by `RLIMIT_DATA`; each with namespaces and with Landlock and seccomp alone.
#[derive(Debug, Clone, Copy)]
struct Setup {
    owner: Option<u32>,
    namespaces: bool,
}

fn setups() -> Vec<Setup> {
    let owners = if is_root() {
        vec![None, Some(NOBODY)]
    } else {
        vec![None]
    };
    owners
        .into_iter()
        .flat_map(|owner| [true, false].map(|namespaces| Setup { owner, namespaces }))
        .collect()
}

/// A project and a temporary directory of its own for `agent-guard sandbox` (where its scratch directory goes),
/// both open to `owner`.
struct World {
    dir: tempfile::TempDir,
    setup: Setup,
    /// The `--memory-max` given; `None` leaves the bound to the settings.
    memory_max: Option<&'static str>,
    /// Variables set for `agent-guard sandbox` itself.
    env: Vec<(&'static str, String)>,
}

impl World {
    fn new(setup: Setup) -> Self {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["project", "tmp", "home"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        if let Some(uid) = setup.owner {
            for path in [
                dir.path().to_path_buf(),
                self_path(&dir, "project"),
                self_path(&dir, "tmp"),
            ] {
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
                nix::unistd::chown(
                    &path,
                    Some(nix::unistd::Uid::from_raw(uid)),
                    Some(nix::unistd::Gid::from_raw(uid)),
                )
                .unwrap();
            }
            nix::unistd::chown(
                &self_path(&dir, "home"),
                Some(nix::unistd::Uid::from_raw(uid)),
                Some(nix::unistd::Gid::from_raw(uid)),
            )
            .unwrap();
        }
        Self {
            dir,
            setup,
            memory_max: Some(BOUND),
            env: Vec::new(),
        }
    }

    fn path(&self, sub: &str) -> PathBuf {
        self_path(&self.dir, sub)
    }

    /// Starts `agent-guard sandbox --memory-max 256MiB` (plus `extra`) on `bash -c line` in the project.
    fn start(&self, extra: &[&str], line: &str) -> Child {
        let mut command = Command::new(BIN);
        command.args(["sandbox", "--profile", "workspace-write"]);
        if let Some(bound) = self.memory_max {
            command.args(["--memory-max", bound]);
        }
        command
            .args(extra)
            .args(["--", "bash", "-c", line])
            .current_dir(self.path("project"))
            .env("HOME", self.path("home"))
            .env("TMPDIR", self.path("tmp"))
            .envs(self.env.iter().map(|(name, value)| (name, value)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if !self.setup.namespaces {
            command.env("AGENT_GUARD_SANDBOX_NAMESPACES", "off");
        }
        if let Some(uid) = self.setup.owner {
            command.uid(uid).gid(uid);
        }
        command.spawn().unwrap()
    }

    /// Runs `line` as [`World::start`] does and waits for its end, at most `limit`.
    fn run(&self, extra: &[&str], line: &str, limit: Duration) -> Ended {
        let started = Instant::now();
        let mut child = self.start(extra, line);
        let pid = child.id();
        let mut status = None;
        wait_until(limit, &format!("{:?}: `{line}` did not end", self.setup), || {
            status = child.try_wait().unwrap();
            status.is_some()
        });
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        Ended {
            status: status.unwrap(),
            stderr,
            took: started.elapsed(),
            pid,
        }
    }

    /// Asserts that `agent-guard sandbox` (process `sandbox_pid`) left nothing behind: no process whose command line
    /// holds `marker`, no scratch directory in its temporary directory or `/dev/shm`, no cgroup of its own.
    fn assert_nothing_left(&self, marker: &str, sandbox_pid: u32) {
        wait_until(
            Duration::from_secs(10),
            &format!("{:?}: processes of `{marker}` are left", self.setup),
            || processes_with(marker) == 0,
        );
        // The temporary directory is this world's alone: anything in it is left over. `/dev/shm` is shared, and the
        // scratch directories there carry the process id.
        let scratch = format!("agent-guard-sandbox-{sandbox_pid}-");
        let mut left: Vec<PathBuf> = std::fs::read_dir(self.path("tmp"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        left.extend(
            std::fs::read_dir("/dev/shm")
                .into_iter()
                .flatten()
                .map(|entry| entry.unwrap().path())
                .filter(|path| {
                    path.file_name()
                        .is_some_and(|name| name.to_string_lossy().starts_with(&scratch))
                }),
        );
        assert!(
            left.is_empty(),
            "{:?}: scratch directories left: {left:?}",
            self.setup
        );
        let cgroups = cgroups_of(sandbox_pid);
        assert!(cgroups.is_empty(), "{:?}: cgroups left: {cgroups:?}", self.setup);
    }
}

/// How a run of `agent-guard sandbox` ended.
struct Ended {
    status: ExitStatus,
    stderr: String,
    took: Duration,
    /// The process id of `agent-guard sandbox`, which names its cgroups.
    pid: u32,
}

fn self_path(dir: &tempfile::TempDir, sub: &str) -> PathBuf {
    dir.path().join(sub)
}

/// How many processes have `marker` in their command line.
fn processes_with(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(marker))
        })
        .count()
}

/// The cgroups `agent-guard sandbox` process `pid` made (`agent-guard-<pid>-<n>`) that still exist, in the places it
/// makes them: beneath this process's own cgroup of each hierarchy, and at the top.
fn cgroups_of(pid: u32) -> Vec<PathBuf> {
    let prefix = format!("agent-guard-{pid}-");
    let table = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mut places = vec![
        PathBuf::from("/sys/fs/cgroup"),
        PathBuf::from("/sys/fs/cgroup/memory"),
        PathBuf::from("/sys/fs/cgroup/pids"),
    ];
    for line in table.lines() {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (
            fields.next(),
            fields.next().unwrap_or(""),
            fields.next().unwrap_or(""),
        );
        let relative = path.trim_start_matches('/');
        if relative.is_empty() {
            continue;
        }
        match controllers {
            "" => places.push(Path::new("/sys/fs/cgroup").join(relative)),
            list => places.extend(
                list.split(',')
                    .map(|c| Path::new("/sys/fs/cgroup").join(c).join(relative)),
            ),
        }
    }
    places
        .iter()
        .filter_map(|place| std::fs::read_dir(place).ok())
        .flatten()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(&prefix))
        .map(|entry| entry.path())
        .collect()
}

/// Whether the probe says a memory cgroup bounds the command, for `setup`: an unprivileged user makes none where
/// only root may write the hierarchy.
fn memory_cgroup(report: &str, setup: Setup) -> bool {
    report.contains("memory bound: a memory cgroup") && setup.owner.is_none()
}

/// The runaway allocation of a `jq` program that doubles a string forty times (a terabyte) ends at the bound.
#[test]
fn a_runaway_allocation_ends_at_the_memory_bound() {
    let Some(report) = probe() else {
        return;
    };
    if !installed("jq") {
        return;
    }
    for setup in setups() {
        let world = World::new(setup);
        let marker = format!("x{}-{}", std::process::id(), setup.namespaces);
        let line = format!("jq -n 'reduce range(40) as $i (\"{marker}\"; . + .)'");
        let ended = world.run(&[], &line, Duration::from_secs(60));
        let stderr = &ended.stderr;
        assert!(!ended.status.success(), "{setup:?}: {stderr}");
        if memory_cgroup(&report, setup) {
            assert!(stderr.contains(BOUND_MESSAGE), "{setup:?}: {stderr}");
        }
        eprintln!("{setup:?}: ended after {:?}: {}", ended.took, stderr.trim());
        world.assert_nothing_left(&marker, ended.pid);
    }
}

/// Sorting an endless stream ends at the bound: the sort's buffer and the temporary files it spills to its private
/// `/tmp` (a tmpfs, whose pages the memory cgroup counts, or which is no larger than the bound) are memory.
#[test]
fn an_endless_sort_ends_at_the_memory_bound() {
    let Some(report) = probe() else {
        return;
    };
    for setup in setups() {
        if !setup.namespaces && !memory_cgroup(&report, setup) {
            // Without namespaces the private temporary directory is a directory on disk, which no memory bound
            // covers: the sort would spill ten gigabytes to the disk. The file-size bound holds each file.
            eprintln!(
                "skipped: {} for {setup:?}: without namespaces or a memory cgroup the spilled files are on disk",
                current_test()
            );
            continue;
        }
        let world = World::new(setup);
        // Each process of the pipeline carries the marker in its command line (`exec -a` names it).
        let marker = format!("marker-{}-{}", std::process::id(), setup.namespaces);
        let line = format!("(exec -a head-{marker} head -c 10G /dev/zero) | (exec -a sort-{marker} sort)");
        let ended = world.run(&[], &line, Duration::from_secs(120));
        let stderr = &ended.stderr;
        assert!(!ended.status.success(), "{setup:?}: {stderr}");
        if memory_cgroup(&report, setup) {
            assert!(stderr.contains(BOUND_MESSAGE), "{setup:?}: {stderr}");
        }
        eprintln!("{setup:?}: ended after {:?}: {}", ended.took, stderr.trim());
        world.assert_nothing_left(&marker, ended.pid);
    }
}

/// A process that spins past the CPU-time bound is ended by `SIGXCPU`, and the message names the bound.
#[test]
fn the_cpu_time_bound_ends_a_spinning_process_and_says_so() {
    if probe().is_none() {
        return;
    }
    for setup in setups() {
        let world = World::new(setup);
        // `ulimit -S -t` lowers the soft bound inside the sandbox (a process may lower its own limits), so that the
        // test is quick; the spinning shell is the command's own process.
        let ended = world.run(
            &[],
            "ulimit -S -t 1; exec bash -c 'while :; do :; done'",
            Duration::from_secs(60),
        );
        let stderr = &ended.stderr;
        assert!(!ended.status.success(), "{setup:?}: {stderr}");
        assert!(
            stderr.contains("of CPU time (the sandbox's CPU-time bound)"),
            "{setup:?}: {stderr}"
        );
    }
}

/// A file written past the file-size bound ends its writer by `SIGXFSZ`, and the message names the bound; a
/// command that exits with the same number by itself gets no message.
#[test]
fn the_file_size_bound_ends_a_writer_and_says_so_but_an_exit_code_does_not() {
    if probe().is_none() {
        return;
    }
    for setup in setups() {
        let world = World::new(setup);
        let ended = world.run(
            &[],
            "ulimit -f 8; exec head -c 1M /dev/zero > big",
            Duration::from_secs(60),
        );
        let stderr = &ended.stderr;
        assert!(!ended.status.success(), "{setup:?}: {stderr}");
        assert!(stderr.contains("wrote a file larger than"), "{setup:?}: {stderr}");
        let ended = world.run(&[], "exit 153", Duration::from_secs(60));
        let stderr = &ended.stderr;
        assert_eq!(ended.status.code(), Some(153), "{setup:?}: {stderr}");
        assert!(!stderr.contains("agent-guard:"), "{setup:?}: {stderr}");
    }
}

/// A command that writes file after file ends once the free space of the project's file system falls below the
/// disk bound's reserve (set here to what is free less 48 MiB), well before it has written everything, and the
/// message names the bound; `fallocate` cannot take space past it in an instant.
#[test]
fn writing_past_the_disk_reserve_ends_the_command_and_says_so() {
    if probe().is_none() {
        return;
    }
    let written = |world: &World| -> u64 {
        std::fs::read_dir(world.path("project"))
            .unwrap()
            .map(|entry| entry.unwrap().metadata().unwrap().len())
            .sum()
    };
    for setup in setups() {
        let mut world = World::new(setup);
        let stat = nix::sys::statvfs::statvfs(&world.path("project")).unwrap();
        let free = stat.blocks_available() * stat.fragment_size();
        world.env.push((
            "AGENT_GUARD_SANDBOX_DISK_RESERVE",
            (free - (48 << 20)).to_string(),
        ));
        let ended = world.run(
            &[],
            "for i in $(seq 1 100); do head -c 16M /dev/zero > f$i || exit 3; done; exit 0",
            Duration::from_secs(120),
        );
        let stderr = &ended.stderr;
        assert!(!ended.status.success(), "{setup:?}: {stderr}");
        assert!(stderr.contains("the sandbox's disk bound"), "{setup:?}: {stderr}");
        let total = written(&world);
        assert!(total < 800 << 20, "{setup:?}: {total} bytes written");
        if installed("fallocate") {
            // The seccomp filter refuses the allocation itself, whatever the reserve: the reserve set above, from
            // what was free before the first run, may be passed by now (the machine's other work writes too).
            world
                .env
                .retain(|(name, _)| *name != "AGENT_GUARD_SANDBOX_DISK_RESERVE");
            let ended = world.run(&[], "rm -f f*; fallocate -l 512M big", Duration::from_secs(60));
            assert!(!ended.status.success(), "{setup:?}: {}", ended.stderr);
            assert!(
                ended.stderr.contains("not supported"),
                "{setup:?}: {}",
                ended.stderr
            );
            assert_eq!(written(&world), 0, "{setup:?}");
        }
    }
}

/// A sandbox killed by `SIGKILL` (a coding agent's hard timeout) cleans nothing up; the next one removes the scratch
/// directory it left in `/dev/shm`, and no process of it is left (its namespace ended with it).
#[test]
fn the_scratch_of_a_killed_sandbox_is_removed_by_the_next() {
    let Some(report) = probe() else {
        return;
    };
    if !report.contains("namespaces: yes") {
        eprintln!(
            "skipped: {} needs namespaces, which this machine does not give",
            current_test()
        );
        return;
    }
    let world = World::new(Setup {
        owner: None,
        namespaces: true,
    });
    let marker = format!("{}", 800_000 + std::process::id() % 90_000);
    let mut child = world.start(&[], &format!("sleep {marker}"));
    let killed = child.id();
    wait_until(Duration::from_secs(30), "the command never ran", || {
        processes_with(&format!("sleep\0{marker}")) > 0
    });
    let scratch = format!("agent-guard-sandbox-{killed}-");
    let left = || -> usize {
        std::fs::read_dir("/dev/shm")
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter(|e| e.file_name().to_string_lossy().starts_with(&scratch))
                    .count()
            })
            .unwrap_or(0)
    };
    if left() == 0 {
        eprintln!(
            "skipped: {}: the scratch directory is not in /dev/shm here",
            current_test()
        );
        child.kill().unwrap();
        child.wait().unwrap();
        return;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    wait_until(
        Duration::from_secs(10),
        "the killed command's process is left",
        || processes_with(&format!("sleep\0{marker}")) == 0,
    );
    // Killed, it could not remove its scratch directory; any sandbox that starts now removes it (another test's,
    // or another process's on this machine, may have done so already).
    assert!(
        left() <= 1,
        "more than one scratch directory of the killed sandbox"
    );
    let ended = world.run(&[], "true", Duration::from_secs(60));
    assert!(ended.status.success(), "{}", ended.stderr);
    assert_eq!(
        left(),
        0,
        "the next sandbox did not remove the scratch directory of the killed one"
    );
}

/// `agentGuard.sandbox.memoryMax` in the project's settings (a repository may lower it) is the bound, without
/// `--memory-max`.
#[test]
fn the_memory_max_setting_is_the_bound() {
    let Some(report) = probe() else {
        return;
    };
    let setup = Setup {
        owner: None,
        namespaces: true,
    };
    if !memory_cgroup(&report, setup) {
        eprintln!(
            "skipped: {} needs a memory cgroup to name the bound",
            current_test()
        );
        return;
    }
    if !installed("jq") {
        return;
    }
    let mut world = World::new(setup);
    world.memory_max = None;
    let settings = world.path("project/.claude");
    std::fs::create_dir_all(&settings).unwrap();
    std::fs::write(
        settings.join("settings.json"),
        r#"{"agentGuard": {"sandbox": {"memoryMax": "192MiB"}}}"#,
    )
    .unwrap();
    let ended = world.run(
        &[],
        "jq -n 'reduce range(40) as $i (\"x\"; . + .)'",
        Duration::from_secs(60),
    );
    let stderr = &ended.stderr;
    assert!(!ended.status.success(), "{stderr}");
    assert!(
        stderr.contains("used more than 192 MiB of memory (agentGuard.sandbox.memoryMax)"),
        "{stderr}"
    );
}
