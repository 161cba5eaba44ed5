//! What a replayed command is for (its class) and whether it stays in the project, by a plain reading of its
//! words. Both are for the report only: agent-guard's decisions never see them.
//!
//! The heuristic, so that a figure can be checked by hand:
//! - The line is split into simple commands at `&&`, `||`, `;`, `|`, `&` and newlines, honouring quotes;
//!   here-document bodies are skipped, and `>`/`>>` targets are kept apart as the command's writes.
//! - The class is that of the first simple command that does something: a leading `cd`, `pushd`, `source`,
//!   `export`, `set`, `sleep` or an `echo` banner without a redirection is skipped. Its program is the first word
//!   after variable assignments and the wrappers `env`, `time`, `timeout`, `nohup`, `sudo`, `command`, `exec`,
//!   and after the runners `npx`, `bunx`, `uvx`, `pnpm dlx`, `uv run`, `poetry run`, `pipenv run`, `python -m`.
//! - The program and its first operand (the subcommand) pick the class from the tables in [`class_of`]; an `echo`,
//!   `printf` or `cat` whose output goes to a file is `edit`.
//! - A line is in the project when none of its words names a path outside it: an absolute path not below the
//!   project (other than `/dev/null` and the standard streams, and a program path such as `/usr/bin/env` in
//!   command position), a path from the home directory (`~`, `$HOME`) or a `..` component. URLs are not paths.

use agent_guard_benches::replay::PROJECT_PLACEHOLDER;

/// What a command is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Class {
    /// Compiling, linting, formatting, type checks, and running the project's own code or scripts.
    Build,
    /// Running a test suite.
    Test,
    /// Adding, removing or fetching dependencies and tools.
    Install,
    /// Git commands that only read the repository.
    GitRead,
    /// Git commands that change the repository, its index or its working tree.
    GitWrite,
    /// Commands whose purpose is the network: `curl`, `gh`, `ssh`, `git push`/`pull`/`fetch`/`clone`, deploys.
    Network,
    /// Reading and searching files, and inspecting the system.
    Read,
    /// Writing file contents: `sed -i`, `tee`, `echo … > file`, `patch`.
    Edit,
    /// Creating, moving, copying, removing files and changing their modes.
    Files,
    /// Everything else: process control, containers, loops, unknown programs.
    Other,
}

impl Class {
    /// Every class, in report order.
    pub(crate) const ALL: [Class; 10] = [
        Class::Build,
        Class::Test,
        Class::Install,
        Class::GitRead,
        Class::GitWrite,
        Class::Network,
        Class::Read,
        Class::Edit,
        Class::Files,
        Class::Other,
    ];

    /// The name the report and `--class` use.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Class::Build => "build",
            Class::Test => "test",
            Class::Install => "install",
            Class::GitRead => "git-read",
            Class::GitWrite => "git-write",
            Class::Network => "network",
            Class::Read => "read",
            Class::Edit => "edit",
            Class::Files => "files",
            Class::Other => "other",
        }
    }

    /// The class named `name`, when there is one.
    pub(crate) fn parse(name: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|class| class.name() == name)
    }
}

/// One simple command of a line: its words (quotes removed) and the files its `>`/`>>` redirections write.
#[derive(Debug, Default, PartialEq, Eq)]
struct Simple {
    words: Vec<String>,
    writes: Vec<String>,
}

/// The class of a shell line.
pub(crate) fn classify(line: &str) -> Class {
    let simples = split(line);
    let count = simples.len();
    let first = simples.iter().enumerate().find(|(index, simple)| {
        let program = simple.words.first().map(String::as_str).unwrap_or_default();
        let banner = matches!(program, "echo" | "printf") && simple.writes.is_empty() && index + 1 < count;
        !(banner || simple.words.is_empty() || PREAMBLE.contains(&program))
    });
    let Some((_, simple)) = first.or_else(|| simples.iter().enumerate().next()) else {
        return Class::Other;
    };
    let words = program_words(&simple.words);
    let writes_file = simple.writes.iter().any(|target| !target.starts_with("/dev/"));
    let class = class_of(&words);
    let program = words.first().map(String::as_str).unwrap_or_default();
    if writes_file && matches!(program, "echo" | "printf" | "cat") {
        return Class::Edit;
    }
    class
}

