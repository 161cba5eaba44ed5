//! Tool names as the rules use them: the one table of names and kinds lives in `agent-tool-traits`; this file adds
//! the split of an MCP tool name into its server and tool.

pub(crate) use agent_tool_traits::ToolName;
pub(crate) use agent_tool_traits::{ToolKind, kind_of};

/// Splits an MCP tool name `mcp__server__tool` into its server and tool (the tool part may be empty).
pub fn split_mcp(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("mcp__")?;
    match rest.split_once("__") {
        Some((server, tool)) => Some((server, tool)),
        None => Some((rest, "")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_names_split_into_server_and_tool() {
        assert_eq!(
            split_mcp("mcp__github__create_issue"),
            Some(("github", "create_issue"))
        );
        assert_eq!(split_mcp("mcp__github"), Some(("github", "")));
        assert_eq!(split_mcp("Bash"), None);
    }
}
