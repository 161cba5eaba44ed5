//! The files a snapshot holds: a walk of the root that follows the ignore rules as they were when the run began,
//! and treats a nested repository's files as files of the root.
//!
//! `git add --all` reads each `.gitignore` from the disk as it is when the snapshot is taken, so the snapshot
//! after a run would follow the rules the run itself wrote: a run that writes `*` into a `.gitignore` (or a
//! `CACHEDIR.TAG` into a directory) would hide what it created from its own snapshot, and the rule file with
//! it. git also stops at a nested repository (a directory with its own `.git`) and records only its commit, so
//! what a run changes in a vendored checkout or a submodule could not be taken back. The walk here reads the
//! rules once, before the run (`Rules::capture`), and the snapshot after the run uses the same text
//! (`Rules::frozen`); it descends into nested repositories and leaves out only their `.git`.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::index::Stat;

/// The ignore rules a run's snapshots follow: agent-guard's own (secrets, its own directory, caches), the
/// project's `.git/info/exclude`, and the text of each `.gitignore` read, by its directory relative to the work
/// tree. Once captured, the same rules serve the snapshot after the run, whatever the run wrote.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Rules {
    /// agent-guard's lines, which come before every project rule: a secret is left out whatever a `.gitignore`
    /// says (a `!.env` in the project does not put a secret into the store).
    own: Vec<String>,
    /// agent-guard's lines that hold in any ASCII case (the secret files, and the names among them that hold no
    /// secret as `!` lines), in lower case: they are matched against each path in lower case. As part of `own`
    /// they come after its other lines, which all ignore, and which no `!` line of these names.
    folded: Vec<String>,
    /// The lines of the project's `.git/info/exclude`, below every `.gitignore`.
    exclude: Vec<u8>,
    /// Each `.gitignore` read, by its directory relative to the work tree.
    files: BTreeMap<PathBuf, Vec<u8>>,
    /// Whether the rules were captured: a walk then reads no rule from the disk.
    #[serde(skip)]
    frozen: bool,
    /// The directories the project ignores that are the highest on their paths (relative to the work tree), as
    /// the walk that captured the rules found them: held (`true`), or left out (a marked cache or environment, or
    /// one too large). A walk under frozen rules follows these, so that the snapshot after a command holds the same
    /// of them as the one before (a command that empties a large one does not bring its files in as new ones, which
    /// taking the run back would delete); a change watcher's snapshot walks again where one no longer holds.
    #[serde(default)]
    tops: BTreeMap<PathBuf, bool>,
    /// `own` and `folded` compiled by the first walk for its work tree (the compilation is most of the walk of a
    /// small tree), kept for the walk after the run.
    #[serde(skip)]
    own_matcher: Option<Arc<Own>>,
}

/// Rules are the same when their texts are: the compiled matcher kept beside them is not compared.
impl PartialEq for Rules {
    fn eq(&self, other: &Self) -> bool {
        self.own == other.own
            && self.folded == other.folded
            && self.exclude == other.exclude
            && self.files == other.files
            && self.tops == other.tops
            && self.frozen == other.frozen
    }
}

impl Eq for Rules {}

/// agent-guard's `own` and `folded` lines compiled for `work_tree`. The matcher depends on nothing else (it reads
/// no file), so the last few compiled are kept for the process: a decision that looks for what a snapshot leaves
/// out compiles the same lines for the same work tree as the decision before it.
fn compiled_own(work_tree: &Path, own: &[String], folded: &[String]) -> Option<Arc<Own>> {
    /// How many compiled matchers are kept: one per work tree a process decides in, a few.
    const KEPT: usize = 8;
    type Kept = Vec<(PathBuf, Vec<String>, Vec<String>, Arc<Own>)>;
    static COMPILED: Mutex<Kept> = Mutex::new(Vec::new());
    let same = |(tree, o, f, _): &&(PathBuf, Vec<String>, Vec<String>, Arc<Own>)| {
        tree == work_tree && o == own && f == folded
    };
    if let Some((.., known)) = COMPILED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .find(same)
    {
        return Some(Arc::clone(known));
    }
    let compile = |lines: &[String]| {
        let mut builder = GitignoreBuilder::new(work_tree);
        for line in lines {
            let _skipped = builder.add_line(None, line);
        }
        builder.build().ok()
    };
    let compiled = Arc::new(Own {
        exact: compile(own)?,
        folded: compile(folded)?,
    });
    let mut kept = COMPILED.lock().unwrap_or_else(PoisonError::into_inner);
    if kept.len() >= KEPT {
        kept.remove(0);
    }
    kept.push((
        work_tree.to_path_buf(),
        own.to_vec(),
        folded.to_vec(),
        Arc::clone(&compiled),
    ));
    Some(compiled)
}

