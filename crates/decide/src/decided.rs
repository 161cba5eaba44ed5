//! What one decision saw and concluded, for the caller, `explain`, the audit log and telemetry.

use agent_bash_guard::CommandAnalysis;
use agent_fs_sandbox::PathCheck;
use agent_rules::{Resolution, TaintFacts, TaintMark};
use agent_tool_traits::{Access, Confinement, Verdict};

use crate::contain::Contained;
use crate::outside::Outside;

/// Everything one decision saw, for `explain`, the audit log and telemetry.
#[derive(Debug, Clone)]
pub struct Decided {
    /// The resolution: verdict, candidates in order, conflict log.
    pub resolution: Resolution,
    /// The shell analysis, for shell calls.
    pub analysis: Option<CommandAnalysis>,
    /// The sandbox's report on each file the call touches, with the access checked.
    pub paths: Vec<CheckedPath>,
    /// The findings of the tool's own checks and of the layers that went into the resolution.
    pub findings: Vec<Verdict>,
    /// For a shell call that is allowed (or asked, for after the user's allow): the kernel sandbox it runs
    /// under. `None` for other calls, denied ones, and where no sandbox runs (`agentGuard.sandbox` is `off`, or
    /// the kernel cannot enforce it).
    pub confinement: Option<Confinement>,
    /// For a shell line allowed inside the sandbox without asking (`agentGuard.sandbox.autoAllow`): what the
    /// sandbox contained and the verdict it had without it.
    pub contained: Option<Contained>,
    /// For a shell line allowed to run outside the kernel sandbox: the commands no sandbox can contain and the
    /// user's rules that allow them ([`Outside`]). Its `confinement` is then `None`.
    pub outside: Option<Outside>,
    /// The hosts the line names that its sandbox's proxy lets through beyond `agentGuard.network`, because a rule,
    /// a hook or the user allowed this line or a `WebFetch(domain:…)` rule allows the host (`--allow-domain`).
    pub domains: Vec<String>,
    /// The ports of this machine's loopback the line names that a background run of this project serves inside
    /// its own sandbox: its proxy reaches each in that run's namespace (`--service`).
    pub services: Vec<u16>,
    /// The line reaches one of those servers and nobody approved it: its proxy reaches nothing but them
    /// (`--services-only`).
    pub services_only: bool,
    /// What the call adds to its session's taint (untrusted content, private data, the domains it reaches): the
    /// caller records it for a call it lets run ([`agent_rules::SessionTaint::record`]).
    pub taint: TaintFacts,
    /// For a line allowed with the network in a session that has read untrusted content, when nobody approved the
    /// line (a contained allow, a mode's): the only domains its proxy lets through (`--session-domains-only`).
    pub session_limit: Option<SessionLimit>,
    /// For a search tool's call (Grep) that reaches secret files by name: the names it is allowed with left out.
    /// The caller narrows the call by them (the hook: an `updatedInput` whose `glob` is `!NAME` or `!{A,B}`,
    /// which ripgrep excludes); a caller that cannot narrow it must not run it as allowed. Empty otherwise.
    pub search_excludes: Vec<String>,
}

/// The limit a session's untrusted content sets on the proxy of a line nobody approved: the domains the session
/// reached before and those the line names that the decision let through. Any other domain is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionLimit {
    /// The domains the proxy lets through, lowercase.
    pub domains: Vec<String>,
    /// The call that brought untrusted content into the session.
    pub untrusted: TaintMark,
}

impl SessionLimit {
    /// The session's taint as the refusal names it: the call and why it counts.
    pub fn taint(&self) -> String {
        format!("`{}`: {}", self.untrusted.call, self.untrusted.why)
    }

    /// Why the proxy refuses another domain, for the session `session_id` (the hook's; `None` in the runtime, whose
    /// taint lives as long as its session).
    pub fn why(&self, session_id: Option<&str>) -> String {
        session_limit_why(&self.taint(), session_id)
    }
}

/// Why the proxy of a line in a session tainted by `taint` (a call and why it counts) refuses a domain the session
/// had not reached, and how to lift it: `agent-guard session show`/`clear` for the session `session_id`, or an
/// allow of the line itself.
pub fn session_limit_why(taint: &str, session_id: Option<&str>) -> String {
    let way_back = match session_id.filter(|id| !id.is_empty()) {
        Some(id) => format!(
            "look at it with `agent-guard session show {id}`, then `agent-guard session clear {id}` resets its taint \
             (or allow the line with a rule)"
        ),
        None => "a line the user or a rule allows reaches other domains".to_owned(),
    };
    format!(
        "this session has read untrusted content ({taint}), so a line nobody approved reaches only the domains \
         the session reached before or the line names, and none once the session has also read private data; \
         {way_back}"
    )
}

/// One file a call touches: the access and the file-system sandbox's report on it.
#[derive(Debug, Clone)]
pub struct CheckedPath {
    /// How the call uses the file.
    pub access: Access,
    /// What the sandbox found: where the path leads, in which root, whether it is protected, its finding.
    pub check: PathCheck,
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
            contained: None,
            outside: None,
            domains: Vec::new(),
            services: Vec::new(),
            services_only: false,
            taint: TaintFacts::default(),
            session_limit: None,
            search_excludes: Vec::new(),
        }
    }

    /// The final verdict.
    pub fn verdict(&self) -> &Verdict {
        &self.resolution.verdict
    }
}