/// Whether no word of `line` names a path outside the project.
pub(crate) fn in_project(line: &str) -> bool {
    split(line).iter().all(|simple| {
        let operands = simple.words.iter().enumerate().filter(|(index, word)| {
            // A program named by its absolute path (`/usr/bin/env`) says where it is installed, not what it
            // touches.
            !(*index == 0 && SYSTEM_PROGRAM_DIRS.iter().any(|dir| word.starts_with(dir)))
        });
        operands
            .map(|(_, word)| word)
            .chain(&simple.writes)
            .all(|word| word_in_project(word))
    })
}

/// Programs that only set up the line for the command after them.
const PREAMBLE: &[&str] = &[
    "cd", "pushd", "popd", "source", ".", "export", "set", "unset", "sleep", "clear", "true", ":",
];

/// Where a program named by its absolute path is installed, not a file it touches.
const SYSTEM_PROGRAM_DIRS: &[&str] = &["/usr/", "/bin/", "/sbin/", "/opt/", "/nix/"];

fn word_in_project(word: &str) -> bool {
    if word.contains("://") {
        return true;
    }
    if word.starts_with('~') || word.contains("$HOME") || word.contains("${HOME}") {
        return false;
    }
    // `--out=/x` and `VAR=/x` name the path after the `=`.
    let path = match word.split_once('=') {
        Some((name, value))
            if !name.is_empty()
                && name
                    .trim_start_matches('-')
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')) =>
        {
            value
        }
        _ => word,
    };
    if path == ".." || path.starts_with("../") || path.contains("/../") || path.ends_with("/..") {
        return false;
    }
    if !path.starts_with('/') {
        return true;
    }
    let below_project = path
        .strip_prefix(PROJECT_PLACEHOLDER)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
    below_project
        || matches!(
            path,
            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/stdin" | "/dev/tty"
        )
}

