//! The `agentGuard` section of settings files: what the layers above the rules read from them.

use std::path::{Path, PathBuf};

use agent_bash_guard::{BashConfig, BashGuard, CommandTableExtension};
use agent_fs_sandbox::ProtectedPaths;
use agent_os_sandbox::{DomainPattern, DomainPolicy};
use agent_rules::{Discovery, PathStep, Problem, Section, Settings, ValueProblem};
use agent_tool_traits::Source;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::owners::{Owners, Repository};
use crate::taint::TaintSettings;

/// agent-guard's own settings, merged from the `agentGuard` sections of every source.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GuardSettings {
    /// Whether network commands ask and run without the network unless allowed (`true`) or are judged like any
    /// other command (`false`); `None` defers to `AGENT_BLOCK_NETWORK`.
    pub block_network: Option<bool>,
    /// Extra protected path patterns for writes (gitignore-style names or globs).
    pub protected_writes: Vec<String>,
    /// Extra protected path patterns for reads (secrets).
    pub protected_reads: Vec<String>,
    /// Extensions of the shell knowledge table, highest source first.
    pub commands: Vec<Value>,
    /// The library directory (a root; large tool results are written under it).
    pub library_dir: Option<PathBuf>,
    /// The skills directory (a root).
    pub skills_dir: Option<PathBuf>,
    /// Directories readable but not writable.
    pub read_only_dirs: Vec<PathBuf>,
    /// The runtime limits' keys (`maxSteps`, `tokenSoftLimit`, ...), each from the highest source that sets it;
    /// read by `LimitsConfig::with_settings`.
    pub limits: Map<String, Value>,
    /// Whether allowed shell commands run under the kernel sandbox; from the highest source that sets it.
    pub sandbox: SandboxMode,
    /// Variable-name patterns the sandbox also removes from a command's environment, from every source.
    pub sandbox_env_remove: Vec<String>,
    /// Variable names (or patterns) the sandbox keeps even when they look like credentials, from every source.
    pub sandbox_env_keep: Vec<String>,
    /// `agentGuard.sandbox.autoAllow`: whether a shell line that asks only for effects the sandbox contains is
    /// allowed inside it; `None` is the default (on where the kernel enforces the sandbox). A repository's own
    /// settings can only turn it off.
    pub auto_allow: Option<bool>,
    /// `agentGuard.sandbox.memoryMax` in bytes; `None` is the default. A repository's own settings can only lower it.
    pub memory_max: Option<u64>,
    /// `agentGuard.sandbox.read`: more places outside the roots that sandboxed commands may read (`~/.config/app`),
    /// from the user's settings only.
    pub sandbox_read: Vec<String>,
    /// `agentGuard.sandbox.env`: variable names (or patterns with `*`) passed to sandboxed commands besides the
    /// ones shells and tool chains need, from the user's settings only.
    pub sandbox_env_pass: Vec<String>,
    /// `agentGuard.sandbox.publish`: the ports a sandboxed command run in the background publishes on this
    /// machine's `127.0.0.1` when it listens on them, from the user's settings only.
    pub sandbox_publish: Vec<agent_os_sandbox::PortRange>,
    /// `agentGuard.network`: the domains sandboxed commands may reach, the package registries and the user's
    /// allow patterns (a repository's own settings cannot add any), less every deny pattern.
    pub network: DomainPolicy,
    /// `agentGuard.undo`: whether `workspace-write` runs are snapshotted for `agent-guard undo` (`None`: on, as
    /// `AGENT_GUARD_UNDO` says). A repository's own settings can only turn it off.
    pub undo: Option<bool>,
    /// `agentGuard.telemetry`: whether decisions are exported over OTLP, and where.
    pub telemetry: TelemetrySettings,
    /// `agentGuard.taint`: sources and sinks from every source, trusted domains from the user's settings only.
    pub taint: TaintSettings,
}

/// `agentGuard.telemetry`, merged: off unless the user's (or managed) settings turn it on; a repository's own
/// settings can only turn it off, and never name the endpoint (a cloned project must not send its user's
/// commands anywhere).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TelemetrySettings {
    /// Whether every decision and answer is exported.
    pub enabled: bool,
    /// The collector's base URL (`http://collector:4318`); `OTEL_EXPORTER_OTLP_ENDPOINT` wins over it.
    pub endpoint: Option<String>,
}

/// `agentGuard.sandbox`: whether an allowed shell command runs under the kernel sandbox.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// Wrap where the kernel can enforce the sandbox; where it cannot, allow as the analysis decided and say so.
    #[default]
    Auto,
    /// Wrap; where the kernel cannot enforce the sandbox, what would be allowed asks instead.
    Required,
    /// Never wrap: allows rest on the analysis alone.
    Off,
}

impl SandboxMode {
    /// The mode as the settings spell it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Required => "required",
            Self::Off => "off",
        }
    }
}

