//! What the line does to the shell and to later commands: options that change how words are read (`set -k`),
//! variables given to commands or exported, what a pipeline hands the next command (for `xargs`), output and
//! loops without end, and credentials expanded from the environment.

use agent_tool_traits::Decision;

use crate::classify::Table;
use crate::classify::{Found, Input, State, assignment_name, is_code_variable};
use crate::classify::{environment_family, harmless_variable, is_credential};
use crate::knowledge::{self, Kind};
use crate::options;
use crate::parse::{self, Arg, Cmd, Construct, Part, RedirOp, Script, Simple, Target};
use crate::word::{self, Segment, Word};

use super::{Ctx, Walker, parse_checked};

impl Walker<'_> {
    /// The variable `name=value` a simple command sets: before a command word, in its environment (harmless ones
    /// keep it read-only, any other does not); alone, in the shell, where `set -a` exports it and a variable the
    /// environment may already export reaches every later command.
    pub(super) fn environment(&mut self, name: &str, value: &Word, index: Option<usize>) {
        match index {
            Some(index) => {
                if !harmless_variable(name, Some(value))
                    && let Some(command) = self.out.commands.get_mut(index)
                {
                    command.read_only = false;
                    // `GIT_EDITOR=… git commit -e`, `GIT_EXEC_PATH=… git …`: what git runs is no longer git alone.
                    command.git_writes = false;
                    // `GIT_WORK_TREE=uploads git clean -fd`: what git discards follows another tree's ignore rules.
                    if matches!(name, "GIT_WORK_TREE" | "GIT_DIR") {
                        command.effect =
                            std::mem::replace(&mut command.effect, crate::analysis::Effect::Local)
                                .in_working_tree(&format!("`{name}` gives git"));
                    }
                }
            }
            None if self.allexport && !harmless_variable(name, Some(value)) => {
                self.unmodelled.get_or_insert(format!(
                    "`{name}=…` under `set -a` exports a variable not known to be harmless to later commands"
                ));
            }
            None if environment_family(name) => {
                self.unmodelled.get_or_insert(format!(
                    "`{name}=…` changes a variable the environment may export, which may change what later commands run"
                ));
            }
            None => {}
        }
    }

    /// After the command at `index` is recorded: what earlier state changes make of it, then its own changes.
    pub(super) fn after_command(&mut self, index: usize, words: &[Word], state: &[State]) {
        let keyword_words: Vec<String> = if self.keyword {
            words
                .iter()
                .skip(1)
                .filter(|w| w.literal)
                .filter_map(|w| assignment_name(&w.text).map(str::to_owned))
                .collect()
        } else {
            Vec::new()
        };
        for name in &keyword_words {
            if is_code_variable(name) {
                self.finding(
                    Decision::Ask,
                    format!("under `set -k`, `{name}=…` sets the command's environment, which changes what it runs"),
                    Some(index),
                );
            }
        }
        if let Some(command) = self.out.commands.get_mut(index)
            && (self.unmodelled.is_some() || !keyword_words.is_empty())
        {
            command.read_only = false;
        }
        for change in state {
            match change {
                State::Keyword => self.keyword = true,
                State::AllExport => self.allexport = true,
                State::Unmodelled(reason) => {
                    self.unmodelled.get_or_insert_with(|| reason.clone());
                }
            }
        }
    }

    /// What the command at `source` prints, as the words of the next command's input.
    pub(super) fn output_of(&self, source: usize) -> Input {
        if let Some(found) = self.listed.get(&source) {
            return Input::Found(found.clone());
        }
        match self.printed_words.get(&source) {
            Some(words) => Input::Words(split_blanks(words)),
            None => Input::Unknown,
        }
    }

    /// What a simple command reads on its standard input: a here-string or here-document of its own, else what
    /// the pipeline gives it.
    pub(super) fn input_of(&mut self, simple: &Simple) -> Input {
        let piped = self.pipe_input.take().unwrap_or_default();
        let mut input = piped;
        for r in &simple.redirects {
            match (r.op, &r.target) {
                (RedirOp::HereString, Target::Word(raw)) => {
                    input = Input::Words(split_blanks(&[word::expand(raw)]));
                }
                (RedirOp::HereDoc { expands }, Target::Word(body)) => {
                    let text = word::expand_heredoc(body);
                    input = if expands && !text.literal {
                        Input::Unknown
                    } else {
                        Input::Words(body.split_whitespace().map(Word::literal).collect())
                    };
                }
                (RedirOp::Read | RedirOp::ReadWrite, _) => input = Input::Unknown,
                _ => {}
            }
        }
        input
    }

    /// The command at `index` prints without end: fine when the next command of its pipeline is `head`, which
    /// stops reading (and so stops it); else the line asks.
    pub(super) fn bounded_output(&mut self, index: usize, next: Option<&Cmd>) {
        if self.unbounded.is_empty() {
            return;
        }
        let Some(reason) = self.unbounded.remove(&index) else {
            return;
        };
        let head = matches!(next, Some(Cmd::Simple(simple)) if simple.words.first().is_some_and(|arg| {
            matches!(arg, Arg::Word(raw) if word::expand(raw).text == "head")
        }));
        if !head {
            self.contained(format!("{reason}; in a hook nothing stops it"), Some(index));
        }
    }

    /// `while true`, `until false`, `while sleep 1`, `for ((;;))`: a loop whose condition never ends it.
    pub(super) fn unbounded_loop(&mut self, construct: Construct, parts: &[Part], ctx: Ctx) {
        let endless = match (construct, parts.first()) {
            (Construct::Loop | Construct::Until, Some(Part::Body(condition))) => {
                always(condition, construct == Construct::Until)
            }
            (Construct::For, Some(Part::Arith(_))) => match parts.get(1) {
                Some(Part::Arith(condition)) => {
                    let condition = condition.trim();
                    condition.is_empty() || condition.parse::<i64>().is_ok_and(|n| n != 0)
                }
                _ => false,
            },
            _ => false,
        };
        if endless {
            self.contained(
                "a loop whose condition never ends it runs until it is killed; in a hook nothing stops it"
                    .to_owned(),
                ctx.parent,
            );
        }
    }

    /// A brace expansion past the bound: bash builds every word in memory before the command runs.
    pub(super) fn generated_words(&mut self, raw: &str, ctx: Ctx) {
        let count = parse::brace_count(raw);
        if count.is_none_or(|n| n > knowledge::MAX_GENERATED_WORDS) {
            self.finding(
                Decision::Ask,
                format!(
                    "`{raw}` expands to more than {} words, which bash builds in memory first",
                    knowledge::MAX_GENERATED_WORDS
                ),
                ctx.parent,
            );
        }
    }

    /// Words that are a whole substitution of a command printing file names under starting points
    /// (`$(git ls-files)`, `` `find . -name '*.md'` ``), or a variable `read` gave one of those names (`"$f"` in
    /// `git ls-files | while read -r f`): judged as `{}`, files found below those places. `None` when no word is
    /// one (the words are judged as they are).
    pub(super) fn listed_words(&self, words: &[Word], ctx: Ctx) -> Option<(Vec<Word>, Found)> {
        let mut found: Option<Found> = None;
        let mut judged: Option<Vec<Word>> = None;
        let moment = self.moment(ctx);
        for (k, w) in words.iter().enumerate().skip(1) {
            let more = match w.embedded.as_slice() {
                [] => self.found_variable(w, moment),
                [embedded] => {
                    let whole = w.text.len() == embedded.body.len() + 3
                        && (w.text == format!("$({})", embedded.body)
                            || w.text == format!("`{}`", embedded.body));
                    whole.then(|| self.lister(&embedded.body)).flatten()
                }
                _ => None,
            };
            let Some(more) = more else {
                continue;
            };
            found = Some(match found.take() {
                Some(mut all) => {
                    all.merge(more);
                    all
                }
                None => more,
            });
            let mut placeholder = Word::literal("{}");
            placeholder.literal = false;
            if let Some(slot) = judged.get_or_insert_with(|| words.to_vec()).get_mut(k) {
                *slot = placeholder;
            }
        }
        Some((judged?, found?))
    }

    /// Whether `body` is a command that prints file names under starting points, possibly narrowed by
    /// read-only filters after it (`git ls-files | grep '\.rs$'`).
    fn lister(&self, body: &str) -> Option<Found> {
        let script: Script = parse_checked(body).ok()?;
        let [list] = script.0.as_slice() else { return None };
        let ([pipeline], false) = (list.pipelines.as_slice(), list.background) else {
            return None;
        };
        let (first, filters) = pipeline.0.split_first()?;
        let Cmd::Simple(simple) = first else { return None };
        if !simple.assignments.is_empty() {
            return None;
        }
        let words: Option<Vec<Word>> = simple
            .words
            .iter()
            .map(|arg| match arg {
                Arg::Word(raw) => Some(word::expand(raw)),
                Arg::ProcSub(_) => None,
            })
            .collect();
        let classified = self.table.classify(&words?, &Input::Unknown);
        let mut found = classified.lists?;
        for filter in filters {
            let Cmd::Simple(simple) = filter else { return None };
            let words: Option<Vec<Word>> = simple
                .words
                .iter()
                .map(|arg| match arg {
                    Arg::Word(raw) => Some(word::expand(raw)),
                    Arg::ProcSub(_) => None,
                })
                .collect();
            let classified = self.table.classify(&words?, &Input::Unknown);
            if !classified.read_only || !classified.findings.is_empty() || !classified.shows.is_empty() {
                return None;
            }
            found.filtered = true;
        }
        Some(found)
    }

    /// A word whose value only reaches a test of its emptiness (`[ -n "$KEY" ]`, `[[ -z $KEY ]]`): its credential
    /// variables show no more than whether they are set, unless the line makes `test` or `[` something else (a
    /// function, an alias, a builtin turned off), which is only known once the whole line has been seen.
    pub(super) fn tested(&mut self, w: &Word, parent: Option<usize>, quoted: bool) -> bool {
        if !only_variables(w, quoted) {
            return false;
        }
        self.tested.push((w.clone(), parent));
        true
    }

    /// The words of [`Self::tested`], judged as any other word when the line may redefine what tests them or make
    /// the shell print them: a function or alias named `test` or `[`, a builtin turned off, or `set -x` (and its
    /// kin: `set -o xtrace`, a shell started with `-x` or with `SHELLOPTS`), which prints every command expanded.
    pub(super) fn judge_tested(&mut self) {
        let redefined = self
            .defined
            .iter()
            .any(|name| matches!(name.as_str(), "test" | "["))
            || self.out.commands.iter().any(|command| {
                command.effective().first().is_some_and(|name| {
                    let name = name.rsplit('/').next().unwrap_or(name);
                    matches!(
                        name,
                        "alias"
                            | "enable"
                            | "shopt"
                            | "set"
                            | "bash"
                            | "sh"
                            | "zsh"
                            | "dash"
                            | "ksh"
                            | "mksh"
                            | "yash"
                            | "ash"
                            | "rbash"
                            | "busybox"
                    )
                })
            });
        for (w, parent) in std::mem::take(&mut self.tested) {
            if redefined {
                self.credentials(&w, parent);
            }
        }
    }

    /// Expanding a variable whose name says it holds a credential, which the line did not set, shows it. Every
    /// variable of the environment a word expands is listed ([`crate::CommandAnalysis::environment`]).
    pub(super) fn credentials(&mut self, w: &Word, parent: Option<usize>) {
        for name in &w.variables {
            if !self.vars.contains_key(name) && !self.out.environment.contains(name) {
                self.out.environment.push(name.clone());
            }
            if is_credential(name) && !self.vars.contains_key(name) {
                self.shows_environment(
                    format!("expands `${name}`, which may hold a credential from the environment"),
                    vec![name.clone()],
                    parent,
                );
            }
        }
    }
}

