//! Tests of contain.rs.

use agent_os_sandbox::KernelSupport;
use agent_tool_traits::{Confinement, SandboxProfile};
use serde_json::json;

use super::*;
use crate::test_guard::{Project, git};

/// Contained allows need a kernel that enforces the sandbox; elsewhere these tests say so and check the
/// reason instead, and fail where `AGENT_GUARD_REQUIRE_SANDBOX=1` says the kernel can enforce it (as `cargo
/// xtask ci` sets it after `agent-guard sandbox --probe`).
/// Asserts that `decided` has the decision `expected`, showing its reason when not.
#[track_caller]
fn assert_decided(decided: &crate::Decided, expected: Decision) {
    assert_eq!(
        decided.verdict().decision,
        expected,
        "{}",
        decided.verdict().reason()
    );
}

fn enforced() -> bool {
    match KernelSupport::enforcement_missing() {
        None => true,
        Some(why) => {
            assert!(
                std::env::var_os("AGENT_GUARD_REQUIRE_SANDBOX").is_none_or(|v| v != "1"),
                "contained allows need the kernel sandbox, which AGENT_GUARD_REQUIRE_SANDBOX=1 requires, and {why}"
            );
            eprintln!("skipped: contained allows need the kernel sandbox, and {why}");
            false
        }
    }
}

