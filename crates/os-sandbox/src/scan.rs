//! The scans of the roots: before a command, for the secrets to hide and the protected paths to keep read-only;
//! after a writing command, for the protected paths it created, which are taken back.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use agent_tool_traits::{CACHE_TAG, is_build_output_name};

use crate::plan::{ContentView, Protection};

/// The entries of `dir` whose names start with `prefix`.
pub(crate) fn prefixed(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(std::result::Result::ok)
                .filter(|e| e.file_name().as_encoded_bytes().starts_with(prefix.as_bytes()))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// How many times the first scan's limit the scan after a writing command looks at (a million entries by default,
/// about a second): it does not skip tagged caches (the command may have tagged one itself to hide a protected path
/// in it), and a command that makes more entries than that to hide one past them is told of on stderr.
const AFTER_SCAN_FACTOR: usize = 50;

fn identity(metadata: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt as _;
    (metadata.dev(), metadata.ino())
}

/// Whether `path` is an object store of the root's own repository: `objects` beside a `HEAD` inside `<root>/.git`
/// (its own, or a submodule's under `modules/`): compressed objects, which a view could not show and which git must
/// read as they are. The root's `.git` is read-only to a command (git's own writes aside, which cannot move a file of
/// the work tree into it), so no command can put a file where this passes by; a `.git` elsewhere may be one a
/// command made and kept out of reach of the scan after it, and is looked into.
fn git_objects(path: &Path, root: &Path) -> bool {
    path.file_name().is_some_and(|name| name == "objects")
        && path.starts_with(root.join(".git"))
        && path.parent().is_some_and(|git| git.join("HEAD").is_file())
}

/// How long a directory's path may be for the scan to look into it: a name more (255 bytes) and the path of an
/// entry in it still fits `PATH_MAX`. A directory deeper than that (a command can make one, moving directories by
/// their descriptors) is hidden whole instead.
const DEEPEST: usize = 4095 - 256;

/// What the scan of the roots found.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub(crate) secrets: Vec<(PathBuf, bool)>,
    pub(crate) write_protected: Vec<PathBuf>,
    /// The files that hold a credential by their content, each with the view a command reads in its place.
    pub(crate) views: Vec<(PathBuf, Vec<u8>)>,
    /// The device and inode of each file or directory of `secrets` and `views` as the scan before a run saw it,
    /// so that its mask lands on that one and no other put at its path since.
    pub(crate) identities: std::collections::HashMap<PathBuf, (u64, u64)>,
}

/// What a scan looks for besides the secrets by name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Look {
    /// The protected paths, for a writing profile.
    pub(crate) write_protected: bool,
    /// Whether each regular file is asked about its content ([`Protection::content`]), protected directories
    /// looked into too: before a run, for the sandbox; never for a decision.
    pub(crate) content: bool,
    /// Whether the scan is the one after a run ([`Watch::created`]): the paths a command may have made are asked
    /// about with [`Protection::protects_new`]; no directory is passed by as a secret (the scan lists no secrets
    /// then), nor as a tagged cache with a build output's name (a command may have tagged one itself); a directory
    /// it cannot read is opened up and one it cannot list is told of.
    pub(crate) after_run: bool,
}

