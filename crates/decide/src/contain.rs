//! After resolving: a shell line that asks only for effects the kernel sandbox of `workspace-write` contains runs
//! inside it without asking (`agentGuard.sandbox.autoAllow`); what the sandbox does not contain keeps the line
//! asked, and is named.
//!
//! Contained: writes inside the roots outside the protected paths (the file-system sandbox already asks or denies
//! for the others), running the project's code or programs the analysis does not know, code and files only known
//! at run time, processes and time, and the network to allowed domains (`agentGuard.network`, `WebFetch(domain:…)`
//! allow rules), which the sandbox's proxy enforces. Not contained: another system changed (the command's
//! [`Effect::Remote`]), work only the disk holds thrown away ([`Effect::Discards`]), a tree of the project removed,
//! a host named in the line that is not an allowed domain, a read outside the roots (a secret there under a name no
//! list knows is not hidden by the kernel), and
//! every finding of a protection ([`Concern::Guarded`]). A deny, an ask rule, a hook's ask and mode `plan` are
//! never turned into a contained allow.

use std::path::Path;

use agent_bash_guard::{AccessVia, CommandAnalysis, CommandClass, Concern, Effect, FileAccess, SubCommand};
use agent_os_sandbox::DomainVerdict;
use agent_rules::{CommandFact, PermissionMode, Resolution};
use agent_tool_traits::{Access, DecidedBy, Decision, Layer, Provenance, Verdict};

use crate::gather::Gathered;
use crate::guard::{AutoAllow, Guard};

/// What the kernel sandbox contained of a line it let run without asking: for `explain` and the audit log.
#[derive(Debug, Clone, PartialEq)]
pub struct Contained {
    /// The effects it contains, in words (`runs code the project controls`, `its writes stay in the project`).
    pub effects: Vec<String>,
    /// The verdict the line had without the sandbox: what would have asked, and why.
    pub without: Verdict,
    /// The places whose removal or overwrite was taken as undone although the snapshots hold what the project
    /// ignores there only while it stays within their bounds (canonical): the run checks, after the snapshot
    /// before it, that each is still held ([`Guard::undo_held_since`]; `agent-guard sandbox --undo-held`).
    pub undo_held: Vec<std::path::PathBuf>,
}

/// The effect a snapshot makes contained, as the reason says it.
const UNDO_EFFECT: &str = "what it removes or overwrites in the project, `agent-guard undo` takes back";

/// Whether a place may be the root itself, for [`Guard::undoable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Below {
    /// Only strictly below a root: removing the root is not taken back.
    Strictly,
    /// Below a root or the root itself: what keeps the root in place.
    OrAt,
}

/// The most entries below a place looked at to make sure a snapshot holds each
/// ([`Guard::left_out_of_snapshots`]).
const LEFT_OUT_CAP: usize = 20_000;

/// The domains of the default list shown in a reason before `…`.
const SHOWN_DOMAINS: usize = 3;

/// What the sandbox contains of one line, and what it does not.
#[derive(Debug, Default)]
struct Judgement {
    /// The effects it contains, in words, each once.
    effects: Vec<String>,
    /// Why it does not contain the line; an empty string for a finding whose reason the verdict already shows.
    uncontained: Vec<String>,
    /// The places whose removal or overwrite `agent-guard undo` takes back only while the ignored data the
    /// snapshots hold there stays within their bounds (canonical).
    undo_held: Vec<std::path::PathBuf>,
    /// Whether a server of this project run in the background counts as contained: not in a session whose
    /// untrusted content limits where its commands send data (the server's own proxy is not limited).
    services: bool,
}

impl Judgement {
    /// Adds why the sandbox does not contain the line, once (two commands removing the same tree say it once).
    fn not_contained(&mut self, why: String) {
        if why.is_empty() || !self.uncontained.contains(&why) {
            self.uncontained.push(why);
        }
    }

    /// Adds `effect`; an effect that says more of the same (`runs code the project controls or …`) replaces the
    /// shorter one.
    fn contains(&mut self, effect: &str) {
        if self.effects.iter().any(|e| e.starts_with(effect)) {
            return;
        }
        self.effects.retain(|e| !effect.starts_with(e.as_str()));
        self.effects.push(effect.to_owned());
    }
}

/// A command the sandbox alone would not contain that a rule of the user allows by name.
#[derive(Debug)]
struct Ruled {
    /// Its index in the analysis.
    index: usize,
    /// Its effective command, as the reasons show it.
    shown: String,
    /// The rule's allow.
    verdict: Verdict,
}

/// The effect of a search of a directory that holds secret files by name: the kernel hides them from the line.
const HIDDEN_SECRETS_EFFECT: &str = "the secret files by name below what it searches (`.env`, keys, …) are hidden from it by the kernel sandbox";

/// The effect of what a line runs or names only at run time, which the sandbox bounds.
const RUN_TIME_EFFECT: &str = "what it runs or names only at run time has the sandbox's power and no more";

