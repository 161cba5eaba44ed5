//! The shape of analyses through the public API: argv, inner, locations, parents, files and the depth limit.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use agent_bash_guard::{AccessVia, BashConfig, BashGuard, CommandClass, LocationKind};
use agent_tool_traits::Decision;

fn guard() -> BashGuard {
    BashGuard::new(BashConfig {
        block_network: Some(true),
        ..BashConfig::default()
    })
}

#[test]
fn wrappers_set_inner_and_keep_argv() {
    let analysis = guard().analyze("nice -n 5 env -i A=1 B=2 timeout -s KILL 5 grep -r x src");
    let command = &analysis.commands[0];
    assert_eq!(command.effective(), ["grep", "-r", "x", "src"]);
    assert_eq!(command.argv.len(), 15);
    assert!(command.read_only && command.literal);
    assert_eq!(analysis.verdict().decision, Decision::Allow);
}

#[test]
fn locations_name_the_construct_and_parent() {
    let analysis =
        guard().analyze("ls | (cat a; echo $(date)) && bash -c 'wc -l b' & find . -exec grep -l x {} +");
    let kinds: Vec<(&str, LocationKind, Option<usize>)> = analysis
        .commands
        .iter()
        .map(|c| (c.argv[0].as_str(), c.location.kind, c.location.parent))
        .collect();
    assert_eq!(
        kinds,
        vec![
            // `&` puts the whole and-or list in the background.
            ("ls", LocationKind::Background, None),
            ("cat", LocationKind::Subshell, None),
            ("echo", LocationKind::Subshell, None),
            ("date", LocationKind::CommandSubstitution, Some(2)),
            ("bash", LocationKind::Background, None),
            ("wc", LocationKind::ShellString, Some(4)),
            ("find", LocationKind::List, None),
            ("grep", LocationKind::FindExec, Some(6)),
        ]
    );
    assert_eq!(analysis.verdict().decision, Decision::Allow, "{analysis:#?}");
}

#[test]
fn reads_and_writes_are_literal_paths() {
    let analysis = guard()
        .analyze("grep -f pats.txt -r src < in.txt > out.txt 2>&1; sort -o s.txt $X; cat ~/.ssh/id_rsa");
    let reads: Vec<(&str, AccessVia)> = analysis.reads.iter().map(|r| (r.path.as_str(), r.via)).collect();
    assert_eq!(
        reads,
        vec![
            ("pats.txt", AccessVia::Flag),
            ("src", AccessVia::Operand),
            ("in.txt", AccessVia::Redirect),
            ("~/.ssh/id_rsa", AccessVia::Operand)
        ]
    );
    let writes: Vec<(&str, AccessVia)> = analysis.writes.iter().map(|w| (w.path.as_str(), w.via)).collect();
    assert_eq!(
        writes,
        vec![("out.txt", AccessVia::Redirect), ("s.txt", AccessVia::Flag)]
    );
    assert!(!analysis.reads[3].literal, "a `~` path is expanded by the shell");
}

#[test]
fn git_reads_the_repository_it_is_pointed_at() {
    let analysis =
        guard().analyze("git -C ../other log; git --git-dir=/srv/repo.git show; git --work-tree /etc status");
    let reads: Vec<&str> = analysis.reads.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(reads, vec!["../other", "/srv/repo.git", "/etc"]);
    assert!(analysis.reads.iter().all(|r| r.via == AccessVia::Flag));
}

#[test]
fn a_variable_naming_a_file_is_read_as_each_value_the_line_gives_it() {
    let analysis = guard().analyze(
        "f=.env; cat $f; d=/etc; grep root \"${d}/passwd\"; for n in a.txt b.txt; do wc -l \"$n\"; done; cat \"$UNSET\"",
    );
    let reads: Vec<&str> = analysis.reads.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(reads, vec![".env", "/etc/passwd", "a.txt", "b.txt"]);
    assert!(analysis.reads.iter().all(|r| !r.literal));
    let analysis = guard().analyze("out=/etc/hosts; sort -o $out list.txt");
    let writes: Vec<&str> = analysis.writes.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(writes, vec!["/etc/hosts"]);
}

#[test]
fn code_past_the_depth_limit_asks() {
    // Each `eval` parses its joined arguments as code, one level deeper.
    let deep = format!("{}rm -rf /", "eval ".repeat(40));
    let verdict = guard().analyze(&deep).verdict();
    assert_eq!(verdict.decision, Decision::Ask);
    assert!(
        verdict.reason().contains("nested more than"),
        "{}",
        verdict.reason()
    );
    let shallow = format!("{}rm -rf /", "eval ".repeat(10));
    assert_eq!(guard().analyze(&shallow).verdict().decision, Decision::Deny);
}

#[test]
fn non_literal_command_words_ask_with_literal_false() {
    for command in [
        "$x -rf /",
        "${x@P}",
        "$(echo rm) x",
        "c${IFS}at f",
        "/???/rm -rf x",
    ] {
        let analysis = guard().analyze(command);
        assert!(!analysis.commands[0].literal, "{command}");
        assert_eq!(analysis.commands[0].class, CommandClass::Unknown, "{command}");
        assert_eq!(analysis.verdict().decision, Decision::Ask, "{command}");
    }
}

#[test]
fn network_setting_and_classes() {
    let open = BashGuard::new(BashConfig {
        block_network: Some(false),
        ..BashConfig::default()
    });
    let analysis = open.analyze("curl -s https://example.com");
    assert_eq!(analysis.commands[0].class, CommandClass::Network);
    assert!(analysis.findings.is_empty());
    assert_eq!(analysis.verdict().decision, Decision::Ask);
    assert!(
        guard()
            .analyze("curl -s https://example.com")
            .verdict()
            .is_denied()
    );
    assert_eq!(
        guard().analyze("python3 x.py").commands[0].class,
        CommandClass::Interpreter
    );
    assert_eq!(
        guard().analyze("npm ci").commands[0].class,
        CommandClass::PackageManager
    );
    assert!(guard().analyze("npm ci").findings.is_empty());
}
