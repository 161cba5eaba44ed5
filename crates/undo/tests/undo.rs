//! Real commands in real directories, recorded and taken back: each test stands for a kind of damage a command
//! does inside a project.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

mod support;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::{git, state};

use agent_undo::{ChangeKind, Recording, Store, UndoError, UndoRequest, UndoSettings};

/// A project and a store directory, both temporary.
struct World {
    _dir: tempfile::TempDir,
    project: PathBuf,
    settings: UndoSettings,
}

impl World {
    /// A git repository with committed sources, an executable script, a link, a binary file, uncommitted and
    /// untracked work, an ignored build directory and a secret.
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
        git(&project, &["init", "-q"]);
        git(&project, &["add", "-A"]);
        git(&project, &["commit", "-q", "-m", "init"]);
        std::fs::write(
            project.join("src/lib.rs"),
            "pub fn a() {}\npub fn uncommitted() {}\n",
        )
        .unwrap();
        std::fs::write(project.join("untracked.txt"), "mine\r\nwith CRLF\r\n").unwrap();
        std::fs::create_dir_all(project.join("target")).unwrap();
        std::fs::write(project.join("target/out.o"), "build output").unwrap();
        std::fs::write(project.join(".env"), "API_KEY=PLANTED_SECRET_VALUE\n").unwrap();
        let settings = UndoSettings::in_dir(dir.path().join("state"));
        Self {
            _dir: dir,
            project,
            settings,
        }
    }

    /// Runs `script` with bash in the project, recorded; returns the run's number when it changed something.
    fn run(&self, script: &str) -> Option<u64> {
        let recording = Recording::begin(std::slice::from_ref(&self.project), script, &self.settings);
        assert!(recording.notes().is_empty(), "{:?}", recording.notes());
        let status = Command::new("bash")
            .arg("-c")
            .arg(script)
            .current_dir(&self.project)
            .status()
            .unwrap();
        assert!(status.success(), "`{script}` failed");
        let finished = recording.finish();
        assert!(finished.notes.is_empty(), "{:?}", finished.notes);
        finished.runs.first().map(|run| run.id)
    }

    fn store(&self) -> Store {
        Store::existing(&self.project, &self.settings).unwrap().unwrap()
    }

    fn undo(&self, request: UndoRequest) -> agent_undo::UndoReport {
        self.store().undo(request, &|_| None).unwrap()
    }
}

#[test]
fn rm_rf_src_is_taken_back_with_modes_and_links() {
    let world = World::new();
    let before = state(&world.project);
    let id = world.run("rm -rf src lib-link run.sh").unwrap();
    assert!(!world.project.join("src").exists());
    let store = world.store();
    let run = store.runs().unwrap().into_iter().find(|r| r.id == id).unwrap();
    let changes = store.changes(&run).unwrap();
    assert!(
        changes.iter().all(|c| c.kind == ChangeKind::Deleted),
        "{changes:?}"
    );
    assert_eq!(changes.len(), 4, "{changes:?}");
    let report = world.undo(UndoRequest::default());
    assert!(report.applied && report.conflicts.is_empty(), "{report:?}");
    assert_eq!(state(&world.project), before);
}

#[test]
fn sed_over_a_thousand_files_is_taken_back_byte_for_byte() {
    let world = World::new();
    for i in 0..1_000 {
        let dir = world.project.join(format!("gen/d{}", i % 10));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i}.txt")), format!("value {i}\nsecond line\n")).unwrap();
    }
    let before = state(&world.project);
    let id = world
        .run("find gen -name '*.txt' -print0 | xargs -0 sed -i 's/value/WRONG/'")
        .unwrap();
    let run = world
        .store()
        .runs()
        .unwrap()
        .into_iter()
        .find(|r| r.id == id)
        .unwrap();
    assert_eq!(world.store().changes(&run).unwrap().len(), 1_000);
    assert!(world.undo(UndoRequest::default()).applied);
    assert_eq!(state(&world.project), before);
}

