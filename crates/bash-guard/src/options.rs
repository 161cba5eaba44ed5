//! The one reader of command-line options: every command's words go through it, as its table's syntax says.
//!
//! It reads what getopt reads — short options clustered (`-rf`), a value attached or in the next word (`-n5`,
//! `-n 5`), long options with `=value` and unique abbreviations (`--comp` for `--compress-program`), `--` ending
//! the options, `-` an operand — and the variants commands use: options only before the first operand (POSIX and
//! builtins, wrappers), `+x` options (`set +o`), whole-word options with one dash (`find -name`, `kill -9`), values
//! that may only be attached (`sed -i[SUFFIX]`) and options with two values (`jq --arg NAME VALUE`).

use std::borrow::Cow;

use crate::knowledge::{Effect, Syntax};
use crate::word::{Anchor, Word};

/// One option as the program reads it.
#[derive(Debug, Clone)]
pub(crate) struct Opt<'a> {
    /// `-x` for one letter of a cluster, `--name` for a long option (before its `=`), `-name` or `-9` for a
    /// whole-word option, `+x` for a plus option.
    pub(crate) name: Cow<'a, str>,
    /// The value, attached or the next word.
    pub(crate) value: Option<Word>,
    /// The second value of an option with two (`jq --arg NAME VALUE`).
    pub(crate) second: Option<Word>,
    /// The word it was written in.
    pub(crate) word: &'a Word,
    /// The option is one the syntax names (or, for a long one, abbreviates one).
    pub(crate) known: bool,
    /// A long name that is one of the syntax's own options as written, so it abbreviates no other.
    exact: bool,
}

impl Opt<'_> {
    /// Whether this is the option `full`: the same name, or a long option that abbreviates it without being
    /// another option of the command (getopt_long takes any unique prefix; an ambiguous one counts as each
    /// option it could stand for, which is never less strict).
    pub(crate) fn is(&self, full: &str) -> bool {
        self.name == full || (!self.exact && abbreviates(&self.name, full))
    }

    /// Whether this is one of `names`.
    pub(crate) fn is_any(&self, names: &[&str]) -> bool {
        names.iter().any(|name| self.is(name))
    }

    /// The effects of this option in `syntax`: those of its exact name, else of every long option it abbreviates.
    pub(crate) fn effects<'s>(&'s self, syntax: &'s Syntax) -> impl Iterator<Item = Effect> + 's {
        let exact = syntax.effects.iter().any(|(name, _)| *name == self.name);
        let long = self.name.starts_with("--");
        syntax
            .effects
            .iter()
            .filter(move |(name, _)| *name == self.name || (!exact && long && abbreviates(&self.name, name)))
            .map(|(_, effect)| *effect)
    }
}

