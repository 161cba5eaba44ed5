//! Tests of recognising, adding and removing agent-guard's hook entry in settings text.

use super::*;

const EXE: &str = "/opt/agent guard/bin/agent-guard";

fn entry() -> Entry {
    Entry {
        matcher: "*".to_owned(),
        command: hook_command(Path::new(EXE)).unwrap(),
        timeout: 30,
    }
}

fn exe() -> &'static Path {
    Path::new(EXE)
}

fn written(change: Change) -> String {
    match change {
        Change::Write(text) => text,
        other => panic!("expected a write, got {other:?}"),
    }
}

/// A file as the coding agent writes it: two spaces, keys in its own order, a final newline.
const AGENT_FILE: &str = r#"{
  "permissions": {
    "allow": [
      "Bash(npm run test:*)"
    ],
    "deny": []
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "~/bin/log-bash.sh"
          }
        ]
      }
    ],
    "PostToolUse": []
  },
  "model": "x",
  "zeta": {"a": 1, "b": [true, null]}
}
"#;

#[test]
fn hook_commands_are_quoted_for_the_shell_only_when_needed() {
    assert_eq!(
        hook_command(Path::new("/home/u/.cargo/bin/agent-guard")).unwrap(),
        "/home/u/.cargo/bin/agent-guard check"
    );
    assert_eq!(entry().command, "'/opt/agent guard/bin/agent-guard' check");
    assert_eq!(
        hook_command(Path::new("/it's/agent-guard")).unwrap(),
        r"'/it'\''s/agent-guard' check"
    );
    for path in [
        "/home/u/.cargo/bin/agent-guard",
        EXE,
        "/it's/agent-guard",
        "/a\"b/$x/agent-guard",
    ] {
        let command = hook_command(Path::new(path)).unwrap();
        assert_eq!(command_words(&command, 2), [path, "check"], "{command}");
        assert!(
            is_agent_guard_check(&command, Path::new("/elsewhere")),
            "{command}"
        );
    }
}

#[test]
fn only_agent_guard_check_commands_are_recognised() {
    let me = Path::new("/x/ag-dev");
    for yes in [
        "agent-guard check",
        "/usr/local/bin/agent-guard check --settings a.json",
        "\"/a b/agent-guard\" check",
        "/x/ag-dev check",
    ] {
        assert!(is_agent_guard_check(yes, me), "{yes}");
    }
    for no in [
        "agent-guard explain",
        "agent-guard",
        "echo agent-guard check",
        "/x/agent-guard-old check",
        "agent-guard\\ check",
        "",
        "/y/ag-dev check",
    ] {
        assert!(!is_agent_guard_check(no, me), "{no}");
    }
}

#[test]
fn install_adds_one_entry_and_keeps_every_other_byte() {
    let installed = written(plan_install(Some(AGENT_FILE), &entry(), exe()).unwrap());
    let value: Value = serde_json::from_str(&installed).unwrap();
    let groups = value["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[0]["matcher"], "Bash");
    assert_eq!(
        groups[1],
        serde_json::json!({"matcher": "*", "hooks": [
            {"type": "command", "command": "'/opt/agent guard/bin/agent-guard' check", "timeout": 30}
        ]})
    );
    assert_eq!(value["permissions"]["allow"][0], "Bash(npm run test:*)");
    // Every line of the original is still there, in order; the new lines sit after the user's group.
    let expected_addition = r#"      },
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "'/opt/agent guard/bin/agent-guard' check",
            "timeout": 30
          }
        ]
      }
"#;
    assert!(installed.contains(expected_addition), "{installed}");
    assert_eq!(
        installed.replacen(expected_addition, "      }\n", 1),
        AGENT_FILE,
        "only the entry was added"
    );
    assert_eq!(
        plan_install(Some(&installed), &entry(), exe()).unwrap(),
        Change::Unchanged
    );
    assert_eq!(
        installed_hooks(&value, exe()),
        [Installed {
            matcher: Some("*".to_owned()),
            command: entry().command,
            timeout: Some(30),
        }]
    );
    let uninstalled = written(plan_uninstall(&installed, Some(AGENT_FILE), exe()).unwrap());
    assert_eq!(uninstalled, AGENT_FILE);
    assert_eq!(
        plan_uninstall(AGENT_FILE, None, exe()).unwrap(),
        Change::Unchanged
    );
}

