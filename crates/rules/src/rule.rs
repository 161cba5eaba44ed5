//! The rule syntax: `Tool`, `Tool(content)`, `*`, parsed into typed rules.

use std::fmt;
use std::path::PathBuf;

use agent_tool_traits::{Decision, Source};

use crate::error::{Error, Result};
use crate::tool::{ToolKind, ToolName, split_mcp};

/// One permission rule: what it matches, its behaviour, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The rule as written (`Bash(npm run test:*)`).
    pub text: String,
    /// `allow`, `ask` or `deny`.
    pub behavior: Decision,
    /// The source it was loaded from.
    pub source: Source,
    /// The settings file it was read from, if any.
    pub file: Option<PathBuf>,
    /// The project directory of that file: `/`-anchored path patterns are relative to it. `None` means the
    /// working directory.
    pub project: Option<PathBuf>,
    pub(crate) target: Target,
}

/// What a rule applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// `*`: every tool.
    AnyTool,
    /// `mcp__server` or `mcp__server__*`: every tool of one MCP server.
    McpServer(String),
    /// `Tool` or `Tool(content)`.
    Tool {
        name: ToolName,
        content: Option<Content>,
    },
}

/// The content part of `Tool(content)`, by tool kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Content {
    /// A shell command pattern, matched word by word on each sub-command.
    Shell(ShellPattern),
    /// A gitignore-style path glob.
    Path(PathPattern),
    /// `domain:host` or `domain:*.host`.
    Domain(DomainPattern),
    /// `Agent(Name)`: the subagent type.
    Agent(String),
}

/// A shell command pattern, kept as the words of a regular expression over a command's words joined by NUL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShellPattern {
    /// An anchored regular expression over `word\0word\0…`.
    pub(crate) regex: String,
    /// The first word when it is a plain literal (no wildcard): the key the compiled matcher groups patterns by,
    /// so that a command is only tried against the patterns of its own command name.
    pub(crate) first_word: Option<String>,
}

/// Where a path pattern is anchored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// `//abs/path`: the file-system root.
    Absolute,
    /// `~/path`: the home directory.
    Home,
    /// `/path`: the project directory of the settings file.
    Project,
    /// `./path` or `dir/path`: the working directory.
    Cwd,
    /// `name` without a slash: any directory (gitignore semantics).
    Anywhere,
}

/// A path glob and its anchor; compiled to an absolute glob once the directories are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathPattern {
    pub(crate) anchor: Anchor,
    /// The glob relative to its anchor, without the leading `//`, `~/`, `/` or `./`, nor a trailing `/`.
    pub(crate) glob: String,
}

/// A host pattern matched on DNS labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DomainPattern {
    /// The host, lowercase, without a trailing dot.
    pub(crate) host: String,
    /// `*.host`: any subdomain (one or more labels), not the host itself.
    pub(crate) subdomains: bool,
}

impl Rule {
    /// The program a shell rule names as its first word when that word is a literal (`docker` of
    /// `Bash(docker:*)`, `kubectl` of `Bash(kubectl get pods)`); `None` for other rules and for a pattern that
    /// starts with a wildcard (`Bash(*)`).
    pub fn command_name(&self) -> Option<&str> {
        match &self.target {
            Target::Tool {
                content: Some(Content::Shell(pattern)),
                ..
            } => pattern.first_word.as_deref(),
            _ => None,
        }
    }

    /// Parses `text` as a rule with `behavior` from `source`. The error names the rule and what is wrong.
    pub fn parse(text: &str, behavior: Decision, source: Source) -> Result<Self> {
        let target = parse_target(text.trim()).map_err(|why| Error::Rule {
            rule: text.to_owned(),
            origin: None,
            why,
        })?;
        Ok(Self {
            text: text.trim().to_owned(),
            behavior,
            source,
            file: None,
            project: None,
            target,
        })
    }

    /// The same rule, marked as read from `file` whose project directory is `project`.
    #[must_use]
    pub fn from_file(mut self, file: PathBuf, project: PathBuf) -> Self {
        self.file = Some(file);
        self.project = Some(project);
        self
    }

