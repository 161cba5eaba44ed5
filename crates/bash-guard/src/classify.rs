//! Classification of one command's words against the knowledge table: wrappers, options, operands, findings.

use std::collections::HashMap;

use agent_tool_traits::Decision;

use crate::analysis::{AccessVia, CommandClass, LocationKind};
use crate::analyze::{name_operands, short_options};
use crate::knowledge::{self, Effect, Flags, GitRule, Kind, Operands, Recursion, Special, Wrapper};
use crate::scripts;
use crate::word::{Anchor, Word};

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
                    match self.unwrap(wrapper, argv, i, &mut c) {
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
                            c.class = CommandClass::Exec;
                            c.read_only = true;
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
                        c.class = CommandClass::ReadOnly;
                        c.read_only = true;
                    } else {
                        self.effective(kind, name, rest, &mut c);
                    }
                    if !system && c.class == CommandClass::ReadOnly {
                        // `./cat` is a program of the project, not the system's `cat`.
                        c.class = CommandClass::Unknown;
                        c.read_only = false;
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
            c.class = CommandClass::Privileged;
            c.read_only = false;
        }
        if folded_case && c.read_only {
            c.class = CommandClass::Unknown;
            c.read_only = false;
        }
        c
    }

    fn unwrap(&self, w: &Wrapper, argv: &[Word], at: usize, c: &mut Classified) -> Unwrapped {
        let mut j = at + 1;
        let mut leading = w.leading;
        let mut exec_mode = false;
        while let Some(a) = argv.get(j) {
            if !a.literal && a.could_be_option() && leading == w.leading {
                return Unwrapped::Unknown(a.text.clone());
            }
            let t = a.text.as_str();
            if leading == 0 && w.code.contains(&t) && j > at + 1 {
                // `flock FILE -c CODE`.
                return code_of(argv.get(j + 1), LocationKind::ShellString, t);
            }
            if w.assignments
                && leading == w.leading
                && let Some(name) = assignment_name(t)
            {
                if is_code_variable(name) {
                    c.ask(format!("sets `{name}`, which changes what the command runs"));
                }
                j += 1;
                continue;
            }
            if t == "--" && leading == w.leading {
                j += 1;
                // Operands still expected after `--`.
                while leading > 0 && j < argv.len() {
                    leading -= 1;
                    j += 1;
                }
                break;
            }
            if a.literal && t.len() > 1 && t.starts_with('-') && leading == w.leading {
                if w.numeric_flags && t.get(1..).is_some_and(|n| n.chars().all(|d| d.is_ascii_digit())) {
                    j += 1;
                    continue;
                }
                let (option, attached) = match t.split_once('=') {
                    Some((o, v)) if t.starts_with("--") => (o, Some(v)),
                    _ => (t, None),
                };
                if w.no_run.contains(&option) {
                    return Unwrapped::NoRun;
                }
                if w.code.contains(&option) {
                    return match attached {
                        Some(v) => code_of(Some(&Word::literal(v)), LocationKind::ShellString, option),
                        None => code_of(argv.get(j + 1), LocationKind::ShellString, option),
                    };
                }
                exec_mode |= w.exec_flags.contains(&option);
                if w.values.contains(&option) {
                    if w.writes.contains(&option) {
                        match attached {
                            Some(v) => c.write(&Word::literal(v), AccessVia::Flag),
                            None => {
                                if let Some(v) = argv.get(j + 1) {
                                    c.write(v, AccessVia::Flag);
                                }
                            }
                        }
                    }
                    j += if attached.is_some() { 1 } else { 2 };
                    continue;
                }
                if w.flags.contains(&option) {
                    j += 1;
                    continue;
                }
                if !t.starts_with("--") {
                    // A cluster of short options, the last of which may take a value (`-n5`, `-un`).
                    exec_mode |= t
                        .chars()
                        .skip(1)
                        .any(|ch| w.exec_flags.contains(&format!("-{ch}").as_str()));
                    match short_cluster(t, w) {
                        Some(Cluster::Done) => {
                            j += 1;
                            continue;
                        }
                        Some(Cluster::ValueNext) => {
                            j += 2;
                            continue;
                        }
                        Some(Cluster::NoRun) => return Unwrapped::NoRun,
                        Some(Cluster::Code(option, Some(attached))) => {
                            return code_of(
                                Some(&Word::literal(&attached)),
                                LocationKind::ShellString,
                                &option,
                            );
                        }
                        Some(Cluster::Code(option, None)) => {
                            return code_of(argv.get(j + 1), LocationKind::ShellString, &option);
                        }
                        None => {}
                    }
                }
                return Unwrapped::Unknown(t.to_owned());
            }
            if leading > 0 {
                leading -= 1;
                j += 1;
                continue;
            }
            break;
        }
        if w.joins && !exec_mode && j < argv.len() {
            // `watch` hands its words to `sh -c` joined by spaces.
            let words = argv.get(j..).unwrap_or_default();
            let text = words
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            let literal = words.iter().all(|w| w.literal);
            return Unwrapped::Code(Code {
                text,
                literal,
                kind: LocationKind::ShellString,
                via: "watch".to_owned(),
            });
        }
        Unwrapped::Next(j)
    }

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
            Kind::ReadOnly(flags) => {
                c.class = CommandClass::ReadOnly;
                c.read_only = true;
                apply_flags(flags, args, c, false);
                // Builtins that assign variables by name (`read PATH`, `printf -v PATH …`, `printf -vPATH …`).
                if knowledge::SETS_NAMED_VARIABLES.contains(&name) {
                    for var in name_operands(name, args)
                        .iter()
                        .filter(|w| w.literal && is_code_variable(&w.text))
                    {
                        c.ask(format!(
                            "`{name}` sets `{}`, which changes what later commands run",
                            var.text
                        ));
                    }
                }
                // `printf "$FORMAT"`: a format only known at run time may be `-vNAME`, which sets any variable.
                if name == "printf" && args.first().is_some_and(Word::could_be_option) {
                    c.ask(
                        "`printf` takes a first word only known at run time, which may be `-v NAME`"
                            .to_owned(),
                    );
                }
                // `mapfile -C CODE` evaluates CODE with an index and a line of input appended, as `eval` would.
                if matches!(name, "mapfile" | "readarray") {
                    let options = short_options(args, "dnOsuCc");
                    let callbacks = options
                        .values
                        .into_iter()
                        .filter(|(letter, _)| *letter == 'C')
                        .filter_map(|(_, value)| value);
                    for callback in callbacks {
                        c.code.push(Code {
                            text: format!("{} \"$index\" \"$line\"", callback.text),
                            literal: callback.literal,
                            kind: LocationKind::Eval,
                            via: format!("{name} -C"),
                        });
                    }
                }
            }
            Kind::Write(flags) => {
                c.class = CommandClass::Write;
                apply_flags(flags, args, c, true);
                c.read_only = false;
                if matches!(name, "mv" | "shred") {
                    // Moving or shredding `/`, a system directory or home destroys it where it stands.
                    let sources: Vec<Word> = c.writes.iter().map(|(w, _)| w.clone()).collect();
                    for source in &sources {
                        let outside = source.anchor == Anchor::Home || source.text.starts_with('/');
                        if let Some(risk) = path_risk(source).filter(|_| outside) {
                            c.class = CommandClass::Destructive;
                            c.deny(format!("`{}` moves away or destroys {risk}", shown(name, args)));
                        }
                    }
                }
            }
            Kind::Wrapper(_) => {}
            Kind::Shell => shell(args, c, name),
            Kind::Eval => {
                c.class = CommandClass::Exec;
                c.read_only = true;
                let text = args.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
                let literal = args.iter().all(|w| w.literal);
                c.code.push(Code {
                    text,
                    literal,
                    kind: LocationKind::Eval,
                    via: "eval".to_owned(),
                });
            }
            Kind::Source => {
                c.class = CommandClass::Exec;
                if let Some(file) = args.first() {
                    c.read(file, AccessVia::Operand);
                    c.ask(format!(
                        "`{name} {}` runs code the analysis cannot see",
                        file.text
                    ));
                }
            }
            Kind::Trap => trap(args, c),
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

    fn network(&self, name: &str, c: &mut Classified) {
        c.class = CommandClass::Network;
        c.read_only = false;
        if self.network_blocked {
            c.deny(format!(
                "`{name}` uses the network, which is blocked (AGENT_BLOCK_NETWORK)"
            ));
        }
    }

    fn special(&self, special: Special, name: &str, args: &[Word], c: &mut Classified) {
        match special {
            Special::Git => git(args, c),
            Special::Sed => sed(args, c),
            Special::Awk => awk(args, c),
            Special::Find => find(args, c),
            Special::Rm => rm(name, args, c),
            Special::Dd => dd(args, c),
            Special::Chmod => chmod(name, args, c),
            Special::Kill => kill(args, c),
            Special::Init => {
                c.class = CommandClass::Write;
                if args.iter().any(|a| a.text == "0" || a.text == "6") {
                    c.class = CommandClass::Destructive;
                    c.deny(format!("`{name}` to runlevel 0 or 6 stops the machine"));
                }
            }
            Special::Systemctl => {
                let verb = args.iter().find(|a| !a.text.starts_with('-'));
                c.class = CommandClass::Write;
                match verb.map(|v| v.text.as_str()) {
                    Some(v) if knowledge::SYSTEMCTL_STOPS.contains(&v) => {
                        c.class = CommandClass::Destructive;
                        c.deny(format!("`systemctl {v}` stops the machine"));
                    }
                    Some(v) if knowledge::SYSTEMCTL_READS.contains(&v) => {
                        c.class = CommandClass::ReadOnly;
                        c.read_only = args.iter().all(|a| a.literal);
                    }
                    None if args.is_empty() => {
                        c.class = CommandClass::ReadOnly;
                        c.read_only = true;
                    }
                    _ => {}
                }
            }
            Special::Rsync => {
                let remote = args.iter().any(|a| {
                    !a.text.starts_with('-')
                        && (a.text.starts_with("rsync://")
                            || a.text
                                .split_once(':')
                                .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/')))
                });
                if args
                    .iter()
                    .any(|a| a.text == "-e" || a.text.starts_with("--rsh") || a.text.starts_with("-e"))
                {
                    c.ask("`rsync -e` runs a remote shell program".to_owned());
                }
                if remote {
                    self.network(name, c);
                } else {
                    c.class = CommandClass::Write;
                    let operands: Vec<&Word> = args.iter().filter(|a| !a.text.starts_with('-')).collect();
                    if let Some((last, sources)) = operands.split_last() {
                        sources.iter().for_each(|s| c.read(s, AccessVia::Operand));
                        c.write(last, AccessVia::Operand);
                    }
                }
            }
            Special::Declare => {
                c.class = CommandClass::ReadOnly;
                c.read_only = true;
                // `declare -n REF=NAME` makes every later assignment to REF an assignment to NAME, which this
                // analysis does not follow (`declare -n r=PATH; r=/tmp` sets PATH); `export -n` only un-exports.
                let nameref = name != "export"
                    && args
                        .iter()
                        .take_while(|a| a.literal && a.text.starts_with(['-', '+']) && a.text != "--")
                        .any(|a| a.text.starts_with('-') && a.text.contains('n'));
                if nameref {
                    c.ask(format!(
                        "`{name} -n` makes a name reference: later assignments set a variable the analysis does not follow"
                    ));
                }
                for a in args {
                    if let Some(var) = assignment_name(&a.text) {
                        if is_code_variable(var) {
                            c.ask(format!("sets `{var}`, which changes what later commands run"));
                        }
                    } else if !a.literal {
                        c.read_only = false;
                    }
                }
            }
            Special::Jq => jq(args, c),
            Special::Openssl => {
                c.class = CommandClass::Write;
                let sub = args.first().filter(|a| a.literal).map(|a| a.text.as_str());
                if sub.is_some_and(|s| knowledge::OPENSSL_NETWORK.contains(&s)) {
                    self.network(name, c);
                }
            }
            Special::Let => {
                c.class = CommandClass::ReadOnly;
                c.read_only = true;
                c.arithmetic.extend(args.iter().cloned());
            }
            Special::Mktemp => mktemp(args, c),
        }
    }
}

