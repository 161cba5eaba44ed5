//! The strict check of a settings file: every problem with its file, line and column, and the nearest known name.

use std::fmt;
use std::path::{Path, PathBuf};

use agent_tool_traits::{Decision, Source};
use serde_json::{Map, Value};

use crate::mode::PermissionMode;
use crate::rule::Rule;

/// One problem of a settings file, where it is and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file.
    pub file: PathBuf,
    /// The line and column (both from 1) of the offending key or value; `None` when the file cannot be read.
    pub position: Option<(usize, usize)>,
    /// What is wrong, with a suggestion where one is near.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((line, column)) => write!(f, "{}:{line}:{column}: {}", self.file.display(), self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

/// The top-level keys of the coding agent's own settings files (its `settings.json` reference). agent-guard reads
/// none of them, and the files are shared, so they are never errors; the list only keeps a key of the coding
/// agent's from being taken for a misspelling of one of agent-guard's (`hooks`, `permissions`, `agentGuard`).
const CODING_AGENT_KEYS: &[&str] = &[
    "$schema",
    "allowManagedHooksOnly",
    "allowManagedPermissionRulesOnly",
    "allowedMcpServers",
    "alwaysThinkingEnabled",
    "apiKeyHelper",
    "attribution",
    "autoUpdatesChannel",
    "availableModels",
    "awsAuthRefresh",
    "awsCredentialExport",
    "cleanupPeriodDays",
    "companyAnnouncements",
    "deniedMcpServers",
    "disableAllHooks",
    "disabledMcpjsonServers",
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "enabledPlugins",
    "env",
    "extraKnownMarketplaces",
    "fileSuggestion",
    "forceLoginMethod",
    "forceLoginOrgUUID",
    "includeCoAuthoredBy",
    "includeGitInstructions",
    "language",
    "model",
    "otelHeadersHelper",
    "outputStyle",
    "plansDirectory",
    "respectGitignore",
    "sandbox",
    "showTurnDuration",
    "spinnerTipsEnabled",
    "spinnerVerbs",
    "statusLine",
    "strictKnownMarketplaces",
    "subagentStatusLine",
    "teammateMode",
    "terminalProgressBarEnabled",
];

/// Checks the text of a settings file against `schema` (the JSON Schema of a whole settings file; each layer adds
/// its own section to it): JSON syntax, unknown keys inside the sections agent-guard reads (and top-level keys
/// close to one of them), values of the wrong type or outside an enumeration, rules that do not parse or name an
/// unknown tool, and the mode. Every reader of settings files runs this one check, so they accept the same files.
pub fn check_settings(text: &str, file: &Path, schema: &Value) -> Vec<Problem> {
    check_settings_with(text, file, schema, no_value_check)
}

/// [`check_settings`], and once the file fits the schema, `values`: the checks of the values the layers above
/// parse themselves (sizes, domain patterns, globs), located in the text like the schema's problems.
pub(crate) fn check_settings_with(
    text: &str,
    file: &Path,
    schema: &Value,
    values: ValueCheck,
) -> Vec<Problem> {
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) => {
            let shown = e.to_string();
            // serde_json appends the position to its message; the problem shows it in front instead.
            let message = shown
                .rsplit_once(" at line ")
                .map_or(shown.as_str(), |(message, _)| message);
            return vec![Problem {
                file: file.to_owned(),
                position: Some((e.line(), e.column())),
                message: format!("invalid JSON: {message}"),
            }];
        }
    };
    let mut findings = Vec::new();
    match &value {
        Value::Object(top) => {
            top_level_keys(top, schema, &mut findings);
            walk(schema, schema, &value, &mut Vec::new(), &mut findings);
            permission_values(top, &mut findings);
            if findings.is_empty() {
                findings.extend(
                    values(&value)
                        .into_iter()
                        .map(|problem| Finding::value(problem.path, problem.message)),
                );
            }
        }
        other => findings.push(Finding::value(
            Vec::new(),
            format!("a settings file is a JSON object, not {}", shown_value(other)),
        )),
    }
    let mut problems: Vec<Problem> = findings
        .into_iter()
        .map(|finding| Problem {
            file: file.to_owned(),
            position: locate(text, &finding.path, finding.spot),
            message: finding.message,
        })
        .collect();
    problems.sort_by_key(|p| p.position);
    problems
}