    /// The canonical tool name the rule applies to; `None` for `*` and whole MCP servers.
    pub fn tool(&self) -> Option<&ToolName> {
        match &self.target {
            Target::Tool { name, .. } => Some(name),
            Target::AnyTool | Target::McpServer(_) => None,
        }
    }

    /// Whether the rule has a content part (`Tool(content)`).
    pub fn has_content(&self) -> bool {
        matches!(&self.target, Target::Tool { content: Some(_), .. })
    }

    /// The host pattern of a `WebFetch(domain:…)` rule, as `host` or `*.host`; `None` for every other rule.
    pub fn domain(&self) -> Option<String> {
        match &self.target {
            Target::Tool {
                content: Some(Content::Domain(pattern)),
                ..
            } => Some(if pattern.subdomains {
                format!("*.{}", pattern.host)
            } else {
                pattern.host.clone()
            }),
            Target::Tool { .. } | Target::AnyTool | Target::McpServer(_) => None,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} rule `{}` ({})", self.behavior, self.text, self.source)
    }
}

fn parse_target(text: &str) -> Result<Target, String> {
    if text.is_empty() {
        return Err("the rule is empty".to_owned());
    }
    if text == "*" {
        return Ok(Target::AnyTool);
    }
    let (tool, content) = match text.find('(') {
        Some(open) => {
            let inner = text
                .get(open + 1..)
                .and_then(|rest| rest.strip_suffix(')'))
                .ok_or_else(|| "a `(` without a closing `)` at the end".to_owned())?;
            (text.get(..open).unwrap_or_default(), Some(inner))
        }
        None if text.contains(')') => return Err("a `)` without an opening `(`".to_owned()),
        None => (text, None),
    };
    let tool = tool.trim();
    if tool.is_empty() {
        return Err("the tool name is missing before `(`".to_owned());
    }
    if let Some(bad) = tool
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '*')))
    {
        return Err(format!("`{bad}` cannot appear in a tool name"));
    }
    if let Some((server, rest)) = split_mcp(tool) {
        if server.is_empty() || server.contains('*') {
            return Err(
                "an MCP rule names its server: `mcp__server`, `mcp__server__*` or `mcp__server__tool`".into(),
            );
        }
        if content.is_some() {
            return Err("MCP tools take no content in parentheses".to_owned());
        }
        return Ok(match rest {
            "" | "*" => Target::McpServer(server.to_owned()),
            tool_part if tool_part.contains('*') => {
                return Err(
                    "a wildcard in an MCP rule must be the whole tool part: `mcp__server__*`".to_owned(),
                );
            }
            _ => Target::Tool {
                name: ToolName::new(tool),
                content: None,
            },
        });
    }
    if tool.contains('*') {
        return Err("a wildcard tool name must be `*` alone or `mcp__server__*`".to_owned());
    }
    let name = ToolName::new(tool);
    if !name.is_known()
        && let Some(near) = crate::check::misspelling_of(tool, ToolName::known_names())
    {
        let rest = content.map(|inner| format!("({inner})")).unwrap_or_default();
        return Err(format!("unknown tool `{tool}`: did you mean `{near}{rest}`?"));
    }
    let content = match content {
        None => None,
        Some(inner) => Some(parse_content(&name, inner)?),
    };
    Ok(Target::Tool { name, content })
}

fn parse_content(name: &ToolName, inner: &str) -> Result<Content, String> {
    if inner.trim().is_empty() {
        return Err(format!("empty content: write `{name}` to match every call"));
    }
    match name.kind() {
        ToolKind::Shell => ShellPattern::parse(inner).map(Content::Shell),
        ToolKind::Read
        | ToolKind::Glob
        | ToolKind::Grep
        | ToolKind::Write
        | ToolKind::Edit
        | ToolKind::NotebookEdit => PathPattern::parse(inner).map(Content::Path),
        ToolKind::WebFetch => DomainPattern::parse(inner).map(Content::Domain),
        ToolKind::Agent => {
            let agent = inner.trim();
            if agent.contains(char::is_whitespace) {
                Err(format!("an agent name has no spaces: `{agent}`"))
            } else {
                Ok(Content::Agent(agent.to_owned()))
            }
        }
        ToolKind::WebSearch | ToolKind::Mcp | ToolKind::Harmless | ToolKind::Other => {
            Err(format!("`{name}` rules take no content; write `{name}` alone"))
        }
    }
}

