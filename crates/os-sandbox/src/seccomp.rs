//! The seccomp filter of a sandboxed command: sockets unless the network is allowed, and the system calls that
//! reach past Landlock (other processes' memory, the kernel's keyrings, io_uring, typing into a terminal, …).

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch, sock_filter,
};

use crate::error::{KernelSandboxError, Result};

/// Which sockets the command may open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sockets {
    /// IPv4 and IPv6 only, inside a network namespace of its own that has nothing but loopback.
    PrivateLoopback,
    /// None at all (`socketpair` still works: it reaches nothing outside).
    None,
    /// IPv4, IPv6 and netlink sockets, in a network namespace of its own whose only interface is a loopback (the
    /// network through the proxy). Every other family is refused: a Unix socket connects by its path to any
    /// service whose socket file the command can reach (a terminal multiplexer, a database, a container engine),
    /// which Landlock does not govern; vsock reaches a virtual machine's host whatever the network namespace;
    /// packet, Bluetooth and the rest have nothing to do there.
    OwnNamespace,
    /// TCP over IPv4 and IPv6 (whose ports Landlock bounds): no Unix sockets, no UDP, no raw or packet sockets,
    /// no SCTP or MPTCP, which Landlock's TCP rules do not see. For a command allowed the network through the
    /// proxy without a network namespace of its own.
    StreamOnly,
}

/// System calls refused in every profile, with why:
/// - `ptrace`, `process_vm_readv`, `process_vm_writev`, `pidfd_getfd`: reading or changing another process's
///   memory, taking its descriptors;
/// - `keyctl`, `add_key`, `request_key`: the kernel keyrings hold credentials;
/// - `io_uring_*`: io_uring performs file and socket operations that seccomp never sees;
/// - `bpf`, `perf_event_open`, `userfaultfd`, `fanotify_init`, `syslog`: kernel introspection and hooks;
/// - `open_by_handle_at`, `name_to_handle_at`: opening files by handle, past every path check;
/// - `mount` and the new mount API, `umount2`, `pivot_root`, `chroot`, `setns`: changing what paths mean;
/// - `kexec_*`, `*_module`, `reboot`, `swapon`, `swapoff`, `acct`, `quotactl`, clock setters, `iopl`,
///   `ioperm`, `vhangup`: changing the machine.
#[cfg(target_arch = "x86_64")]
const REFUSED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_pidfd_getfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_fanotify_init,
    libc::SYS_syslog,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_setns,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_iopl,
    libc::SYS_ioperm,
    libc::SYS_vhangup,
];

#[cfg(target_arch = "aarch64")]
const REFUSED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_pidfd_getfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_fanotify_init,
    libc::SYS_syslog,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_setns,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_vhangup,
];

/// Calls that change a file's metadata (mode, owner, times, extended attributes and ACLs). Landlock does not
/// govern them, so a `read-only` command, which changes nothing, is refused them all: outside the roots it could
/// otherwise make a user's files world-writable or set a program setuid. The newer calls share one number on every
/// architecture: `fchmodat2` (452), `setxattrat` (463), `removexattrat` (466).
#[cfg(target_arch = "x86_64")]
const METADATA: &[libc::c_long] = &[
    libc::SYS_chmod,
    libc::SYS_fchmod,
    libc::SYS_fchmodat,
    452,
    libc::SYS_chown,
    libc::SYS_fchown,
    libc::SYS_lchown,
    libc::SYS_fchownat,
    libc::SYS_utime,
    libc::SYS_utimes,
    libc::SYS_utimensat,
    libc::SYS_futimesat,
    libc::SYS_setxattr,
    libc::SYS_lsetxattr,
    libc::SYS_fsetxattr,
    libc::SYS_removexattr,
    libc::SYS_lremovexattr,
    libc::SYS_fremovexattr,
    463,
    466,
];

#[cfg(target_arch = "aarch64")]
const METADATA: &[libc::c_long] = &[
    libc::SYS_fchmod,
    libc::SYS_fchmodat,
    452,
    libc::SYS_fchown,
    libc::SYS_fchownat,
    libc::SYS_utimensat,
    libc::SYS_setxattr,
    libc::SYS_lsetxattr,
    libc::SYS_fsetxattr,
    libc::SYS_removexattr,
    libc::SYS_lremovexattr,
    libc::SYS_fremovexattr,
    463,
    466,
];

/// `ioctl` requests that push characters into a terminal's input (`TIOCSTI`) or drive the console
/// (`TIOCLINUX`): a command could type into the user's shell.
const TERMINAL_INJECTION: [u64; 2] = [0x5412, 0x541C];

