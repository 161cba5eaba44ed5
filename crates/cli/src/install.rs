//! `agent-guard install` and `uninstall`: agent-guard's PreToolUse hook in the coding agent's settings file of a
//! scope, written with a backup and atomically.

use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agent_decide::DEFAULT_DECISION_LIMIT;
use agent_rules::Family;
use anyhow::{Context, Result, bail};

use crate::check::READ_AND_LOAD_LIMIT;
use crate::hook_entry::{Change, Entry, hook_command, plan_install, plan_uninstall};

/// The `timeout` of the hook entry, in seconds. The coding agent stops a hook at its timeout and then runs the call
/// without a decision, so it must lie well above everything `check` may take: `check` ends itself at the decision
/// bound (5 s) plus 10 s for reading stdin and loading settings, blocking the call. Twice that leaves room for
/// starting the process on a loaded machine; a hook that really hangs is still stopped within half a minute.
pub(crate) const HOOK_TIMEOUT_SECS: u64 = 30;

const _: () =
    assert!(HOOK_TIMEOUT_SECS >= 2 * (DEFAULT_DECISION_LIMIT.as_secs() + READ_AND_LOAD_LIMIT.as_secs()));

/// Which of the coding agent's settings files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Scope {
    /// `~/.claude/settings.json`: every project of this user.
    User,
    /// `<project>/.claude/settings.json`: one project, usually committed and shared.
    Project,
    /// `<project>/.claude/settings.local.json`: one project, this checkout only.
    Local,
}

impl Scope {
    pub(crate) const ALL: [Self; 3] = [Self::User, Self::Project, Self::Local];

    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Project => "project",
            Self::Local => "local",
        }
    }

    /// The settings file of this scope; `None` for the user scope without a home directory.
    pub(crate) fn file(self, home: Option<&Path>, project: &Path) -> Option<PathBuf> {
        match self {
            Self::User => home.map(|h| Family::CodingAgent.settings_file(h)),
            Self::Project => Some(Family::CodingAgent.settings_file(project)),
            Self::Local => Some(Family::CodingAgent.local_settings_file(project)),
        }
    }
}

// Where `install` and `uninstall` write.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct TargetArgs {
    /// Which of the coding agent's settings files (the project is --cwd DIR, else the current directory).
    #[arg(long, value_enum, default_value = "user")]
    scope: Scope,
    /// The project directory of the project and local scopes (default: the current one).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Print the change as a diff and write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// The running binary, canonical: the path the hook will run.
pub(crate) fn running_binary() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find the path of the running agent-guard")?;
    fs::canonicalize(&exe)
        .with_context(|| format!("cannot resolve the path of agent-guard `{}`", exe.display()))
}

/// The path the hook runs: this binary as it was started from `PATH` (or by a path), not resolved through links,
/// so that a package manager's link (`/opt/homebrew/bin/agent-guard` to a versioned directory) keeps working after
/// an upgrade moves its target; the canonical path when the binary cannot be found that way.
pub(crate) fn hook_binary() -> Result<PathBuf> {
    let exe = running_binary()?;
    let is_this = |candidate: &Path| fs::canonicalize(candidate).is_ok_and(|c| c == exe);
    let started = std::env::args_os().next().map(PathBuf::from);
    let found = started.and_then(|argv0| {
        if argv0.components().count() > 1 {
            // Started by a path: made absolute as written, links kept.
            std::path::absolute(&argv0).ok().filter(|p| is_this(p))
        } else {
            let path = std::env::var_os("PATH")?;
            std::env::split_paths(&path)
                .filter(|dir| dir.is_absolute())
                .map(|dir| dir.join(&argv0))
                .find(|candidate| candidate.is_file() && is_this(candidate))
        }
    });
    Ok(found.unwrap_or(exe))
}

