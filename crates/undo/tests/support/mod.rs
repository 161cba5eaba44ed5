//! What the undo tests share: the state of a directory as undo must put it back, and git without the user's
//! configuration.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A file system entry as undo must put it back: content, executable bit, or a link's target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Node {
    File { bytes: Vec<u8>, executable: bool },
    Link(PathBuf),
    Dir,
}

/// Everything below `dir` but `.git`.
pub(crate) fn state(dir: &Path) -> BTreeMap<PathBuf, Node> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Node>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path.strip_prefix(base).unwrap().to_path_buf();
            if rel == Path::new(".git") {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                out.insert(rel, Node::Link(std::fs::read_link(&path).unwrap()));
            } else if meta.is_dir() {
                out.insert(rel, Node::Dir);
                walk(base, &path, out);
            } else {
                out.insert(
                    rel,
                    Node::File {
                        bytes: std::fs::read(&path).unwrap(),
                        executable: meta.permissions().mode() & 0o111 != 0,
                    },
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Runs git in `dir` without the user's configuration; fails the test when git fails.
pub(crate) fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}
