//! The project a working directory belongs to: where its settings files are found and which directory is its root.

use std::fs::Metadata;
use std::path::{Path, PathBuf};

/// The entries that mark a directory as the top of a project: a git repository (a `.git` directory, or the `.git`
/// file of a worktree or submodule), the coding agent's settings folder, agent-guard's.
const PROJECT_MARKERS: [&str; 3] = [".git", ".claude", ".agent-guard"];

/// The project root of the working directory `cwd`: the nearest of `cwd` and its ancestors that holds `.git` (a
/// directory, or the file of a worktree), `.claude` or `.agent-guard`, or `cwd` itself when none does. A coding
/// agent that ran `cd src` still works in the project it started in: the project's settings apply and its files are
/// inside the roots.
///
/// The search is bounded, since a root higher than `cwd` widens what may be read and written to the whole project:
/// - it stops below `home`: the home directory holds the user's own `~/.claude` (and often a `.git` of dotfiles),
///   which must not make the whole home a project; `home` is the root only when it is `cwd` itself;
/// - it never reaches `/`, nor goes into or past a directory every user may write to (`/tmp`);
/// - a marker counts only when its owner is the owner of `cwd` (on Unix): a `.claude` folder someone else created
///   in a shared directory above (`/tmp/.claude`) neither widens the roots nor brings its rules, the way git
///   refuses a repository another user owns.
///
/// A relative `cwd` is taken against the process's current directory. The paths are compared as written and by
/// identity (device and inode), so a home reached through a symbolic link still stops the search.
pub fn project_root(cwd: &Path, home: Option<&Path>) -> PathBuf {
    project_root_declared(cwd, home, None)
}

/// [`project_root`], for a coding agent that says which project its session works in (`declared`, the directory
/// it was started in, as Claude Code's `CLAUDE_PROJECT_DIR`): when `declared` is `cwd` or one of its ancestors that
/// the search reaches within its bounds, and is owned by the owner of `cwd`, the root is the higher of `declared`
/// and the nearest marked ancestor. So an agent that `cd`s into a nested package with a `.claude` or `.git` of its
/// own still works in the project it was started in, as the agent itself sees it, while a declaration never narrows
/// the root below a marked ancestor nor widens it past the bounds: not to the home directory, `/`, or a directory
/// every user may write to. A relative or unrelated `declared` is not taken.
pub fn project_root_declared(cwd: &Path, home: Option<&Path>, declared: Option<&Path>) -> PathBuf {
    let cwd = std::path::absolute(cwd)
        .map(|absolute| crate::path::normalize(&absolute))
        .unwrap_or_else(|_| cwd.to_owned());
    let Ok(cwd_meta) = std::fs::metadata(&cwd) else {
        return cwd;
    };
    let home = home.map(|home| HomeDir {
        path: crate::path::normalize(home),
        meta: std::fs::metadata(home).ok(),
    });
    // The declared project, while the search has still to reach it.
    // A declared directory that holds the home directory would make the home's files the project's.
    let mut declared = declared
        .filter(|dir| dir.is_absolute())
        .map(crate::path::normalize)
        .filter(|dir| cwd.starts_with(dir))
        .filter(|dir| home.as_ref().is_none_or(|home| !home.is_within(dir)));
    let mut root = None;
    let mut marked = false;
    for dir in cwd.ancestors() {
        let is_cwd = dir == cwd;
        if !is_cwd && (dir.parent().is_none() || home.as_ref().is_some_and(|home| home.is(dir))) {
            break;
        }
        // A directory every user may write to (`/tmp`) is nobody's project: whoever made a marker there would
        // make every directory below it one project, and it is never a declared project either. Below a declared
        // project the user started the session in, such a directory is one of the project's own (`chmod 777 tmp`
        // by a command): the search passes it, so that it does not cut the project's settings off below it.
        let open_to_all = !is_cwd && std::fs::metadata(dir).is_ok_and(|meta| world_writable(&meta));
        if declared.as_deref() == Some(dir) {
            declared = None;
            if !open_to_all && std::fs::metadata(dir).is_ok_and(|meta| same_owner(&meta, &cwd_meta)) {
                root = Some(dir);
            }
        }
        if open_to_all {
            if declared.is_none() {
                break;
            }
            continue;
        }
        if !marked && has_marker(dir, &cwd_meta) {
            marked = true;
            root = Some(dir);
        }
        if marked && declared.is_none() {
            break;
        }
    }
    root.map_or(cwd.clone(), Path::to_owned)
}

