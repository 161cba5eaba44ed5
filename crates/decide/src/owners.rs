//! Whose settings a rule, an `agentGuard` section or a mode comes from, where that decides how far it may reach: a
//! source the repository controls may only tighten the sandbox (no command out of it, no domain or place added, no
//! mode that lifts the prompts), the user's own may also loosen it.
//!
//! The project's shared files (`.claude/settings.json`, `.agent-guard/settings.json`) come with the repository. A
//! project's local file (`.claude/settings.local.json`, where the coding agent saves a "don't ask again" answer,
//! and `.agent-guard/settings.local.json`) is the user's when it was written on this machine: the project is the
//! top of a git work tree whose index can be read and lists neither the file nor a place above it. A clone brings
//! only what git tracks, and a sandboxed command cannot write the file (`.claude/` and `.agent-guard/` are
//! protected paths, which the kernel sandbox keeps read-only and takes back when created). Anything else (no
//! `.git` there, an index that cannot be read, a file or folder that is a symbolic link) keeps the file the
//! repository's. So does a file (or a `.git`) that changed while a sandboxed command that may write there runs: the
//! protected paths such a command creates are removed only when it ends.
//!
//! The answer is looked for only where it decides something (a local rule that would take a command out of the
//! sandbox or add a domain, a local `agentGuard` section that would loosen, a mode only a trusted source may set),
//! once per file for the life of a guard.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use agent_tool_traits::Source;
use agent_undo::GitTracking;

/// Why settings are the repository's: they may only tighten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Repository {
    /// The project's shared settings file, which a clone brings.
    Project,
    /// A local settings file git tracks: a clone brings it.
    Tracked(String),
    /// A local settings file whose project is not the top of a git work tree.
    NoGit(String),
    /// A local settings file whose tracking cannot be told, and why.
    Unknown(String, String),
}

impl Repository {
    /// Which settings these are and why they count as the repository's, to follow "the rule … of": "the
    /// repository's project settings", "`.claude/settings.local.json`, which git tracks (so it came with the
    /// repository)".
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Project => "the repository's project settings".to_owned(),
            Self::Tracked(file) => format!("`{file}`, which git tracks (so it came with the repository)"),
            Self::NoGit(file) => format!(
                "`{file}`, in a project that is not the top of a git work tree (so it cannot be told from a file \
                 that came with the repository)"
            ),
            Self::Unknown(file, why) => {
                format!("`{file}`, which cannot be told from a file that came with the repository ({why})")
            }
        }
    }

    /// Whether a sandboxed git write could make these settings the user's: a local file git tracks, or whose index
    /// cannot be read now (a git write may change both).
    pub(crate) fn untracked_by_git_write(&self) -> bool {
        matches!(self, Self::Tracked(_) | Self::Unknown(..))
    }
}

/// The answer for each local settings file asked about, found once.
#[derive(Debug, Default)]
pub(crate) struct Owners {
    known: Mutex<Vec<(PathBuf, Option<Repository>)>>,
}

impl Owners {
    /// Why settings of `source` from `file` are the repository's; `None` when they are the user's (the user's
    /// files, a managed policy, the command line, the environment, a session's answers).
    pub(crate) fn repository(&self, source: Source, file: Option<&Path>) -> Option<Repository> {
        match (source, file) {
            (Source::Project, _) => Some(Repository::Project),
            (Source::Local, Some(file)) => self.local(file),
            (Source::Local, None) => Some(Repository::Unknown(
                "local settings".to_owned(),
                "no file is named".to_owned(),
            )),
            _ => None,
        }
    }

    /// [`Self::repository`] of the local settings file `file`, found on first asking.
    fn local(&self, file: &Path) -> Option<Repository> {
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, answer)) = known.iter().find(|(path, _)| path == file) {
            return answer.clone();
        }
        let answer = local_owner(file);
        known.push((file.to_owned(), answer.clone()));
        answer
    }
}

/// Whose the local settings file `file` (`<project>/.claude/settings.local.json`) is: `None` for the user's.
fn local_owner(file: &Path) -> Option<Repository> {
    let folder = file.parent().unwrap_or(file);
    let project = folder.parent().unwrap_or(folder);
    let relative = file.strip_prefix(project).unwrap_or(file);
    let shown = relative.display().to_string();
    // The file as the work tree holds it: through a link it may be another file the repository holds.
    for path in [folder, file] {
        if std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink()) {
            return Some(Repository::Unknown(
                shown,
                format!("`{}` is a symbolic link", path.display()),
            ));
        }
    }
    match agent_undo::git_tracking(project, relative) {
        GitTracking::Untracked => made_by_a_sandboxed_run(&[file, folder, &project.join(".git")])
            .map(|why| Repository::Unknown(shown, why)),
        GitTracking::Tracked => Some(Repository::Tracked(shown)),
        GitTracking::NoRepository => Some(Repository::NoGit(shown)),
        GitTracking::Unknown(why) => Some(Repository::Unknown(shown, why)),
    }
}

/// Why one of `paths` may have been made by a sandboxed command: one that writes there and had started when the path
/// got its name or last changed, and that has not ended (then its new protected paths, a `.claude/` or a `.git/`,
/// are removed). `None` when none could have.
#[cfg(target_os = "linux")]
fn made_by_a_sandboxed_run(paths: &[&Path]) -> Option<String> {
    paths.iter().find_map(|path| {
        agent_os_sandbox::sandboxed_run_may_have_made(path).map(|pid| {
            format!(
                "`{}` changed while a sandboxed command that may write there was running (process {pid}), and \
                 such a command may have made it",
                path.display()
            )
        })
    })
}

/// Without the kernel sandbox no sandboxed command runs.
#[cfg(not(target_os = "linux"))]
fn made_by_a_sandboxed_run(_paths: &[&Path]) -> Option<String> {
    None
}

#[cfg(test)]
#[path = "owners_tests.rs"]
mod tests;
