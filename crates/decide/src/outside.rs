//! After containing: a shell line with commands no sandbox can contain (a container engine, a cluster's or a
//! cloud account's tool, a remote shell: [`SubCommand::unconfinable`]) runs outside the kernel sandbox when the
//! user's own rules allow each of them by name and nothing else in the line needs the sandbox; inside it such a
//! command only fails (no engine socket, no `~/.kube/config`, no cloud credentials).
//!
//! What needs the sandbox: a command that is not read-only or runs code the project controls, a write other than
//! one the unconfinable command's own words name (a redirection, another command's), a variable of the
//! environment the sandbox's filter would not pass (`echo $MY_DEPLOY_KEY`). A rule of the repository's
//! own settings (the project's shared file, or a local file that came with the repository: owners.rs) never takes
//! a command out of the sandbox: the repository may only tighten it (as for `agentGuard.network.allow`). Where the allow cannot be carried out (a rule of the repository, a line
//! that mixes such a command with one that needs the sandbox), the line asks and says why. Nothing here lifts a
//! finding: the allow it starts from already passed every protection (protected paths, secrets, writes outside the
//! roots, the deny classes); modes `plan` and `bypassPermissions` are left as they are.

use agent_bash_guard::{AccessVia, CommandAnalysis, Effect, SubCommand};
use agent_rules::{CommandFact, PermissionMode, Resolution, Rule};
use agent_tool_traits::{DecidedBy, Decision, Layer, Provenance, Verdict};

use crate::config::SandboxMode;
use crate::gather::Gathered;
use crate::guard::Guard;
use crate::owners::Repository;

/// Why an allowed shell line runs outside the kernel sandbox: for `explain`, the audit log and the hook's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outside {
    /// Each command no sandbox can contain, as written, with the rule that allows it (`Bash(docker:*)`).
    pub commands: Vec<(String, String)>,
    /// The reason, as the verdict says it.
    pub reason: String,
}

/// One command no sandbox can contain, and the rule of the user that names it, if any.
struct Unconfinable<'a> {
    shown: String,
    why: &'a str,
    rule: Option<&'a Rule>,
}

impl Guard {
    /// Takes an allowed line whose commands no sandbox can contain out of the sandbox, when the user's rules
    /// allow each by name and the rest needs no sandbox; else, where the allow cannot be carried out, turns it
    /// into an ask that says why, or adds why to an ask. `None` for every other line, and the resolution unchanged.
    pub(crate) fn outside(&self, gathered: &Gathered<'_>, resolution: &mut Resolution) -> Option<Outside> {
        let analysis = gathered.analysis.as_ref()?;
        if self.sandbox_mode == SandboxMode::Off
            || matches!(
                self.policy.mode(),
                PermissionMode::Plan | PermissionMode::BypassPermissions
            )
        {
            return None;
        }
        let verdict = &mut resolution.verdict;
        let by_rule =
            verdict.decision == Decision::Allow && verdict.provenance.step == Some(DecidedBy::AllowRule);
        let confined = self.allowed_but_understood_only_inside(analysis);
        if !confined.is_empty() {
            self.ask_instead(verdict, by_rule, confined);
            return None;
        }
        let unconfinable = self.unconfinable(analysis);
        if unconfinable.is_empty() {
            return None;
        }
        let repository_ruled = self.ruled_by_the_repository(&unconfinable);
        if verdict.decision == Decision::Allow && by_rule && !repository_ruled.is_empty() {
            *verdict = self.cannot_carry_out(
                verdict,
                format!(
                    "{}: asking (the same rule in your user settings, `~/.claude/settings.json`, runs it outside the \
                     sandbox)",
                    repository_ruled.join("; ")
                ),
            );
            return None;
        }
        let user_ruled = unconfinable
            .iter()
            .all(|u| u.rule.is_some_and(|rule| self.repository_of(rule).is_none()));
        if !user_ruled {
            return None;
        }
        let allowed_by = unconfinable
            .iter()
            .filter_map(|u| {
                u.rule
                    .map(|rule| format!("`{}` is allowed by your rule `{}`", u.shown, rule.text))
            })
            .collect::<Vec<_>>()
            .join(", ");
        let needs_sandbox = self.needs_sandbox(gathered, analysis);
        if !needs_sandbox.is_empty() {
            let why = format!(
                "{allowed_by} and runs only outside a sandbox, but {} needs one: they cannot share a sandbox (run \
                 them as separate lines)",
                needs_sandbox.join(", ")
            );
            self.ask_instead(verdict, by_rule, vec![why]);
            return None;
        }
        if !by_rule {
            return None;
        }
        let whys: Vec<&str> = unconfinable.iter().map(|u| u.why).collect();
        let mut reason = format!(
            "{allowed_by}, and no sandbox can contain it ({}): it runs outside the sandbox",
            whys.join("; ")
        );
        if analysis.commands.len() > unconfinable.len() {
            reason.push_str("; the rest of the line is read-only");
        }
        verdict.reasons.push(reason.clone());
        Some(Outside {
            commands: unconfinable
                .iter()
                .filter_map(|u| u.rule.map(|rule| (u.shown.clone(), rule.text.clone())))
                .collect(),
            reason,
        })
    }

