//! From a decision to the kernel sandbox: which confinement an allowed shell call runs with, and the sandbox
//! spec and protection of a guard's roots, rules and protected paths.

use std::path::{Path, PathBuf};

use agent_bash_guard::{CommandAnalysis, CommandClass, LocationKind};
use agent_fs_sandbox::{ProtectedPaths, home_secret_places};
use agent_os_sandbox::{
    ContentView, DomainPattern, DomainPolicy, EnvPolicy, KernelSupport, Plan, Protection, SandboxSpec,
};
use agent_rules::{Policy, SessionTaint};
use agent_secrets::{ContentIndex, Indexed};
use agent_tool_traits::{
    Access, Confinement, DecidedBy, Decision, Layer, Provenance, SandboxProfile, Source, Verdict,
};

use crate::config::SandboxMode;
use crate::gather::ProjectCode;
use crate::guard::Guard;
use crate::owners::Owners;

/// How many entries beneath the literal place of a rule with wildcards (`Read(//etc/*.key)`) are looked at to
/// find what it protects on disk.
const RULE_PLACE_SCAN: usize = 2_000;

impl Guard {
    /// The confinement a shell call with `analysis` runs with once allowed, adjusting `verdict` where the kernel
    /// cannot back it: a line allowed because it is read-only runs `read-only`; a line a rule, a hook, a mode or
    /// (after an ask) the user allowed runs `workspace-write`, with the network when `blockNetwork` is off, or when
    /// a rule, a hook or the user allowed this line and its commands use the network (network clients, package
    /// managers and build tools, which fetch). A `workspace-write` line may write the inside of a repository's
    /// git directory only when its analysis shows it runs git itself to write the repository
    /// ([`SubCommand::git_writes`](agent_bash_guard::SubCommand::git_writes)); every other line (a build, a test
    /// suite, a script, a program the analysis does not know) finds `.git` read-only whole. `None` for a
    /// denied call and when `agentGuard.sandbox` is `off`. Where the kernel cannot enforce the sandbox, an allow
    /// says so in its reason (`auto`) or becomes an ask (`required`). A line whose allow the containment step
    /// made (`contained_allow`: the whole line, or the rest beside a rule's allow) counts on undo for what it writes
    /// in the project, whether the analysis follows it (a removal it judged taken back) or not (a build, a script).
    pub(crate) fn confinement(
        &self,
        analysis: &CommandAnalysis,
        project_code: &ProjectCode,
        verdict: &mut Verdict,
        contained_allow: bool,
    ) -> Option<Confinement> {
        if self.sandbox_mode == SandboxMode::Off {
            return None;
        }
        let profile = match (verdict.decision, verdict.provenance.step) {
            (Decision::Deny, _) => return None,
            (Decision::Allow, Some(DecidedBy::Default)) => SandboxProfile::ReadOnly,
            (Decision::Allow, Some(DecidedBy::Classifier | DecidedBy::Contained))
                if analysis.is_read_only() =>
            {
                SandboxProfile::ReadOnly
            }
            (Decision::Allow | Decision::Ask, _) => SandboxProfile::WorkspaceWrite,
        };
        // With the network blocked, only a deliberate allow of this very line opens it: a rule that names it, a
        // hook's allow, or the user's answer to its ask. A mode allows everything alike (`bypassPermissions`
        // runs `make -f -` as readily as `npm install`) and says nothing about the network.
        let deliberate = deliberate(verdict);
        // A line allowed inside the sandbox without asking gets the network its commands use, through the
        // proxy that lets only allowed domains through: that is what made it contained.
        let contained = verdict.provenance.step == Some(DecidedBy::Contained);
        let network = profile == SandboxProfile::WorkspaceWrite
            && (!self.bash().network_blocked()
                || ((deliberate || contained)
                    && analysis
                        .commands
                        .iter()
                        .any(|c| matches!(c.class, CommandClass::Network | CommandClass::PackageManager))));
        if let Some(why) = KernelSupport::enforcement_missing() {
            self.unenforced(verdict, &why);
            return None;
        }
        // A line that also runs code the analysis does not follow (a script, an interpreter, a build or test
        // runner, a program it does not know) would run that code with the history writable: its git writes are
        // not given, and its git commands fail on the read-only `.git` until the line is split.
        // So would the code the project controls that a command loads (the repository's git hooks among it).
        let runs_unseen_code = || {
            (0..analysis.commands.len())
                .any(|index| runs_unseen_code(analysis, index) || project_code.why(index).is_some())
        };
        // Nor a line in which anything but git writes: the history is what no snapshot holds, and a writing
        // command's target is not always what the analysis read (a name only the run knows, `> "$out"`, `xargs rm`;
        // a link the line makes, `ln -s .git l && rm -rf l/refs`; an archive's or a patch's own names; text a
        // shell decodes otherwise than the analysis did). Git alone, with commands that only read, writes it.
        // Looked at only for a line with git writes: most lines have none.
        let git_writes = profile == SandboxProfile::WorkspaceWrite
            && analysis.commands.iter().any(|c| c.git_writes)
            && analysis.commands.iter().all(|c| c.git_writes || c.read_only)
            && !analysis.writes_unseen
            && !runs_unseen_code();
        if git_writes {
            self.untracking(verdict);
        }
        Some(Confinement {
            profile,
            network,
            git_writes,
            undo: profile == SandboxProfile::WorkspaceWrite && contained_allow,
            background: false,
        })
    }

