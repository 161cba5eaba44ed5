//! The scratch directory of a sandboxed run (`agent-guard-sandbox-<pid>-<random>`, in `/dev/shm` or the
//! temporary directory), its removal, and the record a `workspace-write` run leaves in it of when it started and
//! where it may write, which [`sandboxed_run_may_have_made`] reads.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::error::{KernelSandboxError, Result};
use crate::plan::{Grant, Rights};

pub(crate) fn make_removable(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)?.filter_map(std::result::Result::ok) {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            let _fixed = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700));
            let _inner = make_removable(&path);
        }
    }
    Ok(())
}

/// A new scratch directory, `agent-guard-sandbox-<pid>-<random>`. With namespaces it holds only the stand-ins of
/// the masks and the mount point of the private tmpfs: it goes in `/dev/shm`, a tmpfs, where making and removing it
/// costs no disk inode and waits for no journal (on a busy disk, milliseconds per command); the command never sees
/// it (every mount is read-only inside and Landlock grants nothing there). Without namespaces its `tmp` is the
/// command's temporary directory, written like any other, and it goes in the system's temporary directory.
pub(crate) fn scratch_dir(namespaces: bool) -> Result<tempfile::TempDir> {
    let mut builder = tempfile::Builder::new();
    let prefix = format!("agent-guard-sandbox-{}-", std::process::id());
    // This user's alone whatever the umask: it holds the socket to a background run's servers.
    builder
        .prefix(&prefix)
        .permissions(std::fs::Permissions::from_mode(0o700));
    let shm = Path::new("/dev/shm");
    let in_memory = namespaces
        && nix::sys::statfs::statfs(shm)
            .is_ok_and(|fs| fs.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC)
        && nix::unistd::access(shm, nix::unistd::AccessFlags::W_OK).is_ok();
    if in_memory {
        remove_stale_scratch(shm);
        if let Ok(dir) = builder.tempdir_in(shm) {
            return Ok(dir);
        }
    }
    builder.tempdir().map_err(KernelSandboxError::Scratch)
}

/// Removes the scratch directories in `base` of this user's `agent-guard sandbox` processes that are gone (killed by
/// `SIGKILL`, which leaves no time to clean up).
fn remove_stale_scratch(base: &Path) {
    for (dir, owner) in scratch_dirs(base) {
        let gone =
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(owner), None) == Err(nix::errno::Errno::ESRCH);
        if gone {
            let _opened = make_removable(&dir);
            let _removed = std::fs::remove_dir_all(&dir);
        }
    }
}

/// The scratch directories in `base` of this user's sandboxed runs, with the process of each: only a directory of
/// this user (never a link, nor another user's entry of a shared directory).
fn scratch_dirs(base: &Path) -> Vec<(PathBuf, i32)> {
    let Ok(entries) = std::fs::read_dir(base) else {
        return Vec::new();
    };
    entries
        .filter_map(std::result::Result::ok)
        .filter_map(|entry| {
            let owner = entry
                .file_name()
                .to_str()
                .and_then(|n| n.strip_prefix("agent-guard-sandbox-"))
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<i32>().ok())?;
            let ours = std::fs::symlink_metadata(entry.path()).is_ok_and(|meta| {
                use std::os::unix::fs::MetadataExt;
                meta.is_dir() && meta.uid() == nix::unistd::geteuid().as_raw()
            });
            ours.then(|| (entry.path(), owner))
        })
        .collect()
}

/// The record in a `workspace-write` run's scratch directory of when it started and where it may write.
pub(crate) const RUN_RECORD: &str = "run";

/// A run's record: its start (seconds and nanoseconds since the epoch, by the clock that stamps files), the paths
/// of its grants that write and the `layers` its writes land in (a package cache's upper layer), each ended by a
/// NUL, an empty field, and the paths of those beneath which it may also change where a path leads (make or move a
/// symbolic link, move or remove a directory: not [`Rights::IN_PLACE`]; every layer), each ended by a NUL.
pub(crate) fn run_record(started: std::time::SystemTime, grants: &[Grant], layers: &[&Path]) -> Vec<u8> {
    let since = started.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let mut record = format!("{}.{:09}\0", since.as_secs(), since.subsec_nanos()).into_bytes();
    let writes = grants.iter().filter(|g| g.rights.contains(Rights::WRITE));
    let redirects = writes.clone().filter(|g| !g.rights.contains(Rights::IN_PLACE));
    let fields = writes
        .map(|g| g.path.as_path())
        .chain(layers.iter().copied())
        .chain([Path::new("")])
        .chain(redirects.map(|g| g.path.as_path()).chain(layers.iter().copied()));
    for path in fields {
        record.extend_from_slice(path.as_os_str().as_encoded_bytes());
        record.push(0);
    }
    record
}

