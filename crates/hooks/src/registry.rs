//! The ordered list of hooks and the rules that combine their answers: PreToolUse answers as the crate documentation
//! says, PostToolUse rewrites chained (each hook sees the previous content), a PermissionRequest answered by the
//! first deny, else the first allow, and every hook of a session's stop run even when one fails.

use std::fmt;
use std::sync::Arc;

use agent_tool_traits::HookOutcome;
use serde_json::Value;

use crate::{
    AgentHook, CompactContext, HookError, PermissionAnswer, PostToolUseAction, PostToolUseContext,
    PreToolUseAction, PreToolUseContext, SessionContext, SessionStopContext, StepContext, SubagentContext,
    SubagentStopContext,
};

/// The combined answer of every PreToolUse hook for one call.
#[derive(Debug, Clone, PartialEq)]
pub struct PreToolUseOutcome {
    /// What the hooks said about the call's permission, as the resolution reads it: the first Block (later hooks
    /// did not run), the messages of every PermissionRequired, the reason of the first Allow (external hooks only).
    pub permission: HookOutcome,
    /// The final arguments: those of the last MutateInput, or the call's own.
    pub args: Value,
    /// Whether a hook replaced the arguments; the caller then checks `args` with the rules again.
    pub mutated: bool,
    /// The contexts of every MutateInput, in hook order.
    pub contexts: Vec<String>,
}

/// The hooks of an agent, in registration order. Cloning is cheap and shares the list, so a subagent inherits its
/// parent's hooks; registering on a clone copies the list first and leaves the original unchanged.
#[derive(Clone, Default)]
pub struct HookRegistry {
    hooks: Arc<Vec<Arc<dyn AgentHook>>>,
}

impl fmt::Debug for HookRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.hooks.iter().map(|hook| hook.name()))
            .finish()
    }
}

impl HookRegistry {
    /// A registry without hooks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `hook` after the ones already registered.
    pub fn register(&mut self, hook: Arc<dyn AgentHook>) {
        Arc::make_mut(&mut self.hooks).push(hook);
    }

    /// How many hooks are registered.
    pub fn len(&self) -> usize {
        self.hooks.len()
    }

    /// Whether no hook is registered.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// The names of the hooks, in order.
    pub fn names(&self) -> Vec<&str> {
        self.hooks.iter().map(|hook| hook.name()).collect()
    }

    /// Runs the PreToolUse hooks in order. The first Block ends the chain (later hooks do not run); the last
    /// MutateInput wins and every context accumulates; PermissionRequired messages accumulate; the first Allow
    /// is remembered. A hook after a MutateInput sees the rewritten call, so a validating hook registered after a
    /// rewriting one checks what will actually run.
    pub async fn run_pre_tool_use(&self, ctx: &PreToolUseContext) -> PreToolUseOutcome {
        let mut outcome = PreToolUseOutcome {
            permission: HookOutcome::default(),
            args: ctx.call.args.clone(),
            mutated: false,
            contexts: Vec::new(),
        };
        // Cloned only once a hook rewrites the input.
        let mut rewritten: Option<PreToolUseContext> = None;
        for hook in self.hooks.iter() {
            let current = rewritten.as_ref().unwrap_or(ctx);
            match hook.pre_tool_use(current).await {
                PreToolUseAction::Continue => {}
                PreToolUseAction::Block { reason } => {
                    tracing::debug!(hook = hook.name(), tool = %ctx.call.name, %reason, "hook blocked the call");
                    outcome.permission.block = Some((hook.name().to_owned(), reason));
                    return outcome;
                }
                PreToolUseAction::MutateInput { args, context } => {
                    outcome.mutated = true;
                    outcome.contexts.extend(context);
                    let mut next = current.clone();
                    next.call.args = args.clone();
                    rewritten = Some(next);
                    outcome.args = args;
                }
                PreToolUseAction::PermissionRequired { message } => outcome.permission.asks.push(message),
                PreToolUseAction::Allow { reason } => {
                    if outcome.permission.allow.is_none() {
                        let reason = if reason.is_empty() {
                            format!("allowed by hook `{}`", hook.name())
                        } else {
                            reason
                        };
                        outcome.permission.allow = Some(reason);
                    }
                }
            }
        }
        outcome
    }

