//! The `agent-guard sandbox` command's side of a run: starting the command under a [`Prepared`] confinement, passing
//! its output through a filter, forwarding the signals that stop it, waiting for it, and the clean-up after it.

use std::ffi::OsString;
use std::io::Write;
use std::os::fd::{AsFd as _, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::env::EnvPolicy;
use crate::error::{KernelSandboxError, Result};
use crate::launch::{Launch, Prepared, ProcessLimits};
use crate::plan::{Isolation, Plan, Protection};
use crate::probe::KernelSupport;

/// A command [`Prepared::start`] started: the namespace's process 1, the read ends of its output pipes, and the
/// pipe where a step of its start reports a failure.
#[derive(Debug)]
pub(crate) struct Started {
    /// The namespace's process 1, this process's child, whose exit status is the command's.
    pub(crate) init: nix::unistd::Pid,
    /// The command's stdout and stderr, when piped.
    pub(crate) stdout: Option<OwnedFd>,
    pub(crate) stderr: Option<OwnedFd>,
    /// The read end of the pipe where a step of the start writes its `errno`.
    pub(crate) errors: OwnedFd,
    /// The write end of the gate the command waits at before its `exec`, when it was started gated.
    pub(crate) gate: Option<OwnedFd>,
}

impl Started {
    /// Whether the namespace's process 1 ends within `within` (it is not reaped: [`Started::wait`] does that).
    /// `false` when that cannot be told.
    pub(crate) fn ended_within(&self, within: std::time::Duration) -> bool {
        let Ok(pidfd) = pidfd_of(self.init.as_raw()) else {
            return false;
        };
        let mut fds = [nix::poll::PollFd::new(
            pidfd.as_fd(),
            nix::poll::PollFlags::POLLIN,
        )];
        let timeout = nix::poll::PollTimeout::try_from(within).unwrap_or(nix::poll::PollTimeout::MAX);
        loop {
            match nix::poll::poll(&mut fds, timeout) {
                Ok(ready) => return ready > 0,
                Err(nix::errno::Errno::EINTR) => {}
                Err(_) => return false,
            }
        }
    }

    /// Lets the command pass its gate and start (`go`), or closes the gate without letting it through: the
    /// command then ends before its `exec`, and [`Started::wait`] says `ECANCELED`.
    pub(crate) fn open_gate(&mut self, go: bool) {
        if let Some(gate) = self.gate.take()
            && go
        {
            // A failed write closes the gate all the same: the command then does not start.
            let _written = nix::unistd::write(&gate, b"g");
        }
    }

    /// Waits for the namespace's process 1 to end (and with it every process of the command): its exit status,
    /// or the error of the step of the start that failed (the command then did not run).
    ///
    /// # Errors
    /// The `errno` a step of the start reported; the error of `waitpid`.
    pub(crate) fn wait(self) -> std::io::Result<std::process::ExitStatus> {
        use nix::sys::wait::{WaitStatus, waitpid};
        use std::os::unix::process::ExitStatusExt;
        let raw = loop {
            match waitpid(self.init, None) {
                Ok(WaitStatus::Exited(_, code)) => break code << 8,
                Ok(WaitStatus::Signaled(_, signal, core)) => {
                    break signal as i32 | if core { 0x80 } else { 0 };
                }
                Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                Err(errno) => return Err(errno.into()),
            }
        };
        let mut reported = [0u8; std::mem::size_of::<libc::c_int>()];
        if nix::unistd::read(&self.errors, &mut reported).ok() == Some(reported.len()) {
            return Err(std::io::Error::from_raw_os_error(libc::c_int::from_ne_bytes(
                reported,
            )));
        }
        Ok(std::process::ExitStatus::from_raw(raw))
    }
}

/// A pidfd of this process (closed at exec), for a child to tell whether this process is still alive.
pub(crate) fn pidfd_of_self() -> std::io::Result<OwnedFd> {
    pidfd_of(nix::unistd::getpid().as_raw())
}

/// A pidfd of the process `pid` (closed at exec), readable once it has exited.
fn pidfd_of(pid: libc::pid_t) -> std::io::Result<OwnedFd> {
    use std::os::fd::FromRawFd;
    #[expect(unsafe_code, reason = "pidfd_open has no wrapper in nix")]
    // SAFETY: pidfd_open with a pid and no flags returns a new descriptor (close-on-exec) or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0u32) };
    let fd = RawFd::try_from(fd).map_err(|_| std::io::Error::from_raw_os_error(libc::EBADF))?;
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    #[expect(
        unsafe_code,
        reason = "taking ownership of the descriptor pidfd_open returned"
    )]
    // SAFETY: `fd` is a new descriptor this process owns and nothing else closes.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Runs `argv` under `launch` and waits for it: the `agent-guard sandbox` command. A pids cgroup is made where
