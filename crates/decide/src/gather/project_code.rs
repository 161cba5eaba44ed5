//! The project code a shell command runs: a command that loads project files where they exist (`cargo
//! --version` runs the toolchain a `rust-toolchain.toml` names) is read-only only where none of them exists.

use std::path::{Component, Path, PathBuf};

use agent_bash_guard::{CommandAnalysis, CommandClass};
use agent_tool_traits::Access;

use super::Gathering;
use super::moves::DirectoryMoves;
use crate::git_remotes::{GitLine, Submodules};

/// The commands of a line that run code the project controls, each with why.
#[derive(Debug, Default)]
pub(crate) struct ProjectCode {
    loaded: Vec<LoadedFile>,
    /// Reading git commands of the project's own repository, which has hooks.
    hooks: Vec<LoadedFile>,
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

    /// Why the reading git command `index` of the project's own repository may run code nobody reviewed: its
    /// hooks (when it refreshes the index), or, in a line with the network, a program its checked-out
    /// submodules' configuration sets (git reads their status). Inside the read-only sandbox that changes
    /// nothing; beside a command that has the network it matters.
    pub(crate) fn hooks(&self, index: usize) -> Option<&str> {
        self.hooks
            .iter()
            .find(|file| file.command == index)
            .map(|file| file.why.as_str())
    }
}

