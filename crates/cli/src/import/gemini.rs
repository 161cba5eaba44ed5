//! Gemini CLI policy files: TOML `[[rule]]` tables whose highest-priority match decides.
//!
//! What is exactly expressible becomes a rule: the tool (`toolName`, `mcpName`), a shell command's start
//! (`commandPrefix`) and a `commandRegex` made of literals, alternatives and `.*`. A condition that cannot be
//! expressed (`argsPattern`, `modes`, `interactive`, `subagent`, `toolAnnotations`, a richer regex) makes an
//! allow rule be left out and a deny or ask rule apply without that condition: the result is never wider than
//! written, and every such rule is reported with its line. Priorities cannot be carried over: here every deny
//! beats every ask, which beats every allow. Where a higher-priority rule would have let a call through that a
//! lower-priority stricter rule also matches, the stricter decision wins here, and that is reported too.

use std::collections::BTreeMap;
use std::path::PathBuf;

use agent_tool_traits::Decision;
use regex_syntax::hir::{Hir, HirKind};
use serde::Deserialize;

use super::{Imported, Note, literal_word};

/// More alternatives than this from one regular expression are not expanded.
const MAX_ALTERNATIVES: usize = 64;

/// Gemini's approval modes, each with agent-guard's mode of the same meaning; a rule limited to some of them is
/// not limited here (settings rules apply in every mode).
const MODES: [(&str, &str); 4] = [
    ("plan", "plan"),
    ("default", "default"),
    ("autoEdit", "acceptEdits"),
    ("yolo", "bypassPermissions"),
];

/// agent-guard's name of a Gemini approval mode.
fn mode_here(gemini: &str) -> Option<&'static str> {
    MODES
        .iter()
        .find(|(name, _)| *name == gemini)
        .map(|(_, here)| *here)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(default)]
    rule: Vec<toml::Spanned<RuleToml>>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn items(&self) -> Vec<String> {
        match self {
            Self::One(one) => vec![one.clone()],
            Self::Many(many) => many.clone(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RuleToml {
    tool_name: Option<OneOrMany>,
    mcp_name: Option<String>,
    command_prefix: Option<OneOrMany>,
    command_regex: Option<String>,
    args_pattern: Option<String>,
    decision: String,
    #[serde(default)]
    priority: Option<toml::Value>,
    modes: Option<Vec<String>>,
    interactive: Option<bool>,
    subagent: Option<String>,
    tool_annotations: Option<toml::Value>,
    allow_redirection: Option<bool>,
    deny_message: Option<String>,
    #[serde(flatten)]
    other: BTreeMap<String, toml::Value>,
}

/// One piece of a command pattern: literal text or any text.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Lit(String),
    Star,
}

/// A rule as translated, for the priority report.
struct Translated {
    /// The index of its file, when several are imported together.
    file: usize,
    line: usize,
    priority: f64,
    decision: Decision,
    /// (tool, literal start of the command) per emitted rule; `None` tool for every tool.
    targets: Vec<(Option<String>, Option<String>)>,
}

/// Imports a policy `.toml` file.
pub(crate) fn import(text: &str) -> Result<Imported, Note> {
    let mut imported = Imported::default();
    let mut translated = Vec::new();
    translate_file(text, &mut imported, &mut translated)?;
    report_priorities(&translated, &mut imported);
    Ok(imported)
}

/// The notes of each file imported, in order.
pub(crate) type FileNotes = Vec<(PathBuf, Vec<Note>)>;

/// Imports the policy files of a directory as one policy, the way Gemini CLI loads them: every rule of every file
/// weighed by its priority. The notes are returned by file; an error names its file.
pub(crate) fn import_all(files: &[(PathBuf, String)]) -> Result<(Imported, FileNotes), (PathBuf, Note)> {
    let mut imported = Imported::default();
    let mut translated = Vec::new();
    let mut notes = Vec::new();
    for (index, (path, text)) in files.iter().enumerate() {
        let start = translated.len();
        translate_file(text, &mut imported, &mut translated).map_err(|e| (path.clone(), e))?;
        for t in translated.iter_mut().skip(start) {
            t.file = index;
        }
        notes.push((path.clone(), std::mem::take(&mut imported.notes)));
    }
    // Priorities reach across files: a stricter rule of one file may take a call another file's rule allows.
    let names: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
    for (file, note) in priority_notes(&translated, &names) {
        if let Some((_, list)) = notes.get_mut(file) {
            list.push(note);
        }
    }
    Ok((imported, notes))
}

fn translate_file(text: &str, imported: &mut Imported, translated: &mut Vec<Translated>) -> Result<(), Note> {
    let file: PolicyFile = toml::from_str(text).map_err(|e| Note {
        line: e.span().map_or(1, |span| line_of(text, span.start)),
        message: format!("not a Gemini policy file: {}", e.message()),
    })?;
    for rule in &file.rule {
        let line = line_of(text, rule.span().start);
        if let Some(t) = translate(rule.get_ref(), line, imported)? {
            translated.push(t);
        }
    }
    Ok(())
}

fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |head| head.matches('\n').count() + 1)
}

