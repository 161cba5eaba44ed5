//! How a runtime is set up: [`RuntimeConfig`] with its defaults, and [`RuntimeBuilder`], which builds the guard,
//! the tools and the hooks from loaded settings.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_decide::{DecisionBound, Guard, GuardOptions, GuardSettings};
use agent_hooks::{
    AgentHook, AuditLogHook, CancellationHook, CommandHook, HookRegistry, HookSettings, MetricsHook,
};
use agent_rules::{PermissionMode, Settings, TaintInMemory, TaintKeeper};
use agent_runtime_limits::LimitsConfig;
use agent_tool_traits::{CancelRegistry, Source, Tool};
use serde_json::Value;

use super::background::BgTaskRunTool;
use super::subagent::{ChildModels, SubagentTool};
use super::{Agent, Runtime, Services};
use crate::approval::{Approver, HeadlessApprover};
use crate::guard_handle::GuardHandle;
use crate::persist::OutputStore;
use crate::runtime_error::RuntimeError;
use crate::tools::builtin_tools;

/// The per-call timeout when `AGENT_TOOL_TIMEOUT_SECS` is not set.
pub(crate) const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);
/// How long an ask waits for an answer before it counts as a deny: the runtime's approver, and the queue of
/// `agent-guard serve` unless `--approval-timeout` says otherwise.
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(120);
/// Results longer than this many characters are written to disk and replaced by a stub.
pub(crate) const DEFAULT_MAX_OUTPUT_CHARS: usize = 16_000;

/// How a runtime is set up.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// The working directory: the sandbox's first root, where commands run.
    pub cwd: PathBuf,
    /// The home directory (`~` in rules and paths).
    pub home: Option<PathBuf>,
    /// The project the working directory belongs to, when it is above it: a root of the sandbox too
    /// ([`GuardOptions::project`]).
    pub project: Option<PathBuf>,
    /// A mode overriding the settings' own, with its source.
    pub mode: Option<(PermissionMode, Source)>,
    /// Where large results go (`tool-results/`); default: the settings' `agentGuard.libraryDir`, else
    /// `<project>/.agent-guard/library`. It is a root of the sandbox, so the model can read the full results.
    pub library_dir: Option<PathBuf>,
    /// `lead` for the main agent, the subagent's name otherwise.
    pub agent_name: String,
    /// A silent context (a subagent): asks become denies and `ask_user` fails.
    pub silent: bool,
    /// The timeout of one call (`AGENT_TOOL_TIMEOUT_SECS`, default 120 s).
    pub tool_timeout: Duration,
    /// How long an ask waits for the approver (default 120 s); no answer in time is a deny.
    pub approval_timeout: Duration,
    /// Results over this many characters are persisted (default 16,000).
    pub max_output_chars: usize,
    /// The runtime limits (L7): steps (default 8), duplicate calls, token budget; from `AGENT_MAX_STEPS`,
    /// `AGENT_TOKEN_SOFT_LIMIT` and `AGENT_TOKEN_HARD_LIMIT` by default.
    pub limits: LimitsConfig,
    /// How long a decision that reaches the shell analysis may take (`AGENT_GUARD_DECISION_TIMEOUT_MS`, default
    /// 5 s, the same bound as the hook's); past it the call is denied, since hostile input can make a shell parser
    /// run away.
    pub decision_bound: DecisionBound,
}

impl RuntimeConfig {
    /// The defaults for `cwd`, with the tool timeout read from `AGENT_TOOL_TIMEOUT_SECS`.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            home: None,
            project: None,
            mode: None,
            library_dir: None,
            agent_name: "lead".to_owned(),
            silent: false,
            tool_timeout: tool_timeout_from_env(std::env::var("AGENT_TOOL_TIMEOUT_SECS").ok().as_deref()),
            approval_timeout: DEFAULT_APPROVAL_TIMEOUT,
            max_output_chars: DEFAULT_MAX_OUTPUT_CHARS,
            limits: LimitsConfig::from_env(),
            decision_bound: DecisionBound::from_env(),
        }
    }

    /// The project, else the working directory: the rules of the user's answers are relative to it and saved in
    /// its settings, and the runtime's own files (the library dir) go beneath it, so that none of them makes a
    /// subdirectory a project of its own (an `.agent-guard/` there would).
    pub(crate) fn project_dir(&self) -> &Path {
        self.project.as_deref().unwrap_or(&self.cwd)
    }
}

