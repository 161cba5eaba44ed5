//! The one way a run is recorded, by `agent-guard sandbox` and by the runtime's `run_bash` alike: a snapshot of
//! each root before the command, one after it, and the run kept when it changed something.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::error::UndoError;
use crate::settings::UndoSettings;
use crate::store::{Origin, RunId, Store, StoreLock};
use crate::walk::Rules;
use crate::watch::incremental::Question;

/// The roots of `sandbox` a `workspace-write` command may write, without those inside another (the working
/// directory below its project is snapshotted with the project): the roots a [`Recording`] takes.
pub fn writable_roots(sandbox: &agent_fs_sandbox::PathSandbox) -> Vec<PathBuf> {
    let writable: Vec<&Path> = sandbox
        .roots()
        .iter()
        .filter(|root| !root.read_only())
        .map(agent_fs_sandbox::Root::path)
        .collect();
    let mut roots: Vec<PathBuf> = writable
        .iter()
        .filter(|root| {
            !writable
                .iter()
                .any(|other| other != *root && root.starts_with(other))
        })
        .map(|root| root.to_path_buf())
        .collect();
    roots.dedup();
    roots
}

/// The snapshots taken before a command, waiting for the one after it.
#[derive(Debug)]
pub struct Recording {
    pending: Vec<Pending>,
    /// The stores [`Recording::open`] opened, each with its root, waiting for [`Recording::snapshot`].
    opened: Vec<(PathBuf, Result<Store, UndoError>)>,
    /// The settings of the snapshots still to take.
    settings: Option<UndoSettings>,
    command: String,
    origin: Origin,
    started: SystemTime,
    notes: Vec<String>,
    /// The files the snapshots before the command recorded by their stat data alone that they found new or
    /// changed (absolute paths).
    unkept: Vec<PathBuf>,
}

/// One root's store, its tree before the command and the ignore rules that tree followed (the snapshot after
/// the command follows the same, whatever the command wrote).
#[derive(Debug)]
struct Pending {
    store: Store,
    before: String,
    rules: Rules,
    /// The lock taken and the question sent for the snapshot after the command ([`Recording::ask_after`]).
    asked: Option<(StoreLock, Option<Question>)>,
}

/// A run that changed a root and was recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The root.
    pub root: PathBuf,
    /// The run's number in the root's store (`agent-guard undo --id`).
    pub id: RunId,
    /// How many files it added, changed or deleted.
    pub changed: usize,
}

/// What [`Recording::finish`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Finished {
    /// The runs recorded (none for a command that changed nothing).
    pub runs: Vec<Recorded>,
    /// What the user should know: a snapshot that failed, with why.
    pub notes: Vec<String>,
}

impl Recording {
    /// Snapshots each of `roots` before `command` runs. Never fails: a root without a snapshot is said in
    /// [`Recording::notes`] (a missing `git` once per store directory, snapshots switched off not at all), and
    /// the command runs all the same. The same as [`Recording::open`] then [`Recording::snapshot`].
    pub fn begin(roots: &[PathBuf], command: &str, settings: &UndoSettings) -> Self {
        let mut recording = Self::open(roots, command, settings);
        recording.snapshot();
        recording
    }

    /// Opens the store of each of `roots` for a recording of `command`, making the ones that do not exist yet,
    /// without taking a snapshot: so that a sandbox's plan, which hides every store from the command, can be
    /// built before the snapshot is taken ([`Recording::snapshot`], which must be complete before the command
    /// starts). Never fails, as [`Recording::begin`].
    pub fn open(roots: &[PathBuf], command: &str, settings: &UndoSettings) -> Self {
        let mut recording = Self {
            pending: Vec::new(),
            opened: Vec::new(),
            settings: None,
            command: command.to_owned(),
            origin: Origin::default(),
            started: SystemTime::now(),
            notes: Vec::new(),
            unkept: Vec::new(),
        };
        if !settings.enabled {
            return recording;
        }
        recording.opened = roots
            .iter()
            .map(|root| (root.clone(), Store::open(root, settings)))
            .collect();
        recording.settings = Some(settings.clone());
        recording
    }

    /// Takes the snapshot before the command of each store [`Recording::open`] opened (once; a second call does
    /// nothing). The command must not start before it has returned.
    pub fn snapshot(&mut self) {
        let Some(settings) = self.settings.take() else {
            return;
        };
        for (root, opened) in std::mem::take(&mut self.opened) {
            let mut unkept = Vec::new();
            let before = opened.and_then(|store| {
                let lock = store.lock()?;
                let mut rules = store.rules();
                let before = store.snapshot(&lock, &mut rules)?;
                unkept = store.unhashed();
                drop(lock);
                Ok(Pending {
                    store,
                    before,
                    rules,
                    asked: None,
                })
            });
            self.unkept.append(&mut unkept);
            match before {
                Ok(pending) => {
                    self.notes.extend(left_out(&pending.store, "before the command"));
                    self.pending.push(pending);
                }
                Err(UndoError::Off(_)) => {}
                Err(UndoError::NoGit) => {
                    if first_time(&settings, "no-git") {
                        self.notes.push(format!(
                            "{}; `agent-guard undo` cannot take runs back",
                            UndoError::NoGit
                        ));
                    }
                }
                Err(error) => self.notes.push(no_snapshot(&root, &error)),
            }
        }
    }

