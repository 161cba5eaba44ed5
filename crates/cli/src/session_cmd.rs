//! `agent-guard session`: show a coding agent's session's taint, or clear it once a person has looked.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agent_rules::SessionTaint;
use anyhow::Result;

use crate::taint_store::TaintStore;

// The arguments of `agent-guard session`.
#[derive(Debug, clap::Args)]
pub(crate) struct SessionArgs {
    #[command(subcommand)]
    action: SessionAction,
}

#[derive(Debug, clap::Subcommand)]
enum SessionAction {
    /// Print what the session has been exposed to: untrusted content, private data, the domains it reached.
    Show(SessionId),
    /// Forget the session's taint: its ways out no longer ask because of what it read before.
    Clear(SessionId),
}

#[derive(Debug, clap::Args)]
struct SessionId {
    /// The coding agent's session id (`session_id` of its hook input; the audit log lists them).
    id: String,
    /// The directory the session works in (default: the current one; its project's sessions).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
}

pub(crate) fn run(args: &SessionArgs) -> Result<ExitCode> {
    match &args.action {
        SessionAction::Show(session) => {
            let store = store(session)?;
            let taint = store.load(&session.id);
            let text = crate::explain::session_text(&session.id, &taint);
            crate::emit(
                text.trim_start_matches('\n')
                    .replace(" before this call", "")
                    .as_str(),
            )?;
        }
        SessionAction::Clear(session) => {
            let cwd = crate::install::project_dir(session.cwd.as_deref())?;
            let store = store_of(&cwd)?;
            let cleared = store.clear(&session.id).map_err(anyhow::Error::msg)?;
            if cleared == SessionTaint::default() {
                crate::emit(&format!(
                    "session `{}` has no taint recorded ({})",
                    session.id,
                    store.dir().display()
                ))?;
            } else {
                crate::emit(&format!(
                    "session `{}` cleared: its ways out no longer ask because of what it read before ({})\n\
                     cleared: {}",
                    session.id,
                    store.dir().display(),
                    cleared.summary()
                ))?;
                record_clear(&cwd, &session.id, &cleared);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn store(session: &SessionId) -> Result<TaintStore> {
    store_of(&crate::install::project_dir(session.cwd.as_deref())?)
}

fn store_of(cwd: &Path) -> Result<TaintStore> {
    TaintStore::for_cwd(cwd).ok_or_else(|| {
        anyhow::anyhow!(
            "`{}` is no project and there is no home directory: no session is kept there",
            cwd.display()
        )
    })
}

/// The audit row of a taint cleared from the command line, in the audit log of the session's project (where its
/// hook's rows are): who cleared it (`cli:<user>`), which session, and the taint that was cleared. A row that
/// cannot be written is one line on stderr; the taint stays cleared.
fn record_clear(cwd: &Path, session_id: &str, cleared: &SessionTaint) {
    let user = ["USER", "LOGNAME"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|user| !user.is_empty()))
        .unwrap_or_else(|| "unknown".to_owned());
    let cwd = cwd.display().to_string();
    let taint = serde_json::to_value(cleared).unwrap_or_default();
    let row = agent_hooks::AuditRow::taint_cleared(
        session_id,
        "session-clear",
        &cleared.summary(),
        &taint,
        &format!("cli:{user}"),
        Some(&cwd),
    );
    let call = crate::hook_audit::Call {
        session_id,
        cwd: &cwd,
        tool_name: &row.tool_name,
        tool_input: &taint,
        tool_use_id: None,
    };
    crate::hook_audit::record_one(call, &row, &mut crate::hook_timer::HookTimer::unarmed());
}
