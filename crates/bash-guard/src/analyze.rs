//! The walk over the syntax tree: every command that could run, its files, and the findings.

use std::collections::HashMap;

use agent_tool_traits::Decision;

use crate::analysis::{AccessVia, CommandAnalysis, FileAccess, Finding, Location, LocationKind, SubCommand};
use crate::arith::{self, Operand};
use crate::classify::{self, Code, Table};
use crate::knowledge::{self, Recursion};
use crate::parse::{
    self, AndOrList, Arg, ArithKind, ArithText, Braces, Cmd, Construct, Part, RedirOp, Redirect, Script,
    Simple, Target,
};
use crate::prescan;
use crate::word::{self, Anchor, Embedded, Segment, Word};

/// How deeply code inside code (`bash -c "$(eval …)"`) is followed; deeper is a safety ask.
pub(crate) const MAX_DEPTH: usize = 24;
/// How many words one brace expansion may produce before the analysis stops enumerating them.
const BRACE_LIMIT: usize = 256;
/// The word a process substitution stands as: a pipe to or from code that is analysed on its own.
const PROCESS_SUBSTITUTION: &str = "<(…)";
/// How many paths the values of the variables in one word may combine into before the word counts as only known
/// at run time.
const PATH_LIMIT: usize = 64;

/// The context a command is met in.
#[derive(Debug, Clone, Copy)]
struct Ctx {
    kind: LocationKind,
    depth: usize,
    parent: Option<usize>,
    in_pipeline: bool,
    background: bool,
    /// Code parsed from a string (substitution, `bash -c`, …): counts towards [`MAX_DEPTH`].
    code_depth: usize,
    /// When the shell running this code started, on the clock of `Walker::known`: a new shell (`bash -c`) sees
    /// none of the variables the line set before.
    floor: u64,
}

impl Ctx {
    const TOP: Self = Self {
        kind: LocationKind::TopLevel,
        depth: 0,
        parent: None,
        in_pipeline: false,
        background: false,
        code_depth: 0,
        floor: 0,
    };

    fn nested(self, kind: LocationKind) -> Self {
        Self {
            kind,
            depth: self.depth + 1,
            ..self
        }
    }

    fn location(self) -> Location {
        Location {
            kind: self.kind,
            depth: self.depth,
            parent: self.parent,
        }
    }
}

/// Analyses `source` against `table`.
pub(crate) fn analyze(table: &Table, source: &str) -> CommandAnalysis {
    // A shell receives its code as a C string: it would run only the text before a NUL byte.
    if let Some(nul) = source.find('\0') {
        let mut out = analyze(table, source.get(..nul).unwrap_or_default());
        out.findings.push(Finding {
            decision: Decision::Ask,
            reason: "a NUL byte in the command: a shell would run only the text before it".to_owned(),
            command: None,
        });
        return out;
    }
    let mut walker = Walker {
        table,
        out: CommandAnalysis::default(),
        functions: Vec::new(),
        printed: HashMap::new(),
        stdin_shells: Vec::new(),
        vars: HashMap::new(),
        known: Vec::new(),
        spans: Vec::new(),
        spans_of: HashMap::new(),
        tick: 0,
        reads: Vec::new(),
        values: Vec::new(),
        numeric_claims: Vec::new(),
        defined: Vec::new(),
        variable_paths: Vec::new(),
    };
    match parse_checked(source) {
        Ok(script) => walker.script(&script, Ctx::TOP),
        Err(error) => {
            walker.out.findings.push(Finding {
                decision: Decision::Ask,
                reason: format!("the command cannot be parsed: {error}"),
                command: None,
            });
            walker.out.parse_error = Some(error);
            // The shell runs the complete lines before a syntax error, so they are analysed too: a deny there
            // still denies.
            if let Some(script) = longest_parsable_prefix(source) {
                walker.script(&script, Ctx::TOP);
            }
        }
    }
    walker.judge_arithmetic();
    walker.resolve_variable_paths();
    walker.out
}

/// The longest run of whole lines from the start that parses, when there is one.
fn longest_parsable_prefix(source: &str) -> Option<Script> {
    let ends: Vec<usize> = source.match_indices('\n').map(|(at, _)| at).collect();
    ends.iter()
        .rev()
        .find_map(|end| source.get(..*end).and_then(|prefix| parse_checked(prefix).ok()))
}

/// Parses after the checks that keep the parser out of shapes it cannot take in bounded time or stack.
fn parse_checked(source: &str) -> Result<Script, String> {
    match prescan::refusal(source) {
        Some(reason) => Err(reason),
        None => parse::program(source),
    }
}

struct Walker<'t> {
    table: &'t Table,
    out: CommandAnalysis,
    /// Functions whose bodies are being walked, innermost last.
    functions: Vec<String>,
    /// What `echo`/`printf` commands with only literal words print, by command index: the code a shell after
    /// them in a pipeline reads.
    printed: HashMap<usize, String>,
    /// Commands that are shells reading their code from standard input.
    stdin_shells: Vec<usize>,
    /// Every value the line gives each variable, for arithmetic that evaluates it.
    vars: HashMap<String, Facts>,
    /// What is certain at the point the walk is at: variables the line has set, arrays it declared associative.
    /// Scopes that may not run, or run in a subshell, truncate it when they end.
    known: Vec<Held>,
    /// When each entry of `known` held: from the tick it was pushed to the tick it was forgotten.
    spans: Vec<(u64, u64)>,
    /// The spans of each variable's `Known::Assigned` entries.
    spans_of: HashMap<String, Vec<usize>>,
    /// A clock that advances whenever `known` changes, so a point of the walk is one number.
    tick: u64,
    /// Variables arithmetic evaluates, judged when the whole line has been seen (a later assignment in a loop or
    /// a function body may give them their value).
    reads: Vec<ArithRead>,
    /// Values given to variables, evaluated as arithmetic at the end if the variable is an integer (`declare -i`).
    values: Vec<AssignedValue>,
    /// Commands whose output was taken as a number, with the command whose word held them.
    numeric_claims: Vec<(String, Option<usize>)>,
    /// Every function the line defines.
    defined: Vec<String>,
    /// Files named by words of text and variables (`cat $f`, `cat "${dir}/x"`), resolved at the end with the values
    /// the line gives the variables, so that `f=.env; cat $f` meets the rules of `.env`.
    variable_paths: Vec<VariablePath>,
}

