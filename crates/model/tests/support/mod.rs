//! A model server on a loopback port that answers from a script, in either protocol, and records each request.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::{Runtime, RuntimeConfig, SessionReport};
use agent_hooks::{AuditConfig, AuditDatabase, AuditFilter, AuditLogHook, AuditRow};
use agent_model::{Api, HttpChildren, HttpModel, ModelConfig};
use agent_rules::Settings;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

/// One scripted answer of the server.
#[derive(Debug, Clone)]
pub(crate) enum Answer {
    /// A JSON body with a status.
    Json(u16, Value),
    /// A status with headers and a text body.
    Status(u16, Vec<(&'static str, String)>, String),
    /// Server-sent events, each written as its own chunk after `gap`; `hang` keeps the stream open afterwards.
    Events {
        events: Vec<String>,
        gap: Duration,
        hang: bool,
    },
    /// A body written in these raw chunks.
    Chunks(Vec<Vec<u8>>),
    /// Never answers.
    Hang,
}

#[derive(Default)]
struct Script {
    answers: Mutex<VecDeque<Answer>>,
    requests: Mutex<Vec<(HeaderMap, Value)>>,
}

/// The running server.
pub(crate) struct ModelServer {
    pub(crate) addr: SocketAddr,
    script: Arc<Script>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(State(script): State<Arc<Script>>, headers: HeaderMap, body: String) -> Response {
    let value: Value = serde_json::from_str(&body).unwrap_or(Value::String(body));
    script.requests.lock().unwrap().push((headers, value));
    let next = script.answers.lock().unwrap().pop_front();
    match next {
        None => Response::builder()
            .status(500)
            .body(Body::from("script exhausted"))
            .unwrap(),
        Some(Answer::Json(status, body)) => Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap(),
        Some(Answer::Status(status, headers, body)) => {
            let mut builder = Response::builder().status(StatusCode::from_u16(status).unwrap());
            for (name, value) in headers {
                builder = builder.header(name, value);
            }
            builder.body(Body::from(body)).unwrap()
        }
        Some(Answer::Events { events, gap, hang }) => {
            let stream = futures_util::stream::unfold(
                (events.into_iter(), false),
                move |(mut rest, started)| async move {
                    if started {
                        tokio::time::sleep(gap).await;
                    }
                    match rest.next() {
                        Some(event) => Some((Ok::<_, std::io::Error>(event), (rest, true))),
                        None if hang => {
                            std::future::pending::<()>().await;
                            None
                        }
                        None => None,
                    }
                },
            );
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(stream))
                .unwrap()
        }
        Some(Answer::Chunks(chunks)) => {
            let stream = futures_util::stream::iter(chunks.into_iter().map(Ok::<_, std::io::Error>));
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(stream))
                .unwrap()
        }
        Some(Answer::Hang) => {
            std::future::pending::<()>().await;
            unreachable!()
        }
    }
}

impl ModelServer {
    /// Starts a server answering `answers` in order, on any path.
    pub(crate) async fn start(answers: Vec<Answer>) -> Self {
        let script = Arc::new(Script {
            answers: Mutex::new(answers.into()),
            requests: Mutex::default(),
        });
        let app = axum::Router::new()
            .fallback(axum::routing::post(answer))
            .with_state(Arc::clone(&script));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self { addr, script, task }
    }

    /// The request bodies received so far.
    pub(crate) fn requests(&self) -> Vec<Value> {
        self.script
            .requests
            .lock()
            .unwrap()
            .iter()
            .map(|(_, b)| b.clone())
            .collect()
    }

    /// The request headers received so far.
    pub(crate) fn headers(&self) -> Vec<HeaderMap> {
        self.script
            .requests
            .lock()
            .unwrap()
            .iter()
            .map(|(h, _)| h.clone())
            .collect()
    }

