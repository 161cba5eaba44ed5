//! `agent-guard test`: policy tests, each a call and the decision it must get, decided as `check` decides.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use agent_decide::{CallInput, Deciders, DecisionBound, PolicyTest};
use agent_rules::{PermissionMode, SessionState};
use agent_tool_traits::{DecidedBy, LayerStep, Provenance};
use anyhow::{Context, Result};
use serde_json::Value;

use crate::load::Guards;
use crate::{DecideArgs, UsageError};

// The arguments of `agent-guard test`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct TestArgs {
    /// Test files: a JSON list of cases, or a settings file whose `agentGuard.tests` holds them (its rules then
    /// apply to its cases). Without a file, the `agentGuard.tests` of the settings found for the current
    /// directory and of the `--settings` files run.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    #[command(flatten)]
    decide: DecideArgs,
}

/// The cases of one file, and the settings file they come with.
struct Suite {
    /// Where the cases were read, as shown in messages.
    origin: String,
    /// The directory a relative `cwd` of a case is relative to.
    dir: PathBuf,
    /// A settings file whose rules apply to these cases besides those found as `check` finds them.
    settings: Option<PathBuf>,
    cases: Vec<PolicyTest>,
}

/// One case that did not get what it expected.
struct Failure {
    case: String,
    call: String,
    expected: String,
    got: String,
    decided_by: String,
}

pub(crate) fn run(args: &TestArgs) -> Result<ExitCode> {
    let here = std::env::current_dir().context("cannot read the current directory")?;
    crate::load::cli_mode(&args.decide).map_err(|e| UsageError(format!("{e:#}")))?;
    let suites = if args.files.is_empty() {
        suites_from_settings(&here, &args.decide)?
    } else {
        args.files
            .iter()
            .map(|file| read_suite(file))
            .collect::<Result<Vec<_>>>()?
    };
    let total: usize = suites.iter().map(|s| s.cases.len()).sum();
    if total == 0 {
        return Err(UsageError(
            "no policy tests found: name a test file, or add `agentGuard.tests` to a settings file"
                .to_owned(),
        )
        .into());
    }
    let mut failures = Vec::new();
    for suite in &suites {
        failures.extend(run_suite(suite, &args.decide, &here)?);
    }
    if !failures.is_empty() {
        crate::emit(&table(&failures))?;
    }
    crate::emit(&format!(
        "{} passed, {} failed",
        total - failures.len(),
        failures.len()
    ))?;
    Ok(if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The cases of one file: a JSON list of cases, or a settings object with `agentGuard.tests`.
fn read_suite(file: &Path) -> Result<Suite> {
    let origin = file.display().to_string();
    let text = std::fs::read_to_string(file)
        .map_err(|e| UsageError(format!("cannot read the test file `{origin}`: {e}")))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| UsageError(format!("the test file `{origin}` is not JSON: {e}")))?;
    let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_owned());
    let dir = absolute.parent().map(Path::to_path_buf).unwrap_or_default();
    let (cases, settings) = match &value {
        Value::Array(cases) => (cases.as_slice(), None),
        Value::Object(object) => match object.get("agentGuard").and_then(|s| s.get("tests")) {
            Some(Value::Array(cases)) => (cases.as_slice(), Some(absolute.clone())),
            Some(_) => {
                return Err(
                    UsageError(format!("`{origin}`: `agentGuard.tests` is not a list of cases")).into(),
                );
            }
            None => {
                return Err(UsageError(format!(
                    "`{origin}` is a settings file without `agentGuard.tests`; a test file is a JSON list of cases"
                ))
                .into());
            }
        },
        _ => {
            return Err(UsageError(format!(
                "`{origin}` is neither a JSON list of cases nor a settings file with `agentGuard.tests`"
            ))
            .into());
        }
    };
    Ok(Suite {
        cases: parse_cases(&origin, cases)?,
        origin,
        dir,
        settings,
    })
}

