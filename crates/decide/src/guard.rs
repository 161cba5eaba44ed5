//! The one decision path: describe the call, let the layers analyse it, resolve with the rules.

use std::path::{Component, Path, PathBuf};

use agent_bash_guard::{AccessVia, BashConfig, BashGuard, CommandAnalysis, CommandTableExtension};
use agent_fs_sandbox::{PathCheck, PathSandbox, ProtectedPaths, Reach, RootKind, RootSpec, SandboxConfig};
use agent_os_sandbox::EnvPolicy;
use agent_rules::{
    Anchors, CallFacts, CallTarget, CommandFact, HookOutcome, PathFact, PermissionMode, Policy, Request,
    Resolution, SessionState, Settings, ToolKind, describe,
};
use agent_tool_traits::{Access, Confinement, Decision, Layer, PermissionCheck, Provenance, Source, Verdict};
use serde_json::Value;

use crate::config::{GuardSettings, SandboxMode};
use crate::error::Result;

/// What a guard is built for: one working directory, with its settings.
#[derive(Debug, Clone, Default)]
pub struct GuardOptions {
    /// The working directory: a root of the sandbox and the anchor of relative paths and rules.
    pub cwd: PathBuf,
    /// The home directory (`~` in paths and rules); `None` when there is none.
    pub home: Option<PathBuf>,
    /// A mode that overrides the settings' own (`--mode`, the hook input's `permission_mode`), with its source.
    pub mode: Option<(PermissionMode, Source)>,
    /// Extra roots beyond the working directory and `additionalDirectories` (the runtime's library dir).
    pub extra_roots: Vec<PathBuf>,
}

/// Everything one decision saw, for `explain`, the audit log and telemetry.
#[derive(Debug, Clone)]
pub struct Decided {
    /// The resolution: verdict, candidates in order, conflict log.
    pub resolution: Resolution,
    /// The shell analysis, for shell calls.
    pub analysis: Option<CommandAnalysis>,
    /// The sandbox's report on each file the call touches, with the access checked.
    pub paths: Vec<(Access, PathCheck)>,
    /// The findings of the tool's own checks and of the layers that went into the resolution.
    pub findings: Vec<Verdict>,
    /// For a shell call that is allowed (or asked, for after the user's allow): the kernel sandbox it runs
    /// under. `None` for other calls, denied ones, and where no sandbox runs (`agentGuard.sandbox` is `off`, or
    /// the kernel cannot enforce it).
    pub confinement: Option<Confinement>,
}

impl Decided {
    /// A decision made without the layers: `verdict` alone (a deny past the time bound, an internal error).
    pub fn from_verdict(verdict: Verdict) -> Self {
        Self {
            resolution: Resolution {
                verdict: verdict.clone(),
                considered: vec![verdict],
                conflicts: Vec::new(),
                classifier: None,
            },
            analysis: None,
            paths: Vec::new(),
            findings: Vec::new(),
            confinement: None,
        }
    }

    /// The final verdict.
    pub fn verdict(&self) -> &Verdict {
        &self.resolution.verdict
    }
}

/// The permission core of one working directory: compiled rules, the sandbox and the shell analyser, built once
/// and shared by every call (`Send + Sync`).
#[derive(Debug)]
pub struct Guard {
    policy: Policy,
    sandbox: Option<PathSandbox>,
    sandbox_error: Option<String>,
    bash: BashGuard,
    cwd: PathBuf,
    home: Option<PathBuf>,
    protected: ProtectedPaths,
    pub(crate) sandbox_mode: SandboxMode,
    pub(crate) env_policy: EnvPolicy,
}

