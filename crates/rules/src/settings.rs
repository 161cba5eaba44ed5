//! Settings files (the coding agent's `settings.json` shape plus agent-guard's own), their discovery, and the
//! `AGENT_PERMISSIONS_*` environment variables.

use std::path::{Path, PathBuf};

use agent_tool_traits::{Decision, Source};
use serde::Deserialize;
use serde_json::Value;

use crate::check::{Problem, ValueCheck, check_settings_with, no_value_check};
use crate::error::{Error, Result};
use crate::mode::PermissionMode;
use crate::rule::Rule;

/// Which product a settings file belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `.claude/…`: the coding agent's own files; their hooks are not ours to run.
    CodingAgent,
    /// `.agent-guard/…` and files given on the command line.
    AgentGuard,
}

impl Family {
    /// Both families, the coding agent's first (the order of discovery inside one source).
    pub const ALL: [Self; 2] = [Self::CodingAgent, Self::AgentGuard];

    /// The directory that holds this family's settings in a project or a home directory.
    pub const fn dir(self) -> &'static str {
        match self {
            Self::CodingAgent => ".claude",
            Self::AgentGuard => ".agent-guard",
        }
    }

    /// The shared settings file of this family in `dir`, a project (source `project`) or a home directory
    /// (source `user`): `<dir>/.claude/settings.json`.
    pub fn settings_file(self, dir: &Path) -> PathBuf {
        dir.join(self.dir()).join("settings.json")
    }

    /// The project's own settings file of this family, kept out of version control (source `local`):
    /// `<project>/.claude/settings.local.json`.
    pub fn local_settings_file(self, project: &Path) -> PathBuf {
        project.join(self.dir()).join("settings.local.json")
    }
}

/// Where to look for settings.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// The project directory: where `.claude/` and `.agent-guard/` are looked for, the anchor of a managed policy's
    /// relative rules and of relative `additionalDirectories`. Readers pass the [`project_root`](crate::project_root)
    /// of the working directory, so that the project's settings apply from any of its subdirectories.
    pub cwd: PathBuf,
    /// The home directory; `None` skips user settings.
    pub home: Option<PathBuf>,
    /// Managed policy files (read-only for the user); missing files are skipped.
    pub managed: Vec<PathBuf>,
    /// Files given with `--settings` (source `cliArg`); they must exist.
    pub cli_files: Vec<PathBuf>,
}

impl Discovery {
    /// The managed settings files of this platform.
    pub fn default_managed() -> Vec<PathBuf> {
        vec![
            PathBuf::from("/etc/claude-code/managed-settings.json"),
            PathBuf::from("/etc/agent-guard/managed-settings.json"),
        ]
    }

    /// Every file this discovery looks at, with its source and family, highest precedence first.
    pub fn candidates(&self) -> Vec<(PathBuf, Source, Family)> {
        let mut out = Vec::new();
        for file in &self.managed {
            out.push((file.clone(), Source::Policy, family_of(file)));
        }
        for file in &self.cli_files {
            out.push((file.clone(), Source::CliArg, Family::AgentGuard));
        }
        for family in Family::ALL {
            out.push((family.local_settings_file(&self.cwd), Source::Local, family));
        }
        for family in Family::ALL {
            out.push((family.settings_file(&self.cwd), Source::Project, family));
        }
        if let Some(home) = &self.home {
            for family in Family::ALL {
                out.push((family.settings_file(home), Source::User, family));
            }
        }
        out
    }
}

fn family_of(file: &Path) -> Family {
    if file
        .components()
        .any(|c| c.as_os_str() == ".claude" || c.as_os_str() == "claude-code")
    {
        Family::CodingAgent
    } else {
        Family::AgentGuard
    }
}

