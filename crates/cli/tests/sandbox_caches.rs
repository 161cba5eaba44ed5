//! The package caches of the home directory under `workspace-write`, for real: what a sandboxed command writes
//! there (a rewritten `build.rs` of an extracted crate, a planted future version, a download) never reaches the
//! shared cache that the user's own builds run outside the sandbox; with namespaces it lands in the project's own
//! layer, which the project's later sandboxed runs see and another project's do not; the tools' configuration and
//! programs in those caches stay read-only; without namespaces the shared caches are read, not written. As this
//! user and (as root) an unprivileged one, whose overlay lives in a user namespace.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agent-guard");
const NOBODY: u32 = 65_534;

#[path = "../../../tests/support/need.rs"]
mod need;
#[path = "../../../tests/support/scratch.rs"]
mod scratch;

use scratch::{LOWER, chown_all, is_root, random, text};

/// What `sandbox --probe` says, when the kernel enforces the sandbox.
fn probe() -> Option<String> {
    need::sandbox_report(BIN)
}

/// Whether the kernel gives the sandbox namespaces (else the tests of the overlay have nothing to test).
fn namespaces(report: &str) -> bool {
    report.lines().any(|line| line.starts_with("namespaces: yes"))
}
/// A scratch home with a cargo cache holding one extracted crate, cargo's configuration and a program, an npm
/// cache; two git projects and a directory that is no project beside it.
struct World {
    _dir: tempfile::TempDir,
    home: PathBuf,
    projects: [PathBuf; 2],
    loose: PathBuf,
    /// `.cargo/registry/src/<index>/<crate>`, the extracted crate.
    krate: PathBuf,
    /// What its `build.rs` holds (made up now).
    build_rs: String,
    owner: Option<u32>,
}

impl World {
    fn new(owner: Option<u32>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let home = dir.path().join("home");
        let krate = home.join(format!(
            ".cargo/registry/src/index-{}/dep-1.0.0",
            random(8, LOWER)
        ));
        std::fs::create_dir_all(&krate).unwrap();
        let build_rs = format!("fn main() {{ println!(\"{}\"); }}\n", random(16, LOWER));
        std::fs::write(krate.join("build.rs"), &build_rs).unwrap();
        std::fs::write(krate.join(".cargo-ok"), "{\"v\":1}").unwrap();
        std::fs::write(home.join(".cargo/config.toml"), "[build]\n").unwrap();
        std::fs::create_dir_all(home.join(".cargo/bin")).unwrap();
        std::fs::write(home.join(".cargo/bin/tool"), "#!/bin/sh\n").unwrap();
        std::fs::create_dir_all(home.join(".npm/_cacache")).unwrap();
        let projects = ["one", "two"].map(|name| {
            let project = dir.path().join(name);
            std::fs::create_dir_all(project.join(".git")).unwrap();
            project
        });
        let loose = dir.path().join("loose");
        std::fs::create_dir_all(&loose).unwrap();
        if let Some(uid) = owner {
            chown_all(dir.path(), uid);
        }
        Self {
            _dir: dir,
            home,
            projects,
            loose,
            krate,
            build_rs,
            owner,
        }
    }

    /// `bash -c line` under `workspace-write` in `dir`, HOME the scratch home, as the world's owner.
    fn run(&self, dir: &Path, namespaces: bool, line: &str) -> Output {
        let mut command = Command::new(BIN);
        command
            .args([
                "sandbox",
                "--profile",
                "workspace-write",
                "--",
                "bash",
                "-c",
                line,
            ])
            .current_dir(dir)
            .env("HOME", &self.home)
            .env_remove("CARGO_HOME")
            .env_remove("npm_config_cache")
            .stdin(Stdio::null());
        if !namespaces {
            command.env("AGENT_GUARD_SANDBOX_NAMESPACES", "off");
        }
        if let Some(uid) = self.owner {
            command.uid(uid).gid(uid);
        }
        command.output().unwrap()
    }

