//! Kernel-like path resolution: symbolic links followed one component at a time, a missing tail kept as written.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::facts::{Lstat, NoLinks};

/// How many symbolic links one resolution may follow, as in Linux (`MAXSYMLINKS`).
pub(crate) const MAX_LINKS: usize = 40;

/// Where a path leads.
#[derive(Debug)]
pub(crate) struct Resolution {
    /// The resolved path: absolute, without `.`, `..` or symbolic links in its existing part.
    pub(crate) path: PathBuf,
    /// Whether a symbolic link was followed on the way.
    pub(crate) through_symlink: bool,
}

/// Why a path could not be resolved.
#[derive(Debug)]
pub(crate) enum Failure {
    /// More than [`MAX_LINKS`] symbolic links.
    Loop,
    /// A magic link of `/proc` (its target is an object, not a path that can be checked).
    MagicLink(PathBuf),
    /// A component that must be a directory is not one.
    NotADirectory(PathBuf),
    /// A component could not be examined.
    Io(PathBuf, io::Error),
}

/// One step still to take.
enum Step {
    Parent,
    Name(OsString),
}

/// Resolves `rest` (a relative path, or an absolute one that restarts at `/`) from the canonical directory
/// `start`, the way the kernel would: each existing component is examined with `lstat`, a symbolic link is replaced
/// by its target (a `..` after it steps up from the target's directory), and once a component does not exist the
/// rest is applied lexically, where a `..` first removes the missing components and then continues from the
/// existing directory. `trailing_slash` says the path as written ends in `/`, so its last component must be a
/// directory when it exists.
pub(crate) fn resolve(start: PathBuf, rest: &Path, trailing_slash: bool) -> Result<Resolution, Failure> {
    let mut resolved = start;
    let mut stack = Vec::new();
    push_steps(&mut stack, &mut resolved, rest);
    let mut through_symlink = false;
    let mut missing = 0usize;
    let mut links = 0usize;
    // Where the steps after the last link followed begin: once the link's target is consumed, the rest is tried
    // on the fast path, so that one link near the top of a deep path does not cost a walk of all of it.
    let mut after_link: Option<usize> = None;
    loop {
        if !trailing_slash && missing == 0 && !stack.is_empty() && after_link == Some(stack.len()) {
            after_link = None;
            let rest: PathBuf = stack
                .iter()
                .rev()
                .map(|step| match step {
                    Step::Parent => OsStr::new(".."),
                    Step::Name(name) => name.as_os_str(),
                })
                .collect();
            if let Some(path) = resolve_without_links(&resolved, &rest) {
                return Ok(Resolution {
                    path,
                    through_symlink,
                });
            }
        }
        let Some(step) = stack.pop() else { break };
        match step {
            Step::Parent => {
                missing = missing.saturating_sub(1);
                resolved.pop();
            }
            Step::Name(name) if missing > 0 => {
                resolved.push(name);
                missing += 1;
            }
            Step::Name(name) => {
                let candidate = resolved.join(&name);
                match crate::facts::lstat(&candidate) {
                    Ok(Lstat::Link) => {
                        if is_magic_dir(&resolved) {
                            return Err(Failure::MagicLink(candidate));
                        }
                        links += 1;
                        if links > MAX_LINKS {
                            return Err(Failure::Loop);
                        }
                        let target =
                            fs::read_link(&candidate).map_err(|error| Failure::Io(candidate, error))?;
                        through_symlink = true;
                        after_link = Some(stack.len());
                        push_steps(&mut stack, &mut resolved, &target);
                    }
                    Ok(kind @ (Lstat::Dir | Lstat::Other)) => {
                        let must_be_dir = !stack.is_empty() || trailing_slash;
                        if must_be_dir && kind != Lstat::Dir {
                            return Err(Failure::NotADirectory(candidate));
                        }
                        resolved = candidate;
                    }
                    Ok(Lstat::Missing) => {
                        resolved = candidate;
                        missing = 1;
                    }
                    Ok(Lstat::NotADirectory) => {
                        return Err(Failure::NotADirectory(resolved));
                    }
                    Err(error) => return Err(Failure::Io(candidate, error)),
                }
            }
        }
    }
    Ok(Resolution {
        path: resolved,
        through_symlink,
    })
}

