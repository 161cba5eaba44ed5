//! The project code a shell command runs: a command that loads project files where they exist (`cargo
//! --version` runs the toolchain a `rust-toolchain.toml` names) is read-only only where none of them exists.

use std::path::{Component, Path, PathBuf};

use agent_bash_guard::CommandAnalysis;
use agent_tool_traits::Access;

use super::Gathering;
use super::moves::DirectoryMoves;

/// The commands of a line that run code the project controls, each with why.
#[derive(Debug, Default)]
pub(crate) struct ProjectCode {
    loaded: Vec<LoadedFile>,
}

/// A file the project controls that one command loads.
#[derive(Debug)]
struct LoadedFile {
    /// The index of the command in the analysis.
    command: usize,
    /// Why it runs project code: the file that exists.
    why: String,
}

impl ProjectCode {
    /// Why command `index` runs code the project controls, when it does.
    pub(crate) fn why(&self, index: usize) -> Option<&str> {
        self.loaded
            .iter()
            .find(|file| file.command == index)
            .map(|file| file.why.as_str())
    }
}

impl Gathering<'_> {
    /// The commands of `analysis` that load a project file which exists, at any place a move before them may
    /// make it name, or above the working directory where a tool searches upwards.
    pub(super) fn project_code(&self, analysis: &CommandAnalysis, moves: &DirectoryMoves) -> ProjectCode {
        let mut code = ProjectCode::default();
        for load in &analysis.loads {
            let Some(index) = load.command else { continue };
            if code.why(index).is_some() {
                continue;
            }
            let mut places = moves.candidates(&load.path, load.command);
            places.push(load.path.clone());
            let found = places
                .iter()
                .find_map(|place| self.project_file(place))
                .or_else(|| self.file_above(&load.path));
            if let Some(found) = found {
                code.loaded.push(LoadedFile {
                    command: index,
                    why: format!("runs code the project controls: `{}` exists", found.display()),
                });
            }
        }
        code
    }

    /// The file a command loads, where it exists and the project controls it: inside a root, and not in the
    /// project's own `.git` (whose writes are protected). Without a sandbox nothing can be ruled out: the path as
    /// written.
    fn project_file(&self, path: &str) -> Option<PathBuf> {
        let Some(sandbox) = &self.guard.sandbox else {
            return Some(PathBuf::from(path));
        };
        let check = sandbox.check(path, Access::Read);
        let resolved = check.resolved?;
        let own_git = sandbox
            .roots()
            .first()
            .is_some_and(|root| resolved.starts_with(root.path().join(".git")));
        (check.root.is_some() && !own_git && agent_fs_sandbox::exists_no_follow(&resolved))
            .then_some(resolved)
    }

    /// The file `relative` names in a directory above the working directory, where a tool that searches upwards
    /// (cargo's `.cargo/config.toml`, `rust-toolchain.toml`, `go.work`) finds it: inside a root as
    /// [`Gathering::project_file`] sees it, outside the roots wherever it exists (a monorepo's configuration above
    /// the package an agent works in). The home directory holds the user's own configuration
    /// (`~/.cargo/config.toml`) and is not searched, nor is `/`.
    fn file_above(&self, relative: &str) -> Option<PathBuf> {
        let path = Path::new(relative);
        if relative.starts_with('~')
            || !path.is_relative()
            || path.components().any(|c| c == Component::ParentDir)
        {
            return None;
        }
        let home = self.guard.home.as_deref();
        self.guard
            .cwd
            .ancestors()
            .skip(1)
            .filter(|dir| dir.parent().is_some() && home != Some(*dir))
            .find_map(|dir| {
                let candidate = dir.join(path);
                let text = candidate.to_string_lossy();
                match &self.guard.sandbox {
                    Some(sandbox) if sandbox.check(&text, Access::Read).root.is_some() => {
                        self.project_file(&text)
                    }
                    _ => agent_fs_sandbox::exists_no_follow(&candidate).then_some(candidate),
                }
            })
    }
}