/// the machine has one; without a PID namespace this process becomes a subreaper and kills whatever the command
/// left behind. Returns the command's exit status (`128 + N` for a death by signal N) and the protected paths
/// removed after it.
///
/// # Errors
/// The errors of [`Prepared::new`], and [`KernelSandboxError::Spawn`] when the command cannot be started.
pub fn run(
    plan: &Plan,
    support: &KernelSupport,
    env: &EnvPolicy,
    protection: &dyn Protection,
    argv: &[OsString],
) -> Result<(i32, Vec<PathBuf>)> {
    run_filtered(plan, support, env, protection, argv, None)
}

/// What a command prints on its way to this process's stdout and stderr: `agent-guard sandbox` redacts the
/// credentials in it.
pub trait OutputFilter: Sync {
    /// Passes everything read from `from` (a pipe from the command) on to `to`, changed as the filter sees fit,
    /// until the pipe ends.
    ///
    /// # Errors
    /// A failed read or write; the pump stops, and the command meets a closed pipe as it would at a closed reader.
    fn pump(&self, from: OwnedFd, to: &mut dyn Write) -> std::io::Result<()>;

    /// Passes the command's `stdout` and `stderr` (two pipes), each as [`pump`](Self::pump) passes it, on to this
    /// process's stdout and stderr, until both pipes end. A failed read or write stops that stream alone. The
    /// default pumps `stderr` on a thread of its own; a filter that waits for both pipes at once pumps them on
    /// the calling thread.
    fn pump_both(&self, stdout: OwnedFd, stderr: OwnedFd) {
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let _pumped = self.pump(stderr, &mut std::io::stderr());
            });
            let _pumped = self.pump(stdout, &mut std::io::stdout());
        });
    }

    /// [`pump_both`](Self::pump_both), calling `due` once when `after` has passed and the pipes are still open
    /// (for work that a short command does not need, as the disk bound's thread). The default calls it at once.
    fn pump_both_then(
        &self,
        stdout: OwnedFd,
        stderr: OwnedFd,
        after: std::time::Duration,
        due: &mut dyn FnMut(),
    ) {
        let _ = after;
        due();
        self.pump_both(stdout, stderr);
    }
}

/// [`run`], with the command's stdout and stderr passed through `output` when one is given: each stream on a pipe
/// of its own, both pumped by [`OutputFilter::pump_both`], so that nothing is buffered beyond what the filter
/// holds. With namespaces they are pumped on this thread before the command is waited for (every process that
/// holds the pipes is in the namespaces, which end with their first process), without them on a thread of their
/// own while this one waits. The exit status and signals are those of [`run`].
///
/// # Errors
/// The errors of [`run`].
pub fn run_filtered(
    plan: &Plan,
    support: &KernelSupport,
    env: &EnvPolicy,
    protection: &dyn Protection,
    argv: &[OsString],
    output: Option<&'static dyn OutputFilter>,
) -> Result<(i32, Vec<PathBuf>)> {
    run_filtered_gated(
        plan,
        support,
        env,
        protection,
        argv,
        output,
        Around {
            before: &mut || true,
            ended: &mut || {},
        },
    )
}

/// What [`run_filtered_gated`] calls around the command.
pub struct Around<'a> {
    /// Called once the command's process exists and before it may start; `false` keeps it from starting.
    pub before: &'a mut dyn FnMut() -> bool,
    /// Called once every process of the command has ended, before the clean-up after it.
    pub ended: &'a mut dyn FnMut(),
}

