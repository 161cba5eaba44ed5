//! The coding agent's hook protocol: the JSON a command reads for each event, the tool names it expects, what its
//! output and exit code mean, and how the answers of several commands of one event combine.

use std::path::Path;

use agent_tool_traits::coding_agent_name;
use serde_json::{Map, Value, json};

use super::process::Run;
use super::settings::HookEvent;
use crate::{
    CompactContext, PermissionAnswer, PostToolUseAction, PostToolUseContext, PreToolUseAction,
    PreToolUseContext, SessionContext, SessionStopContext, SubagentContext, SubagentStopContext,
};

/// The exit code with which a command blocks the call (stderr is the reason).
const BLOCK_EXIT_CODE: i32 = 2;

/// The input of a PreToolUse command.
pub(super) fn pre_tool_use_input(ctx: &PreToolUseContext) -> Value {
    json!({
        "session_id": ctx.session_id,
        "cwd": ctx.cwd,
        "permission_mode": ctx.permission_mode,
        "hook_event_name": HookEvent::PreToolUse.as_str(),
        "tool_name": coding_agent_name(&ctx.call.name),
        "tool_input": ctx.call.args,
        "tool_use_id": ctx.call.id,
        "agent_name": ctx.agent_name,
    })
}

/// The input of a PermissionRequest command: the call and `message`, why it asks.
pub(super) fn permission_request_input(ctx: &PreToolUseContext, message: &str) -> Value {
    json!({
        "session_id": ctx.session_id,
        "cwd": ctx.cwd,
        "permission_mode": ctx.permission_mode,
        "hook_event_name": HookEvent::PermissionRequest.as_str(),
        "tool_name": coding_agent_name(&ctx.call.name),
        "tool_input": ctx.call.args,
        "tool_use_id": ctx.call.id,
        "message": message,
        "agent_name": ctx.agent_name,
    })
}

/// The input of a PostToolUse command, in the session's working directory `cwd` and mode `mode`.
pub(super) fn post_tool_use_input(ctx: &PostToolUseContext, cwd: &Path, mode: &str) -> Value {
    json!({
        "session_id": ctx.session_id,
        "cwd": cwd,
        "permission_mode": mode,
        "hook_event_name": HookEvent::PostToolUse.as_str(),
        "tool_name": coding_agent_name(&ctx.call.name),
        "tool_input": ctx.call.args,
        "tool_use_id": ctx.call.id,
        "tool_response": {
            "content": ctx.output.content,
            "is_error": ctx.output.is_error,
            "status": ctx.status.as_str(),
            "decision": ctx.verdict.decision.as_str(),
        },
        "agent_name": ctx.agent_name,
    })
}

/// The input of a lifecycle event's command: the event's own `fields`, then the session's.
pub(super) fn lifecycle_input(
    event: HookEvent,
    mut fields: Map<String, Value>,
    session_id: &str,
    cwd: &Path,
    mode: &str,
) -> Value {
    fields.insert("session_id".to_owned(), json!(session_id));
    fields.insert("cwd".to_owned(), json!(cwd));
    fields.insert("permission_mode".to_owned(), json!(mode));
    fields.insert("hook_event_name".to_owned(), json!(event.as_str()));
    Value::Object(fields)
}

/// The fields of SessionStart.
pub(super) fn session_start_fields(ctx: &SessionContext) -> Map<String, Value> {
    Map::from_iter([
        ("source".to_owned(), json!("startup")),
        ("agent_name".to_owned(), json!(ctx.agent_name)),
    ])
}

/// The fields of SessionEnd.
pub(super) fn session_end_fields(ctx: &SessionStopContext) -> Map<String, Value> {
    Map::from_iter([
        ("reason".to_owned(), json!(ctx.reason)),
        ("agent_name".to_owned(), json!(ctx.agent_name)),
    ])
}

/// The fields of SubagentStart.
pub(super) fn subagent_start_fields(ctx: &SubagentContext) -> Map<String, Value> {
    Map::from_iter([
        ("agent_name".to_owned(), json!(ctx.agent_name)),
        ("parent_agent".to_owned(), json!(ctx.parent_agent)),
        ("task".to_owned(), json!(ctx.task)),
    ])
}

