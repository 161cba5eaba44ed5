//! Codex CLI execution policies: `prefix_rule(pattern, decision, justification, match, not_match)` calls.
//!
//! A pattern is a list of argv words, each a literal or a list of alternatives, matched as a prefix of the
//! command's words; the alternatives expand into one `Bash(w1 w2 …:*)` rule each, which matches the same words on
//! a word boundary. `allow`, `prompt` and `forbidden` become allow, ask and deny; Codex, like agent-guard, lets the
//! strictest matching rule win. `match` examples become tests that expect the strictest decision of the imported
//! rules that match them; `not_match` examples become tests that the rule does not decide them.

use agent_decide::PolicyTest;
use agent_tool_traits::Decision;
use serde_json::json;

use super::starlark::{self, Argument, Call, Literal};
use super::{Imported, Note, command_line, literal_word};
use crate::words::shell_words;

/// More expanded rules than this from one `prefix_rule` is refused rather than written out.
const MAX_EXPANSION: usize = 1024;

/// One `prefix_rule`, its alternatives expanded.
struct PrefixRule {
    line: usize,
    decision: Decision,
    /// Each expansion: its words and the rule text.
    expansions: Vec<(Vec<String>, String)>,
    examples: Vec<(usize, Vec<String>)>,
    counter_examples: Vec<(usize, Vec<String>)>,
    /// What could not be carried over exactly.
    notes: Vec<String>,
}

/// Imports a `.rules` file.
pub(crate) fn import(text: &str) -> Result<Imported, Note> {
    let calls = starlark::parse(text).map_err(|e| Note {
        line: e.line,
        message: e.why,
    })?;
    let mut imported = Imported::default();
    let mut rules = Vec::new();
    for call in &calls {
        match call.name.as_str() {
            "prefix_rule" => rules.push(prefix_rule(call)?),
            "host_executable" => imported.note(
                call.line,
                "`host_executable` is not imported: rules here match the command name as written, so a \
                 command run by an absolute path is matched by neither the rules nor the examples of that name",
            ),
            other => {
                return Err(Note {
                    line: call.line,
                    message: format!("`{other}` is not a Codex policy call (`prefix_rule`, `host_executable`)"),
                });
            }
        }
    }
    for rule in &rules {
        for (_, text) in &rule.expansions {
            imported.add(rule.decision, text).map_err(|e| Note {
                line: rule.line,
                message: e.to_string(),
            })?;
        }
        for note in &rule.notes {
            imported.note(rule.line, note.clone());
        }
    }
    for rule in &rules {
        for (line, words) in &rule.examples {
            if !rule
                .expansions
                .iter()
                .any(|(pattern, _)| is_prefix(pattern, words))
            {
                return Err(Note {
                    line: *line,
                    message: format!(
                        "the `match` example `{}` does not match its rule",
                        words.join(" ")
                    ),
                });
            }
            let (expect, deciders) = strictest(&rules, words, None).unwrap_or((rule.decision, Vec::new()));
            imported.tests.push(test_case(
                words,
                Some(expect),
                decided_by(expect, &deciders),
                None,
                format!("line {line}: match"),
            ));
        }
        for (line, words) in &rule.counter_examples {
            if rule
                .expansions
                .iter()
                .any(|(pattern, _)| is_prefix(pattern, words))
            {
                return Err(Note {
                    line: *line,
                    message: format!("the `not_match` example `{}` matches its rule", words.join(" ")),
                });
            }
            // What the other rules decide is expected too; the rule itself must not be the one deciding.
            let others = strictest(&rules, words, Some(rule.line));
            for (_, text) in &rule.expansions {
                let (expect, by) = match &others {
                    Some((expect, deciders)) => (Some(*expect), decided_by(*expect, deciders)),
                    None => (None, None),
                };
                imported.tests.push(test_case(
                    words,
                    expect,
                    by,
                    Some(text.clone()),
                    format!("line {line}: not_match"),
                ));
            }
        }
    }
    Ok(imported)
}

