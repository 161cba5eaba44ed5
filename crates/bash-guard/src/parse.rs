//! The only module that knows `brush-parser`: it turns its AST and word pieces into the small syntax tree below.

// brush-parser's API changed in each minor release; keeping every use of it here means an upgrade touches one
// file, and the walker only sees the shapes it needs.

use std::panic::{AssertUnwindSafe, catch_unwind};

use brush_parser::ast;
use brush_parser::word::{self, Parameter, ParameterExpr, WordPiece};
use brush_parser::{Parser, ParserOptions};

#[path = "parse_braces.rs"]
mod braces;
pub(crate) use braces::{Braces, brace_count, brace_expand};

/// A parsed shell program: its complete commands in source order.
#[derive(Debug, Default)]
pub(crate) struct Script(pub(crate) Vec<AndOrList>);

/// Pipelines joined by `&&`/`||`, ended by `;`, a newline or `&`.
#[derive(Debug)]
pub(crate) struct AndOrList {
    pub(crate) pipelines: Vec<Pipeline>,
    pub(crate) background: bool,
}

/// Commands joined by `|`.
#[derive(Debug)]
pub(crate) struct Pipeline(
    pub(crate) Vec<Cmd>,
    /// `! PIPELINE`: its exit status is negated.
    pub(crate) bool,
);

/// One command of a pipeline.
#[derive(Debug)]
pub(crate) enum Cmd {
    Simple(Simple),
    Compound {
        construct: Construct,
        parts: Vec<Part>,
        redirects: Vec<Redirect>,
    },
    Function {
        name: String,
        body: Box<Cmd>,
    },
}

/// The compound constructs, for the location of what they contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Construct {
    Subshell,
    BraceGroup,
    If,
    /// `while`.
    Loop,
    /// `until`.
    Until,
    For,
    Case,
    Arithmetic,
    Test,
    Coprocess,
}

/// A piece of a compound command.
#[derive(Debug)]
pub(crate) enum Part {
    /// A list of commands the construct runs.
    Body(Script),
    /// A word the construct expands (for-list, case subject and patterns, `[[ ]]` operands).
    Word(String),
    /// An arithmetic expression, expanded like a double-quoted word before evaluation.
    Arith(String),
    /// One command (the body of `coproc`).
    Command(Box<Cmd>),
    /// Source text that is code (a subshell the parser read as arithmetic).
    Code(String),
    /// The variable of `for NAME in WORDS`, with its words (`None`: `for NAME; do`, the positional parameters).
    Loop {
        variable: String,
        words: Option<Vec<String>>,
    },
    /// The operand of `[[ -v NAME ]]`: a variable name, whose subscript bash evaluates as arithmetic.
    Name(String),
    /// The operand of `[[ -n WORD ]]`, `[[ WORD ]]` (`empty` false) or `[[ -z WORD ]]` (`empty` true): only whether
    /// its value is empty reaches the test.
    Tested { word: String, empty: bool },
}

/// An expression bash evaluates as arithmetic, found inside a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArithText {
    pub(crate) text: String,
    pub(crate) kind: ArithKind,
}

/// Where an arithmetic expression inside a word comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ArithKind {
    /// `$((…))` or `$[…]`.
    Expansion,
    /// The subscript of an array: arithmetic only when the array is indexed, not associative.
    Subscript(String),
    /// A substring offset or length (`${v:off:len}`).
    Offset,
}

/// One `NAME=VALUE` before a command word.
#[derive(Debug)]
pub(crate) struct Assignment {
    pub(crate) name: String,
    /// The subscript of `NAME[SUB]=…`.
    pub(crate) index: Option<String>,
    /// The raw value word (for an array, the whole assignment word).
    pub(crate) value: String,
    /// `NAME=(…)`: the raw words of its elements, or `None` when one has a key (`([k]=v)`).
    pub(crate) elements: Option<Option<Vec<String>>>,
    /// `NAME+=…`.
    pub(crate) append: bool,
}

