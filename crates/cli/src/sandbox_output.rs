//! What `agent-guard sandbox` prints of its command: its stdout and stderr with their credentials redacted, as
//! they come, scanned joined as their reader sees them.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use agent_os_sandbox::OutputFilter;
use agent_secrets::{Interleaved, Redactor};

/// The filter that replaces each credential in a command's output with `[redacted: <kind>]`.
pub(crate) struct Redaction;

/// How much is read from the command at once.
const CHUNK: usize = 64 << 10;
/// How long a partial line (a prompt) waits for its end before it is written out as it is.
const IDLE_MS: libc::c_int = 50;

impl OutputFilter for Redaction {
    fn pump(&self, from: OwnedFd, to: &mut dyn Write) -> std::io::Result<()> {
        let mut pipe = std::fs::File::from(from);
        let mut redactor = Redactor::new();
        let mut chunk = vec![0u8; CHUNK];
        loop {
            if redactor.holds() && !readable_within(&pipe, IDLE_MS) {
                redactor.flush_to(to)?;
                to.flush()?;
                continue;
            }
            let read = match pipe.read(&mut chunk) {
                Ok(0) => break,
                Ok(read) => read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            };
            // The lines without a credential go from the chunk to `to` as they lie; the open line is kept.
            redactor.push_to(chunk.get(..read).unwrap_or_default(), to)?;
            // Flushed so that the reader sees each piece as the command printed it.
            to.flush()?;
        }
        redactor.finish_to(to)?;
        to.flush()
    }

    /// Both streams on this thread, redacted as the reader sees them, joined in the order their bytes come
    /// ([`Interleaved`]): a credential split between stdout and stderr is whole there. Each byte is written to
    /// the stream it came from. One `poll` waits for either pipe, or for the time a partial line is due to be
    /// written as it is. A failed write stops that stream alone (the command meets a closed pipe on it).
    fn pump_both(&self, stdout: OwnedFd, stderr: OwnedFd) {
        pump_both_calling(stdout, stderr, None);
    }

    /// As `pump_both`, with `due` called from the same `poll` loop once `after` has passed.
    fn pump_both_then(&self, stdout: OwnedFd, stderr: OwnedFd, after: Duration, due: &mut dyn FnMut()) {
        pump_both_calling(stdout, stderr, Some((Instant::now() + after, due)));
    }
}

