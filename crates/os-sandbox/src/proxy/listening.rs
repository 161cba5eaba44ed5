//! The TCP ports that listen in a network namespace, asked of the kernel through a `NETLINK_SOCK_DIAG` socket made
//! in it: one `SOCK_DIAG_BY_FAMILY` dump per address family, of the sockets in state `LISTEN` alone, which the
//! kernel answers from its table of listening sockets without walking the connections. The request and the
//! answer's first fields are a fixed layout of a few bytes (`linux/inet_diag.h`); it is written here rather than
//! through a netlink crate, which would bring a message framework for this one exchange.

use std::collections::BTreeSet;
use std::os::fd::{AsRawFd, OwnedFd};

/// `SOCK_DIAG_BY_FAMILY`, the message type of the request and of each socket in the answer.
const SOCK_DIAG_BY_FAMILY: u16 = 20;
/// `NLMSG_ERROR` and `NLMSG_DONE`, which end an answer.
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
/// The length of a netlink message header.
const HEADER: usize = 16;
/// `TCP_LISTEN` in the kernel's numbering of TCP states.
const TCP_LISTEN: u32 = 10;
/// How many answers a dump may take: a namespace with more listening sockets than this is told as far as read.
const MAX_READS: usize = 64;

/// The ports of the sockets listening in the namespace of `diagnostics` (IPv4 and IPv6); `None` when the kernel
/// cannot be asked (the namespace is gone).
pub(super) fn ports(diagnostics: &OwnedFd) -> Option<BTreeSet<u16>> {
    let mut ports = BTreeSet::new();
    for family in [libc::AF_INET, libc::AF_INET6] {
        ports.extend(dump(diagnostics, family)?);
    }
    Some(ports)
}

/// Whether this process's network namespace (the host's, for a supervisor) listens on `port` at any address.
pub(crate) fn host_listens(port: u16) -> bool {
    use nix::sys::socket::{AddressFamily, SockFlag, SockProtocol, SockType, socket};
    socket(
        AddressFamily::Netlink,
        SockType::Datagram,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkSockDiag,
    )
    .ok()
    .and_then(|diagnostics| ports(&diagnostics))
    .is_some_and(|listening| listening.contains(&port))
}

/// One dump of the listening TCP sockets of `family`.
fn dump(diagnostics: &OwnedFd, family: libc::c_int) -> Option<Vec<u16>> {
    use nix::sys::socket::{MsgFlags, recv, send};
    let family = u8::try_from(family).ok()?;
    send(diagnostics.as_raw_fd(), &request(family), MsgFlags::MSG_NOSIGNAL).ok()?;
    let mut ports = Vec::new();
    let mut buffer = vec![0u8; 32 * 1024];
    for _ in 0..MAX_READS {
        let read = recv(diagnostics.as_raw_fd(), &mut buffer, MsgFlags::empty()).ok()?;
        match answer(buffer.get(..read)?, &mut ports) {
            Answer::More => {}
            Answer::Done => return Some(ports),
            Answer::Failed => return None,
        }
    }
    Some(ports)
}

/// The request: a netlink header, then `struct inet_diag_req_v2` for TCP sockets of `family` in state `LISTEN`,
/// any address and port.
fn request(family: u8) -> [u8; HEADER + 56] {
    let mut message = [0u8; HEADER + 56];
    let length = u32::try_from(message.len()).unwrap_or(u32::MAX);
    let flags: u16 = (libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16;
    // The socket id after these (ports, addresses, interface, cookie) stays zero: every socket.
    let fields: [(usize, &[u8]); 6] = [
        (0, &length.to_ne_bytes()),
        (4, &SOCK_DIAG_BY_FAMILY.to_ne_bytes()),
        (6, &flags.to_ne_bytes()),
        // `sdiag_family`, `sdiag_protocol`; `idiag_ext` and the padding stay zero.
        (HEADER, &[family]),
        (HEADER + 1, &[libc::IPPROTO_TCP as u8]),
        (HEADER + 4, &(1u32 << TCP_LISTEN).to_ne_bytes()),
    ];
    for (at, bytes) in fields {
        if let Some(slot) = message.get_mut(at..at + bytes.len()) {
            slot.copy_from_slice(bytes);
        }
    }
    message
}

/// What one read of the answer held.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    /// Sockets, and more to read.
    More,
    /// The end of the dump.
    Done,
    /// An error message, or a message cut short.
    Failed,
}

