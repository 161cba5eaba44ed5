//! Quote removal and static expansion of one word: its text, whether it is a literal, and the code inside it.

use crate::parse::{self, ArithKind, ArithText, Piece};

/// Where a word's value starts, for judging what a path operand means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// The word starts with text known now.
    Static,
    /// The word starts with `~` or `$HOME`: the home directory.
    Home,
    /// The word starts with `$PWD` or `$(pwd)`: the working directory.
    WorkingDir,
    /// The word starts with something only known at run time.
    Dynamic,
}

/// Code found inside a word that runs when the word is expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Embedded {
    pub(crate) body: String,
    pub(crate) backticks: bool,
}

/// One part of a word made only of text, anchors and variables, for naming the files it may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    /// Text known now, quotes removed (it may hold an active glob).
    Text(String),
    /// A directory the shell puts there, written as `FileAccess::path` writes it: `~` for a leading unquoted `~`,
    /// `.` for `~+` and `$(pwd)` (`$HOME` and `$PWD` are variables, resolved with the others).
    Anchor(&'static str),
    /// The value of a named variable or of array elements as it is (`$x`, `${x}`, `${a[i]}`, `"${a[@]}"`);
    /// `quoted` inside double quotes, where the value is neither split into words nor globbed.
    Variable { name: String, quoted: bool },
}

/// A word after quote removal, with what the analysis needs to know about it.
#[derive(Debug, Clone)]
pub(crate) struct Word {
    /// The value; parts only known at run time are kept as their source text (`$x`, `$(…)`).
    pub(crate) text: String,
    /// No expansion, no active glob: the shell passes exactly `text`.
    pub(crate) literal: bool,
    /// The text after the anchor (`~/x` → `/x`), for judging paths.
    pub(crate) rest: String,
    pub(crate) anchor: Anchor,
    /// An unquoted `*`, `?` or `[` that the shell would expand against file names.
    pub(crate) glob: bool,
    /// A tilde expansion, which is deterministic: such a word may still name a path for Read/Edit rules.
    pub(crate) tilde: bool,
    /// A parameter that re-expands its value as code or escapes (`${x@P}`, `${!x}`).
    pub(crate) reexpands: bool,
    /// `$(…)` and backticks in the word, in order.
    pub(crate) embedded: Vec<Embedded>,
    /// The arithmetic the word's expansion evaluates: `$((…))`, subscripts, substring offsets (outermost only).
    pub(crate) arithmetic: Vec<ArithText>,
    /// A problem splitting the word (the shell would likely refuse it too).
    pub(crate) error: Option<String>,
    /// The word as text, anchors and variables, in order; `None` when anything else is in it (`$(…)`, `$1`,
    /// `${x%/*}`, `${x:-…}`, `$((…))`, `~user`), so that its value is only known at run time.
    pub(crate) segments: Option<Vec<Segment>>,
    /// The word is `NAME=~…` with the `~` unquoted and ending the tilde prefix: an argument of `declare`,
    /// `export` or `local` that bash expands as it would the assignment `NAME=~…`.
    pub(crate) assignment_tilde: bool,
    /// The names of the variables the word expands (`$x`, `${x:-$y}` gives `x` and `y`).
    pub(crate) variables: Vec<String>,
}

