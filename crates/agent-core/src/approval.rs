//! Answers to an ask: the `Approver` trait, channel and headless approvers, and the rule an answer saves.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;

use agent_decide::Decided;
use agent_rules::Family;
use agent_tool_traits::{Access, DecidedBy, ToolCall, ToolKind, Verdict, kind_of};
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};

/// The future an approver returns. Boxed so that `dyn Approver` works with any executor.
pub type ApprovalFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the user answered to an ask (docs/rules.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalAnswer {
    /// Run this call; the narrow rule becomes a session allow rule.
    AllowOnce,
    /// Run this call and save the narrow rule in the project's `.agent-guard/settings.local.json`.
    AllowAlways,
    /// Do not run this call.
    Deny,
    /// Do not run this call, and deny the narrow rule for the rest of the session.
    DontAskAgain,
}

impl ApprovalAnswer {
    /// The name used in scenario files and traces: `allow_once`, `allow_always`, `deny`, `dont_ask_again`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::AllowOnce => "allow_once",
            Self::AllowAlways => "allow_always",
            Self::Deny => "deny",
            Self::DontAskAgain => "dont_ask_again",
        }
    }
}

/// One ask put to an approver.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// The session of the call.
    pub session_id: String,
    /// `lead` or the subagent's name.
    pub agent_name: String,
    /// The call, with the arguments that will run.
    pub call: ToolCall,
    /// The ask and who made it.
    pub verdict: Verdict,
    /// The exact rules "allow always" saves (and "allow once" adds for the session); empty when no allow rule
    /// could ever turn this ask into an allow (an ask rule, a safety ask, a hook's request).
    pub rules: Vec<String>,
    /// The settings file "allow always" writes to.
    pub settings_file: PathBuf,
}

/// Whoever answers asks: a terminal, an embedding application, a script. `None` means no answer, which the
/// runtime treats as a deny.
pub trait Approver: Send + Sync {
    /// Answers an ask about a call.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a, Option<ApprovalAnswer>>;

    /// Who answered `request` (asked after [`approve`](Self::approve) answered it), as the audit log's `approver`
    /// column names the party (`terminal`, `page:<session>`…); the default is `approver`, for an embedding
    /// application that does not say.
    fn party(&self, _request: &ApprovalRequest) -> agent_hooks::Approver {
        agent_hooks::Approver::Other("approver".to_owned())
    }

    /// Answers a question of the `ask_user` tool; the default has no user to ask.
    fn answer_question<'a>(&'a self, _question: &'a str) -> ApprovalFuture<'a, Option<String>> {
        Box::pin(std::future::ready(None))
    }
}

/// Who answered each ask an approver passed on to someone else (a server's page, its API), by call id, kept from
/// the answer until the runtime asks [`Approver::party`]: an approver that forwards asks learns the party only with
/// the answer.
#[derive(Debug, Default)]
pub struct AnsweredBy(std::sync::Mutex<std::collections::HashMap<String, String>>);

impl AnsweredBy {
    /// Records that `party` (as the server names it: `page:<session>`, `api`…) answered the ask of `call_id`.
    pub fn record(&self, call_id: &str, party: String) {
        self.parties().insert(call_id.to_owned(), party);
    }

    /// Who answered the ask of `call_id`, forgotten once told; the API when nobody said.
    pub fn take(&self, call_id: &str) -> agent_hooks::Approver {
        self.parties()
            .remove(call_id)
            .map_or(agent_hooks::Approver::Api, agent_hooks::Approver::Other)
    }

