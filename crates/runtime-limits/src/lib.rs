//! Runtime limits (layer L7): the synchronous state machines that end an agent loop that no longer makes progress.
//!
//! - [`StepLimiter`]: after `max_steps` steps (default 8) the model gets one final turn without tools, with
//!   a reminder injected that tools are no longer available; then the loop stops.
//! - [`DuplicateDetector`]: a call (same tool, same canonical JSON arguments) made in 3 consecutive steps gets an
//!   error result instead of running the 3rd time.
//! - [`TokenBudget`]: over the soft limit (32,000) each step gets a nudge; at the hard limit (40,000) the context
//!   is compacted ([`TokenBudget::compacted`] takes the new estimate) or, when it cannot be, the model is forced to
//!   answer, as it is after steps that add no new information (diminishing returns).
//! - [`CompactionBreaker`]: after consecutive compaction failures (a compaction that does not bring the estimate
//!   under the soft limit), auto-compaction is skipped and the hard limit forces the answer.
//!
//! Token counts are estimates ([`estimate_tokens`]: characters / 4), never a tokenizer's count. Cancellation uses
//! the shared [`CancelRegistry`](agent_tool_traits::CancelRegistry) of L1.
//!
//! **Invariant:** no I/O, no async runtime, no clock: every answer depends only on the inputs fed in.
//! **Invariant:** nothing here ever panics or fails; a bad configuration value falls back to its default.
//!
//! ```
//! use agent_runtime_limits::{DuplicateCheck, DuplicateDetector, LimitsConfig, StepGate, StepLimiter};
//!
//! let config = LimitsConfig { max_steps: 1, ..LimitsConfig::default() };
//! let mut steps = StepLimiter::new(&config);
//! assert_eq!(steps.next_step(), StepGate::Proceed { step: 1 });
//! assert!(matches!(steps.next_step(), StepGate::FinalTurn { step: 2, .. }));
//! assert_eq!(steps.next_step(), StepGate::Stop);
//!
//! let mut duplicates = DuplicateDetector::new(&config);
//! let args = serde_json::json!({"path": "a.txt"});
//! assert_eq!(duplicates.check("read_file", &args), DuplicateCheck::Fresh);
//! assert_eq!(duplicates.check("read_file", &args), DuplicateCheck::Repeated { count: 2 });
//! assert_eq!(duplicates.check("read_file", &args), DuplicateCheck::Blocked { count: 3 });
//! ```

mod budget;
mod config;
mod duplicate;
mod error;
mod steps;

pub use budget::{BudgetAction, CompactionBreaker, TokenBudget, estimate_tokens};
pub use config::LimitsConfig;
pub use duplicate::{DuplicateCheck, DuplicateDetector, canonical_json};
pub use error::LimitsError;
pub use steps::{StepGate, StepLimiter};
