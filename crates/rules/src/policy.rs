//! The resolution of one decision (docs/rules.md, every step and the final conversions), with a conflict log.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use agent_tool_traits::{DecidedBy, Decision, Layer, Provenance, Source, Verdict};

use crate::classifier::{Classifier, ClassifierInput, ClassifierVerdict, DeterministicClassifier};
use crate::error::Result;
use crate::facts::{CallFacts, CommandFact, Request};
use crate::matcher::{Anchors, CompiledRules, Subject};
use crate::mode::PermissionMode;
use crate::rule::Rule;
use crate::session::SessionState;
use crate::settings::Settings;
use crate::tool::{ToolKind, ToolName};
use agent_tool_traits::Access;

/// A compiled permission policy: the rules of every source, the mode, and the classifier of mode `auto`.
/// Build it once per working directory; [`Policy::decide`] is the hot path. A policy holds no session state: what
/// a session accumulates is a [`SessionState`] its owner passes in.
#[derive(Debug)]
pub struct Policy {
    compiled: CompiledRules,
    mode: PermissionMode,
    mode_source: Option<Source>,
    classifier: Arc<dyn Classifier>,
    notes: Vec<String>,
    /// A managed policy refused `bypassPermissions` from every other source.
    bypass_disabled: bool,
}

/// An overridden decision, for the conflict log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// What would have decided otherwise.
    pub overridden: String,
    /// What it would have decided.
    pub decision: Decision,
    /// What decided instead.
    pub by: String,
}

/// The outcome of [`Policy::decide`]: the verdict, every candidate decision that was considered in order, and
/// the conflict log.
#[derive(Debug, Clone)]
pub struct Resolution {
    /// The decision, its reasons and provenance.
    pub verdict: Verdict,
    /// The candidates of each step that had something to say, in resolution order; the first decided.
    pub considered: Vec<Verdict>,
    /// Every considered decision that differs from the final one.
    pub conflicts: Vec<Conflict>,
    /// What the classifier of mode `auto` did, when it judged the call: the session's owner records it
    /// ([`SessionState::record`]).
    pub classifier: Option<ClassifierOutcome>,
}

/// What the classifier of mode `auto` did with a call, for the session's denial tracker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassifierOutcome {
    /// It approved the call, which ends a run of consecutive denials.
    Approved,
    /// It blocked the call (a deny, or an ask once the session's tracker has tripped).
    Blocked,
}

impl Policy {
    /// A policy from loaded settings; the mode is the settings' own (see [`Settings::mode`]).
    pub fn new(settings: &Settings, anchors: &Anchors) -> Result<Self> {
        let mut policy = Self::from_rules(settings.rules().to_vec(), PermissionMode::Default, anchors)?;
        if let Some((mode, source)) = settings.mode() {
            policy.mode = mode;
            policy.mode_source = Some(source);
        }
        policy.notes = settings.diagnostics().to_vec();
        policy.bypass_disabled = settings.bypass_disabled();
        Ok(policy)
    }

    /// A policy from rules alone, in `mode`.
    pub fn from_rules(rules: Vec<Rule>, mode: PermissionMode, anchors: &Anchors) -> Result<Self> {
        Ok(Self {
            compiled: CompiledRules::compile(rules, anchors)?,
            mode,
            mode_source: None,
            classifier: Arc::new(DeterministicClassifier),
            notes: Vec::new(),
            bypass_disabled: false,
        })
    }

    /// The same policy in `mode`, set from `source` (the command line, a hook input). Modes that need a trusted
    /// source are refused from project or local settings, and the refusal is kept as a diagnostic.
    #[must_use]
    pub fn with_mode(mut self, mode: PermissionMode, source: Source) -> Self {
        if mode.needs_trusted_source() && matches!(source, Source::Project | Source::Local) {
            self.notes.push(format!("mode `{mode}` from {source} settings ignored: only policy, user settings and the command line can enable it"));
        } else if mode == PermissionMode::BypassPermissions
            && self.bypass_disabled
            && source != Source::Policy
        {
            self.notes
                .push(format!("mode `{mode}` from {source} ignored: disabled by policy"));
        } else {
            self.mode = mode;
            self.mode_source = Some(source);
        }
        self
    }