#[test]
fn uninstall_restores_every_layout_byte_for_byte() {
    for original in [
        "{\n  \"permissions\": {\n    \"allow\": []\n  }\n}\n",
        "{\n  \"hooks\": {}\n}\n",
        "{\n  \"hooks\": {\n    \"PreToolUse\": []\n  }\n}\n",
        "{\n  \"hooks\": {\n    \"Stop\": []\n  }\n}",
        "{\n    \"a\": 1\n}\n",
        "{\"a\":{\"b\":[1,2]}}",
        "{\r\n\t\"a\": 1\r\n}\r\n",
        "{}\n",
        "{}",
    ] {
        let installed = written(plan_install(Some(original), &entry(), exe()).unwrap());
        assert!(serde_json::from_str::<Value>(&installed).is_ok(), "{installed}");
        assert_eq!(
            plan_install(Some(&installed), &entry(), exe()).unwrap(),
            Change::Unchanged,
            "{installed}"
        );
        assert_eq!(
            written(plan_uninstall(&installed, Some(original), exe()).unwrap()),
            original,
            "{installed}"
        );
    }
}

#[test]
fn a_file_install_created_is_removed_again() {
    for nothing in [None, Some(""), Some("  \n")] {
        let installed = written(plan_install(nothing, &entry(), exe()).unwrap());
        assert!(
            installed.starts_with("{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\n"),
            "{installed}"
        );
        assert!(installed.ends_with("}\n"));
        let expected = match nothing {
            None => Change::Delete,
            Some(text) => Change::Write(text.to_owned()),
        };
        assert_eq!(plan_uninstall(&installed, nothing, exe()).unwrap(), expected);
    }
}

#[test]
fn a_changed_entry_is_replaced_and_a_user_s_hook_in_its_group_stays() {
    let old = written(plan_install(Some("{}\n"), &entry(), exe()).unwrap());
    let moved = Entry {
        command: "/new/agent-guard check".to_owned(),
        ..entry()
    };
    let new = written(plan_install(Some(&old), &moved, exe()).unwrap());
    let value: Value = serde_json::from_str(&new).unwrap();
    let groups = value["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0]["hooks"][0]["command"], "/new/agent-guard check");
    // A user's hook added to agent-guard's group later is kept; agent-guard's own goes.
    let shared = new.replace(
        "\"timeout\": 30\n          }",
        "\"timeout\": 30\n          },\n          {\"type\": \"command\", \"command\": \"mine.sh\"}",
    );
    let value: Value = serde_json::from_str(&shared).unwrap();
    assert_eq!(
        value["hooks"]["PreToolUse"][0]["hooks"].as_array().unwrap().len(),
        2
    );
    let after: Value =
        serde_json::from_str(&written(plan_uninstall(&shared, Some("{}\n"), exe()).unwrap())).unwrap();
    assert_eq!(
        after,
        serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": "mine.sh"}
        ]}]}})
    );
}

#[test]
fn containers_are_removed_only_when_install_made_them() {
    let installed_alone = written(plan_install(Some("{}"), &entry(), exe()).unwrap());
    // The backup of an installed file (a second install that replaced the entry) cannot tell: install made them.
    assert_eq!(
        written(plan_uninstall(&installed_alone, Some(&installed_alone), exe()).unwrap()),
        "{}"
    );
    // A backup that is not JSON keeps them.
    assert_eq!(
        written(plan_uninstall(&installed_alone, Some("{broken"), exe()).unwrap()),
        "{\n  \"hooks\": {\n    \"PreToolUse\": []\n  }\n}"
    );
}

#[test]
fn files_that_cannot_be_edited_are_refused_with_their_position() {
    let error = plan_install(Some("{\n  \"a\": 1,\n  \"b\" 2\n}\n"), &entry(), exe())
        .unwrap_err()
        .to_string();
    assert_eq!(error, "line 3, column 7: expected `:`");
    let error = plan_uninstall("{\"a\": [1,]}", None, exe())
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("line 1, column 10: "), "{error}");
    for (text, why) in [
        ("[1, 2]\n", "the file holds a list (line 1), not a JSON object"),
        (
            "{\n  \"hooks\": \"x\"\n}",
            "`hooks` is `\"x\"` (line 2), not an object",
        ),
        (
            "{\"hooks\": {\"PreToolUse\": {}}}",
            "`hooks.PreToolUse` is an object (line 1), not a list",
        ),
    ] {
        assert_eq!(
            plan_install(Some(text), &entry(), exe()).unwrap_err().to_string(),
            why
        );
    }
}
