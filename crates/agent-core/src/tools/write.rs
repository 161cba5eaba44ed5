//! `file_write`: creates or replaces a file, opened race-free beneath its root.

use std::io::Write;

use agent_fs_sandbox::{Access, OpenOptions};
use agent_tool_traits::{InterruptBehavior, Tool, ToolContext, ToolError, ToolFuture, ToolOutput};
use serde_json::{Value, json};

use crate::guard_handle::GuardHandle;
use crate::tools::{blocking, resolve, str_arg};

/// Writes `content` to `file_path`, creating missing parent directories. Not concurrency-safe; blocks a
/// cancellation so that a file is never left half written.
#[derive(Debug, Clone)]
pub(crate) struct FileWriteTool {
    guard: GuardHandle,
}

impl FileWriteTool {
    /// The tool, opening files with the sandbox of `guard`.
    pub(crate) fn new(guard: GuardHandle) -> Self {
        Self { guard }
    }
}

impl Tool for FileWriteTool {
    fn name(&self) -> &str {
        "file_write"
    }

    fn description(&self) -> &str {
        "Creates or overwrites a file inside the workspace with the given content."
    }

    fn input_schema(&self) -> Value {
        json!({"type": "object", "required": ["file_path", "content"], "properties": {
            "file_path": {"type": "string"}, "content": {"type": "string"}}})
    }

    fn interrupt_behavior(&self) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let path = str_arg(&args, &["file_path", "path"])?.to_owned();
            let content = str_arg(&args, &["content"])?.to_owned();
            let (guard, canonical) = resolve(&self.guard, &path, Access::Write)?;
            blocking(move || {
                let sandbox = guard
                    .sandbox()
                    .ok_or_else(|| ToolError::Failed("no sandbox".to_owned()))?;
                let mut file = sandbox
                    .open_beneath(&canonical, &OpenOptions::writing())
                    .map_err(super::refused)?;
                file.write_all(content.as_bytes())
                    .and_then(|()| file.flush())
                    .map_err(|e| ToolError::Failed(format!("writing `{path}`: {e}")))?;
                Ok(ToolOutput::ok(format!(
                    "wrote {} bytes to `{path}`",
                    content.len()
                )))
            })
            .await
        })
    }
}
