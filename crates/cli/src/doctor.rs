//! `agent-guard doctor`: whether agent-guard guards the coding agent here, one checked line at a time.

use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use agent_decide::{DecisionBound, HookInput};
use agent_rules::{Discovery, PermissionMode};
use anyhow::Result;
use serde_json::{Value, json};

use crate::DecideArgs;
use crate::check::{Bound, decide_hook_input, hook_deadline};
use crate::hook_entry::{command_words, installed_hooks};
use crate::install::{Scope, project_dir, running_binary};
use crate::load::{Guards, home};
use agent_decide::AutoAllow;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    Ok,
    /// Works, but something deserves attention.
    Warning,
    /// agent-guard does not guard the coding agent as it should: `doctor` exits 1.
    Problem,
}

impl Level {
    const fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Warning => "warning",
            Self::Problem => "problem",
        }
    }

    const fn colour(self) -> &'static str {
        match self {
            Self::Ok => "32",
            Self::Warning => "33",
            Self::Problem => "31",
        }
    }
}

/// One line of the report: what was checked, how it came out, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DoctorLine {
    pub(crate) level: Level,
    pub(crate) topic: &'static str,
    pub(crate) text: String,
    pub(crate) fix: Option<String>,
}

impl DoctorLine {
    fn new(level: Level, topic: &'static str, text: impl Into<String>) -> Self {
        Self {
            level,
            topic,
            text: text.into(),
            fix: None,
        }
    }

    fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }
}

