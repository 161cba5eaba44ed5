//! The databases the audit log can live in: SQLite (the embedded default) or PostgreSQL (scale-out), same table.
//!
//! Design: [`Store`] is a small enum over the two concrete sqlx connection types rather than `sqlx::Any`. `Any`
//! would convert every bound value through its own argument type (a cost on every row of the SQLite hot path),
//! still needs per-backend SQL where the dialects differ (placeholders, identity columns, collations) and per-backend
//! migrations, and hides which backend an error came from. With the enum the SQLite writer is exactly the
//! connection it always was, and the SQL text that both backends share (the multi-row INSERT, the SELECT) is built
//! once by functions generic over the sqlx `Database`.
//!
//! The writer holds one connection per backend, not a pool: one task writes, so one connection is all it can use.
//! A PostgreSQL connection can be lost (the server restarts, the network drops); the writer then drops it and
//! connects again before the next batch, and the rows of the failed batch are reported like any write failure.

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqliteSynchronous};
use sqlx::{
    ColumnIndex, ConnectOptions, Connection, Database, Decode, Encode, Postgres, QueryBuilder, Row, Sqlite,
    Type,
};

use agent_tool_traits::ToolName;

use crate::{AuditConfig, AuditDetail, AuditError, AuditFilter, AuditRow, AuditStatus, time};

/// The SQLite migrations that create `agent_audit_log`, embedded at build time (no database needed to build).
static SQLITE_MIGRATOR: Migrator = sqlx::migrate!("./migrations/sqlite");

/// The PostgreSQL migrations: the same table in PostgreSQL's dialect.
static POSTGRES_MIGRATOR: Migrator = sqlx::migrate!("./migrations/postgres");

/// The most rows per INSERT statement: 17 bound values each stays far below SQLite's limit of 32,766 variables
/// and PostgreSQL's of 65,535.
const ROWS_PER_STATEMENT: usize = 256;

/// A WAL longer than this is checkpointed and truncated by the appender that finds it so
/// ([`Store::trim_wal`]).
const WAL_TRIM_BYTES: u64 = 64 * 4096;

const COLUMNS: &str = "session_id, step, tool_name, status, decision, decided_by, elapsed_ms, output_preview, \
                       agent_name, ts, tool_input, cwd, permission_mode, rule, rule_file, sandbox, approver, call_key";

/// Where the audit log is stored, chosen by how it is written: `postgres://` or `postgresql://` selects
/// PostgreSQL, `sqlite:` a SQLite URL, and anything without a `scheme://` is the path of a SQLite file.
///
/// ```
/// use agent_hooks::AuditDatabase;
///
/// let db: AuditDatabase = "postgres://audit:secret@db.internal/agent".parse().unwrap();
/// assert!(db.is_postgres());
/// // Messages never show the password.
/// assert_eq!(db.to_string(), "postgres://audit:***@db.internal/agent");
/// assert_eq!(
///     AuditDatabase::parse(".agent-guard/audit.db").unwrap(),
///     AuditDatabase::SqliteFile(".agent-guard/audit.db".into())
/// );
/// assert!(AuditDatabase::parse("mysql://db/agent").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditDatabase {
    /// A SQLite file; opening it creates the file and its parent directory when missing.
    SqliteFile(PathBuf),
    /// A SQLite URL (`sqlite://audit.db?mode=rwc`, `sqlite::memory:`), given to sqlx as written.
    SqliteUrl(String),
    /// A PostgreSQL URL (`postgres://user@host:5432/db`, `postgresql:///db?host=/run/postgresql`).
    Postgres(String),
}

impl AuditDatabase {
    /// Reads a path or a URL; a URL of any other scheme is an [`AuditError::UnsupportedDatabase`].
    pub fn parse(text: &str) -> Result<Self, AuditError> {
        if let Some((scheme, _)) = text.split_once("://") {
            return match scheme.to_ascii_lowercase().as_str() {
                "postgres" | "postgresql" => Ok(Self::Postgres(text.to_owned())),
                "sqlite" => Ok(Self::SqliteUrl(text.to_owned())),
                _ => Err(AuditError::UnsupportedDatabase { target: redact(text) }),
            };
        }
        if text
            .get(..7)
            .is_some_and(|head| head.eq_ignore_ascii_case("sqlite:"))
        {
            return Ok(Self::SqliteUrl(text.to_owned()));
        }
        Ok(Self::SqliteFile(PathBuf::from(text)))
    }

    /// Whether the log is in PostgreSQL.
    pub const fn is_postgres(&self) -> bool {
        match self {
            Self::Postgres(_) => true,
            Self::SqliteFile(_) | Self::SqliteUrl(_) => false,
        }
    }
}

