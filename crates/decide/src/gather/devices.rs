//! Paths a shell line reads that are no file of anyone's: a character device that holds no data (`/dev/null`,
//! `/dev/urandom`, the terminal), known by its canonical path and its device numbers, and the command's own
//! standard streams (`/dev/stdin`, `/dev/fd/0`), known by the links that lead to `/proc/self/fd/N`. Reading them is
//! no read outside the project; every other device (`/dev/sda`, `/dev/mem`, `/dev/kmsg`) is judged as today.

use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};

use agent_fs_sandbox::PathCheck;

/// The character devices that hold no data of anyone's, by canonical path, with their Linux device numbers
/// (major, minor): they give nothing, zeros or random bytes, or the terminal the user types into.
const DATA_LESS: &[(&str, u64, u64)] = &[
    ("/dev/null", 1, 3),
    ("/dev/zero", 1, 5),
    ("/dev/full", 1, 7),
    ("/dev/random", 1, 8),
    ("/dev/urandom", 1, 9),
    ("/dev/tty", 5, 0),
];

/// The most symbolic links followed on the way to a standard stream, as the kernel's own bound.
const MAX_LINKS: usize = 40;

/// Whether the checked path resolves to a character device that holds no data: its canonical path is one of
/// [`DATA_LESS`] and the file there is that character device (on Linux, by its device numbers).
pub(super) fn data_less(check: &PathCheck) -> bool {
    let Some(resolved) = check.resolved.as_deref() else {
        return false;
    };
    // Equal paths have the same last name, and the devices' names differ: only the one of that name is compared.
    let name = resolved.file_name();
    let Some(&(_, major, minor)) = DATA_LESS
        .iter()
        .find(|(path, ..)| path.rsplit('/').next().map(OsStr::new) == name && Path::new(path) == resolved)
    else {
        return false;
    };
    let Ok(metadata) = std::fs::symlink_metadata(resolved) else {
        return false;
    };
    is_device(&metadata, major, minor)
}

#[cfg(target_os = "linux")]
fn is_device(metadata: &std::fs::Metadata, major: u64, minor: u64) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let rdev = metadata.rdev();
    // glibc's gnu_dev_major and gnu_dev_minor.
    let found_major = ((rdev >> 8) & 0xfff) | ((rdev >> 32) & !0xfff);
    let found_minor = (rdev & 0xff) | ((rdev >> 12) & !0xff);
    metadata.file_type().is_char_device() && found_major == major && found_minor == minor
}

#[cfg(all(unix, not(target_os = "linux")))]
fn is_device(metadata: &std::fs::Metadata, _major: u64, _minor: u64) -> bool {
    use std::os::unix::fs::FileTypeExt;
    // Other systems number their devices otherwise; only root makes a device node, so the canonical path of a
    // character device is enough.
    metadata.file_type().is_char_device()
}

#[cfg(not(unix))]
fn is_device(_metadata: &std::fs::Metadata, _major: u64, _minor: u64) -> bool {
    false
}

/// Whether `path` names the reading command's own standard input, output or error: its symbolic links, followed
/// one by one as the kernel would (`/dev/stdin` → `/proc/self/fd/0`, `/dev/fd` → `/proc/self/fd`), lead to
/// `/proc/self/fd/N` (or `/proc/thread-self/fd/N`) with N of 0, 1 or 2. The `self` link itself is not followed: it
/// names whichever process opens it, which is the command. A relative path is not judged here.
pub(super) fn standard_stream(path: &str) -> bool {
    let path = Path::new(path);
    if !path.is_absolute() {
        return false;
    }
    // Most paths meet no link and no `..`: their names are taken in place, each pushed onto one path, until the
    // first link or `..`, from which the whole path is followed as [`followed`] follows it.
    let mut current = PathBuf::from("/");
    let mut names = path.components();
    while let Some(component) = names.next() {
        let name = match component {
            Component::Normal(name) => name,
            Component::RootDir | Component::CurDir => continue,
            Component::ParentDir => return followed(path),
            Component::Prefix(_) => return false,
        };
        if in_descriptors(&current) {
            let last = names.all(|c| matches!(c, Component::RootDir | Component::CurDir));
            return last && matches!(name.to_str(), Some("0" | "1" | "2"));
        }
        current.push(name);
        if is_self(&current) {
            continue;
        }
        match agent_fs_sandbox::link_no_follow(&current) {
            None => return false,
            Some(false) => {}
            Some(true) => return followed(path),
        }
    }
    false
}

