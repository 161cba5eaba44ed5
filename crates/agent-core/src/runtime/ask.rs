//! Asks: the approver under its timeout, the PermissionRequest hooks when nobody answers, the rules an answer
//! adds, and the deny an unanswered ask becomes (`no-prompt`).

use std::path::Path;
use std::sync::PoisonError;

use agent_decide::{Decided, Guard};
use agent_hooks::{Approver, PermissionAnswer, PreToolUseContext};
use agent_rules::Rule;
use agent_tool_traits::{DecidedBy, Decision, Layer, Provenance, Source, Verdict};

use super::Runtime;
use crate::approval::{
    ApprovalAnswer, ApprovalRequest, local_settings_file, narrow_rules, save_allow_rules, suggest_rules,
};
use crate::telemetry::DecisionSource;

/// How an ask ended: the verdict, who stood behind it, the approver's answer, and who answered (the approver's
/// party, a PermissionRequest hook, or nobody).
pub(super) type Asked = (Verdict, DecisionSource, Option<ApprovalAnswer>, Option<Approver>);

impl Runtime {
    /// Puts an ask to the approver (or denies it without one) and applies the answer's rules.
    pub(super) async fn ask(&self, pre: &PreToolUseContext, decided: &Decided) -> Asked {
        let (session_id, call) = (pre.session_id.as_str(), &pre.call);
        let ask = decided.verdict();
        if self.agent.config.silent && !self.agent.bubble {
            return (
                no_prompt(ask, "no user to ask in a silent context"),
                DecisionSource::UserReject,
                None,
                Some(Approver::Nobody),
            );
        }
        let project = self.agent.config.project_dir();
        let rules = suggest_rules(&call.name, &call.args, decided, project);
        let settings_file = local_settings_file(project);
        let request = ApprovalRequest {
            session_id: session_id.to_owned(),
            agent_name: self.agent.config.agent_name.clone(),
            call: call.clone(),
            verdict: ask.clone(),
            rules: rules.clone(),
            settings_file: settings_file.clone(),
        };
        let timeout = self.agent.config.approval_timeout;
        let answer = match tokio::time::timeout(timeout, self.agent.approver.approve(&request)).await {
            Ok(Some(answer)) => answer,
            // Nobody answered (headless, or too late): the PermissionRequest hooks may still answer, else deny.
            Ok(None) => return self.ask_hooks(pre, ask, "nobody answered the ask").await,
            Err(_) => {
                let why = format!("no answer within {} s", timeout.as_secs());
                return self.ask_hooks(pre, ask, &why).await;
            }
        };
        let (decision, source, why, added) = match answer {
            ApprovalAnswer::AllowOnce => (
                Decision::Allow,
                DecisionSource::UserTemporary,
                "allowed once by the user",
                (Source::Session, rules),
            ),
            ApprovalAnswer::AllowAlways if rules.is_empty() => (
                Decision::Allow,
                DecisionSource::UserTemporary,
                "allowed by the user (no narrow rule to save)",
                (Source::Session, rules),
            ),
            ApprovalAnswer::AllowAlways => {
                if let Err(error) = save_allow_rules(&settings_file, &rules) {
                    tracing::warn!(file = %settings_file.display(), %error, "the allow rule could not be saved");
                }
                (
                    Decision::Allow,
                    DecisionSource::UserPermanent,
                    "allowed always by the user",
                    (Source::Local, rules),
                )
            }
            ApprovalAnswer::Deny => (
                Decision::Deny,
                DecisionSource::UserReject,
                "denied by the user",
                (Source::Session, Vec::new()),
            ),
            ApprovalAnswer::DontAskAgain => {
                let mut deny = narrow_rules(&call.name, &call.args, decided, project);
                if deny.is_empty() {
                    deny.push(call.tool().to_string());
                }
                (
                    Decision::Deny,
                    DecisionSource::UserReject,
                    "denied by the user for the rest of the session",
                    (Source::Session, deny),
                )
            }
        };
        let (rule_source, texts) = added;
        self.add_rules(&texts, decision, rule_source, &settings_file);
        let provenance = Provenance {
            layer: Layer::Approval,
            step: Some(DecidedBy::Approver),
            rule: texts.first().cloned(),
            source: (!texts.is_empty()).then_some(rule_source),
            file: (rule_source == Source::Local && !texts.is_empty())
                .then(|| settings_file.display().to_string()),
        };
        let mut verdict = Verdict::new(decision, why, provenance);
        verdict.reasons.push(format!("asked because: {}", ask.reason()));
        let party = self.agent.approver.party(&request);
        (verdict, source, Some(answer), Some(party))
    }

    /// The PermissionRequest hooks' answer to an ask nobody else answered; without one, a deny.
    async fn ask_hooks(&self, pre: &PreToolUseContext, ask: &Verdict, why: &str) -> Asked {
        let Some((hook, answer)) = self
            .agent
            .services
            .hooks
            .run_permission_request(pre, &ask.reason())
            .await
        else {
            return (
                no_prompt(ask, why),
                DecisionSource::UserReject,
                None,
                Some(Approver::Nobody),
            );
        };
        let (decision, reason) = match answer {
            PermissionAnswer::Allow { reason } => (Decision::Allow, reason),
            PermissionAnswer::Deny { reason } => (Decision::Deny, reason),
        };
        let provenance = Provenance::layer(Layer::Hooks).at(DecidedBy::Approver);
        let mut verdict = Verdict::new(
            decision,
            format!("answered by hook `{hook}`: {reason}"),
            provenance,
        );
        verdict.reasons.push(format!("asked because: {}", ask.reason()));
        (
            verdict,
            DecisionSource::Hook,
            None,
            Some(Approver::Hook { name: hook }),
        )
    }

    /// Adds rules the user's answer made and puts a guard with them in force.
    fn add_rules(&self, texts: &[String], behavior: Decision, source: Source, settings_file: &Path) {
        if texts.is_empty() {
            return;
        }
        let mut settings = self.agent.settings.lock().unwrap_or_else(PoisonError::into_inner);
        for text in texts {
            match Rule::parse(text, behavior, source) {
                Ok(mut rule) => {
                    // The rules of an answer are written relative to the project (`project_dir`).
                    rule.project = Some(self.agent.config.project_dir().to_owned());
                    // Rules saved in the local settings file are that file's: whose it is (the user's, unless it
                    // came with the repository) decides how far they reach, as after the next load.
                    if source == Source::Local {
                        rule.file = Some(settings_file.to_owned());
                    }
                    settings.add_rule(rule);
                }
                Err(error) => tracing::warn!(rule = %text, %error, "an answer's rule could not be parsed"),
            }
        }
        match Guard::new(&settings, &self.agent.guard_options) {
            Ok(guard) => self.agent.guard.replace(guard),
            Err(error) => tracing::warn!(%error, "the guard could not be rebuilt with the answer's rules"),
        }
    }
}

/// An ask that nobody answered, turned into a deny (headless, silent context, approver timeout).
pub(super) fn no_prompt(ask: &Verdict, why: &str) -> Verdict {
    let provenance = Provenance {
        step: Some(DecidedBy::NoPrompt),
        ..ask.provenance.clone()
    };
    let mut verdict = Verdict::new(
        Decision::Deny,
        format!("{why}; the call would have asked: {}", ask.reason()),
        provenance,
    );
    verdict.diagnostics = ask.diagnostics.clone();
    verdict
}