/// The words of a simple command from its program on: assignments, wrappers and runners are skipped, and a
/// program named by a path is named by its file name (`/x/.venv/bin/pytest` is `pytest`).
fn program_words(words: &[String]) -> Vec<String> {
    let mut rest: &[String] = words;
    loop {
        let Some((first, tail)) = rest.split_first() else {
            return Vec::new();
        };
        let second = tail.first().map(String::as_str);
        rest = match (first.as_str(), second) {
            (word, _) if is_assignment(word) => tail,
            ("env" | "time" | "nohup" | "sudo" | "command" | "exec" | "npx" | "bunx" | "uvx", _) => {
                skip_options(tail)
            }
            ("timeout", _) => skip_options(tail).get(1..).unwrap_or_default(),
            ("uv" | "poetry" | "pipenv" | "pdm" | "hatch", Some("run")) | ("pnpm", Some("dlx" | "exec")) => {
                skip_options(tail.get(1..).unwrap_or_default())
            }
            ("python" | "python3", Some("-m")) => tail.get(1..).unwrap_or_default(),
            _ => break,
        };
    }
    let mut out: Vec<String> = rest.to_vec();
    if let Some(program) = out.first_mut().filter(|program| {
        program.starts_with('/') || program.contains("/.venv/") || program.starts_with("node_modules/")
    }) {
        *program = program.rsplit('/').next().unwrap_or_default().to_owned();
    }
    out
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn skip_options(words: &[String]) -> &[String] {
    let skip = words
        .iter()
        .take_while(|word| word.starts_with('-') || is_assignment(word))
        .count();
    words.get(skip..).unwrap_or_default()
}

/// The class of a command from its program on.
fn class_of(words: &[String]) -> Class {
    let program = words.first().map(String::as_str).unwrap_or_default();
    let args: Vec<&str> = words.iter().skip(1).map(String::as_str).collect();
    let sub = args
        .iter()
        .copied()
        .find(|arg| !arg.starts_with('-'))
        .unwrap_or_default();
    let version_query = matches!(args.as_slice(), ["--version" | "-v" | "-V" | "version"]);
    if version_query {
        return Class::Read;
    }
    match program {
        "git" => git_class(&args),
        "gh" | "curl" | "wget" | "ssh" | "scp" | "sftp" | "ftp" | "ping" | "nc" | "ncat" | "telnet"
        | "dig" | "nslookup" | "host" | "http" | "https" | "aws" | "gcloud" | "az" | "vercel" | "netlify"
        | "fly" | "flyctl" | "heroku" | "railway" | "wrangler" | "firebase" | "kubectl" | "helm"
        | "terraform" => Class::Network,
        "npm" | "pnpm" | "yarn" | "bun" => package_manager_class(program, sub, &args),
        "pip" | "pip3" | "gem" | "brew" | "apt" | "apt-get" | "conda" | "rustup" | "composer" => {
            if matches!(
                sub,
                "install"
                    | "uninstall"
                    | "add"
                    | "remove"
                    | "update"
                    | "upgrade"
                    | "require"
                    | "component"
                    | "target"
                    | "toolchain"
            ) {
                Class::Install
            } else {
                Class::Read
            }
        }
        "uv" | "poetry" | "pipenv" | "bundle" => match sub {
            "add" | "remove" | "sync" | "install" | "lock" | "update" | "pip" | "venv" => Class::Install,
            _ => Class::Build,
        },
        "cargo" => match sub {
            "test" | "nextest" => Class::Test,
            "add" | "install" | "remove" | "update" | "fetch" | "uninstall" => Class::Install,
            "search" | "publish" | "login" => Class::Network,
            _ => Class::Build,
        },
        "go" => match sub {
            "test" => Class::Test,
            "get" | "install" => Class::Install,
            "mod" if args.contains(&"download") || args.contains(&"tidy") => Class::Install,
            "env" | "version" | "list" | "doc" => Class::Read,
            _ => Class::Build,
        },
        "flutter" | "dart" | "dotnet" | "swift" | "deno" | "mix" => match sub {
            "test" => Class::Test,
            "pub" | "add" | "restore" | "deps.get" => Class::Install,
            _ => Class::Build,
        },
        "make" | "just" | "task" => {
            if matches!(sub, "test" | "check" | "tests") {
                Class::Test
            } else {
                Class::Build
            }
        }
        "pytest" | "py.test" | "tox" | "nox" | "jest" | "vitest" | "mocha" | "rspec" | "phpunit"
        | "ctest" | "cypress" => Class::Test,
        "playwright" if sub == "test" => Class::Test,
        "python" | "python3" | "node" | "tsx" | "ts-node" | "ruby" | "php" | "java" | "bash" | "sh"
        | "zsh" => {
            if sub.contains("test") {
                Class::Test
            } else {
                Class::Build
            }
        }
        "tsc" | "eslint" | "prettier" | "ruff" | "black" | "isort" | "mypy" | "pyright" | "pylint"
        | "flake8" | "golangci-lint" | "gofmt" | "goimports" | "rustfmt" | "rustc" | "gcc" | "g++" | "cc"
        | "clang" | "cmake" | "ninja" | "javac" | "mvn" | "gradle" | "./gradlew" | "xcodebuild" | "biome"
        | "stylelint" | "webpack" | "vite" | "next" | "expo" | "esbuild" | "rollup" | "turbo" | "nx"
        | "esphome" | "templ" | "air" | "shellcheck" => Class::Build,
        "sed" | "perl"
            if args
                .iter()
                .any(|arg| arg.starts_with("-i") || arg.starts_with("-pi")) =>
        {
            Class::Edit
        }
        "tee" | "patch" | "truncate" => Class::Edit,
        "find"
            if args
                .iter()
                .any(|arg| matches!(*arg, "-delete" | "-exec" | "-execdir" | "-ok")) =>
        {
            Class::Files
        }
        "mkdir" | "cp" | "mv" | "rm" | "rmdir" | "touch" | "chmod" | "chown" | "ln" | "unlink" | "tar"
        | "zip" | "unzip" | "gzip" | "gunzip" | "install" | "rsync" | "trash" => Class::Files,
        "ls" | "ll" | "cat" | "head" | "tail" | "less" | "more" | "grep" | "egrep" | "fgrep" | "rg"
        | "ag" | "find" | "fd" | "wc" | "tree" | "pwd" | "which" | "whereis" | "type" | "file" | "stat"
        | "du" | "df" | "diff" | "cmp" | "jq" | "yq" | "sort" | "uniq" | "cut" | "awk" | "sed" | "echo"
        | "printf" | "env" | "printenv" | "date" | "whoami" | "id" | "uname" | "hostname" | "ps"
        | "pgrep" | "lsof" | "top" | "free" | "uptime" | "realpath" | "readlink" | "basename" | "dirname"
        | "md5sum" | "sha256sum" | "shasum" | "xxd" | "hexdump" | "od" | "strings" | "column" | "nl"
        | "tr" | "comm" | "test" | "[" | "[[" | "man" | "perl" | "netstat" | "ss" | "nproc" | "sw_vers"
        | "system_profiler" | "otool" => Class::Read,
        path if path.starts_with("./")
            || path.starts_with(PROJECT_PLACEHOLDER)
            || path.starts_with("bin/") =>
        {
            if path.contains("test") {
                Class::Test
            } else {
                Class::Build
            }
        }
        _ => Class::Other,
    }
}

fn git_class(args: &[&str]) -> Class {
    // `git -C dir`, `git -c key=value` and `--no-pager` come before the subcommand.
    let mut rest = args;
    while let Some((first, tail)) = rest.split_first() {
        rest = match *first {
            "-C" | "-c" => tail.get(1..).unwrap_or_default(),
            option if option.starts_with('-') => tail,
            _ => break,
        };
    }
    let Some((sub, operands)) = rest.split_first() else {
        return Class::GitRead;
    };
    let plain: Vec<&str> = operands
        .iter()
        .copied()
        .filter(|arg| !arg.starts_with('-'))
        .collect();
    let reading_form = operands.is_empty()
        || operands.iter().all(|arg| {
            matches!(
                *arg,
                "-a" | "-r"
                    | "-v"
                    | "-vv"
                    | "--list"
                    | "-l"
                    | "--show-current"
                    | "--all"
                    | "--get"
                    | "--get-all"
                    | "--global"
                    | "--local"
                    | "--show-origin"
                    | "--remotes"
                    | "--merged"
                    | "--no-merged"
                    | "--contains"
                    | "--sort=-committerdate"
                    | "--format"
            ) || arg.starts_with("--format=")
                || arg.starts_with("--sort=")
        });
    match *sub {
        "status" | "log" | "diff" | "show" | "rev-parse" | "ls-files" | "ls-tree" | "blame" | "grep"
        | "describe" | "shortlog" | "reflog" | "cat-file" | "count-objects" | "check-ignore" | "name-rev"
        | "merge-base" | "for-each-ref" | "whatchanged" | "version" | "help" | "rev-list" | "var"
        | "show-ref" | "annotate" => Class::GitRead,
        "fetch" | "pull" | "push" | "clone" | "ls-remote" => Class::Network,
        "submodule" if plain.first() == Some(&"update") => Class::Network,
        "branch" | "tag" if reading_form => Class::GitRead,
        "remote" if plain.is_empty() || matches!(plain.first(), Some(&"show" | &"get-url")) => Class::GitRead,
        "stash" | "worktree" if matches!(plain.first(), Some(&"list" | &"show")) => Class::GitRead,
        "config" if reading_form || plain.len() == 1 => Class::GitRead,
        _ => Class::GitWrite,
    }
}

fn package_manager_class(program: &str, sub: &str, args: &[&str]) -> Class {
    let script = args
        .iter()
        .copied()
        .filter(|arg| !arg.starts_with('-'))
        .nth(1)
        .unwrap_or_default();
    match sub {
        "" if matches!(program, "yarn" | "pnpm" | "bun") => Class::Install,
        "install" | "i" | "ci" | "add" | "uninstall" | "remove" | "rm" | "un" | "update" | "up"
        | "upgrade" | "link" | "dedupe" | "prune" => Class::Install,
        "test" | "t" => Class::Test,
        "run" | "run-script" if script.contains("test") || script.starts_with("e2e") => Class::Test,
        "run" | "run-script" | "start" | "exec" | "build" | "dev" | "lint" | "x" => Class::Build,
        "ls" | "list" | "outdated" | "view" | "info" | "why" | "config" | "root" | "bin" | "audit"
        | "explain" | "pack" => Class::Read,
        "publish" | "login" | "whoami" | "search" | "deploy" => Class::Network,
        // `yarn build`, `pnpm lint`, `bun script.ts`: a script of the project or a file it runs.
        script_name if script_name.contains("test") => Class::Test,
        _ => Class::Build,
    }
}

/// The simple commands of `line`.
fn split(line: &str) -> Vec<Simple> {
    Lexer::new(line).run()
}

/// A small shell lexer: enough to find simple commands, their words and their output redirections.
struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    simples: Vec<Simple>,
    current: Simple,
    word: Option<String>,
    /// The next word is the target of an output redirection (`Some(true)`) or of an input one (`Some(false)`).
    redirect: Option<bool>,
    /// Here-document delimiters whose bodies start at the next newline.
    heredocs: Vec<String>,
    /// The next word is a here-document delimiter.
    heredoc_next: bool,
}