/// The `agentGuard` section of a settings file.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SectionJson {
    /// `true` (the default) asks before network commands, unless an allow rule covers them; `false` judges them
    /// like any other command.
    #[serde(default)]
    block_network: Option<bool>,
    /// More gitignore-style patterns whose writes always ask.
    #[serde(default)]
    protected_paths: Vec<String>,
    /// More patterns whose reads always ask (secrets).
    #[serde(default)]
    protected_reads: Vec<String>,
    /// Extensions of the shell knowledge table: `readOnly`, `deny`, `network`, `wrappers`, `interpreters`,
    /// `packageManagers` (lists of command names).
    #[serde(default)]
    #[schemars(with = "Option<CommandsJson>")]
    commands: Option<Value>,
    /// The library directory: a root; large tool results are written beneath it.
    #[serde(default)]
    library_dir: Option<PathBuf>,
    /// The skills directory: a root.
    #[serde(default)]
    skills_dir: Option<PathBuf>,
    /// Roots that may be read but not written.
    #[serde(default)]
    read_only_directories: Vec<PathBuf>,
    /// The runtime limits (L7), each key from the highest source that sets it; the environment variables
    /// (`AGENT_MAX_STEPS`, `AGENT_TOKEN_SOFT_LIMIT`, `AGENT_TOKEN_HARD_LIMIT`) override them.
    #[serde(default)]
    #[schemars(with = "Option<LimitsJson>")]
    limits: Option<Map<String, Value>>,
    /// The kernel sandbox: a mode alone (`"auto"`, `"required"`, `"off"`), or an object with the mode and the
    /// sandbox's other settings.
    #[serde(default)]
    sandbox: Option<SandboxJson>,
    /// The domains sandboxed commands may reach through the sandbox's proxy, besides the package registries.
    #[serde(default)]
    network: Option<NetworkJson>,
    /// `true` (the default): every `workspace-write` run is snapshotted so that `agent-guard undo` takes it back,
    /// and a line that removes or overwrites project files is contained; `false`: no snapshots, and such lines ask.
    #[serde(default)]
    undo: Option<bool>,
    /// OpenTelemetry export of every decision and answer (off by default); the `OTEL_EXPORTER_OTLP_*` variables
    /// apply.
    #[serde(default)]
    telemetry: Option<TelemetryJson>,
    /// Session taint (docs/taint.md): tools whose results are untrusted content, tools that send data out, and
    /// domains whose content is trusted and which data may reach.
    #[serde(default)]
    taint: Option<TaintJson>,
    /// The environment of sandboxed commands: `remove` adds variable-name patterns (with `*`) to the
    /// credentials removed by default, `keep` names variables that are never removed.
    #[serde(default)]
    sandbox_env: Option<SandboxEnvJson>,
    /// Policy tests that `agent-guard test` runs: calls and the decision each must get. Deciding never reads
    /// them, malformed or not; `agent-guard test` checks each case and names the one that is malformed.
    #[serde(default = "no_tests")]
    #[schemars(with = "Vec<PolicyTest>")]
    #[expect(dead_code, reason = "read by `agent-guard test`, never by a decision")]
    tests: Option<Value>,
}

/// One policy test: a tool call and the decision it must get (`agentGuard.tests`, or a test file of
/// `agent-guard test`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyTest {
    /// A name shown when the case fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The tool, as the agent names it (`Bash`, `Read`, `mcp__server__tool`…).
    pub tool: String,
    /// The tool's input (`{"command": "git push"}`).
    #[serde(default = "empty_object")]
    #[schemars(with = "Map<String, Value>")]
    pub input: Value,
    /// The decision the call must get. A case names it, `notDecidedBy`, or both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "^(allow|ask|deny)$"), with = "Option<String>")]
    pub expect: Option<agent_tool_traits::Decision>,
    /// The permission mode to decide in (default: the settings' mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "^(default|acceptEdits|plan|dontAsk|bypassPermissions|auto|bubble)$"))]
    pub mode: Option<String>,
    /// The working directory of the call; a relative one is relative to the directory of the file holding the
    /// test (default: the current directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// What must decide: a layer (`rules`, `bash-guard`, `fs-sandbox`…), a resolution step (`deny-rule`,
    /// `default`…), both as `layer/step`, or the text of the rule (`Bash(git push:*)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// What must not decide, in the same forms as `decidedBy` (an example a rule must not match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_decided_by: Option<String>,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// No policy tests: the default of `agentGuard.tests`.
fn no_tests() -> Option<Value> {
    Some(Value::Array(Vec::new()))
}

/// `agentGuard.sandbox`: the mode alone, or the object of the sandbox's settings.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
enum SandboxJson {
    /// `auto` (the default): allowed shell commands run under the kernel sandbox where the kernel supports it;
    /// `required`: where it does not, what would be allowed asks instead; `off`: never.
    Mode(SandboxMode),
    /// The mode and the sandbox's other settings.
    Settings(SandboxSettingsJson),
}

