//! The file-system sandbox of agent-guard (layer L4): which paths a tool may read or write, and opening them
//! race-free.
//!
//! A [`PathSandbox`] is built once per working directory from its roots (the working directory, the library and
//! skills directories, `additionalDirectories`; any of them may be read-only) and its [`ProtectedPaths`]. For
//! every path a tool names, [`PathSandbox::check`] returns a [`PathCheck`]: the path as written, the path as the
//! kernel would resolve it, the root holding it, whether a symbolic link was followed, why it is protected, and
//! the sandbox's verdict (deny outside the roots, ask for protected paths and writes through a symbolic link,
//! allow otherwise). [`PathSandbox::resolve`] returns the same answer as a [`CanonicalPath`] or the reason of the
//! deny, and [`PathSandbox::open_beneath`] opens a checked path so that nothing swapped in since the check can lead
//! outside its root.
//!
//! **Invariant:** containment is decided component by component on resolved paths, never on strings: `..` that
//! stays inside is fine, `a..b.txt` and `~notes.md` are ordinary names, `/proj-evil` is not inside `/proj`.
//!
//! **Invariant:** paths are resolved the way the kernel resolves them (symbolic links followed one component at a
//! time, at most 40, a `..` after a link stepping up from its target, a missing tail through its deepest existing
//! ancestor); `/proc` magic links are refused, never followed.
//!
//! **Invariant:** checking never fails and never panics: a path that cannot be resolved is denied.
//!
//! **Invariant:** files are opened beneath their root by the kernel (`openat2` with `RESOLVE_BENEATH` and
//! `RESOLVE_NO_MAGICLINKS`) or by a walk that never lets the kernel follow a link; never by the checked path
//! string alone. A checked [`CanonicalPath`] holds no link, so [`PathSandbox::open_beneath`] refuses every link
//! (`RESOLVE_NO_SYMLINKS`): a link swapped in after the check leads nowhere, inside or outside.
//!
//! **Invariant:** what the file system says is asked anew for every check, except within
//! [`with_batch_facts`]: a caller that decides a batch of calls with nothing run between them (`check --jsonl`)
//! lets each thread keep what it learned (a path's type, its resolution, a directory's entries) until the batch
//! ends.
//!
//! **Invariant:** the crate is synchronous, pulls in no async runtime and runs nothing.
//!
//! ```
//! use agent_fs_sandbox::{Access, PathSandbox, SandboxConfig};
//! use agent_tool_traits::Decision;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = std::env::temp_dir().join(format!("fs-sandbox-doc-{}", std::process::id()));
//! std::fs::create_dir_all(dir.join("src"))?;
//! let sandbox = PathSandbox::new(SandboxConfig::new(&dir))?;
//!
//! assert_eq!(sandbox.check("src/../notes..md", Access::Write).decision(), Decision::Allow);
//! assert_eq!(sandbox.check(".git/config", Access::Write).decision(), Decision::Ask);
//! let outside = sandbox.check("../../etc/passwd", Access::Read);
//! assert_eq!(outside.decision(), Decision::Deny);
//! assert!(outside.verdict.reason().contains("outside the allowed roots"));
//!
//! let path = sandbox.resolve("src/new.rs", Access::Write)?;
//! let file = sandbox.open_beneath(&path, &agent_fs_sandbox::OpenOptions::writing())?;
//! drop(file);
//! assert!(dir.join("src/new.rs").exists());
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok(())
//! # }
//! ```

mod beneath;
mod config;
mod error;
mod facts;
mod git_dirs;
mod glob;
mod named;
mod open;
mod places;
mod protected;
mod resolve;
mod sandbox;
mod secrets;

/// What a path is checked for: the one read/write type of every layer, defined with the vocabulary.
pub use agent_tool_traits::Access;
pub use beneath::Reach;
pub use beneath::Reached;
pub use config::Root;
pub use config::RootKind;
pub use config::RootSpec;
pub use config::SandboxConfig;
pub use error::PathSandboxError;
pub use error::Result;
pub use facts::EntryKind;
pub use facts::canonicalize;
pub use facts::exists_no_follow;
pub use facts::is_dir;
pub use facts::is_file;
pub use facts::link_no_follow;
pub use facts::list_dir;
pub use facts::remembered;
pub use facts::small_file;
pub use facts::with_batch_facts;
pub use git_dirs::git_directory_entry;
pub use glob::GlobMatches;
pub use open::OpenOptions;
pub use open::open_beneath;
pub use places::Places;
pub use protected::ProtectedPaths;
pub use sandbox::CanonicalPath;
pub use sandbox::PathCheck;
pub use sandbox::PathSandbox;
pub use secrets::home_secret_places;
pub use secrets::in_home_secret_place;
