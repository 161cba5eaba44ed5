//! The hook's session taint: one small file per session in the project's `.agent-guard/sessions/` (the user's
//! `~/.agent-guard/sessions/` for a directory that is no project), read before a decision and merged after it.
//!
//! Design: the coding agent runs `check` once per call, so what a session has seen must outlive the process. A
//! call reads its session's file (one small read; none without a `session_id`) and decides; a call that adds
//! something takes the directory's lock (`flock`), reads the file again, merges, and replaces it (a temporary file
//! renamed over it), so parallel calls of one session lose nothing and a reader never sees half a file. A record
//! not written for [`EXPIRY`] is forgotten, and at most [`MAX_SESSIONS`] files are kept. A file that cannot be
//! read fails closed: the session counts as tainted both ways, so its ways out ask.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use agent_rules::{SessionTaint, TaintFacts, TaintKeeper, TaintMark};
use agent_tool_traits::Decision;
use nix::fcntl::{Flock, FlockArg};

/// The directory of the records in a `.agent-guard/`.
const SESSIONS_DIR: &str = "sessions";

/// How long a record lives after its last change: a session resumed later than this starts clean.
pub(crate) const EXPIRY: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// The most records one directory keeps; past it, the oldest are removed when a new session starts.
const MAX_SESSIONS: usize = 512;

/// The largest record read, in bytes: a record holds two marks and a bounded list of domains, far below this.
const MAX_RECORD: u64 = 256 << 10;

/// The records of one project's sessions.
#[derive(Debug, Clone)]
pub(crate) struct TaintStore {
    dir: PathBuf,
}

impl TaintStore {
    /// The records of the project `cwd` belongs to: its `.agent-guard/sessions/` when it is marked (`.git`,
    /// `.claude` or `.agent-guard`), else the user's (the audit log's rule: a directory is never made a project);
    /// `None` for a directory that is no project where there is no home directory either.
    pub(crate) fn for_cwd(cwd: &Path) -> Option<Self> {
        let project = crate::load::project(cwd);
        let base = if agent_rules::is_marked_project(&project) {
            project
        } else {
            crate::load::home()?
        };
        Some(Self {
            dir: base.join(agent_hooks::STATE_DIR).join(SESSIONS_DIR),
        })
    }

    /// The records of the project `project` itself, marked or not: `agent-guard agent` makes the project's
    /// `.agent-guard/` (its library, its audit log), which marks it, so that every later [`Self::for_cwd`] of the
    /// project (`session show`, the server's page) finds the records there.
    pub(crate) fn in_project(project: &Path) -> Self {
        Self {
            dir: project.join(agent_hooks::STATE_DIR).join(SESSIONS_DIR),
        }
    }

    /// The record of `session_id` as it is now: empty when there is none or it expired; tainted both ways when
    /// it cannot be read.
    pub(crate) fn load(&self, session_id: &str) -> SessionTaint {
        let path = self.file(session_id);
        if !path.exists() {
            return SessionTaint::default();
        }
        // Shared with other readers, never with a writer, which writes the file in place.
        let _lock = match self.lock(FlockArg::LockShared) {
            Ok(lock) => lock,
            Err(why) => return unreadable(&path, &why),
        };
        match read_record(&path) {
            Ok(taint) => taint.unwrap_or_default(),
            Err(why) => unreadable(&path, &why),
        }
    }

    /// Records what a call decided `decision` adds to `session_id` (nothing for a deny, or a call that adds
    /// nothing): under the directory's lock, merged with the record as it is now.
    pub(crate) fn record(
        &self,
        session_id: &str,
        facts: &TaintFacts,
        decision: Decision,
    ) -> Result<(), String> {
        if facts.is_empty() || decision == Decision::Deny {
            return Ok(());
        }
        agent_hooks::create_dir_all_ignored(&self.dir)
            .map_err(|e| format!("cannot make `{}`: {e}", self.dir.display()))?;
        let _lock = self.lock(FlockArg::LockExclusive)?;
        let path = self.file(session_id);
        let existing = read_record(&path).map_err(|why| format!("`{}`: {why}", path.display()))?;
        let new_session = existing.is_none();
        let mut taint = existing.unwrap_or_default();
        let before = taint.clone();
        taint.record(facts, decision);
        if taint == before && !new_session {
            return Ok(());
        }
        if new_session {
            self.prune();
        }
        write_record(&path, &taint).map_err(|e| format!("cannot write `{}`: {e}", path.display()))
    }

