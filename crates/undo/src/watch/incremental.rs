//! A snapshot from the watcher's answer: only the paths changed since the last snapshot are looked at (a
//! changed directory's whole subtree, and what the store held below it), under the rules the last snapshot
//! followed. Anything in doubt makes the caller walk the whole root instead.

use std::collections::{BTreeSet, HashSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use super::{Answer, State};
use crate::error::Result;
use crate::index::{Index, Stat};
use crate::store::{Store, still_a_file};
use crate::walk::{self, Checker, Rules, Top};

/// How a snapshot is to be taken.
pub(crate) enum Outcome {
    /// Taken from the watcher's answer: the tree.
    Done(String),
    /// To be taken by a walk of the whole root; with the watcher's answer, whose token the snapshot keeps (with
    /// the rules its walk captured) when the walk captures the rules.
    Walk(Option<Answer>),
}

/// The question of a snapshot sent to the store's watcher ([`ask`]), with the kept state whose token it asks
/// from: its answer is read by [`snapshot`].
#[derive(Debug)]
pub(crate) struct Question {
    state: Option<State>,
    asked: Option<super::Asked>,
}

/// Sends the question of `store`'s next snapshot to its watcher, from the token of the kept state; under the
/// store's lock, which the snapshot that reads the answer holds too.
pub(crate) fn ask(store: &Store) -> Question {
    let state = State::load(store.dir());
    let asked = super::send(store.dir(), state.as_ref());
    Question { state, asked }
}

/// What a path is now, reached through directories only (a walk follows no link).
enum Kind {
    Dir,
    /// A file or link: its stat data, and whether it has more than one link.
    File(Option<Stat>, bool),
    /// Absent, below a link or a file, or neither file, link nor directory.
    Other,
}

fn kind_of(work_tree: &Path, path: &Path) -> Kind {
    let mut at = work_tree.to_path_buf();
    let mut components = path.components().peekable();
    while let Some(component) = components.next() {
        at.push(component);
        let Ok(stat) = nix::sys::stat::lstat(&at) else {
            return Kind::Other;
        };
        let kind = stat.st_mode & nix::libc::S_IFMT;
        if components.peek().is_some() {
            if kind != nix::libc::S_IFDIR {
                return Kind::Other;
            }
            continue;
        }
        return match kind {
            nix::libc::S_IFDIR => Kind::Dir,
            nix::libc::S_IFREG | nix::libc::S_IFLNK => Kind::File(Stat::of_raw(&stat), stat.st_nlink > 1),
            _ => Kind::Other,
        };
    }
    Kind::Other
}

/// Takes the snapshot of `store` from its watcher's answer when every condition for it holds; `rules` are the
/// run's (before the command as the caller has just read them from the disk under the store's lock, being
/// captured; frozen after it) and become the kept ones when the snapshot is taken from the answer before the
/// command.
pub(crate) fn snapshot(store: &Store, rules: &mut Rules, question: Option<Question>) -> Result<Outcome> {
    let dir = store.dir();
    let work_tree = store.git.work_tree.as_path();
    let prefix = store.prefix.as_path();
    let Question { state, asked } = question.unwrap_or_else(|| ask(store));
    let Some(answer) = asked.and_then(|asked| asked.receive(dir)) else {
        super::start(dir, work_tree, store.root());
        return Ok(Outcome::Walk(None));
    };
    // The rules the watcher follows must be the disk's: else it may not watch a directory a walk enters. Before a
    // command (`rules` not frozen yet) they are those the caller has just read from the disk under the store's
    // lock, not read a second time.
    let read_now;
    let disk = if rules.is_frozen() {
        read_now = store.rules();
        &read_now
    } else {
        &*rules
    };
    let above = Rules::above_on_disk(work_tree, prefix);
    if answer.fingerprint != Rules::fingerprint_of(disk.own(), disk.exclude(), &above) {
        super::quit(dir);
        State::forget(dir);
        return Ok(Outcome::Walk(None));
    }
    let Some(state) = state.filter(|state| {
        answer.complete
            && state.instance == answer.instance
            && state.rules.own() == disk.own()
            && state.rules.exclude() == disk.exclude()
            && state.rules.above(prefix) == above
    }) else {
        return Ok(Outcome::Walk(Some(answer)));
    };
    if state.answered(&answer) >= super::WALK_EVERY {
        return Ok(Outcome::Walk(Some(answer)));
    }
    // After the command, the run's rules must be those the kept tree followed.
    if rules.is_frozen() && state.rules.frozen() != *rules {
        return Ok(Outcome::Walk(None));
    }
    let mut paths: Vec<PathBuf> = answer
        .paths
        .iter()
        .map(|bytes| PathBuf::from(OsStr::from_bytes(bytes)))
        .collect();
    paths.extend(state.linked.iter().cloned());
    if paths
        .iter()
        .any(|path| path.file_name() == Some(OsStr::new(".gitignore")))
    {
        return Ok(Outcome::Walk(Some(answer)));
    }
    let tree = if paths.is_empty() {
        store.last_tree().map(|tree| (tree, state.linked.clone()))
    } else {
        changed(
            store,
            &state.rules,
            &paths,
            state.linked.clone(),
            !rules.is_frozen(),
        )?
    };
    let Some((tree, linked)) = tree else {
        return Ok(Outcome::Walk(Some(answer)));
    };
    if !rules.is_frozen() {
        *rules = state.rules.clone();
    }
    // The kept state is written only when it changes: with no event since its token (and so no path looked at)
    // the same state would be written again, and replacing a file costs more than the rest of such a snapshot
    // (ext4 writes the new file out at once when it is renamed over the old one). The count of answers since the
    // last walk is the watcher's (`Answer::served`), so it needs no write.
    if state.walked || answer.seq != state.seq || linked != state.linked {
        State {
            instance: answer.instance,
            seq: answer.seq,
            rules: state.rules,
            walked: false,
            linked,
            walked_at: state.walked_at,
        }
        .save(dir);
    }
    Ok(Outcome::Done(tree))
}

/// The tree after giving git what changed among `paths` (and below those that are or were directories), as a
/// walk under `rules` would, and `linked` (the files with more than one link) brought up to date for the paths
/// looked at; `None` when a walk is needed after all (no readable index, a `.gitignore` in a changed directory).
/// With `catch_up` (a snapshot before a command), a file recorded by its stat data alone is hashed when the bound
/// allows, changed or not.
fn changed(
    store: &Store,
    rules: &Rules,
    paths: &[PathBuf],
    mut linked: BTreeSet<PathBuf>,
    catch_up: bool,
) -> Result<Option<(String, BTreeSet<PathBuf>)>> {
    let work_tree = store.git.work_tree.as_path();
    let prefix = store.prefix.as_path();
    let Some(kept) = Index::read(&store.dir().join("index")) else {
        return Ok(None);
    };
    let frozen = rules.frozen();
    let mut checker = Checker::new(work_tree, prefix, &frozen);
    let mut update: BTreeSet<PathBuf> = BTreeSet::new();
    let mut gone: BTreeSet<PathBuf> = BTreeSet::new();
    let mut walked: HashSet<PathBuf> = HashSet::new();
    let mut below: Vec<PathBuf> = Vec::new();
    // Whether each ignored directory a change was in is still what the captured rules found.
    let mut tops: std::collections::HashMap<PathBuf, bool> = std::collections::HashMap::new();
    let listed =
        |path: &Path, stat: Option<&Stat>, update: &mut BTreeSet<PathBuf>, gone: &mut BTreeSet<PathBuf>| {
            if !kept.entries.contains_key(path.as_os_str()) {
                if store.takes(path, false) {
                    update.insert(path.to_path_buf());
                }
            } else if !stat.is_some_and(|stat| {
                kept.unchanged(path, stat) || (!catch_up && kept.kept_by_stat(path, stat))
            }) {
                // One held that can no longer be read is left out, as if gone.
                if store.takes(path, true) {
                    update.insert(path.to_path_buf());
                } else {
                    gone.insert(path.to_path_buf());
                }
            }
        };
    for path in paths {
        if !path.starts_with(prefix) {
            continue;
        }
        let kind = kind_of(work_tree, path);
        // A directory that changed and held a `.gitignore` (moved away, replaced): the kept rules may no longer be
        // the disk's.
        if !matches!(kind, Kind::File(..)) && rules.has_rules_under(path) {
            return Ok(None);
        }
        // A change in what the project ignores: what the walk that captured the rules found of its highest ignored
        // entry (held, or left out as a marked cache or environment or as too large) must still hold, and a
        // directory must have been met by it; else only a walk takes the snapshot (a directory that came within
        // the bounds holds files no snapshot took yet; one that grew or was marked is left out by a walk, and its
        // files held before are kept). A file the walk did not keep a word of was held.
        if let Some((top, top_is_dir)) = checker.top_ignored(path, matches!(kind, Kind::Dir)) {
            let recorded = rules.top_held(&top);
            let held_now = *tops
                .entry(top)
                .or_insert_with_key(|top| Top::of(&work_tree.join(top), top_is_dir) == Top::Held);
            let same = match recorded {
                Some(held) => held == held_now,
                None => !top_is_dir && held_now,
            };
            if !same {
                return Ok(None);
            }
        }
        match kind {
            Kind::Dir if !checker.ignored(path, true) => {
                let found = walk::files(work_tree, &work_tree.join(path), &mut frozen.clone());
                if found
                    .iter()
                    .any(|(file, _, _)| file.file_name() == Some(OsStr::new(".gitignore")))
                {
                    return Ok(None);
                }
                for (file, stat, many) in &found {
                    listed(file, stat.as_ref(), &mut update, &mut gone);
                    walked.insert(file.clone());
                    if *many {
                        linked.insert(file.clone());
                    }
                }
                below.push(path.clone());
            }
            Kind::File(stat, many) if !checker.ignored(path, false) => {
                listed(path, stat.as_ref(), &mut update, &mut gone);
                walked.insert(path.clone());
                if many {
                    linked.insert(path.clone());
                } else {
                    linked.remove(path);
                }
            }
            _ => {
                below.push(path.clone());
                linked.remove(path);
                if kept.entries.contains_key(path.as_os_str()) && !walked.contains(path) {
                    if still_a_file(work_tree, path) && store.takes(path, true) {
                        update.insert(path.clone());
                    } else {
                        gone.insert(path.clone());
                    }
                }
            }
        }
    }
    // What the store held below a changed directory and a walk did not list: as a walk of the root decides.
    if !below.is_empty() {
        linked.retain(|path| {
            walked.contains(path) || !below.iter().any(|dir| path.starts_with(dir) && path != dir)
        });
        for path in kept.entries.keys().map(Path::new) {
            if walked.contains(path)
                || !below
                    .iter()
                    .any(|dir| path.starts_with(dir) && path != dir.as_path())
            {
                continue;
            }
            if still_a_file(work_tree, path) && store.takes(path, true) {
                update.insert(path.to_path_buf());
            } else {
                gone.insert(path.to_path_buf());
            }
        }
    }
    for path in &update {
        gone.remove(path);
    }
    let mut gone_list = Vec::new();
    for path in &gone {
        crate::store::push_path(&mut gone_list, path);
    }
    let mut update_list = Vec::new();
    for path in &update {
        crate::store::push_path(&mut update_list, path);
    }
    Ok(Some((
        store.commit_index(&kept, &gone_list, &update_list)?,
        linked,
    )))
}
