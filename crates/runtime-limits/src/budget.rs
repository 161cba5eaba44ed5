//! The token budget (soft nudges, hard forced action, diminishing returns) and the compaction circuit breaker.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use crate::config::LimitsConfig;

/// The nudge injected at each step over the soft limit.
pub(crate) const SOFT_LIMIT_NUDGE: &str =
    "The context is getting long: summarise what you have found and answer soon.";
/// The message injected when the hard limit forces an answer.
pub(crate) const HARD_LIMIT_MESSAGE: &str = "The token budget is spent: tools are no longer available. Answer now with \
     what you have found so far.";
/// The message injected when steps stop adding information.
pub(crate) const DIMINISHING_RETURNS_MESSAGE: &str = "The last steps added no new information: answer directly from the \
     information you have collected.";

/// An **estimate** of the tokens of `text`: its characters divided by 4, rounded up. It is not a tokenizer's
/// count; it only has to grow with the text so that budgets trigger in the right order of magnitude.
pub fn estimate_tokens(text: &str) -> u64 {
    let chars = u64::try_from(text.chars().count()).unwrap_or(u64::MAX);
    chars.div_ceil(4)
}

/// What the loop must do after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetAction {
    /// Nothing.
    Continue,
    /// Over the soft limit: inject `message` and go on.
    Nudge {
        /// Estimated tokens so far.
        used: u64,
        /// The message to inject.
        message: &'static str,
    },
    /// At the hard limit: compact, or (no compaction) force a final answer with `message`.
    HardLimit {
        /// Estimated tokens so far.
        used: u64,
        /// The hard limit.
        limit: u64,
        /// The message to inject.
        message: &'static str,
    },
    /// `steps` consecutive steps added no new information: force a final answer with `message`.
    DiminishingReturns {
        /// How many steps in a row.
        steps: u32,
        /// The message to inject.
        message: &'static str,
    },
}

/// Counts the estimated tokens of a session and how much new information each step brought.
#[derive(Debug, Clone)]
pub struct TokenBudget {
    config: LimitsConfig,
    used: u64,
    stale_steps: u32,
    seen: HashSet<u64>,
}

impl TokenBudget {
    /// An empty budget under `config`'s limits.
    pub fn new(config: &LimitsConfig) -> Self {
        Self {
            config: *config,
            used: 0,
            stale_steps: 0,
            seen: HashSet::new(),
        }
    }

    /// Estimated tokens so far.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Counts `text` (a prompt, a model message) without judging its novelty.
    pub fn add_text(&mut self, text: &str) {
        self.used = self.used.saturating_add(estimate_tokens(text));
    }

    /// Counts the tool outputs of one step and says what the loop must do. An output whose exact text was seen
    /// before brings no new information; a step whose unseen outputs total fewer than `min_new_tokens` is stale.
    pub fn record_step<'a>(&mut self, outputs: impl IntoIterator<Item = &'a str>) -> BudgetAction {
        let mut new_tokens: u64 = 0;
        for output in outputs {
            let tokens = estimate_tokens(output);
            self.used = self.used.saturating_add(tokens);
            let mut hasher = DefaultHasher::new();
            output.hash(&mut hasher);
            if self.seen.insert(hasher.finish()) {
                new_tokens = new_tokens.saturating_add(tokens);
            }
        }
        if new_tokens < self.config.min_new_tokens {
            self.stale_steps = self.stale_steps.saturating_add(1);
        } else {
            self.stale_steps = 0;
        }
        self.action()
    }

    /// The model's server reported that its context holds `used` tokens (the prompt and the answer of its last
    /// turn): the count replaces the estimate so far; later text is estimated on top of it until the next report.
    pub fn reported(&mut self, used: u64) {
        self.used = used;
    }

    /// After a successful compaction the context holds `used` estimated tokens.
    pub fn compacted(&mut self, used: u64) {
        self.used = used;
    }

    /// What the budget requires now: the hard limit first, then diminishing returns, then the soft nudge.
    pub fn action(&self) -> BudgetAction {
        if self.used >= self.config.token_hard_limit {
            BudgetAction::HardLimit {
                used: self.used,
                limit: self.config.token_hard_limit,
                message: HARD_LIMIT_MESSAGE,
            }
        } else if self.stale_steps >= self.config.diminishing_steps {
            BudgetAction::DiminishingReturns {
                steps: self.stale_steps,
                message: DIMINISHING_RETURNS_MESSAGE,
            }
        } else if self.used > self.config.token_soft_limit {
            BudgetAction::Nudge {
                used: self.used,
                message: SOFT_LIMIT_NUDGE,
            }
        } else {
            BudgetAction::Continue
        }
    }
}

/// Stops auto-compaction after `compaction_failures` consecutive failures, so that a compaction that keeps failing
/// does not loop; a success closes it again.
#[derive(Debug, Clone)]
pub struct CompactionBreaker {
    limit: u32,
    failures: u32,
}

impl CompactionBreaker {
    /// A closed breaker opening after `config.compaction_failures` consecutive failures.
    pub fn new(config: &LimitsConfig) -> Self {
        Self {
            limit: config.compaction_failures,
            failures: 0,
        }
    }

    /// Whether auto-compaction may be tried.
    pub fn allows_compaction(&self) -> bool {
        self.failures < self.limit
    }