#[test]
fn git_reset_hard_over_uncommitted_work_is_taken_back() {
    let world = World::new();
    let before = state(&world.project);
    world.run("git reset -q --hard && git clean -qfd").unwrap();
    assert!(!world.project.join("untracked.txt").exists());
    assert!(world.undo(UndoRequest::default()).applied);
    // Everything but the secret comes back. A secret file is never copied into the store; under the sandbox a
    // command cannot delete it (it is hidden or split out of the grants), but this one ran unconfined.
    let mut expected = before;
    expected.remove(Path::new(".env"));
    assert_eq!(state(&world.project), expected);
    // The project's repository itself is as the command left it: undo restores files, not git's state.
    assert!(world.project.join(".git/HEAD").is_file());
}

#[test]
fn a_script_that_deletes_untracked_files_and_creates_new_ones_is_taken_back() {
    let world = World::new();
    let before = state(&world.project);
    world
        .run(
            "rm untracked.txt blob.bin; mkdir -p made/deeper; echo new > made/deeper/n.txt; \
              ln -s /etc/passwd made/link; printf 'x' > src/lib.rs; chmod +x src/nested/deep.rs; \
              rm lib-link; mkdir lib-link; echo in > lib-link/file",
        )
        .unwrap();
    let report = world.undo(UndoRequest::default());
    assert!(report.applied, "{report:?}");
    assert_eq!(state(&world.project), before);
}

#[test]
fn a_file_changed_after_the_run_makes_undo_refuse_until_forced() {
    let world = World::new();
    world.run("echo run > src/lib.rs").unwrap();
    std::fs::write(world.project.join("src/lib.rs"), "the user's edit\n").unwrap();
    let refused = world.undo(UndoRequest::default());
    assert!(!refused.applied);
    assert_eq!(refused.conflicts.len(), 1, "{refused:?}");
    assert_eq!(refused.conflicts[0].path, Path::new("src/lib.rs"));
    assert_eq!(
        std::fs::read_to_string(world.project.join("src/lib.rs")).unwrap(),
        "the user's edit\n"
    );
    let forced = world.undo(UndoRequest {
        force: true,
        ..UndoRequest::default()
    });
    assert!(forced.applied && forced.saved.is_some(), "{forced:?}");
    assert_eq!(
        std::fs::read_to_string(world.project.join("src/lib.rs")).unwrap(),
        "pub fn a() {}\npub fn uncommitted() {}\n"
    );
}

#[test]
fn a_run_and_every_later_one_are_taken_back_last_first() {
    let world = World::new();
    let before = state(&world.project);
    let first = world.run("echo one > a.txt; rm blob.bin").unwrap();
    let second = world.run("echo two >> a.txt; rm -r src").unwrap();
    let third = world.run("mv a.txt b.txt").unwrap();
    assert!(first < second && second < third);
    let dry = world.undo(UndoRequest {
        from: Some(first),
        dry_run: true,
        ..UndoRequest::default()
    });
    assert!(!dry.applied);
    assert!(
        dry.diff
            .contains("+++ b/src/lib.rs\n+pub fn a() {}\n+pub fn uncommitted() {}\n"),
        "{}",
        dry.diff
    );
    assert!(
        dry.diff.contains("--- a/b.txt\n+++ /dev/null\n-one\n-two\n"),
        "{}",
        dry.diff
    );
    assert!(world.project.join("b.txt").exists(), "a dry run changes nothing");
    let report = world.undo(UndoRequest {
        from: Some(first),
        ..UndoRequest::default()
    });
    assert_eq!(report.runs, vec![third, second, first]);
    assert_eq!(state(&world.project), before);
    // Taken back runs are not taken back twice.
    let again = world.store().undo(UndoRequest::default(), &|_| None);
    assert!(matches!(again, Err(UndoError::NothingToUndo(_))), "{again:?}");
}

#[test]
fn secrets_and_ignored_output_never_enter_the_store() {
    let world = World::new();
    world
        .run("echo changed > src/lib.rs; echo more >> target/out.o")
        .unwrap();
    let store = world.store();
    let objects = Command::new("git")
        .arg("--git-dir")
        .arg(store.dir())
        .args(["cat-file", "--batch-all-objects", "--batch"])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    let all = String::from_utf8_lossy(&objects.stdout);
    assert!(all.contains("pub fn uncommitted"), "the store holds the sources");
    assert!(!all.contains("PLANTED_SECRET_VALUE"), "the store holds no secret");
    assert!(!all.contains("build output"), "the store holds no ignored output");
    assert!(
        !store.dir().starts_with(&world.project),
        "the store is outside the project"
    );
    // The project's own repository is untouched: no new object, ref or index entry.
    let status = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(&world.project)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&status.stdout).contains("agent-guard"));
}

