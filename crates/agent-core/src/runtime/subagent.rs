//! The subagent host: the `subagent` tool, what it starts a child with (the parent's shared parts), and the
//! child's run inside its parent's session.

use std::sync::{Arc, Mutex, PoisonError};

use agent_decide::{Guard, GuardOptions};
use agent_hooks::{SubagentContext, SubagentStopContext};
use agent_subagent::{AgentDefinition, ChildPlan, SubagentError, SubagentRequest, plan_child};
use agent_tool_traits::{
    DecidedBy, InterruptBehavior, Source, Tool, ToolContext, ToolError, ToolFuture, ToolOutput,
};
use serde_json::{Value, json};

use super::session::Model;
use super::{Agent, Runtime};
use crate::approval::HeadlessApprover;
use crate::guard_handle::GuardHandle;
use crate::registry::ToolRegistry;
use crate::runtime_error::RuntimeError;

/// Gives the model of each subagent a `subagent` call starts. A runtime built without one has no `subagent` tool.
pub trait ChildModels: Send + Sync {
    /// The model driving the child `plan` describes, started by a call with `args` (the child's fresh messages
    /// are in `plan.messages`); `None` when no model can drive it (the call then fails).
    fn child_model(&self, plan: &ChildPlan, args: &Value) -> Option<Box<dyn Model>>;
}

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

    fn new(host: Arc<SubagentHost>) -> Self {
        Self { host: Some(host) }
    }

    /// The tool before its runtime is built (it only holds the name's place in the registry).
    pub(super) fn placeholder() -> Self {
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
            let plan = host
                .plan(&args)
                .map_err(|error| ToolError::InvalidArgs(error.to_string()))?;
            host.run_child(plan, &args, ctx).await.map(ToolOutput::ok)
        })
    }
}

impl Runtime {
    /// Gives this runtime the `subagent` tool, its children driven by the models of `models`, when its tool set
    /// keeps the tool's name (the registry holds a placeholder until the runtime's parts exist).
    pub(super) fn with_subagents(mut self, models: Arc<dyn ChildModels>) -> Self {
        if !self.registry.contains(SubagentTool::NAME) {
            return self;
        }
        let mut parent_tools = self.registry.clone();
        parent_tools.remove(SubagentTool::NAME);
        let host = Arc::new(SubagentHost {
            parent: Arc::clone(&self.agent),
            parent_tools,
            models,
        });
        self.registry
            .register(Arc::new(SubagentTool::new(Arc::clone(&host))));
        self.host = Some(host);
        self
    }

    /// The plan of the child a `subagent` call with `args` would start under this runtime (its tools, mode and
    /// messages); `None` when this runtime has no `subagent` tool.
    pub fn plan_subagent(&self, args: &Value) -> Option<Result<ChildPlan, SubagentError>> {
        Some(self.host.as_ref()?.plan(args))
    }

    /// The runtime of the child `plan` describes (for inspection: [`Runtime::decide`] on it tells what the
    /// child may do); `None` when this runtime has no `subagent` tool.
    pub fn subagent(&self, plan: &ChildPlan) -> Option<Result<Runtime, RuntimeError>> {
        Some(self.host.as_ref()?.child_runtime(plan))
    }
}

/// What a runtime's `subagent` tool starts a child with: the parent's agent, shared with the parent runtime (its
/// config, settings with the answers so far, guard, approver and services, as they are when the child starts),
/// the parent's tools, and the models.
pub(super) struct SubagentHost {
    parent: Arc<Agent>,
    /// The parent's tools without the `subagent` tool (a child never starts children of its own).
    parent_tools: ToolRegistry,
    models: Arc<dyn ChildModels>,
}

impl SubagentHost {
    /// The plan of the child a call with `args` starts: the request's agent type narrowed by the parent's mode
    /// now and its tools.
    fn plan(&self, args: &Value) -> Result<ChildPlan, SubagentError> {
        let request = SubagentRequest::from_args(args)?;
        let definition = AgentDefinition::builtin(&request.agent)?;
        let parent_mode = self.parent.guard.current().policy().mode();
        Ok(plan_child(
            parent_mode,
            &self.parent_tools.names(),
            &definition,
            &request,
        ))
    }

