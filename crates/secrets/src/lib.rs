//! Credentials recognised by their content: a table of well-known formats (cloud keys, provider tokens,
//! private-key blocks, JSON web tokens, URLs with a password, `password:`/`secret =` assignments with a value that
//! is not a placeholder), a scanner that finds them in bytes, a streaming redactor for what a command prints, and
//! a cached check of a whole file up to a size bound ([`FILE_LIMIT`]; a larger file is reported as too large).
//!
//! The decision (`agent-decide`) asks before a file tool or a shell line reads a file of the roots that holds a
//! credential, whatever the file's name; `agent-guard sandbox` passes a command's stdout and stderr through
//! [`Interleaved`] (a [`Redactor`] over both, joined as their reader sees them), so that a secret read under a
//! name nobody listed still does not reach the model; before it runs, [`ContentIndex`] tells the sandbox which
//! files of the roots hold a credential, so that the command reads them with their credentials replaced; the audit log (`agent-hooks`)
//! stores a call's input through [`redact_json`] and its preview through [`redact_str`].
//!
//! **Invariant:** a finding names the kind of credential, never its value: a reason or a marker that quotes the
//! value would be the leak it guards against.
//! **Invariant:** synchronous, no async runtime; no I/O but [`scan_file`], which reads at most [`FILE_LIMIT`]
//! bytes of one regular file, a mebibyte at a time, and [`ContentIndex`], which reads the first
//! first mebibyte of the files it is asked about and reads and replaces its own file.
//!
//! ```
//! use agent_secrets::{Redactor, first};
//!
//! let line = b"token: ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7\n";
//! assert_eq!(first(line).map(|f| f.kind), Some("GitHub token"));
//! assert_eq!(first(b"password: changeme\n"), None);
//!
//! let mut redactor = Redactor::new();
//! let mut out = Vec::new();
//! redactor.push(line, &mut out);
//! redactor.finish(&mut out);
//! assert_eq!(out, b"token: [redacted: GitHub token]\n");
//! ```

mod buckets;
mod file;
mod index;
mod interleaved;
mod pem;
mod redact;
mod rules;
mod scan;
mod value;

pub use file::FILE_LIMIT;
pub use file::FileScan;
pub use file::scan_file;
pub use index::ContentIndex;
pub use index::Indexed;
pub use interleaved::Interleaved;
pub use pem::public_pem;
pub use redact::Redactor;
pub use redact::redact;
pub use redact::redact_json;
pub use redact::redact_str;
pub use scan::Finding;
pub use scan::first;
pub use scan::scan;
