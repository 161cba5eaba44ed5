//! The change watcher itself: one process per root, started by a snapshot, that watches every directory a
//! snapshot's walk descends into and answers which paths changed since a client's token.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};
use std::os::fd::AsFd as _;

use super::{Answer, COOKIE_PREFIX, IDLE, LOCK, OFF, REPLY_WITHIN, SOCKET, STOPPED};

/// The kept empty file each cookie is a link to (its name is no cookie's).
const COOKIE_SOURCE: &str = "watch-cookie.source";
use crate::walk::{Checker, Rules};

/// The most changed paths kept: past it, the set is dropped and every client's older token asks for a full
/// walk.
const MAX_DIRTY: usize = 200_000;

/// What the watcher watches a directory for: any change of an entry's content, mode, name or existence.
fn dir_flags() -> AddWatchFlags {
    AddWatchFlags::IN_MODIFY
        | AddWatchFlags::IN_ATTRIB
        | AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_MOVED_FROM
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
        | AddWatchFlags::IN_CLOSE_WRITE
        | AddWatchFlags::IN_DONT_FOLLOW
        | AddWatchFlags::IN_ONLYDIR
}

/// Why the watcher stops: its answers could no longer be trusted, or nobody asked for a while.
#[derive(Debug)]
enum Stop {
    /// Idle, asked to quit, or replaced.
    Done,
    /// Events were lost or rules changed: the next snapshot walks and starts a new watcher.
    Unreliable(String),
    /// inotify cannot do it here (not available, the watch limit reached): no watcher is started again for a
    /// while, and the store directory's `watch-off` says why.
    Unavailable(String),
}

/// One running watcher.
struct Watcher {
    inotify: Inotify,
    store: PathBuf,
    store_wd: WatchDescriptor,
    work_tree: PathBuf,
    prefix: PathBuf,
    checker: Checker,
    dirs: HashMap<WatchDescriptor, PathBuf>,
    dirty: HashMap<PathBuf, u64>,
    seq: u64,
    floor: u64,
    instance: String,
    fingerprint: u64,
    cookies: std::collections::HashSet<std::ffi::OsString>,
    cookie_count: u64,
    /// How many questions were answered ([`super::Answer::served`]).
    served: u64,
}

/// Runs the watcher of `root` (below `work_tree`) for the store in `store`; returns the process's exit code.
pub(crate) fn serve(store: &Path, work_tree: &Path, root: &Path) -> i32 {
    close_inherited();
    // Not dumpable: another process of the same user (a sandboxed command among them) can neither trace it nor
    // write its memory through `/proc`, and so cannot make it lie.
    let _hidden = nix::sys::prctl::set_dumpable(false);
    // A session of its own: the terminal and the process group of the hook that started it do not reach it.
    let _session = nix::unistd::setsid();
    let _moved = std::env::set_current_dir("/");
    let Ok(lock_file) = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(store.join(LOCK))
    else {
        return 1;
    };
    // Another watcher of this store runs: it serves.
    let Ok(_lock) = Flock::lock(lock_file, FlockArg::LockExclusiveNonblock) else {
        return 0;
    };
    let socket = store.join(SOCKET);
    let stop = match Watcher::start(store, work_tree, root) {
        Ok(mut watcher) => {
            // The lock is held: a socket left there is a dead watcher's.
            let _stale = std::fs::remove_file(&socket);
            match bind(&socket) {
                Ok(listener) => {
                    let places = Places::now(&socket, root);
                    let stop = watcher.run(&listener, &places);
                    if places.socket_is_ours() {
                        let _removed = std::fs::remove_file(&socket);
                    }
                    stop
                }
                Err(e) => Stop::Unreliable(format!("cannot listen on `{}`: {e}", socket.display())),
            }
        }
        Err(stop) => stop,
    };
    match &stop {
        Stop::Unavailable(why) => {
            let _said = std::fs::write(store.join(OFF), format!("{why}\n"));
        }
        Stop::Unreliable(why) => {
            let _said = std::fs::write(store.join(STOPPED), format!("{why}\n"));
        }
        Stop::Done => {}
    }
    0
}