impl<'a> Lexer<'a> {
    fn new(line: &'a str) -> Self {
        Self {
            chars: line.chars().peekable(),
            simples: Vec::new(),
            current: Simple::default(),
            word: None,
            redirect: None,
            heredocs: Vec::new(),
            heredoc_next: false,
        }
    }

    fn run(mut self) -> Vec<Simple> {
        while let Some(c) = self.chars.next() {
            match c {
                '\'' => {
                    let quoted: String = self.chars.by_ref().take_while(|&c| c != '\'').collect();
                    self.push_str(&quoted);
                }
                '"' => self.double_quoted(),
                '\\' => match self.chars.next() {
                    Some('\n') | None => {}
                    Some(escaped) => self.push_str(&escaped.to_string()),
                },
                '\n' => {
                    self.end_simple();
                    self.skip_heredoc_bodies();
                }
                ';' | '&' | '|' | '(' | ')' | '{' | '}' if self.word.is_none() || c != '{' && c != '}' => {
                    if c == '&' && self.chars.peek() == Some(&'>') {
                        // `&>file`: both streams to a file.
                        continue;
                    }
                    self.end_simple();
                }
                '>' => self.output_redirect(),
                '<' => self.input_redirect(),
                c if c.is_whitespace() => self.end_word(),
                c => self.push_str(&c.to_string()),
            }
        }
        self.end_simple();
        self.simples
    }

