//! Build script of the `agent-guard` command: the commit and the build profile that `--version` prints.
//!
//! The commit is `git rev-parse --short=12 HEAD`, with `+dirty` when the sources that go into the binary (`crates/`,
//! `Cargo.toml`, `Cargo.lock`) differ from it. Without git, outside a checkout (a source archive), or when the
//! repository found is not the one that holds this crate, it is `unknown`. The script runs again when HEAD moves
//! (the HEAD file, the branch's ref, `packed-refs`), when the index changes and when a file under `crates/` changes,
//! so neither the hash nor the `+dirty` mark goes stale.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let commit = commit(&manifest).unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=AGENT_GUARD_COMMIT={commit}");
    // Cargo sets PROFILE to `release` for release-based profiles and `debug` for the others.
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "unknown".to_owned());
    println!("cargo:rustc-env=AGENT_GUARD_PROFILE={profile}");
    // The binary is linked at a fixed address on Linux: a position-independent executable must have its ~25,000
    // relative relocations applied at every start, which writes (and so copies) every page of relocated data;
    // fixed, those pages are read-only file pages shared by every run. The hook starts once per tool call.
    if std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}

/// The short commit hash of the checkout holding `manifest`, with `+dirty`; `None` when there is none.
fn commit(manifest: &Path) -> Option<String> {
    // Only a repository that tracks this very crate counts: a copy vendored into another project's checkout must
    // not report that project's commit.
    git(manifest, &["ls-files", "--error-unmatch", "Cargo.toml"])?;
    let workspace = manifest.parent()?.parent()?;
    watch(manifest, workspace);
    let hash = git(manifest, &["rev-parse", "--short=12", "HEAD"])?;
    let status = git(
        workspace,
        &[
            "status",
            "--porcelain",
            "--",
            "crates",
            "Cargo.toml",
            "Cargo.lock",
        ],
    )?;
    Some(if status.is_empty() {
        hash
    } else {
        format!("{hash}+dirty")
    })
}

/// Tells cargo which files move the commit or the dirty mark. Only files that exist are named: cargo reruns a
/// build script on every build while a named file is missing.
fn watch(manifest: &Path, workspace: &Path) {
    let mut paths = vec![
        workspace.join("crates"),
        workspace.join("Cargo.toml"),
        workspace.join("Cargo.lock"),
    ];
    let mut git_paths = vec!["HEAD".to_owned(), "packed-refs".to_owned(), "index".to_owned()];
    if let Some(branch) = git(manifest, &["symbolic-ref", "-q", "HEAD"]) {
        git_paths.push(branch);
    }
    for name in git_paths {
        // `--git-path` knows where a worktree keeps its HEAD and index, and where the shared refs are.
        if let Some(path) = git(
            manifest,
            &["rev-parse", "--path-format=absolute", "--git-path", &name],
        ) {
            paths.push(PathBuf::from(path));
        }
    }
    for path in paths.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// The trimmed stdout of `git ARGS` run in `dir`; `None` when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8(out.stdout).ok()?.trim().to_owned())
}
