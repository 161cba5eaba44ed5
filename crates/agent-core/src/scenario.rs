//! Scripted sessions: a scenario file (settings, workspace files, turns of calls, answers, cancellations), the
//! model and approver that replay it, and the runner.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_hooks::AuditLogHook;
use agent_rules::{Discovery, PermissionMode, Settings};
use agent_tool_traits::{CancelRegistry, Source, ToolCall};
use serde::Deserialize;
use serde_json::Value;

use crate::approval::{ApprovalAnswer, ApprovalFuture, ApprovalRequest, Approver};
use crate::runtime::{
    ChildModels, Model, ModelFuture, ModelTurn, Runtime, RuntimeConfig, SessionReport, StepRecord,
};
use crate::runtime_error::RuntimeError;

/// A scripted session, read from JSON.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A short title.
    pub name: String,
    /// What the scenario shows.
    #[serde(default)]
    pub description: String,
    /// The permission mode (`--mode`), when not the settings' own.
    #[serde(default)]
    pub mode: Option<String>,
    /// Settings documents by source: `user` (in a temporary home), `project` and `local` (the workspace's
    /// `.agent-guard/settings.json` and `settings.local.json`), `cliArg` (a `--settings` file).
    #[serde(default)]
    pub settings: BTreeMap<String, Value>,
    /// Files of the workspace, by relative path.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// The model's turns, in order.
    pub turns: Vec<ScenarioTurn>,
    /// Answers to asks, by call id; an ask without an answer is denied as it would be headless.
    #[serde(default)]
    pub approvals: BTreeMap<String, ApprovalAnswer>,
    /// Answers to `ask_user` questions, in order.
    #[serde(default)]
    pub answers: Vec<String>,
    /// The model's final answer.
    #[serde(default)]
    pub final_answer: Option<String>,
    /// The per-call timeout in seconds (default: `AGENT_TOOL_TIMEOUT_SECS` or 120).
    #[serde(default)]
    pub tool_timeout_secs: Option<u64>,
    /// Results over this many characters are persisted (default 16,000).
    #[serde(default)]
    pub max_output_chars: Option<usize>,
    /// Steps with tools before the final turn without them (default: one more than the turns, so that the
    /// script ends before the limit).
    #[serde(default)]
    pub max_steps: Option<u32>,
}

/// One turn of the scripted model.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioTurn {
    /// What the turn is about, printed in the trace.
    #[serde(default)]
    pub note: Option<String>,
    /// The calls of the turn.
    pub calls: Vec<ScenarioCall>,
    /// Cancels the run this many milliseconds after the turn starts.
    #[serde(default)]
    pub cancel_after_ms: Option<u64>,
}

/// One call of a turn.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioCall {
    /// The call id (unique in the scenario).
    pub id: String,
    /// The tool's name, either family.
    pub tool: String,
    /// The arguments.
    #[serde(default)]
    pub args: Value,
}

/// A scenario's workspace, ready to run in.
#[derive(Debug, Clone)]
pub struct PreparedScenario {
    /// The working directory.
    pub cwd: PathBuf,
    /// The temporary home directory.
    pub home: PathBuf,
    /// The settings discovered there.
    pub settings: Settings,
}

impl Scenario {
    /// Parses a scenario; the error names the scenario and what is wrong.
    pub fn parse(name: &str, text: &str) -> Result<Self, RuntimeError> {
        serde_json::from_str(text).map_err(|e| RuntimeError::Scenario {
            name: name.to_owned(),
            why: e.to_string(),
        })
    }

    /// Writes the workspace and the settings under `root` (a fresh directory) and loads the settings as
    /// agent-guard would discover them there.
    pub fn prepare(&self, root: &Path) -> Result<PreparedScenario, RuntimeError> {
        let cwd = root.join("workspace");
        let home = root.join("home");
        for dir in [&cwd, &home] {
            std::fs::create_dir_all(dir).map_err(|source| RuntimeError::Io {
                path: dir.clone(),
                source,
            })?;
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
                "user" => home.join(".agent-guard").join("settings.json"),
                "project" => cwd.join(".agent-guard").join("settings.json"),
                "local" => cwd.join(".agent-guard").join("settings.local.json"),
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
        let settings = Settings::discover(&discovery)?;
        Ok(PreparedScenario { cwd, home, settings })
    }

    /// The runtime configuration of a prepared workspace.
    pub fn config(&self, prepared: &PreparedScenario) -> Result<RuntimeConfig, RuntimeError> {
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

    /// The model replaying the turns; `cancel` receives the scheduled cancellations.
    pub fn model(&self, cancel: CancelRegistry, session_id: &str) -> ScriptedModel {
        ScriptedModel {
            turns: self.turns.clone(),
            next: 0,
            answer: self.final_answer.clone(),
            cancel,
            session_id: session_id.to_owned(),
        }
    }

    /// The approver answering from the scenario.
    pub fn approver(&self) -> ScriptedApprover {
        ScriptedApprover::new(self.approvals.clone(), self.answers.clone())
    }

    fn invalid(&self, why: String) -> RuntimeError {
        RuntimeError::Scenario {
            name: self.name.clone(),
            why,
        }
    }
}

fn write(path: &Path, content: &str) -> Result<(), RuntimeError> {
    let io = |source| RuntimeError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    std::fs::write(path, content).map_err(|source| RuntimeError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// A model that replays scripted turns, then gives its final answer.
#[derive(Debug, Clone)]
pub struct ScriptedModel {
    turns: Vec<ScenarioTurn>,
    next: usize,
    answer: Option<String>,
    cancel: CancelRegistry,
    session_id: String,
}

impl Model for ScriptedModel {
    fn next_turn<'a>(&'a mut self, _history: &'a [StepRecord]) -> ModelFuture<'a> {
        let turn = self.turns.get(self.next).cloned();
        self.next += 1;
        Box::pin(async move {
            let Some(turn) = turn else {
                return ModelTurn::Answer(self.answer.clone().unwrap_or_else(|| "done".to_owned()));
            };
            if let Some(ms) = turn.cancel_after_ms {
                let (cancel, session) = (self.cancel.clone(), self.session_id.clone());
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    cancel.cancel(&session);
                });
            }
            ModelTurn::Calls(
                turn.calls
                    .into_iter()
                    .map(|c| ToolCall::new(c.id, c.tool, c.args))
                    .collect(),
            )
        })
    }

    /// A forced final turn gives the scripted final answer; the remaining turns are never played.
    fn final_turn<'a>(&'a mut self, _history: &'a [StepRecord], _reminder: &'a str) -> ModelFuture<'a> {
        self.next = self.turns.len();
        let answer = self.answer.clone().unwrap_or_else(|| "done".to_owned());
        Box::pin(async move { ModelTurn::Answer(answer) })
    }
}

