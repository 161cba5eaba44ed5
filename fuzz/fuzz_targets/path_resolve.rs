//! Fuzz `PathSandbox::check`, `resolve` and `glob` on arbitrary strings against a small tree with links in and out.

#![no_main]

use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::sync::OnceLock;

use agent_fs_sandbox::{Access, PathSandbox, RootKind, RootSpec, SandboxConfig};
use agent_tool_traits::Decision;
use libfuzzer_sys::fuzz_target;

/// A project with links inside, outside, looping and magic, built once per process.
fn sandbox() -> Option<&'static PathSandbox> {
    static SANDBOX: OnceLock<Option<PathSandbox>> = OnceLock::new();
    SANDBOX
        .get_or_init(|| {
            let base = std::env::temp_dir().join(format!("path-resolve-fuzz-{}", std::process::id()));
            let proj = base.join("proj");
            std::fs::create_dir_all(proj.join("src/deep")).ok()?;
            std::fs::create_dir_all(base.join("outside")).ok()?;
            std::fs::create_dir_all(base.join("lib")).ok()?;
            std::fs::write(proj.join("src/main.rs"), "fn main() {}").ok()?;
            let links: [(PathBuf, &str); 6] = [
                (proj.join("in"), "src"),
                (proj.join("out"), "../outside"),
                (proj.join("up"), ".."),
                (proj.join("loop"), "loop"),
                (proj.join("magic"), "/proc/self/root"),
                (proj.join("deep"), "src/deep"),
            ];
            for (at, target) in links {
                let _ = symlink(target, at);
            }
            let config = SandboxConfig::new(&proj)
                .with_home(base.join("outside"))
                .with_root(RootSpec::read_only(base.join("lib"), RootKind::Library));
            PathSandbox::new(config).ok()
        })
        .as_ref()
}

fuzz_target!(|data: &[u8]| {
    let Some(sandbox) = sandbox() else { return };
    let input = String::from_utf8_lossy(data);
    for access in [Access::Read, Access::Write] {
        let check = sandbox.check(&input, access);
        let resolved = sandbox.resolve(&input, access);
        // `resolve` fails exactly when `check` denies, and an accepted path lies inside the root it names.
        assert_eq!(resolved.is_err(), check.verdict.decision == Decision::Deny);
        if let Ok(path) = resolved {
            let root = &sandbox.roots()[path.root()];
            assert!(path.as_path().starts_with(root.path()));
            assert_eq!(Some(path.as_path()), check.resolved.as_deref());
        }
    }
    // A glob stops at its limit (the walk never follows `loop` forever), and every match the sandbox does not deny
    // exists. (A denied one may not: through `magic`, `/dev/fd/N` names the descriptor the walk itself had open.)
    let matches = sandbox.glob(&input, 64);
    assert!(matches.paths.len() <= 64);
    for path in &matches.paths {
        if sandbox.check(path, Access::Read).verdict.decision != Decision::Deny {
            assert!(std::fs::symlink_metadata(path).is_ok(), "{path}");
        }
    }
});
