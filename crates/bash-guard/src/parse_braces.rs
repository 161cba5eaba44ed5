//! Brace expansion of a raw word (`{a,b}`, `{1..3}`), part of the parse module: brush-parser parses the braces,
//! this enumerates the words they make, within a limit.

use std::panic::{AssertUnwindSafe, catch_unwind};

use brush_parser::ParserOptions;
use brush_parser::word::{self, BraceExpressionMember, BraceExpressionOrText};

use crate::prescan;

/// What brace expansion makes of a raw word.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Braces {
    /// No brace expansion: the word stays one word.
    None,
    /// The words it expands to (`{rm,-rf}` → `rm`, `-rf`), each still raw.
    Words(Vec<String>),
    /// More than the limit: the analysis does not enumerate them.
    TooMany,
}

/// Brace-expands a raw word, enumerating at most `limit` words.
pub(crate) fn brace_expand(raw: &str, limit: usize) -> Braces {
    // An expansion needs a `,` or `..` and an unquoted `{` that does not open a parameter expansion; most words
    // with braces (`${x}`, a quoted awk program) have none, and skip the parse.
    if !(raw.contains(',') || raw.contains("..")) || !prescan::has_brace_expansion_opener(raw) {
        return Braces::None;
    }
    if prescan::most_braces_in_a_word(raw, |_| false) > prescan::MAX_WORD_BRACES {
        return Braces::TooMany;
    }
    let parsed = catch_unwind(AssertUnwindSafe(|| {
        word::parse_brace_expansions(raw, &ParserOptions::default())
    }));
    let Ok(Ok(Some(pieces))) = parsed else {
        return Braces::None;
    };
    if pieces.iter().all(|p| matches!(p, BraceExpressionOrText::Text(_))) {
        return Braces::None;
    }
    match expand_braces(&pieces, limit) {
        Some(words) => Braces::Words(words),
        None => Braces::TooMany,
    }
}

fn expand_braces(pieces: &[BraceExpressionOrText], limit: usize) -> Option<Vec<String>> {
    let mut words = vec![String::new()];
    for piece in pieces {
        let alternatives: Vec<String> = match piece {
            BraceExpressionOrText::Text(text) => vec![text.clone()],
            BraceExpressionOrText::Expr(members) => {
                let mut all = Vec::new();
                for member in members {
                    all.extend(expand_member(member, limit)?);
                    if all.len() > limit {
                        return None;
                    }
                }
                all
            }
        };
        let mut next = Vec::with_capacity(words.len().saturating_mul(alternatives.len()));
        for prefix in &words {
            for alternative in &alternatives {
                next.push(format!("{prefix}{alternative}"));
            }
        }
        if next.len() > limit {
            return None;
        }
        words = next;
    }
    Some(words)
}

/// How many words brace expansion makes of a raw word (saturating), or `None` when the word has more braces than
/// the parser is given.
pub(crate) fn brace_count(raw: &str) -> Option<u64> {
    if !(raw.contains(',') || raw.contains("..")) || !prescan::has_brace_expansion_opener(raw) {
        return Some(1);
    }
    if prescan::most_braces_in_a_word(raw, |_| false) > prescan::MAX_WORD_BRACES {
        return None;
    }
    let parsed = catch_unwind(AssertUnwindSafe(|| {
        word::parse_brace_expansions(raw, &ParserOptions::default())
    }));
    let Ok(Ok(Some(pieces))) = parsed else {
        return Some(1);
    };
    Some(count_pieces(&pieces))
}

fn count_pieces(pieces: &[BraceExpressionOrText]) -> u64 {
    pieces.iter().fold(1u64, |product, piece| {
        let alternatives = match piece {
            BraceExpressionOrText::Text(_) => 1,
            BraceExpressionOrText::Expr(members) => members.iter().fold(0u64, |sum, member| {
                sum.saturating_add(match member {
                    BraceExpressionMember::NumberSequence {
                        start,
                        end,
                        increment,
                    } => start.abs_diff(*end) / increment.unsigned_abs().max(1) + 1,
                    BraceExpressionMember::CharSequence {
                        start,
                        end,
                        increment,
                    } => {
                        u64::from(u32::from(*start).abs_diff(u32::from(*end)))
                            / increment.unsigned_abs().max(1)
                            + 1
                    }
                    BraceExpressionMember::Child(pieces) => count_pieces(pieces),
                })
            }),
        };
        product.saturating_mul(alternatives)
    })
}

fn expand_member(member: &BraceExpressionMember, limit: usize) -> Option<Vec<String>> {
    match member {
        BraceExpressionMember::NumberSequence {
            start,
            end,
            increment,
        } => {
            let step = increment.unsigned_abs().max(1);
            let count = start.abs_diff(*end) / step + 1;
            if count > limit as u64 {
                return None;
            }
            let mut values = Vec::new();
            let mut value = *start;
            for _ in 0..count {
                values.push(value.to_string());
                let delta = i64::try_from(step).ok()?;
                value = if start <= end {
                    value.checked_add(delta)?
                } else {
                    value.checked_sub(delta)?
                };
            }
            Some(values)
        }
        BraceExpressionMember::CharSequence {
            start,
            end,
            increment,
        } => {
            let (low, high) = (
                u32::from(*start).min(u32::from(*end)),
                u32::from(*start).max(u32::from(*end)),
            );
            let step = usize::try_from(increment.unsigned_abs().max(1)).ok()?;
            let values: Vec<String> = (low..=high)
                .step_by(step)
                .filter_map(char::from_u32)
                .map(String::from)
                .collect();
            (values.len() <= limit).then_some(values)
        }
        BraceExpressionMember::Child(pieces) => expand_braces(pieces, limit),
    }
}
