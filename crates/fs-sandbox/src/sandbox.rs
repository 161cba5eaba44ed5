//! The sandbox: roots canonicalised once, paths resolved and checked against them.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use agent_tool_traits::{Decision, Layer, Provenance, Verdict};
use serde::Serialize;

use agent_tool_traits::Access;

use crate::config::{Root, RootKind, SandboxConfig};
use crate::error::{PathSandboxError, Result};
use crate::glob::{self, GlobMatches};
use crate::open::{OpenOptions, open_checked};
use crate::protected::ProtectedPaths;
use crate::resolve::{self, Failure, MAX_LINKS, Resolution};

/// The longest path the kernel accepts, terminating NUL included (`PATH_MAX`).
const PATH_MAX: usize = 4096;
/// The longest file name (`NAME_MAX`).
const NAME_MAX: usize = 255;

/// The file-system sandbox of one working directory: its roots (canonicalised once, when it is built) and its
/// protected paths. It is immutable, `Send` and `Sync`.
#[derive(Debug, Clone)]
pub struct PathSandbox {
    roots: Vec<Root>,
    missing_roots: Vec<PathBuf>,
    cwd_given: PathBuf,
    home: Option<PathBuf>,
    /// Directories as configured that canonicalise elsewhere, with their canonical form: a path written through
    /// one of them starts resolving at the canonical form, so that a configured path that goes through a link
    /// (macOS `/tmp`, a symlinked home) is neither reported as going through a link nor examined again.
    aliases: Vec<(PathBuf, PathBuf)>,
    protected: ProtectedPaths,
}

/// A path that the sandbox resolved and found inside one of its roots: absolute, without `.`, `..` or symbolic
/// links in its existing part.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CanonicalPath {
    path: PathBuf,
    root: usize,
    root_path: PathBuf,
    access: Access,
}

/// The full report on one path, for the decision and for rule matching. Produced by [`PathSandbox::check`], which
/// never fails. It serialises to JSON for explanations and logs (paths that are not UTF-8 fail to serialise).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathCheck {
    /// The path as given.
    pub input: String,
    /// The path with `~` expanded, made absolute against the working directory and normalised lexically: the
    /// path as written, for display and for rule matching only (never for containment).
    pub absolute: PathBuf,
    /// The path as the kernel would resolve it (symbolic links followed, a `..` after a link stepping up from the
    /// link's target, a missing tail resolved through its deepest existing ancestor); `None` when it cannot be
    /// resolved.
    pub resolved: Option<PathBuf>,
    /// The index into [`PathSandbox::roots`] of the root holding `resolved`.
    pub root: Option<usize>,
    /// Whether a symbolic link was followed on the way.
    pub through_symlink: bool,
    /// Why the path is protected for the access checked, when it is.
    pub protected: Option<String>,
    /// The finding of layer [`Layer::Sandbox`]: deny (unresolvable, NUL byte, too long, a loop, a magic link,
    /// outside the roots with the resolved path in the reason, a write into a read-only root), ask (a protected
    /// path, a write through a symbolic link) or allow.
    pub verdict: Verdict,
}

/// What one evaluation found, shared by [`PathSandbox::check`] and [`PathSandbox::resolve`].
struct Evaluation {
    absolute: PathBuf,
    resolved: Option<PathBuf>,
    root: Option<usize>,
    through_symlink: bool,
    protected: Option<String>,
    error: Option<PathSandboxError>,
}

