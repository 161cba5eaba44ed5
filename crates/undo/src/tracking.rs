//! Whether git tracks a path of a work tree, from its index alone: no `git` runs, no configuration is obeyed, and
//! the index is read only as far as the entries that sort before the path.

use std::io::Read as _;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Component, Path, PathBuf};

use crate::index::Entries;

/// What git's index says of one path of a work tree ([`git_tracking`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitTracking {
    /// The index lists the path, or an entry that holds it: a file, link or submodule at one of its parents, or a
    /// directory of a sparse index above it.
    Tracked,
    /// The index was read, and lists neither.
    Untracked,
    /// The directory holds no `.git`: it is not the top of a git work tree.
    NoRepository,
    /// There is a `.git`, but its index cannot be told apart from one that lists the path; why, in words.
    Unknown(String),
}

/// The longest `.git` file (`gitdir: …`) or `commondir` file read.
const POINTER_MAX: u64 = 4096;

/// The longest repository configuration read for its object format.
const CONFIG_MAX: u64 = 1 << 20;

/// Whether the index of the git work tree whose top is `work_tree` lists `relative` (a path below it, its
/// components plain names). `work_tree` must hold `.git` itself: a directory, or the file of a worktree or
/// submodule (`gitdir: …`), whose git directory's `index` is read (a repository nothing was added to yet, with a
/// `HEAD` and no index, has an empty one, as git reads it). The index must be of version 2 to 4 with SHA-1
/// names and whole (not split: a `sharedindex.*` beside it makes the answer [`GitTracking::Unknown`]). Entries are
/// read in order and the reading stops at the first that sorts past `relative`, so the cost is that of the
/// entries before it, whatever the size of the index.
pub fn git_tracking(work_tree: &Path, relative: &Path) -> GitTracking {
    let target = match plain_path(relative) {
        Some(target) => target,
        None => {
            return GitTracking::Unknown(format!("`{}` is not a plain relative path", relative.display()));
        }
    };
    let git_dir = match git_dir(work_tree) {
        Ok(dir) => dir,
        Err(answer) => return answer,
    };
    let common_dir = match git_dir.join("commondir") {
        file if file.exists() => match pointer(&file, "") {
            Some(dir) => git_dir.join(dir),
            None => return GitTracking::Unknown(format!("`{}` cannot be read", file.display())),
        },
        _ => git_dir.clone(),
    };
    if let Some(why) = other_object_format(&common_dir) {
        return GitTracking::Unknown(why);
    }
    let dirs = if common_dir == git_dir {
        &[&git_dir][..]
    } else {
        &[&git_dir, &common_dir][..]
    };
    for dir in dirs {
        let split = std::fs::read_dir(dir).map(|entries| {
            entries
                .filter_map(Result::ok)
                .any(|entry| entry.file_name().as_bytes().starts_with(b"sharedindex."))
        });
        match split {
            Ok(false) => {}
            Ok(true) => {
                return GitTracking::Unknown(format!(
                    "the index of `{}` is split (`sharedindex.*`): part of it lies in another file",
                    git_dir.display()
                ));
            }
            Err(e) => return GitTracking::Unknown(format!("`{}` cannot be read: {e}", dir.display())),
        }
    }
    let index = git_dir.join("index");
    let file = match std::fs::File::open(&index) {
        Ok(file) => file,
        // A repository nothing was added to yet has no index: git reads that as an empty one.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && git_dir.join("HEAD").is_file() => {
            return GitTracking::Untracked;
        }
        Err(e) => {
            return GitTracking::Unknown(format!("git's index `{}` cannot be read: {e}", index.display()));
        }
    };
    let unreadable = || {
        GitTracking::Unknown(format!(
            "git's index `{}` cannot be read as an index of version 2 to 4 with SHA-1 names",
            index.display()
        ))
    };
    let Some(mut entries) = Entries::new(std::io::BufReader::new(file)) else {
        return unreadable();
    };
    loop {
        let entry = match entries.next_entry() {
            None => return unreadable(),
            Some(None) => return GitTracking::Untracked,
            Some(Some(entry)) => entry,
        };
        let name = entry.name;
        let holds = target
            .strip_prefix(name)
            .is_some_and(|rest| rest.is_empty() || rest.first() == Some(&b'/') || name.last() == Some(&b'/'));
        if holds {
            return GitTracking::Tracked;
        }
        // Every entry that holds the target sorts before it (a parent's path is a prefix of the target's).
        if name > target.as_slice() {
            return GitTracking::Untracked;
        }
    }
}