/// The x32 system-call bit on x86_64: the same calls under other numbers, which a filter of numbers must refuse
/// as a whole.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Compiles the filter: refused calls fail with `EPERM`, those of [`ANSWERED`] with their own errors (the checks of
/// [`answered`], first), everything else runs. A command that may not write (`read_only`) is refused the calls that change
/// metadata too. One filter, so that the kernel compiles one program when it is installed and runs one on each
/// system call of the command.
pub(crate) fn build(sockets: Sockets, read_only: bool) -> Result<BpfProgram> {
    let error = |e: seccompiler::BackendError| KernelSandboxError::Seccomp(e.to_string());
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| {
        KernelSandboxError::Seccomp(format!("architecture `{}`: {e}", std::env::consts::ARCH))
    })?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = REFUSED.iter().map(|&nr| (nr, Vec::new())).collect();
    if read_only {
        rules.extend(METADATA.iter().map(|&nr| (nr, Vec::new())));
    }
    let ioctl = TERMINAL_INJECTION
        .iter()
        .map(|&request| {
            SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request)
                .and_then(|c| SeccompRule::new(vec![c]))
        })
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(error)?;
    rules.insert(libc::SYS_ioctl, ioctl);
    // A user namespace would give the command every capability inside it (and with them netfilter, mounts
    // and the rest of the kernel's attack surface): `unshare` and `clone` with `CLONE_NEWUSER` are refused.
    let new_user = u64::try_from(libc::CLONE_NEWUSER).unwrap_or(0x1000_0000);
    let user_namespace = || {
        SeccompCondition::new(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(new_user),
            new_user,
        )
        .and_then(|c| SeccompRule::new(vec![c]))
    };
    rules.insert(libc::SYS_unshare, vec![user_namespace().map_err(error)?]);
    rules.insert(libc::SYS_clone, vec![user_namespace().map_err(error)?]);
    match sockets {
        Sockets::None => {
            rules.insert(libc::SYS_socket, Vec::new());
        }
        Sockets::PrivateLoopback => {
            let family = |f: libc::c_int| {
                SeccompCondition::new(
                    0,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::Ne,
                    u64::from(f.unsigned_abs()),
                )
            };
            let rule = family(libc::AF_INET)
                .and_then(|inet| family(libc::AF_INET6).map(|inet6| vec![inet, inet6]))
                .and_then(SeccompRule::new)
                .map_err(error)?;
            rules.insert(libc::SYS_socket, vec![rule]);
        }
        Sockets::StreamOnly => {
            rules.insert(libc::SYS_socket, stream_only().map_err(error)?);
        }
        Sockets::OwnNamespace => {
            let rule = [libc::AF_INET, libc::AF_INET6, libc::AF_NETLINK]
                .into_iter()
                .map(|family| {
                    SeccompCondition::new(
                        0,
                        SeccompCmpArgLen::Dword,
                        SeccompCmpOp::Ne,
                        u64::from(family.unsigned_abs()),
                    )
                })
                .collect::<std::result::Result<Vec<_>, _>>()
                .and_then(SeccompRule::new)
                .map_err(error)?;
            rules.insert(libc::SYS_socket, vec![rule]);
        }
    }
    let errno = u32::try_from(libc::EPERM).unwrap_or(1);
    let filter =
        SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(errno), arch).map_err(error)?;
    let mut program: BpfProgram = filter.try_into().map_err(error)?;
    if cfg!(target_arch = "x86_64") {
        let refuse_x32 = [
            // Load the system-call number; at or past the x32 bit, refuse.
            sock_filter {
                code: 0x20, // BPF_LD | BPF_W | BPF_ABS
                jt: 0,
                jf: 0,
                k: 0,
            },
            sock_filter {
                code: 0x35, // BPF_JMP | BPF_JGE | BPF_K
                jt: 0,
                jf: 1,
                k: X32_SYSCALL_BIT,
            },
            sock_filter {
                code: 0x06, // BPF_RET | BPF_K
                jt: 0,
                jf: 0,
                k: 0x0005_0000 | errno, // SECCOMP_RET_ERRNO
            },
        ];
        program.splice(0..0, refuse_x32);
    }
    // `answered` ends with its allow; the checks before it fall through to the rest of this filter.
    let head = answered()?;
    let checks = head.len().saturating_sub(1);
    program.splice(0..0, head.into_iter().take(checks));
    Ok(program)
}