/// A simple command: assignments, words (with process substitutions in place) and redirections.
#[derive(Debug, Default)]
pub(crate) struct Simple {
    pub(crate) assignments: Vec<Assignment>,
    pub(crate) words: Vec<Arg>,
    pub(crate) redirects: Vec<Redirect>,
}

/// A word of a simple command.
#[derive(Debug)]
pub(crate) enum Arg {
    Word(String),
    ProcSub(Script),
}

/// One redirection.
#[derive(Debug)]
pub(crate) struct Redirect {
    pub(crate) op: RedirOp,
    pub(crate) target: Target,
}

/// What a redirection does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RedirOp {
    Read,
    Write,
    ReadWrite,
    /// `>&word` / `<&word`: a file descriptor when the word is a number or `-`, else (for output) a file.
    Duplicate {
        output: bool,
    },
    HereString,
    HereDoc {
        expands: bool,
    },
}

impl RedirOp {
    /// It gives the command its standard input (a file, a here-string or -document, another descriptor).
    pub(crate) fn feeds_stdin(self) -> bool {
        matches!(
            self,
            RedirOp::Read
                | RedirOp::ReadWrite
                | RedirOp::HereString
                | RedirOp::HereDoc { .. }
                | RedirOp::Duplicate { output: false }
        )
    }
}

/// The target of a redirection.
#[derive(Debug)]
pub(crate) enum Target {
    Word(String),
    Fd,
    ProcSub(Script),
}

/// A piece of a word after the shell's lexing, before expansion.
#[derive(Debug)]
pub(crate) enum Piece {
    /// Unquoted text: globs and tildes here are active.
    Text(String),
    /// Quoted text (single quotes, or text inside double quotes), already without its quotes.
    Quoted(String),
    /// `$'…'` text, still with its backslash escapes.
    AnsiC(String),
    /// A backslash escape outside quotes (`\m`), or inside double quotes (`\$`).
    Escaped { text: String, in_double_quotes: bool },
    /// `"…"`.
    DoubleQuoted(Vec<Piece>),
    /// `~` or `~user` at the start of a word.
    Tilde(Option<String>),
    /// A parameter expansion: its name, whether it re-expands (`${x@P}`, `${!x}`), the words inside it, the
    /// arithmetic inside it (a subscript, substring offsets) and what its value is.
    Param {
        name: String,
        reexpands: bool,
        nested: Vec<String>,
        arithmetic: Vec<ArithText>,
        value: ParamValue,
        /// The value of a named variable or of array elements as it is (`$x`, `${x}`, `${a[i]}`, `${a[@]}`): no
        /// operator changes it and no indirection replaces it.
        plain: bool,
    },
    /// `$(…)` or `` `…` `` with its body.
    CommandSub { body: String, backticks: bool },
    /// `$((…))` with its expression.
    Arith(String),
}

/// What the value of a parameter expansion is, for arithmetic that evaluates it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamValue {
    /// The value of the variable itself (`$x`, `${x}`, `${a[i]}`).
    Variable,
    /// Always a number the shell computes: `${#x}`, `$#`, `$?`, `$$`, `$!`.
    Number,
    /// Anything else: positional parameters, `$@`, `$-`, transformations like `${x/a/b}` or `${x:-…}`.
    Other,
}

/// Parses `source` as a shell program. Any panic inside the parser becomes a parse error.
pub(crate) fn program(source: &str) -> Result<Script, String> {
    match parse_program(source) {
        Ok(script) => Ok(script),
        Err(brush_parser::ParseError::Tokenizing {
            inner: brush_parser::TokenizerError::UnterminatedHereDocuments(tags, _),
            ..
        }) => {
            // bash ends a here-document at the end of the input (with a warning) and runs the command, so the
            // analysis reads it the same way.
            let mut closed = source.to_owned();
            for tag in tags.split(", ") {
                closed.push('\n');
                closed.push_str(&brush_parser::unquote_str(tag));
            }
            closed.push('\n');
            parse_program(&closed).map_err(|e| e.to_string())
        }
        Err(error) => Err(error.to_string()),
    }
}

