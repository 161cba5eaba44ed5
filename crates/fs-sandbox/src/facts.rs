//! File-system facts kept for one batch of decisions.
//!
//! Deciding a line resolves the same few paths again and again (the working directory, its parents, the files
//! a command names), each with system calls. A caller that decides a batch of calls read together, with nothing
//! run between them (`agent-guard check --jsonl`: no command runs while a batch is decided), may let each thread
//! keep what it learned for the rest of that batch: [`with_batch_facts`] keeps them while its closure runs and
//! forgets them when it returns (or unwinds). A decision on its own is such a batch, of one call (agent-decide
//! keeps each decision's facts until it ends). Outside it nothing is kept and every question reaches the kernel.
//! Only answers that describe the file system are kept (a path exists, is a directory, a link, or is missing;
//! a path resolves without links); an error of any other kind is asked again each time.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// What `lstat` said of a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lstat {
    /// A symbolic link.
    Link,
    /// A directory.
    Dir,
    /// Anything else that exists.
    Other,
    /// Nothing there (`ENOENT`).
    Missing,
    /// A component above it is not a directory (`ENOTDIR`).
    NotADirectory,
}

/// The facts of one batch, per thread, by each path as it was spelled: `dir/` and `dir` are different questions
/// to the kernel (the first follows a link and must be a directory), so paths are compared byte for byte, not
/// component by component as `Path`'s equality does.
///
/// Hashed with foldhash, seeded per process (the paths come from commands).
#[derive(Default)]
struct Facts {
    lstat: HashMap<OsString, Lstat, Hasher>,
    /// Whether the kernel opens a path without following a link (`openat2` with `RESOLVE_NO_SYMLINKS`).
    no_links: HashMap<OsString, NoLinks, Hasher>,
    /// `fs::canonicalize`'s answers that were paths, or the error code that said the path is missing.
    canonical: HashMap<OsString, Result<PathBuf, i32>, Hasher>,
    /// The entries of each directory listed, with their types where they could be told, and how many were asked
    /// for.
    listings: HashMap<OsString, (usize, Rc<[Entry]>), Hasher>,
    /// The text of each file [`small_file`] read, or `None` where there was none to read, and the most it would
    /// read.
    texts: HashMap<OsString, (u64, Option<Rc<str>>), Hasher>,
    /// The answers of [`remembered`], by question and path.
    answers: HashMap<(&'static str, OsString), bool, Hasher>,
}

type Hasher = foldhash::fast::RandomState;

thread_local! {
    static FACTS: RefCell<Option<Facts>> = const { RefCell::new(None) };
}

/// Runs `decide` with this thread keeping the file-system facts it learns until `decide` returns: only for a batch
/// of decisions between which nothing runs that could change the file system (see the module docs). Nested calls
/// share the outer batch's facts.
pub fn with_batch_facts<R>(decide: impl FnOnce() -> R) -> R {
    /// Forgets the facts when the batch ends, a panic included.
    struct Forget;
    impl Drop for Forget {
        fn drop(&mut self) {
            FACTS.with(|facts| facts.borrow_mut().take());
        }
    }
    let outer = FACTS.with(|facts| {
        let mut facts = facts.borrow_mut();
        let outer = facts.is_some();
        if !outer {
            *facts = Some(Facts::default());
        }
        outer
    });
    if outer {
        return decide();
    }
    let _forget = Forget;
    decide()
}

/// `lstat` of `path` as a [`Lstat`], kept within a batch; `Err` for any other error (never kept).
pub(crate) fn lstat(path: &Path) -> io::Result<Lstat> {
    if let Some(known) = FACTS.with(|facts| {
        facts
            .borrow()
            .as_ref()
            .and_then(|f| f.lstat.get(path.as_os_str()).copied())
    }) {
        return Ok(known);
    }
    let fact = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Lstat::Link,
        Ok(meta) if meta.is_dir() => Lstat::Dir,
        Ok(_) => Lstat::Other,
        Err(error) if error.kind() == io::ErrorKind::NotFound => Lstat::Missing,
        Err(error) if error.kind() == io::ErrorKind::NotADirectory => Lstat::NotADirectory,
        Err(error) => return Err(error),
    };
    FACTS.with(|facts| {
        if let Some(facts) = facts.borrow_mut().as_mut() {
            facts.lstat.insert(path.as_os_str().to_owned(), fact);
        }
    });
    Ok(fact)
}