fn translate(rule: &RuleToml, line: usize, imported: &mut Imported) -> Result<Option<Translated>, Note> {
    let bad = |message: String| Note { line, message };
    let decision = match rule.decision.as_str() {
        "allow" => Decision::Allow,
        "ask_user" => Decision::Ask,
        "deny" => Decision::Deny,
        other => {
            return Err(bad(format!(
                "`decision` is `{other}`, not `allow`, `deny` or `ask_user`"
            )));
        }
    };
    let priority = match &rule.priority {
        None => 0.0,
        Some(toml::Value::Integer(p)) => *p as f64,
        Some(toml::Value::Float(p)) => *p,
        Some(other) => return Err(bad(format!("`priority` is a {}, not a number", other.type_str()))),
    };
    if rule.command_prefix.is_some() && rule.command_regex.is_some() {
        return Err(bad(
            "`commandPrefix` and `commandRegex` cannot be in the same rule".to_owned(),
        ));
    }
    // Conditions that cannot be expressed here: an allow is left out, a deny or ask applies without them.
    let mut lost = Vec::new();
    if rule.args_pattern.is_some() {
        lost.push("`argsPattern` (a regular expression over the JSON arguments)".to_owned());
    }
    let limited = rule
        .modes
        .as_ref()
        .filter(|modes| !modes.is_empty() && !MODES.iter().all(|(m, _)| modes.iter().any(|x| x == m)));
    if let Some(modes) = limited {
        let here: Vec<String> = modes
            .iter()
            .map(|m| mode_here(m).map_or_else(|| format!("`{m}` (no such mode)"), |h| format!("`{h}`")))
            .collect();
        lost.push(format!(
            "`modes = {modes:?}` (agent-guard's {}; rules here apply in every mode)",
            here.join(", ")
        ));
    }
    if rule.interactive.is_some() {
        lost.push("`interactive` (rules here apply with and without a user)".to_owned());
    }
    if let Some(subagent) = &rule.subagent {
        lost.push(format!(
            "`subagent = \"{subagent}\"` (rules here apply to every agent)"
        ));
    }
    if rule.tool_annotations.is_some() {
        lost.push("`toolAnnotations`".to_owned());
    }
    for key in rule.other.keys() {
        lost.push(format!("`{key}` (unknown)"));
    }
    let shell = rule.command_prefix.is_some() || rule.command_regex.is_some();
    let mut tools = tool_names(rule, shell, &mut lost);
    for tool in tools.iter().flatten() {
        if agent_tool_traits::kind_of(tool) == agent_tool_traits::ToolKind::Other {
            imported.note(
                line,
                format!("`{tool}` is no tool agent-guard knows; the rule names it as it is and matches a tool of that name"),
            );
        }
    }
    // The command conditions: alternatives of pieces; `None` when there are none or they were lost.
    let mut commands: Option<Vec<Vec<Piece>>> = None;
    if let Some(prefixes) = &rule.command_prefix {
        commands = Some(
            prefixes
                .items()
                .iter()
                .map(|p| prefix_pieces(p, decision))
                .collect(),
        );
        if decision == Decision::Allow {
            for prefix in prefixes.items() {
                if prefix.ends_with(char::is_whitespace) {
                    imported.note(
                        line,
                        format!(
                            "`commandPrefix = \"{prefix}\"`: also allows `{}` alone, since a rule here cannot \
                             require a further word",
                            prefix.trim_end()
                        ),
                    );
                }
            }
        }
    }
    if let Some(regex) = &rule.command_regex {
        match regex_pieces(regex) {
            Ok(alternatives) => commands = Some(alternatives),
            Err(why) => lost.push(format!("`commandRegex = '{regex}'` ({why})")),
        }
    }
    if shell && tools.iter().any(|t| t.as_deref() != Some("Bash")) {
        lost.push("a command condition on a tool that is not the shell".to_owned());
        tools.retain(|t| t.as_deref() == Some("Bash"));
        if tools.is_empty() {
            tools.push(Some("Bash".to_owned()));
        }
    }
    if !lost.is_empty() && decision == Decision::Allow {
        imported.note(
            line,
            format!(
                "allow rule left out: {} cannot be expressed, and an allow is never widened",
                lost.join(", ")
            ),
        );
        return Ok(None);
    }
    if !lost.is_empty() {
        imported.note(
            line,
            format!(
                "{decision} rule imported without {}: it applies to more calls than written (stricter)",
                lost.join(", ")
            ),
        );
    }
    if let Some(modes) = limited
        && tools.iter().any(Option::is_none)
    {
        let verb = match decision {
            Decision::Deny => "denies",
            Decision::Ask | Decision::Allow => "asks for",
        };
        let plan = if modes.iter().any(|m| m == "plan") {
            "; agent-guard's own `plan` mode refuses every change without it"
        } else {
            ""
        };
        imported.note(
            line,
            format!(
                "warning: this {decision} rule for every tool, meant only for `modes = {modes:?}`, becomes \
                 `{decision}: [\"*\"]`, which {verb} every call in every mode{plan}; leave it out of the \
                 settings unless that is what you want"
            ),
        );
    }
    if rule.allow_redirection == Some(true) && decision == Decision::Allow {
        imported.note(
            line,
            "`allowRedirection` is not carried over: redirections are checked as file writes here (stricter)",
        );
    }
    let _ = &rule.deny_message;
    let mut targets = Vec::new();
    for tool in &tools {
        let Some(tool) = tool else {
            imported.add(decision, "*").map_err(|e| bad(e.to_string()))?;
            targets.push((None, None));
            continue;
        };
        match &commands {
            Some(alternatives) if tool == "Bash" => {
                for pieces in alternatives {
                    let text = format!("Bash({})", render(pieces));
                    imported.add(decision, &text).map_err(|e| bad(e.to_string()))?;
                    targets.push((Some(tool.clone()), Some(literal_start(pieces))));
                }
            }
            _ => {
                imported.add(decision, tool).map_err(|e| bad(e.to_string()))?;
                targets.push((Some(tool.clone()), None));
            }
        }
    }
    Ok(Some(Translated {
        file: 0,
        line,
        priority,
        decision,
        targets,
    }))
}

