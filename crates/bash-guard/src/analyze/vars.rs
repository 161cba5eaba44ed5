//! Variables and facts: every value the line gives each variable, and which assignments certainly ran before
//! each point of the walk.

use agent_tool_traits::Decision;

use crate::arith;
use crate::classify;
use crate::classify::{Found, Input};
use crate::knowledge;
use crate::parse::{self, ArithKind, Braces};
use crate::word::{self, Anchor, Embedded, Segment, Word};

use super::{BRACE_LIMIT, Ctx, Walker};

/// A value the line gives a variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Value {
    /// Known text: a literal, or a number the shell computes (kept as `0`).
    Text(String),
    /// A path the shell makes from the home or working directory, or a glob pattern, written as
    /// `FileAccess::path` writes it (`~/p` for `x=~/p` or `x=$HOME/p`, `./p`, `*.py` for `for x in *.py`): known
    /// as a file, only known at run time as text.
    Path(String),
    /// Only known at run time.
    Unknown,
}

/// What the line gives one variable.
#[derive(Debug, Default)]
pub(super) struct Facts {
    /// The literal values it assigns (a number an arithmetic assignment produces is kept as `0`).
    pub(super) values: Vec<String>,
    /// The paths it assigns ([`Value::Path`]): files the variable names, text only known at run time.
    pub(super) paths: Vec<String>,
    /// Some assignment gives a value only known at run time (`read x`, `x=$(cat f)`, `x+=…`).
    pub(super) unknown: bool,
    /// Declared with `-i`: every value assigned to it is evaluated as arithmetic.
    pub(super) integer: bool,
    /// `read NAME` reads it from the names a lister prints (`rg -l X src | while read -r f`): a file below the
    /// lister's starting points, as `{}` is for `find -exec` (also counted in `unknown`, for every other use).
    pub(super) found: Option<Found>,
    /// Some assignment other than such a `read` gives it a value.
    pub(super) otherwise: bool,
}

/// One entry of `Walker::known`.
#[derive(Debug)]
pub(super) struct Held {
    pub(super) kind: Known,
    pub(super) name: String,
    pub(super) span: usize,
}

/// A point of the walk in the shell it is in: which `known` entries held there.
#[derive(Debug, Clone, Copy)]
pub(super) struct Moment {
    pub(super) at: u64,
    pub(super) floor: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Known {
    /// Certainly assigned by the line, so its value does not come from the environment.
    Assigned,
    /// Declared associative (`declare -A`): its subscripts are strings, not arithmetic.
    Associative,
}

/// A value assigned to a variable.
#[derive(Debug)]
pub(super) struct AssignedValue {
    pub(super) name: String,
    pub(super) text: String,
    pub(super) literal: bool,
    /// Where it was assigned.
    pub(super) moment: Moment,
    pub(super) ctx: Ctx,
    pub(super) parent: Option<usize>,
}

impl Walker<'_> {
    /// The value the assignment `NAME=WORD` gives: bash expands a `~` at the start of the value and after each
    /// `:` in it, which a literal does not show.
    pub(super) fn assigned(&mut self, w: &Word, parent: Option<usize>) -> Value {
        if w.literal && w.text.contains(":~") {
            return Value::Unknown;
        }
        self.known_value(w, parent)
    }

    /// The value a word gives a variable, when the analysis knows it: a literal, a path from the home or working
    /// directory (or a glob pattern, which a `for` word expands), the number `$((…))` produces, or the output of a
    /// command that prints only a number.
    pub(super) fn known_value(&mut self, w: &Word, parent: Option<usize>) -> Value {
        if w.literal {
            return Value::Text(w.text.clone());
        }
        if let Some(path) = w.path() {
            return Value::Path(path);
        }
        if let [only] = w.arithmetic.as_slice()
            && only.kind == ArithKind::Expansion
            && w.text == format!("$(({}))", only.text)
        {
            return Value::Text("0".to_owned());
        }
        if let [Embedded { body, backticks }] = w.embedded.as_slice() {
            let source = if *backticks {
                format!("`{body}`")
            } else {
                format!("$({body})")
            };
            let (body, backticks) = (body.clone(), *backticks);
            if w.text == source && self.numeric_output(&body, backticks, parent) {
                return Value::Text("0".to_owned());
            }
            // `x=$(echo TEXT)`, `x=$(echo B64 | base64 -d)`: what the substitution prints, when the line says it.
            if w.text == source
                && !self.redefines
                && let Some(output) = super::nested::substituted_output(&source)
            {
                return Value::Text(output);
            }
        }
        Value::Unknown
    }