/// Closes every descriptor above the standard three this process was given (a hook's parent may leave some
/// open without close-on-exec: a pipe kept open by the watcher would keep its reader waiting for ten minutes).
/// Called first, before this process opens anything of its own.
fn close_inherited() {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let inherited: Vec<i32> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd > 2)
        .collect();
    // The listing's own descriptor is among them, closed already when the listing ended: that close fails.
    for fd in inherited {
        #[expect(
            unsafe_code,
            reason = "closing descriptors nothing in this process owns: it has opened none yet"
        )]
        // SAFETY: no object of this process owns any descriptor above 2 at this point (nothing was opened yet),
        // so none is closed under an owner's feet.
        let _closed = unsafe { nix::libc::close(fd) };
    }
}

/// The kind of network file system `dir` is on (where a change made by another machine makes no inotify event),
/// `None` for a local one.
fn remote(dir: &Path) -> Option<&'static str> {
    let kind = nix::sys::statfs::statfs(dir).ok()?.filesystem_type();
    // The magic numbers of statfs(2): NFS, SMB, CIFS, SMB2, FUSE (sshfs and the like), 9P, Ceph, AFS, Coda.
    let magic = u64::try_from(kind.0).ok()? & 0xffff_ffff;
    match magic {
        0x6969 => Some("NFS"),
        0x517b | 0xff53_4d42 | 0xfe53_4d42 => Some("SMB"),
        0x6573_5546 => Some("FUSE"),
        0x0102_1997 => Some("9P"),
        0x00c3_6400 => Some("Ceph"),
        0x5346_414f | 0x6b41_4653 => Some("AFS"),
        0x7375_7245 => Some("Coda"),
        _ => None,
    }
}

/// The root and the socket, as they were when the watcher began to listen. Neither removing the root nor removing
/// the store makes an event while the watcher holds them open (its socket and lock keep their directories alive,
/// and a directory that is still used reports its deletion only when it is let go), so they are looked at after
/// every wake-up instead: a watcher of a root that is gone, or of a store another watcher replaced, stops.
struct Places {
    socket: PathBuf,
    root: PathBuf,
    ids: Option<((u64, u64), (u64, u64))>,
}

impl Places {
    fn now(socket: &Path, root: &Path) -> Self {
        let mut places = Self {
            socket: socket.to_path_buf(),
            root: root.to_path_buf(),
            ids: None,
        };
        places.ids = places.read();
        places
    }

    fn read(&self) -> Option<((u64, u64), (u64, u64))> {
        use std::os::unix::fs::MetadataExt as _;
        let id = |path: &Path| {
            std::fs::symlink_metadata(path)
                .ok()
                .map(|meta| (meta.dev(), meta.ino()))
        };
        Some((id(&self.socket)?, id(&self.root)?))
    }

    fn changed(&self) -> bool {
        self.ids.is_none() || self.read() != self.ids
    }

    /// Whether the socket at its path is still the one this watcher bound.
    fn socket_is_ours(&self) -> bool {
        use std::os::unix::fs::MetadataExt as _;
        let now = std::fs::symlink_metadata(&self.socket)
            .ok()
            .map(|meta| (meta.dev(), meta.ino()));
        now.is_some() && now == self.ids.map(|(socket, _)| socket)
    }
}

