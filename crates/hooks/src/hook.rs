//! The `AgentHook` trait, the context of every event and the actions a hook can return.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

use agent_tool_traits::{ToolCall, ToolOutput, Verdict};
use serde_json::Value;

use crate::HookError;

/// The future a hook returns. Boxed so that `dyn AgentHook` works without an extra macro crate.
pub type HookFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a PreToolUse hook wants done with a call.
#[derive(Debug, Clone, PartialEq)]
pub enum PreToolUseAction {
    /// No opinion; the next hook runs.
    Continue,
    /// Do not run the call (step 3 of docs/rules.md); the first Block ends the chain.
    Block {
        /// Why, for the user and the model.
        reason: String,
    },
    /// Replace the arguments (the caller checks the new ones with the rules again) and optionally add context for
    /// the model.
    MutateInput {
        /// The new arguments.
        args: Value,
        /// Text added to the model's context.
        context: Option<String>,
    },
    /// Ask the user before running the call (step 4 of docs/rules.md).
    PermissionRequired {
        /// What the user is asked.
        message: String,
    },
    /// Allow the call (step 7 of docs/rules.md). Only external command hooks emit it, as the coding agent's protocol lets a
    /// hook allow; it never overrides a deny or an ask of steps 1–4.
    Allow {
        /// Why.
        reason: String,
    },
}

/// What a PostToolUse hook wants done with a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostToolUseAction {
    /// Keep the content.
    Continue,
    /// Replace the content the model sees (redaction, annotations).
    MutateOutput {
        /// The new content.
        content: String,
    },
}

/// A hook's answer to an ask that no user can answer (headless runs): the coding agent's PermissionRequest event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionAnswer {
    /// Run the call.
    Allow {
        /// Why.
        reason: String,
    },
    /// Do not run the call.
    Deny {
        /// Why, for the model.
        reason: String,
    },
}

/// How a call ended, as PostToolUse sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallStatus {
    /// The call ran and succeeded.
    Ok,
    /// The call ran and failed (or was cancelled or timed out).
    Fail,
    /// The call was decided `deny` (or an ask was refused) and never ran.
    Denied,
}

impl CallStatus {
    /// The upper-case name stored in the audit log: `OK`, `FAIL` or `DENIED`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "OK",
            Self::Fail => "FAIL",
            Self::Denied => "DENIED",
        }
    }
}

/// A session (one run of the agent) starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionContext {
    /// The session's identifier.
    pub session_id: String,
    /// `lead` for the main agent.
    pub agent_name: String,
    /// The working directory of the run.
    pub cwd: PathBuf,
    /// The permission mode (`default`, `acceptEdits`, `plan`, …).
    pub permission_mode: String,
}

/// A call is about to be decided and run.
#[derive(Debug, Clone, PartialEq)]
pub struct PreToolUseContext {
    /// The session's identifier.
    pub session_id: String,
    /// `lead` or the subagent's name.
    pub agent_name: String,
    /// The step of the ReAct loop.
    pub step: u32,
    /// The call as the model asked for it (or as an earlier hook rewrote it).
    pub call: ToolCall,
    /// The working directory of the run.
    pub cwd: PathBuf,
    /// The permission mode (`default`, `acceptEdits`, `plan`, …).
    pub permission_mode: String,
}

/// A call got its decision and, unless denied, ran. Fires for every decided call, denied ones included, so that
/// the audit log has one row per call.
#[derive(Debug, Clone, PartialEq)]
pub struct PostToolUseContext {
    /// The session's identifier.
    pub session_id: String,
    /// `lead` or the subagent's name.
    pub agent_name: String,
    /// The step of the ReAct loop.
    pub step: u32,
    /// The call as it ran (after any MutateInput).
    pub call: ToolCall,
    /// The working directory of the run.
    pub cwd: PathBuf,
    /// The permission mode the call was decided in (`default`, `acceptEdits`, `plan`, …).
    pub permission_mode: String,
    /// The result (for a denied call: the denial the model sees); in a chain, the content of the previous hook.
    pub output: ToolOutput,
    /// How the call ended.
    pub status: CallStatus,
    /// The decision and who made it.
    pub verdict: Verdict,
    /// How long the call ran (zero for a denied call).
    pub elapsed: Duration,
    /// The kernel sandbox an allowed shell call ran under (`read-only`, `workspace-write with network`).
    pub sandbox: Option<String>,
    /// Who answered the ask, when the call was asked about (an [`Approver`](crate::Approver) as text).
    pub approver: Option<String>,
}