/// The rules of [`Sockets::StreamOnly`], each one a way to be refused (a call matching any of them is): a family
/// other than IPv4 and IPv6; an IPv4 or IPv6 socket whose type (with or without `SOCK_NONBLOCK` and
/// `SOCK_CLOEXEC`) is not a stream; or whose protocol is neither the default nor TCP.
fn stream_only() -> std::result::Result<Vec<SeccompRule>, seccompiler::BackendError> {
    let arg = |index: u8, op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(index, SeccompCmpArgLen::Dword, op, value)
    };
    let family = |f: libc::c_int| u64::from(f.unsigned_abs());
    let stream = u64::from(libc::SOCK_STREAM.unsigned_abs());
    let flags = [
        0,
        libc::SOCK_NONBLOCK.unsigned_abs(),
        libc::SOCK_CLOEXEC.unsigned_abs(),
        (libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC).unsigned_abs(),
    ];
    let mut rules = vec![SeccompRule::new(vec![
        arg(0, SeccompCmpOp::Ne, family(libc::AF_INET))?,
        arg(0, SeccompCmpOp::Ne, family(libc::AF_INET6))?,
    ])?];
    for inet in [libc::AF_INET, libc::AF_INET6] {
        let mut not_a_stream = vec![arg(0, SeccompCmpOp::Eq, family(inet))?];
        for flag in flags {
            not_a_stream.push(arg(1, SeccompCmpOp::Ne, stream | u64::from(flag))?);
        }
        rules.push(SeccompRule::new(not_a_stream)?);
        rules.push(SeccompRule::new(vec![
            arg(0, SeccompCmpOp::Eq, family(inet))?,
            arg(2, SeccompCmpOp::Ne, 0)?,
            arg(2, SeccompCmpOp::Ne, u64::from(libc::IPPROTO_TCP.unsigned_abs()))?,
        ])?);
    }
    Ok(rules)
}

/// The audit value of this architecture, as seccomp reports it in `seccomp_data.arch`.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

/// The calls that fail with an error of their own rather than `EPERM`, checked at the head of the filter of
/// [`build`]:
/// - `clone3` with `ENOSYS`: its flags lie in memory a filter cannot read, so it could make a user namespace past
///   the `clone` rule of [`build`]; C libraries take `ENOSYS` as "use `clone`", which that rule checks;
/// - `link` and `linkat` with `EXDEV`, as between two file systems: a new name for a file is a name the change
///   watcher of undo may not see. A write through a name raises inotify events for that name only (the file's
///   other names, in the watched directories, hear nothing, and a link count change is reported to a watch on the
///   file itself, never to its directory's), so a run could change a file of the roots through a link it made
///   (in an ignored directory, or removed again before it ends) and no snapshot would record it. `EXDEV` is the
///   answer tools already handle by copying or renaming instead (cargo, rustc, git, pnpm). Symbolic links stay:
///   a write through one raises its events for the name of the file it reaches.
///
/// And `fallocate` in its modes that allocate space (0 and `FALLOC_FL_KEEP_SIZE`) with `EOPNOTSUPP`, as on a file
/// system that cannot: space allocated that way is taken in an instant, faster than the disk bound
/// (crates/os-sandbox/src/disk.rs) can look, and writing it instead takes the time that lets the bound see it.
/// Tools take `EOPNOTSUPP` as "write or truncate instead" (`posix_fallocate` writes the blocks itself). Its other
/// modes (punching holes, zeroing, collapsing ranges) stay.
#[cfg(target_arch = "x86_64")]
const ANSWERED: &[(libc::c_long, libc::c_int)] = &[
    (libc::SYS_clone3, libc::ENOSYS),
    (libc::SYS_link, libc::EXDEV),
    (libc::SYS_linkat, libc::EXDEV),
];

#[cfg(target_arch = "aarch64")]
const ANSWERED: &[(libc::c_long, libc::c_int)] =
    &[(libc::SYS_clone3, libc::ENOSYS), (libc::SYS_linkat, libc::EXDEV)];