/// Whether `w` is made only of text and plain variables (`"$KEY"`, `"${KEY}x"`), inside double quotes where
/// `quoted` says it must be (`[` splits and globs an unquoted value, which can change what the test does): no
/// operator of an expansion that could print or evaluate the value (`${KEY:?}`, `${KEY:$((…))}`).
fn only_variables(w: &Word, quoted: bool) -> bool {
    !w.reexpands
        && w.arithmetic.is_empty()
        && w.error.is_none()
        && w.segments.as_ref().is_some_and(|segments| {
            segments.iter().all(|segment| match segment {
                Segment::Text(_) => true,
                Segment::Variable { quoted: inside, .. } => *inside || !quoted,
                Segment::Anchor(_) => false,
            })
        })
}

/// The words `xargs` reads from literal words: split at blanks.
fn split_blanks(words: &[Word]) -> Vec<Word> {
    let mut out = Vec::new();
    for w in words {
        if w.literal {
            out.extend(w.text.split_whitespace().map(Word::literal));
        } else {
            out.push(w.clone());
        }
    }
    out
}

/// Whether a loop's condition never ends it: for `while`, it always succeeds (`true`, `pwd`, `[ a = a ]`,
/// `[[ 1 ]]`, `let 1`, `! false`); for `until`, it always fails (`false`, `[ ]`, `! pwd`). Only a condition whose outcome is fixed by
/// its literal words counts; one that reads input, the file system or a variable may end the loop.
fn always(condition: &Script, until: bool) -> bool {
    let [list] = condition.0.as_slice() else {
        return false;
    };
    let [pipeline] = list.pipelines.as_slice() else {
        return false;
    };
    let [command] = pipeline.0.as_slice() else {
        return false;
    };
    // `while ! false`, `until ! pwd`: a negated pipeline's outcome is the other one.
    fixed_outcome(command).map(|succeeds| succeeds != pipeline.1) == Some(!until)
}

