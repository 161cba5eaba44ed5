//! External command hooks with the coding agent's protocol: JSON on stdin, a decision on stdout, exit code 2 blocks.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use regex::Regex;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use crate::{
    AgentHook, CompactContext, HookError, HookFuture, PermissionAnswer, PostToolUseAction,
    PostToolUseContext, PreToolUseAction, PreToolUseContext, SessionContext, SessionStopContext,
    SubagentContext, SubagentStopContext,
};

/// The timeout of a command that does not set one, as in the coding agent.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest timeout a settings file may ask for; longer values are a load error rather than a hang.
const MAX_COMMAND_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// At most this much of a command's stdout or stderr is kept; the rest is read and discarded, so a chatty hook
/// neither blocks on a full pipe nor grows memory.
const OUTPUT_CAP: u64 = 1 << 20;

/// The exit code with which a command blocks the call (stderr is the reason).
const BLOCK_EXIT_CODE: i32 = 2;

/// An event of the coding agent's hook settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HookEvent {
    /// Before a call is decided; the command may decide.
    PreToolUse,
    /// After a call; the command may add to the result.
    PostToolUse,
    /// A session starts.
    SessionStart,
    /// A session ends.
    SessionEnd,
    /// A subagent starts.
    SubagentStart,
    /// A subagent stops.
    SubagentStop,
    /// The context is about to be compacted.
    PreCompact,
    /// The context was compacted.
    PostCompact,
    /// The main agent finished answering (accepted in settings, not fired by this crate).
    Stop,
    /// A notification to the user (accepted in settings, not fired by this crate).
    Notification,
    /// The user submitted a prompt (accepted in settings, not fired by this crate).
    UserPromptSubmit,
    /// An ask has no user to answer it (headless); the command may allow or deny.
    PermissionRequest,
}

impl HookEvent {
    /// Every event, in settings order.
    pub const ALL: [Self; 12] = [
        Self::PreToolUse,
        Self::PostToolUse,
        Self::SessionStart,
        Self::SessionEnd,
        Self::SubagentStart,
        Self::SubagentStop,
        Self::PreCompact,
        Self::PostCompact,
        Self::Stop,
        Self::Notification,
        Self::UserPromptSubmit,
        Self::PermissionRequest,
    ];

    /// The name used in settings files and in `hook_event_name`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::SessionStart => "SessionStart",
            Self::SessionEnd => "SessionEnd",
            Self::SubagentStart => "SubagentStart",
            Self::SubagentStop => "SubagentStop",
            Self::PreCompact => "PreCompact",
            Self::PostCompact => "PostCompact",
            Self::Stop => "Stop",
            Self::Notification => "Notification",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::PermissionRequest => "PermissionRequest",
        }
    }

    /// The event named `name` in a settings file.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|event| event.as_str() == name)
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One `{"type": "command", "command": …, "timeout": …}` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    /// The shell command, run as `sh -c COMMAND`.
    pub command: String,
    /// How long it may run before it is killed (and makes no decision).
    pub timeout: Duration,
}

/// One `{"matcher": …, "hooks": [...]}` entry: the commands that run for the tools the matcher selects.
#[derive(Debug, Clone)]
pub struct MatcherGroup {
    /// The matcher as written; empty or `*` selects every tool.
    pub matcher: String,
    regex: Option<Regex>,
    /// The commands, in order.
    pub commands: Vec<CommandSpec>,
}

impl MatcherGroup {
    /// Whether the group applies to `subject` (a tool name, or the trigger of a lifecycle event). A tool matches
    /// under either of its names (`Bash` and `run_bash`), so settings written for the coding agent keep working.
    pub fn matches(&self, subject: &str) -> bool {
        match &self.regex {
            None => true,
            Some(regex) => {
                regex.is_match(subject) || aliases(subject).iter().any(|alias| regex.is_match(alias))
            }
        }
    }
}

/// The `hooks` section of one or more settings files.
#[derive(Debug, Clone, Default)]
pub struct HookSettings {
    groups: BTreeMap<HookEvent, Vec<MatcherGroup>>,
}

