//! The data subset of Starlark that policy files are written in: calls with keyword arguments whose values are
//! strings and lists.
//!
//! Why not a full Starlark parser: the maintained one (`starlark_syntax`) brings some sixty crates into the build
//! (an LSP type library, a hashing and a work-stealing runtime, link-time constructors), more than the rest of
//! this command line together, to read files that are in practice a list of function calls with literal
//! arguments. This parser reads exactly that subset and refuses everything else (variables, expressions,
//! comprehensions, `load`, `def`, positional arguments) with its line number, so nothing outside it is guessed at:
//! a file it accepts means what Starlark would make of it.

use std::fmt;

/// A value of the subset: a string or a list of values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Literal {
    Str(String),
    List(Vec<Element>),
}

/// An element of a list, with the line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Element {
    pub(crate) line: usize,
    pub(crate) value: Literal,
}

/// One top-level call: `name(key = value, …)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Call {
    pub(crate) name: String,
    pub(crate) line: usize,
    pub(crate) args: Vec<Argument>,
}

/// One keyword argument, with the line its value starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Argument {
    pub(crate) key: String,
    pub(crate) line: usize,
    pub(crate) value: Literal,
}

/// Something outside the subset, or not Starlark at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub(crate) line: usize,
    pub(crate) why: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.why)
    }
}

/// Parses a whole file into its calls.
pub(crate) fn parse(text: &str) -> Result<Vec<Call>, SyntaxError> {
    let mut parser = Parser {
        chars: text.chars().collect(),
        at: 0,
        line: 1,
    };
    let mut calls = Vec::new();
    loop {
        parser.skip_blank(true);
        if parser.peek().is_none() {
            return Ok(calls);
        }
        calls.push(parser.call()?);
        // A statement ends at a newline, a `;`, or the end of the file.
        parser.skip_blank(false);
        match parser.peek() {
            None | Some('\n' | ';') => {
                parser.bump();
            }
            Some(c) => return Err(parser.error(format!("`{c}` after a call; one call per line"))),
        }
    }
}

struct Parser {
    chars: Vec<char>,
    at: usize,
    line: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn error(&self, why: String) -> SyntaxError {
        SyntaxError { line: self.line, why }
    }

