//! Shells and the builtins that run code or set variables: `bash -c`, `eval`, `source`, `trap`, `declare`,
//! `read`/`printf -v`/`mapfile -C`.

use crate::analysis::{AccessVia, CommandClass, LocationKind};
use crate::knowledge;
use crate::options::{self, Reader, Token};
use crate::word::Word;

use super::{Classified, Code, assignment_name, environment_family, is_code_variable, state};

/// `bash -c CODE`, `bash SCRIPT`, or `bash` reading its code from standard input.
pub(super) fn shell(args: &[Word], c: &mut Classified, name: &str) {
    c.class = CommandClass::Exec;
    let mut reader = Reader::new(args, &knowledge::SHELL);
    let mut code_next = false;
    let mut first: Option<&Word> = None;
    let mut rest_at = args.len();
    for token in reader.by_ref() {
        match token {
            Token::Option(option) => {
                let t = option.name.as_ref();
                if matches!(t, "--rcfile" | "--init-file") {
                    c.ask_unseen(format!(
                        "`{name} {t}` runs a start-up file the analysis cannot see"
                    ));
                }
                if knowledge::VERSION_FLAGS.contains(&t) && args.len() == 1 {
                    c.read_only_as(CommandClass::ReadOnly);
                    return;
                }
                code_next |= t == "-c";
            }
            Token::Operand { at, word } => {
                first = Some(word);
                rest_at = at;
                break;
            }
        }
    }
    // `-` ends the options like `--`.
    let mut operand = first;
    if let Some(word) = first {
        if word.could_be_option() && !reader.ended_by_dashes() {
            c.ask_unseen(format!("`{name}` options only known at run time"));
            // `sh -c "$(…)"`, `sh -c "$c"`: the code is what the substitution prints or the variable holds, which
            // the walker reads where the line says it.
            let text = word.text.trim_matches('"');
            let substitution = (text.starts_with("$(") && text.ends_with(')'))
                || (text.starts_with('`') && text.ends_with('`'))
                || text.strip_prefix('$').is_some_and(|name| {
                    let name = name.trim_start_matches('{').trim_end_matches('}');
                    !name.is_empty() && name.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                });
            if code_next && !word.literal && substitution {
                c.code.push(Code {
                    text: word.text.clone(),
                    literal: false,
                    kind: LocationKind::ShellString,
                    via: format!("{name} -c"),
                });
            }
            return;
        }
        if word.literal && word.text == "-" {
            operand = args.get(rest_at + 1);
        }
    }
    if code_next {
        if let Some(code) = operand {
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
    if let Some(script) = operand {
        c.class = CommandClass::Interpreter;
        c.read(script, AccessVia::Operand);
    } else {
        // No `-c` and no script: the shell runs what arrives on standard input.
        c.stdin_code = true;
    }
}

/// `eval WORDS…`: the words joined are code.
pub(super) fn eval(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::Exec);
    let text = args.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
    let literal = args.iter().all(|w| w.literal);
    c.code.push(Code {
        text,
        literal,
        kind: LocationKind::Eval,
        via: "eval".to_owned(),
    });
}

/// `source FILE` / `. FILE`: runs a file in this shell.
pub(super) fn source(name: &str, args: &[Word], c: &mut Classified) {
    c.class = CommandClass::Exec;
    if let Some(file) = args.first() {
        c.read(file, AccessVia::Operand);
        // The file is read like any other (a secret or a file outside the roots asks on its own); what it runs and
        // the state it leaves for later commands have the sandbox's power and no more.
        c.ask_unseen(format!(
            "`{name} {}` runs code the analysis cannot see",
            file.text
        ));
    }
}

/// `trap CODE SIGNAL…`: the code runs later in this shell; `trap -l`, `trap -p`, `trap SIGNAL` and
/// `trap - SIGNAL…` run nothing.
pub(super) fn trap(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let parsed = options::read(args, &knowledge::TRAP);
    if !parsed.options.is_empty() && parsed.operands.is_empty() {
        return;
    }
    let [code, _, ..] = parsed.operands.as_slice() else {
        return;
    };
    if code.literal && code.text == "-" {
        return;
    }
    c.code.push(Code {
        text: code.text.clone(),
        literal: code.literal,
        kind: LocationKind::Trap,
        via: "trap".to_owned(),
    });
}

/// `declare`, `typeset`, `local`, `export`, `readonly`: without names they print variables; `export` (and `-x`)
/// gives later commands the variables it names, which keeps them read-only only when each is harmless.
pub(super) fn declare(name: &str, args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    if state::prints_variables(name, args, c) {
        return;
    }
    // `declare -n REF=NAME` makes every later assignment to REF an assignment to NAME, which this analysis does not
    // follow (`declare -n r=PATH; r=/tmp` sets PATH); `export -n` only un-exports.
    let parsed = options::read(args, &knowledge::DECLARE);
    if name != "export" && parsed.options.iter().any(|o| o.name == "-n") {
        c.ask(format!(
            "`{name} -n` makes a name reference: later assignments set a variable the analysis does not follow"
        ));
    }
    let exports =
        (name == "export" && !parsed.has(&["-n", "-f"])) || parsed.options.iter().any(|o| o.name == "-x");
    for a in &parsed.operands {
        let variable = assignment_name(&a.text).or_else(|| a.literal.then_some(a.text.as_str()));
        if let Some(var) = assignment_name(&a.text)
            && is_code_variable(var)
        {
            c.ask(format!("sets `{var}`, which changes what later commands run"));
        }
        // As a plain assignment would: a variable the environment may export (`CDPATH`, `GIT_*`) changes what
        // later commands do once set, exported or not.
        if let Some(var) = assignment_name(&a.text)
            && environment_family(var)
        {
            c.unmodelled(format!(
                "`{name} {}` changes a variable the environment may export",
                a.text
            ));
        }
        if !a.literal && assignment_name(&a.text).is_none() {
            c.read_only = false;
        }
        if exports {
            let value = variable.and_then(|v| a.text.contains('=').then(|| a.after(&format!("{v}="))));
            if variable.is_none_or(|v| !state::harmless_variable(v, value.as_ref())) {
                c.read_only = false;
                c.unmodelled(format!(
                    "`{name} {}` gives later commands an environment variable not known to be harmless",
                    a.text
                ));
            }
        }
    }
}

/// What a read-only builtin does besides printing: `read PATH` or `printf -v PATH` assign variables, a format
/// only known at run time may be `-v NAME`, `mapfile -C CODE` evaluates code.
pub(super) fn builtin(name: &str, args: &[Word], c: &mut Classified) {
    // Builtins that assign variables by name (`read PATH`, `printf -v PATH …`, `printf -vPATH …`).
    let assigned = name_operands(name, args);
    for var in assigned.iter().filter(|w| w.literal && is_code_variable(&w.text)) {
        c.ask(format!(
            "`{name}` sets `{}`, which changes what later commands run",
            var.text
        ));
    }
    // A variable the environment may export (`read CDPATH`) changes what later commands do, as an assignment would.
    if let Some(var) = assigned.iter().find(|w| w.literal && environment_family(&w.text)) {
        c.unmodelled(format!(
            "`{name}` sets `{}`, a variable the environment may export",
            var.text
        ));
    }
    // `printf "$FORMAT"`: a format only known at run time may be `-vNAME`, which sets any variable.
    if name == "printf" && args.first().is_some_and(Word::could_be_option) {
        c.ask("`printf` takes a first word only known at run time, which may be `-v NAME`".to_owned());
    }
    // `printf '%*s' 1000000000 x`: a field width (from the format or an argument) past the bound pads the output
    // with as many characters.
    if name == "printf" {
        let widths = args.iter().filter(|a| a.literal).flat_map(|a| {
            a.text
                .split(|c: char| !c.is_ascii_digit())
                .filter_map(|digits| digits.parse::<u64>().ok())
                .collect::<Vec<_>>()
        });
        if widths.into_iter().any(|w| w > knowledge::MAX_PRINTF_WIDTH) {
            c.unbounded = Some("`printf` pads a field to more than ten million characters".to_owned());
        }
    }
    // `mapfile -C CODE` evaluates CODE with an index and a line of input appended, as `eval` would.
    if matches!(name, "mapfile" | "readarray") {
        let syntax = variable_syntax(name)
            .map(|(syntax, _)| syntax)
            .unwrap_or(knowledge::POSIX);
        for option in options::read(args, &syntax).options {
            if option.name != "-C" {
                continue;
            }
            if let Some(callback) = option.value {
                c.code.push(Code {
                    text: format!("{} \"$index\" \"$line\"", callback.text),
                    literal: callback.literal,
                    kind: LocationKind::Eval,
                    via: format!("{name} -C"),
                });
            }
        }
    }
}

/// The syntax of a builtin that sets variables, and its options whose value names one.
fn variable_syntax(command: &str) -> Option<(knowledge::Syntax, &'static [&'static str])> {
    knowledge::NAMES_VARIABLES
        .iter()
        .find(|(name, _, _)| *name == command)
        .map(|(_, syntax, names)| (*syntax, *names))
}

/// The operands of `read`, `unset`, `printf -v` and their kin that name variables (none for other commands).
pub(crate) fn name_operands(command: &str, args: &[Word]) -> Vec<Word> {
    let Some((syntax, name_options)) = variable_syntax(command) else {
        return Vec::new();
    };
    let parsed = options::read(args, &syntax);
    let mut names: Vec<Word> = parsed
        .options
        .into_iter()
        .filter(|option| name_options.contains(&option.name.as_ref()))
        .filter_map(|option| option.value)
        .collect();
    let operands = parsed.operands.into_iter().cloned();
    match command {
        // `printf FORMAT ARGS…` names a variable only with `-v`, `wait ID…` only with `-p`.
        "printf" | "wait" => {}
        // `getopts OPTSTRING NAME [ARGS…]`.
        "getopts" => names.extend(operands.skip(1).take(1)),
        _ => names.extend(operands),
    }
    names
}
