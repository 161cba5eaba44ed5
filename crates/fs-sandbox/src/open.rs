//! Race-free opening beneath a root: `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`, or a checked walk.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path};

use nix::errno::Errno;
use nix::fcntl::{OFlag, open, openat, readlinkat};
use nix::sys::stat::{Mode, mkdirat};

use crate::error::{PathSandboxError, Result};
use crate::resolve::MAX_LINKS;

/// How to open a file beneath a root; the same vocabulary as [`std::fs::OpenOptions`], plus
/// [`OpenOptions::create_parents`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenOptions {
    read: bool,
    write: bool,
    append: bool,
    truncate: bool,
    create: bool,
    create_new: bool,
    create_parents: bool,
    mode: u32,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl OpenOptions {
    /// No access at all (like [`std::fs::OpenOptions::new`]); new files get mode `0o666` before the umask.
    pub const fn new() -> Self {
        Self {
            read: false,
            write: false,
            append: false,
            truncate: false,
            create: false,
            create_new: false,
            create_parents: false,
            mode: 0o666,
        }
    }

    /// Read an existing file.
    pub const fn reading() -> Self {
        Self::new().read(true)
    }

    /// Write a file from scratch, creating it (and its missing parent directories) when needed.
    pub const fn writing() -> Self {
        Self::new()
            .write(true)
            .create(true)
            .truncate(true)
            .create_parents(true)
    }

    /// Open for reading.
    #[must_use]
    pub const fn read(mut self, read: bool) -> Self {
        self.read = read;
        self
    }

    /// Open for writing.
    #[must_use]
    pub const fn write(mut self, write: bool) -> Self {
        self.write = write;
        self
    }

    /// Open for appending (implies writing).
    #[must_use]
    pub const fn append(mut self, append: bool) -> Self {
        self.append = append;
        self
    }

    /// Truncate an existing file.
    #[must_use]
    pub const fn truncate(mut self, truncate: bool) -> Self {
        self.truncate = truncate;
        self
    }

    /// Create the file when it does not exist.
    #[must_use]
    pub const fn create(mut self, create: bool) -> Self {
        self.create = create;
        self
    }

    /// Create the file, failing when it exists (a symbolic link in its place is not followed).
    #[must_use]
    pub const fn create_new(mut self, create_new: bool) -> Self {
        self.create_new = create_new;
        self
    }

    /// Create missing parent directories, each one beneath the root.
    #[must_use]
    pub const fn create_parents(mut self, create_parents: bool) -> Self {
        self.create_parents = create_parents;
        self
    }

    /// The permission bits of a new file (before the umask).
    #[must_use]
    pub const fn mode(mut self, mode: u32) -> Self {
        self.mode = mode;
        self
    }

    /// Whether these options can change the file system (write, append, truncate or create).
    pub const fn writes(&self) -> bool {
        self.write || self.append || self.truncate || self.create || self.create_new || self.create_parents
    }

    fn flags(&self) -> io::Result<OFlag> {
        let writes = self.write || self.append;
        let mut flags = match (self.read, writes) {
            (true, false) => OFlag::O_RDONLY,
            (false, true) => OFlag::O_WRONLY,
            (true, true) => OFlag::O_RDWR,
            (false, false) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "neither read nor write access requested",
                ));
            }
        };
        if (self.truncate || self.create || self.create_new) && !writes {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "creating or truncating needs write access",
            ));
        }
        if self.append {
            flags |= OFlag::O_APPEND;
        }
        if self.truncate {
            flags |= OFlag::O_TRUNC;
        }
        if self.create_new {
            flags |= OFlag::O_CREAT | OFlag::O_EXCL;
        } else if self.create {
            flags |= OFlag::O_CREAT;
        }
        Ok(flags | OFlag::O_CLOEXEC | OFlag::O_NOCTTY)
    }

    fn file_mode(&self) -> Mode {
        Mode::from_bits_truncate(self.mode as nix::libc::mode_t)
    }
}

