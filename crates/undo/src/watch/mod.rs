//! A change watcher per root, like git's fsmonitor daemon: a process of its own that outlives the one that
//! started it, watches (inotify) every directory a snapshot's walk descends into, and tells a snapshot which
//! paths changed since the last one, so that a snapshot with nothing changed asks no file at all.
//!
//! A snapshot asks over a Unix socket in the store's directory (mode 0600, the peer's uid checked on both
//! sides) for the paths changed since its token: the watcher's instance and the sequence number of its last
//! answer. The watcher first writes a cookie file into the store directory, which it watches too, and waits
//! for the cookie's own event: the events of every write done before the question come before it in the one
//! queue of the watcher, so none is still on its way. An answer clears nothing (a token is the client's own), so
//! no client, a sandboxed command among them, can make it leave out a change another one relies on; and the
//! store directory is a protected path, which a sandboxed command can neither write nor read.
//!
//! Whenever something is in doubt the snapshot walks the whole root as without a watcher: no watcher yet (one is
//! started for the next snapshot), one of another instance than the token's, a queue overflow or a watch limit
//! reached (the watcher stops), a `.gitignore` changed (the watcher stops: what it watches depends on the rules),
//! agent-guard's own rules, `.git/info/exclude` or a `.gitignore` above the root changed, no answer in time.

#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

// inotify and the peer credentials of a Unix socket are Linux's: elsewhere no watcher starts and every snapshot
// walks (the watcher's own constants are then unused).
#[cfg(target_os = "linux")]
mod daemon;
pub(crate) mod incremental;

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::walk::Rules;

/// The socket of a store's watcher, in the store's directory.
const SOCKET: &str = "watch.sock";
/// The lock a running watcher holds, so that a store has one.
const LOCK: &str = "watch.lock";
/// Why the last watcher stopped, when it stopped because its answers could not be trusted (or could not start):
/// no watcher is started again for [`OFF_FOR`] after it was written.
const OFF: &str = "watch-off";
/// Why the last watcher stopped when events were lost or the rules changed (for whoever looks; nothing reads it).
const STOPPED: &str = "watch-stopped";
/// What the last snapshot that used a watcher's answer knew: its token and the ignore rules it followed.
const STATE: &str = "watch-state.json";
/// The names of the cookie files a watcher writes into the store directory.
const COOKIE_PREFIX: &str = "watch-cookie-";
/// How long a watcher nobody asks lives.
const IDLE: Duration = Duration::from_secs(600);
/// How long a question may take (the cookie's round trip included) before the snapshot walks instead.
const REPLY_WITHIN: Duration = Duration::from_secs(2);
/// How long after a watcher stopped as unreliable no new one is started.
const OFF_FOR: Duration = Duration::from_secs(600);
/// After this many snapshots served by the watcher, one walks the whole root all the same: a bound on how long a
/// change no event reports (a write through a shared memory mapping) can stay out of the snapshots.
pub(crate) const WALK_EVERY: u64 = 100;
/// The argument that makes a program that called [`watcher_main`] the watcher.
const ARG: &str = "__agent-guard-undo-watch";

/// Whether this program's `main` called [`watcher_main`], and so can be started as a watcher.
static CAN_WATCH: AtomicBool = AtomicBool::new(false);

/// The program started as a watcher: this one, found when the first watcher starts (finding it reads
/// `/proc/self/exe`, which a process that never starts one need not pay for).
static PROGRAM: OnceLock<Option<PathBuf>> = OnceLock::new();

/// To be called first in `main` by a program that records runs: when the process was started as a store's
/// change watcher, runs it and returns the exit code to end with; otherwise returns `None` and lets the
/// recordings of this process start watchers as this same program. Without the call, snapshots walk the root.
pub fn watcher_main() -> Option<i32> {
    let mut args = std::env::args_os().skip(1);
    if args.next().is_some_and(|arg| arg == ARG) {
        let rest: Vec<PathBuf> = args.map(PathBuf::from).collect();
        #[cfg(target_os = "linux")]
        let code = match rest.as_slice() {
            [store, work_tree, root] => daemon::serve(store, work_tree, root),
            _ => 2,
        };
        #[cfg(not(target_os = "linux"))]
        let code = {
            drop(rest);
            2
        };
        return Some(code);
    }
    CAN_WATCH.store(true, Ordering::Relaxed);
    None
}

/// A watcher's answer.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Answer {
    /// Which watcher answered: a token of another one says nothing.
    pub(crate) instance: String,
    /// The sequence number of the last event taken: the client's next token.
    pub(crate) seq: u64,
    /// [`Rules::fingerprint_of`] the rules the watcher follows, as it started.
    pub(crate) fingerprint: u64,
    /// Whether `paths` are every path changed since the token (not when the token is another watcher's or older
    /// than what the watcher kept).
    pub(crate) complete: bool,
    /// The paths changed since the token, relative to the work tree.
    pub(crate) paths: Vec<Vec<u8>>,
    /// How many questions this watcher has answered, this one included. A snapshot counts the answers since the
    /// last walk by it ([`State::walked_at`]), so that the count needs no write of the state when nothing changed;
    /// another client's questions only make the next walk come sooner.
    pub(crate) served: u64,
}

