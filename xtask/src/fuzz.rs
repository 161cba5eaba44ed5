//! `cargo xtask fuzz-smoke`: builds every cargo-fuzz target in `fuzz/` with the address sanitizer and runs each
//! for a few seconds, starting from the seed inputs in `fuzz/seeds/<target>/`.
//!
//! The long runs stay manual (`cargo fuzz run -O <target>`, docs/ARCHITECTURE.md, "Testing"); this step proves in
//! CI that every target still builds, links against libFuzzer and survives its seeds and a few seconds of mutation.
//! It builds without optimisation (`--dev`, debug assertions on): an optimised sanitizer build of the workspace takes
//! several times longer to compile than the few seconds each target runs.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// How long each target fuzzes in the smoke run.
const SECONDS_PER_TARGET: u32 = 5;
/// libFuzzer's per-input time limit. The product bounds a decision to 5 s; the sanitizer build runs several times
/// slower than release, so the smoke run reports a hang only well past that, never a merely slow machine.
const INPUT_TIMEOUT_SECONDS: u32 = 30;

/// Runs the smoke test of every fuzz target.
pub(crate) fn smoke() -> Result<()> {
    let fuzz_dir = crate::workspace_root().join("fuzz");
    crate::ensure_cargo_tool("fuzz", "cargo-fuzz")?;
    let targets = list_targets(&fuzz_dir)?;
    if targets.is_empty() {
        bail!("`cargo fuzz list` in {} found no fuzz target", fuzz_dir.display());
    }
    // cargo-fuzz has no `--locked`: the fuzz crate's lock file is checked against its manifest first, so that a
    // stale one fails here instead of being rewritten by the build (and left changed in the tree).
    crate::cargo_in(Some(&fuzz_dir), &["fetch", "--locked"], &[]).context(
        "fuzz/Cargo.lock is stale: update it with `cargo update --workspace` in fuzz/ and commit it",
    )?;
    let started = Instant::now();
    cargo_fuzz(&fuzz_dir, &["build", "--dev"])?;
    eprintln!("fuzz targets built in {:.1?}", started.elapsed());
    let scratch = std::env::temp_dir().join(format!("agent-guard-fuzz-smoke-{}", std::process::id()));
    let result = targets
        .iter()
        .try_for_each(|target| run_target(&fuzz_dir, &scratch, target));
    // The inputs a smoke run finds are not kept: the seeds are the corpus under version control.
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn run_target(fuzz_dir: &Path, scratch: &Path, target: &str) -> Result<()> {
    let seeds = fuzz_dir.join("seeds").join(target);
    if !seeds.is_dir() {
        bail!(
            "fuzz target `{target}` has no seed inputs: add some under {}",
            seeds.display()
        );
    }
    let corpus = scratch.join(target);
    std::fs::create_dir_all(&corpus).with_context(|| format!("cannot create {}", corpus.display()))?;
    let started = Instant::now();
    let corpus = corpus.to_string_lossy();
    let seeds = seeds.to_string_lossy();
    let max_time = format!("-max_total_time={SECONDS_PER_TARGET}");
    let timeout = format!("-timeout={INPUT_TIMEOUT_SECONDS}");
    cargo_fuzz(
        fuzz_dir,
        &[
            "run",
            "--dev",
            target,
            &corpus,
            &seeds,
            "--",
            &max_time,
            &timeout,
            "-rss_limit_mb=2048",
            "-print_final_stats=1",
        ],
    )
    .with_context(|| {
        format!("fuzz target `{target}` failed: the input that broke it is under fuzz/artifacts/{target}/")
    })?;
    eprintln!("fuzz target `{target}` ran clean for {:.1?}", started.elapsed());
    Ok(())
}

/// The targets `cargo fuzz list` names, so that a new target is smoke-tested without editing this file.
fn list_targets(fuzz_dir: &Path) -> Result<Vec<String>> {
    let output = Command::new(crate::cargo_program())
        .args(["fuzz", "list"])
        .current_dir(fuzz_dir)
        .output()
        .context("cannot run `cargo fuzz list`")?;
    if !output.status.success() {
        bail!(
            "`cargo fuzz list` exited with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect())
}

/// Runs `cargo fuzz` in `fuzz_dir`.
///
/// cargo-fuzz passes unstable compiler flags (the sanitizer and coverage instrumentation). The machine has one
/// stable toolchain, so the build is allowed them with `RUSTC_BOOTSTRAP=1`, for this command only.
fn cargo_fuzz(fuzz_dir: &Path, args: &[&str]) -> Result<()> {
    let args: Vec<&str> = std::iter::once("fuzz").chain(args.iter().copied()).collect();
    crate::cargo_in(Some(fuzz_dir), &args, &[("RUSTC_BOOTSTRAP", "1")])
}
