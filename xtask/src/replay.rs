//! `cargo xtask replay`: decides the replay set (shell commands real coding agents ran, benches/replay/) with the
//! release `agent-guard check --jsonl` in a scratch project, once per permission mode, and reports how often each
//! mode interrupts the user: an ask is a prompt the user answers, a deny a call they cannot even approve.

mod class;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use agent_guard_benches::replay::{self, ReplayCommand, Scratch};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use class::Class;

/// The permission modes replayed, in report order.
const MODES: [&str; 4] = ["default", "acceptEdits", "plan", "bypassPermissions"];

const USAGE: &str = "usage: cargo xtask replay [--commands FILE] [--settings FILE] [--json] [--no-build] \
                     [--show allow|ask|deny [--class CLASS] [--mode MODE]] [--reasons [--mode MODE]]";

/// What `cargo xtask replay` was asked for.
#[derive(Debug, Default, PartialEq, Eq)]
struct Options {
    /// The replay set (default: `AGENT_GUARD_REPLAY`, else benches/replay/commands.jsonl).
    commands: Option<PathBuf>,
    /// The user's own settings (`~/.claude/settings.json` of the scratch home), e.g. the rules "don't ask again"
    /// would have saved; default: none.
    settings: Option<PathBuf>,
    /// The figures as JSON instead of tables.
    json: bool,
    /// Use the release binary as it is.
    no_build: bool,
    /// List the in-project commands of this outcome with their reasons.
    show: Option<Outcome>,
    /// With `--show`: only this class.
    class: Option<Class>,
    /// With `--show` or `--reasons`: this mode (default: `default`).
    mode: Option<&'static str>,
    /// The reasons of the in-project interruptions, grouped, most frequent first.
    reasons: bool,
}

/// A decision as the report counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Outcome {
    Allow,
    Ask,
    Deny,
    /// `check --jsonl` answered the line with an error (it cannot decide it); the agent blocks such a call.
    Error,
}

impl Outcome {
    const ALL: [Outcome; 4] = [Outcome::Allow, Outcome::Ask, Outcome::Deny, Outcome::Error];

    fn name(self) -> &'static str {
        match self {
            Outcome::Allow => "allow",
            Outcome::Ask => "ask",
            Outcome::Deny => "deny",
            Outcome::Error => "error",
        }
    }

    fn parse(name: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|outcome| outcome.name() == name)
    }

    /// Whether the user is interrupted: asked, or refused a call they wanted.
    fn interrupts(self) -> bool {
        self != Outcome::Allow
    }
}

/// One replayed command: its class, whether it stays in the project, and its decision in each mode.
#[derive(Debug)]
struct Replayed {
    command: ReplayCommand,
    class: Class,
    in_project: bool,
    /// Per mode (in [`MODES`] order): the outcome and its reason.
    decisions: Vec<(Outcome, String)>,
}

pub(crate) fn run(args: &[String]) -> Result<()> {
    if args.iter().any(|arg| arg == "--help" || arg == "-h") {
        println!("{USAGE}");
        return Ok(());
    }
    let options = parse_args(args)?;
    let path = options.commands.clone().unwrap_or_else(replay::default_path);
    let commands = replay::load(&path).with_context(|| {
        format!(
            "cannot read the replay set {} (benches/replay/README.md says how it is made; `--commands FILE` or \
             {} name another)",
            path.display(),
            replay::REPLAY_ENV
        )
    })?;
    if !options.no_build {
        crate::cargo(
            &[
                "build",
                "--release",
                "--locked",
                "-p",
                "agent-guard",
                "--bin",
                "agent-guard",
            ],
            &[],
        )?;
    }
    let binary = crate::target_dir().join("release").join("agent-guard");
    let base = tempfile::tempdir().context("cannot make the scratch directory")?;
    let scratch = Scratch::create(base.path(), &commands).context("cannot make the scratch project")?;
    if let Some(settings) = &options.settings {
        let claude = scratch.home.join(".claude");
        std::fs::create_dir_all(&claude).with_context(|| format!("cannot make {}", claude.display()))?;
        std::fs::copy(settings, claude.join("settings.json"))
            .with_context(|| format!("cannot copy the settings {}", settings.display()))?;
    }
    let mut per_mode = Vec::new();
    for mode in MODES {
        let started = std::time::Instant::now();
        per_mode.push(decide_all(&binary, &scratch, &commands, mode)?);
        eprintln!(
            "replay: {mode}: {} commands decided in {:.1?}",
            commands.len(),
            started.elapsed()
        );
    }
    let replayed: Vec<Replayed> = commands
        .into_iter()
        .enumerate()
        .map(|(index, command)| Replayed {
            class: class::classify(&command.command),
            in_project: class::in_project(&command.command),
            decisions: per_mode
                .iter()
                .map(|decisions| {
                    decisions
                        .get(index)
                        .cloned()
                        .unwrap_or((Outcome::Error, String::new()))
                })
                .collect(),
            command,
        })
        .collect();
    let mode_index = MODES
        .iter()
        .position(|m| Some(*m) == options.mode)
        .unwrap_or_default();
    let out = if let Some(outcome) = options.show {
        show(&replayed, outcome, options.class, mode_index)
    } else if options.reasons {
        reasons(&replayed, mode_index)
    } else if options.json {
        format!("{:#}\n", figures_json(&replayed, &path))
    } else {
        tables(&replayed, &path)
    };
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(())
}

