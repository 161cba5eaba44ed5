//! Tests of plan.rs.

use super::*;

struct Names;

impl Protection for Names {
    fn secret(&self, path: &Path, _root: &Path) -> bool {
        path.file_name().is_some_and(|n| n == ".env")
    }
    fn write_protected(&self, path: &Path, _root: &Path) -> bool {
        path.file_name().is_some_and(|n| n == ".git")
    }
}

fn support(namespaces: Namespaces) -> KernelSupport {
    KernelSupport {
        landlock_abi: 7,
        seccomp: true,
        namespaces,
        pids_cgroup: false,
        memory_cgroup: false,
        pid_max_per_namespace: false,
    }
}

/// A `workspace-write` spec of `root` without git writes, with no toolchain of the machine running the test.
fn writing_spec(root: &Path) -> SandboxSpec {
    let mut spec = SandboxSpec::new(
        Confinement {
            profile: SandboxProfile::WorkspaceWrite,
            network: false,
            git_writes: false,
            undo: false,
            background: false,
        },
        vec![root.to_path_buf()],
    );
    spec.toolchains.clear();
    spec
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
    std::fs::create_dir_all(dir.path().join("src/deep")).unwrap();
    std::fs::write(dir.path().join(".env"), "K=v").unwrap();
    std::fs::write(dir.path().join("src/deep/.env"), "K=v").unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "").unwrap();
    dir
}

#[test]
fn landlock_only_grants_siblings_of_secrets_and_protected_paths() {
    let dir = project();
    let root = dir.path().to_path_buf();
    let spec = SandboxSpec::new(
        Confinement {
            profile: SandboxProfile::WorkspaceWrite,
            network: false,
            git_writes: false,
            undo: false,
            background: false,
        },
        vec![root.clone()],
    );
    let plan = Plan::build(&spec, &Names, &support(Namespaces::Unavailable)).unwrap();
    let rights_of = |p: &Path| {
        plan.grants
            .iter()
            .filter(|g| p.starts_with(&g.path))
            .fold(Rights(0), |r, g| r.with(g.rights))
    };
    assert!(rights_of(&root.join("src/main.rs")).contains(Rights::READ.with(Rights::WRITE)));
    assert!(!rights_of(&root.join(".env")).contains(Rights::READ));
    assert!(!rights_of(&root.join("src/deep/.env")).contains(Rights::READ));
    assert!(rights_of(&root.join(".git/hooks")).contains(Rights::READ));
    assert!(!rights_of(&root.join(".git/hooks")).contains(Rights::WRITE));
    assert!(rights_of(&root).contains(Rights::LIST));
    assert!(plan.masks.is_empty() && plan.read_only_binds.is_empty());
}

#[test]
fn namespaces_mask_secrets_and_bind_protected_paths() {
    let dir = project();
    let root = dir.path().to_path_buf();
    let mut spec = SandboxSpec::new(Confinement::READ_ONLY, vec![root.clone()]);
    // Only what this test plants: no toolchain of the machine running it.
    spec.toolchains.clear();
    let plan = Plan::build(&spec, &Names, &support(Namespaces::Privileged)).unwrap();
    assert!(plan.masks.iter().any(|m| m.path == root.join(".env") && !m.dir));
    assert!(plan.masks.iter().any(|m| m.path == root.join("src/deep/.env")));
    // Read-only: the root itself is mounted read-only and non-executable; .git is not written anyway.
    assert_eq!(
        plan.read_only_binds,
        vec![ReadOnlyBind {
            path: root.clone(),
            no_exec: true
        }]
    );
    spec.confinement.profile = SandboxProfile::WorkspaceWrite;
    let plan = Plan::build(&spec, &Names, &support(Namespaces::Privileged)).unwrap();
    assert_eq!(
        plan.read_only_binds,
        vec![ReadOnlyBind {
            path: root.join(".git"),
            no_exec: false
        }]
    );
    assert_eq!(plan.watch.roots, vec![root]);
}

