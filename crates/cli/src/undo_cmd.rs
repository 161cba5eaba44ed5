//! `agent-guard undo`: the runs recorded around `workspace-write` commands, and taking them back; also the
//! recording `agent-guard sandbox` does around its command.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agent_decide::Guard;
use agent_tool_traits::{Access, Confinement, SandboxProfile};
use agent_undo::{ChangeKind, Recording, Store, UndoRequest};
use anyhow::{Context, Result, bail};

use crate::DecideArgs;
use crate::load::Guards;

// The arguments of `agent-guard undo`.
#[derive(Debug, clap::Args)]
pub(crate) struct UndoArgs {
    /// List the recent runs with their command, time and the files each added, modified and deleted.
    #[arg(long)]
    list: bool,
    /// Take back this run and every later one (default: the last run not taken back yet).
    #[arg(long, value_name = "ID")]
    id: Option<u64>,
    /// Print the changes it would make, as a patch, and change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Take the runs back even over files changed since by something else (the state now is kept in the store).
    #[arg(long)]
    force: bool,
    /// The directory whose runs these are (default: the current one; its project's runs).
    #[arg(long = "root", value_name = "DIR")]
    root: Option<PathBuf>,
    #[command(flatten)]
    decide: DecideArgs,
}

/// Opens the stores of the roots `guard`'s sandbox lets a `workspace-write` command write, for a recording of
/// `command` whose snapshots before it [`snapshot`] takes; `None` for any other profile. `approval` is the server's
/// ask a person answered to let it run, and `call` the key of the tool call it runs for, both of which the runs
/// name.
pub(crate) fn open(
    guard: &Guard,
    confinement: Confinement,
    command: &[OsString],
    approval: Option<&str>,
    call: Option<&str>,
) -> Option<Recording> {
    if confinement.profile != SandboxProfile::WorkspaceWrite {
        return None;
    }
    let roots = agent_undo::writable_roots(guard.sandbox()?);
    let settings = guard.undo_settings();
    let mut recording = Recording::open(&roots, &command_text(command), &settings);
    if let Some(ask) = approval {
        recording = recording.approved_by_ask(ask);
    }
    if let Some(call) = call {
        recording = recording.for_call(call);
    }
    Some(recording)
}

/// Takes the snapshots before the command of a recording [`open`] opened, and says on stderr what went wrong.
pub(crate) fn snapshot(recording: &mut Recording) {
    recording.snapshot();
    for note in recording.notes() {
        eprintln!("agent-guard sandbox: {note}");
    }
}

/// Snapshots the roots again after the command and says, on stderr, the undo id of each root it changed.
pub(crate) fn finish(recording: Option<Recording>) {
    let Some(recording) = recording else {
        return;
    };
    let finished = recording.finish();
    for run in &finished.runs {
        eprintln!(
            "agent-guard sandbox: undo id {}: the command changed {} file{} in `{}`; `agent-guard undo --id {}` takes it back",
            run.id,
            run.changed,
            if run.changed == 1 { "" } else { "s" },
            run.root.display(),
            run.id
        );
    }
    for note in &finished.notes {
        eprintln!("agent-guard sandbox: {note}");
    }
}

/// The runs recorded in the roots `guard`'s sandbox may write that the server's ask `ask` let happen, oldest
/// first (for the server's page).
pub(crate) fn runs_of_ask(guard: &Guard, ask: &str) -> Vec<agent_server::UndoRun> {
    runs_where(guard, |run| run.approval.as_deref() == Some(ask))
}

/// The runs recorded for the tool call whose key is `call` (the audit log's link), oldest first.
pub(crate) fn runs_of_call(guard: &Guard, call: &str) -> Vec<agent_server::UndoRun> {
    runs_where(guard, |run| run.call.as_deref() == Some(call))
}