/// The tools of a rule in agent-guard's names; `None` stands for every tool.
fn tool_names(rule: &RuleToml, shell: bool, lost: &mut Vec<String>) -> Vec<Option<String>> {
    let names = match &rule.tool_name {
        Some(names) => names.items(),
        None if shell => vec!["run_shell_command".to_owned()],
        None => vec!["*".to_owned()],
    };
    let mut tools = Vec::new();
    for name in names {
        if let Some(server) = &rule.mcp_name {
            tools.push(Some(if name == "*" {
                format!("mcp__{server}")
            } else {
                format!("mcp__{server}__{name}")
            }));
            continue;
        }
        let mapped = match name.as_str() {
            "*" => None,
            "run_shell_command" => Some("Bash".to_owned()),
            "read_file" | "read_many_files" => Some("Read".to_owned()),
            "write_file" => Some("Write".to_owned()),
            "replace" | "edit" => Some("Edit".to_owned()),
            "glob" => Some("Glob".to_owned()),
            "list_directory" => Some("LS".to_owned()),
            "search_file_content" | "grep_search" => Some("Grep".to_owned()),
            "web_fetch" => Some("WebFetch".to_owned()),
            "google_web_search" => Some("WebSearch".to_owned()),
            fqn if fqn.starts_with("mcp_") => match mcp_fqn(fqn) {
                Some(rule) => Some(rule),
                None => {
                    lost.push(format!("the tool pattern `{fqn}`"));
                    None
                }
            },
            other if other.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-') => {
                Some(other.to_owned())
            }
            other => {
                lost.push(format!("the tool pattern `{other}`"));
                None
            }
        };
        tools.push(mapped);
    }
    tools
}