/// A file access whose path holds variables.
#[derive(Debug)]
struct VariablePath {
    /// The word as written, for a reason.
    text: String,
    segments: Vec<Segment>,
    via: AccessVia,
    command: Option<usize>,
    write: bool,
    /// Where the word is expanded: a variable the line had not certainly set there comes from elsewhere.
    moment: Moment,
}

/// A path being built from the segments of a word.
#[derive(Debug, Clone, Default)]
struct Partial {
    path: String,
    /// An unquoted value in it holds blanks: bash splits it into words there.
    split: bool,
    /// It ends with `~` or `.` standing for a directory, which only `/` or the end may follow (`${PWD}x` is a
    /// sibling of the working directory, not a file in it).
    open: bool,
}

impl Partial {
    /// Appends text, or an anchor; `None` when the text would make an open anchor into another name.
    fn push(&mut self, text: &str, anchor: bool) -> Option<()> {
        if self.open && !text.is_empty() && !text.starts_with('/') {
            return None;
        }
        self.path.push_str(text);
        if anchor || !text.is_empty() {
            self.open = anchor;
        }
        Some(())
    }
}

/// A value the line gives a variable.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Value {
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
struct Facts {
    /// The literal values it assigns (a number an arithmetic assignment produces is kept as `0`).
    values: Vec<String>,
    /// The paths it assigns ([`Value::Path`]): files the variable names, text only known at run time.
    paths: Vec<String>,
    /// Some assignment gives a value only known at run time (`read x`, `x=$(cat f)`, `x+=…`).
    unknown: bool,
    /// Declared with `-i`: every value assigned to it is evaluated as arithmetic.
    integer: bool,
}

/// One entry of `Walker::known`.
#[derive(Debug)]
struct Held {
    kind: Known,
    name: String,
    span: usize,
}

/// A point of the walk in the shell it is in: which `known` entries held there.
#[derive(Debug, Clone, Copy)]
struct Moment {
    at: u64,
    floor: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    /// Certainly assigned by the line, so its value does not come from the environment.
    Assigned,
    /// Declared associative (`declare -A`): its subscripts are strings, not arithmetic.
    Associative,
}

/// A variable an arithmetic context evaluates.
#[derive(Debug)]
struct ArithRead {
    name: String,
    /// Where it was read.
    moment: Moment,
    context: String,
    ctx: Ctx,
    parent: Option<usize>,
}

/// A value assigned to a variable.
#[derive(Debug)]
struct AssignedValue {
    name: String,
    text: String,
    literal: bool,
    /// Where it was assigned.
    moment: Moment,
    ctx: Ctx,
    parent: Option<usize>,
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
    fn finding(&mut self, decision: Decision, reason: String, command: Option<usize>) {
        let finding = Finding {
            decision,
            reason,
            command,
        };
        if !self.out.findings.contains(&finding) {
            self.out.findings.push(finding);
        }
    }

    fn script(&mut self, script: &Script, ctx: Ctx) {
        let many = script.0.len() > 1 || script.0.iter().any(|l| l.pipelines.len() > 1);
        for list in &script.0 {
            self.and_or(list, ctx, many);
        }
    }

    fn and_or(&mut self, list: &AndOrList, ctx: Ctx, many: bool) {
        for (position, pipeline) in list.pipelines.iter().enumerate() {
            let piped = pipeline.0.len() > 1;
            let mut c = ctx;
            if matches!(
                ctx.kind,
                LocationKind::TopLevel
                    | LocationKind::List
                    | LocationKind::Pipeline
                    | LocationKind::Background
            ) {
                c.kind = if list.background {
                    LocationKind::Background
                } else if piped {
                    LocationKind::Pipeline
                } else if many {
                    LocationKind::List
                } else {
                    ctx.kind
                };
            }
            c.in_pipeline = ctx.in_pipeline || piped;
            c.background = ctx.background || list.background;
            // Only the first pipeline of a list certainly runs, and only its assignments outlive it; the parts of
            // a pipeline and a background list run in subshells.
            let scoped = piped || list.background || position > 0;
            let list_mark = self.known.len();
            let mut previous: Option<usize> = None;
            for command in &pipeline.0 {
                let first = self.out.commands.len();
                let mark = self.known.len();
                self.cmd(command, c);
                if piped {
                    self.forget(mark);
                }
                let this = matches!(command, Cmd::Simple(_))
                    .then_some(first)
                    .filter(|i| *i < self.out.commands.len());
                // `echo 'rm -rf /' | sh`: the shell runs what the command before it prints, when that is known.
                if let (Some(shell), Some(source)) = (this, previous)
                    && self.stdin_shells.contains(&shell)
                    && let Some(code) = self.printed.get(&source).cloned()
                {
                    let inner = Ctx {
                        parent: Some(shell),
                        in_pipeline: false,
                        background: false,
                        ..c
                    };
                    self.parse_and_walk(&code, LocationKind::ShellString, inner, "a shell reading a pipe");
                }
                previous = this;
            }
            if scoped {
                self.forget(list_mark);
            }
        }
    }

