//! A repository's git directory in a writable root: git's own writes (objects, index, refs, logs, `HEAD`,
//! `COMMIT_EDITMSG`) allowed where namespaces exist, what configures code that runs later kept read-only.

use std::path::{Path, PathBuf};

/// Entries of a git directory that a sandboxed command never writes: the configuration (a `core.fsmonitor`, a
/// `core.hooksPath`, an alias or a filter runs a program on the user's next `git status`), the hooks, `info/`
/// (attributes and excludes), what redirects git to another configuration (`commondir`, `config.worktree`, the
/// git directories of submodules and linked worktrees with their own configuration and hooks). Those that exist
/// are mounted read-only over themselves; one the command creates is removed when it ends.
const PROTECTED_ENTRIES: &[&str] = &[
    "config",
    "config.worktree",
    "commondir",
    "hooks",
    "info",
    "modules",
    "worktrees",
];

/// The git directories among the write-protected paths of a `workspace-write` plan with namespaces whose inside
/// git may write: a directory named `.git` holding `HEAD`, beneath a writable root and not beneath a read-only
/// one, that no deny or ask rule on writes names (a rule's place in it, on it or above it keeps it read-only
/// whole), of a repository the command runs in: its working tree holds a root. A repository nested below the
/// roots keeps its git directory read-only whole: git working in the outer one has no business in it, and could
/// delete it (`git clean -ffd` removes an untracked nested repository, `git reset --hard` to a commit where its
/// place is a file).
pub(crate) fn writable_git_dirs(
    write_protected: &[PathBuf],
    roots: &[PathBuf],
    read_only_roots: &[PathBuf],
    rule_places: &[PathBuf],
) -> Vec<PathBuf> {
    write_protected
        .iter()
        .filter(|path| path.file_name().is_some_and(|name| name == ".git"))
        .filter(|path| std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir()))
        .filter(|path| path.join("HEAD").is_file())
        .filter(|path| roots.iter().any(|root| path.starts_with(root)))
        .filter(|path| {
            path.parent()
                .is_some_and(|tree| roots.iter().any(|root| root.starts_with(tree)))
        })
        .filter(|path| !read_only_roots.iter().any(|root| path.starts_with(root)))
        .filter(|path| {
            !rule_places
                .iter()
                .any(|place| place.starts_with(path) || path.starts_with(place))
        })
        .cloned()
        .collect()
}

/// The protected entries of the git directory `git_dir`, whether they exist or not.
pub(crate) fn protected_entries(git_dir: &Path) -> impl Iterator<Item = PathBuf> + '_ {
    PROTECTED_ENTRIES.iter().map(move |entry| git_dir.join(entry))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_repository_in_a_writable_root_that_no_rule_names_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("w");
        let read_only = dir.path().join("r");
        for repo in [&root, &read_only] {
            std::fs::create_dir_all(repo.join(".git/objects")).unwrap();
            std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        }
        std::fs::create_dir_all(root.join("sub/.git")).unwrap();
        std::fs::create_dir_all(root.join("nested/.git")).unwrap();
        std::fs::write(root.join("nested/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        let found = vec![
            root.join(".git"),
            read_only.join(".git"),
            root.join("sub/.git"),
            root.join("nested/.git"),
            root.join(".claude"),
        ];
        let roots = vec![root.clone()];
        let read_only_roots = vec![read_only.clone()];
        // The nested repository is not the one the command runs in.
        assert_eq!(
            writable_git_dirs(&found, &roots, &read_only_roots, &[]),
            vec![root.join(".git")]
        );
        // A command that runs in the nested one (a root there) writes it, and the outer one it is inside of.
        let both = vec![root.clone(), root.join("nested/src")];
        assert_eq!(
            writable_git_dirs(&found, &both, &read_only_roots, &[]),
            vec![root.join(".git"), root.join("nested/.git")]
        );
        let rule = vec![root.join(".git/refs")];
        assert!(writable_git_dirs(&found, &roots, &read_only_roots, &rule).is_empty());
        assert!(protected_entries(&root.join(".git")).any(|p| p == root.join(".git/hooks")));
    }
}
