//! The errors of a model's server, each naming the endpoint.

use std::time::Duration;

/// Why a model could not give a turn. Every message names the endpoint; none carries the API key.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The base URL cannot be used.
    #[error("invalid base URL `{url}`: {reason}")]
    BaseUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    /// 401 or 403: the key is wrong, missing or not allowed (it is never printed).
    #[error(
        "`{endpoint}` answered {status}: the API key {}",
        if *key_set { format!("in `{key_var}` is wrong or not allowed to use this model") }
        else { format!("is missing: set `{key_var}`") }
    )]
    Unauthorized {
        /// The URL requested.
        endpoint: String,
        /// The status, with its reason phrase.
        status: String,
        /// The environment variable the key is read from.
        key_var: String,
        /// Whether a key was sent.
        key_set: bool,
    },
    /// Any other status that is not a success (after the retries, for 429 and 5xx).
    #[error("`{endpoint}` answered {status} after {attempts} attempt(s): {body}")]
    Status {
        /// The URL requested.
        endpoint: String,
        /// The status, with its reason phrase.
        status: String,
        /// How many requests were made.
        attempts: u32,
        /// The start of the answer's body (the key, if the server echoed it, is masked).
        body: String,
    },
    /// The server sent nothing for the length of the timeout (before the answer, or between two parts of a
    /// streamed answer).
    #[error("`{endpoint}` sent nothing for {} s: the request timed out", after.as_secs_f64())]
    Timeout {
        /// The URL requested.
        endpoint: String,
        /// The timeout.
        after: Duration,
    },
    /// The connection failed (after the retries) or broke.
    #[error("cannot reach `{endpoint}` ({attempts} attempt(s)): {cause}")]
    Transport {
        /// The URL requested.
        endpoint: String,
        /// How many requests were made.
        attempts: u32,
        /// The deepest cause (`Connection refused`, a DNS or TLS failure), which the transport's own message
        /// leaves out.
        cause: String,
        /// The transport's error.
        #[source]
        source: reqwest::Error,
    },
    /// The answer does not follow the protocol.
    #[error("`{endpoint}` sent a malformed answer: {detail}")]
    Malformed {
        /// The URL requested.
        endpoint: String,
        /// What is wrong, with the offending part.
        detail: String,
    },
    /// The server reported an error inside a streamed answer.
    #[error("`{endpoint}` reported an error in the stream: {message}")]
    Stream {
        /// The URL requested.
        endpoint: String,
        /// The server's message.
        message: String,
    },
}

/// The crate's result type.
pub type Result<T, E = ModelError> = std::result::Result<T, E>;

/// The deepest cause of `error`: what a person can act on.
pub(crate) fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}