impl FromStr for AuditDatabase {
    type Err = AuditError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

/// The path, or the URL with its password replaced by `***` (it goes into messages and logs).
impl fmt::Display for AuditDatabase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SqliteFile(path) => write!(f, "{}", path.display()),
            Self::SqliteUrl(url) => f.write_str(url),
            Self::Postgres(url) => f.write_str(&redact(url)),
        }
    }
}

/// `url` with the password of its user part and of a `password=` parameter replaced by `***`.
fn redact(url: &str) -> String {
    let mut out = url.to_owned();
    if let Some(start) = out.find("://").map(|at| at + 3) {
        let rest = out.get(start..).unwrap_or_default();
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let authority = rest.get(..authority_end).unwrap_or_default();
        if let Some(at) = authority.rfind('@')
            && let Some(colon) = authority.get(..at).and_then(|user| user.find(':'))
        {
            out.replace_range(start + colon + 1..start + at, "***");
        }
    }
    if let Some(query) = out.find('?') {
        let mut params: Vec<String> = Vec::new();
        for param in out.get(query + 1..).unwrap_or_default().split('&') {
            match param.split_once('=') {
                Some((key, _)) if key.eq_ignore_ascii_case("password") => params.push(format!("{key}=***")),
                _ => params.push(param.to_owned()),
            }
        }
        out.truncate(query + 1);
        out.push_str(&params.join("&"));
    }
    out
}

/// The open database of a writer.
#[derive(Debug)]
pub(crate) enum Store {
    /// The embedded default: one connection, WAL, `synchronous=NORMAL`.
    Sqlite(SqliteConnection),
    /// A PostgreSQL server, connected again after a lost connection (boxed: its options are large).
    Postgres(Box<PgLink>),
}

/// A PostgreSQL connection that is opened again when it was lost.
#[derive(Debug)]
pub(crate) struct PgLink {
    options: PgConnectOptions,
    conn: Option<PgConnection>,
    connect_timeout: Duration,
}

