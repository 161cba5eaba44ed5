//! What a session has accumulated that later decisions read, as a value its owner keeps and passes in.

use crate::classifier::DenialTracker;
use crate::policy::{ClassifierOutcome, Resolution};

/// The state of one session that decisions depend on: the denial tracker of mode `auto`. The caller owns it (the
/// runtime keeps one per session; `agent-guard check` decides every input with a fresh one) and passes it to
/// [`Policy::decide`](crate::Policy::decide), which only reads it: deciding the same call twice gives the same
/// resolution and changes nothing. The owner records the decisions it acts on with [`SessionState::record`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionState {
    denials: DenialTracker,
}

impl SessionState {
    /// A fresh session with `denials` as its tracker (its thresholds and counts).
    pub const fn with_denials(denials: DenialTracker) -> Self {
        Self { denials }
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