impl ShellPattern {
    /// Parses the content of a `Bash(…)` rule: `prefix:cmd`, `cmd:*`, `cmd *`, `*` anywhere, or an exact command.
    pub(crate) fn parse(content: &str) -> Result<Self, String> {
        let content = content.trim();
        let (body, prefix) = if let Some(rest) = content.strip_prefix("prefix:") {
            (rest, true)
        } else if let Some(rest) = content.strip_suffix(":*") {
            (rest, true)
        } else {
            (content, false)
        };
        let mut words = split_words(body)?;
        // `cmd *`: a trailing wildcard word means "cmd, then anything", on a word boundary.
        let is_star = |w: &Vec<Piece>| w.as_slice() == [Piece::Star];
        let prefix = prefix || (words.len() > 1 && words.last().is_some_and(is_star));
        if prefix && words.last().is_some_and(is_star) {
            words.pop();
        }
        if words.is_empty() {
            return Err("the command pattern has no words".to_owned());
        }
        let mut regex = String::from("(?s)^");
        for (i, word) in words.iter().enumerate() {
            if i > 0 {
                regex.push_str("\\x00");
            }
            for piece in word {
                match piece {
                    Piece::Star => regex.push_str(".*"),
                    Piece::Lit(text) => regex.push_str(&regex::escape(text)),
                }
            }
        }
        if prefix {
            regex.push_str("(?:\\x00.*)?");
        }
        regex.push('$');
        let first_word = match words.first().map(Vec::as_slice) {
            Some([Piece::Lit(word)]) => Some(word.clone()),
            _ => None,
        };
        Ok(Self { regex, first_word })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Lit(String),
    Star,
}

/// Splits a command pattern into words, honouring single and double quotes and backslashes; an unquoted `*` is a
/// wildcard, a quoted one is literal.
fn split_words(text: &str) -> Result<Vec<Vec<Piece>>, String> {
    let mut words = Vec::new();
    let mut word: Vec<Piece> = Vec::new();
    let mut lit = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    let flush = |word: &mut Vec<Piece>, lit: &mut String| {
        if !lit.is_empty() {
            word.push(Piece::Lit(std::mem::take(lit)));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    flush(&mut word, &mut lit);
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '*' => {
                flush(&mut word, &mut lit);
                word.push(Piece::Star);
                in_word = true;
            }
            '\\' => {
                lit.push(chars.next().ok_or("a `\\` at the end of the pattern")?);
                in_word = true;
            }
            '\'' | '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some(q) if q == c => break,
                        Some('\\') if c == '"' => lit.push(chars.next().ok_or("an unterminated quote")?),
                        Some(other) => lit.push(other),
                        None => return Err(format!("an unterminated {c} quote")),
                    }
                }
            }
            other => {
                lit.push(other);
                in_word = true;
            }
        }
    }
    if in_word {
        flush(&mut word, &mut lit);
        words.push(word);
    }
    Ok(words)
}