pub(crate) fn run(cwd: Option<&Path>) -> Result<ExitCode> {
    // A subdirectory of a project is checked as the project, the way `check` finds its settings and roots.
    let project = crate::load::project(&project_dir(cwd)?);
    let home = home();
    let exe = running_binary();
    let mut lines = vec![binary_line(exe.as_deref())];
    let exe = exe.unwrap_or_default();
    lines.extend(hook_lines(home.as_deref(), &project, &exe));
    lines.extend(settings_lines(home.as_deref(), &project));
    lines.extend(decision_lines(&project));
    lines.push(kernel_line());
    lines.extend(server_line());
    crate::emit(&render(&project, &lines))?;
    Ok(if lines.iter().any(|l| l.level == Level::Problem) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn render(project: &Path, lines: &[DoctorLine]) -> String {
    let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut out = format!("agent-guard doctor, project `{}`\n\n", project.display());
    for line in lines {
        let level = format!("{:<8}", line.level.as_str());
        let level = if colour {
            format!("\x1b[1;{}m{level}\x1b[0m", line.level.colour())
        } else {
            level
        };
        let _ = writeln!(out, "{level} {:<9}{}", line.topic, line.text);
        if let Some(fix) = &line.fix {
            let _ = writeln!(out, "{:18}-> {fix}", "");
        }
    }
    let count = |level| lines.iter().filter(|l| l.level == level).count();
    let (problems, warnings) = (count(Level::Problem), count(Level::Warning));
    let _ = write!(
        out,
        "\n{problems} problem{}, {warnings} warning{}",
        if problems == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" }
    );
    out
}

fn binary_line(exe: Result<&Path, &anyhow::Error>) -> DoctorLine {
    let exe = match exe {
        Ok(exe) => exe,
        Err(e) => return DoctorLine::new(Level::Problem, "binary", format!("{e:#}")),
    };
    let line = DoctorLine::new(
        Level::Ok,
        "binary",
        format!("`{}`, agent-guard {}", exe.display(), crate::VERSION),
    );
    match find_on_path("agent-guard") {
        Some(other) if std::fs::canonicalize(&other).ok().as_deref() != Some(exe) => DoctorLine {
            level: Level::Warning,
            text: format!(
                "{}; `agent-guard` on PATH is another one, `{}`",
                line.text,
                other.display()
            ),
            ..line
        }
        .fix("this report is about the agent-guard that runs it; run the one the hook runs"),
        _ => line,
    }
}

/// The agent-guard hook in each scope's settings file, and a problem when no scope has one.
fn hook_lines(home: Option<&Path>, project: &Path, exe: &Path) -> Vec<DoctorLine> {
    let mut lines = Vec::new();
    let mut found = 0_usize;
    let mut looked = Vec::new();
    for scope in Scope::ALL {
        let Some(file) = scope.file(home, project) else {
            lines.push(DoctorLine::new(
                Level::Warning,
                "hook",
                "HOME is not set, so the user scope cannot be checked",
            ));
            continue;
        };
        looked.push(format!("`{}` ({})", file.display(), scope.as_str()));
        // A file that cannot be read or parsed is reported with the settings files.
        let Some(value) = std::fs::read_to_string(&file)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        else {
            continue;
        };
        for hook in installed_hooks(&value, exe) {
            found += 1;
            let matcher = hook.matcher.as_deref().unwrap_or("");
            let timeout = hook
                .timeout
                .map_or_else(|| "no timeout".to_owned(), |t| format!("timeout {t} s"));
            let text = format!(
                "{} scope, `{}` runs `{}` (matcher `{matcher}`, {timeout})",
                scope.as_str(),
                file.display(),
                hook.command
            );
            let reinstall = format!("run `agent-guard install --scope {}` again", scope.as_str());
            let line = match resolve_program(&hook.command, home) {
                Err(why) => DoctorLine::new(
                    Level::Problem,
                    "hook",
                    format!("{text}: {why}, so the coding agent cannot run the hook and runs every call without it"),
                )
                .fix(reinstall),
                Ok(program) if program != exe => {
                    DoctorLine::new(Level::Warning, "hook", format!("{text}: another agent-guard than this one"))
                        .fix(format!("{reinstall} with the agent-guard you mean to use"))
                }
                Ok(_) => match hook.timeout {
                    Some(t) if t <= hook_deadline().as_secs() => DoctorLine::new(
                        Level::Warning,
                        "hook",
                        format!(
                            "{text}: the timeout is not above the hook's own deadline ({} s), so the coding agent \
                             may stop it first and run the call without a decision",
                            hook_deadline().as_secs()
                        ),
                    )
                    .fix(reinstall),
                    _ if matcher != "*" && !matcher.is_empty() => DoctorLine::new(
                        Level::Ok,
                        "hook",
                        format!("{text}; tools the matcher leaves out are not checked"),
                    ),
                    _ => DoctorLine::new(Level::Ok, "hook", text),
                },
            };
            lines.push(line);
        }
    }
    if found == 0 {
        lines.push(
            DoctorLine::new(
                Level::Problem,
                "hook",
                format!(
                    "agent-guard is not installed as a PreToolUse hook in {}: the coding agent decides alone",
                    looked.join(", ")
                ),
            )
            .fix(
                "run `agent-guard install` (every project) or `agent-guard install --scope local` (this one)",
            ),
        );
    }
    lines
}

/// The executable a hook command runs, canonical; the error says why there is none.
fn resolve_program(command: &str, home: Option<&Path>) -> Result<PathBuf, String> {
    let Some(program) = command_words(command, 1).into_iter().next() else {
        return Err("the command is empty".to_owned());
    };
    // The shell expands a leading `~/` or `$HOME/` before running the program.
    let in_home = ["~/", "$HOME/", "${HOME}/"]
        .iter()
        .find_map(|prefix| program.strip_prefix(prefix));
    let path = match (in_home, home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(&program),
    };
    let path = if path.is_absolute() {
        path
    } else if program.contains('/') {
        return Err(format!(
            "`{program}` is a relative path, which depends on the directory the coding agent runs hooks in"
        ));
    } else {
        find_on_path(&program).ok_or_else(|| format!("`{program}` is not on PATH"))?
    };
    if !is_executable(&path) {
        return Err(format!("`{}` is not an executable file", path.display()));
    }
    std::fs::canonicalize(&path).map_err(|e| format!("`{}` cannot be resolved ({e})", path.display()))
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Every settings file the discovery finds, checked like `rules --check`.
fn settings_lines(home: Option<&Path>, project: &Path) -> Vec<DoctorLine> {
    let discovery = Discovery {
        cwd: project.to_owned(),
        home: home.map(Path::to_owned),
        managed: Discovery::default_managed(),
        cli_files: Vec::new(),
    };
    // What the repository's own files set that is not applied (they may only tighten the sandbox).
    let not_applied = agent_decide::discover_settings(&discovery)
        .map(|settings| agent_decide::repository_settings_not_applied(&settings))
        .unwrap_or_default();
    let mut lines = Vec::new();
    for (file, source, _) in discovery.candidates() {
        if std::fs::symlink_metadata(&file).is_err() {
            continue;
        }
        let problems = crate::rules_cmd::file_problems(&file);
        let name = format!("`{}` ({source})", file.display());
        let mut warnings = crate::rules_cmd::file_warnings(&file);
        warnings.extend(
            not_applied
                .iter()
                .filter(|(of, _)| *of == file)
                .map(|(_, why)| why.clone()),
        );
        lines.push(if problems.is_empty() && warnings.is_empty() {
            DoctorLine::new(Level::Ok, "settings", format!("{name}: valid"))
        } else if problems.is_empty() {
            DoctorLine::new(
                Level::Warning,
                "settings",
                format!("{name}: loads, but {}", warnings.join("; ")),
            )
            .fix("remove what is not applied, or move it where it applies")
        } else {
            DoctorLine::new(
                Level::Problem,
                "settings",
                format!("{name}: {}", problems.join("; ")),
            )
            .fix(format!(
                "correct the file (`agent-guard rules --check {}`); until then every call is denied",
                file.display()
            ))
        });
    }
    if lines.is_empty() {
        lines.push(DoctorLine::new(
            Level::Ok,
            "settings",
            "no settings files: the built-in defaults apply",
        ));
    }
    lines
}

/// The effective mode and one sample decision, made the way `check` makes it (settings loaded for the project,
/// the decision bounded), with its time.
fn decision_lines(project: &Path) -> Vec<DoctorLine> {
    let args = DecideArgs {
        settings: Vec::new(),
        mode: None,
        auto_allow: None,
    };
    let mut guards = match Guards::new(&args) {
        Ok(guards) => guards,
        Err(e) => return vec![DoctorLine::new(Level::Problem, "decision", format!("{e:#}"))],
    };
    let input = HookInput {
        session_id: "doctor".to_owned(),
        cwd: project.display().to_string(),
        permission_mode: None,
        hook_event_name: Some("PreToolUse".to_owned()),
        tool_name: "Bash".to_owned(),
        tool_input: json!({ "command": "ls" }),
        tool_use_id: None,
    };
    let started = Instant::now();
    // A panic of the decision (a bug) is a problem line here, not the end of the report.
    let decided = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        decide_hook_input(&mut guards, &input, false, Bound::Worker)
    }));
    let elapsed = started.elapsed();
    let limit = DecisionBound::from_env().limit();
    let contained_line;
    let mode_line = match guards.get(&input.cwd, None) {
        Err(why) => {
            return vec![
                DoctorLine::new(
                    Level::Problem,
                    "decision",
                    format!("every call is denied: the settings cannot be loaded: {why}"),
                )
                .fix("correct the file it names"),
            ];
        }
        Ok(guard) => {
            contained_line = auto_allow_line(guard.auto_allow());
            let policy = guard.policy();
            let from = policy
                .mode_source()
                .map_or_else(|| "built-in default".to_owned(), |s| format!("from {s} settings"));
            let text = format!("{} ({from})", policy.mode());
            match policy.mode() {
                PermissionMode::BypassPermissions => DoctorLine::new(
                    Level::Warning,
                    "mode",
                    format!("{text}: only deny rules, layer denials and safety asks stop a call"),
                ),
                PermissionMode::Default
                | PermissionMode::AcceptEdits
                | PermissionMode::Plan
                | PermissionMode::DontAsk
                | PermissionMode::Auto
                | PermissionMode::Bubble => DoctorLine::new(Level::Ok, "mode", text),
            }
        }
    };
    let ms = elapsed.as_secs_f64() * 1000.0;
    let decision_line = match decided {
        Err(_) => DoctorLine::new(
            Level::Problem,
            "decision",
            "`ls` was not decided: the decision stopped with an internal error",
        ),
        Ok(_) if elapsed >= limit => DoctorLine::new(
            Level::Problem,
            "decision",
            format!("`ls` took {ms:.0} ms, past the bound of {} ms", limit.as_millis()),
        )
        .fix("something makes loading or deciding slow: try `agent-guard explain -c ls`"),
        Ok(output) => DoctorLine::new(
            Level::Ok,
            "decision",
            format!(
                "Bash `ls` here: {} in {ms:.1} ms (settings loaded, rules compiled, decided){}",
                output.decision(),
                if output.updated_input().is_some() {
                    ", wrapped in the kernel sandbox"
                } else {
                    ""
                }
            ),
        ),
    };
    vec![mode_line, contained_line, decision_line]
}