impl Guard {
    /// Turns the ask of a shell line into an allow inside the sandbox when every effect that asked is one the
    /// sandbox contains, and returns what it contained; else names in the verdict what the sandbox does not
    /// contain (a domain that is not allowed, a change to another system). `None`, and the resolution
    /// unchanged, when contained allows are off, for other calls and modes, and for what a user's rule, a hook or
    /// a deny decided.
    pub(crate) fn contain(
        &self,
        gathered: &Gathered<'_>,
        resolution: &mut Resolution,
        services: bool,
    ) -> Option<Contained> {
        let analysis = gathered.analysis.as_ref()?;
        if self.auto_allow != AutoAllow::On || !self.containable(gathered, resolution) {
            return None;
        }
        let mut judgement = Judgement {
            services,
            ..Judgement::default()
        };
        self.judge_findings(gathered, &mut judgement);
        let ruled = self.judge_commands(gathered, analysis, &mut judgement);
        self.judge_paths(gathered, analysis, &mut judgement);
        self.judge_undo_reach(analysis, &mut judgement);
        judge_shared_grant(gathered, analysis, &ruled, &mut judgement);
        if !judgement.uncontained.is_empty() {
            let named: Vec<String> = judgement
                .uncontained
                .into_iter()
                .filter(|why| !why.is_empty())
                .collect();
            if !named.is_empty() {
                resolution
                    .verdict
                    .reasons
                    .push(format!("the sandbox does not contain: {}", named.join("; ")));
            }
            return None;
        }
        if judgement.effects.is_empty() {
            judgement.contains("nothing it does leaves the sandbox");
        }
        let without = resolution.verdict.clone();
        let mut verdict = match ruled.split_first() {
            // The user's rules allow the commands the sandbox alone would not contain, and the rest is contained:
            // the line is the rules' allow, run inside the sandbox with what they grant.
            Some((first, others)) => {
                let mut verdict = first.verdict.clone();
                for other in others {
                    verdict.reasons.extend(other.verdict.reasons.iter().cloned());
                }
                verdict.reasons.push(format!(
                    "the rest of the line is contained: {}",
                    judgement.effects.join("; ")
                ));
                verdict
            }
            None => Verdict::new(
                Decision::Allow,
                format!("allowed inside the sandbox: {}", judgement.effects.join("; ")),
                Provenance::layer(Layer::Kernel).at(DecidedBy::Contained),
            ),
        };
        verdict.diagnostics.clone_from(&without.diagnostics);
        resolution.verdict = verdict;
        Some(Contained {
            effects: judgement.effects,
            without,
            undo_held: judgement.undo_held,
        })
    }

    /// Whether the resolution is one the sandbox may answer: an ask (or `dontAsk`'s deny of one) that no deny,
    /// ask rule, hook's ask, classifier or safety ask of the file-system sandbox made (a write to a protected path,
    /// a read of a secret: the kernel keeps the first from happening, and the second, a credential found by its
    /// content, it does not hide), outside mode `plan`.
    /// A safety ask of the file-system sandbox that the kernel contains (a search reaching secret files by name,
    /// which the kernel hides from the line) is no reason to keep asking.
    fn containable(&self, gathered: &Gathered<'_>, resolution: &Resolution) -> bool {
        let contained_finding = |reasons: &[String]| {
            gathered
                .findings
                .iter()
                .zip(&gathered.concerns)
                .any(|(finding, about)| about.concern == Concern::Contained && finding.reasons == reasons)
        };
        let verdict = &resolution.verdict;
        let asked = match verdict.decision {
            Decision::Ask => true,
            Decision::Deny => verdict.provenance.step == Some(DecidedBy::NoPrompt),
            Decision::Allow => false,
        };
        let decided_by_someone = resolution.considered.iter().any(|candidate| {
            candidate.decision == Decision::Deny
                || matches!(
                    candidate.provenance.step,
                    Some(DecidedBy::AskRule | DecidedBy::HookAsk | DecidedBy::Classifier)
                )
                || (candidate.provenance.layer == Layer::Sandbox
                    && candidate.provenance.step == Some(DecidedBy::SafetyAsk)
                    && !contained_finding(&candidate.reasons))
        });
        asked && !decided_by_someone && self.policy.mode() != PermissionMode::Plan
    }

    /// The findings: each must be one the sandbox bounds (code or files only known at run time, time) or the
    /// network, whose hosts the commands' effects name.
    fn judge_findings(&self, gathered: &Gathered<'_>, judgement: &mut Judgement) {
        if gathered.concerns.len() != gathered.findings.len() {
            judgement.not_contained(String::new());
            return;
        }
        for (finding, about) in gathered.findings.iter().zip(&gathered.concerns) {
            if finding.decision == Decision::Allow {
                continue;
            }
            match about.concern {
                // The search of a directory holding secret files by name, which the kernel hides from the line.
                Concern::Contained if finding.provenance.layer == Layer::Sandbox => {
                    judgement.contains(HIDDEN_SECRETS_EFFECT);
                }
                Concern::Contained => judgement.contains(RUN_TIME_EFFECT),
                Concern::Network => {}
                // Gathering kept this concern only where the sandbox's environment does not pass the variables.
                Concern::Environment => judgement.contains(&environment_effect(gathered)),
                Concern::Guarded => judgement.not_contained(String::new()),
            }
        }
    }

