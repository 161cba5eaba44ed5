//! What a profile grants: the paths a command may read, execute and write, and how the secrets and protected
//! paths inside those grants are kept out.

use std::path::{Path, PathBuf};

use agent_tool_traits::{Confinement, SandboxProfile};

use crate::domains::{DomainLimit, DomainPolicy, PortRange};
use crate::error::{KernelSandboxError, Result};
use crate::probe::{KernelSupport, Namespaces};
use crate::scan::{Look, Watch, prefixed, scan};

use caches::writable_caches;

/// System directories every profile may read and execute.
const SYSTEM_DIRS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt",
    "/etc",
    "/nix",
    "/run/current-system",
];

/// What programs read of `/sys`: processor counts and cgroup limits (thread pools size themselves by them) and
/// the huge-page setting (language runtimes tune their heaps by it).
const SYS_DIRS: &[&str] = &[
    "/sys/devices/system/cpu",
    "/sys/fs/cgroup",
    "/sys/kernel/mm/transparent_hugepage",
];

/// The files of `/proc` that describe the machine, not a process; granted when the command cannot have a
/// `/proc` of its own (without a PID namespace, `/proc/<pid>/environ` of other processes would be readable).
const PROC_FILES: &[&str] = &[
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/stat",
    "/proc/loadavg",
    "/proc/uptime",
    "/proc/version",
    "/proc/filesystems",
    "/proc/sys",
];

/// Devices to read: randomness and zeros.
const READ_DEVICES: &[&str] = &["/dev/zero", "/dev/random", "/dev/urandom", "/dev/full"];

/// System files that hold secrets: password hashes, host keys, keytabs, VPN and Wi-Fi keys, TLS private keys.
const SYSTEM_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/security/opasswd",
    "/etc/ssl/private",
    "/etc/pki/tls/private",
    "/etc/krb5.keytab",
    "/etc/NetworkManager/system-connections",
    "/etc/wireguard",
    "/etc/ppp/chap-secrets",
    "/etc/ppp/pap-secrets",
    "/etc/letsencrypt/archive",
    "/etc/letsencrypt/live",
    "/etc/libvirt/secrets",
];

/// Where ssh keeps the host's private keys (`ssh_host_*_key`).
const SSH_HOST_KEYS: &str = "/etc/ssh";

/// Sockets of services that act for the user or as root (the container engines, the system and session buses,
/// systemd, snapd, libvirt, the per-user runtime directories with their keyring, agent and display sockets).
/// A command allowed the network may open Unix sockets, and Landlock does not govern connecting to one: where
/// namespaces exist these places are hidden from it.
const SERVICE_SOCKETS: &[&str] = &[
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/containerd",
    "/run/podman",
    "/run/crio",
    "/run/dbus",
    "/var/run/dbus",
    "/run/systemd/private",
    "/run/systemd/io.system.ManagedOOM",
    "/run/user",
    "/run/snapd.socket",
    "/run/snapd-snap.socket",
    "/run/libvirt",
    "/var/run/libvirt",
    "/tmp/.X11-unix",
];

/// Package and build caches under the home directory that `workspace-write` may write, by allow list: a build
/// must be able to fetch its dependencies and keep its compiled artefacts, and nothing else of the home directory
/// is written. `~/.cache` is not a cache of packages but of everything: shells and their plugin managers keep there
/// what every new shell sources (completion dumps, prompt and plugin scripts), so only the package caches inside
/// it are written. A cache that does not exist yet is not granted (a tool's first run outside the sandbox, or a
/// `mkdir`, makes it).
const HOME_CACHES: &[&str] = &[
    // cargo locks `~/.cargo/.package-cache` at its top; its configuration and programs are kept out below.
    ".cargo",
    ".rustup",
    ".npm",
    ".cache/pip",
    ".cache/uv",
    ".cache/pypoetry/cache",
    ".cache/pypoetry/artifacts",
    ".cache/yarn",
    ".cache/pnpm",
    ".cache/go-build",
    ".cache/coursier",
    ".yarn/berry/cache",
    ".pnpm-store",
    ".local/share/pnpm/store",
    ".gradle/caches",
    ".gradle/native",
    ".gradle/daemon",
    ".m2/repository",
    ".bun/install/cache",
    ".nuget/packages",
    ".ivy2/cache",
    "go/pkg",
];