    /// The same policy in `mode`, set by the project's local settings file `file` and refused while loading
    /// ([`Settings::refused_local_mode`]) because such a file may have come with the repository: for a caller that
    /// knows `file` to be the user's own (written on this machine: one git does not track). The mode takes the
    /// place of one of a lower source or of the settings' own default, never of a higher source's (the command
    /// line, a session, a managed policy), nor `bypassPermissions` where a managed policy disabled it; the note of
    /// its refusal is dropped.
    #[must_use]
    pub fn with_users_local_mode(mut self, mode: PermissionMode, file: &Path) -> Self {
        let origin = file.display().to_string();
        let refusal = crate::settings::untrusted_mode_note(mode, Source::Local, &origin);
        self.notes.retain(|note| *note != refusal);
        if self.mode_source.is_some_and(|source| source > Source::Local) {
            return self;
        }
        if mode == PermissionMode::BypassPermissions && self.bypass_disabled {
            self.notes
                .push(format!("mode `{mode}` ({origin}) ignored: disabled by policy"));
            return self;
        }
        self.mode = mode;
        self.mode_source = Some(Source::Local);
        self
    }

    /// The same policy with another classifier for mode `auto`.
    #[must_use]
    pub fn with_classifier(mut self, classifier: Arc<dyn Classifier>) -> Self {
        self.classifier = classifier;
        self
    }

    /// The mode in force.
    pub fn mode(&self) -> PermissionMode {
        self.mode
    }

    /// Where the mode came from (`None` for the built-in default).
    pub fn mode_source(&self) -> Option<Source> {
        self.mode_source
    }

    /// Every rule, in the order it was loaded.
    pub fn rules(&self) -> &[Rule] {
        &self.compiled.rules
    }

    /// Notes from loading (modes refused, rules skipped).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The rule of `behavior` that matches some subject of the call and is reported for it (the highest source),
    /// without resolving anything else.
    pub fn matching_rule(&self, behavior: Decision, request: &Request<'_>) -> Option<&Rule> {
        let tool = ToolName::new(request.tool);
        self.best_match(behavior, &tool, tool.kind(), request.facts)
            .and_then(|i| self.compiled.rules.get(i))
    }

    /// The allow rule that names the shell command `command` on its own (its effective command after wrappers, or
    /// its whole command line), as a compound line's commands are each matched: `Bash(docker:*)` for `docker ps`,
    /// `Bash(kubectl get pods)` for exactly that command. A rule that names no program (`Bash`, `Bash(*)`) is not
    /// returned.
    pub fn command_allow_rule(&self, command: &CommandFact<'_>) -> Option<&Rule> {
        self.command_rule(command)
            .and_then(|i| self.compiled.rules.get(i))
            .filter(|rule| rule.command_name().is_some())
    }

    /// The allow of [`Policy::command_allow_rule`]'s rule, as the rules' own step 6 states it (`allowed by allow
    /// rule … from … settings`).
    pub fn command_allow_verdict(&self, command: &CommandFact<'_>) -> Option<Verdict> {
        self.command_rule(command)
            .filter(|&i| {
                self.compiled
                    .rules
                    .get(i)
                    .is_some_and(|rule| rule.command_name().is_some())
            })
            .map(|i| self.rule_verdict(i, DecidedBy::AllowRule))
    }

    /// The rule of `behavior` whose pattern names the file `path` for `access` (`Read(…)` rules for a read,
    /// `Edit(…)` and `Write(…)` rules for a write), the highest source first. Tool-wide rules (`Read`, `*`) are
    /// not path rules and never match here: this is what protects a file whoever reaches it, the kernel sandbox
    /// included.
    pub fn path_rule(&self, behavior: Decision, access: Access, path: &Path) -> Option<&Rule> {
        let tool = ToolName::new(match access {
            Access::Read => "Read",
            Access::Write => "Edit",
        });
        let mut best: Option<usize> = None;
        for family in path_families(access, &tool, tool.kind()) {
            if let Some(hit) = self
                .compiled
                .lookup(behavior, Subject::Path { tool: family, path })
            {
                best = Some(match best {
                    Some(current) if !self.outranks(hit, current) => current,
                    _ => hit,
                });
            }
        }
        best.and_then(|i| self.compiled.rules.get(i))
    }