    fn cmd(&mut self, command: &Cmd, ctx: Ctx) {
        match command {
            Cmd::Simple(simple) => self.simple(simple, ctx),
            Cmd::Compound {
                construct,
                parts,
                redirects,
            } => {
                let kind = match construct {
                    Construct::Subshell => LocationKind::Subshell,
                    Construct::BraceGroup => LocationKind::BraceGroup,
                    Construct::If | Construct::Loop | Construct::For | Construct::Case => {
                        LocationKind::ControlFlow
                    }
                    Construct::Arithmetic => LocationKind::Arithmetic,
                    Construct::Test => LocationKind::ConditionalTest,
                    Construct::Coprocess => LocationKind::Coprocess,
                };
                let inner = ctx.nested(kind);
                let construct_mark = self.known.len();
                let mut bodies = 0;
                let mut ariths = 0;
                for part in parts {
                    match part {
                        Part::Body(script) => {
                            // The condition of `if`/`while` runs; the other bodies may not.
                            let mark = self.known.len();
                            self.script(script, inner);
                            let runs = match construct {
                                Construct::BraceGroup
                                | Construct::Subshell
                                | Construct::Coprocess
                                | Construct::Arithmetic
                                | Construct::Test => true,
                                Construct::If | Construct::Loop => bodies == 0,
                                Construct::For | Construct::Case => false,
                            };
                            if !runs {
                                self.forget(mark);
                            }
                            bodies += 1;
                        }
                        Part::Command(command) => self.cmd(command, inner),
                        Part::Word(raw) => {
                            let w = word::expand(raw);
                            self.word_code(
                                &w,
                                ctx,
                                None,
                                (*construct == Construct::Test).then_some(LocationKind::ConditionalTest),
                            );
                        }
                        Part::Loop { variable, words } => self.loop_variable(variable, words.as_deref(), ctx),
                        Part::Name(raw) => {
                            let w = word::expand(raw);
                            self.name_operand(&w, "`[[ -v … ]]`", ctx, None);
                        }
                        Part::Code(text) => self.parse_and_walk(text, kind, ctx, "( … )"),
                        Part::Arith(text) => {
                            let context = match construct {
                                Construct::For => "`for ((…))`",
                                Construct::Test => "an arithmetic comparison in `[[ … ]]`",
                                _ => "`((…))`",
                            };
                            let mark = self.known.len();
                            self.arithmetic(text, context, ctx, None);
                            // The third expression of `for ((…))` runs only after the body.
                            if *construct == Construct::For && ariths == 2 {
                                self.forget(mark);
                            }
                            ariths += 1;
                        }
                    }
                }
                if matches!(construct, Construct::Subshell | Construct::Coprocess) {
                    self.forget(construct_mark);
                }
                for r in redirects {
                    self.redirect(r, None, ctx);
                }
            }
            Cmd::Function { name, body } => {
                self.functions.push(name.clone());
                self.defined.push(name.clone());
                let inner = Ctx {
                    in_pipeline: false,
                    background: false,
                    ..ctx.nested(LocationKind::FunctionBody)
                };
                // The body runs when the function is called, if ever.
                let mark = self.known.len();
                self.cmd(body, inner);
                self.forget(mark);
                self.functions.pop();
            }
        }
    }