/// The name in `candidates` a user most likely meant by `word`, for the message about a name that is wrong
/// anyway (a key inside a section, a value of an enumeration): the same name in another case, or a few letters
/// apart (inserted, deleted, replaced or swapped), fewer for short names.
pub(crate) fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = match word.chars().count() {
        0..=3 => 1,
        4..=7 => 2,
        _ => 3,
    };
    closest(word, candidates, limit, false)
}

/// The name in `candidates` that `word` misspells, where any other name is fine (a tool name in a rule, a
/// top-level key): fewer letters apart than [`nearest`] allows, since a match refuses the file. A name of three
/// letters or fewer is only taken for one of the same length: a letter more makes another short name (the coding
/// agent's `LSP` tool is not a misspelt `LS`).
pub(crate) fn misspelling_of<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let length = word.chars().count();
    let limit = match length {
        0..=5 => 1,
        6..=8 => 2,
        _ => 3,
    };
    closest(word, candidates, limit, length <= 3)
}

fn closest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    limit: usize,
    same_length: bool,
) -> Option<&'a str> {
    let lower = word.to_lowercase();
    candidates
        .into_iter()
        .filter(|candidate| *candidate != word)
        .filter(|candidate| !same_length || candidate.chars().count() == word.chars().count())
        .map(|candidate| (distance(&lower, &candidate.to_lowercase()), candidate))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, candidate)| candidate)
}

/// One step of a path into a JSON document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathStep {
    /// The value of a key of an object.
    Key(String),
    /// An item of an array.
    Index(usize),
}

/// A problem with a value that the schema cannot express (a size, a domain pattern, a glob), found by the layer that
/// reads the value, with the path of the value in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueProblem {
    /// Where the value is (`agentGuard`, `sandbox`, `memoryMax`).
    pub path: Vec<PathStep>,
    /// What is wrong with it.
    pub message: String,
}

/// The check of the values of a whole settings document, run once the document fits the schema: each reader of a
/// section's values parses them here the way loading does, so a file that passes loads.
pub type ValueCheck = fn(&Value) -> Vec<ValueProblem>;

/// No value checks beyond the schema's.
pub(crate) fn no_value_check(_: &Value) -> Vec<ValueProblem> {
    Vec::new()
}

/// Whether a finding points at a key (an unknown one) or at a value (of the wrong type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spot {
    Key,
    Value,
}

/// A problem found in the parsed document, located by its path until the text gives it a line and column.
struct Finding {
    path: Vec<PathStep>,
    spot: Spot,
    message: String,
}

impl Finding {
    fn key(path: Vec<PathStep>, message: String) -> Self {
        Self {
            path,
            spot: Spot::Key,
            message,
        }
    }

    fn value(path: Vec<PathStep>, message: String) -> Self {
        Self {
            path,
            spot: Spot::Value,
            message,
        }
    }
}

/// Top-level keys: the coding agent's and agent-guard's are fine, and so is any other key (the coding agent adds
/// keys over time), except one close to a key agent-guard reads (`permisions`: its rules would be lost silently)
/// and one that belongs inside a section (`blockNetwork` at the top level is ignored by everyone).
fn top_level_keys(top: &Map<String, Value>, schema: &Value, findings: &mut Vec<Finding>) {
    let ours: Vec<&str> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    for key in top.keys() {
        if ours.contains(&key.as_str()) || CODING_AGENT_KEYS.contains(&key.as_str()) {
            continue;
        }
        let path = vec![PathStep::Key(key.clone())];
        if let Some(near) = misspelling_of(key, ours.iter().copied()) {
            findings.push(Finding::key(
                path,
                format!("unknown key `{key}`: did you mean `{near}`?"),
            ));
            continue;
        }
        let section = ours.iter().find(|section| {
            properties(schema, schema.pointer(&format!("/properties/{section}")))
                .is_some_and(|p| p.contains_key(key.as_str()))
        });
        if let Some(section) = section {
            findings.push(Finding::key(
                path,
                format!("`{key}` belongs inside `{section}`: write `\"{section}\": {{\"{key}\": …}}`"),
            ));
        }
    }
}

