//! Tool names of both families, their aliases, and what kind of thing each tool does.

use std::borrow::Cow;
use std::fmt;

/// What a tool does, as far as the permission rules care. Decides which rule content form applies to it, which
/// path family (`Read` or `Edit`) its files belong to, and its default decision (the last step of docs/rules.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// Runs shell commands (`Bash`, `run_bash`).
    Shell,
    /// Reads one file (`Read`, `read_file`, `NotebookRead`).
    Read,
    /// Lists files by a glob (`Glob`, `glob_files`, `LS`).
    Glob,
    /// Searches file contents (`Grep`, `grep_files`).
    Grep,
    /// Creates or overwrites a file (`Write`, `file_write`).
    Write,
    /// Edits a file in place (`Edit`, `MultiEdit`, `file_edit`).
    Edit,
    /// Edits a notebook (`NotebookEdit`).
    NotebookEdit,
    /// Fetches a URL (`WebFetch`).
    WebFetch,
    /// Searches the web (`WebSearch`).
    WebSearch,
    /// Starts a subagent (`Task`, `Agent`, `subagent`).
    Agent,
    /// A tool of an MCP server (`mcp__server__tool`).
    Mcp,
    /// A tool that only talks to the user or keeps the agent's own notes (`ask_user`, `TodoWrite`, …).
    Harmless,
    /// Any other tool.
    Other,
}

impl ToolKind {
    /// Whether calls of this kind only read files.
    pub const fn reads_files(self) -> bool {
        matches!(self, Self::Read | Self::Glob | Self::Grep)
    }

    /// Whether calls of this kind write files.
    pub const fn writes_files(self) -> bool {
        matches!(self, Self::Write | Self::Edit | Self::NotebookEdit)
    }
}

/// A tool name brought to its canonical spelling: the coding agent's family (`Bash`, `Read`, …) for the tools
/// both families know, the name as written for the others.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolName(Cow<'static, str>);

/// Canonical name, kind, and aliases of every tool agent-guard knows by name.
const KNOWN: &[(&str, ToolKind, &[&str])] = &[
    ("Bash", ToolKind::Shell, &["run_bash"]),
    ("Read", ToolKind::Read, &["read_file"]),
    ("Write", ToolKind::Write, &["file_write"]),
    ("Edit", ToolKind::Edit, &["MultiEdit", "file_edit"]),
    ("Glob", ToolKind::Glob, &["glob_files", "LS"]),
    ("Grep", ToolKind::Grep, &["grep_files"]),
    ("NotebookEdit", ToolKind::NotebookEdit, &[]),
    ("NotebookRead", ToolKind::Read, &[]),
    ("WebFetch", ToolKind::WebFetch, &[]),
    ("WebSearch", ToolKind::WebSearch, &[]),
    ("Agent", ToolKind::Agent, &["Task", "subagent"]),
    ("ask_user", ToolKind::Harmless, &["AskUserQuestion"]),
    ("TodoWrite", ToolKind::Harmless, &["todo_write", "TodoRead"]),
    ("ExitPlanMode", ToolKind::Harmless, &[]),
];

impl ToolName {
    /// The canonical form of `name`: aliases map to the coding agent's names (`run_bash` → `Bash`,
    /// `MultiEdit` → `Edit`, `Task` → `Agent`); other names stay as written.
    pub fn new(name: &str) -> Self {
        // Known names borrow their static canonical spelling, so the hot path allocates only for other tools.
        Self(Self::lookup(name).map_or_else(
            || Cow::Owned(name.to_owned()),
            |(canonical, _)| Cow::Borrowed(canonical),
        ))
    }

    /// The canonical spelling.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// What the tool does.
    pub fn kind(&self) -> ToolKind {
        kind_of(&self.0)
    }

    fn lookup(name: &str) -> Option<(&'static str, ToolKind)> {
        KNOWN
            .iter()
            .find(|(canonical, _, aliases)| *canonical == name || aliases.contains(&name))
            .map(|(canonical, kind, _)| (*canonical, *kind))
    }
}

/// The kind of the tool called `name`, in either family.
pub fn kind_of(name: &str) -> ToolKind {
    match ToolName::lookup(name) {
        Some((_, kind)) => kind,
        None if name.starts_with("mcp__") => ToolKind::Mcp,
        None => ToolKind::Other,
    }
}

/// Splits an MCP tool name `mcp__server__tool` into its server and tool (the tool part may be empty).
pub(crate) fn split_mcp(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("mcp__")?;
    match rest.split_once("__") {
        Some((server, tool)) => Some((server, tool)),
        None => Some((rest, "")),
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_families_alias_to_one_name() {
        for (alias, canonical) in [
            ("run_bash", "Bash"),
            ("read_file", "Read"),
            ("file_write", "Write"),
            ("file_edit", "Edit"),
            ("MultiEdit", "Edit"),
            ("glob_files", "Glob"),
            ("grep_files", "Grep"),
            ("Task", "Agent"),
            ("subagent", "Agent"),
            ("mcp__github__list", "mcp__github__list"),
        ] {
            assert_eq!(ToolName::new(alias).as_str(), canonical, "{alias}");
        }
    }

    #[test]
    fn kinds() {
        assert_eq!(kind_of("run_bash"), ToolKind::Shell);
        assert_eq!(kind_of("mcp__x__y"), ToolKind::Mcp);
        assert_eq!(kind_of("bash"), ToolKind::Other, "names are case-sensitive");
        assert!(kind_of("Grep").reads_files() && kind_of("MultiEdit").writes_files());
        assert_eq!(
            split_mcp("mcp__github__create_issue"),
            Some(("github", "create_issue"))
        );
        assert_eq!(split_mcp("mcp__github"), Some(("github", "")));
    }
}
