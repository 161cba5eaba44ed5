//! Building a guard for a working directory the way the coding agent discovers settings.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_decide::{Guard, GuardOptions};
use agent_rules::{Discovery, PermissionMode, Settings};
use agent_tool_traits::Source;
use anyhow::{Context, Result};

use crate::DecideArgs;

/// The home directory, unless `HOME` is unset or empty.
pub(crate) fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// The project `cwd` belongs to ([`agent_rules::project_root_declared`], with the project the coding agent
/// declared, [`declared_project`]): every command finds its settings and its roots there, so that a subdirectory of
/// a project is in the same project.
pub(crate) fn project(cwd: &Path) -> PathBuf {
    project_declared(cwd, declared_project())
}

/// [`project`] with `declared` in place of the coding agent's declaration.
fn project_declared(cwd: &Path, declared: Option<&Path>) -> PathBuf {
    agent_rules::project_root_declared(cwd, home().as_deref(), declared)
}

/// The project the coding agent says its session works in: the directory it was started in, which Claude Code
/// gives its hooks as `CLAUDE_PROJECT_DIR` (Gemini CLI as `GEMINI_PROJECT_DIR`). An agent that `cd`s into a nested
/// package with a `.git` or `.claude` of its own still works in that project. Read once.
pub(crate) fn declared_project() -> Option<&'static Path> {
    static DECLARED: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    DECLARED
        .get_or_init(|| {
            ["CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR"]
                .iter()
                .filter_map(std::env::var_os)
                .find(|dir| !dir.is_empty())
                .map(PathBuf::from)
        })
        .as_deref()
}

/// Settings for `project` (see [`project`]): managed files, `--settings` files, project and user files of both
/// families, and the `AGENT_PERMISSIONS_*` variables.
pub(crate) fn settings(project: &Path, args: &DecideArgs) -> Result<Settings> {
    let discovery = Discovery {
        cwd: project.to_owned(),
        home: home(),
        managed: Discovery::default_managed(),
        cli_files: args.settings.clone(),
    };
    let mut settings = agent_decide::discover_settings(&discovery)?;
    settings.add_env(|name| std::env::var(name).ok())?;
    Ok(settings)
}

/// Adds the settings of the project `cwd` lies in by its own marker, when a declared `project` above it widened
/// the roots past it (a package of a monorepo with a `.claude/` of its own): its project and local files are read
/// as well, their rules anchored at their own folder, so that the package's deny and ask rules still hold there.
fn add_nested_settings(settings: &mut Settings, cwd: &Path, project: &Path) -> Result<()> {
    let nested = agent_rules::project_root(cwd, home().as_deref());
    if nested == project || !nested.starts_with(project) {
        return Ok(());
    }
    let discovery = Discovery {
        cwd: nested.clone(),
        home: None,
        managed: Vec::new(),
        cli_files: Vec::new(),
    };
    for (file, source, _) in discovery.candidates() {
        if file.is_file() {
            settings
                .add_file(&file, source, &nested)
                .with_context(|| format!("in the settings of the nested project `{}`", nested.display()))?;
        }
    }
    Ok(())
}

/// Why the working directory `cwd` may not be a root, when a link leads it out of where it is written to be: into
/// the home directory or a directory that holds it (`proj/hl` made by `ln -s ~ hl`), or out of its project above
/// it. Its resolved place would be granted whole, as the working directory is; no call is decided there, so the
/// agent must go back into the project.
fn linked_out(cwd: &Path, project: &Path) -> Option<String> {
    let written = std::path::absolute(cwd).ok()?;
    let resolved = std::fs::canonicalize(&written).ok()?;
    if resolved == written {
        return None;
    }
    // The home directory itself, as written (through its own link, if it is one), is where a session may work.
    let home_written = home();
    let home = home_written
        .as_ref()
        .and_then(|home| std::fs::canonicalize(home).ok());
    let holds_home = home.as_ref().is_some_and(|home| home.starts_with(&resolved))
        && home_written.as_deref() != Some(written.as_path());
    // Out of the project above it, or, where the working directory is a project of its own (the link's target
    // holds a `.git`), out of the marked project that holds the link.
    let holder = written
        .parent()
        .map(|parent| agent_rules::project_root(parent, home_written.as_deref()))
        .filter(|holder| agent_rules::is_marked_project(holder));
    let out_of = |dir: &Path| std::fs::canonicalize(dir).is_ok_and(|dir| !resolved.starts_with(dir));
    let out_of_project =
        project != written && out_of(project) || holder.is_some_and(|holder| out_of(&holder));
    (holds_home || out_of_project).then(|| {
        format!(
            "the working directory `{}` leads through a link to `{}`, {}; no call is decided there: go back \
             into the project",
            written.display(),
            resolved.display(),
            if holds_home {
                "the home directory or a directory that holds it"
            } else {
                "outside its project"
            }
        )
    })
}