#[test]
fn only_a_confinement_with_git_writes_opens_the_inside_of_git() {
    let dir = project();
    let root = dir.path().to_path_buf();
    std::fs::create_dir_all(root.join(".git/objects")).unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    let mut spec = writing_spec(&root);
    let bound =
        |plan: &Plan| -> Vec<PathBuf> { plan.read_only_binds.iter().map(|b| b.path.clone()).collect() };
    // Without the flag: `.git` read-only whole, with namespaces and without.
    let plan = Plan::build(&spec, &Names, &support(Namespaces::Privileged)).unwrap();
    assert_eq!(bound(&plan), vec![root.join(".git")]);
    assert!(!plan.grants.iter().any(|g| g.path == root.join(".git")));
    // With it: the inside is writable (granted again, not bound), its configuration and hooks bound read-only.
    spec.confinement.git_writes = true;
    let plan = Plan::build(&spec, &Names, &support(Namespaces::Privileged)).unwrap();
    let binds = bound(&plan);
    assert!(!binds.contains(&root.join(".git")), "{binds:?}");
    assert!(binds.contains(&root.join(".git/config")) && binds.contains(&root.join(".git/hooks")));
    assert!(
        plan.grants
            .iter()
            .any(|g| g.path == root.join(".git") && g.rights.contains(Rights::WRITE))
    );
    // Landlock alone cannot keep the configuration out of a writable `.git`: read-only whole, flag or not.
    let plan = Plan::build(&spec, &Names, &support(Namespaces::Unavailable)).unwrap();
    assert!(
        !plan
            .grants
            .iter()
            .any(|g| root.join(".git/objects/x").starts_with(&g.path) && g.rights.contains(Rights::WRITE))
    );
}

#[test]
fn of_the_home_directory_only_the_tool_chains_entries_are_read() {
    let dir = project();
    let home = tempfile::tempdir().unwrap();
    let home_path = std::fs::canonicalize(home.path()).unwrap();
    for entry in [".cargo/registry", ".cargo/bin", "projects/other", "Downloads"] {
        std::fs::create_dir_all(home_path.join(entry)).unwrap();
    }
    std::fs::write(home_path.join(".zhistory"), "export TOKEN=x").unwrap();
    std::fs::write(home_path.join(".cargo/config.toml"), "").unwrap();
    let mut spec = SandboxSpec::new(Confinement::READ_ONLY, vec![dir.path().to_path_buf()]);
    spec.toolchains.clear();
    spec.program_dirs = vec![
        home_path.join(".cargo/bin"),
        home_path.clone(),
        PathBuf::from("/"),
    ];
    spec.home = Some(home_path.clone());
    for namespaces in [Namespaces::Privileged, Namespaces::Unavailable] {
        let plan = Plan::build(&spec, &Names, &support(namespaces)).unwrap();
        let readable = |p: &Path| {
            plan.grants
                .iter()
                .any(|g| p.starts_with(&g.path) && g.rights.contains(Rights::READ))
        };
        assert!(readable(&home_path.join(".cargo/registry/index")));
        assert!(readable(&home_path.join(".cargo/bin/cargo")));
        for unread in [
            ".zhistory",
            ".cargo/config.toml",
            "projects/other/.env",
            "Downloads/x",
            "",
        ] {
            assert!(!readable(&home_path.join(unread)), "{unread}");
        }
        assert!(plan.notes.iter().any(|n| n.contains("holds the home directory")));
    }
}

#[test]
fn the_spec_secret_places_are_hidden_where_a_grant_holds_them() {
    let dir = project();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".bash_history"), "export TOKEN=x").unwrap();
    std::fs::write(home.path().join("notes.txt"), "").unwrap();
    let mut spec = SandboxSpec::new(Confinement::READ_ONLY, vec![dir.path().to_path_buf()]);
    spec.toolchains.clear();
    spec.home = Some(home.path().to_path_buf());
    // The user's settings grant the whole home directory (`agentGuard.sandbox.read: ["~"]`).
    spec.extra_reads = vec![home.path().to_path_buf()];
    spec.secret_places = [".ssh", ".bash_history", ".aws"]
        .iter()
        .map(|entry| home.path().join(entry))
        .collect();
    let plan = Plan::build(&spec, &Names, &support(Namespaces::Privileged)).unwrap();
    assert!(plan.masks.contains(&Mask {
        path: home.path().join(".ssh"),
        dir: true,
        view: None,
        in_root: false,
        identity: None,
    }));
    assert!(plan.masks.contains(&Mask {
        path: home.path().join(".bash_history"),
        dir: false,
        view: None,
        in_root: false,
        identity: None,
    }));
    assert!(!plan.masks.iter().any(|m| m.path == home.path().join(".aws")));
    // Without namespaces the home directory is granted around them.
    let plan = Plan::build(&spec, &Names, &support(Namespaces::Unavailable)).unwrap();
    let readable = |p: &Path| {
        plan.grants
            .iter()
            .any(|g| p.starts_with(&g.path) && g.rights.contains(Rights::READ))
    };
    assert!(readable(&home.path().join("notes.txt")));
    assert!(!readable(&home.path().join(".ssh/id_rsa")));
    assert!(!readable(&home.path().join(".bash_history")));
}