/// Commands that succeed whatever their literal arguments and whatever the state of the machine.
const ALWAYS_SUCCEED: &[&str] = &[
    "true", ":", "sleep", "pwd", "echo", "printf", "id", "whoami", "uname", "nproc", "date", "hostname",
];

/// The exit status of `command` when its literal words fix it: `Some(true)` when it always succeeds,
/// `Some(false)` when it always fails, `None` when it depends on anything else.
fn fixed_outcome(command: &Cmd) -> Option<bool> {
    match command {
        Cmd::Simple(simple) => {
            let words: Vec<Word> = simple
                .words
                .iter()
                .map(|arg| match arg {
                    Arg::Word(raw) => Some(word::expand(raw)),
                    Arg::ProcSub(_) => None,
                })
                .collect::<Option<_>>()?;
            // A redirection can fail (a missing directory), except writing to `/dev/null` or duplicating a
            // descriptor (`>/dev/null 2>&1`).
            let harmless = |r: &parse::Redirect| match &r.target {
                Target::Fd => true,
                Target::Word(raw) => {
                    let target = word::expand(raw);
                    match r.op {
                        RedirOp::Write => target.text == "/dev/null",
                        RedirOp::Duplicate { .. } => {
                            target.literal && (target.text == "-" || target.text.parse::<u8>().is_ok())
                        }
                        _ => false,
                    }
                }
                Target::ProcSub(_) => false,
            };
            if !words.iter().all(|w| w.literal) || !simple.redirects.iter().all(harmless) {
                return None;
            }
            let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
            match texts.as_slice() {
                ["false"] => Some(false),
                // Listing the working directory succeeds; naming a file could fail.
                ["ls"] => Some(true),
                [name, ..] if ALWAYS_SUCCEED.contains(name) => Some(true),
                ["[", test @ .., "]"] | ["test", test @ ..] => literal_test(test),
                ["let", expressions @ ..] => expressions
                    .last()
                    .and_then(|e| e.trim().parse::<i64>().ok())
                    .map(|n| n != 0),
                _ => None,
            }
        }
        Cmd::Compound {
            construct: Construct::Arithmetic,
            parts,
            ..
        } => match parts.as_slice() {
            [Part::Arith(expr)] => expr.trim().parse::<i64>().ok().map(|n| n != 0),
            _ => None,
        },
        Cmd::Compound {
            construct: Construct::Test,
            parts,
            ..
        } => {
            // `[[ -n WORD ]]` and `[[ -z WORD ]]` alone; the operands of other tests, without their operator.
            if let [Part::Tested { word: raw, empty }] = parts.as_slice() {
                let w = word::expand(raw);
                return w.literal.then_some(w.text.is_empty() == *empty);
            }
            let words: Vec<Word> = parts
                .iter()
                .map(|part| match part {
                    Part::Word(raw) => Some(word::expand(raw)),
                    _ => None,
                })
                .collect::<Option<_>>()?;
            if !words.iter().all(|w| w.literal) {
                return None;
            }
            let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
            literal_test(&texts)
        }
        Cmd::Compound { .. } | Cmd::Function { .. } => None,
    }
}

