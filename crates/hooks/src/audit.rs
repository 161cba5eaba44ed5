//! The built-in hook that writes every decided call to the table `agent_audit_log` (SQLite or PostgreSQL).
//!
//! Design: `post_tool_use` only queues a row on a bounded channel; one background task owns the connection and
//! writes whatever has queued up (after the first row, what comes within [`AuditConfig::linger`] too) as one
//! transaction of multi-row INSERT statements. A flush is a message on the same channel that ends the linger, so
//! when the writer answers it every row queued before it is committed. Failures of the writer (a closed
//! or read-only database, a full disk) are kept by the writer and returned by the next flush; rows that could not
//! even be queued are counted and returned the same way. Nothing is lost silently. Which database the writer talks
//! to is the business of [`Store`]; this file is the same for both.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use agent_tool_traits::Provenance;
use sqlx::sqlite::SqliteConnectOptions;
use tokio::sync::{mpsc, oneshot};

use crate::store::{self, Store};
use crate::{
    AgentHook, AuditDatabase, AuditError, CallStatus, HookError, HookFuture, PostToolUseAction,
    PostToolUseContext, SessionContext, SessionStopContext, time,
};

/// At most this many characters of a result are kept in `output_preview`.
pub const PREVIEW_CHARS: usize = 200;

/// The largest call input kept in the audit log, in bytes of JSON. A call is decided on its paths, commands and
/// hosts, which are short; an input larger than this is a file's content being written, kept out of the log.
pub const INPUT_MAX_BYTES: usize = 64 * 1024;

/// The `tool_name` of the row written when a session stops.
pub(crate) const SESSION_TOOL_NAME: &str = "session";

/// Rows per batch the writer's buffer is sized for up front.
const PREALLOCATED_ROWS: usize = 4_000;

/// The `status` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AuditStatus {
    /// The call ran and succeeded.
    Ok,
    /// The call ran and failed.
    Fail,
    /// The call was denied and never ran.
    Denied,
    /// The session stopped (`tool_name` is `session`).
    SessionStop,
    /// A person cleared the session's taint (`tool_name` is `session`): the row names who, and holds the taint
    /// that was cleared.
    TaintCleared,
}

impl AuditStatus {
    /// The stored text: `OK`, `FAIL`, `DENIED`, `SESSION_STOP` or `TAINT_CLEARED`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "OK",
            Self::Fail => "FAIL",
            Self::Denied => "DENIED",
            Self::SessionStop => "SESSION_STOP",
            Self::TaintCleared => "TAINT_CLEARED",
        }
    }

    /// The status stored as `text`, if it is one.
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Ok,
            Self::Fail,
            Self::Denied,
            Self::SessionStop,
            Self::TaintCleared,
        ]
        .into_iter()
        .find(|status| status.as_str() == text)
    }
}

impl From<CallStatus> for AuditStatus {
    fn from(status: CallStatus) -> Self {
        match status {
            CallStatus::Ok => Self::Ok,
            CallStatus::Fail => Self::Fail,
            CallStatus::Denied => Self::Denied,
        }
    }
}

/// One row of `agent_audit_log` (as JSON in a database's spool).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AuditRow {
    /// The row's key; `None` until it is written.
    pub id: Option<i64>,
    /// The session.
    pub session_id: String,
    /// The step of the loop (for `SESSION_STOP`: the number of steps).
    pub step: u32,
    /// The tool as the model named it, or `session`.
    pub tool_name: String,
    /// How the call ended.
    pub status: AuditStatus,
    /// `allow`, `ask` or `deny`; `None` for `SESSION_STOP`.
    pub decision: Option<String>,
    /// The layer and resolution step that decided (`rules/allow-rule`); `None` for `SESSION_STOP`.
    pub decided_by: Option<String>,
    /// How long the call (or the session) ran.
    pub elapsed_ms: u64,
    /// The first [`PREVIEW_CHARS`] characters of the result (for `SESSION_STOP`: the stop reason).
    pub output_preview: String,
    /// `lead` or the subagent's name.
    pub agent_name: String,
    /// When the row was made, RFC 3339 UTC with milliseconds (`2026-11-30T02:47:15.123Z`).
    pub ts: String,
    /// The call's input as JSON, so that the call can be decided again under other settings (`agent-guard
    /// diff`); `None` for `SESSION_STOP`, for rows written before the column existed, and for an input longer than
    /// [`INPUT_MAX_BYTES`].
    pub tool_input: Option<String>,
    /// The working directory the call was made in; `None` where `tool_input` is.
    pub cwd: Option<String>,
    /// The permission mode the call was decided in; `None` where `tool_input` is.
    pub permission_mode: Option<String>,
    /// What the decision rested on besides its layer and step: rule, file, sandbox, approver.
    #[serde(default)]
    pub detail: AuditDetail,
}