/// `relative` as the index spells it (`/`-separated bytes), when it is made of plain names only.
fn plain_path(relative: &Path) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    for component in relative.components() {
        let Component::Normal(name) = component else {
            return None;
        };
        if !bytes.is_empty() {
            bytes.push(b'/');
        }
        bytes.extend_from_slice(name.as_bytes());
    }
    (!bytes.is_empty()).then_some(bytes)
}

/// The git directory of the work tree whose top is `work_tree`: its `.git` directory, or the one its `.git` file
/// names (`gitdir: …`, a worktree's or a submodule's); else what [`git_tracking`] answers.
fn git_dir(work_tree: &Path) -> Result<PathBuf, GitTracking> {
    let dot_git = work_tree.join(".git");
    match std::fs::metadata(&dot_git) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(GitTracking::NoRepository),
        Err(e) => Err(GitTracking::Unknown(format!(
            "`{}` cannot be read: {e}",
            dot_git.display()
        ))),
        Ok(meta) if meta.is_dir() => Ok(dot_git),
        Ok(_) => pointer(&dot_git, "gitdir:")
            .map(|dir| work_tree.join(dir))
            .ok_or_else(|| {
                GitTracking::Unknown(format!(
                    "`{}` is not a `gitdir:` file git reads",
                    dot_git.display()
                ))
            }),
    }
}

/// The path a pointer file of git holds after `prefix` (`gitdir: ../.git/worktrees/x`, a `commondir` file).
fn pointer(file: &Path, prefix: &str) -> Option<PathBuf> {
    let mut text = String::new();
    std::fs::File::open(file)
        .ok()?
        .take(POINTER_MAX)
        .read_to_string(&mut text)
        .ok()?;
    let path = text.strip_prefix(prefix)?.trim();
    (!path.is_empty()).then(|| PathBuf::from(path))
}

