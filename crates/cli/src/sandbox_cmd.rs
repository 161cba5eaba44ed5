//! `agent-guard sandbox`: one command under the kernel sandbox of a profile, the settings found as `check`
//! finds them; `--probe` reports what the kernel can enforce.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agent_os_sandbox::{DomainPattern, KernelSupport, LoopbackGrant, PortRange};
use agent_tool_traits::{Confinement, SandboxProfile};
use anyhow::{Context, Result, bail};

use crate::DecideArgs;
use crate::load::Guards;

/// The exit status of a sandbox that could not be set up (the command did not run), as `env` and `timeout` use.
const SETUP_FAILED: u8 = 125;

// The arguments of `agent-guard sandbox`.
#[derive(Debug, clap::Args)]
pub(crate) struct SandboxArgs {
    /// `read-only`: read the roots, the system and the tool chains' places in the home directory, write nothing;
    /// `workspace-write`: also write the roots (not their protected paths) and the package caches.
    #[arg(long, value_name = "PROFILE", default_value = "read-only", value_parser = parse_profile)]
    profile: SandboxProfile,
    /// A root (repeatable); the first is where the settings are found. Default: the current directory.
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// The project the coding agent's session works in (its `CLAUDE_PROJECT_DIR`), when the first root is below
    /// it: the roots widen to it as the decision's did, within the same bounds (never the home directory, `/`, or
    /// past a directory every user may write to). Default: `CLAUDE_PROJECT_DIR` or `GEMINI_PROJECT_DIR`.
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Let the command use the network: through agent-guard's proxy, to the domains of `agentGuard.network` (the
    /// package registries by default) and of `--allow-domain`.
    #[arg(long)]
    allow_network: bool,
    /// The memory of the command's processes together (`512MiB`, `4GiB`), instead of the settings'
    /// `agentGuard.sandbox.memoryMax` (default 4 GiB).
    #[arg(long, value_name = "SIZE", value_parser = agent_decide::size_from_text)]
    memory_max: Option<u64>,
    /// A domain pattern the command may also reach (repeatable): `example.com`, `*.example.com`,
    /// `host:8080`. A deny pattern of the settings still wins. A loopback host with its port (`localhost:3000`,
    /// `127.0.0.1:8080`, `[::1]:9000`) is a service on this machine: the proxy forwards to it, that host and port
    /// alone.
    #[arg(long = "allow-domain", value_name = "PATTERN", value_parser = parse_domain, requires = "allow_network")]
    allow_domains: Vec<Reach>,
    /// A port of this machine's loopback (repeatable) the command may reach where a command of the same project
    /// run in the background listens on it inside its own sandbox: the proxy connects to that server in its
    /// sandbox's namespace, and to nothing else at that port.
    #[arg(long = "service", value_name = "PORT", requires = "allow_network")]
    services: Vec<u16>,
    /// The proxy reaches nothing but the servers of `--service`: a redirect one answers, or a URL from a file,
    /// must not take what the line sends it elsewhere.
    #[arg(long, requires = "services")]
    services_only: bool,
    /// Let git write the repositories in the roots under `workspace-write`: the inside of each `.git` (objects,
    /// index, refs, logs, `HEAD`) becomes writable, its configuration and hooks stay read-only. Without it `.git`
    /// is read-only whole, so that the code a command runs cannot delete or rewrite the history.
    #[arg(long)]
    git_writes: bool,
    /// The command was allowed because `agent-guard undo` takes back what it removes or overwrites: it is not run
    /// when the snapshot before it could not keep the content of a file it had not met before (one past the bound
    /// of what a snapshot hashes), which the decision could not know of.
    #[arg(long)]
    counts_on_undo: bool,
    /// The command runs beside the agent's other tool calls (a Bash call run in the background): in the roots it
    /// may neither make nor move a symbolic link, move anything to another directory, nor rename or remove a
    /// directory, but beneath a build output (`node_modules`, `target`, `dist`, …), so that a path a file tool's
    /// decision checked still leads where it did when the tool acts.
    #[arg(long)]
    background: bool,
    /// A port of the command's own loopback, or a range (`5173`, `8000-8099`; repeatable), published on this
    /// machine's `127.0.0.1` while a command run with `--background` listens on it, besides
    /// `agentGuard.sandbox.publish`.
    #[arg(long = "publish", value_name = "PORTS", value_parser = parse_ports, requires = "background")]
    publish: Vec<PortRange>,
    /// A place whose removal or overwrite the decision took as taken back because the snapshots hold the data the
    /// project ignores there (repeatable, with `--counts-on-undo`): the command is not run when the snapshot before
    /// it left that data out (it grew past the bounds on ignored data, or was marked as a cache, since the
    /// decision).
    #[arg(long = "undo-held", value_name = "PATH", requires = "counts_on_undo")]
    undo_held: Vec<PathBuf>,
    /// Limit the proxy to the domains of `--session-domain` (of those it would let through): the session the
    /// command belongs to has read untrusted content, so a domain it had not reached before is refused.
    #[arg(long, requires = "allow_network")]
    session_domains_only: bool,
    /// A domain the session reached before, or one the line names that its decision let through (repeatable;
    /// a port is ignored).
    #[arg(
        long = "session-domain",
        value_name = "HOST",
        requires = "session_domains_only"
    )]
    session_domains: Vec<String>,
    /// The session, named in each refusal with the commands that show and clear its taint.
    #[arg(long = "session", value_name = "ID", requires = "session_domains_only")]
    session: Option<String>,
    /// What tainted the session (the call and why it counts), named in each refusal.
    #[arg(
        long = "session-taint",
        value_name = "TEXT",
        requires = "session_domains_only"
    )]
    session_taint: Option<String>,
    /// The ask of `agent-guard serve` a person answered to let this command run: the runs `agent-guard undo`
    /// records for it name the ask, and the server's page shows their ids beside it.
    #[arg(long = "approval", value_name = "ASK")]
    approval: Option<String>,
    /// The key of the tool call this command runs for (the hook's answer names it): the runs `agent-guard undo`
    /// records carry it, and `agent-guard audit` shows them beside the call's row.
    #[arg(long = "call", value_name = "KEY")]
    call: Option<String>,
    /// Print what the kernel supports and what that means for enforcement, then exit.
    #[arg(long)]
    probe: bool,
    /// Print the plan (grants, hidden secrets, read-only paths) on stderr before running.
    #[arg(long)]
    verbose: bool,
    /// Pass the command's output through unredacted (for measuring what redaction costs).
    #[arg(long, hide = true)]
    no_redact: bool,
    #[command(flatten)]
    decide: DecideArgs,
    /// The command and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD")]
    command: Vec<OsString>,
}

