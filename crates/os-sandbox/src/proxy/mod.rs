//! The network of a sandboxed command: an HTTP/HTTPS proxy, run by the process that starts the command (outside
//! the sandbox), that forwards only to the domains of a [`DomainPolicy`].
//!
//! How the command reaches it, and nothing else. With namespaces the command gets a network namespace of its own
//! whose only interface is a loopback: no route leads out, whatever the command does (a raw address, DNS over
//! UDP, a connection that ignores the proxy variables, a relay of its own). In that namespace a relay process of
//! agent-guard's (relay.rs), forked by the namespace's init before the command, listens on
//! `127.0.0.1:`[`RELAY_PORT`] and hands each connection it accepts to this proxy as a descriptor (`SCM_RIGHTS` over
//! a socket pair made before the fork). It keeps no byte of it: the proxy reads and writes the connection
//! itself, so nothing inside the sandbox copies data and the command meets nothing but the proxy's parser. The
//! relay runs outside the command's Landlock domain with capabilities the command lacks, so the command can
//! neither signal it (Landlock scopes signals), nor trace it, nor take its descriptors.
//!
//! Without namespaces (a container that forbids them) the proxy listens on the host's loopback instead; Landlock
//! lets the command connect by TCP to that one port and bind none, and seccomp refuses every socket but TCP ones
//! (no Unix sockets, no UDP, so no DNS; no raw sockets). Landlock's rules name ports, not addresses, so the same port
//! on another host is reachable too: [`Prepared`](crate::Prepared) says so on start. A kernel without
//! Landlock's TCP rules gives such a command no network at all.
//!
//! What the proxy forwards: `CONNECT host:port` when the policy allows the host and port, the host's addresses
//! are on the internet, and the tunnel starts with a TLS ClientHello whose server name is that host; a plain
//! `http://` request, rebuilt (one request per connection), when the policy allows its host. A service on this
//! machine that the policy grants ([`LoopbackGrant`](crate::LoopbackGrant): one loopback host, as the command
//! spells it, and one port) is reached on the host's loopback, by a tunnel or a plain request; every other
//! loopback host and port is refused. It resolves names
//! itself and never connects to an address it was given. Each refusal answers `403` with a body that names the
//! domain and the setting to change, and is noted once per domain for the command's stderr.
//!
//! The other way in: what a command run in the background serves on its own loopback, at the ports the user's
//! settings publish, is reached on the host's `127.0.0.1` (publish.rs), through a door process in its namespace
//! that connects to that loopback alone (door.rs).

mod door;
mod listening;
mod publish;
mod relay;
mod request;
mod tls;
mod upstream;

use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_tool_traits::SandboxProfile;

use crate::domains::{DomainLimit, DomainPolicy, DomainVerdict, normalize_host};
use crate::plan::{Isolation, Plan};
use crate::probe::{ABI_NETWORK, KernelSupport};
use crate::ruleset::Tcp;
use crate::seccomp::Sockets;
use request::{RequestHead, RequestKind};
use tls::Hello;
use upstream::{Resolver, Unreachable};

pub(crate) use door::start as start_door;
pub(crate) use listening::host_listens;
pub(crate) use publish::{LISTENING, SERVICES, Services};
pub(crate) use relay::{Relay, start as start_relay};

/// The port the relay listens on inside the command's network namespace (the namespace is the command's own, so
/// any port is free; this is the customary one of HTTP proxies).
pub(crate) const RELAY_PORT: u16 = 3128;

/// How many connections the proxy serves at once; more are answered `503`.
const MAX_CONNECTIONS: usize = 128;
/// How long a client has to send its request head, and then its TLS ClientHello.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);

/// How a command's network is set up: what the kernel lets it open and reach, and the proxy it reaches.
#[derive(Debug)]
pub(crate) struct NetworkSetup {
    /// The sockets seccomp lets it open.
    pub(crate) sockets: Sockets,
    /// What Landlock lets it do with TCP.
    pub(crate) tcp: Tcp,
    /// Whether it gets a network namespace of its own, with a loopback interface.
    pub(crate) namespace: bool,
    /// The proxy, when it may use the network.
    pub(crate) proxy: Option<Proxy>,
    /// What the command is told when it starts: how its network falls short of what the plan asked.
    pub(crate) note: Option<String>,
}

