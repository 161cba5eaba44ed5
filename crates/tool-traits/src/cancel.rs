//! The shared registry of cancelled runs.

use std::collections::HashSet;
use std::sync::{Arc, PoisonError, RwLock};

/// The sessions whose run the user has cancelled. Cheap to clone (one shared set); the API layer inserts, the
/// loop, the executor and the cancellation hook check, and the session stop removes.
#[derive(Debug, Clone, Default)]
pub struct CancelRegistry {
    cancelled: Arc<RwLock<HashSet<String>>>,
}

impl CancelRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks the run of `session_id` as cancelled.
    pub fn cancel(&self, session_id: &str) {
        self.cancelled
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(session_id.to_owned());
    }

    /// Whether the run of `session_id` is cancelled.
    pub fn is_cancelled(&self, session_id: &str) -> bool {
        self.cancelled
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(session_id)
    }

    /// Forgets `session_id` (at session stop); returns whether it was cancelled.
    pub fn clear(&self, session_id: &str) -> bool {
        self.cancelled
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_check_clear() {
        let registry = CancelRegistry::new();
        let shared = registry.clone();
        assert!(!registry.is_cancelled("s1"));
        shared.cancel("s1");
        assert!(registry.is_cancelled("s1"));
        assert!(!registry.is_cancelled("s2"));
        assert!(registry.clear("s1"));
        assert!(!shared.is_cancelled("s1"));
    }
}
