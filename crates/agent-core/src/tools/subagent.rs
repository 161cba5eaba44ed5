//! `subagent` (`Task`/`Agent`): starts a child agent with a narrowed tool set in a silent context.

use std::sync::Arc;

use agent_subagent::{AgentDefinition, ChildPlan, SubagentError, SubagentRequest, plan_child};
use agent_tool_traits::{InterruptBehavior, Tool, ToolContext, ToolError, ToolFuture, ToolOutput};
use serde_json::{Value, json};

use crate::runtime::SubagentHost;

/// Starts a subagent (`explore` or `general`) on a task and returns its final answer. The child gets fresh
/// messages, the parent's rules and hooks, the parent's tools narrowed to its type's (and the call's `tools`), a
/// mode never looser than the parent's, and no user: its asks are denied, or go to the parent's approver in
/// `bubble` mode. A cancellation of the parent's run stops the child.
#[derive(Clone)]
pub struct SubagentTool {
    host: Option<Arc<SubagentHost>>,
}

impl std::fmt::Debug for SubagentTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubagentTool")
            .field("ready", &self.host.is_some())
            .finish_non_exhaustive()
    }
}

impl SubagentTool {
    /// The tool's name (`Task` and `Agent` are its aliases).
    pub const NAME: &'static str = "subagent";

    pub(crate) fn new(host: Arc<SubagentHost>) -> Self {
        Self { host: Some(host) }
    }

    /// The tool before its runtime is built (it only holds the name's place in the registry).
    pub(crate) fn placeholder() -> Self {
        Self { host: None }
    }
}

impl Tool for SubagentTool {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn description(&self) -> &str {
        "Starts a subagent on a task (`explore`: read-only; `general`: the parent's tools) and returns its answer."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "required": ["prompt"],
            "properties": {
                "subagent_type": {"type": "string", "enum": ["explore", "general"]},
                "prompt": {"type": "string"},
                "tools": {"type": "array", "items": {"type": "string"}},
                "mode": {"type": "string"}
            }
        })
    }

    fn interrupt_behavior(&self) -> InterruptBehavior {
        InterruptBehavior::Cancel
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let Some(host) = &self.host else {
                return Err(ToolError::Failed("subagents are not available here".to_owned()));
            };
            let plan =
                plan_subagent(host, &args).map_err(|error| ToolError::InvalidArgs(error.to_string()))?;
            host.run_child(plan, &args, ctx).await.map(ToolOutput::ok)
        })
    }
}

/// The plan of the child a call with `args` starts under `host`'s parent.
pub(crate) fn plan_subagent(host: &SubagentHost, args: &Value) -> Result<ChildPlan, SubagentError> {
    let request = SubagentRequest::from_args(args)?;
    let definition = AgentDefinition::builtin(&request.agent)?;
    Ok(plan_child(
        host.parent_mode(),
        &host.parent_tools(),
        &definition,
        &request,
    ))
}
