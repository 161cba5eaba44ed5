//! The adversarial regression suite: one test per public bypass class of agent permission systems. Each class is a
//! set of cases in `adversarial.json` decided through the one decision path; the hook and cap classes
//! are built in code.

use std::collections::BTreeMap;

use agent_decide::CallInput;
use agent_rules::SessionState;
use agent_tool_traits::{Decision, HookOutcome};
use serde_json::json;

use crate::decisions::{contained_allows_possible, decide, load};
use crate::workspace::Workspace;

/// Every case of `class` gets exactly its expected decision.
fn run_class(class: &str) {
    let cases: Vec<_> = load("adversarial.json")
        .into_iter()
        .filter(|c| c.class.as_deref() == Some(class))
        .collect();
    assert!(!cases.is_empty(), "no cases of class `{class}`");
    // Each case with the analysis alone, and with contained allows on: a case that may be allowed inside the
    // sandbox says so in its `autoAllow`, and every other keeps its decision.
    let modes: &[bool] = if contained_allows_possible() {
        &[false, true]
    } else {
        &[false]
    };
    let failures: Vec<String> = cases
        .iter()
        .flat_map(|case| modes.iter().map(move |on| (case, *on)))
        .filter_map(|(case, on)| {
            let (decision, reason) = decide(case, on);
            (decision != case.expected(on)).then(|| {
                format!(
                    "{} (autoAllow {}): expected {}, got {decision}: {reason}",
                    case.name,
                    if on { "on" } else { "off" },
                    case.expected(on)
                )
            })
        })
        .collect();
    assert!(failures.is_empty(), "{class}:\n{}", failures.join("\n"));
}

macro_rules! classes {
    ($($test:ident => $class:literal,)*) => {
        $(
            #[test]
            fn $test() {
                run_class($class);
            }
        )*

        #[test]
        fn every_class_of_the_corpus_has_its_test() {
            let known = [$($class),*];
            for case in load("adversarial.json") {
                let class = case.class.unwrap_or_default();
                assert!(known.contains(&class.as_str()), "class `{class}` has no test");
            }
        }
    };
}

classes! {
    string_prefix_paths => "string-prefix-paths",
    symlink_reads => "symlink-reads",
    compound_commands_under_allow_rules => "compound-commands",
    wrappers => "wrappers",
    backslash_escaped_flags => "backslash-escaped-flags",
    line_continuations => "line-continuations",
    ifs => "ifs",
    prompt_expansion => "prompt-expansion",
    brace_groups => "brace-groups",
    process_substitution => "process-substitution",
    execution_flags => "execution-flags",
    project_settings_enabling_bypass => "project-settings-bypass",
    permissive_modes_reading_outside_the_roots => "permissive-mode-reads",
    arithmetic_evaluation_of_values => "arithmetic-evaluation",
    globs_expanded_against_the_file_system => "glob-expansion",
    directories_whose_content_is_denied => "directory-reads",
    content_oracles_of_files_holding_a_credential => "content-oracles",
    files_named_by_variables_and_substitutions => "variable-paths",
    secret_files_and_searches_that_reach_them => "secret-files",
    working_directory_and_repository_changes => "directory-changes",
    programs_that_run_project_code => "project-code",
    file_tool_paths_a_shell_would_expand => "tool-paths",
    tools_no_sandbox_contains_under_the_user_s_rules => "unconfinable-tools",
    services_on_this_machine_under_a_rule_for_one_command => "loopback-grants",
    a_users_rule_lends_its_grant_to_no_code_the_analysis_does_not_follow => "ruled-and-contained",
    removals_and_checkouts_over_files_no_snapshot_holds => "ignored-files",
}

/// A hook's allow (or ask) never turns a deny into anything weaker, nor an ask of steps 1–4 into an allow.
#[test]
fn hooks_never_override_a_deny_or_a_safety_ask() {
    let ws = Workspace::new();
    ws.write("proj/.env", "K=V");
    let mut settings = BTreeMap::new();
    settings.insert(
        "user".to_owned(),
        serde_json::from_value(json!({"deny": ["Bash(git push:*)"]})).unwrap(),
    );
    let guard = ws.guard(&settings, &BTreeMap::new(), Some("bypassPermissions"));
    let allow = HookOutcome {
        allow: Some("the hook says yes".to_owned()),
        ..HookOutcome::default()
    };
    let push = guard.decide_in_session(
        &hooked("Bash", json!({"command": "git push"}), &allow),
        &SessionState::default(),
    );
    assert_eq!(push.verdict().decision, Decision::Deny);
    assert!(
        push.resolution
            .conflicts
            .iter()
            .any(|c| c.overridden.contains("the hook says yes"))
    );
    let wipe = guard.decide_in_session(
        &hooked("Bash", json!({"command": "rm -rf /"}), &allow),
        &SessionState::default(),
    );
    assert_eq!(wipe.verdict().decision, Decision::Deny);
    let secret = guard.decide_in_session(
        &hooked("Read", json!({"file_path": ".env"}), &allow),
        &SessionState::default(),
    );
    assert_eq!(
        secret.verdict().decision,
        Decision::Ask,
        "a protected read stays an ask under a hook's allow"
    );
}

