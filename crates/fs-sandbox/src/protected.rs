//! Protected paths: writes that change how tools, editors or shells behave, and reads of secret files.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use globset::{Candidate, Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{PathSandboxError, Result};
use crate::secrets::{KEY_FILE_KINDS, NOT_SECRET, secret_files};
use agent_tool_traits::Access;

/// Directories whose contents configure code that runs later (the repositories of git, Mercurial, Jujutsu and
/// Sapling with their hooks and config, agents' settings, MCP servers and plugins, editors' tasks and project
/// configuration, dev containers, commit hooks) or let someone in (ssh's `authorized_keys` and `config`, gpg's
/// agent configuration): a write anywhere beneath one of them is protected. A git directory under another name is
/// recognised by what it holds ([`git_directory_reason`]).
const WRITE_DIRS: [&str; 27] = [
    ".git",
    ".hg",
    ".jj",
    ".sl",
    ".agent-guard",
    ".claude",
    ".codex",
    ".gemini",
    ".cursor",
    ".continue",
    ".amazonq",
    ".kiro",
    ".roo",
    ".qwen",
    ".iflow",
    ".kilocode",
    ".opencode",
    ".openhands",
    ".factory",
    ".vscode",
    ".idea",
    ".zed",
    ".helix",
    ".devcontainer",
    ".husky",
    ".ssh",
    ".gnupg",
];

/// Files that configure programs which later runs read without asking: git's user configuration (a pager, an
/// fsmonitor or an alias runs a program on `git status`), the project MCP servers and settings of coding agents
/// (a server is a program the agent starts), the package managers'
/// project configuration (a shell, a script or a hook file that installs run), the project files editors run, the
/// toolchain a directory's `cargo` starts (`rust-toolchain.toml` may name any path), mise's project configuration
/// (its hooks and tasks run on `cd`), pre-commit's and lefthook's, whose hooks run on every commit, and the commands
/// Python's debugger runs when it starts in the directory, and the local part of direnv's `.envrc`, which it sources;
/// the start-up files that interactive tools read from the directory they start in and run without asking (irb's
/// `.irbrc`, `irb.rc` and `_irbrc`, pry's `.pryrc`, R's `.Rprofile` and `.Renviron`, which may name another
/// profile, IEx's `.iex.exs`, GHCi's `.ghci`, the OCaml toplevel's `.ocamlinit`, and the `.vimrc`, `.gvimrc`,
/// `.exrc`, `.nvimrc` and `.nvim.lua` that vim and neovim read there with `exrc` set), and git-lfs's `.lfsconfig`,
/// whose `lfs.url` receives the repository's large files on the user's next push. A project's build files
/// (`pom.xml`, `.mvn/jvm.config`, `gradle.properties`, `.bazelrc`) are not among them: they are the repository's
/// code, which its build runs by design, like a `Makefile`.
const CONFIG_FILES: [&str; 38] = [
    ".gitconfig",
    ".lfsconfig",
    ".mcp.json",
    "opencode.json",
    "opencode.jsonc",
    "crush.json",
    ".crush.json",
    ".aider.conf.yml",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnpmfile.cjs",
    "bunfig.toml",
    ".nvim.lua",
    ".nvimrc",
    ".exrc",
    ".vimrc",
    ".gvimrc",
    ".irbrc",
    "irb.rc",
    "_irbrc",
    ".pryrc",
    ".Rprofile",
    ".Renviron",
    ".iex.exs",
    ".ghci",
    ".ocamlinit",
    "rust-toolchain",
    "rust-toolchain.toml",
    ".mise.toml",
    "mise.toml",
    "mise.local.toml",
    ".mise.local.toml",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    "lefthook-local.yml",
    ".pdbrc",
    ".envrc.local",
];

/// Tools that read their configuration, which runs code, under many names and places: lefthook (`lefthook.yml`,
/// `.lefthook-local.toml`, `.config/lefthook.json`, its script directories `.lefthook/` and `.lefthook-local/`),
/// mise (`mise.toml`, `mise.dev.toml`, `.mise/config.toml`, `mise/config.toml`) and dev containers
/// (`.devcontainer.json`, whose `initializeCommand` runs on the host). A name, of a file or a directory on the
/// way, that is one of them, with or without a leading dot, alone or followed by `.` or `-`, is protected.
const CONFIG_STEMS: [&str; 3] = ["lefthook", "mise", "devcontainer"];

