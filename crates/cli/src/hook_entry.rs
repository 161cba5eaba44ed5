//! agent-guard's entry among the coding agent's PreToolUse hooks: recognising it, and the text of a settings file
//! with it added or removed (every other byte kept).

use std::path::Path;

use anyhow::{Result, bail};
use serde_json::Value;

use crate::json_text::{self, Fresh, Kind, Node, Style};

/// The entry `install` writes: `{"matcher": …, "hooks": [{"type": "command", "command": …, "timeout": …}]}` in
/// `hooks.PreToolUse`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Which tools the coding agent sends to the hook (`*`: all).
    pub(crate) matcher: String,
    /// `<absolute path of agent-guard> check`, quoted for the shell when it needs to be.
    pub(crate) command: String,
    /// Seconds the coding agent waits for the hook.
    pub(crate) timeout: u64,
}

impl Entry {
    fn group(&self) -> Fresh {
        Fresh::Object(vec![
            ("matcher", Fresh::String(self.matcher.clone())),
            (
                "hooks",
                Fresh::Array(vec![Fresh::Object(vec![
                    ("type", Fresh::String("command".to_owned())),
                    ("command", Fresh::String(self.command.clone())),
                    ("timeout", Fresh::Number(self.timeout)),
                ])]),
            ),
        ])
    }
}

/// The hook command that runs `exe` as the hook: its path, single-quoted when the shell would split or expand it.
pub(crate) fn hook_command(exe: &Path) -> Result<String> {
    let Some(path) = exe.to_str() else {
        bail!("the path of agent-guard `{}` is not UTF-8 text", exe.display());
    };
    let plain = !path.is_empty()
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._+-,:@%=".contains(&b));
    Ok(if plain {
        format!("{path} check")
    } else {
        format!("'{}' check", path.replace('\'', r"'\''"))
    })
}

/// The first `count` words of a shell command, after quote removal; none when its quoting is unterminated.
pub(crate) fn command_words(command: &str, count: usize) -> Vec<String> {
    let mut words = crate::words::shell_words(command).unwrap_or_default();
    words.truncate(count);
    words
}

/// Whether a hook command runs agent-guard's hook: its program is a file named `agent-guard` or `exe` itself, and
/// its first argument is `check`.
pub(crate) fn is_agent_guard_check(command: &str, exe: &Path) -> bool {
    let words = command_words(command, 2);
    let (Some(program), Some(subcommand)) = (words.first(), words.get(1)) else {
        return false;
    };
    let program = Path::new(program);
    subcommand == "check" && (program.file_name().is_some_and(|n| n == "agent-guard") || program == exe)
}

/// One agent-guard hook found in a settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Installed {
    pub(crate) matcher: Option<String>,
    pub(crate) command: String,
    pub(crate) timeout: Option<u64>,
}

fn hook_of(hook: &Value, exe: &Path) -> Option<(String, Option<u64>)> {
    let command = hook.get("command")?.as_str()?;
    (hook.get("type").and_then(Value::as_str) == Some("command") && is_agent_guard_check(command, exe))
        .then(|| (command.to_owned(), hook.get("timeout").and_then(Value::as_u64)))
}

/// The agent-guard hooks in `hooks.PreToolUse` of a settings file's JSON.
pub(crate) fn installed_hooks(settings: &Value, exe: &Path) -> Vec<Installed> {
    let groups = settings
        .get("hooks")
        .and_then(|h| h.get("PreToolUse"))
        .and_then(Value::as_array);
    let mut out = Vec::new();
    for group in groups.into_iter().flatten() {
        let matcher = group.get("matcher").and_then(Value::as_str).map(str::to_owned);
        let hooks = group.get("hooks").and_then(Value::as_array);
        for (command, timeout) in hooks.into_iter().flatten().filter_map(|h| hook_of(h, exe)) {
            out.push(Installed {
                matcher: matcher.clone(),
                command,
                timeout,
            });
        }
    }
    out
}

/// What a command does to a settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// Nothing to do.
    Unchanged,
    /// The file's new text.
    Write(String),
    /// Remove the file (uninstall of a file install created).
    Delete,
}

/// Checks that `text` is JSON; the error names the line and the column.
pub(crate) fn validate(text: &str) -> Result<()> {
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        let message = e.to_string();
        let position = format!(" at line {} column {}", e.line(), e.column());
        let message = message.strip_suffix(&position).unwrap_or(&message);
        bail!("line {}, column {}: {message}", e.line(), e.column());
    }
    Ok(())
}

