//! The OTLP exporter: log records and metrics over HTTP with protobuf, through a bounded queue that drops (and
//! counts) rather than wait.
//!
//! Design: [`Exporter::export`] only puts a copy of the log record on a bounded channel (`try_send`); one worker
//! thread owns the OTLP client, collects what queued up into batches and sends each, so a slow or absent collector
//! costs the caller nothing. A full queue, a failed send or a send past the client's timeout drops the records
//! and counts them ([`Tally::dropped`]). The worker is a plain thread, not a task: the OTLP client is reqwest's
//! blocking one, which must never run (or be dropped) on an async runtime's thread.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, LoggerProvider as _, Severity};
use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _, UpDownCounter};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_otlp::{LogExporter, MetricExporter, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::logs::{
    LogBatch, LogExporter as _, LogProcessor, SdkLogRecord, SdkLogger, SdkLoggerProvider,
};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider, Temporality};

use crate::error::TelemetryError;
use crate::record::Record;
use crate::tally::Tally;

/// Records that may wait for the worker; past this, new ones are dropped and counted.
pub(crate) const QUEUE_RECORDS: usize = 2_048;

/// At most this many records per OTLP request.
const MAX_BATCH: usize = 512;

/// How long a record waits for more to fill its batch.
const BATCH_DELAY: Duration = Duration::from_millis(500);

/// The name of the instrumentation scope (and the default `service.name`).
const SCOPE: &str = "agent-guard";

/// The environment variables of the OTLP exporter that agent-guard reads itself; the others
/// (`OTEL_EXPORTER_OTLP_HEADERS`, `…_TIMEOUT`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, the per-signal
/// `…_LOGS_ENDPOINT`/`…_METRICS_ENDPOINT`) the OpenTelemetry SDK reads as the specification says.
pub(crate) const ENDPOINT_ENV: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
/// See [`ENDPOINT_ENV`]; only `http/protobuf` is supported.
pub(crate) const PROTOCOL_ENV: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";

/// Where and how to export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportConfig {
    /// The collector's base URL from the settings (`agentGuard.telemetry.endpoint`); the OTLP paths `/v1/logs`
    /// and `/v1/metrics` are added. `OTEL_EXPORTER_OTLP_ENDPOINT` wins over it; with neither, the OTLP default
    /// `http://localhost:4318`.
    pub endpoint: Option<String>,
    /// Delta metrics, for a short-lived process whose every run counts anew (the hook); cumulative otherwise.
    pub delta: bool,
    /// How often metrics are sent; `None` for the SDK's default (`OTEL_METRIC_EXPORT_INTERVAL`, else 60 s).
    pub metrics_interval: Option<Duration>,
}

impl ExportConfig {
    /// The protocol `OTEL_EXPORTER_OTLP_PROTOCOL` asks for, refused unless `http/protobuf` (or unset).
    pub(crate) fn check_protocol() -> Result<(), TelemetryError> {
        match std::env::var(PROTOCOL_ENV) {
            Ok(protocol) if !protocol.trim().is_empty() && protocol.trim() != "http/protobuf" => {
                Err(TelemetryError::Protocol(protocol))
            }
            Ok(_) | Err(_) => Ok(()),
        }
    }

    /// The URL of one signal (`/v1/logs`), when the settings name the endpoint and the environment does not.
    fn signal_url(&self, path: &str) -> Option<String> {
        if std::env::var_os(ENDPOINT_ENV).is_some_and(|v| !v.is_empty()) {
            return None;
        }
        self.endpoint
            .as_deref()
            .map(|base| format!("{}{path}", base.trim_end_matches('/')))
    }
}

/// Sends records and metrics to an OTLP collector; cloning shares it.
#[derive(Debug, Clone)]
pub(crate) struct Exporter {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    logs: SdkLoggerProvider,
    logger: SdkLogger,
    meters: SdkMeterProvider,
    instruments: Instruments,
}

#[derive(Debug)]
struct Instruments {
    decisions: Counter<u64>,
    answers: Counter<u64>,
    latency: Histogram<f64>,
    pending: UpDownCounter<i64>,
}