impl HookSettings {
    /// Reads the `hooks` section of a settings document (`{"hooks": {"PreToolUse": [{"matcher": "Bash|Write",
    /// "hooks": [{"type": "command", "command": "…", "timeout": 60}]}]}}`). A document without `hooks` has none.
    /// Every entry that cannot be used is an error naming it: an unknown event, a matcher that is not a regex, a
    /// hook type other than `command`, an empty command, a timeout that is not a positive number of seconds.
    pub fn from_json(value: &Value) -> Result<Self, HookError> {
        let Some(document) = value.as_object() else {
            return Err(bad("$", "expected a JSON object"));
        };
        let Some(hooks) = document.get("hooks") else {
            return Ok(Self::default());
        };
        let Some(hooks) = hooks.as_object() else {
            return Err(bad("hooks", "expected an object of events"));
        };
        let mut settings = Self::default();
        for (name, groups) in hooks {
            let entry = format!("hooks.{name}");
            let event =
                HookEvent::parse(name).ok_or_else(|| bad(&entry, format!("unknown hook event `{name}`")))?;
            let Some(groups) = groups.as_array() else {
                return Err(bad(&entry, "expected an array of matcher groups"));
            };
            for (index, group) in groups.iter().enumerate() {
                let parsed = parse_group(group, &format!("{entry}[{index}]"))?;
                settings.groups.entry(event).or_default().push(parsed);
            }
        }
        Ok(settings)
    }

    /// Adds the hooks of `other` after these (the hooks of every settings file run).
    pub fn merge(&mut self, other: Self) {
        for (event, groups) in other.groups {
            self.groups.entry(event).or_default().extend(groups);
        }
    }

    /// Whether no command is configured.
    pub fn is_empty(&self) -> bool {
        self.groups
            .values()
            .all(|groups| groups.iter().all(|group| group.commands.is_empty()))
    }

    /// The matcher groups of `event`, in order.
    pub fn groups(&self, event: HookEvent) -> &[MatcherGroup] {
        self.groups.get(&event).map_or(&[], Vec::as_slice)
    }

    /// The commands of `event` whose matcher selects `subject`, in order.
    pub fn commands(&self, event: HookEvent, subject: &str) -> Vec<&CommandSpec> {
        self.groups(event)
            .iter()
            .filter(|group| group.matches(subject))
            .flat_map(|group| &group.commands)
            .collect()
    }
}

fn bad(entry: &str, reason: impl Into<String>) -> HookError {
    HookError::Settings {
        entry: entry.to_owned(),
        reason: reason.into(),
    }
}

fn parse_group(group: &Value, entry: &str) -> Result<MatcherGroup, HookError> {
    let Some(group) = group.as_object() else {
        return Err(bad(entry, "expected an object with `matcher` and `hooks`"));
    };
    let matcher = match group.get("matcher") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(matcher)) => matcher.clone(),
        Some(_) => return Err(bad(&format!("{entry}.matcher"), "expected a string")),
    };
    let regex = match matcher.trim() {
        "" | "*" => None,
        // Anchored, so that a plain name matches exactly that tool (`Write` is not `NotebookWrite`).
        pattern => Some(Regex::new(&format!("^(?:{pattern})$")).map_err(|error| {
            bad(
                &format!("{entry}.matcher"),
                format!("`{pattern}` is not a regex: {error}"),
            )
        })?),
    };
    let Some(hooks) = group.get("hooks").and_then(Value::as_array) else {
        return Err(bad(&format!("{entry}.hooks"), "expected an array of hooks"));
    };
    let commands = hooks
        .iter()
        .enumerate()
        .map(|(index, hook)| parse_command(hook, &format!("{entry}.hooks[{index}]")))
        .collect::<Result<_, _>>()?;
    Ok(MatcherGroup {
        matcher,
        regex,
        commands,
    })
}