/// Where one agent-guard hook is: its group in `hooks.PreToolUse`, its place in the group's `hooks`, and whether
/// the group holds nothing else.
#[derive(Debug, Clone, Copy)]
struct Ours {
    group: usize,
    hook: usize,
    alone: bool,
}

fn pre_tool_use(root: &Node) -> Option<&Node> {
    root.get("hooks")?.get("PreToolUse")
}

fn find_ours(text: &str, root: &Node, exe: &Path) -> Vec<(Ours, Installed)> {
    let mut out = Vec::new();
    let groups = pre_tool_use(root).and_then(Node::items).unwrap_or_default();
    for (g, group) in groups.iter().enumerate() {
        let hooks = group.get("hooks").and_then(Node::items).unwrap_or_default();
        let mine: Vec<(usize, String, Option<u64>)> = hooks
            .iter()
            .enumerate()
            .filter_map(|(h, hook)| hook_of(&hook.value(text)?, exe).map(|(c, t)| (h, c, t)))
            .collect();
        let alone = mine.len() == hooks.len();
        let matcher = group
            .get("matcher")
            .and_then(|m| m.value(text))
            .and_then(|m| m.as_str().map(str::to_owned));
        for (hook, command, timeout) in mine {
            out.push((
                Ours {
                    group: g,
                    hook,
                    alone,
                },
                Installed {
                    matcher: matcher.clone(),
                    command,
                    timeout,
                },
            ));
        }
    }
    out
}

/// `text` without one agent-guard hook: its whole group when it is alone there, else the hook alone.
fn remove_one(text: &str, root: &Node, ours: Ours) -> Result<String> {
    let Some(groups) = pre_tool_use(root) else {
        bail!("no `hooks.PreToolUse` list");
    };
    if ours.alone {
        return json_text::remove(text, groups, ours.group);
    }
    match groups
        .items()
        .and_then(|g| g.get(ours.group))
        .and_then(|g| g.get("hooks"))
    {
        Some(hooks) => json_text::remove(text, hooks, ours.hook),
        None => bail!("no hook list in group {}", ours.group),
    }
}

/// Parses a settings file's text, which must hold an object.
fn root_object(text: &str) -> Result<Node> {
    let root = json_text::parse(text)?;
    if !matches!(root.kind, Kind::Object(_)) {
        bail!("the file holds {}, not a JSON object", what(&root, text));
    }
    Ok(root)
}

fn what(node: &Node, text: &str) -> String {
    let at = line_of(text, node.start);
    match &node.kind {
        Kind::Object(_) => format!("an object (line {at})"),
        Kind::Array(_) => format!("a list (line {at})"),
        Kind::Scalar => {
            let raw = text.get(node.start..node.end).unwrap_or_default();
            let short: String = raw.chars().take(40).collect();
            let more = if short.len() < raw.len() { "…" } else { "" };
            format!("`{short}{more}` (line {at})")
        }
    }
}

fn line_of(text: &str, at: usize) -> usize {
    text.get(..at).unwrap_or_default().matches('\n').count() + 1
}

/// The text of a settings file with `entry` installed: unchanged when it is there already, else with every older
/// agent-guard hook removed and `entry` appended to `hooks.PreToolUse` (created when missing). `None`: no file.
pub(crate) fn plan_install(text: Option<&str>, entry: &Entry, exe: &Path) -> Result<Change> {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        let fresh = Fresh::Object(vec![(
            "hooks",
            Fresh::Object(vec![("PreToolUse", Fresh::Array(vec![entry.group()]))]),
        )]);
        return Ok(Change::Write(format!(
            "{}\n",
            fresh.render(&Style::standard(), "")
        )));
    };
    validate(text)?;
    let root = root_object(text)?;
    let ours = find_ours(text, &root, exe);
    if let [(_, found)] = ours.as_slice()
        && found.matcher.as_deref() == Some(entry.matcher.as_str())
        && found.command == entry.command
        && found.timeout == Some(entry.timeout)
    {
        return Ok(Change::Unchanged);
    }
    let mut text = text.to_owned();
    loop {
        let root = root_object(&text)?;
        let Some((first, _)) = find_ours(&text, &root, exe).first().cloned() else {
            break;
        };
        text = remove_one(&text, &root, first)?;
    }
    let root = root_object(&text)?;
    let style = Style::of(&text, &root);
    let group = entry.group();
    let text = match root.get("hooks") {
        None => {
            let hooks = Fresh::Object(vec![("PreToolUse", Fresh::Array(vec![group]))]);
            json_text::append(&text, &root, &style, |s, i| {
                json_text::member("hooks", &hooks, s, i)
            })?
        }
        Some(hooks) if matches!(hooks.kind, Kind::Object(_)) => match hooks.get("PreToolUse") {
            None => {
                let list = Fresh::Array(vec![group]);
                json_text::append(&text, hooks, &style, |s, i| {
                    json_text::member("PreToolUse", &list, s, i)
                })?
            }
            Some(list) if matches!(list.kind, Kind::Array(_)) => {
                json_text::append(&text, list, &style, |s, i| group.render(s, i))?
            }
            Some(other) => bail!("`hooks.PreToolUse` is {}, not a list", what(other, &text)),
        },
        Some(other) => bail!("`hooks` is {}, not an object", what(other, &text)),
    };
    Ok(Change::Write(text))
}

