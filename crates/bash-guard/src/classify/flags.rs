//! Commands described by a flag table alone: their options' effects and what their operands are.

use crate::analysis::{AccessVia, CommandClass};
use crate::knowledge::{self, Effect, Flags, Operands, Recursion};
use crate::options;
use crate::word::Word;

use super::Classified;

/// Applies the effects of options; returns whether one of them gave the pattern or program (`grep -e`, `-f`).
pub(super) fn effects(effects: &[(Effect, Option<Word>)], c: &mut Classified) -> bool {
    let mut pattern_given = false;
    let mut unrestricted = 0;
    let mut only = Only::default();
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
            Effect::ListedFiles => match value {
                Some(v) => {
                    c.read(v, AccessVia::Flag);
                    c.ask(format!(
                        "reads the files `{}` lists, whose names are only known at run time",
                        v.text
                    ));
                }
                // `xz --files`: the list is standard input.
                None => c.ask(
                    "reads the files its standard input lists, whose names are only known at run time"
                        .to_owned(),
                ),
            },
            // Below a directory it reads, a link may lead anywhere: the walk that looks for what a recursive read
            // reaches follows links too.
            Effect::FollowsLinks => c.follows_links = true,
            Effect::Network(reason) => c.online((*reason).to_owned()),
            Effect::Unbounded(reason) => c.unbounded = Some((*reason).to_owned()),
            Effect::OnlyType => only.types.extend(value.clone()),
            Effect::OnlyGlob => only.globs.extend(value.clone()),
            Effect::DefinesTypes => only.redefined = true,
        }
    }
    only.narrow(c);
    pattern_given
}

/// The file types and globs a recursive search is limited to (`rg -t rust -g '*.toml'`).
#[derive(Debug, Default)]
struct Only {
    types: Vec<Word>,
    globs: Vec<Word>,
    /// `--type-add`/`--type-clear`: a type may name other files than its usual ones.
    redefined: bool,
}

impl Only {
    /// A type or glob whitelists the files it names, hidden ones included, and leaves out the others: the search
    /// reads hidden files, but only of those names (`SubCommand::names`). A type this table does not know (or one
    /// the line redefines), a glob with a directory in it or only known at run time, may name any file: every
    /// file below, hidden ones included. Only exclusions (`-g '!*.md'`) whitelist nothing.
    fn narrow(&self, c: &mut Classified) {
        if self.types.is_empty() && self.globs.is_empty() {
            return;
        }
        let mut names: Vec<&str> = Vec::new();
        let mut known = !self.redefined;
        for kind in &self.types {
            match knowledge::SEARCH_TYPES
                .iter()
                .find(|(name, _)| kind.literal && *name == kind.text)
            {
                Some((_, globs)) => names.extend(globs.iter().copied()),
                None => known = false,
            }
        }
        for glob in &self.globs {
            let text = glob.text.as_str();
            if !glob.literal {
                known = false;
            } else if text.starts_with('!') {
                continue;
            } else {
                let name = text.strip_prefix("**/").unwrap_or(text);
                known &= !name.contains(['/', '{', '}', '\\']);
                names.push(name);
            }
        }
        if !known {
            c.recursive = Recursion::All;
            c.names.clear();
            return;
        }
        if names.is_empty() {
            return;
        }
        c.recursive = Recursion::All;
        c.names = vec![match names.as_slice() {
            [one] => (*one).to_owned(),
            _ => format!("{{{}}}", names.join(",")),
        }];
    }
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
        Operands::Names => operands.for_each(|o| c.read(o, AccessVia::Metadata)),
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