/// agent-guard's own lines, compiled: those matched as they are, and those matched in any ASCII case.
#[derive(Debug)]
struct Own {
    exact: Gitignore,
    folded: Gitignore,
}

impl Own {
    /// Whether agent-guard's own lines leave out `path`, which is `relative` to the work tree.
    fn ignores(&self, path: &Path, relative: &Path, is_dir: bool) -> bool {
        self.exact.matched(path, is_dir).is_ignore() || {
            let lower = std::ffi::OsString::from_vec(relative.as_os_str().as_bytes().to_ascii_lowercase());
            self.folded.matched(Path::new(&lower), is_dir).is_ignore()
        }
    }
}

impl Rules {
    /// agent-guard's own lines compiled for `work_tree`: the matcher an earlier walk of the same work tree
    /// compiled, else compiled now and kept.
    fn own_matcher(&mut self, work_tree: &Path) -> Option<Arc<Own>> {
        match &self.own_matcher {
            // A matcher is relative to the directory it was built for.
            Some(own) if own.exact.path() == work_tree => Some(Arc::clone(own)),
            _ => {
                let own = compiled_own(work_tree, &self.own, &self.folded);
                self.own_matcher.clone_from(&own);
                own
            }
        }
    }

    /// Rules to be read from the disk by the next walk, which captures them.
    pub(crate) fn capture(own: Vec<String>, project_exclude: Option<&Path>) -> Self {
        Self {
            own,
            folded: Vec::new(),
            exclude: project_exclude
                .and_then(|path| std::fs::read(path).ok())
                .unwrap_or_default(),
            files: BTreeMap::new(),
            tops: BTreeMap::new(),
            frozen: false,
            own_matcher: None,
        }
    }

    /// Whether the walk that captured the rules held the ignored directory `top` (relative to the work tree);
    /// `None` when it did not meet it.
    pub(crate) fn top_held(&self, top: &Path) -> Option<bool> {
        self.tops.get(top).copied()
    }

    /// These rules with agent-guard's `lines` that hold in any ASCII case, written in lower case (see
    /// [`Rules::folded`]).
    pub(crate) fn with_folded(mut self, lines: Vec<String>) -> Self {
        self.folded = lines;
        self.own_matcher = None;
        self
    }

    /// The same rules, for a later walk that must not read any rule from the disk.
    pub(crate) fn frozen(&self) -> Self {
        Self {
            frozen: true,
            ..self.clone()
        }
    }

    /// Whether the rules were captured (a walk reads none from the disk).
    pub(crate) fn is_frozen(&self) -> bool {
        self.frozen
    }

    /// agent-guard's own lines.
    pub(crate) fn own(&self) -> &[String] {
        &self.own
    }

    /// The lines of the project's `.git/info/exclude`.
    pub(crate) fn exclude(&self) -> &[u8] {
        &self.exclude
    }

    /// Whether a `.gitignore` was read at `dir` or below it (relative to the work tree): a directory moved away or
    /// deleted takes such a rule with it, which no event of the rule file reports.
    pub(crate) fn has_rules_under(&self, dir: &Path) -> bool {
        self.files.keys().any(|known| known.starts_with(dir))
    }

    /// The `.gitignore` text of each directory above the root (`prefix` is the root below the work tree): rules
    /// of directories no watcher of the root sees.
    pub(crate) fn above(&self, prefix: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        self.files
            .iter()
            .filter(|(dir, _)| prefix.starts_with(dir) && dir.as_path() != prefix)
            .map(|(dir, text)| (dir.clone(), text.clone()))
            .collect()
    }