/// What one word (or one letter of a cluster) is.
#[derive(Debug, Clone)]
#[expect(
    clippy::large_enum_variant,
    reason = "a token lives for one step of a loop; boxing the option would allocate for every option read"
)]
pub(crate) enum Token<'a> {
    /// An option, with its value.
    Option(Opt<'a>),
    /// An operand: at its index in the arguments.
    Operand { at: usize, word: &'a Word },
}

/// Whether the long option `written` (`--comp`) abbreviates `full` (`--compress-program`).
pub(crate) fn abbreviates(written: &str, full: &str) -> bool {
    written.len() > 2 && written.starts_with("--") && full.starts_with("--") && full.starts_with(written)
}

/// Reads the arguments of one command (the words after its name) with its syntax.
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    args: &'a [Word],
    syntax: Syntax,
    at: usize,
    /// Options have ended: after `--`, or (POSIX) at the first operand.
    ended: bool,
    /// `--` ended them.
    dashes: bool,
    /// The cluster being read (`-rf`): its word and the byte offset of its next letter.
    cluster: Option<(&'a Word, usize)>,
    /// A word only known at run time stood where an option could be.
    dynamic: bool,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(args: &'a [Word], syntax: &Syntax) -> Self {
        Self {
            args,
            syntax: *syntax,
            at: 0,
            ended: false,
            dashes: false,
            cluster: None,
            dynamic: false,
        }
    }

    /// The index of the next word not yet read.
    pub(crate) fn position(&self) -> usize {
        self.at
    }

    /// `--` ended the options.
    pub(crate) fn ended_by_dashes(&self) -> bool {
        self.dashes
    }

    /// A word only known at run time stood where an option could be (it may be any option).
    pub(crate) fn saw_dynamic(&self) -> bool {
        self.dynamic
    }

    /// Every word from here on is an operand (`kill -9 -1`: after the signal, `-1` is a process).
    pub(crate) fn end_options(&mut self) {
        self.ended = true;
    }

    /// The next word as it is, whatever it looks like (the value of `find -newerXY`).
    pub(crate) fn take_word(&mut self) -> Option<&'a Word> {
        let word = self.args.get(self.at)?;
        self.at += 1;
        Some(word)
    }

    /// The words up to a literal one of `ends` (`find -exec … ;`), and whether it was found.
    pub(crate) fn take_until(&mut self, ends: &[&str]) -> (Vec<Word>, bool) {
        let mut words = Vec::new();
        while let Some(word) = self.take_word() {
            if word.literal && ends.contains(&word.text.as_str()) {
                return (words, true);
            }
            words.push(word.clone());
        }
        (words, false)
    }

    fn operand(&mut self, at: usize, word: &'a Word) -> Token<'a> {
        if self.syntax.posix {
            self.ended = true;
        }
        Token::Operand { at, word }
    }

    fn is_known(&self, name: &str) -> bool {
        let s = &self.syntax;
        [s.values, s.optional, s.pairs, s.flags]
            .iter()
            .any(|list| list.contains(&name))
            || s.effects.iter().any(|(option, _)| *option == name)
    }

    /// Whether some long option of `list` is `name` or abbreviated by it.
    fn long_in(list: &[&str], name: &str, exact: bool) -> bool {
        list.iter()
            .any(|full| *full == name || (!exact && abbreviates(name, full)))
    }

    fn value_word(&mut self) -> Option<Word> {
        self.take_word().cloned()
    }

    /// `--name=$(…)`: the option is known, only its value is not.
    fn dynamic_long(&mut self, word: &'a Word) -> Option<Opt<'a>> {
        if self.syntax.single_dash || word.anchor != Anchor::Static {
            return None;
        }
        let (name, _) = word.text.split_once('=')?;
        let bare = name.strip_prefix("--")?;
        if bare.is_empty() || !bare.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return None;
        }
        let exact = self.is_known(name);
        let known = exact || self.abbreviates_known(name);
        Some(Opt {
            name: Cow::Borrowed(name),
            value: Some(word.after(&format!("{name}="))),
            second: None,
            word,
            known,
            exact,
        })
    }

    fn abbreviates_known(&self, name: &str) -> bool {
        let s = &self.syntax;
        [s.values, s.optional, s.pairs, s.flags]
            .iter()
            .any(|list| list.iter().any(|full| abbreviates(name, full)))
            || s.effects.iter().any(|(full, _)| abbreviates(name, full))
    }

    fn long(&mut self, word: &'a Word) -> Token<'a> {
        let text = word.text.as_str();
        let (name, attached) = match text.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (text, None),
        };
        let exact = self.is_known(name);
        let known = exact || self.abbreviates_known(name);
        let s = self.syntax;
        let takes = Self::long_in(s.values, name, exact);
        let pair = Self::long_in(s.pairs, name, exact);
        let value = match attached {
            // Also for an option without a value, which getopt refuses: the value is kept for the reason.
            Some(value) => Some(Word::literal(value)),
            None if takes || pair => self.value_word(),
            None => None,
        };
        let second = if pair { self.value_word() } else { None };
        Token::Option(Opt {
            name: Cow::Borrowed(name),
            value,
            second,
            word,
            known,
            exact,
        })
    }

    fn whole(&mut self, word: &'a Word) -> Token<'a> {
        let name = word.text.as_str();
        let s = self.syntax;
        let numeric = s.numeric
            && name
                .get(1..)
                .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()));
        let value = if s.values.contains(&name) || s.pairs.contains(&name) {
            self.value_word()
        } else {
            None
        };
        let second = if s.pairs.contains(&name) {
            self.value_word()
        } else {
            None
        };
        Token::Option(Opt {
            name: Cow::Borrowed(name),
            value,
            second,
            word,
            known: numeric || self.is_known(name),
            exact: true,
        })
    }

    /// The name of one letter of a cluster: the syntax's own spelling when it knows it, so that nothing is
    /// allocated for it.
    fn letter_name(&self, sign: char, letter: char) -> Cow<'a, str> {
        let mut buffer = [0u8; 8];
        let sign_len = sign.encode_utf8(&mut buffer).len();
        let len = sign_len
            + letter
                .encode_utf8(buffer.get_mut(sign_len..).unwrap_or_default())
                .len();
        let name = std::str::from_utf8(buffer.get(..len).unwrap_or_default()).unwrap_or_default();
        let s = self.syntax;
        [s.values, s.optional, s.pairs, s.flags]
            .iter()
            .flat_map(|list| list.iter())
            .chain(s.effects.iter().map(|(option, _)| option))
            .find(|known| **known == name)
            .map_or_else(|| Cow::Owned(name.to_owned()), |known| Cow::Borrowed(*known))
    }

    /// The next letter of the cluster being read, as an option.
    fn next_letter(&mut self) -> Option<Token<'a>> {
        let (word, at) = self.cluster?;
        let text = word.text.as_str();
        let sign = text.chars().next().unwrap_or('-');
        let mut rest = text.get(at..).unwrap_or_default().chars();
        let Some(letter) = rest.next() else {
            self.cluster = None;
            return None;
        };
        let after = at + letter.len_utf8();
        let remainder = text.get(after..).unwrap_or_default();
        let name = self.letter_name(sign, letter);
        let s = self.syntax;
        let takes = s.values.contains(&&*name);
        let pair = s.pairs.contains(&&*name);
        let optional = s.optional.contains(&&*name);
        let known = self.is_known(&name);
        if takes || pair || optional {
            self.cluster = None;
            let value = if !remainder.is_empty() {
                Some(Word::literal(remainder))
            } else if optional {
                None
            } else {
                self.value_word()
            };
            let second = if pair { self.value_word() } else { None };
            return Some(Token::Option(Opt {
                name,
                value,
                second,
                word,
                known,
                exact: true,
            }));
        }
        self.cluster = (!remainder.is_empty()).then_some((word, after));
        Some(Token::Option(Opt {
            name,
            value: None,
            second: None,
            word,
            known,
            exact: true,
        }))
    }
}

