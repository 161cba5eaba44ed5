//! Wrappers: where the command they run starts (`sudo -u x env A=1 timeout 5 CMD`), or the code they run.

use crate::analysis::{AccessVia, LocationKind};
use crate::knowledge::Wrapper;
use crate::options::{Reader, Token};
use crate::word::Word;

use super::{Classified, Code, assignment_name, is_code_variable, state};

pub(super) enum Unwrapped {
    /// The command starts at this index (or there is none, when it is past the end).
    Next(usize),
    /// The wrapper runs nothing (`command -v`).
    NoRun,
    /// The wrapper runs code given as a string.
    Code(Code),
    /// An option the table does not know: where the command starts is unknown.
    Unknown(String),
}

fn code_of(word: Option<&Word>, via: &str) -> Unwrapped {
    match word {
        Some(w) => Unwrapped::Code(Code {
            text: w.text.clone(),
            literal: w.literal,
            kind: LocationKind::ShellString,
            via: via.to_owned(),
        }),
        None => Unwrapped::NoRun,
    }
}

/// Reads the wrapper at `argv[at]`: its options, assignments (`env`) and leading operands (`timeout DURATION`).
pub(super) fn unwrap(w: &Wrapper, argv: &[Word], at: usize, c: &mut Classified) -> Unwrapped {
    let args = argv.get(at + 1..).unwrap_or_default();
    let syntax = w.syntax();
    let mut reader = Reader::new(args, &syntax);
    let mut exec_mode = false;
    // The index in `args` of the first word after the options.
    let mut j = args.len();
    for token in reader.by_ref() {
        match token {
            Token::Option(option) => {
                let name = option.name.as_ref();
                if w.no_run.contains(&name) {
                    return Unwrapped::NoRun;
                }
                if w.code.iter().any(|code| option.is(code)) {
                    return code_of(option.value.as_ref(), name);
                }
                if !option.known {
                    return Unwrapped::Unknown(option.word.text.clone());
                }
                exec_mode |= w.exec_flags.iter().any(|flag| option.is(flag));
                if w.chdir.iter().any(|dir| option.is(dir)) {
                    c.directory.clone_from(&option.value);
                }
                if w.writes.iter().any(|write| option.is(write))
                    && let Some(value) = &option.value
                {
                    c.write(value, AccessVia::Flag);
                }
            }
            Token::Operand { at, .. } => {
                j = at;
                break;
            }
        }
    }
    let dashes = reader.ended_by_dashes();
    if !dashes {
        if let Some(word) = args.get(j)
            && word.could_be_option()
        {
            return Unwrapped::Unknown(word.text.clone());
        }
        // `env A=1 B=2 CMD`: assignments set the command's environment.
        while w.assignments
            && let Some(word) = args.get(j)
            && let Some(name) = assignment_name(&word.text)
        {
            let value = word.after(&format!("{name}="));
            if is_code_variable(name) && !state::harmless_variable(name, Some(&value)) {
                c.ask(format!("sets `{name}`, which changes what the command runs"));
            }
            if !state::harmless_variable(name, Some(&value)) {
                c.environment.get_or_insert(format!(
                    "`{name}` in the command's environment may change what it runs"
                ));
            }
            j += 1;
        }
        if w.assignments && args.get(j).is_some_and(|a| a.literal && a.text == "--") {
            j += 1;
        }
    }
    // Operands before the command (`timeout DURATION`, `flock FILE`).
    j = (j + w.leading).min(args.len());
    // `flock FILE -c CODE`.
    if !dashes
        && j > 0
        && let Some(word) = args.get(j)
        && word.literal
        && w.code.contains(&word.text.as_str())
    {
        return code_of(args.get(j + 1), &word.text);
    }
    if w.joins && !exec_mode && j < args.len() {
        // `watch` hands its words to `sh -c` joined by spaces.
        let words = args.get(j..).unwrap_or_default();
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
    Unwrapped::Next(at + 1 + j)
}
