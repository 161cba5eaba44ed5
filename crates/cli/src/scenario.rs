//! Scenario files of `agent-guard run` and `demo`: settings by source, workspace files, turns of calls, answers
//! and cancellations, prepared in a temporary directory and run through the runtime with its scripted drivers.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent_core::{
    ApprovalAnswer, Approver, Runtime, RuntimeConfig, ScriptedApprover, ScriptedChildren, ScriptedModel,
    ScriptedTurn, SessionReport,
};
use agent_hooks::{AgentHook, AuditLogHook};
use agent_rules::{Discovery, Family, PermissionMode, Settings};
use agent_tool_traits::{CancelRegistry, Source};
use anyhow::{Context, Result, anyhow};
use serde::Deserialize;
use serde_json::Value;

/// A scripted session, read from JSON.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Scenario {
    /// A short title.
    pub(crate) name: String,
    /// What the scenario shows.
    #[serde(default)]
    pub(crate) description: String,
    /// The permission mode (`--mode`), when not the settings' own.
    #[serde(default)]
    mode: Option<String>,
    /// Settings documents by source: `user` (in a temporary home), `project` and `local` (the workspace's
    /// `.agent-guard/settings.json` and `settings.local.json`), `cliArg` (a `--settings` file).
    #[serde(default)]
    settings: BTreeMap<String, Value>,
    /// Files of the workspace, by relative path.
    #[serde(default)]
    files: BTreeMap<String, String>,
    /// The model's turns, in order.
    pub(crate) turns: Vec<ScriptedTurn>,
    /// Answers to asks, by call id; an ask without an answer is denied as it would be headless.
    #[serde(default)]
    pub(crate) approvals: BTreeMap<String, ApprovalAnswer>,
    /// Answers to `ask_user` questions, in order.
    #[serde(default)]
    answers: Vec<String>,
    /// The model's final answer.
    #[serde(default)]
    final_answer: Option<String>,
    /// The per-call timeout in seconds (default: `AGENT_TOOL_TIMEOUT_SECS` or 120).
    #[serde(default)]
    tool_timeout_secs: Option<u64>,
    /// Results over this many characters are persisted (default 16,000).
    #[serde(default)]
    max_output_chars: Option<usize>,
    /// Steps with tools before the final turn without them (default: one more than the turns, so that the
    /// script ends before the limit).
    #[serde(default)]
    max_steps: Option<u32>,
}

/// A scenario's workspace, ready to run in.
#[derive(Debug, Clone)]
struct PreparedScenario {
    /// The working directory.
    cwd: PathBuf,
    /// The temporary home directory.
    home: PathBuf,
    /// The settings discovered there.
    settings: Settings,
}

impl Scenario {
    /// Parses a scenario; the error names the scenario and what is wrong.
    pub(crate) fn parse(name: &str, text: &str) -> Result<Self> {
        serde_json::from_str(text).with_context(|| format!("invalid scenario `{name}`"))
    }

    /// Writes the workspace and the settings under `root` (a fresh directory) and loads the settings as
    /// agent-guard would discover them there.
    fn prepare(&self, root: &Path) -> Result<PreparedScenario> {
        let cwd = root.join("workspace");
        let home = root.join("home");
        for dir in [&cwd, &home] {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot write `{}`", dir.display()))?;
        }
        for (relative, content) in &self.files {
            let path = Path::new(relative);
            // Files of a scenario stay inside its workspace: no absolute path, no `..`.
            if !path
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
            {
                return Err(self.invalid(format!("file `{relative}` is not a plain relative path")));
            }
            write(&cwd.join(path), content)?;
        }
        let mut cli_files = Vec::new();
        for (source, document) in &self.settings {
            let path = match source.as_str() {
                "user" => Family::AgentGuard.settings_file(&home),
                "project" => Family::AgentGuard.settings_file(&cwd),
                "local" => Family::AgentGuard.local_settings_file(&cwd),
                "cliArg" => {
                    let file = root.join("cli-settings.json");
                    cli_files.push(file.clone());
                    file
                }
                other => {
                    return Err(self.invalid(format!(
                        "settings source `{other}` (expected `user`, `project`, `local` or `cliArg`)"
                    )));
                }
            };
            let text = serde_json::to_string_pretty(document).map_err(|e| self.invalid(e.to_string()))?;
            write(&path, &text)?;
        }
        let discovery = Discovery {
            cwd: cwd.clone(),
            home: Some(home.clone()),
            managed: Vec::new(),
            cli_files,
        };
        let settings = agent_decide::discover_settings(&discovery)?;
        Ok(PreparedScenario { cwd, home, settings })
    }

