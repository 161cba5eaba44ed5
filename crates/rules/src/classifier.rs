//! Mode `auto`: a classifier approves or blocks what would otherwise be asked, with denial tracking.

use crate::facts::CallFacts;
use crate::tool::{ToolKind, ToolName};

/// What the classifier sees of a call that reached step 8 in mode `auto`.
#[derive(Debug, Clone, Copy)]
pub struct ClassifierInput<'a> {
    /// The tool, canonical name.
    pub tool: &'a ToolName,
    /// What the tool does.
    pub kind: ToolKind,
    /// Whether the layers found the call read-only (a read inside the roots, a read-only shell command).
    pub read_only: bool,
    /// Whether the call only edits files inside the roots.
    pub edits_inside_roots: bool,
    /// Everything the layers saw.
    pub facts: &'a CallFacts<'a>,
}

/// A classifier's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClassifierVerdict {
    /// Allow without asking.
    Approve(String),
    /// Deny (counted by the denial tracker).
    Block(String),
    /// No opinion: continue with the tool's default.
    Escalate,
}

/// Judges calls in mode `auto`.
pub trait Classifier: Send + Sync + std::fmt::Debug {
    /// The verdict for one call.
    fn classify(&self, input: &ClassifierInput<'_>) -> ClassifierVerdict;
}

/// The built-in classifier: deterministic, it approves read-only calls and edits inside the roots and escalates
/// everything else to the tool's default (an ask). It never blocks.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeterministicClassifier;

impl Classifier for DeterministicClassifier {
    fn classify(&self, input: &ClassifierInput<'_>) -> ClassifierVerdict {
        if input.read_only {
            ClassifierVerdict::Approve("read-only".to_owned())
        } else if input.edits_inside_roots {
            ClassifierVerdict::Approve("edits files inside the roots only".to_owned())
        } else {
            ClassifierVerdict::Escalate
        }
    }
}

/// Counts the classifier's denials in one session; after too many the classifier is presumed wrong and its blocks
/// become asks. A plain value that the session's owner keeps (see [`SessionState`](crate::SessionState)): deciding
/// only reads it, and the owner records each decision it acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DenialTracker {
    consecutive: u32,
    total: u32,
    max_consecutive: u32,
    max_total: u32,
}

impl Default for DenialTracker {
    fn default() -> Self {
        Self::new(3, 20)
    }
}

impl DenialTracker {
    /// A tracker that trips after `max_consecutive` denials in a row or `max_total` in all.
    pub const fn new(max_consecutive: u32, max_total: u32) -> Self {
        Self {
            consecutive: 0,
            total: 0,
            max_consecutive,
            max_total,
        }
    }

    /// Records a denial.
    pub fn record_denial(&mut self) {
        self.consecutive = self.consecutive.saturating_add(1);
        self.total = self.total.saturating_add(1);
    }

    /// Records an approval, which ends a run of consecutive denials.
    pub fn record_approval(&mut self) {
        self.consecutive = 0;
    }

    /// Whether the classifier has denied too often and asking should take its place.
    pub fn tripped(&self) -> bool {
        self.consecutive >= self.max_consecutive || self.total >= self.max_total
    }

    /// (consecutive, total) denials so far.
    pub fn counts(&self) -> (u32, u32) {
        (self.consecutive, self.total)
    }

    /// The tracker as it would be after one more denial: what a block decided now is judged against.
    #[must_use]
    pub(crate) fn after_denial(mut self) -> Self {
        self.record_denial();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trips_after_three_consecutive_or_twenty_total() {
        let mut t = DenialTracker::default();
        t.record_denial();
        t.record_denial();
        assert!(!t.tripped());
        assert!(t.after_denial().tripped());
        assert!(!t.tripped(), "looking ahead records nothing");
        t.record_denial();
        assert!(t.tripped());
        let mut t = DenialTracker::default();
        for _ in 0..19 {
            t.record_denial();
            t.record_approval();
        }
        assert!(!t.tripped());
        t.record_denial();
        assert!(t.tripped(), "{:?}", t.counts());
    }
}
