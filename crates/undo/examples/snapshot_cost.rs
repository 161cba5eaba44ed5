//! What recording a run costs: `cargo run --release -p agent-undo --example snapshot_cost -- ROOT [RUNS]
//! [CHANGED]` takes the snapshots before and after a command, RUNS times (9 by default) after a first few that
//! are not timed, and prints the median wall time and CPU time (this process and its `git` children) of one
//! run, with the change watcher and with a walk of the whole root, the two alternating (each with a store of its
//! own, in a temporary directory). The command changes nothing, or with CHANGED appends a line to that many files
//! (`ROOT/snapshot-cost/fN`, made by the first run).

use std::time::Instant;

use agent_undo::{Recording, UndoSettings};

/// User and system CPU time of this process and its waited-for children, in milliseconds.
fn cpu_ms() -> f64 {
    let time = |who| {
        nix::sys::resource::getrusage(who).map_or(0.0, |usage| {
            let tv = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 * 1e3 + t.tv_usec() as f64 / 1e3;
            tv(usage.user_time()) + tv(usage.system_time())
        })
    };
    time(nix::sys::resource::UsageWho::RUSAGE_SELF) + time(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
}

/// User and system CPU time of the watcher of `root`'s store in `settings`, in milliseconds (the peer of its
/// socket; 0 when none answers).
fn watcher_cpu_ms(root: &std::path::Path, settings: &UndoSettings) -> f64 {
    let Some(dir) = agent_undo::Store::dir_of(&root.canonicalize().unwrap_or_default(), settings) else {
        return 0.0;
    };
    let Ok(stream) = std::os::unix::net::UnixStream::connect(dir.join("watch.sock")) else {
        return 0.0;
    };
    let Ok(peer) = nix::sys::socket::getsockopt(&stream, nix::sys::socket::sockopt::PeerCredentials) else {
        return 0.0;
    };
    drop(stream);
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{}/stat", peer.pid())) else {
        return 0.0;
    };
    // The fields after the command's name in parentheses: utime and stime are the 12th and 13th.
    let fields: Vec<&str> = stat
        .rsplit_once(") ")
        .map_or(Vec::new(), |(_, rest)| rest.split(' ').collect());
    let ticks = |n: usize| fields.get(n).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    let per_second = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .map_or(100.0, |t| t as f64);
    (ticks(11) + ticks(12)) * 1e3 / per_second
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or_default()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if let Some(code) = agent_undo::watcher_main() {
        std::process::exit(code);
    }
    let mut args = std::env::args().skip(1);
    let root = std::path::PathBuf::from(args.next().ok_or("usage: snapshot_cost ROOT [RUNS]")?);
    let runs: usize = args.next().map_or(Ok(9), |n| n.parse())?;
    let changed: usize = args.next().map_or(Ok(0), |n| n.parse())?;
    let files = root.join("snapshot-cost");
    if changed > 0 {
        std::fs::create_dir_all(&files)?;
    }
    let roots = [root];
    let record = |settings: &UndoSettings| {
        let recording = Recording::begin(&roots, "append", settings);
        for n in 0..changed {
            use std::io::Write as _;
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(files.join(format!("f{n}")));
            let _appended = file.and_then(|mut file| file.write_all(b"one more line\n"));
        }
        let finished = recording.finish();
        finished.notes
    };
    let (watch_state, walk_state) = (tempfile::tempdir()?, tempfile::tempdir()?);
    let watched = UndoSettings::in_dir(watch_state.path());
    let walked = UndoSettings {
        watch: false,
        ..UndoSettings::in_dir(walk_state.path())
    };
    // The first runs make the stores and start the watcher; its first answers come before walks.
    for _ in 0..3 {
        for settings in [&watched, &walked] {
            let notes = record(settings);
            if !notes.is_empty() {
                return Err(format!("{notes:?}").into());
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    let mut samples = [(Vec::new(), Vec::new()), (Vec::new(), Vec::new())];
    let watcher_before = watcher_cpu_ms(&roots[0], &watched);
    for _ in 0..runs {
        for (settings, (wall, cpu)) in [&watched, &walked].into_iter().zip(samples.iter_mut()) {
            let (started, cpu_before) = (Instant::now(), cpu_ms());
            record(settings);
            wall.push(started.elapsed().as_secs_f64() * 1e3);
            cpu.push(cpu_ms() - cpu_before);
        }
    }
    let watcher = (watcher_cpu_ms(&roots[0], &watched) - watcher_before) / runs.max(1) as f64;
    // After a run that changes nothing in each (the runs above alternate, so each store has missed the other's
    // last changes), both stores hold the same tree, and the watched one's last snapshot took the watcher's answer.
    for settings in [&watched, &walked] {
        Recording::begin(&roots, "true", settings).finish();
    }
    let store_dir = |settings: &UndoSettings| {
        agent_undo::Store::dir_of(&roots[0].canonicalize().unwrap_or_default(), settings).unwrap_or_default()
    };
    let last = |settings: &UndoSettings| std::fs::read_to_string(store_dir(settings).join("last-tree")).ok();
    if last(&watched).is_none() || last(&watched) != last(&walked) {
        return Err("the two stores' last trees differ".into());
    }
    let state = std::fs::read_to_string(store_dir(&watched).join("watch-state.json")).unwrap_or_default();
    if !state.contains("\"walked\":false") {
        return Err("the watched store's last snapshot was not served by the watcher".into());
    }
    let [(watch_wall, watch_cpu), (walk_wall, walk_cpu)] = samples;
    let (watch_wall, walk_wall) = (median(watch_wall), median(walk_wall));
    println!(
        "one run (a snapshot before and one after, {changed} files changed), medians of {runs}, alternating:\n  \
         watcher: wall {watch_wall:.1} ms, CPU {:.1} ms, and the watcher's own CPU {watcher:.1} ms a run \
         (mean, clock ticks)\n  \
         walk:    wall {walk_wall:.1} ms, CPU {:.1} ms\n  walk / watcher (wall): {:.1}x",
        median(watch_cpu),
        median(walk_cpu),
        walk_wall / watch_wall.max(1e-9)
    );
    Ok(())
}
