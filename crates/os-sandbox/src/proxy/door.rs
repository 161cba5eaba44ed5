//! The door into a background command's network namespace: a process, forked by the namespace's init before the
//! command, that connects to a port of the namespace's loopback when the supervisor outside asks, and hands it the
//! connected socket (`SCM_RIGHTS` over a socket pair made before the fork); and hands it a socket diagnostics
//! socket of the namespace, through which the supervisor sees what listens there. Through it the supervisor
//! publishes what the command serves (publish.rs). It runs under the rules of child.rs: system calls on data prepared before
//! the fork, nothing else; like the relay it stays outside the command's Landlock domain, so the command can
//! neither signal it, nor trace it, nor take its descriptors, and it listens on nothing the command could reach.
#![expect(
    unsafe_code,
    reason = "system calls between fork and exec: fork, recv, socket, connect, sendmsg"
)]

use std::io;
use std::os::fd::RawFd;

use super::relay::{close_all_but, send_descriptor};

/// The answer to a request the door cannot serve: nothing listens on the port, or the request is malformed.
pub(super) const REFUSED: u8 = 1;

/// How long a connection to the namespace's loopback may take (a listener whose queue is full).
const CONNECT_TIMEOUT: libc::timeval = libc::timeval {
    tv_sec: 5,
    tv_usec: 0,
};

/// Forks the door process, which serves the requests on `to_supervisor` until the supervisor closes its end or
/// the namespace ends. Returns in the init, which no longer holds the socket pair.
pub(crate) fn start(to_supervisor: RawFd) -> io::Result<()> {
    // SAFETY: fork in a single-threaded process whose child only makes system calls; close of a descriptor this
    // process holds.
    unsafe {
        match libc::fork() {
            -1 => Err(io::Error::last_os_error()),
            0 => serve(to_supervisor),
            _ => {
                libc::close(to_supervisor);
                Ok(())
            }
        }
    }
}

/// The port of a request for the namespace's socket diagnostics rather than a connection (nothing listens on
/// port 0).
pub(super) const DIAGNOSTICS: u16 = 0;

/// The door process: each request is a port in two bytes (network order); the answer is the socket connected
/// to it with one byte `0`, or [`REFUSED`] alone. Port [`DIAGNOSTICS`] asks for a `NETLINK_SOCK_DIAG` socket of
/// the namespace, through which the supervisor lists what listens there (publish.rs). The relay's port
/// ([`RELAY_PORT`](super::RELAY_PORT)) is refused: it is the proxy of the command, with what the command was
/// granted, which no one else may use.
fn serve(from: RawFd) -> ! {
    // SAFETY: system calls with integer arguments and buffers on our stack.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        close_all_but(from, from);
        let diagnostics = libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            libc::NETLINK_SOCK_DIAG,
        );
        loop {
            let mut port = [0u8; 2];
            let read = libc::recv(from, port.as_mut_ptr().cast(), port.len(), 0);
            if read < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            if read <= 0 {
                // The supervisor is gone: nobody will ask again.
                libc::_exit(0);
            }
            let answered = if read == 2 && u16::from_be_bytes(port) == DIAGNOSTICS && diagnostics >= 0 {
                send_descriptor(from, diagnostics)
            } else if let Some(connection) = (read == 2 && u16::from_be_bytes(port) != super::RELAY_PORT)
                .then(|| connect_loopback(u16::from_be_bytes(port)))
                .filter(|connection| *connection >= 0)
            {
                let sent = send_descriptor(from, connection);
                libc::close(connection);
                sent
            } else {
                let refused = [REFUSED];
                libc::send(from, refused.as_ptr().cast(), 1, libc::MSG_NOSIGNAL) == 1
            };
            if !answered {
                libc::_exit(0);
            }
        }
    }
}

/// A socket connected to `port` on the namespace's loopback, IPv4 first, then IPv6 (a server that listens on
/// `::1` alone); -1 when neither accepts.
unsafe fn connect_loopback(port: u16) -> RawFd {
    let v4 = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
        },
        sin_zero: [0; 8],
    };
    let v6 = libc::sockaddr_in6 {
        sin6_family: libc::AF_INET6 as libc::sa_family_t,
        sin6_port: port.to_be(),
        sin6_flowinfo: 0,
        sin6_addr: libc::in6_addr {
            s6_addr: std::net::Ipv6Addr::LOCALHOST.octets(),
        },
        sin6_scope_id: 0,
    };
    // SAFETY: each address lives on our stack for the call, with its true size.
    unsafe {
        let connected = try_connect(
            libc::AF_INET,
            (&raw const v4).cast(),
            std::mem::size_of::<libc::sockaddr_in>(),
        );
        if connected >= 0 {
            return connected;
        }
        try_connect(
            libc::AF_INET6,
            (&raw const v6).cast(),
            std::mem::size_of::<libc::sockaddr_in6>(),
        )
    }
}

/// A TCP socket of `family` connected to `address` (of `size` bytes), or -1.
unsafe fn try_connect(family: libc::c_int, address: *const libc::sockaddr, size: usize) -> RawFd {
    // SAFETY: socket, setsockopt and connect with arguments that outlive the calls; close of our own socket.
    unsafe {
        let socket = libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if socket < 0 {
            return -1;
        }
        // A blocking connect waits at most the send timeout.
        let timeout = CONNECT_TIMEOUT;
        libc::setsockopt(
            socket,
            libc::SOL_SOCKET,
            libc::SO_SNDTIMEO,
            (&raw const timeout).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        );
        // An interrupted connect goes on in the background, where no one would wait for it: it fails the request.
        if libc::connect(socket, address, size as libc::socklen_t) == 0 {
            return socket;
        }
        libc::close(socket);
        -1
    }
}
