//! Tests of protected.rs: the defaults, the patterns and their scopes, the reasons.

use super::*;

fn write(path: &str) -> Option<String> {
    ProtectedPaths::default().reason(Path::new(path), None, Access::Write)
}

fn read(path: &str) -> Option<String> {
    ProtectedPaths::default().reason(Path::new(path), None, Access::Read)
}

#[test]
fn names_are_the_normal_components() {
    use std::path::Component;
    for path in [
        "",
        "/",
        "//",
        "/a",
        "a",
        "./a",
        "a/.",
        "a/./b",
        "/a//b/",
        "/a/../b/..",
        "../a/..b/.c/c.",
        "/home/u/.aws/credentials",
        "./.env",
        "/p/sub/.cargo/config.toml/",
        "/é/→/x",
    ] {
        let expected: Vec<&OsStr> = Path::new(path)
            .components()
            .filter_map(|component| match component {
                Component::Normal(name) => Some(name),
                _ => None,
            })
            .collect();
        assert_eq!(names(Path::new(path)).collect::<Vec<_>>(), expected, "{path:?}");
    }
}

#[test]
fn default_writes() {
    assert!(write("/p/.git/config").is_some());
    assert!(write("/p/.GIT/hooks/pre-commit").is_some());
    assert!(write("/p/sub/.husky/pre-push").is_some());
    assert!(write("/home/u/.config/fish/conf.d/x.fish").is_some());
    assert!(write("/p/.zshrc").is_some());
    assert!(write("/p/.gitignore").is_none());
    assert!(write("/p/src/git/x.rs").is_none());
    assert!(write("/p/.zshrc.bak").is_none());
    assert!(write("/home/u/.ssh/authorized_keys").is_some());
    assert!(write("/home/u/.gitconfig").is_some());
    assert!(write("/home/u/.config/git/config").is_some());
    assert!(write("/home/u/.local/bin/ls").is_some());
    assert!(write("/p/.mcp.json").is_some());
    for runs_code in [
        "/p/.cargo/config.toml",
        "/p/sub/.cargo/config",
        "/p/rust-toolchain.toml",
        "/p/rust-toolchain",
        "/p/mise.toml",
        "/p/.mise.toml",
        "/p/.pre-commit-config.yaml",
        "/p/mise.local.toml",
        "/p/lefthook.yml",
        "/p/.pdbrc",
    ] {
        assert!(write(runs_code).is_some(), "{runs_code}");
    }
    // Tools that read their configuration under many names: every spelling, and the directories that hold it.
    for runs_code in [
        "/p/.lefthook.yml",
        "/p/lefthook.toml",
        "/p/.lefthook-local.yaml",
        "/p/lefthook-local.json",
        "/p/.config/lefthook.jsonc",
        "/p/.lefthook/pre-commit/x.sh",
        "/p/.lefthook-local/pre-commit/x.sh",
        "/p/mise.dev.toml",
        "/p/.mise.staging.toml",
        "/p/.mise/config.toml",
        "/p/mise/config.toml",
        "/p/.devcontainer.json",
    ] {
        assert!(write(runs_code).is_some(), "{runs_code}");
    }
    for plain in [
        "/p/src/promise.ts",
        "/p/docs/lefthooks.md",
        "/p/mises.txt",
        "/p/src/devcontainers.rs",
    ] {
        assert!(write(plain).is_none(), "{plain}");
    }
    assert!(write("/p/.cargo/registry/x").is_none());
    assert!(write("/p/src/gitconfig.rs").is_none());
    assert!(write("/home/u/.local/share/x").is_none());
}

/// A secret file is protected for writes as for reads: a write replaces it, an edit shows lines of it.
#[test]
fn secret_files_are_protected_for_writes_too() {
    for secret in [
        "/p/.env",
        "/p/sub/.env.local",
        "/p/server.pem",
        "/home/u/.ssh/id_ed25519",
    ] {
        assert!(read(secret).is_some(), "{secret}");
        assert!(write(secret).is_some(), "{secret}");
    }
    for plain in ["/p/.env.example", "/p/src/env.rs", "/p/README.md"] {
        assert_eq!(read(plain), None, "{plain}");
        assert_eq!(write(plain), None, "{plain}");
    }
}