impl Store {
    /// Opens `db` (creating a SQLite file and its directory when missing) and runs its migrations; with the name
    /// messages give it (a URL without its password).
    pub(crate) async fn open(db: &AuditDatabase, config: &AuditConfig) -> Result<(Self, String), AuditError> {
        match db {
            AuditDatabase::SqliteFile(path) => {
                if let Some(parent) = path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
                    // A few `stat`s when the directory is there, as it is on every open but the first: not worth
                    // a thread of the blocking pool, which the hook would pay on every call.
                    crate::create_dir_all_ignored(parent).map_err(|source| AuditError::CreateDir {
                        path: parent.to_path_buf(),
                        source,
                    })?;
                }
                let target = path.display().to_string();
                let options = sqlite_file_options(path).create_if_missing(true);
                let mut store = Self::open_sqlite(options, config, &target).await?;
                // The rows hook processes left beside the database go in before anything else.
                crate::spool::move_into(db, &mut store).await?;
                Ok((store, target))
            }
            AuditDatabase::SqliteUrl(url) => {
                let options = SqliteConnectOptions::from_str(url).map_err(|source| AuditError::Open {
                    target: url.clone(),
                    source,
                })?;
                let target = options.get_filename().display().to_string();
                Ok((Self::open_sqlite(options, config, &target).await?, target))
            }
            AuditDatabase::Postgres(url) => {
                let target = db.to_string();
                Ok((Self::open_postgres(url, config, &target).await?, target))
            }
        }
    }

    /// Opens `options` with the pragmas the writer relies on and runs the SQLite migrations.
    ///
    /// A database whose schema is current (its `user_version` at least [`sqlite_schema_version`]) costs one
    /// `PRAGMA` read here and no migration work: `agent-guard check` opens it once per tool call. Otherwise the
    /// journal is switched to WAL and the migrations run inside one `BEGIN IMMEDIATE` transaction that checks the
    /// version again, so that processes opening a new database at once migrate it exactly once, one after another.
    pub(crate) async fn open_sqlite(
        options: SqliteConnectOptions,
        config: &AuditConfig,
        target: &str,
    ) -> Result<Self, AuditError> {
        // WAL is a property of the file, set once by `ready_sqlite`; asking for it on every connection would take
        // an exclusive lock that the busy timeout cannot wait for.
        let options = options
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(config.busy_timeout);
        let mut conn = options.connect().await.map_err(|source| AuditError::Open {
            target: target.to_owned(),
            source,
        })?;
        ready_sqlite(&mut conn, config.busy_timeout, target).await?;
        Ok(Self::Sqlite(conn))
    }

    /// Connects to the PostgreSQL server of `url` and runs the PostgreSQL migrations (concurrent openers are
    /// serialised by the migrator's advisory lock).
    pub(crate) async fn open_postgres(
        url: &str,
        config: &AuditConfig,
        target: &str,
    ) -> Result<Self, AuditError> {
        let options = postgres_options(url, target)?;
        let mut conn = connect_postgres(&options, config.connect_timeout, target).await?;
        POSTGRES_MIGRATOR
            .run_direct(&mut conn)
            .await
            .map_err(|source| AuditError::Migrate {
                target: target.to_owned(),
                source,
            })?;
        Ok(Self::Postgres(Box::new(PgLink {
            options,
            conn: Some(conn),
            connect_timeout: config.connect_timeout,
        })))
    }

    /// Writes `rows` as one transaction of multi-row INSERT statements.
    pub(crate) async fn insert(&mut self, rows: &[AuditRow]) -> Result<(), sqlx::Error> {
        // Whoever made a row, it is stored with its credentials redacted.
        let rows: Vec<Cow<'_, AuditRow>> = rows.iter().map(AuditRow::redacted).collect();
        match self {
            Self::Sqlite(conn) => insert_sqlite(conn, &rows).await,
            Self::Postgres(link) => link.insert(&rows).await,
        }
    }

    /// Keeps the WAL of a SQLite file short for processes that each open it, append and exit without closing
    /// (the hook). Such a process is the first to open the file each time, so SQLite rebuilds the WAL's index by
    /// reading and checksumming the whole WAL, and forgets what was checkpointed: a WAL that only grows makes every
    /// open slower, and past `wal_autocheckpoint` every commit would copy all of it again. So when the WAL is past
    /// [`WAL_TRIM_BYTES`] it is checkpointed and truncated (`wal_checkpoint(TRUNCATE)`, two `fsync`s, once per
    /// some thirty calls); each open then reads at most that much. A checkpoint that cannot run now (another
    /// process is reading or writing) is left to the next call: it loses nothing.
    pub(crate) async fn trim_wal(&mut self) {
        let Self::Sqlite(conn) = self else { return };
        let Some(wal) = wal_file(conn).await else { return };
        if std::fs::metadata(&wal).is_ok_and(|meta| meta.len() > WAL_TRIM_BYTES) {
            // A truncating checkpoint waits for every other reader and writer; it is not worth more than a moment
            // of this process's exit, so it waits briefly and is otherwise left to a later call.
            let _shortened = sqlx::query("PRAGMA busy_timeout = 50").execute(&mut *conn).await;
            let _checkpointed = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                .execute(&mut *conn)
                .await;
        }
    }

    /// Closes the connection politely (SQLite checkpoints; PostgreSQL ends the session).
    pub(crate) async fn close(self) {
        // A failure here loses nothing: every batch was committed or reported before.
        match self {
            Self::Sqlite(conn) => {
                let _closed = conn.close().await;
            }
            Self::Postgres(link) => {
                if let Some(conn) = link.conn {
                    let _closed = conn.close().await;
                }
            }
        }
    }
}

/// The schema version the SQLite migrations build, kept in the file's `user_version`: the highest migration.
pub(crate) fn sqlite_schema_version() -> i64 {
    SQLITE_MIGRATOR
        .iter()
        .map(|migration| migration.version)
        .max()
        .unwrap_or_default()
}

/// Makes the database of `conn` ready for rows: nothing when its `user_version` says its schema is current;
/// else WAL and the migrations, serialised between processes (see [`Store::open_sqlite`]).
async fn ready_sqlite(conn: &mut SqliteConnection, busy: Duration, target: &str) -> Result<(), AuditError> {
    let open_error = |source| AuditError::Open {
        target: target.to_owned(),
        source,
    };
    let current = sqlite_schema_version();
    if user_version(conn).await.map_err(open_error)? >= current {
        return Ok(());
    }
    use_wal(conn, busy).await.map_err(open_error)?;
    let migrate_error = |source| AuditError::Migrate {
        target: target.to_owned(),
        source,
    };
    // IMMEDIATE takes the write lock first (waiting for it within the busy timeout), so the version read below
    // is the one this transaction migrates from: a process that waited finds the work done.
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await.map_err(open_error)?;
    if user_version(&mut tx).await.map_err(open_error)? >= current {
        return tx.commit().await.map_err(open_error);
    }
    // Inside the transaction the migrator's own transactions are savepoints. `run_direct` is `run` on a connection
    // (`run` takes any `Acquire`, whose future the compiler cannot prove `Send` here).
    SQLITE_MIGRATOR
        .run_direct(&mut *tx)
        .await
        .map_err(migrate_error)?;
    let set_version = format!("PRAGMA user_version = {current}");
    sqlx::query(&set_version)
        .execute(&mut *tx)
        .await
        .map_err(open_error)?;
    tx.commit().await.map_err(open_error)
}

