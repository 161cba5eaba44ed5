//! Whether snapshots are taken, where they are kept and how many: defaults and the `AGENT_GUARD_UNDO*`
//! environment variables.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How many runs a store keeps by default.
const DEFAULT_KEEP_RUNS: usize = 100;
/// How many bytes a store may use by default before its oldest runs are dropped (1 GiB).
const DEFAULT_KEEP_BYTES: u64 = 1 << 30;
/// How long one snapshot may take before it is abandoned and the root's snapshots are switched off (20 s).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

/// Where a project keeps its stores by default, relative to the project: inside agent-guard's own directory,
/// which no snapshot holds and which sandboxed commands cannot write (it is a protected path).
pub(crate) const PROJECT_STORES: &str = ".agent-guard/undo";

/// The snapshot settings of one process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoSettings {
    /// Whether snapshots are taken at all (`AGENT_GUARD_UNDO=off` switches them off).
    pub enabled: bool,
    /// The directory holding one store per root: `AGENT_GUARD_UNDO_DIR`, else the project's
    /// `.agent-guard/undo`; `None` where there is no place for the stores.
    pub dir: Option<PathBuf>,
    /// The home directory, which is never snapshotted as a root (nor is `/`).
    pub home: Option<PathBuf>,
    /// How many runs a store keeps (`AGENT_GUARD_UNDO_KEEP_RUNS`).
    pub keep_runs: usize,
    /// How many bytes a store may use (`AGENT_GUARD_UNDO_KEEP_BYTES`).
    pub keep_bytes: u64,
    /// The time bound of one snapshot (`AGENT_GUARD_UNDO_TIMEOUT_MS`).
    pub timeout: Duration,
    /// Whether a change watcher per root (inotify, in a process of its own) tells snapshots what changed, so
    /// that a snapshot with nothing changed asks no file (`AGENT_GUARD_UNDO_WATCH=off` switches it off). On by
    /// default; it takes effect only in a program that called [`crate::watcher_main`], and where inotify works.
    pub watch: bool,
}

impl UndoSettings {
    /// The defaults, changed by the process's environment. `base` is the directory whose `.agent-guard/undo`
    /// keeps the stores (the project the runs belong to) unless `AGENT_GUARD_UNDO_DIR` names another place;
    /// without either there is no place for them. `home` is the home directory, which is never snapshotted.
    ///
    /// The stores are kept with the project rather than in the home directory: everything agent-guard keeps of a
    /// project (its audit log, its sessions) lives in the project's `.agent-guard/`, and a run in the sandbox then
    /// changes nothing of the home directory but the package caches it may write.
    pub fn from_env(base: Option<&Path>, home: Option<&Path>) -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let off = |name: &str| {
            var(name).is_some_and(|v| {
                matches!(
                    v.trim().to_ascii_lowercase().as_str(),
                    "off" | "0" | "false" | "no"
                )
            })
        };
        let enabled = !off("AGENT_GUARD_UNDO");
        let dir = var("AGENT_GUARD_UNDO_DIR")
            .map(PathBuf::from)
            .or_else(|| base.map(|base| base.join(PROJECT_STORES)));
        Self {
            enabled,
            dir,
            home: home.map(Path::to_path_buf),
            keep_runs: var("AGENT_GUARD_UNDO_KEEP_RUNS")
                .and_then(|v| v.trim().parse().ok())
                .filter(|n| *n > 0)
                .unwrap_or(DEFAULT_KEEP_RUNS),
            keep_bytes: var("AGENT_GUARD_UNDO_KEEP_BYTES")
                .and_then(|v| v.trim().parse().ok())
                .filter(|n| *n > 0)
                .unwrap_or(DEFAULT_KEEP_BYTES),
            timeout: var("AGENT_GUARD_UNDO_TIMEOUT_MS")
                .and_then(|v| v.trim().parse().ok())
                .filter(|n| *n > 0)
                .map_or(DEFAULT_TIMEOUT, Duration::from_millis),
            watch: !off("AGENT_GUARD_UNDO_WATCH"),
        }
    }

    /// Settings that keep the stores in `dir`, with the default bounds (for tests and library users).
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        Self {
            enabled: true,
            dir: Some(dir.into()),
            home: None,
            keep_runs: DEFAULT_KEEP_RUNS,
            keep_bytes: DEFAULT_KEEP_BYTES,
            timeout: DEFAULT_TIMEOUT,
            watch: true,
        }
    }
}
