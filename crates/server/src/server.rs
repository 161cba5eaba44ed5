//! Starting a server: the database, the audit log, the listener, the expiry task and the PostgreSQL listener.

use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_hooks::{AuditConfig, AuditDatabase, AuditLogHook};
use axum::Router;
use axum::body::Body;
use futures_util::future::Either;
use hyper::body::Incoming;
use hyper::service::Service as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

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

/// How long a connection may take to send the headers of a request, from its opening or from the end of its
/// previous answer, unless the configuration says otherwise: a client that sends nothing, or sends its headers
/// slowly, is disconnected then, and so is a keep-alive connection left idle.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The most connections that may be open at once without having sent the headers of their first request; one
/// more is closed as soon as it is accepted. With the header timeout this bounds what clients that never finish a
/// request can hold.
pub(crate) const MAX_HALF_OPEN: usize = 256;

/// How long the audit writer gathers rows for one commit after the first ([`AuditConfig::linger`]): a busy server
/// commits the rows of a few milliseconds together instead of one or two each, and a row is on disk this much
/// later at most (`GET /v1/audit` commits what is queued before it reads).
const AUDIT_LINGER: Duration = Duration::from_millis(5);

/// How long a stopping server waits for the requests in progress before it drops their connections.
const DRAIN: Duration = Duration::from_secs(3);

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
    /// How long a connection may take to send a request's headers, and a request its body
    /// ([`DEFAULT_HEADER_TIMEOUT`] unless told otherwise); an idle keep-alive connection is closed after it too.
    pub header_timeout: Duration,
}

/// A server bound to its address, not yet serving.
pub struct Server {
    listener: TcpListener,
    app: Arc<App>,
    header_timeout: Duration,
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
        let audit_config = AuditConfig {
            linger: AUDIT_LINGER,
            ..AuditConfig::default()
        };
        let audit = AuditLogHook::open_database(&config.db, audit_config).await?;
        // Every audit row (decisions, answers, the sessions' calls) is counted for `/metrics`, and exported once
        // `export_to` turns export on.
        let telemetry = agent_telemetry::Telemetry::local();
        let _first = audit.observe_with(Arc::new(telemetry.clone()));
        let bind_error = |source| ServeError::Bind {
            listen: config.listen.to_string(),
            source,
        };
        let listener = TcpListener::bind(config.listen).await.map_err(bind_error)?;
        let bound = listener.local_addr().map_err(bind_error)?;
        let instance = random_hex(8)?;
        let app = Arc::new(App {
            decider,
            store,
            audit,
            events: EventLog::new(&instance),
            token: config.token,
            approval_timeout: config.approval_timeout,
            resolved: tokio::sync::Notify::new(),
            instance,
            runner: std::sync::OnceLock::new(),
            cancel: agent_tool_traits::CancelRegistry::new(),
            running: std::sync::Mutex::new(std::collections::HashMap::new()),
            taint: Arc::new(agent_rules::TaintInMemory::new(
                "the memory of the server that runs the session",
            )),
            telemetry,
            hosts: loopback_hosts(bound),
            header_timeout: config.header_timeout,
            stopping: watch::channel(false).0,
            bound: agent_decide::DecisionBound::from_env(),
            threads: crate::threads::DecisionThreads::default(),
        });
        Ok(Self {
            listener,
            app,
            header_timeout: config.header_timeout,
        })
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
        let served = serve_connections(
            &self.app,
            self.listener,
            router,
            self.header_timeout,
            shutdown,
            &self.app.stopping,
        )
        .await;
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

/// The `Host` names a server bound to the loopback address `bound` answers to (`localhost`, `127.0.0.1`, `[::1]`
/// and the bound address, each with the port, and alone on port 80), so that a page of another site whose name
/// was made to resolve to this machine (DNS rebinding) cannot talk to it; `None` for any other address, where the
/// names it is reached by are not known.
fn loopback_hosts(bound: SocketAddr) -> Option<Vec<String>> {
    if !bound.ip().is_loopback() {
        return None;
    }
    let address = match bound.ip() {
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    };
    let port = bound.port();
    let mut hosts = Vec::new();
    for name in ["localhost", "127.0.0.1", "[::1]", address.as_str()] {
        hosts.push(format!("{name}:{port}"));
        if port == 80 {
            hosts.push(name.to_owned());
        }
    }
    hosts.sort();
    hosts.dedup();
    Some(hosts)
}

/// Accepts connections until `shutdown` completes, each served on a task of its own, then lets the requests in
/// progress finish for at most [`DRAIN`].
async fn serve_connections(
    app: &Arc<App>,
    listener: TcpListener,
    router: Router,
    header_timeout: Duration,
    shutdown: impl Future<Output = ()> + Send + 'static,
    stopping: &watch::Sender<bool>,
) -> Result<()> {
    let half_open = Arc::new(Semaphore::new(MAX_HALF_OPEN));
    let mut connections = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    // Out of file descriptors, or a connection reset before it was accepted: try again shortly.
                    tracing::warn!(%error, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = Arc::clone(&half_open).try_acquire_owned() else {
            // Too many connections have not sent a request yet: this one is closed at once.
            drop(stream);
            continue;
        };
        connections.spawn(serve_connection(
            Arc::clone(app),
            stream,
            router.clone(),
            header_timeout,
            permit,
            stopping.subscribe(),
        ));
    }
    stopping.send_replace(true);
    let drained =
        tokio::time::timeout(DRAIN, async { while connections.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        connections.abort_all();
    }
    Ok(())
}

/// Serves one connection over HTTP/1.1: its first request's headers must arrive within `header_timeout` (the
/// connection holds its half-open `permit` until then), and so must every later request's, counted from the end
/// of the answer before it. When the server stops, the request in progress is answered and the connection closed.
/// `POST /v1/decide` is answered directly when it passes the router's checks (`http::takes_directly`), every other
/// request by the router.
async fn serve_connection(
    app: Arc<App>,
    stream: TcpStream,
    router: Router,
    header_timeout: Duration,
    permit: OwnedSemaphorePermit,
    mut stopping: watch::Receiver<bool>,
) {
    // Answers are written whole; waiting to fill a packet only delays them.
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!(%error, "cannot set TCP_NODELAY");
    }
    let permit = Mutex::new(Some(permit));
    let service = TowerToHyperService::new(router);
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        // The headers of a request are in: the connection is no longer half-open.
        permit.lock().unwrap_or_else(PoisonError::into_inner).take();
        // `POST /v1/decide`, nearly every request of a busy server, is answered without the router's layers when
        // it passes their checks; everything else goes through the router.
        if crate::http::takes_directly(&app, request.method(), request.uri().path(), request.headers()) {
            let (parts, body) = request.into_parts();
            let app = Arc::clone(&app);
            Either::Left(async move {
                Ok::<_, Infallible>(crate::http::decide_directly(app, parts.headers, Body::new(body)).await)
            })
        } else {
            Either::Right(service.call(request))
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .keep_alive(true);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    tokio::select! {
        served = connection.as_mut() => {
            if let Err(error) = served {
                tracing::debug!(%error, "connection ended");
            }
        }
        () = stopped(&mut stopping) => {
            connection.as_mut().graceful_shutdown();
            if let Err(error) = connection.await {
                tracing::debug!(%error, "connection ended while stopping");
            }
        }
    }
}

/// Completes when the server stops (or can no longer say it will).
pub(crate) async fn stopped(stopping: &mut watch::Receiver<bool>) {
    // The guard the wait returns is dropped here, so the future holding this one can move between threads.
    let _stopped = stopping.wait_for(|stop| *stop).await.is_ok();
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