/// The WAL file of the database of `conn` (`<file>-wal`); `None` for a database in memory.
async fn wal_file(conn: &mut SqliteConnection) -> Option<PathBuf> {
    let file: String = sqlx::query_scalar("SELECT file FROM pragma_database_list WHERE name = 'main'")
        .fetch_one(&mut *conn)
        .await
        .ok()?;
    (!file.is_empty()).then(|| PathBuf::from(format!("{file}-wal")))
}

async fn user_version(conn: &mut SqliteConnection) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("PRAGMA user_version").fetch_one(conn).await
}

/// Switches the file to WAL. The switch needs an exclusive lock the busy handler does not wait for, so a busy
/// database is tried again until `busy` has passed; a file already in WAL answers at once.
async fn use_wal(conn: &mut SqliteConnection, busy: Duration) -> Result<(), sqlx::Error> {
    let deadline = tokio::time::Instant::now() + busy;
    loop {
        match sqlx::query("PRAGMA journal_mode = WAL").execute(&mut *conn).await {
            Err(sqlx::Error::Database(error))
                if is_busy(error.as_ref()) && tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            done => return done.map(drop),
        }
    }
}

/// Whether SQLite answered `SQLITE_BUSY` or `SQLITE_LOCKED` (any extended form).
fn is_busy(error: &dyn sqlx::error::DatabaseError) -> bool {
    const SQLITE_BUSY: i64 = 5;
    const SQLITE_LOCKED: i64 = 6;
    error
        .code()
        .and_then(|code| code.parse::<i64>().ok())
        .is_some_and(|code| matches!(code & 0xff, SQLITE_BUSY | SQLITE_LOCKED))
}

