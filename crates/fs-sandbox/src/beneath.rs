//! What a recursive read of a directory reaches: the first file below it whose read is protected, within a bound.

use std::collections::{HashSet, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

use crate::sandbox::PathSandbox;
use agent_tool_traits::Access;

/// The most directory entries one walk looks at before it gives up (and the caller asks).
const MAX_ENTRIES: usize = 50_000;

/// The ignore files ripgrep reads in a directory (and a repository's own exclude file): a negation in one of them
/// (`!.env`) makes it read the hidden files it names.
const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore", ".rgignore", ".git/info/exclude"];

/// The most bytes of one ignore file read for a negation; past them, a negation is assumed.
const MAX_IGNORE_BYTES: u64 = 1 << 20;

/// How a recursive read walks a directory.
#[derive(Debug, Clone, Copy)]
pub struct Reach<'a> {
    /// It reads hidden files and descends into hidden directories (`grep -r`, `find`). Without it (`rg`), it
    /// still reads the hidden files that an ignore file whitelists (`!.env` in a `.gitignore`, `.ignore` or
    /// `.rgignore` of the directory, one above it or one below it): below a directory whose ignore files hold a
    /// negation, the walk counts every hidden file as read.
    pub hidden: bool,
    /// It follows the symbolic links it meets (`grep -R`, `rg -L`): the walk follows them too, and a link that
    /// leads out of the roots counts as a protected read (what lies there is not the project's to search).
    pub follow_links: bool,
    /// It skips what the ignore files exclude, as ripgrep does by default: `.gitignore` and `.git/info/exclude`
    /// inside a git repository (and in the directories above the searched one), `.ignore`, `.rgignore`. A hidden
    /// file an ignore file whitelists is read even when hidden files are not.
    pub ignores: bool,
    /// It reads only files whose names match every one of these globs, compared without regard to case (`find .
    /// -name '*.rs' -exec cat {} +`); empty: any file.
    pub names: &'a [String],
}

/// What a walk found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reached {
    /// The first file below the directory whose read is protected, and why.
    pub protected: Option<(PathBuf, String)>,
    /// Why the walk did not look at every file (more entries than it looks at).
    pub incomplete: Option<String>,
}

impl PathSandbox {
    /// Walks the directory `dir` (absolute) for the first file whose read is protected: a secret file of the
    /// default list or of the settings. Symbolic links below it are followed only when the reader follows them
    /// ([`Reach::follow_links`]; `grep -r`, `rg` and `find` do not), each directory once. Never fails: what
    /// cannot be listed is skipped, and a walk past its bound says so in [`Reached::incomplete`].
    pub fn protected_beneath(&self, dir: &Path, reach: &Reach<'_>) -> Reached {
        if reach.ignores {
            return self.protected_beneath_ignoring(dir, reach);
        }
        let matchers = name_matchers(reach.names);
        // Ripgrep also reads the ignore files of every directory above the one it searches.
        let above = !reach.hidden && dir.ancestors().skip(1).any(whitelists);
        let mut queue = VecDeque::from([(dir.to_path_buf(), above)]);
        let mut seen = 0usize;
        // The directories reached through links, by their canonical paths: a loop of links ends.
        let mut visited: HashSet<PathBuf> = HashSet::new();
        while let Some((current, inherited)) = queue.pop_front() {
            // Within a batch of decisions each directory is listed once (`facts`), no further than the walk looks.
            let Some(entries) = crate::facts::list_dir(&current, MAX_ENTRIES.saturating_add(1)) else {
                continue;
            };
            let hidden = reach.hidden || inherited || listed_whitelists(&current, &entries);
            for (name, kind) in entries.iter() {
                seen += 1;
                if seen > MAX_ENTRIES {
                    return Reached {
                        protected: None,
                        incomplete: Some(format!(
                            "`{}` holds more than {MAX_ENTRIES} entries to look at",
                            dir.display()
                        )),
                    };
                }
                if !hidden && name.as_encoded_bytes().starts_with(b".") {
                    continue;
                }
                let Some(kind) = kind else { continue };
                let mut path = current.join(name);
                let mut is_dir = kind.is_dir();
                if kind.is_symlink() && reach.follow_links {
                    // A dangling link reads nothing.
                    let Ok(target) = fs::canonicalize(&path) else {
                        continue;
                    };
                    if let Some(reason) = self.leaves_roots(&path, &target) {
                        return Reached {
                            protected: Some((path, reason)),
                            incomplete: None,
                        };
                    }
                    is_dir = target.is_dir();
                    if is_dir && !visited.insert(target.clone()) {
                        continue;
                    }
                    path = target;
                } else if kind.is_symlink() {
                    continue;
                }
                if is_dir {
                    if let Some(reason) = self.protected_read(&path) {
                        return Reached {
                            protected: Some((path, reason)),
                            incomplete: None,
                        };
                    }
                    queue.push_back((path, hidden && !reach.hidden));
                    continue;
                }
                if !matchers.iter().all(|m| m.is_match(name)) {
                    continue;
                }
                if let Some(reason) = self.protected_read(&path) {
                    return Reached {
                        protected: Some((path, reason)),
                        incomplete: None,
                    };
                }
            }
        }
        Reached::default()
    }

