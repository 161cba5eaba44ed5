//! The hook's audit log: one row per decision of `check` and per answer of `approve`, written after the answer is
//! out, in the project's `.agent-guard/audit.db` (or where `AGENT_GUARD_AUDIT` says; `off` writes none).
//!
//! Design: the coding agent waits for the hook process to end, so the row must cost next to nothing. The answer
//! is printed and stdout closed first; then the row of a SQLite database is appended to the database's spool
//! (agent-hooks' [`agent_hooks::spool`]: one line, no connection), which whoever opens the database next moves
//! in, readers included. A database given by URL, and the spool of a writer that makes it pass its bound, are
//! written through one connection in one small transaction, bounded by the hook run's timer ([`WRITE_LIMIT`]):
//! past it, or on any failure, one line on stderr says the row is missing, and the exit code stays 0 so that
//! the decision stands. Concurrent hook processes wait for each other's writes within [`BUSY_TIMEOUT`].

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::mpsc::SyncSender;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use agent_decide::{HookInput, HookOutput};
use agent_hooks::{AuditAppender, AuditConfig, AuditDatabase, AuditDetail, AuditRow, AuditStatus, STATE_DIR};
use serde_json::Value;

use crate::hook_timer::HookTimer;

/// The environment variable that turns the hook's audit log off (`off`) or points it at another database (a
/// SQLite path, relative ones to the project root, a `sqlite:` URL or a `postgres://` URL).
pub(crate) const AUDIT_ENV: &str = "AGENT_GUARD_AUDIT";

/// The name of the audit database in a project's `.agent-guard/`.
const DATABASE_FILE: &str = "audit.db";

/// The `agent_name` of `check`'s rows: the coding agent does not say which of its agents made a call.
pub(crate) const CHECK_AGENT: &str = "hook";

/// The `agent_name` of `approve`'s rows: the answer to a call `check` asked about, whose own row is the one
/// `agent-guard diff` replays.
pub(crate) const APPROVE_AGENT: &str = "approve";

/// How long the one-shot hook may spend on its row after the answer: opening (creating and migrating a new
/// database), waiting for other writers and writing.
const WRITE_LIMIT: Duration = Duration::from_secs(3);

/// How long a write waits for other processes' writes; below [`WRITE_LIMIT`], so that a locked database is
/// reported as such rather than as a timeout.
const BUSY_TIMEOUT: Duration = Duration::from_secs(2);

/// Where the hook's rows go, as `AGENT_GUARD_AUDIT` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AuditSetting {
    /// Unset or empty: the `.agent-guard/audit.db` of the call's project.
    Project,
    /// `off`: no rows.
    Off,
    /// A database of the user's choice.
    Database(AuditDatabase),
}

impl AuditSetting {
    /// The setting of this process; an unusable value is an error naming it.
    pub(crate) fn from_env() -> Result<Self, String> {
        Self::parse(std::env::var(AUDIT_ENV).ok().as_deref())
    }

    fn parse(value: Option<&str>) -> Result<Self, String> {
        match value.map(str::trim) {
            None | Some("") => Ok(Self::Project),
            Some(off) if off.eq_ignore_ascii_case("off") => Ok(Self::Off),
            Some(other) => AuditDatabase::parse(other)
                .map(Self::Database)
                .map_err(|e| format!("`{AUDIT_ENV}`: {e}")),
        }
    }

    /// [`database`](Self::database) for a hook that writes: the project's own database only where the project
    /// directory exists (a call made in a directory that is not there creates no directories), else why not.
    fn database_to_write(&self, project: &Path) -> Result<Option<AuditDatabase>, String> {
        if *self == Self::Project && !project.is_dir() {
            return Err(format!(
                "the project directory `{}` does not exist",
                project.display()
            ));
        }
        match self.database(project) {
            Some(AuditDatabase::SqliteFile(path)) if path.is_relative() => Err(format!(
                "no home directory for the audit log of `{}`, which is no project (no .git, .claude or \
                 .agent-guard)",
                project.display()
            )),
            db => Ok(db),
        }
    }

    /// The database of a call whose project is `project`; `None` when the log is off. A relative SQLite path is
    /// taken from the project root, where the coding agent's session is.
    pub(crate) fn database(&self, project: &Path) -> Option<AuditDatabase> {
        match self {
            Self::Project => Some(project_database(project)),
            Self::Off => None,
            Self::Database(AuditDatabase::SqliteFile(path)) => {
                Some(AuditDatabase::SqliteFile(project.join(path)))
            }
            Self::Database(other) => Some(other.clone()),
        }
    }
}