impl Exporter {
    /// An exporter to the collector `config` and the environment name; drops are counted in `tally`. Nothing is
    /// sent yet: an unreachable collector shows only as dropped records later.
    pub(crate) fn start(config: &ExportConfig, tally: Arc<Tally>) -> Result<Self, TelemetryError> {
        ExportConfig::check_protocol()?;
        let resource = Resource::builder()
            .with_service_name(SCOPE)
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build();
        let mut logs = LogExporter::builder().with_http();
        if let Some(url) = config.signal_url("/v1/logs") {
            logs = logs.with_endpoint(url);
        }
        let logs = logs.build().map_err(|e| TelemetryError::Build(e.to_string()))?;
        let mut metrics = MetricExporter::builder()
            .with_http()
            .with_temporality(if config.delta {
                Temporality::Delta
            } else {
                Temporality::Cumulative
            });
        if let Some(url) = config.signal_url("/v1/metrics") {
            metrics = metrics.with_endpoint(url);
        }
        let metrics = metrics
            .build()
            .map_err(|e| TelemetryError::Build(e.to_string()))?;
        let queue = Queue::start(logs, Arc::clone(&tally))?;
        let logs = SdkLoggerProvider::builder()
            .with_resource(resource.clone())
            .with_log_processor(queue)
            .build();
        let mut reader = PeriodicReader::builder(metrics);
        if let Some(interval) = config.metrics_interval {
            reader = reader.with_interval(interval);
        }
        let meters = SdkMeterProvider::builder()
            .with_resource(resource)
            .with_reader(reader.build())
            .build();
        let meter = meters.meter(SCOPE);
        let instruments = Instruments {
            decisions: meter
                .u64_counter("agent_guard.decisions")
                .with_description("Decisions made, by outcome and deciding layer")
                .build(),
            answers: meter
                .u64_counter("agent_guard.answers")
                .with_description("Answers to asks, by outcome and who answered")
                .build(),
            latency: meter
                .f64_histogram("agent_guard.answer.latency")
                .with_unit("ms")
                .with_description("How long asks waited for their answer")
                .build(),
            pending: meter
                .i64_up_down_counter("agent_guard.asks.pending")
                .with_description("Asks waiting for an answer")
                .build(),
        };
        let dropped = Arc::clone(&tally);
        // Kept alive by the meter provider, which calls it at each collection.
        let _observable = meter
            .u64_observable_counter("agent_guard.telemetry.dropped")
            .with_description("Telemetry records dropped because the collector was slow or down")
            .with_callback(move |observer| observer.observe(dropped.dropped_total(), &[]))
            .build();
        let logger = logs.logger(SCOPE);
        Ok(Self {
            inner: Arc::new(Inner {
                logs,
                logger,
                meters,
                instruments,
            }),
        })
    }

    /// Queues `record` as a log record and counts it in the metrics; never waits.
    pub(crate) fn export(&self, record: &Record) {
        let inner = &self.inner;
        let mut log = inner.logger.create_log_record();
        let now = SystemTime::now();
        log.set_timestamp(now);
        log.set_observed_timestamp(now);
        log.set_event_name(if record.is_answer() {
            "agent_guard.answer"
        } else {
            "agent_guard.decision"
        });
        let (severity, text) = match record.decision.as_deref() {
            Some("allow") | None => (Severity::Info, "INFO"),
            Some(_) => (Severity::Warn, "WARN"),
        };
        log.set_severity_number(severity);
        log.set_severity_text(text);
        log.set_body(AnyValue::from(body(record)));
        for (key, value) in attributes(record) {
            log.add_attribute(key, value);
        }
        inner.logger.emit(log);
        if record.is_decision() {
            let decision = record.decision.clone().unwrap_or_default();
            let layer = record.layer.clone().unwrap_or_default();
            inner.instruments.decisions.add(
                1,
                &[
                    KeyValue::new("decision", decision.clone()),
                    KeyValue::new("layer", layer),
                ],
            );
            if let Some(kind) = record.approver_kind() {
                inner.instruments.answers.add(
                    1,
                    &[
                        KeyValue::new("decision", decision),
                        KeyValue::new("approver", kind.to_owned()),
                    ],
                );
                inner.instruments.latency.record(record.latency_ms as f64, &[]);
            }
        }
    }

