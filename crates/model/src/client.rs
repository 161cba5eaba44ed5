//! [`HttpModel`]: a model behind an HTTP server, as the runtime's [`Model`]: the request with retries and a
//! timeout, the answer whole or streamed, and the conversation kept beside the runtime's steps.

use std::sync::Arc;
use std::time::Duration;

use agent_core::{ChildModels, Model, ModelFuture, ModelTurn, StepRecord, SummaryFuture, ToolSpec};
use agent_subagent::{ChildPlan, ChildRole};
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};
use serde_json::Value;

use crate::anthropic;
use crate::conversation::Transcript;
use crate::error::{ModelError, Result, root_cause};
use crate::openai;
use crate::reply::{Reply, StreamError, ToolChoice};
use crate::sse::SseParser;

/// Which protocol the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// OpenAI-compatible Chat Completions (`POST {base}/chat/completions`, `Authorization: Bearer KEY`): OpenAI,
    /// vLLM, llama.cpp's server, Ollama, LiteLLM, OpenRouter.
    OpenAi,
    /// Anthropic Messages (`POST {base}/v1/messages`, `x-api-key: KEY`, `anthropic-version: 2023-06-01`).
    Anthropic,
}

impl Api {
    /// The base URL used when none is given.
    pub const fn default_base_url(self) -> &'static str {
        match self {
            Self::OpenAi => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com",
        }
    }

    /// The environment variable the key is read from when none is named.
    pub const fn default_key_var(self) -> &'static str {
        match self {
            Self::OpenAi => "OPENAI_API_KEY",
            Self::Anthropic => "ANTHROPIC_API_KEY",
        }
    }
}

impl std::str::FromStr for Api {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, String> {
        match text {
            "openai" => Ok(Self::OpenAi),
            "anthropic" => Ok(Self::Anthropic),
            other => Err(format!(
                "unknown API `{other}` (expected `openai` or `anthropic`)"
            )),
        }
    }
}

/// The request timeout when none is given: the longest the server may stay silent.
pub(crate) const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// Retries of a request answered 429 or 5xx, or whose connection failed, when none are given.
pub(crate) const DEFAULT_MAX_RETRIES: u32 = 4;
/// The first retry's delay before jitter; each retry doubles it, up to [`MAX_BACKOFF`].
pub(crate) const DEFAULT_BACKOFF: Duration = Duration::from_millis(500);
/// The longest wait before a retry, `Retry-After` included.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// The answer's length limit sent to the Anthropic protocol, which requires one.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 4096;

/// How to reach a model.
#[derive(Clone)]
pub struct ModelConfig {
    /// The protocol.
    pub api: Api,
    /// The server's base URL (see [`Api`] for the path appended).
    pub base_url: String,
    /// The model's name.
    pub model: String,
    /// The API key; `None` sends none (a local server).
    pub api_key: Option<String>,
    /// The environment variable the key came from, named in a 401's message.
    pub key_var: String,
    /// Whether answers are streamed.
    pub stream: bool,
    /// The longest the server may stay silent: before its answer starts, and between two parts of a stream.
    pub timeout: Duration,
    /// Retries of a 429, a 5xx or a failed connection.
    pub max_retries: u32,
    /// The first retry's delay before jitter.
    pub backoff: Duration,
    /// The answer's length limit (Anthropic).
    pub max_tokens: u32,
    /// The system prompt.
    pub system: Option<String>,
}

