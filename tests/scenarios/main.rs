//! Cross-crate scenarios: one test binary, one module per scenario family.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

mod invariants;
mod runtime;
mod tool_names;
// The throw-away project of agent-decide's corpus tests, shared rather than copied.
#[allow(
    dead_code,
    reason = "agent-decide's corpus tests use all of it, these scenarios a part"
)]
#[path = "../../crates/decide/tests/support/workspace.rs"]
mod workspace;
