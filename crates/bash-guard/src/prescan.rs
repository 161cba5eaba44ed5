//! The checks made on a command line before it is parsed: shapes brush-parser cannot take in bounded time or stack.
//!
//! Every limit here was found by fuzzing or measured (see each constant); an input past one is refused before
//! parsing, which makes the analysis ask. They share one quote-aware scan of the line.

/// More unclosed brackets (`(`, `[` and `{` together) than this make the parser backtrack exponentially.
const MAX_UNCLOSED: usize = 12;
/// Nesting deeper than this would exhaust the parser's stack.
const MAX_NESTING: usize = 200;
/// More braces than this in one word make the parser's brace grammar backtrack exponentially (16 took seconds): a
/// command with such a word is refused, and a word the tokenizer cut with more (a `$[…]` or `$(…)` spanning
/// separators) is not brace-expanded. The `{` of a parameter expansion counts too: the grammar parses the expansion
/// again on every path it tries, so 8 unclosed braces around two nested `${!a[…]}` took half a second (found by
/// fuzzing).
pub(crate) const MAX_WORD_BRACES: usize = 10;
/// Subscripts nested deeper than this (`${a[${b[${c[1]}]}]}` is 3) make the parser's time grow tenfold per level:
/// 2 levels take about 0.15 ms, 3 about 2.5 ms, 5 a second, 6 did not finish.
const MAX_SUBSCRIPT_NESTING: usize = 2;

/// Why `source` must not reach the parser, if it must not. Each check first looks for the bytes it is about, so
/// that a line without them (most lines, for most checks) costs one byte search instead of a quote-aware scan.
pub(crate) fn refusal(source: &str) -> Option<String> {
    // Raw control characters outside quotes have no place in a command line an agent writes, and some (a form
    // feed between here-document operators) send the parser into a loop that never ends.
    if let Some(control) = unquoted_control(source) {
        return Some(format!(
            "the control character U+{:04X} outside quotes",
            u32::from(control)
        ));
    }
    let (unclosed, nesting) = nesting(source);
    if unclosed > MAX_UNCLOSED {
        return Some(format!("{unclosed} unclosed brackets"));
    }
    if nesting > MAX_NESTING {
        return Some(format!("nesting deeper than {MAX_NESTING} levels"));
    }
    let braces = most_braces_in_a_word(source, separates_words);
    if braces > MAX_WORD_BRACES {
        return Some(format!("a word with {braces} brace-expansion braces"));
    }
    let subscripts = subscript_nesting(source);
    if subscripts > MAX_SUBSCRIPT_NESTING {
        return Some(format!("array subscripts nested {subscripts} deep"));
    }
    if unparsable_here_tag(source) {
        // brush-parser 0.4 loops or allocates without bound on here-document delimiters of other shapes (after
        // two blanks inside `$(`, holding `${`, a carriage return…); bash never expands a delimiter, so a plain
        // word after at most one blank serves every here-document.
        return Some("a here-document delimiter that is not a plain word after at most one blank".to_owned());
    }
    None
}

/// The quoting a character of the line is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quoting {
    /// Outside quotes.
    Bare,
    /// Inside `'…'`, where nothing is special.
    Single,
    /// Inside `"…"`, where `$`, `` ` `` and `\` still are.
    Double,
}

/// One character of the line as the scan sees it.
#[derive(Debug, Clone, Copy)]
struct Scanned {
    /// Its byte offset.
    at: usize,
    c: char,
    /// The quoting it is in; a quote character that opens or closes is reported in the quoting it ends or starts
    /// from, with `delimits` set.
    quoting: Quoting,
    /// It opens or closes a quoted span.
    delimits: bool,
    /// A backslash before it takes away its meaning.
    escaped: bool,
}

impl Scanned {
    /// Whether the character has its shell meaning outside quotes.
    fn bare(&self) -> bool {
        self.quoting == Quoting::Bare && !self.escaped && !self.delimits
    }
}