/// What a row's decision rested on besides its layer and step; each `None` where it does not apply (and in rows
/// written before these columns existed). Telemetry exports these as they are stored.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AuditDetail {
    /// The text of the rule that decided, or that an "allow always" answer saved (`Bash(npm test:*)`).
    pub rule: Option<String>,
    /// The settings file that rule was read from (or saved to), or its source (`session`, `cli`) when no file.
    pub rule_file: Option<String>,
    /// The kernel sandbox an allowed shell call runs under (`read-only`, `workspace-write with network`).
    pub sandbox: Option<String>,
    /// Who answered an ask, as [`Approver`] writes it (`terminal`, `page:<page session>`,
    /// `approve-hook:<coding agent session>`, …).
    pub approver: Option<String>,
    /// The key of the tool call an allowed `workspace-write` shell line ran for: the runs `agent-guard undo`
    /// recorded for it carry the same key ([`agent-guard audit`] shows them beside the row).
    pub call: Option<String>,
}

impl AuditDetail {
    /// The rule and its file of a verdict's provenance (the file, else the source's name).
    pub fn of_provenance(provenance: &Provenance) -> Self {
        Self {
            rule: provenance.rule.clone(),
            rule_file: provenance.file.clone().or_else(|| {
                provenance
                    .rule
                    .as_ref()
                    .and(provenance.source.map(|s| s.to_string()))
            }),
            sandbox: None,
            approver: None,
            call: None,
        }
    }
}

/// Who answered an ask: the party an answer row names in its `approver` column, as `kind` or `kind:session`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approver {
    /// The user at the terminal of `agent-guard agent` (or `demo`).
    Terminal,
    /// A person on the server's page; the page's own session (one per page load).
    Page {
        /// The page's session.
        session: String,
    },
    /// A client of the server's API that did not name itself.
    Api,
    /// `agent-guard approve`, the coding agent's PermissionRequest hook, itself (`--on-timeout deny`); the coding
    /// agent's session.
    ApproveHook {
        /// The coding agent's session.
        session: String,
    },
    /// The coding agent's own prompt: the hook did not answer, the coding agent asked in its terminal.
    CodingAgent {
        /// The coding agent's session.
        session: String,
    },
    /// A PermissionRequest hook of the runtime, by its name.
    Hook {
        /// The hook's name.
        name: String,
    },
    /// Nobody answered in time: the ask was denied.
    Nobody,
    /// A scenario's scripted answers (`agent-guard run`).
    Scripted,
    /// Another approver, by the name it gives itself.
    Other(String),
}

impl fmt::Display for Approver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Terminal => f.write_str("terminal"),
            Self::Page { session } => write!(f, "page:{session}"),
            Self::Api => f.write_str("api"),
            Self::ApproveHook { session } => write!(f, "approve-hook:{session}"),
            Self::CodingAgent { session } => write!(f, "coding-agent:{session}"),
            Self::Hook { name } => write!(f, "hook:{name}"),
            Self::Nobody => f.write_str("nobody"),
            Self::Scripted => f.write_str("scripted"),
            Self::Other(name) => f.write_str(name),
        }
    }
}

/// Sees every row an [`AuditLogHook`] is given, as it is queued: telemetry's entry. It must not block (the row is
/// queued on the caller's task).
pub trait AuditObserver: Send + Sync + fmt::Debug {
    /// One row, before it is written.
    fn observe(&self, row: &AuditRow);
}