/// `mcp_server_tool` or `mcp_server_*` as a rule here; wildcards over servers have no counterpart.
fn mcp_fqn(fqn: &str) -> Option<String> {
    let rest = fqn.strip_prefix("mcp_")?;
    let (server, tool) = rest.split_once('_')?;
    if server.is_empty() || server.contains('*') {
        return None;
    }
    match tool {
        "*" => Some(format!("mcp__{server}")),
        tool if !tool.is_empty() && !tool.contains('*') => Some(format!("mcp__{server}__{tool}")),
        _ => None,
    }
}

/// A `commandPrefix` as pieces: an allow matches it on a word boundary (never more than a raw prefix would), a
/// deny or ask as a raw prefix (never less).
fn prefix_pieces(prefix: &str, decision: Decision) -> Vec<Piece> {
    let trimmed = prefix.trim_end();
    match decision {
        Decision::Allow => vec![Piece::Lit(trimmed.to_owned()), Piece::Lit(":*".to_owned())],
        Decision::Ask | Decision::Deny => {
            if trimmed.len() == prefix.len() {
                vec![Piece::Lit(trimmed.to_owned()), Piece::Star]
            } else {
                vec![Piece::Lit(format!("{trimmed} ")), Piece::Star]
            }
        }
    }
}

/// A `commandRegex` as alternatives of pieces: literals, groups of alternatives and `.*`, matched from the start
/// of the command and open at its end (Gemini tests it against `"command":"<regex>` without an end anchor).
fn regex_pieces(regex: &str) -> Result<Vec<Vec<Piece>>, String> {
    let hir = regex_syntax::Parser::new()
        .parse(regex)
        .map_err(|e| format!("not a regular expression: {}", one_line(&e.to_string())))?;
    let mut alternatives = pieces(&hir)?;
    for alternative in &mut alternatives {
        if alternative.last() != Some(&Piece::Star) {
            alternative.push(Piece::Star);
        }
    }
    Ok(alternatives)
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn pieces(hir: &Hir) -> Result<Vec<Vec<Piece>>, String> {
    Ok(match hir.kind() {
        HirKind::Empty => vec![Vec::new()],
        HirKind::Literal(literal) => {
            let text = String::from_utf8(literal.0.to_vec()).map_err(|_| "a literal that is not UTF-8")?;
            // Gemini matches the JSON text of the arguments, where `"` and `\` are escaped.
            if text.contains(['"', '\\']) {
                return Err("a quote or backslash, which match the JSON escapes".to_owned());
            }
            vec![vec![Piece::Lit(text)]]
        }
        HirKind::Capture(capture) => pieces(&capture.sub)?,
        HirKind::Concat(parts) => {
            let mut out: Vec<Vec<Piece>> = vec![Vec::new()];
            for part in parts {
                let next = pieces(part)?;
                if out.len().saturating_mul(next.len()) > MAX_ALTERNATIVES {
                    return Err(format!("more than {MAX_ALTERNATIVES} alternatives"));
                }
                out = out
                    .iter()
                    .flat_map(|head| {
                        next.iter().map(move |tail| {
                            let mut joined = head.clone();
                            joined.extend(tail.iter().cloned());
                            joined
                        })
                    })
                    .collect();
            }
            out
        }
        HirKind::Alternation(branches) => {
            let mut out = Vec::new();
            for branch in branches {
                out.extend(pieces(branch)?);
            }
            if out.len() > MAX_ALTERNATIVES {
                return Err(format!("more than {MAX_ALTERNATIVES} alternatives"));
            }
            out
        }
        HirKind::Repetition(repetition)
            if repetition.min == 0 && repetition.max.is_none() && is_any(&repetition.sub) =>
        {
            vec![vec![Piece::Star]]
        }
        HirKind::Repetition(_) | HirKind::Class(_) | HirKind::Look(_) => {
            return Err(
                "only literals, `(a|b)` alternatives and `.*` have a counterpart; classes, anchors and counted \
                 repetitions do not"
                    .to_owned(),
            );
        }
    })
}

/// Whether a class is `.` (any character but a newline, or any at all).
fn is_any(hir: &Hir) -> bool {
    let parse = |p: &str| regex_syntax::Parser::new().parse(p).ok();
    parse(".").as_ref() == Some(hir) || parse("(?s:.)").as_ref() == Some(hir)
}

/// Pieces as the content of a `Bash(…)` rule: literal words quoted where needed, `*` for any text. A piece
/// `:*` is the word-boundary prefix form and ends the pattern.
fn render(pieces: &[Piece]) -> String {
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Star => out.push('*'),
            Piece::Lit(text) if text == ":*" => out.push_str(":*"),
            Piece::Lit(text) => {
                let mut word = String::new();
                for c in text.chars() {
                    if c.is_whitespace() {
                        if !word.is_empty() {
                            out.push_str(&literal_word(&word));
                            word.clear();
                        }
                        if !out.ends_with(' ') {
                            out.push(' ');
                        }
                    } else {
                        word.push(c);
                    }
                }
                if !word.is_empty() {
                    out.push_str(&literal_word(&word));
                }
            }
        }
    }
    out.trim_start().to_owned()
}

