//! `agent-guard check`: the PreToolUse hook (SPEC §4).

use std::io::{BufRead, Read, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use std::path::PathBuf;

use agent_core::{Decided, HookInput, HookOutput};
use agent_tool_traits::{Decision, Layer, Provenance, Verdict};
use anyhow::{Context, Result};

use crate::DecideArgs;
use crate::load::Guards;

pub(crate) fn run(args: &DecideArgs, jsonl: bool, explain: bool) -> Result<ExitCode> {
    let mut guards = Guards::new(args)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if !jsonl {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read stdin")?;
        let input = HookInput::parse(text.trim()).map_err(|e| anyhow::anyhow!("{e}"))?;
        let line = decide_line_bounded(&mut guards, &input, explain);
        writeln!(out, "{line}")?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut failed = false;
    let stdin = std::io::stdin();
    for (number, line) in stdin.lock().lines().enumerate() {
        let line = line.with_context(|| format!("cannot read line {} of stdin", number + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        match HookInput::parse(line.trim()) {
            Ok(input) => writeln!(out, "{}", decide_line(&mut guards, &input, explain))?,
            Err(e) => {
                failed = true;
                let error = serde_json::json!({ "error": format!("line {}: {e}", number + 1) });
                writeln!(out, "{error}")?;
            }
        }
    }
    out.flush()?;
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// How long one decision of the hook may take by default. A coding agent gives up on a hook after its own timeout
/// and then runs the call without it, so a pathological input must end in a deny well before that, not in a silent
/// pass. `AGENT_GUARD_DECISION_TIMEOUT_MS` changes it.
const DECISION_LIMIT: Duration = Duration::from_secs(5);

fn decision_limit() -> Duration {
    std::env::var("AGENT_GUARD_DECISION_TIMEOUT_MS")
        .ok()
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .map_or(DECISION_LIMIT, Duration::from_millis)
}

/// [`decide_line`] on a worker thread, bounded by [`DECISION_LIMIT`]: past it the call is denied (the worker is
/// abandoned; the process exits right after printing).
fn decide_line_bounded(guards: &mut Guards<'_>, input: &HookInput, explain: bool) -> String {
    let guard = match guards.get(&input.cwd, input.permission_mode.as_deref()) {
        Ok(guard) => Arc::clone(guard),
        Err(_) => return decide_line(guards, input, explain),
    };
    let (done, result) = std::sync::mpsc::channel();
    let job = input.clone();
    let settings = guards.settings_files().to_vec();
    let spawned = std::thread::Builder::new()
        .name("decide".to_owned())
        .spawn(move || {
            let decided = guard.decide(&job.tool_name, &job.tool_input);
            if explain {
                eprintln!("{}", crate::explain::render_text(&job, &decided));
            }
            let _ = done.send(output(&job, &decided, &settings).to_json());
        });
    if spawned.is_err() {
        return decide_line(guards, input, explain);
    }
    let limit = decision_limit();
    result.recv_timeout(limit).unwrap_or_else(|_| {
        let verdict = Verdict::new(
            Decision::Deny,
            format!(
                "the analysis did not finish within {} ms, so the call is not allowed",
                limit.as_millis()
            ),
            Provenance::layer(Layer::Bash),
        );
        HookOutput::from_verdict(&verdict).to_json()
    })
}

/// The output line for one input. Settings that cannot be loaded deny the call: a broken configuration must not
/// let calls through unchecked.
fn decide_line(guards: &mut Guards<'_>, input: &HookInput, explain: bool) -> String {
    let settings = guards.settings_files().to_vec();
    match guards.get(&input.cwd, input.permission_mode.as_deref()) {
        Ok(guard) => {
            let decided = guard.decide(&input.tool_name, &input.tool_input);
            if explain {
                eprintln!("{}", crate::explain::render_text(input, &decided));
            }
            output(input, &decided, &settings).to_json()
        }
        Err(why) => HookOutput::from_verdict(&Verdict::new(
            Decision::Deny,
            format!("cannot load the settings, so nothing is allowed: {why}"),
            Provenance::layer(Layer::Rules),
        ))
        .to_json(),
    }
}

/// The hook output of a decision. An allowed shell call with a confinement runs under the kernel sandbox: its
/// `updatedInput` is the same call wrapped in `agent-guard sandbox` (this very binary, the same settings files).
/// Where this binary's path cannot be known, the allow cannot be backed and becomes an ask.
fn output(input: &HookInput, decided: &Decided, settings: &[PathBuf]) -> HookOutput {
    let verdict = &decided.resolution.verdict;
    let Some(confinement) = decided
        .confinement
        .filter(|_| verdict.decision == Decision::Allow)
    else {
        return HookOutput::from_verdict(verdict);
    };
    let wrapped = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .ok()
        .and_then(|program| {
            agent_core::sandboxed_input(&input.tool_input, &program, confinement, &input.cwd, settings)
        });
    match wrapped {
        Some(updated) => {
            let mut verdict = verdict.clone();
            verdict
                .reasons
                .push(format!("runs under the kernel sandbox ({confinement})"));
            HookOutput::from_verdict(&verdict).with_updated_input(updated)
        }
        None => HookOutput::from_verdict(&Verdict::new(
            Decision::Ask,
            format!(
                "the command would be allowed ({}), but it cannot be wrapped in the kernel sandbox",
                verdict.reason()
            ),
            Provenance::layer(Layer::Kernel),
        )),
    }
}