    /// An ask waits (`1`) or got its end (`-1`).
    pub(crate) fn asks_pending(&self, change: i64) {
        self.inner.instruments.pending.add(change, &[]);
    }

    /// Sends what is queued and stops, within `deadline`: what is still unsent then is dropped and counted. Logs
    /// and metrics are ended on a thread of their own, so that a collector that hangs costs the caller the
    /// deadline, not the client's timeout.
    pub(crate) fn shutdown(&self, deadline: Duration) {
        let inner = Arc::clone(&self.inner);
        let (done, finished) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("agent-guard-otlp-stop".into())
            .spawn(move || {
                let _logs = inner.logs.shutdown_with_timeout(deadline);
                let _metrics = inner.meters.shutdown();
                let _told = done.send(());
            });
        if spawned.is_ok() {
            let _ = finished.recv_timeout(deadline);
        }
    }
}

/// The log record's body: the decision, the tool and what the call was about.
fn body(record: &Record) -> String {
    let decision = record.decision.as_deref().unwrap_or("stop");
    match record.subject.as_str() {
        "" => format!("{decision} {}", record.tool),
        subject => format!("{decision} {}: {subject}", record.tool),
    }
}

/// The log record's attributes: every field of the record, under `agent_guard.*` (and the session also as the
/// semantic conventions' `session.id`).
fn attributes(record: &Record) -> Vec<(&'static str, AnyValue)> {
    let mut out: Vec<(&'static str, AnyValue)> = vec![
        ("session.id", record.session_id.clone().into()),
        ("agent_guard.session", record.session_id.clone().into()),
        ("agent_guard.agent", record.agent.clone().into()),
        ("agent_guard.tool", record.tool.clone().into()),
        ("agent_guard.subject", record.subject.clone().into()),
        ("agent_guard.status", record.status.clone().into()),
        (
            "agent_guard.latency_ms",
            i64::try_from(record.latency_ms).unwrap_or(i64::MAX).into(),
        ),
        ("agent_guard.reason", record.reason.clone().into()),
        ("agent_guard.ts", record.ts.clone().into()),
    ];
    let optional = [
        ("agent_guard.decision", &record.decision),
        ("agent_guard.layer", &record.layer),
        ("agent_guard.step", &record.step),
        ("agent_guard.rule", &record.rule),
        ("agent_guard.rule_file", &record.rule_file),
        ("agent_guard.mode", &record.mode),
        ("agent_guard.sandbox", &record.sandbox),
        ("agent_guard.approver", &record.approver),
    ];
    for (key, value) in optional {
        if let Some(value) = value {
            out.push((key, value.clone().into()));
        }
    }
    if let Some(id) = record.audit_id {
        out.push(("agent_guard.audit_id", id.into()));
    }
    out
}

/// What the worker is told.
enum Message {
    Record(Box<(SdkLogRecord, InstrumentationScope)>),
    Resource(Resource),
    Flush(mpsc::Sender<()>),
}

/// The log processor: a bounded queue to the worker thread that owns the OTLP client.
#[derive(Debug)]
struct Queue {
    /// `None` once shut down: dropping the sender ends the worker after what is queued.
    sender: Mutex<Option<SyncSender<Message>>>,
    /// Told by the worker when it has sent what was queued and stopped.
    stopped: Mutex<mpsc::Receiver<()>>,
    /// Records queued and not yet sent or dropped: what a shutdown past its deadline drops.
    queued: Arc<AtomicU64>,
    tally: Arc<Tally>,
}