/// Whether the git command `argv` makes git run a program in what follows it in the line: a configuration key
/// that names one (`git config core.fsmonitor …`, an alias, a filter, an include), configuration written to a file
/// or a scope the decision does not read (`--file`, `--global`), a repository made from a template or with
/// configuration of the command line (`git init --template`, `git clone -c`), a submodule or a worktree set up,
/// a remote added or changed. What later git commands of the line run under is then not what the decision read.
/// `git init`, `git clone` and `git config user.email …` alone change no program.
fn configures_git(argv: &[String]) -> bool {
    let Some((sub, args)) = GitLine::read(argv).and_then(|line| line.sub) else {
        return false;
    };
    let rest: Vec<&str> = args.iter().map(String::as_str).collect();
    let has = |prefixes: &[&str]| {
        rest.iter().any(|word| {
            prefixes
                .iter()
                .any(|p| word == p || word.starts_with(&format!("{p}=")))
        })
    };
    match sub {
        "init" => has(&["--template", "--separate-git-dir"]),
        "clone" => has(&[
            "--template",
            "--separate-git-dir",
            "-c",
            "--config",
            "-u",
            "--upload-pack",
        ]),
        "config" => {
            let scoped = has(&[
                "--file",
                "-f",
                "--global",
                "--system",
                "--blob",
                "--worktree",
                "--edit",
                "-e",
            ]);
            let operands: Vec<&str> = rest.iter().copied().filter(|w| !w.starts_with('-')).collect();
            // `set`/`unset` sub-commands of newer git name the key second.
            let key = match operands.as_slice() {
                [
                    "set" | "unset" | "get" | "rename-section" | "remove-section",
                    key,
                    ..,
                ]
                | [key, ..] => Some(*key),
                [] => None,
            };
            scoped || key.is_none_or(crate::repo_programs::is_program_key)
        }
        "submodule" | "worktree" | "remote" => true,
        _ => false,
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
        self.git_code(analysis, moves, &mut code);
        code
    }

    /// The git commands of `analysis` that may run code nobody reviewed ([`crate::git_remotes::unreviewed_code`]):
    /// the hooks of the project's own repository when the command changes it, the programs another repository's
    /// configuration (or a checked-out submodule's) sets, and every git command after one of the line that sets a
    /// program's configuration (`git init s && git -C s config core.fsmonitor …`), which the decision cannot read.
    /// A reading git command is looked at only in a line with the network (elsewhere it runs in the read-only
    /// sandbox, where what it may run changes nothing); one of the project's own repository with hooks (which git
    /// may run when it refreshes the index) is kept apart ([`ProjectCode::hooks`]): it must not share another
    /// command's network.
    fn git_code(&self, analysis: &CommandAnalysis, moves: &DirectoryMoves, code: &mut ProjectCode) {
        if moves.unknown.is_some() {
            return;
        }
        let is_git = |command: &agent_bash_guard::SubCommand| {
            command
                .effective()
                .first()
                .is_some_and(|word| word.rsplit('/').next() == Some("git"))
        };
        let networked = analysis
            .commands
            .iter()
            .any(|c| matches!(c.class, CommandClass::Network | CommandClass::PackageManager));
        // Only a git command that changes a repository, or any git command of a line with the network, is looked
        // at: a reading one elsewhere runs in the read-only sandbox, where what it may run changes nothing. Most
        // lines have neither, and pay nothing.
        if !analysis
            .commands
            .iter()
            .any(|c| is_git(c) && (networked || !c.read_only))
        {
            return;
        }
        let main = crate::git_remotes::work_tree(&self.guard.cwd);
        let home = self.guard.home.as_deref();
        let mut configured: Option<String> = None;
        for (index, command) in analysis.commands.iter().enumerate() {
            let effective = command.effective();
            if !is_git(command) {
                continue;
            }
            let looked_at = networked || !command.read_only || configured.is_some();
            if !looked_at {
                continue;
            }
            if let Some(earlier) = &configured {
                code.loaded.push(LoadedFile {
                    command: index,
                    why: format!("runs under git configuration that `{earlier}` before it changes"),
                });
            } else if code.why(index).is_none() {
                let dirs = self.places_run_in(moves, index);
                // A command that changes the repository is looked at whole; a reading one's submodules only
                // in a line with the network (the index of a large repository is megabytes).
                let submodules = if command.read_only && !networked {
                    Submodules::Skip
                } else {
                    Submodules::Read
                };
                let found = dirs.iter().find_map(|dir| {
                    crate::git_remotes::unreviewed_code(effective, dir, home, main.as_deref(), submodules)
                });
                if let Some(found) = found {
                    let file = LoadedFile {
                        command: index,
                        why: format!("runs code nobody reviewed: {}", found.why),
                    };
                    if command.read_only && found.own {
                        code.hooks.push(file);
                    } else {
                        code.loaded.push(file);
                    }
                }
            }
            if !command.read_only && configures_git(effective) {
                configured = Some(effective.join(" "));
            }
        }
    }

    /// Where the command at `index` runs: the working directory, or each place a move before it may lead to (any
    /// with code nobody reviewed counts).
    fn places_run_in(&self, moves: &DirectoryMoves, index: usize) -> Vec<PathBuf> {
        let candidates = moves.candidates(".", Some(index));
        if candidates.is_empty() {
            return vec![self.guard.cwd.clone()];
        }
        candidates
            .iter()
            .filter_map(
                |place| match (place.strip_prefix("~/"), self.guard.home.as_deref()) {
                    (Some(rest), Some(home)) => Some(home.join(rest)),
                    (Some(_), None) => None,
                    (None, _) => Some(self.guard.cwd.join(place)),
                },
            )
            .collect()
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
                // Where nothing is there (most places), neither way below finds a file: asked first, within the
                // batch's facts, before the candidate is resolved.
                if !agent_fs_sandbox::exists_no_follow(&candidate) {
                    return None;
                }
                let text = candidate.to_string_lossy();
                match &self.guard.sandbox {
                    // Only whether it is inside a root is asked here, not the whole check.
                    Some(sandbox) if sandbox.root_holding(&text).is_some() => self.project_file(&text),
                    _ => agent_fs_sandbox::exists_no_follow(&candidate).then_some(candidate),
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::configures_git;

    fn configures(line: &str) -> bool {
        configures_git(&line.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
    }

    #[test]
    fn what_configures_git_for_the_rest_of_the_line() {
        for line in [
            "git config core.fsmonitor x",
            "git -C s config core.hooksPath ..",
            "git config alias.st !sh",
            "git config --global user.name A",
            "git config -f .git/config user.name A",
            "git config include.path ../x",
            "git config remote.origin.uploadpack x",
            "git config --unset diff.x.textconv",
            "git init --template=./t s",
            "git clone -c core.fsmonitor=x . s",
            "git submodule add ../r r",
            "git remote set-url origin https://example.com/x",
        ] {
            assert!(configures(line), "{line}");
        }
        for line in [
            "git init",
            "git init -b main",
            "git clone https://example.com/r",
            "git config user.email a@b.c",
            "git config user.name A",
            "git add -A",
            "git commit -m x",
        ] {
            assert!(!configures(line), "{line}");
        }
    }
}