/// The `agentGuard.tests` of the settings `check` would load for `cwd`, one suite per settings file.
fn suites_from_settings(cwd: &Path, args: &DecideArgs) -> Result<Vec<Suite>> {
    let settings = crate::load::settings(&crate::load::project(cwd), args)
        .map_err(|e| UsageError(format!("cannot load the settings: {e:#}")))?;
    let mut suites = Vec::new();
    for section in settings.agent_guard_sections() {
        let origin = section
            .file
            .as_ref()
            .map_or_else(|| section.source.to_string(), |f| f.display().to_string());
        let cases = match section.value.get("tests") {
            None => continue,
            Some(Value::Array(cases)) => cases,
            Some(_) => {
                return Err(
                    UsageError(format!("`{origin}`: `agentGuard.tests` is not a list of cases")).into(),
                );
            }
        };
        suites.push(Suite {
            cases: parse_cases(&origin, cases)?,
            dir: section
                .file
                .as_ref()
                .and_then(|f| f.parent())
                .map_or_else(|| cwd.to_owned(), Path::to_path_buf),
            origin,
            // The file is among the settings already.
            settings: None,
        });
    }
    Ok(suites)
}

/// Every case of a list, checked; the first malformed one is a usage error naming the file and the case.
fn parse_cases(origin: &str, cases: &[Value]) -> Result<Vec<PolicyTest>> {
    cases
        .iter()
        .enumerate()
        .map(|(index, value)| {
            let bad = |why: String| UsageError(format!("`{origin}`: case {}: {why}", index + 1));
            let case: PolicyTest = serde_json::from_value(value.clone()).map_err(|e| bad(e.to_string()))?;
            if case.expect.is_none() && case.not_decided_by.is_none() {
                return Err(
                    bad("neither `expect` nor `notDecidedBy`: the case checks nothing".to_owned()).into(),
                );
            }
            if case.tool.trim().is_empty() {
                return Err(bad("`tool` is empty".to_owned()).into());
            }
            if !case.input.is_object() {
                return Err(bad(format!("`input` is not a JSON object: `{}`", case.input)).into());
            }
            if let Some(mode) = &case.mode {
                mode.parse::<PermissionMode>()
                    .map_err(|e| bad(format!("`mode`: {e}")))?;
            }
            Ok(case)
        })
        .collect()
}

/// Decides every case of a suite through the bounded decision entry, each alone in a fresh session as the hook
/// decides a call; returns the cases that failed.
fn run_suite(suite: &Suite, args: &DecideArgs, here: &Path) -> Result<Vec<Failure>> {
    // The case's mode wins over `--mode`, so `--mode` is passed the way an input's mode is.
    let decide = DecideArgs {
        settings: args
            .settings
            .iter()
            .cloned()
            .chain(suite.settings.clone())
            .collect(),
        mode: None,
        auto_allow: args.auto_allow,
    };
    let mut guards = Guards::new(&decide)?;
    let mut failures = Vec::new();
    for (index, case) in suite.cases.iter().enumerate() {
        let label = match &case.name {
            Some(name) => format!("{}#{} {name}", suite.origin, index + 1),
            None => format!("{}#{}", suite.origin, index + 1),
        };
        let cwd = match &case.cwd {
            Some(dir) => suite.dir.join(dir),
            None => here.to_owned(),
        };
        let mode = case.mode.as_deref().or(args.mode.as_deref());
        let guard = match guards.get(&cwd.display().to_string(), mode) {
            Ok(guard) => Arc::clone(guard),
            Err(why) => {
                return Err(UsageError(format!("{label}: cannot load the settings: {why}")).into());
            }
        };
        let call = CallInput::new(case.tool.as_str(), case.input.clone());
        let decided = DecisionBound::from_env().decide(&Deciders::new(guard), call, SessionState::default());
        let verdict = &decided.resolution.verdict;
        let by_ok = case
            .decided_by
            .as_deref()
            .is_none_or(|want| decided_by_matches(want, &verdict.provenance));
        let not_by_ok = case
            .not_decided_by
            .as_deref()
            .is_none_or(|unwanted| !decided_by_matches(unwanted, &verdict.provenance));
        if case.expect.is_some_and(|e| e != verdict.decision) || !by_ok || !not_by_ok {
            failures.push(Failure {
                case: label,
                call: call_text(&case.tool, &case.input),
                expected: expected_text(case),
                got: verdict.decision.to_string(),
                decided_by: provenance_text(&verdict.provenance),
            });
        }
    }
    Ok(failures)
}

