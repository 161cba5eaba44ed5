//! The subagent host: what a runtime's `subagent` tool starts a child with, and the child's run inside its
//! parent's session.

use std::sync::{Arc, Mutex, PoisonError};

use agent_hooks::{AuditLogHook, HookRegistry, MetricsHook, SubagentContext, SubagentStopContext};
use agent_rules::{PermissionMode, Settings};
use agent_subagent::{ChildPlan, SubagentError};
use agent_tool_traits::{CancelRegistry, DecidedBy, Source, ToolContext, ToolError};
use serde_json::Value;

use super::Runtime;
use super::background::BgTasks;
use super::config::RuntimeConfig;
use super::session::Model;
use crate::approval::{Approver, HeadlessApprover};
use crate::guard::{Guard, GuardOptions};
use crate::guard_handle::GuardHandle;
use crate::persist::OutputStore;
use crate::registry::ToolRegistry;
use crate::runtime_error::RuntimeError;

/// Gives the model of each subagent a `subagent` call starts. A runtime built without one has no `subagent` tool.
pub trait ChildModels: Send + Sync {
    /// The model driving the child `plan` describes, started by a call with `args` (the child's fresh messages
    /// are in `plan.messages`); `None` when no model can drive it (the call then fails).
    fn child_model(&self, plan: &ChildPlan, args: &Value) -> Option<Box<dyn Model>>;
}

impl Runtime {
    /// The plan of the child a `subagent` call with `args` would start under this runtime (its tools, mode and
    /// messages); `None` when this runtime has no `subagent` tool.
    pub fn plan_subagent(&self, args: &Value) -> Option<Result<ChildPlan, SubagentError>> {
        let host = self.host.as_ref()?;
        Some(crate::tools::plan_subagent(host, args))
    }

    /// The runtime of the child `plan` describes (for inspection: [`Runtime::decide`] on it tells what the
    /// child may do); `None` when this runtime has no `subagent` tool.
    pub fn subagent(&self, plan: &ChildPlan) -> Option<Result<Runtime, RuntimeError>> {
        Some(self.host.as_ref()?.child_runtime(plan))
    }
}

/// What a runtime's `subagent` tool needs of its parent to start a child.
pub(crate) struct SubagentHost {
    pub(super) config: RuntimeConfig,
    pub(super) guard_options: GuardOptions,
    pub(super) settings: Arc<Mutex<Settings>>,
    pub(super) guard: GuardHandle,
    /// The parent's tools without the `subagent` tool.
    pub(super) registry: ToolRegistry,
    pub(super) hooks: HookRegistry,
    pub(super) approver: Arc<dyn Approver>,
    pub(super) store: OutputStore,
    pub(super) cancel: CancelRegistry,
    pub(super) metrics: Arc<MetricsHook>,
    pub(super) models: Arc<dyn ChildModels>,
    pub(super) audit: Option<AuditLogHook>,
}

impl SubagentHost {
    /// The parent's mode now.
    pub(crate) fn parent_mode(&self) -> PermissionMode {
        self.guard.current().policy().mode()
    }

    /// The parent's tools (without the `subagent` tool).
    pub(crate) fn parent_tools(&self) -> Vec<&str> {
        self.registry.names()
    }

    /// The runtime of the child `plan` describes: the parent's rules (with the answers so far), hooks, approver
    /// (in `bubble` mode) and output store; the narrowed tools; the child's mode, with the parent's guard as a
    /// ceiling; a silent context; no `subagent` tool.
    pub(crate) fn child_runtime(&self, plan: &ChildPlan) -> Result<Runtime, RuntimeError> {
        let settings = self
            .settings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let guard_options = GuardOptions {
            mode: Some((plan.mode, Source::Session)),
            ..self.guard_options.clone()
        };
        let guard = Guard::new(&settings, &guard_options)?;
        let names: Vec<&str> = plan.tools.iter().map(String::as_str).collect();
        let config = RuntimeConfig {
            agent_name: plan.name.clone(),
            silent: plan.silent,
            mode: guard_options.mode,
            ..self.config.clone()
        };
        Ok(Runtime {
            config,
            guard_options,
            settings: Arc::new(Mutex::new(settings)),
            guard: GuardHandle::new(guard),
            registry: self.registry.restrict(&names),
            hooks: self.hooks.clone(),
            approver: if plan.bubble {
                Arc::clone(&self.approver)
            } else {
                Arc::new(HeadlessApprover)
            },
            store: self.store.clone(),
            cancel: self.cancel.clone(),
            metrics: Arc::clone(&self.metrics),
            tokens: Mutex::default(),
            duplicates: Mutex::default(),
            ceiling: Some(self.guard.clone()),
            bubble: plan.bubble,
            host: None,
            background: BgTasks::default(),
            audit: self.audit.clone(),
        })
    }

    /// Runs the child `plan` describes inside the parent's session ([`SubagentHost::child_runtime`], fresh
    /// messages, its model from the `ChildModels`); the subagent start and stop hooks fire around it. Returns
    /// the child's final answer, or why it stopped.
    pub(crate) async fn run_child(
        &self,
        plan: ChildPlan,
        args: &Value,
        ctx: &ToolContext,
    ) -> Result<String, ToolError> {
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
        self.hooks.subagent_start(&start).await;
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
        self.hooks.subagent_stop(&stop).await;
        if self.cancel.is_cancelled(&ctx.session_id) {
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