/// What inside those caches configures the tools or is a program that other commands run later without asking
/// (a cargo config with a `rustc-wrapper`, the toolchains `~/.cargo/bin/cargo` starts, `~/go/bin` on the `PATH`,
/// sbt's global plugins, pre-commit's hook repositories, npx's package cache, browsers a test framework fetched):
/// never written by a sandboxed command. A build that must install a toolchain does so outside the sandbox.
const CACHE_CONFIG: &[&str] = &[
    ".cargo/config",
    ".cargo/config.toml",
    ".cargo/bin",
    ".cargo/env",
    ".rustup/toolchains",
    ".rustup/settings.toml",
    ".rustup/update-hashes",
    ".gradle/init.d",
    ".gradle/init.gradle",
    ".gradle/init.gradle.kts",
    ".gradle/wrapper",
    ".m2/extensions.xml",
    ".m2/toolchains.xml",
    ".yarn/plugins",
    ".yarn/releases",
    ".npm/_npx",
    ".bun/bin",
    "go/bin",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".sbt/1.0",
    ".sbt/plugins",
    ".sbt/boot",
    ".cache/pre-commit",
    ".cache/pypoetry/virtualenvs",
    ".cache/ms-playwright",
    ".cache/puppeteer",
    ".yarn/bin",
    ".gradle/jdks",
    ".cache/node/corepack",
    ".cache/gitstatus",
    ".cache/bazelisk",
    ".cache/nvim",
];

/// Files in those caches named by a directory and the start of their names: start-up files that shells source
/// (cargo's `env.fish` and its kin, powerlevel10k's instant prompt, which every zsh that uses it sources).
const CACHE_CONFIG_PREFIXES: &[(&str, &str)] = &[(".cargo", "env"), (".cache", "p10k-")];

/// Variables that name a toolchain or package cache outside the home directory's usual places, whether it is a
/// cache `workspace-write` writes, and the files inside it that hold credentials or make the tool run code.
const TOOLCHAIN_VARS: &[(&str, bool, &[&str])] = &[
    (
        "CARGO_HOME",
        true,
        &[
            "credentials",
            "credentials.toml",
            "config",
            "config.toml",
            "bin",
            "env",
        ],
    ),
    ("RUSTUP_HOME", true, &[]),
    ("GOPATH", true, &[]),
    ("GOMODCACHE", true, &[]),
    ("GOROOT", false, &[]),
    (
        "GRADLE_USER_HOME",
        true,
        &["gradle.properties", "init.d", "init.gradle", "init.gradle.kts"],
    ),
    ("npm_config_cache", true, &[]),
    ("PNPM_HOME", true, &[]),
    ("BUN_INSTALL", true, &[]),
    ("PYENV_ROOT", false, &[]),
    ("NVM_DIR", false, &[]),
    ("VOLTA_HOME", false, &[]),
    ("JAVA_HOME", false, &[]),
    ("SDKMAN_DIR", false, &[]),
    ("ASDF_DATA_DIR", false, &[]),
    ("MISE_DATA_DIR", false, &[]),
    ("CONDA_PREFIX", false, &[]),
    ("VIRTUAL_ENV", false, &[]),
];

/// Which paths inside the roots a command must not read or write, as the decision layers see them (the secret
/// files and protected paths of the file-system sandbox, the deny rules of the settings).
pub trait Protection {
    /// Whether reading `path` (inside `root`) must be refused: a secret file or a place a deny rule protects.
    fn secret(&self, path: &Path, root: &Path) -> bool;
    /// Whether writing `path` (inside `root`) must be refused: a protected path or a place a deny or ask rule
    /// protects for writes.
    fn write_protected(&self, path: &Path, root: &Path) -> bool;
    /// Whether a file or directory that a command made at `path` (inside `root`) must be taken back when it ends:
    /// a protected path by default. A protection whose reason is what an existing file holds (a key file, which a
    /// write would replace) need not cover a file the command made itself.
    fn protects_new(&self, path: &Path, root: &Path) -> bool {
        self.write_protected(path, root)
    }
    /// What a command reads in place of the regular file `path` of a root (`metadata`, of the file itself), asked
    /// of every file the scan before a run reaches (in protected directories too; not in a git object store or a
    /// tagged cache with a build output's name): the file as it is, a view of it (its credentials replaced), or
    /// nothing. A sandbox without namespaces cannot show a view and hides the file.
    fn content(&self, path: &Path, metadata: &std::fs::Metadata) -> ContentView {
        let _unused = (path, metadata);
        ContentView::AsItIs
    }
}

/// What a command reads of a file of the roots ([`Protection::content`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContentView {
    /// The file as it is.
    AsItIs,
    /// These bytes instead: the file with each credential replaced by its marker.
    Redacted(Vec<u8>),
    /// Nothing: the file is hidden as a secret is.
    Hidden,
}

