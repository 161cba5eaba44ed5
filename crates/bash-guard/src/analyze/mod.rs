//! The walk over the syntax tree: every command that could run, its files, and the findings.
//!
//! `mod.rs` walks lists, pipelines, compound commands and functions; `nested.rs` the code in words and strings
//! (`bash -c`, `eval`, substitutions), one level deeper each; `vars.rs`
//! keeps what the line gives its variables and when it is certain; `arithmetic.rs` judges what arithmetic
//! evaluates; `files.rs` turns words into file accesses (redirections, variables naming files, devices).

mod arithmetic;
mod files;
mod nested;
mod shapes;
mod state;
mod vars;

use std::collections::HashMap;

use agent_tool_traits::{Access, Decision};

use crate::analysis::{
    AccessVia, CommandAnalysis, Concern, Effect, Finding, Location, LocationKind, SubCommand,
};
use crate::classify::{self, Code, Found, Input, Nested, Table};
use crate::knowledge::{self, Recursion};
use crate::parse::{self, AndOrList, Arg, Braces, Cmd, Construct, Part, RedirOp, Script, Simple, Target};
use crate::prescan;
use crate::word::{self, Anchor, Embedded, Word};

use arithmetic::ArithRead;
use files::VariablePath;
use shapes::{emptiness_tested, line_input, loop_turns, printed_text, printed_words, transformed_text};
use vars::{AssignedValue, Facts, Held, Value};

