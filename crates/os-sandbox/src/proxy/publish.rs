//! What a background command serves, published on the host's loopback. The command's network namespace has a
//! loopback of its own, so a development server it starts (`npm run dev`, `python3 -m http.server`) is out of
//! everyone's reach: the user's browser, and the agent's next call. While the command runs, the supervisor lists
//! the namespace's listening TCP sockets (`SOCK_DIAG` through a netlink socket the door made in the namespace: the
//! listening sockets alone, some microseconds a look, where `/proc/net/tcp` walks every connection of the
//! machine). A port the user's settings publish (`agentGuard.sandbox.publish`) it listens on at the host's
//! `127.0.0.1` (never another address), and carries each connection it accepts into the namespace through the
//! door (door.rs); the command's stderr says so, and says of any other port how to publish it. Nothing is
//! published unless listed: a program of this machine that connects to a port it expects one of its services on
//! (a database, a credential helper) while that service is down would otherwise reach whatever the command
//! listens with there, and send it what it sends its service. A port the host already uses stays unpublished.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use super::door::{DIAGNOSTICS, REFUSED};
use crate::domains::PortRange;

/// How often the namespace's listening sockets are looked at: a server that starts listening is published
/// within this time.
const LOOK_EVERY: Duration = Duration::from_millis(200);

/// How many connections to the published ports are carried at once; more are closed as they come.
const MAX_CONNECTIONS: usize = 128;

/// How many lines a run's stderr is told of its ports: a command that listens on thousands does not flood it.
const MAX_TOLD: usize = 16;

/// The supervisor's side of the door of one command's namespace.
#[derive(Debug)]
pub(crate) struct Services {
    /// The door's end of the socket pair, until the command's init holds it.
    door_end: Option<OwnedFd>,
    /// The supervisor's end.
    door: Arc<Door>,
    /// Dropped to stop the publisher.
    stop: Option<mpsc::Sender<()>>,
    /// The ports published when they listen.
    publish: Vec<PortRange>,
    /// The run's scratch directory, where the listening ports are written ([`LISTENING`]) and the socket through
    /// which other runs' proxies reach them listens ([`SERVICES`]).
    scratch: PathBuf,
    /// The socket of [`SERVICES`], closed when this is dropped.
    services: Option<UnixListener>,
    /// Whether the run's servers are listed and served to other runs' proxies (a run granted nothing of its own).
    serves_others: bool,
}

/// The file in a background run's scratch directory that lists the ports listening in its namespace, one per line.
pub(crate) const LISTENING: &str = "listening";
/// The socket in a background run's scratch directory through which the proxy of another sandboxed run reaches a
/// port listening in its namespace: a request is the port in two bytes, the answer the connected socket.
pub(crate) const SERVICES: &str = "services";

impl Services {
    /// The socket pair to the door, for a command started in the background that publishes the ports in
    /// `publish`.
    ///
    /// # Errors
    /// The errors of `socketpair`.
    pub(crate) fn new(publish: Vec<PortRange>, scratch: &Path, serves_others: bool) -> std::io::Result<Self> {
        let (ours, door_end) = super::pair_with_child()?;
        Ok(Self {
            door_end: Some(door_end),
            door: Arc::new(Door(Mutex::new(ours))),
            stop: None,
            publish,
            scratch: scratch.to_path_buf(),
            services: None,
            serves_others,
        })
    }

    /// The door's end of the socket pair, for the command's namespace setup.
    pub(crate) fn door_fd(&self) -> Option<RawFd> {
        self.door_end.as_ref().map(AsRawFd::as_raw_fd)
    }

    /// Publishes what the command's namespace serves, until this is dropped, noting each port on `notes`. Called
    /// once the command has started (its namespace's init holds the door's end).
    pub(crate) fn publish(&mut self, notes: Box<dyn FnMut(&str) + Send>) {
        // The init holds its own copy now; this one would keep the door's requests unanswered past its end.
        self.door_end = None;
        let (stop, stopped) = mpsc::channel();
        let door = Arc::clone(&self.door);
        let publish = self.publish.clone();
        let listing = self.serves_others.then(|| self.scratch.join(LISTENING));
        let spawned = std::thread::Builder::new()
            .name("agent-guard-publish".into())
            .spawn(move || {
                // The door answers once the namespace is made; it never does when the command failed to start.
                if let Some(diagnostics) = door.request(DIAGNOSTICS) {
                    Publisher::new(diagnostics, door, publish, listing, notes).run(&stopped);
                }
            });
        if spawned.is_ok() {
            self.stop = Some(stop);
        }
        // The scratch directory is this user's alone (mode 0700), and out of every sandboxed command's reach; the
        // socket is made 0600 whatever the umask.
        let socket = self.scratch.join(SERVICES);
        if self.serves_others
            && let Ok(services) = UnixListener::bind(&socket)
            && std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600)).is_ok()
            && let Ok(serving) = services.try_clone()
        {
            let door = Arc::clone(&self.door);
            let _spawned = std::thread::Builder::new()
                .name("agent-guard-services".into())
                .spawn(move || serve_proxies(&serving, &door));
            self.services = Some(services);
        }
    }
}

