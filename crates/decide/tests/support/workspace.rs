//! A throw-away project for a scenario: a temporary directory with `home/` and `proj/`, settings files of every
//! source, files and symbolic links, and a guard built exactly as `agent-guard check` builds one.

use std::collections::BTreeMap;
use std::path::PathBuf;

use agent_decide::{Guard, GuardOptions};
use agent_rules::{Discovery, PermissionMode, Settings};
use agent_tool_traits::Source;
use serde_json::{Map, Value, json};

/// Settings of one source, in the corpus's short form: permission keys at the top, `agentGuard`/`hooks` beside.
pub(crate) type SourceSettings = Map<String, Value>;

pub(crate) struct Workspace {
    pub(crate) tmp: tempfile::TempDir,
}

impl Workspace {
    pub(crate) fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("proj")).unwrap();
        std::fs::create_dir_all(tmp.path().join("home")).unwrap();
        Self { tmp }
    }

    pub(crate) fn root(&self) -> PathBuf {
        self.tmp.path().canonicalize().unwrap()
    }

    pub(crate) fn cwd(&self) -> PathBuf {
        self.root().join("proj")
    }

    pub(crate) fn home(&self) -> PathBuf {
        self.root().join("home")
    }

    /// Replaces `{tmp}`, `{cwd}` and `{home}` in every string of `value`.
    pub(crate) fn expand(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(
                s.replace("{tmp}", &self.root().display().to_string())
                    .replace("{cwd}", &self.cwd().display().to_string())
                    .replace("{home}", &self.home().display().to_string()),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.expand(v)).collect()),
            Value::Object(map) => {
                Value::Object(map.iter().map(|(k, v)| (k.clone(), self.expand(v))).collect())
            }
            other => other.clone(),
        }
    }

    pub(crate) fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.root().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    pub(crate) fn symlink(&self, rel: &str, target: &str) {
        let path = self.root().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let target = target.replace("{tmp}", &self.root().display().to_string());
        std::os::unix::fs::symlink(target, path).unwrap();
    }

    /// Writes the settings of each source where discovery finds them; returns the managed and `--settings` files.
    pub(crate) fn settings(
        &self,
        by_source: &BTreeMap<String, SourceSettings>,
    ) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let mut managed = Vec::new();
        let mut cli = Vec::new();
        for (source, short) in by_source {
            let mut permissions = Map::new();
            let mut file = Map::new();
            for (key, value) in short {
                let value = self.expand(value);
                if key == "agentGuard" || key == "hooks" {
                    file.insert(key.clone(), value);
                } else {
                    permissions.insert(key.clone(), value);
                }
            }
            file.insert("permissions".into(), Value::Object(permissions));
            let text = serde_json::to_string_pretty(&Value::Object(file)).unwrap();
            match source.as_str() {
                "user" => {
                    self.write("home/.claude/settings.json", &text);
                }
                "project" => {
                    self.write("proj/.claude/settings.json", &text);
                }
                "local" => {
                    self.write("proj/.claude/settings.local.json", &text);
                }
                "cli" => cli.push(self.write("cli-settings.json", &text)),
                "policy" => managed.push(self.write("managed-settings.json", &text)),
                other => panic!("unknown source `{other}` in a scenario"),
            }
        }
        (managed, cli)
    }

    /// A guard built as `agent-guard check` builds one, with `env` in place of the process environment, deciding
    /// with the analysis alone (`--auto-allow off`).
    pub(crate) fn guard(
        &self,
        by_source: &BTreeMap<String, SourceSettings>,
        env: &BTreeMap<String, String>,
        mode: Option<&str>,
    ) -> Guard {
        self.guard_with(by_source, env, mode, Some(false))
    }

    /// [`Workspace::guard`] with `auto_allow` as `--auto-allow` gives it (`None`: the settings decide).
    pub(crate) fn guard_with(
        &self,
        by_source: &BTreeMap<String, SourceSettings>,
        env: &BTreeMap<String, String>,
        mode: Option<&str>,
        auto_allow: Option<bool>,
    ) -> Guard {
        let (managed, cli_files) = self.settings(by_source);
        let discovery = Discovery {
            cwd: self.cwd(),
            home: Some(self.home()),
            managed,
            cli_files,
        };
        let mut settings = Settings::discover(&discovery).unwrap();
        settings
            .add_env(|name| {
                env.get(name)
                    .map(|v| self.expand(&json!(v)).as_str().unwrap_or_default().to_owned())
            })
            .unwrap();
        let mode = mode.map(|m| (m.parse::<PermissionMode>().unwrap(), Source::CliArg));
        let options = GuardOptions {
            cwd: self.cwd(),
            home: Some(self.home()),
            mode,
            extra_roots: Vec::new(),
            project: None,
            auto_allow,
        };
        Guard::new(&settings, &options).unwrap()
    }

    /// `text` with the temporary directory replaced by `<tmp>`, for snapshots.
    pub(crate) fn redact(&self, text: &str) -> String {
        text.replace(&self.root().display().to_string(), "<tmp>")
    }
}
