//! What this kernel can enforce: Landlock's ABI, seccomp, namespaces, a pids and a memory cgroup.

use std::sync::OnceLock;

use crate::cgroup::{MemoryCgroup, PidsCgroup};

/// How a sandboxed command can be isolated beyond Landlock and seccomp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namespaces {
    /// No new namespaces can be made: the command shares the process table, `/proc` and the mounts.
    Unavailable,
    /// The process may make mount, PID, IPC and network namespaces itself (root with `CAP_SYS_ADMIN`).
    Privileged,
    /// An unprivileged user namespace can be made, and the others inside it.
    User,
}

/// What the running kernel supports, found once per process ([`KernelSupport::probe`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelSupport {
    /// The Landlock ABI version, 0 when Landlock is missing or disabled.
    pub landlock_abi: u32,
    /// Whether seccomp filters can be installed.
    pub seccomp: bool,
    /// Which namespaces can be made.
    pub namespaces: Namespaces,
    /// Whether a pids cgroup can be made for a command.
    pub pids_cgroup: bool,
    /// Whether a memory cgroup can be made for a command (else its memory is bounded by `RLIMIT_DATA` per
    /// process).
    pub memory_cgroup: bool,
    /// Whether `kernel.pid_max` belongs to a PID namespace (Linux 6.14 and later), so that a command's own
    /// namespace can bound its process count without a cgroup.
    pub pid_max_per_namespace: bool,
}

/// The Landlock ABI that handles TCP `bind` and `connect`.
pub(crate) const ABI_NETWORK: u32 = 4;
/// The Landlock ABI that scopes abstract Unix sockets and signals to the sandbox.
pub(crate) const ABI_SCOPES: u32 = 6;

impl KernelSupport {
    /// Probes the kernel once and returns the cached answer afterwards.
    pub fn probe() -> Self {
        static PROBED: OnceLock<KernelSupport> = OnceLock::new();
        *PROBED.get_or_init(|| {
            let (landlock_abi, seccomp) = enforcement();
            Self {
                landlock_abi,
                seccomp,
                namespaces: namespaces(),
                pids_cgroup: PidsCgroup::available(),
                memory_cgroup: MemoryCgroup::available(),
                pid_max_per_namespace: kernel_at_least(6, 14),
            }
        })
    }

    /// Why the sandbox cannot be enforced on this kernel, or `None` when it can: [`KernelSupport::missing`]
    /// without probing what only running a sandbox needs (namespaces, which takes a child process for a user
    /// without privileges, cgroups, the kernel's release). A decision needs this much and no more, and the hook
    /// decides in a process per tool call.
    pub fn enforcement_missing() -> Option<String> {
        let (landlock_abi, seccomp) = enforcement();
        missing(landlock_abi, seccomp)
    }

    /// Whether the sandbox can be enforced at all: Landlock for files and seccomp for sockets and the dangerous
    /// system calls. Without both an allow cannot be backed by the kernel.
    pub fn enforces(&self) -> bool {
        self.landlock_abi >= 1 && self.seccomp
    }

    /// Why the sandbox cannot be enforced, or `None` when it can.
    pub fn missing(&self) -> Option<String> {
        missing(self.landlock_abi, self.seccomp)
    }