impl PathPattern {
    /// Parses a gitignore-style path pattern with its anchor.
    pub(crate) fn parse(content: &str) -> Result<Self, String> {
        let content = content.trim();
        if content.starts_with('!') {
            return Err("negated patterns (`!`) are not supported; write a separate allow rule".to_owned());
        }
        if content.contains('\0') {
            return Err("a NUL byte in a path pattern".to_owned());
        }
        let (anchor, rest) = if let Some(rest) = content.strip_prefix("//") {
            (Anchor::Absolute, rest)
        } else if content == "~" {
            (Anchor::Home, "")
        } else if let Some(rest) = content.strip_prefix("~/") {
            (Anchor::Home, rest)
        } else if let Some(rest) = content.strip_prefix('/') {
            (Anchor::Project, rest)
        } else if let Some(rest) = content.strip_prefix("./") {
            (Anchor::Cwd, rest)
        } else if content == "." {
            (Anchor::Cwd, "")
        } else if content.trim_end_matches('/').contains('/') {
            (Anchor::Cwd, content)
        } else {
            (Anchor::Anywhere, content)
        };
        let glob = rest.trim_end_matches('/').to_owned();
        // Validate the glob syntax now, so that a bad pattern is a load error and not a silent non-match.
        if !glob.is_empty() {
            globset::GlobBuilder::new(&glob)
                .literal_separator(true)
                .build()
                .map_err(|e| format!("bad glob: {}", e.kind()))?;
        }
        Ok(Self { anchor, glob })
    }
}

