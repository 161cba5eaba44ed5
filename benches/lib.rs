//! Shared helpers of the benches (none yet: each bench file is self-contained).