/// The listening socket, readable and writable by its owner only.
fn bind(socket: &Path) -> std::io::Result<UnixListener> {
    let listener = UnixListener::bind(socket)?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

impl Watcher {
    /// Watches the store directory (for cookies) and every directory a walk of the root descends into.
    fn start(store: &Path, work_tree: &Path, root: &Path) -> Result<Self, Stop> {
        let inotify = Inotify::init(InitFlags::IN_CLOEXEC | InitFlags::IN_NONBLOCK)
            .map_err(|e| Stop::Unavailable(format!("inotify is not available: {e}")))?;
        let store_wd = inotify
            .add_watch(
                store,
                AddWatchFlags::IN_CREATE
                    | AddWatchFlags::IN_DELETE_SELF
                    | AddWatchFlags::IN_MOVE_SELF
                    | AddWatchFlags::IN_ONLYDIR,
            )
            .map_err(|e| Stop::Unavailable(format!("cannot watch the store: {e}")))?;
        let prefix = root
            .strip_prefix(work_tree)
            .unwrap_or(Path::new(""))
            .to_path_buf();
        let project_exclude = work_tree.join(".git/info/exclude");
        let rules = Rules::capture(
            crate::store::exclude_lines(root, &prefix),
            project_exclude.is_file().then_some(project_exclude.as_path()),
        );
        let mut checker = Checker::new(work_tree, &prefix, &rules);
        let above = Rules::above_on_disk(work_tree, &prefix);
        for (dir, text) in &above {
            checker.learn(dir, text.clone());
        }
        let fingerprint = Rules::fingerprint_of(rules.own(), rules.exclude(), &above);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mut watcher = Self {
            inotify,
            store: store.to_path_buf(),
            store_wd,
            work_tree: work_tree.to_path_buf(),
            prefix: prefix.clone(),
            checker,
            dirs: HashMap::new(),
            dirty: HashMap::new(),
            seq: 0,
            floor: 0,
            instance: format!("{}-{nanos:x}", std::process::id()),
            fingerprint,
            cookies: std::collections::HashSet::new(),
            cookie_count: 0,
            served: 0,
        };
        watcher.add_tree(&prefix, true)?;
        Ok(watcher)
    }

    /// Watches `dir` (relative to the work tree) and every directory below it a walk descends into: each is
    /// watched before it is listed, so that an entry made meanwhile is either listed or seen. At the start
    /// (`capture`) each `.gitignore` is read into the rules; later, a `.gitignore` in a new directory means the
    /// rules a client holds are not the disk's, and the watcher stops.
    fn add_tree(&mut self, dir: &Path, capture: bool) -> Result<(), Stop> {
        let absolute = self.work_tree.join(dir);
        let wd = match self.inotify.add_watch(&absolute, dir_flags()) {
            Ok(wd) => wd,
            Err(e) if dir == self.prefix => {
                return Err(Stop::Unreliable(format!("cannot watch the root: {e}")));
            }
            // Gone or replaced meanwhile: its parent's event says so.
            Err(Errno::ENOENT | Errno::ENOTDIR) => return Ok(()),
            Err(Errno::ENOSPC) => {
                return Err(Stop::Unavailable(
                    "the inotify watch limit (fs.inotify.max_user_watches) is reached".to_owned(),
                ));
            }
            Err(e) => {
                return Err(Stop::Unreliable(format!(
                    "cannot watch `{}`: {e}",
                    absolute.display()
                )));
            }
        };
        if let Some(kind) = remote(&absolute) {
            return Err(Stop::Unavailable(format!(
                "`{}` is on a network file system ({kind}), whose changes made elsewhere make no inotify event",
                absolute.display()
            )));
        }
        // One directory at two paths (a bind mount inside the root): its events would name one of them only.
        if let Some(other) = self.dirs.insert(wd, dir.to_path_buf())
            && other != dir
        {
            return Err(Stop::Unavailable(format!(
                "`{}` and `{}` are the same directory",
                other.display(),
                dir.display()
            )));
        }
        if let Ok(text) = std::fs::read(absolute.join(".gitignore")) {
            if !capture {
                return Err(Stop::Unreliable(format!(
                    "a new directory `{}` holds a `.gitignore`",
                    dir.display()
                )));
            }
            self.checker.learn(dir, text);
        }
        let Ok(entries) = std::fs::read_dir(&absolute) else {
            return Ok(());
        };
        for entry in entries.filter_map(Result::ok) {
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let sub = dir.join(entry.file_name());
            if self.checker.followed(&sub) {
                self.add_tree(&sub, capture)?;
            }
        }
        Ok(())
    }

    /// Serves clients and follows events until idle for [`IDLE`] or unreliable.
    fn run(&mut self, listener: &UnixListener, places: &Places) -> Stop {
        let mut last_client = Instant::now();
        loop {
            let left = IDLE.saturating_sub(last_client.elapsed());
            if left.is_zero() {
                return Stop::Done;
            }
            if places.changed() {
                return Stop::Unreliable("the root or the store's socket was removed or replaced".to_owned());
            }
            let wait = PollTimeout::try_from(left.min(Duration::from_secs(10))).unwrap_or(PollTimeout::MAX);
            let (events_ready, client_ready) = {
                let mut fds = [
                    PollFd::new(self.inotify.as_fd(), PollFlags::POLLIN),
                    PollFd::new(listener.as_fd(), PollFlags::POLLIN),
                ];
                match poll(&mut fds, wait) {
                    Ok(_) | Err(Errno::EINTR) => {}
                    Err(e) => return Stop::Unreliable(format!("poll: {e}")),
                }
                let ready = |fd: &PollFd<'_>| fd.revents().is_some_and(|r| !r.is_empty());
                (ready(&fds[0]), ready(&fds[1]))
            };
            if events_ready && let Err(stop) = self.drain() {
                return stop;
            }
            if client_ready {
                while let Ok((stream, _)) = listener.accept() {
                    last_client = Instant::now();
                    match self.answer(stream) {
                        Ok(()) => {}
                        Err(stop) => return stop,
                    }
                }
            }
        }
    }

    /// Reads every queued event.
    fn drain(&mut self) -> Result<(), Stop> {
        loop {
            let events = match self.inotify.read_events() {
                Ok(events) => events,
                Err(Errno::EAGAIN) => return Ok(()),
                Err(e) => return Err(Stop::Unreliable(format!("reading events: {e}"))),
            };
            for event in events {
                self.event(event.wd, event.mask, event.name.as_deref())?;
            }
        }
    }

    /// Takes one event: marks its path changed, watches a new directory, forgets one moved or deleted.
    fn event(&mut self, wd: WatchDescriptor, mask: AddWatchFlags, name: Option<&OsStr>) -> Result<(), Stop> {
        if mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
            return Err(Stop::Unreliable("the inotify queue overflowed".to_owned()));
        }
        if wd == self.store_wd {
            if mask.intersects(
                AddWatchFlags::IN_IGNORED | AddWatchFlags::IN_DELETE_SELF | AddWatchFlags::IN_MOVE_SELF,
            ) {
                return Err(Stop::Done);
            }
            if let Some(name) = name
                && name.as_encoded_bytes().starts_with(COOKIE_PREFIX.as_bytes())
            {
                self.cookies.insert(name.to_os_string());
            }
            return Ok(());
        }
        let Some(dir) = self.dirs.get(&wd).cloned() else {
            return Ok(());
        };
        if mask.contains(AddWatchFlags::IN_IGNORED) {
            self.dirs.remove(&wd);
        }
        if mask.intersects(
            AddWatchFlags::IN_IGNORED | AddWatchFlags::IN_DELETE_SELF | AddWatchFlags::IN_MOVE_SELF,
        ) {
            if dir == self.prefix {
                return Err(Stop::Unreliable("the root was moved or deleted".to_owned()));
            }
            return Ok(());
        }
        let Some(name) = name else {
            return Ok(());
        };
        if name == ".gitignore" {
            return Err(Stop::Unreliable(format!(
                "`{}` changed",
                dir.join(name).display()
            )));
        }
        let path = dir.join(name);
        self.seq += 1;
        self.dirty.insert(path.clone(), self.seq);
        if mask.contains(AddWatchFlags::IN_ISDIR) {
            if mask.intersects(AddWatchFlags::IN_MOVED_FROM | AddWatchFlags::IN_DELETE) {
                if self.checker.has_rules_under(&path) {
                    return Err(Stop::Unreliable(format!(
                        "`{}`, which holds a `.gitignore`, was moved away",
                        path.display()
                    )));
                }
                self.forget(&path);
            }
            if mask.intersects(AddWatchFlags::IN_CREATE | AddWatchFlags::IN_MOVED_TO)
                && self.checker.followed(&path)
            {
                self.add_tree(&path, false)?;
            }
        }
        if self.dirty.len() > MAX_DIRTY {
            self.dirty.clear();
            self.floor = self.seq;
        }
        Ok(())
    }

    /// Stops watching `dir` and every directory below it (moved away or deleted: their events would name old
    /// paths).
    fn forget(&mut self, dir: &Path) {
        let gone: Vec<WatchDescriptor> = self
            .dirs
            .iter()
            .filter(|(_, path)| path.starts_with(dir))
            .map(|(wd, _)| *wd)
            .collect();
        for wd in gone {
            self.dirs.remove(&wd);
            let _removed = self.inotify.rm_watch(wd);
        }
    }

    /// Answers one client: its peer must be this user; after a cookie written into the store directory has come
    /// back as an event (so every event of a write done before the question has been read), the paths changed
    /// since its token.
    fn answer(&mut self, stream: UnixStream) -> Result<(), Stop> {
        let _blocking = stream.set_nonblocking(false);
        let _read = stream.set_read_timeout(Some(REPLY_WITHIN));
        let _write = stream.set_write_timeout(Some(REPLY_WITHIN));
        if !super::same_user(&stream) {
            return Ok(());
        }
        let mut line = String::new();
        if BufReader::new((&stream).take(512)).read_line(&mut line).is_err() {
            return Ok(());
        }
        let mut words = line.split_whitespace();
        let (instance, since) = match (words.next(), words.next(), words.next()) {
            (Some("quit"), _, _) => return Err(Stop::Done),
            (Some("since"), Some(instance), Some(seq)) => {
                (instance.to_owned(), seq.parse::<u64>().unwrap_or(0))
            }
            _ => return Ok(()),
        };
        if !self.sync()? {
            return Ok(());
        }
        let complete = instance == self.instance && since >= self.floor && since <= self.seq;
        let paths = if complete {
            self.dirty
                .iter()
                .filter(|(_, seq)| **seq > since)
                .map(|(path, _)| path.as_os_str().as_encoded_bytes().to_vec())
                .collect()
        } else {
            Vec::new()
        };
        self.served += 1;
        let reply = Answer {
            instance: self.instance.clone(),
            seq: self.seq,
            fingerprint: self.fingerprint,
            complete,
            paths,
            served: self.served,
        };
        if let Ok(mut text) = serde_json::to_vec(&reply) {
            text.push(b'\n');
            let _sent = (&stream).write_all(&text);
        }
        Ok(())
    }

    /// Makes a cookie in the store directory and reads events until its own comes: every event queued
    /// before it has then been taken. `false` when it did not come in time.
    fn sync(&mut self) -> Result<bool, Stop> {
        self.cookie_count += 1;
        let name = format!(
            "{COOKIE_PREFIX}{}-{}-{}",
            std::process::id(),
            self.cookie_count,
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos())
        );
        let path = self.store.join(&name);
        // A link to a kept empty file: a name and its event without a new inode (ext4 searches its bitmaps and
        // journals a new one for each file made); the kept file is made when it is missing.
        let source = self.store.join(COOKIE_SOURCE);
        let made = std::fs::hard_link(&source, &path).is_ok()
            || (std::fs::write(&source, b"").is_ok() && std::fs::hard_link(&source, &path).is_ok())
            || std::fs::write(&path, b"").is_ok();
        if !made {
            return Ok(false);
        }
        let deadline = Instant::now() + REPLY_WITHIN;
        let seen = loop {
            self.drain()?;
            if self.cookies.remove(OsStr::new(&name)) {
                break true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break false;
            }
            let mut fds = [PollFd::new(self.inotify.as_fd(), PollFlags::POLLIN)];
            let wait = PollTimeout::try_from(left).unwrap_or(PollTimeout::MAX);
            let _ready = poll(&mut fds, wait);
        };
        let _removed = std::fs::remove_file(&path);
        Ok(seen)
    }
}