/// The fast path for the common case, a path without symbolic links: one `openat2(RESOLVE_NO_SYMLINKS)` of
/// `start/rest` proves that the kernel resolves it without following a link, and without links the kernel's `..`
/// is the lexical one, so the lexical normalisation of `start/rest` is the resolution (`start` must be canonical).
/// When only the last component is missing, its parent is proved instead. `None` means "not proved" (a link on the
/// way, a missing directory, another error, no `openat2`): the caller then walks the path.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn resolve_without_links(start: &Path, rest: &Path) -> Option<PathBuf> {
    use nix::errno::Errno;
    use nix::fcntl::{AT_FDCWD, OFlag, OpenHow, ResolveFlag, openat2};

    let how = OpenHow::new()
        .flags(OFlag::O_PATH | OFlag::O_CLOEXEC)
        .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS);
    // Within a batch of decisions each path is opened once (`facts`).
    let opens = |path: &Path| {
        crate::facts::no_links(path, |path| match openat2(AT_FDCWD, path, how) {
            Ok(_) => NoLinks::Opens,
            Err(Errno::ENOENT) => NoLinks::Missing,
            Err(_) => NoLinks::Fails,
        })
    };
    let full = start.join(rest);
    match opens(&full) {
        NoLinks::Opens => Some(normalize_lexically(&full)),
        NoLinks::Missing => match full.components().next_back()? {
            Component::Normal(_) => {
                let parent = full.parent()?;
                (opens(parent) == NoLinks::Opens).then(|| normalize_lexically(&full))
            }
            Component::ParentDir | Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        },
        NoLinks::Fails => None,
    }
}

/// Without `openat2` nothing is proved fast; every path is walked.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn resolve_without_links(_start: &Path, _rest: &Path) -> Option<PathBuf> {
    None
}

/// Pushes the steps of `path` so that its first component is popped first; an absolute `path` restarts the
/// resolution at `/` (the steps already on the stack come after it, as in the kernel).
fn push_steps(stack: &mut Vec<Step>, resolved: &mut PathBuf, path: &Path) {
    let mut root: Option<PathBuf> = None;
    let mut steps = Vec::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => {
                root.get_or_insert_with(PathBuf::new).push(component)
            }
            Component::Normal(name) => steps.push(Step::Name(name.to_owned())),
            Component::ParentDir => steps.push(Step::Parent),
            Component::CurDir => {}
        }
    }
    if let Some(root) = root {
        *resolved = root;
    }
    stack.extend(steps.into_iter().rev());
}

/// Whether a symbolic link inside `dir` is a magic link: `dir` is below the top of a `proc` file system
/// (`/proc/self` and `/proc/mounts` are ordinary links; `/proc/<pid>/root`, `/proc/<pid>/cwd`, `/proc/<pid>/fd/N`,
/// `/proc/<pid>/exe` and their `task/` copies are not).
fn is_magic_dir(dir: &Path) -> bool {
    let proc_root = Path::new("/proc");
    (dir.starts_with(proc_root) && dir != proc_root) || procfs_below_top(dir)
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn procfs_below_top(dir: &Path) -> bool {
    use nix::sys::statfs::{PROC_SUPER_MAGIC, statfs};
    let is_proc = |path: &Path| statfs(path).is_ok_and(|stat| stat.filesystem_type() == PROC_SUPER_MAGIC);
    is_proc(dir) && dir.parent().is_some_and(is_proc)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn procfs_below_top(_dir: &Path) -> bool {
    false
}

/// `path` with `.` removed and each `..` taking away the component before it, without looking at the file system
/// (the path as written, for display and rule matching; never for containment).
pub(crate) fn normalize_lexically(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => {
                normal.push(component.as_os_str())
            }
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
        }
    }
    normal
}