    /// Asks the hooks to answer an ask that no user can answer (headless). The first deny ends the chain and wins;
    /// otherwise the first allow answers; `None` when no hook answered (the caller then denies). Returns the
    /// answering hook's name with its answer.
    pub async fn run_permission_request(
        &self,
        ctx: &PreToolUseContext,
        message: &str,
    ) -> Option<(String, PermissionAnswer)> {
        let mut allowed = None;
        for hook in self.hooks.iter() {
            match hook.on_permission_request(ctx, message).await {
                None => {}
                Some(deny @ PermissionAnswer::Deny { .. }) => return Some((hook.name().to_owned(), deny)),
                Some(allow @ PermissionAnswer::Allow { .. }) => {
                    allowed.get_or_insert_with(|| (hook.name().to_owned(), allow));
                }
            }
        }
        allowed
    }

    /// Runs the PostToolUse hooks in order and returns the final content: each MutateOutput replaces the content,
    /// and the next hook sees the replaced one.
    pub async fn run_post_tool_use(&self, ctx: &PostToolUseContext) -> String {
        let mut rewritten: Option<PostToolUseContext> = None;
        for hook in self.hooks.iter() {
            let current = rewritten.as_ref().unwrap_or(ctx);
            match hook.post_tool_use(current).await {
                PostToolUseAction::Continue => {}
                PostToolUseAction::MutateOutput { content } => {
                    let mut next = current.clone();
                    next.output.content = content;
                    rewritten = Some(next);
                }
            }
        }
        rewritten.map_or_else(|| ctx.output.content.clone(), |last| last.output.content)
    }

    /// Runs every `on_session_start`. The hooks of this event cannot fail today; the `Result` keeps the lifecycle
    /// calls uniform.
    pub async fn session_start(&self, ctx: &SessionContext) -> Result<(), HookError> {
        for hook in self.hooks.iter() {
            hook.on_session_start(ctx).await;
        }
        Ok(())
    }

    /// Runs every `on_step_complete`. The hooks of this event cannot fail today; the `Result` keeps the lifecycle
    /// calls uniform.
    pub async fn step_complete(&self, ctx: &StepContext) -> Result<(), HookError> {
        for hook in self.hooks.iter() {
            hook.on_step_complete(ctx).await;
        }
        Ok(())
    }

    /// Runs every `on_session_stop`, all of them even when one fails, and returns the failures named by hook.
    pub async fn session_stop(&self, ctx: &SessionStopContext) -> Result<(), HookError> {
        let mut errors = Vec::new();
        for hook in self.hooks.iter() {
            if let Err(source) = hook.on_session_stop(ctx).await {
                tracing::warn!(hook = hook.name(), error = %source, "session stop hook failed");
                errors.push(HookError::Hook {
                    hook: hook.name().to_owned(),
                    source: Box::new(source),
                });
            }
        }
        if errors.len() > 1 {
            return Err(HookError::Many(errors));
        }
        errors.pop().map_or(Ok(()), Err)
    }

    /// Runs every `on_subagent_start`.
    pub async fn subagent_start(&self, ctx: &SubagentContext) {
        for hook in self.hooks.iter() {
            hook.on_subagent_start(ctx).await;
        }
    }

    /// Runs every `on_subagent_stop`.
    pub async fn subagent_stop(&self, ctx: &SubagentStopContext) {
        for hook in self.hooks.iter() {
            hook.on_subagent_stop(ctx).await;
        }
    }

    /// Runs every `on_pre_compact`.
    pub async fn pre_compact(&self, ctx: &CompactContext) {
        for hook in self.hooks.iter() {
            hook.on_pre_compact(ctx).await;
        }
    }

    /// Runs every `on_post_compact`.
    pub async fn post_compact(&self, ctx: &CompactContext) {
        for hook in self.hooks.iter() {
            hook.on_post_compact(ctx).await;
        }
    }
}
