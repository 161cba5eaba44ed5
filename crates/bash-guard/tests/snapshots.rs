//! Snapshots of whole analyses: the commands found, where, their class, files and findings, and the verdict.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use agent_bash_guard::{BashConfig, BashGuard, CommandAnalysis};
use agent_tool_traits::Verdict;
use serde::Serialize;

#[derive(Serialize)]
struct Rendered<'a> {
    command: &'a str,
    analysis: CommandAnalysis,
    verdict: Verdict,
}

fn render(command: &str) -> Rendered<'_> {
    let guard = BashGuard::new(BashConfig {
        block_network: Some(true),
        ..BashConfig::default()
    });
    let analysis = guard.analyze(command);
    let verdict = analysis.verdict();
    Rendered {
        command,
        analysis,
        verdict,
    }
}

#[test]
fn read_only_pipeline() {
    insta::assert_yaml_snapshot!(render(r#"grep -rn "sudo" src/*.rs | sort | head -5 2>/dev/null"#));
}

#[test]
fn wrappers_are_unwrapped() {
    insta::assert_yaml_snapshot!(render("sudo env A=1 timeout 5 rm -rf x"));
}

#[test]
fn substitutions_nest() {
    insta::assert_yaml_snapshot!(render(r#"echo "$(cat a.txt | bash -c 'rm -rf ~')" > out.txt"#));
}

#[test]
fn find_exec_is_a_command() {
    insta::assert_yaml_snapshot!(render(r"find . -name '*.rs' -ex\ec grep -l unsafe {} +"));
}

#[test]
fn hidden_code_asks() {
    insta::assert_yaml_snapshot!(render("sed -n 's/^/id /e' f; git -c core.pager=less log; $cmd"));
}

#[test]
fn parse_error_asks() {
    insta::assert_yaml_snapshot!(render("rm -rf ~\necho 'unterminated"));
}
