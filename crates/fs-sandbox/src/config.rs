//! What a sandbox is built from: the working directory, the home directory, extra roots and protected paths.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::protected::ProtectedPaths;

/// Everything a [`PathSandbox`](crate::PathSandbox) is built from.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// The working directory: always a root, read-write, and the base of relative paths.
    pub cwd: PathBuf,
    /// The home directory for `~` expansion; `None` makes `~` paths an error that names the path.
    pub home: Option<PathBuf>,
    /// Extra roots: the library dir, the skills dir, `additionalDirectories`.
    pub roots: Vec<RootSpec>,
    /// The protected paths: the default list and extensions from the settings.
    pub protected: ProtectedPaths,
}

impl SandboxConfig {
    /// A configuration with `cwd` as the only root, no home directory and the default protected paths.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            home: None,
            roots: Vec::new(),
            protected: ProtectedPaths::default(),
        }
    }

    /// The same configuration with `home` for `~` expansion.
    #[must_use]
    pub fn with_home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// The same configuration with one more root.
    #[must_use]
    pub fn with_root(mut self, root: RootSpec) -> Self {
        self.roots.push(root);
        self
    }

    /// The same configuration with other protected paths.
    #[must_use]
    pub fn with_protected(mut self, protected: ProtectedPaths) -> Self {
        self.protected = protected;
        self
    }
}

/// One extra root as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootSpec {
    /// The directory; relative paths are taken against the working directory.
    pub path: PathBuf,
    /// What the root is for.
    pub kind: RootKind,
    /// Whether writes beneath it are denied.
    pub read_only: bool,
}

impl RootSpec {
    /// A read-write root.
    pub fn read_write(path: impl Into<PathBuf>, kind: RootKind) -> Self {
        Self {
            path: path.into(),
            kind,
            read_only: false,
        }
    }

    /// A read-only root.
    pub fn read_only(path: impl Into<PathBuf>, kind: RootKind) -> Self {
        Self {
            path: path.into(),
            kind,
            read_only: true,
        }
    }
}

/// What a root is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RootKind {
    /// The working directory.
    Cwd,
    /// The project the working directory belongs to, when it is above it.
    Project,
    /// The library directory.
    Library,
    /// The skills directory.
    Skills,
    /// A directory from `additionalDirectories`.
    Additional,
}

impl RootKind {
    /// A short name for reasons and logs.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Cwd => "working directory",
            Self::Project => "project",
            Self::Library => "library directory",
            Self::Skills => "skills directory",
            Self::Additional => "additional directory",
        }
    }
}

/// One root of a built sandbox: a canonical directory, its kind and whether it is read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    pub(crate) path: PathBuf,
    pub(crate) given: PathBuf,
    pub(crate) kind: RootKind,
    pub(crate) read_only: bool,
}

impl Root {
    /// The canonical path of the root (absolute, no symbolic link, no `.` or `..`).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path as configured, made absolute; it may differ from [`Root::path`] when it goes through a link.
    pub fn given(&self) -> &Path {
        &self.given
    }

    /// What the root is for.
    pub const fn kind(&self) -> RootKind {
        self.kind
    }

    /// Whether writes beneath the root are denied.
    pub const fn read_only(&self) -> bool {
        self.read_only
    }
}
