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
                "  ci          fmt, clippy, tests, docs, layering, cargo-deny, postgres, fuzz smoke, benches"
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
    step("postgres", ensure_postgres)?;
    // The audit log's PostgreSQL tests skip on a machine without a server; here a missing server is a failure.
    step("test", || {
        cargo(
            &["test", "--workspace", "--locked"],
            &[("AGENT_GUARD_REQUIRE_POSTGRES", "1")],
        )
    })?;
    step("doc", || {
        cargo(
            &["doc", "--workspace", "--no-deps", "--locked"],
            &[("RUSTDOCFLAGS", "-D warnings")],
        )
    })?;
    step("layering", layering::check)?;
    step("deny", deny)?;
    step("fuzz smoke", fuzz::smoke)?;
    // Each criterion bench runs its routines once in test mode: the benches build, and their setup and the
    // designs they compare still work, at the cost of the test profile already built.
    step("benches", || {
        cargo(
            &["test", "--workspace", "--benches", "--locked"],
            &[("AGENT_GUARD_REQUIRE_POSTGRES", "1")],
        )
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
    // A CI run builds each crate once: incremental caches would only take disk space (gigabytes for the tests).
    if std::env::var_os("CARGO_INCREMENTAL").is_none() {
        command.env("CARGO_INCREMENTAL", "0");
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

/// Makes sure a PostgreSQL server is installed for the audit log's tests (each test binary starts its own
/// throwaway server), installing Debian's package when it is missing.
fn ensure_postgres() -> Result<()> {
    if let Some(bin) = postgres_bin_dir() {
        eprintln!("PostgreSQL server found in {}", bin.display());
        return Ok(());
    }
    eprintln!("PostgreSQL is missing: installing it with `apt-get install -y postgresql`");
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", "postgresql"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .is_ok_and(|status| status.success())
    };
    // A fresh machine may have no package lists yet: fetch them once and retry.
    let installed = install()
        || (Command::new("apt-get")
            .arg("update")
            .status()
            .is_ok_and(|status| status.success())
            && install());
    if !installed || postgres_bin_dir().is_none() {
        bail!(
            "cannot install PostgreSQL with apt-get (it needs root and Debian's package lists): install a \
             PostgreSQL server so that `initdb` is on PATH or under /usr/lib/postgresql/<version>/bin"
        );
    }
    Ok(())
}

/// The directory holding `initdb`, found the way the tests find it: on PATH, else under
/// `/usr/lib/postgresql/<version>/bin`.
fn postgres_bin_dir() -> Option<std::path::PathBuf> {
    let on_path = std::env::var_os("PATH")
        .and_then(|path| std::env::split_paths(&path).find(|dir| dir.join("initdb").is_file()));
    on_path.or_else(|| {
        std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|entry| entry.ok().map(|e| e.path().join("bin")))
            .find(|bin| bin.join("initdb").is_file())
    })
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
