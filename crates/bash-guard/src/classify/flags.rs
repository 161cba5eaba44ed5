//! Commands described by a flag table alone: their options' effects and what their operands are.

use crate::analysis::{AccessVia, CommandClass};
use crate::knowledge::{Effect, Flags, Operands, Recursion};
use crate::options;
use crate::word::Word;

use super::Classified;

/// Applies the effects of options; returns whether one of them gave the pattern or program (`grep -e`, `-f`).
pub(super) fn effects(effects: &[(Effect, Option<Word>)], c: &mut Classified) -> bool {
    let mut pattern_given = false;
    let mut unrestricted = 0;
    for (effect, value) in effects {
        match effect {
            Effect::WriteValue => {
                c.changes_as(CommandClass::Write);
                if let Some(v) = value {
                    c.write(v, AccessVia::Flag);
                }
            }
            Effect::ReadValue => {
                if let Some(v) = value {
                    c.read(v, AccessVia::Flag);
                }
                pattern_given = true;
            }
            Effect::PatternGiven => pattern_given = true,
            Effect::HiddenExec(reason) => {
                c.changes_as(CommandClass::Exec);
                c.ask((*reason).to_owned());
            }
            Effect::NotReadOnly(_) => c.changes_as(CommandClass::Write),
            Effect::Distinct | Effect::OperandsList => {}
            Effect::Recursive => c.recursive = Recursion::All,
            Effect::Unrestricted => {
                unrestricted += 1;
                if unrestricted >= 2 {
                    c.recursive = Recursion::All;
                }
            }
            Effect::ListedFiles => {
                if let Some(v) = value {
                    c.read(v, AccessVia::Flag);
                    c.ask(format!(
                        "reads the files `{}` lists, whose names are only known at run time",
                        v.text
                    ));
                }
            }
            // Below a directory it reads, a link may lead anywhere: what it reads is not what the path check sees.
            Effect::FollowsLinks => c.read_only = false,
            Effect::Network(reason) => c.online((*reason).to_owned()),
            Effect::Unbounded(reason) => c.unbounded = Some((*reason).to_owned()),
        }
    }
    pattern_given
}

/// Reads a command's arguments with its flag table: option effects, then operands as files read or written.
pub(super) fn apply(table: &Flags, args: &[Word], c: &mut Classified, writes: bool) {
    c.recursive = c.recursive.max(table.recursive);
    let syntax = table.syntax();
    let parsed = options::read(args, &syntax);
    if parsed.dynamic && !table.any_args {
        c.read_only = false;
    }
    let given = parsed.effects(&syntax);
    let pattern_given = effects(&given, c);
    if given.iter().any(|(e, _)| *e == Effect::OperandsList) {
        for list in &parsed.operands {
            c.ask(format!(
                "reads the files `{}` lists, whose names are only known at run time",
                list.text
            ));
        }
    }
    let mut operands = parsed.operands.into_iter();
    match table.operands {
        Operands::Files => operands.for_each(|o| c.read(o, AccessVia::Operand)),
        Operands::Data => {}
        Operands::PatternThenFiles => {
            if !pattern_given {
                operands.next();
            }
            operands.for_each(|o| c.read(o, AccessVia::Operand));
        }
        Operands::InputThenOutput => {
            if let Some(input) = operands.next() {
                c.read(input, AccessVia::Operand);
            }
            if let Some(output) = operands.next() {
                c.write(output, AccessVia::Operand);
                c.changes_as(CommandClass::Write);
            }
        }
        Operands::NoneWhenReadOnly => {
            if operands.next().is_some() {
                c.changes_as(CommandClass::Write);
            }
        }
        Operands::Written => operands.for_each(|o| c.write(o, AccessVia::Operand)),
        Operands::LastWritten => {
            let all: Vec<&Word> = operands.collect();
            let target_given = given.iter().any(|(e, _)| *e == Effect::WriteValue);
            if target_given {
                all.iter().for_each(|o| c.read(o, AccessVia::Operand));
            } else if let Some((last, sources)) = all.split_last() {
                sources.iter().for_each(|o| c.read(o, AccessVia::Operand));
                c.write(last, AccessVia::Operand);
            }
        }
    }
    if writes {
        c.read_only = false;
    }
}