/// What a sandbox is built from.
#[derive(Debug, Clone)]
pub struct SandboxSpec {
    /// The profile and the network.
    pub confinement: Confinement,
    /// The roots: read in every profile, written in `workspace-write`. The first is the working directory.
    pub roots: Vec<PathBuf>,
    /// Roots that are only ever read.
    pub read_only_roots: Vec<PathBuf>,
    /// The home directory: of it, only what tool chains read is granted (their installations and package caches,
    /// by allow list), and its caches are written in `workspace-write`; its credential places stay hidden where a
    /// root or a place of the settings holds them.
    pub home: Option<PathBuf>,
    /// More places outside the roots a command may read (`agentGuard.sandbox.read`), secrets still left out.
    pub extra_reads: Vec<PathBuf>,
    /// More places never read, outside or inside the roots: the entries of the home directory that hold
    /// credentials whatever their files are called (`~/.ssh`, `~/.aws`, shell histories, …), and the literal
    /// places of deny rules on reads. The caller owns the list; the plan hides those that exist.
    pub secret_places: Vec<PathBuf>,
    /// More places never written (the literal places of deny and ask rules on writes).
    pub write_protected_places: Vec<PathBuf>,
    /// Directories of programs the command may run: the absolute entries of `PATH` (a toolchain under another
    /// user's home, `/usr/local/go/bin`). Read and execute, secrets still left out.
    pub program_dirs: Vec<PathBuf>,
    /// Toolchain and cache directories the environment names (`CARGO_HOME`, `RUSTUP_HOME`, `GOPATH`, …), with
    /// whether `workspace-write` writes them and the files in them that are never read or written.
    pub(crate) toolchains: Vec<Toolchain>,
    /// How many entries of the roots the scan for secrets and protected paths looks at.
    pub scan_limit: usize,
    /// The command's memory bound in bytes (`agentGuard.sandbox.memoryMax`); `None` is the default of
    /// [`ProcessLimits`](crate::ProcessLimits).
    pub memory_max: Option<u64>,
    /// The domains a command allowed the network reaches through the proxy (`agentGuard.network`).
    pub domains: DomainPolicy,
    /// The ports of its own loopback a command run in the background publishes on this machine's `127.0.0.1`
    /// (`agentGuard.sandbox.publish`).
    pub publish: Vec<PortRange>,
    /// Where this project's layers of the package caches live (`<project>/.agent-guard/caches`, or
    /// `~/.agent-guard/caches/<hash>` for a directory that is no project): with namespaces, each writable cache is
    /// an overlay whose writes land here, so that the shared cache is never changed. `None` keeps every shared
    /// cache read-only.
    pub cache_store: Option<PathBuf>,
}

impl SandboxSpec {
    /// A spec for `confinement` over `roots` with the program directories of this process's `PATH`, nothing
    /// else set; the scan looks at 20,000 entries.
    pub fn new(confinement: Confinement, roots: Vec<PathBuf>) -> Self {
        let program_dirs = std::env::var_os("PATH")
            .map(|path| {
                std::env::split_paths(&path)
                    .filter(|dir| dir.is_absolute())
                    .collect()
            })
            .unwrap_or_default();
        let toolchains = TOOLCHAIN_VARS
            .iter()
            .filter_map(|&(var, cache, guarded)| {
                let dir = PathBuf::from(std::env::var_os(var)?);
                dir.is_absolute().then(|| Toolchain {
                    guarded: guarded.iter().map(|name| dir.join(name)).collect(),
                    dir,
                    cache,
                })
            })
            .collect();
        Self {
            confinement,
            roots,
            read_only_roots: Vec::new(),
            home: None,
            extra_reads: Vec::new(),
            secret_places: Vec::new(),
            write_protected_places: Vec::new(),
            program_dirs,
            toolchains,
            scan_limit: 20_000,
            memory_max: None,
            domains: DomainPolicy::default(),
            publish: Vec::new(),
            cache_store: None,
        }
    }
}

/// A toolchain or cache directory named by the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Toolchain {
    /// The directory.
    pub dir: PathBuf,
    /// Whether `workspace-write` writes it (a package or build cache).
    pub cache: bool,
    /// Files in it that are neither read nor written (credentials) or not written (configuration that runs
    /// code).
    pub guarded: Vec<PathBuf>,
}

