//! Sessions driven by a model behind a real HTTP server on a loopback port, in both protocols: the calls the model
//! makes, their decisions, the audit rows, the final answer, and every way the server can fail.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

#[path = "../../../tests/support/need.rs"]
mod need;
mod support;

use std::time::{Duration, Instant};

use agent_core::{LimitKind, Model, ModelTurn, StepRecord, ToolSpec};
use agent_hooks::{AuditStatus, CallStatus};
use agent_model::{Api, HttpModel};
use agent_tool_traits::Decision;
use agent_tool_traits::Tool as _;
use serde_json::{Value, json};
use support::{
    Answer, ModelServer, Session, anthropic_events, anthropic_json, events, openai_events, openai_json,
    rechunk,
};

fn read(id: &'static str, path: &str) -> (&'static str, &'static str, Value) {
    (id, "read_file", json!({"path": path}))
}

/// The tool results a request sends back, by call id, in the protocol's shape: (id, content, is_error).
fn results(api: Api, request: &Value) -> Vec<(String, String, bool)> {
    let messages = request["messages"].as_array().unwrap();
    match api {
        Api::OpenAi => messages
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| {
                (
                    m["tool_call_id"].as_str().unwrap().to_owned(),
                    m["content"].as_str().unwrap().to_owned(),
                    false,
                )
            })
            .collect(),
        Api::Anthropic => messages
            .iter()
            .filter(|m| m["role"] == "user")
            .flat_map(|m| m["content"].as_array().unwrap().clone())
            .filter(|b| b["type"] == "tool_result")
            .map(|b| {
                (
                    b["tool_use_id"].as_str().unwrap().to_owned(),
                    b["content"].as_str().unwrap().to_owned(),
                    b["is_error"].as_bool().unwrap(),
                )
            })
            .collect(),
    }
}

/// The tool names a request offers.
fn offered(api: Api, request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| match api {
            Api::OpenAi => t["function"]["name"].as_str().unwrap().to_owned(),
            Api::Anthropic => t["name"].as_str().unwrap().to_owned(),
        })
        .collect()
}

