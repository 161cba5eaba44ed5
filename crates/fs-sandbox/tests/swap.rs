//! A symbolic link swapped in between the check and the open cannot lead outside the root.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::io::{Read, Write};
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agent_fs_sandbox::{Access, OpenOptions, PathSandboxError, open_beneath};

fn read_all(mut file: std::fs::File) -> String {
    let mut text = String::new();
    file.read_to_string(&mut text).unwrap();
    text
}

#[test]
fn a_parent_swapped_for_a_link_after_the_check_is_refused() {
    let fixture = common::fixture();
    let p = fixture.proj();
    std::fs::create_dir_all(p.join("work")).unwrap();
    std::fs::write(p.join("work/secret.txt"), "inside").unwrap();
    let sandbox = fixture.sandbox();
    let read = sandbox.resolve("work/secret.txt", Access::Read).unwrap();
    let write = sandbox.resolve("work/new.txt", Access::Write).unwrap();
    assert_eq!(
        read_all(sandbox.open_beneath(&read, &OpenOptions::reading()).unwrap()),
        "inside"
    );

    // The attacker's move: the checked directory becomes a link to outside, first absolute, then relative.
    for target in [
        fixture.base.join("outside"),
        Path::new("../outside").to_path_buf(),
    ] {
        let _ = std::fs::remove_file(p.join("work"));
        if p.join("work").is_dir() {
            std::fs::rename(p.join("work"), p.join("work_checked")).unwrap();
        }
        symlink(&target, p.join("work")).unwrap();
        std::fs::write(fixture.base.join("outside/secret.txt"), "outside").unwrap();
        let opened = sandbox.open_beneath(&read, &OpenOptions::reading());
        assert!(
            matches!(opened, Err(PathSandboxError::Changed { .. })),
            "{target:?}: {opened:?}"
        );
        let created = sandbox.open_beneath(&write, &OpenOptions::writing());
        assert!(
            matches!(created, Err(PathSandboxError::Changed { .. })),
            "{target:?}: {created:?}"
        );
        // The free function follows links beneath the root, and refuses this one because it leads outside.
        let opened = open_beneath(&p, Path::new("work/secret.txt"), &OpenOptions::reading());
        assert!(
            matches!(opened, Err(PathSandboxError::Escape { .. })),
            "{target:?}: {opened:?}"
        );
        assert!(
            !fixture.base.join("outside/new.txt").exists(),
            "a file was created outside"
        );
    }
}

