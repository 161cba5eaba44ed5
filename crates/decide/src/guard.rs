//! The guard of one working directory and the decision pipeline it runs: describe the call, gather the facts its
//! kind needs, resolve them against the rules and the mode, confine what is allowed.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use agent_bash_guard::{BashConfig, BashGuard, CommandTableExtension};
use agent_fs_sandbox::{PathSandbox, ProtectedPaths, RootKind, RootSpec, SandboxConfig};
use agent_os_sandbox::{DomainPolicy, EnvPolicy, KernelSupport};
use agent_rules::{Anchors, PermissionMode, Policy, SessionState, Settings};
use agent_tool_traits::Source;
use serde_json::Value;

use crate::bounded::CallInput;
use crate::config::{GuardSettings, SandboxMode};
use crate::decided::Decided;
use crate::describe::Described;
use crate::error::{Error, Result};
use crate::owners::Owners;
use crate::taint::TaintSettings;

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
    /// The project the working directory belongs to ([`agent_rules::project_root`]), when it is above the working
    /// directory: a read-write root beside it. Relative paths and rules still start at `cwd`.
    pub project: Option<PathBuf>,
    /// `--auto-allow on|off`: overrides `agentGuard.sandbox.autoAllow` (`None`: the settings decide).
    pub auto_allow: Option<bool>,
}

/// Whether a shell line that asks only for effects the kernel sandbox contains is allowed to run inside it
/// (`agentGuard.sandbox.autoAllow`), and when not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AutoAllow {
    /// Contained allows are on.
    On,
    /// Contained allows are off, for this reason (a setting, the command line, or a kernel that cannot enforce
    /// the sandbox).
    Off(String),
}

/// The permission core of one working directory: compiled rules, the sandbox and the shell analyser, built once
/// and shared by every call (`Send + Sync`).
#[derive(Debug)]
pub struct Guard {
    pub(crate) policy: Policy,
    pub(crate) sandbox: Option<PathSandbox>,
    sandbox_error: Option<String>,
    pub(crate) bash: BashGuard,
    pub(crate) cwd: PathBuf,
    /// The project the working directory belongs to (the working directory itself when none is above it): its
    /// `.agent-guard/` directory keeps the snapshots of `agent-guard undo`.
    project: PathBuf,
    pub(crate) home: Option<PathBuf>,
    protected: ProtectedPaths,
    pub(crate) sandbox_mode: SandboxMode,
    pub(crate) env_policy: EnvPolicy,
    /// `agentGuard.sandbox.read`, with `~` expanded: more places outside the roots sandboxed commands may read.
    pub(crate) sandbox_reads: Vec<PathBuf>,
    /// `agentGuard.sandbox.memoryMax`, the memory bound of sandboxed commands.
    pub(crate) memory_max: Option<u64>,
    /// `agentGuard.sandbox.publish`, the ports a command run in the background publishes on this machine.
    pub(crate) publish: Vec<agent_os_sandbox::PortRange>,
    /// Whether a line asking only for what the sandbox contains is allowed inside it, and why not.
    pub(crate) auto_allow: AutoAllow,
    /// The domains a sandboxed command allowed the network reaches through the proxy.
    pub(crate) network: DomainPolicy,
    /// The writable roots whose `workspace-write` runs `agent-guard undo` can take back, found when a decision
    /// first needs them (a line that removes or discards files).
    pub(crate) undo_roots: std::sync::OnceLock<Vec<PathBuf>>,
    /// `agentGuard.undo`.
    undo: Option<bool>,
    /// `agentGuard.telemetry`: read by the entry points that export, never by a decision.
    telemetry: crate::config::TelemetrySettings,
    /// `agentGuard.taint`: the sources, sinks and trusted domains the settings add.
    pub(crate) taint: TaintSettings,
    /// Whose each of the project's local settings files is, found when first needed.
    pub(crate) owners: Owners,
    /// The local settings files whose `agentGuard` section or mode would loosen the sandbox as the user's.
    loosening_sections: Vec<PathBuf>,
    /// [`Self::loosening_local_files`], found when a line that writes git's index first needs them.
    loosening_local_files: std::sync::OnceLock<Vec<PathBuf>>,
}

