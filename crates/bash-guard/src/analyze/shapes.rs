//! What the words of one command show by their shape alone: the words `test` only checks for emptiness, the text
//! `echo` or `printf` prints, and how many times a loop over literal words turns.

use crate::parse::{self, Part};
use crate::word::{self, Word};

/// The indices of the words of `test WORD`, `test -n WORD`, `test -z WORD` or `[ … ]` in those forms (`!` before
/// any of them) whose value only reaches a test of its emptiness: with one to three operands, `test` reads them by
/// their count, whatever their values.
pub(super) fn emptiness_tested(words: &[Word]) -> Vec<usize> {
    let Some((name, args)) = words.split_first() else {
        return Vec::new();
    };
    let args = match name.text.as_str() {
        _ if !name.literal => return Vec::new(),
        "test" => args,
        "[" => match args.split_last() {
            Some((last, args)) if last.literal && last.text == "]" => args,
            _ => return Vec::new(),
        },
        _ => return Vec::new(),
    };
    let literal = |k: usize, texts: &[&str]| {
        args.get(k)
            .is_some_and(|w| w.literal && texts.contains(&w.text.as_str()))
    };
    let negated = usize::from(args.len() > 1 && literal(0, &["!"]));
    let operand = match args.len() - negated {
        1 => negated,
        2 if literal(negated, &["-n", "-z"]) => negated + 1,
        _ => return Vec::new(),
    };
    // `1 +` for the command word.
    vec![operand + 1]
}

/// What `echo WORD…` or `printf FORMAT` with only literal words prints (escape handling aside).
pub(super) fn printed_text(argv: &[&Word]) -> Option<String> {
    let (name, args) = argv.split_first()?;
    if !name.literal || !args.iter().all(|a| a.literal) {
        return None;
    }
    let texts: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    match name.text.as_str() {
        "echo" => {
            let start = texts
                .iter()
                .take_while(|t| matches!(**t, "-n" | "-e" | "-E" | "-ne" | "-en"))
                .count();
            let text = texts.get(start..).unwrap_or_default().join(" ");
            // `echo -e` decodes backslash escapes (`\n` is a new line, so a new command for a shell reading it).
            let escapes = texts
                .get(..start)
                .unwrap_or_default()
                .iter()
                .any(|t| t.contains('e'));
            Some(if escapes { word::decode_ansi_c(&text) } else { text })
        }
        "printf" => texts.first().map(|format| word::decode_ansi_c(format)),
        _ => None,
    }
}

/// The words `echo WORD…` prints (its options aside), or `printf FORMAT` with a literal format, for `xargs`.
pub(super) fn printed_words(argv: &[&Word]) -> Option<Vec<Word>> {
    let (name, args) = argv.split_first()?;
    if !name.literal {
        return None;
    }
    match name.text.as_str() {
        "echo" => {
            let start = args
                .iter()
                .take_while(|a| a.literal && matches!(a.text.as_str(), "-n" | "-e" | "-E" | "-ne" | "-en"))
                .count();
            Some(
                args.get(start..)
                    .unwrap_or_default()
                    .iter()
                    .map(|w| (*w).clone())
                    .collect(),
            )
        }
        "printf" => {
            // `printf '%s\n' WORD…` prints each argument as it is (the format is used again for each).
            let (format, rest) = args.split_first()?;
            let decoded = word::decode_ansi_c(&format.text);
            let conversions: Vec<&str> = decoded.split('%').skip(1).collect();
            let only_strings = format.literal
                && !conversions.is_empty()
                && conversions.iter().all(|c| {
                    c.starts_with('s')
                        && c.get(1..)
                            .is_some_and(|r| r.chars().all(|ch| ch.is_whitespace() || ch == '\0'))
                });
            if only_strings && !rest.is_empty() {
                return Some(rest.iter().map(|w| (*w).clone()).collect());
            }
            let text = printed_text(argv)?;
            Some(text.split_whitespace().map(Word::literal).collect())
        }
        _ => None,
    }
}

/// How many times the body of a `for` loop runs: the number of words of its list when every one is known (a brace
/// expansion counted, not built); infinite for `for ((…))` and for a list with words only known at run time.
pub(super) fn loop_turns(parts: &[Part]) -> f64 {
    for part in parts {
        match part {
            Part::Loop {
                words: Some(words), ..
            } => {
                let mut turns = 0.0;
                for raw in words {
                    let expanded = word::expand(raw);
                    match parse::brace_count(raw) {
                        Some(count) if expanded.literal || !raw.contains('$') && !expanded.glob => {
                            turns += count as f64;
                        }
                        _ => return f64::INFINITY,
                    }
                }
                return turns;
            }
            Part::Loop { words: None, .. } | Part::Arith(_) => return f64::INFINITY,
            _ => {}
        }
    }
    1.0
}