    /// The point the walk is at, in the shell running `ctx`.
    pub(super) fn moment(&self, ctx: Ctx) -> Moment {
        Moment {
            at: self.tick,
            floor: ctx.floor,
        }
    }

    /// Whether the line had certainly assigned `name` at `moment`, in the shell running there.
    pub(super) fn was_assigned(&self, name: &str, moment: Moment) -> bool {
        self.spans_of.get(name).is_some_and(|spans| {
            spans.iter().any(|span| {
                self.spans
                    .get(*span)
                    .is_some_and(|(from, to)| *from > moment.floor && *from <= moment.at && moment.at < *to)
            })
        })
    }

    pub(super) fn is_associative(&self, array: &str, ctx: Ctx) -> bool {
        self.known.iter().any(|held| {
            held.kind == Known::Associative
                && held.name == array
                && self
                    .spans
                    .get(held.span)
                    .is_some_and(|(from, _)| *from > ctx.floor)
        })
    }

    /// Something now certain: until the scope it was found in ends.
    pub(super) fn hold(&mut self, kind: Known, name: &str) {
        self.tick += 1;
        let span = self.spans.len();
        self.spans.push((self.tick, u64::MAX));
        if kind == Known::Assigned {
            self.spans_of.entry(name.to_owned()).or_default().push(span);
        }
        self.known.push(Held {
            kind,
            name: name.to_owned(),
            span,
        });
    }

    /// Ends a scope: what became certain inside it since `mark` is no longer certain after it.
    pub(super) fn forget(&mut self, mark: usize) {
        if mark >= self.known.len() {
            return;
        }
        self.tick += 1;
        for held in self.known.drain(mark..) {
            if let Some(span) = self.spans.get_mut(held.span) {
                span.1 = self.tick;
            }
        }
    }

    /// The line gives `name` a value.
    pub(super) fn assign(&mut self, name: &str, value: Value) {
        self.assign_element(name, value);
        self.hold(Known::Assigned, name);
    }

    /// The line gives one element of `name` a value: the other elements may still come from elsewhere.
    pub(super) fn assign_element(&mut self, name: &str, value: Value) {
        let facts = self.vars.entry(name.to_owned()).or_default();
        facts.otherwise = true;
        match value {
            Value::Text(text) if !facts.values.contains(&text) => facts.values.push(text),
            Value::Path(path) if !facts.paths.contains(&path) => facts.paths.push(path),
            Value::Text(_) | Value::Path(_) => {}
            Value::Unknown => facts.unknown = true,
        }
    }

    /// `read NAME` gives `name` a line of a lister's output: the name of a file it found.
    fn assign_found(&mut self, name: &str, found: &Found) {
        let facts = self.vars.entry(name.to_owned()).or_default();
        facts.unknown = true;
        facts.found = Some(match facts.found.take() {
            Some(mut all) => {
                all.merge(found.clone());
                all
            }
            None => found.clone(),
        });
        self.hold(Known::Assigned, name);
    }

    /// The files a word that is one double-quoted variable (`"$f"`, `"${f}"`) names, when only `read` gave it
    /// values, from a lister's output, and certainly did before `moment`: files found below starting points.
    pub(super) fn found_variable(&self, w: &Word, moment: Moment) -> Option<Found> {
        let Some([Segment::Variable { name, quoted: true }]) = w.segments.as_deref() else {
            return None;
        };
        let written = w.text.strip_prefix('$').map(|rest| {
            rest.strip_prefix('{')
                .and_then(|braced| braced.strip_suffix('}'))
                .unwrap_or(rest)
        });
        if written != Some(name.as_str()) {
            return None;
        }
        let facts = self.vars.get(name)?;
        if facts.otherwise || !self.was_assigned(name, moment) {
            return None;
        }
        facts.found.clone()
    }

    /// Keeps a value given to `name`, to evaluate it at the end if `name` is an integer variable.
    pub(super) fn assigned_value(
        &mut self,
        name: &str,
        text: &str,
        literal: bool,
        ctx: Ctx,
        parent: Option<usize>,
    ) {
        let moment = self.moment(ctx);
        self.values.push(AssignedValue {
            name: name.to_owned(),
            text: text.to_owned(),
            literal,
            moment,
            ctx,
            parent,
        });
    }

