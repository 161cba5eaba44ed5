//! What an arithmetic expression reads and sets: bash evaluates the value of every variable it names as arithmetic.

// Bash evaluates a variable named in an arithmetic expression by evaluating its value as an expression in turn,
// and it expands the subscript of every array reference in that value (`$(…)` included). A value that was inert
// text when it was assigned (`x='a[$(id)]'`) therefore runs as code in `$((x))`, `[[ $x -eq 0 ]]`, `let x`,
// `declare -i y=x` or `${a[x]}`. This module lists the operands of one expression; the walker decides which
// values are known to be numbers.

use crate::parse::{self, ArithText, ParamValue, Piece};

/// One thing an arithmetic expression evaluates or sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Operand {
    /// A variable whose value is evaluated as arithmetic in turn (`x`, `$x`, `${x}`, `a[i]`).
    Read(String),
    /// A variable the expression sets (`x=…`, `x+=…`, `x++`): a number afterwards.
    Assign(String),
    /// Text only known at run time that is evaluated: `$1`, `$@`, `${x/a/b}`.
    Unknown(String),
    /// The output of `$(…)` or backticks, evaluated: unknown unless the command only prints a number.
    Output { body: String, backticks: bool },
    /// An expression inside this one that is arithmetic unless its array is associative (`${a[i]}`, `${v:o}`).
    Subscript(ArithText),
}

/// The operands of the arithmetic expression `text`, in the order bash meets them.
pub(crate) fn operands(text: &str) -> Vec<Operand> {
    let mut out = Vec::new();
    match parse::heredoc_pieces(text) {
        Ok(pieces) => pieces_operands(&pieces, &mut out),
        Err(_) => out.push(Operand::Unknown(text.to_owned())),
    }
    out
}

/// Whether `text` is a number constant of bash arithmetic (`42`, `-7`, `0x1f`, `8#17`): it evaluates to itself and
/// names no variable.
pub(crate) fn is_number(text: &str) -> bool {
    let text = text.trim();
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    digits.starts_with(|c: char| c.is_ascii_digit())
        && digits
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '#' | '@'))
}

/// Whether `name` can name a shell variable.
pub(crate) fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn pieces_operands(pieces: &[Piece], out: &mut Vec<Operand>) {
    for piece in pieces {
        match piece {
            Piece::Text(text) | Piece::Quoted(text) | Piece::AnsiC(text) => text_operands(text, out),
            Piece::Escaped { text, .. } => text_operands(text.trim_start_matches('\\'), out),
            Piece::DoubleQuoted(inner) => pieces_operands(inner, out),
            // In arithmetic `~` is bitwise negation of what follows.
            Piece::Tilde(user) => text_operands(user.as_deref().unwrap_or_default(), out),
            Piece::Param {
                name,
                arithmetic,
                value,
                ..
            } => {
                match value {
                    ParamValue::Variable if is_name(name) => out.push(Operand::Read(name.clone())),
                    ParamValue::Number => {}
                    ParamValue::Variable | ParamValue::Other => {
                        out.push(Operand::Unknown(format!("${name}")))
                    }
                }
                out.extend(arithmetic.iter().cloned().map(Operand::Subscript));
            }
            Piece::CommandSub { body, backticks } => out.push(Operand::Output {
                body: body.clone(),
                backticks: *backticks,
            }),
            // `$((…))` inside is a number, but what it evaluates counts.
            Piece::Arith(inner) => out.extend(operands(inner)),
        }
    }
}

/// The assignment operators that also read the variable first.
const UPDATES: [&str; 12] = [
    "+=", "-=", "*=", "/=", "%=", "&=", "^=", "|=", "<<=", ">>=", "++", "--",
];

fn text_operands(text: &str, out: &mut Vec<Operand>) {
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        if b.is_ascii_digit() {
            // A number constant (`42`, `0x1f`, `16#ff`, `64#@_`) is never a variable.
            at += 1;
            while bytes
                .get(at)
                .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'#' | b'@'))
            {
                at += 1;
            }
            continue;
        }
        if !(b.is_ascii_alphabetic() || b == b'_') {
            at += 1;
            continue;
        }
        let start = at;
        while bytes
            .get(at)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            at += 1;
        }
        let name = text.get(start..at).unwrap_or_default().to_owned();
        let before = text.get(..start).unwrap_or_default().trim_end();
        let after = text.get(at..).unwrap_or_default().trim_start();
        if let Some(subscript) = after.strip_prefix('[') {
            // `a[i] = 1` sets one element and reads nothing of `a`; the subscript itself is scanned as the loop
            // goes on. A subscript that ends in another piece is read conservatively.
            let rest = closing_bracket(subscript).and_then(|end| subscript.get(end + 1..));
            let plain_set = rest.is_some_and(|r| {
                let r = r.trim_start();
                r.starts_with('=') && !r.starts_with("==")
            });
            if !plain_set {
                out.push(Operand::Read(name));
            }
            continue;
        }
        let sets = after.starts_with('=') && !after.starts_with("==");
        let updates = UPDATES.iter().any(|op| after.starts_with(op))
            || before.ends_with("++")
            || before.ends_with("--");
        if !sets {
            out.push(Operand::Read(name.clone()));
        }
        if sets || updates {
            out.push(Operand::Assign(name));
        }
    }
}

/// The offset of the `]` that closes a subscript whose `[` came just before `text`.
fn closing_bracket(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' if depth == 0 => return Some(at),
            ']' => depth -= 1,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(name: &str) -> Operand {
        Operand::Read(name.to_owned())
    }

    fn assign(name: &str) -> Operand {
        Operand::Assign(name.to_owned())
    }

    #[test]
    fn names_are_read_and_set() {
        assert_eq!(operands("x + 1"), [read("x")]);
        assert_eq!(operands("i = n * 2"), [assign("i"), read("n")]);
        assert_eq!(operands("i++"), [read("i"), assign("i")]);
        assert_eq!(operands("--i"), [read("i"), assign("i")]);
        assert_eq!(operands("x += 2"), [read("x"), assign("x")]);
        assert_eq!(operands("x == 2 || y <= 3"), [read("x"), read("y")]);
        assert_eq!(operands("a[i] = 1"), [read("i")]);
        assert_eq!(operands("a[i] + 1"), [read("a"), read("i")]);
    }

    #[test]
    fn constants_are_not_names() {
        assert!(operands("1024 * 1024 + 0x1f + 16#ff + 2#101").is_empty());
        assert!(is_number("42") && is_number(" -7 ") && is_number("0x1F") && is_number("8#17"));
        assert!(!is_number("a[1]") && !is_number("1+x") && !is_number("") && !is_number("x"));
    }

    #[test]
    fn expansions_inside_are_operands() {
        assert_eq!(operands("$x + ${y}"), [read("x"), read("y")]);
        assert!(operands("${#x} + $# + $? + $$").is_empty());
        assert_eq!(operands("$1"), [Operand::Unknown("$1".to_owned())]);
        assert_eq!(
            operands("$(cat f) + 1"),
            [Operand::Output {
                body: "cat f".to_owned(),
                backticks: false
            }]
        );
        assert_eq!(operands("$(( y ))"), [read("y")]);
        assert_eq!(
            operands("${a[i]}"),
            [
                read("a"),
                Operand::Subscript(ArithText {
                    text: "i".to_owned(),
                    kind: crate::parse::ArithKind::Subscript("a".to_owned())
                })
            ]
        );
    }
}
