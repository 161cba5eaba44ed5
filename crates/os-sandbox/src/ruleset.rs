//! The Landlock ruleset of a plan: its grants as rules, the network and the scopes it handles.

use std::os::fd::OwnedFd;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, NetPort, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope,
};

use crate::error::{KernelSandboxError, Result};
use crate::plan::{Grant, Rights};
use crate::probe::{ABI_NETWORK, ABI_SCOPES, KernelSupport};

/// The newest ABI whose rights this crate knows; newer kernels keep handling these.
const KNOWN_ABI: ABI = ABI::V7;

/// The Landlock rights of `rights`.
pub(crate) fn access(rights: Rights) -> BitFlags<AccessFs> {
    let mut access = BitFlags::EMPTY;
    if rights.contains(Rights::READ) {
        access |= AccessFs::ReadFile;
    }
    if rights.contains(Rights::LIST) {
        access |= AccessFs::ReadDir;
    }
    if rights.contains(Rights::EXECUTE) {
        access |= AccessFs::Execute;
    }
    if rights.contains(Rights::WRITE) {
        // What changes the file system in place.
        access |= AccessFs::WriteFile
            | AccessFs::RemoveFile
            | AccessFs::MakeDir
            | AccessFs::MakeReg
            | AccessFs::MakeSock
            | AccessFs::MakeFifo
            | AccessFs::Truncate;
    }
    if rights.contains(Rights::WRITE) && !rights.contains(Rights::IN_PLACE) {
        // And what changes where a path leads: symbolic links made or moved (`MakeSym` covers a rename or a link
        // of one into the directory), anything moved to another directory, a directory renamed or removed.
        // Never the making of device nodes.
        access |= AccessFs::RemoveDir | AccessFs::MakeSym | AccessFs::Refer;
    }
    if rights.contains(Rights::DEVICE) {
        access |= AccessFs::IoctlDev;
    }
    access
}

/// What the rights of a grant become on a file (Landlock refuses directory rights on a file).
fn for_file(access: BitFlags<AccessFs>) -> BitFlags<AccessFs> {
    access & AccessFs::from_file(KNOWN_ABI)
}

/// What the command may do with TCP, as far as Landlock sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tcp {
    /// Anything (its network namespace bounds where it leads).
    Unrestricted,
    /// Neither bind nor connect.
    Refused,
    /// Connect to this port only (the proxy's, without namespaces), bind nothing.
    ConnectOnly(u16),
}

/// Builds the ruleset: every file-system right handled (so that whatever is not granted is refused), TCP
/// handled as `tcp` says, abstract Unix sockets and signals scoped where the kernel can. A grant whose
/// path has gone since the plan was made is skipped.
pub(crate) fn build(grants: &[Grant], tcp: Tcp, support: &KernelSupport) -> Result<OwnedFd> {
    let error = |e: landlock::RulesetError| KernelSandboxError::Landlock(e.to_string());
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(KNOWN_ABI))
        .map_err(error)?;
    if tcp != Tcp::Unrestricted && support.landlock_abi >= ABI_NETWORK {
        ruleset = ruleset
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(error)?;
    }
    if support.landlock_abi >= ABI_SCOPES {
        ruleset = ruleset
            .scope(Scope::AbstractUnixSocket | Scope::Signal)
            .map_err(error)?;
    }
    let mut created = ruleset.create().map_err(error)?;
    if let Tcp::ConnectOnly(port) = tcp
        && support.landlock_abi >= ABI_NETWORK
    {
        created = created
            .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
            .map_err(error)?;
    }
    for grant in grants {
        let wanted = access(grant.rights);
        let Ok(fd) = PathFd::new(&grant.path) else {
            continue;
        };
        let is_dir = std::fs::metadata(&grant.path).is_ok_and(|m| m.is_dir());
        let allowed = if is_dir { wanted } else { for_file(wanted) };
        if allowed.is_empty() {
            continue;
        }
        created = created
            .add_rule(PathBeneath::new(fd, allowed))
            .map_err(|e| KernelSandboxError::Landlock(format!("`{}`: {e}", grant.path.display())))?;
    }
    Option::<OwnedFd>::from(created)
        .ok_or_else(|| KernelSandboxError::Unsupported("the kernel has no Landlock".to_owned()))
}

/// The rights bits of a read-only grant of `/proc`, for the rule the command's PID-namespace init adds once it
/// has mounted its own `/proc`.
pub(crate) fn proc_access_bits() -> u64 {
    (AccessFs::ReadFile | AccessFs::ReadDir).bits()
}