    /// The commands that are not read-only: what each does beyond its files. A command the sandbox alone would
    /// not contain but a rule of the user allows by name (`Bash(git push:*)`) is the user's to allow: it is
    /// returned instead of judged, for [`judge_shared_grant`] and the verdict.
    fn judge_commands(
        &self,
        gathered: &Gathered<'_>,
        analysis: &CommandAnalysis,
        judgement: &mut Judgement,
    ) -> Vec<Ruled> {
        let mut ruled = Vec::new();
        for (index, command) in analysis.commands.iter().enumerate() {
            let project_code = gathered.project_code.why(index);
            if command.read_only && project_code.is_none() {
                continue;
            }
            if let Some(verdict) = self.user_allow(command) {
                let mut alone = Judgement {
                    services: judgement.services,
                    ..Judgement::default()
                };
                self.judge_command(command, project_code, &mut alone);
                if alone.uncontained.is_empty() {
                    for effect in &alone.effects {
                        judgement.contains(effect);
                    }
                } else {
                    ruled.push(Ruled {
                        index,
                        shown: command.effective().join(" "),
                        verdict,
                    });
                }
                continue;
            }
            self.judge_command(command, project_code, judgement);
        }
        if !analysis.writes.is_empty() {
            judgement.contains("its writes stay in the project");
        }
        ruled
    }

    /// The allow of a rule of the user's (not the repository's own settings, which may only tighten the
    /// sandbox) that names `command`. A command no sandbox can contain (a container engine, a cloud account's
    /// tool) gains nothing inside one: outside.rs takes it out of the sandbox when the rest of the line allows.
    fn user_allow(&self, command: &SubCommand) -> Option<Verdict> {
        if command.unconfinable {
            return None;
        }
        let fact = CommandFact {
            argv: &command.argv,
            inner: command.inner,
            read_only: command.read_only,
            why: None,
        };
        let rule = self.policy.command_allow_rule(&fact)?;
        if self
            .owners
            .repository(rule.source, rule.file.as_deref())
            .is_some()
        {
            return None;
        }
        self.policy.command_allow_verdict(&fact)
    }

    /// One command that is not read-only (or runs code the project controls): what it does beyond its files.
    fn judge_command(&self, command: &SubCommand, project_code: Option<&str>, judgement: &mut Judgement) {
        let shown = command.effective().join(" ");
        // Git's writes are given to a line only for the git commands the analysis follows; the repository's hooks
        // are code the project controls, which would run with them (and could rewrite or remove the history).
        if command.git_writes
            && let Some(why) = project_code
        {
            judgement.not_contained(format!(
                "`{shown}` {why}, which would run with git's writes to the repository"
            ));
        }
        if command.overwrites_ignored
            && let Some(why) = self.left_out_of_snapshots(&self.cwd, true, judgement)
        {
            judgement.not_contained(format!(
                "`{shown}` writes the working tree from another commit, where git overwrites a file it ignores \
                 without asking, and {why}"
            ));
        }
        match &command.effect {
            Effect::Local => {}
            Effect::Network { hosts } => self.judge_hosts(command, hosts, judgement),
            Effect::RemovesTrees => {}
            // What git throws away of the working tree is in the snapshot taken before the run.
            Effect::Discards(why) => {
                if self.undoable(&self.cwd, Below::OrAt) {
                    judgement.contains(UNDO_EFFECT);
                } else {
                    judgement.not_contained(why.clone());
                }
            }
            Effect::Destroys(why) => judgement.not_contained(why.clone()),
            Effect::Remote(why) => {
                judgement.not_contained(why.clone());
                // A request that changes a server (`curl -X PUT URL`) still names its hosts.
                let hosts = agent_bash_guard::request_hosts(command.effective());
                self.judge_hosts(command, &hosts, judgement);
            }
        }
        self.judge_class(command, project_code, judgement);
    }

    /// The hosts a command names that are not allowed domains: a service on this machine, or a domain the proxy
    /// refuses.
    fn judge_hosts(&self, command: &SubCommand, hosts: &[String], judgement: &mut Judgement) {
        let shown = command.effective().join(" ");
        for host in hosts.iter().filter(|host| !self.domain_allowed(host)) {
            if let Some(service) = self.sandboxed_service(host).filter(|_| judgement.services) {
                judgement.contains(&format!(
                    "reaches `{host}`, a server a command of this project runs in the background inside its own \
                     sandbox (process {})",
                    service.owner
                ));
                continue;
            }
            if agent_bash_guard::is_loopback(host) {
                judgement.not_contained(format!(
                    "`{shown}` reaches `{host}`, a service on this machine, which the sandbox does \
                             not contain (allow the line with a rule such as `Bash({}:*)`, or answer allow, \
                             and the sandbox's proxy forwards to that host and port alone)",
                    command
                        .effective()
                        .first()
                        .map_or("", |w| w.rsplit('/').next().unwrap_or(w))
                ));
                continue;
            }
            judgement.not_contained(format!(
                "`{shown}` reaches `{host}`, which is not an allowed domain (allow it with \
                         `WebFetch(domain:{host})` or in `agentGuard.network.allow`)"
            ));
        }
    }

