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
    // `A` and `B` are not known to be harmless in the command's environment.
    assert!(!command.read_only && command.literal);
    assert_eq!(analysis.verdict().decision, Decision::Ask);
    let analysis = guard().analyze("nice -n 5 env -i LC_ALL=C TZ=UTC timeout -s KILL 5 grep -r x src");
    let command = &analysis.commands[0];
    assert_eq!(command.effective(), ["grep", "-r", "x", "src"]);
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
    // The background job outlives the line: its commands are not read-only.
    let background: Vec<bool> = analysis.commands.iter().map(|c| c.read_only).collect();
    assert_eq!(background, [false, false, false, false, false, false, true, true]);
    assert_eq!(analysis.verdict().decision, Decision::Ask, "{analysis:#?}");
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

/// What prints a remote's URL reads the repository's configuration, where a token in the URL would be: the
/// decision's content check then sees the file. A key of a section that holds no credentials reads nothing.
#[test]
fn git_reads_of_the_repository_configuration_are_reads_of_git_config() {
    let reads_of = |line: &str| -> Vec<String> {
        guard()
            .analyze(line)
            .reads
            .iter()
            .map(|r| r.path.clone())
            .collect()
    };
    for line in [
        "git remote get-url origin",
        "git remote -v",
        "git remote show -n origin",
        "git config --get remote.origin.url",
        "git config --local --list",
        "git config remote.origin.url",
    ] {
        assert!(reads_of(line).iter().any(|p| p == ".git/config"), "{line}");
    }
    assert!(
        !reads_of("git config --global --get remote.origin.url")
            .iter()
            .any(|p| p == ".git/config")
    );
    assert!(
        reads_of("git config --local --list")
            .iter()
            .all(|p| !p.contains("gitconfig"))
    );
    assert!(reads_of("git config user.name").is_empty());
    assert!(reads_of("git remote").is_empty());
}