    /// Removes the record of `session_id`, and answers what it held (empty when there was none; a record that
    /// cannot be read is removed too, and answered as what its session counted as: tainted both ways).
    pub(crate) fn clear(&self, session_id: &str) -> Result<SessionTaint, String> {
        if !self.dir.is_dir() {
            return Ok(SessionTaint::default());
        }
        let _lock = self.lock(FlockArg::LockExclusive)?;
        let path = self.file(session_id);
        let held = match read_record(&path) {
            Ok(taint) => taint.unwrap_or_default(),
            Err(why) => unreadable(&path, &why),
        };
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(held),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(SessionTaint::default()),
            Err(e) => Err(format!("cannot remove `{}`: {e}", path.display())),
        }
    }

    /// Where the records are.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `session_id`: the id itself when it is a plain name (the coding agents' ids are UUIDs), else
    /// a hash of it, so that no id names a path elsewhere.
    fn file(&self, session_id: &str) -> PathBuf {
        let plain = !session_id.is_empty()
            && session_id.len() <= 128
            && !session_id.starts_with('.')
            && session_id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        let name = if plain {
            session_id.to_owned()
        } else {
            format!("h-{:016x}", fnv1a(session_id.as_bytes()))
        };
        self.dir.join(format!("{name}.json"))
    }

    /// The directory's lock, shared or exclusive, held until the value is dropped.
    fn lock(&self, kind: FlockArg) -> Result<Flock<std::fs::File>, String> {
        let dir = std::fs::File::open(&self.dir)
            .map_err(|e| format!("cannot open `{}`: {e}", self.dir.display()))?;
        Flock::lock(dir, kind).map_err(|(_, e)| format!("cannot lock `{}`: {e}", self.dir.display()))
    }

    /// Removes expired records, and the oldest past [`MAX_SESSIONS`]; failures leave files behind, never fail.
    fn prune(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let now = SystemTime::now();
        let mut kept: Vec<(SystemTime, PathBuf)> = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(modified) = entry.metadata().ok().and_then(|m| m.modified().ok()) else {
                continue;
            };
            if expired(modified, now) {
                let _ = std::fs::remove_file(&path);
            } else if path.extension().is_some_and(|e| e == "json") {
                kept.push((modified, path));
            }
        }
        if kept.len() >= MAX_SESSIONS {
            kept.sort_unstable();
            for (_, path) in kept.iter().take(kept.len() + 1 - MAX_SESSIONS) {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// The hook's files as the keeper of a session's taint: the runtime of `agent-guard agent` keeps its session's
/// taint here too, so that `session show|clear` and the server's page reach it as they reach a coding agent's.
impl TaintKeeper for TaintStore {
    fn load(&self, session_id: &str) -> SessionTaint {
        TaintStore::load(self, session_id)
    }

    fn record(&self, session_id: &str, facts: &TaintFacts, decision: Decision) -> Result<(), String> {
        TaintStore::record(self, session_id, facts, decision)
    }

    fn clear(&self, session_id: &str) -> Result<SessionTaint, String> {
        TaintStore::clear(self, session_id)
    }

    fn place(&self) -> String {
        self.dir.display().to_string()
    }
}

/// The record at `path`: `None` when there is none or it expired; an error when it cannot be read or parsed.
fn read_record(path: &Path) -> Result<Option<SessionTaint>, String> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let metadata = file.metadata().map_err(|e| e.to_string())?;
    if metadata
        .modified()
        .is_ok_and(|modified| expired(modified, SystemTime::now()))
    {
        return Ok(None);
    }
    if metadata.len() > MAX_RECORD {
        return Err(format!("larger than {} KiB", MAX_RECORD >> 10));
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(file, MAX_RECORD), &mut text)
        .map_err(|e| e.to_string())?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| format!("not a session record: {e}"))
}