    /// Where the kernel cannot enforce the sandbox (`why`): an allow says so in its reason (`auto`) or becomes an
    /// ask (`required`).
    fn unenforced(&self, verdict: &mut Verdict, why: &str) {
        if verdict.decision != Decision::Allow {
            return;
        }
        match self.sandbox_mode {
            SandboxMode::Required => {
                let allowed = verdict.reason();
                *verdict = Verdict::new(
                    Decision::Ask,
                    format!(
                        "{why}, so this allow cannot be backed by the kernel sandbox and `agentGuard.sandbox` is \
                         `required` (it would have been allowed: {allowed})"
                    ),
                    Provenance::layer(Layer::Kernel).at(DecidedBy::SafetyAsk),
                );
            }
            SandboxMode::Auto => verdict.reasons.push(format!("not sandboxed: {why}")),
            SandboxMode::Off => {}
        }
    }

    /// A line that writes git's index can make git stop tracking a file (`git rm --cached`, a reset, a checkout
    /// of a commit without it) while the file stays: a local settings file the repository brought would then be
    /// the user's, and its rules would loosen the sandbox. Where a local file would loosen it and git tracks it (or
    /// its index cannot be read now), such an allow asks, saying why; an ask says it too.
    fn untracking(&self, verdict: &mut Verdict) {
        let Some(repository) = self.loosening_local_files().iter().find_map(|file| {
            self.owners
                .repository(Source::Local, Some(file))
                .filter(super::owners::Repository::untracked_by_git_write)
        }) else {
            return;
        };
        let why = format!(
            "the line writes git's index, which could make git stop tracking {}; its settings would then count \
             as yours and loosen the sandbox",
            repository.describe()
        );
        match verdict.decision {
            Decision::Allow => *verdict = self.cannot_carry_out(verdict, format!("{why}; asking")),
            Decision::Ask => verdict.reasons.push(why),
            Decision::Deny => {}
        }
    }

    /// The hosts `analysis` names that the proxy of its sandbox must let through beyond `agentGuard.network`: each
    /// one a `WebFetch(domain:…)` allow rule allows, and, when a rule, a hook or the user allowed this line (or
    /// will, after its ask), every one it names or its git commands reach by their configuration (`remote_hosts`
    /// of `git push`), a service on this machine with its port (`localhost:3000`) among
    /// them. A host a deny or ask rule or a deny pattern names never is, nor an address that is not this machine's
    /// loopback (the proxy reaches hosts by name).
    pub(crate) fn granted_domains(
        &self,
        analysis: &CommandAnalysis,
        remote_hosts: &[String],
        verdict: &Verdict,
    ) -> Vec<String> {
        let deliberate = deliberate(verdict);
        let mut domains: Vec<String> = Vec::new();
        let named = analysis
            .commands
            .iter()
            .flat_map(|command| match &command.effect {
                agent_bash_guard::Effect::Network { hosts } => hosts.as_slice(),
                _ => &[],
            });
        for host in named.chain(remote_hosts) {
            let listed = !matches!(
                self.network.verdict(host, 443),
                agent_os_sandbox::DomainVerdict::NotListed
            );
            let granted = deliberate || self.policy.host_rule(Decision::Allow, host).is_some();
            if !listed && granted && self.grantable(host) && !domains.contains(host) {
                domains.push(host.clone());
            }
        }
        domains
    }

