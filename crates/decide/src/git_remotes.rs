//! The other repositories a git command that reaches the network talks to when its line names none: `git fetch`,
//! `git pull`, `git push`, `git ls-remote`, `git remote update` and `git submodule update` find their remote's URL
//! in the repository's configuration. Its host is then judged like a URL written in the line: a domain the sandbox's
//! proxy does not let through keeps the line asked, and a deliberate allow of the line grants it.
//!
//! Which remote: the one named (a name or a URL); with `--all` (or `git remote update`) every remote; else the
//! current branch's `branch.NAME.remote`, else `origin` (for a push first `branch.NAME.pushRemote` and
//! `remote.pushDefault`). Its URLs are `remote.NAME.url` (for a push `remote.NAME.pushurl` when there is one),
//! rewritten by the longest matching `url.BASE.insteadOf` (for a push's `url`, `pushInsteadOf` first).
//!
//! The configuration is read as text (the repository's `config`, then the user's global files for `insteadOf`):
//! git is not run, so that deciding never runs a program the repository's configuration names (an fsmonitor, a
//! credential helper). `include` and `includeIf` are not followed: a conditional include needs git's own
//! evaluation of its condition, and a remote defined only there is rare. A URL missed that way is only a host not
//! named, as before this module: the proxy then refuses it at run time, it never grants more.

use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The largest configuration file read.
const MAX_FILE: u64 = 1024 * 1024;

/// How a remote is reached, for the sandbox's proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Transport {
    /// `http://` or `https://`: through the proxy.
    Http,
    /// Another protocol of its own (`ssh`, `git://`): the proxy, which serves HTTP and HTTPS only, cannot carry it.
    Other(String),
    /// A remote helper (`ext::…`, `fd::…`): a program git runs, named by the configuration; no host is known.
    Helper(String),
}

/// One remote a command reaches: its name (or the URL as written), its URL, host and transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Remote {
    /// The remote's name, or the URL when the command names one.
    pub(crate) name: String,
    /// The URL after `insteadOf`.
    pub(crate) url: String,
    /// The host, lower case (a loopback host with its port).
    pub(crate) host: String,
    pub(crate) transport: Transport,
}

/// One `section.subsection.key = value` of a configuration file: section and key in lower case, the subsection as
/// written.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    section: String,
    subsection: Option<String>,
    key: String,
    value: String,
}

/// The remotes the git command `argv` (`git` first, its global options, the sub-command) reaches from `dir`
/// when its line names no URL; empty when it reaches none, or none can be found.
pub(crate) fn remotes(argv: &[String], dir: &Path, home: Option<&Path>) -> Vec<Remote> {
    let Some((dir, sub, args)) = split_command(argv, dir) else {
        return Vec::new();
    };
    let Some(repository) = Repository::find(&dir) else {
        return Vec::new();
    };
    let config = repository.config(home);
    let operands = operands(sub, args);
    let names: Vec<String> = match (sub, operands.first().map(String::as_str)) {
        ("fetch" | "pull", _) if args.iter().any(|a| a == "--all") => config.remote_names(),
        ("fetch", _) if args.iter().any(|a| a == "--multiple") => operands.clone(),
        ("fetch" | "pull" | "ls-remote", Some(first)) => vec![first.to_owned()],
        ("fetch" | "pull" | "ls-remote", None) => vec![config.default_remote(&repository)],
        ("push", Some(first)) => vec![first.to_owned()],
        ("push", None) => vec![config.push_remote(&repository)],
        ("remote", Some("update")) => match operands.get(1..).unwrap_or_default() {
            [] => config.remote_names(),
            named => named.to_vec(),
        },
        ("remote", Some("prune" | "set-head" | "show")) => operands.get(1..).unwrap_or_default().to_vec(),
        ("submodule", Some("update" | "sync")) => {
            let mut modules = config.clone();
            modules
                .entries
                .extend(read_entries(&repository.work_tree.join(".gitmodules")));
            return modules
                .all("submodule", "url")
                .iter()
                .filter_map(|url| remote(url, &config.rewritten(url, "insteadof")))
                .collect();
        }
        _ => Vec::new(),
    };
    let mut found = Vec::new();
    for name in names {
        // `git remote update GROUP` names the remotes of `remotes.GROUP`.
        let group = config.all_in("remotes", None, &name);
        let members: Vec<String> = if group.is_empty() || sub != "remote" {
            vec![name]
        } else {
            group
                .iter()
                .flat_map(|g| g.split_whitespace().map(str::to_owned))
                .collect()
        };
        for member in members {
            for url in config.urls(&member, sub == "push") {
                if let Some(remote) = remote(&member, &url) {
                    found.push(remote);
                }
            }
        }
    }
    found
}

