//! External command hooks with real `sh` scripts: the coding agent's protocol end to end.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_hooks::{
    AgentHook, CallStatus, CommandHook, CompactContext, HookRegistry, PermissionAnswer, PostToolUseAction,
    PostToolUseContext, PreToolUseAction, PreToolUseContext, SessionContext, SessionStopContext,
};
use agent_tool_traits::{Decision, Layer, Provenance, ToolCall, ToolOutput, Verdict};
use serde_json::{Value, json};

/// A temporary directory holding hook scripts.
struct Scripts {
    dir: tempfile::TempDir,
}

impl Scripts {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes a script `name` with `body` and returns the command that runs it. Run through `sh FILE` rather than
    /// executed directly: a file just written can be briefly busy (`ETXTBSY`) while another test thread forks.
    fn script(&self, name: &str, body: &str) -> String {
        let path = self.path(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        format!("sh '{}'", path.display())
    }

    /// A hook running `command` for every PreToolUse and PostToolUse of tools matching `matcher`.
    fn hook(&self, matcher: &str, command: &str, timeout: f64) -> CommandHook {
        let group = json!([{"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": timeout}]}]);
        CommandHook::from_json(&json!({"hooks": {"PreToolUse": group, "PostToolUse": group}})).unwrap()
    }

    fn pre_ctx(&self, tool: &str, args: Value) -> PreToolUseContext {
        PreToolUseContext {
            session_id: "s-42".into(),
            agent_name: "lead".into(),
            step: 3,
            call: ToolCall::new("call-7", tool, args),
            cwd: self.dir.path().to_path_buf(),
            permission_mode: "acceptEdits".into(),
        }
    }
}

fn post_ctx(tool: &str, content: &str) -> PostToolUseContext {
    PostToolUseContext {
        session_id: "s-42".into(),
        agent_name: "lead".into(),
        step: 3,
        call: ToolCall::new("call-7", tool, json!({"command": "ls"})),
        cwd: "/work".into(),
        permission_mode: "default".into(),
        output: ToolOutput::ok(content),
        status: CallStatus::Ok,
        verdict: Verdict::new(Decision::Allow, "read-only", Provenance::layer(Layer::Bash)),
        elapsed: Duration::from_millis(5),
        sandbox: None,
        approver: None,
    }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test]
async fn the_input_follows_the_protocol_and_allow_is_an_allow() {
    let scripts = Scripts::new();
    let seen = scripts.path("seen.json");
    let command = scripts.script(
        "allow.sh",
        &format!(
            "cat > '{}'\necho '{{\"hookSpecificOutput\": {{\"hookEventName\": \"PreToolUse\", \
             \"permissionDecision\": \"allow\", \"permissionDecisionReason\": \"known safe\"}}}}'",
            seen.display()
        ),
    );
    let hook = scripts.hook("Bash", &command, 10.0);
    let action = hook
        .pre_tool_use(&scripts.pre_ctx("run_bash", json!({"command": "npm test"})))
        .await;
    assert_eq!(
        action,
        PreToolUseAction::Allow {
            reason: "known safe".into()
        }
    );

    let input = read_json(&seen);
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["session_id"], "s-42");
    assert_eq!(input["permission_mode"], "acceptEdits");
    assert_eq!(input["cwd"], json!(scripts.dir.path()));
    // `run_bash` is presented under the coding agent's name, so its scripts work unchanged.
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(input["tool_input"], json!({"command": "npm test"}));
    assert_eq!(input["tool_use_id"], "call-7");
}

#[tokio::test]
async fn a_deny_decision_blocks_through_the_registry() {
    let scripts = Scripts::new();
    let command = scripts.script(
        "deny.sh",
        r#"cat > /dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no writes on Fridays"}}'"#,
    );
    let mut hooks = HookRegistry::new();
    hooks.register(Arc::new(scripts.hook("Bash|Write", &command, 10.0)));
    let outcome = hooks
        .run_pre_tool_use(&scripts.pre_ctx("file_write", json!({"file_path": "a.txt"})))
        .await;
    assert_eq!(
        outcome.permission.block,
        Some(("command-hooks".into(), "no writes on Fridays".into()))
    );
}

