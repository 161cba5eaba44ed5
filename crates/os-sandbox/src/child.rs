//! What runs in the command's process between `fork` and `exec`: the cgroup, limits, namespaces and mounts, then
//! capabilities, Landlock and seccomp. Everything here is a system call on data prepared before the fork: no
//! allocation, no lock, nothing that is unsafe in the child of a process with other threads.
//!
//! With namespaces, process 1 of the new PID namespace mounts, then forks the command and reaps until the command
//! ends; its exit takes every other process of the namespace with it, so nothing the command started in the
//! background outlives it. `agent-guard sandbox` makes that process itself, with `clone` and the namespaces' flags
//! ([`ChildSetup::start`]): three processes in all, its own, the namespace's init and the command. Through
//! `std::process::Command` (the runtime's way, [`ChildSetup::run`]) the child it forks cannot be process 1 of a
//! namespace it makes: it unshares, forks the init and waits for it.
#![expect(
    unsafe_code,
    reason = "system calls between fork and exec: prctl, unshare, mount, landlock, seccomp, capset"
)]

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use seccompiler::BpfProgram;

/// One step of the mount setup of the command's own mount namespace.
#[derive(Debug)]
pub(crate) enum MountOp {
    /// Make every mount private, so that nothing mounted here shows outside.
    Private,
    /// Make every mount read-only, recursively (`mount_setattr`): what Landlock does not govern (modes, owners,
    /// times, extended attributes) cannot change anywhere but where a writable place is bound again.
    ReadOnlyEverything,
    /// Bind `source` onto `target` (with the mounts beneath it when `recursive`).
    Bind {
        source: CString,
        target: CString,
        recursive: bool,
    },
    /// Bind `source` onto `target`, a secret of a root: unlike [`MountOp::Bind`], a `target` that went away is an
    /// error, as the file or directory may only have moved (its directory renamed while the sandbox was set up)
    /// and would be read where it went.
    /// With `identity`, the mount lands on that device and inode alone, through a descriptor opened at the path
    /// and checked (a path that now names another file is an error): a command beside the sandbox cannot swap a
    /// decoy into the place between the scan and the mount.
    Hide {
        source: CString,
        target: CString,
        identity: Option<(u64, u64)>,
    },
    /// Change the flags of the bind mount at `target` (read-only, non-executable, and the flags the original
    /// mount has locked).
    Remount { target: CString, flags: libc::c_ulong },
    /// Mount a fresh tmpfs with `options` at `target`, and grant `access` beneath it (Landlock rules hold
    /// inodes: the new file system has none of the old directory's).
    Tmpfs {
        target: CString,
        options: CString,
        access: u64,
    },
    /// Mount an overlay with `options` (a shared package cache below, the project's layer above) at `target`,
    /// and grant `access` beneath it. Where the kernel refuses, the cache stays as it was: read-only.
    Overlay {
        target: CString,
        options: CString,
        access: u64,
    },
    /// Create the file `path` holding `content` (in the fresh tmpfs: git's generated global configuration).
    File { path: CString, content: Vec<u8> },
}

/// The namespaces of one command.
#[derive(Debug)]
pub(crate) struct NamespaceSetup {
    /// `CLONE_NEW*` flags for `unshare`.
    pub(crate) flags: libc::c_int,
    /// `uid_map` and `gid_map` contents for an unprivileged user namespace.
    pub(crate) user_maps: Option<(Vec<u8>, Vec<u8>)>,
    /// Mounts, in order.
    pub(crate) mounts: Vec<MountOp>,
    /// The Landlock rights to grant on the command's own `/proc`, once it is mounted.
    pub(crate) proc_access: u64,
    /// Whether to bring the loopback interface of a new network namespace up.
    pub(crate) loopback: bool,
    /// The relay to the proxy, started once the loopback is up (a command allowed the network).
    pub(crate) relay: Option<crate::proxy::Relay>,
    /// The door's end of the socket pair to the supervisor, through which it publishes what a background command
    /// serves on its loopback.
    pub(crate) door: Option<RawFd>,
    /// `kernel.pid_max` of the new PID namespace, written once its own `/proc` is mounted: the bound on the
    /// command's processes where the kernel keeps it per namespace.
    pub(crate) pid_max: Option<CString>,
    /// The working directory, entered again after the mounts: a directory entered before a mount over it (a root
    /// mounted read-only over itself) would keep reaching the files beneath the mount, secrets included.
    pub(crate) cwd: Option<CString>,
    /// The write end of a pipe (non-blocking, closed at exec) where the namespace's init writes the command's wait
    /// status.
    pub(crate) status_fd: Option<RawFd>,
}

