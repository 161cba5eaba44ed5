//! What the server asks of its host: decide one hook input through the one bounded decision entry.

use std::path::Path;
use std::sync::Arc;

use agent_decide::{Decided, HookInput, HookOutput};
use agent_rules::TaintKeeper;

/// The decision of one hook input, as the hook prints it and with what the approval queue shows.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The hook output, exactly what `agent-guard check` prints for the same input.
    pub output: HookOutput,
    /// The decision with its layers, when the settings could be loaded (the rules an answer would save come
    /// from it).
    pub decided: Option<Decided>,
    /// The layer-by-layer explanation, as `agent-guard explain` writes it (empty unless asked for).
    pub explanation: String,
}

/// A run recorded for `agent-guard undo` that an answer on the server let happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoRun {
    /// The root whose files the run changed (`agent-guard undo --root`).
    pub root: std::path::PathBuf,
    /// The run's id in that root's store (`agent-guard undo --id`).
    pub id: u64,
    /// Whether the run was taken back already.
    pub undone: bool,
}

/// Decides hook inputs for the server. The `agent-guard` command implements it with the decision `check` makes
/// (settings discovered for the input's `cwd`, agent-decide's `DecisionBound`), so a decision over HTTP is the
/// hook's decision. Deciding is synchronous: the server calls it on a decision thread of its own and waits at most
/// the decision's bound (agent-decide's `DecisionBound::from_env`) for it, answering the bound's deny past it, so
/// an implementation decides on the calling thread (`DecisionBound::decide_timed` with a timer that does nothing)
/// rather than handing the decision to another thread.
pub trait Decide: Send + Sync + 'static {
    /// The decision of one input, alone, in a fresh session; with `explain`, the explanation too (an ask shows it,
    /// a plain decision does not need it).
    fn decide_hook_input(&self, input: &HookInput, explain: bool) -> Outcome;

    /// The settings of the project in `cwd` changed (an answer saved a rule): later decisions must see them.
    fn settings_changed(&self, cwd: &Path);

    /// The runs `agent-guard undo` recorded for the ask `ask` (of a call in `cwd`): a person allowed the call, and
    /// its command changed files of a root the sandbox snapshots. Empty where this host keeps no snapshots, and
    /// until the command has run.
    fn undo_runs(&self, _cwd: &Path, _ask: &str) -> Vec<UndoRun> {
        Vec::new()
    }

    /// Where the taint of the coding agent's sessions working in `cwd` lives, as their decisions read it: the page
    /// shows it beside a session's asks and clears it there. The sessions this server runs keep theirs in its
    /// memory, whatever the host answers; an error says why the host keeps none.
    fn taint_keeper(&self, _cwd: &Path) -> Result<Arc<dyn TaintKeeper>, String> {
        Err("this server keeps no session taint".to_owned())
    }
}