#[tokio::test]
async fn the_legacy_block_and_ask_shapes_are_understood() {
    let scripts = Scripts::new();
    let block = scripts.script(
        "block.sh",
        r#"echo '{"decision": "block", "reason": "legacy says no"}'"#,
    );
    let action = scripts
        .hook("*", &block, 10.0)
        .pre_tool_use(&scripts.pre_ctx("Read", json!({})))
        .await;
    assert_eq!(
        action,
        PreToolUseAction::Block {
            reason: "legacy says no".into()
        }
    );

    let ask = scripts.script(
        "ask.sh",
        r#"echo '{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "prod database"}}'"#,
    );
    let action = scripts
        .hook("", &ask, 10.0)
        .pre_tool_use(&scripts.pre_ctx("Read", json!({})))
        .await;
    assert_eq!(
        action,
        PreToolUseAction::PermissionRequired {
            message: "prod database".into()
        }
    );
}

#[tokio::test]
async fn exit_code_2_blocks_with_stderr_as_the_reason() {
    let scripts = Scripts::new();
    let command = scripts.script(
        "exit2.sh",
        "echo 'ignored stdout'\necho 'rm outside the project' >&2\nexit 2",
    );
    let action = scripts
        .hook("Bash", &command, 10.0)
        .pre_tool_use(&scripts.pre_ctx("Bash", json!({})))
        .await;
    assert_eq!(
        action,
        PreToolUseAction::Block {
            reason: "rm outside the project".into()
        }
    );
}

#[tokio::test]
async fn other_exit_codes_and_garbage_make_no_decision() {
    let scripts = Scripts::new();
    let cases = [
        scripts.script(
            "exit1.sh",
            r#"echo '{"decision": "block", "reason": "x"}'; exit 1"#,
        ),
        scripts.script("garbage.sh", "echo 'this is {not json'"),
        scripts.script("array.sh", "echo '[\"deny\"]'"),
        scripts.script(
            "unknown.sh",
            r#"echo '{"hookSpecificOutput": {"permissionDecision": "maybe"}}'"#,
        ),
        scripts.script("silent.sh", "exit 0"),
        scripts.path("does-not-exist.sh").display().to_string(),
    ];
    for command in cases {
        let action = scripts
            .hook("*", &command, 10.0)
            .pre_tool_use(&scripts.pre_ctx("Bash", json!({})))
            .await;
        assert_eq!(action, PreToolUseAction::Continue, "{command}");
    }
}

#[tokio::test]
async fn a_timed_out_hook_is_killed_with_its_children_and_decides_nothing() {
    let scripts = Scripts::new();
    let pid_file = scripts.path("child.pid");
    let command = scripts.script(
        "slow.sh",
        &format!(
            "sleep 30 &\necho $! > '{}'\nwait\necho '{{\"decision\": \"block\"}}'\nexit 2",
            pid_file.display()
        ),
    );
    let started = Instant::now();
    let action = scripts
        .hook("*", &command, 1.5)
        .pre_tool_use(&scripts.pre_ctx("Bash", json!({})))
        .await;
    assert_eq!(action, PreToolUseAction::Continue);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );

    let child = std::fs::read_to_string(&pid_file).unwrap().trim().to_owned();
    // The background `sleep` belonged to the hook's process group, which was killed.
    let mut alive = true;
    for _ in 0..50 {
        alive = Path::new(&format!("/proc/{child}")).exists()
            && !std::fs::read_to_string(format!("/proc/{child}/stat"))
                .unwrap_or_default()
                .contains(") Z ");
        if !alive {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive, "the hook's child {child} outlived the timeout");
}

