//! The plan of a child: its messages, its tools and its mode, each no wider than its parent's.

use agent_rules::PermissionMode;
use agent_tool_traits::ToolName;

use crate::definition::{AgentDefinition, SubagentRequest};

/// The canonical name of the tool that starts subagents; a child never gets it, so children do not nest.
const SUBAGENT_TOOL: &str = "subagent";

/// Who a message of the child's fresh conversation is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildRole {
    /// The system prompt.
    System,
    /// The task.
    User,
}

/// One message of the child's fresh conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildMessage {
    /// Who it is from.
    pub role: ChildRole,
    /// Its text.
    pub content: String,
}

/// Everything a child starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildPlan {
    /// The child's agent name (its type), in hook events and audit rows.
    pub name: String,
    /// Its fresh messages: the system prompt and the task, nothing of the parent's conversation.
    pub messages: Vec<ChildMessage>,
    /// Its tools (the parent's names), a subset of the parent's without the `subagent` tool.
    pub tools: Vec<String>,
    /// Its mode: never looser than the parent's.
    pub mode: PermissionMode,
    /// Whether its asks go to the parent's approver (`bubble`) instead of being denied.
    pub bubble: bool,
    /// Always `true`: a child has no user of its own (`ask_user` fails).
    pub silent: bool,
}

/// How strict a mode is, for choosing the stricter of two: `bypassPermissions` 0, `auto` 1, `acceptEdits` 2,
/// `default` and `bubble` 3, `dontAsk` 4, `plan` 5. Modes are not totally ordered in what they allow (`plan`
/// denies writes an allow rule permits, `dontAsk` denies asks `plan` keeps), which is why the runtime also
/// decides each child call under the parent's mode and keeps the stricter decision.
pub(crate) const fn mode_strictness(mode: PermissionMode) -> u8 {
    match mode {
        PermissionMode::BypassPermissions => 0,
        PermissionMode::Auto => 1,
        PermissionMode::AcceptEdits => 2,
        PermissionMode::Default | PermissionMode::Bubble => 3,
        PermissionMode::DontAsk => 4,
        PermissionMode::Plan => 5,
    }
}

/// The mode of a child of a `parent` asking for `requested`: the stricter of the two, the parent's on a tie
/// (except that a child may ask for `bubble` under a `default` parent: its asks then reach the same approver the
/// parent's do). A child can never raise its mode.
pub fn child_mode(parent: PermissionMode, requested: Option<PermissionMode>) -> PermissionMode {
    match requested {
        None => parent,
        Some(PermissionMode::Bubble) if parent == PermissionMode::Default => PermissionMode::Bubble,
        Some(mode) if mode_strictness(mode) > mode_strictness(parent) => mode,
        Some(_) => parent,
    }
}

/// The tools of `parent_tools` (in their order and spelling) that every list of `limits` names (either family),
/// without the `subagent` tool. `None` in `limits` does not narrow.
pub fn narrow_tools(parent_tools: &[&str], limits: &[Option<&[String]>]) -> Vec<String> {
    let subagent = ToolName::new(SUBAGENT_TOOL);
    parent_tools
        .iter()
        .filter(|tool| {
            let name = ToolName::new(tool);
            name != subagent
                && limits.iter().all(|limit| {
                    limit.is_none_or(|names| names.iter().any(|allowed| ToolName::new(allowed) == name))
                })
        })
        .map(|tool| (*tool).to_owned())
        .collect()
}

