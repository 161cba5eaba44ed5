//! `agent-guard explain`: the layer-by-layer trace of one decision, for a call typed on the command line or a hook
//! input on stdin.

use std::fmt::Write as _;
use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use agent_decide::{CallInput, Decided, Deciders, DecisionBound, HookInput};
use agent_tool_traits::{Decision, Verdict};
use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::DecideArgs;
use crate::load::Guards;

// The call to explain, as people type it; without one, a hook input is read from stdin.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct CallArgs {
    /// A shell command line, decided as a Bash call.
    #[arg(short = 'c', long = "command", value_name = "CMD", conflicts_with_all = ["read", "write", "tool"])]
    command: Option<String>,
    /// A file, decided as a Read call.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["write", "tool"])]
    read: Option<String>,
    /// A file, decided as a Write call with empty content (creating or replacing the file: the widest write).
    #[arg(long, value_name = "PATH", conflicts_with = "tool")]
    write: Option<String>,
    /// Any tool by name (`Edit`, `WebFetch`, `mcp__server__tool`…), with its input from --input.
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// The tool's input as a JSON object (default `{}`).
    #[arg(long, value_name = "JSON", requires = "tool")]
    input: Option<String>,
    /// The working directory of the call (default: the current one); with an input on stdin, it replaces the
    /// input's `cwd`.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// A row of the audit log, by its id (`audit --json`): who or what decided it, and for a rule an "allow
    /// always" answer saved, that answer and who gave it.
    #[arg(long = "audit-id", value_name = "ID", conflicts_with_all = ["command", "read", "write", "tool", "cwd"])]
    audit_id: Option<i64>,
    /// The audit log of `--audit-id` (default: as `audit` reads it).
    #[arg(long = "audit-db", value_name = "PATH|URL", requires = "audit_id")]
    audit_db: Option<agent_hooks::AuditDatabase>,
    /// Decide in this session of the coding agent (its `session_id`), with the taint its earlier calls left, and
    /// show that taint; with an input on stdin, it replaces the input's `session_id`.
    #[arg(long, value_name = "ID")]
    session: Option<String>,
}

impl CallArgs {
    /// The hook input the arguments describe; `None` when they name no call.
    fn input(&self) -> Result<Option<HookInput>> {
        let (tool, tool_input) = if let Some(command) = &self.command {
            ("Bash".to_owned(), json!({ "command": command }))
        } else if let Some(path) = &self.read {
            ("Read".to_owned(), json!({ "file_path": path }))
        } else if let Some(path) = &self.write {
            ("Write".to_owned(), json!({ "file_path": path, "content": "" }))
        } else if let Some(tool) = &self.tool {
            let input = match &self.input {
                Some(text) => serde_json::from_str::<Value>(text)
                    .with_context(|| format!("`--input` is not JSON: `{text}`"))?,
                None => json!({}),
            };
            if !input.is_object() {
                anyhow::bail!("`--input` is not a JSON object: `{input}`");
            }
            (tool.clone(), input)
        } else {
            return Ok(None);
        };
        Ok(Some(HookInput {
            session_id: self.session.clone().unwrap_or_default(),
            cwd: crate::install::project_dir(self.cwd.as_deref())?
                .display()
                .to_string(),
            permission_mode: None,
            hook_event_name: Some("PreToolUse".to_owned()),
            tool_name: tool,
            tool_input,
            tool_use_id: None,
        }))
    }
}

