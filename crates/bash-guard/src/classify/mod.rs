//! Classification of one command's words against the knowledge table: which command runs after the wrappers,
//! what class it is, whether it is read-only with these arguments, its files and the code it runs.
//!
//! Every command's options are read by the one option reader (`options.rs`) with the syntax the table gives; the
//! rules of each family of commands are in the modules below.

mod archives;
mod container;
mod files;
mod flags;
mod git;
pub use git::names_git_dir;
mod grammar;
mod inspect;
mod network;
mod parallel;
mod programs;
pub(crate) mod remote;
mod shell;
mod state;
mod system;
mod text;
mod unknown;
mod upload;
mod wrappers;

use std::collections::HashMap;
use std::sync::LazyLock;

use agent_tool_traits::Decision;
use rustc_hash::{FxBuildHasher, FxHashMap};

use crate::analysis::{AccessVia, CommandClass, Concern, Effect, LocationKind};
use crate::knowledge::{self, Kind, Recursion, Special};
use crate::options;
use crate::word::{Anchor, Word};

pub(crate) use programs::spelled_out;
pub(crate) use shell::name_operands;
pub(crate) use state::{environment_family, harmless_value, harmless_variable, is_credential};
pub(crate) use upload::reading as reading_method;

use wrappers::Unwrapped;

/// The compiled table: the built-in knowledge plus the user's extensions.
#[derive(Debug, Default)]
pub(crate) struct Table {
    /// The commands the user's extensions add or re-class; they are looked up before the built-in table.
    pub(crate) added: HashMap<String, Kind>,
    /// Word sequences the user declared read-only (`["cargo", "clippy"]`).
    pub(crate) read_only: Vec<Vec<String>>,
    /// Word sequences the user denied.
    pub(crate) deny: Vec<Vec<String>>,
    /// What blocks the network, as a reason names it; `None` when it is open.
    pub(crate) network_block: Option<&'static str>,
    /// The commands run without `CDPATH` in their environment: `cd NAME` does not search.
    pub(crate) cdpath_unset: bool,
}

/// The built-in table by command name, built once per process: the hook runs as a fresh process for every call,
/// so the map borrows the table's names instead of copying them, is sized before it is filled, and hashes with
/// FxHash: the keys are the table's own names, fixed at build time, so no input can crowd them into one place
/// (a lookup of any word costs at most a walk of the fixed table), and SipHash was most of the time spent on it.
fn builtin_kinds() -> &'static FxHashMap<&'static str, Kind> {
    static KINDS: LazyLock<FxHashMap<&'static str, Kind>> = LazyLock::new(|| {
        let count = knowledge::COMMANDS.iter().map(|(names, _)| names.len()).sum();
        let mut kinds = FxHashMap::with_capacity_and_hasher(count, FxBuildHasher);
        for (names, kind) in knowledge::COMMANDS {
            for name in *names {
                kinds.insert(*name, *kind);
            }
        }
        kinds
    });
    &KINDS
}

/// Code that a command runs, to be parsed and analysed in turn.
#[derive(Debug)]
pub(crate) struct Code {
    pub(crate) text: String,
    pub(crate) literal: bool,
    pub(crate) kind: LocationKind,
    /// What runs it, for the reason of a finding (`bash -c`).
    pub(crate) via: String,
}

/// Files a command finds under its starting points (`find DIR`, `git ls-files`): the words it prints, the files
/// `find -exec` runs a command on, or what `xargs` appends after `find … |`.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// The starting points (every file found lies below one of them, or is one).
    pub(crate) starts: Vec<Word>,
    /// Tests narrow what is found (`-name`, a pattern): not everything below the starting points.
    pub(crate) filtered: bool,
    /// Hidden files are among them.
    pub(crate) hidden: bool,
    /// Every file found has a name matching each of these globs (`find -name '*.rs'`); empty: any name.
    pub(crate) names: Vec<String>,
}

impl Found {
    /// Files found under either: the starting points of both, narrowed where either is.
    pub(crate) fn merge(&mut self, more: Found) {
        self.starts.extend(more.starts);
        self.filtered |= more.filtered;
        self.hidden |= more.hidden;
        self.names.retain(|n| more.names.contains(n));
    }
}

/// What a command reads on its standard input, as far as the line says: the words `xargs` appends.
#[derive(Debug, Clone, Default)]
pub(crate) enum Input {
    /// Only known at run time (a file, a terminal, a command's output).
    #[default]
    Unknown,
    /// Words the line gives (`echo a b |`, `<<< "$HOME"`).
    Words(Vec<Word>),
    /// Names of files found under starting points (`find . -name '*.rs' |`).
    Found(Found),
}

