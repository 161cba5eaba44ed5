//! The server's tables beside the audit log: the approval queue, in SQLite (the default) or PostgreSQL.
//!
//! The tables are created with `CREATE TABLE IF NOT EXISTS` rather than through sqlx's migrator: the audit log's
//! migrator owns `_sqlx_migrations` in the same database and refuses versions it does not know, so a second
//! migrator there would break it.

use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;
use std::str::FromStr as _;
use std::time::Duration;

use agent_core::ApprovalAnswer;
use agent_hooks::AuditDatabase;
use serde_json::Value;
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{ColumnIndex, Decode, Row, Type};

use crate::error::{Result, ServeError};

const CREATE: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS agent_approvals (
        id            TEXT   PRIMARY KEY,
        session_id    TEXT   NOT NULL,
        agent_name    TEXT   NOT NULL,
        tool_name     TEXT   NOT NULL,
        tool_input    TEXT   NOT NULL,
        cwd           TEXT   NOT NULL,
        reason        TEXT   NOT NULL,
        explanation   TEXT   NOT NULL,
        rules         TEXT   NOT NULL,
        settings_file TEXT   NOT NULL,
        created_ms    BIGINT NOT NULL,
        expires_ms    BIGINT NOT NULL,
        state         TEXT   NOT NULL,
        answered_ms   BIGINT
    )",
    "CREATE INDEX IF NOT EXISTS agent_approvals_state ON agent_approvals (state, expires_ms)",
    "CREATE INDEX IF NOT EXISTS agent_approvals_session ON agent_approvals (session_id, tool_name)",
    "CREATE TABLE IF NOT EXISTS agent_sessions (
        id         TEXT   PRIMARY KEY,
        name       TEXT   NOT NULL,
        state      TEXT   NOT NULL,
        created_ms BIGINT NOT NULL,
        ended_ms   BIGINT,
        summary    TEXT
    )",
];

/// A session run by a server, as stored.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct SessionRow {
    pub(crate) id: String,
    pub(crate) name: String,
    /// `running`, `finished`, `cancelled` or `failed`.
    pub(crate) state: String,
    pub(crate) created_ms: i64,
    pub(crate) ended_ms: Option<i64>,
    /// The summary or the failure, as JSON text.
    pub(crate) summary: Option<String>,
}

const APPROVAL_COLUMNS: &str = "id, session_id, agent_name, tool_name, tool_input, cwd, reason, explanation, rules, \
                                settings_file, created_ms, expires_ms, state, answered_ms, answered_by";

/// The column added after the first release: who answered (an [`agent_hooks::Approver`] as text). Added to a table
/// that lacks it when a server opens the database; a server that finds it there already goes on.
const ADD_ANSWERED_BY: &str = "ALTER TABLE agent_approvals ADD COLUMN answered_by TEXT";

/// Where an ask stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Waiting for an answer.
    Pending,
    /// Answered.
    Answered(ApprovalAnswer),
    /// Not answered before its expiry: denied.
    Expired,
    /// Its session was cancelled before an answer came: denied.
    Cancelled,
}

impl State {
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Answered(answer) => answer.as_str(),
            Self::Expired => "expired",
            Self::Cancelled => "cancelled",
        }
    }

    fn parse(text: &str) -> Self {
        match text {
            "pending" => Self::Pending,
            "allow_once" => Self::Answered(ApprovalAnswer::AllowOnce),
            "allow_always" => Self::Answered(ApprovalAnswer::AllowAlways),
            "dont_ask_again" => Self::Answered(ApprovalAnswer::DontAskAgain),
            "deny" => Self::Answered(ApprovalAnswer::Deny),
            "cancelled" => Self::Cancelled,
            // A state this version does not know is read as the strictest end.
            _ => Self::Expired,
        }
    }
}

