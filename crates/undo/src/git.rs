//! Running the `git` program on a private store: a clean environment, the store's own configuration only (never
//! the user's or the project's, whose settings could name programs to run), a time bound, and a `git` found
//! outside the roots, which a sandboxed command may write.

use std::ffi::{OsStr, OsString};
use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::error::{Result, UndoError};

/// The `git` program of the first directory of `PATH` that is absolute and not inside one of `roots`: a program
/// a sandboxed command could have put there is never run outside the sandbox.
pub(crate) fn find_git(roots: &[PathBuf]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    // A directory is made canonical only once it holds a `git`: most of `PATH` does not.
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .filter(|dir| {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::metadata(dir.join("git"))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        // Within a batch of decisions (agent-fs-sandbox's batch facts) each directory is made canonical once.
        .filter_map(|dir| agent_fs_sandbox::canonicalize(&dir).ok())
        .find(|dir| !roots.iter().any(|root| dir.starts_with(root)))
        .map(|dir| dir.join("git"))
}

/// A `git` command that ended.
pub(crate) struct Ran {
    pub(crate) success: bool,
    pub(crate) stdout: Vec<u8>,
    /// The error naming the command and what it said on stderr, for when `success` is false.
    pub(crate) error: UndoError,
}

/// One store's `git`: the program, the private directory and the work tree.
#[derive(Debug, Clone)]
pub(crate) struct Git {
    pub(crate) program: PathBuf,
    pub(crate) dir: PathBuf,
    pub(crate) work_tree: PathBuf,
    pub(crate) timeout: Duration,
}

impl Git {
    /// `git --git-dir DIR --work-tree TREE args…`, its output, or the error naming what it said.
    pub(crate) fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> Result<Vec<u8>> {
        self.run_with_input(args, None)
    }

    /// The same, with `input` on its standard input.
    pub(crate) fn run_with_input<S: AsRef<OsStr>>(
        &self,
        args: &[S],
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>> {
        let ran = self.run_unchecked(args, input)?;
        if ran.success {
            Ok(ran.stdout)
        } else {
            Err(ran.error)
        }
    }

    /// The same, whatever its exit status: a command that ended (with its output and the error its failure
    /// would be), or the error of one that could not start or ran past the time bound.
    pub(crate) fn run_unchecked<S: AsRef<OsStr>>(&self, args: &[S], input: Option<&[u8]>) -> Result<Ran> {
        let mut command = self.command();
        command.args(args);
        let named = || {
            args.iter()
                .map(|a| a.as_ref().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let spawn_error = |source| UndoError::io(&self.program, source);
        let mut child = command
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(spawn_error)?;
        let pid = child.id();
        let stdout = child.stdout.take().map(drain);
        let stderr = child.stderr.take().map(drain);
        if let (Some(mut stdin), Some(input)) = (child.stdin.take(), input) {
            // A git that stopped reading has failed; its status says so below.
            let _written = stdin.write_all(input);
        }
        let (done, finished) = mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let status = child.wait();
            let _sent = done.send(());
            status
        });
        if finished.recv_timeout(self.timeout).is_err() {
            if let Ok(pid) = i32::try_from(pid) {
                let _killed = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            let _reaped = waiter.join();
            return Err(UndoError::Timeout {
                command: named(),
                store: self.dir.clone(),
                seconds: self.timeout.as_secs(),
            });
        }
        let status = waiter
            .join()
            .map_err(|_| UndoError::Data("the wait for git panicked".to_owned()))?
            .map_err(spawn_error)?;
        let stdout = stdout.and_then(|t| t.join().ok()).unwrap_or_default();
        let stderr = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
        Ok(Ran {
            success: status.success(),
            stdout,
            error: UndoError::Git {
                command: named(),
                store: self.dir.clone(),
                stderr: String::from_utf8_lossy(&stderr)
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
            },
        })
    }

    /// A `git` command on the store with nothing of the caller's git environment and no configuration but the
    /// store's own.
    pub(crate) fn command(&self) -> Command {
        let mut command = self.base_command();
        command
            .arg(OsString::from("--git-dir"))
            .arg(&self.dir)
            .arg(OsString::from("--work-tree"))
            .arg(&self.work_tree)
            .current_dir(&self.work_tree);
        command
    }

    /// `git` with the clean environment of [`Git::command`] and no directories given.
    pub(crate) fn base_command(&self) -> Command {
        let mut command = Command::new(&self.program);
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("GIT_") {
                command.env_remove(name);
            }
        }
        command
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_ATTR_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("LC_ALL", "C");
        command
    }
}

/// Reads a pipe to its end on a thread of its own, so that neither pipe fills while the other is read.
fn drain<R: std::io::Read + Send + 'static>(mut pipe: R) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _read = pipe.read_to_end(&mut bytes);
        bytes
    })
}
