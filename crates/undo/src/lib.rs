//! agent-guard's undo: a snapshot of the roots before and after every command that runs under the
//! `workspace-write` sandbox, and taking any of those runs back.
//!
//! The kernel sandbox keeps a command inside the roots; it cannot keep it from damaging the project itself
//! (`rm -rf src`, a `sed -i` with a wrong pattern, a `git reset --hard` over uncommitted work). A [`Recording`]
//! writes the tree of each root into a private git store before the command and again
//! after it; [`Store::undo`] puts back what a run changed, byte for byte, refusing when a file changed since.
//!
//! A store is a private git directory in the project's `.agent-guard/undo/` (one per root; a protected path the
//! sandbox keeps read-only, and one no snapshot holds), driven through the `git`
//! program with a private index, so that a snapshot hashes only the files whose stat data changed. It honours
//! the project's ignore rules, and never holds secret files (`.env`, keys: the sandbox cannot change those).
//!
//! Layer: beside the sandbox crates; the CLI and the runtime call it around a run, outside the sandbox.
//!
//! **Invariant:** never writes the project's own `.git` (objects, refs, index, configuration): a store has its
//! own directory. Of the project's `.git` it reads only the ignore rules and, for [`git_tracking`], the index
//! (and the pointer files and configuration that find and describe it). Runs no `git` found inside a root.
//! **Invariant:** recording never fails a command: a snapshot that cannot be taken is a note, not an error.
//! **Invariant:** restoring writes only beneath the root, follows no symbolic link on the way, and writes no
//! path the caller refuses.
//!
//! ```
//! use agent_undo::{Recording, Store, UndoRequest, UndoSettings};
//!
//! let project = tempfile::tempdir()?;
//! let state = tempfile::tempdir()?;
//! let settings = UndoSettings::in_dir(state.path());
//! std::fs::write(project.path().join("notes.txt"), "keep me\n")?;
//!
//! let roots = [project.path().to_path_buf()];
//! let recording = Recording::begin(&roots, "rm notes.txt", &settings);
//! std::fs::remove_file(project.path().join("notes.txt"))?; // the command
//! let finished = recording.finish();
//!
//! if let Some(store) = Store::existing(project.path(), &settings)? {
//!     // With `git` on PATH, the run was recorded and is taken back.
//!     assert_eq!(finished.runs.len(), 1);
//!     let report = store.undo(UndoRequest::default(), &|_| None)?;
//!     assert!(report.applied);
//!     assert_eq!(std::fs::read_to_string(project.path().join("notes.txt"))?, "keep me\n");
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod beneath;
mod error;
mod git;
mod index;
mod left_out;
mod recording;
mod restore;
mod settings;
mod store;
mod tracking;
mod walk;
mod watch;

pub use error::Result;
pub use error::UndoError;
pub use left_out::LeftOut;
pub use left_out::{Look, look};
pub use recording::Finished;
pub use recording::Recorded;
pub use recording::Recording;
pub use recording::writable_roots;
pub use restore::Change;
pub use restore::ChangeKind;
pub use restore::Conflict;
pub use restore::Entry;
pub use restore::SET_ASIDE_KEPT;
pub use restore::Step;
pub use restore::UndoReport;
pub use restore::UndoRequest;
pub use settings::UndoSettings;
pub use store::KEPT_SNAPSHOT_BYTES;
pub use store::RunId;
pub use store::RunRecord;
pub use store::Store;
pub use tracking::CommittedFiles;
pub use tracking::GitTracking;
pub use tracking::git_tracking;
pub use walk::HELD_IGNORED_BYTES;
pub use walk::HELD_IGNORED_ENTRIES;
pub use watch::watcher_main;

/// Whether a `workspace-write` run in `root` would be snapshotted under `settings`: snapshots on, a place for
/// the store, a root that is neither `/` nor the home directory and not switched off, and a `git` outside it.
/// Runs nothing and writes nothing (for a decision that relies on `agent-guard undo`).
pub fn snapshots_on(root: &std::path::Path, settings: &UndoSettings) -> bool {
    Store::locate_only(root, settings).is_ok()
}

/// The files of `root` whose content the last snapshot did not keep (too large to hash: it recorded their stat data
/// alone), which `agent-guard undo` cannot put back; absolute paths. Reads the store's index, runs nothing.
pub fn not_kept(root: &std::path::Path, settings: &UndoSettings) -> Vec<std::path::PathBuf> {
    Store::locate_only(root, settings)
        .map(|store| store.not_kept())
        .unwrap_or_default()
}