    fn double_quoted(&mut self) {
        let mut quoted = String::new();
        while let Some(c) = self.chars.next() {
            match c {
                '"' => break,
                '\\' => {
                    if let Some(escaped) = self.chars.next() {
                        quoted.push(escaped);
                    }
                }
                c => quoted.push(c),
            }
        }
        self.push_str(&quoted);
    }

    fn output_redirect(&mut self) {
        // A file descriptor written before `>` (`2>`) is not a word.
        if self
            .word
            .as_deref()
            .is_some_and(|w| w.chars().all(|c| c.is_ascii_digit()))
        {
            self.word = None;
        }
        self.end_word();
        if self.chars.peek() == Some(&'>') {
            self.chars.next();
        }
        if self.chars.peek() == Some(&'&') {
            // `>&2`: a descriptor, not a file.
            self.chars.next();
            while self.chars.peek().is_some_and(char::is_ascii_digit) {
                self.chars.next();
            }
            return;
        }
        self.redirect = Some(true);
    }

    fn input_redirect(&mut self) {
        self.end_word();
        if self.chars.peek() == Some(&'<') {
            self.chars.next();
            if self.chars.peek() == Some(&'<') {
                // `<<<word`: a here-string, whose word is data.
                self.chars.next();
                self.redirect = Some(false);
                return;
            }
            if self.chars.peek() == Some(&'-') {
                self.chars.next();
            }
            self.heredoc_next = true;
            return;
        }
        self.redirect = Some(false);
    }

