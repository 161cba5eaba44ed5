//! The spool of a SQLite audit database: rows a short-lived process (the one-shot hook) leaves beside the
//! database, one JSON line each, for the next process that opens the database to insert.
//!
//! Design: the coding agent waits for the hook process to end, not only for its answer, so what the hook does
//! after answering is on every tool call's path. Opening SQLite through sqlx (a connection thread, the schema's
//! version, the WAL and its shared memory) and committing a row costs a few milliseconds: more than the decision.
//! Appending one line to a file costs a few system calls. Every opener of the database (a reader such as
//! `agent-guard audit`, a writer such as `check --jsonl` or the runtime) first moves the spooled rows into it, in
//! one transaction, so that readers see every row and the rows keep their order.
//!
//! Concurrency: writers append under a shared `flock` of the spool, one `write` per row; whoever moves the rows
//! takes the spool under an exclusive lock by renaming it, so that no row is both taken and written afterwards
//! (a writer that opened the spool before the rename finds, once it holds its lock, that the path names another
//! file, and opens the path again). Movers are one at a time, under a lock file of their own; a taken spool left
//! by a mover that died is moved by the next one before the spool itself.

use std::fs::{File, OpenOptions};
use std::io::{self, Read as _, Write as _};
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

use crate::store::Store;
use crate::{AuditDatabase, AuditError, AuditRow};

/// How large a spool grows before the writer that passes this size moves it into the database itself: the
/// cost of one transaction, once in a few thousand calls, keeps the file small when nobody reads the log.
pub const SPOOL_MOVE_BYTES: u64 = 1 << 20;

/// The spool of `db`: `<database>-spool` beside a SQLite file (as SQLite's own `-wal` and `-shm`); `None` for a
/// database given by URL, which the writer opens directly.
pub fn spool_path(db: &AuditDatabase) -> Option<PathBuf> {
    match db {
        AuditDatabase::SqliteFile(path) => {
            let mut name = path.file_name()?.to_os_string();
            name.push("-spool");
            Some(path.with_file_name(name))
        }
        AuditDatabase::SqliteUrl(_) | AuditDatabase::Postgres(_) => None,
    }
}

/// Appends `row` (its credentials redacted, as every stored row) to the spool of `db`, making the spool and its
/// directory when missing; the spool's size after the row, or `None` when `db` has no spool (a URL: write it
/// directly).
///
/// # Errors
/// [`AuditError::Spool`] naming the spool when it cannot be made, locked or written.
pub fn spool(db: &AuditDatabase, row: &AuditRow) -> Result<Option<u64>, AuditError> {
    let Some(path) = spool_path(db) else {
        return Ok(None);
    };
    let fail = |source: io::Error| AuditError::Spool {
        path: path.clone(),
        source,
    };
    let mut line = serde_json::to_vec(&*row.redacted()).map_err(|e| fail(io::Error::other(e)))?;
    line.push(b'\n');
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        crate::create_dir_all_ignored(parent).map_err(|source| AuditError::CreateDir {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    loop {
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc_flags())
            .open(&path)
            .map_err(fail)?;
        let mut locked = Flock::lock(file, FlockArg::LockShared).map_err(|(_, errno)| fail(errno.into()))?;
        // A mover may have taken the spool between the open and the lock: then the row goes to the new one.
        let ours = locked.metadata().map_err(fail)?;
        let current = std::fs::symlink_metadata(&path).ok();
        if current.is_some_and(|now| now.dev() == ours.dev() && now.ino() == ours.ino()) {
            locked.write_all(&line).map_err(fail)?;
            return Ok(Some(ours.len().saturating_add(line.len() as u64)));
        }
    }
}

/// `O_NOFOLLOW | O_CLOEXEC`: the spool is never reached through a link someone put in its place.
fn libc_flags() -> i32 {
    nix::fcntl::OFlag::O_NOFOLLOW.bits() | nix::fcntl::OFlag::O_CLOEXEC.bits()
}

/// Whether `db` has spooled rows waiting (a `stat`).
pub(crate) fn pending(db: &AuditDatabase) -> bool {
    spool_path(db).is_some_and(|path| {
        std::fs::symlink_metadata(&path).is_ok_and(|m| m.len() > 0)
            || std::fs::symlink_metadata(taken_path(&path)).is_ok()
    })
}

fn taken_path(spool: &Path) -> PathBuf {
    let mut name = spool.as_os_str().to_os_string();
    name.push(".taken");
    PathBuf::from(name)
}

fn lock_path(spool: &Path) -> PathBuf {
    let mut name = spool.as_os_str().to_os_string();
    name.push(".lock");
    PathBuf::from(name)
}

/// Moves the rows spooled beside `db` into `store` (the database itself, open for writing), in order, one
/// transaction per spool file; the number of rows moved. A line that is not a row (a write cut short by a
/// crash) is skipped.
///
/// # Errors
/// [`AuditError::Spool`] when the spool cannot be locked, taken or read, [`AuditError::Write`] when the rows
/// cannot be inserted (they stay in the taken spool for the next mover).
pub(crate) async fn move_into(db: &AuditDatabase, store: &mut Store) -> Result<usize, AuditError> {
    let Some(path) = spool_path(db) else {
        return Ok(0);
    };
    if !pending(db) {
        return Ok(0);
    }
    let fail = |source: io::Error| AuditError::Spool {
        path: path.clone(),
        source,
    };
    let lock = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc_flags())
        .open(lock_path(&path))
        .map_err(fail)?;
    let _mover = Flock::lock(lock, FlockArg::LockExclusive).map_err(|(_, errno)| fail(errno.into()))?;
    let taken = taken_path(&path);
    let mut moved = 0;
    // What a mover that died left first, then the spool itself.
    if std::fs::symlink_metadata(&taken).is_ok() {
        moved += insert_taken(&taken, store).await?;
    }
    if take(&path, &taken).map_err(fail)? {
        moved += insert_taken(&taken, store).await?;
    }
    Ok(moved)
}