impl std::fmt::Debug for ModelConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key is never printed.
        f.debug_struct("ModelConfig")
            .field("api", &self.api)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "…"))
            .field("key_var", &self.key_var)
            .field("stream", &self.stream)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl ModelConfig {
    /// The defaults for `model` behind `api`: its default base URL, no key, streamed, the default timeout and
    /// retries.
    pub fn new(api: Api, model: impl Into<String>) -> Self {
        Self {
            api,
            base_url: api.default_base_url().to_owned(),
            model: model.into(),
            api_key: None,
            key_var: api.default_key_var().to_owned(),
            stream: true,
            timeout: DEFAULT_REQUEST_TIMEOUT,
            max_retries: DEFAULT_MAX_RETRIES,
            backoff: DEFAULT_BACKOFF,
            max_tokens: DEFAULT_MAX_TOKENS,
            system: None,
        }
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> Result<String> {
        let base = self.base_url.trim_end_matches('/');
        let invalid = |reason: &str| ModelError::BaseUrl {
            url: self.base_url.clone(),
            reason: reason.to_owned(),
        };
        let url = reqwest::Url::parse(base).map_err(|e| invalid(&e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid("the scheme is not http or https"));
        }
        Ok(match self.api {
            Api::OpenAi => format!("{base}/chat/completions"),
            Api::Anthropic if base.ends_with("/v1") => format!("{base}/messages"),
            Api::Anthropic => format!("{base}/v1/messages"),
        })
    }
}

/// Tells the model to write the summary of a compaction.
const SUMMARY_PROMPT: &str = "The context is being compacted. Write a summary of the work so far that lets you go \
    on with the task without the messages before: what was done, what each call found (keep file paths, names and \
    numbers), what was denied and why, and what remains to do. Answer with the summary only, without calling tools.";

/// A model behind an HTTP server speaking [`Api`]: each turn sends the task, the steps the runtime shows and the
/// tools of the agent, and reads the answer (streamed or whole). A request answered 429 or 5xx, or whose
/// connection failed, is retried with exponential backoff and jitter (`Retry-After` is honoured); the server may
/// stay silent at most the timeout; any other failure ends the session with an error naming the endpoint and the
/// status. The runtime's cancellation drops a turn, and with it the request, mid-stream.
pub struct HttpModel {
    config: ModelConfig,
    endpoint: String,
    client: reqwest::Client,
    tools: Vec<ToolSpec>,
    transcript: Transcript,
    reported: Option<u64>,
}

impl std::fmt::Debug for HttpModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpModel")
            .field("config", &self.config)
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

impl HttpModel {
    /// A model reached as `config` says, given `task`.
    pub fn new(config: ModelConfig, task: &str) -> Result<Self> {
        let endpoint = config.endpoint()?;
        let client = reqwest::Client::builder()
            .connect_timeout(config.timeout)
            .build()
            .map_err(ModelError::Client)?;
        Ok(Self {
            config,
            endpoint,
            client,
            tools: Vec::new(),
            transcript: Transcript {
                task: task.to_owned(),
                ..Transcript::default()
            },
            reported: None,
        })
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The tools the model is shown (the runtime gives them before the first turn).
    pub fn tool_specs(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// One request for the conversation of `history` then `extra`, and its answer.
    async fn complete(
        &self,
        history: &[StepRecord],
        extra: Option<&str>,
        choice: ToolChoice,
    ) -> Result<Reply> {
        let entries = self.transcript.entries(history, extra);
        let config = &self.config;
        let system = config.system.as_deref();
        let body = match config.api {
            Api::OpenAi => openai::body(
                &config.model,
                system,
                &entries,
                &self.tools,
                choice,
                config.stream,
            ),
            Api::Anthropic => anthropic::body(
                &config.model,
                config.max_tokens,
                system,
                &entries,
                &self.tools,
                choice,
                config.stream,
            ),
        };
        let response = self.send(&body).await?;
        let turn = self.transcript.steps.saturating_add(1);
        if config.stream {
            self.read_stream(response, turn).await
        } else {
            let text = self.read_body(response, MAX_ANSWER_BYTES, Cut::Fail).await?;
            let value: Value = serde_json::from_str(&text).map_err(|e| {
                self.malformed(format!(
                    "the answer is not JSON ({e}): {}",
                    openai::excerpt(&text)
                ))
            })?;
            match config.api {
                Api::OpenAi => openai::parse(&value, turn),
                Api::Anthropic => anthropic::parse(&value, turn),
            }
            .map_err(|detail| self.malformed(detail))
        }
    }

    /// Sends `body`, retrying a 429, a 5xx and a failed connection; returns the successful response.
    async fn send(&self, body: &Value) -> Result<reqwest::Response> {
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        let mut attempt: u32 = 0;
        loop {
            attempt = attempt.saturating_add(1);
            let mut request = self
                .client
                .post(&self.endpoint)
                .header("content-type", "application/json")
                .body(bytes.clone());
            request = match (self.config.api, &self.config.api_key) {
                (Api::OpenAi, Some(key)) => request.bearer_auth(key),
                (Api::Anthropic, key) => {
                    let request = request.header("anthropic-version", "2023-06-01");
                    match key {
                        Some(key) => request.header("x-api-key", key),
                        None => request,
                    }
                }
                (Api::OpenAi, None) => request,
            };
            let retry_left = attempt <= self.config.max_retries;
            let response = match tokio::time::timeout(self.config.timeout, request.send()).await {
                Err(_) => return Err(self.timeout()),
                Ok(Err(error)) if error.is_connect() && retry_left => {
                    let delay = self.backoff(attempt);
                    tracing::warn!(endpoint = %self.endpoint, %error, ?delay, "cannot connect; retrying");
                    tokio::time::sleep(delay).await;
                    continue;
                }
                Ok(Err(error)) if error.is_timeout() => return Err(self.timeout()),
                Ok(Err(source)) => {
                    return Err(ModelError::Transport {
                        endpoint: self.endpoint.clone(),
                        attempts: attempt,
                        cause: root_cause(&source),
                        source,
                    });
                }
                Ok(Ok(response)) => response,
            };
            let status = response.status();
            if status.is_success() {
                return Ok(response);
            }
            if (status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()) && retry_left {
                let delay = retry_after(response.headers()).unwrap_or_else(|| self.backoff(attempt));
                tracing::warn!(endpoint = %self.endpoint, %status, ?delay, attempt, "the server asks to retry");
                tokio::time::sleep(delay).await;
                continue;
            }
            if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
                // The body is not shown: some servers echo the key they were sent.
                return Err(ModelError::Unauthorized {
                    endpoint: self.endpoint.clone(),
                    status: status.to_string(),
                    key_var: self.config.key_var.clone(),
                    key_set: self.config.api_key.is_some(),
                });
            }
            let text = self
                .read_body(response, MAX_ERROR_BODY_BYTES, Cut::Keep)
                .await
                .unwrap_or_default();
            return Err(ModelError::Status {
                endpoint: self.endpoint.clone(),
                status: status.to_string(),
                attempts: attempt,
                body: self.masked(&openai::excerpt(text.trim())),
            });
        }
    }

    /// The delay before retry number `attempt` (from 1): the backoff doubled each time, capped, with jitter
    /// (between half and all of it), so that clients told to wait do not all come back at once.
    fn backoff(&self, attempt: u32) -> Duration {
        let doubled = self
            .config
            .backoff
            .saturating_mul(2_u32.saturating_pow(attempt.saturating_sub(1)))
            .min(MAX_BACKOFF);
        doubled.mul_f64(0.5 + fastrand::f64() * 0.5)
    }

    /// The body, each part within the timeout: whole up to `limit` bytes; past it, an error for an answer, or
    /// the start for the body of an error status (`Cut::Keep`), which is only shown in part anyway.
    async fn read_body(&self, mut response: reqwest::Response, limit: usize, cut: Cut) -> Result<String> {
        let mut bytes = Vec::new();
        while let Some(chunk) = self.chunk(&mut response).await? {
            bytes.extend_from_slice(&chunk);
            if bytes.len() > limit {
                match cut {
                    Cut::Keep => {
                        bytes.truncate(limit);
                        break;
                    }
                    Cut::Fail => {
                        return Err(self.malformed(format!("the answer is larger than {limit} bytes")));
                    }
                }
            }
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The next part of a body, or the timeout's error when the server stays silent.
    async fn chunk(&self, response: &mut reqwest::Response) -> Result<Option<bytes::Bytes>> {
        match tokio::time::timeout(self.config.timeout, response.chunk()).await {
            Err(_) => Err(self.timeout()),
            Ok(Err(error)) if error.is_timeout() => Err(self.timeout()),
            Ok(Err(source)) => Err(ModelError::Transport {
                endpoint: self.endpoint.clone(),
                attempts: 1,
                cause: root_cause(&source),
                source,
            }),
            Ok(Ok(chunk)) => Ok(chunk),
        }
    }

    /// A streamed answer, event by event.
    async fn read_stream(&self, mut response: reqwest::Response, turn: u32) -> Result<Reply> {
        let mut parser = SseParser::default();
        let mut open = OpenStream::new(self.config.api);
        let mut read: usize = 0;
        loop {
            let chunk = self.chunk(&mut response).await?;
            read = read.saturating_add(chunk.as_ref().map_or(0, bytes::Bytes::len));
            if read > MAX_ANSWER_BYTES {
                return Err(self.malformed(format!("the answer is larger than {MAX_ANSWER_BYTES} bytes")));
            }
            let events = match &chunk {
                Some(bytes) => parser.push(bytes),
                None => parser.finish().into_iter().collect(),
            };
            for event in events {
                open.event(&event.data).map_err(|error| match error {
                    StreamError::Server(message) => ModelError::Stream {
                        endpoint: self.endpoint.clone(),
                        message,
                    },
                    StreamError::Malformed(detail) => self.malformed(detail),
                })?;
            }
            // The answer is complete at its end marker, whether or not the connection closes then.
            if chunk.is_none() || open.done() {
                return open.finish(turn).map_err(|detail| self.malformed(detail));
            }
        }
    }

    fn timeout(&self) -> ModelError {
        ModelError::Timeout {
            endpoint: self.endpoint.clone(),
            after: self.config.timeout,
        }
    }

    fn malformed(&self, detail: String) -> ModelError {
        ModelError::Malformed {
            endpoint: self.endpoint.clone(),
            detail: self.masked(&detail),
        }
    }

    /// `text` with the key masked, should the server have echoed it.
    fn masked(&self, text: &str) -> String {
        match &self.config.api_key {
            Some(key) if !key.is_empty() => text.replace(key.as_str(), "[key]"),
            _ => text.to_owned(),
        }
    }

    /// The runtime's turn for `reply`; the text beside calls is kept for the next requests.
    fn turn(&mut self, mut reply: Reply) -> ModelTurn {
        if reply.calls.is_empty() {
            return ModelTurn::Answer(reply.text);
        }
        self.transcript.unique_ids(&mut reply.calls);
        if let Some(first) = reply.calls.first() {
            self.transcript.texts.insert(first.id.clone(), reply.text);
        }
        self.transcript.steps = self.transcript.steps.saturating_add(1);
        ModelTurn::Calls(reply.calls)
    }
}

/// The largest answer read, whole or streamed: a server that never stops sending is cut here.
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// How much of an error status's body is read (its start is shown).
const MAX_ERROR_BODY_BYTES: usize = 8 * 1024;

/// What [`HttpModel::read_body`] does past its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// Keep the start.
    Keep,
    /// Fail: the answer would be incomplete.
    Fail,
}

/// The `Retry-After` of a response, in seconds (the form servers of these protocols send), capped.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds: f64 = headers.get(RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds).min(MAX_BACKOFF))
}

/// A stream being read, in its protocol.
enum OpenStream {
    OpenAi(openai::Stream),
    Anthropic(anthropic::Stream),
}

impl OpenStream {
    fn new(api: Api) -> Self {
        match api {
            Api::OpenAi => Self::OpenAi(openai::Stream::default()),
            Api::Anthropic => Self::Anthropic(anthropic::Stream::default()),
        }
    }

    fn event(&mut self, data: &str) -> std::result::Result<(), StreamError> {
        match self {
            Self::OpenAi(stream) => stream.event(data),
            Self::Anthropic(stream) => stream.event(data),
        }
    }

    fn done(&self) -> bool {
        match self {
            Self::OpenAi(stream) => stream.done(),
            Self::Anthropic(stream) => stream.done(),
        }
    }

    fn finish(self, turn: u32) -> std::result::Result<Reply, String> {
        match self {
            Self::OpenAi(stream) => stream.finish(turn),
            Self::Anthropic(stream) => stream.finish(turn),
        }
    }
}

impl Model for HttpModel {
    fn tools(&mut self, tools: &[ToolSpec]) {
        self.tools = tools.to_vec();
    }

    fn next_turn<'a>(&'a mut self, history: &'a [StepRecord]) -> ModelFuture<'a> {
        Box::pin(async move {
            match self.complete(history, None, ToolChoice::Auto).await {
                Ok(reply) => {
                    self.reported = reply.tokens;
                    self.turn(reply)
                }
                Err(error) => ModelTurn::Failed(error.to_string()),
            }
        })
    }

    fn notice(&mut self, message: &str) {
        self.transcript
            .notices
            .push((self.transcript.steps, message.to_owned()));
    }

    fn compacted(&mut self, summary: &str) {
        self.transcript.summary = Some(summary.to_owned());
        self.transcript.notices.clear();
    }

    fn summarize<'a>(&'a mut self, history: &'a [StepRecord], _summary: &'a str) -> SummaryFuture<'a> {
        Box::pin(async move {
            match self
                .complete(history, Some(SUMMARY_PROMPT), ToolChoice::None)
                .await
            {
                Ok(reply) => Some(reply.text),
                Err(error) => {
                    tracing::warn!(%error, "the model could not summarise the context; the runtime's summary stands");
                    None
                }
            }
        })
    }

    fn take_reported_tokens(&mut self) -> Option<u64> {
        self.reported.take()
    }

    fn final_turn<'a>(&'a mut self, history: &'a [StepRecord], reminder: &'a str) -> ModelFuture<'a> {
        Box::pin(async move {
            match self.complete(history, Some(reminder), ToolChoice::None).await {
                Ok(reply) => {
                    self.reported = reply.tokens;
                    // Calls the final turn still makes are not run: its text is the answer.
                    ModelTurn::Answer(reply.text)
                }
                Err(error) => ModelTurn::Failed(error.to_string()),
            }
        })
    }
}

