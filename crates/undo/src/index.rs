//! git's index, read directly, entry by entry ([`Entries`]). A snapshot compares each file's `lstat` with the
//! stat data a store's index keeps and gives git only the paths whose data differ, so that a snapshot with nothing
//! changed runs no `git` at all; [`git_tracking`](crate::git_tracking) reads a project's index only as far as one
//! path.
//!
//! git's own rule is kept: an entry whose modification time is not older than the index file itself may have
//! changed in the same clock tick after git looked at it ("racily clean"), and is given to git, which compares
//! its content.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

/// The stat data git compares, as the index holds it (each field cut to 32 bits) and its mode as git writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    ctime: (u32, u32),
    mtime: (u32, u32),
    ino: u32,
    mode: u32,
    uid: u32,
    gid: u32,
    size: u32,
}

impl Stat {
    /// Whether the entry is of a nested repository's commit: what a snapshot records for a file too large to hash.
    pub(crate) fn is_gitlink(&self) -> bool {
        self.mode & 0o170_000 == 0o160_000
    }

    /// The id under which a file too large to hash is recorded (as a nested repository's commit, which needs no
    /// object): made of its stat data, so that the file unchanged since has the same one, and changed (in size,
    /// times, inode, mode or owner) another.
    pub(crate) fn id(&self) -> String {
        let mut rest = Vec::with_capacity(24);
        for field in [self.ctime.0, self.ino, self.mode, self.uid, self.gid] {
            rest.extend_from_slice(&field.to_le_bytes());
        }
        format!(
            "{:08x}{:08x}{:08x}{:08x}{:08x}",
            self.size,
            self.mtime.0,
            self.mtime.1,
            self.ctime.1,
            crate::store::fnv1a(&rest) & 0xffff_ffff
        )
    }

    /// The stat data of `stat` (from `fstatat` without following a link) as git would record it; `None` for what
    /// is neither a file nor a link.
    pub(crate) fn of_raw(stat: &nix::sys::stat::FileStat) -> Option<Self> {
        let kind = stat.st_mode & nix::libc::S_IFMT;
        let mode = if kind == nix::libc::S_IFLNK {
            0o120_000
        } else if kind == nix::libc::S_IFREG {
            if stat.st_mode & 0o100 != 0 {
                0o100_755
            } else {
                0o100_644
            }
        } else {
            return None;
        };
        // git keeps 32 bits of each: the cut is the comparison git makes.
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "git's 32-bit fields"
        )]
        Some(Self {
            ctime: (stat.st_ctime as u32, stat.st_ctime_nsec as u32),
            mtime: (stat.st_mtime as u32, stat.st_mtime_nsec as u32),
            ino: stat.st_ino as u32,
            mode,
            uid: stat.st_uid,
            gid: stat.st_gid,
            size: stat.st_size as u32,
        })
    }
}

/// A store's index: each path's stat data (by the path's bytes, which hash faster than a `Path`'s components),
/// and the index file's own modification time (seconds).
#[derive(Debug, Default)]
pub(crate) struct Index {
    pub(crate) entries: HashMap<OsString, Option<Stat>>,
    /// The ids of the entries recorded by their stat data alone (too large to hash: [`Stat::id`]).
    by_stat: HashMap<OsString, String>,
    written: i64,
}

impl Index {
    /// Whether git would take the file with stat data `now` at `path` as unchanged without reading it: the same
    /// data, and older than the index file (else it may have changed in the same tick after git hashed it).
    pub(crate) fn unchanged(&self, path: &Path, now: &Stat) -> bool {
        self.entries
            .get(path.as_os_str())
            .and_then(Option::as_ref)
            .is_some_and(|kept| kept == now && i64::from(kept.mtime.0) < self.written)
    }

    /// Whether the index holds the content of the file with stat data `now` at `path` under the same stat data
    /// (not by its stat data alone): an earlier snapshot hashed it, and it has not changed since, or only in the
    /// same clock tick as the index was written (git then compares its content).
    pub(crate) fn holds_unchanged(&self, path: &Path, now: &Stat) -> bool {
        self.entries
            .get(path.as_os_str())
            .and_then(Option::as_ref)
            .is_some_and(|kept| kept == now && !kept.is_gitlink())
    }

    /// Whether the file with stat data `now` at `path` is one the index holds by its stat data alone (too large
    /// to hash), unchanged since.
    pub(crate) fn kept_by_stat(&self, path: &Path, now: &Stat) -> bool {
        self.by_stat
            .get(path.as_os_str())
            .is_some_and(|id| *id == now.id())
    }

