//! The built-in hook that counts calls, errors, denials and per-tool latency.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::{
    AgentHook, CallStatus, HookError, HookFuture, PostToolUseAction, PostToolUseContext, SessionContext,
    SessionStopContext, StepContext,
};

/// How often (in completed steps) the hook logs a summary.
const SUMMARY_EVERY_STEPS: u32 = 3;

/// Counters of one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ToolMetrics {
    /// Calls that ran (OK or FAIL).
    pub count: u64,
    /// Calls that ran and failed.
    pub errors: u64,
    /// Calls that were denied and never ran.
    pub denied: u64,
    /// Total time of the calls that ran.
    pub total: Duration,
    /// Longest call.
    pub max: Duration,
}

/// A copy of the counters at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MetricsSnapshot {
    /// The last session that started.
    pub session_id: Option<String>,
    /// Every decided call, denied ones included.
    pub calls: u64,
    /// Calls that ran and failed.
    pub errors: u64,
    /// Calls that were denied.
    pub denied: u64,
    /// Completed steps.
    pub steps: u64,
    /// Per-tool counters, by tool name.
    pub tools: BTreeMap<String, ToolMetrics>,
}

impl MetricsSnapshot {
    /// One line for the log.
    pub fn summary(&self) -> String {
        let slowest = self
            .tools
            .iter()
            .max_by_key(|(_, tool)| tool.max)
            .map(|(name, tool)| format!(", slowest `{name}` {} ms", tool.max.as_millis()))
            .unwrap_or_default();
        format!(
            "{} calls, {} errors, {} denied over {} steps{slowest}",
            self.calls, self.errors, self.denied, self.steps
        )
    }
}

/// Counts every decided call; logs a summary through `tracing` every three steps and at session stop.
/// Cloning shares the counters.
#[derive(Debug, Clone, Default)]
pub struct MetricsHook {
    data: Arc<Mutex<MetricsSnapshot>>,
}

impl MetricsHook {
    /// A hook with zeroed counters.
    pub fn new() -> Self {
        Self::default()
    }

    /// The counters now.
    pub fn snapshot(&self) -> MetricsSnapshot {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MetricsSnapshot> {
        // A poisoned lock only means another thread panicked while counting; the counters are still usable.
        self.data.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl AgentHook for MetricsHook {
    fn name(&self) -> &str {
        "metrics"
    }

    fn on_session_start<'a>(&'a self, ctx: &'a SessionContext) -> HookFuture<'a, ()> {
        self.lock().session_id = Some(ctx.session_id.clone());
        Box::pin(std::future::ready(()))
    }

    fn post_tool_use<'a>(&'a self, ctx: &'a PostToolUseContext) -> HookFuture<'a, PostToolUseAction> {
        {
            let mut guard = self.lock();
            // Borrow the fields apart, so the per-tool entry and the totals can change together.
            let data = &mut *guard;
            data.calls += 1;
            let tool = data.tools.entry(ctx.call.name.clone()).or_default();
            match ctx.status {
                CallStatus::Ok | CallStatus::Fail => {
                    tool.count += 1;
                    tool.total = tool.total.saturating_add(ctx.elapsed);
                    tool.max = tool.max.max(ctx.elapsed);
                }
                CallStatus::Denied => tool.denied += 1,
            }
            match ctx.status {
                CallStatus::Ok => {}
                CallStatus::Fail => {
                    tool.errors += 1;
                    data.errors += 1;
                }
                CallStatus::Denied => data.denied += 1,
            }
        }
        Box::pin(std::future::ready(PostToolUseAction::Continue))
    }

    fn on_step_complete<'a>(&'a self, ctx: &'a StepContext) -> HookFuture<'a, ()> {
        let summary = {
            let mut data = self.lock();
            data.steps += 1;
            (ctx.step > 0 && ctx.step.is_multiple_of(SUMMARY_EVERY_STEPS)).then(|| data.summary())
        };
        if let Some(summary) = summary {
            tracing::info!(session_id = %ctx.session_id, agent = %ctx.agent_name, step = ctx.step, "metrics: {summary}");
        }
        Box::pin(std::future::ready(()))
    }

    fn on_session_stop<'a>(&'a self, ctx: &'a SessionStopContext) -> HookFuture<'a, Result<(), HookError>> {
        let summary = self.lock().summary();
        tracing::info!(
            session_id = %ctx.session_id,
            reason = %ctx.reason,
            cancelled = ctx.cancelled,
            "metrics at stop: {summary}"
        );
        Box::pin(std::future::ready(Ok(())))
    }
}