/// Whether a shell line that asks only for what the kernel sandbox contains runs inside it without asking, and
/// why not.
fn auto_allow_line(auto_allow: &AutoAllow) -> DoctorLine {
    match auto_allow {
        AutoAllow::On => DoctorLine::new(
            Level::Ok,
            "contain",
            "on: a shell line that asks only for what the kernel sandbox contains (writes in the project, the \
             project's code, the network to allowed domains) runs inside it without asking",
        ),
        AutoAllow::Off(why) => DoctorLine::new(
            Level::Warning,
            "contain",
            format!("off: {why}; builds, tests and installs ask every time"),
        )
        .fix("see docs/sandbox.md, \"Contained allows\""),
    }
}

/// What the kernel can enforce for allowed calls, from the sandbox probe: allowed shell commands run under
/// Landlock and seccomp only where the kernel has both.
pub(crate) fn kernel_line() -> DoctorLine {
    let support = agent_os_sandbox::KernelSupport::probe();
    let isolation = match support.namespaces {
        agent_os_sandbox::Namespaces::Privileged => "namespaces as root",
        agent_os_sandbox::Namespaces::User => "namespaces in a user namespace",
        agent_os_sandbox::Namespaces::Unavailable => "no namespaces",
    };
    match support.missing() {
        None => DoctorLine::new(
            Level::Ok,
            "kernel",
            format!(
                "Landlock ABI {}, seccomp, {isolation}{}: allowed shell commands run under the kernel sandbox",
                support.landlock_abi,
                if support.pids_cgroup { ", a pids cgroup" } else { "" }
            ),
        ),
        Some(why) => DoctorLine::new(
            Level::Warning,
            "kernel",
            format!("{why}: allowed shell commands run unconfined, on the analysis alone"),
        )
        .fix(
            "use a kernel with Landlock and seccomp (Linux 5.13+), or set `agentGuard.sandbox` to `\"required\"` \
             so that such allows ask instead",
        ),
    }
}