    /// [`protected_beneath`](Self::protected_beneath) for a reader that skips what the ignore files exclude: the
    /// walk of the `ignore` crate, ripgrep's own, so that what is skipped is exactly what ripgrep skips.
    fn protected_beneath_ignoring(&self, dir: &Path, reach: &Reach<'_>) -> Reached {
        let matchers = name_matchers(reach.names);
        let mut walk = ignore::WalkBuilder::new(dir);
        walk.hidden(!reach.hidden)
            .follow_links(reach.follow_links)
            .parents(true)
            .ignore(true)
            .git_ignore(true)
            .git_exclude(true)
            // The user's global excludes only make ripgrep skip more: not reading them counts more as read.
            .git_global(false);
        for (seen, entry) in walk.build().enumerate() {
            if seen > MAX_ENTRIES {
                return Reached {
                    protected: None,
                    incomplete: Some(format!(
                        "`{}` holds more than {MAX_ENTRIES} entries to look at",
                        dir.display()
                    )),
                };
            }
            // What cannot be listed is skipped, as ripgrep skips it.
            let Ok(entry) = entry else { continue };
            let mut path = entry.path().to_path_buf();
            if entry.path_is_symlink() {
                let Ok(target) = fs::canonicalize(&path) else {
                    continue;
                };
                if let Some(reason) = self.leaves_roots(&path, &target) {
                    return Reached {
                        protected: Some((path, reason)),
                        incomplete: None,
                    };
                }
                path = target;
            }
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir()) || path.is_dir();
            let named = is_dir || matchers.iter().all(|m| m.is_match(entry.file_name()));
            if entry.depth() > 0
                && named
                && let Some(reason) = self.protected_read(&path)
            {
                return Reached {
                    protected: Some((path, reason)),
                    incomplete: None,
                };
            }
        }
        Reached::default()
    }

    /// Every file a reader that skips what the ignore files exclude (the coding agent's search tool, ripgrep)
    /// reads below `dir`: the files of the names it lists that the ignore files leave in, links not followed (the
    /// tool does not follow them), with their sizes, protected files left out; for a check of what they hold.
    /// `Err` with why when the walk could not look at every entry.
    ///
    /// # Errors
    /// Why the walk stopped: more entries than it looks at.
    pub fn searched_files(&self, dir: &Path, reach: &Reach<'_>) -> Result<Vec<(PathBuf, u64)>, String> {
        let matchers = name_matchers(reach.names);
        let mut files = Vec::new();
        for (seen, entry) in ripgrep_walk(dir, reach).enumerate() {
            if seen > MAX_ENTRIES {
                return Err(format!(
                    "`{}` holds more than {MAX_ENTRIES} entries to look at",
                    dir.display()
                ));
            }
            let Ok(entry) = entry else { continue };
            let is_file = entry.file_type().is_some_and(|t| t.is_file());
            // A protected file is the name check's to leave out or ask about.
            if is_file
                && matchers.iter().all(|m| m.is_match(entry.file_name()))
                && self.protected_read(entry.path()).is_none()
            {
                let size = entry.metadata().map_or(0, |m| m.len());
                files.push((entry.into_path(), size));
            }
        }
        Ok(files)
    }

    /// Every protected place a reader that skips what the ignore files exclude (the coding agent's search tool,
    /// ripgrep) reaches below `dir`, each as the topmost protected path on its way (`.ssh` for `.ssh/id_rsa`), so
    /// that leaving those names out leaves out everything protected; `Err` with why when the walk could not look
    /// at every entry. Links are not followed, as the tool does not follow them.
    ///
    /// # Errors
    /// Why the walk stopped: more entries than it looks at.
    pub fn protected_places_beneath(&self, dir: &Path, reach: &Reach<'_>) -> Result<Vec<PathBuf>, String> {
        let matchers = name_matchers(reach.names);
        let mut places: Vec<PathBuf> = Vec::new();
        for (seen, entry) in ripgrep_walk(dir, reach).enumerate() {
            if seen > MAX_ENTRIES {
                return Err(format!(
                    "`{}` holds more than {MAX_ENTRIES} entries to look at",
                    dir.display()
                ));
            }
            let Ok(entry) = entry else { continue };
            let path = entry.path();
            if entry.depth() == 0 || entry.path_is_symlink() || places.iter().any(|p| path.starts_with(p)) {
                continue;
            }
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let named = is_dir || matchers.iter().all(|m| m.is_match(entry.file_name()));
            if named && self.protected_read(path).is_some() {
                // The topmost protected path between `dir` and this one.
                let top = path
                    .ancestors()
                    .take_while(|a| a.starts_with(dir) && *a != dir)
                    .filter(|a| self.protected_read(a).is_some())
                    .last()
                    .unwrap_or(path);
                places.push(top.to_path_buf());
            }
        }
        Ok(places)
    }

    /// Why a link at `link` whose canonical target is `target` may not be followed by a search: it leads out of
    /// every root.
    fn leaves_roots(&self, link: &Path, target: &Path) -> Option<String> {
        let inside = self.roots().iter().any(|root| target.starts_with(&root.path));
        (!inside).then(|| {
            format!(
                "`{}` is a link out of the project, to `{}`, and the search follows links",
                link.display(),
                target.display()
            )
        })
    }

    /// Why reading `path` (absolute, below a directory the walk reached) is protected.
    fn protected_read(&self, path: &Path) -> Option<String> {
        let relative = self
            .roots()
            .iter()
            .find_map(|root| crate::resolve::strip_root(path, &root.path));
        self.protected_paths().reason(path, relative, Access::Read)
    }
}

