//! `agent-guard diff`: what changes between two settings files, and which logged calls would be decided otherwise.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use agent_decide::{CallInput, Deciders, DecisionBound, Guard, GuardOptions, GuardSettings};
use agent_hooks::{AuditDatabase, AuditFilter, AuditReader, AuditRow, AuditStatus};
use agent_rules::{PermissionMode, Rule, SessionState, Settings};
use agent_tool_traits::{Decision, Source, ToolKind, Verdict};
use anyhow::{Context, Result};
use serde_json::Value;

use crate::UsageError;
use crate::test_cmd::{call_text, provenance_text};

// The arguments of `agent-guard diff`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct DiffArgs {
    /// OLD and NEW settings files; with `--rev`, the one settings file whose revisions are compared.
    #[arg(value_name = "FILE", required = true, num_args = 1..=2)]
    files: Vec<PathBuf>,
    /// Compare two git revisions of one settings file: `A..B`; `A..` compares revision A with the file as it is.
    #[arg(long, value_name = "A..B")]
    rev: Option<String>,
    /// Replay the calls of this audit log (a SQLite file, a `sqlite:` URL or a `postgres://` URL) under both
    /// settings and list every call whose decision changes.
    #[arg(long, value_name = "PATH|URL")]
    audit_db: Option<AuditDatabase>,
    /// Only calls logged at or after this time (RFC 3339 UTC, e.g. 2026-11-30T02:47:15Z).
    #[arg(long, value_name = "TIME", requires = "audit_db", value_parser = crate::audit_cmd::parse_since)]
    since: Option<String>,
}

/// One side of the comparison: a settings text and the file it is (or was) the content of.
struct Side {
    label: String,
    path: PathBuf,
    text: String,
}

/// A logged call decided differently under NEW than under OLD.
struct Change {
    row: AuditRow,
    call: String,
    old: Verdict,
    new: Verdict,
}

