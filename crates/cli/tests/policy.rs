//! Policy as code: `agent-guard test`, `agent-guard import codex|gemini` and their round trips.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/policy")
        .join(name)
}

/// Runs the binary in `dir` with an empty home, so only the files a test names apply.
fn agent_guard(args: &[&str], dir: &Path) -> Output {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    Command::new(env!("CARGO_BIN_EXE_agent-guard"))
        .args(args)
        .current_dir(dir)
        .env("HOME", &home)
        .env_remove("AGENT_BLOCK_NETWORK")
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn write(dir: &Path, name: &str, value: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(value).unwrap()).unwrap();
    path
}

#[test]
fn failing_cases_are_a_table_with_the_verdict_and_who_decided() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "settings.json",
        &json!({"permissions": {"ask": ["Bash(git push:*)"], "deny": ["Read(./secrets/**)"]}}),
    );
    write(
        tmp.path(),
        "cases.json",
        &json!([
            {"tool": "Bash", "input": {"command": "git push origin main"}, "expect": "ask",
             "decidedBy": "Bash(git push:*)"},
            {"tool": "Bash", "input": {"command": "ls -la"}, "expect": "allow", "decidedBy": "default"},
            {"name": "secrets stay closed", "tool": "Read", "input": {"file_path": "secrets/key.pem"},
             "expect": "allow"},
            {"tool": "Bash", "input": {"command": "rm -rf /"}, "expect": "deny", "decidedBy": "deny-rule"},
        ]),
    );
    let out = agent_guard(&["test", "--settings", "settings.json", "cases.json"], tmp.path());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    assert!(
        lines[0].starts_with("FAILED CASE") && lines[0].contains("DECIDED BY"),
        "{stdout}"
    );
    // The failing read: what was expected, what it got, and the rule and source that decided.
    assert!(
        lines[1].starts_with("cases.json#3 secrets stay closed"),
        "{stdout}"
    );
    assert!(
        lines[1].contains("allow")
            && lines[1].contains("deny  rules/deny-rule `Read(./secrets/**)` (cliArg)"),
        "{stdout}"
    );
    // The right decision by the wrong layer fails too: bash-guard denies `rm -rf /` before any rule.
    assert!(lines[2].starts_with("cases.json#4"), "{stdout}");
    assert!(
        lines[2].contains("deny by deny-rule") && lines[2].contains("bash-guard/layer-deny"),
        "{stdout}"
    );
    assert_eq!(lines[3], "2 passed, 2 failed");

    // Without the failing cases, everything passes with exit code 0.
    write(
        tmp.path(),
        "good.json",
        &json!([{"tool": "Bash", "input": {"command": "git push origin main"}, "expect": "ask"}]),
    );
    let out = agent_guard(&["test", "--settings", "settings.json", "good.json"], tmp.path());
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "1 passed, 0 failed\n");
}