/// Adds the local port of each socket in `read` (netlink messages) to `ports`.
fn answer(read: &[u8], ports: &mut Vec<u16>) -> Answer {
    let mut rest = read;
    while !rest.is_empty() {
        let field = |at: usize| -> Option<[u8; 2]> { rest.get(at..at + 2)?.try_into().ok() };
        let (Some(length), Some(kind)) = (
            rest.get(..4)
                .and_then(|b| b.try_into().ok())
                .map(u32::from_ne_bytes),
            field(4).map(u16::from_ne_bytes),
        ) else {
            return Answer::Failed;
        };
        let length = usize::try_from(length).unwrap_or(usize::MAX);
        match kind {
            NLMSG_DONE => return Answer::Done,
            NLMSG_ERROR => return Answer::Failed,
            // `struct inet_diag_msg`: family, state, timer, retransmits, then the socket id, whose source port
            // (network order) comes first.
            SOCK_DIAG_BY_FAMILY => match field(HEADER + 4) {
                Some(port) if length >= HEADER + 6 => ports.push(u16::from_be_bytes(port)),
                _ => return Answer::Failed,
            },
            _ => {}
        }
        // Each message starts on a four-byte boundary.
        let next = length.checked_add(3).map(|end| end & !3);
        match next
            .filter(|&next| next >= HEADER)
            .and_then(|next| rest.get(next..))
        {
            Some(after) => rest = after,
            None => return Answer::More,
        }
    }
    Answer::More
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A netlink message of `kind` with `body`, padded to four bytes.
    fn message(kind: u16, body: &[u8]) -> Vec<u8> {
        let length = u32::try_from(HEADER + body.len()).unwrap();
        let mut bytes = length.to_ne_bytes().to_vec();
        bytes.extend(kind.to_ne_bytes());
        bytes.extend([0u8; 10]);
        bytes.extend(body);
        while bytes.len() % 4 != 0 {
            bytes.push(0);
        }
        bytes
    }

    /// The start of an `inet_diag_msg` of a listening socket on `port`.
    fn socket(port: u16) -> Vec<u8> {
        let mut body = vec![2u8, 10, 0, 0];
        body.extend(port.to_be_bytes());
        body.extend([0u8; 66]);
        body
    }

    #[test]
    fn an_answer_gives_the_port_of_each_socket_until_its_end() {
        let mut read = message(SOCK_DIAG_BY_FAMILY, &socket(8080));
        read.extend(message(SOCK_DIAG_BY_FAMILY, &socket(5173)));
        let mut ports = Vec::new();
        assert_eq!(answer(&read, &mut ports), Answer::More);
        assert_eq!(ports, vec![8080, 5173]);
        read.extend(message(NLMSG_DONE, &[0; 4]));
        let mut ports = Vec::new();
        assert_eq!(answer(&read, &mut ports), Answer::Done);
        assert_eq!(ports, vec![8080, 5173]);
        assert_eq!(answer(&message(NLMSG_ERROR, &[0; 4]), &mut ports), Answer::Failed);
        // A message cut before its port.
        assert_eq!(
            answer(&message(SOCK_DIAG_BY_FAMILY, &[2, 10]), &mut ports),
            Answer::Failed
        );
        assert_eq!(answer(&[1, 2, 3], &mut ports), Answer::Failed);
    }

    #[test]
    fn the_kernel_lists_a_listener_of_this_process_and_not_a_connection() {
        use std::os::fd::FromRawFd;
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let v6 = std::net::TcpListener::bind(("::1", 0)).ok();
        let client = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let client_port = client.local_addr().unwrap().port();
        #[expect(unsafe_code, reason = "opening a netlink socket, which std does not")]
        // SAFETY: socket with integer arguments; the descriptor is checked and then owned here alone.
        let diagnostics = unsafe {
            let fd = libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                libc::NETLINK_SOCK_DIAG,
            );
            assert!(fd >= 0, "{}", std::io::Error::last_os_error());
            OwnedFd::from_raw_fd(fd)
        };
        let listening = ports(&diagnostics).unwrap();
        assert!(listening.contains(&port), "{port} not in {listening:?}");
        if let Some(v6) = v6 {
            let port = v6.local_addr().unwrap().port();
            assert!(listening.contains(&port), "{port} not in {listening:?}");
        }
        assert!(!listening.contains(&client_port), "{listening:?}");
    }
}