/// Why the repository's objects are not named by SHA-1, when its configuration says another object format (or a
/// second one) is in use, or cannot be read: such an index has entries of another length.
fn other_object_format(common_dir: &Path) -> Option<String> {
    let config = common_dir.join("config");
    let mut text = Vec::new();
    match std::fs::File::open(&config) {
        Ok(file) => {
            if let Err(e) = file.take(CONFIG_MAX).read_to_end(&mut text) {
                return Some(format!("`{}` cannot be read: {e}", config.display()));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(format!("`{}` cannot be read: {e}", config.display())),
    }
    // git writes `objectformat` (and `compatobjectformat`) only for a format other than SHA-1; keys compare
    // without regard to case.
    text.make_ascii_lowercase();
    text.windows(b"objectformat".len())
        .any(|window| window == b"objectformat")
        .then(|| {
            format!(
                "`{}` names an object format: its index may not name objects by SHA-1",
                config.display()
            )
        })
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    const LOCAL: &str = ".claude/settings.local.json";

    /// Runs git in `dir` with no configuration of the user's, and `config` (`key=value`) given on its command
    /// line; panics when it fails.
    fn git(dir: &Path, config: &[&str], args: &[&str]) -> String {
        let mut command = Command::new("git");
        for pair in config {
            command.args(["-c", pair]);
        }
        let out = command
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// A path longer than the 12 bits of an entry's length: one the index spells out to its NUL.
    fn long_path() -> String {
        format!("deep/{}/file.rs", ["a-long-name"; 400].join("/"))
    }

    /// Adds an entry for `path` to the index of `dir` without a file (the path is too long for one).
    fn add_entry(dir: &Path, config: &[&str], path: &str) {
        let blob = git(dir, &[], &["hash-object", "-w", "--stdin"]);
        let info = format!("100644,{},{path}", blob.trim());
        git(dir, config, &["update-index", "--add", "--cacheinfo", &info]);
    }

    /// A work tree with the local settings file, other files sorting before and after it.
    fn work_tree(config: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), config, &["init", "-q"]);
        for name in [
            ".agent-guard/settings.json",
            ".claude/settings.json",
            LOCAL,
            ".github/ci.yml",
            "src/main.rs",
        ] {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, name).unwrap();
        }
        dir
    }

    #[test]
    fn an_index_git_wrote_in_each_version_tells_tracked_from_untracked() {
        for version in ["2", "3", "4"] {
            let dir = work_tree(&[]);
            let tree = dir.path();
            let config = format!("index.version={version}");
            git(tree, &[&config], &["add", "."]);
            git(tree, &[&config], &["rm", "-q", "--cached", LOCAL]);
            add_entry(tree, &[&config], &long_path());
            if version == "3" {
                // An intent to add is an entry with extended flags, which version 3 exists for.
                std::fs::write(tree.join("src/new.rs"), "").unwrap();
                git(tree, &[&config], &["add", "-N", "src/new.rs"]);
            }
            let written = std::fs::read(tree.join(".git/index")).unwrap();
            assert_eq!(
                written.get(4..8),
                Some(&[0, 0, 0, version.parse::<u8>().unwrap()][..])
            );
            assert_eq!(
                git_tracking(tree, Path::new(LOCAL)),
                GitTracking::Untracked,
                "version {version}"
            );
            for tracked in [".claude/settings.json", "src/main.rs", ".github/ci.yml"] {
                assert_eq!(
                    git_tracking(tree, Path::new(tracked)),
                    GitTracking::Tracked,
                    "version {version}"
                );
            }
            assert_eq!(
                git_tracking(tree, Path::new(&long_path())),
                GitTracking::Tracked,
                "version {version}"
            );
            assert_eq!(
                git_tracking(tree, Path::new("src/other.rs")),
                GitTracking::Untracked
            );
            assert_eq!(git_tracking(tree, Path::new("zzz")), GitTracking::Untracked);
            if version == "3" {
                assert_eq!(git_tracking(tree, Path::new("src/new.rs")), GitTracking::Tracked);
            }
            git(tree, &[&config], &["add", "-f", LOCAL]);
            assert_eq!(
                git_tracking(tree, Path::new(LOCAL)),
                GitTracking::Tracked,
                "version {version}"
            );
        }
    }

    #[test]
    fn a_directory_of_a_sparse_index_holds_what_is_below_it() {
        let dir = work_tree(&[]);
        let tree = dir.path();
        git(tree, &[], &["add", "."]);
        git(tree, &[], &["commit", "-q", "-m", "first"]);
        git(
            tree,
            &[],
            &["sparse-checkout", "set", "--cone", "--sparse-index", "src"],
        );
        assert!(
            git(tree, &[], &["ls-files", "--sparse"])
                .lines()
                .any(|l| l == ".claude/")
        );
        // The file is back on the disk (someone made it again), listed only through `.claude/`.
        std::fs::create_dir_all(tree.join(".claude")).unwrap();
        std::fs::write(tree.join(LOCAL), "{}").unwrap();
        assert_eq!(git_tracking(tree, Path::new(LOCAL)), GitTracking::Tracked);
        assert_eq!(
            git_tracking(tree, Path::new("src/other.rs")),
            GitTracking::Untracked
        );
    }

    #[test]
    fn the_reading_stops_at_the_first_entry_past_the_path() {
        let dir = work_tree(&["index.version=2"]);
        let tree = dir.path();
        git(tree, &[], &["add", "."]);
        git(tree, &[], &["rm", "-q", "--cached", LOCAL]);
        // Cut the index just after the first entry past the path (`.github/ci.yml`): what follows is gone.
        let index = tree.join(".git/index");
        let bytes = std::fs::read(&index).unwrap();
        let at = bytes
            .windows(b".github/ci.yml".len())
            .position(|w| w == b".github/ci.yml")
            .unwrap();
        // Entries start 12 bytes in and are padded to multiples of 8: the next one starts at 4 modulo 8.
        let end = (at + b".github/ci.yml".len() + 1..)
            .find(|end| end % 8 == 4)
            .unwrap();
        std::fs::write(&index, &bytes[..end]).unwrap();
        assert_eq!(git_tracking(tree, Path::new(LOCAL)), GitTracking::Untracked);
        assert_eq!(
            git_tracking(tree, Path::new(".claude/settings.json")),
            GitTracking::Tracked
        );
        // A path past the cut needs what is gone: the index cannot be read that far.
        assert!(matches!(
            git_tracking(tree, Path::new("src/main.rs")),
            GitTracking::Unknown(_)
        ));
    }

    #[test]
    fn a_worktree_reads_its_own_index_through_its_git_file() {
        let dir = work_tree(&[]);
        let tree = dir.path();
        git(tree, &[], &["add", "."]);
        git(tree, &[], &["commit", "-q", "-m", "first"]);
        let other = tempfile::tempdir().unwrap();
        let linked = other.path().join("wt");
        git(tree, &[], &["worktree", "add", "-q", linked.to_str().unwrap()]);
        assert!(linked.join(".git").is_file());
        assert_eq!(git_tracking(&linked, Path::new(LOCAL)), GitTracking::Tracked);
        // Untracked in the worktree's own index, still tracked in the main one.
        git(&linked, &[], &["rm", "-q", "--cached", LOCAL]);
        assert_eq!(git_tracking(&linked, Path::new(LOCAL)), GitTracking::Untracked);
        assert_eq!(git_tracking(tree, Path::new(LOCAL)), GitTracking::Tracked);
    }

    #[test]
    fn an_entry_above_the_path_holds_it() {
        // A tracked link `.claude` to a tracked directory: the file read through it came with the repository.
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path();
        git(tree, &[], &["init", "-q"]);
        std::fs::create_dir(tree.join("shipped")).unwrap();
        std::fs::write(tree.join("shipped/settings.local.json"), "{}").unwrap();
        std::os::unix::fs::symlink("shipped", tree.join(".claude")).unwrap();
        git(tree, &[], &["add", "."]);
        assert_eq!(git_tracking(tree, Path::new(LOCAL)), GitTracking::Tracked);
    }

    #[test]
    fn what_cannot_be_read_is_unknown_and_no_git_is_no_repository() {
        let plain = tempfile::tempdir().unwrap();
        assert_eq!(
            git_tracking(plain.path(), Path::new(LOCAL)),
            GitTracking::NoRepository
        );
        // A repository nothing was added to yet has an empty index; a `.git` without `HEAD` is no repository.
        let fresh = work_tree(&[]);
        assert_eq!(
            git_tracking(fresh.path(), Path::new(LOCAL)),
            GitTracking::Untracked
        );
        std::fs::remove_file(fresh.path().join(".git/HEAD")).unwrap();
        assert!(matches!(
            git_tracking(fresh.path(), Path::new(LOCAL)),
            GitTracking::Unknown(_)
        ));
        // A split index keeps entries in another file.
        let split = work_tree(&[]);
        git(split.path(), &[], &["add", "."]);
        git(split.path(), &[], &["rm", "-q", "--cached", LOCAL]);
        git(split.path(), &[], &["update-index", "--split-index"]);
        let why = git_tracking(split.path(), Path::new(LOCAL));
        assert!(
            matches!(&why, GitTracking::Unknown(w) if w.contains("split")),
            "{why:?}"
        );
        // An index that is not one.
        let broken = work_tree(&[]);
        git(broken.path(), &[], &["add", "."]);
        std::fs::write(broken.path().join(".git/index"), b"DIRC\0\0\0\x05\0\0\0\x01").unwrap();
        assert!(matches!(
            git_tracking(broken.path(), Path::new(LOCAL)),
            GitTracking::Unknown(_)
        ));
        assert!(matches!(
            git_tracking(broken.path(), Path::new("../x")),
            GitTracking::Unknown(_)
        ));
    }

    #[test]
    fn an_index_of_sha256_names_is_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path();
        let init = Command::new("git")
            .args(["init", "-q", "--object-format=sha256"])
            .current_dir(tree)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .unwrap();
        if !init.success() {
            return; // a git without SHA-256 repositories
        }
        std::fs::create_dir(tree.join(".claude")).unwrap();
        std::fs::write(tree.join(LOCAL), "{}").unwrap();
        std::fs::write(tree.join("z"), "z").unwrap();
        git(tree, &[], &["add", "z"]);
        let why = git_tracking(tree, Path::new(LOCAL));
        assert!(
            matches!(&why, GitTracking::Unknown(w) if w.contains("object format")),
            "{why:?}"
        );
    }
}

