//! The vocabulary every agent-guard layer speaks (layer L1).
//!
//! This crate defines what a tool call is ([`ToolCall`]), what a decision is ([`Decision`], ordered so that the
//! strictest wins with `max`), what a decision carries ([`Verdict`]: the reasons and the [`Provenance`] that says
//! which layer, rule and source decided), and the [`Tool`] trait through which a tool declares its own safety:
//! how it reacts to an interrupt, whether it may run beside other calls, which permission checks it asks for and
//! whether its failure aborts its siblings. The defaults are the conservative ones: a tool is cancellable, not
//! concurrency-safe, not read-only, asks for nothing special and does not abort its siblings.
//!
//! Facts that several layers read are kept here once: the table of tool names ([`ToolName`], [`ToolKind`]: every
//! alias in both naming families, so that rules, hook matchers and the decision agree about which tool a call is),
//! the read/write access of a file ([`Access`]), and the names of environment variables that carry credentials
//! ([`credential_variable`]: the shell analysis and the kernel sandbox's environment filter read the same list),
//! and the names of build outputs' directories ([`is_build_output_name`]: the sandbox's scan, the decision and the
//! undo snapshots agree about what a build makes again).
//!
//! **Invariant:** this crate decides nothing and runs nothing; it pulls in no async runtime (a [`Tool`] returns a
//! boxed future that any executor can drive), so that every other layer can depend on it.
//!
//! ```
//! use agent_tool_traits::{Decision, Layer, Provenance, Verdict};
//!
//! let ask = Verdict::new(Decision::Ask, "writes a file", Provenance::layer(Layer::Sandbox));
//! let deny = Verdict::new(Decision::Deny, "reads ~/.ssh", Provenance::layer(Layer::Rules));
//! assert_eq!(ask.decision.max(deny.decision), Decision::Deny);
//!
//! use agent_tool_traits::{ToolCall, ToolKind};
//! let call = ToolCall::new("1", "run_bash", serde_json::json!({"command": "ls"}));
//! assert_eq!(call.tool().as_str(), "Bash");
//! assert_eq!(call.tool().kind(), ToolKind::Shell);
//! ```

mod access;
mod call;
mod cancel;
mod confinement;
mod credentials;
mod decision;
mod names;
mod outputs;
mod tool;

pub use access::Access;
pub use call::ToolCall;
pub use cancel::CancelRegistry;
pub use confinement::{Confinement, ProxyGrant, ProxyLimit, SandboxProfile};
pub use credentials::{credential_variable, variable_matches};
pub use decision::{DecidedBy, Decision, HookOutcome, Layer, LayerStep, Provenance, Source, Verdict};
pub use names::{ToolKind, ToolName, coding_agent_name, kind_of};
pub use outputs::{CACHE_TAG, is_build_output_name};
pub use tool::{InterruptBehavior, PermissionCheck, Tool, ToolContext, ToolError, ToolFuture, ToolOutput};