/// Opens `relative` beneath the directory `root` so that no step of the resolution leaves `root`, whatever
/// changed since the path was checked: `..` above the root, an absolute symbolic link, a link pointing outside
/// or a magic link fails with [`PathSandboxError::Escape`] (or an [`PathSandboxError::Open`] naming the loop) instead of
/// opening something outside. Creating, truncating and appending go through the same resolution.
///
/// On Linux this is one `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`; elsewhere, and on kernels without
/// `openat2`, it is a walk one component at a time, each `openat` relative to the directory opened before it with
/// `O_NOFOLLOW` (and `O_DIRECTORY` for the parents), following symbolic links itself under the same rules.
///
/// # Errors
/// [`PathSandboxError::NotBeneath`] when `relative` is absolute, [`PathSandboxError::Escape`] when the resolution would
/// leave `root`, [`PathSandboxError::Open`] for every other failure (missing file, permissions, invalid options).
pub fn open_beneath(root: &Path, relative: &Path, options: &OpenOptions) -> Result<File> {
    Opener::new(root, relative, options, Links::FollowBeneath)?.open(Strategy::Best)
}

/// Opens a checked path (which held no link when it was checked) beneath `root`, refusing every symbolic link,
/// the root's own last component included.
pub(crate) fn open_checked(root: &Path, relative: &Path, options: &OpenOptions) -> Result<File> {
    Opener::new(root, relative, options, Links::Refuse)?.open(Strategy::Best)
}

/// What to do with a symbolic link met while opening.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Links {
    /// Follow it while it stays beneath the root.
    FollowBeneath,
    /// Refuse it ([`PathSandboxError::Changed`]).
    Refuse,
}

/// Which implementation to use; the portable walk is also tested on Linux.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// `openat2` where the platform has it, the walk otherwise.
    Best,
    /// The walk, everywhere.
    #[cfg_attr(not(test), allow(dead_code))]
    Walk,
}

/// One open request, validated.
struct Opener<'a> {
    root: &'a Path,
    relative: &'a Path,
    flags: OFlag,
    mode: Mode,
    create_parents: bool,
    links: Links,
}

/// One step of the walk.
enum Step {
    Parent,
    Name(OsString),
}

impl<'a> Opener<'a> {
    fn new(root: &'a Path, relative: &'a Path, options: &OpenOptions, links: Links) -> Result<Self> {
        if relative.has_root() || relative.components().any(|c| matches!(c, Component::Prefix(_))) {
            return Err(PathSandboxError::NotBeneath {
                path: relative.to_path_buf(),
                root: root.to_path_buf(),
            });
        }
        let flags = options.flags().map_err(|source| PathSandboxError::Open {
            path: relative.to_path_buf(),
            root: root.to_path_buf(),
            source,
        })?;
        Ok(Self {
            root,
            relative,
            flags,
            mode: options.file_mode(),
            create_parents: options.create_parents,
            links,
        })
    }

