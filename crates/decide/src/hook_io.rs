//! The coding agent's PreToolUse hook protocol: the input on stdin and the decision on stdout.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use agent_tool_traits::{Confinement, Verdict};

use crate::decided::SessionLimit;
use crate::error::{Error, Result};

/// One PreToolUse hook input. Unknown fields are ignored.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct HookInput {
    /// The coding agent's session.
    #[serde(default)]
    pub session_id: String,
    /// The working directory of the call: the sandbox's root.
    pub cwd: String,
    /// The coding agent's permission mode.
    #[serde(default)]
    pub permission_mode: Option<String>,
    /// `PreToolUse`.
    #[serde(default)]
    pub hook_event_name: Option<String>,
    /// The tool's name.
    pub tool_name: String,
    /// The tool's arguments.
    #[serde(default)]
    pub tool_input: Value,
    /// The coding agent's id of the tool call, when it sends one: the key that links the call's row of the audit
    /// log to the runs `agent-guard undo` records for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
}

impl HookInput {
    /// Parses one input; the error says what is missing or malformed.
    pub fn parse(text: &str) -> Result<Self> {
        let input: Self = serde_json::from_str(text).map_err(|e| Error::Input(e.to_string()))?;
        if input.tool_name.is_empty() {
            return Err(Error::Input("`tool_name` is empty".to_owned()));
        }
        if input.cwd.is_empty() {
            return Err(Error::Input("`cwd` is empty".to_owned()));
        }
        if let Some(event) = input.hook_event_name.as_deref()
            && event != "PreToolUse"
        {
            return Err(Error::Input(format!(
                "`hook_event_name` is `{event}`; only `PreToolUse` is decided"
            )));
        }
        // A mode the guard does not know is refused, not read as `default`: the coding agent's session may be in a
        // stricter one (`plan`, `dontAsk`), and a silent fallback would decide as if it were not.
        if let Some(mode) = input.permission_mode.as_deref()
            && let Err(e) = mode.parse::<agent_rules::PermissionMode>()
        {
            return Err(Error::Input(format!("`permission_mode`: {e}")));
        }
        Ok(input)
    }
}

/// The decision line printed for one input.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookOutput {
    #[serde(rename = "hookSpecificOutput")]
    hook_specific_output: Specific,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Specific {
    hook_event_name: &'static str,
    permission_decision: &'static str,
    permission_decision_reason: String,
    /// The tool input the coding agent runs instead of its own: an allowed shell command wrapped in the kernel
    /// sandbox.
    #[serde(skip_serializing_if = "Option::is_none")]
    updated_input: Option<Value>,
}

impl HookOutput {
    /// The output for `verdict`.
    pub fn from_verdict(verdict: &Verdict) -> Self {
        Self {
            hook_specific_output: Specific {
                hook_event_name: "PreToolUse",
                permission_decision: verdict.decision.as_str(),
                permission_decision_reason: prefixed_reason(verdict),
                updated_input: None,
            },
        }
    }

    /// The same output with `input` as the tool input the coding agent runs.
    #[must_use]
    pub fn with_updated_input(mut self, input: Value) -> Self {
        self.hook_specific_output.updated_input = Some(input);
        self
    }

    /// The tool input the coding agent is told to run instead, when there is one.
    pub fn updated_input(&self) -> Option<&Value> {
        self.hook_specific_output.updated_input.as_ref()
    }

    /// The decision as printed.
    pub fn decision(&self) -> &str {
        self.hook_specific_output.permission_decision
    }

    /// The reason as printed (`agent-guard: …`).
    pub fn reason(&self) -> &str {
        &self.hook_specific_output.permission_decision_reason
    }

    /// One JSON line.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| {
            // Serialising plain strings cannot fail; a failure would still print a strict decision.
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"agent-guard: output error"}}"#.to_owned()
        })
    }
}

/// `agent-guard: ` and the verdict's reasons joined by `; ` ([`Verdict::reason`]), built in one string.
fn prefixed_reason(verdict: &Verdict) -> String {
    const PREFIX: &str = "agent-guard: ";
    let length = verdict.reasons.iter().map(|r| r.len() + 2).sum::<usize>();
    let mut reason = String::with_capacity(PREFIX.len() + length);
    reason.push_str(PREFIX);
    for (index, part) in verdict.reasons.iter().enumerate() {
        if index > 0 {
            reason.push_str("; ");
        }
        reason.push_str(part);
    }
    reason
}