#[test]
fn other_tools_configuration_is_protected_for_writes() {
    for protected in [
        "/p/.hg/hgrc",
        "/p/.jj/repo/config.toml",
        "/p/.cursor/mcp.json",
        "/p/.gemini/settings.json",
        "/p/.devcontainer/devcontainer.json",
        "/p/app.code-workspace",
        "/p/sub/.npmrc",
        "/p/.yarnrc.yml",
        "/p/.pnpmfile.cjs",
        "/p/.nvim.lua",
        "/p/.exrc",
    ] {
        assert!(write(protected).is_some(), "{protected}");
        assert!(
            read(protected).is_none() || protected.ends_with(".npmrc"),
            "{protected}"
        );
    }
    for free in ["/p/src/workspace.rs", "/p/docs/hgrc.md", "/p/.eslintrc.json"] {
        assert!(write(free).is_none(), "{free}");
    }
}

#[test]
fn start_up_files_of_interactive_tools_and_other_agents_are_protected_for_writes() {
    for protected in [
        "/p/.irbrc",
        "/p/irb.rc",
        "/p/_irbrc",
        "/p/.pryrc",
        "/p/.Rprofile",
        "/p/sub/.Renviron",
        "/p/.iex.exs",
        "/p/.ghci",
        "/p/.ocamlinit",
        "/p/.vimrc",
        "/p/.gvimrc",
        "/p/.nvimrc",
        "/p/.lfsconfig",
        "/p/crush.json",
        "/p/.crush.json",
        "/p/.qwen/settings.json",
        "/p/.kilocode/mcp.json",
        "/p/.opencode/plugin/x.js",
        "/p/.openhands/setup.sh",
        "/p/.iflow/settings.json",
        "/p/.factory/mcp.json",
        "/p/.clinerules/hooks/PreToolUse",
        "/p/.sl/config",
        "/p/_darcs/prefs/defaults",
    ] {
        assert!(write(protected).is_some(), "{protected}");
        assert!(read(protected).is_none(), "{protected}");
    }
    // A project's build files are its code, which its build runs by design; darcs's patches are its history.
    for free in [
        "/p/pom.xml",
        "/p/.mvn/jvm.config",
        "/p/gradle.properties",
        "/p/.bazelrc",
        "/p/.clinerules/style.md",
        "/p/_darcs/patches/x",
        "/p/vimrc.md",
    ] {
        assert!(write(free).is_none(), "{free}");
    }
}

#[test]
fn a_git_directory_under_another_name_is_known_by_what_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let at = |relative: &str| root.join(relative);
    let protected = |relative: &str| {
        ProtectedPaths::default()
            .reason(&at(relative), None, Access::Write)
            .is_some()
    };
    std::fs::create_dir_all(at("src/objects")).unwrap();
    std::fs::create_dir_all(at("src/refs")).unwrap();
    std::fs::create_dir_all(at("app/config")).unwrap();
    // `objects/` and `refs/` make the directory a common git directory (one a `commondir` elsewhere names).
    for entry in [
        "config",
        "config.worktree",
        "hooks/pre-commit",
        "info/attributes",
        "commondir",
        "gitdir",
        "modules/m/config",
        "worktrees/w/config",
    ] {
        assert!(protected(&format!("src/{entry}")), "{entry}");
    }
    // Its other entries, and a `config` directory of an ordinary directory, are not.
    for free in [
        "src/HEAD",
        "src/objects/ab/cd",
        "src/refs/heads/main",
        "src/main.rs",
        "app/config/app.yml",
        "app/hooks.py",
    ] {
        assert!(!protected(free), "{free}");
    }
    // A `HEAD` alone (a line may add the rest later), or a `commondir`, is enough.
    std::fs::write(at("app/HEAD"), "ref: refs/heads/main\n").unwrap();
    assert!(protected("app/config"));
    assert!(protected("app/config/app.yml"));
    // A `config` directory is no git configuration: a `HEAD` beside it makes nothing git obeys.
    std::fs::remove_file(at("app/HEAD")).unwrap();
    assert!(!protected("app/HEAD"));
    std::fs::create_dir_all(at("w")).unwrap();
    std::fs::write(at("w/commondir"), "../src\n").unwrap();
    assert!(protected("w/config.worktree"));
    let reason = ProtectedPaths::default()
        .reason(&at("src/config"), None, Access::Write)
        .unwrap();
    assert!(reason.contains("git directory by what it holds"), "{reason}");
    // Whichever comes last: a `HEAD` beside a `config` already there makes the directory a git directory.
    std::fs::create_dir_all(at("lib")).unwrap();
    assert!(!protected("lib/HEAD"));
    std::fs::write(at("lib/config"), "[core]\n").unwrap();
    assert!(protected("lib/HEAD"));
    // A `commondir` anywhere names another directory's `config` for git.
    assert!(protected("docs/commondir"));
}