/// The fields of SubagentStop.
pub(super) fn subagent_stop_fields(ctx: &SubagentStopContext) -> Map<String, Value> {
    Map::from_iter([
        ("agent_name".to_owned(), json!(ctx.agent_name)),
        ("parent_agent".to_owned(), json!(ctx.parent_agent)),
        ("outcome".to_owned(), json!(ctx.outcome)),
    ])
}

/// The fields of PreCompact.
pub(super) fn pre_compact_fields(ctx: &CompactContext) -> Map<String, Value> {
    Map::from_iter([
        ("trigger".to_owned(), json!(ctx.trigger)),
        ("agent_name".to_owned(), json!(ctx.agent_name)),
    ])
}

/// The fields of PostCompact.
pub(super) fn post_compact_fields(ctx: &CompactContext) -> Map<String, Value> {
    Map::from_iter([
        ("trigger".to_owned(), json!(ctx.trigger)),
        ("agent_name".to_owned(), json!(ctx.agent_name)),
        ("tokens_before".to_owned(), json!(ctx.tokens_before)),
        ("tokens_after".to_owned(), json!(ctx.tokens_after)),
    ])
}

impl Run {
    /// The PreToolUse decision of this run, if it made one.
    pub(super) fn pre_decision(&self) -> Option<PreToolUseAction> {
        self.outcome(HookEvent::PreToolUse, "blocked", parse_pre_output, |reason| {
            PreToolUseAction::Block { reason }
        })
    }

    /// The PermissionRequest answer of this run, if it gave one.
    pub(super) fn permission_answer(&self) -> Option<PermissionAnswer> {
        self.outcome(
            HookEvent::PermissionRequest,
            "denied",
            parse_permission_output,
            |reason| PermissionAnswer::Deny { reason },
        )
    }

    /// The protocol's reading of a finished run: exit 0 → the JSON on stdout (`parse`), exit 2 → a refusal with
    /// stderr as the reason (`refuse`), anything else (or no exit code) → no decision, logged.
    fn outcome<T>(
        &self,
        event: HookEvent,
        refused: &str,
        parse: impl FnOnce(&str, &str) -> Option<T>,
        refuse: impl FnOnce(String) -> T,
    ) -> Option<T> {
        let Self::Exited {
            command,
            code: Some(code),
            stdout,
            stderr,
        } = self
        else {
            self.log(event);
            return None;
        };
        match *code {
            0 => parse(command, stdout),
            BLOCK_EXIT_CODE => {
                let reason = stderr.trim();
                Some(refuse(if reason.is_empty() {
                    format!("{refused} by hook command `{command}`")
                } else {
                    reason.to_owned()
                }))
            }
            _ => {
                self.log(event);
                None
            }
        }
    }

    /// Applies this run's PostToolUse answer to `content`; returns whether it changed.
    fn apply_post(&self, content: &mut String) -> bool {
        let Self::Exited {
            code: Some(code),
            stdout,
            stderr,
            ..
        } = self
        else {
            self.log(HookEvent::PostToolUse);
            return false;
        };
        match *code {
            0 => apply_post_output(stdout, content),
            // The call already ran; the coding agent shows stderr to the model.
            BLOCK_EXIT_CODE => append_feedback(content, stderr),
            _ => {
                self.log(HookEvent::PostToolUse);
                false
            }
        }
    }
}