fn parse_args(args: &[String]) -> Result<Options> {
    let mut options = Options::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .cloned()
                .with_context(|| format!("`{name}` needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--commands" => options.commands = Some(PathBuf::from(value("--commands")?)),
            "--settings" => options.settings = Some(PathBuf::from(value("--settings")?)),
            "--json" => options.json = true,
            "--no-build" => options.no_build = true,
            "--reasons" => options.reasons = true,
            "--show" => {
                let name = value("--show")?;
                options.show = Some(
                    Outcome::parse(&name).with_context(|| format!("unknown outcome `{name}`\n{USAGE}"))?,
                );
            }
            "--class" => {
                let name = value("--class")?;
                let names: Vec<&str> = Class::ALL.iter().map(|c| c.name()).collect();
                options.class = Some(
                    Class::parse(&name)
                        .with_context(|| format!("unknown class `{name}` (one of {})", names.join(", ")))?,
                );
            }
            "--mode" => {
                let name = value("--mode")?;
                options.mode = Some(
                    MODES
                        .into_iter()
                        .find(|m| *m == name)
                        .with_context(|| format!("unknown mode `{name}` (one of {})", MODES.join(", ")))?,
                );
            }
            other => bail!("unknown argument `{other}`\n{USAGE}"),
        }
    }
    if options.class.is_some() && options.show.is_none() {
        bail!("`--class` goes with `--show`\n{USAGE}");
    }
    Ok(options)
}

/// Every command decided by `agent-guard check --jsonl --mode MODE` in the scratch project, in order: the
/// outcome and the reason of each.
fn decide_all(
    binary: &Path,
    scratch: &Scratch,
    commands: &[ReplayCommand],
    mode: &str,
) -> Result<Vec<(Outcome, String)>> {
    let input: String = commands
        .iter()
        .map(|command| {
            let (cwd, line) = scratch.localize(command);
            let hook = json!({
                "session_id": "replay",
                "transcript_path": scratch.home.join(".claude").join("replay.jsonl"),
                "cwd": cwd,
                "permission_mode": mode,
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": { "command": line },
            });
            format!("{hook}\n")
        })
        .collect();
    let mut child = Command::new(binary)
        .args(["check", "--jsonl", "--mode", mode])
        .current_dir(&scratch.project)
        .env("HOME", &scratch.home)
        // The coding agent tells its hooks the project the session was started in, as Claude Code does.
        .env("CLAUDE_PROJECT_DIR", &scratch.project)
        .env_remove("AGENT_GUARD_SERVER")
        .env_remove("AGENT_GUARD_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run `{} check --jsonl`", binary.display()))?;
    let mut stdin = child.stdin.take().context("no stdin")?;
    // The answers come while the input is still being written: write from another thread.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let stdout = child.stdout.take().context("no stdout")?;
    let mut decisions = Vec::with_capacity(commands.len());
    // Reasons name the scratch paths; the report writes them as the set does.
    let project = scratch.project.to_string_lossy();
    let home = scratch.home.to_string_lossy();
    for line in BufReader::new(stdout).lines() {
        let (outcome, reason) = outcome_of(&line?);
        let reason = reason
            .replace(&*project, replay::PROJECT_PLACEHOLDER)
            .replace(&*home, replay::HOME_PLACEHOLDER);
        decisions.push((outcome, reason));
    }
    writer
        .join()
        .map_err(|_| anyhow::anyhow!("the writer thread panicked"))?
        .context("cannot write to `agent-guard check --jsonl`")?;
    // Exit code 1 only says that some line was answered with an error, which is counted.
    child.wait()?;
    if decisions.len() != commands.len() {
        bail!(
            "`agent-guard check --jsonl` answered {} of {} lines in mode {mode}",
            decisions.len(),
            commands.len()
        );
    }
    Ok(decisions)
}