#[test]
fn a_link_swapped_in_towards_a_protected_directory_inside_is_refused() {
    let fixture = common::fixture();
    let p = fixture.proj();
    std::fs::create_dir_all(p.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(p.join("build")).unwrap();
    let sandbox = fixture.sandbox();
    let checked = sandbox.resolve("build/pre-commit", Access::Write).unwrap();
    assert_eq!(
        sandbox.check("build/pre-commit", Access::Write).decision(),
        agent_tool_traits::Decision::Allow
    );
    std::fs::remove_dir(p.join("build")).unwrap();
    symlink(".git/hooks", p.join("build")).unwrap();
    let opened = sandbox.open_beneath(&checked, &OpenOptions::writing());
    assert!(
        matches!(opened, Err(PathSandboxError::Changed { .. })),
        "{opened:?}"
    );
    assert!(!p.join(".git/hooks/pre-commit").exists());
}

#[test]
fn a_path_checked_for_reading_is_not_opened_for_writing() {
    let fixture = common::fixture();
    let sandbox = fixture.sandbox();
    let checked = sandbox.resolve("src/main.rs", Access::Read).unwrap();
    assert_eq!(checked.access(), Access::Read);
    for options in [
        OpenOptions::writing(),
        OpenOptions::new().read(true).write(true),
        OpenOptions::new().append(true),
    ] {
        let opened = sandbox.open_beneath(&checked, &options);
        assert!(
            matches!(opened, Err(PathSandboxError::CheckedForRead { .. })),
            "{options:?}: {opened:?}"
        );
    }
    assert!(sandbox.open_beneath(&checked, &OpenOptions::reading()).is_ok());
}

#[test]
fn a_file_swapped_for_a_link_after_the_check_is_refused() {
    let fixture = common::fixture();
    let p = fixture.proj();
    std::fs::write(p.join("data.txt"), "inside").unwrap();
    let sandbox = fixture.sandbox();
    let checked = sandbox.resolve("data.txt", Access::Write).unwrap();
    std::fs::remove_file(p.join("data.txt")).unwrap();
    symlink(fixture.base.join("outside/secret.txt"), p.join("data.txt")).unwrap();

    for options in [
        OpenOptions::reading(),
        OpenOptions::writing(),
        OpenOptions::new().append(true),
    ] {
        let opened = sandbox.open_beneath(&checked, &options);
        assert!(opened.is_err(), "{options:?}: {opened:?}");
    }
    assert_eq!(
        std::fs::read_to_string(fixture.base.join("outside/secret.txt")).unwrap(),
        "outside"
    );

    // A link to a magic link is refused too.
    std::fs::remove_file(p.join("data.txt")).unwrap();
    symlink("/proc/self/root/etc/hostname", p.join("data.txt")).unwrap();
    assert!(sandbox.open_beneath(&checked, &OpenOptions::reading()).is_err());
}

#[test]
fn a_checked_path_opens_and_creates_inside() {
    let fixture = common::fixture();
    let sandbox = fixture.sandbox();
    let checked = sandbox.resolve("new/dir/file.txt", Access::Write).unwrap();
    assert_eq!(checked.relative(), Path::new("new/dir/file.txt"));
    assert_eq!(checked.root(), 0);
    sandbox
        .open_beneath(&checked, &OpenOptions::writing())
        .unwrap()
        .write_all(b"made")
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(fixture.proj().join("new/dir/file.txt")).unwrap(),
        "made"
    );
    // A link inside that stays inside is followed.
    let through = sandbox.resolve("link_in/main.rs", Access::Read).unwrap();
    assert_eq!(
        read_all(sandbox.open_beneath(&through, &OpenOptions::reading()).unwrap()),
        "fn main() {}"
    );
    // A checked path holds no link: the link was resolved at check time and its target is opened.
    assert_eq!(through.relative(), Path::new("src/main.rs"));
    let book = sandbox
        .resolve(&format!("{}/lib/book.md", fixture.base.display()), Access::Read)
        .unwrap();
    assert_eq!(
        read_all(sandbox.open_beneath(&book, &OpenOptions::reading()).unwrap()),
        "library"
    );
    assert_eq!(book.root(), 1);
    let book = sandbox.resolve(&format!("{}/lib/book.md", fixture.base.display()), Access::Write);
    assert!(matches!(book, Err(PathSandboxError::ReadOnly { .. })), "{book:?}");
}

#[test]
fn a_path_from_another_sandbox_is_refused() {
    let first = common::fixture();
    let second = common::fixture();
    let checked = first.sandbox().resolve("src/main.rs", Access::Read).unwrap();
    let opened = second.sandbox().open_beneath(&checked, &OpenOptions::reading());
    assert!(
        matches!(opened, Err(PathSandboxError::NotBeneath { .. })),
        "{opened:?}"
    );
}

/// A second thread exchanges a real directory and a link to outside under the same name as fast as it can; no
/// open through that name ever reads the outside file.
#[test]
fn a_link_raced_against_the_open_never_escapes() {
    let fixture = common::fixture();
    let p = fixture.proj();
    std::fs::create_dir_all(p.join("flip")).unwrap();
    std::fs::write(p.join("flip/data.txt"), "inside").unwrap();
    std::fs::write(fixture.base.join("outside/data.txt"), "outside").unwrap();
    symlink(fixture.base.join("outside"), p.join("flop")).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let stop = Arc::clone(&stop);
        let p = p.clone();
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                nix::fcntl::renameat2(
                    nix::fcntl::AT_FDCWD,
                    &p.join("flip"),
                    nix::fcntl::AT_FDCWD,
                    &p.join("flop"),
                    nix::fcntl::RenameFlags::RENAME_EXCHANGE,
                )
                .unwrap();
                swaps += 1;
            }
            swaps
        })
    };
    let (mut inside, mut refused) = (0, 0);
    for _ in 0..3000 {
        match open_beneath(&p, Path::new("flip/data.txt"), &OpenOptions::reading()) {
            Ok(file) => {
                assert_eq!(read_all(file), "inside", "an open escaped the root");
                inside += 1;
            }
            Err(_) => refused += 1,
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = flipper.join().unwrap();
    assert!(
        swaps > 0 && inside + refused == 3000,
        "swaps {swaps}, inside {inside}, refused {refused}"
    );
}