#[test]
fn hidden_entries_of_the_home_directory_are_protected_for_writes() {
    let paths = ProtectedPaths::default().with_home(Some(PathBuf::from("/home/u")));
    let write = |p: &str| paths.reason(Path::new(p), None, Access::Write);
    // (`.vimrc` is protected anywhere now, as a start-up file vim reads from the directory it starts in.)
    for protected in [
        "/home/u/.inputrc",
        "/home/u/.tmux.conf",
        "/home/u/.local/lib/python3.11/site-packages/evil.pth",
        "/home/u/.config/systemd/user/x.service",
        "/home/u/.pam_environment",
    ] {
        let why = write(protected);
        assert!(
            why.as_deref().is_some_and(|w| w.contains("~/.")),
            "{protected}: {why:?}"
        );
    }
    for free in [
        "/home/u/project/src/main.rs",
        "/home/u/project/.eslintrc.json",
        "/home/u/notes.txt",
        "/other/.tmux.conf",
    ] {
        assert!(write(free).is_none(), "{free}");
    }
    // Without the home directory known, the name alone decides.
    assert!(
        ProtectedPaths::default()
            .reason(Path::new("/home/u/.tmux.conf"), None, Access::Write)
            .is_none()
    );
}

#[test]
fn default_reads() {
    assert!(read("/p/.env").is_some());
    assert!(read("/p/.env.local").is_some());
    assert!(read("/p/.ENV").is_some());
    assert!(read("/p/.env.example").is_none());
    assert!(read("/p/.envrc").is_none());
    assert!(read("/p/.git/config").is_none());
    for secret in [
        "/home/u/.git-credentials",
        "/home/u/.netrc",
        "/p/.npmrc",
        "/home/u/.pypirc",
        "/home/u/.ssh/id_rsa",
        "/home/u/.ssh/id_ed25519_sk",
        "/p/certs/server.pem",
        "/p/tls/server.KEY",
        "/p/client.p12",
        "/p/credentials.json",
        "/home/u/.kube/config",
        "/p/deploy/prod.kubeconfig",
        "/home/u/.docker/config.json",
        "/home/u/.aws/credentials",
        "/home/u/.gnupg/private-keys-v1.d/abc.key",
        "/proc/self/environ",
        "/proc/1234/environ",
    ] {
        assert!(read(secret).is_some(), "{secret}");
    }
    for plain in [
        "/home/u/.ssh/id_rsa.pub",
        "/p/config.json",
        "/p/.docker/daemon.json",
        "/p/src/keys.rs",
        "/p/kube/config",
        "/p/environ",
        "/p/keyboard.md",
    ] {
        assert!(read(plain).is_none(), "{plain}");
    }
}

