//! `cargo xtask sandbox-startup`: what the kernel sandbox adds to starting a command, measured side by side with
//! bubblewrap in one run. Each round runs `/bin/true`, `agent-guard sandbox --profile workspace-write -- /bin/true`
//! (one contender per `--binary`), util-linux's `unshare` making the same namespaces (the kernel's part alone) and
//! `bwrap` with the same namespaces and mounts around `/bin/true`, in an order that turns from round to round, so
//! that the machine's load falls on all alike; the figures are medians of the wall-clock times and of each round's
//! difference to `/bin/true`. Every contender runs with a scratch `HOME` of its own (so that each build has its
//! own undo store and change watcher, which builds of different versions would otherwise share and stop for each
//! other): empty, or with `--caches` holding three package caches (`~/.cargo/registry`, `~/.npm`,
//! `~/.cache/pip`), each of which `agent-guard sandbox` mounts as an overlay; the user's own home directory is
//! never used.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// One command of the comparison.
struct Contender {
    name: String,
    argv: Vec<String>,
    /// Its scratch `HOME`.
    home: PathBuf,
    times: Vec<Duration>,
}

/// The package caches `--caches` puts in the scratch home directory.
const CACHES: [&str; 3] = [".cargo/registry", ".npm", ".cache/pip"];

/// Runs the comparison: `args` are `--runs N` (default 300), `--binary PATH` (default the release build's
/// `agent-guard` in the target directory; repeated, each binary is a contender of its own, to compare builds) and
/// `--caches` (the scratch home directory holds three package caches).
pub(crate) fn run(args: &[String]) -> Result<()> {
    let mut runs = 300usize;
    let mut caches = false;
    let mut binaries = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--runs" => {
                runs = rest
                    .next()
                    .and_then(|n| n.parse().ok())
                    .context("--runs needs a number")?;
            }
            "--binary" => binaries.extend(rest.next().map(PathBuf::from)),
            "--caches" => caches = true,
            other => bail!("unknown argument `{other}` (--runs N, --binary PATH, --caches)"),
        }
    }
    if binaries.is_empty() {
        binaries.push(default_binary());
    }
    for binary in &binaries {
        if !binary.is_file() {
            bail!(
                "`{}` does not exist: build it with `cargo build --release -p agent-guard` or give --binary",
                binary.display()
            );
        }
    }
    let scratch = std::env::temp_dir().join(format!("agent-guard-startup-{}", std::process::id()));
    let project = scratch.join("project");
    std::fs::create_dir_all(&project).context("cannot make the project directory")?;
    let homes = Homes {
        dir: scratch.join("homes"),
        caches,
    };
    let result = compare(&binaries, &project, &homes, runs);
    let _removed = std::fs::remove_dir_all(&scratch);
    println!(
        "home directories (one a contender): {}",
        if caches {
            "scratch, with ~/.cargo/registry, ~/.npm and ~/.cache/pip"
        } else {
            "scratch, empty"
        }
    );
    result
}

/// Where the contenders' scratch home directories are made, and whether each holds the package caches.
struct Homes {
    dir: PathBuf,
    caches: bool,
}

impl Homes {
    /// A new scratch home directory, the `n`th.
    fn make(&self, n: usize) -> Result<PathBuf> {
        let home = self.dir.join(n.to_string());
        std::fs::create_dir_all(&home).context("cannot make the home directory")?;
        if self.caches {
            for cache in CACHES {
                let dir = home.join(cache);
                std::fs::create_dir_all(&dir).context("cannot make a package cache")?;
                std::fs::write(dir.join("entry"), "a file of the cache\n")
                    .context("cannot fill a package cache")?;
            }
        }
        Ok(home)
    }
}