/// The object form of `agentGuard.sandbox`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SandboxSettingsJson {
    /// `auto` (the default), `required` or `off`, as the short form.
    #[serde(default)]
    mode: Option<SandboxMode>,
    /// `true` (the default where the kernel enforces the sandbox): a shell line that would ask only for effects
    /// the sandbox contains (writes inside the project, running the project's code, the network to allowed
    /// domains) is allowed and runs inside it.
    #[serde(default)]
    auto_allow: Option<bool>,
    /// The memory a sandboxed command may use: bytes, or a size such as `"4GiB"` or `"512MiB"` (default 4 GiB).
    #[serde(default)]
    #[schemars(with = "Option<SizeJson>")]
    memory_max: Option<Value>,
    /// More places outside the roots that sandboxed commands may read (`~/.config/app`).
    #[serde(default)]
    read: Vec<String>,
    /// More environment variables passed to sandboxed commands (names, or patterns with `*`).
    #[serde(default)]
    env: Vec<String>,
    /// The ports (`5173`) and ranges (`"8000-8099"`) a command run in the background publishes on this machine's
    /// `127.0.0.1` when it listens on them inside its sandbox (none by default).
    #[serde(default)]
    #[schemars(with = "Vec<PortJson>")]
    publish: Vec<Value>,
}

/// A port or a range of ports, as `agentGuard.sandbox.publish` takes them.
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code, reason = "only the schema of the settings file is made from it")]
enum PortJson {
    /// One port, from 1 to 65535.
    Port(u16),
    /// A port or a range, `"8000-8099"`.
    Range(String),
}

/// Reads the entries of `agentGuard.sandbox.publish`: a port as a number or text, or a range as text.
fn parse_ports(entries: &[Value]) -> std::result::Result<Vec<agent_os_sandbox::PortRange>, String> {
    entries
        .iter()
        .map(|entry| match entry {
            Value::Number(n) => n
                .as_u64()
                .and_then(|port| u16::try_from(port).ok())
                .and_then(agent_os_sandbox::PortRange::single)
                .ok_or_else(|| format!("`{n}` is not a port from 1 to 65535")),
            Value::String(text) => text.parse(),
            other => Err(format!(
                "`{other}` is not a port or a range of ports (`8000-8099`)"
            )),
        })
        .collect()
}

/// A size: bytes, or a number with a unit (`"4GiB"`, `"512MiB"`, `"2G"`).
#[allow(dead_code, reason = "only its schema is used")]
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
enum SizeJson {
    /// Bytes.
    Bytes(u64),
    /// A number with a unit.
    Text(String),
}

/// `agentGuard.telemetry`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TelemetryJson {
    /// `true` exports every decision and answer over OTLP/HTTP (default `false`).
    #[serde(default)]
    enabled: Option<bool>,
    /// The collector's base URL (`http://localhost:4318`); `OTEL_EXPORTER_OTLP_ENDPOINT` wins over it.
    #[serde(default)]
    endpoint: Option<String>,
}

/// `agentGuard.network`: domain patterns (`crates.io`, `*.npmjs.org`, `host:8080`).
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NetworkJson {
    /// Domains sandboxed commands may reach besides the package registries.
    #[serde(default)]
    allow: Vec<String>,
    /// Domains they may never reach, even when an allow pattern or a registry names them.
    #[serde(default)]
    deny: Vec<String>,
}

/// `agentGuard.taint`: what the settings add to the table of session taint.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TaintJson {
    /// Tools whose results are untrusted content (`mcp__github__*`), as names or prefixes ending in `*`.
    #[serde(default)]
    sources: Vec<String>,
    /// Tools that send data out of the session (`mcp__slack__post_message`), as names or prefixes ending in `*`;
    /// once the session has read untrusted content and private data, they ask.
    #[serde(default)]
    sinks: Vec<String>,
    /// Domains whose pages are trusted content and which data may reach (`docs.rs`, `*.example.com`); read from
    /// the user's settings only.
    #[serde(default)]
    trusted_domains: Vec<String>,
}

/// Reads a size (`memoryMax`): bytes as a number, or a number with a unit of 1024s (`K`, `KiB`, `M`, `MiB`, `G`,
/// `GiB`, `T`, `TiB`, case-insensitive, `B` optional).
fn parse_size(value: &Value) -> std::result::Result<u64, String> {
    if let Some(bytes) = value.as_u64() {
        return (bytes > 0)
            .then_some(bytes)
            .ok_or_else(|| "a size of 0 bytes would stop every command".to_owned());
    }
    let text = value
        .as_str()
        .ok_or_else(|| format!("`{value}` is not a size: write bytes or a size such as \"4GiB\""))?;
    size_from_text(text)
}