/// How the kernel keeps the command in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// Landlock and seccomp inside fresh mount, PID and IPC namespaces (and a network namespace for a
    /// `workspace-write` command without the network): secrets are hidden by mounts, protected paths mounted
    /// read-only, `/proc` and `/tmp` are the command's own, and every process ends with the command.
    Namespaces {
        /// Whether an unprivileged user namespace holds the others.
        user: bool,
    },
    /// Landlock and seccomp alone: secrets and protected paths are left out of the grants entry by entry.
    LandlockOnly,
}

/// Rights of one grant, as a set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rights(u8);

impl Rights {
    /// Read files.
    pub const READ: Self = Self(1);
    /// List directories.
    pub const LIST: Self = Self(2);
    /// Execute files.
    pub const EXECUTE: Self = Self(4);
    /// Create, change, remove and rename files and directories.
    pub const WRITE: Self = Self(8);
    /// Send device `ioctl`s (a terminal).
    pub const DEVICE: Self = Self(16);
    /// With [`Rights::WRITE`], writes in place only: files created, changed and removed and directories made, but
    /// no symbolic link made or moved, nothing moved to another directory, no directory renamed or removed, so
    /// that every path beneath the grant keeps leading where it did.
    pub const IN_PLACE: Self = Self(32);

    /// Read, list and execute: what a system directory grants.
    pub const READ_EXECUTE: Self = Self(1 | 2 | 4);

    /// The union.
    pub const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether every right of `other` is in `self`.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// `self` without the rights of `other`.
    pub const fn without(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }

    /// Whether no right is left.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// One path and what may be done beneath it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The path (a directory covers everything beneath it).
    pub path: PathBuf,
    /// The rights.
    pub rights: Rights,
}

/// A secret hidden behind a stand-in (namespaces only): an empty, unreadable one, or a read-only view of a file
/// that holds a credential, with each credential replaced (a file of the scratch directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mask {
    /// The secret.
    pub path: PathBuf,
    /// Whether it is a directory.
    pub dir: bool,
    /// What a command reads in its place, when not nothing.
    pub view: Option<Vec<u8>>,
    /// Whether it lies in a root: a mask that cannot be placed there because the path went away stops the run,
    /// as what it hides may only have moved.
    pub in_root: bool,
    /// The device and inode the scan saw at the path: the mask is placed only on that file or directory (a
    /// command beside the sandbox may have swapped another into its place), else the run stops.
    pub identity: Option<(u64, u64)>,
}

/// Everything the kernel will be told, computed from a [`SandboxSpec`] and the file system as it is now.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The profile and the network.
    pub confinement: Confinement,
    /// The mechanism.
    pub isolation: Isolation,
    /// The Landlock grants.
    pub grants: Vec<Grant>,
    /// Secrets hidden by mounts ([`Isolation::Namespaces`]).
    pub masks: Vec<Mask>,
    /// Paths mounted read-only ([`Isolation::Namespaces`]): the protected paths of `workspace-write`, and every
    /// root (also made non-executable) of `read-only`.
    pub read_only_binds: Vec<ReadOnlyBind>,
    /// What a `workspace-write` command is checked for when it ends: protected paths it created.
    pub(crate) watch: Watch,
    /// git's global configuration for the command: the identity of the user's, nothing else (gitconfig.rs).
    pub(crate) git_config: String,
    /// What the plan could not cover (a scan that stopped at its limit), for `--verbose` and `explain`.
    pub notes: Vec<String>,
    /// The command's memory bound in bytes, from the spec; `None` is the default of
    /// [`ProcessLimits`](crate::ProcessLimits).
    pub memory_max: Option<u64>,
    /// The domains the proxy forwards to, when the confinement allows the network.
    pub domains: DomainPolicy,
    /// The ports of its own loopback the command publishes on this machine's `127.0.0.1` when it runs in the
    /// background, from the spec.
    pub publish: Vec<PortRange>,
    /// Whether what the command serves when it runs in the background may be reached by the proxies of the
    /// project's other calls (`--service`): only where the command was granted nothing beyond the settings'
    /// network (no `--allow-domain`, no `--service`), so that its servers hand out no grant of its own. `true`
    /// from [`Plan::build`]; the caller that grants more says so.
    pub serves_others: bool,
    /// A limit over `domains`, set by the caller: a session that has read untrusted content reaches only the
    /// domains it reached before. `None` from [`Plan::build`].
    pub limit: Option<DomainLimit>,
    /// The package caches the command writes through an overlay ([`Isolation::Namespaces`], `workspace-write`):
    /// it reads the shared cache and this project's additions, and writes only the latter.
    pub cache_overlays: Vec<CacheOverlay>,
}