/// The literal text a command must start with, for overlap checks.
fn literal_start(pieces: &[Piece]) -> String {
    let mut start = String::new();
    for piece in pieces {
        match piece {
            Piece::Lit(text) if text != ":*" => start.push_str(text),
            Piece::Lit(_) | Piece::Star => break,
        }
    }
    start
}

/// Reports where Gemini's priorities would let a less strict rule decide calls that a stricter rule here decides.
fn report_priorities(rules: &[Translated], imported: &mut Imported) {
    for (_, note) in priority_notes(rules, &[]) {
        imported.notes.push(note);
    }
}

/// Where a higher priority lets a call through that a stricter rule of lower priority also matches: a note on
/// the higher rule, by the index of its file; `files` names the files when there are several.
fn priority_notes(rules: &[Translated], files: &[String]) -> Vec<(usize, Note)> {
    let mut out = Vec::new();
    for high in rules {
        for low in rules {
            if high.priority > low.priority && high.decision < low.decision && overlap(high, low) {
                let at = match files.get(low.file) {
                    Some(name) if low.file != high.file => format!("{name}:{}", low.line),
                    _ => format!("line {}", low.line),
                };
                out.push((
                    high.file,
                    Note {
                        line: high.line,
                        message: format!(
                            "priority {} puts this {} rule above the {} rule at {at} (priority {}); where both \
                             match, the {} decides here (every deny beats every ask, every ask beats every allow)",
                            high.priority, high.decision, low.decision, low.priority, low.decision
                        ),
                    },
                ));
            }
        }
    }
    out
}

