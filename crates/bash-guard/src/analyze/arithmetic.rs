//! Arithmetic: what bash evaluates as arithmetic, and whether every value it may evaluate is known to be a number.

use agent_tool_traits::Decision;

use crate::analysis::LocationKind;
use crate::arith::{self, Operand};
use crate::knowledge;
use crate::parse::{Arg, ArithKind, ArithText, Cmd};
use crate::word;

use super::nested::unescape_backticks;
use super::vars::{Moment, Value};
use super::{Ctx, Walker, parse_checked};

/// A variable an arithmetic context evaluates.
#[derive(Debug)]
pub(super) struct ArithRead {
    pub(super) name: String,
    /// Where it was read.
    pub(super) moment: Moment,
    pub(super) context: String,
    pub(super) ctx: Ctx,
    pub(super) parent: Option<usize>,
}

/// How many variables deep a value naming another variable is followed.
const MAX_VALUE_DEPTH: usize = 16;

/// What `context` in a reason names.
fn arith_context(kind: &ArithKind) -> String {
    match kind {
        ArithKind::Expansion => "`$((…))`".to_owned(),
        ArithKind::Subscript(array) => format!("the subscript of `{array}`"),
        ArithKind::Offset => "a substring offset".to_owned(),
    }
}

impl Walker<'_> {
    /// An arithmetic expression bash evaluates: the code in it runs, and every variable it names is evaluated.
    pub(super) fn arithmetic(&mut self, text: &str, context: &str, ctx: Ctx, parent: Option<usize>) {
        let mut w = word::expand_heredoc(text);
        // The operands below follow the expressions nested in this one.
        w.arithmetic.clear();
        self.word_code(&w, ctx, parent, Some(LocationKind::Arithmetic));
        let whole = ArithText {
            text: text.to_owned(),
            kind: ArithKind::Expansion,
        };
        self.operands_in(&whole, context, ctx, parent, 0);
    }

    /// The operands of an arithmetic expression found inside a word.
    pub(super) fn arithmetic_operands(
        &mut self,
        arithmetic: &ArithText,
        ctx: Ctx,
        parent: Option<usize>,
        depth: usize,
    ) {
        let context = arith_context(&arithmetic.kind);
        self.operands_in(arithmetic, &context, ctx, parent, depth);
    }

    pub(super) fn operands_in(
        &mut self,
        arithmetic: &ArithText,
        context: &str,
        ctx: Ctx,
        parent: Option<usize>,
        depth: usize,
    ) {
        if let ArithKind::Subscript(array) = &arithmetic.kind
            && self.is_associative(array, ctx)
        {
            return;
        }
        if depth > MAX_VALUE_DEPTH {
            self.finding(
                Decision::Ask,
                format!("arithmetic nested more than {MAX_VALUE_DEPTH} levels deep"),
                parent,
            );
            return;
        }
        for operand in arith::operands(&arithmetic.text) {
            match operand {
                Operand::Read(name) => {
                    let moment = self.moment(ctx);
                    self.reads.push(ArithRead {
                        name,
                        moment,
                        context: context.to_owned(),
                        ctx,
                        parent,
                    });
                }
                Operand::Assign(name) => self.assign(&name, Value::Text("0".to_owned())),
                Operand::Unknown(source) => self.unknown_operand(&source, context, parent),
                Operand::Output { body, backticks } => self.output_operand(&body, backticks, context, parent),
                Operand::Subscript(inner) => self.arithmetic_operands(&inner, ctx, parent, depth + 1),
            }
        }
    }

    /// A substitution's output read as a number: fine when the command prints only a number, else an unknown value.
    pub(super) fn output_operand(
        &mut self,
        body: &str,
        backticks: bool,
        context: &str,
        parent: Option<usize>,
    ) {
        if !self.numeric_output(body, backticks, parent) {
            let source = if backticks {
                format!("`{body}`")
            } else {
                format!("$({body})")
            };
            self.unknown_operand(&source, context, parent);
        }
    }

    pub(super) fn unknown_operand(&mut self, source: &str, context: &str, parent: Option<usize>) {
        self.finding(
            Decision::Ask,
            format!(
                "{context} evaluates `{source}` as arithmetic, a value only known at run time: a value like `a[$(…)]` \
                 would run as code"
            ),
            parent,
        );
    }

    /// Whether the code of a substitution prints only a number (`$(nproc)`, `$(wc -l < f)`): its one command is a
    /// form of `knowledge::NUMERIC_OUTPUT` with literal words.
    pub(super) fn numeric_output(&mut self, body: &str, backticks: bool, parent: Option<usize>) -> bool {
        let text = if backticks {
            unescape_backticks(body)
        } else {
            body.to_owned()
        };
        let Ok(script) = parse_checked(&text) else {
            return false;
        };
        let [list] = script.0.as_slice() else {
            return false;
        };
        let ([pipeline], false) = (list.pipelines.as_slice(), list.background) else {
            return false;
        };
        // In a pipeline, the last command prints what is substituted.
        let Some(Cmd::Simple(simple)) = pipeline.0.last() else {
            return false;
        };
        if !simple.assignments.is_empty() {
            return false;
        }
        let mut words = Vec::new();
        for arg in &simple.words {
            let Arg::Word(raw) = arg else { return false };
            let w = word::expand(raw);
            if !w.literal {
                return false;
            }
            words.push(w.text);
        }
        let Some((name, args)) = words.split_first() else {
            return false;
        };
        let Some((_, options, most)) = knowledge::NUMERIC_OUTPUT.iter().find(|(n, _, _)| n == name) else {
            return false;
        };
        let operands = args.iter().filter(|a| !options.contains(&a.as_str())).count();
        let integers = args.iter().filter(|a| !options.contains(&a.as_str())).all(|a| {
            let digits = a.strip_prefix('-').unwrap_or(a);
            !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
        });
        let numeric = integers && operands <= *most && (*most == 0 || operands > 0);
        if numeric {
            // A function of that name defined on the line would print something else: checked at the end.
            self.numeric_claims.push((name.clone(), parent));
        }
        numeric
    }

    /// The subscript of `array[…]=` or of a name operand.
    pub(super) fn subscript(&mut self, array: &str, text: &str, ctx: Ctx, parent: Option<usize>) {
        if self.is_associative(array, ctx) {
            // Still expanded as a word, with its substitutions.
            let w = word::expand_heredoc(text);
            self.word_code(&w, ctx, parent, None);
            return;
        }
        self.arithmetic(text, &format!("the subscript of `{array}`"), ctx, parent);
    }

    /// Judges what arithmetic evaluated, now that every value the line gives each variable is known.
    pub(super) fn judge_arithmetic(&mut self) {
        for (name, parent) in std::mem::take(&mut self.numeric_claims) {
            if self.defined.contains(&name) {
                self.finding(
                    Decision::Ask,
                    format!(
                        "arithmetic evaluates the output of `{name}`, a function the line defines: a value like \
                         `a[$(…)]` would run as code"
                    ),
                    parent,
                );
            }
        }
        for value in std::mem::take(&mut self.values) {
            if self.vars.get(&value.name).is_some_and(|f| f.integer) {
                let context = format!("the assignment to the integer variable `{}`", value.name);
                let mut seen = Vec::new();
                self.evaluate_value(
                    &value.text,
                    value.literal,
                    &context,
                    value.moment,
                    value.ctx,
                    value.parent,
                    &mut seen,
                );
            }
        }
        let mut integers: Vec<&String> = self
            .vars
            .iter()
            .filter(|(_, f)| f.integer && (f.unknown || !f.paths.is_empty()))
            .map(|(name, _)| name)
            .collect();
        integers.sort();
        let reasons: Vec<String> = integers
            .into_iter()
            .map(|name| {
                format!(
                    "`{name}` is an integer variable given a value only known at run time, which bash evaluates as \
                     arithmetic: a value like `a[$(…)]` would run as code"
                )
            })
            .collect();
        for reason in reasons {
            self.finding(Decision::Ask, reason, None);
        }
        for read in std::mem::take(&mut self.reads) {
            let mut seen = Vec::new();
            self.judge(
                &read.name,
                read.moment,
                &read.context,
                read.ctx,
                read.parent,
                &mut seen,
            );
        }
    }

    /// A variable arithmetic evaluates: safe when every value it can have is a number.
    pub(super) fn judge(
        &mut self,
        name: &str,
        moment: Moment,
        context: &str,
        ctx: Ctx,
        parent: Option<usize>,
        seen: &mut Vec<String>,
    ) {
        // bash stops a value that names itself with an error.
        if seen.iter().any(|s| s == name) {
            return;
        }
        seen.push(name.to_owned());
        let reason = |why: &str| {
            format!(
                "{context} evaluates the value of `{name}` as arithmetic, and {why}: a value like `a[$(…)]` would \
                 run as code"
            )
        };
        let Some(facts) = self.vars.get(name) else {
            if !knowledge::NUMERIC_VARIABLES.contains(&name) {
                self.finding(Decision::Ask, reason("the line does not set it"), parent);
            }
            return;
        };
        // A path's text is only known at run time (the home directory's name).
        let unknown = facts.unknown || !facts.paths.is_empty();
        let texts: Vec<String> = facts
            .values
            .iter()
            .filter(|v| !arith::is_number(v))
            .cloned()
            .collect();
        if unknown {
            self.finding(
                Decision::Ask,
                reason("the line gives it a value only known at run time"),
                parent,
            );
        } else if !self.was_assigned(name, moment) {
            self.finding(
                Decision::Ask,
                reason("the line may not have set it yet there"),
                parent,
            );
        }
        // Every literal value the line gives it may be the one evaluated (a loop, or a function called later).
        for text in texts {
            let context = format!("{context} (through `{name}`)");
            self.evaluate_value(&text, true, &context, moment, ctx, parent, seen);
        }
    }

    /// A value bash evaluates as arithmetic: the code in its subscripts runs, the variables it names are evaluated.
    #[expect(
        clippy::too_many_arguments,
        reason = "the state of one judgement, passed down a recursion"
    )]
    pub(super) fn evaluate_value(
        &mut self,
        text: &str,
        literal: bool,
        context: &str,
        moment: Moment,
        ctx: Ctx,
        parent: Option<usize>,
        seen: &mut Vec<String>,
    ) {
        if literal {
            let mut w = word::expand_heredoc(text);
            if !w.embedded.is_empty() {
                // Text that was quoted when assigned becomes code here: concealed, so denied whatever it runs.
                self.finding(
                    Decision::Deny,
                    format!(
                        "{context} evaluates `{text}` as arithmetic, which runs the command substitution quoted in it"
                    ),
                    parent,
                );
                w.arithmetic.clear();
                self.word_code(&w, ctx, parent, Some(LocationKind::Arithmetic));
            }
        }
        self.value_operands(text, context, moment, ctx, parent, seen);
    }

    pub(super) fn value_operands(
        &mut self,
        text: &str,
        context: &str,
        moment: Moment,
        ctx: Ctx,
        parent: Option<usize>,
        seen: &mut Vec<String>,
    ) {
        if seen.len() > MAX_VALUE_DEPTH {
            self.finding(
                Decision::Ask,
                format!("{context} evaluates variables naming variables more than {MAX_VALUE_DEPTH} deep"),
                parent,
            );
            return;
        }
        for operand in arith::operands(text) {
            match operand {
                Operand::Read(name) => self.judge(&name, moment, context, ctx, parent, seen),
                // A value that assigns (`x='y=1'`) sets a number.
                Operand::Assign(_) => {}
                Operand::Unknown(source) => self.unknown_operand(&source, context, parent),
                Operand::Output { body, backticks } => self.output_operand(&body, backticks, context, parent),
                Operand::Subscript(inner) => {
                    if let ArithKind::Subscript(array) = &inner.kind
                        && self.is_associative(array, ctx)
                    {
                        continue;
                    }
                    self.value_operands(&inner.text, context, moment, ctx, parent, seen);
                }
            }
        }
    }
}
