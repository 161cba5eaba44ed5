//! The Anthropic Messages protocol: `tool_use` blocks in the assistant's content, `tool_result` blocks in the
//! user's, `tools` with an `input_schema`, and a streamed answer of typed events whose `input_json_delta`s carry
//! each call's input in pieces.

use std::collections::BTreeMap;

use agent_core::ToolSpec;
use serde_json::{Map, Value, json};

use crate::conversation::{Entry, call};
use crate::openai::excerpt;
use crate::reply::{Reply, StreamError, ToolChoice};

/// The request body. Consecutive user entries (results, then notices) become one user message, results first,
/// as the protocol has user and assistant messages alternate.
pub(crate) fn body(
    model: &str,
    max_tokens: u32,
    system: Option<&str>,
    entries: &[Entry],
    tools: &[ToolSpec],
    choice: ToolChoice,
    stream: bool,
) -> Value {
    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, blocks: Vec<Value>| match messages.last_mut() {
        Some((last, content)) if *last == role => content.extend(blocks),
        _ => messages.push((role, blocks)),
    };
    for entry in entries {
        match entry {
            Entry::User(text) => push("user", vec![json!({"type": "text", "text": text})]),
            Entry::Assistant { text, calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in calls {
                    // The protocol's input is an object; arguments the model garbled were sent back as text.
                    let input = if c.args.is_object() {
                        c.args.clone()
                    } else {
                        json!({})
                    };
                    blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}));
                }
                push("assistant", blocks);
            }
            Entry::Results(results) => push(
                "user",
                results
                    .iter()
                    .map(|r| {
                        json!({"type": "tool_result", "tool_use_id": r.id, "content": r.content,
                               "is_error": r.is_error})
                    })
                    .collect(),
            ),
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("max_tokens".into(), json!(max_tokens));
    if let Some(system) = system {
        body.insert("system".into(), json!(system));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !tools.is_empty() {
        let tools = tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        if choice == ToolChoice::None {
            body.insert("tool_choice".into(), json!({"type": "none"}));
        }
    }
    if stream {
        body.insert("stream".into(), json!(true));
    }
    Value::Object(body)
}

/// The tokens of a `usage` object: input (with the cached parts) and output.
fn tokens(usage: &Value) -> Option<u64> {
    let field = |name: &str| usage.get(name).and_then(Value::as_u64).unwrap_or(0);
    usage.get("input_tokens").and_then(Value::as_u64)?;
    Some(
        field("input_tokens")
            .saturating_add(field("cache_creation_input_tokens"))
            .saturating_add(field("cache_read_input_tokens"))
            .saturating_add(field("output_tokens")),
    )
}

/// A whole (not streamed) answer.
pub(crate) fn parse(body: &Value, turn: u32) -> Result<Reply, String> {
    let content = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("no `content` in {}", excerpt(&body.to_string())))?;
    let mut text = String::new();
    let mut calls = Vec::new();
    for (index, block) in content.iter().enumerate() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => {
                let name = block.get("name").and_then(Value::as_str).unwrap_or("");
                if name.is_empty() {
                    return Err(format!(
                        "a `tool_use` block without a name: {}",
                        excerpt(&block.to_string())
                    ));
                }
                let input = block.get("input").cloned().unwrap_or_else(|| json!({}));
                let mut c = call(
                    block.get("id").and_then(Value::as_str).unwrap_or(""),
                    name,
                    "",
                    format!("call-{turn}-{index}"),
                );
                c.args = input;
                calls.push(c);
            }
            // Thinking and other blocks carry nothing the runtime acts on.
            _ => {}
        }
    }
    Ok(Reply {
        text,
        calls,
        tokens: body.get("usage").and_then(tokens),
    })
}

/// A content block being assembled from the events of a streamed answer.
#[derive(Debug, Default)]
struct Block {
    tool: bool,
    id: String,
    name: String,
    /// The input given whole at the block's start (`{}` when it is streamed).
    input: Option<Value>,
    json: String,
}

/// A streamed answer, assembled event by event.
#[derive(Debug, Default)]
pub(crate) struct Stream {
    text: String,
    blocks: BTreeMap<u64, Block>,
    input_tokens: Option<Value>,
    output_tokens: Option<u64>,
    stopped: bool,
}

