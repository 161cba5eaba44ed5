//! Waiting for a condition the way every test suite must: polling with a deadline, never a fixed sleep.

use std::time::{Duration, Instant};

/// Polls `done` until it holds, failing with `what` when `limit` passes first.
pub(crate) fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "{what} within {limit:?}");
        // The interval between looks, not a wait for the condition.
        std::thread::sleep(Duration::from_millis(20));
    }
}