fn parse_command(hook: &Value, entry: &str) -> Result<CommandSpec, HookError> {
    let Some(hook) = hook.as_object() else {
        return Err(bad(entry, "expected an object with `type` and `command`"));
    };
    match hook.get("type").and_then(Value::as_str) {
        Some("command") => {}
        Some(other) => {
            return Err(bad(
                &format!("{entry}.type"),
                format!("unsupported hook type `{other}`"),
            ));
        }
        None => return Err(bad(&format!("{entry}.type"), "expected `command`")),
    }
    let command = match hook.get("command").and_then(Value::as_str) {
        Some(command) if !command.trim().is_empty() => command.to_owned(),
        _ => return Err(bad(&format!("{entry}.command"), "expected a non-empty string")),
    };
    let timeout = match hook.get("timeout") {
        None | Some(Value::Null) => DEFAULT_COMMAND_TIMEOUT,
        Some(value) => value
            .as_f64()
            .filter(|secs| *secs > 0.0)
            .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
            .filter(|timeout| *timeout <= MAX_COMMAND_TIMEOUT)
            .ok_or_else(|| {
                bad(
                    &format!("{entry}.timeout"),
                    format!("`{value}` is not a positive number of seconds up to a day"),
                )
            })?,
    };
    Ok(CommandSpec { command, timeout })
}

/// The other names of a tool (docs/rules.md: `Bash`≡`run_bash`, `Read`≡`read_file`, …).
fn aliases(name: &str) -> &'static [&'static str] {
    match name {
        "Bash" => &["run_bash"],
        "run_bash" => &["Bash"],
        "Read" => &["read_file"],
        "read_file" => &["Read"],
        "Write" => &["file_write"],
        "file_write" => &["Write"],
        "Edit" | "MultiEdit" => &["file_edit"],
        "file_edit" => &["Edit", "MultiEdit"],
        "Glob" => &["glob_files"],
        "glob_files" => &["Glob"],
        "Grep" => &["grep_files"],
        "grep_files" => &["Grep"],
        "Task" | "Agent" => &["subagent"],
        "subagent" => &["Task", "Agent"],
        _ => &[],
    }
}