/// [`run_filtered`], with `before` called once the command's process exists and before it may start: with
/// namespaces the command is made (the namespaces, the mounts, its confinement) while `before` runs, and waits at
/// a gate before its `exec` until `before` returns; without them `before` runs before the command is spawned.
/// When `before` returns `false` the command is not started, and the error's source is `ECANCELED`. For the undo
/// snapshot before the command, which its start then overlaps without the command starting before it. `ended` is
/// called once every process of the command has ended, before the clean-up after it (the removal of the protected
/// paths it made, the cgroup, the scratch directory): for the question of the snapshot after it.
///
/// # Errors
/// The errors of [`run`]; `ECANCELED` when `before` refused the command.
pub fn run_filtered_gated(
    plan: &Plan,
    support: &KernelSupport,
    env: &EnvPolicy,
    protection: &dyn Protection,
    argv: &[OsString],
    output: Option<&'static dyn OutputFilter>,
    around: Around<'_>,
) -> Result<(i32, Vec<PathBuf>)> {
    let Some((program, args)) = argv.split_first() else {
        return Err(KernelSandboxError::Spawn {
            program: String::new(),
            source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
        });
    };
    let defaults = ProcessLimits::default();
    let limits = ProcessLimits {
        memory: plan.memory_max.unwrap_or(defaults.memory),
        ..defaults
    };
    let namespaces = matches!(plan.isolation, Isolation::Namespaces { .. });
    // The command's own PID namespace bounds its processes where the kernel keeps pid_max per namespace; a
    // cgroup, whose first join waits for an RCU grace period (milliseconds per command), only where it does not.
    let pid_max = (namespaces && support.pid_max_per_namespace).then_some(MAX_PROCESSES);
    let cgroup = if pid_max.is_some() {
        None
    } else {
        crate::cgroup::PidsCgroup::where_needed(u64::from(MAX_PROCESSES))
    };
    if !namespaces {
        // Orphans of the command come to this process, which kills them when the command ends.
        let _ = nix::sys::prctl::set_child_subreaper(true);
    }
    let mut prepared = Prepared::new(&Launch {
        plan: Some(plan),
        support,
        env,
        limits,
        cgroup_procs: cgroup.as_ref().map(crate::cgroup::PidsCgroup::procs_fd),
        pid_max,
        die_with_parent: true,
    })?;
    for note in prepared.notes() {
        eprintln!("agent-guard sandbox: {note}");
    }
    prepared.echo_network_refusals(Box::new(std::io::stderr()));
    forward_signals();
    // A command that may write is watched so that it does not fill a disk ([`crate::disk`]).
    let writable: Vec<PathBuf> = plan
        .grants
        .iter()
        .filter(|grant| grant.rights.contains(crate::plan::Rights::WRITE))
        .map(|grant| grant.path.clone())
        .collect();
    // Measured now (the reserves follow what is free as the command starts); the thread starts when its first
    // look is due, so that a command that ends before then has none.
    let mut watching = crate::disk::Watching::new(&writable);
    let mut disk = None;
    let mut pumps = None;
    let status = if prepared.starts_itself() {
        // With namespaces this process makes their process 1 itself.
        prepared
            .start(argv, output.is_some(), true)
            .and_then(|mut started| {
                COMMAND_GROUP.store(started.init.as_raw(), Ordering::SeqCst);
                if CAUGHT.load(Ordering::SeqCst) != 0 {
                    // Told to stop before the command's group was known.
                    let _killed = nix::sys::signal::kill(started.init, nix::sys::signal::Signal::SIGKILL);
                }
                // The command waits at its gate until `before` is done.
                let go = (around.before)();
                started.open_gate(go);
                if go {
                    prepared
                        .publish_services(Box::new(|note: &str| eprintln!("agent-guard sandbox: {note}")));
                }
                if let (Some(filter), Some(stdout), Some(stderr)) =
                    (output, started.stdout.take(), started.stderr.take())
                {
                    // Both pipes end by the time the namespace's first process has ended, at the latest: this
                    // process closed its ends, and every other process holding them is in the namespaces.
                    let since = std::time::Instant::now();
                    filter.pump_both_then(stdout, stderr, crate::disk::FIRST_LOOK, &mut || {
                        disk = watching
                            .take()
                            .and_then(|watching| watching.start(&COMMAND_GROUP, true));
                    });
                    // A command that closed its output goes on; it is watched from when the first look is due.
                    if let Some(watching) = watching.take()
                        && !started.ended_within(crate::disk::FIRST_LOOK.saturating_sub(since.elapsed()))
                    {
                        disk = watching.start(&COMMAND_GROUP, true);
                    }
                } else if let Some(watching) = watching.take() {
                    disk = watching.start(&COMMAND_GROUP, false);
                }
                started.wait()
            })
    } else {
        let mut command = std::process::Command::new(program);
        command.args(args);
        prepared.configure(&mut command);
        if output.is_some() {
            command.stdout(std::process::Stdio::piped());
            command.stderr(std::process::Stdio::piped());
        }
        disk = watching
            .take()
            .and_then(|watching| watching.start(&COMMAND_GROUP, false));
        let go = (around.before)();
        let spawned = if go {
            command.spawn()
        } else {
            Err(std::io::Error::from_raw_os_error(libc::ECANCELED))
        };
        spawned.and_then(|mut child| {
            if let (Some(filter), Some(stdout), Some(stderr)) =
                (output, child.stdout.take(), child.stderr.take())
            {
                // A process the command left behind may hold the pipes past its end, until it is killed below.
                let (stdout, stderr) = (OwnedFd::from(stdout), OwnedFd::from(stderr));
                pumps = Some(std::thread::spawn(move || filter.pump_both(stdout, stderr)));
            }
            COMMAND_GROUP.store(i32::try_from(child.id()).unwrap_or(0), Ordering::SeqCst);
            if CAUGHT.load(Ordering::SeqCst) != 0 {
                // Told to stop before the command's group was known.
                let _killed = child.kill();
            }
            child.wait()
        })
    };
    let status = status.map_err(|source| KernelSandboxError::Spawn {
        program: program.to_string_lossy().into_owned(),
        source,
    })?;
    let filled = disk.and_then(crate::disk::DiskWatch::stop);
    COMMAND_GROUP.store(0, Ordering::SeqCst);
    drop(cgroup);
    if !namespaces {
        kill_descendants();
    }
    // Every process that held the pipes has ended, so the pump meets the end of both streams.
    if let Some(pumps) = pumps {
        let _pumped = pumps.join();
    }
    (around.ended)();
    if let Some(filled) = filled {
        eprintln!("{filled}");
    } else if let Some(bound) = prepared.bound_passed(status) {
        eprintln!("{bound}");
    }
    let code = {
        use std::os::unix::process::ExitStatusExt;
        status
            .code()
            .or_else(|| status.signal().map(|signal| 128 + signal))
            .unwrap_or(125)
    };
    let told = prepared.notes().len();
    let removed = prepared.finish(protection);
    for note in prepared.notes().iter().skip(told) {
        eprintln!("agent-guard sandbox: {note}");
    }
    drop(prepared);
    let caught = CAUGHT.load(Ordering::SeqCst);
    if caught != 0 {
        for path in &removed {
            eprintln!(
                "agent-guard sandbox: removed `{}`: the command created it at a protected path",
                path.display()
            );
        }
        #[expect(
            unsafe_code,
            reason = "dying of the signal this process was sent, as its caller expects"
        )]
        // SAFETY: signal and raise with integer arguments.
        unsafe {
            libc::signal(caught, libc::SIG_DFL);
            libc::raise(caught);
        }
    }
    Ok((code, removed))
}