/// One ask in the queue.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Approval {
    pub(crate) id: String,
    pub(crate) session_id: String,
    pub(crate) agent_name: String,
    pub(crate) tool_name: String,
    pub(crate) tool_input: Value,
    pub(crate) cwd: String,
    pub(crate) reason: String,
    pub(crate) explanation: String,
    pub(crate) rules: Vec<String>,
    pub(crate) settings_file: String,
    pub(crate) created_ms: i64,
    pub(crate) expires_ms: i64,
    pub(crate) state: State,
    pub(crate) answered_ms: Option<i64>,
    /// Who answered, once answered.
    pub(crate) answered_by: Option<String>,
}

/// What answering an ask did.
#[derive(Debug)]
pub(crate) enum AnswerResult {
    /// The answer was taken; the ask as it is now.
    Taken(Box<Approval>),
    /// No ask has this id.
    Unknown,
    /// It was answered before.
    AlreadyAnswered(Box<Approval>),
    /// It expired before the answer came.
    Expired,
}

/// One recent row of the audit log, for the page.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct AuditEntry {
    pub(crate) id: i64,
    pub(crate) session_id: String,
    pub(crate) tool_name: String,
    pub(crate) status: String,
    pub(crate) decision: Option<String>,
    pub(crate) decided_by: Option<String>,
    pub(crate) output_preview: String,
    pub(crate) agent_name: String,
    pub(crate) ts: String,
}

/// Which audit rows the page asks for.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AuditQuery {
    pub(crate) session: Option<String>,
    pub(crate) tool: Option<String>,
    pub(crate) decision: Option<String>,
    pub(crate) limit: Option<u32>,
}

#[derive(Debug, Clone)]
enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// The open database of the server's tables.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    pool: Pool,
    target: String,
}

/// Runs `$body` with `$pool` bound to the backend's pool and `$sql` to `$text` in its placeholder dialect.
macro_rules! on_pool {
    ($store:expr, $text:expr, |$pool:ident, $sql:ident| $body:expr) => {
        match &$store.pool {
            Pool::Sqlite($pool) => {
                let $sql: String = AsRef::<str>::as_ref(&$text).to_owned();
                $body
            }
            Pool::Postgres($pool) => {
                let $sql: String = numbered(AsRef::<str>::as_ref(&$text));
                $body
            }
        }
    };
}