/// What a snapshot kept of the watcher: the token of the answer it used and the rules its tree followed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct State {
    pub(crate) instance: String,
    pub(crate) seq: u64,
    pub(crate) rules: Rules,
    /// Whether the snapshot that kept it walked the whole root (rather than taking the watcher's answer).
    #[serde(default)]
    pub(crate) walked: bool,
    /// The files with more than one link when it was kept: a write through another name (perhaps outside the
    /// watched directories) makes no event for theirs, so every snapshot looks at them as if changed.
    #[serde(default)]
    pub(crate) linked: std::collections::BTreeSet<PathBuf>,
    /// The watcher's [`Answer::served`] when the last walk was taken: after [`WALK_EVERY`] answers more, one walks
    /// again. A state kept without it (0) makes the next snapshot walk sooner, never later.
    #[serde(default)]
    pub(crate) walked_at: u64,
}

impl State {
    /// How many snapshots took the watcher's `answer` since the last walk, before this one.
    pub(crate) fn answered(&self, answer: &Answer) -> u64 {
        answer.served.saturating_sub(self.walked_at).saturating_sub(1)
    }

    /// The state kept in the store `dir`.
    pub(crate) fn load(dir: &Path) -> Option<Self> {
        let bytes = std::fs::read(dir.join(STATE)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Keeps the state in the store `dir` (replaced whole).
    pub(crate) fn save(&self, dir: &Path) {
        let Ok(text) = serde_json::to_vec(self) else {
            Self::forget(dir);
            return;
        };
        let partial = dir.join(format!("{STATE}.tmp"));
        if std::fs::write(&partial, text)
            .and_then(|()| std::fs::rename(&partial, dir.join(STATE)))
            .is_err()
        {
            Self::forget(dir);
        }
    }

    /// Drops the kept state: the next snapshot walks.
    pub(crate) fn forget(dir: &Path) {
        let _removed = std::fs::remove_file(dir.join(STATE));
    }
}

/// Whether the peer of `stream` runs as this process's user.
#[cfg(target_os = "linux")]
fn same_user(stream: &UnixStream) -> bool {
    nix::sys::socket::getsockopt(stream, nix::sys::socket::sockopt::PeerCredentials)
        .is_ok_and(|peer| peer.uid() == nix::unistd::getuid().as_raw())
}

/// Without peer credentials, no peer is trusted.
#[cfg(not(target_os = "linux"))]
fn same_user(_stream: &UnixStream) -> bool {
    false
}

/// A question sent to a store's watcher, whose answer is still to be read: the watcher takes the events up to
/// its cookie meanwhile, while the client does other work.
#[derive(Debug)]
pub(crate) struct Asked {
    stream: UnixStream,
}

/// Asks the watcher of the store `dir` for the paths changed since `since`: sends the question, whose answer
/// [`Asked::receive`] reads; `None` when no watcher of this user listens, or it did not take the question. A
/// watcher that took the question and gave no answer this program reads (too slow, or of another version) is told
/// to quit, so that the next snapshot starts one that does.
pub(crate) fn send(dir: &Path, since: Option<&State>) -> Option<Asked> {
    let stream = UnixStream::connect(dir.join(SOCKET)).ok()?;
    if !same_user(&stream) {
        return None;
    }
    if question(&stream, since).is_none() {
        quit(dir);
        return None;
    }
    Some(Asked { stream })
}

impl Asked {
    /// The answer to the question, read to its end; `None` (and the watcher of the store `dir` told to quit)
    /// when none this program reads comes in time.
    pub(crate) fn receive(self, dir: &Path) -> Option<Answer> {
        let answer = answer(&self.stream);
        if answer.is_none() {
            quit(dir);
        }
        answer
    }
}

/// Writes the question of [`send`] on a connected `stream`.
fn question(mut stream: &UnixStream, since: Option<&State>) -> Option<()> {
    use std::io::Write as _;
    stream
        .set_read_timeout(Some(REPLY_WITHIN + Duration::from_millis(500)))
        .ok()?;
    stream.set_write_timeout(Some(REPLY_WITHIN)).ok()?;
    let question = match since {
        Some(state) => format!("since {} {}\n", state.instance, state.seq),
        None => "since - 0\n".to_owned(),
    };
    stream.write_all(question.as_bytes()).ok()
}

/// Reads the answer to the question on `stream`.
fn answer(stream: &UnixStream) -> Option<Answer> {
    use std::io::{BufRead as _, Read as _};
    let mut line = Vec::new();
    std::io::BufReader::new(stream.take(1 << 30))
        .read_until(b'\n', &mut line)
        .ok()?;
    serde_json::from_slice(&line).ok()
}

/// Asks the watcher of the store `dir` to stop (its rules are no longer the disk's).
pub(crate) fn quit(dir: &Path) {
    use std::io::Write as _;
    if let Ok(mut stream) = UnixStream::connect(dir.join(SOCKET)) {
        let _sent = stream.write_all(b"quit\n");
    }
}

/// Starts a watcher of `root` (below `work_tree`) for the store `dir`, in the background, unless this program
/// cannot be one or the last one stopped as unreliable a short while ago.
pub(crate) fn start(dir: &Path, work_tree: &Path, root: &Path) {
    if !cfg!(target_os = "linux") || !CAN_WATCH.load(Ordering::Relaxed) {
        return;
    }
    let Some(program) = PROGRAM.get_or_init(|| std::env::current_exe().ok()) else {
        return;
    };
    if std::fs::metadata(dir.join(OFF))
        .and_then(|meta| meta.modified())
        .is_ok_and(|when| when.elapsed().is_ok_and(|age| age < OFF_FOR))
    {
        return;
    }
    let mut command = std::process::Command::new(program);
    command
        .arg(ARG)
        .arg(dir)
        .arg(work_tree)
        .arg(root)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    if let Ok(mut child) = command.spawn() {
        // Reaped by a thread, so that a long-lived process leaves no zombie; a short-lived one leaves it to init.
        std::thread::spawn(move || child.wait());
    }
}