#[test]
fn a_missing_root_is_named() {
    let spec = SandboxSpec::new(Confinement::READ_ONLY, vec![PathBuf::from("/no/such/root")]);
    let error = Plan::build(&spec, &Names, &support(Namespaces::Unavailable)).unwrap_err();
    assert!(error.to_string().contains("`/no/such/root`"), "{error}");
}

#[test]
fn a_roots_own_entries_are_all_looked_at_past_the_limit() {
    let dir = project();
    // Entries a command made to push the root's protected places past the scan's limit.
    for n in 0..50 {
        std::fs::write(dir.path().join(format!("f{n}")), "").unwrap();
    }
    let mut spec = SandboxSpec::new(
        Confinement {
            profile: SandboxProfile::WorkspaceWrite,
            network: false,
            git_writes: false,
            undo: false,
            background: false,
        },
        vec![dir.path().to_path_buf()],
    );
    spec.scan_limit = 2;
    let plan = Plan::build(&spec, &Names, &support(Namespaces::Privileged)).unwrap();
    assert!(
        plan.masks.iter().any(|m| m.path == dir.path().join(".env")),
        "{:?}",
        plan.masks
    );
    assert!(
        plan.read_only_binds
            .iter()
            .any(|b| b.path == dir.path().join(".git")),
        "{:?}",
        plan.read_only_binds
    );
    // What lies deeper stays past the limit, and the plan says so.
    assert!(plan.notes.iter().any(|n| n.contains("stopped after 2 entries")));
}

#[test]
fn a_cache_tag_is_trusted_only_on_a_build_outputs_name() {
    let dir = project();
    for tagged in ["libs/x", "target"] {
        std::fs::create_dir_all(dir.path().join(tagged).join(".git")).unwrap();
        std::fs::write(dir.path().join(tagged).join("CACHEDIR.TAG"), "").unwrap();
    }
    let spec = SandboxSpec::new(
        Confinement {
            profile: SandboxProfile::WorkspaceWrite,
            network: false,
            git_writes: false,
            undo: false,
            background: false,
        },
        vec![dir.path().to_path_buf()],
    );
    let plan = Plan::build(&spec, &Names, &support(Namespaces::Privileged)).unwrap();
    let bound = |path: &str| {
        plan.read_only_binds
            .iter()
            .any(|b| b.path == dir.path().join(path))
    };
    // A tag any command may write does not hide the repository inside `libs/x` from the scan.
    assert!(bound("libs/x/.git"), "{:?}", plan.read_only_binds);
    // cargo's tagged `target/` is skipped, as a build output.
    assert!(!bound("target/.git"), "{:?}", plan.read_only_binds);
}

#[test]
fn the_scan_stops_at_its_limit_and_says_so() {
    let dir = project();
    let mut spec = SandboxSpec::new(Confinement::READ_ONLY, vec![dir.path().to_path_buf()]);
    spec.scan_limit = 2;
    let plan = Plan::build(&spec, &Names, &support(Namespaces::Unavailable)).unwrap();
    assert!(plan.notes.iter().any(|n| n.contains("stopped after 2 entries")));
}

/// A home with a cargo cache and a pip cache, a project beside it, and a spec of `workspace-write` over the
/// project with the project's store of cache layers.
fn cached_world() -> (tempfile::TempDir, SandboxSpec) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    for d in [".cargo/registry/src", ".cargo/bin", ".cache/pip"] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let mut spec = SandboxSpec::new(
        Confinement {
            profile: SandboxProfile::WorkspaceWrite,
            network: false,
            git_writes: false,
            undo: false,
            background: false,
        },
        vec![project.clone()],
    );
    spec.toolchains.clear();
    spec.home = Some(home);
    spec.cache_store = Some(project.join(".agent-guard/caches"));
    (dir, spec)
}