impl Store {
    /// Opens `db` (a SQLite file is created with its directory) and creates the tables when missing.
    pub(crate) async fn open(db: &AuditDatabase) -> Result<Self> {
        let target = db.to_string();
        let failed = |source| ServeError::Database {
            target: target.clone(),
            source,
        };
        let pool = match db {
            AuditDatabase::SqliteFile(path) => {
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    agent_hooks::create_dir_all_ignored(parent).map_err(|e| failed(sqlx::Error::Io(e)))?;
                }
                private_database(path).map_err(|e| failed(sqlx::Error::Io(e)))?;
                Pool::Sqlite(
                    sqlite_pool(SqliteConnectOptions::new().filename(path))
                        .await
                        .map_err(failed)?,
                )
            }
            AuditDatabase::SqliteUrl(url) => {
                let options = SqliteConnectOptions::from_str(url).map_err(failed)?;
                let path = options.get_filename();
                let in_memory = url.contains("mode=memory")
                    || path.as_os_str().to_string_lossy().starts_with("file:")
                    || path == Path::new(":memory:");
                if !in_memory {
                    private_database(path).map_err(|e| failed(sqlx::Error::Io(e)))?;
                }
                Pool::Sqlite(sqlite_pool(options).await.map_err(failed)?)
            }
            AuditDatabase::Postgres(url) => Pool::Postgres(
                PgPoolOptions::new()
                    .max_connections(8)
                    .acquire_timeout(Duration::from_secs(10))
                    .connect(url)
                    .await
                    .map_err(failed)?,
            ),
        };
        let store = Self {
            pool,
            target: target.clone(),
        };
        for statement in CREATE {
            on_pool!(store, statement, |pool, sql| sqlx::query(&sql)
                .execute(pool)
                .await
                .map(drop))
            .map_err(failed)?;
        }
        let added = on_pool!(store, ADD_ANSWERED_BY, |pool, sql| sqlx::query(&sql)
            .execute(pool)
            .await
            .map(drop));
        if let Err(error) = added
            && !error.to_string().contains("answered_by")
        {
            return Err(failed(error));
        }
        Ok(store)
    }

    /// The database, password hidden.
    pub(crate) fn target(&self) -> &str {
        &self.target
    }

    /// The PostgreSQL pool, for the listener that hands events between servers.
    pub(crate) fn postgres(&self) -> Option<&PgPool> {
        match &self.pool {
            Pool::Postgres(pool) => Some(pool),
            Pool::Sqlite(_) => None,
        }
    }

    pub(crate) async fn insert(&self, a: &Approval) -> Result<(), sqlx::Error> {
        let text = format!(
            "INSERT INTO agent_approvals ({APPROVAL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        );
        let input = a.tool_input.to_string();
        let rules = rules_json(&a.rules);
        on_pool!(self, text, |pool, sql| sqlx::query(&sql)
            .bind(&a.id)
            .bind(&a.session_id)
            .bind(&a.agent_name)
            .bind(&a.tool_name)
            .bind(&input)
            .bind(&a.cwd)
            .bind(&a.reason)
            .bind(&a.explanation)
            .bind(&rules)
            .bind(&a.settings_file)
            .bind(a.created_ms)
            .bind(a.expires_ms)
            .bind(a.state.as_str())
            .bind(a.answered_ms)
            .bind(a.answered_by.as_deref())
            .execute(pool)
            .await
            .map(drop))
    }

    pub(crate) async fn get(&self, id: &str) -> Result<Option<Approval>, sqlx::Error> {
        let text = format!("SELECT {APPROVAL_COLUMNS} FROM agent_approvals WHERE id = ?");
        on_pool!(self, text, |pool, sql| {
            let row = sqlx::query(&sql).bind(id).fetch_optional(pool).await?;
            row.as_ref().map(approval_from).transpose()
        })
    }

    /// The asks still waiting, oldest first.
    pub(crate) async fn pending(&self, now_ms: i64) -> Result<Vec<Approval>, sqlx::Error> {
        let text = format!(
            "SELECT {APPROVAL_COLUMNS} FROM agent_approvals WHERE state = 'pending' AND expires_ms > ? \
             ORDER BY created_ms, id"
        );
        on_pool!(self, text, |pool, sql| {
            let rows = sqlx::query(&sql).bind(now_ms).fetch_all(pool).await?;
            rows.iter().map(approval_from).collect()
        })
    }

    /// Takes `answer` for ask `id` unless it was answered before or has expired. The update is conditional, so
    /// of two servers answering the same ask at once exactly one wins.
    pub(crate) async fn answer(
        &self,
        id: &str,
        answer: ApprovalAnswer,
        by: &str,
        now_ms: i64,
    ) -> Result<AnswerResult, sqlx::Error> {
        let text = "UPDATE agent_approvals SET state = ?, answered_ms = ?, answered_by = ? \
                    WHERE id = ? AND state = 'pending' AND expires_ms > ?";
        let changed = on_pool!(self, text, |pool, sql| sqlx::query(&sql)
            .bind(answer.as_str())
            .bind(now_ms)
            .bind(by)
            .bind(id)
            .bind(now_ms)
            .execute(pool)
            .await
            .map(|done| done.rows_affected()))?;
        let current = self.get(id).await?;
        Ok(match current {
            None => AnswerResult::Unknown,
            Some(approval) if changed == 1 => AnswerResult::Taken(Box::new(approval)),
            Some(approval) => match approval.state {
                State::Answered(_) | State::Cancelled => AnswerResult::AlreadyAnswered(Box::new(approval)),
                State::Pending | State::Expired => AnswerResult::Expired,
            },
        })
    }

    /// Marks every pending ask past its expiry as expired and returns them; each is returned by one call only,
    /// whichever server makes it.
    pub(crate) async fn expire_due(&self, now_ms: i64) -> Result<Vec<Approval>, sqlx::Error> {
        let text = format!(
            "UPDATE agent_approvals SET state = 'expired', answered_ms = ?, answered_by = 'nobody' \
             WHERE state = 'pending' AND expires_ms <= ? RETURNING {APPROVAL_COLUMNS}"
        );
        on_pool!(self, text, |pool, sql| {
            let rows = sqlx::query(&sql)
                .bind(now_ms)
                .bind(now_ms)
                .fetch_all(pool)
                .await?;
            rows.iter().map(approval_from).collect()
        })
    }

    /// Marks every pending ask of `session_id` as cancelled and returns them; each is returned by one call only.
    pub(crate) async fn cancel_pending(
        &self,
        session_id: &str,
        now_ms: i64,
    ) -> Result<Vec<Approval>, sqlx::Error> {
        let text = format!(
            "UPDATE agent_approvals SET state = 'cancelled', answered_ms = ? \
             WHERE session_id = ? AND state = 'pending' RETURNING {APPROVAL_COLUMNS}"
        );
        on_pool!(self, text, |pool, sql| {
            let rows = sqlx::query(&sql)
                .bind(now_ms)
                .bind(session_id)
                .fetch_all(pool)
                .await?;
            rows.iter().map(approval_from).collect()
        })
    }

    /// Whether any ask, in any state, belongs to `session_id`.
    pub(crate) async fn has_asks(&self, session_id: &str) -> Result<bool, sqlx::Error> {
        let text = "SELECT id FROM agent_approvals WHERE session_id = ? LIMIT 1";
        on_pool!(self, text, |pool, sql| sqlx::query(&sql)
            .bind(session_id)
            .fetch_optional(pool)
            .await
            .map(|row| row.is_some()))
    }

    /// Whether the session answered "don't ask again" to an ask of the same tool and the same narrow rules.
    pub(crate) async fn denied_for_session(
        &self,
        session_id: &str,
        tool_name: &str,
        rules: &[String],
    ) -> Result<bool, sqlx::Error> {
        let text = "SELECT id FROM agent_approvals WHERE session_id = ? AND tool_name = ? AND rules = ? \
                    AND state = 'dont_ask_again' LIMIT 1";
        let rules = rules_json(rules);
        on_pool!(self, text, |pool, sql| sqlx::query(&sql)
            .bind(session_id)
            .bind(tool_name)
            .bind(&rules)
            .fetch_optional(pool)
            .await
            .map(|row| row.is_some()))
    }

    pub(crate) async fn insert_session(&self, id: &str, name: &str, now_ms: i64) -> Result<(), sqlx::Error> {
        let text = "INSERT INTO agent_sessions (id, name, state, created_ms) VALUES (?, ?, 'running', ?)";
        on_pool!(self, text, |pool, sql| sqlx::query(&sql)
            .bind(id)
            .bind(name)
            .bind(now_ms)
            .execute(pool)
            .await
            .map(drop))
    }

    pub(crate) async fn end_session(
        &self,
        id: &str,
        state: &str,
        summary: &Value,
        now_ms: i64,
    ) -> Result<(), sqlx::Error> {
        let text = "UPDATE agent_sessions SET state = ?, ended_ms = ?, summary = ? WHERE id = ?";
        let summary = summary.to_string();
        on_pool!(self, text, |pool, sql| sqlx::query(&sql)
            .bind(state)
            .bind(now_ms)
            .bind(&summary)
            .bind(id)
            .execute(pool)
            .await
            .map(drop))
    }

    /// One session, or the 100 most recent ones (newest first).
    pub(crate) async fn sessions(&self, id: Option<&str>) -> Result<Vec<SessionRow>, sqlx::Error> {
        let text = match id {
            Some(_) => {
                "SELECT id, name, state, created_ms, ended_ms, summary FROM agent_sessions WHERE id = ?"
            }
            None => {
                "SELECT id, name, state, created_ms, ended_ms, summary FROM agent_sessions \
                     ORDER BY created_ms DESC, id LIMIT 100"
            }
        };
        on_pool!(self, text, |pool, sql| {
            let mut q = sqlx::query(&sql);
            if let Some(id) = id {
                q = q.bind(id);
            }
            let rows = q.fetch_all(pool).await?;
            rows.iter()
                .map(|row| {
                    Ok(SessionRow {
                        id: row.try_get("id")?,
                        name: row.try_get("name")?,
                        state: row.try_get("state")?,
                        created_ms: row.try_get("created_ms")?,
                        ended_ms: row.try_get::<Option<i64>, _>("ended_ms")?,
                        summary: row.try_get::<Option<String>, _>("summary")?,
                    })
                })
                .collect()
        })
    }

    /// The most recent rows of the audit log, newest first.
    pub(crate) async fn recent_audit(&self, query: &AuditQuery) -> Result<Vec<AuditEntry>, sqlx::Error> {
        let mut text =
            "SELECT id, session_id, tool_name, status, decision, decided_by, output_preview, agent_name, \
                        ts FROM agent_audit_log WHERE 1 = 1"
                .to_owned();
        let filters: Vec<&str> = [
            (query.session.as_deref(), " AND session_id = ?"),
            (query.tool.as_deref(), " AND tool_name = ?"),
            (query.decision.as_deref(), " AND decision = ?"),
        ]
        .into_iter()
        .filter_map(|(value, clause)| value.filter(|v| !v.is_empty()).inspect(|_| text.push_str(clause)))
        .collect();
        text.push_str(" ORDER BY id DESC LIMIT ?");
        let limit = i64::from(query.limit.unwrap_or(100).clamp(1, 1000));
        on_pool!(self, text, |pool, sql| {
            let mut q = sqlx::query(&sql);
            for value in &filters {
                q = q.bind(*value);
            }
            let rows = q.bind(limit).fetch_all(pool).await?;
            rows.iter().map(audit_from).collect()
        })
    }

    /// At most `limit` of the asks still waiting, oldest first, starting after `after` (the ask a previous page
    /// ended with, wherever it stands now).
    pub(crate) async fn pending_page(
        &self,
        after: Option<&Approval>,
        limit: u32,
        now_ms: i64,
    ) -> Result<Vec<Approval>, sqlx::Error> {
        let text = format!(
            "SELECT {APPROVAL_COLUMNS} FROM agent_approvals WHERE state = 'pending' AND expires_ms > ? \
             AND (created_ms > ? OR (created_ms = ? AND id > ?)) ORDER BY created_ms, id LIMIT ?"
        );
        let (created, id) = after.map_or((i64::MIN, ""), |a| (a.created_ms, a.id.as_str()));
        on_pool!(self, text, |pool, sql| {
            let rows = sqlx::query(&sql)
                .bind(now_ms)
                .bind(created)
                .bind(created)
                .bind(id)
                .bind(i64::from(limit))
                .fetch_all(pool)
                .await?;
            rows.iter().map(approval_from).collect()
        })
    }

    /// How many asks are waiting.
    pub(crate) async fn pending_count(&self, now_ms: i64) -> Result<i64, sqlx::Error> {
        let text = "SELECT COUNT(*) FROM agent_approvals WHERE state = 'pending' AND expires_ms > ?";
        on_pool!(self, text, |pool, sql| sqlx::query_scalar::<_, i64>(&sql)
            .bind(now_ms)
            .fetch_one(pool)
            .await)
    }
}