/// Endings of files that configure code an editor runs when it opens them (a workspace's tasks).
const CONFIG_SUFFIXES: [&str; 1] = [".code-workspace"];

/// Configuration that runs code, named by two components: git's XDG configuration, `~/.local/bin`, a directory on
/// the user's `PATH` where a new program shadows a system one, cargo's configuration of a directory (a
/// `rustc-wrapper` or a runner runs on every later `cargo build` there, inside the sandbox or not), darcs's
/// repository preferences (`_darcs/prefs/defaults` names commands, a `posthook` among them, that every later
/// `darcs` run there runs) and Cline's hooks.
const CONFIG_DIRS: [[&str; 2]; 7] = [
    [".config", "git"],
    ["_darcs", "prefs"],
    [".clinerules", "hooks"],
    [".config", "mise"],
    [".local", "bin"],
    [".cargo", "config.toml"],
    [".cargo", "config"],
];

/// Shell start-up files (and `direnv`'s `.envrc`, which a shell runs on `cd`): a write to one is protected.
const STARTUP_FILES: [&str; 17] = [
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".zlogout",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".logout",
    ".kshrc",
    ".mkshrc",
    ".envrc",
];

/// Directories of start-up files that are named by two components (`fish` reads all of `.config/fish/`).
const STARTUP_DIRS: [[&str; 2]; 1] = [[".config", "fish"]];

/// The default secret patterns and their exceptions, each list compiled once into one set.
fn default_secrets() -> &'static Result<(PatternSet, PatternSet)> {
    static DEFAULTS: OnceLock<Result<(PatternSet, PatternSet)>> = OnceLock::new();
    DEFAULTS.get_or_init(|| {
        let compile = |list: &[&str]| {
            list.iter()
                .map(|p| Pattern::default_secret(p))
                .collect::<Result<Vec<_>>>()
                .and_then(|patterns| PatternSet::new(&patterns, Case::AsciiFolded))
        };
        let mut secrets = compile(secret_files())?;
        let mut exceptions = compile(NOT_SECRET)?;
        secrets.name_memo = Some(NameMemo::Secrets);
        exceptions.name_memo = Some(NameMemo::NotSecret);
        Ok((secrets, exceptions))
    })
}

/// Which of the two fixed lists a component name's match is remembered for ([`PatternSet::name_match`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NameMemo {
    Secrets,
    NotSecret,
}

/// How many component names (and directories) each thread remembers the matches of, per fixed list, before it
/// starts again.
const NAME_MEMO_SIZE: usize = 4096;

/// One fixed list's remembered matches of component names ([`PatternSet::name_match`]) and of directories, a
/// directory's being the first of its component names' matches ([`PatternSet::names_match`]). Hashed with foldhash,
/// seeded per process: the keys come from commands.
#[derive(Default)]
struct NameMatches {
    names: HashMap<OsString, Option<usize>, foldhash::fast::RandomState>,
    dirs: HashMap<OsString, Option<usize>, foldhash::fast::RandomState>,
}

thread_local! {
    /// The first pattern of the fixed list that matches each component name seen (in lower case), per list: the
    /// answer depends on the name and the fixed list alone, and every path checked repeats the names of the
    /// directories above it.
    static NAME_MATCHES: std::cell::RefCell<FixedListMatches> = std::cell::RefCell::default();
}

/// The remembered matches of the two fixed lists.
#[derive(Default)]
struct FixedListMatches {
    secrets: NameMatches,
    not_secret: NameMatches,
}

impl FixedListMatches {
    fn of(&mut self, list: NameMemo) -> &mut NameMatches {
        match list {
            NameMemo::Secrets => &mut self.secrets,
            NameMemo::NotSecret => &mut self.not_secret,
        }
    }
}

/// The protected paths of a sandbox: a write there, or a read of a secret file, is never auto-approved.
///
/// The default list is the one docs/sandbox.md and docs/claude-code.md describe; settings extend it with glob patterns ([`ProtectedPaths::with_extra`]). A
/// pattern without `/` matches a name anywhere (`secrets.toml`, `*.pem`), one with `/` matches the path relative to
/// the root (`config/prod/**`), one starting with `/` matches the absolute path. A pattern that matches a directory
/// protects everything beneath it. Default names are compared without regard to ASCII case, so that a
/// case-insensitive file system cannot be used to slip past them.
#[derive(Debug, Clone)]
pub struct ProtectedPaths {
    defaults: bool,
    /// The home directory as given and as resolved, whose hidden entries configure the user's programs.
    home: Vec<PathBuf>,
    /// The settings' patterns for reads, and the same compiled into one set.
    reads: Vec<Pattern>,
    read_set: PatternSet,
    /// The settings' patterns for writes, and the same compiled into one set.
    writes: Vec<Pattern>,
    write_set: PatternSet,
}