/// What a run's record says ([`run_record`]), read back from its scratch directory.
struct RunRecord {
    /// The run's process.
    owner: i32,
    /// Its scratch directory (empty for a record read from bytes alone).
    dir: PathBuf,
    /// When it started; `None` for a record whose start cannot be read.
    started: Option<std::time::SystemTime>,
    /// Where it writes.
    writes: Vec<PathBuf>,
    /// Where it may also change where a path leads.
    redirects: Vec<PathBuf>,
}

impl RunRecord {
    /// The record `bytes` of the run of process `owner`.
    fn read(owner: i32, bytes: &[u8]) -> Self {
        let mut fields = bytes.split(|b| *b == 0);
        let started = fields
            .next()
            .and_then(|start| std::str::from_utf8(start).ok())
            .and_then(|start| start.split_once('.'))
            .and_then(|(secs, nanos)| Some((secs.parse::<u64>().ok()?, nanos.parse::<u32>().ok()?)))
            .map(|(secs, nanos)| std::time::UNIX_EPOCH + std::time::Duration::new(secs, nanos));
        let path = |field: &[u8]| PathBuf::from(std::ffi::OsStr::from_bytes(field));
        let writes = fields
            .by_ref()
            .take_while(|field| !field.is_empty())
            .map(path)
            .collect();
        let redirects = fields.filter(|field| !field.is_empty()).map(path).collect();
        Self {
            owner,
            dir: PathBuf::new(),
            started,
            writes,
            redirects,
        }
    }
}

/// The records of this user's `workspace-write` sandboxed runs not cleaned up yet (running, or killed without time
/// to clean up and not yet cleared by a later run), found by the scratch directories `agent-guard sandbox` and the
/// runtime make before a command starts (in `/dev/shm` or the temporary directory), where the command cannot
/// write.
fn run_records() -> Vec<RunRecord> {
    let bases = [PathBuf::from("/dev/shm"), std::env::temp_dir()];
    bases
        .iter()
        .flat_map(|base| scratch_dirs(base))
        .filter_map(|(dir, owner)| {
            let record = RunRecord::read(owner, &std::fs::read(dir.join(RUN_RECORD)).ok()?);
            Some(RunRecord { dir, ..record })
        })
        .collect()
}

/// Whether the process of `record` is still running.
fn running(record: &RunRecord) -> bool {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(record.owner), None) != Err(nix::errno::Errno::ESRCH)
}

/// A port that a `workspace-write` sandboxed run of this user, running now in the background, listens on inside
/// its own network namespace, and the way in: the socket in its scratch directory through which its supervisor
/// hands out connections to it (proxy/publish.rs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxedService {
    /// The run's process (its `agent-guard sandbox`, or the runtime).
    pub owner: u32,
    port: u16,
    socket: PathBuf,
}

/// The run of this user, running now in the background, whose network namespace listens on `port` and which
/// writes a place that holds or lies in one of `roots` (a run of the same project), if any: a server the agent
/// started there, contained by that run's sandbox.
pub fn sandboxed_service(port: u16, roots: &[PathBuf]) -> Option<SandboxedService> {
    run_records()
        .into_iter()
        .filter(|record| {
            record.writes.iter().any(|place| {
                roots
                    .iter()
                    .any(|root| place.starts_with(root) || root.starts_with(place))
            })
        })
        .filter(running)
        .find_map(|record| {
            let listing = std::fs::read_to_string(record.dir.join(crate::proxy::LISTENING)).ok()?;
            let published = listing.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next()?.parse() == Ok(port)).then(|| words.next() == Some("published"))
            })?;
            Some((record, published))
        })
        // A port this machine listens on itself (a service of the user's, on any address) but for the run's own
        // publication is the user's: a call to it reaches the user's service, or asks, never the run's server.
        .filter(|(_, published)| *published || !crate::proxy::host_listens(port))
        .and_then(|(record, _)| {
            Some(SandboxedService {
                owner: u32::try_from(record.owner).ok()?,
                port,
                socket: record.dir.join(crate::proxy::SERVICES),
            })
        })
}