#[test]
fn with_namespaces_each_cache_is_an_overlay_over_the_projects_layer() {
    let (_dir, spec) = cached_world();
    let home = spec.home.clone().unwrap();
    let store = spec.cache_store.clone().unwrap();
    let plan = Plan::build(&spec, &Names, &support(Namespaces::Privileged)).unwrap();
    let overlaid: Vec<&Path> = plan.cache_overlays.iter().map(|o| o.cache.as_path()).collect();
    assert_eq!(overlaid, vec![home.join(".cache/pip"), home.join(".cargo")]);
    for overlay in &plan.cache_overlays {
        assert!(overlay.upper.starts_with(&store) && overlay.upper.is_dir() && overlay.work.is_dir());
        assert_eq!(overlay.upper.parent(), overlay.work.parent());
    }
    // Two caches never share a layer, and the `.agent-guard` made for them keeps itself out of git.
    assert_ne!(plan.cache_overlays[0].upper, plan.cache_overlays[1].upper);
    assert!(store.parent().unwrap().join(".gitignore").is_file());
    assert!(store.join(".gitignore").is_file());
    // The layers are hidden from the command; the caches' programs stay read-only on top of the overlay.
    assert!(plan.masks.iter().any(|m| m.path == store && m.dir));
    assert!(
        plan.read_only_binds
            .iter()
            .any(|b| b.path == home.join(".cargo/bin"))
    );
}

#[test]
fn without_an_overlay_no_shared_cache_is_written() {
    let (_dir, spec) = cached_world();
    let home = spec.home.clone().unwrap();
    let mut without_store = spec.clone();
    without_store.cache_store = None;
    // A cache that holds a root: an overlay would cover the root.
    let mut holding = spec.clone();
    let inside = home.join(".cargo/registry/src/checkout");
    std::fs::create_dir_all(&inside).unwrap();
    holding.roots = vec![inside];
    for (spec, namespaces) in [
        (&spec, Namespaces::Unavailable),
        (&without_store, Namespaces::Privileged),
        (&holding, Namespaces::Privileged),
    ] {
        let plan = Plan::build(spec, &Names, &support(namespaces)).unwrap();
        let cargo = home.join(".cargo/registry/src/x/build.rs");
        let rights = plan
            .grants
            .iter()
            .filter(|g| cargo.starts_with(&g.path))
            .fold(Rights(0), |r, g| r.with(g.rights));
        assert!(rights.contains(Rights::READ), "{namespaces:?}");
        assert!(
            !rights.contains(Rights::WRITE)
                && !plan.cache_overlays.iter().any(|o| o.cache == home.join(".cargo")),
            "{namespaces:?}: {:?}",
            plan.grants
        );
    }
}

#[test]
fn a_config_file_a_run_made_in_the_layer_is_gone_before_the_next() {
    let (_dir, spec) = cached_world();
    let home = spec.home.clone().unwrap();
    let plan = Plan::build(&spec, &Names, &support(Namespaces::Privileged)).unwrap();
    let cargo = plan
        .cache_overlays
        .iter()
        .find(|o| o.cache == home.join(".cargo"))
        .unwrap();
    std::fs::write(
        cargo.upper.join("config.toml"),
        "[build]\nrustc-wrapper = \"/x\"\n",
    )
    .unwrap();
    std::fs::write(cargo.upper.join("env.fish"), "evil\n").unwrap();
    std::fs::create_dir_all(cargo.upper.join("registry/src/x")).unwrap();
    std::fs::write(cargo.upper.join("registry/src/x/kept"), "").unwrap();
    Plan::build(&spec, &Names, &support(Namespaces::Privileged)).unwrap();
    assert!(!cargo.upper.join("config.toml").exists());
    assert!(!cargo.upper.join("env.fish").exists());
    assert!(cargo.upper.join("registry/src/x/kept").exists());
}

/// Shows a view in place of each file whose content holds `TOKEN`; counts what it is asked.
struct Content {
    asked: std::sync::Mutex<Vec<PathBuf>>,
}

impl Protection for Content {
    fn secret(&self, path: &Path, root: &Path) -> bool {
        Names.secret(path, root)
    }
    fn write_protected(&self, path: &Path, root: &Path) -> bool {
        Names.write_protected(path, root)
    }
    fn content(&self, path: &Path, _metadata: &std::fs::Metadata) -> ContentView {
        self.asked.lock().unwrap().push(path.to_path_buf());
        match std::fs::read_to_string(path) {
            Ok(text) if text.contains("TOKEN") => ContentView::Redacted(b"api: [redacted]".to_vec()),
            _ => ContentView::AsItIs,
        }
    }
}