/// The audit database of a project: `<project>/.agent-guard/audit.db` when the project is marked (`.git`,
/// `.claude` or `.agent-guard`), else the user's `~/.agent-guard/audit.db`. A directory that is no project is not
/// made one: an `.agent-guard` created there would be a marker, and would make it the project root of every
/// directory below it, widening their roots. (Without a home directory, the relative path `.agent-guard/audit.db`,
/// which a writer refuses.)
pub(crate) fn project_database(project: &Path) -> AuditDatabase {
    let base = if agent_rules::is_marked_project(project) {
        project.to_owned()
    } else {
        crate::load::home().unwrap_or_default()
    };
    AuditDatabase::SqliteFile(base.join(STATE_DIR).join(DATABASE_FILE))
}

/// What one answer of a hook records besides its input.
#[derive(Debug, Clone)]
pub(crate) struct Answer<'a> {
    /// `allow`, `ask` or `deny`, as printed.
    pub(crate) decision: &'a str,
    /// The reason, as printed.
    pub(crate) reason: &'a str,
    /// Who or what decided: the layer and step (`rules/allow-rule`, `approval/approver`).
    pub(crate) decided_by: &'a str,
    /// The permission mode the call was decided in (`--mode`, else the input's), when known.
    pub(crate) mode: Option<&'a str>,
    /// How long the answer took.
    pub(crate) elapsed: Duration,
    /// The rule and its file, the sandbox, who answered.
    pub(crate) detail: &'a AuditDetail,
    /// Whether the call runs under the `workspace-write` sandbox, whose runs carry the call's key.
    pub(crate) recorded: bool,
}

impl Answer<'_> {
    /// The row of `input` answered so. Its input is kept (up to agent-hooks' [`INPUT_MAX_BYTES`]) with the
    /// working directory and mode, so that `agent-guard diff --audit-db` can decide the call again; the log
    /// stores it with its credentials redacted ([`AuditRow::redacted`]).
    ///
    /// [`INPUT_MAX_BYTES`]: agent_hooks::INPUT_MAX_BYTES
    pub(crate) fn row(&self, input: &Call<'_>, agent: &str) -> AuditRow {
        let tool_input = serde_json::to_string(input.tool_input)
            .ok()
            .filter(|text| text.len() <= agent_hooks::INPUT_MAX_BYTES);
        let kept = tool_input.is_some();
        AuditRow {
            id: None,
            session_id: input.session_id.to_owned(),
            step: 0,
            tool_name: input.tool_name.to_owned(),
            status: if self.decision == "deny" {
                AuditStatus::Denied
            } else {
                AuditStatus::Ok
            },
            decision: Some(self.decision.to_owned()),
            decided_by: Some(self.decided_by.to_owned()),
            elapsed_ms: u64::try_from(self.elapsed.as_millis()).unwrap_or(u64::MAX),
            output_preview: agent_hooks::preview(self.reason.trim_start_matches("agent-guard: ")),
            agent_name: agent.to_owned(),
            ts: agent_hooks::rfc3339(SystemTime::now()),
            tool_input,
            cwd: kept.then(|| input.cwd.to_owned()),
            permission_mode: self.mode.filter(|_| kept).map(str::to_owned),
            detail: AuditDetail {
                call: input.tool_use_id.filter(|_| self.recorded).map(str::to_owned),
                ..self.detail.clone()
            },
        }
    }
}

/// The call an answer was for, as the hook input names it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call<'a> {
    pub(crate) session_id: &'a str,
    pub(crate) cwd: &'a str,
    pub(crate) tool_name: &'a str,
    pub(crate) tool_input: &'a Value,
    /// The call's key (the coding agent's tool call id, or one made for it).
    pub(crate) tool_use_id: Option<&'a str>,
}

impl<'a> From<&'a HookInput> for Call<'a> {
    fn from(input: &'a HookInput) -> Self {
        Self {
            session_id: &input.session_id,
            cwd: &input.cwd,
            tool_name: &input.tool_name,
            tool_input: &input.tool_input,
            tool_use_id: input.tool_use_id.as_deref(),
        }
    }
}

