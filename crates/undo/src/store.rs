//! One root's store: a private git directory outside the project, its configuration and ignore rules, the
//! snapshots (`git add -A` into a private index, `write-tree`), the record of each run and the bounded retention.

use std::collections::{BTreeSet, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};

use crate::error::{Result, UndoError};
use crate::git::{Git, find_git};
use crate::index::{Index, Stat};
use crate::settings::UndoSettings;
use crate::walk::{self, Rules};

/// A run's number in its store: 1 for the first, then counting up.
pub type RunId = u64;

/// Every this many runs, the store's size is checked against its bound and unreachable objects are pruned.
const PRUNE_EVERY: u64 = 16;
/// How many times `git update-index` is run before a snapshot fails (see `Store::update_index`).
const UPDATE_TRIES: u32 = 3;
/// The most file content one snapshot hashes: past it, the largest of the files to hash are recorded by their stat
/// data alone (docs/undo.md, "How: a private git store"), so that nothing a command writes can make the snapshot after
/// it run past its bound.
pub const KEPT_SNAPSHOT_BYTES: u64 = 256 << 20;
/// The most files one snapshot hashes, for the same reason: git writes an object file for each.
const KEPT_SNAPSHOT_FILES: usize = 40_000;
/// The longest command text a record keeps.
const COMMAND_CHARS: usize = 2_000;

/// agent-guard's own directory in a project: never snapshotted, and not writable by sandboxed commands.
const AGENT_DIR: &str = ".agent-guard";

/// What a store records of one run: the command, when it ran, and the trees of the root before and after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The run's number.
    pub id: RunId,
    /// When the run started, in seconds since the Unix epoch.
    pub time: u64,
    /// The command line.
    pub command: String,
    /// The root the snapshots are of.
    pub root: PathBuf,
    /// The tree before the run (a git object id in the store).
    pub before: String,
    /// The tree after the run.
    pub after: String,
    /// Whether `agent-guard undo` took the run back.
    #[serde(default)]
    pub undone: bool,
    /// The ask of `agent-guard serve` whose answer let the command run, when a person allowed it there: the
    /// server's page shows the run's id beside the ask.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<String>,
    /// The key of the tool call the run was for (`agent-guard sandbox --call KEY`, which the hook's answer names):
    /// the call's row of the audit log holds the same, and `agent-guard audit` shows the run beside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
}

/// What a run was for, as its record names it: the server's ask a person answered, the tool call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Origin {
    pub(crate) approval: Option<String>,
    pub(crate) call: Option<String>,
}

/// One root's snapshot store.
#[derive(Debug)]
pub struct Store {
    pub(crate) git: Git,
    root: PathBuf,
    /// The root's path below the work tree (empty when the root is the work tree): paths in trees start with it.
    pub(crate) prefix: PathBuf,
    keep_runs: usize,
    keep_bytes: u64,
    /// Whether a change watcher tells snapshots what changed ([`UndoSettings::watch`]).
    watch: bool,
    /// The files the last snapshot held that the latest one left out because git could not read them.
    left_out: std::sync::Mutex<BTreeSet<PathBuf>>,
    /// The files the latest snapshot recorded by their stat data alone that it found new or changed (absolute
    /// paths): the last snapshot, which the decision read, did not record them so.
    unhashed: std::sync::Mutex<Vec<PathBuf>>,
}

