//! Shell globs expanded against the file system, so that every file a pattern names is checked, not the pattern.
//!
//! Hand-written rather than a glob crate: the walk must follow the shell's rules (one path component at a time,
//! names starting with `.` only for a pattern that starts with `.`, `.` and `..` matched by such a pattern, a literal
//! component appended unchecked) and stop within a budget, and a component must match as bash's `fnmatch` does
//! (`[!…]` and `[^…]`, a leading `]` in a bracket) or more, never less. Glob crates differ from bash on some of
//! these, compile a regular expression per pattern (tens of microseconds, on every decision), or both.

use std::fs;
use std::path::{Path, PathBuf};

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
    // Names read from a directory exist; a literal component appended after a glob may name nothing.
    let mut literal_after_glob = false;
    for component in expanded.iter().filter(|c| *c != "/") {
        let Some(text) = component.to_str() else {
            walk.give_up("a path component is not UTF-8".to_owned());
            break;
        };
        if !has_glob(text) {
            for path in &mut current {
                path.push(component);
            }
            literal_after_glob = globbed;
            continue;
        }
        globbed = true;
        current = if text == "**" {
            walk.all_below(&current)
        } else {
            walk.matching(&current, text, &Component::parse(text))
        };
        literal_after_glob = false;
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
    // The shell passes only names that exist.
    for path in current
        .into_iter()
        .filter(|path| !literal_after_glob || fs::symlink_metadata(path).is_ok())
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

/// One element of a parsed component pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Char(char),
    /// `?`: any one character.
    One,
    /// `*`: any run of characters.
    Any,
    /// `[…]`: one character in (or, negated, not in) the set.
    Set {
        negated: bool,
        items: Vec<SetItem>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum SetItem {
    Char(char),
    Range(char, char),
    /// `[:alpha:]`, `[=a=]`, `[.a.]`: taken as any character, which can only make the match larger.
    Class,
}

/// A component pattern, parsed once per expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Component {
    Tokens(Vec<Token>),
    /// A pattern with extended-glob operators (`@(…)`, `!(…)`, …), which bash may expand when `extglob` is on:
    /// taken as matching every name.
    Everything,
}

impl Component {
    fn parse(text: &str) -> Self {
        let chars: Vec<char> = text.chars().collect();
        let extglob = chars
            .windows(2)
            .any(|w| matches!(w, ['?' | '*' | '+' | '@' | '!', '(']));
        if extglob {
            return Self::Everything;
        }
        let mut tokens = Vec::new();
        let mut i = 0;
        while let Some(&c) = chars.get(i) {
            i += 1;
            match c {
                '\\' => {
                    tokens.push(Token::Char(chars.get(i).copied().unwrap_or('\\')));
                    i += 1;
                }
                '?' => tokens.push(Token::One),
                '*' => {
                    if tokens.last() != Some(&Token::Any) {
                        tokens.push(Token::Any);
                    }
                }
                '[' => match parse_set(&chars, i) {
                    Some((set, next)) => {
                        tokens.push(set);
                        i = next;
                    }
                    None => tokens.push(Token::Char('[')),
                },
                c => tokens.push(Token::Char(c)),
            }
        }
        Self::Tokens(tokens)
    }

    fn matches(&self, name: &str) -> bool {
        match self {
            Self::Everything => true,
            Self::Tokens(tokens) => {
                let name: Vec<char> = name.chars().collect();
                matches_from(tokens, &name)
            }
        }
    }
}

/// The bracket expression starting after the `[` at `start`, and the index after its `]`; `None` when it is not
/// closed (the `[` is then an ordinary character).
fn parse_set(chars: &[char], start: usize) -> Option<(Token, usize)> {
    let mut i = start;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut items = Vec::new();
    let mut first = true;
    loop {
        let c = *chars.get(i)?;
        if c == ']' && !first {
            return Some((Token::Set { negated, items }, i + 1));
        }
        first = false;
        if c == '[' && matches!(chars.get(i + 1), Some(':' | '=' | '.')) {
            let kind = chars.get(i + 1).copied()?;
            let close = (i + 2..chars.len().saturating_sub(1))
                .find(|&j| chars.get(j) == Some(&kind) && chars.get(j + 1) == Some(&']'))?;
            items.push(SetItem::Class);
            i = close + 2;
            continue;
        }
        let low = if c == '\\' {
            i += 1;
            *chars.get(i)?
        } else {
            c
        };
        i += 1;
        if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|&h| h != ']') {
            let high = *chars.get(i + 1)?;
            items.push(SetItem::Range(low, high));
            i += 2;
        } else {
            items.push(SetItem::Char(low));
        }
    }
}

