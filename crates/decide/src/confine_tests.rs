//! Tests of confine.rs.

use agent_os_sandbox::KernelSupport;
use agent_rules::Settings;
use agent_tool_traits::SandboxProfile;
use serde_json::json;

use super::*;
use crate::guard::GuardOptions;
use crate::test_guard::Project;

#[test]
fn a_host_with_a_port_is_named_by_its_host() {
    for (host, name) in [
        ("localhost:3000", "localhost"),
        ("127.0.0.1:8080", "127.0.0.1"),
        ("[::1]:3000", "::1"),
        ("example.com", "example.com"),
        ("::1", "::1"),
        ("host:", "host:"),
        ("host:3a", "host:3a"),
    ] {
        assert_eq!(host_without_port(host), name, "{host}");
    }
}

/// The confinement and decision of `command` under `settings`.
fn confined(settings: &str, command: &str) -> (Decision, Option<Confinement>, String) {
    let project = Project::new(settings);
    let decided = project.guard.decide("Bash", &json!({ "command": command }));
    (
        decided.verdict().decision,
        decided.confinement,
        decided.verdict().reason(),
    )
}

/// What the kernel sandbox gives where the kernel enforces it; where it cannot, no confinement and an allow
/// that says it is not sandboxed.
fn expect(settings: &str, command: &str, profile: SandboxProfile, network: bool) {
    expect_git(settings, command, profile, network, false);
}

/// As [`expect`], with whether git may write the repository.
fn expect_git(settings: &str, command: &str, profile: SandboxProfile, network: bool, git_writes: bool) {
    let (decision, confinement, reason) = confined(settings, command);
    assert_eq!(decision, Decision::Allow, "{command}: {reason}");
    // A contained allow (its reason says so) counts on undo for what it writes in the project; a rule's or a
    // mode's allow does not.
    let expected = Confinement {
        profile,
        network,
        git_writes,
        undo: profile == SandboxProfile::WorkspaceWrite && reason.starts_with("allowed inside the sandbox"),
        background: false,
    };
    match KernelSupport::enforcement_missing() {
        None => assert_eq!(confinement, Some(expected), "{command}"),
        Some(_) => {
            assert_eq!(confinement, None);
            assert!(reason.contains("not sandboxed"), "{reason}");
        }
    }
}

#[test]
fn a_line_allowed_as_read_only_runs_read_only() {
    expect("{}", "ls -la | head -3", SandboxProfile::ReadOnly, false);
}

#[test]
fn a_line_a_rule_allows_runs_workspace_write() {
    let rule = r#"{"permissions": {"allow": ["Bash(git commit:*)"]}}"#;
    expect_git(
        rule,
        "git commit -m 'a change'",
        SandboxProfile::WorkspaceWrite,
        false,
        true,
    );
}

#[test]
fn only_a_line_that_runs_git_to_write_may_write_the_git_directory() {
    let mode = r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#;
    let ww = SandboxProfile::WorkspaceWrite;
    // git writing the repository, alone or with programs whose effects the analysis follows.
    for line in [
        "git add -A && git commit -m \"$(printf 'a\nb')\"",
        "git -c user.email=a@b.c commit -m x",
        "cd sub && git checkout -b topic",
        "git ls-files -m | while read -r f; do git add \"$f\"; done && git commit -m x",
        "git status --short && git add -A && git commit -m x && git log --oneline -1",
    ] {
        expect_git(mode, line, ww, false, true);
    }
    // Builds, tests, scripts, interpreters and unknown programs, git run by code the analysis does not see,
    // git that runs a program the line names or sets, and git with options only known at run time.
    for line in [
        // git beside code the analysis does not follow: that code would run with the history writable.
        "git stash && make && git stash pop",
        "printf 'rm -rf .git/objects\n' > x.sh && git add x.sh && bash x.sh",
        "git add -A && npm test && git commit -m x",
        "make",
        "npm test",
        "cargo build",
        "./scripts/commit.sh",
        "bash -c \"$X\"",
        "python3 -c 'import os'",
        "git rebase --exec 'make test' main",
        "git -c core.pager=less commit -m x",
        "git rebase $ARGS main",
        // git beside a write to a name only the run knows: a file's name can spell `.git`.
        "git add README.md && rg -l X src | while read -r f; do rm -rf \"$f\"; done",
        "git add README.md && rg -l X src | xargs rm -rf",
        "git add README.md && printf '%s\n' .git/refs/heads/side | while read -r f; do : > \"$f\"; done",
        "git add README.md && : > \"$(printf .gi; printf t/logs/HEAD)\"",
        "git add -A && find . -name '*.orig' -exec rm {} +",
        // git beside any other write: a link the line makes, an archive's names, a decoded command.
        "mkdir -p docs && echo x > docs/a.md && git add docs && git commit -m docs",
        "ln -s .git lnk && git add README.md && rm -rf lnk/refs",
        "git add README.md && tar -xf evil.tar",
        "git add README.md && cp -r vendor/. .",
        "git add README.md && printf 'rm -rf .g%st\\n' i | sh",
        "parallel --colsep x git stash {1}{2} ::: clxear",
    ] {
        // Some of them ask even in this mode; once the user allows them they run with `.git` read-only.
        let (decision, confinement, reason) = confined(mode, line);
        assert_ne!(decision, Decision::Deny, "{line}: {reason}");
        if KernelSupport::enforcement_missing().is_none() {
            let confinement = confinement.unwrap();
            assert_eq!(confinement.profile, ww, "{line}");
            assert!(!confinement.git_writes, "{line}: {reason}");
        }
    }
}