impl Guard {
    /// Builds the guard of `options.cwd` from loaded `settings`.
    pub fn new(settings: &Settings, options: &GuardOptions) -> Result<Self> {
        let guard_settings = GuardSettings::from_settings(settings)?;
        let anchors = Anchors {
            cwd: options.cwd.clone(),
            home: options.home.clone(),
        };
        let mut policy = Policy::new(settings, &anchors)?;
        if let Some((mode, source)) = options.mode {
            policy = policy.with_mode(mode, source);
        }
        let mut config = SandboxConfig::new(options.cwd.clone());
        config.home = options.home.clone();
        for dir in settings.additional_directories() {
            config
                .roots
                .push(RootSpec::read_write(dir.path.clone(), RootKind::Additional));
        }
        for (dir, kind) in [
            (&guard_settings.library_dir, RootKind::Library),
            (&guard_settings.skills_dir, RootKind::Skills),
        ] {
            if let Some(dir) = dir {
                config.roots.push(RootSpec::read_write(dir.clone(), kind));
            }
        }
        for dir in &options.extra_roots {
            config
                .roots
                .push(RootSpec::read_write(dir.clone(), RootKind::Library));
        }
        for dir in &guard_settings.read_only_dirs {
            config
                .roots
                .push(RootSpec::read_only(dir.clone(), RootKind::Additional));
        }
        let protected = ProtectedPaths::default()
            .with_home(options.home.clone())
            .with_extra_writes(&guard_settings.protected_writes)
            .and_then(|p| p.with_extra_reads(&guard_settings.protected_reads))
            .map_err(|e| crate::error::Error::Settings {
                file: "agentGuard.protectedPaths".to_owned(),
                why: e.to_string(),
            })?;
        config.protected = protected.clone();
        // A working directory that cannot be a root (it does not exist) leaves the guard without a sandbox: every
        // file access is then of unknown containment and never allowed by default.
        let (sandbox, sandbox_error) = match PathSandbox::new(config) {
            Ok(sandbox) => (Some(sandbox), None),
            Err(e) => (None, Some(e.to_string())),
        };
        let mut bash_config = BashConfig {
            block_network: guard_settings.block_network,
            ..BashConfig::default()
        };
        for commands in &guard_settings.commands {
            let more: CommandTableExtension =
                serde_json::from_value(commands.clone()).map_err(|e| crate::error::Error::Settings {
                    file: "agentGuard.commands".to_owned(),
                    why: e.to_string(),
                })?;
            let table = &mut bash_config.commands;
            table.read_only.extend(more.read_only);
            table.deny.extend(more.deny);
            table.network.extend(more.network);
            table.wrappers.extend(more.wrappers);
            table.interpreters.extend(more.interpreters);
            table.package_managers.extend(more.package_managers);
        }
        let env_policy = EnvPolicy::default()
            .with_settings(
                &guard_settings.sandbox_env_remove,
                &guard_settings.sandbox_env_keep,
            )
            .map_err(|e| crate::error::Error::Settings {
                file: "agentGuard.sandboxEnv".to_owned(),
                why: e.to_string(),
            })?;
        Ok(Self {
            policy,
            sandbox,
            sandbox_error,
            bash: BashGuard::new(bash_config),
            cwd: options.cwd.clone(),
            home: options.home.clone(),
            protected,
            sandbox_mode: guard_settings.sandbox,
            env_policy,
        })
    }

    /// The compiled policy (rules, mode).
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The sandbox, when the working directory could be made a root.
    pub fn sandbox(&self) -> Option<&PathSandbox> {
        self.sandbox.as_ref()
    }

    /// The shell analyser.
    pub fn bash(&self) -> &BashGuard {
        &self.bash
    }

    /// The working directory the guard was built for.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The home directory (`~`), when there is one.
    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// The protected paths (secret files, paths whose writes always ask), defaults and settings.
    pub fn protected_paths(&self) -> &ProtectedPaths {
        &self.protected
    }

    /// `agentGuard.sandbox`: whether allowed shell calls run under the kernel sandbox.
    pub fn sandbox_mode(&self) -> SandboxMode {
        self.sandbox_mode
    }

    /// Decides a call of `tool` with `args` on its own: without hooks or tool checks, in a fresh session (the
    /// `agent-guard check` path, where every input is a process of its own).
    pub fn decide(&self, tool: &str, args: &Value) -> Decided {
        self.decide_with(tool, args, &HookOutcome::default(), &[], &SessionState::default())
    }