    /// The runtime configuration of a prepared workspace.
    fn config(&self, prepared: &PreparedScenario) -> Result<RuntimeConfig> {
        let mut config = RuntimeConfig::new(&prepared.cwd);
        config.home = Some(prepared.home.clone());
        if let Some(mode) = &self.mode {
            let mode: PermissionMode = mode
                .parse()
                .map_err(|e: agent_rules::Error| self.invalid(e.to_string()))?;
            config.mode = Some((mode, Source::CliArg));
        }
        if let Some(secs) = self.tool_timeout_secs {
            config.tool_timeout = Duration::from_secs(secs.max(1));
        }
        if let Some(chars) = self.max_output_chars {
            config.max_output_chars = chars;
        }
        config.limits.max_steps = self.max_steps.filter(|n| *n > 0).unwrap_or_else(|| {
            u32::try_from(self.turns.len())
                .unwrap_or(u32::MAX)
                .saturating_add(1)
        });
        Ok(config)
    }

    /// The approver answering from the scenario; what it does not answer goes to `fallback` when given.
    fn approver(&self, fallback: Option<Arc<dyn Approver>>) -> ScriptedApprover {
        let scripted = ScriptedApprover::new(self.approvals.clone(), self.answers.clone());
        match fallback {
            Some(fallback) => scripted.with_fallback(fallback),
            None => scripted,
        }
    }

    fn invalid(&self, why: String) -> anyhow::Error {
        anyhow!("invalid scenario `{}`: {why}", self.name)
    }
}

fn write(path: &Path, content: &str) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("cannot write `{}`", path.display()))?;
    }
    std::fs::write(path, content).with_context(|| format!("cannot write `{}`", path.display()))
}

/// Runs `scenario` in a workspace under `root` (a fresh directory), writing the audit log with `audit` when
/// given; asks the script does not answer go to `fallback` when given (else they are denied). Returns the
/// session report and the working directory.
pub(crate) async fn run_scenario(
    scenario: &Scenario,
    root: &Path,
    audit: Option<AuditLogHook>,
    fallback: Option<Arc<dyn Approver>>,
    session_id: &str,
) -> Result<(SessionReport, PathBuf)> {
    run_scenario_with(
        scenario,
        root,
        audit,
        fallback,
        session_id,
        ScenarioHost::default(),
    )
    .await
}

/// What a scenario runs with besides its file, when something else hosts it (`agent-guard serve`): more hooks
/// (after the runtime's own) and the cancellation registry the host cancels it through.
#[derive(Default)]
pub(crate) struct ScenarioHost {
    pub(crate) hooks: Vec<Arc<dyn AgentHook>>,
    pub(crate) cancel: Option<CancelRegistry>,
    /// Where the session's taint lives (default: the runtime's memory).
    pub(crate) taint: Option<Arc<dyn agent_rules::TaintKeeper>>,
}

/// [`run_scenario`] with a host's hooks, cancellation registry and keeper of the session's taint.
pub(crate) async fn run_scenario_with(
    scenario: &Scenario,
    root: &Path,
    audit: Option<AuditLogHook>,
    fallback: Option<Arc<dyn Approver>>,
    session_id: &str,
    host: ScenarioHost,
) -> Result<(SessionReport, PathBuf)> {
    let prepared = scenario.prepare(root)?;
    let config = scenario.config(&prepared)?;
    let cancel = host.cancel.unwrap_or_default();
    let mut builder = Runtime::builder(prepared.settings.clone(), config)
        .approver(Arc::new(scenario.approver(fallback)))
        .cancel_registry(cancel.clone())
        .subagent_models(Arc::new(ScriptedChildren::new(cancel.clone(), session_id)));
    if let Some(audit) = audit {
        builder = builder.audit(audit);
    }
    for hook in host.hooks {
        builder = builder.hook(hook);
    }
    if let Some(taint) = host.taint {
        builder = builder.taint_keeper(taint);
    }
    let runtime = builder.build()?;
    let mut model = ScriptedModel::new(
        scenario.turns.clone(),
        scenario.final_answer.clone(),
        cancel,
        session_id,
    );
    let report = runtime.run(session_id, &mut model).await;
    Ok((report, prepared.cwd))
}

#[cfg(test)]
#[path = "scenario_tests.rs"]
mod tests;