/// Checks `value` against the schema `node`, as far as settings need: `$ref`, `anyOf`, constants (`oneOf` of
/// `const`s, `enum`), `type`, `properties` with `additionalProperties: false`, and `items`.
fn walk(root: &Value, node: &Value, value: &Value, path: &mut Vec<PathStep>, findings: &mut Vec<Finding>) {
    let node = resolve(root, node);
    if let Some(branches) = node.get("anyOf").and_then(Value::as_array) {
        let null_allowed = branches.iter().any(|b| is_null_type(resolve(root, b)));
        if value.is_null() && null_allowed {
            return;
        }
        let others: Vec<&Value> = branches
            .iter()
            .filter(|b| !is_null_type(resolve(root, b)))
            .collect();
        // Where a key takes one of several forms (a mode or an object of settings), the form is the one whose
        // JSON type the value has; a choice between forms of one type is not checked here (loading still refuses
        // a value that fits none).
        let fitting: Vec<&Value> = if others.len() == 1 {
            others.clone()
        } else {
            others.iter().copied().filter(|b| fits(root, b, value)).collect()
        };
        match fitting.as_slice() {
            [only] => walk(root, only, value, path, findings),
            [] => {
                let mut expected: Vec<&str> = others.iter().flat_map(|b| kinds(root, b)).collect();
                expected.dedup();
                findings.push(wrong_type(path, &expected, value));
            }
            _ => {}
        }
        return;
    }
    if let Some(allowed) = constants(node) {
        if !allowed.contains(&value) {
            findings.push(not_accepted(path, &allowed, value));
        }
        return;
    }
    if let Some(types) = types(node)
        && !types.iter().any(|t| has_type(value, t))
    {
        findings.push(wrong_type(path, &types, value));
        return;
    }
    match value {
        Value::Object(object) => {
            let Some(known) = properties(root, Some(node)) else {
                return;
            };
            let closed = node.get("additionalProperties") == Some(&Value::Bool(false));
            for (key, inner) in object {
                path.push(PathStep::Key(key.clone()));
                match known.get(key) {
                    Some(schema) => walk(root, schema, inner, path, findings),
                    None if closed => findings.push(unknown_key(path, key, known)),
                    None => {}
                }
                path.pop();
            }
        }
        Value::Array(items) => {
            if let Some(schema) = node.get("items") {
                for (i, item) in items.iter().enumerate() {
                    path.push(PathStep::Index(i));
                    walk(root, schema, item, path, findings);
                    path.pop();
                }
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

/// A value outside an enumeration, with the accepted values and the one it was probably meant to be.
fn not_accepted(path: &[PathStep], allowed: &[&Value], value: &Value) -> Finding {
    let names: Vec<String> = allowed
        .iter()
        .map(|c| format!("`{}`", c.as_str().map_or_else(|| c.to_string(), str::to_owned)))
        .collect();
    let hint = value
        .as_str()
        .and_then(|s| nearest(s, allowed.iter().filter_map(|c| c.as_str())))
        .map(|near| format!(" (did you mean `{near}`?)"))
        .unwrap_or_default();
    Finding::value(
        path.to_vec(),
        format!(
            "`{}` cannot be {}: expected one of {}{hint}",
            dotted(path),
            shown_value(value),
            names.join(", ")
        ),
    )
}

/// A value of none of the schema's `types`.
fn wrong_type(path: &[PathStep], types: &[&str], value: &Value) -> Finding {
    // `null` stands for a key left out; the message names what a key that is present may hold.
    let expected: Vec<String> = types
        .iter()
        .filter(|t| **t != "null" || types.len() == 1)
        .map(|t| article(t))
        .collect();
    Finding::value(
        path.to_vec(),
        format!(
            "`{}` must be {}, not {}",
            dotted(path),
            expected.join(" or "),
            shown_value(value)
        ),
    )
}

fn unknown_key(path: &[PathStep], key: &str, known: &Map<String, Value>) -> Finding {
    let section = dotted(path.get(..path.len().saturating_sub(1)).unwrap_or_default());
    let message = match nearest(key, known.keys().map(String::as_str)) {
        Some(near) => format!("unknown key `{key}` in `{section}`: did you mean `{near}`?"),
        None => {
            let names: Vec<String> = known.keys().map(|k| format!("`{k}`")).collect();
            format!(
                "unknown key `{key}` in `{section}`: expected one of {}",
                names.join(", ")
            )
        }
    };
    Finding::key(path.to_vec(), message)
}

/// The rules and the mode of `permissions`, once their types are right.
fn permission_values(top: &Map<String, Value>, findings: &mut Vec<Finding>) {
    let Some(Value::Object(permissions)) = top.get("permissions") else {
        return;
    };
    for (key, behavior) in [
        ("deny", Decision::Deny),
        ("ask", Decision::Ask),
        ("allow", Decision::Allow),
    ] {
        let Some(Value::Array(rules)) = permissions.get(key) else {
            continue;
        };
        for (i, rule) in rules.iter().enumerate() {
            let Some(text) = rule.as_str() else { continue };
            if let Err(e) = Rule::parse(text, behavior, Source::User) {
                findings.push(Finding::value(
                    vec![
                        PathStep::Key("permissions".to_owned()),
                        PathStep::Key(key.to_owned()),
                        PathStep::Index(i),
                    ],
                    e.at(format!("permissions.{key}[{i}]")).to_string(),
                ));
            }
        }
    }
    if let Some(Value::String(mode)) = permissions.get("defaultMode")
        && let Err(e) = mode.parse::<PermissionMode>()
    {
        findings.push(Finding::value(
            vec![
                PathStep::Key("permissions".to_owned()),
                PathStep::Key("defaultMode".to_owned()),
            ],
            e.at("permissions.defaultMode").to_string(),
        ));
    }
}

/// `node` with a `$ref` to the document's `$defs` followed.
fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(reference) => reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
            .unwrap_or(node),
        None => node,
    }
}

/// The properties of an object schema (following `$ref` and a single non-null `anyOf` branch).
fn properties<'a>(root: &'a Value, node: Option<&'a Value>) -> Option<&'a Map<String, Value>> {
    let node = resolve(root, node?);
    if let Some(branches) = node.get("anyOf").and_then(Value::as_array) {
        return branches.iter().find_map(|branch| properties(root, Some(branch)));
    }
    node.get("properties").and_then(Value::as_object)
}

/// Whether `value` has a JSON type the schema `branch` accepts.
fn fits(root: &Value, branch: &Value, value: &Value) -> bool {
    kinds(root, branch).iter().any(|kind| has_type(value, kind))
}

/// The JSON types a schema node accepts: its `type`, the types of its constants, `object` for a node with
/// properties, or those of its `anyOf` branches.
fn kinds(root: &Value, node: &Value) -> Vec<&'static str> {
    let node = resolve(root, node);
    if let Some(branches) = node.get("anyOf").and_then(Value::as_array) {
        return branches.iter().flat_map(|b| kinds(root, b)).collect();
    }
    let name = |value: &Value| match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    if let Some(values) = constants(node) {
        return values.into_iter().map(name).collect();
    }
    if let Some(types) = types(node) {
        let known = [
            "null", "boolean", "integer", "number", "string", "array", "object",
        ];
        return known.into_iter().filter(|k| types.contains(k)).collect();
    }
    if node.get("properties").is_some() {
        return vec!["object"];
    }
    Vec::new()
}

fn is_null_type(node: &Value) -> bool {
    node.get("type").and_then(Value::as_str) == Some("null")
}

/// The allowed constants of an enumeration: `enum`, or a `oneOf` whose branches are all `const`.
fn constants(node: &Value) -> Option<Vec<&Value>> {
    if let Some(values) = node.get("enum").and_then(Value::as_array) {
        return Some(values.iter().collect());
    }
    let branches = node.get("oneOf")?.as_array()?;
    branches.iter().map(|branch| branch.get("const")).collect()
}

fn types(node: &Value) -> Option<Vec<&str>> {
    match node.get("type")? {
        Value::String(one) => Some(vec![one.as_str()]),
        Value::Array(many) => Some(many.iter().filter_map(Value::as_str).collect()),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Object(_) => None,
    }
}

fn has_type(value: &Value, name: &str) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

fn article(name: &str) -> String {
    match name {
        "null" => "null".to_owned(),
        "array" | "object" | "integer" => format!("an {name}"),
        "boolean" | "number" | "string" => format!("a {name}"),
        other => format!("`{other}`"),
    }
}

/// A value as a message shows it: its JSON, shortened.
fn shown_value(value: &Value) -> String {
    match value {
        Value::Object(_) => "an object".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {
            let text = value.to_string();
            let short: String = text.chars().take(40).collect();
            if short.len() < text.len() {
                format!("`{short}…`")
            } else {
                format!("`{short}`")
            }
        }
    }
}

/// A path as the settings reference writes it: `agentGuard.sandbox`, `permissions.allow[2]`.
fn dotted(path: &[PathStep]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            PathStep::Key(key) if out.is_empty() => out.push_str(key),
            PathStep::Key(key) => {
                out.push('.');
                out.push_str(key);
            }
            PathStep::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The optimal string alignment distance: insertions, deletions, replacements and swaps of neighbours.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0_usize; (a.len() + 1) * width];
    let at = |i: usize, j: usize| i * width + j;
    for (i, j) in (0..=a.len()).flat_map(|i| (0..=b.len()).map(move |j| (i, j))) {
        let value = if i == 0 || j == 0 {
            i.max(j)
        } else {
            let same = a.get(i - 1) == b.get(j - 1);
            let get = |i, j| d.get(at(i, j)).copied().unwrap_or(usize::MAX - 1);
            let mut best = (get(i - 1, j) + 1)
                .min(get(i, j - 1) + 1)
                .min(get(i - 1, j - 1) + usize::from(!same));
            if i > 1 && j > 1 && a.get(i - 1) == b.get(j - 2) && a.get(i - 2) == b.get(j - 1) {
                best = best.min(get(i - 2, j - 2) + 1);
            }
            best
        };
        if let Some(cell) = d.get_mut(at(i, j)) {
            *cell = value;
        }
    }
    d.get(at(a.len(), b.len())).copied().unwrap_or(usize::MAX)
}

