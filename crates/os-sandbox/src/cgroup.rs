//! Cgroups around one shell command: a pids cgroup, where the kernel refuses forks past the limit (which holds even
//! for root, where `RLIMIT_NPROC` is not enforced, and for processes that leave the process group with `setsid`),
//! and a memory cgroup, where the kernel ends the command's largest process when all its processes together (and
//! the files of its private tmpfs) pass the bound.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// Where a pids controller may be mounted: cgroup v1's own hierarchy, then the unified v2 hierarchy.
const HIERARCHIES: [&str; 2] = ["/sys/fs/cgroup/pids", "/sys/fs/cgroup"];

/// Where a memory controller may be mounted: cgroup v1's own hierarchy, then the unified v2 hierarchy.
const MEMORY_HIERARCHIES: [&str; 2] = ["/sys/fs/cgroup/memory", "/sys/fs/cgroup"];

/// One cgroup made for one command, removed when dropped (after its processes are killed).
#[derive(Debug)]
struct Cgroup {
    dir: PathBuf,
    /// The file the child writes `0` to between fork and exec to join: `tasks` on cgroup v1, which moves the
    /// calling thread alone (the child of a fork has one) without the system-wide lock whose first taking waits for
    /// an RCU grace period (milliseconds) that `cgroup.procs` takes; `cgroup.procs` on v2, which has no `tasks`.
    join: File,
}

impl Cgroup {
    /// Makes a cgroup below `base` and writes each setting into it; `None` (and nothing left) when a step fails.
    fn make(base: &Path, settings: &[Setting]) -> Option<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        remove_stale(base);
        let name = format!(
            "agent-guard-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let dir = base.join(name);
        std::fs::create_dir(&dir).ok()?;
        let join_file = if dir.join("tasks").exists() {
            "tasks"
        } else {
            "cgroup.procs"
        };
        let made = settings
            .iter()
            .filter(|setting| setting.required || dir.join(setting.file).exists())
            .try_for_each(|setting| std::fs::write(dir.join(setting.file), &setting.value))
            .ok()
            .and_then(|()| OpenOptions::new().write(true).open(dir.join(join_file)).ok());
        match made {
            Some(join) => Some(Self { dir, join }),
            None => {
                let _removed = std::fs::remove_dir(&dir);
                None
            }
        }
    }

    /// Kills every process in the cgroup until it is empty (bounded: a process that cannot be killed is left for
    /// the drop to report by failing to remove the cgroup).
    fn kill_all(&self) {
        for _ in 0..200 {
            let pids = members(&self.dir);
            if pids.is_empty() {
                return;
            }
            for pid in pids {
                let _killed = kill(pid, Signal::SIGKILL);
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // An empty cgroup (the command and its processes have ended, as nearly always) is removed at once; one the
        // kernel refuses to remove still has members, which are killed first.
        if std::fs::remove_dir(&self.dir).is_ok() {
            return;
        }
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

/// One value written into a new cgroup.
#[derive(Debug)]
struct Setting {
    file: &'static str,
    value: String,
    /// Whether the cgroup is of no use without it; otherwise it is written where the file exists (a controller
    /// feature the kernel may lack).
    required: bool,
}

impl Setting {
    fn required(file: &'static str, value: impl ToString) -> Self {
        Self {
            file,
            value: value.to_string(),
            required: true,
        }
    }

    fn where_present(file: &'static str, value: impl ToString) -> Self {
        Self {
            file,
            value: value.to_string(),
            required: false,
        }
    }
}

/// A pids cgroup made for one command, removed when dropped (after its processes are killed).
#[derive(Debug)]
pub struct PidsCgroup {
    cgroup: Cgroup,
}

impl PidsCgroup {
    /// A new cgroup allowing at most `max` processes, or `None` where the machine has no writable pids controller
    /// (the caller then relies on its watchdog).
    pub fn create(max: u64) -> Option<Self> {
        HIERARCHIES.iter().map(Path::new).find_map(|base| {
            if !has_controller(base, "pids") {
                return None;
            }
            Cgroup::make(base, &[Setting::required("pids.max", max)]).map(|cgroup| Self { cgroup })
        })
    }

    /// A cgroup of at most `max` processes where nothing else bounds the command's processes: for root, which
    /// `RLIMIT_NPROC` does not bind. Anyone else is bounded by that rlimit and makes no cgroup it does not need.
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
            has_controller(base, "pids") && nix::unistd::access(base, nix::unistd::AccessFlags::W_OK).is_ok()
        })
    }

    /// The descriptor the child writes `0` to, to join.
    pub fn procs_fd(&self) -> RawFd {
        self.cgroup.join.as_raw_fd()
    }

    /// The file that counts the forks the limit refused (`pids.events`), for [`refused_forks`].
    pub fn events(&self) -> PathBuf {
        self.cgroup.dir.join("pids.events")
    }

    /// Kills every process in the cgroup until it is empty.
    pub fn kill_all(&self) {
        self.cgroup.kill_all();
    }
}

/// A memory cgroup made for one command, removed when dropped (after its processes are killed). Its bound holds
/// for all the command's processes together, and for the pages of the tmpfs they write (its private `/tmp`), which
/// are charged to it; swap is not a way around it.
#[derive(Debug)]
pub(crate) struct MemoryCgroup {
    cgroup: Cgroup,
    /// Whether it is cgroup v1's (which counts the kills in `memory.oom_control`, v2 in `memory.events`).
    v1: bool,
}

impl MemoryCgroup {
    /// A new cgroup of at most `max` bytes, or `None` where this process can make none: beneath its own memory
    /// cgroup where it may (so that a bound above stays in force), else at the top of the hierarchy.
    pub(crate) fn create(max: u64) -> Option<Self> {
        MEMORY_HIERARCHIES.iter().map(Path::new).find_map(|base| {
            let v1 = base.join("memory.limit_in_bytes").exists();
            let v2 = !v1 && has_controller(base, "memory");
            if !v1 && !v2 {
                return None;
            }
            // Swap is no way around the bound: `memsw` (memory and swap together, v1) is written after the memory
            // bound it must not be below; v2 counts swap apart and gets none.
            let settings = if v1 {
                [
                    Setting::required("memory.limit_in_bytes", max),
                    Setting::where_present("memory.memsw.limit_in_bytes", max),
                ]
            } else {
                [
                    Setting::required("memory.max", max),
                    Setting::where_present("memory.swap.max", 0),
                ]
            };
            own_cgroup(base, v1)
                .into_iter()
                .chain(std::iter::once(base.to_path_buf()))
                .filter(|dir| nix::unistd::access(dir.as_path(), nix::unistd::AccessFlags::W_OK).is_ok())
                .find_map(|dir| Cgroup::make(&dir, &settings))
                .map(|cgroup| Self { cgroup, v1 })
        })
    }