/// Drives each subagent with the turns its `subagent` call carries: `{"subagent_type": "explore", "prompt": …,
/// "turns": [{"calls": […]}], "final_answer": "…"}`.
#[derive(Debug, Clone)]
pub struct ScriptedChildren {
    cancel: CancelRegistry,
    session_id: String,
}

impl ScriptedChildren {
    /// Children of the session `session_id`; `cancel` receives their scheduled cancellations.
    pub fn new(cancel: CancelRegistry, session_id: &str) -> Self {
        Self {
            cancel,
            session_id: session_id.to_owned(),
        }
    }
}

impl ChildModels for ScriptedChildren {
    fn child_model(&self, _plan: &agent_subagent::ChildPlan, args: &Value) -> Option<Box<dyn Model>> {
        let turns: Vec<ScenarioTurn> = match args.get("turns") {
            None | Some(Value::Null) => Vec::new(),
            Some(turns) => serde_json::from_value(turns.clone()).ok()?,
        };
        Some(Box::new(ScriptedModel {
            turns,
            next: 0,
            answer: args
                .get("final_answer")
                .and_then(Value::as_str)
                .map(str::to_owned),
            cancel: self.cancel.clone(),
            session_id: self.session_id.clone(),
        }))
    }
}

/// An approver answering asks by call id and questions in order; what the script does not answer goes to the
/// fallback approver, if there is one.
#[derive(Default)]
pub struct ScriptedApprover {
    approvals: BTreeMap<String, ApprovalAnswer>,
    answers: Mutex<std::collections::VecDeque<String>>,
    fallback: Option<Arc<dyn Approver>>,
}

impl std::fmt::Debug for ScriptedApprover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedApprover")
            .field("approvals", &self.approvals)
            .field("fallback", &self.fallback.is_some())
            .finish_non_exhaustive()
    }
}

impl ScriptedApprover {
    /// Answers `approvals` by call id and `answers` to `ask_user`, in order.
    pub fn new(approvals: BTreeMap<String, ApprovalAnswer>, answers: Vec<String>) -> Self {
        Self {
            approvals,
            answers: Mutex::new(answers.into()),
            fallback: None,
        }
    }

    /// Hands what the script does not answer to `fallback` (a terminal, for instance).
    #[must_use]
    pub fn with_fallback(mut self, fallback: Arc<dyn Approver>) -> Self {
        self.fallback = Some(fallback);
        self
    }
}

impl Approver for ScriptedApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a, Option<ApprovalAnswer>> {
        let scripted = self.approvals.get(&request.call.id).copied();
        Box::pin(async move {
            match (scripted, &self.fallback) {
                (Some(answer), _) => Some(answer),
                (None, Some(fallback)) => fallback.approve(request).await,
                (None, None) => None,
            }
        })
    }

    fn answer_question<'a>(&'a self, question: &'a str) -> ApprovalFuture<'a, Option<String>> {
        let scripted = self
            .answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front();
        Box::pin(async move {
            match (scripted, &self.fallback) {
                (Some(answer), _) => Some(answer),
                (None, Some(fallback)) => fallback.answer_question(question).await,
                (None, None) => None,
            }
        })
    }
}

/// Runs `scenario` in a workspace under `root` (a fresh directory), writing the audit log with `audit` when
/// given; asks the script does not answer go to `fallback` when given (else they are denied). Returns the
/// session report and the working directory.
pub async fn run_scenario(
    scenario: &Scenario,
    root: &Path,
    audit: Option<AuditLogHook>,
    fallback: Option<Arc<dyn Approver>>,
    session_id: &str,
) -> Result<(SessionReport, PathBuf), RuntimeError> {
    let prepared = scenario.prepare(root)?;
    let config = scenario.config(&prepared)?;
    let cancel = CancelRegistry::new();
    let mut builder = Runtime::builder(prepared.settings.clone(), config)
        .approver(Arc::new(match fallback {
            Some(fallback) => scenario.approver().with_fallback(fallback),
            None => scenario.approver(),
        }))
        .cancel_registry(cancel.clone())
        .subagent_models(Arc::new(ScriptedChildren::new(cancel.clone(), session_id)));
    if let Some(audit) = audit {
        builder = builder.audit(audit);
    }
    let runtime = builder.build()?;
    let mut model = scenario.model(cancel, session_id);
    let report = runtime.run(session_id, &mut model).await;
    Ok((report, prepared.cwd))
}