/// Whether a command stays read-only with any added arguments.
fn any_args(kind: Kind) -> bool {
    match kind {
        Kind::ReadOnly(flags) => flags.any_args,
        _ => false,
    }
}

enum Unwrapped {
    /// The command starts at this index (or there is none, when it is past the end).
    Next(usize),
    /// The wrapper runs nothing (`command -v`).
    NoRun,
    /// The wrapper runs code given as a string.
    Code(Code),
    /// An option the table does not know: where the command starts is unknown.
    Unknown(String),
}

enum Cluster {
    Done,
    ValueNext,
    NoRun,
    /// An option whose value is code (`env -S'…'`), with the value when attached.
    Code(String, Option<String>),
}

fn short_cluster(t: &str, w: &Wrapper) -> Option<Cluster> {
    let chars: Vec<char> = t.chars().skip(1).collect();
    for (k, ch) in chars.iter().enumerate() {
        let option = format!("-{ch}");
        if w.no_run.contains(&option.as_str()) {
            return Some(Cluster::NoRun);
        }
        if w.code.contains(&option.as_str()) {
            let rest: String = chars.get(k + 1..).unwrap_or_default().iter().collect();
            return Some(Cluster::Code(option, (!rest.is_empty()).then_some(rest)));
        }
        if w.values.contains(&option.as_str()) {
            return Some(if k + 1 < chars.len() {
                Cluster::Done
            } else {
                Cluster::ValueNext
            });
        }
        if !w.flags.contains(&option.as_str()) {
            return None;
        }
    }
    Some(Cluster::Done)
}