    /// The rule of `behavior` naming the host `host` (`WebFetch(domain:example.com)`), the highest source first.
    /// Tool-wide rules (`WebFetch`) name no host and never match here: an allow rule of this form is what makes a
    /// domain an allowed one for the kernel sandbox's proxy.
    pub fn host_rule(&self, behavior: Decision, host: &str) -> Option<&Rule> {
        let host = host.to_ascii_lowercase();
        self.compiled
            .lookup(behavior, Subject::Host(&host))
            .and_then(|i| self.compiled.rules.get(i))
    }

    /// The literal places of the rules of `behavior` on file paths for `access`: the directory or file each
    /// pattern starts from (`/home/u/.aws` for `Read(~/.aws/**)`, `/etc` for `Read(//etc/*.key)`). Rules that may
    /// match at any depth (`Read(.env)`) have no place and are not listed. With [`Policy::path_rule`] a caller
    /// finds what such a rule protects on disk.
    pub fn rule_places(&self, behavior: Decision, access: Access) -> Vec<&str> {
        let tool = ToolName::new(match access {
            Access::Read => "Read",
            Access::Write => "Edit",
        });
        let mut places: Vec<&str> = path_families(access, &tool, tool.kind())
            .flat_map(|family| self.compiled.beneath(behavior, family, Path::new("/")))
            .map(|(_, place)| place)
            .collect();
        places.sort_unstable();
        places.dedup();
        places
    }

    /// The deny rules on reads by `tool` that protect something strictly beneath the directory `dir`, each with the
    /// literal directory its pattern starts from (`/proj/secrets` for `Read(./secrets/**)`): what a recursive
    /// search of `dir` would read. Rules that may match at any depth (`Read(.env)`) are not listed. The caller
    /// decides whether that place exists; this crate does not touch the file system.
    pub fn deny_rules_beneath(&self, tool: &str, dir: &Path) -> Vec<(&Rule, &str)> {
        let name = ToolName::new(tool);
        let kind = name.kind();
        let mut found: Vec<(&Rule, &str)> = Vec::new();
        for family in path_families(Access::Read, &name, kind) {
            for (index, prefix) in self.compiled.beneath(Decision::Deny, family, dir) {
                if let Some(rule) = self.compiled.rules.get(index)
                    && !found.iter().any(|(r, p)| std::ptr::eq(*r, rule) && *p == prefix)
                {
                    found.push((rule, prefix));
                }
            }
        }
        found
    }

    /// Decides one call in a session that has accumulated `session`. Never fails and never panics: what cannot be
    /// judged is asked or denied. Pure: it reads the policy and `session` and changes neither, so the same call
    /// decided twice gets the same resolution; the caller records the decisions it acts on.
    pub fn decide(&self, request: &Request<'_>, session: &SessionState) -> Resolution {
        let tool = ToolName::new(request.tool);
        let kind = tool.kind();
        let facts = request.facts;
        let read_only = is_read_only(kind, facts);
        let allowed = self.allow_verdict(&tool, kind, facts);
        let mut considered = self.refusals(&tool, kind, request);
        // The guard's own caution (the network while it is blocked) asks only when no allow rule or hook's allow
        // of the user covers the whole call: the user has answered it in advance.
        let lifted = allowed.is_some() || request.hooks.allow.is_some();
        for finding in request.findings.iter().filter(|f| f.decision == Decision::Ask) {
            match finding.provenance.step {
                Some(DecidedBy::CautionAsk) if lifted => {}
                Some(DecidedBy::CautionAsk) => considered.push(finding.clone()),
                _ => considered.push(step(finding.clone(), DecidedBy::SafetyAsk)),
            }
        }
        self.modes_and_allows(&tool, kind, read_only, allowed, request, &mut considered);
        // Steps 7 and 8 run only when nothing before decided: only then does the classifier judge the call (and
        // only then is its judgement the session's to record).
        let mut classifier = None;
        if considered.is_empty() {
            let (verdict, outcome) = self.mode_step(&tool, kind, facts, read_only, session);
            classifier = outcome;
            considered.extend(verdict);
        }
        if considered.is_empty() {
            let covered = |command: &CommandFact<'_>| self.command_rule(command).is_some();
            considered.push(default_verdict(&tool, kind, facts, read_only, &covered));
        }
        self.settle(considered, classifier)
    }

