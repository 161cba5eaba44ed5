//! The walk over the syntax tree: every command that could run, its files, and the findings.

use std::collections::HashMap;

use agent_tool_traits::Decision;

use crate::analysis::{AccessVia, CommandAnalysis, FileAccess, Finding, Location, LocationKind, SubCommand};
use crate::classify::{self, Code, Table};
use crate::knowledge;
use crate::parse::{
    self, AndOrList, Arg, Braces, Cmd, Construct, Part, RedirOp, Redirect, Script, Simple, Target,
};
use crate::word::{self, Anchor, Embedded, Word};

/// How deeply code inside code (`bash -c "$(eval …)"`) is followed; deeper is a safety ask.
pub(crate) const MAX_DEPTH: usize = 24;
/// How many words one brace expansion may produce before the analysis stops enumerating them.
const BRACE_LIMIT: usize = 256;
/// More unclosed parentheses than this make the parser backtrack exponentially: refuse before parsing.
const MAX_UNCLOSED: usize = 12;
/// Nesting deeper than this would exhaust the parser's stack: refuse before parsing.
const MAX_NESTING: usize = 200;

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
}

impl Ctx {
    const TOP: Self = Self {
        kind: LocationKind::TopLevel,
        depth: 0,
        parent: None,
        in_pipeline: false,
        background: false,
        code_depth: 0,
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
    walker.out
}

/// The longest run of whole lines from the start that parses, when there is one.
fn longest_parsable_prefix(source: &str) -> Option<Script> {
    let ends: Vec<usize> = source.match_indices('\n').map(|(at, _)| at).collect();
    ends.iter()
        .rev()
        .find_map(|end| source.get(..*end).and_then(|prefix| parse_checked(prefix).ok()))
}

/// Parses after checking the two shapes the parser cannot handle in bounded time or stack.
fn parse_checked(source: &str) -> Result<Script, String> {
    // Raw control characters outside quotes have no place in a command line an agent writes, and some (a form
    // feed between here-document operators) send the parser into a loop that never ends (found by fuzzing).
    if let Some(control) = unquoted_control(source) {
        return Err(format!(
            "the control character U+{:04X} outside quotes",
            u32::from(control)
        ));
    }
    let (unclosed, nesting) = nesting(source);
    if unclosed > MAX_UNCLOSED {
        return Err(format!("{unclosed} unclosed parentheses"));
    }
    if nesting > MAX_NESTING {
        return Err(format!("nesting deeper than {MAX_NESTING} levels"));
    }
    let braces = parse::most_braces_in_a_word(source, separates_words);
    if braces > parse::MAX_WORD_BRACES {
        return Err(format!("a word with {braces} brace-expansion braces"));
    }
    if here_tag_with_substitution(source) {
        // brush-parser 0.4 allocates without bound on a here-document delimiter holding an unterminated `$(`
        // or missing inside `$(`; bash never expands a delimiter, so such a word has no legitimate use.
        return Err("a here-document delimiter is missing or holds `$(`".to_owned());
    }
    parse::program(source)
}

/// The byte offsets of `<<` outside quotes.
fn unquoted_here_operators(source: &str) -> Vec<usize> {
    let mut found = Vec::new();
    let mut quote: Option<char> = None;
    let mut chars = source.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('\''), _) => {}
            (_, '\\') => {
                chars.next();
            }
            // Inside double quotes `$(…)` is code again, so only single quotes hide a `<<`.
            (None | Some('"'), '<') if source.get(at..).is_some_and(|rest| rest.starts_with("<<")) => {
                found.push(at);
            }
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            _ => {}
        }
    }
    found
}