/// What a writing command is checked for when it ends: the protected paths of the writable roots (and the tools'
/// configuration in the caches) that exist then and did not before. Mounts keep out what existed; a name that did
/// not (a new `.claude/` beside a project's files, `~/.cargo/config` where only `config.toml` was) can only be
/// taken back.
#[derive(Debug, Clone, Default)]
pub(crate) struct Watch {
    pub(crate) roots: Vec<PathBuf>,
    pub(crate) candidates: Vec<PathBuf>,
    /// Directories and the start of the names in them that are protected.
    pub(crate) prefixes: Vec<(PathBuf, &'static str)>,
    /// The protected paths that existed, each with its device and inode then, sorted by path.
    pub(crate) before: Vec<(PathBuf, Option<(u64, u64)>)>,
    pub(crate) limit: usize,
}

impl Watch {
    /// The protected paths that exist now and did not when the plan was made, and whose name was made at or after
    /// `since`: created then, or given to an older file or directory then (a rename or a hard link changes the
    /// inode's status-change time, which no program can set back). A path the first scan did not reach, past its
    /// limit, is older and stays.
    /// `notes` gets why the scan did not look at every entry.
    pub(crate) fn created(
        &self,
        protection: &dyn Protection,
        since: std::time::SystemTime,
        notes: &mut Vec<String>,
    ) -> Vec<PathBuf> {
        if self.roots.is_empty() && self.candidates.is_empty() {
            return Vec::new();
        }
        // A command can tag a directory as a cache itself: after it, every directory is looked into, further.
        let limit = self.limit.saturating_mul(AFTER_SCAN_FACTOR);
        let look = Look {
            write_protected: true,
            content: false,
            after_run: true,
        };
        let now = scan(&self.roots, limit, protection, look, &[], notes).write_protected;
        // Looked up now that every process of the command has ended, each directory read once (crate::presence).
        let candidates = self
            .candidates
            .iter()
            .zip(crate::presence::existing(&self.candidates))
            .filter(|&(_, exists)| exists)
            .map(|(path, _)| path.clone());
        // A protected path that existed is looked at again whatever the scan now says of its name: another file
        // in its place (its directory moved away and another put there) is new even where a new file of that name
        // would not be protected (a key file a command makes itself is its own, one in place of the user's is not),
        // and whatever its times say (a file made by an earlier run and moved in with its directory keeps them).
        let replaced: Vec<PathBuf> = self
            .before
            .iter()
            .filter(|(path, was)| inode(path).is_some_and(|now| Some(now) != *was))
            .map(|(path, _)| path.clone())
            .collect();
        let mut created: Vec<PathBuf> = now
            .into_iter()
            .chain(candidates)
            .chain(
                self.prefixes
                    .iter()
                    .flat_map(|(dir, prefix)| prefixed(dir, prefix)),
            )
            // A path that existed stays unless another file now has its name (its directory moved away and a new
            // one made in its place).
            .filter(|path| {
                self.before
                    .binary_search_by(|(known, _)| known.cmp(path))
                    .map_or(true, |at| {
                        self.before.get(at).is_some_and(|(_, was)| inode(path) != *was)
                    })
            })
            .filter(|path| std::fs::symlink_metadata(path).is_ok_and(|meta| named_since(&meta, since)))
            .chain(replaced)
            .collect();
        created.sort();
        created.dedup();
        created
    }
}

/// The time as the kernel stamps files now: its coarse real-time clock, which lags the fine clock by up to a tick.
/// A run's start taken from the fine clock would be later than the stamps of what the command creates at once
/// (`mkdir .claude` as its first act), and those would pass for older than the run.
pub(crate) fn file_clock_now() -> std::time::SystemTime {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_REALTIME_COARSE)
        .ok()
        .and_then(|t| {
            let secs = u64::try_from(t.tv_sec()).ok()?;
            let nanos = u32::try_from(t.tv_nsec()).ok()?;
            Some(std::time::UNIX_EPOCH + std::time::Duration::new(secs, nanos))
        })
        // Without the coarse clock, a margin of a second covers any tick.
        .unwrap_or_else(|| {
            let now = std::time::SystemTime::now();
            now.checked_sub(std::time::Duration::from_secs(1)).unwrap_or(now)
        })
}

/// The device and inode of `path` itself (a link is not followed), when it exists.
pub(crate) fn inode(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|meta| (meta.dev(), meta.ino()))
}

/// Whether the entry `meta` describes got its current name at or after `since`: it was born then, or its status
/// changed then (a rename or a new hard link to an older inode; a write or `chmod` too, which only makes the check
/// stricter for a path that did not exist before).
pub(crate) fn named_since(meta: &std::fs::Metadata, since: std::time::SystemTime) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let changed = u64::try_from(meta.ctime()).ok().map(|secs| {
        std::time::UNIX_EPOCH + std::time::Duration::new(secs, u32::try_from(meta.ctime_nsec()).unwrap_or(0))
    });
    let born = meta.created().ok();
    [changed, born].into_iter().flatten().any(|t| t >= since)
}

