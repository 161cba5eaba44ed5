//! The tools an agent may call, by name, in either naming family.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use agent_tool_traits::{Tool, ToolName};
use serde_json::Value;

/// What a model is shown of one tool: its name, what it does, and the JSON Schema of its arguments (the tool's own
/// [`Tool::input_schema`], the one its arguments are read by).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The tool's own name (`run_bash`, ...).
    pub name: String,
    /// What the tool does.
    pub description: String,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
}

/// The tools of an agent, keyed by canonical name ([`ToolName`]), so that `run_bash` and `Bash` find the same
/// tool. Cloning is cheap (the tools are shared).
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<ToolName, Arc<dyn Tool>>,
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.tools.values().map(|tool| tool.name()))
            .finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `tool`, replacing a tool of the same canonical name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(ToolName::new(tool.name()), tool);
    }

    /// Removes the tool called `name` (either family) and returns it.
    pub fn remove(&mut self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools.remove(&ToolName::new(name))
    }

    /// The tool called `name` (either family: `Read` finds `read_file`).
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools.get(&ToolName::new(name)).cloned()
    }

    /// Whether a tool called `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(&ToolName::new(name))
    }

    /// The tools' own names, in canonical order.
    pub fn names(&self) -> Vec<&str> {
        self.tools.values().map(|tool| tool.name()).collect()
    }

    /// What a model is shown of each tool, in canonical order: a narrowed registry (a subagent's) shows only its
    /// own tools.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .values()
            .map(|tool| ToolSpec {
                name: tool.name().to_owned(),
                description: tool.description().to_owned(),
                input_schema: tool.input_schema(),
            })
            .collect()
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// A registry holding only the tools of this one named in `names` (either family). Names of tools this
    /// registry does not have are ignored: a narrowed registry never gains a tool.
    #[must_use]
    pub fn restrict(&self, names: &[&str]) -> Self {
        let wanted: Vec<ToolName> = names.iter().map(|name| ToolName::new(name)).collect();
        let tools = self
            .tools
            .iter()
            .filter(|(name, _)| wanted.contains(name))
            .map(|(name, tool)| (name.clone(), Arc::clone(tool)))
            .collect();
        Self { tools }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_tool_traits::{ToolContext, ToolFuture, ToolOutput};
    use serde_json::Value;

    struct Named(&'static str);

    impl Tool for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn description(&self) -> &str {
            "test"
        }
        fn input_schema(&self) -> Value {
            serde_json::json!({"type": "object"})
        }
        fn call<'a>(&'a self, _args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
            Box::pin(async { Ok(ToolOutput::ok("")) })
        }
    }

    #[test]
    fn both_families_and_restrict() {
        let mut registry = ToolRegistry::new();
        for name in ["read_file", "run_bash", "mcp__x__y"] {
            registry.register(Arc::new(Named(name)));
        }
        assert_eq!(registry.get("Read").unwrap().name(), "read_file");
        assert!(registry.contains("Bash") && registry.contains("run_bash"));
        let narrow = registry.restrict(&["Read", "file_write", "mcp__x__y"]);
        assert_eq!(narrow.names(), vec!["read_file", "mcp__x__y"]);
        assert!(!narrow.contains("run_bash"));
        let specs = narrow.specs();
        assert_eq!(
            specs.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            vec!["read_file", "mcp__x__y"],
            "a narrowed registry shows only its tools"
        );
        assert_eq!(specs[0].input_schema, serde_json::json!({"type": "object"}));
        assert!(
            narrow.restrict(&["run_bash"]).is_empty(),
            "a narrowed registry never gains a tool"
        );
    }
}
