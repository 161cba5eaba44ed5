//! `agent-guard import`: other agents' policy files turned into settings JSON, never wider than written.

mod codex;
mod gemini;
mod starlark;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agent_decide::PolicyTest;
use agent_tool_traits::{Decision, Source};
use anyhow::Result;
use serde_json::json;

use crate::UsageError;

// Which format to read.
#[derive(Debug, Clone, clap::Subcommand)]
pub(crate) enum Format {
    /// A Codex CLI execution policy (`.rules`, Starlark `prefix_rule(…)` calls); `match` and `not_match`
    /// examples become policy tests.
    Codex {
        /// The `.rules` file.
        file: PathBuf,
    },
    /// A Gemini CLI policy file (TOML `[[rule]]` tables with priorities), or a policies directory, whose `.toml`
    /// files Gemini CLI loads together.
    Gemini {
        /// The `.toml` file, or a directory of them.
        file: PathBuf,
    },
}

/// What an import produced: rules by behaviour, policy tests, and what could not be carried over exactly.
#[derive(Debug, Default)]
pub(crate) struct Imported {
    allow: Vec<String>,
    ask: Vec<String>,
    deny: Vec<String>,
    tests: Vec<PolicyTest>,
    notes: Vec<Note>,
}

/// Something of the input that is not carried over exactly, and what was done instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Note {
    pub(crate) line: usize,
    pub(crate) message: String,
}

impl Imported {
    /// Adds a rule once; the text must parse as a rule (a translation that does not is a bug, reported as one).
    fn add(&mut self, behavior: Decision, rule: &str) -> Result<()> {
        if let Err(e) = agent_rules::Rule::parse(rule, behavior, Source::CliArg) {
            anyhow::bail!("the translated rule `{rule}` does not parse: {e}");
        }
        let list = match behavior {
            Decision::Allow => &mut self.allow,
            Decision::Ask => &mut self.ask,
            Decision::Deny => &mut self.deny,
        };
        if !list.iter().any(|r| r == rule) {
            list.push(rule.to_owned());
        }
        Ok(())
    }

    fn note(&mut self, line: usize, message: impl Into<String>) {
        self.notes.push(Note {
            line,
            message: message.into(),
        });
    }

    /// The settings JSON: the rules under `permissions`, the tests under `agentGuard.tests`.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        let permissions = json!({ "allow": self.allow, "ask": self.ask, "deny": self.deny });
        if self.tests.is_empty() {
            json!({ "permissions": permissions })
        } else {
            json!({ "permissions": permissions, "agentGuard": { "tests": self.tests } })
        }
    }
}

pub(crate) fn run(format: &Format) -> Result<ExitCode> {
    let imported = match format {
        Format::Codex { file } => {
            let imported = codex::import(&read(file)?).map_err(|e| located(file, &e))?;
            print_notes(file, &imported.notes);
            imported
        }
        Format::Gemini { file } if file.is_dir() => {
            let files = policy_files(file)?;
            let texts = files
                .iter()
                .map(|f| Ok((f.clone(), read(f)?)))
                .collect::<Result<Vec<_>>>()?;
            let (imported, notes) = gemini::import_all(&texts).map_err(|(f, e)| located(&f, &e))?;
            for (f, notes) in &notes {
                print_notes(f, notes);
            }
            imported
        }
        Format::Gemini { file } => {
            let imported = gemini::import(&read(file)?).map_err(|e| located(file, &e))?;
            print_notes(file, &imported.notes);
            imported
        }
    };
    crate::emit(&serde_json::to_string_pretty(&imported.to_json())?)?;
    Ok(ExitCode::SUCCESS)
}

fn print_notes(file: &Path, notes: &[Note]) {
    for note in notes {
        eprintln!("{}:{}: {}", file.display(), note.line, note.message);
    }
}

/// The `.toml` files of a policies directory, in name order (as Gemini CLI reads them, each file on its own).
fn policy_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| UsageError(format!("cannot read the directory `{}`: {e}", dir.display())))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "toml") && path.is_file())
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(UsageError(format!("`{}` holds no `.toml` policy file", dir.display())).into());
    }
    Ok(files)
}

fn read(file: &Path) -> Result<String> {
    std::fs::read_to_string(file)
        .map_err(|e| UsageError(format!("cannot read `{}`: {e}", file.display())).into())
}

/// A file that cannot be imported at all: a usage error naming the file and the line.
fn located(file: &Path, error: &Note) -> anyhow::Error {
    UsageError(format!("{}:{}: {}", file.display(), error.line, error.message)).into()
}

/// One word of a `Bash(…)` pattern that matches `word` literally: as it is when it holds only characters the
/// pattern syntax reads as themselves, double-quoted otherwise (a quoted `*` is no wildcard).
pub(crate) fn literal_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || "-_./=@%+,^~".contains(c));
    if plain {
        return word.to_owned();
    }
    let mut quoted = String::from("\"");
    for c in word.chars() {
        if c == '"' || c == '\\' {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted
}

/// Words as one shell command line, each quoted where the shell would otherwise split or expand it.
pub(crate) fn command_line(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_alphanumeric() || "-_./=@%+,:^".contains(c))
            {
                w.clone()
            } else {
                agent_decide::shell_quote(w)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::words::shell_words;

    #[test]
    fn words_are_split_as_a_shell_splits_them() {
        assert_eq!(
            shell_words(r#"gh pr view 'a b' "c \"d\"" e\ f"#).unwrap(),
            ["gh", "pr", "view", "a b", "c \"d\"", "e f"]
        );
        assert!(shell_words("git 'x").is_err());
        assert_eq!(
            command_line(&["echo".into(), "a b".into(), "it's".into()]),
            r"echo 'a b' 'it'\''s'"
        );
    }

    #[test]
    fn literal_words_match_only_themselves() {
        assert_eq!(literal_word("push"), "push");
        assert_eq!(literal_word("*.rs"), "\"*.rs\"");
        assert_eq!(literal_word("a b"), "\"a b\"");
        assert_eq!(literal_word("prefix:x"), "\"prefix:x\"");
        assert_eq!(literal_word(r#"say "hi""#), r#""say \"hi\"""#);
        for word in ["*", "a b", "x:*", "\"q\"", "back\\slash"] {
            let rule = format!("Bash({} go:*)", literal_word(word));
            assert!(
                agent_rules::Rule::parse(&rule, Decision::Deny, Source::CliArg).is_ok(),
                "{rule}"
            );
        }
    }
}
