//! Decision telemetry: every decision of the runtime is also a `tracing` event named `tool_decision`.

use std::fmt;

use agent_tool_traits::{DecidedBy, Source, Verdict};

/// Who, in the end, stood behind a decision; the `source` field of the `tool_decision` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DecisionSource {
    /// The configuration: rules, modes, layer findings, the tools' defaults.
    Config,
    /// A PreToolUse hook (block, permission request, external allow).
    Hook,
    /// The user answered "allow always" (a rule saved in the project's local settings).
    UserPermanent,
    /// The user answered "allow once", or a rule the user added for this session decided.
    UserTemporary,
    /// The user (or the lack of one: headless, timeout, silent context) refused.
    UserReject,
}

impl DecisionSource {
    /// The name used in telemetry: `config`, `hook`, `user_permanent`, `user_temporary`, `user_reject`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Config => "config",
            Self::Hook => "hook",
            Self::UserPermanent => "user_permanent",
            Self::UserTemporary => "user_temporary",
            Self::UserReject => "user_reject",
        }
    }

    /// The source of a verdict the guard produced (no approver involved).
    pub fn of_guard_verdict(verdict: &Verdict) -> Self {
        match verdict.provenance.step {
            Some(DecidedBy::HookBlock | DecidedBy::HookAsk | DecidedBy::HookAllow) => return Self::Hook,
            Some(
                DecidedBy::DenyRule
                | DecidedBy::LayerDeny
                | DecidedBy::AskRule
                | DecidedBy::SafetyAsk
                | DecidedBy::CautionAsk
                | DecidedBy::BypassMode
                | DecidedBy::AllowRule
                | DecidedBy::Mode
                | DecidedBy::Classifier
                | DecidedBy::Default
                | DecidedBy::Contained
                | DecidedBy::NoPrompt
                | DecidedBy::Approver
                | DecidedBy::Limit,
            )
            | None => {}
        }
        match verdict.provenance.source {
            // Session rules come from the user's answers in this session ("allow once", "don't ask again").
            Some(Source::Session) => {
                if verdict.is_denied() {
                    Self::UserReject
                } else {
                    Self::UserTemporary
                }
            }
            Some(
                Source::Policy
                | Source::CliArg
                | Source::Command
                | Source::Flag
                | Source::Local
                | Source::Project
                | Source::User,
            )
            | None => Self::Config,
        }
    }
}

impl fmt::Display for DecisionSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Emits the `tool_decision` event of one final decision.
pub(crate) fn emit(tool: &str, call_id: &str, verdict: &Verdict, source: DecisionSource) {
    let step = verdict.provenance.step.map_or("finding", DecidedBy::as_str);
    tracing::info!(
        name: "tool_decision",
        tool,
        call_id,
        decision = verdict.decision.as_str(),
        source = source.as_str(),
        layer = verdict.provenance.layer.as_str(),
        step,
        rule = verdict.provenance.rule.as_deref().unwrap_or(""),
        reason = %verdict.reason(),
        "tool_decision"
    );
}
