//! Reaching an allowed host: the proxy's own name resolution (with the test hook), the addresses it refuses
//! (loopback, private, link-local, metadata), the connection, and the copy of bytes both ways within bounds.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The test-only hook of the resolver: `name=address` pairs, comma-separated, read once when the proxy starts,
/// outside the sandbox. Only loopback addresses are taken, so that a test's server on `127.0.0.1` can stand
/// for an allowed domain; whoever can set the environment of `agent-guard sandbox` itself can do more than this.
pub(crate) const RESOLVE_HOOK: &str = "AGENT_GUARD_PROXY_RESOLVE";

/// How long a connection to a host may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a tunnel or a response may stay silent both ways before it is closed.
const IDLE: Duration = Duration::from_secs(300);
/// How often a copy looks at whether the other direction is still alive.
const TICK: Duration = Duration::from_secs(5);

/// The proxy's resolver: the system's, with the test hook's names first.
#[derive(Debug, Clone, Default)]
pub(crate) struct Resolver {
    pub(super) mapped: Vec<(String, IpAddr)>,
}

/// Why a name leads nowhere the proxy goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unreachable {
    /// The name does not resolve.
    Unresolved(String),
    /// Every address of the name is loopback, private, link-local or otherwise not on the internet.
    Private(IpAddr),
    /// No address accepted the connection.
    Refused(String),
}

impl Resolver {
    /// The resolver with the names of [`RESOLVE_HOOK`] in this process's environment.
    pub(crate) fn from_env() -> Self {
        Self::parse(&std::env::var(RESOLVE_HOOK).unwrap_or_default())
    }

    /// The resolver with the names of `hook` (`name=address,…`), loopback addresses only.
    pub(crate) fn parse(hook: &str) -> Self {
        let mapped = hook
            .split(',')
            .filter_map(|pair| {
                let (name, address) = pair.split_once('=')?;
                let address: IpAddr = address.trim().parse().ok()?;
                address
                    .is_loopback()
                    .then(|| (name.trim().trim_end_matches('.').to_ascii_lowercase(), address))
            })
            .collect();
        Self { mapped }
    }

    /// The addresses of `host` (a name, as the policy allowed it) the proxy may connect to.
    pub(crate) fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, Unreachable> {
        let name = host.trim_end_matches('.').to_ascii_lowercase();
        if let Some((_, address)) = self.mapped.iter().find(|(mapped, _)| *mapped == name) {
            return Ok(vec![SocketAddr::new(*address, port)]);
        }
        let all: Vec<SocketAddr> = (name.as_str(), port)
            .to_socket_addrs()
            .map_err(|e| Unreachable::Unresolved(e.to_string()))?
            .collect();
        let first = all.first().map(SocketAddr::ip);
        let public: Vec<SocketAddr> = all.into_iter().filter(|a| on_the_internet(a.ip())).collect();
        match (public.is_empty(), first) {
            (false, _) => Ok(public),
            (true, Some(address)) => Err(Unreachable::Private(address)),
            (true, None) => Err(Unreachable::Unresolved("no address".to_owned())),
        }
    }
}

/// Connects to the first of `addresses` that answers.
pub(crate) fn connect(addresses: &[SocketAddr]) -> Result<TcpStream, Unreachable> {
    let mut last = String::from("no address");
    for address in addresses {
        match TcpStream::connect_timeout(address, CONNECT_TIMEOUT) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = format!("{address}: {e}"),
        }
    }
    Err(Unreachable::Refused(last))
}

/// Whether `address` is on the internet: not loopback, private, link-local (the cloud metadata services at
/// `169.254.169.254` and `fd00:ec2::254` are link-local and unique-local), shared (carrier NAT, where Alibaba's
/// metadata lives), multicast, reserved or documentation space, and not such an address inside an IPv6 form
/// (mapped, compatible, NAT64, 6to4).
pub(crate) fn on_the_internet(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => v4_public(v4),
        IpAddr::V6(v6) => {
            let segments = v6.segments();
            let embedded = |high: u16, low: u16| {
                let [a, b] = high.to_be_bytes();
                let [c, d] = low.to_be_bytes();
                Ipv4Addr::new(a, b, c, d)
            };
            match segments {
                // ::ffff:a.b.c.d, ::a.b.c.d, 64:ff9b::a.b.c.d
                [0, 0, 0, 0, 0, 0xffff, h, l]
                | [0, 0, 0, 0, 0, 0, h, l]
                | [0x64, 0xff9b, 0, 0, 0, 0, h, l] => v4_public(embedded(h, l)),
                // 6to4: 2002:a.b.c.d::/48
                [0x2002, h, l, ..] => v4_public(embedded(h, l)),
                [first, second, ..] => {
                    !(v6.is_loopback()
                        || v6.is_unspecified()
                        || v6.is_multicast()
                        || first & 0xfe00 == 0xfc00 // unique local
                        || first & 0xffc0 == 0xfe80 // link-local
                        || first & 0xffc0 == 0xfec0 // site-local
                        || (first == 0x2001 && second == 0x0db8) // documentation
                        || (first == 0x2001 && second == 0) // Teredo
                        || first == 0x0100) // discard
                }
            }
        }
    }
}

