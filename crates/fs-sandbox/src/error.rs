//! Why a path was refused or a sandbox could not be built.

use std::io;
use std::path::PathBuf;

/// The result type of this crate.
pub type Result<T, E = PathSandboxError> = std::result::Result<T, E>;

/// Why a path was refused, a file could not be opened beneath its root, or a sandbox could not be built.
///
/// Every message names the offending input in backticks; `path` is always the path as it was given.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathSandboxError {
    /// The path is empty.
    #[error("the path is empty")]
    Empty,
    /// The path holds a NUL byte, which no system call accepts and which would cut the path short.
    #[error("path `{path}` contains a NUL byte")]
    Nul {
        /// The path as given, with the NUL bytes escaped.
        path: String,
    },
    /// The path is longer than the kernel accepts (`PATH_MAX`).
    #[error("path `{path}` is {len} bytes long, longer than the limit of {max} bytes")]
    TooLong {
        /// The path as given (or as expanded, when only the expansion is too long).
        path: String,
        /// Its length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// One component of the path is longer than a file name may be (`NAME_MAX`).
    #[error("path `{path}` has a component of {len} bytes, longer than the limit of {max} bytes")]
    NameTooLong {
        /// The path as given.
        path: String,
        /// The length of the longest component.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The path starts with `~` but the sandbox knows no home directory.
    #[error("path `{path}` starts with `~` but no home directory is configured")]
    NoHome {
        /// The path as given.
        path: String,
    },
    /// Resolving the path met more symbolic links than the kernel follows.
    #[error("path `{path}` meets more than {max} symbolic links (a loop?)")]
    Loop {
        /// The path as given.
        path: String,
        /// The limit.
        max: usize,
    },
    /// The path goes through a magic link of `/proc` (`/proc/self/root`, `/proc/<pid>/fd/N`, `/dev/fd/N`), whose
    /// target is not a path that can be checked.
    #[error("path `{path}` goes through the magic link `{link}`")]
    MagicLink {
        /// The path as given.
        path: String,
        /// The magic link met on the way.
        link: PathBuf,
    },
    /// A component that must be a directory (because more follows, or the path ends in `/`) is not one.
    #[error("path `{path}` continues below `{component}`, which is not a directory")]
    NotADirectory {
        /// The path as given.
        path: String,
        /// The resolved component that is not a directory.
        component: PathBuf,
    },
    /// A component could not be examined (permission denied, I/O error).
    #[error("path `{path}` cannot be resolved at `{component}`")]
    Unresolvable {
        /// The path as given.
        path: String,
        /// The resolved component that could not be examined.
        component: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// The resolved path is not inside any root.
    #[error("path `{path}` resolves to `{resolved}`, which is outside the allowed roots")]
    Outside {
        /// The path as given.
        path: String,
        /// Where it resolves to.
        resolved: PathBuf,
    },
    /// A write to a path inside a read-only root.
    #[error("path `{path}` resolves to `{resolved}`, inside the read-only root `{root}`")]
    ReadOnly {
        /// The path as given.
        path: String,
        /// Where it resolves to.
        resolved: PathBuf,
        /// The read-only root that holds it.
        root: PathBuf,
    },
    /// A root could not be canonicalised when the sandbox was built.
    #[error("root `{path}` cannot be canonicalised")]
    Root {
        /// The root as configured.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// A protected-path pattern from the settings is not a valid glob.
    #[error("protected-path pattern `{pattern}` is invalid")]
    Pattern {
        /// The pattern as given.
        pattern: String,
        /// What the glob parser said.
        #[source]
        source: globset::Error,
    },
    /// A path handed to `open_beneath` is not relative to its root, or a [`CanonicalPath`](crate::CanonicalPath)
    /// does not belong to this sandbox.
    #[error("path `{path}` is not beneath the root `{root}`")]
    NotBeneath {
        /// The path as given.
        path: PathBuf,
        /// The root it should be beneath.
        root: PathBuf,
    },
    /// Opening beneath the root would have left it (a symbolic link, `..` or a magic link pointing outside,
    /// possibly swapped in after the check).
    #[error("opening `{path}` beneath `{root}` would leave the root")]
    Escape {
        /// The path relative to the root.
        path: PathBuf,
        /// The root.
        root: PathBuf,
    },
    /// A path checked for reading was opened with options that write.
    #[error("path `{path}` was checked for reading, not for writing")]
    CheckedForRead {
        /// The resolved path.
        path: PathBuf,
    },
    /// A symbolic link appeared on a checked path (which had none when it was checked) before it was opened.
    #[error("path `{path}` beneath `{root}` meets a symbolic link that was not there when it was checked")]
    Changed {
        /// The path relative to the root.
        path: PathBuf,
        /// The root.
        root: PathBuf,
    },
    /// Opening failed for another reason (the file does not exist, permission denied, …).
    #[error("cannot open `{path}` beneath `{root}`")]
    Open {
        /// The path relative to the root.
        path: PathBuf,
        /// The root.
        root: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
}