impl Guard {
    /// Builds the guard of `options.cwd` from loaded `settings`.
    pub fn new(settings: &Settings, options: &GuardOptions) -> Result<Self> {
        let owners = Owners::default();
        let (guard_settings, mut loosening_sections) = GuardSettings::merge(settings, &owners)?;
        let anchors = Anchors {
            cwd: options.cwd.clone(),
            home: options.home.clone(),
        };
        let mut policy = Policy::new(settings, &anchors)?;
        // A mode only a trusted source may set, from a local settings file that is the user's own.
        if let Some((mode, file)) = settings.refused_local_mode() {
            loosening_sections.push(file.to_owned());
            if owners.repository(Source::Local, Some(file)).is_none() {
                policy = policy.with_users_local_mode(mode, file);
            }
        }
        if let Some((mode, source)) = options.mode {
            policy = policy.with_mode(mode, source);
        }
        // The programs a repository's git configuration names inside it run later, when the user runs git.
        let repository_programs: Vec<String> = std::iter::once(&options.cwd)
            .chain(options.project.as_ref())
            .flat_map(|root| crate::repo_programs::protected_patterns(root, options.home.as_deref()))
            .collect();
        let protected = ProtectedPaths::default()
            .with_home(options.home.clone())
            .with_extra_writes(&guard_settings.protected_writes)
            .and_then(|p| p.with_extra_writes(&repository_programs))
            .and_then(|p| p.with_extra_reads(&guard_settings.protected_reads))
            .map_err(|e| setting_error("agentGuard.protectedPaths", e))?;
        let mut config = sandbox_config(settings, &guard_settings, options);
        config.protected = protected.clone();
        // A working directory that cannot be a root (it does not exist) leaves the guard without a sandbox: every
        // file access is then of unknown containment and never allowed by default.
        let (sandbox, sandbox_error) = match PathSandbox::new(config) {
            Ok(sandbox) => (Some(sandbox), None),
            Err(e) => (None, Some(e.to_string())),
        };
        let env_policy = EnvPolicy::default()
            .with_settings(
                &guard_settings.sandbox_env_remove,
                &guard_settings.sandbox_env_keep,
            )
            .map_err(|e| setting_error("agentGuard.sandboxEnv", e))?
            .with_passed(&guard_settings.sandbox_env_pass)
            .map_err(|e| setting_error("agentGuard.sandbox.env", e))?;
        let network = crate::confine::network_policy(&guard_settings.network, &policy, &owners);
        // Every command runs inside the kernel sandbox where it is enforced, with the environment `env_policy`
        // passes: without `CDPATH` unless the settings pass it, so `cd NAME` goes to `./NAME` there.
        let cdpath_unset = guard_settings.sandbox != SandboxMode::Off
            && KernelSupport::enforcement_missing().is_none()
            && env_policy
                .removes(OsStr::new("CDPATH"), OsStr::new("/"), false)
                .is_some();
        Ok(Self {
            policy,
            sandbox,
            sandbox_error,
            bash: BashGuard::new(bash_config(&guard_settings, cdpath_unset)?),
            cwd: options.cwd.clone(),
            project: options.project.clone().unwrap_or_else(|| options.cwd.clone()),
            home: options.home.clone(),
            protected,
            sandbox_mode: guard_settings.sandbox,
            env_policy,
            sandbox_reads: sandbox_reads(&guard_settings.sandbox_read, options.home.as_deref()),
            memory_max: guard_settings.memory_max,
            publish: guard_settings.sandbox_publish.clone(),
            auto_allow: auto_allow(&guard_settings, options.auto_allow),
            network,
            undo_roots: std::sync::OnceLock::new(),
            undo: guard_settings.undo,
            telemetry: guard_settings.telemetry.clone(),
            taint: guard_settings.taint,
            owners,
            loosening_sections,
            loosening_local_files: std::sync::OnceLock::new(),
        })
    }

