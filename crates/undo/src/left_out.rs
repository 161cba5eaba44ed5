//! What of a place in a root no snapshot holds: the files and directories the snapshot's ignore rules leave out
//! (every `.gitignore` from the work tree down, `.git/info/exclude`, agent-guard's own lines), found by a bounded
//! walk that follows the same rules as a snapshot (`walk::Checker`). A decision that counts on `agent-guard undo`
//! to take back a removal asks here whether every file the removal may delete is in the snapshot.

use std::path::{Path, PathBuf};

use crate::store::{KEPT_SNAPSHOT_BYTES, exclude_lines_of, secret_lines, work_tree_of};
use crate::walk::{Checker, Place, Rules};

/// What a snapshot of a root would not hold below a place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftOut {
    /// A file or directory the snapshot's ignore rules leave out (with everything below it), and whether it is a
    /// directory.
    Path(PathBuf, bool),
    /// A file or directory the project ignores that holds more files and directories, or bytes, than a snapshot
    /// holds of one (it is left out whole).
    Large(PathBuf),
    /// A file, or the files at or below the place together, larger than one snapshot keeps the content of: a
    /// snapshot records what is past that bound by its stat data alone.
    Unhashed(PathBuf),
    /// The place holds more entries than the walk looks at: what it holds is not known.
    TooMany(usize),
}

/// What a look at a place through a snapshot's rules found ([`look`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Look {
    /// The first entry at or below the place that a snapshot of the root leaves out and that the look's `excused`
    /// does not excuse, or [`LeftOut::TooMany`] once more entries than its cap were looked at; `None` when the
    /// snapshot holds everything there.
    pub left_out: Option<LeftOut>,
    /// Whether what a snapshot holds there includes something the project ignores: held only while it stays
    /// within the bounds on ignored data ([`crate::HELD_IGNORED_ENTRIES`], [`crate::HELD_IGNORED_BYTES`]), so that
    /// a snapshot taken later, after it grew, may leave it out whole.
    pub ignored: bool,
}

/// What a snapshot of `root` would hold at and below `place` (inside `root`): the first entry it leaves out that
/// `excused` does not excuse (it is given each such entry, its absolute path and whether it is a directory; an
/// excused directory is not entered), looking at no more than `cap` entries, and whether it holds there something
/// the project ignores. A secret file by name is excused here: a snapshot never holds it, and the sandbox keeps
/// the line from changing it. A directory named `.git` is left out (a nested repository's history is in no
/// snapshot). Reads only the ignore rules and the directories below `place`; runs nothing.
pub fn look(root: &Path, place: &Path, cap: usize, excused: &mut dyn FnMut(&Path, bool) -> bool) -> Look {
    let mut ignored = false;
    let left_out = walk_place(root, place, cap, excused, &mut ignored);
    Look { left_out, ignored }
}