    fn skip_heredoc_bodies(&mut self) {
        for delimiter in std::mem::take(&mut self.heredocs) {
            loop {
                let line: String = self.chars.by_ref().take_while(|&c| c != '\n').collect();
                if line.trim() == delimiter || self.chars.peek().is_none() {
                    break;
                }
            }
        }
    }

    fn push_str(&mut self, text: &str) {
        self.word.get_or_insert_with(String::new).push_str(text);
    }

    fn end_word(&mut self) {
        let Some(word) = self.word.take() else {
            return;
        };
        if std::mem::take(&mut self.heredoc_next) {
            self.heredocs.push(word);
            return;
        }
        match self.redirect.take() {
            Some(true) => self.current.writes.push(word),
            // An input redirection's file is read: an operand like any other.
            Some(false) | None => self.current.words.push(word),
        }
    }

    fn end_simple(&mut self) {
        self.end_word();
        self.redirect = None;
        let simple = std::mem::take(&mut self.current);
        if !simple.words.is_empty() || !simple.writes.is_empty() {
            self.simples.push(simple);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(line: &str) -> &'static str {
        classify(line).name()
    }

    #[test]
    fn the_class_is_the_first_command_that_does_something() {
        assert_eq!(class("cd /home/user/project/app && npm test"), "test");
        assert_eq!(class("source .venv/bin/activate && pytest -x tests/"), "test");
        assert_eq!(class("echo '--- build' && cargo build --release"), "build");
        assert_eq!(
            class("sleep 2 && curl -s http://localhost:3000/health"),
            "network"
        );
        assert_eq!(class("RUST_LOG=debug timeout 60 cargo test -p x"), "test");
        assert_eq!(class("npx vitest run"), "test");
        assert_eq!(class("npx tsc --noEmit"), "build");
        assert_eq!(class("uv run pytest -q"), "test");
        assert_eq!(class("uv run python main.py"), "build");
        assert_eq!(class("python -m pytest tests/test_x.py"), "test");
        assert_eq!(class("python -m pip install requests"), "install");
        assert_eq!(class("/home/user/project/.venv/bin/pytest"), "test");
        assert_eq!(class("./gradlew assemble"), "build");
        assert_eq!(class("./run_tests.sh"), "test");
    }

    #[test]
    fn package_managers_install_test_or_run() {
        assert_eq!(class("npm install"), "install");
        assert_eq!(class("npm i -D vitest"), "install");
        assert_eq!(class("pnpm"), "install");
        assert_eq!(class("npm run build"), "build");
        assert_eq!(class("npm run test:unit"), "test");
        assert_eq!(class("pnpm lint"), "build");
        assert_eq!(class("bun test"), "test");
        assert_eq!(class("npm view react version"), "read");
        assert_eq!(class("npm --version"), "read");
        assert_eq!(class("cargo add serde"), "install");
        assert_eq!(class("go mod tidy"), "install");
        assert_eq!(class("go vet ./..."), "build");
        assert_eq!(class("pip list"), "read");
    }

    #[test]
    fn git_reads_writes_and_the_network() {
        assert_eq!(class("git status --short"), "git-read");
        assert_eq!(class("git -C sub --no-pager log --oneline -5"), "git-read");
        assert_eq!(class("git branch"), "git-read");
        assert_eq!(class("git branch -a"), "git-read");
        assert_eq!(class("git branch feature/x"), "git-write");
        assert_eq!(class("git remote -v"), "git-read");
        assert_eq!(class("git remote add origin x"), "git-write");
        assert_eq!(class("git stash list"), "git-read");
        assert_eq!(class("git stash"), "git-write");
        assert_eq!(class("git config user.name"), "git-read");
        assert_eq!(class("git config user.name A"), "git-write");
        assert_eq!(class("git add -A && git commit -m x"), "git-write");
        assert_eq!(class("git push origin main"), "network");
        assert_eq!(class("gh pr view 3"), "network");
    }

    #[test]
    fn reads_edits_and_file_management() {
        assert_eq!(class("ls -la src/"), "read");
        assert_eq!(class("grep -rn foo src | head -20"), "read");
        assert_eq!(class("find . -name '*.rs' -exec rm {} +"), "files");
        assert_eq!(class("sed -n '1,20p' src/lib.rs"), "read");
        assert_eq!(class("sed -i 's/a/b/' src/lib.rs"), "edit");
        assert_eq!(class("echo x > notes.txt"), "edit");
        assert_eq!(class("echo x 2>/dev/null"), "read");
        assert_eq!(class("cat > src/x.rs << 'EOF'\nfn main() {}\nEOF"), "edit");
        assert_eq!(class("echo done"), "read");
        assert_eq!(class("mkdir -p build && touch build/x"), "files");
        assert_eq!(class("rm -rf dist"), "files");
        assert_eq!(class("kill 123"), "other");
        assert_eq!(class("for f in *.rs; do wc -l $f; done"), "other");
    }

    #[test]
    fn a_line_leaves_the_project_through_its_paths() {
        assert!(in_project("ls -la /home/user/project/src"));
        assert!(in_project("cat src/lib.rs 2>/dev/null | head"));
        assert!(in_project("curl -s https://example.com/a/b"));
        assert!(in_project("/usr/bin/env python3 x.py"));
        assert!(in_project(
            "cat > notes.md << 'EOF'\n/etc/passwd is in the body\nEOF"
        ));
        assert!(!in_project("ls /home/user/other"));
        assert!(!in_project("cat ~/.bashrc"));
        assert!(!in_project("cp x $HOME/y"));
        assert!(!in_project("cd .. && ls"));
        assert!(!in_project("ls /tmp/build"));
        assert!(!in_project("echo x > /etc/hosts"));
        assert!(!in_project("node x.js --out=/var/tmp/y"));
        assert!(!in_project("/home/user/.local/bin/tool run"));
    }

    #[test]
    fn the_lexer_keeps_quotes_redirections_and_heredocs_apart() {
        let simples = split("a 'b c' \"d\\\"e\" 2>&1 >> out.log && f <in.txt; g <<EOF\nbody > x\nEOF\nh");
        let words: Vec<Vec<String>> = simples.iter().map(|s| s.words.clone()).collect();
        assert_eq!(
            words,
            vec![
                vec!["a".to_owned(), "b c".to_owned(), "d\"e".to_owned()],
                vec!["f".to_owned(), "in.txt".to_owned()],
                vec!["g".to_owned()],
                vec!["h".to_owned()],
            ]
        );
        assert_eq!(
            simples.first().map(|s| s.writes.clone()),
            Some(vec!["out.log".to_owned()])
        );
        assert!(simples.iter().skip(1).all(|s| s.writes.is_empty()));
    }

    #[test]
    fn every_class_has_a_name_that_parses_back() {
        for class in Class::ALL {
            assert_eq!(Class::parse(class.name()), Some(class));
        }
        assert_eq!(Class::parse("nope"), None);
    }
}