#[test]
fn only_a_deliberate_allow_of_a_command_that_fetches_opens_the_network() {
    // A build tool fetches what it builds with: a rule that names it opens the network.
    let rule = r#"{"permissions": {"allow": ["Bash(make:*)"]}}"#;
    expect(rule, "make test", SandboxProfile::WorkspaceWrite, true);
    // A mode allows everything alike and says nothing about the network.
    let mode = r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#;
    expect(mode, "make test", SandboxProfile::WorkspaceWrite, false);
}

/// What a deliberate allow grants the proxy beyond the settings: the host of the remote a git command reaches
/// by its configuration, a service on this machine with its port, and no other address.
#[test]
fn a_host_granted_by_one_commands_rule_is_not_shared_with_code_another_rule_runs() {
    let settings = r#"{"permissions": {"allow": ["Bash(curl -s localhost:8080/health)", "Bash(npm run dev)",
        "Bash(jq:*)", "Bash(curl -s https://api.example.org/status)"]}}"#;
    let project = Project::with_files(settings, &[("proj/.git/HEAD", "ref: refs/heads/main\n")]);
    if KernelSupport::enforcement_missing().is_some() {
        return;
    }
    let decide = |command: &str| project.guard.decide("Bash", &json!({ "command": command }));
    // The grant reaches the whole line: the project's code would reach the service too.
    for line in [
        "curl -s localhost:8080/health && npm run dev",
        "curl -s localhost:8080/health; npm run dev",
        "npm run dev | curl -s localhost:8080/health",
        "curl -s https://api.example.org/status && npm run dev",
    ] {
        let decided = decide(line);
        assert_eq!(decided.verdict().decision, Decision::Ask, "{line}");
        assert!(
            decided
                .verdict()
                .reason()
                .contains("would let `npm run dev` reach it too"),
            "{line}: {}",
            decided.verdict().reason()
        );
    }
    // Beside commands that only read, the rule's grant stands.
    let decided = decide("curl -s localhost:8080/health | jq .");
    assert_eq!(
        decided.verdict().decision,
        Decision::Allow,
        "{}",
        decided.verdict().reason()
    );
    assert_eq!(decided.domains, ["localhost:8080"]);
}

#[test]
fn a_deliberate_allow_grants_the_remote_of_the_configuration_and_a_local_service_by_its_port() {
    let settings = r#"{"permissions": {"allow": ["Bash(git fetch:*)", "Bash(git pull:*)", "Bash(git push:*)", "Bash(curl:*)"]}}"#;
    let config = "[remote \"origin\"]\n\turl = https://github.com/o/r.git\n[remote \"reg\"]\n\turl = https://crates.io/x\n";
    let project = Project::with_files(
        settings,
        &[
            ("proj/.git/config", config),
            ("proj/.git/HEAD", "ref: refs/heads/main\n"),
            ("proj/src/.keep", ""),
        ],
    );
    let domains = |command: &str| {
        let decided = project.guard.decide("Bash", &json!({ "command": command }));
        assert_eq!(
            decided.verdict().decision,
            Decision::Allow,
            "{command}: {}",
            decided.verdict().reason()
        );
        decided.domains
    };
    if KernelSupport::enforcement_missing().is_some() {
        return;
    }
    assert_eq!(domains("git fetch"), ["github.com"]);
    assert_eq!(domains("cd src && git pull origin main"), ["github.com"]);
    // A push changes another repository and asks for that; the user's rule allows it, with the network and
    // the remote's host.
    assert_eq!(domains("git push origin HEAD"), ["github.com"]);
    // A domain the settings already allow needs no grant.
    assert!(domains("git fetch reg").is_empty());
    assert_eq!(domains("curl -s localhost:3000/health"), ["localhost:3000"]);
    assert_eq!(domains("curl -s http://[::1]:8080/"), ["[::1]:8080"]);
    // The proxy reaches other hosts by name only: an address is not granted, and is refused at run time.
    assert!(domains("curl -s http://10.0.0.1/").is_empty());
}

