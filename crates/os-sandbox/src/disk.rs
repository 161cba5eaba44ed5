//! The disk bound of a sandboxed command: it may not fill a file system it can write. Landlock says where a command
//! may write, `RLIMIT_FSIZE` how large one file may grow; neither bounds how much it writes in all (a loop that
//! writes a gigabyte file after another fills the disk of every process of the machine). A watcher thread looks at
//! the free space and free inodes of each file system the command may write, ten times a second, and ends the
//! command (its whole process group, or its PID namespace) once one of them falls below its reserve. The seccomp
//! filter refuses `fallocate`'s allocating modes (crates/os-sandbox/src/seccomp.rs), so the space can only be
//! taken by writing it, at the speed the watcher keeps up with.
//!
//! The reserve of a file system is the smaller of what the machine keeps for itself (2 % of its size, and at
//! least 1 GiB; 2 % of its inodes, at least 10,000) and half of what was free when the command started: on a disk
//! already nearly full a command may still use half of what is left. `AGENT_GUARD_SANDBOX_DISK_RESERVE` (bytes)
//! sets the space reserve instead, whatever was free.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

/// How often the free space is looked at.
const EVERY: Duration = Duration::from_millis(100);

/// The least space a file system keeps free for the rest of the machine, and its share of the size.
const MIN_RESERVE: u64 = 1 << 30;
const RESERVE_PERCENT: u64 = 2;
/// The least number of inodes a file system keeps free.
const MIN_INODES: u64 = 10_000;

/// The variable that sets the space reserve in bytes.
pub(crate) const RESERVE_VARIABLE: &str = "AGENT_GUARD_SANDBOX_DISK_RESERVE";

/// A file system the command may write, with the free space and inodes below which it is ended.
#[derive(Debug, Clone)]
struct Watched {
    /// A place of it the command may write (the first one found of that file system).
    place: PathBuf,
    /// The file system's identity (`f_fsid`), so that each is looked at once.
    id: u64,
    bytes: u64,
    inodes: u64,
}

/// Why the command was ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Filled {
    pub(crate) place: PathBuf,
    /// Its free space fell below this many bytes, or (`inodes`) its free inodes below this many.
    pub(crate) reserve: u64,
    pub(crate) inodes: bool,
}

impl std::fmt::Display for Filled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.inodes {
            format!("{} free inodes", self.reserve)
        } else {
            format!("{} MiB of free space", self.reserve >> 20)
        };
        write!(
            f,
            "agent-guard: the command was ended: the file system of `{}` fell below {what} (the sandbox's disk \
             bound: a command may not fill a disk)",
            self.place.display()
        )
    }
}

/// The file systems a command may write, with their reserves, measured as it starts: the watcher's thread starts
/// from it ([`Watching::start`]) as late as its first look is due.
pub(crate) struct Watching {
    watched: Vec<Watched>,
}

impl Watching {
    /// The file systems of `places` (the places the command may write) and their reserves, from what is free
    /// now; `None` when no file system can be looked at.
    pub(crate) fn new(places: &[PathBuf]) -> Option<Self> {
        let set = std::env::var(RESERVE_VARIABLE)
            .ok()
            .and_then(|v| v.trim().parse().ok());
        let watched = watched(places, set);
        (!watched.is_empty()).then_some(Self { watched })
    }

    /// Starts the thread that watches, for the command that is the process group `command` holds once it is not
    /// 0 (it is killed as [`crate::supervise`] kills it on a signal). Its first look comes after [`EVERY`], or at
    /// once when `look_now` (a thread started when that first look is due). `None` when the thread cannot
    /// start.
    pub(crate) fn start(self, command: &'static AtomicI32, look_now: bool) -> Option<DiskWatch> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let watched = self.watched;
        let thread = std::thread::Builder::new()
            .name("disk bound".to_owned())
            .stack_size(64 << 10)
            .spawn(move || watch(&watched, &stopped, command, look_now))
            .ok()?;
        Some(DiskWatch { stop, thread })
    }
}

/// How long after the command's start the first look at the free space is due: a command that ends before it
/// starts no thread.
pub(crate) const FIRST_LOOK: Duration = EVERY;