/// A git command line read up to its sub-command: git's own options before it, as the readers of this module and
/// gather/project_code.rs need them.
pub(crate) struct GitLine<'a> {
    /// The directories of `-C`, in order: each relative to the one before.
    pub(crate) moves: Vec<&'a str>,
    /// The git directory `--git-dir` names.
    pub(crate) git_dir: Option<&'a str>,
    /// Configuration given on the command line (`-c`, `--config-env`).
    pub(crate) configured: bool,
    /// The sub-command, and the words after it.
    pub(crate) sub: Option<(&'a str, &'a [String])>,
}

impl<'a> GitLine<'a> {
    /// Reads `argv` (`git` first); `None` when an option lacks its value.
    pub(crate) fn read(argv: &'a [String]) -> Option<Self> {
        let mut line = Self {
            moves: Vec::new(),
            git_dir: None,
            configured: false,
            sub: None,
        };
        let (_, mut rest) = argv.split_first()?;
        while let Some((word, tail)) = rest.split_first() {
            rest = tail;
            match word.as_str() {
                "-C" | "--git-dir" | "-c" | "--config-env" | "--work-tree" | "--namespace"
                | "--super-prefix" => {
                    let (value, tail) = rest.split_first()?;
                    rest = tail;
                    match word.as_str() {
                        "-C" => line.moves.push(value),
                        "--git-dir" => line.git_dir = Some(value),
                        "-c" | "--config-env" => line.configured = true,
                        _ => {}
                    }
                }
                option if option.starts_with("--config-env=") => line.configured = true,
                option if option.starts_with('-') => {
                    if let Some(named) = option.strip_prefix("--git-dir=") {
                        line.git_dir = Some(named);
                    }
                }
                sub => {
                    line.sub = Some((sub, rest));
                    break;
                }
            }
        }
        Some(line)
    }

    /// `dir` moved by every `-C`.
    pub(crate) fn dir(&self, dir: &Path) -> PathBuf {
        self.moves
            .iter()
            .fold(dir.to_path_buf(), |dir, moved| dir.join(moved))
    }
}

/// Where a git command reaching a remote runs, its sub-command and their words; `None` where the line names
/// another git directory or configuration, whose remotes are not the ones read here.
fn split_command<'a>(argv: &'a [String], dir: &Path) -> Option<(PathBuf, &'a str, &'a [String])> {
    let line = GitLine::read(argv)?;
    if line.configured || line.git_dir.is_some() {
        return None;
    }
    let (sub, args) = line.sub?;
    Some((line.dir(dir), sub, args))
}

