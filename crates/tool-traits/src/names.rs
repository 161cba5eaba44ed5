//! The one table of tool names: each tool agent-guard knows by name, its aliases in both naming families (the
//! coding agent's `Bash`, `Read`, … and the runtime's `run_bash`, `read_file`, …) and what kind of thing it does.
//! The rules, the hook matchers and the decision all read names through it, so they cannot disagree about which
//! tool a call is.

use std::borrow::Cow;
use std::fmt;

/// What a tool does, as far as permissions care. Decides which rule content form applies to it, which path family
/// (`Read` or `Edit`) its files belong to, and its default decision (the last step of docs/rules.md).
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
    /// A tool that only talks to the user, keeps the agent's own notes or tends the agent's own background shells
    /// (`ask_user`, `TodoWrite`, `BashOutput`, …).
    Harmless,
    /// Any other tool, known by name (`SlashCommand`, `Skill`: they run user-defined instructions) or not.
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

/// One tool agent-guard knows by name.
struct Known {
    /// The canonical name.
    name: &'static str,
    /// What it does.
    kind: ToolKind,
    /// Every other name of the same tool, in either family. A rule or a hook matcher naming any of them names
    /// the tool.
    aliases: &'static [&'static str],
    /// The runtime's own name for the tool and the name the coding agent gives it, which a hook script written
    /// for the coding agent expects in `tool_name`.
    runtime: Option<(&'static str, &'static str)>,
}

/// Every tool agent-guard knows by name. The runtime's name of a tool is one of its aliases too.
const KNOWN: &[Known] = &[
    Known {
        name: "Bash",
        kind: ToolKind::Shell,
        aliases: &["run_bash"],
        runtime: Some(("run_bash", "Bash")),
    },
    Known {
        name: "Read",
        kind: ToolKind::Read,
        aliases: &["read_file"],
        runtime: Some(("read_file", "Read")),
    },
    Known {
        name: "Write",
        kind: ToolKind::Write,
        aliases: &["file_write"],
        runtime: Some(("file_write", "Write")),
    },
    Known {
        name: "Edit",
        kind: ToolKind::Edit,
        aliases: &["MultiEdit", "file_edit"],
        runtime: Some(("file_edit", "Edit")),
    },
    Known {
        name: "Glob",
        kind: ToolKind::Glob,
        aliases: &["glob_files", "LS"],
        runtime: Some(("glob_files", "Glob")),
    },
    Known {
        name: "Grep",
        kind: ToolKind::Grep,
        aliases: &["grep_files"],
        runtime: Some(("grep_files", "Grep")),
    },
    Known {
        name: "NotebookEdit",
        kind: ToolKind::NotebookEdit,
        aliases: &[],
        runtime: None,
    },
    Known {
        name: "NotebookRead",
        kind: ToolKind::Read,
        aliases: &[],
        runtime: None,
    },
    Known {
        name: "WebFetch",
        kind: ToolKind::WebFetch,
        aliases: &[],
        runtime: None,
    },
    Known {
        name: "WebSearch",
        kind: ToolKind::WebSearch,
        aliases: &[],
        runtime: None,
    },
    Known {
        name: "Agent",
        kind: ToolKind::Agent,
        aliases: &["Task", "subagent"],
        runtime: Some(("subagent", "Task")),
    },
    Known {
        name: "ask_user",
        kind: ToolKind::Harmless,
        aliases: &["AskUserQuestion"],
        runtime: None,
    },
    Known {
        name: "TodoWrite",
        kind: ToolKind::Harmless,
        aliases: &["todo_write", "TodoRead"],
        runtime: None,
    },
    Known {
        name: "ExitPlanMode",
        kind: ToolKind::Harmless,
        aliases: &[],
        runtime: None,
    },
    // Reads the output of a background shell the agent started; the command itself was decided when it started.
    Known {
        name: "BashOutput",
        kind: ToolKind::Harmless,
        aliases: &[],
        runtime: None,
    },
    // Ends a background shell the agent started (it takes the id of one of the agent's own shells): stopping a
    // command that was already decided can reach nothing that command could not.
    Known {
        name: "KillShell",
        kind: ToolKind::Harmless,
        aliases: &[],
        runtime: None,
    },
    // Lists the resources the configured MCP servers offer: their names, not their content.
    Known {
        name: "ListMcpResourcesTool",
        kind: ToolKind::Harmless,
        aliases: &[],
        runtime: None,
    },
    // Reads a resource from an MCP server: the server decides what it returns, so it is decided like an MCP tool.
    Known {
        name: "ReadMcpResourceTool",
        kind: ToolKind::Mcp,
        aliases: &[],
        runtime: None,
    },
    // Runs a user-defined slash command or skill: a file (possibly the repository's own) whose frontmatter can
    // pre-approve tools and whose `!` lines the coding agent runs as shell commands without a tool call this guard
    // sees. It asks unless a rule (`SlashCommand`, `Skill`) allows it.
    Known {
        name: "SlashCommand",
        kind: ToolKind::Other,
        aliases: &[],
        runtime: None,
    },
    Known {
        name: "Skill",
        kind: ToolKind::Other,
        aliases: &[],
        runtime: None,
    },
];

