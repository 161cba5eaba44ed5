//! agent-guard's decision: the layers composed into one synchronous decision path.
//!
//! [`Guard`] is the one decision path that every entry point uses (the `agent-guard check` hook command,
//! `explain`, `doctor`, the server, a library user, the agent runtime and its subagents). A decision is a pipeline
//! of four steps, each a module returning a named type:
//!
//! 1. **describe** (`describe.rs`): what the call touches as the rules see it (a command line, files, a URL, a
//!    subagent, or nothing) and the tool's own findings;
//! 2. **gather** (`gather/`, one module per kind of call: `shell`, `files`, `web`, `opaque`): the facts that kind
//!    needs and the findings of the layers that produce them: the shell analysis (L5), the file-system sandbox's
//!    report on each file (L4), after directory moves, glob expansion, searches and the project code a command runs;
//!    then the session's taint (`taint/`): what the call adds to it ([`Decided::taint`], for the caller to record)
//!    and, for a way out of a session that has read untrusted content and private data, an ask in every mode;
//! 3. **resolve** (`resolve.rs`): the findings, the rules, the mode, the hook outcome and the session's state (L2)
//!    into one [`Verdict`](agent_tool_traits::Verdict); then **contain** (`contain.rs`): a shell line that asked
//!    only for effects the kernel sandbox contains is allowed to run inside it ([`Decided::contained`],
//!    [`AutoAllow`]); and **outside** (`outside.rs`): a line whose commands no sandbox can contain (a container
//!    engine, a cluster's tool), each allowed by name by the user's own rules, with nothing else that needs the
//!    sandbox, runs outside it ([`Decided::outside`]);
//! 4. **confine** (`confine.rs`): the kernel sandbox an allowed shell call runs under ([`Decided::confinement`],
//!    [`Guard::sandbox_plan`]).
//!
//! [`Guard::decide_in_session`] runs the four steps; [`Guard::decide`] is the same for a call alone in a fresh
//! session. [`DecisionBound`] is the one entry that bounds a decision in time and denies past the bound
//! (`AGENT_GUARD_DECISION_TIMEOUT_MS`, default 5 s), one call ([`DecisionBound::decide`]) or many handed to workers
//! a batch at a time ([`DecisionBound::decide_in_order`], or `decide_in_order_then`, which makes each decision into
//! the caller's value on its worker, or `hand_over_in_order`, which returns at once and is waited for with
//! [`InOrder::wait`]); [`Deciders`] adds a parent's guard as a subagent's
//! ceiling.
//! The crate also holds agent-guard's own settings ([`GuardSettings`], the `agentGuard` section) and the coding
//! agent's PreToolUse protocol ([`HookInput`], [`HookOutput`], [`sandboxed_input`]).
//!
//! **Invariant:** synchronous: no async runtime, no database (the layering check enforces it); the runtime awaits
//! the bounded entry on a blocking thread.
//! **Invariant:** deciding never fails and never panics; only building a guard (loading settings) can fail.
//! **Invariant:** deciding is pure: the guard and the caller's [`SessionState`](agent_rules::SessionState) are only
//! read, so the same call decided twice gets the same decision.
//! **Invariant:** nothing is decided outside [`Guard::decide_in_session`]; entry points differ only in how they collect
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
mod contain;
mod decided;
mod describe;
mod error;
mod gather;
mod git_remotes;
mod guard;
mod hook_io;
mod outside;
mod owners;
mod repo_programs;
mod resolve;
mod taint;
#[cfg(test)]
mod test_guard;

pub use bounded::{
    CallInput, DECISION_TIMEOUT_ENV, DEFAULT_DECISION_LIMIT, Deciders, DecisionBound, DecisionRequest,
    DecisionTimer, InOrder,
};
pub use config::{
    GuardSettings, PolicyTest, SandboxMode, TelemetrySettings, check_settings_file, discover_settings,
    repository_settings_not_applied, settings_file_warnings, settings_schema, size_from_text,
};
pub use confine::GuardProtection;
pub use contain::Contained;
pub use decided::{CheckedPath, Decided, SessionLimit, session_limit_why};
pub use error::{Error, Result};
pub use guard::{AutoAllow, Guard, GuardOptions};
pub use hook_io::{
    HookInput, HookOutput, ProxyReach, SandboxRoot, narrowed_search_input, sandboxed_input, shell_quote,
};
pub use outside::Outside;
pub use taint::TaintSettings;