/// The globs of a reach's names, compared without regard to case; a pattern that cannot be compiled filters
/// nothing: every file counts.
fn name_matchers(names: &[String]) -> Vec<GlobMatcher> {
    let matchers: Option<Vec<GlobMatcher>> = names
        .iter()
        .map(|name| {
            GlobBuilder::new(name)
                .case_insensitive(true)
                .literal_separator(true)
                .build()
                .ok()
                .map(|glob| glob.compile_matcher())
        })
        .collect();
    matchers.unwrap_or_default()
}

/// Whether an ignore file of `dir` holds a negation (a line starting with `!`), which whitelists what it names,
/// hidden files included. An ignore file that cannot be read whole counts as one that does.
fn whitelists(dir: &Path) -> bool {
    // Within a batch of decisions each directory's ignore files are read once (`facts`).
    crate::facts::remembered("whitelists", dir, read_whitelists)
}

/// [`whitelists`] of a directory the walk listed: where the whole listing shows none of the ignore files (nor the
/// `.git` that holds the exclude file), there is none to read, and nothing is asked; otherwise as [`whitelists`].
fn listed_whitelists(dir: &Path, entries: &[crate::facts::Entry]) -> bool {
    // A listing at its bound may have left the ignore files out.
    let whole = entries.len() <= MAX_ENTRIES;
    // Each ignore file's first name in the directory (`.git` for `.git/info/exclude`).
    let holds_one = || {
        IGNORE_FILES.iter().any(|file| {
            let first = file.split('/').next().unwrap_or(file);
            entries.iter().any(|(name, _)| name == first)
        })
    };
    if whole && !holds_one() {
        return false;
    }
    whitelists(dir)
}