/// The outcome and the reason of one output line of `check --jsonl`.
fn outcome_of(line: &str) -> (Outcome, String) {
    let value: Value = serde_json::from_str(line).unwrap_or(Value::Null);
    if let Some(error) = value.get("error").and_then(Value::as_str) {
        return (Outcome::Error, error.to_owned());
    }
    let output = value.get("hookSpecificOutput");
    let field = |name: &str| output.and_then(|o| o.get(name)).and_then(Value::as_str);
    let reason = field("permissionDecisionReason")
        .unwrap_or_default()
        .trim_start_matches("agent-guard: ")
        .to_owned();
    let outcome = match field("permissionDecision") {
        Some("allow") => Outcome::Allow,
        Some("ask") => Outcome::Ask,
        Some("deny") => Outcome::Deny,
        _ => Outcome::Error,
    };
    (outcome, reason)
}

/// Counts of outcomes over some commands in one mode.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    total: usize,
    counts: [usize; 4],
}

impl Tally {
    fn of<'a>(commands: impl Iterator<Item = &'a Replayed>, mode: usize) -> Self {
        let mut tally = Tally::default();
        for replayed in commands {
            let outcome = replayed.decisions.get(mode).map_or(Outcome::Error, |(o, _)| *o);
            tally.total += 1;
            if let Some(count) = tally.counts.get_mut(outcome as usize) {
                *count += 1;
            }
        }
        tally
    }

    fn count(&self, outcome: Outcome) -> usize {
        self.counts.get(outcome as usize).copied().unwrap_or_default()
    }

    fn interrupts(&self) -> usize {
        Outcome::ALL
            .into_iter()
            .filter(|o| o.interrupts())
            .map(|o| self.count(o))
            .sum()
    }

    fn percent(&self, count: usize) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            100.0 * count as f64 / self.total as f64
        }
    }

    fn json(&self) -> Value {
        let rate = |count: usize| (self.percent(count) * 10.0).round() / 10.0;
        json!({
            "commands": self.total,
            "allow": rate(self.count(Outcome::Allow)),
            "ask": rate(self.count(Outcome::Ask)),
            "deny": rate(self.count(Outcome::Deny)),
            "error": rate(self.count(Outcome::Error)),
            "interrupts": rate(self.interrupts()),
        })
    }
}

