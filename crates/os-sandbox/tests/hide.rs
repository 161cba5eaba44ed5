//! A secret of a root is hidden on the file the scan saw, and on no other put at its path since.

#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::ffi::OsString;
use std::path::Path;

use agent_os_sandbox::{EnvPolicy, KernelSupport, Namespaces, Plan, Protection, SandboxSpec, run};
use agent_tool_traits::Confinement;

struct DotEnv;

impl Protection for DotEnv {
    fn secret(&self, path: &Path, _root: &Path) -> bool {
        path.file_name().is_some_and(|name| name == ".env")
    }
    fn write_protected(&self, _path: &Path, _root: &Path) -> bool {
        false
    }
}

/// The kernel's support when it gives namespaces, else why not (the test then says it is skipped, and fails
/// where `AGENT_GUARD_REQUIRE_SANDBOX=1` says the kernel can enforce the sandbox).
fn namespaces() -> Option<KernelSupport> {
    let support = KernelSupport::probe();
    let why = match (support.missing(), support.namespaces) {
        (Some(why), _) => why,
        (None, Namespaces::Unavailable) => "no namespaces".to_owned(),
        (None, _) => return Some(support),
    };
    assert!(
        std::env::var_os("AGENT_GUARD_REQUIRE_SANDBOX").is_none_or(|v| v != "1")
            || support.missing().is_some(),
        "AGENT_GUARD_REQUIRE_SANDBOX=1 and {why}"
    );
    eprintln!("skipped: {why}");
    None
}

#[test]
fn a_secret_is_hidden_on_the_file_the_scan_saw_and_another_in_its_place_stops_the_run() {
    let Some(support) = namespaces() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join(".env"), "KEY=v\n").unwrap();
    let spec = SandboxSpec::new(Confinement::READ_ONLY, vec![root.clone()]);
    let plan = Plan::build(&spec, &DotEnv, &support).unwrap();
    let mask = plan.masks.iter().find(|m| m.path == root.join(".env")).unwrap();
    assert!(mask.identity.is_some() && mask.in_root);
    let argv: Vec<OsString> = ["/bin/sh", "-c", "cat .env 2>/dev/null; exit 7"]
        .iter()
        .map(OsString::from)
        .collect();
    std::env::set_current_dir(&root).unwrap();
    let (status, _) = run(&plan, &support, &EnvPolicy::default(), &DotEnv, &argv).unwrap();
    assert_eq!(status, 7, "the command ran, and could not read the secret");

    // Another file put at the path since the scan (the secret moved away, a decoy in its place): the command is
    // not started rather than hide the decoy.
    std::fs::rename(root.join(".env"), root.join("moved")).unwrap();
    std::fs::write(root.join(".env"), "decoy\n").unwrap();
    let ran = run(&plan, &support, &EnvPolicy::default(), &DotEnv, &argv);
    assert!(
        ran.as_ref()
            .is_err_and(|e| e.to_string().contains("Stale file handle")),
        "{ran:?}"
    );
    // Gone altogether: the same.
    std::fs::remove_file(root.join(".env")).unwrap();
    let ran = run(&plan, &support, &EnvPolicy::default(), &DotEnv, &argv);
    assert!(ran.is_err(), "{ran:?}");
}
