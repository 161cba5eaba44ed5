//! Rules compiled once per rule set, so that a check costs about the same with 10 rules or 10,000.
//!
//! Rules are grouped by behaviour, then by the kind of thing they match: tool-wide rules in hash maps keyed by
//! canonical tool name, shell patterns in `RegexSet`s grouped by their literal command name, path globs in byte
//! `RegexSet`s per tool grouped by their literal directory prefix (a lookup runs only the groups that can match),
//! domains in hash maps of hosts and of wildcard suffixes, agent names in a hash map. Each lookup returns the
//! matching rule of the highest source (the first added on a tie), which is the one a decision reports.

use rustc_hash::FxHashMap as HashMap;
use std::path::{Path, PathBuf};

use agent_tool_traits::Decision;

use crate::error::{Error, Result};
use crate::rule::{Anchor, Content, PathPattern, Rule, Target};
use crate::tool::{ToolName, split_mcp};

/// The directories path patterns are anchored to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchors {
    /// The working directory: `./x` and `dir/x` patterns, and rules without a settings file.
    pub cwd: PathBuf,
    /// The home directory: `~/x` patterns. `None` when there is none; such patterns then match nothing.
    pub home: Option<PathBuf>,
}

/// A set of rules compiled for fast matching.
#[derive(Debug)]
pub(crate) struct CompiledRules {
    pub(crate) rules: Vec<Rule>,
    deny: BehaviorIndex,
    ask: BehaviorIndex,
    allow: BehaviorIndex,
}

#[derive(Debug, Default)]
struct BehaviorIndex {
    any_tool: Option<usize>,
    tool_wide: HashMap<String, usize>,
    mcp_servers: HashMap<String, usize>,
    shell: Grouped<regex::RegexSet>,
    paths: HashMap<String, Grouped<regex::bytes::RegexSet>>,
    hosts: HashMap<String, usize>,
    host_suffixes: HashMap<String, usize>,
    agents: HashMap<String, usize>,
}

#[derive(Debug)]
struct IndexedSet<S> {
    set: S,
    rules: Vec<usize>,
}

/// Patterns grouped by a literal key (a shell pattern's command name, a path glob's literal directory prefix), so
/// that a lookup runs only the few patterns that can match instead of all of them; patterns without a literal key
/// are in `rest`.
#[derive(Debug)]
struct Grouped<S> {
    by_key: HashMap<String, IndexedSet<S>>,
    rest: Option<IndexedSet<S>>,
}

impl<S> Default for Grouped<S> {
    fn default() -> Self {
        Self {
            by_key: HashMap::default(),
            rest: None,
        }
    }
}

/// One pattern before compilation: its grouping key, its regular expression, its rule.
type Entry = (Option<String>, String, usize);