    /// What the class of one command that is not read-only does, for the judgement.
    fn judge_class(&self, command: &SubCommand, project_code: Option<&str>, judgement: &mut Judgement) {
        let shown = command.effective().join(" ");
        match command.class {
            CommandClass::Write => judgement.contains("its writes stay in the project"),
            // A request to this project's own servers alone reaches no domain (`--services-only`).
            CommandClass::Network if self.reaches_only_services(command, judgement) => {}
            CommandClass::Network => judgement.contains(&self.network_effect()),
            CommandClass::PackageManager => {
                judgement.contains("runs code the project controls");
                judgement.contains(&self.network_effect());
            }
            CommandClass::Interpreter | CommandClass::Exec | CommandClass::Unknown => {
                judgement.contains("runs code the project controls or programs the analysis does not know");
            }
            CommandClass::ReadOnly if project_code.is_some() => {
                judgement.contains("runs code the project controls")
            }
            // A reading command the analysis found not read-only for a reason of its own: a change of the
            // shell's state it does not follow (`cd` where `CDPATH` may lead elsewhere, `export` of a variable
            // not known to be harmless), a job left in the background. What later commands then do is only
            // known at run time, inside the sandbox; a write option's files are judged with the paths.
            CommandClass::ReadOnly => judgement.contains(RUN_TIME_EFFECT),
            CommandClass::Privileged | CommandClass::Destructive | CommandClass::Interactive => {
                judgement.not_contained(format!("`{shown}` is a {} command", command.class));
            }
        }
    }

    /// Whether every host `command` names is a server of this project run in the background inside its own
    /// sandbox.
    fn reaches_only_services(&self, command: &SubCommand, judgement: &Judgement) -> bool {
        matches!(&command.effect, Effect::Network { hosts } if !hosts.is_empty()
            && judgement.services
            && hosts.iter().all(|host| self.sandboxed_service(host).is_some()))
    }

    /// The files: a tree a command removes must be one a build makes again, and no file is read outside the roots.
    fn judge_paths(&self, gathered: &Gathered<'_>, analysis: &CommandAnalysis, judgement: &mut Judgement) {
        let removals: Vec<usize> = (0..analysis.commands.len())
            .filter(|i| {
                analysis
                    .commands
                    .get(*i)
                    .is_some_and(|c| c.effect == Effect::RemovesTrees)
            })
            .collect();
        self.judge_removals(analysis, &removals, judgement);
        self.judge_links(analysis, judgement);
        self.judge_named_paths(gathered, analysis, !removals.is_empty(), judgement);
    }

    /// The operands of the commands that remove trees (`removals`, their indices): none removes below the working
    /// directory; a glob or a name known at run time must name build outputs or a place the snapshots hold.
    fn judge_removals(&self, analysis: &CommandAnalysis, removals: &[usize], judgement: &mut Judgement) {
        for &index in removals {
            let operands: Vec<&FileAccess> = analysis
                .writes
                .iter()
                .filter(|f| f.command == Some(index) && f.via == AccessVia::Operand)
                .collect();
            if operands.is_empty() {
                if self.undoable(&self.cwd, Below::Strictly) {
                    self.undone_unless_left_out(&self.cwd, judgement);
                } else {
                    judgement.not_contained(
                        "the line removes files below the working directory, which no sandbox brings back"
                            .to_owned(),
                    );
                }
            }
            for file in operands.iter().filter(|f| !f.literal && !f.path.starts_with('~')) {
                if is_glob(&file.path) && self.regenerable_glob(&file.path) {
                    continue;
                }
                if let Some(dir) = self.undoable_glob(&file.path).filter(|_| is_glob(&file.path)) {
                    self.undone_unless_left_out(&dir, judgement);
                } else {
                    judgement.not_contained(format!(
                        "removing what `{}` names may delete a large part of the project, which no sandbox brings back",
                        file.path
                    ));
                }
            }
        }
    }

    /// A link the line makes leads its later writes where the analysis cannot follow (`ln -s data d && rm
    /// d/users.csv`): with another write beside it, the root must hold nothing the snapshots leave out.
    fn judge_links(&self, analysis: &CommandAnalysis, judgement: &mut Judgement) {
        let links = analysis.commands.iter().any(|c| c.program() == Some("ln"));
        if links
            && analysis
                .writes
                .iter()
                .any(|w| program_of(analysis, w.command) != Some("ln"))
            && let Some(root) = self.snapshot_root(&self.cwd)
            && let Some(why) = self.left_out_of_snapshots(&root, true, judgement)
        {
            judgement.not_contained(format!(
                "the line makes a link and writes beside it (a write through the link may reach what no snapshot \
                 holds), and {why}"
            ));
        }
    }