impl NetworkSetup {
    /// The network of `plan` on a kernel with `support`: with namespaces, a namespace of its own (with the relay
    /// to the proxy when the network is allowed; a private loopback for `workspace-write` without it); without,
    /// the proxy on the host's loopback held to by Landlock and seccomp, or no network where Landlock has no TCP
    /// rules.
    ///
    /// # Errors
    /// When the proxy cannot be started.
    pub(crate) fn of(plan: &Plan, support: &KernelSupport) -> std::io::Result<Self> {
        let writes = plan.confinement.profile == SandboxProfile::WorkspaceWrite;
        let namespaces = matches!(plan.isolation, Isolation::Namespaces { .. });
        let landlock_tcp = support.landlock_abi >= ABI_NETWORK;
        // Without the network: a private loopback, on which a build's own tests may listen and connect, where
        // `workspace-write` has a namespace of its own; else no socket at all.
        let private_loopback = writes && namespaces;
        let none = |note: Option<String>| Self {
            sockets: if private_loopback {
                Sockets::PrivateLoopback
            } else {
                Sockets::None
            },
            tcp: if private_loopback {
                Tcp::Unrestricted
            } else {
                Tcp::Refused
            },
            namespace: private_loopback,
            proxy: None,
            note,
        };
        if !plan.confinement.network {
            return Ok(none(None));
        }
        if namespaces {
            return Ok(Self {
                sockets: Sockets::OwnNamespace,
                tcp: Tcp::Unrestricted,
                namespace: true,
                proxy: Some(Proxy::start(
                    plan.domains.clone(),
                    plan.limit.clone(),
                    Entry::Relay,
                )?),
                note: None,
            });
        }
        if !landlock_tcp {
            return Ok(none(Some(
                "no network: without namespaces only Landlock's TCP rules (Linux 6.7) could hold the command to the \
                 proxy, and this kernel has none"
                    .to_owned(),
            )));
        }
        let proxy = Proxy::start(plan.domains.clone(), plan.limit.clone(), Entry::HostLoopback)?;
        let port = proxy.port();
        Ok(Self {
            sockets: Sockets::StreamOnly,
            tcp: Tcp::ConnectOnly(port),
            namespace: false,
            proxy: Some(proxy),
            note: Some(format!(
                "without namespaces the network goes through the proxy on 127.0.0.1:{port}, held to by Landlock \
                 (TCP connections to port {port} only, on any host: Landlock rules name ports, not addresses) and \
                 seccomp (TCP sockets only: no Unix sockets, no UDP, no DNS)"
            )),
        })
    }
}

/// Where the command's connections come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry {
    /// From the relay in the command's network namespace, as descriptors.
    Relay,
    /// From a listening socket on the host's loopback (no namespaces).
    HostLoopback,
}

/// A running proxy. Dropping it stops taking connections; the ones being served end on their own bounds.
#[derive(Debug)]
pub(crate) struct Proxy {
    /// The port the command connects to on `127.0.0.1`.
    port: u16,
    /// The relay's end of the socket pair ([`Entry::Relay`]), for the child setup.
    relay_end: Option<OwnedFd>,
    /// What the acceptor blocks on, shut down to stop it.
    entry: OwnedFd,
    shared: Arc<Shared>,
}