fn compare(binaries: &[PathBuf], project: &Path, homes: &Homes, runs: usize) -> Result<()> {
    let root = project.display().to_string();
    // The namespaces `agent-guard sandbox` makes for `workspace-write` without the network: a user namespace only
    // where it is not root, mount, PID, IPC and network; the system read-only, the root writable, a private `/proc`
    // and `/tmp`, its own session, and death with its parent.
    let mut bwrap = vec!["bwrap".to_owned()];
    if !nix::unistd::geteuid().is_root() {
        bwrap.push("--unshare-user".to_owned());
    }
    for arg in [
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-net",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--bind",
        &root,
        &root,
        "--chdir",
        &root,
        "--new-session",
        "--die-with-parent",
        "/bin/true",
    ] {
        bwrap.push(arg.to_owned());
    }
    let mut contenders = vec![Contender {
        name: "/bin/true".to_owned(),
        argv: vec!["/bin/true".to_owned()],
        home: homes.make(0)?,
        times: Vec::with_capacity(runs),
    }];
    for binary in binaries {
        let name = if binaries.len() == 1 {
            "agent-guard sandbox --profile workspace-write -- /bin/true".to_owned()
        } else {
            format!(
                "{} sandbox --profile workspace-write -- /bin/true",
                binary.display()
            )
        };
        contenders.push(Contender {
            name,
            argv: vec![
                binary.display().to_string(),
                "sandbox".to_owned(),
                "--profile".to_owned(),
                "workspace-write".to_owned(),
                "--".to_owned(),
                "/bin/true".to_owned(),
            ],
            home: homes.make(contenders.len())?,
            times: Vec::with_capacity(runs),
        });
    }
    // The kernel's part alone: the same namespaces made by util-linux's `unshare`, with a `/proc` of their own and
    // no other mount.
    let mut unshare = vec!["unshare".to_owned()];
    if !nix::unistd::geteuid().is_root() {
        unshare.push("--map-root-user".to_owned());
    }
    for arg in [
        "--mount",
        "--pid",
        "--fork",
        "--ipc",
        "--net",
        "--mount-proc",
        "/bin/true",
    ] {
        unshare.push(arg.to_owned());
    }
    contenders.push(Contender {
        name: "unshare (the namespaces alone) /bin/true".to_owned(),
        argv: unshare,
        home: homes.make(contenders.len())?,
        times: Vec::with_capacity(runs),
    });
    // Bubblewrap is last: the ratios compare every other contender with it.
    contenders.push(Contender {
        name: "bwrap (the same namespaces) /bin/true".to_owned(),
        argv: bwrap,
        home: homes.make(contenders.len())?,
        times: Vec::with_capacity(runs),
    });
    for contender in &contenders {
        time(&contender.argv, project, &contender.home)
            .with_context(|| format!("`{}` does not run here", contender.argv.join(" ")))?;
    }
    let warm_up = 20.min(runs);
    for round in 0..warm_up + runs {
        let count = contenders.len();
        for turn in 0..count {
            let index = (round + turn) % count;
            let Some(contender) = contenders.get_mut(index) else {
                continue;
            };
            let took = time(&contender.argv, project, &contender.home)?;
            if round >= warm_up {
                contender.times.push(took);
            }
        }
    }
    report(&contenders, runs);
    Ok(())
}

/// Runs `argv` in `dir` with `home` as `HOME` and times it to its end; a failure is an error.
fn time(argv: &[String], dir: &Path, home: &Path) -> Result<Duration> {
    let (program, args) = argv.split_first().context("an empty command")?;
    let started = Instant::now();
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .with_context(|| format!("cannot start `{program}`"))?;
    let took = started.elapsed();
    if !status.success() {
        bail!("`{}` failed: {status}", argv.join(" "));
    }
    Ok(took)
}

fn report(contenders: &[Contender], runs: usize) {
    let Some((baseline, others)) = contenders.split_first() else {
        return;
    };
    println!(
        "{runs} rounds, interleaved; load average before the report: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    println!("| command | median | median above `/bin/true` (paired) |");
    println!("|---|---|---|");
    println!("| `{}` | {} | — |", baseline.name, ms(median(&baseline.times)));
    let mut added = Vec::new();
    for contender in others {
        let differences: Vec<Duration> = contender
            .times
            .iter()
            .zip(&baseline.times)
            .map(|(time, base)| time.saturating_sub(*base))
            .collect();
        let above = median(&differences);
        added.push(above);
        println!(
            "| `{}` | {} | {} |",
            contender.name,
            ms(median(&contender.times)),
            ms(above)
        );
    }
    // Builds compared round by round with the one before them, and with the first.
    let guards = others.get(..others.len().saturating_sub(2)).unwrap_or_default();
    for (index, contender) in guards.iter().enumerate().skip(1) {
        let earlier = [index - 1, 0];
        for before in guards
            .iter()
            .take(index)
            .enumerate()
            .filter(|(i, _)| earlier.contains(i))
        {
            let differences: Vec<f64> = contender
                .times
                .iter()
                .zip(&before.1.times)
                .map(|(time, base)| (time.as_secs_f64() - base.as_secs_f64()) * 1000.0)
                .collect();
            let faster = differences.iter().filter(|d| **d < 0.0).count();
            println!(
                "`{}` against `{}`, paired: median difference {:+.2} ms, faster in {faster} of {} rounds",
                contender.name,
                before.1.name,
                median_f64(&differences),
                differences.len()
            );
        }
    }
    if let Some((bwrap, ours)) = added.split_last()
        && !bwrap.is_zero()
    {
        for (contender, added) in others.iter().zip(ours) {
            println!(
                "`{}`: its added cost is {:.2}× bubblewrap's",
                contender.name,
                added.as_secs_f64() / bwrap.as_secs_f64()
            );
        }
    }
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

fn median_f64(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

fn ms(time: Duration) -> String {
    format!("{:.2} ms", time.as_secs_f64() * 1000.0)
}

/// `agent-guard` of the release build in the target directory (`CARGO_TARGET_DIR`, else `target`).
fn default_binary() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"))
        .join("release/agent-guard")
}
