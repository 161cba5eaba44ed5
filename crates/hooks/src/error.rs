//! Errors of the hook pipeline and of the audit log.

use std::path::PathBuf;

/// Why a hook, the hook settings or a lifecycle event failed.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// An entry of the hook settings cannot be used; `entry` is its JSON path (`hooks.PreToolUse[0].matcher`).
    #[error("invalid hook settings at `{entry}`: {reason}")]
    Settings {
        /// Where the bad entry is, as a JSON path.
        entry: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The audit log could not keep every row.
    #[error(transparent)]
    Audit(#[from] AuditError),
    /// A hook reported a failure of its own.
    #[error("{0}")]
    Failed(String),
    /// A hook of the registry failed; names the hook.
    #[error("hook `{hook}` failed: {source}")]
    Hook {
        /// The hook's name.
        hook: String,
        /// What went wrong.
        #[source]
        source: Box<HookError>,
    },
    /// Several hooks failed during one event; every one of them ran.
    #[error("{} hooks failed: {}", .0.len(), join(.0))]
    Many(Vec<HookError>),
}

fn join(errors: &[HookError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Why the audit log could not open, write or read its database.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The directory that should hold the database could not be created.
    #[error("cannot create the audit directory `{}`: {source}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The spool of a SQLite audit database (rows a hook process left beside it) could not be written or read.
    #[error("cannot use the audit spool `{}`: {source}", path.display())]
    Spool {
        /// The spool file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The database could not be opened or configured, or its server could not be reached.
    #[error("cannot open the audit database `{target}`: {source}")]
    Open {
        /// The file or URL.
        target: String,
        /// The database error.
        #[source]
        source: sqlx::Error,
    },
    /// The embedded migrations failed.
    #[error("cannot migrate the audit database `{target}`: {source}")]
    Migrate {
        /// The file or URL.
        target: String,
        /// The migration error.
        #[source]
        source: sqlx::migrate::MigrateError,
    },
    /// Writing rows failed (closed or read-only database, full disk, …); those rows are not on disk.
    #[error("`{rows}` audit rows were not written: {source}")]
    Write {
        /// How many rows were lost since the last report.
        rows: u64,
        /// The first database error among them.
        #[source]
        source: sqlx::Error,
    },
    /// Rows were dropped because the writer stayed behind for longer than the send timeout.
    #[error("`{rows}` audit rows were dropped because the audit writer could not keep up")]
    Dropped {
        /// How many rows were dropped since the last report.
        rows: u64,
    },
    /// Both writing and queueing lost rows since the last report.
    #[error("{write}; {dropped}")]
    Lost {
        /// The write failure.
        write: Box<AuditError>,
        /// The dropped rows.
        dropped: Box<AuditError>,
    },
    /// The background writer is gone (its runtime shut down), so nothing more can be written.
    #[error("the audit writer for `{target}` has stopped")]
    WriterGone {
        /// The file or URL.
        target: String,
    },
    /// The writer did not confirm a flush in time.
    #[error("the audit writer for `{target}` did not flush within `{seconds}` s")]
    FlushTimeout {
        /// The file or URL.
        target: String,
        /// The time waited.
        seconds: u64,
    },
    /// Reading rows back failed.
    #[error("cannot query the audit database `{target}`: {source}")]
    Query {
        /// The file or URL.
        target: String,
        /// The database error.
        #[source]
        source: sqlx::Error,
    },
    /// The audit database is a URL of a scheme no backend serves.
    #[error(
        "unsupported audit database `{target}`: give a file path, a `sqlite:` URL or a `postgres://` URL"
    )]
    UnsupportedDatabase {
        /// The URL, without its password.
        target: String,
    },
    /// A time bound of a query is not a time.
    #[error(
        "`{value}` is not a time: give a UTC time like `2026-11-30T02:47:15Z` (milliseconds optional) or a date like \
         `2026-11-30`"
    )]
    Time {
        /// The text given.
        value: String,
    },
    /// A stored row holds a value this version does not know.
    #[error("unknown audit status `{0}` in the database")]
    UnknownStatus(String),
}