impl AuditRow {
    /// The row of a decided call.
    pub fn for_call(ctx: &PostToolUseContext) -> Self {
        let decided_by = ctx.verdict.provenance.layer_step().to_string();
        Self {
            id: None,
            session_id: ctx.session_id.clone(),
            step: ctx.step,
            tool_name: ctx.call.name.clone(),
            status: ctx.status.into(),
            decision: Some(ctx.verdict.decision.to_string()),
            decided_by: Some(decided_by),
            elapsed_ms: u64::try_from(ctx.elapsed.as_millis()).unwrap_or(u64::MAX),
            output_preview: preview(&ctx.output.content),
            agent_name: ctx.agent_name.clone(),
            ts: time::now(),
            tool_input: serde_json::to_string(&ctx.call.args)
                .ok()
                .filter(|text| text.len() <= INPUT_MAX_BYTES),
            cwd: Some(ctx.cwd.display().to_string()),
            permission_mode: Some(ctx.permission_mode.clone()),
            detail: AuditDetail {
                sandbox: ctx.sandbox.clone(),
                approver: ctx.approver.clone(),
                // A call that ran under the sandbox keeps its id: a `workspace-write` run's records name it.
                call: ctx.sandbox.as_ref().map(|_| ctx.call.id.clone()),
                ..AuditDetail::of_provenance(&ctx.verdict.provenance)
            },
        }
    }

    /// The `SESSION_STOP` row of a session that ran for `elapsed`.
    pub fn session_stop(ctx: &SessionStopContext, elapsed: Duration) -> Self {
        Self {
            id: None,
            session_id: ctx.session_id.clone(),
            step: ctx.steps,
            tool_name: SESSION_TOOL_NAME.to_owned(),
            status: AuditStatus::SessionStop,
            decision: None,
            decided_by: None,
            elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            output_preview: preview(&ctx.reason),
            agent_name: ctx.agent_name.clone(),
            ts: time::now(),
            tool_input: None,
            cwd: None,
            permission_mode: None,
            detail: AuditDetail::default(),
        }
    }
}

impl AuditRow {
    /// The `TAINT_CLEARED` row of session `session_id`, whose taint `by` cleared (who, as [`Approver`] writes it,
    /// or the command that did): `summary` (the taint in one line) as the preview, `cleared` (the taint as JSON)
    /// as the input, `cwd` the project whose record it was (when the taint was kept in one), `agent_name` what
    /// cleared it (`session-clear`, `server`).
    pub fn taint_cleared(
        session_id: &str,
        agent_name: &str,
        summary: &str,
        cleared: &serde_json::Value,
        by: &str,
        cwd: Option<&str>,
    ) -> Self {
        let input = serde_json::to_string(cleared)
            .ok()
            .filter(|text| text.len() <= INPUT_MAX_BYTES);
        Self {
            id: None,
            session_id: session_id.to_owned(),
            step: 0,
            tool_name: SESSION_TOOL_NAME.to_owned(),
            status: AuditStatus::TaintCleared,
            decision: None,
            decided_by: None,
            elapsed_ms: 0,
            output_preview: preview(summary),
            agent_name: agent_name.to_owned(),
            ts: time::now(),
            tool_input: input,
            cwd: cwd.map(str::to_owned),
            permission_mode: None,
            detail: AuditDetail {
                approver: Some(by.to_owned()),
                ..AuditDetail::default()
            },
        }
    }
}

/// How much of a result is looked at for credentials before its preview is cut: more than the longest
/// credential (a private-key block) that could start within the preview.
const PREVIEW_SCAN_BYTES: usize = 64 << 10;

/// The first [`PREVIEW_CHARS`] characters of `text` as the log stores them: each credential replaced by
/// `[redacted: <kind>]` (agent-secrets), redacted before the cut so that a cut never leaves part of a credential
/// unrecognised, and cut on a character boundary.
pub fn preview(text: &str) -> String {
    let mut head = text.len().min(PREVIEW_SCAN_BYTES);
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let redacted = agent_secrets::redact_str(text.get(..head).unwrap_or_default());
    match redacted.char_indices().nth(PREVIEW_CHARS) {
        Some((end, _)) => redacted.get(..end).unwrap_or_default().to_owned(),
        None => redacted.into_owned(),
    }
}

