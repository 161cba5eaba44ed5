//! One path check inside a deep tree: `PathSandbox::check` against a canonicalize-and-prefix check.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::{Path, PathBuf};

use agent_fs_sandbox::{Access, PathSandbox, SandboxConfig};
use criterion::{Criterion, criterion_group, criterion_main};

/// The naive design: refuse any path containing `..` or `~` as a string, `canonicalize()` the joined path and
/// compare the result with each root by string prefix (which is wrong for `/proj-evil`, refuses `a..b.txt` and
/// new files, and leaves a window between check and use; measured here only for its cost).
fn seed_check(roots: &[String], cwd: &Path, path: &str) -> bool {
    if path.contains("..") || path.contains('~') {
        return false;
    }
    match std::fs::canonicalize(cwd.join(path)) {
        Ok(canonical) => {
            let text = canonical.to_string_lossy();
            roots.iter().any(|root| text.starts_with(root.as_str()))
        }
        Err(_) => false,
    }
}

/// A working directory 6 levels below the temporary directory, and a file 12 levels below it.
fn deep_tree() -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path())
        .unwrap()
        .join("home/user/src/company/team/project");
    let relative: PathBuf = (0..12).map(|level| format!("level{level}")).collect();
    std::fs::create_dir_all(cwd.join(&relative)).unwrap();
    let file = relative.join("module.rs");
    std::fs::write(cwd.join(&file), "// deep").unwrap();
    // A link at the top of the tree, so that the same file can be named through it (no fast path then).
    std::os::unix::fs::symlink("level0", cwd.join("linked")).unwrap();
    (dir, cwd, file.to_str().unwrap().to_owned())
}

fn path_check(c: &mut Criterion) {
    let (_dir, cwd, file) = deep_tree();
    let sandbox = PathSandbox::new(SandboxConfig::new(&cwd)).unwrap();
    let roots = vec![cwd.to_string_lossy().into_owned()];
    assert!(sandbox.check(&file, Access::Read).verdict.is_allowed());
    assert!(seed_check(&roots, &cwd, &file));

    let mut group = c.benchmark_group("path_check_deep");
    group.bench_function("sandbox_check", |b| {
        b.iter(|| sandbox.check(black_box(&file), Access::Read))
    });
    group.bench_function("sandbox_resolve", |b| {
        b.iter(|| sandbox.resolve(black_box(&file), Access::Read))
    });
    group.bench_function("seed_canonicalize_prefix", |b| {
        b.iter(|| seed_check(&roots, &cwd, black_box(&file)))
    });
    let linked = file.replacen("level0", "linked", 1);
    assert!(sandbox.check(&linked, Access::Read).through_symlink);
    group.bench_function("sandbox_check_through_link", |b| {
        b.iter(|| sandbox.check(black_box(&linked), Access::Read))
    });
    group.bench_function("seed_canonicalize_prefix_through_link", |b| {
        b.iter(|| seed_check(&roots, &cwd, black_box(&linked)))
    });
    group.finish();
}

criterion_group!(benches, path_check);
criterion_main!(benches);