    fn parties(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, String>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// No user: every ask is denied (headless runs, CI).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct HeadlessApprover;

impl Approver for HeadlessApprover {
    fn approve<'a>(&'a self, _request: &'a ApprovalRequest) -> ApprovalFuture<'a, Option<ApprovalAnswer>> {
        Box::pin(std::future::ready(None))
    }
}

/// An ask waiting for an answer from the embedding application.
#[derive(Debug)]
pub struct PendingApproval {
    /// The ask.
    pub request: ApprovalRequest,
    reply: oneshot::Sender<ApprovalAnswer>,
}

impl PendingApproval {
    /// Answers the ask. Dropping a pending approval without answering denies it.
    pub fn respond(self, answer: ApprovalAnswer) {
        // The runtime may have stopped waiting (timeout); the answer then has nobody to go to.
        let _delivered = self.reply.send(answer);
    }
}

/// Hands every ask to a channel, for an application that embeds the runtime (a UI, a server).
#[derive(Debug, Clone)]
pub struct ChannelApprover {
    sender: mpsc::Sender<PendingApproval>,
}

impl ChannelApprover {
    /// An approver and the receiver of its asks; at most `capacity` asks wait unread.
    pub fn new(capacity: usize) -> (Self, mpsc::Receiver<PendingApproval>) {
        let (sender, receiver) = mpsc::channel(capacity.max(1));
        (Self { sender }, receiver)
    }
}

impl Approver for ChannelApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a, Option<ApprovalAnswer>> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            let pending = PendingApproval {
                request: request.clone(),
                reply,
            };
            self.sender.send(pending).await.ok()?;
            answer.await.ok()
        })
    }
}

/// Commands whose name alone says nothing about what they run: a rule never allows them by prefix, only an exact
/// command line.
const INTERPRETERS: &[&str] = &[
    "bash",
    "sh",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "csh",
    "tcsh",
    "python",
    "python2",
    "python3",
    "pypy",
    "node",
    "nodejs",
    "deno",
    "bun",
    "ruby",
    "perl",
    "php",
    "lua",
    "Rscript",
    "julia",
    "osascript",
    "env",
    "sudo",
    "su",
    "doas",
    "pkexec",
    "xargs",
    "eval",
    "exec",
    "source",
    ".",
    "command",
    "builtin",
    "nohup",
    "timeout",
    "nice",
    "time",
    "watch",
    "setsid",
    "stdbuf",
    "ionice",
    "npx",
    "bunx",
    "pnpx",
    "uvx",
    "pipx",
    "awk",
    "gawk",
    "sed",
    "find",
    "make",
    "docker",
    "kubectl",
    "ssh",
];

/// Subcommands that run something named by the next word (`npm run test`, `yarn exec jest`).
const RUNNER_SUBCOMMANDS: &[&str] = &["run", "run-script", "exec", "x", "dlx", "script", "task"];

/// The narrow rules that "allow always" would save for an ask (and "allow once" adds for the session). Empty when
/// an allow rule could never turn this ask into an allow: an ask rule, a safety ask and a hook's request are
/// bypass-immune (step 4 of docs/rules.md), so saving a rule for them would only mislead the user; a caution ask
/// (the network while it is blocked) is the one step-4 ask an allow rule lifts.
pub fn suggest_rules(tool: &str, args: &Value, decided: &Decided, cwd: &Path) -> Vec<String> {
    let verdict = decided.verdict();
    match verdict.provenance.step {
        Some(DecidedBy::Default | DecidedBy::Mode | DecidedBy::Classifier | DecidedBy::CautionAsk) => {}
        Some(
            DecidedBy::DenyRule
            | DecidedBy::LayerDeny
            | DecidedBy::HookBlock
            | DecidedBy::AskRule
            | DecidedBy::HookAsk
            | DecidedBy::SafetyAsk
            | DecidedBy::BypassMode
            | DecidedBy::AllowRule
            | DecidedBy::HookAllow
            | DecidedBy::Contained
            | DecidedBy::NoPrompt
            | DecidedBy::Approver
            | DecidedBy::Limit,
        )
        | None => return Vec::new(),
    }
    narrow_rules(tool, args, decided, cwd)
}