/// Creates the SQLite file `path` readable and writable by its owner only (mode 0600) before SQLite opens it: it
/// holds every tool input and every answer. SQLite gives the `-wal` and `-shm` files it creates the mode of the
/// database file. A file, or a `-wal` or `-shm` left by an earlier start, that others may read is narrowed to its
/// owner.
pub(crate) fn private_database(path: &Path) -> std::io::Result<()> {
    if path.as_os_str().is_empty() {
        return Ok(());
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    for suffix in ["", "-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let file = Path::new(&name);
        let Ok(meta) = std::fs::symlink_metadata(file) else {
            continue;
        };
        let mode = meta.permissions().mode() & 0o7777;
        if meta.is_file() && mode & 0o077 != 0 {
            std::fs::set_permissions(file, std::fs::Permissions::from_mode(mode & 0o700))?;
            tracing::warn!(file = %file.display(), "others could read the database file: narrowed to its owner (0600)");
        }
    }
    Ok(())
}

async fn sqlite_pool(options: SqliteConnectOptions) -> Result<SqlitePool, sqlx::Error> {
    SqlitePoolOptions::new()
        .max_connections(4)
        .connect_with(
            options
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .busy_timeout(Duration::from_secs(5)),
        )
        .await
}

/// `sql` with each `?` replaced by PostgreSQL's `$1`, `$2`, … (the statements here hold no `?` in literals).
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(c);
        }
    }
    out
}

