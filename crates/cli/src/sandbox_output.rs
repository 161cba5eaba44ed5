//! What `agent-guard sandbox` prints of its command: each stream with its credentials redacted, as it comes.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use agent_os_sandbox::OutputFilter;
use agent_secrets::Redactor;

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

    /// Both streams on this thread, each as [`pump`](Self::pump) passes it: one `poll` waits for either pipe, or
    /// for the time a stream's partial line is due to be written as it is.
    fn pump_both(&self, stdout: OwnedFd, stderr: OwnedFd) {
        let mut out = std::io::stdout();
        let mut err = std::io::stderr();
        let mut streams = [Stream::new(stdout, &mut out), Stream::new(stderr, &mut err)];
        let mut chunk = vec![0u8; CHUNK];
        loop {
            let mut polled = [0usize; 2];
            let mut fds = [libc::pollfd {
                fd: -1,
                events: libc::POLLIN,
                revents: 0,
            }; 2];
            let mut count = 0;
            for (index, stream) in streams.iter().enumerate() {
                if let (Some(pipe), Some(slot), Some(fd)) =
                    (&stream.pipe, polled.get_mut(count), fds.get_mut(count))
                {
                    *slot = index;
                    fd.fd = pipe.as_raw_fd();
                    count += 1;
                }
            }
            if count == 0 {
                return;
            }
            // Until the first held line is due, or without end.
            let now = Instant::now();
            let timeout = streams
                .iter()
                .filter_map(|stream| stream.due)
                .min()
                .map_or(-1, |due| {
                    let wait = due.saturating_duration_since(now).as_micros().div_ceil(1000);
                    libc::c_int::try_from(wait).unwrap_or(IDLE_MS)
                });
            let ready = poll(fds.get_mut(..count).unwrap_or_default(), timeout);
            if ready < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            for (fd, &index) in fds.iter().zip(&polled).take(count) {
                // Another error of `poll` counts as readable: the read that follows tells.
                if (ready < 0 || fd.revents != 0)
                    && let Some(stream) = streams.get_mut(index)
                {
                    stream.read(&mut chunk);
                }
            }
            let now = Instant::now();
            for stream in &mut streams {
                if stream.due.is_some_and(|due| due <= now) {
                    stream.write_held();
                }
            }
        }
    }
}

/// One of the command's streams on its way through the redactor.
struct Stream<'a> {
    /// The pipe from the command; `None` once it ended, or a read or write failed (the command then meets a
    /// closed pipe, as it would at a closed reader).
    pipe: Option<std::fs::File>,
    redactor: Redactor,
    to: &'a mut dyn Write,
    /// When the partial line the redactor holds is written out as it is, unless more comes first.
    due: Option<Instant>,
}

impl<'a> Stream<'a> {
    fn new(pipe: OwnedFd, to: &'a mut dyn Write) -> Self {
        Self {
            pipe: Some(std::fs::File::from(pipe)),
            redactor: Redactor::new(),
            to,
            due: None,
        }
    }

    /// Reads once and passes on what came (the lines without a credential as they lie, the open line kept); at
    /// the pipe's end, what the redactor holds.
    fn read(&mut self, chunk: &mut [u8]) {
        let Some(pipe) = self.pipe.as_mut() else {
            return;
        };
        let passed = match pipe.read(chunk) {
            Ok(0) => {
                self.pipe = None;
                self.due = None;
                std::mem::take(&mut self.redactor)
                    .finish_to(self.to)
                    .and_then(|()| self.to.flush())
            }
            Ok(read) => self
                .redactor
                .push_to(chunk.get(..read).unwrap_or_default(), self.to)
                // Flushed so that the reader sees each piece as the command printed it.
                .and_then(|()| self.to.flush())
                .map(|()| {
                    self.due = self
                        .redactor
                        .holds()
                        .then(|| Instant::now() + Duration::from_millis(IDLE_MS.unsigned_abs().into()));
                }),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => Ok(()),
            Err(error) => Err(error),
        };
        if passed.is_err() {
            self.pipe = None;
            self.due = None;
        }
    }

    /// Writes out the partial line the redactor holds, which waited long enough for its end.
    fn write_held(&mut self) {
        self.due = None;
        if self
            .redactor
            .flush_to(self.to)
            .and_then(|()| self.to.flush())
            .is_err()
        {
            self.pipe = None;
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
