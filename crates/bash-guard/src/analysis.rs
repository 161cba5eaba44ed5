//! The result of analysing one shell command: what would run, what it touches, and the findings.

use agent_tool_traits::{Decision, Layer, Provenance, Verdict};
use serde::Serialize;

/// Everything bash-guard saw in one command line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CommandAnalysis {
    /// Every command that could run, in source order (a command before the commands nested in its words).
    pub commands: Vec<SubCommand>,
    /// Files the commands read, when the analysis can see them.
    pub reads: Vec<FileAccess>,
    /// Files the commands write: redirections and write options or operands.
    pub writes: Vec<FileAccess>,
    /// Files of the project that a command looks for and loads as code, or as configuration that can run code,
    /// when they exist (`rust-toolchain.toml` for `cargo --version`, `.yarnrc.yml` for `yarn --version`, another
    /// repository's `.git` for `git -C sub status`). Such a command is read-only only where none of them exists:
    /// the analysis never looks at the disk, so [`CommandAnalysis::verdict`] asks, and a caller that checks the
    /// disk decides (agent-core does). Paths are written like `reads` (relative to the working directory).
    pub loads: Vec<FileAccess>,
    /// The variables of the environment the line's words expand (`$HOME`, `$TOKEN`; not those the line sets
    /// before), each once: inside the kernel sandbox they hold what its environment filter passes, outside it
    /// whatever the caller's environment holds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub environment: Vec<String>,
    /// A command writes (or removes) files whose names only the run knows: a name only known at run time
    /// (`> "$out"`), or names a walk prints (`rg -l x | xargs rm`, `find . -exec rm {} +`, `… | while read -r f;
    /// do : > "$f"`), which a file's name can spell to reach any place the sandbox lets the line write. With git's
    /// writes given to the line, that is the repository's history, which no snapshot holds: such a line is not
    /// given them.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub writes_unseen: bool,
    /// Deny and safety-ask findings, with their reasons.
    pub findings: Vec<Finding>,
    /// The syntax error, when the command does not parse (also reported as an ask finding).
    pub parse_error: Option<String>,
    /// Problems with the configuration the analysis ran under (rejected user extensions).
    pub diagnostics: Vec<String>,
}

/// One command that could run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubCommand {
    /// The words after quote removal, exactly as the shell would pass them, wrappers included. A word only known
    /// at run time is kept as its source text (`$x`, `$(…)`).
    pub argv: Vec<String>,
    /// Where the effective command starts after unwrapping wrappers (`sudo env A=1 timeout 5 rm -rf x` → 5).
    pub inner: usize,
    /// Where the command was found.
    pub location: Location,
    /// What the effective command is.
    pub class: CommandClass,
    /// Known to be read-only with these exact arguments.
    pub read_only: bool,
    /// What it does beyond its files, for the kernel sandbox.
    pub effect: Effect,
    /// The command word is a literal (after `$'…'` decoding and escape removal).
    pub literal: bool,
    /// It reads every file below the directories it reads, or below the working directory when it names none
    /// (`grep -r`, `rg`, `diff DIR DIR`).
    pub recursive: bool,
    /// Its recursive reads include hidden files (`grep -r`, `diff`; `rg` skips names starting with `.`).
    pub reads_hidden: bool,
    /// Its recursive reads follow the symbolic links they meet, wherever they lead (`grep -R`, `rg -L`).
    pub follows_links: bool,
    /// Its recursive reads only reach files whose names match every one of these globs (`find . -name '*.rs'
    /// -exec grep … {} +` reads only `*.rs` files); empty when any file may be read.
    pub names: Vec<String>,
    /// It is git writing a repository by itself (`git add`, `git commit`, `git fetch`, `git reset`): a git
    /// sub-command that is not read-only, runs no program the line names or sets in git's configuration
    /// (`git rebase -x CMD`, `git -c core.pager=CMD`), and has no word only known at run time that may be an
    /// option running one (`git rebase $FLAGS`; `git add $FILES` has no such option). A line with one runs with the
    /// inside of the repository's git directory writable; every other line finds it read-only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub git_writes: bool,
    /// No sandbox can contain it: it acts through what only the host has (a container engine's socket, a
    /// cluster's or a cloud account's credentials, another machine's keys), so inside one it fails, and outside it
    /// does what that power allows. Its `effect` is [`Effect::Remote`], saying why.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unconfinable: bool,
    /// It is git writing the working tree from a commit other than `HEAD` (`git reset --hard REV`, `git checkout
    /// REV -- PATH`, `git checkout BRANCH`, `git switch BRANCH`, `git restore --source=REV`): git overwrites
    /// there, without asking, a file it ignores that the commit tracks, and no snapshot holds ignored files.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub overwrites_ignored: bool,
    /// It is git making a git directory under a name it is given, which need not be `.git` (`git init --bare DIR`,
    /// `git init --separate-git-dir DIR`, `git --git-dir=DIR init`, `git clone --bare`/`--mirror URL [DIR]`, `git
    /// clone --separate-git-dir DIR`): that directory, as written (below the directory of `-C`). Git obeys its
    /// `config` and hooks when the user later runs git there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_dir_made: Option<String>,
    /// No sandbox can contain it, yet it may not run outside one: why. Outside the sandbox the analysis is the only
    /// protection, so a command goes there only when the line runs it itself (no `xargs`, `env`, `find -exec`, no
    /// nesting), its standard input is not fed by the line, and the analysis understands every one of its words
    /// (each option in the program's grammar, no word only known when the shell expands it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confined: Option<String>,
}