/// The code nobody reviewed that the git command `argv`, run from `dir`, may run through its repository: for the
/// project's own repository (`main`, its work tree), whose configuration is the user's and whose named programs
/// are protected, its hooks ([`hooks_of`]); for any other repository inside the project (a nested clone, a
/// submodule's checkout), also any program its configuration sets (`core.fsmonitor`, an alias, a filter, a diff
/// driver, a pager…), and with [`Submodules::Read`] the programs its checked-out submodules' configuration sets.
/// `None` where the command finds no repository. The configuration is read as text, as for the
/// remotes.
pub(crate) fn unreviewed_code(
    argv: &[String],
    dir: &Path,
    home: Option<&Path>,
    main: Option<&Path>,
    submodules: Submodules,
) -> Option<Unreviewed> {
    // Where git runs: `-C DIR` moves it; configuration given with `-c` is the analysis's to judge (a key that runs
    // a program, `core.hooksPath` among them, is code it does not follow); a git directory named on the command
    // line is the project's own only when it is its `.git`.
    let line = GitLine::read(argv)?;
    let mut dir = line.dir(dir);
    if let Some(named) = line.git_dir {
        let named = dir.join(named).canonicalize().ok();
        let own = main.and_then(|main| main.join(".git").canonicalize().ok());
        if named.is_none() || named != own {
            return Some(Unreviewed::elsewhere("it names another git directory"));
        }
        dir = main?.to_path_buf();
    }
    let repository = Repository::find(&dir)?;
    let own = main == Some(repository.work_tree.as_path());
    if !own {
        for file in [
            repository.common_dir.join("config"),
            repository.git_dir.join("config.worktree"),
        ] {
            if let Some(why) = unreviewed_config(&file, &repository) {
                return Some(Unreviewed {
                    why: format!(
                        "it runs in the repository at `{}`, not the project's own: {why}",
                        repository.work_tree.display()
                    ),
                    own,
                });
            }
        }
    }
    hooks_of(&repository, home)
        .or_else(|| match submodules {
            Submodules::Read => submodule_programs(&repository),
            Submodules::Skip => None,
        })
        .map(|why| Unreviewed { why, own })
}

/// Whether [`unreviewed_code`] reads the repository's index for its submodules, whose configuration git loads
/// when it reads their status: the index of a large repository is megabytes, so only where it matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Submodules {
    Read,
    Skip,
}

/// The most submodules whose configuration is read.
const MAX_SUBMODULES: usize = 64;

/// A checked-out submodule (a gitlink of the repository's index) whose own configuration sets a program: git
/// runs `git status` inside each submodule for `status`, `diff`, `add` and more, with that submodule's
/// configuration, which lies inside the project and which nobody reviewed.
fn submodule_programs(repository: &Repository) -> Option<String> {
    let gitlinks = match gitlinks(&repository.git_dir.join("index")) {
        Ok(paths) => paths,
        Err(why) => return Some(why),
    };
    for path in gitlinks.iter().take(MAX_SUBMODULES) {
        let dir = repository.work_tree.join(path);
        let Some(submodule) = Repository::find(&dir).filter(|found| found.work_tree == dir) else {
            continue;
        };
        for file in [
            submodule.common_dir.join("config"),
            submodule.git_dir.join("config.worktree"),
        ] {
            if let Some(why) = unreviewed_config(&file, &submodule) {
                return Some(format!(
                    "its submodule at `{}`, whose status git reads, has a configuration nobody reviewed: {why}",
                    dir.display()
                ));
            }
        }
    }
    (gitlinks.len() > MAX_SUBMODULES).then(|| {
        format!("it has more than {MAX_SUBMODULES} submodules, whose configuration was not all read")
    })
}

/// The largest index read for its gitlinks.
const MAX_INDEX: u64 = 64 * 1024 * 1024;

/// The paths of the gitlinks (mode 160000: submodules) of the git index at `path`, read as git writes it
/// (versions 2 to 4, SHA-1 or SHA-256 entries); none where there is no index. An index that cannot be read so (a
/// size past the bound, a damaged file) is an error saying why: its gitlinks are not known. Hand-written: no maintained crate reads the index without linking a git implementation.
fn gitlinks(path: &Path) -> Result<Vec<String>, String> {
    let unknown = |why: String| {
        format!(
            "its index `{}` {why}, so its submodules are not known",
            path.display()
        )
    };
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(Vec::new());
    };
    if meta.len() > MAX_INDEX {
        return Err(unknown("is too large to read".to_owned()));
    }
    let Ok(bytes) = std::fs::read(path) else {
        return Err(unknown("cannot be read".to_owned()));
    };
    index_gitlinks(&bytes, &path.with_file_name("config")).map_err(unknown)
}