    /// A compaction succeeded.
    pub fn record_success(&mut self) {
        self.failures = 0;
    }

    /// A compaction failed.
    pub fn record_failure(&mut self) {
        self.failures = self.failures.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(soft: u64, hard: u64) -> LimitsConfig {
        LimitsConfig {
            token_soft_limit: soft,
            token_hard_limit: hard,
            ..LimitsConfig::default()
        }
    }

    /// A text of exactly `tokens` estimated tokens, different for each `seed`.
    fn text(tokens: u64, seed: u64) -> String {
        let mut text = format!("{seed:08}");
        while estimate_tokens(&text) < tokens {
            text.push_str("abcd");
        }
        text
    }

    #[test]
    fn the_estimate_is_chars_over_four_rounded_up() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abc"), 1);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(estimate_tokens("ééé"), 1, "characters, not bytes");
    }

    #[test]
    fn soft_limit_nudges_only_above_it() {
        let mut budget = TokenBudget::new(&config(100, 200));
        assert_eq!(
            budget.record_step([text(100, 1).as_str()]),
            BudgetAction::Continue,
            "at the soft limit"
        );
        assert!(matches!(
            budget.record_step([text(20, 2).as_str()]),
            BudgetAction::Nudge { used: 120, .. }
        ));
        assert!(
            matches!(
                budget.record_step([text(20, 3).as_str()]),
                BudgetAction::Nudge { .. }
            ),
            "every step"
        );
    }

    #[test]
    fn hard_limit_forces_at_it_not_below() {
        let mut budget = TokenBudget::new(&config(100, 200));
        assert!(matches!(
            budget.record_step([text(199, 1).as_str()]),
            BudgetAction::Nudge { .. }
        ));
        assert_eq!(
            budget.record_step([text(20, 2).as_str()]),
            BudgetAction::HardLimit {
                used: 219,
                limit: 200,
                message: HARD_LIMIT_MESSAGE
            }
        );
        let mut exact = TokenBudget::new(&config(100, 200));
        assert!(matches!(
            exact.record_step([text(200, 1).as_str()]),
            BudgetAction::HardLimit { .. }
        ));
        exact.compacted(50);
        assert_eq!(exact.action(), BudgetAction::Continue);
    }

    #[test]
    fn a_compaction_that_stays_over_the_soft_limit_still_nudges() {
        let mut budget = TokenBudget::new(&config(100, 200));
        assert!(matches!(
            budget.record_step([text(250, 1).as_str()]),
            BudgetAction::HardLimit { .. }
        ));
        budget.compacted(150);
        assert_eq!(budget.used(), 150);
        assert!(matches!(budget.action(), BudgetAction::Nudge { used: 150, .. }));
        assert!(
            matches!(
                budget.record_step([text(50, 2).as_str()]),
                BudgetAction::HardLimit { used: 200, .. }
            ),
            "counting goes on from the compacted estimate"
        );
    }

    #[test]
    fn the_defaults_are_32k_and_40k() {
        let mut budget = TokenBudget::new(&LimitsConfig::default());
        budget.add_text(&"x".repeat(4 * 32_000));
        assert_eq!(budget.action(), BudgetAction::Continue);
        budget.add_text("x");
        assert!(matches!(
            budget.action(),
            BudgetAction::Nudge { used: 32_001, .. }
        ));
        budget.add_text(&"x".repeat(4 * 7_999));
        assert!(matches!(
            budget.action(),
            BudgetAction::HardLimit { used: 40_000, .. }
        ));
    }

    #[test]
    fn repeated_outputs_are_diminishing_returns_after_three_steps() {
        let mut budget = TokenBudget::new(&LimitsConfig::default());
        let same = text(100, 7);
        assert_eq!(
            budget.record_step([same.as_str()]),
            BudgetAction::Continue,
            "new the first time"
        );
        assert_eq!(budget.record_step([same.as_str()]), BudgetAction::Continue);
        assert_eq!(budget.record_step([same.as_str()]), BudgetAction::Continue);
        assert_eq!(
            budget.record_step([same.as_str()]),
            BudgetAction::DiminishingReturns {
                steps: 3,
                message: DIMINISHING_RETURNS_MESSAGE
            }
        );
    }

    #[test]
    fn new_information_resets_the_stale_count_and_tiny_outputs_are_stale() {
        let mut budget = TokenBudget::new(&LimitsConfig::default());
        budget.record_step([text(15, 1).as_str()]);
        budget.record_step([text(15, 2).as_str()]);
        assert_eq!(
            budget.record_step([text(16, 3).as_str()]),
            BudgetAction::Continue,
            "16 tokens are new"
        );
        budget.record_step(std::iter::empty());
        budget.record_step([text(15, 4).as_str()]);
        assert!(matches!(
            budget.record_step([text(1, 5).as_str()]),
            BudgetAction::DiminishingReturns { steps: 3, .. }
        ));
    }

    #[test]
    fn the_breaker_opens_after_three_failures_and_a_success_closes_it() {
        let mut breaker = CompactionBreaker::new(&LimitsConfig::default());
        breaker.record_failure();
        breaker.record_failure();
        assert!(breaker.allows_compaction());
        breaker.record_failure();
        assert!(!breaker.allows_compaction());
        breaker.record_success();
        assert!(breaker.allows_compaction());
    }
}
