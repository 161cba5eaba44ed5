//! The relay inside the command's network namespace: a listening socket on `127.0.0.1`, and a process that passes
//! each connection it accepts to the proxy outside. It runs in the namespace's init between fork and exec, under
//! the rules of child.rs: system calls on data prepared before the fork, nothing else.
#![expect(
    unsafe_code,
    reason = "system calls between fork and exec: socket, bind, listen, fork, accept4, sendmsg"
)]

use std::io;
use std::os::fd::RawFd;

/// What the namespace's init needs to start the relay.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Relay {
    /// The relay's end of the socket pair to the proxy.
    pub(crate) to_proxy: RawFd,
    /// The port to listen on, on `127.0.0.1`.
    pub(crate) port: u16,
}

/// Listens on `127.0.0.1:port` and forks the relay process. Called by the namespace's init once the loopback is up
/// and before it forks the command, so that the port listens before the command's first instruction. Returns in
/// the init, which no longer holds the listening socket or the socket pair.
pub(crate) fn start(relay: Relay) -> io::Result<()> {
    // SAFETY: socket, setsockopt, bind and listen with a `sockaddr_in` on our stack; fork in a single-threaded
    // process whose child only makes system calls; close of descriptors this process holds.
    unsafe {
        let listener = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if listener < 0 {
            return Err(io::Error::last_os_error());
        }
        let address = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: relay.port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
            },
            sin_zero: [0; 8],
        };
        let bound = libc::bind(
            listener,
            (&raw const address).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        ) == 0
            && libc::listen(listener, 128) == 0;
        if !bound {
            let error = io::Error::last_os_error();
            libc::close(listener);
            return Err(error);
        }
        match libc::fork() {
            -1 => {
                let error = io::Error::last_os_error();
                libc::close(listener);
                Err(error)
            }
            0 => run(listener, relay.to_proxy),
            _ => {
                libc::close(listener);
                libc::close(relay.to_proxy);
                Ok(())
            }
        }
    }
}

/// The relay process: accepts each connection and sends its descriptor to the proxy, until the proxy is gone or
/// the namespace ends (it dies with the init).
fn run(listener: RawFd, to_proxy: RawFd) -> ! {
    // SAFETY: system calls with integer arguments, and a `msghdr` whose buffers live on our stack.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        close_all_but(listener, to_proxy);
        loop {
            let connection = libc::accept4(
                listener,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                libc::SOCK_CLOEXEC,
            );
            if connection < 0 {
                match io::Error::last_os_error().raw_os_error() {
                    Some(
                        libc::EINTR
                        | libc::ECONNABORTED
                        | libc::EMFILE
                        | libc::ENFILE
                        | libc::ENOBUFS
                        | libc::ENOMEM,
                    ) => {
                        continue;
                    }
                    _ => libc::_exit(0),
                }
            }
            let sent = send_descriptor(to_proxy, connection);
            libc::close(connection);
            if !sent {
                // The proxy is gone: a connection accepted now would wait for nothing.
                libc::_exit(0);
            }
        }
    }
}

/// Sends `fd` over the socket pair with one byte of data.
pub(super) unsafe fn send_descriptor(to: RawFd, fd: RawFd) -> bool {
    #[repr(C, align(8))]
    struct Control([u8; 64]);
    let mut byte = [0u8; 1];
    let mut control = Control([0; 64]);
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let fd_size = std::mem::size_of::<RawFd>() as libc::c_uint;
    // SAFETY: the `msghdr` points at the iovec and the control buffer above, which outlive the call; the control
    // buffer is aligned for a `cmsghdr` and larger than `CMSG_SPACE` of one descriptor.
    unsafe {
        let mut message: libc::msghdr = std::mem::zeroed();
        message.msg_iov = &raw mut iov;
        message.msg_iovlen = 1;
        message.msg_control = control.0.as_mut_ptr().cast();
        message.msg_controllen = libc::CMSG_SPACE(fd_size) as _;
        let header = libc::CMSG_FIRSTHDR(&raw const message);
        if header.is_null() {
            return false;
        }
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(fd_size) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<RawFd>(), fd);
        loop {
            if libc::sendmsg(to, &raw const message, libc::MSG_NOSIGNAL) == 1 {
                return true;
            }
            if io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return false;
            }
        }
    }
}

/// Closes every descriptor but `a` and `b`: the relay holds nothing of the command's (its output pipes would
/// otherwise stay open after it ends).
pub(super) unsafe fn close_all_but(a: RawFd, b: RawFd) {
    let (low, high) = if a < b { (a, b) } else { (b, a) };
    let close_range = |from: RawFd, to: RawFd| {
        if from <= to {
            // SAFETY: close_range with integer arguments.
            unsafe {
                libc::syscall(
                    libc::SYS_close_range,
                    from as libc::c_uint,
                    to as libc::c_uint,
                    0u32,
                )
            };
        }
    };
    close_range(0, low - 1);
    close_range(low + 1, high - 1);
    close_range(high + 1, RawFd::MAX);
}