/// The name a script written for the coding agent expects in `tool_name` (`Bash` for `run_bash`).
fn protocol_tool_name(name: &str) -> &str {
    match name {
        "run_bash" | "read_file" | "file_write" | "file_edit" | "glob_files" | "grep_files" | "subagent" => {
            aliases(name).first().copied().unwrap_or(name)
        }
        _ => name,
    }
}

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

    async fn run_lifecycle(
        &self,
        event: HookEvent,
        subject: &str,
        session_id: &str,
        mut input: Map<String, Value>,
    ) {
        let (cwd, mode) = self.session(session_id);
        input.insert("session_id".to_owned(), json!(session_id));
        input.insert("cwd".to_owned(), json!(cwd));
        input.insert("permission_mode".to_owned(), json!(mode));
        input.insert("hook_event_name".to_owned(), json!(event.as_str()));
        // Lifecycle commands are notifications: their output decides nothing, failures are only logged.
        for run in self.run_all(event, subject, Value::Object(input), &cwd).await {
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
            let input = Map::from_iter([
                ("source".to_owned(), json!("startup")),
                ("agent_name".to_owned(), json!(ctx.agent_name)),
            ]);
            self.run_lifecycle(HookEvent::SessionStart, "startup", &ctx.session_id, input)
                .await;
        })
    }

    fn pre_tool_use<'a>(&'a self, ctx: &'a PreToolUseContext) -> HookFuture<'a, PreToolUseAction> {
        Box::pin(async move {
            self.remember(&ctx.session_id, &ctx.cwd, &ctx.permission_mode);
            let input = json!({
                "session_id": ctx.session_id,
                "cwd": ctx.cwd,
                "permission_mode": ctx.permission_mode,
                "hook_event_name": HookEvent::PreToolUse.as_str(),
                "tool_name": protocol_tool_name(&ctx.call.name),
                "tool_input": ctx.call.args,
                "tool_use_id": ctx.call.id,
                "agent_name": ctx.agent_name,
            });
            let runs = self
                .run_all(HookEvent::PreToolUse, &ctx.call.name, input, &ctx.cwd)
                .await;
            combine_pre(runs.iter().filter_map(|run| run.pre_decision()))
        })
    }

    fn on_permission_request<'a>(
        &'a self,
        ctx: &'a PreToolUseContext,
        message: &'a str,
    ) -> HookFuture<'a, Option<PermissionAnswer>> {
        Box::pin(async move {
            let input = json!({
                "session_id": ctx.session_id,
                "cwd": ctx.cwd,
                "permission_mode": ctx.permission_mode,
                "hook_event_name": HookEvent::PermissionRequest.as_str(),
                "tool_name": protocol_tool_name(&ctx.call.name),
                "tool_input": ctx.call.args,
                "tool_use_id": ctx.call.id,
                "message": message,
                "agent_name": ctx.agent_name,
            });
            let runs = self
                .run_all(HookEvent::PermissionRequest, &ctx.call.name, input, &ctx.cwd)
                .await;
            let answers: Vec<PermissionAnswer> = runs.iter().filter_map(Run::permission_answer).collect();
            // The strictest answer wins: one deny among several commands denies.
            let deny = answers
                .iter()
                .find(|answer| matches!(answer, PermissionAnswer::Deny { .. }))
                .cloned();
            deny.or_else(|| answers.into_iter().next())
        })
    }

    fn post_tool_use<'a>(&'a self, ctx: &'a PostToolUseContext) -> HookFuture<'a, PostToolUseAction> {
        Box::pin(async move {
            let (cwd, mode) = self.session(&ctx.session_id);
            let input = json!({
                "session_id": ctx.session_id,
                "cwd": cwd,
                "permission_mode": mode,
                "hook_event_name": HookEvent::PostToolUse.as_str(),
                "tool_name": protocol_tool_name(&ctx.call.name),
                "tool_input": ctx.call.args,
                "tool_use_id": ctx.call.id,
                "tool_response": {
                    "content": ctx.output.content,
                    "is_error": ctx.output.is_error,
                    "status": ctx.status.as_str(),
                    "decision": ctx.verdict.decision.as_str(),
                },
                "agent_name": ctx.agent_name,
            });
            let runs = self
                .run_all(HookEvent::PostToolUse, &ctx.call.name, input, &cwd)
                .await;
            let mut content = ctx.output.content.clone();
            let mut changed = false;
            for run in &runs {
                changed |= run.apply_post(&mut content);
            }
            if changed {
                PostToolUseAction::MutateOutput { content }
            } else {
                PostToolUseAction::Continue
            }
        })
    }

    fn on_session_stop<'a>(&'a self, ctx: &'a SessionStopContext) -> HookFuture<'a, Result<(), HookError>> {
        Box::pin(async move {
            let input = Map::from_iter([
                ("reason".to_owned(), json!(ctx.reason)),
                ("agent_name".to_owned(), json!(ctx.agent_name)),
            ]);
            self.run_lifecycle(HookEvent::SessionEnd, &ctx.reason, &ctx.session_id, input)
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
            let input = Map::from_iter([
                ("agent_name".to_owned(), json!(ctx.agent_name)),
                ("parent_agent".to_owned(), json!(ctx.parent_agent)),
                ("task".to_owned(), json!(ctx.task)),
            ]);
            self.run_lifecycle(HookEvent::SubagentStart, &ctx.agent_name, &ctx.session_id, input)
                .await;
        })
    }

    fn on_subagent_stop<'a>(&'a self, ctx: &'a SubagentStopContext) -> HookFuture<'a, ()> {
        Box::pin(async move {
            let input = Map::from_iter([
                ("agent_name".to_owned(), json!(ctx.agent_name)),
                ("parent_agent".to_owned(), json!(ctx.parent_agent)),
                ("outcome".to_owned(), json!(ctx.outcome)),
            ]);
            self.run_lifecycle(HookEvent::SubagentStop, &ctx.agent_name, &ctx.session_id, input)
                .await;
        })
    }

    fn on_pre_compact<'a>(&'a self, ctx: &'a CompactContext) -> HookFuture<'a, ()> {
        Box::pin(async move {
            let input = Map::from_iter([
                ("trigger".to_owned(), json!(ctx.trigger)),
                ("agent_name".to_owned(), json!(ctx.agent_name)),
            ]);
            self.run_lifecycle(HookEvent::PreCompact, &ctx.trigger, &ctx.session_id, input)
                .await;
        })
    }

    fn on_post_compact<'a>(&'a self, ctx: &'a CompactContext) -> HookFuture<'a, ()> {
        Box::pin(async move {
            let input = Map::from_iter([
                ("trigger".to_owned(), json!(ctx.trigger)),
                ("agent_name".to_owned(), json!(ctx.agent_name)),
                ("tokens_before".to_owned(), json!(ctx.tokens_before)),
                ("tokens_after".to_owned(), json!(ctx.tokens_after)),
            ]);
            self.run_lifecycle(HookEvent::PostCompact, &ctx.trigger, &ctx.session_id, input)
                .await;
        })
    }
}

