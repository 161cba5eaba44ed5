//! The hook's `updatedInput` hands the original line to `bash -c` byte for byte, whatever it holds: the coding
//! agent's shell reads the wrapper once, and the line arrives as one argument, never read twice.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use agent_decide::{ProxyReach, SandboxRoot, sandboxed_input};
use agent_tool_traits::Confinement;
use proptest::prelude::*;
use serde_json::json;

/// A stand-in for `agent-guard` that prints the argument after `-- bash -c` as it received it.
fn fake_program(dir: &Path) -> PathBuf {
    let path = dir.join("fake agent-guard's copy");
    std::fs::write(
        &path,
        "#!/bin/sh\nwhile [ \"$1\" != \"--\" ]; do shift; done\nshift 3\nprintf '%s' \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn arrives(program: &Path, line: &str, root: &str) -> String {
    let input = sandboxed_input(
        &json!({"command": line}),
        program,
        Confinement::READ_ONLY,
        SandboxRoot::cwd(root),
        &[],
        ProxyReach::default(),
    )
    .unwrap();
    let wrapped = input["command"].as_str().unwrap();
    // Another test's thread may fork while this one's program is still open for writing, which the child holds
    // until it runs its own program: the kernel then refuses to run this one (`Text file busy`) for that moment.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let output = loop {
        let output = Command::new("bash").arg("-c").arg(wrapped).output().unwrap();
        if output.status.success()
            || !String::from_utf8_lossy(&output.stderr).contains("Text file busy")
            || std::time::Instant::now() > deadline
        {
            break output;
        }
        std::thread::yield_now();
    };
    assert!(output.status.success(), "{wrapped}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn every_quoting_form_arrives_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let program = fake_program(dir.path());
    for line in [
        "echo 'single' \"double $HOME\" `date` $(id) \\$x",
        "printf '%s\\n' $'tab\\there\\x41' \"it's\"",
        "cat <<'EOF'\n'quoted' $NOT `not`\nEOF\necho after",
        "a\nb\r\nc",
        "'",
        "''''",
        "'\\''",
        "\\",
        "",
        "echo ünïcödé 🦀",
    ] {
        assert_eq!(arrives(&program, line, "/tmp/a root's dir"), line);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_line_arrives_unchanged(line in "[^\\x00]{0,80}", root in "/[^\\x00]{0,20}") {
        let dir = tempfile::tempdir().unwrap();
        let program = fake_program(dir.path());
        prop_assert_eq!(arrives(&program, &line, &root), line);
    }
}

/// The hosts a decision allowed beyond the settings' own reach the sandbox as `--allow-domain`, only with the
/// network, each one word.
#[test]
fn allowed_domains_are_passed_with_the_network_only() {
    let program = Path::new("/opt/agent guard/bin/agent-guard");
    let domains = ["docs.example.com".to_owned(), "api.example.org".to_owned()];
    let line = |confinement: Confinement| {
        sandboxed_input(
            &json!({"command": "curl -sS https://docs.example.com"}),
            program,
            confinement,
            SandboxRoot::cwd("/p"),
            &[],
            ProxyReach {
                domains: &domains,
                ..ProxyReach::default()
            },
        )
        .unwrap()["command"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let networked = line(Confinement {
        profile: agent_tool_traits::SandboxProfile::WorkspaceWrite,
        network: true,
        git_writes: false,
        undo: false,
        background: false,
    });
    assert!(
        networked.contains(
            " --allow-network --allow-domain 'docs.example.com' --allow-domain 'api.example.org' --root '/p' "
        ),
        "{networked}"
    );
    let offline = line(Confinement {
        profile: agent_tool_traits::SandboxProfile::WorkspaceWrite,
        network: false,
        git_writes: false,
        undo: false,
        background: false,
    });
    assert!(!offline.contains("--allow-domain"), "{offline}");
    assert!(!offline.contains("--git-writes"), "{offline}");
    // git may write the repository only when the confinement says so, and the flag comes before `--`.
    let git = line(Confinement {
        profile: agent_tool_traits::SandboxProfile::WorkspaceWrite,
        network: false,
        git_writes: true,
        undo: false,
        background: false,
    });
    assert!(git.contains(" --git-writes --root '/p' "), "{git}");
}

/// The limit a session's untrusted content sets reaches the sandbox as `--session-domains-only` with the session,
/// its taint and each domain one word (the taint's text holds quotes and backticks), only with the network.
#[test]
fn a_session_limit_is_passed_with_the_network_only() {
    let program = Path::new("/opt/agent-guard");
    let limit = agent_decide::SessionLimit {
        domains: vec!["known.example".to_owned(), "docs.example.com".to_owned()],
        untrusted: agent_rules::TaintMark::new(
            "WebFetch https://attacker.example/it's",
            "fetched a page of `attacker.example`",
        ),
    };
    let line = |network: bool| {
        sandboxed_input(
            &json!({"command": "curl -sS https://docs.example.com"}),
            program,
            Confinement {
                profile: agent_tool_traits::SandboxProfile::WorkspaceWrite,
                network,
                git_writes: false,
                undo: false,
                background: false,
            },
            SandboxRoot::cwd("/p"),
            &[],
            ProxyReach {
                session: Some(("0c1d-s'1", &limit)),
                ..ProxyReach::default()
            },
        )
        .unwrap()["command"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let networked = line(true);
    assert!(
        networked.contains(
            " --allow-network --session-domains-only --session '0c1d-s'\\''1' --session-taint \
             '`WebFetch https://attacker.example/it'\\''s`: fetched a page of `attacker.example`' \
             --session-domain 'known.example' --session-domain 'docs.example.com' --root '/p' "
        ),
        "{networked}"
    );
    assert!(!line(false).contains("--session"), "{}", line(false));
}

/// The project the coding agent declared for its session reaches the sandbox as one word after the working
/// directory, so that the sandbox's roots are the decision's; without one, nothing is added.
#[test]
fn a_declared_project_is_passed_as_one_word() {
    let program = Path::new("/opt/agent-guard");
    let line = |project: Option<&Path>| {
        sandboxed_input(
            &json!({"command": "make"}),
            program,
            Confinement::READ_ONLY,
            SandboxRoot {
                cwd: "/w/mono/pkg",
                project,
                undo_held: &[],
            },
            &[],
            ProxyReach::default(),
        )
        .unwrap()["command"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(
        line(Some(Path::new("/w/mono it's")))
            .contains(" --root '/w/mono/pkg' --project '/w/mono it'\\''s' -- bash -c 'make'"),
        "{}",
        line(Some(Path::new("/w/mono it's")))
    );
    assert!(!line(None).contains("--project"), "{}", line(None));
}