/// What git's index of a work tree holds: each path's object name, to tell whether a file's content is a blob the
/// repository keeps.
#[derive(Debug)]
pub struct CommittedFiles {
    work_tree: PathBuf,
    blobs: std::collections::HashMap<Vec<u8>, [u8; 20]>,
}

impl CommittedFiles {
    /// The index of the work tree whose top is `work_tree` and holds its `.git` directory; `None` when there is
    /// none or it cannot be read as an index of version 2 to 4 with SHA-1 names. A worktree's or a submodule's
    /// git directory lies elsewhere (its `.git` is a `gitdir:` file), where a command confined to the work tree
    /// may not reach: what that repository holds is not there for the command to read anyway, so its index
    /// names nothing here.
    pub fn read(work_tree: &Path) -> Option<Self> {
        let git_dir = git_dir(work_tree).ok()?;
        let inside = std::fs::canonicalize(&git_dir)
            .ok()
            .zip(std::fs::canonicalize(work_tree).ok())
            .is_some_and(|(dir, top)| dir.starts_with(top));
        if !inside {
            return None;
        }
        let file = std::fs::File::open(git_dir.join("index")).ok()?;
        let mut entries = Entries::new(std::io::BufReader::with_capacity(1 << 16, file))?;
        let mut blobs = std::collections::HashMap::new();
        while let Some(entry) = entries.next_entry()? {
            // A merge stage's entry is not the content the work tree holds.
            if entry.flags & 0x3000 == 0 && !entry.stat.is_gitlink() {
                blobs.insert(entry.name.to_vec(), entry.oid);
            }
        }
        Some(Self {
            work_tree: work_tree.to_path_buf(),
            blobs,
        })
    }

