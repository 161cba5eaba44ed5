//! A fixture tree shared by the integration tests: a project, its neighbours and links between them.

#![allow(dead_code, unreachable_pub)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use agent_fs_sandbox::{PathSandbox, ProtectedPaths, RootKind, RootSpec, SandboxConfig};

/// The fixture: `base` is the canonical temporary directory holding everything.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub base: PathBuf,
}

impl Fixture {
    pub fn proj(&self) -> PathBuf {
        self.base.join("proj")
    }

    /// The standard sandbox: `proj` (working directory), `lib` read-only, `extra` and `home` read-write, and a
    /// skills directory that does not exist.
    pub fn sandbox(&self) -> PathSandbox {
        PathSandbox::new(self.config()).unwrap()
    }

    pub fn config(&self) -> SandboxConfig {
        SandboxConfig {
            cwd: self.proj(),
            home: Some(self.base.join("home")),
            roots: vec![
                RootSpec::read_only(self.base.join("lib"), RootKind::Library),
                RootSpec::read_write(self.base.join("extra"), RootKind::Additional),
                RootSpec::read_write(self.base.join("home"), RootKind::Additional),
                RootSpec::read_write(self.base.join("skills"), RootKind::Skills),
            ],
            protected: ProtectedPaths::default(),
        }
    }
}

fn file(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn link(target: impl AsRef<Path>, at: &Path) {
    symlink(target, at).unwrap();
}

pub fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let p = base.join("proj");
    file(&p.join("src/main.rs"), "fn main() {}");
    file(&p.join("src/lib/deep/file.rs"), "// deep");
    file(&p.join("a..b.txt"), "dots");
    file(&p.join("~notes.md"), "tilde");
    file(&p.join(".env"), "SECRET=1");
    file(&p.join(".env.local"), "SECRET=2");
    file(&p.join(".env.example"), "SECRET=");
    file(&p.join(".git/config"), "[core]");
    file(&p.join("docs/readme.md"), "docs");
    file(&base.join("proj-evil/file.txt"), "evil");
    file(&base.join("outside/secret.txt"), "outside");
    std::fs::create_dir_all(base.join("outside/sub")).unwrap();
    file(&base.join("home/.bashrc"), "alias x=y");
    file(&base.join("home/notes.txt"), "home notes");
    file(&base.join("lib/book.md"), "library");
    std::fs::create_dir_all(base.join("extra")).unwrap();

    link("src", &p.join("link_in"));
    link("src/main.rs", &p.join("link_in_file"));
    link("../outside", &p.join("link_out_dir"));
    link(base.join("outside"), &p.join("link_out_abs"));
    link("../outside/secret.txt", &p.join("link_out_file"));
    link("chain2", &p.join("chain1"));
    link("link_out_dir", &p.join("chain2"));
    link("chain_in2", &p.join("chain_in1"));
    link("src", &p.join("chain_in2"));
    link("../outside/newfile", &p.join("dangling_out"));
    link("src/new.rs", &p.join("dangling_in"));
    link("loop_b", &p.join("loop_a"));
    link("loop_a", &p.join("loop_b"));
    link("self_loop", &p.join("self_loop"));
    link("src/lib/deep", &p.join("dotdot_link"));
    link("..", &p.join("up_link"));
    link(".env", &p.join("link_to_env"));
    link(".git", &p.join("link_to_git"));
    link("/proc/self/root", &p.join("proc_link"));
    link(base.join("lib"), &p.join("lib_ref"));
    link("lib", &base.join("lib_link"));
    link("proj", &base.join("proj_link"));
    Fixture { dir, base }
}