    /// The `.gitignore` texts of the directories above the root as they are now on the disk.
    pub(crate) fn above_on_disk(work_tree: &Path, prefix: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut found = BTreeMap::new();
        let mut dir = PathBuf::new();
        for component in prefix.components() {
            if let Ok(text) = std::fs::read(work_tree.join(&dir).join(".gitignore")) {
                found.insert(dir.clone(), text);
            }
            dir.push(component);
        }
        found
    }

    /// A hash of what decides the ignore rules of the root and that no watcher of the root sees: agent-guard's
    /// lines, `.git/info/exclude` and the `.gitignore` of each directory above the root.
    pub(crate) fn fingerprint_of(own: &[String], exclude: &[u8], above: &BTreeMap<PathBuf, Vec<u8>>) -> u64 {
        let mut bytes = Vec::new();
        for line in own {
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(0);
        }
        bytes.push(1);
        bytes.extend_from_slice(exclude);
        bytes.push(1);
        for (dir, text) in above {
            bytes.extend_from_slice(dir.as_os_str().as_bytes());
            bytes.push(0);
            bytes.extend_from_slice(text);
            bytes.push(1);
        }
        bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
            (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
        })
    }
}

/// Whether single paths are ignored under captured rules, as a walk from the root would find them: a path is
/// left out when it or one of its directories below the root is ignored (or is named `.git`). Keeps the
/// matcher of each directory it needed.
pub(crate) struct Checker {
    work_tree: PathBuf,
    prefix: PathBuf,
    own: Option<Arc<Own>>,
    exclude: Option<Gitignore>,
    files: BTreeMap<PathBuf, Vec<u8>>,
    matchers: std::collections::HashMap<PathBuf, Option<Arc<Gitignore>>>,
    held: Held,
}

impl Checker {
    /// A checker of the paths below `prefix` (the root, relative to `work_tree`) under `rules`.
    pub(crate) fn new(work_tree: &Path, prefix: &Path, rules: &Rules) -> Self {
        let own = rules.clone().own_matcher(work_tree);
        Self {
            work_tree: work_tree.to_path_buf(),
            prefix: prefix.to_path_buf(),
            own,
            exclude: matcher(work_tree, &rules.exclude),
            files: rules.files.clone(),
            matchers: std::collections::HashMap::new(),
            held: Held::following(rules),
        }
    }

    /// Records the `.gitignore` text of `dir` (relative to the work tree) as read now.
    pub(crate) fn learn(&mut self, dir: &Path, text: Vec<u8>) {
        self.matchers.remove(dir);
        self.files.insert(dir.to_path_buf(), text);
    }

    /// Whether a `.gitignore` was learned or given at `dir` or below it.
    pub(crate) fn has_rules_under(&self, dir: &Path) -> bool {
        self.files.keys().any(|known| known.starts_with(dir))
    }

    fn matcher_of(&mut self, dir: &Path) -> Option<Arc<Gitignore>> {
        if let Some(known) = self.matchers.get(dir) {
            return known.clone();
        }
        let made = self
            .files
            .get(dir)
            .and_then(|text| matcher(&self.work_tree.join(dir), text))
            .map(Arc::new);
        self.matchers.insert(dir.to_path_buf(), made.clone());
        made
    }

    /// Whether `path` (relative to the work tree, below the root) is left out of a walk: it or a directory
    /// between the root and it is left out ([`Place::Out`]) or named `.git`. `is_dir` says what `path` itself is.
    pub(crate) fn ignored(&mut self, path: &Path, is_dir: bool) -> bool {
        matches!(self.place(path, is_dir, true), Place::Out { .. })
    }

    /// Whether a directory is one a change watcher follows: one a walk may enter, or one the project ignores
    /// that is left out only for the number of entries it holds now (removing some of them brings it into the
    /// snapshots, whose next one must see that).
    pub(crate) fn followed(&mut self, path: &Path) -> bool {
        !matches!(self.place(path, true, false), Place::Out { .. })
    }