/// Whether `dir` holds a project marker its owner made (`.git`, `.claude` or `.agent-guard`), as [`project_root`]
/// reads them: a directory without one is a project root only as the working directory itself. agent-guard makes
/// no marker in such a directory (its audit log goes elsewhere), since a marker would make it the root of every
/// directory below it.
pub fn is_marked_project(dir: &Path) -> bool {
    std::fs::metadata(dir).is_ok_and(|meta| has_marker(dir, &meta))
}

/// The home directory, as written and as a file.
struct HomeDir {
    path: PathBuf,
    meta: Option<Metadata>,
}

impl HomeDir {
    /// Whether the home directory is `dir` or lies below it, as written or as resolved.
    fn is_within(&self, dir: &Path) -> bool {
        self.path.starts_with(dir)
            || std::fs::canonicalize(&self.path)
                .ok()
                .zip(std::fs::canonicalize(dir).ok())
                .is_some_and(|(home, dir)| home.starts_with(dir))
    }

    /// Whether `dir` is the home directory.
    fn is(&self, dir: &Path) -> bool {
        dir == self.path
            || self
                .meta
                .as_ref()
                .is_some_and(|home| std::fs::metadata(dir).is_ok_and(|meta| same_file(&meta, home)))
    }
}

/// Whether `dir` holds a project marker owned by the owner of the working directory.
fn has_marker(dir: &Path, cwd: &Metadata) -> bool {
    PROJECT_MARKERS
        .iter()
        .any(|marker| std::fs::symlink_metadata(dir.join(marker)).is_ok_and(|meta| same_owner(&meta, cwd)))
}

#[cfg(unix)]
fn world_writable(meta: &Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    meta.permissions().mode() & 0o002 != 0
}

#[cfg(not(unix))]
fn world_writable(_: &Metadata) -> bool {
    false
}

#[cfg(unix)]
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &Metadata, _: &Metadata) -> bool {
    false
}

#[cfg(unix)]
fn same_owner(a: &Metadata, b: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    a.uid() == b.uid()
}