/// A shared package cache seen through an overlay: the cache is the lower layer, never written; what the command
/// writes there lands in the project's own upper layer, which its later sandboxed runs see again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheOverlay {
    /// The shared cache, and where the overlay is mounted.
    pub cache: PathBuf,
    /// The project's layer: the upper directory of the overlay.
    pub upper: PathBuf,
    /// The overlay's work directory, beside `upper` on the same file system.
    pub work: PathBuf,
}

/// A path mounted read-only over itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOnlyBind {
    /// The path.
    pub path: PathBuf,
    /// Whether programs beneath it may not be executed either.
    pub no_exec: bool,
}

impl Plan {
    /// Computes the plan of `spec` for a kernel with `support`, asking `protection` about each entry of the
    /// roots (up to `spec.scan_limit` entries).
    ///
    /// # Errors
    /// [`KernelSandboxError::Root`] when a root is not a directory.
    pub fn build(spec: &SandboxSpec, protection: &dyn Protection, support: &KernelSupport) -> Result<Self> {
        for root in spec.roots.iter().chain(&spec.read_only_roots) {
            match std::fs::metadata(root) {
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => {
                    return Err(KernelSandboxError::Root {
                        path: root.clone(),
                        source: std::io::Error::from(std::io::ErrorKind::NotADirectory),
                    });
                }
                Err(source) => {
                    return Err(KernelSandboxError::Root {
                        path: root.clone(),
                        source,
                    });
                }
            }
        }
        let isolation = match support.namespaces {
            Namespaces::Privileged => Isolation::Namespaces { user: false },
            Namespaces::User => Isolation::Namespaces { user: true },
            Namespaces::Unavailable => Isolation::LandlockOnly,
        };
        let writes = spec.confinement.profile == SandboxProfile::WorkspaceWrite;
        let mut notes = Vec::new();
        // The layers are made before the scan, so that a `.agent-guard` made for them is protected like one that
        // was there.
        let caches = writable_caches(spec, writes, isolation, &mut notes);

        let all_roots: Vec<PathBuf> = spec.roots.iter().chain(&spec.read_only_roots).cloned().collect();
        let look = Look {
            write_protected: writes,
            content: true,
            after_run: false,
        };
        let hidden = places_within(&spec.secret_places, &all_roots);
        let found = scan(&all_roots, spec.scan_limit, protection, look, &hidden, &mut notes);
        let views = found.views;
        let identities = found.identities;
        // The places looked for from here on are looked up through one set of directory reads: nothing below
        // changes the file system before the command runs.
        let mut presence = crate::presence::Presence::default();
        let grants = grants_of(
            spec,
            writes,
            isolation,
            &caches.writable,
            &mut presence,
            &mut notes,
        );
        let mut secrets: Vec<(PathBuf, bool)> = found.secrets;
        // The secret files at the top of the home directory by their names; its credential places whatever
        // their files are called come with the spec's secret places.
        let named_at_home: Vec<PathBuf> = spec
            .home
            .iter()
            .filter(|home| grants.iter().any(|g| home.starts_with(&g.path)))
            .filter_map(|home| std::fs::read_dir(home).ok().map(|entries| (home, entries)))
            .flat_map(|(home, entries)| {
                entries
                    .filter_map(std::result::Result::ok)
                    .map(|entry| entry.path())
                    .filter(|path| protection.secret(path, home))
                    .collect::<Vec<_>>()
            })
            .collect();
        let system_secrets = SYSTEM_SECRETS.iter().map(PathBuf::from).chain(ssh_host_keys());
        let toolchain_secrets = spec
            .toolchains
            .iter()
            .flat_map(|t| t.guarded.iter().filter(|p| is_credential(p)).cloned());
        let places: Vec<PathBuf> = named_at_home
            .into_iter()
            .chain(system_secrets)
            .chain(toolchain_secrets)
            .chain(spec.secret_places.iter().cloned())
            .collect();
        let kinds = presence.kinds(&places);
        for (path, kind) in places.into_iter().zip(kinds) {
            if let Some(dir) = kind
                && !secrets.iter().any(|(p, _)| *p == path)
            {
                secrets.push((path, dir));
            }
        }
        let mut write_protected = found.write_protected;
        // Only a confinement that lets git write (a line that runs git itself to write the repository) opens the
        // inside of a repository's git directory; every other command finds `.git` read-only whole, so that the
        // code it runs cannot delete or rewrite the history. With namespaces git then writes inside it (a mount
        // keeps `.git` in place and its configuration read-only); without them Landlock cannot grant creating
        // `index.lock` in `.git` without granting its `config`, so `.git` stays read-only whole.
        let git_dirs =
            if writes && spec.confinement.git_writes && matches!(isolation, Isolation::Namespaces { .. }) {
                crate::gitdir::writable_git_dirs(
                    &write_protected,
                    &spec.roots,
                    &spec.read_only_roots,
                    &spec.write_protected_places,
                )
            } else {
                Vec::new()
            };
        let mut watch = Watch::default();
        if writes {
            let cache_config = spec
                .home
                .iter()
                .flat_map(|home| CACHE_CONFIG.iter().map(move |e| home.join(e)));
            let toolchain_config = spec.toolchains.iter().flat_map(|t| t.guarded.iter().cloned());
            let prefixes: Vec<(PathBuf, &'static str)> = spec
                .home
                .iter()
                .flat_map(|home| {
                    CACHE_CONFIG_PREFIXES
                        .iter()
                        .map(move |(dir, prefix)| (home.join(dir), *prefix))
                })
                .collect();
            let candidates: Vec<PathBuf> = cache_config
                .chain(toolchain_config)
                .chain(spec.write_protected_places.iter().cloned())
                .chain(prefixes.iter().flat_map(|(dir, prefix)| prefixed(dir, prefix)))
                .chain(
                    git_dirs
                        .iter()
                        .flat_map(|dir| crate::gitdir::protected_entries(dir)),
                )
                .collect();
            for (path, exists) in candidates.iter().zip(presence.existing(&candidates)) {
                if exists && !write_protected.contains(path) {
                    write_protected.push(path.clone());
                }
            }
            // Each with its inode: a command may move the directory above a protected file (the file's read-only
            // mount moves with it) and make a new file under the old name, which is then no older path.
            let mut before: Vec<(PathBuf, Option<(u64, u64)>)> = write_protected
                .iter()
                .map(|path| (path.clone(), crate::scan::inode(path)))
                .collect();
            before.sort();
            watch = Watch {
                roots: spec.roots.clone(),
                candidates,
                prefixes,
                before,
                limit: spec.scan_limit,
            };
        }

        // The layers of the caches are the command's only through the overlays: hidden where a root holds them.
        if !caches.overlays.is_empty()
            && let Some(store) = &spec.cache_store
            && !secrets.iter().any(|(p, _)| p == store)
        {
            secrets.push((store.clone(), true));
        }
        let covered = |path: &Path| grants.iter().any(|g| path.starts_with(&g.path));
        secrets.retain(|(path, _)| covered(path));
        if spec.confinement.network && matches!(isolation, Isolation::Namespaces { .. }) {
            for socket in SERVICE_SOCKETS {
                if let Ok(meta) = std::fs::symlink_metadata(socket) {
                    secrets.push((PathBuf::from(socket), meta.is_dir()));
                }
            }
        }
        write_protected.retain(|path| covered(path));

        let (grants, masks, read_only_binds) = match isolation {
            Isolation::Namespaces { .. } => {
                let in_root = |path: &Path| all_roots.iter().any(|root| path.starts_with(root));
                let masks = secrets
                    .into_iter()
                    .map(|(path, dir)| Mask {
                        in_root: in_root(&path),
                        identity: identities.get(&path).copied(),
                        path,
                        dir,
                        view: None,
                    })
                    .chain(views.into_iter().map(|(path, view)| Mask {
                        identity: identities.get(&path).copied(),
                        path,
                        dir: false,
                        view: Some(view),
                        in_root: true,
                    }))
                    .collect();
                let mut binds: Vec<ReadOnlyBind> = write_protected
                    .into_iter()
                    .filter(|path| !git_dirs.contains(path))
                    .map(|path| ReadOnlyBind { path, no_exec: false })
                    .collect();
                // A writable git directory is bound again over itself: a mount cannot be renamed or removed, so
                // the command cannot put a `.git` of its own making in its place.
                let mut grants = grants;
                grants.extend(git_dirs.into_iter().map(|path| Grant {
                    path,
                    rights: Rights::READ_EXECUTE.with(Rights::WRITE),
                }));
                if !writes {
                    binds.extend(spec.roots.iter().map(|root| ReadOnlyBind {
                        path: root.clone(),
                        no_exec: true,
                    }));
                }
                (grants, masks, binds)
            }
            Isolation::LandlockOnly => {
                // Landlock cannot show a view: a file that holds a credential is left out as a secret is.
                let secret_paths: Vec<PathBuf> = secrets
                    .into_iter()
                    .map(|(p, _)| p)
                    .chain(views.into_iter().map(|(p, _)| p))
                    .collect();
                let mut split: Vec<Grant> = Vec::new();
                for g in grants {
                    // Reading and writing are left out separately: a secret is neither read nor written, a
                    // protected path is read but not written.
                    let read = g.rights.without(Rights::WRITE.with(Rights::IN_PLACE));
                    if !read.is_empty() {
                        split_around(&g.path, read, &secret_paths, &mut split);
                    }
                    if g.rights.contains(Rights::WRITE) {
                        let mut excluded = write_protected.clone();
                        excluded.extend(secret_paths.iter().cloned());
                        split_around(&g.path, g.rights.without(read), &excluded, &mut split);
                    }
                }
                (split, Vec::new(), Vec::new())
            }
        };
        Ok(Self {
            confinement: spec.confinement,
            isolation,
            grants,
            masks,
            read_only_binds,
            watch,
            git_config: crate::gitconfig::generated(spec.home.as_deref()),
            notes,
            memory_max: spec.memory_max,
            domains: spec.domains.clone(),
            publish: spec.publish.clone(),
            serves_others: true,
            limit: None,
            cache_overlays: caches.overlays,
        })
    }
}

/// The grants of `spec` before anything is left out: the system, the directories of programs and tool chains, the
/// home directory's tool-chain entries (its caches writable in `workspace-write`), the places the settings add, the
/// roots. A directory of programs or of a tool chain that is the home directory or holds it is not granted (a
/// `PATH` with `~` or `/` in it would grant every file of the home directory), and `notes` says so.
fn grants_of(
    spec: &SandboxSpec,
    writes: bool,
    isolation: Isolation,
    writable: &[PathBuf],
    presence: &mut crate::presence::Presence,
    notes: &mut Vec<String>,
) -> Vec<Grant> {
    // The places are gathered first and looked up together (crate::presence), the ones that exist granted.
    let mut wanted: Vec<Grant> = Vec::new();
    let mut grant = |path: PathBuf, rights: Rights| wanted.push(Grant { path, rights });
    let home = spec.home.as_deref();
    let holders = crate::home::HomeHolders::new(home);
    let mut holds_home = |dir: &Path, what: &str| {
        let holds = holders.holds(dir);
        if holds {
            notes.push(format!(
                "`{}` ({what}) holds the home directory: not granted",
                dir.display()
            ));
        }
        holds
    };
    for dir in SYSTEM_DIRS {
        grant(PathBuf::from(dir), Rights::READ_EXECUTE);
    }
    for dir in &spec.program_dirs {
        let inside_a_root = spec
            .roots
            .iter()
            .chain(&spec.read_only_roots)
            .any(|root| dir.starts_with(root));
        if !inside_a_root && !holds_home(dir, "a directory of `PATH`") {
            grant(dir.clone(), Rights::READ_EXECUTE);
        }
    }
    for toolchain in &spec.toolchains {
        if holds_home(&toolchain.dir, "a tool chain's directory") {
            continue;
        }
        let rights = if writes && toolchain.cache && writable.contains(&toolchain.dir) {
            Rights::READ_EXECUTE.with(Rights::WRITE)
        } else {
            Rights::READ_EXECUTE
        };
        grant(toolchain.dir.clone(), rights);
    }
    for dir in SYS_DIRS {
        grant(PathBuf::from(dir), Rights::READ.with(Rights::LIST));
    }
    if isolation == Isolation::LandlockOnly {
        for file in PROC_FILES {
            grant(PathBuf::from(file), Rights::READ.with(Rights::LIST));
        }
    }
    for device in READ_DEVICES {
        grant(PathBuf::from(device), Rights::READ);
    }
    grant(PathBuf::from("/dev/null"), Rights::READ.with(Rights::WRITE));
    if let Some(home) = home {
        for entry in crate::home::home_reads(home, presence) {
            grant(entry, Rights::READ_EXECUTE);
        }
        // `workspace-write` reads the package caches, and writes those it writes through an overlay.
        if writes {
            for cache in HOME_CACHES {
                let cache = home.join(cache);
                let rights = if writable.contains(&cache) {
                    Rights::READ_EXECUTE.with(Rights::WRITE)
                } else {
                    Rights::READ_EXECUTE
                };
                grant(cache, rights);
            }
        }
    }
    // What the user's settings add is granted as it resolves now: the user named the place, not a link in it.
    for place in &spec.extra_reads {
        if let Ok(real) = std::fs::canonicalize(place) {
            grant(real, Rights::READ_EXECUTE);
        }
    }
    // A command that runs beside the agent's other tool calls writes its roots in place, so that a path a file
    // tool's decision checked still leads where it did when the tool acts; beneath a build output of a root it
    // may still rename and remove directories (a dev server's or a watcher's caches), where such a path is no
    // protection of the user's.
    let background = writes && spec.confinement.background;
    let root_rights = match (writes, background) {
        (true, false) => Rights::READ_EXECUTE.with(Rights::WRITE),
        (true, true) => Rights::READ_EXECUTE.with(Rights::WRITE).with(Rights::IN_PLACE),
        (false, _) => Rights::READ_EXECUTE,
    };
    for root in &spec.roots {
        grant(root.clone(), root_rights);
        if background {
            for output in build_outputs_in(root) {
                grant(output, Rights::READ_EXECUTE.with(Rights::WRITE));
            }
        }
    }
    for root in &spec.read_only_roots {
        grant(root.clone(), Rights::READ_EXECUTE);
    }
    let paths: Vec<PathBuf> = wanted.iter().map(|g| g.path.clone()).collect();
    wanted
        .into_iter()
        .zip(presence.existing(&paths))
        .filter_map(|(grant, exists)| exists.then_some(grant))
        .collect()
}

/// The directories directly in `root` with a build output's name (`node_modules`, `target`, `dist`, …): not
/// links, which a grant would follow out of the root.
fn build_outputs_in(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    entries
        .filter_map(std::result::Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .filter(|entry| agent_tool_traits::is_build_output_name(&entry.file_name()))
        .map(|entry| entry.path())
        .collect()
}

/// The secrets by name the sandbox of `spec` hides below its roots: what its scan finds (within the scan's limit,
/// not inside a tagged cache), so that a decision which counts on the kernel to hide a secret can ask whether it
/// will. The spec's own secret places are hidden as well and are not listed here.
pub fn hidden_by_name(spec: &SandboxSpec, protection: &dyn Protection) -> Vec<PathBuf> {
    let all_roots: Vec<PathBuf> = spec.roots.iter().chain(&spec.read_only_roots).cloned().collect();
    let mut notes = Vec::new();
    let look = Look {
        write_protected: false,
        content: false,
        after_run: false,
    };
    let hidden = places_within(&spec.secret_places, &all_roots);
    scan(&all_roots, spec.scan_limit, protection, look, &hidden, &mut notes)
        .secrets
        .into_iter()
        .map(|(path, _)| path)
        .collect()
}

/// The places of `places` that lie within one of `roots`: the ones a scan of the roots could meet.
fn places_within(places: &[PathBuf], roots: &[PathBuf]) -> Vec<PathBuf> {
    places
        .iter()
        .filter(|place| roots.iter().any(|root| place.starts_with(root)))
        .cloned()
        .collect()
}

/// Grants `rights` on `path` except beneath every path of `excluded`: where an excluded path lies beneath
/// `path`, the grant goes to each entry of the directory instead (Landlock only grants, so what must stay out
/// is left out by granting its siblings). A split directory can still be listed, so that `ls` and `git status`
/// work in it; its excluded entries are not opened.
fn split_around(path: &Path, rights: Rights, excluded: &[PathBuf], out: &mut Vec<Grant>) {
    if excluded.iter().any(|e| path.starts_with(e)) {
        return;
    }
    let beneath: Vec<PathBuf> = excluded.iter().filter(|e| e.starts_with(path)).cloned().collect();
    if beneath.is_empty() {
        out.push(Grant {
            path: path.to_path_buf(),
            rights,
        });
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    if rights.contains(Rights::LIST) {
        out.push(Grant {
            path: path.to_path_buf(),
            rights: Rights::LIST,
        });
    }
    for entry in entries.filter_map(std::result::Result::ok) {
        split_around(&entry.path(), rights, &beneath, out);
    }
}

/// Whether a guarded toolchain file holds credentials (and is then not read either).
fn is_credential(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|name| name.to_string_lossy().starts_with("credentials") || name == "gradle.properties")
}

/// The private host keys in `/etc/ssh`.
fn ssh_host_keys() -> Vec<PathBuf> {
    std::fs::read_dir(SSH_HOST_KEYS)
        .map(|entries| {
            entries
                .filter_map(std::result::Result::ok)
                .filter(|e| {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    name.starts_with("ssh_host_") && name.ends_with("_key")
                })
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

#[path = "plan_caches.rs"]
mod caches;
#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