fn code_of(word: Option<&Word>, kind: LocationKind, via: &str) -> Unwrapped {
    match word {
        Some(w) => Unwrapped::Code(Code {
            text: w.text.clone(),
            literal: w.literal,
            kind,
            via: via.to_owned(),
        }),
        None => Unwrapped::NoRun,
    }
}

/// The options and operands of a command, read with its option table.
#[derive(Debug, Default)]
pub(crate) struct Scan<'a> {
    pub(crate) operands: Vec<&'a Word>,
    pub(crate) effects: Vec<(Effect, Option<Word>)>,
    /// Options seen, as written (`--list`, `-l`).
    pub(crate) present: Vec<String>,
    /// A word only known at run time sits where an option could be.
    pub(crate) dynamic: bool,
}

fn long_matches(option: &str, name: &str) -> bool {
    option == name || (name.len() >= 4 && option.starts_with(name))
}

/// Reads options and operands. Long options may be abbreviated (as getopt_long allows): an abbreviation of an
/// option with an effect has that effect.
pub(crate) fn scan<'a>(args: &'a [Word], values: &[&str], effects: &[(&str, Effect)]) -> Scan<'a> {
    let mut out = Scan::default();
    let mut i = 0;
    let mut ended = false;
    while let Some(a) = args.get(i) {
        i += 1;
        if !a.literal {
            // `--author=$(…)`: the option is known, only its value is not.
            let known_option = a.anchor == Anchor::Static
                && a.text
                    .strip_prefix("--")
                    .and_then(|t| t.split_once('='))
                    .is_some_and(|(name, _)| {
                        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                    });
            if !ended && known_option {
                let name = a
                    .text
                    .split_once('=')
                    .map_or(a.text.as_str(), |(n, _)| n)
                    .to_owned();
                let exact = effects.iter().any(|(o, _)| *o == name);
                let value = a.after(&format!("{name}="));
                for (option, effect) in effects {
                    if option.starts_with("--")
                        && (*option == name || (!exact && long_matches(option, &name)))
                    {
                        out.effects.push((*effect, Some(value.clone())));
                    }
                }
                out.present.push(name);
                continue;
            }
            if !ended && a.could_be_option() {
                out.dynamic = true;
            }
            out.operands.push(a);
            continue;
        }
        let t = a.text.as_str();
        if ended || t == "-" || !t.starts_with('-') {
            out.operands.push(a);
            continue;
        }
        if t == "--" {
            ended = true;
            continue;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (format!("--{n}"), Some(v)),
                None => (t.to_owned(), None),
            };
            let takes = values
                .iter()
                .any(|v| v.starts_with("--") && long_matches(v, &name));
            let value = match attached {
                Some(v) => Some(Word::literal(v)),
                None if takes => {
                    i += 1;
                    args.get(i - 1).cloned()
                }
                None => None,
            };
            // An exact option wins; otherwise every option the abbreviation could stand for applies.
            let exact = effects.iter().any(|(o, _)| *o == name);
            for (option, effect) in effects {
                if option.starts_with("--") && (*option == name || (!exact && long_matches(option, &name))) {
                    out.effects.push((*effect, value.clone()));
                }
            }
            out.present.push(name);
            continue;
        }
        let chars: Vec<char> = t.chars().skip(1).collect();
        for (k, ch) in chars.iter().enumerate() {
            let option = format!("-{ch}");
            let effect = effects.iter().find(|(o, _)| *o == option).map(|(_, e)| *e);
            out.present.push(option.clone());
            if values.contains(&option.as_str()) {
                let rest: String = chars.get(k + 1..).unwrap_or_default().iter().collect();
                let value = if rest.is_empty() {
                    i += 1;
                    args.get(i - 1).cloned()
                } else {
                    Some(Word::literal(&rest))
                };
                if let Some(e) = effect {
                    out.effects.push((e, value));
                }
                break;
            }
            if let Some(e) = effect {
                out.effects.push((e, None));
            }
        }
    }
    out
}

fn apply_effects(effects: &[(Effect, Option<Word>)], c: &mut Classified) -> bool {
    let mut pattern_given = false;
    for (effect, value) in effects {
        match effect {
            Effect::WriteValue => {
                c.read_only = false;
                c.class = CommandClass::Write;
                if let Some(v) = value {
                    c.write(v, AccessVia::Flag);
                }
            }
            Effect::ReadValue => {
                if let Some(v) = value {
                    c.read(v, AccessVia::Flag);
                }
                pattern_given = true;
            }
            Effect::PatternGiven => pattern_given = true,
            Effect::HiddenExec(reason) => {
                c.read_only = false;
                c.class = CommandClass::Exec;
                c.ask((*reason).to_owned());
            }
            Effect::NotReadOnly(_) => {
                c.read_only = false;
                c.class = CommandClass::Write;
            }
            Effect::Distinct => {}
            Effect::Recursive => c.recursive = Recursion::All,
        }
    }
    pattern_given
}