    /// The probe as lines of `what: finding (consequence)` for `agent-guard sandbox --probe` and `doctor`.
    pub fn report(&self) -> Vec<String> {
        let abi = self.landlock_abi;
        let mut lines = vec![if abi == 0 {
            "landlock: missing (files cannot be confined; `agentGuard.sandbox: \"required\"` turns allows into asks)"
                .to_owned()
        } else {
            format!("landlock: ABI {abi} (files: reads and writes confined to the profile)")
        }];
        lines.push(if abi >= ABI_NETWORK {
            "landlock network: yes (TCP bind and connect refused unless the network is allowed)".to_owned()
        } else {
            "landlock network: no (sockets are refused by seccomp alone)".to_owned()
        });
        lines.push(if abi >= ABI_SCOPES {
            "landlock scopes: yes (abstract Unix sockets and signals stay inside the sandbox)".to_owned()
        } else {
            "landlock scopes: no (abstract Unix sockets are refused with every socket by seccomp)".to_owned()
        });
        lines.push(if self.seccomp {
            "seccomp: yes (sockets, ptrace, process_vm_*, keyrings, io_uring and terminal injection refused)"
                .to_owned()
        } else {
            "seccomp: missing (sockets and dangerous system calls cannot be refused)".to_owned()
        });
        lines.push(match self.namespaces {
            Namespaces::Privileged => {
                "namespaces: yes, as root (private /proc, /tmp and process table; secrets hidden and protected \
                 paths mounted read-only; background processes end with the command)"
                    .to_owned()
            }
            Namespaces::User => "namespaces: yes, in a user namespace (private /proc, /tmp and process table; \
                 secrets hidden and protected paths mounted read-only; background processes end with the command)"
                .to_owned(),
            Namespaces::Unavailable => "namespaces: no (no /proc of other processes is granted; secrets and \
                 protected paths are left out of the grants; new files at the top of a root cannot be made)"
                .to_owned(),
        });
        lines.push(match (self.pid_max_per_namespace, self.pids_cgroup) {
            (true, _) if self.namespaces != Namespaces::Unavailable => {
                "process bound: the command's PID namespace caps its pid_max (also for root)".to_owned()
            }
            (_, true) => "process bound: a pids cgroup (also for root)".to_owned(),
            (_, false) => "process bound: RLIMIT_NPROC only, which does not bind root".to_owned(),
        });
        lines.push(if self.memory_cgroup {
            "memory bound: a memory cgroup (the command's processes and its /tmp together)".to_owned()
        } else {
            "memory bound: RLIMIT_DATA per process, and a /tmp no larger than the bound (no memory cgroup can be \
             made)"
                .to_owned()
        });
        lines.push(match self.missing() {
            None => "enforcement: allowed shell commands run under the kernel sandbox".to_owned(),
            Some(why) => format!("enforcement: none ({why}); allows rest on the analysis alone"),
        });
        lines
    }
}

/// Landlock's ABI and whether seccomp filters can be installed, probed once.
fn enforcement() -> (u32, bool) {
    static PROBED: OnceLock<(u32, bool)> = OnceLock::new();
    *PROBED.get_or_init(|| (landlock_abi(), seccomp_available()))
}

/// Why a kernel with Landlock ABI `landlock_abi`, with or without seccomp, cannot enforce the sandbox; `None`
/// when it can.
fn missing(landlock_abi: u32, seccomp: bool) -> Option<String> {
    match (landlock_abi >= 1, seccomp) {
        (true, true) => None,
        (false, true) => Some("the kernel has no Landlock".to_owned()),
        (true, false) => Some("the kernel has no seccomp".to_owned()),
        (false, false) => Some("the kernel has neither Landlock nor seccomp".to_owned()),
    }
}

/// `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)`: the ABI version, or 0.
#[cfg(target_os = "linux")]
#[expect(
    unsafe_code,
    reason = "a raw system call libc does not wrap; with a null attribute and size 0 it touches no memory of ours"
)]
fn landlock_abi() -> u32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer and size 0, the call only returns the version; it reads and writes
    // no memory of ours.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(version).unwrap_or(0)
}

#[cfg(not(target_os = "linux"))]
fn landlock_abi() -> u32 {
    0
}