/// A message is an option's value, never an operand: `REV:PATH` would read `feat: …` as the file ` …` of revision
/// `feat` (a long message then failed the file-name length check of a path).
#[test]
fn git_messages_are_values_not_files() {
    let long = "x".repeat(300);
    for line in [
        format!("git commit -m \"feat: {long}\""),
        format!("git commit -am \"fix: {long}\""),
        format!("git commit --message=\"docs: {long}\" -n"),
        format!("git tag -a v1 -m \"release: {long}\""),
        format!("git merge -m \"merge: {long}\" main"),
        format!("git stash push -m \"wip: {long}\""),
        format!("git notes add -m \"note: {long}\""),
    ] {
        let analysis = guard().analyze(&line);
        assert!(analysis.reads.is_empty(), "{line}: {:?}", analysis.reads);
    }
    // A message read from a file is a read of that file; a file in history is still read by name.
    let analysis = guard().analyze("git commit -F msg.txt; git tag -a v2 -F notes.md; git show HEAD:.env");
    let reads: Vec<&str> = analysis.reads.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(reads, vec!["msg.txt", "notes.md", ".env"]);
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

fn reads_of(command: &str) -> Vec<String> {
    guard()
        .analyze(command)
        .reads
        .iter()
        .map(|r| r.path.clone())
        .collect()
}

#[test]
fn a_home_or_working_directory_value_is_read_as_the_path_it_names() {
    for command in [
        "x=~/.ssh/id_rsa; cat $x",
        "x=$HOME/.ssh/id_rsa; cat \"$x\"",
        "x=${HOME}/.ssh/id_rsa; cat $x",
        "d=~; cat $d/.ssh/id_rsa",
        "d=~/.ssh; cat \"$d\"/id_rsa",
        "declare x=~/.ssh/id_rsa; cat $x",
        "local x=~/.ssh/id_rsa; cat $x",
        "x=\"$HOME\"; cat $x/.ssh/id_rsa",
    ] {
        assert_eq!(reads_of(command), vec!["~/.ssh/id_rsa"], "{command}");
        assert_eq!(
            guard().analyze(command).verdict().decision,
            Decision::Allow,
            "{command}"
        );
    }
    // Exported, `x` reaches later commands' environment, where it is not known to be harmless.
    let command = "export x=~/.ssh/id_rsa; cat $x";
    assert_eq!(reads_of(command), vec!["~/.ssh/id_rsa"], "{command}");
    assert_eq!(guard().analyze(command).verdict().decision, Decision::Ask);
    assert_eq!(reads_of("x=$PWD/src; cat $x/lib.rs"), vec!["./src/lib.rs"]);
    assert_eq!(reads_of("h=$HOME; cat \"$h\""), vec!["~"]);
    // A line that sets `PWD` changes what `$PWD` expands to, not the working directory.
    assert_eq!(
        reads_of("PWD=/etc; cat $PWD/shadow"),
        vec!["/etc/shadow", "./shadow"]
    );
    // Quoted, the `~` is text: a file named `~` in the working directory.
    assert_eq!(reads_of("x='~/.ssh/id_rsa'; cat $x"), vec!["./~/.ssh/id_rsa"]);
    assert_eq!(reads_of("export x=\"~/p\"; cat $x"), vec!["./~/p"]);
    // `${PWD}x` and `${HOME}x` are siblings of those directories, not files in them.
    for command in [
        "cat ${PWD}.bak/x",
        "d=~; cat ${d}x",
        "cat ${HOME}x",
        "x=a:~/p; cat ${x#a:}",
    ] {
        let analysis = guard().analyze(command);
        assert!(analysis.reads.is_empty(), "{command}: {:?}", analysis.reads);
        assert_eq!(analysis.verdict().decision, Decision::Ask, "{command}");
    }
}

#[test]
fn a_file_named_only_at_run_time_asks() {
    for (command, word) in [
        ("cat $(echo /etc/shadow)", "$(echo /etc/shadow)"),
        ("cat `echo /etc/shadow`", "`echo /etc/shadow`"),
        ("cat $f", "$f"),
        ("cat $OLDPWD/x", "$OLDPWD/x"),
        ("cat \"$1\"", "$1"),
        ("cat \"$@\"", "$@"),
        ("cat < $f", "$f"),
        ("read f; cat \"$f\"", "$f"),
        ("f=a.txt; cat \"$f$g\"", "$f$g"),
        ("cat $f; f=a.txt", "$f"),
        ("x=README.md; cat ${x/README.md//etc/shadow}", "$x"),
        ("git -C \"$d\" status", "$d"),
        ("grep -f \"$f\" x a.txt", "$f"),
        ("grep --file=$f x a.txt", "$f"),
        ("for f in $(ls); do cat \"$f\"; done", "$f"),
        ("a=($(ls)); cat \"${a[@]}\"", "$a"),
        ("find . -exec cat {}/../../x \\;", "{}/../../x"),
    ] {
        let analysis = guard().analyze(command);
        let reason =
            format!("reads a file named only at run time (`{word}`), which the path check cannot see");
        assert!(
            analysis
                .findings
                .iter()
                .any(|f| f.decision == Decision::Ask && f.reason == reason),
            "{command}: {:?}",
            analysis.findings
        );
    }
    // Brace expansions past the enumeration limit: none of the words' text is known.
    let many: Vec<String> = (0..300).map(|n| format!("a{n}")).collect();
    let analysis = guard().analyze(&format!("f=x; cat {{/etc/shadow,{}}}$f", many.join(",")));
    assert!(analysis.reads.is_empty(), "{:?}", analysis.reads);
    assert_eq!(analysis.verdict().decision, Decision::Ask);
    let analysis = guard().analyze("sort -o \"$out\" a.txt");
    assert!(
        analysis
            .findings
            .iter()
            .any(|f| f.reason.starts_with("writes a file named only at run time"))
    );
    // A substitution of a command that prints the files it finds names files below its starting points: a
    // recursive read there, which the caller checks (`git ls-files` prints the tracked files below `.`).
    let analysis = guard().analyze("wc -l $(git ls-files)");
    assert_eq!(
        analysis.reads.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(),
        ["."]
    );
    assert!(analysis.commands[0].recursive && analysis.commands[0].reads_hidden);
    // `ls` prints the names of the working directory's entries (not the hidden ones without `-a`): the same read.
    let analysis = guard().analyze("wc -l $(ls)");
    assert_eq!(
        analysis.reads.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(),
        ["."]
    );
    assert!(analysis.commands[0].recursive && !analysis.commands[0].reads_hidden);
    assert!(guard().analyze("wc -l $(ls -a)").commands[0].reads_hidden);
    // A long listing prints more than names (where links lead): the files are only known at run time.
    let analysis = guard().analyze("wc -l $(ls -l)");
    assert_eq!(analysis.verdict().decision, Decision::Ask);
    // Words that are not files stay as they are.
    for command in [
        "echo $f",
        "printf '%s\\n' \"$x\"",
        "grep \"$pattern\" a.txt",
        "test -n \"$x\"",
        "head -n \"$n\" a.txt",
        "find . -name '*.rs' -exec wc -l {} +",
        "diff <(sort a.txt) <(sort b.txt)",
    ] {
        assert_eq!(
            guard().analyze(command).verdict().decision,
            Decision::Allow,
            "{command}"
        );
    }
}

#[test]
fn words_of_known_values_are_read_as_every_path_they_make() {
    assert_eq!(
        reads_of("a=(README.md Cargo.toml); cat \"${a[@]}\""),
        vec!["README.md", "Cargo.toml"]
    );
    assert_eq!(reads_of("d=src; f=lib.rs; cat \"$d/$f\""), vec!["src/lib.rs"]);
    assert_eq!(reads_of("for f in *.py; do wc -l \"$f\"; done"), vec!["*.py"]);
    assert_eq!(
        reads_of("for f in ~/.ssh/*; do cat \"$f\"; done"),
        vec!["~/.ssh/*"]
    );
    assert_eq!(reads_of("f='a b.txt'; cat $f"), vec!["a", "b.txt", "a b.txt"]);
    assert_eq!(reads_of("f='a b.txt'; cat \"$f\""), vec!["a b.txt"]);
    assert_eq!(reads_of("f=README.md; cat < \"$f\""), vec!["README.md"]);
    let analysis = guard().analyze("f=/dev/sda; cat a.txt > $f");
    assert_eq!(analysis.verdict().decision, Decision::Deny);
}

#[test]
fn mktemp_creates_a_file_unless_it_only_prints_a_name() {
    for (command, path) in [
        ("mktemp", None),
        ("mktemp -d", None),
        ("mktemp -t x.XXXX", None),
        ("mktemp build.XXXX", Some("build.XXXX")),
        ("mktemp -p out x.XXXX", Some("out/x.XXXX")),
        ("mktemp --tmpdir=/var/tmp", Some("/var/tmp/tmp.XXXXXXXXXX")),
    ] {
        let analysis = guard().analyze(command);
        let writes: Vec<&str> = analysis.writes.iter().map(|w| w.path.as_str()).collect();
        assert_eq!(writes, Vec::from_iter(path), "{command}");
        assert!(!analysis.commands[0].read_only, "{command}");
        assert_eq!(analysis.commands[0].class, CommandClass::Write, "{command}");
        assert_eq!(analysis.verdict().decision, Decision::Ask, "{command}");
    }
    for command in ["mktemp -u", "mktemp --dry-run x.XXXX", "mktemp -du"] {
        let analysis = guard().analyze(command);
        assert!(analysis.writes.is_empty(), "{command}");
        assert_eq!(analysis.verdict().decision, Decision::Allow, "{command}");
    }
}

#[test]
fn git_writes_the_places_it_makes_working_trees_repositories_and_files_at() {
    for (command, paths) in [
        ("git worktree add ../wt", &["../wt"][..]),
        ("git worktree add -b feature /tmp/wt main", &["/tmp/wt"]),
        ("git worktree move wt /tmp/x", &["wt", "/tmp/x"]),
        ("git worktree remove --force /tmp/wt", &["/tmp/wt"]),
        ("git clone -b main . ../copy", &["../copy"]),
        ("git init /tmp/repo", &["/tmp/repo"]),
        ("git bundle create /tmp/all.bundle HEAD", &["/tmp/all.bundle"]),
        ("git format-patch -o /tmp/patches HEAD~2", &["/tmp/patches"]),
        ("git archive -o /tmp/src.tar HEAD", &["/tmp/src.tar"]),
    ] {
        let analysis = guard().analyze(command);
        let writes: Vec<&str> = analysis.writes.iter().map(|w| w.path.as_str()).collect();
        assert_eq!(writes, paths, "{command}");
    }
    // What they make in the working directory, and the sub-commands that only read or keep to `.git`.
    for command in [
        "git worktree list",
        "git worktree prune",
        "git worktree lock wt",
        "git clone https://example.com/r.git",
        "git init",
        "git bundle verify all.bundle",
        "git format-patch HEAD~2",
        "git archive --format=zip HEAD",
    ] {
        let analysis = guard().analyze(command);
        assert!(analysis.writes.is_empty(), "{command}: {:?}", analysis.writes);
    }
}

#[test]
fn archivers_write_the_directory_they_extract_to() {
    for (command, place) in [
        ("unzip archive.zip -d /etc/", "/etc/"),
        ("unzip -d /opt/x archive.zip", "/opt/x"),
        ("7z x archive.7z -o/usr/bin/", "/usr/bin/"),
        ("7z x -pSECRET archive.7z -w/var/tmp", "/var/tmp"),
    ] {
        let analysis = guard().analyze(command);
        let writes: Vec<&str> = analysis.writes.iter().map(|w| w.path.as_str()).collect();
        assert!(writes.contains(&place), "{command}: {writes:?}");
    }
    // A password is not a place.
    let analysis = guard().analyze("7z x -popen archive.7z");
    assert!(
        analysis.writes.iter().all(|w| w.path != "pen"),
        "{:?}",
        analysis.writes
    );
}

#[test]
fn openssl_reads_and_writes_the_files_its_options_name() {
    let access = |command: &str| {
        let analysis = guard().analyze(command);
        let reads: Vec<String> = analysis.reads.iter().map(|r| r.path.clone()).collect();
        let writes: Vec<String> = analysis.writes.iter().map(|w| w.path.clone()).collect();
        (reads, writes)
    };
    assert_eq!(
        access("openssl rsa -in ~/.ssh/id_rsa -text"),
        (vec!["~/.ssh/id_rsa".to_owned()], vec![])
    );
    assert_eq!(
        access("openssl enc -aes256 -in a.txt -out /tmp/x -passin file:pass.txt"),
        (
            vec!["a.txt".to_owned(), "pass.txt".to_owned()],
            vec!["/tmp/x".to_owned()]
        )
    );
    assert_eq!(
        access("openssl req -new -key k.pem -keyout new.pem -out req.csr"),
        (
            vec!["k.pem".to_owned()],
            vec!["new.pem".to_owned(), "req.csr".to_owned()]
        )
    );
    assert_eq!(access("openssl rand -hex 16"), (vec![], vec![]));
}

#[test]
fn git_checkout_of_files_from_a_commit_discards_their_changes() {
    let contained = |line: &str| {
        guard()
            .analyze(line)
            .commands
            .iter()
            .all(|c| c.effect.contained())
    };
    for line in [
        "git checkout main file.txt",
        "git checkout HEAD~1 src/lib.rs src/main.rs",
        "git checkout HEAD --pathspec-from-file=paths.txt",
        "git checkout -- file.txt",
    ] {
        assert!(!contained(line), "{line}");
    }
    // A branch switched to, or a new branch at a start point: git refuses to overwrite changes.
    for line in [
        "git checkout main",
        "git checkout -b feature origin/main",
        "git checkout -B feature",
        "git checkout --orphan pages",
    ] {
        assert!(contained(line), "{line}");
    }
}

#[test]
fn git_config_writes_the_file_it_changes() {
    let writes = |line: &str| -> Vec<String> {
        guard()
            .analyze(line)
            .writes
            .iter()
            .map(|w| w.path.clone())
            .collect()
    };
    assert_eq!(
        writes("git config --global core.hooksPath hooks"),
        ["~/.gitconfig"]
    );
    assert_eq!(writes("git config --system core.editor vim"), ["/etc/gitconfig"]);
    assert_eq!(writes("git config --file /tmp/cfg a.b c"), ["/tmp/cfg"]);
    assert_eq!(
        writes("git config -f .gitmodules submodule.x.url y"),
        [".gitmodules"]
    );
    // Reading, or the repository's own file (which the sandbox keeps from git).
    for line in [
        "git config --global --get user.name",
        "git config --global --list",
        "git config user.name x",
    ] {
        assert!(writes(line).is_empty(), "{line}");
    }
}

#[test]
fn rm_without_an_operand_removes_no_tree() {
    let contained = |line: &str| {
        guard()
            .analyze(line)
            .commands
            .iter()
            .all(|c| c.effect.contained())
    };
    assert!(contained("rm -rf"));
    assert!(contained("rm -rf 123>/dev/null"));
    assert!(!contained("rm -rf build"));
    assert!(!contained("rm -rf \"$DIR\""));
    assert!(!contained("rm $FILES"));
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
    // Blocked, the network is a caution: an ask that names what blocks it, never a deny.
    let blocked = guard().analyze("curl -s https://example.com");
    assert_eq!(blocked.verdict().decision, Decision::Ask);
    assert!(
        blocked
            .findings
            .iter()
            .any(|f| f.caution && f.reason.contains("blockNetwork")),
        "{:?}",
        blocked.findings
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

#[test]
fn searches_that_read_below_their_directories_are_marked_recursive() {
    let recursive = |line: &str| -> Vec<bool> {
        guard()
            .analyze(line)
            .commands
            .iter()
            .map(|c| c.recursive)
            .collect()
    };
    assert_eq!(recursive("grep -rn KEY . | head"), [true, false]);
    assert_eq!(recursive("grep -Rl KEY src"), [true]);
    assert_eq!(recursive("grep --recursive KEY"), [true]);
    assert_eq!(recursive("grep --directories=recurse KEY ."), [true]);
    assert_eq!(recursive("grep -n KEY a.txt"), [false]);
    assert_eq!(recursive("rg KEY"), [true]);
    assert_eq!(
        recursive("diff -u a b"),
        [true],
        "a directory operand is compared file by file"
    );
    assert_eq!(recursive("timeout 5 rg -n KEY src"), [true], "through a wrapper");
    assert_eq!(
        recursive("cat a; ls -R"),
        [false, false],
        "names and single files are not searches"
    );
    // ripgrep skips hidden files unless told otherwise; grep and diff read them.
    let hidden = |line: &str| guard().analyze(line).commands[0].reads_hidden;
    assert!(hidden("grep -r KEY .") && hidden("diff -r a b"));
    assert!(!hidden("rg KEY") && !hidden("grep KEY a.txt"));
}

#[test]
fn a_file_type_or_glob_limits_a_search_to_the_files_it_names() {
    let reach = |line: &str| {
        let analysis = guard().analyze(line);
        let command = &analysis.commands[0];
        (command.reads_hidden, command.names.clone())
    };
    // A type or glob whitelists its files, hidden ones included, and leaves out the others.
    assert_eq!(reach("rg -t rust 'pub fn'"), (true, vec!["*.rs".to_owned()]));
    assert_eq!(
        reach("rg --type=py -n TODO src"),
        (true, vec!["{*.py,*.pyi}".to_owned()])
    );
    assert_eq!(
        reach("rg -trust -g '**/*.toml' x"),
        (true, vec!["{*.rs,*.toml}".to_owned()])
    );
    // Exclusions alone whitelist nothing: hidden files stay skipped.
    assert_eq!(reach("rg -g '!*.md' KEY"), (false, Vec::new()));
    // What may name any file reads every file, hidden ones included.
    for line in [
        "rg -t sh KEY",
        "rg -t mystery KEY",
        "rg --type-add 'rust:*.env' -t rust KEY",
        "rg -t rust --type-clear rust KEY",
        "rg -g 'config/**' KEY",
        "rg -g \"$G\" KEY",
    ] {
        let (hidden, names) = reach(line);
        assert!(hidden && names.is_empty(), "{line}: {names:?}");
    }
    assert_eq!(reach("rg -g '.env*' KEY"), (true, vec![".env*".to_owned()]));
    assert_eq!(reach("rg -uu -t rust KEY"), (true, vec!["*.rs".to_owned()]));
}

fn loads_of(command: &str) -> Vec<String> {
    guard()
        .analyze(command)
        .loads
        .iter()
        .map(|load| load.path.clone())
        .collect()
}

#[test]
fn project_files_are_looked_for_in_the_directories_above_the_place_the_command_works_in() {
    // A file name that holds a directory (`.cargo/config.toml`) is looked for whole: never as `config.toml` or
    // `config` at the top of the project.
    let loads = loads_of("cargo --version");
    assert!(loads.contains(&".cargo/config.toml".to_owned()));
    assert!(loads.contains(&".cargo/config".to_owned()));
    assert!(loads.contains(&"rust-toolchain.toml".to_owned()));
    assert!(
        !loads.iter().any(|l| l == "config" || l == "config.toml"),
        "{loads:?}"
    );
    let loads = loads_of("cargo --manifest-path crates/a/Cargo.toml metadata --offline");
    for expected in [
        "crates/a/.cargo/config.toml",
        "crates/.cargo/config.toml",
        ".cargo/config.toml",
        "crates/a/rust-toolchain.toml",
        "rust-toolchain.toml",
    ] {
        assert!(loads.contains(&expected.to_owned()), "{expected} in {loads:?}");
    }
    assert!(
        !loads
            .iter()
            .any(|l| l.ends_with("/config.toml") && !l.ends_with(".cargo/config.toml"))
    );
    let loads = loads_of("cargo -C /srv/app metadata --offline");
    assert!(loads.contains(&"/srv/app/.cargo/config.toml".to_owned()));
    assert!(loads.contains(&"/srv/.cargo/config.toml".to_owned()));
    assert!(loads.contains(&"/.cargo/config.toml".to_owned()));
    let loads = loads_of("git -C ~/src/app log");
    assert!(loads.contains(&"~/src/app/.git".to_owned()));
    assert!(loads.contains(&"~/.git".to_owned()));
    assert!(!loads.iter().any(|l| l == ".git"), "{loads:?}");
}

/// Which commands are git writing the working tree from a commit other than `HEAD`, where git overwrites ignored
/// files: another commit or branch checked out, reset to, or restored from; not `HEAD` or the index, not a new
/// branch at `HEAD`.
#[test]
fn git_writing_the_working_tree_from_another_commit_is_marked() {
    let marked = |line: &str| {
        guard()
            .analyze(line)
            .commands
            .iter()
            .any(|c| c.overwrites_ignored)
    };
    for line in [
        "git reset --hard HEAD~1",
        "git reset --keep origin/main",
        "git -C sub reset --merge v1",
        "git checkout HEAD~1 -- notes",
        "git checkout main",
        "git checkout -f HEAD~1",
        "git checkout -b topic origin/main",
        "git switch feature",
        "git switch --discard-changes feature",
        "git restore --source=HEAD~1 notes",
        "git restore -s HEAD~1 notes",
        "git restore --sour HEAD~1 notes",
        "git read-tree -u -m HEAD other",
        "git reset --hard $REV",
        "find . -maxdepth 0 -exec git checkout main \\;",
        "git reset HEAD~1",
        "git reset feat && git checkout -- .",
        "git reset -q feat -- notes",
        "git checkout --force feat",
        "git merge --no-edit feat",
        "git pull --no-rebase . feat",
        "git rebase --autostash feat",
        "git cherry-pick feat",
        "git revert HEAD",
        "git am patch.mbox",
        "git bisect start A B",
        "git checkout-index -a -f",
        "git stash pop",
        "git stash apply stash@{1}",
        "git reset --soft --hard HEAD~1",
        "git reset --soft $MODE HEAD~1",
        "git reset HEAD~1 src/main.rs",
    ] {
        assert!(marked(line), "{line}");
    }
    for line in [
        "git reset --hard",
        "git reset --hard HEAD",
        "git reset",
        "git reset -- src/main.rs",
        "git reset --soft HEAD~1",
        "git reset --hard --soft HEAD~1",
        "git reset HEAD src/main.rs",
        "git reset -q @ src/main.rs notes",
        "git stash",
        "git stash list",
        "git checkout -- .",
        "git checkout .",
        "git checkout -b topic",
        "git switch -c topic",
        "git restore src/main.rs",
        "git restore --staged src/main.rs",
        "git status",
    ] {
        assert!(!marked(line), "{line}");
    }
}

/// Which commands are git writing a repository by itself: git sub-commands that are not read-only, wherever the
/// analysis sees them; never a build, a script or git that runs a program the line names or sets.
#[test]
fn git_writes_are_git_alone_writing_the_repository() {
    let writes = |line: &str| -> Vec<(String, bool)> {
        guard()
            .analyze(line)
            .commands
            .iter()
            .map(|c| (c.effective().join(" "), c.git_writes))
            .collect()
    };
    let only = |line: &str| writes(line).iter().any(|(_, w)| *w);
    for line in [
        "git add -A",
        "git commit -m \"$(printf 'feat: x')\"",
        "git checkout -b topic",
        "git stash pop",
        "git reset --hard HEAD~1",
        "git -C sub merge --ff-only main",
        "git -c user.name=a -c user.email=a@b commit -m x",
        "git fetch origin",
        "timeout 60 git rebase main",
        "bash -c 'git commit -qam x'",
        "find . -name '*.rs' -exec git add {} +",
        "git reflog expire --expire=now --all",
        "git add $FILES",
        "git commit -m x $FLAGS",
    ] {
        assert!(only(line), "{line}: {:?}", writes(line));
    }
    for line in [
        "git status",
        "git log -p",
        "make",
        "npm test",
        "./scripts/commit.sh",
        "bash -c \"$X\"",
        "git $SUB",
        "git rebase $OPTS main",
        "git fetch $ARGS",
        "git rebase -x 'make test' main",
        "git rebase --exec=make main",
        "git bisect run make",
        "git submodule foreach 'rm -rf .git'",
        "git -c core.hooksPath=hooks commit -m x",
        "git -c \"$KEY\" commit -m x",
        "git --exec-path=./bin commit -m x",
        "git filter-branch --tree-filter 'rm x' HEAD",
        // An environment set for git, by a prefix, a wrapper or earlier in the line, may name what it runs.
        "GIT_EDITOR='rm -rf .git/objects; true' git commit --allow-empty -e -m x",
        "EDITOR=./x git commit -e",
        "env GIT_EDITOR=./x git commit -e",
        "timeout 10 env EDITOR=./x git commit -e",
        "GIT_SEQUENCE_EDITOR=./x git rebase -i HEAD~1",
        "GIT_EXEC_PATH=$PWD/ev git commit -m x",
        "GIT_DIR=sub git commit -m x",
        "export GIT_EDITOR=./x; git commit -e",
        "set -a; EDITOR=./x; git commit -e",
        // Another git directory, whose configuration the line does not see.
        "git --git-dir=sub commit --allow-empty -m x",
    ] {
        assert!(!only(line), "{line}: {:?}", writes(line));
    }
    // A mixed line: the git command writes, the build beside it does not (the line as a whole gets git writes).
    assert_eq!(
        writes("git add -A && make"),
        vec![("git add -A".to_owned(), true), ("make".to_owned(), false)]
    );
}

/// The files of this machine a container engine's line names, as `(path, read, written)`.
fn engine_files(command: &str) -> Vec<(String, bool, bool)> {
    let analysis = guard().analyze(command);
    let mut files: Vec<(String, bool, bool)> = Vec::new();
    for (access, written) in [(&analysis.reads, false), (&analysis.writes, true)] {
        for file in access {
            match files.iter_mut().find(|(path, _, _)| *path == file.path) {
                Some(entry) if written => entry.2 = true,
                Some(entry) => entry.1 = true,
                None => files.push((file.path.clone(), !written, written)),
            }
        }
    }
    files
}

#[test]
fn a_container_engine_names_the_places_it_mounts_not_the_container_s_paths() {
    // A bind mount's source is read whole, and written unless mounted read-only; the container's own command
    // (`cat /k/id_rsa`) names the container's paths, not this machine's.
    assert_eq!(
        engine_files("docker run -v ~/.ssh:/k alpine cat /k/id_rsa"),
        [("~/.ssh".to_owned(), true, true)]
    );
    assert_eq!(
        engine_files("docker run --rm -it -v \"$HOME/.aws:/root/.aws:ro\" amazon/aws-cli s3 ls"),
        [("~/.aws".to_owned(), true, false)]
    );
    assert_eq!(
        engine_files("podman run --mount type=bind,source=/etc,target=/e,readonly alpine ls /e"),
        [("/etc".to_owned(), true, false)]
    );
    // Short options in a cluster, the last taking the rest of the word or the next one.
    assert_eq!(
        engine_files("docker run -itv/srv:/srv alpine sh"),
        [("/srv".to_owned(), true, true)]
    );
    assert_eq!(
        engine_files("docker run -dv ./data:/data nginx"),
        [("./data".to_owned(), true, true)]
    );
    // An option the table does not know is read as taking a value, so a mount after it is still seen.
    assert_eq!(
        engine_files("docker run --name web --network host -v /:/host alpine"),
        [("/".to_owned(), true, true)]
    );
    // A named volume, an anonymous one and a tmpfs are not places of this machine.
    for line in [
        "docker run -v data:/data alpine",
        "docker run -v /data alpine",
        "docker run --mount type=tmpfs,target=/t alpine",
        "docker ps -a",
        "docker compose logs -f web",
        "docker exec -it web cat /etc/passwd",
    ] {
        assert_eq!(engine_files(line), [], "{line}");
    }
    // Files handed to the engine: env files, compose files, a Dockerfile and the build context, `cp`'s side here.
    assert_eq!(
        engine_files("docker compose -f ../ops/compose.yml --env-file .env.prod up -d"),
        [
            ("../ops/compose.yml".to_owned(), true, false),
            (".env.prod".to_owned(), true, false)
        ]
    );
    assert_eq!(
        engine_files("docker build -f docker/Dockerfile --secret id=npm,src=/home/u/.npmrc -t app ."),
        [
            ("docker/Dockerfile".to_owned(), true, false),
            ("/home/u/.npmrc".to_owned(), true, false),
            (".".to_owned(), true, false)
        ]
    );
    // A place only known at run time inside a value is not a file the analysis can check: the line asks.
    for line in [
        "docker build --secret id=npm,src=$HOME/.npmrc .",
        "docker run -v $DATA/x:/x alpine",
        "docker run --mount type=bind,src=$DIR,dst=/d alpine",
    ] {
        let analysis = guard().analyze(line);
        assert!(
            analysis
                .findings
                .iter()
                .any(|f| f.decision == Decision::Ask && f.reason.contains("named only at run time")),
            "{line}: {:?}",
            analysis.findings
        );
        assert!(
            engine_files(line)
                .iter()
                .all(|(path, _, _)| !path.contains("src=")),
            "{line}"
        );
    }
    assert_eq!(
        engine_files("docker cp web:/var/log/app.log ./logs/"),
        [("./logs/".to_owned(), false, true)]
    );
    assert_eq!(
        engine_files("docker container cp ./conf web:/etc/app"),
        [("./conf".to_owned(), true, false)]
    );
    assert_eq!(
        engine_files("docker-compose run --rm -v /var/run/docker.sock:/s app sh"),
        [("/var/run/docker.sock".to_owned(), true, true)]
    );
}

#[test]
fn commands_handed_to_a_service_of_the_machine_are_not_contained() {
    let contained = |line: &str| -> bool {
        guard()
            .analyze(line)
            .commands
            .iter()
            .all(|c| c.effect.contained())
    };
    for line in [
        "crontab -r",
        "echo '* * * * * make' | crontab -",
        "echo make | at now + 5 minutes",
        "systemd-run --user ./backup.sh",
        "systemctl --user enable --now backup.timer",
        "systemctl restart nginx",
        "service nginx reload",
    ] {
        assert!(!contained(line), "{line}");
    }
    // Reading a service's state changes nothing.
    for line in [
        "systemctl --user status backup.timer",
        "systemctl list-timers",
        "systemctl",
    ] {
        assert!(contained(line), "{line}");
    }
}

#[test]
fn the_tools_no_sandbox_can_contain_are_marked() {
    let unconfinable = |line: &str| -> Vec<bool> {
        guard()
            .analyze(line)
            .commands
            .iter()
            .map(|c| c.unconfinable)
            .collect()
    };
    assert_eq!(unconfinable("docker ps | grep web"), [true, false]);
    assert_eq!(unconfinable("kubectl get pods && aws s3 ls"), [true, true]);
    assert_eq!(unconfinable("terraform plan -out=plan.tfplan"), [true]);
    // Run by another program (which may add words), nested, or fed on its standard input by the line: inside.
    assert_eq!(unconfinable("timeout 30 terraform plan"), [false]);
    assert_eq!(unconfinable("cat a | xargs docker run"), [false, false]);
    assert_eq!(unconfinable("echo x | terraform console"), [false, false]);
    assert_eq!(unconfinable("ssh host < f"), [false]);
    assert_eq!(unconfinable("(docker ps)"), [false]);
    // A word the shell produces, an option or sub-command not in the program's grammar: inside.
    assert_eq!(unconfinable("docker run alpine echo ~/*"), [false]);
    assert_eq!(unconfinable("ssh -o ProxyCommand=x host"), [false]);
    assert_eq!(unconfinable("kubectl get pods --log-file=x"), [false]);
    assert_eq!(unconfinable("kubectl create secret generic x"), [false]);
    let confined = guard().analyze("ssh -o LocalCommand=x host").commands[0]
        .confined
        .clone();
    assert!(confined.is_some_and(|why| why.contains("LocalCommand")));
    // A cloud tool's credential groups are understood only to list what they hold: every other verb may
    // print or change a credential.
    let confined = |line: &str| guard().analyze(line).commands[0].confined.clone();
    for listing in [
        "doctl auth list",
        "gcloud auth list",
        "aws configure list --profile dev",
        "az account list",
    ] {
        assert_eq!(confined(listing), None, "{listing}");
        assert_eq!(unconfinable(listing), [true], "{listing}");
    }
    for credential in [
        "doctl auth init",
        "gcloud auth print-access-token",
        "aws configure get aws_secret_access_key",
        "az account get-access-token",
        "gcloud auth list --format=json && gcloud auth login",
        "aws list configure",
    ] {
        assert!(
            confined(credential).is_some()
                || guard()
                    .analyze(credential)
                    .commands
                    .iter()
                    .any(|c| c.confined.is_some()),
            "{credential}"
        );
    }
    // Publishing and git push change another system but run inside the sandbox (and run the project's code).
    assert_eq!(unconfinable("npm publish"), [false]);
    assert_eq!(unconfinable("git push origin main"), [false]);
    // A line that changes the command's environment, or hides an option from the analysis, keeps it inside.
    assert_eq!(unconfinable("DOCKER_HOST=tcp://x:2375 docker ps"), [false]);
    assert_eq!(unconfinable("env LD_PRELOAD=./x.so kubectl get pods"), [false]);
    assert_eq!(unconfinable("docker run $FLAGS alpine"), [false]);
}

#[test]
fn the_variables_of_the_environment_a_line_expands_are_listed() {
    let analysis = guard().analyze("X=1; echo \"$HOME\" $X; cat <<EOF\n$DEPLOY_KEY\nEOF\necho ${HOME}");
    assert_eq!(analysis.environment, ["HOME", "DEPLOY_KEY"]);
    assert!(
        guard()
            .analyze("docker ps --format '{{.Names}}'")
            .environment
            .is_empty()
    );
}

/// The git directory `git init` or `git clone` makes under a name it is given, as written (below `-C`'s
/// directory); none where it is the working tree's `.git`.
#[test]
fn the_git_directory_a_git_command_makes_under_its_given_name() {
    let made = |line: &str| {
        guard()
            .analyze(line)
            .commands
            .first()
            .and_then(|c| c.git_dir_made.clone())
    };
    for (line, dir) in [
        ("git init -q --bare --initial-branch=main docs", "docs"),
        ("git init --bare -b main evil", "evil"),
        ("git init --bare", "."),
        ("git -C sub init --bare x", "sub/x"),
        ("git init --separate-git-dir meta work", "meta"),
        ("git init --separate-git-dir=meta", "meta"),
        ("git --git-dir=meta init", "meta"),
        ("/usr/bin/git --git-dir meta init", "meta"),
        ("git clone --bare https://h/o/r.git", "r.git"),
        ("git clone --mirror -b main ../up.git/ m", "m"),
        ("git clone --bare git@h:r", "r.git"),
        ("git clone --separate-git-dir g https://h/r", "g"),
    ] {
        assert_eq!(made(line).as_deref(), Some(dir), "{line}");
    }
    for line in [
        "git init sub",
        "git clone https://h/o/r.git",
        "git status",
        "gitk --bare x",
        "git --git-dir=m log",
    ] {
        assert_eq!(made(line), None, "{line}");
    }
}