fn apply_flags(flags: &Flags, args: &[Word], c: &mut Classified, writes: bool) {
    c.recursive = c.recursive.max(flags.recursive);
    let s = scan(args, flags.values, flags.effects);
    if s.dynamic && !flags.any_args {
        c.read_only = false;
    }
    let pattern_given = apply_effects(&s.effects, c);
    let mut operands = s.operands.into_iter();
    match flags.operands {
        Operands::Files => operands.for_each(|o| c.read(o, AccessVia::Operand)),
        Operands::Data => {}
        Operands::PatternThenFiles => {
            if !pattern_given {
                operands.next();
            }
            operands.for_each(|o| c.read(o, AccessVia::Operand));
        }
        Operands::InputThenOutput => {
            if let Some(input) = operands.next() {
                c.read(input, AccessVia::Operand);
            }
            if let Some(output) = operands.next() {
                c.write(output, AccessVia::Operand);
                c.read_only = false;
                c.class = CommandClass::Write;
            }
        }
        Operands::NoneWhenReadOnly => {
            if operands.next().is_some() {
                c.read_only = false;
                c.class = CommandClass::Write;
            }
        }
        Operands::Written => operands.for_each(|o| c.write(o, AccessVia::Operand)),
        Operands::LastWritten => {
            let all: Vec<&Word> = operands.collect();
            let target_given = s.effects.iter().any(|(e, _)| *e == Effect::WriteValue);
            if target_given {
                all.iter().for_each(|o| c.read(o, AccessVia::Operand));
            } else if let Some((last, sources)) = all.split_last() {
                sources.iter().for_each(|o| c.read(o, AccessVia::Operand));
                c.write(last, AccessVia::Operand);
            }
        }
    }
    if writes {
        c.read_only = false;
    }
}

fn shell(args: &[Word], c: &mut Classified, name: &str) {
    c.class = CommandClass::Exec;
    let mut j = 0;
    let mut code_next = false;
    while let Some(a) = args.get(j) {
        if !a.literal {
            if a.could_be_option() {
                c.ask(format!("`{name}` options only known at run time"));
                return;
            }
            break;
        }
        let t = a.text.as_str();
        if t == "--" || t == "-" {
            j += 1;
            break;
        }
        if t.len() < 2 || !(t.starts_with('-') || t.starts_with('+')) {
            break;
        }
        if t.starts_with("--") {
            if matches!(t, "--rcfile" | "--init-file") {
                c.ask(format!(
                    "`{name} {t}` runs a start-up file the analysis cannot see"
                ));
                j += 1;
            }
            if knowledge::VERSION_FLAGS.contains(&t) && args.len() == 1 {
                c.class = CommandClass::ReadOnly;
                c.read_only = true;
                return;
            }
            j += 1;
            continue;
        }
        for ch in t.chars().skip(1) {
            match ch {
                'c' => code_next = true,
                'o' | 'O' => j += 1,
                _ => {}
            }
        }
        j += 1;
    }
    if code_next {
        if let Some(code) = args.get(j) {
            c.read_only = true;
            c.code.push(Code {
                text: code.text.clone(),
                literal: code.literal,
                kind: LocationKind::ShellString,
                via: format!("{name} -c"),
            });
        }
        return;
    }
    if let Some(script) = args.get(j) {
        c.class = CommandClass::Interpreter;
        c.read(script, AccessVia::Operand);
    } else {
        // No `-c` and no script: the shell runs what arrives on standard input.
        c.stdin_code = true;
    }
}

fn jq(args: &[Word], c: &mut Classified) {
    c.class = CommandClass::ReadOnly;
    c.read_only = true;
    let mut program_given = false;
    let mut positional_args = false;
    let mut i = 0;
    let mut operands: Vec<&Word> = Vec::new();
    while let Some(a) = args.get(i) {
        i += 1;
        let t = a.text.as_str();
        if positional_args || !a.literal || !t.starts_with('-') || t == "-" {
            if !positional_args || operands.is_empty() {
                operands.push(a);
            }
            continue;
        }
        if knowledge::JQ_PAIRS.contains(&t) {
            if matches!(t, "--slurpfile" | "--rawfile")
                && let Some(file) = args.get(i + 1)
            {
                c.read(file, AccessVia::Flag);
            }
            i += 2;
        } else if matches!(t, "-f" | "--from-file") {
            if let Some(file) = args.get(i) {
                c.read(file, AccessVia::Flag);
            }
            program_given = true;
            i += 1;
        } else if knowledge::JQ_VALUES.contains(&t) {
            i += 1;
        } else if matches!(t, "--args" | "--jsonargs") {
            // The remaining operands after the program are values, not files.
            positional_args = true;
        }
    }
    let mut operands = operands.into_iter();
    if !program_given {
        operands.next();
    }
    if !positional_args {
        operands.for_each(|o| c.read(o, AccessVia::Operand));
    }
}

fn trap(args: &[Word], c: &mut Classified) {
    c.class = CommandClass::ReadOnly;
    c.read_only = true;
    let Some(first) = args.first() else { return };
    if matches!(first.text.as_str(), "-l" | "-p" | "-" | "--") || args.len() == 1 {
        return;
    }
    c.code.push(Code {
        text: first.text.clone(),
        literal: first.literal,
        kind: LocationKind::Trap,
        via: "trap".to_owned(),
    });
}

