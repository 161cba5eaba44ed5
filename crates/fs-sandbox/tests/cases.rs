//! The data-driven corpus of paths: each row is a class of inputs with its decision and resolved location.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::path::PathBuf;

use agent_fs_sandbox::Access::{self, Read, Write};
use agent_tool_traits::Decision::{self, Allow, Ask, Deny};

/// One row: the path (`{T}` stands for the fixture's base directory), the access, the expected decision, and
/// where it must resolve (relative to the base; a leading `/` is absolute; `None` when it cannot resolve).
struct Case {
    path: &'static str,
    access: Access,
    decision: Decision,
    resolved: Option<&'static str>,
}

const fn case(
    path: &'static str,
    access: Access,
    decision: Decision,
    resolved: Option<&'static str>,
) -> Case {
    Case {
        path,
        access,
        decision,
        resolved,
    }
}

#[rustfmt::skip]
const CASES: &[Case] = &[
    // Traversal: `..` that stays inside is fine, one that leaves is an escape.
    case("src/main.rs", Read, Allow, Some("proj/src/main.rs")),
    case("src/../src/main.rs", Read, Allow, Some("proj/src/main.rs")),
    case("../outside/secret.txt", Read, Deny, Some("outside/secret.txt")),
    case("../../../../../../../../etc/passwd", Read, Deny, Some("/etc/passwd")),
    case("src/../../outside/secret.txt", Read, Deny, Some("outside/secret.txt")),
    case("./src/./main.rs", Read, Allow, Some("proj/src/main.rs")),
    case("..", Read, Deny, Some("")),
    case(".", Read, Allow, Some("proj")),
    case("src/lib/deep/../../main.rs", Read, Allow, Some("proj/src/main.rs")),
    case("../proj/src/main.rs", Read, Allow, Some("proj/src/main.rs")),
    case("src/lib/../../../outside/new.txt", Write, Deny, Some("outside/new.txt")),
    // Absolute paths.
    case("{T}/proj/src/main.rs", Read, Allow, Some("proj/src/main.rs")),
    case("{T}/outside/secret.txt", Read, Deny, Some("outside/secret.txt")),
    case("/etc/passwd", Read, Deny, Some("/etc/passwd")),
    case("/", Read, Deny, Some("/")),
    case("{T}/proj/../outside/secret.txt", Write, Deny, Some("outside/secret.txt")),
    case("{T}/proj/src/../../proj/new.txt", Write, Allow, Some("proj/new.txt")),
    // Sibling directories whose names start with the root's name.
    case("{T}/proj-evil/file.txt", Read, Deny, Some("proj-evil/file.txt")),
    case("../proj-evil/file.txt", Write, Deny, Some("proj-evil/file.txt")),
    case("{T}/proj-evil", Read, Deny, Some("proj-evil")),
    case("{T}/projx/new.txt", Write, Deny, Some("projx/new.txt")),
    case("{T}/pro", Read, Deny, Some("pro")),
    // `~` and `~/` expand to the home directory (a root here); other names starting with `~` are plain names.
    case("~/notes.txt", Read, Allow, Some("home/notes.txt")),
    case("~", Read, Allow, Some("home")),
    case("~/", Read, Allow, Some("home")),
    case("~/.bashrc", Write, Ask, Some("home/.bashrc")),
    case("~/../outside/secret.txt", Read, Deny, Some("outside/secret.txt")),
    case("~/../proj/src/main.rs", Read, Allow, Some("proj/src/main.rs")),
    case("~notes.md", Read, Allow, Some("proj/~notes.md")),
    case("~notes.md", Write, Allow, Some("proj/~notes.md")),
    // Not another user's home: a literal name in the project, and a private key by its name.
    case("~root/.ssh/id_rsa", Read, Ask, Some("proj/~root/.ssh/id_rsa")),
    case("~root/.ssh/config", Read, Allow, Some("proj/~root/.ssh/config")),
    case("a/~/b", Write, Allow, Some("proj/a/~/b")),
    case("~~/x", Write, Allow, Some("proj/~~/x")),
    // Symbolic links to outside: file, directory, absolute, chained, dangling, and back up through `..`.
    case("link_out_file", Read, Deny, Some("outside/secret.txt")),
    case("link_out_dir/secret.txt", Read, Deny, Some("outside/secret.txt")),
    case("link_out_abs/secret.txt", Read, Deny, Some("outside/secret.txt")),
    case("chain1/secret.txt", Read, Deny, Some("outside/secret.txt")),
    case("dangling_out", Write, Deny, Some("outside/newfile")),
    case("link_out_dir", Read, Deny, Some("outside")),
    case("up_link/outside/secret.txt", Read, Deny, Some("outside/secret.txt")),
    case("up_link", Read, Deny, Some("")),
    // `..` after a link steps up from the link's target, as in the kernel, not lexically.
    case("link_out_dir/../proj/src/main.rs", Read, Allow, Some("proj/src/main.rs")),
    case("dotdot_link/../x.rs", Write, Ask, Some("proj/src/lib/x.rs")),
    case("dotdot_link/../../main.rs", Read, Allow, Some("proj/src/main.rs")),
    case("dotdot_link/../../../../outside/secret.txt", Read, Deny, Some("outside/secret.txt")),
    // Symbolic links inside: reads are fine, writes through them ask.
    case("link_in/main.rs", Read, Allow, Some("proj/src/main.rs")),
    case("link_in_file", Read, Allow, Some("proj/src/main.rs")),
    case("link_in_file", Write, Ask, Some("proj/src/main.rs")),
    case("chain_in1/main.rs", Read, Allow, Some("proj/src/main.rs")),
    case("dangling_in", Write, Ask, Some("proj/src/new.rs")),
    case("loop_a", Read, Deny, None),
    case("self_loop/x", Write, Deny, None),
    // Symlinked parents of new files.
    case("link_out_dir/newfile.txt", Write, Deny, Some("outside/newfile.txt")),
    case("link_out_dir/sub/new/deeper.txt", Write, Deny, Some("outside/sub/new/deeper.txt")),
    case("link_in/new_dir/new.rs", Write, Ask, Some("proj/src/new_dir/new.rs")),
    case("chain1/new.txt", Write, Deny, Some("outside/new.txt")),
    // New files and new nested directories inside; a missing tail keeps its own `..`.
    case("new.txt", Write, Allow, Some("proj/new.txt")),
    case("new/nested/dir/file.txt", Write, Allow, Some("proj/new/nested/dir/file.txt")),
    case("src/new/../other.rs", Write, Allow, Some("proj/src/other.rs")),
    case("new/../../outside/x", Write, Deny, Some("outside/x")),
    case("new/../../proj/x", Write, Allow, Some("proj/x")),
    case("new/..", Write, Allow, Some("proj")),
    case("new/../link_out_dir/x", Write, Deny, Some("outside/x")),
    // Trailing slashes skip nothing.
    case("src/", Read, Allow, Some("proj/src")),
    case("link_out_dir/", Read, Deny, Some("outside")),
    case(".git/", Write, Ask, Some("proj/.git")),
    case("src/main.rs/", Read, Deny, None),
    case("{T}/proj-evil/", Read, Deny, Some("proj-evil")),
    case("link_to_git/", Write, Ask, Some("proj/.git")),
    // Double slashes skip nothing.
    case("src//main.rs", Read, Allow, Some("proj/src/main.rs")),
    case("..//outside//secret.txt", Read, Deny, Some("outside/secret.txt")),
    case("{T}//outside/secret.txt", Read, Deny, Some("outside/secret.txt")),
    case(".//.git//config", Write, Ask, Some("proj/.git/config")),
    case("//etc/passwd", Read, Deny, Some("/etc/passwd")),
    // NUL bytes.
    case("src/main.rs\0", Read, Deny, None),
    case("\0../../etc/passwd", Read, Deny, None),
    case("src/\0/main.rs", Write, Deny, None),
    // Empty path.
    case("", Read, Deny, None),
    // `/proc` magic links and `/dev/fd` are not a way out (nor a way back in).
    case("/proc/self/root/etc/passwd", Read, Deny, None),
    case("/proc/self/cwd/src/main.rs", Read, Deny, None),
    case("/proc/self/root{T}/proj/src/main.rs", Read, Deny, None),
    case("/dev/fd/0", Read, Deny, None),
    case("/proc/self/fd/0", Write, Deny, None),
    case("/proc/thread-self/root/etc/passwd", Read, Deny, None),
    case("/proc/1/root/etc/passwd", Read, Deny, None),
    case("proc_link{T}/proj/src/main.rs", Read, Deny, None),
    case("/proc/self/exe", Read, Deny, None),
    // Names that merely contain `..` or `~` are ordinary.
    case("a..b.txt", Read, Allow, Some("proj/a..b.txt")),
    case("..a", Write, Allow, Some("proj/..a")),
    case("a..", Write, Allow, Some("proj/a..")),
    case("...", Write, Allow, Some("proj/...")),
    case("src/..hidden/x", Write, Allow, Some("proj/src/..hidden/x")),
    case("notes~", Write, Allow, Some("proj/notes~")),
    // Protected paths: writes to configuration that runs code, reads of secrets; as written or resolved.
    case(".git/config", Write, Ask, Some("proj/.git/config")),
    case(".git/config", Read, Allow, Some("proj/.git/config")),
    case(".env", Read, Ask, Some("proj/.env")),
    case(".env.local", Read, Ask, Some("proj/.env.local")),
    case(".env.example", Read, Allow, Some("proj/.env.example")),
    case(".env.template", Read, Allow, Some("proj/.env.template")),
    case("config/.env.production", Read, Ask, Some("proj/config/.env.production")),
    case("link_to_env", Read, Ask, Some("proj/.env")),
    case("link_to_git/config", Write, Ask, Some("proj/.git/config")),
    case(".claude/settings.json", Write, Ask, Some("proj/.claude/settings.json")),
    case(".vscode/tasks.json", Write, Ask, Some("proj/.vscode/tasks.json")),
    case(".husky/pre-commit", Write, Ask, Some("proj/.husky/pre-commit")),
    case(".agent-guard/settings.json", Write, Ask, Some("proj/.agent-guard/settings.json")),
    case("src/.bashrc", Write, Ask, Some("proj/src/.bashrc")),
    case(".config/fish/config.fish", Write, Ask, Some("proj/.config/fish/config.fish")),
    case(".zshrc", Write, Ask, Some("proj/.zshrc")),
    case(".profile", Write, Ask, Some("proj/.profile")),
    case(".gitignore", Write, Allow, Some("proj/.gitignore")),
    case(".github/workflows/ci.yml", Write, Allow, Some("proj/.github/workflows/ci.yml")),
    case("src/../.git/hooks/pre-commit", Write, Ask, Some("proj/.git/hooks/pre-commit")),
    case("new/../.git/hooks/pre-commit", Write, Ask, Some("proj/.git/hooks/pre-commit")),
    // Read-only roots and extra roots.
    case("{T}/lib/book.md", Read, Allow, Some("lib/book.md")),
    case("{T}/lib/book.md", Write, Deny, Some("lib/book.md")),
    case("{T}/lib/new.md", Write, Deny, Some("lib/new.md")),
    case("{T}/lib_link/book.md", Read, Allow, Some("lib/book.md")),
    case("lib_ref/book.md", Read, Allow, Some("lib/book.md")),
    case("lib_ref/book.md", Write, Deny, Some("lib/book.md")),
    case("{T}/extra/new.txt", Write, Allow, Some("extra/new.txt")),
    case("{T}/skills/x.md", Read, Deny, Some("skills/x.md")),
];

