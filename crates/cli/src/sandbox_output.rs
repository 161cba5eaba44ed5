//! What `agent-guard sandbox` prints of its command: each stream with its credentials redacted, as it comes.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};

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