    pub(crate) fn open(&self, strategy: Strategy) -> Result<File> {
        let root_flags = match self.links {
            Links::FollowBeneath => dir_flags(),
            Links::Refuse => dir_flags() | OFlag::O_NOFOLLOW,
        };
        let root_fd = open(self.root, root_flags, Mode::empty()).map_err(|errno| self.error(errno))?;
        if self.create_parents
            && let Some(parent) = self.relative.parent()
            && !parent.as_os_str().is_empty()
        {
            self.walk(root_fd.as_fd(), parent, None, true)?;
        }
        match strategy {
            Strategy::Best => self.open_best(root_fd.as_fd()),
            Strategy::Walk => self
                .walk(root_fd.as_fd(), self.relative, Some(self.flags), false)
                .map(File::from),
        }
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn open_best(&self, root_fd: BorrowedFd<'_>) -> Result<File> {
        use nix::fcntl::{OpenHow, ResolveFlag, openat2};
        // `openat2` refuses a mode unless the call may create the file.
        let mode = if self.flags.contains(OFlag::O_CREAT) {
            self.mode
        } else {
            Mode::empty()
        };
        let how = OpenHow::new()
            .flags(self.flags)
            .mode(mode)
            .resolve(match self.links {
                Links::FollowBeneath => ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_MAGICLINKS,
                Links::Refuse => ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS,
            });
        let target = if self.relative.as_os_str().is_empty() {
            Path::new(".")
        } else {
            self.relative
        };
        // The kernel answers EAGAIN when a rename raced with a `..` during a RESOLVE_BENEATH walk; it asks the
        // caller to retry, and a few retries are enough unless someone keeps renaming on purpose.
        for _ in 0..8 {
            match openat2(root_fd, target, how) {
                Ok(fd) => return Ok(File::from(fd)),
                Err(Errno::EAGAIN | Errno::EINTR) => {}
                Err(Errno::ENOSYS) => {
                    return self
                        .walk(root_fd, self.relative, Some(self.flags), false)
                        .map(File::from);
                }
                Err(errno) => return Err(self.error(errno)),
            }
        }
        Err(self.error(Errno::EAGAIN))
    }

    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn open_best(&self, root_fd: BorrowedFd<'_>) -> Result<File> {
        self.walk(root_fd, self.relative, Some(self.flags), false)
            .map(File::from)
    }

    /// Walks `path` from `root_fd` one component at a time without ever letting the kernel follow a link or a
    /// `..`: each directory is opened with `O_NOFOLLOW | O_DIRECTORY` relative to the one before it, a symbolic
    /// link is read and its target walked under the same rules (an absolute target is an escape), and `..` goes
    /// back to the directory opened before, never above the root. With `last` the final component is opened with
    /// those flags (and `O_NOFOLLOW`); without it every component is a directory, created when missing if
    /// `create_dirs`.
    fn walk(
        &self,
        root_fd: BorrowedFd<'_>,
        path: &Path,
        last: Option<OFlag>,
        create_dirs: bool,
    ) -> Result<OwnedFd> {
        let mut steps = Vec::new();
        push_steps(&mut steps, path).map_err(|()| self.escape())?;
        let mut dirs: Vec<OwnedFd> = Vec::new();
        let mut links = 0usize;
        while let Some(step) = steps.pop() {
            let current = dirs.last().map_or(root_fd, AsFd::as_fd);
            let name = match step {
                Step::Parent => {
                    if dirs.pop().is_none() {
                        return Err(self.escape());
                    }
                    continue;
                }
                Step::Name(name) => name,
            };
            let final_flags = last.filter(|_| steps.is_empty());
            let attempt = match final_flags {
                Some(flags) => openat(current, name.as_os_str(), flags | OFlag::O_NOFOLLOW, self.mode),
                None => {
                    let opened = openat(
                        current,
                        name.as_os_str(),
                        dir_flags() | OFlag::O_NOFOLLOW,
                        Mode::empty(),
                    );
                    match opened {
                        Err(Errno::ENOENT) if create_dirs => {
                            match mkdirat(current, name.as_os_str(), Mode::from_bits_truncate(0o777)) {
                                Ok(()) | Err(Errno::EEXIST) => {}
                                Err(errno) => return Err(self.error(errno)),
                            }
                            openat(
                                current,
                                name.as_os_str(),
                                dir_flags() | OFlag::O_NOFOLLOW,
                                Mode::empty(),
                            )
                        }
                        other => other,
                    }
                }
            };
            match attempt {
                Ok(fd) if final_flags.is_some() => return Ok(fd),
                Ok(fd) => dirs.push(fd),
                // A symbolic link in the way answers ELOOP (or ENOTDIR for `O_DIRECTORY`, EMLINK on some BSDs);
                // whether it is one is asked of the link itself, so that a link swapped in meanwhile is read as it
                // is now and walked under the same rules.
                Err(errno @ (Errno::ELOOP | Errno::ENOTDIR | Errno::EMLINK)) => {
                    let Ok(target) = readlinkat(current, name.as_os_str()) else {
                        return Err(self.error(errno));
                    };
                    if self.links == Links::Refuse {
                        return Err(self.changed());
                    }
                    if final_flags.is_some_and(|flags| flags.contains(OFlag::O_EXCL)) {
                        // `O_CREAT | O_EXCL` never follows a link: the name exists.
                        return Err(self.error(Errno::EEXIST));
                    }
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(self.error(Errno::ELOOP));
                    }
                    push_steps(&mut steps, Path::new(&target)).map_err(|()| self.escape())?;
                }
                Err(errno) => return Err(self.error(errno)),
            }
        }
        // The path ended on the root or on a `..`: open the directory reached.
        let current = dirs.last().map_or(root_fd, AsFd::as_fd);
        let flags = last.unwrap_or(dir_flags());
        openat(current, ".", flags, self.mode).map_err(|errno| self.error(errno))
    }