impl Drop for Services {
    fn drop(&mut self) {
        if let Some(services) = &self.services {
            let _ = nix::sys::socket::shutdown(services.as_raw_fd(), nix::sys::socket::Shutdown::Both);
        }
        // Ends the door: its next read sees the end of the pair.
        if let Ok(door) = self.door.0.lock() {
            let _ = nix::sys::socket::shutdown(door.as_raw_fd(), nix::sys::socket::Shutdown::Both);
        }
    }
}

/// The supervisor's end of the socket pair to the door; one request at a time.
#[derive(Debug)]
struct Door(Mutex<OwnedFd>);

impl Door {
    /// A connection to `port` on the namespace's loopback, or `None` when nothing accepts it there.
    fn connect(&self, port: u16) -> Option<TcpStream> {
        (port != DIAGNOSTICS)
            .then(|| self.request(port))
            .flatten()
            .map(TcpStream::from)
    }

    /// The descriptor the door answers `port` with: a connection, or for [`DIAGNOSTICS`] its netlink socket.
    fn request(&self, port: u16) -> Option<OwnedFd> {
        use nix::sys::socket::{MsgFlags, send};
        let door = self.0.lock().ok()?;
        send(door.as_raw_fd(), &port.to_be_bytes(), MsgFlags::MSG_NOSIGNAL).ok()?;
        super::receive_descriptor(door.as_raw_fd()).flatten()
    }
}

/// The publisher's state: the ports published, each with its listener on the host.
struct Publisher {
    /// The netlink socket of the command's namespace.
    diagnostics: OwnedFd,
    /// One of this process's namespace (the host's), for what this machine listens on itself.
    host: Option<OwnedFd>,
    door: Arc<Door>,
    publish: Vec<PortRange>,
    /// Where the listening ports are written ([`LISTENING`]), when other runs may reach them, and what was
    /// written last.
    listing: Option<PathBuf>,
    listed: Vec<(u16, bool)>,
    notes: Box<dyn FnMut(&str) + Send>,
    published: BTreeMap<u16, TcpListener>,
    /// The ports not published (not listed, or the host's already), told once while they listen.
    told: BTreeSet<u16>,
    /// How many lines were told.
    lines: usize,
    active: Arc<AtomicUsize>,
}