    /// Decides a call with what the PreToolUse hooks said and the tool's own `check_permissions`, in a session
    /// that has accumulated `session`. Pure: the guard and `session` are only read, so deciding the same call twice
    /// gives the same decision; the caller records the decisions it acts on ([`SessionState::record`]).
    pub fn decide_with(
        &self,
        tool: &str,
        args: &Value,
        hooks: &HookOutcome,
        tool_checks: &[PermissionCheck],
        session: &SessionState,
    ) -> Decided {
        let mut findings: Vec<Verdict> = tool_checks
            .iter()
            .filter(|c| c.decision != Decision::Allow)
            .map(|c| Verdict::new(c.decision, c.reason.clone(), Provenance::layer(Layer::Tool)))
            .collect();
        let target = match describe(tool, args) {
            Ok(target) => target,
            Err(why) => {
                findings.push(Verdict::new(
                    Decision::Deny,
                    format!("invalid input for `{tool}`: {why}"),
                    Provenance::layer(Layer::Tool),
                ));
                CallTarget::Opaque
            }
        };
        let mut analysis = None;
        let mut paths: Vec<(Access, PathCheck)> = Vec::new();
        // Commands the disk makes not read-only, with why: a project file they load exists.
        let mut loaded: Vec<(usize, String)> = Vec::new();
        let mut host = None;
        let mut agent = None;
        match &target {
            CallTarget::Shell(command) => {
                let result = self.bash.analyze(command);
                findings.extend(
                    result
                        .findings
                        .iter()
                        .map(|f| Verdict::new(f.decision, f.reason.clone(), Provenance::layer(Layer::Bash))),
                );
                // Every file the analysis saw goes through the sandbox, `~` paths included (the sandbox expands
                // them as the shell does).
                let moves = DirectoryMoves::of(&result);
                if let Some(why) = &moves.unknown {
                    findings.push(Verdict::new(
                        Decision::Ask,
                        why.clone(),
                        Provenance::layer(Layer::Bash),
                    ));
                }
                // Entering a directory is reading it: the commands after the move work there.
                for (_, dirs) in &moves.moves {
                    for dir in dirs {
                        if let Some(check) = self.check_path(dir, Access::Read, &mut findings) {
                            paths.push((Access::Read, check));
                        }
                    }
                }
                for (access, list) in [(Access::Read, &result.reads), (Access::Write, &result.writes)] {
                    for file in list {
                        // A relative path used after a `cd` may mean a file under the new directory: every place it
                        // may name is checked, so that `cd ~/.ssh && cat id_rsa` meets the rules of `~/.ssh`.
                        let mut places = moves.candidates(&file.path, file.command);
                        places.push(file.path.clone());
                        // A recursive search (`grep -r`, `rg`) reads everything below a directory operand.
                        let searched = file
                            .command
                            .and_then(|index| result.commands.get(index))
                            .filter(|command| {
                                command.recursive && access == Access::Read && file.via == AccessVia::Operand
                            })
                            .map(|command| Reach {
                                hidden: command.reads_hidden,
                                names: &command.names,
                            });
                        for place in &places {
                            if let Some(check) = self.check_path(place, access, &mut findings) {
                                if let Some(reach) = &searched {
                                    self.check_search(tool, &check, reach, &mut findings);
                                }
                                paths.push((access, check));
                            }
                            // A glob names the files it matches when the command runs: each is checked too.
                            if !file.literal {
                                self.check_glob(place, access, &mut findings, &mut paths);
                            }
                        }
                    }
                }
                // A recursive search that names no directory searches the working directory (`rg KEY`).
                for (index, command) in result.commands.iter().enumerate() {
                    let names_none = !result
                        .reads
                        .iter()
                        .any(|file| file.command == Some(index) && file.via == AccessVia::Operand);
                    if command.recursive
                        && names_none
                        && let Some(check) = self.check_path(".", Access::Read, &mut findings)
                    {
                        let reach = Reach {
                            hidden: command.reads_hidden,
                            names: &command.names,
                        };
                        self.check_search(tool, &check, &reach, &mut findings);
                    }
                }
                // A command that loads project files where they exist (`cargo --version` runs the toolchain a
                // `rust-toolchain.toml` names) is read-only only where none of them exists.
                for load in &result.loads {
                    let Some(index) = load.command else { continue };
                    if loaded.iter().any(|(i, _)| *i == index) {
                        continue;
                    }
                    let mut places = moves.candidates(&load.path, load.command);
                    places.push(load.path.clone());
                    let found = places
                        .iter()
                        .find_map(|place| self.project_file(place))
                        .or_else(|| self.file_above(&load.path));
                    if let Some(found) = found {
                        loaded.push((
                            index,
                            format!("runs code the project controls: `{}` exists", found.display()),
                        ));
                    }
                }
                analysis = Some(result);
            }
            CallTarget::Files(access, list) => {
                let searches = agent_rules::kind_of(tool) == ToolKind::Grep;
                for path in list {
                    if let Some(check) = self.check_path(path, *access, &mut findings) {
                        // A coding agent's search tool reads hidden files too, whatever its glob.
                        if searches {
                            let reach = Reach {
                                hidden: true,
                                names: &[],
                            };
                            self.check_search(tool, &check, &reach, &mut findings);
                        }
                        paths.push((*access, check));
                    }
                }
            }
            CallTarget::Web { url, host: h } => match h {
                // Only the web: a `file:` or other scheme would read local files past the Read rules.
                _ if !is_web_url(url) => findings.push(Verdict::new(
                    Decision::Deny,
                    format!("`{url}` is not an http(s) URL"),
                    Provenance::layer(Layer::Tool),
                )),
                Some(h) => host = Some(h.as_str()),
                None => findings.push(Verdict::new(
                    Decision::Ask,
                    format!("the URL `{url}` has no host to check"),
                    Provenance::layer(Layer::Tool),
                )),
            },
            CallTarget::Agent(name) => agent = *name,
            CallTarget::Opaque => {}
        }
        if matches!(target, CallTarget::Opaque | CallTarget::Agent(_)) {
            self.named_path_findings(tool, args, &mut findings);
        }
        let is_shell = analysis.is_some();
        for (access, check) in &paths {
            findings.extend(self.path_finding(*access, check, is_shell));
        }
        let facts = CallFacts {
            shell: analysis.as_ref().map(|a| {
                a.commands
                    .iter()
                    .enumerate()
                    .map(|(index, c)| {
                        let why = loaded
                            .iter()
                            .find(|(i, _)| *i == index)
                            .map(|(_, why)| why.as_str());
                        CommandFact {
                            argv: &c.argv,
                            inner: c.inner,
                            read_only: c.read_only && why.is_none(),
                            why: why.filter(|_| c.read_only),
                        }
                    })
                    .collect()
            }),
            paths: paths
                .iter()
                .map(|(access, check)| PathFact {
                    access: *access,
                    written: &check.absolute,
                    resolved: check.resolved.as_deref(),
                    inside_roots: self.sandbox.as_ref().map(|_| check.root.is_some()),
                })
                .collect(),
            host,
            agent,
        };
        let resolution = self.policy.decide(
            &Request {
                tool,
                facts: &facts,
                findings: &findings,
                hooks,
            },
            session,
        );
        let mut resolution = resolution;
        if let Some(why) = &self.sandbox_error {
            resolution.verdict.diagnostics.push(format!("no sandbox: {why}"));
        }
        let confinement = analysis
            .as_ref()
            .and_then(|analysis| self.confinement(analysis, &mut resolution.verdict));
        Decided {
            resolution,
            analysis,
            paths,
            findings,
            confinement,
        }
    }