    /// A model configuration for this server.
    pub(crate) fn config(&self, api: Api, stream: bool) -> ModelConfig {
        let mut config = ModelConfig::new(api, "test-model");
        config.base_url = match api {
            Api::OpenAi => format!("http://{}/v1", self.addr),
            Api::Anthropic => format!("http://{}", self.addr),
        };
        config.api_key = Some("sk-test-secret-key".to_owned());
        config.key_var = "TEST_MODEL_KEY".to_owned();
        config.stream = stream;
        config.backoff = Duration::from_millis(20);
        config.timeout = Duration::from_secs(10);
        config
    }
}

/// A workspace with files, its runtime (subagents driven by the same server), and the audit log.
pub(crate) struct Session {
    /// The workspace, removed when the session is dropped.
    _dir: tempfile::TempDir,
    pub(crate) home: tempfile::TempDir,
    pub(crate) runtime: Runtime,
    pub(crate) db: AuditDatabase,
}

impl Session {
    pub(crate) async fn new(files: &[(&str, &str)], children: ModelConfig) -> Self {
        Self::with_tool(files, children, None, None).await
    }

    /// A session whose project settings allow `tool`, registered beside the built-in tools.
    pub(crate) async fn with_tool(
        files: &[(&str, &str)],
        children: ModelConfig,
        tool: Option<Arc<dyn agent_tool_traits::Tool>>,
        max_steps: Option<u32>,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        for (name, content) in files {
            std::fs::write(dir.path().join(name), content).unwrap();
        }
        let db: AuditDatabase = dir.path().join("audit.db").display().to_string().parse().unwrap();
        let audit = AuditLogHook::open_database(&db, AuditConfig::default())
            .await
            .unwrap();
        let mut config = RuntimeConfig::new(dir.path());
        config.home = Some(home.path().to_owned());
        if let Some(steps) = max_steps {
            config.limits.max_steps = steps;
        }
        let mut settings = Settings::new();
        let mut builder_tool = None;
        if let Some(tool) = tool {
            let project = dir.path().join(".agent-guard");
            std::fs::create_dir_all(&project).unwrap();
            let allow = json!({"permissions": {"allow": [tool.name()]}});
            std::fs::write(project.join("settings.json"), allow.to_string()).unwrap();
            settings = Settings::discover(&agent_rules::Discovery {
                cwd: dir.path().to_owned(),
                home: Some(home.path().to_owned()),
                managed: Vec::new(),
                cli_files: Vec::new(),
            })
            .unwrap();
            builder_tool = Some(tool);
        }
        let mut builder = Runtime::builder(settings, config)
            .audit(audit)
            .subagent_models(Arc::new(HttpChildren::new(children)));
        if let Some(tool) = builder_tool {
            builder = builder.tool(tool);
        }
        let runtime = builder.build().unwrap();
        Self {
            _dir: dir,
            home,
            runtime,
            db,
        }
    }

    pub(crate) async fn run(&self, session_id: &str, config: ModelConfig, task: &str) -> SessionReport {
        let mut model = HttpModel::new(config, task).unwrap();
        self.runtime.run(session_id, &mut model).await
    }