/// Two calls in one streamed answer, their arguments split into 3-character pieces: both are decided and run in
/// the same step, their results go back, and the model's answer ends the session; every call has its audit row.
async fn parallel_streamed_calls(api: Api) {
    let calls = [read("c1", "a.txt"), read("c2", "b.txt")];
    let first = match api {
        Api::OpenAi => openai_events("Reading both: é.", &calls, 3, Some((120, 30))),
        Api::Anthropic => anthropic_events("Reading both: é.", &calls, 3, (120, 30)),
    };
    let last = match api {
        Api::OpenAi => openai_events("a says alpha, b says beta", &[], 3, Some((200, 10))),
        Api::Anthropic => anthropic_events("a says alpha, b says beta", &[], 3, (200, 10)),
    };
    // The first answer also arrives in 7-byte network chunks that cut lines, JSON strings and the `é` anywhere.
    let server = ModelServer::start(vec![Answer::Chunks(rechunk(&first, 7)), events(last)]).await;
    let config = server.config(api, true);
    let session = Session::new(&[("a.txt", "alpha\n"), ("b.txt", "beta\n")], config.clone()).await;
    let report = session
        .run("s-parallel", config, "What do a.txt and b.txt say?")
        .await;

    assert_eq!(report.reason, "completed");
    assert_eq!(report.answer.as_deref(), Some("a says alpha, b says beta"));
    assert_eq!(report.steps.len(), 1, "both calls are one step");
    let step = &report.steps[0];
    assert_eq!(step.calls.len(), 2);
    for (call, path) in step.calls.iter().zip(["a.txt", "b.txt"]) {
        assert_eq!(
            call.call.args,
            json!({"path": path}),
            "the arguments are whole again"
        );
        assert_eq!(call.verdict.decision, Decision::Allow);
        assert_eq!(call.status, CallStatus::Ok);
    }
    // The registry's schemas are what the model was shown.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let names = offered(api, &requests[0]);
    assert!(
        names.contains(&"read_file".to_owned()) && names.contains(&"run_bash".to_owned()),
        "{names:?}"
    );
    let schema = session.runtime.registry().get("run_bash").unwrap().input_schema();
    let shown = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|t| match api {
            Api::OpenAi => (t["function"]["name"] == "run_bash").then(|| t["function"]["parameters"].clone()),
            Api::Anthropic => (t["name"] == "run_bash").then(|| t["input_schema"].clone()),
        })
        .unwrap();
    assert_eq!(shown, schema);
    let assistant_text = match api {
        Api::OpenAi => requests[1]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "assistant")
            .unwrap()["content"]
            .clone(),
        Api::Anthropic => requests[1]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "assistant")
            .unwrap()["content"][0]["text"]
            .clone(),
    };
    assert_eq!(
        assistant_text, "Reading both: é.",
        "the text beside the calls is sent back whole"
    );
    let sent = results(api, &requests[1]);
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].0, "c1");
    assert!(
        sent[0].1.contains("alpha") && sent[1].1.contains("beta"),
        "{sent:?}"
    );
    // The key goes in the protocol's header.
    let headers = &server.headers()[0];
    match api {
        Api::OpenAi => assert_eq!(headers["authorization"], "Bearer sk-test-secret-key"),
        Api::Anthropic => {
            assert_eq!(headers["x-api-key"], "sk-test-secret-key");
            assert_eq!(headers["anthropic-version"], "2023-06-01");
        }
    }
    let rows = session.audit("s-parallel").await;
    let tools: Vec<(&str, AuditStatus)> = rows.iter().map(|r| (r.tool_name.as_str(), r.status)).collect();
    assert_eq!(
        tools
            .iter()
            .filter(|(t, s)| *t == "read_file" && *s == AuditStatus::Ok)
            .count(),
        2,
        "{tools:?}"
    );
    assert!(
        rows.iter().any(|r| r.status == AuditStatus::SessionStop),
        "{tools:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_streamed_parallel_calls_split_across_chunks() {
    parallel_streamed_calls(Api::OpenAi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_streamed_parallel_calls_split_across_chunks() {
    parallel_streamed_calls(Api::Anthropic).await;
}

/// A model that asks for `rm -rf ~` (a whole answer, not streamed) gets the denial as the call's result, and the
/// session goes on to its answer.
async fn denial_is_a_result(api: Api) {
    let rm = [("c1", "run_bash", json!({"command": "rm -rf ~"}))];
    let answers = match api {
        Api::OpenAi => vec![
            Answer::Json(200, openai_json("", &rm, (100, 20))),
            Answer::Json(
                200,
                openai_json("I may not delete the home directory.", &[], (150, 12)),
            ),
        ],
        Api::Anthropic => vec![
            Answer::Json(200, anthropic_json("", &rm, (100, 20))),
            Answer::Json(
                200,
                anthropic_json("I may not delete the home directory.", &[], (150, 12)),
            ),
        ],
    };
    let server = ModelServer::start(answers).await;
    let config = server.config(api, false);
    let session = Session::new(&[], config.clone()).await;
    let report = session.run("s-deny", config, "Clean up my home directory").await;

    assert_eq!(
        report.answer.as_deref(),
        Some("I may not delete the home directory.")
    );
    let call = report.calls().next().unwrap();
    assert_eq!(call.verdict.decision, Decision::Deny);
    assert_eq!(call.status, CallStatus::Denied);
    assert!(session.home.path().exists(), "nothing ran");
    let sent = results(api, &server.requests()[1]);
    assert_eq!(sent.len(), 1);
    assert!(sent[0].1.starts_with("denied ("), "{sent:?}");
    if api == Api::Anthropic {
        assert!(sent[0].2, "a denial is an error result");
    }
    let rows = session.audit("s-deny").await;
    let row = rows.iter().find(|r| r.tool_name == "run_bash").unwrap();
    assert_eq!(
        (row.status, row.decision.as_deref()),
        (AuditStatus::Denied, Some("deny"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_whole_answer_denial_is_the_tool_result() {
    denial_is_a_result(Api::OpenAi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_whole_answer_denial_is_the_tool_result() {
    denial_is_a_result(Api::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_with_retry_after_is_retried_after_the_wait() {
    let server = ModelServer::start(vec![
        Answer::Status(
            429,
            vec![("retry-after", "1".to_owned())],
            "{\"error\":\"slow down\"}".to_owned(),
        ),
        Answer::Json(200, openai_json("done", &[], (10, 2))),
    ])
    .await;
    let config = server.config(Api::OpenAi, false);
    let session = Session::new(&[], config.clone()).await;
    let started = Instant::now();
    let report = session.run("s-429", config, "hi").await;
    assert_eq!(report.answer.as_deref(), Some("done"));
    assert_eq!(server.requests().len(), 2);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After is honoured"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_is_retried_with_backoff() {
    let server = ModelServer::start(vec![
        Answer::Status(500, vec![], "internal".to_owned()),
        Answer::Status(503, vec![], "overloaded".to_owned()),
        events(anthropic_events("done", &[], 3, (10, 2))),
    ])
    .await;
    let config = server.config(Api::Anthropic, true);
    let session = Session::new(&[], config.clone()).await;
    let report = session.run("s-500", config, "hi").await;
    assert_eq!(report.answer.as_deref(), Some("done"));
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_end_with_an_error_naming_the_endpoint_and_status() {
    let server = ModelServer::start(vec![Answer::Status(502, vec![], "bad gateway".to_owned()); 3]).await;
    let mut config = server.config(Api::OpenAi, false);
    config.max_retries = 2;
    let session = Session::new(&[], config.clone()).await;
    let report = session.run("s-502", config, "hi").await;
    let endpoint = format!("http://{}/v1/chat/completions", server.addr);
    assert_eq!(
        report.reason,
        format!("the model failed: `{endpoint}` answered 502 Bad Gateway after 3 attempt(s): bad gateway")
    );
    assert_eq!(report.answer, None);
    let rows = session.audit("s-502").await;
    let stop = rows
        .iter()
        .find(|r| r.status == AuditStatus::SessionStop)
        .unwrap();
    assert!(
        stop.output_preview.contains("answered 502"),
        "{}",
        stop.output_preview
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_says_the_key_is_wrong_without_showing_it() {
    let server = ModelServer::start(vec![Answer::Status(
        401,
        vec![],
        "{\"error\":{\"message\":\"Incorrect API key provided: sk-test-secret-key\"}}".to_owned(),
    )])
    .await;
    let config = server.config(Api::OpenAi, true);
    let session = Session::new(&[], config.clone()).await;
    let report = session.run("s-401", config, "hi").await;
    let endpoint = format!("http://{}/v1/chat/completions", server.addr);
    assert_eq!(
        report.reason,
        format!(
            "the model failed: `{endpoint}` answered 401 Unauthorized: the API key in `TEST_MODEL_KEY` is wrong or \
             not allowed to use this model"
        )
    );
    assert!(!report.reason.contains("sk-test"));
    assert_eq!(server.requests().len(), 1, "a 401 is not retried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_chunk_ends_the_session_with_a_clear_error() {
    let mut stream = openai_events("", &[read("c1", "a.txt")], 4, None);
    stream.insert(2, "data: {\"choices\": [{\"delta\": \n\n".to_owned());
    let server = ModelServer::start(vec![events(stream)]).await;
    let config = server.config(Api::OpenAi, true);
    let session = Session::new(&[("a.txt", "x")], config.clone()).await;
    let report = session.run("s-malformed", config, "hi").await;
    let endpoint = format!("http://{}/v1/chat/completions", server.addr);
    assert!(
        report.reason.starts_with(&format!(
            "the model failed: `{endpoint}` sent a malformed answer: a chunk is not JSON"
        )),
        "{}",
        report.reason
    );
    assert!(report.steps.is_empty(), "no call of a broken answer runs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_error_event_is_reported() {
    let mut stream = anthropic_events("partial", &[], 3, (10, 2));
    stream.truncate(3);
    stream.push("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n".to_owned());
    let server = ModelServer::start(vec![events(stream)]).await;
    let config = server.config(Api::Anthropic, true);
    let session = Session::new(&[], config.clone()).await;
    let report = session.run("s-error-event", config, "hi").await;
    assert!(
        report
            .reason
            .ends_with("reported an error in the stream: overloaded_error: Overloaded"),
        "{}",
        report.reason
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_server_is_cut_by_the_timeout() {
    let server = ModelServer::start(vec![Answer::Hang]).await;
    let mut config = server.config(Api::Anthropic, false);
    config.timeout = Duration::from_millis(300);
    let session = Session::new(&[], config.clone()).await;
    let started = Instant::now();
    let report = session.run("s-hang", config, "hi").await;
    let endpoint = format!("http://{}/v1/messages", server.addr);
    assert_eq!(
        report.reason,
        format!("the model failed: `{endpoint}` sent nothing for 0.3 s: the request timed out")
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_stalls_is_cut_by_the_timeout() {
    let mut stream = openai_events("half an answer", &[], 3, None);
    stream.truncate(2);
    let server = ModelServer::start(vec![Answer::Events {
        events: stream,
        gap: Duration::ZERO,
        hang: true,
    }])
    .await;
    let mut config = server.config(Api::OpenAi, true);
    config.timeout = Duration::from_millis(300);
    let session = Session::new(&[], config.clone()).await;
    let report = session.run("s-stall", config, "hi").await;
    assert!(
        report
            .reason
            .ends_with("sent nothing for 0.3 s: the request timed out"),
        "{}",
        report.reason
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_stops_a_streamed_answer() {
    let mut stream = anthropic_events("a long answer", &[], 3, (10, 2));
    stream.truncate(3);
    let server = ModelServer::start(vec![Answer::Events {
        events: stream,
        gap: Duration::from_millis(5),
        hang: true,
    }])
    .await;
    let config = server.config(Api::Anthropic, true);
    let session = Session::new(&[], config.clone()).await;
    let cancel = session.runtime.cancel_registry().clone();
    // The cancel comes once the request has reached the server, whose answer then streams and never ends.
    let cancel_when_asked = async {
        let deadline = Instant::now() + Duration::from_secs(10);
        while server.requests().is_empty() {
            assert!(Instant::now() < deadline, "the model was never asked");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        cancel.cancel("s-cancel");
    };
    let started = Instant::now();
    let (report, ()) = tokio::join!(session.run("s-cancel", config, "hi"), cancel_when_asked);
    assert!(report.cancelled);
    assert_eq!(report.reason, "cancelled by the user");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the 10 s timeout did not have to pass"
    );
    let rows = session.audit("s-cancel").await;
    assert!(rows.iter().any(|r| r.status == AuditStatus::SessionStop));
}

/// The server's token counts feed the budget: a context it reports past the hard limit is compacted, and the
/// model writes the summary, which replaces the old steps in what it is sent next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reported_tokens_feed_the_budget_and_the_model_writes_the_summary() {
    let server = ModelServer::start(vec![
        Answer::Json(200, openai_json("", &[read("c1", "a.txt")], (100, 10))),
        Answer::Json(200, openai_json("", &[read("c2", "b.txt")], (200, 10))),
        Answer::Json(200, openai_json("", &[read("c3", "c.txt")], (45_000, 10))),
        Answer::Json(200, openai_json("SUMMARY: a is alpha, b is beta", &[], (300, 20))),
        Answer::Json(200, openai_json("all read", &[], (400, 5))),
    ])
    .await;
    let config = server.config(Api::OpenAi, false);
    let session = Session::new(
        &[("a.txt", "alpha"), ("b.txt", "beta"), ("c.txt", "gamma")],
        config.clone(),
    )
    .await;
    let report = session.run("s-budget", config, "read them").await;
    assert_eq!(report.answer.as_deref(), Some("all read"));
    let compaction = report
        .limits
        .iter()
        .find(|l| l.kind == LimitKind::Compaction)
        .unwrap();
    assert_eq!(compaction.step, 3, "only the reported count was past the limit");
    assert!(
        compaction.message.contains("summarised by the model"),
        "{}",
        compaction.message
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let summary_request = requests[3]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(
        summary_request["content"]
            .as_str()
            .unwrap()
            .contains("Write a summary")
    );
    assert_eq!(requests[3]["tool_choice"], "none");
    let after = requests[4]["messages"].as_array().unwrap();
    assert!(
        after
            .iter()
            .any(|m| m["content"] == "SUMMARY: a is alpha, b is beta")
    );
    let ids: Vec<&str> = after
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert!(!ids.contains(&"c1"), "the summarised step is gone: {ids:?}");
    let rows = session.audit("s-budget").await;
    assert!(rows.iter().any(|r| r.tool_name == "compaction"));
}

/// A subagent's model is shown only its narrowed tools, and its answer is the `subagent` call's result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_model_sees_only_its_tools() {
    let server = ModelServer::start(vec![
        Answer::Json(
            200,
            anthropic_json(
                "",
                &[(
                    "t1",
                    "subagent",
                    json!({"subagent_type": "explore", "prompt": "what is in a.txt?"}),
                )],
                (50, 5),
            ),
        ),
        Answer::Json(200, anthropic_json("", &[read("k1", "a.txt")], (40, 5))),
        Answer::Json(200, anthropic_json("a.txt holds alpha", &[], (60, 5))),
        Answer::Json(200, anthropic_json("the explorer says alpha", &[], (80, 5))),
    ])
    .await;
    let config = server.config(Api::Anthropic, false);
    let session = Session::new(&[("a.txt", "alpha")], config.clone()).await;
    let report = session.run("s-sub", config, "ask an explorer").await;
    assert_eq!(report.answer.as_deref(), Some("the explorer says alpha"));
    let requests = server.requests();
    let lead = offered(Api::Anthropic, &requests[0]);
    let child = offered(Api::Anthropic, &requests[1]);
    assert!(
        lead.contains(&"subagent".to_owned()) && lead.contains(&"file_write".to_owned()),
        "{lead:?}"
    );
    assert!(child.contains(&"read_file".to_owned()), "{child:?}");
    for absent in ["subagent", "file_write", "file_edit", "run_bash"] {
        assert!(
            !child.contains(&absent.to_owned()),
            "the explorer is shown `{absent}`: {child:?}"
        );
    }
    assert!(
        requests[1]["system"].as_str().is_some_and(|s| !s.is_empty()),
        "the child's own system prompt"
    );
    let sub = report.calls().next().unwrap();
    assert!(
        sub.output.content.contains("a.txt holds alpha"),
        "{}",
        sub.output.content
    );
    let rows = session.audit("s-sub").await;
    assert!(
        rows.iter()
            .any(|r| r.tool_name == "read_file" && r.agent_name == "explore"),
        "the child's call is audited"
    );
}

/// The conversation is rebuilt from the runtime's steps: a call a hook rewrote is sent back as it ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_given_before_the_first_turn() {
    let server = ModelServer::start(vec![Answer::Json(200, openai_json("ok", &[], (1, 1)))]).await;
    let mut model = HttpModel::new(server.config(Api::OpenAi, false), "t").unwrap();
    let spec = ToolSpec {
        name: "probe".into(),
        description: "d".into(),
        input_schema: json!({"type": "object", "properties": {"x": {"type": "integer"}}}),
    };
    model.tools(std::slice::from_ref(&spec));
    let history: Vec<StepRecord> = Vec::new();
    assert_eq!(model.next_turn(&history).await, ModelTurn::Answer("ok".into()));
    assert_eq!(model.take_reported_tokens(), Some(2));
    assert_eq!(model.take_reported_tokens(), None, "taken once");
    let request = &server.requests()[0];
    assert_eq!(request["tools"][0]["function"]["parameters"], spec.input_schema);
    assert_eq!(request["model"], "test-model");
}

/// A short session against a real model server, when `AGENT_GUARD_LIVE_MODEL_URL` names one
/// (`AGENT_GUARD_LIVE_MODEL_API`, `AGENT_GUARD_LIVE_MODEL_NAME` and `AGENT_GUARD_LIVE_MODEL_KEY_ENV` say how).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_model_session() {
    let Ok(url) = std::env::var("AGENT_GUARD_LIVE_MODEL_URL") else {
        need::skip("AGENT_GUARD_LIVE_MODEL_URL is not set (a run against a live model is opt-in)");
        return;
    };
    let api: Api = std::env::var("AGENT_GUARD_LIVE_MODEL_API")
        .unwrap_or_else(|_| "openai".into())
        .parse()
        .unwrap();
    let mut config = agent_model::ModelConfig::new(
        api,
        std::env::var("AGENT_GUARD_LIVE_MODEL_NAME").unwrap_or_else(|_| "default".into()),
    );
    config.base_url = url;
    if let Ok(var) = std::env::var("AGENT_GUARD_LIVE_MODEL_KEY_ENV") {
        config.api_key = std::env::var(&var).ok();
        config.key_var = var;
    }
    let session = Session::new(&[("answer.txt", "forty-two\n")], config.clone()).await;
    let report = session
        .run(
            "s-live",
            config,
            "Read the file answer.txt with the read_file tool and tell me what it says.",
        )
        .await;
    println!("live session: {} — {:?}", report.reason, report.answer);
    assert_eq!(report.reason, "completed");
    assert!(
        report
            .calls()
            .any(|c| c.call.name == "read_file" && c.status == CallStatus::Ok)
    );
}

/// The calls of one answer run as their tools allow: shell commands are not concurrency-safe, so two of them run
/// one after the other, in the order the model wrote them (reads of one answer share a parallel batch).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_of_one_answer_run_as_their_tools_allow() {
    let sleep = |id| (id, "run_bash", json!({"command": "sleep 0.5"}));
    let server = ModelServer::start(vec![
        events(openai_events("", &[sleep("s1"), sleep("s2")], 5, None)),
        events(openai_events("slept", &[], 5, None)),
    ])
    .await;
    let config = server.config(Api::OpenAi, true);
    let session = Session::new(&[], config.clone()).await;
    let report = session.run("s-par", config, "sleep twice").await;
    assert_eq!(report.answer.as_deref(), Some("slept"));
    let calls: Vec<_> = report.calls().collect();
    assert_eq!(calls.len(), 2);
    let (a, b) = (calls[0].ran.unwrap(), calls[1].ran.unwrap());
    assert!(b.0 >= a.1, "the second command starts after the first ended");
}

/// Arguments that are not JSON reach the runtime as text: the call fails, the model is told, the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbled_arguments_are_a_failed_call_not_a_broken_session() {
    let garbled = json!({"id": "x", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "g1", "type": "function",
                            "function": {"name": "read_file", "arguments": "{\"path\": \"a.t"}}]}}]});
    let server = ModelServer::start(vec![
        Answer::Json(200, garbled),
        Answer::Json(200, openai_json("sorry", &[], (10, 1))),
    ])
    .await;
    let config = server.config(Api::OpenAi, false);
    let session = Session::new(&[("a.txt", "alpha")], config.clone()).await;
    let report = session.run("s-garbled", config, "read a.txt").await;
    assert_eq!(report.answer.as_deref(), Some("sorry"));
    let call = report.calls().next().unwrap();
    assert_eq!(call.call.args, json!("{\"path\": \"a.t"));
    assert_ne!(call.status, CallStatus::Ok, "{call:?}");
    assert!(call.output.is_error);
    let sent = results(Api::OpenAi, &server.requests()[1]);
    assert_eq!(sent[0].0, "g1");
    let assistant = server.requests()[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap()
        .clone();
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"], "{\"path\": \"a.t",
        "the model sees its own call as it wrote it"
    );
}

/// A concurrency-safe tool that takes a while.
struct SlowProbe;

impl agent_tool_traits::Tool for SlowProbe {
    fn name(&self) -> &str {
        "slow_probe"
    }
    fn description(&self) -> &str {
        "Waits 400 ms and says which probe it was."
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    }
    fn is_concurrency_safe(&self, _args: &Value) -> bool {
        true
    }
    fn call<'a>(
        &'a self,
        args: Value,
        _ctx: &'a agent_tool_traits::ToolContext,
    ) -> agent_tool_traits::ToolFuture<'a> {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(400)).await;
            Ok(agent_tool_traits::ToolOutput::ok(format!("probe {}", args["n"])))
        })
    }
}

/// Concurrency-safe calls of one streamed answer run in one parallel batch; the model is shown the tool's own
/// schema.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_safe_calls_of_one_answer_run_in_parallel() {
    let probe = |id, n| (id, "slow_probe", json!({"n": n}));
    let server = ModelServer::start(vec![
        events(anthropic_events(
            "",
            &[probe("p1", 1), probe("p2", 2), probe("p3", 3)],
            2,
            (10, 5),
        )),
        events(anthropic_events("probed", &[], 2, (20, 5))),
    ])
    .await;
    let config = server.config(Api::Anthropic, true);
    let session = Session::with_tool(&[], config.clone(), Some(std::sync::Arc::new(SlowProbe)), None).await;
    let report = session.run("s-probe", config, "probe three times").await;
    assert_eq!(report.answer.as_deref(), Some("probed"));
    let calls: Vec<_> = report.calls().collect();
    assert_eq!(calls.len(), 3);
    for call in &calls {
        assert_eq!(
            (call.verdict.decision, call.status),
            (Decision::Allow, CallStatus::Ok),
            "{call:?}"
        );
    }
    let spans: Vec<_> = calls.iter().map(|c| c.ran.unwrap()).collect();
    assert!(
        spans.iter().all(|a| spans.iter().all(|b| a.0 < b.1 && b.0 < a.1)),
        "the three probes overlap"
    );
    let requests = server.requests();
    let shown = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "slow_probe")
        .unwrap()
        .clone();
    assert_eq!(shown["input_schema"], SlowProbe.input_schema());
    assert_eq!(results(Api::Anthropic, &requests[1])[2].1, "probe 3");
}

/// At the step limit the model gets one final turn without tools: the reminder is its last message and it may not
/// call tools; what it says is the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_final_turn_forbids_tools_and_its_text_is_the_answer() {
    let server = ModelServer::start(vec![
        Answer::Json(200, openai_json("", &[read("c1", "a.txt")], (10, 5))),
        Answer::Json(200, openai_json("a.txt says alpha", &[], (20, 5))),
    ])
    .await;
    let config = server.config(Api::OpenAi, false);
    let session = Session::with_tool(&[("a.txt", "alpha")], config.clone(), None, Some(1)).await;
    let report = session.run("s-final", config, "read a.txt").await;
    assert_eq!(report.answer.as_deref(), Some("a.txt says alpha"));
    assert_eq!(report.reason, "max steps (1): final answer without tools");
    let last = &server.requests()[1];
    assert_eq!(last["tool_choice"], "none");
    let messages = last["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap()["role"],
        "user",
        "the reminder comes last"
    );
    assert_eq!(
        results(Api::OpenAi, last).len(),
        1,
        "the step's result comes before it"
    );
}

/// A server nobody listens on: the connection is retried, then the error names the endpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connection_is_retried_then_reported() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let mut config = agent_model::ModelConfig::new(Api::OpenAi, "m");
    config.base_url = format!("http://{addr}/v1");
    config.backoff = Duration::from_millis(100);
    config.max_retries = 2;
    let session = Session::new(&[], config.clone()).await;
    let started = Instant::now();
    let report = session.run("s-refused", config, "hi").await;
    assert_eq!(
        report.reason,
        format!(
            "the model failed: cannot reach `http://{addr}/v1/chat/completions` (3 attempt(s)): Connection refused \
             (os error 111)"
        ),
        "the cause is named, not only the URL"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(100),
        "two retries waited (50-100 ms, then 100-200 ms)"
    );
}

/// A server that numbers each answer's calls from 0 again: the second turn's ids are made unique, and the results
/// go back under the ids the conversation holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_call_ids_are_made_unique() {
    let server = ModelServer::start(vec![
        Answer::Json(200, openai_json("", &[read("call_0", "a.txt")], (10, 5))),
        Answer::Json(200, openai_json("", &[read("call_0", "b.txt")], (20, 5))),
        Answer::Json(200, openai_json("done", &[], (30, 5))),
    ])
    .await;
    let config = server.config(Api::OpenAi, false);
    let session = Session::new(&[("a.txt", "alpha"), ("b.txt", "beta")], config.clone()).await;
    let report = session.run("s-ids", config, "read both").await;
    let ids: Vec<&str> = report.calls().map(|c| c.call.id.as_str()).collect();
    assert_eq!(ids, vec!["call_0", "call-2-0"]);
    let sent = results(Api::OpenAi, &server.requests()[2]);
    assert_eq!(
        sent.iter()
            .map(|r| (r.0.as_str(), r.1.contains("alpha") || r.1.contains("beta")))
            .collect::<Vec<_>>(),
        vec![("call_0", true), ("call-2-0", true)]
    );
}

/// A context the server counts past the soft limit brings the budget's nudge, which the model is sent after the
/// step's results.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reported_count_past_the_soft_limit_brings_a_nudge_after_the_results() {
    let server = ModelServer::start(vec![
        events(anthropic_events("", &[read("c1", "a.txt")], 4, (33_000, 10))),
        events(anthropic_events("alpha", &[], 4, (33_100, 5))),
    ])
    .await;
    let config = server.config(Api::Anthropic, true);
    let session = Session::new(&[("a.txt", "alpha")], config.clone()).await;
    let report = session.run("s-nudge", config, "read a.txt").await;
    assert_eq!(report.answer.as_deref(), Some("alpha"));
    assert!(
        report
            .limits
            .iter()
            .any(|l| l.kind == LimitKind::Nudge && l.step == 1),
        "{:?}",
        report.limits
    );
    let messages = server.requests()[1]["messages"].as_array().unwrap().clone();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    let blocks = last["content"].as_array().unwrap();
    assert_eq!(
        blocks[0]["type"], "tool_result",
        "the results come first in the user message"
    );
    assert_eq!(blocks.last().unwrap()["type"], "text", "then the nudge");
    assert_eq!(
        messages.iter().filter(|m| m["role"] == "user").count(),
        2,
        "the task, then one user message of results and the nudge: the roles alternate"
    );
}