/// What the project keeps out of git but no build makes again (a database, a data directory, notes) is held by the
/// snapshots: a command that removes or overwrites it, by whatever code, is taken back. A build output and an
/// environment the project ignores stay out of the store.
#[test]
fn data_the_project_ignores_is_taken_back_and_its_build_outputs_stay_out() {
    let world = World::new();
    let project = &world.project;
    std::fs::write(
        project.join(".gitignore"),
        "target/\n*.db\n/data/\n/notes/\n/dist/\n/.venv/\n",
    )
    .unwrap();
    std::fs::write(project.join("app.db"), "SQLite format 3\0rows").unwrap();
    std::fs::create_dir_all(project.join("data/sub")).unwrap();
    std::fs::write(project.join("data/users.csv"), "id,name\n1,ada\n").unwrap();
    std::fs::write(project.join("data/sub/x.json"), "{\"k\": 1}").unwrap();
    std::fs::create_dir_all(project.join("notes")).unwrap();
    std::fs::write(project.join("notes/todo.txt"), "keep\n").unwrap();
    std::fs::create_dir_all(project.join("dist")).unwrap();
    std::fs::write(project.join("dist/bundle.js"), "BUNDLED_OUTPUT").unwrap();
    std::fs::create_dir_all(project.join(".venv/lib")).unwrap();
    std::fs::write(project.join(".venv/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    std::fs::write(project.join(".venv/lib/site.py"), "ENVIRONMENT_FILE").unwrap();
    let before = state(project);
    world
        .run("rm -f app.db && rm -rf data && echo overwritten > notes/todo.txt")
        .unwrap();
    assert!(!project.join("app.db").exists() && !project.join("data").exists());
    let report = world.undo(UndoRequest::default());
    assert!(report.applied && report.conflicts.is_empty(), "{report:?}");
    assert_eq!(state(project), before);
    let objects = Command::new("git")
        .arg("--git-dir")
        .arg(world.store().dir())
        .args(["cat-file", "--batch-all-objects", "--batch"])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    let all = String::from_utf8_lossy(&objects.stdout);
    assert!(all.contains("id,name"), "the store holds the ignored data");
    assert!(!all.contains("BUNDLED_OUTPUT"), "the store holds no build output");
    assert!(
        !all.contains("ENVIRONMENT_FILE"),
        "the store holds no environment"
    );
}

#[test]
fn a_link_put_in_the_way_is_not_followed_when_restoring() {
    let world = World::new();
    let outside = world.project.parent().unwrap().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    world.run("rm -rf src").unwrap();
    // Something else puts a link where the directory was.
    std::os::unix::fs::symlink(&outside, world.project.join("src")).unwrap();
    let refused = world.undo(UndoRequest::default());
    assert!(!refused.applied && !refused.conflicts.is_empty(), "{refused:?}");
    let forced = world.store().undo(
        UndoRequest {
            force: true,
            ..UndoRequest::default()
        },
        &|_| None,
    );
    // Forced, the link is replaced by the directory it stands in for; nothing is written through it.
    assert!(forced.is_ok(), "{forced:?}");
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "nothing was written outside the root"
    );
    assert!(world.project.join("src/lib.rs").is_file());
}

#[test]
fn refused_paths_are_left_as_they_are() {
    let world = World::new();
    world.run("rm -rf src run.sh").unwrap();
    let report = world
        .store()
        .undo(UndoRequest::default(), &|path| {
            path.starts_with("src").then(|| "protected".to_owned())
        })
        .unwrap();
    assert!(report.applied);
    assert_eq!(report.refused.len(), 2, "{report:?}");
    assert!(!world.project.join("src").exists());
    assert!(world.project.join("run.sh").is_file());
}

#[test]
fn a_directory_that_is_not_a_repository_is_snapshotted_and_its_cache_directories_are_not() {
    let world = World::new();
    let plain = world.project.parent().unwrap().join("plain");
    std::fs::create_dir_all(plain.join("cache")).unwrap();
    std::fs::write(
        plain.join("cache/CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55",
    )
    .unwrap();
    std::fs::write(plain.join("cache/big"), "cached").unwrap();
    std::fs::write(plain.join("notes.md"), "notes").unwrap();
    let before = state(&plain);
    let recording = Recording::begin(std::slice::from_ref(&plain), "rm notes.md", &world.settings);
    std::fs::remove_file(plain.join("notes.md")).unwrap();
    std::fs::write(plain.join("cache/big"), "changed cache").unwrap();
    let finished = recording.finish();
    assert_eq!(finished.runs.len(), 1, "{finished:?}");
    assert_eq!(
        finished.runs[0].changed, 1,
        "the cache directory is not snapshotted"
    );
    let store = Store::existing(&plain, &world.settings).unwrap().unwrap();
    assert!(store.undo(UndoRequest::default(), &|_| None).unwrap().applied);
    assert_eq!(std::fs::read(plain.join("notes.md")).unwrap(), b"notes");
    assert_ne!(state(&plain), before, "the cache keeps the command's change");
}

#[test]
fn retention_keeps_the_newest_runs() {
    let mut world = World::new();
    world.settings.keep_runs = 3;
    let ids: Vec<u64> = (0..5)
        .map(|i| world.run(&format!("echo {i} > counter")).unwrap())
        .collect();
    let kept: Vec<u64> = world.store().runs().unwrap().iter().map(|r| r.id).collect();
    assert_eq!(kept, ids[2..].to_vec());
}

#[test]
fn off_means_no_snapshot_and_no_store() {
    let mut world = World::new();
    world.settings.enabled = false;
    let recording = Recording::begin(
        std::slice::from_ref(&world.project),
        "rm -rf src",
        &world.settings,
    );
    std::fs::remove_dir_all(world.project.join("src")).unwrap();
    assert!(recording.finish().runs.is_empty());
    world.settings.enabled = true;
    assert!(
        Store::existing(&world.project, &world.settings)
            .unwrap()
            .is_none()
    );
    assert!(!agent_undo::snapshots_on(Path::new("/"), &world.settings));
    assert!(agent_undo::snapshots_on(&world.project, &world.settings));
}

#[test]
fn a_root_below_the_repository_follows_the_repository_s_ignore_rules() {
    let world = World::new();
    let sub = world.project.join("src");
    std::fs::create_dir_all(sub.join("target")).unwrap();
    std::fs::write(sub.join("target/obj"), "ignored by the repository's .gitignore").unwrap();
    let recording = Recording::begin(std::slice::from_ref(&sub), "edit", &world.settings);
    std::fs::write(sub.join("target/obj"), "changed").unwrap();
    std::fs::write(sub.join("lib.rs"), "changed").unwrap();
    let finished = recording.finish();
    assert_eq!(finished.runs.len(), 1, "{finished:?}");
    assert_eq!(finished.runs[0].changed, 1);
    let store = Store::existing(&sub, &world.settings).unwrap().unwrap();
    assert!(store.undo(UndoRequest::default(), &|_| None).unwrap().applied);
    assert_eq!(
        std::fs::read_to_string(sub.join("lib.rs")).unwrap(),
        "pub fn a() {}\npub fn uncommitted() {}\n"
    );
}

#[test]
fn a_root_that_holds_the_store_is_not_snapshotted() {
    let world = World::new();
    let settings = UndoSettings::in_dir(world.project.join("state"));
    assert!(!agent_undo::snapshots_on(&world.project, &settings));
    let recording = Recording::begin(std::slice::from_ref(&world.project), "true", &settings);
    assert!(recording.finish().runs.is_empty());
    assert!(!world.project.join("state").exists());
}

#[test]
fn a_store_in_the_projects_own_agent_guard_directory_is_left_out_of_its_snapshots() {
    let world = World::new();
    let settings = UndoSettings::from_env(Some(&world.project), None);
    assert!(agent_undo::snapshots_on(&world.project, &settings));
    std::fs::write(world.project.join("notes.md"), "before\n").unwrap();
    let recording = Recording::begin(std::slice::from_ref(&world.project), "edit", &settings);
    std::fs::write(world.project.join("notes.md"), "after\n").unwrap();
    let finished = recording.finish();
    // One file changed: the store written beside it in `.agent-guard/undo` is no part of the run.
    assert_eq!(finished.runs.len(), 1, "{:?}", finished.notes);
    assert_eq!(finished.runs[0].changed, 1);
    assert!(world.project.join(".agent-guard/undo").is_dir());
    let store = Store::existing(&world.project, &settings).unwrap().unwrap();
    assert!(store.dir().starts_with(world.project.join(".agent-guard/undo")));
    assert!(store.undo(UndoRequest::default(), &|_| None).unwrap().applied);
    assert_eq!(
        std::fs::read_to_string(world.project.join("notes.md")).unwrap(),
        "before\n"
    );
}

#[test]
fn a_nested_repository_s_files_are_snapshotted_and_taken_back() {
    let world = World::new();
    let nested = world.project.join("vendor/lib");
    std::fs::create_dir_all(nested.join("src")).unwrap();
    std::fs::write(nested.join("src/lib.c"), "int lib(void) { return 1; }\n").unwrap();
    std::fs::write(nested.join(".gitignore"), "build/\n").unwrap();
    git(&nested, &["init", "-q"]);
    git(&nested, &["add", "-A"]);
    git(&nested, &["commit", "-q", "-m", "vendored"]);
    std::fs::write(
        nested.join("local.patch"),
        "uncommitted work in the nested repository\n",
    )
    .unwrap();
    std::fs::create_dir_all(nested.join("build")).unwrap();
    std::fs::write(nested.join("build/lib.o"), "object").unwrap();
    let before = state(&world.project);
    let id = world
        .run("rm vendor/lib/local.patch; echo broken > vendor/lib/src/lib.c; echo new > vendor/lib/new.c")
        .unwrap();
    let store = world.store();
    let run = store.runs().unwrap().into_iter().find(|r| r.id == id).unwrap();
    let mut changed: Vec<(PathBuf, ChangeKind)> = store
        .changes(&run)
        .unwrap()
        .into_iter()
        .map(|c| (c.path, c.kind))
        .collect();
    changed.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        changed,
        vec![
            (PathBuf::from("vendor/lib/local.patch"), ChangeKind::Deleted),
            (PathBuf::from("vendor/lib/new.c"), ChangeKind::Added),
            (PathBuf::from("vendor/lib/src/lib.c"), ChangeKind::Modified),
        ]
    );
    assert!(world.undo(UndoRequest::default()).applied);
    // The nested repository's own `.git` is neither snapshotted nor written; its ignore rules are followed.
    let mut expected = before;
    let mut now = state(&world.project);
    for map in [&mut expected, &mut now] {
        map.retain(|path, _| !path.starts_with("vendor/lib/.git"));
    }
    assert_eq!(now, expected);
    assert_eq!(
        std::fs::read_to_string(nested.join("local.patch")).unwrap(),
        "uncommitted work in the nested repository\n"
    );
    let objects = Command::new("git")
        .arg("--git-dir")
        .arg(store.dir())
        .args(["cat-file", "--batch-all-objects", "--batch-check"])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&objects.stdout).contains("commit"),
        "the nested repository is held as its files, not as a commit"
    );
}

