//! Subagent isolation (layer L6): what a child agent started by the `subagent` tool (`Task`/`Agent`) inherits from
//! its parent and what it may never do.
//!
//! [`plan_child`] turns a parent's mode and tools, an [`AgentDefinition`] and a [`SubagentRequest`] into a
//! [`ChildPlan`]: fresh messages (the system prompt and the task only), a silent context (no user: `ask_user`
//! fails, an ask is a deny, or in `bubble` mode goes to the parent's approver), a tool set that is a subset of the
//! parent's (never the `subagent` tool itself, so children do not nest), and the stricter of the parent's mode and
//! the one the child asks for ([`child_mode`]). The runtime gives the child the parent's rules and hooks and
//! decides each child call under both its own mode and the parent's, keeping the stricter decision.
//!
//! **Invariant:** a child's tool set and mode only narrow: no request, definition or mode makes a child able to do
//! what its parent may not.
//! **Invariant:** planning never fails on a valid request and never panics; a bad request is a [`SubagentError`].
//!
//! ```
//! use agent_rules::PermissionMode;
//! use agent_subagent::{AgentDefinition, SubagentRequest, plan_child};
//!
//! let request = SubagentRequest::from_args(&serde_json::json!({
//!     "subagent_type": "explore", "prompt": "find the config loader", "mode": "bypassPermissions"
//! }))?;
//! let parent_tools = ["read_file", "run_bash", "file_write", "grep_files", "subagent"];
//! let child = plan_child(PermissionMode::Default, &parent_tools, &AgentDefinition::explore(), &request);
//! assert_eq!(child.tools, vec!["read_file", "grep_files"]);
//! assert_eq!(child.mode, PermissionMode::Default, "a child never raises its mode");
//! assert!(child.silent && child.messages.len() == 2);
//! # Ok::<(), agent_subagent::SubagentError>(())
//! ```

mod definition;
mod error;
mod plan;

pub use definition::{AgentDefinition, SubagentRequest};
pub use error::SubagentError;
pub use plan::{ChildMessage, ChildPlan, ChildRole, child_mode, narrow_tools, plan_child};
