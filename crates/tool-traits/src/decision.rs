//! Decisions, where they come from, and the verdict that carries them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What happens to a tool call. The order is the order of strictness, so that the strictest of several
/// decisions is their `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Run the call without asking.
    Allow,
    /// Ask the user (or whoever answers for them) first.
    Ask,
    /// Do not run the call; tell the model why.
    Deny,
}

impl Decision {
    /// The lowercase name used in settings files and hook output: `allow`, `ask` or `deny`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The seven layers of agent-guard, in the order a call meets them, plus the user who answers an ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layer {
    /// L1: the tool's own declarations (`check_permissions`).
    Tool,
    /// L2: permission rules, modes and the tool defaults.
    Rules,
    /// L3: PreToolUse hooks, in process or external commands.
    Hooks,
    /// L4: the file-system sandbox.
    Sandbox,
    /// L5: the shell-command analysis.
    Bash,
    /// L6: subagent isolation.
    Subagent,
    /// L7: runtime limits (steps, duplicates, budget, cancellation).
    Limits,
    /// The answer of a user or an approver to an ask.
    Approval,
    /// The kernel sandbox that runs an allowed command (Landlock, seccomp, namespaces).
    Kernel,
    /// The session's taint: a way out of a session that has seen untrusted content and private data.
    Taint,
}

impl Layer {
    /// Every layer, in the order a call meets them (a new layer goes here too, or its name does not parse).
    pub const ALL: [Self; 10] = [
        Self::Tool,
        Self::Rules,
        Self::Hooks,
        Self::Sandbox,
        Self::Bash,
        Self::Subagent,
        Self::Limits,
        Self::Approval,
        Self::Kernel,
        Self::Taint,
    ];

    /// A short lowercase name, stable for logs and telemetry.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Rules => "rules",
            Self::Hooks => "hooks",
            Self::Sandbox => "fs-sandbox",
            Self::Bash => "bash-guard",
            Self::Subagent => "subagent",
            Self::Limits => "runtime-limits",
            Self::Approval => "approval",
            Self::Kernel => "os-sandbox",
            Self::Taint => "session-taint",
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a permission rule or a mode came from. The order is the order of precedence: a greater source wins
/// inside one behaviour (`Policy` is the highest, `User` the lowest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Source {
    /// `~/.claude/settings.json`, `~/.agent-guard/settings.json`.
    User,
    /// `<project>/.claude/settings.json`, `<project>/.agent-guard/settings.json`.
    Project,
    /// `<project>/.claude/settings.local.json`, `<project>/.agent-guard/settings.local.json`.
    Local,
    /// The process environment (`AGENT_PERMISSIONS_*`).
    Flag,
    /// Rules added at run time by a command.
    Command,
    /// Answers given during this session ("allow once", "don't ask again").
    Session,
    /// `--settings` files and `--mode` on the command line.
    CliArg,
    /// Managed settings, read-only for the user.
    Policy,
}

impl Source {
    /// Every source, highest precedence first.
    pub const ALL: [Self; 8] = [
        Self::Policy,
        Self::CliArg,
        Self::Session,
        Self::Command,
        Self::Flag,
        Self::Local,
        Self::Project,
        Self::User,
    ];

