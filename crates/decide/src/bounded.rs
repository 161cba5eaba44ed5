//! The one bounded decision entry: a call decided by an agent's guards (its own and, for a subagent, its parent's)
//! on a worker thread within a time bound, and a deny past it.

use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use agent_rules::{HookOutcome, SessionState};
use agent_tool_traits::{Confinement, Decision, Layer, PermissionCheck, Provenance, Verdict};
use serde_json::Value;

use crate::guard::{Decided, Guard};

/// How long one decision may take unless [`DECISION_TIMEOUT_ENV`] says otherwise. A coding agent gives up on a
/// hook after its own timeout and then runs the call without it, and hostile input can make the shell parser run
/// away: a decision past the bound must end in a deny, well before anyone else gives up.
pub const DEFAULT_DECISION_LIMIT: Duration = Duration::from_secs(5);

/// The environment variable that sets the bound, in milliseconds (`AGENT_GUARD_DECISION_TIMEOUT_MS=200`).
pub const DECISION_TIMEOUT_ENV: &str = "AGENT_GUARD_DECISION_TIMEOUT_MS";

/// The environment variable that makes the deciding thread panic when it holds `decide`, so that tests can show a
/// panic of a decision blocks the call. Setting it can only make a decision fail closed.
const FAILPOINT_ENV: &str = "AGENT_GUARD_FAILPOINT";

/// The time bound on one decision: [`DEFAULT_DECISION_LIMIT`], or what [`DECISION_TIMEOUT_ENV`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecisionBound {
    limit: Duration,
}

/// One call to decide, with what the caller collected before deciding: the PreToolUse hooks' outcome and the
/// tool's own permission checks (both empty for a call decided alone, as `agent-guard check` does).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallInput {
    /// The tool's name, in either family.
    pub tool: String,
    /// The tool's arguments.
    pub args: Value,
    /// What the PreToolUse hooks said.
    pub hooks: HookOutcome,
    /// The tool's own `check_permissions`.
    pub checks: Vec<PermissionCheck>,
}

/// The guards an agent's calls are decided by: its own, and for a subagent its parent's, whose decision is a
/// ceiling (a child may do nothing its parent may not). Cheap to clone.
#[derive(Debug, Clone)]
pub struct Deciders {
    own: Arc<Guard>,
    ceiling: Option<Arc<Guard>>,
}

impl Default for DecisionBound {
    fn default() -> Self {
        Self::new(DEFAULT_DECISION_LIMIT)
    }
}

impl DecisionBound {
    /// A bound of `limit`.
    pub const fn new(limit: Duration) -> Self {
        Self { limit }
    }

    /// The bound [`DECISION_TIMEOUT_ENV`] sets, else [`DEFAULT_DECISION_LIMIT`]. A value that is not a whole
    /// number of milliseconds keeps the default.
    pub fn from_env() -> Self {
        Self::new(limit_from(std::env::var(DECISION_TIMEOUT_ENV).ok().as_deref()))
    }

    /// How long a decision may take.
    pub const fn limit(self) -> Duration {
        self.limit
    }

    /// Decides `call` with `deciders` in a session that has accumulated `session`, on a worker thread, and waits
    /// at most the bound for it: a decision that does not finish in time is a deny (the worker is abandoned and
    /// finishes on its own). Where no thread can be started, the call is decided on this one, unbounded. A panic of
    /// the deciding thread (a bug) reaches the caller as if the call had been decided here.
    pub fn decide(self, deciders: &Deciders, call: CallInput, session: SessionState) -> Decided {
        let (done, result) = mpsc::channel();
        let worker = deciders.clone();
        let job = call.clone();
        let spawned = std::thread::Builder::new()
            .name("decide".to_owned())
            .spawn(move || {
                failpoint();
                let _ = done.send(worker.decide(&job, &session));
            });
        let handle = match spawned {
            Ok(handle) => handle,
            // Without a thread there is no bound; deciding here is still better than no decision.
            Err(_) => return deciders.decide(&call, &session),
        };
        match result.recv_timeout(self.limit) {
            Ok(decided) => decided,
            Err(RecvTimeoutError::Timeout) => self.past_the_bound(&call.tool),
            Err(RecvTimeoutError::Disconnected) => match handle.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                // The sender is dropped only by a finished or a panicking worker; a finished one sent its decision.
                Ok(()) => result
                    .try_recv()
                    .unwrap_or_else(|_| self.past_the_bound(&call.tool)),
            },
        }
    }

    /// The deny of a decision of `tool` that did not finish within the bound.
    fn past_the_bound(self, tool: &str) -> Decided {
        Decided::from_verdict(Verdict::new(
            Decision::Deny,
            format!(
                "the decision did not finish within {} ms, so `{tool}` is not allowed",
                self.limit.as_millis()
            ),
            Provenance::layer(Layer::Rules),
        ))
    }
}