/// The characters of `source` with their quoting, the way bash tokenizes quotes: a backslash escapes the next
/// character outside quotes and inside double quotes, and is literal inside single quotes; the escaping backslash
/// itself is not reported.
fn scan(source: &str) -> impl Iterator<Item = Scanned> + '_ {
    let mut quoting = Quoting::Bare;
    let mut chars = source.char_indices();
    std::iter::from_fn(move || {
        let (at, c) = chars.next()?;
        let scanned = match (quoting, c) {
            (Quoting::Bare | Quoting::Double, '\\') => {
                let (at, c) = chars.next()?;
                Scanned {
                    at,
                    c,
                    quoting,
                    delimits: false,
                    escaped: true,
                }
            }
            (Quoting::Bare, '\'' | '"') => {
                quoting = if c == '"' {
                    Quoting::Double
                } else {
                    Quoting::Single
                };
                Scanned {
                    at,
                    c,
                    quoting: Quoting::Bare,
                    delimits: true,
                    escaped: false,
                }
            }
            (Quoting::Single, '\'') | (Quoting::Double, '"') => {
                let was = quoting;
                quoting = Quoting::Bare;
                Scanned {
                    at,
                    c,
                    quoting: was,
                    delimits: true,
                    escaped: false,
                }
            }
            (Quoting::Bare | Quoting::Single | Quoting::Double, _) => Scanned {
                at,
                c,
                quoting,
                delimits: false,
                escaped: false,
            },
        };
        Some(scanned)
    })
}

/// The first control character (other than tab, newline and carriage return) outside quotes.
fn unquoted_control(source: &str) -> Option<char> {
    if !source
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
    {
        return None;
    }
    scan(source)
        .find(|s| s.bare() && s.c.is_control() && !matches!(s.c, '\t' | '\n' | '\r'))
        .map(|s| s.c)
}

/// Whether `c` outside quotes ends a word for the brace count taken before parsing.
fn separates_words(c: char) -> bool {
    c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')' | '<' | '>')
}

/// The most `{` outside quotes in one word of `source`, those of parameter expansions (`${`) included: the braces
/// the brace-expansion grammar tries to pair, and the expansions it parses again with each try. `separates` says
/// which characters end a word; for a word the tokenizer has already cut, none does.
pub(crate) fn most_braces_in_a_word(source: &str, separates: impl Fn(char) -> bool) -> usize {
    if !source.contains('{') {
        return 0;
    }
    let mut most = 0usize;
    let mut current = 0usize;
    for s in scan(source) {
        if s.bare() {
            if s.c == '{' {
                current += 1;
                most = most.max(current);
            } else if separates(s.c) {
                current = 0;
            }
        }
    }
    most
}

/// Whether `word` holds a `{` outside quotes that does not open a parameter expansion: without one, the word
/// has no brace expansion.
pub(crate) fn has_brace_expansion_opener(word: &str) -> bool {
    let mut previous = ' ';
    scan(word).any(|s| {
        let opens = s.bare() && s.c == '{' && previous != '$';
        previous = s.c;
        opens
    })
}

/// The number of brackets (`(`, `[` and `{`, each kind counted on its own) left open at the end, and the deepest
/// nesting of `(`/`{`.
///
/// An unclosed `$(`, `$((`, `$[` or `[` sends the word parser back over everything after it, so many of them, of
/// any kind, are exponential (found by fuzzing, in here-document bodies). Quotes are not trusted here: the body of
/// a here-document is expanded like double-quoted text whatever quote characters it holds, so a `'` there hid
/// sixteen unclosed `$(` from a quote-aware count. Only escaped characters are left out.
fn nesting(source: &str) -> (usize, usize) {
    if !source.contains(['(', '[', '{']) {
        return (0, 0);
    }
    let mut parens = 0usize;
    let mut brackets = 0usize;
    let mut braces = 0usize;
    let mut deepest = 0usize;
    for s in scan(source).filter(|s| !s.escaped && !s.delimits) {
        match s.c {
            '(' => parens += 1,
            ')' => parens = parens.saturating_sub(1),
            '[' => brackets += 1,
            ']' => brackets = brackets.saturating_sub(1),
            '{' => braces += 1,
            '}' => braces = braces.saturating_sub(1),
            _ => {}
        }
        deepest = deepest.max(parens + braces);
    }
    (parens + brackets + braces, deepest)
}