#[test]
fn ignore_rules_a_run_writes_do_not_hide_what_it_did_from_its_own_snapshot() {
    // Each way a run can make git ignore a path: a new `.gitignore` that ignores everything (itself included),
    // a changed one, one deeper down, the repository's exclude file, and a cache tag.
    let attacks = [
        "echo '*' > .gitignore",
        "printf '*\\n!.gitignore\\n' > src/.gitignore",
        "echo '*' > src/nested/.gitignore",
        "echo '*' >> .git/info/exclude",
        "echo 'Signature: 8a477f597d28d172789f06886806bc55' > src/CACHEDIR.TAG",
    ];
    for attack in attacks {
        let world = World::new();
        let before = state(&world.project);
        world
            .run(&format!(
                "{attack}; echo made > src/made.rs; echo made > src/nested/made.rs; echo changed > src/lib.rs; \
                 rm src/nested/deep.rs"
            ))
            .unwrap_or_else(|| panic!("`{attack}`: the run was recorded as changing nothing"));
        let report = world.undo(UndoRequest::default());
        assert!(
            report.applied && report.conflicts.is_empty(),
            "`{attack}`: {report:?}"
        );
        let mut now = state(&world.project);
        let mut expected = before.clone();
        // `.git` is the repository's own: undo does not write it (the test's unconfined run could).
        for map in [&mut expected, &mut now] {
            map.retain(|path, _| !path.starts_with(".git/"));
        }
        assert_eq!(
            now, expected,
            "`{attack}`: not everything the run did was taken back"
        );
    }
}