/// Reads a size written as text, as `agentGuard.sandbox.memoryMax` and `agent-guard sandbox --memory-max` take it:
/// bytes, or a number with a unit of 1024s (`K`, `KiB`, `M`, `MiB`, `G`, `GiB`, `T`, `TiB`, case-insensitive, `B`
/// optional).
///
/// # Errors
/// A message naming `text` when it is no size, or a size of 0 bytes.
pub fn size_from_text(text: &str) -> std::result::Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => {
            return Err(format!(
                "`{text}` is not a size: the unit is one of K, M, G, T (as KiB, MiB…)"
            ));
        }
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1u64 << shift))
        .filter(|bytes| *bytes > 0)
        .ok_or_else(|| format!("`{text}` is not a size: write a whole number above 0 before the unit"))
}

fn parse_domains(patterns: &[String]) -> std::result::Result<Vec<DomainPattern>, String> {
    patterns
        .iter()
        .map(|p| p.parse::<DomainPattern>().map_err(|e| e.to_string()))
        .collect()
}

/// `agentGuard.commands`: the extensions of the shell knowledge table (its schema, which the check of a settings file
/// applies; the lists are read as the shell analyser's `CommandTableExtension`).
#[allow(dead_code, reason = "only its schema is used")]
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CommandsJson {
    /// Programs the table does not know that only read, with any arguments (`"mytool"`, `"cargo-foo list"`).
    read_only: Option<Vec<String>>,
    /// Commands always denied (a name, or a name and sub-command words).
    deny: Option<Vec<String>>,
    /// More network tools (asked while the network is blocked).
    network: Option<Vec<String>>,
    /// More wrappers: programs that run the command in their arguments.
    wrappers: Option<Vec<String>>,
    /// More interpreters (never read-only).
    interpreters: Option<Vec<String>>,
    /// More package managers and build tools (never read-only).
    package_managers: Option<Vec<String>>,
}

/// The values of the `agentGuard` section of a settings `document` that loading parses itself, parsed here by the
/// same functions ([`GuardSettings::from_settings`], the guard's protected paths): a size, domain patterns, tool
/// names of the taint table, protected-path globs. Run by every check of a settings file once it fits the schema,
/// so a file that passes the check loads, and one that does not is refused with its line and column.
fn section_values(document: &Value) -> Vec<ValueProblem> {
    let Some(section) = document.get("agentGuard") else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    let mut report = |keys: &[&str], index: Option<usize>, why: String| {
        let mut path: Vec<PathStep> = std::iter::once("agentGuard")
            .chain(keys.iter().copied())
            .map(|key| PathStep::Key(key.to_owned()))
            .collect();
        let mut shown = format!("agentGuard.{}", keys.join("."));
        if let Some(i) = index {
            path.push(PathStep::Index(i));
            shown.push_str(&format!("[{i}]"));
        }
        problems.push(ValueProblem {
            path,
            message: format!("in `{shown}`: {why}"),
        });
    };
    let strings = |keys: &[&str]| -> Vec<(usize, String)> {
        let pointer: String = keys.iter().map(|k| format!("/{k}")).collect();
        section
            .pointer(&pointer)
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, item)| item.as_str().map(|s| (i, s.to_owned())))
                    .collect()
            })
            .unwrap_or_default()
    };
    if let Some(size) = section.pointer("/sandbox/memoryMax").filter(|v| !v.is_null())
        && let Err(why) = parse_size(size)
    {
        report(&["sandbox", "memoryMax"], None, why);
    }
    if let Some(ports) = section.pointer("/sandbox/publish").and_then(Value::as_array) {
        for (i, port) in ports.iter().enumerate() {
            if let Err(why) = parse_ports(std::slice::from_ref(port)) {
                report(&["sandbox", "publish"], Some(i), why);
            }
        }
    }
    for keys in [
        &["network", "allow"][..],
        &["network", "deny"],
        &["taint", "trustedDomains"],
    ] {
        for (i, pattern) in strings(keys) {
            if let Err(why) = parse_domains(std::slice::from_ref(&pattern)) {
                report(keys, Some(i), why);
            }
        }
    }
    for keys in [&["taint", "sources"][..], &["taint", "sinks"]] {
        for (i, name) in strings(keys) {
            if let Some(why) = not_a_tool_pattern(&name) {
                report(keys, Some(i), why);
            }
        }
    }
    for key in ["protectedPaths", "protectedReads"] {
        for (i, pattern) in strings(&[key]) {
            if let Err(e) = ProtectedPaths::none().with_extra([&pattern]) {
                report(&[key], Some(i), with_sources(&e));
            }
        }
    }
    problems
}