    /// The ports of the services on this machine `analysis` names (`curl localhost:5173`, a request that changes
    /// one) that a background run of this project serves inside its own sandbox: the proxy reaches each in that
    /// run's namespace (`--service`), and nothing else at that port.
    pub(crate) fn granted_services(&self, analysis: &CommandAnalysis) -> Vec<u16> {
        let mut ports: Vec<u16> = Vec::new();
        for command in &analysis.commands {
            let hosts = match &command.effect {
                agent_bash_guard::Effect::Network { hosts } => hosts.clone(),
                agent_bash_guard::Effect::Remote(_) => agent_bash_guard::request_hosts(command.effective()),
                _ => continue,
            };
            for host in hosts.iter().filter(|host| !self.domain_allowed(host)) {
                if let Some(port) = self
                    .sandboxed_service(host)
                    .and_then(|_| host.parse::<agent_os_sandbox::LoopbackGrant>().ok())
                    .map(|grant| grant.port())
                    .filter(|port| !ports.contains(port))
                {
                    ports.push(port);
                }
            }
        }
        ports
    }

    /// Whether the sandbox's proxy may be told to let `host` through when somebody allowed it: no deny or ask
    /// rule names it, and it is a host name or a service on this machine with its port (an address elsewhere is
    /// reached by name only, and is refused at run time).
    pub(crate) fn grantable(&self, host: &str) -> bool {
        !self.host_refused(host)
            && (host.parse::<DomainPattern>().is_ok()
                || host.parse::<agent_os_sandbox::LoopbackGrant>().is_ok())
    }

    /// Whether a deny or ask rule names `host`, or the host of `host:port` (`WebFetch(domain:localhost)` refuses
    /// `localhost:3000`: a rule on a host holds at every port). A service on this machine is this machine in
    /// every spelling: a rule naming any of its usual names (`localhost`, `127.0.0.1`, `::1`, `0.0.0.0`) refuses
    /// `[::]:3000`, `foo.localhost:3000` and `127.0.0.2:3000` alike.
    pub(crate) fn host_refused(&self, host: &str) -> bool {
        let refused = |host: &str| {
            self.policy.host_rule(Decision::Deny, host).is_some()
                || self.policy.host_rule(Decision::Ask, host).is_some()
        };
        refused(host)
            || refused(host_without_port(host))
            || (agent_bash_guard::is_loopback(host) && LOOPBACK_NAMES.iter().any(|name| refused(name)))
    }

    /// Why a line allowed by a rule of the repository's own settings (owners.rs) cannot run as allowed: it names a
    /// host beyond the allowed domains, and the repository's settings may only tighten the sandbox, so they open
    /// no network (as for `agentGuard.network.allow` and `WebFetch(domain:…)` rules of the repository). `None`
    /// for any other line. The line then asks, and an allow of the person grants the host.
    pub(crate) fn repository_cannot_grant(
        &self,
        analysis: &CommandAnalysis,
        remote_hosts: &[String],
        verdict: &Verdict,
    ) -> Option<String> {
        let provenance = &verdict.provenance;
        if verdict.decision != Decision::Allow || provenance.step != Some(DecidedBy::AllowRule) {
            return None;
        }
        let source = provenance.source?;
        let repository = self
            .owners
            .repository(source, provenance.file.as_deref().map(Path::new))?;
        let named = analysis
            .commands
            .iter()
            .flat_map(|command| match &command.effect {
                agent_bash_guard::Effect::Network { hosts } => hosts.as_slice(),
                _ => &[],
            });
        let ungranted: Vec<&String> = named
            .chain(remote_hosts)
            .filter(|host| {
                matches!(
                    self.network.verdict(host, 443),
                    agent_os_sandbox::DomainVerdict::NotListed
                ) && self.policy.host_rule(Decision::Allow, host).is_none()
                    && self.grantable(host)
            })
            .collect();
        let first = ungranted.first()?;
        Some(format!(
            "the rule `{}` of {} allows the line, but the repository's settings may only tighten the sandbox and \
             open it to no host: `{first}` would be refused; allow it in your own settings, or answer allow",
            provenance.rule.as_deref().unwrap_or("?"),
            repository.describe()
        ))
    }