#[test]
fn a_rule_written_between_runs_does_not_take_a_snapshotted_file_out() {
    let world = World::new();
    world.run("echo '*' > .gitignore").unwrap();
    let id = world.run("rm -r src untracked.txt").unwrap();
    let report = world.undo(UndoRequest {
        from: Some(id),
        ..UndoRequest::default()
    });
    assert!(report.applied, "{report:?}");
    assert!(world.project.join("src/nested/deep.rs").is_file());
    assert!(world.project.join("untracked.txt").is_file());
}

/// A run that writes more files than one snapshot hashes is recorded all the same (the ones past the bound by
/// their stat data alone), and taken back: the files it made are deleted, the ones it deleted put back.
#[test]
fn a_run_that_writes_more_files_than_a_snapshot_hashes_is_recorded_and_taken_back() {
    let world = World::new();
    world.run("true");
    let before = state(&world.project);
    let id = world
        .run("rm -rf src && mkdir many && cd many && seq 1 40010 | xargs touch")
        .unwrap();
    let by_stat = || {
        let store = world.store();
        let tree = std::fs::read_to_string(store.dir().join("last-tree")).unwrap();
        let listed = Command::new("git")
            .arg("--git-dir")
            .arg(store.dir())
            .args(["ls-tree", "-r", tree.trim()])
            .output()
            .unwrap();
        String::from_utf8_lossy(&listed.stdout)
            .lines()
            .filter(|line| line.starts_with("160000 "))
            .count()
    };
    let left = by_stat();
    assert!(
        (1..=40).contains(&left),
        "{left} files recorded by their stat data"
    );
    // The snapshot before the next command hashes them (the bound allows it now): that run holds its own change.
    let later = world.run("echo later > later.txt").unwrap();
    assert_eq!(by_stat(), 0);
    let store = world.store();
    let record = store
        .runs()
        .unwrap()
        .into_iter()
        .find(|run| run.id == later)
        .unwrap();
    assert_eq!(store.changes(&record).unwrap().len(), 1);
    let report = world.undo(UndoRequest {
        from: Some(id),
        ..UndoRequest::default()
    });
    assert!(report.applied && report.refused.is_empty(), "{report:?}");
    assert_eq!(state(&world.project), before);
}