/// Which containers existed before agent-guard's hook was added, judged from the backup of the file taken then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Had {
    hooks: bool,
    pre_tool_use: bool,
}

/// A container counts as the user's when the backup has it and it is not made of agent-guard's hooks alone (a
/// backup of an installed file cannot tell, and install made those). No backup means install created the file.
/// A backup that is not JSON keeps everything.
fn had(backup: Option<&str>, exe: &Path) -> Had {
    let Some(backup) = backup.filter(|b| !b.trim().is_empty()) else {
        return Had {
            hooks: false,
            pre_tool_use: false,
        };
    };
    let Ok(value) = serde_json::from_str::<Value>(backup) else {
        return Had {
            hooks: true,
            pre_tool_use: true,
        };
    };
    let ours_only = |group: &Value| {
        group
            .get("hooks")
            .and_then(Value::as_array)
            .is_some_and(|hooks| !hooks.is_empty() && hooks.iter().all(|h| hook_of(h, exe).is_some()))
    };
    let hooks = value.get("hooks");
    let pre_tool_use = match hooks.and_then(|h| h.get("PreToolUse")) {
        None => false,
        Some(Value::Array(groups)) => groups.is_empty() || !groups.iter().all(ours_only),
        Some(_) => true,
    };
    let hooks = match hooks {
        None => false,
        Some(Value::Object(map)) => map.is_empty() || map.keys().any(|k| k != "PreToolUse") || pre_tool_use,
        Some(_) => true,
    };
    Had { hooks, pre_tool_use }
}

/// The text of a settings file without agent-guard's hooks: each removed with its group when the group holds
/// nothing else; `hooks.PreToolUse` and `hooks` removed when left empty and install created them (see [`had`]);
/// the file removed when install created it and nothing is left.
pub(crate) fn plan_uninstall(text: &str, backup: Option<&str>, exe: &Path) -> Result<Change> {
    validate(text)?;
    let root = root_object(text)?;
    if find_ours(text, &root, exe).is_empty() {
        return Ok(Change::Unchanged);
    }
    let mut text = text.to_owned();
    loop {
        let root = root_object(&text)?;
        let Some((first, _)) = find_ours(&text, &root, exe).first().cloned() else {
            break;
        };
        text = remove_one(&text, &root, first)?;
    }
    let had = had(backup, exe);
    for (key, parent_is_root, keep) in [
        ("PreToolUse", false, had.pre_tool_use),
        ("hooks", true, had.hooks),
    ] {
        let root = root_object(&text)?;
        let Some(parent) = (if parent_is_root {
            Some(&root)
        } else {
            root.get("hooks")
        }) else {
            continue;
        };
        let Some(members) = parent.members() else { continue };
        let Some(index) = members.iter().rposition(|m| m.key == key) else {
            continue;
        };
        let empty = members.get(index).is_some_and(|m| match &m.value.kind {
            Kind::Object(items) => items.is_empty(),
            Kind::Array(items) => items.is_empty(),
            Kind::Scalar => false,
        });
        if empty && !keep {
            text = json_text::remove(&text, parent, index)?;
        }
    }
    let root = root_object(&text)?;
    if root.members().is_some_and(<[_]>::is_empty) {
        match backup {
            None => return Ok(Change::Delete),
            Some(backup) if backup.trim().is_empty() => return Ok(Change::Write(backup.to_owned())),
            Some(_) => {}
        }
    }
    Ok(Change::Write(text))
}

#[cfg(test)]
#[path = "hook_entry_tests.rs"]
mod tests;