    pub(crate) async fn audit(&self, session_id: &str) -> Vec<AuditRow> {
        let filter = AuditFilter {
            session_id: Some(session_id.to_owned()),
            ..AuditFilter::default()
        };
        AuditLogHook::query_database(&self.db, &filter).await.unwrap()
    }
}

/// The events of an OpenAI-compatible streamed answer: `text`, then `calls` (id, name, arguments), each call's
/// arguments split into pieces of `piece` characters, then the usage and `[DONE]`.
pub(crate) fn openai_events(
    text: &str,
    calls: &[(&str, &str, Value)],
    piece: usize,
    usage: Option<(u64, u64)>,
) -> Vec<String> {
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "test-model",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    if !text.is_empty() {
        let (a, b) = text.split_at(text.len() / 2);
        events.push(chunk(json!({"content": a}), Value::Null));
        events.push(chunk(json!({"content": b}), Value::Null));
    }
    for (index, (id, name, args)) in calls.iter().enumerate() {
        events.push(chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                                   "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        ));
        let args = args.to_string();
        let chars: Vec<char> = args.chars().collect();
        for part in chars.chunks(piece.max(1)) {
            let part: String = part.iter().collect();
            events.push(chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": part}}]}),
                Value::Null,
            ));
        }
    }
    let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
    events.push(chunk(json!({}), json!(finish)));
    if let Some((prompt, completion)) = usage {
        events.push(format!(
            "data: {}\n\n",
            json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "test-model", "choices": [],
                   "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                             "total_tokens": prompt + completion}})
        ));
    }
    events.push("data: [DONE]\n\n".to_owned());
    events
}

/// A whole OpenAI-compatible answer.
pub(crate) fn openai_json(text: &str, calls: &[(&str, &str, Value)], usage: (u64, u64)) -> Value {
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}})
        })
        .collect();
    let mut message =
        json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
    if !tool_calls.is_empty() {
        message["tool_calls"] = json!(tool_calls);
    }
    json!({"id": "c1", "object": "chat.completion", "created": 1, "model": "test-model",
           "choices": [{"index": 0, "message": message,
                        "finish_reason": if calls.is_empty() { "stop" } else { "tool_calls" }}],
           "usage": {"prompt_tokens": usage.0, "completion_tokens": usage.1, "total_tokens": usage.0 + usage.1}})
}

/// The events of an Anthropic streamed answer, each call's input split into pieces of `piece` characters.
pub(crate) fn anthropic_events(
    text: &str,
    calls: &[(&str, &str, Value)],
    piece: usize,
    usage: (u64, u64),
) -> Vec<String> {
    let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let mut events = vec![event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
               "content": [], "model": "test-model", "stop_reason": null, "stop_sequence": null,
               "usage": {"input_tokens": usage.0, "output_tokens": 1}}}),
    )];
    let mut index = 0;
    if !text.is_empty() {
        events.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                                                         "content_block": {"type": "text", "text": ""}}),
        ));
        events.push(event("ping", json!({"type": "ping"})));
        events.push(event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index,
                                                         "delta": {"type": "text_delta", "text": text}}),
        ));
        events.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    for (id, name, args) in calls {
        events.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        ));
        let args = args.to_string();
        let chars: Vec<char> = args.chars().collect();
        for part in chars.chunks(piece.max(1)) {
            let part: String = part.iter().collect();
            events.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": part}}),
            ));
        }
        events.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    let stop = if calls.is_empty() { "end_turn" } else { "tool_use" };
    events.push(event(
        "message_delta",
        json!({"type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": usage.1}}),
    ));
    events.push(event("message_stop", json!({"type": "message_stop"})));
    events
}

/// A whole Anthropic answer.
pub(crate) fn anthropic_json(text: &str, calls: &[(&str, &str, Value)], usage: (u64, u64)) -> Value {
    let mut content = Vec::new();
    if !text.is_empty() {
        content.push(json!({"type": "text", "text": text}));
    }
    for (id, name, args) in calls {
        content.push(json!({"type": "tool_use", "id": id, "name": name, "input": args}));
    }
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "test-model", "content": content,
           "stop_reason": if calls.is_empty() { "end_turn" } else { "tool_use" }, "stop_sequence": null,
           "usage": {"input_tokens": usage.0, "output_tokens": usage.1}})
}

/// Streamed events as one answer.
pub(crate) fn events(events: Vec<String>) -> Answer {
    Answer::Events {
        events,
        gap: Duration::from_millis(2),
        hang: false,
    }
}

/// The bytes of `events` cut into chunks of `size` bytes, wherever that falls (inside a line, a JSON string, a UTF-8
/// character), as a network may deliver them.
pub(crate) fn rechunk(events: &[String], size: usize) -> Vec<Vec<u8>> {
    events
        .concat()
        .into_bytes()
        .chunks(size)
        .map(<[u8]>::to_vec)
        .collect()
}
