//! Errors of preparing and starting a sandboxed command.

use std::path::PathBuf;

/// Why a command could not be put in the sandbox. Running it without the sandbox is never the fallback.
#[derive(Debug, thiserror::Error)]
pub enum KernelSandboxError {
    /// The kernel cannot enforce what the profile needs.
    #[error("the kernel cannot enforce the sandbox: {0}")]
    Unsupported(String),
    /// A root does not exist or is not a directory.
    #[error("root `{path}` is not a directory: {source}")]
    Root {
        /// The root as given.
        path: PathBuf,
        /// What the file system said.
        #[source]
        source: std::io::Error,
    },
    /// The Landlock ruleset could not be built.
    #[error("cannot build the Landlock ruleset: {0}")]
    Landlock(String),
    /// The seccomp filter could not be built.
    #[error("cannot build the seccomp filter: {0}")]
    Seccomp(String),
    /// A path holds a NUL byte and cannot be given to the kernel.
    #[error("path `{0}` holds a NUL byte")]
    NulInPath(PathBuf),
    /// The private scratch directory could not be made.
    #[error("cannot make the sandbox's temporary directory: {0}")]
    Scratch(#[source] std::io::Error),
    /// The pipe that tells the command's wait status from inside its namespaces could not be made.
    #[error("cannot make the pipe of the command's status: {0}")]
    StatusPipe(#[source] std::io::Error),
    /// The network proxy of a command allowed the network could not be started.
    #[error("cannot start the network proxy: {0}")]
    Proxy(#[source] std::io::Error),
    /// A pattern of the environment settings is not valid.
    #[error("environment pattern `{0}` is not a name with `*` wildcards")]
    EnvPattern(String),
    /// The command could not be started.
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The crate's result.
pub type Result<T, E = KernelSandboxError> = std::result::Result<T, E>;
