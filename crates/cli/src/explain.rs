//! `agent-guard explain`: the layer-by-layer trace of one decision.

use std::fmt::Write as _;
use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use agent_core::{Decided, HookInput};
use agent_tool_traits::{Decision, Verdict};
use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::DecideArgs;
use crate::load::Guards;

pub(crate) fn run(args: &DecideArgs, as_json: bool) -> Result<ExitCode> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("cannot read stdin")?;
    let input = HookInput::parse(text.trim()).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut guards = Guards::new(args)?;
    let guard = match guards.get(&input.cwd, input.permission_mode.as_deref()) {
        Ok(guard) => guard,
        Err(why) => anyhow::bail!("cannot load the settings: {why}"),
    };
    let decided = guard.decide(&input.tool_name, &input.tool_input);
    if as_json {
        crate::emit(&serde_json::to_string_pretty(&render_json(
            &input, guard, &decided,
        ))?)?;
    } else {
        let mut text = render_text(&input, &decided);
        text.push_str(&format!(
            "\nmode: {}{}",
            guard.policy().mode(),
            guard
                .policy()
                .mode_source()
                .map(|s| format!(" (from {s})"))
                .unwrap_or_default()
        ));
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
    let _ = writeln!(out, "\nL4 fs-sandbox");
    if decided.paths.is_empty() {
        let _ = writeln!(out, "   no files");
    }
    for (access, check) in &decided.paths {
        let resolved = check
            .resolved
            .as_ref()
            .map_or_else(|| "unresolved".to_owned(), |r| r.display().to_string());
        let _ = writeln!(
            out,
            "   {access:?} `{}` -> {resolved}{}{}",
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
                let _ = writeln!(
                    out,
                    "   {}. {:?}  [{:?}] class {:?}{}{}",
                    i + 1,
                    command.argv,
                    command.location,
                    command.class,
                    if command.read_only { ", read-only" } else { "" },
                    if command.inner > 0 {
                        format!(
                            ", runs {:?}",
                            command.argv.get(command.inner..).unwrap_or_default()
                        )
                    } else {
                        String::new()
                    },
                );
            }
            for finding in &analysis.findings {
                let _ = writeln!(out, "   finding: {} {}", finding.decision, finding.reason);
            }
            if let Some(error) = &analysis.parse_error {
                let _ = writeln!(out, "   parse error: {error}");
            }
        }
    }
    let _ = writeln!(out, "\nL2 rules and resolution (first applicable wins)");
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
    out
}

fn render_json(input: &HookInput, guard: &agent_core::Guard, decided: &Decided) -> Value {
    json!({
        "tool": input.tool_name,
        "input": input.tool_input,
        "cwd": input.cwd,
        "mode": guard.policy().mode().as_str(),
        "decision": decided.resolution.verdict,
        "considered": decided.resolution.considered,
        "conflicts": decided.resolution.conflicts.iter().map(|c| json!({
            "overridden": c.overridden, "decision": c.decision, "by": c.by,
        })).collect::<Vec<_>>(),
        "findings": decided.findings,
        "paths": decided.paths.iter().map(|(access, check)| json!({
            "access": format!("{access:?}").to_lowercase(),
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
            "location": format!("{:?}", c.location),
            "class": format!("{:?}", c.class),
            "read_only": c.read_only,
        })).collect::<Vec<_>>()),
    })
}
