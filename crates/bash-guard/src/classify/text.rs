//! Text processors that carry a program of their own: sed scripts, awk programs, jq filters.

use crate::analysis::{AccessVia, CommandClass, LocationKind};
use crate::knowledge;
use crate::options::{self, Opt, Reader, Token};
use crate::scripts;
use crate::word::{self, Word};

use super::{Classified, Code, assignment_name};

pub(super) fn sed(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let parsed = options::read(args, &knowledge::SED);
    if parsed.dynamic {
        c.read_only = false;
    }
    let mut scripts: Vec<Word> = Vec::new();
    let mut in_place = false;
    for option in &parsed.options {
        // An ambiguous abbreviation (`--f`: `--file` or `--follow-symlinks`) counts as the option with an effect.
        if option.is_any(&["-i", "-I", "--in-place"]) {
            in_place = true;
        } else if option.is_any(&["-e", "--expression"]) {
            scripts.extend(option.value.clone());
        } else if option.is_any(&["-f", "--file"]) {
            if let Some(file) = &option.value {
                c.read(file, AccessVia::Flag);
            }
            scripts.push(Word::literal(""));
            c.ask_unseen("`sed -f` runs a script file the analysis cannot see".to_owned());
        }
    }
    let mut operands = parsed.operands.into_iter();
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
            c.changes_as(CommandClass::Exec);
            c.ask_unseen("the sed script runs a command only known at run time (`e`)".to_owned());
        }
        spelled_commands(effects.commands, "sed's `e`", c);
        for file in &effects.writes {
            c.changes_as(CommandClass::Write);
            c.write(&Word::literal(file), AccessVia::Operand);
        }
        for file in &effects.reads {
            c.read(&Word::literal(file), AccessVia::Operand);
        }
        if effects.unknown {
            c.read_only = false;
        }
        if effects.endless {
            c.unbounded = Some(
                "the sed script branches back without reading more input: it loops without end".to_owned(),
            );
        }
    }
    for file in operands {
        c.read(file, AccessVia::Operand);
        if in_place {
            c.write(file, AccessVia::Operand);
        }
    }
    if in_place {
        c.changes_as(CommandClass::Write);
    }
}

/// An awk option as gawk reads it: `-W NAME[=VALUE]` is `--NAME[=VALUE]`, and the value of such an option that
/// takes one may be the next word (`-W exec FILE`).
fn awk_option(option: &Opt<'_>, reader: &mut Reader<'_>) -> (String, Option<Word>) {
    if option.name != "-W" {
        return (option.name.to_string(), option.value.clone());
    }
    let spelled = option.value.as_ref().map(|v| v.text.clone()).unwrap_or_default();
    match spelled.split_once('=') {
        Some((name, value)) => (format!("--{name}"), Some(Word::literal(value))),
        None => {
            let name = format!("--{spelled}");
            let takes = knowledge::AWK
                .values
                .iter()
                .any(|full| *full == name || options::abbreviates(&name, full));
            let value = if takes { reader.take_word().cloned() } else { None };
            (name, value)
        }
    }
}