    /// The highest file or directory on the way to `path` (relative to the work tree) that the project ignores,
    /// and whether it is a directory, when none above it is left out by name (agent-guard's lines, a build output,
    /// `.git`).
    pub(crate) fn top_ignored(&mut self, path: &Path, is_dir: bool) -> Option<(PathBuf, bool)> {
        match self.place(path, is_dir, false) {
            Place::Ignored(top) => {
                let top_is_dir = top != path || is_dir;
                Some((top, top_is_dir))
            }
            _ => None,
        }
    }

    /// Where `path` (relative to the work tree, below the root) stands for a walk: held as a file the project keeps,
    /// held below a directory the project ignores (the highest such directory, relative to the work tree), or
    /// left out. Without `sizes`, a directory the project ignores counts as held whatever it holds.
    pub(crate) fn place(&mut self, path: &Path, is_dir: bool, sizes: bool) -> Place {
        let Ok(below) = path.strip_prefix(&self.prefix) else {
            return Place::Out { large: false };
        };
        let below = below.to_path_buf();
        let mut stack: Stack = Vec::new();
        let mut dir = PathBuf::new();
        for component in self.prefix.clone().components() {
            stack.push(self.matcher_of(&dir));
            dir.push(component);
        }
        let mut place = Place::Kept;
        let mut components = below.components().peekable();
        while let Some(component) = components.next() {
            let last = components.peek().is_none();
            if is_dot_git(component.as_os_str()) {
                return Place::Out { large: false };
            }
            stack.push(self.matcher_of(&dir));
            dir.push(component);
            let walker = Walker {
                work_tree: &self.work_tree,
                own: self.own.as_deref(),
                exclude: self.exclude.as_ref(),
                source: &Source::Frozen(&self.files),
                held: sizes.then_some(&self.held),
            };
            let under_ignored = matches!(place, Place::Ignored(_));
            match walker.seen(
                &self.work_tree.join(&dir),
                &dir,
                !last || is_dir,
                &stack,
                under_ignored,
            ) {
                Seen::Kept => {}
                Seen::Ignored if !under_ignored => place = Place::Ignored(dir.clone()),
                Seen::Ignored => {}
                Seen::Out { large } => return Place::Out { large },
            }
        }
        place
    }
}

/// Where a path stands for a snapshot ([`Checker::place`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// Held: no ignore rule leaves it out.
    Kept,
    /// Held although the project ignores it or a directory above it: the highest such directory, relative to the
    /// work tree.
    Ignored(PathBuf),
    /// Left out: by agent-guard's own lines, as a build output, a cache or an environment a tool makes again, as
    /// `.git`, or (`large`) below a directory the project ignores that holds more than [`HELD_IGNORED_ENTRIES`].
    Out { large: bool },
}

/// How a walk takes one entry ([`Walker::seen`]).
enum Seen {
    Kept,
    Ignored,
    Out { large: bool },
}

/// How many files and directories a directory the project ignores may hold for the snapshots to hold it. What a
/// project keeps out of git is often its most precious data (a database, exports, uploads, notes), which no build
/// makes again: the snapshots hold it as they hold the rest, so that a command that removes it, by any code, can
/// be taken back. A larger one (a data set, a download) is left out whole, as a build output is.
pub const HELD_IGNORED_ENTRIES: usize = 5_000;

/// How many bytes an ignored file, or the files of an ignored directory together, may hold for the snapshots to
/// hold it: each snapshot that finds it changed hashes and stores it again (a development database that every
/// test run writes), so a larger one is left out, as before a file the project ignores was.
pub const HELD_IGNORED_BYTES: u64 = 16 << 20;

/// The files that mark a directory as one a tool makes again, which a snapshot leaves out when the project
/// ignores it: a cache's tag, a Python environment's `pyvenv.cfg`, a conda environment's `conda-meta`.
const REMADE_MARKS: &[&str] = &[agent_tool_traits::CACHE_TAG, "pyvenv.cfg", "conda-meta"];