    /// Where an allow by the user's rule cannot be carried out for `whys`: the allow becomes an ask naming them, an
    /// ask gains them as reasons; any other verdict is left as it is.
    fn ask_instead(&self, verdict: &mut Verdict, by_rule: bool, whys: Vec<String>) {
        match verdict.decision {
            Decision::Allow if by_rule => {
                *verdict = self.cannot_carry_out(verdict, format!("{}; asking", whys.join("; ")));
            }
            Decision::Ask => verdict.reasons.extend(whys),
            Decision::Allow | Decision::Deny => {}
        }
    }

    /// The repository whose settings hold `rule`, if any; `None` for the user's own rules.
    fn repository_of(&self, rule: &Rule) -> Option<Repository> {
        self.owners.repository(rule.source, rule.file.as_deref())
    }

    /// Each command a user's rule would take out of the sandbox whose words the analysis does not all understand,
    /// or whose writable mount holds what the sandbox would keep read-only, in words: outside, the analysis is the
    /// only protection, so the allow cannot be carried out.
    fn allowed_but_understood_only_inside(&self, analysis: &CommandAnalysis) -> Vec<String> {
        let not_understood = analysis.commands.iter().filter_map(|command| {
            let why = command.confined.as_ref()?;
            Some((
                command,
                format!("{why} (outside the sandbox every word must be understood)"),
            ))
        });
        let mounts = self
            .protected_below_own_writes(analysis)
            .into_iter()
            .filter_map(|(index, why)| Some((analysis.commands.get(index)?, why)));
        not_understood
            .chain(mounts)
            .filter_map(|(command, why)| {
                let rule = self
                    .policy
                    .command_allow_rule(&fact(command))
                    .filter(|rule| self.repository_of(rule).is_none())?;
                Some(format!(
                    "`{}` is allowed by your rule `{}` and runs only outside a sandbox, but it cannot run outside \
                     one: {why}",
                    command.effective().join(" "),
                    rule.text
                ))
            })
            .collect()
    }

    /// The unconfinable commands allowed by a rule of the repository's own settings, in words: such a rule cannot
    /// take a command out of the sandbox.
    fn ruled_by_the_repository(&self, unconfinable: &[Unconfinable<'_>]) -> Vec<String> {
        unconfinable
            .iter()
            .filter_map(|u| u.rule.and_then(|rule| Some((u, rule, self.repository_of(rule)?))))
            .map(|(u, rule, owner)| {
                let whose = match owner {
                    Repository::Project => format!("{}, which", owner.describe()),
                    _ => format!("{}: a rule of the repository's settings", owner.describe()),
                };
                format!(
                    "`{}` is allowed by the rule `{}` of {whose} cannot take a command out of the sandbox, and no \
                     sandbox can contain it ({})",
                    u.shown, rule.text, u.why
                )
            })
            .collect()
    }

    /// What in the line needs the sandbox beside its unconfinable commands, in words (`needs_sandbox_beside`), and each
    /// variable it expands that the sandbox's filter would not pass by its name: outside the sandbox the line's
    /// words expand the caller's whole environment, and such a variable may hold a credential under a name no list
    /// knows.
    fn needs_sandbox(&self, gathered: &Gathered<'_>, analysis: &CommandAnalysis) -> Vec<String> {
        let mut needs = needs_sandbox_beside(gathered, analysis);
        for name in &analysis.environment {
            if self
                .env_policy
                .removes(std::ffi::OsStr::new(name), std::ffi::OsStr::new(""), false)
                .is_some()
            {
                needs.push(format!("its expansion of `${name}`"));
            }
        }
        needs
    }

    /// The ask, for `why`, of an allow by rule that cannot be carried out; mode `dontAsk` denies it, as it denies
    /// every ask. The allow is kept among the reasons.
    pub(crate) fn cannot_carry_out(&self, allowed: &Verdict, why: String) -> Verdict {
        let mut verdict = Verdict::new(
            Decision::Ask,
            format!("{why}; it would have been allowed: {}", allowed.reason()),
            Provenance::layer(Layer::Kernel).at(DecidedBy::SafetyAsk),
        );
        verdict.diagnostics.clone_from(&allowed.diagnostics);
        if self.policy.mode() == PermissionMode::DontAsk {
            verdict.decision = Decision::Deny;
            verdict
                .reasons
                .insert(0, "mode `dontAsk` denies what would be asked".to_owned());
            verdict.provenance.step = Some(DecidedBy::NoPrompt);
        }
        verdict
    }

    /// The commands of `analysis` no sandbox can contain, each with the allow rule that names it.
    fn unconfinable<'a>(&'a self, analysis: &'a CommandAnalysis) -> Vec<Unconfinable<'a>> {
        analysis
            .commands
            .iter()
            .filter(|command| command.unconfinable)
            .map(|command| Unconfinable {
                shown: command.effective().join(" "),
                why: match &command.effect {
                    Effect::Remote(why) => why.as_str(),
                    _ => "it acts through what only the host has",
                },
                rule: self.policy.command_allow_rule(&fact(command)),
            })
            .collect()
    }
}

/// The rules' view of one command.
fn fact(command: &SubCommand) -> CommandFact<'_> {
    CommandFact {
        argv: &command.argv,
        inner: command.inner,
        read_only: command.read_only,
        why: None,
    }
}

