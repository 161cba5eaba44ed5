//! Cross-crate scenarios: one test binary, one module per scenario family.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

mod adversarial;
mod decisions;
mod invariants;
mod runtime;
mod tool_names;
mod workspace;
