//! What a search of a directory reaches: the places below it that deny rules or the secret-file list protect.

use std::path::{Path, PathBuf};

use agent_bash_guard::Concern;
use agent_fs_sandbox::{PathCheck, Reach};
use agent_os_sandbox::Protection as _;
use agent_tool_traits::{Decision, Layer};

use super::{About, Gathering};

/// The most names a narrowed search leaves out; a search that reaches more asks.
pub(super) const MAX_EXCLUDES: usize = 16;

/// The most bytes of the files a search shows the lines of that are checked for credentials (each file whole, as
/// a read's check reads it); a search over more asks.
const MAX_CONTENT_BYTES: u64 = 64 << 20;

/// Whether a glob spells `name` as it is: no wildcard, brace, comma, blank, `!` or separator.
pub(super) fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && !name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "*?[]{},!\\/".contains(c))
}

/// What a search of a directory reaches that makes it ask.
struct Reaches {
    layer: Layer,
    why: String,
    /// The first protected place, when it is a secret file by name inside a root: the kernel sandbox hides it
    /// from a shell line where its scan finds it (an empty, unreadable stand-in, or left out of its grants), and a
    /// search tool's call can be narrowed to leave it out.
    secret: Option<PathBuf>,
}

impl Gathering<'_> {
    /// A search of a directory reads everything below it (hidden files only when `reach.hidden`, only files of
    /// the names it lists when it lists some): a deny rule on reads that protects a place there which exists, or a
    /// secret file there (a protected read: `.env`, `*.pem`, …), makes the search ask, naming it, so that a
    /// narrower search can leave the place out.
    /// For a shell line (`shell`), a search whose only problem is a secret file by name is contained instead:
    /// the kernel sandbox the line runs in hides every such file below the roots (the same list the walk checks),
    /// so the search runs without it; where the sandbox does not run (off, contained allows off, no kernel
    /// support), it still asks. Content secrets (a credential under an ordinary name) are checked elsewhere.
    ///
    /// A search tool's call (`narrow`: the coding agent's Grep without a `glob` of its own) whose only problem is
    /// secret files by name is allowed narrowed instead: the names of every protected place it reaches are left
    /// out by the `glob` the caller adds ([`Decided::search_excludes`](crate::Decided::search_excludes)), when
    /// they are few and plain names.
    pub(super) fn search(
        &mut self,
        tool: &str,
        check: &PathCheck,
        reach: &Reach<'_>,
        shell: bool,
        narrow: bool,
    ) {
        // The path as written and as resolved; the second only when a link made them differ.
        let resolved = check.resolved.as_deref().filter(|r| *r != check.absolute);
        for dir in [Some(check.absolute.as_path()), resolved]
            .into_iter()
            .flatten()
            .filter(|dir| agent_fs_sandbox::is_dir(dir))
        {
            if let Some(reaches) = self.search_reaches(tool, dir, reach) {
                if narrow
                    && reaches.secret.is_some()
                    && let Some(names) = self.excludable(dir, reach)
                {
                    for name in names {
                        if !self.search_excludes.contains(&name) {
                            self.search_excludes.push(name);
                        }
                    }
                    continue;
                }
                if shell
                    && let Some(secret) = &reaches.secret
                    && self.hidden_by_kernel(secret)
                {
                    let why = format!(
                        "{}; the kernel sandbox hides secret files by name from the line",
                        reaches.why
                    );
                    let about = About {
                        concern: Concern::Contained,
                        command: None,
                    };
                    self.find_about(Decision::Ask, why, reaches.layer, about);
                } else {
                    self.find(Decision::Ask, reaches.why, reaches.layer);
                }
                return;
            }
        }
    }

    /// A search tool's call that shows the lines it finds (the coding agent's Grep in its `content` mode) runs
    /// outside the sandbox, where nothing redacts its output: every file it reads below `dir` is checked for a
    /// credential by content, as a read of that file would be. A call that reaches such files is narrowed to leave
    /// them out by name (`narrow`, the same way as secret files by name: few plain names), else it asks naming
    /// the first. A tree too large to check (more entries or bytes than the bounds) asks too.
    pub(super) fn search_content(&mut self, check: &PathCheck, reach: &Reach<'_>, narrow: bool) {
        let Some(sandbox) = self.guard.sandbox.as_ref() else {
            return;
        };
        let dir = check.resolved.as_deref().unwrap_or(&check.absolute);
        if check.root.is_none() || !agent_fs_sandbox::is_dir(dir) {
            return;
        }
        let files = match sandbox.searched_files(dir, reach) {
            Ok(files) => files,
            Err(why) => {
                let why = format!(
                    "searching `{}` cannot be checked for credentials: {why}",
                    dir.display()
                );
                self.find(Decision::Ask, why, Layer::Sandbox);
                return;
            }
        };
        let mut budget = MAX_CONTENT_BYTES;
        let mut found: Vec<(PathBuf, &'static str)> = Vec::new();
        for (file, size) in files {
            let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if self.search_excludes.iter().any(|excluded| excluded == name) {
                continue;
            }
            budget = budget.saturating_sub(size);
            let scanned = match budget {
                0 => agent_secrets::FileScan::TooLarge,
                _ => agent_secrets::scan_file(&file),
            };
            if scanned == agent_secrets::FileScan::TooLarge {
                let why = format!(
                    "searching `{}` shows the lines it finds, and its files are too large to check for credentials                      (over {} MiB); a narrower search can be checked",
                    dir.display(),
                    MAX_CONTENT_BYTES >> 20
                );
                self.find(Decision::Ask, why, Layer::Sandbox);
                return;
            }
            if let agent_secrets::FileScan::Credential(kind) = scanned {
                found.push((file, kind));
            }
        }
        let Some((first, kind)) = found.first().cloned() else {
            return;
        };
        let names: Option<Vec<String>> = found
            .iter()
            .map(|(file, _)| {
                file.file_name()?
                    .to_str()
                    .filter(|name| plain_name(name))
                    .map(str::to_owned)
            })
            .collect();
        if narrow
            && let Some(names) = names
            && self.search_excludes.len() + names.len() <= MAX_EXCLUDES
        {
            for name in names {
                if !self.search_excludes.contains(&name) {
                    self.search_excludes.push(name);
                }
            }
            return;
        }
        self.credentials.push((first.clone(), kind.to_owned()));
        let why = format!(
            "searching `{}` shows the lines it finds in `{}`, which holds a credential ({kind}); a narrower search              can leave it out",
            dir.display(),
            first.display()
        );
        self.find(Decision::Ask, why, Layer::Sandbox);
    }

    /// The names that leave every protected place below `dir` out of a search tool's reach, when each place is a
    /// secret file by name inside a root (no link out of the roots, no deny rule's place, which ask as they are),
    /// the walk saw every entry, and the names are at most [`MAX_EXCLUDES`] plain ones that a glob spells as they
    /// are (no wildcard, brace, comma, blank or `!`). A name left out is left out at every depth: stricter, never
    /// looser.
    fn excludable(&self, dir: &Path, reach: &Reach<'_>) -> Option<Vec<String>> {
        // Reached only when no place a deny rule protects is reached (those are looked for first).
        let sandbox = self.guard.sandbox.as_ref()?;
        let places = sandbox.protected_places_beneath(dir, reach).ok()?;
        let mut names: Vec<String> = Vec::new();
        for place in &places {
            if !self.secret_in_root(place) {
                return None;
            }
            let name = place.file_name()?.to_str()?.to_owned();
            if !plain_name(&name) {
                return None;
            }
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names.sort();
        (!names.is_empty() && names.len() <= MAX_EXCLUDES).then_some(names)
    }

    /// Whether `file` is a secret file by name inside a root that the kernel sandbox hides from a shell line: one
    /// its scan finds (not past the scan's limit, not inside a directory tagged as a cache, which it skips).
    fn hidden_by_kernel(&mut self, file: &Path) -> bool {
        if !self.secret_in_root(file) {
            return false;
        }
        let guard = self.guard;
        let hidden = self.kernel_hidden.get_or_insert_with(|| {
            let spec = guard.sandbox_spec(agent_tool_traits::Confinement::READ_ONLY);
            agent_os_sandbox::hidden_by_name(&spec, &guard.protection())
        });
        hidden.iter().any(|place| file.starts_with(place))
    }

    /// Whether `file` is a secret file by name inside a root (not a link, which may lead anywhere).
    fn secret_in_root(&self, file: &Path) -> bool {
        let Some(sandbox) = self.guard.sandbox.as_ref() else {
            return false;
        };
        let protection = self.guard.protection();
        !file.is_symlink()
            && sandbox
                .roots()
                .iter()
                .any(|root| file.starts_with(root.path()) && protection.secret(file, root.path()))
    }

    /// Why a search of `dir` must ask, and the layer that says so: the first protected place it reaches, or a
    /// directory too large to check.
    fn search_reaches(&self, tool: &str, dir: &Path, reach: &Reach<'_>) -> Option<Reaches> {
        let reached = |place: &str| {
            let hidden = Path::new(place).strip_prefix(dir).is_ok_and(|below| {
                below
                    .components()
                    .any(|c| c.as_os_str().as_encoded_bytes().starts_with(b"."))
            });
            (reach.hidden || !hidden) && std::fs::symlink_metadata(place).is_ok()
        };
        let denied = self
            .guard
            .policy
            .deny_rules_beneath(tool, dir)
            .into_iter()
            .find(|(_, place)| reached(place));
        if let Some((rule, place)) = denied {
            return Some(Reaches {
                layer: Layer::Rules,
                why: format!(
                    "searching `{}` reads `{place}`, which `{}` denies; a narrower search can leave it out",
                    dir.display(),
                    rule.text
                ),
                secret: None,
            });
        }
        let sandbox = self.guard.sandbox.as_ref()?;
        let reached = sandbox.protected_beneath(dir, reach);
        if let Some((file, why)) = reached.protected {
            // A link out of the roots is no secret by name.
            let secret = self.secret_in_root(&file).then(|| file.clone());
            return Some(Reaches {
                layer: Layer::Sandbox,
                why: format!(
                    "searching `{}` reads `{}`: {why}; a narrower search can leave it out",
                    dir.display(),
                    file.display()
                ),
                secret,
            });
        }
        reached.incomplete.map(|why| Reaches {
            layer: Layer::Sandbox,
            why: format!(
                "searching `{}` cannot be checked for secret files: {why}",
                dir.display()
            ),
            secret: None,
        })
    }
}
