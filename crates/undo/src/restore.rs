//! Taking runs back: what each run changed, the plan that undoes a run and every later one (in reverse order,
//! checked against what is on disk now), and carrying it out beneath the root.

use std::collections::{BTreeSet, HashMap};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::path::{Path, PathBuf};

use crate::beneath::Beneath;
use crate::error::{Result, UndoError};
use crate::store::{RunId, RunRecord, Store};

/// A file's state in a snapshot: its git mode (`100644`, `100755`, `120000` for a link) and its object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The mode, as git writes it (octal).
    pub mode: u32,
    /// The object id of the content (a link's content is its target).
    pub oid: String,
}

/// How a run changed one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// The run created it.
    Added,
    /// The run changed its content, mode or type.
    Modified,
    /// The run deleted it.
    Deleted,
}

/// One path a run changed, relative to the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The path, relative to the root.
    pub path: PathBuf,
    /// What the run did to it.
    pub kind: ChangeKind,
}

/// A path whose state now is not the one a run left, or that may not be written: taking the run back would
/// lose what happened since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The run.
    pub run: RunId,
    /// The path, relative to the root.
    pub path: PathBuf,
    /// What happened since, in words.
    pub why: String,
}

/// One path that differs between two trees, with its entry in each.
struct PathChange {
    path: PathBuf,
    before: Option<Entry>,
    after: Option<Entry>,
}

/// What taking back does to one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The path, relative to the root.
    pub path: PathBuf,
    /// Its state now (`None`: absent).
    pub now: Option<Entry>,
    /// Its state once taken back (`None`: removed).
    pub then: Option<Entry>,
}

/// What to take back, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UndoRequest {
    /// The first run to take back, with every later one; `None`: the last run not taken back yet.
    pub from: Option<RunId>,
    /// Take the runs back even over changes made since (the state now is kept in the store first).
    pub force: bool,
    /// Only report what would be done.
    pub dry_run: bool,
}

/// What taking back did, or would do.
#[derive(Debug, Clone, Default)]
pub struct UndoReport {
    /// The runs taken back, last first.
    pub runs: Vec<RunId>,
    /// The paths written or removed (or to be).
    pub steps: Vec<Step>,
    /// Paths changed since a run by something else; with any of them and no `force`, nothing is done.
    pub conflicts: Vec<Conflict>,
    /// Paths never written back (protected paths, as the caller judges them), left as they are.
    pub refused: Vec<Conflict>,
    /// Whether the files were changed.
    pub applied: bool,
    /// The patch from the state now to the state taken back (for a dry run).
    pub diff: String,
    /// With `force` over conflicts: the tree of the state before, kept under `refs/saved/` in the store.
    pub saved: Option<String>,
    /// Where the files the runs made were moved instead of being deleted (in the store; the last few undos' are
    /// kept), when there were any.
    pub set_aside: Option<PathBuf>,
}

/// How many undos' files set aside the store keeps: older ones are deleted by the next undo.
pub const SET_ASIDE_KEPT: usize = 3;

impl Store {
    /// The paths `run` changed, in path order.
    ///
    /// # Errors
    /// When the store cannot be read.
    pub fn changes(&self, run: &RunRecord) -> Result<Vec<Change>> {
        Ok(self
            .diff(&run.before, &run.after)?
            .into_iter()
            .map(|change| Change {
                path: change.path,
                kind: match (change.before, change.after) {
                    (None, _) => ChangeKind::Added,
                    (_, None) => ChangeKind::Deleted,
                    _ => ChangeKind::Modified,
                },
            })
            .collect())
    }