fn rules_json(rules: &[String]) -> String {
    serde_json::to_string(rules).unwrap_or_else(|_| "[]".to_owned())
}

fn approval_from<R>(row: &R) -> Result<Approval, sqlx::Error>
where
    R: Row,
    for<'c> &'c str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Option<String>: Decode<'r, R::Database> + Type<R::Database>,
{
    let text = |column: &str| row.try_get::<String, _>(column);
    let json = |column: &str| -> Result<Value, sqlx::Error> {
        serde_json::from_str(&text(column)?).map_err(|e| sqlx::Error::Decode(Box::new(e)))
    };
    Ok(Approval {
        id: text("id")?,
        session_id: text("session_id")?,
        agent_name: text("agent_name")?,
        tool_name: text("tool_name")?,
        tool_input: json("tool_input")?,
        cwd: text("cwd")?,
        reason: text("reason")?,
        explanation: text("explanation")?,
        rules: serde_json::from_value(json("rules")?).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        settings_file: text("settings_file")?,
        created_ms: row.try_get("created_ms")?,
        expires_ms: row.try_get("expires_ms")?,
        state: State::parse(&text("state")?),
        answered_ms: row.try_get::<Option<i64>, _>("answered_ms")?,
        answered_by: row.try_get::<Option<String>, _>("answered_by")?,
    })
}

fn audit_from<R>(row: &R) -> Result<AuditEntry, sqlx::Error>
where
    R: Row,
    for<'c> &'c str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
{
    Ok(AuditEntry {
        id: row.try_get("id")?,
        session_id: row.try_get("session_id")?,
        tool_name: row.try_get("tool_name")?,
        status: row.try_get("status")?,
        decision: row.try_get::<Option<String>, _>("decision")?,
        decided_by: row.try_get::<Option<String>, _>("decided_by")?,
        output_preview: row.try_get("output_preview")?,
        agent_name: row.try_get("agent_name")?,
        ts: row.try_get("ts")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        assert_eq!(numbered("a = ? AND b = ?"), "a = $1 AND b = $2");
    }

    #[test]
    fn states_read_back() {
        for state in [
            State::Pending,
            State::Expired,
            State::Answered(ApprovalAnswer::AllowOnce),
            State::Answered(ApprovalAnswer::AllowAlways),
            State::Answered(ApprovalAnswer::Deny),
            State::Answered(ApprovalAnswer::DontAskAgain),
            State::Cancelled,
        ] {
            assert_eq!(State::parse(state.as_str()), state);
        }
        assert_eq!(State::parse("future"), State::Expired);
    }
}
