//! The facts of a call the rules cannot look into (an MCP server's tool, an unknown one, a subagent's start): the
//! files and URLs its arguments name, and the shell line it runs when its name or input says it runs one.

use agent_tool_traits::{Access, Decision, Layer, ToolName};
use serde_json::Value;

use super::Gathering;
use crate::hook_io::shell_quote;

impl Gathering<'_> {
    /// A tool the rules cannot look into may still read or write the files its arguments name (`{"path": ".env"}`):
    /// a secret file named there asks, as it does for the file tools, in every mode, and so does a path that
    /// cannot be resolved (through a `/proc` magic link), which may lead anywhere. Whether the tool reads it cannot
    /// be known, so nothing else follows from it.
    pub(super) fn named_paths(&mut self, tool: &str, args: &Value) {
        let writes = writing_name(tool);
        for path in named_paths(args) {
            // A tool whose name says it writes (`write_file`, `create_directory`, `move_file`) may write the
            // places it is given: a protected one, or one outside the roots, asks as a write there does, in every
            // mode.
            if writes && let Some(check) = self.check_path(path, Access::Write) {
                let why = match (&check.protected, check.root) {
                    (Some(why), _) => Some(format!("protected path: {why}")),
                    (None, None) => Some(format!("`{}` lies outside the project", check.absolute.display())),
                    (None, Some(_)) => None,
                };
                if let Some(why) = why {
                    self.find(
                        Decision::Ask,
                        format!("`{tool}` is given a path it may write: {why}"),
                        Layer::Sandbox,
                    );
                }
            }
            let Some(check) = self.check_path(path, Access::Read) else {
                continue;
            };
            let why = match check.protected {
                Some(why) => format!("protected path: {why}"),
                None if check.resolved.is_none() && check.verdict.decision == Decision::Deny => {
                    check.verdict.reason()
                }
                None => continue,
            };
            self.find(
                Decision::Ask,
                format!("`{tool}` is given a path it may read: {why}"),
                Layer::Sandbox,
            );
        }
    }
}

impl Gathering<'_> {
    /// A tool whose name or input says it runs shell commands (`bash`, `exec_command`, `mcp__x__run_shell`, a
    /// `command`/`cmd`/`script` argument) runs them outside agent-guard's sandbox: its line is analysed like a
    /// shell call's (a deny class denies, a file outside the roots is checked) and the call asks in every mode.
    /// The tools the table knows are decided by what each does, not by their names (`BashOutput` reads a
    /// background shell's output; `SlashCommand` runs a prompt).
    pub(super) fn shell_like(&mut self, tool: &str, args: &Value) {
        if ToolName::new(tool).is_known() {
            return;
        }
        let line = command_line(args);
        if line.is_none() && !shell_like_name(tool) {
            return;
        }
        let Some(line) = line else {
            self.find(
                Decision::Ask,
                format!("`{tool}` runs shell commands, and its input holds no command line to check"),
                Layer::Bash,
            );
            return;
        };
        // The facts of the line count, but not as the call's own shell: no rule for `Bash` applies to this tool,
        // and no sandbox wraps it.
        self.shell(tool, &line);
        self.find(
            Decision::Ask,
            format!("`{tool}` runs the shell line `{line}` where agent-guard's sandbox cannot contain it"),
            Layer::Bash,
        );
    }

    /// The URLs an opaque tool is given (`url`, `uri`, `endpoint`, …): one that reaches this machine or its
    /// private network asks in every mode.
    pub(super) fn named_urls(&mut self, args: &Value) {
        let Some(object) = args.as_object() else {
            return;
        };
        for (key, value) in object {
            let key = key.to_ascii_lowercase();
            if key.ends_with("url") || key.ends_with("uri") || key == "endpoint" || key == "href" {
                let mut urls = Vec::new();
                strings(value, &mut urls);
                for url in urls {
                    self.internal_url(url);
                }
            }
        }
    }
}