#[tokio::test]
async fn updated_input_rewrites_the_call() {
    let scripts = Scripts::new();
    let command = scripts.script(
        "rewrite.sh",
        r#"cat > /dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "added --dry-run", "updatedInput": {"command": "make --dry-run"}}}'"#,
    );
    let mut hooks = HookRegistry::new();
    hooks.register(Arc::new(scripts.hook("Bash", &command, 10.0)));
    let outcome = hooks
        .run_pre_tool_use(&scripts.pre_ctx("Bash", json!({"command": "make"})))
        .await;
    assert!(outcome.mutated);
    assert_eq!(outcome.args, json!({"command": "make --dry-run"}));
    assert_eq!(outcome.contexts, ["added --dry-run"]);
    // The rewritten input is not allowed unseen: it goes back through the rules.
    assert_eq!(outcome.permission.allow, None);
}

#[tokio::test]
async fn a_matcher_that_does_not_select_the_tool_runs_nothing() {
    let scripts = Scripts::new();
    let marker = scripts.path("ran");
    let command = scripts.script("mark.sh", &format!("touch '{}'\nexit 2", marker.display()));
    let hook = scripts.hook("Write|Edit", &command, 10.0);
    assert_eq!(
        hook.pre_tool_use(&scripts.pre_ctx("read_file", json!({}))).await,
        PreToolUseAction::Continue
    );
    assert!(!marker.exists());
    assert!(matches!(
        hook.pre_tool_use(&scripts.pre_ctx("file_edit", json!({}))).await,
        PreToolUseAction::Block { .. }
    ));
    assert!(marker.exists());
}

#[tokio::test]
async fn several_commands_combine_strictest_first() {
    let scripts = Scripts::new();
    let allow = scripts.script(
        "allow.sh",
        r#"echo '{"hookSpecificOutput": {"permissionDecision": "allow"}}'"#,
    );
    let ask = scripts.script("ask.sh", r#"echo '{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "check"}}'"#);
    let settings = json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": allow}]},
        {"matcher": "*", "hooks": [{"type": "command", "command": ask}]}
    ]}});
    let hook = CommandHook::from_json(&settings).unwrap();
    let action = hook.pre_tool_use(&scripts.pre_ctx("Bash", json!({}))).await;
    assert_eq!(
        action,
        PreToolUseAction::PermissionRequired {
            message: "check".into()
        }
    );
}

#[tokio::test]
async fn post_tool_use_sees_the_response_and_can_add_feedback() {
    let scripts = Scripts::new();
    let seen = scripts.path("post.json");
    let command = scripts.script(
        "post.sh",
        &format!(
            "cat > '{}'\necho 'secrets were redacted' >&2\nexit 2",
            seen.display()
        ),
    );
    let action = scripts
        .hook("Bash", &command, 10.0)
        .post_tool_use(&post_ctx("run_bash", "file list"))
        .await;
    assert_eq!(
        action,
        PostToolUseAction::MutateOutput {
            content: "file list\n\n[hook] secrets were redacted".into()
        }
    );
    let input = read_json(&seen);
    assert_eq!(input["hook_event_name"], "PostToolUse");
    assert_eq!(input["tool_response"]["content"], "file list");
    assert_eq!(input["tool_response"]["status"], "OK");

    let replace = scripts.script(
        "replace.sh",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": "[redacted]"}}'"#,
    );
    let action = scripts
        .hook("*", &replace, 10.0)
        .post_tool_use(&post_ctx("run_bash", "AKIA1234"))
        .await;
    assert_eq!(
        action,
        PostToolUseAction::MutateOutput {
            content: "[redacted]".into()
        }
    );

    let quiet = scripts.script("quiet.sh", "exit 0");
    let action = scripts
        .hook("*", &quiet, 10.0)
        .post_tool_use(&post_ctx("run_bash", "x"))
        .await;
    assert_eq!(action, PostToolUseAction::Continue);
}

