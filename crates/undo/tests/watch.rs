//! The change watcher, as a real process watching real directories: what it says must make the same snapshots
//! as a walk of the whole root, whatever changed, inside a run or between runs, and whatever became of the
//! watcher. This program is its own watcher (`watcher_main`), so it has a `main` of its own.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

mod support;

use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use support::{git, state};

use agent_undo::{Recording, Store, UndoRequest, UndoSettings};

/// A project with a watched store and a walked one (the same project, two stores).
struct World {
    _dir: tempfile::TempDir,
    project: PathBuf,
    /// The root the runs record: the project, or a directory below it.
    root: PathBuf,
    watched: UndoSettings,
    walked: UndoSettings,
}

impl World {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir_all(project.join("src/nested")).unwrap();
        std::fs::write(project.join("src/lib.rs"), "pub fn a() {}\n").unwrap();
        std::fs::write(project.join("src/nested/deep.rs"), "// deep\n").unwrap();
        std::fs::write(project.join("run.sh"), "#!/bin/sh\necho hi\n").unwrap();
        std::fs::set_permissions(project.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(project.join("blob.bin"), [0u8, 159, 146, 150, 255, 13, 10]).unwrap();
        std::os::unix::fs::symlink("src/lib.rs", project.join("lib-link")).unwrap();
        std::fs::write(project.join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(project.join("target")).unwrap();
        std::fs::write(project.join("target/out.o"), "build output").unwrap();
        git(&project, &["init", "-q"]);
        let watched = UndoSettings::in_dir(dir.path().join("watched"));
        let walked = UndoSettings {
            watch: false,
            ..UndoSettings::in_dir(dir.path().join("walked"))
        };
        Self {
            _dir: dir,
            root: project.clone(),
            project,
            watched,
            walked,
        }
    }

    fn store(&self) -> Store {
        Store::existing(&self.root, &self.watched).unwrap().unwrap()
    }

    /// The kept state of the watched store: whether its last snapshot walked, as JSON.
    fn watch_state(&self) -> Option<serde_json::Value> {
        let text = std::fs::read(self.store().dir().join("watch-state.json")).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Runs `script` with bash in the project, recorded in both stores; the trees of both must be the same
    /// after it. Returns the run's number in the watched store when it changed something.
    fn run(&self, script: &str) -> Option<u64> {
        let (id, notes) = self.run_noting(script);
        assert!(notes.is_empty(), "{notes:?}");
        id
    }

    /// As [`World::run`], and what the recording in the watched store noted after the command.
    fn run_noting(&self, script: &str) -> (Option<u64>, Vec<String>) {
        let roots = [self.root.clone()];
        let watched = Recording::begin(&roots, script, &self.watched);
        let walked = Recording::begin(&roots, script, &self.walked);
        assert!(watched.notes().is_empty(), "{:?}", watched.notes());
        let status = Command::new("bash")
            .arg("-c")
            .arg(script)
            .current_dir(&self.project)
            .status()
            .unwrap();
        assert!(status.success(), "`{script}` failed");
        let finished = watched.finish();
        let _walked = walked.finish();
        self.same_trees(script);
        (finished.runs.first().map(|run| run.id), finished.notes)
    }

    /// The last tree of the watched store is the walked store's.
    fn same_trees(&self, what: &str) {
        let last = |settings: &UndoSettings| {
            let store = Store::existing(&self.root, settings).unwrap().unwrap();
            std::fs::read_to_string(store.dir().join("last-tree")).unwrap()
        };
        assert_eq!(last(&self.watched), last(&self.walked), "after `{what}`");
    }

    /// Runs `true` until a snapshot is taken from the watcher's answer (the first ones start it and walk).
    fn warm(&self) {
        let started = Instant::now();
        loop {
            self.run("true");
            if self
                .watch_state()
                .is_some_and(|state| state["walked"] == serde_json::Value::Bool(false))
            {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the watcher never answered"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The process id of the watcher (its socket's peer).
    fn watcher_pid(&self) -> i32 {
        let stream = std::os::unix::net::UnixStream::connect(self.store().dir().join("watch.sock")).unwrap();
        let peer = nix::sys::socket::getsockopt(&stream, nix::sys::socket::sockopt::PeerCredentials).unwrap();
        peer.pid()
    }

    fn undo(&self) -> agent_undo::UndoReport {
        self.store().undo(UndoRequest::default(), &|_| None).unwrap()
    }

    /// Asserts the last snapshot came from the watcher's answer, not a walk.
    fn answered(&self, what: &str) {
        let state = self.watch_state().unwrap();
        assert_eq!(state["walked"], serde_json::Value::Bool(false), "{what}: {state}");
    }
}

impl Drop for World {
    /// Stops the watcher before the directories go, so that it writes nothing into them meanwhile.
    fn drop(&mut self) {
        use std::io::Write as _;
        let Ok(Some(store)) = Store::existing(&self.root, &self.watched) else {
            return;
        };
        if let Ok(mut stream) = std::os::unix::net::UnixStream::connect(store.dir().join("watch.sock")) {
            let _sent = stream.write_all(b"quit\n");
        }
        let started = Instant::now();
        while store.dir().join("watch.sock").exists() && started.elapsed() < Duration::from_secs(3) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// An edit made by another process between two runs (an editor) is in the snapshot before the next run: taking
/// that run back restores the edit, byte for byte, not the file as the run before left it.
fn a_change_between_runs_is_captured_and_taken_back_to() {
    let world = World::new();
    world.warm();
    Command::new("bash")
        .arg("-c")
        .arg("printf 'edited\\0outside\\r\\n' > src/lib.rs && mkdir -p ext/d && echo new > ext/d/n && rm blob.bin")
        .current_dir(&world.project)
        .status()
        .unwrap();
    let between = state(&world.project);
    world
        .run("echo run >> src/lib.rs && rm -rf ext && echo again > blob.bin")
        .unwrap();
    world.answered("the run after an outside edit");
    let report = world.undo();
    assert!(report.applied && report.conflicts.is_empty(), "{report:?}");
    assert_eq!(state(&world.project), between);
}

/// Files and directories added, deleted and renamed inside a run are recorded and taken back.
fn adds_deletes_and_renames_inside_a_run_are_taken_back() {
    let world = World::new();
    world.warm();
    let before = state(&world.project);
    world
        .run(
            "mkdir -p fresh/sub && echo x > fresh/sub/a && mv src src2 && rm run.sh && mv blob.bin src2/b \
             && chmod +x src2/lib.rs && ln -s nowhere dangling && rm -rf src2/nested",
        )
        .unwrap();
    world.answered("the run");
    let report = world.undo();
    assert!(report.applied && report.conflicts.is_empty(), "{report:?}");
    assert_eq!(state(&world.project), before);
    // The watcher follows a directory renamed back and forth: a later change inside it is seen.
    world.run("true");
    let id = world.run("echo later >> src/nested/deep.rs");
    assert!(
        id.is_some(),
        "a change in a directory that was renamed away and back"
    );
    world.answered("the run in a directory renamed back");
}

/// A directory the project ignores that holds more than a snapshot holds of one is left out; once a run brings it
/// within the bound, the next snapshot holds all of it, as a walk does (its files that did not change among them),
/// and a run that removes them is taken back. Every run compares the watched store's tree with a walk's.
fn an_ignored_directory_that_shrinks_within_the_bound_is_held_whole() {
    let world = World::new();
    std::fs::write(world.project.join(".gitignore"), "target/\n/samples/\n").unwrap();
    let samples = world.project.join("samples");
    for i in 0..=agent_undo::HELD_IGNORED_ENTRIES {
        let dir = samples.join((i / 1000).to_string());
        if i % 1000 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        std::fs::write(dir.join(format!("s{i}")), i.to_string()).unwrap();
    }
    world.warm();
    // Left out while too large: a run inside it changes no snapshot.
    assert_eq!(world.run("echo more >> samples/0/s1"), None);
    // Within the bound once the last directory and ten more files are gone (files and directories count alike):
    // a run that empties it that far changes no snapshot either (the one after it does not take the files left
    // in as new ones, which taking the run back would delete).
    let last = agent_undo::HELD_IGNORED_ENTRIES / 1000;
    assert_eq!(
        world.run(&format!("rm -rf samples/{last} samples/0/s[0-9]")),
        None
    );
    let before = state(&world.project);
    world.run("rm -rf samples/1").unwrap();
    world.answered("the run in an ignored directory within the bound");
    let report = world.undo();
    assert!(report.applied && report.conflicts.is_empty(), "{report:?}");
    assert_eq!(state(&world.project), before);
}

/// Waits, with a deadline, until the process `pid` has ended (gone, or a zombie its parent has yet to reap).
fn wait_gone(pid: i32) {
    let started = Instant::now();
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The state follows the parenthesised command name.
        let state = stat.rsplit_once(") ").and_then(|(_, rest)| rest.chars().next());
        if state.is_none_or(|state| state == 'Z' || state == 'X') {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "process {pid} did not end"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A watcher that was killed, or that lost events, makes the next snapshot walk: nothing is missed.
fn a_killed_or_overflowed_watcher_falls_back_to_a_walk() {
    let world = World::new();
    world.warm();
    let pid = world.watcher_pid();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL).unwrap();
    wait_gone(pid);
    std::fs::write(world.project.join("src/lib.rs"), "changed while no watcher ran\n").unwrap();
    let between = state(&world.project);
    world.run("rm src/lib.rs").unwrap();
    assert!(world.undo().applied);
    assert_eq!(state(&world.project), between);
    // The next watcher: stopped, more events than its queue holds, then let go.
    world.warm();
    let pid = nix::unistd::Pid::from_raw(world.watcher_pid());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).unwrap();
    let limit: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(16_384);
    // In a directory watched already (a new one's files make no events until the watcher sees it).
    for n in 0..limit + 100 {
        std::fs::write(world.project.join(format!("src/flood{n}")), b"").unwrap();
    }
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT).unwrap();
    std::fs::write(world.project.join("src/lib.rs"), "after the flood\n").unwrap();
    let between = state(&world.project);
    world.run("rm -rf src").unwrap();
    let stopped = std::fs::read_to_string(world.store().dir().join("watch-stopped")).unwrap_or_default();
    assert!(stopped.contains("overflow"), "{stopped}");
    assert!(world.undo().applied);
    assert_eq!(state(&world.project), between);
}

/// With nothing changed, a snapshot the watcher serves writes no state, yet one in a hundred walks all the same:
/// the watcher counts the questions it answered since the walk (the bound on how long a change that makes no event
/// can stay out of the snapshots).
fn unchanged_snapshots_write_nothing_and_one_in_a_hundred_walks() {
    use std::os::unix::fs::MetadataExt as _;
    let world = World::new();
    world.warm();
    let state_file = world.store().dir().join("watch-state.json");
    let identity = || {
        let meta = std::fs::metadata(&state_file).unwrap();
        (meta.ino(), meta.mtime(), meta.mtime_nsec())
    };
    // A served snapshot after a walk writes the state once (it no longer says walked); then nothing changes it.
    world.run("true");
    world.answered("the run after the watcher served");
    let kept = identity();
    for _ in 0..5 {
        world.run("true");
    }
    assert_eq!(
        identity(),
        kept,
        "a snapshot with nothing changed wrote the state"
    );
    // Two snapshots a run: the hundredth answer since the walk is within the next 50 runs. The snapshot after the
    // command of the run that walked is served again, so the walk shows in the count it kept.
    let walked_at = || world.watch_state().unwrap()["walked_at"].clone();
    let before = walked_at();
    let mut runs = 0;
    while walked_at() == before {
        assert!(runs <= 50, "no walk after {runs} more runs");
        world.run("true");
        runs += 1;
    }
    assert!(runs >= 40, "a walk after only {runs} more runs");
    // And the watcher serves again after it.
    world.run("true");
    world.answered("the run after the hundredth");
}

/// A file with a second name outside the watched directories: a write through that name makes no event for the
/// file's name in the root, and the snapshot looks at it all the same (found by a walk, or linked during a run).
fn a_write_through_a_hard_link_outside_the_root_is_seen() {
    let world = World::new();
    let outside = world.project.parent().unwrap().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("a"), "first\n").unwrap();
    std::fs::hard_link(outside.join("a"), world.project.join("src/linked")).unwrap();
    world.warm();
    std::fs::write(outside.join("a"), "written outside\n").unwrap();
    let between = state(&world.project);
    world.run("echo run >> src/linked").unwrap();
    world.answered("the run over a linked file");
    assert!(world.undo().applied);
    assert_eq!(state(&world.project), between);
    // Linked during a run: the watcher reports the new name, and the snapshot keeps it among the linked ones.
    std::fs::write(outside.join("b"), "b\n").unwrap();
    world
        .run(&format!("ln {} src/later", outside.join("b").display()))
        .unwrap();
    world.run("true");
    std::fs::write(outside.join("b"), "b written outside\n").unwrap();
    world.run("true");
    world.answered("the run after a write through the other name");
}

/// A file the last snapshot held that git cannot read now (a FIFO in its place; made unreadable, for a user who
/// is not root) is left out of the snapshot, as if deleted, and said: the run is recorded all the same, later
/// snapshots go on, and taking the run back puts everything back.
fn a_file_that_cannot_be_read_is_left_out_and_the_rest_taken_back() {
    let world = World::new();
    world.warm();
    let between = state(&world.project);
    let (id, notes) = world.run_noting(
        "rm -rf src && mkdir -p src/nested && mkfifo src/lib.rs && touch src/nested/deep.rs \
         && chmod 000 src/nested/deep.rs && echo new > src/new.rs",
    );
    let id = id.unwrap_or_else(|| panic!("the run is not recorded: {notes:?}"));
    assert!(
        notes.iter().any(|note| note.contains("leaves out `src/lib.rs`")),
        "{notes:?}"
    );
    world.run("echo later > later.txt").unwrap();
    let report = world
        .store()
        .undo(
            UndoRequest {
                from: Some(id),
                ..UndoRequest::default()
            },
            &|_| None,
        )
        .unwrap();
    assert!(report.applied, "{report:?}");
    assert_eq!(state(&world.project), between);
}

/// A file too large to hash is recorded by its stat data alone, so that writing it cannot make the snapshot after
/// the command run past its bound: the run (and what else it did) is recorded, and taking it back deletes the
/// file and puts back the rest.
fn a_file_too_large_to_hash_is_recorded_by_its_stat_and_the_run_taken_back() {
    let world = World::new();
    world.warm();
    let between = state(&world.project);
    let id = world
        .run("rm -rf src && truncate -s 300M big.bin && echo small > small.bin")
        .unwrap();
    let store = world.store();
    let tree = std::fs::read_to_string(store.dir().join("last-tree")).unwrap();
    let listed = Command::new("git")
        .arg("--git-dir")
        .arg(store.dir())
        .args(["ls-tree", "-r", tree.trim()])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let line = |name: &str| {
        listed
            .lines()
            .find(|line| line.ends_with(name))
            .unwrap_or_default()
    };
    assert!(line("\tbig.bin").starts_with("160000 "), "{listed}");
    assert!(line("\tsmall.bin").starts_with("100644 blob "), "{listed}");
    world.run("echo later > later.txt").unwrap();
    let report = world
        .store()
        .undo(
            UndoRequest {
                from: Some(id),
                ..UndoRequest::default()
            },
            &|_| None,
        )
        .unwrap();
    assert!(report.applied && report.refused.is_empty(), "{report:?}");
    assert_eq!(state(&world.project), between);
}

/// A changed ignore rule (a `.gitignore` in the root, `.git/info/exclude`, a `.gitignore` above the root) makes
/// the next snapshot walk, and the trees are a walk's throughout; the watcher serves again afterwards.
fn a_changed_rule_makes_a_walk_and_the_watcher_comes_back() {
    let world = World::new();
    world.warm();
    world.run("echo 'docs/' >> .gitignore && mkdir -p docs && echo a > docs/a && echo b > kept");
    let stopped = std::fs::read_to_string(world.store().dir().join("watch-stopped")).unwrap_or_default();
    assert!(stopped.contains(".gitignore"), "{stopped}");
    world.run("echo b > docs/b && echo c >> kept");
    world.warm();
    std::fs::write(world.project.join(".git/info/exclude"), "src/nested/\n").unwrap();
    world.run("echo x >> src/nested/deep.rs && echo y >> src/lib.rs");
    // The watcher was told to quit and its token forgotten: that run walked.
    assert!(world.watch_state().is_none(), "{:?}", world.watch_state());
    world.warm();
    world.answered("after the exclude changed");
    // A root below the repository: the `.gitignore` at the top is above it, where no watcher of the root looks.
    let mut below = World::new();
    below.root = below.project.join("src");
    below.warm();
    std::fs::write(below.project.join(".gitignore"), "target/\n*.rs\n").unwrap();
    below.run("echo more >> lib.rs && echo new > new.rs && echo t > new.txt");
    assert!(below.watch_state().is_none(), "{:?}", below.watch_state());
    below.run("echo again >> new.rs && echo u >> new.txt");
    below.warm();
    below.run("echo last >> new.txt");
    below.answered("after the rule above the root changed");
    // A directory holding a `.gitignore` moved out of the root takes its rule with it, with no event of the rule
    // file; a directory of the same name made afterwards follows no such rule.
    let moved = World::new();
    std::fs::create_dir_all(moved.project.join("logs/build")).unwrap();
    std::fs::write(moved.project.join("logs/.gitignore"), "*.log\nbuild/\n").unwrap();
    std::fs::write(moved.project.join("logs/keep.txt"), "keep\n").unwrap();
    moved.warm();
    let away = moved.project.parent().unwrap().join("away");
    std::fs::rename(moved.project.join("logs"), &away).unwrap();
    moved.run("mkdir -p logs/build && echo x > logs/a.log && echo y > logs/build/b");
    moved.run("echo z >> logs/build/b");
    moved.warm();
    moved.run("echo w >> logs/build/b");
    moved.answered("after the directory with a rule was moved away");
}

/// A small random-number generator (xorshift), seeded from the clock and printed, so a failure can be replayed
/// with `WATCH_SEED`.
struct Random(u64);

impl Random {
    fn next(&mut self, below: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % below as u64) as usize
    }
}

/// Random edits, inside runs and between them: the watched store's trees are the walked store's every time.
fn random_edits_make_the_same_trees_as_a_walk() {
    random_rounds(false);
}

/// The same with `.gitignore` files written and removed among the edits: each stops the watcher, and the trees
/// are still a walk's.
fn random_edits_and_rules_make_the_same_trees_as_a_walk() {
    random_rounds(true);
}

fn random_rounds(rules: bool) {
    let seed = std::env::var("WATCH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    eprintln!("  seed {seed}");
    let mut random = Random(seed);
    let world = World::new();
    world.warm();
    let dirs = [
        "src",
        "src/nested",
        "docs",
        "docs/a/b",
        "target",
        "node_modules/x",
        "moved",
    ];
    let edit = move |random: &mut Random| -> String {
        let dir = dirs[random.next(dirs.len())];
        let other = dirs[random.next(dirs.len())];
        let n = random.next(6);
        let kinds = if rules { 13 } else { 11 };
        match random.next(kinds) {
            11 => format!("mkdir -p {dir} && printf 'f{n}\\nnew*/\\n' > {dir}/.gitignore"),
            12 => format!("rm -f {dir}/.gitignore"),
            0 | 1 => format!("mkdir -p {dir} && echo {n}-$RANDOM > {dir}/f{n}"),
            2 => format!("mkdir -p {dir} && printf 'x%.0s' $(seq 1 {n}) >> {dir}/f{n}"),
            3 => format!("rm -f {dir}/f{n}"),
            4 => format!("test -e {dir}/f{n} && chmod +x {dir}/f{n} || true"),
            5 => format!("mkdir -p {dir} && ln -sfn f{n} {dir}/l{n}"),
            6 => format!("test -d {dir} && mkdir -p {other}-r && mv {dir} {other}-r/m{n} || true"),
            7 => format!("rm -rf {dir}"),
            8 => format!(
                "mkdir -p {dir}/new{n}/deep && echo d > {dir}/new{n}/deep/x && echo e > {dir}/new{n}/y"
            ),
            9 => format!("test -e {dir}/f{n} && mkdir -p {other} && mv {dir}/f{n} {other}/g{n} || true"),
            _ => format!("mkdir -p {dir} && echo s > {dir}/.env && touch {dir}/f{n}"),
        }
    };
    let mut answered = 0;
    for round in 0..40 {
        let outside: Vec<String> = (0..random.next(3)).map(|_| edit(&mut random)).collect();
        if !outside.is_empty() {
            let status = Command::new("bash")
                .arg("-c")
                .arg(outside.join("; "))
                .current_dir(&world.project)
                .status()
                .unwrap();
            assert!(status.success());
        }
        let inside: Vec<String> = (0..1 + random.next(4)).map(|_| edit(&mut random)).collect();
        let script = format!("{}; true", inside.join("; "));
        eprintln!(
            "  round {round}: outside `{}`, inside `{script}`",
            outside.join("; ")
        );
        world.run(&script);
        if world
            .watch_state()
            .is_some_and(|state| state["walked"] == serde_json::Value::Bool(false))
        {
            answered += 1;
        }
    }
    // The watcher served most rounds (a new `.gitignore`-free directory does not stop it; only the rounds that
    // restart it walk), so the comparison is of its snapshots, not of two walks.
    eprintln!("  {answered} of 40 rounds answered by the watcher");
    assert!(
        answered >= if rules { 5 } else { 20 },
        "{answered} of 40 rounds answered by the watcher"
    );
}

fn main() {
    if let Some(code) = agent_undo::watcher_main() {
        std::process::exit(code);
    }
    if Command::new("git").arg("--version").output().is_err() {
        eprintln!("no git: skipped");
        return;
    }
    let tests: [(&str, fn()); 11] = [
        (
            "a_change_between_runs_is_captured_and_taken_back_to",
            a_change_between_runs_is_captured_and_taken_back_to,
        ),
        (
            "adds_deletes_and_renames_inside_a_run_are_taken_back",
            adds_deletes_and_renames_inside_a_run_are_taken_back,
        ),
        (
            "a_killed_or_overflowed_watcher_falls_back_to_a_walk",
            a_killed_or_overflowed_watcher_falls_back_to_a_walk,
        ),
        (
            "unchanged_snapshots_write_nothing_and_one_in_a_hundred_walks",
            unchanged_snapshots_write_nothing_and_one_in_a_hundred_walks,
        ),
        (
            "a_write_through_a_hard_link_outside_the_root_is_seen",
            a_write_through_a_hard_link_outside_the_root_is_seen,
        ),
        (
            "a_file_that_cannot_be_read_is_left_out_and_the_rest_taken_back",
            a_file_that_cannot_be_read_is_left_out_and_the_rest_taken_back,
        ),
        (
            "a_file_too_large_to_hash_is_recorded_by_its_stat_and_the_run_taken_back",
            a_file_too_large_to_hash_is_recorded_by_its_stat_and_the_run_taken_back,
        ),
        (
            "a_changed_rule_makes_a_walk_and_the_watcher_comes_back",
            a_changed_rule_makes_a_walk_and_the_watcher_comes_back,
        ),
        (
            "an_ignored_directory_that_shrinks_within_the_bound_is_held_whole",
            an_ignored_directory_that_shrinks_within_the_bound_is_held_whole,
        ),
        (
            "random_edits_make_the_same_trees_as_a_walk",
            random_edits_make_the_same_trees_as_a_walk,
        ),
        (
            "random_edits_and_rules_make_the_same_trees_as_a_walk",
            random_edits_and_rules_make_the_same_trees_as_a_walk,
        ),
    ];
    let filter = std::env::args().skip(1).find(|arg| !arg.starts_with('-'));
    let mut failed = Vec::new();
    for (name, test) in tests {
        if filter.as_deref().is_some_and(|filter| !name.contains(filter)) {
            continue;
        }
        eprintln!("test {name} ...");
        if std::panic::catch_unwind(test).is_err() {
            failed.push(name);
        }
    }
    if !failed.is_empty() {
        eprintln!("failed: {failed:?}");
        std::process::exit(1);
    }
    eprintln!("ok");
}