impl Word {
    /// A word known in full, like `{}` that `find` substitutes.
    pub(crate) fn literal(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            literal: true,
            rest: text.to_owned(),
            anchor: Anchor::Static,
            glob: false,
            tilde: false,
            reexpands: false,
            embedded: Vec::new(),
            arithmetic: Vec::new(),
            error: None,
            segments: Some(vec![Segment::Text(text.to_owned())]),
            assignment_tilde: false,
            variables: Vec::new(),
        }
    }

    /// A word whose value is only known at run time, shown as `text` in a reason (`{xargs input}`).
    pub(crate) fn unknown(text: &str) -> Self {
        let mut word = Self::literal(text);
        word.literal = false;
        word.anchor = Anchor::Dynamic;
        word.segments = None;
        word
    }

    /// The word after a static prefix (`--file=` of `--file=$f`, `if=` of `if=$f`), which must be text the word
    /// starts with: the value part of an option word.
    pub(crate) fn after(&self, prefix: &str) -> Self {
        let Some(text) = self.text.strip_prefix(prefix) else {
            return self.clone();
        };
        let mut segments = self.segments.clone();
        let mut left = prefix;
        if let Some(list) = segments.as_mut() {
            while !left.is_empty() {
                match list.first_mut() {
                    Some(Segment::Text(t)) if left.starts_with(t.as_str()) => {
                        left = left.get(t.len()..).unwrap_or_default();
                        list.remove(0);
                    }
                    Some(Segment::Text(t)) if t.starts_with(left) => {
                        *t = t.get(left.len()..).unwrap_or_default().to_owned();
                        left = "";
                    }
                    _ => break,
                }
            }
        }
        if !left.is_empty() {
            segments = None;
        }
        // What the value starts with decides what it means as a path; a tilde after the prefix is not expanded.
        let anchor = match segments.as_deref().map(<[Segment]>::first) {
            _ if self.literal => Anchor::Static,
            Some(Some(Segment::Text(_)) | None) => Anchor::Static,
            Some(Some(Segment::Anchor(_) | Segment::Variable { .. })) | None => Anchor::Dynamic,
        };
        let rest = if anchor == Anchor::Static {
            text.to_owned()
        } else {
            self.rest.clone()
        };
        Self {
            text: text.to_owned(),
            rest,
            anchor,
            segments,
            assignment_tilde: false,
            ..self.clone()
        }
    }

    /// Whether the shell could pass something starting with `-` here that the analysis cannot see.
    pub(crate) fn could_be_option(&self) -> bool {
        if self.literal {
            return false;
        }
        match self.anchor {
            Anchor::Home | Anchor::WorkingDir => false,
            Anchor::Dynamic => true,
            Anchor::Static => {
                self.text.starts_with('-') || self.text.starts_with(['*', '?', '[']) && self.glob
            }
        }
    }

    /// The word as a path for `reads`/`writes`, when the analysis can see it: a literal, or a literal after `~`.
    ///
    /// `$HOME/x` is written `~/x` and `$PWD/x` (or `$(pwd)/x`) `./x`, and a glob is kept as its pattern, so that
    /// Read and Edit rules see what they name; anything else only known at run time has no path.
    pub(crate) fn path(&self) -> Option<String> {
        if self.literal {
            return Some(self.text.clone());
        }
        // `${HOME}x` is a sibling of the home directory, not a file in it.
        let plain = !self.reexpands
            && self.error.is_none()
            && !self.rest.contains(['$', '`'])
            && (self.anchor == Anchor::Static || self.rest.is_empty() || self.rest.starts_with('/'));
        match self.anchor {
            // A glob stays a pattern (`secrets/*.pem`, with `literal: false`): rules can still see what it may name.
            Anchor::Static if plain && self.glob && self.embedded.is_empty() => Some(self.text.clone()),
            Anchor::Home if plain && (self.tilde || self.embedded.is_empty()) => {
                if self.text.starts_with('~') {
                    Some(self.text.clone())
                } else {
                    Some(format!("~{}", self.rest))
                }
            }
            Anchor::WorkingDir if plain && self.embedded.len() <= 1 => Some(format!(".{}", self.rest)),
            Anchor::Static | Anchor::Home | Anchor::WorkingDir | Anchor::Dynamic => None,
        }
    }
}

/// The word a path written as `FileAccess::path` writes it stands for: `~/x` under the home directory, `./x`
/// under the working directory, anything else as it is (a glob stays a pattern).
pub(crate) fn path_word(path: &str) -> Word {
    let mut word = Word::literal(path);
    if path == "~" || path.starts_with("~/") {
        word.literal = false;
        word.tilde = true;
        word.anchor = Anchor::Home;
        word.rest = path.get(1..).unwrap_or_default().to_owned();
        word.segments = Some(vec![Segment::Anchor("~"), Segment::Text(word.rest.clone())]);
    }
    if path.contains(['*', '?', '[']) {
        word.literal = false;
        word.glob = true;
    }
    word
}