/// An error with the errors it wraps: `protected-path pattern `[x` is invalid: unclosed character class`.
fn with_sources(error: &dyn std::error::Error) -> String {
    let mut shown = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        let text = inner.to_string();
        if !shown.contains(&text) {
            shown.push_str(": ");
            shown.push_str(&text);
        }
        source = inner.source();
    }
    shown
}

/// Why `name` (an entry of `agentGuard.taint.sources` or `sinks`) names no tool, or `None` when it names some.
fn not_a_tool_pattern(name: &str) -> Option<String> {
    (name.trim().is_empty() || name.trim() == "*")
        .then(|| format!("`{name}` names no tool (a name, or a prefix ending in `*`)"))
}

/// What the settings file at `path` asks that is not applied, though the file loads: entries of
/// `agentGuard.commands` the shell analyser leaves out (a known command in `readOnly`, `wrappers`, `interpreters`
/// or `packageManagers`, an entry that is no command name), each with its line and column. `rules --check` and
/// `doctor` print them as warnings; the analysis stays as strict as without them.
pub fn settings_file_warnings(path: &Path) -> Vec<Problem> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let Ok(document) = serde_json::from_str::<Value>(&text) else {
        return Vec::new();
    };
    let Some(Value::Object(commands)) = document.pointer("/agentGuard/commands") else {
        return Vec::new();
    };
    let mut warnings = Vec::new();
    for (key, entries) in commands {
        let Some(entries) = entries.as_array() else {
            continue;
        };
        for (i, entry) in entries.iter().enumerate() {
            // The entry alone, applied as loading applies it: what the analyser reports is what it leaves out.
            let mut one = serde_json::Map::new();
            one.insert(key.clone(), Value::Array(vec![entry.clone()]));
            let Ok(extension) = serde_json::from_value::<CommandTableExtension>(Value::Object(one)) else {
                continue;
            };
            let guard = BashGuard::new(BashConfig {
                commands: extension,
                ..BashConfig::default()
            });
            for why in guard.diagnostics() {
                let steps = [
                    PathStep::Key("agentGuard".to_owned()),
                    PathStep::Key("commands".to_owned()),
                    PathStep::Key(key.clone()),
                    PathStep::Index(i),
                ];
                warnings.push(Problem {
                    file: path.to_owned(),
                    position: agent_rules::locate_value(&text, &steps),
                    message: format!("`agentGuard.commands.{key}[{i}]` is not applied: {why}"),
                });
            }
        }
    }
    warnings
}

/// The `sandboxEnv` object of the `agentGuard` section.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SandboxEnvJson {
    /// More variable-name patterns to remove (`INTERNAL_*`).
    #[serde(default)]
    remove: Vec<String>,
    /// Variable names or patterns to keep even when they look like credentials.
    #[serde(default)]
    keep: Vec<String>,
}

/// The `limits` object of the `agentGuard` section (its schema, which the check of a settings file applies; the keys
/// are read by `LimitsConfig::with_settings`).
#[allow(dead_code, reason = "only its schema is used")]
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LimitsJson {
    /// Steps with tools before one final turn without them (default 8).
    #[schemars(range(min = 1))]
    max_steps: Option<u32>,
    /// The count of identical consecutive calls at which the call is refused (default 3).
    #[schemars(range(min = 1))]
    duplicate_limit: Option<u32>,
    /// Estimated tokens over which each step gets a nudge (default 32,000).
    #[schemars(range(min = 1))]
    token_soft_limit: Option<u64>,
    /// Estimated tokens at which the model must answer (default 40,000).
    #[schemars(range(min = 1))]
    token_hard_limit: Option<u64>,
    /// Consecutive steps without new information that force an answer (default 3).
    #[schemars(range(min = 1))]
    diminishing_steps: Option<u32>,
    /// Below this many estimated tokens of unseen output, a step adds no new information (default 16).
    #[schemars(range(min = 1))]
    min_new_tokens: Option<u64>,
    /// Consecutive compaction failures that skip auto-compaction (default 3).
    #[schemars(range(min = 1))]
    compaction_failures: Option<u32>,
}

/// The JSON Schema of a settings file, `agentGuard` section included (checked in as docs/settings.schema.json).
pub fn settings_schema() -> Value {
    let mut schema = agent_rules::settings_schema();
    let mut section = serde_json::to_value(schemars::schema_for!(SectionJson)).unwrap_or(Value::Null);
    let mut defs = None;
    if let Some(object) = section.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
        // `$ref`s resolve against the document's root, so the section's definitions move there.
        defs = object.remove("$defs");
        object.insert(
            "description".to_owned(),
            Value::String("agent-guard's own keys (ignored by the coding agent).".to_owned()),
        );
    }
    let Some(root) = schema.as_object_mut() else {
        return schema;
    };
    if let Some(Value::Object(defs)) = defs
        && let Value::Object(all) = root.entry("$defs").or_insert_with(|| Value::Object(Map::new()))
    {
        all.extend(defs);
    }
    if let Some(Value::Object(properties)) = root.get_mut("properties") {
        properties.insert("agentGuard".to_owned(), section);
    }
    schema
}