impl DomainPattern {
    /// Parses `domain:host` or `domain:*.host`.
    pub(crate) fn parse(content: &str) -> Result<Self, String> {
        let host = content
            .trim()
            .strip_prefix("domain:")
            .ok_or_else(|| "WebFetch rules have the form `WebFetch(domain:example.com)`".to_owned())?;
        let (host, subdomains) = match host.strip_prefix("*.") {
            Some(rest) => (rest, true),
            None => (host, false),
        };
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let valid_label = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && l.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        };
        if host.is_empty() || host.len() > 253 || !host.split('.').all(valid_label) {
            return Err(format!(
                "`{host}` is not a host name (a wildcard is only allowed as a leading `*.`)"
            ));
        }
        Ok(Self { host, subdomains })
    }

    /// Whether `host` (lowercase, no trailing dot) matches, label by label: the plain reference the compiled
    /// matcher is tested against.
    #[cfg(test)]
    pub(crate) fn matches(&self, host: &str) -> bool {
        if self.subdomains {
            host.strip_suffix(self.host.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.'))
        } else {
            host == self.host
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Rule> {
        Rule::parse(text, Decision::Allow, Source::User)
    }

    fn shell_regex(text: &str) -> regex::Regex {
        match parse(text).map(|r| r.target) {
            Ok(Target::Tool {
                content: Some(Content::Shell(p)),
                ..
            }) => regex::Regex::new(&p.regex).unwrap(),
            other => panic!("not a shell rule: {other:?}"),
        }
    }

    fn words(cmd: &str) -> String {
        cmd.split(' ').collect::<Vec<_>>().join("\0")
    }

    #[test]
    fn prefix_forms_are_equivalent_and_on_a_word_boundary() {
        for form in [
            "Bash(npm run test:*)",
            "Bash(prefix:npm run test)",
            "Bash(npm run test *)",
        ] {
            let re = shell_regex(form);
            assert!(re.is_match(&words("npm run test")), "{form}");
            assert!(re.is_match(&words("npm run test --watch")), "{form}");
            assert!(!re.is_match(&words("npm run testing")), "{form}");
            assert!(!re.is_match(&words("npm run")), "{form}");
        }
    }

    #[test]
    fn wildcards() {
        let re = shell_regex("Bash(git * --stat)");
        assert!(re.is_match(&words("git diff --stat")));
        assert!(re.is_match(&words("git diff HEAD~1 --stat")));
        assert!(!re.is_match(&words("git diff --stat --color")));
        let re = shell_regex("Bash(ls*)");
        assert!(re.is_match(&words("ls")) && re.is_match(&words("lsof")) && re.is_match(&words("ls -la")));
        let exact = shell_regex("Bash(git status)");
        assert!(exact.is_match(&words("git status")) && !exact.is_match(&words("git status --short")));
    }

    #[test]
    fn quoted_words_stay_one_word() {
        let re = shell_regex(r#"Bash(git commit -m "a b")"#);
        assert!(re.is_match("git\0commit\0-m\0a b"));
        assert!(!re.is_match(&words("git commit -m a b")));
        let star = shell_regex("Bash(echo '*')");
        assert!(star.is_match("echo\0*") && !star.is_match("echo\0x"));
    }

    #[test]
    fn path_anchors() {
        let anchor = |t: &str| match parse(t).map(|r| r.target) {
            Ok(Target::Tool {
                content: Some(Content::Path(p)),
                ..
            }) => (p.anchor, p.glob),
            other => panic!("{t}: {other:?}"),
        };
        assert_eq!(anchor("Read(./.env)"), (Anchor::Cwd, ".env".into()));
        assert_eq!(anchor("Read(src/**)"), (Anchor::Cwd, "src/**".into()));
        assert_eq!(anchor("Edit(/src/**)"), (Anchor::Project, "src/**".into()));
        assert_eq!(anchor("Read(~/.ssh/**)"), (Anchor::Home, ".ssh/**".into()));
        assert_eq!(
            anchor("Read(//etc/hosts)"),
            (Anchor::Absolute, "etc/hosts".into())
        );
        assert_eq!(anchor("Read(*.pem)"), (Anchor::Anywhere, "*.pem".into()));
        assert_eq!(anchor("Read(secrets/)"), (Anchor::Anywhere, "secrets".into()));
    }

    #[test]
    fn domains_match_on_labels() {
        let rule = Rule::parse("WebFetch(domain:*.Example.com)", Decision::Allow, Source::User).unwrap();
        assert_eq!(rule.domain().as_deref(), Some("*.example.com"));
        let rule = Rule::parse("Bash(curl:*)", Decision::Allow, Source::User).unwrap();
        assert_eq!(rule.domain(), None);
        let exact = DomainPattern::parse("domain:Example.com").unwrap();
        assert!(exact.matches("example.com"));
        assert!(!exact.matches("notexample.com") && !exact.matches("example.com.evil.io"));
        assert!(!exact.matches("www.example.com"));
        let sub = DomainPattern::parse("domain:*.example.com").unwrap();
        assert!(sub.matches("a.example.com") && sub.matches("a.b.example.com"));
        assert!(
            !sub.matches("example.com")
                && !sub.matches("aexample.com")
                && !sub.matches("example.com.evil.io")
        );
    }

    #[test]
    fn mcp_and_agents() {
        assert_eq!(
            parse("mcp__github").unwrap().target,
            Target::McpServer("github".into())
        );
        assert_eq!(
            parse("mcp__github__*").unwrap().target,
            Target::McpServer("github".into())
        );
        assert!(matches!(
            parse("mcp__github__create").unwrap().target,
            Target::Tool { content: None, .. }
        ));
        assert!(matches!(
            parse("Task(Explore)").unwrap().target,
            Target::Tool { content: Some(Content::Agent(ref a)), ref name } if a == "Explore" && name.as_str() == "Agent"
        ));
    }

    #[test]
    fn bad_rules_name_what_is_wrong() {
        for (text, needle) in [
            ("", "empty"),
            ("Bash(ls", "closing"),
            ("Bash)", "opening"),
            ("(ls)", "tool name is missing"),
            ("Bash()", "empty content"),
            ("WebFetch(example.com)", "domain:"),
            ("WebFetch(domain:ex*mple.com)", "not a host"),
            ("mcp__*", "names its server"),
            ("mcp__x__a*", "whole tool part"),
            ("mcp__x__y(z)", "no content"),
            ("Ba sh", "cannot appear"),
            ("Re*d", "wildcard tool name"),
            ("Read(!x)", "negated"),
            ("Read(a[)", "bad glob"),
            ("WebSearch(cats)", "take no content"),
            ("Bash(echo 'x)", "unterminated"),
            ("Raed(./x)", "unknown tool `Raed`: did you mean `Read(./x)`?"),
            ("bash(ls)", "did you mean `Bash(ls)`?"),
            ("Bahs", "did you mean `Bash`?"),
            ("WebFetc(domain:a.com)", "did you mean `WebFetch(domain:a.com)`?"),
            ("FarAwayTool(x)", "take no content"),
        ] {
            let err = parse(text).expect_err(text).to_string();
            assert!(err.contains(needle), "{text}: {err}");
            assert!(err.contains(&format!("`{}`", text.trim())), "{text}: {err}");
        }
    }
}