/// The JSON shape of a settings file. Unknown top-level keys are ignored (the coding agent's files have many);
/// [`check_settings`] names those close to a key of this shape.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    title = "agent-guard settings",
    description = "A settings file of agent-guard or of the coding agent (`settings.json`)."
)]
struct SettingsJson {
    /// Permission rules and modes.
    #[serde(default)]
    permissions: PermissionsJson,
    /// agent-guard's own keys (ignored by the coding agent).
    #[serde(default)]
    agent_guard: Option<Value>,
    /// External command hooks, in the coding agent's shape (run by agent-guard's runtime from agent-guard's own files).
    #[serde(default)]
    hooks: Option<Value>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PermissionsJson {
    /// Rules that allow without asking: `Tool`, `Tool(content)` or `*`.
    #[serde(default)]
    allow: Vec<String>,
    /// Rules that deny; every deny beats every ask and every allow.
    #[serde(default)]
    deny: Vec<String>,
    /// Rules that ask; every ask beats every allow, also in `bypassPermissions`.
    #[serde(default)]
    ask: Vec<String>,
    /// The mode: default, acceptEdits, plan, dontAsk, bypassPermissions, auto (project settings cannot enable the
    /// last two).
    #[serde(default)]
    #[schemars(regex(pattern = "^(default|acceptEdits|plan|dontAsk|bypassPermissions|auto|bubble)$"))]
    default_mode: Option<String>,
    /// More directories the agent may work in (roots of the sandbox).
    #[serde(default)]
    additional_directories: Vec<String>,
    /// `disable` in a managed policy refuses `bypassPermissions` from every other source.
    #[serde(default)]
    disable_bypass_permissions_mode: Option<String>,
    /// The coding agent's: `disable` refuses its `auto` mode. agent-guard reads it from no file; a managed policy's
    /// `disableBypassPermissionsMode` is its own refusal.
    #[serde(default)]
    #[expect(
        dead_code,
        reason = "the coding agent's key, accepted so that its files pass the check"
    )]
    disable_auto_mode: Option<String>,
}

/// The JSON Schema of a settings file, with the `agentGuard` section left open (the layers above describe it).
pub fn settings_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(SettingsJson)).unwrap_or(Value::Null)
}

/// [`settings_schema`], built once: what [`Settings::add_file`] and [`Settings::add_text`] check files against.
fn own_schema() -> &'static Value {
    static SCHEMA: std::sync::LazyLock<Value> = std::sync::LazyLock::new(settings_schema);
    &SCHEMA
}

/// A section of a settings file that a higher layer reads (`agentGuard`, `hooks`), with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// Its source.
    pub source: Source,
    /// Its file, when it came from one.
    pub file: Option<PathBuf>,
    /// Its JSON.
    pub value: Value,
}

/// An additional directory and where it was configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdditionalDirectory {
    /// The directory, absolute (relative entries are taken relative to the working directory).
    pub path: PathBuf,
    /// Its source.
    pub source: Source,
}

/// The effective settings: every rule of every source, the mode and where it came from, the additional
/// directories, the sections for higher layers, and notes about what was refused.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    rules: Vec<Rule>,
    mode: Option<(PermissionMode, Source)>,
    additional_directories: Vec<AdditionalDirectory>,
    agent_guard: Vec<Section>,
    hooks: Vec<Section>,
    files: Vec<(PathBuf, Source)>,
    bypass_disabled: bool,
    /// A mode needing a trusted source that a local settings file set, refused while loading.
    refused_local_mode: Option<(PermissionMode, PathBuf)>,
    diagnostics: Vec<String>,
}

impl Settings {
    /// No settings: the built-in defaults alone.
    pub fn new() -> Self {
        Self::default()
    }

    /// Loads every file `discovery` finds, highest precedence first. A file that exists but cannot be read, or
    /// fails [`check_settings`](crate::check_settings), is an error naming it; a missing file is skipped (except
    /// `--settings` files). The `agentGuard` section is left to the layer that reads it: see [`Self::discover_with`].
    pub fn discover(discovery: &Discovery) -> Result<Self> {
        Self::discover_with(discovery, own_schema, no_value_check)
    }