    /// Steps 1 to 4 but the layers' asks, in their order: a deny rule over every subject of the call, the layers'
    /// denies, a hook that blocked, an ask rule, a hook asking.
    fn refusals(&self, tool: &ToolName, kind: ToolKind, request: &Request<'_>) -> Vec<Verdict> {
        let mut considered: Vec<Verdict> = Vec::new();
        if let Some(rule) = self.best_match(Decision::Deny, tool, kind, request.facts) {
            considered.push(self.rule_verdict(rule, DecidedBy::DenyRule));
        }
        for finding in request.findings.iter().filter(|f| f.decision == Decision::Deny) {
            considered.push(step(finding.clone(), DecidedBy::LayerDeny));
        }
        if let Some((hook, reason)) = &request.hooks.block {
            considered.push(Verdict::new(
                Decision::Deny,
                format!("blocked by hook `{hook}`: {reason}"),
                Provenance::layer(Layer::Hooks).at(DecidedBy::HookBlock),
            ));
        }
        if let Some(rule) = self.best_match(Decision::Ask, tool, kind, request.facts) {
            considered.push(self.rule_verdict(rule, DecidedBy::AskRule));
        }
        for message in &request.hooks.asks {
            considered.push(Verdict::new(
                Decision::Ask,
                format!("a hook asks for permission: {message}"),
                Provenance::layer(Layer::Hooks).at(DecidedBy::HookAsk),
            ));
        }
        considered
    }

    /// Plan mode's deny of a write (before any allow can apply: a plan never changes anything), step 5 (bypass)
    /// and step 6 (an allow rule covering the whole call, `allowed`, or an external hook's allow), in that order.
    fn modes_and_allows(
        &self,
        tool: &ToolName,
        kind: ToolKind,
        read_only: bool,
        allowed: Option<Verdict>,
        request: &Request<'_>,
        considered: &mut Vec<Verdict>,
    ) {
        if self.mode == PermissionMode::Plan && !read_only {
            considered.push(self.mode_verdict(
                Decision::Deny,
                format!(
                    "mode `plan` allows only reads; `{tool}` {}",
                    describe_effect(kind, request.facts)
                ),
            ));
        }
        if self.mode == PermissionMode::BypassPermissions {
            considered.push(
                self.mode_verdict(Decision::Allow, "mode `bypassPermissions`".to_owned())
                    .at_step(DecidedBy::BypassMode),
            );
        }
        considered.extend(allowed);
        if let Some(reason) = &request.hooks.allow {
            considered.push(Verdict::new(
                Decision::Allow,
                format!("allowed by a hook: {reason}"),
                Provenance::layer(Layer::Hooks).at(DecidedBy::HookAllow),
            ));
        }
    }

    /// The first verdict `considered` wins, with the reasons of every other of the same decision at the same step;
    /// the others are its conflicts; an ask becomes a deny in mode `dontAsk`, where no one is asked.
    fn settle(&self, considered: Vec<Verdict>, classifier: Option<ClassifierOutcome>) -> Resolution {
        let Some(mut verdict) = considered.first().cloned() else {
            // Unreachable by construction; a decision that cannot be made is an ask, never an allow.
            let fallback = Verdict::new(Decision::Ask, "no step decided", Provenance::layer(Layer::Rules));
            return Resolution {
                verdict: fallback,
                considered,
                conflicts: Vec::new(),
                classifier,
            };
        };
        // Every other reason of the same decision at the same step is kept, so the user sees all of them.
        let winner_step = verdict.provenance.step;
        for other in considered.iter().skip(1) {
            if other.decision == verdict.decision && other.provenance.step == winner_step {
                verdict.reasons.extend(other.reasons.iter().cloned());
            }
        }
        let mut conflicts: Vec<Conflict> = considered
            .iter()
            .skip(1)
            .filter(|c| c.decision != verdict.decision)
            .map(|c| Conflict {
                overridden: c.reason(),
                decision: c.decision,
                by: first_reason(&verdict),
            })
            .collect();
        // The final conversion: no one to ask.
        if verdict.decision == Decision::Ask && self.mode == PermissionMode::DontAsk {
            conflicts.push(Conflict {
                overridden: first_reason(&verdict),
                decision: Decision::Ask,
                by: "mode `dontAsk`".to_owned(),
            });
            verdict.decision = Decision::Deny;
            verdict
                .reasons
                .insert(0, "mode `dontAsk` denies what would be asked".to_owned());
            verdict.provenance.step = Some(DecidedBy::NoPrompt);
        }
        verdict.diagnostics.extend(self.notes.iter().cloned());
        verdict.diagnostics.extend(
            conflicts
                .iter()
                .map(|c| format!("{} ({}) overridden by {}", c.overridden, c.decision, c.by)),
        );
        Resolution {
            verdict,
            considered,
            conflicts,
            classifier,
        }
    }