    /// The files whose content the snapshots before the command did not keep (past the bounds of what one
    /// snapshot hashes) and that they found new or changed (absolute paths): a decision that counted on `agent-guard
    /// undo` taking back what the command removes could not know of them, and what it removes of them is lost.
    pub fn unkept(&self) -> &[PathBuf] {
        &self.unkept
    }

    /// Why a command whose allow counted on `agent-guard undo` must not run: a file of [`Recording::unkept`],
    /// named; `None` when the snapshots before it kept everything the decision could not know of.
    pub fn refusal(&self) -> Option<String> {
        let file = self.unkept.first()?;
        Some(format!(
            "the snapshot before the command could not keep the content of `{}` (new since the last snapshot, and \
             past what one snapshot hashes), and the command was allowed because `agent-guard undo` takes back what \
             it removes or overwrites: nothing was run; the next decision knows of the file",
            file.display()
        ))
    }

    /// Names the ask of `agent-guard serve` a person answered to let the command run: the runs it records carry
    /// it ([`crate::RunRecord::approval`]), and the server shows their ids beside the ask.
    #[must_use]
    pub fn approved_by_ask(mut self, ask: &str) -> Self {
        self.origin.approval = Some(ask.to_owned());
        self
    }

    /// Names the tool call the command runs for (its key in the audit log): the runs it records carry it
    /// ([`crate::RunRecord::call`]), and `agent-guard audit` shows them beside the call.
    #[must_use]
    pub fn for_call(mut self, call: &str) -> Self {
        self.origin.call = Some(call.to_owned());
        self
    }

    /// What went wrong while taking the snapshots before the command.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Once the command has ended (every process of it), takes each store's lock and sends the question of the
    /// snapshot after it to the store's watcher, so that the watcher takes the events meanwhile while the caller
    /// cleans up; [`Recording::finish`] reads the answers. Files the caller then changes in the roots (a protected
    /// path the command made, removed) are looked at as they are when the answer is read.
    pub fn ask_after(&mut self) {
        for pending in &mut self.pending {
            if pending.asked.is_none()
                && let Ok(lock) = pending.store.lock()
            {
                let question = pending.store.ask(&lock);
                pending.asked = Some((lock, question));
            }
        }
    }

    /// Snapshots the roots after the command and records each run that changed something.
    pub fn finish(self) -> Finished {
        let mut finished = Finished {
            runs: Vec::new(),
            notes: self.notes,
        };
        for pending in self.pending {
            let store = &pending.store;
            let locked = match pending.asked {
                Some((lock, question)) => Ok((lock, question)),
                None => store.lock().map(|lock| (lock, None)),
            };
            let recorded = locked.and_then(|(lock, question)| {
                let after = store.snapshot_asked(&lock, &mut pending.rules.frozen(), question);
                finished.notes.extend(left_out(store, "after the command"));
                let after = after?;
                if after == pending.before {
                    return Ok(None);
                }
                let id = store.record(
                    &lock,
                    &self.command,
                    &self.origin,
                    self.started,
                    &pending.before,
                    &after,
                )?;
                let changed = store
                    .git
                    .run(&[
                        "diff-tree",
                        "-r",
                        "-z",
                        "--name-only",
                        pending.before.as_str(),
                        after.as_str(),
                    ])?
                    .split(|b| *b == 0)
                    .filter(|name| !name.is_empty())
                    .count();
                Ok(Some(Recorded {
                    root: store.root().to_path_buf(),
                    id,
                    changed,
                }))
            });
            match recorded {
                Ok(Some(run)) => finished.runs.push(run),
                Ok(None) => {}
                Err(error) => finished.notes.push(no_snapshot(store.root(), &error)),
            }
        }
        finished
    }
}

/// What the latest snapshot of `store` (taken `when`) left out of what the last one held because it cannot be read
/// now: recorded as deleted, so that taking the run back puts back what the file held.
fn left_out(store: &Store, when: &str) -> Option<String> {
    let left_out = store.left_out();
    let first = left_out.first()?;
    let more = match left_out.len() {
        1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    Some(format!(
        "the snapshot of `{}` {when} leaves out `{}`{more}, which it held before: it cannot be read now (as if \
         deleted: taking the run back puts back what it held)",
        store.root().display(),
        first.display()
    ))
}

fn no_snapshot(root: &Path, error: &UndoError) -> String {
    format!("no snapshot of `{}`: {error}", root.display())
}

/// Whether `what` is said for the first time in the store directory of `settings` (a marker file remembers it).
fn first_time(settings: &UndoSettings, what: &str) -> bool {
    let Some(dir) = &settings.dir else {
        return true;
    };
    let marker = dir.join(format!("said-{what}"));
    if marker.exists() {
        return false;
    }
    let _made = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&marker, b""));
    true
}
