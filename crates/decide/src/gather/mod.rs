//! Step 2 of a decision: the facts a call's kind needs, one module per kind of call (shell, files, web, tools the
//! rules cannot look into), and the findings of the layers that produced them.

mod address;
mod content;
mod devices;
mod files;
mod moves;
mod opaque;
mod project_code;
mod search;
mod shell;
mod startup;
mod web;

use std::path::{Path, PathBuf};

use agent_bash_guard::{CommandAnalysis, Concern};
use agent_fs_sandbox::PathCheck;
use agent_rules::CallTarget;
use agent_tool_traits::{Access, Decision, Layer, Provenance, Verdict};
use serde_json::Value;

use crate::decided::CheckedPath;
use crate::describe::Described;
use crate::guard::Guard;

pub(crate) use project_code::ProjectCode;

/// The facts of one call, ready to be resolved.
#[derive(Debug)]
pub(crate) struct Gathered<'a> {
    /// The shell analysis, for a shell call.
    pub(crate) analysis: Option<CommandAnalysis>,
    /// Every file the call touches, with the sandbox's report.
    pub(crate) paths: Vec<CheckedPath>,
    /// The findings of the tool's checks and of every layer that looked at the call.
    pub(crate) findings: Vec<Verdict>,
    /// What each finding is about, for the kernel sandbox (one entry per finding, in the same order).
    pub(crate) concerns: Vec<About>,
    /// The commands of a shell call that run code the project controls, and why.
    pub(crate) project_code: ProjectCode,
    /// The host of a web fetch, lowercase.
    pub(crate) host: Option<String>,
    /// The subagent type of an agent call.
    pub(crate) agent: Option<&'a str>,
    /// The files of the roots the call reads whose content holds a credential, with its kind.
    pub(crate) credentials: Vec<(PathBuf, String)>,
    /// What an allow of the call must still say: why a command cannot do inside the sandbox what it was allowed
    /// to (a git remote reached over ssh, which the proxy does not carry).
    pub(crate) notes: Vec<String>,
    /// The hosts of the remotes a command that changes them reaches (`git push`), found in the repository's
    /// configuration: its effect is a change to another system, which asks, and an allow grants them.
    pub(crate) remote_hosts: Vec<String>,
    /// [`Decided::search_excludes`](crate::Decided::search_excludes).
    pub(crate) search_excludes: Vec<String>,
}

/// The facts of one call while they are gathered: the files checked so far and the findings so far, with the
/// guard that checks them.
pub(crate) struct Gathering<'g> {
    pub(crate) guard: &'g Guard,
    pub(crate) paths: Vec<CheckedPath>,
    pub(crate) findings: Vec<Verdict>,
    /// What each finding is about, in the same order.
    pub(crate) concerns: Vec<About>,
    /// A shell line was analysed (the call's own, or one an opaque tool runs): its reads outside the roots are
    /// judged as a shell's.
    pub(crate) shell_line: bool,
    /// The files read whose content holds a credential, with its kind.
    pub(crate) credentials: Vec<(PathBuf, String)>,
    /// What an allow of the call must still say ([`Gathered::notes`]).
    pub(crate) notes: Vec<String>,
    /// [`Gathered::remote_hosts`].
    pub(crate) remote_hosts: Vec<String>,
    /// [`Gathered::search_excludes`].
    pub(crate) search_excludes: Vec<String>,
    /// The secrets by name the kernel sandbox of a line would hide, as its scan finds them: looked for once, by
    /// the first search that counts on them being hidden.
    pub(crate) kernel_hidden: Option<Vec<PathBuf>>,
}

/// What one finding is about, for the kernel sandbox: the shell analysis's own concern for its findings, and
/// [`Concern::Guarded`] for every other layer's (a protected path, a secret, a write outside the roots).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct About {
    /// Whether the sandbox contains it.
    pub(crate) concern: Concern,
    /// The command of the shell analysis it is about, when it is one.
    pub(crate) command: Option<usize>,
}

impl About {
    /// A finding the sandbox does not contain.
    pub(crate) const GUARDED: Self = Self {
        concern: Concern::Guarded,
        command: None,
    };
}

/// The most files one glob may match and still be checked one by one (a few milliseconds of checks); a larger
/// expansion asks.
const MAX_GLOB_MATCHES: usize = 2048;