/// The gitlinks of the index `bytes` of a repository whose configuration is `config` (which says the hash), or
/// what keeps them from being known, in words.
fn index_gitlinks(bytes: &[u8], config: &Path) -> Result<Vec<String>, String> {
    const TRUNCATED: &str = "ends inside an entry";
    let word = |at: usize| -> Option<u32> {
        bytes
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_be_bytes)
    };
    if bytes.get(..4) != Some(b"DIRC") {
        return Err("is not an index".to_owned());
    }
    let version = word(4).unwrap_or(0);
    if !matches!(version, 2..=4) {
        return Err(format!("is of version {version}"));
    }
    let count = word(8).unwrap_or(0) as usize;
    // The entry's fixed part: ten 32-bit fields, the object name, 16 bits of flags. Which hash the repository
    // uses decides the name's length; an entry's path then ends with 1 to 8 NULs that pad it to 8 bytes.
    let sha256 =
        std::fs::read_to_string(config).is_ok_and(|config| config.to_ascii_lowercase().contains("sha256"));
    let name_length = if sha256 { 32 } else { 20 };
    let fixed = 40 + name_length + 2;
    let mut at = 12;
    let mut found = Vec::new();
    // Version 4 writes each path as the previous one with a number of bytes taken off its end and a suffix.
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let (Some(mode), Some(flags)) = (
            word(at + 24),
            bytes
                .get(at + fixed - 2..at + fixed)
                .and_then(|b| b.try_into().ok())
                .map(u16::from_be_bytes),
        ) else {
            return Err(TRUNCATED.to_owned());
        };
        let extended = version >= 3 && flags & 0x4000 != 0;
        let mut path_at = at + fixed + if extended { 2 } else { 0 };
        let mut strip = 0usize;
        if version == 4 {
            (strip, path_at) = offset_varint(bytes, path_at).ok_or(TRUNCATED)?;
        }
        let Some(length) = bytes
            .get(path_at..)
            .and_then(|rest| rest.iter().position(|b| *b == 0))
        else {
            return Err(TRUNCATED.to_owned());
        };
        let suffix = bytes.get(path_at..path_at + length).unwrap_or_default();
        let path = if version == 4 {
            let Some(kept) = previous.len().checked_sub(strip) else {
                return Err("holds a path it cannot have".to_owned());
            };
            previous.truncate(kept);
            previous.extend_from_slice(suffix);
            previous.as_slice()
        } else {
            suffix
        };
        if mode == 0o160_000 {
            found.push(String::from_utf8_lossy(path).into_owned());
        }
        at = if version == 4 {
            path_at + length + 1
        } else {
            at + ((path_at - at + length + 8) & !7)
        };
    }
    Ok(found)
}

/// git's offset varint at `at` of `bytes` (seven bits a byte, each continuation adding one before the shift): its
/// value and where what follows it starts; `None` where the bytes end inside it or its value overflows.
fn offset_varint(bytes: &[u8], mut at: usize) -> Option<(usize, usize)> {
    let mut byte = *bytes.get(at)?;
    let mut value = usize::from(byte & 0x7f);
    at += 1;
    while byte & 0x80 != 0 {
        byte = *bytes.get(at)?;
        value = value.checked_add(1)?.checked_mul(128)? | usize::from(byte & 0x7f);
        at += 1;
    }
    Some((value, at))
}

/// Why a git command may run code nobody reviewed ([`unreviewed_code`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unreviewed {
    /// Why, in words.
    pub(crate) why: String,
    /// It is the project's own repository (only its hooks count).
    pub(crate) own: bool,
}

impl Unreviewed {
    fn elsewhere(why: &str) -> Self {
        Self {
            why: why.to_owned(),
            own: false,
        }
    }
}

