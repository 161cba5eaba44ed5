//! Problems with user extensions of the command table; they are reported, never fatal.

/// Why a user extension of the command table was not applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ExtensionError {
    /// The entry is empty or only spaces.
    #[error("empty command name in `{list}`")]
    Empty {
        /// The settings key of the list.
        list: &'static str,
    },
    /// The entry is not a plain command name.
    #[error("`{name}` in `{list}` is not a plain command name")]
    InvalidName {
        /// The entry as written.
        name: String,
        /// The settings key of the list.
        list: &'static str,
    },
    /// The table already knows the command, and the extension would make it weaker.
    #[error("`{name}` in `{list}` is already known as {class}; the built-in rules stay")]
    Known {
        /// The entry as written.
        name: String,
        /// The settings key of the list.
        list: &'static str,
        /// What the built-in table knows it as.
        class: &'static str,
    },
    /// The table already knows the command; its own rules decide (declaring it read-only could hide code
    /// execution, writes or destruction the table knows of).
    #[error("`{name}` cannot be declared read-only: it is known as {class}")]
    NotReadOnly {
        /// The entry as written.
        name: String,
        /// What the built-in table knows it as.
        class: &'static str,
    },
}
