//! Mode `auto`: a classifier approves or blocks what would otherwise be asked, with denial tracking.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::facts::CallFacts;
use crate::tool::{ToolKind, ToolName};

/// What the classifier sees of a call that reached step 7 in mode `auto`.
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

/// Counts classifier denials; after too many the classifier is presumed wrong and blocks become asks.
#[derive(Debug)]
pub struct DenialTracker {
    consecutive: AtomicU32,
    total: AtomicU32,
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
            consecutive: AtomicU32::new(0),
            total: AtomicU32::new(0),
            max_consecutive,
            max_total,
        }
    }

    /// Records a denial.
    pub fn record_denial(&self) {
        self.consecutive.fetch_add(1, Ordering::Relaxed);
        self.total.fetch_add(1, Ordering::Relaxed);
    }

    /// Records an approval, which ends a run of consecutive denials.
    pub fn record_approval(&self) {
        self.consecutive.store(0, Ordering::Relaxed);
    }

    /// Whether the classifier has denied too often and asking should take its place.
    pub fn tripped(&self) -> bool {
        self.consecutive.load(Ordering::Relaxed) >= self.max_consecutive
            || self.total.load(Ordering::Relaxed) >= self.max_total
    }

    /// (consecutive, total) denials so far.
    pub fn counts(&self) -> (u32, u32) {
        (
            self.consecutive.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trips_after_three_consecutive_or_twenty_total() {
        let t = DenialTracker::default();
        t.record_denial();
        t.record_denial();
        assert!(!t.tripped());
        t.record_denial();
        assert!(t.tripped());
        let t = DenialTracker::default();
        for _ in 0..19 {
            t.record_denial();
            t.record_approval();
        }
        assert!(!t.tripped());
        t.record_denial();
        assert!(t.tripped(), "{:?}", t.counts());
    }
}