    /// The runtime of the child `plan` describes: the parent's rules (with the answers so far), services (hooks,
    /// output store, cancellations, metrics, audit log) and, in `bubble` mode, approver; the narrowed tools; the
    /// child's mode, with the parent's guard as a ceiling; a silent context; no `subagent` tool.
    fn child_runtime(&self, plan: &ChildPlan) -> Result<Runtime, RuntimeError> {
        let parent = &self.parent;
        let settings = parent
            .settings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let guard_options = GuardOptions {
            mode: Some((plan.mode, Source::Session)),
            ..parent.guard_options.clone()
        };
        let guard = Guard::new(&settings, &guard_options)?;
        let mut config = parent.config.clone();
        config.agent_name.clone_from(&plan.name);
        config.silent = plan.silent;
        config.mode = guard_options.mode;
        let names: Vec<&str> = plan.tools.iter().map(String::as_str).collect();
        let agent = Agent {
            config,
            guard_options,
            settings: Mutex::new(settings),
            guard: GuardHandle::new(guard),
            approver: if plan.bubble {
                Arc::clone(&parent.approver)
            } else {
                Arc::new(HeadlessApprover)
            },
            ceiling: Some(parent.guard.clone()),
            bubble: plan.bubble,
            services: Arc::clone(&parent.services),
        };
        Ok(Runtime::new(agent, self.parent_tools.restrict(&names)))
    }

    /// Runs the child `plan` describes inside the parent's session ([`SubagentHost::child_runtime`], fresh
    /// messages, its model from the `ChildModels`); the subagent start and stop hooks fire around it. Returns
    /// the child's final answer, or why it stopped.
    async fn run_child(&self, plan: ChildPlan, args: &Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let Some(mut model) = self.models.child_model(&plan, args) else {
            return Err(ToolError::Failed(format!(
                "no model can drive a `{}` subagent",
                plan.name
            )));
        };
        let child = self
            .child_runtime(&plan)
            .map_err(|error| ToolError::Failed(format!("the subagent could not start: {error}")))?;
        let task = plan
            .messages
            .iter()
            .rev()
            .find(|m| m.role == agent_subagent::ChildRole::User)
            .map(|m| m.content.clone())
            .unwrap_or_default();
        let start = SubagentContext {
            session_id: ctx.session_id.clone(),
            parent_agent: ctx.agent_name.clone(),
            agent_name: plan.name.clone(),
            task,
        };
        self.parent.services.hooks.subagent_start(&start).await;
        tracing::info!(
            session = %ctx.session_id,
            parent = %ctx.agent_name,
            agent = %plan.name,
            mode = %plan.mode,
            tools = ?plan.tools,
            bubble = plan.bubble,
            "a subagent starts"
        );
        let ended = child.run_loop(&ctx.session_id, model.as_mut()).await;
        // The child's background tasks end with it (their audit rows are written as they finish).
        child.background.stop(&ctx.session_id).await;
        let outcome = ended.answer.clone().unwrap_or_else(|| ended.reason.clone());
        let stop = SubagentStopContext {
            session_id: ctx.session_id.clone(),
            parent_agent: ctx.agent_name.clone(),
            agent_name: plan.name.clone(),
            steps: u32::try_from(ended.steps.len()).unwrap_or(u32::MAX),
            outcome: outcome.clone(),
        };
        self.parent.services.hooks.subagent_stop(&stop).await;
        if self.parent.services.cancel.is_cancelled(&ctx.session_id) {
            return Err(ToolError::Cancelled);
        }
        // The parent sees what its child did, call by call, as the child's audit rows record it.
        let mut calls = Vec::new();
        for report in ended.steps.iter().flat_map(|step| &step.calls) {
            let provenance = &report.verdict.provenance;
            let step = provenance.step.map_or("finding", DecidedBy::as_str);
            calls.push(format!(
                "[{}] {} {:?} by {}/{step}",
                report.call.id, report.call.name, report.status, provenance.layer
            ));
        }
        Ok(format!(
            "subagent `{}` ({} step(s), {}): {outcome}\ncalls: {}",
            plan.name,
            ended.steps.len(),
            ended.reason,
            if calls.is_empty() {
                "none".to_owned()
            } else {
                calls.join("; ")
            }
        ))
    }
}