/// The approval server named by `AGENT_GUARD_SERVER`, when one is: asked for its pending asks with the token of
/// `AGENT_GUARD_TOKEN`. A server that cannot be reached is a warning (`check --server` then lets the coding agent
/// ask in its terminal); one that refuses the token is a problem (every ask would fall back the same way).
pub(crate) fn server_line() -> Option<DoctorLine> {
    let server = std::env::var("AGENT_GUARD_SERVER")
        .ok()
        .filter(|s| !s.trim().is_empty())?;
    Some(match crate::remote::probe(&server) {
        Ok(pending) => DoctorLine::new(
            Level::Ok,
            "server",
            format!("`{server}` answers and accepts the token ({pending} asks waiting)"),
        ),
        Err(crate::remote::ProbeError::Refused(why)) => DoctorLine::new(
            Level::Problem,
            "server",
            format!("`{server}` refuses the token of AGENT_GUARD_TOKEN: {why}"),
        )
        .fix("set AGENT_GUARD_TOKEN to the token `agent-guard serve` printed"),
        Err(crate::remote::ProbeError::Unreachable(why)) => DoctorLine::new(
            Level::Warning,
            "server",
            format!("`{server}` cannot be reached: {why}; asks go to the terminal instead"),
        )
        .fix("start `agent-guard serve`, or unset AGENT_GUARD_SERVER"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_in_home_and_on_path_resolve_and_others_say_why_not() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let program = bin.join("agent-guard");
        std::fs::copy("/bin/sh", &program).unwrap();
        let expected = std::fs::canonicalize(&program).unwrap();
        for command in [
            "~/bin/agent-guard check",
            "$HOME/bin/agent-guard check",
            "${HOME}/bin/agent-guard check",
        ] {
            assert_eq!(
                resolve_program(command, Some(tmp.path())),
                Ok(expected.clone()),
                "{command}"
            );
        }
        let quoted = format!("'{}' check", program.display());
        assert_eq!(resolve_program(&quoted, None), Ok(expected));
        let not_executable = tmp.path().join("data");
        std::fs::write(&not_executable, "x").unwrap();
        for (command, why) in [
            (
                format!("{} check", not_executable.display()),
                "is not an executable file",
            ),
            ("./agent-guard check".to_owned(), "is a relative path"),
            ("no-such-program-anywhere check".to_owned(), "is not on PATH"),
            (String::new(), "the command is empty"),
        ] {
            let error = resolve_program(&command, None).unwrap_err();
            assert!(error.contains(why), "{command}: {error}");
        }
    }
}