impl PathSandbox {
    /// Builds the sandbox of `config.cwd`, canonicalising each root once.
    ///
    /// The working directory is root 0 (read-write). An extra root that does not exist is left out (it can hold
    /// nothing) and listed by [`PathSandbox::missing_roots`].
    ///
    /// # Errors
    /// [`PathSandboxError::Root`] when the working directory cannot be canonicalised or is not a directory, or an
    /// extra root exists but cannot be canonicalised or is not a directory.
    pub fn new(config: SandboxConfig) -> Result<Self> {
        let SandboxConfig {
            cwd,
            home,
            roots: specs,
            protected,
        } = config;
        let cwd_given = absolute_from_process(&cwd)?;
        let cwd_path = canonical_dir(&cwd_given)?;
        let mut aliases = Vec::new();
        let mut roots = vec![Root {
            path: cwd_path,
            given: cwd_given.clone(),
            kind: RootKind::Cwd,
            read_only: false,
        }];
        let mut missing_roots = Vec::new();
        for spec in specs {
            let given = resolve::normalize_lexically(&cwd_given.join(&spec.path));
            match canonical_dir(&given) {
                Ok(path) => roots.push(Root {
                    path,
                    given,
                    kind: spec.kind,
                    read_only: spec.read_only,
                }),
                Err(PathSandboxError::Root { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                    missing_roots.push(given);
                }
                Err(error) => return Err(error),
            }
        }
        for root in &roots {
            if root.given != root.path {
                aliases.push((root.given.clone(), root.path.clone()));
            }
        }
        let home = home.map(|home| resolve::normalize_lexically(&cwd_given.join(home)));
        if let Some(home) = &home {
            // A home that cannot be canonicalised is still used for `~`; it is then simply resolved like any path.
            if let Ok(canonical) = fs::canonicalize(home)
                && &canonical != home
            {
                aliases.push((home.clone(), canonical));
            }
        }
        // The longest alias first, so that the most specific one applies.
        aliases.sort_by_key(|(given, _)| std::cmp::Reverse(given.components().count()));
        Ok(Self {
            roots,
            missing_roots,
            cwd_given,
            home,
            aliases,
            protected,
        })
    }

    /// Resolves `path` for `access` and enforces containment.
    ///
    /// A protected path or a write through a symbolic link is not an error here (it is an ask, which
    /// [`PathSandbox::check`] reports); everything that [`PathSandbox::check`] denies is.
    ///
    /// # Errors
    /// The reason of the deny: [`PathSandboxError::Empty`], [`PathSandboxError::Nul`], [`PathSandboxError::TooLong`],
    /// [`PathSandboxError::NameTooLong`], [`PathSandboxError::NoHome`], [`PathSandboxError::Loop`],
    /// [`PathSandboxError::MagicLink`], [`PathSandboxError::NotADirectory`], [`PathSandboxError::Unresolvable`],
    /// [`PathSandboxError::Outside`] or [`PathSandboxError::ReadOnly`].
    pub fn resolve(&self, path: &str, access: Access) -> Result<CanonicalPath> {
        let evaluation = self.evaluate(path, access);
        if let Some(error) = evaluation.error {
            return Err(error);
        }
        match (
            evaluation.resolved,
            evaluation
                .root
                .and_then(|index| self.roots.get(index).map(|r| (index, r))),
        ) {
            (Some(resolved), Some((index, root))) => Ok(CanonicalPath {
                path: resolved,
                root: index,
                root_path: root.path.clone(),
                access,
            }),
            // Unreachable by construction (an evaluation without an error has both), but refusing is the safe
            // answer should it ever happen.
            (resolved, _) => Err(PathSandboxError::Outside {
                path: path.to_owned(),
                resolved: resolved.unwrap_or(evaluation.absolute),
            }),
        }
    }

    /// The full report on `path` for `access`. Never fails: a path that cannot be resolved is denied.
    pub fn check(&self, path: &str, access: Access) -> PathCheck {
        let evaluation = self.evaluate(path, access);
        let provenance = Provenance::layer(Layer::Sandbox);
        let verdict = match &evaluation.error {
            Some(error) => Verdict::new(Decision::Deny, error_chain(error), provenance),
            None => {
                let mut asks = Vec::new();
                if let Some(reason) = &evaluation.protected {
                    asks.push(format!("protected path: {reason}"));
                }
                if evaluation.through_symlink && access == Access::Write {
                    asks.push(format!(
                        "`{path}` is written through a symbolic link (to `{}`)",
                        evaluation
                            .resolved
                            .as_deref()
                            .unwrap_or(&evaluation.absolute)
                            .display()
                    ));
                }
                if asks.is_empty() {
                    // "`{path}` resolves to `{resolved}` inside the {kind} `{root}`" (nothing after `inside ` without
                    // a root), built in one string: every allowed path has one.
                    let resolved = evaluation.resolved.as_deref().unwrap_or(&evaluation.absolute);
                    let root = evaluation.root.and_then(|index| self.roots.get(index));
                    let mut reason = String::with_capacity(
                        path.len()
                            + resolved.as_os_str().len()
                            + root.map_or(0, |r| r.path.as_os_str().len())
                            + 48,
                    );
                    reason.push('`');
                    reason.push_str(path);
                    reason.push_str("` resolves to `");
                    push_path(&mut reason, resolved);
                    reason.push_str("` inside ");
                    if let Some(root) = root {
                        reason.push_str("the ");
                        reason.push_str(root.kind.as_str());
                        reason.push_str(" `");
                        push_path(&mut reason, &root.path);
                        reason.push('`');
                    }
                    Verdict::new(Decision::Allow, reason, provenance)
                } else {
                    Verdict {
                        decision: Decision::Ask,
                        reasons: asks,
                        provenance,
                        diagnostics: Vec::new(),
                    }
                }
            }
        };
        PathCheck {
            input: path.to_owned(),
            absolute: evaluation.absolute,
            resolved: evaluation.resolved,
            root: evaluation.root,
            through_symlink: evaluation.through_symlink,
            protected: evaluation.protected,
            verdict,
        }
    }

    /// Expands the shell glob `pattern` (`*`, `?`, `[…]` in any component, `**` at any depth) against the file
    /// system as it is now, as the shell will expand it when the command runs, with at most `limit` matches. Each
    /// match is then checked like any path, so that `cat .e*` meets the protection of `.env` and `cat docs/*` a
    /// link in `docs/` that leads outside the roots. A pattern without a glob character, or one that cannot be
    /// expanded at all (no home for `~`, a NUL byte), matches nothing here: its own [`PathSandbox::check`] reports
    /// it.
    pub fn glob(&self, pattern: &str, limit: usize) -> GlobMatches {
        if !glob::has_glob(pattern) || pattern.contains('\0') {
            return GlobMatches::default();
        }
        match self.expand(pattern) {
            Ok(expanded) => glob::expand(&expanded, &self.cwd_given, limit),
            Err(_) => GlobMatches::default(),
        }
    }

    /// The protected paths this sandbox checks.
    pub fn protected_paths(&self) -> &ProtectedPaths {
        &self.protected
    }

    /// The roots: the working directory first, then the extra roots that exist, in configuration order.
    pub fn roots(&self) -> &[Root] {
        &self.roots
    }

    /// The canonical working directory.
    pub fn cwd(&self) -> &Path {
        self.roots
            .first()
            .map_or(self.cwd_given.as_path(), |root| root.path.as_path())
    }

    /// The extra roots that did not exist when the sandbox was built (left out of [`PathSandbox::roots`]).
    pub fn missing_roots(&self) -> &[PathBuf] {
        &self.missing_roots
    }

    /// Opens `path` race-free beneath the root it was found in. The path was resolved when it was checked, so it
    /// holds no symbolic link: it is opened with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` (or the walk that refuses
    /// every link), so that a link swapped in since the check can lead neither outside the root nor elsewhere
    /// inside it (from `src/` into `.git/hooks/`, say).
    ///
    /// # Errors
    /// [`PathSandboxError::NotBeneath`] when `path` does not come from this sandbox, [`PathSandboxError::CheckedForRead`]
    /// when `options` write to a path checked for reading, [`PathSandboxError::ReadOnly`] when they write into a
    /// read-only root, [`PathSandboxError::Changed`] when a link appeared on the path, and the errors of
    /// [`open_beneath`](crate::open_beneath).
    pub fn open_beneath(&self, path: &CanonicalPath, options: &OpenOptions) -> Result<fs::File> {
        let foreign = || PathSandboxError::NotBeneath {
            path: path.path.clone(),
            root: path.root_path.clone(),
        };
        let root = self
            .roots
            .get(path.root)
            .filter(|root| root.path == path.root_path)
            .ok_or_else(foreign)?;
        if options.writes() {
            match path.access {
                Access::Read => {
                    return Err(PathSandboxError::CheckedForRead {
                        path: path.path.clone(),
                    });
                }
                Access::Write => {}
            }
            if root.read_only {
                return Err(PathSandboxError::ReadOnly {
                    path: path.path.display().to_string(),
                    resolved: path.path.clone(),
                    root: root.path.clone(),
                });
            }
        }
        let relative = path.path.strip_prefix(&root.path).map_err(|_| foreign())?;
        open_checked(&root.path, relative, options)
    }

    /// The index into [`PathSandbox::roots`] of the root that holds `path` once resolved, as
    /// [`PathSandbox::check`] reports it ([`PathCheck::root`], whatever the access), without the rest of the check
    /// (the protection, the verdict and its reasons): for a caller that only asks whether a path is inside the
    /// roots.
    pub fn root_holding(&self, path: &str) -> Option<usize> {
        let (_, resolution) = self.resolution(path);
        self.root_of(&resolution.ok()?.path)
    }

    /// `input` made absolute as written (lexically normalised) and resolved as the kernel would, or why it cannot
    /// be.
    fn resolution(&self, input: &str) -> (PathBuf, std::result::Result<Resolution, PathSandboxError>) {
        if input.contains('\0') {
            let shown = input.escape_debug().to_string();
            let absolute = resolve::normalize_lexically(&self.cwd_given.join(&shown));
            return (absolute, Err(PathSandboxError::Nul { path: shown }));
        }
        let expanded = match self.expand(input) {
            Ok(expanded) => expanded,
            Err(error) => {
                let absolute = resolve::normalize_lexically(&self.cwd_given.join(input));
                return (absolute, Err(error));
            }
        };
        let written = self.cwd_given.join(&expanded);
        let absolute = resolve::normalize_lexically(&written);
        if let Err(error) = check_lengths(input, &written) {
            return (absolute, Err(error));
        }
        let (start, rest) = self.starting_point(&expanded);
        let trailing_slash = input.ends_with('/') || input.ends_with("/.");
        let fast = if trailing_slash {
            None
        } else {
            resolve::resolve_without_links(&start, rest)
        };
        let resolution = match fast.map(|path| {
            Ok(Resolution {
                path,
                through_symlink: false,
            })
        }) {
            Some(resolution) => resolution,
            None => resolve::resolve(start, rest, trailing_slash),
        };
        (
            absolute,
            resolution.map_err(|failure| failure_error(input, failure)),
        )
    }

    fn evaluate(&self, input: &str, access: Access) -> Evaluation {
        let (absolute, resolution) = self.resolution(input);
        let mut evaluation = Evaluation {
            absolute,
            resolved: None,
            root: None,
            through_symlink: false,
            protected: None,
            error: None,
        };
        let resolution = match resolution {
            Ok(resolution) => resolution,
            Err(error) => {
                evaluation.error = Some(error);
                return evaluation;
            }
        };
        evaluation.through_symlink = resolution.through_symlink;
        let resolved = resolution.path;
        evaluation.root = self.root_of(&resolved);
        evaluation.error = match evaluation.root.and_then(|index| self.roots.get(index)) {
            None => Some(PathSandboxError::Outside {
                path: input.to_owned(),
                resolved: resolved.clone(),
            }),
            Some(root) if root.read_only && access == Access::Write => Some(PathSandboxError::ReadOnly {
                path: input.to_owned(),
                resolved: resolved.clone(),
                root: root.path.clone(),
            }),
            Some(_) => None,
        };
        // Protection is reported even for a denied path, so that the report is complete; it is checked on the
        // path as written and on the resolved path, so that neither a link nor its target slips through.
        let written_relative = self.relative_as_written(&evaluation.absolute);
        let resolved_relative = evaluation
            .root
            .and_then(|index| self.roots.get(index))
            .and_then(|root| resolve::strip_root(&resolved, &root.path));
        // Without a link between them the two are the same path, asked about once.
        let same = resolved == evaluation.absolute && resolved_relative == written_relative;
        evaluation.protected = self
            .protected
            .reason(&evaluation.absolute, written_relative, access)
            .or_else(|| {
                (!same)
                    .then(|| self.protected.reason(&resolved, resolved_relative, access))
                    .flatten()
            });
        evaluation.resolved = Some(resolved);
        evaluation
    }

    /// `input` with a leading `~` or `~/` replaced by the home directory. `~user` and names that merely start
    /// with `~` (`~notes.md`) are ordinary relative names.
    fn expand(&self, input: &str) -> Result<PathBuf> {
        let rest = if input == "~" {
            Some("")
        } else {
            input.strip_prefix("~/")
        };
        match rest {
            None if input.is_empty() => Err(PathSandboxError::Empty),
            None => Ok(PathBuf::from(input)),
            Some(rest) => match &self.home {
                Some(home) => Ok(home.join(rest)),
                None => Err(PathSandboxError::NoHome {
                    path: input.to_owned(),
                }),
            },
        }
    }

    /// Where resolution of `expanded` starts (a canonical directory) and what is left to resolve: a relative path
    /// starts at the canonical working directory; an absolute one written through a root or the home directory
    /// starts at its canonical form; anything else starts at `/`.
    fn starting_point<'a>(&self, expanded: &'a Path) -> (PathBuf, &'a Path) {
        if expanded.is_relative() {
            return (self.cwd().to_path_buf(), expanded);
        }
        let canonical_roots = self.roots.iter().map(|root| (&root.path, &root.path));
        let aliases = self.aliases.iter().map(|(given, canonical)| (given, canonical));
        let best = canonical_roots
            .chain(aliases)
            .filter_map(|(prefix, canonical)| {
                resolve::strip_root(expanded, prefix)
                    .map(|rest| (prefix.components().count(), canonical, rest))
            })
            .max_by_key(|(depth, _, _)| *depth);
        match best {
            Some((_, canonical, rest)) => (canonical.clone(), rest),
            None => (PathBuf::from("/"), expanded),
        }
    }