pub(crate) fn run(args: &DecideArgs, call: &CallArgs, as_json: bool) -> Result<ExitCode> {
    if let Some(id) = call.audit_id {
        let db = match &call.audit_db {
            Some(db) => db.clone(),
            None => crate::hook_audit::reading_default()?,
        };
        return crate::audit_chain::run(args, &db, id, as_json);
    }
    let input = match call.input()? {
        Some(input) => input,
        None if std::io::stdin().is_terminal() => {
            // Nobody types a hook input's JSON: a terminal on stdin means the call was left out.
            return Err(crate::UsageError(
                "explain needs a call: `-c CMD`, `--read PATH`, `--write PATH` or `--tool NAME --input JSON`, \
                 or a hook input on stdin (`agent-guard explain < input.json`)"
                    .to_owned(),
            )
            .into());
        }
        None => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read stdin")?;
            let mut input = HookInput::parse(text.trim())?;
            if let Some(cwd) = &call.cwd {
                input.cwd = crate::install::project_dir(Some(cwd))?.display().to_string();
            }
            if let Some(session) = &call.session {
                input.session_id.clone_from(session);
            }
            input
        }
    };
    let mut guards = Guards::new(args)?;
    let guard = match guards.get(&input.cwd, input.permission_mode.as_deref()) {
        Ok(guard) => guard,
        Err(why) => anyhow::bail!("cannot load the settings: {why}"),
    };
    // Decided as the hook decides it: alone, in the session's state (its taint; a fresh session without an id),
    // within the bound. Explaining records nothing.
    let session = crate::check::Session::of(&input).state;
    let call = CallInput::new(input.tool_name.as_str(), input.tool_input.clone());
    let decided = DecisionBound::from_env().decide(&Deciders::new(Arc::clone(guard)), call, session.clone());
    if as_json {
        let mut json = render_json(&input, guard, &decided);
        if let Some(fields) = json.as_object_mut() {
            let taint = (!input.session_id.is_empty()).then(|| session.taint());
            fields.insert("session_taint".to_owned(), json!(taint));
        }
        let undo = runs_confined(&decided)
            .then(|| crate::undo_cmd::explain_line(guard, decided.confinement))
            .flatten();
        if let (Some(undo), Some(fields)) = (undo, json.as_object_mut()) {
            fields.insert("undo".to_owned(), Value::String(undo));
        }
        crate::emit(&serde_json::to_string_pretty(&json)?)?;
    } else {
        let mut text = render_text(&input, &decided);
        if !input.session_id.is_empty() {
            text.push_str(&session_text(&input.session_id, session.taint()));
        }
        text.push_str(&format!(
            "\nmode: {}{}",
            guard.policy().mode(),
            guard
                .policy()
                .mode_source()
                .map(|s| format!(" (from {s})"))
                .unwrap_or_default()
        ));
        if decided.analysis.is_some() {
            text.push_str(&format!("\ncontained allows: {}", auto_allow_text(guard)));
        }
        if let Some(undo) = runs_confined(&decided)
            .then(|| crate::undo_cmd::explain_line(guard, decided.confinement))
            .flatten()
        {
            text.push_str(&format!("\nundo: {undo}"));
        }
        crate::emit(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn paint(decision: Decision) -> String {
    let label = decision.as_str().to_uppercase();
    if !std::io::stdout().is_terminal() || std::env::var_os("NO_COLOR").is_some() {
        return label;
    }
    let code = match decision {
        Decision::Allow => "32",
        Decision::Ask => "33",
        Decision::Deny => "31",
    };
    format!("\x1b[1;{code}m{label}\x1b[0m")
}

fn verdict_line(v: &Verdict) -> String {
    let mut line = format!("{:<5} {}", v.decision.as_str(), v.reason());
    if let Some(step) = v.provenance.step {
        let _ = write!(line, "  [{step}]");
    }
    line
}

/// The trace as text, layer by layer in the order the call meets them.
pub(crate) fn render_text(input: &HookInput, decided: &Decided) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "call: {} {}", input.tool_name, input.tool_input);
    let _ = writeln!(out, "cwd:  {}", input.cwd);
    let _ = writeln!(out, "\nL1 tool checks");
    let tool_findings: Vec<&Verdict> = decided
        .findings
        .iter()
        .filter(|f| f.provenance.layer == agent_tool_traits::Layer::Tool)
        .collect();
    if tool_findings.is_empty() {
        let _ = writeln!(out, "   nothing to report");
    }
    for finding in tool_findings {
        let _ = writeln!(out, "   {}", verdict_line(finding));
    }
    let _ = writeln!(out, "\nL2 rules");
    rules_lines(&mut out, decided);
    let _ = writeln!(out, "\nL4 fs-sandbox");
    if decided.paths.is_empty() {
        let _ = writeln!(out, "   no files");
    }
    for agent_decide::CheckedPath { access, check } in &decided.paths {
        let resolved = check
            .resolved
            .as_ref()
            .map_or_else(|| "unresolved".to_owned(), |r| r.display().to_string());
        let _ = writeln!(
            out,
            "   {access} `{}` -> {resolved}{}{}",
            check.input,
            if check.root.is_some() {
                " (inside the roots)"
            } else {
                " (outside the roots)"
            },
            if check.through_symlink {
                " via a symlink"
            } else {
                ""
            }
        );
        let _ = writeln!(out, "      {}", verdict_line(&check.verdict));
    }
    let _ = writeln!(out, "\nL5 bash-guard");
    match &decided.analysis {
        None => {
            let _ = writeln!(out, "   not a shell call");
        }
        Some(analysis) => {
            for (i, command) in analysis.commands.iter().enumerate() {
                let _ = writeln!(out, "   {}. {}", i + 1, words(&command.argv));
                let mut facts = vec![location(&command.location), format!("class {}", command.class)];
                if command.read_only {
                    facts.push("read-only with these arguments".to_owned());
                }
                if command.inner > 0 {
                    facts.push(format!("runs {}", words(command.effective())));
                }
                match &command.effect {
                    agent_bash_guard::Effect::Local => {}
                    agent_bash_guard::Effect::Network { hosts } if hosts.is_empty() => {
                        facts.push("reaches the network, hosts known only at run time".to_owned());
                    }
                    agent_bash_guard::Effect::Network { hosts } => {
                        facts.push(format!("reaches {}", hosts.join(", ")));
                    }
                    agent_bash_guard::Effect::RemovesTrees => facts.push("removes trees of files".to_owned()),
                    agent_bash_guard::Effect::Discards(why) => {
                        facts.push(format!(
                            "{why} (contained where `agent-guard undo` snapshots the project)"
                        ));
                    }
                    agent_bash_guard::Effect::Destroys(why) | agent_bash_guard::Effect::Remote(why) => {
                        facts.push(format!("not contained: {why}"));
                    }
                }
                let _ = writeln!(out, "      {}", facts.join("; "));
            }
            for finding in &analysis.findings {
                let concern = match finding.concern {
                    agent_bash_guard::Concern::Contained => " (contained by the sandbox)",
                    agent_bash_guard::Concern::Network => " (contained for allowed domains)",
                    agent_bash_guard::Concern::Guarded => "",
                    agent_bash_guard::Concern::Environment => {
                        " (contained where the sandbox does not pass the variables)"
                    }
                };
                let _ = writeln!(
                    out,
                    "   finding: {} {}{concern}",
                    finding.decision, finding.reason
                );
            }
            if let Some(error) = &analysis.parse_error {
                let _ = writeln!(out, "   parse error: {error}");
            }
        }
    }
    taint_lines(&mut out, &decided.taint);
    let _ = writeln!(out, "\nresolution (first applicable wins)");
    for (i, candidate) in decided.resolution.considered.iter().enumerate() {
        let _ = writeln!(
            out,
            "   {}{}",
            if i == 0 { "=> " } else { "   " },
            verdict_line(candidate)
        );
    }
    if !decided.resolution.conflicts.is_empty() {
        let _ = writeln!(out, "\nconflict log");
        for conflict in &decided.resolution.conflicts {
            let _ = writeln!(
                out,
                "   {} ({}) overridden by {}",
                conflict.overridden, conflict.decision, conflict.by
            );
        }
    }
    let verdict = &decided.resolution.verdict;
    let _ = write!(
        out,
        "\ndecision: {}: {}",
        paint(verdict.decision),
        verdict.reason()
    );
    if let Some(rule) = &verdict.provenance.rule {
        let _ = write!(
            out,
            "\nrule: `{rule}`{}",
            verdict
                .provenance
                .source
                .map(|s| format!(" from {s}"))
                .unwrap_or_default()
        );
    }
    if decided.analysis.is_some() {
        let _ = write!(out, "\nkernel sandbox: {}", sandbox_line(decided));
        if !decided.domains.is_empty() {
            let _ = write!(out, ", with {} let through its proxy", decided.domains.join(", "));
        }
        if let Some(limit) = &decided.session_limit {
            let _ = write!(
                out,
                "\nproxy limited by the session's taint ({}) to: {}",
                limit.taint(),
                if limit.domains.is_empty() {
                    "no domain".to_owned()
                } else {
                    limit.domains.join(", ")
                }
            );
        }
    }
    if let Some(contained) = &decided.contained {
        let _ = write!(out, "\ncontained: {}", contained.effects.join("; "));
        let _ = write!(out, "\nwithout the sandbox: {}", verdict_line(&contained.without));
    }
    out
}