/// How one command ended.
#[derive(Debug)]
enum Run {
    /// It exited (`code` is `None` when a signal ended it).
    Exited {
        command: String,
        code: Option<i32>,
        stdout: String,
        stderr: String,
    },
    /// It ran past its timeout and was killed with its process group.
    TimedOut { command: String, timeout: Duration },
    /// It could not be started.
    Unstarted { command: String, error: std::io::Error },
}

impl Run {
    fn log(&self, event: HookEvent) {
        match self {
            Self::Exited {
                command,
                code: Some(0),
                ..
            } => {
                tracing::debug!(event = %event, %command, "hook command done");
            }
            Self::Exited {
                command,
                code,
                stderr,
                ..
            } => {
                tracing::warn!(event = %event, %command, ?code, stderr = %stderr.trim(), "hook command failed: no decision");
            }
            Self::TimedOut { command, timeout } => {
                tracing::warn!(event = %event, %command, ?timeout, "hook command timed out and was killed: no decision");
            }
            Self::Unstarted { command, error } => {
                tracing::warn!(event = %event, %command, %error, "hook command could not start: no decision");
            }
        }
    }

    /// The PreToolUse decision of this run, if it made one.
    fn pre_decision(&self) -> Option<PreToolUseAction> {
        self.outcome(HookEvent::PreToolUse, "blocked", parse_pre_output, |reason| {
            PreToolUseAction::Block { reason }
        })
    }

    /// The PermissionRequest answer of this run, if it gave one.
    fn permission_answer(&self) -> Option<PermissionAnswer> {
        self.outcome(
            HookEvent::PermissionRequest,
            "denied",
            parse_permission_output,
            |reason| PermissionAnswer::Deny { reason },
        )
    }

    /// The protocol's reading of a finished run: exit 0 → the JSON on stdout (`parse`), exit 2 → a refusal with
    /// stderr as the reason (`refuse`), anything else (or no exit code) → no decision, logged.
    fn outcome<T>(
        &self,
        event: HookEvent,
        refused: &str,
        parse: impl FnOnce(&str, &str) -> Option<T>,
        refuse: impl FnOnce(String) -> T,
    ) -> Option<T> {
        let Self::Exited {
            command,
            code: Some(code),
            stdout,
            stderr,
        } = self
        else {
            self.log(event);
            return None;
        };
        match *code {
            0 => parse(command, stdout),
            BLOCK_EXIT_CODE => {
                let reason = stderr.trim();
                Some(refuse(if reason.is_empty() {
                    format!("{refused} by hook command `{command}`")
                } else {
                    reason.to_owned()
                }))
            }
            _ => {
                self.log(event);
                None
            }
        }
    }

    /// Applies this run's PostToolUse answer to `content`; returns whether it changed.
    fn apply_post(&self, content: &mut String) -> bool {
        let Self::Exited {
            code: Some(code),
            stdout,
            stderr,
            ..
        } = self
        else {
            self.log(HookEvent::PostToolUse);
            return false;
        };
        match *code {
            0 => apply_post_output(stdout, content),
            // The call already ran; the coding agent shows stderr to the model.
            BLOCK_EXIT_CODE => append_feedback(content, stderr),
            _ => {
                self.log(HookEvent::PostToolUse);
                false
            }
        }
    }
}