/// The tool timeout for a value of `AGENT_TOOL_TIMEOUT_SECS`: a positive number of seconds, else the default.
pub(crate) fn tool_timeout_from_env(value: Option<&str>) -> Duration {
    value
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|secs| *secs > 0)
        .map_or(DEFAULT_TOOL_TIMEOUT, Duration::from_secs)
}

/// Builds a [`Runtime`].
pub struct RuntimeBuilder {
    settings: Settings,
    config: RuntimeConfig,
    approver: Arc<dyn Approver>,
    hooks: Vec<Arc<dyn AgentHook>>,
    audit: Option<AuditLogHook>,
    tools: Vec<Arc<dyn Tool>>,
    only: Option<Vec<String>>,
    cancel: CancelRegistry,
    child_models: Option<Arc<dyn ChildModels>>,
    taint: Arc<dyn TaintKeeper>,
}

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl RuntimeBuilder {
    /// Who answers asks (default: nobody, so every ask is denied).
    #[must_use]
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// Adds an in-process hook, after the cancellation hook and before the settings' command hooks.
    #[must_use]
    pub fn hook(mut self, hook: Arc<dyn AgentHook>) -> Self {
        self.hooks.push(hook);
        self
    }

    /// Writes the audit log with `audit` (registered last, so it records what the model finally sees).
    #[must_use]
    pub fn audit(mut self, audit: AuditLogHook) -> Self {
        self.audit = Some(audit);
        self
    }

    /// Adds a tool beside the built-in ones (or replaces one of the same name).
    #[must_use]
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// Narrows the tool set to `names` (either family); a call of any other tool is denied.
    #[must_use]
    pub fn only_tools(mut self, names: &[&str]) -> Self {
        self.only = Some(names.iter().map(|name| (*name).to_owned()).collect());
        self
    }

    /// Adds the `subagent` tool (`Task`/`Agent`), its children driven by the models `models` gives.
    #[must_use]
    pub fn subagent_models(mut self, models: Arc<dyn ChildModels>) -> Self {
        self.child_models = Some(models);
        self
    }

    /// Shares `cancel`, the registry of cancelled runs, with the caller (an API that cancels sessions).
    #[must_use]
    pub fn cancel_registry(mut self, cancel: CancelRegistry) -> Self {
        self.cancel = cancel;
        self
    }

    /// Keeps the taint of the runtime's sessions in `taint` (default: in memory, for as long as the runtime): a
    /// keeper others reach too (the project's session files, a server's memory) lets a person see and clear it.
    #[must_use]
    pub fn taint_keeper(mut self, taint: Arc<dyn TaintKeeper>) -> Self {
        self.taint = taint;
        self
    }

    /// Builds the guard, the tools and the hooks. Hooks run in this order: cancellation, the in-process hooks,
    /// the command hooks of agent-guard's settings files, metrics, the audit log.
    ///
    /// The `limits` of the `agentGuard` settings apply over [`RuntimeConfig::limits`], and the environment variables
    /// (`AGENT_MAX_STEPS`, ...) over them; a bad limit value is reported in the trace and keeps the previous value.
    pub fn build(mut self) -> Result<Runtime, RuntimeError> {
        let guard_settings = GuardSettings::from_settings(&self.settings)?;
        if !guard_settings.limits.is_empty() {
            self.config.limits = limits_from_settings(self.config.limits, &guard_settings.limits, |name| {
                std::env::var(name).ok()
            });
        }
        let library_dir = self
            .config
            .library_dir
            .clone()
            .or(guard_settings.library_dir)
            .unwrap_or_else(|| self.config.project_dir().join(".agent-guard").join("library"));
        // A missing library dir only means large results cannot be kept; the call itself still reports.
        if let Err(error) = agent_hooks::create_dir_all_ignored(&library_dir) {
            tracing::warn!(dir = %library_dir.display(), %error, "cannot create the library dir");
        }
        let guard_options = GuardOptions {
            cwd: self.config.cwd.clone(),
            home: self.config.home.clone(),
            mode: self.config.mode,
            extra_roots: vec![library_dir.clone()],
            project: self.config.project.clone(),
            auto_allow: None,
        };
        let guard = GuardHandle::new(Guard::new(&self.settings, &guard_options)?);
        let mut registry = builtin_tools(&guard, Arc::clone(&self.approver));
        registry.register(Arc::new(BgTaskRunTool));
        for tool in self.tools {
            registry.register(tool);
        }
        if self.child_models.is_some() {
            // A placeholder so that `only_tools` can keep or drop it; the real tool needs the finished parts.
            registry.register(Arc::new(SubagentTool::placeholder()));
        }
        if let Some(only) = &self.only {
            let names: Vec<&str> = only.iter().map(String::as_str).collect();
            registry = registry.restrict(&names);
        }
        let mut hooks = HookRegistry::new();
        hooks.register(Arc::new(CancellationHook::new(self.cancel.clone())));
        for hook in self.hooks {
            hooks.register(hook);
        }
        let mut commands = HookSettings::default();
        for section in self.settings.hook_sections() {
            let document = serde_json::json!({ "hooks": section.value });
            commands.merge(HookSettings::from_json(&document)?);
        }
        if !commands.is_empty() {
            hooks.register(Arc::new(CommandHook::new(commands)));
        }
        let metrics = Arc::new(MetricsHook::new());
        hooks.register(Arc::clone(&metrics) as Arc<dyn AgentHook>);
        if let Some(audit) = &self.audit {
            hooks.register(Arc::new(audit.clone()));
        }
        let services = Services {
            hooks,
            store: OutputStore::new(&library_dir, self.config.max_output_chars),
            cancel: self.cancel,
            metrics,
            audit: self.audit,
            taint: self.taint,
        };
        let agent = Agent {
            config: self.config,
            guard_options,
            settings: Mutex::new(self.settings),
            guard,
            approver: self.approver,
            ceiling: None,
            bubble: false,
            services: Arc::new(services),
        };
        let runtime = Runtime::new(agent, registry);
        Ok(match self.child_models {
            Some(models) => runtime.with_subagents(models),
            None => runtime,
        })
    }
}