impl<'a> Iterator for Reader<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        if self.cluster.is_some()
            && let Some(token) = self.next_letter()
        {
            return Some(token);
        }
        let at = self.at;
        let word = self.args.get(at)?;
        self.at += 1;
        if self.ended {
            return Some(Token::Operand { at, word });
        }
        if !word.literal {
            if let Some(option) = self.dynamic_long(word) {
                return Some(Token::Option(option));
            }
            if word.could_be_option() {
                self.dynamic = true;
            }
            return Some(self.operand(at, word));
        }
        let text = word.text.as_str();
        if text == "--" && !self.syntax.single_dash {
            self.ended = true;
            self.dashes = true;
            return self.next();
        }
        let dash = text.len() > 1 && text.starts_with('-');
        let plus = self.syntax.plus && text.len() > 1 && text.starts_with('+');
        let negative = self.syntax.negative_operands
            && text
                .strip_prefix('-')
                .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit() || c == '.') || n == "inf");
        if !dash && !plus || negative {
            return Some(self.operand(at, word));
        }
        let numeric = self.syntax.numeric
            && text
                .get(1..)
                .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()));
        if self.syntax.single_dash || numeric {
            return Some(self.whole(word));
        }
        if dash && text.starts_with("--") {
            return Some(self.long(word));
        }
        let sign = text.chars().next().map_or(1, char::len_utf8);
        self.cluster = Some((word, sign));
        self.next()
    }
}

/// Every option and operand of `args`, read with `syntax`.
#[derive(Debug)]
pub(crate) struct Parsed<'a> {
    pub(crate) options: Vec<Opt<'a>>,
    pub(crate) operands: Vec<&'a Word>,
    /// A word only known at run time stood where an option could be.
    pub(crate) dynamic: bool,
}

