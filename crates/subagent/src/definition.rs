//! The types of subagents and the request that starts one.

use agent_rules::PermissionMode;
use serde_json::Value;

use crate::error::SubagentError;

/// A type of subagent: its name, what it is for, the tools it may have at most and the mode it asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDefinition {
    /// The type's name (`explore`).
    pub name: String,
    /// What it does, given to the child as its system prompt.
    pub description: String,
    /// The tools it may have (either family of names); `None`: every tool of its parent.
    pub tools: Option<Vec<String>>,
    /// The mode it asks for; it still never gets one looser than its parent's.
    pub mode: Option<PermissionMode>,
}

impl AgentDefinition {
    /// A read-only explorer: reads, searches and lists files, nothing else.
    pub fn explore() -> Self {
        Self {
            name: "explore".to_owned(),
            description:
                "You explore a code base read-only: read, search and list files, then report what you \
                          found. You cannot change anything and there is no user to ask."
                    .to_owned(),
            tools: Some(vec![
                "read_file".to_owned(),
                "grep_files".to_owned(),
                "glob_files".to_owned(),
            ]),
            mode: None,
        }
    }

    /// A general-purpose child with its parent's tools.
    pub fn general() -> Self {
        Self {
            name: "general".to_owned(),
            description:
                "You carry out one task with your parent's tools and report the result. There is no \
                          user to ask."
                    .to_owned(),
            tools: None,
            mode: None,
        }
    }

    /// The built-in type called `name`.
    pub fn builtin(name: &str) -> Result<Self, SubagentError> {
        match name {
            "explore" | "Explore" => Ok(Self::explore()),
            "general" | "general-purpose" => Ok(Self::general()),
            other => Err(SubagentError::UnknownAgent(other.to_owned())),
        }
    }
}

/// The arguments of a `subagent` (`Task`/`Agent`) call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentRequest {
    /// The type of subagent (`subagent_type`, `agent` or `name`; default `general`).
    pub agent: String,
    /// The task (`prompt`, `task` or `description`).
    pub prompt: String,
    /// Tools to narrow the child to further (`tools`).
    pub tools: Option<Vec<String>>,
    /// The mode the caller asks for (`mode`).
    pub mode: Option<PermissionMode>,
}

impl SubagentRequest {
    /// Reads a request from a call's arguments; other keys are ignored.
    pub fn from_args(args: &Value) -> Result<Self, SubagentError> {
        let text = |keys: &[&str]| -> Result<Option<String>, SubagentError> {
            match keys.iter().find_map(|key| args.get(*key)) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(text)) => Ok(Some(text.clone())),
                Some(other) => Err(SubagentError::InvalidRequest(format!(
                    "`{}` must be a string, not `{other}`",
                    keys.first().copied().unwrap_or_default()
                ))),
            }
        };
        let prompt = text(&["prompt", "task", "description"])?
            .ok_or_else(|| SubagentError::InvalidRequest("missing `prompt`".to_owned()))?;
        let agent = text(&["subagent_type", "agent", "name"])?.unwrap_or_else(|| "general".to_owned());
        let mode = match text(&["mode"])? {
            None => None,
            Some(mode) => Some(
                mode.parse::<PermissionMode>()
                    .map_err(|_| SubagentError::InvalidRequest(format!("unknown mode `{mode}`")))?,
            ),
        };
        let tools = match args.get("tools") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .map(|item| {
                        item.as_str().map(str::to_owned).ok_or_else(|| {
                            SubagentError::InvalidRequest(format!("`tools` must hold names, not `{item}`"))
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Some(other) => {
                return Err(SubagentError::InvalidRequest(format!(
                    "`tools` must be a list of names, not `{other}`"
                )));
            }
        };
        Ok(Self {
            agent,
            prompt,
            tools,
            mode,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requests_of_both_families_parse() {
        let task =
            SubagentRequest::from_args(&json!({"subagent_type": "explore", "prompt": "look"})).unwrap();
        assert_eq!((task.agent.as_str(), task.prompt.as_str()), ("explore", "look"));
        let agent = SubagentRequest::from_args(
            &json!({"agent": "general", "task": "x", "tools": ["Read"], "mode": "plan"}),
        )
        .unwrap();
        assert_eq!(agent.tools, Some(vec!["Read".to_owned()]));
        assert_eq!(agent.mode, Some(PermissionMode::Plan));
    }

    #[test]
    fn bad_requests_name_the_offending_input() {
        let error = SubagentRequest::from_args(&json!({"agent": "x"})).unwrap_err();
        assert!(error.to_string().contains("`prompt`"));
        let error = SubagentRequest::from_args(&json!({"prompt": "x", "mode": "godMode"})).unwrap_err();
        assert!(error.to_string().contains("`godMode`"));
        let error = SubagentRequest::from_args(&json!({"prompt": "x", "tools": "Read"})).unwrap_err();
        assert!(error.to_string().contains("`tools`"));
        assert!(
            AgentDefinition::builtin("root")
                .unwrap_err()
                .to_string()
                .contains("`root`")
        );
    }
}