fn parse_program(source: &str) -> Result<Script, brush_parser::ParseError> {
    let parsed = catch_unwind(AssertUnwindSafe(|| {
        let options = ParserOptions::default();
        Parser::new(std::io::Cursor::new(source.as_bytes()), &options).parse_program()
    }));
    match parsed {
        Ok(Ok(program)) => Ok(Script(
            program
                .complete_commands
                .iter()
                .flat_map(|l| compound_list(source, l))
                .collect(),
        )),
        Ok(Err(error)) => Err(error),
        Err(_) => Err(brush_parser::ParseError::ParsingAtEndOfInput),
    }
}

/// Splits a word into its pieces.
pub(crate) fn pieces(raw: &str) -> Result<Vec<Piece>, String> {
    if is_plain_text(raw) {
        return Ok(vec![Piece::Text(raw.to_owned())]);
    }
    parsed_pieces(raw)
}

/// Whether `raw` is one piece of unquoted text as it is: not empty, and none of the characters that start
/// another kind of piece in brush-parser's word grammar (quotes, `$`, backquotes, a backslash escape, a tilde at
/// the start or after a colon) occurs in it. Most words of a command (`ls`, `-la`, `src/main.rs`) are such text, and
/// skip the word parser and the cache it locks; a test compares the two on such words.
pub(crate) fn is_plain_text(raw: &str) -> bool {
    !raw.is_empty()
        && !raw
            .bytes()
            .any(|b| matches!(b, b'\'' | b'"' | b'$' | b'`' | b'\\' | b'~'))
}

/// Splits a word into its pieces with the word parser.
fn parsed_pieces(raw: &str) -> Result<Vec<Piece>, String> {
    let parsed = catch_unwind(AssertUnwindSafe(|| word::parse(raw, &ParserOptions::default())));
    match parsed {
        Ok(Ok(pieces)) => Ok(pieces.into_iter().map(|p| piece(p.piece, false)).collect()),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!("the word parser failed on `{raw}`")),
    }
}

/// Splits an expanding here-document body into its pieces (quotes are ordinary characters there).
pub(crate) fn heredoc_pieces(body: &str) -> Result<Vec<Piece>, String> {
    let parsed = catch_unwind(AssertUnwindSafe(|| {
        word::parse_heredoc(body, &ParserOptions::default())
    }));
    match parsed {
        Ok(Ok(pieces)) => Ok(pieces.into_iter().map(|p| piece(p.piece, true)).collect()),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err("the here-document parser failed".to_owned()),
    }
}

fn piece(piece: WordPiece, in_heredoc: bool) -> Piece {
    match piece {
        WordPiece::Text(text) if in_heredoc => Piece::Quoted(text),
        WordPiece::Text(text) => Piece::Text(text),
        WordPiece::SingleQuotedText(text) => Piece::Quoted(text),
        WordPiece::AnsiCQuotedText(text) => Piece::AnsiC(text),
        WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
            Piece::DoubleQuoted(inner.into_iter().map(|p| inner_piece(p.piece)).collect())
        }
        WordPiece::TildeExpansion(tilde) => Piece::Tilde(match tilde {
            word::TildeExpr::Home => None,
            word::TildeExpr::UserHome(user) => Some(user),
            word::TildeExpr::WorkingDir => Some("+".to_owned()),
            // `~-` and the directory-stack forms (`~+1`, `~-2`) name directories only known at run time.
            _ => Some("-".to_owned()),
        }),
        WordPiece::ParameterExpansion(expr) => param(expr),
        WordPiece::CommandSubstitution(body) => Piece::CommandSub {
            body,
            backticks: false,
        },
        WordPiece::BackquotedCommandSubstitution(body) => Piece::CommandSub {
            body,
            backticks: true,
        },
        WordPiece::EscapeSequence(text) => Piece::Escaped {
            text,
            in_double_quotes: in_heredoc,
        },
        WordPiece::ArithmeticExpression(expr) => Piece::Arith(expr.value),
    }
}