/// The models of subagents: each child is an [`HttpModel`] of the same server, given the child's own system
/// prompt and task (its fresh messages); the runtime shows it only the child's tools.
#[derive(Debug, Clone)]
pub struct HttpChildren {
    config: Arc<ModelConfig>,
}

impl HttpChildren {
    /// Children reached as `config` says.
    pub fn new(config: ModelConfig) -> Self {
        Self {
            config: Arc::new(config),
        }
    }
}

impl ChildModels for HttpChildren {
    fn child_model(&self, plan: &ChildPlan, _args: &Value) -> Option<Box<dyn Model>> {
        let mut config = (*self.config).clone();
        let mut task = Vec::new();
        let mut system = Vec::new();
        for message in &plan.messages {
            match message.role {
                ChildRole::System => system.push(message.content.as_str()),
                ChildRole::User => task.push(message.content.as_str()),
            }
        }
        if !system.is_empty() {
            config.system = Some(system.join("\n\n"));
        }
        match HttpModel::new(config, &task.join("\n\n")) {
            Ok(model) => Some(Box::new(model)),
            Err(error) => {
                tracing::warn!(%error, "no model for the subagent");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_read_in_seconds_and_capped() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert(RETRY_AFTER, "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert(RETRY_AFTER, "86400".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(MAX_BACKOFF));
        headers.insert(RETRY_AFTER, "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&headers), None, "a date falls back to the backoff");
        headers.insert(RETRY_AFTER, "-1".parse().unwrap());
        assert_eq!(retry_after(&headers), None);
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let model = HttpModel::new(ModelConfig::new(Api::OpenAi, "m"), "t").unwrap();
        for attempt in 1..=3 {
            let full = DEFAULT_BACKOFF * 2_u32.pow(attempt - 1);
            for _ in 0..50 {
                let delay = model.backoff(attempt);
                assert!(delay >= full / 2 && delay <= full, "{attempt}: {delay:?}");
            }
        }
        assert!(model.backoff(40) <= MAX_BACKOFF);
    }

    #[test]
    fn endpoints_and_bad_base_urls() {
        let mut config = ModelConfig::new(Api::Anthropic, "m");
        assert_eq!(
            config.endpoint().unwrap(),
            "https://api.anthropic.com/v1/messages"
        );
        config.base_url = "http://127.0.0.1:1/v1/".into();
        assert_eq!(config.endpoint().unwrap(), "http://127.0.0.1:1/v1/messages");
        config.base_url = "ftp://x".into();
        assert_eq!(
            config.endpoint().unwrap_err().to_string(),
            "invalid base URL `ftp://x`: the scheme is not http or https"
        );
        config.base_url = "not a url".into();
        assert!(
            config
                .endpoint()
                .unwrap_err()
                .to_string()
                .starts_with("invalid base URL `not a url`: ")
        );
        config.api_key = Some("sk-hidden".into());
        assert!(
            !format!("{config:?}").contains("sk-hidden"),
            "Debug hides the key"
        );
    }
}