/// `--scope local` keeps the settings to this checkout: the file is git-ignored in the repository's own
/// `.git/info/exclude` (nothing committed changes), unless a line there names it already. Returns the exclude
/// file when it was changed; nothing is done outside a git repository.
fn ignore_in_checkout(project: &Path, file: &Path) -> Result<Option<PathBuf>> {
    let Some(git_dir) = git_dir(project) else {
        return Ok(None);
    };
    let Ok(relative) = file.strip_prefix(project) else {
        return Ok(None);
    };
    let pattern = format!("/{}", relative.display());
    let exclude = git_dir.join("info").join("exclude");
    let text = match fs::read_to_string(&exclude) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read `{}`", exclude.display())),
    };
    let bare = pattern.trim_start_matches('/');
    if text
        .lines()
        .map(str::trim)
        .any(|line| line == pattern || line == bare)
    {
        return Ok(None);
    }
    let mut new_text = text;
    if !new_text.is_empty() && !new_text.ends_with('\n') {
        new_text.push('\n');
    }
    new_text.push_str(&format!(
        "# agent-guard install --scope local: this checkout's own settings\n{pattern}\n"
    ));
    if let Some(dir) = exclude.parent() {
        fs::create_dir_all(dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    let mode = fs::metadata(&exclude).ok().map(|m| m.permissions());
    write_atomic(&exclude, &new_text, mode)
        .with_context(|| format!("cannot write `{}`", exclude.display()))?;
    Ok(Some(exclude))
}

/// The git directory of the repository at `project`: `.git`, or where a `.git` file points (a worktree's, whose
/// exclude file is the main repository's, named by its `commondir`).
fn git_dir(project: &Path) -> Option<PathBuf> {
    let dot_git = project.join(".git");
    let meta = fs::symlink_metadata(&dot_git).ok()?;
    if meta.is_dir() {
        return Some(dot_git);
    }
    let pointer = fs::read_to_string(&dot_git).ok()?;
    let dir = project.join(pointer.strip_prefix("gitdir:")?.trim());
    match fs::read_to_string(dir.join("commondir")) {
        Ok(common) => Some(dir.join(common.trim())),
        Err(_) => Some(dir),
    }
}

/// The project directory: `--cwd` made absolute, or the current directory.
pub(crate) fn project_dir(cwd: Option<&Path>) -> Result<PathBuf> {
    let here = std::env::current_dir().context("cannot read the current directory")?;
    Ok(match cwd {
        Some(dir) => here.join(dir),
        None => here,
    })
}

/// A settings file to change: the path of the scope and the file written (a symbolic link's target, so that a
/// linked settings file stays a link).
struct Target {
    scope: Scope,
    path: PathBuf,
    file: PathBuf,
}

impl Target {
    fn locate(args: &TargetArgs) -> Result<Self> {
        // A subdirectory installs into its project, where `check` finds the settings from it.
        let project = crate::load::project(&project_dir(args.cwd.as_deref())?);
        let Some(path) = args.scope.file(crate::load::home().as_deref(), &project) else {
            bail!(
                "HOME is not set, so there is no user settings file; use `--scope project` or `--scope local`"
            );
        };
        let file = match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(&path).with_context(|| {
                format!(
                    "`{}` is a symbolic link to a file that does not exist",
                    path.display()
                )
            })?,
            _ => path.clone(),
        };
        match fs::metadata(&file) {
            Ok(meta) if !meta.is_file() => bail!("`{}` is not a regular file", file.display()),
            _ => {}
        }
        Ok(Self {
            scope: args.scope,
            path,
            file,
        })
    }

    /// The file's text; `None` when it does not exist.
    fn read(&self) -> Result<Option<String>> {
        match fs::read(&self.file) {
            Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|e| {
                anyhow::anyhow!(
                    "`{}` is not UTF-8 text (byte {}); nothing was changed",
                    self.file.display(),
                    e.utf8_error().valid_up_to()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read `{}`", self.file.display())),
        }
    }

    /// Where the previous content is kept: beside the file, `<name>.agent-guard.bak`.
    fn backup(&self) -> PathBuf {
        let mut name = self.file.file_name().unwrap_or_default().to_owned();
        name.push(".agent-guard.bak");
        self.file.with_file_name(name)
    }

    /// How the file is named in messages: its path, and the link's target when it is one.
    fn name(&self) -> String {
        if self.file == self.path {
            format!("`{}`", self.path.display())
        } else {
            format!("`{}` (a link to `{}`)", self.path.display(), self.file.display())
        }
    }

    /// Makes `change`: the previous content goes to the backup first; the new one is written to a temporary file
    /// beside the target and renamed over it, with the target's permissions.
    fn apply(&self, before: Option<&str>, change: &Change) -> Result<()> {
        let write_backup = |before: &str| {
            let mode = fs::metadata(&self.file).ok().map(|m| m.permissions());
            write_atomic(&self.backup(), before, mode)
                .with_context(|| format!("cannot write the backup `{}`", self.backup().display()))
        };
        match change {
            Change::Unchanged => Ok(()),
            Change::Write(text) => {
                match before {
                    Some(before) => write_backup(before)?,
                    None => {
                        // A backup left from an earlier file of that name describes nothing now; uninstall reads
                        // its absence as "install created the file".
                        if let Err(e) = fs::remove_file(self.backup())
                            && e.kind() != std::io::ErrorKind::NotFound
                        {
                            return Err(e).with_context(|| {
                                format!("cannot remove the stale backup `{}`", self.backup().display())
                            });
                        }
                        if let Some(dir) = self.file.parent() {
                            fs::create_dir_all(dir)
                                .with_context(|| format!("cannot create `{}`", dir.display()))?;
                        }
                    }
                }
                let mode = fs::metadata(&self.file).ok().map(|m| m.permissions());
                write_atomic(&self.file, text, mode)
                    .with_context(|| format!("cannot write `{}`", self.file.display()))
            }
            Change::Delete => {
                if let Some(before) = before {
                    write_backup(before)?;
                }
                fs::remove_file(&self.file)
                    .with_context(|| format!("cannot remove `{}`", self.file.display()))
            }
        }
    }
}

/// Writes `text` to `path` through a temporary file in the same directory and a rename, so that a reader sees the
/// old or the new content, never a part. `mode`: the permissions to keep (a new file is readable by its owner only).
fn write_atomic(path: &Path, text: &str, mode: Option<fs::Permissions>) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::Builder::new()
        .prefix(".agent-guard-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    temp.write_all(text.as_bytes())?;
    if let Some(mode) = mode {
        fs::set_permissions(temp.path(), mode)?;
    }
    temp.as_file().sync_all()?;
    temp.persist(path)?;
    // The rename is durable once the directory is synced; a failure there loses nothing already written.
    if let Ok(dir) = fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// The diff of a change, for `--dry-run`.
fn preview(target: &Target, before: Option<&str>, change: &Change) -> String {
    let after = match change {
        Change::Unchanged => return String::new(),
        Change::Write(text) => text.as_str(),
        Change::Delete => "",
    };
    let name = target.path.display().to_string();
    let old = if before.is_some() {
        name.clone()
    } else {
        "/dev/null".to_owned()
    };
    let new = if matches!(change, Change::Delete) {
        "/dev/null".to_owned()
    } else {
        name
    };
    crate::diff::unified(before.unwrap_or_default(), after, &old, &new)
}

/// Refuses a file that cannot be changed, saying where it is wrong and that it was left alone.
fn refuse(target: &Target, e: anyhow::Error) -> anyhow::Error {
    anyhow::anyhow!(
        "refusing to change {}: {e:#}; fix or move the file first (nothing was changed)",
        target.name()
    )
}

/// A build output moves on the next `cargo build` or `cargo clean`; the hook then runs nothing.
fn build_output_note(exe: &Path) -> Option<String> {
    let parts: Vec<_> = exe.components().map(|c| c.as_os_str().to_owned()).collect();
    let in_target = parts
        .windows(2)
        .any(|w| matches!(w, [t, p] if t == "target" && (p == "debug" || p == "release")));
    in_target.then(|| {
        "note: this agent-guard is a build output; a rebuild or `cargo clean` replaces or removes it. \
         `cargo install --path crates/cli` and running that copy's `agent-guard install` gives the hook a stable path"
            .to_owned()
    })
}

pub(crate) fn install(args: &TargetArgs, matcher: &str) -> Result<ExitCode> {
    if matcher.trim().is_empty() {
        bail!("`--matcher` is empty; `*` sends every tool call to the hook");
    }
    let exe = hook_binary()?;
    let entry = Entry {
        matcher: matcher.to_owned(),
        command: hook_command(&exe)?,
        timeout: HOOK_TIMEOUT_SECS,
    };
    let target = Target::locate(args)?;
    let before = target.read()?;
    let change = plan_install(before.as_deref(), &entry, &exe).map_err(|e| refuse(&target, e))?;
    let mut out = String::new();
    let scope = target.scope.as_str();
    let ignored = match (target.scope, args.dry_run) {
        (Scope::Local, false) => {
            let project = crate::load::project(&project_dir(args.cwd.as_deref())?);
            ignore_in_checkout(&project, &target.path)?
        }
        _ => None,
    };
    let ignored_line = ignored.map(|exclude| {
        format!(
            "  `{}` is git-ignored in this checkout (`{}`)",
            target.path.display(),
            exclude.display()
        )
    });
    if change == Change::Unchanged {
        let _ = writeln!(
            out,
            "agent-guard is already installed in {} ({scope} scope): nothing changed",
            target.name()
        );
        if let Some(line) = &ignored_line {
            let _ = writeln!(out, "{line}");
        }
        crate::emit(out.trim_end())?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.dry_run {
        let _ = writeln!(out, "would change {} ({scope} scope):", target.name());
        out.push_str(&preview(&target, before.as_deref(), &change));
        let _ = writeln!(out, "dry run: nothing was written");
        crate::emit(out.trim_end())?;
        return Ok(ExitCode::SUCCESS);
    }
    target.apply(before.as_deref(), &change)?;
    if before.is_some() {
        let _ = writeln!(
            out,
            "installed the agent-guard hook in {} ({scope} scope)",
            target.name()
        );
    } else {
        let _ = writeln!(
            out,
            "created {} ({scope} scope) with the agent-guard hook",
            target.name()
        );
    }
    let _ = writeln!(
        out,
        "  runs `{}` before every tool call matching `{}`, timeout {} s",
        entry.command, entry.matcher, entry.timeout
    );
    if before.is_some() {
        let _ = writeln!(
            out,
            "  the previous content is in `{}`",
            target.backup().display()
        );
    }
    if target.scope == Scope::Project {
        let _ = writeln!(
            out,
            "  this file is usually committed, and the command names this machine's agent-guard; \
             `--scope local` keeps the hook to this checkout"
        );
    }
    if let Some(line) = &ignored_line {
        let _ = writeln!(out, "{line}");
    }
    if let Some(note) = build_output_note(&running_binary()?) {
        let _ = writeln!(out, "  {note}");
    }
    let _ = writeln!(
        out,
        "`agent-guard doctor` checks the set-up; `agent-guard uninstall` removes the hook"
    );
    crate::emit(out.trim_end())?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn uninstall(args: &TargetArgs) -> Result<ExitCode> {
    let exe = hook_binary()?;
    let target = Target::locate(args)?;
    let scope = target.scope.as_str();
    let Some(before) = target.read()? else {
        crate::emit(&format!(
            "no settings file at {} ({scope} scope): nothing to remove",
            target.name()
        ))?;
        return Ok(ExitCode::SUCCESS);
    };
    let backup = match fs::read_to_string(target.backup()) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        // An unreadable backup keeps what install may not have made.
        Err(_) => Some("unreadable".to_owned()),
    };
    let change = plan_uninstall(&before, backup.as_deref(), &exe).map_err(|e| refuse(&target, e))?;
    let mut out = String::new();
    match (&change, args.dry_run) {
        (Change::Unchanged, _) => {
            let _ = writeln!(
                out,
                "no agent-guard hook in {} ({scope} scope): nothing changed",
                target.name()
            );
        }
        (_, true) => {
            let _ = writeln!(out, "would change {} ({scope} scope):", target.name());
            out.push_str(&preview(&target, Some(&before), &change));
            let _ = writeln!(out, "dry run: nothing was written");
        }
        (Change::Write(_), false) => {
            target.apply(Some(&before), &change)?;
            let _ = writeln!(
                out,
                "removed the agent-guard hook from {} ({scope} scope)",
                target.name()
            );
            let _ = writeln!(
                out,
                "  the previous content is in `{}`",
                target.backup().display()
            );
        }
        (Change::Delete, false) => {
            target.apply(Some(&before), &change)?;
            let _ = writeln!(
                out,
                "removed {} ({scope} scope): install had created it and it held nothing else",
                target.name()
            );
            let _ = writeln!(
                out,
                "  the previous content is in `{}`",
                target.backup().display()
            );
        }
    }
    crate::emit(out.trim_end())?;
    Ok(ExitCode::SUCCESS)
}
