//! The guard of a running session, shared by the runtime and the file tools and replaced when a rule is added.

use std::sync::{Arc, PoisonError, RwLock};

use agent_decide::Guard;

/// A shared, replaceable [`Guard`]. The runtime replaces it when an answer adds a rule; the file tools read the
/// sandbox of the current one, so that they enforce the roots the decision was made with.
#[derive(Debug, Clone)]
pub struct GuardHandle {
    current: Arc<RwLock<Arc<Guard>>>,
}

impl GuardHandle {
    /// A handle on `guard`.
    pub fn new(guard: Guard) -> Self {
        Self {
            current: Arc::new(RwLock::new(Arc::new(guard))),
        }
    }

    /// The guard in force now.
    pub fn current(&self) -> Arc<Guard> {
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Puts `guard` in force for every later call.
    pub fn replace(&self, guard: Guard) {
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(guard);
    }
}