    /// The best rule of `behavior` matching any subject of the call.
    fn best_match(
        &self,
        behavior: Decision,
        tool: &ToolName,
        kind: ToolKind,
        facts: &CallFacts<'_>,
    ) -> Option<usize> {
        let mut best: Option<usize> = None;
        let mut offer = |hit: Option<usize>| {
            if let Some(hit) = hit {
                best = Some(match best {
                    Some(current) if !self.outranks(hit, current) => current,
                    _ => hit,
                });
            }
        };
        offer(self.compiled.lookup(behavior, Subject::Tool(tool)));
        if let Some(commands) = &facts.shell
            && self.compiled.has_shell_rules(behavior)
        {
            let mut words = String::new();
            for command in commands {
                for start in command_starts(command.argv.len(), command.inner) {
                    join_words(command.argv.get(start..).unwrap_or_default(), &mut words);
                    offer(self.compiled.lookup(behavior, Subject::Command(&words)));
                }
            }
        }
        for fact in &facts.paths {
            for family in path_families(fact.access, tool, kind) {
                for form in fact.forms() {
                    offer(self.compiled.lookup(
                        behavior,
                        Subject::Path {
                            tool: family,
                            path: form,
                        },
                    ));
                }
            }
        }
        if let Some(host) = facts.host {
            offer(self.compiled.lookup(behavior, Subject::Host(host)));
        }
        if let Some(agent) = facts.agent {
            offer(self.compiled.lookup(behavior, Subject::Agent(agent)));
        }
        best
    }

    /// Step 6: an allow rule that covers the whole call.
    fn allow_verdict(&self, tool: &ToolName, kind: ToolKind, facts: &CallFacts<'_>) -> Option<Verdict> {
        if let Some(rule) = self.compiled.lookup(Decision::Allow, Subject::Tool(tool)) {
            return Some(self.rule_verdict(rule, DecidedBy::AllowRule));
        }
        let mut used: Option<usize> = None;
        let mut use_rule = |rule: usize| {
            used = Some(match used {
                Some(current) if !self.outranks(rule, current) => current,
                _ => rule,
            });
        };
        match kind {
            ToolKind::Shell => {
                let commands = facts.shell.as_ref()?;
                for command in commands {
                    match self.command_rule(command) {
                        Some(rule) => use_rule(rule),
                        None if command.read_only => {}
                        None => return None,
                    }
                }
                // A write inside the roots is what the allowed commands do there: their rules cover it (a
                // protected file there still asks at step 4). A file outside the roots, read or written, needs a
                // path rule of its own: a rule for a command grants no place beyond the project, and a read there
                // may be a secret under a name no list knows.
                for fact in &facts.paths {
                    match self.path_allow(fact, tool, kind) {
                        Some(rule) => use_rule(rule),
                        None if fact.inside_roots == Some(true) => {}
                        None => return None,
                    }
                }
            }
            ToolKind::Read
            | ToolKind::Glob
            | ToolKind::Grep
            | ToolKind::Write
            | ToolKind::Edit
            | ToolKind::NotebookEdit => {
                if facts.paths.is_empty() {
                    return None;
                }
                for fact in &facts.paths {
                    use_rule(self.path_allow(fact, tool, kind)?);
                }
            }
            ToolKind::WebFetch => use_rule(
                self.compiled
                    .lookup(Decision::Allow, Subject::Host(facts.host?))?,
            ),
            ToolKind::Agent => use_rule(
                self.compiled
                    .lookup(Decision::Allow, Subject::Agent(facts.agent?))?,
            ),
            ToolKind::WebSearch | ToolKind::Mcp | ToolKind::Harmless | ToolKind::Other => return None,
        }
        used.map(|rule| self.rule_verdict(rule, DecidedBy::AllowRule))
    }

