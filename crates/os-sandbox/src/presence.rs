//! Which of many paths exist, as `symlink_metadata` says, answered from one read of a directory above many of
//! them. The plan looks for a few hundred names (the tool chains' places, the caches' configuration, the secret
//! places), most of which do not exist, about two hundred of them in the home directory and below it: one read of
//! it answers for every path whose next name it does not hold, where a lookup each costs a system call.

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// How many different names of one directory must be on the way to the paths asked about (the paths' own names
/// in it, and the directories below it that hold others) before it is read instead of each path looked up. A read
/// costs more per entry than a lookup that finds nothing (ext4 sorts a large directory's names by hash as it reads
/// them): with 3, `/etc` and `/dev` were read for a dozen names and the plan took more CPU time than with a lookup
/// each; from 24 only the home directory is read (about 40 names: `.cargo`, `.cache`, `.ssh`, …).
const READ_FROM: usize = 24;

/// The directories read so far, kept for the lookups of one plan: the same directories (the home directory,
/// `~/.cache`, `~/.cargo`) hold the places of several of its lists. Made after the plan's last change to the file
/// system before the command (the caches' layers), and dropped before the command runs.
#[derive(Default)]
pub(crate) struct Presence {
    listings: HashMap<OsString, Listing>,
}

impl Presence {
    /// Whether each of `paths` exists and is a directory, as [`std::fs::symlink_metadata`] says: `None` where it
    /// fails, `Some(is_dir)` where it succeeds (a symbolic link is not followed, and is no directory).
    ///
    /// A directory read before, or with at least [`READ_FROM`] different names on the way to the paths below it,
    /// answers for those paths from one read: a name it lists exists, with the kind of its entry; a path whose
    /// next name it does not list does not (`~/.cargo/env` without `~/.cargo`). A directory that does not exist,
    /// or is no directory, holds nothing (the lookup of a path beneath it fails too). Where a directory cannot be
    /// read for any other reason (no read right, only search: its names can still be looked up), its paths are
    /// looked up one by one.
    pub(crate) fn kinds(&mut self, paths: &[PathBuf]) -> Vec<Option<bool>> {
        let wide = wide_dirs(paths);
        paths.iter().map(|path| self.kind(path, &wide)).collect()
    }

    /// The answer of [`kinds`](Self::kinds) for one path: from the nearest directory above it that was read or is
    /// among `wide` (read now), else from a lookup. A directory above the path's own that does not list the next
    /// name on the way (or does not exist) says the path does not exist: its lookup would fail there. Where it
    /// lists it, the rest of the way may hold a link, so the path is looked up.
    fn kind(&mut self, path: &Path, wide: &HashSet<&OsStr>) -> Option<bool> {
        if !plain(path) {
            return lookup(path);
        }
        for (index, (dir, name)) in steps(path).enumerate() {
            if !self.listings.contains_key(dir) {
                if !wide.contains(dir) {
                    continue;
                }
                self.listings
                    .insert(dir.to_os_string(), Listing::read(Path::new(dir)));
            }
            return match self.listings.get(dir) {
                Some(Listing::Absent) => None,
                Some(Listing::Entries(entries)) => match entries.get(name) {
                    None => None,
                    // The path's own directory: its entry is the path's.
                    Some(is_dir) if index == 0 => Some(*is_dir),
                    Some(_) => lookup(path),
                },
                Some(Listing::Unreadable) | None => lookup(path),
            };
        }
        lookup(path)
    }

    /// Whether each of `paths` exists (a link is not followed), as [`kinds`](Self::kinds) finds it.
    pub(crate) fn existing(&mut self, paths: &[PathBuf]) -> Vec<bool> {
        self.kinds(paths).into_iter().map(|kind| kind.is_some()).collect()
    }
}

/// [`Presence::kinds`] with directories read for these paths alone.
pub(crate) fn kinds(paths: &[PathBuf]) -> Vec<Option<bool>> {
    Presence::default().kinds(paths)
}

/// [`Presence::existing`] with directories read for these paths alone.
pub(crate) fn existing(paths: &[PathBuf]) -> Vec<bool> {
    Presence::default().existing(paths)
}

