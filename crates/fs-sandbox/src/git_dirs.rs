//! Git directories under any name: git takes a directory for a repository by what it holds, not by its name, and
//! obeys its configuration when it runs there; the entries of such a directory that configure what git runs are
//! protected wherever it is ([`crate::ProtectedPaths`]).

use std::path::Path;

use crate::protected::{eq_name, names};

/// The entries of a git directory that configure the programs git runs there (`core.fsmonitor`, `core.pager`,
/// `core.hooksPath` and aliases in `config`, the hooks, the attributes and excludes of `info/`) or point it at
/// another git directory whose configuration then applies (`commondir`, `gitdir`, the git directories of
/// submodules and linked worktrees): the list crates/os-sandbox/src/gitdir.rs keeps read-only in `.git`, and
/// `gitdir`. Protected in any directory git takes for a git directory by what it holds ([`is_git_directory`]),
/// whatever its name: `.git` is only the name git looks for first.
const GIT_DIR_CONFIG: [&str; 8] = [
    "config",
    "config.worktree",
    "hooks",
    "info",
    "commondir",
    "gitdir",
    "modules",
    "worktrees",
];

/// Whether git takes `dir` for a git directory by what it holds, as its repository discovery does in every
/// directory it starts from or passes on the way up (right after looking for `./.git`): a `HEAD` with `objects/`
/// and `refs/`. Looser on purpose: a `HEAD` or a `commondir` alone counts too (git finds `objects/` and `refs/`
/// through `commondir`, and a line may add what is missing later), and so do `objects/` with `refs/` (the
/// directory a `commondir` elsewhere names, whose `config` then applies). Looked up on disk, following links.
pub(crate) fn is_git_directory(dir: &Path) -> bool {
    let is_dir = |name: &str| std::fs::metadata(dir.join(name)).is_ok_and(|meta| meta.is_dir());
    let exists = |name: &str| std::fs::symlink_metadata(dir.join(name)).is_ok();
    exists("HEAD") || exists("commondir") || (is_dir("objects") && is_dir("refs"))
}

/// The entry of the directory `dir` that `path` is or lies beneath, if it is one that configures the programs git
/// runs (`config`, `hooks`, `info`, `commondir`, `gitdir`, `modules`, `worktrees`, …): where a write
/// changes what git runs once `dir` is a git directory. For a check of a whole line, which may make `dir` one
/// (`git init --bare NAME`, a `HEAD` written beside) before it writes there.
pub fn git_directory_entry(path: &Path, dir: &Path) -> Option<&'static str> {
    let first = names(path.strip_prefix(dir).ok()?).next()?;
    GIT_DIR_CONFIG.iter().copied().find(|known| eq_name(first, known))
}

/// Why a write to `absolute` changes what git runs in a git directory that is not named `.git` (a bare
/// repository, or a directory of the project given a `HEAD`, `objects/` and `refs/`), or `None`: `absolute` is,
/// or lies beneath, one of the [`GIT_DIR_CONFIG`] entries of a directory that [`is_git_directory`] now, or the
/// `HEAD` that would make a directory holding a `config` one, or a `commondir` anywhere. Git
/// obeys that directory's `config` (`core.worktree = ..` makes it the project's work tree; `core.fsmonitor` runs
/// a program on every `git status`) when the user later runs git inside it. Only a path spelling one of those
/// names is looked up on disk, so the other checks of a path cost nothing more.
pub(crate) fn git_directory_reason(absolute: &Path) -> Option<String> {
    let last = absolute.file_name()?;
    // The marker git needs in every git directory, written beside a `config` file that is there already, makes that
    // `config` one git obeys: whichever of the two a line writes last, it asks. A `commondir` points git at
    // another directory's `config` (one with `objects/` and `refs/` and no `HEAD`), so it is protected wherever it is.
    if eq_name(last, "HEAD")
        && let Some(dir) = absolute.parent()
        && std::fs::metadata(dir.join("config")).is_ok_and(|meta| !meta.is_dir())
    {
        return Some(format!(
            "a `HEAD` beside `{}/config` makes `{}` a git directory, whose `config` git obeys when run there (`{}`)",
            dir.display(),
            dir.display(),
            absolute.display()
        ));
    }
    if eq_name(last, "commondir") {
        return Some(format!(
            "a `commondir` names the git directory whose `config` git obeys (`{}`)",
            absolute.display()
        ));
    }
    absolute.ancestors().find_map(|entry| {
        let name = entry.file_name()?;
        let known = GIT_DIR_CONFIG.iter().find(|known| eq_name(name, known))?;
        let dir = entry.parent()?;
        is_git_directory(dir).then(|| {
            format!(
                "`{}` is a git directory by what it holds (`HEAD`, `objects/`, `refs/`): git obeys its `{known}` \
                 when run there (`{}`)",
                dir.display(),
                absolute.display()
            )
        })
    })
}