    /// Why a line allowed command by command by the rules cannot run as allowed: one command names a host its
    /// rule grants (one of `granted`: `curl -s localhost:8080/health`, `curl -s https://api.example.org/status`),
    /// and another command of the line runs code the project controls or a program that is not read-only (`npm
    /// run dev`): the proxy lets a granted host through for the whole line, so that command would reach it too,
    /// which no rule allowed it. `None` for any other line. The line then asks, and the person's allow grants the
    /// host to the whole line.
    pub(crate) fn grant_shared(
        &self,
        analysis: &CommandAnalysis,
        project_code: &crate::gather::ProjectCode,
        verdict: &Verdict,
        granted: &[String],
    ) -> Option<String> {
        if verdict.decision != Decision::Allow || verdict.provenance.step != Some(DecidedBy::AllowRule) {
            return None;
        }
        let names = |command: &agent_bash_guard::SubCommand, host: &String| match &command.effect {
            agent_bash_guard::Effect::Network { hosts } => hosts.contains(host),
            _ => false,
        };
        for (index, command) in analysis.commands.iter().enumerate() {
            let agent_bash_guard::Effect::Network { hosts } = &command.effect else {
                continue;
            };
            for host in hosts.iter().filter(|host| granted.contains(host)) {
                let other = analysis.commands.iter().enumerate().find(|(other, command)| {
                    *other != index
                        && !names(command, host)
                        && (!command.read_only || project_code.why(*other).is_some())
                });
                if let Some((_, other)) = other {
                    return Some(format!(
                        "the rules allow each command, but the line's `{}` reaches `{host}`, and the sandbox's proxy \
                         would let `{}` reach it too, which no rule allows; answer allow to let the whole line reach \
                         it",
                        command.effective().join(" "),
                        other.effective().join(" ")
                    ));
                }
            }
        }
        None
    }

    /// The domains the proxy of a line with the network lets through in a session that has read untrusted
    /// content, when nobody approved the line: those the session reached before, and those the line names that
    /// the decision let through (`granted`, and the allowed domains of `Guard::domain_allowed`). Any other
    /// domain was first contacted after the taint, by a line nobody looked at.
    pub(crate) fn session_domains(
        &self,
        analysis: &CommandAnalysis,
        taint: &SessionTaint,
        granted: &[String],
    ) -> Vec<String> {
        let mut domains = taint.contacted.clone();
        for command in &analysis.commands {
            let agent_bash_guard::Effect::Network { hosts } = &command.effect else {
                continue;
            };
            for host in hosts {
                if (granted.contains(host) || self.domain_allowed(host)) && !domains.contains(host) {
                    domains.push(host.clone());
                }
            }
        }
        domains
    }