/// A run that writes more files than a snapshot hashes, and changes a `.gitignore` (so that the snapshot after it
/// looks at every file of the root), does not take from the snapshots the content of the files it left alone
/// (one with a time in the future, which git looks at again each time, included), and the files it changed that
/// existed before are hashed before the ones it made: later runs that empty them are taken back.
#[test]
fn a_run_past_the_bound_of_files_keeps_the_content_of_the_files_it_did_not_make() {
    let world = World::new();
    let lib = world.project.join("src/lib.rs");
    let deep = world.project.join("src/nested/deep.rs");
    // A clock ahead of this one wrote it: its time is not older than any index written since.
    let ahead = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&lib)
        .unwrap()
        .set_modified(ahead)
        .unwrap();
    for _ in 0..3 {
        world.run("true");
    }
    let kept = std::fs::read(&lib).unwrap();
    world
        .run(
            "mkdir junk && head -c 8004000 /dev/zero | split -b 200 -a 4 - junk/f && echo '*.tmp' >> .gitignore \
             && echo '// more' >> src/nested/deep.rs",
        )
        .unwrap();
    let changed = std::fs::read(&deep).unwrap();
    let not_kept: Vec<PathBuf> = agent_undo::not_kept(&world.project, &world.settings)
        .into_iter()
        .filter(|path| !path.starts_with(world.project.join("junk")))
        .collect();
    assert!(not_kept.is_empty(), "{not_kept:?}");
    world.run("sed -i d src/lib.rs src/nested/deep.rs").unwrap();
    let report = world.undo(UndoRequest::default());
    assert!(report.applied && report.refused.is_empty(), "{report:?}");
    assert_eq!(std::fs::read(&lib).unwrap(), kept);
    assert_eq!(std::fs::read(&deep).unwrap(), changed);
}

