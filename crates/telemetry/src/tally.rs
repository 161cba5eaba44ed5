//! The process's counts of decisions and answers, rendered as Prometheus text (`serve`'s `/metrics`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::record::Record;

/// The upper bounds, in milliseconds, of the answer-latency histogram's buckets: from a quick click to the
/// approval timeout's order of minutes.
pub(crate) const LATENCY_BUCKETS_MS: &[u64] =
    &[100, 500, 1_000, 5_000, 10_000, 30_000, 60_000, 120_000, 300_000];

/// Counts of what this process decided and answered since it started. Cheap to update from any thread; read by
/// [`prometheus_text`](Self::prometheus_text).
#[derive(Debug, Default)]
pub struct Tally {
    /// Decisions by `(decision, layer)`.
    decisions: Mutex<BTreeMap<(String, String), u64>>,
    /// Answers by `(decision, approver kind)`.
    answers: Mutex<BTreeMap<(String, String), u64>>,
    /// Answer latencies: a count per bucket of [`LATENCY_BUCKETS_MS`] (not cumulative), then the count above.
    latency_buckets: Mutex<Vec<u64>>,
    latency_sum_ms: AtomicU64,
    latency_count: AtomicU64,
    asks_pending: AtomicI64,
    /// Records the exporter dropped: its queue was full, or the collector failed or was too slow.
    dropped: AtomicU64,
}

impl Tally {
    /// Counts one record: a decision by its outcome and layer, an answer by its outcome and approver, and an
    /// answer's wait in the latency histogram.
    pub fn count(&self, record: &Record) {
        if !record.is_decision() {
            return;
        }
        let decision = record.decision.clone().unwrap_or_default();
        let layer = record.layer.clone().unwrap_or_default();
        *lock(&self.decisions)
            .entry((decision.clone(), layer))
            .or_default() += 1;
        if let Some(kind) = record.approver_kind() {
            *lock(&self.answers)
                .entry((decision, kind.to_owned()))
                .or_default() += 1;
            self.latency(record.latency_ms);
        }
    }

    fn latency(&self, ms: u64) {
        let mut buckets = lock(&self.latency_buckets);
        if buckets.is_empty() {
            buckets.resize(LATENCY_BUCKETS_MS.len() + 1, 0);
        }
        let index = LATENCY_BUCKETS_MS
            .iter()
            .position(|bound| ms <= *bound)
            .unwrap_or(LATENCY_BUCKETS_MS.len());
        if let Some(bucket) = buckets.get_mut(index) {
            *bucket += 1;
        }
        self.latency_sum_ms.fetch_add(ms, Ordering::Relaxed);
        self.latency_count.fetch_add(1, Ordering::Relaxed);
    }

    /// An ask was put to a person and waits.
    pub fn ask_opened(&self) {
        self.asks_pending.fetch_add(1, Ordering::Relaxed);
    }

    /// An ask got its answer (or expired).
    pub fn ask_closed(&self) {
        self.asks_pending.fetch_sub(1, Ordering::Relaxed);
    }

    /// The asks waiting now.
    pub fn asks_pending(&self) -> i64 {
        self.asks_pending.load(Ordering::Relaxed)
    }

    /// Counts `records` the exporter dropped.
    pub fn dropped(&self, records: u64) {
        self.dropped.fetch_add(records, Ordering::Relaxed);
    }