    /// The local settings files that would loosen the sandbox as the user's, so that whose they are decides
    /// something, and a git write may change it (`Guard::confinement`): a loosening `agentGuard` section, a mode
    /// only a trusted source may set, an allow rule naming a program no sandbox can contain (which takes it out of
    /// the sandbox) or a `WebFetch(domain:…)` allow rule (which adds its domain to the proxy's). Found once, when
    /// first asked.
    pub(crate) fn loosening_local_files(&self) -> &[PathBuf] {
        self.loosening_local_files.get_or_init(|| {
            let mut files = self.loosening_sections.clone();
            for rule in self.policy.rules() {
                let Some(file) = rule.file.as_ref().filter(|_| {
                    rule.source == Source::Local && rule.behavior == agent_tool_traits::Decision::Allow
                }) else {
                    continue;
                };
                if files.contains(file) {
                    continue;
                }
                let unconfinable = rule.command_name().is_some_and(|program| {
                    // A program name the shell would read otherwise counts, to be safe.
                    !program
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"._+-".contains(&b))
                        || self
                            .bash
                            .analyze(program)
                            .commands
                            .iter()
                            // A program no sandbox contains, whether or not this word alone may run outside.
                            .any(|c| c.unconfinable || c.confined.is_some())
                });
                if unconfinable || rule.domain().is_some() {
                    files.push(file.clone());
                }
            }
            files
        })
    }

    /// `agentGuard.telemetry` of the settings this guard was built from (no decision reads it).
    pub fn telemetry(&self) -> &crate::config::TelemetrySettings {
        &self.telemetry
    }

    /// Where and whether `workspace-write` runs are snapshotted for `agent-guard undo`: the environment's
    /// `AGENT_GUARD_UNDO*` variables, else the `.agent-guard/undo/` of the project, or of the home directory for a
    /// directory that is no project (as the audit log: an `.agent-guard` made there would mark it a project, the
    /// root of every directory below it); off when `agentGuard.undo` is `false`.
    pub fn undo_settings(&self) -> agent_undo::UndoSettings {
        let base = if marked_project(&self.project) {
            Some(self.project.as_path())
        } else {
            self.home.as_deref()
        };
        let mut settings = agent_undo::UndoSettings::from_env(base, self.home.as_deref());
        settings.enabled &= self.undo != Some(false);
        settings
    }

    /// Where the sandbox keeps this project's layers of the package caches (what its sandboxed builds download,
    /// never written to the shared caches): the project's `.agent-guard/caches/`, or for a directory that is no
    /// project `<home>/.agent-guard/caches/<hash of its path>/` (an `.agent-guard` made there would mark it a
    /// project); `None` without a home.
    pub fn cache_store(&self, home: Option<&Path>) -> Option<PathBuf> {
        self.state_place(home, "caches")
    }

    /// Where the sandbox keeps its index of which files of this project hold a credential
    /// (`agent_secrets::ContentIndex`): the project's `.agent-guard/credential-index`, or for a directory that
    /// is no project `<home>/.agent-guard/credential-index/<hash of its path>`; `None` without a home.
    pub(crate) fn content_index_place(&self) -> Option<PathBuf> {
        self.state_place(self.home.as_deref(), "credential-index")
    }

    /// `name` in the project's `.agent-guard/`, or for a directory that is no project in
    /// `<home>/.agent-guard/<name>/<hash of its path>`.
    fn state_place(&self, home: Option<&Path>, name: &str) -> Option<PathBuf> {
        if marked_project(&self.project) {
            return Some(self.project.join(".agent-guard").join(name));
        }
        // FNV-1a over the path's bytes: stable across runs and versions, unlike the standard library's hasher.
        let hash = self
            .project
            .as_os_str()
            .as_encoded_bytes()
            .iter()
            .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
            });
        home.map(|home| home.join(".agent-guard").join(name).join(format!("{hash:016x}")))
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

    /// Whether contained allows are on (`agentGuard.sandbox.autoAllow`, `--auto-allow`), and why not.
    pub fn auto_allow(&self) -> &AutoAllow {
        &self.auto_allow
    }

    /// Decides a call of `tool` with `args` on its own: without hooks or tool checks, in a fresh session (the
    /// `agent-guard check` path, where every input is a process of its own).
    pub fn decide(&self, tool: &str, args: &Value) -> Decided {
        self.decide_in_session(&CallInput::new(tool, args.clone()), &SessionState::default())
    }

    /// Decides `call` (with what the PreToolUse hooks said and the tool's own `check_permissions`) in a session
    /// that has accumulated `session`. Pure: the guard and `session` are only read, so deciding the same call twice
    /// gives the same decision; the caller records the decisions it acts on ([`SessionState::record`]).
    ///
    /// The four steps, each in a module of its own:
    /// 1. describe: what the call touches, as the rules see it, and the tool's own findings (`Described`);
    /// 2. gather: the facts of its kind (the shell analysis, the sandbox's report on each file, the host, the
    ///    subagent) and the findings of the layers that produced them (`gather`); then the session's taint
    ///    (`taint`): what the call adds to it ([`Decided::taint`], for the caller to record), and the ask of a way
    ///    out of a session that has seen untrusted content and private data;
    /// 3. resolve: the findings, the rules, the mode, the hooks and the session into one verdict (`resolve`), a
    ///    shell line that asked only for what the kernel sandbox contains allowed inside it (`contain`), and a line
    ///    whose commands no sandbox can contain, allowed by the user's rules, let run outside it (`outside`);
    /// 4. confine: the kernel sandbox an allowed shell call runs under (`confine`), with the domains named in the
    ///    line that the decision allowed beyond the settings' own.
    ///
    /// Nothing runs while a call is decided, so what the decision learns of the file system holds until it ends:
    /// it keeps those facts for itself (`agent_fs_sandbox::with_batch_facts`), or shares its batch's.
    pub fn decide_in_session(&self, call: &CallInput, session: &SessionState) -> Decided {
        agent_fs_sandbox::with_batch_facts(|| self.decide_with_facts(call, session))
    }

    /// [`Guard::decide_in_session`], within the file-system facts of the decision or of its batch.
    fn decide_with_facts(&self, call: &CallInput, session: &SessionState) -> Decided {
        let described = Described::of(call);
        let mut gathered = self.gather(&call.tool, &call.args, described);
        let tainting = self.taint(call, &gathered, session.taint());
        // First among the findings, so that its reason leads among the asks of its step.
        if let Some(finding) = tainting.finding {
            gathered.findings.insert(0, finding);
            gathered.concerns.insert(0, crate::gather::About::GUARDED);
        }
        let mut resolution = self.resolve(&call.tool, &gathered, &call.hooks, session);
        // A server of this project run in the background is reached only by a session whose untrusted content
        // limits nothing.
        let services_reachable = session.taint().untrusted.is_none();
        let contained = self.contain(&gathered, &mut resolution, services_reachable);
        let outside = self.outside(&gathered, &mut resolution);
        if let Some(why) = &self.sandbox_error {
            resolution.verdict.diagnostics.push(format!("no sandbox: {why}"));
        }
        let confinement = gathered
            .analysis
            .as_ref()
            .filter(|_| outside.is_none())
            .and_then(|analysis| {
                self.confinement(
                    analysis,
                    &gathered.project_code,
                    &mut resolution.verdict,
                    contained.is_some(),
                )
            })
            .map(|confinement| agent_tool_traits::Confinement {
                background: runs_in_background(&call.args),
                ..confinement
            });
        // What the allowed line cannot do inside the sandbox, said with the allow (an ask says it already).
        if resolution.verdict.decision == agent_tool_traits::Decision::Allow && confinement.is_some() {
            resolution.verdict.reasons.extend(gathered.notes.iter().cloned());
        }
        let domains = match (&gathered.analysis, confinement) {
            (Some(analysis), Some(confinement)) if confinement.network => {
                let granted = self.granted_domains(analysis, &gathered.remote_hosts, &resolution.verdict);
                if let Some(why) = self
                    .repository_cannot_grant(analysis, &gathered.remote_hosts, &resolution.verdict)
                    .or_else(|| {
                        self.grant_shared(analysis, &gathered.project_code, &resolution.verdict, &granted)
                    })
                {
                    resolution.verdict = self.cannot_carry_out(&resolution.verdict, why);
                }
                // An ask grants what the allow would have: for after the person's allow.
                granted
            }
            _ => Vec::new(),
        };
        let services = match (&gathered.analysis, confinement) {
            (Some(analysis), Some(confinement)) if confinement.network && services_reachable => {
                self.granted_services(analysis)
            }
            _ => Vec::new(),
        };
        // A line nobody approved that reaches one of those servers reaches nothing else: what it sends the server
        // (a request that changes it) a redirect the server answers, or a URL or an option from a file, would
        // take elsewhere.
        let services_only = !services.is_empty() && !crate::confine::deliberate(&resolution.verdict);
        // After untrusted content, a line nobody approved reaches only the domains the session reached before or
        // the line names: a domain first contacted after the taint is one the content may have named. Once the
        // session has also read private data it reaches none: the domain the content came from may be the one it
        // asks the data be sent to, and what a build or a script sends is not seen by the analysis (a line that
        // names its host asks as a way out).
        let session_limit = match (&gathered.analysis, confinement, &session.taint().untrusted) {
            (Some(analysis), Some(confinement), Some(untrusted))
                if confinement.network && !crate::confine::deliberate(&resolution.verdict) =>
            {
                Some(crate::SessionLimit {
                    domains: if session.taint().is_trifecta() {
                        Vec::new()
                    } else {
                        self.session_domains(analysis, session.taint(), &domains)
                    },
                    untrusted: untrusted.clone(),
                })
            }
            _ => None,
        };
        Decided {
            resolution,
            analysis: gathered.analysis,
            paths: gathered.paths,
            findings: gathered.findings,
            confinement,
            contained,
            outside,
            domains,
            services,
            services_only,
            taint: tainting.facts,
            session_limit,
            search_excludes: gathered.search_excludes,
        }
    }
}