fn expected_path(base: &std::path::Path, resolved: &str) -> PathBuf {
    if resolved.starts_with('/') {
        PathBuf::from(resolved)
    } else if resolved.is_empty() {
        base.to_path_buf()
    } else {
        base.join(resolved)
    }
}

#[test]
fn corpus() {
    let fixture = common::fixture();
    let sandbox = fixture.sandbox();
    let base = fixture.base.to_str().unwrap();
    let mut failures = Vec::new();
    for case in CASES {
        let path = case.path.replace("{T}", base);
        let check = sandbox.check(&path, case.access);
        let resolve = sandbox.resolve(&path, case.access);
        let mut wrong = Vec::new();
        if check.decision() != case.decision {
            wrong.push(format!(
                "decision {:?} (reason: {})",
                check.decision(),
                check.verdict.reason()
            ));
        }
        let expected = case
            .resolved
            .map(|resolved| expected_path(&fixture.base, resolved));
        if expected.is_some() && check.resolved != expected {
            wrong.push(format!("resolved {:?}, expected {expected:?}", check.resolved));
        }
        if case.resolved.is_none() && check.resolved.is_some() {
            wrong.push(format!("resolved {:?}, expected none", check.resolved));
        }
        // `root_holding` is the check's root, without the check.
        if sandbox.root_holding(&path) != check.root {
            wrong.push(format!(
                "root_holding {:?}, the check's root {:?}",
                sandbox.root_holding(&path),
                check.root
            ));
        }
        // `resolve` fails exactly when `check` denies, and agrees on the place otherwise.
        match (&resolve, case.decision) {
            (Err(_), Deny) => {}
            (Ok(canonical), Allow | Ask) if Some(canonical.as_path()) == check.resolved.as_deref() => {}
            (other, _) => wrong.push(format!("resolve gave {other:?}")),
        }
        // An allow names the path as written, where it resolves and the root it lies in.
        if check.decision() == Allow {
            let root = check.root.and_then(|index| sandbox.roots().get(index)).unwrap();
            let start = format!(
                "`{path}` resolves to `{}` inside the ",
                check.resolved.as_deref().unwrap_or(&check.absolute).display()
            );
            let end = format!(" `{}`", root.path().display());
            let reason = check.verdict.reason();
            if !(reason.starts_with(&start) && reason.ends_with(&end)) {
                wrong.push(format!("allow reason {reason:?}, expected {start:?}…{end:?}"));
            }
        }
        if let (Deny, Some(resolved), None) = (check.decision(), &check.resolved, check.root) {
            let resolved = resolved.display().to_string();
            if !check.verdict.reason().contains(&resolved) {
                wrong.push(format!(
                    "deny reason does not name the resolved path: {}",
                    check.verdict.reason()
                ));
            }
        }
        if !wrong.is_empty() {
            failures.push(format!("{:?} {:?}: {}", case.path, case.access, wrong.join("; ")));
        }
    }
    assert!(CASES.len() >= 80, "the corpus has {} cases", CASES.len());
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

#[test]
fn long_paths_are_refused_with_the_path_named() {
    let fixture = common::fixture();
    let sandbox = fixture.sandbox();
    let long_name = "a".repeat(256);
    let check = sandbox.check(&long_name, Write);
    assert_eq!(check.decision(), Deny);
    assert!(
        check.verdict.reason().contains("longer than the limit of 255"),
        "{}",
        check.verdict.reason()
    );
    assert_eq!(sandbox.check(&"a".repeat(255), Write).decision(), Allow);

    let long_path = "a/".repeat(2100);
    let check = sandbox.check(&long_path, Write);
    assert_eq!(check.decision(), Deny);
    assert!(
        check.verdict.reason().contains("longer than the limit of 4095"),
        "{}",
        check.verdict.reason()
    );
    // Within the limit as written, too long once joined to the working directory.
    let nearly = "b/".repeat(2046);
    assert!(nearly.len() < 4096);
    assert_eq!(sandbox.check(&nearly, Write).decision(), Deny);
}

#[test]
fn nul_bytes_are_refused_and_shown_escaped() {
    let fixture = common::fixture();
    let check = fixture.sandbox().check("src/main.rs\0.png", Read);
    assert_eq!(check.decision(), Deny);
    assert!(
        check
            .verdict
            .reason()
            .contains("`src/main.rs\\0.png` contains a NUL byte"),
        "{}",
        check.verdict.reason()
    );
}

#[test]
fn the_path_as_written_and_the_resolved_path_are_both_reported() {
    let fixture = common::fixture();
    let check = fixture.sandbox().check("dotdot_link/../x.rs", Read);
    assert_eq!(check.absolute, fixture.proj().join("x.rs"));
    assert_eq!(check.resolved, Some(fixture.proj().join("src/lib/x.rs")));
    assert!(check.through_symlink);
    assert_eq!(check.root, Some(0));
    assert_eq!(check.decision(), Allow);

    let plain = fixture.sandbox().check("src/main.rs", Write);
    assert!(!plain.through_symlink);
    assert_eq!(plain.protected, None);
    assert_eq!(plain.input, "src/main.rs");
}

#[test]
fn protection_applies_to_the_link_and_to_its_target() {
    let fixture = common::fixture();
    let p = fixture.proj();
    std::os::unix::fs::symlink("docs", p.join(".vscode")).unwrap();
    let sandbox = fixture.sandbox();
    // Written as a protected name, resolving to an ordinary one.
    let check = sandbox.check(".vscode/readme.md", Write);
    assert_eq!(check.resolved, Some(p.join("docs/readme.md")));
    assert!(check.protected.is_some());
    assert_eq!(check.decision(), Ask);
    // Written as an ordinary name, resolving to a protected one.
    let check = sandbox.check("link_to_env", Read);
    assert!(check.protected.as_deref().unwrap().contains(".env"));
}

#[test]
fn outside_reasons_name_the_resolved_path() {
    let fixture = common::fixture();
    let check = fixture.sandbox().check("link_out_dir/secret.txt", Read);
    let reason = check.verdict.reason();
    let resolved = fixture.base.join("outside/secret.txt");
    assert!(reason.contains(&format!("`{}`", resolved.display())), "{reason}");
    assert!(reason.contains("`link_out_dir/secret.txt`"), "{reason}");
    assert!(reason.contains("outside the allowed roots"), "{reason}");
}

#[test]
fn home_is_required_for_tilde() {
    let fixture = common::fixture();
    let mut config = fixture.config();
    config.home = None;
    let sandbox = agent_fs_sandbox::PathSandbox::new(config).unwrap();
    let check = sandbox.check("~/notes.txt", Read);
    assert_eq!(check.decision(), Deny);
    assert!(check.verdict.reason().contains("`~/notes.txt`"));
    assert!(matches!(
        sandbox.resolve("~", Read),
        Err(agent_fs_sandbox::PathSandboxError::NoHome { .. })
    ));
    // `~notes.md` needs no home: it is a plain name.
    assert_eq!(sandbox.check("~notes.md", Read).decision(), Allow);
}

#[test]
fn a_working_directory_given_through_a_link_is_its_target() {
    let fixture = common::fixture();
    let mut config = fixture.config();
    config.cwd = fixture.base.join("proj_link");
    let sandbox = agent_fs_sandbox::PathSandbox::new(config).unwrap();
    assert_eq!(sandbox.cwd(), fixture.proj());
    assert_eq!(sandbox.roots()[0].given(), fixture.base.join("proj_link"));
    let written = format!("{}/proj_link/src/main.rs", fixture.base.display());
    let check = sandbox.check(&written, Write);
    assert_eq!(check.resolved, Some(fixture.proj().join("src/main.rs")));
    assert!(
        !check.through_symlink,
        "the configured link is not a link of the path"
    );
    assert_eq!(check.decision(), Allow);
    // `..` right after the configured link steps up from its target, as the kernel does.
    let up = format!("{}/proj_link/../outside/secret.txt", fixture.base.display());
    assert_eq!(
        sandbox.check(&up, Read).resolved,
        Some(fixture.base.join("outside/secret.txt"))
    );
    assert_eq!(
        sandbox.check("src/main.rs", Read).absolute,
        fixture.base.join("proj_link/src/main.rs")
    );
}

#[test]
fn roots_are_canonical_and_missing_extra_roots_are_left_out() {
    let fixture = common::fixture();
    let sandbox = fixture.sandbox();
    let kinds: Vec<_> = sandbox
        .roots()
        .iter()
        .map(|root| (root.kind(), root.read_only()))
        .collect();
    use agent_fs_sandbox::RootKind::{Additional, Cwd, Library};
    assert_eq!(
        kinds,
        vec![
            (Cwd, false),
            (Library, true),
            (Additional, false),
            (Additional, false)
        ]
    );
    assert_eq!(sandbox.missing_roots(), &[fixture.base.join("skills")]);
    let missing_cwd = agent_fs_sandbox::SandboxConfig::new(fixture.base.join("nope"));
    let error = agent_fs_sandbox::PathSandbox::new(missing_cwd).unwrap_err();
    assert!(error.to_string().contains("nope`"), "{error}");
    let file_cwd = agent_fs_sandbox::SandboxConfig::new(fixture.base.join("proj/src/main.rs"));
    assert!(agent_fs_sandbox::PathSandbox::new(file_cwd).is_err());
}

#[test]
fn extra_protected_patterns_from_settings() {
    let fixture = common::fixture();
    let protected = agent_fs_sandbox::ProtectedPaths::default()
        .with_extra(["*.pem", "config/prod/"])
        .unwrap()
        .with_extra_writes(["Cargo.lock"])
        .unwrap();
    let sandbox = agent_fs_sandbox::PathSandbox::new(fixture.config().with_protected(protected)).unwrap();
    assert_eq!(sandbox.check("keys/server.pem", Read).decision(), Ask);
    assert_eq!(sandbox.check("config/prod/db.toml", Write).decision(), Ask);
    assert_eq!(sandbox.check("config/dev/db.toml", Write).decision(), Allow);
    assert_eq!(sandbox.check("Cargo.lock", Write).decision(), Ask);
    assert_eq!(sandbox.check("Cargo.lock", Read).decision(), Allow);
    assert_eq!(
        sandbox.check(".git/config", Write).decision(),
        Ask,
        "the defaults stay"
    );
    let error = agent_fs_sandbox::ProtectedPaths::default()
        .with_extra(["{a"])
        .unwrap_err();
    assert!(error.to_string().contains("`{a`"), "{error}");
}

#[test]
fn the_sandbox_is_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<agent_fs_sandbox::PathSandbox>();
    shared::<agent_fs_sandbox::CanonicalPath>();
}