/// `path` below `prefix`, as [`Path::strip_prefix`] gives it (component by component). When both are plain
/// absolute paths (no empty component, no `.`, no final slash: what [`normalize_lexically`] and the resolution
/// make), their components are their parts between slashes, so comparing the bytes gives the same answer without
/// iterating components; anything else is left to `strip_prefix`. Every path checked is compared so with every
/// root.
pub(crate) fn strip_root<'a>(path: &'a Path, prefix: &Path) -> Option<&'a Path> {
    if !(is_plain_absolute(path) && is_plain_absolute(prefix)) {
        return path.strip_prefix(prefix).ok();
    }
    let (path_bytes, prefix_bytes) = (path.as_os_str().as_bytes(), prefix.as_os_str().as_bytes());
    let rest = path_bytes.strip_prefix(prefix_bytes)?;
    // Below `/` the rest starts after its slash; below any other prefix, after a slash of its own, or is empty.
    let rest = if prefix_bytes == b"/" || rest.is_empty() {
        rest
    } else {
        rest.strip_prefix(b"/")?
    };
    Some(Path::new(OsStr::from_bytes(rest)))
}

/// Whether `path` is absolute with no empty component (`//`, a final `/`) and no `.` component.
fn is_plain_absolute(path: &Path) -> bool {
    let bytes = path.as_os_str().as_bytes();
    let Some(below) = bytes.strip_prefix(b"/") else {
        return false;
    };
    if below.is_empty() {
        return true;
    }
    // One pass over the bytes: at each slash, the name it ends must be neither empty nor `.`; so must the last.
    let mut empty = true;
    let mut dot = false;
    for &byte in below {
        if byte == b'/' {
            if empty || dot {
                return false;
            }
            empty = true;
        } else {
            dot = empty && byte == b'.';
            empty = false;
        }
    }
    !(empty || dot)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn a_plain_absolute_path_is_what_its_names_say() {
        let by_names = |path: &str| {
            path.strip_prefix('/').is_some_and(|below| {
                below.is_empty() || below.split('/').all(|name| !matches!(name, "" | "."))
            })
        };
        let parts = ["", "/", ".", "..", "a", ".a", "a.", "/.", "./", "//", "é"];
        for a in parts {
            for b in parts {
                for c in parts {
                    for d in parts {
                        let path = format!("{a}{b}{c}{d}");
                        assert_eq!(is_plain_absolute(Path::new(&path)), by_names(&path), "{path:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn stripping_a_root_agrees_with_strip_prefix() {
        let paths = [
            "/", "//", "/a", "/a/", "/a/b", "/a/b/", "/a//b", "/a/./b", "/a/..", "/a/../b", "/ab", "/ab/c",
            "/a/bc", "/a/b/c/d", "/.", "/./a", "a", "a/b", "", "/é/→",
        ];
        for path in paths {
            for prefix in paths {
                assert_eq!(
                    strip_root(Path::new(path), Path::new(prefix)),
                    Path::new(path).strip_prefix(prefix).ok(),
                    "{path:?} below {prefix:?}"
                );
            }
        }
    }

    /// The fast path agrees with the walk wherever it proves something, and proves nothing through a link.
    #[test]
    fn the_fast_path_agrees_with_the_walk() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap().join("root");
        fs::create_dir_all(root.join("a/b/c")).unwrap();
        fs::write(root.join("a/file"), "x").unwrap();
        symlink("a/b", root.join("link")).unwrap();
        symlink("missing", root.join("dangling")).unwrap();
        let paths = [
            "",
            ".",
            "a",
            "a/b/c",
            "a/b/../file",
            "a/new",
            "a/b/c/../../new",
            "a/file/x",
            "link",
            "link/c",
            "link/../file",
            "dangling",
            "..",
            "a/../../x",
            "missing/deeper",
            "a/b/new/..",
            "a/./b//c",
        ];
        let mut proved = 0;
        for path in paths {
            let walked = resolve(root.clone(), Path::new(path), false);
            if let Some(fast) = resolve_without_links(&root, Path::new(path)) {
                proved += 1;
                let walked = walked.unwrap_or_else(|failure| panic!("{path}: walk failed with {failure:?}"));
                assert_eq!(fast, walked.path, "{path}");
                assert!(!walked.through_symlink, "{path}");
            }
        }
        assert!(proved >= 8, "the fast path proved only {proved} paths");
        for through_link in [
            "link",
            "link/c",
            "link/../file",
            "dangling",
            "a/file/x",
            "missing/deeper",
        ] {
            assert_eq!(
                resolve_without_links(&root, Path::new(through_link)),
                None,
                "{through_link}"
            );
        }
    }
}
