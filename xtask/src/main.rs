//! Repository automation: `cargo xtask ci` runs every check CI runs, in the order a developer wants to see
//! failures (cheap first).

mod fuzz;
mod layering;
mod replay;
mod startup;
mod surface;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("layering") => layering::check(),
        Some("surface") if args.get(1).is_some_and(|a| a == "--list") => surface::list(),
        Some("surface") => surface::check(),
        Some("deny") => deny(),
        Some("fuzz-smoke") => fuzz::smoke(),
        Some("sandbox-startup") => startup::run(args.get(1..).unwrap_or_default()),
        Some("replay") => replay::run(args.get(1..).unwrap_or_default()),
        _ => {
            eprintln!("usage: cargo xtask <ci|layering|surface|deny|fuzz-smoke|sandbox-startup|replay>");
            eprintln!(
                "  ci          fmt, surface, clippy, postgres, chromium, tests, benches, docs, layering, cargo-deny, \
                 fuzz smoke"
            );
            eprintln!("  layering    check the crate graph edge by edge against docs/ARCHITECTURE.md");
            eprintln!(
                "  surface     check that every `pub use` of a lib.rs has a user outside its crate (--list: show \
                 the exports without one)"
            );
            eprintln!("  deny        cargo deny check (licenses, bans, sources)");
            eprintln!("  fuzz-smoke  build every fuzz target and run each for a few seconds");
            eprintln!(
                "  sandbox-startup  time `agent-guard sandbox -- /bin/true` against `/bin/true` and bwrap \
                 (--runs N, --binary PATH, --caches)"
            );
            eprintln!(
                "  replay      decide the replay set of real agents' shell commands in each permission mode and \
                 report how often each interrupts the user (docs/replay.md; not part of ci)"
            );
            bail!("unknown or missing subcommand")
        }
    }
}