/// Reads the stdout of a PreToolUse command that exited 0. The strictest answer in one output wins: deny, then
/// `continue: false`, then ask, then a rewritten input, then allow. An allow that comes with a rewritten input is
/// returned as the rewrite alone, so the new input is checked by the rules rather than allowed unseen.
fn parse_pre_output(command: &str, stdout: &str) -> Option<PreToolUseAction> {
    let text = stdout.trim();
    if text.is_empty() {
        return None;
    }
    let Ok(Value::Object(output)) = serde_json::from_str::<Value>(text) else {
        tracing::warn!(%command, "hook command printed something that is not a JSON object: no decision");
        return None;
    };
    let specific = output
        .get("hookSpecificOutput")
        .and_then(Value::as_object)
        .filter(|specific| {
            specific
                .get("hookEventName")
                .and_then(Value::as_str)
                .is_none_or(|name| name == HookEvent::PreToolUse.as_str())
        });
    let field = |name: &str| specific.and_then(|specific| specific.get(name));
    let reason = field("permissionDecisionReason")
        .or_else(|| output.get("reason"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let decision = match field("permissionDecision").and_then(Value::as_str) {
        Some(decision @ ("allow" | "deny" | "ask")) => Some(decision),
        Some(other) => {
            tracing::warn!(%command, decision = other, "unknown permissionDecision: ignored");
            None
        }
        None => match output.get("decision").and_then(Value::as_str) {
            Some("block") => Some("deny"),
            Some("approve") => Some("allow"),
            _ => None,
        },
    };
    let default_reason = |what: &str| {
        if reason.is_empty() {
            format!("{what} by hook command `{command}`")
        } else {
            reason.clone()
        }
    };
    if decision == Some("deny") {
        return Some(PreToolUseAction::Block {
            reason: default_reason("denied"),
        });
    }
    if output.get("continue").and_then(Value::as_bool) == Some(false) {
        let stop = output
            .get("stopReason")
            .and_then(Value::as_str)
            .map(str::to_owned);
        return Some(PreToolUseAction::Block {
            reason: stop.unwrap_or_else(|| default_reason("stopped")),
        });
    }
    if decision == Some("ask") {
        return Some(PreToolUseAction::PermissionRequired {
            message: default_reason("permission requested"),
        });
    }
    match field("updatedInput") {
        Some(args @ Value::Object(_)) => {
            let context = field("additionalContext")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let context = context.or_else(|| (!reason.is_empty()).then(|| reason.clone()));
            return Some(PreToolUseAction::MutateInput {
                args: args.clone(),
                context,
            });
        }
        Some(_) => tracing::warn!(%command, "updatedInput is not an object: ignored"),
        None => {}
    }
    (decision == Some("allow")).then(|| PreToolUseAction::Allow {
        reason: default_reason("allowed"),
    })
}

/// Reads the stdout of a PermissionRequest command that exited 0: `hookSpecificOutput.decision.behavior`
/// (`allow` or `deny`, with `message`), or a `permissionDecision` of `allow` or `deny`. Anything else answers nothing.
fn parse_permission_output(command: &str, stdout: &str) -> Option<PermissionAnswer> {
    let Ok(Value::Object(output)) = serde_json::from_str::<Value>(stdout.trim()) else {
        return None;
    };
    let specific = output
        .get("hookSpecificOutput")
        .and_then(Value::as_object)
        .filter(|specific| {
            specific
                .get("hookEventName")
                .and_then(Value::as_str)
                .is_none_or(|name| name == HookEvent::PermissionRequest.as_str())
        })?;
    let (behavior, reason) = match specific.get("decision").and_then(Value::as_object) {
        Some(decision) => (
            decision.get("behavior").and_then(Value::as_str),
            decision.get("message").and_then(Value::as_str),
        ),
        None => (
            specific.get("permissionDecision").and_then(Value::as_str),
            specific.get("permissionDecisionReason").and_then(Value::as_str),
        ),
    };
    let reason =
        |what: &str| reason.map_or_else(|| format!("{what} by hook command `{command}`"), str::to_owned);
    match behavior {
        Some("allow") => Some(PermissionAnswer::Allow {
            reason: reason("allowed"),
        }),
        Some("deny") => Some(PermissionAnswer::Deny {
            reason: reason("denied"),
        }),
        _ => None,
    }
}

/// Reads the stdout of a PostToolUse command that exited 0: a replacement output, or feedback for the model.
fn apply_post_output(stdout: &str, content: &mut String) -> bool {
    let Ok(Value::Object(output)) = serde_json::from_str::<Value>(stdout.trim()) else {
        return false;
    };
    let specific = output.get("hookSpecificOutput").and_then(Value::as_object);
    let field = |name: &str| {
        specific
            .and_then(|specific| specific.get(name))
            .and_then(Value::as_str)
    };
    let mut changed = false;
    if let Some(replacement) = field("updatedToolOutput").or_else(|| field("updatedMCPToolOutput")) {
        replacement.clone_into(content);
        changed = true;
    }
    if output.get("decision").and_then(Value::as_str) == Some("block") {
        changed |= append_feedback(
            content,
            output
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or("blocked by a hook"),
        );
    }
    if let Some(context) = field("additionalContext") {
        changed |= append_feedback(content, context);
    }
    changed
}

fn append_feedback(content: &mut String, feedback: &str) -> bool {
    let feedback = feedback.trim();
    if feedback.is_empty() {
        return false;
    }
    content.push_str("\n\n[hook] ");
    content.push_str(feedback);
    true
}

/// Combines the decisions of the commands of one event, strictest first.
pub(super) fn combine_pre(decisions: impl Iterator<Item = PreToolUseAction>) -> PreToolUseAction {
    let mut asks = Vec::new();
    let mut rewrite = None;
    let mut allow = None;
    for decision in decisions {
        match decision {
            PreToolUseAction::Continue => {}
            block @ PreToolUseAction::Block { .. } => return block,
            PreToolUseAction::PermissionRequired { message } => asks.push(message),
            mutate @ PreToolUseAction::MutateInput { .. } => rewrite = Some(mutate),
            allowed @ PreToolUseAction::Allow { .. } => {
                allow.get_or_insert(allowed);
            }
        }
    }
    if !asks.is_empty() {
        return PreToolUseAction::PermissionRequired {
            message: asks.join("; "),
        };
    }
    rewrite.or(allow).unwrap_or(PreToolUseAction::Continue)
}

/// Combines the PermissionRequest answers of the commands of one event: the strictest wins, so one deny among
/// several commands denies; else the first allow.
pub(super) fn combine_permission(
    answers: impl Iterator<Item = PermissionAnswer>,
) -> Option<PermissionAnswer> {
    let answers: Vec<PermissionAnswer> = answers.collect();
    let deny = answers
        .iter()
        .find(|answer| matches!(answer, PermissionAnswer::Deny { .. }))
        .cloned();
    deny.or_else(|| answers.into_iter().next())
}

/// Applies the PostToolUse answers of `runs`, in order, to the call's `output`: each sees the content the previous
/// one left.
pub(super) fn combine_post(runs: &[Run], output: &str) -> PostToolUseAction {
    let mut content = output.to_owned();
    let mut changed = false;
    for run in runs {
        changed |= run.apply_post(&mut content);
    }
    if changed {
        PostToolUseAction::MutateOutput { content }
    } else {
        PostToolUseAction::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_precedence() {
        let deny_and_rewrite = r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "no", "updatedInput": {"a": 1}}}"#;
        assert_eq!(
            parse_pre_output("c", deny_and_rewrite),
            Some(PreToolUseAction::Block { reason: "no".into() })
        );
        let allow_and_rewrite =
            r#"{"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"a": 1}}}"#;
        assert!(matches!(
            parse_pre_output("c", allow_and_rewrite),
            Some(PreToolUseAction::MutateInput { .. })
        ));
        assert_eq!(
            parse_pre_output("c", r#"{"decision": "approve", "reason": "fine"}"#),
            Some(PreToolUseAction::Allow {
                reason: "fine".into()
            })
        );
        let other_event =
            r#"{"hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "allow"}}"#;
        assert_eq!(parse_pre_output("c", other_event), None);
        assert_eq!(parse_pre_output("c", "[1, 2]"), None);
    }

    #[test]
    fn strictest_command_wins() {
        let block = PreToolUseAction::Block { reason: "b".into() };
        let ask = PreToolUseAction::PermissionRequired { message: "a".into() };
        let allow = PreToolUseAction::Allow { reason: "ok".into() };
        assert_eq!(
            combine_pre([allow.clone(), ask.clone(), block.clone()].into_iter()),
            block
        );
        assert_eq!(combine_pre([allow.clone(), ask.clone()].into_iter()), ask);
        assert_eq!(
            combine_pre([PreToolUseAction::Continue, allow.clone()].into_iter()),
            allow
        );
    }
}
