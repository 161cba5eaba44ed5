//! `read_file`: a file's lines, opened race-free beneath its root.

use std::io::Read;

use agent_fs_sandbox::{Access, OpenOptions};
use agent_tool_traits::{InterruptBehavior, Tool, ToolContext, ToolError, ToolFuture, ToolOutput};
use serde_json::{Value, json};

use crate::guard_handle::GuardHandle;
use crate::tools::{blocking, opt_u64_arg, resolve, str_arg};

/// At most this many bytes of a file are read.
const MAX_BYTES: u64 = 8 * 1024 * 1024;
/// Lines returned when the call sets no limit.
const DEFAULT_LINES: u64 = 2_000;

/// Reads a text file (`file_path`, optional `offset` line from 1 and `limit` lines). Read-only,
/// concurrency-safe, cancellable.
#[derive(Debug, Clone)]
pub(crate) struct ReadFileTool {
    guard: GuardHandle,
}

impl ReadFileTool {
    /// The tool, opening files with the sandbox of `guard`.
    pub(crate) fn new(guard: GuardHandle) -> Self {
        Self { guard }
    }
}

impl Tool for ReadFileTool {
    fn name(&self) -> &str {
        "read_file"
    }

    fn description(&self) -> &str {
        "Reads a text file inside the workspace and returns its lines, numbered."
    }

    fn input_schema(&self) -> Value {
        json!({"type": "object", "required": ["file_path"], "properties": {
            "file_path": {"type": "string"}, "offset": {"type": "integer"}, "limit": {"type": "integer"}}})
    }

    fn interrupt_behavior(&self) -> InterruptBehavior {
        InterruptBehavior::Cancel
    }

    fn is_concurrency_safe(&self, _args: &Value) -> bool {
        true
    }

    fn is_read_only(&self, _args: &Value) -> bool {
        true
    }

    fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let path = str_arg(&args, &["file_path", "path"])?.to_owned();
            let offset = opt_u64_arg(&args, "offset")?.unwrap_or(1).max(1);
            let limit = opt_u64_arg(&args, "limit")?.unwrap_or(DEFAULT_LINES);
            let (guard, canonical) = resolve(&self.guard, &path, Access::Read)?;
            let bytes = blocking(move || {
                let sandbox = guard
                    .sandbox()
                    .ok_or_else(|| ToolError::Failed("no sandbox".to_owned()))?;
                let file = sandbox
                    .open_beneath(&canonical, &OpenOptions::reading())
                    .map_err(super::refused)?;
                let mut bytes = Vec::new();
                file.take(MAX_BYTES)
                    .read_to_end(&mut bytes)
                    .map_err(|e| ToolError::Failed(format!("reading `{path}`: {e}")))?;
                Ok(bytes)
            })
            .await?;
            let text = String::from_utf8_lossy(&bytes);
            let skip = usize::try_from(offset - 1).unwrap_or(usize::MAX);
            let take = usize::try_from(limit).unwrap_or(usize::MAX);
            let mut out = String::new();
            for (number, line) in text.lines().enumerate().skip(skip).take(take) {
                out.push_str(&format!("{:>6}\t{line}\n", number + 1));
            }
            Ok(ToolOutput::ok(out))
        })
    }
}