    /// Whether this process may make a memory cgroup ([`MemoryCgroup::create`] looks in the same places).
    pub(crate) fn available() -> bool {
        MEMORY_HIERARCHIES.iter().map(Path::new).any(|base| {
            let v1 = base.join("memory.limit_in_bytes").exists();
            (v1 || has_controller(base, "memory"))
                && own_cgroup(base, v1)
                    .into_iter()
                    .chain(std::iter::once(base.to_path_buf()))
                    .any(|dir| nix::unistd::access(dir.as_path(), nix::unistd::AccessFlags::W_OK).is_ok())
        })
    }

    /// The descriptor the child writes `0` to, to join.
    pub(crate) fn join_fd(&self) -> RawFd {
        self.cgroup.join.as_raw_fd()
    }

    /// How many of the command's processes the kernel ended for passing the bound: `oom_kill` of
    /// `memory.oom_control` (v1) or `memory.events` (v2).
    pub(crate) fn oom_kills(&self) -> u64 {
        let file = if self.v1 {
            "memory.oom_control"
        } else {
            "memory.events"
        };
        std::fs::read_to_string(self.cgroup.dir.join(file))
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|line| line.strip_prefix("oom_kill "))
                    .and_then(|n| n.trim().parse().ok())
            })
            .unwrap_or(0)
    }
}

/// Whether the cgroup whose `pids.events` is `events` refused a fork at least once (`max N` with N > 0).
pub fn refused_forks(events: &Path) -> bool {
    std::fs::read_to_string(events)
        .ok()
        .and_then(|text| text.split_whitespace().nth(1).and_then(|n| n.parse::<u64>().ok()))
        .is_some_and(|n| n > 0)
}

/// The processes of the cgroup at `dir`.
fn members(dir: &Path) -> Vec<Pid> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.trim().parse::<i32>().ok())
        .map(Pid::from_raw)
        .collect()
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
            for member in members(&dir) {
                let _killed = kill(member, Signal::SIGKILL);
            }
            let _removed = std::fs::remove_dir(&dir);
        }
    }
}

/// Whether `controller` may be used in cgroups made below `base`: its own v1 hierarchy (`base` ends with its
/// name), or the unified hierarchy with the controller enabled for the children of `base`.
fn has_controller(base: &Path, controller: &str) -> bool {
    if base.ends_with(controller) {
        return base.join("cgroup.procs").exists();
    }
    std::fs::read_to_string(base.join("cgroup.subtree_control"))
        .is_ok_and(|c| c.split_whitespace().any(|w| w == controller))
}

/// This process's own cgroup in the memory hierarchy at `base` (from `/proc/self/cgroup`), when it is not the top.
fn own_cgroup(base: &Path, v1: bool) -> Option<PathBuf> {
    // Read once a process: the probe and the command's cgroup both ask, and this process never moves itself to
    // another cgroup (its children join theirs through the descriptor of `Cgroup::join`).
    static TABLE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let table = TABLE
        .get_or_init(|| crate::probe::read_kernel_text("/proc/self/cgroup"))
        .as_deref()?;
    let path = table.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_id, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        let ours = if v1 {
            controllers.split(',').any(|c| c == "memory")
        } else {
            controllers.is_empty()
        };
        ours.then_some(path)
    })?;
    let relative = path.trim_start_matches('/');
    (!relative.is_empty() && !relative.contains("..")).then(|| base.join(relative))
}
