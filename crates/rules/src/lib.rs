//! Permission rules, sources, modes and settings, and the resolution of one decision (layer L2).
//!
//! Rules use the coding agent's syntax (`Bash(npm run test:*)`, `Read(./.env)`, `WebFetch(domain:example.com)`,
//! `mcp__server__*`, `Agent(Explore)`, `*`) and come from eight sources (`policy` > `cliArg` > `session` >
//! `command` > `flag` > `local` > `project` > `user`). A [`Policy`] compiles them once — hash maps for tool names,
//! `RegexSet`s of shell patterns grouped by command name, byte `RegexSet`s of path globs per tool grouped by
//! literal directory prefix — and [`Policy::decide`] resolves a call with the steps of docs/rules.md: deny rules,
//! layer denials, hook blocks, asks (bypass-immune), the mode, allow rules, the classifier of mode `auto`, the
//! tool's default; then `dontAsk` turns an ask into a deny. Every overridden decision goes to the conflict log.
//!
//! Settings files load through [`Settings::discover`]; [`check_settings`] is the one strict check of a file that
//! loading, `rules --check` and `doctor` all run (unknown keys with the nearest known one, types, rules, tool
//! names), each problem a [`Problem`] with its file, line and column.
//!
//! **Invariant:** deciding never fails and never panics; what cannot be judged is asked or denied, never allowed.
//! **Invariant:** deciding is pure: [`Policy::decide`] reads the policy and the caller's [`SessionState`] and changes
//! neither; the caller records the decisions it acts on.
//! **Invariant:** no async runtime, no database, no dependency on a higher layer: the shell analysis and the
//! sandbox hand their findings in as [`CallFacts`] and [`Verdict`](agent_tool_traits::Verdict)s.
//! **Invariant:** a deny rule of any source beats everything; a project's own settings cannot enable
//! `bypassPermissions` or `auto`.
//!
//! ```
//! use agent_rules::{Anchors, CallFacts, CommandFact, Policy, PermissionMode, Request, Rule, SessionState};
//! use agent_tool_traits::{Decision, HookOutcome, Source};
//!
//! let rules = vec![
//!     Rule::parse("Bash(npm run test:*)", Decision::Allow, Source::Project)?,
//!     Rule::parse("Bash(git push:*)", Decision::Deny, Source::User)?,
//! ];
//! let anchors = Anchors { cwd: "/work/proj".into(), home: None };
//! let policy = Policy::from_rules(rules, PermissionMode::Default, &anchors)?;
//!
//! let argv: Vec<String> = ["npm", "run", "test", "--", "--watch"].map(String::from).to_vec();
//! let facts = CallFacts { shell: Some(vec![CommandFact { argv: &argv, inner: 0, read_only: false, why: None }]), ..Default::default() };
//! let request = Request { tool: "Bash", facts: &facts, findings: &[], hooks: &HookOutcome::default() };
//! assert_eq!(policy.decide(&request, &SessionState::default()).verdict.decision, Decision::Allow);
//! # Ok::<(), agent_rules::Error>(())
//! ```

mod check;
mod classifier;
mod describe;
mod error;
mod facts;
mod matcher;
mod mode;
mod path;
mod policy;
#[cfg(test)]
mod policy_tests;
mod project;
mod rule;
mod session;
mod settings;
mod taint;
mod tool;

pub use check::{PathStep, Problem, ValueCheck, ValueProblem, check_settings, locate_value};
pub use classifier::{
    Classifier, ClassifierInput, ClassifierVerdict, DenialTracker, DeterministicClassifier,
};
pub use describe::{CallTarget, describe};
pub use error::{Error, Result};
pub use facts::{CallFacts, CommandFact, PathFact, Request};
pub use matcher::Anchors;
pub use mode::PermissionMode;
pub use path::absolute_lexical;
pub use policy::{ClassifierOutcome, Conflict, Policy, Resolution};
pub use project::{is_marked_project, project_root, project_root_declared};
pub use rule::Rule;
pub use session::SessionState;
pub use settings::{AdditionalDirectory, Discovery, Family, Section, Settings, settings_schema};
pub use taint::{SessionTaint, TaintFacts, TaintInMemory, TaintKeeper, TaintMark};
pub use tool::split_mcp;
