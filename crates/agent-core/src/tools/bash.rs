//! `run_bash`: a shell command under the kernel sandbox its decision assumed, in its own process group, with
//! rlimits, a timeout that kills the whole group, a process-count watchdog and output kept to a bounded head.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_decide::Guard;
use agent_os_sandbox::{
    DomainLimit, DomainPattern, KernelSupport, Launch, PidsCgroup, Prepared, ProcessLimits, refused_forks,
};
use agent_tool_traits::{
    Confinement, InterruptBehavior, ProxyGrant, Tool, ToolContext, ToolError, ToolFuture, ToolOutput,
};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

use crate::guard_handle::GuardHandle;
use crate::tools::{opt_u64_arg, str_arg};

/// The limits of `run_bash`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BashLimits {
    /// The timeout of a call that sets none (60 s).
    pub default_timeout: Duration,
    /// The longest timeout a call may ask for (120 s).
    pub max_timeout: Duration,
    /// How many characters of output the model sees (4000).
    pub output_chars: usize,
    /// How many bytes past the kept head are read and discarded before the command is stopped (64 MiB): output
    /// nobody will see is not worth waiting for.
    pub discard_bytes: u64,
    /// More processes than this in the command's group and the whole group is killed (the fork-bomb watchdog).
    pub max_processes: usize,
    /// `RLIMIT_NPROC` (processes of the user; not enforced for root, hence the watchdog).
    pub nproc: u64,
    /// `RLIMIT_CPU` in seconds, per process.
    pub cpu_seconds: u64,
    /// `RLIMIT_FSIZE` in bytes: the largest file the command may write.
    pub file_size: u64,
    /// The nice value of the command (19): whatever it starts competes for the CPU below the runtime, so that the
    /// watchdog and the timeout still get to run when a command floods the machine with processes.
    pub nice: i32,
}

impl Default for BashLimits {
    fn default() -> Self {
        Self {
            default_timeout: Duration::from_secs(60),
            max_timeout: Duration::from_secs(120),
            output_chars: 4_000,
            discard_bytes: 64 * 1024 * 1024,
            max_processes: 256,
            nproc: 4_096,
            cpu_seconds: 130,
            file_size: 1024 * 1024 * 1024,
            nice: 19,
        }
    }
}

/// How often the watchdog counts the processes of the group.
const WATCH_INTERVAL: Duration = Duration::from_millis(5);
/// How long the pipes may stay open after the group was killed (a process that left the group holds them).
const PIPE_GRACE: Duration = Duration::from_millis(500);

/// Runs `command` with `bash -c` in the working directory. bash-guard decided the call before it gets here; this
/// tool contains what it runs: its own process group, rlimits, a timeout (`timeout` in milliseconds or
/// `timeout_secs`, 60 s by default, at most 120 s) that kills the whole group, and a bounded output. Blocks a
/// cancellation: a command is never cut half way by the user, only by its timeout.
#[derive(Debug, Clone)]
pub struct RunBashTool {
    guard: GuardHandle,
    limits: BashLimits,
}

impl RunBashTool {
    /// The tool, running in the working directory of `guard`'s sandbox, within `limits`.
    pub fn new(guard: GuardHandle, limits: BashLimits) -> Self {
        Self { guard, limits }
    }

    fn timeout(&self, args: &Value) -> Result<Duration, ToolError> {
        let asked = match (opt_u64_arg(args, "timeout")?, opt_u64_arg(args, "timeout_secs")?) {
            (Some(ms), _) => Duration::from_millis(ms),
            (None, Some(secs)) => Duration::from_secs(secs),
            (None, None) => self.limits.default_timeout,
        };
        Ok(asked.clamp(Duration::from_millis(1), self.limits.max_timeout))
    }
}

impl Tool for RunBashTool {
    fn name(&self) -> &str {
        "run_bash"
    }

    fn description(&self) -> &str {
        "Runs a bash command in the workspace and returns its output (at most 4000 characters)."
    }

    fn input_schema(&self) -> Value {
        json!({"type": "object", "required": ["command"], "properties": {
            "command": {"type": "string"}, "timeout": {"type": "integer", "description": "milliseconds"},
            "timeout_secs": {"type": "integer"}}})
    }