#[test]
fn a_file_whose_content_holds_a_credential_is_shown_as_its_view_or_left_out_without_namespaces() {
    let dir = project();
    let root = dir.path().to_path_buf();
    std::fs::create_dir_all(root.join("config")).unwrap();
    std::fs::write(root.join("config/a7.yml"), "api: TOKEN\n").unwrap();
    // Wherever a command could put one: installed packages, a build's output, a directory a command tagged as a
    // cache or a Python environment, a protected directory (readable, not writable). Not git's object store.
    for (dir, file) in [
        ("node_modules/pkg", "x.js"),
        ("env", "pyvenv.cfg"),
        ("dist", "bundle.js"),
        ("config2", "CACHEDIR.TAG"),
        (".vscode", "settings.json"),
        (".git", "config"),
        (".git/objects/ab", "cdef"),
        // `objects` beside a `HEAD` a command made is no git object store, nor is a nested repository's.
        ("x/objects", "s.yml"),
        ("n/.git/objects/c", "s.yml"),
    ] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
        std::fs::write(root.join(dir).join(file), "TOKEN").unwrap();
    }
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(root.join("x/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(root.join("n/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
    // A place the plan hides whole is not looked into.
    std::fs::create_dir_all(root.join("store/runs")).unwrap();
    std::fs::write(root.join("store/runs/1"), "TOKEN").unwrap();
    let protection = Content {
        asked: std::sync::Mutex::default(),
    };
    let mut spec = writing_spec(&root);
    spec.secret_places.push(root.join("store"));

    let plan = Plan::build(&spec, &protection, &support(Namespaces::Privileged)).unwrap();
    assert!(
        plan.masks
            .iter()
            .any(|m| m.path == root.join("store") && m.dir && m.view.is_none())
    );
    let views: Vec<&Mask> = plan.masks.iter().filter(|m| m.view.is_some()).collect();
    let mut shown: Vec<&Path> = views.iter().map(|m| m.path.as_path()).collect();
    shown.sort();
    let expected: Vec<PathBuf> = [
        ".git/config",
        ".vscode/settings.json",
        "config/a7.yml",
        "config2/CACHEDIR.TAG",
        "dist/bundle.js",
        "env/pyvenv.cfg",
        "n/.git/objects/c/s.yml",
        "node_modules/pkg/x.js",
        "x/objects/s.yml",
    ]
    .iter()
    .map(|p| root.join(p))
    .collect();
    assert_eq!(shown, expected);
    assert!(
        views
            .iter()
            .all(|m| !m.dir && m.in_root && m.view.as_deref() == Some(b"api: [redacted]".as_slice()))
    );
    let asked = protection.asked.lock().unwrap().clone();
    assert!(asked.contains(&root.join("src/main.rs")), "{asked:?}");
    // Neither a secret by name, nor a directory, nor git's objects are asked about.
    assert!(
        !asked.iter().any(|p| p.ends_with(".env")
            || p.ends_with("src")
            || p.starts_with(root.join(".git/objects"))
            || p.starts_with(root.join("store"))),
        "{asked:?}"
    );
    // A protected directory looked into is still protected whole, once.
    assert!(plan.read_only_binds.iter().any(|b| b.path == root.join(".git")));

    let plan = Plan::build(&spec, &protection, &support(Namespaces::Unavailable)).unwrap();
    let rights_of = |p: &Path| {
        plan.grants
            .iter()
            .filter(|g| p.starts_with(&g.path))
            .fold(Rights(0), |r, g| r.with(g.rights))
    };
    assert!(!rights_of(&root.join("config/a7.yml")).contains(Rights::READ));
    assert!(rights_of(&root.join("src/main.rs")).contains(Rights::READ));

    // A directory too deep to look into is hidden whole.
    let mut deep = root.join("deep");
    while deep.as_os_str().len() <= DEEPEST_FOR_TEST {
        deep = deep.join("d".repeat(200));
    }
    std::fs::create_dir_all(&deep).unwrap();
    let plan = Plan::build(&spec, &protection, &support(Namespaces::Privileged)).unwrap();
    assert!(
        plan.masks
            .iter()
            .any(|m| m.dir && deep.starts_with(&m.path) && m.path.as_os_str().len() > DEEPEST_FOR_TEST)
    );

    // The scan a decision makes for the secrets by name asks nothing of content.
    protection.asked.lock().unwrap().clear();
    let _by_name = hidden_by_name(&spec, &protection);
    assert!(protection.asked.lock().unwrap().is_empty());
}

/// The longest path of a directory the scan looks into (scan.rs).
const DEEPEST_FOR_TEST: usize = 4095 - 256;