impl ToolName {
    /// The canonical form of `name`: aliases map to the coding agent's names (`run_bash` → `Bash`,
    /// `MultiEdit` → `Edit`, `Task` → `Agent`); other names stay as written. Names are case-sensitive.
    pub fn new(name: &str) -> Self {
        // Known names borrow their static canonical spelling, so the hot path allocates only for other tools.
        Self(known(name).map_or_else(|| Cow::Owned(name.to_owned()), |tool| Cow::Borrowed(tool.name)))
    }

    /// The canonical spelling.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// What the tool does.
    pub fn kind(&self) -> ToolKind {
        kind_of(&self.0)
    }

    /// Whether the table knows the tool (by its canonical name or an alias).
    pub fn is_known(&self) -> bool {
        known(&self.0).is_some()
    }

    /// Every name the table knows, canonical names and aliases, in both families: the names a rule may use.
    pub fn known_names() -> impl Iterator<Item = &'static str> {
        KNOWN
            .iter()
            .flat_map(|tool| std::iter::once(tool.name).chain(tool.aliases.iter().copied()))
    }

    /// Every name of the tool: the canonical one first, then its aliases (just the name for a tool the table does
    /// not know).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        let aliases = known(&self.0).map_or(&[][..], |tool| tool.aliases);
        std::iter::once(self.as_str()).chain(aliases.iter().copied())
    }
}

/// The kind of the tool called `name`, in either family.
pub fn kind_of(name: &str) -> ToolKind {
    match known(name) {
        Some(tool) => tool.kind,
        None if name.starts_with("mcp__") => ToolKind::Mcp,
        None => ToolKind::Other,
    }
}

/// The name the coding agent gives the tool called `name`: the counterpart of one of the runtime's own tools
/// (`run_bash` → `Bash`, `subagent` → `Task`), any other name as written. A hook script written for the coding
/// agent sees this name.
pub fn coding_agent_name(name: &str) -> &str {
    KNOWN
        .iter()
        .find_map(|tool| tool.runtime.filter(|(runtime, _)| *runtime == name))
        .map_or(name, |(_, agent)| agent)
}

/// The table's entry of the tool called `name`, by its canonical name or an alias.
fn known(name: &str) -> Option<&'static Known> {
    KNOWN
        .iter()
        .find(|tool| tool.name == name || tool.aliases.contains(&name))
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
            ("LS", "Glob"),
            ("grep_files", "Grep"),
            ("Task", "Agent"),
            ("subagent", "Agent"),
            ("AskUserQuestion", "ask_user"),
            ("TodoRead", "TodoWrite"),
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
    }

    #[test]
    fn every_name_of_a_tool_leads_back_to_it() {
        for tool in KNOWN {
            let name = ToolName::new(tool.name);
            let names: Vec<&str> = name.names().collect();
            assert_eq!(names.first(), Some(&tool.name));
            for other in &names {
                assert_eq!(ToolName::new(other), name, "{other}");
                assert_eq!(kind_of(other), tool.kind, "{other}");
            }
            if let Some((runtime, agent)) = tool.runtime {
                assert!(
                    names.contains(&runtime) && names.contains(&agent),
                    "{}",
                    tool.name
                );
            }
        }
        assert_eq!(
            ToolName::new("mcp__x__y").names().collect::<Vec<_>>(),
            ["mcp__x__y"]
        );
    }

    #[test]
    fn hook_scripts_see_the_coding_agents_names() {
        for (name, shown) in [
            ("run_bash", "Bash"),
            ("file_edit", "Edit"),
            ("subagent", "Task"),
            ("Bash", "Bash"),
            ("MultiEdit", "MultiEdit"),
            ("ask_user", "ask_user"),
            ("mcp__x__y", "mcp__x__y"),
        ] {
            assert_eq!(coding_agent_name(name), shown, "{name}");
        }
    }
}
