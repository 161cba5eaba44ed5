//! `glob_files`: the files whose path matches a glob, found without following links.

use std::ops::ControlFlow;

use agent_fs_sandbox::Access;
use agent_tool_traits::{InterruptBehavior, Tool, ToolContext, ToolError, ToolFuture, ToolOutput};
use globset::GlobBuilder;
use serde_json::{Value, json};

use crate::guard_handle::GuardHandle;
use crate::tools::walk::walk;
use crate::tools::{blocking, opt_str_arg, resolve, str_arg};

/// At most this many paths are returned.
const MAX_RESULTS: usize = 1_000;

/// Lists files matching `pattern` (gitignore-style `**`, `*` within one component) under `path` (default: the
/// working directory). Read-only, concurrency-safe, cancellable.
#[derive(Debug, Clone)]
pub(crate) struct GlobFilesTool {
    guard: GuardHandle,
}

impl GlobFilesTool {
    /// The tool, walking directories resolved by the sandbox of `guard`.
    pub(crate) fn new(guard: GuardHandle) -> Self {
        Self { guard }
    }
}

impl Tool for GlobFilesTool {
    fn name(&self) -> &str {
        "glob_files"
    }

    fn description(&self) -> &str {
        "Lists the files under a directory whose relative path matches a glob such as `src/**/*.rs`."
    }

    fn input_schema(&self) -> Value {
        json!({"type": "object", "required": ["pattern"], "properties": {
            "pattern": {"type": "string"}, "path": {"type": "string"}}})
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

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        let cancelled = ctx.cancelled.clone();
        Box::pin(async move {
            let pattern = str_arg(&args, &["pattern"])?.to_owned();
            let dir = opt_str_arg(&args, &["path"])?.unwrap_or(".").to_owned();
            let matcher = GlobBuilder::new(pattern.trim_start_matches("./"))
                .literal_separator(true)
                .build()
                .map_err(|e| ToolError::InvalidArgs(format!("`pattern`: {e}")))?
                .compile_matcher();
            let (_guard, root) = resolve(&self.guard, &dir, Access::Read)?;
            let found = blocking(move || {
                let mut found = Vec::new();
                walk(root.as_path(), &cancelled, |entry| {
                    if matcher.is_match(&entry.relative) {
                        found.push(entry.relative.clone());
                    }
                    if found.len() >= MAX_RESULTS {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                });
                Ok(found)
            })
            .await?;
            if found.is_empty() {
                return Ok(ToolOutput::ok(format!("no file matches `{pattern}`")));
            }
            let mut out = found.join("\n");
            if found.len() >= MAX_RESULTS {
                out.push_str(&format!("\n[stopped after {MAX_RESULTS} paths]"));
            }
            Ok(ToolOutput::ok(out))
        })
    }
}
