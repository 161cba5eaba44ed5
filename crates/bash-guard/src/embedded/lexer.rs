//! The tokens of an interpreter's code: strings with their escapes and interpolation, comments, names with their
//! qualifiers, brackets. No parser of the languages: the reader of calls needs no more.

use super::{Language, Text};

/// A piece of code, as far as the reader tells pieces apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    /// A name, with its qualifiers (`os.path.join`, `File::Path::rmtree` as `File.Path.rmtree`, `.rmSync` after a
    /// call).
    Name(String),
    Str(Text),
    /// A command line in backticks or `qx{…}`/`%x(…)`.
    Command(Text),
    Open,
    Close,
    Comma,
    /// `;` or the end of a line.
    End,
    Other(char),
}

/// The reader of a language's tokens.
pub(super) struct Lexer {
    language: Language,
    chars: Vec<char>,
    at: usize,
    expanded: bool,
    tokens: Vec<Token>,
}

impl Lexer {
    pub(super) fn new(language: Language, code: &str, expanded: bool) -> Self {
        Self {
            language,
            chars: code.chars().collect(),
            at: 0,
            expanded,
            tokens: Vec::new(),
        }
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    pub(super) fn tokens(mut self) -> Vec<Token> {
        while let Some(c) = self.peek(0) {
            if self.comment() {
                continue;
            }
            match c {
                '\'' | '"' => self.string(c, false, false),
                '`' => self.backtick(),
                '%' if self.language == Language::Ruby
                    && self.peek(1) == Some('x')
                    && self.peek(2).is_some_and(is_delimiter) =>
                {
                    self.at += 2;
                    self.quoted_command();
                }
                '(' | '[' | '{' => self.push(Token::Open, 1),
                ')' | ']' | '}' => self.push(Token::Close, 1),
                ',' => self.push(Token::Comma, 1),
                ';' | '\n' => self.push(Token::End, 1),
                c if c.is_alphabetic() || c == '_' || c == '$' || (c == '.' && self.name_follows()) => {
                    self.name();
                }
                c if c.is_whitespace() => self.at += 1,
                other => self.push(Token::Other(other), 1),
            }
        }
        self.tokens
    }

    fn push(&mut self, token: Token, width: usize) {
        self.tokens.push(token);
        self.at += width;
    }

    fn name_follows(&self) -> bool {
        self.peek(1).is_some_and(|c| c.is_alphabetic() || c == '_')
    }

    /// Skips a comment at the reader's place; whether there was one.
    fn comment(&mut self) -> bool {
        let (c, next) = (self.peek(0), self.peek(1));
        let line = match self.language {
            Language::Python | Language::Ruby | Language::Perl | Language::R => c == Some('#'),
            Language::JavaScript => c == Some('/') && next == Some('/'),
            Language::Php => c == Some('#') || (c == Some('/') && next == Some('/')),
            Language::Lua => c == Some('-') && next == Some('-'),
        };
        if line {
            while self.peek(0).is_some_and(|c| c != '\n') {
                self.at += 1;
            }
            return true;
        }
        let block = matches!(self.language, Language::JavaScript | Language::Php)
            && c == Some('/')
            && next == Some('*');
        if block {
            self.at += 2;
            while self.peek(0).is_some() && !(self.peek(0) == Some('*') && self.peek(1) == Some('/')) {
                self.at += 1;
            }
            self.at = (self.at + 2).min(self.chars.len());
        }
        block
    }

    fn name(&mut self) {
        let mut name = String::new();
        while let Some(c) = self.peek(0) {
            if c.is_alphanumeric() || c == '_' || c == '$' || c == '.' {
                name.push(c);
                self.at += 1;
            } else if c == ':' && self.peek(1) == Some(':') {
                name.push('.');
                self.at += 2;
            } else {
                break;
            }
        }
        // Python's string prefixes (`f"…"`, `r'…'`, `rb"…"`) and Perl's `qx{…}`.
        match (self.peek(0), name.as_str()) {
            (Some(quote @ ('\'' | '"')), prefix)
                if self.language == Language::Python
                    && prefix.len() <= 2
                    && prefix.chars().all(|c| "rRbBfFuU".contains(c)) =>
            {
                let raw = prefix.contains(['r', 'R']);
                let formatted = prefix.contains(['f', 'F']);
                self.string(quote, raw, formatted);
            }
            (Some(c), "qx") if self.language == Language::Perl && is_delimiter(c) => self.quoted_command(),
            _ => self.tokens.push(Token::Name(name)),
        }
    }

    /// A string opened by `quote` at the reader's place.
    fn string(&mut self, quote: char, raw: bool, formatted: bool) {
        let triple =
            self.language == Language::Python && self.peek(1) == Some(quote) && self.peek(2) == Some(quote);
        self.at += if triple { 3 } else { 1 };
        let interpolates =
            quote == '"' && matches!(self.language, Language::Perl | Language::Ruby | Language::Php);
        let mut text = String::new();
        let mut known = true;
        while let Some(c) = self.peek(0) {
            if c == quote && (!triple || (self.peek(1) == Some(quote) && self.peek(2) == Some(quote))) {
                self.at += if triple { 3 } else { 1 };
                break;
            }
            if c == '\\'
                && let Some(next) = self.peek(1)
            {
                // Perl's, Ruby's and PHP's single quotes know only `\\` and `'`; a raw string keeps every backslash
                // (and a quote after one does not end it); an escape whose character the reader does not know
                // (`x72`, `u0072`, octal) leaves the string only known at run time.
                let single =
                    quote == '\'' && matches!(self.language, Language::Perl | Language::Ruby | Language::Php);
                match escaped(next) {
                    _ if raw || (single && !matches!(next, '\\' | '\'')) => {
                        text.push(c);
                        text.push(next);
                    }
                    Some(meant) => text.push(meant),
                    None => known = false,
                }
                self.at += 2;
                continue;
            }
            let interpolation = (interpolates && matches!(c, '$' | '@'))
                || (self.language == Language::Ruby && quote == '"' && c == '#' && self.peek(1) == Some('{'))
                || (formatted && c == '{');
            known &= !interpolation;
            text.push(c);
            self.at += 1;
        }
        let token = Token::Str(self.known(text, known));
        self.tokens.push(token);
    }

    /// A backtick: a command in Perl, Ruby and PHP, a template string in JavaScript.
    fn backtick(&mut self) {
        self.at += 1;
        let mut text = String::new();
        let mut known = true;
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match c {
                '`' => break,
                '\\' => {
                    if let Some(next) = self.peek(0) {
                        match escaped(next) {
                            Some(meant) => text.push(meant),
                            None => known = false,
                        }
                        self.at += 1;
                    }
                }
                _ => {
                    known &= !match self.language {
                        Language::JavaScript => c == '$' && self.peek(0) == Some('{'),
                        Language::Ruby => c == '#',
                        Language::Perl | Language::Php => matches!(c, '$' | '@'),
                        Language::Python | Language::R | Language::Lua => false,
                    };
                    text.push(c);
                }
            }
        }
        let text = self.known(text, known);
        self.tokens.push(match self.language {
            Language::Perl | Language::Ruby | Language::Php => Token::Command(text),
            _ => Token::Str(text),
        });
    }