#[test]
fn tests_inside_settings_files_run_with_those_settings() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("proj");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    write(
        &project.join(".claude"),
        "settings.json",
        &json!({
            "permissions": {"deny": ["Bash(npm publish:*)"]},
            "agentGuard": {"tests": [
                {"tool": "Bash", "input": {"command": "npm publish"}, "expect": "deny",
                 "decidedBy": "Bash(npm publish:*)"}
            ]}
        }),
    );
    // Found as `check` finds settings: the project's file of the current directory.
    let out = agent_guard(&["test"], &project);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(text(&out.stdout), "1 passed, 0 failed\n");
    // Named as a file, a settings file brings its rules to its own cases.
    let out = agent_guard(&["test", "proj/.claude/settings.json"], tmp.path());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    // No tests anywhere is a usage error, not a silent pass.
    let out = agent_guard(&["test"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no policy tests found"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn malformed_test_files_exit_2_naming_the_file_and_the_case() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, content, message) in [
        (
            "a.json",
            json!([{"tool": "Bash", "expect": "allow"}, {"tool": "Bash"}]),
            "`a.json`: case 2: ",
        ),
        (
            "b.json",
            json!([{"tool": "Bash", "input": {"command": "ls"}, "expect": "maybe"}]),
            "`b.json`: case 1: unknown variant `maybe`",
        ),
        (
            "c.json",
            json!({"permissions": {}}),
            "`c.json` is a settings file without `agentGuard.tests`",
        ),
        (
            "d.json",
            json!([{"tool": "Read", "expect": "deny", "mode": "yolo"}]),
            "`d.json`: case 1: `mode`",
        ),
    ] {
        write(tmp.path(), name, &content);
        let out = agent_guard(&["test", name], tmp.path());
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(
            text(&out.stderr).contains(message),
            "{name}: {}",
            text(&out.stderr)
        );
    }
    let out = agent_guard(&["test", "missing.json"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot read the test file `missing.json`"));
}

#[test]
fn codex_rules_import_and_their_examples_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let rules = fixture("default.rules");
    let out = agent_guard(&["import", "codex", rules.to_str().unwrap()], tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    let settings: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        settings["permissions"],
        json!({
            "allow": ["Bash(git status:*)", "Bash(git diff:*)", "Bash(git log:*)", "Bash(cargo build:*)",
                      "Bash(cargo test:*)", "Bash(cargo check:*)"],
            "ask": ["Bash(git commit:*)", "Bash(git rebase:*)", "Bash(git reset:*)", "Bash(make:*)"],
            "deny": ["Bash(rm -rf:*)", "Bash(rm -fr:*)"],
        })
    );
    let tests = settings["agentGuard"]["tests"].as_array().unwrap();
    // 10 `match` examples; each `not_match` example once per expansion of its rule (3 + 3 + 2).
    assert_eq!(tests.len(), 18);
    assert!(tests.contains(&json!({
        "name": "line 30: match", "tool": "Bash", "input": {"command": "git reset --hard 'HEAD~1'"},
        "expect": "ask", "decidedBy": "Bash(git reset:*)"
    })));
    // Each example is named by its own line.
    let names: Vec<&str> = tests.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names[..4],
        [
            "line 9: match",
            "line 10: match",
            "line 11: match",
            "line 15: not_match"
        ]
    );
    // A `not_match` example that another rule decides expects that rule's decision.
    assert!(tests.contains(&json!({
        "name": "line 31: not_match", "tool": "Bash", "input": {"command": "git status"},
        "expect": "allow", "decidedBy": "Bash(git status:*)", "notDecidedBy": "Bash(git commit:*)"
    })));
    // The round trip: the imported settings pass their own examples.
    std::fs::write(tmp.path().join("codex.json"), &out.stdout).unwrap();
    let run = agent_guard(&["test", "--settings", "codex.json"], tmp.path());
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}{}",
        text(&run.stdout),
        text(&run.stderr)
    );
    assert_eq!(text(&run.stdout), "18 passed, 0 failed\n");
}

#[test]
fn gemini_policies_import_with_every_inexact_rule_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let policy = fixture("policy.toml");
    let out = agent_guard(&["import", "gemini", policy.to_str().unwrap()], tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let settings: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        settings["permissions"],
        json!({
            "allow": ["Bash(git status:*)", "Bash(git diff:*)", "Bash(ls:*)", "Read", "Glob", "Grep", "Bash(git:*)"],
            "ask": ["Bash(git commit*)", "Bash(git rebase*)", "mcp__github__create_issue"],
            "deny": ["Bash(rm -rf*)", "Write", "Edit"],
        })
    );
    let stderr = text(&out.stderr);
    let file = policy.display().to_string();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{stderr}");
    assert!(
        lines[0].starts_with(&format!("{file}:28: deny rule imported without `modes")),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with(&format!("{file}:35: allow rule left out: `argsPattern`")),
        "{stderr}"
    );
    assert!(
        lines[2].starts_with(&format!(
            "{file}:48: priority 250 puts this allow rule above the ask rule at line 16"
        )),
        "{stderr}"
    );
    // The round trip with cases written for the policy.
    std::fs::write(tmp.path().join("gemini.json"), &out.stdout).unwrap();
    let cases = fixture("gemini-cases.json");
    let run = agent_guard(
        &["test", "--settings", "gemini.json", cases.to_str().unwrap()],
        tmp.path(),
    );
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}{}",
        text(&run.stdout),
        text(&run.stderr)
    );
    assert_eq!(text(&run.stdout), "6 passed, 0 failed\n");
}