    fn interrupt_behavior(&self) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let command = str_arg(&args, &["command"])?.to_owned();
            let timeout = self.timeout(&args)?;
            let guard = self.guard.current();
            let cwd: PathBuf = guard
                .sandbox()
                .map(|sandbox| sandbox.cwd().to_path_buf())
                .ok_or_else(|| {
                    ToolError::Failed("no sandbox, so no working directory to run in".to_owned())
                })?;
            let run = Run {
                command: &command,
                cwd: &cwd,
                timeout,
                limits: &self.limits,
                guard: &guard,
                confinement: ctx.confinement,
                proxy: &ctx.proxy,
                undo_held: &ctx.undo_held,
                call_id: &ctx.call_id,
            };
            run.start().await
        })
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Exited(Option<i32>),
    TimedOut,
    TooMuchOutput,
    TooManyProcesses,
}

/// The head of one output stream and how much was discarded.
#[derive(Debug, Default)]
struct Capture {
    head: Vec<u8>,
    discarded: u64,
}

/// One `run_bash` call.
struct Run<'a> {
    command: &'a str,
    cwd: &'a std::path::Path,
    timeout: Duration,
    limits: &'a BashLimits,
    guard: &'a Guard,
    /// The kernel sandbox of the call's decision; `None` runs it with the limits alone.
    confinement: Option<Confinement>,
    /// What the sandbox's proxy lets through beyond the settings' domains, and the limit of the session's taint.
    proxy: &'a ProxyGrant,
    /// The places whose ignored data the allow counted on the snapshots holding.
    undo_held: &'a [std::path::PathBuf],
    /// The call's id, which the runs `agent-guard undo` records name (empty: none).
    call_id: &'a str,
}