impl SubCommand {
    /// The effective command and its arguments: `argv[inner..]`.
    pub fn effective(&self) -> &[String] {
        self.argv.get(self.inner..).unwrap_or_default()
    }

    /// The effective command's program, without its directory (`rm` for `/bin/rm`).
    pub fn program(&self) -> Option<&str> {
        let program = self.effective().first()?;
        Some(program.rsplit('/').next().unwrap_or(program))
    }
}

/// Where a command was found: the construct, how deeply it is nested, and the command it is nested in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Location {
    /// The innermost construct around the command.
    pub kind: LocationKind,
    /// 0 at the top level; each nested construct that holds code (substitution, `bash -c`, function body, …)
    /// adds one.
    pub depth: usize,
    /// The index in `commands` of the command whose words or arguments hold this one.
    pub parent: Option<usize>,
}

/// The constructs a command can be found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LocationKind {
    /// Alone at the top level.
    TopLevel,
    /// A part of a pipeline (`a | b`).
    Pipeline,
    /// A part of a list (`a && b`, `a || b`, `a; b`).
    List,
    /// Run in the background (`a &`).
    Background,
    /// Inside `( … )`.
    Subshell,
    /// Inside `{ …; }`.
    BraceGroup,
    /// The text of an alias (`alias ls='…'`), which replaces a command word where the alias is used.
    Alias,
    /// Inside `if`, `while`, `until`, `for` or `case`.
    ControlFlow,
    /// Inside `$( … )`.
    CommandSubstitution,
    /// Inside backticks.
    Backticks,
    /// Inside `<( … )` or `>( … )`.
    ProcessSubstitution,
    /// Inside `$(( … ))`, `(( … ))` or another arithmetic context.
    Arithmetic,
    /// Inside `[[ … ]]`.
    ConditionalTest,
    /// Inside a function body.
    FunctionBody,
    /// Inside an expanding here-document or here-string.
    HereDocument,
    /// The code of `bash -c`, `sh -c`, `watch`, `flock -c`, `env -S`.
    ShellString,
    /// The code of `eval`.
    Eval,
    /// The code of `trap`.
    Trap,
    /// The command of `find -exec`/`-execdir`/`-ok`/`-okdir`.
    FindExec,
    /// The body of `coproc`.
    Coprocess,
}

/// What kind of program a command is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CommandClass {
    /// Inspects files or prints; changes nothing.
    ReadOnly,
    /// Changes files.
    Write,
    /// Runs other code: a shell, `eval`, `source`, a wrapper whose command cannot be seen.
    Exec,
    /// A language interpreter.
    Interpreter,
    /// A package manager or build tool (runs repository code).
    PackageManager,
    /// A network client.
    Network,
    /// Runs as another user.
    Privileged,
    /// Stops the machine or destroys data wholesale.
    Destructive,
    /// An interactive program (editor, pager, terminal multiplexer).
    Interactive,
    /// Not in the knowledge table, or its command word is not a literal.
    Unknown,
}

impl CommandClass {
    /// A short kebab-case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::Write => "write",
            Self::Exec => "exec",
            Self::Interpreter => "interpreter",
            Self::PackageManager => "package-manager",
            Self::Network => "network",
            Self::Privileged => "privileged",
            Self::Destructive => "destructive",
            Self::Interactive => "interactive",
            Self::Unknown => "unknown",
        }
    }
}

