//! A pids cgroup around one shell command: the kernel refuses forks past the limit, which holds even for root
//! (where `RLIMIT_NPROC` is not enforced) and for processes that leave the process group with `setsid`.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// Where a pids controller may be mounted: cgroup v1's own hierarchy, then the unified v2 hierarchy.
const HIERARCHIES: [&str; 2] = ["/sys/fs/cgroup/pids", "/sys/fs/cgroup"];

/// One cgroup made for one command, removed when dropped (after its processes are killed).
#[derive(Debug)]
pub struct PidsCgroup {
    dir: PathBuf,
    /// `cgroup.procs`, open for writing: the child writes `0` to it between fork and exec to join.
    procs: File,
}

impl PidsCgroup {
    /// A new cgroup allowing at most `max` processes, or `None` where the machine has no writable pids controller
    /// (the caller then relies on its watchdog).
    pub fn create(max: u64) -> Option<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        HIERARCHIES.iter().map(Path::new).find_map(|base| {
            if !has_pids_controller(base) {
                return None;
            }
            remove_stale(base);
            let name = format!(
                "agent-guard-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            );
            let dir = base.join(name);
            std::fs::create_dir(&dir).ok()?;
            let made = std::fs::write(dir.join("pids.max"), max.to_string())
                .ok()
                .and_then(|()| OpenOptions::new().write(true).open(dir.join("cgroup.procs")).ok());
            match made {
                Some(procs) => Some(Self { dir, procs }),
                None => {
                    let _removed = std::fs::remove_dir(&dir);
                    None
                }
            }
        })
    }

    /// A cgroup of at most `max` processes where nothing else bounds the command's processes: for root, which
    /// `RLIMIT_NPROC` does not bind. Anyone else is bounded by that rlimit, and is spared the cost of joining a
    /// fresh cgroup (on cgroup v1 a move waits for an RCU grace period, milliseconds per command).
    pub fn where_needed(max: u64) -> Option<Self> {
        if nix::unistd::geteuid().is_root() {
            Self::create(max)
        } else {
            None
        }
    }

    /// Whether this machine has a pids controller that this process may make cgroups in.
    pub fn available() -> bool {
        HIERARCHIES.iter().map(Path::new).any(|base| {
            has_pids_controller(base) && nix::unistd::access(base, nix::unistd::AccessFlags::W_OK).is_ok()
        })
    }

    /// The descriptor of `cgroup.procs` for the child to write `0` to.
    pub fn procs_fd(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// The file that counts the forks the limit refused (`pids.events`), for [`refused_forks`].
    pub fn events(&self) -> PathBuf {
        self.dir.join("pids.events")
    }

    /// Kills every process in the cgroup until it is empty (bounded: a process that cannot be killed is left for
    /// the drop to report by failing to remove the cgroup).
    pub fn kill_all(&self) {
        for _ in 0..200 {
            let pids = self.members();
            if pids.is_empty() {
                return;
            }
            for pid in pids {
                let _killed = kill(pid, Signal::SIGKILL);
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    fn members(&self) -> Vec<Pid> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.trim().parse::<i32>().ok())
            .map(Pid::from_raw)
            .collect()
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        self.kill_all();
        // The kernel removes an empty cgroup directory; members that are still exiting keep it busy briefly.
        for _ in 0..100 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let _note = writeln!(
            std::io::stderr(),
            "agent-guard: cgroup `{}` could not be removed",
            self.dir.display()
        );
    }
}

/// Whether the cgroup whose `pids.events` is `events` refused a fork at least once (`max N` with N > 0).
pub fn refused_forks(events: &Path) -> bool {
    std::fs::read_to_string(events)
        .ok()
        .and_then(|text| text.split_whitespace().nth(1).and_then(|n| n.parse::<u64>().ok()))
        .is_some_and(|n| n > 0)
}

/// Removes the cgroups of agent-guard processes that are gone (killed before they could remove their own): the
/// kernel frees an empty cgroup's directory, and one with members left is killed first.
fn remove_stale(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(owner) = name
            .to_str()
            .and_then(|n| n.strip_prefix("agent-guard-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let alive = kill(Pid::from_raw(owner), None).is_ok();
        if !alive {
            let dir = entry.path();
            for member in std::fs::read_to_string(dir.join("cgroup.procs"))
                .unwrap_or_default()
                .lines()
                .filter_map(|line| line.trim().parse::<i32>().ok())
            {
                let _killed = kill(Pid::from_raw(member), Signal::SIGKILL);
            }
            let _removed = std::fs::remove_dir(&dir);
        }
    }
}

fn has_pids_controller(base: &Path) -> bool {
    if base.ends_with("pids") {
        return base.join("cgroup.procs").exists();
    }
    // Unified hierarchy: the controller must be enabled for children of the root.
    std::fs::read_to_string(base.join("cgroup.subtree_control"))
        .is_ok_and(|c| c.split_whitespace().any(|w| w == "pids"))
}
