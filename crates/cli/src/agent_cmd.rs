//! `agent-guard agent`: one session in a project, driven by a model behind an HTTP server, each call printed with
//! its decision as it is made, asks put to the terminal, then the final answer.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_core::{Model, ModelFuture, Runtime, RuntimeConfig, StepRecord, SummaryFuture, ToolSpec};
use agent_hooks::{AuditConfig, AuditDatabase, AuditFilter, AuditLogHook};
use agent_model::{Api, HttpChildren, HttpModel, ModelConfig};
use agent_tool_traits::Source;
use anyhow::{Context, Result, anyhow};

use crate::DecideArgs;
use crate::demo::render_call;
use crate::terminal::TerminalApprover;

// The arguments of `agent-guard agent`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct AgentArgs {
    /// The task, in words.
    task: String,
    // The help is an attribute, not a doc comment: rustdoc would read its URLs as links.
    #[arg(
        long,
        value_name = "URL",
        help = "The server's base URL [default: https://api.openai.com/v1 for openai, https://api.anthropic.com \
                for anthropic]"
    )]
    base_url: Option<String>,
    /// The model's name
    #[arg(long, value_name = "NAME", env = "AGENT_GUARD_MODEL")]
    model: String,
    /// The protocol the server speaks
    #[arg(long, value_name = "API", default_value = "openai", value_parser = ["openai", "anthropic"])]
    api: String,
    /// The environment variable holding the API key (never a flag) [default: OPENAI_API_KEY or
    /// ANTHROPIC_API_KEY]
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
    /// The project directory the session works in [default: the current directory]
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// The audit log (a SQLite path or URL, or a PostgreSQL URL) [default: DIR/.agent-guard/audit.db]
    #[arg(long, value_name = "PATH|URL")]
    audit_db: Option<AuditDatabase>,
    #[command(flatten)]
    decide: DecideArgs,
    /// Read each answer whole instead of streamed
    #[arg(long)]
    no_stream: bool,
    /// The longest the server may stay silent, in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    timeout: u64,
    /// Put asks to the approval queue of `agent-guard serve` at this URL instead of the terminal (the token
    /// comes from `AGENT_GUARD_TOKEN`)
    #[arg(long, value_name = "URL", env = "AGENT_GUARD_SERVER")]
    server: Option<String>,
}

/// What the model is told of its situation.
fn system_prompt(cwd: &std::path::Path) -> String {
    format!(
        "You are an agent working in the directory `{}`. Use the tools to carry out the user's task. agent-guard \
         decides every tool call: a call may be denied, and its result then says why; do not repeat a denied call \
         unchanged, find another way or say what you could not do. When the task is done, answer with a short \
         summary and no tool call.",
        cwd.display()
    )
}

