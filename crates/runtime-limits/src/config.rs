//! The thresholds of every limit, from defaults, the environment and settings.

use serde_json::Value;

use crate::error::LimitsError;

/// Steps before the final turn without tools.
pub(crate) const DEFAULT_MAX_STEPS: u32 = 8;
/// The identical consecutive call that is refused instead of run (the 3rd).
pub(crate) const DEFAULT_DUPLICATE_LIMIT: u32 = 3;
/// Estimated tokens after which each step gets a nudge to conclude.
pub(crate) const DEFAULT_TOKEN_SOFT_LIMIT: u64 = 32_000;
/// Estimated tokens at which the model is forced to answer.
pub(crate) const DEFAULT_TOKEN_HARD_LIMIT: u64 = 40_000;
/// Consecutive steps without new information that force an answer.
pub(crate) const DEFAULT_DIMINISHING_STEPS: u32 = 3;
/// A step whose unseen output is under this many estimated tokens adds no new information.
pub(crate) const DEFAULT_MIN_NEW_TOKENS: u64 = 16;
/// Consecutive compaction failures after which auto-compaction is skipped.
pub(crate) const DEFAULT_COMPACTION_FAILURES: u32 = 3;

/// The environment variable overriding [`LimitsConfig::max_steps`].
pub(crate) const ENV_MAX_STEPS: &str = "AGENT_MAX_STEPS";
/// The environment variable overriding [`LimitsConfig::token_soft_limit`].
pub(crate) const ENV_TOKEN_SOFT_LIMIT: &str = "AGENT_TOKEN_SOFT_LIMIT";
/// The environment variable overriding [`LimitsConfig::token_hard_limit`].
pub(crate) const ENV_TOKEN_HARD_LIMIT: &str = "AGENT_TOKEN_HARD_LIMIT";

/// The thresholds of the runtime limits. Every value is positive; [`Default`] gives the documented defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitsConfig {
    /// Steps with tools; the next turn is a final one without tools (`AGENT_MAX_STEPS`, default 8).
    pub max_steps: u32,
    /// The count of identical consecutive calls at which the call is refused (default 3).
    pub duplicate_limit: u32,
    /// Estimated tokens over which each step gets a nudge (`AGENT_TOKEN_SOFT_LIMIT`, default 32,000).
    pub token_soft_limit: u64,
    /// Estimated tokens at which the model must answer (`AGENT_TOKEN_HARD_LIMIT`, default 40,000).
    pub token_hard_limit: u64,
    /// Consecutive steps without new information that force an answer (default 3).
    pub diminishing_steps: u32,
    /// Below this many estimated tokens of unseen output, a step adds no new information (default 16).
    pub min_new_tokens: u64,
    /// Consecutive compaction failures that open the circuit breaker (default 3).
    pub compaction_failures: u32,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            max_steps: DEFAULT_MAX_STEPS,
            duplicate_limit: DEFAULT_DUPLICATE_LIMIT,
            token_soft_limit: DEFAULT_TOKEN_SOFT_LIMIT,
            token_hard_limit: DEFAULT_TOKEN_HARD_LIMIT,
            diminishing_steps: DEFAULT_DIMINISHING_STEPS,
            min_new_tokens: DEFAULT_MIN_NEW_TOKENS,
            compaction_failures: DEFAULT_COMPACTION_FAILURES,
        }
    }
}

impl LimitsConfig {
    /// The defaults overridden by `AGENT_MAX_STEPS`, `AGENT_TOKEN_SOFT_LIMIT` and `AGENT_TOKEN_HARD_LIMIT`; a value
    /// that is not a positive integer is ignored.
    pub fn from_env() -> Self {
        Self::default().with_vars(|name| std::env::var(name).ok()).0
    }

    /// These limits overridden by the variables `lookup` finds, with the values that were not used.
    #[must_use]
    pub fn with_vars(mut self, lookup: impl Fn(&str) -> Option<String>) -> (Self, Vec<LimitsError>) {
        let mut errors = Vec::new();
        if let Some(value) = lookup(ENV_MAX_STEPS) {
            set_u32(&mut self.max_steps, ENV_MAX_STEPS, &value, &mut errors);
        }
        if let Some(value) = lookup(ENV_TOKEN_SOFT_LIMIT) {
            set_u64(
                &mut self.token_soft_limit,
                ENV_TOKEN_SOFT_LIMIT,
                &value,
                &mut errors,
            );
        }
        if let Some(value) = lookup(ENV_TOKEN_HARD_LIMIT) {
            set_u64(
                &mut self.token_hard_limit,
                ENV_TOKEN_HARD_LIMIT,
                &value,
                &mut errors,
            );
        }
        (self.normalized(), errors)
    }