/// Whether each directory the project ignores that is the highest on its path is held (by its path relative to the
/// work tree): as the captured rules say, else as found now.
pub(crate) struct Held {
    /// What the walk that captured the rules found, followed under frozen rules.
    fixed: BTreeMap<PathBuf, bool>,
    /// What was found now: each directory is looked at once (its size read through a look at up to
    /// [`HELD_IGNORED_ENTRIES`] entries).
    found: Mutex<std::collections::HashMap<PathBuf, (Top, bool)>>,
}

/// What a directory the project ignores is to a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Top {
    /// Held, as the project's other files are.
    Held,
    /// Left out: it holds one of [`REMADE_MARKS`] (or the captured rules left it out).
    Marked,
    /// Left out: it holds more than [`HELD_IGNORED_ENTRIES`] entries.
    Large,
}

impl Held {
    /// What walks under `rules` follow: their captured directories when they are frozen, none else.
    fn following(rules: &Rules) -> Self {
        Self {
            fixed: if rules.frozen {
                rules.tops.clone()
            } else {
                BTreeMap::new()
            },
            found: Mutex::default(),
        }
    }

    /// What the ignored file or directory `relative` (at `absolute`) is to a snapshot.
    fn top(&self, absolute: &Path, relative: &Path, is_dir: bool) -> Top {
        if let Some(held) = self.fixed.get(relative) {
            return if *held { Top::Held } else { Top::Marked };
        }
        if let Some(known) = self
            .found
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(relative)
        {
            return known.0;
        }
        let top = Top::of(absolute, is_dir);
        self.found
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(relative.to_path_buf(), (top, is_dir));
        top
    }

    /// What was found now, as the rules keep it: every directory, and the files left out (a file not kept is
    /// held, as it would be found now).
    fn into_found(self) -> BTreeMap<PathBuf, bool> {
        self.found
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
            .into_iter()
            .filter(|(_, (top, is_dir))| *is_dir || *top != Top::Held)
            .map(|(path, (top, _))| (path, top == Top::Held))
            .collect()
    }
}

impl Top {
    /// What the ignored file or directory at `path` (absolute) is to a snapshot now.
    pub(crate) fn of(path: &Path, is_dir: bool) -> Self {
        if !is_dir {
            // A file that is not there holds nothing.
            return if std::fs::symlink_metadata(path).map_or(true, |meta| meta.len() <= HELD_IGNORED_BYTES) {
                Self::Held
            } else {
                Self::Large
            };
        }
        if REMADE_MARKS
            .iter()
            .any(|mark| std::fs::symlink_metadata(path.join(mark)).is_ok())
        {
            Self::Marked
        } else if within(path, HELD_IGNORED_ENTRIES, HELD_IGNORED_BYTES) {
            Self::Held
        } else {
            Self::Large
        }
    }
}

/// Whether the directory at `path` holds at most `entries` files and directories and `bytes` bytes of files, not
/// counting a `.git`.
fn within(path: &Path, entries: usize, bytes: u64) -> bool {
    let mut seen = 0usize;
    let mut size = 0u64;
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(listed) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in listed.filter_map(Result::ok) {
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if meta.is_dir() && is_dot_git(&entry.file_name()) {
                continue;
            }
            seen += 1;
            if !meta.is_dir() {
                size = size.saturating_add(meta.len());
            }
            if seen > entries || size > bytes {
                return false;
            }
            if meta.is_dir() {
                pending.push(entry.path());
            }
        }
    }
    true
}

/// Where a walk's `.gitignore` texts come from: the disk, each text kept as it is read (shared by the walk's
/// threads), or the texts captured before.
enum Source<'a> {
    Disk(Mutex<BTreeMap<PathBuf, Vec<u8>>>),
    Frozen(&'a BTreeMap<PathBuf, Vec<u8>>),
}

impl Source<'_> {
    /// The `.gitignore` text of `dir` (relative to the work tree): read and kept when capturing, the kept text
    /// when frozen (none for a directory that had none, or was not walked, before the run).
    fn gitignore_of(&self, work_tree: &Path, dir: &Path) -> Option<Vec<u8>> {
        match self {
            Self::Frozen(files) => files.get(dir).cloned(),
            Self::Disk(kept) => {
                let text = std::fs::read(work_tree.join(dir).join(".gitignore")).ok()?;
                kept.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(dir.to_path_buf(), text.clone());
                Some(text)
            }
        }
    }
}