#[test]
fn where_every_command_runs_in_the_sandbox_cd_to_a_bare_name_does_not_search_cdpath() {
    let files = [("proj/src/main.rs", "fn main() {}\n")];
    let project = Project::with_files("{}", &files);
    if !enforced() {
        return;
    }
    // The sandbox passes no `CDPATH`: `cd src` goes to `./src`, and what follows is read-only as written.
    let decided = project
        .guard
        .decide("Bash", &json!({"command": "cd src && cat main.rs"}));
    assert_decided(&decided, Decision::Allow);
    assert_eq!(decided.confinement, Some(Confinement::READ_ONLY));
    // A `CDPATH` the settings pass to sandboxed commands is one `cd` may search again.
    let passed = Project::with_files(r#"{"agentGuard": {"sandbox": {"env": ["CDPATH"]}}}"#, &files);
    let decided = passed
        .guard
        .decide("Bash", &json!({"command": "cd src && cat main.rs"}));
    assert_ne!(decided.confinement, Some(Confinement::READ_ONLY));
    // The line's own `CDPATH`, however it is set, is followed: what comes after is known only at run time.
    for command in [
        "CDPATH=/etc; cd ssh && ls",
        "read CDPATH <<< /etc; cd ssh && ls",
        "declare CDPATH=/etc; cd ssh && ls",
    ] {
        let decided = project.guard.decide("Bash", &json!({ "command": command }));
        assert!(
            decided.verdict().reason().contains("only at run time"),
            "{command}: {}",
            decided.verdict().reason()
        );
    }
}

#[test]
fn a_contained_line_runs_workspace_write_with_the_network_and_keeps_what_would_have_asked() {
    let project = Project::with_files("{}", &[("proj/package.json", "{}")]);
    let decided = project.guard.decide("Bash", &json!({"command": "npm install"}));
    if !enforced() {
        assert_eq!(decided.verdict().decision, Decision::Ask);
        return;
    }
    assert_decided(&decided, Decision::Allow);
    assert_eq!(decided.verdict().provenance.step, Some(DecidedBy::Contained));
    assert!(
        decided
            .verdict()
            .reason()
            .starts_with("allowed inside the sandbox: runs code the project controls")
    );
    assert_eq!(
        decided.confinement,
        Some(Confinement {
            profile: SandboxProfile::WorkspaceWrite,
            network: true,
            git_writes: false,
            undo: true,
            background: false,
        })
    );
    let contained = decided.contained.expect("what was contained");
    assert_eq!(contained.without.decision, Decision::Ask);
    assert!(
        contained.without.reason().contains("npm install"),
        "{}",
        contained.without.reason()
    );
    assert!(
        decided.domains.is_empty(),
        "the registries are the settings' own: {:?}",
        decided.domains
    );
}

#[test]
fn a_line_writing_in_the_project_runs_without_the_network() {
    let project = Project::new("{}");
    let decided = project
        .guard
        .decide("Bash", &json!({"command": "mkdir -p build && touch build/x"}));
    if !enforced() {
        return;
    }
    assert_decided(&decided, Decision::Allow);
    assert_eq!(
        decided.confinement,
        Some(Confinement {
            profile: SandboxProfile::WorkspaceWrite,
            network: false,
            git_writes: false,
            undo: true,
            background: false,
        })
    );
}

#[test]
fn plan_mode_and_the_command_line_switch_keep_the_ask() {
    let plan = Project::new(r#"{"permissions": {"defaultMode": "plan"}}"#);
    let decided = plan.guard.decide("Bash", &json!({"command": "make"}));
    assert_eq!(decided.verdict().decision, Decision::Deny);
    assert!(decided.contained.is_none());
    let off = Project::new(r#"{"agentGuard": {"sandbox": {"autoAllow": false}}}"#);
    assert_eq!(
        off.guard.auto_allow(),
        &AutoAllow::Off("`agentGuard.sandbox.autoAllow` is `false`".to_owned())
    );
    assert_eq!(
        off.guard
            .decide("Bash", &json!({"command": "make"}))
            .verdict()
            .decision,
        Decision::Ask
    );
    let sandbox_off = Project::new(r#"{"agentGuard": {"sandbox": "off"}}"#);
    assert!(
        matches!(sandbox_off.guard.auto_allow(), AutoAllow::Off(why) if why.contains("`agentGuard.sandbox` is `off`"))
    );
}

#[test]
fn the_domains_a_rule_or_an_ask_allowed_are_passed_to_the_sandbox() {
    let ruled = Project::new(r#"{"permissions": {"allow": ["Bash(curl:*)"]}}"#);
    let decided = ruled.guard.decide(
        "Bash",
        &json!({"command": "curl -sS https://docs.example.com/a https://crates.io/b"}),
    );
    assert_eq!(decided.verdict().decision, Decision::Allow);
    if enforced() {
        assert_eq!(decided.domains, ["docs.example.com"]);
    }
    // A WebFetch domain rule makes the host an allowed one: contained, and nothing to pass, since the sandbox's
    // own policy (built from the same settings) holds the rule's domain.
    let fetch = Project::new(r#"{"permissions": {"allow": ["WebFetch(domain:docs.example.com)"]}}"#);
    let decided = fetch
        .guard
        .decide("Bash", &json!({"command": "curl -sS https://docs.example.com/a"}));
    if enforced() {
        assert_decided(&decided, Decision::Allow);
        assert!(decided.domains.is_empty(), "{:?}", decided.domains);
        assert!(fetch.guard.network().allows("docs.example.com", 443));
    }
    // Another host of the same line is named in the ask, and nothing is passed for a denied one.
    let decided = fetch.guard.decide(
        "Bash",
        &json!({"command": "curl -sS https://docs.example.com/a https://example.net/b"}),
    );
    assert_eq!(decided.verdict().decision, Decision::Ask);
    if enforced() {
        assert!(
            decided
                .verdict()
                .reason()
                .contains("reaches `example.net`, which is not an allowed domain"),
            "{}",
            decided.verdict().reason()
        );
    }
    let denied = Project::new(
        r#"{"permissions": {"allow": ["Bash(curl:*)"]}, "agentGuard": {"network": {"deny": ["*.example.com"]}}}"#,
    );
    let decided = denied
        .guard
        .decide("Bash", &json!({"command": "curl -sS https://docs.example.com/a"}));
    assert!(decided.domains.is_empty(), "{:?}", decided.domains);
}

#[test]
fn a_service_on_this_machine_is_granted_only_to_a_line_somebody_allowed_and_never_against_a_rule() {
    let ruled = Project::new(r#"{"permissions": {"allow": ["Bash(curl:*)"]}}"#);
    if !enforced() {
        return;
    }
    // A rule naming one command does not open the port to the rest of the line: the proxy would let the
    // interpreter (or a build, or whatever follows a curl that never runs) reach it as well.
    for line in [
        "curl -s localhost:3051/api | python3 -m json.tool",
        "false && curl localhost:3051/ ; tar c . | python3 -c 'import sys'",
        "f() { curl localhost:3051/; }; make",
    ] {
        let decided = ruled.guard.decide("Bash", &json!({ "command": line }));
        assert_eq!(
            decided.verdict().decision,
            Decision::Ask,
            "{line}: {}",
            decided.verdict().reason()
        );
    }
    // A deny rule on this machine refuses it in every spelling, however the line is allowed.
    let refused = Project::new(
        r#"{"permissions": {"allow": ["Bash(curl:*)"], "deny": ["WebFetch(domain:localhost)"]}}"#,
    );
    for line in [
        "curl -s localhost:3051/api",
        "curl -s http://0.0.0.0:3051/",
        "curl -s 'http://[::]:3051/'",
        "curl -s http://foo.localhost:3051/",
        "curl -s http://127.0.0.2:3051/",
    ] {
        let decided = refused.guard.decide("Bash", &json!({ "command": line }));
        assert!(decided.domains.is_empty(), "{line}: {:?}", decided.domains);
    }
    // The repository's own rule allows the line but opens no network: the line asks, saying so, and an allow
    // of the person grants the host.
    let repository = Project::with_files(
        "{}",
        &[(
            "proj/.claude/settings.json",
            r#"{"permissions": {"allow": ["Bash(curl:*)"]}}"#,
        )],
    );
    let decided = repository
        .guard
        .decide("Bash", &json!({"command": "curl -s localhost:3051/api"}));
    assert_decided(&decided, Decision::Ask);
    assert!(
        decided
            .verdict()
            .reason()
            .contains("may only tighten the sandbox"),
        "{}",
        decided.verdict().reason()
    );
    // The user's own rule grants it.
    let decided = ruled
        .guard
        .decide("Bash", &json!({"command": "curl -s localhost:3051/api"}));
    assert_decided(&decided, Decision::Allow);
    assert_eq!(decided.domains, ["localhost:3051"]);
}

#[test]
fn after_untrusted_content_a_line_nobody_approved_reaches_only_the_domains_the_session_knew() {
    use agent_rules::{SessionState, TaintFacts, TaintMark};
    let project = Project::new(
        r#"{"permissions": {"allow": ["WebFetch(domain:docs.example.com)", "WebFetch(domain:api.example.org)"]}}"#,
    );
    if !enforced() {
        return;
    }
    let call = |line: &str| crate::CallInput::new("Bash", json!({ "command": line }));
    let fetch = call("curl -sS https://docs.example.com/a");
    let mut session = SessionState::default();
    let clean = project.guard.decide_in_session(&fetch, &session);
    assert_eq!(clean.verdict().provenance.step, Some(DecidedBy::Contained));
    assert!(clean.session_limit.is_none());
    session.taint_mut().record(
        &TaintFacts {
            untrusted: Some(TaintMark::new(
                "WebFetch https://attacker.example/",
                "fetched a page",
            )),
            private: None,
            contacted: vec!["api.example.org".to_owned()],
        },
        Decision::Allow,
    );
    // Contained: the domains the session reached, and the one the line names that the decision let through.
    let decided = project.guard.decide_in_session(&fetch, &session);
    assert_eq!(decided.verdict().provenance.step, Some(DecidedBy::Contained));
    let limit = decided.session_limit.unwrap();
    assert_eq!(limit.domains, ["api.example.org", "docs.example.com"]);
    assert_eq!(limit.untrusted.call, "WebFetch https://attacker.example/");
    assert!(limit.why(Some("s1")).contains("`agent-guard session clear s1`"));
    // A line a rule allows was approved: not limited. Nor is a line without the network.
    let ruled = Project::new(r#"{"permissions": {"allow": ["Bash(curl:*)"]}}"#);
    let decided = ruled
        .guard
        .decide_in_session(&call("curl -sS https://x.example/"), &session);
    assert_eq!(decided.verdict().decision, Decision::Allow);
    assert!(decided.confinement.is_some_and(|c| c.network));
    assert!(decided.session_limit.is_none());
    let offline = project
        .guard
        .decide_in_session(&call("echo hi > out.txt"), &session);
    assert!(offline.confinement.is_some_and(|c| !c.network));
    assert!(offline.session_limit.is_none());
}

#[test]
fn after_untrusted_content_and_private_data_a_line_nobody_approved_reaches_no_domain() {
    use agent_rules::{SessionState, TaintFacts, TaintMark};
    let project = Project::new(r#"{"permissions": {"allow": ["WebFetch(domain:attacker.example)"]}}"#);
    if !enforced() {
        return;
    }
    let mut session = SessionState::default();
    session.taint_mut().record(
        &TaintFacts {
            untrusted: Some(TaintMark::new(
                "WebFetch https://attacker.example/",
                "fetched a page",
            )),
            private: Some(TaintMark::new("Read config/settings.yml", "holds a credential")),
            contacted: vec!["attacker.example".to_owned(), "registry.npmjs.org".to_owned()],
        },
        Decision::Allow,
    );
    // A build reaches the network through the proxy, where the analysis does not see what it sends: the
    // domain the content came from is among those the session reached, and none is let through.
    let mut limited = 0;
    for line in ["npm install", "make"] {
        let decided = project.guard.decide_in_session(
            &crate::CallInput::new("Bash", json!({ "command": line })),
            &session,
        );
        if decided.verdict().decision != Decision::Allow {
            continue;
        }
        if decided.confinement.is_some_and(|c| c.network) {
            let limit = decided.session_limit.expect("a limit on the proxy");
            assert!(limit.domains.is_empty(), "{line}: {:?}", limit.domains);
            assert!(
                limit
                    .why(Some("s1"))
                    .contains("none once the session has also read private data")
            );
            limited += 1;
        }
    }
    assert!(limited > 0, "no line ran contained with the network");
}

#[test]
fn a_removal_is_contained_only_for_what_a_build_makes_again() {
    let project = Project::with_files(
        r#"{"agentGuard": {"undo": false}}"#,
        &[
            ("proj/.gitignore", "node_modules\n/dist/\n"),
            ("proj/node_modules/a/index.js", ""),
            ("proj/dist/app.js", ""),
            ("proj/src/main.rs", ""),
            (
                "proj/target/CACHEDIR.TAG",
                "Signature: 8a477f597d28d172789f06886806bc55\n",
            ),
        ],
    );
    if !enforced() {
        return;
    }
    for (command, contained) in [
        ("rm -rf node_modules", true),
        ("rm -rf dist target", true),
        ("rm -rf dist/*", true),
        ("rm -rf src", false),
        ("rm -r node_modules src", false),
        ("cd src && rm -rf ../src", false),
        ("find src -name '*.rs' -delete", false),
        ("rm -rf $DIR", false),
    ] {
        let decided = project.guard.decide("Bash", &json!({ "command": command }));
        let allowed = decided.verdict().decision == Decision::Allow;
        assert_eq!(allowed, contained, "{command}: {}", decided.verdict().reason());
    }
}

#[test]
fn with_snapshots_a_removal_or_a_discard_below_the_root_is_contained_and_the_root_itself_is_not() {
    let files = [("proj/src/main.rs", "fn main() {}\n"), ("proj/docs/a.md", "a")];
    let project = Project::with_files("{}", &files);
    let settings = project.guard.undo_settings();
    if !enforced() || !agent_undo::snapshots_on(&project.cwd(), &settings) {
        eprintln!("skipped: snapshots are not taken here (no git, or no place for the store)");
        return;
    }
    for (command, contained) in [
        ("rm -rf src", true),
        ("rm -rf src/*", true),
        ("find docs -name '*.md' -delete", true),
        ("git reset --hard", true),
        ("git checkout -- .", true),
        ("git clean -fd", true),
        ("git switch -f main", true),
        // What the snapshot leaves out (ignored files, commits, stashes, reflogs), and the root itself.
        ("git clean -fdx", false),
        ("git stash clear", false),
        ("git branch -D feature", false),
        ("git reflog expire --expire=now --all", false),
        ("git gc -q --prune=now", false),
        ("git update-ref -d refs/heads/feature", false),
        ("git tag -d v1", false),
        ("echo 'delete refs/heads/feature' | git update-ref --stdin", false),
        ("git clean -fd -e '!*'", false),
        ("git clean -fd --exclude='!data'", false),
        (
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=gc.pruneExpire GIT_CONFIG_VALUE_0=now git gc -q",
            false,
        ),
        ("git tag -f v1 HEAD~3", false),
        ("git symbolic-ref -d refs/heads/feature", false),
        ("git fetch --prune . 'refs/nothing/*:refs/*'", false),
        ("git fetch -p . 'refs/x/*:refs/heads/*'", false),
        ("git fetch --prune-tags .", false),
        ("git filter-branch --tree-filter 'rm -f a.md' HEAD", false),
        ("git -c gc.pruneExpire=now gc", false),
        (
            "git -c gc.reflogExpireUnreachable=now -c gc.pruneExpire=now gc --quiet",
            false,
        ),
        ("git -c core.logAllRefUpdates=false reset --hard HEAD~1", false),
        (
            "git stash clear && git branch -D feature && git reflog expire --expire=now --all && git gc -q --prune=now",
            false,
        ),
        ("rm -rf .", false),
        ("rm -rf *", false),
        ("rm -rf ./", false),
        ("cd src && rm -rf ..", false),
        ("rm -rf $DIR", false),
    ] {
        let decided = project.guard.decide("Bash", &json!({ "command": command }));
        let verdict = decided.verdict();
        let allowed = verdict.decision == Decision::Allow;
        assert_eq!(allowed, contained, "{command}: {}", verdict.reason());
        if contained {
            assert!(
                verdict.reason().contains("`agent-guard undo` takes back"),
                "{command}: {}",
                verdict.reason()
            );
        }
    }
    // `agentGuard.undo: false` turns snapshots off, and with them these allows.
    let off = Project::with_files(r#"{"agentGuard": {"undo": false}}"#, &files);
    let decided = off.guard.decide("Bash", &json!({"command": "rm -rf src"}));
    assert_eq!(decided.verdict().decision, Decision::Ask);
}

#[test]
fn a_removal_or_a_checkout_is_taken_back_only_when_a_snapshot_holds_every_file_it_may_overwrite() {
    let files = [
        ("proj/.gitignore", "private*/\n/target/\n/env/\n/cache/\n"),
        ("proj/.git/info/exclude", "mywork/\n"),
        ("proj/private_data/p.txt", "work"),
        ("proj/mywork/w.txt", "work"),
        ("proj/data/.gitignore", "*\n!.gitignore\n"),
        ("proj/data/d.txt", "work"),
        ("proj/env/pyvenv.cfg", "home = /usr/bin\n"),
        ("proj/env/lib/site.py", ""),
        (
            "proj/cache/CACHEDIR.TAG",
            "Signature: 8a477f597d28d172789f06886806bc55\n",
        ),
        ("proj/cache/c.bin", ""),
        ("proj/src/main.rs", "fn main() {}\n"),
        ("proj/src/.env", "TOKEN=1\n"),
        ("proj/src/target/debug/x", ""),
        ("proj/docs/a.md", "a"),
    ];
    let project = Project::with_files("{}", &files);
    let settings = project.guard.undo_settings();
    if !enforced() || !agent_undo::snapshots_on(&project.cwd(), &settings) {
        eprintln!("skipped: snapshots are not taken here (no git, or no place for the store)");
        return;
    }
    let decide = |project: &Project, command: &str| {
        let decided = project.guard.decide("Bash", &json!({ "command": command }));
        let verdict = decided.verdict();
        (verdict.decision == Decision::Allow, verdict.reason())
    };
    for (command, contained, named) in [
        // What the project ignores by a pattern, `.git/info/exclude` or a `.gitignore` inside is held by the
        // snapshots, as its other files are.
        ("rm -rf private_data", true, ""),
        ("rm -rf mywork", true, ""),
        ("rm -rf data", true, ""),
        ("rm -rf data/*", true, ""),
        ("find data -name '*.txt' -delete", true, ""),
        // But an environment and a cache it ignores, which their marks say a tool makes again.
        ("rm -rf env", false, "env"),
        ("rm -rf cache", false, "cache"),
        // A secret file by name (the sandbox keeps it) and a build output below are no loss.
        ("rm -rf src", true, ""),
        ("rm -rf docs", true, ""),
        // git writing the working tree from another commit overwrites ignored files, the marked ones too.
        ("git reset --hard HEAD~1", false, ""),
        ("git checkout HEAD~1 -- notes", false, ""),
        ("git restore --source=HEAD~1 notes", false, ""),
        ("git checkout -f HEAD~1", false, ""),
        ("git switch --discard-changes feature", false, ""),
        // To `HEAD` or from the index, it writes only what git tracks, which the snapshot holds.
        ("git reset --hard", true, ""),
        ("git reset --hard HEAD", true, ""),
        ("git checkout -- .", true, ""),
        ("git restore src/main.rs", true, ""),
        ("git restore --staged src/main.rs", true, ""),
        // `--soft` moves `HEAD` alone; a reset of some paths to `HEAD` fills their index entries from `HEAD`.
        ("git reset --soft HEAD~1", true, ""),
        ("git reset -q HEAD src/main.rs", true, ""),
        ("git reset --soft --hard HEAD~1", false, ""),
    ] {
        let (allowed, reason) = decide(&project, command);
        assert_eq!(allowed, contained, "{command}: {reason}");
        if !contained {
            assert!(
                reason.contains("is left out of every snapshot") && reason.contains(named),
                "{command}: {reason}"
            );
        } else if command.starts_with("rm") {
            assert!(
                reason.contains("`agent-guard undo` takes back"),
                "{command}: {reason}"
            );
        }
    }
    // Without the marked environment and cache, the same lines are taken back, with the ignored data beside them.
    let clean: Vec<(&str, &str)> = files
        .iter()
        .copied()
        .filter(|(path, _)| !path.contains("env/") && !path.contains("cache/"))
        .collect();
    let clean = Project::with_files("{}", &clean);
    for command in [
        "git reset --hard HEAD~1",
        "git checkout HEAD~1 -- notes",
        "rm -rf src",
        "rm -rf private_data",
    ] {
        let (allowed, reason) = decide(&clean, command);
        assert!(allowed, "{command}: {reason}");
    }
}

#[test]
fn a_command_the_users_rule_allows_beyond_the_sandbox_runs_in_it_with_the_contained_rest() {
    let files = [
        ("proj/.git/HEAD", "ref: refs/heads/main\n"),
        ("proj/package.json", "{}"),
        ("proj/src/main.rs", "fn main() {}\n"),
    ];
    let ruled = Project::with_files(r#"{"permissions": {"allow": ["Bash(git push:*)"]}}"#, &files);
    let line = r#"git add -A && git commit -m "feat: x" && git push origin main"#;
    let decided = ruled.guard.decide("Bash", &json!({ "command": line }));
    if !enforced() {
        assert_eq!(decided.verdict().decision, Decision::Ask);
        return;
    }
    let verdict = decided.verdict();
    assert_eq!(verdict.decision, Decision::Allow, "{}", verdict.reason());
    assert_eq!(verdict.provenance.step, Some(DecidedBy::AllowRule));
    assert_eq!(verdict.provenance.rule.as_deref(), Some("Bash(git push:*)"));
    assert!(
        verdict
            .reason()
            .contains("the rest of the line is contained: its writes stay in the project"),
        "{}",
        verdict.reason()
    );
    let confinement = decided.confinement.expect("a sandbox for the allowed line");
    assert_eq!(confinement.profile, SandboxProfile::WorkspaceWrite);
    assert!(confinement.network && confinement.git_writes, "{confinement:?}");
    assert!(decided.contained.is_some());

    // Code the analysis does not follow would share the rule's grant: the line asks and says to split it.
    for line in [
        "npm test && git push",
        "./deploy.sh && git push origin main",
        "python3 -c 'print(1)' && git push",
        "$TOOL status; git push",
    ] {
        let decided = ruled.guard.decide("Bash", &json!({ "command": line }));
        let verdict = decided.verdict();
        assert_eq!(verdict.decision, Decision::Ask, "{line}: {}", verdict.reason());
        assert!(
            verdict
                .reason()
                .contains("shares the sandbox in which your rule `Bash(git push:*)`"),
            "{line}: {}",
            verdict.reason()
        );
    }

    // Without the rule, or with the rule only in the repository's own settings, `git push` still asks.
    let unruled = Project::with_files("{}", &files);
    let decided = unruled.guard.decide("Bash", &json!({ "command": line }));
    assert_eq!(decided.verdict().decision, Decision::Ask);
    let mut with_repository_rule = files.to_vec();
    with_repository_rule.push((
        "proj/.claude/settings.json",
        r#"{"permissions": {"allow": ["Bash(git push:*)"]}}"#,
    ));
    let repository = Project::with_files("{}", &with_repository_rule);
    let decided = repository.guard.decide("Bash", &json!({ "command": line }));
    assert_decided(&decided, Decision::Ask);

    // An ask rule of the user on a contained command wins over both.
    let asked = Project::with_files(
        r#"{"permissions": {"allow": ["Bash(git push:*)"], "ask": ["Bash(git commit:*)"]}}"#,
        &files,
    );
    let decided = asked.guard.decide("Bash", &json!({ "command": line }));
    assert_eq!(decided.verdict().decision, Decision::Ask);
}

#[test]
fn a_reading_git_command_whose_submodule_sets_a_program_does_not_share_a_rules_network() {
    let project = Project::with_files(
        r#"{"permissions": {"allow": ["Bash(git push:*)"]}}"#,
        &[("proj/src/main.rs", "fn main() {}\n"), ("proj/sub/a.txt", "a")],
    );
    let root = project.cwd();
    git(&root, &["init", "-q"]);
    git(&root.join("sub"), &["init", "-q"]);
    git(&root.join("sub"), &["commit", "-q", "--allow-empty", "-m", "s"]);
    git(&root, &["add", "-A"]);
    let line = "git status; git push";
    let before = project.guard.decide("Bash", &json!({ "command": line }));
    assert_decided(&before, Decision::Allow);
    let config = root.join("sub/.git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[core]\n\tfsmonitor = sh ../x.sh\n");
    std::fs::write(&config, text).unwrap();
    // A reading command beside the ruled one is no longer read-only there: the rules alone do not allow the
    // line, and the sandbox does not share the push's network with the submodule's program.
    let decided = project.guard.decide("Bash", &json!({ "command": line }));
    assert_decided(&decided, Decision::Ask);
    // Without the network beside it, the same reading command stays read-only.
    let alone = project.guard.decide("Bash", &json!({ "command": "git status" }));
    assert_decided(&alone, Decision::Allow);
    let line = "git commit -q --allow-empty -m x; git status; git push";
    let decided = project.guard.decide("Bash", &json!({ "command": line }));
    if !enforced() {
        return;
    }
    assert_decided(&decided, Decision::Ask);
    assert!(
        decided.verdict().reason().contains("submodule"),
        "{}",
        decided.verdict().reason()
    );
}
