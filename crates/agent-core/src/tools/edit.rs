//! `file_edit`: replaces a string in a file, reading and writing it race-free beneath its root.

use std::io::{Read, Write};

use agent_fs_sandbox::{Access, OpenOptions};
use agent_tool_traits::{InterruptBehavior, Tool, ToolContext, ToolError, ToolFuture, ToolOutput};
use serde_json::{Value, json};

use crate::guard_handle::GuardHandle;
use crate::tools::{blocking, resolve, str_arg};

/// Replaces `old_string` by `new_string` in `file_path`: exactly one occurrence, or every one with
/// `replace_all`. Not concurrency-safe; blocks a cancellation.
#[derive(Debug, Clone)]
pub(crate) struct FileEditTool {
    guard: GuardHandle,
}

impl FileEditTool {
    /// The tool, opening files with the sandbox of `guard`.
    pub(crate) fn new(guard: GuardHandle) -> Self {
        Self { guard }
    }
}

impl Tool for FileEditTool {
    fn name(&self) -> &str {
        "file_edit"
    }

    fn description(&self) -> &str {
        "Replaces an exact string in a file inside the workspace (one occurrence, or all with replace_all)."
    }

    fn input_schema(&self) -> Value {
        json!({"type": "object", "required": ["file_path", "old_string", "new_string"], "properties": {
            "file_path": {"type": "string"}, "old_string": {"type": "string"}, "new_string": {"type": "string"},
            "replace_all": {"type": "boolean"}}})
    }

    fn interrupt_behavior(&self) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let path = str_arg(&args, &["file_path", "path"])?.to_owned();
            let old = str_arg(&args, &["old_string"])?.to_owned();
            let new = str_arg(&args, &["new_string"])?.to_owned();
            let all = args.get("replace_all").and_then(Value::as_bool).unwrap_or(false);
            if old.is_empty() {
                return Err(ToolError::InvalidArgs("`old_string` is empty".to_owned()));
            }
            let (guard, canonical) = resolve(&self.guard, &path, Access::Write)?;
            blocking(move || {
                let sandbox = guard.sandbox().ok_or_else(|| ToolError::Failed("no sandbox".to_owned()))?;
                let mut text = String::new();
                sandbox
                    .open_beneath(&canonical, &OpenOptions::reading())
                    .map_err(super::refused)?
                    .read_to_string(&mut text)
                    .map_err(|e| ToolError::Failed(format!("reading `{path}`: {e}")))?;
                let count = text.matches(old.as_str()).count();
                let edited = match (count, all) {
                    (0, _) => return Err(ToolError::Failed(format!("`old_string` does not occur in `{path}`"))),
                    (1, _) | (_, true) => text.replace(old.as_str(), &new),
                    (n, false) => {
                        return Err(ToolError::Failed(format!(
                            "`old_string` occurs {n} times in `{path}`; give more context or set `replace_all`"
                        )));
                    }
                };
                let options = OpenOptions::new().write(true).truncate(true);
                let mut file = sandbox.open_beneath(&canonical, &options).map_err(super::refused)?;
                file.write_all(edited.as_bytes())
                    .and_then(|()| file.flush())
                    .map_err(|e| ToolError::Failed(format!("writing `{path}`: {e}")))?;
                Ok(ToolOutput::ok(format!("replaced {count} occurrence(s) in `{path}`")))
            })
            .await
        })
    }
}