/// A change to the shell's state that changes how later commands of the line run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum State {
    /// `set -k`: `NAME=value` words anywhere in a command set its environment.
    Keyword,
    /// `set -a`: every assignment is exported to later commands.
    AllExport,
    /// A change the analysis does not follow: every later command of the line is not read-only, for this reason.
    Unmodelled(String),
}

/// A command given as words to another (`find -exec CMD {} ;`).
#[derive(Debug)]
pub(crate) struct Nested {
    pub(crate) kind: LocationKind,
    pub(crate) argv: Vec<Word>,
    /// What `{}` stands for.
    pub(crate) found: Option<Found>,
}

/// What the analysis concluded about one command.
#[derive(Debug)]
pub(crate) struct Classified {
    pub(crate) inner: usize,
    pub(crate) class: CommandClass,
    pub(crate) read_only: bool,
    /// Deny and ask findings, each with what it is about for the kernel sandbox.
    pub(crate) findings: Vec<(Decision, String, Concern)>,
    /// What it does beyond its files (the network's hosts are added when the classification ends).
    pub(crate) effect: Effect,
    /// Asks of the analysis's own caution (the network while it is blocked), which a user's allow rule for the
    /// command lifts.
    pub(crate) cautions: Vec<String>,
    pub(crate) reads: Vec<(Word, AccessVia)>,
    pub(crate) writes: Vec<(Word, AccessVia)>,
    /// Commands it runs given as words (`find -exec CMD ;`).
    pub(crate) argv: Vec<Nested>,
    /// Code it runs given as a string (`bash -c CODE`, `eval`, `watch`).
    pub(crate) code: Vec<Code>,
    /// Words holding arithmetic the shell evaluates (`let`), with code possibly inside.
    pub(crate) arithmetic: Vec<Word>,
    /// The command is a shell that reads its code from standard input (`bash`, `sh -s`).
    pub(crate) stdin_code: bool,
    /// The command is an interpreter that reads its program from standard input (`python3 -`, `node <<EOF`), in
    /// this language.
    pub(crate) stdin_program: Option<crate::embedded::Language>,
    /// Whether it reads every file below the directories it reads (`grep -r`, `rg`).
    pub(crate) recursive: Recursion,
    /// Its recursive reads follow the symbolic links they meet (`grep -R`, `rg -L`).
    pub(crate) follows_links: bool,
    /// Its recursive reads only reach files whose names match every one of these globs (`rg -t rust` reads
    /// `*.rs`); empty: any file.
    pub(crate) names: Vec<String>,
    /// The directory it works in, when an option or a wrapper says (`env -C DIR`, `make -C DIR`, `git -C DIR`):
    /// its relative paths are below it.
    pub(crate) directory: Option<Word>,
    /// Project files it looks for and runs as code when they exist (relative to its directory), each with
    /// whether it also looks in every directory above.
    pub(crate) loads: Vec<(Word, bool)>,
    /// Changes to the shell's state that reach later commands.
    pub(crate) state: Vec<State>,
    /// It prints without (practical) end, for this reason, unless what reads its output stops (`yes | head`).
    pub(crate) unbounded: Option<String>,
    /// How long it waits, in seconds (`sleep 5`), counted towards the line's whole wait.
    pub(crate) waits: f64,
    /// It prints the names of files found under starting points.
    pub(crate) lists: Option<Found>,
    /// It reaches the network, for this reason.
    pub(crate) network: Option<String>,
    /// Its environment holds a variable not known to be harmless (`env GIT_DIR=x git log`), for this reason.
    pub(crate) environment: Option<String>,
    /// Files it reads whose names are only known at run time, found under these starting points (`xargs cat` after
    /// `find … |`, `cat $(git ls-files)`): they stand as `{}` among its words.
    pub(crate) found: Option<Found>,
    /// It is git writing a repository by itself, and nothing else ([`crate::SubCommand::git_writes`]).
    pub(crate) git_writes: bool,
    /// No sandbox can contain it and the analysis understands every one of its words
    /// ([`crate::SubCommand::unconfinable`]).
    pub(crate) unconfinable: bool,
    /// It is git writing the working tree from another commit ([`crate::SubCommand::overwrites_ignored`]).
    pub(crate) overwrites_ignored: bool,
    /// The git directory it makes under a name it is given ([`crate::SubCommand::git_dir_made`]).
    pub(crate) git_dir_made: Option<Word>,
    /// No sandbox can contain it, but it cannot run outside one either: why ([`crate::SubCommand::confined`]).
    pub(crate) confined: Option<String>,
    /// The variables of the host's environment it passes on by name (`docker run -e NAME`).
    pub(crate) host_env: Vec<String>,
    /// Asks for the credentials of the environment it prints: the reason, and the variables it prints (none: all
    /// of them).
    pub(crate) shows: Vec<(String, Vec<String>)>,
}

