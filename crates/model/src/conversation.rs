//! The conversation a model is sent, in neither protocol's shape: rebuilt at each turn from the steps the runtime
//! shows the model, so that a compaction or a rewritten call is what the model sees next.

use agent_core::StepRecord;
use agent_tool_traits::ToolCall;

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Entry {
    /// Text from the user or the runtime (the task, a notice, a summary, a reminder).
    User(String),
    /// A turn of the model: its text and the calls it made.
    Assistant { text: String, calls: Vec<ToolCall> },
    /// The results of the calls of the turn before, in its order.
    Results(Vec<ToolResult>),
}

/// The result of one call, as the model sees it: the output after the hooks, a denial with its reason.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolResult {
    pub(crate) id: String,
    pub(crate) content: String,
    pub(crate) is_error: bool,
}

/// What a model keeps of its session beside the steps the runtime shows it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Transcript {
    /// The task.
    pub(crate) task: String,
    /// The summary of the steps compacted away.
    pub(crate) summary: Option<String>,
    /// Messages the runtime injected, each after the step it followed (0: before the first).
    pub(crate) notices: Vec<(u32, String)>,
    /// The model's text beside its calls, by the id of the turn's first call.
    pub(crate) texts: std::collections::HashMap<String, String>,
    /// Turns with calls so far: each is one step of the runtime.
    pub(crate) steps: u32,
    /// The ids of every call so far.
    pub(crate) ids: std::collections::HashSet<String>,
}

impl Transcript {
    /// Gives each of `calls` (the next turn's) an id unique in the session: some servers number the calls of each
    /// answer from 0 again, and the runtime, the audit log and the conversation tell calls apart by id.
    pub(crate) fn unique_ids(&mut self, calls: &mut [ToolCall]) {
        let turn = self.steps.saturating_add(1);
        for (index, call) in calls.iter_mut().enumerate() {
            if !self.ids.insert(call.id.clone()) {
                call.id = format!("call-{turn}-{index}");
                while !self.ids.insert(call.id.clone()) {
                    call.id.push('x');
                }
            }
        }
    }

    /// The conversation for `history` (the steps shown whole), then `extra` (a reminder or an instruction).
    pub(crate) fn entries(&self, history: &[StepRecord], extra: Option<&str>) -> Vec<Entry> {
        let mut entries = vec![Entry::User(self.task.clone())];
        if let Some(summary) = &self.summary {
            entries.push(Entry::User(summary.clone()));
        }
        let first = history.first().map_or(u32::MAX, |s| s.step);
        let mut notices = self.notices.iter().peekable();
        while let Some((_, text)) = notices.next_if(|(after, _)| *after < first) {
            entries.push(Entry::User(text.clone()));
        }
        for step in history {
            let calls: Vec<ToolCall> = step.calls.iter().map(|r| r.call.clone()).collect();
            let text = calls
                .first()
                .and_then(|c| self.texts.get(&c.id))
                .cloned()
                .unwrap_or_default();
            let results = step
                .calls
                .iter()
                .map(|r| ToolResult {
                    id: r.call.id.clone(),
                    content: r.output.content.clone(),
                    is_error: r.output.is_error,
                })
                .collect();
            entries.push(Entry::Assistant { text, calls });
            entries.push(Entry::Results(results));
            while let Some((_, text)) = notices.next_if(|(after, _)| *after <= step.step) {
                entries.push(Entry::User(text.clone()));
            }
        }
        entries.extend(notices.map(|(_, text)| Entry::User(text.clone())));
        if let Some(extra) = extra {
            entries.push(Entry::User(extra.to_owned()));
        }
        entries
    }
}

/// A call the model made, ready for the runtime: an id (one is made when the server sent none) and arguments
/// parsed from their JSON text. Arguments that are not JSON are kept as the text, which no tool accepts, so the
/// model is told its call was malformed.
pub(crate) fn call(id: &str, name: &str, arguments: &str, fallback_id: String) -> ToolCall {
    let id = if id.is_empty() { fallback_id } else { id.to_owned() };
    let args = if arguments.trim().is_empty() {
        serde_json::json!({})
    } else {
        serde_json::from_str(arguments).unwrap_or_else(|_| serde_json::Value::String(arguments.to_owned()))
    };
    ToolCall::new(id, name, args)
}