    /// The records the exporter dropped so far.
    pub fn dropped_total(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// The decisions counted so far, by `(decision, layer)`.
    pub fn decisions(&self) -> BTreeMap<(String, String), u64> {
        lock(&self.decisions).clone()
    }

    /// The counts in Prometheus' text exposition format (version 0.0.4).
    pub fn prometheus_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# HELP agent_guard_decisions_total Decisions made, by outcome and deciding layer.\n\
             # TYPE agent_guard_decisions_total counter"
        );
        for ((decision, layer), count) in lock(&self.decisions).iter() {
            let _ = writeln!(
                out,
                "agent_guard_decisions_total{{decision=\"{}\",layer=\"{}\"}} {count}",
                label(decision),
                label(layer)
            );
        }
        let _ = writeln!(
            out,
            "# HELP agent_guard_answers_total Answers to asks, by outcome and who answered.\n\
             # TYPE agent_guard_answers_total counter"
        );
        for ((decision, approver), count) in lock(&self.answers).iter() {
            let _ = writeln!(
                out,
                "agent_guard_answers_total{{decision=\"{}\",approver=\"{}\"}} {count}",
                label(decision),
                label(approver)
            );
        }
        let _ = writeln!(
            out,
            "# HELP agent_guard_asks_pending Asks waiting for an answer.\n\
             # TYPE agent_guard_asks_pending gauge\n\
             agent_guard_asks_pending {}",
            self.asks_pending()
        );
        let _ = writeln!(
            out,
            "# HELP agent_guard_answer_latency_ms How long asks waited for their answer, in milliseconds.\n\
             # TYPE agent_guard_answer_latency_ms histogram"
        );
        let buckets = lock(&self.latency_buckets).clone();
        let mut cumulative = 0_u64;
        for (index, bound) in LATENCY_BUCKETS_MS.iter().enumerate() {
            cumulative += buckets.get(index).copied().unwrap_or(0);
            let _ = writeln!(
                out,
                "agent_guard_answer_latency_ms_bucket{{le=\"{bound}\"}} {cumulative}"
            );
        }
        let count = self.latency_count.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "agent_guard_answer_latency_ms_bucket{{le=\"+Inf\"}} {count}\n\
             agent_guard_answer_latency_ms_sum {}\n\
             agent_guard_answer_latency_ms_count {count}",
            self.latency_sum_ms.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP agent_guard_telemetry_dropped_total Telemetry records dropped because the collector was slow \
             or down.\n\
             # TYPE agent_guard_telemetry_dropped_total counter\n\
             agent_guard_telemetry_dropped_total {}",
            self.dropped_total()
        );
        out
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A label value with `\`, `"` and newlines escaped, as the exposition format wants.
fn label(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(decision: &str, layer: &str, approver: Option<&str>, latency_ms: u64) -> Record {
        Record {
            audit_id: None,
            ts: String::new(),
            session_id: "s".into(),
            agent: "hook".into(),
            tool: "Bash".into(),
            subject: String::new(),
            decision: Some(decision.into()),
            layer: Some(layer.into()),
            step: None,
            rule: None,
            rule_file: None,
            mode: None,
            sandbox: None,
            approver: approver.map(str::to_owned),
            status: "OK".into(),
            latency_ms,
            reason: String::new(),
        }
    }

    #[test]
    fn the_text_counts_decisions_answers_and_latencies() {
        let tally = Tally::default();
        tally.count(&record("allow", "rules", None, 1));
        tally.count(&record("allow", "rules", None, 1));
        tally.count(&record("deny", "approval", Some("page:abc"), 700));
        tally.ask_opened();
        tally.ask_opened();
        tally.ask_closed();
        let text = tally.prometheus_text();
        assert!(
            text.contains("agent_guard_decisions_total{decision=\"allow\",layer=\"rules\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("agent_guard_answers_total{decision=\"deny\",approver=\"page\"} 1\n"),
            "{text}"
        );
        assert!(text.contains("agent_guard_asks_pending 1\n"), "{text}");
        assert!(
            text.contains("agent_guard_answer_latency_ms_bucket{le=\"500\"} 0\n"),
            "{text}"
        );
        assert!(
            text.contains("agent_guard_answer_latency_ms_bucket{le=\"1000\"} 1\n"),
            "{text}"
        );
        assert!(text.contains("agent_guard_answer_latency_ms_sum 700\n"), "{text}");
    }
}