/// A filter of its own in which the calls of [`ANSWERED`] fail with their errors. Its last instruction allows
/// everything else; [`build`] puts the checks before it at the head of its own filter (a call of another
/// architecture falls through them, and that filter kills it).
pub(crate) fn answered() -> Result<BpfProgram> {
    let statement = |code: u16, k: u32| sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    };
    let jump_if_equal = |k: u32, jf: u8| sock_filter {
        code: 0x15, // BPF_JMP | BPF_JEQ | BPF_K
        jt: 0,
        jf,
        k,
    };
    let number = |nr: libc::c_long| {
        u32::try_from(nr).map_err(|_| KernelSandboxError::Seccomp(format!("the system call number {nr}")))
    };
    // Past the architecture's check: the load of the number, then a check and an answer per call, then the four
    // instructions of `fallocate`'s.
    let skip = u8::try_from(1 + 2 * ANSWERED.len() + 4)
        .map_err(|_| KernelSandboxError::Seccomp("too many answered calls".to_owned()))?;
    let mut program = vec![
        statement(0x20, 4), // BPF_LD | BPF_W | BPF_ABS: seccomp_data.arch
        jump_if_equal(AUDIT_ARCH, skip),
        statement(0x20, 0), // seccomp_data.nr
    ];
    for &(nr, errno) in ANSWERED {
        let errno = u32::try_from(errno).unwrap_or(1) & 0xffff;
        program.push(jump_if_equal(number(nr)?, 1));
        program.push(statement(0x06, 0x0005_0000 | errno)); // BPF_RET | BPF_K: SECCOMP_RET_ERRNO
    }
    // `fallocate(fd, mode, …)` with `mode` 0 or `FALLOC_FL_KEEP_SIZE` (1): `EOPNOTSUPP`.
    let unsupported = u32::try_from(libc::EOPNOTSUPP).unwrap_or(95) & 0xffff;
    program.push(jump_if_equal(number(libc::SYS_fallocate)?, 3));
    program.push(statement(0x20, 24)); // BPF_LD | BPF_W | BPF_ABS: the low word of seccomp_data.args[1]
    program.push(sock_filter {
        code: 0x25, // BPF_JMP | BPF_JGT | BPF_K
        jt: 1,
        jf: 0,
        k: 1,
    });
    program.push(statement(0x06, 0x0005_0000 | unsupported));
    program.push(statement(0x06, 0x7fff_0000)); // SECCOMP_RET_ALLOW
    Ok(program)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_compiles() {
        for sockets in [Sockets::PrivateLoopback, Sockets::None, Sockets::StreamOnly] {
            for read_only in [true, false] {
                let program = build(sockets, read_only).unwrap();
                assert!(program.len() > 10, "{sockets:?}");
            }
        }
        assert!(answered().unwrap().len() > 3);
    }

    /// The one filter refuses `clone3` with `ENOSYS` (so that a C library falls back to `clone`, whose flags the
    /// filter reads), `linkat` with `EXDEV` (before the path is looked up) and an allocating `fallocate` with
    /// `EOPNOTSUPP` (punching a hole still works), and the rest of it still holds:
    /// sockets and a user namespace are refused with `EPERM`, and what it does not name runs.
    #[test]
    fn clone3_is_refused_with_enosys_and_the_rest_of_the_filter_holds() {
        use std::os::fd::AsRawFd as _;
        let program = build(Sockets::None, false).unwrap();
        let file = tempfile::tempfile().unwrap();
        let fd = file.as_raw_fd();
        #[expect(
            unsafe_code,
            reason = "a fork and raw system calls, to try the filter in a child"
        )]
        // SAFETY: the child makes system calls only (on the program built before the fork) and ends with `_exit`.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            #[expect(unsafe_code, reason = "raw system calls in the child, to try the filter")]
            // SAFETY: system calls with integer arguments and null pointers, then `_exit`.
            unsafe {
                let errno = || *libc::__errno_location();
                let code = if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                    || seccompiler::apply_filter(&program).is_err()
                {
                    10
                } else if libc::syscall(libc::SYS_clone3, std::ptr::null::<u8>(), 0usize) != -1
                    || errno() != libc::ENOSYS
                {
                    11
                } else if libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) != -1 || errno() != libc::EPERM {
                    12
                } else if libc::unshare(libc::CLONE_NEWUSER) != -1 || errno() != libc::EPERM {
                    13
                } else if libc::getppid() <= 0 {
                    14
                } else if libc::linkat(
                    libc::AT_FDCWD,
                    c"/nonexistent/a".as_ptr(),
                    libc::AT_FDCWD,
                    c"/nonexistent/b".as_ptr(),
                    0,
                ) != -1
                    || errno() != libc::EXDEV
                {
                    15
                } else if libc::fallocate(fd, 0, 0, 1 << 20) != -1 || errno() != libc::EOPNOTSUPP {
                    16
                } else if libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, 0, 1 << 20) != -1
                    || errno() != libc::EOPNOTSUPP
                {
                    17
                } else if libc::ftruncate(fd, 1 << 16) != 0
                    || libc::fallocate(
                        fd,
                        libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                        0,
                        4096,
                    ) != 0
                {
                    18
                } else {
                    0
                };
                libc::_exit(code);
            }
        }
        assert!(pid > 0, "fork failed");
        let status = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(pid), None).unwrap();
        assert_eq!(
            status,
            nix::sys::wait::WaitStatus::Exited(nix::unistd::Pid::from_raw(pid), 0),
            "10: no filter, 11: clone3 not ENOSYS, 12: a socket not refused, 13: a user namespace not refused, \
             14: getppid refused, 15: linkat not EXDEV, 16/17: an allocating fallocate not EOPNOTSUPP, 18: punching \
             a hole refused"
        );
    }
}