impl AuditRow {
    /// The row as the log stores it: the credentials in its input and its preview replaced by `[redacted:
    /// <kind>]` (agent-secrets' scanner, the one `agent-guard sandbox` redacts output with), so that a command line
    /// or a file's content holding a secret does not land in a file of the project that later commands read.
    /// The input stays the same JSON, each of its strings redacted ([`agent_secrets::redact_json`]); everything
    /// else, the decision first, is kept as it is. Borrowed when there is nothing to redact.
    pub fn redacted(&self) -> Cow<'_, Self> {
        let input = self.tool_input.as_deref().and_then(redact_input);
        let preview = match agent_secrets::redact_str(&self.output_preview) {
            Cow::Borrowed(_) => None,
            Cow::Owned(preview) => Some(preview),
        };
        if input.is_none() && preview.is_none() {
            return Cow::Borrowed(self);
        }
        let mut row = self.clone();
        if let Some(input) = input {
            row.tool_input = Some(input);
        }
        if let Some(preview) = preview {
            row.output_preview = preview;
        }
        Cow::Owned(row)
    }
}

/// A call's input (JSON) with its credentials redacted; `None` when it holds none. An input that is not JSON
/// is redacted as text.
fn redact_input(input: &str) -> Option<String> {
    match serde_json::from_str::<serde_json::Value>(input) {
        Ok(mut value) => agent_secrets::redact_json(&mut value).then(|| value.to_string()),
        Err(_) => match agent_secrets::redact_str(input) {
            Cow::Borrowed(_) => None,
            Cow::Owned(redacted) => Some(redacted),
        },
    }
}

/// Which rows [`AuditLogHook::query`] returns; every field set narrows the result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    /// Only this session.
    pub session_id: Option<String>,
    /// Only rows at or after this time (RFC 3339 UTC, `2026-11-30T02:47:15Z` or with milliseconds, or a date); a
    /// text that is none of these makes the query an [`AuditError::Time`] (see [`time_bound`](crate::time_bound)).
    pub since: Option<String>,
    /// Only this tool, under any of its names in either family (`Bash` and `run_bash` select the same rows;
    /// `session` selects the stop rows).
    pub tool: Option<String>,
    /// At most this many rows (the oldest first).
    pub limit: Option<u32>,
    /// Only the row with this key.
    pub id: Option<i64>,
    /// Only rows whose deciding (or saved) rule is this text (`Bash(npm test:*)`).
    pub rule: Option<String>,
}

/// Tuning of the background writer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditConfig {
    /// Rows that may wait in the channel before a sender has to wait.
    pub capacity: usize,
    /// At most this many rows per transaction.
    pub max_batch: usize,
    /// How long `post_tool_use` waits for room when the channel is full before it drops the row (and counts it).
    /// The call has already finished by then, so the wait delays the next step, never a running tool.
    pub send_timeout: Duration,
    /// How long a flush (and the session stop) waits for the writer.
    pub flush_timeout: Duration,
    /// How long SQLite waits for a lock held by another process.
    pub busy_timeout: Duration,
    /// How long connecting to a PostgreSQL server may take: when opening, when the writer connects again after a
    /// lost connection, and when querying.
    pub connect_timeout: Duration,
    /// How long the writer waits, after the first row of a batch, for more rows to commit with it: one commit then
    /// takes the rows of a busy moment instead of one or two each (a server deciding thousands of calls a
    /// second). A row is committed at most this much later than without the wait; a flush, a
    /// [`commit_queued`](AuditLogHook::commit_queued) and the last clone's drop end the wait at once. Zero (the
    /// default) commits whatever has queued as soon as the writer is free.
    pub linger: Duration,
}

impl Default for AuditConfig {
    fn default() -> Self {
        Self {
            capacity: 16_384,
            max_batch: 4_096,
            send_timeout: Duration::from_millis(200),
            flush_timeout: Duration::from_secs(30),
            busy_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(10),
            linger: Duration::ZERO,
        }
    }
}