pub(super) fn awk(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let mut reader = Reader::new(args, &knowledge::AWK);
    let mut program: Option<Word> = None;
    let mut program_given = false;
    let mut operands: Vec<&Word> = Vec::new();
    while let Some(token) = reader.next() {
        let option = match token {
            Token::Option(option) => option,
            Token::Operand { word, .. } => {
                operands.push(word);
                continue;
            }
        };
        let (name, value) = awk_option(&option, &mut reader);
        // An abbreviation (`--f`) counts as the first option with an effect it could stand for.
        let is = |full: &str| name == full || options::abbreviates(&name, full);
        if is("-f") || is("--file") || is("-E") || is("--exec") {
            program_given = true;
            if let Some(f) = &value {
                c.read(f, AccessVia::Flag);
            }
            c.read_only = false;
            c.ask_unseen("`awk -f` runs a program file the analysis cannot see".to_owned());
        } else if is("-i") || is("--include") || is("-l") || is("--load") {
            c.read_only = false;
            c.ask_unseen(format!("`awk {name}` loads code the analysis cannot see"));
        } else if is("-e") || is("--source") {
            program_given = true;
            program = value;
        } else if [
            "-o",
            "-p",
            "-d",
            "-D",
            "--pretty-print",
            "--profile",
            "--dump-variables",
            "--debug",
        ]
        .iter()
        .any(|full| is(full))
        {
            c.changes_as(CommandClass::Write);
        }
    }
    if reader.saw_dynamic() {
        c.read_only = false;
    }
    let mut operands = operands.into_iter();
    if !program_given {
        program = operands.next().cloned();
    }
    if let Some(program) = &program {
        if program.literal {
            let effects = scripts::awk(&program.text);
            if effects.exec {
                c.changes_as(CommandClass::Exec);
                c.ask_unseen("the awk program runs commands (`system()` or a pipe)".to_owned());
            }
            spelled_commands(effects.commands, "awk's `system()`", c);
            if effects.writes {
                c.changes_as(CommandClass::Write);
                c.ask_unseen("the awk program writes files (`print > file`)".to_owned());
            }
            if !effects.written.is_empty() {
                c.changes_as(CommandClass::Write);
                for file in &effects.written {
                    c.write(&Word::literal(file), AccessVia::Operand);
                }
            }
            if effects.reads {
                c.read_only = false;
                c.ask(
                    "the awk program reads a file it names (`getline < file`), which the analysis cannot see"
                        .to_owned(),
                );
            }
            if effects.argv {
                c.read_only = false;
                c.ask("the awk program changes which files it reads (`ARGV`, `ARGC`), which the analysis cannot see".to_owned());
            }
            if effects.endless {
                c.unbounded = Some("the awk program has a loop whose condition never ends it".to_owned());
            }
            if effects.environ {
                c.ask(
                    "the awk program reads the environment (`ENVIRON`), which may hold credentials"
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

pub(super) fn jq(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let parsed = options::read(args, &knowledge::JQ);
    let mut program_given = false;
    let mut library: Vec<&Word> = Vec::new();
    for option in &parsed.options {
        if option.is_any(&["--slurpfile", "--rawfile", "--argfile"])
            && let Some(file) = &option.second
        {
            c.read(file, AccessVia::Flag);
        } else if option.is_any(&["-f", "--from-file"]) {
            program_file("jq", option.value.as_ref(), c);
            program_given = true;
        } else if option.is_any(&["-L", "--library-path"]) {
            library.extend(option.value.as_ref());
        }
    }
    // The operands after the program are values, not files.
    let positional = parsed.has(&["--args", "--jsonargs"]);
    let mut operands = parsed.operands.into_iter();
    if !program_given && let Some(program) = operands.next() {
        filter_effects(program, &library, c);
    }
    if !positional {
        operands.for_each(|o| c.read(o, AccessVia::Operand));
    }
}

/// `jq -f FILE`, `yq --from-file FILE`: the filter is in a file, read and run unseen (it may import files or read
/// the environment).
fn program_file(name: &str, file: Option<&Word>, c: &mut Classified) {
    if let Some(file) = file {
        c.read(file, AccessVia::Flag);
    }
    c.read_only = false;
    c.ask_unseen(format!("`{name}` runs a filter file the analysis cannot see"));
}

/// What a jq or yq filter does besides transforming its input; `library` holds the directories of `-L`.
fn filter_effects(program: &Word, library: &[&Word], c: &mut Classified) {
    // A filter only known at run time may import files, load modules or read the environment.
    if !program.literal {
        c.read_only = false;
        return;
    }
    let effects = scripts::filter(&program.text);
    if effects.environment {
        c.ask("the filter reads the environment (`$ENV`, `env`), which may hold credentials".to_owned());
    }
    if effects.loads {
        c.read_only = false;
        c.ask("the filter reads files it names (`load`), which the analysis cannot see".to_owned());
    }
    if effects.modules {
        c.read_only = false;
        c.ask(
            "the filter loads a jq module (`import … as NAME`, `include`, `modulemeta`): code the analysis cannot see"
                .to_owned(),
        );
    }
    for path in &effects.data_imports {
        data_import(path.as_deref(), library, c);
    }
    if effects.unbounded {
        c.unbounded = Some("the filter makes output without (practical) end (`range`, `repeat`, `while`, a definition that calls itself)".to_owned());
    }
}

/// `import "PATH" as $NAME;` reads `PATH.json`, `PATH/jq/main.json` or `PATH/LAST.json` from the first directory
/// of the search path that holds one: the working directory, then the `-L` directories, or without them
/// `~/.jq`, `$ORIGIN/../lib/jq` and `$ORIGIN/../lib` (`$ORIGIN` is where jq is installed). Each is read where it
/// exists, so every one is a read; a path only known at run time is a file named only at run time.
fn data_import(path: Option<&str>, library: &[&Word], c: &mut Classified) {
    let Some(path) = path else {
        c.read(&Word::unknown("the JSON file of a jq `import`"), AccessVia::Flag);
        return;
    };
    let mut dirs: Vec<Word> = vec![Word::literal(".")];
    if library.is_empty() {
        dirs.push(word::path_word("~/.jq"));
        dirs.push(Word::unknown("$ORIGIN/../lib/jq"));
        dirs.push(Word::unknown("$ORIGIN/../lib"));
    }
    for dir in library {
        // jq expands a search directory's own `~/` and `$ORIGIN/`.
        let expanded = match dir.literal.then_some(dir.text.as_str()) {
            Some(text) if text == "~" || text.starts_with("~/") => word::path_word(text),
            Some(text) if text.starts_with("$ORIGIN") => Word::unknown(text),
            Some(_) | None => (*dir).clone(),
        };
        dirs.push(expanded);
    }
    let last = path.rsplit('/').next().unwrap_or(path);
    let files = [
        format!("{path}.json"),
        format!("{path}/jq/main.json"),
        format!("{path}/{last}.json"),
    ];
    for dir in &dirs {
        for file in &files {
            let joined = match dir.path() {
                Some(dir) => word::path_word(&format!(
                    "{}/{}",
                    dir.trim_end_matches('/'),
                    file.trim_start_matches('/')
                )),
                None => Word::unknown(&format!("{}/{file}", dir.text)),
            };
            c.read(&joined, AccessVia::Flag);
        }
    }
    // A path from the root may be taken as it is.
    if path.starts_with('/') {
        files
            .iter()
            .for_each(|file| c.read(&word::path_word(file), AccessVia::Flag));
    }
}

/// `yq` (mikefarah's, or the jq wrapper): a filter, then files read; `-i` edits them in place, `-s EXPR` writes a
/// file per result, `--from-file`/`-f` reads the filter from a file.
pub(super) fn yq(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let parsed = options::read(args, &knowledge::YQ);
    let mut program_given = false;
    let mut library: Vec<&Word> = Vec::new();
    let mut in_place = false;
    for option in &parsed.options {
        if option.is_any(&["-i", "--inplace", "--in-place"]) {
            in_place = true;
        } else if option.is_any(&["-s", "--split-exp"]) {
            c.changes_as(CommandClass::Write);
            c.ask("`yq --split-exp` writes a file for every result, named by an expression".to_owned());
        } else if option.is_any(&["--from-file", "-f"]) {
            // mikefarah's `-f` is `--front-matter extract|process`; the jq wrapper's is jq's `--from-file`.
            let front_matter = option.name == "-f"
                && option
                    .value
                    .as_ref()
                    .is_some_and(|v| v.literal && matches!(v.text.as_str(), "extract" | "process"));
            if !front_matter {
                program_file("yq", option.value.as_ref(), c);
                program_given = true;
            }
        } else if option.is_any(&["-L", "--library-path"]) {
            library.extend(option.value.as_ref());
        } else if option.is_any(&["--rawfile", "--slurpfile"])
            && let Some(file) = &option.second
        {
            c.read(file, AccessVia::Flag);
        }
    }
    if parsed.dynamic {
        c.read_only = false;
    }
    let mut operands = parsed.operands.into_iter().peekable();
    // mikefarah's sub-commands.
    operands.next_if(|o| o.literal && matches!(o.text.as_str(), "eval" | "e" | "eval-all" | "ea"));
    if !program_given && let Some(program) = operands.next() {
        filter_effects(program, &library, c);
    }
    for file in operands {
        c.read(file, AccessVia::Operand);
        if in_place {
            c.write(file, AccessVia::Operand);
        }
    }
    if in_place {
        c.changes_as(CommandClass::Write);
    }
}

/// The shell commands a script spells out as one string each (`system("make")`, sed's `e make`): walked as the
/// code they are.
fn spelled_commands(commands: Vec<String>, via: &str, c: &mut Classified) {
    c.code.extend(commands.into_iter().map(|text| Code {
        text,
        literal: true,
        kind: LocationKind::ShellString,
        via: via.to_owned(),
    }));
}