fn git(args: &[Word], c: &mut Classified) {
    c.class = CommandClass::Write;
    let mut i = 0;
    let mut global_ok = true;
    while let Some(a) = args.get(i) {
        if !a.literal {
            global_ok = false;
            break;
        }
        let t = a.text.as_str();
        if !t.starts_with('-') {
            break;
        }
        let name = t.split_once('=').map_or(t, |(n, _)| n);
        for (option, effect) in knowledge::GIT_GLOBAL_EFFECTS {
            let hit = if option.starts_with("--") {
                long_matches(option, name)
            } else {
                *option == name
            };
            if hit {
                if let Effect::HiddenExec(reason) = effect {
                    c.ask((*reason).to_owned());
                }
                global_ok = false;
            }
        }
        if knowledge::GIT_GLOBAL_VALUES.contains(&name) {
            let value = match t.split_once('=') {
                Some((_, v)) => Some(Word::literal(v)),
                None => args.get(i + 1).cloned(),
            };
            // `git -C DIR` and `--git-dir`/`--work-tree` read the repository there, which may be outside the roots.
            if knowledge::GIT_GLOBAL_DIRS.contains(&name)
                && let Some(dir) = &value
            {
                c.read(dir, AccessVia::Flag);
            }
            i += if t.contains('=') { 1 } else { 2 };
            continue;
        }
        if !knowledge::GIT_GLOBAL_FLAGS.contains(&name) {
            global_ok = false;
        }
        i += 1;
    }
    let rest = args.get(i + 1..).unwrap_or_default();
    let s = scan(rest, knowledge::GIT_VALUES, knowledge::GIT_EFFECTS);
    c.read_only = true;
    let writes_before = c.writes.len();
    apply_effects(&s.effects, c);
    let effects_ok = c.read_only && c.writes.len() == writes_before;
    let Some(sub) = args.get(i) else {
        // `git`, `git --version`: prints.
        c.class = CommandClass::ReadOnly;
        c.read_only = global_ok;
        return;
    };
    let rule = knowledge::GIT_SUBCOMMANDS
        .iter()
        .find(|(name, _)| sub.literal && *name == sub.text)
        .map(|(_, r)| *r);
    let has = |flags: &[&str]| s.present.iter().any(|p| flags.contains(&p.as_str()));
    let sub_name = if sub.literal { sub.text.as_str() } else { "" };
    if sub_name == "grep"
        && s.present.iter().any(|p| {
            knowledge::GIT_GREP_PAGER
                .iter()
                .any(|o| p == o || (o.starts_with("--") && long_matches(o, p)))
        })
    {
        c.class = CommandClass::Exec;
        c.ask("`git grep -O` runs a pager program".to_owned());
    }
    // A format only known at run time may hold such a placeholder too.
    let signed_format = rest.iter().enumerate().any(|(k, a)| {
        let (name, value) = match a.text.split_once('=') {
            Some((name, value)) => (name, Some((value, a.literal))),
            None => (
                a.text.as_str(),
                rest.get(k + 1).map(|n| (n.text.as_str(), n.literal)),
            ),
        };
        knowledge::GIT_FORMATS.iter().any(|f| long_matches(f, name))
            && value.is_some_and(|(text, literal)| !literal || verifies_signatures(text))
    });
    if signed_format {
        c.class = CommandClass::Exec;
        c.ask("a `%G` placeholder in the format runs the signature program from configuration".to_owned());
    }
    // `git SUB --help` and `git help TOPIC` show a manual page through `man` or a configured viewer program.
    let manual = s.present.iter().any(|p| p == "--help")
        || (sub_name == "help" && s.operands.first().is_some_and(|o| !o.text.starts_with('-')));
    // `git remote show NAME` asks the remote over the network unless `-n` is given.
    let queries_remote = sub_name == "remote"
        && s.operands.first().is_some_and(|o| o.text == "show")
        && s.operands.len() > 1
        && !has(&["-n"]);
    let read_only = match rule {
        None => false,
        Some(GitRule::Always) => true,
        Some(GitRule::Listing {
            list_flags,
            write_flags,
        }) => !has(write_flags) && (s.operands.is_empty() || has(list_flags)),
        Some(GitRule::Sub { subs, bare }) => match s.operands.first() {
            None => bare,
            Some(first) => subs.contains(&first.text.as_str()),
        },
        Some(GitRule::Config) => {
            // `git config NAME` reads; `git config NAME VALUE` and the editing options write.
            has(knowledge::GIT_CONFIG_READ)
                || s.operands
                    .first()
                    .is_some_and(|o| knowledge::GIT_CONFIG_READ_SUBS.contains(&o.text.as_str()))
                || (s.operands.len() == 1 && !has(knowledge::GIT_CONFIG_WRITE))
        }
    };
    c.read_only = read_only && global_ok && effects_ok && !s.dynamic && !manual && !queries_remote;
    if c.read_only {
        c.class = CommandClass::ReadOnly;
    }
}

/// Whether a git pretty format has a `%G…` placeholder (`%%` is a literal percent sign).
fn verifies_signatures(format: &str) -> bool {
    let mut chars = format.chars();
    while let Some(ch) = chars.next() {
        // The character after `%` is consumed either way, so `%%G` is a percent sign and a `G`.
        if ch == '%' && chars.next() == Some('G') {
            return true;
        }
    }
    false
}

