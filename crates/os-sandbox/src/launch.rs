//! Starting a command under a plan: the scratch directory, the environment, the child setup, and the check of
//! the protected paths after the command.

use std::ffi::{CString, OsString};
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use agent_tool_traits::SandboxProfile;

use crate::cgroup::MemoryCgroup;
use crate::child::{ChildSetup, Confine, MountOp, NamespaceSetup};
use crate::env::EnvPolicy;
use crate::error::{KernelSandboxError, Result};
use crate::plan::{Grant, Isolation, Plan, Protection, Rights};
use crate::probe::KernelSupport;
use crate::proxy::{NetworkSetup, Proxy, Relay, Services};
use crate::scan::Watch;
use crate::scratch::{RUN_RECORD, make_removable, run_record, scratch_dir};

/// Limits every command gets, confined or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessLimits {
    /// `RLIMIT_NPROC`: processes of the user (not enforced for root; the pids cgroup and the PID namespace are).
    pub processes: u64,
    /// `RLIMIT_CPU` in seconds, per process: at the bound the process gets `SIGXCPU` (which ends it unless it
    /// handles it), a second later `SIGKILL`.
    pub cpu_seconds: u64,
    /// `RLIMIT_FSIZE` in bytes: the largest file the command may write.
    pub file_size: u64,
    /// The command's memory in bytes: a memory cgroup for all its processes together (the pages of its private
    /// tmpfs included) where this process can make one, else `RLIMIT_DATA` per process, with the private tmpfs no
    /// larger than it.
    pub memory: u64,
    /// The nice value, so that what the command starts competes for the CPU below its supervisor.
    pub nice: Option<i32>,
}

impl Default for ProcessLimits {
    fn default() -> Self {
        Self {
            processes: 4_096,
            cpu_seconds: 130,
            file_size: 1024 * 1024 * 1024,
            memory: DEFAULT_MEMORY_MAX,
            nice: None,
        }
    }
}

/// A bound of [`ProcessLimits`] that ended a command, as [`Prepared::bound_passed`] finds it; its `Display` is the
/// message for the command's stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PassedBound {
    /// The memory of all its processes together, in bytes (`agentGuard.sandbox.memoryMax`).
    Memory(u64),
    /// The CPU time of one process, in seconds.
    CpuTime(u64),
    /// The size of a file it wrote, in bytes.
    FileSize(u64),
}

impl std::fmt::Display for PassedBound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Self::Memory(bytes) => write!(
                f,
                "agent-guard: the command used more than {} of memory (agentGuard.sandbox.memoryMax)",
                Size(bytes)
            ),
            Self::CpuTime(seconds) => write!(
                f,
                "agent-guard: a process of the command used more than {seconds} s of CPU time (the sandbox's \
                 CPU-time bound)"
            ),
            Self::FileSize(bytes) => write!(
                f,
                "agent-guard: the command wrote a file larger than {} (the sandbox's file-size bound)",
                Size(bytes)
            ),
        }
    }
}

/// A size in bytes as people write it: `4 GiB`, `256 MiB`, `1536 KiB`, `1000 bytes`.
struct Size(u64);

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bytes = self.0;
        match [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")]
            .into_iter()
            .find(|&(shift, _)| bytes >= 1 << shift && bytes.is_multiple_of(1 << shift))
        {
            Some((shift, unit)) => write!(f, "{} {unit}", bytes >> shift),
            None => write!(f, "{bytes} bytes"),
        }
    }
}

/// The memory bound of a command whose settings set none (`agentGuard.sandbox.memoryMax`): 4 GiB.
const DEFAULT_MEMORY_MAX: u64 = 4 << 30;

/// The size of the private tmpfs (`/tmp`), which the memory bound lowers.
const TMP_SIZE: u64 = 1 << 30;