impl Queue {
    fn start(exporter: LogExporter, tally: Arc<Tally>) -> Result<Self, TelemetryError> {
        let (sender, receiver) = mpsc::sync_channel(QUEUE_RECORDS);
        let (stop, stopped) = mpsc::channel();
        let queued = Arc::new(AtomicU64::new(0));
        let worker = Worker {
            exporter,
            tally: Arc::clone(&tally),
            queued: Arc::clone(&queued),
        };
        std::thread::Builder::new()
            .name("agent-guard-otlp".into())
            .spawn(move || {
                worker.run(&receiver);
                let _told = stop.send(());
            })
            .map_err(|e| TelemetryError::Build(format!("cannot start the exporter's thread: {e}")))?;
        Ok(Self {
            sender: Mutex::new(Some(sender)),
            stopped: Mutex::new(stopped),
            queued,
            tally,
        })
    }

    fn send(&self, message: Message) -> bool {
        let sender = self.sender.lock().unwrap_or_else(PoisonError::into_inner);
        match sender.as_ref().map(|s| s.try_send(message)) {
            Some(Ok(())) => true,
            Some(Err(TrySendError::Full(_) | TrySendError::Disconnected(_))) | None => false,
        }
    }
}

impl LogProcessor for Queue {
    fn emit(&self, record: &mut SdkLogRecord, scope: &InstrumentationScope) {
        self.queued.fetch_add(1, Ordering::Relaxed);
        if !self.send(Message::Record(Box::new((record.clone(), scope.clone())))) {
            self.queued.fetch_sub(1, Ordering::Relaxed);
            self.tally.dropped(1);
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        let (reply, flushed) = mpsc::channel();
        if self.send(Message::Flush(reply)) {
            let _ = flushed.recv_timeout(Duration::from_secs(5));
        }
        Ok(())
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        drop(self.sender.lock().unwrap_or_else(PoisonError::into_inner).take());
        let stopped = self.stopped.lock().unwrap_or_else(PoisonError::into_inner);
        if stopped.recv_timeout(timeout).is_err() {
            // The worker is still sending (a collector that hangs): what it holds is lost with the process.
            self.tally.dropped(self.queued.swap(0, Ordering::Relaxed));
        }
        Ok(())
    }

    fn set_resource(&mut self, resource: &Resource) {
        let _sent = self.send(Message::Resource(resource.clone()));
    }
}

/// The thread that batches and sends.
struct Worker {
    exporter: LogExporter,
    tally: Arc<Tally>,
    queued: Arc<AtomicU64>,
}

impl Worker {
    fn run(mut self, receiver: &mpsc::Receiver<Message>) {
        let mut batch: Vec<(SdkLogRecord, InstrumentationScope)> = Vec::new();
        loop {
            let wait = if batch.is_empty() {
                Duration::from_secs(3_600)
            } else {
                BATCH_DELAY
            };
            match receiver.recv_timeout(wait) {
                Ok(Message::Record(record)) => {
                    batch.push(*record);
                    if batch.len() >= MAX_BATCH {
                        self.send(&mut batch);
                    }
                }
                Ok(Message::Resource(resource)) => self.exporter.set_resource(&resource),
                Ok(Message::Flush(reply)) => {
                    self.send(&mut batch);
                    let _told = reply.send(());
                }
                Err(RecvTimeoutError::Timeout) => self.send(&mut batch),
                Err(RecvTimeoutError::Disconnected) => {
                    self.send(&mut batch);
                    let _ = self.exporter.shutdown();
                    return;
                }
            }
        }
    }

    /// Sends `batch` in one request and empties it; a failure drops its records and counts them.
    fn send(&mut self, batch: &mut Vec<(SdkLogRecord, InstrumentationScope)>) {
        if batch.is_empty() {
            return;
        }
        let count = batch.len() as u64;
        let refs: Vec<(&SdkLogRecord, &InstrumentationScope)> =
            batch.iter().map(|(record, scope)| (record, scope)).collect();
        let sent = futures_executor::block_on(self.exporter.export(LogBatch::new(&refs)));
        drop(refs);
        batch.clear();
        self.queued
            .fetch_sub(count.min(self.queued.load(Ordering::Relaxed)), Ordering::Relaxed);
        if sent.is_err() {
            self.tally.dropped(count);
        }
    }
}