/// The input of a search tool's call (the coding agent's Grep, which runs ripgrep with its `glob` as `--glob`)
/// narrowed to leave out `excludes` ([`Decided::search_excludes`](crate::Decided::search_excludes)): its `glob`
/// becomes `!NAME`, or `!{A,B}` for several, a glob ripgrep excludes at every depth. `None` when the input is not
/// an object, already has a `glob` (which a second one could not be added to in one string), or nothing is to be
/// left out.
pub fn narrowed_search_input(tool_input: &Value, excludes: &[String]) -> Option<Value> {
    let glob = match excludes {
        [] => return None,
        [one] => format!("!{one}"),
        many => format!("!{{{}}}", many.join(",")),
    };
    let mut narrowed = tool_input.clone();
    let object = narrowed.as_object_mut()?;
    if object.contains_key("glob") {
        return None;
    }
    object.insert("glob".to_owned(), Value::String(glob));
    Some(narrowed)
}

/// What the coding agent runs for an allowed shell call under the kernel sandbox: `tool_input` with its
/// `command` replaced by `<program> sandbox --profile … [--allow-network [--allow-domain <host>]… [--service <port>]… [--services-only]
/// [--session-domains-only --session <id> --session-taint <text> [--session-domain <host>]…]] [--git-writes]
/// [--background] [--counts-on-undo [--undo-held <place>]…] --root <root> [--project <dir>] [--settings <file>]… -- bash -c '<command>'`: `root` is the call's working
/// directory and the project the coding agent declared for its session, if any ([`SandboxRoot`]); `reach` is what
/// the proxy lets the line reach beyond the settings' own domains ([`ProxyReach`]), passed only with the network. `--git-writes` is given when the confinement lets git write the repository
/// ([`Confinement::git_writes`]); without it `.git` is read-only. The original line is one argument of `bash -c`,
/// single-quoted so that the coding agent's shell passes it byte for byte and nothing in it is read twice. Other
/// fields of the input are kept. `None` when the input has no string `command`.
pub fn sandboxed_input(
    tool_input: &Value,
    program: &std::path::Path,
    confinement: Confinement,
    root: SandboxRoot<'_>,
    settings: &[std::path::PathBuf],
    reach: ProxyReach<'_>,
) -> Option<Value> {
    let command = tool_input.get("command")?.as_str()?;
    let mut line = String::with_capacity(command.len() + 256);
    push_quoted(&mut line, &program.to_string_lossy());
    line.push_str(" sandbox --profile ");
    line.push_str(confinement.profile.as_str());
    if confinement.network {
        line.push_str(" --allow-network");
        for domain in reach.domains {
            line.push_str(" --allow-domain ");
            push_quoted(&mut line, domain);
        }
        for port in reach.services {
            line.push_str(" --service ");
            line.push_str(&port.to_string());
        }
        if reach.services_only && !reach.services.is_empty() {
            line.push_str(" --services-only");
        }
        if let Some((id, limit)) = reach.session {
            line.push_str(" --session-domains-only --session ");
            push_quoted(&mut line, id);
            line.push_str(" --session-taint ");
            push_quoted(&mut line, &limit.taint());
            for domain in &limit.domains {
                line.push_str(" --session-domain ");
                push_quoted(&mut line, domain);
            }
        }
    }
    if confinement.git_writes && confinement.profile == agent_tool_traits::SandboxProfile::WorkspaceWrite {
        line.push_str(" --git-writes");
    }
    if confinement.background && confinement.profile == agent_tool_traits::SandboxProfile::WorkspaceWrite {
        line.push_str(" --background");
    }
    if confinement.undo && confinement.profile == agent_tool_traits::SandboxProfile::WorkspaceWrite {
        line.push_str(" --counts-on-undo");
        for place in root.undo_held {
            line.push_str(" --undo-held ");
            push_quoted(&mut line, &place.to_string_lossy());
        }
    }
    line.push_str(" --root ");
    push_quoted(&mut line, root.cwd);
    if let Some(project) = root.project {
        line.push_str(" --project ");
        push_quoted(&mut line, &project.to_string_lossy());
    }
    for file in settings {
        line.push_str(" --settings ");
        push_quoted(&mut line, &file.to_string_lossy());
    }
    line.push_str(" -- bash -c ");
    push_quoted(&mut line, command);
    // The other arguments as they are; the command, replaced, is not copied first.
    let mut input: serde_json::Map<String, Value> = tool_input
        .as_object()?
        .iter()
        .filter(|(name, _)| *name != "command")
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    input.insert("command".to_owned(), Value::String(line));
    Some(Value::Object(input))
}