fn ci() -> Result<()> {
    let started = Instant::now();
    step("fmt", || cargo(&["fmt", "--all", "--check"], &[]))?;
    step("surface", surface::check)?;
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
    step("chromium", ensure_chromium)?;
    step("test", test)?;
    // Each criterion bench runs its routines once in test mode: the benches build, and their setup and the
    // designs they compare still work, at the cost of the test profile already built.
    step("benches", || {
        cargo(
            &["test", "--workspace", "--benches", "--locked"],
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
    // The last two steps build outside the workspace's debug build; on a small disk that build goes first.
    step("disk", make_room)?;
    step("deny", deny)?;
    step("fuzz smoke", fuzz::smoke)?;
    eprintln!("xtask ci: all checks passed in {:.0?}", started.elapsed());
    Ok(())
}

/// The environment switch that makes the kernel-sandbox tests fail instead of skipping (tests/support/need.rs).
const REQUIRE_SANDBOX: &str = "AGENT_GUARD_REQUIRE_SANDBOX";

/// The workspace's tests. A test that needs something the machine lacks says it is skipped; here the PostgreSQL
/// tests and the page's browser test are required (the steps before installed both), and so are the kernel-sandbox
/// tests wherever `agent-guard sandbox --probe` says the kernel enforces the sandbox.
fn test() -> Result<()> {
    cargo(&["test", "--workspace", "--locked", "--no-run"], &[])?;
    let mut switches = vec![
        ("AGENT_GUARD_REQUIRE_POSTGRES", "1"),
        ("AGENT_GUARD_REQUIRE_CHROMIUM", "1"),
    ];
    match sandbox_missing()? {
        None => {
            eprintln!("the kernel enforces the sandbox: its tests are required ({REQUIRE_SANDBOX}=1)");
            switches.push((REQUIRE_SANDBOX, "1"));
        }
        Some(why) => eprintln!("the kernel-sandbox tests will say they are skipped: {why}"),
    }
    cargo(&["test", "--workspace", "--locked"], &switches)
}

/// What `agent-guard sandbox --probe` (the binary the tests just built) says stands in the way of enforcing the
/// sandbox here, or `None` when the kernel enforces it.
fn sandbox_missing() -> Result<Option<String>> {
    let binary = target_dir().join("debug").join("agent-guard");
    let output = Command::new(&binary)
        .args(["sandbox", "--probe"])
        .output()
        .with_context(|| format!("cannot run `{} sandbox --probe`", binary.display()))?;
    let report = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        bail!(
            "`agent-guard sandbox --probe` exited with {}: {report}{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(probe_missing(&report))
}

/// What the `enforcement:` line of a `sandbox --probe` report says stands in the way, or `None` when it says that
/// allowed commands run under the kernel sandbox.
fn probe_missing(report: &str) -> Option<String> {
    match report.lines().find_map(|line| line.strip_prefix("enforcement: ")) {
        Some(enforcement) if enforcement.contains("under the kernel sandbox") => None,
        Some(enforcement) => Some(format!("`sandbox --probe` says enforcement: {enforcement}")),
        None => Some("`sandbox --probe` printed no `enforcement:` line".to_owned()),
    }
}

fn step(name: &str, run: impl FnOnce() -> Result<()>) -> Result<()> {
    eprintln!("==> {name}");
    let started = Instant::now();
    run().with_context(|| format!("step `{name}` failed"))?;
    // The free space is shown after each step, so that a CI disk running out is seen before it fails a build.
    let free = free_bytes(&target_dir())
        .map(|bytes| format!(", {} free", gib(bytes)))
        .unwrap_or_default();
    eprintln!("<== {name} ok ({:.1?}{free})", started.elapsed());
    Ok(())
}

/// Free space under which `make_room` removes the debug build. Installing cargo-deny and cargo-fuzz (each built
/// in a temporary directory) and the sanitizer build of the fuzz targets need about 3 GiB together.
const ROOM_NEEDED: u64 = 5 << 30;

/// Removes the debug build of the earlier steps (clippy, tests, benches) when the disk holding the target
/// directory has less than [`ROOM_NEEDED`] free: those steps are done, and what follows builds elsewhere. A
/// machine with room keeps its build, so a developer's next run stays incremental.
fn make_room() -> Result<()> {
    make_room_in(&target_dir(), ROOM_NEEDED)
}

fn make_room_in(target: &Path, needed: u64) -> Result<()> {
    let free = free_bytes(target)?;
    if free >= needed {
        eprintln!(
            "{} free: the debug build in {} stays",
            gib(free),
            target.display()
        );
        return Ok(());
    }
    let debug = target.join("debug");
    if !debug.exists() {
        return Ok(());
    }
    eprintln!(
        "only {} free (under {}): removing the debug build {} before cargo-deny and the fuzz targets are built",
        gib(free),
        gib(needed),
        debug.display()
    );
    std::fs::remove_dir_all(&debug).with_context(|| format!("cannot remove {}", debug.display()))?;
    Ok(())
}

/// The bytes an unprivileged user may still write on the file system holding `path` (or its nearest existing
/// ancestor, for a target directory not made yet).
fn free_bytes(path: &Path) -> Result<u64> {
    let existing = path
        .ancestors()
        .find(|dir| dir.exists())
        .unwrap_or(Path::new("/"));
    let stats = nix::sys::statvfs::statvfs(existing)
        .with_context(|| format!("cannot read the free space of {}", existing.display()))?;
    Ok(stats.blocks_available().saturating_mul(stats.fragment_size()))
}

fn gib(bytes: u64) -> String {
    let gib = bytes as f64 / f64::from(1_u32 << 30);
    format!("{gib:.1} GiB")
}

/// The workspace root: xtask lives one level below it.
pub(crate) fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().unwrap_or(manifest_dir).to_path_buf()
}

/// The target directory cargo builds into: `CARGO_TARGET_DIR` when set, else `target/` in the workspace.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace_root().join("target"), PathBuf::from)
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
    // A fresh machine may have no package lists yet: `apt_install` fetches them once and retries.
    let installed = apt_install("postgresql");
    if !installed || postgres_bin_dir().is_none() {
        bail!(
            "cannot install PostgreSQL with apt-get (it needs root and Debian's package lists): install a \
             PostgreSQL server so that `initdb` is on PATH or under /usr/lib/postgresql/<version>/bin"
        );
    }
    Ok(())
}

/// The browser the server's page test drives (crates/cli/tests/page.rs).
const CHROMIUM: &str = "/usr/bin/chromium";

/// Makes sure Debian's `chromium` is installed for the page's browser test, installing it when missing.
fn ensure_chromium() -> Result<()> {
    if Path::new(CHROMIUM).is_file() {
        eprintln!("Chromium found at {CHROMIUM}");
        return Ok(());
    }
    eprintln!("Chromium is missing: installing it with `apt-get install -y chromium`");
    if !apt_install("chromium") || !Path::new(CHROMIUM).is_file() {
        bail!(
            "cannot install Chromium with apt-get (it needs root and Debian's package lists): install Debian's \
             `chromium` package so that {CHROMIUM} exists"
        );
    }
    Ok(())
}

/// `apt-get install -y --no-install-recommends PACKAGE`, fetching the package lists once when the first try fails.
fn apt_install(package: &str) -> bool {
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", package])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .is_ok_and(|status| status.success())
    };
    install()
        || (Command::new("apt-get")
            .arg("update")
            .status()
            .is_ok_and(|status| status.success())
            && install())
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
/// copy exists (a database folder inside `advisory-dbs`).
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
    // A fetch that failed leaves the folder with only its lock file: a copy is a folder inside it.
    let has_copy = advisory_db
        .and_then(|db| std::fs::read_dir(db).ok())
        .is_some_and(|mut entries| entries.any(|e| e.is_ok_and(|e| e.path().is_dir())));
    if has_copy {
        cargo(&["deny", "--offline", "check", "advisories"], &[])?;
    } else {
        eprintln!("advisory database not present locally: advisories skipped");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sandbox_tests_are_required_only_where_the_probe_says_the_kernel_enforces() {
        let enforced = "landlock: ABI 6 (files: reads and writes confined to the profile)\n\
                        enforcement: allowed shell commands run under the kernel sandbox\n";
        assert_eq!(probe_missing(enforced), None);
        let missing = "landlock: missing (files cannot be confined)\n\
                       enforcement: none (the kernel has no Landlock); allows rest on the analysis alone\n";
        assert_eq!(
            probe_missing(missing).as_deref(),
            Some(
                "`sandbox --probe` says enforcement: none (the kernel has no Landlock); allows rest on the \
                 analysis alone"
            )
        );
        assert!(
            probe_missing("").is_some(),
            "a report without the line requires nothing"
        );
    }

    #[test]
    fn the_debug_build_goes_only_when_the_disk_is_short() -> Result<()> {
        let target = std::env::temp_dir().join(format!("xtask-room-{}", std::process::id()));
        let debug = target.join("debug").join("deps");
        std::fs::create_dir_all(&debug)?;
        std::fs::write(debug.join("a-test-binary"), b"built")?;

        make_room_in(&target, 0)?;
        assert!(debug.join("a-test-binary").is_file(), "room enough: kept");
        make_room_in(&target, u64::MAX)?;
        assert!(!target.join("debug").exists(), "short of room: removed");
        assert!(target.is_dir(), "only the debug build goes");
        // Nothing to remove is not an error on a second short run.
        make_room_in(&target, u64::MAX)?;

        assert!(
            free_bytes(&target.join("not").join("made"))? > 0,
            "the nearest existing ancestor is measured"
        );
        std::fs::remove_dir_all(&target)?;
        Ok(())
    }
}