/// A path a command names relative to the directory it works in (`env -C DIR cat f` reads `DIR/f`); absolute
/// and home paths, and words without a path, stay as they are. Below a directory only known at run time, a
/// relative path is only known at run time too.
pub(crate) fn under(directory: Option<&Word>, w: &Word) -> Word {
    let Some(directory) = directory else {
        return w.clone();
    };
    let Some(path) = w.path() else {
        return w.clone();
    };
    if path.starts_with('/') || path == "~" || path.starts_with("~/") || w.text.contains("{}") || path == "-"
    {
        return w.clone();
    }
    match directory.path() {
        Some(dir) => path_word(&format!("{}/{path}", dir.trim_end_matches('/'))),
        None => Word::unknown(&format!("{}/{path}", directory.text)),
    }
}

/// Expands a raw word of the source.
pub(crate) fn expand(raw: &str) -> Word {
    if parse::is_plain_text(raw) {
        return plain_word(raw);
    }
    match parse::pieces(raw) {
        Ok(pieces) => from_pieces(&pieces),
        Err(error) => Word {
            text: raw.to_owned(),
            literal: false,
            rest: raw.to_owned(),
            anchor: Anchor::Dynamic,
            glob: false,
            tilde: false,
            reexpands: false,
            embedded: Vec::new(),
            arithmetic: Vec::new(),
            error: Some(error),
            segments: None,
            assignment_tilde: false,
            variables: Vec::new(),
        },
    }
}

/// Expands an expanding here-document body: only its embedded code matters.
pub(crate) fn expand_heredoc(body: &str) -> Word {
    match parse::heredoc_pieces(body) {
        Ok(pieces) => from_pieces(&pieces),
        Err(error) => Word {
            error: Some(error),
            ..Word::literal(body)
        },
    }
}

/// A word that is one piece of unquoted text as it is ([`parse::is_plain_text`]): what [`from_pieces`] makes of
/// that one piece, built without the list of pieces and the copies of the text it went through (most words of a
/// command are such text).
fn plain_word(raw: &str) -> Word {
    let mut word = Word::literal(raw);
    if is_active_glob(raw) {
        word.glob = true;
        word.literal = false;
    }
    word
}

/// Whether unquoted `text` holds a glob the shell expands: `*`, `?`, or a `[` that a `]` follows (`[` alone is
/// the test command).
fn is_active_glob(text: &str) -> bool {
    text.contains(['*', '?'])
        || text
            .find('[')
            .is_some_and(|at| text.get(at + 1..).is_some_and(|r| r.contains(']')))
}

pub(crate) fn from_pieces(pieces: &[Piece]) -> Word {
    let mut builder = Builder {
        word: Word {
            anchor: Anchor::Static,
            rest: String::new(),
            segments: Some(Vec::new()),
            ..Word::literal("")
        },
        first: true,
    };
    for piece in pieces {
        builder.piece(piece, false);
    }
    let mut word = builder.word;
    word.assignment_tilde = matches!(pieces.first(), Some(Piece::Text(text)) if text
    .split_once('=')
    .is_some_and(|(name, value)| {
        crate::arith::is_name(name)
            && value.strip_prefix('~').is_some_and(|after| {
                after.starts_with(['/', ':']) || (after.is_empty() && pieces.len() == 1)
            })
    }));
    if word.anchor == Anchor::Static {
        word.rest = word.text.clone();
    }
    word
}

struct Builder {
    word: Word,
    first: bool,
}

impl Builder {
    fn segment(&mut self, segment: Option<Segment>) {
        match (segment, self.word.segments.as_mut()) {
            (Some(segment), Some(list)) => list.push(segment),
            (None, _) => self.word.segments = None,
            (Some(_), None) => {}
        }
    }

    fn push_static(&mut self, text: &str) {
        self.segment(Some(Segment::Text(text.to_owned())));
        self.word.text.push_str(text);
        if self.word.anchor != Anchor::Static {
            self.word.rest.push_str(text);
        }
        self.first = false;
    }

    fn push_dynamic(&mut self, source: &str, anchor: Anchor) {
        if self.first {
            self.word.anchor = anchor;
        } else if self.word.anchor != Anchor::Static {
            self.word.rest.push_str(source);
        }
        self.word.text.push_str(source);
        self.word.literal = false;
        self.first = false;
    }