    /// An index known by its paths alone (as `git ls-files` lists them): every file is given to git.
    pub(crate) fn listed(paths: impl Iterator<Item = OsString>) -> Self {
        Self {
            entries: paths.map(|path| (path, None)).collect(),
            by_stat: HashMap::new(),
            written: 0,
        }
    }

    /// The index at `path`; an empty one when there is none yet. `None` when it cannot be read as an index of
    /// version 2 to 4 with SHA-1 names (the caller then gives git every path, as without this cache).
    pub(crate) fn read(path: &Path) -> Option<Self> {
        let file = match std::fs::File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(Self::default()),
            Err(_) => return None,
        };
        let written = file.metadata().ok()?.mtime();
        let mut entries = Entries::new(std::io::BufReader::with_capacity(1 << 16, file))?;
        let mut kept = HashMap::with_capacity(usize::try_from(entries.left).ok()?);
        let mut by_stat = HashMap::new();
        while let Some(entry) = entries.next_entry()? {
            // An entry of a merge stage is not one a snapshot writes; leave it to git.
            if entry.flags & 0x3000 != 0 {
                continue;
            }
            let name = OsStr::from_bytes(entry.name).to_os_string();
            if entry.stat.is_gitlink() {
                by_stat.insert(name.clone(), hex(&entry.oid));
            }
            kept.insert(name, Some(entry.stat));
        }
        Some(Self {
            entries: kept,
            by_stat,
            written,
        })
    }
}

/// `bytes` in lower-case hexadecimal.
fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, byte| {
            out.push_str(&format!("{byte:02x}"));
            out
        })
}

/// One entry of an index, as [`Entries`] reads it.
pub(crate) struct Entry<'a> {
    /// The path, relative to the work tree, `/`-separated; a directory of a sparse index ends in `/`.
    pub(crate) name: &'a [u8],
    /// Its stat data and mode.
    pub(crate) stat: Stat,
    /// Its object name.
    pub(crate) oid: [u8; 20],
    /// The entry's flags: its stage in bits 12 and 13.
    pub(crate) flags: u16,
}

/// The entries of an index of version 2 to 4 with SHA-1 names, read one at a time from the start, in the order
/// git keeps them (by the bytes of their paths): a caller looking for one path stops once entries sort past it,
/// having read no more of the file than the entries before it.
///
/// Each entry is checked as it is read, so that a file of another shape (SHA-256 names, damage) is refused rather
/// than read as a list of other paths: its mode is one git writes, the length its flags give is its path's, and
/// it does not sort before the entry above it.
pub(crate) struct Entries<R> {
    reader: R,
    version: u32,
    /// The entries not read yet.
    left: u32,
    /// The path of the entry read last (version 4 names each path by what it keeps of the previous one).
    name: Vec<u8>,
    /// The path of the entry before it, for the order check.
    previous: Vec<u8>,
}

impl<R: std::io::BufRead> Entries<R> {
    /// Reads the header of the index `reader` holds; `None` when it is not an index of version 2 to 4.
    pub(crate) fn new(mut reader: R) -> Option<Self> {
        let mut header = [0_u8; 12];
        reader.read_exact(&mut header).ok()?;
        let (magic, rest) = header.split_first_chunk::<4>()?;
        let (version, rest) = rest.split_first_chunk::<4>()?;
        let count: [u8; 4] = rest.try_into().ok()?;
        let version = u32::from_be_bytes(*version);
        if magic != b"DIRC" || !(2..=4).contains(&version) {
            return None;
        }
        Some(Self {
            reader,
            version,
            left: u32::from_be_bytes(count),
            name: Vec::new(),
            previous: Vec::new(),
        })
    }