/// A file a command reads or writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileAccess {
    /// The path after quote removal; `~` is kept, `$HOME/x` is written `~/x`, `$PWD/x` and `$(pwd)/x` are written
    /// `./x`, and a glob is kept as its pattern.
    pub path: String,
    /// The index in `commands` of the command that accesses it; `None` for a redirection of a compound command.
    pub command: Option<usize>,
    /// How the access was seen.
    pub via: AccessVia,
    /// The path is exactly what the shell passes (`false` for a home or working-directory path, which the shell
    /// expands, and for a glob pattern).
    pub literal: bool,
}

/// How a file access was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccessVia {
    /// A redirection (`> f`, `< f`).
    Redirect,
    /// An operand of the command (`cat f`, `rm f`).
    Operand,
    /// An operand of which only the name and metadata are read, or the names of a directory's entries (`ls -la f`,
    /// `stat f`, `du -sh d`, `readlink l`): never its content. A secret file's name is no secret, so only the
    /// place is checked (outside the roots it is a read like any other), not what the file holds.
    Metadata,
    /// The value of an option (`sort -o f`, `grep -f f`).
    Flag,
    /// A file the program looks for by itself where it runs (`.cargo/config.toml`), listed in `loads`.
    Discovered,
}

/// A deny or safety-ask finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// [`Decision::Deny`] or [`Decision::Ask`].
    pub decision: Decision,
    /// Why, naming the offending command or word.
    pub reason: String,
    /// The index in `commands` of the command it is about.
    pub command: Option<usize>,
    /// An ask of the analysis's own caution (a network command while the network is blocked) rather than of a
    /// protection: the user's allow rule for the command lifts it.
    pub caution: bool,
    /// What the finding is about, for the kernel sandbox: whether `workspace-write` contains it.
    pub concern: Concern,
    /// With [`Concern::Environment`]: the variables it shows (`echo $API_TOKEN`); empty when it prints the whole
    /// environment (`env`, `printenv`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<String>,
}

/// What an ask finding is about, as far as the kernel sandbox of `workspace-write` is concerned: a caller that
/// runs the line inside that sandbox may allow what it contains (`agentGuard.sandbox.autoAllow`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Concern {
    /// What the sandbox bounds: code or files the analysis cannot see (a command word, a script, a variable only
    /// known at run time: whatever runs has the sandbox's power and no more), processes left behind, time.
    Contained,
    /// The network: contained when every host the command names ([`Effect::Network`]) is a domain the sandbox's
    /// proxy lets through; hosts only known at run time meet the proxy when the command runs.
    Network,
    /// What the sandbox does not contain, or what is never done unasked: destruction, privilege, credentials
    /// shown, an interactive program, a line that cannot be parsed.
    Guarded,
    /// Credentials of the environment shown (`echo $API_TOKEN`, `env`): contained where the sandbox's environment
    /// does not pass them ([`Finding::variables`] names them; none: every variable), which a caller that knows
    /// its environment policy tells; guarded everywhere else.
    Environment,
}

/// What a command does beyond its files, as far as the kernel sandbox of `workspace-write` is concerned. Its
/// writes are in [`CommandAnalysis::writes`], where the caller sees whether they stay inside the roots.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Effect {
    /// Nothing beyond this machine: it reads, writes its files, runs code (its own or the project's).
    #[default]
    Local,
    /// It reaches the network: the hosts its words name (`curl https://x`, `git clone URL`, `pip install
    /// --index-url URL`), lower case; none when they are only known at run time (a package registry, a git remote
    /// of the configuration).
    Network {
        /// The hosts named in its words.
        hosts: Vec<String>,
    },
    /// It removes whole trees of files, or files named only at run time: its write operands (`rm -r DIR`, `find
    /// DIR -delete`, `rm {}` of `find -exec`), the working directory when it names none. Whether that deletes the
    /// project or only what a build makes again is for a caller that looks at the disk.
    RemovesTrees,
    /// It discards work that only the disk holds (`git reset --hard`, `git clean -fd`), which no sandbox brings
    /// back, though a snapshot of the working tree taken before the command does: why.
    Discards(String),
    /// It destroys what a snapshot of the working tree does not hold: files git ignores (`git clean -x`), commits,
    /// stashes, reflogs and objects (`git branch -D`, `git stash clear`, `git reflog expire`, `git prune`): why.
    Destroys(String),
    /// It changes another system, which no local sandbox can undo (`git push`, publishing a package, a deploy, a
    /// container engine, a remote shell): why.
    Remote(String),
}

