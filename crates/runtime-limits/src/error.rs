//! Why a configuration value was not used.

/// A configuration value that could not be used (reported so that the caller can warn; the default applies).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitsError {
    /// The value of a variable or setting is not a positive integer.
    #[error("`{name}` must be a positive integer, not `{value}`")]
    NotPositive {
        /// The variable or setting.
        name: String,
        /// Its value.
        value: String,
    },
    /// A settings key that names no limit.
    #[error("`{name}` is not a runtime limit setting")]
    UnknownSetting {
        /// The key.
        name: String,
    },
}
