//! The table of session taint: which calls bring untrusted content in, which read private data, and which send
//! data out. Settings add to it (`agentGuard.taint`); nothing else holds a copy.

/// Places outside the roots whose files are the system's and the tool chains' own, installed the same on every
/// machine: reading them is neither untrusted content nor private data.
pub(super) const SYSTEM_PLACES: &[&str] = &[
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/bin",
    "/sbin",
    "/opt",
    "/nix/store",
    "/snap",
    "/System",
    "/Library/Developer",
    "/Applications/Xcode.app",
];

/// Places below the home directory that hold what package managers downloaded (sources of dependencies,
/// modules, caches): reading them is untrusted content (anyone can publish a package), but not private data.
pub(super) const DOWNLOADED_PLACES: &[&str] = &[
    ".cargo/registry",
    ".cargo/git",
    ".rustup",
    ".npm",
    ".pnpm-store",
    ".yarn/berry/cache",
    ".cache",
    ".m2/repository",
    ".gradle/caches",
    "go/pkg/mod",
    ".local/share/pnpm",
    ".local/lib",
    ".pyenv/versions",
    ".nvm/versions",
    ".gem",
    ".bundle",
];

/// Files outside the roots whose reads are the process's environment: private data wherever they are.
pub(super) const ENVIRONMENT_FILES: &[&str] = &["/proc/self/environ"];

/// Commands that print the environment's variables (with no command to run, for `env`): private data, since the
/// environment holds the coding agent's keys.
pub(super) const ENVIRONMENT_DUMPS: &[EnvironmentDump] = &[
    EnvironmentDump {
        command: "env",
        dumps: Dumps::WithoutCommand,
    },
    EnvironmentDump {
        command: "printenv",
        dumps: Dumps::Always,
    },
    EnvironmentDump {
        command: "export",
        dumps: Dumps::WithoutOperandOr(&["-p"]),
    },
    EnvironmentDump {
        command: "declare",
        dumps: Dumps::WithoutOperandOr(&["-p", "-x", "-px", "-xp"]),
    },
    EnvironmentDump {
        command: "typeset",
        dumps: Dumps::WithoutOperandOr(&["-p", "-x", "-px", "-xp"]),
    },
    EnvironmentDump {
        command: "set",
        dumps: Dumps::WithoutOperandOr(&[]),
    },
    EnvironmentDump {
        command: "compgen",
        dumps: Dumps::WithOption(&["-v", "-e"]),
    },
];

/// A command that prints the environment, and with which arguments.
pub(super) struct EnvironmentDump {
    /// The command word.
    pub(super) command: &'static str,
    /// With which arguments it prints the environment.
    pub(super) dumps: Dumps,
}

/// With which arguments a command prints the environment.
pub(super) enum Dumps {
    /// Always (`printenv`, `printenv HOME`).
    Always,
    /// Only when it runs no command (`env`, `env -0`; not `env A=1 make`).
    WithoutCommand,
    /// With no operand, or with one of these options alone (`export`, `export -p`).
    WithoutOperandOr(&'static [&'static str]),
    /// With one of these options (`compgen -v`).
    WithOption(&'static [&'static str]),
}

/// The subcommands of version-control and package tools that bring content from elsewhere into the session
/// (a clone, a pull, an install of packages): `(command, subcommands)`. Any shell command whose words name a host
/// (`curl https://…`, `wget`, `git clone URL`) does too.
pub(super) const FETCHING: &[(&str, &[&str])] = &[
    ("git", &["clone", "fetch", "pull", "submodule"]),
    ("gh", &["repo", "issue", "pr", "api", "release", "gist", "run"]),
    ("glab", &["repo", "issue", "mr", "api", "release"]),
    ("hg", &["clone", "pull"]),
    ("svn", &["checkout", "co", "export", "update", "up"]),
    ("npm", &["install", "i", "add", "ci", "update", "exec", "x"]),
    ("npx", &[]),
    ("pnpm", &["install", "i", "add", "update", "dlx"]),
    ("yarn", &["install", "add", "up", "dlx"]),
    ("bun", &["install", "i", "add", "x"]),
    ("bunx", &[]),
    ("pip", &["install", "download"]),
    ("pip3", &["install", "download"]),
    ("pipx", &["install", "run"]),
    ("uv", &["add", "pip", "sync", "tool"]),
    ("uvx", &[]),
    ("poetry", &["add", "install", "update"]),
    ("cargo", &["install", "add", "fetch", "update"]),
    ("go", &["get", "install", "mod"]),
    ("gem", &["install", "fetch"]),
    ("bundle", &["install", "update"]),
    ("composer", &["install", "require", "update"]),
    ("brew", &["install", "fetch"]),
    ("apt", &["install", "download", "source"]),
    ("apt-get", &["install", "download", "source"]),
    ("docker", &["pull", "run"]),
    ("podman", &["pull", "run"]),
];