/// The most threads a walk takes.
const MAX_THREADS: usize = 4;

/// A matcher for the lines of `text`, relative to `dir`; lines git would not read as patterns are skipped.
fn matcher(dir: &Path, text: &[u8]) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(dir);
    let mut any = false;
    for line in String::from_utf8_lossy(text).lines() {
        if builder.add_line(None, line).is_ok() {
            any = true;
        }
    }
    any.then(|| builder.build().ok()).flatten()
}

/// A file a walk found: its path relative to the work tree, its stat data, and whether it has more than one link
/// (a write through another name makes no change event for this one).
pub(crate) type Found = (PathBuf, Option<Stat>, bool);

/// The files (regular files and symbolic links) below `root` that `rules` do not ignore, as paths relative to
/// `work_tree` (an ancestor of `root`, or `root` itself), each with its stat data (from an `lstat` relative to
/// its directory; `None` when that failed). A directory named `.git` (in any case), or a file of
/// that name (a worktree's or submodule's pointer), is never entered or listed; a nested repository's other
/// files are. A directory that cannot be read is left out.
pub(crate) fn files(work_tree: &Path, root: &Path, rules: &mut Rules) -> Vec<Found> {
    let own = rules.own_matcher(work_tree);
    let exclude = matcher(work_tree, &rules.exclude);
    let source = if rules.frozen {
        Source::Frozen(&rules.files)
    } else {
        Source::Disk(Mutex::new(BTreeMap::new()))
    };
    let held = Held::following(rules);
    let walker = Walker {
        work_tree,
        own: own.as_deref(),
        exclude: exclude.as_ref(),
        source: &source,
        held: Some(&held),
    };
    // The rules of each directory from the work tree down to the root's parent apply to the root's files. Below a
    // directory the project ignores (a walk of one the snapshots hold all the same), the root's files are ignored
    // files too: a build output or a marked cache among them is left out.
    let mut stack: Stack = Vec::new();
    let below = root.strip_prefix(work_tree).unwrap_or(Path::new(""));
    let mut dir = PathBuf::new();
    let mut ignored = false;
    for component in below.components() {
        stack.push(
            source
                .gitignore_of(work_tree, &dir)
                .and_then(|text| matcher(&work_tree.join(&dir), &text))
                .map(Arc::new),
        );
        dir.push(component);
        if matches!(
            walker.seen(&work_tree.join(&dir), &dir, true, &stack, ignored),
            Seen::Ignored
        ) {
            ignored = true;
        }
    }
    let found = walker.run(Job { dir, stack, ignored });
    if let Source::Disk(kept) = source {
        rules.files = kept.into_inner().unwrap_or_else(PoisonError::into_inner);
        rules.tops = held.into_found();
    }
    found
}

/// The matchers of the `.gitignore` of each directory from the work tree down to one being walked.
type Stack = Vec<Option<Arc<Gitignore>>>;

/// A directory to walk (relative to the work tree), with the matchers above it, and whether the project ignores it
/// or a directory above it.
struct Job {
    dir: PathBuf,
    stack: Stack,
    ignored: bool,
}

/// The directories waiting to be walked, and how many are being walked.
struct Queue {
    jobs: Vec<Job>,
    busy: usize,
}

/// One walk's fixed parts.
struct Walker<'a> {
    work_tree: &'a Path,
    own: Option<&'a Own>,
    exclude: Option<&'a Gitignore>,
    source: &'a Source<'a>,
    /// The sizes of the ignored directories met; `None` to take each as held whatever it holds.
    held: Option<&'a Held>,
}