    /// `qx{…}` or `%x(…)`: the delimiter is at the reader's place.
    fn quoted_command(&mut self) {
        let Some(open) = self.peek(0) else { return };
        let close = match open {
            '(' => ')',
            '[' => ']',
            '{' => '}',
            '<' => '>',
            other => other,
        };
        self.at += 1;
        let mut text = String::new();
        let mut depth = 0usize;
        let mut known = true;
        while let Some(c) = self.peek(0) {
            self.at += 1;
            if c == close && depth == 0 {
                break;
            }
            if c == open && open != close {
                depth += 1;
            } else if c == close {
                depth -= 1;
            }
            let interpolation = matches!(c, '$' | '@') || (c == '#' && self.peek(0) == Some('{'));
            known &= !interpolation;
            text.push(c);
        }
        let text = self.known(text, known);
        self.tokens.push(Token::Command(text));
    }

    /// The text when nothing in it is only known at run time.
    fn known(&self, text: String, known: bool) -> Text {
        (known && !(self.expanded && text.contains(['$', '`']))).then_some(text)
    }
}

fn is_delimiter(c: char) -> bool {
    matches!(c, '(' | '[' | '{' | '<' | '/' | '|' | '!')
}

/// The character a backslash escape stands for, for the escapes the languages read alike; `None` for one it
/// does not know (`x72`, `u0072`, `101` after the backslash), which makes the string's text unknown.
fn escaped(c: char) -> Option<char> {
    match c {
        'n' => Some('\n'),
        't' => Some('\t'),
        'r' => Some('\r'),
        '\\' | '\'' | '"' | '`' | '/' | '$' | '@' | '#' | '{' | '}' => Some(c),
        _ => None,
    }
}