/// Whether something exists at `path` itself (a link is not followed), as `fs::symlink_metadata(path).is_ok()`
/// says, kept within a batch ([`with_batch_facts`]).
pub fn exists_no_follow(path: &Path) -> bool {
    matches!(lstat(path), Ok(Lstat::Link | Lstat::Dir | Lstat::Other))
}

/// Whether something exists at `path` itself and is a symbolic link (`Some(true)`) or anything else
/// (`Some(false)`), as `fs::symlink_metadata(path)` says; `None` where it gives an error (nothing there). Kept
/// within a batch ([`with_batch_facts`]).
pub fn link_no_follow(path: &Path) -> Option<bool> {
    match lstat(path) {
        Ok(Lstat::Link) => Some(true),
        Ok(Lstat::Dir | Lstat::Other) => Some(false),
        Ok(Lstat::Missing | Lstat::NotADirectory) | Err(_) => None,
    }
}

/// One entry of a directory as [`list_dir`] gives it: its name, and its type unless that could not be told.
pub(crate) type Entry = (OsString, Option<EntryKind>);

/// What a directory entry is, as the listing says (or, where it does not, `lstat` of the entry): the type
/// `fs::DirEntry::file_type` gives, as far as a walk asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A directory.
    Dir,
    /// A symbolic link (not followed).
    Link,
    /// Anything else: a file, a device, a pipe, a socket.
    Other,
}

impl EntryKind {
    /// Whether the entry is a directory (a link to one is not).
    #[must_use]
    pub fn is_dir(self) -> bool {
        self == Self::Dir
    }

    /// Whether the entry is a symbolic link.
    #[must_use]
    pub fn is_symlink(self) -> bool {
        self == Self::Link
    }

    fn of(kind: fs::FileType) -> Self {
        if kind.is_symlink() {
            Self::Link
        } else if kind.is_dir() {
            Self::Dir
        } else {
            Self::Other
        }
    }
}

/// The bytes of one `getdents64` read: what glibc's `opendir` reads at a time.
const LISTING_BUFFER: usize = 32 << 10;

thread_local! {
    /// The buffer of this thread's directory reads, kept between them (each listing's entries are copied out).
    static LISTING: RefCell<Vec<std::mem::MaybeUninit<u8>>> = const { RefCell::new(Vec::new()) };
}

