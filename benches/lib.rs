//! Shared helpers of the benches and of `cargo xtask replay`: the replay set of real agents' shell commands and
//! the scratch project it is decided in. Each other bench file is self-contained.

pub mod replay;
