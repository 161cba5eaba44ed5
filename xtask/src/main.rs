//! Repository automation: `cargo xtask ci` runs every check CI runs, in the order a developer wants to see
//! failures (cheap first).

mod layering;

use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("layering") => layering::check(),
        Some("deny") => deny(),
        _ => {
            eprintln!("usage: cargo xtask <ci|layering|deny>");
            eprintln!("  ci        fmt, clippy, tests, docs, cargo-deny, layering, bench build");
            eprintln!("  layering  check that no crate depends on a higher layer");
            eprintln!("  deny      cargo deny check (licenses, bans, sources)");
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
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = Command::new(&cargo);
    command.args(args);
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

/// `cargo deny check licenses bans sources`, installing cargo-deny first when it is missing. The advisory
/// database cannot be fetched on machines without general network access, so advisories run only when a local
/// copy exists.
fn deny() -> Result<()> {
    let have_deny = Command::new("cargo")
        .args(["deny", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_deny {
        eprintln!("cargo-deny is missing: installing it with `cargo install --locked cargo-deny`");
        cargo(&["install", "--locked", "cargo-deny"], &[])?;
    }
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