    /// What the kernel sandbox of `confinement` is built from: this guard's roots (the read-only ones only
    /// read), the places of `agentGuard.sandbox.read`, the home directory with its credential places (the file-system sandbox's one table of secret
    /// places), and the literal places of the deny rules on reads and of the deny and ask rules on writes, with
    /// what their wildcards name on disk.
    pub fn sandbox_spec(&self, confinement: Confinement) -> SandboxSpec {
        let mut roots = Vec::new();
        let mut read_only_roots = Vec::new();
        match self.sandbox() {
            Some(sandbox) => {
                for root in sandbox.roots() {
                    if root.read_only() {
                        read_only_roots.push(root.path().to_path_buf());
                    } else {
                        roots.push(root.path().to_path_buf());
                    }
                }
            }
            None => roots.push(self.cwd().to_path_buf()),
        }
        let mut spec = SandboxSpec::new(confinement, roots);
        spec.read_only_roots = read_only_roots;
        // The home the command's programs use: the guard's, else the one its environment names (a runtime built
        // without one still runs programs that read `$HOME/.gitconfig`, and must still keep `$HOME/.ssh` out).
        spec.home = self.home().map(Path::to_path_buf).or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
        });
        spec.extra_reads = self.sandbox_reads.clone();
        spec.secret_places = spec.home.as_deref().map(home_secret_places).unwrap_or_default();
        spec.secret_places
            .extend(self.rule_places(&[(Decision::Deny, Access::Read)]));
        // The snapshots of `agent-guard undo` hold copies of what the rules and the kernel keep from the command.
        // The scan does not look inside `.agent-guard` (protected whole), so the store is named here; it is made
        // before the plan by the run's first snapshot.
        if let Some(stores) = self.undo_settings().dir.filter(|dir| dir.exists()) {
            spec.secret_places.push(stores);
        }
        spec.cache_store = self.cache_store(spec.home.as_deref());
        spec.write_protected_places =
            self.rule_places(&[(Decision::Deny, Access::Write), (Decision::Ask, Access::Write)]);
        spec.memory_max = self.memory_max;
        spec.publish = self.publish.clone();
        spec.domains = self.network.clone();
        spec
    }

    /// The sandbox plan of `confinement` for this guard on this kernel. Every file of the roots the plan's scan
    /// reaches is asked about its content through this project's content index: a file that holds a credential
    /// is shown to the command as a read-only view with each credential replaced, unless its content is the blob
    /// git's index names for it (its content is then in the repository, which git shows anyway, and a view would
    /// make git see a change). The index is saved for the next run; a failure to save it only costs that run a
    /// scan again.
    ///
    /// # Errors
    /// A root that is not a directory.
    pub fn sandbox_plan(
        &self,
        confinement: Confinement,
        support: &KernelSupport,
    ) -> agent_os_sandbox::Result<Plan> {
        let spec = self.sandbox_spec(confinement);
        let place = self.content_index_place();
        let content = place.as_deref().map(|place| ContentCheck {
            index: ContentIndex::open(place),
            committed: spec
                .roots
                .first()
                .and_then(|root| agent_undo::CommittedFiles::read(root)),
        });
        let mut protection = self.protection();
        protection.content = content.as_ref();
        let plan = Plan::build(&spec, &protection, support);
        if let (Some(content), Some(place)) = (&content, &place) {
            // The project's `.agent-guard` is not made here (the hook's audit log makes it, with its ignore
            // file); a home's is. Without its directory the index is not saved, and the next run scans again.
            if let Some(dir) = place.parent()
                && self
                    .home()
                    .is_some_and(|home| dir.starts_with(home.join(".agent-guard")))
            {
                let _made = std::fs::create_dir_all(dir);
            }
            let _saved = content.index.save();
        }
        plan
    }

    /// What the sandbox must keep from a command: the secret files and protected paths of the file-system
    /// sandbox, and the files the path rules protect.
    pub fn protection(&self) -> GuardProtection<'_> {
        GuardProtection {
            policy: self.policy(),
            protected: self.protected_paths(),
            content: None,
        }
    }

    /// The environment policy of sandboxed commands: the default credentials and `agentGuard.sandboxEnv`.
    pub fn env_policy(&self) -> &EnvPolicy {
        &self.env_policy
    }

    /// The domains a sandboxed command allowed the network reaches through the proxy: `agentGuard.network`
    /// with the hosts of the `WebFetch(domain:…)` rules.
    pub fn network(&self) -> &DomainPolicy {
        &self.network
    }

    /// The places the path rules of each `(behavior, access)` name, as existing paths: a rule's literal place
    /// when the rule covers it (`Read(~/.aws/**)` covers `~/.aws`), else what the rule matches beneath it.
    fn rule_places(&self, kinds: &[(Decision, Access)]) -> Vec<PathBuf> {
        let policy = self.policy();
        let mut places: Vec<PathBuf> = Vec::new();
        for &(behavior, access) in kinds {
            for place in policy.rule_places(behavior, access) {
                let place = Path::new(place);
                if std::fs::symlink_metadata(place).is_err() {
                    continue;
                }
                if policy.path_rule(behavior, access, place).is_some() {
                    places.push(place.to_path_buf());
                    continue;
                }
                let mut seen = 0;
                let mut queue = vec![place.to_path_buf()];
                while let Some(dir) = queue.pop() {
                    let Ok(entries) = std::fs::read_dir(&dir) else {
                        continue;
                    };
                    for entry in entries.filter_map(Result::ok) {
                        seen += 1;
                        if seen > RULE_PLACE_SCAN {
                            // Stricter to leave the whole place out than to miss what the rule protects.
                            places.push(place.to_path_buf());
                            queue.clear();
                            break;
                        }
                        let path = entry.path();
                        if policy.path_rule(behavior, access, &path).is_some() {
                            places.push(path);
                        } else if entry.file_type().is_ok_and(|t| t.is_dir()) {
                            queue.push(path);
                        }
                    }
                }
            }
        }
        places.sort();
        places.dedup();
        places
    }
}