impl Walker<'_> {
    /// Walks from `first` on a few threads (the `lstat` of each file is most of a snapshot's time when nothing
    /// changed, and the directories are independent): each takes a directory, lists it, and puts its
    /// subdirectories back for any thread to take. The calling thread walks alone while there is one directory
    /// at a time to walk (a tree without subdirectories starts no thread); the others start once there are two.
    fn run(&self, first: Job) -> Vec<Found> {
        let mut alone = Vec::new();
        let mut jobs = vec![first];
        while jobs.len() == 1 {
            if let Some(job) = jobs.pop() {
                jobs = self.visit(job, &mut alone);
            }
        }
        if jobs.is_empty() {
            return alone;
        }
        let threads = std::thread::available_parallelism()
            .map_or(1, std::num::NonZero::get)
            .clamp(1, MAX_THREADS);
        let queue = Mutex::new(Queue { jobs, busy: 0 });
        let changed = Condvar::new();
        let work = || {
            let mut out = Vec::new();
            loop {
                let job = {
                    let mut held = queue.lock().unwrap_or_else(PoisonError::into_inner);
                    loop {
                        if let Some(job) = held.jobs.pop() {
                            held.busy += 1;
                            break Some(job);
                        }
                        if held.busy == 0 {
                            break None;
                        }
                        held = changed.wait(held).unwrap_or_else(PoisonError::into_inner);
                    }
                };
                let Some(job) = job else {
                    changed.notify_all();
                    return out;
                };
                let more = self.visit(job, &mut out);
                let mut held = queue.lock().unwrap_or_else(PoisonError::into_inner);
                held.jobs.extend(more);
                held.busy -= 1;
                drop(held);
                changed.notify_all();
            }
        };
        std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
            let mut found = alone;
            found.extend(work());
            for helper in helpers {
                if let Ok(more) = helper.join() {
                    found.extend(more);
                }
            }
            found
        })
    }

    /// Lists one directory: its files into `out`, its subdirectories returned to be walked.
    fn visit(&self, job: Job, out: &mut Vec<Found>) -> Vec<Job> {
        let Job {
            dir,
            mut stack,
            ignored,
        } = job;
        let absolute = self.work_tree.join(&dir);
        let Ok(entries) = std::fs::read_dir(&absolute) else {
            return Vec::new();
        };
        // Each file's `lstat` is taken relative to its directory: one name looked up, not the whole path.
        let handle = std::fs::File::open(&absolute).ok();
        stack.push(
            self.source
                .gitignore_of(self.work_tree, &dir)
                .and_then(|text| matcher(&absolute, &text))
                .map(Arc::new),
        );
        let mut subdirs = Vec::new();
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name();
            if is_dot_git(&name) {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let is_dir = kind.is_dir();
            if !(is_dir || kind.is_file() || kind.is_symlink()) {
                continue;
            }
            let path = absolute.join(&name);
            let relative = dir.join(&name);
            let below_ignored = match self.seen(&path, &relative, is_dir, &stack, ignored) {
                Seen::Out { .. } => continue,
                Seen::Kept => ignored,
                Seen::Ignored => true,
            };
            if is_dir {
                subdirs.push(Job {
                    dir: relative,
                    stack: stack.clone(),
                    ignored: below_ignored,
                });
            } else {
                let raw = handle.as_ref().and_then(|handle| {
                    nix::sys::stat::fstatat(
                        handle,
                        name.as_os_str(),
                        nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
                    )
                    .ok()
                });
                let linked = raw.is_some_and(|raw| raw.st_nlink > 1);
                out.push((relative, raw.and_then(|raw| Stat::of_raw(&raw)), linked));
            }
        }
        subdirs
    }

    /// How a walk takes `path`: git's order of precedence, with agent-guard's own rules first (they leave it out),
    /// then the deepest `.gitignore` that says anything about it, then `.git/info/exclude`. What the project
    /// ignores (or lies below a directory it ignores: `under_ignored`) is held all the same, but, of the highest
    /// ignored entries on their paths, a directory with a build output's name and, looked at with sizes, a marked
    /// cache or environment, a directory of more than [`HELD_IGNORED_ENTRIES`] entries and a file or directory of
    /// more than [`HELD_IGNORED_BYTES`] ([`Top`]).
    fn seen(&self, path: &Path, relative: &Path, is_dir: bool, stack: &Stack, under_ignored: bool) -> Seen {
        if self.own.is_some_and(|own| own.ignores(path, relative, is_dir)) {
            return Seen::Out { large: false };
        }
        let mut ignored = under_ignored;
        for matcher in stack.iter().rev().flatten().map(Arc::as_ref).chain(self.exclude) {
            match matcher.matched(path, is_dir) {
                Match::Ignore(_) => {
                    ignored = true;
                    break;
                }
                Match::Whitelist(_) => break,
                Match::None => {}
            }
        }
        // Inside an ignored directory the snapshots hold, everything is held: a `build/` or `out/` there is the
        // user's data as much as the rest.
        if !ignored || under_ignored {
            return if ignored { Seen::Ignored } else { Seen::Kept };
        }
        if is_dir
            && path
                .file_name()
                .is_some_and(agent_tool_traits::is_build_output_name)
        {
            return Seen::Out { large: false };
        }
        match self.held {
            Some(held) => match held.top(path, relative, is_dir) {
                Top::Held => Seen::Ignored,
                Top::Marked => Seen::Out { large: false },
                Top::Large => Seen::Out { large: true },
            },
            None => Seen::Ignored,
        }
    }
}

