//! Starting a server: the database, the audit log, the listener, the expiry task and the PostgreSQL listener.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use agent_hooks::{AuditConfig, AuditDatabase, AuditLogHook};
use serde_json::Value;
use tokio::net::TcpListener;

use crate::app::{App, CHANNEL};
use crate::decider::Decide;
use crate::error::{Result, ServeError};
use crate::events::{EventKind, EventLog};
use crate::store::Store;
use crate::token::random_hex;

/// The address a server listens on unless told otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8787";

/// How long a stopping server spends sending the telemetry still queued.
const TELEMETRY_DEADLINE: Duration = Duration::from_secs(3);

/// How often expired asks are looked for.
const EXPIRY_TICK: Duration = Duration::from_millis(200);

/// What a server needs: where to listen, its database, its token and how long an ask waits.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The address to listen on.
    pub listen: SocketAddr,
    /// The database of the approval queue and the audit log: a SQLite file or URL, or a PostgreSQL URL shared by
    /// several servers.
    pub db: AuditDatabase,
    /// The bearer token every `/v1/` request must carry.
    pub token: String,
    /// How long an ask waits before it is denied ([`agent_core::DEFAULT_APPROVAL_TIMEOUT`] unless told
    /// otherwise).
    pub approval_timeout: Duration,
}

/// A server bound to its address, not yet serving.
pub struct Server {
    listener: TcpListener,
    app: Arc<App>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("listen", &self.listener.local_addr().ok())
            .field("db", &self.app.store.target())
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Opens the database (creating the tables), the audit log and the listener.
    pub async fn bind(config: ServeConfig, decider: Arc<dyn Decide>) -> Result<Self> {
        let store = Store::open(&config.db).await?;
        let audit = AuditLogHook::open_database(&config.db, AuditConfig::default()).await?;
        // Every audit row (decisions, answers, the sessions' calls) is counted for `/metrics`, and exported once
        // `export_to` turns export on.
        let telemetry = agent_telemetry::Telemetry::local();
        let _first = audit.observe_with(Arc::new(telemetry.clone()));
        let listener = TcpListener::bind(config.listen)
            .await
            .map_err(|source| ServeError::Bind {
                listen: config.listen.to_string(),
                source,
            })?;
        let app = Arc::new(App {
            decider,
            store,
            audit,
            events: EventLog::new(),
            token: config.token,
            approval_timeout: config.approval_timeout,
            resolved: tokio::sync::Notify::new(),
            instance: random_hex(8)?,
            runner: std::sync::OnceLock::new(),
            cancel: agent_tool_traits::CancelRegistry::new(),
            running: std::sync::Mutex::new(std::collections::HashSet::new()),
            telemetry,
        });
        Ok(Self { listener, app })
    }

    /// Lets `POST /v1/sessions` start sessions with `runner`; without one it answers `501`.
    #[must_use]
    pub fn with_sessions(self, runner: Arc<dyn crate::sessions::SessionRunner>) -> Self {
        // Set once, here, before serving: a second runner is ignored.
        let _first = self.app.runner.set(runner);
        self
    }

    /// Exports every decision and answer to the OTLP collector of `config` from now on (`agentGuard.telemetry`).
    pub fn export_to(
        &self,
        config: &agent_telemetry::ExportConfig,
    ) -> std::result::Result<(), agent_telemetry::TelemetryError> {
        self.app.telemetry.export_to(config)
    }

    /// The address bound (the port the system chose for `:0`).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.listener.local_addr().ok()
    }

    /// Serves until `shutdown` completes, then writes the audit rows still queued.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> Result<()> {
        let expiry = tokio::spawn(expire(Arc::clone(&self.app)));
        let listener = match self.app.store.postgres() {
            Some(pool) => Some(tokio::spawn(listen(Arc::clone(&self.app), pool.clone()))),
            None => None,
        };
        let router = crate::http::router(Arc::clone(&self.app));
        let served = axum::serve(self.listener, router)
            .with_graceful_shutdown(shutdown)
            .await
            .map_err(ServeError::Serve);
        expiry.abort();
        if let Some(listener) = listener {
            listener.abort();
        }
        if let Err(error) = self.app.audit.flush().await {
            tracing::error!(%error, "audit rows were lost");
        }
        let telemetry = self.app.telemetry.clone();
        let _ended = tokio::task::spawn_blocking(move || telemetry.shutdown(TELEMETRY_DEADLINE)).await;
        served
    }
}

/// Denies the asks that reach their expiry.
async fn expire(app: Arc<App>) {
    let mut tick = tokio::time::interval(EXPIRY_TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if let Err(error) = app.expire_due().await {
            tracing::warn!(%error, "cannot expire asks");
        }
    }
}

/// Follows the other servers of a PostgreSQL database: their events are published here, and their answers wake
/// the requests waiting here. A lost connection is made again after a second.
async fn listen(app: Arc<App>, pool: sqlx::PgPool) {
    loop {
        match sqlx::postgres::PgListener::connect_with(&pool).await {
            Ok(mut listener) => {
                if let Err(error) = listener.listen(CHANNEL).await {
                    tracing::warn!(%error, "cannot listen for the other servers' events");
                } else {
                    // Whatever was missed while not listening: waiters read the database again.
                    app.resolved.notify_waiters();
                    while let Ok(notification) = listener.recv().await {
                        relay(&app, notification.payload());
                    }
                }
            }
            Err(error) => tracing::warn!(%error, "cannot connect to listen for the other servers' events"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

fn relay(app: &App, payload: &str) {
    let Ok(message) = serde_json::from_str::<Value>(payload) else {
        return;
    };
    if message.get("from").and_then(Value::as_str) == Some(app.instance.as_str()) {
        return;
    }
    let Some(kind) = message
        .get("kind")
        .and_then(Value::as_str)
        .and_then(EventKind::parse)
    else {
        return;
    };
    let session = message.get("session").and_then(Value::as_str).unwrap_or_default();
    let data = message.get("data").cloned().unwrap_or(Value::Null);
    app.events.publish(kind, session, data);
    if kind == EventKind::PermissionResolved {
        app.resolved.notify_waiters();
    }
}
