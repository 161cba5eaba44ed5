//! The OpenAI-compatible Chat Completions protocol: `messages` with `tool_calls` and `tool` results, `tools` of
//! type `function`, and a streamed answer whose `delta.tool_calls` carry each call's arguments in pieces.

use std::collections::BTreeMap;

use agent_core::ToolSpec;
use serde_json::{Value, json};

use crate::conversation::{Entry, call};
use crate::reply::{Reply, StreamError, ToolChoice};

/// The request body.
pub(crate) fn body(
    model: &str,
    system: Option<&str>,
    entries: &[Entry],
    tools: &[ToolSpec],
    choice: ToolChoice,
    stream: bool,
) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for entry in entries {
        match entry {
            Entry::User(text) => messages.push(json!({"role": "user", "content": text})),
            Entry::Assistant { text, calls } => {
                let mut message = json!({
                    "role": "assistant",
                    "content": if text.is_empty() { Value::Null } else { Value::String(text.clone()) },
                });
                if !calls.is_empty() {
                    let calls: Value = calls
                        .iter()
                        .map(|c| {
                            let arguments = match &c.args {
                                Value::String(raw) => raw.clone(),
                                other => other.to_string(),
                            };
                            json!({"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": arguments}})
                        })
                        .collect();
                    set(&mut message, "tool_calls", calls);
                }
                messages.push(message);
            }
            Entry::Results(results) => {
                for result in results {
                    messages
                        .push(json!({"role": "tool", "tool_call_id": result.id, "content": result.content}));
                }
            }
        }
    }
    let mut body = json!({"model": model, "messages": messages, "stream": stream});
    if stream {
        // The last chunk then carries the usage, with empty `choices`.
        set(&mut body, "stream_options", json!({"include_usage": true}));
    }
    if !tools.is_empty() {
        let tools: Value = tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.input_schema}})
            })
            .collect();
        set(&mut body, "tools", tools);
        if choice == ToolChoice::None {
            set(&mut body, "tool_choice", json!("none"));
        }
    }
    body
}

/// Sets `key` of the object `object`.
fn set(object: &mut Value, key: &str, value: Value) {
    if let Some(fields) = object.as_object_mut() {
        fields.insert(key.to_owned(), value);
    }
}

/// The tokens of a `usage` object: the prompt and the completion.
fn tokens(usage: &Value) -> Option<u64> {
    let prompt = usage.get("prompt_tokens").and_then(Value::as_u64)?;
    let completion = usage
        .get("completion_tokens")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Some(prompt.saturating_add(completion))
}

/// A whole (not streamed) answer.
pub(crate) fn parse(body: &Value, turn: u32) -> Result<Reply, String> {
    let message = body
        .get("choices")
        .and_then(|c| c.get(0))
        .and_then(|c| c.get("message"))
        .ok_or_else(|| format!("no `choices[0].message` in {}", excerpt(&body.to_string())))?;
    let text = message
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let mut calls = Vec::new();
    if let Some(list) = message.get("tool_calls").and_then(Value::as_array) {
        for (index, c) in list.iter().enumerate() {
            let function = c.get("function").unwrap_or(&Value::Null);
            let name = function.get("name").and_then(Value::as_str).unwrap_or("");
            if name.is_empty() {
                return Err(format!(
                    "a tool call without a function name: {}",
                    excerpt(&c.to_string())
                ));
            }
            calls.push(call(
                c.get("id").and_then(Value::as_str).unwrap_or(""),
                name,
                function.get("arguments").and_then(Value::as_str).unwrap_or(""),
                format!("call-{turn}-{index}"),
            ));
        }
    }
    Ok(Reply {
        text,
        calls,
        tokens: body.get("usage").and_then(tokens),
    })
}

/// A call being assembled from the chunks of a streamed answer.
#[derive(Debug, Default)]
struct Partial {
    id: String,
    name: String,
    arguments: String,
}

/// A streamed answer, assembled chunk by chunk.
#[derive(Debug, Default)]
pub(crate) struct Stream {
    text: String,
    calls: BTreeMap<u64, Partial>,
    tokens: Option<u64>,
    finished: bool,
    done: bool,
    /// An error the server reported in the stream.
    error: Option<String>,
}

impl Stream {
    /// Takes the `data` of one event.
    pub(crate) fn event(&mut self, data: &str) -> Result<(), StreamError> {
        self.read(data).map_err(StreamError::Malformed)?;
        match self.error.take() {
            Some(error) => Err(StreamError::Server(error)),
            None => Ok(()),
        }
    }

    fn read(&mut self, data: &str) -> Result<(), String> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| format!("a chunk is not JSON ({e}): {}", excerpt(data)))?;
        if let Some(error) = chunk.get("error") {
            self.error = Some(
                error
                    .get("message")
                    .and_then(Value::as_str)
                    .map_or_else(|| error.to_string(), str::to_owned),
            );
            return Ok(());
        }
        if let Some(tokens) = chunk.get("usage").and_then(tokens) {
            self.tokens = Some(tokens);
        }
        let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
            return Err(format!("a chunk without `choices`: {}", excerpt(data)));
        };
        for choice in choices {
            if choice.get("finish_reason").is_some_and(|r| !r.is_null()) {
                self.finished = true;
            }
            let Some(delta) = choice.get("delta") else {
                continue;
            };
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                self.text.push_str(text);
            }
            for piece in delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let index = piece
                    .get("index")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| format!("a tool call piece without `index`: {}", excerpt(data)))?;
                let partial = self.calls.entry(index).or_default();
                if let Some(id) = piece.get("id").and_then(Value::as_str) {
                    partial.id.push_str(id);
                }
                let function = piece.get("function").unwrap_or(&Value::Null);
                if let Some(name) = function.get("name").and_then(Value::as_str) {
                    partial.name.push_str(name);
                }
                if let Some(arguments) = function.get("arguments").and_then(Value::as_str) {
                    partial.arguments.push_str(arguments);
                }
            }
        }
        Ok(())
    }

    /// Whether the server said the answer is complete (`data: [DONE]`).
    pub(crate) fn done(&self) -> bool {
        self.done
    }

    /// The answer, once the stream ended.
    pub(crate) fn finish(self, turn: u32) -> Result<Reply, String> {
        if !self.done && !self.finished {
            return Err(
                "the stream ended before the answer was complete (no `finish_reason`, no `[DONE]`)".into(),
            );
        }
        let mut calls = Vec::new();
        for (index, partial) in self.calls {
            if partial.name.is_empty() {
                return Err(format!("tool call {index} has no function name"));
            }
            calls.push(call(
                &partial.id,
                &partial.name,
                &partial.arguments,
                format!("call-{turn}-{index}"),
            ));
        }
        Ok(Reply {
            text: self.text,
            calls,
            tokens: self.tokens,
        })
    }
}

/// The start of `text`, for an error message.
pub(crate) fn excerpt(text: &str) -> String {
    const MAX: usize = 200;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", text.get(..cut).unwrap_or(text)),
        None => text.to_owned(),
    }
}