fn inner_piece(piece: WordPiece) -> Piece {
    match piece {
        WordPiece::Text(text) => Piece::Quoted(text),
        WordPiece::EscapeSequence(text) => Piece::Escaped {
            text,
            in_double_quotes: true,
        },
        other => self::piece(other, false),
    }
}

fn param(expr: ParameterExpr) -> Piece {
    let mut value = ParamValue::Other;
    let mut plain = false;
    let mut arithmetic: Vec<String> = Vec::new();
    let (parameter, indirect, nested, prompt) = match expr {
        ParameterExpr::Parameter { parameter, indirect } => {
            value = ParamValue::Variable;
            plain = !indirect;
            (Some(parameter), indirect, vec![], false)
        }
        ParameterExpr::ParameterLength { parameter, indirect } => {
            value = ParamValue::Number;
            (Some(parameter), indirect, vec![], false)
        }
        ParameterExpr::UseDefaultValues {
            parameter,
            indirect,
            default_value: text,
            ..
        }
        | ParameterExpr::AssignDefaultValues {
            parameter,
            indirect,
            default_value: text,
            ..
        }
        | ParameterExpr::IndicateErrorIfNullOrUnset {
            parameter,
            indirect,
            error_message: text,
            ..
        }
        | ParameterExpr::UseAlternativeValue {
            parameter,
            indirect,
            alternative_value: text,
            ..
        }
        | ParameterExpr::RemoveSmallestSuffixPattern {
            parameter,
            indirect,
            pattern: text,
        }
        | ParameterExpr::RemoveLargestSuffixPattern {
            parameter,
            indirect,
            pattern: text,
        }
        | ParameterExpr::RemoveSmallestPrefixPattern {
            parameter,
            indirect,
            pattern: text,
        }
        | ParameterExpr::RemoveLargestPrefixPattern {
            parameter,
            indirect,
            pattern: text,
        }
        | ParameterExpr::UppercaseFirstChar {
            parameter,
            indirect,
            pattern: text,
        }
        | ParameterExpr::UppercasePattern {
            parameter,
            indirect,
            pattern: text,
        }
        | ParameterExpr::LowercaseFirstChar {
            parameter,
            indirect,
            pattern: text,
        }
        | ParameterExpr::LowercasePattern {
            parameter,
            indirect,
            pattern: text,
        } => (Some(parameter), indirect, text.into_iter().collect(), false),
        ParameterExpr::Substring {
            parameter,
            indirect,
            offset,
            length,
        } => {
            // Substring offsets and lengths are arithmetic expressions.
            arithmetic.push(offset.value);
            arithmetic.extend(length.map(|l| l.value));
            (Some(parameter), indirect, vec![], false)
        }
        ParameterExpr::Transform {
            parameter,
            indirect,
            op,
        } => {
            // `@P` expands prompt escapes (which run `$(…)` inside the value), `@E` expands backslash escapes:
            // both make the value into something the analysis cannot see.
            let reexpands = matches!(
                op,
                word::ParameterTransformOp::PromptExpand | word::ParameterTransformOp::ExpandEscapeSequences
            );
            (Some(parameter), indirect, vec![], reexpands)
        }
        ParameterExpr::ReplaceSubstring {
            parameter,
            indirect,
            pattern,
            replacement,
            ..
        } => {
            let mut nested = vec![pattern];
            nested.extend(replacement);
            (Some(parameter), indirect, nested, false)
        }
        ParameterExpr::VariableNames { prefix, .. } => (None, false, vec![prefix], false),
        ParameterExpr::MemberKeys { variable_name, .. } => {
            (Some(Parameter::Named(variable_name)), false, vec![], false)
        }
    };
    let mut arithmetic: Vec<ArithText> = arithmetic
        .into_iter()
        .filter(|text| !text.is_empty())
        .map(|text| ArithText {
            text,
            kind: ArithKind::Offset,
        })
        .collect();
    let named = matches!(
        parameter,
        Some(Parameter::Named(_) | Parameter::NamedWithIndex { .. } | Parameter::NamedWithAllIndices { .. })
    );
    let name = match parameter {
        Some(Parameter::Named(name)) => name,
        Some(Parameter::NamedWithIndex { name, index }) => {
            // An array index is evaluated arithmetically (for an indexed array) and may hold `$(…)`.
            if !index.is_empty() {
                arithmetic.push(ArithText {
                    text: index,
                    kind: ArithKind::Subscript(name.clone()),
                });
            }
            name
        }
        Some(Parameter::NamedWithAllIndices { name, .. }) => {
            if value == ParamValue::Variable {
                value = ParamValue::Other;
            }
            name
        }
        Some(Parameter::Positional(n)) => {
            if value == ParamValue::Variable {
                value = ParamValue::Other;
            }
            n.to_string()
        }
        Some(Parameter::Special(special)) => {
            // The shell sets these to numbers it computes; no assignment or environment can change them.
            let number = matches!(
                special,
                word::SpecialParameter::PositionalParameterCount
                    | word::SpecialParameter::LastExitStatus
                    | word::SpecialParameter::ProcessId
                    | word::SpecialParameter::LastBackgroundProcessId
            );
            value = if number {
                ParamValue::Number
            } else {
                ParamValue::Other
            };
            special.to_string()
        }
        None => "!".to_owned(),
    };
    let mut nested = nested;
    nested.retain(|text| !text.is_empty());
    if indirect || prompt {
        value = ParamValue::Other;
    }
    Piece::Param {
        name,
        reexpands: indirect || prompt,
        nested,
        arithmetic,
        value,
        plain: plain && named,
    }
}