/// The confinement half of the setup.
#[derive(Debug)]
pub(crate) struct Confine {
    pub(crate) namespaces: Option<NamespaceSetup>,
    pub(crate) ruleset: OwnedFd,
    /// The seccomp filter.
    pub(crate) seccomp: BpfProgram,
    pub(crate) cap_last: libc::c_ulong,
}

/// Everything the child does before `exec`.
#[derive(Debug)]
pub(crate) struct ChildSetup {
    /// The files that join the command's cgroups (memory, pids), written first so that every process below
    /// counts.
    pub(crate) cgroups: Vec<RawFd>,
    /// The parent to die with (the `agent-guard sandbox` process), when it is single-threaded.
    pub(crate) die_with: Option<libc::pid_t>,
    /// rlimits as `(resource, soft, hard)`, already lowered to what the parent has.
    pub(crate) rlimits: Vec<(libc::__rlimit_resource_t, libc::rlim_t, libc::rlim_t)>,
    /// The nice value.
    pub(crate) nice: Option<libc::c_int>,
    /// Landlock, seccomp and namespaces; `None` runs the command with the limits alone.
    pub(crate) confine: Option<Confine>,
}

impl ChildSetup {
    /// Runs in the child of `std::process::Command`. Returns in the process that goes on to `exec` the command;
    /// the helper processes of the namespaces never return.
    pub(crate) fn run(&self) -> io::Result<()> {
        self.bound(None)?;
        let Some(confine) = &self.confine else {
            return Ok(());
        };
        if let Some(namespaces) = &confine.namespaces {
            enter_namespaces(namespaces)?;
            init(namespaces, confine.ruleset.as_raw_fd())?;
        }
        confine_command(confine)
    }

