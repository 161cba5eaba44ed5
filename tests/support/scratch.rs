//! Small pieces the sandbox tests of the `agent-guard` binary share: random names and markers from the kernel's
//! generator, handing a scratch tree to another user, whether this is root, and a process's whole output.

#![allow(dead_code, clippy::unwrap_used, clippy::indexing_slicing)]

use std::io::Read as _;
use std::path::Path;
use std::process::Output;

/// Lower-case letters and digits.
pub(crate) const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
/// Letters of both cases and digits.
pub(crate) const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// `n` random characters of `alphabet`, from the kernel's generator.
pub(crate) fn random(n: usize, alphabet: &[u8]) -> String {
    let mut bytes = vec![0u8; n];
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut bytes)
        .unwrap();
    bytes
        .iter()
        .map(|b| char::from(alphabet[usize::from(*b) % alphabet.len()]))
        .collect()
}

/// Gives `path` and everything below it (never through a symbolic link) to the user and group `uid`.
pub(crate) fn chown_all(path: &Path, uid: u32) {
    let id = Some(nix::unistd::Uid::from_raw(uid));
    nix::unistd::chown(path, id, Some(nix::unistd::Gid::from_raw(uid))).unwrap();
    if path.is_dir() && !path.is_symlink() {
        for entry in std::fs::read_dir(path).unwrap() {
            chown_all(&entry.unwrap().path(), uid);
        }
    }
}

pub(crate) fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// A process's standard output followed by its standard error.
pub(crate) fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