fn compound_list(src: &str, list: &ast::CompoundList) -> Vec<AndOrList> {
    list.0
        .iter()
        .map(|item| {
            let ast::CompoundListItem(and_or, separator) = item;
            let mut pipelines = vec![pipeline(src, &and_or.first)];
            pipelines.extend(and_or.additional.iter().map(|next| match next {
                ast::AndOr::And(p) | ast::AndOr::Or(p) => pipeline(src, p),
            }));
            AndOrList {
                pipelines,
                background: matches!(separator, ast::SeparatorOperator::Async),
            }
        })
        .collect()
}

fn script(src: &str, list: &ast::CompoundList) -> Script {
    Script(compound_list(src, list))
}

fn pipeline(src: &str, p: &ast::Pipeline) -> Pipeline {
    Pipeline(p.seq.iter().map(|x| command(src, x)).collect(), p.bang)
}

fn command(src: &str, c: &ast::Command) -> Cmd {
    match c {
        ast::Command::Simple(simple_command) => Cmd::Simple(simple(src, simple_command)),
        ast::Command::Compound(compound, redirects) => {
            let (construct, parts) = compound_parts(src, compound);
            Cmd::Compound {
                construct,
                parts,
                redirects: redirect_list(src, redirects.as_ref()),
            }
        }
        ast::Command::Function(definition) => {
            let ast::FunctionBody(body, redirects) = &definition.body;
            let (construct, parts) = compound_parts(src, body);
            Cmd::Function {
                name: definition.fname.value.clone(),
                body: Box::new(Cmd::Compound {
                    construct,
                    parts,
                    redirects: redirect_list(src, redirects.as_ref()),
                }),
            }
        }
        ast::Command::ExtendedTest(test, redirects) => {
            let mut parts = Vec::new();
            test_words(&test.expr, &mut parts);
            Cmd::Compound {
                construct: Construct::Test,
                parts,
                redirects: redirect_list(src, redirects.as_ref()),
            }
        }
    }
}