impl CallInput {
    /// A call of `tool` with `args`, without hooks or tool checks.
    pub fn new(tool: impl Into<String>, args: Value) -> Self {
        Self {
            tool: tool.into(),
            args,
            ..Self::default()
        }
    }
}

impl Deciders {
    /// The guard of an agent without a parent.
    pub fn new(own: Arc<Guard>) -> Self {
        Self { own, ceiling: None }
    }

    /// The same agent as a subagent of a parent whose guard is `ceiling`.
    #[must_use]
    pub fn under(mut self, ceiling: Arc<Guard>) -> Self {
        self.ceiling = Some(ceiling);
        self
    }

    /// The agent's own guard.
    pub fn own(&self) -> &Guard {
        &self.own
    }

    /// Decides `call` in place, unbounded: the agent's own decision in the session `session`, or its parent's when
    /// that one is stricter, with the narrower of the two confinements. The parent's decision is made as in a
    /// fresh session, whose denial tracker has never tripped: the child's history never loosens its parent's
    /// limit, and the parent's session does not count its children's calls.
    pub fn decide(&self, call: &CallInput, session: &SessionState) -> Decided {
        let mine = self
            .own
            .decide_with(&call.tool, &call.args, &call.hooks, &call.checks, session);
        let Some(parent) = &self.ceiling else {
            return mine;
        };
        let theirs = parent.decide_with(
            &call.tool,
            &call.args,
            &call.hooks,
            &call.checks,
            &SessionState::default(),
        );
        let confinement = narrower(mine.confinement, theirs.confinement);
        let mut chosen = if theirs.verdict().decision > mine.verdict().decision {
            theirs
        } else {
            mine
        };
        chosen.confinement = confinement;
        chosen
    }
}

/// The bound a value of [`DECISION_TIMEOUT_ENV`] sets: whole milliseconds, else the default.
fn limit_from(value: Option<&str>) -> Duration {
    value
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .map_or(DEFAULT_DECISION_LIMIT, Duration::from_millis)
}

/// The narrower of two confinements: a child runs with no more power than its parent's decision gives, nor than
/// its own.
fn narrower(a: Option<Confinement>, b: Option<Confinement>) -> Option<Confinement> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Confinement {
            profile: a.profile.min(b.profile),
            network: a.network && b.network,
        }),
        (one, None) | (None, one) => one,
    }
}

/// Panics when [`FAILPOINT_ENV`] is `decide`, on the deciding thread.
fn failpoint() {
    if std::env::var_os(FAILPOINT_ENV).is_some_and(|v| v == "decide") {
        #[expect(
            clippy::panic,
            reason = "a panic on request, to test that one is caught and blocks the call"
        )]
        {
            panic!("failpoint `decide` reached");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_read_from_the_environment_value() {
        assert_eq!(limit_from(None), DEFAULT_DECISION_LIMIT);
        assert_eq!(limit_from(Some("250")), Duration::from_millis(250));
        assert_eq!(limit_from(Some(" 7 ")), Duration::from_millis(7));
        for bad in ["", "soon", "-5", "1.5"] {
            assert_eq!(limit_from(Some(bad)), DEFAULT_DECISION_LIMIT, "{bad}");
        }
    }
}
