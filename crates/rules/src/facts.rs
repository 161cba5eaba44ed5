//! What the layers found out about a call, in the form the rules match against.

use std::path::Path;

use agent_tool_traits::HookOutcome;
use agent_tool_traits::{Access, Verdict};

/// One command that would run, as the shell analysis saw it.
#[derive(Debug, Clone, Copy)]
pub struct CommandFact<'a> {
    /// Its words after quote removal, wrappers included.
    pub argv: &'a [String],
    /// Where the effective command starts after wrappers (`sudo`, `env`, `timeout`, …) are unwrapped.
    pub inner: usize,
    /// Whether it is known to be read-only with these exact flags.
    pub read_only: bool,
    /// Why it is not read-only when the analysis alone found it read-only but the caller knows better (`runs code
    /// the project controls: `.cargo/config.toml` exists`), for the reason of the ask it leads to.
    pub why: Option<&'a str>,
}

/// One file a call touches.
#[derive(Debug, Clone, Copy)]
pub struct PathFact<'a> {
    /// Read or write.
    pub access: Access,
    /// The path as written, made absolute and lexically normal.
    pub written: &'a Path,
    /// The path the kernel would reach (symlinks followed), when known.
    pub resolved: Option<&'a Path>,
    /// Whether the resolved path is inside an allowed root; `None` when containment was not checked.
    pub inside_roots: Option<bool>,
}

impl PathFact<'_> {
    /// The written path and, when different, the resolved one.
    pub fn forms(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(self.written).chain(self.resolved.filter(|r| *r != self.written))
    }
}

/// Everything the rules match against: the shell commands, the files, the host, the agent type.
#[derive(Debug, Clone, Default)]
pub struct CallFacts<'a> {
    /// The commands of a shell call; `None` when the command was not analysed (it is then not known read-only).
    pub shell: Option<Vec<CommandFact<'a>>>,
    /// The files the call reads or writes.
    pub paths: Vec<PathFact<'a>>,
    /// The host of a web fetch, lowercase.
    pub host: Option<&'a str>,
    /// The subagent type of an agent call.
    pub agent: Option<&'a str>,
}

impl CallFacts<'_> {
    /// Whether every command is known read-only and nothing is written.
    pub fn shell_read_only(&self) -> bool {
        self.shell
            .as_ref()
            .is_some_and(|commands| commands.iter().all(|c| c.read_only))
            && !self.paths.iter().any(|p| p.access == Access::Write)
    }

    /// Whether every file is inside the roots (vacuously true without files).
    pub fn all_inside_roots(&self) -> bool {
        self.paths.iter().all(|p| p.inside_roots == Some(true))
    }

    /// Whether some file is written.
    pub fn writes(&self) -> bool {
        self.paths.iter().any(|p| p.access == Access::Write)
    }
}

/// One call to decide: the tool, the facts, the findings of the tool's own checks and of the layers, and the
/// hook outcome.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The tool's name, in either family.
    pub tool: &'a str,
    /// What the layers saw.
    pub facts: &'a CallFacts<'a>,
    /// Deny and ask verdicts of the tool's `check_permissions` and of the layers (steps 2 and 4).
    pub findings: &'a [Verdict],
    /// What the hooks said.
    pub hooks: &'a HookOutcome,
}