impl Default for ProtectedPaths {
    fn default() -> Self {
        Self {
            defaults: true,
            ..Self::none()
        }
    }
}

/// One protected-path pattern: its text, the glob it compiles to, and what it is matched against.
#[derive(Debug, Clone)]
struct Pattern {
    text: String,
    glob: Glob,
    /// For a relative or absolute pattern, the glob of everything beneath its matches.
    beneath: Option<Glob>,
    scope: Scope,
}

/// A list of patterns compiled into one [`GlobSet`] per kind of candidate (a name, the last components, the
/// path and its ancestors), so that a path is matched against the whole list at once instead of pattern by
/// pattern. The first pattern of the list that matches is the one a reason names.
#[derive(Debug, Clone, Default)]
struct PatternSet {
    /// Each pattern's text, in the order of the list.
    texts: Vec<String>,
    /// For the two fixed lists, which one: their matches of component names are remembered.
    name_memo: Option<NameMemo>,
    case: Case,
    names: ScopeSet,
    relative: ScopeSet,
    absolute: ScopeSet,
    /// By number of components.
    tails: Vec<(usize, ScopeSet)>,
}

/// How a [`PatternSet`] compares paths.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Case {
    /// As they are (the settings' patterns).
    #[default]
    Exact,
    /// In ASCII lower case, against patterns compiled in lower case (the default secret patterns).
    AsciiFolded,
}

/// The globs of one scope of a [`PatternSet`] being collected, with the position in the list of each.
#[derive(Default)]
struct ScopeGlobs {
    globs: Vec<Glob>,
    positions: Vec<usize>,
}

/// The patterns of one scope of a [`PatternSet`], with the position in the list of each.
#[derive(Debug, Clone, Default)]
struct ScopeSet {
    set: GlobSet,
    positions: Vec<usize>,
    /// The literal start of each glob ([`literal_start`]) when every glob has one, else empty: a candidate that
    /// starts with none of them matches no glob of the set (a glob matches the whole candidate from its start).
    starts: Vec<Box<[u8]>>,
}

/// What a pattern is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Each component name.
    Name,
    /// The path relative to its root, and each of its ancestors.
    Relative,
    /// The absolute path, and each of its ancestors.
    Absolute,
    /// The last this many components of the path (a default secret: `.aws/credentials` wherever it is).
    Tail(usize),
}

