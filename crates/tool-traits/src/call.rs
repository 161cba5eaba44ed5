//! A tool call as the model asked for it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::names::ToolName;

/// One call of a tool: the identifier the model gave it, the tool's name (in either naming family, `Bash` or
/// `run_bash`) and its JSON arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The identifier of the call, unique within a session.
    pub id: String,
    /// The tool's name as the model wrote it.
    pub name: String,
    /// The arguments, a JSON object for every well-formed call.
    pub args: Value,
}

impl ToolCall {
    /// A call of `name` with `args`.
    pub fn new(id: impl Into<String>, name: impl Into<String>, args: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            args,
        }
    }

    /// The tool's canonical name (`Bash` for a call of `run_bash`), read from the one table of tool names: what
    /// rules, hook matchers, the tool registry and the duplicate detector compare, so that none of them reads
    /// the name its own way.
    pub fn tool(&self) -> ToolName {
        ToolName::new(&self.name)
    }

    /// The string argument `key`, when the arguments are an object holding a string there.
    pub fn str_arg(&self, key: &str) -> Option<&str> {
        self.args.get(key).and_then(Value::as_str)
    }
}