pub(crate) fn run(args: &DiffArgs) -> Result<ExitCode> {
    let here = std::env::current_dir().context("cannot read the current directory")?;
    let (old, new) = sides(args)?;
    let old_settings = load(&old, &here)?;
    let new_settings = load(&new, &here)?;
    let mut out = String::new();
    let _ = writeln!(out, "old: {}\nnew: {}", old.label, new.label);

    let mut looser = false;
    let pairs = |s: &Settings| -> Vec<(Decision, String)> {
        s.rules().iter().map(|r| (r.behavior, r.text.clone())).collect()
    };
    let (old_rules, new_rules) = (pairs(&old_settings), pairs(&new_settings));
    let added: Vec<&(Decision, String)> = new_rules.iter().filter(|r| !old_rules.contains(r)).collect();
    let removed: Vec<&(Decision, String)> = old_rules.iter().filter(|r| !new_rules.contains(r)).collect();
    let _ = writeln!(out, "\nrules added ({}):", added.len());
    for (behavior, text) in &added {
        looser |= *behavior == Decision::Allow;
        let _ = writeln!(out, "  + {:<5} {text}", behavior.as_str());
    }
    let _ = writeln!(out, "rules removed ({}):", removed.len());
    for (behavior, text) in &removed {
        looser |= *behavior != Decision::Allow;
        let _ = writeln!(out, "  - {:<5} {text}", behavior.as_str());
    }
    let (old_mode, new_mode) = (old_settings.mode().map(|m| m.0), new_settings.mode().map(|m| m.0));
    if old_mode != new_mode {
        let name = |m: Option<PermissionMode>| m.map_or_else(|| "(none)".to_owned(), |m| m.to_string());
        let _ = writeln!(out, "mode: {} -> {}", name(old_mode), name(new_mode));
        looser |= !matches!(new_mode, Some(PermissionMode::Plan | PermissionMode::DontAsk));
    }
    if agent_guard_keys(&old_settings) != agent_guard_keys(&new_settings) {
        let _ = writeln!(
            out,
            "agentGuard settings changed (network, protected paths, sandbox, roots…): counted as looser"
        );
        looser = true;
    }
    let shadowed = shadowed(new_settings.rules());
    let _ = writeln!(out, "rules that never decide in new ({}):", shadowed.len());
    for line in &shadowed {
        let _ = writeln!(out, "  {line}");
    }

    let mut summary = format!(
        "{} rules added, {} removed, {} never decide",
        added.len(),
        removed.len(),
        shadowed.len()
    );
    if let Some(db) = &args.audit_db {
        let rows = read_log(db, args.since.as_deref())?;
        let replay = replay(&rows, &old, &new)?;
        let _ = writeln!(
            out,
            "\naudit log {db}: {} calls replayed{}",
            replay.replayed,
            if replay.unreplayable > 0 {
                format!(
                    ", {} not replayable (logged without their input, which older logs and inputs over 64 KiB are)",
                    replay.unreplayable
                )
            } else {
                String::new()
            }
        );
        if !replay.recreated.is_empty() {
            let _ = writeln!(
                out,
                "  working directories that no longer exist were re-created empty for the replay: {}",
                replay
                    .recreated
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        let (loose, strict): (Vec<&Change>, Vec<&Change>) = replay
            .changes
            .iter()
            .partition(|c| c.new.decision < c.old.decision);
        looser |= !loose.is_empty();
        render_group(&mut out, "looser", &loose);
        render_group(&mut out, "stricter", &strict);
        let _ = write!(
            summary,
            "; {} looser, {} stricter",
            calls(loose.len()),
            calls(strict.len())
        );
    }
    let _ = write!(
        out,
        "\n{summary}{}",
        if looser {
            ": the change loosens the policy"
        } else {
            ""
        }
    );
    crate::emit(&out)?;
    Ok(if looser {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// OLD and NEW from two files, or from two revisions of one.
fn sides(args: &DiffArgs) -> Result<(Side, Side)> {
    let read = |path: &Path| -> Result<Side> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| UsageError(format!("cannot read `{}`: {e}", path.display())))?;
        Ok(Side {
            label: path.display().to_string(),
            path: std::path::absolute(path).unwrap_or_else(|_| path.to_owned()),
            text,
        })
    };
    match (&args.rev, args.files.as_slice()) {
        (None, [old, new]) => Ok((read(old)?, read(new)?)),
        (None, _) => Err(UsageError(
            "`diff` compares two files: OLD NEW (or one file with --rev A..B)".to_owned(),
        )
        .into()),
        (Some(range), [file]) => {
            let Some((a, b)) = range.split_once("..").filter(|(a, _)| !a.is_empty()) else {
                return Err(UsageError(format!("`--rev {range}` is not `A..B` or `A..`")).into());
            };
            let old = at_revision(file, a)?;
            let new = if b.is_empty() {
                read(file)?
            } else {
                at_revision(file, b)?
            };
            Ok((old, new))
        }
        (Some(_), _) => Err(UsageError("with --rev, `diff` takes one settings file".to_owned()).into()),
    }
}

/// The content of `file` at git revision `rev`.
fn at_revision(file: &Path, rev: &str) -> Result<Side> {
    let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_owned());
    let dir = absolute.parent().unwrap_or(Path::new("/"));
    let name = absolute
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if rev.starts_with('-') {
        return Err(UsageError(format!("`{rev}` is not a revision")).into());
    }
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .arg("show")
        .arg(format!("{rev}:./{name}"))
        .output()
        .context("cannot run git")?;
    if !output.status.success() {
        return Err(UsageError(format!(
            "cannot read `{}` at revision `{rev}`: {}",
            file.display(),
            crate::one_line(&String::from_utf8_lossy(&output.stderr))
        ))
        .into());
    }
    Ok(Side {
        label: format!("{} at {rev}", file.display()),
        path: absolute,
        text: String::from_utf8(output.stdout)
            .map_err(|_| UsageError(format!("`{}` at `{rev}` is not UTF-8", file.display())))?,
    })
}

/// A side's settings alone (no other file, no environment), as `--settings` files are read: source `cliArg`.
fn load(side: &Side, cwd: &Path) -> Result<Settings> {
    let mut settings = Settings::new();
    settings
        .add_text(&side.text, &side.path, Source::CliArg, cwd)
        .map_err(|e| UsageError(format!("{}: {e}", side.label)))?;
    GuardSettings::from_settings(&settings).map_err(|e| UsageError(format!("{}: {e}", side.label)))?;
    Ok(settings)
}

/// The `agentGuard` section without its tests, which never change a decision.
fn agent_guard_keys(settings: &Settings) -> Vec<Value> {
    settings
        .agent_guard_sections()
        .iter()
        .map(|section| {
            let mut value = section.value.clone();
            if let Some(object) = value.as_object_mut() {
                object.remove("tests");
            }
            value
        })
        .collect()
}

/// The rules that never decide: every call they match is matched by a stricter rule (deny beats ask beats allow),
/// or by another rule of the same behaviour that covers them (redundant).
fn shadowed(rules: &[Rule]) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        let by = rules.iter().enumerate().find(|(j, other)| {
            *j != i
                && covers(other, rule)
                && (other.behavior > rule.behavior
                    || (other.behavior == rule.behavior && (!covers(rule, other) || *j < i)))
        });
        if let Some((_, other)) = by {
            let why = if other.behavior > rule.behavior {
                format!(
                    "the {} rule `{}` decides every call it matches",
                    other.behavior, other.text
                )
            } else {
                format!(
                    "redundant: the {} rule `{}` covers it",
                    other.behavior, other.text
                )
            };
            lines.push(format!("{} {}: {why}", rule.behavior, rule.text));
        }
    }
    lines
}