/// Whether `want` names who decided: the layer, the step, `layer/step`, or the text of the rule.
pub(crate) fn decided_by_matches(want: &str, provenance: &Provenance) -> bool {
    let named = match want.parse::<LayerStep>() {
        Ok(LayerStep { layer, step: None }) => layer == provenance.layer,
        Ok(layer_step) => layer_step == provenance.layer_step(),
        Err(_) => false,
    };
    named
        || want
            .parse::<DecidedBy>()
            .is_ok_and(|step| provenance.step == Some(step))
        || provenance.rule.as_deref() == Some(want)
}

/// Who decided, as `layer/step` and the rule with its source.
pub(crate) fn provenance_text(provenance: &Provenance) -> String {
    let mut text = provenance.layer_step().to_string();
    if let Some(rule) = &provenance.rule {
        text.push_str(&format!(" `{rule}`"));
        if let Some(source) = provenance.source {
            text.push_str(&format!(" ({source})"));
        }
    }
    text
}

/// What a case expects, as the table shows it.
fn expected_text(case: &PolicyTest) -> String {
    let mut parts = Vec::new();
    if let Some(expect) = case.expect {
        parts.push(expect.to_string());
    }
    if let Some(by) = &case.decided_by {
        parts.push(format!("by {by}"));
    }
    if let Some(not_by) = &case.not_decided_by {
        parts.push(format!("not by {not_by}"));
    }
    parts.join(" ")
}

/// A call on one line: a shell call as its command line, others as the tool and its input.
pub(crate) fn call_text(tool: &str, input: &Value) -> String {
    let text = match input.get("command").and_then(Value::as_str) {
        Some(command) if agent_tool_traits::kind_of(tool) == agent_tool_traits::ToolKind::Shell => {
            format!("{tool}: {command}")
        }
        _ => format!("{tool} {input}"),
    };
    shorten(&text, 70)
}

/// `text` on one line, cut to `max` characters with an ellipsis.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    let line = crate::one_line(text);
    if line.chars().count() <= max {
        return line;
    }
    let mut cut: String = line.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The failures as an aligned table.
fn table(failures: &[Failure]) -> String {
    let header = ["FAILED CASE", "CALL", "EXPECTED", "GOT", "DECIDED BY"];
    let rows: Vec<[&str; 5]> = failures
        .iter()
        .map(|f| {
            [
                f.case.as_str(),
                f.call.as_str(),
                f.expected.as_str(),
                f.got.as_str(),
                f.decided_by.as_str(),
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    std::iter::once(header)
        .chain(rows)
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(widths)
                .map(|(cell, width)| format!("{cell:<width$}"))
                .collect();
            cells.join("  ").trim_end().to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_tool_traits::{DecidedBy, Layer};

    #[test]
    fn decided_by_names_a_layer_a_step_both_or_the_rule() {
        let mut provenance = Provenance::layer(Layer::Rules).at(DecidedBy::AskRule);
        provenance.rule = Some("Bash(git push:*)".to_owned());
        for want in ["rules", "ask-rule", "rules/ask-rule", "Bash(git push:*)"] {
            assert!(decided_by_matches(want, &provenance), "{want}");
        }
        for want in ["bash-guard", "deny-rule", "rules/deny-rule", "Bash(git push)", ""] {
            assert!(!decided_by_matches(want, &provenance), "{want}");
        }
    }

    #[test]
    fn malformed_cases_are_named() {
        let cases = vec![
            serde_json::json!({"tool": "Bash", "input": {"command": "ls"}, "expect": "allow"}),
            serde_json::json!({"tool": "Bash", "input": {"command": "ls"}, "expect": "warn"}),
        ];
        let error = parse_cases("t.json", &cases).unwrap_err().to_string();
        assert!(error.starts_with("`t.json`: case 2: "), "{error}");
        let cases = vec![serde_json::json!({"tool": "Bash", "input": "ls", "expect": "allow"})];
        let error = parse_cases("t.json", &cases).unwrap_err().to_string();
        assert!(error.contains("case 1: `input` is not a JSON object"), "{error}");
        let cases = vec![serde_json::json!({"tool": "Bash", "expect": "allow", "mode": "yolo"})];
        assert!(
            parse_cases("t.json", &cases)
                .unwrap_err()
                .to_string()
                .contains("case 1: `mode`")
        );
        let cases = vec![serde_json::json!({"tool": "Bash", "expect": "allow", "expected": "deny"})];
        assert!(
            parse_cases("t.json", &cases)
                .unwrap_err()
                .to_string()
                .contains("unknown field")
        );
    }
}
