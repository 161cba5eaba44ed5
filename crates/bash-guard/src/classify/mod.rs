//! Classification of one command's words against the knowledge table: which command runs after the wrappers,
//! what class it is, whether it is read-only with these arguments, its files and the code it runs.
//!
//! Every command's options are read by the one option reader (`options.rs`) with the syntax the table gives; the
//! rules of each family of commands are in the modules below.

mod files;
mod flags;
mod git;
mod shell;
mod system;
mod text;
mod wrappers;

use std::collections::HashMap;

use agent_tool_traits::Decision;

use crate::analysis::{AccessVia, CommandClass, LocationKind};
use crate::knowledge::{self, Kind, Recursion, Special};
use crate::word::{Anchor, Word};

pub(crate) use shell::name_operands;

use wrappers::Unwrapped;

/// The compiled table: the built-in knowledge plus the user's extensions.
#[derive(Debug, Default)]
pub(crate) struct Table {
    pub(crate) kinds: HashMap<String, Kind>,
    /// Word sequences the user declared read-only (`["cargo", "clippy"]`).
    pub(crate) read_only: Vec<Vec<String>>,
    /// Word sequences the user denied.
    pub(crate) deny: Vec<Vec<String>>,
    pub(crate) network_blocked: bool,
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

/// What the analysis concluded about one command.
#[derive(Debug)]
pub(crate) struct Classified {
    pub(crate) inner: usize,
    pub(crate) class: CommandClass,
    pub(crate) read_only: bool,
    pub(crate) findings: Vec<(Decision, String)>,
    pub(crate) reads: Vec<(Word, AccessVia)>,
    pub(crate) writes: Vec<(Word, AccessVia)>,
    /// Commands it runs given as words (`find -exec CMD ;`).
    pub(crate) argv: Vec<(LocationKind, Vec<Word>)>,
    /// Code it runs given as a string (`bash -c CODE`, `eval`, `watch`).
    pub(crate) code: Vec<Code>,
    /// Words holding arithmetic the shell evaluates (`let`), with code possibly inside.
    pub(crate) arithmetic: Vec<Word>,
    /// The command is a shell that reads its code from standard input (`bash`, `sh -s`).
    pub(crate) stdin_code: bool,
    /// Whether it reads every file below the directories it reads (`grep -r`, `rg`).
    pub(crate) recursive: Recursion,
}

impl Classified {
    fn new() -> Self {
        Self {
            inner: 0,
            class: CommandClass::Unknown,
            read_only: false,
            findings: Vec::new(),
            reads: Vec::new(),
            writes: Vec::new(),
            argv: Vec::new(),
            code: Vec::new(),
            arithmetic: Vec::new(),
            stdin_code: false,
            recursive: Recursion::No,
        }
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
        self.findings.push((Decision::Deny, reason));
    }

    fn ask(&mut self, reason: String) {
        self.findings.push((Decision::Ask, reason));
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
    fn kind(&self, name: &str) -> Option<Kind> {
        if let Some(kind) = self.kinds.get(name) {
            return Some(*kind);
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
            return self.kinds.get(base).copied();
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

    /// Classifies the command `argv` (its command word first).
    pub(crate) fn classify(&self, argv: &[Word]) -> Classified {
        self.classify_words(argv, true)
    }

    /// `empty_words`: also judge what runs when command words only known at run time expand to nothing (done once,
    /// not again inside that judgement, so the work stays linear).
    fn classify_words(&self, argv: &[Word], empty_words: bool) -> Classified {
        let mut c = Classified::new();
        let mut i = 0;
        let mut privileged = false;
        let mut via_xargs = false;
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
                c.ask(format!(
                    "the command word `{}` is only known at run time",
                    word.text
                ));
                // An expansion that yields no word leaves the next word as the command (`$EMPTY rm -rf ~`): what
                // the rest would be denied for, the whole is denied for.
                let vanishes = |w: &Word| !w.literal && w.anchor == Anchor::Dynamic;
                let command_at = argv.iter().skip(i).position(|w| !vanishes(w)).map(|k| i + k);
                if empty_words
                    && vanishes(word)
                    && let Some(tail) = command_at.and_then(|k| argv.get(k..))
                {
                    for (decision, reason) in self.classify_words(tail, false).findings {
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
                    if wrapper.privileged {
                        privileged = true;
                        c.deny(format!("`{name}` runs a command as another user"));
                    }
                    via_xargs |= name == "xargs";
                    match wrappers::unwrap(wrapper, argv, i, &mut c) {
                        Unwrapped::Next(next) if next < argv.len() => {
                            i = next;
                            continue;
                        }
                        Unwrapped::Next(_) | Unwrapped::NoRun => {
                            c.class = CommandClass::ReadOnly;
                            c.read_only =
                                wrapper.bare_is_read_only || argv.get(i + 1..).is_some_and(|r| !r.is_empty());
                        }
                        Unwrapped::Code(code) => {
                            c.read_only_as(CommandClass::Exec);
                            c.code.push(code);
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
                    if via_xargs && !kind.is_some_and(any_args) && c.read_only {
                        // Arguments from standard input could be options that write or run code.
                        c.read_only = false;
                    }
                    break;
                }
            }
        }
        if privileged {
            c.changes_as(CommandClass::Privileged);
        }
        if folded_case && c.read_only {
            c.changes_as(CommandClass::Unknown);
        }
        c
    }

    /// The command after its wrappers: what its kind and arguments make it.
    fn effective(&self, kind: Option<Kind>, name: &str, argv: &[Word], c: &mut Classified) {
        let args = argv.get(1..).unwrap_or_default();
        let only_version = args.len() == 1
            && args
                .iter()
                .all(|a| knowledge::VERSION_FLAGS.contains(&a.text.as_str()));
        let Some(kind) = kind else {
            c.class = CommandClass::Unknown;
            return;
        };
        match kind {
            Kind::ReadOnly(table) => {
                c.read_only_as(CommandClass::ReadOnly);
                flags::apply(table, args, c, false);
                shell::builtin(name, args, c);
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
            Kind::Interpreter => {
                c.class = CommandClass::Interpreter;
                c.read_only = only_version;
            }
            Kind::PackageManager { read_only } => {
                c.class = CommandClass::PackageManager;
                c.read_only = only_version
                    || args
                        .first()
                        .is_some_and(|sub| sub.literal && read_only.contains(&sub.text.as_str()))
                        && args.iter().all(|a| a.literal);
            }
            Kind::Network => self.network(name, c),
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

    /// A network client: denied while the network is blocked, never read-only.
    fn network(&self, name: &str, c: &mut Classified) {
        c.changes_as(CommandClass::Network);
        if self.network_blocked {
            c.deny(format!(
                "`{name}` uses the network, which is blocked (AGENT_BLOCK_NETWORK)"
            ));
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
                }
            }
            Special::Openssl => {
                if system::openssl(args, c) {
                    self.network(name, c);
                }
            }
            Special::Declare => shell::declare(name, args, c),
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