/// What the call adds to its session's taint.
fn taint_lines(out: &mut String, facts: &agent_rules::TaintFacts) {
    let _ = writeln!(out, "\nsession taint (what this call adds)");
    if facts.is_empty() {
        let _ = writeln!(out, "   nothing");
    }
    if let Some(mark) = &facts.untrusted {
        let _ = writeln!(out, "   untrusted content: {}", mark.why);
    }
    if let Some(mark) = &facts.private {
        let _ = writeln!(out, "   private data: {}", mark.why);
    }
    if !facts.contacted.is_empty() {
        let _ = writeln!(out, "   reaches: {}", facts.contacted.join(", "));
    }
}

/// The taint session `id` had before the call, as `explain --session` shows it.
pub(crate) fn session_text(id: &str, taint: &agent_rules::SessionTaint) -> String {
    let mut out = format!("\nsession `{id}` before this call:");
    let mark = |mark: &Option<agent_rules::TaintMark>| {
        mark.as_ref()
            .map_or_else(|| "none".to_owned(), |m| format!("`{}`: {}", m.call, m.why))
    };
    let _ = write!(out, "\n   untrusted content: {}", mark(&taint.untrusted));
    let _ = write!(out, "\n   private data: {}", mark(&taint.private));
    let _ = write!(
        out,
        "\n   domains reached: {}",
        if taint.contacted.is_empty() {
            "none".to_owned()
        } else {
            taint.contacted.join(", ")
        }
    );
    if taint.is_trifecta() {
        let _ = write!(
            out,
            "\n   every way out of the session asks (`agent-guard session clear {id}` after you have looked)"
        );
    }
    out
}

