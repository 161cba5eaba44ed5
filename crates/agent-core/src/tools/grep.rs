//! `grep_files`: lines matching a regular expression, each file opened race-free beneath its root.

use std::io::Read;
use std::ops::ControlFlow;

use agent_fs_sandbox::{Access, OpenOptions};
use agent_tool_traits::{Decision, InterruptBehavior, Tool, ToolContext, ToolError, ToolFuture, ToolOutput};
use globset::GlobBuilder;
use regex::RegexBuilder;
use serde_json::{Value, json};

use crate::guard_handle::GuardHandle;
use crate::tools::walk::walk;
use crate::tools::{blocking, opt_str_arg, resolve, str_arg};

/// At most this many matching lines are returned.
const MAX_MATCHES: usize = 500;
/// Files larger than this are searched only in their first part.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Searches files under `path` (default: the working directory) for `pattern` (a regular expression), optionally
/// only files whose name matches `glob`. Files the sandbox would not let a read through without asking (secrets
/// such as `.env`) and files a rule on reads denies or asks about are skipped. Read-only, concurrency-safe, cancellable.
#[derive(Debug, Clone)]
pub(crate) struct GrepFilesTool {
    guard: GuardHandle,
}

impl GrepFilesTool {
    /// The tool, opening files with the sandbox of `guard`.
    pub(crate) fn new(guard: GuardHandle) -> Self {
        Self { guard }
    }
}

impl Tool for GrepFilesTool {
    fn name(&self) -> &str {
        "grep_files"
    }

    fn description(&self) -> &str {
        "Searches the files under a directory for a regular expression and returns `path:line:text` lines."
    }

    fn input_schema(&self) -> Value {
        json!({"type": "object", "required": ["pattern"], "properties": {
            "pattern": {"type": "string"}, "path": {"type": "string"}, "glob": {"type": "string"},
            "case_insensitive": {"type": "boolean"}}})
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
            let pattern = str_arg(&args, &["pattern"])?;
            let dir = opt_str_arg(&args, &["path"])?.unwrap_or(".").to_owned();
            let insensitive = args
                .get("case_insensitive")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let regex = RegexBuilder::new(pattern)
                .case_insensitive(insensitive)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| ToolError::InvalidArgs(format!("`pattern`: {e}")))?;
            let names = match opt_str_arg(&args, &["glob"])? {
                Some(glob) => Some(
                    GlobBuilder::new(glob)
                        .build()
                        .map_err(|e| ToolError::InvalidArgs(format!("`glob`: {e}")))?
                        .compile_matcher(),
                ),
                None => None,
            };
            let (guard, root) = resolve(&self.guard, &dir, Access::Read)?;
            let found = blocking(move || {
                let sandbox = guard
                    .sandbox()
                    .ok_or_else(|| ToolError::Failed("no sandbox".to_owned()))?;
                let mut found = Vec::new();
                let mut search = |path: &std::path::Path, shown: &str| -> ControlFlow<()> {
                    let text = path.to_string_lossy();
                    // The same checks a read_file call of this file would get: protected files, and files a rule
                    // denies or asks about, are skipped.
                    if sandbox.check(&text, Access::Read).decision() != Decision::Allow
                        || guard
                            .decide("Read", &serde_json::json!({ "file_path": text }))
                            .resolution
                            .verdict
                            .decision
                            != Decision::Allow
                    {
                        return ControlFlow::Continue(());
                    }
                    let Ok(canonical) = sandbox.resolve(&text, Access::Read) else {
                        return ControlFlow::Continue(());
                    };
                    let Ok(file) = sandbox.open_beneath(&canonical, &OpenOptions::reading()) else {
                        return ControlFlow::Continue(());
                    };
                    let mut bytes = Vec::new();
                    if file.take(MAX_FILE_BYTES).read_to_end(&mut bytes).is_err()
                        || bytes.iter().take(8192).any(|b| *b == 0)
                    {
                        return ControlFlow::Continue(());
                    }
                    for (number, line) in String::from_utf8_lossy(&bytes).lines().enumerate() {
                        if regex.is_match(line) {
                            found.push(format!("{shown}:{}:{line}", number + 1));
                            if found.len() >= MAX_MATCHES {
                                return ControlFlow::Break(());
                            }
                        }
                    }
                    ControlFlow::Continue(())
                };
                if root.as_path().is_file() {
                    let _done = search(root.as_path(), &dir);
                } else {
                    walk(root.as_path(), &cancelled, |entry| {
                        let wanted = names.as_ref().is_none_or(|names| {
                            entry.path.file_name().is_some_and(|name| names.is_match(name))
                        });
                        if entry.is_file && wanted {
                            search(&entry.path, &entry.relative)
                        } else {
                            ControlFlow::Continue(())
                        }
                    });
                }
                Ok(found)
            })
            .await?;
            if found.is_empty() {
                return Ok(ToolOutput::ok(format!("no line matches `{pattern}`")));
            }
            let mut out = found.join("\n");
            if found.len() >= MAX_MATCHES {
                out.push_str(&format!("\n[stopped after {MAX_MATCHES} matches]"));
            }
            Ok(ToolOutput::ok(out))
        })
    }
}