/// Whether `dir` is the directory of the process's own file descriptors. `dir` is made of `/` and names pushed
/// onto it (no empty or `.` name, no final slash), so its bytes are compared, not its components.
fn in_descriptors(dir: &Path) -> bool {
    matches!(
        dir.as_os_str().as_encoded_bytes(),
        b"/proc/self/fd" | b"/proc/thread-self/fd"
    )
}

/// Whether `path`, made as [`in_descriptors`]'s directory is, is the `self` link of `/proc`, which is not followed.
fn is_self(path: &Path) -> bool {
    matches!(
        path.as_os_str().as_encoded_bytes(),
        b"/proc/self" | b"/proc/thread-self"
    )
}

/// [`standard_stream`] of the absolute `path`, each link on the way followed: a stack of the names still to walk,
/// a link's target pushed onto it.
fn followed(path: &Path) -> bool {
    let mut pending: Vec<OsString> = Vec::new();
    if !push_components(path, &mut pending) {
        return false;
    }
    let mut current = PathBuf::from("/");
    let mut links = 0;
    while let Some(name) = pending.pop() {
        if name == ".." {
            current.pop();
            continue;
        }
        if in_descriptors(&current) {
            return pending.is_empty() && matches!(name.to_str(), Some("0" | "1" | "2"));
        }
        let next = current.join(&name);
        if is_self(&next) {
            current = next;
            continue;
        }
        // The links on the way are kept within a batch: an absolute path's every directory is asked about.
        let Some(link) = agent_fs_sandbox::link_no_follow(&next) else {
            return false;
        };
        if !link {
            current = next;
            continue;
        }
        links += 1;
        let Ok(target) = std::fs::read_link(&next) else {
            return false;
        };
        if links > MAX_LINKS || !push_components(&target, &mut pending) {
            return false;
        }
        if target.is_absolute() {
            current = PathBuf::from("/");
        }
    }
    false
}

/// Pushes the names of `path` onto `pending` so that the first is popped first (`..` kept as a name); false for a
/// path with a prefix (Windows).
fn push_components(path: &Path, pending: &mut Vec<OsString>) -> bool {
    let mut names = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(name) => names.push(name.to_os_string()),
            Component::ParentDir => names.push(OsString::from("..")),
            Component::RootDir | Component::CurDir => {}
            Component::Prefix(_) => return false,
        }
    }
    pending.extend(names.into_iter().rev());
    true
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_standard_streams_are_found_through_their_links() {
        for stream in [
            "/dev/stdin",
            "/dev/stdout",
            "/dev/stderr",
            "/dev/fd/0",
            "/dev/fd/2",
            "/proc/self/fd/1",
        ] {
            assert!(standard_stream(stream), "{stream}");
            assert!(followed(Path::new(stream)), "{stream}");
        }
        for other in [
            "/dev/fd/3",
            "/dev/null",
            "/proc/self/environ",
            "/proc/1/fd/0",
            "dev/stdin",
            "/dev/fd/0/x",
        ] {
            assert!(!standard_stream(other), "{other}");
            assert!(!other.starts_with('/') || !followed(Path::new(other)), "{other}");
        }
        // The names taken in place give what following every name gives.
        for path in [
            "/",
            "/usr/bin/env",
            "/dev/../dev/stdin",
            "/proc/self/fd/../fd/0",
            "/proc/self/fd/0/..",
            "/proc/thread-self/fd/2",
            "/proc/self/fd/01",
            "/dev/./fd/1",
            "/nowhere/fd/0",
        ] {
            assert_eq!(standard_stream(path), followed(Path::new(path)), "{path}");
        }
    }
}
