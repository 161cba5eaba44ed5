//! Running one command hook: `sh -c COMMAND` in its own process group, the input on stdin, stdout and stderr kept
//! up to a cap, the whole group killed at the timeout.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use super::settings::{CommandSpec, HookEvent};

/// At most this much of a command's stdout or stderr is kept; the rest is read and discarded, so a chatty hook
/// neither blocks on a full pipe nor grows memory.
const OUTPUT_CAP: u64 = 1 << 20;

/// How one command ended; `protocol.rs` reads what its exit code and output mean.
#[derive(Debug)]
pub(super) enum Run {
    /// It exited (`code` is `None` when a signal ended it).
    Exited {
        command: String,
        code: Option<i32>,
        stdout: String,
        stderr: String,
    },
    /// It ran past its timeout and was killed with its process group.
    TimedOut { command: String, timeout: Duration },
    /// It could not be started.
    Unstarted { command: String, error: std::io::Error },
}

impl Run {
    /// Logs how the run ended (a failure means the command made no decision).
    pub(super) fn log(&self, event: HookEvent) {
        match self {
            Self::Exited {
                command,
                code: Some(0),
                ..
            } => {
                tracing::debug!(event = %event, %command, "hook command done");
            }
            Self::Exited {
                command,
                code,
                stderr,
                ..
            } => {
                tracing::warn!(event = %event, %command, ?code, stderr = %stderr.trim(), "hook command failed: no decision");
            }
            Self::TimedOut { command, timeout } => {
                tracing::warn!(event = %event, %command, ?timeout, "hook command timed out and was killed: no decision");
            }
            Self::Unstarted { command, error } => {
                tracing::warn!(event = %event, %command, %error, "hook command could not start: no decision");
            }
        }
    }
}

/// Runs `sh -c COMMAND` in its own process group with `input` on stdin; on timeout kills the whole group.
pub(super) async fn run_command(spec: &CommandSpec, input: &[u8], cwd: &Path) -> Run {
    let command = spec.command.clone();
    let mut process = tokio::process::Command::new("sh");
    process
        .arg("-c")
        .arg(&spec.command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("AGENT_GUARD_PROJECT_DIR", cwd)
        .env("CLAUDE_PROJECT_DIR", cwd)
        .kill_on_drop(true)
        .process_group(0);
    if cwd.is_dir() {
        process.current_dir(cwd);
    }
    let mut child = match process.spawn() {
        Ok(child) => child,
        Err(error) => return Run::Unstarted { command, error },
    };
    let group = child.id().and_then(|pid| i32::try_from(pid).ok());
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let work = async {
        let feed = async move {
            if let Some(mut stdin) = stdin {
                // A command that does not read its input closes the pipe early; that is not an error.
                let _written = stdin.write_all(input).await;
            }
        };
        let ((), out, err, status) =
            tokio::join!(feed, read_capped(stdout), read_capped(stderr), child.wait());
        (out, err, status)
    };
    // Bound first, so that the future (which borrows `child`) is gone before the timeout arm kills it.
    let finished = tokio::time::timeout(spec.timeout, work).await;
    match finished {
        Ok((stdout, stderr, Ok(status))) => Run::Exited {
            command,
            code: status.code(),
            stdout,
            stderr,
        },
        Ok((_, _, Err(error))) => Run::Unstarted { command, error },
        Err(_) => {
            if let Some(group) = group {
                // The group, not only `sh`: a command's children must not outlive its timeout.
                let _killed =
                    nix::sys::signal::killpg(nix::unistd::Pid::from_raw(group), nix::sys::signal::SIGKILL);
            }
            let _reaped = child.kill().await;
            Run::TimedOut {
                command,
                timeout: spec.timeout,
            }
        }
    }
}

async fn read_capped<R: AsyncRead + Unpin>(reader: Option<R>) -> String {
    let Some(mut reader) = reader else {
        return String::new();
    };
    let mut kept = Vec::new();
    let _read = (&mut reader).take(OUTPUT_CAP).read_to_end(&mut kept).await;
    let _drained = tokio::io::copy(&mut reader, &mut tokio::io::sink()).await;
    String::from_utf8_lossy(&kept).into_owned()
}
