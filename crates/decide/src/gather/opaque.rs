//! The facts of a call the rules cannot look into (an MCP server's tool, an unknown one, a subagent's start): the
//! files its arguments name.

use agent_tool_traits::{Access, Decision, Layer};
use serde_json::Value;

use super::Gathering;

impl Gathering<'_> {
    /// A tool the rules cannot look into may still read or write the files its arguments name (`{"path": ".env"}`):
    /// a secret file named there asks, as it does for the file tools, in every mode, and so does a path that
    /// cannot be resolved (through a `/proc` magic link), which may lead anywhere. Whether the tool reads it cannot
    /// be known, so nothing else follows from it.
    pub(super) fn named_paths(&mut self, tool: &str, args: &Value) {
        for path in named_paths(args) {
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
    fn names_are_compared_without_case_or_separators() {
        for key in ["PATH", "input_file", "outputFiles", "Dest", "src", "directory"] {
            assert!(names_a_file(key), "{key}");
        }
        for key in ["pattern", "content", "url", "targetdir"] {
            assert!(!names_a_file(key), "{key}");
        }
    }
}