fn parse_profile(text: &str) -> Result<SandboxProfile, String> {
    text.parse()
}

/// What one `--allow-domain` grants: a service on this machine, or a domain pattern.
#[derive(Debug, Clone)]
enum Reach {
    Loopback(LoopbackGrant),
    Domain(DomainPattern),
}

fn parse_ports(text: &str) -> Result<PortRange, String> {
    text.parse()
}

fn parse_domain(text: &str) -> Result<Reach, String> {
    if let Ok(grant) = text.parse::<LoopbackGrant>() {
        return Ok(Reach::Loopback(grant));
    }
    text.parse()
        .map(Reach::Domain)
        .map_err(|e: agent_os_sandbox::DomainPatternError| e.to_string())
}

pub(crate) fn run(args: &SandboxArgs) -> Result<ExitCode> {
    let support = KernelSupport::probe();
    if args.probe {
        for line in support.report() {
            crate::emit(&line)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.git_writes && args.profile != SandboxProfile::WorkspaceWrite {
        bail!(crate::UsageError(
            "`--git-writes` needs `--profile workspace-write`: a `read-only` command writes nothing"
                .to_owned()
        ));
    }
    if args.command.is_empty() {
        bail!(crate::UsageError(
            "no command to run: give it after `--` (`agent-guard sandbox -- ls -la`)".to_owned()
        ));
    }
    let mut roots = Vec::with_capacity(args.roots.len().max(1));
    for root in &args.roots {
        let canonical = std::fs::canonicalize(root)
            .ok()
            .filter(|path| path.is_dir())
            .ok_or_else(|| crate::UsageError(format!("root `{}` is not a directory", root.display())))?;
        roots.push(canonical);
    }
    if roots.is_empty() {
        roots.push(std::env::current_dir().context("cannot read the current directory")?);
    }
    if let Some(why) = support.missing() {
        eprintln!("agent-guard sandbox: {why}: the command is not run unconfined");
        return Ok(ExitCode::from(SETUP_FAILED));
    }
    let (cwd, extra) = roots.split_first().context("no root")?;
    let mut guards = Guards::new(&args.decide)?
        .with_extra_roots(extra.to_vec())
        .with_declared_project(declared_project(&args.roots, args.project.as_deref()));
    let guard = match guards.get(&cwd.to_string_lossy(), None) {
        Ok(guard) => std::sync::Arc::clone(guard),
        Err(why) => {
            eprintln!("agent-guard sandbox: cannot load the settings, so nothing is run: {why}");
            return Ok(ExitCode::from(SETUP_FAILED));
        }
    };
    let confinement = Confinement {
        profile: args.profile,
        network: args.allow_network,
        git_writes: args.git_writes,
        undo: args.counts_on_undo,
        background: args.background,
    };
    // The stores are opened first: opening may make one in the project's `.agent-guard/`, which the plan must
    // then find and keep out of the command's reach. The snapshot before the command is taken while the command's
    // namespaces and mounts are made, and the command waits at a gate until it is complete.
    let recording = crate::undo_cmd::open(
        &guard,
        confinement,
        &args.command,
        args.approval.as_deref(),
        args.call.as_deref(),
    );
    let mut plan = match guard.sandbox_plan(confinement, &support) {
        Ok(plan) => plan,
        Err(error) => {
            eprintln!("agent-guard sandbox: {error}");
            return Ok(ExitCode::from(SETUP_FAILED));
        }
    };
    if args.memory_max.is_some() {
        plan.memory_max = args.memory_max;
    }
    plan.publish.extend(args.publish.iter().copied());
    plan.domains.allow_services(args.services.iter().copied(), &roots);
    // A command granted more than the settings' network serves nothing to the project's other calls: its servers
    // would hand out its grants.
    plan.serves_others = args.allow_domains.is_empty() && args.services.is_empty();
    if args.services_only {
        plan.domains.only_services();
    }
    plan.domains
        .allow(args.allow_domains.iter().filter_map(|reach| match reach {
            Reach::Domain(pattern) => Some(pattern.clone()),
            Reach::Loopback(_) => None,
        }));
    plan.domains
        .allow_loopback(args.allow_domains.iter().filter_map(|reach| match reach {
            Reach::Loopback(grant) => Some(grant.clone()),
            Reach::Domain(_) => None,
        }));
    if args.session_domains_only {
        let taint = args
            .session_taint
            .as_deref()
            .unwrap_or("a call the refusal cannot name");
        plan.limit = Some(agent_os_sandbox::DomainLimit::new(
            &args.session_domains,
            agent_decide::session_limit_why(taint, args.session.as_deref()),
        ));
    }
    if args.verbose {
        eprintln!("agent-guard sandbox: {confinement}, {:?}", plan.isolation);
        if confinement.network {
            let list = |patterns: &[DomainPattern]| {
                patterns
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            eprintln!("  network through the proxy to {}", list(plan.domains.allowed()));
            for grant in plan.domains.loopback() {
                eprintln!("  network through the proxy to this machine's {grant}");
            }
            if !plan.domains.denied().is_empty() {
                eprintln!("  network refused to {}", list(plan.domains.denied()));
            }
            if let Some(limit) = &plan.limit {
                eprintln!(
                    "  network limited by the session's taint to {}",
                    if limit.names().is_empty() {
                        "no domain".to_owned()
                    } else {
                        limit.names().join(" ")
                    }
                );
            }
        }
        for grant in &plan.grants {
            eprintln!("  grant {:?} {}", grant.rights, grant.path.display());
        }
        for mask in &plan.masks {
            eprintln!("  hide  {}", mask.path.display());
        }
        for bind in &plan.read_only_binds {
            eprintln!(
                "  read-only{} {}",
                if bind.no_exec { ", no exec" } else { "" },
                bind.path.display()
            );
        }
        for overlay in &plan.cache_overlays {
            eprintln!(
                "  overlay {} (this project's layer: {})",
                overlay.cache.display(),
                overlay.upper.display()
            );
        }
        for note in &plan.notes {
            eprintln!("  note  {note}");
        }
    }
    // What the command prints passes the credential scanner, so that a secret read under a name nobody listed
    // still does not reach the model.
    let output: Option<&'static dyn agent_os_sandbox::OutputFilter> =
        (!args.no_redact).then_some(&crate::sandbox_output::Redaction);
    let mut refused = None;
    let recording = std::cell::RefCell::new(recording);
    let ran = agent_os_sandbox::run_filtered_gated(
        &plan,
        &support,
        guard.env_policy(),
        &guard.protection(),
        &args.command,
        output,
        agent_os_sandbox::Around {
            before: &mut || {
                let mut recording = recording.borrow_mut();
                let Some(recording) = recording.as_mut() else {
                    return true;
                };
                crate::undo_cmd::snapshot(recording);
                // What the decision counted on the snapshot to hold, looked at again once it is taken.
                refused = confinement
                    .undo
                    .then(|| recording.refusal())
                    .flatten()
                    .or_else(|| guard.undo_held_since(&args.undo_held));
                refused.is_none()
            },
            // The question of the snapshot after the command goes to the watcher while the sandbox is cleaned up.
            ended: &mut || {
                if let Some(recording) = recording.borrow_mut().as_mut() {
                    recording.ask_after();
                }
            },
        },
    );
    if let Some(why) = refused {
        eprintln!("agent-guard sandbox: {why}");
        return Ok(ExitCode::from(SETUP_FAILED));
    }
    let recording = recording.into_inner();
    crate::undo_cmd::finish(recording);
    match ran {
        Ok((status, removed)) => {
            for path in removed {
                eprintln!(
                    "agent-guard sandbox: removed `{}`: the command created it at a protected path",
                    path.display()
                );
            }
            Ok(ExitCode::from(u8::try_from(status).unwrap_or(SETUP_FAILED)))
        }
        Err(error) => {
            eprintln!("agent-guard sandbox: {error}");
            Ok(ExitCode::from(SETUP_FAILED))
        }
    }
}

/// The declared project (`--project`) as the decision took it: only when the first root, as given, lies below it
/// as written (the decision compares the call's working directory and the declaration so), then resolved as the
/// roots are, so that the sandbox's roots are never wider than the decision's.
fn declared_project(roots: &[PathBuf], project: Option<&Path>) -> Option<PathBuf> {
    let project = project?;
    let first = roots.first()?;
    let here = std::env::current_dir().ok()?;
    let written = |path: &Path| agent_rules::absolute_lexical(path, &here);
    let below = written(first).starts_with(written(project));
    below.then(|| std::fs::canonicalize(project).ok()).flatten()
}