impl ProtectedPaths {
    /// The default list of secret files, whose reads are protected (glob patterns: a name anywhere, a path of
    /// the last components, or an absolute path), and the names among them that hold no secret. The same list
    /// serves every check of a read: the Read tool's, each file a shell command reads, and recursive searches.
    pub fn default_secret_files() -> (&'static [&'static str], &'static [&'static str]) {
        (secret_files(), NOT_SECRET)
    }

    /// No protected path at all, not even the defaults (for tests and for callers that check protection
    /// themselves).
    pub fn none() -> Self {
        Self {
            defaults: false,
            home: Vec::new(),
            reads: Vec::new(),
            read_set: PatternSet::default(),
            writes: Vec::new(),
            write_set: PatternSet::default(),
        }
    }

    /// The same list, knowing the home directory: with the defaults, a write to any hidden entry directly in it,
    /// or beneath one, is protected. Those entries are the user's configuration of every program (`~/.vimrc`,
    /// `~/.local/lib/…/site-packages`, `~/.config/systemd/user`, `~/.npmrc`), which matters when a root is the home
    /// directory or holds it. Both `home` and the path its links resolve to count.
    #[must_use]
    pub fn with_home(mut self, home: Option<PathBuf>) -> Self {
        self.home.clear();
        if let Some(home) = home {
            if let Ok(resolved) = std::fs::canonicalize(&home)
                && resolved != home
            {
                self.home.push(resolved);
            }
            self.home.push(home);
        }
        self
    }

    /// The same list with `patterns` protected for reads and for writes.
    ///
    /// # Errors
    /// [`PathSandboxError::Pattern`] naming the first pattern that is not a valid glob.
    pub fn with_extra<I, S>(self, patterns: I) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let parsed = parse_all(patterns)?;
        self.with_extra_reads_parsed(parsed.clone())?
            .with_extra_writes_parsed(parsed)
    }

    /// The same list with `patterns` protected for writes only.
    ///
    /// # Errors
    /// [`PathSandboxError::Pattern`] naming the first pattern that is not a valid glob.
    pub fn with_extra_writes<I, S>(self, patterns: I) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.with_extra_writes_parsed(parse_all(patterns)?)
    }

    /// The same list with `patterns` protected for reads only.
    ///
    /// # Errors
    /// [`PathSandboxError::Pattern`] naming the first pattern that is not a valid glob.
    pub fn with_extra_reads<I, S>(self, patterns: I) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.with_extra_reads_parsed(parse_all(patterns)?)
    }

    /// Why `absolute` (with `relative`, its path below its root, when it has one) is protected for `access`, or
    /// `None`. `absolute` must be normalised (no `.` or `..`).
    pub fn reason(&self, absolute: &Path, relative: Option<&Path>, access: Access) -> Option<String> {
        let (defaults, extras) = match access {
            Access::Read => (
                self.defaults.then(|| secret_reason(absolute)).flatten(),
                &self.read_set,
            ),
            // A secret file is protected for writes too: a write replaces what the user keeps there, and an edit
            // shows lines of it back in its result.
            Access::Write => (
                self.defaults
                    .then(|| {
                        write_reason(absolute)
                            .or_else(|| self.home_reason(absolute))
                            .or_else(|| secret_reason(absolute))
                            .or_else(|| {
                                // A file a protected configuration of the root names to run.
                                let depth = relative?.components().count();
                                let root = absolute.ancestors().nth(depth)?;
                                crate::named::named_reason(absolute, root)
                            })
                    })
                    .flatten(),
                &self.write_set,
            ),
        };
        defaults.or_else(|| {
            extras.first_match(absolute, relative).map(|pattern| {
                format!(
                    "`{}` matches the protected-path pattern `{pattern}`",
                    absolute.display()
                )
            })
        })
    }
}

impl ProtectedPaths {
    /// Whether `absolute` is protected by its name only as a key or certificate file (`*.pem`, `*.key`, `*.p12`,
    /// `*.pfx`), which may hold nothing secret (a CA bundle): no other default and no pattern of the settings
    /// protects it for `access`. What it holds decides whether it is a secret; made by a command, it replaces
    /// nothing of the user's. `absolute` must be normalised.
    pub fn only_a_key_file_kind(&self, absolute: &Path, relative: Option<&Path>, access: Access) -> bool {
        if !self.defaults {
            return false;
        }
        let Ok((secrets, _)) = default_secrets() else {
            return false;
        };
        let key_kind = secrets
            .first_match(absolute, None)
            .is_some_and(|pattern| KEY_FILE_KINDS.contains(&pattern));
        let extras = match access {
            Access::Read => &self.read_set,
            Access::Write => &self.write_set,
        };
        key_kind
            && extras.first_match(absolute, relative).is_none()
            && (access == Access::Read
                || (write_reason(absolute).is_none() && self.home_reason(absolute).is_none()))
    }

    /// The same list with `parsed` protected for reads too.
    fn with_extra_reads_parsed(mut self, parsed: Vec<Pattern>) -> Result<Self> {
        self.reads.extend(parsed);
        self.read_set = PatternSet::new(&self.reads, Case::Exact)?;
        Ok(self)
    }

    /// The same list with `parsed` protected for writes too.
    fn with_extra_writes_parsed(mut self, parsed: Vec<Pattern>) -> Result<Self> {
        self.writes.extend(parsed);
        self.write_set = PatternSet::new(&self.writes, Case::Exact)?;
        Ok(self)
    }

    /// Why a write to `absolute` changes the user's configuration in the home directory, or `None`.
    fn home_reason(&self, absolute: &Path) -> Option<String> {
        let below = self
            .home
            .iter()
            .find_map(|home| absolute.strip_prefix(home).ok())?;
        let first = names(below).next()?;
        first.as_encoded_bytes().starts_with(b".").then(|| {
            format!(
                "`~/{}` configures the user's programs (`{}`)",
                first.to_string_lossy(),
                absolute.display()
            )
        })
    }
}