/// The decision and reason of a hook output.
pub(crate) fn printed(output: &HookOutput) -> (&str, &str) {
    (output.decision(), output.reason())
}

/// Writes `row`, the row of the one answer a hook process gave for `call`, after it was printed: bounded by
/// `timer` (past [`WRITE_LIMIT`], one line on stderr and exit code 0), failures reported on stderr. Never changes
/// the answer.
pub(crate) fn record_one(call: Call<'_>, row: &AuditRow, timer: &mut HookTimer) {
    let setting = match AuditSetting::from_env() {
        Ok(setting) => setting,
        Err(why) => return report(&why),
    };
    let db = match setting.database_to_write(&crate::load::project(Path::new(call.cwd))) {
        Ok(Some(db)) => db,
        Ok(None) => return,
        Err(why) => return report(&why),
    };
    // A SQLite file's row goes to its spool: a line appended, no connection. The writer that makes the spool
    // pass its bound moves it into the database, once in a few thousand calls.
    match agent_hooks::spool(&db, row) {
        Ok(Some(size)) if size < agent_hooks::SPOOL_MOVE_BYTES => return,
        Ok(Some(_)) => return write_rows(&db, &[], timer),
        Ok(None) => {}
        Err(why) => return report(&why.to_string()),
    }
    write_rows(&db, std::slice::from_ref(row), timer);
}

/// Opens `db` (which moves its spooled rows in) and appends `rows` in one transaction, bounded by `timer`.
fn write_rows(db: &AuditDatabase, rows: &[AuditRow], timer: &mut HookTimer) {
    timer.warn_after(
        WRITE_LIMIT,
        &format!(
            "the audit row was not written to `{db}` within {} ms; the decision stands",
            WRITE_LIMIT.as_millis()
        ),
    );
    let written = runtime().and_then(|runtime| {
        runtime.block_on(async {
            let mut log = AuditAppender::open(db, &config())
                .await
                .map_err(|e| e.to_string())?;
            let appended = log.append(rows).await;
            // The process ends next: closing would checkpoint the WAL (fsyncs) for nothing.
            log.leave_to_exit().await;
            appended.map_err(|e| e.to_string())
        })
    });
    if let Err(why) = written {
        report(&why);
    }
}

/// The rows of a `--jsonl` run, handed over after each batch's answers are flushed to a thread of their own, which
/// writes them through one connection per database held for the run: the next batch is decided while the rows of
/// the last one are written.
pub(crate) struct BatchLog {
    setting: Result<AuditSetting, String>,
    /// What was reported on stderr, so that a stream of lines repeats no message.
    reported: HashSet<String>,
    /// The database of each working directory met so far, or why it has none: found once per run, as the guard of
    /// that directory is, instead of looking for its project again for every line.
    databases: HashMap<String, Result<Option<AuditDatabase>, String>>,
    rows: Rows,
    /// The writing thread, started with the first rows.
    writer: Option<(SyncSender<Rows>, JoinHandle<()>)>,
}

/// Rows to write, each with its database.
type Rows = Vec<(AuditDatabase, AuditRow)>;

/// How many batches of rows may wait for the writing thread before handing over more waits for it: the rows of a
/// run that decides faster than its log takes them are held in memory only this far.
const ROWS_WAITING: usize = 4;

impl BatchLog {
    pub(crate) fn new() -> Self {
        Self {
            setting: AuditSetting::from_env(),
            reported: HashSet::new(),
            databases: HashMap::new(),
            rows: Vec::new(),
            writer: None,
        }
    }

    /// Whether [`add`](Self::add) keeps rows: not when the log is off (or its setting unusable, which
    /// [`write`](Self::write) reports), so that a run without a log builds no rows.
    pub(crate) fn keeps_rows(&self) -> bool {
        matches!(&self.setting, Ok(setting) if *setting != AuditSetting::Off)
    }

    /// Keeps `row`, the row of one answered line for `call`, until [`write`](Self::write).
    pub(crate) fn add(&mut self, call: Call<'_>, row: AuditRow) {
        let Ok(setting) = &self.setting else { return };
        if *setting == AuditSetting::Off {
            return;
        }
        let database = self
            .databases
            .entry(call.cwd.to_owned())
            .or_insert_with(|| setting.database_to_write(&crate::load::project(Path::new(call.cwd))));
        match database {
            Ok(Some(db)) => self.rows.push((db.clone(), row)),
            Ok(None) => {}
            Err(why) => {
                let why = why.clone();
                report_once(&mut self.reported, why);
            }
        }
    }

