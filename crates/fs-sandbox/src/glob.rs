//! Shell globs expanded against the file system, so that every file a pattern names is checked, not the pattern.
//!
//! Hand-written over `globset` rather than a glob-walking crate: the walk must follow the shell's rules (one path
//! component at a time, names starting with `.` only for a pattern that starts with `.`, `.` and `..` matched by such
//! a pattern, a literal component appended unchecked) and stop within a budget, since it runs on every decision.

use std::fs;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

/// Directories read at most for one pattern: `**` under a large tree stops here.
const MAX_DIRECTORIES: usize = 1024;

/// What a shell glob names on the file system now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GlobMatches {
    /// Each existing path the pattern matches, absolute (`~` expanded, a relative pattern joined to the working
    /// directory as configured), in the order the walk found them.
    pub paths: Vec<String>,
    /// Why the matches are not all there: the limit was reached, a directory tree was too large, a name is not
    /// UTF-8, or a component is not a pattern the shell would expand the same way. `None` when complete.
    pub incomplete: Option<String>,
}

/// Whether `text` holds a character the shell treats as a glob (`*`, `?`, `[`).
pub(crate) fn has_glob(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// Expands `expanded` (a path with `~` already replaced) relative to `cwd`, at most `limit` matches.
pub(crate) fn expand(expanded: &Path, cwd: &Path, limit: usize) -> GlobMatches {
    let mut walk = Walk {
        limit,
        directories: 0,
        incomplete: None,
    };
    let start = if expanded.is_absolute() {
        PathBuf::from("/")
    } else {
        cwd.to_path_buf()
    };
    let mut current = vec![start];
    let mut globbed = false;
    for component in expanded.iter().filter(|c| *c != "/") {
        let Some(text) = component.to_str() else {
            walk.give_up("a path component is not UTF-8".to_owned());
            break;
        };
        if !has_glob(text) {
            for path in &mut current {
                path.push(component);
            }
            continue;
        }
        globbed = true;
        current = if text == "**" {
            walk.all_below(&current)
        } else {
            match component_matcher(text) {
                Ok(matcher) => walk.matching(&current, text, &matcher),
                Err(why) => {
                    walk.give_up(why);
                    Vec::new()
                }
            }
        };
        if current.is_empty() {
            break;
        }
    }
    let mut matches = GlobMatches {
        paths: Vec::new(),
        incomplete: walk.incomplete,
    };
    if !globbed {
        return matches;
    }
    // The shell passes only names that exist (a literal component after a glob may name nothing).
    for path in current
        .into_iter()
        .filter(|path| fs::symlink_metadata(path).is_ok())
    {
        match path.into_os_string().into_string() {
            Ok(path) => matches.paths.push(path),
            Err(_) => {
                matches
                    .incomplete
                    .get_or_insert_with(|| "a matching name is not UTF-8".to_owned());
            }
        }
    }
    matches
}

/// The matcher of one component, matching names as the shell does (a `/` cannot occur in a name anyway).
fn component_matcher(text: &str) -> Result<GlobMatcher, String> {
    GlobBuilder::new(text)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|glob| glob.compile_matcher())
        .map_err(|error| format!("`{text}` is not a glob this check can expand ({error})"))
}

struct Walk {
    limit: usize,
    directories: usize,
    incomplete: Option<String>,
}

impl Walk {
    fn give_up(&mut self, why: String) {
        self.incomplete.get_or_insert(why);
    }

    /// Whether another path may be added; past the limit the walk is incomplete.
    fn room(&mut self, found: usize) -> bool {
        if found < self.limit {
            return true;
        }
        self.give_up(format!("more than {} paths match", self.limit));
        false
    }

    /// The entries of `dir`, or `None` when it cannot be listed (not a directory, no permission: the shell then
    /// matches nothing there either) or the directory budget is spent.
    fn list(&mut self, dir: &Path) -> Option<fs::ReadDir> {
        if self.directories >= MAX_DIRECTORIES {
            self.give_up(format!("more than {MAX_DIRECTORIES} directories to search"));
            return None;
        }
        self.directories += 1;
        fs::read_dir(dir).ok()
    }

    /// The entries of each directory in `dirs` whose name `matcher` matches. A name starting with `.` matches only
    /// a pattern starting with `.`, which also matches `.` and `..` (as bash does without `globskipdots`).
    fn matching(&mut self, dirs: &[PathBuf], text: &str, matcher: &GlobMatcher) -> Vec<PathBuf> {
        let explicit_dot = text.starts_with('.') || text.starts_with("\\.");
        let mut found = Vec::new();
        for dir in dirs {
            if explicit_dot {
                for special in [".", ".."] {
                    if matcher.is_match(special) && self.room(found.len()) {
                        found.push(dir.join(special));
                    }
                }
            }
            let Some(entries) = self.list(dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(name) = name.to_str() else {
                    self.give_up("a name in a searched directory is not UTF-8".to_owned());
                    continue;
                };
                if name.starts_with('.') && !explicit_dot {
                    continue;
                }
                if matcher.is_match(name) {
                    if !self.room(found.len()) {
                        return found;
                    }
                    found.push(entry.path());
                }
            }
        }
        found
    }

    /// `**`: each directory and everything below it, as with `globstar` (stricter than the default, where it is
    /// `*`). Links to directories are not descended into, as bash does; names starting with `.` are skipped.
    fn all_below(&mut self, dirs: &[PathBuf]) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut pending: Vec<PathBuf> = dirs.to_vec();
        while let Some(dir) = pending.pop() {
            let Some(entries) = self.list(&dir) else {
                continue;
            };
            if !self.room(found.len()) {
                return found;
            }
            found.push(dir);
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(name) = name.to_str() else {
                    self.give_up("a name in a searched directory is not UTF-8".to_owned());
                    continue;
                };
                if name.starts_with('.') {
                    continue;
                }
                let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
                if is_dir {
                    pending.push(entry.path());
                } else {
                    if !self.room(found.len()) {
                        return found;
                    }
                    found.push(entry.path());
                }
            }
        }
        found
    }
}