/// How many entries below a directory an unconfinable command writes as a whole (a container's bind mount) are
/// looked at for protected paths; a larger tree is taken to hold one.
const MOUNT_WALK_LIMIT: usize = 10_000;

impl Guard {
    /// The directories the unconfinable commands write as a whole (a writable bind mount: `docker run -v .:/w`)
    /// that hold protected paths (`.git`, `.claude`, a secret file, a protected-path pattern), each with the index
    /// of its command and why: outside the sandbox nothing keeps the container from writing them, where the
    /// sandbox would have kept each read-only. A root at or below the directory always holds its own; otherwise
    /// the tree is walked up to [`MOUNT_WALK_LIMIT`] entries (without following symbolic links), and a larger one
    /// counts as holding one.
    fn protected_below_own_writes(&self, analysis: &CommandAnalysis) -> Vec<(usize, String)> {
        let Some(sandbox) = &self.sandbox else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for write in &analysis.writes {
            if !own_write(analysis, write) {
                continue;
            }
            let check = sandbox.check(&write.path, agent_tool_traits::Access::Write);
            let Some(directory) = check
                .resolved
                .as_deref()
                .filter(|path| agent_fs_sandbox::is_dir(path))
            else {
                continue;
            };
            let holds = if sandbox
                .roots()
                .iter()
                .any(|root| root.path().starts_with(directory))
            {
                Some("the project's own protected paths (`.git`, `.claude`, …)".to_owned())
            } else {
                protected_in_tree(sandbox, directory)
            };
            if let (Some(what), Some(index)) = (holds, write.command) {
                found.push((
                    index,
                    format!(
                        "its writable mount of `{}` holds {what}, which the sandbox keeps read-only (mount it \
                         read-only, or a directory without them)",
                        write.path
                    ),
                ));
            }
        }
        found
    }
}

/// Whether an unconfinable command's own words name `write` (a mount's source, `cp`'s side here), not a
/// redirection of the line's.
fn own_write(analysis: &CommandAnalysis, write: &agent_bash_guard::FileAccess) -> bool {
    write.via != AccessVia::Redirect
        && write
            .command
            .and_then(|i| analysis.commands.get(i))
            .is_some_and(|c| c.unconfinable)
}

/// A protected path in the tree of `directory`, in words; `None` when the walk finds none within its bound.
fn protected_in_tree(sandbox: &agent_fs_sandbox::PathSandbox, directory: &std::path::Path) -> Option<String> {
    let protected = sandbox.protected_paths();
    let mut pending = vec![directory.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MOUNT_WALK_LIMIT {
                return Some(format!(
                    "more than {MOUNT_WALK_LIMIT} entries, which may include protected paths"
                ));
            }
            let path = entry.path();
            if protected
                .reason(&path, None, agent_tool_traits::Access::Write)
                .is_some()
            {
                return Some(format!("`{}`", path.display()));
            }
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                pending.push(path);
            }
        }
    }
    None
}