/// The narrowest rules naming this call, whatever step decided it: what "allow always" saves and what "don't ask
/// again" denies for the session.
pub(crate) fn narrow_rules(tool: &str, args: &Value, decided: &Decided, cwd: &Path) -> Vec<String> {
    match kind_of(tool) {
        ToolKind::Shell => shell_rules(decided),
        ToolKind::Read | ToolKind::Glob | ToolKind::Grep => path_rules("Read", decided, cwd, Access::Read),
        ToolKind::Write | ToolKind::Edit | ToolKind::NotebookEdit => {
            path_rules("Edit", decided, cwd, Access::Write)
        }
        ToolKind::WebFetch => agent_rules::describe(tool, args)
            .ok()
            .and_then(|target| match target {
                agent_rules::CallTarget::Web { host: Some(host), .. } => {
                    Some(vec![format!("WebFetch(domain:{host})")])
                }
                agent_rules::CallTarget::Web { host: None, .. }
                | agent_rules::CallTarget::Shell(_)
                | agent_rules::CallTarget::Files(..)
                | agent_rules::CallTarget::Agent(_)
                | agent_rules::CallTarget::Opaque => None,
            })
            .unwrap_or_default(),
        ToolKind::Agent => match args.get("subagent_type").and_then(Value::as_str) {
            Some(name) if plain_word(name) => vec![format!("Agent({name})")],
            _ => Vec::new(),
        },
        ToolKind::WebSearch | ToolKind::Mcp | ToolKind::Harmless | ToolKind::Other => {
            if plain_word(tool) {
                vec![tool.to_owned()]
            } else {
                Vec::new()
            }
        }
    }
}

/// One rule per command that is not read-only: `Bash(cmd sub:*)` for a command with a subcommand word, the exact
/// command line for anything else, and never a prefix of an interpreter or wrapper.
fn shell_rules(decided: &Decided) -> Vec<String> {
    let Some(analysis) = &decided.analysis else {
        return Vec::new();
    };
    if analysis.parse_error.is_some() {
        return Vec::new();
    }
    let mut rules = Vec::new();
    for command in analysis.commands.iter().filter(|c| !c.read_only) {
        let words = command.effective();
        // A word that is not a literal, or that the rule syntax would read as a wildcard or a delimiter, cannot be
        // saved faithfully; better no rule than a wider one.
        if !command.literal || words.is_empty() || !words.iter().all(|w| rule_safe_word(w)) {
            return Vec::new();
        }
        let (Some(name), rest) = (words.first(), words.get(1..).unwrap_or_default()) else {
            return Vec::new();
        };
        let rule = match rest.first() {
            Some(sub) if !INTERPRETERS.contains(&name.as_str()) && subcommand_word(sub) => {
                // `npm run X`, `cargo x X`: the word after a runner subcommand names what runs, so it belongs in
                // the prefix too (`Bash(npm run:*)` would allow every script).
                match rest.get(1) {
                    Some(target) if RUNNER_SUBCOMMANDS.contains(&sub.as_str()) && subcommand_word(target) => {
                        format!("Bash({name} {sub} {target}:*)")
                    }
                    Some(_) if RUNNER_SUBCOMMANDS.contains(&sub.as_str()) => {
                        format!("Bash({})", words.join(" "))
                    }
                    _ => format!("Bash({name} {sub}:*)"),
                }
            }
            _ => format!("Bash({})", words.join(" ")),
        };
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    rules
}

/// One exact path rule per file of the call: `/`-anchored inside the project, `//`-anchored outside.
fn path_rules(family: &str, decided: &Decided, cwd: &Path, access: Access) -> Vec<String> {
    let mut rules = Vec::new();
    for agent_decide::CheckedPath {
        access: file_access,
        check,
    } in &decided.paths
    {
        if *file_access != access {
            continue;
        }
        let path = check.resolved.as_deref().unwrap_or(&check.absolute);
        let text = match path.strip_prefix(cwd) {
            Ok(relative) => format!("/{}", relative.display()),
            Err(_) => format!("/{}", path.display()),
        };
        if text.contains(['*', '?', '[', ']', '{', '}', '(', ')', '\\'])
            || text.chars().any(char::is_whitespace)
        {
            return Vec::new();
        }
        let rule = format!("{family}({text})");
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    rules
}

fn rule_safe_word(word: &str) -> bool {
    !word.is_empty()
        && !word.contains(['*', '(', ')', '"', '\'', '\\', '\0'])
        && !word.chars().any(char::is_whitespace)
}

fn subcommand_word(word: &str) -> bool {
    !word.starts_with('-')
        && word.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':'))
}

