//! Model adapters: the runtime's [`Model`](agent_core::Model) behind an HTTP server, in the two protocols models
//! are served with: OpenAI-compatible Chat Completions (`tools` and `tool_calls`) and Anthropic Messages
//! (`tool_use` and `tool_result` blocks), each whole or streamed (server-sent events whose tool-call arguments
//! arrive in pieces).
//!
//! An [`HttpModel`] sends, at each turn, the task, the steps the runtime shows it (each call with its result: a
//! denial is a result like any other, with its reason) and the tools of its agent as the registry describes them
//! (a subagent's model, from [`HttpChildren`], sees only its narrowed tools). The calls of one answer are one step,
//! which the runtime's executor runs in parallel where the tools allow. The tokens the server reports feed the
//! token budget; at a compaction the model writes the summary. Requests answered 429 or 5xx are retried with
//! exponential backoff and jitter, honouring `Retry-After`; a silent server is cut by the timeout; the runtime's
//! cancellation stops a streamed answer; every other failure ends the session with an error that names the
//! endpoint and the status (a 401 says the key is wrong, and never shows it).
//!
//! Layer: above the runtime (`agent-core`), beside the CLI. **Invariant:** a model only proposes calls; it never
//! decides one, runs one, or sees a tool its agent does not have. **Invariant:** the API key is sent to the
//! endpoint and nowhere else: no error, log line or `Debug` output holds it.
//!
//! ```
//! use agent_model::{Api, HttpModel, ModelConfig};
//!
//! let mut config = ModelConfig::new(Api::OpenAi, "qwen2.5-coder");
//! config.base_url = "http://127.0.0.1:8080/v1".to_owned();
//! let model = HttpModel::new(config, "List the files of this project")?;
//! assert_eq!(model.endpoint(), "http://127.0.0.1:8080/v1/chat/completions");
//! // `runtime.run(session_id, &mut model).await` drives a session with it.
//! # Ok::<(), agent_model::ModelError>(())
//! ```

mod anthropic;
mod client;
mod conversation;
mod error;
mod openai;
mod reply;
mod sse;

pub use client::{Api, HttpChildren, HttpModel, ModelConfig};
pub use error::{ModelError, Result};