    /// [`Self::discover`], checking each file against `schema()`: the schema of a whole settings file, with the
    /// sections of the layers above (the decision crate's `settings_schema`). The schema is asked for only when a
    /// file exists, so a process that finds none (a hook in a project without settings) never builds it. `values`
    /// checks the values those layers parse themselves (a [`ValueCheck`](crate::ValueCheck)).
    pub fn discover_with<'s>(
        discovery: &Discovery,
        schema: impl Fn() -> &'s Value,
        values: ValueCheck,
    ) -> Result<Self> {
        let mut settings = Self::new();
        for (path, source, family) in discovery.candidates() {
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && source != Source::CliArg => continue,
                Err(source) => return Err(Error::Read { path, source }),
            };
            let project = project_dir(&path, source, &discovery.cwd);
            settings.add_json(
                &text,
                &path,
                source,
                family,
                (&project, &discovery.cwd),
                (schema(), values),
            )?;
        }
        Ok(settings)
    }

    /// Loads one file as `source`.
    pub fn add_file(&mut self, path: &Path, source: Source, cwd: &Path) -> Result<()> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Read {
            path: path.to_owned(),
            source: e,
        })?;
        self.add_text(&text, path, source, cwd)
    }

    /// Loads settings `text` as if it were the content of the file at `path` (that file at another revision):
    /// rules anchored at the project are anchored where a file at `path` anchors them, and errors name `path`.
    pub fn add_text(&mut self, text: &str, path: &Path, source: Source, cwd: &Path) -> Result<()> {
        let project = project_dir(path, source, cwd);
        self.add_json(
            text,
            path,
            source,
            family_of(path),
            (&project, cwd),
            (own_schema(), no_value_check),
        )
    }

    /// Every problem of one settings file, checked against `schema` (see [`Self::discover_with`]): what
    /// `agent-guard rules --check` prints and `doctor` reports, the same check loading runs. Empty when the file is
    /// good.
    pub fn check_file(path: &Path, schema: &Value, values: ValueCheck) -> Vec<Problem> {
        match std::fs::read_to_string(path) {
            Ok(text) => check_settings_with(&text, path, schema, values),
            Err(e) => vec![Problem {
                file: path.to_owned(),
                position: None,
                message: format!("cannot read the settings file: {e}"),
            }],
        }
    }

    /// Loads one file's `text`, checked against `(schema, values)`; `places` is the project the file anchors its
    /// rules at and the working directory.
    fn add_json(
        &mut self,
        text: &str,
        path: &Path,
        source: Source,
        family: Family,
        places: (&Path, &Path),
        (schema, values): (&Value, ValueCheck),
    ) -> Result<()> {
        let (project, cwd) = places;
        let problems = check_settings_with(text, path, schema, values);
        if !problems.is_empty() {
            return Err(Error::Invalid {
                path: path.to_owned(),
                problems,
            });
        }
        let json: SettingsJson = serde_json::from_str(text).map_err(|e| Error::Json {
            path: path.to_owned(),
            source: e,
        })?;
        for (key, behavior, list) in rule_lists(&json.permissions) {
            for (i, text) in list.iter().enumerate() {
                let rule = Rule::parse(text, behavior, source)
                    .map_err(|e| e.at(format!("{} at permissions.{key}[{i}]", path.display())))?
                    .from_file(path.to_owned(), project.to_owned());
                self.rules.push(rule);
            }
        }
        if let Some(mode) = &json.permissions.default_mode {
            let mode: PermissionMode = mode
                .parse()
                .map_err(|e: Error| e.at(format!("{} at permissions.defaultMode", path.display())))?;
            // Of two local files, the later one's mode wins (as for every source): an accepted mode there also
            // overrides a refused one here.
            if source == Source::Local {
                self.refused_local_mode = mode.needs_trusted_source().then(|| (mode, path.to_owned()));
            }
            self.offer_mode(mode, source, &path.display().to_string());
        }
        if json.permissions.disable_bypass_permissions_mode.as_deref() == Some("disable")
            && source == Source::Policy
        {
            self.bypass_disabled = true;
        }
        for dir in &json.permissions.additional_directories {
            let expanded = crate::path::expand_home(dir, None).unwrap_or_else(|| PathBuf::from(dir));
            self.additional_directories.push(AdditionalDirectory {
                path: crate::path::absolute_lexical(&expanded, cwd),
                source,
            });
        }
        if let Some(value) = json.agent_guard {
            self.agent_guard.push(Section {
                source,
                file: Some(path.to_owned()),
                value,
            });
        }
        if let (Some(value), Family::AgentGuard) = (json.hooks, family) {
            self.hooks.push(Section {
                source,
                file: Some(path.to_owned()),
                value,
            });
        }
        self.files.push((path.to_owned(), source));
        Ok(())
    }

    /// Adds the rules and mode of the `AGENT_PERMISSIONS_ALLOW`, `_DENY`, `_ASK` and `_MODE` variables, read
    /// through `var` (comma-separated rules; a comma inside parentheses belongs to the rule). Source `flag`.
    pub fn add_env(&mut self, var: impl Fn(&str) -> Option<String>) -> Result<()> {
        for (name, behavior) in [
            ("AGENT_PERMISSIONS_DENY", Decision::Deny),
            ("AGENT_PERMISSIONS_ASK", Decision::Ask),
            ("AGENT_PERMISSIONS_ALLOW", Decision::Allow),
        ] {
            let Some(value) = var(name) else { continue };
            for text in split_rule_list(&value) {
                self.rules
                    .push(Rule::parse(text, behavior, Source::Flag).map_err(|e| e.at(name))?);
            }
        }
        if let Some(mode) = var("AGENT_PERMISSIONS_MODE").filter(|m| !m.trim().is_empty()) {
            let mode: PermissionMode = mode.parse().map_err(|e: Error| e.at("AGENT_PERMISSIONS_MODE"))?;
            self.offer_mode(mode, Source::Flag, "AGENT_PERMISSIONS_MODE");
        }
        Ok(())
    }

    /// Adds one rule (a session answer, a command).
    pub fn add_rule(&mut self, rule: Rule) {
        self.rules.push(rule);
    }

    /// Sets the mode from `source` (the command line, a hook input), subject to the same trust rules as files.
    pub fn set_mode(&mut self, mode: PermissionMode, source: Source, origin: &str) {
        self.offer_mode(mode, source, origin);
    }

    fn offer_mode(&mut self, mode: PermissionMode, source: Source, origin: &str) {
        if mode.needs_trusted_source() && matches!(source, Source::Project | Source::Local) {
            self.diagnostics.push(untrusted_mode_note(mode, source, origin));
            return;
        }
        if mode == PermissionMode::BypassPermissions && self.bypass_disabled && source != Source::Policy {
            self.diagnostics
                .push(format!("mode `{mode}` ({origin}) ignored: disabled by policy"));
            return;
        }
        match self.mode {
            Some((_, current)) if current > source => {}
            _ => self.mode = Some((mode, source)),
        }
    }

    /// Every rule, in load order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The mode of the highest source that set one.
    pub fn mode(&self) -> Option<(PermissionMode, Source)> {
        self.mode
    }

    /// A mode only a trusted source may set (`bypassPermissions`, `auto`) that a project's local settings file set
    /// and loading refused, since such a file may have come with the repository; with that file. A layer that
    /// knows the file to be the user's own (one git does not track) applies it with
    /// [`Policy::with_users_local_mode`](crate::Policy::with_users_local_mode).
    pub fn refused_local_mode(&self) -> Option<(PermissionMode, &Path)> {
        self.refused_local_mode
            .as_ref()
            .map(|(mode, file)| (*mode, file.as_path()))
    }

    /// Whether a managed policy refused `bypassPermissions` (`"disableBypassPermissionsMode": "disable"`).
    pub fn bypass_disabled(&self) -> bool {
        self.bypass_disabled
    }

    /// The additional directories of every source.
    pub fn additional_directories(&self) -> &[AdditionalDirectory] {
        &self.additional_directories
    }

    /// The `agentGuard` sections, highest precedence first.
    pub fn agent_guard_sections(&self) -> &[Section] {
        &self.agent_guard
    }

    /// The `hooks` sections of agent-guard's own files, highest precedence first.
    pub fn hook_sections(&self) -> &[Section] {
        &self.hooks
    }

    /// The files that were loaded, with their sources.
    pub fn files(&self) -> &[(PathBuf, Source)] {
        &self.files
    }

    /// Notes about what was refused while loading.
    pub fn diagnostics(&self) -> &[String] {
        &self.diagnostics
    }
}

