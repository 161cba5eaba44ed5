//! The execution phase of a step: partition into batches, run with timeouts, cancellation and sibling abort.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use agent_tool_traits::{
    CancelRegistry, Confinement, InterruptBehavior, ProxyGrant, Tool, ToolContext, ToolError, ToolOutput,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// How often the shared registry of cancelled runs is polled while tools run (well under the 250 ms promise).
pub(crate) const CANCEL_POLL: Duration = Duration::from_millis(50);

/// One call cleared to run.
pub(crate) struct Runnable {
    /// Its index in the step.
    pub(crate) index: usize,
    pub(crate) tool: Arc<dyn Tool>,
    pub(crate) args: Value,
    /// Whether it may run beside the other concurrency-safe calls next to it.
    pub(crate) concurrent: bool,
    /// The kernel sandbox its decision assumed.
    pub(crate) confinement: Option<Confinement>,
    /// The places whose ignored data its allow counted on the snapshots holding.
    pub(crate) undo_held: Vec<std::path::PathBuf>,
    /// What its sandbox's proxy lets through beyond the settings' domains, and the limit of the session's taint.
    pub(crate) proxy: ProxyGrant,
    /// The call's id.
    pub(crate) call_id: String,
}

/// What running a call produced.
pub(crate) struct Ran {
    pub(crate) index: usize,
    pub(crate) result: Result<ToolOutput, ToolError>,
    pub(crate) started: Instant,
    pub(crate) finished: Instant,
}

/// Consecutive concurrency-safe calls form one parallel batch; every other call is a batch of its own.
pub(crate) fn partition(calls: Vec<Runnable>) -> Vec<Vec<Runnable>> {
    let mut batches: Vec<Vec<Runnable>> = Vec::new();
    for call in calls {
        match batches.last_mut() {
            Some(batch) if call.concurrent && batch.iter().all(|c| c.concurrent) => batch.push(call),
            _ => batches.push(vec![call]),
        }
    }
    batches
}

/// Runs one batch: every call at once (a batch of one is simply one call), each under `timeout`. A failing call
/// whose tool `causes_sibling_abort` cancels the batch: its Cancel siblings stop, its Block siblings finish.
pub(crate) async fn run_batch(
    batch: Vec<Runnable>,
    context: &ToolContext,
    session: &CancellationToken,
    timeout: Duration,
) -> Vec<Ran> {
    let siblings = session.child_token();
    let mut tasks = Vec::with_capacity(batch.len());
    for call in batch {
        let ctx = ToolContext {
            cancelled: Arc::default(),
            confinement: call.confinement,
            undo_held: call.undo_held.clone(),
            proxy: call.proxy.clone(),
            call_id: call.call_id.clone(),
            ..context.clone()
        };
        let siblings = siblings.clone();
        let index = call.index;
        let task = tokio::spawn(async move {
            let started = Instant::now();
            let result = run_one(call.tool.as_ref(), call.args, &ctx, &siblings, timeout).await;
            let failed = result.as_ref().map_or(true, |output| output.is_error);
            if failed && call.tool.causes_sibling_abort() {
                siblings.cancel();
            }
            Ran {
                index,
                result,
                started,
                finished: Instant::now(),
            }
        });
        tasks.push((index, task));
    }
    let mut ran = Vec::with_capacity(tasks.len());
    for (index, task) in tasks {
        let now = Instant::now();
        ran.push(task.await.unwrap_or_else(|error| Ran {
            index,
            result: Err(ToolError::Failed(format!("the tool stopped abnormally: {error}"))),
            started: now,
            finished: now,
        }));
    }
    ran
}

/// Runs one call under `timeout`. A Cancel tool is dropped as soon as `cancel` fires; a Block tool sees the flag in
/// its context and is awaited to the end.
pub(crate) async fn run_one(
    tool: &dyn Tool,
    args: Value,
    ctx: &ToolContext,
    cancel: &CancellationToken,
    timeout: Duration,
) -> Result<ToolOutput, ToolError> {
    let call = tokio::time::timeout(timeout, tool.call(args, ctx));
    tokio::pin!(call);
    let timed_out = |_| {
        ToolError::Failed(format!(
            "timed out after {} s (AGENT_TOOL_TIMEOUT_SECS)",
            timeout.as_secs_f32()
        ))
    };
    match tool.interrupt_behavior() {
        InterruptBehavior::Cancel => tokio::select! {
            biased;
            () = cancel.cancelled() => {
                ctx.cancelled.store(true, Ordering::Relaxed);
                Err(ToolError::Cancelled)
            }
            result = &mut call => result.unwrap_or_else(|e| Err(timed_out(e))),
        },
        InterruptBehavior::Block => {
            tokio::select! {
                result = &mut call => return result.unwrap_or_else(|e| Err(timed_out(e))),
                () = cancel.cancelled() => ctx.cancelled.store(true, Ordering::Relaxed),
            }
            call.await.unwrap_or_else(|e| Err(timed_out(e)))
        }
    }
}

/// Cancels `token` once `session_id` appears in the registry of cancelled runs; ends when the token is cancelled.
pub(crate) async fn poll_cancel(registry: CancelRegistry, session_id: String, token: CancellationToken) {
    loop {
        if registry.is_cancelled(&session_id) {
            token.cancel();
        }
        tokio::select! {
            () = token.cancelled() => return,
            () = tokio::time::sleep(CANCEL_POLL) => {}
        }
    }
}
