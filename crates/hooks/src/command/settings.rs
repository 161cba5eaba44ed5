//! The `hooks` sections of settings files: events, matcher groups (which see every name of a tool) and command
//! entries, read with errors that name the bad entry.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use agent_tool_traits::ToolName;
use regex::Regex;
use serde_json::Value;

use crate::HookError;

/// The timeout of a command that does not set one, as in the coding agent.
pub(crate) const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest timeout a settings file may ask for; longer values are a load error rather than a hang.
const MAX_COMMAND_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

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
    /// under any of its names in the one table of tool names (`Bash` and `run_bash`, `Glob` and `LS`), the same
    /// names a rule sees, so settings written for the coding agent keep working and a matcher and a rule never
    /// disagree about which tool a call is.
    pub fn matches(&self, subject: &str) -> bool {
        match &self.regex {
            None => true,
            Some(regex) => {
                regex.is_match(subject) || ToolName::new(subject).names().any(|name| regex.is_match(name))
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

#[cfg(test)]
mod tests {
    use serde_json::json;

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
}
