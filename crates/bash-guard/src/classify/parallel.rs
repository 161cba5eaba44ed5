//! GNU `parallel`: the command it runs, and the arguments it runs it with. Its command words are joined by spaces
//! and run by a shell (each word quoted first under `-q`), once for every argument (a combination of one value of
//! each input source): the argument, shell-quoted, takes the place of the replacement strings (`{}`, `{.}`, `{1}`,
//! the `-I` string), or is appended when the command has none. Without a command, the arguments are the command
//! lines. The arguments come from the `:::` words of the line, from the files of `::::` and `-a`, or from standard
//! input.

use super::{Classified, Code, Input};
use crate::analysis::{AccessVia, LocationKind};
use crate::options::Parsed;
use crate::word::Word;

/// The words that begin an input source: `:::` values, `::::` files (`+`: linked to the source before).
const SOURCES: &[&str] = &[":::", ":::+", "::::", "::::+"];

/// Options that run the commands on other hosts, over ssh.
pub(super) const REMOTE: &[&str] = &[
    "-S",
    "--sshlogin",
    "--slf",
    "--sshloginfile",
    "--onall",
    "--nonall",
];

/// At most this many combinations of the arguments are judged one by one; more are judged as unknown words.
const COMBINATIONS: usize = 64;

/// What `parallel` runs, as far as the line says.
pub(super) enum Runs {
    /// Shell code, once for each argument the line gives (or once when the arguments are only known at run time
    /// and stand as a word only known at run time).
    Code(Vec<Code>),
    /// The arguments are command lines that come from standard input (`… | parallel`).
    StdinCode,
    /// The arguments are command lines read from files.
    FileCode,
    /// A plain command (words without shell syntax) whose arguments come from standard input: the same as
    /// `xargs` with these words, which the caller judges with what the input holds.
    Xargs,
}

/// The replacement strings of GNU parallel in `text`: `{}`, `{.}`, `{/}`, `{//}`, `{/.}`, `{#}`, `{%}`, and the
/// same after a source number (`{1}`, `{2.}`), plus `replace` (`-I`).
fn has_replacement(text: &str, replace: Option<&str>) -> bool {
    if replace.is_some_and(|r| !r.is_empty() && text.contains(r)) {
        return true;
    }
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        if let Some(close) = after.find('}')
            && is_replacement(&after[..close])
        {
            return true;
        }
        rest = after;
    }
    false
}

fn is_replacement(inner: &str) -> bool {
    let modifier = inner.trim_start_matches(|c: char| c.is_ascii_digit());
    matches!(modifier, "" | "." | "/" | "//" | "/." | "#" | "%")
}