/// The usual names of this machine, which a rule on any loopback host is matched against (see
/// [`Guard::host_refused`]).
const LOOPBACK_NAMES: [&str; 4] = ["localhost", "127.0.0.1", "::1", "0.0.0.0"];

/// The host of `host:port` (`localhost` of `localhost:3000`, `::1` of `[::1]:3000`); any other text as it is.
fn host_without_port(host: &str) -> &str {
    if let Some(bracketed) = host.strip_prefix('[') {
        return bracketed.split_once(']').map_or(host, |(name, _)| name);
    }
    match host.rsplit_once(':') {
        Some((name, port))
            if !name.contains(':') && !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) =>
        {
            name
        }
        _ => host,
    }
}

/// Whether the command at `index` of `analysis` runs code the analysis does not follow: a script, an
/// interpreter, a build or test runner, a program it does not know, or a command word only known at run time. A
/// shell whose code the analysis read (`bash -c 'git commit …'`, `find -exec`) runs what it saw.
pub(crate) fn runs_unseen_code(analysis: &CommandAnalysis, index: usize) -> bool {
    let Some(command) = analysis.commands.get(index) else {
        return false;
    };
    let unseen = !command.literal
        || matches!(
            command.class,
            CommandClass::Interpreter
                | CommandClass::Exec
                | CommandClass::Unknown
                | CommandClass::PackageManager
        );
    let followed = analysis.commands.iter().any(|c| {
        c.location.parent == Some(index)
            && matches!(
                c.location.kind,
                LocationKind::ShellString | LocationKind::FindExec
            )
    });
    unseen && !followed
}

/// Whether somebody chose to allow this very line: a rule that names it, a hook's allow, the user's answer (or,
/// for an ask, the answer to come). A mode, the defaults and a contained allow are nobody's choice of the line.
pub(crate) fn deliberate(verdict: &Verdict) -> bool {
    matches!(
        verdict.provenance.step,
        Some(DecidedBy::AllowRule | DecidedBy::HookAllow | DecidedBy::Approver)
    ) || verdict.decision == Decision::Ask
}

/// The domains of the sandbox's proxy: `agentGuard.network` (the package registries and the user's patterns),
/// with the hosts of the `WebFetch(domain:…)` rules: an allow rule adds its host unless it comes from the
/// repository's own settings (`owners`: the project's shared file, a local file that came with the repository),
/// which may only tighten the sandbox, as for `agentGuard.network.allow`; a deny rule from any source refuses it. A
/// host the proxy's patterns cannot express (an underscore) is left out.
pub(crate) fn network_policy(settings: &DomainPolicy, policy: &Policy, owners: &Owners) -> DomainPolicy {
    let mut network = settings.clone();
    let pattern =
        |rule: &agent_rules::Rule| rule.domain().and_then(|host| host.parse::<DomainPattern>().ok());
    let rules = policy.rules();
    network.allow(
        rules
            .iter()
            .filter(|rule| rule.behavior == Decision::Allow)
            .filter_map(|rule| pattern(rule).map(|domain| (rule, domain)))
            .filter(|(rule, _)| owners.repository(rule.source, rule.file.as_deref()).is_none())
            .map(|(_, domain)| domain),
    );
    network.deny(
        rules
            .iter()
            .filter(|rule| rule.behavior == Decision::Deny)
            .filter_map(pattern),
    );
    network
}