/// How deeply `${name[…]}` subscripts nest. Double quotes do not stop expansion and the parser reads inside single
/// quotes within `${…}` too, so only escaped characters are left out: the count errs on the high side.
fn subscript_nesting(source: &str) -> usize {
    /// What an open bracket on the stack is.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Open {
        /// `${`: a parameter expansion, whose first `[` opens a subscript.
        Parameter,
        /// A `[` directly inside a parameter expansion.
        Subscript,
        /// Any other `{` or `[`.
        Other,
    }
    if !source.contains("${") {
        return 0;
    }
    let mut stack: Vec<Open> = Vec::new();
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut previous = ' ';
    for s in scan(source).filter(|s| !s.escaped) {
        match s.c {
            '{' if previous == '$' => stack.push(Open::Parameter),
            '{' => stack.push(Open::Other),
            '[' if stack.last() == Some(&Open::Parameter) => {
                stack.push(Open::Subscript);
                depth += 1;
                deepest = deepest.max(depth);
            }
            '[' => stack.push(Open::Other),
            '}' | ']' if stack.pop() == Some(Open::Subscript) => depth = depth.saturating_sub(1),
            _ => {}
        }
        previous = s.c;
    }
    deepest
}

/// Whether a `<<` or `<<-` outside quotes is followed by more than one blank (line continuations do not count) or
/// by anything but a plain delimiter word, or a run of more than three `<` stands outside quotes.
fn unparsable_here_tag(source: &str) -> bool {
    if !source.contains("<<") {
        return false;
    }
    // Quotes hide a `<<` (`python3 -c "print(1 << 2)"`, `echo 'a << b'`) as long as this flat scan reads them as
    // bash does. It stops doing so at the first `$(`, `${`, `$[` or `` ` `` inside double quotes (code starts again
    // there, with quotes of its own), at a here-document (its body's quotes are text) and at a `#` (a comment's
    // quotes are text): from there on a quoted `<<` is checked like a bare one. Each run of
    // `<` is taken whole: `<<` is a here-document, `<<<` a here-string, and a longer run (`<<<<<` is `<<<` then `<<`)
    // has no use worth the parser's trouble with it (found by fuzzing).
    let mut quotes_followed = true;
    // The character before, and whether it was escaped.
    let mut previous = (' ', true);
    let runs = scan(source).filter(|s| {
        let plain = !s.escaped && !s.delimits;
        let after_dollar = previous == ('$', false);
        // An escaped `<` is a letter, so `\<<<` is a `<` and then the operator `<<` (found by a stress run: the
        // parser allocates without bound on `\<<<\ $(` after a carriage return).
        let is_run_start = s.c == '<' && previous != ('<', false);
        match s.quoting {
            Quoting::Double if plain => {
                quotes_followed &= !(s.c == '`' || (after_dollar && matches!(s.c, '(' | '{' | '[')));
            }
            Quoting::Bare if plain => {
                let here_document = is_run_start
                    && source
                        .get(s.at..)
                        .is_some_and(|rest| rest.starts_with("<<") && !rest.starts_with("<<<"));
                quotes_followed &= !(s.c == '#' || here_document);
            }
            Quoting::Bare | Quoting::Single | Quoting::Double => {}
        }
        previous = (s.c, s.escaped);
        let quoted = match s.quoting {
            Quoting::Bare => false,
            Quoting::Single | Quoting::Double => quotes_followed,
        };
        plain && is_run_start && !quoted
    });
    runs.map(|s| s.at).any(|at| {
        let rest = source.get(at..).unwrap_or_default();
        let run = rest.len() - rest.trim_start_matches('<').len();
        if run != 2 {
            return run > 3;
        }
        let rest = source.get(at + 2..).unwrap_or_default();
        let mut rest = rest.strip_prefix('-').unwrap_or(rest);
        let mut blanks = 0usize;
        loop {
            if let Some(after) = rest.strip_prefix("\\\n") {
                rest = after;
            } else if let Some(after) = rest.strip_prefix([' ', '\t']) {
                blanks += 1;
                rest = after;
            } else {
                break;
            }
        }
        blanks > 1 || !plain_delimiter(rest)
    })
}