/// Whether a `<<` or `<<-` delimiter word outside quotes is missing or contains `$(` or a backtick.
fn here_tag_with_substitution(source: &str) -> bool {
    unquoted_here_operators(source).into_iter().any(|at| {
        let rest = source.get(at + 2..).unwrap_or_default();
        if rest.starts_with('<') || source.get(..at).is_some_and(|before| before.ends_with('<')) {
            return false;
        }
        let rest = rest
            .strip_prefix('-')
            .unwrap_or(rest)
            .trim_start_matches([' ', '\t']);
        if rest.is_empty() || rest.starts_with(['\n', ';', '&', '|', '<', '>', '(', ')']) {
            // No delimiter at all: a syntax error for bash, and another input brush-parser loops on.
            return true;
        }
        // The delimiter word runs to the first blank or operator outside quotes.
        let mut quote: Option<char> = None;
        let mut previous = ' ';
        for c in rest.chars() {
            match (quote, c) {
                (None, ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>') => return false,
                (None, '\'' | '"') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (Some('\''), _) => {}
                (_, '`') => return true,
                (_, '(') if previous == '$' => return true,
                // `${` in a delimiter is never expanded either, and an unterminated one loops the parser too.
                (_, '{') if previous == '$' => return true,
                _ => {}
            }
            previous = c;
        }
        false
    })
}

/// The first control character (other than tab, newline and carriage return) outside quotes.
fn unquoted_control(source: &str) -> Option<char> {
    let mut chars = source.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some(_), _) => {}
            (None, '\\') => {
                chars.next();
            }
            (None, '\'' | '"') => quote = Some(c),
            (None, c) if c.is_control() && !matches!(c, '\t' | '\n' | '\r') => return Some(c),
            _ => {}
        }
    }
    None
}

/// Whether `c` outside quotes ends a word for the brace count taken before parsing.
fn separates_words(c: char) -> bool {
    c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')' | '<' | '>')
}