    /// Skips spaces, tabs, comments and (with `newlines`, or inside brackets) line ends.
    fn skip_blank(&mut self, newlines: bool) {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' => {
                    self.bump();
                }
                '\n' if newlines => {
                    self.bump();
                }
                '\\' if self.chars.get(self.at + 1) == Some(&'\n') => {
                    self.bump();
                    self.bump();
                }
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                _ => return,
            }
        }
    }

    fn identifier(&mut self) -> Result<String, SyntaxError> {
        let mut name = String::new();
        while let Some(c) = self.peek().filter(|c| c.is_ascii_alphanumeric() || *c == '_') {
            name.push(c);
            self.bump();
        }
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(self.error(match self.peek() {
                Some(c) => format!("expected a name, found `{c}`"),
                None => "expected a name, found the end of the file".to_owned(),
            }));
        }
        Ok(name)
    }

    fn call(&mut self) -> Result<Call, SyntaxError> {
        let line = self.line;
        let name = self.identifier()?;
        self.skip_blank(false);
        if self.peek() != Some('(') {
            return Err(SyntaxError {
                line,
                why: format!(
                    "`{name}` is not a call; only calls with literal arguments are read (no variables, \
                     assignments, `load` or `def`)"
                ),
            });
        }
        self.bump();
        let mut args: Vec<Argument> = Vec::new();
        loop {
            self.skip_blank(true);
            if self.peek() == Some(')') {
                self.bump();
                break;
            }
            let key_line = self.line;
            let key = self.identifier()?;
            self.skip_blank(true);
            if self.peek() != Some('=') {
                return Err(SyntaxError {
                    line: key_line,
                    why: format!("`{name}`: only keyword arguments (`key = value`) are read, found `{key}`"),
                });
            }
            self.bump();
            self.skip_blank(true);
            let value_line = self.line;
            let value = self.value()?;
            if args.iter().any(|a| a.key == key) {
                return Err(SyntaxError {
                    line: key_line,
                    why: format!("`{name}`: `{key}` is given twice"),
                });
            }
            args.push(Argument {
                key,
                line: value_line,
                value,
            });
            self.skip_blank(true);
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some(')') => {}
                Some(c) => return Err(self.error(format!("expected `,` or `)`, found `{c}`"))),
                None => return Err(self.error(format!("`{name}(` is never closed"))),
            }
        }
        Ok(Call { name, line, args })
    }

    fn value(&mut self) -> Result<Literal, SyntaxError> {
        match self.peek() {
            Some('"' | '\'') => self.string().map(Literal::Str),
            Some('[') => {
                self.bump();
                let mut items = Vec::new();
                loop {
                    self.skip_blank(true);
                    if self.peek() == Some(']') {
                        self.bump();
                        return Ok(Literal::List(items));
                    }
                    let line = self.line;
                    items.push(Element {
                        line,
                        value: self.value()?,
                    });
                    self.skip_blank(true);
                    match self.peek() {
                        Some(',') => {
                            self.bump();
                        }
                        Some(']') => {}
                        Some(c) => return Err(self.error(format!("expected `,` or `]`, found `{c}`"))),
                        None => return Err(self.error("a list is never closed".to_owned())),
                    }
                }
            }
            Some(c) => Err(self.error(format!(
                "a value must be a string or a list of strings; found `{c}` (expressions, numbers, variables and \
                 other calls are not read)"
            ))),
            None => Err(self.error("expected a value, found the end of the file".to_owned())),
        }
    }

    /// A string literal: single or double quotes, tripled or not, with Starlark's escapes; `r` prefixes and
    /// byte strings are outside the subset (the prefix letter is read as a name and refused).
    fn string(&mut self) -> Result<String, SyntaxError> {
        let start = self.line;
        let quote = self.bump().unwrap_or('"');
        let triple = self.chars.get(self.at) == Some(&quote) && self.chars.get(self.at + 1) == Some(&quote);
        if triple {
            self.bump();
            self.bump();
        }
        let mut out = String::new();
        loop {
            let Some(c) = self.bump() else {
                return Err(SyntaxError {
                    line: start,
                    why: "a string is never closed".to_owned(),
                });
            };
            match c {
                c if c == quote && !triple => return Ok(out),
                c if c == quote
                    && self.chars.get(self.at) == Some(&quote)
                    && self.chars.get(self.at + 1) == Some(&quote) =>
                {
                    self.bump();
                    self.bump();
                    return Ok(out);
                }
                '\n' if !triple => {
                    return Err(SyntaxError {
                        line: start,
                        why: "a string is never closed on its line".to_owned(),
                    });
                }
                '\\' => out.push(self.escape()?),
                c => out.push(c),
            }
        }
    }

    fn escape(&mut self) -> Result<char, SyntaxError> {
        let c = self
            .bump()
            .ok_or_else(|| self.error("a `\\` at the end of the file".to_owned()))?;
        Ok(match c {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            '0' => '\0',
            '\\' | '\'' | '"' => c,
            'x' | 'u' | 'U' => {
                let digits = match c {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut code = 0_u32;
                for _ in 0..digits {
                    let digit = self
                        .bump()
                        .and_then(|d| d.to_digit(16))
                        .ok_or_else(|| self.error(format!("a `\\{c}` escape needs {digits} hex digits")))?;
                    code = code * 16 + digit;
                }
                char::from_u32(code)
                    .ok_or_else(|| self.error(format!("`\\{c}{code:x}` is not a character")))?
            }
            other => return Err(self.error(format!("unknown escape `\\{other}`"))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Literal {
        Literal::Str(text.to_owned())
    }

    fn at(line: usize, value: Literal) -> Element {
        Element { line, value }
    }

    #[test]
    fn calls_with_strings_and_lists_are_read_with_their_lines() {
        let text = "# rules\nprefix_rule(\n    pattern = [\"git\", [\"push\", 'fetch']],  # alternatives\n    \
                    decision = \"prompt\",\n    justification = \"\"\"multi\nline\"\"\",\n)\n\nprefix_rule(pattern=[\"ls\"])\n";
        let calls = parse(text).unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].name, "prefix_rule");
        assert_eq!(calls[0].line, 2);
        assert_eq!(calls[0].args[0].key, "pattern");
        assert_eq!(calls[0].args[0].line, 3);
        assert_eq!(
            calls[0].args[0].value,
            Literal::List(vec![
                at(3, s("git")),
                at(3, Literal::List(vec![at(3, s("push")), at(3, s("fetch"))]))
            ])
        );
        assert_eq!(calls[0].args[2].value, s("multi\nline"));
        assert_eq!(calls[1].line, 9);
    }

    #[test]
    fn everything_outside_the_subset_is_refused_with_its_line() {
        for (text, line, why) in [
            ("x = [\"git\"]\n", 1, "not a call"),
            ("\n\nprefix_rule([\"git\"])", 3, "expected a name"),
            ("prefix_rule(pattern = \"a\" + \"b\")", 1, "expected `,` or `)`"),
            ("prefix_rule(\n pattern = PATTERN)", 2, "a value must be a string"),
            (
                "prefix_rule(pattern = [\"a\"], pattern = [\"b\"])",
                1,
                "given twice",
            ),
            ("prefix_rule(pattern = [\"a\"]", 1, "never closed"),
            ("prefix_rule(pattern = [\"a\n\"])", 1, "never closed on its line"),
            ("load(\"x.star\", \"y\")", 1, "expected a name"),
            ("prefix_rule(pattern = [r\"a\"])", 1, "a value must be a string"),
        ] {
            let error = parse(text).unwrap_err();
            assert_eq!(error.line, line, "{text}: {error}");
            assert!(error.why.contains(why), "{text}: {error}");
        }
    }
}
