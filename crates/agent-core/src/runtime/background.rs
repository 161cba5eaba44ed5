//! Background tasks: `bg_task_run` starts a cleared call in the background; its result waits in a queue for a later turn.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use agent_tool_traits::{
    InterruptBehavior, PermissionCheck, Tool, ToolContext, ToolError, ToolFuture, ToolName,
};
use serde_json::Value;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::report::BgNotification;

/// The `bg_task_run` tool: runs another tool in the background. The runtime handles its calls itself: the inner
/// call goes through the whole permission pipeline before it starts (a denied inner call is a denied
/// `bg_task_run`), `bg_task_run` returns at once with a task id, and the inner call's result reaches the model
/// as a message before a later turn ([`BgNotificationQueue`]), never inside the current one.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BgTaskRunTool;

impl BgTaskRunTool {
    /// The tool's name.
    pub(crate) const NAME: &'static str = "bg_task_run";

    /// The inner call `args` asks for: the tool's name and its arguments (an object; `{}` when absent), or why
    /// the arguments are unusable.
    pub(crate) fn inner(args: &Value) -> Result<(&str, Value), String> {
        let Some(tool) = args.get("tool").and_then(Value::as_str) else {
            return Err(
                "`bg_task_run` needs `tool`, the name of the tool to run in the background".to_owned(),
            );
        };
        if ToolName::new(tool) == ToolName::new(Self::NAME) {
            return Err("a background task cannot start another background task".to_owned());
        }
        let inner = match args.get("args") {
            None | Some(Value::Null) => Value::Object(serde_json::Map::new()),
            Some(object @ Value::Object(_)) => object.clone(),
            Some(other) => return Err(format!("`args` must be an object, not `{other}`")),
        };
        Ok((tool, inner))
    }
}

impl Tool for BgTaskRunTool {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Runs a slow tool call in the background and returns its task id at once. The call is decided like any \
         other before it starts; its result is given to you as a message before a later turn."
    }

    fn input_schema(&self) -> Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "tool": {"type": "string", "description": "the tool to run in the background"},
                "args": {"type": "object", "description": "its arguments"}
            },
            "required": ["tool"],
            "additionalProperties": false
        })
    }

    /// Unusable arguments are a tool-level deny, so that even they are decided on the one path.
    fn check_permissions(&self, args: &Value) -> Vec<PermissionCheck> {
        match Self::inner(args) {
            Ok(_) => Vec::new(),
            Err(why) => vec![PermissionCheck::deny(why)],
        }
    }

    fn call<'a>(&'a self, _args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        // Only the runtime can start a background task: it must decide the inner call first.
        Box::pin(async {
            Err(ToolError::Failed(
                "`bg_task_run` runs only inside the agent runtime".to_owned(),
            ))
        })
    }
}

/// The results of finished background tasks, until the runtime injects them before a model turn. Background
/// tasks only push here; they never touch the agent's messages. Cloning shares the queue.
#[derive(Debug, Clone, Default)]
pub struct BgNotificationQueue {
    pending: Arc<Mutex<Vec<BgNotification>>>,
}

impl BgNotificationQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a finished task's result.
    pub fn push(&self, notification: BgNotification) {
        self.lock().push(notification);
    }

    /// Removes and returns the results waiting for `session_id`, in the order the tasks finished.
    pub fn take(&self, session_id: &str) -> Vec<BgNotification> {
        let mut pending = self.lock();
        let (taken, kept) = std::mem::take(&mut *pending)
            .into_iter()
            .partition(|n| n.session_id == session_id);
        *pending = kept;
        taken
    }

    /// How many results wait for `session_id`.
    pub fn pending(&self, session_id: &str) -> usize {
        self.lock().iter().filter(|n| n.session_id == session_id).count()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<BgNotification>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One running background task.
pub(super) struct BgTask {
    pub(super) task_id: String,
    pub(super) behavior: InterruptBehavior,
    pub(super) cancel: CancellationToken,
    pub(super) handle: JoinHandle<()>,
}

/// The background tasks of a runtime, by session, and their queue.
#[derive(Default)]
pub(super) struct BgTasks {
    next: AtomicU64,
    running: Mutex<HashMap<String, Vec<BgTask>>>,
    pub(super) queue: BgNotificationQueue,
}

impl BgTasks {
    /// A fresh task id.
    pub(super) fn next_id(&self) -> String {
        format!(
            "bg-{}",
            self.next.fetch_add(1, Ordering::Relaxed).saturating_add(1)
        )
    }

    /// Keeps `task` until its session stops.
    pub(super) fn add(&self, session_id: &str, task: BgTask) {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(session_id.to_owned())
            .or_default()
            .push(task);
    }

    /// Ends the tasks of `session_id` by their interrupt behaviour: Cancel tasks are cancelled, Block tasks run to
    /// their end (a side effect is never left half done); returns when every one has finished and written its
    /// result (and audit row).
    pub(super) async fn stop(&self, session_id: &str) {
        let tasks = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session_id)
            .unwrap_or_default();
        for task in &tasks {
            match task.behavior {
                InterruptBehavior::Cancel => task.cancel.cancel(),
                InterruptBehavior::Block => {}
            }
        }
        for task in tasks {
            if let Err(error) = task.handle.await {
                tracing::warn!(task = %task.task_id, %error, "a background task stopped abnormally");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::report::CallReport;
    use crate::telemetry::DecisionSource;
    use agent_hooks::CallStatus;
    use agent_tool_traits::{Decision, Layer, Provenance, ToolCall, ToolOutput, Verdict};

    fn finished(session_id: &str, task_id: &str) -> BgNotification {
        let verdict = Verdict::new(Decision::Allow, "allowed", Provenance::layer(Layer::Rules));
        BgNotification {
            session_id: session_id.to_owned(),
            task_id: task_id.to_owned(),
            report: CallReport {
                call: ToolCall::new("c1.bg", "fetch", serde_json::json!({})),
                source: DecisionSource::of_guard_verdict(&verdict),
                verdict,
                answer: None,
                status: CallStatus::Fail,
                output: ToolOutput::error("timed out"),
                ran: None,
                persisted: None,
                contexts: Vec::new(),
                confinement: None,
                undo_held: Vec::new(),
                approver: None,
            },
        }
    }

    #[test]
    fn the_queue_gives_each_session_its_own_results_once() {
        let queue = BgNotificationQueue::new();
        queue.push(finished("a", "bg-1"));
        queue.push(finished("b", "bg-2"));
        queue.push(finished("a", "bg-3"));
        assert_eq!(queue.pending("a"), 2);
        let ids: Vec<String> = queue.take("a").into_iter().map(|n| n.task_id).collect();
        assert_eq!(ids, vec!["bg-1", "bg-3"]);
        assert_eq!(queue.pending("a"), 0);
        assert_eq!(queue.pending("b"), 1);
        let message = queue.take("b").remove(0).message();
        assert!(
            message.starts_with("[background task bg-2 `fetch` failed]"),
            "{message}"
        );
    }

    #[test]
    fn unusable_arguments_are_a_tool_level_deny() {
        let tool = BgTaskRunTool;
        assert!(
            tool.check_permissions(&serde_json::json!({"tool": "read_file"}))
                .is_empty()
        );
        for args in [
            serde_json::json!({}),
            serde_json::json!({"tool": "read_file", "args": [1]}),
            serde_json::json!({"tool": "bg_task_run", "args": {"tool": "read_file"}}),
        ] {
            let checks = tool.check_permissions(&args);
            assert_eq!(checks.len(), 1, "{args}");
            assert_eq!(checks[0].decision, Decision::Deny);
        }
    }
}