    /// Starts `exec` in the namespaces of this setup: `clone` makes them and their process 1 at once, which sets
    /// up what [`run`](Self::run) sets up and forks the command. Returns the pid of that process 1, whose exit
    /// status is the command's; a step that fails in either process writes its `errno` to `exec.errors`.
    ///
    /// # Errors
    /// `EINVAL` for a setup without namespaces, and the error of `clone`.
    pub(crate) fn start(&self, exec: &Exec<'_>) -> io::Result<libc::pid_t> {
        let Some((confine, namespaces)) = self.confine.as_ref().and_then(|confine| {
            confine
                .namespaces
                .as_ref()
                .map(|namespaces| (confine, namespaces))
        }) else {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        };
        // The network namespace is made by the child itself ([`LATE_NAMESPACES`]).
        let flags =
            libc::c_ulong::from(((namespaces.flags & !LATE_NAMESPACES) | libc::SIGCHLD).unsigned_abs());
        // SAFETY: `clone` without a new stack is `fork` with the namespaces' flags, as bubblewrap makes its init:
        // the child runs on a copy of this thread's stack and memory, with this thread alone, and makes only
        // system calls on data prepared before the call (no allocation, no lock) until it execs or exits; it
        // never returns here.
        let pid = unsafe { libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) };
        match pid {
            -1 => Err(io::Error::last_os_error()),
            0 => self.init_by_clone(confine, namespaces, exec),
            pid => libc::pid_t::try_from(pid).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL)),
        }
    }

    /// Process 1 of the namespaces `clone` made: the command's descriptors and signals, the bounds, the user
    /// maps, the mounts; then it forks the command, which confines itself and execs. Never returns.
    fn init_by_clone(&self, confine: &Confine, namespaces: &NamespaceSetup, exec: &Exec<'_>) -> ! {
        if let Some((_, write)) = exec.gate {
            // SAFETY: close of a descriptor this process inherited; only the supervisor keeps the write end.
            unsafe { libc::close(write) };
        }
        let failed = exec
            .stdio()
            .and_then(|()| self.bound(exec.parent))
            .and_then(|()| user_maps(namespaces))
            .and_then(|()| unshare_late(namespaces))
            .and_then(|()| init(namespaces, confine.ruleset.as_raw_fd()))
            .and_then(|()| confine_command(confine))
            .and_then(|()| exec.pass_gate())
            .and_then(|()| exec.exec());
        let errno = failed
            .err()
            .and_then(|e| e.raw_os_error())
            .unwrap_or(libc::EINVAL);
        // SAFETY: writes the int on our stack to the pipe of errors (its reader gets it after our end), then ends
        // the process at once.
        unsafe {
            libc::write(
                exec.errors,
                (&raw const errno).cast(),
                std::mem::size_of::<libc::c_int>(),
            );
            libc::_exit(125)
        }
    }

    /// The bounds every command gets, in its first process: the cgroups, the death signal, the rlimits and the
    /// priority. `parent` is a pidfd of the process to die with, for a child that cannot name it by pid (in a
    /// PID namespace of its own, its parent's pid is 0).
    fn bound(&self, parent: Option<RawFd>) -> io::Result<()> {
        for &fd in &self.cgroups {
            // SAFETY: writes one byte from a static buffer to a descriptor opened before the fork.
            if unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) } != 1 {
                return Err(fail(b"join the command's cgroup"));
            }
        }
        if let Some(pid) = self.die_with {
            // SAFETY: prctl with integer arguments.
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
            // The parent may have died before the prctl took effect.
            let gone = match parent {
                Some(pidfd) => {
                    let mut poll = libc::pollfd {
                        fd: pidfd,
                        events: libc::POLLIN,
                        revents: 0,
                    };
                    // SAFETY: poll of one `pollfd` on our stack, without waiting: a pidfd is readable once its
                    // process has exited.
                    unsafe { libc::poll(&raw mut poll, 1, 0) > 0 }
                }
                // SAFETY: getppid takes no argument.
                None => (unsafe { libc::getppid() }) != pid,
            };
            if gone {
                // SAFETY: _exit ends the child at once.
                unsafe { libc::_exit(137) };
            }
        }
        for &(resource, soft, hard) in &self.rlimits {
            let limit = libc::rlimit {
                rlim_cur: soft,
                rlim_max: hard,
            };
            // SAFETY: setrlimit reads one struct on our stack.
            if unsafe { libc::setrlimit(resource, &limit) } != 0 {
                return Err(fail(b"set a resource limit"));
            }
        }
        if let Some(nice) = self.nice {
            // SAFETY: setpriority with integer arguments.
            if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) } != 0 {
                return Err(fail(b"lower the priority"));
            }
        }
        Ok(())
    }
}

/// The command's own last steps: a session of its own, no descriptor it did not ask for, no capability, then
/// Landlock and seccomp.
fn confine_command(confine: &Confine) -> io::Result<()> {
    // The command's own process: a session of its own, so that it has no controlling terminal (`/dev/tty`
    // would reach the user's: type into it, read what is typed, set the clipboard with an escape sequence).
    // It may still read and write the descriptors it was given.
    // SAFETY: setsid takes no argument.
    if unsafe { libc::setsid() } < 0 {
        return Err(fail(b"start a session of its own"));
    }
    // Descriptors it did not ask for close at exec, then it loses every capability, and Landlock and seccomp
    // go on for good.
    // SAFETY: close_range with integer arguments; on an old kernel the loop below marks them one by one.
    if unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, libc::CLOSE_RANGE_CLOEXEC) } != 0 {
        for fd in 3..1024 {
            // SAFETY: fcntl on a descriptor number; a closed one fails harmlessly.
            unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        }
    }
    drop_capabilities(confine.cap_last)?;
    // SAFETY: prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(fail(b"set no_new_privs"));
    }
    // SAFETY: landlock_restrict_self takes the ruleset descriptor and flags.
    if unsafe {
        libc::syscall(
            libc::SYS_landlock_restrict_self,
            confine.ruleset.as_raw_fd(),
            0u32,
        )
    } != 0
    {
        return Err(fail(b"enforce the Landlock ruleset"));
    }
    seccompiler::apply_filter(&confine.seccomp).map_err(|_| fail(b"install the seccomp filter"))?;
    Ok(())
}