/// No size or count cap turns a deny into something weaker: the destructive command comes after hundreds of benign
/// ones, in a list and nested in substitutions.
#[test]
fn long_chains_never_hit_a_cap() {
    let ws = Workspace::new();
    let guard = ws.guard(&BTreeMap::new(), &BTreeMap::new(), None);
    for count in [49, 50, 51, 100, 500] {
        let benign = vec!["echo ok"; count].join(" && ");
        for command in [
            format!("{benign} && rm -rf /"),
            format!("{benign}; echo $(echo $(rm -rf ~))"),
            format!("rm -rf / ; {benign}"),
        ] {
            let decided = guard.decide("Bash", &json!({ "command": command }));
            assert_eq!(
                decided.verdict().decision,
                Decision::Deny,
                "{count} benign commands: {}",
                decided.verdict().reason()
            );
        }
    }
}

/// A read-only form of a program that loads project files asks only where one of those files exists, and says
/// which: a directory named `config` is not `.cargo/config`.
#[test]
fn a_loaded_project_file_is_named_in_the_reason() {
    let ws = Workspace::new();
    ws.write("proj/config/app.yml", "a: 1");
    ws.write("proj/config.toml", "x = 1");
    let guard = ws.guard(&BTreeMap::new(), &BTreeMap::new(), None);
    for command in [
        "cargo --version",
        "cargo tree --offline",
        "cargo metadata --offline --format-version 1 --no-deps",
    ] {
        let decided = guard.decide("Bash", &json!({ "command": command }));
        assert_eq!(
            decided.verdict().decision,
            Decision::Allow,
            "{command}: {}",
            decided.verdict().reason()
        );
    }
    ws.write("proj/.cargo/config.toml", "[build]\nrustc-wrapper = \"./x\"");
    let guard = ws.guard(&BTreeMap::new(), &BTreeMap::new(), None);
    let decided = guard.decide("Bash", &json!({"command": "cargo --version"}));
    assert_eq!(decided.verdict().decision, Decision::Ask);
    let reason = decided.verdict().reason();
    assert!(
        reason.contains("runs code the project controls") && reason.contains(".cargo/config.toml"),
        "{reason}"
    );
}

/// Tools that search upwards for their configuration find it above the project too (a monorepo's
/// `.cargo/config.toml` above the crate an agent works in): a read-only form asks where one exists there.
#[test]
fn configuration_above_the_project_counts_as_loaded() {
    let ws = Workspace::new();
    let guard = ws.guard(&BTreeMap::new(), &BTreeMap::new(), None);
    let decided = guard.decide("Bash", &json!({"command": "cargo tree --offline"}));
    assert_eq!(
        decided.verdict().decision,
        Decision::Allow,
        "{}",
        decided.verdict().reason()
    );
    for (file, command) in [
        (".cargo/config.toml", "cargo tree --offline"),
        (
            ".cargo/config",
            "cargo metadata --offline --format-version 1 --no-deps",
        ),
        ("rust-toolchain.toml", "rustc --version"),
    ] {
        let planted = ws.write(file, "[build]\nrustc-wrapper = \"tools/w.sh\"");
        let guard = ws.guard(&BTreeMap::new(), &BTreeMap::new(), None);
        let decided = guard.decide("Bash", &json!({ "command": command }));
        let reason = decided.verdict().reason();
        assert_eq!(decided.verdict().decision, Decision::Ask, "{command}: {reason}");
        assert!(reason.contains(file), "{command}: {reason}");
        std::fs::remove_file(planted).unwrap();
    }
}