/// The plain reference the compiled sets replace: each pattern matched on its own, in list order, with
/// globset's case-insensitive matcher for the defaults.
fn reference_match<'a>(
    list: &[&'a str],
    absolute: &Path,
    relative: Option<&Path>,
    defaults: bool,
) -> Option<&'a str> {
    list.iter().copied().find(|text| {
        let pattern = if defaults {
            Pattern::default_secret(text).unwrap()
        } else {
            Pattern::parse(text).unwrap()
        };
        let glob = pattern.glob.glob().to_owned();
        let glob = if defaults { text.to_string() } else { glob };
        let matcher = GlobBuilder::new(&glob)
            .literal_separator(true)
            .backslash_escape(true)
            .case_insensitive(defaults)
            .build()
            .unwrap()
            .compile_matcher();
        let ancestors = |path: &Path| {
            path.ancestors()
                .any(|a| !a.as_os_str().is_empty() && matcher.is_match(a))
        };
        match pattern.scope {
            Scope::Name => names(absolute).any(|name| matcher.is_match(name)),
            Scope::Relative => relative.is_some_and(ancestors),
            Scope::Absolute => ancestors(absolute),
            Scope::Tail(count) => {
                let all: Vec<&OsStr> = names(absolute).collect();
                all.len() >= count && matcher.is_match(all[all.len() - count..].iter().collect::<PathBuf>())
            }
        }
    })
}

/// The compiled sets name the same first pattern as matching each pattern on its own, for the default secret
/// patterns and their exceptions (in any case) and for settings' patterns of every scope.
#[test]
fn compiled_sets_match_like_each_pattern_alone() {
    let paths = [
        "/p/.env",
        "/p/.ENV.Local",
        "/p/.env/inside",
        "/p/.env.example",
        "/p/server.PEM",
        "/p/x.tar.pem",
        "/p/.pem",
        "/p/pem",
        "/home/u/.ssh/ID_RSA.pub",
        "/home/u/.ssh/id_ed25519_sk",
        "/home/u/.AWS/Credentials",
        "/x/.aws/credentials/more",
        "/home/u/.config/gh/hosts.yml",
        "/home/u/.gnupg/private-keys-v1.d/abc.key",
        "/home/u/.gnupg/private-keys-v1.d/sub/abc",
        "/proc/self/environ",
        "/proc/1/task/2/environ",
        "/PROC/1/ENVIRON",
        "/p/deploy/prod.kubeconfig",
        "/p/kubeconfig/x",
        "/p/src/main.rs",
        "/p/config/prod/db.toml",
        "/p/config/prod",
        "/etc/x/y",
        "/p/secrets.toml",
        "/p/a/b/secrets.toml",
        "/p/keys/id.KEY",
        "/p/src/x/main.rs",
        "/p/sub/x.toml",
        "/p/a",
        "/p",
        "/",
    ];
    let (secrets, exceptions) = default_secrets().as_ref().unwrap();
    let extras = [
        "*.pem",
        "config/prod/",
        "/etc/x",
        "./secrets.toml",
        "secrets.*",
        "**/b/*.toml",
        "[a-c]/b",
        "./*.toml",
        "./s*",
        "config/**",
        "src**/main.rs",
        "/p/a/",
    ];
    let settings = PatternSet::new(
        &extras
            .iter()
            .map(|p| Pattern::parse(p).unwrap())
            .collect::<Vec<_>>(),
        Case::Exact,
    )
    .unwrap();
    for path in paths {
        let absolute = Path::new(path);
        let relative = absolute.strip_prefix("/p").ok();
        assert_eq!(
            secrets.first_match(absolute, None),
            reference_match(secret_files(), absolute, None, true),
            "{path}"
        );
        assert_eq!(
            exceptions.first_match(absolute, None),
            reference_match(NOT_SECRET, absolute, None, true),
            "{path}"
        );
        assert_eq!(
            settings.first_match(absolute, relative),
            reference_match(&extras, absolute, relative, false),
            "{path}"
        );
    }
}

