//! What recording a run costs: `cargo run --release -p agent-undo --example snapshot_cost -- ROOT [RUNS]
//! [CHANGED]` takes the snapshots before and after a command, RUNS times (9 by default) after a first one that is
//! not timed, and prints the median wall time and CPU time (this process and its `git` children) of one run. The
//! command changes nothing, or with CHANGED appends a line to that many files (`ROOT/snapshot-cost/fN`, made by
//! the first run). The store goes to a temporary directory.

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

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or_default()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let root = std::path::PathBuf::from(args.next().ok_or("usage: snapshot_cost ROOT [RUNS]")?);
    let runs: usize = args.next().map_or(Ok(9), |n| n.parse())?;
    let changed: usize = args.next().map_or(Ok(0), |n| n.parse())?;
    let files = root.join("snapshot-cost");
    if changed > 0 {
        std::fs::create_dir_all(&files)?;
    }
    let state = tempfile::tempdir()?;
    let settings = UndoSettings::in_dir(state.path());
    let roots = [root];
    let record = || {
        let recording = Recording::begin(&roots, "append", &settings);
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
    let notes = record();
    if !notes.is_empty() {
        return Err(format!("{notes:?}").into());
    }
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let (started, cpu_before) = (Instant::now(), cpu_ms());
        record();
        wall.push(started.elapsed().as_secs_f64() * 1e3);
        cpu.push(cpu_ms() - cpu_before);
    }
    println!(
        "one run (a snapshot before and one after, {changed} files changed): wall {:.1} ms, CPU {:.1} ms (medians of {runs})",
        median(wall),
        median(cpu)
    );
    Ok(())
}
