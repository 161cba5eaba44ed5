//! The built-in hook that blocks every call of a cancelled run.

use agent_tool_traits::CancelRegistry;

use crate::{AgentHook, HookError, HookFuture, PreToolUseAction, PreToolUseContext, SessionStopContext};

/// The reason a call of a cancelled run is blocked with.
pub(crate) const CANCELLED_REASON: &str = "cancelled by the user";

/// Blocks every call of a session the user has cancelled, and forgets the cancellation when the session stops
/// (so that the identifier can be reused).
#[derive(Debug, Clone)]
pub struct CancellationHook {
    cancelled: CancelRegistry,
}

impl CancellationHook {
    /// A hook over the shared registry of cancelled runs.
    pub fn new(cancelled: CancelRegistry) -> Self {
        Self { cancelled }
    }
}

impl AgentHook for CancellationHook {
    fn name(&self) -> &str {
        "cancellation"
    }

    fn pre_tool_use<'a>(&'a self, ctx: &'a PreToolUseContext) -> HookFuture<'a, PreToolUseAction> {
        let action = if self.cancelled.is_cancelled(&ctx.session_id) {
            PreToolUseAction::Block {
                reason: CANCELLED_REASON.to_owned(),
            }
        } else {
            PreToolUseAction::Continue
        };
        Box::pin(std::future::ready(action))
    }

    fn on_session_stop<'a>(&'a self, ctx: &'a SessionStopContext) -> HookFuture<'a, Result<(), HookError>> {
        self.cancelled.clear(&ctx.session_id);
        Box::pin(std::future::ready(Ok(())))
    }
}