/// Writes every decided call, and a `SESSION_STOP` row per session, to `agent_audit_log` (SQLite with WAL and
/// `synchronous=NORMAL`, or PostgreSQL; see [`AuditDatabase`]) through a batching background writer. `on_session_stop` returns once every row queued so
/// far is committed, and reports rows that could not be written. Cloning shares the writer; when the last clone is
/// dropped the writer still commits the rows already queued, in the background, as long as the runtime lives, so a
/// caller that needs them on disk flushes (or stops the session) first.
#[derive(Debug, Clone)]
pub struct AuditLogHook {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    sender: mpsc::Sender<Message>,
    dropped: AtomicU64,
    started: Mutex<HashMap<String, Instant>>,
    target: String,
    config: AuditConfig,
    /// Sees each row as it is queued ([`AuditLogHook::observe_with`]).
    observer: std::sync::OnceLock<Arc<dyn AuditObserver>>,
    /// Ends the writer's [linger](AuditConfig::linger): a flush waits, or the last clone is gone.
    urgent: Arc<tokio::sync::Notify>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The rows still queued are committed now rather than after the linger.
        self.urgent.notify_one();
    }
}

#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "nearly every message is a row: boxing it would cost an allocation per call to shrink the rare flush"
)]
enum Message {
    Row(AuditRow),
    /// Commit what came before, and answer with the failures since the last flush (taking them) or, for a
    /// [`commit_queued`](AuditLogHook::commit_queued), with nothing.
    Flush {
        reply: oneshot::Sender<Result<(), AuditError>>,
        take_failures: bool,
    },
}

impl AuditLogHook {
    /// Opens (creating the file and its parent directory if needed) the SQLite database at `path`, runs the
    /// embedded migrations and starts the writer. Must be called inside a Tokio runtime.
    pub async fn open(path: &Path) -> Result<Self, AuditError> {
        Self::open_with(path, AuditConfig::default()).await
    }

    /// [`open`](Self::open) with a writer configuration.
    pub async fn open_with(path: &Path, config: AuditConfig) -> Result<Self, AuditError> {
        Self::open_database(&AuditDatabase::SqliteFile(path.to_path_buf()), config).await
    }

    /// Opens the database at `url`, the backend chosen by its scheme as [`AuditDatabase::parse`] reads it
    /// (`sqlite://audit.db?mode=rwc`, `sqlite::memory:`, `postgres://user@host/db`; a plain path is a SQLite
    /// file).
    pub async fn connect(url: &str) -> Result<Self, AuditError> {
        Self::open_database(&AuditDatabase::parse(url)?, AuditConfig::default()).await
    }

    /// Opens `db` (creating a SQLite file and its directory when missing, see
    /// [`create_dir_all_ignored`](crate::create_dir_all_ignored)), runs that backend's migrations and starts the
    /// writer. An unreachable PostgreSQL server is an [`AuditError::Open`] naming the URL (without its password)
    /// after at most [`AuditConfig::connect_timeout`].
    pub async fn open_database(db: &AuditDatabase, config: AuditConfig) -> Result<Self, AuditError> {
        let (store, target) = Store::open(db, &config).await?;
        Ok(Self::start(store, target, config))
    }

    /// Opens the SQLite database described by `options` (WAL and `synchronous=NORMAL` are always set), runs the
    /// migrations and starts the writer.
    pub async fn connect_with(
        options: SqliteConnectOptions,
        config: AuditConfig,
    ) -> Result<Self, AuditError> {
        let target = options.get_filename().display().to_string();
        let store = Store::open_sqlite(options, &config, &target).await?;
        Ok(Self::start(store, target, config))
    }

    fn start(store: Store, target: String, config: AuditConfig) -> Self {
        let (sender, receiver) = mpsc::channel(config.capacity.max(1));
        let urgent = Arc::new(tokio::sync::Notify::new());
        let writer = Writer {
            max_batch: config.max_batch.max(1),
            linger: config.linger,
            urgent: Arc::clone(&urgent),
        };
        tokio::spawn(writer.run(store, receiver));
        let inner = Inner {
            sender,
            dropped: AtomicU64::new(0),
            started: Mutex::default(),
            target,
            config,
            observer: std::sync::OnceLock::new(),
            urgent,
        };
        Self {
            inner: Arc::new(inner),
        }
    }

    /// Lets `observer` see every row from now on, as it is queued (telemetry). Set once: a second observer is
    /// refused and returned.
    pub fn observe_with(&self, observer: Arc<dyn AuditObserver>) -> Result<(), Arc<dyn AuditObserver>> {
        self.inner.observer.set(observer)
    }

    fn tell_observer(&self, row: &AuditRow) {
        if let Some(observer) = self.inner.observer.get() {
            observer.observe(row);
        }
    }