impl Classified {
    fn new() -> Self {
        Self {
            inner: 0,
            class: CommandClass::Unknown,
            read_only: false,
            findings: Vec::new(),
            effect: Effect::Local,
            cautions: Vec::new(),
            reads: Vec::new(),
            writes: Vec::new(),
            argv: Vec::new(),
            code: Vec::new(),
            arithmetic: Vec::new(),
            stdin_code: false,
            stdin_program: None,
            recursive: Recursion::No,
            follows_links: false,
            names: Vec::new(),
            directory: None,
            loads: Vec::new(),
            state: Vec::new(),
            unbounded: None,
            waits: 0.0,
            lists: None,
            shows: Vec::new(),
            network: None,
            environment: None,
            found: None,
            git_writes: false,
            unconfinable: false,
            overwrites_ignored: false,
            git_dir_made: None,
            confined: None,
            host_env: Vec::new(),
        }
    }

    /// Reaches the network: never read-only, denied while the network is blocked.
    fn online(&mut self, reason: String) {
        self.network.get_or_insert(reason);
    }

    /// A shell-state change the analysis does not follow.
    fn unmodelled(&mut self, reason: String) {
        self.state.push(State::Unmodelled(reason));
    }

    /// Read-only of `class`.
    fn read_only_as(&mut self, class: CommandClass) {
        self.class = class;
        self.read_only = true;
    }

    /// Not read-only, of `class`.
    fn changes_as(&mut self, class: CommandClass) {
        self.class = class;
        self.read_only = false;
    }

    fn deny(&mut self, reason: String) {
        self.findings.push((Decision::Deny, reason, Concern::Guarded));
    }

    fn ask(&mut self, reason: String) {
        self.findings.push((Decision::Ask, reason, Concern::Guarded));
    }

    /// An ask about code or files the analysis cannot see, which the kernel sandbox bounds: whatever runs has its
    /// power and no more.
    fn ask_unseen(&mut self, reason: String) {
        self.findings.push((Decision::Ask, reason, Concern::Contained));
    }

    fn read(&mut self, word: &Word, via: AccessVia) {
        // `~user` is another user's home and `~-` the previous directory: places no path check can see.
        if word.tilde && word.anchor == Anchor::Dynamic {
            self.ask(format!(
                "reads `{}`, under another user's home or the previous directory",
                word.text
            ));
        }
        self.reads.push((word.clone(), via));
    }

    fn write(&mut self, word: &Word, via: AccessVia) {
        self.writes.push((word.clone(), via));
    }
}

/// The name a command word runs: the base name for the system's own directories, and whether it is one of them.
fn command_name(text: &str) -> (&str, bool) {
    match text.rsplit_once('/') {
        None => (text, true),
        Some((dir, base)) => {
            let dir = if dir.is_empty() { "/" } else { dir };
            (base, knowledge::SYSTEM_BIN_DIRS.contains(&dir))
        }
    }
}

/// Whether `name=value` sets a variable that changes which code later commands run.
pub(crate) fn is_code_variable(name: &str) -> bool {
    knowledge::CODE_VARIABLES
        .iter()
        .any(|pattern| match pattern.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => *pattern == name,
        })
}

/// The variable name of a `NAME=VALUE` word.
pub(crate) fn assignment_name(text: &str) -> Option<&str> {
    let (name, _) = text.split_once('=')?;
    let name = name.strip_suffix('+').unwrap_or(name);
    let name = name.split_once('[').map_or(name, |(n, _)| n);
    let mut chars = name.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() || first == '_')
        .then_some(())
        .filter(|()| chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .map(|()| name)
}