/// The schema every reader checks a settings file against: [`settings_schema`] with `agentGuard.tests` left open,
/// since deciding never reads the policy tests (`agent-guard test` checks each case and names a malformed one).
fn check_schema() -> &'static Value {
    // Every hook call is a process of its own that checks its settings files: parsing the checked-in schema costs a
    // tenth of generating it. A test keeps the checked-in file equal to what `settings_schema` generates; a file
    // that could not be parsed falls back to generating it.
    const CHECKED_IN: &str = include_str!("../../../docs/settings.schema.json");
    static SCHEMA: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| {
        let mut schema = serde_json::from_str(CHECKED_IN).unwrap_or_else(|_| settings_schema());
        if let Some(tests) = schema.pointer_mut("/properties/agentGuard/properties/tests") {
            *tests = Value::Bool(true);
        }
        schema
    });
    &SCHEMA
}

/// Every problem of one settings file, the `agentGuard` section included, each with its line and column and the
/// nearest known name: what `agent-guard rules --check` prints and `doctor` reports. Loading runs the same check
/// ([`discover_settings`]), so a file that passes here loads, and one that fails is refused with these problems.
pub fn check_settings_file(path: &Path) -> Vec<Problem> {
    Settings::check_file(path, check_schema(), section_values)
}

/// The settings `discovery` finds, each file checked like [`check_settings_file`]: how every reader (the hook,
/// `serve`, `agent`, `rules`) loads them.
pub fn discover_settings(discovery: &Discovery) -> agent_rules::Result<Settings> {
    Settings::discover_with(discovery, check_schema, section_values)
}

impl GuardSettings {
    /// Merges the `agentGuard` sections of `settings`: scalar keys from the highest source that sets them, lists
    /// from every source. An unknown key or a value of the wrong type is an error naming the file.
    /// A project's local settings files count as the repository's here: a layer that knows whose each is merges
    /// with `GuardSettings::merge`.
    pub fn from_settings(settings: &Settings) -> Result<Self> {
        Self::merge_with(settings, &|section| {
            matches!(section.source, Source::Project | Source::Local)
        })
    }

    /// [`Self::from_settings`], with a local settings file that is the user's own (`owners`) merged as the user's
    /// files are; with the local files whose sections would loosen what the repository's settings may not
    /// (whose owner a git write could change: see `Guard::confinement`). Whose a local file is, is looked for only
    /// when its section would merge otherwise as the user's.
    pub(crate) fn merge(settings: &Settings, owners: &Owners) -> Result<(Self, Vec<PathBuf>)> {
        let conservative = Self::from_settings(settings)?;
        let mut local_files: Vec<&Path> = settings
            .agent_guard_sections()
            .iter()
            .filter(|section| section.source == Source::Local)
            .filter_map(|section| section.file.as_deref())
            .collect();
        local_files.dedup();
        let mut loosening = Vec::new();
        for file in local_files {
            let as_users = Self::merge_with(settings, &|section| {
                section.source == Source::Project
                    || (section.source == Source::Local && section.file.as_deref() != Some(file))
            })?;
            if as_users != conservative {
                loosening.push(file.to_owned());
            }
        }
        if loosening.is_empty() {
            return Ok((conservative, loosening));
        }
        let merged = Self::merge_with(settings, &|section| match section.source {
            Source::Project => true,
            Source::Local => {
                let file = section.file.as_deref();
                !file.is_some_and(|file| loosening.iter().any(|l| l == file))
                    || owners.repository(Source::Local, file).is_some()
            }
            _ => false,
        })?;
        Ok((merged, loosening))
    }

    /// Merges the sections, `repository` saying which are the repository's (and may only tighten).
    fn merge_with(settings: &Settings, repository: &dyn Fn(&Section) -> bool) -> Result<Self> {
        let sections: Vec<(&Section, bool)> = settings
            .agent_guard_sections()
            .iter()
            .map(|section| (section, repository(section)))
            .collect();
        Self::merge_sections(sections)
    }

