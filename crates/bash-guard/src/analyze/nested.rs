//! Code inside code: strings given to a shell (`bash -c`, `eval`, `watch`), the code a shell or an interpreter reads
//! on its standard input from the line, and the substitutions and process
//! substitutions in words, parsed and walked like the top level, one level deeper each.

use super::*;

impl Walker<'_> {
    /// A shell reading its code from a here-document or here-string: that text is the code it runs.
    pub(super) fn stdin_code(&mut self, simple: &Simple, index: usize, ctx: Ctx) {
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

    /// An interpreter reading its program from a here-document, a here-string or the pipe before it (`piped`):
    /// the commands that program spells out are walked as the commands they amount to.
    pub(super) fn stdin_program(
        &mut self,
        simple: &Simple,
        piped: Option<String>,
        language: crate::embedded::Language,
        index: usize,
        ctx: Ctx,
    ) {
        let mut programs: Vec<(String, bool)> = Vec::new();
        for r in &simple.redirects {
            match (r.op, &r.target) {
                (RedirOp::HereDoc { expands }, Target::Word(raw)) => programs.push((raw.clone(), expands)),
                (RedirOp::HereString, Target::Word(raw)) => {
                    let word = word::expand(raw);
                    if word.literal {
                        programs.push((word.text, false));
                    }
                }
                _ => {}
            }
        }
        if programs.is_empty() {
            programs.extend(piped.map(|text| (text, false)));
        }
        let nested = Ctx {
            parent: Some(index),
            in_pipeline: false,
            background: false,
            ..ctx
        };
        for (text, expanded) in programs {
            let (code, argv) = classify::spelled_out(
                language,
                &text,
                expanded,
                false,
                "an interpreter reading its input",
            );
            for Nested { kind, argv, found } in argv {
                self.nested_argv(&argv, kind, found.as_ref(), nested);
            }
            for code in code {
                self.code(&code, nested);
            }
        }
    }

    /// Code given as a string: parsed and walked like the top level, one level deeper.
    pub(super) fn code(&mut self, code: &Code, ctx: Ctx) {
        // Code that is the output of a substitution the line gave whose text is known (`eval "$(echo CMD)"`, `sh
        // -c "$(echo B64 | base64 -d)"`): that text.
        if !code.literal
            && !self.redefines
            && let Some(output) = substituted_output(&code.text)
        {
            self.parse_and_walk(&output, code.kind, ctx, &code.via);
            return;
        }
        // Code given as a variable the line has certainly set, to values it knows (`c='make test'; eval "$c"`):
        // each of them.
        if !code.literal
            && let Some(name) = sole_variable(&code.text)
            && let Some(facts) = self.vars.get(name)
            && !facts.unknown
            && facts.paths.is_empty()
            && !facts.values.is_empty()
            && self.was_assigned(name, self.moment(ctx))
        {
            for value in facts.values.clone() {
                self.parse_and_walk(&value, code.kind, ctx, &code.via);
            }
            return;
        }
        if !code.literal {
            self.contained(
                format!("`{}` runs code only known at run time: `{}`", code.via, code.text),
                ctx.parent,
            );
            return;
        }
        self.parse_and_walk(&code.text, code.kind, ctx, &code.via);
    }

    pub(super) fn parse_and_walk(&mut self, text: &str, kind: LocationKind, ctx: Ctx, via: &str) {
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
                    | LocationKind::Alias
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

    /// The code inside a word: `$(…)`, backticks, and words that re-expand as code.
    pub(super) fn word_code(
        &mut self,
        w: &Word,
        ctx: Ctx,
        parent: Option<usize>,
        kind: Option<LocationKind>,
    ) {
        self.credentials(w, parent);
        self.expansions(w, ctx, parent, kind);
    }

    /// The code inside a word and what its expansion evaluates, without the credentials it shows.
    pub(super) fn expansions(
        &mut self,
        w: &Word,
        ctx: Ctx,
        parent: Option<usize>,
        kind: Option<LocationKind>,
    ) {
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
}

/// The name of the variable that is the whole of `text` (`$x`, `${x}`, quotes aside).
fn sole_variable(text: &str) -> Option<&str> {
    let text = text.trim_start_matches('"').trim_end_matches('"');
    let name = text.strip_prefix('$')?;
    let name = name
        .strip_prefix('{')
        .and_then(|n| n.strip_suffix('}'))
        .unwrap_or(name);
    let mut chars = name.chars();
    (chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then_some(name)
}

/// The known output of the substitution that is the whole of `text` (`$(…)` or backticks, quotes aside).
pub(super) fn substituted_output(text: &str) -> Option<String> {
    let text = text.trim_start_matches('"').trim_end_matches('"');
    let body = text
        .strip_prefix("$(")
        .and_then(|b| b.strip_suffix(')'))
        .map(str::to_owned)
        .or_else(|| {
            text.strip_prefix('`')
                .and_then(|b| b.strip_suffix('`'))
                .map(unescape_backticks)
        })?;
    printed_by(&body).map(|output| output.trim_end_matches('\n').to_owned())
}

/// What `code` prints when the line says it: one pipeline without assignments or redirections whose first command
/// prints known text (`echo`, `printf`) and whose others only transform it (`base64 -d`, `rev`).
fn printed_by(code: &str) -> Option<String> {
    let script = parse_checked(code).ok()?;
    let [list] = script.0.as_slice() else { return None };
    let [pipeline] = list.pipelines.as_slice() else {
        return None;
    };
    if list.background || pipeline.1 {
        return None;
    }
    let mut output: Option<String> = None;
    for (k, command) in pipeline.0.iter().enumerate() {
        let Cmd::Simple(simple) = command else { return None };
        if !simple.assignments.is_empty() || !simple.redirects.is_empty() {
            return None;
        }
        let words = simple
            .words
            .iter()
            .map(|arg| match arg {
                parse::Arg::Word(raw) => Some(word::expand(raw)),
                parse::Arg::ProcSub(_) => None,
            })
            .collect::<Option<Vec<Word>>>()?;
        let argv: Vec<&Word> = words.iter().collect();
        output = Some(if k == 0 {
            shapes::printed_text(&argv)?
        } else {
            shapes::transformed_text(&argv, &output?)?
        });
    }
    output
}

/// Inside backticks, `\$`, `` \` `` and `\\` stand for the character itself.
pub(super) fn unescape_backticks(body: &str) -> String {
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
    pub(super) fn backtick_bodies_are_unescaped() {
        assert_eq!(unescape_backticks(r"echo \$HOME \`id\`"), "echo $HOME `id`");
    }
}