/// The exclusive lock of a store, held while a snapshot is taken or files are restored.
#[derive(Debug)]
pub(crate) struct StoreLock(#[expect(dead_code, reason = "held for its drop, which unlocks")] Flock<File>);

impl Store {
    /// The store of `root`, made when it does not exist yet.
    ///
    /// # Errors
    /// [`UndoError::Off`] when snapshots are off (settings, no store directory, a root that is `/` or the home
    /// directory, or switched off for this root after a snapshot ran past its bound), [`UndoError::NoGit`], or
    /// the error of making the store.
    pub fn open(root: &Path, settings: &UndoSettings) -> Result<Self> {
        let store = Self::locate(root, settings)?;
        store.prepare()?;
        Ok(store)
    }

    /// The store of `root` when one was made: for listing and taking back, which never make one.
    ///
    /// # Errors
    /// As [`Store::open`].
    pub fn existing(root: &Path, settings: &UndoSettings) -> Result<Option<Self>> {
        let store = Self::locate(root, settings)?;
        if !store.git.dir.join("HEAD").exists() {
            return Ok(None);
        }
        store.prepare()?;
        Ok(Some(store))
    }

    /// The directory of the store of `root` under `settings`, whether or not it exists.
    pub fn dir_of(root: &Path, settings: &UndoSettings) -> Option<PathBuf> {
        let dir = settings.dir.as_ref()?;
        let name = root
            .file_name()
            .map(|n| {
                n.to_string_lossy()
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c))
                    .collect()
            })
            .unwrap_or_else(|| "root".to_owned());
        Some(dir.join(format!(
            "{name}-{:016x}",
            fnv1a(root.as_os_str().as_encoded_bytes())
        )))
    }

    /// The root the store is of.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The store's private git directory.
    pub fn dir(&self) -> &Path {
        &self.git.dir
    }

    /// The store of `root` as [`Store::open`] would find it, without making or reading anything of it.
    pub(crate) fn locate_only(root: &Path, settings: &UndoSettings) -> Result<Self> {
        Self::locate(root, settings)
    }

    fn locate(root: &Path, settings: &UndoSettings) -> Result<Self> {
        if !settings.enabled {
            return Err(UndoError::Off("`AGENT_GUARD_UNDO` is off".to_owned()));
        }
        // Within a batch of decisions (agent-fs-sandbox's batch facts) each path is made canonical once: every
        // removal of a batch's lines locates the same store.
        let root = agent_fs_sandbox::canonicalize(root).map_err(|e| UndoError::io(root, e))?;
        if root.parent().is_none() || settings.home.as_deref().is_some_and(|home| home == root) {
            return Err(UndoError::Off(format!(
                "`{}` is `/` or the home directory, which are not snapshotted",
                root.display()
            )));
        }
        let dir = Self::dir_of(&root, settings).ok_or_else(|| {
            UndoError::Off("no home directory and no `AGENT_GUARD_UNDO_DIR` to keep snapshots in".to_owned())
        })?;
        // A store inside the root would snapshot itself, and be written by the commands it records, unless it is
        // inside agent-guard's own directory: no snapshot holds that, and sandboxed commands cannot write it.
        let dir_resolved = dir
            .ancestors()
            .find_map(|known| {
                agent_fs_sandbox::canonicalize(known)
                    .ok()
                    .map(|c| c.join(dir.strip_prefix(known).unwrap_or(Path::new(""))))
            })
            .unwrap_or_else(|| dir.clone());
        if dir_resolved
            .strip_prefix(&root)
            .is_ok_and(|inside| !inside.components().any(|c| c.as_os_str() == AGENT_DIR))
        {
            return Err(UndoError::Off(format!(
                "the snapshot store `{}` would be inside the root `{}`",
                dir.display(),
                root.display()
            )));
        }
        if let Ok(why) = std::fs::read_to_string(dir.join("off")) {
            return Err(UndoError::Off(format!(
                "{} (remove `{}` to retry)",
                why.trim(),
                dir.join("off").display()
            )));
        }
        let program = find_git(std::slice::from_ref(&root)).ok_or(UndoError::NoGit)?;
        let work_tree = work_tree_of(&root);
        let prefix = root
            .strip_prefix(&work_tree)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        Ok(Self {
            git: Git {
                program,
                dir,
                work_tree,
                timeout: settings.timeout,
            },
            root,
            prefix,
            keep_runs: settings.keep_runs,
            keep_bytes: settings.keep_bytes,
            watch: settings.watch,
            left_out: std::sync::Mutex::default(),
            unhashed: std::sync::Mutex::default(),
        })
    }

    /// Makes the store when missing and brings its configuration and ignore rules up to date (each written only
    /// when it changed, so that git's cache of untracked directories stays valid).
    fn prepare(&self) -> Result<()> {
        let dir = &self.git.dir;
        if !dir.join("HEAD").exists() {
            std::fs::create_dir_all(dir).map_err(|e| UndoError::io(dir, e))?;
            // `init` takes the directory as its argument; the work tree is given to every later command instead.
            let mut init = self.git.base_command();
            init.arg("init").arg("--quiet").arg("--bare").arg(dir);
            let ran = init.output().map_err(|e| UndoError::io(&self.git.program, e))?;
            if !ran.status.success() {
                return Err(UndoError::Git {
                    command: "init --bare".to_owned(),
                    store: dir.clone(),
                    stderr: String::from_utf8_lossy(&ran.stderr).trim().to_owned(),
                });
            }
        }
        // The stores hold copies of files the project ignores: git must never take them into the project's own
        // commits (`git add -A`), whatever the `.agent-guard` directory around them says.
        if let Some(stores) = dir.parent() {
            write_if_changed(&stores.join(".gitignore"), STORES_GITIGNORE)?;
        }
        write_if_changed(&dir.join("config"), CONFIG)?;
        write_if_changed(&dir.join("info/attributes"), ATTRIBUTES)?;
        write_if_changed(&dir.join("root"), &format!("{}\n", self.root.display()))?;
        std::fs::create_dir_all(dir.join("runs")).map_err(|e| UndoError::io(dir.join("runs"), e))
    }

    /// Takes the store's lock, waiting for another process's snapshot or restore to end.
    pub(crate) fn lock(&self) -> Result<StoreLock> {
        let path = self.git.dir.join("lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| UndoError::io(&path, e))?;
        let locked = Flock::lock(file, FlockArg::LockExclusive)
            .map_err(|(_, errno)| UndoError::io(&path, std::io::Error::from(errno)))?;
        // The lock is held, so an index lock left behind is a killed git's.
        let _stale = std::fs::remove_file(self.git.dir.join("index.lock"));
        Ok(StoreLock(locked))
    }

    /// The ignore rules of the root as they are now on the disk, to be captured by the next snapshot and kept
    /// for the one after the run (`Rules::frozen`).
    pub(crate) fn rules(&self) -> Rules {
        let project_exclude = self.git.work_tree.join(".git/info/exclude");
        Rules::capture(
            exclude_lines(&self.root, &self.prefix),
            project_exclude.is_file().then_some(project_exclude.as_path()),
        )
        .with_folded(secret_lines())
    }

    /// The tree of the root as it is now: every file `rules` do not ignore (nested repositories' files
    /// included), and every file an earlier snapshot held that is still a file, hashed only when its stat data
    /// changed since the last snapshot. Call with the lock held. A snapshot that runs past the time bound
    /// switches the root's snapshots off.
    ///
    /// With a change watcher, only the paths it says changed since the last snapshot are looked at; whenever
    /// anything is in doubt, the whole root is walked (see the `watch` module).
    pub(crate) fn snapshot(&self, lock: &StoreLock, rules: &mut Rules) -> Result<String> {
        self.snapshot_asked(lock, rules, None)
    }

    /// The question of the next snapshot sent to the store's watcher ahead of it, under `lock`, which the
    /// snapshot that reads its answer ([`Store::snapshot_asked`]) then holds: `None` without a watcher.
    pub(crate) fn ask(&self, _lock: &StoreLock) -> Option<crate::watch::incremental::Question> {
        self.watch.then(|| crate::watch::incremental::ask(self))
    }

    /// [`Store::snapshot`], with the answer to `question` ([`Store::ask`], under the same lock) when it was sent.
    pub(crate) fn snapshot_asked(
        &self,
        lock: &StoreLock,
        rules: &mut Rules,
        question: Option<crate::watch::incremental::Question>,
    ) -> Result<String> {
        drop(self.left_out());
        drop(self.unhashed());
        if !self.watch {
            return self.walk_snapshot(lock, rules).map(|(tree, _)| tree);
        }
        match crate::watch::incremental::snapshot(self, rules, question)? {
            crate::watch::incremental::Outcome::Done(tree) => Ok(tree),
            crate::watch::incremental::Outcome::Walk(answer) => {
                let (tree, linked) = self.walk_snapshot(lock, rules)?;
                // The token came before the walk, so a change during the walk comes after it; the rules kept are
                // those the walk read from the disk (a walk after the command follows older ones).
                if let Some(answer) = answer
                    && !rules.is_frozen()
                {
                    crate::watch::State {
                        instance: answer.instance,
                        seq: answer.seq,
                        rules: rules.clone(),
                        walked: true,
                        linked,
                        walked_at: answer.served,
                    }
                    .save(self.dir());
                }
                Ok(tree)
            }
        }
    }

    /// A snapshot by a walk of the whole root: the tree, and the files the walk found with more than one link.
    fn walk_snapshot(&self, _lock: &StoreLock, rules: &mut Rules) -> Result<(String, BTreeSet<PathBuf>)> {
        let started = std::time::Instant::now();
        let work_tree = &self.git.work_tree;
        let index = self.git.dir.join("index");
        // The stat data git keeps; an index this cannot read means every path goes to git, which compares.
        let kept = match Index::read(&index) {
            Some(kept) => kept,
            None => Index::listed(self.indexed()?),
        };
        // A file recorded by its stat data alone stays so while it is unchanged, but for a snapshot before a
        // command (or undo's), which hashes it when the bound allows: so that the snapshot after a command holds a
        // change of the command's alone.
        let catch_up = !rules.is_frozen();
        let walked = walk::files(work_tree, &self.root, rules);
        if started.elapsed() > self.git.timeout {
            return Err(self.switch_off(UndoError::Timeout {
                command: "the walk of the root".to_owned(),
                store: self.git.dir.clone(),
                seconds: self.git.timeout.as_secs(),
            }));
        }
        let mut update = Vec::new();
        let mut gone = Vec::new();
        let mut known = 0;
        for (path, stat, _) in &walked {
            if !kept.entries.contains_key(path.as_os_str()) {
                // A new file that cannot be read is left out (git would stop at it).
                if self.takes(path, false) {
                    push_path(&mut update, path);
                }
                continue;
            }
            known += 1;
            if !stat.as_ref().is_some_and(|stat| {
                kept.unchanged(path, stat) || (!catch_up && kept.kept_by_stat(path, stat))
            }) {
                // One held that can no longer be read is left out too, as if gone.
                if self.takes(path, true) {
                    push_path(&mut update, path);
                } else {
                    push_path(&mut gone, path);
                }
            }
        }
        // What the last snapshot held and the walk did not list: gone, no longer a file (or below a link), or a
        // file the rules now ignore, which stays (a rule written since cannot take a file out of the snapshots).
        if known < kept.entries.len() {
            let walked_set: HashSet<&OsStr> = walked.iter().map(|(path, _, _)| path.as_os_str()).collect();
            for path in kept
                .entries
                .keys()
                .filter(|p| !walked_set.contains(p.as_os_str()))
            {
                let path = Path::new(path);
                if still_a_file(work_tree, path) && self.takes(path, true) {
                    push_path(&mut update, path);
                } else {
                    push_path(&mut gone, path);
                }
            }
        }
        let linked = walked
            .into_iter()
            .filter(|(_, _, linked)| *linked)
            .map(|(path, _, _)| path)
            .collect();
        Ok((self.commit_index(&kept, &gone, &update)?, linked))
    }

    /// Whether a file of the root found by a snapshot (`path`, relative to the work tree) goes to git: whether git
    /// can read it ([`readable`]). One it cannot is left out of the snapshot, which `git update-index` would
    /// otherwise stop at, failing the snapshot and every later one while the file stays; one that the last
    /// snapshot `held` is noted in [`Store::left_out`].
    pub(crate) fn takes(&self, path: &Path, held: bool) -> bool {
        if readable(&self.git.work_tree.join(path)) {
            return true;
        }
        if held && let Ok(mut left_out) = self.left_out.lock() {
            left_out.insert(path.to_path_buf());
        }
        false
    }

    /// The files the last snapshot held and the latest one left out because git could not read them (relative
    /// to the work tree); emptied by the call.
    pub(crate) fn left_out(&self) -> BTreeSet<PathBuf> {
        self.left_out
            .lock()
            .map(|mut left_out| std::mem::take(&mut *left_out))
            .unwrap_or_default()
    }

    /// The files the latest snapshot recorded by their stat data alone that it found new or changed (absolute
    /// paths; emptied by the call): past the bounds of what one snapshot hashes, and unknown to a decision that
    /// read the snapshot before.
    pub(crate) fn unhashed(&self) -> Vec<PathBuf> {
        self.unhashed
            .lock()
            .map(|mut unhashed| std::mem::take(&mut *unhashed))
            .unwrap_or_default()
    }

    /// The files the store's index holds by their stat data alone (too large to hash when a snapshot looked at
    /// them), as absolute paths; none when the index cannot be read.
    pub(crate) fn not_kept(&self) -> Vec<PathBuf> {
        let Ok(file) = File::open(self.git.dir.join("index")) else {
            return Vec::new();
        };
        let Some(mut entries) = crate::index::Entries::new(std::io::BufReader::with_capacity(1 << 16, file))
        else {
            return Vec::new();
        };
        let mut found = Vec::new();
        while let Some(Some(entry)) = entries.next_entry() {
            if entry.stat.is_gitlink() {
                found.push(self.git.work_tree.join(OsStr::from_bytes(entry.name)));
            }
        }
        found
    }

    /// The tree of the last snapshot, as it wrote it.
    pub(crate) fn last_tree(&self) -> Option<String> {
        let tree = std::fs::read_to_string(self.git.dir.join("last-tree")).ok()?;
        let tree = tree.trim();
        (!tree.is_empty()).then(|| tree.to_owned())
    }

    /// Removes `gone` from the index and gives git `update` (both NUL-separated), and returns the tree. `kept` is
    /// the index as the snapshot read it.
    ///
    /// The bounds apply only to content that must be hashed now: a file of `update` whose stat data are still the
    /// ones `kept` holds with its content (a file git looks at again because it changed in the same clock tick as
    /// the index was written) never counts against them, so that what a command writes cannot take from the
    /// snapshots the content of a file it did not change: git compares its content while the bounds leave room,
    /// else the index keeps its entry as it is. While the other files hold more
    /// than [`KEPT_SNAPSHOT_BYTES`] together, or are more than [`KEPT_SNAPSHOT_FILES`], some are not hashed: the
    /// files new since the last snapshot first (the largest past the bound of bytes, the smallest past the bound
    /// of files), and only then files it held (whose content is what taking a run back puts back). Each is
    /// recorded as an entry whose id is made of its stat data (size, times, inode, mode), with the mode of a
    /// nested repository's commit, which needs no object and which undo never writes. Taking a run back then
    /// deletes such a file the run made, and compares it by its stat data, but cannot put back its content; a
    /// later snapshot that looks at the file again hashes it when the bound allows. Hashing a file costs time in
    /// proportion to its size (zlib and SHA-1, some 25 MB/s on a loaded machine): without the bounds, a command
    /// that wrote a large file or very many made the snapshot after it run past its bound, which switched the
    /// root's snapshots off and left the run, and whatever else it did, unrecorded.
    pub(crate) fn commit_index(&self, kept: &Index, gone: &[u8], update: &[u8]) -> Result<String> {
        let index = self.git.dir.join("index");
        let stamp_before = stamp(&index);
        if !gone.is_empty() {
            self.update_index(&["--force-remove"], gone)?;
        }
        let (update, by_stat) = self.by_stat(kept, update);
        if !update.is_empty() {
            self.update_index(&["--add", "--remove", "--replace"], &update)?;
        }
        if !by_stat.is_empty() {
            self.update_index(&["--index-info"], &by_stat)?;
        }
        let unchanged = stamp_before.is_some() && stamp(&index) == stamp_before;
        // git rewrites the index only when an entry changed: when it did not, the tree is the one the last
        // snapshot wrote, and a git process is saved.
        let last = self.git.dir.join("last-tree");
        if unchanged
            && let Ok(tree) = std::fs::read_to_string(&last)
            && !tree.trim().is_empty()
        {
            return Ok(tree.trim().to_owned());
        }
        // The pruning of an earlier run (`git gc` in the background) removes the object directories it empties,
        // and may remove one between git's making it and writing an object there: a second try makes it again.
        let tree = match self.git.run(&["write-tree"]) {
            Ok(tree) => tree,
            Err(_) => self.git.run(&["write-tree"])?,
        };
        let tree = String::from_utf8_lossy(&tree).trim().to_owned();
        std::fs::write(&last, format!("{tree}\n")).map_err(|e| UndoError::io(&last, e))?;
        Ok(tree)
    }

    /// Splits `update` (NUL-separated paths) into those git hashes and the `--index-info` records (`-z`) of the
    /// files recorded by their stat data alone (see [`Store::commit_index`]).
    fn by_stat(&self, kept: &Index, update: &[u8]) -> (Vec<u8>, Vec<u8>) {
        // Each path that may be left unhashed: a regular file (only a file is recorded by its stat data) whose
        // content the index does not hold under the same stat data, with its stat data, its size, and whether
        // the last snapshot held it.
        let mut hashed = Vec::new();
        let mut sized: Vec<(&[u8], Stat, u64, bool)> = Vec::new();
        // The files whose content the index holds under their stat data, with their sizes.
        let mut unchanged: Vec<(&[u8], u64)> = Vec::new();
        for path in update.split(|b| *b == 0).filter(|path| !path.is_empty()) {
            let name = OsStr::from_bytes(path);
            let raw = nix::sys::stat::lstat(&self.git.work_tree.join(name))
                .ok()
                .filter(|raw| raw.st_mode & nix::libc::S_IFMT == nix::libc::S_IFREG);
            let size = raw.map_or(0, |raw| u64::try_from(raw.st_size).unwrap_or(u64::MAX));
            match raw.as_ref().and_then(Stat::of_raw) {
                Some(stat) if kept.holds_unchanged(Path::new(name), &stat) => unchanged.push((path, size)),
                Some(stat) => sized.push((path, stat, size, kept.entries.contains_key(name))),
                None => {
                    hashed.extend_from_slice(path);
                    hashed.push(0);
                }
            }
        }
        // Past the bound of bytes, the largest new files are left unhashed, then the largest held ones; past the
        // bound of files, the smallest of the new files left (each costs git about the same, and the larger hold
        // more that undo could put back), then the smallest held ones.
        sized.sort_by_key(|(_, _, size, held)| (*held, std::cmp::Reverse(*size)));
        let mut unhashed = vec![false; sized.len()];
        let mut total: u64 = sized.iter().map(|(_, _, size, _)| *size).sum();
        for ((_, _, size, _), unhashed) in sized.iter().zip(unhashed.iter_mut()) {
            if total <= KEPT_SNAPSHOT_BYTES {
                break;
            }
            total -= size;
            *unhashed = true;
        }
        let mut left = unhashed.iter().filter(|unhashed| !**unhashed).count();
        let mut order: Vec<usize> = (0..sized.len()).collect();
        order.sort_by_key(|at| sized.get(*at).map(|(_, _, size, held)| (*held, *size)));
        for at in order {
            if left <= KEPT_SNAPSHOT_FILES {
                break;
            }
            if let Some(unhashed) = unhashed.get_mut(at)
                && !*unhashed
            {
                left -= 1;
                *unhashed = true;
            }
        }
        // git compares the content of a file the index holds unchanged (it changed in the same clock tick as the
        // index was written) while the bounds leave room; past them the index keeps its entry as it is.
        let mut room = KEPT_SNAPSHOT_BYTES.saturating_sub(total);
        unchanged.sort_by_key(|(_, size)| *size);
        for (path, size) in unchanged {
            if left >= KEPT_SNAPSHOT_FILES || size > room {
                break;
            }
            left += 1;
            room -= size;
            hashed.extend_from_slice(path);
            hashed.push(0);
        }
        let mut by_stat = Vec::new();
        let mut noted = self.unhashed.lock().ok();
        for ((path, stat, _, _), unhashed) in sized.into_iter().zip(unhashed) {
            if unhashed {
                by_stat.extend_from_slice(format!("160000 {}\t", stat.id()).as_bytes());
                by_stat.extend_from_slice(path);
                by_stat.push(0);
                // One the last snapshot recorded so, unchanged, is known to the decisions that read it.
                if let Some(noted) = noted.as_mut()
                    && !kept.kept_by_stat(Path::new(OsStr::from_bytes(path)), &stat)
                {
                    noted.push(self.git.work_tree.join(OsStr::from_bytes(path)));
                }
            } else {
                hashed.extend_from_slice(path);
                hashed.push(0);
            }
        }
        (hashed, by_stat)
    }

    /// The paths the store's index holds (relative to the work tree), as git lists them.
    fn indexed(&self) -> Result<impl Iterator<Item = OsString>> {
        let listing = self.git.run(&["ls-files", "-z"])?;
        Ok(listing
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| OsStr::from_bytes(p).to_os_string())
            .collect::<Vec<_>>()
            .into_iter())
    }

    /// `git update-index <options> -z --stdin` over `paths` (NUL-separated). The background pruning of an
    /// earlier run (`git gc`) removes the object directories it empties, and may remove one between git's making
    /// it and writing an object there; the path's entry then stays as the last snapshot had it. A snapshot that
    /// went on from there would record the file as unchanged (and a run as changing nothing), so a failure is
    /// tried again, and the last one fails the snapshot.
    fn update_index(&self, options: &[&str], paths: &[u8]) -> Result<()> {
        let stdin = if options.contains(&"--index-info") {
            None
        } else {
            Some("--stdin")
        };
        let args: Vec<&str> = ["update-index", "-z"]
            .into_iter()
            .chain(options.iter().copied())
            .chain(stdin)
            .collect();
        let mut tried = 0;
        loop {
            tried += 1;
            match self.git.run_unchecked(&args, Some(paths)) {
                Ok(ran) if ran.success => return Ok(()),
                Ok(ran) if tried >= UPDATE_TRIES => return Err(ran.error),
                Ok(_) => {}
                Err(error @ UndoError::Timeout { .. }) => return Err(self.switch_off(error)),
                Err(error) => return Err(error),
            }
        }
    }

    /// Switches the root's snapshots off after `error` (a snapshot past its bound), leaving the file `off` that
    /// says why; returns the error.
    fn switch_off(&self, error: UndoError) -> UndoError {
        let off = self.git.dir.join("off");
        let _written = std::fs::write(&off, format!("a snapshot took too long: {error}\n"));
        error
    }

    /// Records a run that changed the root from `before` to `after`; returns its number. Drops the oldest runs
    /// past the bounds and, now and then, starts a pruning of the store in the background.
    pub(crate) fn record(
        &self,
        _lock: &StoreLock,
        command: &str,
        origin: &Origin,
        started: SystemTime,
        before: &str,
        after: &str,
    ) -> Result<RunId> {
        let runs = self.runs()?;
        let id = runs.last().map_or(1, |run| run.id + 1).max(self.next_id());
        let refs = format!("update refs/runs/{id}/before {before}\nupdate refs/runs/{id}/after {after}\n");
        self.git
            .run_with_input(&["update-ref", "--stdin"], Some(refs.as_bytes()))?;
        let record = RunRecord {
            id,
            time: started.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            command: command.chars().take(COMMAND_CHARS).collect(),
            root: self.root.clone(),
            before: before.to_owned(),
            after: after.to_owned(),
            undone: false,
            approval: origin.approval.clone(),
            call: origin.call.clone(),
        };
        self.write_record(&record)?;
        let next = self.git.dir.join("next-id");
        std::fs::write(&next, format!("{}\n", id + 1)).map_err(|e| UndoError::io(&next, e))?;
        let mut kept: Vec<RunId> = runs.iter().map(|r| r.id).chain([id]).collect();
        let mut dropped = Vec::new();
        while kept.len() > self.keep_runs.max(1) {
            dropped.push(kept.remove(0));
        }
        // The first run's snapshot wrote one loose object per file of the root: packing them early saves most
        // of the space they take.
        if id % PRUNE_EVERY == 0 || id == 1 {
            if self.bytes() > self.keep_bytes {
                let keep = (kept.len() / 2).max(1);
                while kept.len() > keep {
                    dropped.push(kept.remove(0));
                }
            }
            self.drop_runs(&dropped)?;
            self.prune_in_background();
        } else {
            self.drop_runs(&dropped)?;
        }
        Ok(id)
    }

    /// The runs the store holds, oldest first.
    ///
    /// # Errors
    /// When the store's directory of records cannot be read.
    pub fn runs(&self) -> Result<Vec<RunRecord>> {
        let dir = self.git.dir.join("runs");
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(UndoError::io(&dir, e)),
        };
        let mut runs: Vec<RunRecord> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .filter_map(|e| std::fs::read(e.path()).ok())
            .filter_map(|bytes| serde_json::from_slice(&bytes).ok())
            .collect();
        runs.sort_by_key(|run| run.id);
        Ok(runs)
    }

    pub(crate) fn write_record(&self, record: &RunRecord) -> Result<()> {
        let path = self.git.dir.join("runs").join(format!("{}.json", record.id));
        let text = serde_json::to_string(record).map_err(|e| UndoError::Data(e.to_string()))?;
        let partial = path.with_extension("json.tmp");
        std::fs::write(&partial, text).map_err(|e| UndoError::io(&partial, e))?;
        std::fs::rename(&partial, &path).map_err(|e| UndoError::io(&path, e))
    }

    /// The bytes the store's objects take, as git counts them.
    pub fn bytes(&self) -> u64 {
        let Ok(counts) = self.git.run(&["count-objects", "-v"]) else {
            return 0;
        };
        String::from_utf8_lossy(&counts)
            .lines()
            .filter_map(|line| line.split_once(": "))
            .filter(|(key, _)| matches!(*key, "size" | "size-pack" | "size-garbage"))
            .filter_map(|(_, kib)| kib.trim().parse::<u64>().ok())
            .sum::<u64>()
            .saturating_mul(1024)
    }

    fn next_id(&self) -> RunId {
        std::fs::read_to_string(self.git.dir.join("next-id"))
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(1)
    }

    fn drop_runs(&self, ids: &[RunId]) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let refs: String = ids
            .iter()
            .map(|id| format!("delete refs/runs/{id}/before\ndelete refs/runs/{id}/after\n"))
            .collect();
        self.git
            .run_with_input(&["update-ref", "--stdin"], Some(refs.as_bytes()))?;
        for id in ids {
            let _removed = std::fs::remove_file(self.git.dir.join("runs").join(format!("{id}.json")));
        }
        Ok(())
    }

    /// Packs the store and deletes the objects no run holds any more, in a process of its own that nobody waits
    /// for. Only objects older than a few minutes go, so that a snapshot being taken meanwhile keeps its own.
    fn prune_in_background(&self) {
        let mut gc = self.git.command();
        gc.args(["gc", "--quiet", "--prune=10.minutes.ago"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if let Ok(mut child) = gc.spawn() {
            // Reaped by a thread, so that a long-lived process leaves no zombie; a short-lived one leaves it to init.
            std::thread::spawn(move || child.wait());
        }
    }
}

/// The place of the work tree whose ignore rules apply to `root`: the nearest directory at or above it holding
/// `.git` (so that a `.gitignore` above the root counts), else the root itself.
pub(crate) fn work_tree_of(root: &Path) -> PathBuf {
    root.ancestors()
        .find(|dir| agent_fs_sandbox::exists_no_follow(&dir.join(".git")))
        .unwrap_or(root)
        .to_path_buf()
}

/// The store's configuration: what makes snapshots cheap (index version 4), exact (no line ending conversion,
/// links as links, case as it is, every name Linux allows) and inert (no monitor program, no automatic gc). The
/// snapshot lists the files itself (the `walk` module), so git reads no ignore rule and no untracked cache.
const CONFIG: &str = "[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tfilemode = true\n\tsymlinks = true\n\
     \tignorecase = false\n\tautocrlf = false\n\tsafecrlf = false\n\tuntrackedCache = false\n\
     \tfsmonitor = false\n\tprotectNTFS = false\n\tlogAllRefUpdates = false\n\tbigFileThreshold = 16m\n\
     [index]\n\tversion = 4\n[gc]\n\tauto = 0\n\tautoDetach = false\n";

/// The `.gitignore` of the directory of the stores: everything in it stays out of git.
const STORES_GITIGNORE: &str =
    "# Written by agent-guard: the undo stores hold copies of ignored files; never commit them.\n*\n";

/// Attributes for every path, above the project's own `.gitattributes`: content is stored as it is on disk,
/// never converted or filtered.
const ATTRIBUTES: &str = "* -text -filter -ident !eol !working-tree-encoding\n";

/// The store's ignore rules, above the project's, besides the secret files ([`secret_lines`]): agent-guard's own
/// directory, `node_modules`, and the directories tagged as caches (`CACHEDIR.TAG`, as in cargo's `target/`) at
/// the root.
pub(crate) fn exclude_lines(root: &Path, prefix: &Path) -> Vec<String> {
    exclude_lines_of(root, prefix, None)
}

/// [`exclude_lines`] for a check of what lies at or below the root's entry `only` alone (`None`: the whole root):
/// a tagged directory's line is anchored at the root and matches nothing outside that directory, so only
/// `only`'s own line can change the check's answer, and only `only` is looked at (not every directory of the
/// root, each asked for its tag).
pub(crate) fn exclude_lines_of(root: &Path, prefix: &Path, only: Option<&std::ffi::OsStr>) -> Vec<String> {
    let mut lines = vec![
        "# written by agent-guard: what a snapshot never holds".to_owned(),
        format!("{AGENT_DIR}/"),
        "node_modules/".to_owned(),
    ];
    let tagged_line = |name: &std::ffi::OsStr| {
        let path = prefix.join(name);
        format!("/{}/", escape_ignore(&path.to_string_lossy()))
    };
    if let Some(name) = only {
        // As a listing's entry type says: the entry itself a directory, not a link to one.
        let entry = root.join(name);
        if std::fs::symlink_metadata(&entry).is_ok_and(|meta| meta.is_dir())
            && entry.join("CACHEDIR.TAG").is_file()
        {
            lines.push(tagged_line(name));
        }
    } else if let Ok(entries) = std::fs::read_dir(root) {
        let mut tagged: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|entry| entry.path().join("CACHEDIR.TAG").is_file())
            .map(|entry| tagged_line(&entry.file_name()))
            .collect();
        tagged.sort();
        lines.extend(tagged);
    }
    lines
}