/// How to start one command.
#[derive(Debug, Clone, Copy)]
pub struct Launch<'a> {
    /// The plan to confine it by; `None` applies the limits alone.
    pub plan: Option<&'a Plan>,
    /// The kernel's support, as probed.
    pub support: &'a KernelSupport,
    /// Which variables it does not get.
    pub env: &'a EnvPolicy,
    /// Its limits.
    pub limits: ProcessLimits,
    /// `cgroup.procs` of a pids cgroup made for it, to join first.
    pub cgroup_procs: Option<RawFd>,
    /// Bound the command's processes by the `pid_max` of its PID namespace (with namespaces, where
    /// [`KernelSupport::pid_max_per_namespace`]); the caller then needs no pids cgroup.
    pub pid_max: Option<u32>,
    /// Kill the command when this process dies. Only for a single-threaded caller: the kernel ties the death
    /// signal to the thread that forked.
    pub die_with_parent: bool,
}

/// A command's confinement, ready to be put on a [`std::process::Command`]: the compiled ruleset and filter,
/// the mounts, the environment, and a private scratch directory removed when this is dropped.
#[derive(Debug)]
pub struct Prepared {
    setup: Option<ChildSetup>,
    env: Option<Vec<(OsString, OsString)>>,
    tmp_dir: Option<PathBuf>,
    watch: Watch,
    started: std::time::SystemTime,
    /// The memory cgroup holding the command, when one could be made; dropped (emptied and removed) with this.
    memory: Option<MemoryCgroup>,
    limits: ProcessLimits,
    /// The pipe (read end, write end) where the namespace's init writes the command's wait status.
    status_pipe: Option<(OwnedFd, OwnedFd)>,
    scratch: Option<tempfile::TempDir>,
    /// The proxy of a command allowed the network, stopped when this is dropped.
    proxy: Option<Proxy>,
    /// What a background command serves on its own loopback, published on the host's while it runs.
    services: Option<Services>,
    /// What the command's caller should be told (its network falls short of the plan's).
    notes: Vec<String>,
}