/// The result of `test` with these literal arguments when it does not look at files: a string's emptiness, two
/// strings or two integers compared, `!` before any of them.
fn literal_test(args: &[&str]) -> Option<bool> {
    match args {
        [] => Some(false),
        ["!", rest @ ..] if !rest.is_empty() => literal_test(rest).map(|result| !result),
        [one] => Some(!one.is_empty()),
        ["-n", s] => Some(!s.is_empty()),
        ["-z", s] => Some(s.is_empty()),
        [a, "=" | "==", b] => Some(a == b),
        [a, "!=", b] => Some(a != b),
        [a, op, b] => {
            let (a, b) = (a.trim().parse::<i64>().ok()?, b.trim().parse::<i64>().ok()?);
            match *op {
                "-eq" => Some(a == b),
                "-ne" => Some(a != b),
                "-lt" => Some(a < b),
                "-le" => Some(a <= b),
                "-gt" => Some(a > b),
                "-ge" => Some(a >= b),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether a command prints only whole lines of its standard input ([`knowledge::LINE_SELECTORS`], with their
/// options alone and no file operand), and whether it may leave some out; `None` when it prints anything else.
pub(super) fn selects_lines(table: &Table, effective: &[&Word]) -> Option<bool> {
    let (command, _) = effective.split_first()?;
    let selector = knowledge::LINE_SELECTORS
        .iter()
        .find(|s| command.literal && s.names.contains(&command.text.as_str()))?;
    prints_only(table, selector, effective, &[]).map(|()| selector.narrows)
}

/// Whether `xargs CMD` fed the names a walk found prints only names of them: CMD is one of
/// [`knowledge::NAME_PRINTERS`] with `-l` or `-L` (`xargs grep -l X`), given no file of its own.
pub(super) fn xargs_prints_names(table: &Table, words: &[Word], inner: usize) -> bool {
    let (Some(xargs), Some(command)) = (words.first(), words.get(inner..)) else {
        return false;
    };
    let from_input = words
        .get(1..inner)
        .unwrap_or_default()
        .iter()
        .all(|w| w.literal && !w.text.starts_with("-a") && !w.text.starts_with("--arg-file"));
    let command: Vec<&Word> = command.iter().collect();
    let printer = &knowledge::NAME_PRINTERS;
    xargs.literal
        && xargs.text == "xargs"
        && from_input
        && command
            .first()
            .is_some_and(|c| c.literal && printer.names.contains(&c.text.as_str()))
        && prints_only(table, printer, &command, knowledge::NAMES_ONLY).is_some()
}

/// Whether `effective`'s options, as its own syntax reads them, are all of `selector` (one of `required` among
/// them, when some are) and its operands none beyond its pattern.
fn prints_only(
    table: &Table,
    selector: &knowledge::LineSelector,
    effective: &[&Word],
    required: &[&str],
) -> Option<()> {
    let (command, args) = effective.split_first()?;
    let Some(Kind::ReadOnly(flags)) = table.named(&command.text) else {
        return None;
    };
    let args: Vec<Word> = args.iter().map(|w| (*w).clone()).collect();
    if !args.iter().all(|w| w.literal) {
        return None;
    }
    let parsed = options::read(&args, &flags.syntax());
    // `head -5`: a count.
    let count = |name: &str| {
        selector.counts
            && name
                .strip_prefix('-')
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
    };
    let known = parsed
        .options
        .iter()
        .all(|o| o.is_any(selector.options) || count(&o.name));
    let given = required.is_empty() || parsed.options.iter().any(|o| o.is_any(required));
    let pattern_given = parsed.options.iter().any(|o| o.is_any(&["-e", "--regexp"]));
    let pattern = usize::from(selector.pattern && !pattern_given);
    (!parsed.dynamic && known && given && parsed.operands.len() == pattern).then_some(())
}