/// The line and column of the value at `path` in `text`, a settings file that parses: where a problem found outside
/// [`check_settings`] (a warning about a value) is shown.
pub fn locate_value(text: &str, path: &[PathStep]) -> Option<(usize, usize)> {
    locate(text, path, Spot::Value)
}

/// The line and column of the key or value at `path` in `text`. serde_json's values carry no positions, so the
/// text is scanned again along the path; it has already parsed, so the scan only needs to skip values.
fn locate(text: &str, path: &[PathStep], spot: Spot) -> Option<(usize, usize)> {
    let mut scan = Scan { text, at: 0 };
    let mut key_at = None;
    scan.space();
    for step in path {
        match step {
            PathStep::Key(wanted) => {
                scan.expect('{')?;
                loop {
                    scan.space();
                    let start = scan.at;
                    let key = scan.string()?;
                    scan.space();
                    scan.expect(':')?;
                    scan.space();
                    if key == *wanted {
                        key_at = Some(start);
                        break;
                    }
                    scan.skip_value()?;
                    scan.space();
                    scan.expect(',')?;
                }
            }
            PathStep::Index(wanted) => {
                scan.expect('[')?;
                for _ in 0..*wanted {
                    scan.space();
                    scan.skip_value()?;
                    scan.space();
                    scan.expect(',')?;
                }
                scan.space();
                key_at = None;
            }
        }
    }
    let offset = match spot {
        Spot::Key => key_at.unwrap_or(scan.at),
        Spot::Value => scan.at,
    };
    let before = text.get(..offset)?;
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or_default().chars().count() + 1;
    Some((line, column))
}

