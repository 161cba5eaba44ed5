//! Repository automation: `cargo xtask ci` runs every check CI runs, in the order a developer wants to see
//! failures (cheap first).

mod fuzz;
mod layering;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("layering") => layering::check(),
        Some("deny") => deny(),
        Some("fuzz-smoke") => fuzz::smoke(),
        _ => {
            eprintln!("usage: cargo xtask <ci|layering|deny|fuzz-smoke>");
            eprintln!(
                "  ci          fmt, clippy, tests, docs, layering, cargo-deny, fuzz smoke, bench build"
            );
            eprintln!("  layering    check that no crate depends on a higher layer");
            eprintln!("  deny        cargo deny check (licenses, bans, sources)");
            eprintln!("  fuzz-smoke  build every fuzz target and run each for a few seconds");
            bail!("unknown or missing subcommand")
        }
    }
}

fn ci() -> Result<()> {
    let started = Instant::now();
    step("fmt", || cargo(&["fmt", "--all", "--check"], &[]))?;
    step("clippy", || {
        cargo(
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--locked",
                "--",
                "-D",
                "warnings",
            ],
            &[],
        )
    })?;
    step("test", || cargo(&["test", "--workspace", "--locked"], &[]))?;
    step("doc", || {
        cargo(
            &["doc", "--workspace", "--no-deps", "--locked"],
            &[("RUSTDOCFLAGS", "-D warnings")],
        )
    })?;
    step("layering", layering::check)?;
    step("deny", deny)?;
    step("fuzz smoke", fuzz::smoke)?;
    step("bench build", || {
        cargo(&["bench", "--workspace", "--no-run", "--locked"], &[])
    })?;
    eprintln!("xtask ci: all checks passed in {:.0?}", started.elapsed());
    Ok(())
}

fn step(name: &str, run: impl FnOnce() -> Result<()>) -> Result<()> {
    eprintln!("==> {name}");
    let started = Instant::now();
    run().with_context(|| format!("step `{name}` failed"))?;
    eprintln!("<== {name} ok ({:.1?})", started.elapsed());
    Ok(())
}

fn cargo(args: &[&str], env: &[(&str, &str)]) -> Result<()> {
    cargo_in(None, args, env)
}

/// Runs cargo with `args`, in `dir` when given, and fails unless it succeeds.
fn cargo_in(dir: Option<&Path>, args: &[&str], env: &[(&str, &str)]) -> Result<()> {
    let cargo = cargo_program();
    let mut command = Command::new(&cargo);
    command.args(args);
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    for (key, value) in env {
        command.env(key, value);
    }
    let status = command
        .status()
        .with_context(|| format!("cannot run `{cargo}`"))?;
    if !status.success() {
        bail!("`cargo {}` exited with {status}", args.join(" "));
    }
    Ok(())
}

/// The cargo that runs xtask, so that every step uses the same toolchain.
fn cargo_program() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// Installs the cargo subcommand `cargo <subcommand>` from crate `package` when it is missing, so that a fresh
/// machine needs nothing installed by hand.
fn ensure_cargo_tool(subcommand: &str, package: &str) -> Result<()> {
    let present = Command::new(cargo_program())
        .args([subcommand, "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !present {
        eprintln!("{package} is missing: installing it with `cargo install --locked {package}`");
        cargo(&["install", "--locked", package], &[])?;
    }
    Ok(())
}

/// `cargo deny check licenses bans sources`, installing cargo-deny first when it is missing. The advisory
/// database cannot be fetched on machines without general network access, so advisories run only when a local
/// copy exists.
fn deny() -> Result<()> {
    ensure_cargo_tool("deny", "cargo-deny")?;
    cargo(
        &["deny", "--offline", "check", "licenses", "bans", "sources"],
        &[],
    )?;
    let advisory_db = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cargo")))
        .map(|home| home.join("advisory-dbs"));
    if advisory_db.is_some_and(|db| db.is_dir()) {
        cargo(&["deny", "--offline", "check", "advisories"], &[])?;
    } else {
        eprintln!("advisory database not present locally: advisories skipped");
    }
    Ok(())
}
