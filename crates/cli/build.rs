//! Build script of the `agent-guard` command: the commit, the build profile and the linkage that `--version`
//! prints, and the link of the binary itself (at a fixed address, and statically against glibc where it can).
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
    let linkage = match static_glibc() {
        Some(dir) => {
            println!("cargo:rustc-link-arg-bins=-static");
            println!("cargo:rustc-link-arg-bins=-L{}", dir.display());
            "statically linked"
        }
        None => "dynamically linked",
    };
    println!("cargo:rustc-env=AGENT_GUARD_LINKED={linkage}");
    println!("cargo:rerun-if-env-changed={LINKAGE_ENV}");
    println!("cargo:rerun-if-changed=build.rs");
}

/// Set to `dynamic` to link the binary against the shared C library even where it could be linked statically.
const LINKAGE_ENV: &str = "AGENT_GUARD_LINKAGE";

/// The libraries the Rust standard library names for a `*-linux-gnu` target, which the archives of glibc and
/// of gcc's runtime replace in a static link: each name with the archives that stand in for it.
const STATIC_STAND_INS: &[(&str, &[&str])] = &[
    ("gcc_s", &["libgcc_eh.a", "libgcc.a"]),
    ("c", &["libc.a", "libgcc.a", "libgcc_eh.a"]),
    ("m", &["libm.a"]),
    ("dl", &["libdl.a"]),
    ("pthread", &["libpthread.a"]),
    ("rt", &["librt.a"]),
    ("util", &["libutil.a"]),
];

/// Prepares a static link against glibc and returns the folder of stand-ins for the linker, or `None` where the
/// binary stays dynamic (another target than this machine's `*-linux-gnu`, an archive missing, or
/// `AGENT_GUARD_LINKAGE=dynamic`).
///
/// Why: the hook is a process per tool call, and loading three shared libraries and binding their symbols is most
/// of what it costs to start besides the kernel's own work (about 0.4 ms of 0.9 ms above `/bin/true`). Rust links
/// statically against glibc only with `-C target-feature=+crt-static`, which cannot be given to one crate: set
/// for the whole build it breaks the procedural macros (they must be shared objects), and set per target it needs
/// `--target` on every cargo command, which moves the binary out of `target/release`. So the binary alone is linked
/// with `-static`, and the libraries the standard library asks for (`-lgcc_s`, `-lc`, …, searched as shared
/// libraries) are found first in a folder of linker scripts that name the static archives instead. Unwinding,
/// name lookups and user lookups work as in a dynamic binary (glibc loads its NSS modules itself).
fn static_glibc() -> Option<PathBuf> {
    if std::env::var(LINKAGE_ENV).is_ok_and(|v| v == "dynamic") {
        return None;
    }
    let target = std::env::var("TARGET").ok()?;
    if !target.ends_with("-linux-gnu") || std::env::var("HOST").ok()? != target {
        return None;
    }
    let linker = std::env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".to_owned());
    let dir = PathBuf::from(std::env::var_os("OUT_DIR")?).join("static-glibc");
    std::fs::create_dir_all(&dir).ok()?;
    for (name, archives) in STATIC_STAND_INS {
        let mut paths = Vec::new();
        for archive in *archives {
            paths.push(archive_path(&linker, archive)?);
        }
        let script = format!(
            "/* -l{name} in agent-guard's static link (see crates/cli/build.rs) */\nGROUP ( {} )\n",
            paths.join(" ")
        );
        std::fs::write(dir.join(format!("lib{name}.so")), script).ok()?;
    }
    Some(dir)
}

/// Where the C compiler `linker` finds `archive`, when it exists. A path with a space or a parenthesis could not
/// be named in a linker script, and counts as missing.
fn archive_path(linker: &str, archive: &str) -> Option<String> {
    let out = Command::new(linker)
        .arg(format!("-print-file-name={archive}"))
        .output()
        .ok()?;
    let path = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    // Without the archive the compiler prints the bare name back.
    let usable = out.status.success()
        && Path::new(&path).is_absolute()
        && Path::new(&path).is_file()
        && !path.contains([' ', '(', ')']);
    usable.then_some(path)
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
