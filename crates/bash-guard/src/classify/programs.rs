//! Interpreters, package managers and build tools: the few forms that only print or read, the project files that
//! make even those run the project's code, and the forms that reach the network.

use crate::analysis::{AccessVia, CommandClass, LocationKind};
use crate::embedded::{self, Language, Spelled};
use crate::knowledge::{Interpreter, POSIX, Program, Sub, Syntax};
use crate::options;
use crate::scripts;
use crate::word::{self, Word};

use super::{Classified, Code, Nested, flags};

/// `python -V` prints; `python -c CODE` runs CODE, which is read for the shape of a fork bomb and for the commands
/// and removals it spells out ([`embedded`]); `python <<EOF`, `python -` run their standard input, read the same
/// way when the line gives it. `perl -pi -e CODE FILE…` and `ruby -i` write their files in place.
pub(super) fn interpreter(table: &Interpreter, name: &str, args: &[Word], c: &mut Classified) {
    c.class = CommandClass::Interpreter;
    c.read_only = matches!(args, [only] if only.literal && table.version.contains(&only.text.as_str()));
    let syntax = Syntax {
        values: table.values,
        optional: table.optional,
        ..POSIX
    };
    let parsed = options::read(args, &syntax);
    let mut given = false;
    let mut in_place = false;
    let mut codes = Vec::new();
    for option in parsed.options {
        if table.in_place.is_some_and(|edits| option.is(edits)) {
            in_place = true;
        } else if option.is("--cwd") {
            c.directory = option.value;
        } else if table.code.contains(&option.name.as_ref()) {
            given = true;
            codes.extend(option.value.map(|code| (option.name.clone(), code)));
        }
    }
    // `node -pe CODE` is `-p -e CODE` (the option's value would be the letter `e`): the code is the next word.
    let mut operands = parsed.operands.as_slice();
    for (_, code) in &mut codes {
        let letter = format!("-{}", code.text);
        if code.literal
            && code.text.len() == 1
            && table.code.contains(&letter.as_str())
            && let Some((next, rest)) = operands.split_first()
        {
            *code = (*next).clone();
            operands = rest;
        }
    }
    for (option, code) in codes {
        if code.literal && scripts::fork_bomb(&code.text) {
            c.class = CommandClass::Destructive;
            c.deny(format!(
                "fork bomb: the code of `{name} {option}` makes copies of its process in an unbounded loop (`{}`)",
                code.text
            ));
        }
        if let Some(language) = table.language {
            // A word with an expansion (`"…$HOME…"`) is read as a here-document the shell expands: a string
            // holding one is only known at run time, the rest is read as written.
            let via = format!("{name} {option}");
            let (spelled_code, argv) =
                spelled_out(language, &code.text, !code.literal, c.directory.is_some(), &via);
            c.code.extend(spelled_code);
            c.argv.extend(argv);
        }
    }
    // With code given, every operand is a file it reads (and with `-i` writes); without, the first is the script.
    let files = operands.get(usize::from(!given)..).unwrap_or_default();
    if in_place {
        for file in files {
            c.write(file, AccessVia::Operand);
        }
    }
    let reads_stdin = operands
        .first()
        .is_none_or(|first| first.literal && first.text == "-");
    if !given && !c.read_only && reads_stdin {
        c.stdin_program = table.language;
    }
}

/// The commands an interpreter's code spells out ([`embedded::read`]) as the analysis walks them: shell lines as
/// code `via` runs, programs with their arguments and removals (`rm -f PATH`, `rm -rf PATH`) as commands given as
/// words. `expanded`: the code is a here-document the shell expands; `moved`: it runs in another directory than the
/// line's (`env -C DIR`, `bun --cwd DIR`), so its relative paths are only known at run time.
pub(crate) fn spelled_out(
    language: Language,
    text: &str,
    expanded: bool,
    moved: bool,
    via: &str,
) -> (Vec<Code>, Vec<Nested>) {
    let mut code = Vec::new();
    let mut argv = Vec::new();
    let word = |text: Option<String>| match text {
        Some(text) => Word::literal(&text),
        None => Word::unknown("(a value the code makes at run time)"),
    };
    let mut read = embedded::read(language, text, expanded);
    if moved {
        read = embedded::elsewhere(read);
    }
    for spelled in read {
        match spelled {
            Spelled::Line(line) => code.push(Code {
                text: line,
                literal: true,
                kind: LocationKind::ShellString,
                via: format!("`{via}`"),
            }),
            // A program only known at run time adds nothing to what the sandbox bounds.
            Spelled::Argv(words) if words.first().is_some_and(Option::is_some) => argv.push(Nested {
                kind: LocationKind::ShellString,
                argv: words.into_iter().map(word).collect(),
                found: None,
            }),
            Spelled::Argv(_) => {}
            // `curl URL`, or `curl -X POST --data-binary @- URL` for a request that sends: judged as curl is.
            Spelled::Fetches { url, sends } => {
                let mut words: Vec<Word> = ["curl", "-sS"].into_iter().map(Word::literal).collect();
                if sends {
                    words.extend(
                        ["-X", "POST", "--data-binary", "@-"]
                            .into_iter()
                            .map(Word::literal),
                    );
                }
                words.push(word(url));
                argv.push(Nested {
                    kind: LocationKind::ShellString,
                    argv: words,
                    found: None,
                });
            }
            // `tee -- PATH`: a write of PATH, judged as any write (an ignored file's content replaced asks).
            Spelled::Writes(path) => argv.push(Nested {
                kind: LocationKind::ShellString,
                argv: vec![Word::literal("tee"), Word::literal("--"), word(path)],
                found: None,
            }),
            Spelled::Moves { from, to, copies } => argv.push(Nested {
                kind: LocationKind::ShellString,
                argv: vec![
                    Word::literal(if copies { "cp" } else { "mv" }),
                    Word::literal(if copies { "-rf" } else { "-f" }),
                    Word::literal("--"),
                    word(from),
                    word(to),
                ],
                found: None,
            }),
            Spelled::Removes { path, recursive } => argv.push(Nested {
                kind: LocationKind::ShellString,
                argv: vec![
                    Word::literal("rm"),
                    Word::literal(if recursive { "-rf" } else { "-f" }),
                    Word::literal("--"),
                    word(path),
                ],
                found: None,
            }),
        }
    }
    (code, argv)
}

