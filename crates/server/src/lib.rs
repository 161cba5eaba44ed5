//! agent-guard's server: decisions over HTTP, the approval queue answered from a browser or a script, live
//! events, and one policy and one audit trail for many agents.
//!
//! It stands above the runtime (agent-core) and beside the `agent-guard` command, which starts it with
//! `agent-guard serve`: the command decides through the same bounded entry as `check` (a [`Decide`]), and the
//! server adds only transport, the queue and its state. It never decides on its own: every answer it gives for
//! a call is the decision's, or a person's answer to an ask, or a deny (an ask that expired, a database
//! failure). It never lets an ask through without an answer.
//!
//! ```no_run
//! use std::sync::Arc;
//! use agent_server::{Decide, Outcome, ServeConfig, Server};
//!
//! struct Deny;
//! impl Decide for Deny {
//!     fn decide_hook_input(&self, _input: &agent_decide::HookInput, _explain: bool) -> Outcome {
//!         let verdict = agent_tool_traits::Verdict::new(
//!             agent_tool_traits::Decision::Deny,
//!             "nothing is allowed here",
//!             agent_tool_traits::Provenance::layer(agent_tool_traits::Layer::Rules),
//!         );
//!         Outcome { output: agent_decide::HookOutput::from_verdict(&verdict), decided: None, explanation: String::new() }
//!     }
//!     fn settings_changed(&self, _cwd: &std::path::Path) {}
//! }
//!
//! # async fn start() -> Result<(), agent_server::ServeError> {
//! let config = ServeConfig {
//!     listen: "127.0.0.1:0".parse().unwrap(),
//!     db: "/tmp/agent-guard-server.db".parse()?,
//!     token: "3f9c0a7e5b21d8446c0e9f1a2b7d5c83".to_owned(),
//!     approval_timeout: agent_core::DEFAULT_APPROVAL_TIMEOUT,
//!     header_timeout: agent_server::DEFAULT_HEADER_TIMEOUT,
//! };
//! let server = Server::bind(config, Arc::new(Deny)).await?;
//! server.run(async { let _ = tokio::signal::ctrl_c().await; }).await
//! # }
//! ```

mod app;
mod decider;
mod error;
mod events;
mod http;
mod metrics;
mod page;
mod server;
mod sessions;
mod shown;
mod store;
mod threads;
mod token;

pub use decider::Decide;
pub use decider::Outcome;
pub use decider::UndoRun;
pub use error::Result;
pub use error::ServeError;
pub use server::DEFAULT_HEADER_TIMEOUT;
pub use server::DEFAULT_LISTEN;
pub use server::ServeConfig;
pub use server::Server;
pub use sessions::SessionFuture;
pub use sessions::SessionHandle;
pub use sessions::SessionRunner;
pub use token::TOKEN_FILE;
pub use token::TokenSource;
pub use token::resolve_token;