    /// The next entry; `Some(None)` after the last one, `None` when the file ends early or an entry is not one
    /// git writes.
    pub(crate) fn next_entry(&mut self) -> Option<Option<Entry<'_>>> {
        if self.left == 0 {
            return Some(None);
        }
        self.left -= 1;
        // The stat data (40 bytes), the object name (20) and the flags (2).
        let mut fixed = [0_u8; 62];
        self.reader.read_exact(&mut fixed).ok()?;
        let field =
            |at: usize| -> Option<u32> { Some(u32::from_be_bytes(fixed.get(at..at + 4)?.try_into().ok()?)) };
        let stat = Stat {
            ctime: (field(0)?, field(4)?),
            mtime: (field(8)?, field(12)?),
            ino: field(20)?,
            mode: field(24)?,
            uid: field(28)?,
            gid: field(32)?,
            size: field(36)?,
        };
        let oid: [u8; 20] = fixed.get(40..60)?.try_into().ok()?;
        let flags = u16::from_be_bytes(fixed.get(60..62)?.try_into().ok()?);
        let mut length = fixed.len();
        if flags & 0x4000 != 0 {
            if self.version < 3 {
                return None;
            }
            let mut extended = [0_u8; 2];
            self.reader.read_exact(&mut extended).ok()?;
            length += 2;
        }
        std::mem::swap(&mut self.previous, &mut self.name);
        if self.version == 4 {
            let strip = usize::try_from(self.varint()?).ok()?;
            self.name.clear();
            self.name
                .extend_from_slice(self.previous.get(..self.previous.len().checked_sub(strip)?)?);
            self.until_nul()?;
        } else {
            self.name.clear();
            self.until_nul()?;
            // Entries of versions 2 and 3 are padded with NULs to a multiple of 8 bytes (the path's own NUL
            // among them).
            length += self.name.len() + 1;
            let mut padding = [0_u8; 8];
            let pad = length.div_ceil(8) * 8 - length;
            self.reader.read_exact(padding.get_mut(..pad)?).ok()?;
        }
        let kind = stat.mode & 0o170_000;
        let known_kind = matches!(kind, 0o100_000 | 0o120_000 | 0o160_000 | 0o040_000);
        let stated_length = usize::from(flags & 0x0fff);
        if !known_kind
            || stated_length != self.name.len().min(0x0fff)
            || self.name.is_empty()
            || self.name < self.previous
        {
            return None;
        }
        Some(Some(Entry {
            name: &self.name,
            stat,
            oid,
            flags,
        }))
    }

    /// Appends the bytes up to the next NUL to the name; the NUL is consumed.
    fn until_nul(&mut self) -> Option<()> {
        self.reader.read_until(0, &mut self.name).ok()?;
        (self.name.pop()? == 0).then_some(())
    }

    /// git's offset encoding (as in `OFS_DELTA`): seven bits a byte, each continuation adding one.
    fn varint(&mut self) -> Option<u64> {
        let mut next = || -> Option<u8> {
            let mut byte = [0_u8; 1];
            self.reader.read_exact(&mut byte).ok()?;
            let [byte] = byte;
            Some(byte)
        };
        let mut byte = next()?;
        let mut value = u64::from(byte & 0x7f);
        while byte & 0x80 != 0 {
            byte = next()?;
            value = value.checked_add(1)?.checked_mul(128)? | u64::from(byte & 0x7f);
        }
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index git writes, in each version, reads back as the stat data of the files it holds.
    #[test]
    fn reads_the_stat_data_git_wrote() {
        for version in ["2", "3", "4"] {
            let dir = tempfile::tempdir().unwrap();
            let tree = dir.path();
            let names = [
                "a",
                "dir/b.txt",
                "dir/sub/a-much-longer-name.rs",
                "dir/sub/a-much-longer-other.rs",
                "z",
            ];
            for name in names {
                let path = tree.join(name);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, name).unwrap();
            }
            std::os::unix::fs::symlink("a", tree.join("link")).unwrap();
            let git = |args: &[&str]| {
                std::process::Command::new("git")
                    .args(args)
                    .current_dir(tree)
                    .env("GIT_CONFIG_GLOBAL", "/dev/null")
                    .status()
                    .unwrap()
                    .success()
            };
            assert!(git(&["init", "-q"]));
            let index = tree.join("the-index");
            let added = std::process::Command::new("git")
                .args([
                    "-c",
                    &format!("index.version={version}"),
                    "update-index",
                    "--add",
                    "--",
                ])
                .args(names)
                .arg("link")
                .current_dir(tree)
                .env("GIT_INDEX_FILE", &index)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .status()
                .unwrap();
            assert!(added.success());
            let read = Index::read(&index).unwrap();
            assert_eq!(read.entries.len(), names.len() + 1, "version {version}");
            for name in names.iter().chain(&["link"]) {
                let stat = nix::sys::stat::lstat(&tree.join(name)).unwrap();
                assert_eq!(
                    read.entries.get(OsStr::new(name)).copied().flatten(),
                    Stat::of_raw(&stat),
                    "version {version}: {name}"
                );
            }
        }
    }
}