/// A command as it reads in a reason.
fn shown(name: &str, args: &[Word]) -> String {
    std::iter::once(name)
        .chain(args.iter().map(|a| a.text.as_str()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether a command stays read-only with any added arguments.
fn any_args(kind: Kind) -> bool {
    match kind {
        Kind::ReadOnly(flags) => flags.any_args,
        _ => false,
    }
}

impl Table {
    /// The class of the command `name` as the extensions and the built-in table give it, without prefixes or
    /// version suffixes.
    pub(crate) fn named(&self, name: &str) -> Option<Kind> {
        self.added
            .get(name)
            .or_else(|| builtin_kinds().get(name))
            .copied()
    }

    fn kind(&self, name: &str) -> Option<Kind> {
        if let Some(kind) = self.named(name) {
            return Some(kind);
        }
        if knowledge::DESTRUCTIVE_PREFIXES
            .iter()
            .any(|p| name.starts_with(p))
        {
            return Some(Kind::Destructive("destroys a file system"));
        }
        // `python3.12` is `python3`, `pip3.11` is `pip3`.
        let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        if base != name && knowledge::VERSIONED_INTERPRETERS.contains(&base) {
            return self.named(base);
        }
        None
    }

    fn matches(prefixes: &[Vec<String>], argv: &[Word]) -> bool {
        prefixes.iter().any(|prefix| {
            prefix.len() <= argv.len()
                && prefix.iter().zip(argv).enumerate().all(|(i, (p, w))| {
                    w.literal
                        && if i == 0 {
                            command_name(&w.text).0 == p
                        } else {
                            &w.text == p
                        }
                })
        })
    }

    /// Classifies the command `argv` (its command word first), with what its standard input holds (for `xargs`).
    pub(crate) fn classify(&self, argv: &[Word], input: &Input) -> Classified {
        let mut c = self.classify_words(argv, input, true);
        if let Some(reason) = c.network.clone() {
            c.changes_as(CommandClass::Network);
            if let Some(block) = self.network_block {
                c.cautions
                    .push(format!("{reason}, and the network is blocked by {block}"));
            }
        }
        if c.effect == Effect::Local
            && let Some((why, unconfinable)) = remote::remote(argv.get(c.inner..).unwrap_or_default())
        {
            c.effect = Effect::Remote(why);
            // Outside the sandbox the analysis is the only protection: only a command the line runs itself, each
            // of whose words it understands, may go there.
            if unconfinable {
                let runner = argv.get(..c.inner).unwrap_or_default();
                let understood = match runner.first() {
                    Some(runner) => Err(format!(
                        "it is run by `{}`, which may add words the analysis cannot see",
                        runner.text
                    )),
                    None => grammar::understood(argv.get(c.inner..).unwrap_or_default(), &mut c),
                };
                match understood {
                    Ok(()) => c.unconfinable = true,
                    Err(why) => c.confined = Some(why),
                }
            }
        }
        if c.effect == Effect::Local && c.class == CommandClass::Network {
            c.effect = Effect::Network {
                hosts: remote::hosts(argv.get(c.inner..).unwrap_or_default()),
            };
        }
        // A program neither table knows, whose words say it deletes or resets something.
        if c.effect == Effect::Local
            && c.class == CommandClass::Unknown
            && let Some(program) = argv.get(c.inner).filter(|w| w.literal)
            && let Some(verb) = unknown::destroying_verb(argv.get(c.inner + 1..).unwrap_or_default())
        {
            c.effect = Effect::Destroys(format!(
                "`{}` is a program the analysis does not know, and `{verb}` says it deletes or resets something: \
                 what and where (another system, an account, a database) no snapshot of the project holds",
                program.text
            ));
        }
        c
    }

    /// `empty_words`: also judge what runs when command words only known at run time expand to nothing (done once,
    /// not again inside that judgement, so the work stays linear).
    fn classify_words(&self, argv: &[Word], input: &Input, empty_words: bool) -> Classified {
        let mut c = Classified::new();
        let mut i = 0;
        let mut privileged = false;
        let mut via_xargs = false;
        let mut detached = false;
        let mut folded_case = false;
        loop {
            let Some(word) = argv.get(i) else {
                // A wrapper with nothing to run.
                c.inner = i.saturating_sub(1);
                break;
            };
            c.inner = i;
            if !word.literal {
                c.class = CommandClass::Unknown;
                // Not contained: a command word the analysis cannot see may be a removal of the whole project
                // (`rm$IFS-rf$IFS.`), which the kernel lets a `workspace-write` command do.
                c.ask(format!(
                    "the command word `{}` is only known at run time",
                    word.text
                ));
                // An expansion that yields no word leaves the next word as the command (`$EMPTY rm -rf ~`), and so
                // does a glob that matches nothing under `shopt -s nullglob`: what the rest would be denied for,
                // the whole is denied for.
                let vanishes = |w: &Word| !w.literal && (w.anchor == Anchor::Dynamic || w.glob);
                let command_at = argv.iter().skip(i).position(|w| !vanishes(w)).map(|k| i + k);
                if empty_words
                    && vanishes(word)
                    && let Some(tail) = command_at.and_then(|k| argv.get(k..))
                {
                    for (decision, reason, _) in self.classify_words(tail, input, false).findings {
                        if decision == Decision::Deny {
                            c.deny(format!("if `{}` expands to nothing: {reason}", word.text));
                        }
                    }
                }
                break;
            }
            let rest = argv.get(i..).unwrap_or_default();
            if Self::matches(&self.deny, rest) {
                c.deny(format!("`{}` is denied by the settings", word.text));
            }
            let (name, system) = command_name(&word.text);
            // A case-insensitive file system (macOS, Windows) finds `SUDO` as `sudo`: a name known only in lower
            // case is judged as that command, but never as read-only, since elsewhere it is another program.
            let lower = name.to_ascii_lowercase();
            let (name, folded) = match self.kind(name) {
                None if lower != name && self.kind(&lower).is_some() => (lower.as_str(), true),
                _ => (name, false),
            };
            folded_case |= folded;
            match self.kind(name) {
                Some(Kind::Wrapper(wrapper)) => {
                    if let Some(reason) = wrapper.privileged {
                        privileged = true;
                        c.deny(format!("`{name}` {reason}"));
                    }
                    detached |= wrapper.detaches;
                    match wrappers::unwrap(wrapper, argv, i, &mut c) {
                        Unwrapped::Next(next) if wrapper.input_sources => {
                            if self.parallel(wrapper, argv, i, next, input, &mut c) {
                                via_xargs = true;
                            }
                            break;
                        }
                        Unwrapped::Next(next) if next < argv.len() && wrapper.appends_input => {
                            via_xargs = true;
                            self.xargs(wrapper, argv, next, input, &mut c);
                            break;
                        }
                        Unwrapped::Next(next) if next < argv.len() => {
                            if wrapper.repeats {
                                c.unbounded =
                                    Some(format!("`{name}` runs its command again and again, without end"));
                            }
                            i = next;
                            continue;
                        }
                        Unwrapped::Next(_) | Unwrapped::NoRun => {
                            c.class = CommandClass::ReadOnly;
                            c.read_only =
                                wrapper.bare_is_read_only || argv.get(i + 1..).is_some_and(|r| !r.is_empty());
                            if wrapper.bare_prints_environment
                                && !c.findings.iter().any(|(d, ..)| *d == Decision::Deny)
                            {
                                state::prints_environment(name, &mut c);
                            }
                        }
                        Unwrapped::Code(code) => {
                            c.read_only_as(CommandClass::Exec);
                            c.code.push(code);
                            if wrapper.repeats {
                                c.unbounded =
                                    Some(format!("`{name}` runs its command again and again, without end"));
                            }
                        }
                        Unwrapped::Unknown(option) => {
                            c.class = CommandClass::Exec;
                            c.ask(format!(
                                "`{name}` option `{option}` is not known, so the command it runs cannot be found"
                            ));
                        }
                    }
                    if !wrapper.bare_is_read_only && argv.len() <= i + 1 {
                        c.read_only = false;
                    }
                    break;
                }
                kind => {
                    if kind.is_none() && Self::matches(&self.read_only, rest) {
                        c.read_only_as(CommandClass::ReadOnly);
                    } else {
                        self.effective(kind, name, rest, &mut c);
                    }
                    if !system && c.class == CommandClass::ReadOnly {
                        // `./cat` is a program of the project, not the system's `cat`.
                        c.changes_as(CommandClass::Unknown);
                    }
                    break;
                }
            }
        }
        if via_xargs && c.read_only && c.found.is_none() && matches!(input, Input::Unknown) {
            // Arguments from standard input could be options that write or run code.
            let inner_any_args = argv
                .get(c.inner)
                .and_then(|w| self.kind(command_name(&w.text).0))
                .is_some_and(any_args);
            if !inner_any_args {
                c.read_only = false;
            }
        }
        if privileged {
            c.changes_as(CommandClass::Privileged);
        }
        if detached && c.read_only {
            // The command outlives the line, and no limit of the call holds it.
            c.read_only = false;
        }
        if c.environment.is_some() {
            c.read_only = false;
        }
        if folded_case && c.read_only {
            c.changes_as(CommandClass::Unknown);
        }
        c
    }

    /// `xargs … CMD ARGS`: CMD runs with the words of its input appended (or put in place of the `-I` string).
    /// Known words are judged as the arguments they become; names of files found under starting points stand as
    /// `{}` (files below those places); anything else is a word only known at run time.
    fn xargs(
        &self,
        wrapper: &knowledge::Wrapper,
        argv: &[Word],
        next: usize,
        input: &Input,
        c: &mut Classified,
    ) {
        let wrapper_args = argv.get(..next).unwrap_or_default();
        let parsed = options::read(wrapper_args.get(1..).unwrap_or_default(), &wrapper.syntax());
        // `-a FILE`: the words come from a file, which is read.
        let from_file = parsed.options.iter().find(|o| o.is_any(&["-a", "--arg-file"]));
        let input = match from_file {
            Some(option) => {
                if let Some(file) = &option.value {
                    c.read(file, AccessVia::Flag);
                }
                &Input::Unknown
            }
            None => input,
        };
        let replace = parsed.options.iter().find_map(|o| {
            if o.is_any(&["-I", "--replace"]) || o.name == "-i" {
                Some(
                    o.value
                        .as_ref()
                        .map_or_else(|| "{}".to_owned(), |v| v.text.clone()),
                )
            } else {
                None
            }
        });
        // GNU parallel puts its arguments in place of `{}` without being asked.
        let replace = replace.or_else(|| {
            (wrapper.input_sources
                && argv
                    .get(next..)
                    .unwrap_or_default()
                    .iter()
                    .any(|w| w.text.contains("{}")))
            .then(|| "{}".to_owned())
        });
        let unknown = Word::unknown("{xargs input}");
        let found_placeholder = {
            let mut w = Word::literal("{}");
            w.literal = false;
            w
        };
        // Without `-0`, `-d` or `-I`, xargs splits its input at blanks and quotes: a found file named `a -i` gives
        // the words `./a` and `-i`, so found names may be any word, options included.
        let whole_items = parsed
            .options
            .iter()
            .any(|o| o.is_any(&["-0", "--null", "-d", "--delimiter", "-I", "-i", "--replace"]));
        // Without `-0` or `-d`, xargs also removes quotes and backslashes from its input (`echo '.g"i"t' | xargs
        // rm -rf` removes `.git`): a word the line gives with one is only known at run time.
        let raw_items = parsed
            .options
            .iter()
            .any(|o| o.is_any(&["-0", "--null", "-d", "--delimiter"]));
        let (mut appended, found): (Vec<Word>, Option<Found>) = match input {
            Input::Words(words) => (
                words
                    .iter()
                    .map(|w| {
                        if !raw_items && w.text.contains(['\'', '"', '\\']) {
                            Word::unknown(&w.text)
                        } else {
                            w.clone()
                        }
                    })
                    .collect(),
                None,
            ),
            // Everything below the starting points, the starting points themselves included.
            Input::Found(found) if !found.filtered => (found.starts.clone(), Some(found.clone())),
            Input::Found(found) => (vec![found_placeholder.clone()], Some(found.clone())),
            Input::Unknown => (vec![unknown.clone()], None),
        };
        let split_names = found.is_some() && !whole_items;
        if split_names {
            // A piece of a found name. Split at blanks, the name `./a b/c` of a file below the starting points
            // gives `./a` and `b/c`: the first piece of every name is a path below them, and the others are
            // relative names resolved from the working directory, or options (`./x -n`), or, where the walked tree
            // holds a directory whose name ends in a blank (`./x /etc/passwd`), absolute ones or ones starting
            // with `..` (`./x ../y`). The analysis assumes the files read are those below the starting points,
            // checked as the directory's reads are (secret files by name, content secrets, hidden files, what
            // `-name` narrows): a piece naming another place is spelt by the names inside the walked directory
            // itself, and reaches only what the kernel sandbox lets the line read (the roots, the system, the tool
            // chains; secret files hidden by name, nothing written). As an option, the piece is a word only known
            // at run time: the command's own option rules judge it as they judge `$X`.
            let mut piece = found_placeholder.clone();
            piece.anchor = Anchor::Dynamic;
            appended.push(piece);
        }
        let command = argv.get(next..).unwrap_or_default();
        // The items are words the line gives (`echo a b |`), not names found or input only known at run time.
        let given_words = matches!(input, Input::Words(_));
        let extend = |appended: &[Word]| -> Vec<Word> {
            let mut extended: Vec<Word> = Vec::new();
            match &replace {
                Some(token) => {
                    for word in command {
                        if word.text == *token {
                            extended.extend(appended.iter().cloned());
                        } else if word.text.contains(token.as_str())
                            && given_words
                            && !wrapper.input_sources
                            && let [one] = appended
                            && one.literal
                            && word.literal
                        {
                            // One input item the line gives, put inside a word (`sh -c 'rm -f {}'` after `echo
                            // app.db |`): the word it makes.
                            extended.push(Word::literal(&word.text.replace(token.as_str(), &one.text)));
                        } else if word.text.contains(token.as_str())
                            || (wrapper.input_sources && word.text.contains('{') && word.text.contains('}'))
                        {
                            // The input put inside a word (`.g{}t`, `{}lear`) makes a word only known at run time.
                            extended.push(Word::unknown(&word.text));
                        } else {
                            extended.push(word.clone());
                        }
                    }
                }
                None => {
                    extended.extend(command.iter().cloned());
                    extended.extend(appended.iter().cloned());
                }
            }
            extended
        };
        let mut inner = self.classify_words(&extend(&appended), &Input::Unknown, false);
        if split_names && !inner.writes.is_empty() {
            // What writes or removes through split names is judged as a write to a name only known at run time:
            // a piece that is a relative name writes where the walk never looked. What reads through them reads
            // below the starting points, as above (`rg -l X | xargs sed -i …` reads and writes its operands).
            const PIECE: &str =
                "{a piece of a found name: without -0, xargs splits names at blanks and quotes}";
            let read_piece = appended.last().cloned();
            if let Some(last) = appended.last_mut() {
                *last = Word::unknown(PIECE);
            }
            inner = self.classify_words(&extend(&appended), &Input::Unknown, false);
            if let Some(read_piece) = read_piece {
                for (w, _) in &mut inner.reads {
                    if !w.literal && w.text == PIECE {
                        *w = read_piece.clone();
                    }
                }
            }
        }
        // With `-I` each input line is one argument, blanks and all (`echo 'rm -rf /' | xargs -I{} sh -c {}`); the
        // words the line gives do not say where its lines end, so the words joined are judged as one argument too.
        if replace.is_some()
            && let Input::Words(words) = input
            && words.len() > 1
        {
            let mut line = Word::literal(
                &words
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
            );
            line.literal = words.iter().all(|w| w.literal);
            let joined = self.classify_words(&extend(&[line]), &Input::Unknown, false);
            inner.read_only &= joined.read_only;
            inner.findings.extend(joined.findings);
            inner.cautions.extend(joined.cautions);
            inner.reads.extend(joined.reads);
            inner.writes.extend(joined.writes);
            inner.argv.extend(joined.argv);
            inner.code.extend(joined.code);
            if inner.network.is_none() {
                inner.network = joined.network;
            }
            if inner.effect.contained() && !joined.effect.contained() {
                inner.effect = joined.effect;
            }
        }
        let offset = c.inner;
        let findings = std::mem::take(&mut c.findings);
        let shows = std::mem::take(&mut c.shows);
        let cautions = std::mem::take(&mut c.cautions);
        let reads = std::mem::take(&mut c.reads);
        let writes = std::mem::take(&mut c.writes);
        *c = inner;
        c.inner = (next + c.inner).min(argv.len().saturating_sub(1)).max(offset);
        c.findings.splice(0..0, findings);
        c.shows.splice(0..0, shows);
        c.cautions.splice(0..0, cautions);
        c.reads.splice(0..0, reads);
        c.writes.splice(0..0, writes);
        c.found = c.found.take().or(found);
    }
    /// GNU `parallel` at `at` of `argv`, its command (or its first input source) at `next`: the code it runs, or,
    /// for a plain command whose arguments come from standard input, what `xargs` with that command does (then
    /// returns true).
    fn parallel(
        &self,
        wrapper: &knowledge::Wrapper,
        argv: &[Word],
        at: usize,
        next: usize,
        input: &Input,
        c: &mut Classified,
    ) -> bool {
        let own = argv.get(at + 1..next).unwrap_or_default();
        let parsed = options::read(own, &wrapper.syntax());
        let remote = parsed.has(parallel::REMOTE);
        let rest = argv.get(next..).unwrap_or_default();
        let xargs = match parallel::runs(&parsed, rest, input, c) {
            parallel::Runs::Code(code) => {
                // Commands only known at run time run beside the ones the line says: parallel itself is then not
                // a command that only reads (no git writes are given beside it).
                if code.iter().any(parallel::is_unknown) {
                    c.changes_as(CommandClass::Exec);
                } else {
                    c.read_only_as(CommandClass::Exec);
                }
                c.code.extend(code);
                false
            }
            parallel::Runs::StdinCode => {
                // What a pipe feeds it is judged where the line prints it (`echo CMD |`); anything else is unseen.
                c.changes_as(CommandClass::Exec);
                c.stdin_code = true;
                false
            }
            parallel::Runs::FileCode => {
                c.class = CommandClass::Interpreter;
                false
            }
            parallel::Runs::Xargs => {
                self.xargs(wrapper, argv, next, input, c);
                true
            }
        };
        if remote {
            self.network("parallel", c);
            c.effect = Effect::Remote("`parallel --sshlogin` runs its commands on other hosts".to_owned());
        }
        xargs
    }

    /// The command after its wrappers: what its kind and arguments make it.
    fn effective(&self, kind: Option<Kind>, name: &str, argv: &[Word], c: &mut Classified) {
        let args = argv.get(1..).unwrap_or_default();
        let Some(kind) = kind else {
            c.class = CommandClass::Unknown;
            return;
        };
        match kind {
            Kind::ReadOnly(table) => {
                c.read_only_as(CommandClass::ReadOnly);
                flags::apply(table, args, c, false);
                shell::builtin(name, args, c);
                for lister in knowledge::LISTERS.iter().filter(|l| l.names.contains(&name)) {
                    if c.lists.is_none() {
                        files::lister(lister, table, args, c);
                    }
                }
            }
            Kind::Write(table) => {
                c.class = CommandClass::Write;
                flags::apply(table, args, c, true);
                c.read_only = false;
                if matches!(name, "mv" | "shred") {
                    files::moves(name, args, c);
                }
            }
            Kind::Wrapper(_) => {}
            Kind::Shell => shell::shell(args, c, name),
            Kind::Eval => shell::eval(args, c),
            Kind::Source => shell::source(name, args, c),
            Kind::Trap => shell::trap(args, c),
            Kind::Interpreter(interpreter) => programs::interpreter(interpreter, name, args, c),
            Kind::Program(program) => programs::program(program, name, args, c),
            // `gh --version`, `curl --help`: printing its version or help reaches nothing.
            Kind::Network if network::prints_only(name, args) => c.read_only_as(CommandClass::ReadOnly),
            Kind::Network => {
                self.network(name, c);
                network::reads(name, args, c);
            }
            Kind::Privileged => {
                c.class = CommandClass::Privileged;
                c.deny(format!("`{name}` runs commands as another user"));
            }
            Kind::Destructive(reason) => {
                c.class = CommandClass::Destructive;
                c.deny(format!("`{name}` {reason}"));
            }
            Kind::Editor => {
                c.class = CommandClass::Interactive;
                c.ask(format!("`{name}` opens an interactive editor"));
            }
            Kind::Interactive => c.class = CommandClass::Interactive,
            Kind::Special(special) => self.special(special, name, args, c),
        }
    }

    /// A network client: asked while the network is blocked (a caution the user's allow rule lifts), never
    /// read-only.
    fn network(&self, name: &str, c: &mut Classified) {
        c.changes_as(CommandClass::Network);
        if let Some(block) = self.network_block {
            c.cautions
                .push(format!("`{name}` uses the network, which is blocked by {block}"));
        }
    }

    fn special(&self, special: Special, name: &str, args: &[Word], c: &mut Classified) {
        match special {
            Special::Git => git::git(args, c),
            Special::Sed => text::sed(args, c),
            Special::Awk => text::awk(args, c),
            Special::Jq => text::jq(args, c),
            Special::Find => files::find(args, c),
            Special::Rm => files::rm(name, args, c),
            Special::Dd => files::dd(args, c),
            Special::Chmod => files::chmod(name, args, c),
            Special::Mktemp => files::mktemp(args, c),
            Special::Kill => system::kill(args, c),
            Special::Init => system::init(name, args, c),
            Special::Systemctl => system::systemctl(args, c),
            Special::Rsync => {
                if system::rsync(args, c) {
                    self.network(name, c);
                    c.effect = Effect::Remote(
                        "`rsync` to a host copies files to or from another machine".to_owned(),
                    );
                }
            }
            Special::Openssl => {
                if system::openssl(args, c) {
                    self.network(name, c);
                }
            }
            Special::Declare => shell::declare(name, args, c),
            Special::Set => state::set(args, c),
            Special::Shopt => state::shopt(args, c),
            Special::Alias => state::alias(args, c),
            Special::Enable => state::enable(args, c),
            Special::Setting => state::setting(args, c),
            Special::Printenv => state::printenv(args, c),
            Special::Ps => state::ps(args, c),
            Special::Tar => archives::tar(args, c),
            Special::Archive(archive) => archives::archive(archive, args, c),
            Special::Yq => text::yq(args, c),
            Special::Sqlite3 => inspect::sqlite3(args, c),
            Special::Ffprobe => inspect::ffprobe(args, c),
            Special::Tshark => inspect::tshark(args, c),
            Special::Tcpdump => inspect::tcpdump(args, c),
            Special::Container => container::container(name, args, c),
            Special::Mediainfo => inspect::mediainfo(args, c),
            Special::Exiftool => inspect::exiftool(args, c),
            Special::Cd => state::cd(name, args, self.cdpath_unset, c),
            Special::Sleep => system::sleep(args, c),
            Special::Seq => system::seq(args, c),
            Special::Factor => system::factor(args, c),
            Special::Yes => {
                c.read_only_as(CommandClass::ReadOnly);
                c.unbounded = Some("`yes` prints without end".to_owned());
            }
            Special::Let => {
                c.read_only_as(CommandClass::ReadOnly);
                c.arithmetic.extend(args.iter().cloned());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignment_names() {
        assert_eq!(assignment_name("PATH=/x"), Some("PATH"));
        assert_eq!(assignment_name("a[1]=2"), Some("a"));
        assert_eq!(assignment_name("x+=1"), Some("x"));
        assert_eq!(assignment_name("-x=1"), None);
        assert!(is_code_variable("LD_PRELOAD") && is_code_variable("PATH") && !is_code_variable("FOO"));
    }
}