/// The hooks a repository has: `core.hooksPath` set (in its configuration or the user's), an `include` or
/// `includeIf` of its configuration (which may set it), or a file in its `hooks` directory that is not one of
/// git's `.sample`s. Hooks are code the project controls (a tracked `.husky/pre-commit`, the checks `pre-commit`
/// reads from the project's configuration).
fn hooks_of(repository: &Repository, home: Option<&Path>) -> Option<String> {
    let config = repository.config(home);
    if let Some(path) = config
        .entries
        .iter()
        .rev()
        .find(|e| e.section == "core" && e.subsection.is_none() && e.key == "hookspath")
    {
        return Some(format!("`core.hooksPath` is `{}`", path.value));
    }
    if read_entries(&repository.common_dir.join("config"))
        .iter()
        .any(|e| matches!(e.section.as_str(), "include" | "includeif"))
    {
        return Some(format!(
            "`{}` includes other configuration, which may set `core.hooksPath`",
            repository.common_dir.join("config").display()
        ));
    }
    let hooks = repository.common_dir.join("hooks");
    agent_fs_sandbox::list_dir(&hooks, usize::MAX)?
        .iter()
        .find(|(name, _)| !name.to_string_lossy().ends_with(".sample"))
        .map(|(name, _)| format!("`{}` exists", hooks.join(name).display()))
}

/// The work tree of the repository that holds `dir`, if any.
pub(crate) fn work_tree(dir: &Path) -> Option<PathBuf> {
    Repository::find(dir).map(|repository| repository.work_tree)
}

/// The operands of a sub-command: its words that are not options nor their values.
fn operands(sub: &str, args: &[String]) -> Vec<String> {
    // The options of `fetch`, `pull`, `ls-remote` and `remote` that take their value as the next word.
    const VALUED: &[&str] = &[
        "--depth",
        "--deepen",
        "--shallow-since",
        "--shallow-exclude",
        "-j",
        "--jobs",
        "--upload-pack",
        "--refmap",
        "-o",
        "--server-option",
        "--negotiation-tip",
        "--recurse-submodules-default",
        "-s",
        "--strategy",
        "-X",
        "--strategy-option",
        "--sort",
        "--exec",
        "--receive-pack",
        "--push-option",
        "--repo",
    ];
    let mut out = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--" {
            out.extend(words.by_ref().cloned());
            break;
        }
        if word.starts_with('-') {
            if VALUED.contains(&word.as_str()) && sub != "submodule" {
                words.next();
            }
            continue;
        }
        out.push(word.clone());
    }
    out
}

/// The remote `name` at `url`, when the URL names a host.
fn remote(name: &str, url: &str) -> Option<Remote> {
    // git's remote-helper syntax, `TRANSPORT::ADDRESS` (`ext::sh -c …`, `fd::3`): git runs the program
    // `git-remote-TRANSPORT`, which reaches whatever it likes.
    if let Some((transport, _)) = url.split_once("::")
        && !transport.is_empty()
        && transport
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    {
        return Some(Remote {
            name: name.to_owned(),
            url: url.to_owned(),
            host: String::new(),
            transport: Transport::Helper(transport.to_ascii_lowercase()),
        });
    }
    let (host, transport) = match url.split_once("://") {
        Some((scheme, _)) => {
            let scheme = scheme.to_ascii_lowercase();
            let transport = match scheme.as_str() {
                "http" | "https" => Transport::Http,
                "file" => return None,
                other => Transport::Other(other.to_owned()),
            };
            (agent_bash_guard::url_host(url)?, transport)
        }
        // git's scp-like syntax, `[user@]host:path`: ssh. A colon after a slash is part of a local path.
        None => {
            let (user_host, _) = url.split_once(':')?;
            if user_host.contains('/') || user_host.is_empty() {
                return None;
            }
            let host = user_host.rsplit_once('@').map_or(user_host, |(_, host)| host);
            (
                agent_bash_guard::url_host(&format!("ssh://{host}/"))?,
                Transport::Other("ssh".to_owned()),
            )
        }
    };
    Some(Remote {
        name: name.to_owned(),
        url: url.to_owned(),
        host,
        transport,
    })
}