impl Guard {
    /// Gathers the facts of a call of `tool` described as `described`.
    pub(crate) fn gather<'a>(&self, tool: &str, args: &'a Value, described: Described<'a>) -> Gathered<'a> {
        let Described { target, findings } = described;
        let opaque = matches!(target, CallTarget::Opaque | CallTarget::Agent(_));
        let mut gathering = Gathering {
            guard: self,
            paths: Vec::new(),
            concerns: vec![About::GUARDED; findings.len()],
            findings,
            shell_line: false,
            credentials: Vec::new(),
            notes: Vec::new(),
            remote_hosts: Vec::new(),
            search_excludes: Vec::new(),
            kernel_hidden: None,
        };
        let mut gathered_shell = None;
        let mut host = None;
        let mut agent = None;
        match target {
            CallTarget::Shell(command) => gathered_shell = Some(gathering.shell(tool, command)),
            CallTarget::Files(access, list) => gathering.files(tool, args, access, &list),
            CallTarget::Web { url, host: named } => host = gathering.web(url, named),
            CallTarget::Agent(name) => agent = name,
            CallTarget::Opaque => {}
        }
        // A tool the rules cannot look into may still read the files its arguments name, fetch the URLs it is
        // given, or run a shell line.
        if opaque {
            gathering.named_paths(tool, args);
            gathering.named_urls(args);
            gathering.shell_like(tool, args);
        }
        let is_shell = gathering.shell_line;
        let path_findings: Vec<Verdict> = gathering
            .paths
            .iter()
            .filter_map(|path| path_finding(path, is_shell))
            .collect();
        gathering
            .concerns
            .extend(std::iter::repeat_n(About::GUARDED, path_findings.len()));
        gathering.findings.extend(path_findings);
        let (analysis, project_code) = gathered_shell.map_or((None, ProjectCode::default()), |shell| {
            (Some(shell.analysis), shell.project_code)
        });
        Gathered {
            analysis,
            paths: gathering.paths,
            findings: gathering.findings,
            concerns: gathering.concerns,
            project_code,
            host,
            agent,
            credentials: gathering.credentials,
            notes: gathering.notes,
            remote_hosts: gathering.remote_hosts,
            search_excludes: gathering.search_excludes,
        }
    }
}

impl Gathering<'_> {
    /// Adds a finding of `layer`, which the kernel sandbox does not contain.
    fn find(&mut self, decision: Decision, reason: impl Into<String>, layer: Layer) {
        self.find_about(decision, reason, layer, About::GUARDED);
    }

    /// Adds a finding of `layer` about `about`.
    fn find_about(&mut self, decision: Decision, reason: impl Into<String>, layer: Layer, about: About) {
        self.findings
            .push(Verdict::new(decision, reason, Provenance::layer(layer)));
        self.concerns.push(about);
    }

    /// The sandbox's report on one path; without a sandbox, a lexical report whose containment is unknown. A
    /// path that cannot be checked at all (a NUL byte without a sandbox) is a deny and no report.
    fn check_path(&mut self, path: &str, access: Access) -> Option<PathCheck> {
        if let Some(sandbox) = &self.guard.sandbox {
            return Some(sandbox.check(path, access));
        }
        if path.contains('\0') {
            self.find(Decision::Deny, "a path with a NUL byte", Layer::Sandbox);
            return None;
        }
        let absolute = agent_rules::absolute_lexical(Path::new(path), &self.guard.cwd);
        Some(PathCheck {
            input: path.to_owned(),
            absolute: absolute.clone(),
            resolved: None,
            root: None,
            through_symlink: false,
            protected: None,
            verdict: Verdict::new(
                Decision::Ask,
                format!("`{}`: containment unknown without a sandbox", absolute.display()),
                Provenance::layer(Layer::Sandbox),
            ),
        })
    }

    /// A file the call writes that an interpreter runs by itself at a later start ([`startup::runs_later`]) asks
    /// in every mode, and the sandbox does not contain it: the user's python, pip or shell runs it outside.
    fn start_file_written(&mut self, check: &PathCheck) {
        if let Some(why) = startup::runs_later(check)
            && !self.findings.iter().any(|f| f.reason() == why)
        {
            self.find(Decision::Ask, why, Layer::Sandbox);
        }
    }

    /// Checks `path` for `access` and keeps the report among the call's files.
    fn touch(&mut self, path: &str, access: Access) {
        if let Some(check) = self.check_path(path, access) {
            if access == Access::Read {
                self.content(&check);
            }
            self.keep(access, check);
        }
    }

    /// Keeps the report on a file among the call's files.
    fn keep(&mut self, access: Access, check: PathCheck) {
        self.paths.push(CheckedPath { access, check });
    }

    /// Checks every file the shell glob `pattern` matches now (nothing for a pattern without a glob character).
    /// A pattern whose matches cannot all be checked asks, naming why. `metadata`: only the names and metadata of
    /// the matches are read (`ls -la .env*`), not their content.
    fn touch_glob(&mut self, pattern: &str, access: Access, metadata: bool) {
        let Some(sandbox) = &self.guard.sandbox else {
            return;
        };
        let matches = sandbox.glob(pattern, MAX_GLOB_MATCHES);
        if let Some(why) = matches.incomplete {
            self.find(
                Decision::Ask,
                format!("the glob `{pattern}` cannot be checked file by file: {why}"),
                Layer::Sandbox,
            );
        }
        for path in &matches.paths {
            if metadata {
                if let Some(mut check) = self.check_path(path, access) {
                    shell::names_only(&mut check);
                    self.keep(access, check);
                }
            } else {
                self.touch(path, access);
            }
        }
    }
}