impl Run<'_> {
    async fn start(&self) -> Result<ToolOutput, ToolError> {
        let limits = self.limits;
        // A pids cgroup where the machine has one: the kernel then refuses the forks of a fork bomb outright. The
        // watchdog below stays on as the fallback and for machines without one.
        let cgroup = PidsCgroup::where_needed(u64::try_from(limits.max_processes).unwrap_or(u64::MAX));
        let procs_fd = cgroup.as_ref().map(PidsCgroup::procs_fd);
        let support = KernelSupport::probe();
        // The snapshot comes first: it may make the store in the project's `.agent-guard/`, which the plan must
        // then find and keep out of the command's reach.
        let recording = self.record().await;
        if let Some(why) = recording
            .as_ref()
            .filter(|_| self.confinement.is_some_and(|c| c.undo))
            .and_then(agent_undo::Recording::refusal)
            .or_else(|| self.guard.undo_held_since(self.undo_held))
        {
            return Err(ToolError::Failed(why));
        }
        let plan = match self.confinement {
            Some(confinement) => {
                let mut plan = self
                    .guard
                    .sandbox_plan(confinement, &support)
                    .map_err(|e| ToolError::Failed(format!("cannot prepare the sandbox: {e}")))?;
                // A host the proxy's patterns cannot express is left out: stricter, never looser.
                plan.domains.allow(
                    self.proxy
                        .domains
                        .iter()
                        .filter_map(|d| d.parse::<DomainPattern>().ok()),
                );
                if let Some(sandbox) = self.guard.sandbox() {
                    plan.domains.allow_services(
                        self.proxy.services.iter().copied(),
                        &agent_undo::writable_roots(sandbox),
                    );
                    if self.proxy.services_only {
                        plan.domains.only_services();
                    }
                }
                // A command granted more than the settings' network serves nothing to the project's other calls.
                plan.serves_others = self.proxy.domains.is_empty() && self.proxy.services.is_empty();
                plan.limit = self
                    .proxy
                    .limit
                    .as_ref()
                    .map(|limit| DomainLimit::new(&limit.domains, limit.why.clone()));
                Some(plan)
            }
            None => None,
        };
        let launch = Launch {
            plan: plan.as_ref(),
            support: &support,
            env: self.guard.env_policy(),
            limits: ProcessLimits {
                processes: limits.nproc,
                cpu_seconds: limits.cpu_seconds,
                file_size: limits.file_size,
                memory: ProcessLimits::default().memory,
                nice: Some(limits.nice),
            },
            cgroup_procs: procs_fd,
            pid_max: None,
            // The runtime has other threads: the death signal would follow the thread that forked, not the
            // process. The group kill below ends the command instead.
            die_with_parent: false,
        };
        let mut prepared = Prepared::new(&launch)
            .map_err(|e| ToolError::Failed(format!("cannot prepare the sandbox: {e}")))?;
        let mut child = self
            .spawn("bash", &mut prepared)
            .or_else(|error| match error.kind() {
                std::io::ErrorKind::NotFound => {
                    prepared = Prepared::new(&launch)
                        .map_err(|e| std::io::Error::other(format!("cannot prepare the sandbox: {e}")))?;
                    self.spawn("sh", &mut prepared)
                }
                _ => Err(error),
            })
            .map_err(|e| ToolError::Failed(format!("cannot start the shell: {e}")))?;
        prepared.publish_services(Box::new(|note: &str| {
            tracing::info!(target: "agent_guard::sandbox", "{note}");
        }));
        let output = watch(&mut child, self.timeout, limits, cgroup).await?;
        let told = prepared.notes().len();
        let refused = prepared.network_refusals();
        let removed = prepared.finish(&self.guard.protection());
        let mut notes: Vec<String> = prepared.notes().iter().skip(told).cloned().collect();
        notes.extend(refused);
        if !removed.is_empty() {
            let names: Vec<String> = removed.iter().map(|p| format!("`{}`", p.display())).collect();
            notes.push(format!(
                "removed what the command created at protected paths: {}",
                names.join(", ")
            ));
        }
        if let Some(recording) = recording {
            let finished = tokio::task::spawn_blocking(move || recording.finish())
                .await
                .unwrap_or_default();
            notes.extend(undo_notes(&finished));
        }
        Ok(if notes.is_empty() {
            output
        } else {
            let notes: String = notes.iter().map(|note| format!("\n[{note}]")).collect();
            ToolOutput {
                content: format!("{}{notes}", output.content),
                ..output
            }
        })
    }

    /// Snapshots the roots the command may write before a `workspace-write` run, so that `agent-guard undo`
    /// can take it back; `None` for any other run.
    async fn record(&self) -> Option<agent_undo::Recording> {
        let writes = self
            .confinement
            .is_some_and(|c| c.profile == agent_tool_traits::SandboxProfile::WorkspaceWrite);
        let sandbox = self.guard.sandbox().filter(|_| writes)?;
        let roots = agent_undo::writable_roots(sandbox);
        let settings = self.guard.undo_settings();
        let command = self.command.to_owned();
        let call = self.call_id.to_owned();
        tokio::task::spawn_blocking(move || {
            let recording = agent_undo::Recording::begin(&roots, &command, &settings);
            if call.is_empty() {
                recording
            } else {
                recording.for_call(&call)
            }
        })
        .await
        .ok()
    }

    fn spawn(&self, shell: &str, prepared: &mut Prepared) -> std::io::Result<tokio::process::Child> {
        let mut process = std::process::Command::new(shell);
        process
            .arg("-c")
            .arg(self.command)
            .current_dir(self.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own process group (set by the sandbox), so that the timeout and the watchdog reach every process it
        // starts.
        prepared.configure(&mut process);
        let mut process = tokio::process::Command::from(process);
        process.kill_on_drop(true);
        process.spawn()
    }
}

/// What the model and the audit log learn of a run's snapshot: the undo id of each root it changed, and a
/// snapshot that could not be taken.
fn undo_notes(finished: &agent_undo::Finished) -> Vec<String> {
    let mut notes: Vec<String> = finished
        .runs
        .iter()
        .map(|run| {
            format!(
                "undo id {}: the command changed {} file{} in `{}`; `agent-guard undo --id {}` takes it back",
                run.id,
                run.changed,
                if run.changed == 1 { "" } else { "s" },
                run.root.display(),
                run.id
            )
        })
        .collect();
    notes.extend(finished.notes.iter().cloned());
    notes
}