#[tokio::test]
async fn permission_request_commands_answer_headless_asks() {
    let scripts = Scripts::new();
    let seen = scripts.path("request.json");
    let allow = scripts.script(
        "allow.sh",
        &format!(
            "cat > '{}'\necho '{{\"hookSpecificOutput\": {{\"hookEventName\": \"PermissionRequest\",              \"decision\": {{\"behavior\": \"allow\", \"message\": \"CI may write\"}}}}}}'",
            seen.display()
        ),
    );
    let deny = scripts.script("deny.sh", "echo 'not in CI' >&2\nexit 2");
    let ctx = scripts.pre_ctx("file_write", json!({"file_path": "out.txt"}));
    let request = |command: &str| {
        let group = json!([{"matcher": "Write", "hooks": [{"type": "command", "command": command}]}]);
        CommandHook::from_json(&json!({"hooks": {"PermissionRequest": group}})).unwrap()
    };

    let mut hooks = HookRegistry::new();
    hooks.register(Arc::new(request(&allow)));
    let answer = hooks.run_permission_request(&ctx, "write out.txt?").await;
    assert_eq!(
        answer,
        Some((
            "command-hooks".into(),
            PermissionAnswer::Allow {
                reason: "CI may write".into()
            }
        ))
    );
    let input = read_json(&seen);
    assert_eq!(
        (input["hook_event_name"].as_str(), input["message"].as_str()),
        (Some("PermissionRequest"), Some("write out.txt?"))
    );
    assert_eq!(input["tool_name"], "Write");

    // A deny from a later hook beats an earlier allow.
    hooks.register(Arc::new(request(&deny)));
    let answer = hooks.run_permission_request(&ctx, "write out.txt?").await;
    assert_eq!(
        answer,
        Some((
            "command-hooks".into(),
            PermissionAnswer::Deny {
                reason: "not in CI".into()
            }
        ))
    );

    // No PermissionRequest command for the tool: nobody answers, and the caller denies.
    let unanswered = HookRegistry::new()
        .run_permission_request(&ctx, "write out.txt?")
        .await;
    assert_eq!(unanswered, None);
    let other_tool = request(&allow)
        .on_permission_request(&scripts.pre_ctx("Bash", json!({})), "run?")
        .await;
    assert_eq!(other_tool, None);
}

#[tokio::test]
async fn lifecycle_commands_receive_the_session_and_the_compaction_figures() {
    let scripts = Scripts::new();
    let log = scripts.path("events.jsonl");
    // Each event's input on one line of the log (`jq -c` is not needed: the input is one line already).
    let command = scripts.script(
        "log.sh",
        &format!("cat >> '{}'\necho >> '{}'", log.display(), log.display()),
    );
    let group = json!([{"hooks": [{"type": "command", "command": command}]}]);
    let hook = CommandHook::from_json(&json!({"hooks": {
        "SessionStart": group, "PreCompact": group, "PostCompact": group, "SessionEnd": group
    }}))
    .unwrap();

    hook.on_session_start(&SessionContext {
        session_id: "s-9".into(),
        agent_name: "lead".into(),
        cwd: scripts.dir.path().to_path_buf(),
        permission_mode: "plan".into(),
    })
    .await;
    let mut compact = CompactContext {
        session_id: "s-9".into(),
        agent_name: "lead".into(),
        trigger: "auto".into(),
        tokens_before: 9_000,
        tokens_after: None,
    };
    hook.on_pre_compact(&compact).await;
    compact.tokens_after = Some(1_200);
    hook.on_post_compact(&compact).await;
    hook.on_session_stop(&SessionStopContext {
        session_id: "s-9".into(),
        agent_name: "lead".into(),
        steps: 4,
        reason: "completed".into(),
        cancelled: false,
    })
    .await
    .unwrap();

    let events: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|event| event["hook_event_name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["SessionStart", "PreCompact", "PostCompact", "SessionEnd"]);
    for event in &events {
        assert_eq!(event["session_id"], "s-9");
        assert_eq!(event["cwd"], json!(scripts.dir.path()));
        assert_eq!(event["permission_mode"], "plan");
    }
    assert_eq!(events[1]["trigger"], "auto");
    assert_eq!(events[2]["trigger"], "auto");
    assert_eq!(events[2]["tokens_before"], 9_000);
    assert_eq!(events[2]["tokens_after"], 1_200);
    assert_eq!(events[3]["reason"], "completed");
}