impl Prepared {
    /// Prepares `launch`: builds the Landlock ruleset and the seccomp filter, makes the scratch directory,
    /// filters the environment of this process, and notes the entries of the writable roots.
    ///
    /// # Errors
    /// [`KernelSandboxError::Unsupported`] when a plan is given and the kernel cannot enforce it; the errors of the
    /// ruleset, the filter and the scratch directory.
    pub fn new(launch: &Launch<'_>) -> Result<Self> {
        let limits = launch.limits;
        let memory = MemoryCgroup::create(limits.memory);
        let rlimits = rlimits(&limits, memory.is_none());
        // The memory cgroup is joined first, so that the helper processes of the namespaces count too.
        let cgroups = memory
            .as_ref()
            .map(MemoryCgroup::join_fd)
            .into_iter()
            .chain(launch.cgroup_procs)
            .collect();
        let nice = limits.nice;
        let die_with = launch.die_with_parent.then(|| nix::unistd::getpid().as_raw());
        let Some(plan) = launch.plan else {
            return Ok(Self {
                setup: Some(ChildSetup {
                    cgroups,
                    die_with,
                    rlimits,
                    nice,
                    confine: None,
                }),
                env: None,
                tmp_dir: None,
                watch: Watch::default(),
                started: crate::scan::file_clock_now(),
                memory,
                limits,
                status_pipe: None,
                scratch: None,
                proxy: None,
                services: None,
                notes: Vec::new(),
            });
        };
        if let Some(why) = launch.support.missing() {
            return Err(KernelSandboxError::Unsupported(why));
        }
        let namespaces = matches!(plan.isolation, Isolation::Namespaces { .. });
        let scratch = scratch_dir(namespaces)?;
        let tmp = scratch.path().join("tmp");
        let mask_file = scratch.path().join("mask");
        let mask_dir = scratch.path().join("mask.d");
        std::fs::create_dir(&tmp)
            .and_then(|()| std::fs::write(&mask_file, b""))
            .and_then(|()| std::fs::create_dir(&mask_dir))
            .and_then(|()| std::fs::set_permissions(&mask_file, std::fs::Permissions::from_mode(0o000)))
            .and_then(|()| std::fs::set_permissions(&mask_dir, std::fs::Permissions::from_mode(0o000)))
            .map_err(KernelSandboxError::Scratch)?;

        let writes = plan.confinement.profile == SandboxProfile::WorkspaceWrite;
        if writes {
            std::fs::write(
                scratch.path().join(RUN_RECORD),
                run_record(
                    crate::scan::file_clock_now(),
                    &plan.grants,
                    &plan
                        .cache_overlays
                        .iter()
                        .map(|layer| layer.upper.as_path())
                        .collect::<Vec<_>>(),
                ),
            )
            .map_err(KernelSandboxError::Scratch)?;
        }
        // The network: none, a private loopback, or the proxy (crate::proxy says how the command reaches it).
        let network = NetworkSetup::of(plan, launch.support).map_err(KernelSandboxError::Proxy)?;
        let sockets = network.sockets;
        let mut grants: Vec<Grant> = plan.grants.clone();
        let tmp_rights = if writes {
            Rights::READ_EXECUTE.with(Rights::WRITE)
        } else {
            Rights::READ.with(Rights::LIST).with(Rights::WRITE)
        };
        grants.push(Grant {
            path: tmp.clone(),
            rights: tmp_rights,
        });
        let ruleset = crate::ruleset::build(&grants, network.tcp, launch.support)?;
        let seccomp = crate::seccomp::build(sockets, !writes)?;

        // `/tmp` becomes the private directory where nothing the command needs lies beneath `/tmp`.
        let tmp_is_free = !plan
            .grants
            .iter()
            .any(|g| g.path.starts_with("/tmp") && g.path != Path::new("/tmp"));
        let bind_tmp = namespaces && tmp_is_free;
        let mut status_pipe = None;
        let mut services = None;
        let namespace_setup = match plan.isolation {
            Isolation::LandlockOnly => None,
            Isolation::Namespaces { user } => {
                let mut setup = namespace_setup(
                    plan,
                    user,
                    network.namespace,
                    &Scratch {
                        tmp: &tmp,
                        tmp_size: TMP_SIZE.min(limits.memory),
                        tmp_rights,
                        bind_tmp,
                        mask_file: &mask_file,
                        mask_dir: &mask_dir,
                    },
                )?;
                setup.pid_max = launch
                    .pid_max
                    .filter(|_| launch.support.pid_max_per_namespace)
                    .and_then(|max| CString::new(max.to_string()).ok());
                let pipe = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK)
                    .map_err(|errno| KernelSandboxError::StatusPipe(errno.into()))?;
                setup.status_fd = Some(pipe.1.as_raw_fd());
                status_pipe = Some(pipe);
                setup.relay = network
                    .proxy
                    .as_ref()
                    .and_then(Proxy::relay_fd)
                    .map(|to_proxy| Relay {
                        to_proxy,
                        port: crate::proxy::RELAY_PORT,
                    });
                // A command in the background may serve what the user and the agent's next calls reach.
                if plan.confinement.background && network.namespace {
                    services = Some(
                        Services::new(plan.publish.clone(), scratch.path(), plan.serves_others)
                            .map_err(KernelSandboxError::Proxy)?,
                    );
                    setup.door = services.as_ref().and_then(Services::door_fd);
                }
                Some(setup)
            }
        };
        if !namespaces {
            std::fs::write(tmp.join(GIT_CONFIG), &plan.git_config).map_err(KernelSandboxError::Scratch)?;
        }
        let tmp_dir = if bind_tmp { PathBuf::from("/tmp") } else { tmp };
        let mut env = launch.env.filter(std::env::vars_os(), plan.confinement.network);
        // git reads its identity from the generated file, never from `~/.gitconfig` (which the command cannot
        // read, and which may hold a token).
        env.push((
            "GIT_CONFIG_GLOBAL".into(),
            tmp_dir.join(GIT_CONFIG).into_os_string(),
        ));
        if let Some(proxy) = &network.proxy {
            proxy.set_env(&mut env);
        }
        Ok(Self {
            setup: Some(ChildSetup {
                cgroups,
                die_with,
                rlimits,
                nice,
                confine: Some(Confine {
                    namespaces: namespace_setup,
                    ruleset,
                    seccomp,
                    cap_last: cap_last(),
                }),
            }),
            env: Some(env),
            tmp_dir: Some(tmp_dir),
            watch: plan.watch.clone(),
            started: crate::scan::file_clock_now(),
            memory,
            limits,
            status_pipe,
            scratch: Some(scratch),
            proxy: network.proxy,
            services,
            notes: network.note.into_iter().collect(),
        })
    }

    /// Publishes on the host's loopback what the command serves on its own loopback, while it runs, when it was
    /// started in the background; called once the command has started. Each port published, or not, is told to
    /// `notes`.
    pub fn publish_services(&mut self, notes: Box<dyn FnMut(&str) + Send>) {
        if let Some(services) = &mut self.services {
            services.publish(notes);
        }
    }

    /// The command's temporary directory (`TMPDIR`), when it is confined.
    pub fn tmp_dir(&self) -> Option<&Path> {
        self.tmp_dir.as_deref()
    }

    /// What the caller should tell the command's user: before it runs, where the kernel gives it less than the
    /// plan asked (without namespaces, how its network is held to the proxy, or that it has none); after
    /// [`finish`](Self::finish), also where the check after the run stopped short.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Writes each network refusal of the proxy to `to` as it happens, one line per domain
    /// (`agent-guard: network to `x.com` refused: not in agentGuard.network.allow`).
    pub fn echo_network_refusals(&self, to: Box<dyn Write + Send>) {
        if let Some(proxy) = &self.proxy {
            proxy.echo_to(to);
        }
    }

    /// The network refusals of the proxy so far, one line per domain.
    pub fn network_refusals(&self) -> Vec<String> {
        self.proxy.as_ref().map(Proxy::refusals).unwrap_or_default()
    }

    /// Puts the environment, the process group and the child setup on `command`, after its working directory is
    /// set. The command's first process leads a process group of its own (the command itself, in a session of its
    /// own, when it is confined without namespaces): a signal to that group reaches everything it started. A
    /// `Prepared` configures one command; a second call leaves the command as it is and returns `false`.
    pub fn configure(&mut self, command: &mut std::process::Command) -> bool {
        let Some(mut setup) = self.setup.take() else {
            return false;
        };
        let session_of_its_own = setup.confine.as_ref().is_some_and(|c| c.namespaces.is_none());
        if !session_of_its_own {
            command.process_group(0);
        }
        if let Some(namespaces) = setup.confine.as_mut().and_then(|c| c.namespaces.as_mut()) {
            let cwd = match command.get_current_dir() {
                Some(dir) if dir.is_absolute() => Some(dir.to_path_buf()),
                Some(dir) => std::env::current_dir().ok().map(|here| here.join(dir)),
                None => std::env::current_dir().ok(),
            };
            namespaces.cwd = cwd.and_then(|dir| CString::new(dir.into_os_string().into_vec()).ok());
        }
        if let Some(env) = self.env.take() {
            command.env_clear();
            command.envs(env);
            if let Some(tmp) = &self.tmp_dir {
                command.env("TMPDIR", tmp);
            }
        }
        #[expect(unsafe_code, reason = "the pre-exec hook of the sandbox; see child.rs")]
        // SAFETY: `ChildSetup::run` makes only async-signal-safe system calls on data prepared before the fork (see
        // child.rs); it allocates nothing and takes no lock.
        unsafe {
            command.pre_exec(move || setup.run());
        }
        true
    }

    /// Whether [`start`](Self::start) starts the command: it is confined in namespaces, whose process 1 this
    /// process can make itself.
    pub(crate) fn starts_itself(&self) -> bool {
        self.setup
            .as_ref()
            .and_then(|setup| setup.confine.as_ref())
            .is_some_and(|confine| confine.namespaces.is_some())
    }

    /// Starts `argv` (the program first) under this confinement in the current directory, with `clone` making
    /// the namespaces and their process 1 (child.rs), its stdout and stderr on pipes when `piped`, stdin this
    /// process's. The command leads a session of its own, and the namespace's process 1 a process group of its
    /// own, whose end takes every process of the command. A `Prepared` starts one command.
    ///
    /// # Errors
    /// `InvalidInput` for an empty `argv` or a NUL byte in it or in the environment, for a `Prepared` that
    /// started or configured a command already or is not confined in namespaces; the errors of the pipes and of
    /// `clone`.
    pub(crate) fn start(
        &mut self,
        argv: &[OsString],
        piped: bool,
        gated: bool,
    ) -> std::io::Result<crate::supervise::Started> {
        use std::io::{Error, ErrorKind};
        let invalid = || Error::from(ErrorKind::InvalidInput);
        if !self.starts_itself() {
            return Err(invalid());
        }
        let mut setup = self.setup.take().ok_or_else(invalid)?;
        if let Some(namespaces) = setup.confine.as_mut().and_then(|c| c.namespaces.as_mut()) {
            namespaces.cwd = std::env::current_dir()
                .ok()
                .and_then(|dir| CString::new(dir.into_os_string().into_vec()).ok());
        }
        let c_string = |bytes: Vec<u8>| CString::new(bytes).map_err(|_| invalid());
        let program = c_string(argv.first().ok_or_else(invalid)?.as_bytes().to_vec())?;
        let args = argv
            .iter()
            .map(|arg| c_string(arg.as_bytes().to_vec()))
            .collect::<std::io::Result<Vec<_>>>()?;
        // As `std::process::Command` passes it: one entry per name, ordered by name.
        let mut vars: std::collections::BTreeMap<OsString, OsString> =
            self.env.take().unwrap_or_default().into_iter().collect();
        if let Some(tmp) = &self.tmp_dir {
            vars.insert("TMPDIR".into(), tmp.clone().into_os_string());
        }
        let env = vars
            .into_iter()
            .map(|(name, value)| {
                let mut entry = name.into_vec();
                entry.push(b'=');
                entry.extend(value.into_vec());
                c_string(entry)
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        let pointers = |strings: &[CString]| {
            strings
                .iter()
                .map(|s| s.as_ptr())
                .chain(std::iter::once(std::ptr::null()))
                .collect::<Vec<_>>()
        };
        let (argv_c, envp) = (pointers(&args), pointers(&env));
        let pipe = || nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(Error::from);
        let (stdout, stderr) = if piped {
            (Some(pipe()?), Some(pipe()?))
        } else {
            (None, None)
        };
        let errors = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK)?;
        let gate = if gated { Some(pipe()?) } else { None };
        let parent = if setup.die_with.is_some() {
            Some(crate::supervise::pidfd_of_self()?)
        } else {
            None
        };
        let exec = crate::child::Exec {
            program: &program,
            argv: &argv_c,
            envp: &envp,
            stdout: stdout.as_ref().map(|(_, write)| write.as_raw_fd()),
            stderr: stderr.as_ref().map(|(_, write)| write.as_raw_fd()),
            errors: errors.1.as_raw_fd(),
            parent: parent.as_ref().map(AsRawFd::as_raw_fd),
            gate: gate
                .as_ref()
                .map(|(read, write)| (read.as_raw_fd(), write.as_raw_fd())),
        };
        let init = setup.start(&exec)?;
        // The write ends are the command's alone now: each pipe ends when the last of its processes has.
        Ok(crate::supervise::Started {
            init: nix::unistd::Pid::from_raw(init),
            stdout: stdout.map(|(read, _)| read),
            stderr: stderr.map(|(read, _)| read),
            errors: errors.0,
            // The read end is the command's alone now (closed here when `gate` is dropped).
            gate: gate.map(|(_, write)| write),
        })
    }

    /// After the command has ended with `status`: the bound of its limits that ended it, where that is certain.
    /// The memory cgroup counts the processes the kernel ended for passing its bound; a death by `SIGXCPU` or
    /// `SIGXFSZ` (seen through the namespace's init, which reports the command's own wait status) comes only from
    /// the CPU-time and file-size rlimits, unless a process sent it on purpose. A failed allocation under
    /// `RLIMIT_DATA` leaves no certain trace, and is not named.
    pub(crate) fn bound_passed(&self, status: std::process::ExitStatus) -> Option<PassedBound> {
        use std::os::unix::process::ExitStatusExt;
        if self.memory.as_ref().is_some_and(|cgroup| cgroup.oom_kills() > 0) {
            return Some(PassedBound::Memory(self.limits.memory));
        }
        let signal = match &self.status_pipe {
            Some((read, _)) => {
                let mut raw = [0u8; std::mem::size_of::<libc::c_int>()];
                let reported = nix::unistd::read(read, &mut raw).ok() == Some(raw.len());
                let wait_status = libc::c_int::from_ne_bytes(raw);
                (reported && libc::WIFSIGNALED(wait_status)).then(|| libc::WTERMSIG(wait_status))
            }
            None => status.signal(),
        };
        match signal? {
            libc::SIGXCPU => Some(PassedBound::CpuTime(self.limits.cpu_seconds)),
            libc::SIGXFSZ => Some(PassedBound::FileSize(self.limits.file_size)),
            _ => None,
        }
    }

    /// After the command (and every process it started) has ended: removes the protected paths it created in
    /// the writable roots, at any depth the scan reaches (a `.git`, `.claude` or `.envrc` that did not exist), and
    /// the tools' configuration it created in the caches (`~/.cargo/config`, `~/.cargo/bin`), which no mount
    /// could have kept out; returns what was removed.
    pub fn finish(&mut self, protection: &dyn Protection) -> Vec<PathBuf> {
        let watch = std::mem::take(&mut self.watch);
        let mut stopped = Vec::new();
        let created = watch.created(protection, self.started, &mut stopped);
        // A command that made more entries than the scan looks at may have hidden a protected path past them: the
        // caller says so (`Prepared::notes`).
        self.notes.extend(stopped.into_iter().map(|why| {
            format!("{why}; a protected path the command made past them (a `.claude`, `.git` or `.envrc`) was not looked for or removed")
        }));
        created
            .into_iter()
            .filter(|path| {
                // The command may have taken the owner's rights on the directory holding the path, or inside it.
                if let Some(parent) = path.parent() {
                    crate::scan::open_up(parent);
                }
                let gone = match std::fs::symlink_metadata(path) {
                    Ok(meta) if meta.is_dir() => {
                        crate::scan::open_up(path);
                        let _opened = make_removable(path);
                        std::fs::remove_dir_all(path)
                    }
                    Ok(_) => std::fs::remove_file(path),
                    Err(e) => Err(e),
                };
                gone.is_ok()
            })
            .collect()
    }
}