/// Watches a started command to its end: the output read in bounded chunks, the timeout, the watchdog, and
/// every process of its group killed at the end.
async fn watch(
    child: &mut tokio::process::Child,
    timeout: Duration,
    limits: &BashLimits,
    cgroup: Option<PidsCgroup>,
) -> Result<ToolOutput, ToolError> {
    let Some(group) = child
        .id()
        .and_then(|pid| i32::try_from(pid).ok())
        .map(Pid::from_raw)
    else {
        return Err(ToolError::Failed(
            "the shell exited before it could be watched".to_owned(),
        ));
    };
    // Whatever happens from here on (a dropped future included), the whole group is killed.
    let _group = GroupKill(group);
    let stop = CancellationToken::new();
    let total = Arc::new(AtomicU64::new(0));
    let head_bytes = limits.output_chars.saturating_mul(4);
    let budget = u64::try_from(head_bytes)
        .unwrap_or(u64::MAX)
        .saturating_mul(2)
        .saturating_add(limits.discard_bytes);
    let readers: Vec<_> = [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn AsyncRead + Send + Unpin>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn AsyncRead + Send + Unpin>),
    ]
    .into_iter()
    .map(|stream| {
        let capture = Arc::new(Mutex::new(Capture::default()));
        let task = stream.map(|stream| {
            tokio::spawn(read_capped(
                stream,
                Arc::clone(&capture),
                head_bytes,
                Arc::clone(&total),
                budget,
                stop.clone(),
            ))
        });
        (capture, task)
    })
    .collect();
    let watchdog = tokio::spawn(watch_group(
        group,
        limits.max_processes,
        cgroup.as_ref().map(PidsCgroup::events),
        stop.clone(),
    ));
    let stopped = || {
        if total.load(Ordering::Relaxed) >= budget {
            End::TooMuchOutput
        } else {
            End::TooManyProcesses
        }
    };
    let end = tokio::select! {
        status = child.wait() => match status.ok().and_then(|s| s.code()) {
            // Killed by the watchdog, which says so before it kills: its reason, not a signal of unknown source.
            None if stop.is_cancelled() => stopped(),
            code => End::Exited(code),
        },
        () = tokio::time::sleep(timeout) => End::TimedOut,
        () = stop.cancelled() => stopped(),
    };
    watchdog.abort();
    // No process of the group outlives the call: background jobs of a finished command included. The shell is
    // reaped first, so that an empty group is seen as empty (a zombie still belongs to its group).
    let _killed = killpg(group, Signal::SIGKILL);
    if !matches!(end, End::Exited(_)) {
        let _reaped = child.wait().await;
    }
    kill_group_until_gone(group).await;
    // Processes that left the group (`setsid`) are still in the cgroup.
    if let Some(cgroup) = cgroup {
        let _ = tokio::task::spawn_blocking(move || drop(cgroup)).await;
    }
    let mut captures = Vec::new();
    for (capture, task) in readers {
        if let Some(task) = task {
            let abort = task.abort_handle();
            if tokio::time::timeout(PIPE_GRACE, task).await.is_err() {
                abort.abort();
            }
        }
        let taken = std::mem::take(&mut *capture.lock().unwrap_or_else(PoisonError::into_inner));
        captures.push(taken);
    }
    Ok(render(end, timeout, &captures, limits))
}

/// Reads `stream` in chunks: keeps the first `head_bytes`, counts the rest, and stops the command once the
/// streams together passed `budget` bytes. Memory stays at `head_bytes` plus one chunk whatever the command prints.
async fn read_capped(
    mut stream: Box<dyn AsyncRead + Send + Unpin>,
    capture: Arc<Mutex<Capture>>,
    head_bytes: usize,
    total: Arc<AtomicU64>,
    budget: u64,
    stop: CancellationToken,
) {
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let read = match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        let bytes = chunk.get(..read).unwrap_or_default();
        {
            let mut capture = capture.lock().unwrap_or_else(PoisonError::into_inner);
            let room = head_bytes.saturating_sub(capture.head.len()).min(bytes.len());
            capture
                .head
                .extend_from_slice(bytes.get(..room).unwrap_or_default());
            capture.discarded += u64::try_from(bytes.len() - room).unwrap_or(u64::MAX);
        }
        let seen = total.fetch_add(u64::try_from(read).unwrap_or(u64::MAX), Ordering::Relaxed);
        if seen >= budget {
            stop.cancel();
        }
    }
}