/// A guard's [`Protection`]: the secret files and protected paths of its file-system sandbox, the deny rules on
/// reads and the deny and ask rules on writes of its policy, and (for a sandbox's plan) which files hold a
/// credential by their content.
#[derive(Debug, Clone, Copy)]
pub struct GuardProtection<'a> {
    policy: &'a Policy,
    protected: &'a ProtectedPaths,
    content: Option<&'a ContentCheck>,
}

/// What a sandbox's plan asks about each file's content: the project's content index, and git's index of the
/// project, for the files whose content is a blob of the repository.
#[derive(Debug)]
struct ContentCheck {
    index: ContentIndex,
    committed: Option<agent_undo::CommittedFiles>,
}

impl Protection for GuardProtection<'_> {
    /// A key or certificate file that nothing but its kind protects is left to [`Self::content`] where the
    /// content is looked at: a CA bundle is read as it is, a private key as a view without it.
    fn secret(&self, path: &Path, root: &Path) -> bool {
        let relative = path.strip_prefix(root).ok();
        (self.protected.reason(path, relative, Access::Read).is_some()
            && !(self.content.is_some() && self.protected.only_a_key_file_kind(path, relative, Access::Read)))
            || self
                .policy
                .path_rule(Decision::Deny, Access::Read, path)
                .is_some()
    }

    fn write_protected(&self, path: &Path, root: &Path) -> bool {
        let relative = path.strip_prefix(root).ok();
        self.protected.reason(path, relative, Access::Write).is_some() || self.write_rule(path)
    }

    /// A key or certificate file a command made replaces nothing of the user's: it is kept, unless a protected
    /// place or a rule covers it.
    fn protects_new(&self, path: &Path, root: &Path) -> bool {
        let relative = path.strip_prefix(root).ok();
        (self.protected.reason(path, relative, Access::Write).is_some()
            && !self.protected.only_a_key_file_kind(path, relative, Access::Write))
            || self.write_rule(path)
    }

    fn content(&self, path: &Path, metadata: &std::fs::Metadata) -> ContentView {
        let Some(content) = self.content else {
            return ContentView::AsItIs;
        };
        match content.index.check(path, metadata) {
            // A key or certificate file is shown only when it holds no credential and nothing but public PEM
            // blocks; binary (a DER or PKCS#12 key), or not scanned in this run, it is hidden.
            indexed @ (Indexed::Clean | Indexed::Unknown)
                if self.protected.only_a_key_file_kind(path, None, Access::Read) =>
            {
                let public = indexed == Indexed::Clean
                    && ContentIndex::read_whole(path).is_some_and(|bytes| agent_secrets::public_pem(&bytes));
                if public {
                    ContentView::AsItIs
                } else {
                    ContentView::Hidden
                }
            }
            // Not scanned in this run (its budget spent): what the command prints is still redacted.
            Indexed::Clean | Indexed::Unknown => ContentView::AsItIs,
            Indexed::Unreadable => ContentView::Hidden,
            Indexed::Credential(_) => {
                let Some(bytes) = ContentIndex::read_whole(path) else {
                    return ContentView::Hidden;
                };
                if content
                    .committed
                    .as_ref()
                    .is_some_and(|git| git.holds(path, &bytes))
                {
                    return ContentView::AsItIs;
                }
                // A binary file (compiled bytecode, a database) is hidden rather than shown as a view: with its
                // credentials replaced by markers of another length it is corrupt data to the program that reads
                // it, which may not say so, while one it cannot open it does without or reports (Python compiles
                // the source again when its bytecode cache cannot be read).
                if bytes.contains(&0) {
                    return ContentView::Hidden;
                }
                ContentIndex::view(&bytes).map_or(ContentView::Hidden, ContentView::Redacted)
            }
        }
    }
}

impl GuardProtection<'_> {
    /// Whether a deny or ask rule of the policy protects writes to `path`.
    fn write_rule(&self, path: &Path) -> bool {
        [Decision::Deny, Decision::Ask]
            .into_iter()
            .any(|behavior| self.policy.path_rule(behavior, Access::Write, path).is_some())
    }
}

#[cfg(test)]
#[path = "confine_tests.rs"]
mod tests;