impl Pattern {
    fn parse(text: &str) -> Result<Self> {
        let trimmed = text.trim();
        let (scope, glob) = if let Some(rest) = trimmed.strip_prefix("./") {
            (Scope::Relative, rest)
        } else if trimmed.starts_with('/') {
            (Scope::Absolute, trimmed)
        } else if trimmed.trim_end_matches('/').contains('/') {
            (Scope::Relative, trimmed)
        } else {
            (Scope::Name, trimmed)
        };
        // A trailing slash names a directory; the directory itself is matched, and with it everything beneath.
        let glob = glob.trim_end_matches('/');
        let glob = if glob.is_empty() { "/" } else { glob };
        Self::compile(text, glob, scope)
    }

    /// A default secret pattern: without regard to ASCII case, a name anywhere, the last components of a path.
    /// It is compiled in lower case and matched against candidates in lower case ([`Case::AsciiFolded`]):
    /// the same comparison as globset's ASCII-only case-insensitive one, but one that its literal, prefix and
    /// extension lookups can serve instead of a regular expression.
    fn default_secret(text: &str) -> Result<Self> {
        let scope = if text.starts_with('/') {
            Scope::Absolute
        } else if text.contains('/') {
            Scope::Tail(text.split('/').count())
        } else {
            Scope::Name
        };
        Self::compile(text, &text.to_ascii_lowercase(), scope)
    }

    /// The pattern `text`, whose glob is `glob`, matched as `scope` says.
    fn compile(text: &str, glob: &str, scope: Scope) -> Result<Self> {
        let build = |glob: &str| {
            GlobBuilder::new(glob)
                .literal_separator(scope.spans_components())
                .backslash_escape(true)
                .build()
                .map_err(|source| PathSandboxError::Pattern {
                    pattern: text.to_owned(),
                    source,
                })
        };
        Ok(Self {
            text: text.to_owned(),
            glob: build(glob)?,
            beneath: match scope {
                Scope::Relative | Scope::Absolute => Some(build(&beneath(glob))?),
                Scope::Name | Scope::Tail(_) => None,
            },
            scope,
        })
    }
}

/// The start of the glob `text` that can only match itself: up to its first character that is not literal in
/// the globs compiled here (`*`, `?`, `[`, `{`, and `\`, which escapes). Every glob here is matched
/// case-sensitively against the whole candidate, so a candidate it matches starts with these bytes.
fn literal_start(text: &str) -> &[u8] {
    let bytes = text.as_bytes();
    let end = bytes
        .iter()
        .position(|b| matches!(b, b'*' | b'?' | b'[' | b'{' | b'\\'))
        .unwrap_or(bytes.len());
    bytes.get(..end).unwrap_or_default()
}

/// The glob of everything beneath what `glob` matches: a path below a match is a match of this one.
fn beneath(glob: &str) -> String {
    if glob.ends_with('/') {
        format!("{glob}**")
    } else {
        format!("{glob}/**")
    }
}

impl Scope {
    /// Whether the candidates of this scope hold several components, so that `*` must not match a `/`. A name
    /// has none; compiled without that rule, a name pattern such as `*.pem` becomes a lookup of the extension
    /// instead of a regular expression, with the same matches.
    fn spans_components(self) -> bool {
        match self {
            Self::Name => false,
            Self::Relative | Self::Absolute | Self::Tail(_) => true,
        }
    }
}

impl PatternSet {
    /// `patterns` compiled, in their order, compared with paths as `case` says.
    fn new(patterns: &[Pattern], case: Case) -> Result<Self> {
        // Most settings add no pattern: nothing to compile.
        if patterns.is_empty() {
            return Ok(Self::default());
        }
        let mut names = ScopeGlobs::default();
        let mut relative = ScopeGlobs::default();
        let mut absolute = ScopeGlobs::default();
        let mut tails: Vec<(usize, ScopeGlobs)> = Vec::new();
        for (position, pattern) in patterns.iter().enumerate() {
            let globs = match pattern.scope {
                Scope::Name => &mut names,
                Scope::Relative => &mut relative,
                Scope::Absolute => &mut absolute,
                Scope::Tail(count) => {
                    if !tails.iter().any(|(c, _)| *c == count) {
                        tails.push((count, ScopeGlobs::default()));
                    }
                    match tails.iter_mut().find(|(c, _)| *c == count) {
                        Some((_, globs)) => globs,
                        None => continue,
                    }
                }
            };
            globs.push(&pattern.glob, position);
            if let Some(beneath) = &pattern.beneath {
                globs.push(beneath, position);
            }
        }
        let texts: Vec<String> = patterns.iter().map(|p| p.text.clone()).collect();
        let named = |source| PathSandboxError::Pattern {
            pattern: texts.join(", "),
            source,
        };
        Ok(Self {
            case,
            names: names.build().map_err(named)?,
            relative: relative.build().map_err(named)?,
            absolute: absolute.build().map_err(named)?,
            tails: tails
                .into_iter()
                .map(|(count, globs)| globs.build().map(|set| (count, set)))
                .collect::<Result<_, _>>()
                .map_err(named)?,
            texts,
            name_memo: None,
        })
    }