/// Runs the session.
pub(crate) fn run(args: &AgentArgs) -> Result<ExitCode> {
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let cwd = cwd
        .canonicalize()
        .with_context(|| format!("cannot use `{}` as the working directory", cwd.display()))?;
    let api: Api = args.api.parse().map_err(|e: String| anyhow!(e))?;
    let key_var = args
        .api_key_env
        .clone()
        .unwrap_or_else(|| api.default_key_var().to_owned());
    let api_key = std::env::var(&key_var).ok().filter(|k| !k.is_empty());
    if api_key.is_none() && args.api_key_env.is_some() {
        return Err(anyhow!(
            "the environment variable `{key_var}` named by --api-key-env is not set"
        ));
    }
    // The hosted services refuse every request without a key: fail now rather than after the retries. A server
    // named by --base-url (a local one) may need none.
    if api_key.is_none() && args.base_url.is_none() {
        return Err(anyhow!(
            "no API key: `{key_var}` is not set; set it (or name another variable with --api-key-env), or give \
             --base-url for a server that needs no key"
        ));
    }
    let mut config = ModelConfig::new(api, &args.model);
    if let Some(url) = &args.base_url {
        config.base_url.clone_from(url);
    }
    config.api_key = api_key;
    config.key_var = key_var;
    config.stream = !args.no_stream;
    config.timeout = Duration::from_secs(args.timeout.max(1));
    config.system = Some(system_prompt(&cwd));
    let model = HttpModel::new(config.clone(), &args.task)?;
    let children = HttpChildren::new(config);

    let project = crate::load::project(&cwd);
    let settings = crate::load::settings(&project, &args.decide)?;
    let telemetry_settings = agent_decide::GuardSettings::from_settings(&settings)
        .ok()
        .map(|guard| guard.telemetry);
    let mut runtime_config = RuntimeConfig::new(&cwd);
    runtime_config.home = crate::load::home();
    let audit_default = project.join(".agent-guard").join("audit.db");
    let state_project = project.clone();
    runtime_config.project = (project != cwd).then_some(project);
    runtime_config.mode = crate::load::cli_mode(&args.decide)?.map(|mode| (mode, Source::CliArg));
    let audit_db = match &args.audit_db {
        Some(db) => db.clone(),
        None => audit_default
            .display()
            .to_string()
            .parse()
            .map_err(|e| anyhow!("{e}"))?,
    };
    let session_id = format!(
        "agent-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default()
    );
    let approver: Arc<dyn agent_core::Approver> = match &args.server {
        Some(server) => Arc::new(crate::remote::RemoteApprover {
            server: server.clone(),
            cwd: cwd.clone(),
            mode: args.decide.mode.clone(),
            answered_by: std::sync::Arc::default(),
        }),
        None => Arc::new(TerminalApprover),
    };
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    println!("agent-guard agent: {}", model.endpoint());
    println!("workspace: {}", cwd.display());
    let started = Instant::now();
    let (report, rows) = tokio.block_on(async {
        let audit = AuditLogHook::open_database(&audit_db, AuditConfig::default())
            .await
            .map_err(|error| anyhow!("{error}"))?;
        let telemetry = crate::telemetry::attach(&audit, telemetry_settings.as_ref());
        let approver = crate::telemetry::CountedAsks::wrap(approver, telemetry.as_ref());
        let builder = Runtime::builder(settings, runtime_config)
            .approver(approver)
            .audit(audit)
            .subagent_models(Arc::new(children));
        // The session's taint is kept where the hook keeps a coding agent's, in the project's `.agent-guard/`
        // beside the session's audit log: `session show|clear` and the server's page (for `--server`) reach it
        // there, and a clearing counts from the session's next call on.
        let runtime = builder
            .taint_keeper(Arc::new(crate::taint_store::TaintStore::in_project(
                &state_project,
            )))
            .build()?;
        // Ctrl-C cancels the run: a streamed answer stops, Cancel tools stop, and the session stops cleanly.
        let cancel = runtime.cancel_registry().clone();
        let id = session_id.clone();
        let interrupt = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\nagent-guard: cancelling the session");
                cancel.cancel(&id);
            }
        });
        let mut traced = Traced {
            model,
            printed: 0,
            started: Instant::now(),
        };
        let report = runtime.run(&session_id, &mut traced).await;
        interrupt.abort();
        traced.print_new(&report.steps);
        let filter = AuditFilter {
            session_id: Some(session_id.clone()),
            ..AuditFilter::default()
        };
        let rows = AuditLogHook::query_database(&audit_db, &filter)
            .await
            .map(|rows| rows.len())
            .ok();
        if let Some(telemetry) = telemetry {
            let _ended =
                tokio::task::spawn_blocking(move || telemetry.shutdown(crate::telemetry::EXIT_DEADLINE))
                    .await;
        }
        anyhow::Ok((report, rows))
    })?;
    println!(
        "\nsession stopped: {} after {} step(s), {} ms",
        report.reason,
        report.steps.len(),
        started.elapsed().as_millis()
    );
    println!(
        "audit log: {} rows for session `{}` in {audit_db}",
        rows.map_or_else(|| "?".to_owned(), |n| n.to_string()),
        report.session_id
    );
    if let Some(answer) = &report.answer {
        println!("\nanswer:\n{answer}");
    }
    if let Some(error) = &report.stop_error {
        eprintln!("agent-guard: the session did not stop cleanly: {error}");
        return Ok(ExitCode::FAILURE);
    }
    Ok(if report.answer.is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The model, printing each step's calls with their decisions before its next turn (so they appear as the session
/// goes, not at its end).
struct Traced {
    model: HttpModel,
    /// The last step printed.
    printed: u32,
    started: Instant,
}

impl Traced {
    fn print_new(&mut self, steps: &[StepRecord]) {
        let mut out = String::new();
        let from = self.printed;
        for record in steps.iter().filter(|s| s.step > from) {
            let _ = writeln!(
                out,
                "\nstep {} ({:.1} s)",
                record.step,
                self.started.elapsed().as_secs_f64()
            );
            let step_start = record.calls.iter().filter_map(|c| c.ran.map(|r| r.0)).min();
            for call in &record.calls {
                render_call(&mut out, call, step_start);
            }
            self.printed = record.step;
        }
        print!("{out}");
    }
}

impl Model for Traced {
    fn tools(&mut self, tools: &[ToolSpec]) {
        self.model.tools(tools);
    }

    fn next_turn<'a>(&'a mut self, history: &'a [StepRecord]) -> ModelFuture<'a> {
        self.print_new(history);
        self.model.next_turn(history)
    }

    fn notice(&mut self, message: &str) {
        self.model.notice(message);
    }

    fn compacted(&mut self, summary: &str) {
        println!("\n[the context was compacted]");
        self.model.compacted(summary);
    }

    fn summarize<'a>(&'a mut self, history: &'a [StepRecord], summary: &'a str) -> SummaryFuture<'a> {
        self.print_new(history);
        self.model.summarize(history, summary)
    }

    fn take_reported_tokens(&mut self) -> Option<u64> {
        self.model.take_reported_tokens()
    }

    fn final_turn<'a>(&'a mut self, history: &'a [StepRecord], reminder: &'a str) -> ModelFuture<'a> {
        self.print_new(history);
        self.model.final_turn(history, reminder)
    }
}