/// How deeply code inside code (`bash -c "$(eval …)"`) is followed; deeper is a safety ask.
pub(crate) const MAX_DEPTH: usize = 24;
/// How many words one brace expansion may produce before the analysis stops enumerating them.
const BRACE_LIMIT: usize = 256;
/// The word a process substitution stands as: a pipe to or from code that is analysed on its own.
const PROCESS_SUBSTITUTION: &str = "<(…)";

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
            caution: false,
            concern: Concern::Guarded,
            variables: Vec::new(),
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
        tested: Vec::new(),
        variable_paths: Vec::new(),
        keyword: false,
        allexport: false,
        unmodelled: None,
        pipe_input: None,
        pipe_text: None,
        pipe_fed: false,
        listed: HashMap::new(),
        printed_words: HashMap::new(),
        unbounded: HashMap::new(),
        turns: 1.0,
        waited: 0.0,
        redefines: ["()", "function", "alias", "enable"]
            .iter()
            .any(|word| source.contains(word)),
    };
    match parse_checked(source) {
        Ok(script) => walker.script(&script, Ctx::TOP),
        Err(error) => {
            walker.out.findings.push(Finding {
                decision: Decision::Ask,
                reason: format!("the command cannot be parsed: {error}"),
                command: None,
                caution: false,
                concern: Concern::Guarded,
                variables: Vec::new(),
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
    walker.judge_tested();
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
    /// Words whose value only reaches a test of its emptiness, with their command (`Walker::tested`).
    tested: Vec<(Word, Option<usize>)>,
    /// Files named by words of text and variables (`cat $f`, `cat "${dir}/x"`), resolved at the end with the values
    /// the line gives the variables, so that `f=.env; cat $f` meets the rules of `.env`.
    variable_paths: Vec<VariablePath>,
    /// `set -k` ran: `NAME=value` words anywhere in later commands set their environment.
    keyword: bool,
    /// `set -a` ran: later assignments are exported.
    allexport: bool,
    /// The first change to the shell's state the analysis does not follow: every later command is not read-only.
    unmodelled: Option<String>,
    /// What the command before in a pipeline gives the next one on its standard input, for `xargs`.
    pipe_input: Option<Input>,
    /// The text the command before in a pipeline prints, when the line says it (`echo TEXT |`), for a command that
    /// only transforms its standard input (`base64 -d`, `rev`).
    pipe_text: Option<String>,
    /// The command being walked is a part of a pipeline after the first: its standard input is fed by the line.
    pipe_fed: bool,
    /// Commands that print the names of files found under starting points (`find`, `git ls-files`).
    listed: HashMap<usize, Found>,
    /// The words literal `echo`/`printf` commands print, by command index.
    printed_words: HashMap<usize, Vec<Word>>,
    /// Commands that print without (practical) end, and why: fine when what reads their output stops.
    unbounded: HashMap<usize, String>,
    /// How many times the command being walked runs for each run of the line: the product of the turns of the
    /// `for` loops around it (infinite when a loop's turns are not known).
    turns: f64,
    /// The seconds the line waits in all so far (`sleep`), each wait times its turns.
    waited: f64,
    /// The line may give a command's name another meaning (a function, `alias`, `enable`): what `echo` or
    /// `printf` print, or `base64 -d` makes of it, is then not computed.
    redefines: bool,
}

impl Walker<'_> {
    /// Counts a command's wait (`sleep`, `command` its words) towards the line's: the waits of a line add up
    /// (`sleep 300; sleep 300`), and a wait inside a loop counts once per turn (`for i in {1..100}; do sleep 10;
    /// done`). Past ten minutes in all, or without end, the line asks, once.
    fn waits(&mut self, seconds: f64, command: &[&Word], index: usize) {
        if seconds <= 0.0 {
            return;
        }
        let over = |waited: f64| waited.is_nan() || waited > knowledge::MAX_SLEEP_SECONDS;
        let before = self.waited;
        self.waited += seconds * self.turns;
        if over(before) || !over(self.waited) {
            return;
        }
        let text = command
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let reason = if over(seconds) {
            format!(
                "`{text}` waits longer than a shell call may run (ten minutes), or as long as only the run knows"
            )
        } else {
            format!("with `{text}` the line waits longer than a shell call may run (ten minutes) in all")
        };
        self.contained(format!("{reason}; in a hook nothing stops it"), Some(index));
    }

    fn finding(&mut self, decision: Decision, reason: String, command: Option<usize>) {
        self.push_finding(Finding {
            decision,
            reason,
            command,
            caution: false,
            concern: Concern::Guarded,
            variables: Vec::new(),
        });
    }

    /// An ask for credentials of the environment shown: `variables` (none: every variable).
    fn shows_environment(&mut self, reason: String, variables: Vec<String>, command: Option<usize>) {
        self.push_finding(Finding {
            decision: Decision::Ask,
            reason,
            command,
            caution: false,
            concern: Concern::Environment,
            variables,
        });
    }

    /// An ask about what the kernel sandbox bounds: code or files only known at run time, time, processes.
    fn contained(&mut self, reason: String, command: Option<usize>) {
        self.push_finding(Finding {
            decision: Decision::Ask,
            reason,
            command,
            caution: false,
            concern: Concern::Contained,
            variables: Vec::new(),
        });
    }

    /// An ask of the analysis's own caution about the network, which a user's allow rule for the command lifts.
    fn caution(&mut self, reason: String, command: Option<usize>) {
        self.caution_about(reason, command, Concern::Network);
    }

    /// An ask of the analysis's own caution about `concern`.
    fn caution_about(&mut self, reason: String, command: Option<usize>, concern: Concern) {
        self.push_finding(Finding {
            decision: Decision::Ask,
            reason,
            command,
            caution: true,
            concern,
            variables: Vec::new(),
        });
    }

    fn push_finding(&mut self, finding: Finding) {
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
            let pipeline_start = self.out.commands.len();
            for (k, command) in pipeline.0.iter().enumerate() {
                let first = self.out.commands.len();
                let mark = self.known.len();
                // The first command of a construct's first pipeline reads what the construct is given
                // (`git ls-files | while read -r f`).
                self.pipe_input = match previous {
                    Some(source) => Some(self.output_of(source)),
                    None if k == 0 => self.pipe_input.take(),
                    None => None,
                };
                self.pipe_text = previous.and_then(|source| self.printed.get(&source).cloned());
                self.pipe_fed = k > 0;
                self.cmd(command, c);
                self.pipe_input = None;
                self.pipe_text = None;
                self.pipe_fed = false;
                if let Some(index) = matches!(command, Cmd::Simple(_))
                    .then_some(first)
                    .filter(|i| *i < self.out.commands.len())
                {
                    self.bounded_output(index, pipeline.0.get(k + 1));
                }
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
            if list.background {
                // A background job outlives the line, and in a hook nothing limits it.
                for command in self.out.commands.iter_mut().skip(pipeline_start) {
                    command.read_only = false;
                }
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
                if redirects.iter().any(|r| r.op.feeds_stdin()) {
                    self.pipe_input = Some(Input::Unknown);
                }
                let kind = match construct {
                    Construct::Subshell => LocationKind::Subshell,
                    Construct::BraceGroup => LocationKind::BraceGroup,
                    Construct::If | Construct::Loop | Construct::Until | Construct::For | Construct::Case => {
                        LocationKind::ControlFlow
                    }
                    Construct::Arithmetic => LocationKind::Arithmetic,
                    Construct::Test => LocationKind::ConditionalTest,
                    Construct::Coprocess => LocationKind::Coprocess,
                };
                let inner = ctx.nested(kind);
                self.unbounded_loop(*construct, parts, ctx);
                let outer_turns = self.turns;
                if *construct == Construct::For {
                    self.turns *= loop_turns(parts);
                }
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
                                Construct::If | Construct::Loop | Construct::Until => bodies == 0,
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
                        Part::Tested { word: raw, .. } => {
                            let w = word::expand(raw);
                            // `[[ … ]]` neither splits nor globs its operands: quotes are not needed.
                            if !self.tested(&w, None, false) {
                                self.credentials(&w, None);
                            }
                            self.expansions(&w, ctx, None, Some(LocationKind::ConditionalTest));
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
                self.turns = outer_turns;
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
        let pipe_fed = std::mem::take(&mut self.pipe_fed);
        let mut words: Vec<Word> = Vec::new();
        let mut substitutions: Vec<&Script> = Vec::new();
        for arg in &simple.words {
            match arg {
                Arg::Word(raw) => match parse::brace_expand(raw, BRACE_LIMIT) {
                    Braces::None => words.push(word::expand(raw)),
                    Braces::Words(expanded) => words.extend(expanded.iter().map(|w| word::expand(w))),
                    Braces::TooMany => {
                        self.generated_words(raw, ctx);
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
        // The elements of an array (`x=({1..9999}{1..9999})`) are brace-expanded like a command's words.
        for element in simple
            .assignments
            .iter()
            .filter_map(|a| a.elements.as_ref()?.as_ref())
            .flatten()
        {
            if matches!(parse::brace_expand(element, BRACE_LIMIT), Braces::TooMany) {
                self.generated_words(element, ctx);
            }
        }

        let stdin_fed = pipe_fed || simple.redirects.iter().any(|r| r.op.feeds_stdin());
        let input = self.input_of(simple);
        let index = if words.is_empty() {
            None
        } else {
            // A substitution that prints the names of files found under starting points (`$(git ls-files)`), or a
            // variable `read` gave one of those names, stands for files below them: `{}`, as `find -exec` has them.
            let mut classified = match self.listed_words(&words, ctx) {
                Some((judged, listed)) => {
                    let mut classified = self.table.classify(&judged, &input);
                    classified.found.get_or_insert(listed);
                    classified
                }
                None => self.table.classify(&words, &input),
            };
            let index = self.out.commands.len();
            // Outside the sandbox the command gets the environment as the line leaves it: only where nothing in
            // the line changed it out of the analysis's sight (a variable set for it, `export`, `set -a`), since a
            // variable may name code it loads (`LD_PRELOAD`) or another engine or cluster. It must be the line's
            // own command, at its top level, with a standard input the line does not feed.
            let confined = if classified.unconfinable {
                if !assignments.is_empty() {
                    Some("a variable is set for it".to_owned())
                } else if self.unmodelled.is_some() || self.allexport || self.keyword {
                    Some("the line changes the environment it runs in".to_owned())
                } else if ctx.depth > 0 {
                    Some("it is nested in another construct of the line".to_owned())
                } else if stdin_fed {
                    Some(
                        "its standard input is fed by the line (a pipe or a redirection), which the analysis \
                         cannot read"
                            .to_owned(),
                    )
                } else {
                    None
                }
            } else {
                classified.confined.clone()
            };
            for name in &classified.host_env {
                if !self.out.environment.contains(name) {
                    self.out.environment.push(name.clone());
                }
            }
            // The command word and every wrapper word before the effective command.
            let literal = words.iter().take(classified.inner + 1).all(|w| w.literal);
            self.out.commands.push(SubCommand {
                argv: words.iter().map(|w| w.text.clone()).collect(),
                inner: classified.inner,
                location: ctx.location(),
                class: classified.class,
                read_only: classified.read_only,
                effect: wrapped_effect(
                    &classified.effect,
                    words.get(..classified.inner).unwrap_or_default(),
                ),
                literal,
                recursive: classified.recursive != Recursion::No,
                reads_hidden: classified.recursive == Recursion::All,
                follows_links: classified.follows_links,
                names: classified.names.clone(),
                // git gets write access to the repository only in the environment the sandbox gives it: a
                // variable set for it by a wrapper (`env GIT_EXEC_PATH=… git commit`) or earlier in the line
                // (`export GIT_EDITOR=…; git commit -e`) may name a program it runs while `.git` is writable.
                git_writes: classified.git_writes
                    && self.unmodelled.is_none()
                    && !self.allexport
                    && !self.keyword
                    && words.iter().take(classified.inner).all(|w| {
                        w.literal && !w.text.contains('=') && w.text.rsplit('/').next() != Some("env")
                    }),
                unconfinable: classified.unconfinable && confined.is_none(),
                overwrites_ignored: classified.overwrites_ignored,
                git_dir_made: classified.git_dir_made.as_ref().map(|w| w.text.clone()),
                confined,
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
            let stdin_program = classified.stdin_program;
            let effective: Vec<&Word> = words.iter().skip(classified.inner).collect();
            // What it reads on its standard input: its own here-string, else what the pipe gives it.
            let piped = self.pipe_text.take();
            let program_text = stdin_program.and(piped.clone());
            let stdin_text = line_input(simple).or(piped);
            if let Some(text) = printed_text(&effective)
                .or_else(|| stdin_text.and_then(|input| transformed_text(&effective, &input)))
                .filter(|_| !self.redefines)
            {
                self.printed.insert(index, text);
            }
            if let Some(printed) = printed_words(&effective).filter(|_| !self.redefines) {
                self.printed_words.insert(index, printed);
            }
            self.list_output(index, &input, &classified, &words);
            let inner = classified.inner;
            let state = std::mem::take(&mut classified.state);
            if let Some(reason) = classified.unbounded.take() {
                self.unbounded.insert(index, reason);
            }
            self.waits(classified.waits, &effective, index);
            self.record(classified, index, ctx);
            self.after_command(index, &words, &state);
            self.declarations(words.get(inner..).unwrap_or_default(), &input, ctx, index);
            if stdin_code {
                self.stdin_shells.push(index);
                self.stdin_code(simple, index, ctx);
            }
            if let Some(language) = stdin_program {
                self.stdin_program(simple, program_text, language, index, ctx);
            }
            Some(index)
        };
        for (assignment, value) in &assignments {
            let name = &assignment.name;
            // Before a command it sets only the command's environment, where a harmless variable (`IFS= read`,
            // `GIT_PAGER=cat`) changes nothing it runs; alone it changes the shell, where only a harmless value does.
            let harmless = if words.is_empty() {
                classify::harmless_value(name, Some(value))
            } else {
                classify::harmless_variable(name, Some(value))
            };
            if classify::is_code_variable(name) && !harmless {
                self.contained(
                    format!("sets `{name}`, which changes what later commands run"),
                    index,
                );
            }
            // git's configuration given in the environment (`GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`,
            // `GIT_CONFIG_PARAMETERS`) may set how long git keeps unreachable commits (`gc.pruneExpire`), as
            // `git -c` may: what the command then throws away no snapshot holds.
            if !words.is_empty()
                && name.starts_with("GIT_CONFIG")
                && let Some(command) = index.and_then(|i| self.out.commands.get_mut(i))
                && !command.read_only
                && matches!(command.effect, Effect::Local | Effect::Discards(_))
            {
                command.effect = Effect::Destroys(format!(
                    "`{name}` gives git configuration that may shorten how long it keeps unreachable commits"
                ));
            }
            if let Some(subscript) = &assignment.index {
                self.subscript(name, subscript, ctx, index);
            }
            self.word_code(value, ctx, index, None);
            self.environment(name, value, index);
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
        let tested = emptiness_tested(&words);
        for (k, w) in words.iter().enumerate() {
            if !(tested.contains(&k) && self.tested(w, index, true)) {
                self.credentials(w, index);
            }
            self.expansions(w, ctx, index, None);
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

    /// Records what classification found about the command at `index`, then walks the code it runs.
    fn record(&mut self, mut classified: classify::Classified, index: usize, ctx: Ctx) {
        for (decision, reason, concern) in std::mem::take(&mut classified.findings) {
            self.push_finding(Finding {
                decision,
                reason,
                command: Some(index),
                caution: false,
                concern,
                variables: Vec::new(),
            });
        }
        for reason in std::mem::take(&mut classified.cautions) {
            self.caution(reason, Some(index));
        }
        for (reason, variables) in std::mem::take(&mut classified.shows) {
            self.shows_environment(reason, variables, Some(index));
        }
        let directory = classified.directory.clone();
        if let Some(dir) = &directory {
            // Entering the directory reads it.
            self.access(dir, &AccessVia::Flag, Some(index), Access::Read, ctx);
        }
        for (list, access) in [
            (&classified.reads, Access::Read),
            (&classified.writes, Access::Write),
        ] {
            for (w, via) in list {
                match &directory {
                    None => self.access(w, via, Some(index), access, ctx),
                    Some(dir) => {
                        let placed = word::under(Some(dir), w);
                        self.access(&placed, via, Some(index), access, ctx);
                    }
                }
            }
        }
        for (file, above) in &classified.loads {
            self.load(directory.as_ref(), file, *above, index);
        }
        if let Some(found) = &classified.found {
            self.found_files(found, &classified, index, ctx);
        }
        let nested = Ctx {
            parent: Some(index),
            in_pipeline: false,
            background: false,
            ..ctx
        };
        for Nested { kind, argv, found } in classified.argv {
            self.nested_argv(&argv, kind, found.as_ref(), nested);
        }
        for code in classified.code {
            self.code(&code, nested);
        }
        for w in &classified.arithmetic {
            self.arithmetic(&w.text, "`let`", ctx, Some(index));
        }
    }

    /// What the command at `index` prints is the names of files found below starting points when it lists them
    /// (`git ls-files`), or prints some of the names a walk gave it, whole: `grep -v test` selecting lines of
    /// them, `xargs grep -l X` naming those that match.
    fn list_output(
        &mut self,
        index: usize,
        input: &Input,
        classified: &classify::Classified,
        words: &[Word],
    ) {
        let effective: Vec<&Word> = words.iter().skip(classified.inner).collect();
        let narrows = match input {
            // A line selector reads its standard input only when nothing runs it with the input as words
            // (`xargs grep X` prints the lines of the files named, not names).
            Input::Found(_) if classified.read_only && classified.inner == 0 => {
                state::selects_lines(self.table, &effective)
            }
            Input::Found(_) if classified.read_only => {
                state::xargs_prints_names(self.table, words, classified.inner).then_some(true)
            }
            _ => None,
        };
        match (input, narrows) {
            (Input::Found(found), Some(narrows)) => {
                let mut found = found.clone();
                found.filtered |= narrows;
                self.listed.insert(index, found);
            }
            _ => {
                if let Some(found) = classified.lists.clone() {
                    self.listed.insert(index, found);
                }
            }
        }
    }

    /// A command given as words to another (`find -exec`), with what `{}` stands for.
    fn nested_argv(&mut self, argv: &[Word], kind: LocationKind, found: Option<&Found>, ctx: Ctx) {
        let ctx = ctx.nested(kind);
        // `{}` stands for each file found: a path only known at run time, never an option. When nothing narrows
        // what is found, everything below the starting points is, and they themselves: `find / -exec rm -rf {} +`
        // removes `/`.
        let mut words: Vec<Word> = Vec::new();
        for w in argv {
            match found {
                Some(found) if w.literal && w.text == "{}" && !found.filtered => {
                    words.extend(found.starts.iter().cloned());
                }
                _ if w.literal && w.text.contains("{}") => words.push(Word {
                    literal: false,
                    ..w.clone()
                }),
                _ => words.push(w.clone()),
            }
        }
        let argv = words.as_slice();
        let mut classified = self.table.classify(argv, &Input::Unknown);
        if classified.found.is_none() {
            classified.found = found.cloned();
        }
        // A removal run on every file found under its starting points removes those trees, whatever its own
        // options say (`find . -exec rm {} +`).
        if found.is_some() && classified.class == crate::analysis::CommandClass::Write {
            let name = argv
                .get(classified.inner)
                .map(|w| w.text.rsplit('/').next().unwrap_or_default());
            if matches!(name, Some("rm" | "unlink" | "shred")) {
                classified.effect = crate::analysis::Effect::RemovesTrees;
            }
        }
        let index = self.out.commands.len();
        self.out.commands.push(SubCommand {
            argv: argv.iter().map(|w| w.text.clone()).collect(),
            inner: classified.inner,
            location: ctx.location(),
            class: classified.class,
            read_only: classified.read_only,
            effect: classified.effect.clone(),
            literal: argv.iter().take(classified.inner + 1).all(|w| w.literal),
            recursive: classified.recursive != Recursion::No,
            reads_hidden: classified.recursive == Recursion::All,
            follows_links: classified.follows_links,
            names: classified.names.clone(),
            git_writes: classified.git_writes,
            // Run on names found at run time (`find -exec`): it stays in the sandbox.
            unconfinable: false,
            overwrites_ignored: classified.overwrites_ignored,
            git_dir_made: classified.git_dir_made.as_ref().map(|w| w.text.clone()),
            confined: classified.confined.clone().or_else(|| {
                classified
                    .unconfinable
                    .then(|| "it is run by `find -exec` on names found at run time".to_owned())
            }),
        });
        self.record(classified, index, ctx);
    }
}

/// The effect of a command under its wrapper words: git discarding files in a working tree a wrapper's variable
/// gives it (`env GIT_WORK_TREE=uploads git clean -fd`, or a variable only known at run time) destroys what the
/// project's snapshots do not follow, as with the variable set before the command.
fn wrapped_effect(effect: &crate::analysis::Effect, wrappers: &[Word]) -> crate::analysis::Effect {
    let given = wrappers
        .iter()
        .any(|w| !w.literal || w.text.starts_with("GIT_WORK_TREE=") || w.text.starts_with("GIT_DIR="));
    if given {
        effect.clone().in_working_tree("a variable gives git")
    } else {
        effect.clone()
    }
}