#[test]
fn a_denied_line_and_a_guard_without_the_sandbox_have_no_confinement() {
    assert_eq!(confined("{}", "rm -rf /").1, None);
    let off = r#"{"agentGuard": {"sandbox": "off"}}"#;
    let (decision, confinement, _) = confined(off, "ls");
    assert_eq!((decision, confinement), (Decision::Allow, None));
}

#[test]
fn webfetch_rules_of_the_user_widen_the_proxy_and_deny_rules_narrow_it() {
    let settings = r#"{"permissions": {"allow": ["WebFetch(domain:docs.rs)", "WebFetch(domain:*.example.com)"],
        "deny": ["WebFetch(domain:crates.io)"]}, "agentGuard": {"network": {"allow": ["api.github.com"]}}}"#;
    let project = Project::new(settings);
    let spec = project.guard.sandbox_spec(Confinement::READ_ONLY);
    for (host, allowed) in [
        ("docs.rs", true),
        ("a.example.com", true),
        ("api.github.com", true),
        ("static.crates.io", true),
        ("crates.io", false),
        ("evil.com", false),
    ] {
        assert_eq!(spec.domains.allows(host, 443), allowed, "{host}");
    }
    // A repository's own allow rule does not open its domain; its deny rule does close one.
    let repository =
        r#"{"permissions": {"allow": ["WebFetch(domain:evil.com)"], "deny": ["WebFetch(domain:pypi.org)"]}}"#;
    let project = Project::with_files("{}", &[("proj/.claude/settings.json", repository)]);
    let spec = project.guard.sandbox_spec(Confinement::READ_ONLY);
    assert!(!spec.domains.allows("evil.com", 443));
    assert!(!spec.domains.allows("pypi.org", 443));
    assert!(spec.domains.allows("crates.io", 443));
}

/// The kernel sandbox hides the home directory's credential places from the one table of the file-system
/// sandbox, beside the places of the deny rules on reads.
#[test]
fn the_spec_carries_the_credential_places_of_the_home_directory() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("vault")).unwrap();
    let mut settings = Settings::new();
    settings.add_rule(
        agent_rules::Rule::parse(
            "Read(~/vault/**)",
            Decision::Deny,
            agent_tool_traits::Source::User,
        )
        .unwrap(),
    );
    let options = GuardOptions {
        cwd: project.path().to_path_buf(),
        home: Some(home.path().to_path_buf()),
        ..GuardOptions::default()
    };
    let guard = Guard::new(&settings, &options).unwrap();
    let spec = guard.sandbox_spec(Confinement::READ_ONLY);
    for place in home_secret_places(home.path()) {
        assert!(spec.secret_places.contains(&place), "{}", place.display());
    }
    assert!(spec.secret_places.contains(&home.path().join(".ssh")));
    assert!(spec.secret_places.contains(&home.path().join("vault")));
}

/// `agentGuard.sandbox.read` of the user's settings reaches the spec with `~` expanded; a relative place names
/// nothing and is left out.
#[test]
fn the_spec_carries_the_places_the_user_adds() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut settings = Settings::new();
    settings
        .add_text(
            r#"{"agentGuard": {"sandbox": {"read": ["~/.config/app", "~", "/srv/data", "relative/dir"]}}}"#,
            &home.path().join(".claude/settings.json"),
            agent_tool_traits::Source::User,
            project.path(),
        )
        .unwrap();
    let options = GuardOptions {
        cwd: project.path().to_path_buf(),
        home: Some(home.path().to_path_buf()),
        ..GuardOptions::default()
    };
    let guard = Guard::new(&settings, &options).unwrap();
    let spec = guard.sandbox_spec(Confinement::READ_ONLY);
    assert_eq!(
        spec.extra_reads,
        vec![
            home.path().join(".config/app"),
            home.path().to_path_buf(),
            PathBuf::from("/srv/data")
        ]
    );
}
