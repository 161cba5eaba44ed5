//! Rows written directly by a process that decides calls itself and ends: no background writer, one connection,
//! one small transaction per call of [`AuditAppender::append`].

use crate::store::Store;
use crate::{AuditConfig, AuditDatabase, AuditError, AuditRow};

/// A connection that appends rows to an audit database in one transaction per [`append`](Self::append), for a
/// process that must not keep a writer running: `agent-guard check` decides one call, prints its answer, then
/// appends the call's row and ends. Opening a SQLite database whose schema is current costs one `PRAGMA` read
/// (its `user_version`), no migration work; a new database is created (with its directory, git-ignored when it
/// is a `.agent-guard` directory, see [`create_dir_all_ignored`](crate::create_dir_all_ignored)) and migrated
/// once even when many processes open it at once. Writers of other processes are waited for within
/// [`AuditConfig::busy_timeout`] (WAL: readers never wait).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use agent_hooks::{AuditAppender, AuditConfig, AuditDatabase, AuditFilter, AuditLogHook};
///
/// let dir = tempfile::tempdir().unwrap();
/// let db = AuditDatabase::SqliteFile(dir.path().join(".agent-guard/audit.db"));
/// let mut log = AuditAppender::open(&db, &AuditConfig::default()).await.unwrap();
/// # let row = agent_hooks::AuditRow { id: None, session_id: "s".into(), step: 0, tool_name: "Bash".into(),
/// #     status: agent_hooks::AuditStatus::Ok, decision: Some("allow".into()), decided_by: None, elapsed_ms: 0,
/// #     output_preview: String::new(), agent_name: "hook".into(), ts: agent_hooks::rfc3339(std::time::SystemTime::now()),
/// #     tool_input: None, cwd: None, permission_mode: None, detail: Default::default() };
/// log.append(&[row]).await.unwrap();
/// log.close().await;
/// assert_eq!(AuditLogHook::query_database(&db, &AuditFilter::default()).await.unwrap().len(), 1);
/// # });
/// ```
#[derive(Debug)]
pub struct AuditAppender {
    store: Store,
    target: String,
}

impl AuditAppender {
    /// Opens `db`, creating and migrating it when needed (a PostgreSQL server within
    /// [`AuditConfig::connect_timeout`]).
    ///
    /// # Errors
    /// [`AuditError::CreateDir`], [`AuditError::Open`] or [`AuditError::Migrate`], naming the database.
    pub async fn open(db: &AuditDatabase, config: &AuditConfig) -> Result<Self, AuditError> {
        let (store, target) = Store::open(db, config).await?;
        Ok(Self { store, target })
    }

    /// Writes `rows` in one transaction: all of them or, with the error, none.
    ///
    /// # Errors
    /// [`AuditError::Write`] with the number of rows not written.
    pub async fn append(&mut self, rows: &[AuditRow]) -> Result<(), AuditError> {
        if rows.is_empty() {
            return Ok(());
        }
        self.store.insert(rows).await.map_err(|source| AuditError::Write {
            rows: u64::try_from(rows.len()).unwrap_or(u64::MAX),
            source,
        })
    }

    /// The database file or URL (without its password).
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Closes the connection; every row appended is already committed.
    pub async fn close(self) {
        self.store.close().await;
    }

    /// For a process about to exit: leaves the connection to the exit instead of closing it. Every row appended
    /// is committed already. Closing the last connection to a SQLite database checkpoints its WAL into the
    /// database file and deletes it (two `fsync`s, and the next writer makes a new WAL and syncs its header and
    /// directory: two more); left to the exit, the WAL stays as it is and the next writer appends to it, which
    /// takes no `fsync` (`synchronous=NORMAL`). SQLite's WAL is made to be picked up by whoever opens the
    /// database next; it is kept short (checkpointed and truncated once it passes 256 KiB), since whoever opens
    /// it next reads all of it.
    pub async fn leave_to_exit(mut self) {
        self.store.trim_wal().await;
        std::mem::forget(self);
    }
}