/// A step of the ReAct loop is complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepContext {
    /// The session's identifier.
    pub session_id: String,
    /// `lead` or the subagent's name.
    pub agent_name: String,
    /// The step that completed, from 1.
    pub step: u32,
    /// How many tool calls the step made.
    pub tool_calls: u32,
}

/// A session stops, normally or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStopContext {
    /// The session's identifier.
    pub session_id: String,
    /// `lead` for the main agent.
    pub agent_name: String,
    /// How many steps ran.
    pub steps: u32,
    /// Why it stopped, in a few words (`completed`, `max steps`, `cancelled by the user`, an error).
    pub reason: String,
    /// Whether the user cancelled the run.
    pub cancelled: bool,
}

/// A subagent starts inside a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentContext {
    /// The session's identifier.
    pub session_id: String,
    /// The agent that started the subagent.
    pub parent_agent: String,
    /// The subagent's name.
    pub agent_name: String,
    /// The task it was given.
    pub task: String,
}

/// A subagent stops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentStopContext {
    /// The session's identifier.
    pub session_id: String,
    /// The agent that started the subagent.
    pub parent_agent: String,
    /// The subagent's name.
    pub agent_name: String,
    /// How many steps it ran.
    pub steps: u32,
    /// Its final answer, or why it stopped.
    pub outcome: String,
}

/// The context window is about to be compacted, or has been.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactContext {
    /// The session's identifier.
    pub session_id: String,
    /// `lead` or the subagent's name.
    pub agent_name: String,
    /// `auto` (budget reached) or `manual`.
    pub trigger: String,
    /// Tokens before compaction.
    pub tokens_before: u64,
    /// Tokens after compaction; `None` before it ran.
    pub tokens_after: Option<u64>,
}

/// A hook of the agent's lifecycle. Every event has a default that does nothing (or `Continue`), so a hook
/// implements only what it cares about. Hooks run in registration order.
pub trait AgentHook: Send + Sync {
    /// A short name for logs, errors and the `blocked` field of the outcome.
    fn name(&self) -> &str;

    /// A session starts.
    fn on_session_start<'a>(&'a self, _ctx: &'a SessionContext) -> HookFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }

    /// A call is about to be decided.
    fn pre_tool_use<'a>(&'a self, _ctx: &'a PreToolUseContext) -> HookFuture<'a, PreToolUseAction> {
        Box::pin(std::future::ready(PreToolUseAction::Continue))
    }

    /// A call was decided `ask` and there is no user to ask (headless); `None` leaves the ask unanswered, which
    /// the caller turns into a deny.
    fn on_permission_request<'a>(
        &'a self,
        _ctx: &'a PreToolUseContext,
        _message: &'a str,
    ) -> HookFuture<'a, Option<PermissionAnswer>> {
        Box::pin(std::future::ready(None))
    }

    /// A call was decided and, unless denied, ran.
    fn post_tool_use<'a>(&'a self, _ctx: &'a PostToolUseContext) -> HookFuture<'a, PostToolUseAction> {
        Box::pin(std::future::ready(PostToolUseAction::Continue))
    }

    /// A step of the loop is complete.
    fn on_step_complete<'a>(&'a self, _ctx: &'a StepContext) -> HookFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }

    /// A session stops; an error here is reported to the caller after every hook ran.
    fn on_session_stop<'a>(&'a self, _ctx: &'a SessionStopContext) -> HookFuture<'a, Result<(), HookError>> {
        Box::pin(std::future::ready(Ok(())))
    }

    /// A subagent starts.
    fn on_subagent_start<'a>(&'a self, _ctx: &'a SubagentContext) -> HookFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }

    /// A subagent stops.
    fn on_subagent_stop<'a>(&'a self, _ctx: &'a SubagentStopContext) -> HookFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }

    /// The context is about to be compacted.
    fn on_pre_compact<'a>(&'a self, _ctx: &'a CompactContext) -> HookFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }

    /// The context was compacted.
    fn on_post_compact<'a>(&'a self, _ctx: &'a CompactContext) -> HookFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }
}