/// Gives the owner back read, write and search rights on `dir` when the owner is this process's user: a command
/// can take them away (`chmod 100 .`, `chmod 000 sub`) to hide what it created from the scan after it, or to keep
/// it from being removed. Only an after-run scan calls it; the rights stay given back.
pub(crate) fn open_up(dir: &Path) -> bool {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return false;
    };
    if !meta.is_dir() || meta.uid() != nix::unistd::geteuid().as_raw() {
        return false;
    }
    let mode = meta.permissions().mode() & 0o7777;
    mode & 0o700 == 0o700
        || std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode | 0o700)).is_ok()
}

/// Scans `roots` breadth-first for secrets, (as `look` says) protected paths and files holding a credential,
/// within `limit` entries below each root's own entries, which are all looked at, passing by the places of
/// `hidden`. A protected or secret entry is
/// not descended into; neither is a tagged cache directory.
pub(crate) fn scan(
    roots: &[PathBuf],
    limit: usize,
    protection: &dyn Protection,
    look: Look,
    hidden: &[PathBuf],
    notes: &mut Vec<String>,
) -> Found {
    let mut found = Found::default();
    let mut seen = 0usize;
    for root in roots {
        // Each directory with whether it lies in a protected one: before a run it is looked into for secrets and
        // for files holding a credential (it is readable, only not writable), but what lies in it is protected
        // with it and not listed again.
        let mut queue: VecDeque<(PathBuf, bool)> = VecDeque::from([(root.clone(), false)]);
        while let Some((dir, in_protected)) = queue.pop_front() {
            let mut listed = std::fs::read_dir(&dir);
            // A directory made unreadable (by a command before this one, or one running beside it) is opened: its
            // owner could open it again from inside. Not for a decision's scan, which changes nothing.
            if (look.content || look.after_run)
                && listed
                    .as_ref()
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
                && open_up(&dir)
            {
                listed = std::fs::read_dir(&dir);
            }
            let entries = match listed {
                Ok(entries) => entries,
                Err(error) => {
                    // After a run, a directory the command made that cannot be listed (a path past `PATH_MAX`)
                    // may hold a protected path it made: said, as past the scan's limit.
                    if look.after_run && error.kind() != std::io::ErrorKind::NotFound {
                        notes.push(format!(
                            "the scan could not look into `{}` ({error})",
                            dir.display()
                        ));
                    }
                    continue;
                }
            };
            // A root's own entries are all looked at, however many: the places that matter most (`.git`, `.claude`,
            // `.agent-guard`, `.env`) sit there, and a command must not hide them behind entries of its own.
            let top = dir == *root;
            for entry in entries.filter_map(std::result::Result::ok) {
                seen += 1;
                if seen > limit && !top {
                    notes.push(format!(
                        "the scan for secrets and protected paths stopped after {limit} entries; what lies deeper \
                         than `{}` is granted as the roots are",
                        dir.display()
                    ));
                    return found;
                }
                let path = entry.path();
                // A place the plan hides whole anyway (an undo store, the caches' layers) is not looked into.
                if hidden.contains(&path) {
                    continue;
                }
                let file_type = entry.file_type().ok();
                let is_dir = file_type.is_some_and(|t| t.is_dir());
                let secret = !look.after_run && protection.secret(&path, root);
                let protected = !in_protected
                    && if look.after_run {
                        protection.protects_new(&path, root)
                    } else {
                        protection.write_protected(&path, root)
                    };
                if secret {
                    found.secrets.push((path.clone(), is_dir));
                    if look.content
                        && file_type.is_some_and(|t| t.is_file() || t.is_dir())
                        && let Ok(metadata) = entry.metadata()
                    {
                        found.identities.insert(path.clone(), identity(&metadata));
                    }
                } else if look.content
                    && file_type.is_some_and(|t| t.is_file())
                    && let Ok(metadata) = entry.metadata()
                {
                    match protection.content(&path, &metadata) {
                        ContentView::AsItIs => {}
                        ContentView::Redacted(view) => {
                            found.views.push((path.clone(), view));
                            found.identities.insert(path.clone(), identity(&metadata));
                        }
                        ContentView::Hidden => {
                            found.secrets.push((path.clone(), false));
                            found.identities.insert(path.clone(), identity(&metadata));
                        }
                    }
                }
                if protected && look.write_protected {
                    found.write_protected.push(path.clone());
                }
                if !is_dir || secret || (protected && !look.content) || git_objects(&path, root) {
                    continue;
                }
                if look.content && path.as_os_str().len() > DEEPEST {
                    notes.push(format!(
                        "`{}` is hidden whole: the paths in it are too long to be looked at",
                        path.display()
                    ));
                    found.secrets.push((path, true));
                    continue;
                }
                // A tag is a file any command may write: only a directory that also has a build output's name is
                // skipped, a name no command can give a directory that holds a project's files.
                let tagged_cache = !look.after_run
                    && path.file_name().is_some_and(is_build_output_name)
                    && path.join(CACHE_TAG).exists();
                if !tagged_cache {
                    queue.push_back((path, in_protected || protected));
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod file_clock_tests {
    use super::*;

    /// A file made right after the start is never older than it: the start is read from the clock the kernel
    /// stamps files with.
    #[test]
    fn what_is_made_after_the_start_is_named_since_it() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..2000 {
            let since = file_clock_now();
            let path = dir.path().join(format!("d{i}"));
            std::fs::create_dir(&path).unwrap();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            assert!(
                named_since(&meta, since),
                "attempt {i}: made after the start but stamped before it"
            );
        }
    }

    /// Names `.claude` anywhere as write-protected.
    struct Claude;
    impl Protection for Claude {
        fn secret(&self, _path: &Path, _root: &Path) -> bool {
            false
        }
        fn write_protected(&self, path: &Path, _root: &Path) -> bool {
            path.file_name().is_some_and(|name| name == ".claude")
        }
    }

    #[test]
    fn a_protected_path_past_the_scan_after_the_run_is_told_of() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let since = file_clock_now();
        // More entries beside `z` than the scan after a run looks at (its factor times the limit of 1): the scan,
        // breadth first, stops before it lists `z`.
        for i in 0..AFTER_SCAN_FACTOR * 2 {
            std::fs::write(root.join(format!("f{i}")), "").unwrap();
        }
        std::fs::create_dir_all(root.join("z/.claude")).unwrap();
        let mut watch = Watch {
            roots: vec![root.clone()],
            limit: 1,
            ..Watch::default()
        };
        let mut notes = Vec::new();
        let created = watch.created(&Claude, since, &mut notes);
        assert!(created.is_empty(), "{created:?}");
        assert!(notes.iter().any(|n| n.contains("stopped after")), "{notes:?}");
        // Within the bound, the same path is found and nothing is told.
        watch.limit = 100;
        notes.clear();
        let created = watch.created(&Claude, since, &mut notes);
        assert_eq!(created, [root.join("z/.claude")]);
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn a_protected_file_put_back_under_its_old_name_by_moving_its_directory_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let old = root.join("sub/.claude");
        std::fs::create_dir_all(&old).unwrap();
        std::fs::write(old.join("settings.json"), "{}").unwrap();
        let watch = Watch {
            roots: vec![root.clone()],
            before: vec![(old.clone(), inode(&old))],
            limit: 100,
            ..Watch::default()
        };
        let since = file_clock_now();
        let mut notes = Vec::new();
        // Nothing changed: the old path stays.
        assert!(watch.created(&Claude, since, &mut notes).is_empty());
        // The directory above it moved away, and a new `.claude` made under the old name.
        std::fs::rename(root.join("sub"), root.join("sub2")).unwrap();
        std::fs::create_dir_all(&old).unwrap();
        std::fs::write(old.join("settings.json"), r#"{"hooks": {}}"#).unwrap();
        let created = watch.created(&Claude, since, &mut notes);
        assert!(created.contains(&old), "{created:?}");
    }
}