fn test_words(expr: &ast::ExtendedTestExpr, parts: &mut Vec<Part>) {
    match expr {
        ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
            test_words(a, parts);
            test_words(b, parts);
        }
        ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => test_words(a, parts),
        ast::ExtendedTestExpr::UnaryTest(
            predicate @ (ast::UnaryPredicate::StringHasZeroLength
            | ast::UnaryPredicate::StringHasNonZeroLength),
            w,
        ) => parts.push(Part::Tested {
            word: w.value.clone(),
            empty: matches!(predicate, ast::UnaryPredicate::StringHasZeroLength),
        }),
        ast::ExtendedTestExpr::UnaryTest(predicate, w) => {
            parts.push(Part::Word(w.value.clone()));
            if matches!(predicate, ast::UnaryPredicate::ShellVariableIsSetAndAssigned) {
                parts.push(Part::Name(w.value.clone()));
            }
        }
        ast::ExtendedTestExpr::BinaryTest(predicate, a, b) => {
            // Arithmetic comparisons evaluate their operands as arithmetic expressions.
            let arithmetic = matches!(
                predicate,
                ast::BinaryPredicate::ArithmeticEqualTo
                    | ast::BinaryPredicate::ArithmeticNotEqualTo
                    | ast::BinaryPredicate::ArithmeticLessThan
                    | ast::BinaryPredicate::ArithmeticLessThanOrEqualTo
                    | ast::BinaryPredicate::ArithmeticGreaterThan
                    | ast::BinaryPredicate::ArithmeticGreaterThanOrEqualTo
            );
            for w in [a, b] {
                parts.push(if arithmetic {
                    Part::Arith(w.value.clone())
                } else {
                    Part::Word(w.value.clone())
                });
            }
        }
    }
}

fn compound_parts(src: &str, compound: &ast::CompoundCommand) -> (Construct, Vec<Part>) {
    match compound {
        ast::CompoundCommand::Arithmetic(a) => {
            // brush-parser reads `( (ls) )` as arithmetic; bash reads `((` only without a space as arithmetic,
            // so anything else is two subshells and its inside is code.
            let at = a.loc.start.index;
            if src.get(at..).is_some_and(|rest| rest.starts_with("((")) {
                (Construct::Arithmetic, vec![Part::Arith(a.expr.value.clone())])
            } else {
                // The source between the outer parentheses, here-documents included, is the inner subshell.
                let inner = src
                    .get(at..a.loc.end.index)
                    .and_then(|text| text.strip_prefix('('))
                    .and_then(|text| text.trim_end().strip_suffix(')'))
                    .map_or_else(|| a.expr.value.clone(), str::to_owned);
                (Construct::Subshell, vec![Part::Code(inner)])
            }
        }
        ast::CompoundCommand::ArithmeticForClause(a) => {
            // Always three parts, empty when missing: the third runs only after the body.
            let mut parts: Vec<Part> = [&a.initializer, &a.condition, &a.updater]
                .into_iter()
                .map(|e| Part::Arith(e.as_ref().map(|e| e.value.clone()).unwrap_or_default()))
                .collect();
            parts.push(Part::Body(script(src, &a.body.list)));
            (Construct::For, parts)
        }
        ast::CompoundCommand::BraceGroup(b) => {
            (Construct::BraceGroup, vec![Part::Body(script(src, &b.list))])
        }
        ast::CompoundCommand::Subshell(s) => (Construct::Subshell, vec![Part::Body(script(src, &s.list))]),
        ast::CompoundCommand::ForClause(f) => {
            let parts = vec![
                Part::Loop {
                    variable: f.variable_name.clone(),
                    words: f
                        .values
                        .as_ref()
                        .map(|values| values.iter().map(|w| w.value.clone()).collect()),
                },
                Part::Body(script(src, &f.body.list)),
            ];
            (Construct::For, parts)
        }
        ast::CompoundCommand::CaseClause(c) => {
            let mut parts = vec![Part::Word(c.value.value.clone())];
            for item in &c.cases {
                parts.extend(item.patterns.iter().map(|w| Part::Word(w.value.clone())));
                if let Some(body) = &item.cmd {
                    parts.push(Part::Body(script(src, body)));
                }
            }
            (Construct::Case, parts)
        }
        ast::CompoundCommand::IfClause(i) => {
            let mut parts = vec![
                Part::Body(script(src, &i.condition)),
                Part::Body(script(src, &i.then)),
            ];
            for e in i.elses.iter().flatten() {
                if let Some(condition) = &e.condition {
                    parts.push(Part::Body(script(src, condition)));
                }
                parts.push(Part::Body(script(src, &e.body)));
            }
            (Construct::If, parts)
        }
        ast::CompoundCommand::WhileClause(w) => (
            Construct::Loop,
            vec![Part::Body(script(src, &w.0)), Part::Body(script(src, &w.1.list))],
        ),
        ast::CompoundCommand::UntilClause(w) => (
            Construct::Until,
            vec![Part::Body(script(src, &w.0)), Part::Body(script(src, &w.1.list))],
        ),
        ast::CompoundCommand::Coprocess(c) => {
            let mut parts: Vec<Part> = c.name.iter().map(|w| Part::Word(w.value.clone())).collect();
            parts.push(Part::Command(Box::new(command(src, &c.body))));
            (Construct::Coprocess, parts)
        }
    }
}