fn tables(replayed: &[Replayed], path: &Path) -> String {
    let in_project: Vec<&Replayed> = replayed.iter().filter(|r| r.in_project).collect();
    let sources = replayed
        .iter()
        .map(|r| r.command.source.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let mut out = format!(
        "replay of {} shell commands from {sources} public repositories ({}); {} stay in the project\n\
         rates are of the in-project commands; interrupts = ask + deny (+ error)\n\n",
        replayed.len(),
        path.display(),
        in_project.len()
    );
    let _ = writeln!(
        out,
        "{:<18} {:>7} {:>7} {:>7} {:>11} {:>20}",
        "mode", "allow", "ask", "deny", "interrupts", "interrupts (all)"
    );
    for (index, mode) in MODES.iter().enumerate() {
        let tally = Tally::of(in_project.iter().copied(), index);
        let all = Tally::of(replayed.iter(), index);
        let _ = writeln!(
            out,
            "{mode:<18} {:>6.1}% {:>6.1}% {:>6.1}% {:>10.1}% {:>19.1}%",
            tally.percent(tally.count(Outcome::Allow)),
            tally.percent(tally.count(Outcome::Ask)),
            tally.percent(tally.count(Outcome::Deny)),
            tally.percent(tally.interrupts()),
            all.percent(all.interrupts()),
        );
    }
    for (index, mode) in MODES.iter().enumerate() {
        let _ = writeln!(
            out,
            "\n{mode}: by class (in-project commands)\n{:<10} {:>6} {:>7} {:>7} {:>7} {:>11}",
            "class", "n", "allow", "ask", "deny", "interrupts"
        );
        for class in Class::ALL {
            let tally = Tally::of(in_project.iter().copied().filter(|r| r.class == class), index);
            let _ = writeln!(
                out,
                "{:<10} {:>6} {:>6.1}% {:>6.1}% {:>6.1}% {:>10.1}%",
                class.name(),
                tally.total,
                tally.percent(tally.count(Outcome::Allow)),
                tally.percent(tally.count(Outcome::Ask)),
                tally.percent(tally.count(Outcome::Deny)),
                tally.percent(tally.interrupts()),
            );
        }
    }
    out
}

fn figures_json(replayed: &[Replayed], path: &Path) -> Value {
    let in_project: Vec<&Replayed> = replayed.iter().filter(|r| r.in_project).collect();
    let modes: serde_json::Map<String, Value> = MODES
        .iter()
        .enumerate()
        .map(|(index, mode)| {
            let classes: serde_json::Map<String, Value> = Class::ALL
                .into_iter()
                .map(|class| {
                    let tally = Tally::of(in_project.iter().copied().filter(|r| r.class == class), index);
                    (class.name().to_owned(), tally.json())
                })
                .collect();
            let figures = json!({
                "in_project": Tally::of(in_project.iter().copied(), index).json(),
                "all": Tally::of(replayed.iter(), index).json(),
                "classes": classes,
            });
            ((*mode).to_owned(), figures)
        })
        .collect();
    json!({
        "commands": replayed.len(),
        "in_project": in_project.len(),
        "set": path,
        "modes": modes,
    })
}

/// The in-project commands decided `outcome` in mode `mode` (of class `class`), with their reasons.
fn show(replayed: &[Replayed], outcome: Outcome, class: Option<Class>, mode: usize) -> String {
    let mut out = String::new();
    for r in replayed
        .iter()
        .filter(|r| r.in_project && class.is_none_or(|c| c == r.class))
    {
        let Some((decided, reason)) = r.decisions.get(mode) else {
            continue;
        };
        if *decided == outcome {
            let _ = writeln!(
                out,
                "[{}] {}\n    {}: {reason}",
                r.class.name(),
                r.command.command.replace('\n', "\n    "),
                outcome.name()
            );
        }
    }
    out
}

/// The reasons of the in-project interruptions in mode `mode`, grouped by their wording with the names of
/// programs, paths and numbers taken out, most frequent first, each with an example command.
fn reasons(replayed: &[Replayed], mode: usize) -> String {
    let mut groups: BTreeMap<String, (usize, &str, BTreeMap<&'static str, usize>)> = BTreeMap::new();
    for r in replayed.iter().filter(|r| r.in_project) {
        let Some((outcome, reason)) = r.decisions.get(mode) else {
            continue;
        };
        if !outcome.interrupts() {
            continue;
        }
        let key = format!("{}: {}", outcome.name(), reason_shape(reason));
        let entry = groups
            .entry(key)
            .or_insert((0, r.command.command.as_str(), BTreeMap::new()));
        entry.0 += 1;
        *entry.2.entry(r.class.name()).or_default() += 1;
    }
    let mut sorted: Vec<_> = groups.into_iter().collect();
    sorted.sort_by(|a, b| b.1.0.cmp(&a.1.0).then_with(|| a.0.cmp(&b.0)));
    let mut out = String::new();
    for (shape, (count, example, classes)) in sorted {
        let classes: Vec<String> = classes.iter().map(|(c, n)| format!("{c} {n}")).collect();
        let example: String = example.chars().take(120).collect();
        let _ = writeln!(
            out,
            "{count:>5}  {shape}\n       classes: {}\n       e.g. {}",
            classes.join(", "),
            example.replace('\n', "⏎")
        );
    }
    out
}

/// A reason with what names one command taken out, so that alike reasons group: in each of its parts (`; `
/// between them, repeats dropped) the first backquoted text keeps only its program (and the subcommand of a
/// program that has them), other backquoted text becomes `…`, numbers become `N`.
fn reason_shape(reason: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    for part in reason.split("; ") {
        let shape = part_shape(part);
        if !parts.contains(&shape) {
            parts.push(shape);
        }
    }
    parts.join("; ")
}

fn part_shape(part: &str) -> String {
    let mut out = String::new();
    let mut segments = part.split('`');
    let mut quoted_seen = 0;
    if let Some(first) = segments.next() {
        push_unnumbered(&mut out, first);
    }
    for (index, segment) in segments.enumerate() {
        if index % 2 == 1 {
            push_unnumbered(&mut out, segment);
            continue;
        }
        quoted_seen += 1;
        if quoted_seen == 1 {
            let _ = write!(out, "`{}`", program_of(segment));
        } else {
            out.push_str("`…`");
        }
    }
    out
}

/// The program of a command line, with its subcommand for the programs that take one (`git commit`).
fn program_of(line: &str) -> String {
    let words: Vec<&str> = line.split_whitespace().filter(|w| !w.contains('=')).collect();
    let Some(program) = words.first() else {
        return "…".to_owned();
    };
    let program = program
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(program);
    let with_sub = matches!(
        program,
        "git"
            | "npm"
            | "pnpm"
            | "yarn"
            | "bun"
            | "cargo"
            | "go"
            | "uv"
            | "gh"
            | "docker"
            | "npx"
            | "make"
            | "pip"
    );
    match words.get(1) {
        Some(sub) if with_sub && !sub.starts_with('-') => format!("{program} {sub}"),
        _ if line.split_whitespace().count() > 1 => format!("{program} …"),
        _ => program.to_owned(),
    }
}

fn push_unnumbered(out: &mut String, text: &str) {
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !out.ends_with('N') {
                out.push('N');
            }
        } else {
            out.push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn the_arguments_name_an_outcome_a_class_and_a_mode() {
        let options = parse_args(&strings(&[
            "--show",
            "ask",
            "--class",
            "build",
            "--mode",
            "acceptEdits",
        ]));
        assert_eq!(
            options.ok(),
            Some(Options {
                show: Some(Outcome::Ask),
                class: Some(Class::Build),
                mode: Some("acceptEdits"),
                ..Options::default()
            })
        );
        assert!(parse_args(&strings(&["--show", "maybe"])).is_err());
        assert!(
            parse_args(&strings(&["--class", "build"])).is_err(),
            "a class without --show"
        );
        assert!(parse_args(&strings(&["--mode", "auto"])).is_err());
        assert!(parse_args(&strings(&["--commands"])).is_err());
    }

    #[test]
    fn an_output_line_gives_its_decision_and_reason() {
        let ask = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"agent-guard: `cargo` runs code"}}"#;
        assert_eq!(outcome_of(ask), (Outcome::Ask, "`cargo` runs code".to_owned()));
        assert_eq!(
            outcome_of(r#"{"error":"line 3: bad"}"#),
            (Outcome::Error, "line 3: bad".to_owned())
        );
        assert_eq!(outcome_of("not json").0, Outcome::Error);
    }

    #[test]
    fn a_reason_shape_leaves_out_names_and_numbers() {
        assert_eq!(
            reason_shape("`npm install x` at line 12 writes `/x/y`, 3 times"),
            "`npm install` at line N writes `…`, N times"
        );
        assert_eq!(
            reason_shape("`curl -s a` uses the network; `curl b` uses the network"),
            "`curl …` uses the network"
        );
        assert_eq!(
            reason_shape("`/usr/bin/make` is not known"),
            "`make` is not known"
        );
    }

    #[test]
    fn a_tally_counts_interruptions_of_one_mode() {
        let replayed = |outcome: Outcome| Replayed {
            command: ReplayCommand {
                source: "o/r".into(),
                cwd: ".".into(),
                command: "ls".into(),
            },
            class: Class::Read,
            in_project: true,
            decisions: vec![(Outcome::Allow, String::new()), (outcome, String::new())],
        };
        let set = [
            replayed(Outcome::Ask),
            replayed(Outcome::Deny),
            replayed(Outcome::Allow),
            replayed(Outcome::Error),
        ];
        let tally = Tally::of(set.iter(), 1);
        assert_eq!(
            (tally.total, tally.interrupts(), tally.count(Outcome::Ask)),
            (4, 3, 1)
        );
        assert_eq!(Tally::of(set.iter(), 0).interrupts(), 0);
        assert!((tally.percent(tally.interrupts()) - 75.0).abs() < 1e-9);
    }
}