    /// The database file or URL (without its password) the hook writes to.
    pub fn target(&self) -> &str {
        &self.inner.target
    }

    /// Queues `row` (for rows that do not come from a hook). Waits at most the send timeout for room; a row that
    /// still does not fit is counted and reported by the next flush.
    pub async fn record(&self, row: AuditRow) {
        self.tell_observer(&row);
        let sender = &self.inner.sender;
        let lost = match sender.try_send(Message::Row(row)) {
            Ok(()) => return,
            Err(mpsc::error::TrySendError::Full(message)) => sender
                .send_timeout(message, self.inner.config.send_timeout)
                .await
                .is_err(),
            Err(mpsc::error::TrySendError::Closed(_)) => true,
        };
        if lost {
            let total = self.inner.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            tracing::warn!(target_db = %self.inner.target, dropped = total, "audit row dropped: the writer is behind or gone");
        }
    }

    /// Returns once every row queued before the call is committed, with the failures since the last flush:
    /// rows the writer could not write, rows dropped before the writer saw them, or a writer that is gone.
    pub async fn flush(&self) -> Result<(), AuditError> {
        let written = self.flush_writer().await;
        let dropped = self.inner.dropped.swap(0, Ordering::Relaxed);
        match (written, dropped) {
            (Ok(()), 0) => Ok(()),
            (Ok(()), rows) => Err(AuditError::Dropped { rows }),
            (Err(error), 0) => Err(error),
            (Err(error), rows) => Err(AuditError::Lost {
                write: Box::new(error),
                dropped: Box::new(AuditError::Dropped { rows }),
            }),
        }
    }

    /// Returns once every row queued before the call is committed (or has failed), without taking the failures
    /// a [`flush`](Self::flush) reports: what a reader of the same database waits for to see the rows a call of
    /// its process already queued, whatever the writer's [linger](AuditConfig::linger).
    ///
    /// # Errors
    /// [`AuditError::WriterGone`] when the writer is gone, [`AuditError::FlushTimeout`] past the flush timeout.
    pub async fn commit_queued(&self) -> Result<(), AuditError> {
        self.ask_writer(false).await
    }

    async fn flush_writer(&self) -> Result<(), AuditError> {
        self.ask_writer(true).await
    }

    /// Has the writer commit what was queued before, and waits for its answer.
    async fn ask_writer(&self, take_failures: bool) -> Result<(), AuditError> {
        let timeout = self.inner.config.flush_timeout;
        let deadline = tokio::time::Instant::now() + timeout;
        let (reply, answer) = oneshot::channel();
        let message = Message::Flush { reply, take_failures };
        match tokio::time::timeout_at(deadline, self.inner.sender.send(message)).await {
            Ok(Ok(())) => self.inner.urgent.notify_one(),
            Ok(Err(_)) => return Err(self.writer_gone()),
            Err(_) => return Err(self.flush_timed_out()),
        }
        match tokio::time::timeout_at(deadline, answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(self.writer_gone()),
            Err(_) => Err(self.flush_timed_out()),
        }
    }

    /// Queues a row that must not be dropped (the `SESSION_STOP` row): waits up to the flush timeout for room.
    async fn record_required(&self, row: AuditRow) -> Result<(), AuditError> {
        self.tell_observer(&row);
        let sending = self.inner.sender.send(Message::Row(row));
        match tokio::time::timeout(self.inner.config.flush_timeout, sending).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(self.writer_gone()),
            Err(_) => Err(self.flush_timed_out()),
        }
    }

    fn writer_gone(&self) -> AuditError {
        AuditError::WriterGone {
            target: self.inner.target.clone(),
        }
    }

    fn flush_timed_out(&self) -> AuditError {
        AuditError::FlushTimeout {
            target: self.inner.target.clone(),
            seconds: self.inner.config.flush_timeout.as_secs(),
        }
    }

    /// The rows of the SQLite database at `path` that pass `filter`, oldest first, read through a connection of
    /// its own.
    pub async fn query(path: &Path, filter: &AuditFilter) -> Result<Vec<AuditRow>, AuditError> {
        Self::query_database(&AuditDatabase::SqliteFile(path.to_path_buf()), filter).await
    }

    /// The rows of `db` that pass `filter`, oldest first, read through a connection of its own. A SQLite file
    /// must exist; an unreachable PostgreSQL server is an [`AuditError::Open`] naming the URL after at most the
    /// default [`AuditConfig::connect_timeout`].
    pub async fn query_database(
        db: &AuditDatabase,
        filter: &AuditFilter,
    ) -> Result<Vec<AuditRow>, AuditError> {
        let mut reader = AuditReader::open(db, AuditConfig::default().connect_timeout).await?;
        let rows = reader.query(filter).await;
        reader.close().await;
        rows
    }
}