    /// Checks every file the shell glob `pattern` matches now (nothing for a pattern without a glob character).
    /// A pattern whose matches cannot all be checked asks, naming why.
    fn check_glob(
        &self,
        pattern: &str,
        access: Access,
        findings: &mut Vec<Verdict>,
        paths: &mut Vec<(Access, PathCheck)>,
    ) {
        let Some(sandbox) = &self.sandbox else {
            return;
        };
        let matches = sandbox.glob(pattern, MAX_GLOB_MATCHES);
        if let Some(why) = matches.incomplete {
            findings.push(Verdict::new(
                Decision::Ask,
                format!("the glob `{pattern}` cannot be checked file by file: {why}"),
                Provenance::layer(Layer::Sandbox),
            ));
        }
        for path in &matches.paths {
            if let Some(check) = self.check_path(path, access, findings) {
                paths.push((access, check));
            }
        }
    }

    /// A search of a directory reads everything below it (hidden files only when `reach.hidden`, only files of
    /// the names it lists when it lists some): a deny rule on reads that protects a place there which exists, or a
    /// secret file there (a protected read: `.env`, `*.pem`, …), makes the search ask, naming it, so that a
    /// narrower search can leave the place out.
    fn check_search(&self, tool: &str, check: &PathCheck, reach: &Reach<'_>, findings: &mut Vec<Verdict>) {
        let reads_hidden = reach.hidden;
        // The path as written and as resolved; the second only when a link made them differ.
        let resolved = check.resolved.as_deref().filter(|r| *r != check.absolute);
        for dir in [Some(check.absolute.as_path()), resolved]
            .into_iter()
            .flatten()
            .filter(|dir| dir.is_dir())
        {
            let reached = |place: &str| {
                let hidden = Path::new(place).strip_prefix(dir).is_ok_and(|below| {
                    below
                        .components()
                        .any(|c| c.as_os_str().as_encoded_bytes().starts_with(b"."))
                });
                (reads_hidden || !hidden) && std::fs::symlink_metadata(place).is_ok()
            };
            let protected = self
                .policy
                .deny_rules_beneath(tool, dir)
                .into_iter()
                .find(|(_, place)| reached(place));
            if let Some((rule, place)) = protected {
                findings.push(Verdict::new(
                    Decision::Ask,
                    format!(
                        "searching `{}` reads `{place}`, which `{}` denies; a narrower search can leave it out",
                        dir.display(),
                        rule.text
                    ),
                    Provenance::layer(Layer::Rules),
                ));
                return;
            }
            if let Some(sandbox) = &self.sandbox {
                let reached = sandbox.protected_beneath(dir, reach);
                if let Some((file, why)) = reached.protected {
                    findings.push(Verdict::new(
                        Decision::Ask,
                        format!(
                            "searching `{}` reads `{}`: {why}; a narrower search can leave it out",
                            dir.display(),
                            file.display()
                        ),
                        Provenance::layer(Layer::Sandbox),
                    ));
                    return;
                }
                if let Some(why) = reached.incomplete {
                    findings.push(Verdict::new(
                        Decision::Ask,
                        format!(
                            "searching `{}` cannot be checked for secret files: {why}",
                            dir.display()
                        ),
                        Provenance::layer(Layer::Sandbox),
                    ));
                    return;
                }
            }
        }
    }