    /// These limits overridden by a settings object (`{"maxSteps": 12, "tokenSoftLimit": 20000,
    /// "tokenHardLimit": 30000, "duplicateLimit": 3, "diminishingSteps": 3, "minNewTokens": 16,
    /// "compactionFailures": 3}`), with the values that were not used. Unknown keys are reported too.
    #[must_use]
    pub fn with_settings(mut self, settings: &Value) -> (Self, Vec<LimitsError>) {
        let mut errors = Vec::new();
        let Some(object) = settings.as_object() else {
            errors.push(LimitsError::NotPositive {
                name: "limits".to_owned(),
                value: settings.to_string(),
            });
            return (self, errors);
        };
        for (key, value) in object {
            let text = value.to_string();
            match key.as_str() {
                "maxSteps" => set_u32(&mut self.max_steps, key, &text, &mut errors),
                "duplicateLimit" => set_u32(&mut self.duplicate_limit, key, &text, &mut errors),
                "tokenSoftLimit" => set_u64(&mut self.token_soft_limit, key, &text, &mut errors),
                "tokenHardLimit" => set_u64(&mut self.token_hard_limit, key, &text, &mut errors),
                "diminishingSteps" => set_u32(&mut self.diminishing_steps, key, &text, &mut errors),
                "minNewTokens" => set_u64(&mut self.min_new_tokens, key, &text, &mut errors),
                "compactionFailures" => set_u32(&mut self.compaction_failures, key, &text, &mut errors),
                _ => errors.push(LimitsError::UnknownSetting { name: key.clone() }),
            }
        }
        (self.normalized(), errors)
    }

    /// A soft limit above the hard one would never nudge before the forced action: it is lowered to the hard one.
    fn normalized(mut self) -> Self {
        self.token_soft_limit = self.token_soft_limit.min(self.token_hard_limit);
        self
    }
}

fn positive(name: &str, value: &str, errors: &mut Vec<LimitsError>) -> Option<u64> {
    let parsed = value.trim().parse::<u64>().ok().filter(|n| *n > 0);
    if parsed.is_none() {
        errors.push(LimitsError::NotPositive {
            name: name.to_owned(),
            value: value.to_owned(),
        });
    }
    parsed
}

fn set_u64(slot: &mut u64, name: &str, value: &str, errors: &mut Vec<LimitsError>) {
    if let Some(n) = positive(name, value, errors) {
        *slot = n;
    }
}

fn set_u32(slot: &mut u32, name: &str, value: &str, errors: &mut Vec<LimitsError>) {
    if let Some(n) = positive(name, value, errors) {
        *slot = u32::try_from(n).unwrap_or(u32::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_are_the_documented_ones() {
        let config = LimitsConfig::default();
        assert_eq!(config.max_steps, 8);
        assert_eq!(config.duplicate_limit, 3);
        assert_eq!(
            (config.token_soft_limit, config.token_hard_limit),
            (32_000, 40_000)
        );
    }

    #[test]
    fn variables_override_and_bad_values_keep_the_default() {
        let vars = |name: &str| match name {
            ENV_MAX_STEPS => Some("12".to_owned()),
            ENV_TOKEN_SOFT_LIMIT => Some("0".to_owned()),
            ENV_TOKEN_HARD_LIMIT => Some(" 50000 ".to_owned()),
            _ => None,
        };
        let (config, errors) = LimitsConfig::default().with_vars(vars);
        assert_eq!(config.max_steps, 12);
        assert_eq!(config.token_soft_limit, DEFAULT_TOKEN_SOFT_LIMIT);
        assert_eq!(config.token_hard_limit, 50_000);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().contains("`AGENT_TOKEN_SOFT_LIMIT`"));
    }

    #[test]
    fn settings_override_and_the_soft_limit_never_exceeds_the_hard_one() {
        let (config, errors) = LimitsConfig::default().with_settings(&json!({
            "maxSteps": 2, "tokenHardLimit": 1000, "duplicateLimit": "x", "speed": 1
        }));
        assert_eq!(config.max_steps, 2);
        assert_eq!((config.token_soft_limit, config.token_hard_limit), (1000, 1000));
        assert_eq!(config.duplicate_limit, DEFAULT_DUPLICATE_LIMIT);
        assert_eq!(errors.len(), 2);
        let (_, errors) = LimitsConfig::default().with_settings(&json!([1]));
        assert_eq!(errors.len(), 1);
    }
}