/// The matches of `pattern`, relative to the fixture's base, sorted.
fn glob(fixture: &common::Fixture, pattern: &str, limit: usize) -> (Vec<String>, Option<String>) {
    let matches = fixture.sandbox().glob(pattern, limit);
    let mut paths: Vec<String> = matches
        .paths
        .iter()
        .map(|p| {
            std::path::Path::new(p)
                .strip_prefix(&fixture.base)
                .map_or_else(|_| p.clone(), |rest| rest.display().to_string())
        })
        .collect();
    paths.sort();
    (paths, matches.incomplete)
}

#[test]
fn globs_expand_as_the_shell_expands_them() {
    let f = common::fixture();
    // A leading `.` must be written to match hidden names; then `.` and `..` match too.
    let (env, incomplete) = glob(&f, ".e*", 100);
    assert_eq!(env, ["proj/.env", "proj/.env.example", "proj/.env.local"]);
    assert_eq!(incomplete, None);
    assert_eq!(glob(&f, ".[e]nv", 100).0, ["proj/.env"]);
    assert_eq!(glob(&f, ".?", 100).0, ["proj/.."]);
    let (src, _) = glob(&f, "src/*", 100);
    assert_eq!(src, ["proj/src/lib", "proj/src/main.rs"]);
    // `*` never reaches a hidden name, but it does reach links, whose targets the check then resolves.
    let (top, _) = glob(&f, "*", 100);
    assert!(!top.iter().any(|p| p.contains("/.env")), "{top:?}");
    assert!(top.contains(&"proj/link_out_file".to_owned()), "{top:?}");
    // Through a link to a directory outside, and through `~`.
    assert_eq!(
        glob(&f, "link_out_dir/*.txt", 100).0,
        ["proj/link_out_dir/secret.txt"]
    );
    assert_eq!(glob(&f, "~/.b*", 100).0, ["home/.bashrc"]);
    assert_eq!(
        glob(&f, "../out*/s*", 100).0,
        ["proj/../outside/secret.txt", "proj/../outside/sub"]
    );
    // A literal component after a glob: only names that exist.
    assert_eq!(
        glob(&f, "*/main.rs", 100).0,
        [
            "proj/chain_in1/main.rs",
            "proj/chain_in2/main.rs",
            "proj/link_in/main.rs",
            "proj/src/main.rs"
        ]
    );
    assert!(glob(&f, "*/nothing.rs", 100).0.is_empty());
    // `.` and `..` only in a directory that exists (found by fuzzing).
    assert!(glob(&f, "missing/.?", 100).0.is_empty());
    assert!(glob(&f, "src/main.rs/.*", 100).0.is_empty());
    // `**` reaches every depth.
    assert!(
        glob(&f, "src/**/*.rs", 100)
            .0
            .contains(&"proj/src/lib/deep/file.rs".to_owned())
    );
    // No glob, nothing to expand: the path's own check covers it.
    assert!(glob(&f, "src/main.rs", 100).0.is_empty());
    // Past the limit the expansion says so.
    let (few, incomplete) = glob(&f, "*", 3);
    assert_eq!(few.len(), 3);
    assert!(incomplete.unwrap().contains("more than 3 paths match"));
}

#[test]
fn every_glob_match_meets_the_checks_of_its_own_path() {
    let f = common::fixture();
    let sandbox = f.sandbox();
    let decisions = |pattern: &str| -> Vec<Decision> {
        sandbox
            .glob(pattern, 100)
            .paths
            .iter()
            .map(|p| sandbox.check(p, Read).decision())
            .collect()
    };
    assert!(decisions(".e*").contains(&Ask), "`.env` is protected");
    assert!(decisions("link_out_*").contains(&Deny), "a link out of the roots");
    assert!(decisions("docs/*").iter().all(|d| *d == Allow));
}