    /// The allow rule naming one shell command: its effective command (after wrappers) or its whole command line.
    fn command_rule(&self, command: &CommandFact<'_>) -> Option<usize> {
        if !self.compiled.has_shell_rules(Decision::Allow) {
            return None;
        }
        let mut words = String::new();
        [command.inner, 0].into_iter().find_map(|start| {
            join_words(command.argv.get(start..).unwrap_or_default(), &mut words);
            self.compiled.lookup(Decision::Allow, Subject::Command(&words))
        })
    }

    /// An allow rule covering one file: it must match the path as written and the resolved path.
    fn path_allow(
        &self,
        fact: &crate::facts::PathFact<'_>,
        tool: &ToolName,
        kind: ToolKind,
    ) -> Option<usize> {
        let mut chosen = None;
        for form in fact.forms() {
            let hit = path_families(fact.access, tool, kind)
                .filter_map(|family| {
                    self.compiled.lookup(
                        Decision::Allow,
                        Subject::Path {
                            tool: family,
                            path: form,
                        },
                    )
                })
                .next()?;
            chosen = Some(hit);
        }
        chosen
    }

    /// Step 7: the mode, and what the classifier did when mode `auto` asked it.
    fn mode_step(
        &self,
        tool: &ToolName,
        kind: ToolKind,
        facts: &CallFacts<'_>,
        read_only: bool,
        session: &SessionState,
    ) -> (Option<Verdict>, Option<ClassifierOutcome>) {
        let edits_inside_roots = edits_inside_roots(kind, facts);
        match self.mode {
            PermissionMode::AcceptEdits if edits_inside_roots => (
                Some(self.mode_verdict(
                    Decision::Allow,
                    format!("mode `acceptEdits` allows `{tool}` to edit files inside the roots"),
                )),
                None,
            ),
            PermissionMode::Auto => {
                let input = ClassifierInput {
                    tool,
                    kind,
                    // A read outside the roots loses the read-only default (step 9 asks), so the classifier must
                    // not see it as read-only either: `cat ~/.ssh/id_rsa` is not approved in mode `auto`.
                    read_only: read_only && facts.all_inside_roots(),
                    edits_inside_roots,
                    facts,
                };
                let provenance = Provenance {
                    source: self.mode_source,
                    ..Provenance::layer(Layer::Rules)
                }
                .at(DecidedBy::Classifier);
                match self.classifier.classify(&input) {
                    ClassifierVerdict::Approve(why) => (
                        Some(Verdict::new(
                            Decision::Allow,
                            format!("approved by the classifier of mode `auto`: {why}"),
                            provenance,
                        )),
                        Some(ClassifierOutcome::Approved),
                    ),
                    ClassifierVerdict::Block(why) => {
                        // This block counts: the tracker is judged as it will be once it is recorded.
                        let denials = session.denials().after_denial();
                        let verdict = if denials.tripped() {
                            let (consecutive, total) = denials.counts();
                            Verdict::new(
                                Decision::Ask,
                                format!(
                                    "the classifier would block ({why}) but has denied {consecutive} in a row, {total} in all: asking instead"
                                ),
                                provenance,
                            )
                        } else {
                            Verdict::new(
                                Decision::Deny,
                                format!("blocked by the classifier of mode `auto`: {why}"),
                                provenance,
                            )
                        };
                        (Some(verdict), Some(ClassifierOutcome::Blocked))
                    }
                    ClassifierVerdict::Escalate => (None, None),
                }
            }
            PermissionMode::AcceptEdits
            | PermissionMode::Default
            | PermissionMode::Plan
            | PermissionMode::DontAsk
            | PermissionMode::BypassPermissions
            | PermissionMode::Bubble => (None, None),
        }
    }

    fn outranks(&self, a: usize, b: usize) -> bool {
        match (self.compiled.rules.get(a), self.compiled.rules.get(b)) {
            (Some(ra), Some(rb)) => ra.source > rb.source || (ra.source == rb.source && a < b),
            _ => false,
        }
    }