    /// Each path the line names: a file it writes may be overwritten whole, a directory it writes may be removed
    /// when the line removes trees (`removes`), and a read must stay inside the roots.
    fn judge_named_paths(
        &self,
        gathered: &Gathered<'_>,
        analysis: &CommandAnalysis,
        removes: bool,
        judgement: &mut Judgement,
    ) {
        // The places only `mkdir` writes: making a directory that exists changes nothing in it.
        let made_only: std::collections::BTreeSet<&str> = analysis
            .writes
            .iter()
            .filter(|write| {
                analysis
                    .writes
                    .iter()
                    .filter(|other| other.path == write.path)
                    .all(|other| program_of(analysis, other.command) == Some("mkdir"))
            })
            .map(|write| write.path.as_str())
            .collect();
        for path in &gathered.paths {
            let check = &path.check;
            if path.access == Access::Write && !made_only.contains(check.input.as_str()) {
                self.judge_file_written(check, !removes, judgement);
            }
            match path.access {
                // Every directory the line writes is judged as one it may remove: the paths after a `cd` are
                // checked at each place they may name.
                // A place that is no file yet may be a tree when the line gets to it.
                Access::Write if removes => {
                    let place = check.resolved.as_deref().unwrap_or(&check.absolute);
                    if place.is_file() || self.regenerable(place) {
                        continue;
                    }
                    // What the project ignores is held by the snapshots but for build outputs, marked caches
                    // and environments and directories too large: the look through what the removal reaches says.
                    if self.undoable(place, Below::Strictly) {
                        self.undone_unless_left_out(place, judgement);
                    } else {
                        judgement.not_contained(format!(
                            "the line removes `{}`, a part of the project no sandbox brings back (a build output \
                             that `.gitignore` lists or a cache tag marks, as `target` or `dist`, is made again by a \
                             build, and may be removed)",
                            check.absolute.display()
                        ));
                    }
                }
                // A read outside the roots may be a secret under a name no list knows, which the kernel does not
                // hide: it needs a `Read(…)` rule, as without the sandbox.
                Access::Read if check.root.is_none() => {
                    judgement.not_contained(format!(
                        "`{}` lies outside the project; reading it needs a `Read(…)` rule",
                        check.absolute.display()
                    ));
                }
                Access::Read | Access::Write => {}
            }
        }
    }

    /// A file (or a directory, with what it holds) that exists where the line writes may be removed or overwritten
    /// whole (`rm app.db`, `: > app.db`, `mv notes.txt app.db`, the source of `mv app.db x`): where `agent-guard
    /// undo` snapshots the root, one the snapshots do not hold (in a directory marked as a cache or an environment, or
    /// too large, that the project ignores, or one too large to keep) is a loss no sandbox brings back, and the line
    /// asks, naming it.
    fn judge_file_written(
        &self,
        check: &agent_fs_sandbox::PathCheck,
        directories: bool,
        judgement: &mut Judgement,
    ) {
        let place = check.resolved.as_deref().unwrap_or(&check.absolute);
        // A directory written into (`cp -t data`, `rsync --delete src/ data/`, `tar -xf a.tar -C data`) may have any
        // file below it overwritten or removed; a line that removes trees judges its directories already.
        let is_file = std::fs::symlink_metadata(place).is_ok_and(|meta| directories || !meta.is_dir());
        if !is_file || !self.snapshotted(place) {
            return;
        }
        if let Some(why) = self.left_out_of_snapshots(place, false, judgement) {
            judgement.not_contained(format!(
                "the line may remove or overwrite `{}`, and {why}",
                check.absolute.display()
            ));
        } else if !self.undoable(place, Below::OrAt) {
            judgement.not_contained(format!(
                "the line may remove or overwrite `{}`, whose content no snapshot kept (too large), so `agent-guard \
                 undo` cannot bring it back",
                check.absolute.display()
            ));
        }
    }

    /// The writable roots `agent-guard undo` snapshots before a run.
    fn undo_roots(&self) -> &[std::path::PathBuf] {
        self.undo_roots.get_or_init(|| {
            let Some(sandbox) = &self.sandbox else {
                return Vec::new();
            };
            let settings = self.undo_settings();
            agent_undo::writable_roots(sandbox)
                .into_iter()
                .filter(|root| agent_undo::snapshots_on(root, &settings))
                .collect()
        })
    }

    /// Whether a root `agent-guard undo` snapshots holds `place`.
    fn snapshotted(&self, place: &Path) -> bool {
        let place = agent_fs_sandbox::canonicalize(place).unwrap_or_else(|_| place.to_path_buf());
        self.undo_roots().iter().any(|root| place.starts_with(root))
    }

    /// Whether `agent-guard undo` takes back what a line does at `place`: a snapshot is taken before every
    /// `workspace-write` run of the writable root that holds it (`agent_undo::snapshots_on`), and `place` lies
    /// below that root (or is the root, for what leaves the root in place, `git reset --hard`). Deleting a whole
    /// root is never taken as undoable: the runs of a root are recorded under the root itself. Nor is a place at or
    /// above a file whose content the last snapshot did not keep (too large to hash): undo cannot put it back.
    fn undoable(&self, place: &Path, below: Below) -> bool {
        let roots = self.undo_roots();
        let place = agent_fs_sandbox::canonicalize(place).unwrap_or_else(|_| place.to_path_buf());
        roots.iter().any(|root| {
            place.starts_with(root)
                && (below == Below::OrAt || place.as_path() != root.as_path())
                && !agent_undo::not_kept(root, &self.undo_settings())
                    .iter()
                    .any(|file| file.starts_with(&place))
        })
    }

    /// The directory before the first wildcard of the removal glob `pattern` (the working directory for `*`), when
    /// what it may match lies strictly below a root `agent-guard undo` snapshots.
    fn undoable_glob(&self, pattern: &str) -> Option<std::path::PathBuf> {
        self.glob_dir(pattern, true)
            .filter(|dir| self.undoable(dir, Below::Strictly))
    }