/// The runs recorded in the roots `guard`'s sandbox may write that `wanted` picks, oldest first.
fn runs_where(guard: &Guard, wanted: impl Fn(&agent_undo::RunRecord) -> bool) -> Vec<agent_server::UndoRun> {
    let Some(sandbox) = guard.sandbox() else {
        return Vec::new();
    };
    let settings = guard.undo_settings();
    agent_undo::writable_roots(sandbox)
        .iter()
        .filter_map(|root| Store::existing(root, &settings).ok().flatten())
        .flat_map(|store| {
            let root = store.root().to_path_buf();
            store
                .runs()
                .unwrap_or_default()
                .into_iter()
                .filter(|run| wanted(run))
                .map(move |run| agent_server::UndoRun {
                    root: root.clone(),
                    id: run.id,
                    undone: run.undone,
                })
        })
        .collect()
}

/// For `explain`: whether a call that runs under `confinement` is recorded, and how to take it back; `None` for a
/// call that writes nothing (or does not run).
pub(crate) fn explain_line(guard: &Guard, confinement: Option<Confinement>) -> Option<String> {
    confinement.filter(|c| c.profile == SandboxProfile::WorkspaceWrite)?;
    let settings = guard.undo_settings();
    let roots: Vec<String> = agent_undo::writable_roots(guard.sandbox()?)
        .into_iter()
        .filter(|root| agent_undo::snapshots_on(root, &settings))
        .map(|root| format!("`{}`", root.display()))
        .collect();
    Some(if roots.is_empty() {
        "off: no snapshot is taken of this run (docs/undo.md)".to_owned()
    } else {
        format!(
            "{} snapshotted before and after the run, which prints its undo id; `agent-guard undo --id ID` takes it back",
            roots.join(", ")
        )
    })
}

/// The command as the user wrote it: the line of `bash -c LINE`, else the words joined.
fn command_text(command: &[OsString]) -> String {
    match command {
        [shell, flag, line, ..]
            if flag == "-c"
                && Path::new(shell)
                    .file_name()
                    .is_some_and(|name| name == "bash" || name == "sh") =>
        {
            line.to_string_lossy().into_owned()
        }
        words => words
            .iter()
            .map(|word| word.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" "),
    }
}