/// A reading `git config` prints the user's own configuration files, where tokens live (`http.extraHeader`, URLs
/// with a password): it reads outside the roots and asks, unless it is limited to the repository or asks for one
/// key of a section that holds no credentials.
#[test]
fn reading_git_configuration_reads_the_users_files() {
    let ws = Workspace::new();
    ws.write(
        "home/.gitconfig",
        "[http]\n\textraHeader = Authorization: Bearer PLANTED\n",
    );
    let guard = ws.guard(&BTreeMap::new(), &BTreeMap::new(), None);
    for (command, expected) in [
        ("git config --list", Decision::Ask),
        ("git config -l", Decision::Ask),
        ("git config --global --list", Decision::Ask),
        ("git config --get-regexp http", Decision::Ask),
        ("git config --get http.extraHeader", Decision::Ask),
        ("git config remote.origin.url", Decision::Ask),
        ("git config --local --list", Decision::Allow),
        ("git config user.name", Decision::Allow),
        ("git config --get core.editor", Decision::Allow),
        // `git var -l` lists every configuration variable too; one variable is git's own value.
        ("git var -l", Decision::Ask),
        ("git -C . var -l", Decision::Ask),
        ("git var GIT_AUTHOR_IDENT", Decision::Allow),
    ] {
        let decided = guard.decide("Bash", &json!({ "command": command }));
        assert_eq!(
            decided.verdict().decision,
            expected,
            "{command}: {}",
            decided.verdict().reason()
        );
    }
}

/// A file that may hold secrets is protected for writes as for reads, in every mode: a Write replaces what the
/// user keeps there, and an Edit shows lines of it back in its result.
#[test]
fn editing_a_secret_file_asks_in_every_mode() {
    let ws = Workspace::new();
    ws.write("proj/.env", "API_KEY=PLANTED\n");
    let env = ws.root().join("proj/.env");
    for mode in ["default", "acceptEdits", "bypassPermissions"] {
        let guard = ws.guard(&BTreeMap::new(), &BTreeMap::new(), Some(mode));
        for (tool, input) in [
            ("Write", json!({"file_path": env, "content": "x"})),
            (
                "Edit",
                json!({"file_path": env, "old_string": "PLANTED", "new_string": "x"}),
            ),
            (
                "MultiEdit",
                json!({"file_path": env, "edits": [{"old_string": "A", "new_string": "B"}]}),
            ),
            ("Bash", json!({"command": "echo K=V >> .env"})),
        ] {
            let decided = guard.decide(tool, &input);
            assert_eq!(
                decided.verdict().decision,
                Decision::Ask,
                "{mode} {tool}: {}",
                decided.verdict().reason()
            );
        }
        // The example next to it is an ordinary file.
        let example = ws.root().join("proj/.env.example");
        let decided = guard.decide("Write", &json!({"file_path": example, "content": "API_KEY="}));
        let expected = if mode == "default" {
            Decision::Ask
        } else {
            Decision::Allow
        };
        assert_eq!(
            decided.verdict().decision,
            expected,
            "{mode}: {}",
            decided.verdict().reason()
        );
    }
}

/// A tool agent-guard cannot look into (an MCP server's) still names files in its arguments: a secret file named
/// there asks in every mode, `bypassPermissions` included, as a Read of it does; other files change nothing.
#[test]
fn an_opaque_tool_naming_a_secret_file_asks_in_every_mode() {
    let ws = Workspace::new();
    ws.write("proj/.env", "API_KEY=PLANTED\n");
    ws.write("home/.ssh/id_rsa", "PLANTED\n");
    let env = ws.root().join("proj/.env");
    let key = ws.home().join(".ssh/id_rsa");
    for mode in ["default", "bypassPermissions"] {
        let guard = ws.guard(&BTreeMap::new(), &BTreeMap::new(), Some(mode));
        for input in [
            json!({"path": env}),
            json!({"path": ".env"}),
            json!({"filePath": key}),
            json!({"options": {"source_file": key}}),
            json!({"paths": ["README.md", env]}),
            json!({"path": format!("/proc/self/root{}", key.display())}),
            json!({"path": format!("/proc/self/root{}", key.display())}),
        ] {
            let decided = guard.decide("mcp__fs__read_file", &input);
            assert_eq!(
                decided.verdict().decision,
                Decision::Ask,
                "{mode} {input}: {}",
                decided.verdict().reason()
            );
        }
    }
    let bypass = ws.guard(&BTreeMap::new(), &BTreeMap::new(), Some("bypassPermissions"));
    // Tools that never read a path ask alike when given one: nothing of theirs takes a secret file's name.
    for tool in ["TodoWrite", "Task"] {
        let decided = bypass.decide(tool, &json!({"prompt": "x", "path": env}));
        assert_eq!(
            decided.verdict().decision,
            Decision::Ask,
            "{tool}: {}",
            decided.verdict().reason()
        );
    }
    let plain = bypass.decide(
        "mcp__fs__read_file",
        &json!({"path": "README.md", "note": ".env"}),
    );
    assert_eq!(
        plain.verdict().decision,
        Decision::Allow,
        "{}",
        plain.verdict().reason()
    );
}

/// A call of `tool` with `args` about which the PreToolUse hooks said `hooks`.
fn hooked(tool: &str, args: serde_json::Value, hooks: &HookOutcome) -> CallInput {
    CallInput {
        hooks: hooks.clone(),
        ..CallInput::new(tool, args)
    }
}
