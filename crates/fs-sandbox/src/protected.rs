//! Protected paths: writes that change how tools, editors or shells behave, and reads of secret files.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use globset::{GlobBuilder, GlobMatcher};

use crate::error::{PathSandboxError, Result};
use crate::secrets::{NOT_SECRET, SECRET_FILES};
use agent_tool_traits::Access;

/// Directories whose contents configure code that runs later (the repositories of git, Mercurial and Jujutsu with
/// their hooks and config, agents' settings and MCP servers, editors' tasks and project configuration, dev
/// containers, commit hooks) or let someone in (ssh's `authorized_keys` and `config`, gpg's agent configuration):
/// a write anywhere beneath one of them is protected.
const WRITE_DIRS: [&str; 17] = [
    ".git",
    ".hg",
    ".jj",
    ".agent-guard",
    ".claude",
    ".codex",
    ".gemini",
    ".cursor",
    ".continue",
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
/// fsmonitor or an alias runs a program on `git status`), the agent's project MCP servers, the package managers'
/// project configuration (a shell, a script or a hook file that installs run), the project files editors run.
const CONFIG_FILES: [&str; 10] = [
    ".gitconfig",
    ".mcp.json",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnpmfile.cjs",
    "bunfig.toml",
    ".nvim.lua",
    ".nvimrc",
    ".exrc",
];

/// Endings of files that configure code an editor runs when it opens them (a workspace's tasks).
const CONFIG_SUFFIXES: [&str; 1] = [".code-workspace"];

/// Directories of configuration that runs code, named by two components: git's XDG configuration, and
/// `~/.local/bin`, a directory on the user's `PATH` where a new program shadows a system one.
const CONFIG_DIRS: [[&str; 2]; 2] = [[".config", "git"], [".local", "bin"]];

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

/// The default secret patterns, compiled once.
fn default_secrets() -> &'static (Vec<Pattern>, Vec<Pattern>) {
    static DEFAULTS: OnceLock<(Vec<Pattern>, Vec<Pattern>)> = OnceLock::new();
    DEFAULTS.get_or_init(|| {
        let compile = |list: &[&str]| list.iter().filter_map(|p| Pattern::default_secret(p)).collect();
        (compile(SECRET_FILES), compile(NOT_SECRET))
    })
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
    reads: Vec<Pattern>,
    writes: Vec<Pattern>,
}

impl Default for ProtectedPaths {
    fn default() -> Self {
        Self {
            defaults: true,
            home: Vec::new(),
            reads: Vec::new(),
            writes: Vec::new(),
        }
    }
}

/// One protected-path pattern from the settings.
#[derive(Debug, Clone)]
struct Pattern {
    text: String,
    matcher: GlobMatcher,
    scope: Scope,
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
        (SECRET_FILES, NOT_SECRET)
    }

    /// No protected path at all, not even the defaults (for tests and for callers that check protection
    /// themselves).
    pub fn none() -> Self {
        Self {
            defaults: false,
            home: Vec::new(),
            reads: Vec::new(),
            writes: Vec::new(),
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
        let mut this = self;
        this.reads.extend(parsed.iter().cloned());
        this.writes.extend(parsed);
        Ok(this)
    }

    /// The same list with `patterns` protected for writes only.
    ///
    /// # Errors
    /// [`PathSandboxError::Pattern`] naming the first pattern that is not a valid glob.
    pub fn with_extra_writes<I, S>(mut self, patterns: I) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.writes.extend(parse_all(patterns)?);
        Ok(self)
    }

    /// The same list with `patterns` protected for reads only.
    ///
    /// # Errors
    /// [`PathSandboxError::Pattern`] naming the first pattern that is not a valid glob.
    pub fn with_extra_reads<I, S>(mut self, patterns: I) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.reads.extend(parse_all(patterns)?);
        Ok(self)
    }

    /// Why `absolute` (with `relative`, its path below its root, when it has one) is protected for `access`, or
    /// `None`. `absolute` must be normalised (no `.` or `..`).
    pub fn reason(&self, absolute: &Path, relative: Option<&Path>, access: Access) -> Option<String> {
        let (defaults, extras) = match access {
            Access::Read => (
                self.defaults.then(|| secret_reason(absolute)).flatten(),
                &self.reads,
            ),
            // A secret file is protected for writes too: a write replaces what the user keeps there, and an edit
            // shows lines of it back in its result.
            Access::Write => (
                self.defaults
                    .then(|| {
                        write_reason(absolute)
                            .or_else(|| self.home_reason(absolute))
                            .or_else(|| secret_reason(absolute))
                    })
                    .flatten(),
                &self.writes,
            ),
        };
        defaults.or_else(|| {
            extras
                .iter()
                .find(|pattern| pattern.matches(absolute, relative))
                .map(|pattern| {
                    format!(
                        "`{}` matches the protected-path pattern `{}`",
                        absolute.display(),
                        pattern.text
                    )
                })
        })
    }
}