/// The directories with at least [`READ_FROM`] different names on the way to `paths` (the [`plain`] ones). Paths are taken as bytes: `Path`'s own parsing of components costs more than the lookups
/// it would save.
fn wide_dirs(paths: &[PathBuf]) -> HashSet<&OsStr> {
    let mut names: HashSet<(&OsStr, &OsStr)> = HashSet::new();
    for path in paths.iter().filter(|path| plain(path)) {
        names.extend(steps(path));
    }
    let mut counts: HashMap<&OsStr, usize> = HashMap::new();
    for (dir, _) in names {
        *counts.entry(dir).or_default() += 1;
    }
    counts
        .into_iter()
        .filter(|(_, n)| *n >= READ_FROM)
        .map(|(dir, _)| dir)
        .collect()
}

/// Each directory above the [`plain`] `path`, nearest first, with the name below it on the way to `path`.
fn steps(path: &Path) -> impl Iterator<Item = (&OsStr, &OsStr)> {
    use std::os::unix::ffi::OsStrExt as _;
    let bytes = path.as_os_str().as_bytes();
    let mut end = bytes.len();
    std::iter::from_fn(move || {
        let slash = bytes.get(..end)?.iter().rposition(|b| *b == b'/')?;
        let name = bytes.get(slash + 1..end)?;
        // The root's own slash is its name.
        let dir = bytes.get(..slash.max(1))?;
        end = slash;
        (!name.is_empty()).then(|| (OsStr::from_bytes(dir), OsStr::from_bytes(name)))
    })
}

/// Whether `path` is one whose lookup is that of its names, one after the other, each in the directory before it:
/// an absolute path of plain names, without an empty one (`//`), a `.` or a `..`, that does not end with `/`
/// (which would follow a last link).
fn plain(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt as _;
    let bytes = path.as_os_str().as_bytes();
    let Some(rest) = bytes.strip_prefix(b"/") else {
        return false;
    };
    !rest.is_empty()
        && rest
            .split(|b| *b == b'/')
            .all(|name| !name.is_empty() && name != b"." && name != b"..")
}

fn lookup(path: &Path) -> Option<bool> {
    std::fs::symlink_metadata(path).ok().map(|meta| meta.is_dir())
}

/// One directory, read.
enum Listing {
    /// It does not exist, or is no directory: no path beneath it exists.
    Absent,
    /// Its names, each with whether its entry is a directory.
    Entries(HashMap<OsString, bool>),
    /// It could not be read for another reason: its names are looked up one by one.
    Unreadable,
}

impl Listing {
    fn read(dir: &Path) -> Self {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error)
                if error.kind() == std::io::ErrorKind::NotFound
                    || error.raw_os_error() == Some(libc::ENOTDIR) =>
            {
                return Self::Absent;
            }
            Err(_) => return Self::Unreadable,
        };
        if !exact_names(dir) {
            return Self::Unreadable;
        }
        let mut names = HashMap::new();
        for entry in entries {
            // The kind comes from the directory entry where the file system records it, else from a lookup.
            let Ok((name, kind)) = entry.and_then(|e| Ok((e.file_name(), e.file_type()?))) else {
                return Self::Unreadable;
            };
            names.insert(name, kind.is_dir());
        }
        Self::Entries(names)
    }
}

/// The file systems whose lookups find a name only as written (unless a directory folds case, which
/// [`exact_names`] asks): ext2/3/4, XFS, Btrfs, tmpfs, ramfs, overlayfs, ZFS, F2FS, bcachefs (statfs(2)'s magic
/// numbers).
const EXACT_NAMES: [u64; 9] = [
    0xef53,
    0x5846_5342,
    0x9123_683e,
    0x0102_1994,
    0x8584_58f6,
    0x794c_7630,
    0x2fc1_2fc1,
    0xf2f5_2010,
    0xca45_1a4e,
];

/// Whether a lookup in `dir` finds a name only as its listing holds it. In a directory that folds case (ext4's,
/// F2FS's or tmpfs's `casefold`) or on a file system that ignores case (FAT, SMB, …) a lookup of `.SSH` finds
/// `.ssh`, which a listing does not say: such a directory answers by lookups.
fn exact_names(dir: &Path) -> bool {
    let Ok(file) = std::fs::File::open(dir) else {
        return false;
    };
    let exact_file_system = nix::sys::statfs::fstatfs(&file).is_ok_and(|fs| {
        u64::try_from(fs.filesystem_type().0).is_ok_and(|magic| EXACT_NAMES.contains(&(magic & 0xffff_ffff)))
    });
    exact_file_system && !folds_case(&file)
}