/// The candidates of the rules layer (L2): the rules that match the call, the mode's and the defaults' answers,
/// each as resolution weighs it below.
fn rules_lines(out: &mut String, decided: &Decided) {
    let rules: Vec<&Verdict> = decided
        .resolution
        .considered
        .iter()
        .filter(|v| v.provenance.layer == agent_tool_traits::Layer::Rules)
        .collect();
    if rules.is_empty() {
        let _ = writeln!(out, "   nothing to report");
    }
    for verdict in rules {
        let rule = verdict
            .provenance
            .rule
            .as_ref()
            .map(|rule| format!(" (`{rule}`)"))
            .unwrap_or_default();
        let _ = writeln!(out, "   {}{rule}", verdict_line(verdict));
    }
}

/// Whether contained allows are on for this guard, and why not.
fn auto_allow_text(guard: &agent_decide::Guard) -> String {
    match guard.auto_allow() {
        agent_decide::AutoAllow::On => "on".to_owned(),
        agent_decide::AutoAllow::Off(why) => format!("off ({why})"),
    }
}
/// Whether the call runs under a kernel sandbox once allowed (a shell call that is not denied).
fn runs_confined(decided: &Decided) -> bool {
    decided.analysis.is_some() && decided.resolution.verdict.decision != Decision::Deny
}

