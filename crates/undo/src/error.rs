//! The errors of taking, listing and restoring snapshots.

use std::path::PathBuf;

/// What went wrong with a snapshot store.
#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    /// No `git` program to run (or only one inside a root, which is never run).
    #[error("no `git` program found outside the roots, so no snapshot is taken")]
    NoGit,
    /// Snapshots are off: by the environment, for want of a store directory, or for this root.
    #[error("snapshots are off: {0}")]
    Off(String),
    /// A `git` command of the store failed.
    #[error("`git {command}` failed in `{store}`: {stderr}")]
    Git {
        /// The subcommand and its arguments.
        command: String,
        /// The store's directory.
        store: PathBuf,
        /// What git said, on one line.
        stderr: String,
    },
    /// A `git` command of the store ran past its time bound and was killed.
    #[error("`git {command}` took longer than {seconds} s in `{store}`")]
    Timeout {
        /// The subcommand.
        command: String,
        /// The store's directory.
        store: PathBuf,
        /// The bound.
        seconds: u64,
    },
    /// A file of the store or of the root could not be read or written.
    #[error("`{path}`: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A run that is not in the store.
    #[error("no run `{0}` in the snapshots of this directory (`agent-guard undo --list` shows them)")]
    NoRun(u64),
    /// Nothing left to take back.
    #[error("no run to take back in the snapshots of `{0}`")]
    NothingToUndo(PathBuf),
    /// What a snapshot holds could not be read.
    #[error("unreadable snapshot data: {0}")]
    Data(String),
}

/// The result type of this crate.
pub type Result<T, E = UndoError> = std::result::Result<T, E>;

impl UndoError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}