    /// The position of the first name pattern that matches the component `name`, remembered for the fixed lists.
    #[cfg(test)]
    fn name_match(&self, name: &OsStr) -> Option<usize> {
        let Some(memo) = self.name_memo else {
            return self.names.first_match(Path::new(name));
        };
        NAME_MATCHES.with(|memo_of| {
            let mut memo_of = memo_of.borrow_mut();
            let matches = memo_of.of(memo);
            self.remembered_name_match(&mut matches.names, name)
        })
    }

    /// `name`'s match from `names`, or asked of the patterns and remembered there.
    fn remembered_name_match(
        &self,
        names: &mut HashMap<OsString, Option<usize>, foldhash::fast::RandomState>,
        name: &OsStr,
    ) -> Option<usize> {
        if let Some(known) = names.get(name) {
            return *known;
        }
        let found = self.names.first_match(Path::new(name));
        if names.len() >= NAME_MEMO_SIZE {
            names.clear();
        }
        names.insert(name.to_owned(), found);
        found
    }

    /// The position of the first name pattern that matches any of `path`'s component names ([`names`]). For the
    /// fixed lists the answer for the directory part (everything before the last `/`) is remembered as a whole:
    /// splitting the bytes at a `/` splits the names the same way, and the paths checked share their
    /// directories.
    fn names_match(&self, path: &Path) -> Option<usize> {
        let Some(memo) = self.name_memo else {
            return names(path)
                .filter_map(|name| self.names.first_match(Path::new(name)))
                .min();
        };
        let bytes = path.as_os_str().as_encoded_bytes();
        let (dir, last) = match bytes.iter().rposition(|&b| b == b'/') {
            Some(slash) => (
                bytes.get(..slash).unwrap_or_default(),
                bytes.get(slash + 1..).unwrap_or_default(),
            ),
            None => (&[][..], bytes),
        };
        NAME_MATCHES.with(|memo_of| {
            let mut memo_of = memo_of.borrow_mut();
            let NameMatches { names: known, dirs } = memo_of.of(memo);
            let last = names(Path::new(OsStr::from_bytes(last)))
                .next()
                .and_then(|name| self.remembered_name_match(known, name));
            let dir = OsStr::from_bytes(dir);
            let in_dir = match dirs.get(dir) {
                Some(found) => *found,
                None => {
                    let found = names(Path::new(dir))
                        .filter_map(|name| self.remembered_name_match(known, name))
                        .min();
                    if dirs.len() >= NAME_MEMO_SIZE {
                        dirs.clear();
                    }
                    dirs.insert(dir.to_owned(), found);
                    found
                }
            };
            match (last, in_dir) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        })
    }