/// Whether `name` is `.git` in any case: git refuses such a path in its index, and it is a repository's own.
fn is_dot_git(name: &OsStr) -> bool {
    name.as_bytes().eq_ignore_ascii_case(b".git")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_written_after_the_capture_does_not_apply() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path();
        std::fs::write(tree.join(".gitignore"), "out/\n").unwrap();
        std::fs::create_dir_all(tree.join("out")).unwrap();
        std::fs::write(tree.join("out/o"), "").unwrap();
        std::fs::write(tree.join("a"), "").unwrap();
        let mut rules = Rules::capture(Vec::new(), None);
        let names = |walked: Vec<Found>| -> Vec<PathBuf> {
            let mut names: Vec<PathBuf> = walked.into_iter().map(|(path, _, _)| path).collect();
            names.sort();
            names
        };
        let before = names(files(tree, tree, &mut rules));
        assert_eq!(before, vec![PathBuf::from(".gitignore"), PathBuf::from("a")]);
        std::fs::write(tree.join(".gitignore"), "*\n").unwrap();
        std::fs::write(tree.join("b"), "").unwrap();
        let after = names(files(tree, tree, &mut rules.frozen()));
        assert_eq!(
            after,
            vec![
                PathBuf::from(".gitignore"),
                PathBuf::from("a"),
                PathBuf::from("b")
            ]
        );
    }

    #[test]
    fn own_rules_come_before_a_project_s_negation() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path();
        std::fs::write(tree.join(".gitignore"), "!.env\n").unwrap();
        std::fs::write(tree.join(".env"), "").unwrap();
        let mut rules = Rules::capture(vec![".env".to_owned()], None);
        let walked = files(tree, tree, &mut rules);
        assert_eq!(walked.len(), 1);
        assert_eq!(walked[0].0, PathBuf::from(".gitignore"));
        assert!(walked[0].1.is_some());
    }

    /// The lines of `with_folded` leave a path out in any ASCII case, at any depth, after the walk before the
    /// run compiled them; the other own lines only as they are written; a `!` line keeps its names in.
    #[test]
    fn folded_own_rules_hold_in_any_case_and_the_others_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path();
        for path in [
            ".ENV",
            "a/Id_Rsa",
            "b/c/.Aws/Credentials",
            ".Env.Example",
            "keep.txt",
            "node_modules/x",
            "Node_Modules/y",
        ] {
            let path = tree.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let mut rules = Rules::capture(vec!["node_modules/".to_owned()], None).with_folded(vec![
            ".env".to_owned(),
            ".env.*".to_owned(),
            "id_rsa*".to_owned(),
            "**/.aws/credentials".to_owned(),
            "!.env.example".to_owned(),
        ]);
        let names = |walked: Vec<Found>| -> Vec<PathBuf> {
            let mut names: Vec<PathBuf> = walked.into_iter().map(|(path, _, _)| path).collect();
            names.sort();
            names
        };
        let expected = vec![
            PathBuf::from(".Env.Example"),
            PathBuf::from("Node_Modules/y"),
            PathBuf::from("keep.txt"),
        ];
        assert_eq!(names(files(tree, tree, &mut rules)), expected);
        assert_eq!(names(files(tree, tree, &mut rules.frozen())), expected);
    }
}