    /// The deepest root holding `resolved`, compared component by component (never as strings).
    fn root_of(&self, resolved: &Path) -> Option<usize> {
        self.roots
            .iter()
            .enumerate()
            .filter(|(_, root)| resolve::strip_root(resolved, &root.path).is_some())
            .max_by_key(|(_, root)| root.path.components().count())
            .map(|(index, _)| index)
    }

    /// The path as written, relative to the deepest root (as configured or canonical) it lies in lexically.
    fn relative_as_written<'a>(&self, absolute: &'a Path) -> Option<&'a Path> {
        self.roots
            .iter()
            .flat_map(|root| [&root.given, &root.path])
            .filter_map(|prefix| resolve::strip_root(absolute, prefix))
            .min_by_key(|rest| rest.components().count())
    }
}

impl CanonicalPath {
    /// The resolved absolute path.
    pub fn as_path(&self) -> &Path {
        &self.path
    }

    /// The index into [`PathSandbox::roots`] of the root holding the path.
    pub const fn root(&self) -> usize {
        self.root
    }

    /// The access the path was checked for.
    pub const fn access(&self) -> Access {
        self.access
    }

    /// The path relative to its root (empty for the root itself).
    pub fn relative(&self) -> &Path {
        self.path.strip_prefix(&self.root_path).unwrap_or(Path::new(""))
    }

