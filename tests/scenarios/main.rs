//! Cross-crate scenarios: one test binary, one module per scenario family.