    /// `NAME=(…)`: known when every element is a literal without a key.
    pub(super) fn assign_array(&mut self, name: &str, elements: Option<&[String]>) {
        let values: Option<Vec<String>> = elements.and_then(|elements| {
            elements
                .iter()
                .map(|raw| {
                    let w = word::expand(raw);
                    (w.literal && parse::brace_expand(raw, BRACE_LIMIT) == Braces::None).then_some(w.text)
                })
                .collect()
        });
        match values {
            // `a=()` leaves every element empty, which arithmetic reads as 0.
            Some(values) if values.is_empty() => self.assign(name, Value::Text("0".to_owned())),
            Some(values) => {
                for value in values {
                    self.assign(name, Value::Text(value));
                }
            }
            None => self.assign(name, Value::Unknown),
        }
    }

    /// The variable of `for NAME in WORDS`: known when every word is a literal, or a pattern whose matches it
    /// takes (`*.py`).
    pub(super) fn loop_variable(&mut self, variable: &str, words: Option<&[String]>, ctx: Ctx) {
        let mut values: Option<Vec<Value>> = Some(Vec::new());
        for raw in words.unwrap_or_default() {
            let expanded = match parse::brace_expand(raw, BRACE_LIMIT) {
                Braces::None => vec![word::expand(raw)],
                Braces::Words(words) => words.iter().map(|w| word::expand(w)).collect(),
                Braces::TooMany => {
                    // Bash builds every word of the list before the first turn of the loop.
                    self.generated_words(raw, ctx);
                    let mut w = word::expand(raw);
                    w.literal = false;
                    w.anchor = Anchor::Dynamic;
                    w.segments = None;
                    vec![w]
                }
            };
            for w in expanded {
                self.word_code(&w, ctx, None, None);
                // `$(seq 1 5)` splits into numbers, a pattern into the files it matches (or stays itself when none
                // does); any other word only known at run time may be anything.
                let known = self.known_value(&w, None);
                match (values.as_mut(), known) {
                    (Some(_), Value::Unknown) | (None, _) => values = None,
                    (Some(values), known) => values.push(known),
                }
            }
        }
        match (words, values) {
            // `for x; do` loops over the positional parameters.
            (None, _) | (Some(_), None) => self.assign(variable, Value::Unknown),
            (Some(_), Some(values)) if values.is_empty() => {}
            (Some(_), Some(values)) => {
                for value in values {
                    self.assign(variable, value);
                }
            }
        }
    }

    /// A word a command takes as a variable name: bash evaluates a subscript in it as arithmetic.
    pub(super) fn name_operand(&mut self, w: &Word, via: &str, ctx: Ctx, parent: Option<usize>) {
        let Some(text) = static_text(w) else {
            self.finding(
                Decision::Ask,
                format!(
                    "{via} takes the variable name `{}`, only known at run time: a name like `a[$(…)]` runs code",
                    w.text
                ),
                parent,
            );
            return;
        };
        if let Some((array, rest)) = text.split_once('[')
            && arith::is_name(array)
        {
            let subscript = rest.rsplit_once(']').map_or(rest, |(inside, _)| inside);
            self.subscript(array, subscript, ctx, parent);
        }
    }

    /// What `declare`, `read`, `unset` and their kin do to variables: values, attributes, and subscripts in names.
    pub(super) fn declarations(&mut self, effective: &[Word], input: &Input, ctx: Ctx, index: usize) {
        let Some((command, args)) = effective.split_first() else {
            return;
        };
        if !command.literal {
            return;
        }
        let name = command.text.as_str();
        let parent = Some(index);
        if knowledge::DECLARES_VARIABLES.contains(&name) {
            self.declare(name, args, ctx, index);
        } else if knowledge::NAMES_VARIABLES
            .iter()
            .any(|(setter, _, _)| *setter == name)
        {
            let names = classify::name_operands(name, args);
            let found = found_line(name, args, &names, input);
            for w in &names {
                self.name_operand(w, &format!("`{name}`"), ctx, parent);
                if let Some(text) = static_text(w) {
                    let variable = text.split_once('[').map_or(text, |(n, _)| n);
                    match found {
                        Some(found) if variable == text => self.assign_found(variable, found),
                        _ if arith::is_name(variable) => self.assign(variable, Value::Unknown),
                        _ => {}
                    }
                }
            }
        } else if matches!(name, "test" | "[") {
            let mut previous: Option<&Word> = None;
            for w in args {
                if previous.is_some_and(|p| p.literal && p.text == "-v") {
                    self.name_operand(w, &format!("`{name} -v`"), ctx, parent);
                }
                previous = Some(w);
            }
        }
    }