fn overlap(a: &Translated, b: &Translated) -> bool {
    a.targets.iter().any(|(tool_a, start_a)| {
        b.targets.iter().any(|(tool_b, start_b)| {
            let tools = tool_a.is_none() || tool_b.is_none() || tool_a == tool_b;
            let commands = match (start_a, start_b) {
                (Some(x), Some(y)) => x.starts_with(y.as_str()) || y.starts_with(x.as_str()),
                _ => true,
            };
            tools && commands
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notes(imported: &Imported) -> String {
        imported
            .notes
            .iter()
            .map(|n| format!("{}: {}", n.line, n.message))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn exact_rules_translate_without_notes() {
        let imported = import(
            "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = [\"rm -rf\", \"git push \"]\n\
             decision = \"deny\"\npriority = 500\n\n\
             [[rule]]\ncommandRegex = \"git (commit|stash)\"\ndecision = \"ask_user\"\npriority = 100\n\n\
             [[rule]]\ntoolName = [\"read_file\", \"glob\"]\ndecision = \"allow\"\npriority = 10\n\n\
             [[rule]]\nmcpName = \"github\"\ntoolName = \"create_issue\"\ndecision = \"ask_user\"\npriority = 5\n",
        )
        .unwrap();
        assert_eq!(imported.deny, ["Bash(rm -rf*)", "Bash(git push *)"]);
        assert_eq!(
            imported.ask,
            [
                "Bash(git commit*)",
                "Bash(git stash*)",
                "mcp__github__create_issue"
            ]
        );
        assert_eq!(imported.allow, ["Read", "Glob"]);
        assert_eq!(notes(&imported), "");
    }

    #[test]
    fn what_cannot_be_expressed_is_reported_and_never_widened() {
        let text = "[[rule]]\ntoolName = \"run_shell_command\"\nargsPattern = '\"command\":\"ls'\n\
                    decision = \"allow\"\npriority = 10\n\n\
                    [[rule]]\ntoolName = \"write_file\"\nmodes = [\"plan\"]\ndecision = \"deny\"\npriority = 10\n\n\
                    [[rule]]\ncommandRegex = \"[a-z]+ --force\"\ndecision = \"ask_user\"\npriority = 1\n\n\
                    [[rule]]\ncommandPrefix = \"git\"\ndecision = \"allow\"\npriority = 900\n";
        let imported = import(text).unwrap();
        // The allow with an argsPattern is left out; the deny limited to plan mode applies in every mode; the
        // regex that has no counterpart asks for every shell command.
        assert_eq!(imported.allow, ["Bash(git:*)"]);
        assert_eq!(imported.deny, ["Write"]);
        assert_eq!(imported.ask, ["Bash"]);
        let notes = notes(&imported);
        assert!(notes.contains("1: allow rule left out: `argsPattern`"), "{notes}");
        assert!(
            notes.contains("7: deny rule imported without `modes = [\"plan\"]`"),
            "{notes}"
        );
        assert!(
            notes.contains("13: ask rule imported without `commandRegex"),
            "{notes}"
        );
        // The allow at priority 900 overlaps the ask at line 13 (every shell command): reported.
        assert!(
            notes.contains("18: priority 900 puts this allow rule above the ask rule at line 13"),
            "{notes}"
        );
    }

    #[test]
    fn tools_without_a_counterpart_keep_their_name_and_are_reported() {
        let imported =
            import("[[rule]]\ntoolName = [\"save_memory\", \"list_directory\"]\ndecision = \"deny\"\n")
                .unwrap();
        assert_eq!(imported.deny, ["save_memory", "LS"]);
        assert_eq!(
            notes(&imported),
            "1: `save_memory` is no tool agent-guard knows; the rule names it as it is and matches a tool of that name"
        );
    }

    #[test]
    fn malformed_files_name_the_line() {
        for (text, line, why) in [
            (
                "[[rule]]\ntoolName = \"x\"\ndecision = \"maybe\"\n",
                1,
                "`decision` is `maybe`",
            ),
            ("[[rule]]\ntoolName = \"x\"\n", 1, "missing field `decision`"),
            (
                "\n[[rule]]\ncommandPrefix = \"a\"\ncommandRegex = \"b\"\ndecision = \"deny\"\n",
                2,
                "same rule",
            ),
            ("[[rules]]\ndecision = \"deny\"\n", 1, "unknown field `rules`"),
            ("[[rule]]\ndecision = deny\n", 2, "not a Gemini policy file"),
        ] {
            let error = import(text).unwrap_err();
            assert_eq!(error.line, line, "{text}: {error:?}");
            assert!(error.message.contains(why), "{text}: {error:?}");
        }
    }
}
