//! The errors of starting a server: its configuration, its token, its database, its address.

use std::path::PathBuf;

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A non-loopback address without a token the user chose.
    #[error(
        "refusing to listen on `{listen}` without an explicit token: a generated token would be readable only here, \
         and anyone who can reach the address could answer asks; give `--token` or set `AGENT_GUARD_TOKEN`"
    )]
    TokenRequired {
        /// The address asked for.
        listen: String,
    },
    /// A token that cannot be random enough to resist guessing.
    #[error(
        "the token is refused: {why}; give at least 128 random bits, such as the output of `openssl rand -hex 32`"
    )]
    WeakToken {
        /// What is wrong with it.
        why: String,
    },
    /// The token file cannot be read or written, or others can read it.
    #[error("token file `{path}`: {why}")]
    TokenFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The system gave no random bytes.
    #[error("cannot get random bytes for a token or an id: {0}")]
    Random(String),
    /// The database cannot be opened or prepared.
    #[error("database `{target}`: {source}")]
    Database {
        /// The database, password hidden.
        target: String,
        /// The cause.
        #[source]
        source: sqlx::Error,
    },
    /// The audit log cannot be opened.
    #[error(transparent)]
    Audit(#[from] agent_hooks::AuditError),
    /// The address cannot be bound.
    #[error("cannot listen on `{listen}`: {source}")]
    Bind {
        /// The address.
        listen: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The server stopped with an I/O error.
    #[error("the server stopped: {0}")]
    Serve(#[source] std::io::Error),
}

/// The result of the server's fallible operations.
pub type Result<T, E = ServeError> = std::result::Result<T, E>;