/// What the acceptor and the connections share.
struct Shared {
    policy: DomainPolicy,
    /// The names the policy's hosts are further limited to, when there is a limit.
    limit: Option<DomainLimit>,
    resolver: Resolver,
    /// The domains refused so far, each once, in order.
    refused: Mutex<Vec<String>>,
    /// Where refusals are written as they happen (the command's stderr, for `agent-guard sandbox`).
    echo: Mutex<Option<Box<dyn Write + Send>>>,
    active: AtomicUsize,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl Proxy {
    /// Starts the proxy for `policy` (within `limit`, when there is one), taking connections from `entry`,
    /// resolving names as the system does (and as the test hook [`upstream::RESOLVE_HOOK`] maps them).
    pub(crate) fn start(
        policy: DomainPolicy,
        limit: Option<DomainLimit>,
        entry: Entry,
    ) -> std::io::Result<Self> {
        Self::start_with(policy, limit, entry, Resolver::from_env())
    }

    fn start_with(
        policy: DomainPolicy,
        limit: Option<DomainLimit>,
        entry: Entry,
        resolver: Resolver,
    ) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            policy,
            limit,
            resolver,
            refused: Mutex::new(Vec::new()),
            echo: Mutex::new(None),
            active: AtomicUsize::new(0),
        });
        let taking = Arc::clone(&shared);
        match entry {
            Entry::Relay => {
                let (ours, relay_end) = pair_with_child()?;
                let wake = ours.try_clone()?;
                std::thread::Builder::new()
                    .name("agent-guard-proxy".into())
                    .spawn(move || take_from_relay(&ours, &taking))?;
                Ok(Self {
                    port: RELAY_PORT,
                    relay_end: Some(relay_end),
                    entry: wake,
                    shared,
                })
            }
            Entry::HostLoopback => {
                let listener = TcpListener::bind(("127.0.0.1", 0))?;
                let port = listener.local_addr()?.port();
                let wake = OwnedFd::from(listener.try_clone()?);
                std::thread::Builder::new()
                    .name("agent-guard-proxy".into())
                    .spawn(move || {
                        for connection in listener.incoming() {
                            match connection {
                                Ok(connection) => serve_bounded(connection, &taking),
                                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                                Err(_) => break,
                            }
                        }
                    })?;
                Ok(Self {
                    port,
                    relay_end: None,
                    entry: wake,
                    shared,
                })
            }
        }
    }

    /// The port the command connects to on `127.0.0.1`.
    pub(crate) const fn port(&self) -> u16 {
        self.port
    }

    /// The relay's end of the socket pair, for the command's namespace setup.
    pub(crate) fn relay_fd(&self) -> Option<RawFd> {
        self.relay_end.as_ref().map(AsRawFd::as_raw_fd)
    }

    /// Writes each refusal to `to` as it happens, one line per domain.
    pub(crate) fn echo_to(&self, to: Box<dyn Write + Send>) {
        if let Ok(mut echo) = self.shared.echo.lock() {
            *echo = Some(to);
        }
    }

    /// The lines of the refusals so far, one per domain.
    pub(crate) fn refusals(&self) -> Vec<String> {
        self.shared.refused.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// The variables that send the command's programs through the proxy, set in `env` (replacing the caller's
    /// own proxy settings): the common `*_PROXY` variables in both cases, the ones git (`http.proxy` through
    /// `GIT_CONFIG_*`, after any entries already there), npm, yarn, pip and cargo read, and Node's switch to
    /// honour them. `NO_PROXY` names the loopback only, so that a build's own tests talk to themselves.
    pub(crate) fn set_env(&self, env: &mut Vec<(OsString, OsString)>) {
        let url = format!("http://127.0.0.1:{}", self.port);
        let mut set: Vec<(String, String)> = [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
            "npm_config_proxy",
            "npm_config_https_proxy",
            "YARN_HTTP_PROXY",
            "YARN_HTTPS_PROXY",
            "PIP_PROXY",
            "CARGO_HTTP_PROXY",
        ]
        .iter()
        .map(|name| ((*name).to_owned(), url.clone()))
        .collect();
        // With a service on this machine granted, the loopback is reached through the proxy too (curl and most
        // clients honour `NO_PROXY` alone for it): the command's own loopback is not the host's.
        let no_proxy = if self.shared.policy.loopback().is_empty() && self.shared.policy.services().is_empty()
        {
            "localhost,127.0.0.1,::1"
        } else {
            ""
        };
        for name in ["NO_PROXY", "no_proxy"] {
            set.push((name.to_owned(), no_proxy.to_owned()));
        }
        set.push(("NODE_USE_ENV_PROXY".to_owned(), "1".to_owned()));
        let git_entries = env
            .iter()
            .find(|(name, _)| name == "GIT_CONFIG_COUNT")
            .and_then(|(_, value)| value.to_str()?.parse::<usize>().ok())
            .unwrap_or(0);
        set.push((format!("GIT_CONFIG_KEY_{git_entries}"), "http.proxy".to_owned()));
        set.push((format!("GIT_CONFIG_VALUE_{git_entries}"), url));
        set.push(("GIT_CONFIG_COUNT".to_owned(), (git_entries + 1).to_string()));
        env.retain(|(name, _)| !set.iter().any(|(ours, _)| name == ours.as_str()));
        env.extend(set.into_iter().map(|(name, value)| (name.into(), value.into())));
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        // Wakes the acceptor: a shut-down socket pair reads its end, a shut-down listener fails its accept.
        let _ = nix::sys::socket::shutdown(self.entry.as_raw_fd(), nix::sys::socket::Shutdown::Both);
    }
}