fn plain_word(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
}

/// The project an answer to a call made in `cwd` is saved for ([`agent_rules::project_root`], the search bounded by
/// `home`): the rules of an answer are written relative to it and saved in its settings, so that an answer given in
/// a subdirectory neither lands beside it nor makes that subdirectory a project of its own (its `.agent-guard/`
/// would), which would leave the project's settings behind.
pub fn answer_project(cwd: &Path, home: Option<&Path>) -> PathBuf {
    agent_rules::project_root(cwd, home)
}

/// The settings file "allow always" writes to: the `.agent-guard/settings.local.json` of `project` (see
/// [`answer_project`]).
pub fn local_settings_file(project: &Path) -> PathBuf {
    Family::AgentGuard.local_settings_file(project)
}

/// Appends `rules` to `permissions.allow` of `file` (created when missing), keeping every other key, and
/// replaces the file atomically.
pub fn save_allow_rules(file: &Path, rules: &[String]) -> std::io::Result<()> {
    let mut document = match std::fs::read_to_string(file) {
        Ok(text) => serde_json::from_str::<Value>(&text).map_err(std::io::Error::other)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Value::Object(Map::new()),
        Err(e) => return Err(e),
    };
    let not_object =
        || std::io::Error::other(format!("`{}` is not a JSON object of settings", file.display()));
    let root = document.as_object_mut().ok_or_else(not_object)?;
    let permissions = root
        .entry("permissions")
        .or_insert_with(|| Value::Object(Map::new()));
    let permissions = permissions.as_object_mut().ok_or_else(not_object)?;
    let allow = permissions
        .entry("allow")
        .or_insert_with(|| Value::Array(Vec::new()));
    let allow = allow.as_array_mut().ok_or_else(not_object)?;
    for rule in rules {
        if !allow
            .iter()
            .any(|existing| existing.as_str() == Some(rule.as_str()))
        {
            allow.push(Value::String(rule.clone()));
        }
    }
    let text = serde_json::to_string_pretty(&document).map_err(std::io::Error::other)?;
    if let Some(parent) = file.parent() {
        // A `.agent-guard/` made here is git-ignored: the saved answers are this user's.
        agent_hooks::create_dir_all_ignored(parent)?;
    }
    let temporary = file.with_extension("json.tmp");
    std::fs::write(&temporary, format!("{text}\n"))?;
    std::fs::rename(&temporary, file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saving_keeps_other_keys_and_does_not_duplicate() {
        let dir = tempfile::tempdir().unwrap();
        let file = local_settings_file(dir.path());
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(
            &file,
            r#"{"permissions":{"deny":["Bash(git push:*)"]},"agentGuard":{"blockNetwork":true}}"#,
        )
        .unwrap();
        save_allow_rules(&file, &["Bash(npm test:*)".to_owned()]).unwrap();
        save_allow_rules(&file, &["Bash(npm test:*)".to_owned()]).unwrap();
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(
            saved["permissions"]["allow"],
            serde_json::json!(["Bash(npm test:*)"])
        );
        assert_eq!(
            saved["permissions"]["deny"],
            serde_json::json!(["Bash(git push:*)"])
        );
        assert_eq!(saved["agentGuard"]["blockNetwork"], true);
    }

    #[test]
    fn rule_words() {
        assert!(subcommand_word("test") && subcommand_word("run-all") && !subcommand_word("-e"));
        assert!(!subcommand_word("./x") && !subcommand_word("a.py"));
        assert!(!rule_safe_word("a*") && !rule_safe_word("") && rule_safe_word("--flag=1"));
    }
}
