//! The kernel's half of agent-guard: what an allowed shell command may do, enforced by Linux.
//!
//! The decision layers answer allow only for what they understood; this crate makes that answer true. A
//! [`Plan`] turns a [`Confinement`](agent_tool_traits::Confinement) (the profile, the network and the git writes
//! the decision assumed) and the roots into grants: the `read-only` profile reads the roots, the system
//! directories and, of the home directory, only the tool chains' installations and caches (an allow list: a file
//! under a name nobody listed stays out), and writes nothing but a private temporary directory, `/dev/null` and the
//! terminal; `workspace-write` also writes the roots and the package caches under the home directory, but a
//! repository's `.git` only for a confinement with git writes and where namespaces exist (and never what configures
//! code that runs later: its configuration, hooks, `info/`). Secrets (the home directory's credentials, the system's
//! password hashes and keys, the secret files of the roots and every place a deny rule names: the places of the
//! [`SandboxSpec`] and what [`Protection`] finds) are never granted, and the protected paths of the roots are never
//! written. [`Prepared`] then sets the command's process up between fork and exec: a pids cgroup and rlimits,
//! namespaces where the kernel allows them (a private `/proc`, `/tmp` and process table; secrets hidden behind
//! empty mounts; protected paths mounted read-only; every process ends with the command), no capabilities,
//! Landlock for files (and TCP), seccomp for sockets and the calls that reach past Landlock, and an environment
//! by allow list without credentials ([`EnvPolicy`]), with git's identity in a generated `GIT_CONFIG_GLOBAL`. A
//! command allowed the network gets no route out: only a loopback where a proxy run by the starting process
//! forwards to the domains of a [`DomainPolicy`] (the package registries and `agentGuard.network`), checking the
//! TLS server name of each tunnel and resolving names itself.
//!
//! **Invariant:** a plan never grants a secret it knows of, for reading or writing; what the kernel cannot
//! enforce is an error ([`KernelSandboxError::Unsupported`]), never a command run unconfined.
//! **Invariant:** the code between fork and exec makes only system calls on data prepared before the fork.
//! **Invariant:** synchronous, no async runtime; Linux only (elsewhere the probe reports no support).
//!
//! ```no_run
//! use agent_os_sandbox::{EnvPolicy, KernelSupport, Plan, Protection, SandboxSpec};
//! use agent_tool_traits::Confinement;
//! use std::path::Path;
//!
//! struct DotEnv;
//! impl Protection for DotEnv {
//!     fn secret(&self, path: &Path, _root: &Path) -> bool {
//!         path.file_name().is_some_and(|name| name == ".env")
//!     }
//!     fn write_protected(&self, path: &Path, _root: &Path) -> bool {
//!         path.file_name().is_some_and(|name| name == ".git")
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let support = KernelSupport::probe();
//! let spec = SandboxSpec::new(Confinement::READ_ONLY, vec![std::env::current_dir()?]);
//! let plan = Plan::build(&spec, &DotEnv, &support)?;
//! let argv = ["cat".into(), ".env".into()];
//! let (status, _) = agent_os_sandbox::run(&plan, &support, &EnvPolicy::default(), &DotEnv, &argv)?;
//! assert_ne!(status, 0); // the secret cannot be opened
//! # Ok(())
//! # }
//! ```

mod cgroup;
#[cfg(target_os = "linux")]
mod child;
#[cfg(target_os = "linux")]
mod disk;
mod domains;
mod env;
mod error;
mod gitconfig;
mod gitdir;
mod home;
#[cfg(target_os = "linux")]
mod launch;
mod plan;
mod presence;
mod probe;
#[cfg(target_os = "linux")]
mod proxy;
#[cfg(target_os = "linux")]
mod ruleset;
mod scan;
mod scratch;
#[cfg(target_os = "linux")]
mod seccomp;
#[cfg(target_os = "linux")]
mod supervise;

pub use cgroup::PidsCgroup;
pub use cgroup::refused_forks;
pub use domains::DomainLimit;
pub use domains::DomainPattern;
pub use domains::DomainPatternError;
pub use domains::DomainPolicy;
pub use domains::DomainVerdict;
pub use domains::LoopbackGrant;
pub use domains::PortRange;
pub use env::EnvPolicy;
pub use error::KernelSandboxError;
pub use error::Result;
#[cfg(target_os = "linux")]
pub use launch::Launch;
#[cfg(target_os = "linux")]
pub use launch::Prepared;
#[cfg(target_os = "linux")]
pub use launch::ProcessLimits;
pub use plan::CacheOverlay;
pub use plan::ContentView;
pub use plan::Grant;
pub use plan::Isolation;
pub use plan::Mask;
pub use plan::Plan;
pub use plan::Protection;
pub use plan::ReadOnlyBind;
pub use plan::Rights;
pub use plan::SandboxSpec;
pub use plan::hidden_by_name;
pub use probe::KernelSupport;
pub use probe::Namespaces;
#[cfg(target_os = "linux")]
pub use scratch::{SandboxedService, running_redirects, sandboxed_run_may_have_made, sandboxed_service};
#[cfg(target_os = "linux")]
pub use supervise::OutputFilter;
#[cfg(target_os = "linux")]
pub use supervise::run;
#[cfg(target_os = "linux")]
pub use supervise::{Around, run_filtered, run_filtered_gated};