/// A socket pair (sequenced packets, closed at exec) between this process and a helper the command's namespace
/// forks (the relay, the door): this process's end, then the child's, a duplicate numbered 3 or above: in a process
/// started with a standard stream closed, the pair may hold 0, 1 or 2, which the child's standard streams would
/// replace before the helper starts.
fn pair_with_child() -> std::io::Result<(OwnedFd, OwnedFd)> {
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, socketpair};
    let (ours, theirs) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(std::io::Error::from)?;
    Ok((ours, theirs.try_clone()?))
}

/// Takes the connections the relay passes until it ends (the command's namespace is gone) or the proxy stops.
fn take_from_relay(from: &OwnedFd, shared: &Arc<Shared>) {
    while let Some(received) = receive_descriptor(from.as_raw_fd()) {
        if let Some(connection) = received {
            serve_bounded(TcpStream::from(connection), shared);
        }
    }
}

/// Receives one message of the Unix socket `from` and the descriptor it carries (closed at exec): `None` at the
/// socket's end or on an error; an inner `None` for a message that carries no descriptor (a refusal).
pub(crate) fn receive_descriptor(from: RawFd) -> Option<Option<OwnedFd>> {
    use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
    let mut byte = [0u8; 1];
    let mut iov = [std::io::IoSliceMut::new(&mut byte)];
    let mut space = nix::cmsg_space!([RawFd; 1]);
    let message = loop {
        match recvmsg::<()>(from, &mut iov, Some(&mut space), MsgFlags::MSG_CMSG_CLOEXEC) {
            Err(nix::errno::Errno::EINTR) => {}
            Ok(message) if message.bytes == 0 => return None,
            other => break other.ok()?,
        }
    };
    let fd = message.cmsgs().ok()?.find_map(|c| match c {
        ControlMessageOwned::ScmRights(fds) => fds.first().copied(),
        _ => None,
    });
    #[expect(
        unsafe_code,
        reason = "taking ownership of a descriptor the kernel just passed to this process"
    )]
    // SAFETY: `fd` was installed in this process by the recvmsg above and is owned by nothing else.
    Some(fd.map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// Serves `connection` on a thread of its own, or answers `503` when [`MAX_CONNECTIONS`] are being served.
fn serve_bounded(mut connection: TcpStream, shared: &Arc<Shared>) {
    if shared.active.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
        shared.active.fetch_sub(1, Ordering::SeqCst);
        let _ = connection.write_all(&response(
            "503 Service Unavailable",
            "agent-guard: too many connections at once\n",
        ));
        return;
    }
    let serving = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name("agent-guard-proxy-connection".into())
        .spawn(move || {
            serve(connection, &serving);
            serving.active.fetch_sub(1, Ordering::SeqCst);
        });
    if spawned.is_err() {
        // The thread never ran: the connection was dropped with it.
        shared.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Why a request goes nowhere, as the command and the user are told.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Refusal {
    /// By the policy, or by where the name leads: `403`, and a line on the command's stderr.
    Policy { domain: String, why: String },
    /// A request the proxy does not understand or forward: `400` or `501`.
    Request { status: &'static str, why: &'static str },
    /// The host cannot be reached: `502`.
    Unreachable { domain: String, why: String },
}

/// One connection: its head, the verdict, then the tunnel or the request.
fn serve(mut client: TcpStream, shared: &Shared) {
    let _ = client.set_write_timeout(Some(HEAD_TIMEOUT));
    let deadline = Instant::now() + HEAD_TIMEOUT;
    let mut buffer = Vec::with_capacity(4096);
    let Some(end) = read_until(
        &mut client,
        &mut buffer,
        deadline,
        request::MAX_HEAD,
        request::head_end,
    ) else {
        return;
    };
    let (head, rest) = buffer.split_at(end.min(buffer.len()));
    let outcome = match request::parse(head) {
        Ok(request) => forward(&mut client, request, rest.to_vec(), shared, deadline),
        Err(error) => Err(Refusal::Request {
            status: match error {
                request::HeadError::Malformed(_) => "400 Bad Request",
                request::HeadError::Unsupported(_) => "501 Not Implemented",
            },
            why: error.why(),
        }),
    };
    let Err(refusal) = outcome else {
        return;
    };
    let (status, body) = match &refusal {
        Refusal::Policy { domain, why } => {
            let line = format!(
                "agent-guard: network to `{}` refused: {why}",
                domain.escape_default()
            );
            shared.note(domain, &line);
            ("403 Forbidden", format!("{line}\n"))
        }
        Refusal::Request { status, why } => (*status, format!("agent-guard: {why}\n")),
        Refusal::Unreachable { domain, why } => (
            "502 Bad Gateway",
            format!("agent-guard: cannot reach `{}`: {why}\n", domain.escape_default()),
        ),
    };
    let _ = client.write_all(&response(status, &body));
}

impl Shared {
    /// Notes a refusal of `domain`: the first for each domain is kept and echoed.
    fn note(&self, domain: &str, line: &str) {
        let Ok(mut refused) = self.refused.lock() else {
            return;
        };
        let prefix = format!("agent-guard: network to `{}` ", domain.escape_default());
        if refused.iter().any(|seen| seen.starts_with(&prefix)) {
            return;
        }
        refused.push(line.to_owned());
        if let Ok(mut echo) = self.echo.lock()
            && let Some(to) = echo.as_mut()
        {
            let _ = writeln!(to, "{line}");
            let _ = to.flush();
        }
    }
}

/// Checks `request` against the policy and where its host leads, then forwards it. `early` holds what the client
/// sent past its head.
fn forward(
    client: &mut TcpStream,
    request: RequestHead,
    early: Vec<u8>,
    shared: &Shared,
    deadline: Instant,
) -> Result<(), Refusal> {
    let RequestHead { host, port, kind } = request;
    // A service on this machine that a deliberate allow granted, host and port: the proxy runs outside the
    // command's network namespace, so it reaches the host's loopback for it. Its address is fixed by the grant,
    // so a tunnel to it need not name the host in TLS (a plain `http://` service may be reached by `CONNECT` too).
    // A server of this project run in the background, reached in its own namespace through its run (first: the
    // line named it, and what the host's loopback holds at that port is another program); never for a session
    // whose untrusted content limits where its commands may send data.
    if shared.limit.is_none()
        && let Some(service) = shared.policy.service(&host, port)
    {
        let refused = || Unreachable::Refused("it no longer listens".to_owned());
        return forward_to(client, kind, early, &host, || {
            service.connect().ok_or_else(refused)
        });
    }
    if shared.policy.services_only() {
        return Err(Refusal::Policy {
            domain: host,
            why: "the line reaches a server of this project run in the background, and nothing else"
                .to_owned(),
        });
    }
    if let Some(grant) = shared.policy.loopback_grant(&host, port) {
        let addresses = grant.addresses();
        return forward_to(client, kind, early, &host, || upstream::connect(&addresses));
    }
    allowed(&shared.policy, shared.limit.as_ref(), &host, port)?;
    let addresses = shared.resolver.resolve(&host, port).map_err(|why| match why {
        Unreachable::Private(address) => Refusal::Policy {
            domain: host.clone(),
            why: format!(
                "it resolves to `{address}`, which is not on the internet (loopback, private or link-local)"
            ),
        },
        Unreachable::Unresolved(why) | Unreachable::Refused(why) => Refusal::Unreachable {
            domain: host.clone(),
            why,
        },
    })?;
    match kind {
        RequestKind::Tunnel => {
            client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .map_err(|e| Refusal::Unreachable {
                    domain: host.clone(),
                    why: e.to_string(),
                })?;
            let mut hello = early;
            let complete =
                |bytes: &[u8]| (tls::client_hello(bytes) != Hello::Incomplete).then_some(bytes.len());
            read_until(client, &mut hello, deadline, tls::MAX_HELLO, complete);
            let why = match tls::client_hello(&hello) {
                Hello::Name(name) if normalize_host(&name) == normalize_host(&host) => None,
                // The name is the client's bytes: escaped, so that it cannot drive the terminal it is shown on.
                Hello::Name(name) => Some(format!(
                    "the tunnel's TLS server name `{}` is not the host it was opened to",
                    name.escape_default()
                )),
                Hello::NoName => Some("the tunnel's TLS ClientHello names no server".to_owned()),
                Hello::NotTls(why) => Some(format!("a tunnel carries TLS only ({why})")),
                Hello::Incomplete => Some("the tunnel sent no complete TLS ClientHello in time".to_owned()),
            };
            if let Some(why) = why {
                // The client expects TLS now, not a response: the refusal goes to stderr and the tunnel closes.
                let line = format!(
                    "agent-guard: network to `{}` refused: {why}",
                    host.escape_default()
                );
                shared.note(&host, &line);
                return Ok(());
            }
            // The 200 is sent: when the host cannot be reached, closing is all that is left to say.
            if let Ok(mut server) = upstream::connect(&addresses)
                && server.write_all(&hello).is_ok()
            {
                upstream::splice(client, &server, None);
            }
            Ok(())
        }
        http @ RequestKind::Http { .. } => {
            forward_to(client, http, early, &host, || upstream::connect(&addresses))
        }
    }
}

/// Forwards a request whose destination is decided (`connect` reaches it): a tunnel as it comes, a plain request
/// rebuilt.
fn forward_to(
    client: &mut TcpStream,
    kind: RequestKind,
    early: Vec<u8>,
    host: &str,
    connect: impl FnOnce() -> Result<TcpStream, Unreachable>,
) -> Result<(), Refusal> {
    let unreachable = |why| Refusal::Unreachable {
        domain: host.to_owned(),
        why: match why {
            Unreachable::Refused(why) | Unreachable::Unresolved(why) => why,
            Unreachable::Private(address) => address.to_string(),
        },
    };
    match kind {
        RequestKind::Tunnel => {
            let server = connect().map_err(unreachable)?;
            client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .map_err(|e| Refusal::Unreachable {
                    domain: host.to_owned(),
                    why: e.to_string(),
                })?;
            let mut writer = &server;
            if writer.write_all(&early).is_ok() {
                upstream::splice(client, &server, None);
            }
            Ok(())
        }
        RequestKind::Http { upstream_head, body } => {
            let mut server = connect().map_err(unreachable)?;
            let early_body = early
                .get(..usize::try_from(body).unwrap_or(usize::MAX).min(early.len()))
                .unwrap_or_default();
            let sent = server
                .write_all(&upstream_head)
                .and_then(|()| server.write_all(early_body));
            if sent.is_ok() {
                upstream::splice(
                    client,
                    &server,
                    Some(body.saturating_sub(early_body.len() as u64)),
                );
            }
            Ok(())
        }
    }
}

/// Whether the policy, within its limit, lets the command reach `host` at `port`, as a refusal that says why not.
fn allowed(policy: &DomainPolicy, limit: Option<&DomainLimit>, host: &str, port: u16) -> Result<(), Refusal> {
    let refuse = |why: String| {
        Err(Refusal::Policy {
            domain: host.to_owned(),
            why,
        })
    };
    if crate::domains::loopback_host(host) {
        return refuse(format!(
            "a service on this machine, reached only where an allow of the line that names it granted \
             `{host}:{port}` (that host and port)"
        ));
    }
    match policy.verdict(host, port) {
        DomainVerdict::Allowed(_) => match limit {
            Some(limit) if !limit.allows(host) => refuse(limit.why().to_owned()),
            Some(_) | None => Ok(()),
        },
        DomainVerdict::Denied(pattern) => refuse(format!("denied by `{pattern}` in agentGuard.network.deny")),
        DomainVerdict::NotListed if normalize_host(host).is_none() => {
            refuse("an address, not a host name: the sandbox reaches hosts by name only".to_owned())
        }
        DomainVerdict::NotListed if policy.allows(host, 443) || policy.allows(host, 80) => refuse(format!(
            "port {port} is not allowed (name it in agentGuard.network.allow, as `{host}:{port}`)"
        )),
        DomainVerdict::NotListed => refuse("not in agentGuard.network.allow".to_owned()),
    }
}

/// Reads from `from` into `buffer` until `done` finds an end (returned), `limit` bytes, the deadline or the end of
/// the stream.
fn read_until(
    from: &mut TcpStream,
    buffer: &mut Vec<u8>,
    deadline: Instant,
    limit: usize,
    done: impl Fn(&[u8]) -> Option<usize>,
) -> Option<usize> {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = done(buffer) {
            return Some(end);
        }
        let left = deadline.checked_duration_since(Instant::now())?;
        if buffer.len() >= limit || left.is_zero() {
            return None;
        }
        let _ = from.set_read_timeout(Some(left));
        match from.read(&mut chunk) {
            Ok(0) => return None,
            Ok(n) => buffer.extend_from_slice(chunk.get(..n)?),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

/// A complete response with a text body, after which the connection closes.
fn response(status: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests;