/// The plan of a child of type `definition` that `request` starts under a parent in `parent_mode` with
/// `parent_tools`.
pub fn plan_child(
    parent_mode: PermissionMode,
    parent_tools: &[&str],
    definition: &AgentDefinition,
    request: &SubagentRequest,
) -> ChildPlan {
    let mode = child_mode(child_mode(parent_mode, definition.mode), request.mode);
    let bubble = mode == PermissionMode::Bubble
        || parent_mode == PermissionMode::Bubble
        || request.mode == Some(PermissionMode::Bubble);
    let tools = narrow_tools(
        parent_tools,
        &[definition.tools.as_deref(), request.tools.as_deref()],
    );
    ChildPlan {
        name: definition.name.clone(),
        messages: vec![
            ChildMessage {
                role: ChildRole::System,
                content: definition.description.clone(),
            },
            ChildMessage {
                role: ChildRole::User,
                content: request.prompt.clone(),
            },
        ],
        tools,
        mode,
        bubble,
        silent: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MODES: [PermissionMode; 7] = [
        PermissionMode::DontAsk,
        PermissionMode::Plan,
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Auto,
        PermissionMode::BypassPermissions,
        PermissionMode::Bubble,
    ];

    fn request(tools: Option<&[&str]>, mode: Option<PermissionMode>) -> SubagentRequest {
        SubagentRequest {
            agent: "general".to_owned(),
            prompt: "do it".to_owned(),
            tools: tools.map(|t| t.iter().map(|s| (*s).to_owned()).collect()),
            mode,
        }
    }

    #[test]
    fn a_bypass_parent_can_start_a_restricted_child_and_a_child_cannot_raise_its_mode() {
        assert_eq!(
            child_mode(PermissionMode::BypassPermissions, Some(PermissionMode::Plan)),
            PermissionMode::Plan
        );
        assert_eq!(
            child_mode(PermissionMode::Plan, Some(PermissionMode::BypassPermissions)),
            PermissionMode::Plan
        );
        assert_eq!(
            child_mode(PermissionMode::Default, Some(PermissionMode::Auto)),
            PermissionMode::Default
        );
        assert_eq!(
            child_mode(PermissionMode::AcceptEdits, None),
            PermissionMode::AcceptEdits
        );
        assert_eq!(
            child_mode(PermissionMode::Default, Some(PermissionMode::Bubble)),
            PermissionMode::Bubble
        );
        assert_eq!(
            child_mode(PermissionMode::DontAsk, Some(PermissionMode::Bubble)),
            PermissionMode::DontAsk
        );
    }

    #[test]
    fn tools_only_narrow_and_never_include_the_subagent_tool() {
        let parent = ["Read", "run_bash", "file_write", "subagent"];
        let general = narrow_tools(&parent, &[None]);
        assert_eq!(general, vec!["Read", "run_bash", "file_write"]);
        let wanted = vec![
            "read_file".to_owned(),
            "Bash".to_owned(),
            "WebFetch".to_owned(),
            "Task".to_owned(),
        ];
        assert_eq!(
            narrow_tools(&parent, &[Some(&wanted)]),
            vec!["Read", "run_bash"],
            "WebFetch is not the parent's"
        );
        let explore = AgentDefinition::explore();
        let child = plan_child(
            PermissionMode::Default,
            &parent,
            &explore,
            &request(Some(&["Bash"]), None),
        );
        assert!(
            child.tools.is_empty(),
            "the request narrows the definition, it never widens it"
        );
    }

    #[test]
    fn the_child_starts_with_fresh_messages_in_a_silent_context() {
        let child = plan_child(
            PermissionMode::BypassPermissions,
            &["read_file"],
            &AgentDefinition::explore(),
            &request(None, Some(PermissionMode::Bubble)),
        );
        assert_eq!(child.messages.len(), 2);
        assert_eq!(child.messages[0].role, ChildRole::System);
        assert_eq!(child.messages[1].content, "do it");
        assert!(child.silent && child.bubble);
        assert_eq!(child.name, "explore");
    }

    proptest! {
        #[test]
        fn a_child_mode_is_never_looser_than_its_parents(
            parent in 0..MODES.len(), own in proptest::option::of(0..MODES.len()),
            asked in proptest::option::of(0..MODES.len()),
        ) {
            let parent = MODES[parent];
            let definition = AgentDefinition { mode: own.map(|i| MODES[i]), ..AgentDefinition::general() };
            let child = plan_child(parent, &["read_file"], &definition, &request(None, asked.map(|i| MODES[i])));
            prop_assert!(mode_strictness(child.mode) >= mode_strictness(parent));
            prop_assert!(child.mode == parent || mode_strictness(child.mode) > mode_strictness(parent)
                || child.mode == PermissionMode::Bubble);
        }

        #[test]
        fn a_child_tool_is_always_a_parent_tool(
            parent in proptest::collection::vec(proptest::sample::select(vec![
                "Read", "read_file", "Bash", "Write", "Edit", "Glob", "grep_files", "subagent", "mcp__x__y",
            ]), 0..6),
            asked in proptest::option::of(proptest::collection::vec(proptest::sample::select(vec![
                "Read", "run_bash", "file_write", "Task", "Agent", "mcp__x__y", "WebFetch",
            ]), 0..5)),
        ) {
            let asked: Option<Vec<String>> = asked.map(|a| a.into_iter().map(str::to_owned).collect());
            let child = narrow_tools(&parent, &[asked.as_deref()]);
            for tool in &child {
                prop_assert!(parent.contains(&tool.as_str()));
                prop_assert!(ToolName::new(tool) != ToolName::new("subagent"));
            }
        }
    }
}