/// What in the line needs the sandbox beside its unconfinable commands, in words: each other command that is not
/// read-only or runs code the project controls, and each write its unconfinable commands' own words do not name.
fn needs_sandbox_beside(gathered: &Gathered<'_>, analysis: &CommandAnalysis) -> Vec<String> {
    let mut needs: Vec<String> = Vec::new();
    for (index, command) in analysis.commands.iter().enumerate() {
        if command.unconfinable {
            continue;
        }
        if !command.read_only || !command.literal || gathered.project_code.why(index).is_some() {
            needs.push(format!("`{}`", command.effective().join(" ")));
        }
    }
    for write in &analysis.writes {
        if !own_write(analysis, write) {
            needs.push(format!("its write to `{}`", write.path));
        }
    }
    needs.dedup();
    needs
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use agent_rules::SessionState;
    use serde_json::json;

    use super::*;
    use crate::bounded::{CallInput, Deciders};
    use crate::test_guard::Project;

    const DOCKER: &str = r#"{"permissions": {"allow": ["Bash(docker:*)"]}}"#;

    fn decide(guard: &Guard, command: &str) -> crate::Decided {
        guard.decide("Bash", &json!({ "command": command }))
    }

    #[test]
    fn an_allowed_line_outside_the_sandbox_has_no_confinement_and_names_its_rule() {
        let project = Project::new(DOCKER);
        let decided = decide(&project.guard, "docker ps | grep web");
        assert_eq!(decided.verdict().decision, Decision::Allow);
        assert!(decided.confinement.is_none());
        let outside = decided.outside.clone().expect("outside the sandbox");
        assert_eq!(
            outside.commands,
            [("docker ps".to_owned(), "Bash(docker:*)".to_owned())]
        );
        assert!(decided.verdict().reasons.contains(&outside.reason));
        assert!(outside.reason.ends_with("the rest of the line is read-only"));
    }

    #[test]
    fn a_writable_mount_of_a_tree_with_protected_paths_needs_the_sandbox() {
        let project = Project::with_files(
            DOCKER,
            &[("proj/src/main.rs", ""), ("proj/vendor/lib/.git/HEAD", "")],
        );
        for line in [
            "docker run --rm -v .:/w alpine true",
            "docker run --rm --mount type=bind,src=.,dst=/w alpine true",
            "docker run --rm -v ./vendor:/w alpine true",
        ] {
            let decided = decide(&project.guard, line);
            assert_eq!(decided.verdict().decision, Decision::Ask, "{line}");
            assert!(decided.outside.is_none(), "{line}");
            assert!(
                decided.verdict().reason().contains("writable mount of"),
                "{line}: {}",
                decided.verdict().reason()
            );
        }
        // A tree without protected paths, or one mounted read-only, runs outside.
        for line in [
            "docker run --rm -v ./src:/w alpine true",
            "docker run --rm -v .:/w:ro alpine true",
        ] {
            let decided = decide(&project.guard, line);
            assert_eq!(
                decided.verdict().decision,
                Decision::Allow,
                "{line}: {}",
                decided.verdict().reason()
            );
            assert!(decided.outside.is_some(), "{line}");
        }
    }

    #[test]
    fn code_loaded_by_a_read_only_neighbour_needs_the_sandbox() {
        // `cargo --version` reads a toolchain file the project controls, which runs code: it needs the sandbox.
        let project = Project::with_files(
            r#"{"permissions": {"allow": ["Bash(docker:*)", "Bash(cargo --version)"]}}"#,
            &[("proj/rust-toolchain.toml", "")],
        );
        let decided = decide(&project.guard, "docker ps && cargo --version");
        assert_eq!(decided.verdict().decision, Decision::Ask);
        assert!(decided.outside.is_none());
        assert!(
            decided
                .verdict()
                .reason()
                .contains("but `cargo --version` needs one: they cannot share a sandbox"),
            "{}",
            decided.verdict().reason()
        );
    }

    #[test]
    fn a_subagent_runs_outside_only_where_its_parent_would() {
        let (_child_dir, child) = Project::new(DOCKER).into_parts();
        let (_parent_dir, parent) = Project::new(r#"{"permissions": {"allow": ["Bash"]}}"#).into_parts();
        let call = CallInput::new("Bash", json!({ "command": "docker ps" }));
        let child = Arc::new(child);
        // Alone, the child's own rule takes the line out; under a parent whose rule names no program, it stays in.
        let alone = Deciders::new(Arc::clone(&child)).decide(&call, &SessionState::default());
        assert!(alone.outside.is_some());
        let under = Deciders::new(child).under(Arc::new(parent));
        let decided = under.decide(&call, &SessionState::default());
        assert_eq!(decided.verdict().decision, Decision::Allow);
        assert!(decided.outside.is_none());
        assert!(
            !decided.verdict().reason().contains("runs outside the sandbox"),
            "{}",
            decided.verdict().reason()
        );
    }
}