/// [`whitelists`], read from the disk.
fn read_whitelists(dir: &Path) -> bool {
    IGNORE_FILES.iter().any(|name| {
        let path = dir.join(name);
        let Ok(meta) = fs::metadata(&path) else {
            return false;
        };
        if !meta.is_file() {
            return false;
        }
        if meta.len() > MAX_IGNORE_BYTES {
            return true;
        }
        fs::read(&path).map_or(true, |bytes| {
            bytes
                .split(|b| *b == b'\n')
                .any(|line| line.trim_ascii_start().starts_with(b"!"))
        })
    })
}

/// The walk of the `ignore` crate, ripgrep's own, as the coding agent's search tool reads `dir`: hidden files when
/// `reach` says so, the ignore files of `dir` and above it, no link followed, the user's global excludes left out
/// (they only make the search skip more: not reading them counts more as read).
fn ripgrep_walk(dir: &Path, reach: &Reach<'_>) -> ignore::Walk {
    let mut walk = ignore::WalkBuilder::new(dir);
    walk.hidden(!reach.hidden)
        .follow_links(false)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false);
    walk.build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SandboxConfig;

    #[test]
    fn finds_secrets_below_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("src/deep")).unwrap();
        fs::write(root.join("src/deep/lib.rs"), "x").unwrap();
        let sandbox = PathSandbox::new(SandboxConfig::new(root)).unwrap();
        let all = Reach {
            hidden: true,
            follow_links: false,
            ignores: false,
            names: &[],
        };
        assert_eq!(sandbox.protected_beneath(root, &all), Reached::default());
        fs::write(root.join("src/deep/.env"), "K=V").unwrap();
        let found = sandbox.protected_beneath(root, &all);
        assert!(found.protected.is_some_and(|(p, _)| p.ends_with(".env")));
        let visible = Reach {
            hidden: false,
            follow_links: false,
            ignores: false,
            names: &[],
        };
        assert_eq!(sandbox.protected_beneath(root, &visible), Reached::default());
        let rust = ["*.rs".to_owned()];
        let only_rust = Reach {
            hidden: true,
            follow_links: false,
            ignores: false,
            names: &rust,
        };
        assert_eq!(sandbox.protected_beneath(root, &only_rust), Reached::default());
        fs::write(root.join("src/server.pem"), "k").unwrap();
        assert!(sandbox.protected_beneath(root, &visible).protected.is_some());
    }

    #[test]
    fn a_negation_in_an_ignore_file_makes_hidden_files_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("app/src")).unwrap();
        fs::write(root.join("app/src/.env"), "K=V").unwrap();
        fs::write(root.join("app/.gitignore"), "target/\n# !not a negation\n").unwrap();
        let sandbox = PathSandbox::new(SandboxConfig::new(root)).unwrap();
        let visible = Reach {
            hidden: false,
            follow_links: false,
            ignores: false,
            names: &[],
        };
        assert_eq!(sandbox.protected_beneath(root, &visible), Reached::default());
        for (file, place) in [
            ("app/src/.ignore", "app/src"),
            ("app/.rgignore", "app"),
            (".gitignore", "app/src"),
            (".git/info/exclude", "app"),
        ] {
            let ignore = root.join(file);
            fs::create_dir_all(ignore.parent().unwrap()).unwrap();
            fs::write(&ignore, "*.log\n!.env\n").unwrap();
            let found = sandbox.protected_beneath(&root.join(place), &visible);
            assert!(
                found.protected.is_some_and(|(p, _)| p.ends_with(".env")),
                "{file} searched from {place}"
            );
            fs::remove_file(&ignore).unwrap();
        }
    }

    #[test]
    fn a_search_that_follows_links_follows_them_out_of_the_project_and_into_secrets() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("id_ed25519"), "key").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("src/a")).unwrap();
        fs::write(root.join("src/a/lib.rs"), "x").unwrap();
        let sandbox = PathSandbox::new(SandboxConfig::new(&root)).unwrap();
        let follow = |names: &'static [String]| Reach {
            hidden: true,
            follow_links: true,
            ignores: false,
            names,
        };
        // Links that stay inside, a loop among them, and a dangling one: nothing protected is reached.
        std::os::unix::fs::symlink(root.join("src"), root.join("src/a/up")).unwrap();
        std::os::unix::fs::symlink(root.join("src/a/lib.rs"), root.join("lib_link.rs")).unwrap();
        std::os::unix::fs::symlink(root.join("gone"), root.join("dangling")).unwrap();
        assert_eq!(sandbox.protected_beneath(&root, &follow(&[])), Reached::default());
        // A link to a secret inside the project, under a name that says nothing.
        fs::create_dir_all(root.join("config")).unwrap();
        fs::write(root.join("config/.env"), "K=V").unwrap();
        std::os::unix::fs::symlink(root.join("config/.env"), root.join("src/settings.txt")).unwrap();
        let visible = Reach {
            hidden: false,
            follow_links: true,
            ignores: false,
            names: &[],
        };
        let found = sandbox.protected_beneath(&root.join("src"), &visible);
        assert!(
            found.protected.is_some_and(|(p, _)| p.ends_with(".env")),
            "link into a secret"
        );
        fs::remove_file(root.join("src/settings.txt")).unwrap();
        fs::remove_file(root.join("config/.env")).unwrap();
        // A link out of the project, to a directory or a file.
        std::os::unix::fs::symlink(outside.path(), root.join("src/a/keys")).unwrap();
        let found = sandbox.protected_beneath(&root, &follow(&[]));
        let (path, why) = found.protected.unwrap();
        assert!(
            path.ends_with("src/a/keys") && why.contains("out of the project"),
            "{why}"
        );
        // Without following, the same tree is searched without leaving it.
        let all = Reach {
            hidden: true,
            follow_links: false,
            ignores: false,
            names: &[],
        };
        assert_eq!(sandbox.protected_beneath(&root, &all), Reached::default());
    }

    #[test]
    fn a_reader_that_skips_ignored_files_does_not_reach_a_secret_the_repository_ignores() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
        fs::write(root.join(".env"), "K=V").unwrap();
        let sandbox = PathSandbox::new(SandboxConfig::new(&root)).unwrap();
        let rg_hidden = Reach {
            hidden: true,
            follow_links: false,
            ignores: true,
            names: &[],
        };
        let found = sandbox.protected_beneath(&root, &rg_hidden);
        assert!(
            found.protected.is_some_and(|(p, _)| p.ends_with(".env")),
            "not ignored yet"
        );
        fs::write(root.join(".gitignore"), "/.env\ntarget/\n").unwrap();
        assert_eq!(sandbox.protected_beneath(&root, &rg_hidden), Reached::default());
        // Outside a git repository `.gitignore` means nothing to ripgrep; `.ignore` does.
        fs::remove_dir_all(root.join(".git")).unwrap();
        assert!(sandbox.protected_beneath(&root, &rg_hidden).protected.is_some());
        fs::write(root.join(".ignore"), ".env\n").unwrap();
        assert_eq!(sandbox.protected_beneath(&root, &rg_hidden), Reached::default());
        // A reader that does not skip ignored files reaches it.
        let grep_r = Reach {
            hidden: true,
            follow_links: false,
            ignores: false,
            names: &[],
        };
        assert!(sandbox.protected_beneath(&root, &grep_r).protected.is_some());
    }
}