    /// Whether `content`, the whole content of the file at `path` (inside the work tree), is the blob the index
    /// names for that path: its object name is the index's. A copy of another repository's index (or a forged one)
    /// names the real content only where whoever made it knew that content already.
    pub fn holds(&self, path: &Path, content: &[u8]) -> bool {
        use sha1::Digest as _;
        let Some(relative) = path.strip_prefix(&self.work_tree).ok().and_then(plain_path) else {
            return false;
        };
        let Some(oid) = self.blobs.get(&relative) else {
            return false;
        };
        let mut hasher = sha1::Sha1::new();
        hasher.update(format!("blob {}\0", content.len()).as_bytes());
        hasher.update(content);
        hasher.finalize().as_slice() == oid.as_slice()
    }
}

#[cfg(test)]
mod committed_tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ran = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .output()
            .unwrap();
        assert!(ran.status.success(), "git {args:?}: {ran:?}");
    }

    #[test]
    fn a_file_is_held_when_its_content_is_the_blob_the_index_names() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("config")).unwrap();
        std::fs::write(root.join("config/a.yml"), "token: one\n").unwrap();
        git(root, &["init", "-q"]);
        git(root, &["add", "config/a.yml"]);
        let committed = CommittedFiles::read(root).unwrap();
        let path = root.join("config/a.yml");
        assert!(committed.holds(&path, b"token: one\n"));
        // Other content under the same name, whatever its size or times, is not held.
        assert!(!committed.holds(&path, b"token: two\n"));
        assert!(!committed.holds(&root.join("config/b.yml"), b"token: one\n"));
        // A `gitdir:` file naming a git directory outside the work tree (a worktree's, a submodule's): the
        // repository may be out of a confined command's reach, so its index names nothing; without an index
        // there is nothing to hold either.
        let sub = root.join("config");
        std::fs::write(
            sub.join(".git"),
            format!("gitdir: {}\n", root.join(".git").display()),
        )
        .unwrap();
        assert!(CommittedFiles::read(&sub).is_none());
        std::fs::remove_file(sub.join(".git")).unwrap();
        git(root, &["commit", "-qm", "a"]);
        git(root, &["worktree", "add", "-q", "wt"]);
        assert!(root.join("wt/.git").is_file());
        assert_eq!(
            std::fs::read(root.join("wt/config/a.yml")).unwrap(),
            b"token: one\n"
        );
        assert!(CommittedFiles::read(&root.join("wt")).is_none());
        assert!(CommittedFiles::read(&root.join("nowhere")).is_none());
    }
}