    /// What a line removes or discards was checked against the ignore rules as they are before it runs; a line in
    /// which more than one command changes the project may first change what those rules leave out (emptying a
    /// `.gitignore`, removing one, renaming an ignored directory or file) and then remove it (`git clean -fd`,
    /// `rm -rf`), which no snapshot holds. Such a line is taken back only when its root holds nothing the
    /// snapshots leave out but build outputs, secret files, `.git` and `.agent-guard`.
    fn judge_undo_reach(&self, analysis: &CommandAnalysis, judgement: &mut Judgement) {
        if !judgement.effects.iter().any(|effect| effect == UNDO_EFFECT) {
            return;
        }
        // A command that runs another that changes the project (`python3 -c "shutil.rmtree('x')"`, `find -exec
        // rm`) changes it through that one: it is counted once, as the command it runs.
        let runs_a_changer: std::collections::BTreeSet<usize> = analysis
            .commands
            .iter()
            .filter(|command| !command.read_only)
            .filter_map(|command| command.location.parent)
            .collect();
        let mut changers: std::collections::BTreeSet<Option<usize>> = analysis
            .commands
            .iter()
            .enumerate()
            .filter(|(index, command)| !command.read_only && !runs_a_changer.contains(index))
            .map(|(index, _)| Some(index))
            .collect();
        changers.extend(analysis.writes.iter().map(|write| write.command));
        if changers.len() < 2 {
            return;
        }
        let Some(root) = self.snapshot_root(&self.cwd) else {
            return;
        };
        if let Some(why) = self.left_out_of_snapshots(&root, true, judgement) {
            judgement.not_contained(format!(
                "the line changes the project before it removes or overwrites files (a change of its own to the \
                 ignore rules, or a rename, may bring into their reach what no snapshot holds), and {why}"
            ));
        }
    }

    /// `agent-guard undo` takes back the removal of `place`, below a snapshotted root, when the snapshot holds
    /// every file there: else the line is not contained, saying which file no snapshot holds.
    fn undone_unless_left_out(&self, place: &Path, judgement: &mut Judgement) {
        match self.left_out_of_snapshots(place, false, judgement) {
            None => judgement.contains(UNDO_EFFECT),
            Some(why) => {
                judgement.not_contained(format!("the line removes `{}`, and {why}", place.display()))
            }
        }
    }

    /// Why a snapshot of the writable root holding `place` does not hold everything at or below it: a file or
    /// directory the snapshots leave out (`agent_undo::look`: of what the project ignores, a directory marked as
    /// a cache or an environment or one too large; what agent-guard's own lines leave out) whose name, or a
    /// directory's above it, is no build output's, or more entries than the look through them takes; `None` when
    /// it holds all. Every `.git` and `.agent-guard` counts as held
    /// `with_git` (git writing the working tree leaves them alone); for a removal, a nested repository's `.git` is
    /// history no snapshot holds. Reads the directories below `place`, at most [`LEFT_OUT_CAP`] entries: only a line that
    /// removes a tree or writes the working tree from another commit pays for it.
    ///
    /// Where what the snapshots hold there includes something the project ignores, the judgement notes the place
    /// ([`Contained::undo_held`]): such data is held only while it stays within the bounds on ignored data, and
    /// the run checks again, after its snapshot, that it still is ([`Guard::undo_held_since`]).
    fn left_out_of_snapshots(
        &self,
        place: &Path,
        with_git: bool,
        judgement: &mut Judgement,
    ) -> Option<String> {
        let (why, ignored) = self.look_through_snapshots(place, with_git);
        if why.is_none() && ignored {
            let place = agent_fs_sandbox::canonicalize(place).unwrap_or_else(|_| place.to_path_buf());
            if !judgement.undo_held.contains(&place) {
                judgement.undo_held.push(place);
            }
        }
        why
    }

    /// Why the snapshots leave out something at or below `place` ([`Guard::left_out_of_snapshots`]), and whether
    /// they hold there something the project ignores.
    fn look_through_snapshots(&self, place: &Path, with_git: bool) -> (Option<String>, bool) {
        let place = agent_fs_sandbox::canonicalize(place).unwrap_or_else(|_| place.to_path_buf());
        let Some(root) = self.snapshot_root(&place) else {
            return (None, false);
        };
        let mut excused = |path: &Path, is_dir: bool| {
            // Git writing the working tree leaves every repository's own directory alone (a nested one's too,
            // which the outer repository cannot track), and agent-guard's state, which no commit holds.
            if with_git
                && path
                    .file_name()
                    .is_some_and(|name| name == ".git" || name == ".agent-guard")
            {
                return true;
            }
            let mut dirs = path
                .ancestors()
                .take_while(|dir| dir.starts_with(&root) && *dir != root);
            if !is_dir {
                dirs.next();
            }
            dirs.any(|dir| {
                dir.file_name()
                    .is_some_and(agent_tool_traits::is_build_output_name)
            })
        };
        let look = agent_undo::look(&root, &place, LEFT_OUT_CAP, &mut excused);
        let why = match look.left_out {
            None => None,
            Some(agent_undo::LeftOut::Path(path, _)) => Some(format!(
                "`{}` is left out of every snapshot (a directory marked as a cache or an environment, a nested \
                 repository's history, or what agent-guard's own rules leave out), so `agent-guard undo` cannot \
                 bring it back",
                path.display()
            )),
            Some(agent_undo::LeftOut::Large(path)) => Some(format!(
                "`{}` is something the project ignores that holds more than {} files and directories or {} MiB, \
                 too much for a snapshot to hold, so `agent-guard undo` cannot bring it back",
                path.display(),
                agent_undo::HELD_IGNORED_ENTRIES,
                agent_undo::HELD_IGNORED_BYTES >> 20
            )),
            Some(agent_undo::LeftOut::Unhashed(path)) => Some(format!(
                "`{}` holds more than a snapshot keeps the content of ({} MiB), so `agent-guard undo` cannot bring \
                 all of it back",
                path.display(),
                agent_undo::KEPT_SNAPSHOT_BYTES >> 20
            )),
            Some(agent_undo::LeftOut::TooMany(cap)) => Some(format!(
                "`{}` holds more than {cap} files and directories, too many to make sure a snapshot holds each",
                place.display()
            )),
        };
        (why, look.ignored)
    }