fn sed(args: &[Word], c: &mut Classified) {
    c.class = CommandClass::ReadOnly;
    c.read_only = true;
    let mut scripts: Vec<Word> = Vec::new();
    let mut operands: Vec<&Word> = Vec::new();
    let mut in_place = false;
    let mut i = 0;
    let mut ended = false;
    while let Some(a) = args.get(i) {
        i += 1;
        let t = a.text.as_str();
        if !a.literal {
            if !ended && a.could_be_option() {
                c.read_only = false;
            }
            operands.push(a);
            continue;
        }
        if ended || t == "-" || !t.starts_with('-') {
            operands.push(a);
            continue;
        }
        if t == "--" {
            ended = true;
            continue;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, attached) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
            let value = |i: &mut usize| match attached {
                Some(v) => Some(Word::literal(v)),
                None => {
                    *i += 1;
                    args.get(*i - 1).cloned()
                }
            };
            // getopt_long takes any prefix of a long option; an ambiguous one (`--f`: `--file` or
            // `--follow-symlinks`) is read as the option with an effect.
            let abbreviates = |full: &str| !name.is_empty() && full.starts_with(name);
            if abbreviates("in-place") {
                in_place = true;
            } else if abbreviates("expression") {
                scripts.extend(value(&mut i));
            } else if abbreviates("file") {
                if let Some(f) = value(&mut i) {
                    c.read(&f, AccessVia::Flag);
                }
                scripts.push(Word::literal(""));
                c.ask("`sed -f` runs a script file the analysis cannot see".to_owned());
            } else if abbreviates("line-length") && attached.is_none() {
                i += 1;
            }
            continue;
        }
        let chars: Vec<char> = t.chars().skip(1).collect();
        for (k, ch) in chars.iter().enumerate() {
            let rest: String = chars.get(k + 1..).unwrap_or_default().iter().collect();
            match ch {
                // `-i[SUFFIX]`, and the BSD and macOS `-I SUFFIX`: both edit the files in place.
                'i' | 'I' => {
                    in_place = true;
                    break;
                }
                'e' | 'f' | 'l' => {
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i - 1).cloned()
                    } else {
                        Some(Word::literal(&rest))
                    };
                    if *ch == 'e' {
                        scripts.extend(value);
                    } else if *ch == 'f' {
                        if let Some(f) = value {
                            c.read(&f, AccessVia::Flag);
                        }
                        scripts.push(Word::literal(""));
                        c.ask("`sed -f` runs a script file the analysis cannot see".to_owned());
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    let mut operands = operands.into_iter();
    if scripts.is_empty() {
        scripts.extend(operands.next().cloned());
    }
    for script in &scripts {
        if !script.literal {
            c.read_only = false;
            continue;
        }
        let effects = scripts::sed(&script.text);
        if effects.exec {
            c.class = CommandClass::Exec;
            c.read_only = false;
            c.ask("the sed script runs a command (`e`)".to_owned());
        }
        for file in &effects.writes {
            c.read_only = false;
            c.class = CommandClass::Write;
            c.write(&Word::literal(file), AccessVia::Operand);
        }
        for file in &effects.reads {
            c.read(&Word::literal(file), AccessVia::Operand);
        }
        if effects.unknown {
            c.read_only = false;
        }
    }
    for file in operands {
        c.read(file, AccessVia::Operand);
        if in_place {
            c.write(file, AccessVia::Operand);
        }
    }
    if in_place {
        c.read_only = false;
        c.class = CommandClass::Write;
    }
}

fn awk(args: &[Word], c: &mut Classified) {
    c.class = CommandClass::ReadOnly;
    c.read_only = true;
    let mut program: Option<Word> = None;
    let mut program_given = false;
    let mut operands: Vec<&Word> = Vec::new();
    let mut i = 0;
    let mut ended = false;
    while let Some(a) = args.get(i) {
        i += 1;
        let t = a.text.as_str();
        if !a.literal {
            if !ended && a.could_be_option() {
                c.read_only = false;
            }
            operands.push(a);
            continue;
        }
        if ended || t == "-" || !t.starts_with('-') {
            operands.push(a);
            continue;
        }
        if t == "--" {
            ended = true;
            continue;
        }
        let (mut option, mut attached) = if t.starts_with("--") {
            t.split_once('=')
                .map_or((t.to_owned(), None), |(n, v)| (n.to_owned(), Some(v.to_owned())))
        } else {
            let option = t.get(..2).unwrap_or(t);
            let rest = t.get(2..).unwrap_or_default();
            (option.to_owned(), (!rest.is_empty()).then(|| rest.to_owned()))
        };
        if option == "-W" {
            // `-W NAME[=VALUE]` is gawk's and mawk's spelling of `--NAME[=VALUE]` (`-W exec=FILE`).
            let spelled = match attached.take() {
                Some(v) => Some(v),
                None => {
                    i += 1;
                    args.get(i - 1).map(|w| w.text.clone())
                }
            };
            let spelled = spelled.unwrap_or_default();
            let (name, value) = spelled
                .split_once('=')
                .map_or((spelled.as_str(), None), |(n, v)| (n, Some(v.to_owned())));
            option = format!("--{name}");
            attached = value;
        }
        if let Some(name) = option.strip_prefix("--") {
            // getopt_long takes any prefix of a long option; an ambiguous one counts as the first with an effect.
            if let Some(full) = knowledge::AWK_LONG
                .iter()
                .find(|full| !name.is_empty() && full.starts_with(name))
            {
                option = format!("--{full}");
            }
        }
        let option = option.as_str();
        let takes = knowledge::AWK_VALUES.contains(&option);
        let value = match attached {
            Some(v) => Some(Word::literal(&v)),
            None if takes => {
                i += 1;
                args.get(i - 1).cloned()
            }
            None => None,
        };
        match option {
            "-f" | "--file" | "-E" | "--exec" => {
                program_given = true;
                if let Some(f) = &value {
                    c.read(f, AccessVia::Flag);
                }
                c.read_only = false;
                c.ask("`awk -f` runs a program file the analysis cannot see".to_owned());
            }
            "-i" | "--include" | "-l" | "--load" => {
                c.read_only = false;
                c.ask(format!("`awk {option}` loads code the analysis cannot see"));
            }
            "-e" | "--source" => {
                program_given = true;
                program = value;
            }
            "-o" | "-p" | "-d" | "-D" | "--pretty-print" | "--profile" | "--dump-variables" | "--debug" => {
                c.read_only = false;
                c.class = CommandClass::Write;
            }
            _ => {}
        }
    }
    let mut operands = operands.into_iter();
    if !program_given {
        program = operands.next().cloned();
    }
    if let Some(program) = &program {
        if program.literal {
            let effects = scripts::awk(&program.text);
            if effects.exec {
                c.class = CommandClass::Exec;
                c.read_only = false;
                c.ask("the awk program runs commands (`system()` or a pipe)".to_owned());
            }
            if effects.writes {
                c.class = CommandClass::Write;
                c.read_only = false;
                c.ask("the awk program writes files (`print > file`)".to_owned());
            }
            if effects.reads {
                c.read_only = false;
                c.ask(
                    "the awk program reads a file it names (`getline < file`), which the analysis cannot see"
                        .to_owned(),
                );
            }
        } else {
            c.read_only = false;
        }
    }
    for operand in operands {
        if assignment_name(&operand.text).is_none() {
            c.read(operand, AccessVia::Operand);
        }
    }
}

fn find(args: &[Word], c: &mut Classified) {
    c.class = CommandClass::ReadOnly;
    c.read_only = true;
    let mut i = 0;
    let mut starts: Vec<&Word> = Vec::new();
    // Leading options, then starting points up to the first expression word.
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if matches!(t, "-H" | "-L" | "-P") || t.starts_with("-O") {
            i += 1;
        } else if t == "-D" {
            i += 2;
        } else {
            break;
        }
    }
    while let Some(a) = args.get(i) {
        if a.literal && (a.text.starts_with('-') || matches!(a.text.as_str(), "(" | ")" | "!" | ",")) {
            break;
        }
        if !a.literal && a.could_be_option() {
            c.read_only = false;
        }
        starts.push(a);
        i += 1;
    }
    starts.iter().for_each(|s| c.read(s, AccessVia::Operand));
    let mut deletes = false;
    // Without a test (`-name`, `-type`, …) `-delete` removes everything under the starting points.
    let mut filtered = false;
    while let Some(a) = args.get(i) {
        i += 1;
        if !a.literal {
            c.read_only = false;
            continue;
        }
        let t = a.text.as_str();
        if knowledge::FIND_EXEC.contains(&t) {
            let mut command = Vec::new();
            let mut closed = false;
            while let Some(w) = args.get(i) {
                i += 1;
                if w.literal && (w.text == ";" || w.text == "+") {
                    closed = true;
                    break;
                }
                command.push(w.clone());
            }
            if closed && !command.is_empty() {
                c.argv.push((LocationKind::FindExec, command));
            }
        } else if t == "-delete" {
            deletes = true;
        } else if knowledge::FIND_WRITES.contains(&t) {
            if let Some(v) = args.get(i) {
                c.write(v, AccessVia::Flag);
            }
            c.read_only = false;
            c.class = CommandClass::Write;
            i += if t == "-fprintf" { 2 } else { 1 };
        } else if knowledge::FIND_VALUES.contains(&t) || t.starts_with("-newer") {
            filtered |= !knowledge::FIND_UNFILTERED.contains(&t);
            i += 1;
        } else {
            filtered |= knowledge::FIND_TESTS.contains(&t);
        }
    }
    if deletes {
        c.read_only = false;
        c.class = CommandClass::Write;
        for s in &starts {
            c.write(s, AccessVia::Operand);
            if let Some(risk) = path_risk(s).filter(|_| !filtered) {
                c.class = CommandClass::Destructive;
                c.deny(format!("`find {} -delete` removes {risk}", s.text));
            }
        }
        if starts.is_empty() && !filtered {
            c.deny("`find -delete` without a starting point removes the whole project".to_owned());
        }
    }
}

/// `mktemp [-d] [-p DIR|--tmpdir[=DIR]|-t] [TEMPLATE]` creates the file (or directory) it names: in the current
/// directory for a template alone, in DIR, or in the temporary directory; `-u`/`--dry-run` only prints a name.
fn mktemp(args: &[Word], c: &mut Classified) {
    c.class = CommandClass::Write;
    let mut dry_run = false;
    let mut dir: Option<Word> = None;
    let mut in_temp = false;
    let mut template: Option<&Word> = None;
    let mut i = 0;
    let mut ended = false;
    while let Some(a) = args.get(i) {
        i += 1;
        let t = a.text.as_str();
        if !a.literal && !ended && a.could_be_option() {
            // An option only known at run time may be any of them: a write as well.
            continue;
        }
        if ended || !a.literal || !t.starts_with('-') || t == "-" {
            template = template.or(Some(a));
            continue;
        }
        if t == "--" {
            ended = true;
        } else if let Some(long) = t.strip_prefix("--") {
            let (name, value) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
            if name.len() >= 3 && "dry-run".starts_with(name) {
                dry_run = true;
            } else if name.len() >= 3 && "tmpdir".starts_with(name) {
                in_temp = true;
                dir = value.filter(|v| !v.is_empty()).map(Word::literal);
            } else if name.len() >= 3 && "suffix".starts_with(name) && value.is_none() {
                i += 1;
            }
        } else {
            let chars: Vec<char> = t.chars().skip(1).collect();
            for (k, ch) in chars.iter().enumerate() {
                match ch {
                    'u' => dry_run = true,
                    't' => in_temp = true,
                    'p' => {
                        in_temp = true;
                        let rest: String = chars.get(k + 1..).unwrap_or_default().iter().collect();
                        dir = if rest.is_empty() {
                            i += 1;
                            args.get(i - 1).cloned()
                        } else {
                            Some(Word::literal(&rest))
                        };
                        break;
                    }
                    _ => {}
                }
            }
        }
    }
    if dry_run {
        c.class = CommandClass::ReadOnly;
        c.read_only = true;
        return;
    }
    c.read_only = false;
    // The system's temporary directory (`TMPDIR`, else `/tmp`) is where temporary files belong: creating one there
    // is a write to ask about, not a path for the sandbox to refuse as outside the roots.
    let name = template.map_or("tmp.XXXXXXXXXX", |t| t.text.as_str());
    match (dir, in_temp, template) {
        (Some(dir), _, _) if dir.literal && template.is_none_or(|t| t.literal) => {
            let path = format!("{}/{name}", dir.text.trim_end_matches('/'));
            c.write(&Word::literal(&path), AccessVia::Operand);
        }
        (Some(dir), _, _) => c.write(&dir, AccessVia::Flag),
        (None, false, Some(template)) => c.write(template, AccessVia::Operand),
        (None, true, _) | (None, false, None) => {}
    }
}

fn rm(name: &str, args: &[Word], c: &mut Classified) {
    c.class = CommandClass::Write;
    let s = scan(args, &["--interactive"], &[]);
    let recursive_or_forced = s.present.iter().any(|p| {
        matches!(
            p.as_str(),
            "-r" | "-R" | "-f" | "--recursive" | "--force" | "--no-preserve-root"
        ) || long_matches("--recursive", p)
            || long_matches("--force", p)
    });
    let shown = shown(name, args);
    for operand in &s.operands {
        c.write(operand, AccessVia::Operand);
        if !recursive_or_forced {
            continue;
        }
        match path_risk(operand) {
            Some(risk) => {
                c.class = CommandClass::Destructive;
                c.deny(format!("`{shown}` removes {risk}"));
            }
            None if operand.anchor == Anchor::Dynamic && empty_prefix_is_root(operand) => {
                c.ask(format!(
                    "`{shown}` removes the root directory if `{}` is empty",
                    operand.text
                ));
            }
            None => {}
        }
    }
}

fn dd(args: &[Word], c: &mut Classified) {
    c.class = CommandClass::ReadOnly;
    c.read_only = true;
    for a in args {
        if a.text.starts_with("if=") {
            c.read(&a.after("if="), AccessVia::Operand);
        } else if let Some(output) = a.text.strip_prefix("of=") {
            c.class = CommandClass::Write;
            c.read_only = false;
            let target = a.after("of=");
            if output.starts_with("/dev/") && !knowledge::HARMLESS_TARGETS.contains(&output) {
                c.class = CommandClass::Destructive;
                c.deny(format!("`dd of={output}` writes a device"));
            }
            c.write(&target, AccessVia::Operand);
        } else if !a.literal {
            c.read_only = false;
        }
    }
}

fn chmod(name: &str, args: &[Word], c: &mut Classified) {
    c.class = CommandClass::Write;
    let s = scan(args, &["--from"], &[]);
    let recursive = s
        .present
        .iter()
        .any(|p| p == "-R" || long_matches("--recursive", p));
    let reference = s.present.iter().any(|p| p.starts_with("--reference"));
    let mut operands = s.operands.into_iter();
    if !reference {
        operands.next();
    }
    for operand in operands {
        c.write(operand, AccessVia::Operand);
        // Only the system and home count here: `chmod -R u+w .` is an ordinary change inside the project.
        let outside = operand.anchor == Anchor::Home || operand.text.starts_with('/');
        if let Some(risk) = path_risk(operand).filter(|_| outside)
            && (recursive || operand.text.trim_end_matches('/').is_empty())
        {
            c.class = CommandClass::Destructive;
            c.deny(format!("`{}` changes {risk}", shown(name, args)));
        }
    }
}

fn kill(args: &[Word], c: &mut Classified) {
    c.class = CommandClass::Write;
    let mut signal_seen = false;
    let mut i = 0;
    let mut ended = false;
    while let Some(a) = args.get(i) {
        i += 1;
        let t = a.text.as_str();
        if !ended && matches!(t, "-l" | "-L" | "--list" | "--table") {
            c.class = CommandClass::ReadOnly;
            c.read_only = true;
            return;
        }
        if !ended && t == "--" {
            ended = true;
            continue;
        }
        if !ended && matches!(t, "-s" | "-n") {
            signal_seen = true;
            i += 1;
            continue;
        }
        if !ended && !signal_seen && t.starts_with('-') && t.len() > 1 {
            signal_seen = true;
            continue;
        }
        if t == "-1" {
            c.class = CommandClass::Destructive;
            c.deny("`kill -1` signals every process the user can reach".to_owned());
        }
    }
}

/// A command as it reads in a reason.
fn shown(name: &str, args: &[Word]) -> String {
    std::iter::once(name)
        .chain(args.iter().map(|a| a.text.as_str()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What removing or changing a path would destroy, judged by what the path means.
pub(crate) fn path_risk(word: &Word) -> Option<String> {
    let all = |components: &[String]| components.iter().all(|c| matches!(c.as_str(), "*" | ".*" | "**"));
    match word.anchor {
        Anchor::Static => {
            let text = word.text.as_str();
            if let Some(absolute) = text.strip_prefix('/') {
                let components = normalize(absolute, true)?;
                match components.as_slice() {
                    [] => Some("the root directory".to_owned()),
                    [only] if word.glob && all(&components) => {
                        Some(format!("everything under `/` (`{only}`)"))
                    }
                    [dir] if knowledge::SYSTEM_DIRS.contains(&dir.as_str()) => {
                        Some(format!("the system directory `/{dir}`"))
                    }
                    [dir, rest]
                        if word.glob
                            && all(std::slice::from_ref(rest))
                            && knowledge::SYSTEM_DIRS.contains(&dir.as_str()) =>
                    {
                        Some(format!("everything in the system directory `/{dir}`"))
                    }
                    _ => None,
                }
            } else {
                let components = normalize(text, false)?;
                match components.as_slice() {
                    [] => Some("the whole working directory".to_owned()),
                    [first, ..] if first == ".." => {
                        let rest = components.get(1..).unwrap_or_default();
                        let escapes = rest.iter().take_while(|c| *c == "..").count();
                        let after = rest.get(escapes..).unwrap_or_default();
                        (after.is_empty() || (word.glob && all(after)))
                            .then(|| "a directory above the project".to_owned())
                    }
                    _ if word.glob && all(&components) => {
                        Some("everything in the working directory".to_owned())
                    }
                    _ => None,
                }
            }
        }
        Anchor::Home => {
            let components = normalize(&word.rest, true)?;
            (components.is_empty() || (word.glob && all(&components)))
                .then(|| "the home directory".to_owned())
        }
        Anchor::WorkingDir => {
            let components = normalize(&word.rest, true)?;
            (components.is_empty() || (word.glob && all(&components)))
                .then(|| "the whole working directory".to_owned())
        }
        Anchor::Dynamic => None,
    }
}

/// `$DIR/` or `$DIR/*`: the root directory when the variable is empty.
fn empty_prefix_is_root(word: &Word) -> bool {
    word.rest.starts_with('/')
        && normalize(&word.rest, true).is_some_and(|c| c.iter().all(|c| matches!(c.as_str(), "*" | ".*")))
}

/// Lexical normalisation: drops `.` and empty components, resolves `..`. For an absolute path `..` stops at the
/// root; for a relative one it stays as a leading `..`. `None` when a component is only known at run time.
fn normalize(path: &str, absolute: bool) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for component in path.split('/') {
        match component {
            "" | "." => {}
            ".." => match out.last() {
                Some(last) if last != ".." => {
                    out.pop();
                }
                _ if absolute => {}
                _ => out.push("..".to_owned()),
            },
            other => out.push(other.to_owned()),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::word::expand;

    fn risk(raw: &str) -> Option<String> {
        path_risk(&expand(raw))
    }

    #[test]
    fn path_meaning_decides_destruction() {
        for raw in [
            "/",
            "//",
            "/.",
            "/tmp/..",
            "/*",
            "~",
            "~/",
            "$HOME",
            "\"$HOME\"/",
            ".",
            "./",
            "..",
            "*",
            "./*",
            "../*",
            "/usr",
            "/etc/",
            "$(pwd)",
            "\"$PWD\"/*",
            "src/../",
        ] {
            assert!(risk(raw).is_some(), "{raw}");
        }
        for raw in [
            "build",
            "./target",
            "/tmp/x",
            "~/project/build",
            "'*'",
            "../sibling",
            "src/*.o",
            "/usr/local/lib/x",
        ] {
            assert!(risk(raw).is_none(), "{raw}");
        }
    }

    #[test]
    fn scan_reads_clusters_values_and_abbreviations() {
        let words: Vec<Word> = ["-rno", "out.txt", "--comp=gzip", "a"]
            .iter()
            .map(|w| expand(w))
            .collect();
        let flags = &knowledge::COMMANDS
            .iter()
            .find(|(n, _)| n.contains(&"sort"))
            .unwrap()
            .1;
        let Kind::ReadOnly(flags) = flags else {
            panic!("sort is read-only")
        };
        let s = scan(&words, flags.values, flags.effects);
        assert_eq!(s.operands.len(), 1);
        assert!(
            s.effects
                .iter()
                .any(|(e, v)| *e == Effect::WriteValue && v.as_ref().unwrap().text == "out.txt")
        );
        assert!(s.effects.iter().any(|(e, _)| matches!(e, Effect::HiddenExec(_))));
    }

    #[test]
    fn assignment_names() {
        assert_eq!(assignment_name("PATH=/x"), Some("PATH"));
        assert_eq!(assignment_name("a[1]=2"), Some("a"));
        assert_eq!(assignment_name("x+=1"), Some("x"));
        assert_eq!(assignment_name("-x=1"), None);
        assert!(is_code_variable("LD_PRELOAD") && is_code_variable("PATH") && !is_code_variable("FOO"));
    }
}