impl Stream {
    /// Takes one event (its type is also in its data, which is what is read).
    pub(crate) fn event(&mut self, data: &str) -> Result<(), StreamError> {
        let event: Value = serde_json::from_str(data)
            .map_err(|e| StreamError::Malformed(format!("an event is not JSON ({e}): {}", excerpt(data))))?;
        let index = || {
            event
                .get("index")
                .and_then(Value::as_u64)
                .ok_or_else(|| StreamError::Malformed(format!("an event without `index`: {}", excerpt(data))))
        };
        match event.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                if let Some(usage) = event.get("message").and_then(|m| m.get("usage")) {
                    // The output so far is counted again, whole, by `message_delta`.
                    let mut usage = usage.clone();
                    if let Some(fields) = usage.as_object_mut() {
                        fields.remove("output_tokens");
                    }
                    self.input_tokens = Some(usage);
                }
            }
            Some("content_block_start") => {
                let block = event.get("content_block").unwrap_or(&Value::Null);
                let entry = self.blocks.entry(index()?).or_default();
                if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                    entry.tool = true;
                    entry.id = block.get("id").and_then(Value::as_str).unwrap_or("").to_owned();
                    entry.name = block.get("name").and_then(Value::as_str).unwrap_or("").to_owned();
                    entry.input = block.get("input").cloned();
                } else if let Some(text) = block.get("text").and_then(Value::as_str) {
                    self.text.push_str(text);
                }
            }
            Some("content_block_delta") => {
                let delta = event.get("delta").unwrap_or(&Value::Null);
                let index = index()?;
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        self.text
                            .push_str(delta.get("text").and_then(Value::as_str).unwrap_or(""));
                    }
                    Some("input_json_delta") => {
                        let piece = delta.get("partial_json").and_then(Value::as_str).unwrap_or("");
                        self.blocks.entry(index).or_default().json.push_str(piece);
                    }
                    // Thinking and signature deltas carry nothing the runtime acts on.
                    _ => {}
                }
            }
            Some("message_delta") => {
                if let Some(output) = event
                    .get("usage")
                    .and_then(|u| u.get("output_tokens"))
                    .and_then(Value::as_u64)
                {
                    self.output_tokens = Some(output);
                }
            }
            Some("message_stop") => self.stopped = true,
            Some("error") => {
                let error = event.get("error").unwrap_or(&Value::Null);
                let message = error.get("message").and_then(Value::as_str).unwrap_or("");
                let kind = error.get("type").and_then(Value::as_str).unwrap_or("error");
                return Err(StreamError::Server(format!("{kind}: {message}")));
            }
            Some("content_block_stop" | "ping") => {}
            // The protocol may add event types; unknown ones are ignored, as its documentation asks.
            Some(_) => {}
            None => {
                return Err(StreamError::Malformed(format!(
                    "an event without `type`: {}",
                    excerpt(data)
                )));
            }
        }
        Ok(())
    }

    /// Whether the server said the answer is complete (`message_stop`).
    pub(crate) fn done(&self) -> bool {
        self.stopped
    }

    /// The answer, once the stream ended.
    pub(crate) fn finish(self, turn: u32) -> Result<Reply, String> {
        if !self.stopped {
            return Err("the stream ended before `message_stop`".into());
        }
        let mut calls = Vec::new();
        for (index, block) in self.blocks.into_iter().filter(|(_, b)| b.tool) {
            if block.name.is_empty() {
                return Err(format!("content block {index} is a `tool_use` without a name"));
            }
            let mut c = call(
                &block.id,
                &block.name,
                &block.json,
                format!("call-{turn}-{index}"),
            );
            if block.json.trim().is_empty() {
                c.args = block.input.unwrap_or_else(|| json!({}));
            }
            calls.push(c);
        }
        let tokens = self
            .input_tokens
            .as_ref()
            .and_then(tokens)
            .map(|input| input.saturating_add(self.output_tokens.unwrap_or(0)));
        Ok(Reply {
            text: self.text,
            calls,
            tokens,
        })
    }
}
