//! A directory walk that never follows a symbolic link and stops when the call is cancelled.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Directories never entered: version-control internals and dependency trees are noise for the model.
const SKIPPED_DIRS: &[&str] = &[".git", "node_modules", "target", ".hg", ".svn"];

/// At most this many entries are looked at in one walk.
const MAX_ENTRIES: usize = 100_000;

/// One entry of the walk.
pub(super) struct Entry {
    /// The absolute path.
    pub(super) path: PathBuf,
    /// The path relative to the walk's root, `/`-separated.
    pub(super) relative: String,
    /// Whether it is a regular file (not a link, not a directory).
    pub(super) is_file: bool,
}

/// Visits every entry under `root` depth-first in name order; links are reported but never followed. Stops when
/// `visit` breaks, when `cancelled` is set, or after [`MAX_ENTRIES`] entries.
pub(super) fn walk(root: &Path, cancelled: &AtomicBool, mut visit: impl FnMut(&Entry) -> ControlFlow<()>) {
    let mut stack = vec![(root.to_path_buf(), String::new())];
    let mut seen = 0usize;
    while let Some((dir, prefix)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        let mut subdirs = Vec::new();
        for entry in entries {
            seen += 1;
            if seen > MAX_ENTRIES || cancelled.load(Ordering::Relaxed) {
                return;
            }
            // `DirEntry::file_type` does not follow links, so a link to a directory is never descended into.
            let Ok(kind) = entry.file_type() else { continue };
            let name = entry.file_name().to_string_lossy().into_owned();
            let relative = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            if kind.is_dir() {
                if !SKIPPED_DIRS.contains(&name.as_str()) {
                    subdirs.push((entry.path(), relative));
                }
                continue;
            }
            let item = Entry {
                path: entry.path(),
                relative,
                is_file: kind.is_file(),
            };
            if visit(&item).is_break() {
                return;
            }
        }
        // Reversed so that the stack pops them in name order.
        stack.extend(subdirs.into_iter().rev());
    }
}