    /// Why a run whose allow counted on the snapshots holding what the project ignores at `places` (the decision's
    /// [`Contained::undo_held`]) must not run now: the snapshot taken before it, a moment ago, left one of them out
    /// (it grew past the bounds on ignored data, or was marked as a cache, since the decision). `None` when each
    /// is still held. Asks the file system as the decision did.
    pub fn undo_held_since(&self, places: &[std::path::PathBuf]) -> Option<String> {
        places.iter().find_map(|place| {
            let (why, _) = self.look_through_snapshots(place, true);
            why.map(|why| {
                format!(
                    "the command was allowed because `agent-guard undo` takes back what it removes or overwrites at \
                     `{}`, but now {why}: nothing was run; the next decision knows of it",
                    place.display()
                )
            })
        })
    }

    /// The writable root whose snapshots hold `place` (canonical): the deepest one above it.
    fn snapshot_root(&self, place: &Path) -> Option<std::path::PathBuf> {
        let sandbox = self.sandbox.as_ref()?;
        let place = agent_fs_sandbox::canonicalize(place).unwrap_or_else(|_| place.to_path_buf());
        agent_undo::writable_roots(sandbox)
            .into_iter()
            .filter_map(|root| agent_fs_sandbox::canonicalize(&root).ok())
            .filter(|root| place.starts_with(root))
            .max_by_key(|root| root.as_os_str().len())
    }

    /// The directory the matches of a removal glob lie in: the part before its first wildcard (the working
    /// directory for a bare name when `bare` says so), resolved, when it is a directory inside a root.
    fn glob_dir(&self, pattern: &str, bare: bool) -> Option<std::path::PathBuf> {
        let literal = pattern.split(['*', '?', '[']).next().unwrap_or_default();
        let dir = match literal.rsplit_once('/') {
            Some(("", _)) => "/",
            Some((dir, _)) => dir,
            None if bare => ".",
            None => return None,
        };
        let check = self.sandbox.as_ref()?.check(dir, Access::Write);
        check.root.as_ref()?;
        check
            .resolved
            .filter(|resolved| agent_fs_sandbox::is_dir(resolved))
    }

    /// The background run of this project whose own sandbox serves `host`, a service on this machine with its
    /// port (`localhost:5173`), unless a rule refuses the host: a server the agent started there, which that run's
    /// sandbox contains, and which the proxy reaches in the run's namespace alone.
    pub(crate) fn sandboxed_service(&self, host: &str) -> Option<agent_os_sandbox::SandboxedService> {
        let grant = host.parse::<agent_os_sandbox::LoopbackGrant>().ok()?;
        if self.host_refused(host) {
            return None;
        }
        let roots = agent_undo::writable_roots(self.sandbox.as_ref()?);
        agent_os_sandbox::sandboxed_service(grant.port(), &roots)
    }

    /// Whether the sandbox's proxy lets the line reach `host`: a domain of `agentGuard.network` (the registries
    /// and the user's patterns) or of a `WebFetch(domain:…)` allow rule, and of no deny or ask rule or deny pattern.
    pub(crate) fn domain_allowed(&self, host: &str) -> bool {
        if self.host_refused(host) {
            return false;
        }
        match self.network.verdict(host, 443) {
            DomainVerdict::Allowed(_) => true,
            DomainVerdict::Denied(_) => false,
            DomainVerdict::NotListed => self.policy.host_rule(Decision::Allow, host).is_some(),
        }
    }

    /// The network as the reason names it: the domains the proxy lets through.
    fn network_effect(&self) -> String {
        let allowed = self.network.allowed();
        let mut shown: Vec<String> = allowed
            .iter()
            .take(SHOWN_DOMAINS)
            .map(ToString::to_string)
            .collect();
        if allowed.len() > SHOWN_DOMAINS {
            shown.push("…".to_owned());
        }
        format!(
            "its network is limited to {} (`agentGuard.network`)",
            shown.join(", ")
        )
    }