/// The first `most` entries of `dir` other than `.` and `..` (those read before the first error, as
/// `fs::read_dir` gives them), with their types: the directory opened once and read with `getdents64` into this
/// thread's buffer. `fs::read_dir` asked glibc's `opendir`, which also asks `fstat` and allocates its own buffer for
/// every directory. An entry whose type the listing does not give (`DT_UNKNOWN`) is asked with `lstat`, as
/// `fs::DirEntry::file_type` does.
fn read_listing(dir: &Path, most: usize) -> Option<Vec<Entry>> {
    use rustix::fs::{CWD, FileType, Mode, OFlags, RawDir};
    use std::os::unix::ffi::OsStrExt as _;
    // The flags of glibc's `opendir`.
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::DIRECTORY;
    let fd = rustix::fs::openat(CWD, dir, flags, Mode::empty()).ok()?;
    let read = |buffer: &mut Vec<std::mem::MaybeUninit<u8>>| {
        if buffer.len() < LISTING_BUFFER {
            buffer.resize(LISTING_BUFFER, std::mem::MaybeUninit::uninit());
        }
        let mut entries = Vec::new();
        let mut raw = RawDir::new(&fd, buffer.as_mut_slice());
        while entries.len() < most {
            let Some(Ok(entry)) = raw.next() else { break };
            let name = entry.file_name().to_bytes();
            // glibc's `readdir` passes over an entry without an inode number (a deleted one).
            if name == b"." || name == b".." || entry.ino() == 0 {
                continue;
            }
            let name = std::ffi::OsStr::from_bytes(name).to_os_string();
            let kind = match entry.file_type() {
                FileType::Directory => Some(EntryKind::Dir),
                FileType::Symlink => Some(EntryKind::Link),
                FileType::Unknown => fs::symlink_metadata(dir.join(&name))
                    .ok()
                    .map(|meta| EntryKind::of(meta.file_type())),
                _ => Some(EntryKind::Other),
            };
            entries.push((name, kind));
        }
        entries
    };
    // A read within a read (none today) gets a buffer of its own.
    Some(LISTING.with(|buffer| match buffer.try_borrow_mut() {
        Ok(mut buffer) => read(&mut buffer),
        Err(_) => read(&mut Vec::new()),
    }))
}

/// The first `most` entries `fs::read_dir(dir)` lists (those it could read), kept within a batch; `None` when
/// the directory cannot be listed (asked again each time). A listing kept for another `most` is not used.
#[expect(
    clippy::type_complexity,
    reason = "the entries' type spelled out: a name for it would be one more export"
)]
pub fn list_dir(dir: &Path, most: usize) -> Option<Rc<[(OsString, Option<EntryKind>)]>> {
    if let Some(known) = FACTS.with(|facts| {
        facts.borrow().as_ref().and_then(|f| {
            f.listings
                .get(dir.as_os_str())
                .filter(|(asked, _)| *asked == most)
                .map(|(_, entries)| Rc::clone(entries))
        })
    }) {
        return Some(known);
    }
    let entries: Rc<[Entry]> = read_listing(dir, most)?.into();
    FACTS.with(|facts| {
        if let Some(facts) = facts.borrow_mut().as_mut() {
            facts
                .listings
                .insert(dir.as_os_str().to_owned(), (most, Rc::clone(&entries)));
        }
    });
    Some(entries)
}

/// The text of the file at `path` (a link followed) where it is a file of at most `most` bytes of UTF-8 text, kept
/// within a batch; `None` where it is missing, not a file, larger or not text. An error of another kind (the file
/// cannot be read) is `None` too, and asked again each time. An answer kept for another `most` is not used.
pub fn small_file(path: &Path, most: u64) -> Option<Rc<str>> {
    if let Some(known) = FACTS.with(|facts| {
        facts.borrow().as_ref().and_then(|f| {
            f.texts
                .get(path.as_os_str())
                .filter(|(asked, _)| *asked == most)
                .map(|(_, text)| text.clone())
        })
    }) {
        return known;
    }
    let text = match fs::metadata(path) {
        Ok(meta) if !meta.is_file() || meta.len() > most => None,
        Ok(_) => match fs::read_to_string(path) {
            Ok(text) => Some(Rc::from(text)),
            Err(error) if error.kind() == io::ErrorKind::InvalidData => None,
            Err(_) => return None,
        },
        Err(error)
            if matches!(
                error.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            None
        }
        Err(_) => return None,
    };
    FACTS.with(|facts| {
        if let Some(facts) = facts.borrow_mut().as_mut() {
            facts
                .texts
                .insert(path.as_os_str().to_owned(), (most, text.clone()));
        }
    });
    text
}

/// What opening a path without following any link (`openat2` with `RESOLVE_NO_SYMLINKS`) gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NoLinks {
    /// It opened: the path exists and no component of it is a link.
    Opens,
    /// `ENOENT`: a component is missing.
    Missing,
    /// Any other error (a link on the way, a component that is no directory, …).
    Fails,
}