    /// `absolute` as this set compares it: in ASCII lower case when it folds case.
    fn prepare<'a>(&self, absolute: &'a Path) -> Cow<'a, Path> {
        let bytes = absolute.as_os_str().as_encoded_bytes();
        match self.case {
            Case::AsciiFolded if bytes.iter().any(u8::is_ascii_uppercase) => {
                Cow::Owned(PathBuf::from(OsString::from_vec(bytes.to_ascii_lowercase())))
            }
            Case::Exact | Case::AsciiFolded => Cow::Borrowed(absolute),
        }
    }

    /// The text of the first pattern that matches `absolute` (with `relative`, its path below its root, when it
    /// has one): a name pattern any component of it, a tail pattern its last components, a relative or absolute
    /// pattern it or one of its ancestors (a protected directory protects its contents).
    fn first_match(&self, absolute: &Path, relative: Option<&Path>) -> Option<&str> {
        if self.texts.is_empty() {
            return None;
        }
        self.first_match_prepared(&self.prepare(absolute), relative)
    }

    /// [`PatternSet::first_match`] of an `absolute` already [`prepared`](PatternSet::prepare) for this set.
    fn first_match_prepared(&self, absolute: &Path, relative: Option<&Path>) -> Option<&str> {
        if self.texts.is_empty() {
            return None;
        }
        let mut first: Option<usize> = None;
        if !self.names.is_empty() {
            first = self.names_match(absolute);
        }
        let mut found = |scope: &ScopeSet, candidate: &Path| {
            if let Some(position) = scope.first_match(candidate) {
                first = Some(first.map_or(position, |f| f.min(position)));
            }
        };
        for (count, scope) in &self.tails {
            if let Some(tail) = tail(absolute, *count) {
                found(scope, &tail);
            }
        }
        // The relative and absolute patterns also match what is beneath a match ([`Pattern::beneath`]), so the
        // path alone stands for it and all its ancestors. An empty path (the root itself, relative to the root)
        // is nothing's ancestor and is not matched.
        for (scope, path) in [(&self.relative, relative), (&self.absolute, Some(absolute))] {
            if let Some(path) = path.filter(|path| !path.as_os_str().is_empty()) {
                found(scope, path);
            }
        }
        first
            .and_then(|position| self.texts.get(position))
            .map(String::as_str)
    }
}

/// The last `count` of `path`'s component names ([`names`]) joined by `/`, or `None` when it has fewer. Where the
/// last parts of the path are all names (a normalised path) this is the end of the path itself; otherwise the
/// names are joined anew.
fn tail(path: &Path, count: usize) -> Option<Cow<'_, Path>> {
    let bytes = path.as_os_str().as_encoded_bytes();
    let mut start = bytes.len();
    let mut end = bytes.len();
    let mut taken = 0;
    for part in bytes.rsplit(|&b| b == b'/') {
        if taken == count {
            break;
        }
        if matches!(part, b"" | b"." | b"..") {
            return joined_tail(path, count).map(Cow::Owned);
        }
        start = end - part.len();
        end = start.saturating_sub(1);
        taken += 1;
    }
    (taken == count).then(|| {
        Cow::Borrowed(Path::new(OsStr::from_bytes(
            bytes.get(start..).unwrap_or_default(),
        )))
    })
}

/// [`tail`] by collecting the names and joining the last `count` of them.
fn joined_tail(path: &Path, count: usize) -> Option<PathBuf> {
    let all: Vec<&OsStr> = names(path).collect();
    let tail = all.get(all.len().checked_sub(count)?..)?;
    Some(tail.iter().collect())
}

impl ScopeGlobs {
    fn push(&mut self, glob: &Glob, position: usize) {
        self.globs.push(glob.clone());
        self.positions.push(position);
    }

    fn build(self) -> std::result::Result<ScopeSet, globset::Error> {
        let starts: Vec<Box<[u8]>> = self
            .globs
            .iter()
            .map(|glob| Box::from(literal_start(glob.glob())))
            .collect();
        let starts = if starts.iter().any(|start| start.is_empty()) {
            Vec::new()
        } else {
            starts
        };
        let mut set = GlobSetBuilder::new();
        for glob in self.globs {
            set.add(glob);
        }
        Ok(ScopeSet {
            set: set.build()?,
            positions: self.positions,
            starts,
        })
    }
}

impl ScopeSet {
    fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// The position in the list of the first pattern of this scope that matches `candidate`.
    fn first_match(&self, candidate: &Path) -> Option<usize> {
        if self.is_empty() {
            return None;
        }
        let bytes = candidate.as_os_str().as_encoded_bytes();
        if !self.starts.is_empty() && !self.starts.iter().any(|start| bytes.starts_with(start)) {
            return None;
        }
        let candidate = Candidate::new(candidate);
        if !self.set.is_match_candidate(&candidate) {
            return None;
        }
        self.set
            .matches_candidate(&candidate)
            .into_iter()
            .filter_map(|index| self.positions.get(index).copied())
            .min()
    }
}

fn parse_all<I, S>(patterns: I) -> Result<Vec<Pattern>>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    patterns
        .into_iter()
        .map(|pattern| Pattern::parse(pattern.as_ref()))
        .collect()
}