fn simple(src: &str, s: &ast::SimpleCommand) -> Simple {
    let mut out = Simple::default();
    let items = s.prefix.iter().flat_map(|p| p.0.iter());
    for item in items {
        prefix_or_suffix(src, item, &mut out, true);
    }
    if let Some(w) = &s.word_or_name {
        out.words.push(Arg::Word(w.value.clone()));
    }
    for item in s.suffix.iter().flat_map(|p| p.0.iter()) {
        prefix_or_suffix(src, item, &mut out, false);
    }
    out
}

fn prefix_or_suffix(src: &str, item: &ast::CommandPrefixOrSuffixItem, out: &mut Simple, in_prefix: bool) {
    match item {
        ast::CommandPrefixOrSuffixItem::IoRedirect(r) => out.redirects.push(redirect(src, r)),
        ast::CommandPrefixOrSuffixItem::Word(w) => out.words.push(Arg::Word(w.value.clone())),
        ast::CommandPrefixOrSuffixItem::AssignmentWord(assignment, w) => {
            if in_prefix {
                let (name, index) = match &assignment.name {
                    ast::AssignmentName::VariableName(n) => (n.clone(), None),
                    // The index is evaluated arithmetically, `$(…)` included.
                    ast::AssignmentName::ArrayElementName(n, index) => (n.clone(), Some(index.clone())),
                };
                let (value, elements) = match &assignment.value {
                    ast::AssignmentValue::Scalar(v) => (v.value.clone(), None),
                    // The raw word keeps every element; its substitutions are found when it is expanded.
                    ast::AssignmentValue::Array(items) => (
                        w.value.clone(),
                        Some(
                            items
                                .iter()
                                .map(|(key, value)| key.is_none().then(|| value.value.clone()))
                                .collect(),
                        ),
                    ),
                };
                out.assignments.push(Assignment {
                    name,
                    index,
                    value,
                    elements,
                    append: assignment.append,
                });
            } else {
                // After the command word an assignment is an ordinary argument (`export A=1`, `env A=1 cmd`).
                out.words.push(Arg::Word(w.value.clone()));
            }
        }
        ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
            out.words.push(Arg::ProcSub(script(src, &sub.list)))
        }
    }
}

fn redirect_list(src: &str, list: Option<&ast::RedirectList>) -> Vec<Redirect> {
    list.map(|l| l.0.iter().map(|x| redirect(src, x)).collect())
        .unwrap_or_default()
}