/// Whether `rest` starts with a here-document delimiter of the common shape: `WORD`, `'WORD'`, `"WORD"` or `\WORD`,
/// WORD made of letters, digits and `_-.:+@%/=,~!?#^`, ending the text or followed by a blank or an operator.
///
/// brush-parser's tokenizer loops or allocates without bound on some other delimiters (a missing one, one holding
/// `${` or `$(` inside `$(`, a carriage return inside a subshell; all found by fuzzing). Nothing is lost: bash never
/// expands a delimiter, so any text can be a plain word.
fn plain_delimiter(rest: &str) -> bool {
    let (quote, word) = match rest.chars().next() {
        Some(q @ ('\'' | '"')) => (Some(q), rest.get(1..).unwrap_or_default()),
        Some('\\') => (None, rest.get(1..).unwrap_or_default()),
        _ => (None, rest),
    };
    let end = word
        .find(|c: char| !(c.is_ascii_alphanumeric() || "_-.:+@%/=,~!?#^".contains(c)))
        .unwrap_or(word.len());
    let Some(after) = word.get(end..).filter(|_| end > 0) else {
        return false;
    };
    let after = match quote {
        Some(q) => match after.strip_prefix(q) {
            Some(after) => after,
            None => return false,
        },
        None => after,
    };
    after.is_empty() || after.starts_with([' ', '\t', '\n', ';', '&', '|', '<', '>', ')'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scan_follows_bash_quoting() {
        let bare: String = scan(r#"a'b"c'"d\"e'f"\g"#)
            .filter(Scanned::bare)
            .map(|s| s.c)
            .collect();
        assert_eq!(bare, "a");
        let escaped: String = scan(r#"a\"b"\"c""#).filter(|s| s.escaped).map(|s| s.c).collect();
        assert_eq!(escaped, "\"\"");
        // An escaped quote inside double quotes does not close them: the control character stays quoted.
        assert_eq!(unquoted_control("echo \"a\\\" \u{c}\""), None);
        assert_eq!(unquoted_control("echo \"a\\\"\" \u{c}"), Some('\u{c}'));
    }

    #[test]
    fn braces_are_counted_per_word_outside_quotes() {
        let count = |s: &str| most_braces_in_a_word(s, separates_words);
        assert_eq!(count("echo {a,b} {c,d}"), 1);
        assert_eq!(count("echo ${a}${b}${c}"), 3);
        assert_eq!(
            count("echo \"${a}${b}${c}\""),
            0,
            "no brace expansion inside quotes"
        );
        assert_eq!(count("awk '{{{{{{{{{{{{{{{{'"), 0);
        assert_eq!(count("{ { { echo; }; }; }"), 1);
        assert_eq!(count("echo {,{,{,{,"), 4);
        assert_eq!(count("echo \"a\\\"{{{{\" {{"), 2);
        // One word to the tokenizer: `$[…]` spans the separators, so every brace counts.
        let word = "}{1{]{$[F;\n(N({\n?{\nU%]{{1{]{$[F;\n(N(I\n(N(I{{-{\n?{{{-{\n?{\nU%]I{{-{@";
        assert!(most_braces_in_a_word(word, |_| false) > MAX_WORD_BRACES);
    }

    #[test]
    fn parameter_expansions_inside_unclosed_braces_are_bounded() {
        // Found by fuzzing: each unclosed brace multiplied the parses of the nested expansions (8 took 0.5 s).
        let slow = ":{{{{{2{{-#{R${!R[Token::Wor{R${!R[Token::Wordd(w, l)]}}\"+e\"Q;";
        assert!(refusal(slow).is_some_and(|why| why.contains("brace")));
        for braces in 1..=6 {
            let line = format!(":{}-#{{R${{!R[T{{R${{!R[W]}}}}", "{".repeat(braces));
            assert_eq!(refusal(&line), None, "{line}");
        }
        // Parameter expansions alone stay far from the limit in ordinary lines.
        assert_eq!(refusal("cp \"${src}/${name}\" \"${dst}/${name}.${ext}\""), None);
        assert_eq!(refusal("echo ${a}${b}${c}${d}${e}"), None);
    }

    #[test]
    fn nesting_is_measured_whatever_the_quotes() {
        assert_eq!(nesting("echo '(((('").0, 4);
        assert_eq!(nesting("echo \\(\\(").0, 0);
        let here_document = "<<!\n'[$(a$(b(c$(d$(e$(f$(g$(h(i(j(k$(l$(m(";
        assert!(nesting(here_document).0 > MAX_UNCLOSED);
        assert_eq!(nesting("[[ -f a ]] && { echo $(( x[1] )); }").0, 0);
        assert_eq!(nesting("<<x\n[a\n[b{c$[d[$((e").0, 7);
        assert_eq!(nesting("((((((").0, 6);
        assert_eq!(nesting("a $(b $(c)) { d; }").1, 2);
    }

    #[test]
    fn subscripts_nesting_is_measured_inside_parameter_expansions() {
        assert_eq!(subscript_nesting("echo ${a[1]} ${b[2]}"), 1);
        assert_eq!(subscript_nesting("echo ${a[${b[${c[1]}]}]}"), 3);
        assert_eq!(subscript_nesting("echo \"${a[${b[${c[${d[1]}]}]}]}\""), 4);
        assert_eq!(subscript_nesting("[[ -f x ]] && { echo [a]; }"), 0);
        assert_eq!(subscript_nesting("echo ${a[$((${b[$((${c[${d[1]}]}))]}))]}"), 4);
        assert!(refusal("echo ${a[${b[${c[${d[${e[1]}]}]}]}]}").is_some());
        assert!(refusal("echo ${a[${b[${c[1]}]}]}").is_some());
        assert!(refusal("echo ${a[${b[1]}]}").is_none());
    }

    #[test]
    fn here_document_delimiters_the_parser_cannot_take() {
        for source in [
            "<<$( ;$(",
            "cat <<\"a $( ;\"",
            "$(<< >#",
            "cat <<",
            "cat << ;",
            "x <<`y`",
            "a=$(cat <<  EOF \nbody\nEOF\n)",
            "$(x <<-\t\tp \n",
            "$(x<<\\\n  p ",
            "(<<\r|(<#&&\n\n\u{52b}\n(%%<",
            "cat <<'EOF\nx",
            "cat <<EOF(",
            "<<<<<\"\"<<<<<#\"<<<<<<<<>&\n>&[\n",
            "cat <<<<EOF",
            "echo \"x\"|& ) \r)\\<<<\\ $($(  ",
            "cat \\<<<  $(x",
            // Single quotes the scan no longer follows.
            "echo \"\t''$(\t<<<\"$'$(<<-\r$(  \n\"(",
            "cat <<EOF\nit's\nEOF\ncat <<  $(x",
        ] {
            assert!(unparsable_here_tag(source), "{source}");
        }
        for source in [
            "cat <<EOF\nx\nEOF",
            "cat <<'EOF'\n$(x)\nEOF",
            "cat <<< \"$(date)\"",
            "echo a<<b",
            "a=$(cat << EOF\nbody\nEOF\n)",
            "cat <<-\tEOF\n\tx\n\tEOF",
            "python3 - <<'PY'\nprint(1)\nPY",
            "cat <<\\END_OF_TEXT | grep x\nEND_OF_TEXT",
            "cat <<\"EOF\">out\nx\nEOF",
            "echo $(cat <<EOF\nx\nEOF\n)",
            "grep x <<< \"$v\" <in",
            // Inside double quotes `<<` is text: a shift in a script, a word of a message.
            "python3 -c \"print(1 << (2))\"",
            "python3 -c \"x = 1\nprint(x <<  3)\"",
            "echo \"a <<b\" > /dev/null",
            "git commit -m \"docs: explain <<(x)\"",
            "echo \"\\$(x <<  y)\"",
        ] {
            assert!(!unparsable_here_tag(source), "{source}");
        }
        // Where the scan no longer reads the quotes as bash does, a double-quoted `<<` is checked like a bare one.
        for source in [
            // Code inside double quotes, and quotes inside it.
            "echo \"$(cat <<  $(x))\"",
            "echo \"$(echo \")\" <<  $(x)\"",
            "echo \"`cat <<  x`\"",
            "echo \"${x:-$(cat <<  y)}\"",
            // A here-document body's quote, and a comment's, are text.
            "cat <<EOF\nsaid \"hi\nEOF\ncat <<  $(x",
            "ls # a \"quote\ncat <<  $(x",
        ] {
            assert!(unparsable_here_tag(source), "{source}");
        }
    }
}
