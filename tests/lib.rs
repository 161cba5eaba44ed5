//! Shared helpers of the cross-crate scenarios.