/// Whether every call `inner` matches is matched by `outer`. Decided on what the rule text shows for sure: `*`,
/// a whole MCP server, a whole tool, a shell prefix pattern covering a longer one, a `dir/**` glob covering paths
/// beneath it, the same content; anything else is not claimed.
fn covers(outer: &Rule, inner: &Rule) -> bool {
    if outer.text == "*" {
        return true;
    }
    let (Some(outer_tool), Some(inner_tool)) = (outer.tool(), inner.tool()) else {
        // `mcp__server` covers the tools of that server.
        let server = outer.text.trim_end_matches("__*");
        return outer.tool().is_none()
            && (inner.text == server || inner.text.starts_with(&format!("{server}__")));
    };
    if outer_tool != inner_tool {
        return false;
    }
    if !outer.has_content() {
        return true;
    }
    let (Some(a), Some(b)) = (content(&outer.text), content(&inner.text)) else {
        return false;
    };
    if a == b {
        return true;
    }
    match agent_tool_traits::kind_of(outer_tool.as_str()) {
        ToolKind::Shell => {
            let Some(prefix) = a.strip_suffix(":*").or_else(|| a.strip_suffix(" *")) else {
                return false;
            };
            if prefix.contains(['*', '"', '\'', '\\']) || prefix.starts_with("prefix:") {
                return false;
            }
            let body = b.strip_suffix(":*").or_else(|| b.strip_suffix(" *")).unwrap_or(b);
            let outer_words: Vec<&str> = prefix.split_whitespace().collect();
            let inner_words: Vec<&str> = body.split_whitespace().collect();
            inner_words.len() >= outer_words.len()
                && outer_words
                    .iter()
                    .zip(&inner_words)
                    .all(|(o, i)| o == i && !i.contains(['*', '"', '\'', '\\']))
        }
        ToolKind::Read
        | ToolKind::Glob
        | ToolKind::Grep
        | ToolKind::Write
        | ToolKind::Edit
        | ToolKind::NotebookEdit => a
            .strip_suffix("/**")
            .is_some_and(|dir| !dir.contains(['*', '?', '[']) && b.starts_with(&format!("{dir}/"))),
        ToolKind::WebFetch
        | ToolKind::WebSearch
        | ToolKind::Agent
        | ToolKind::Mcp
        | ToolKind::Harmless
        | ToolKind::Other => false,
    }
}

/// The content of `Tool(content)`.
fn content(text: &str) -> Option<&str> {
    text.split_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .map(str::trim)
}