    fn rule_verdict(&self, index: usize, step: DecidedBy) -> Verdict {
        let Some(rule) = self.compiled.rules.get(index) else {
            return Verdict::new(
                Decision::Ask,
                "a rule matched but cannot be shown",
                Provenance::layer(Layer::Rules),
            );
        };
        let verb = match rule.behavior {
            Decision::Allow => "allowed",
            Decision::Ask => "needs approval",
            Decision::Deny => "denied",
        };
        let mut reason = format!(
            "{verb} by {} rule `{}` from {} settings",
            rule.behavior, rule.text, rule.source
        );
        if let Some(file) = &rule.file {
            let _ = write!(reason, " ({})", file.display());
        }
        Verdict::new(
            rule.behavior,
            reason,
            Provenance {
                layer: Layer::Rules,
                step: Some(step),
                rule: Some(rule.text.clone()),
                source: Some(rule.source),
                file: rule.file.as_ref().map(|f| f.display().to_string()),
            },
        )
    }

    fn mode_verdict(&self, decision: Decision, reason: String) -> Verdict {
        Verdict::new(
            decision,
            reason,
            Provenance {
                source: self.mode_source,
                ..Provenance::layer(Layer::Rules)
            }
            .at(DecidedBy::Mode),
        )
    }
}

trait AtStep {
    fn at_step(self, step: DecidedBy) -> Self;
}

impl AtStep for Verdict {
    fn at_step(mut self, step: DecidedBy) -> Self {
        self.provenance.step = Some(step);
        self
    }
}

fn step(finding: Verdict, step: DecidedBy) -> Verdict {
    finding.at_step(step)
}

fn first_reason(verdict: &Verdict) -> String {
    verdict.reasons.first().cloned().unwrap_or_default()
}

/// The positions a command's words are matched from: the whole command line, and the effective command after
/// its wrappers when there are any.
fn command_starts(len: usize, inner: usize) -> impl Iterator<Item = usize> {
    std::iter::once(0).chain((inner > 0 && inner < len).then_some(inner))
}

/// Joins words with NUL, the separator `Bash(…)` patterns are compiled against; a NUL cannot occur in a word.
fn join_words(words: &[String], out: &mut String) {
    out.clear();
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            out.push('\0');
        }
        out.push_str(word);
    }
}

/// The tools whose path rules apply to a file access: `Read(…)` rules to every read, `Edit(…)` and `Write(…)`
/// rules to every write, and the calling tool's own rules (`Grep(…)`, `NotebookEdit(…)`).
fn path_families(access: Access, tool: &ToolName, kind: ToolKind) -> impl Iterator<Item = &str> {
    let (first, second): (&'static str, Option<&'static str>) = match access {
        Access::Read => ("Read", None),
        Access::Write => ("Edit", Some("Write")),
    };
    let own = (kind != ToolKind::Shell)
        .then_some(tool.as_str())
        .filter(|own| *own != first && Some(*own) != second);
    std::iter::once(first).chain(second).chain(own)
}

fn is_read_only(kind: ToolKind, facts: &CallFacts<'_>) -> bool {
    match kind {
        ToolKind::Shell => facts.shell_read_only(),
        ToolKind::Read | ToolKind::Glob | ToolKind::Grep => !facts.writes(),
        ToolKind::WebFetch | ToolKind::WebSearch | ToolKind::Agent | ToolKind::Harmless => true,
        ToolKind::Write | ToolKind::Edit | ToolKind::NotebookEdit | ToolKind::Mcp | ToolKind::Other => false,
    }
}

/// Whether the call is a file edit confined to the roots: a write tool on files inside them, or shell commands
/// that are read-only except for writes inside them.
fn edits_inside_roots(kind: ToolKind, facts: &CallFacts<'_>) -> bool {
    match kind {
        ToolKind::Write | ToolKind::Edit | ToolKind::NotebookEdit => {
            !facts.paths.is_empty() && facts.all_inside_roots()
        }
        ToolKind::Shell => {
            facts
                .shell
                .as_ref()
                .is_some_and(|commands| commands.iter().all(|c| c.read_only))
                && facts.writes()
                && facts.all_inside_roots()
        }
        ToolKind::Read
        | ToolKind::Glob
        | ToolKind::Grep
        | ToolKind::WebFetch
        | ToolKind::WebSearch
        | ToolKind::Agent
        | ToolKind::Mcp
        | ToolKind::Harmless
        | ToolKind::Other => false,
    }
}

