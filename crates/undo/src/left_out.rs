//! What of a place in a root no snapshot holds: the files and directories the snapshot's ignore rules leave out
//! (every `.gitignore` from the work tree down, `.git/info/exclude`, agent-guard's own lines), found by a bounded
//! walk that follows the same rules as a snapshot (`walk::Checker`). A decision that counts on `agent-guard undo`
//! to take back a removal asks here whether every file the removal may delete is in the snapshot.

use std::path::{Path, PathBuf};

use crate::store::{exclude_lines, secret_lines, work_tree_of};
use crate::walk::{Checker, Rules};

/// What a snapshot of a root would not hold below a place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftOut {
    /// A file or directory the snapshot's ignore rules leave out (with everything below it), and whether it is a
    /// directory.
    Path(PathBuf, bool),
    /// The place holds more entries than the walk looks at: what it holds is not known.
    TooMany(usize),
}

/// The first entry at or below `place` (inside `root`) that a snapshot of `root` leaves out and that `excused`
/// does not excuse (it is given each such entry, its absolute path and whether it is a directory; an excused
/// directory is not entered), or [`LeftOut::TooMany`] once more than `cap` entries were looked at; `None` when
/// the snapshot holds everything there. A secret file by name is excused here: a snapshot never holds it, and
/// the sandbox keeps the line from changing it. A directory named `.git` is left out (a nested repository's
/// history is in no snapshot). Reads only the ignore rules and the directories below `place`; runs nothing.
pub fn left_out(
    root: &Path,
    place: &Path,
    cap: usize,
    excused: &mut dyn FnMut(&Path, bool) -> bool,
) -> Option<LeftOut> {
    // Within a batch of decisions (agent-fs-sandbox's batch facts) each path is made canonical once.
    let root = agent_fs_sandbox::canonicalize(root).ok()?;
    let place = agent_fs_sandbox::canonicalize(place).unwrap_or_else(|_| place.to_path_buf());
    let below = place.strip_prefix(&root).ok()?.to_path_buf();
    let work_tree = work_tree_of(&root);
    let prefix = root
        .strip_prefix(&work_tree)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let exclude = work_tree.join(".git/info/exclude");
    let exclude = agent_fs_sandbox::is_file(&exclude).then_some(exclude.as_path());
    let own = exclude_lines(&root, &prefix);
    let rules = Rules::capture(own, exclude).with_folded(secret_lines());
    // The secret files alone: what they name is excused, whatever else ignores it too.
    let secrets = Rules::capture(Vec::new(), None).with_folded(secret_lines());
    let mut snapshot = Checker::new(&work_tree, &prefix, &rules);
    let mut secret = Checker::new(&work_tree, &prefix, &secrets);
    let learn = |snapshot: &mut Checker, dir: &Path| {
        if let Ok(text) = std::fs::read(work_tree.join(dir).join(".gitignore")) {
            snapshot.learn(dir, text);
        }
    };
    // The rules of each directory from the work tree down to the place's parent.
    let relative = prefix.join(&below);
    let mut dir = PathBuf::new();
    learn(&mut snapshot, &dir);
    for component in relative.parent().unwrap_or(Path::new("")).components() {
        dir.push(component);
        learn(&mut snapshot, &dir);
    }
    let mut seen = 0;
    let mut pending = vec![(relative, agent_fs_sandbox::is_dir(&place))];
    while let Some((path, is_dir)) = pending.pop() {
        seen += 1;
        if seen > cap {
            return Some(LeftOut::TooMany(cap));
        }
        let absolute = work_tree.join(&path);
        if snapshot.ignored(&path, is_dir) {
            if secret.ignored(&path, is_dir) || excused(&absolute, is_dir) {
                continue;
            }
            return Some(LeftOut::Path(absolute, is_dir));
        }
        if !is_dir {
            continue;
        }
        learn(&mut snapshot, &path);
        let Ok(entries) = std::fs::read_dir(&absolute) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            pending.push((path.join(entry.file_name()), kind.is_dir()));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn found(root: &Path, place: &str) -> Option<LeftOut> {
        left_out(root, &root.join(place), 1000, &mut |path, is_dir| {
            is_dir && path.file_name().is_some_and(|n| n == "target")
        })
    }

    #[test]
    fn what_any_ignore_rule_leaves_out_is_found() {
        let project = tree(&[
            (".gitignore", "private*/\n/target/\n.env\n"),
            (".git/info/exclude", "mywork/\n"),
            ("private_data/p.txt", "work"),
            ("mywork/w.txt", "work"),
            ("data/.gitignore", "*\n!.gitignore\n"),
            ("data/d.txt", "work"),
            ("src/main.rs", ""),
            ("src/.env", "SECRET=1"),
            ("target/debug/x", ""),
        ]);
        let root = std::fs::canonicalize(project.path()).unwrap();
        assert_eq!(
            found(&root, "private_data"),
            Some(LeftOut::Path(root.join("private_data"), true))
        );
        assert_eq!(
            found(&root, "mywork"),
            Some(LeftOut::Path(root.join("mywork"), true))
        );
        assert_eq!(
            found(&root, "data"),
            Some(LeftOut::Path(root.join("data/d.txt"), false))
        );
        // A secret file by name and an excused build output are no loss; a tracked-looking tree holds all.
        assert_eq!(found(&root, "src"), None);
        assert_eq!(found(&root, "target"), None);
        // The root holds the rest; the walk stops at its cap.
        assert!(matches!(found(&root, "."), Some(LeftOut::Path(..))));
        assert_eq!(
            left_out(&root, &root.join("src"), 1, &mut |_, _| false),
            Some(LeftOut::TooMany(1))
        );
    }
}