/// A file too large to hash that a run moves is the only copy of it: taking the run back leaves it where the run
/// put it (the old name cannot be filled again) instead of deleting it; a large file the run made is deleted.
#[test]
fn a_moved_file_whose_content_was_not_kept_is_left_not_deleted() {
    let world = World::new();
    let big = world.project.join("big.bin");
    // Sparse: larger than one snapshot hashes, without writing it.
    std::fs::File::create(&big)
        .unwrap()
        .set_len(agent_undo::KEPT_SNAPSHOT_BYTES + 1)
        .unwrap();
    world.run("true");
    world
        .run("mv big.bin old.bin && truncate -s 300M made.bin")
        .unwrap();
    let report = world.undo(UndoRequest::default());
    assert!(report.applied, "{report:?}");
    assert!(
        world.project.join("old.bin").is_file(),
        "the moved file is left: {report:?}"
    );
    assert!(
        report.refused.iter().any(|r| r.path == Path::new("old.bin")),
        "{report:?}"
    );
    assert!(!world.project.join("made.bin").exists(), "{report:?}");
}

/// The stores lie in the project's `.agent-guard/`: git never takes them into the project's commits, whatever
/// that directory's own ignore file says.
#[test]
fn the_stores_in_the_project_stay_out_of_its_commits() {
    let world = World::new();
    std::fs::write(world.project.join(".gitignore"), "target/\n*.db\n").unwrap();
    std::fs::write(world.project.join("app.db"), "IGNORED_ROWS").unwrap();
    let settings = UndoSettings::in_dir(world.project.join(".agent-guard/undo"));
    let recording = Recording::begin(
        std::slice::from_ref(&world.project),
        "echo x >> app.db",
        &settings,
    );
    let status = Command::new("bash")
        .args(["-c", "echo x >> app.db"])
        .current_dir(&world.project)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(!recording.finish().runs.is_empty());
    let listed = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all"])
        .current_dir(&world.project)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(!listed.contains(".agent-guard"), "{listed}");
}

/// A command allowed because undo takes it back learns of the files the snapshot before it could not keep that no
/// earlier snapshot had met (the decision could not know of them); the next run finds none new.
#[test]
fn a_file_new_to_the_store_and_too_large_to_hash_is_named_before_a_run_that_counts_on_undo() {
    let world = World::new();
    std::fs::File::create(world.project.join("dump.bin"))
        .unwrap()
        .set_len(agent_undo::KEPT_SNAPSHOT_BYTES + 1)
        .unwrap();
    let roots = [world.project.clone()];
    let first = Recording::begin(&roots, "rm -rf src", &world.settings);
    let dump = std::fs::canonicalize(world.project.join("dump.bin")).unwrap();
    assert_eq!(first.unkept(), [dump]);
    first.finish();
    let again = Recording::begin(&roots, "rm -rf src", &world.settings);
    assert!(again.unkept().is_empty(), "{:?}", again.unkept());
    again.finish();
}

/// Taking back a run never deletes what it made: a file moved out of a place no snapshot holds (a cache the project
/// ignores) is the only copy of it, and undo moves it into the store's `set-aside/`, where it keeps its bytes.
#[test]
fn what_a_run_made_is_set_aside_not_deleted() {
    let world = World::new();
    let project = &world.project;
    std::fs::write(project.join(".gitignore"), "target/\n/cache/\n/data/\n").unwrap();
    std::fs::create_dir_all(project.join("cache")).unwrap();
    std::fs::write(
        project.join("cache/CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n",
    )
    .unwrap();
    std::fs::write(project.join("cache/dev.db"), "THE ONLY COPY").unwrap();
    std::fs::create_dir_all(project.join("data")).unwrap();
    world.run("true");
    world.run("mv cache/dev.db data/dev.db").unwrap();
    let report = world.undo(UndoRequest::default());
    assert!(report.applied, "{report:?}");
    assert!(!project.join("data/dev.db").exists());
    let aside = report.set_aside.clone().unwrap_or_else(|| panic!("{report:?}"));
    assert_eq!(
        std::fs::read_to_string(aside.join("data/dev.db")).unwrap(),
        "THE ONLY COPY"
    );
}