    fn changed(&self) -> PathSandboxError {
        PathSandboxError::Changed {
            path: self.relative.to_path_buf(),
            root: self.root.to_path_buf(),
        }
    }

    fn escape(&self) -> PathSandboxError {
        PathSandboxError::Escape {
            path: self.relative.to_path_buf(),
            root: self.root.to_path_buf(),
        }
    }

    fn error(&self, errno: Errno) -> PathSandboxError {
        match errno {
            Errno::EXDEV => self.escape(),
            // With links refused, ELOOP means a link on the way (the root's own last component included).
            Errno::ELOOP if self.links == Links::Refuse => self.changed(),
            _ => PathSandboxError::Open {
                path: self.relative.to_path_buf(),
                root: self.root.to_path_buf(),
                source: io::Error::from(errno),
            },
        }
    }
}

/// Pushes the steps of a relative `path` so that its first component is popped first; an absolute path is an
/// escape (`Err`).
fn push_steps(steps: &mut Vec<Step>, path: &Path) -> std::result::Result<(), ()> {
    let mut new = Vec::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => return Err(()),
            Component::CurDir => {}
            Component::ParentDir => new.push(Step::Parent),
            Component::Normal(name) => new.push(Step::Name(name.to_owned())),
        }
    }
    steps.extend(new.into_iter().rev());
    Ok(())
}

/// Flags for a directory used only as a starting point (`O_PATH` where it exists, so that a directory that can be
/// searched but not listed still works).
fn dir_flags() -> OFlag {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let access = OFlag::O_PATH;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let access = OFlag::O_RDONLY;
    access | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC
}

/// The portable walk on any platform, for tests of the fallback.
#[cfg(test)]
pub(crate) fn open_by_walk(root: &Path, relative: &Path, options: &OpenOptions) -> Result<File> {
    Opener::new(root, relative, options, Links::FollowBeneath)?.open(Strategy::Walk)
}