/// What the sandbox's proxy lets a line reach beyond the settings' own domains.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProxyReach<'a> {
    /// The hosts the decision allowed ([`Decided::domains`](crate::Decided::domains)): `--allow-domain`.
    pub domains: &'a [String],
    /// The ports of this project's servers run in the background that the line reaches
    /// ([`Decided::services`](crate::Decided::services)): `--service`.
    pub services: &'a [u16],
    /// Whether the proxy reaches nothing but those ([`Decided::services_only`](crate::Decided::services_only)):
    /// `--services-only`.
    pub services_only: bool,
    /// The session's id and the limit its untrusted content sets on the proxy
    /// ([`Decided::session_limit`](crate::Decided::session_limit)).
    pub session: Option<(&'a str, &'a SessionLimit)>,
}

/// Where a sandboxed command is run from: the call's working directory, where the sandbox finds its settings and
/// its roots as the decision did, and the project the coding agent declared for the session (Claude Code's
/// `CLAUDE_PROJECT_DIR`), which the decision took into the roots ([`agent_rules::project_root_declared`]) and
/// the sandbox must take too.
#[derive(Clone, Copy, Debug)]
pub struct SandboxRoot<'a> {
    /// The call's working directory (`--root`).
    pub cwd: &'a str,
    /// The project the coding agent declared (`--project`), if any.
    pub project: Option<&'a std::path::Path>,
    /// The places whose ignored data the decision counted on the snapshots holding (`--undo-held`, with
    /// `--counts-on-undo`): [`Contained::undo_held`](crate::Contained::undo_held).
    pub undo_held: &'a [std::path::PathBuf],
}

impl<'a> SandboxRoot<'a> {
    /// A working directory with no declared project.
    pub fn cwd(cwd: &'a str) -> Self {
        Self {
            cwd,
            project: None,
            undo_held: &[],
        }
    }
}

/// `text` as one single-quoted shell word: every byte as it is, each `'` written as `'\''`.
pub fn shell_quote(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    push_quoted(&mut quoted, text);
    quoted
}

/// [`shell_quote`] of `text` appended to `line`, a run of quote-free text at a time.
fn push_quoted(line: &mut String, text: &str) {
    line.push('\'');
    let mut runs = text.split('\'');
    if let Some(first) = runs.next() {
        line.push_str(first);
    }
    for run in runs {
        line.push_str("'\\''");
        line.push_str(run);
    }
    line.push('\'');
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_tool_traits::{Decision, Layer, Provenance};

    /// A quoted text is one word that the shell reads back as the text, single quotes included.
    #[test]
    fn a_quoted_text_is_read_back_by_the_shell_as_it_was() {
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        for text in [
            "",
            "'",
            "''",
            "a'b'c",
            "'lead",
            "trail'",
            "$(id) `x` \\ \"q\" \n ${HOME}",
            "é'ü",
        ] {
            let output = std::process::Command::new("bash")
                .arg("-c")
                .arg(format!("printf %s {}", shell_quote(text)))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(output.stdout).unwrap(), text);
        }
    }

    #[test]
    fn the_printed_reason_is_the_prefix_and_the_reasons_joined() {
        let provenance = Provenance::layer(Layer::Sandbox);
        for reasons in [vec![], vec!["one"], vec!["one", "two"], vec!["a; b", "", "c"]] {
            let verdict = Verdict {
                decision: Decision::Ask,
                reasons: reasons.iter().map(|r| (*r).to_owned()).collect(),
                provenance: provenance.clone(),
                diagnostics: Vec::new(),
            };
            assert_eq!(
                HookOutput::from_verdict(&verdict).reason(),
                format!("agent-guard: {}", verdict.reason())
            );
        }
    }

    #[test]
    fn parses_and_ignores_unknown_fields() {
        let input = HookInput::parse(
            r#"{"session_id":"s","cwd":"/p","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"transcript_path":"/t"}"#,
        )
        .unwrap();
        assert_eq!(input.tool_name, "Bash");
        assert!(
            HookInput::parse("{}")
                .unwrap_err()
                .to_string()
                .contains("missing field")
        );
        assert!(HookInput::parse(r#"{"cwd":"/p","tool_name":"Bash","hook_event_name":"Stop"}"#).is_err());
        assert!(HookInput::parse("not json").is_err());
        let unknown = HookInput::parse(r#"{"cwd":"/p","tool_name":"Bash","permission_mode":"yolo"}"#)
            .unwrap_err()
            .to_string();
        assert!(
            unknown.contains("`permission_mode`: unknown permission mode `yolo`"),
            "{unknown}"
        );
        for mode in ["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"] {
            let text = format!(r#"{{"cwd":"/p","tool_name":"Bash","permission_mode":"{mode}"}}"#);
            assert!(HookInput::parse(&text).is_ok(), "{mode}");
        }
    }

    #[test]
    fn output_shape() {
        let v = Verdict::new(Decision::Ask, "why", Provenance::layer(Layer::Rules));
        assert_eq!(
            HookOutput::from_verdict(&v).to_json(),
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"agent-guard: why"}}"#
        );
    }
}