/// Whether the directory open as `file` folds case (`FS_CASEFOLD_FL` among its inode flags). A file system that
/// cannot say has no such flag, and so no directory that folds case.
fn folds_case(file: &std::fs::File) -> bool {
    use std::os::fd::AsRawFd as _;
    const FS_CASEFOLD_FL: libc::c_int = 0x4000_0000;
    let mut flags: libc::c_int = 0;
    #[expect(unsafe_code, reason = "FS_IOC_GETFLAGS has no wrapper in nix")]
    // SAFETY: the descriptor is open for the call's length, and the kernel writes one `int` of flags to the
    // pointer, which points to one.
    let done = unsafe { libc::ioctl(file.as_raw_fd(), libc::FS_IOC_GETFLAGS, &raw mut flags) };
    done == 0 && flags & FS_CASEFOLD_FL != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file system not known to find names only as written (procfs here) is not read: its paths are looked up.
    #[test]
    fn a_file_system_that_may_fold_case_answers_by_lookups() {
        assert!(!exact_names(Path::new("/proc")));
        assert!(matches!(Listing::read(Path::new("/proc")), Listing::Unreadable));
    }

    #[test]
    fn the_steps_of_a_path_go_up_to_the_root() {
        let steps: Vec<(&OsStr, &OsStr)> = steps(Path::new("/a/bc/d")).collect();
        let expected: Vec<(&OsStr, &OsStr)> = [("/a/bc", "d"), ("/a", "bc"), ("/", "a")]
            .into_iter()
            .map(|(dir, name)| (OsStr::new(dir), OsStr::new(name)))
            .collect();
        assert_eq!(steps, expected);
        for (path, is_plain) in [
            ("/a/b", true),
            ("/a", true),
            ("/", false),
            ("a/b", false),
            ("/a//b", false),
            ("/a/./b", false),
            ("/a/../b", false),
            ("/a/b/", false),
            ("/a/..b", true),
        ] {
            assert_eq!(plain(Path::new(path)), is_plain, "{path}");
        }
    }

    /// Every kind of path answers as `symlink_metadata` does: files, directories, links (to a directory, dangling,
    /// and a directory reached through one), names that do not exist, paths beneath a file or a missing
    /// directory, a directory without the read right, and paths that are not plain names.
    #[test]
    fn the_answers_are_those_of_symlink_metadata() {
        use std::os::unix::fs::PermissionsExt as _;
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let dir = base.join("d");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("file"), "x").unwrap();
        std::fs::create_dir(dir.join("sub")).unwrap();
        std::os::unix::fs::symlink(dir.join("sub"), dir.join("link")).unwrap();
        std::os::unix::fs::symlink(base.join("nowhere"), dir.join("dangling")).unwrap();
        std::fs::write(dir.join("sub/inner"), "x").unwrap();
        let closed = base.join("closed");
        std::fs::create_dir(&closed).unwrap();
        std::fs::write(closed.join("kept"), "x").unwrap();
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o100)).unwrap();
        let mut paths = Vec::new();
        for name in [
            "file",
            "sub",
            "link",
            "dangling",
            "absent",
            "other",
            "link/inner",
            "file/x",
            "sub/",
            // Deeper, answered by `d`'s read where it does not list the next name, else looked up.
            "sub/inner",
            "absent/deeper/x",
            "file/x/y",
            "link/inner/x",
            "dangling/x",
        ] {
            paths.push(dir.join(name));
        }
        // Enough names in each directory that it is read rather than each name looked up.
        let names = ["kept".to_owned()]
            .into_iter()
            .chain((0..READ_FROM).map(|n| format!("n{n}")));
        for name in names {
            paths.push(dir.join(&name));
            paths.push(base.join("missing").join(&name));
            paths.push(dir.join("file").join(&name));
            paths.push(dir.join("link").join(&name));
            paths.push(closed.join(&name));
        }
        paths.push(PathBuf::from(format!("{}//sub", dir.display())));
        paths.push(dir.join("sub/.."));
        paths.push(dir.join("sub/."));
        paths.push(PathBuf::from("relative/name"));
        let expected: Vec<Option<bool>> = paths.iter().map(|p| lookup(p)).collect();
        let got = kinds(&paths);
        for ((path, want), have) in paths.iter().zip(&expected).zip(&got) {
            assert_eq!(have, want, "{}", path.display());
        }
        assert_eq!(
            existing(&paths),
            expected.iter().map(Option::is_some).collect::<Vec<_>>()
        );
        // A directory read for one list answers for the next, one name at a time included.
        let mut presence = Presence::default();
        let _read = presence.kinds(&paths);
        for (path, want) in paths.iter().zip(&expected) {
            assert_eq!(
                presence.kinds(std::slice::from_ref(path)),
                vec![*want],
                "{}",
                path.display()
            );
        }
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
}