/// Writes `taint` to `path` in place, under the directory's exclusive lock (readers hold it shared). Neither a
/// rename over the file nor a truncation to nothing: on ext4 both make the kernel flush the new data before the
/// call returns (`auto_da_alloc`), which cost the hook some milliseconds of waiting per write.
/// Writes the record of a session. A mark names the call that set it (`Bash: curl -H 'Authorization: …'`): its
/// credentials are redacted as the audit log's are, so that the file, inside the project, never holds one.
fn write_record(path: &Path, taint: &SessionTaint) -> std::io::Result<()> {
    let mut record = serde_json::to_value(taint).map_err(std::io::Error::other)?;
    agent_secrets::redact_json(&mut record);
    let text = serde_json::to_vec(&record).map_err(std::io::Error::other)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    file.write_all(&text)?;
    file.set_len(u64::try_from(text.len()).unwrap_or(u64::MAX))
}

/// Whether a record last changed at `modified` has expired at `now`.
fn expired(modified: SystemTime, now: SystemTime) -> bool {
    now.duration_since(modified).is_ok_and(|age| age > EXPIRY)
}

/// The taint of a session whose record cannot be read: both ways, so that its ways out ask.
fn unreadable(path: &Path, why: &str) -> SessionTaint {
    let mark = TaintMark::new(
        "the session's record",
        format!(
            "`{}` cannot be read ({why}), so the session counts as tainted",
            path.display()
        ),
    );
    SessionTaint {
        untrusted: Some(mark.clone()),
        private: Some(mark),
        contacted: Vec::new(),
    }
}

/// The 64-bit FNV-1a hash: a stable file name for an id that is not a plain name.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, TaintStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = TaintStore {
            dir: dir.path().join(".agent-guard").join(SESSIONS_DIR),
        };
        (dir, store)
    }

    fn facts(untrusted: bool, domain: &str) -> TaintFacts {
        TaintFacts {
            untrusted: untrusted.then(|| TaintMark::new("WebFetch x", "fetched")),
            private: None,
            contacted: vec![domain.to_owned()],
        }
    }

    #[test]
    fn a_record_is_read_back_merged_and_cleared() {
        let (_dir, store) = store();
        assert_eq!(store.load("s1"), SessionTaint::default());
        store
            .record("s1", &facts(true, "a.example"), Decision::Allow)
            .unwrap();
        store
            .record("s1", &facts(false, "b.example"), Decision::Allow)
            .unwrap();
        store
            .record("s1", &facts(false, "c.example"), Decision::Deny)
            .unwrap();
        let taint = store.load("s1");
        assert!(taint.untrusted.is_some());
        assert_eq!(taint.contacted, ["a.example", "b.example"]);
        assert_eq!(store.load("s2"), SessionTaint::default());
        assert!(store.dir.parent().unwrap().join(".gitignore").is_file());
        let cleared = store.clear("s1").unwrap();
        assert!(cleared.untrusted.is_some());
        assert_eq!(cleared.contacted, ["a.example", "b.example"]);
        assert_eq!(store.load("s1"), SessionTaint::default());
        assert_eq!(store.clear("s1").unwrap(), SessionTaint::default());
    }

    #[test]
    fn an_id_that_is_no_plain_name_is_hashed() {
        let (_dir, store) = store();
        for id in ["../../etc/passwd", "a/b", ".hidden", "", &"x".repeat(200)] {
            let file = store.file(id);
            assert_eq!(file.parent(), Some(store.dir.as_path()), "{id}");
            assert!(
                file.file_name().unwrap().to_string_lossy().starts_with("h-"),
                "{id}"
            );
        }
        assert!(store.file("0b9e-4c1f_x").ends_with("0b9e-4c1f_x.json"));
    }

    #[test]
    fn a_record_that_cannot_be_read_fails_closed() {
        let (_dir, store) = store();
        std::fs::create_dir_all(&store.dir).unwrap();
        std::fs::write(store.file("s"), "{not json").unwrap();
        let taint = store.load("s");
        assert!(taint.is_trifecta());
        assert!(taint.untrusted.unwrap().why.contains("cannot be read"));
        // Writing over it fails too, and says where.
        let err = store
            .record("s", &facts(true, "a.example"), Decision::Allow)
            .unwrap_err();
        assert!(err.contains("s.json"), "{err}");
    }
}