/// Appends `path` and a NUL to `list` (`git update-index -z --stdin`).
pub(crate) fn push_path(list: &mut Vec<u8>, path: &Path) {
    list.extend_from_slice(path.as_os_str().as_bytes());
    list.push(0);
}

/// Whether git can take what is at `path` into a snapshot: a link (its target is its content), or a regular file
/// this process can open for reading. Not a file it may not read, nor a FIFO, a socket or a device at a name that
/// held a file: `git update-index` stops at each of them.
pub(crate) fn readable(path: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt as _;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if meta.file_type().is_symlink() {
        return true;
    }
    // Opened, not asked (`access`): what counts is what git's own `open` will meet (ACLs, security modules, a
    // file system's own rules). Without following a link and without blocking, in case the name changed since.
    meta.is_file()
        && std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
            .open(path)
            .and_then(|file| file.metadata())
            .is_ok_and(|meta| meta.is_file())
}

/// Whether `path` (relative to `work_tree`) is a file or a link, reached through directories only (git refuses
/// a path below a link, and a directory is no entry of a snapshot).
pub(crate) fn still_a_file(work_tree: &Path, path: &Path) -> bool {
    let mut at = work_tree.to_path_buf();
    let mut components = path.components().peekable();
    while let Some(component) = components.next() {
        at.push(component);
        let Ok(meta) = std::fs::symlink_metadata(&at) else {
            return false;
        };
        let last = components.peek().is_none();
        // A link is no directory: `is_dir` of what `symlink_metadata` says is false for it.
        if last == meta.is_dir() {
            return false;
        }
    }
    true
}

