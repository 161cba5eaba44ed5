//! The process's counts of decisions and answers, rendered as Prometheus text (`serve`'s `/metrics`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use agent_hooks::{AuditRow, AuditStatus};

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
        self.count_decision(
            record.decision.as_deref().unwrap_or_default(),
            record.layer.as_deref().unwrap_or_default(),
            record.approver_kind(),
            record.latency_ms,
        );
    }

    /// Counts the audit row `row` as [`count`](Self::count) counts its record, without building the record (no
    /// parse of the input, no redaction): what a process that exports nothing does for every row.
    pub fn count_row(&self, row: &AuditRow) {
        let Some(decision) = row.decision.as_deref() else {
            return;
        };
        if row.status == AuditStatus::SessionStop {
            return;
        }
        let layer = row
            .decided_by
            .as_deref()
            .map_or("", |text| text.split_once('/').map_or(text, |(layer, _)| layer));
        let approver = row
            .detail
            .approver
            .as_deref()
            .map(|text| text.split_once(':').map_or(text, |(kind, _)| kind));
        self.count_decision(decision, layer, approver, row.elapsed_ms);
    }

    /// Counts one decision by its outcome and layer, and an answer by its outcome and approver kind with its wait.
    fn count_decision(&self, decision: &str, layer: &str, approver_kind: Option<&str>, latency_ms: u64) {
        {
            let mut decisions = lock(&self.decisions);
            // The key is looked up by reference: a decision already counted allocates nothing.
            match decisions
                .iter_mut()
                .find(|((d, l), _)| d == decision && l == layer)
            {
                Some((_, count)) => *count += 1,
                None => {
                    decisions.insert((decision.to_owned(), layer.to_owned()), 1);
                }
            }
        }
        if let Some(kind) = approver_kind {
            *lock(&self.answers)
                .entry((decision.to_owned(), kind.to_owned()))
                .or_default() += 1;
            self.latency(latency_ms);
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

    /// A row counted without its record is counted as its record is: the same decisions, layers, answers and
    /// latencies, and nothing for a session's stop or a row without a decision.
    #[test]
    fn a_row_counts_as_its_record_does() {
        use agent_hooks::AuditDetail;
        let row =
            |decision: Option<&str>, decided_by: Option<&str>, approver: Option<&str>, status| AuditRow {
                id: None,
                session_id: "s".into(),
                step: 0,
                tool_name: "Bash".into(),
                status,
                decision: decision.map(str::to_owned),
                decided_by: decided_by.map(str::to_owned),
                elapsed_ms: 700,
                output_preview: "why".into(),
                agent_name: "hook".into(),
                ts: String::new(),
                tool_input: Some(r#"{"command":"ls"}"#.into()),
                cwd: None,
                permission_mode: None,
                detail: AuditDetail {
                    approver: approver.map(str::to_owned),
                    ..AuditDetail::default()
                },
            };
        let rows = [
            row(Some("allow"), Some("rules/allow-rule"), None, AuditStatus::Ok),
            row(Some("allow"), Some("rules/allow-rule"), None, AuditStatus::Ok),
            row(Some("ask"), Some("bash-guard"), None, AuditStatus::Ok),
            row(Some("deny"), None, None, AuditStatus::Denied),
            row(
                Some("deny"),
                Some("approval/approver"),
                Some("page:abc"),
                AuditStatus::Denied,
            ),
            row(
                Some("allow"),
                Some("approval/approver"),
                Some("nobody"),
                AuditStatus::Ok,
            ),
            row(Some("allow"), Some("rules"), None, AuditStatus::SessionStop),
            row(None, Some("rules"), None, AuditStatus::TaintCleared),
        ];
        let (by_record, by_row) = (Tally::default(), Tally::default());
        for row in &rows {
            by_record.count(&Record::of_row(row));
            by_row.count_row(row);
        }
        assert_eq!(by_row.prometheus_text(), by_record.prometheus_text());
        assert!(
            by_row
                .prometheus_text()
                .contains("agent_guard_decisions_total{decision=\"allow\",layer=\"rules\"} 2\n"),
            "{}",
            by_row.prometheus_text()
        );
    }
}