/// The watcher of a running command.
pub(crate) struct DiskWatch {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Option<Filled>>,
}

impl DiskWatch {
    /// Stops watching (the command has ended): why it was ended, if it was.
    pub(crate) fn stop(self) -> Option<Filled> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.thread().unpark();
        self.thread.join().ok().flatten()
    }
}

/// The file systems of `places`, each once, with their reserves (`set`: the space reserve given in bytes).
fn watched(places: &[PathBuf], set: Option<u64>) -> Vec<Watched> {
    let mut watched: Vec<Watched> = Vec::new();
    for place in places {
        // A device written (`/dev/null`, the terminal) takes no space of its file system.
        if std::fs::metadata(place).is_ok_and(|meta| {
            use std::os::unix::fs::FileTypeExt;
            meta.file_type().is_char_device() || meta.file_type().is_block_device()
        }) {
            continue;
        }
        let Ok(stat) = nix::sys::statvfs::statvfs(place.as_path()) else {
            continue;
        };
        let id = stat.filesystem_id();
        if watched.iter().any(|w| w.id == id) {
            continue;
        }
        let unit = stat.fragment_size();
        let (size, free) = (stat.blocks() * unit, stat.blocks_available() * unit);
        let bytes = set.unwrap_or_else(|| (size * RESERVE_PERCENT / 100).max(MIN_RESERVE).min(free / 2));
        // A file system without a fixed number of inodes (btrfs, some network ones) says it has none.
        let inodes = match stat.files() {
            0 => 0,
            files => (files * RESERVE_PERCENT / 100)
                .max(MIN_INODES)
                .min(stat.files_available() / 2),
        };
        watched.push(Watched {
            place: place.clone(),
            id,
            bytes,
            inodes,
        });
    }
    watched
}

/// Looks at each file system every [`EVERY`] until told to stop; ends the command when one falls below its
/// reserve.
fn watch(watched: &[Watched], stop: &AtomicBool, command: &AtomicI32, look_now: bool) -> Option<Filled> {
    let mut wait = !look_now;
    while !stop.load(Ordering::SeqCst) {
        if wait {
            std::thread::park_timeout(EVERY);
        }
        wait = true;
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let Some(filled) = watched.iter().find_map(below_reserve) else {
            continue;
        };
        let group = command.load(Ordering::SeqCst);
        if group > 0 {
            let _killed = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(group),
                nix::sys::signal::Signal::SIGKILL,
            )
            .or_else(|_| {
                nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(group),
                    nix::sys::signal::Signal::SIGKILL,
                )
            });
            return Some(filled);
        }
    }
    None
}

/// Why `watched` is below its reserve now, if it is.
fn below_reserve(watched: &Watched) -> Option<Filled> {
    let stat = nix::sys::statvfs::statvfs(watched.place.as_path()).ok()?;
    let free = stat.blocks_available() * stat.fragment_size();
    if free < watched.bytes {
        return Some(Filled {
            place: watched.place.clone(),
            reserve: watched.bytes,
            inodes: false,
        });
    }
    (watched.inodes > 0 && stat.files_available() < watched.inodes).then(|| Filled {
        place: watched.place.clone(),
        reserve: watched.inodes,
        inodes: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_file_system_is_watched_once_with_a_reserve_below_what_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let places = [
            dir.path().to_path_buf(),
            dir.path().join("."),
            dir.path().to_path_buf(),
        ];
        let found = watched(&places, None);
        assert_eq!(found.len(), 1);
        let stat = nix::sys::statvfs::statvfs(dir.path()).unwrap();
        let free = stat.blocks_available() * stat.fragment_size();
        assert!(found[0].bytes <= free / 2 + 1);
        assert!(below_reserve(&found[0]).is_none());
        // A reserve above what is free is passed at once.
        let set = watched(&places, Some(u64::MAX));
        assert_eq!(below_reserve(&set[0]).map(|f| f.inodes), Some(false));
        // Writing a device takes no space: its file system is not watched, whatever the reserve.
        let devices = [PathBuf::from("/dev/null"), dir.path().to_path_buf()];
        let found = watched(&devices, Some(u64::MAX));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].place, dir.path());
    }
}
