//! The built-in tools and what they share: argument reading and sandboxed opening.

mod ask_user;
mod bash;
mod edit;
mod glob;
mod grep;
mod read;
mod walk;
mod write;

use std::sync::Arc;

use agent_decide::Guard;
use agent_fs_sandbox::{Access, CanonicalPath, PathSandboxError};
use agent_tool_traits::{Layer, Provenance, ToolError, Verdict};
use serde_json::Value;

use ask_user::AskUserTool;
pub use bash::{BashLimits, RunBashTool};
use edit::FileEditTool;
use glob::GlobFilesTool;
use grep::GrepFilesTool;
use read::ReadFileTool;
use write::FileWriteTool;

use crate::approval::Approver;
use crate::guard_handle::GuardHandle;
use crate::registry::ToolRegistry;

/// A registry of every built-in tool, the file tools enforcing the sandbox of `guard`.
pub(crate) fn builtin_tools(guard: &GuardHandle, approver: Arc<dyn Approver>) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(ReadFileTool::new(guard.clone())));
    registry.register(Arc::new(GrepFilesTool::new(guard.clone())));
    registry.register(Arc::new(GlobFilesTool::new(guard.clone())));
    registry.register(Arc::new(FileWriteTool::new(guard.clone())));
    registry.register(Arc::new(FileEditTool::new(guard.clone())));
    registry.register(Arc::new(RunBashTool::new(guard.clone(), BashLimits::default())));
    registry.register(Arc::new(AskUserTool::new(approver)));
    registry
}

/// The string argument at the first of `keys` that is present.
fn str_arg<'a>(args: &'a Value, keys: &[&str]) -> Result<&'a str, ToolError> {
    let first = keys.first().copied().unwrap_or_default();
    match keys.iter().find_map(|key| args.get(*key)) {
        Some(Value::String(text)) => Ok(text),
        Some(other) => Err(ToolError::InvalidArgs(format!(
            "`{first}` must be a string, not `{other}`"
        ))),
        None => Err(ToolError::InvalidArgs(format!("missing `{first}`"))),
    }
}

/// An optional string argument.
fn opt_str_arg<'a>(args: &'a Value, keys: &[&str]) -> Result<Option<&'a str>, ToolError> {
    match keys.iter().find_map(|key| args.get(*key)) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => str_arg(args, keys).map(Some),
    }
}

/// An optional non-negative integer argument.
fn opt_u64_arg(args: &Value, key: &str) -> Result<Option<u64>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value.as_u64().map(Some).ok_or_else(|| {
            ToolError::InvalidArgs(format!("`{key}` must be a non-negative integer, not `{value}`"))
        }),
    }
}

/// Resolves `path` with the sandbox of the guard in force: the same check the decision saw, now producing the
/// canonical path that is opened beneath its root.
fn resolve(
    guard: &GuardHandle,
    path: &str,
    access: Access,
) -> Result<(Arc<Guard>, CanonicalPath), ToolError> {
    let guard = guard.current();
    let resolved = match guard.sandbox() {
        Some(sandbox) => sandbox.resolve(path, access).map_err(refused),
        None => Err(ToolError::Refused(Verdict::new(
            agent_tool_traits::Decision::Deny,
            format!("`{path}`: no sandbox, so no file is opened"),
            Provenance::layer(Layer::Sandbox),
        ))),
    }?;
    Ok((guard, resolved))
}

/// A sandbox error as a refusal of the call.
fn refused(error: PathSandboxError) -> ToolError {
    ToolError::Refused(Verdict::new(
        agent_tool_traits::Decision::Deny,
        error.to_string(),
        Provenance::layer(Layer::Sandbox),
    ))
}

/// Runs blocking file work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::Failed(format!("the file task failed: {e}")))?
}