/// The thing a lookup matches: a tool name, a shell command, a path, a host or an agent.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Subject<'a> {
    /// A call of this tool (tool-wide rules, `*`, MCP servers).
    Tool(&'a ToolName),
    /// A command's words joined by NUL, as seen by `Bash(…)` rules.
    Command(&'a str),
    /// An absolute, lexically normal path, as seen by the path rules of `tool`.
    Path { tool: &'a str, path: &'a Path },
    /// A host name, lowercase.
    Host(&'a str),
    /// A subagent type.
    Agent(&'a str),
}

impl CompiledRules {
    pub(crate) fn compile(rules: Vec<Rule>, anchors: &Anchors) -> Result<Self> {
        let mut builders: [Builder; 3] = Default::default();
        for (index, rule) in rules.iter().enumerate() {
            let slot = match rule.behavior {
                Decision::Deny => 0,
                Decision::Ask => 1,
                Decision::Allow => 2,
            };
            if let Some(builder) = builders.get_mut(slot) {
                builder.add(index, rule, anchors)?;
            }
        }
        let [deny, ask, allow] = builders;
        Ok(Self {
            deny: deny.build(&rules)?,
            ask: ask.build(&rules)?,
            allow: allow.build(&rules)?,
            rules,
        })
    }

    fn index(&self, behavior: Decision) -> &BehaviorIndex {
        match behavior {
            Decision::Deny => &self.deny,
            Decision::Ask => &self.ask,
            Decision::Allow => &self.allow,
        }
    }

    /// Whether `behavior` has a shell pattern at all: without one no command matches it, so a caller need not
    /// join a command's words to ask.
    pub(crate) fn has_shell_rules(&self, behavior: Decision) -> bool {
        let shell = &self.index(behavior).shell;
        !shell.by_key.is_empty() || shell.rest.is_some()
    }

    /// The best rule of `behavior` matching `subject`.
    pub(crate) fn lookup(&self, behavior: Decision, subject: Subject<'_>) -> Option<usize> {
        let index = self.index(behavior);
        let mut best = None;
        let mut offer = |candidate: Option<usize>| {
            if let Some(candidate) = candidate {
                best = Some(match best {
                    Some(current) if !self.outranks(candidate, current) => current,
                    _ => candidate,
                });
            }
        };
        match subject {
            Subject::Tool(name) => {
                offer(index.any_tool);
                offer(index.tool_wide.get(name.as_str()).copied());
                if let Some((server, _)) = split_mcp(name.as_str()) {
                    offer(index.mcp_servers.get(server).copied());
                }
            }
            Subject::Command(words) => {
                let name = words.split('\0').next().unwrap_or_default();
                for group in index.shell.by_key.get(name).into_iter().chain(&index.shell.rest) {
                    if group.set.is_match(words) {
                        for hit in group.set.matches(words).iter() {
                            offer(group.rules.get(hit).copied());
                        }
                    }
                }
            }
            Subject::Path { tool, path } => {
                if let Some(paths) = index.paths.get(tool) {
                    let bytes = path.as_os_str().as_encoded_bytes();
                    let mut try_group = |group: &IndexedSet<regex::bytes::RegexSet>| {
                        if group.set.is_match(bytes) {
                            for hit in group.set.matches(bytes).iter() {
                                offer(group.rules.get(hit).copied());
                            }
                        }
                    };
                    // Every ancestor of the path (and the path itself) may be the literal prefix of a glob.
                    if let Some(text) = path.to_str() {
                        let ends = text
                            .match_indices('/')
                            .map(|(i, _)| i)
                            .chain(std::iter::once(text.len()));
                        for end in ends {
                            let prefix = if end == 0 {
                                "/"
                            } else {
                                text.get(..end).unwrap_or_default()
                            };
                            if let Some(group) = paths.by_key.get(prefix) {
                                try_group(group);
                            }
                        }
                    } else {
                        paths.by_key.values().for_each(&mut try_group);
                    }
                    if let Some(rest) = &paths.rest {
                        try_group(rest);
                    }
                }
            }
            Subject::Host(host) => {
                offer(index.hosts.get(host).copied());
                let mut rest = host;
                while let Some((_, parent)) = rest.split_once('.') {
                    offer(index.host_suffixes.get(parent).copied());
                    rest = parent;
                }
            }
            Subject::Agent(agent) => offer(index.agents.get(agent).copied()),
        }
        best
    }

    /// The rules of `behavior` on `tool`'s paths whose literal directory prefix lies strictly beneath `dir`, each
    /// with that prefix: the rules a recursive read of `dir` may meet below it.
    pub(crate) fn beneath(&self, behavior: Decision, tool: &str, dir: &Path) -> Vec<(usize, &str)> {
        let Some(paths) = self.index(behavior).paths.get(tool) else {
            return Vec::new();
        };
        let mut found: Vec<(usize, &str)> = paths
            .by_key
            .iter()
            .filter(|(prefix, _)| {
                let prefix = Path::new(prefix.as_str());
                prefix != dir && prefix.starts_with(dir)
            })
            .flat_map(|(prefix, group)| group.rules.iter().map(move |rule| (*rule, prefix.as_str())))
            .collect();
        found.sort_unstable();
        found
    }

    /// Whether rule `a` wins over rule `b` of the same behaviour: a higher source, or the same source and added
    /// first.
    fn outranks(&self, a: usize, b: usize) -> bool {
        match (self.rules.get(a), self.rules.get(b)) {
            (Some(ra), Some(rb)) => ra.source > rb.source || (ra.source == rb.source && a < b),
            _ => false,
        }
    }
}

#[derive(Default)]
struct Builder {
    any_tool: Vec<usize>,
    tool_wide: Vec<(String, usize)>,
    mcp_servers: Vec<(String, usize)>,
    shell: Vec<Entry>,
    paths: HashMap<String, Vec<Entry>>,
    hosts: Vec<(String, usize)>,
    host_suffixes: Vec<(String, usize)>,
    agents: Vec<(String, usize)>,
}

impl Builder {
    fn add(&mut self, index: usize, rule: &Rule, anchors: &Anchors) -> Result<()> {
        match &rule.target {
            Target::AnyTool => self.any_tool.push(index),
            Target::McpServer(server) => self.mcp_servers.push((server.clone(), index)),
            Target::Tool { name, content: None } => self.tool_wide.push((name.as_str().to_owned(), index)),
            Target::Tool {
                content: Some(Content::Shell(pattern)),
                ..
            } => {
                self.shell
                    .push((pattern.first_word.clone(), pattern.regex.clone(), index));
            }
            Target::Tool {
                name,
                content: Some(Content::Path(pattern)),
            } => {
                if let Some((key, regex)) = path_regex(pattern, rule, anchors)? {
                    self.paths
                        .entry(name.as_str().to_owned())
                        .or_default()
                        .push((Some(key), regex, index));
                }
            }
            Target::Tool {
                content: Some(Content::Domain(domain)),
                ..
            } => {
                let list = if domain.subdomains {
                    &mut self.host_suffixes
                } else {
                    &mut self.hosts
                };
                list.push((domain.host.clone(), index));
            }
            Target::Tool {
                content: Some(Content::Agent(agent)),
                ..
            } => self.agents.push((agent.clone(), index)),
        }
        Ok(())
    }

    fn build(self, rules: &[Rule]) -> Result<BehaviorIndex> {
        let outranks = |a: usize, b: usize| match (rules.get(a), rules.get(b)) {
            (Some(ra), Some(rb)) => ra.source > rb.source || (ra.source == rb.source && a < b),
            _ => false,
        };
        let best_of = |entries: Vec<(String, usize)>| {
            let mut map: HashMap<String, usize> = HashMap::default();
            for (key, index) in entries {
                map.entry(key)
                    .and_modify(|best| {
                        if outranks(index, *best) {
                            *best = index
                        }
                    })
                    .or_insert(index);
            }
            map
        };
        let any_tool = self
            .any_tool
            .iter()
            .copied()
            .reduce(|a, b| if outranks(b, a) { b } else { a });
        let shell = group(self.shell, rules, |patterns| {
            regex::RegexSetBuilder::new(patterns).size_limit(1 << 30).build()
        })?;
        let mut paths = HashMap::default();
        for (tool, entries) in self.paths {
            let grouped = group(entries, rules, |patterns| {
                regex::bytes::RegexSetBuilder::new(patterns)
                    .size_limit(1 << 30)
                    .build()
            })?;
            paths.insert(tool, grouped);
        }
        Ok(BehaviorIndex {
            any_tool,
            tool_wide: best_of(self.tool_wide),
            mcp_servers: best_of(self.mcp_servers),
            shell,
            paths,
            hosts: best_of(self.hosts),
            host_suffixes: best_of(self.host_suffixes),
            agents: best_of(self.agents),
        })
    }
}

/// Compiles entries into one set per key plus one for the unkeyed.
fn group<S>(
    entries: Vec<Entry>,
    rules: &[Rule],
    build: impl Fn(Vec<String>) -> Result<S, regex::Error>,
) -> Result<Grouped<S>> {
    let mut by_key: HashMap<Option<String>, (Vec<String>, Vec<usize>)> = HashMap::default();
    for (key, regex, index) in entries {
        let slot = by_key.entry(key).or_default();
        slot.0.push(regex);
        slot.1.push(index);
    }
    let mut grouped = Grouped::default();
    for (key, (patterns, indices)) in by_key {
        let first = indices
            .first()
            .and_then(|i| rules.get(*i))
            .map(|r| r.text.clone())
            .unwrap_or_default();
        let set = build(patterns).map_err(|e| Error::Rule {
            rule: first,
            origin: None,
            why: format!("the compiled rule set is too large: {e}"),
        })?;
        let compiled = IndexedSet { set, rules: indices };
        match key {
            Some(key) => {
                grouped.by_key.insert(key, compiled);
            }
            None => grouped.rest = Some(compiled),
        }
    }
    Ok(grouped)
}

/// The regular expression of a path pattern made absolute: it matches the path itself and, as in gitignore,
/// everything beneath it; with it, the glob's literal directory prefix (the key it is grouped by). `None` when the
/// anchor does not exist (a `~/` pattern without a home directory).
fn path_regex(pattern: &PathPattern, rule: &Rule, anchors: &Anchors) -> Result<Option<(String, String)>> {
    let base: Option<&Path> = match pattern.anchor {
        Anchor::Absolute | Anchor::Anywhere => Some(Path::new("/")),
        Anchor::Home => anchors.home.as_deref(),
        Anchor::Project => Some(rule.project.as_deref().unwrap_or(&anchors.cwd)),
        Anchor::Cwd => Some(&anchors.cwd),
    };
    let Some(base) = base else { return Ok(None) };
    let mut glob = globset::escape(&crate::path::normalize(base).to_string_lossy());
    if !glob.ends_with('/') {
        glob.push('/');
    }
    if pattern.anchor == Anchor::Anywhere {
        glob.push_str("**/");
    }
    glob.push_str(&pattern.glob);
    let mut glob = glob.trim_end_matches('/');
    // A deny or ask rule on everything beneath a directory (`Read(./secrets/**)`) also covers the directory itself:
    // listing or searching it reads what the rule protects. An allow rule stays as written (stricter).
    if rule.behavior != Decision::Allow {
        while let Some(directory) = glob.strip_suffix("/**") {
            glob = directory;
        }
    }
    let glob = if glob.is_empty() { "/" } else { glob };
    let compiled = globset::GlobBuilder::new(glob)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| Error::Rule {
            rule: rule.text.clone(),
            origin: None,
            why: format!("bad glob: {}", e.kind()),
        })?;
    let regex = compiled.regex();
    let regex = match regex.strip_suffix('$') {
        Some(body) if glob == "/" => format!("{body}.*$"),
        Some(body) => format!("{body}(?:/.*)?$"),
        None => regex.to_owned(),
    };
    Ok(Some((literal_prefix(glob), regex)))
}

/// The directories of an absolute glob before its first component with a glob character (`/proj/src` for
/// `/proj/src/**/*.rs`, `/` for `/**/x`). Escaped characters end the prefix too, which only makes it shorter.
fn literal_prefix(glob: &str) -> String {
    let mut prefix = String::new();
    let components: Vec<&str> = glob.split('/').filter(|c| !c.is_empty()).collect();
    // The last component may itself be literal and name a file or directory; it still counts, since a literal
    // glob matches exactly that path (and what is beneath it).
    for component in components {
        if component.contains(['*', '?', '[', ']', '{', '}', '\\']) {
            break;
        }
        prefix.push('/');
        prefix.push_str(component);
    }
    if prefix.is_empty() { "/".to_owned() } else { prefix }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_tool_traits::Source;

    fn compiled(rules: &[(&str, Decision, Source)]) -> CompiledRules {
        let rules = rules
            .iter()
            .map(|(t, b, s)| Rule::parse(t, *b, *s).unwrap())
            .collect();
        let anchors = Anchors {
            cwd: "/proj".into(),
            home: Some("/home/u".into()),
        };
        CompiledRules::compile(rules, &anchors).unwrap()
    }

    fn path_hit(c: &CompiledRules, tool: &str, path: &str) -> Option<usize> {
        c.lookup(
            Decision::Deny,
            Subject::Path {
                tool,
                path: Path::new(path),
            },
        )
    }

    #[test]
    fn highest_source_wins_inside_a_behaviour() {
        let c = compiled(&[
            ("Bash(git:*)", Decision::Deny, Source::User),
            ("Bash(git push:*)", Decision::Deny, Source::Policy),
            ("Bash(git push origin:*)", Decision::Deny, Source::Project),
        ]);
        assert_eq!(
            c.lookup(Decision::Deny, Subject::Command("git\0push\0origin")),
            Some(1)
        );
        assert_eq!(c.lookup(Decision::Deny, Subject::Command("git\0status")), Some(0));
        assert_eq!(c.lookup(Decision::Allow, Subject::Command("git\0status")), None);
    }

    #[test]
    fn path_patterns_are_anchored_and_cover_descendants() {
        let c = compiled(&[
            ("Read(./.env)", Decision::Deny, Source::User),
            ("Read(~/.ssh/**)", Decision::Deny, Source::User),
            ("Read(//etc/hosts)", Decision::Deny, Source::User),
            ("Read(*.pem)", Decision::Deny, Source::User),
            ("Read(secrets)", Decision::Deny, Source::User),
            ("Read(src/*.rs)", Decision::Deny, Source::User),
        ]);
        assert_eq!(path_hit(&c, "Read", "/proj/.env"), Some(0));
        assert_eq!(
            path_hit(&c, "Read", "/proj/sub/.env"),
            None,
            "./ anchors at the working directory"
        );
        assert_eq!(path_hit(&c, "Read", "/home/u/.ssh/id_rsa"), Some(1));
        assert_eq!(path_hit(&c, "Read", "/etc/hosts"), Some(2));
        assert_eq!(path_hit(&c, "Read", "/etc/hosts.allow"), None);
        assert_eq!(path_hit(&c, "Read", "/proj/a/b/key.pem"), Some(3));
        assert_eq!(
            path_hit(&c, "Read", "/proj/deep/secrets/key"),
            Some(4),
            "a directory covers its content"
        );
        assert_eq!(path_hit(&c, "Read", "/proj/src/main.rs"), Some(5));
        assert_eq!(
            path_hit(&c, "Read", "/proj/src/a/main.rs"),
            None,
            "`*` does not cross a `/`"
        );
        assert_eq!(
            path_hit(&c, "Edit", "/proj/.env"),
            None,
            "path rules are per tool"
        );
    }

    #[test]
    fn a_deny_or_ask_on_everything_beneath_a_directory_covers_the_directory() {
        let c = compiled(&[
            ("Read(./secrets/**)", Decision::Deny, Source::User),
            ("Read(~/.aws/**/**)", Decision::Ask, Source::User),
            ("Read(./public/**)", Decision::Allow, Source::User),
        ]);
        // Listing or searching `secrets` reads what the rule protects.
        assert_eq!(path_hit(&c, "Read", "/proj/secrets"), Some(0));
        assert_eq!(path_hit(&c, "Read", "/proj/secrets/a/key"), Some(0));
        assert_eq!(
            path_hit(&c, "Read", "/proj/secrets-old"),
            None,
            "a sibling is not the directory"
        );
        assert_eq!(
            c.lookup(
                Decision::Ask,
                Subject::Path {
                    tool: "Read",
                    path: Path::new("/home/u/.aws")
                }
            ),
            Some(1)
        );
        // An allow rule grants exactly what it says: the directory itself is not read by it.
        assert_eq!(
            c.lookup(
                Decision::Allow,
                Subject::Path {
                    tool: "Read",
                    path: Path::new("/proj/public")
                }
            ),
            None
        );
        assert_eq!(
            c.lookup(
                Decision::Allow,
                Subject::Path {
                    tool: "Read",
                    path: Path::new("/proj/public/a")
                }
            ),
            Some(2)
        );
    }

    #[test]
    fn hosts_and_agents() {
        let c = compiled(&[
            ("WebFetch(domain:example.com)", Decision::Deny, Source::User),
            ("WebFetch(domain:*.evil.io)", Decision::Deny, Source::User),
            ("Agent(Explore)", Decision::Deny, Source::User),
        ]);
        assert_eq!(c.lookup(Decision::Deny, Subject::Host("example.com")), Some(0));
        assert_eq!(c.lookup(Decision::Deny, Subject::Host("notexample.com")), None);
        assert_eq!(c.lookup(Decision::Deny, Subject::Host("a.b.evil.io")), Some(1));
        assert_eq!(c.lookup(Decision::Deny, Subject::Host("evil.io")), None);
        assert_eq!(c.lookup(Decision::Deny, Subject::Agent("Explore")), Some(2));
    }
}
