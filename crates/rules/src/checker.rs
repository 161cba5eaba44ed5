//! The seed's `PermissionChecker` API over the compiled policy.

use agent_tool_traits::{Decision, Source};
use serde_json::Value;

use crate::facts::{CallFacts, HookOutcome, Request};
use crate::matcher::Anchors;
use crate::mode::PermissionMode;
use crate::policy::Policy;
use crate::rule::Rule;

/// The answer of [`PermissionChecker::check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionResult {
    /// Denied, and why.
    Denied {
        /// Why.
        reason: String,
    },
    /// Allowed.
    Allowed,
    /// The user must be asked.
    AskUser {
        /// What to ask.
        message: String,
    },
}

impl PermissionResult {
    /// Whether the call is allowed.
    pub fn is_allowed(&self) -> bool {
        matches!(self, Self::Allowed)
    }

    /// Whether the call is denied.
    pub fn is_denied(&self) -> bool {
        matches!(self, Self::Denied { .. })
    }
}

/// A programmable rule chain by tool name, as the seed describes it, resolved with the full semantics of docs/rules.md:
/// every deny beats every ask beats every allow, and a call no rule decides gets its tool's default. It sees only
/// tool names and rule contents that need no analysis (hosts, agent types); the full pipeline adds the layers.
#[derive(Debug)]
pub struct PermissionChecker {
    rules: Vec<Rule>,
    mode: PermissionMode,
    anchors: Anchors,
    policy: Option<Policy>,
}

impl Default for PermissionChecker {
    fn default() -> Self {
        Self::new()
    }
}

impl PermissionChecker {
    /// An empty checker: every call gets its tool's default.
    pub fn new() -> Self {
        let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
        Self {
            rules: Vec::new(),
            mode: PermissionMode::Default,
            anchors: Anchors { cwd, home: None },
            policy: None,
        }
    }

    /// Adds a rule.
    pub fn add_rule(&mut self, rule: Rule) {
        self.rules.push(rule);
        self.policy = None;
    }

    /// Sets the mode, as given on the command line.
    pub fn apply_mode(&mut self, mode: PermissionMode) {
        self.mode = mode;
        self.policy = None;
    }

    /// Checks a call of `tool_name`, with its arguments when known.
    pub fn check(&mut self, tool_name: &str, args: Option<&Value>) -> PermissionResult {
        let host = args
            .and_then(|a| a.get("url"))
            .and_then(Value::as_str)
            .and_then(crate::describe::host_of);
        let agent = args.and_then(|a| a.get("subagent_type")).and_then(Value::as_str);
        let facts = CallFacts {
            host: host.as_deref(),
            agent,
            ..CallFacts::default()
        };
        let hooks = HookOutcome::default();
        let Some(policy) = self.policy() else {
            return PermissionResult::Denied {
                reason: "the rules cannot be compiled".to_owned(),
            };
        };
        let resolution = policy.decide(
            &Request {
                tool: tool_name,
                facts: &facts,
                findings: &[],
                hooks: &hooks,
            },
            &crate::session::SessionState::default(),
        );
        match resolution.verdict.decision {
            Decision::Allow => PermissionResult::Allowed,
            Decision::Ask => PermissionResult::AskUser {
                message: resolution.verdict.reason(),
            },
            Decision::Deny => PermissionResult::Denied {
                reason: resolution.verdict.reason(),
            },
        }
    }

    /// Whether a call of `tool_name` is denied.
    pub fn is_denied(&mut self, tool_name: &str) -> bool {
        self.check(tool_name, None).is_denied()
    }

    fn policy(&mut self) -> Option<&Policy> {
        if self.policy.is_none() {
            let policy =
                Policy::from_rules(self.rules.clone(), PermissionMode::Default, &self.anchors).ok()?;
            self.policy = Some(policy.with_mode(self.mode, Source::CliArg));
        }
        self.policy.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str, behavior: Decision) -> Rule {
        Rule::parse(text, behavior, Source::Session).unwrap()
    }

    #[test]
    fn seed_example() {
        let mut checker = PermissionChecker::new();
        checker.add_rule(rule("run_bash", Decision::Deny));
        checker.add_rule(rule("download_paper", Decision::Deny));
        checker.add_rule(rule("file_write", Decision::Ask));
        checker.add_rule(rule("search_papers", Decision::Allow));
        assert!(checker.check("search_papers", None).is_allowed());
        assert!(checker.check("run_bash", None).is_denied());
        assert!(checker.is_denied("Bash"), "aliases share rules");
        assert!(matches!(
            checker.check("file_write", None),
            PermissionResult::AskUser { .. }
        ));
        assert!(
            matches!(checker.check("mcp__x__y", None), PermissionResult::AskUser { .. }),
            "unknown tools ask"
        );
        checker.apply_mode(PermissionMode::DontAsk);
        assert!(checker.check("file_write", None).is_denied());
        checker.apply_mode(PermissionMode::BypassPermissions);
        assert!(
            checker.check("file_write", None).is_denied() || !checker.check("file_write", None).is_allowed(),
            "an ask rule stays bypass-immune"
        );
        assert!(checker.check("run_bash", None).is_denied());
    }

    #[test]
    fn wildcard_and_hosts() {
        let mut checker = PermissionChecker::new();
        checker.add_rule(rule("WebFetch(domain:docs.rs)", Decision::Allow));
        checker.add_rule(rule("*", Decision::Ask));
        let args = serde_json::json!({"url": "https://docs.rs/regex"});
        assert!(
            matches!(
                checker.check("WebFetch", Some(&args)),
                PermissionResult::AskUser { .. }
            ),
            "every ask beats every allow"
        );
    }
}
