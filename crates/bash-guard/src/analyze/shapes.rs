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
            // What echo makes of a backslash depends on `-e`, `xpg_echo`, which echo runs (`env echo`, `enable
            // -n echo`, dash's) and which escapes each knows (`\0NNN`, `\c`): a text with one is not known.
            (!text.contains('\\')).then_some(text)
        }
        // printf applies its format: conversions take the arguments (`printf 'rm -rf .g%st' i`) and escapes are
        // printf's own (`\NNN`, `\xHH`, `\c`). Known only without either, but for a new line.
        "printf" => texts.first().and_then(|format| {
            let lines = format.replace("\\n", "\n");
            (!lines.contains(['%', '\\'])).then_some(lines)
        }),
        _ => None,
    }
}

/// The text of the here-string of `simple` (`<<< TEXT`, with the new line the shell adds), when the line says it.
pub(super) fn here_string(simple: &parse::Simple) -> Option<String> {
    simple
        .redirects
        .iter()
        .rev()
        .find_map(|r| match (r.op, &r.target) {
            (parse::RedirOp::HereString, parse::Target::Word(raw)) => {
                let word = word::expand(raw);
                word.literal.then(|| format!("{}\n", word.text))
            }
            _ => None,
        })
}

/// The text the command reads on its standard input from the line itself: its here-string, else a here-document
/// whose text the shell passes as written (a quoted delimiter, or no `$`, backtick or backslash in it).
pub(super) fn line_input(simple: &parse::Simple) -> Option<String> {
    here_string(simple).or_else(|| {
        simple
            .redirects
            .iter()
            .rev()
            .find_map(|r| match (r.op, &r.target) {
                (parse::RedirOp::HereDoc { expands }, parse::Target::Word(raw))
                    if !expands || !raw.contains(['$', '`', '\\']) =>
                {
                    Some(raw.clone())
                }
                _ => None,
            })
    })
}

/// What a command that only transforms its standard input prints, given that input: `base64 -d` decodes it
/// (`-i` skipping what is not of the alphabet), `rev` reverses each line, `xxd -r -p` decodes plain hex. Code hidden
/// this way (`echo cm0gLXJmIC8= | base64 -d | sh`) is then read as the text it is. `None` for any other command,
/// a file operand, or input the tool would refuse.
pub(super) fn transformed_text(argv: &[&Word], input: &str) -> Option<String> {
    let (name, args) = argv.split_first()?;
    if !name.literal || !args.iter().all(|a| a.literal) {
        return None;
    }
    let flags: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    let all_in = |allowed: &[&str]| flags.iter().all(|f| allowed.contains(f));
    match name.text.rsplit('/').next()? {
        "base64"
            if all_in(&["-d", "--decode", "-D", "-i", "--ignore-garbage"])
                && flags.iter().any(|f| matches!(*f, "-d" | "--decode" | "-D")) =>
        {
            let garbage = flags.iter().any(|f| matches!(*f, "-i" | "--ignore-garbage"));
            String::from_utf8(decode_base64(input, garbage)?).ok()
        }
        // `cat <<'EOF' | python3`: the text passes as it is.
        "cat" if all_in(&["-"]) => Some(input.to_owned()),
        "rev" if flags.is_empty() => Some(
            input
                .split_inclusive('\n')
                .map(|line| {
                    let (body, end) = line.strip_suffix('\n').map_or((line, ""), |b| (b, "\n"));
                    body.chars().rev().chain(end.chars()).collect::<String>()
                })
                .collect(),
        ),
        "xxd"
            if !flags.is_empty()
                && all_in(&["-r", "-p", "-ps", "-rp", "-pr", "-plain", "-revert"])
                && flags.iter().any(|f| f.contains('r'))
                && flags.iter().any(|f| f.contains('p')) =>
        {
            let digits: Vec<u8> = input.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
            let bytes = digits
                .chunks(2)
                .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
                .collect::<Option<Vec<u8>>>()?;
            String::from_utf8(bytes).ok()
        }
        _ => None,
    }
}

/// The bytes of base64 `text` (new lines ignored, as `base64 -d` does; other bytes outside the alphabet too when
/// `garbage`); `None` where the tool would stop with an error.
fn decode_base64(text: &str, garbage: bool) -> Option<Vec<u8>> {
    let value = |b: u8| -> Option<u32> {
        match b {
            b'A'..=b'Z' => Some(u32::from(b - b'A')),
            b'a'..=b'z' => Some(u32::from(b - b'a') + 26),
            b'0'..=b'9' => Some(u32::from(b - b'0') + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    };
    let mut symbols = Vec::new();
    let mut padding = 0;
    for b in text.bytes() {
        if b == b'\n' {
            continue;
        }
        if b == b'=' {
            padding += 1;
            continue;
        }
        match value(b) {
            Some(v) if padding == 0 => symbols.push(v),
            Some(_) => return None,
            None if garbage => {}
            None => return None,
        }
    }
    if (symbols.len() + padding) % 4 != 0 || padding > 2 || symbols.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::new();
    for chunk in symbols.chunks(4) {
        let mut n = 0u32;
        for (k, v) in chunk.iter().enumerate() {
            n |= v << (18 - 6 * k);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend(bytes.iter().take(chunk.len().saturating_sub(1)));
    }
    Some(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<Word> {
        words.iter().map(|w| Word::literal(w)).collect()
    }

    #[test]
    fn transforms_of_literal_text_are_undone() {
        let decode = |words: &[&str], input: &str| {
            let words = argv(words);
            let refs: Vec<&Word> = words.iter().collect();
            transformed_text(&refs, input)
        };
        assert_eq!(
            decode(&["base64", "-d"], "cm0gLXJmIC8=\n").as_deref(),
            Some("rm -rf /")
        );
        assert_eq!(decode(&["base64", "--decode"], "aGk=").as_deref(), Some("hi"));
        assert_eq!(decode(&["base64", "-d", "-i"], "a G k =").as_deref(), Some("hi"));
        assert_eq!(decode(&["rev"], "fr- mr\nsl\n").as_deref(), Some("rm -rf\nls\n"));
        assert_eq!(decode(&["xxd", "-r", "-p"], "6c73\n").as_deref(), Some("ls"));
        // What the tool refuses, a file operand, an encoding: not known.
        assert_eq!(decode(&["base64", "-d"], "a G k ="), None);
        assert_eq!(decode(&["base64", "-d"], "abc"), None);
        assert_eq!(decode(&["base64", "-d", "file"], "aGk="), None);
        assert_eq!(decode(&["base64"], "hi"), None);
        assert_eq!(decode(&["xxd", "-p"], "hi"), None);
    }
}