/// The fork-bomb watchdog, for machines where no pids cgroup can be made (CI runs as root, where `RLIMIT_NPROC`
/// is not enforced); where one can, it holds the command first (see `cgroup.rs`). Every [`WATCH_INTERVAL`] the watchdog
/// looks at the system's task count (`/proc/loadavg`, one read), and only when it grew by more than `max` since the
/// start counts the group's live processes in `/proc`. Past `max`, the whole group is killed.
async fn watch_group(group: Pid, max: usize, cgroup_events: Option<PathBuf>, stop: CancellationToken) {
    let mut baseline = system_tasks();
    loop {
        tokio::time::sleep(WATCH_INTERVAL).await;
        let now = system_tasks();
        let grew = match (baseline, now) {
            (Some(before), Some(now)) => now.saturating_sub(before) > max,
            // Without the cheap count, the exact one runs every time.
            _ => true,
        };
        // Processes of others ending lower the bar, never raise it.
        baseline = match (baseline, now) {
            (Some(before), Some(now)) => Some(before.min(now)),
            (before, _) => before,
        };
        // Under a pids cgroup the group never grows past the limit: the kernel refuses the forks instead, and a
        // refused fork is the sign of a runaway.
        let refused = cgroup_events.as_deref().is_some_and(refused_forks);
        if refused || (grew && group_size(group, true) > max) {
            // Said before the kill: the shell's death by it must not be taken for an end of its own.
            stop.cancel();
            let _killed = killpg(group, Signal::SIGKILL);
            return;
        }
    }
}

/// The number of tasks of the whole system: the denominator of the fourth field of `/proc/loadavg`.
fn system_tasks() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let field = text.split_whitespace().nth(3)?;
    field.split_once('/')?.1.parse().ok()
}

/// Kills the group until no live process is left in it: a process forking while the signal is delivered is
/// caught by the next round. Gives up after two seconds (what is left then are zombies for init to reap).
async fn kill_group_until_gone(group: Pid) {
    for _ in 0..1_000 {
        if killpg(group, Signal::SIGKILL).is_err() || group_size(group, false) == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// How many processes are in process group `group`, read from `/proc/<pid>/stat`; zombies count only with
/// `zombies` (a fork bomb's exited members still hold process ids until they are reaped).
pub(crate) fn group_size(group: Pid, zombies: bool) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("stat")).ok())
        .filter(|stat| {
            // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses, so split after the last `)`.
            let Some((_, rest)) = stat.rsplit_once(')') else {
                return false;
            };
            let mut fields = rest.split_whitespace();
            let state = fields.next();
            let pgrp = fields.nth(1).and_then(|f| f.parse::<i32>().ok());
            (zombies || state != Some("Z")) && pgrp == Some(group.as_raw())
        })
        .count()
}

/// Kills a process group when dropped.
struct GroupKill(Pid);

impl Drop for GroupKill {
    fn drop(&mut self) {
        let _killed = killpg(self.0, Signal::SIGKILL);
    }
}

/// The model's view: stdout, then stderr, cut to the character cap, with what was cut and how the run ended.
fn render(end: End, timeout: Duration, captures: &[Capture], limits: &BashLimits) -> ToolOutput {
    let stdout = captures
        .first()
        .map(|c| String::from_utf8_lossy(&c.head).into_owned())
        .unwrap_or_default();
    let stderr = captures
        .get(1)
        .map(|c| String::from_utf8_lossy(&c.head).into_owned())
        .unwrap_or_default();
    let discarded: u64 = captures.iter().map(|c| c.discarded).sum();
    let mut text = stdout;
    if !stderr.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("[stderr]\n");
        text.push_str(&stderr);
    }
    let chars = text.chars().count();
    let mut out: String = text.chars().take(limits.output_chars).collect();
    if chars > limits.output_chars || discarded > 0 {
        out.push_str(&format!(
            "\n[output cut at {} characters; {} more characters and {discarded} more bytes not shown]",
            limits.output_chars,
            chars.saturating_sub(limits.output_chars)
        ));
    }
    match end {
        End::Exited(Some(0)) => ToolOutput::ok(out),
        End::Exited(Some(code)) => ToolOutput::error(format!("{out}\n[exit code {code}]")),
        End::Exited(None) => ToolOutput::error(format!("{out}\n[killed by a signal]")),
        End::TimedOut => ToolOutput::error(format!(
            "{out}\n[timed out after {} ms; the command and every process it started were killed]",
            timeout.as_millis()
        )),
        End::TooMuchOutput => ToolOutput::error(format!(
            "{out}\n[stopped: the command printed more than {} bytes]",
            limits.discard_bytes
        )),
        End::TooManyProcesses => ToolOutput::error(format!(
            "{out}\n[stopped: the command started more than {} processes; every one was killed]",
            limits.max_processes
        )),
    }
}