/// How a shell call runs once allowed: the profile of the kernel sandbox, or why it runs without one.
fn sandbox_line(decided: &Decided) -> String {
    if let Some(outside) = &decided.outside
        && decided.resolution.verdict.decision == Decision::Allow
    {
        let rules: Vec<String> = outside
            .commands
            .iter()
            .map(|(command, rule)| format!("`{command}` by your rule `{rule}`"))
            .collect();
        return format!(
            "none: runs outside it, allowed {} (no sandbox can contain it)",
            rules.join(", ")
        );
    }
    match (decided.confinement, decided.resolution.verdict.decision) {
        (Some(confinement), Decision::Allow) => {
            format!("runs under `{confinement}`{}", git_text(confinement))
        }
        (Some(confinement), Decision::Ask) => format!(
            "runs under `{confinement}` once the user allows it{}",
            git_text(confinement)
        ),
        (_, Decision::Deny) => "none (denied: it does not run)".to_owned(),
        (None, Decision::Allow | Decision::Ask) => match agent_os_sandbox::KernelSupport::probe().missing() {
            Some(why) => format!("none ({why})"),
            None => "none (`agentGuard.sandbox` is `off`)".to_owned(),
        },
    }
}

/// What the sandbox lets git do to the repository, after a `; `; empty for `read-only`.
fn git_text(confinement: agent_tool_traits::Confinement) -> String {
    confinement
        .git_dir()
        .map_or_else(String::new, |text| format!("; {text}"))
}

/// Words as a shell line: each word that holds a blank, a quote or nothing is single-quoted. Words only known at
/// run time are kept as their source text (`$x`, `$(date)`) and shown as they are.
fn words(argv: &[String]) -> String {
    argv.iter()
        .map(|word| {
            if !word.is_empty() && !word.chars().any(|c| c.is_whitespace() || c == '\'' || c == '"') {
                word.clone()
            } else {
                format!("'{}'", word.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where a command was found: the construct, how deeply nested, and the command (numbered as listed) holding it.
fn location(location: &agent_bash_guard::Location) -> String {
    let mut text = if location.kind == agent_bash_guard::LocationKind::TopLevel {
        "top level".to_owned()
    } else {
        format!("in a {}", location.kind)
    };
    if location.depth > 0 {
        let _ = write!(text, ", nested {} deep", location.depth);
    }
    if let Some(parent) = location.parent {
        let _ = write!(text, ", inside command {}", parent + 1);
    }
    text
}

fn render_json(input: &HookInput, guard: &agent_decide::Guard, decided: &Decided) -> Value {
    json!({
        "tool": input.tool_name,
        "input": input.tool_input,
        "cwd": input.cwd,
        "mode": guard.policy().mode().as_str(),
        "decision": decided.resolution.verdict,
        "confinement": decided.confinement,
        "domains": decided.domains,
        "session_domains": decided.session_limit.as_ref().map(|limit| &limit.domains),
        "auto_allow": auto_allow_text(guard),
        "contained": decided.contained.as_ref().map(|c| json!({
            "effects": c.effects,
            "without": c.without,
        })),
        "outside": decided.outside.as_ref().map(|o| json!({
            "commands": o.commands.iter().map(|(command, rule)| json!({"command": command, "rule": rule}))
                .collect::<Vec<_>>(),
            "reason": o.reason,
        })),
        "considered": decided.resolution.considered,
        "conflicts": decided.resolution.conflicts.iter().map(|c| json!({
            "overridden": c.overridden, "decision": c.decision, "by": c.by,
        })).collect::<Vec<_>>(),
        "findings": decided.findings,
        "paths": decided.paths.iter().map(|agent_decide::CheckedPath { access, check }| json!({
            "access": access.as_str(),
            "input": check.input,
            "absolute": check.absolute,
            "resolved": check.resolved,
            "inside_roots": check.root.is_some(),
            "through_symlink": check.through_symlink,
            "protected": check.protected,
            "verdict": check.verdict,
        })).collect::<Vec<_>>(),
        "commands": decided.analysis.as_ref().map(|a| a.commands.iter().map(|c| json!({
            "argv": c.argv,
            "inner": c.inner,
            "effective": c.effective(),
            "location": c.location,
            "class": c.class,
            "read_only": c.read_only,
            "effect": c.effect,
        })).collect::<Vec<_>>()),
    })
}