#[cfg(not(unix))]
fn same_owner(_: &Metadata, _: &Metadata) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(root: &Path, list: &[&str]) {
        for dir in list {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
    }

    /// A marker in a directory every user may write to (a `/tmp/.agent-guard` someone left) makes no project of
    /// the directories below it.
    #[test]
    fn a_world_writable_directory_is_no_project() {
        use std::os::unix::fs::PermissionsExt as _;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        dirs(&root, &["team/.agent-guard", "team/work/src"]);
        std::fs::set_permissions(root.join("team"), std::fs::Permissions::from_mode(0o1777)).unwrap();
        let home = root.join("home");
        assert_eq!(
            project_root(&root.join("team/work/src"), Some(&home)),
            root.join("team/work/src")
        );
        // Its own project below it is found as usual.
        dirs(&root, &["team/work/.git"]);
        assert_eq!(
            project_root(&root.join("team/work/src"), Some(&home)),
            root.join("team/work")
        );
    }

    #[test]
    fn the_nearest_marked_ancestor_is_the_root() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        dirs(
            &root,
            &["proj/.git", "proj/src/deep", "proj/sub/.claude", "proj/sub/lib"],
        );
        let home = root.join("home");
        assert_eq!(
            project_root(&root.join("proj/src/deep"), Some(&home)),
            root.join("proj")
        );
        assert_eq!(project_root(&root.join("proj"), Some(&home)), root.join("proj"));
        // A nested project with settings of its own is the nearer one.
        assert_eq!(
            project_root(&root.join("proj/sub/lib"), Some(&home)),
            root.join("proj/sub")
        );
        // `.git` as a file (a worktree) and `.agent-guard` mark a project too.
        dirs(&root, &["wt/a", "ag/.agent-guard", "ag/b"]);
        std::fs::write(root.join("wt/.git"), "gitdir: elsewhere").unwrap();
        assert_eq!(project_root(&root.join("wt/a"), None), root.join("wt"));
        assert_eq!(project_root(&root.join("ag/b"), None), root.join("ag"));
        // A relative or unnormalised working directory gives the same root.
        assert_eq!(
            project_root(&root.join("proj/src/../src/deep/"), None),
            root.join("proj")
        );
    }

    /// The project the coding agent says its session works in is the root when it is an ancestor of the working
    /// directory above a nested project's marker; it never narrows the root, nor passes the bounds.
    #[test]
    fn a_declared_project_above_a_nested_one_is_the_root() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        dirs(
            &root,
            &[
                "home/mono/.git",
                "home/mono/pkg/.claude/hooks",
                "home/mono/plain/src",
                "home/other",
            ],
        );
        let home = root.join("home");
        let mono = home.join("mono");
        let hooks = mono.join("pkg/.claude/hooks");
        // Without a declaration the nearer project is the root; with one, the project the agent started in.
        assert_eq!(project_root(&hooks, Some(&home)), mono.join("pkg"));
        assert_eq!(project_root_declared(&hooks, Some(&home), Some(&mono)), mono);
        // A declaration written unnormalised is the same directory.
        assert_eq!(
            project_root_declared(&hooks, Some(&home), Some(&mono.join("pkg/../"))),
            mono
        );
        // Declared below the nearest marker: the marked ancestor stays the root (a declaration never narrows).
        assert_eq!(
            project_root_declared(&mono.join("plain/src"), Some(&home), Some(&mono.join("plain"))),
            mono
        );
        // Declared without any marker on the way: the declared project, not the working directory alone.
        dirs(&root, &["loose/a/b"]);
        assert_eq!(
            project_root_declared(&root.join("loose/a/b"), None, Some(&root.join("loose"))),
            root.join("loose")
        );
        // Not an ancestor, relative, the home directory itself or `/`: not taken.
        assert_eq!(
            project_root_declared(&hooks, Some(&home), Some(&home.join("other"))),
            mono.join("pkg")
        );
        assert_eq!(
            project_root_declared(&hooks, Some(&home), Some(Path::new("mono"))),
            mono.join("pkg")
        );
        assert_eq!(
            project_root_declared(&hooks, Some(&home), Some(&home)),
            mono.join("pkg")
        );
        // Nor a directory that holds the home directory, for a project beside it.
        dirs(&root, &["work/app/.git", "work/app/src", "work/home"]);
        assert_eq!(
            project_root_declared(
                &root.join("work/app/src"),
                Some(&root.join("work/home")),
                Some(&root.join("work"))
            ),
            root.join("work/app")
        );
        assert_eq!(
            project_root_declared(&mono.join("plain/src"), Some(&home), Some(Path::new("/"))),
            mono
        );
    }

    /// A directory every user may write to is never a declared project, and a search past the declared one stops
    /// there as without a declaration; below the declared project it does not cut the project off.
    #[test]
    fn a_world_writable_directory_is_no_declared_project() {
        use std::os::unix::fs::PermissionsExt as _;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        dirs(&root, &["common/.git", "common/drop/work/src"]);
        std::fs::set_permissions(root.join("common/drop"), std::fs::Permissions::from_mode(0o1777)).unwrap();
        let cwd = root.join("common/drop/work/src");
        assert_eq!(
            project_root_declared(&cwd, None, Some(&root.join("common/drop"))),
            cwd
        );
        assert_eq!(
            project_root_declared(&cwd, None, Some(&root.join("common/drop/work"))),
            root.join("common/drop/work")
        );
        // A world-writable directory below the declared project does not cut it off.
        dirs(&root, &["proj/.git", "proj/open/sub"]);
        std::fs::set_permissions(root.join("proj/open"), std::fs::Permissions::from_mode(0o777)).unwrap();
        let sub = root.join("proj/open/sub");
        assert_eq!(project_root(&sub, None), sub);
        assert_eq!(
            project_root_declared(&sub, None, Some(&root.join("proj"))),
            root.join("proj")
        );
    }

    #[test]
    fn without_a_marker_the_working_directory_is_the_root() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        dirs(&root, &["plain/src"]);
        let cwd = root.join("plain/src");
        // A home at `root` stops the search before the temporary directory's own ancestors.
        assert_eq!(project_root(&cwd, Some(&root)), cwd);
        // A directory that does not exist is its own root.
        assert_eq!(
            project_root(&root.join("missing/x"), Some(&root)),
            root.join("missing/x")
        );
    }

    #[test]
    fn home_is_never_a_root_unless_it_is_the_working_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let home = root.join("home");
        dirs(&root, &["home/.claude", "home/.git", "home/notes/2026", ".git"]);
        // The user's `~/.claude` (and a dotfiles `.git`) do not make the home a project, nor does a marker above it.
        assert_eq!(
            project_root(&home.join("notes/2026"), Some(&home)),
            home.join("notes/2026")
        );
        assert_eq!(project_root(&home, Some(&home)), home);
        // The home reached through a symbolic link still stops the search.
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&home, root.join("home-link")).unwrap();
            assert_eq!(
                project_root(&home.join("notes/2026"), Some(&root.join("home-link"))),
                home.join("notes/2026")
            );
        }
    }

    #[test]
    fn the_filesystem_root_is_never_a_project_root() {
        assert_eq!(project_root(Path::new("/"), None), PathBuf::from("/"));
        // Whatever `/` holds, a directory below it never gets `/` as its root.
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        assert_ne!(project_root(&root, None), PathBuf::from("/"));
    }
}
