//! The runtime end to end: every decision of a step is one `tool_decision` telemetry event (the bundled scenario
//! sessions through every layer are tests of the CLI, which owns the scenario files).

use std::sync::{Arc, Mutex};

use agent_core::{DecisionSource, Runtime, RuntimeConfig};
use agent_rules::Settings;
use agent_tool_traits::{Decision, Layer, ToolCall};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;

/// Collects the fields of every `tool_decision` event.
#[derive(Clone, Default)]
struct Decisions(Arc<Mutex<Vec<Event>>>);

/// The fields of one event, by name.
type Event = Vec<(String, String)>;

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push((
            field.name().to_owned(),
            format!("{value:?}").trim_matches('"').to_owned(),
        ));
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Decisions {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: tracing_subscriber::layer::Context<'_, S>) {
        if event.metadata().name() == "tool_decision" {
            let mut fields = Vec::new();
            event.record(&mut Fields(&mut fields));
            self.0.lock().unwrap().push(fields);
        }
    }
}

#[tokio::test(flavor = "current_thread")]
async fn every_decision_is_a_tool_decision_event() {
    let decisions = Decisions::default();
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(decisions.clone()));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let runtime = Runtime::builder(Settings::new(), RuntimeConfig::new(dir.path()))
        .only_tools(&["Read", "Write"])
        .build()
        .unwrap();
    let reports = runtime
        .execute(
            "s",
            1,
            vec![
                ToolCall::new("1", "Read", json!({"file_path": "a.txt"})),
                ToolCall::new("2", "file_write", json!({"file_path": "b.txt", "content": "b"})),
                ToolCall::new("3", "run_bash", json!({"command": "ls"})),
            ],
        )
        .await;
    // A tool outside the narrowed set is denied on the one decision path, by the tool layer.
    assert_eq!(reports[2].verdict.decision, Decision::Deny);
    assert_eq!(reports[2].verdict.provenance.layer, Layer::Tool);
    assert_eq!(
        reports[1].source,
        DecisionSource::UserReject,
        "headless: the ask is refused"
    );

    let events = decisions.0.lock().unwrap().clone();
    assert_eq!(events.len(), reports.len());
    let field = |event: &Event, name: &str| {
        event
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let summary: Vec<(String, String, String, String)> = events
        .iter()
        .map(|e| {
            (
                field(e, "tool"),
                field(e, "decision"),
                field(e, "source"),
                field(e, "layer"),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("Read".into(), "allow".into(), "config".into(), "rules".into()),
            (
                "file_write".into(),
                "deny".into(),
                "user_reject".into(),
                "rules".into()
            ),
            ("run_bash".into(), "deny".into(), "config".into(), "tool".into()),
        ]
    );
}