/// How many processes `agent-guard sandbox` lets a command have at once.
const MAX_PROCESSES: u32 = 1_024;

/// The process group of the command `run` waits for, 0 when there is none.
static COMMAND_GROUP: AtomicI32 = AtomicI32::new(0);
/// The stop signal this process was sent, 0 when none.
static CAUGHT: AtomicI32 = AtomicI32::new(0);

/// When `agent-guard sandbox` is told to stop (a coding agent's timeout sends SIGTERM, a terminal SIGINT or
/// SIGHUP), the command's process group is killed at once: without a PID namespace nothing else would end the
/// background processes it started. `run` then cleans up as after any end (the protected paths the command
/// created are removed) and this process dies of the same signal. (A SIGKILL cannot be caught; there the death
/// signal of the command's first process and, with namespaces, the namespace's end stop everything, but nothing
/// is cleaned up.)
fn forward_signals() {
    extern "C" fn handle(signal: libc::c_int) {
        CAUGHT.store(signal, Ordering::SeqCst);
        let group = COMMAND_GROUP.load(Ordering::SeqCst);
        if group > 0 {
            #[expect(unsafe_code, reason = "an async-signal-safe call in a signal handler")]
            // SAFETY: kill is async-signal-safe; the handler touches only atomics.
            unsafe {
                libc::kill(-group, libc::SIGKILL);
            }
        }
    }
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        #[expect(unsafe_code, reason = "installing a signal handler")]
        // SAFETY: `handle` only makes async-signal-safe calls.
        unsafe {
            libc::signal(signal, handle as extern "C" fn(libc::c_int) as libc::sighandler_t);
        }
    }
}

/// Kills every descendant of this process (a subreaper: orphans are re-parented here) until none is left.
fn kill_descendants() {
    let me = nix::unistd::getpid().as_raw();
    for _ in 0..100 {
        let children = children_of(me);
        if children.is_empty() {
            return;
        }
        for child in children {
            let pid = nix::unistd::Pid::from_raw(child);
            let _killed = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            let _reaped = nix::sys::wait::waitpid(pid, None);
        }
    }
}

/// The processes whose parent is `parent`, from `/proc/<pid>/stat`.
fn children_of(parent: libc::pid_t) -> Vec<libc::pid_t> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(std::result::Result::ok)
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<libc::pid_t>().ok()))
        .filter(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    let (_, rest) = stat.rsplit_once(')')?;
                    rest.split_whitespace().nth(1)?.parse::<libc::pid_t>().ok()
                })
                == Some(parent)
        })
        .collect()
}