fn describe_effect(kind: ToolKind, facts: &CallFacts<'_>) -> &'static str {
    match kind {
        ToolKind::Shell if facts.shell.is_none() => "runs a command that was not analysed",
        ToolKind::Shell if facts.writes() => "writes files",
        ToolKind::Shell => "runs a command that is not known to be read-only",
        ToolKind::Write | ToolKind::Edit | ToolKind::NotebookEdit => "writes files",
        ToolKind::Mcp | ToolKind::Other => "may change things",
        ToolKind::Read | ToolKind::Glob | ToolKind::Grep => "writes files",
        ToolKind::WebFetch | ToolKind::WebSearch | ToolKind::Agent | ToolKind::Harmless => "is read-only",
    }
}

/// Step 8: the tool's own default.
/// `covered` tells the shell commands an allow rule names, so that the reason names one no rule covers.
fn default_verdict(
    tool: &ToolName,
    kind: ToolKind,
    facts: &CallFacts<'_>,
    read_only: bool,
    covered: &dyn Fn(&CommandFact<'_>) -> bool,
) -> Verdict {
    let provenance = Provenance::layer(Layer::Rules).at(DecidedBy::Default);
    let (decision, reason) = match kind {
        ToolKind::Shell => match &facts.shell {
            None => (Decision::Ask, "the command was not analysed; asking".to_owned()),
            Some(_) if !read_only => (Decision::Ask, non_read_only_reason(facts, covered)),
            Some(_) if !facts.all_inside_roots() => (
                Decision::Ask,
                "a read-only command that reads files outside the roots; asking".to_owned(),
            ),
            Some(_) => (
                Decision::Allow,
                "every command is known to be read-only".to_owned(),
            ),
        },
        ToolKind::Read | ToolKind::Glob | ToolKind::Grep => {
            if facts.all_inside_roots() {
                (Decision::Allow, format!("`{tool}` only reads, inside the roots"))
            } else {
                (
                    Decision::Ask,
                    format!("`{tool}` reads files whose containment was not checked; asking"),
                )
            }
        }
        ToolKind::Write | ToolKind::Edit | ToolKind::NotebookEdit => {
            (Decision::Ask, format!("`{tool}` writes files; asking"))
        }
        ToolKind::WebFetch | ToolKind::WebSearch => {
            (Decision::Ask, format!("`{tool}` reaches the network; asking"))
        }
        ToolKind::Agent => (
            Decision::Allow,
            "starting a subagent; each of its calls is checked on its own".to_owned(),
        ),
        ToolKind::Harmless => (
            Decision::Allow,
            format!("`{tool}` changes nothing outside the conversation"),
        ),
        ToolKind::Mcp => (Decision::Ask, format!("MCP tool `{tool}` has no rule; asking")),
        ToolKind::Other if tool.is_known() => (
            Decision::Ask,
            format!("`{tool}` runs user-defined instructions and has no rule; asking"),
        ),
        ToolKind::Other => (
            Decision::Ask,
            format!("unknown tool `{tool}` has no rule; asking"),
        ),
    };
    Verdict::new(decision, reason, provenance)
}

fn non_read_only_reason(facts: &CallFacts<'_>, covered: &dyn Fn(&CommandFact<'_>) -> bool) -> String {
    let commands = facts.shell.as_deref().unwrap_or_default();
    let first = commands
        .iter()
        .find(|c| !c.read_only && !covered(c))
        .or_else(|| commands.iter().find(|c| !c.read_only));
    match first {
        Some(command) => {
            let shown: Vec<&str> = command
                .argv
                .iter()
                .skip(command.inner)
                .take(4)
                .map(String::as_str)
                .collect();
            match command.why {
                Some(why) => format!("`{}` {why}; asking", shown.join(" ")),
                None => format!("`{}` is not known to be read-only; asking", shown.join(" ")),
            }
        }
        None => "the command writes files; asking".to_owned(),
    }
}