impl Effect {
    /// Whether the kernel sandbox of `workspace-write` contains it whatever the disk holds: local effects, and the
    /// network where no host is named (the proxy judges those when the command runs).
    pub fn contained(&self) -> bool {
        match self {
            Self::Local => true,
            Self::Network { hosts } => hosts.is_empty(),
            Self::RemovesTrees | Self::Discards(_) | Self::Destroys(_) | Self::Remote(_) => false,
        }
    }

    /// This effect where git works in a working tree that `given` names the giver of (`the line gives git …`):
    /// what git discards there follows that tree's ignore rules, not the snapshots', so discarding destroys.
    pub(crate) fn in_working_tree(self, given: &str) -> Self {
        match self {
            Self::Discards(why) => Self::Destroys(format!(
                "{why}, in a working tree {given}, whose ignored files the snapshots of the project do not follow"
            )),
            other => other,
        }
    }
}

impl CommandAnalysis {
    /// bash-guard's own conclusion (layer [`Layer::Bash`]): deny when any finding denies; else ask when any
    /// finding asks; else allow when every command is read-only, nothing is written and no command loads a project
    /// file that may exist; else ask.
    pub fn verdict(&self) -> Verdict {
        let provenance = Provenance::layer(Layer::Bash);
        let with = |decision: Decision| -> Vec<String> {
            self.findings
                .iter()
                .filter(|f| f.decision == decision)
                .map(|f| f.reason.clone())
                .collect()
        };
        let mut verdict = if self.findings.iter().any(|f| f.decision == Decision::Deny) {
            Verdict {
                decision: Decision::Deny,
                reasons: with(Decision::Deny),
                provenance,
                diagnostics: Vec::new(),
            }
        } else if self.findings.iter().any(|f| f.decision == Decision::Ask) {
            Verdict {
                decision: Decision::Ask,
                reasons: with(Decision::Ask),
                provenance,
                diagnostics: Vec::new(),
            }
        } else if let Some(command) = self.commands.iter().find(|c| !c.read_only) {
            Verdict::new(
                Decision::Ask,
                format!("not known to be read-only: {}", command.effective().join(" ")),
                provenance,
            )
        } else if let Some(write) = self.writes.first() {
            Verdict::new(Decision::Ask, format!("writes `{}`", write.path), provenance)
        } else if let Some(load) = self.loads.first() {
            let command = load
                .command
                .and_then(|index| self.commands.get(index))
                .map_or_else(String::new, |c| c.effective().join(" "));
            Verdict::new(
                Decision::Ask,
                format!(
                    "`{command}` runs code the project controls if `{}` exists, which only a check of the disk can tell",
                    load.path
                ),
                provenance,
            )
        } else {
            Verdict::new(Decision::Allow, "every command is read-only", provenance)
        };
        verdict.diagnostics.clone_from(&self.diagnostics);
        verdict
    }

    /// Every command read-only, nothing written, no findings, no project file loaded.
    pub fn is_read_only(&self) -> bool {
        self.findings.is_empty()
            && self.writes.is_empty()
            && self.loads.is_empty()
            && self.commands.iter().all(|c| c.read_only)
    }
}

impl std::fmt::Display for LocationKind {
    /// What the construct is, for people: `pipeline`, `command substitution $(…)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::TopLevel => "top level",
            Self::Pipeline => "pipeline",
            Self::List => "list",
            Self::Background => "background &",
            Self::Subshell => "subshell ( … )",
            Self::BraceGroup => "brace group { …; }",
            Self::ControlFlow => "if/while/until/for/case",
            Self::CommandSubstitution => "command substitution $( … )",
            Self::Backticks => "backticks ` … `",
            Self::ProcessSubstitution => "process substitution <( … ) or >( … )",
            Self::Arithmetic => "arithmetic $(( … ))",
            Self::ConditionalTest => "conditional [[ … ]]",
            Self::FunctionBody => "function body",
            Self::HereDocument => "here-document",
            Self::ShellString => "shell code string (bash -c …)",
            Self::Eval => "eval",
            Self::Trap => "trap",
            Self::FindExec => "find -exec",
            Self::Coprocess => "coproc",
            Self::Alias => "alias body",
        })
    }
}

impl std::fmt::Display for CommandClass {
    /// [`CommandClass::as_str`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
