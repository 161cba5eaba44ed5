//! External command hooks with the coding agent's protocol: JSON on stdin, a decision on stdout, exit code 2 blocks.
//! This file is the hook itself (which commands run for an event, the sessions' working directories and modes);
//! `settings.rs` reads the `hooks` sections, `process.rs` runs one command, `protocol.rs` holds the JSON in and out.

mod process;
mod protocol;
mod settings;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};

pub use settings::{CommandSpec, HookEvent, HookSettings, MatcherGroup};

use crate::{
    AgentHook, CompactContext, HookError, HookFuture, PermissionAnswer, PostToolUseAction,
    PostToolUseContext, PreToolUseAction, PreToolUseContext, SessionContext, SessionStopContext,
    SubagentContext, SubagentStopContext,
};
use process::{Run, run_command};

/// Runs the commands of a [`HookSettings`] for the events of the agent. Matching commands of one event run
/// concurrently; their answers combine with the strictest first: a block, then asks, then the last rewritten
/// input, then an allow. A command that fails, times out or prints something unreadable makes no decision.
#[derive(Debug)]
pub struct CommandHook {
    settings: Arc<HookSettings>,
    // The working directory and mode of each session, for the events whose context does not carry them.
    sessions: Mutex<HashMap<String, (PathBuf, String)>>,
}

impl CommandHook {
    /// A hook running the commands of `settings`.
    pub fn new(settings: HookSettings) -> Self {
        Self {
            settings: Arc::new(settings),
            sessions: Mutex::default(),
        }
    }

    /// A hook built from a settings document; see [`HookSettings::from_json`].
    pub fn from_json(value: &Value) -> Result<Self, HookError> {
        HookSettings::from_json(value).map(Self::new)
    }

    /// The settings it runs.
    pub fn settings(&self) -> &HookSettings {
        &self.settings
    }

    fn remember(&self, session_id: &str, cwd: &Path, mode: &str) {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if sessions
            .get(session_id)
            .is_none_or(|(known_cwd, known_mode)| known_cwd != cwd || known_mode != mode)
        {
            sessions.insert(session_id.to_owned(), (cwd.to_path_buf(), mode.to_owned()));
        }
    }

    fn session(&self, session_id: &str) -> (PathBuf, String) {
        let sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        sessions.get(session_id).cloned().unwrap_or_else(|| {
            (
                std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
                "default".to_owned(),
            )
        })
    }

    async fn run_all(&self, event: HookEvent, subject: &str, input: Value, cwd: &Path) -> Vec<Run> {
        let commands = self.settings.commands(event, subject);
        if commands.is_empty() {
            return Vec::new();
        }
        let input = Arc::new(input.to_string().into_bytes());
        let mut tasks = tokio::task::JoinSet::new();
        for (index, spec) in commands.into_iter().enumerate() {
            let (spec, input, cwd) = (spec.clone(), Arc::clone(&input), cwd.to_path_buf());
            tasks.spawn(async move { (index, run_command(&spec, &input, &cwd).await) });
        }
        let mut runs = Vec::new();
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok(run) => runs.push(run),
                Err(error) => tracing::warn!(event = %event, %error, "hook command task failed"),
            }
        }
        runs.sort_by_key(|(index, _)| *index);
        runs.into_iter().map(|(_, run)| run).collect()
    }

    /// Runs the commands of a lifecycle event as notifications: their output decides nothing, failures are only
    /// logged.
    async fn run_lifecycle(
        &self,
        event: HookEvent,
        subject: &str,
        session_id: &str,
        fields: Map<String, Value>,
    ) {
        let (cwd, mode) = self.session(session_id);
        let input = protocol::lifecycle_input(event, fields, session_id, &cwd, &mode);
        for run in self.run_all(event, subject, input, &cwd).await {
            run.log(event);
        }
    }
}

impl AgentHook for CommandHook {
    fn name(&self) -> &str {
        "command-hooks"
    }