/// A repository found from a directory: where its configuration and `HEAD` are.
struct Repository {
    /// The git directory of the working tree (`.git`, or what a `.git` file names), which holds `HEAD`.
    git_dir: PathBuf,
    /// The directory shared by all working trees, which holds `config`.
    common_dir: PathBuf,
    /// The top of the working tree.
    work_tree: PathBuf,
}

impl Repository {
    /// The repository of `dir` or of the nearest directory above it with a `.git`.
    fn find(dir: &Path) -> Option<Self> {
        for top in dir.ancestors() {
            let dot_git = top.join(".git");
            let git_dir = if agent_fs_sandbox::is_dir(&dot_git) {
                dot_git
            } else if agent_fs_sandbox::is_file(&dot_git) {
                let text = read_small(&dot_git)?;
                let named = text.lines().next()?.strip_prefix("gitdir:")?.trim();
                top.join(named)
            } else {
                continue;
            };
            let common_dir = read_small(&git_dir.join("commondir"))
                .map(|c| git_dir.join(c.trim()))
                .unwrap_or_else(|| git_dir.clone());
            return Some(Self {
                git_dir,
                common_dir,
                work_tree: top.to_path_buf(),
            });
        }
        None
    }

    /// The configuration that says where remotes are: the user's global files, then the repository's own.
    fn config(&self, home: Option<&Path>) -> Config {
        let mut files = Vec::new();
        if let Some(home) = home {
            let xdg = std::env::var_os("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .filter(|dir| dir.is_absolute())
                .unwrap_or_else(|| home.join(".config"));
            files.push(xdg.join("git/config"));
            files.push(home.join(".gitconfig"));
        }
        files.push(self.common_dir.join("config"));
        Config {
            entries: files.iter().flat_map(|file| read_entries(file)).collect(),
        }
    }

    /// The current branch, when `HEAD` names one.
    fn branch(&self) -> Option<String> {
        let head = read_small(&self.git_dir.join("HEAD"))?;
        Some(head.trim().strip_prefix("ref: refs/heads/")?.to_owned())
    }
}

/// The entries of the configuration files read, in order (a later one wins for a key with one value).
#[derive(Debug, Clone, Default)]
struct Config {
    entries: Vec<Entry>,
}

impl Config {
    /// Every value of `section.subsection.key`.
    fn all_in(&self, section: &str, subsection: Option<&str>, key: &str) -> Vec<String> {
        self.entries
            .iter()
            .filter(|e| e.section == section && e.subsection.as_deref() == subsection && e.key == key)
            .map(|e| e.value.clone())
            .collect()
    }

    /// Every value of `section.*.key`, whatever the subsection.
    fn all(&self, section: &str, key: &str) -> Vec<String> {
        self.entries
            .iter()
            .filter(|e| e.section == section && e.subsection.is_some() && e.key == key)
            .map(|e| e.value.clone())
            .collect()
    }

    /// The names of the remotes that have a URL, each once.
    fn remote_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for entry in &self.entries {
            if entry.section == "remote"
                && entry.key == "url"
                && let Some(name) = &entry.subsection
                && !names.contains(name)
            {
                names.push(name.clone());
            }
        }
        names
    }

    /// The remote a command without one uses: the current branch's `branch.NAME.remote`, else `origin`.
    fn default_remote(&self, repository: &Repository) -> String {
        repository
            .branch()
            .and_then(|branch| self.all_in("branch", Some(&branch), "remote").pop())
            .filter(|remote| remote != ".")
            .unwrap_or_else(|| "origin".to_owned())
    }

    /// The remote a push without one uses: `branch.NAME.pushRemote`, `remote.pushDefault`, then as a fetch.
    fn push_remote(&self, repository: &Repository) -> String {
        let branch = repository.branch();
        branch
            .as_ref()
            .and_then(|branch| self.all_in("branch", Some(branch), "pushremote").pop())
            .or_else(|| self.all_in("remote", None, "pushdefault").pop())
            .unwrap_or_else(|| self.default_remote(repository))
    }