fn prefix_rule(call: &Call) -> Result<PrefixRule, Note> {
    let mut pattern = None;
    let mut decision = Decision::Allow;
    let mut examples = Vec::new();
    let mut counter_examples = Vec::new();
    for argument in &call.args {
        let bad = |why: String| Note {
            line: argument.line,
            message: format!("`prefix_rule` `{}`: {why}", argument.key),
        };
        match argument.key.as_str() {
            "pattern" => pattern = Some(pattern_words(argument).map_err(bad)?),
            "decision" => {
                decision = match &argument.value {
                    Literal::Str(d) if d == "allow" => Decision::Allow,
                    Literal::Str(d) if d == "prompt" => Decision::Ask,
                    Literal::Str(d) if d == "forbidden" => Decision::Deny,
                    Literal::Str(d) => {
                        return Err(bad(format!("`{d}` is not `allow`, `prompt` or `forbidden`")));
                    }
                    Literal::List(_) => return Err(bad("is a list, not a string".to_owned())),
                };
            }
            "justification" => {
                if !matches!(argument.value, Literal::Str(_)) {
                    return Err(bad("is a list, not a string".to_owned()));
                }
            }
            "match" => examples = example_list(argument).map_err(bad)?,
            "not_match" => counter_examples = example_list(argument).map_err(bad)?,
            other => {
                return Err(Note {
                    line: argument.line,
                    message: format!(
                        "`prefix_rule` has no argument `{other}` (pattern, decision, justification, match, not_match)"
                    ),
                });
            }
        }
    }
    let Some(positions) = pattern else {
        return Err(Note {
            line: call.line,
            message: "`prefix_rule` without `pattern`".to_owned(),
        });
    };
    let mut expansions: Vec<Vec<String>> = vec![Vec::new()];
    for alternatives in &positions {
        if expansions.len().saturating_mul(alternatives.len()) > MAX_EXPANSION {
            return Err(Note {
                line: call.line,
                message: format!("`pattern` expands to more than {MAX_EXPANSION} rules"),
            });
        }
        expansions = expansions
            .iter()
            .flat_map(|prefix| {
                alternatives.iter().map(move |word| {
                    let mut words = prefix.clone();
                    words.push(word.clone());
                    words
                })
            })
            .collect();
    }
    let mut notes = Vec::new();
    let expansions = expansions
        .into_iter()
        .map(|words| {
            let literal = |words: &[String]| words.iter().map(|w| literal_word(w)).collect::<Vec<_>>().join(" ");
            let text = match shell_code(&words) {
                // `["/bin/zsh", "-lc", "cargo test"]` matches the one argument `cargo test`: the whole command.
                Some(Ok(inner)) => format!("Bash({})", literal(&inner)),
                Some(Err(why)) => {
                    let text = format!("Bash({}:*)", literal(&words));
                    notes.push(format!(
                        "`{}` runs its command through a shell and cannot become a rule on that command ({why}); \
                         imported as `{text}`, it matches only a call written the same way",
                        command_line(&words)
                    ));
                    text
                }
                None => format!("Bash({}:*)", literal(&words)),
            };
            (words, text)
        })
        .collect();
    Ok(PrefixRule {
        line: call.line,
        decision,
        expansions,
        examples,
        counter_examples,
        notes,
    })
}

/// Codex runs each command as `/bin/zsh -lc "CODE"` (or bash, sh) and saves rules on those words. For such words,
/// the words of CODE when it is a plain command (`Ok`), or why it is not (`Err`: shell syntax, words after the
/// code); `None` for words that do not run a shell on code.
fn shell_code(words: &[String]) -> Option<Result<Vec<String>, String>> {
    let (shell, rest) = words.split_first()?;
    let name = shell.rsplit('/').next().unwrap_or(shell);
    if !matches!(name, "bash" | "zsh" | "sh" | "dash" | "ksh") {
        return None;
    }
    let options = rest
        .iter()
        .take_while(|w| {
            w.len() > 1 && w.starts_with('-') && w.chars().skip(1).all(|c| c.is_ascii_alphabetic())
        })
        .count();
    if !rest.get(..options)?.last()?.contains('c') {
        return None;
    }
    let code = match rest.get(options..)? {
        [code] => code,
        [] => return Some(Err("the code is not in the pattern".to_owned())),
        _ => return Some(Err("arguments follow the code".to_owned())),
    };
    if let Some(c) = code.chars().find(|c| ";&|<>()$`\\\n'\"*?[]{}~#".contains(*c)) {
        return Some(Err(format!("its command holds shell syntax (`{c}`)")));
    }
    let inner: Vec<String> = code.split_whitespace().map(str::to_owned).collect();
    match inner.first() {
        None => return Some(Err("the code is empty".to_owned())),
        Some(first) if first.contains('=') => {
            return Some(Err("its command starts with an assignment".to_owned()));
        }
        Some(_) => {}
    }
    Some(Ok(inner))
}