    /// Hands the rows kept since the last call to the writing thread, which writes them one transaction per
    /// database; failures on stderr.
    pub(crate) fn write(&mut self) {
        if let Err(why) = &self.setting {
            let why = why.clone();
            report_once(&mut self.reported, why);
            return;
        }
        if self.rows.is_empty() {
            return;
        }
        let rows = std::mem::take(&mut self.rows);
        if self.writer.is_none() {
            let (sender, receiver) = std::sync::mpsc::sync_channel(ROWS_WAITING);
            let thread = std::thread::Builder::new()
                .name("audit".to_owned())
                .spawn(move || {
                    let mut writer = Writer::default();
                    for rows in receiver {
                        writer.write(rows);
                    }
                    writer.finish();
                });
            match thread {
                Ok(thread) => self.writer = Some((sender, thread)),
                // Without a thread, the rows are written here.
                Err(_) => {
                    let mut writer = Writer::default();
                    writer.write(rows);
                    writer.finish();
                    return;
                }
            }
        }
        if let Some((sender, _)) = &self.writer
            && sender.send(rows).is_err()
        {
            report_once(
                &mut self.reported,
                "the thread that writes the audit log stopped".to_owned(),
            );
        }
    }

    /// Ends the log at the end of the run: waits for the writing thread to write every row handed over; the
    /// connections are left to the exit ([`AuditAppender::leave_to_exit`]), since the process ends next.
    pub(crate) fn finish(mut self) {
        if let Some((sender, thread)) = self.writer.take() {
            drop(sender);
            if thread.join().is_err() {
                report("the thread that writes the audit log stopped");
            }
        }
    }
}

/// The writing side of a [`BatchLog`]: a runtime and one connection per database, on the thread that writes.
#[derive(Default)]
struct Writer {
    runtime: Option<tokio::runtime::Runtime>,
    open: HashMap<String, AuditAppender>,
    /// Databases that could not be opened: reported once, not tried again for every batch.
    failed: HashSet<String>,
    reported: HashSet<String>,
}

impl Writer {
    /// Writes `rows`, one transaction per database; failures on stderr.
    fn write(&mut self, rows: Rows) {
        let mut by_db: Vec<(AuditDatabase, Vec<AuditRow>)> = Vec::new();
        for (db, row) in rows {
            match by_db.iter_mut().find(|(known, _)| *known == db) {
                Some((_, rows)) => rows.push(row),
                None => by_db.push((db, vec![row])),
            }
        }
        if self.runtime.is_none() {
            match runtime() {
                Ok(runtime) => self.runtime = Some(runtime),
                Err(why) => return report_once(&mut self.reported, why),
            }
        }
        let Some(runtime) = &self.runtime else { return };
        let mut failures = Vec::new();
        for (db, rows) in by_db {
            let key = db.to_string();
            if self.failed.contains(&key) {
                continue;
            }
            let written = runtime.block_on(async {
                if !self.open.contains_key(&key) {
                    let log = AuditAppender::open(&db, &config())
                        .await
                        .map_err(|e| e.to_string())?;
                    self.open.insert(key.clone(), log);
                }
                match self.open.get_mut(&key) {
                    Some(log) => log.append(&rows).await.map_err(|e| e.to_string()),
                    None => Ok(()),
                }
            });
            if let Err(why) = written {
                if !self.open.contains_key(&key) {
                    self.failed.insert(key);
                }
                failures.push(why);
            }
        }
        for why in failures {
            report_once(&mut self.reported, why);
        }
    }

    /// Leaves every connection to the process's exit: each row written is committed already.
    fn finish(mut self) {
        let Some(runtime) = self.runtime.take() else {
            return;
        };
        runtime.block_on(async {
            for (_, log) in self.open.drain() {
                log.leave_to_exit().await;
            }
        });
    }
}

/// Reports `why` on stderr unless `reported` holds it already.
fn report_once(reported: &mut HashSet<String>, why: String) {
    if !reported.contains(&why) {
        report(&why);
        reported.insert(why);
    }
}

fn config() -> AuditConfig {
    AuditConfig {
        busy_timeout: BUSY_TIMEOUT,
        connect_timeout: WRITE_LIMIT,
        ..AuditConfig::default()
    }
}

