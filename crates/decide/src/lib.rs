//! agent-guard's decision: the layers composed into one synchronous decision path.
//!
//! [`Guard`] is the one decision path that every entry point uses — the `agent-guard check` hook command,
//! `explain`, `doctor`, a library user, the agent runtime and its subagents: it describes a call (which files,
//! commands, host, agent it touches), hands it to the shell analysis (L5) and the file-system sandbox (L4), and
//! resolves their findings with the rules, the mode, the hook outcome and the session's state (L2) into one
//! [`Verdict`](agent_tool_traits::Verdict), then maps an allowed shell call to the kernel sandbox it runs under
//! ([`Decided::confinement`], [`Guard::sandbox_plan`]). [`DecisionBound::decide`] is the one entry that bounds a
//! decision in time: it decides on a worker thread and denies past the bound (`AGENT_GUARD_DECISION_TIMEOUT_MS`,
//! default 5 s); [`DecisionBound::decide_in_order`] does the same for many calls handed to the worker at once. The crate also holds agent-guard's own settings ([`GuardSettings`], the `agentGuard` section)
//! and the coding agent's PreToolUse protocol ([`HookInput`], [`HookOutput`], [`sandboxed_input`]).
//!
//! **Invariant:** synchronous: no async runtime, no database (the layering check enforces it); the runtime awaits
//! the bounded entry on a blocking thread.
//! **Invariant:** deciding never fails and never panics; only building a guard (loading settings) can fail.
//! **Invariant:** deciding is pure: the guard and the caller's [`SessionState`](agent_rules::SessionState) are only
//! read, so the same call decided twice gets the same decision.
//! **Invariant:** nothing is decided outside [`Guard::decide_with`]; entry points differ only in how they collect
//! the hook outcome, the session and the answer to an ask.
//!
//! ```
//! use std::sync::Arc;
//!
//! use agent_decide::{CallInput, Deciders, DecisionBound, Guard, GuardOptions};
//! use agent_rules::{SessionState, Settings};
//! use agent_tool_traits::Decision;
//!
//! let dir = tempfile::tempdir()?;
//! let guard = Guard::new(&Settings::new(), &GuardOptions { cwd: dir.path().into(), ..Default::default() })?;
//! let read_only = guard.decide("Bash", &serde_json::json!({"command": "ls -la | head -3"}));
//! assert_eq!(read_only.verdict().decision, Decision::Allow);
//!
//! // The same decision within a time bound, as the hook and the runtime make it.
//! let deciders = Deciders::new(Arc::new(guard));
//! let wipe = CallInput::new("Bash", serde_json::json!({"command": "echo hi; rm -rf /"}));
//! let decided = DecisionBound::from_env().decide(&deciders, wipe, SessionState::default());
//! assert_eq!(decided.verdict().decision, Decision::Deny);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod bounded;
mod config;
mod confine;
mod error;
mod guard;
mod hook_io;

pub use bounded::{
    CallInput, DECISION_TIMEOUT_ENV, DEFAULT_DECISION_LIMIT, Deciders, DecisionBound, DecisionRequest,
    DecisionTimer,
};
pub use config::{GuardSettings, PolicyTest, SandboxMode, settings_schema};
pub use confine::GuardProtection;
pub use error::{Error, Result};
pub use guard::{Decided, Guard, GuardOptions};
pub use hook_io::{HookInput, HookOutput, sandboxed_input, shell_quote};