impl Publisher {
    fn new(
        diagnostics: OwnedFd,
        door: Arc<Door>,
        publish: Vec<PortRange>,
        listing: Option<PathBuf>,
        notes: Box<dyn FnMut(&str) + Send>,
    ) -> Self {
        Self {
            diagnostics,
            host: nix::sys::socket::socket(
                nix::sys::socket::AddressFamily::Netlink,
                nix::sys::socket::SockType::Datagram,
                nix::sys::socket::SockFlag::SOCK_CLOEXEC,
                nix::sys::socket::SockProtocol::NetlinkSockDiag,
            )
            .ok(),
            door,
            publish,
            listing,
            listed: Vec::new(),
            notes,
            published: BTreeMap::new(),
            told: BTreeSet::new(),
            lines: 0,
            active: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Looks now and every [`LOOK_EVERY`] until `stopped` says the command has ended or the namespace is gone,
    /// then closes every published port.
    fn run(mut self, stopped: &mpsc::Receiver<()>) {
        while let Some(listening) = super::listening::ports(&self.diagnostics) {
            self.look(listening);
            if !matches!(
                stopped.recv_timeout(LOOK_EVERY),
                Err(mpsc::RecvTimeoutError::Timeout)
            ) {
                break;
            }
        }
        for listener in self.published.values() {
            close_listener(listener);
        }
    }

    /// Publishes the ports that started `listening` and closes those that stopped, then lists them for the
    /// project's other calls ([`LISTENING`]).
    fn look(&mut self, mut listening: BTreeSet<u16>) {
        // The relay to the command's own proxy is agent-guard's, not a server of the command: it carries what the
        // command was granted, which is the command's alone.
        listening.remove(&super::RELAY_PORT);
        self.publish_listening(&listening);
        let state: Vec<(u16, bool)> = listening
            .iter()
            .map(|port| (*port, self.published.contains_key(port)))
            .collect();
        if state != self.listed {
            self.list(state);
        }
    }

    /// Publishes the ports of `listening` the settings list, and closes those that stopped.
    fn publish_listening(&mut self, listening: &BTreeSet<u16>) {
        self.published.retain(|port, listener| {
            let keep = listening.contains(port);
            if !keep {
                close_listener(listener);
            }
            keep
        });
        self.told.retain(|port| listening.contains(port));
        for &port in listening {
            if self.published.contains_key(&port) || self.told.contains(&port) {
                continue;
            }
            if !self.publish.iter().any(|range| range.contains(port)) {
                self.tell(&format!(
                    "the command listens on port {port} inside its sandbox, where nothing outside reaches it; \
                     to reach it at 127.0.0.1:{port} while a command runs in the background, add {port} to \
                     `agentGuard.sandbox.publish` in your settings"
                ));
                self.told.insert(port);
                continue;
            }
            // A port this machine listens on at any address (a service on `::1` alone, which `localhost` may
            // reach) is its own: published on `127.0.0.1`, the command would stand in for it there.
            if self
                .host
                .as_ref()
                .and_then(super::listening::ports)
                .is_some_and(|ports| ports.contains(&port))
            {
                self.tell(&format!(
                    "the command listens on port {port}, which is not published: this machine already listens on it"
                ));
                self.told.insert(port);
                continue;
            }
            match TcpListener::bind(("127.0.0.1", port)) {
                Ok(listener) => {
                    if let Ok(accepting) = listener.try_clone() {
                        let door = Arc::clone(&self.door);
                        let active = Arc::clone(&self.active);
                        let _spawned = std::thread::Builder::new()
                            .name("agent-guard-published".into())
                            .spawn(move || accept(&accepting, port, &door, &active));
                    }
                    self.tell(&format!(
                        "the command listens on port {port}; published on 127.0.0.1:{port} while it runs"
                    ));
                    self.published.insert(port, listener);
                }
                Err(error) => {
                    self.tell(&format!(
                        "the command listens on port {port}, which is not published on 127.0.0.1:{port}: {error}"
                    ));
                    self.told.insert(port);
                }
            }
        }
    }
}

impl Publisher {
    /// Writes the ports listening, each with whether it is published on the host, to the run's [`LISTENING`] file
    /// (`5173` or `5173 published`, one a line), whole: a reader sees the old list or the new.
    fn list(&mut self, state: Vec<(u16, bool)>) {
        let Some(listing) = &self.listing else {
            return;
        };
        let text: String = state
            .iter()
            .map(|(port, published)| {
                if *published {
                    format!("{port} published\n")
                } else {
                    format!("{port}\n")
                }
            })
            .collect();
        let fresh = listing.with_extension("new");
        if std::fs::write(&fresh, text)
            .and_then(|()| std::fs::rename(&fresh, listing))
            .is_ok()
        {
            self.listed = state;
        }
    }

    /// Tells `line` to the command's stderr, up to [`MAX_TOLD`] lines, then that the rest is not told.
    fn tell(&mut self, line: &str) {
        self.lines += 1;
        match self.lines.cmp(&MAX_TOLD) {
            std::cmp::Ordering::Less => (self.notes)(line),
            std::cmp::Ordering::Equal => {
                (self.notes)("more ports listen or are published; they are not told")
            }
            std::cmp::Ordering::Greater => {}
        }
    }
}

/// Answers each request of another run's proxy on `services`: the port in two bytes, answered with a connection
/// to it in this run's namespace (one byte `0` and the descriptor) or [`REFUSED`].
fn serve_proxies(services: &UnixListener, door: &Door) {
    use nix::sys::socket::{ControlMessage, MsgFlags, sendmsg};
    use std::io::Read;
    for connection in services.incoming() {
        let mut proxy = match connection {
            Ok(proxy) => proxy,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        let _ = proxy.set_read_timeout(Some(Duration::from_secs(1)));
        let mut port = [0u8; 2];
        let connection = proxy
            .read_exact(&mut port)
            .ok()
            .and_then(|()| door.connect(u16::from_be_bytes(port)));
        match connection {
            Some(connection) => {
                let fds = [connection.as_raw_fd()];
                let _sent = sendmsg::<()>(
                    proxy.as_raw_fd(),
                    &[std::io::IoSlice::new(&[0])],
                    &[ControlMessage::ScmRights(&fds)],
                    MsgFlags::MSG_NOSIGNAL,
                    None,
                );
            }
            None => {
                let _sent = std::io::Write::write_all(&mut proxy, &[REFUSED]);
            }
        }
    }
}

/// Carries each connection `listener` accepts to `port` in the namespace, until the listener is closed.
fn accept(listener: &TcpListener, port: u16, door: &Arc<Door>, active: &Arc<AtomicUsize>) {
    for connection in listener.incoming() {
        let client = match connection {
            Ok(client) => client,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        if active.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            active.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        let door = Arc::clone(door);
        let carrying = Arc::clone(active);
        let spawned = std::thread::Builder::new()
            .name("agent-guard-published-connection".into())
            .spawn(move || {
                if let Some(server) = door.connect(port) {
                    super::upstream::splice(&client, &server, None);
                }
                carrying.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            active.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Wakes the listener's acceptor, whose next accept then fails, and frees the port.
fn close_listener(listener: &TcpListener) {
    let _ = nix::sys::socket::shutdown(listener.as_raw_fd(), nix::sys::socket::Shutdown::Both);
}