    /// The name used in settings and output: `policy`, `cliArg`, `session`, `command`, `flag`, `local`,
    /// `project`, `user`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Policy => "policy",
            Self::CliArg => "cliArg",
            Self::Session => "session",
            Self::Command => "command",
            Self::Flag => "flag",
            Self::Local => "local",
            Self::Project => "project",
            Self::User => "user",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which step of the resolution produced a decision (docs/rules.md, every step and the final conversions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DecidedBy {
    /// Step 1: a deny rule matched.
    DenyRule,
    /// Step 2: the tool's own check or a layer analysis denied.
    LayerDeny,
    /// Step 3: a PreToolUse hook blocked.
    HookBlock,
    /// Step 4: an ask rule matched.
    AskRule,
    /// Step 4: a hook asked for permission.
    HookAsk,
    /// Step 4: a safety check of a tool or layer asked (protected path, unanalysable shell, …).
    SafetyAsk,
    /// Step 4: the guard's own caution asked (a network command while the network is blocked); unlike a safety
    /// ask, an allow rule or a hook's allow that covers the whole call lifts it.
    CautionAsk,
    /// Step 6: mode `bypassPermissions`.
    BypassMode,
    /// Step 7: an allow rule matched.
    AllowRule,
    /// Step 7: an external hook allowed.
    HookAllow,
    /// Step 5 (mode `plan` denies) or step 8 (mode `acceptEdits` allows): the permission mode.
    Mode,
    /// Step 8: the classifier of mode `auto`.
    Classifier,
    /// Step 9: the tool's own default.
    Default,
    /// Step 10: a shell line that asked only for effects the kernel sandbox of `workspace-write` contains,
    /// allowed to run inside it (`agentGuard.sandbox.autoAllow`).
    Contained,
    /// After resolution: an ask turned into a deny (`dontAsk`, silent subagent, headless, approver timeout).
    NoPrompt,
    /// The user or an approver answered an ask.
    Approver,
    /// A runtime limit (cancellation, duplicate call, step limit) stopped the call before any decision.
    Limit,
}

impl DecidedBy {
    /// Every step, in the order of the resolution (a new step goes here too, or its name does not parse).
    pub const ALL: [Self; 17] = [
        Self::DenyRule,
        Self::LayerDeny,
        Self::HookBlock,
        Self::AskRule,
        Self::HookAsk,
        Self::SafetyAsk,
        Self::CautionAsk,
        Self::BypassMode,
        Self::AllowRule,
        Self::HookAllow,
        Self::Mode,
        Self::Classifier,
        Self::Default,
        Self::Contained,
        Self::NoPrompt,
        Self::Approver,
        Self::Limit,
    ];

    /// A short kebab-case name, stable for logs and telemetry.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::DenyRule => "deny-rule",
            Self::LayerDeny => "layer-deny",
            Self::HookBlock => "hook-block",
            Self::AskRule => "ask-rule",
            Self::HookAsk => "hook-ask",
            Self::SafetyAsk => "safety-ask",
            Self::CautionAsk => "caution-ask",
            Self::BypassMode => "bypass-mode",
            Self::AllowRule => "allow-rule",
            Self::HookAllow => "hook-allow",
            Self::Mode => "mode",
            Self::Classifier => "classifier",
            Self::Default => "default",
            Self::Contained => "contained",
            Self::NoPrompt => "no-prompt",
            Self::Approver => "approver",
            Self::Limit => "limit",
        }
    }
}

impl fmt::Display for DecidedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Layer {
    type Err = String;

    /// The layer of a name [`Layer::as_str`] gives.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|layer| layer.as_str() == text)
            .ok_or_else(|| format!("unknown layer `{text}`"))
    }
}

impl FromStr for DecidedBy {
    type Err = String;

    /// The step of a name [`DecidedBy::as_str`] gives.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|step| step.as_str() == text)
            .ok_or_else(|| format!("unknown resolution step `{text}`"))
    }
}

/// Who decided, as the audit log, the approval page and `agent-guard test` write it: the layer, and the step
/// when the decision went through resolution (`rules/deny-rule`, `bash-guard/layer-deny`, `hooks`). The one
/// place that text is made ([`Display`](fmt::Display)) and read back ([`FromStr`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LayerStep {
    /// The layer.
    pub layer: Layer,
    /// The step, when there was one.
    pub step: Option<DecidedBy>,
}

impl fmt::Display for LayerStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.step {
            Some(step) => write!(f, "{}/{step}", self.layer),
            None => write!(f, "{}", self.layer),
        }
    }
}

impl FromStr for LayerStep {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (layer, step) = match text.split_once('/') {
            Some((layer, step)) => (layer, Some(step.parse()?)),
            None => (text, None),
        };
        Ok(Self {
            layer: layer.parse()?,
            step,
        })
    }
}

/// Who decided: the layer, the step, and when a rule decided, its text and source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// The layer whose finding or rule decided.
    pub layer: Layer,
    /// The resolution step; `None` for a finding that has not been through resolution yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<DecidedBy>,
    /// The text of the rule that decided, as written in its source (`Bash(npm run test:*)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Where that rule (or the mode) came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// The settings file the rule was read from, when it came from a file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl Provenance {
    /// A finding of `layer` with no rule behind it.
    pub const fn layer(layer: Layer) -> Self {
        Self {
            layer,
            step: None,
            rule: None,
            source: None,
            file: None,
        }
    }

    /// The layer and step that decided, as logs write them.
    pub const fn layer_step(&self) -> LayerStep {
        LayerStep {
            layer: self.layer,
            step: self.step,
        }
    }

    /// The same provenance, marked as decided at `step`.
    #[must_use]
    pub const fn at(mut self, step: DecidedBy) -> Self {
        self.step = Some(step);
        self
    }
}

/// What the PreToolUse hooks said about a call's permission: the hooks make it, the resolution reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookOutcome {
    /// The first hook that blocked: its name and its reason (step 3).
    pub block: Option<(String, String)>,
    /// The messages of the hooks that asked for permission, in hook order (step 4).
    pub asks: Vec<String>,
    /// The reason of the first external hook that allowed (step 7).
    pub allow: Option<String>,
}

