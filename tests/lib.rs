//! Shared helpers of the cross-crate scenarios live in `scenarios/`; this library is empty on purpose.