    fn piece(&mut self, piece: &Piece, quoted: bool) {
        match piece {
            Piece::Text(text) => {
                if !quoted && is_active_glob(text) {
                    self.word.glob = true;
                    self.word.literal = false;
                }
                self.push_static(text);
            }
            Piece::Quoted(text) => self.push_static(text),
            Piece::AnsiC(text) => self.push_static(&decode_ansi_c(text)),
            Piece::Escaped {
                text,
                in_double_quotes,
            } => {
                let escaped = text.strip_prefix('\\').unwrap_or(text);
                if escaped.starts_with('\n') {
                    // A line continuation disappears.
                } else if *in_double_quotes && !escaped.starts_with(['$', '`', '"', '\\']) {
                    self.push_static(text);
                } else {
                    self.push_static(escaped);
                }
            }
            Piece::DoubleQuoted(inner) => {
                let was_first = self.first;
                for p in inner {
                    self.piece(p, true);
                }
                // `""` is an empty but present word.
                if was_first && inner.is_empty() {
                    self.first = false;
                }
            }
            Piece::Tilde(user) => {
                self.word.tilde = true;
                let source = match user {
                    None => "~".to_owned(),
                    Some(user) => format!("~{user}"),
                };
                // `~+` is the working directory; `~-` (the previous one) and `~user` are only known at run time.
                let anchor = match user.as_deref() {
                    None => Anchor::Home,
                    Some("+") => Anchor::WorkingDir,
                    Some(_) => Anchor::Dynamic,
                };
                self.segment(match anchor {
                    Anchor::Home => Some(Segment::Anchor("~")),
                    Anchor::WorkingDir => Some(Segment::Anchor(".")),
                    Anchor::Static | Anchor::Dynamic => None,
                });
                self.push_dynamic(&source, anchor);
            }
            Piece::Param {
                name,
                reexpands,
                nested,
                arithmetic,
                plain,
                ..
            } => {
                // A subscript picks one of the values (it is judged as arithmetic on its own); an offset or any
                // operator makes a value the line never gave.
                let as_is = *plain
                    && !*reexpands
                    && nested.is_empty()
                    && arithmetic
                        .iter()
                        .all(|a| matches!(a.kind, ArithKind::Subscript(_)));
                self.segment(as_is.then(|| Segment::Variable {
                    name: name.clone(),
                    quoted,
                }));
                if *reexpands {
                    self.word.reexpands = true;
                }
                self.word.variables.push(name.clone());
                for text in nested {
                    // Words inside `${x:-…}` expand too, with their own substitutions.
                    let inner = expand(text);
                    self.word.embedded.extend(inner.embedded);
                    self.word.arithmetic.extend(inner.arithmetic);
                    self.word.reexpands |= inner.reexpands;
                    self.word.variables.extend(inner.variables);
                }
                for arith in arithmetic {
                    // Array indices and substring offsets are expanded, then evaluated as arithmetic.
                    let inner = expand_heredoc(&arith.text);
                    self.word.embedded.extend(inner.embedded);
                    self.word.reexpands |= inner.reexpands;
                    self.word.arithmetic.push(arith.clone());
                }
                let anchor = match name.as_str() {
                    "HOME" if nested.is_empty() && !*reexpands => Anchor::Home,
                    "PWD" if nested.is_empty() && !*reexpands => Anchor::WorkingDir,
                    _ => Anchor::Dynamic,
                };
                self.push_dynamic(&format!("${name}"), anchor);
            }
            Piece::CommandSub { body, backticks } => {
                self.word.embedded.push(Embedded {
                    body: body.clone(),
                    backticks: *backticks,
                });
                let anchor = if body.trim() == "pwd" {
                    Anchor::WorkingDir
                } else {
                    Anchor::Dynamic
                };
                self.segment((anchor == Anchor::WorkingDir).then_some(Segment::Anchor(".")));
                let source = if *backticks {
                    format!("`{body}`")
                } else {
                    format!("$({body})")
                };
                self.push_dynamic(&source, anchor);
            }
            Piece::Arith(expr) => {
                // An arithmetic expression is expanded like a double-quoted word before it is evaluated.
                let inner = expand_heredoc(expr);
                self.word.embedded.extend(inner.embedded);
                self.word.reexpands |= inner.reexpands;
                self.word.arithmetic.push(ArithText {
                    text: expr.clone(),
                    kind: ArithKind::Expansion,
                });
                self.segment(None);
                self.push_dynamic(&format!("$(({expr}))"), Anchor::Dynamic);
            }
        }
    }
}

