//! Properties: an accepted path canonicalises inside a root, and checking never panics on any string.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::path::{Path, PathBuf};

use agent_fs_sandbox::{Access, PathSandbox};
use agent_tool_traits::Decision;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// Names of the fixture (links in and out, loops, magic links) mixed with `..`, `.`, `~` and new names.
const SEGMENTS: &[&str] = &[
    "src",
    "main.rs",
    "lib",
    "deep",
    "file.rs",
    "..",
    ".",
    "",
    "link_in",
    "link_in_file",
    "link_out_dir",
    "link_out_abs",
    "link_out_file",
    "up_link",
    "dotdot_link",
    "chain1",
    "chain_in1",
    "dangling_out",
    "dangling_in",
    "loop_a",
    "self_loop",
    "proc_link",
    "lib_ref",
    "new",
    "a..b.txt",
    "~notes.md",
    "~",
    ".git",
    ".env",
    "proj",
    "proj-evil",
    "outside",
    "secret.txt",
    "home",
    "extra",
    "proc",
    "self",
    "root",
    "fd",
    "0",
];

/// A path built from fixture names: relative, absolute below the base, or starting with `~/`, with or without a
/// trailing slash.
fn fixture_path(base: String) -> impl Strategy<Value = String> {
    let body = prop::collection::vec(prop::sample::select(SEGMENTS), 0..9).prop_map(|parts| parts.join("/"));
    (0..4u8, body, any::<bool>()).prop_map(move |(start, body, slash)| {
        let mut path = match start {
            0 => body,
            1 => format!("{base}/{body}"),
            2 => format!("~/{body}"),
            _ => format!("/{body}"),
        };
        if slash {
            path.push('/');
        }
        path
    })
}

/// The path `input` names for the kernel, before any resolution.
fn raw_path(fixture: &common::Fixture, input: &str) -> PathBuf {
    let expanded = match input.strip_prefix("~/") {
        Some(rest) => fixture.base.join("home").join(rest),
        None if input == "~" => fixture.base.join("home"),
        None => PathBuf::from(input),
    };
    fixture.proj().join(expanded)
}

/// The deepest existing ancestor of `path`, and the rest.
fn split_existing(path: &Path) -> (PathBuf, PathBuf) {
    let mut existing = path.to_path_buf();
    let mut tail = Vec::new();
    while std::fs::symlink_metadata(&existing).is_err() {
        tail.push(existing.file_name().unwrap().to_owned());
        assert!(existing.pop(), "no existing ancestor of {path:?}");
    }
    (existing, tail.iter().rev().collect())
}

fn accepted_inside_a_root(
    fixture: &common::Fixture,
    sandbox: &PathSandbox,
    input: &str,
    access: Access,
) -> Result<(), TestCaseError> {
    let check = sandbox.check(input, access);
    let resolved = sandbox.resolve(input, access);
    prop_assert_eq!(
        resolved.is_ok(),
        check.decision() != Decision::Deny,
        "{:?}: {:?}",
        input,
        check.verdict
    );
    let Ok(canonical) = resolved else { return Ok(()) };
    let path = canonical.as_path();
    // The existing part is what the operating system canonicalises it to, and the tail holds no `.` or `..`.
    let (existing, tail) = split_existing(path);
    let recanonical = std::fs::canonicalize(&existing).unwrap().join(&tail);
    prop_assert_eq!(&recanonical, path, "{:?}", input);
    prop_assert!(
        tail.components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
    );
    let root = &sandbox.roots()[canonical.root()];
    prop_assert!(
        recanonical.starts_with(root.path()),
        "{:?} resolved to {:?} outside {:?}",
        input,
        path,
        root
    );
    // Where the kernel can resolve the path as written, it agrees.
    if let Ok(kernel) = std::fs::canonicalize(raw_path(fixture, input)) {
        prop_assert_eq!(&kernel, path, "{:?}", input);
    }
    Ok(())
}

#[test]
fn an_accepted_path_canonicalises_inside_a_root() {
    let fixture = common::fixture();
    let sandbox = fixture.sandbox();
    let base = fixture.base.to_str().unwrap().to_owned();
    let mut runner = TestRunner::new(Config {
        cases: 3000,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        fixture_path(base),
        prop_oneof![Just(Access::Read), Just(Access::Write)],
    );
    runner
        .run(&strategy, |(input, access)| {
            accepted_inside_a_root(&fixture, &sandbox, &input, access)
        })
        .unwrap();
}

#[test]
fn checking_never_panics_on_any_string() {
    let fixture = common::fixture();
    let sandbox = fixture.sandbox();
    let mut runner = TestRunner::new(Config {
        cases: 2000,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = prop_oneof![
        any::<String>(),
        "[./~a-z\\x00]{0,64}",
        "(\\.\\./|/|~|[a-z]{1,3}/){0,40}"
    ];
    runner
        .run(&strategy, |input| {
            let check = sandbox.check(&input, Access::Write);
            prop_assert_eq!(check.input, input.clone());
            accepted_inside_a_root(&fixture, &sandbox, &input, Access::Read)
        })
        .unwrap();
}

/// Whatever `open_beneath` opens, for reading or for writing, is inside the root, whichever links lie on the way.
#[test]
fn open_beneath_only_opens_inside_the_root() {
    use std::os::fd::AsRawFd;

    let fixture = common::fixture();
    let root = fixture.proj();
    let mut runner = TestRunner::new(Config {
        cases: 1500,
        failure_persistence: None,
        ..Config::default()
    });
    let body = prop::collection::vec(prop::sample::select(SEGMENTS), 1..7).prop_map(|parts| parts.join("/"));
    runner
        .run(&(body, any::<bool>()), |(relative, write)| {
            let options = if write {
                agent_fs_sandbox::OpenOptions::writing()
            } else {
                agent_fs_sandbox::OpenOptions::reading()
            };
            if let Ok(file) = agent_fs_sandbox::open_beneath(&root, Path::new(&relative), &options) {
                let opened = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).unwrap();
                prop_assert!(opened.starts_with(&root), "{:?} opened {:?}", relative, opened);
            }
            Ok(())
        })
        .unwrap();
    // Nothing was created outside the root.
    let outside: Vec<_> = std::fs::read_dir(fixture.base.join("outside"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let mut outside: Vec<_> = outside
        .iter()
        .map(|name| name.to_string_lossy().into_owned())
        .collect();
    outside.sort();
    assert_eq!(outside, ["secret.txt", "sub"]);
}
