//! The coding agent's PreToolUse hook protocol: the input on stdin and the decision on stdout.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use agent_tool_traits::Verdict;

use crate::error::{Error, Result};

/// One PreToolUse hook input. Unknown fields are ignored.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct HookInput {
    /// The coding agent's session.
    #[serde(default)]
    pub session_id: String,
    /// The working directory of the call: the sandbox's root.
    pub cwd: String,
    /// The coding agent's permission mode.
    #[serde(default)]
    pub permission_mode: Option<String>,
    /// `PreToolUse`.
    #[serde(default)]
    pub hook_event_name: Option<String>,
    /// The tool's name.
    pub tool_name: String,
    /// The tool's arguments.
    #[serde(default)]
    pub tool_input: Value,
}

impl HookInput {
    /// Parses one input; the error says what is missing or malformed.
    pub fn parse(text: &str) -> Result<Self> {
        let input: Self = serde_json::from_str(text).map_err(|e| Error::Input(e.to_string()))?;
        if input.tool_name.is_empty() {
            return Err(Error::Input("`tool_name` is empty".to_owned()));
        }
        if input.cwd.is_empty() {
            return Err(Error::Input("`cwd` is empty".to_owned()));
        }
        if let Some(event) = input.hook_event_name.as_deref()
            && event != "PreToolUse"
        {
            return Err(Error::Input(format!(
                "`hook_event_name` is `{event}`; only `PreToolUse` is decided"
            )));
        }
        Ok(input)
    }
}

/// The decision line printed for one input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookOutput {
    #[serde(rename = "hookSpecificOutput")]
    hook_specific_output: Specific,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Specific {
    hook_event_name: &'static str,
    permission_decision: &'static str,
    permission_decision_reason: String,
}

impl HookOutput {
    /// The output for `verdict`.
    pub fn from_verdict(verdict: &Verdict) -> Self {
        Self {
            hook_specific_output: Specific {
                hook_event_name: "PreToolUse",
                permission_decision: verdict.decision.as_str(),
                permission_decision_reason: format!("agent-guard: {}", verdict.reason()),
            },
        }
    }

    /// The decision as printed.
    pub fn decision(&self) -> &str {
        self.hook_specific_output.permission_decision
    }

    /// One JSON line.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| {
            // Serialising plain strings cannot fail; a failure would still print a strict decision.
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"agent-guard: output error"}}"#.to_owned()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_tool_traits::{Decision, Layer, Provenance};

    #[test]
    fn parses_and_ignores_unknown_fields() {
        let input = HookInput::parse(
            r#"{"session_id":"s","cwd":"/p","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"transcript_path":"/t"}"#,
        )
        .unwrap();
        assert_eq!(input.tool_name, "Bash");
        assert!(
            HookInput::parse("{}")
                .unwrap_err()
                .to_string()
                .contains("missing field")
        );
        assert!(HookInput::parse(r#"{"cwd":"/p","tool_name":"Bash","hook_event_name":"Stop"}"#).is_err());
        assert!(HookInput::parse("not json").is_err());
    }

    #[test]
    fn output_shape() {
        let v = Verdict::new(Decision::Ask, "why", Provenance::layer(Layer::Rules));
        assert_eq!(
            HookOutput::from_verdict(&v).to_json(),
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"agent-guard: why"}}"#
        );
    }
}