fn walk_place(
    root: &Path,
    place: &Path,
    cap: usize,
    excused: &mut dyn FnMut(&Path, bool) -> bool,
    ignored: &mut bool,
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
    // Only the tagged directory on the way to the place can leave out what the walk looks at.
    let own = exclude_lines_of(&root, &prefix, below.components().next().map(|c| c.as_os_str()));
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
    let mut bytes = 0u64;
    let mut pending = vec![(relative, agent_fs_sandbox::is_dir(&place))];
    while let Some((path, is_dir)) = pending.pop() {
        seen += 1;
        if seen > cap {
            return Some(LeftOut::TooMany(cap));
        }
        let absolute = work_tree.join(&path);
        match snapshot.place(&path, is_dir, true) {
            Place::Out { large } => {
                if secret.ignored(&path, is_dir) || excused(&absolute, is_dir) {
                    continue;
                }
                return Some(if large {
                    LeftOut::Large(absolute)
                } else {
                    LeftOut::Path(absolute, is_dir)
                });
            }
            Place::Ignored(_) => *ignored = true,
            Place::Kept => {}
        }
        if !is_dir {
            // What is past the bytes a snapshot hashes is held by its stat data alone: its content cannot be put
            // back (a snapshot that finds them new hashes no more than that).
            let size = std::fs::symlink_metadata(&absolute).map_or(0, |meta| meta.len());
            bytes = bytes.saturating_add(size);
            if size > KEPT_SNAPSHOT_BYTES {
                return Some(LeftOut::Unhashed(absolute));
            }
            if bytes > KEPT_SNAPSHOT_BYTES {
                return Some(LeftOut::Unhashed(place));
            }
            continue;
        }
        // A directory that cannot be listed is not entered: its rules would leave out nothing the walk looks at.
        // Within a batch of decisions (agent-fs-sandbox's batch facts) each directory is listed once.
        let Some(entries) = agent_fs_sandbox::list_dir(&absolute, usize::MAX) else {
            continue;
        };
        let mut gitignore = false;
        for (name, kind) in entries.iter() {
            gitignore |= name == ".gitignore";
            let Some(kind) = kind else {
                continue;
            };
            pending.push((path.join(name), kind.is_dir()));
        }
        // Its `.gitignore` is read where the listing shows one (not asked for in every directory), before any
        // entry of it is looked at.
        if gitignore {
            learn(&mut snapshot, &path);
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
        look(root, &root.join(place), 1000, &mut |path, is_dir| {
            is_dir && path.file_name().is_some_and(|n| n == "target")
        })
        .left_out
    }

    #[test]
    fn what_the_project_ignores_is_held_but_what_a_tool_makes_again() {
        let project = tree(&[
            (
                ".gitignore",
                "private*/\n/target/\n.env\n/dist/\n/cache/\n/env/\n*.db\n",
            ),
            (".git/info/exclude", "mywork/\n"),
            ("private_data/p.txt", "work"),
            ("mywork/w.txt", "work"),
            ("data/.gitignore", "*\n!.gitignore\n"),
            ("data/d.txt", "work"),
            (
                "data/sub/target/x.o",
                "below an ignored directory, a build output's name is one",
            ),
            ("app.db", "rows"),
            ("src/main.rs", ""),
            ("src/.env", "SECRET=1"),
            ("target/debug/x", ""),
            ("dist/bundle.js", ""),
            (
                "cache/CACHEDIR.TAG",
                "Signature: 8a477f597d28d172789f06886806bc55",
            ),
            ("env/pyvenv.cfg", "home = /usr/bin"),
        ]);
        let root = std::fs::canonicalize(project.path()).unwrap();
        // Data the project keeps out of git is held, in ignored directories and as ignored files.
        assert_eq!(found(&root, "private_data"), None);
        assert_eq!(found(&root, "mywork"), None);
        assert_eq!(found(&root, "app.db"), None);
        // Below an ignored directory the snapshots hold, a directory with a build output's name is the user's
        // data as much as the rest, and held.
        assert_eq!(
            look(&root, &root.join("data"), 1000, &mut |_, _| false).left_out,
            None
        );
        assert_eq!(found(&root, "data/d.txt"), None);
        // Held while within the bounds on ignored data: the look says so, at, below and above such data.
        let ignored = |place: &str| look(&root, &root.join(place), 1000, &mut |_, _| false).ignored;
        assert!(ignored("private_data") && ignored("private_data/p.txt") && ignored("app.db"));
        assert!(ignored("data/d.txt"));
        assert!(!ignored("src/main.rs"));
        // A build output, a tagged cache and an environment the project ignores are left out.
        assert_eq!(found(&root, "dist"), Some(LeftOut::Path(root.join("dist"), true)));
        assert_eq!(
            found(&root, "cache"),
            Some(LeftOut::Path(root.join("cache"), true))
        );
        assert_eq!(found(&root, "env"), Some(LeftOut::Path(root.join("env"), true)));
        // A secret file by name and an excused build output are no loss; a tracked-looking tree holds all.
        assert_eq!(found(&root, "src"), None);
        assert_eq!(found(&root, "target"), None);
        // The root holds the rest; the walk stops at its cap.
        assert!(matches!(found(&root, "."), Some(LeftOut::Path(..))));
        assert_eq!(
            look(&root, &root.join("src"), 1, &mut |_, _| false).left_out,
            Some(LeftOut::TooMany(1))
        );
    }

    #[test]
    fn an_ignored_directory_too_large_to_hold_is_left_out_whole() {
        let project = tree(&[(".gitignore", "/samples/\n/small/\n"), ("small/a", "")]);
        let root = std::fs::canonicalize(project.path()).unwrap();
        let samples = root.join("samples");
        for part in 0..=crate::walk::HELD_IGNORED_ENTRIES / 1000 {
            let dir = samples.join(part.to_string());
            std::fs::create_dir_all(&dir).unwrap();
            for i in 0..1000 {
                std::fs::write(dir.join(i.to_string()), "").unwrap();
            }
        }
        assert_eq!(found(&root, "samples"), Some(LeftOut::Large(samples.clone())));
        assert_eq!(
            look(&root, &samples.join("0/1"), 1000, &mut |_, _| false).left_out,
            Some(LeftOut::Large(samples.join("0/1")))
        );
        assert_eq!(found(&root, "small"), None);
        // An ignored directory or file of more bytes than a snapshot holds of one (sparse files here).
        let sized = |path: &Path, len: u64| {
            std::fs::File::create(path).unwrap().set_len(len).unwrap();
        };
        sized(&root.join("small/b"), crate::walk::HELD_IGNORED_BYTES + 1);
        assert_eq!(found(&root, "small"), Some(LeftOut::Large(root.join("small"))));
        std::fs::remove_file(root.join("small/b")).unwrap();
        std::fs::write(root.join(".gitignore"), "/samples/\n/small/\n*.db\n").unwrap();
        sized(&root.join("dev.db"), crate::walk::HELD_IGNORED_BYTES + 1);
        assert_eq!(found(&root, "dev.db"), Some(LeftOut::Large(root.join("dev.db"))));
        // A file, or files together, of more than one snapshot hashes, ignored or not.
        std::fs::create_dir(root.join("src")).unwrap();
        let dump = root.join("src/dump.sql");
        sized(&dump, KEPT_SNAPSHOT_BYTES + 1);
        assert_eq!(found(&root, "src"), Some(LeftOut::Unhashed(dump.clone())));
        sized(&dump, KEPT_SNAPSHOT_BYTES / 2 + 1);
        sized(&root.join("src/dump2.sql"), KEPT_SNAPSHOT_BYTES / 2 + 1);
        assert_eq!(found(&root, "src"), Some(LeftOut::Unhashed(root.join("src"))));
    }
}
