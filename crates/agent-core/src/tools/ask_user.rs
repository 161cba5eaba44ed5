//! `ask_user`: a question to the user, impossible in a silent context.

use std::sync::Arc;
use std::time::Duration;

use agent_tool_traits::{InterruptBehavior, Tool, ToolContext, ToolError, ToolFuture, ToolOutput};
use serde_json::{Value, json};

use crate::approval::Approver;
use crate::tools::str_arg;

/// How long a question waits for an answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(300);

/// Asks the user a `question` through the approver and returns the answer. In a silent context (a subagent)
/// there is no user: the call fails. Blocks a cancellation (the answer channel must not be dropped half way).
#[derive(Clone)]
pub(crate) struct AskUserTool {
    approver: Arc<dyn Approver>,
}

impl std::fmt::Debug for AskUserTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AskUserTool").finish_non_exhaustive()
    }
}

impl AskUserTool {
    /// The tool, asking through `approver`.
    pub(crate) fn new(approver: Arc<dyn Approver>) -> Self {
        Self { approver }
    }
}

impl Tool for AskUserTool {
    fn name(&self) -> &str {
        "ask_user"
    }

    fn description(&self) -> &str {
        "Asks the user a question and returns the answer."
    }

    fn input_schema(&self) -> Value {
        json!({"type": "object", "required": ["question"], "properties": {"question": {"type": "string"}}})
    }

    fn interrupt_behavior(&self) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            if ctx.silent {
                return Err(ToolError::Failed(
                    "ask_user is not available in a silent context: there is no user to ask".to_owned(),
                ));
            }
            let question = str_arg(&args, &["question"])?;
            match tokio::time::timeout(ANSWER_TIMEOUT, self.approver.answer_question(question)).await {
                Ok(Some(answer)) => Ok(ToolOutput::ok(answer)),
                Ok(None) => Err(ToolError::Failed("the user gave no answer".to_owned())),
                Err(_) => Err(ToolError::Failed(format!(
                    "no answer within {} s",
                    ANSWER_TIMEOUT.as_secs()
                ))),
            }
        })
    }
}