/// What `open` (an `openat2` with `RESOLVE_NO_SYMLINKS`) says of `path`, kept within a batch.
pub(crate) fn no_links(path: &Path, open: impl FnOnce(&Path) -> NoLinks) -> NoLinks {
    if let Some(known) = FACTS.with(|facts| {
        facts
            .borrow()
            .as_ref()
            .and_then(|f| f.no_links.get(path.as_os_str()).copied())
    }) {
        return known;
    }
    let answer = open(path);
    FACTS.with(|facts| {
        if let Some(facts) = facts.borrow_mut().as_mut() {
            facts.no_links.insert(path.as_os_str().to_owned(), answer);
        }
    });
    answer
}

/// `fs::canonicalize(path)`, kept within a batch ([`with_batch_facts`]) when it is a path or says that the path
/// is missing (`ENOENT`, `ENOTDIR`, kept with its code so that it reads the same); another error is asked again
/// each time.
///
/// # Errors
/// `fs::canonicalize`'s.
pub fn canonicalize(path: &Path) -> io::Result<PathBuf> {
    if let Some(known) = FACTS.with(|facts| {
        facts
            .borrow()
            .as_ref()
            .and_then(|f| f.canonical.get(path.as_os_str()).cloned())
    }) {
        return known.map_err(io::Error::from_raw_os_error);
    }
    let canonical = fs::canonicalize(path);
    let kept = match &canonical {
        Ok(canonical) => Ok(canonical.clone()),
        Err(error) => match error.raw_os_error() {
            Some(code)
                if matches!(
                    error.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                Err(code)
            }
            _ => return canonical,
        },
    };
    FACTS.with(|facts| {
        if let Some(facts) = facts.borrow_mut().as_mut() {
            facts.canonical.insert(path.as_os_str().to_owned(), kept);
        }
    });
    canonical
}

/// The answer `ask` gives about `path`, kept within a batch under the name of the `question`: only for a question
/// about the file system whose answer depends on nothing but the path and what is on the disk (whether it is a
/// directory, whether it holds a project marker, …), each name always asked with the same `ask`.
pub fn remembered(question: &'static str, path: &Path, ask: impl FnOnce(&Path) -> bool) -> bool {
    let known = FACTS.with(|facts| {
        facts
            .borrow()
            .as_ref()
            .and_then(|f| f.answers.get(&(question, path.as_os_str().to_owned())).copied())
    });
    if let Some(known) = known {
        return known;
    }
    let answer = ask(path);
    FACTS.with(|facts| {
        if let Some(facts) = facts.borrow_mut().as_mut() {
            facts
                .answers
                .insert((question, path.as_os_str().to_owned()), answer);
        }
    });
    answer
}

/// Whether `path` is a directory, as [`Path::is_dir`] says (a link followed), kept within a batch.
pub fn is_dir(path: &Path) -> bool {
    remembered("is_dir", path, Path::is_dir)
}

