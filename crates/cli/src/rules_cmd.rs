//! `agent-guard rules`: the effective rules, the mode and the roots; `--check FILE` validates a settings file.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agent_decide::{Guard, GuardOptions};
use agent_tool_traits::Source;
use anyhow::{Context, Result};

use crate::DecideArgs;
use crate::load::{cli_mode, guard_options, project, settings};

pub(crate) fn run(cwd: Option<PathBuf>, check: Option<PathBuf>, args: &DecideArgs) -> Result<ExitCode> {
    let mut out = String::new();
    let code = report(&mut out, cwd, check, args)?;
    crate::emit(out.trim_end())?;
    Ok(code)
}

/// Every problem of one settings file as a line, `file:line:column: what` with the nearest known name: what
/// `rules --check` prints, `doctor` reports and the hook gives as its reason for denying.
pub(crate) fn file_problems(file: &Path) -> Vec<String> {
    agent_decide::check_settings_file(file)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// What a settings file asks that is not applied though the file loads (`agentGuard.commands` entries the shell
/// analyser leaves out), as lines `file:line:column: what`: warnings of `rules --check` and `doctor`.
pub(crate) fn file_warnings(file: &Path) -> Vec<String> {
    agent_decide::settings_file_warnings(file)
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn report(
    out: &mut String,
    cwd: Option<PathBuf>,
    check: Option<PathBuf>,
    args: &DecideArgs,
) -> Result<ExitCode> {
    if let Some(file) = check {
        let errors = file_problems(&file);
        if errors.is_empty() {
            for warning in file_warnings(&file) {
                let _ = writeln!(out, "warning: {warning}");
            }
            let _ = writeln!(out, "{}: ok", file.display());
            return Ok(ExitCode::SUCCESS);
        }
        for error in &errors {
            let _ = writeln!(out, "{error}");
        }
        let _ = writeln!(out, "{}: {} problem(s)", file.display(), errors.len());
        return Ok(ExitCode::FAILURE);
    }
    let cwd = match cwd {
        Some(cwd) => cwd,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let project = project(&cwd);
    let settings = settings(&project, args)?;
    let mode = cli_mode(args)?.map(|m| (m, Source::CliArg));
    let guard = Guard::new(
        &settings,
        &GuardOptions {
            mode,
            ..guard_options(&cwd, &project)
        },
    )?;
    let _ = writeln!(out, "working directory: {}", cwd.display());
    let _ = writeln!(out, "project: {}", project.display());
    let policy = guard.policy();
    let _ = writeln!(
        out,
        "mode: {}{}",
        policy.mode(),
        policy
            .mode_source()
            .map(|s| format!(" (from {s})"))
            .unwrap_or_else(|| " (built-in default)".to_owned())
    );
    let _ = writeln!(out, "\nsettings files (highest precedence first):");
    if settings.files().is_empty() {
        let _ = writeln!(out, "  none: the built-in defaults apply");
    }
    for (file, source) in settings.files() {
        let _ = writeln!(out, "  {source:<8} {}", file.display());
    }
    let _ = writeln!(
        out,
        "\nrules (every deny beats every ask beats every allow; inside one behaviour the higher source wins):"
    );
    let mut rules: Vec<_> = policy.rules().iter().collect();
    rules.sort_by(|a, b| b.behavior.cmp(&a.behavior).then(b.source.cmp(&a.source)));
    if rules.is_empty() {
        let _ = writeln!(out, "  none");
    }
    for rule in rules {
        let _ = writeln!(
            out,
            "  {:<5} {:<8} {}{}",
            rule.behavior.as_str(),
            rule.source.as_str(),
            rule.text,
            rule.file
                .as_ref()
                .map(|f| format!("   ({})", f.display()))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(out, "\nroots:");
    match guard.sandbox() {
        Some(sandbox) => {
            for root in sandbox.roots() {
                let _ = writeln!(
                    out,
                    "  {:<10} {}{}",
                    root.kind().as_str(),
                    root.path().display(),
                    if root.read_only() { " (read-only)" } else { "" }
                );
            }
        }
        None => {
            let _ = writeln!(out, "  none: the working directory cannot be a root");
        }
    }
    for note in policy.notes() {
        let _ = writeln!(out, "\nnote: {note}");
    }
    for (file, why) in agent_decide::repository_settings_not_applied(&settings) {
        let _ = writeln!(out, "\nnote: {}: {why}", file.display());
    }
    Ok(ExitCode::SUCCESS)
}