/// Renames the spool to `taken` under an exclusive lock, once every writer that holds it has written; `false`
/// when there is no spool.
fn take(spool: &Path, taken: &Path) -> io::Result<bool> {
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc_flags())
        .open(spool)
    {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(error),
    };
    let _locked = Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, errno)| io::Error::from(errno))?;
    std::fs::rename(spool, taken)?;
    Ok(true)
}

/// Inserts the rows of the taken spool in one transaction, then removes it.
async fn insert_taken(taken: &Path, store: &mut Store) -> Result<usize, AuditError> {
    let fail = |source: io::Error| AuditError::Spool {
        path: taken.to_path_buf(),
        source,
    };
    let mut text = Vec::new();
    File::open(taken)
        .and_then(|mut file| file.read_to_end(&mut text))
        .map_err(fail)?;
    let rows: Vec<AuditRow> = text
        .split(|byte| *byte == b'\n')
        .filter(|line| !line.is_empty())
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect();
    store.insert(&rows).await.map_err(|source| AuditError::Write {
        rows: u64::try_from(rows.len()).unwrap_or(u64::MAX),
        source,
    })?;
    std::fs::remove_file(taken).map_err(fail)?;
    Ok(rows.len())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

    use super::*;

    fn row(n: u32) -> AuditRow {
        AuditRow {
            id: None,
            session_id: "s".into(),
            step: n,
            tool_name: "Bash".into(),
            status: crate::AuditStatus::Ok,
            decision: Some("allow".into()),
            decided_by: Some("rules/default".into()),
            elapsed_ms: 1,
            output_preview: String::new(),
            agent_name: "hook".into(),
            ts: crate::rfc3339(std::time::SystemTime::now()),
            tool_input: Some(r#"{"command":"echo ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7"}"#.into()),
            cwd: Some("/p".into()),
            permission_mode: Some("default".into()),
            detail: crate::AuditDetail::default(),
        }
    }

    #[test]
    fn spooled_rows_reach_the_reader_in_order_with_a_dead_movers_first() {
        let dir = tempfile::tempdir().unwrap();
        let db = AuditDatabase::SqliteFile(dir.path().join(".agent-guard/audit.db"));
        // A mover that died after taking the spool left its rows; more were spooled since.
        spool(&db, &row(0)).unwrap();
        let path = spool_path(&db).unwrap();
        std::fs::rename(&path, taken_path(&path)).unwrap();
        for n in 1..4 {
            assert!(spool(&db, &row(n)).unwrap().is_some());
        }
        // A line a crash cut short is skipped.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"id\":nu")
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("ghp_"), "spooled redacted: {text}");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let rows = runtime
            .block_on(crate::AuditLogHook::query_database(
                &db,
                &crate::AuditFilter::default(),
            ))
            .unwrap();
        assert_eq!(rows.iter().map(|r| r.step).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert!(!path.exists() && !taken_path(&path).exists());
        assert!(!pending(&db));
    }

    #[test]
    fn the_spool_sits_beside_a_file_and_urls_have_none() {
        let db = AuditDatabase::SqliteFile(PathBuf::from("/p/.agent-guard/audit.db"));
        assert_eq!(
            spool_path(&db),
            Some(PathBuf::from("/p/.agent-guard/audit.db-spool"))
        );
        assert_eq!(
            spool_path(&AuditDatabase::Postgres("postgres://h/db".into())),
            None
        );
    }
}