/// Reads the stdout of a PreToolUse command that exited 0. The strictest answer in one output wins: deny, then
/// `continue: false`, then ask, then a rewritten input, then allow. An allow that comes with a rewritten input is
/// returned as the rewrite alone, so the new input is checked by the rules rather than allowed unseen.
fn parse_pre_output(command: &str, stdout: &str) -> Option<PreToolUseAction> {
    let text = stdout.trim();
    if text.is_empty() {
        return None;
    }
    let Ok(Value::Object(output)) = serde_json::from_str::<Value>(text) else {
        tracing::warn!(%command, "hook command printed something that is not a JSON object: no decision");
        return None;
    };
    let specific = output
        .get("hookSpecificOutput")
        .and_then(Value::as_object)
        .filter(|specific| {
            specific
                .get("hookEventName")
                .and_then(Value::as_str)
                .is_none_or(|name| name == HookEvent::PreToolUse.as_str())
        });
    let field = |name: &str| specific.and_then(|specific| specific.get(name));
    let reason = field("permissionDecisionReason")
        .or_else(|| output.get("reason"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let decision = match field("permissionDecision").and_then(Value::as_str) {
        Some(decision @ ("allow" | "deny" | "ask")) => Some(decision),
        Some(other) => {
            tracing::warn!(%command, decision = other, "unknown permissionDecision: ignored");
            None
        }
        None => match output.get("decision").and_then(Value::as_str) {
            Some("block") => Some("deny"),
            Some("approve") => Some("allow"),
            _ => None,
        },
    };
    let default_reason = |what: &str| {
        if reason.is_empty() {
            format!("{what} by hook command `{command}`")
        } else {
            reason.clone()
        }
    };
    if decision == Some("deny") {
        return Some(PreToolUseAction::Block {
            reason: default_reason("denied"),
        });
    }
    if output.get("continue").and_then(Value::as_bool) == Some(false) {
        let stop = output
            .get("stopReason")
            .and_then(Value::as_str)
            .map(str::to_owned);
        return Some(PreToolUseAction::Block {
            reason: stop.unwrap_or_else(|| default_reason("stopped")),
        });
    }
    if decision == Some("ask") {
        return Some(PreToolUseAction::PermissionRequired {
            message: default_reason("permission requested"),
        });
    }
    match field("updatedInput") {
        Some(args @ Value::Object(_)) => {
            let context = field("additionalContext")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let context = context.or_else(|| (!reason.is_empty()).then(|| reason.clone()));
            return Some(PreToolUseAction::MutateInput {
                args: args.clone(),
                context,
            });
        }
        Some(_) => tracing::warn!(%command, "updatedInput is not an object: ignored"),
        None => {}
    }
    (decision == Some("allow")).then(|| PreToolUseAction::Allow {
        reason: default_reason("allowed"),
    })
}

/// Reads the stdout of a PermissionRequest command that exited 0: `hookSpecificOutput.decision.behavior`
/// (`allow` or `deny`, with `message`), or a `permissionDecision` of `allow` or `deny`. Anything else answers nothing.
fn parse_permission_output(command: &str, stdout: &str) -> Option<PermissionAnswer> {
    let Ok(Value::Object(output)) = serde_json::from_str::<Value>(stdout.trim()) else {
        return None;
    };
    let specific = output
        .get("hookSpecificOutput")
        .and_then(Value::as_object)
        .filter(|specific| {
            specific
                .get("hookEventName")
                .and_then(Value::as_str)
                .is_none_or(|name| name == HookEvent::PermissionRequest.as_str())
        })?;
    let (behavior, reason) = match specific.get("decision").and_then(Value::as_object) {
        Some(decision) => (
            decision.get("behavior").and_then(Value::as_str),
            decision.get("message").and_then(Value::as_str),
        ),
        None => (
            specific.get("permissionDecision").and_then(Value::as_str),
            specific.get("permissionDecisionReason").and_then(Value::as_str),
        ),
    };
    let reason =
        |what: &str| reason.map_or_else(|| format!("{what} by hook command `{command}`"), str::to_owned);
    match behavior {
        Some("allow") => Some(PermissionAnswer::Allow {
            reason: reason("allowed"),
        }),
        Some("deny") => Some(PermissionAnswer::Deny {
            reason: reason("denied"),
        }),
        _ => None,
    }
}

/// Reads the stdout of a PostToolUse command that exited 0: a replacement output, or feedback for the model.
fn apply_post_output(stdout: &str, content: &mut String) -> bool {
    let Ok(Value::Object(output)) = serde_json::from_str::<Value>(stdout.trim()) else {
        return false;
    };
    let specific = output.get("hookSpecificOutput").and_then(Value::as_object);
    let field = |name: &str| {
        specific
            .and_then(|specific| specific.get(name))
            .and_then(Value::as_str)
    };
    let mut changed = false;
    if let Some(replacement) = field("updatedToolOutput").or_else(|| field("updatedMCPToolOutput")) {
        replacement.clone_into(content);
        changed = true;
    }
    if output.get("decision").and_then(Value::as_str) == Some("block") {
        changed |= append_feedback(
            content,
            output
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or("blocked by a hook"),
        );
    }
    if let Some(context) = field("additionalContext") {
        changed |= append_feedback(content, context);
    }
    changed
}

fn append_feedback(content: &mut String, feedback: &str) -> bool {
    let feedback = feedback.trim();
    if feedback.is_empty() {
        return false;
    }
    content.push_str("\n\n[hook] ");
    content.push_str(feedback);
    true
}

/// Combines the decisions of the commands of one event, strictest first.
fn combine_pre(decisions: impl Iterator<Item = PreToolUseAction>) -> PreToolUseAction {
    let mut asks = Vec::new();
    let mut rewrite = None;
    let mut allow = None;
    for decision in decisions {
        match decision {
            PreToolUseAction::Continue => {}
            block @ PreToolUseAction::Block { .. } => return block,
            PreToolUseAction::PermissionRequired { message } => asks.push(message),
            mutate @ PreToolUseAction::MutateInput { .. } => rewrite = Some(mutate),
            allowed @ PreToolUseAction::Allow { .. } => {
                allow.get_or_insert(allowed);
            }
        }
    }
    if !asks.is_empty() {
        return PreToolUseAction::PermissionRequired {
            message: asks.join("; "),
        };
    }
    rewrite.or(allow).unwrap_or(PreToolUseAction::Continue)
}

/// Runs `sh -c COMMAND` in its own process group with `input` on stdin; on timeout kills the whole group.
async fn run_command(spec: &CommandSpec, input: &[u8], cwd: &Path) -> Run {
    let command = spec.command.clone();
    let mut process = tokio::process::Command::new("sh");
    process
        .arg("-c")
        .arg(&spec.command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("AGENT_GUARD_PROJECT_DIR", cwd)
        .env("CLAUDE_PROJECT_DIR", cwd)
        .kill_on_drop(true)
        .process_group(0);
    if cwd.is_dir() {
        process.current_dir(cwd);
    }
    let mut child = match process.spawn() {
        Ok(child) => child,
        Err(error) => return Run::Unstarted { command, error },
    };
    let group = child.id().and_then(|pid| i32::try_from(pid).ok());
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let work = async {
        let feed = async move {
            if let Some(mut stdin) = stdin {
                // A command that does not read its input closes the pipe early; that is not an error.
                let _written = stdin.write_all(input).await;
            }
        };
        let ((), out, err, status) =
            tokio::join!(feed, read_capped(stdout), read_capped(stderr), child.wait());
        (out, err, status)
    };
    // Bound first, so that the future (which borrows `child`) is gone before the timeout arm kills it.
    let finished = tokio::time::timeout(spec.timeout, work).await;
    match finished {
        Ok((stdout, stderr, Ok(status))) => Run::Exited {
            command,
            code: status.code(),
            stdout,
            stderr,
        },
        Ok((_, _, Err(error))) => Run::Unstarted { command, error },
        Err(_) => {
            if let Some(group) = group {
                // The group, not only `sh`: a command's children must not outlive its timeout.
                let _killed =
                    nix::sys::signal::killpg(nix::unistd::Pid::from_raw(group), nix::sys::signal::SIGKILL);
            }
            let _reaped = child.kill().await;
            Run::TimedOut {
                command,
                timeout: spec.timeout,
            }
        }
    }
}

async fn read_capped<R: AsyncRead + Unpin>(reader: Option<R>) -> String {
    let Some(mut reader) = reader else {
        return String::new();
    };
    let mut kept = Vec::new();
    let _read = (&mut reader).take(OUTPUT_CAP).read_to_end(&mut kept).await;
    let _drained = tokio::io::copy(&mut reader, &mut tokio::io::sink()).await;
    String::from_utf8_lossy(&kept).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matcher_is_anchored_and_alias_aware() {
        let settings = HookSettings::from_json(&json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash|Write", "hooks": [{"type": "command", "command": "true"}]},
            {"matcher": "*", "hooks": [{"type": "command", "command": "all"}]},
            {"matcher": "mcp__memory__.*", "hooks": [{"type": "command", "command": "mcp"}]}
        ]}}))
        .unwrap();
        let names = |tool: &str| {
            settings
                .commands(HookEvent::PreToolUse, tool)
                .iter()
                .map(|spec| spec.command.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names("Bash"), ["true", "all"]);
        assert_eq!(names("run_bash"), ["true", "all"]);
        assert_eq!(names("file_write"), ["true", "all"]);
        assert_eq!(names("NotebookWrite"), ["all"]);
        assert_eq!(names("mcp__memory__save"), ["all", "mcp"]);
    }

    #[test]
    fn bad_entries_are_named() {
        let cases = [
            (json!({"hooks": {"PreTool": []}}), "hooks.PreTool"),
            (
                json!({"hooks": {"PreToolUse": [{"matcher": "(", "hooks": []}]}}),
                "hooks.PreToolUse[0].matcher",
            ),
            (
                json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "prompt", "command": "x"}]}]}}),
                "hooks.PreToolUse[0].hooks[0].type",
            ),
            (
                json!({"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": " "}]}]}}),
                "hooks.PostToolUse[0].hooks[0].command",
            ),
            (
                json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]}}),
                "hooks.PreToolUse[0].hooks[0].timeout",
            ),
            (
                json!({"hooks": {"PreToolUse": [{"matcher": "Bash"}]}}),
                "hooks.PreToolUse[0].hooks",
            ),
        ];
        for (document, expected) in cases {
            match HookSettings::from_json(&document) {
                Err(HookError::Settings { entry, .. }) => assert_eq!(entry, expected),
                other => panic!("{document}: expected a settings error, got {other:?}"),
            }
        }
        assert!(
            HookSettings::from_json(&json!({"permissions": {}}))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn output_precedence() {
        let deny_and_rewrite = r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "no", "updatedInput": {"a": 1}}}"#;
        assert_eq!(
            parse_pre_output("c", deny_and_rewrite),
            Some(PreToolUseAction::Block { reason: "no".into() })
        );
        let allow_and_rewrite =
            r#"{"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"a": 1}}}"#;
        assert!(matches!(
            parse_pre_output("c", allow_and_rewrite),
            Some(PreToolUseAction::MutateInput { .. })
        ));
        assert_eq!(
            parse_pre_output("c", r#"{"decision": "approve", "reason": "fine"}"#),
            Some(PreToolUseAction::Allow {
                reason: "fine".into()
            })
        );
        let other_event =
            r#"{"hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "allow"}}"#;
        assert_eq!(parse_pre_output("c", other_event), None);
        assert_eq!(parse_pre_output("c", "[1, 2]"), None);
    }

    #[test]
    fn strictest_command_wins() {
        let block = PreToolUseAction::Block { reason: "b".into() };
        let ask = PreToolUseAction::PermissionRequired { message: "a".into() };
        let allow = PreToolUseAction::Allow { reason: "ok".into() };
        assert_eq!(
            combine_pre([allow.clone(), ask.clone(), block.clone()].into_iter()),
            block
        );
        assert_eq!(combine_pre([allow.clone(), ask.clone()].into_iter()), ask);
        assert_eq!(
            combine_pre([PreToolUseAction::Continue, allow.clone()].into_iter()),
            allow
        );
    }
}