/// What [`ChildSetup::start`] needs besides the setup, prepared before the `clone`: the program, its arguments and
/// environment as C arrays, its output descriptors, and where to report a failure.
#[derive(Debug)]
pub(crate) struct Exec<'a> {
    /// The program, found in the `PATH` of `envp` as `execvp` finds it.
    pub(crate) program: &'a std::ffi::CStr,
    /// The arguments, the program's name first, ending with a null pointer.
    pub(crate) argv: &'a [*const libc::c_char],
    /// `NAME=value` entries, ending with a null pointer.
    pub(crate) envp: &'a [*const libc::c_char],
    /// The write ends of the pipes that become the command's stdout and stderr (else it inherits this process's).
    pub(crate) stdout: Option<RawFd>,
    pub(crate) stderr: Option<RawFd>,
    /// The write end of a pipe (closed at exec) where a failed step writes its `errno`.
    pub(crate) errors: RawFd,
    /// A pidfd of the process to die with, when the setup names one.
    pub(crate) parent: Option<RawFd>,
    /// The gate the command waits at before its `exec`: the read end, where the supervisor writes one byte once
    /// the command may start (the undo snapshot before it is complete), and the write end, which the child
    /// closes first, so that the read meets the end of the pipe when the supervisor closes it without the byte or
    /// dies.
    pub(crate) gate: Option<(RawFd, RawFd)>,
}

unsafe extern "C" {
    /// The C library's environment of this process, which `execvp` searches `PATH` in and passes on.
    static mut environ: *const *const libc::c_char;
}

impl Exec<'_> {
    /// The command's standard descriptors, a process group of its own, and signals as a new program expects them:
    /// none blocked, `SIGPIPE` (which the Rust runtime ignores) back to its default. As `std::process::Command`
    /// does in its child.
    fn stdio(&self) -> io::Result<()> {
        for (fd, target) in [(self.stdout, 1), (self.stderr, 2)] {
            let Some(fd) = fd else { continue };
            // SAFETY: dup2 and fcntl on descriptors this process holds.
            let done = unsafe {
                if fd == target {
                    libc::fcntl(fd, libc::F_SETFD, 0)
                } else {
                    libc::dup2(fd, target)
                }
            };
            if done < 0 {
                return Err(fail(b"pass the command's output"));
            }
        }
        // SAFETY: setpgid with integer arguments; sigemptyset and sigprocmask on a set on our stack; signal with
        // integer arguments.
        unsafe {
            if libc::setpgid(0, 0) != 0 {
                return Err(fail(b"start a process group"));
            }
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&raw mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &raw const none, std::ptr::null_mut());
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
        Ok(())
    }

    /// Waits at the gate, when there is one, until the supervisor lets the command start: `ECANCELED` when the
    /// supervisor closed it without a byte (it refused the command, or died), and the command does not run.
    fn pass_gate(&self) -> io::Result<()> {
        let Some((read, _)) = self.gate else {
            return Ok(());
        };
        let mut byte = 0u8;
        loop {
            // SAFETY: read(2) of one byte into a byte on our stack, from a descriptor opened before the clone.
            let got = unsafe { libc::read(read, (&raw mut byte).cast(), 1) };
            match got {
                1 => return Ok(()),
                0 => return Err(io::Error::from_raw_os_error(libc::ECANCELED)),
                _ if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => {}
                _ => return Err(fail(b"wait for the snapshot before the command")),
            }
        }
    }

    /// Replaces this process with the command; returns only the error of `execvp`.
    fn exec(&self) -> io::Result<()> {
        // SAFETY: this process is single-threaded and about to exec: pointing `environ` at the array prepared before
        // the clone (it outlives the call) makes `execvp` search its `PATH` and pass it on, as
        // `std::process::Command` does; `argv` ends with a null pointer.
        unsafe {
            (&raw mut environ).write(self.envp.as_ptr());
            libc::execvp(self.program.as_ptr(), self.argv.as_ptr());
        }
        Err(io::Error::last_os_error())
    }
}