/// `pattern`: a non-empty list whose elements are a word or a non-empty list of alternative words.
fn pattern_words(argument: &Argument) -> Result<Vec<Vec<String>>, String> {
    let Literal::List(items) = &argument.value else {
        return Err("is a string, not a list of words".to_owned());
    };
    if items.is_empty() {
        return Err("is empty".to_owned());
    }
    items
        .iter()
        .map(|item| match &item.value {
            Literal::Str(word) => Ok(vec![word.clone()]),
            Literal::List(alternatives) if !alternatives.is_empty() => alternatives
                .iter()
                .map(|a| match &a.value {
                    Literal::Str(word) => Ok(word.clone()),
                    Literal::List(_) => Err("alternatives are words, not lists".to_owned()),
                })
                .collect(),
            Literal::List(_) => Err("an empty list of alternatives".to_owned()),
        })
        .collect()
}

/// `match` or `not_match`: a list of examples, each a command line or a list of words.
fn example_list(argument: &Argument) -> Result<Vec<(usize, Vec<String>)>, String> {
    let Literal::List(items) = &argument.value else {
        return Err("is a string, not a list of examples".to_owned());
    };
    items
        .iter()
        .map(|item| {
            let words = match &item.value {
                Literal::Str(line) => shell_words(line)?,
                Literal::List(words) => words
                    .iter()
                    .map(|w| match &w.value {
                        Literal::Str(word) => Ok(word.clone()),
                        Literal::List(_) => Err("an example's words are strings".to_owned()),
                    })
                    .collect::<Result<_, _>>()?,
            };
            if words.is_empty() {
                return Err("an empty example".to_owned());
            }
            Ok((item.line, words))
        })
        .collect()
}

fn is_prefix(pattern: &[String], words: &[String]) -> bool {
    words.len() >= pattern.len() && pattern.iter().zip(words).all(|(p, w)| p == w)
}

/// The strictest decision of the rules matching `words` (leaving out the rule at `except`), with the texts of the
/// expanded rules that give it.
fn strictest(
    rules: &[PrefixRule],
    words: &[String],
    except: Option<usize>,
) -> Option<(Decision, Vec<String>)> {
    let mut best: Option<(Decision, Vec<String>)> = None;
    for rule in rules.iter().filter(|r| Some(r.line) != except) {
        for (pattern, text) in &rule.expansions {
            if !is_prefix(pattern, words) {
                continue;
            }
            match &mut best {
                Some((decision, texts)) if *decision == rule.decision => texts.push(text.clone()),
                Some((decision, _)) if *decision > rule.decision => {}
                _ => best = Some((rule.decision, vec![text.clone()])),
            }
        }
    }
    best
}

/// Who must decide: the one rule when one gives the decision, else the resolution step of its behaviour.
fn decided_by(decision: Decision, deciders: &[String]) -> Option<String> {
    match deciders {
        [] => None,
        [one] => Some(one.clone()),
        _ => Some(format!("{}-rule", decision.as_str())),
    }
}