#[cfg(target_os = "linux")]
#[expect(
    unsafe_code,
    reason = "prctl(PR_GET_SECCOMP) takes no pointer and changes nothing"
)]
fn seccomp_available() -> bool {
    // SAFETY: PR_GET_SECCOMP takes no pointer; it fails with EINVAL on a kernel without seccomp.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

#[cfg(not(target_os = "linux"))]
fn seccomp_available() -> bool {
    false
}

/// The text of a file of `/proc`: read into a buffer of a page at once, since such a file says its size is 0 and a
/// read sized by that grows its buffer from a few bytes, one system call each.
pub(crate) fn read_kernel_text(path: &str) -> Option<String> {
    use std::io::Read as _;
    let mut text = String::with_capacity(4096);
    std::fs::File::open(path).ok()?.read_to_string(&mut text).ok()?;
    Some(text)
}

/// Whether the running kernel's release is at least `major.minor`.
fn kernel_at_least(major: u32, minor: u32) -> bool {
    let Some(release) = read_kernel_text("/proc/sys/kernel/osrelease") else {
        return false;
    };
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|p| p.parse::<u32>().ok());
    match (parts.next(), parts.next()) {
        (Some(have_major), Some(have_minor)) => (have_major, have_minor) >= (major, minor),
        _ => false,
    }
}

/// Root with `CAP_SYS_ADMIN` makes namespaces itself; anyone else needs an unprivileged user namespace, which
/// distributions and container runtimes may forbid: that is tried in a child.
/// `AGENT_GUARD_SANDBOX_NAMESPACES=off` makes none, as on a machine that forbids them (Landlock and seccomp alone
/// then confine the command): for tests of that mechanism, and for hosts where namespaces misbehave.
fn namespaces() -> Namespaces {
    if std::env::var_os("AGENT_GUARD_SANDBOX_NAMESPACES").is_some_and(|v| v == "off") {
        return Namespaces::Unavailable;
    }
    if nix::unistd::geteuid().is_root() && has_sys_admin() {
        return Namespaces::Privileged;
    }
    if user_namespaces_work() {
        Namespaces::User
    } else {
        Namespaces::Unavailable
    }
}

/// Whether `CAP_SYS_ADMIN` (bit 21) is in this process's effective set.
fn has_sys_admin() -> bool {
    read_kernel_text("/proc/self/status")
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("CapEff:"))
                .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        })
        .is_some_and(|caps| caps & (1 << 21) != 0)
}

/// Tries `unshare` of a user, mount and PID namespace in a short-lived child.
#[cfg(target_os = "linux")]
#[expect(
    unsafe_code,
    reason = "fork(2) with a child that calls only the async-signal-safe unshare(2) and _exit(2)"
)]
fn user_namespaces_work() -> bool {
    let flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID;
    // SAFETY: the child calls only unshare(2) and _exit(2), both async-signal-safe, so forking a process that may
    // have other threads is sound; the parent only waits for it.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => false,
        0 => {
            // SAFETY: see above.
            let code = if unsafe { libc::unshare(flags) } == 0 {
                0
            } else {
                1
            };
            // SAFETY: see above.
            unsafe { libc::_exit(code) }
        }
        child => {
            let child = nix::unistd::Pid::from_raw(child);
            loop {
                match nix::sys::wait::waitpid(child, None) {
                    Ok(nix::sys::wait::WaitStatus::Exited(_, code)) => return code == 0,
                    Err(nix::errno::Errno::EINTR) => {}
                    Ok(_) | Err(_) => return false,
                }
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn user_namespaces_work() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_names_every_mechanism() {
        let support = KernelSupport::probe();
        let report = support.report().join("\n");
        for what in [
            "landlock:",
            "seccomp:",
            "namespaces:",
            "process bound:",
            "memory bound:",
            "enforcement:",
        ] {
            assert!(report.contains(what), "{report}");
        }
        let none = KernelSupport {
            landlock_abi: 0,
            seccomp: false,
            namespaces: Namespaces::Unavailable,
            pids_cgroup: false,
            memory_cgroup: false,
            pid_max_per_namespace: false,
        };
        assert!(!none.enforces());
        assert!(none.missing().is_some_and(|m| m.contains("neither")));
    }
}
