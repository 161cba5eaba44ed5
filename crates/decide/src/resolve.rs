//! Step 3 of a decision: the gathered facts and findings resolved against the rules, the mode, the hooks and the
//! session into one verdict.

use agent_bash_guard::CommandClass;
use agent_rules::{CallFacts, CommandFact, PathFact, Request, Resolution, SessionState};
use agent_tool_traits::HookOutcome;

use crate::gather::Gathered;
use crate::guard::Guard;

impl Guard {
    /// Resolves the call of `tool` whose facts are `gathered`.
    pub(crate) fn resolve(
        &self,
        tool: &str,
        gathered: &Gathered<'_>,
        hooks: &HookOutcome,
        session: &SessionState,
    ) -> Resolution {
        let facts = self.call_facts(gathered);
        self.policy.decide(
            &Request {
                tool,
                facts: &facts,
                findings: &gathered.findings,
                hooks,
            },
            session,
        )
    }

    /// The facts as the rules match them: each shell command with whether it is read-only (a command that runs
    /// project code is not, and says why), each file with where it leads and whether that is inside the roots
    /// (unknown without a sandbox), the host, the subagent.
    fn call_facts<'a>(&self, gathered: &'a Gathered<'_>) -> CallFacts<'a> {
        let shell = gathered.analysis.as_ref().map(|analysis| {
            // A line with the network: a reading git command that may run the repository's hooks or its
            // submodules' programs would run them with that network, so it is not read-only there.
            let networked = analysis
                .commands
                .iter()
                .any(|c| matches!(c.class, CommandClass::Network | CommandClass::PackageManager));
            analysis
                .commands
                .iter()
                .enumerate()
                .map(|(index, command)| {
                    let code = &gathered.project_code;
                    let why = code
                        .why(index)
                        .or_else(|| code.hooks(index).filter(|_| networked));
                    CommandFact {
                        argv: &command.argv,
                        inner: command.inner,
                        read_only: command.read_only && why.is_none(),
                        why: why.filter(|_| command.read_only),
                    }
                })
                .collect()
        });
        let paths = gathered
            .paths
            .iter()
            .map(|path| PathFact {
                access: path.access,
                written: &path.check.absolute,
                resolved: path.check.resolved.as_deref(),
                inside_roots: self.sandbox.as_ref().map(|_| path.check.root.is_some()),
            })
            .collect();
        CallFacts {
            shell,
            paths,
            host: gathered.host.as_deref(),
            agent: gathered.agent,
        }
    }
}

#[cfg(test)]
mod tests {
    use agent_rules::SessionState;
    use agent_tool_traits::{DecidedBy, Decision};
    use serde_json::json;

    use super::*;
    use crate::bounded::CallInput;
    use crate::describe::Described;
    use crate::test_guard::Project;

    fn facts_of(project: &Project, command: &str) -> Vec<(bool, Option<String>)> {
        let call = CallInput::new("Bash", json!({ "command": command }));
        let gathered = project.guard.gather("Bash", &call.args, Described::of(&call));
        let facts = project.guard.call_facts(&gathered);
        facts
            .shell
            .unwrap_or_default()
            .iter()
            .map(|c| (c.read_only, c.why.map(str::to_owned)))
            .collect()
    }

    #[test]
    fn a_command_running_project_code_is_not_read_only_and_says_why() {
        let plain = Project::new("{}");
        assert_eq!(facts_of(&plain, "cargo --version"), [(true, None)]);
        let pinned = Project::with_files("{}", &[("proj/rust-toolchain.toml", "")]);
        let facts = facts_of(&pinned, "cargo --version");
        let [(read_only, why)] = facts.as_slice() else {
            panic!("one command expected: {facts:?}")
        };
        assert!(!read_only);
        assert!(
            why.as_deref()
                .is_some_and(|w| w.contains("runs code the project controls"))
        );
    }

    #[test]
    fn the_rules_resolve_the_gathered_findings() {
        let project =
            Project::new(r#"{"permissions": {"deny": ["Bash(curl:*)"], "allow": ["Bash(make:*)"]}}"#);
        let resolve = |command: &str| {
            let call = CallInput::new("Bash", json!({ "command": command }));
            let gathered = project.guard.gather("Bash", &call.args, Described::of(&call));
            project
                .guard
                .resolve(
                    "Bash",
                    &gathered,
                    &HookOutcome::default(),
                    &SessionState::default(),
                )
                .verdict
        };
        let read_only = resolve("ls");
        assert_eq!(read_only.decision, Decision::Allow);
        assert_eq!(read_only.provenance.step, Some(DecidedBy::Default));
        let ruled = resolve("make test");
        assert_eq!(ruled.decision, Decision::Allow);
        assert_eq!(ruled.provenance.step, Some(DecidedBy::AllowRule));
        assert_eq!(resolve("curl https://example.com").decision, Decision::Deny);
        // A finding of a layer beats an allow rule: a write outside the roots is not the rule's to allow.
        assert_ne!(resolve("make > /etc/agent-guard-out").decision, Decision::Allow);
    }

    #[test]
    fn without_a_sandbox_containment_is_unknown() {
        let project = Project::new("{}");
        let mut options = crate::guard::GuardOptions {
            cwd: project.at("missing"),
            ..Default::default()
        };
        options.home = None;
        let guard = Guard::new(&agent_rules::Settings::new(), &options).unwrap();
        assert!(guard.sandbox().is_none());
        let call = CallInput::new("Read", json!({"file_path": "a.txt"}));
        let gathered = guard.gather("Read", &call.args, Described::of(&call));
        let facts = guard.call_facts(&gathered);
        assert!(facts.paths.iter().all(|p| p.inside_roots.is_none()));
        assert_eq!(guard.decide("Read", &call.args).verdict().decision, Decision::Ask);
    }
}