/// Whether contained allows are on: the command line's choice, else the settings' (on by default), and only
/// where the kernel sandbox runs and the kernel enforces it.
fn auto_allow(settings: &GuardSettings, flag: Option<bool>) -> AutoAllow {
    let chosen = match (flag, settings.auto_allow) {
        (Some(false), _) => return AutoAllow::Off("`--auto-allow off`".to_owned()),
        (None, Some(false)) => {
            return AutoAllow::Off("`agentGuard.sandbox.autoAllow` is `false`".to_owned());
        }
        (Some(true), _) => "`--auto-allow on`",
        (None, Some(true) | None) => "`agentGuard.sandbox.autoAllow`",
    };
    if settings.sandbox == SandboxMode::Off {
        return AutoAllow::Off(format!(
            "{chosen} is ignored: `agentGuard.sandbox` is `off`, so nothing runs inside the sandbox"
        ));
    }
    match KernelSupport::enforcement_missing() {
        Some(why) => AutoAllow::Off(format!(
            "{chosen} is ignored: {why}, so the kernel cannot contain what would be allowed"
        )),
        None => AutoAllow::On,
    }
}

/// The roots of the file-system sandbox: the working directory, the project above it, `additionalDirectories`, the runtime's library and
/// skills directories, the caller's extra roots (read-write) and `agentGuard.readOnlyDirectories` (read-only).
fn sandbox_config(
    settings: &Settings,
    guard_settings: &GuardSettings,
    options: &GuardOptions,
) -> SandboxConfig {
    let mut config = SandboxConfig::new(options.cwd.clone());
    config.home = options.home.clone();
    if let Some(project) = &options.project {
        config
            .roots
            .push(RootSpec::read_write(project.clone(), RootKind::Project));
    }
    let additional = settings
        .additional_directories()
        .iter()
        .map(|dir| (dir.path.clone(), RootKind::Additional));
    let runtime_dirs = [
        (&guard_settings.library_dir, RootKind::Library),
        (&guard_settings.skills_dir, RootKind::Skills),
    ]
    .into_iter()
    .filter_map(|(dir, kind)| dir.clone().map(|dir| (dir, kind)));
    let extra = options
        .extra_roots
        .iter()
        .map(|dir| (dir.clone(), RootKind::Library));
    for (dir, kind) in additional.chain(runtime_dirs).chain(extra) {
        config.roots.push(RootSpec::read_write(dir, kind));
    }
    for dir in &guard_settings.read_only_dirs {
        config
            .roots
            .push(RootSpec::read_only(dir.clone(), RootKind::Additional));
    }
    config
}