impl Drop for Prepared {
    fn drop(&mut self) {
        // What the command left in its temporary directory may have lost the owner's permissions.
        if let Some(scratch) = self.scratch.take() {
            let _opened = make_removable(scratch.path());
            drop(scratch);
        }
    }
}

/// The name of git's generated global configuration in the command's temporary directory.
const GIT_CONFIG: &str = ".gitconfig";
/// The places of the scratch directory the mounts use.
struct Scratch<'a> {
    /// The private temporary directory, its size in bytes, and what the command may do in it.
    tmp: &'a Path,
    tmp_size: u64,
    tmp_rights: Rights,
    /// Whether `/tmp` shows it.
    bind_tmp: bool,
    /// The empty, unreadable stand-ins of a secret file and a secret directory.
    mask_file: &'a Path,
    mask_dir: &'a Path,
}

/// The namespace flags, user maps and mounts of `plan`.
fn namespace_setup(
    plan: &Plan,
    user: bool,
    network_namespace: bool,
    scratch: &Scratch<'_>,
) -> Result<NamespaceSetup> {
    let Scratch {
        tmp: scratch_tmp,
        tmp_size,
        tmp_rights,
        bind_tmp,
        mask_file,
        mask_dir,
    } = *scratch;
    let tmp = bind_tmp.then_some(scratch_tmp);
    let mut flags = libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
    if network_namespace {
        flags |= libc::CLONE_NEWNET;
    }
    let user_maps = user.then(|| {
        flags |= libc::CLONE_NEWUSER;
        let uid = nix::unistd::geteuid().as_raw();
        let gid = nix::unistd::getegid().as_raw();
        (
            format!("{uid} {uid} 1").into_bytes(),
            format!("{gid} {gid} 1").into_bytes(),
        )
    });
    let mut mounts = vec![MountOp::Private, MountOp::ReadOnlyEverything];
    // The places the command may write are bound again over themselves, writable (with what lies beneath them);
    // the package caches it writes get an overlay instead.
    for grant in &plan.grants {
        let overlaid = plan.cache_overlays.iter().any(|o| o.cache == grant.path);
        if grant.rights.contains(Rights::WRITE) && grant.path.is_dir() && !overlaid {
            let target = c_path(&grant.path)?;
            mounts.push(MountOp::Bind {
                source: target.clone(),
                target: target.clone(),
                recursive: true,
            });
            mounts.push(MountOp::Remount {
                flags: libc::MS_BIND | libc::MS_REMOUNT | (locked_flags(&grant.path) & !libc::MS_RDONLY),
                target,
            });
        }
    }
    // Each shared package cache the command writes is an overlay: the cache below, never written, and the
    // project's layer above, which takes every write. The layers' directory is bound writable first (overlayfs
    // will not write an upper layer on a read-only mount); the command never reaches it (Landlock grants it
    // nothing, and a mask hides it where a root holds it). The overlay's own root is granted once mounted.
    let cache_access = crate::ruleset::access(Rights::READ_EXECUTE.with(Rights::WRITE)).bits();
    let mut layers: Vec<&Path> = plan
        .cache_overlays
        .iter()
        .filter_map(|o| o.upper.parent().and_then(Path::parent))
        .collect();
    layers.sort();
    layers.dedup();
    for layer in layers {
        let target = c_path(layer)?;
        mounts.push(MountOp::Bind {
            source: target.clone(),
            target: target.clone(),
            recursive: false,
        });
        mounts.push(MountOp::Remount {
            flags: libc::MS_BIND | libc::MS_REMOUNT | (locked_flags(layer) & !libc::MS_RDONLY),
            target,
        });
    }
    for overlay in &plan.cache_overlays {
        let mut options = format!(
            "lowerdir={},upperdir={},workdir={},index=off,metacopy=off,xino=off",
            overlay.cache.display(),
            overlay.upper.display(),
            overlay.work.display()
        );
        if user {
            // Its own extended attributes in the user's namespace: `trusted.*` needs the host's root.
            options.push_str(",userxattr");
        }
        mounts.push(MountOp::Overlay {
            target: c_path(&overlay.cache)?,
            options: CString::new(options)
                .map_err(|_| KernelSandboxError::NulInPath(overlay.cache.clone()))?,
            access: cache_access,
        });
    }
    // Read-only binds first and with what lies beneath them, so that the masks below land on top.
    for bind in &plan.read_only_binds {
        let target = c_path(&bind.path)?;
        mounts.push(MountOp::Bind {
            source: target.clone(),
            target: target.clone(),
            recursive: true,
        });
        let extra = if bind.no_exec { libc::MS_NOEXEC } else { 0 };
        mounts.push(MountOp::Remount {
            flags: libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | extra | locked_flags(&bind.path),
            target,
        });
    }
    // A bind mount takes the flags of the mount its source lies on, locked there in a user namespace: the remount
    // keeps the stand-ins' own (the scratch directory's file system), not those of the secret's.
    let mask_locks = locked_flags(mask_file);
    for (number, mask) in plan.masks.iter().enumerate() {
        let (source, locks) = match &mask.view {
            // A view is a file of the scratch directory, readable by all and written by no one.
            Some(view) => {
                let path = mask_file.with_file_name(format!("view-{number}"));
                std::fs::write(&path, view)
                    .and_then(|()| std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)))
                    .map_err(KernelSandboxError::Scratch)?;
                (c_path(&path)?, mask_locks)
            }
            None => (c_path(if mask.dir { mask_dir } else { mask_file })?, mask_locks),
        };
        let target = c_path(&mask.path)?;
        mounts.push(if mask.in_root {
            MountOp::Hide {
                source,
                target: target.clone(),
                identity: mask.identity,
            }
        } else {
            MountOp::Bind {
                source,
                target: target.clone(),
                recursive: false,
            }
        });
        mounts.push(MountOp::Remount {
            flags: libc::MS_BIND
                | libc::MS_REMOUNT
                | libc::MS_RDONLY
                | libc::MS_NOEXEC
                | libc::MS_NOSUID
                | libc::MS_NODEV
                | locks,
            target,
        });
    }
    // The private temporary directory is a tmpfs of bounded size, gone with the namespace; `/tmp` shows it where
    // nothing the command needs lies beneath `/tmp`. Its pages are memory the command holds: a memory cgroup
    // counts them, and without one its size stays within the memory bound.
    mounts.push(MountOp::Tmpfs {
        target: c_path(scratch_tmp)?,
        options: CString::new(format!("size={tmp_size},mode=0700"))
            .map_err(|_| KernelSandboxError::NulInPath(scratch_tmp.to_path_buf()))?,
        access: crate::ruleset::access(tmp_rights).bits(),
    });
    mounts.push(MountOp::File {
        path: c_path(&scratch_tmp.join(GIT_CONFIG))?,
        content: plan.git_config.clone().into_bytes(),
    });
    if let Some(tmp) = tmp {
        mounts.push(MountOp::Bind {
            source: c_path(tmp)?,
            target: c"/tmp".to_owned(),
            recursive: false,
        });
    }
    Ok(NamespaceSetup {
        flags,
        user_maps,
        mounts,
        proc_access: crate::ruleset::proc_access_bits(),
        loopback: network_namespace,
        relay: None,
        door: None,
        pid_max: None,
        cwd: None,
        status_fd: None,
    })
}