    /// Merges `sections`, each with whether it is the repository's (and may only tighten).
    fn merge_sections(mut sections: Vec<(&Section, bool)>) -> Result<Self> {
        let mut merged = Self::default();
        let mut sandbox_set = false;
        let mut tightened = Tightening::default();
        let mut telemetry_enabled = None;
        sections.sort_by_key(|(s, _)| std::cmp::Reverse(s.source));
        for (section, repository) in sections {
            let invalid = |why: String| Error::Settings {
                file: section
                    .file
                    .as_ref()
                    .map(|f| f.display().to_string())
                    .unwrap_or_else(|| section.source.to_string()),
                why,
            };
            let json: SectionJson = serde_json::from_value(section.value.clone())
                .map_err(|e| invalid(format!("in `agentGuard`: {e}")))?;
            merged.block_network = merged.block_network.or(json.block_network);
            merged.protected_writes.extend(json.protected_paths);
            merged.protected_reads.extend(json.protected_reads);
            merged.commands.extend(json.commands);
            merged.library_dir = merged.library_dir.take().or(json.library_dir);
            merged.skills_dir = merged.skills_dir.take().or(json.skills_dir);
            merged.read_only_dirs.extend(json.read_only_directories);
            // A repository's own settings may only tighten the sandbox: a project that ships
            // `"sandbox": "off"`, a keep-list for `GITHUB_TOKEN`, its own domain or a home directory to read
            // would let its own commands out.
            let (mode, table) = match json.sandbox {
                Some(SandboxJson::Mode(mode)) => (Some(mode), SandboxSettingsJson::default()),
                Some(SandboxJson::Settings(table)) => (table.mode, table),
                None => (None, SandboxSettingsJson::default()),
            };
            if let Some(mode) = mode
                && !sandbox_set
                && (!repository || mode == SandboxMode::Required)
            {
                merged.sandbox = mode;
                sandbox_set = true;
            }
            merged
                .merge_sandbox_table(table, repository, &mut tightened)
                .map_err(invalid)?;
            merged
                .merge_network(json.network.unwrap_or_default(), repository)
                .map_err(invalid)?;
            merged
                .merge_taint(json.taint.unwrap_or_default(), repository)
                .map_err(invalid)?;
            if repository {
                tightened.undo_off |= json.undo == Some(false);
            } else {
                merged.undo = merged.undo.or(json.undo);
            }
            let telemetry = json.telemetry.unwrap_or_default();
            if repository {
                tightened.telemetry_off |= telemetry.enabled == Some(false);
            } else {
                telemetry_enabled = telemetry_enabled.or(telemetry.enabled);
                merged.telemetry.endpoint = merged.telemetry.endpoint.take().or(telemetry.endpoint);
            }
            if let Some(env) = json.sandbox_env {
                merged.sandbox_env_remove.extend(env.remove);
                if !repository {
                    merged.sandbox_env_keep.extend(env.keep);
                }
            }
            // Sections come highest first: a key already set stays.
            for (key, value) in json.limits.unwrap_or_default() {
                merged.limits.entry(key).or_insert(value);
            }
        }
        if tightened.auto_allow_off {
            merged.auto_allow = Some(false);
        }
        if tightened.undo_off {
            merged.undo = Some(false);
        }
        merged.telemetry.enabled = telemetry_enabled == Some(true) && !tightened.telemetry_off;
        merged.memory_max = smaller(merged.memory_max, tightened.memory_max);
        Ok(merged)
    }

    /// Merges the object form of `agentGuard.sandbox` of one section (highest source first): the user's keys as
    /// they are, a repository's only where they tighten (into `tightened`, applied after every section).
    fn merge_sandbox_table(
        &mut self,
        table: SandboxSettingsJson,
        repository: bool,
        tightened: &mut Tightening,
    ) -> std::result::Result<(), String> {
        let memory = table
            .memory_max
            .as_ref()
            .map(parse_size)
            .transpose()
            .map_err(|why| format!("in `agentGuard.sandbox.memoryMax`: {why}"))?;
        let publish =
            parse_ports(&table.publish).map_err(|why| format!("in `agentGuard.sandbox.publish`: {why}"))?;
        if repository {
            tightened.auto_allow_off |= table.auto_allow == Some(false);
            tightened.memory_max = smaller(tightened.memory_max, memory);
        } else {
            self.auto_allow = self.auto_allow.or(table.auto_allow);
            self.memory_max = self.memory_max.or(memory);
            self.sandbox_read.extend(table.read);
            self.sandbox_env_pass.extend(table.env);
            self.sandbox_publish.extend(publish);
        }
        Ok(())
    }

    /// Merges `agentGuard.network` of one section: deny patterns from every source, allow patterns from the
    /// user's settings only.
    fn merge_network(&mut self, network: NetworkJson, repository: bool) -> std::result::Result<(), String> {
        let deny =
            parse_domains(&network.deny).map_err(|why| format!("in `agentGuard.network.deny`: {why}"))?;
        let allow =
            parse_domains(&network.allow).map_err(|why| format!("in `agentGuard.network.allow`: {why}"))?;
        self.network.deny(deny);
        if !repository {
            self.network.allow(allow);
        }
        Ok(())
    }
}