/// Decodes the backslash escapes of a `$'…'` string as bash does.
pub(crate) fn decode_ansi_c(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'e' | 'E' => out.push('\u{1b}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            '0'..='7' => {
                let mut value = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.extend(char::from_u32(value & 0xff));
            }
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut value = 0u32;
                let mut digits = 0;
                while digits < max {
                    match chars.peek().and_then(|d| d.to_digit(16)) {
                        Some(d) => {
                            value = value.saturating_mul(16).saturating_add(d);
                            chars.next();
                            digits += 1;
                        }
                        None => break,
                    }
                }
                if digits == 0 {
                    out.push('\\');
                    out.push(e);
                } else {
                    out.extend(char::from_u32(value));
                }
            }
            'c' => {
                if let Some(ctl) = chars.next() {
                    out.extend(char::from_u32(u32::from(ctl) & 0x1f));
                }
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_escapes_are_removed() {
        assert_eq!(expand("'a b'").text, "a b");
        assert_eq!(expand(r"r\m").text, "rm");
        assert_eq!(expand(r"-ex\ec").text, "-exec");
        assert_eq!(expand(r#""a\"b""#).text, "a\"b");
        assert!(expand(r#""a\"b""#).literal);
    }

    #[test]
    fn ansi_c_strings_are_decoded() {
        assert_eq!(expand(r"$'\x72m'").text, "rm");
        assert_eq!(expand(r"$'\162\155'").text, "rm");
        assert_eq!(decode_ansi_c(r"a\tb\u0041"), "a\tbA");
        assert!(expand(r"$'\x72m'").literal);
    }

    #[test]
    fn expansions_are_not_literal() {
        for raw in ["$x", "${x@P}", "$(id)", "`id`", "*.rs", "a$((1+2))", "${IFS}"] {
            assert!(!expand(raw).literal, "{raw}");
        }
        assert!(expand(r"\*").literal);
        assert!(expand("'*'").literal);
        assert!(expand("${x@P}").reexpands);
    }

    #[test]
    fn embedded_code_is_found_everywhere() {
        assert_eq!(expand(r#""a$(rm x)b""#).embedded.len(), 1);
        assert_eq!(expand("${a:-$(id)}").embedded.len(), 1);
        assert_eq!(expand("$((1+$(id)))").embedded.len(), 1);
        assert!(expand("'$(id)'").embedded.is_empty());
        assert_eq!(expand_heredoc("x $(id) `y`\n").embedded.len(), 2);
    }

    #[test]
    fn anchors_say_what_a_path_means() {
        assert_eq!(expand("~/").anchor, Anchor::Home);
        assert_eq!(expand("~/").rest, "/");
        assert_eq!(expand("$HOME").anchor, Anchor::Home);
        assert_eq!(expand("\"${HOME}\"/").anchor, Anchor::Home);
        assert_eq!(expand("$(pwd)").anchor, Anchor::WorkingDir);
        assert_eq!(expand("/etc").anchor, Anchor::Static);
        assert_eq!(expand("~/.ssh/id_rsa").path().as_deref(), Some("~/.ssh/id_rsa"));
        assert_eq!(
            expand("$HOME/.ssh/id_rsa").path().as_deref(),
            Some("~/.ssh/id_rsa")
        );
        assert_eq!(
            expand("\"${HOME}\"/.aws/credentials").path().as_deref(),
            Some("~/.aws/credentials")
        );
        assert_eq!(
            expand("$PWD/secrets/key.pem").path().as_deref(),
            Some("./secrets/key.pem")
        );
        assert_eq!(expand("$(pwd)/.env").path().as_deref(), Some("./.env"));
        assert!(expand("$HOME/$X").path().is_none());
        assert_eq!(expand("~/.ssh/*").path().as_deref(), Some("~/.ssh/*"));
        assert_eq!(expand("secrets/*.pem").path().as_deref(), Some("secrets/*.pem"));
        assert!(expand("$X/*.pem").path().is_none());
        assert!(expand("$X/a").path().is_none());
    }
}
