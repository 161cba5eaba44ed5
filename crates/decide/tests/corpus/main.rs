//! The decision corpus run through agent-decide's public API: the decision table (`decisions.json`, one temporary
//! project per case, snapshotted) and the adversarial classes (`adversarial.json`, one test per public bypass class
//! of agent permission systems, with the hook and cap classes built in code) and the session taint sequences
//! (`taint.json`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

mod adversarial;
mod decisions;
mod taint;
#[path = "../support/workspace.rs"]
mod workspace;