    fn simple(&mut self, simple: &Simple, ctx: Ctx) {
        let mut words: Vec<Word> = Vec::new();
        let mut substitutions: Vec<&Script> = Vec::new();
        for arg in &simple.words {
            match arg {
                Arg::Word(raw) => match parse::brace_expand(raw, BRACE_LIMIT) {
                    Braces::None => words.push(word::expand(raw)),
                    Braces::Words(expanded) => words.extend(expanded.iter().map(|w| word::expand(w))),
                    Braces::TooMany => {
                        // Words the analysis does not enumerate: none of their text is known.
                        let mut w = word::expand(raw);
                        w.literal = false;
                        w.anchor = Anchor::Dynamic;
                        w.segments = None;
                        words.push(w);
                    }
                },
                Arg::ProcSub(script) => {
                    let mut w = Word::literal(PROCESS_SUBSTITUTION);
                    w.literal = false;
                    w.anchor = Anchor::Dynamic;
                    w.segments = None;
                    words.push(w);
                    substitutions.push(script);
                }
            }
        }
        let assignments: Vec<(&parse::Assignment, Word)> = simple
            .assignments
            .iter()
            .map(|a| (a, word::expand(&a.value)))
            .collect();

        let index = if words.is_empty() {
            None
        } else {
            let classified = self.table.classify(&words);
            let index = self.out.commands.len();
            // The command word and every wrapper word before the effective command.
            let literal = words.iter().take(classified.inner + 1).all(|w| w.literal);
            self.out.commands.push(SubCommand {
                argv: words.iter().map(|w| w.text.clone()).collect(),
                inner: classified.inner,
                location: ctx.location(),
                class: classified.class,
                read_only: classified.read_only,
                literal,
                recursive: classified.recursive != Recursion::No,
                reads_hidden: classified.recursive == Recursion::All,
            });
            if let Some(name) = words.first().filter(|w| w.literal).map(|w| w.text.as_str())
                && self.functions.iter().any(|f| f == name)
                && (ctx.in_pipeline || ctx.background)
            {
                self.finding(
                    Decision::Deny,
                    format!(
                        "fork bomb: function `{name}` starts copies of itself in a pipeline or the background"
                    ),
                    Some(index),
                );
            }
            let stdin_code = classified.stdin_code;
            let effective: Vec<&Word> = words.iter().skip(classified.inner).collect();
            if let Some(text) = printed_text(&effective) {
                self.printed.insert(index, text);
            }
            let inner = classified.inner;
            self.record(classified, index, ctx);
            self.declarations(words.get(inner..).unwrap_or_default(), ctx, index);
            if stdin_code {
                self.stdin_shells.push(index);
                self.stdin_code(simple, index, ctx);
            }
            Some(index)
        };
        for (assignment, value) in &assignments {
            let name = &assignment.name;
            if classify::is_code_variable(name) {
                self.finding(
                    Decision::Ask,
                    format!("sets `{name}`, which changes what later commands run"),
                    index,
                );
            }
            if let Some(subscript) = &assignment.index {
                self.subscript(name, subscript, ctx, index);
            }
            self.word_code(value, ctx, index, None);
            if assignment.elements.is_none() {
                self.assigned_value(name, &value.text, value.literal, ctx, index);
            }
            // Before a command word an assignment sets the command's environment (and, in POSIX mode, the
            // shell's variable too when the command is a special builtin): a possible value, never a certain one.
            if !words.is_empty() {
                let known = match &assignment.elements {
                    Some(_) => Value::Unknown,
                    None if assignment.append => Value::Unknown,
                    None => self.assigned(value, index),
                };
                self.assign_element(name, known);
            } else {
                match &assignment.elements {
                    Some(elements) if !assignment.append => self.assign_array(name, elements.as_deref()),
                    Some(_) => self.assign(name, Value::Unknown),
                    None => {
                        let known = if assignment.append {
                            Value::Unknown
                        } else {
                            self.assigned(value, index)
                        };
                        if assignment.index.is_some() {
                            self.assign_element(name, known);
                        } else {
                            self.assign(name, known);
                        }
                    }
                }
            }
        }
        for w in &words {
            self.word_code(w, ctx, index, None);
        }
        for script in substitutions {
            let mark = self.known.len();
            self.script(
                script,
                Ctx {
                    parent: index,
                    ..ctx.nested(LocationKind::ProcessSubstitution)
                },
            );
            self.forget(mark);
        }
        for r in &simple.redirects {
            self.redirect(r, index, ctx);
        }
    }

    /// A shell reading its code from a here-document or here-string: that text is the code it runs.
    fn stdin_code(&mut self, simple: &Simple, index: usize, ctx: Ctx) {
        for r in &simple.redirects {
            let (RedirOp::HereDoc { .. } | RedirOp::HereString, Target::Word(raw)) = (r.op, &r.target) else {
                continue;
            };
            let text = match r.op {
                RedirOp::HereString => word::expand(raw).text,
                _ => raw.clone(),
            };
            let ctx = Ctx {
                parent: Some(index),
                in_pipeline: false,
                background: false,
                ..ctx
            };
            self.parse_and_walk(
                &text,
                LocationKind::HereDocument,
                ctx,
                "a shell reading a here-document",
            );
        }
    }

    /// Records what classification found about the command at `index`, then walks the code it runs.
    fn record(&mut self, classified: classify::Classified, index: usize, ctx: Ctx) {
        for (decision, reason) in classified.findings {
            self.finding(decision, reason, Some(index));
        }
        for (w, via) in &classified.reads {
            self.access(w, via, Some(index), false, ctx);
        }
        for (w, via) in &classified.writes {
            self.access(w, via, Some(index), true, ctx);
        }
        let nested = Ctx {
            parent: Some(index),
            in_pipeline: false,
            background: false,
            ..ctx
        };
        for (kind, argv) in classified.argv {
            self.nested_argv(&argv, kind, nested);
        }
        for code in classified.code {
            self.code(&code, nested);
        }
        for w in &classified.arithmetic {
            self.arithmetic(&w.text, "`let`", ctx, Some(index));
        }
    }

    /// A command given as words to another (`find -exec`).
    fn nested_argv(&mut self, argv: &[Word], kind: LocationKind, ctx: Ctx) {
        let ctx = ctx.nested(kind);
        // `{}` stands for each file found: a path only known at run time, never an option.
        let argv: Vec<Word> = argv
            .iter()
            .map(|w| {
                if w.literal && w.text.contains("{}") {
                    Word {
                        literal: false,
                        ..w.clone()
                    }
                } else {
                    w.clone()
                }
            })
            .collect();
        let argv = argv.as_slice();
        let classified = self.table.classify(argv);
        let index = self.out.commands.len();
        self.out.commands.push(SubCommand {
            argv: argv.iter().map(|w| w.text.clone()).collect(),
            inner: classified.inner,
            location: ctx.location(),
            class: classified.class,
            read_only: classified.read_only,
            literal: argv.iter().take(classified.inner + 1).all(|w| w.literal),
            recursive: classified.recursive != Recursion::No,
            reads_hidden: classified.recursive == Recursion::All,
        });
        self.record(classified, index, ctx);
    }

    /// Code given as a string: parsed and walked like the top level, one level deeper.
    fn code(&mut self, code: &Code, ctx: Ctx) {
        if !code.literal {
            self.finding(
                Decision::Ask,
                format!("`{}` runs code only known at run time: `{}`", code.via, code.text),
                ctx.parent,
            );
            return;
        }
        self.parse_and_walk(&code.text, code.kind, ctx, &code.via);
    }