/// `unshare` and the user maps, then a fork: this process waits for the namespace's init, and returns in the init.
fn enter_namespaces(setup: &NamespaceSetup) -> io::Result<()> {
    // SAFETY: unshare with flags.
    if unsafe { libc::unshare(setup.flags) } != 0 {
        return Err(fail(b"make the namespaces"));
    }
    user_maps(setup)?;
    // SAFETY: fork in a single-threaded child; both sides only make system calls.
    match unsafe { libc::fork() } {
        -1 => Err(fail(b"start the namespace's init")),
        0 => {
            // Process 1 of the new PID namespace. It dies with the waiting process above.
            // SAFETY: prctl with integer arguments.
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
            Ok(())
        }
        init => wait_and_exit(init, false, None),
    }
}

/// The namespaces the namespace's process 1 makes itself with `unshare`, rather than the `clone` that makes it: the
/// network namespace, whose creation is most of the kernel's part of the start (about half a millisecond: its
/// loopback device, its `sysctl` tables). Made in the child, it no longer holds up the supervisor, which takes the
/// undo snapshot before the command meanwhile; the command is forked after it, in it, as before.
const LATE_NAMESPACES: libc::c_int = libc::CLONE_NEWNET;

/// Makes the namespaces of [`LATE_NAMESPACES`] the setup asks for, in the process 1 `clone` made.
fn unshare_late(setup: &NamespaceSetup) -> io::Result<()> {
    let late = setup.flags & LATE_NAMESPACES;
    // SAFETY: unshare with flags.
    if late != 0 && unsafe { libc::unshare(late) } != 0 {
        return Err(fail(b"make the network namespace"));
    }
    Ok(())
}

/// Maps the user's own ids into a new user namespace, from inside it.
fn user_maps(setup: &NamespaceSetup) -> io::Result<()> {
    if let Some((uid_map, gid_map)) = &setup.user_maps {
        write_file(c"/proc/self/setgroups", b"deny")?;
        write_file(c"/proc/self/uid_map", uid_map)?;
        write_file(c"/proc/self/gid_map", gid_map)?;
    }
    Ok(())
}

/// Process 1 of the new PID namespace: the mounts, the working directory, `/proc`, the process bound, the loopback
/// and the relay; then it forks the command and waits for it. Returns in the command's process only.
fn init(setup: &NamespaceSetup, ruleset: RawFd) -> io::Result<()> {
    for op in &setup.mounts {
        match op {
            // The cache stays read-only (every mount is by now) and the command runs: it is told on stderr.
            MountOp::Overlay { target, access, .. } => {
                // A grant that fails leaves the overlay to the grant of the cache it covers.
                if apply_mount(op).is_ok() {
                    grant(ruleset, target, *access);
                }
            }
            MountOp::Tmpfs { target, access, .. } => {
                apply_mount(op)?;
                if !grant(ruleset, target, *access) {
                    return Err(fail(b"grant the private temporary directory"));
                }
            }
            _ => apply_mount(op)?,
        }
    }
    if let Some(cwd) = &setup.cwd {
        // SAFETY: chdir with a NUL-terminated path prepared before the fork.
        if unsafe { libc::chdir(cwd.as_ptr()) } != 0 {
            return Err(fail(b"enter the working directory again"));
        }
    }
    let own_proc = mount_proc(ruleset, setup.proc_access);
    if let Some(pid_max) = &setup.pid_max {
        // Only this namespace's `/proc` may be written: the host's would change the host's bound.
        if !own_proc || write_file(c"/proc/sys/kernel/pid_max", pid_max.as_bytes()).is_err() {
            return Err(fail(b"bound the command's processes"));
        }
    }
    if setup.loopback {
        loopback_up()?;
    }
    if let Some(relay) = setup.relay {
        crate::proxy::start_relay(relay).map_err(|_| fail(b"start the relay to the network proxy"))?;
    }
    if let Some(door) = setup.door {
        crate::proxy::start_door(door).map_err(|_| fail(b"start the door to the command's services"))?;
    }
    // SAFETY: as above.
    match unsafe { libc::fork() } {
        -1 => Err(fail(b"start the command")),
        0 => Ok(()),
        command => wait_and_exit(command, true, setup.status_fd),
    }
}