#[test]
fn extras() {
    let protected = ProtectedPaths::none()
        .with_extra(["*.pem", "config/prod/", "/etc/x"])
        .unwrap();
    let rel = |p: &str| protected.reason(&Path::new("/p").join(p), Some(Path::new(p)), Access::Read);
    assert!(rel("keys/a.pem").is_some());
    assert!(rel("config/prod/db.toml").is_some());
    assert!(rel("config/dev/db.toml").is_none());
    assert!(
        protected
            .reason(Path::new("/etc/x/y"), None, Access::Write)
            .is_some()
    );
    assert!(ProtectedPaths::none().with_extra(["a[b"]).is_err());
}

#[test]
fn remembered_name_matches_are_the_name_patterns_matches() {
    let Ok((secrets, exceptions)) = default_secrets() else {
        panic!("the fixed lists compile");
    };
    let names = [
        ".env",
        ".env.example",
        "id_rsa",
        "server.pem",
        "src",
        "work",
        "credentials",
        ".npmrc",
        "a",
        "",
        "ID_RSA",
        "notes.txt",
        ".netrc",
        "secrets.yaml",
    ];
    for set in [secrets, exceptions] {
        // Twice: the first asks the patterns, the second is remembered.
        for _ in 0..2 {
            for name in names {
                let lower = name.to_ascii_lowercase();
                assert_eq!(
                    set.name_match(OsStr::new(&lower)),
                    set.names.first_match(Path::new(&lower)),
                    "{name}"
                );
            }
        }
    }
}

/// A key or certificate file is protected by its kind alone unless another name, place or pattern protects it too:
/// then its content cannot clear it.
#[test]
fn only_a_key_file_kind_is_told_apart_from_other_protections() {
    let kind = |protected: &ProtectedPaths, path: &str, access: Access| {
        protected.only_a_key_file_kind(Path::new(path), None, access)
    };
    let defaults = ProtectedPaths::default();
    for access in [Access::Read, Access::Write] {
        for path in [
            "/p/.venv/lib/python3.11/site-packages/pip/_vendor/certifi/cacert.pem",
            "/p/certs/server.KEY",
            "/p/store.p12",
            "/p/client.pfx",
        ] {
            assert!(kind(&defaults, path, access), "{path} {access:?}");
            assert!(defaults.reason(Path::new(path), None, access).is_some(), "{path}");
        }
        // Secret by a name that says what it is, not only by its kind; or not secret at all.
        for path in [
            "/p/id_rsa.pem",
            "/p/.env.key",
            "/p/.env",
            "/p/server.crt",
            "/p/README.md",
        ] {
            assert!(!kind(&defaults, path, access), "{path} {access:?}");
        }
    }
    // In a protected place, a write is protected whatever the file holds.
    assert!(!kind(&defaults, "/p/.claude/hooks/ca.pem", Access::Write));
    assert!(!kind(&defaults, "/p/.git/x.pem", Access::Write));
    // A pattern of the settings protects it too.
    let extra = ProtectedPaths::default()
        .with_extra_reads(["certs/**"])
        .unwrap()
        .with_extra_writes(["certs/**"])
        .unwrap();
    for access in [Access::Read, Access::Write] {
        assert!(
            !extra.only_a_key_file_kind(
                Path::new("/p/certs/ca.pem"),
                Some(Path::new("certs/ca.pem")),
                access
            ),
            "{access:?}"
        );
    }
    // Without the defaults nothing is protected by its kind.
    assert!(!kind(&ProtectedPaths::none(), "/p/ca.pem", Access::Read));
}

/// Paths normalised and not: repeated, final and leading slashes, `.` and `..` parts, upper case, fewer names than
/// a tail pattern has.
const IRREGULAR_PATHS: [&str; 16] = [
    "/home/u/.aws/credentials",
    "/home/u/.AWS/Credentials",
    "/home/u//.aws/credentials",
    "/home/u/.aws/./credentials",
    "/home/u/.aws/../credentials",
    "/home/u/.aws/credentials/",
    "/a",
    "/",
    "",
    "credentials",
    ".aws/credentials",
    "/work/p/src/main.rs",
    "/work/p/.env",
    "/work/p/.env.example",
    "/work/.ssh/id_rsa.pub",
    "//x//.ssh//id_rsa",
];