    fn parse_and_walk(&mut self, text: &str, kind: LocationKind, ctx: Ctx, via: &str) {
        if ctx.code_depth >= MAX_DEPTH {
            self.finding(
                Decision::Ask,
                format!("code nested more than {MAX_DEPTH} levels deep"),
                ctx.parent,
            );
            return;
        }
        match parse_checked(text) {
            Ok(script) => {
                let mark = self.known.len();
                // `eval` runs in this shell; substitutions and subshells see its variables but keep their own;
                // any other code runs in a new shell, or later, and sees none of them.
                let floor = match kind {
                    LocationKind::Eval
                    | LocationKind::CommandSubstitution
                    | LocationKind::Backticks
                    | LocationKind::ProcessSubstitution
                    | LocationKind::Arithmetic
                    | LocationKind::Subshell => ctx.floor,
                    LocationKind::TopLevel
                    | LocationKind::Pipeline
                    | LocationKind::List
                    | LocationKind::Background
                    | LocationKind::BraceGroup
                    | LocationKind::ControlFlow
                    | LocationKind::ConditionalTest
                    | LocationKind::FunctionBody
                    | LocationKind::HereDocument
                    | LocationKind::ShellString
                    | LocationKind::Trap
                    | LocationKind::FindExec
                    | LocationKind::Coprocess => self.tick,
                };
                let inner = Ctx {
                    code_depth: ctx.code_depth + 1,
                    floor,
                    ..ctx.nested(kind)
                };
                self.script(&script, inner);
                if kind != LocationKind::Eval {
                    self.forget(mark);
                }
            }
            Err(error) => self.finding(
                Decision::Ask,
                format!("the code of `{via}` cannot be parsed: {error}"),
                ctx.parent,
            ),
        }
    }