/// The finding a file contributes. A shell command reading outside the roots is not denied (system files are read
/// all the time); it only loses its read-only default (the rules see it as outside the roots), and asks when the
/// place is protected. Every other sandbox finding counts as it is.
fn path_finding(path: &CheckedPath, is_shell: bool) -> Option<Verdict> {
    let check = &path.check;
    match check.verdict.decision {
        Decision::Allow => None,
        Decision::Deny
            if is_shell
                && path.access == Access::Read
                && check.root.is_none()
                && check.resolved.is_some() =>
        {
            // A protected place outside the roots (`~/.ssh/id_rsa`) still asks, in every mode.
            check.protected.as_ref().map(|why| {
                Verdict::new(
                    Decision::Ask,
                    format!("protected path: {why} (`{}`)", check.absolute.display()),
                    Provenance::layer(Layer::Sandbox),
                )
            })
        }
        Decision::Deny | Decision::Ask => Some(check.verdict.clone()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::bounded::CallInput;
    use crate::test_guard::Project;

    fn gather(project: &Project, tool: &str, args: &Value) -> (Vec<CheckedPath>, Vec<Verdict>, ProjectCode) {
        let call = CallInput::new(tool, args.clone());
        let gathered = project.guard.gather(tool, &call.args, Described::of(&call));
        (gathered.paths, gathered.findings, gathered.project_code)
    }

    fn reasons(findings: &[Verdict]) -> Vec<String> {
        findings.iter().map(Verdict::reason).collect()
    }

    #[test]
    fn a_shell_read_outside_the_roots_is_no_finding_but_a_write_is() {
        let project = Project::new("{}");
        let (paths, findings, _) = gather(&project, "Bash", &json!({"command": "cat /etc/hostname"}));
        assert_eq!(paths.len(), 1);
        assert!(
            paths
                .iter()
                .all(|p| p.access == Access::Read && p.check.root.is_none())
        );
        assert!(findings.is_empty(), "{:?}", reasons(&findings));
        let (_, findings, _) = gather(
            &project,
            "Bash",
            &json!({"command": "echo x > /etc/agent-guard-out"}),
        );
        assert!(
            findings
                .iter()
                .any(|f| f.decision == Decision::Deny && f.provenance.layer == Layer::Sandbox),
            "{:?}",
            reasons(&findings)
        );
    }

    #[test]
    fn a_file_tool_reading_outside_the_roots_is_a_finding() {
        let project = Project::new("{}");
        let (_, findings, _) = gather(&project, "Read", &json!({"file_path": "/etc/hostname"}));
        assert!(
            findings.iter().any(|f| f.decision == Decision::Deny),
            "{:?}",
            reasons(&findings)
        );
    }

    #[test]
    fn a_relative_path_after_a_move_is_checked_at_every_place_it_may_name() {
        let project = Project::new("{}");
        let (paths, _, _) = gather(&project, "Bash", &json!({"command": "cd sub && cat key"}));
        let absolute: Vec<_> = paths.iter().map(|p| p.check.absolute.clone()).collect();
        for place in ["sub", "sub/key", "key"] {
            assert!(
                absolute.contains(&project.at(place)),
                "{place} not in {absolute:?}"
            );
        }
    }

    #[test]
    fn a_glob_names_each_file_it_matches() {
        let project = Project::with_files("{}", &[("proj/a.txt", "a"), ("proj/b.txt", "b")]);
        let (paths, _, _) = gather(&project, "Bash", &json!({"command": "cat *.txt"}));
        let absolute: Vec<_> = paths.iter().map(|p| p.check.absolute.clone()).collect();
        assert!(absolute.contains(&project.at("a.txt")), "{absolute:?}");
        assert!(absolute.contains(&project.at("b.txt")), "{absolute:?}");
    }

    #[test]
    fn a_search_that_reaches_a_secret_file_asks_and_names_it() {
        let project = Project::with_files("{}", &[("proj/.env", "KEY=1"), ("proj/src/a.rs", "")]);
        // The Grep tool without a glob of its own is narrowed instead: no finding, the secret file left out.
        let args = json!({"pattern": "x", "path": "."});
        let call = CallInput::new("Grep", args.clone());
        let gathered = project.guard.gather("Grep", &call.args, Described::of(&call));
        assert!(gathered.findings.is_empty(), "{:?}", reasons(&gathered.findings));
        assert_eq!(gathered.search_excludes, [".env"]);
        for (tool, args) in [
            ("Grep", json!({"pattern": "x", "path": ".", "glob": "*"})),
            ("Bash", json!({"command": "grep -r x ."})),
            ("Bash", json!({"command": "grep -r x"})),
        ] {
            let (_, findings, _) = gather(&project, tool, &args);
            assert!(
                findings
                    .iter()
                    .any(|f| f.decision == Decision::Ask && f.reason().contains(".env")),
                "{tool} {args}: {:?}",
                reasons(&findings)
            );
        }
        // A search whose glob or type leaves the secret file out reaches none.
        for args in [
            json!({"pattern": "x", "path": ".", "glob": "*.rs"}),
            json!({"pattern": "x", "type": "rust"}),
        ] {
            let (_, findings, _) = gather(&project, "Grep", &args);
            assert!(findings.is_empty(), "{args}: {:?}", reasons(&findings));
        }
        // A glob that only leaves files out reaches the secret file still.
        let (_, findings, _) = gather(&project, "Grep", &json!({"pattern": "x", "glob": "!*.md"}));
        assert!(
            findings.iter().any(|f| f.reason().contains(".env")),
            "{:?}",
            reasons(&findings)
        );
        // A search of a directory without one reaches none.
        let (_, findings, _) = gather(&project, "Grep", &json!({"pattern": "x", "path": "src"}));
        assert!(findings.is_empty(), "{:?}", reasons(&findings));
    }

    #[test]
    fn a_command_that_loads_an_existing_project_file_runs_project_code() {
        let plain = Project::new("{}");
        let (_, _, code) = gather(&plain, "Bash", &json!({"command": "cargo --version"}));
        assert_eq!(code.why(0), None);
        let pinned = Project::with_files("{}", &[("proj/rust-toolchain.toml", "[toolchain]\n")]);
        let (_, _, code) = gather(&pinned, "Bash", &json!({"command": "cargo --version"}));
        assert!(
            code.why(0).is_some_and(|why| why.contains("rust-toolchain.toml")),
            "{:?}",
            code.why(0)
        );
    }

    #[test]
    fn a_web_call_keeps_its_host_and_other_schemes_are_denied() {
        let project = Project::new("{}");
        let call = CallInput::new("WebFetch", json!({"url": "https://Example.com/x", "prompt": "p"}));
        let gathered = project.guard.gather("WebFetch", &call.args, Described::of(&call));
        assert_eq!(gathered.host.as_deref(), Some("example.com"));
        assert!(gathered.findings.is_empty());
        let (_, findings, _) = gather(
            &project,
            "WebFetch",
            &json!({"url": "file:///etc/passwd", "prompt": "p"}),
        );
        assert!(
            findings.iter().any(|f| f.decision == Decision::Deny),
            "{:?}",
            reasons(&findings)
        );
    }

    #[test]
    fn an_opaque_tool_given_a_secret_file_asks() {
        let project = Project::with_files("{}", &[("proj/.env", "KEY=1"), ("proj/notes.md", "")]);
        let (paths, findings, _) = gather(&project, "mcp__files__read", &json!({"path": ".env"}));
        assert!(paths.is_empty(), "an opaque tool's files are not the call's own");
        assert!(
            findings
                .iter()
                .any(|f| f.decision == Decision::Ask && f.reason().contains("mcp__files__read")),
            "{:?}",
            reasons(&findings)
        );
        let (_, findings, _) = gather(&project, "mcp__files__read", &json!({"path": "notes.md"}));
        assert!(findings.is_empty(), "{:?}", reasons(&findings));
    }
}