    /// The resolved absolute path, owned.
    pub fn into_path_buf(self) -> PathBuf {
        self.path
    }
}

impl AsRef<Path> for CanonicalPath {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl fmt::Display for CanonicalPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.path.display().fmt(f)
    }
}

impl PathCheck {
    /// The decision of the verdict.
    pub fn decision(&self) -> Decision {
        self.verdict.decision
    }
}

/// `path` made absolute against the process's working directory (only for a relative configured working
/// directory, which a hook input never has).
fn absolute_from_process(path: &Path) -> Result<PathBuf> {
    if path.is_absolute() {
        return Ok(resolve::normalize_lexically(path));
    }
    let here = std::env::current_dir().map_err(|source| PathSandboxError::Root {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(resolve::normalize_lexically(&here.join(path)))
}

fn canonical_dir(path: &Path) -> Result<PathBuf> {
    let root_error = |source| PathSandboxError::Root {
        path: path.to_path_buf(),
        source,
    };
    let canonical = fs::canonicalize(path).map_err(root_error)?;
    let meta = fs::metadata(&canonical).map_err(root_error)?;
    if meta.is_dir() {
        Ok(canonical)
    } else {
        Err(root_error(io::Error::new(
            io::ErrorKind::NotADirectory,
            "not a directory",
        )))
    }
}

/// Rejects a path the kernel would reject as too long, as given and once `~` is expanded.
fn check_lengths(input: &str, written: &Path) -> Result<()> {
    for (shown, bytes) in [
        (input, input.len()),
        (&*written.to_string_lossy(), written.as_os_str().len()),
    ] {
        if bytes >= PATH_MAX {
            return Err(PathSandboxError::TooLong {
                path: shown.to_owned(),
                len: bytes,
                max: PATH_MAX - 1,
            });
        }
    }
    let longest = written
        .components()
        .map(|component| component.as_os_str().len())
        .max()
        .unwrap_or(0);
    if longest > NAME_MAX {
        return Err(PathSandboxError::NameTooLong {
            path: input.to_owned(),
            len: longest,
            max: NAME_MAX,
        });
    }
    Ok(())
}

fn failure_error(input: &str, failure: Failure) -> PathSandboxError {
    let path = input.to_owned();
    match failure {
        Failure::Loop => PathSandboxError::Loop { path, max: MAX_LINKS },
        Failure::MagicLink(link) => PathSandboxError::MagicLink { path, link },
        Failure::NotADirectory(component) => PathSandboxError::NotADirectory { path, component },
        Failure::Io(component, source) => PathSandboxError::Unresolvable {
            path,
            component,
            source,
        },
    }
}

/// The error and its sources on one line (`…: permission denied`), for a reason that says everything.
fn error_chain(error: &PathSandboxError) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Appends `path` to `text` as `path.display()` shows it (invalid UTF-8 replaced).
fn push_path(text: &mut String, path: &Path) {
    text.push_str(&path.as_os_str().to_string_lossy());
}