    /// The URLs of the remote `name` (a configured remote, else the name itself as a URL), rewritten as git does:
    /// for a push its `pushurl` values when there are any, else its `url` rewritten by `pushInsteadOf` before
    /// `insteadOf`.
    fn urls(&self, name: &str, push: bool) -> Vec<String> {
        if push {
            let push_urls = self.all_in("remote", Some(name), "pushurl");
            if !push_urls.is_empty() {
                return push_urls
                    .iter()
                    .map(|url| self.rewritten(url, "insteadof"))
                    .collect();
            }
        }
        let urls = self.all_in("remote", Some(name), "url");
        let urls = if urls.is_empty() {
            vec![name.to_owned()]
        } else {
            urls
        };
        urls.iter()
            .map(|url| {
                let pushed = self.rewritten(url, "pushinsteadof");
                if push && pushed != *url {
                    pushed
                } else {
                    self.rewritten(url, "insteadof")
                }
            })
            .collect()
    }

    /// `url` rewritten by the longest `url.BASE.KEY` (`insteadOf`, `pushInsteadOf`) that begins it.
    fn rewritten(&self, url: &str, key: &str) -> String {
        let best = self
            .entries
            .iter()
            .filter(|e| e.section == "url" && e.key == key && url.starts_with(e.value.as_str()))
            .filter_map(|e| Some((e.subsection.as_deref()?, e.value.len())))
            .max_by_key(|(_, len)| *len);
        match best {
            Some((base, len)) => format!("{base}{}", url.get(len..).unwrap_or_default()),
            None => url.to_owned(),
        }
    }
}

/// A file's text, when it is small enough to be a configuration; read once within a batch of decisions
/// (`agent_fs_sandbox::with_batch_facts`): every git command of a batch's lines reads the same few files.
fn read_small(path: &Path) -> Option<Rc<str>> {
    agent_fs_sandbox::small_file(path, MAX_FILE)
}

/// The entries of one configuration file, as git writes them: `[section]`, `[section "subsection"]` (or the old
/// `[section.subsection]`, lower case), `key = value` with quotes, escapes and `#`/`;` comments; a key alone is
/// `true`. What cannot be read names nothing.
fn read_entries(path: &Path) -> Vec<Entry> {
    read_small(path).map_or_else(Vec::new, |text| parse_entries(&text).0)
}

/// The entries of a configuration text, and whether every line was understood (a line that is no header, key,
/// comment or blank is skipped).
fn parse_entries(text: &str) -> (Vec<Entry>, bool) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut understood = true;
    let mut entries = Vec::new();
    let mut section = String::new();
    let mut subsection: Option<String> = None;
    for line in text.lines() {
        let mut line = line.trim();
        if let Some(rest) = line.strip_prefix('[') {
            let Some(end) = rest.find(']') else {
                understood = false;
                continue;
            };
            let header = rest.get(..end).unwrap_or_default();
            match header.split_once(|c: char| c.is_whitespace()) {
                Some((name, sub)) => {
                    section = name.to_ascii_lowercase();
                    let sub = sub.trim();
                    let sub = sub
                        .strip_prefix('"')
                        .and_then(|s| s.strip_suffix('"'))
                        .unwrap_or(sub);
                    subsection = Some(sub.replace("\\\"", "\"").replace("\\\\", "\\"));
                }
                None => match header.split_once('.') {
                    Some((name, sub)) => {
                        section = name.to_ascii_lowercase();
                        subsection = Some(sub.to_ascii_lowercase());
                    }
                    None => {
                        section = header.to_ascii_lowercase();
                        subsection = None;
                    }
                },
            }
            line = rest.get(end + 1..).unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
        }
        if line.starts_with(['#', ';']) || section.is_empty() {
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((key, value)) => (key.trim(), value_of(value)),
            None => (line, "true".to_owned()),
        };
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            understood = false;
            continue;
        }
        entries.push(Entry {
            section: section.clone(),
            subsection: subsection.clone(),
            key: key.to_ascii_lowercase(),
            value,
        });
    }
    (entries, understood)
}