/// Whether `tokens` match all of `name`: the usual match with a single backtracking point for the last `*`.
fn matches_from(tokens: &[Token], name: &[char]) -> bool {
    let (mut t, mut n) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        let c = name.get(n).copied().unwrap_or_default();
        match tokens.get(t) {
            Some(Token::Any) => {
                star = Some((t, n));
                t += 1;
                continue;
            }
            Some(token) if one_matches(token, c) => {
                t += 1;
                n += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((star_t, star_n)) => {
                t = star_t + 1;
                n = star_n + 1;
                star = Some((star_t, star_n + 1));
            }
            None => return false,
        }
    }
    tokens
        .get(t..)
        .is_some_and(|rest| rest.iter().all(|token| *token == Token::Any))
}

fn one_matches(token: &Token, c: char) -> bool {
    match token {
        Token::Char(expected) => *expected == c,
        Token::One => true,
        Token::Any => false,
        Token::Set { negated, items } => {
            let inside = items.iter().any(|item| match item {
                SetItem::Char(x) => *x == c,
                SetItem::Range(low, high) => (*low..=*high).contains(&c),
                SetItem::Class => true,
            });
            inside != *negated || items.contains(&SetItem::Class)
        }
    }
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
    fn matching(&mut self, dirs: &[PathBuf], text: &str, matcher: &Component) -> Vec<PathBuf> {
        let explicit_dot = text.starts_with('.') || text.starts_with("\\.");
        let mut found = Vec::new();
        for dir in dirs {
            // A directory that cannot be listed (missing, not a directory) matches nothing, `.` and `..` included.
            let Some(entries) = self.list(dir) else {
                continue;
            };
            if explicit_dot {
                for special in [".", ".."] {
                    if matcher.matches(special) && self.room(found.len()) {
                        found.push(dir.join(special));
                    }
                }
            }
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(name) = name.to_str() else {
                    self.give_up("a name in a searched directory is not UTF-8".to_owned());
                    continue;
                };
                if name.starts_with('.') && !explicit_dot {
                    continue;
                }
                if matcher.matches(name) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, name: &str) -> bool {
        Component::parse(pattern).matches(name)
    }

    #[test]
    fn components_match_as_fnmatch_does() {
        for (pattern, name) in [
            ("*", "a"),
            ("*", ""),
            (".e*", ".env"),
            ("*.rs", "main.rs"),
            ("a*b*c", "aXbYbZc"),
            ("?", "x"),
            (".[e]nv", ".env"),
            (".[!x]nv", ".env"),
            (".[^x]nv", ".env"),
            ("[]a]", "]"),
            ("[!]a]", "b"),
            ("[a-f]x", "cx"),
            ("[[:alpha:]]", "q"),
            ("[[:digit:]]", "q"),
            ("\\*", "*"),
            ("a\\?", "a?"),
            ("[", "["),
            ("a[b", "a[b"),
            ("@(x|y)", "anything"),
            ("!(*.rs)", "main.rs"),
        ] {
            assert!(matches(pattern, name), "`{pattern}` should match `{name}`");
        }
        for (pattern, name) in [
            ("*.rs", "main.rc"),
            ("?", "xy"),
            (".[!e]nv", ".env"),
            (".[^e]nv", ".env"),
            ("[a-f]x", "gx"),
            ("\\*", "a"),
            ("a*b", "ac"),
            ("ab", "abc"),
        ] {
            assert!(!matches(pattern, name), "`{pattern}` should not match `{name}`");
        }
    }
}
