//! What the runtime reports: one call, one step, a finished background call, the limits that acted, a session.
//!
//! These are the types the session loop, the step execution, the background tasks and compaction share; this file
//! imports none of them, so none of them imports another through it.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use agent_hooks::{CallStatus, MetricsSnapshot};
use agent_tool_traits::{Confinement, ToolCall, ToolOutput, Verdict};

use crate::approval::ApprovalAnswer;
use crate::telemetry::DecisionSource;

/// One call of a step, as it was decided and ran.
#[derive(Debug, Clone)]
pub struct CallReport {
    /// The call with the arguments that were decided and run (after any hook rewrote them).
    pub call: ToolCall,
    /// The final decision and who made it.
    pub verdict: Verdict,
    /// Who stood behind the decision (telemetry's `source`).
    pub source: DecisionSource,
    /// The answer to an ask, when there was one.
    pub answer: Option<ApprovalAnswer>,
    /// How the call ended.
    pub status: CallStatus,
    /// What the model sees: after PostToolUse hooks and persistence.
    pub output: ToolOutput,
    /// When the tool started and finished; `None` for a call that never ran.
    pub ran: Option<(Instant, Instant)>,
    /// The file holding the full result, when it was too long to keep inline.
    pub persisted: Option<PathBuf>,
    /// Contexts PreToolUse hooks added for the model.
    pub contexts: Vec<String>,
    /// The kernel sandbox an allowed call runs under (shell calls), as its decision assumed.
    pub confinement: Option<Confinement>,
    /// The places whose ignored data its allow counted on `agent-guard undo`'s snapshots holding (the decision's
    /// `Contained::undo_held`).
    pub undo_held: Vec<PathBuf>,
    /// Who answered the ask, when there was one and somebody (or a hook) answered it.
    pub approver: Option<agent_hooks::Approver>,
}

impl CallReport {
    /// How long the tool ran (zero when it did not).
    pub fn elapsed(&self) -> Duration {
        self.ran.map_or(Duration::ZERO, |(started, finished)| {
            finished.saturating_duration_since(started)
        })
    }
}

/// The calls of one step of the loop.
#[derive(Debug, Clone)]
pub struct StepRecord {
    /// The step, from 1.
    pub step: u32,
    /// Its calls, in the order the model made them.
    pub calls: Vec<CallReport>,
}

/// A finished background call, waiting to be shown to the model.
#[derive(Debug, Clone)]
pub struct BgNotification {
    /// The session that started it.
    pub session_id: String,
    /// The id `bg_task_run` returned (`bg-1`, ...).
    pub task_id: String,
    /// The inner call as it was decided and ran (after the PostToolUse hooks and persistence).
    pub report: CallReport,
}

impl BgNotification {
    /// The user message injected before the next model turn.
    pub fn message(&self) -> String {
        let outcome = if self.report.output.is_error {
            "failed"
        } else {
            "finished"
        };
        format!(
            "[background task {} `{}` {outcome}]\n{}",
            self.task_id, self.report.call.name, self.report.output.content
        )
    }
}

/// Which runtime limit acted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    /// A call repeated too often in a row got an error result instead of running.
    Duplicate,
    /// Over the soft token limit: a nudge was injected.
    Nudge,
    /// At the hard token limit the context was compacted: the old steps replaced by a summary (a success when
    /// the estimate fell under the soft limit, else a failure counted by the compaction circuit breaker).
    Compaction,
    /// The hard token limit forced a final answer.
    HardLimit,
    /// Steps without new information forced a final answer.
    DiminishingReturns,
    /// The step limit forced a final answer without tools.
    MaxSteps,
}

impl LimitKind {
    /// A short name for traces.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Duplicate => "duplicate call",
            Self::Nudge => "token soft limit",
            Self::Compaction => "context compaction",
            Self::HardLimit => "token hard limit",
            Self::DiminishingReturns => "diminishing returns",
            Self::MaxSteps => "max steps",
        }
    }
}

/// A runtime limit that acted during a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitEvent {
    /// The step it acted at.
    pub step: u32,
    /// Which limit.
    pub kind: LimitKind,
    /// What happened, or the message injected for the model.
    pub message: String,
}

/// How a session went.
#[derive(Debug, Clone)]
pub struct SessionReport {
    /// The session.
    pub session_id: String,
    /// Every step with its calls.
    pub steps: Vec<StepRecord>,
    /// The model's final answer, when it gave one.
    pub answer: Option<String>,
    /// Why the session stopped: `completed`, `max steps (8): …`, `token hard limit: …`, `cancelled by the user`.
    pub reason: String,
    /// Every runtime limit that acted, in order.
    pub limits: Vec<LimitEvent>,
    /// Whether the user cancelled the run.
    pub cancelled: bool,
    /// What the session-stop hooks reported (an audit log that could not write every row).
    pub stop_error: Option<String>,
    /// Calls, errors, denials and latencies.
    pub metrics: MetricsSnapshot,
    /// The background calls that finished, in order: first those injected before a turn, then those that ended
    /// at the session's stop (cancelled or awaited) and were never shown to the model.
    pub background: Vec<BgNotification>,
}

impl SessionReport {
    /// Every call of every step, in order.
    pub fn calls(&self) -> impl Iterator<Item = &CallReport> {
        self.steps.iter().flat_map(|step| &step.calls)
    }
}