fn test_case(
    words: &[String],
    expect: Option<Decision>,
    decided_by: Option<String>,
    not_decided_by: Option<String>,
    name: String,
) -> PolicyTest {
    // An example Codex runs through a shell is the inner command for the coding agent, as its rule is.
    let command = match shell_code(words) {
        Some(Ok(inner)) => command_line(&inner),
        Some(Err(_)) | None => command_line(words),
    };
    PolicyTest {
        name: Some(name),
        tool: "Bash".to_owned(),
        input: json!({ "command": command }),
        expect,
        mode: None,
        cwd: None,
        decided_by,
        not_decided_by,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternatives_expand_and_decisions_map() {
        let imported = import(
            "prefix_rule(pattern = [\"git\", [\"push\", \"fetch\"]], decision = \"prompt\")\n\
             prefix_rule(pattern = [\"rm\", \"-rf\"], decision = \"forbidden\", justification = \"no\")\n\
             prefix_rule(pattern = [\"ls\"])\n\
             prefix_rule(pattern = [\"echo\", \"a b*\"], decision = \"allow\")\n",
        )
        .unwrap();
        assert_eq!(imported.ask, ["Bash(git push:*)", "Bash(git fetch:*)"]);
        assert_eq!(imported.deny, ["Bash(rm -rf:*)"]);
        assert_eq!(imported.allow, ["Bash(ls:*)", "Bash(echo \"a b*\":*)"]);
        assert!(imported.tests.is_empty() && imported.notes.is_empty());
    }

    #[test]
    fn rules_on_a_shell_running_code_become_rules_on_the_code() {
        let imported = import(
            "prefix_rule(pattern = [\"/bin/zsh\", \"-lc\", \"cargo test\"], decision = \"allow\", \
             match = [[\"/bin/zsh\", \"-lc\", \"cargo test\"]])\n\
             prefix_rule(pattern = [\"bash\", \"-l\", \"-c\", \"git push --force\"], decision = \"forbidden\")\n\
             prefix_rule(pattern = [\"/bin/zsh\", \"-lc\", \"cd web && npm test\"], decision = \"allow\")\n",
        )
        .unwrap();
        assert_eq!(
            imported.allow,
            ["Bash(cargo test)", "Bash(/bin/zsh -lc \"cd web && npm test\":*)"]
        );
        assert_eq!(imported.deny, ["Bash(git push --force)"]);
        assert_eq!(imported.tests[0].input, json!({"command": "cargo test"}));
        let [note] = imported.notes.as_slice() else {
            panic!("{:?}", imported.notes)
        };
        assert_eq!(note.line, 3);
        assert!(note.message.contains("holds shell syntax (`&`)"), "{note:?}");
        assert!(
            note.message.contains("matches only a call written the same way"),
            "{note:?}"
        );
    }

    #[test]
    fn examples_become_tests_expecting_the_strictest_rule() {
        let imported = import(
            "prefix_rule(pattern = [\"git\"], decision = \"allow\", match = [\"git status\"], \
             not_match = [[\"gitk\"]])\n\
             prefix_rule(pattern = [\"git\", \"push\"], decision = \"prompt\", match = [\"git push origin\"])\n",
        )
        .unwrap();
        let [status, gitk, push] = imported.tests.as_slice() else {
            panic!("{:?}", imported.tests)
        };
        assert_eq!(status.input, json!({"command": "git status"}));
        assert_eq!(status.expect, Some(Decision::Allow));
        assert_eq!(status.decided_by.as_deref(), Some("Bash(git:*)"));
        assert_eq!(gitk.expect, None);
        assert_eq!(gitk.not_decided_by.as_deref(), Some("Bash(git:*)"));
        assert_eq!(push.expect, Some(Decision::Ask));
        assert_eq!(push.decided_by.as_deref(), Some("Bash(git push:*)"));
    }

    #[test]
    fn wrong_examples_and_arguments_are_errors_with_their_line() {
        for (text, line, why) in [
            (
                "prefix_rule(pattern = [\"git\"],\n match = [\"ls\"])",
                2,
                "does not match its rule",
            ),
            (
                "prefix_rule(pattern = [\"git\"],\n\n not_match = [\"git x\"])",
                3,
                "matches its rule",
            ),
            (
                "prefix_rule(pattern = [\"git\"], decision = \"deny\")",
                1,
                "is not `allow`, `prompt`",
            ),
            ("\nprefix_rule(decision = \"allow\")", 2, "without `pattern`"),
            ("prefix_rule(pattern = [], decision = \"allow\")", 1, "is empty"),
            (
                "prefix_rule(pattern = [\"a\"], when = \"x\")",
                1,
                "no argument `when`",
            ),
            ("exec_rule(pattern = [\"a\"])", 1, "not a Codex policy call"),
        ] {
            let error = import(text).unwrap_err();
            assert_eq!(error.line, line, "{text}: {error:?}");
            assert!(error.message.contains(why), "{text}: {error:?}");
        }
    }
}