/// A runtime on this thread: the row is the last thing the hook does, so nothing needs a second thread.
fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime of the audit log: {e}"))
}

fn report(why: &str) {
    eprintln!(
        "agent-guard: no audit row: {}; the decision stands",
        crate::one_line(why)
    );
}

/// The default database of the commands that read the log (`audit`): the one `AGENT_GUARD_AUDIT` names, else
/// the `.agent-guard/audit.db` of the project the current directory belongs to.
pub(crate) fn reading_default() -> anyhow::Result<AuditDatabase> {
    let project = crate::load::project(&std::env::current_dir()?);
    let setting = AuditSetting::from_env().map_err(anyhow::Error::msg)?;
    Ok(setting
        .database(&project)
        .unwrap_or_else(|| project_database(&project)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_reads_off_a_path_or_a_url() {
        assert_eq!(AuditSetting::parse(None).unwrap(), AuditSetting::Project);
        assert_eq!(AuditSetting::parse(Some(" ")).unwrap(), AuditSetting::Project);
        assert_eq!(AuditSetting::parse(Some("OFF")).unwrap(), AuditSetting::Off);
        let project = Path::new("/work/proj");
        assert_eq!(AuditSetting::Off.database(project), None);
        let marked = tempfile::tempdir().unwrap();
        std::fs::create_dir(marked.path().join(".git")).unwrap();
        assert_eq!(
            AuditSetting::Project.database(marked.path()),
            Some(AuditDatabase::SqliteFile(
                marked.path().join(".agent-guard/audit.db")
            ))
        );
        let relative = AuditSetting::parse(Some("logs/a.db")).unwrap();
        assert_eq!(
            relative.database(project),
            Some(AuditDatabase::SqliteFile("/work/proj/logs/a.db".into()))
        );
        let absolute = AuditSetting::parse(Some("/var/log/a.db")).unwrap();
        assert_eq!(
            absolute.database(project),
            Some(AuditDatabase::SqliteFile("/var/log/a.db".into()))
        );
        let url = AuditSetting::parse(Some("postgres://u:pw@h/db")).unwrap();
        assert!(url.database(project).unwrap().is_postgres());
        let bad = AuditSetting::parse(Some("mysql://u:pw@h/db")).unwrap_err();
        assert!(
            bad.contains(AUDIT_ENV) && bad.contains("mysql://u:***@h/db"),
            "{bad}"
        );
    }

    #[test]
    fn a_row_keeps_the_call_for_a_replay() {
        let input = serde_json::json!({"command": "git status"});
        let call = Call {
            session_id: "s1",
            cwd: "/work/proj/src",
            tool_name: "Bash",
            tool_input: &input,
            tool_use_id: Some("toolu_01"),
        };
        let detail = AuditDetail::default();
        let answer = Answer {
            decision: "deny",
            reason: "agent-guard: denied by rule",
            decided_by: "rules/deny-rule",
            mode: Some("acceptEdits"),
            elapsed: Duration::from_millis(3),
            detail: &detail,
            recorded: false,
        };
        let row = answer.row(&call, CHECK_AGENT);
        // Only a call run under the `workspace-write` sandbox keeps its key: nothing else records runs for it.
        assert_eq!(row.detail.call, None);
        let recorded = Answer {
            decision: "allow",
            recorded: true,
            ..answer.clone()
        };
        assert_eq!(
            recorded.row(&call, CHECK_AGENT).detail.call.as_deref(),
            Some("toolu_01")
        );
        assert_eq!(row.status, AuditStatus::Denied);
        assert_eq!(row.output_preview, "denied by rule");
        assert_eq!(row.tool_input.as_deref(), Some(r#"{"command":"git status"}"#));
        assert_eq!(row.cwd.as_deref(), Some("/work/proj/src"));
        assert_eq!(row.permission_mode.as_deref(), Some("acceptEdits"));
        assert_eq!((row.agent_name.as_str(), row.elapsed_ms), ("hook", 3));

        let huge = serde_json::json!({"file_path": "a", "content": "x".repeat(agent_hooks::INPUT_MAX_BYTES)});
        let row = answer.row(
            &Call {
                tool_input: &huge,
                ..call
            },
            CHECK_AGENT,
        );
        assert_eq!((row.tool_input, row.cwd, row.permission_mode), (None, None, None));
    }
}