    /// The entries of the shared crate index directory, as the user's own builds see it.
    fn index_entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.krate.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

fn worlds() -> Vec<World> {
    let mut owners = vec![None];
    if is_root() {
        owners.push(Some(NOBODY));
    }
    owners.into_iter().map(World::new).collect()
}

/// A rewritten `build.rs` of an extracted crate and a planted future version with cargo's `.cargo-ok` stay in
/// the project's layer: the shared cache is unchanged, the project's next run sees both, another project and a
/// directory that is no project see neither.
#[test]
fn what_a_command_writes_in_a_cache_stays_with_its_project() {
    let Some(report) = probe() else { return };
    if !namespaces(&report) {
        eprintln!("skipped: the overlay of the caches needs namespaces");
        return;
    }
    for world in worlds() {
        let marker = random(20, LOWER);
        let index = world.krate.parent().unwrap();
        let planted = index.join("dep-1.0.999");
        let line = format!(
            "printf '%s\\n' {marker} >> '{build}' && mkdir '{planted}' && touch '{planted}/.cargo-ok' && \
             echo ran",
            build = world.krate.join("build.rs").display(),
            planted = planted.display(),
        );
        let output = world.run(&world.projects[0], true, &line);
        assert!(
            text(&output).contains("ran"),
            "{:?}: {}",
            world.owner,
            text(&output)
        );
        // The shared cache, as a build outside the sandbox finds it.
        assert_eq!(
            std::fs::read_to_string(world.krate.join("build.rs")).unwrap(),
            world.build_rs,
            "{:?}",
            world.owner
        );
        assert_eq!(
            world.index_entries(),
            vec!["dep-1.0.0".to_owned()],
            "{:?}",
            world.owner
        );

        let look = format!(
            "cat '{}'; ls '{}'",
            world.krate.join("build.rs").display(),
            index.display()
        );
        let again = text(&world.run(&world.projects[0], true, &look));
        assert!(
            again.contains(&marker) && again.contains("dep-1.0.999"),
            "{:?}: {again}",
            world.owner
        );
        for other in [&world.projects[1], &world.loose] {
            let seen = text(&world.run(other, true, &look));
            assert!(seen.contains(world.build_rs.trim()), "{:?}: {seen}", world.owner);
            assert!(
                !seen.contains(&marker) && !seen.contains("dep-1.0.999"),
                "{:?} in {}: {seen}",
                world.owner,
                other.display()
            );
        }
    }
}

/// A directory that is no project keeps its layer under the home directory, apart from other such directories.
#[test]
fn a_directory_that_is_no_project_keeps_its_own_layer() {
    let Some(report) = probe() else { return };
    if !namespaces(&report) {
        eprintln!("skipped: the overlay of the caches needs namespaces");
        return;
    }
    let world = World::new(None);
    let other = world.loose.parent().unwrap().join("loose-too");
    std::fs::create_dir_all(&other).unwrap();
    let download = world.home.join(".npm/_cacache/content-v2");
    let marker = random(20, LOWER);
    let line = format!(
        "mkdir -p '{d}' && printf '%s' {marker} > '{d}/blob' && cat '{d}/blob'",
        d = download.display()
    );
    let output = world.run(&world.loose, true, &line);
    assert!(text(&output).contains(&marker), "{}", text(&output));
    assert!(!download.exists());
    let look = format!("cat '{}/blob'", download.display());
    assert!(text(&world.run(&world.loose, true, &look)).contains(&marker));
    assert!(!text(&world.run(&other, true, &look)).contains(&marker));
    // The layers are agent-guard's, under the home directory, never in the directory itself.
    assert!(!world.loose.join(".agent-guard").exists());
}

/// A download (a plain file written into the cache, as cargo and npm do) succeeds and reads back in the same run.
#[test]
fn a_download_into_a_cache_succeeds() {
    let Some(report) = probe() else { return };
    if !namespaces(&report) {
        eprintln!("skipped: the overlay of the caches needs namespaces");
        return;
    }
    for world in worlds() {
        let marker = random(20, LOWER);
        let crate_file = world.home.join(".cargo/registry/cache/index-x/new-0.1.0.crate");
        let line = format!(
            "mkdir -p '{dir}' && printf '%s' {marker} > '{file}.part' && mv '{file}.part' '{file}' && \
             cat '{file}'",
            dir = crate_file.parent().unwrap().display(),
            file = crate_file.display(),
        );
        let output = world.run(&world.projects[0], true, &line);
        assert!(output.status.success(), "{:?}: {}", world.owner, text(&output));
        assert!(
            text(&output).contains(&marker),
            "{:?}: {}",
            world.owner,
            text(&output)
        );
        assert!(!crate_file.exists(), "{:?}", world.owner);
    }
}

/// The tools' configuration and programs inside a cache stay read-only on top of the overlay, and the layers
/// themselves are out of the command's reach.
#[test]
fn configuration_in_a_cache_stays_read_only() {
    let Some(report) = probe() else { return };
    if !namespaces(&report) {
        eprintln!("skipped: the overlay of the caches needs namespaces");
        return;
    }
    for world in worlds() {
        let config = world.home.join(".cargo/config.toml");
        let tool = world.home.join(".cargo/bin/tool");
        let line = format!(
            "echo 'rustc-wrapper = \"/x\"' >> '{c}'; echo evil >> '{t}'; touch '{b}/new'; \
             echo wrote > .agent-guard/caches/x; ls .agent-guard/caches; echo done",
            c = config.display(),
            t = tool.display(),
            b = world.home.join(".cargo/bin").display(),
        );
        let output = world.run(&world.projects[0], true, &line);
        assert!(text(&output).contains("done"), "{}", text(&output));
        let look = format!(
            "cat '{}' '{}'; ls '{}'",
            config.display(),
            tool.display(),
            world.home.join(".cargo/bin").display()
        );
        for seen in [
            text(&world.run(&world.projects[0], true, &look)),
            format!(
                "{}{}",
                std::fs::read_to_string(&config).unwrap(),
                std::fs::read_to_string(&tool).unwrap()
            ),
        ] {
            assert!(
                !seen.contains("rustc-wrapper") && !seen.contains("evil") && !seen.contains("new"),
                "{:?}: {seen}",
                world.owner
            );
        }
        // A configuration file the shared cache lacks has no read-only mount: made in the layer by one run, it is
        // gone from the next.
        let planted = world.home.join(".cargo/config");
        let plant = format!("echo '[build]' > '{p}' && cat '{p}'", p = planted.display());
        assert!(text(&world.run(&world.projects[0], true, &plant)).contains("[build]"));
        let after = world.run(&world.projects[0], true, &format!("cat '{}'", planted.display()));
        assert!(
            !after.status.success() && !text(&after).contains("[build]"),
            "{:?}: {}",
            world.owner,
            text(&after)
        );
        assert!(!planted.exists());
        let layers = world.projects[0].join(".agent-guard/caches");
        assert!(layers.is_dir());
        assert!(!layers.join("x").exists(), "{:?}", world.owner);
    }
}

/// Without namespaces nothing can redirect a path: the shared caches are read, and not written.
#[test]
fn without_namespaces_the_caches_are_read_only() {
    if probe().is_none() {
        return;
    }
    for world in worlds() {
        let line = format!(
            "cat '{b}'; echo evil >> '{b}'; mkdir '{p}'; echo done",
            b = world.krate.join("build.rs").display(),
            p = world.krate.parent().unwrap().join("dep-1.0.999").display(),
        );
        let output = world.run(&world.projects[0], false, &line);
        let seen = text(&output);
        assert!(
            seen.contains(world.build_rs.trim()) && seen.contains("done"),
            "{:?}: {seen}",
            world.owner
        );
        assert_eq!(
            std::fs::read_to_string(world.krate.join("build.rs")).unwrap(),
            world.build_rs
        );
        assert_eq!(world.index_entries(), vec!["dep-1.0.0".to_owned()]);
    }
}