#[test]
fn a_tail_is_the_last_names_joined() {
    for path in IRREGULAR_PATHS {
        for count in 0..5 {
            let all: Vec<&OsStr> = names(Path::new(path)).collect();
            let expected = (all.len() >= count).then(|| all[all.len() - count..].iter().collect::<PathBuf>());
            assert_eq!(
                tail(Path::new(path), count).map(std::borrow::Cow::into_owned),
                expected,
                "{path} {count}"
            );
        }
    }
}

#[test]
fn remembered_directories_match_as_their_names_do() {
    let Ok((secrets, exceptions)) = default_secrets() else {
        panic!("the fixed lists compile");
    };
    for set in [secrets, exceptions] {
        // Twice: the first asks the patterns, the second is remembered.
        for _ in 0..2 {
            for path in IRREGULAR_PATHS {
                let lower = path.to_ascii_lowercase();
                let expected = names(Path::new(&lower))
                    .filter_map(|name| set.names.first_match(Path::new(name)))
                    .min();
                assert_eq!(set.names_match(Path::new(&lower)), expected, "{path}");
            }
        }
    }
}

#[test]
fn a_scope_passes_over_only_candidates_none_of_its_globs_can_match() {
    let Ok((secrets, exceptions)) = default_secrets() else {
        panic!("the fixed lists compile");
    };
    let settings = PatternSet::new(
        &parse_all([
            "a*b",
            "\\*x",
            "{a,b}/c",
            "[ab]c/d",
            "**/x",
            "x/**",
            "/etc/sh*",
            "conf/prod",
            "lit",
            "/abs/lit",
        ])
        .unwrap(),
        Case::Exact,
    )
    .unwrap();
    let unfiltered = |scope: &ScopeSet, candidate: &Path| {
        if scope.is_empty() {
            return None;
        }
        scope
            .set
            .matches(candidate)
            .into_iter()
            .filter_map(|index| scope.positions.get(index).copied())
            .min()
    };
    let mut candidates: Vec<String> = [
        "ab",
        "axxb",
        "*x",
        "a/c",
        "b/c",
        "ac/d",
        "y/x",
        "x",
        "x/y",
        "/etc/shadow",
        "/etc",
        "conf/prod",
        "conf/prod/x",
        "lit",
        "lit/x",
        "/abs/lit",
        "/abs/lit/y",
        "/abs/li",
        "proc/1/environ",
        "/proc/1/environ",
        "/proc/self/environ/x",
        ".agent-guard/undo",
        ".agent-guard/undo/a/b",
    ]
    .iter()
    .map(|c| (*c).to_owned())
    .collect();
    for path in IRREGULAR_PATHS {
        let lower = path.to_ascii_lowercase();
        for count in 1..4 {
            if let Some(tail) = tail(Path::new(&lower), count) {
                candidates.push(tail.to_string_lossy().into_owned());
            }
        }
        candidates.extend(names(Path::new(&lower)).map(|n| n.to_string_lossy().into_owned()));
        candidates.push(lower);
    }
    for set in [secrets, exceptions, &settings] {
        let scopes = [&set.names, &set.relative, &set.absolute]
            .into_iter()
            .chain(set.tails.iter().map(|(_, scope)| scope));
        for scope in scopes {
            for candidate in &candidates {
                let candidate = Path::new(candidate);
                assert_eq!(
                    scope.first_match(candidate),
                    unfiltered(scope, candidate),
                    "{candidate:?}"
                );
            }
        }
    }
    // The absolute secret patterns start with `/proc/`: other paths pass over them.
    assert!(!secrets.absolute.starts.is_empty());
}
