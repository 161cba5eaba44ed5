//! A test OTLP/HTTP collector on a free loopback port: it answers (or, told so, hangs on) every request and keeps
//! the log records and metric names it decoded with the `opentelemetry-proto` types.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use prost::Message as _;

/// One log record as received: its event name, body and attributes (values as text).
#[derive(Debug, Clone, Default)]
pub(crate) struct Received {
    pub(crate) event: String,
    pub(crate) body: String,
    pub(crate) attributes: BTreeMap<String, String>,
    pub(crate) service: String,
}

impl Received {
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

/// How the collector behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Answers `200` and keeps what it decoded.
    Up,
    /// Reads requests and never answers.
    Hangs,
}

/// A collector listening until the test ends.
pub(crate) struct Collector {
    pub(crate) url: String,
    logs: Arc<Mutex<Vec<Received>>>,
    metrics: Arc<Mutex<Vec<String>>>,
}

impl Collector {
    pub(crate) fn start(mode: Mode) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let logs = Arc::new(Mutex::new(Vec::new()));
        let metrics = Arc::new(Mutex::new(Vec::new()));
        let (l, m) = (Arc::clone(&logs), Arc::clone(&metrics));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (l, m) = (Arc::clone(&l), Arc::clone(&m));
                std::thread::spawn(move || serve(stream, mode, &l, &m));
            }
        });
        Self { url, logs, metrics }
    }

    /// The address of a collector that is down: a port that was free a moment ago, nobody listening.
    pub(crate) fn down_url() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        url
    }

    pub(crate) fn logs(&self) -> Vec<Received> {
        self.logs.lock().unwrap().clone()
    }

    pub(crate) fn metric_names(&self) -> Vec<String> {
        self.metrics.lock().unwrap().clone()
    }

    /// Waits (at most 30 s) until a received record passes `test`, and returns it.
    pub(crate) fn wait_for(&self, what: &str, test: impl Fn(&Received) -> bool) -> Received {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(found) = self.logs().into_iter().find(|r| test(r)) {
                return found;
            }
            assert!(
                Instant::now() < deadline,
                "no record {what} reached the collector; it has {:#?}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Reads HTTP/1.1 requests from one connection (kept alive) and answers each, or hangs.
fn serve(stream: TcpStream, mode: Mode, logs: &Mutex<Vec<Received>>, metrics: &Mutex<Vec<String>>) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let path = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        let mut length = 0_usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        if mode == Mode::Hangs {
            // Holds the connection open without a word until the test process ends.
            std::thread::sleep(Duration::from_secs(3_600));
            return;
        }
        match path.as_str() {
            "/v1/logs" => logs.lock().unwrap().extend(decode_logs(&body)),
            "/v1/metrics" => metrics.lock().unwrap().extend(decode_metrics(&body)),
            _ => {}
        }
        let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if writer.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

fn text(value: Option<&Any>) -> String {
    match value {
        Some(Any::StringValue(s)) => s.clone(),
        Some(Any::IntValue(i)) => i.to_string(),
        Some(Any::BoolValue(b)) => b.to_string(),
        Some(Any::DoubleValue(d)) => d.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

fn decode_logs(body: &[u8]) -> Vec<Received> {
    let request = ExportLogsServiceRequest::decode(body).unwrap();
    let mut out = Vec::new();
    for resource in request.resource_logs {
        let service = resource
            .resource
            .iter()
            .flat_map(|r| r.attributes.iter())
            .find(|kv| kv.key == "service.name")
            .map(|kv| text(kv.value.as_ref().and_then(|v| v.value.as_ref())))
            .unwrap_or_default();
        for scope in resource.scope_logs {
            for record in scope.log_records {
                out.push(Received {
                    event: record.event_name.clone(),
                    body: text(record.body.as_ref().and_then(|b| b.value.as_ref())),
                    attributes: record
                        .attributes
                        .iter()
                        .map(|kv| {
                            (
                                kv.key.clone(),
                                text(kv.value.as_ref().and_then(|v| v.value.as_ref())),
                            )
                        })
                        .collect(),
                    service: service.clone(),
                });
            }
        }
    }
    out
}

fn decode_metrics(body: &[u8]) -> Vec<String> {
    let request = ExportMetricsServiceRequest::decode(body).unwrap();
    request
        .resource_metrics
        .iter()
        .flat_map(|r| r.scope_metrics.iter())
        .flat_map(|s| s.metrics.iter())
        .map(|m| m.name.clone())
        .collect()
}