/// The note of a mode refused from `source` (project or local settings) because only a trusted source may set it.
pub(crate) fn untrusted_mode_note(mode: PermissionMode, source: Source, origin: &str) -> String {
    format!(
        "mode `{mode}` from {source} settings ({origin}) ignored: only policy, user settings and the command line can enable it"
    )
}

fn rule_lists(p: &PermissionsJson) -> [(&'static str, Decision, &[String]); 3] {
    [
        ("deny", Decision::Deny, &p.deny),
        ("ask", Decision::Ask, &p.ask),
        ("allow", Decision::Allow, &p.allow),
    ]
}

/// The project directory of a settings file: the parent of its `.claude`/`.agent-guard` folder, or the folder
/// holding it; the working directory for policy files.
fn project_dir(path: &Path, source: Source, cwd: &Path) -> PathBuf {
    if source == Source::Policy {
        return cwd.to_owned();
    }
    let dir = path.parent().unwrap_or(cwd);
    let in_settings_folder = dir
        .file_name()
        .is_some_and(|n| n == ".claude" || n == ".agent-guard");
    let project = if in_settings_folder {
        dir.parent().unwrap_or(dir)
    } else {
        dir
    };
    crate::path::absolute_lexical(project, cwd)
}

/// Splits a comma-separated rule list; commas inside parentheses belong to the rule.
fn split_rule_list(list: &str) -> impl Iterator<Item = &str> {
    let mut depth = 0usize;
    let mut start = 0usize;
    let mut parts = Vec::new();
    for (i, c) in list.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(list.get(start..i).unwrap_or_default());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(list.get(start..).unwrap_or_default());
    parts.into_iter().map(str::trim).filter(|p| !p.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) -> PathBuf {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn discovers_both_families_with_their_sources() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let cwd = tmp.path().join("proj");
        write(
            &home,
            ".claude/settings.json",
            r#"{"permissions":{"allow":["Bash(ls:*)"]}}"#,
        );
        write(
            &home,
            ".agent-guard/settings.json",
            r#"{"permissions":{"deny":["Read(~/.ssh/**)"]}}"#,
        );
        write(
            &cwd,
            ".claude/settings.json",
            r#"{"permissions":{"ask":["Bash(git push:*)"]},"model":"x"}"#,
        );
        write(
            &cwd,
            ".claude/settings.local.json",
            r#"{"permissions":{"defaultMode":"acceptEdits"}}"#,
        );
        write(
            &cwd,
            ".agent-guard/settings.json",
            r#"{"hooks":{"PreToolUse":[]},"agentGuard":{"blockNetwork":false}}"#,
        );
        let d = Discovery {
            cwd: cwd.clone(),
            home: Some(home),
            managed: vec![],
            cli_files: vec![],
        };
        let s = Settings::discover(&d).unwrap();
        let sources: Vec<(String, Source)> = s.rules().iter().map(|r| (r.text.clone(), r.source)).collect();
        assert_eq!(
            sources,
            vec![
                ("Bash(git push:*)".into(), Source::Project),
                ("Bash(ls:*)".into(), Source::User),
                ("Read(~/.ssh/**)".into(), Source::User)
            ]
        );
        assert_eq!(s.mode(), Some((PermissionMode::AcceptEdits, Source::Local)));
        assert_eq!(s.hook_sections().len(), 1);
        assert_eq!(s.agent_guard_sections().len(), 1);
        assert_eq!(s.rules()[0].project.as_deref(), Some(cwd.as_path()));
    }

    #[test]
    fn project_settings_cannot_enable_bypass_or_auto() {
        let tmp = tempfile::tempdir().unwrap();
        write(
            tmp.path(),
            ".claude/settings.json",
            r#"{"permissions":{"defaultMode":"bypassPermissions"}}"#,
        );
        write(
            tmp.path(),
            ".agent-guard/settings.local.json",
            r#"{"permissions":{"defaultMode":"auto"}}"#,
        );
        let d = Discovery {
            cwd: tmp.path().into(),
            ..Discovery::default()
        };
        let s = Settings::discover(&d).unwrap();
        assert_eq!(s.mode(), None);
        assert_eq!(s.diagnostics().len(), 2, "{:?}", s.diagnostics());
        let local = tmp.path().join(".agent-guard/settings.local.json");
        assert_eq!(
            s.refused_local_mode(),
            Some((PermissionMode::Auto, local.as_path()))
        );
        // A later local file's accepted mode overrides the refused one.
        write(
            tmp.path(),
            ".agent-guard/settings.local.json",
            r#"{"permissions":{"defaultMode":"acceptEdits"}}"#,
        );
        write(
            tmp.path(),
            ".claude/settings.local.json",
            r#"{"permissions":{"defaultMode":"bypassPermissions"}}"#,
        );
        let s = Settings::discover(&d).unwrap();
        assert_eq!(s.refused_local_mode(), None);
        assert_eq!(s.mode(), Some((PermissionMode::AcceptEdits, Source::Local)));
    }

    #[test]
    fn bad_rule_names_rule_file_and_position() {
        let tmp = tempfile::tempdir().unwrap();
        let file = write(
            tmp.path(),
            ".claude/settings.json",
            r#"{"permissions":{"allow":["Read","Bash(ls"]}}"#,
        );
        let d = Discovery {
            cwd: tmp.path().into(),
            ..Discovery::default()
        };
        let err = Settings::discover(&d).unwrap_err().to_string();
        assert!(
            err.contains("`Bash(ls`")
                && err.contains(&file.display().to_string())
                && err.contains("allow[1]"),
            "{err}"
        );
        assert_eq!(Settings::check_file(&file, own_schema(), no_value_check).len(), 1);
    }

    #[test]
    fn invalid_json_and_missing_cli_file_are_errors() {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), ".claude/settings.json", "{not json");
        let d = Discovery {
            cwd: tmp.path().into(),
            ..Discovery::default()
        };
        assert!(matches!(Settings::discover(&d), Err(Error::Invalid { .. })));
        let d = Discovery {
            cwd: tmp.path().join("x"),
            cli_files: vec![tmp.path().join("nope.json")],
            ..Discovery::default()
        };
        assert!(matches!(Settings::discover(&d), Err(Error::Read { .. })));
    }

    #[test]
    fn environment_variables() {
        let mut s = Settings::new();
        s.add_env(|name| match name {
            "AGENT_PERMISSIONS_DENY" => Some("run_bash, WebFetch(domain:a.com)".into()),
            "AGENT_PERMISSIONS_ALLOW" => Some("Bash(npm run test:*),Read".into()),
            "AGENT_PERMISSIONS_MODE" => Some("plan".into()),
            _ => None,
        })
        .unwrap();
        let texts: Vec<&str> = s.rules().iter().map(|r| r.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "run_bash",
                "WebFetch(domain:a.com)",
                "Bash(npm run test:*)",
                "Read"
            ]
        );
        assert_eq!(s.mode(), Some((PermissionMode::Plan, Source::Flag)));
        let err = Settings::new()
            .add_env(|n| (n == "AGENT_PERMISSIONS_ASK").then(|| "Bash(".into()))
            .unwrap_err();
        assert!(err.to_string().contains("AGENT_PERMISSIONS_ASK"), "{err}");
    }
}
