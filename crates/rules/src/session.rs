//! What a session has accumulated that later decisions read, as a value its owner keeps and passes in.

use crate::classifier::DenialTracker;
use crate::policy::{ClassifierOutcome, Resolution};
use crate::taint::SessionTaint;

/// The state of one session that decisions depend on: the denial tracker of mode `auto` and the session's taint.
/// The caller owns it (the runtime keeps one per session; `agent-guard check` reads the taint the session's earlier
/// calls left in the project's `.agent-guard/` and decides with a fresh tracker) and passes it to
/// [`Policy::decide`](crate::Policy::decide), which only reads it: deciding the same call twice gives the same
/// resolution and changes nothing. The owner records the decisions it acts on with [`SessionState::record`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionState {
    denials: DenialTracker,
    taint: SessionTaint,
}

impl SessionState {
    /// A fresh session with `denials` as its tracker (its thresholds and counts).
    pub fn with_denials(denials: DenialTracker) -> Self {
        Self {
            denials,
            taint: SessionTaint::default(),
        }
    }

    /// The same session with `taint` as what it has been exposed to.
    #[must_use]
    pub fn with_taint(mut self, taint: SessionTaint) -> Self {
        self.taint = taint;
        self
    }

    /// What the session has been exposed to: untrusted content, private data, the domains it reached.
    pub fn taint(&self) -> &SessionTaint {
        &self.taint
    }

    /// The session's taint, for its owner to record what a call adds ([`SessionTaint::record`]).
    pub fn taint_mut(&mut self) -> &mut SessionTaint {
        &mut self.taint
    }

    /// The classifier's denials so far.
    pub fn denials(&self) -> &DenialTracker {
        &self.denials
    }

    /// Records what the classifier of mode `auto` did in `resolution` (nothing when it did not judge the call).
    pub fn record(&mut self, resolution: &Resolution) {
        match resolution.classifier {
            Some(ClassifierOutcome::Approved) => self.denials.record_approval(),
            Some(ClassifierOutcome::Blocked) => self.denials.record_denial(),
            None => {}
        }
    }
}