/// `text` with every replacement string put in place by `value` (`{n}`: the `n`th of `values`).
fn substitute(text: &str, values: &[String], replace: Option<&str>) -> String {
    let all = values.join(" ");
    let mut out = String::new();
    let mut rest = text;
    if let Some(r) = replace.filter(|r| !r.is_empty()) {
        return text.replace(r, &all);
    }
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) if is_replacement(&after[..close]) => {
                let inner = &after[..close];
                let digits: String = inner.chars().take_while(char::is_ascii_digit).collect();
                let value = digits
                    .parse::<usize>()
                    .ok()
                    .and_then(|n| values.get(n.checked_sub(1)?))
                    .map_or(all.as_str(), String::as_str);
                out.push_str(value);
                rest = &after[close + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `text` as one word of shell code.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The argument `word` as shell code that gives the same value, and whether it does: a known word quoted; a word
/// with a tilde or a glob as it is written (the shell of `parallel` expands it in the same place); another word only
/// known at run time inside double quotes, where its variables and substitutions expand again.
fn argument(word: &Word) -> (String, bool) {
    if word.literal {
        return (quoted(&word.text), true);
    }
    let safe = |extra: &str| {
        word.text
            .chars()
            .all(|ch| !ch.is_whitespace() && !"\"'\\;&|<>()`".contains(ch) || extra.contains(ch))
    };
    if word.tilde || word.glob {
        return (word.text.clone(), safe(""));
    }
    (format!("\"{}\"", word.text), safe("()`"))
}

/// A word without shell syntax: joined with others by spaces and read by a shell, it stays that one word. The
/// replacement string `{}` may be a whole word (as `xargs -I{}` reads it); one inside a word (`{}.bak`) or another
/// (`{.}`) is not plain.
fn plain(word: &Word) -> bool {
    word.literal
        && !word.text.is_empty()
        && (word.text == "{}"
            || word
                .text
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || "-_./:@%+=,".contains(ch)))
}

/// What `parallel` with the options `parsed` and the words `rest` (its command, then its input sources) runs, given
/// what its standard input holds. The files of `::::` and `-a` are read.
/// The options whose effect on what runs [`runs`] knows: the rest (`-I`, `-N`, `--colsep`, `--rpl`, `--plus`, `-L`,
/// `-m`, `-X`, …) change how the arguments are split or put in place, so that the commands are only known at run
/// time.
const KNOWN_OPTIONS: &[&str] = &[
    "-j",
    "--jobs",
    "-P",
    "--max-procs",
    "-k",
    "--keep-order",
    "-q",
    "--quote",
    "--halt",
    "--halt-on-error",
    "-v",
    "--verbose",
    "--bar",
    "--eta",
    "--progress",
    "--will-cite",
    "-u",
    "--ungroup",
    "--line-buffer",
    "--lb",
    "-a",
    "--arg-file",
    "--dry-run",
    "--tag",
    "--joblog",
    "--timeout",
    "--retries",
    "--delay",
    "-t",
];

pub(super) fn runs(parsed: &Parsed<'_>, rest: &[Word], input: &Input, c: &mut Classified) -> Runs {
    let unknown_option = parsed
        .options
        .iter()
        .any(|o| !KNOWN_OPTIONS.contains(&o.name.as_ref()) && !REMOTE.contains(&o.name.as_ref()));
    // A brace that is no replacement string it knows (`{=perl=}`, `{+/}`, `{1}{2}` after `--colsep`): what it
    // stands for is only known at run time.
    let unknown_brace = rest.iter().any(|w| {
        w.text.match_indices('{').any(|(open, _)| {
            w.text
                .get(open + 1..)
                .and_then(|after| after.split_once('}'))
                .is_none_or(|(inner, _)| !is_replacement(inner))
        })
    });
    let runs = modelled(parsed, rest, input, c);
    if !unknown_option && !unknown_brace {
        return runs;
    }
    // The commands as far as the line says them are judged still (`parallel --results out rm -rf {} ::: /`), beside
    // commands only known at run time.
    match runs {
        Runs::Code(mut codes) => {
            codes.push(unknown_code());
            Runs::Code(codes)
        }
        Runs::StdinCode | Runs::FileCode | Runs::Xargs => Runs::Code(vec![unknown_code()]),
    }
}

/// What `parallel` runs as [`runs`] models it: its own options and replacement strings as they are.
fn modelled(parsed: &Parsed<'_>, rest: &[Word], input: &Input, c: &mut Classified) -> Runs {
    let quote = parsed.has(&["-q", "--quote"]);
    let pipe = parsed.has(&["--pipe", "--spreadstdin", "--pipe-part"]);
    let replace = parsed
        .options
        .iter()
        .find(|o| o.is("-I"))
        .and_then(|o| o.value.as_ref())
        .map(|v| v.text.clone());
    let split = rest
        .iter()
        .position(|w| w.literal && SOURCES.contains(&w.text.as_str()))
        .unwrap_or(rest.len());
    let (command, sources) = rest.split_at(split);
    // The values of each input source; `None`: only known at run time.
    let mut groups: Vec<Option<Vec<Word>>> = Vec::new();
    let mut files = false;
    for word in sources {
        if word.literal && SOURCES.contains(&word.text.as_str()) {
            let from_files = word.text.starts_with("::::");
            groups.push((!from_files).then(Vec::new));
            files |= from_files;
        } else if let Some(group) = groups.last_mut() {
            match group {
                Some(values) => values.push(word.clone()),
                None => c.read(word, AccessVia::Operand),
            }
        }
    }
    for option in parsed.options.iter().filter(|o| o.is_any(&["-a", "--arg-file"])) {
        if let Some(file) = &option.value {
            c.read(file, AccessVia::Flag);
            groups.push(None);
            files = true;
        }
    }
    if groups.is_empty() && command.is_empty() {
        // Its input's lines are the commands: the shell's own reading of a pipe judges what it prints.
        return Runs::StdinCode;
    }
    let known: Option<Vec<Vec<Word>>> = if groups.is_empty() {
        match input {
            // Each line is an argument, and the words do not say where the lines end: each word is judged as an
            // argument, and so are all of them as one (`echo 'rm -rf /' |`).
            Input::Words(words) => {
                let mut values = words.clone();
                if words.len() > 1 {
                    let mut all = Word::literal(&combo_texts(words).join(" "));
                    all.literal = words.iter().all(|w| w.literal);
                    values.push(all);
                }
                Some(vec![values])
            }
            Input::Unknown | Input::Found(_) => None,
        }
    } else {
        groups.into_iter().collect()
    };
    if command.is_empty() {
        return match known {
            Some(groups) => Runs::Code(combinations(&groups).map_or_else(
                || vec![unknown_code()],
                |combos| {
                    combos
                        .iter()
                        .map(|combo| code(&combo_texts(combo).join(" "), combo.iter().all(|w| w.literal)))
                        .collect()
                },
            )),
            None if files => Runs::FileCode,
            None => Runs::StdinCode,
        };
    }
    // Without `-q` the shell reads the words joined as they are; the words quoted one by one (what `-q` does) are
    // judged as well, so that a word meant as one argument (`bash -c 'rm -rf {}'`) is also seen as that.
    let joined = |quote: bool| {
        command
            .iter()
            .map(|w| if quote { quoted(&w.text) } else { w.text.clone() })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut templates = vec![joined(quote)];
    if !quote && joined(true) != joined(false) && !command.iter().all(plain) {
        templates.push(joined(true));
    }
    let literal = command.iter().all(|w| w.literal);
    if pipe {
        return Runs::Code(templates.iter().map(|t| code(t, literal)).collect());
    }
    let with = |template: &str, values: &[String]| -> String {
        if has_replacement(template, replace.as_deref()) {
            substitute(template, values, replace.as_deref())
        } else {
            format!("{template} {}", values.join(" "))
        }
    };
    match known {
        Some(groups) => Runs::Code(combinations(&groups).map_or_else(
            || vec![unknown_code()],
            |combos| {
                combos
                    .iter()
                    .flat_map(|combo| {
                        let arguments: Vec<(String, bool)> = combo.iter().map(argument).collect();
                        let literal = literal && arguments.iter().all(|(_, known)| *known);
                        let values: Vec<String> = arguments.into_iter().map(|(text, _)| text).collect();
                        templates
                            .iter()
                            .map(move |t| code(&with(t, &values), literal))
                            .collect::<Vec<_>>()
                    })
                    .collect()
            },
        )),
        None if !files && !quote && replace.is_none() && command.iter().all(plain) => Runs::Xargs,
        // Each argument stands as a variable the line does not set: a word only known at run time.
        None => Runs::Code(
            templates
                .iter()
                .map(|t| code(&with(t, &[r#""$parallel_argument""#.to_owned()]), literal))
                .collect(),
        ),
    }
}

fn combo_texts(combo: &[Word]) -> Vec<String> {
    combo.iter().map(|w| w.text.clone()).collect()
}

/// Every choice of one value from each group, in order; `None` when there are more than [`COMBINATIONS`].
fn combinations(groups: &[Vec<Word>]) -> Option<Vec<Vec<Word>>> {
    let mut combos: Vec<Vec<Word>> = vec![Vec::new()];
    for group in groups {
        let mut next = Vec::new();
        for combo in &combos {
            for value in group {
                let mut extended = combo.clone();
                extended.push(value.clone());
                next.push(extended);
                if next.len() > COMBINATIONS {
                    return None;
                }
            }
        }
        combos = next;
    }
    Some(combos)
}

fn code(text: &str, literal: bool) -> Code {
    Code {
        text: text.to_owned(),
        literal,
        kind: LocationKind::ShellString,
        via: "parallel".to_owned(),
    }
}

/// Arguments too many to judge one by one: code only known at run time.
fn unknown_code() -> Code {
    code(UNKNOWN, false)
}

/// The text of [`unknown_code`].
const UNKNOWN: &str = "{parallel arguments}";

/// Whether `code` is the commands only known at run time ([`unknown_code`]).
pub(super) fn is_unknown(code: &Code) -> bool {
    !code.literal && code.text == UNKNOWN
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacement_strings_are_found_and_put_in_place() {
        assert!(has_replacement("rm -rf {}", None));
        assert!(has_replacement("gzip {1} {2.}", None));
        assert!(!has_replacement("echo {a,b} {x}", None));
        assert!(has_replacement("cp X out/", Some("X")));
        let values = ["'/'".to_owned(), "'b'".to_owned()];
        assert_eq!(substitute("rm -rf {1}/{2}", &values, None), "rm -rf '/'/'b'");
        assert_eq!(substitute("echo {} {x}", &values, None), "echo '/' 'b' {x}");
    }

    #[test]
    fn plain_words_keep_a_replacement_string_whole() {
        assert!(plain(&Word::literal("wc")));
        assert!(plain(&Word::literal("{}")));
        assert!(!plain(&Word::literal("{.}.bak")));
        assert!(!plain(&Word::literal("{}.bak")));
        assert!(!plain(&Word::literal("a;b")));
    }

    #[test]
    fn combinations_take_one_value_of_each_source() {
        let words = |ws: &[&str]| ws.iter().map(|w| Word::literal(w)).collect::<Vec<_>>();
        let combos = combinations(&[words(&["a", "b"]), words(&["1", "2"])]).unwrap();
        let texts: Vec<String> = combos.iter().map(|c| combo_texts(c).join(" ")).collect();
        assert_eq!(texts, ["a 1", "a 2", "b 1", "b 2"]);
        let many = words(&["x"; 9]);
        assert!(combinations(&[many.clone(), many]).is_none());
    }
}