pub(crate) fn run(args: &UndoArgs) -> Result<ExitCode> {
    let cwd = match &args.root {
        Some(root) => std::fs::canonicalize(root)
            .ok()
            .filter(|path| path.is_dir())
            .ok_or_else(|| crate::UsageError(format!("root `{}` is not a directory", root.display())))?,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let mut guards = Guards::new(&args.decide)?;
    let guard = match guards.get(&cwd.to_string_lossy(), None) {
        Ok(guard) => std::sync::Arc::clone(guard),
        Err(why) => bail!("cannot load the settings of `{}`: {why}", cwd.display()),
    };
    let sandbox = guard
        .sandbox()
        .context("no sandbox for this directory, so no roots to take back")?;
    let settings = guard.undo_settings();
    let roots = agent_undo::writable_roots(sandbox);
    // The store of the root holding the directory: its project when it has one.
    let Some(root) = roots.iter().find(|root| cwd.starts_with(root)).or(roots.first()) else {
        bail!("no writable root for `{}`", cwd.display());
    };
    let store = match Store::existing(root, &settings) {
        Ok(Some(store)) => store,
        Ok(None) => {
            crate::emit(&format!("no run of `{}` was recorded yet", root.display()))?;
            return Ok(ExitCode::SUCCESS);
        }
        Err(agent_undo::UndoError::Off(why)) => bail!("snapshots of `{}` are off: {why}", root.display()),
        Err(error) => return Err(error.into()),
    };
    if args.list {
        return list(&store);
    }
    let protected = sandbox.protected_paths();
    let refuse = |relative: &Path| protected.reason(&root.join(relative), Some(relative), Access::Write);
    let request = UndoRequest {
        from: args.id,
        force: args.force,
        dry_run: args.dry_run,
    };
    let report = store.undo(request, &refuse)?;
    show_undo(&store, &report, args.dry_run)
}

/// `--list`: each run, newest first, with the files it changed.
fn list(store: &Store) -> Result<ExitCode> {
    const SHOWN: usize = 10;
    let runs = store.runs()?;
    if runs.is_empty() {
        crate::emit(&format!("no run of `{}` is kept", store.root().display()))?;
    }
    for run in runs.iter().rev() {
        let changes = store.changes(run)?;
        let count = |kind| changes.iter().filter(|c| c.kind == kind).count();
        let mut text = format!(
            "{:>4}  {}  +{} ~{} -{}{}  {}",
            run.id,
            utc(run.time),
            count(ChangeKind::Added),
            count(ChangeKind::Modified),
            count(ChangeKind::Deleted),
            if run.undone { "  (taken back)" } else { "" },
            run.command.lines().next().unwrap_or_default()
        );
        for change in changes.iter().take(SHOWN) {
            let mark = match change.kind {
                ChangeKind::Added => "added",
                ChangeKind::Modified => "modified",
                ChangeKind::Deleted => "deleted",
            };
            let _ = write!(text, "\n        {mark:<8} {}", change.path.display());
        }
        if changes.len() > SHOWN {
            let _ = write!(text, "\n        … and {} more", changes.len() - SHOWN);
        }
        crate::emit(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What an undo did, would do, or why it refused (exit code 1).
fn show_undo(store: &Store, report: &agent_undo::UndoReport, dry_run: bool) -> Result<ExitCode> {
    let runs: Vec<String> = report.runs.iter().map(u64::to_string).collect();
    for refused in &report.refused {
        eprintln!(
            "agent-guard undo: `{}` is left as it is: {}",
            refused.path.display(),
            refused.why
        );
    }
    if dry_run {
        crate::emit(&format!(
            "would take back run{} {} of `{}`: {} file{}",
            if runs.len() == 1 { "" } else { "s" },
            runs.join(", "),
            store.root().display(),
            report.steps.len(),
            if report.steps.len() == 1 { "" } else { "s" }
        ))?;
        for conflict in &report.conflicts {
            crate::emit(&format!(
                "conflict: `{}` was {} run {} (--force takes it anyway)",
                conflict.path.display(),
                conflict.why,
                conflict.run
            ))?;
        }
        crate::emit(report.diff.trim_end())?;
        return Ok(ExitCode::SUCCESS);
    }
    if !report.applied {
        for conflict in &report.conflicts {
            eprintln!(
                "agent-guard undo: `{}` was {} run {} by something else",
                conflict.path.display(),
                conflict.why,
                conflict.run
            );
        }
        eprintln!(
            "agent-guard undo: nothing was changed; `--dry-run` shows the changes, `--force` takes the run{} back anyway",
            if runs.len() == 1 { "" } else { "s" }
        );
        return Ok(ExitCode::FAILURE);
    }
    if let Some(tree) = &report.saved {
        eprintln!(
            "agent-guard undo: the state before is kept as tree {tree} in `{}`",
            store.dir().display()
        );
    }
    if let Some(aside) = &report.set_aside {
        eprintln!(
            "agent-guard undo: the files the run{} made are moved to `{}`, not deleted (the last {} undos' are kept)",
            if runs.len() == 1 { "" } else { "s" },
            aside.display(),
            agent_undo::SET_ASIDE_KEPT
        );
    }
    crate::emit(&format!(
        "took back run{} {} of `{}`: {} file{} restored",
        if runs.len() == 1 { "" } else { "s" },
        runs.join(", "),
        store.root().display(),
        report.steps.len(),
        if report.steps.len() == 1 { "" } else { "s" }
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// `secs` since the Unix epoch as `YYYY-MM-DD HH:MM:SSZ`.
fn utc(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or_default();
    let rest = secs % 86_400;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}Z",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00Z");
        assert_eq!(utc(1_796_193_600), "2026-12-02 06:40:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00Z");
    }

    #[test]
    fn a_shell_line_is_recorded_as_written() {
        let words = |w: &[&str]| w.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            command_text(&words(&["/bin/bash", "-c", "rm -rf src"])),
            "rm -rf src"
        );
        assert_eq!(
            command_text(&words(&["sed", "-i", "s/a/b/", "f"])),
            "sed -i s/a/b/ f"
        );
    }
}