/// A tool's own name (after an MCP server's prefix), its letters and digits alone, in lower case: `run_shell`,
/// `RunShell` and `mcp__srv__run-shell` are all `runshell`.
fn own_name(tool: &str) -> String {
    tool.rsplit("__")
        .next()
        .unwrap_or(tool)
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Whether a tool's name says it writes files (under an MCP prefix, whatever its case and separators): `write_file`,
/// `edit_file`, `create_directory`, `move_file`, `delete`, `apply_patch`, `upload`.
fn writing_name(tool: &str) -> bool {
    let name = own_name(tool);
    [
        "write", "edit", "create", "mkdir", "move", "rename", "copy", "delete", "remove", "patch", "append",
        "save", "upload", "insert", "replace", "touch", "chmod",
    ]
    .iter()
    .any(|word| name.contains(word))
}

/// Whether a tool's name says it runs shell commands, whatever its case and separators and under an MCP prefix.
fn shell_like_name(tool: &str) -> bool {
    let name = own_name(tool);
    [
        "bash",
        "shell",
        "exec",
        "runcommand",
        "terminal",
        "zsh",
        "powershell",
        "subprocess",
        "spawn",
    ]
    .iter()
    .any(|word| name.contains(word))
        || matches!(name.as_str(), "sh" | "run" | "cmd" | "execute")
}

/// The command line an opaque tool's input gives under `command`, `cmd` or `script` (top level): a string as it
/// is, a list of words quoted for a shell (`["bash", "-lc", "ls"]`).
fn command_line(args: &Value) -> Option<String> {
    let object = args.as_object()?;
    let value = ["command", "cmd", "script", "commands"]
        .iter()
        .find_map(|key| object.get(*key))?;
    match value {
        Value::String(line) => Some(line.clone()),
        Value::Array(words) => {
            let words: Option<Vec<String>> = words.iter().map(|w| w.as_str().map(shell_quote)).collect();
            words.map(|words| words.join(" "))
        }
        _ => None,
    }
}

/// The strings an opaque tool's arguments give under names that say they are files (`path`, `file_path`,
/// `filePath`, `paths`, `file`, `filename`, `source`, `destination`, `directory`, …), at the top level and one level
/// down (`{"options": {"path": …}}`), lists included.
fn named_paths(args: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    let Some(object) = args.as_object() else {
        return out;
    };
    for (key, value) in object {
        if names_a_file(key) {
            strings(value, &mut out);
        } else if let Some(inner) = value.as_object() {
            for (key, value) in inner {
                if names_a_file(key) {
                    strings(value, &mut out);
                }
            }
        }
    }
    out
}

/// Whether an argument's name says it holds a file, whatever its case and separators.
fn names_a_file(key: &str) -> bool {
    let key: String = key
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    ["path", "paths", "file", "files", "filename"]
        .iter()
        .any(|end| key.ends_with(end))
        || matches!(
            key.as_str(),
            "dir" | "directory" | "source" | "destination" | "src" | "dest" | "target"
        )
}

/// The strings of `value`: itself, or the items of a list.
fn strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(text) => out.push(text),
        Value::Array(items) => items.iter().for_each(|item| strings(item, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_tool_that_writes_files_is_known_by_its_own_name_in_any_spelling() {
        for writes in [
            "mcp__filesystem__write_file",
            "create_directory",
            "mcp__fs__moveFile",
            "ApplyPatch",
        ] {
            assert!(writing_name(writes), "{writes}");
        }
        for reads in [
            "mcp__filesystem__read_file",
            "list_directory",
            "search_files",
            "mcp__write__get_info",
        ] {
            assert!(!writing_name(reads), "{reads}");
        }
        assert_eq!(own_name("mcp__srv__Run-Shell"), "runshell");
    }

    #[test]
    fn file_arguments_are_found_by_their_names_one_level_down() {
        let args = json!({
            "file_path": "a",
            "filePath": "b",
            "paths": ["c", "d"],
            "options": {"target-dir": "e", "source": "f", "depth": 3},
            "query": "not a file",
            "nested": {"deeper": {"path": "too deep"}},
        });
        let mut found = named_paths(&args);
        found.sort_unstable();
        assert_eq!(found, ["a", "b", "c", "d", "f"]);
    }

    #[test]
    fn shell_runners_are_known_by_name_or_input() {
        for tool in [
            "bash",
            "Shell",
            "exec_command",
            "local_shell",
            "mcp__box__exec",
            "run_command",
            "mcp__t__Terminal",
        ] {
            assert!(shell_like_name(tool), "{tool}");
        }
        for tool in ["mcp__github__create_issue", "Read", "fetch_url", "search"] {
            assert!(!shell_like_name(tool), "{tool}");
        }
        assert_eq!(
            command_line(&json!({"command": "ls -la"})).as_deref(),
            Some("ls -la")
        );
        assert_eq!(
            command_line(&json!({"cmd": ["bash", "-lc", "rm -rf ~"]})).as_deref(),
            Some("'bash' '-lc' 'rm -rf ~'")
        );
        assert_eq!(command_line(&json!({"query": "ls"})), None);
    }

    #[test]
    fn names_are_compared_without_case_or_separators() {
        for key in ["PATH", "input_file", "outputFiles", "Dest", "src", "directory"] {
            assert!(names_a_file(key), "{key}");
        }
        for key in ["pattern", "content", "url", "targetdir"] {
            assert!(!names_a_file(key), "{key}");
        }
    }
}