/// A connection to an audit database held open for repeated queries, as `agent-guard audit --follow` makes them.
/// After a failed query the connection is dropped and the next query connects again, so a reader outlives a
/// server restart.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use agent_hooks::{AuditConfig, AuditDatabase, AuditFilter, AuditLogHook, AuditReader};
///
/// let dir = tempfile::tempdir().unwrap();
/// let db = AuditDatabase::SqliteFile(dir.path().join("audit.db"));
/// let log = AuditLogHook::open_database(&db, AuditConfig::default()).await.unwrap();
/// log.flush().await.unwrap();
/// let mut reader = AuditReader::open(&db, std::time::Duration::from_secs(5)).await.unwrap();
/// assert!(reader.query(&AuditFilter::default()).await.unwrap().is_empty());
/// reader.close().await;
/// # });
/// ```
#[derive(Debug)]
pub struct AuditReader {
    inner: store::Reader,
}

impl AuditReader {
    /// Connects to `db`.
    ///
    /// # Errors
    /// [`AuditError::Open`] naming the database (a URL without its password) when a SQLite file does not exist or
    /// cannot be opened, or a PostgreSQL server does not answer within `connect_timeout`.
    pub async fn open(db: &AuditDatabase, connect_timeout: Duration) -> Result<Self, AuditError> {
        Ok(Self {
            inner: store::Reader::open(db, connect_timeout).await?,
        })
    }

    /// The rows that pass `filter`, oldest first.
    ///
    /// # Errors
    /// [`AuditError::Query`] when the query fails (the connection is then dropped, and the next query connects
    /// again), or [`AuditError::Open`] when connecting again fails.
    pub async fn query(&mut self, filter: &AuditFilter) -> Result<Vec<AuditRow>, AuditError> {
        self.inner.query(filter).await
    }

    /// Closes the connection.
    pub async fn close(self) {
        self.inner.close().await;
    }
}

/// The background writer's settings.
struct Writer {
    max_batch: usize,
    linger: Duration,
    urgent: Arc<tokio::sync::Notify>,
}

/// One batch being gathered: its rows and the flush that ends it.
struct Batch {
    rows: Vec<AuditRow>,
    flush: Option<(oneshot::Sender<Result<(), AuditError>>, bool)>,
    /// Every sender is gone: nothing more will come.
    closed: bool,
}

impl Batch {
    fn take(&mut self, message: Message) {
        match message {
            Message::Row(row) => self.rows.push(row),
            Message::Flush { reply, take_failures } => self.flush = Some((reply, take_failures)),
        }
    }

    /// Whether it must be written now: full, flushed, or the last of the rows.
    fn is_due(&self, max_batch: usize) -> bool {
        self.flush.is_some() || self.closed || self.rows.len() >= max_batch
    }

    /// Takes what has queued, up to the batch's end.
    fn gather(&mut self, receiver: &mut mpsc::Receiver<Message>, max_batch: usize) {
        while !self.is_due(max_batch) {
            match receiver.try_recv() {
                Ok(message) => self.take(message),
                Err(mpsc::error::TryRecvError::Empty) => break,
                Err(mpsc::error::TryRecvError::Disconnected) => self.closed = true,
            }
        }
    }
}