/// Closes every descriptor (the command's output must see its end when the command ends), waits for `child`
/// (reaping every orphan meanwhile when `reap_all`: this is the namespace's init) and exits with its status,
/// `128 + N` for a death by signal N. Before it exits it writes the wait status to `report` (kept open), so that
/// the supervisor tells a death by a signal from an exit with the same number.
fn wait_and_exit(child: libc::pid_t, reap_all: bool, report: Option<RawFd>) -> ! {
    let kept = report.and_then(|fd| u32::try_from(fd).ok());
    // SAFETY: close_range with integer arguments.
    unsafe {
        match kept {
            Some(fd) => {
                if fd > 0 {
                    libc::syscall(libc::SYS_close_range, 0u32, fd - 1, 0u32);
                }
                libc::syscall(libc::SYS_close_range, fd.saturating_add(1), u32::MAX, 0u32);
            }
            None => {
                libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
            }
        }
    };
    let wanted = if reap_all { -1 } else { child };
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: waitpid writes one int on our stack.
        let pid = unsafe { libc::waitpid(wanted, &mut status, 0) };
        if pid == child {
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else if libc::WIFSIGNALED(status) {
                128 + libc::WTERMSIG(status)
            } else {
                continue;
            };
            if let Some(fd) = report {
                // SAFETY: writes the int on our stack to a pipe opened before the fork; it cannot block (the pipe
                // is empty and non-blocking), and a failure leaves the exit status alone to tell.
                unsafe { libc::write(fd, (&raw const status).cast(), std::mem::size_of::<libc::c_int>()) };
            }
            // SAFETY: _exit ends the process at once.
            unsafe { libc::_exit(code) };
        }
        if pid < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            // SAFETY: as above.
            unsafe { libc::_exit(125) };
        }
    }
}

