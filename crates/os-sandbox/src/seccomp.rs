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

/// Compiles the filter: refused calls fail with `EPERM`, everything else runs. A command that may not write
/// (`read_only`) is refused the calls that change metadata too.
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

/// A second filter: `clone3` fails with `ENOSYS`. Its flags lie in memory a filter cannot read, so it could make
/// a user namespace past the `clone` rule; C libraries take `ENOSYS` as "use `clone`", which the first filter
/// checks.
pub(crate) fn no_clone3() -> Result<BpfProgram> {
    let error = |e: seccompiler::BackendError| KernelSandboxError::Seccomp(e.to_string());
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| {
        KernelSandboxError::Seccomp(format!("architecture `{}`: {e}", std::env::consts::ARCH))
    })?;
    let rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::from([(libc::SYS_clone3, Vec::new())]);
    let enosys = u32::try_from(libc::ENOSYS).unwrap_or(38);
    let filter =
        SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(enosys), arch).map_err(error)?;
    filter.try_into().map_err(error)
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
        assert!(no_clone3().unwrap().len() > 3);
    }
}