    /// `declare`, `typeset`, `local`, `export`, `readonly`: `-i` makes values arithmetic, `-A` subscripts strings.
    pub(super) fn declare(&mut self, command: &str, args: &[Word], ctx: Ctx, index: usize) {
        let parent = Some(index);
        let (mut integer, mut associative, mut opaque) = (false, false, false);
        for w in args {
            if w.literal && w.text.starts_with(['-', '+']) && !w.text.contains('=') {
                if let Some(flags) = w.text.strip_prefix('-') {
                    integer |= flags.contains('i');
                    associative |= flags.contains('A');
                    // A name reference or an array: values this analysis does not follow.
                    opaque |= flags.contains(['n', 'a', 'A']);
                }
                continue;
            }
            let (target, value) = match w.text.split_once('=') {
                Some((target, value)) => (target, Some(value)),
                None => (w.text.as_str(), None),
            };
            let append = target.ends_with('+');
            let target = target.strip_suffix('+').unwrap_or(target);
            let (variable, subscript) = match target.split_once('[') {
                Some((variable, rest)) => (variable, Some(rest.rsplit_once(']').map_or(rest, |(s, _)| s))),
                None => (target, None),
            };
            if !arith::is_name(variable) {
                if !w.literal {
                    self.finding(
                        Decision::Ask,
                        format!(
                            "`{command}` sets the variable `{target}`, whose name is only known at run time: a name \
                             like `a[$(…)]` runs code"
                        ),
                        parent,
                    );
                }
                continue;
            }
            if let Some(subscript) = subscript {
                self.subscript(variable, subscript, ctx, parent);
            }
            if associative {
                self.hold(Known::Associative, variable);
            }
            if integer {
                self.vars.entry(variable.to_owned()).or_default().integer = true;
            }
            let Some(value) = value else {
                if opaque {
                    self.assign(variable, Value::Unknown);
                }
                continue;
            };
            if integer {
                self.arithmetic(value, &format!("`{command} -i`"), ctx, parent);
                self.assign(variable, Value::Text("0".to_owned()));
                continue;
            }
            let text = value.to_owned();
            // `export x=~/p` expands the `~` as the assignment `x=~/p` would (the word parser keeps it as text).
            let known = if opaque || append || value.starts_with('(') || value.contains(":~") {
                Value::Unknown
            } else if w.assignment_tilde {
                let v = word::expand(value);
                v.path().map_or(Value::Unknown, Value::Path)
            } else if w.literal {
                Value::Text(text.clone())
            } else {
                let v = word::expand(value);
                self.known_value(&v, parent)
            };
            self.assigned_value(variable, &text, w.literal, ctx, parent);
            if subscript.is_some() {
                self.assign_element(variable, known);
            } else {
                self.assign(variable, known);
            }
        }
    }
}

/// The text of a word that holds no expansion (a bracket that looks like a glob aside: `a[1]` names an element,
/// and a file name it may match is a plain name too).
fn static_text(w: &Word) -> Option<&str> {
    let plain = w.literal
        || (w.anchor == Anchor::Static
            && w.embedded.is_empty()
            && !w.reexpands
            && w.error.is_none()
            && !w.text.contains(['$', '`']));
    plain.then_some(w.text.as_str())
}

/// What `read [-r] NAME` gives its one variable when its input is the names a lister prints: a whole line, one
/// found name (backslashes removed without `-r`, blanks trimmed at its ends: a name spelt by the names below the
/// starting points, as a piece of one `xargs` splits is). Other options read parts of lines or other input.
fn found_line<'i>(command: &str, args: &[Word], names: &[Word], input: &'i Input) -> Option<&'i Found> {
    let Input::Found(found) = input else {
        return None;
    };
    let plain = args
        .iter()
        .all(|w| w.literal && (w.text == "-r" || !w.text.starts_with('-')));
    let one = matches!(names, [only] if only.literal && arith::is_name(&only.text));
    (command == "read" && plain && one).then_some(found)
}