/// The names of `path`'s normal components, as [`Path::components`] gives them: the parts between slashes, but
/// for empty ones (a repeated or final slash), `.` and `..`. Split on the bytes, which is what `components` does
/// on Unix with more bookkeeping: every path checked goes through this several times.
pub(crate) fn names(path: &Path) -> impl Iterator<Item = &OsStr> {
    path.as_os_str()
        .as_encoded_bytes()
        .split(|&b| b == b'/')
        .filter(|name| !matches!(*name, b"" | b"." | b".."))
        .map(OsStr::from_bytes)
}

pub(crate) fn eq_name(name: &OsStr, expected: &str) -> bool {
    name.as_encoded_bytes().eq_ignore_ascii_case(expected.as_bytes())
}

/// The first of `dirs` that two consecutive names of a path spell.
fn two_components<'a>(names: &[&OsStr], dirs: &'a [[&'a str; 2]]) -> Option<&'a [&'a str; 2]> {
    names.windows(2).find_map(|pair| {
        dirs.iter().find(|dir| {
            pair.iter()
                .zip(dir.iter())
                .all(|(name, expected)| eq_name(name, expected))
        })
    })
}

/// The tool of [`CONFIG_STEMS`] whose configuration `name` is.
fn configuration_stem(name: &OsStr) -> Option<&'static str> {
    let lower = name.to_string_lossy().to_ascii_lowercase();
    let bare = lower.strip_prefix('.').unwrap_or(&lower);
    CONFIG_STEMS.iter().copied().find(|stem| {
        bare.strip_prefix(stem)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '-']))
    })
}

fn write_reason(absolute: &Path) -> Option<String> {
    let shown = absolute.display();
    let all: Vec<&OsStr> = names(absolute).collect();
    if let Some(dir) = all
        .iter()
        .find_map(|name| WRITE_DIRS.iter().find(|dir| eq_name(name, dir)))
    {
        return Some(format!("writes beneath `{dir}/` are protected (`{shown}`)"));
    }
    if let Some(reason) = crate::git_dirs::git_directory_reason(absolute) {
        return Some(reason);
    }
    if let Some([first, second]) = two_components(&all, &STARTUP_DIRS) {
        return Some(format!(
            "`{first}/{second}/` holds shell start-up files (`{shown}`)"
        ));
    }
    if let Some([first, second]) = two_components(&all, &CONFIG_DIRS) {
        return Some(format!(
            "`{first}/{second}/` configures programs that run later (`{shown}`)"
        ));
    }
    if let Some(stem) = all.iter().find_map(|name| configuration_stem(name)) {
        return Some(format!(
            "`{stem}` reads its configuration, which runs programs later, from this name (`{shown}`)"
        ));
    }
    let last = all.last()?;
    if let Some(file) = CONFIG_FILES.iter().find(|file| eq_name(last, file)) {
        return Some(format!("`{file}` configures programs that run later (`{shown}`)"));
    }
    let lower = last.to_string_lossy().to_ascii_lowercase();
    if let Some(suffix) = CONFIG_SUFFIXES.iter().find(|suffix| lower.ends_with(*suffix)) {
        return Some(format!(
            "a `*{suffix}` file configures programs that run later (`{shown}`)"
        ));
    }
    STARTUP_FILES
        .iter()
        .find(|file| eq_name(last, file))
        .map(|file| format!("`{file}` is a shell start-up file (`{shown}`)"))
}

fn secret_reason(absolute: &Path) -> Option<String> {
    let last = names(absolute).last()?;
    let (secrets, exceptions) = match default_secrets() {
        Ok(sets) => sets,
        // The fixed list always compiles (a test proves it); were it not to, every file counts as secret.
        Err(e) => return Some(format!("`{}` may hold secrets: {e}", absolute.display())),
    };
    // Both lists fold case: the path is folded once for the two.
    debug_assert_eq!(secrets.case, exceptions.case);
    let prepared = secrets.prepare(absolute);
    let pattern = secrets.first_match_prepared(&prepared, None)?;
    if exceptions.first_match_prepared(&prepared, None).is_some() {
        return None;
    }
    let name = last.to_string_lossy();
    // The pattern is named when it is not the name itself (`server.pem` is secret like `*.pem`).
    let like = if pattern.eq_ignore_ascii_case(&name) {
        String::new()
    } else {
        format!(", like `{pattern}`")
    };
    Some(format!(
        "`{name}` may hold secrets (`{}`{like})",
        absolute.display()
    ))
}

#[cfg(test)]
#[path = "protected_tests.rs"]
mod tests;