/// The number of parentheses left open at the end and the deepest nesting of `(`/`{`, outside quotes.
fn nesting(source: &str) -> (usize, usize) {
    let mut open = 0usize;
    let mut deepest = 0usize;
    let mut braces = 0usize;
    let mut chars = source.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('\''), _) => {}
            (_, '\\') => {
                chars.next();
            }
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => open += 1,
            (None, ')') => open = open.saturating_sub(1),
            (None, '{') => braces += 1,
            (None, '}') => braces = braces.saturating_sub(1),
            _ => {}
        }
        deepest = deepest.max(open + braces);
    }
    (open, deepest)
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
        for pipeline in &list.pipelines {
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
            let mut previous: Option<usize> = None;
            for command in &pipeline.0 {
                let first = self.out.commands.len();
                self.cmd(command, c);
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
                for part in parts {
                    match part {
                        Part::Body(script) => self.script(script, inner),
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
                        Part::Code(text) => self.parse_and_walk(text, kind, ctx, "( … )"),
                        Part::Arith(text) => {
                            let w = word::expand_heredoc(text);
                            self.word_code(&w, ctx, None, Some(LocationKind::Arithmetic));
                        }
                    }
                }
                for r in redirects {
                    self.redirect(r, None, ctx);
                }
            }
            Cmd::Function { name, body } => {
                self.functions.push(name.clone());
                let inner = Ctx {
                    in_pipeline: false,
                    background: false,
                    ..ctx.nested(LocationKind::FunctionBody)
                };
                self.cmd(body, inner);
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
                        let mut w = word::expand(raw);
                        w.literal = false;
                        w.anchor = Anchor::Dynamic;
                        words.push(w);
                    }
                },
                Arg::ProcSub(script) => {
                    let mut w = Word::literal("<(…)");
                    w.literal = false;
                    w.anchor = Anchor::Dynamic;
                    words.push(w);
                    substitutions.push(script);
                }
            }
        }
        let assignments: Vec<(&String, Word)> = simple
            .assignments
            .iter()
            .map(|(name, value)| (name, word::expand(value)))
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
            self.record(classified, index, ctx);
            if stdin_code {
                self.stdin_shells.push(index);
                self.stdin_code(simple, index, ctx);
            }
            Some(index)
        };
        for (name, value) in &assignments {
            if classify::is_code_variable(name) {
                self.finding(
                    Decision::Ask,
                    format!("sets `{name}`, which changes what later commands run"),
                    index,
                );
            }
            self.word_code(value, ctx, index, None);
        }
        for text in &simple.indices {
            let arithmetic = word::expand_heredoc(text);
            self.word_code(&arithmetic, ctx, index, Some(LocationKind::Arithmetic));
        }
        for w in &words {
            self.word_code(w, ctx, index, None);
        }
        for script in substitutions {
            self.script(
                script,
                Ctx {
                    parent: index,
                    ..ctx.nested(LocationKind::ProcessSubstitution)
                },
            );
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
            self.access(w, via, Some(index), false);
        }
        for (w, via) in &classified.writes {
            self.access(w, via, Some(index), true);
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
            let arithmetic = word::expand_heredoc(&w.text);
            self.word_code(&arithmetic, ctx, Some(index), Some(LocationKind::Arithmetic));
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
                let inner = Ctx {
                    code_depth: ctx.code_depth + 1,
                    ..ctx.nested(kind)
                };
                self.script(&script, inner);
            }
            Err(error) => self.finding(
                Decision::Ask,
                format!("the code of `{via}` cannot be parsed: {error}"),
                ctx.parent,
            ),
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
    }

    fn access(&mut self, w: &Word, via: &AccessVia, command: Option<usize>, write: bool) {
        if let Some(device) = device_write(&w.text) {
            let (decision, reason) = match device {
                DeviceWrite::Harmless if write => return,
                DeviceWrite::Harmless => (Decision::Allow, String::new()),
                DeviceWrite::Raw if !write => (Decision::Allow, String::new()),
                DeviceWrite::Raw => (Decision::Deny, format!("writes the raw device `{}`", w.text)),
                DeviceWrite::Network if self.table.network_blocked => (
                    Decision::Deny,
                    format!(
                        "`{}` opens a network connection, which is blocked (AGENT_BLOCK_NETWORK)",
                        w.text
                    ),
                ),
                DeviceWrite::Network => (Decision::Ask, format!("`{}` opens a network connection", w.text)),
            };
            if decision != Decision::Allow {
                self.finding(decision, reason, command);
            }
        }
        let Some(path) = w.path() else { return };
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
                self.script(
                    script,
                    Ctx {
                        parent: command,
                        ..ctx.nested(LocationKind::ProcessSubstitution)
                    },
                );
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
                if !w.literal && (w.path().is_none() || w.glob) {
                    self.finding(
                        Decision::Ask,
                        format!("the redirection target `{}` is only known at run time", w.text),
                        command,
                    );
                    return;
                }
                let via = AccessVia::Redirect;
                if matches!(r.op, RedirOp::Read | RedirOp::ReadWrite) {
                    self.access(&w, &via, command, false);
                }
                if matches!(
                    r.op,
                    RedirOp::Write | RedirOp::ReadWrite | RedirOp::Duplicate { output: true }
                ) {
                    self.access(&w, &via, command, true);
                }
            }
        }
    }
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
    fn braces_are_counted_per_word_outside_quotes() {
        let count = |s: &str| parse::most_braces_in_a_word(s, separates_words);
        assert_eq!(count("echo {a,b} {c,d}"), 1);
        assert_eq!(count("echo ${a}${b}${c}"), 0);
        assert_eq!(count("awk '{{{{{{{{{{{{{{{{'"), 0);
        assert_eq!(count("{ { { echo; }; }; }"), 1);
        assert_eq!(count("echo {,{,{,{,"), 4);
    }

    #[test]
    fn nesting_is_measured_outside_quotes() {
        assert_eq!(nesting("echo '(((('").0, 0);
        assert_eq!(nesting("((((((").0, 6);
        assert_eq!(nesting("a $(b $(c)) { d; }").1, 2);
    }

    #[test]
    fn here_document_delimiters_the_parser_cannot_take() {
        for source in [
            "<<$( ;$(",
            "cat <<\"a $( ;\"",
            "$(<< >#",
            "cat <<",
            "cat << ;",
            "x <<`y`",
        ] {
            assert!(here_tag_with_substitution(source), "{source}");
        }
        for source in [
            "cat <<EOF\nx\nEOF",
            "cat <<'EOF'\n$(x)\nEOF",
            "cat <<< \"$(date)\"",
            "echo a<<b",
        ] {
            assert!(!here_tag_with_substitution(source), "{source}");
        }
    }

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