fn read_log(db: &AuditDatabase, since: Option<&str>) -> Result<Vec<AuditRow>> {
    if let AuditDatabase::SqliteFile(path) = db
        && !path.exists()
        && !agent_hooks::spool_path(db).is_some_and(|spool| spool.exists())
    {
        return Err(UsageError(format!("no audit database at `{}`", path.display())).into());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    runtime.block_on(async {
        let mut reader = AuditReader::open(db, Duration::from_secs(10))
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let filter = AuditFilter {
            since: since.map(str::to_owned),
            ..AuditFilter::default()
        };
        let rows = reader.query(&filter).await.map_err(|e| anyhow::anyhow!("{e}"));
        reader.close().await;
        rows
    })
}

/// What replaying the log gave.
struct Replay {
    replayed: usize,
    unreplayable: usize,
    recreated: Vec<PathBuf>,
    changes: Vec<Change>,
}

/// Decides every logged call under both sides, as `check` decides a call: alone, in a fresh session, through the
/// bounded decision entry, in the working directory and mode it was made in.
fn replay(rows: &[AuditRow], old: &Side, new: &Side) -> Result<Replay> {
    let mut result = Replay {
        replayed: 0,
        unreplayable: 0,
        recreated: Vec::new(),
        changes: Vec::new(),
    };
    let mut scratch = Recreated::default();
    let mut guards: HashMap<(bool, String, Option<PermissionMode>), Arc<Guard>> = HashMap::new();
    for row in rows {
        // A stop row and a cleared taint are no call; an answer of the PermissionRequest hook answers a call whose
        // own row (`check`'s) is replayed.
        if matches!(row.status, AuditStatus::SessionStop | AuditStatus::TaintCleared)
            || row.agent_name == crate::hook_audit::APPROVE_AGENT
        {
            continue;
        }
        let (Some(input), Some(cwd)) = (row.tool_input.as_deref(), row.cwd.as_deref()) else {
            result.unreplayable += 1;
            continue;
        };
        let Ok(input) = serde_json::from_str::<Value>(input) else {
            result.unreplayable += 1;
            continue;
        };
        scratch.ensure(Path::new(cwd));
        let mode = row
            .permission_mode
            .as_deref()
            .and_then(|m| m.parse::<PermissionMode>().ok());
        let mut decide = |is_new: bool| -> Result<Verdict> {
            let side = if is_new { new } else { old };
            let key = (is_new, cwd.to_owned(), mode);
            let guard = match guards.get(&key) {
                Some(guard) => Arc::clone(guard),
                None => {
                    let cwd_path = PathBuf::from(cwd);
                    let project = crate::load::project(&cwd_path);
                    // Both sides are read as the content of OLD's file, so that a rule anchored at its file's
                    // project (`Read(/src/**)`) means the same files on both sides: the comparison is of the
                    // contents, not of where the two files lie.
                    let mut settings = Settings::new();
                    settings
                        .add_text(&side.text, &old.path, Source::CliArg, &project)
                        .map_err(|e| UsageError(format!("{}: {e}", side.label)))?;
                    let options = GuardOptions {
                        mode: mode.map(|m| (m, Source::Session)),
                        ..crate::load::guard_options(&cwd_path, &project)
                    };
                    let guard = Arc::new(
                        Guard::new(&settings, &options)
                            .map_err(|e| UsageError(format!("{}: {e}", side.label)))?,
                    );
                    guards.insert(key, Arc::clone(&guard));
                    guard
                }
            };
            let call = CallInput::new(row.tool_name.as_str(), input.clone());
            let decided =
                DecisionBound::from_env().decide(&Deciders::new(guard), call, SessionState::default());
            Ok(decided.resolution.verdict)
        };
        let before = decide(false)?;
        let after = decide(true)?;
        result.replayed += 1;
        if before.decision != after.decision {
            result.changes.push(Change {
                call: call_text(&row.tool_name, &input),
                row: row.clone(),
                old: before,
                new: after,
            });
        }
    }
    result.recreated = scratch.created.clone();
    Ok(result)
}

/// Working directories of logged calls that no longer exist, created empty for the replay (a call in a missing
/// directory cannot be placed in the sandbox, so both sides would only ask) and removed again afterwards.
#[derive(Default)]
struct Recreated {
    /// The directories created, outermost first.
    created: Vec<PathBuf>,
}

impl Recreated {
    fn ensure(&mut self, dir: &Path) {
        if !dir.is_absolute() || dir.exists() {
            return;
        }
        let mut missing: Vec<PathBuf> = dir
            .ancestors()
            .take_while(|a| !a.exists())
            .map(Path::to_path_buf)
            .collect();
        missing.reverse();
        for path in missing {
            if std::fs::create_dir(&path).is_ok() {
                self.created.push(path);
            }
        }
    }
}

impl Drop for Recreated {
    fn drop(&mut self) {
        // Only what was created, innermost first, and only while still empty.
        for path in self.created.iter().rev() {
            let _ = std::fs::remove_dir(path);
        }
    }
}

/// `1 call`, `2 calls`.
fn calls(count: usize) -> String {
    if count == 1 {
        "1 call".to_owned()
    } else {
        format!("{count} calls")
    }
}

/// One direction of change: a count per transition, then every call.
fn render_group(out: &mut String, name: &str, changes: &[&Change]) {
    let _ = writeln!(out, "\n{name}: {}", calls(changes.len()));
    let mut transitions: Vec<((Decision, Decision), usize)> = Vec::new();
    for change in changes {
        let key = (change.old.decision, change.new.decision);
        match transitions.iter_mut().find(|(k, _)| *k == key) {
            Some((_, count)) => *count += 1,
            None => transitions.push((key, 1)),
        }
    }
    for ((from, to), count) in &transitions {
        let _ = writeln!(out, "  {from} -> {to}: {count}");
    }
    for change in changes {
        let _ = writeln!(
            out,
            "  {} -> {}  {}  [session {}, step {}, {}]\n      was {}; now {}",
            change.old.decision,
            change.new.decision,
            change.call,
            change.row.session_id,
            change.row.step,
            change.row.ts,
            provenance_text(&change.old.provenance),
            provenance_text(&change.new.provenance),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(behavior: Decision, text: &str) -> Rule {
        Rule::parse(text, behavior, Source::CliArg).unwrap()
    }

    #[test]
    fn coverage_is_claimed_only_where_the_text_shows_it() {
        let cases = [
            ("*", "Read(./x)", true),
            ("Bash", "Bash(git push:*)", true),
            ("Bash(git:*)", "Bash(git push:*)", true),
            ("Bash(git *)", "Bash(git push origin)", true),
            ("Bash(git push:*)", "Bash(git:*)", false),
            ("Bash(git:*)", "Bash(gitk)", false),
            ("Bash(git*)", "Bash(git push)", false),
            ("Read(./secrets/**)", "Read(./secrets/a.pem)", true),
            ("Read(./secrets/**)", "Read(./secret)", false),
            ("Read(./secrets/**)", "Edit(./secrets/a.pem)", false),
            ("mcp__github", "mcp__github__create_issue", true),
            ("mcp__github", "mcp__gitlab__x", false),
            (
                "WebFetch(domain:example.com)",
                "WebFetch(domain:example.com)",
                true,
            ),
        ];
        for (outer, inner, want) in cases {
            assert_eq!(
                covers(&rule(Decision::Deny, outer), &rule(Decision::Allow, inner)),
                want,
                "{outer} covers {inner}"
            );
        }
    }

    #[test]
    fn rows_without_their_input_are_counted_not_replayed() {
        let dir = tempfile::tempdir().unwrap();
        let side = |text: &str| Side {
            label: "s".to_owned(),
            path: dir.path().join("s.json"),
            text: text.to_owned(),
        };
        let row = |input: Option<&str>, status: AuditStatus| AuditRow {
            id: Some(1),
            session_id: "s".to_owned(),
            step: 1,
            tool_name: "Bash".to_owned(),
            status,
            decision: Some("allow".to_owned()),
            decided_by: Some("rules/default".to_owned()),
            elapsed_ms: 1,
            output_preview: String::new(),
            agent_name: "lead".to_owned(),
            ts: "2026-12-01T00:00:00.000Z".to_owned(),
            tool_input: input.map(str::to_owned),
            cwd: input.map(|_| dir.path().display().to_string()),
            permission_mode: input.map(|_| "default".to_owned()),
            detail: agent_hooks::AuditDetail::default(),
        };
        let rows = [
            row(Some(r#"{"command":"git push"}"#), AuditStatus::Ok),
            row(None, AuditStatus::Ok),
            row(Some("not json"), AuditStatus::Denied),
            row(None, AuditStatus::SessionStop),
            // A cleared taint keeps the taint as its input: no call to replay, and not counted as one.
            row(Some(r#"{"untrusted":null}"#), AuditStatus::TaintCleared),
        ];
        let old = side(r#"{"permissions": {"ask": ["Bash(git push:*)"]}}"#);
        let new = side(r#"{"permissions": {"deny": ["Bash(git push:*)"]}}"#);
        let replay = replay(&rows, &old, &new).unwrap();
        assert_eq!((replay.replayed, replay.unreplayable), (1, 2));
        let [change] = replay.changes.as_slice() else {
            panic!("one change expected")
        };
        assert_eq!(
            (change.old.decision, change.new.decision),
            (Decision::Ask, Decision::Deny)
        );
        assert!(replay.recreated.is_empty());
    }

    #[test]
    fn stricter_or_redundant_rules_are_named() {
        let rules = [
            rule(Decision::Allow, "Bash(git push:*)"),
            rule(Decision::Deny, "Bash(git:*)"),
            rule(Decision::Ask, "Bash(npm publish)"),
            rule(Decision::Ask, "Bash(npm publish)"),
            rule(Decision::Allow, "Read"),
        ];
        assert_eq!(
            shadowed(&rules),
            [
                "allow Bash(git push:*): the deny rule `Bash(git:*)` decides every call it matches",
                "ask Bash(npm publish): redundant: the ask rule `Bash(npm publish)` covers it",
            ]
        );
    }
}
