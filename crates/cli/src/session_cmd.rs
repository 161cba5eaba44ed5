//! `agent-guard session`: show a coding agent's session's taint, or clear it once a person has looked.

use std::path::PathBuf;
use std::process::ExitCode;

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
            let store = store(session)?;
            let cleared = store.clear(&session.id).map_err(anyhow::Error::msg)?;
            let what = if cleared {
                "cleared: its ways out no longer ask because of what it read before"
            } else {
                "has no taint recorded"
            };
            crate::emit(&format!(
                "session `{}` {what} ({})",
                session.id,
                store.dir().display()
            ))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn store(session: &SessionId) -> Result<TaintStore> {
    let cwd = crate::install::project_dir(session.cwd.as_deref())?;
    TaintStore::for_cwd(&cwd).ok_or_else(|| {
        anyhow::anyhow!(
            "`{}` is no project and there is no home directory: no session is kept there",
            cwd.display()
        )
    })
}