/// The keys a configuration of a repository nobody reviewed may hold and git still runs nothing it names:
/// the repository's format, its remotes' places and refspecs, its branches' upstreams, the user's name. Any other
/// key (git has dozens that name a program: `core.fsmonitor`, `gpg.*.program`, `trailer.*.cmd`, filters, drivers,
/// aliases, `protocol.*`, `url.*.insteadOf`…) makes the repository's configuration code nobody reviewed: the list
/// is of what is known harmless, so that a key it does not know is never passed.
const HARMLESS_KEYS: &[(&str, &str)] = &[
    ("core", "repositoryformatversion"),
    ("core", "filemode"),
    ("core", "bare"),
    ("core", "logallrefupdates"),
    ("core", "ignorecase"),
    ("core", "precomposeunicode"),
    ("core", "symlinks"),
    ("core", "autocrlf"),
    ("core", "eol"),
    ("core", "safecrlf"),
    ("core", "quotepath"),
    ("remote", "url"),
    ("remote", "pushurl"),
    ("remote", "fetch"),
    ("remote", "push"),
    ("remote", "mirror"),
    ("remote", "tagopt"),
    ("remote", "prune"),
    ("branch", "remote"),
    ("branch", "merge"),
    ("branch", "rebase"),
    ("branch", "pushremote"),
    ("branch", "description"),
    ("user", "name"),
    ("user", "email"),
    ("init", "defaultbranch"),
    ("pull", "rebase"),
    ("pull", "ff"),
    ("push", "default"),
    ("push", "autosetupremote"),
    ("fetch", "prune"),
    ("extensions", "objectformat"),
    ("extensions", "worktreeconfig"),
    ("submodule", "url"),
    ("submodule", "active"),
];

/// Why the configuration file `path` of a repository nobody reviewed may make git run code: a key outside
/// [`HARMLESS_KEYS`] (or a `core.worktree` other than the repository's own), a remote reached through a remote helper (`ext::sh …`, `fd::`, any `TRANSPORT::`), a line
/// not understood, or a file too large or unreadable to tell. `None` where it holds only harmless keys or does not
/// exist.
fn unreviewed_config(path: &Path, repository: &Repository) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let shown = path.display();
    if meta.len() > MAX_FILE {
        return Some(format!("`{shown}` is too large to read"));
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        return Some(format!("`{shown}` cannot be read"));
    };
    let (entries, understood) = parse_entries(&text);
    if !understood {
        return Some(format!("`{shown}` holds a line that was not understood"));
    }
    for entry in &entries {
        let name = match &entry.subsection {
            Some(sub) => format!("{}.{sub}.{}", entry.section, entry.key),
            None => format!("{}.{}", entry.section, entry.key),
        };
        // A submodule's checkout names its own work tree from its git directory under the project's `.git`.
        let own_work_tree = entry.section == "core"
            && entry.key == "worktree"
            && repository.git_dir.join(&entry.value).canonicalize().ok()
                == repository.work_tree.canonicalize().ok();
        let known = own_work_tree
            || HARMLESS_KEYS
                .iter()
                .any(|(section, key)| *section == entry.section && *key == entry.key);
        if !known {
            return Some(format!("`{shown}` sets `{name}`"));
        }
        if matches!(entry.key.as_str(), "url" | "pushurl") && entry.value.contains("::") {
            return Some(format!(
                "`{shown}` reaches a remote through a helper (`{}`)",
                entry.value
            ));
        }
    }
    None
}

/// A value as git reads it: quotes removed, `\"`, `\\`, `\n`, `\t` unescaped, a comment outside quotes cut, the
/// blanks around it trimmed.
fn value_of(raw: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = raw.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            },
            '#' | ';' if !quoted => break,
            c => out.push(c),
        }
    }
    out.trim().to_owned()
}

#[cfg(test)]
#[path = "git_remotes_tests.rs"]
mod tests;