/// A decision with its reasons and provenance. Deciding never fails: trouble during evaluation is reported in
/// `diagnostics` and makes the decision stricter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// The decision.
    pub decision: Decision,
    /// Human reasons, the one that decided first.
    pub reasons: Vec<String>,
    /// Who decided.
    pub provenance: Provenance,
    /// Things noticed on the way that did not decide (conflicts, unreadable input, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<String>,
}

impl Verdict {
    /// A verdict with one reason.
    pub fn new(decision: Decision, reason: impl Into<String>, provenance: Provenance) -> Self {
        Self {
            decision,
            reasons: vec![reason.into()],
            provenance,
            diagnostics: Vec::new(),
        }
    }

    /// The reasons joined into one line, the deciding one first.
    pub fn reason(&self) -> String {
        self.reasons.join("; ")
    }

    /// Whether the decision is [`Decision::Allow`].
    pub fn is_allowed(&self) -> bool {
        self.decision == Decision::Allow
    }

    /// Whether the decision is [`Decision::Deny`].
    pub fn is_denied(&self) -> bool {
        self.decision == Decision::Deny
    }

    /// The stricter of two verdicts; on a tie, `self` is kept and the other's reasons it does not already give
    /// are appended (two commands writing the same protected path give its reason once).
    #[must_use]
    pub fn stricter(mut self, other: Self) -> Self {
        match other.decision.cmp(&self.decision) {
            std::cmp::Ordering::Greater => other,
            std::cmp::Ordering::Equal => {
                for reason in other.reasons {
                    if !self.reasons.contains(&reason) {
                        self.reasons.push(reason);
                    }
                }
                self.diagnostics.extend(other.diagnostics);
                self
            }
            std::cmp::Ordering::Less => self,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strictest_wins_with_max() {
        assert_eq!(Decision::Allow.max(Decision::Ask), Decision::Ask);
        assert_eq!(Decision::Ask.max(Decision::Deny), Decision::Deny);
        assert_eq!(
            [Decision::Allow, Decision::Deny, Decision::Ask].into_iter().max(),
            Some(Decision::Deny)
        );
    }

    #[test]
    fn a_tie_gives_each_reason_once() {
        let first = Verdict::new(
            Decision::Ask,
            "writes `.git/x`",
            Provenance::layer(Layer::Sandbox),
        );
        let mut second = Verdict::new(
            Decision::Ask,
            "writes `.git/x`",
            Provenance::layer(Layer::Sandbox),
        );
        second.reasons.push("reads `.env`".to_owned());
        let both = first.stricter(second);
        assert_eq!(both.reasons, ["writes `.git/x`", "reads `.env`"]);
    }

    #[test]
    fn layer_step_text_reads_back() {
        for layer in Layer::ALL {
            let bare = LayerStep { layer, step: None };
            assert_eq!(bare.to_string().parse(), Ok(bare));
            for step in DecidedBy::ALL {
                let both = LayerStep {
                    layer,
                    step: Some(step),
                };
                assert_eq!(both.to_string().parse(), Ok(both));
            }
        }
        let provenance = Provenance::layer(Layer::Rules).at(DecidedBy::DenyRule);
        assert_eq!(provenance.layer_step().to_string(), "rules/deny-rule");
        assert_eq!(
            "bash-guard".parse(),
            Ok(LayerStep {
                layer: Layer::Bash,
                step: None
            })
        );
        for wrong in ["", "rules/", "kernel", "rules/deny", "rules/deny-rule/x"] {
            assert!(wrong.parse::<LayerStep>().is_err(), "{wrong}");
        }
    }

    #[test]
    fn source_order_is_precedence() {
        let mut sorted = Source::ALL;
        sorted.sort_by(|a, b| b.cmp(a));
        assert_eq!(sorted, Source::ALL);
        assert!(Source::Policy > Source::CliArg && Source::Project > Source::User);
    }

    #[test]
    fn stricter_keeps_the_stricter_verdict() {
        let allow = Verdict::new(Decision::Allow, "read-only", Provenance::layer(Layer::Bash));
        let ask = Verdict::new(Decision::Ask, "writes", Provenance::layer(Layer::Sandbox));
        let merged = allow.clone().stricter(ask.clone());
        assert_eq!(merged, ask);
        // A tie keeps both verdicts' reasons, each once.
        let tie = ask.clone().stricter(ask);
        assert_eq!(tie.reasons, vec!["writes".to_owned()]);
    }

    #[test]
    fn serializes_lowercase() {
        assert_eq!(
            serde_json::to_string(&Decision::Ask).ok().as_deref(),
            Some("\"ask\"")
        );
        assert_eq!(
            serde_json::to_string(&Source::CliArg).ok().as_deref(),
            Some("\"cliArg\"")
        );
    }
}
