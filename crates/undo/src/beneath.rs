//! Writing and removing files beneath a root one directory at a time, never following a symbolic link: a link
//! put in the way sends no restored byte outside the root.

use std::ffi::{OsStr, OsString};
use std::io::Write as _;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::{Mode, mkdirat};
use nix::unistd::{UnlinkatFlags, symlinkat, unlinkat};

/// A root directory, opened once.
pub(crate) struct Beneath {
    root: OwnedFd,
}

/// What is at the end of a path whose parent directories were opened.
struct Leaf {
    dir: OwnedFd,
    name: OsString,
}

impl Beneath {
    pub(crate) fn open(root: &Path) -> std::io::Result<Self> {
        let root = nix::fcntl::open(
            root,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Self { root })
    }

    /// Removes the file or link at `path`; one that is not there is fine.
    pub(crate) fn remove_file(&self, path: &Path) -> std::io::Result<()> {
        let leaf = match self.leaf(path, false) {
            Ok(leaf) => leaf,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        match unlinkat(&leaf.dir, leaf.name.as_os_str(), UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Moves the file or link at `path` to `target` (an absolute path, its parent made when missing) without
    /// following a link on the way; one that is not there is fine. `EXDEV` when `target` is on another file system.
    pub(crate) fn move_out(&self, path: &Path, target: &Path) -> std::io::Result<()> {
        let leaf = match self.leaf(path, false) {
            Ok(leaf) => leaf,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        match nix::fcntl::renameat(&leaf.dir, leaf.name.as_os_str(), nix::fcntl::AT_FDCWD, target) {
            Ok(()) | Err(Errno::ENOENT) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Removes the directory at `path` when it is empty; anything else leaves it.
    pub(crate) fn remove_empty_dir(&self, path: &Path) {
        if let Ok(leaf) = self.leaf(path, false) {
            let _removed = unlinkat(&leaf.dir, leaf.name.as_os_str(), UnlinkatFlags::RemoveDir);
        }
    }

    /// Writes a regular file at `path` holding `bytes`, executable or not (the other permission bits follow the
    /// umask, as git's checkout does), replacing a file or link there and making missing parent directories.
    pub(crate) fn write_file(&self, path: &Path, bytes: &[u8], executable: bool) -> std::io::Result<()> {
        let leaf = self.leaf(path, true)?;
        leaf.clear()?;
        let mode = if executable { 0o777 } else { 0o666 };
        let fd = openat(
            &leaf.dir,
            leaf.name.as_os_str(),
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(mode),
        )?;
        std::fs::File::from(fd).write_all(bytes)
    }

    /// Makes a symbolic link at `path` to `target`, replacing a file or link there.
    pub(crate) fn write_symlink(&self, path: &Path, target: &OsStr) -> std::io::Result<()> {
        let leaf = self.leaf(path, true)?;
        leaf.clear()?;
        symlinkat(target, &leaf.dir, leaf.name.as_os_str())?;
        Ok(())
    }

    /// Opens the parent directories of `path` (making them when `create`), refusing a link or anything but a
    /// plain name among its components.
    fn leaf(&self, path: &Path, create: bool) -> std::io::Result<Leaf> {
        let mut names = Vec::new();
        for component in path.components() {
            match component {
                Component::Normal(name) if !name.eq_ignore_ascii_case(".git") => names.push(name),
                _ => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!("`{}` is not a plain path below the root", path.display()),
                    ));
                }
            }
        }
        let Some((name, parents)) = names.split_last() else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "an empty path",
            ));
        };
        let mut dir = self.root.try_clone()?;
        for parent in parents {
            let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
            dir = match openat(&dir, *parent, flags, Mode::empty()) {
                Ok(next) => next,
                Err(Errno::ENOENT) if create => {
                    match mkdirat(&dir, *parent, Mode::from_bits_truncate(0o777)) {
                        Ok(()) | Err(Errno::EEXIST) => {}
                        Err(e) => return Err(e.into()),
                    }
                    openat(&dir, *parent, flags, Mode::empty())?
                }
                Err(Errno::ELOOP | Errno::ENOTDIR) => {
                    return Err(std::io::Error::other(format!(
                        "`{}` has a link or a file where a directory should be; it is not followed",
                        path.display()
                    )));
                }
                Err(e) => return Err(e.into()),
            };
        }
        Ok(Leaf {
            dir,
            name: (*name).to_owned(),
        })
    }
}

impl Leaf {
    /// Removes a file or link at the leaf so that a new one can be made; a directory there is an error.
    fn clear(&self) -> std::io::Result<()> {
        match unlinkat(&self.dir, self.name.as_os_str(), UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}