/// Binds `source` onto the file or directory at `target` only if it is still the one with `identity` (device,
/// inode): opened without following a link, checked, and mounted on through `/proc/self/fd/N`, so that the mount
/// lands on what was checked whatever is renamed meanwhile. Returns `mount`'s result; `errno` says why not
/// (`ESTALE` for another file at the path). No allocation: the descriptor's path is written on the stack.
///
/// # Safety
/// Runs between fork and exec: system calls on data prepared before the fork only.
unsafe fn hide_checked(source: &CString, target: &CString, identity: (u64, u64)) -> libc::c_int {
    // SAFETY: open, fstat, mount and close with pointers to NUL-terminated strings and a stat on our stack.
    unsafe {
        let fd = libc::open(target.as_ptr(), libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC);
        if fd < 0 {
            return -1;
        }
        let mut stat: libc::stat = std::mem::zeroed();
        let same =
            libc::fstat(fd, &raw mut stat) == 0 && stat.st_dev == identity.0 && stat.st_ino == identity.1;
        let result = if same {
            let path = fd_path(fd);
            libc::mount(
                source.as_ptr(),
                path.as_ptr().cast(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            )
        } else {
            *libc::__errno_location() = libc::ESTALE;
            -1
        };
        let saved = *libc::__errno_location();
        libc::close(fd);
        *libc::__errno_location() = saved;
        result
    }
}

/// `/proc/self/fd/<fd>` as a NUL-terminated string on the stack.
fn fd_path(fd: libc::c_int) -> [u8; 32] {
    let mut path = [0u8; 32];
    let prefix = b"/proc/self/fd/";
    let mut digits = [0u8; 10];
    let mut count = 0;
    let mut rest = u32::try_from(fd).unwrap_or(0);
    loop {
        if let Some(slot) = digits.get_mut(count) {
            *slot = b'0' + u8::try_from(rest % 10).unwrap_or(0);
        }
        count += 1;
        rest /= 10;
        if rest == 0 || count == digits.len() {
            break;
        }
    }
    let number = digits.iter().take(count).rev();
    for (slot, byte) in path.iter_mut().zip(prefix.iter().chain(number)) {
        *slot = *byte;
    }
    path
}

fn apply_mount(op: &MountOp) -> io::Result<()> {
    let none = std::ptr::null::<libc::c_char>();
    // SAFETY: mount(2) and mount_setattr(2) with NUL-terminated strings prepared before the fork, null pointers
    // where the call ignores the argument, and a `mount_attr` on our stack.
    let (result, what, path) = unsafe {
        match op {
            MountOp::Private => (
                libc::mount(
                    none,
                    c"/".as_ptr(),
                    none,
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ),
                b"make the mounts private".as_slice(),
                c"/".as_ptr(),
            ),
            MountOp::ReadOnlyEverything => {
                #[repr(C)]
                struct MountAttr {
                    attr_set: u64,
                    attr_clr: u64,
                    propagation: u64,
                    userns_fd: u64,
                }
                const MOUNT_ATTR_RDONLY: u64 = 0x1;
                const AT_RECURSIVE: libc::c_uint = 0x8000;
                let attr = MountAttr {
                    attr_set: MOUNT_ATTR_RDONLY,
                    attr_clr: 0,
                    propagation: 0,
                    userns_fd: 0,
                };
                let result = libc::syscall(
                    libc::SYS_mount_setattr,
                    libc::AT_FDCWD,
                    c"/".as_ptr(),
                    AT_RECURSIVE,
                    &attr as *const MountAttr,
                    std::mem::size_of::<MountAttr>(),
                );
                (
                    libc::c_int::try_from(result).unwrap_or(-1),
                    b"make the mounts read-only".as_slice(),
                    c"/".as_ptr(),
                )
            }
            MountOp::Bind {
                source,
                target,
                recursive,
            } => {
                let flags = libc::MS_BIND | if *recursive { libc::MS_REC } else { 0 };
                (
                    libc::mount(source.as_ptr(), target.as_ptr(), none, flags, std::ptr::null()),
                    b"bind".as_slice(),
                    target.as_ptr(),
                )
            }
            MountOp::Hide {
                source,
                target,
                identity: None,
            } => (
                libc::mount(
                    source.as_ptr(),
                    target.as_ptr(),
                    none,
                    libc::MS_BIND,
                    std::ptr::null(),
                ),
                b"hide".as_slice(),
                target.as_ptr(),
            ),
            MountOp::Hide {
                source,
                target,
                identity: Some(identity),
            } => (
                hide_checked(source, target, *identity),
                b"hide".as_slice(),
                target.as_ptr(),
            ),
            MountOp::Remount { target, flags } => (
                libc::mount(none, target.as_ptr(), none, *flags, std::ptr::null()),
                b"mount read-only".as_slice(),
                target.as_ptr(),
            ),
            MountOp::Tmpfs { target, options, .. } => (
                libc::mount(
                    c"tmpfs".as_ptr(),
                    target.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV,
                    options.as_ptr().cast(),
                ),
                b"mount a tmpfs on".as_slice(),
                target.as_ptr(),
            ),
            MountOp::Overlay { target, options, .. } => (
                libc::mount(
                    c"overlay".as_ptr(),
                    target.as_ptr(),
                    c"overlay".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV,
                    options.as_ptr().cast(),
                ),
                b"mount the overlay of the package cache".as_slice(),
                target.as_ptr(),
            ),
            MountOp::File { path, content } => {
                let fd = libc::open(
                    path.as_ptr(),
                    libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
                    0o600,
                );
                let written = if fd < 0 {
                    -1
                } else {
                    let written = libc::write(fd, content.as_ptr().cast(), content.len());
                    libc::close(fd);
                    if usize::try_from(written).ok() == Some(content.len()) {
                        0
                    } else {
                        -1
                    }
                };
                (written, b"write".as_slice(), path.as_ptr())
            }
        }
    };
    if result == 0 {
        return Ok(());
    }
    let error = io::Error::last_os_error();
    // A path that went away since the plan has nothing left to hide or protect.
    if error.raw_os_error() == Some(libc::ENOENT)
        && !matches!(
            op,
            MountOp::Private | MountOp::ReadOnlyEverything | MountOp::Hide { .. }
        )
    {
        return Ok(());
    }
    write_stderr(b"agent-guard sandbox: cannot ");
    write_stderr(what);
    write_stderr(b" `");
    // SAFETY: `path` points at a NUL-terminated string that lives as long as `op`.
    write_stderr(unsafe { std::ffi::CStr::from_ptr(path) }.to_bytes());
    write_stderr(b"`\n");
    Err(error)
}

/// Mounts a `/proc` of the new PID namespace and grants reading it. Where the kernel refuses (a container that
/// hides parts of its own `/proc`), `/proc` stays ungranted: the command then reads none of it.
fn mount_proc(ruleset: RawFd, access: u64) -> bool {
    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    // SAFETY: mount(2) with static NUL-terminated strings.
    let mounted = unsafe {
        libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            flags,
            std::ptr::null(),
        )
    } == 0;
    if mounted {
        grant(ruleset, c"/proc", access);
    }
    mounted
}