/// A package manager or build tool: read-only only in a form its table says only prints or reads, and then only
/// where none of the project files it loads exists (the caller checks the disk).
pub(super) fn program(table: &Program, name: &str, args: &[Word], c: &mut Classified) {
    c.class = CommandClass::PackageManager;
    let loads = |c: &mut Classified| {
        c.loads
            .extend(table.loads.iter().map(|file| (Word::literal(file), true)));
    };
    if let [only] = args
        && only.literal
        && table.version.contains(&only.text.as_str())
    {
        c.read_only = true;
        loads(c);
        return;
    }
    // `uv run --help`: a sub-command of its table followed by nothing but a help option of the program's only
    // prints that sub-command's help (a package or script name in its place would run it: `npx eslint --help`).
    if let [sub, help] = args
        && sub.literal
        && help.literal
        && matches!(help.text.as_str(), "--help" | "-h")
        && table.version.contains(&help.text.as_str())
        && table.subs.iter().any(|(name, _)| *name == sub.text)
    {
        c.read_only = true;
        loads(c);
        return;
    }
    let parsed = options::read(args, &table.options);
    let before = c.writes.len();
    c.read_only = true;
    flags::effects(&parsed.effects(&table.options), c);
    let effects_ok = c.read_only && c.writes.len() == before;
    for option in &parsed.options {
        if table.directory.iter().any(|d| option.is(d)) {
            c.directory.clone_from(&option.value);
        } else if table.manifest.iter().any(|m| option.is(m))
            && let Some(manifest) = &option.value
        {
            // The directory of `DIR/Cargo.toml`; a manifest only known at run time is in a directory only known
            // at run time.
            c.directory = Some(match manifest.path() {
                Some(path) => match path.rsplit_once('/') {
                    Some((dir, _)) => word::path_word(if dir.is_empty() { "/" } else { dir }),
                    None => Word::literal("."),
                },
                None => manifest.clone(),
            });
        }
    }
    // `cargo +nightly …`: a rustup toolchain name before the sub-command.
    let mut operands = parsed.operands.iter().peekable();
    if operands
        .next_if(|o| o.literal && o.text.starts_with('+'))
        .is_some()
    {
        c.read_only = false;
    }
    let sub = operands.next();
    let rule = sub.filter(|s| s.literal).and_then(|s| {
        table
            .subs
            .iter()
            .find(|(n, _)| *n == s.text)
            .map(|(_, rule)| *rule)
    });
    let literal = args.iter().all(|a| a.literal);
    if let Some(Sub::Group(group)) = rule {
        // The words before the group's name are the program's; what follows is the group's to judge.
        let at = sub.and_then(|s| args.iter().position(|a| std::ptr::eq(a, *s)));
        let (before, after) = match at {
            Some(at) => (
                args.get(..at).unwrap_or_default(),
                args.get(at + 1..).unwrap_or_default(),
            ),
            None => (args, &[][..]),
        };
        let outer = effects_ok && c.read_only && c.network.is_none() && before.iter().all(|a| a.literal);
        program(group, name, after, c);
        c.read_only &= outer;
        return;
    }
    let read_only = match rule {
        None | Some(Sub::Runs | Sub::Group(_)) => false,
        Some(Sub::Reads { unless }) => !parsed.has(unless),
        Some(Sub::Lists) => operands.next().is_none(),
        Some(Sub::Online { with, without }) => {
            if parsed.has(with) || (!without.is_empty() && !parsed.has(without)) {
                let shown = sub.map_or(String::new(), |s| s.text.clone());
                c.online(format!(
                    "`{name} {shown}` may reach the network (it resolves or looks up packages)"
                ));
                false
            } else {
                true
            }
        }
        Some(Sub::Network) => {
            let shown = sub.map_or(String::new(), |s| s.text.clone());
            c.online(format!("`{name} {shown}` reaches the network"));
            false
        }
    };
    c.read_only = read_only && effects_ok && literal && c.read_only && c.network.is_none();
    if c.read_only {
        loads(c);
    }
}