impl Runtime {
    /// A builder over loaded `settings`.
    pub fn builder(settings: Settings, config: RuntimeConfig) -> RuntimeBuilder {
        RuntimeBuilder {
            settings,
            config,
            approver: Arc::new(HeadlessApprover),
            hooks: Vec::new(),
            audit: None,
            tools: Vec::new(),
            only: None,
            cancel: CancelRegistry::new(),
            child_models: None,
            taint: Arc::new(TaintInMemory::new("the runtime's memory")),
        }
    }
}

/// `limits` with the settings' `section` applied, then the variables `env` finds; every value that could not be used
/// is reported in the trace (a typo in a settings file must not pass unnoticed, nor fail the session).
fn limits_from_settings(
    limits: LimitsConfig,
    section: &serde_json::Map<String, Value>,
    env: impl Fn(&str) -> Option<String>,
) -> LimitsConfig {
    let (limits, mut errors) = limits.with_settings(&Value::Object(section.clone()));
    let (limits, env_errors) = limits.with_vars(env);
    errors.extend(env_errors);
    for error in &errors {
        tracing::warn!(%error, "a runtime limit was not applied");
    }
    limits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_limits_apply_first_then_the_environment() {
        let section =
            serde_json::json!({"maxSteps": 2, "tokenHardLimit": 900, "duplicateLimit": 0, "speed": 1});
        let Value::Object(section) = section else {
            unreachable!()
        };
        let env = |name: &str| (name == "AGENT_TOKEN_HARD_LIMIT").then(|| "1200".to_owned());
        let limits = limits_from_settings(LimitsConfig::default(), &section, env);
        assert_eq!(limits.max_steps, 2);
        assert_eq!(
            limits.token_hard_limit, 1200,
            "the process environment wins over the files"
        );
        assert_eq!(
            limits.duplicate_limit,
            LimitsConfig::default().duplicate_limit,
            "a bad value is not applied"
        );
    }
}