/// The flags of the mount holding `path` that a user namespace may not clear on a remount.
fn locked_flags(path: &Path) -> libc::c_ulong {
    use nix::sys::statvfs::FsFlags;
    let Ok(stat) = nix::sys::statvfs::statvfs(path) else {
        return 0;
    };
    let flags = stat.flags();
    [
        (FsFlags::ST_NOSUID, libc::MS_NOSUID),
        (FsFlags::ST_NODEV, libc::MS_NODEV),
        (FsFlags::ST_NOEXEC, libc::MS_NOEXEC),
        (FsFlags::ST_NOATIME, libc::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, libc::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, libc::MS_RELATIME),
    ]
    .into_iter()
    .filter(|(fs, _)| flags.contains(*fs))
    .fold(0, |all, (_, ms)| all | ms)
}

fn c_path(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| KernelSandboxError::NulInPath(path.to_path_buf()))
}

/// The highest capability number of this kernel.
fn cap_last() -> libc::c_ulong {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(63)
}

/// The rlimits of `limits` as `(resource, soft, hard)`, never above what this process has: `RLIMIT_DATA` for the
/// memory when `memory_rlimit` (no memory cgroup holds the command), and a hard CPU bound a second above the soft
/// one, so that a process at the bound gets `SIGXCPU` (which names the bound) before `SIGKILL`.
fn rlimits(
    limits: &ProcessLimits,
    memory_rlimit: bool,
) -> Vec<(libc::__rlimit_resource_t, libc::rlim_t, libc::rlim_t)> {
    use nix::sys::resource::{Resource, getrlimit};
    let mut wanted = vec![
        (Resource::RLIMIT_NPROC, limits.processes, limits.processes),
        (
            Resource::RLIMIT_CPU,
            limits.cpu_seconds,
            limits.cpu_seconds.saturating_add(1),
        ),
        (Resource::RLIMIT_FSIZE, limits.file_size, limits.file_size),
        (Resource::RLIMIT_CORE, 0, 0),
    ];
    if memory_rlimit {
        wanted.push((Resource::RLIMIT_DATA, limits.memory, limits.memory));
    }
    wanted
        .into_iter()
        .map(|(resource, soft, hard)| {
            let (soft, hard) = match getrlimit(resource) {
                Ok((have_soft, have_hard)) => (soft.min(have_soft).min(have_hard), hard.min(have_hard)),
                Err(_) => (soft, hard),
            };
            (resource as libc::__rlimit_resource_t, soft.min(hard), hard)
        })
        .collect()
}