/// What a guard of `cwd` is built with: the home directory, and the project root when it is above `cwd`.
pub(crate) fn guard_options(cwd: &Path, project: &Path) -> GuardOptions {
    GuardOptions {
        cwd: cwd.to_owned(),
        home: home(),
        project: (std::path::absolute(cwd).as_deref().unwrap_or(cwd) != project).then(|| project.to_owned()),
        ..GuardOptions::default()
    }
}

/// The `--mode` argument, parsed.
pub(crate) fn cli_mode(args: &DecideArgs) -> Result<Option<PermissionMode>> {
    args.mode
        .as_deref()
        .map(|m| {
            m.parse::<PermissionMode>()
                .with_context(|| "in `--mode`".to_owned())
        })
        .transpose()
}

/// The guards built, by working directory and mode (or why none could be), hashed with foldhash, seeded per
/// process: every line looks its working directory up.
type BuiltGuards =
    HashMap<(String, Option<PermissionMode>), Result<Arc<Guard>, String>, foldhash::fast::RandomState>;

/// Guards by (working directory, mode), built on first use: `--jsonl` inputs of one project share one.
pub(crate) struct Guards<'a> {
    /// Borrowed for one command; owned by a server, which outlives any borrow of its arguments.
    args: Cow<'a, DecideArgs>,
    cli_mode: Option<PermissionMode>,
    extra_roots: Vec<PathBuf>,
    /// The project the coding agent declared ([`declared_project`]), or the one `agent-guard sandbox --project`
    /// names.
    declared: Option<PathBuf>,
    settings_files: Vec<PathBuf>,
    built: BuiltGuards,
}

impl Guards<'static> {
    /// Guards that keep their own copy of `args`, for a server that builds guards as long as it runs.
    pub(crate) fn owning(args: DecideArgs) -> Result<Self> {
        Self::from_args(Cow::Owned(args))
    }
}

impl<'a> Guards<'a> {
    pub(crate) fn new(args: &'a DecideArgs) -> Result<Self> {
        Self::from_args(Cow::Borrowed(args))
    }

    fn from_args(args: Cow<'a, DecideArgs>) -> Result<Self> {
        Ok(Self {
            cli_mode: cli_mode(&args)?,
            extra_roots: Vec::new(),
            declared: declared_project().map(Path::to_owned),
            settings_files: args
                .settings
                .iter()
                .map(|file| std::path::absolute(file).unwrap_or_else(|_| file.clone()))
                .collect(),
            built: HashMap::default(),
            args,
        })
    }

    /// The `--settings` files as absolute paths, for a command that must find the same settings from elsewhere.
    pub(crate) fn settings_files(&self) -> &[PathBuf] {
        &self.settings_files
    }

    /// The same, with more roots beside each working directory (`agent-guard sandbox --root A --root B`).
    pub(crate) fn with_extra_roots(mut self, roots: Vec<PathBuf>) -> Self {
        self.extra_roots = roots;
        self
    }

    /// The same, with `project` as the declared project in place of the coding agent's (`agent-guard sandbox
    /// --project`, which the hook's wrapping passes so that the sandbox's roots are the decision's).
    pub(crate) fn with_declared_project(mut self, project: Option<PathBuf>) -> Self {
        if project.is_some() {
            self.declared = project;
        }
        self
    }

    /// Forgets the guards of `cwd`, so that the next decision there loads its settings again.
    pub(crate) fn forget(&mut self, cwd: &str) {
        self.built.retain(|(dir, _), _| dir != cwd);
    }

    /// The guard for an input's `cwd` and `permission_mode`; an error when its settings cannot be loaded.
    pub(crate) fn get(&mut self, cwd: &str, input_mode: Option<&str>) -> &Result<Arc<Guard>, String> {
        // `--mode` wins; then the coding agent's mode (the user chose it in that session). An input with an unknown
        // mode name is refused before it gets here (`HookInput::parse`).
        let mode = self.cli_mode.map(|m| (m, Source::CliArg)).or_else(|| {
            input_mode
                .and_then(|m| m.parse::<PermissionMode>().ok())
                .map(|m| (m, Source::Session))
        });
        let args = &*self.args;
        let extra_roots = &self.extra_roots;
        let declared = self.declared.as_deref();
        self.built
            .entry((cwd.to_owned(), mode.map(|m| m.0)))
            .or_insert_with(|| {
                let cwd = PathBuf::from(cwd);
                let build = || -> Result<Arc<Guard>> {
                    let project = project_declared(&cwd, declared);
                    if let Some(why) = linked_out(&cwd, &project) {
                        anyhow::bail!(why);
                    }
                    let mut settings = settings(&project, args)?;
                    if declared.is_some() {
                        add_nested_settings(&mut settings, &cwd, &project)?;
                    }
                    let options = GuardOptions {
                        mode,
                        extra_roots: extra_roots.clone(),
                        auto_allow: args.auto_allow,
                        ..guard_options(&cwd, &project)
                    };
                    Ok(Arc::new(Guard::new(&settings, &options)?))
                };
                build().map_err(|e| format!("{e:#}"))
            })
    }
}
