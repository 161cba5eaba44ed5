//! What the kernel sandbox grants of the home directory and the environment, for real: a scratch home with
//! credentials under names made up at run time (appearing nowhere in the code) stays unreadable under both
//! profiles, with and without namespaces, as this user and an unprivileged one; tool chains still work (git with
//! the identity of a `~/.gitconfig` whose token the command never sees, python, node, cargo); the environment is
//! passed by allow list; git writes its repository but not its configuration or hooks.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agent-guard");
const NOBODY: u32 = 65_534;

#[path = "../../../tests/support/need.rs"]
mod need;
#[path = "../../../tests/support/scratch.rs"]
mod scratch;

use scratch::{ALNUM, LOWER, chown_all, is_root, random, text};

fn supported() -> bool {
    need::sandbox_report(BIN).is_some()
}

/// A name made up now: hidden or not, with no word any list of secret places could hold.
fn made_up_name(hidden: bool) -> String {
    format!("{}{}", if hidden { "." } else { "" }, random(10, LOWER))
}
/// A scratch home full of credentials under made-up names, a git project beside it.
struct World {
    dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    /// The files planted in the home directory outside every tool chain's place.
    planted: Vec<PathBuf>,
    /// The credential values planted (each a marker the test looks for in the output).
    secrets: Vec<String>,
    owner: Option<u32>,
    namespaces: bool,
}