    /// Whether `place` lies in what a build makes again: a directory named as build tools name their output
    /// ([`agent_tool_traits::is_build_output_name`]) that the project also marks as such — tagged as a cache (`CACHEDIR.TAG`, as in
    /// cargo's `target/`), or listed by the `.gitignore` of its parent or of the working directory — `place`
    /// itself or a directory above it inside the working directory (never the working directory itself). Both
    /// are needed: the mark alone is a file an earlier line may have written (`src` in a `.gitignore`, a tag in
    /// `src/`), and the name is what no line can change.
    fn regenerable(&self, place: &Path) -> bool {
        let root = agent_fs_sandbox::canonicalize(&self.cwd).unwrap_or_else(|_| self.cwd.clone());
        place
            .ancestors()
            .take_while(|dir| dir.strip_prefix(&root).is_ok_and(|r| !r.as_os_str().is_empty()))
            .filter(|dir| {
                dir.file_name()
                    .is_some_and(agent_tool_traits::is_build_output_name)
            })
            .any(|dir| {
                agent_fs_sandbox::is_file(&dir.join(agent_tool_traits::CACHE_TAG))
                    || dir.parent().is_some_and(|parent| ignored(parent, dir))
                    || ignored(&root, dir)
            })
    }

    /// Whether every file the glob `pattern` of a removal may match lies in a regenerable directory: the
    /// directory before its first wildcard.
    fn regenerable_glob(&self, pattern: &str) -> bool {
        self.glob_dir(pattern, false)
            .is_some_and(|dir| self.regenerable(&dir))
    }
}

/// A command that a user's rule allows beyond what the sandbox contains (`git push`, a host that is not an allowed
/// domain) runs with what the rule grants it: the network to its hosts, git's writes. The sandbox is one for the
/// whole line, so every other command of the line would share that grant, and only those whose every effect the
/// analysis follows may: reading commands, and git's own writes of the repository ([`SubCommand::git_writes`]: git
/// running no program of the line's or the configuration's). A writing command runs options the analysis may not
/// model (`zip -TT CMD`, `split --filter`), and a build, a script, an interpreter, a command word only known at
/// run time, code the project controls (the repository's git hooks among it) or code named on the command line
/// (`git -c alias.x='!…'`) would reach what only the ruled command was allowed to. Such a line is not contained:
/// it asks, and says to split it.
fn judge_shared_grant(
    gathered: &Gathered<'_>,
    analysis: &CommandAnalysis,
    ruled: &[Ruled],
    judgement: &mut Judgement,
) {
    let Some(first) = ruled.first() else {
        return;
    };
    let rule = first.verdict.provenance.rule.as_deref().unwrap_or("?");
    let sharing = format!(
        "in a line that shares the sandbox in which your rule `{rule}` lets `{}` reach beyond it (run them as \
         separate lines)",
        first.shown
    );
    for (finding, about) in gathered.findings.iter().zip(&gathered.concerns) {
        let own = about
            .command
            .is_some_and(|index| ruled.iter().any(|r| r.index == index));
        if about.concern == Concern::Contained && finding.decision != Decision::Allow && !own {
            judgement.not_contained(format!("{}, {sharing}", finding.reason()));
        }
    }
    for (index, command) in analysis.commands.iter().enumerate() {
        if ruled.iter().any(|r| r.index == index) {
            continue;
        }
        let shown = command.effective().join(" ");
        let code = &gathered.project_code;
        if let Some(why) = code.why(index).or_else(|| code.hooks(index)) {
            judgement.not_contained(format!("`{shown}` {why}, {sharing}"));
        } else if !command.read_only && !command.git_writes {
            judgement.not_contained(format!(
                "`{shown}` is neither a reading command nor a git write the analysis follows, {sharing}"
            ));
        }
    }
}

/// The program of the command at `index` of `analysis`.
fn program_of(analysis: &CommandAnalysis, index: Option<usize>) -> Option<&str> {
    analysis.commands.get(index?)?.program()
}

/// Whether `text` holds a shell wildcard.
fn is_glob(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// Whether the `.gitignore` of `base` lists `dir` by a plain name or path (`target`, `/dist/`, `build/`): the
/// lines a project writes for its build outputs. Patterns with wildcards and negations are not read.
fn ignored(base: &Path, dir: &Path) -> bool {
    let Ok(relative) = dir.strip_prefix(base) else {
        return false;
    };
    let relative = relative.to_string_lossy();
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Ok(text) = std::fs::read_to_string(base.join(".gitignore")) else {
        return false;
    };
    text.lines().map(str::trim).any(|line| {
        if line.is_empty() || line.starts_with(['#', '!']) || is_glob(line) {
            return false;
        }
        let anchored = line.starts_with('/') || line.trim_end_matches('/').contains('/');
        let entry = line.trim_start_matches('/').trim_end_matches('/');
        entry == relative || (!anchored && entry == name)
    })
}

/// The effect of showing credentials of the environment that the sandbox does not pass: the variables named, or
/// the whole environment.
fn environment_effect(gathered: &Gathered<'_>) -> String {
    let mut names: Vec<String> = gathered
        .analysis
        .iter()
        .flat_map(|analysis| &analysis.findings)
        .filter(|f| f.concern == Concern::Environment)
        .flat_map(|f| f.variables.iter().map(|v| format!("`${v}`")))
        .collect();
    names.dedup();
    if names.is_empty() {
        return "the environment it prints is the sandbox's, which passes no credential (`agentGuard.sandboxEnv`)"
            .to_owned();
    }
    let verb = if names.len() == 1 { "is" } else { "are" };
    format!(
        "{} {verb} not passed into the sandbox, so it shows nothing of {} (`agentGuard.sandboxEnv`)",
        names.join(", "),
        if names.len() == 1 { "it" } else { "them" }
    )
}

#[cfg(test)]
#[path = "contain_tests.rs"]
mod tests;