    /// Takes back run `request.from` (or the last one) and every later run not taken back yet, last first: each
    /// path a run changed returns to its state before the run, byte for byte, with its mode or as the link it
    /// was. A path whose state now differs from what the run left is a conflict, and then nothing is done
    /// unless `request.force`. `refuse` names why a path must never be written (a protected path); such paths
    /// are left as they are.
    ///
    /// # Errors
    /// [`UndoError::NothingToUndo`], [`UndoError::NoRun`], or the failure of reading the store or writing a file
    /// (a restore that fails half way says which path; the runs then stay as they were recorded).
    pub fn undo(&self, request: UndoRequest, refuse: &dyn Fn(&Path) -> Option<String>) -> Result<UndoReport> {
        let lock = self.lock()?;
        let runs = self.to_take_back(request.from)?;
        let now_tree = self.snapshot(&lock, &mut self.rules())?;
        let now = self.entries(&now_tree)?;
        let mut state = now.clone();
        let mut report = UndoReport {
            runs: runs.iter().map(|run| run.id).collect(),
            ..UndoReport::default()
        };
        // The size and modification time of each file recorded by its stat data alone that the runs changed or
        // removed: a file they made with the same ones is that file moved (`mv big.db old.db`).
        let mut unkept_before: BTreeSet<String> = BTreeSet::new();
        for run in &runs {
            for PathChange { path, before, after } in self.diff(&run.before, &run.after)? {
                if let Some(entry) = before.as_ref().filter(|entry| entry.mode == GITLINK) {
                    unkept_before.insert(size_and_mtime(&entry.oid).to_owned());
                }
                let current = state.get(&path);
                // A file the run left that was recorded by its stat data alone may be hashed by a later snapshot
                // (the bound of one snapshot's hashing allowing it then): unchanged when its stat data are.
                let by_stat = || {
                    after.as_ref().is_some_and(|after| after.mode == GITLINK)
                        && current.is_some()
                        && current == now.get(&path)
                        && nix::sys::stat::lstat(&self.root().join(&path)).is_ok_and(|stat| {
                            after.as_ref().is_some_and(|after| {
                                crate::index::Stat::of_raw(&stat).is_some_and(|stat| stat.id() == after.oid)
                            })
                        })
                };
                if current != after.as_ref() && !by_stat() {
                    report.conflicts.push(Conflict {
                        run: run.id,
                        path: path.clone(),
                        why: match (current, &after) {
                            (None, _) => "deleted since".to_owned(),
                            (Some(_), None) => "created since".to_owned(),
                            (Some(_), Some(_)) => "changed since".to_owned(),
                        },
                    });
                }
                match before {
                    Some(entry) => state.insert(path, entry),
                    None => state.remove(&path),
                };
            }
        }
        // A file or link made since where a directory of the restored files must be is in the way: it goes (with
        // `force`) and is a conflict.
        let in_the_way: BTreeSet<PathBuf> = state
            .keys()
            .flat_map(|path| path.ancestors().skip(1))
            .filter(|dir| state.contains_key(*dir))
            .map(Path::to_path_buf)
            .collect();
        for path in in_the_way {
            state.remove(&path);
            report.conflicts.push(Conflict {
                run: report.runs.last().copied().unwrap_or_default(),
                path,
                why: "created since where a directory of the run's files was".to_owned(),
            });
        }
        let paths: BTreeSet<&PathBuf> = now.keys().chain(state.keys()).collect();
        for path in paths {
            let (was, will) = (now.get(path), state.get(path));
            if was == will {
                continue;
            }
            // A file recorded by its stat data alone (too large to hash) has no content to put back: it is left as
            // it is. So is a nested repository's commit, which older snapshots recorded.
            if will.is_some_and(|entry| entry.mode == GITLINK) {
                report.refused.push(Conflict {
                    run: report.runs.last().copied().unwrap_or_default(),
                    path: path.clone(),
                    why: "its content was not kept (a file larger than undo hashes is recorded by its size and times \
                          alone)"
                        .to_owned(),
                });
                continue;
            }
            // Nor is a file the runs made whose content was not kept and that is one whose content was not kept
            // before either, moved or renamed (`mv big.db old.db`): it is the only copy, which no snapshot can put
            // back under its old name.
            if will.is_none()
                && was.is_some_and(|entry| {
                    entry.mode == GITLINK && unkept_before.contains(size_and_mtime(&entry.oid))
                })
            {
                report.refused.push(Conflict {
                    run: report.runs.last().copied().unwrap_or_default(),
                    path: path.clone(),
                    why: "it is a file the run moved whose content was not kept (larger than undo hashes): it is \
                          left in place, not deleted, as the only copy"
                        .to_owned(),
                });
                continue;
            }
            if let Some(why) = refuse(path) {
                report.refused.push(Conflict {
                    run: report.runs.last().copied().unwrap_or_default(),
                    path: path.clone(),
                    why,
                });
                continue;
            }
            report.steps.push(Step {
                path: path.clone(),
                now: was.cloned(),
                then: will.cloned(),
            });
        }
        if request.dry_run {
            report.diff = self.patch(&report.steps)?;
            return Ok(report);
        }
        if !report.conflicts.is_empty() && !request.force {
            return Ok(report);
        }
        if !report.conflicts.is_empty() {
            let saved = format!(
                "refs/saved/{}",
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos())
            );
            self.git.run(&["update-ref", saved.as_str(), now_tree.as_str()])?;
            report.saved = Some(now_tree.clone());
        }
        report.set_aside = self.apply(&report.steps, &state)?;
        for run in runs {
            self.write_record(&RunRecord { undone: true, ..run })?;
        }
        report.applied = true;
        drop(lock);
        Ok(report)
    }

    /// The runs to take back: `from` and every later one not taken back yet, last first.
    fn to_take_back(&self, from: Option<RunId>) -> Result<Vec<RunRecord>> {
        let runs = self.runs()?;
        let from = match from {
            Some(id) => {
                if !runs.iter().any(|run| run.id == id && !run.undone) {
                    return Err(UndoError::NoRun(id));
                }
                id
            }
            None => runs
                .iter()
                .rev()
                .find(|run| !run.undone)
                .map(|run| run.id)
                .ok_or_else(|| UndoError::NothingToUndo(self.root().to_path_buf()))?,
        };
        Ok(runs
            .into_iter()
            .rev()
            .filter(|run| run.id >= from && !run.undone)
            .collect())
    }

    /// Carries out `steps`: removals first (deepest first, then the directories they emptied that the final
    /// state does not need), then the files and links written back (shallowest first). A file or link the runs
    /// made is not deleted but moved into the store's `set-aside/` (what the runs made may be the only copy of
    /// something: a file moved out of a place no snapshot holds, renamed and changed); where the store lies on
    /// another file system, one whose content the store holds is deleted and one it does not is left. Returns the
    /// directory the files went to, when any did.
    fn apply(&self, steps: &[Step], final_state: &HashMap<PathBuf, Entry>) -> Result<Option<PathBuf>> {
        let beneath = Beneath::open(self.root()).map_err(|e| UndoError::io(self.root(), e))?;
        let needed: BTreeSet<&Path> = final_state
            .keys()
            .flat_map(|path| path.ancestors().skip(1))
            .collect();
        let mut removals: Vec<&Step> = steps.iter().filter(|s| s.now.is_some()).collect();
        removals.sort_by_key(|s| std::cmp::Reverse(s.path.components().count()));
        let mut emptied = BTreeSet::new();
        let aside = self.dir().join("set-aside").join(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
                .to_string(),
        );
        let mut moved = false;
        for step in &removals {
            if step.then.is_none() {
                let target = aside.join(&step.path);
                match beneath.move_out(&step.path, &target) {
                    Ok(()) => moved = true,
                    Err(e) if e.raw_os_error() == Some(nix::libc::EXDEV) => {
                        if step.now.as_ref().is_some_and(|now| now.mode == GITLINK) {
                            continue;
                        }
                        beneath
                            .remove_file(&step.path)
                            .map_err(|e| UndoError::io(self.root().join(&step.path), e))?;
                    }
                    Err(e) => return Err(UndoError::io(self.root().join(&step.path), e)),
                }
                emptied.extend(
                    step.path
                        .ancestors()
                        .skip(1)
                        .filter(|dir| !dir.as_os_str().is_empty()),
                );
            } else if step.now.as_ref().map(|e| e.mode) != step.then.as_ref().map(|e| e.mode) {
                beneath
                    .remove_file(&step.path)
                    .map_err(|e| UndoError::io(self.root().join(&step.path), e))?;
                emptied.extend(
                    step.path
                        .ancestors()
                        .skip(1)
                        .filter(|dir| !dir.as_os_str().is_empty()),
                );
            }
        }
        let mut emptied: Vec<&Path> = emptied.into_iter().filter(|dir| !needed.contains(dir)).collect();
        emptied.sort_by_key(|dir| std::cmp::Reverse(dir.components().count()));
        for dir in emptied {
            beneath.remove_empty_dir(dir);
        }
        let mut writes: Vec<(&Step, &Entry)> = steps
            .iter()
            .filter_map(|s| s.then.as_ref().map(|then| (s, then)))
            .filter(|(_, then)| then.mode != GITLINK)
            .collect();
        writes.sort_by_key(|(s, _)| s.path.components().count());
        let contents = self.contents(writes.iter().map(|(_, then)| then.oid.as_str()))?;
        for (step, then) in writes {
            let bytes = contents.get(&then.oid).map(Vec::as_slice).unwrap_or_default();
            let written = if then.mode == SYMLINK {
                beneath.write_symlink(&step.path, OsStr::from_bytes(bytes))
            } else {
                beneath.write_file(&step.path, bytes, then.mode == EXECUTABLE)
            };
            written.map_err(|e| UndoError::io(self.root().join(&step.path), e))?;
        }
        if !moved {
            return Ok(None);
        }
        self.prune_set_aside();
        Ok(Some(aside))
    }

    /// Deletes the files set aside by all but the last [`SET_ASIDE_KEPT`] undos.
    fn prune_set_aside(&self) {
        let Ok(listed) = std::fs::read_dir(self.dir().join("set-aside")) else {
            return;
        };
        let mut undos: Vec<(u128, PathBuf)> = listed
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let stamp = entry.file_name().to_str()?.parse().ok()?;
                Some((stamp, entry.path()))
            })
            .collect();
        undos.sort();
        let old = undos.len().saturating_sub(SET_ASIDE_KEPT);
        for (_, dir) in undos.into_iter().take(old) {
            let _removed = std::fs::remove_dir_all(dir);
        }
    }

    /// The contents of the objects `oids`, read by one `git cat-file --batch`.
    fn contents<'a>(&self, oids: impl Iterator<Item = &'a str>) -> Result<HashMap<String, Vec<u8>>> {
        let unique: BTreeSet<&str> = oids.collect();
        if unique.is_empty() {
            return Ok(HashMap::new());
        }
        let input: String = unique.iter().map(|oid| format!("{oid}\n")).collect();
        let output = self
            .git
            .run_with_input(&["cat-file", "--batch"], Some(input.as_bytes()))?;
        let mut contents = HashMap::new();
        let mut rest = output.as_slice();
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            let header = String::from_utf8_lossy(rest.get(..end).unwrap_or_default()).into_owned();
            let mut fields = header.split(' ');
            let (Some(oid), Some(_kind), Some(size)) = (fields.next(), fields.next(), fields.next()) else {
                return Err(UndoError::Data(format!("`{header}` from git cat-file")));
            };
            let size: usize = size
                .parse()
                .map_err(|_| UndoError::Data(format!("`{header}` from git cat-file")))?;
            let body = rest
                .get(end + 1..end + 1 + size)
                .ok_or_else(|| UndoError::Data(format!("object `{oid}` cut short")))?;
            contents.insert(oid.to_owned(), body.to_vec());
            rest = rest.get(end + 2 + size..).unwrap_or_default();
        }
        Ok(contents)
    }

    /// The patch `steps` would apply: git's for a changed file, every line for one created or removed (binary
    /// files are named, not shown).
    fn patch(&self, steps: &[Step]) -> Result<String> {
        let one_sided = steps.iter().filter_map(|step| match (&step.now, &step.then) {
            (Some(entry), None) | (None, Some(entry)) if entry.mode != GITLINK => Some(entry.oid.as_str()),
            _ => None,
        });
        let contents = self.contents(one_sided)?;
        let mut text = String::new();
        for step in steps {
            let name = step.path.display();
            match (&step.now, &step.then) {
                (Some(now), Some(then)) => {
                    text.push_str(&format!("--- a/{name}\n+++ b/{name}\n"));
                    if now.mode == GITLINK || then.mode == GITLINK {
                        text.push_str("Content not kept (too large)\n");
                        continue;
                    }
                    if now.oid == then.oid {
                        text.push_str(&format!("mode {:o} -> {:o}\n", now.mode, then.mode));
                        continue;
                    }
                    let ran = self.git.run_unchecked(
                        &["diff", "--no-color", "-U3", now.oid.as_str(), then.oid.as_str()],
                        None,
                    )?;
                    let body = String::from_utf8_lossy(&ran.stdout);
                    // The header git prints names the objects; the file's name is above.
                    for line in body
                        .lines()
                        .skip_while(|l| !l.starts_with("@@") && !l.starts_with("Binary"))
                    {
                        text.push_str(line);
                        text.push('\n');
                    }
                }
                (now, then) => {
                    let (header, sign, entry) = match (now, then) {
                        (Some(entry), _) => (format!("--- a/{name}\n+++ /dev/null\n"), '-', entry),
                        (None, Some(entry)) => (format!("--- /dev/null\n+++ b/{name}\n"), '+', entry),
                        (None, None) => continue,
                    };
                    text.push_str(&header);
                    let bytes = contents.get(&entry.oid).map(Vec::as_slice).unwrap_or_default();
                    if entry.mode == GITLINK {
                        text.push_str("Content not kept (too large)\n");
                    } else if entry.mode == SYMLINK {
                        text.push_str(&format!("{sign}link to {}\n", String::from_utf8_lossy(bytes)));
                    } else if bytes.iter().take(8_000).any(|b| *b == 0) {
                        text.push_str("Binary file\n");
                    } else {
                        for line in String::from_utf8_lossy(bytes).lines() {
                            text.push(sign);
                            text.push_str(line);
                            text.push('\n');
                        }
                    }
                }
            }
        }
        Ok(text)
    }

    /// Every file of `tree`, by its path relative to the root.
    fn entries(&self, tree: &str) -> Result<HashMap<PathBuf, Entry>> {
        let listing = self.git.run(&["ls-tree", "-r", "-z", "--full-tree", tree])?;
        let mut entries = HashMap::new();
        for record in listing.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let tab = record
                .iter()
                .position(|b| *b == b'\t')
                .ok_or_else(|| UndoError::Data("a line of git ls-tree without a path".to_owned()))?;
            let meta = String::from_utf8_lossy(record.get(..tab).unwrap_or_default()).into_owned();
            let mut fields = meta.split(' ');
            let (Some(mode), Some(_kind), Some(oid)) = (fields.next(), fields.next(), fields.next()) else {
                return Err(UndoError::Data(format!("`{meta}` from git ls-tree")));
            };
            let path = self.relative(record.get(tab + 1..).unwrap_or_default())?;
            entries.insert(path, entry(mode, oid)?);
        }
        Ok(entries)
    }

    /// What changed from tree `a` to tree `b`: each path with its entry before and after.
    fn diff(&self, a: &str, b: &str) -> Result<Vec<PathChange>> {
        let raw = self
            .git
            .run(&["diff-tree", "-r", "-z", "--no-renames", "--full-index", a, b])?;
        let mut fields = raw.split(|byte| *byte == 0);
        let mut changes = Vec::new();
        while let Some(meta) = fields.next().filter(|m| !m.is_empty()) {
            let meta = String::from_utf8_lossy(meta).into_owned();
            let path = fields
                .next()
                .ok_or_else(|| UndoError::Data(format!("`{meta}` from git diff-tree has no path")))?;
            let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
            let [old_mode, new_mode, old_oid, new_oid, ..] = parts.as_slice() else {
                return Err(UndoError::Data(format!("`{meta}` from git diff-tree")));
            };
            let side = |mode: &str, oid: &str| -> Result<Option<Entry>> {
                if mode.trim_start_matches('0').is_empty() {
                    Ok(None)
                } else {
                    entry(mode, oid).map(Some)
                }
            };
            changes.push(PathChange {
                path: self.relative(path)?,
                before: side(old_mode, old_oid)?,
                after: side(new_mode, new_oid)?,
            });
        }
        Ok(changes)
    }

    /// A path of a tree (relative to the work tree) relative to the root.
    fn relative(&self, bytes: &[u8]) -> Result<PathBuf> {
        let path = PathBuf::from(OsString::from_vec(bytes.to_vec()));
        path.strip_prefix(&self.prefix)
            .map(Path::to_path_buf)
            .map_err(|_| UndoError::Data(format!("`{}` is outside the root", path.display())))
    }
}

/// The mode of an executable file.
const EXECUTABLE: u32 = 0o100_755;
/// The mode of a symbolic link.
const SYMLINK: u32 = 0o120_000;
/// The mode of a nested repository's commit (its files are not in the snapshot).
const GITLINK: u32 = 0o160_000;

fn entry(mode: &str, oid: &str) -> Result<Entry> {
    Ok(Entry {
        mode: u32::from_str_radix(mode, 8).map_err(|_| UndoError::Data(format!("mode `{mode}`")))?,
        oid: oid.to_owned(),
    })
}

/// The size and modification time in the id of a file recorded by its stat data alone (`Stat::id`: they come
/// first, and a move or a rename keeps them).
fn size_and_mtime(oid: &str) -> &str {
    oid.get(..24).unwrap_or(oid)
}