    /// The file a command loads, where it exists and the project controls it: inside a root, and not in the
    /// project's own `.git` (whose writes are protected). Without a sandbox nothing can be ruled out: the path as
    /// written.
    fn project_file(&self, path: &str) -> Option<PathBuf> {
        let Some(sandbox) = &self.sandbox else {
            return Some(PathBuf::from(path));
        };
        let check = sandbox.check(path, Access::Read);
        let resolved = check.resolved?;
        let own_git = sandbox
            .roots()
            .first()
            .is_some_and(|root| resolved.starts_with(root.path().join(".git")));
        (check.root.is_some() && !own_git && std::fs::symlink_metadata(&resolved).is_ok()).then_some(resolved)
    }

    /// The file `relative` names in a directory above the working directory, where a tool that searches upwards
    /// (cargo's `.cargo/config.toml`, `rust-toolchain.toml`, `go.work`) finds it: inside a root as
    /// [`Guard::project_file`] sees it, outside the roots wherever it exists (a monorepo's configuration above the
    /// package an agent works in). The home directory holds the user's own configuration (`~/.cargo/config.toml`)
    /// and is not searched, nor is `/`.
    fn file_above(&self, relative: &str) -> Option<PathBuf> {
        let path = Path::new(relative);
        if relative.starts_with('~')
            || !path.is_relative()
            || path.components().any(|c| c == Component::ParentDir)
        {
            return None;
        }
        let home = self.home.as_deref();
        self.cwd
            .ancestors()
            .skip(1)
            .filter(|dir| dir.parent().is_some() && home != Some(*dir))
            .find_map(|dir| {
                let candidate = dir.join(path);
                match &self.sandbox {
                    Some(sandbox)
                        if sandbox
                            .check(&candidate.to_string_lossy(), Access::Read)
                            .root
                            .is_some() =>
                    {
                        self.project_file(&candidate.to_string_lossy())
                    }
                    _ => std::fs::symlink_metadata(&candidate).is_ok().then_some(candidate),
                }
            })
    }