fn redirect(src: &str, r: &ast::IoRedirect) -> Redirect {
    match r {
        ast::IoRedirect::File(_, kind, target) => {
            let op = match kind {
                ast::IoFileRedirectKind::Read => RedirOp::Read,
                ast::IoFileRedirectKind::Write
                | ast::IoFileRedirectKind::Append
                | ast::IoFileRedirectKind::Clobber => RedirOp::Write,
                ast::IoFileRedirectKind::ReadAndWrite => RedirOp::ReadWrite,
                ast::IoFileRedirectKind::DuplicateInput => RedirOp::Duplicate { output: false },
                ast::IoFileRedirectKind::DuplicateOutput => RedirOp::Duplicate { output: true },
            };
            let target = match target {
                ast::IoFileRedirectTarget::Filename(w) | ast::IoFileRedirectTarget::Duplicate(w) => {
                    Target::Word(w.value.clone())
                }
                ast::IoFileRedirectTarget::Fd(_) => Target::Fd,
                ast::IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                    Target::ProcSub(script(src, &sub.list))
                }
            };
            Redirect { op, target }
        }
        ast::IoRedirect::HereDocument(_, doc) => Redirect {
            op: RedirOp::HereDoc {
                expands: doc.requires_expansion,
            },
            target: Target::Word(doc.doc.value.clone()),
        },
        ast::IoRedirect::HereString(_, w) => Redirect {
            op: RedirOp::HereString,
            target: Target::Word(w.value.clone()),
        },
        ast::IoRedirect::OutputAndError(w, _) => Redirect {
            op: RedirOp::Write,
            target: Target::Word(w.value.clone()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_what_the_word_parser_makes_of_it() {
        // Every word of one or two characters (printable ASCII, a space, a newline, a tab, non-ASCII letters), and
        // every whitespace-separated part of the corpus's commands: where the shortcut applies, its one text
        // piece is the parser's answer.
        let mut alphabet: Vec<char> = (' '..='~').collect();
        alphabet.extend(['\n', '\t', 'é', '→']);
        let mut words: Vec<String> = Vec::new();
        for a in &alphabet {
            words.push(a.to_string());
            for b in &alphabet {
                words.push(format!("{a}{b}"));
            }
        }
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
        for entry in std::fs::read_dir(corpus).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            words.extend(text.split_whitespace().map(str::to_owned));
        }
        let mut plain = 0;
        for word in &words {
            if is_plain_text(word) {
                plain += 1;
                assert_eq!(
                    format!("{:?}", pieces(word)),
                    format!("{:?}", parsed_pieces(word)),
                    "{word:?}"
                );
                // The word built from it directly is the word built from the parser's pieces.
                let parsed = parsed_pieces(word).unwrap();
                assert_eq!(
                    format!("{:?}", crate::word::expand(word)),
                    format!("{:?}", crate::word::from_pieces(&parsed)),
                    "{word:?}"
                );
            }
        }
        assert!(plain > 10_000, "{plain} plain words");
        for not_plain in ["", "~", "a:~", "'a'", "\"a\"", "$x", "`x`", "a\\ b"] {
            assert!(!is_plain_text(not_plain), "{not_plain:?}");
        }
    }

    #[test]
    fn a_word_with_too_many_braces_is_not_brace_expanded() {
        // One word to the tokenizer: `$[…]` spans the separators, so every brace counts.
        let word = "}{1{]{$[F;\n(N({\n?{\nU%]{{1{]{$[F;\n(N(I\n(N(I{{-{\n?{{{-{\n?{\nU%]I{{-{@,";
        assert!(matches!(brace_expand(word, 256), Braces::TooMany));
        assert!(matches!(brace_expand("{a,b}{c,d}", 256), Braces::Words(w) if w.len() == 4));
        assert!(matches!(brace_expand("{1..3}", 256), Braces::Words(w) if w.len() == 3));
        // No `,` or `..`, only parameter expansions, or only quoted braces: nothing to expand, and no parse.
        for plain in [
            word.trim_end_matches(','),
            "${a}/${b}",
            "'{print $1, $2}'",
            "\"{a,b}\"",
            "\\{a,b}",
        ] {
            assert!(matches!(brace_expand(plain, 256), Braces::None), "{plain}");
        }
    }
}
