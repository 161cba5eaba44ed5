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

/// `env -S STRING ARGS…`: env splits STRING into words by its own rules and reads them in place of the option,
/// followed by ARGS, so the command is what those words give. It is analysed as the shell line that passes the
/// same words (each one quoted), which keeps `|`, `;` or `<` in STRING the plain words env makes them. A string
/// whose words are not known without running (`${VAR}`, `\c`, an unknown escape, an open quote) is code of
/// unknown text.
fn split_string(wrapper: Option<&Word>, value: Option<&Word>, rest: &[Word], via: &str) -> Unwrapped {
    let Some(value) = value else {
        return Unwrapped::NoRun;
    };
    let words = value.literal.then(|| env_split(&value.text)).flatten();
    let literal = words.is_some() && rest.iter().all(|w| w.literal);
    let mut text = wrapper.map_or_else(|| "env".to_owned(), |w| single_quoted(&w.text));
    for word in words
        .iter()
        .flatten()
        .map(String::as_str)
        .chain(rest.iter().map(|w| w.text.as_str()))
    {
        text.push(' ');
        text.push_str(&single_quoted(word));
    }
    Unwrapped::Code(Code {
        text,
        literal,
        kind: LocationKind::ShellString,
        via: via.to_owned(),
    })
}

/// `word` in single quotes, as the shell reads it back unchanged.
fn single_quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// The words GNU env's `-S` makes of `text`: blanks separate them, `'…'` and `"…"` quote, `\_` separates outside
/// double quotes and is a space inside them, `\n \t \r \f \v \\ \" \' \# \$` are the characters they name.
/// `None` for what is only known when it runs or is refused by env: `${VAR}` (and any other `$`), `\c`, a
/// comment, any other escape, an open quote.
fn env_split(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    let mut quote: Option<char> = None;
    while let Some(ch) = chars.next() {
        match (quote, ch) {
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('\''), '\\') => return None,
            (Some('\''), other) => word.get_or_insert_with(String::new).push(other),
            (_, '$') => return None,
            (None, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c') => words.extend(word.take()),
            (None, '#') if word.is_none() => return None,
            (None, '\'' | '"') => {
                quote = Some(ch);
                word.get_or_insert_with(String::new);
            }
            (_, '\\') => {
                let escaped = match chars.next()? {
                    '_' if quote.is_none() => {
                        words.extend(word.take());
                        continue;
                    }
                    '_' => ' ',
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'f' => '\x0c',
                    'v' => '\x0b',
                    c @ ('\\' | '"' | '\'' | '#' | '$') => c,
                    _ => return None,
                };
                word.get_or_insert_with(String::new).push(escaped);
            }
            (_, other) => word.get_or_insert_with(String::new).push(other),
        }
    }
    if quote.is_some() {
        return None;
    }
    words.extend(word);
    Some(words)
}

/// Reads the wrapper at `argv[at]`: its options, assignments (`env`) and leading operands (`timeout DURATION`).
pub(super) fn unwrap(w: &Wrapper, argv: &[Word], at: usize, c: &mut Classified) -> Unwrapped {
    let args = argv.get(at + 1..).unwrap_or_default();
    let syntax = w.syntax();
    let mut reader = Reader::new(args, &syntax);
    let mut exec_mode = false;
    // The index in `args` of the first word after the options.
    let mut j = args.len();
    while let Some(token) = reader.next() {
        match token {
            Token::Option(option) => {
                let name = option.name.as_ref();
                if w.no_run.contains(&name) {
                    return Unwrapped::NoRun;
                }
                if w.code.iter().any(|code| option.is(code)) {
                    return code_of(option.value.as_ref(), name);
                }
                if w.split.iter().any(|split| option.is(split)) {
                    let rest = args.get(reader.position()..).unwrap_or_default();
                    return split_string(argv.get(at), option.value.as_ref(), rest, name);
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
                c.ask_unseen(format!("sets `{name}`, which changes what the command runs"));
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