    /// A tool the rules cannot look into (an MCP server's, an unknown one, a subagent's start) may still read or
    /// write the files its arguments name (`{"path": ".env"}`): a secret file named there asks, as it does for the
    /// file tools, in every mode, and so does a path that cannot be resolved (through a `/proc` magic link), which
    /// may lead anywhere. Whether the tool reads it cannot be known, so nothing else follows from it.
    fn named_path_findings(&self, tool: &str, args: &Value, findings: &mut Vec<Verdict>) {
        for path in named_paths(args) {
            let Some(check) = self.check_path(path, Access::Read, findings) else {
                continue;
            };
            let why = match check.protected {
                Some(why) => format!("protected path: {why}"),
                None if check.resolved.is_none() && check.verdict.decision == Decision::Deny => {
                    check.verdict.reason().to_owned()
                }
                None => continue,
            };
            findings.push(Verdict::new(
                Decision::Ask,
                format!("`{tool}` is given a path it may read: {why}"),
                Provenance::layer(Layer::Sandbox),
            ));
        }
    }

    /// The sandbox's report on one path; without a sandbox, a lexical report whose containment is unknown.
    fn check_path(&self, path: &str, access: Access, findings: &mut Vec<Verdict>) -> Option<PathCheck> {
        match &self.sandbox {
            Some(sandbox) => Some(sandbox.check(path, access)),
            None => {
                if path.contains('\0') {
                    findings.push(Verdict::new(
                        Decision::Deny,
                        "a path with a NUL byte",
                        Provenance::layer(Layer::Sandbox),
                    ));
                    return None;
                }
                let absolute = agent_rules::absolute_lexical(Path::new(path), &self.cwd);
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
        }
    }

    /// The finding a path contributes. A shell command reading outside the roots is not denied (system files are
    /// read all the time); it only loses its read-only default (the rules see it as outside the roots). Every other
    /// sandbox finding counts as it is.
    fn path_finding(&self, access: Access, check: &PathCheck, is_shell: bool) -> Option<Verdict> {
        let verdict = &check.verdict;
        match verdict.decision {
            Decision::Allow => None,
            Decision::Deny
                if is_shell && access == Access::Read && check.root.is_none() && check.resolved.is_some() =>
            {
                None
            }
            Decision::Deny | Decision::Ask => Some(verdict.clone()),
        }
    }
}

/// The strings an opaque tool's arguments give under names that say they are files (`path`, `file_path`,
/// `filePath`, `paths`, `file`, `filename`, `source`, `destination`, `directory`, …), at the top level and one level
/// down (`{"options": {"path": …}}`), lists included.
fn named_paths(args: &Value) -> Vec<&str> {
    fn names_a_file(key: &str) -> bool {
        let key: String = key
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect();
        key.ends_with("path")
            || key.ends_with("paths")
            || key.ends_with("file")
            || key.ends_with("files")
            || key.ends_with("filename")
            || matches!(
                key.as_str(),
                "dir" | "directory" | "source" | "destination" | "src" | "dest" | "target"
            )
    }
    fn strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
        match value {
            Value::String(text) => out.push(text),
            Value::Array(items) => items.iter().for_each(|item| strings(item, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    let Some(object) = args.as_object() else {
        return out;
    };
    for (key, value) in object {
        if names_a_file(key) {
            strings(value, &mut out);
        } else if let Some(inner) = value.as_object() {
            for (key, value) in inner {
                if names_a_file(key) {
                    strings(value, &mut out);
                }
            }
        }
    }
    out
}

/// Whether `url` uses http or https (scheme names are case-insensitive).
fn is_web_url(url: &str) -> bool {
    url.trim().split_once(':').is_some_and(|(scheme, _)| {
        scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
    })
}

/// The directories a shell command line may move to with `cd`/`pushd` before it uses relative paths. The analysis
/// reports paths as written; the shell resolves them against its working directory at that moment. Scoping
/// (subshells, pipelines) is not modelled: a relative path used after a move is checked both where it would be
/// without the move and under every directory moved to before it, which over-approximates and never misses one.
struct DirectoryMoves {
    /// (index of the `cd` command, the directories it may lead to, relative ones joined to the earlier moves).
    moves: Vec<(usize, Vec<String>)>,
    /// Why the target of some move cannot be known (a variable, `cd -`, `popd`, a directory-stack tilde, too many
    /// combinations).
    unknown: Option<String>,
}

/// More combinations of chained relative moves than this are not followed; the call is asked instead.
const MAX_MOVE_TARGETS: usize = 16;

/// The most files one glob may match and still be checked one by one (a few milliseconds of checks); a larger
/// expansion asks.
const MAX_GLOB_MATCHES: usize = 2048;

impl DirectoryMoves {
    fn of(analysis: &CommandAnalysis) -> Self {
        let mut moves: Vec<(usize, Vec<String>)> = Vec::new();
        let mut unknown = None;
        for (index, command) in analysis.commands.iter().enumerate() {
            let effective = command.effective();
            let Some(name) = effective.first().map(String::as_str) else {
                continue;
            };
            if !matches!(name, "cd" | "pushd" | "popd" | "chdir") {
                continue;
            }
            // Options come first (`cd -P DIR`, `pushd -n DIR`); `--` ends them; `-` alone and `+N`/`-N` of the
            // directory stack are operands.
            let args = effective.get(1..).unwrap_or_default();
            let options: Vec<&String> = args
                .iter()
                .take_while(|a| a.starts_with('-') && a.len() > 1 && a.as_str() != "--")
                .filter(|a| !a.get(1..).is_some_and(|n| n.chars().all(|c| c.is_ascii_digit())))
                .collect();
            let rest = args.get(options.len()..).unwrap_or_default();
            let rest = rest.strip_prefix(&["--".to_owned()][..]).unwrap_or(rest);
            // `pushd -n`/`popd -n` only change the stack.
            if matches!(name, "pushd" | "popd") && options.iter().any(|o| o.contains('n')) {
                continue;
            }
            let target = match (name, rest.first()) {
                ("popd", _) | ("pushd", None) => None,
                (_, None) => Some("~".to_owned()),
                (_, Some(t))
                    if t == "-"
                        || t.starts_with(['+', '-'])
                        || t.contains(['$', '`', '*', '?', '['])
                        || (t.starts_with('~')
                            && !(t == "~" || t.starts_with("~/") || t == "~+" || t.starts_with("~+/"))) =>
                {
                    None
                }
                // `~+` is the directory it is in.
                (_, Some(t)) if t == "~+" => Some(".".to_owned()),
                (_, Some(t)) => Some(t.strip_prefix("~+/").map_or_else(|| t.clone(), str::to_owned)),
            };
            let Some(target) = target else {
                unknown = Some(format!(
                    "`{}` moves to a directory only known at run time; later relative paths cannot be checked",
                    effective.join(" ")
                ));
                continue;
            };
            let mut targets = Vec::new();
            if target.starts_with('/') || target == "~" || target.starts_with("~/") {
                targets.push(target);
            } else {
                targets.push(target.clone());
                for (_, earlier) in &moves {
                    targets.extend(
                        earlier
                            .iter()
                            .map(|dir| format!("{}/{target}", dir.trim_end_matches('/'))),
                    );
                }
            }
            targets.sort();
            targets.dedup();
            if targets.len() > MAX_MOVE_TARGETS {
                unknown = Some(
                    "too many chained `cd` moves to follow; later relative paths cannot be checked"
                        .to_owned(),
                );
                targets.truncate(MAX_MOVE_TARGETS);
            }
            moves.push((index, targets));
        }
        Self { moves, unknown }
    }

    /// The paths a relative `path` used by command `command` may name after the moves before it (all moves when
    /// the user is not known, as for a redirection of a compound command).
    fn candidates(&self, path: &str, command: Option<usize>) -> Vec<String> {
        if path.starts_with('/') || path == "~" || path.starts_with("~/") {
            return Vec::new();
        }
        let mut out: Vec<String> = self
            .moves
            .iter()
            .filter(|(index, _)| command.is_none_or(|c| *index < c))
            .flat_map(|(_, dirs)| {
                dirs.iter()
                    .map(|dir| format!("{}/{path}", dir.trim_end_matches('/')))
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }
}