/// Whether `path` is a file, as [`Path::is_file`] says (a link followed), kept within a batch.
pub fn is_file(path: &Path) -> bool {
    remembered("is_file", path, Path::is_file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_is_what_read_dir_lists() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir(root.join("sub")).unwrap();
        fs::write(root.join("file"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("sub"), root.join("to-sub")).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("dangling")).unwrap();
        // More than one read of the buffer holds.
        for i in 0..1500 {
            fs::write(root.join(format!("{i:04}-{}", "n".repeat(40))), "").unwrap();
        }
        let expected = |most: usize| {
            let mut entries: Vec<(OsString, Option<EntryKind>)> = fs::read_dir(root)
                .unwrap()
                .flatten()
                .take(most)
                .map(|entry| (entry.file_name(), entry.file_type().ok().map(EntryKind::of)))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            entries
        };
        for most in [usize::MAX, 1504, 3, 0] {
            let mut listed = read_listing(root, most).unwrap();
            assert_eq!(listed.len(), expected(most).len());
            if most >= 1504 {
                listed.sort_by(|a, b| a.0.cmp(&b.0));
                assert_eq!(listed, expected(most));
            }
        }
        let kinds: std::collections::HashMap<_, _> =
            read_listing(root, usize::MAX).unwrap().into_iter().collect();
        assert_eq!(kinds[std::ffi::OsStr::new("sub")], Some(EntryKind::Dir));
        assert_eq!(kinds[std::ffi::OsStr::new("to-sub")], Some(EntryKind::Link));
        assert_eq!(kinds[std::ffi::OsStr::new("dangling")], Some(EntryKind::Link));
        assert_eq!(kinds[std::ffi::OsStr::new("file")], Some(EntryKind::Other));
        assert!(read_listing(&root.join("file"), 8).is_none());
        assert!(read_listing(&root.join("missing"), 8).is_none());
    }

    #[test]
    fn facts_are_kept_within_a_batch_and_forgotten_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        with_batch_facts(|| {
            assert!(!exists_no_follow(&file));
            std::fs::write(&file, "x").unwrap();
            // Within the batch the first answer stands: nothing is run between its decisions.
            assert!(!exists_no_follow(&file));
        });
        // Outside a batch every question reaches the file system.
        assert!(exists_no_follow(&file));
        std::fs::remove_file(&file).unwrap();
        assert!(!exists_no_follow(&file));
    }

    #[test]
    fn a_small_file_is_read_once_within_a_batch() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config");
        let missing = dir.path().join("missing");
        std::fs::write(&file, "[core]\n").unwrap();
        with_batch_facts(|| {
            assert_eq!(small_file(&file, 64).as_deref(), Some("[core]\n"));
            assert_eq!(small_file(&missing, 64), None);
            std::fs::write(&file, "[user]\n").unwrap();
            std::fs::write(&missing, "x").unwrap();
            // Within the batch the first answers stand: nothing is run between its decisions.
            assert_eq!(small_file(&file, 64).as_deref(), Some("[core]\n"));
            assert_eq!(small_file(&missing, 64), None);
            assert!(list_dir(dir.path(), 1).is_some_and(|entries| entries.len() == 1));
            // A listing kept for fewer entries is not the answer for more.
            assert!(list_dir(dir.path(), 8).is_some_and(|entries| entries.len() == 2));
        });
        assert_eq!(small_file(&file, 64).as_deref(), Some("[user]\n"));
        assert_eq!(small_file(&missing, 64).as_deref(), Some("x"));
        assert_eq!(small_file(&file, 3), None);
        assert_eq!(small_file(dir.path(), 64), None);
    }

    #[test]
    fn a_final_slash_is_another_question() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let mut slashed = file.clone().into_os_string();
        slashed.push("/");
        let slashed = PathBuf::from(slashed);
        with_batch_facts(|| {
            assert!(is_file(&file));
            // `f/` names a directory that `f` is not.
            assert!(!is_file(&slashed));
            assert!(canonicalize(&file).is_ok());
            assert!(canonicalize(&slashed).is_err());
        });
        // A missing path's answer is kept within the batch too, and reads as the kernel's.
        let missing = dir.path().join("m");
        let alone = canonicalize(&missing).unwrap_err().to_string();
        with_batch_facts(|| {
            assert_eq!(canonicalize(&missing).unwrap_err().to_string(), alone);
            std::fs::write(&missing, "x").unwrap();
            assert_eq!(canonicalize(&missing).unwrap_err().to_string(), alone);
        });
        assert!(canonicalize(&missing).is_ok());
    }

    #[test]
    fn a_panic_ends_the_batch() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        let caught = std::panic::catch_unwind(|| {
            with_batch_facts(|| {
                assert!(!exists_no_follow(&file));
                panic!("a decision panicked");
            })
        });
        assert!(caught.is_err());
        std::fs::write(&file, "x").unwrap();
        assert!(exists_no_follow(&file));
    }
}
