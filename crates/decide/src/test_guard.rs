//! A guard over a throw-away project for the unit tests of the decision's steps.

use std::path::{Path, PathBuf};

use agent_rules::{Discovery, Settings};

use crate::guard::{Guard, GuardOptions};

/// A temporary directory with `proj/` (the working directory) and `home/`, and the guard of `proj/` under the
/// user's settings `settings` (a settings file's JSON; the user's, so that they may loosen as well as tighten).
pub(crate) struct Project {
    dir: tempfile::TempDir,
    pub(crate) guard: Guard,
}

impl Project {
    pub(crate) fn new(settings: &str) -> Self {
        Self::with_files(settings, &[])
    }

    /// The same with `files` (relative to the temporary directory, e.g. `proj/.env`) written first.
    pub(crate) fn with_files(settings: &str, files: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for sub in ["proj", "home"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        for (path, text) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        std::fs::create_dir_all(root.join("home/.claude")).unwrap();
        std::fs::write(root.join("home/.claude/settings.json"), settings).unwrap();
        let discovery = Discovery {
            cwd: root.join("proj"),
            home: Some(root.join("home")),
            managed: Vec::new(),
            cli_files: Vec::new(),
        };
        let loaded = Settings::discover(&discovery).unwrap();
        let options = GuardOptions {
            cwd: root.join("proj"),
            home: Some(root.join("home")),
            ..GuardOptions::default()
        };
        let guard = Guard::new(&loaded, &options).unwrap();
        Self { dir, guard }
    }

    /// The temporary directory (which must outlive the guard's use) and the guard.
    pub(crate) fn into_parts(self) -> (tempfile::TempDir, Guard) {
        (self.dir, self.guard)
    }

    /// The project's directory.
    pub(crate) fn cwd(&self) -> PathBuf {
        self.root().join("proj")
    }

    fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    /// `path` relative to the project's directory.
    pub(crate) fn at(&self, path: &str) -> PathBuf {
        Path::new(&self.cwd()).join(path)
    }
}

/// Runs git in `dir` without the user's or the system's configuration, as a test's set-up.
pub(crate) fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "A")
        .env("GIT_AUTHOR_EMAIL", "a@example.com")
        .env("GIT_COMMITTER_NAME", "A")
        .env("GIT_COMMITTER_EMAIL", "a@example.com")
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}
