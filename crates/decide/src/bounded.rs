//! The one bounded decision entry: a call decided by an agent's guards (its own and, for a subagent, its parent's)
//! within a time bound, and a deny past it. The decision runs on a worker thread and is waited for
//! ([`DecisionBound::decide`]), or, in a process that decides one call and ends (`agent-guard check`), on the
//! calling thread under a timer the process arms ([`DecisionBound::decide_timed`]): starting threads costs such a
//! process more than the decision does.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use agent_rules::SessionState;
use agent_tool_traits::{Confinement, Decision, HookOutcome, Layer, PermissionCheck, Provenance, Verdict};
use serde_json::Value;

use crate::decided::Decided;
use crate::guard::Guard;

/// How long one decision may take unless [`DECISION_TIMEOUT_ENV`] says otherwise. A coding agent gives up on a
/// hook after its own timeout and then runs the call without it, and hostile input can make the shell parser run
/// away: a decision past the bound must end in a deny, well before anyone else gives up.
pub const DEFAULT_DECISION_LIMIT: Duration = Duration::from_secs(5);

/// The environment variable that sets the bound, in milliseconds (`AGENT_GUARD_DECISION_TIMEOUT_MS=200`).
pub const DECISION_TIMEOUT_ENV: &str = "AGENT_GUARD_DECISION_TIMEOUT_MS";

/// A timer over the calling thread's decision ([`DecisionBound::decide_timed`]): armed with the bound and the deny
/// past it before the decision starts, disarmed once it has finished. When it expires it answers that deny itself
/// and ends the process, so the caller never sees a decision past the bound.
pub trait DecisionTimer {
    /// Arms the timer: if it is not disarmed within `limit`, `past_the_bound` is the answer.
    fn arm(&mut self, limit: Duration, past_the_bound: &Decided);
    /// Disarms the timer. Once this has returned, the timer has not fired and will not.
    fn disarm(&mut self);
}

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
        let submitted = workers().run(Box::new(move || {
            let decided = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                failpoint();
                worker.decide(&job, &session)
            }));
            let _ = done.send(decided);
        }));
        if let Err(job) = submitted {
            // Without a thread there is no bound; deciding here is still better than no decision.
            job();
        }
        match result.recv_timeout(self.limit) {
            Ok(Ok(decided)) => decided,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            // A worker that ends without sending has been lost with its job; neither is a decision.
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                self.past_the_bound(&call.tool)
            }
        }
    }

    /// Decides `call` like [`DecisionBound::decide`], on this thread, with `timer` armed with the bound and the
    /// deny past it: for a process that decides one call and ends, where the timer ends the process with that deny
    /// instead of leaving a worker running. A panic of the decision is this thread's.
    pub fn decide_timed(
        self,
        timer: &mut impl DecisionTimer,
        deciders: &Deciders,
        call: &CallInput,
        session: &SessionState,
    ) -> Decided {
        timer.arm(self.limit, &self.past_the_bound(&call.tool));
        failpoint();
        let decided = deciders.decide(call, session);
        timer.disarm();
        decided
    }

    /// The deny of a decision of `tool` that did not finish within the bound.
    pub fn past_the_bound(self, tool: &str) -> Decided {
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
        let mine = self.own.decide_in_session(call, session);
        let Some(parent) = &self.ceiling else {
            return mine;
        };
        let theirs = parent.decide_in_session(call, &SessionState::default());
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

/// One decision to make on a worker.
type Job = Box<dyn FnOnce() + Send>;

/// The threads decisions run on, kept for the life of the process: a server decides thousands of calls a second,
/// and starting a thread for each cost more than most decisions. Every job gets a worker of its own at once: a
/// submission reserves an idle worker or starts a new one, so a decision never waits behind another (one that runs
/// past its bound keeps its worker until it ends, and the next job starts a new worker).
struct Workers {
    jobs: Mutex<mpsc::Sender<Job>>,
    queue: Arc<Mutex<mpsc::Receiver<Job>>>,
    /// Workers waiting for a job that no submission has reserved.
    idle: Arc<AtomicUsize>,
}

fn workers() -> &'static Workers {
    static WORKERS: OnceLock<Workers> = OnceLock::new();
    WORKERS.get_or_init(|| {
        let (jobs, queue) = mpsc::channel();
        Workers {
            jobs: Mutex::new(jobs),
            queue: Arc::new(Mutex::new(queue)),
            idle: Arc::new(AtomicUsize::new(0)),
        }
    })
}

impl Workers {
    /// Hands `job` to an idle worker, or to a new one when none is idle; gives it back when no worker can take it.
    fn run(&self, job: Job) -> Result<(), Job> {
        let reserved = self
            .idle
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok();
        if !reserved {
            let queue = Arc::clone(&self.queue);
            let idle = Arc::clone(&self.idle);
            let started = std::thread::Builder::new()
                .name("decide".to_owned())
                .spawn(move || work(&queue, &idle));
            if started.is_err() {
                return Err(job);
            }
        }
        self.jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send(job)
            .map_err(|unsent| unsent.0)
    }
}

/// A worker's life: the job it was started for, then, idle, whatever job comes next.
fn work(queue: &Mutex<mpsc::Receiver<Job>>, idle: &AtomicUsize) {
    loop {
        let job = queue.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok(job) = job else { return };
        job();
        idle.fetch_add(1, Ordering::AcqRel);
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

    /// A job never waits behind another, however long that one runs, and the workers are used again.
    #[test]
    fn every_job_has_a_worker_at_once() {
        let (release, held) = mpsc::channel::<()>();
        let (done, finished) = mpsc::channel::<&str>();
        let slow_done = done.clone();
        assert!(
            workers()
                .run(Box::new(move || {
                    let _ = held.recv();
                    let _ = slow_done.send("slow");
                }))
                .is_ok()
        );
        for _ in 0..50 {
            let quick = done.clone();
            let job: Job = Box::new(move || {
                let _ = quick.send("quick");
            });
            assert!(workers().run(job).is_ok());
            assert_eq!(finished.recv_timeout(Duration::from_secs(5)), Ok("quick"));
            // The worker is idle again once it has counted itself so.
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while workers().idle.load(Ordering::Acquire) == 0 && std::time::Instant::now() < deadline {
                std::thread::yield_now();
            }
        }
        release.send(()).unwrap();
        assert_eq!(finished.recv_timeout(Duration::from_secs(5)), Ok("slow"));
        // The fifty quick jobs ran one after another on workers used again, not on fifty new ones.
        let idle = workers().idle.load(Ordering::Acquire);
        assert!((1..=4).contains(&idle), "{idle} idle workers");
    }
}