impl GuardSettings {
    /// Merges `agentGuard.taint` of one section: sources and sinks from every source (they only make calls ask),
    /// trusted domains from the user's settings only.
    fn merge_taint(&mut self, taint: TaintJson, repository: bool) -> std::result::Result<(), String> {
        for (key, names) in [("sources", &taint.sources), ("sinks", &taint.sinks)] {
            if let Some(why) = names.iter().find_map(|n| not_a_tool_pattern(n)) {
                return Err(format!("in `agentGuard.taint.{key}`: {why}"));
            }
        }
        let trusted = parse_domains(&taint.trusted_domains)
            .map_err(|why| format!("in `agentGuard.taint.trustedDomains`: {why}"))?;
        self.taint.sources.extend(taint.sources);
        self.taint.sinks.extend(taint.sinks);
        if !repository {
            self.taint.trusted_domains.extend(trusted);
        }
        Ok(())
    }
}

/// What the repository's own settings files set in `agentGuard` that is not applied because such files may only
/// tighten the sandbox (`"sandbox": "off"`, `network.allow`, `sandbox.read`, …), each as the file and a sentence
/// naming the key (`agentGuard.sandbox`, or the key inside it) and why: for `doctor` and `rules`, so that a setting
/// the merge leaves out does not pass in silence. A key is reported when the merge would differ had that key alone
/// come from the user's settings; nothing is reported for settings that do not load.
pub fn repository_settings_not_applied(settings: &Settings) -> Vec<(PathBuf, String)> {
    let owners = Owners::default();
    let sections: Vec<(Section, Option<Repository>)> = settings
        .agent_guard_sections()
        .iter()
        .map(|section| {
            let owner = owners.repository(section.source, section.file.as_deref());
            (section.clone(), owner)
        })
        .collect();
    let merge = |sections: &[(Section, bool)]| {
        GuardSettings::merge_sections(sections.iter().map(|(s, r)| (s, *r)).collect())
    };
    let as_loaded: Vec<(Section, bool)> = sections.iter().map(|(s, o)| (s.clone(), o.is_some())).collect();
    let Ok(applied) = merge(&as_loaded) else {
        return Vec::new();
    };
    let mut not_applied = Vec::new();
    for (at, (section, owner)) in sections.iter().enumerate() {
        let (Some(owner), Value::Object(keys)) = (owner, &section.value) else {
            continue;
        };
        // Whether the merge differs with the key at `path` alone taken from the user's settings.
        let loosens = |path: &[&str]| {
            let mut rest = section.clone();
            let mut alone = section.clone();
            alone.value = Value::Object(Map::new());
            let (Some(value), Some(Value::Object(parent))) = (
                section.value.pointer(&pointer(path)).cloned(),
                path.split_last()
                    .and_then(|(_, up)| rest.value.pointer_mut(&pointer(up))),
            ) else {
                return false;
            };
            if let Some(last) = path.last() {
                parent.remove(*last);
            }
            let mut at_path = &mut alone.value;
            for step in path.iter().take(path.len().saturating_sub(1)) {
                if let Value::Object(object) = at_path {
                    at_path = object
                        .entry((*step).to_owned())
                        .or_insert_with(|| Value::Object(Map::new()));
                }
            }
            if let (Value::Object(object), Some(last)) = (at_path, path.last()) {
                object.insert((*last).to_owned(), value);
            }
            let mut variant = as_loaded.clone();
            if let Some(slot) = variant.get_mut(at) {
                *slot = (rest, true);
            }
            variant.insert(at + 1, (alone, false));
            merge(&variant).is_ok_and(|merged| merged != applied)
        };
        for (key, value) in keys {
            let mut named: Vec<String> = match value {
                Value::Object(inner) => inner
                    .keys()
                    .filter(|inner| loosens(&[key, inner]))
                    .map(|inner| format!("{key}.{inner}"))
                    .collect(),
                _ => Vec::new(),
            };
            if named.is_empty() && loosens(&[key]) {
                named.push(key.clone());
            }
            for path in named {
                not_applied.push((
                    section.file.clone().unwrap_or_default(),
                    format!(
                        "`agentGuard.{path}` is not applied: it comes from {}, which may only tighten the sandbox (the \
                         same key in your own settings, `~/.claude/settings.json`, applies)",
                        owner.describe()
                    ),
                ));
            }
        }
    }
    not_applied
}

/// The JSON pointer of the keys `path` (`""` for none).
fn pointer(path: &[&str]) -> String {
    path.iter()
        .map(|key| format!("/{}", key.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// What a repository's own settings asked of the sandbox that tightens it.
#[derive(Debug, Default)]
struct Tightening {
    /// `autoAllow: false` in some repository file.
    auto_allow_off: bool,
    /// `undo: false` in some repository file.
    undo_off: bool,
    /// `telemetry.enabled: false` in some repository file.
    telemetry_off: bool,
    /// The lowest `memoryMax` of the repository's files.
    memory_max: Option<u64>,
}

/// The smaller of two optional bounds (either one when the other is unset).
fn smaller(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