impl SandboxedService {
    /// A connection to the service, handed out by its run's supervisor; `None` when nothing listens there any
    /// more.
    pub(crate) fn connect(&self) -> Option<std::net::TcpStream> {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        let mut supervisor = std::os::unix::net::UnixStream::connect(&self.socket).ok()?;
        supervisor
            .set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .ok()?;
        supervisor.write_all(&self.port.to_be_bytes()).ok()?;
        crate::proxy::receive_descriptor(supervisor.as_raw_fd())
            .flatten()
            .map(std::net::TcpStream::from)
    }
}

/// Each place beneath which a `workspace-write` sandboxed run of this user, running now, may change where a path
/// leads (make or move a symbolic link, move or remove a directory), with the run's process: a coding agent's file
/// tool acts on its path after the decision checked it, and such a run could lead the path elsewhere in between
/// (out of the project, onto a protected file). A run in the background writes its roots in place
/// ([`Rights::IN_PLACE`]), so its places are the build outputs of its roots and the layers of the package caches
/// it writes.
pub fn running_redirects() -> Vec<(u32, PathBuf)> {
    run_records()
        .into_iter()
        .filter(running)
        .filter_map(|record| Some((u32::try_from(record.owner).ok()?, record.redirects)))
        .flat_map(|(owner, places)| places.into_iter().map(move |place| (owner, place)))
        .collect()
}

/// The process of a `workspace-write` sandboxed run of this user that may have made `path` or given it its name:
/// a run not cleaned up yet (running, or killed without time to clean up and not yet cleared by a later run; found
/// by the scratch directories, where the command cannot write) whose grants write where `path` lies, and which started at or before
/// `path` was born or last changed status (a rename or a new link changes it, and no program sets it back). A
/// protected path such a run creates (a new `.claude/`, `.git/`) exists until the run ends, when it is removed: a
/// reader that must not take a file a sandboxed command may have made for one the user made (a project's local
/// settings file) asks this first.
pub fn sandboxed_run_may_have_made(path: &Path) -> Option<u32> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    run_records()
        .into_iter()
        .find(|record| {
            // A record whose start cannot be read could be any run's.
            record.writes.iter().any(|place| path.starts_with(place))
                && record
                    .started
                    .is_none_or(|since| crate::scan::named_since(&meta, since))
        })
        .and_then(|record| u32::try_from(record.owner).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_its_start_its_writes_and_where_it_may_redirect() {
        let grant = |path: &str, rights: Rights| Grant {
            path: PathBuf::from(path),
            rights,
        };
        let write = Rights::READ_EXECUTE.with(Rights::WRITE);
        let grants = [
            grant("/usr", Rights::READ_EXECUTE),
            grant("/p", write.with(Rights::IN_PLACE)),
            grant("/p/node_modules", write),
        ];
        let started = std::time::UNIX_EPOCH + std::time::Duration::new(1_700_000_000, 5);
        let bytes = run_record(started, &grants, &[Path::new("/p/.agent-guard/caches/x/upper")]);
        let record = RunRecord::read(7, &bytes);
        assert_eq!(record.started, Some(started));
        assert_eq!(
            record.writes,
            ["/p", "/p/node_modules", "/p/.agent-guard/caches/x/upper"].map(PathBuf::from)
        );
        assert_eq!(
            record.redirects,
            ["/p/node_modules", "/p/.agent-guard/caches/x/upper"].map(PathBuf::from)
        );
        // A record of a build before the redirects were written: every path writes, none redirects.
        let old = RunRecord::read(7, b"1700000000.000000005\0/p\0");
        assert_eq!((old.writes, old.redirects.len()), (vec![PathBuf::from("/p")], 0));
    }
}