/// The portable walk that refuses links, for tests of the fallback.
#[cfg(test)]
pub(crate) fn open_checked_by_walk(root: &Path, relative: &Path, options: &OpenOptions) -> Result<File> {
    Opener::new(root, relative, options, Links::Refuse)?.open(Strategy::Walk)
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::os::unix::fs::symlink;

    use super::*;

    fn both(root: &Path, relative: &str, options: &OpenOptions) -> [Result<File>; 2] {
        [
            open_beneath(root, Path::new(relative), options),
            open_by_walk(root, Path::new(relative), options),
        ]
    }

    #[test]
    fn opens_inside_and_refuses_escapes_with_both_strategies() {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("root");
        std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
        std::fs::write(root.join("sub/file.txt"), "inside").unwrap();
        std::fs::write(outer.path().join("secret"), "outside").unwrap();
        symlink("../secret", root.join("up")).unwrap();
        symlink(outer.path().join("secret"), root.join("abs")).unwrap();
        symlink("sub/file.txt", root.join("inlink")).unwrap();
        symlink("deeper/..", root.join("sub/dotlink")).unwrap();
        symlink("/proc/self/root", root.join("magic")).unwrap();
        symlink("loop", root.join("loop")).unwrap();

        for result in both(&root, "sub/file.txt", &OpenOptions::reading()) {
            let mut text = String::new();
            result.unwrap().read_to_string(&mut text).unwrap();
            assert_eq!(text, "inside");
        }
        for ok in [
            "inlink",
            "sub/deeper/../file.txt",
            "sub/dotlink/file.txt",
            "./sub//file.txt",
        ] {
            for result in both(&root, ok, &OpenOptions::reading()) {
                assert!(result.is_ok(), "{ok}: {result:?}");
            }
        }
        for escape in ["../secret", "up", "abs", "sub/../../secret", "magic/etc/hostname"] {
            for result in both(&root, escape, &OpenOptions::reading()) {
                assert!(result.is_err(), "{escape} escaped");
            }
        }
        for result in both(&root, "loop", &OpenOptions::reading()) {
            assert!(matches!(result, Err(PathSandboxError::Open { .. })), "{result:?}");
        }
        assert!(matches!(
            open_beneath(&root, Path::new("/etc/hostname"), &OpenOptions::reading()),
            Err(PathSandboxError::NotBeneath { .. })
        ));
    }

    #[test]
    fn creates_through_the_same_resolution() {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("root");
        std::fs::create_dir_all(&root).unwrap();
        symlink(outer.path().join("victim"), root.join("dangling")).unwrap();
        for (index, result) in both(&root, "new/nested/file.txt", &OpenOptions::writing())
            .into_iter()
            .enumerate()
        {
            result.unwrap().write_all(format!("{index}").as_bytes()).unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(root.join("new/nested/file.txt")).unwrap(),
            "1"
        );
        for result in both(&root, "dangling", &OpenOptions::writing()) {
            assert!(result.is_err());
        }
        assert!(!outer.path().join("victim").exists());
        for result in both(&root, "../escaped/file", &OpenOptions::writing()) {
            assert!(result.is_err());
        }
        assert!(!outer.path().join("escaped").exists());
        assert!(matches!(
            open_beneath(&root, Path::new("x"), &OpenOptions::new()),
            Err(PathSandboxError::Open { .. })
        ));
    }

    /// The walk is raced like `openat2` is in `tests/swap.rs`: a directory and a link to outside exchange names
    /// while it opens through that name.
    #[test]
    fn the_walk_never_escapes_a_raced_link() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};

        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("root");
        std::fs::create_dir_all(root.join("flip")).unwrap();
        std::fs::write(root.join("flip/data.txt"), "inside").unwrap();
        std::fs::create_dir_all(outer.path().join("outside")).unwrap();
        std::fs::write(outer.path().join("outside/data.txt"), "outside").unwrap();
        symlink(outer.path().join("outside"), root.join("flop")).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flipper = {
            let (stop, root) = (Arc::clone(&stop), root.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    nix::fcntl::renameat2(
                        nix::fcntl::AT_FDCWD,
                        &root.join("flip"),
                        nix::fcntl::AT_FDCWD,
                        &root.join("flop"),
                        nix::fcntl::RenameFlags::RENAME_EXCHANGE,
                    )
                    .unwrap();
                }
            })
        };
        for _ in 0..2000 {
            if let Ok(mut file) = open_by_walk(&root, Path::new("flip/data.txt"), &OpenOptions::reading()) {
                let mut text = String::new();
                file.read_to_string(&mut text).unwrap();
                assert_eq!(text, "inside", "the walk escaped the root");
            }
        }
        stop.store(true, Ordering::Relaxed);
        flipper.join().unwrap();
    }

    #[test]
    fn checked_paths_refuse_every_link_with_both_strategies() {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/file.txt"), "inside").unwrap();
        symlink("sub", root.join("inlink")).unwrap();
        symlink("root", outer.path().join("rootlink")).unwrap();
        let checked = |root: &Path, relative: &str, options: &OpenOptions| {
            [
                open_checked(root, Path::new(relative), options),
                open_checked_by_walk(root, Path::new(relative), options),
            ]
        };
        for result in checked(&root, "sub/file.txt", &OpenOptions::reading()) {
            assert!(result.is_ok());
        }
        for result in checked(&root, "inlink/file.txt", &OpenOptions::reading()) {
            assert!(
                matches!(result, Err(PathSandboxError::Changed { .. })),
                "{result:?}"
            );
        }
        for result in checked(&root, "inlink/new/file.txt", &OpenOptions::writing()) {
            assert!(
                matches!(result, Err(PathSandboxError::Changed { .. })),
                "{result:?}"
            );
        }
        assert!(!root.join("sub/new").exists());
        for result in checked(
            &outer.path().join("rootlink"),
            "sub/file.txt",
            &OpenOptions::reading(),
        ) {
            assert!(result.is_err(), "a root swapped for a link is refused");
        }
    }
}