/// The shell analyser's configuration: `blockNetwork` and the command table extended by `agentGuard.commands`.
fn bash_config(guard_settings: &GuardSettings, cdpath_unset: bool) -> Result<BashConfig> {
    let mut config = BashConfig {
        block_network: guard_settings.block_network,
        cdpath_unset,
        ..BashConfig::default()
    };
    for commands in &guard_settings.commands {
        let more: CommandTableExtension =
            serde_json::from_value(commands.clone()).map_err(|e| setting_error("agentGuard.commands", e))?;
        let table = &mut config.commands;
        table.read_only.extend(more.read_only);
        table.deny.extend(more.deny);
        table.network.extend(more.network);
        table.wrappers.extend(more.wrappers);
        table.interpreters.extend(more.interpreters);
        table.package_managers.extend(more.package_managers);
    }
    Ok(config)
}

/// The error of a malformed `agentGuard` setting `key`.
fn setting_error(key: &str, why: impl std::fmt::Display) -> Error {
    Error::Settings {
        file: key.to_owned(),
        why: why.to_string(),
    }
}

/// The places of `agentGuard.sandbox.read` as paths: `~` and `~/…` in `home`, absolute paths as they are. A
/// relative place names nothing the sandbox could grant, so it is left out (the roots are read anyway).
fn sandbox_reads(places: &[String], home: Option<&Path>) -> Vec<PathBuf> {
    places
        .iter()
        .filter_map(|place| match place.strip_prefix('~') {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                home.map(|home| home.join(rest.trim_start_matches('/')))
            }
            Some(_) => None,
            None => Some(PathBuf::from(place)).filter(|path| path.is_absolute()),
        })
        .collect()
}

/// [`agent_rules::is_marked_project`], asked once within a batch of decisions (agent-fs-sandbox's batch facts).
fn marked_project(dir: &Path) -> bool {
    agent_fs_sandbox::remembered("is_marked_project", dir, agent_rules::is_marked_project)
}

/// Whether a shell call runs beside the agent's later tool calls (the coding agent's Bash with
/// `run_in_background`): [`Confinement::background`](agent_tool_traits::Confinement::background).
/// A value other than `true` that a client may send for it (`"true"`) counts too: the call would run in the
/// background all the same.
fn runs_in_background(args: &serde_json::Value) -> bool {
    match args.get("run_in_background") {
        Some(serde_json::Value::Bool(on)) => *on,
        Some(serde_json::Value::String(text)) => text.trim().eq_ignore_ascii_case("true"),
        _ => false,
    }
}
