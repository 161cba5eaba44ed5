//! The stat data git keeps in a store's index, read directly: a snapshot compares each file's `lstat` with it
//! and gives git only the paths whose data differ, so that a snapshot with nothing changed runs no `git` at all.
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

    /// An index known by its paths alone (as `git ls-files` lists them): every file is given to git.
    pub(crate) fn listed(paths: impl Iterator<Item = OsString>) -> Self {
        Self {
            entries: paths.map(|path| (path, None)).collect(),
            written: 0,
        }
    }

    /// The index at `path`; an empty one when there is none yet. `None` when it cannot be read as an index of
    /// version 2 to 4 with SHA-1 names (the caller then gives git every path, as without this cache).
    pub(crate) fn read(path: &Path) -> Option<Self> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(Self::default()),
            Err(_) => return None,
        };
        let written = std::fs::metadata(path).ok()?.mtime();
        let mut reader = Reader { bytes: &bytes, at: 0 };
        if reader.take(4)? != b"DIRC" {
            return None;
        }
        let version = reader.u32()?;
        if !(2..=4).contains(&version) {
            return None;
        }
        let count = reader.u32()?;
        let mut entries = HashMap::with_capacity(usize::try_from(count).ok()?);
        let mut name: Vec<u8> = Vec::new();
        for _ in 0..count {
            let start = reader.at;
            let stat = Stat {
                ctime: (reader.u32()?, reader.u32()?),
                mtime: (reader.u32()?, reader.u32()?),
                ino: {
                    let _dev = reader.u32()?;
                    reader.u32()?
                },
                mode: reader.u32()?,
                uid: reader.u32()?,
                gid: reader.u32()?,
                size: reader.u32()?,
            };
            reader.take(20)?;
            let flags = reader.u16()?;
            if flags & 0x4000 != 0 && version >= 3 {
                reader.u16()?;
            }
            if version == 4 {
                let strip = usize::try_from(reader.varint()?).ok()?;
                name.truncate(name.len().checked_sub(strip)?);
                name.extend_from_slice(reader.until_nul()?);
            } else {
                name.clear();
                name.extend_from_slice(reader.until_nul()?);
                // Entries of versions 2 and 3 are padded with NULs to a multiple of 8 bytes.
                let length = reader.at - start;
                let padded = length.div_ceil(8) * 8;
                reader.take(padded - length)?;
            }
            // An entry of a merge stage is not one a snapshot writes; leave it to git.
            if flags & 0x3000 != 0 {
                continue;
            }
            entries.insert(OsStr::from_bytes(&name).to_os_string(), Some(stat));
        }
        Some(Self { entries, written })
    }
}

/// A cursor over the index's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let slice = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(slice)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_be_bytes(self.take(2)?.try_into().ok()?))
    }

    /// The bytes up to the next NUL, which is consumed.
    fn until_nul(&mut self) -> Option<&'a [u8]> {
        let rest = self.bytes.get(self.at..)?;
        let end = rest.iter().position(|b| *b == 0)?;
        self.at += end + 1;
        rest.get(..end)
    }

    /// git's offset encoding (as in `OFS_DELTA`): seven bits a byte, each continuation adding one.
    fn varint(&mut self) -> Option<u64> {
        let mut byte = *self.take(1)?.first()?;
        let mut value = u64::from(byte & 0x7f);
        while byte & 0x80 != 0 {
            byte = *self.take(1)?.first()?;
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