impl Parsed<'_> {
    /// Whether one of the options is one of `names`.
    pub(crate) fn has(&self, names: &[&str]) -> bool {
        self.options.iter().any(|option| option.is_any(names))
    }

    /// Every effect the options have in `syntax`, with the option's value.
    pub(crate) fn effects(&self, syntax: &Syntax) -> Vec<(Effect, Option<Word>)> {
        let mut out = Vec::new();
        for option in &self.options {
            for effect in option.effects(syntax) {
                out.push((effect, option.value.clone()));
            }
        }
        out
    }
}

/// Reads all of `args`.
pub(crate) fn read<'a>(args: &'a [Word], syntax: &Syntax) -> Parsed<'a> {
    let mut reader = Reader::new(args, syntax);
    let mut options = Vec::new();
    let mut operands = Vec::new();
    for token in reader.by_ref() {
        match token {
            Token::Option(option) => options.push(option),
            Token::Operand { word, .. } => operands.push(word),
        }
    }
    Parsed {
        options,
        operands,
        dynamic: reader.saw_dynamic(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::GNU;
    use crate::word::expand;

    fn words(raw: &[&str]) -> Vec<Word> {
        raw.iter().map(|w| expand(w)).collect()
    }

    #[test]
    fn negative_numbers_are_operands_where_the_syntax_says_so() {
        let args = words(&["-w", "-5", "-1e9", "-.5", "-inf", "-x"]);
        let syntax = Syntax {
            negative_operands: true,
            ..GNU
        };
        let parsed = read(&args, &syntax);
        let operands: Vec<&str> = parsed.operands.iter().map(|o| o.text.as_str()).collect();
        assert_eq!(operands, ["-5", "-1e9", "-.5", "-inf"]);
        let names: Vec<&str> = parsed.options.iter().map(|o| o.name.as_ref()).collect();
        assert_eq!(names, ["-w", "-x"]);
        // Elsewhere `-5` is an option cluster, as getopt reads it.
        assert!(read(&args, &GNU).operands.is_empty());
    }

    #[test]
    fn clusters_values_and_abbreviations() {
        let args = words(&["-rno", "out.txt", "--comp=gzip", "a", "--", "-x"]);
        let syntax = Syntax {
            values: &["-o", "--compress-program", "--output"],
            ..GNU
        };
        let parsed = read(&args, &syntax);
        let names: Vec<&str> = parsed.options.iter().map(|o| o.name.as_ref()).collect();
        assert_eq!(names, ["-r", "-n", "-o", "--comp"]);
        assert_eq!(parsed.options[2].value.as_ref().unwrap().text, "out.txt");
        assert!(parsed.options[3].is("--compress-program"));
        let operands: Vec<&str> = parsed.operands.iter().map(|o| o.text.as_str()).collect();
        assert_eq!(operands, ["a", "-x"]);
    }

    #[test]
    fn posix_stops_at_the_first_operand() {
        let args = words(&["-n", "5", "cmd", "-x"]);
        let syntax = Syntax {
            values: &["-n"],
            posix: true,
            ..GNU
        };
        let parsed = read(&args, &syntax);
        assert_eq!(parsed.options.len(), 1);
        assert_eq!(parsed.operands.len(), 2);
    }

    #[test]
    fn optional_values_are_attached_only() {
        let args = words(&["-i.bak", "-i", "s/a/b/", "--in-place=x", "f"]);
        let syntax = Syntax {
            optional: &["-i", "--in-place"],
            ..GNU
        };
        let parsed = read(&args, &syntax);
        assert_eq!(parsed.options.len(), 3);
        assert_eq!(parsed.options[0].value.as_ref().unwrap().text, ".bak");
        assert!(parsed.options[1].value.is_none());
        assert_eq!(parsed.operands.len(), 2);
    }

    #[test]
    fn exact_names_abbreviate_nothing() {
        let args = words(&["--text", "--tex"]);
        let syntax = Syntax {
            flags: &["--text"],
            values: &["--textconv"],
            ..GNU
        };
        let parsed = read(&args, &syntax);
        assert!(!parsed.options[0].is("--textconv"));
        assert!(parsed.options[1].is("--textconv"));
    }

    #[test]
    fn dynamic_words() {
        let args = words(&["--author=$(id)", "$x"]);
        let parsed = read(&args, &GNU);
        assert_eq!(parsed.options[0].name, "--author");
        assert!(!parsed.options[0].value.as_ref().unwrap().literal);
        assert!(parsed.dynamic);
    }
}