/// A cursor over JSON text that is known to parse.
struct Scan<'a> {
    text: &'a str,
    at: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<char> {
        self.text.get(self.at..)?.chars().next()
    }

    fn space(&mut self) {
        while let Some(c) = self.peek().filter(|c| c.is_ascii_whitespace()) {
            self.at += c.len_utf8();
        }
    }

    fn expect(&mut self, wanted: char) -> Option<()> {
        (self.peek()? == wanted).then(|| self.at += wanted.len_utf8())
    }

    /// A string, decoded (a key may hold escapes).
    fn string(&mut self) -> Option<String> {
        let start = self.at;
        self.skip_string()?;
        serde_json::from_str(self.text.get(start..self.at)?).ok()
    }

    fn skip_string(&mut self) -> Option<()> {
        self.expect('"')?;
        let rest = self.text.get(self.at..)?;
        let mut escaped = false;
        for (i, c) in rest.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    self.at += i + 1;
                    return Some(());
                }
                _ => escaped = false,
            }
        }
        None
    }

    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            '"' => self.skip_string(),
            open @ ('{' | '[') => {
                let close = if open == '{' { '}' } else { ']' };
                self.at += 1;
                self.space();
                if self.expect(close).is_some() {
                    return Some(());
                }
                loop {
                    self.space();
                    if open == '{' {
                        self.skip_string()?;
                        self.space();
                        self.expect(':')?;
                        self.space();
                    }
                    self.skip_value()?;
                    self.space();
                    if self.expect(close).is_some() {
                        return Some(());
                    }
                    self.expect(',')?;
                }
            }
            _ => {
                while let Some(c) = self
                    .peek()
                    .filter(|c| !matches!(c, ',' | '}' | ']') && !c.is_ascii_whitespace())
                {
                    self.at += c.len_utf8();
                }
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Vec<String> {
        check_settings(text, Path::new("s.json"), &crate::settings_schema())
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn nearest_names_within_a_few_letters() {
        let keys = ["blockNetwork", "sandbox", "deny", "allow", "permissions"];
        assert_eq!(nearest("blockNetwrk", keys), Some("blockNetwork"));
        assert_eq!(nearest("dney", keys), Some("deny"));
        assert_eq!(nearest("permisions", keys), Some("permissions"));
        assert_eq!(nearest("Sandbox", keys), Some("sandbox"));
        assert_eq!(nearest("model", keys), None);
        assert_eq!(nearest("kep", ["keep", "remove"]), Some("keep"));
        // Where any other name is fine, only a near misspelling is taken for one.
        assert_eq!(misspelling_of("asq", ["ask", "allow"]), Some("ask"));
        assert_eq!(misspelling_of("LSP", ["LS", "Bash"]), None);
        assert_eq!(misspelling_of("slow", ["Glob", "Skill"]), None);
        assert_eq!(misspelling_of("bash", ["Bash"]), Some("Bash"));
        assert_eq!(misspelling_of("agentGaurd", ["agentGuard"]), Some("agentGuard"));
        assert_eq!(nearest("allow", keys), None, "the name itself is no suggestion");
        assert_eq!(distance("ab", "ba"), 1);
        assert_eq!(distance("", "abc"), 3);
    }

    #[test]
    fn every_mistake_is_named_with_line_column_and_suggestion() {
        let text = "{\n  \"permisions\": {},\n  \"permissions\": {\n    \"dney\": [\"Read(./x)\"],\n    \"allow\": [\"Raed(./x)\", \"bash(ls)\"]\n  },\n  \"model\": \"x\"\n}";
        let problems = check(text);
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert_eq!(
            problems[..2],
            [
                "s.json:2:3: unknown key `permisions`: did you mean `permissions`?",
                "s.json:4:5: unknown key `dney` in `permissions`: did you mean `deny`?",
            ],
        );
        assert!(
            problems[2].starts_with("s.json:5:15: invalid rule `Raed(./x)`"),
            "{problems:?}"
        );
        assert!(
            problems[3].starts_with("s.json:5:28: invalid rule `bash(ls)`"),
            "{problems:?}"
        );
        let text = "{\"permissions\": {\"allow\": [\"Read\",\n  \"Raed(./x)\", \"bash(ls)\"]}}";
        let problems = check(text);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0].starts_with("s.json:2:3: invalid rule `Raed(./x)` in permissions.allow[1]")
                && problems[0].contains("did you mean `Read(./x)`?"),
            "{problems:?}"
        );
        assert!(
            problems[1].starts_with("s.json:2:16: ") && problems[1].contains("did you mean `Bash(ls)`?"),
            "{problems:?}"
        );
    }

    #[test]
    fn syntax_errors_and_wrong_types_have_positions() {
        assert_eq!(
            check("{\n  \"permissions\": {\"allow\": [\"Read\" \"Bash\"]}\n}"),
            ["s.json:2:36: invalid JSON: expected `,` or `]`"]
        );
        assert_eq!(
            check("{\"permissions\": {\"deny\": \"Bash\"}}"),
            ["s.json:1:26: `permissions.deny` must be an array, not `\"Bash\"`"]
        );
        assert_eq!(
            check("[]"),
            ["s.json:1:1: a settings file is a JSON object, not an array"]
        );
        assert_eq!(
            check("{\"allow\": [\"Read\"]}"),
            ["s.json:1:2: `allow` belongs inside `permissions`: write `\"permissions\": {\"allow\": …}`"]
        );
    }

    #[test]
    fn the_coding_agents_own_keys_are_fine() {
        let text = r#"{"$schema": "x", "env": {"A": "1"}, "model": "opus", "statusLine": {"type": "command"},
            "enabledPlugins": {}, "hooks": {"PreToolUse": []}, "sandbox": {"enabled": true},
            "permissions": {"allow": ["Bash(ls:*)"], "defaultMode": "plan", "disableAutoMode": "disable",
            "additionalDirectories": ["../x"]}, "someFutureKey": 1}"#;
        assert_eq!(check(text), Vec::<String>::new());
    }

    #[test]
    fn keys_are_located_inside_nested_objects_and_arrays() {
        let text = "{\"a\": [1, {\"b\": \"}\"}],\n \"c\": {\"d\\\"\": 2, \"e\": [true]}}";
        assert_eq!(
            locate(
                text,
                &[PathStep::Key("c".into()), PathStep::Key("e".into())],
                Spot::Key
            ),
            Some((2, 18))
        );
        assert_eq!(
            locate(
                text,
                &[
                    PathStep::Key("c".into()),
                    PathStep::Key("e".into()),
                    PathStep::Index(0)
                ],
                Spot::Value
            ),
            Some((2, 24))
        );
        assert_eq!(
            locate(
                text,
                &[PathStep::Key("a".into()), PathStep::Index(1)],
                Spot::Value
            ),
            Some((1, 11))
        );
    }
}