    fn on_session_start<'a>(&'a self, ctx: &'a SessionContext) -> HookFuture<'a, ()> {
        Box::pin(async move {
            self.remember(&ctx.session_id, &ctx.cwd, &ctx.permission_mode);
            let fields = protocol::session_start_fields(ctx);
            self.run_lifecycle(HookEvent::SessionStart, "startup", &ctx.session_id, fields)
                .await;
        })
    }

    fn pre_tool_use<'a>(&'a self, ctx: &'a PreToolUseContext) -> HookFuture<'a, PreToolUseAction> {
        Box::pin(async move {
            self.remember(&ctx.session_id, &ctx.cwd, &ctx.permission_mode);
            let input = protocol::pre_tool_use_input(ctx);
            let runs = self
                .run_all(HookEvent::PreToolUse, &ctx.call.name, input, &ctx.cwd)
                .await;
            protocol::combine_pre(runs.iter().filter_map(Run::pre_decision))
        })
    }

    fn on_permission_request<'a>(
        &'a self,
        ctx: &'a PreToolUseContext,
        message: &'a str,
    ) -> HookFuture<'a, Option<PermissionAnswer>> {
        Box::pin(async move {
            let input = protocol::permission_request_input(ctx, message);
            let runs = self
                .run_all(HookEvent::PermissionRequest, &ctx.call.name, input, &ctx.cwd)
                .await;
            protocol::combine_permission(runs.iter().filter_map(Run::permission_answer))
        })
    }

    fn post_tool_use<'a>(&'a self, ctx: &'a PostToolUseContext) -> HookFuture<'a, PostToolUseAction> {
        Box::pin(async move {
            let (cwd, mode) = self.session(&ctx.session_id);
            let input = protocol::post_tool_use_input(ctx, &cwd, &mode);
            let runs = self
                .run_all(HookEvent::PostToolUse, &ctx.call.name, input, &cwd)
                .await;
            protocol::combine_post(&runs, &ctx.output.content)
        })
    }

    fn on_session_stop<'a>(&'a self, ctx: &'a SessionStopContext) -> HookFuture<'a, Result<(), HookError>> {
        Box::pin(async move {
            let fields = protocol::session_end_fields(ctx);
            self.run_lifecycle(HookEvent::SessionEnd, &ctx.reason, &ctx.session_id, fields)
                .await;
            self.sessions
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&ctx.session_id);
            Ok(())
        })
    }

    fn on_subagent_start<'a>(&'a self, ctx: &'a SubagentContext) -> HookFuture<'a, ()> {
        Box::pin(async move {
            let fields = protocol::subagent_start_fields(ctx);
            self.run_lifecycle(HookEvent::SubagentStart, &ctx.agent_name, &ctx.session_id, fields)
                .await;
        })
    }

    fn on_subagent_stop<'a>(&'a self, ctx: &'a SubagentStopContext) -> HookFuture<'a, ()> {
        Box::pin(async move {
            let fields = protocol::subagent_stop_fields(ctx);
            self.run_lifecycle(HookEvent::SubagentStop, &ctx.agent_name, &ctx.session_id, fields)
                .await;
        })
    }

    fn on_pre_compact<'a>(&'a self, ctx: &'a CompactContext) -> HookFuture<'a, ()> {
        Box::pin(async move {
            let fields = protocol::pre_compact_fields(ctx);
            self.run_lifecycle(HookEvent::PreCompact, &ctx.trigger, &ctx.session_id, fields)
                .await;
        })
    }

    fn on_post_compact<'a>(&'a self, ctx: &'a CompactContext) -> HookFuture<'a, ()> {
        Box::pin(async move {
            let fields = protocol::post_compact_fields(ctx);
            self.run_lifecycle(HookEvent::PostCompact, &ctx.trigger, &ctx.session_id, fields)
                .await;
        })
    }
}