impl ProtectedPaths {
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
        let matcher = GlobBuilder::new(glob)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|source| PathSandboxError::Pattern {
                pattern: text.to_owned(),
                source,
            })?
            .compile_matcher();
        Ok(Self {
            text: text.to_owned(),
            matcher,
            scope,
        })
    }

    /// A default secret pattern: without regard to ASCII case, a name anywhere, the last components of a path.
    fn default_secret(text: &str) -> Option<Self> {
        let (scope, glob) = if text.starts_with('/') {
            (Scope::Absolute, text)
        } else if text.contains('/') {
            (Scope::Tail(text.split('/').count()), text)
        } else {
            (Scope::Name, text)
        };
        let matcher = GlobBuilder::new(glob)
            .literal_separator(true)
            .case_insensitive(true)
            .build()
            .ok()?
            .compile_matcher();
        Some(Self {
            text: text.to_owned(),
            matcher,
            scope,
        })
    }

    fn matches(&self, absolute: &Path, relative: Option<&Path>) -> bool {
        match self.scope {
            Scope::Name => absolute.components().any(|component| match component {
                Component::Normal(name) => self.matcher.is_match(name),
                Component::Prefix(_) | Component::RootDir | Component::CurDir | Component::ParentDir => false,
            }),
            Scope::Relative => relative.is_some_and(|relative| self.matches_an_ancestor(relative)),
            Scope::Absolute => self.matches_an_ancestor(absolute),
            Scope::Tail(count) => {
                let all: Vec<&OsStr> = names(absolute).collect();
                let tail = all.get(all.len().saturating_sub(count)..).unwrap_or_default();
                tail.len() == count && self.matcher.is_match(tail.iter().collect::<std::path::PathBuf>())
            }
        }
    }

    /// Whether the pattern matches `path` or one of its ancestors, so that a protected directory protects its
    /// contents.
    fn matches_an_ancestor(&self, path: &Path) -> bool {
        path.ancestors()
            .any(|ancestor| !ancestor.as_os_str().is_empty() && self.matcher.is_match(ancestor))
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

fn names(path: &Path) -> impl Iterator<Item = &OsStr> {
    path.components().filter_map(|component| match component {
        Component::Normal(name) => Some(name),
        Component::Prefix(_) | Component::RootDir | Component::CurDir | Component::ParentDir => None,
    })
}

fn eq_name(name: &OsStr, expected: &str) -> bool {
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

fn write_reason(absolute: &Path) -> Option<String> {
    let shown = absolute.display();
    let all: Vec<&OsStr> = names(absolute).collect();
    if let Some(dir) = all
        .iter()
        .find_map(|name| WRITE_DIRS.iter().find(|dir| eq_name(name, dir)))
    {
        return Some(format!("writes beneath `{dir}/` are protected (`{shown}`)"));
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
    let (secrets, exceptions) = default_secrets();
    let pattern = secrets.iter().find(|p| p.matches(absolute, None))?;
    if exceptions.iter().any(|p| p.matches(absolute, None)) {
        return None;
    }
    let name = last.to_string_lossy();
    // The pattern is named when it is not the name itself (`server.pem` is secret like `*.pem`).
    let like = if pattern.text.eq_ignore_ascii_case(&name) {
        String::new()
    } else {
        format!(", like `{}`", pattern.text)
    };
    Some(format!(
        "`{name}` may hold secrets (`{}`{like})",
        absolute.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &str) -> Option<String> {
        ProtectedPaths::default().reason(Path::new(path), None, Access::Write)
    }

    fn read(path: &str) -> Option<String> {
        ProtectedPaths::default().reason(Path::new(path), None, Access::Read)
    }

    #[test]
    fn default_writes() {
        assert!(write("/p/.git/config").is_some());
        assert!(write("/p/.GIT/hooks/pre-commit").is_some());
        assert!(write("/p/sub/.husky/pre-push").is_some());
        assert!(write("/home/u/.config/fish/conf.d/x.fish").is_some());
        assert!(write("/p/.zshrc").is_some());
        assert!(write("/p/.gitignore").is_none());
        assert!(write("/p/src/git/x.rs").is_none());
        assert!(write("/p/.zshrc.bak").is_none());
        assert!(write("/home/u/.ssh/authorized_keys").is_some());
        assert!(write("/home/u/.gitconfig").is_some());
        assert!(write("/home/u/.config/git/config").is_some());
        assert!(write("/home/u/.local/bin/ls").is_some());
        assert!(write("/p/.mcp.json").is_some());
        assert!(write("/p/src/gitconfig.rs").is_none());
        assert!(write("/home/u/.local/share/x").is_none());
    }

    /// A secret file is protected for writes as for reads: a write replaces it, an edit shows lines of it.
    #[test]
    fn secret_files_are_protected_for_writes_too() {
        for secret in [
            "/p/.env",
            "/p/sub/.env.local",
            "/p/server.pem",
            "/home/u/.ssh/id_ed25519",
        ] {
            assert!(read(secret).is_some(), "{secret}");
            assert!(write(secret).is_some(), "{secret}");
        }
        for plain in ["/p/.env.example", "/p/src/env.rs", "/p/README.md"] {
            assert_eq!(read(plain), None, "{plain}");
            assert_eq!(write(plain), None, "{plain}");
        }
    }

    #[test]
    fn other_tools_configuration_is_protected_for_writes() {
        for protected in [
            "/p/.hg/hgrc",
            "/p/.jj/repo/config.toml",
            "/p/.cursor/mcp.json",
            "/p/.gemini/settings.json",
            "/p/.devcontainer/devcontainer.json",
            "/p/app.code-workspace",
            "/p/sub/.npmrc",
            "/p/.yarnrc.yml",
            "/p/.pnpmfile.cjs",
            "/p/.nvim.lua",
            "/p/.exrc",
        ] {
            assert!(write(protected).is_some(), "{protected}");
            assert!(
                read(protected).is_none() || protected.ends_with(".npmrc"),
                "{protected}"
            );
        }
        for free in ["/p/src/workspace.rs", "/p/docs/hgrc.md", "/p/.eslintrc.json"] {
            assert!(write(free).is_none(), "{free}");
        }
    }

    #[test]
    fn hidden_entries_of_the_home_directory_are_protected_for_writes() {
        let paths = ProtectedPaths::default().with_home(Some(PathBuf::from("/home/u")));
        let write = |p: &str| paths.reason(Path::new(p), None, Access::Write);
        for protected in [
            "/home/u/.vimrc",
            "/home/u/.tmux.conf",
            "/home/u/.local/lib/python3.11/site-packages/evil.pth",
            "/home/u/.config/systemd/user/x.service",
            "/home/u/.pam_environment",
        ] {
            let why = write(protected);
            assert!(
                why.as_deref().is_some_and(|w| w.contains("~/.")),
                "{protected}: {why:?}"
            );
        }
        for free in [
            "/home/u/project/src/main.rs",
            "/home/u/project/.eslintrc.json",
            "/home/u/notes.txt",
            "/other/.vimrc",
        ] {
            assert!(write(free).is_none(), "{free}");
        }
        // Without the home directory known, the name alone decides.
        assert!(
            ProtectedPaths::default()
                .reason(Path::new("/home/u/.vimrc"), None, Access::Write)
                .is_none()
        );
    }

    #[test]
    fn default_reads() {
        assert!(read("/p/.env").is_some());
        assert!(read("/p/.env.local").is_some());
        assert!(read("/p/.ENV").is_some());
        assert!(read("/p/.env.example").is_none());
        assert!(read("/p/.envrc").is_none());
        assert!(read("/p/.git/config").is_none());
        for secret in [
            "/home/u/.git-credentials",
            "/home/u/.netrc",
            "/p/.npmrc",
            "/home/u/.pypirc",
            "/home/u/.ssh/id_rsa",
            "/home/u/.ssh/id_ed25519_sk",
            "/p/certs/server.pem",
            "/p/tls/server.KEY",
            "/p/client.p12",
            "/p/credentials.json",
            "/home/u/.kube/config",
            "/p/deploy/prod.kubeconfig",
            "/home/u/.docker/config.json",
            "/home/u/.aws/credentials",
            "/home/u/.gnupg/private-keys-v1.d/abc.key",
            "/proc/self/environ",
            "/proc/1234/environ",
        ] {
            assert!(read(secret).is_some(), "{secret}");
        }
        for plain in [
            "/home/u/.ssh/id_rsa.pub",
            "/p/config.json",
            "/p/.docker/daemon.json",
            "/p/src/keys.rs",
            "/p/kube/config",
            "/p/environ",
            "/p/keyboard.md",
        ] {
            assert!(read(plain).is_none(), "{plain}");
        }
    }

    #[test]
    fn extras() {
        let protected = ProtectedPaths::none()
            .with_extra(["*.pem", "config/prod/", "/etc/x"])
            .unwrap();
        let rel = |p: &str| protected.reason(&Path::new("/p").join(p), Some(Path::new(p)), Access::Read);
        assert!(rel("keys/a.pem").is_some());
        assert!(rel("config/prod/db.toml").is_some());
        assert!(rel("config/dev/db.toml").is_none());
        assert!(
            protected
                .reason(Path::new("/etc/x/y"), None, Access::Write)
                .is_some()
        );
        assert!(ProtectedPaths::none().with_extra(["a[b"]).is_err());
    }
}