impl World {
    fn new(owner: Option<u32>, namespaces: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::write(project.join("src/lib.rs"), "pub fn hello() {}\n").unwrap();
        // Realistic formats, random contents: a GitHub token, an AWS key pair, a Stripe key, a wallet seed.
        let github = format!("ghp_{}", random(36, ALNUM));
        let aws = format!("AKIA{}", random(16, b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"));
        let stripe = format!("sk_live_{}", random(24, ALNUM));
        let seed = format!("seed-{}", random(24, LOWER));
        let history = format!("export API_TOKEN={}", random(32, ALNUM));
        let secrets = vec![
            github.clone(),
            aws.clone(),
            stripe.clone(),
            seed.clone(),
            history.clone(),
        ];
        let places = [
            (vec![made_up_name(true)], made_up_name(false), github.clone()),
            (
                Vec::new(),
                made_up_name(true),
                format!("aws_access_key_id = {aws}\n"),
            ),
            (
                vec![".config".to_owned(), made_up_name(false)],
                "config.json".to_owned(),
                stripe,
            ),
            (
                vec!["code".to_owned(), made_up_name(false)],
                ".env".to_owned(),
                seed,
            ),
            (
                vec![".local/share".to_owned(), made_up_name(false)],
                "history".to_owned(),
                history,
            ),
            (vec!["Downloads".to_owned()], made_up_name(false), aws),
        ];
        let mut planted = Vec::new();
        for (dirs, file, content) in places {
            let mut path = home.clone();
            for d in dirs {
                path.push(d);
            }
            std::fs::create_dir_all(&path).unwrap();
            path.push(file);
            std::fs::write(&path, content).unwrap();
            planted.push(path);
        }
        // git's global configuration: an identity and a token in an extra header.
        std::fs::write(
            home.join(".gitconfig"),
            format!(
                "[user]\n\tname = Sandbox Tester\n\temail = tester@example.invalid\n\
                 [http]\n\textraHeader = Authorization: Bearer {github}\n"
            ),
        )
        .unwrap();
        planted.push(home.join(".gitconfig"));
        // A tool chain's cache, which stays readable.
        std::fs::create_dir_all(home.join(".cargo/registry")).unwrap();
        std::fs::write(home.join(".cargo/registry/marker"), "cache-is-readable\n").unwrap();
        let world = Self {
            dir,
            home,
            project,
            planted,
            secrets,
            owner,
            namespaces,
        };
        if let Some(uid) = owner {
            chown_all(world.dir.path(), uid);
        }
        world
    }

    /// `agent-guard sandbox --no-redact` (the kernel's part alone: the output filter would hide a known token
    /// format anyway) with `args`, HOME set to the scratch home, as `owner`.
    fn sandbox(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = Command::new(BIN);
        command
            .args(["sandbox", "--no-redact"])
            .args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .envs(env.iter().copied())
            .stdin(Stdio::null());
        if !self.namespaces {
            command.env("AGENT_GUARD_SANDBOX_NAMESPACES", "off");
        }
        if let Some(uid) = self.owner {
            command.uid(uid).gid(uid);
        }
        command.output().unwrap()
    }

    /// `bash -c line` outside the sandbox, as `owner`, with the scratch home.
    fn outside(&self, line: &str) -> Output {
        let mut command = Command::new("bash");
        command
            .args(["-c", line])
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .stdin(Stdio::null());
        if let Some(uid) = self.owner {
            command.uid(uid).gid(uid);
        }
        command.output().unwrap()
    }

    fn run(&self, profile: &str, line: &str) -> Output {
        self.sandbox(&["--profile", profile, "--", "bash", "-c", line], &[])
    }

    /// `line` under `workspace-write` with git allowed to write the repository (`--git-writes`).
    fn run_git(&self, line: &str) -> Output {
        self.sandbox(
            &[
                "--profile",
                "workspace-write",
                "--git-writes",
                "--",
                "bash",
                "-c",
                line,
            ],
            &[],
        )
    }
}

/// This user and (as root) an unprivileged one, each with namespaces and with Landlock and seccomp alone.
fn worlds() -> Vec<World> {
    let users = if is_root() {
        vec![None, Some(NOBODY)]
    } else {
        vec![None]
    };
    users
        .into_iter()
        .flat_map(|owner| [true, false].map(|namespaces| World::new(owner, namespaces)))
        .collect()
}

fn git(project: &Path, args: &[&str]) {
    // The world may belong to the unprivileged user already.
    let status = Command::new("git")
        .args(["-c", "safe.directory=*"])
        .args(args)
        .current_dir(project)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "setup")
        .env("GIT_AUTHOR_EMAIL", "setup@example.invalid")
        .env("GIT_COMMITTER_NAME", "setup")
        .env("GIT_COMMITTER_EMAIL", "setup@example.invalid")
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

fn has(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Nothing of the home directory outside the tool chains' places can be read, listed or searched, under either
/// profile: files under made-up names, another project's `.env`, downloads, `~/.gitconfig`.
#[test]
fn the_home_directory_is_read_by_allow_list() {
    if !supported() {
        return;
    }
    for world in worlds() {
        let who = (world.owner, world.namespaces);
        let cats: String = world
            .planted
            .iter()
            .map(|p| format!("cat '{}'; ", p.display()))
            .collect();
        let reads = format!("{cats} cat ~/.cargo/registry/marker; cat src/lib.rs; echo done");
        // Listing and searching print names, not contents: a second run, whose output holds no made-up name.
        let listing = "ls -la ~ ~/code ~/.config ~/.local/share ~/Downloads; grep -rs . ~ | head -50; \
                       find ~ | head -50; find ~ -type f | xargs cat; echo done";
        for profile in ["read-only", "workspace-write"] {
            let output = world.run(profile, &reads);
            let all = text(&output);
            assert!(all.contains("done"), "{who:?} {profile}: {all}");
            assert!(all.contains("pub fn hello"), "{who:?} {profile}: {all}");
            assert!(all.contains("cache-is-readable"), "{who:?} {profile}: {all}");
            for secret in &world.secrets {
                assert!(
                    !all.contains(secret.as_str()),
                    "{who:?} {profile} leaked {secret}: {all}"
                );
            }
            let output = world.run(profile, listing);
            let all = text(&output);
            assert!(all.contains("done"), "{who:?} {profile}: {all}");
            for secret in &world.secrets {
                assert!(
                    !all.contains(secret.as_str()),
                    "{who:?} {profile} leaked {secret}: {all}"
                );
            }
            for path in &world.planted {
                for part in path.strip_prefix(&world.home).unwrap().iter() {
                    let part = part.to_string_lossy();
                    if part.trim_start_matches('.').len() == 10 {
                        assert!(
                            !all.contains(part.as_ref()),
                            "{who:?} {profile} listed {part}: {all}"
                        );
                    }
                }
            }
        }
    }
}

/// `agentGuard.sandbox.read` in the user's settings adds places of the home directory; the credential places
/// inside them stay hidden, with and without namespaces.
#[test]
fn a_place_the_user_adds_is_read() {
    if !supported() {
        return;
    }
    for namespaces in [true, false] {
        let world = World::new(None, namespaces);
        std::fs::create_dir_all(world.home.join("tools")).unwrap();
        std::fs::write(world.home.join("tools/readme"), "tools-are-readable\n").unwrap();
        std::fs::create_dir_all(world.home.join(".config/gh")).unwrap();
        std::fs::create_dir_all(world.home.join(".config/app")).unwrap();
        std::fs::write(world.home.join(".config/app/settings"), "app-is-readable\n").unwrap();
        let token = format!("gho_{}", random(36, ALNUM));
        std::fs::write(
            world.home.join(".config/gh/hosts.yml"),
            format!("oauth_token: {token}\n"),
        )
        .unwrap();
        std::fs::create_dir_all(world.home.join(".claude")).unwrap();
        std::fs::write(
            world.home.join(".claude/settings.json"),
            r#"{"agentGuard": {"sandbox": {"read": ["~/tools", "~/.config"]}}}"#,
        )
        .unwrap();
        let output = world.run(
            "read-only",
            "cat ~/tools/readme ~/.config/app/settings; cat ~/.config/gh/hosts.yml; ls ~; echo done",
        );
        let all = text(&output);
        assert!(
            all.contains("tools-are-readable") && all.contains("app-is-readable"),
            "{all}"
        );
        assert!(
            !all.contains(&token),
            "{namespaces}: a credential place inside an added place: {all}"
        );
        assert!(
            all.contains("cannot open directory"),
            "the rest stays unlisted: {all}"
        );
    }
}

/// Tool chains work in the scratch home: git commits with the identity of `~/.gitconfig` and never sees its
/// token, python imports its standard library, node starts, cargo builds a crate offline.
#[test]
fn tool_chains_work_without_the_home_directory() {
    if !supported() {
        return;
    }
    for world in worlds() {
        let who = (world.owner, world.namespaces);
        git(&world.project, &["init", "-q", "-b", "main"]);
        if let Some(uid) = world.owner {
            chown_all(world.dir.path(), uid);
        }
        let output = world.run(
            "read-only",
            "git log --oneline; git status --short; git config user.email; \
             git config --show-origin --list; cat \"$GIT_CONFIG_GLOBAL\"; echo done",
        );
        let all = text(&output);
        assert!(all.contains("tester@example.invalid"), "{who:?}: {all}");
        assert!(all.contains("done"), "{who:?}: {all}");
        assert!(!all.contains("warning: unable to access"), "{who:?}: {all}");
        for secret in &world.secrets {
            assert!(!all.contains(secret.as_str()), "{who:?} leaked {secret}: {all}");
        }
        assert!(!all.contains("extraheader"), "{who:?}: {all}");
        if world.namespaces {
            let output =
                world.run_git("git add src/lib.rs && git commit -qm first && git log --format='%an <%ae>'");
            let all = text(&output);
            assert!(output.status.success(), "{who:?}: {all}");
            assert!(
                all.contains("Sandbox Tester <tester@example.invalid>"),
                "{who:?}: {all}"
            );
        }
        // What works outside the sandbox, as the same user with the same home, works inside.
        for (line, expected) in [
            (
                "python3 -c 'import json, sys; print(json.dumps([sys.version_info[0]]))'",
                "[3]",
            ),
            ("node -e 'console.log(6*7)'", "42"),
        ] {
            if !text(&world.outside(line)).contains(expected) {
                eprintln!("skipped for {who:?}: `{line}` does not work outside the sandbox here");
                continue;
            }
            let output = world.run("read-only", line);
            assert!(
                text(&output).contains(expected),
                "{who:?} {line}: {}",
                text(&output)
            );
        }
    }
}

/// A crate builds offline in the sandbox with the scratch home's cargo cache and the machine's toolchain.
#[test]
fn cargo_builds_offline_without_the_home_directory() {
    if !supported() {
        return;
    }
    // The toolchain of the user running the tests, named by the variables the sandbox grants.
    let Some(real_home) = std::env::var_os("HOME").map(PathBuf::from) else {
        return;
    };
    let rustup_home = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| real_home.join(".rustup"));
    if !has("cargo") || !rustup_home.is_dir() {
        eprintln!("skipped: cargo_builds_offline_without_the_home_directory needs cargo and a rustup home");
        return;
    }
    let world = World::new(None, true);
    // A crate with a vendored dependency.
    std::fs::write(
        world.project.join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n\
         [dependencies]\ndep = { path = \"vendor/dep\" }\n",
    )
    .unwrap();
    std::fs::create_dir_all(world.project.join("vendor/dep/src")).unwrap();
    std::fs::write(
        world.project.join("vendor/dep/Cargo.toml"),
        "[package]\nname = \"dep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        world.project.join("vendor/dep/src/lib.rs"),
        "pub fn word() -> &'static str { \"tiny-built\" }\n",
    )
    .unwrap();
    std::fs::write(
        world.project.join("src/main.rs"),
        "fn main() { println!(\"{}\", dep::word()); }\n",
    )
    .unwrap();
    let cargo_home = world.home.join(".cargo");
    let target = world.project.join("target");
    let output = world.sandbox(
        &[
            "--profile",
            "workspace-write",
            "--",
            "cargo",
            "run",
            "--offline",
            "-q",
        ],
        &[
            ("RUSTUP_HOME", rustup_home.to_str().unwrap()),
            ("CARGO_HOME", cargo_home.to_str().unwrap()),
            ("CARGO_TARGET_DIR", target.to_str().unwrap()),
        ],
    );
    assert!(text(&output).contains("tiny-built"), "{}", text(&output));
}

/// The environment is passed by allow list: a planted set of credential-like variables is absent inside, the
/// shell's and the tool chains' variables are present, `agentGuard.sandbox.env` passes a name of the user's.
#[test]
fn the_environment_is_passed_by_allow_list() {
    if !supported() {
        return;
    }
    let world = World::new(None, true);
    std::fs::create_dir_all(world.home.join(".claude")).unwrap();
    std::fs::write(
        world.home.join(".claude/settings.json"),
        r#"{"agentGuard": {"sandbox": {"env": ["MY_APP_*"]}}}"#,
    )
    .unwrap();
    let value = random(24, ALNUM);
    let planted: Vec<(String, String)> = [
        "AUTHORIZATION",
        "HTTP_AUTHORIZATION",
        "MNEMONIC",
        "SEED_PHRASE",
        "WALLET_SEED",
        "PRIVATE_SEED",
        "DSN",
        "SENTRY_DSN",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "NPM_TOKEN",
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "STRIPE_KEY",
        "DATABASE_URL",
        "REDIS_URL",
        "MYSQL_PWD",
        "PGPASSWORD",
        "SSHPASS",
        "VAULT_TOKEN",
        "CI_JOB_JWT",
        "SLACK_WEBHOOK_URL",
        "COOKIE",
        "SESSION",
        "LICENSE_BLOB",
        "BUILD_LABEL",
        "X_CUSTOM",
        "GIT_CONFIG_PARAMETERS",
    ]
    .iter()
    .enumerate()
    .map(|(i, name)| {
        let v = match *name {
            "DSN" => format!("https://{value}@o1.ingest.example.invalid/1"),
            "DATABASE_URL" => format!("postgres://app:{value}@db/app"),
            "GIT_CONFIG_PARAMETERS" => format!("'http.extraheader'='Authorization: {value}'"),
            _ => format!("{value}{i}"),
        };
        ((*name).to_owned(), v)
    })
    .collect();
    // A tool chain's variable whose value is a credential loses it too.
    let token_url = format!("https://user:{value}@pypi.example.invalid/simple");
    let mut env: Vec<(&str, &str)> = planted.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    env.extend([
        ("PIP_INDEX_URL", token_url.as_str()),
        ("LANG", "C.UTF-8"),
        ("RUSTFLAGS", "-Cdebuginfo=0"),
        ("GOPATH", "/nonexistent/go"),
        ("VIRTUAL_ENV", "/nonexistent/venv"),
        ("NODE_ENV", "test"),
        ("CI", "true"),
        ("MY_APP_MODE", "fast"),
    ]);
    let output = world.sandbox(&["--", "env"], &env);
    let all = text(&output);
    assert!(output.status.success(), "{all}");
    for (name, _) in &planted {
        assert!(
            !all.lines().any(|l| l.starts_with(&format!("{name}="))),
            "{name} reached the command: {all}"
        );
    }
    assert!(!all.contains(&value), "{all}");
    assert!(!all.contains("PIP_INDEX_URL="), "{all}");
    for present in [
        "LANG=C.UTF-8",
        "RUSTFLAGS=-Cdebuginfo=0",
        "GOPATH=/nonexistent/go",
        "VIRTUAL_ENV=/nonexistent/venv",
        "NODE_ENV=test",
        "CI=true",
        "MY_APP_MODE=fast",
        "PATH=",
        "HOME=",
        "GIT_CONFIG_GLOBAL=",
    ] {
        assert!(
            all.lines().any(|l| l.starts_with(present)),
            "{present} missing: {all}"
        );
    }
}

/// With namespaces and `--git-writes`, git writes its repository under `workspace-write` (add, commit, a new
/// branch, stash, a local rebase), while its configuration, hooks and `info/` stay read-only, a hook it creates is
/// removed when it ends, and `.git` cannot be moved away. Without namespaces `.git` stays read-only whole.
#[test]
fn git_writes_its_repository_but_not_its_configuration() {
    if !supported() {
        return;
    }
    for world in worlds() {
        let who = (world.owner, world.namespaces);
        git(&world.project, &["init", "-q", "-b", "main"]);
        git(&world.project, &["add", "-A"]);
        git(&world.project, &["commit", "-qm", "initial"]);
        std::fs::remove_dir_all(world.project.join(".git/hooks")).unwrap();
        let config_before = std::fs::read_to_string(world.project.join(".git/config")).unwrap();
        if let Some(uid) = world.owner {
            chown_all(world.dir.path(), uid);
        }
        let output = world.run_git(
            "set -e; echo a >> src/lib.rs; git add -A; git commit -qm second; git checkout -qb topic; \
             echo b >> src/lib.rs; git stash -q; git stash pop -q; git commit -qam third; git checkout -q main; \
             echo c > other.txt; git add other.txt; git commit -qm fourth; git checkout -q topic; \
             git rebase -q main; git log --format=%s; echo rebased",
        );
        let all = text(&output);
        if world.namespaces {
            assert!(all.contains("rebased"), "{who:?}: {all}");
            assert!(all.contains("third") && all.contains("fourth"), "{who:?}: {all}");
        } else {
            assert!(
                !output.status.success(),
                "{who:?}: .git stays read-only without namespaces: {all}"
            );
        }
        let output = world.run_git(
            "echo '[core]\n\tfsmonitor = /tmp/x' >> .git/config; git config core.hooksPath /tmp; \
             mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/post-commit; \
             mkdir -p .git/info; echo x > .git/info/attributes; echo /elsewhere > .git/commondir; \
             mv .git .git-away; echo done",
        );
        let all = text(&output);
        assert!(all.contains("done"), "{who:?}: {all}");
        assert_eq!(
            std::fs::read_to_string(world.project.join(".git/config")).unwrap(),
            config_before,
            "{who:?}: {all}"
        );
        for gone in [".git/hooks", ".git/commondir", ".git-away"] {
            assert!(
                std::fs::symlink_metadata(world.project.join(gone)).is_err(),
                "{who:?}: {gone} outlived the command: {all}"
            );
        }
        assert!(world.project.join(".git/HEAD").is_file(), "{who:?}: {all}");
        assert_ne!(
            std::fs::read_to_string(world.project.join(".git/info/attributes"))
                .ok()
                .as_deref(),
            Some("x\n"),
            "{who:?}: {all}"
        );
    }
}

/// `git args` in `project` outside the sandbox, its standard output.
fn git_out(project: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(["-c", "safe.directory=*"])
        .args(args)
        .current_dir(project)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {}", text(&output));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Without `--git-writes` a `workspace-write` command finds `.git` read-only whole, with namespaces and without:
/// whatever it runs cannot delete a reference, the objects or the reflogs, nor commit, and git says why.
#[test]
fn without_git_writes_the_history_cannot_be_destroyed() {
    if !supported() {
        return;
    }
    for world in worlds() {
        let who = (world.owner, world.namespaces);
        git(&world.project, &["init", "-q", "-b", "main"]);
        git(&world.project, &["add", "-A"]);
        git(&world.project, &["commit", "-qm", "initial"]);
        git(&world.project, &["commit", "-q", "--allow-empty", "-m", "second"]);
        if let Some(uid) = world.owner {
            chown_all(world.dir.path(), uid);
        }
        let history = |project: &Path| {
            (
                git_out(project, &["rev-parse", "HEAD", "HEAD~1"]),
                git_out(project, &["reflog", "--format=%H"]),
                git_out(project, &["count-objects", "-v"]),
            )
        };
        let before = history(&world.project);
        for line in [
            "git update-ref -d HEAD",
            "rm -rf .git/objects",
            "git reflog expire --expire=now --all && git gc -q --prune=now",
            "printf '%040d\\n' 0 > .git/refs/heads/main",
            "mv .git/refs .git/refs-away",
            "git commit -q --allow-empty -m sneaky",
        ] {
            let output = world.run("workspace-write", &format!("echo x >> src/lib.rs && {line}"));
            let all = text(&output);
            assert!(!output.status.success(), "{who:?} {line}: {all}");
            // The kernel's own words: a read-only mount, or Landlock's refusal without namespaces.
            let refused = all.contains("Read-only file system")
                || (!world.namespaces && all.contains("Permission denied"));
            assert!(refused, "{who:?} {line}: {all}");
            assert_eq!(history(&world.project), before, "{who:?} {line}: {all}");
        }
        // The working tree was written all along: only `.git` is read-only.
        assert!(
            std::fs::read_to_string(world.project.join("src/lib.rs"))
                .unwrap()
                .ends_with("x\n"),
            "{who:?}"
        );
        git_out(&world.project, &["fsck", "--no-dangling"]);
        // `--git-writes` belongs to `workspace-write`: with `read-only` it is refused and nothing runs.
        let output = world.sandbox(&["--git-writes", "--", "touch", "ran"], &[]);
        assert!(!output.status.success(), "{who:?}: {}", text(&output));
        assert!(text(&output).contains("`--git-writes` needs `--profile workspace-write`"));
        assert!(!world.project.join("ran").exists(), "{who:?}");
    }
}