/// Adds a Landlock rule granting `access` beneath `path` to the ruleset; whether it was added.
fn grant(ruleset: RawFd, path: &std::ffi::CStr, access: u64) -> bool {
    // SAFETY: open(2) with a NUL-terminated path prepared before the fork.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return false;
    }
    #[repr(C, packed)]
    struct PathBeneathAttr {
        allowed_access: u64,
        parent_fd: i32,
    }
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: fd,
    };
    const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;
    // SAFETY: landlock_add_rule reads the attribute struct on our stack; the descriptors are open.
    let added = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0u32,
        )
    } == 0;
    // SAFETY: closes the descriptor opened above.
    unsafe { libc::close(fd) };
    added
}

/// Brings `lo` up in the new network namespace, so that a build's tests can talk to themselves.
fn loopback_up() -> io::Result<()> {
    // SAFETY: socket, two ioctls on a zeroed `ifreq` on our stack, close.
    unsafe {
        let socket = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if socket < 0 {
            return Err(fail(b"open a socket for the loopback interface"));
        }
        let mut request: libc::ifreq = std::mem::zeroed();
        for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
            *slot = *byte as libc::c_char;
        }
        let ok = libc::ioctl(socket, libc::SIOCGIFFLAGS, &mut request) == 0 && {
            request.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            libc::ioctl(socket, libc::SIOCSIFFLAGS, &request) == 0
        };
        libc::close(socket);
        if ok {
            Ok(())
        } else {
            Err(fail(b"bring the loopback interface up"))
        }
    }
}

/// Empties the bounding, ambient, effective, permitted and inheritable capability sets, so that the command
/// (root included) has no privilege beyond its user's files, now or after an `exec`.
fn drop_capabilities(cap_last: libc::c_ulong) -> io::Result<()> {
    for cap in 0..=cap_last {
        // SAFETY: prctl with integer arguments; without CAP_SETPCAP it fails, and there is nothing to drop.
        unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
    }
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) };
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    let header = Header {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset reads the header and two data structs on our stack.
    if unsafe { libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr()) } != 0 {
        return Err(fail(b"drop the capabilities"));
    }
    Ok(())
}

fn write_file(path: &std::ffi::CStr, content: &[u8]) -> io::Result<()> {
    // SAFETY: open, write and close on a NUL-terminated path and a buffer prepared before the fork.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(fail(b"write the user namespace's maps"));
        }
        let written = libc::write(fd, content.as_ptr().cast(), content.len());
        libc::close(fd);
        if usize::try_from(written).ok() != Some(content.len()) {
            return Err(fail(b"write the user namespace's maps"));
        }
    }
    Ok(())
}

/// Says on stderr which step failed and returns the error of the last system call.
fn fail(step: &[u8]) -> io::Error {
    let error = io::Error::last_os_error();
    write_stderr(b"agent-guard sandbox: cannot ");
    write_stderr(step);
    write_stderr(b"\n");
    error
}

fn write_stderr(bytes: &[u8]) {
    // SAFETY: write(2) of a buffer we hold to descriptor 2; a failure is ignored (there is no one to tell).
    unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_descriptors_path_is_written_whole() {
        for (fd, text) in [
            (0, "/proc/self/fd/0"),
            (7, "/proc/self/fd/7"),
            (1234, "/proc/self/fd/1234"),
        ] {
            let path = fd_path(fd);
            let end = path.iter().position(|b| *b == 0).unwrap();
            assert_eq!(&path[..end], text.as_bytes());
        }
    }
}