    /// An arithmetic expression bash evaluates: the code in it runs, and every variable it names is evaluated.
    fn arithmetic(&mut self, text: &str, context: &str, ctx: Ctx, parent: Option<usize>) {
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
    fn arithmetic_operands(&mut self, arithmetic: &ArithText, ctx: Ctx, parent: Option<usize>, depth: usize) {
        let context = arith_context(&arithmetic.kind);
        self.operands_in(arithmetic, &context, ctx, parent, depth);
    }

    fn operands_in(
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
    fn output_operand(&mut self, body: &str, backticks: bool, context: &str, parent: Option<usize>) {
        if !self.numeric_output(body, backticks, parent) {
            let source = if backticks {
                format!("`{body}`")
            } else {
                format!("$({body})")
            };
            self.unknown_operand(&source, context, parent);
        }
    }

    fn unknown_operand(&mut self, source: &str, context: &str, parent: Option<usize>) {
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
    fn numeric_output(&mut self, body: &str, backticks: bool, parent: Option<usize>) -> bool {
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

    /// The value the assignment `NAME=WORD` gives: bash expands a `~` at the start of the value and after each
    /// `:` in it, which a literal does not show.
    fn assigned(&mut self, w: &Word, parent: Option<usize>) -> Value {
        if w.literal && w.text.contains(":~") {
            return Value::Unknown;
        }
        self.known_value(w, parent)
    }

    /// The value a word gives a variable, when the analysis knows it: a literal, a path from the home or working
    /// directory (or a glob pattern, which a `for` word expands), the number `$((…))` produces, or the output of a
    /// command that prints only a number.
    fn known_value(&mut self, w: &Word, parent: Option<usize>) -> Value {
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
        }
        Value::Unknown
    }

    /// The subscript of `array[…]=` or of a name operand.
    fn subscript(&mut self, array: &str, text: &str, ctx: Ctx, parent: Option<usize>) {
        if self.is_associative(array, ctx) {
            // Still expanded as a word, with its substitutions.
            let w = word::expand_heredoc(text);
            self.word_code(&w, ctx, parent, None);
            return;
        }
        self.arithmetic(text, &format!("the subscript of `{array}`"), ctx, parent);
    }

    /// The point the walk is at, in the shell running `ctx`.
    fn moment(&self, ctx: Ctx) -> Moment {
        Moment {
            at: self.tick,
            floor: ctx.floor,
        }
    }

    /// Whether the line had certainly assigned `name` at `moment`, in the shell running there.
    fn was_assigned(&self, name: &str, moment: Moment) -> bool {
        self.spans_of.get(name).is_some_and(|spans| {
            spans.iter().any(|span| {
                self.spans
                    .get(*span)
                    .is_some_and(|(from, to)| *from > moment.floor && *from <= moment.at && moment.at < *to)
            })
        })
    }

    fn is_associative(&self, array: &str, ctx: Ctx) -> bool {
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
    fn hold(&mut self, kind: Known, name: &str) {
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
    fn forget(&mut self, mark: usize) {
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
    fn assign(&mut self, name: &str, value: Value) {
        self.assign_element(name, value);
        self.hold(Known::Assigned, name);
    }

    /// The line gives one element of `name` a value: the other elements may still come from elsewhere.
    fn assign_element(&mut self, name: &str, value: Value) {
        let facts = self.vars.entry(name.to_owned()).or_default();
        match value {
            Value::Text(text) if !facts.values.contains(&text) => facts.values.push(text),
            Value::Path(path) if !facts.paths.contains(&path) => facts.paths.push(path),
            Value::Text(_) | Value::Path(_) => {}
            Value::Unknown => facts.unknown = true,
        }
    }

    /// Keeps a value given to `name`, to evaluate it at the end if `name` is an integer variable.
    fn assigned_value(&mut self, name: &str, text: &str, literal: bool, ctx: Ctx, parent: Option<usize>) {
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
    fn assign_array(&mut self, name: &str, elements: Option<&[String]>) {
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
    fn loop_variable(&mut self, variable: &str, words: Option<&[String]>, ctx: Ctx) {
        let mut values: Option<Vec<Value>> = Some(Vec::new());
        for raw in words.unwrap_or_default() {
            let expanded = match parse::brace_expand(raw, BRACE_LIMIT) {
                Braces::None => vec![word::expand(raw)],
                Braces::Words(words) => words.iter().map(|w| word::expand(w)).collect(),
                Braces::TooMany => {
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
    fn name_operand(&mut self, w: &Word, via: &str, ctx: Ctx, parent: Option<usize>) {
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
    fn declarations(&mut self, effective: &[Word], ctx: Ctx, index: usize) {
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
        } else if knowledge::SETS_NAMED_VARIABLES.contains(&name) {
            let names = name_operands(name, args);
            for w in &names {
                self.name_operand(w, &format!("`{name}`"), ctx, parent);
                if let Some(text) = static_text(w) {
                    let variable = text.split_once('[').map_or(text, |(n, _)| n);
                    if arith::is_name(variable) {
                        self.assign(variable, Value::Unknown);
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
    fn declare(&mut self, command: &str, args: &[Word], ctx: Ctx, index: usize) {
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

    /// Every path the values the line gives the variables of a file's word make is a path the file may have; a
    /// word with a variable whose value is only known at run time (or that the line may not have set there) names a
    /// file no path check can see, which is a safety ask.
    fn resolve_variable_paths(&mut self) {
        for unseen in std::mem::take(&mut self.variable_paths) {
            let Some(paths) = self.variable_path_values(&unseen) else {
                self.unseen_file(&unseen.text, unseen.write, unseen.command);
                continue;
            };
            for path in paths {
                self.device(&path, unseen.command, unseen.write);
                if unseen.write && matches!(device_write(&path), Some(DeviceWrite::Harmless)) {
                    continue;
                }
                let access = FileAccess {
                    path,
                    command: unseen.command,
                    via: unseen.via,
                    literal: false,
                };
                let list = if unseen.write {
                    &mut self.out.writes
                } else {
                    &mut self.out.reads
                };
                if !list.contains(&access) {
                    list.push(access);
                }
            }
        }
    }

    /// The paths a word of text and variables may expand to, or `None` when one of its variables is only known
    /// at run time or they combine into more than [`PATH_LIMIT`] paths.
    fn variable_path_values(&self, unseen: &VariablePath) -> Option<Vec<String>> {
        let mut paths = vec![Partial::default()];
        for segment in &unseen.segments {
            match segment {
                Segment::Text(text) => {
                    for partial in &mut paths {
                        partial.push(text, false)?;
                    }
                }
                Segment::Anchor(anchor) => {
                    for partial in &mut paths {
                        partial.push(anchor, true)?;
                    }
                }
                Segment::Variable { name, quoted } => {
                    let values = self.path_values(name, unseen.moment)?;
                    let mut next = Vec::new();
                    for partial in &paths {
                        for value in &values {
                            let mut longer = partial.clone();
                            match value {
                                // A `~` in a value is text: at the start of the path it names a file `~` here.
                                Value::Text(text) if partial.path.is_empty() && text.starts_with('~') => {
                                    longer.push(&format!("./{text}"), false)?;
                                }
                                Value::Text(text) => longer.push(text, false)?,
                                Value::Path(path) => longer.push(path, path == "~" || path == ".")?,
                                Value::Unknown => return None,
                            }
                            longer.split |= !quoted && longer.path.contains(char::is_whitespace);
                            next.push(longer);
                        }
                        if next.len() > PATH_LIMIT {
                            return None;
                        }
                    }
                    paths = next;
                }
            }
        }
        let mut out = Vec::new();
        for partial in paths {
            // Each word an unquoted value splits into may be a file (blanks of quoted text split too here: more
            // paths to check, never fewer).
            if partial.split {
                out.extend(partial.path.split_whitespace().map(str::to_owned));
            }
            out.push(partial.path);
        }
        out.retain(|p| !p.is_empty());
        out.dedup();
        Some(out)
    }

    /// Every value `name` may have at `moment`: the values the line gives it when it had certainly set it there;
    /// `$HOME` and `$PWD` are the home and working directories unless the line sets them. `None` when a value is
    /// only known at run time, or comes from the environment.
    fn path_values(&self, name: &str, moment: Moment) -> Option<Vec<Value>> {
        let facts = self.vars.get(name);
        let anchor = match name {
            "HOME" => Some("~"),
            "PWD" => Some("."),
            _ => None,
        };
        let mut values: Vec<Value> = Vec::new();
        if let Some(facts) = facts {
            if facts.unknown {
                return None;
            }
            values.extend(facts.values.iter().cloned().map(Value::Text));
            values.extend(facts.paths.iter().cloned().map(Value::Path));
        }
        match anchor {
            Some(anchor) => values.push(Value::Path(anchor.to_owned())),
            None if facts.is_none() || !self.was_assigned(name, moment) => return None,
            None => {}
        }
        Some(values)
    }

    /// A file a command reads or writes whose name is only known at run time.
    fn unseen_file(&mut self, text: &str, write: bool, command: Option<usize>) {
        let verb = if write { "writes" } else { "reads" };
        self.finding(
            Decision::Ask,
            format!("{verb} a file named only at run time (`{text}`), which the path check cannot see"),
            command,
        );
    }

    /// Judges what arithmetic evaluated, now that every value the line gives each variable is known.
    fn judge_arithmetic(&mut self) {
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
    fn judge(
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
    fn evaluate_value(
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

    fn value_operands(
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

    /// The code inside a word: `$(…)`, backticks, and words that re-expand as code.
    fn word_code(&mut self, w: &Word, ctx: Ctx, parent: Option<usize>, kind: Option<LocationKind>) {
        if w.reexpands {
            self.finding(
                Decision::Ask,
                format!(
                    "`{}` expands a value as code or escapes the analysis cannot see",
                    w.text
                ),
                parent,
            );
        }
        if let Some(error) = &w.error {
            self.finding(
                Decision::Ask,
                format!("the word `{}` cannot be parsed: {error}", w.text),
                parent,
            );
        }
        let ctx = Ctx {
            parent,
            in_pipeline: false,
            background: false,
            ..ctx
        };
        for Embedded { body, backticks } in &w.embedded {
            let location = kind.unwrap_or(if *backticks {
                LocationKind::Backticks
            } else {
                LocationKind::CommandSubstitution
            });
            let text = if *backticks {
                unescape_backticks(body)
            } else {
                body.clone()
            };
            let via = if *backticks { "`…`" } else { "$(…)" };
            self.parse_and_walk(&text, location, ctx, via);
        }
        for arithmetic in &w.arithmetic {
            self.arithmetic_operands(arithmetic, ctx, parent, 0);
        }
    }

    /// A device or a special file among the paths a command accesses: raw disks, network connections.
    fn device(&mut self, path: &str, command: Option<usize>, write: bool) {
        let Some(device) = device_write(path) else {
            return;
        };
        let (decision, reason) = match device {
            DeviceWrite::Harmless => return,
            DeviceWrite::Raw if !write => return,
            DeviceWrite::Raw => (Decision::Deny, format!("writes the raw device `{path}`")),
            DeviceWrite::Network if self.table.network_blocked => (
                Decision::Deny,
                format!("`{path}` opens a network connection, which is blocked (AGENT_BLOCK_NETWORK)"),
            ),
            DeviceWrite::Network => (Decision::Ask, format!("`{path}` opens a network connection")),
        };
        self.finding(decision, reason, command);
    }

    fn access(&mut self, w: &Word, via: &AccessVia, command: Option<usize>, write: bool, ctx: Ctx) {
        self.device(&w.text, command, write);
        // Writing `/dev/null` or a descriptor writes no file.
        if write && matches!(device_write(&w.text), Some(DeviceWrite::Harmless)) {
            return;
        }
        let plain = !w.reexpands && w.error.is_none() && w.embedded.is_empty();
        // Variables, `$HOME` and `$PWD` among them, are resolved with every value the line gives them once it is
        // all known (`PWD=/etc; cat $PWD/shadow` reads `/etc/shadow`).
        if let Some(segments) = w.segments.as_deref().filter(|_| plain)
            && segments.iter().any(|s| matches!(s, Segment::Variable { .. }))
        {
            let moment = self.moment(ctx);
            self.variable_paths.push(VariablePath {
                text: w.text.clone(),
                segments: segments.to_vec(),
                via: *via,
                command,
                write,
                moment,
            });
            return;
        }
        let Some(path) = w.path() else {
            match w.segments.as_deref() {
                None if !w.literal && w.text == PROCESS_SUBSTITUTION => {}
                // Text alone that is not a path: the `{}` of `find -exec`, a file `find` found under its starting
                // points, which are checked; climbing out of them with `..` is not.
                Some(segments)
                    if plain
                        && segments.iter().all(|s| matches!(s, Segment::Text(_)))
                        && w.text.contains("{}")
                        && !w.text.split('/').any(|c| c == "..") => {}
                Some(_) | None => self.unseen_file(&w.text, write, command),
            }
            return;
        };
        let access = FileAccess {
            path,
            command,
            via: *via,
            literal: w.literal,
        };
        let list = if write {
            &mut self.out.writes
        } else {
            &mut self.out.reads
        };
        if !list.contains(&access) {
            list.push(access);
        }
    }

    fn redirect(&mut self, r: &Redirect, command: Option<usize>, ctx: Ctx) {
        let target = match &r.target {
            Target::Fd => return,
            Target::ProcSub(script) => {
                let mark = self.known.len();
                self.script(
                    script,
                    Ctx {
                        parent: command,
                        ..ctx.nested(LocationKind::ProcessSubstitution)
                    },
                );
                self.forget(mark);
                return;
            }
            Target::Word(raw) => raw,
        };
        match r.op {
            RedirOp::HereDoc { expands } => {
                if expands {
                    let body = word::expand_heredoc(target);
                    self.word_code(&body, ctx, command, Some(LocationKind::HereDocument));
                }
            }
            RedirOp::HereString => {
                let w = word::expand(target);
                self.word_code(&w, ctx, command, None);
            }
            RedirOp::Read | RedirOp::Write | RedirOp::ReadWrite | RedirOp::Duplicate { .. } => {
                let w = word::expand(target);
                self.word_code(&w, ctx, command, None);
                if let RedirOp::Duplicate { output } = r.op {
                    let t = w.text.trim_end_matches('-');
                    if w.literal && (t.is_empty() || t.chars().all(|c| c.is_ascii_digit())) {
                        return;
                    }
                    if !output {
                        if !w.literal {
                            self.finding(
                                Decision::Ask,
                                format!("redirection from `{}` only known at run time", w.text),
                                command,
                            );
                        }
                        return;
                    }
                }
                let variables = w
                    .segments
                    .as_deref()
                    .is_some_and(|s| s.iter().any(|s| matches!(s, Segment::Variable { .. })));
                // A variable's value is neither split nor globbed in a redirection: it names one file.
                if !w.literal && ((w.path().is_none() && !variables) || w.glob) {
                    self.finding(
                        Decision::Ask,
                        format!("the redirection target `{}` is only known at run time", w.text),
                        command,
                    );
                    return;
                }
                let via = AccessVia::Redirect;
                if matches!(r.op, RedirOp::Read | RedirOp::ReadWrite) {
                    self.access(&w, &via, command, false, ctx);
                }
                if matches!(
                    r.op,
                    RedirOp::Write | RedirOp::ReadWrite | RedirOp::Duplicate { output: true }
                ) {
                    self.access(&w, &via, command, true, ctx);
                }
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

/// The operands of `read`, `unset`, `printf -v` and their kin that name variables.
pub(crate) fn name_operands(command: &str, args: &[Word]) -> Vec<Word> {
    // Options that take a value, and those whose value is a variable name (`read -a NAME`, `printf -v NAME`).
    let (value_letters, name_letters) = match command {
        "read" => ("dinNptu", "a"),
        "mapfile" | "readarray" => ("dnOsuCc", ""),
        "printf" => ("", "v"),
        _ => ("", ""),
    };
    let options = short_options(args, &format!("{value_letters}{name_letters}"));
    let mut names: Vec<Word> = options
        .values
        .into_iter()
        .filter(|(letter, _)| name_letters.contains(*letter))
        .filter_map(|(_, value)| value)
        .collect();
    match command {
        // `printf FORMAT ARGS…` names a variable only with `-v`.
        "printf" => {}
        // `getopts OPTSTRING NAME [ARGS…]`.
        "getopts" => names.extend(options.operands.into_iter().nth(1)),
        _ => names.extend(options.operands),
    }
    names
}

/// The arguments of a builtin read as getopt reads short options.
pub(crate) struct ShortOptions {
    /// Each option of `value_letters` with its value (attached, `-CCODE`, or the next word, `-tC CODE`).
    pub(crate) values: Vec<(char, Option<Word>)>,
    /// The operands: everything after `--` or from the first word that is not an option.
    pub(crate) operands: Vec<Word>,
}

/// Reads `args` as short options, `value_letters` being those that take a value (`mapfile -tC CODE`,
/// `printf -vNAME`, `read -a NAME`).
pub(crate) fn short_options(args: &[Word], value_letters: &str) -> ShortOptions {
    let mut values = Vec::new();
    let mut operands: Vec<Word> = Vec::new();
    let mut iter = args.iter();
    while let Some(w) = iter.next() {
        if w.literal && w.text == "--" {
            operands.extend(iter.by_ref().cloned());
            break;
        }
        let Some(flags) = w.text.strip_prefix('-').filter(|f| w.literal && !f.is_empty()) else {
            // The first operand ends the options.
            operands.push(w.clone());
            operands.extend(iter.by_ref().cloned());
            break;
        };
        let Some((at, letter)) = flags.char_indices().find(|(_, c)| value_letters.contains(*c)) else {
            continue;
        };
        let attached = flags.get(at + letter.len_utf8()..).unwrap_or_default();
        let value = if attached.is_empty() {
            iter.next().cloned()
        } else {
            Some(Word::literal(attached))
        };
        values.push((letter, value));
    }
    ShortOptions { values, operands }
}

/// What `echo WORD…` or `printf FORMAT` with only literal words prints (escape handling aside).
fn printed_text(argv: &[&Word]) -> Option<String> {
    let (name, args) = argv.split_first()?;
    if !name.literal || !args.iter().all(|a| a.literal) {
        return None;
    }
    let texts: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    match name.text.as_str() {
        "echo" => {
            let start = texts
                .iter()
                .take_while(|t| matches!(**t, "-n" | "-e" | "-E" | "-ne" | "-en"))
                .count();
            Some(texts.get(start..).unwrap_or_default().join(" "))
        }
        "printf" => texts.first().map(|format| format.replace("\\n", "\n")),
        _ => None,
    }
}

enum DeviceWrite {
    Harmless,
    Raw,
    Network,
}

fn device_write(path: &str) -> Option<DeviceWrite> {
    if knowledge::HARMLESS_TARGETS.contains(&path)
        || path.starts_with("/dev/fd/")
        || path.starts_with("/proc/self/fd/")
    {
        return Some(DeviceWrite::Harmless);
    }
    if path == "/proc/sysrq-trigger" {
        // Writing it crashes or reboots the machine.
        return Some(DeviceWrite::Raw);
    }
    let device = path.strip_prefix("/dev/")?;
    if device.starts_with("tcp/") || device.starts_with("udp/") {
        return Some(DeviceWrite::Network);
    }
    knowledge::RAW_DEVICES
        .iter()
        .any(|p| device.starts_with(p))
        .then_some(DeviceWrite::Raw)
}

/// Inside backticks, `\$`, `` \` `` and `\\` stand for the character itself.
fn unescape_backticks(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek().is_some_and(|n| matches!(n, '$' | '`' | '\\')) {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices() {
        assert!(matches!(device_write("/dev/null"), Some(DeviceWrite::Harmless)));
        assert!(matches!(device_write("/dev/sda"), Some(DeviceWrite::Raw)));
        assert!(matches!(device_write("/dev/nvme0n1"), Some(DeviceWrite::Raw)));
        assert!(matches!(
            device_write("/dev/tcp/1.2.3.4/80"),
            Some(DeviceWrite::Network)
        ));
        assert!(device_write("out.txt").is_none());
    }

    #[test]
    fn backtick_bodies_are_unescaped() {
        assert_eq!(unescape_backticks(r"echo \$HOME \`id\`"), "echo $HOME `id`");
    }
}