/// What tells whether git rewrote the index: its inode (git replaces the file), time and size.
fn stamp(index: &Path) -> Option<(u64, i64, i64, u64)> {
    let meta = std::fs::symlink_metadata(index).ok()?;
    Some((meta.ino(), meta.mtime(), meta.mtime_nsec(), meta.size()))
}

/// The secret files by name as ignore lines (a snapshot holding them would be a copy of the secrets in a new
/// place; the sandbox cannot change them anyway), and the names among them that hold no secret as `!` lines, in
/// lower case: the walk matches them against each path in lower case (`Rules::with_folded`).
pub(crate) fn secret_lines() -> Vec<String> {
    let (secrets, not_secret) = agent_fs_sandbox::ProtectedPaths::default_secret_files();
    secrets
        .iter()
        .filter_map(|pattern| ignore_line(pattern))
        .chain(
            not_secret
                .iter()
                .filter_map(|pattern| ignore_line(pattern))
                .map(|line| format!("!{line}")),
        )
        .collect()
}

/// A default secret pattern as a line of git's ignore syntax, matched at any depth, in ASCII lower case (matched
/// against paths in lower case: without regard to ASCII case, as the sandbox matches it); `None` for an absolute
/// pattern (outside any root).
fn ignore_line(pattern: &str) -> Option<String> {
    if pattern.starts_with('/') {
        return None;
    }
    let lower = pattern.to_ascii_lowercase();
    Some(if pattern.contains('/') {
        format!("**/{lower}")
    } else {
        lower
    })
}

/// `text` with git's ignore-pattern characters escaped, so that it matches itself only.
fn escape_ignore(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '!' | '#') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// Writes `text` to `path` unless it already holds it.
fn write_if_changed(path: &Path, text: &str) -> Result<()> {
    if std::fs::read(path).is_ok_and(|old| old == text.as_bytes()) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| UndoError::io(parent, e))?;
    }
    std::fs::write(path, text).map_err(|e| UndoError::io(path, e))
}

/// The 64-bit FNV-1a hash: a store's name, stable across builds and versions.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