impl PgLink {
    async fn insert(&mut self, rows: &[Cow<'_, AuditRow>]) -> Result<(), sqlx::Error> {
        let conn = match &mut self.conn {
            Some(conn) => conn,
            None => {
                let conn = match tokio::time::timeout(self.connect_timeout, self.options.connect()).await {
                    Ok(connected) => connected?,
                    Err(_) => return Err(connect_timed_out(self.connect_timeout)),
                };
                self.conn.insert(conn)
            }
        };
        let written = insert_postgres(conn, rows).await;
        if written.is_err() {
            // The connection may be broken (a restarted server answers every later statement with an error);
            // the next batch starts from a fresh one. A healthy connection costs one reconnect, nothing more.
            self.conn = None;
        }
        written
    }
}

/// Writes `rows` in one transaction made of SQLite's own `BEGIN` and `COMMIT`, not of sqlx's `Transaction`.
///
/// sqlx counts the transactions it began on a connection: inside one it opens a savepoint instead, and its commit
/// of that is a `RELEASE`, which commits nothing while an outer transaction is open. But SQLite rolls a whole
/// transaction back by itself on some errors (`SQLITE_FULL` and `SQLITE_IOERR` among them, depending on the
/// statement); sqlx's `ROLLBACK` then fails and its count stays one too high. The next batch's `BEGIN` is a
/// savepoint, the next failure rolls back only to it and leaves SQLite's transaction open, and every batch after
/// that is "committed" into it: reported written, never on disk. Here SQLite's state is the only one: a batch is
/// written when its `COMMIT` succeeded, and after any failure it is rolled back (a `ROLLBACK` that finds no
/// transaction is the case where SQLite already did), so nothing of a failed batch is left for the next one.
async fn insert_sqlite(conn: &mut SqliteConnection, rows: &[Cow<'_, AuditRow>]) -> Result<(), sqlx::Error> {
    if sql_sqlite(conn, "BEGIN").await.is_err() {
        // A transaction left open by an insert that was cancelled holds no row anyone was told is written.
        rollback_sqlite(conn).await;
        sql_sqlite(conn, "BEGIN").await?;
    }
    let written = insert_and_commit_sqlite(conn, rows).await;
    if written.is_err() {
        rollback_sqlite(conn).await;
    }
    written
}

/// The statements of [`insert_sqlite`] after its `BEGIN`.
async fn insert_and_commit_sqlite(
    conn: &mut SqliteConnection,
    rows: &[Cow<'_, AuditRow>],
) -> Result<(), sqlx::Error> {
    for chunk in statement_chunks(rows) {
        insert_statement::<Sqlite>(chunk)
            .build()
            .execute(&mut *conn)
            .await?;
    }
    sql_sqlite(conn, "COMMIT").await
}

/// Ends the transaction of `conn` without writing it; there may be none (SQLite rolled it back itself), which is
/// the same outcome.
async fn rollback_sqlite(conn: &mut SqliteConnection) {
    let _rolled_back = sql_sqlite(conn, "ROLLBACK").await;
}

/// Runs `sql` as SQLite reads it, without preparing it for the statement cache.
async fn sql_sqlite(conn: &mut SqliteConnection, sql: &'static str) -> Result<(), sqlx::Error> {
    // Through the trait's boxed future: `RawSql::execute` is a generic `async fn` whose future the compiler cannot
    // prove `Send` for the writer's task.
    sqlx::Executor::execute(conn, sqlx::raw_sql(sql)).await.map(drop)
}

async fn insert_postgres(conn: &mut PgConnection, rows: &[Cow<'_, AuditRow>]) -> Result<(), sqlx::Error> {
    let mut tx = conn.begin().await?;
    for chunk in statement_chunks(rows) {
        insert_statement::<Postgres>(chunk)
            .build()
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await
}

/// `rows` in consecutive chunks whose lengths are powers of two, at most [`ROWS_PER_STATEMENT`]: a batch of any
/// length is written by statements of a few lengths only, each prepared once per connection and then taken from
/// its statement cache, where a statement of the batch's own length was prepared again for most batches (parsing
/// an INSERT of dozens of rows costs more than running it).
fn statement_chunks<T>(rows: &[T]) -> impl Iterator<Item = &[T]> {
    let mut rest = rows;
    std::iter::from_fn(move || {
        let most = rest.len().min(ROWS_PER_STATEMENT);
        let length = most.checked_ilog2().map(|power| 1_usize << power)?;
        let (chunk, tail) = rest.split_at_checked(length)?;
        rest = tail;
        Some(chunk)
    })
}

/// `INSERT INTO agent_audit_log (…) VALUES (…), (…), …` with every value bound, in the dialect of `DB`.
fn insert_statement<'a, DB>(rows: &'a [Cow<'a, AuditRow>]) -> QueryBuilder<'a, DB>
where
    DB: Database,
    DB::Arguments<'a>: Default,
    &'a str: Encode<'a, DB> + Type<DB>,
    Option<&'a str>: Encode<'a, DB> + Type<DB>,
    i64: Encode<'a, DB> + Type<DB>,
{
    let mut sql = QueryBuilder::<DB>::new(format!("INSERT INTO agent_audit_log ({COLUMNS}) "));
    sql.push_values(rows, |mut values, row| {
        values
            .push_bind(row.session_id.as_str())
            .push_bind(i64::from(row.step))
            .push_bind(row.tool_name.as_str())
            .push_bind(row.status.as_str())
            .push_bind(row.decision.as_deref())
            .push_bind(row.decided_by.as_deref())
            .push_bind(i64::try_from(row.elapsed_ms).unwrap_or(i64::MAX))
            .push_bind(row.output_preview.as_str())
            .push_bind(row.agent_name.as_str())
            .push_bind(row.ts.as_str())
            .push_bind(row.tool_input.as_deref())
            .push_bind(row.cwd.as_deref())
            .push_bind(row.permission_mode.as_deref())
            .push_bind(row.detail.rule.as_deref())
            .push_bind(row.detail.rule_file.as_deref())
            .push_bind(row.detail.sandbox.as_deref())
            .push_bind(row.detail.approver.as_deref())
            .push_bind(row.detail.call.as_deref());
    });
    sql
}

/// The rows of `db` that pass `filter`, oldest first, read through a connection of its own.
/// A read connection to an audit database, held for repeated queries (`agent-guard audit --follow`). After a failed
/// query the connection is dropped and the next query connects again, so a restarted server is picked up.
#[derive(Debug)]
pub(crate) struct Reader {
    db: AuditDatabase,
    source: ReadSource,
    conn: Option<ReadConn>,
    connect_timeout: Duration,
    target: String,
}

/// How a [`Reader`] connects.
#[derive(Debug)]
enum ReadSource {
    Sqlite(SqliteConnectOptions),
    Postgres(PgConnectOptions),
}

#[derive(Debug)]
enum ReadConn {
    Sqlite(SqliteConnection),
    Postgres(PgConnection),
}

/// Moves the rows spooled beside `db` into it, when there are any (a `stat` when there are none): a reader sees
/// every row a hook process wrote.
pub(crate) async fn settle(db: &AuditDatabase, connect_timeout: Duration) -> Result<(), AuditError> {
    if crate::spool::pending(db) {
        let config = AuditConfig {
            connect_timeout,
            ..AuditConfig::default()
        };
        let (store, _) = Store::open(db, &config).await?;
        store.close().await;
    }
    Ok(())
}

impl Reader {
    /// Connects to `db` (a SQLite file must exist; a PostgreSQL server must answer within `connect_timeout`).
    pub(crate) async fn open(db: &AuditDatabase, connect_timeout: Duration) -> Result<Self, AuditError> {
        settle(db, connect_timeout).await?;
        let target = db.to_string();
        let source = match db {
            AuditDatabase::SqliteFile(path) => {
                ReadSource::Sqlite(sqlite_file_options(path).create_if_missing(false))
            }
            AuditDatabase::SqliteUrl(url) => {
                ReadSource::Sqlite(SqliteConnectOptions::from_str(url).map_err(|source| {
                    AuditError::Open {
                        target: target.clone(),
                        source,
                    }
                })?)
            }
            AuditDatabase::Postgres(url) => ReadSource::Postgres(postgres_options(url, &target)?),
        };
        let mut reader = Self {
            db: db.clone(),
            source,
            conn: None,
            connect_timeout,
            target,
        };
        reader.conn = Some(reader.connect().await?);
        Ok(reader)
    }

    async fn connect(&self) -> Result<ReadConn, AuditError> {
        match &self.source {
            ReadSource::Sqlite(options) => {
                options
                    .connect()
                    .await
                    .map(ReadConn::Sqlite)
                    .map_err(|source| AuditError::Open {
                        target: self.target.clone(),
                        source,
                    })
            }
            ReadSource::Postgres(options) => connect_postgres(options, self.connect_timeout, &self.target)
                .await
                .map(ReadConn::Postgres),
        }
    }

    /// The rows that pass `filter`, oldest first.
    pub(crate) async fn query(&mut self, filter: &AuditFilter) -> Result<Vec<AuditRow>, AuditError> {
        let since = filter.since.as_deref().map(time::time_bound).transpose()?;
        // Rows spooled since the last query (`agent-guard audit --follow`).
        settle(&self.db, self.connect_timeout).await?;
        let mut conn = match self.conn.take() {
            Some(conn) => conn,
            None => self.connect().await?,
        };
        let fetched = match &mut conn {
            ReadConn::Sqlite(c) => select_statement::<Sqlite>(filter, since)
                .build()
                .fetch_all(c)
                .await
                .map(|rows| rows.iter().map(|row| read_row(row, &self.target)).collect()),
            ReadConn::Postgres(c) => select_statement::<Postgres>(filter, since)
                .build()
                .fetch_all(c)
                .await
                .map(|rows| rows.iter().map(|row| read_row(row, &self.target)).collect()),
        };
        match fetched {
            Ok(rows) => {
                self.conn = Some(conn);
                rows
            }
            // The connection is left dropped: the next query connects again.
            Err(source) => Err(AuditError::Query {
                target: self.target.clone(),
                source,
            }),
        }
    }

    /// Closes the connection politely (SQLite checkpoints); a failure here loses nothing that was read.
    pub(crate) async fn close(mut self) {
        let _closed = match self.conn.take() {
            Some(ReadConn::Sqlite(conn)) => conn.close().await,
            Some(ReadConn::Postgres(conn)) => conn.close().await,
            None => Ok(()),
        };
    }
}

pub(crate) fn sqlite_file_options(path: &Path) -> SqliteConnectOptions {
    SqliteConnectOptions::new().filename(path)
}

/// `SELECT id, … FROM agent_audit_log WHERE …` for `filter`, oldest first, in the dialect of `DB`.
fn select_statement<'a, DB>(filter: &'a AuditFilter, since: Option<String>) -> QueryBuilder<'a, DB>
where
    DB: Database,
    DB::Arguments<'a>: Default,
    &'a str: Encode<'a, DB> + Type<DB>,
    String: Encode<'a, DB> + Type<DB>,
    i64: Encode<'a, DB> + Type<DB>,
{
    let mut sql = QueryBuilder::<DB>::new(format!("SELECT id, {COLUMNS} FROM agent_audit_log WHERE 1 = 1"));
    if let Some(id) = filter.id {
        sql.push(" AND id = ").push_bind(id);
    }
    if let Some(rule) = &filter.rule {
        sql.push(" AND rule = ").push_bind(rule.as_str());
    }
    if let Some(session_id) = &filter.session_id {
        sql.push(" AND session_id = ").push_bind(session_id.as_str());
    }
    if let Some(since) = since {
        sql.push(" AND ts >= ").push_bind(since);
    }
    if let Some(tool) = &filter.tool {
        // Every name of the tool, in both families: `Bash` finds the runtime's `run_bash` rows and the other way.
        let mut names = sql.push(" AND tool_name IN (").separated(", ");
        for name in ToolName::new(tool).names() {
            names.push_bind(name.to_owned());
        }
        names.push_unseparated(")");
    }
    sql.push(" ORDER BY id");
    if let Some(limit) = filter.limit {
        sql.push(" LIMIT ").push_bind(i64::from(limit));
    }
    sql
}

fn read_row<'r, R>(row: &'r R, target: &str) -> Result<AuditRow, AuditError>
where
    R: Row,
    &'r str: ColumnIndex<R>,
    String: Decode<'r, R::Database> + Type<R::Database>,
    Option<String>: Decode<'r, R::Database> + Type<R::Database>,
    i64: Decode<'r, R::Database> + Type<R::Database>,
{
    let query_error = |source| AuditError::Query {
        target: target.to_owned(),
        source,
    };
    let status: String = row.try_get("status").map_err(query_error)?;
    let step: i64 = row.try_get("step").map_err(query_error)?;
    let elapsed_ms: i64 = row.try_get("elapsed_ms").map_err(query_error)?;
    Ok(AuditRow {
        id: Some(row.try_get("id").map_err(query_error)?),
        session_id: row.try_get("session_id").map_err(query_error)?,
        step: u32::try_from(step).unwrap_or_default(),
        tool_name: row.try_get("tool_name").map_err(query_error)?,
        status: AuditStatus::parse(&status).ok_or(AuditError::UnknownStatus(status))?,
        decision: row.try_get("decision").map_err(query_error)?,
        decided_by: row.try_get("decided_by").map_err(query_error)?,
        elapsed_ms: u64::try_from(elapsed_ms).unwrap_or_default(),
        output_preview: row.try_get("output_preview").map_err(query_error)?,
        agent_name: row.try_get("agent_name").map_err(query_error)?,
        ts: row.try_get("ts").map_err(query_error)?,
        tool_input: row.try_get("tool_input").map_err(query_error)?,
        cwd: row.try_get("cwd").map_err(query_error)?,
        permission_mode: row.try_get("permission_mode").map_err(query_error)?,
        detail: AuditDetail {
            rule: row.try_get("rule").map_err(query_error)?,
            rule_file: row.try_get("rule_file").map_err(query_error)?,
            sandbox: row.try_get("sandbox").map_err(query_error)?,
            approver: row.try_get("approver").map_err(query_error)?,
            call: row.try_get("call_key").map_err(query_error)?,
        },
    })
}

fn postgres_options(url: &str, target: &str) -> Result<PgConnectOptions, AuditError> {
    PgConnectOptions::from_str(url).map_err(|source| AuditError::Open {
        target: target.to_owned(),
        source,
    })
}

/// One connection to the server, or an error naming `target` when it cannot be reached in `timeout`.
async fn connect_postgres(
    options: &PgConnectOptions,
    timeout: Duration,
    target: &str,
) -> Result<PgConnection, AuditError> {
    match tokio::time::timeout(timeout, options.connect()).await {
        Ok(Ok(conn)) => Ok(conn),
        Ok(Err(source)) => Err(AuditError::Open {
            target: target.to_owned(),
            source,
        }),
        Err(_) => Err(AuditError::Open {
            target: target.to_owned(),
            source: connect_timed_out(timeout),
        }),
    }
}

fn connect_timed_out(timeout: Duration) -> sqlx::Error {
    sqlx::Error::Io(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("no connection within {} ms", timeout.as_millis()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PREVIEW_CHARS;

    fn bulky_row(step: u32) -> AuditRow {
        AuditRow {
            id: None,
            session_id: "s".into(),
            step,
            tool_name: "Bash".into(),
            status: AuditStatus::Ok,
            decision: Some("allow".into()),
            decided_by: Some("rules/default".into()),
            elapsed_ms: 1,
            output_preview: "x".repeat(PREVIEW_CHARS),
            agent_name: "lead".into(),
            ts: time::now(),
            tool_input: None,
            cwd: None,
            permission_mode: None,
            detail: AuditDetail::default(),
        }
    }

    async fn committed(path: &Path) -> usize {
        let mut reader = sqlite_file_options(path).connect().await.unwrap();
        let count: i64 = sqlx::query_scalar("SELECT count(*) FROM agent_audit_log")
            .fetch_one(&mut reader)
            .await
            .unwrap();
        reader.close().await.unwrap();
        usize::try_from(count).unwrap()
    }

    /// A batch `insert` calls written is committed, and one it fails left nothing behind, also after SQLite rolled
    /// a transaction back by itself: a full database does that when a one-row statement cannot get a page.
    #[tokio::test]
    async fn every_batch_reported_written_is_on_disk_after_a_full_database() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.db");
        // SQLite's page limit stands in for a full disk.
        let options = sqlite_file_options(&path)
            .create_if_missing(true)
            .pragma("max_page_count", "12");
        let mut store = Store::open_sqlite(options, &AuditConfig::default(), "audit.db")
            .await
            .unwrap();
        let mut step = 0;
        let mut batch = |rows: usize, chars: usize| -> Vec<AuditRow> {
            (0..rows)
                .map(|_| {
                    step += 1;
                    let mut row = bulky_row(step);
                    row.output_preview.truncate(chars);
                    row
                })
                .collect()
        };
        let mut written = 0;
        // One bulky row at a time until the database is full.
        loop {
            assert!(written < 10_000, "the database never filled up");
            if store.insert(&batch(1, PREVIEW_CHARS)).await.is_err() {
                break;
            }
            written += 1;
        }
        assert_eq!(committed(&path).await, written);
        // Then batches that fail on a multi-row statement, between small rows that still fit in the pages there are.
        let mut fitted = 0;
        for (rows, chars) in [
            (2, PREVIEW_CHARS),
            (1, 0),
            (1, 0),
            (2, 0),
            (1, 0),
            (300, 0),
            (1, 0),
            (3, PREVIEW_CHARS),
            (1, 0),
        ] {
            if store.insert(&batch(rows, chars)).await.is_ok() {
                written += rows;
                fitted += 1;
            }
            assert_eq!(committed(&path).await, written, "after a batch of {rows}");
        }
        assert!(fitted > 0, "some small rows fitted after the database was full");
        store.close().await;
        assert_eq!(committed(&path).await, written);
    }

    /// An insert that was cancelled between its `BEGIN` and its `COMMIT` leaves a transaction open on the
    /// connection: the next insert rolls it back and commits its own rows, not into that transaction.
    #[tokio::test]
    async fn a_transaction_left_open_is_rolled_back_before_the_next_batch() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.db");
        let options = sqlite_file_options(&path).create_if_missing(true);
        let mut store = Store::open_sqlite(options, &AuditConfig::default(), "audit.db")
            .await
            .unwrap();
        let Store::Sqlite(conn) = &mut store else {
            panic!("a SQLite store")
        };
        sql_sqlite(conn, "BEGIN").await.unwrap();
        insert_statement::<Sqlite>(&[Cow::Owned(bulky_row(1))])
            .build()
            .execute(&mut *conn)
            .await
            .unwrap();
        store.insert(&[bulky_row(2), bulky_row(3)]).await.unwrap();
        let steps: Vec<i64> = sqlx::query_scalar("SELECT step FROM agent_audit_log ORDER BY id")
            .fetch_all(&mut sqlite_file_options(&path).connect().await.unwrap())
            .await
            .unwrap();
        assert_eq!(steps, [2, 3]);
        store.close().await;
    }

    /// Every row once, in order, in chunks of a few lengths only.
    #[test]
    fn a_batch_is_cut_into_chunks_of_powers_of_two() {
        for length in [0_usize, 1, 2, 3, 7, 50, 255, 256, 257, 1000, 4096] {
            let rows: Vec<usize> = (0..length).collect();
            let chunks: Vec<&[usize]> = statement_chunks(&rows).collect();
            assert_eq!(chunks.concat(), rows, "{length}");
            assert!(
                chunks
                    .iter()
                    .all(|c| c.len().is_power_of_two() && c.len() <= ROWS_PER_STATEMENT),
                "{length}: {:?}",
                chunks.iter().map(|c| c.len()).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn the_scheme_selects_the_backend() {
        for url in ["postgres://h/db", "postgresql://u@h:5433/db", "POSTGRES://h/db"] {
            assert_eq!(
                AuditDatabase::parse(url).unwrap(),
                AuditDatabase::Postgres(url.into())
            );
        }
        for url in ["sqlite://a.db?mode=rwc", "sqlite::memory:", "sqlite:a.db"] {
            assert_eq!(
                AuditDatabase::parse(url).unwrap(),
                AuditDatabase::SqliteUrl(url.into())
            );
        }
        for path in [
            "audit.db",
            "/var/log/agent/audit.db",
            "dir:with:colons/a.db",
            "./postgres",
        ] {
            assert_eq!(
                AuditDatabase::parse(path).unwrap(),
                AuditDatabase::SqliteFile(path.into())
            );
        }
        let mysql = AuditDatabase::parse("mysql://root:pw@h/db").unwrap_err();
        assert_eq!(
            mysql.to_string(),
            "unsupported audit database `mysql://root:***@h/db`: give a file path, a `sqlite:` URL or a \
             `postgres://` URL"
        );
    }

    #[test]
    fn passwords_never_reach_a_message() {
        assert_eq!(redact("postgres://u:pw@h/db"), "postgres://u:***@h/db");
        assert_eq!(redact("postgres://u:p@ss:w@h:1/db"), "postgres://u:***@h:1/db");
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(
            redact("postgres://h/db?user=u&password=pw&sslmode=require"),
            "postgres://h/db?user=u&password=***&sslmode=require"
        );
        assert_eq!(redact("postgres:///db?host=/tmp"), "postgres:///db?host=/tmp");
    }
}
