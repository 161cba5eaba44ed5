//! Scripted drivers of the runtime: a model that replays turns of calls, the children of its `subagent` calls,
//! and an approver that answers from a script. The runtime's own tests, the cross-crate tests and the CLI's
//! scenario files (`agent-guard run`, `demo`) drive the runtime with them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_tool_traits::{CancelRegistry, ToolCall};
use serde::Deserialize;
use serde_json::Value;

use crate::approval::{ApprovalAnswer, ApprovalFuture, ApprovalRequest, Approver};
use crate::runtime::{ChildModels, Model, ModelFuture, ModelTurn, StepRecord};

/// One turn of the scripted model.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedTurn {
    /// What the turn is about, printed in the trace.
    #[serde(default)]
    pub note: Option<String>,
    /// The calls of the turn.
    pub calls: Vec<ScriptedCall>,
    /// Cancels the run this many milliseconds after the turn starts.
    #[serde(default)]
    pub cancel_after_ms: Option<u64>,
}

/// One call of a turn.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// The call id (unique in the scenario).
    pub id: String,
    /// The tool's name, either family.
    pub tool: String,
    /// The arguments.
    #[serde(default)]
    pub args: Value,
}

/// A model that replays scripted turns, then gives its final answer.
#[derive(Debug, Clone)]
pub struct ScriptedModel {
    turns: Vec<ScriptedTurn>,
    next: usize,
    answer: Option<String>,
    cancel: CancelRegistry,
    session_id: String,
}

impl ScriptedModel {
    /// A model that plays `turns` in order, then answers `answer` (`done` without one); a turn's scheduled
    /// cancellation cancels `session_id` in `cancel`.
    pub fn new(
        turns: Vec<ScriptedTurn>,
        answer: Option<String>,
        cancel: CancelRegistry,
        session_id: &str,
    ) -> Self {
        Self {
            turns,
            next: 0,
            answer,
            cancel,
            session_id: session_id.to_owned(),
        }
    }
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
        let turns: Vec<ScriptedTurn> = match args.get("turns") {
            None | Some(Value::Null) => Vec::new(),
            Some(turns) => serde_json::from_value(turns.clone()).ok()?,
        };
        let answer = args
            .get("final_answer")
            .and_then(Value::as_str)
            .map(str::to_owned);
        Some(Box::new(ScriptedModel::new(
            turns,
            answer,
            self.cancel.clone(),
            &self.session_id,
        )))
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

    fn party(&self, request: &ApprovalRequest) -> agent_hooks::Approver {
        match (self.approvals.contains_key(&request.call.id), &self.fallback) {
            (false, Some(fallback)) => fallback.party(request),
            (true, _) | (false, None) => agent_hooks::Approver::Scripted,
        }
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
