//! The power an allowed call runs with: the kernel sandbox profile its decision assumed.

use serde::{Deserialize, Serialize};

/// What a command may do to the file system when it runs under the kernel sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxProfile {
    /// Reads of the roots, the system and the home directory's non-secret entries; no writes but a private
    /// temporary directory, `/dev/null` and the terminal. For a line allowed because every command is read-only.
    ReadOnly,
    /// Reads as [`SandboxProfile::ReadOnly`]; writes to the roots except their protected paths, and to the
    /// package and build caches under the home directory. For a line a rule, a mode or the user allowed.
    WorkspaceWrite,
}

impl SandboxProfile {
    /// The profile's name as the command line and the settings spell it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
        }
    }
}

impl std::fmt::Display for SandboxProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for SandboxProfile {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "read-only" => Ok(Self::ReadOnly),
            "workspace-write" => Ok(Self::WorkspaceWrite),
            other => Err(format!(
                "unknown sandbox profile `{other}` (expected `read-only` or `workspace-write`)"
            )),
        }
    }
}

/// The confinement of one allowed call: its profile, whether it may use the network, and whether git may write
/// the repositories in its roots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Confinement {
    /// What the command may do to the file system.
    pub profile: SandboxProfile,
    /// Whether it may open sockets to the outside.
    pub network: bool,
    /// Whether the inside of a repository's git directory (objects, index, refs, logs, `HEAD`) is writable, under
    /// [`SandboxProfile::WorkspaceWrite`]: only for a line whose analysis shows it runs git to write the repository
    /// (`git add`, `git commit`, …). Every other line finds `.git` read-only whole, so that the code it runs (a
    /// build, a test suite, a script) cannot delete or rewrite the history, which no snapshot of the working tree
    /// brings back. Its configuration and hooks are read-only either way.
    #[serde(default)]
    pub git_writes: bool,
    /// Whether the allow counts on `agent-guard undo` taking back what the line removes or overwrites (every
    /// contained allow, and a line allowed because undo takes back what it removes): the snapshot
    /// before it must then hold the content of every file there, and a command whose snapshot could not (a file
    /// new to the store and past the bound of what one snapshot hashes, which the decision could not know of) is
    /// not run.
    #[serde(default)]
    pub undo: bool,
    /// Whether the command runs beside the agent's other tool calls (a Bash call `run_in_background`, the
    /// runtime's background task): the coding agent's file tools act on paths its decisions checked while it
    /// runs, so in the roots it may neither make nor move a symbolic link, move anything to another directory,
    /// nor rename or remove a directory (but beneath a build output of a root, which a dev server or a watcher
    /// renames in: `node_modules`, `target`, `dist`, …). A path checked before the tool acts then still leads
    /// where it did.
    #[serde(default)]
    pub background: bool,
}

impl Confinement {
    /// The read-only confinement: no writes, no network.
    pub const READ_ONLY: Self = Self {
        profile: SandboxProfile::ReadOnly,
        network: false,
        git_writes: false,
        undo: false,
        background: false,
    };

    /// What the command may do to the repositories in its roots, in words, for a reason or `explain`; `None` under
    /// [`SandboxProfile::ReadOnly`], which writes nothing.
    pub const fn git_dir(&self) -> Option<&'static str> {
        match (self.profile, self.git_writes) {
            (SandboxProfile::ReadOnly, _) => None,
            (SandboxProfile::WorkspaceWrite, true) => Some(
                "git may write the repository (`.git` is writable but for its configuration and hooks, for \
                 git and the reading commands beside it)",
            ),
            (SandboxProfile::WorkspaceWrite, false) => Some(
                "`.git` is read-only: only a line that runs git itself to write the repository, beside commands \
                 that only read, may change its history",
            ),
        }
    }
}

/// What the proxy of a call confined with the network lets through besides the settings' domains, and the limit a
/// session's untrusted content sets on it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxyGrant {
    /// The hosts the call's decision allowed beyond the settings' own (a rule, a hook or the user allowed the line).
    pub domains: Vec<String>,
    /// The ports of this machine's loopback the line names where a command of the same project run in the
    /// background serves inside its own sandbox: the proxy reaches each in that command's namespace.
    pub services: Vec<u16>,
    /// Whether the proxy reaches those servers alone (nobody approved the line).
    pub services_only: bool,
    /// When the session has read untrusted content and nobody approved the line: the only domains it reaches.
    pub limit: Option<ProxyLimit>,
}

/// The only domains a call's proxy reaches, and why it refuses the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyLimit {
    /// The domains the session reached before, and those the line names that its decision let through.
    pub domains: Vec<String>,
    /// Why another domain is refused: the session's taint, and how to lift it.
    pub why: String,
}

impl std::fmt::Display for Confinement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let git = self.git_writes && self.profile == SandboxProfile::WorkspaceWrite;
        let extra = match (self.network, git) {
            (false, false) => "",
            (true, false) => " with network",
            (false, true) => " with git writes",
            (true, true) => " with network and git writes",
        };
        write!(f, "{}{extra}", self.profile)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for profile in [SandboxProfile::ReadOnly, SandboxProfile::WorkspaceWrite] {
            assert_eq!(profile.as_str().parse::<SandboxProfile>(), Ok(profile));
        }
        let error = "rw".parse::<SandboxProfile>().unwrap_err();
        assert!(error.contains("`rw`"), "{error}");
        assert_eq!(
            Confinement {
                profile: SandboxProfile::WorkspaceWrite,
                network: true,
                git_writes: false,
                undo: false,
                background: false,
            }
            .to_string(),
            "workspace-write with network"
        );
        let git = Confinement {
            profile: SandboxProfile::WorkspaceWrite,
            network: true,
            git_writes: true,
            undo: false,
            background: false,
        };
        assert_eq!(git.to_string(), "workspace-write with network and git writes");
        assert!(git.git_dir().is_some_and(|text| text.contains("git may write")));
        // A read-only run writes nothing, git or not.
        let read_only = Confinement {
            git_writes: true,
            ..Confinement::READ_ONLY
        };
        assert_eq!(read_only.to_string(), "read-only");
        assert_eq!(read_only.git_dir(), None);
        // Older records without the field read as `.git` read-only.
        let old: Confinement =
            serde_json::from_str(r#"{"profile":"workspace-write","network":false}"#).unwrap();
        assert!(!old.git_writes);
    }
}
