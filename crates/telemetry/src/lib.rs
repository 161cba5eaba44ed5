//! Decisions made observable where teams look: every decision and every answer agent-guard records in its audit
//! log is also an OpenTelemetry log record (OTLP over HTTP with protobuf), counted in OpenTelemetry metrics and in
//! Prometheus text for `serve`'s `/metrics`.
//!
//! One fact, one place: the exported [`Record`] is built from the [`AuditRow`] the audit log writes, never from
//! the decision again, so the export and the log cannot disagree on the layer, the rule, the sandbox or the
//! approver. Long-lived processes (`serve`, `agent`) see every row through [`AuditObserver`] on their audit log;
//! the one-shot hook hands its row to a sender process (crates/cli).
//!
//! **Invariant:** telemetry never blocks or changes a decision. [`Telemetry::observe`] updates counters and puts
//! a copy of the record on a bounded queue (`try_send`); a full queue or a collector that is slow or down drops
//! records and counts them (`agent_guard_telemetry_dropped_total`).
//! **Invariant:** nothing but the audit row's facts leaves the process, and the call's input only as a redacted,
//! cut summary ([`summary`]); the decision crates (rules, fs-sandbox, bash-guard, decide) do not depend on this
//! crate.
//!
//! ```
//! use agent_telemetry::{Record, Telemetry};
//! use agent_hooks::{AuditDetail, AuditRow, AuditStatus};
//!
//! let telemetry = Telemetry::local(); // counts only; `export_to` adds an OTLP exporter
//! let row = AuditRow {
//!     id: None, session_id: "s1".into(), step: 0, tool_name: "Bash".into(), status: AuditStatus::Ok,
//!     decision: Some("allow".into()), decided_by: Some("rules/allow-rule".into()), elapsed_ms: 2,
//!     output_preview: "allowed by `Bash(git status)`".into(), agent_name: "hook".into(),
//!     ts: "2026-12-02T10:00:00.000Z".into(), tool_input: Some(r#"{"command":"git status"}"#.into()),
//!     cwd: Some("/work/p".into()), permission_mode: Some("default".into()),
//!     detail: AuditDetail { rule: Some("Bash(git status)".into()), ..AuditDetail::default() },
//! };
//! telemetry.observe(&row);
//! assert_eq!(Record::of_row(&row).subject, "git status");
//! assert!(telemetry.tally().prometheus_text()
//!     .contains(r#"agent_guard_decisions_total{decision="allow",layer="rules"} 1"#));
//! ```

mod error;
mod export;
mod record;
mod tally;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agent_hooks::{AuditObserver, AuditRow};

use crate::export::Exporter;

pub use error::TelemetryError;
pub use export::ExportConfig;
pub use record::Record;
pub use record::subject;
pub use record::summary;
pub use tally::Tally;

/// A process's telemetry: its counts, and the OTLP exporter when export is on. Cloning shares both.
#[derive(Debug, Clone, Default)]
pub struct Telemetry {
    tally: Arc<Tally>,
    exporter: Arc<OnceLock<Exporter>>,
}

impl Telemetry {
    /// Counts only, nothing exported (until [`export_to`](Self::export_to)).
    pub fn local() -> Self {
        Self::default()
    }

    /// Starts exporting to the collector of `config` from now on; the exporter's drops are counted here. A second
    /// call keeps the first exporter.
    pub fn export_to(&self, config: &ExportConfig) -> Result<(), TelemetryError> {
        if self.exporter.get().is_some() {
            return Ok(());
        }
        let exporter = Exporter::start(config, Arc::clone(&self.tally))?;
        // A racing second start loses: its exporter is shut down at once, nothing having been queued on it.
        if let Err(spare) = self.exporter.set(exporter) {
            spare.shutdown(Duration::ZERO);
        }
        Ok(())
    }

    /// Whether records are exported.
    pub fn exporting(&self) -> bool {
        self.exporter.get().is_some()
    }

    /// Counts `row` and exports its record; never waits.
    pub fn observe(&self, row: &AuditRow) {
        if self.exporter.get().is_some() {
            self.observe_record(&Record::of_row(row));
        } else {
            // Nothing leaves the process: the counts need neither the record's subject nor its redaction.
            self.tally.count_row(row);
        }
    }

    /// Counts and exports a record built before (the hook's sender reads them from its input); it must be
    /// [`redacted`](Record::redacted) already.
    pub fn observe_record(&self, record: &Record) {
        self.tally.count(record);
        if let Some(exporter) = self.exporter.get() {
            exporter.export(record);
        }
    }

    /// An ask was put to a person and waits.
    pub fn ask_opened(&self) {
        self.tally.ask_opened();
        if let Some(exporter) = self.exporter.get() {
            exporter.asks_pending(1);
        }
    }

    /// An ask got its answer or expired.
    pub fn ask_closed(&self) {
        self.tally.ask_closed();
        if let Some(exporter) = self.exporter.get() {
            exporter.asks_pending(-1);
        }
    }

    /// The counts.
    pub fn tally(&self) -> &Tally {
        &self.tally
    }

    /// Sends what is queued, within `deadline`, on a thread of its own (a collector that hangs costs the caller
    /// the deadline, not the client's timeout; what is unsent then is dropped and counted); nothing when not
    /// exporting.
    pub fn shutdown(&self, deadline: Duration) {
        if let Some(exporter) = self.exporter.get() {
            exporter.shutdown(deadline);
        }
    }
}

impl AuditObserver for Telemetry {
    fn observe(&self, row: &AuditRow) {
        Telemetry::observe(self, row);
    }
}