fn v4_public(v4: Ipv4Addr) -> bool {
    let [a, b, c, _] = v4.octets();
    !(v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || v4.is_documentation()
        || a == 0
        || (a == 100 && b & 0xc0 == 64) // shared address space (carrier NAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && b & 0xfe == 18) // benchmarking
        || a >= 240) // reserved
}

/// Copies both ways between `client` and `server` until both directions end, or until neither has carried a byte
/// for [`IDLE`]. `client_to_server` bounds what goes upstream (`None`: until the client ends).
pub(crate) fn splice(client: &TcpStream, server: &TcpStream, client_to_server: Option<u64>) {
    let started = Instant::now();
    let last = Arc::new(AtomicU64::new(0));
    let (Ok(client_reader), Ok(server_writer)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    let up_last = Arc::clone(&last);
    let up = std::thread::Builder::new()
        .name("agent-guard-proxy-up".into())
        .spawn(move || copy(client_reader, server_writer, client_to_server, started, &up_last));
    copy_into(server, client, started, &last);
    if let Ok(up) = up {
        // The response has ended: whatever the client still sends has nowhere to go.
        let _ = client.shutdown(Shutdown::Read);
        let _ = up.join();
    }
}

fn copy_into(from: &TcpStream, to: &TcpStream, started: Instant, last: &AtomicU64) {
    if let (Ok(from), Ok(to)) = (from.try_clone(), to.try_clone()) {
        copy(from, to, None, started, last);
    }
}

/// Copies `from` into `to` (at most `limit` bytes), noting the time of each transfer in `last` (milliseconds since
/// `started`). Without a limit it then ends `to`'s writing side, as `from` ended; a request body is not followed
/// by an end (a server may take a half-closed connection for an abandoned request).
fn copy(mut from: TcpStream, mut to: TcpStream, limit: Option<u64>, started: Instant, last: &AtomicU64) {
    let _ = from.set_read_timeout(Some(TICK));
    let _ = to.set_write_timeout(Some(IDLE));
    let mut left = limit.unwrap_or(u64::MAX);
    let mut buffer = vec![0u8; 16 * 1024];
    while left > 0 {
        let want = usize::try_from(left).unwrap_or(usize::MAX).min(buffer.len());
        let Some(slot) = buffer.get_mut(..want) else {
            break;
        };
        match from.read(slot) {
            Ok(0) => break,
            Ok(n) => {
                let Some(data) = slot.get(..n) else {
                    break;
                };
                if to.write_all(data).is_err() {
                    break;
                }
                left = left.saturating_sub(n as u64);
                let now = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                last.store(now, Ordering::Relaxed);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                let quiet = started
                    .elapsed()
                    .saturating_sub(Duration::from_millis(last.load(Ordering::Relaxed)));
                if quiet >= IDLE {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    if limit.is_none() {
        let _ = to.shutdown(Shutdown::Write);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_special_addresses_are_not_on_the_internet() {
        for text in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.100.100.200",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "240.0.0.1",
            "198.18.0.1",
            "::1",
            "::",
            "fd00:ec2::254",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "2002:c0a8:0101::1",
            "2001:db8::1",
        ] {
            assert!(!on_the_internet(text.parse().unwrap()), "{text}");
        }
        for text in [
            "93.184.216.34",
            "151.101.1.137",
            "2606:4700::6810:84e5",
            "::ffff:8.8.8.8",
        ] {
            assert!(on_the_internet(text.parse().unwrap()), "{text}");
        }
    }

    #[test]
    fn the_hook_maps_names_to_loopback_only() {
        let resolver = Resolver {
            mapped: vec![("allowed.test".into(), "127.0.0.1".parse().unwrap())],
        };
        assert_eq!(
            resolver.resolve("Allowed.Test.", 8080).unwrap(),
            vec!["127.0.0.1:8080".parse().unwrap()]
        );
        // A name the system resolves to loopback is refused.
        assert!(matches!(
            resolver.resolve("localhost", 80),
            Err(Unreachable::Private(_))
        ));
    }
}
