//! The facts of a shell call: the analysis of its command line, every file it reads or writes (after the
//! directory moves before it, globs expanded), the directories it searches, and the project code it runs.

use agent_bash_guard::{AccessVia, CommandAnalysis, CommandClass, Concern, Effect, FileAccess, SubCommand};
use agent_fs_sandbox::{PathCheck, Reach};
use agent_tool_traits::{Access, DecidedBy, Decision, Layer, Provenance, Verdict};

use super::devices;
use super::moves::DirectoryMoves;
use super::{About, Gathering, ProjectCode};

/// The shell-specific facts of a call.
#[derive(Debug)]
pub(super) struct ShellFacts {
    /// The analysis of the command line.
    pub(super) analysis: CommandAnalysis,
    /// Its commands that run code the project controls.
    pub(super) project_code: ProjectCode,
}

impl Gathering<'_> {
    /// Analyses `command` and checks everything it touches.
    pub(super) fn shell(&mut self, tool: &str, command: &str) -> ShellFacts {
        self.shell_line = true;
        let mut analysis = self.guard.bash.analyze(command);
        self.findings.extend(analysis.findings.iter().map(|f| {
            let provenance = Provenance::layer(Layer::Bash);
            let provenance = if f.caution {
                provenance.at(DecidedBy::CautionAsk)
            } else {
                provenance
            };
            Verdict::new(f.decision, f.reason.clone(), provenance)
        }));
        let concerns: Vec<About> = analysis
            .findings
            .iter()
            .map(|f| About {
                concern: self.environment_concern(f.concern, &f.variables),
                command: f.command,
            })
            .collect();
        self.concerns.extend(concerns);
        let moves = DirectoryMoves::of(&analysis);
        self.git_remotes(&mut analysis, &moves);
        self.remote_requests(&analysis);
        let checked_before = self.paths.len();
        if let Some(why) = &moves.unknown {
            // The reads after the move may be anywhere, outside the roots too, where the kernel does not hide a
            // secret under a name no list knows.
            self.find(Decision::Ask, why.clone(), Layer::Bash);
        }
        // Entering a directory is reading it: the commands after the move work there.
        for dir in moves.moves.iter().flat_map(|m| &m.targets) {
            self.touch(dir, Access::Read);
        }
        for (access, list) in [(Access::Read, &analysis.reads), (Access::Write, &analysis.writes)] {
            for file in list {
                self.shell_file(tool, &analysis, &moves, access, file);
            }
        }
        self.git_dirs_made_by_line(&analysis, &moves, checked_before);
        self.implicit_searches(tool, &analysis);
        self.git_inside_git_dirs(&mut analysis, &moves, checked_before);
        let project_code = self.project_code(&analysis, &moves);
        ShellFacts {
            analysis,
            project_code,
        }
    }

    /// git writes its repository's git directory itself, and only itself: a line that works inside a git directory
    /// (the call's directory, or a `cd` to one) or names a path there, as written or where its links lead (`ln -s
    /// .git g` on an earlier line, then `git --work-tree=g clean -fd`), may point git at the history as at files
    /// (`cd .git && git --work-tree=. clean -fd` deletes every object and reference), so none of its commands gets
    /// git's writes (the git directory stays read-only whole). `checked_before` is where this line's path checks
    /// start.
    fn git_inside_git_dirs(
        &self,
        analysis: &mut CommandAnalysis,
        moves: &DirectoryMoves,
        checked_before: usize,
    ) {
        if !analysis.commands.iter().any(|c| c.git_writes) {
            return;
        }
        let inside = |path: &std::path::Path| {
            path.components().any(|c| {
                c.as_os_str()
                    .to_str()
                    .is_some_and(agent_bash_guard::names_git_dir)
            })
        };
        let moved_inside = moves
            .moves
            .iter()
            .flat_map(|m| &m.targets)
            .any(|dir| inside(std::path::Path::new(dir)));
        let names_inside = self
            .paths
            .get(checked_before..)
            .unwrap_or_default()
            .iter()
            .any(|path| inside(&path.check.absolute) || path.check.resolved.as_deref().is_some_and(inside));
        if moved_inside || names_inside || inside(&self.guard.cwd) {
            for command in &mut analysis.commands {
                command.git_writes = false;
            }
        }
    }

    /// A line that makes a directory a git directory under a name other than `.git` and writes what configures
    /// it asks: git obeys that directory's `config` (`core.worktree = ..` with `core.fsmonitor`, `core.pager`,
    /// aliases), `hooks/` and `info/` when the user later runs git inside it (a shell prompt that shows git's
    /// status runs it on every prompt there). The file-system check protects those entries where the directory
    /// already holds a `HEAD` (or `objects/` and `refs/`) on disk; this covers the line that makes it so itself:
    /// one that writes a `HEAD` beside them, or makes a repository there (`git init --bare NAME`, `git clone
    /// --bare`/`--mirror`, `--separate-git-dir NAME`, `git --git-dir=NAME init`). What a line makes in ways the
    /// analysis does not follow (a copy of `.git`, an archive unpacked) is left to the sandbox, which removes the
    /// configuration a command created in any git directory by content when it ends. `checked_before` is where
    /// this line's path checks start.
    fn git_dirs_made_by_line(
        &mut self,
        analysis: &CommandAnalysis,
        moves: &DirectoryMoves,
        checked_before: usize,
    ) {
        let written: Vec<std::path::PathBuf> = self
            .paths
            .get(checked_before..)
            .unwrap_or_default()
            .iter()
            .filter(|path| path.access == Access::Write)
            .map(|path| path.check.absolute.clone())
            .collect();
        if written.is_empty() {
            return;
        }
        let mut made: Vec<(std::path::PathBuf, String)> = written
            .iter()
            .filter(|path| {
                path.file_name()
                    .is_some_and(|name| name.as_encoded_bytes().eq_ignore_ascii_case(b"HEAD"))
            })
            .filter_map(|path| {
                Some((
                    path.parent()?.to_path_buf(),
                    format!("writes `{}`", path.display()),
                ))
            })
            .collect();
        for (index, command) in analysis.commands.iter().enumerate() {
            let Some(dir) = command.git_dir_made.clone() else {
                continue;
            };
            let shown = command.effective().join(" ");
            let mut places = moves.candidates(&dir, Some(index));
            places.push(dir);
            for place in places {
                if let Some(check) = self.check_path(&place, Access::Write) {
                    made.push((check.absolute, format!("runs `{shown}`")));
                }
            }
        }
        let found = written.iter().find_map(|path| {
            made.iter().find_map(|(dir, how)| {
                let named_git = dir
                    .file_name()
                    .and_then(|name| name.to_str())
                    .is_some_and(agent_bash_guard::names_git_dir);
                let entry = agent_fs_sandbox::git_directory_entry(path, dir).filter(|_| !named_git)?;
                Some(format!(
                    "the line makes `{}` a git directory (it {how}) and writes its `{entry}` (`{}`): git obeys \
                     what that configures when the user later runs git there, outside the sandbox",
                    dir.display(),
                    path.display()
                ))
            })
        });
        if let Some(why) = found {
            self.find(Decision::Ask, why, Layer::Sandbox);
        }
    }

    /// What a finding that shows the environment's credentials is about ([`Concern::Environment`]): contained
    /// when the sandbox's environment policy passes none of `variables` (for the whole environment: when no
    /// setting keeps a variable whatever it holds), since inside the sandbox they are not there to show; guarded
    /// otherwise. Every other concern is as the analysis found it.
    fn environment_concern(&self, concern: Concern, variables: &[String]) -> Concern {
        if concern != Concern::Environment {
            return concern;
        }
        let policy = &self.guard.env_policy;
        let withheld = if variables.is_empty() {
            policy.kept().is_empty()
        } else {
            variables.iter().all(|name| policy.withholds(name))
        };
        if withheld {
            Concern::Environment
        } else {
            Concern::Guarded
        }
    }

    /// The hosts of the remotes of each git command that reaches the network without naming a URL (`git fetch`,
    /// `git pull`), found in the repository's configuration where the command runs (after the line's moves), as
    /// the hosts of its effect: judged like a URL written in the line. Those of `git push`, which changes another
    /// repository and asks for that, are kept for the grant of its allow ([`Gathered::remote_hosts`]). A remote reached over another protocol than
    /// HTTP(S) asks, and an allow of the line says that the sandbox's proxy cannot carry it.
    fn git_remotes(&mut self, analysis: &mut CommandAnalysis, moves: &DirectoryMoves) {
        if moves.unknown.is_some() {
            return;
        }
        for (index, command) in analysis.commands.iter_mut().enumerate() {
            let effective = command.effective();
            let git = effective
                .first()
                .is_some_and(|word| word.rsplit('/').next() == Some("git"));
            let changes_remote = matches!(command.effect, Effect::Remote(_));
            let reaches = matches!(&command.effect, Effect::Network { hosts } if hosts.is_empty())
                || (changes_remote && command.class == CommandClass::Network);
            if !git || !reaches {
                continue;
            }
            let dir = match moves.candidates(".", Some(index)).as_slice() {
                [] => self.guard.cwd.clone(),
                [one] => match (one.strip_prefix("~/"), self.guard.home.as_deref()) {
                    (Some(rest), Some(home)) => home.join(rest),
                    (Some(_), None) => continue,
                    (None, _) => self.guard.cwd.join(one),
                },
                _ => continue,
            };
            let shown = effective.join(" ");
            let remotes = crate::git_remotes::remotes(effective, &dir, self.guard.home.as_deref());
            let mut hosts: Vec<String> = Vec::new();
            for remote in remotes {
                if let crate::git_remotes::Transport::Helper(helper) = &remote.transport {
                    // Not the guard's caution but a program nobody reviewed: no rule for the command lifts it.
                    self.findings.push(Verdict::new(
                        Decision::Ask,
                        format!(
                            "`{shown}` reaches remote `{}` through the remote helper `git-remote-{helper}` \
                             (`{}`), a program the repository's configuration names",
                            remote.name, remote.url
                        ),
                        Provenance::layer(Layer::Bash),
                    ));
                    self.concerns.push(About {
                        concern: Concern::Guarded,
                        command: Some(index),
                    });
                    continue;
                }
                if let crate::git_remotes::Transport::Other(protocol) = &remote.transport {
                    let why = format!(
                        "`{shown}` reaches `{}` over {protocol} (remote `{}`: `{}`), which the sandbox's proxy \
                         does not carry: it serves HTTP and HTTPS only, so inside the sandbox the command cannot \
                         reach that host even when allowed (an `https://` URL for the remote can be)",
                        remote.host, remote.name, remote.url
                    );
                    self.findings.push(Verdict::new(
                        Decision::Ask,
                        why.clone(),
                        Provenance::layer(Layer::Bash).at(DecidedBy::CautionAsk),
                    ));
                    self.concerns.push(About {
                        concern: Concern::Guarded,
                        command: Some(index),
                    });
                    self.notes.push(why);
                }
                if !hosts.contains(&remote.host) {
                    hosts.push(remote.host);
                }
            }
            if changes_remote {
                self.remote_hosts.extend(hosts);
            } else if !hosts.is_empty() {
                command.effect = Effect::Network { hosts };
            }
        }
    }

    /// A network client's request that changes what a server holds (`curl -X PUT URL`): the hosts it names are
    /// those an allow of it grants ([`Gathered::remote_hosts`]).
    fn remote_requests(&mut self, analysis: &CommandAnalysis) {
        for command in &analysis.commands {
            if matches!(command.effect, Effect::Remote(_)) {
                for host in agent_bash_guard::request_hosts(command.effective()) {
                    if !self.remote_hosts.contains(&host) {
                        self.remote_hosts.push(host);
                    }
                }
            }
        }
    }

    /// Checks one file a command reads or writes at every place it may name: a relative path used after a `cd`
    /// may mean a file under the new directory, so that `cd ~/.ssh && cat id_rsa` meets the rules of `~/.ssh`.
    /// A recursive search (`grep -r`, `rg`) reads everything below a directory operand; a glob names the files it
    /// matches when the command runs, and each is checked too.
    fn shell_file(
        &mut self,
        tool: &str,
        analysis: &CommandAnalysis,
        moves: &DirectoryMoves,
        access: Access,
        file: &FileAccess,
    ) {
        let mut places = moves.candidates(&file.path, file.command);
        places.push(file.path.clone());
        let command = file.command.and_then(|index| analysis.commands.get(index));
        let searched = command
            .filter(|command| command.recursive && access == Access::Read && file.via == AccessVia::Operand)
            .map(|command| Reach {
                hidden: command.reads_hidden,
                follow_links: command.follows_links,
                ignores: false,
                names: &command.names,
            });
        // The kernel hides secret files from what runs in the sandbox; a command no sandbox can contain (a
        // container engine's mount) reads them where it runs.
        let in_sandbox = !command.is_some_and(|command| command.unconfinable);
        let metadata = access == Access::Read && file.via == AccessVia::Metadata;
        // Removing a start-up file (`rm src/__pycache__/*.pyc`) makes nothing run later.
        let removes = command.is_some_and(|command| {
            command.effect == Effect::RemovesTrees
                || matches!(command.program(), Some("rm" | "unlink" | "rmdir"))
        });
        for place in &places {
            if access == Access::Read && devices::standard_stream(place) {
                // The command's own standard streams (`< /dev/stdin`, `/dev/fd/0`): no file of anyone's.
                continue;
            }
            if let Some(mut check) = self.check_path(place, access) {
                if access == Access::Read && devices::data_less(&check) {
                    // `< /dev/null`, `/dev/urandom`: a device that holds no data of anyone's is no read outside
                    // the project (reading one that never ends is the analysis's concern).
                    continue;
                }
                if metadata {
                    names_only(&mut check);
                }
                if let Some(reach) = &searched {
                    self.search(tool, &check, reach, in_sandbox, false);
                }
                if access == Access::Read && !metadata {
                    self.content(&check);
                }
                if access == Access::Write && !removes {
                    self.start_file_written(&check);
                    self.copied_into(analysis, file, &check);
                }
                self.keep(access, check);
            }
            if !file.literal {
                self.touch_glob(place, access, metadata);
            }
        }
    }

    /// The files a copy, a move, an install or a link writes into the directory `check` names (`cp x.pth
    /// .venv/lib/python3.11/site-packages/`): each source's name there, judged as a file the line writes.
    fn copied_into(&mut self, analysis: &CommandAnalysis, file: &FileAccess, check: &PathCheck) {
        let copies = matches!(
            file.command
                .and_then(|index| analysis.commands.get(index))
                .and_then(SubCommand::program),
            Some("cp" | "mv" | "install" | "ln")
        );
        let place = check.resolved.as_deref().unwrap_or(&check.absolute);
        if !copies || !(agent_fs_sandbox::is_dir(place) || file.path.ends_with('/')) {
            return;
        }
        let names: Vec<String> = analysis
            .reads
            .iter()
            .chain(&analysis.writes)
            .filter(|source| source.command == file.command && source.path != file.path)
            .filter_map(|source| {
                std::path::Path::new(&source.path)
                    .file_name()
                    .map(|name| name.to_string_lossy().into_owned())
            })
            .collect();
        for name in names {
            let written = place.join(&name);
            if let Some(inside) = self.check_path(&written.to_string_lossy(), Access::Write) {
                self.start_file_written(&inside);
            }
        }
    }

    /// A recursive search that names no directory searches the working directory (`rg KEY`).
    fn implicit_searches(&mut self, tool: &str, analysis: &CommandAnalysis) {
        for (index, command) in analysis.commands.iter().enumerate() {
            let names_a_directory = analysis
                .reads
                .iter()
                .any(|file| file.command == Some(index) && file.via == AccessVia::Operand);
            if !command.recursive || names_a_directory {
                continue;
            }
            if let Some(check) = self.check_path(".", Access::Read) {
                let reach = Reach {
                    hidden: command.reads_hidden,
                    follow_links: command.follows_links,
                    ignores: false,
                    names: &command.names,
                };
                self.search(tool, &check, &reach, true, false);
            }
        }
    }
}

/// A read of only the name and metadata of a file inside the roots (`ls -la .env`, `stat .env`): a secret file's
/// name and size are no secret, so the protection of its content does not ask. Outside the roots the read stays as
/// it is (a place outside the project needs a `Read(…)` rule whatever is read of it), and so does a path that
/// cannot be resolved.
pub(super) fn names_only(check: &mut PathCheck) {
    if check.root.is_none() || check.verdict.decision != Decision::Ask || check.protected.is_none() {
        return;
    }
    let Some(resolved) = check.resolved.as_deref() else {
        return;
    };
    let reason = format!(
        "`{}` resolves to `{}` inside the roots; only its name and metadata are read, never its content",
        check.input,
        resolved.display()
    );
    check.protected = None;
    check.verdict = Verdict::new(Decision::Allow, reason, Provenance::layer(Layer::Sandbox));
}