#[test]
fn files_that_cannot_be_imported_exit_2_with_their_line() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("bad.rules"),
        "prefix_rule(pattern = [\"ls\"])\nALLOWED = [\"git\"]\n",
    )
    .unwrap();
    let out = agent_guard(&["import", "codex", "bad.rules"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("bad.rules:2: `ALLOWED` is not a call"),
        "{}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    std::fs::write(
        tmp.path().join("bad.toml"),
        "[[rule]]\ntoolName = \"x\"\ndecision = \"always\"\n",
    )
    .unwrap();
    let out = agent_guard(&["import", "gemini", "bad.toml"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("bad.toml:1: `decision` is `always`"),
        "{}",
        text(&out.stderr)
    );
}

/// The demo's own project settings (crates/cli/scenarios/demo.json), as a settings file.
fn demo_settings() -> Value {
    json!({"permissions": {"deny": ["Read(./secrets/**)"], "allow": ["Bash(cargo test:*)"]}})
}

/// Runs the demo into a fresh audit log in `dir`; the log and the number of calls the demo says it logged.
fn demo_log(dir: &Path) -> (String, usize) {
    let out = agent_guard(&["demo", "--audit-db", "audit.db"], dir);
    let trace = text(&out.stdout);
    assert!(out.status.success(), "{trace}{}", text(&out.stderr));
    ("audit.db".to_owned(), logged_calls(&trace))
}

/// The calls of the demo's closing line: `audit log: 20 rows for session … (19 calls, …`.
fn logged_calls(trace: &str) -> usize {
    let line = trace.lines().find(|l| l.starts_with("audit log: ")).unwrap();
    let (_, rest) = line.split_once(" (").unwrap();
    rest.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn loosening_one_rule_lists_exactly_the_logged_calls_it_affects() {
    let tmp = tempfile::tempdir().unwrap();
    let (db, calls) = demo_log(tmp.path());
    write(tmp.path(), "old.json", &demo_settings());
    // The secrets are no longer denied.
    write(
        tmp.path(),
        "new.json",
        &json!({"permissions": {"allow": ["Bash(cargo test:*)"]}}),
    );
    let out = agent_guard(&["diff", "old.json", "new.json", "--audit-db", &db], tmp.path());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("rules added (0):\nrules removed (1):\n  - deny  Read(./secrets/**)\n"),
        "{stdout}"
    );
    // Every call of the demo is replayed (the stop row is not a call) and exactly one changes: the read of the
    // secret key, which only the removed rule denied.
    assert!(
        stdout.contains(&format!(": {calls} calls replayed\n")),
        "{stdout}"
    );
    let looser = stdout.split("\nlooser: ").nth(1).unwrap();
    let (looser, stricter) = looser.split_once("\nstricter: ").unwrap();
    assert!(looser.starts_with("1 call\n  deny -> "), "{stdout}");
    let changed: Vec<&str> = looser.lines().filter(|l| l.contains("[session demo-")).collect();
    assert_eq!(changed.len(), 1, "{stdout}");
    assert!(
        changed[0].contains(r#"Read {"file_path":"secrets/api.key"}"#),
        "{stdout}"
    );
    assert!(
        looser.contains("was rules/deny-rule `Read(./secrets/**)` (cliArg)"),
        "{stdout}"
    );
    assert!(stricter.starts_with("0 calls"), "{stdout}");
    assert!(
        stdout
            .trim_end()
            .ends_with("1 call looser, 0 calls stricter: the change loosens the policy")
    );

    // The same settings on both sides: nothing changes, exit code 0.
    let out = agent_guard(&["diff", "old.json", "old.json", "--audit-db", &db], tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("looser: 0 calls"));
}

#[test]
fn a_stricter_change_lists_its_calls_and_passes() {
    let tmp = tempfile::tempdir().unwrap();
    let (db, _) = demo_log(tmp.path());
    write(tmp.path(), "old.json", &demo_settings());
    let mut new = demo_settings();
    new["permissions"]["ask"] = json!(["Bash(wc:*)"]);
    // An allow that a deny covers never decides.
    new["permissions"]["allow"] = json!(["Bash(cargo test:*)", "Read(./secrets/readme.txt)"]);
    write(tmp.path(), "new.json", &new);
    let out = agent_guard(&["diff", "old.json", "new.json", "--audit-db", &db], tmp.path());
    let stdout = text(&out.stdout);
    // An allow was added, so the change may loosen: exit code 1, although no logged call gets looser.
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(
            "rules that never decide in new (1):\n  allow Read(./secrets/readme.txt): the deny rule \
             `Read(./secrets/**)` decides every call it matches"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("looser: 0 calls"), "{stdout}");
    assert!(
        stdout.contains(
            "stricter: 1 call\n  allow -> ask: 1\n  allow -> ask  run_bash: wc -l src/lib.rs src/main.rs"
        ),
        "{stdout}"
    );

    // Only the ask: nothing can get looser.
    new["permissions"]["allow"] = json!(["Bash(cargo test:*)"]);
    write(tmp.path(), "new.json", &new);
    let out = agent_guard(&["diff", "old.json", "new.json", "--audit-db", &db], tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    // Calls logged before `--since` are not replayed.
    let out = agent_guard(
        &[
            "diff",
            "old.json",
            "new.json",
            "--audit-db",
            &db,
            "--since",
            "2999-01-01T00:00:00Z",
        ],
        tmp.path(),
    );
    assert!(
        text(&out.stdout).contains(": 0 calls replayed"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn two_git_revisions_of_one_file_are_compared() {
    let tmp = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(tmp.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    };
    git(&["init", "-q"]);
    std::fs::create_dir_all(tmp.path().join(".claude")).unwrap();
    write(&tmp.path().join(".claude"), "settings.json", &demo_settings());
    git(&["add", "."]);
    git(&["commit", "-qm", "one"]);
    write(
        &tmp.path().join(".claude"),
        "settings.json",
        &json!({"permissions": {"deny": ["Read(./secrets/**)", "Bash(curl:*)"], "allow": ["Bash(cargo test:*)"]}}),
    );
    // The working file against the last commit: a deny added, nothing looser.
    let out = agent_guard(&["diff", "--rev", "HEAD..", ".claude/settings.json"], tmp.path());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("old: .claude/settings.json at HEAD\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("rules added (1):\n  + deny  Bash(curl:*)\nrules removed (0):"),
        "{stdout}"
    );
    git(&["commit", "-qam", "two"]);
    // Back from the second commit to the first: the deny goes, which loosens.
    let out = agent_guard(
        &["diff", "--rev", "HEAD..HEAD~1", ".claude/settings.json"],
        tmp.path(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("  - deny  Bash(curl:*)"));
    // A revision that does not exist, and a malformed range, are usage errors.
    let out = agent_guard(&["diff", "--rev", "nope..", ".claude/settings.json"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("at revision `nope`"),
        "{}",
        text(&out.stderr)
    );
    let out = agent_guard(&["diff", "--rev", "HEAD", ".claude/settings.json"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
}

#[path = "../../hooks/tests/pg/mod.rs"]
mod pg;

#[test]
fn a_postgres_audit_log_is_replayed_the_same() {
    let Some(server) = pg::PgServer::start_or_skip() else {
        return;
    };
    let url = server.create_database("diff");
    let tmp = tempfile::tempdir().unwrap();
    let demo = agent_guard(&["demo", "--audit-db", &url], tmp.path());
    assert!(demo.status.success(), "{}", text(&demo.stderr));
    let calls = logged_calls(&text(&demo.stdout));
    write(tmp.path(), "old.json", &demo_settings());
    write(
        tmp.path(),
        "new.json",
        &json!({"permissions": {"allow": ["Bash(cargo test:*)"]}}),
    );
    let out = agent_guard(&["diff", "old.json", "new.json", "--audit-db", &url], tmp.path());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains(&format!(": {calls} calls replayed\n")),
        "{stdout}"
    );
    assert!(stdout.contains("\nlooser: 1 call\n  deny -> "), "{stdout}");
    assert!(
        stdout.contains(r#"Read {"file_path":"secrets/api.key"}"#),
        "{stdout}"
    );
    assert!(stdout.contains("\nstricter: 0 calls\n"), "{stdout}");
}

/// A policies directory is imported as Gemini CLI loads it: every `.toml` file, one policy, each note with its
/// file and line, priorities weighed across files.
#[test]
fn a_gemini_policies_directory_imports_as_one_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("policies");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("a-shell.toml"),
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"git push\"\ndecision = \"ask_user\"\npriority = 10\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("b-tools.toml"),
        "# tools\n[[rule]]\ntoolName = \"read_file\"\ndecision = \"allow\"\n\n\
         [[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"git\"\ndecision = \"allow\"\npriority = 90\n",
    )
    .unwrap();
    std::fs::write(dir.join("notes.txt"), "not a policy").unwrap();
    let out = agent_guard(&["import", "gemini", dir.to_str().unwrap()], tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let settings: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        settings["permissions"],
        json!({"allow": ["Read", "Bash(git:*)"], "ask": ["Bash(git push*)"], "deny": []})
    );
    let stderr = text(&out.stderr);
    let tools = dir.join("b-tools.toml").display().to_string();
    let shell = dir.join("a-shell.toml").display().to_string();
    assert!(
        stderr.contains(&format!(
            "{tools}:6: priority 90 puts this allow rule above the ask rule at {shell}:1"
        )),
        "{stderr}"
    );
    // A directory without policy files, and a broken file, are errors naming what to fix.
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = agent_guard(&["import", "gemini", empty.to_str().unwrap()], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("holds no `.toml` policy file"),
        "{}",
        text(&out.stderr)
    );
    std::fs::write(dir.join("c-bad.toml"), "[[rule]]\ndecision = \"always\"\n").unwrap();
    let out = agent_guard(&["import", "gemini", dir.to_str().unwrap()], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("c-bad.toml:1: `decision` is `always`"),
        "{}",
        text(&out.stderr)
    );
}

/// Gemini's approval modes are named as agent-guard's, and a plan-mode catch-all deny, which here would deny every
/// call in every mode, is imported with a warning saying so.
#[test]
fn gemini_modes_are_mapped_and_a_plan_mode_catch_all_is_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("plan.toml"),
        "[[rule]]\ndecision = \"deny\"\npriority = 20\nmodes = [\"plan\"]\n\n\
         [[rule]]\ntoolName = \"read_file\"\ndecision = \"allow\"\npriority = 50\nmodes = [\"plan\"]\n\n\
         [[rule]]\ntoolName = \"write_file\"\ndecision = \"allow\"\npriority = 15\nmodes = [\"autoEdit\"]\n",
    )
    .unwrap();
    let out = agent_guard(&["import", "gemini", "plan.toml"], tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let settings: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(settings["permissions"]["deny"], json!(["*"]));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("plan.toml:1: warning: this deny rule for every tool, meant only for `modes = [\"plan\"]`, becomes `deny: [\"*\"]`, which denies every call in every mode"),
        "{stderr}"
    );
    assert!(
        stderr.contains("agent-guard's own `plan` mode refuses every change"),
        "{stderr}"
    );
    assert!(stderr.contains("(agent-guard's `plan`;"), "{stderr}");
    assert!(
        stderr.contains(
            "plan.toml:12: allow rule left out: `modes = [\"autoEdit\"]` (agent-guard's `acceptEdits`;"
        ),
        "{stderr}"
    );
}

/// Codex saves its rules on the shell it runs each command with (`/bin/zsh -lc "cargo test"`): they become rules on
/// the command, or a warning naming the rule when its command is more than words; the examples still pass.
#[test]
fn codex_rules_on_a_shell_running_code_become_rules_on_the_code() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("default.rules"),
        "prefix_rule(pattern=[\"/bin/zsh\", \"-lc\", \"cargo test\"], decision=\"allow\",\n\
         \x20   match=[[\"/bin/zsh\", \"-lc\", \"cargo test\"]])\n\
         prefix_rule(pattern=[\"bash\", \"-lc\", \"git push --force\"], decision=\"forbidden\")\n\
         prefix_rule(pattern=[\"/bin/zsh\", \"-lc\", \"cd web && npm test\"], decision=\"allow\")\n",
    )
    .unwrap();
    let out = agent_guard(&["import", "codex", "default.rules"], tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let settings: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        settings["permissions"],
        json!({
            "allow": ["Bash(cargo test)", "Bash(/bin/zsh -lc \"cd web && npm test\":*)"],
            "ask": [],
            "deny": ["Bash(git push --force)"],
        })
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(
            "default.rules:4: `/bin/zsh -lc 'cd web && npm test'` runs its command through a shell"
        ),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    std::fs::write(tmp.path().join("codex.json"), &out.stdout).unwrap();
    let run = agent_guard(&["test", "--settings", "codex.json"], tmp.path());
    assert_eq!(text(&run.stdout), "1 passed, 0 failed\n", "{}", text(&run.stderr));
}