impl Writer {
    /// Takes whatever has queued up (at most `max_batch` rows, up to the next flush; after the first row, what
    /// comes within the linger too), writes it as one transaction, answers flushes, and keeps the first failure
    /// and the count of lost rows for the next flush that takes them. The rows still queued when every sender is
    /// gone are written before it ends.
    async fn run(self, mut store: Store, mut receiver: mpsc::Receiver<Message>) {
        let mut batch = Batch {
            rows: Vec::with_capacity(self.max_batch.min(PREALLOCATED_ROWS)),
            flush: None,
            closed: false,
        };
        let mut failure: Option<(u64, sqlx::Error)> = None;
        while let Some(first) = receiver.recv().await {
            batch.take(first);
            batch.gather(&mut receiver, self.max_batch);
            if !self.linger.is_zero() && !batch.is_due(self.max_batch) {
                // Rows arriving meanwhile wait in the channel without waking the writer; a flush, a
                // `commit_queued` or the last sender's drop wakes it at once.
                tokio::select! {
                    () = tokio::time::sleep(self.linger) => {}
                    () = self.urgent.notified() => {}
                }
                batch.gather(&mut receiver, self.max_batch);
            }
            if !batch.rows.is_empty() {
                if let Err(error) = store.insert(&batch.rows).await {
                    let rows = u64::try_from(batch.rows.len()).unwrap_or(u64::MAX);
                    tracing::error!(%error, rows, "audit rows could not be written");
                    failure = match failure {
                        Some((lost, first_error)) => Some((lost.saturating_add(rows), first_error)),
                        None => Some((rows, error)),
                    };
                }
                batch.rows.clear();
            }
            if let Some((reply, take_failures)) = batch.flush.take() {
                let result = if take_failures {
                    failure
                        .take()
                        .map_or(Ok(()), |(rows, source)| Err(AuditError::Write { rows, source }))
                } else {
                    Ok(())
                };
                // The flusher may have given up waiting; then its timeout already reported the problem.
                let _answered = reply.send(result);
            }
            if batch.closed {
                break;
            }
        }
        store.close().await;
    }
}

impl AgentHook for AuditLogHook {
    fn name(&self) -> &str {
        "audit-log"
    }

    fn on_session_start<'a>(&'a self, ctx: &'a SessionContext) -> HookFuture<'a, ()> {
        self.inner
            .started
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(ctx.session_id.clone(), Instant::now());
        Box::pin(std::future::ready(()))
    }

    fn post_tool_use<'a>(&'a self, ctx: &'a PostToolUseContext) -> HookFuture<'a, PostToolUseAction> {
        Box::pin(async move {
            self.record(AuditRow::for_call(ctx)).await;
            PostToolUseAction::Continue
        })
    }

    fn on_session_stop<'a>(&'a self, ctx: &'a SessionStopContext) -> HookFuture<'a, Result<(), HookError>> {
        Box::pin(async move {
            let started = self
                .inner
                .started
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&ctx.session_id);
            let elapsed = started.map(|at| at.elapsed()).unwrap_or_default();
            let queued = self.record_required(AuditRow::session_stop(ctx, elapsed)).await;
            // Flush even when the stop row could not be queued, so the other failures are reported too.
            let flushed = self.flush().await;
            match (queued, flushed) {
                (Ok(()), flushed) => flushed.map_err(HookError::from),
                (Err(queued), Ok(())) => Err(HookError::from(queued)),
                (Err(queued), Err(flushed)) => Err(HookError::Many(vec![queued.into(), flushed.into()])),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_cuts_on_a_char_boundary() {
        let long = "é".repeat(300);
        let cut = preview(&long);
        assert_eq!(cut.chars().count(), PREVIEW_CHARS);
        assert!(long.starts_with(&cut));
        assert_eq!(preview("short"), "short");
        let exact = "x".repeat(PREVIEW_CHARS);
        assert_eq!(preview(&exact), exact);
    }

    #[test]
    fn a_preview_is_redacted_before_it_is_cut() {
        // A token across the cut would leave a prefix too short to be recognised: the redaction comes first.
        let token = "ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7";
        let text = format!("{} {token} and more", "x".repeat(PREVIEW_CHARS - 10));
        let cut = preview(&text);
        assert_eq!(cut.chars().count(), PREVIEW_CHARS);
        assert!(cut.ends_with(" [redacted"), "{cut}");
        assert!(!cut.contains("ghp_"), "{cut}");
    }

    #[test]
    fn statuses_round_trip() {
        for status in [
            AuditStatus::Ok,
            AuditStatus::Fail,
            AuditStatus::Denied,
            AuditStatus::SessionStop,
            AuditStatus::TaintCleared,
        ] {
            assert_eq!(AuditStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(AuditStatus::parse("ok"), None);
    }
}