/// [`Redaction`]'s `pump_both`, calling the function of `call` once at its time if the pipes are still open then.
fn pump_both_calling(stdout: OwnedFd, stderr: OwnedFd, mut call: Option<(Instant, &mut dyn FnMut())>) {
    {
        let mut out = std::io::stdout();
        let mut err = std::io::stderr();
        let mut outs: [&mut dyn Write; 2] = [&mut out, &mut err];
        let mut pipes = [
            Some(std::fs::File::from(stdout)),
            Some(std::fs::File::from(stderr)),
        ];
        let mut redactor = Interleaved::new();
        // When what the redactor holds (a partial line, bytes waiting for the other stream) is written out.
        let mut due: Option<Instant> = None;
        // Filled by `read_into`: a buffer is never zeroed, and the pages the command's output does not reach are
        // never touched (a command that prints nothing costs no 128 KiB of zeroed memory).
        let mut chunks = [Vec::with_capacity(CHUNK), Vec::with_capacity(CHUNK)];
        loop {
            let mut polled = [0usize; 2];
            let mut fds = [libc::pollfd {
                fd: -1,
                events: libc::POLLIN,
                revents: 0,
            }; 2];
            let mut count = 0;
            for (index, pipe) in pipes.iter().enumerate() {
                if let (Some(pipe), Some(slot), Some(fd)) = (pipe, polled.get_mut(count), fds.get_mut(count))
                {
                    *slot = index;
                    fd.fd = pipe.as_raw_fd();
                    count += 1;
                }
            }
            if count == 0 {
                redactor.finish_to(&mut outs);
                for out in &mut outs {
                    let _flushed = out.flush();
                }
                return;
            }
            if call.as_ref().is_some_and(|(at, _)| Instant::now() >= *at)
                && let Some((_, function)) = call.take()
            {
                function();
            }
            // Until the held line is due or the call, or without end.
            let wake = match (due, call.as_ref().map(|(at, _)| *at)) {
                (Some(due), Some(at)) => Some(due.min(at)),
                (due, at) => due.or(at),
            };
            let timeout = wake.map_or(-1, |due| {
                let wait = due
                    .saturating_duration_since(Instant::now())
                    .as_micros()
                    .div_ceil(1000);
                libc::c_int::try_from(wait).unwrap_or(IDLE_MS)
            });
            let ready = poll(fds.get_mut(..count).unwrap_or_default(), timeout);
            if ready < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            // What each ready pipe gives; both are read before either is passed on, so that pieces that came at
            // once are taken in the order that makes a credential across them whole.
            let mut came = [0usize; 2];
            for (fd, &index) in fds.iter().zip(&polled).take(count) {
                // Another error of `poll` counts as readable: the read that follows tells.
                if !(ready < 0 || fd.revents != 0) {
                    continue;
                }
                let (Some(pipe), Some(chunk)) = (
                    pipes.get_mut(index).and_then(Option::as_mut),
                    chunks.get_mut(index),
                ) else {
                    continue;
                };
                match read_into(pipe, chunk) {
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                    // The pipe ended; what is held waits for the other stream, or for the end of both.
                    Ok(0) | Err(_) => {
                        if let Some(slot) = pipes.get_mut(index) {
                            *slot = None;
                        }
                    }
                    Ok(read) => {
                        if let Some(slot) = came.get_mut(index) {
                            *slot = read;
                        }
                    }
                }
            }
            let [zero, one] = &chunks;
            let (zero, one) = (
                zero.get(..came[0]).unwrap_or_default(),
                one.get(..came[1]).unwrap_or_default(),
            );
            match (zero.is_empty(), one.is_empty()) {
                (false, false) => redactor.push_both_to(zero, one, &mut outs),
                (false, true) => redactor.push_to(0, zero, &mut outs),
                (true, false) => redactor.push_to(1, one, &mut outs),
                (true, true) => {}
            }
            if !zero.is_empty() || !one.is_empty() {
                // The first moment something was held counts: bytes that keep coming do not put off the flush
                // of what waits (the other stream's bytes behind an unfinished word among them).
                due = match redactor.holds() {
                    true => due.or_else(|| {
                        Some(Instant::now() + Duration::from_millis(IDLE_MS.unsigned_abs().into()))
                    }),
                    false => None,
                };
            }
            if due.is_some_and(|due| due <= Instant::now()) {
                due = None;
                redactor.flush_to(&mut outs);
            }
            // Flushed so that the reader sees each piece as the command printed it; a stream whose output
            // failed is closed, so that the command meets a closed pipe there.
            for (index, out) in outs.iter_mut().enumerate() {
                if (redactor.failed(index) || out.flush().is_err())
                    && let Some(slot) = pipes.get_mut(index)
                {
                    *slot = None;
                }
            }
        }
    }
}

/// Waits for `fds` as `poll(2)` does, `timeout_ms` at most (`-1`: without end); the number ready, `-1` on an error.
fn poll(fds: &mut [libc::pollfd], timeout_ms: libc::c_int) -> libc::c_int {
    let count = libc::nfds_t::try_from(fds.len()).unwrap_or(0);
    #[expect(unsafe_code, reason = "poll on descriptors this function borrows")]
    // SAFETY: `poll` reads and writes the `count` `pollfd`s of `fds`, which it borrows for the call.
    unsafe {
        libc::poll(fds.as_mut_ptr(), count, timeout_ms)
    }
}

/// Reads what `pipe` has, as much as `chunk` holds (its capacity), into `chunk`, whose length is then what was read.
fn read_into(pipe: &std::fs::File, chunk: &mut Vec<u8>) -> std::io::Result<usize> {
    chunk.clear();
    let spare = chunk.spare_capacity_mut();
    #[expect(unsafe_code, reason = "read(2) into the spare capacity of a vector")]
    // SAFETY: `read` writes at most `spare.len()` bytes into the spare capacity `chunk` owns, and `set_len` then
    // covers exactly the bytes it wrote.
    unsafe {
        let read = libc::read(pipe.as_raw_fd(), spare.as_mut_ptr().cast(), spare.len());
        let read = usize::try_from(read).map_err(|_| std::io::Error::last_os_error())?;
        chunk.set_len(read);
        Ok(read)
    }
}

/// Whether `pipe` has something to read (or has ended) within `timeout_ms`.
fn readable_within(pipe: &std::fs::File, timeout_ms: libc::c_int) -> bool {
    let mut poll = libc::pollfd {
        fd: pipe.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    #[expect(unsafe_code, reason = "poll on one descriptor this function borrows")]
    // SAFETY: `poll` reads and writes the one `pollfd` it is given, which lives on this stack frame.
    let ready = unsafe { libc::poll(&raw mut poll, 1, timeout_ms) };
    // An error (a signal) counts as readable: the read that follows tells.
    ready != 0
}
