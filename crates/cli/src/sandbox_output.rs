//! What `agent-guard sandbox` prints of its command: each stream with its credentials redacted, as it comes.
//!
//! Each stream is pumped by two threads: one reads the command's pipe into a few buffers as fast as the command
//! writes, the other redacts each buffer and writes it on. The scan of one read overlaps the reading of the next,
//! so the command rarely waits on a full pipe, and neither thread holds more than [`BUFFERS`] reads.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::time::Duration;

use agent_os_sandbox::OutputFilter;
use agent_secrets::Redactor;

/// The filter that replaces each credential in a command's output with `[redacted: <kind>]`.
pub(crate) struct Redaction;

/// How much is read from the command at once: the pipe's capacity is raised to this where the kernel allows.
const CHUNK: usize = 256 << 10;
/// How many reads may wait for the redaction (and be in it) at once.
const BUFFERS: usize = 4;
/// How long a partial line (a prompt) waits for its end before it is written out as it is.
const IDLE: Duration = Duration::from_millis(50);

impl OutputFilter for Redaction {
    fn pump(&self, from: OwnedFd, to: &mut dyn Write) -> std::io::Result<()> {
        let pipe = std::fs::File::from(from);
        widen(&pipe);
        let (filled, full) = sync_channel::<std::io::Result<Vec<u8>>>(BUFFERS);
        let (recycle, empty) = sync_channel::<Vec<u8>>(BUFFERS);
        std::thread::scope(|scope| {
            scope.spawn(move || read_into(pipe, &filled, &empty));
            let written = redact_from(&full, &recycle, to);
            // The reader stops at its next read: its sends fail once `full` is gone.
            drop(full);
            written
        })
    }
}

/// The reading thread: fills buffers from `pipe` and sends them, until the pipe ends, a read fails or the
/// redacting thread is gone.
fn read_into(
    mut pipe: std::fs::File,
    filled: &SyncSender<std::io::Result<Vec<u8>>>,
    empty: &Receiver<Vec<u8>>,
) {
    loop {
        let mut buffer = empty.try_recv().unwrap_or_default();
        buffer.resize(CHUNK, 0);
        let read = match pipe.read(&mut buffer) {
            Ok(0) => return,
            Ok(read) => read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => {
                let _gone = filled.send(Err(error));
                return;
            }
        };
        buffer.truncate(read);
        if filled.send(Ok(buffer)).is_err() {
            return;
        }
    }
}

/// The redacting thread: each read redacted and written as it arrives; a partial line held for [`IDLE`] without
/// more output is written out as it is (a prompt must show).
fn redact_from(
    full: &Receiver<std::io::Result<Vec<u8>>>,
    recycle: &SyncSender<Vec<u8>>,
    to: &mut dyn Write,
) -> std::io::Result<()> {
    let mut redactor = Redactor::new();
    loop {
        let next = if redactor.holds() {
            match full.recv_timeout(IDLE) {
                Ok(next) => next,
                Err(RecvTimeoutError::Timeout) => {
                    redactor.flush_to(to)?;
                    to.flush()?;
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        } else {
            match full.recv() {
                Ok(next) => next,
                Err(_) => break,
            }
        };
        let chunk = next?;
        // The lines without a credential go from the read to `to` as they lie; the open line is kept.
        redactor.push_to(&chunk, to)?;
        // Flushed so that the reader sees each piece as the command printed it.
        to.flush()?;
        let _full = recycle.try_send(chunk);
    }
    redactor.finish_to(to)?;
    to.flush()
}

/// Raises the capacity of `pipe` to [`CHUNK`] where the kernel allows (an unprivileged process up to
/// `/proc/sys/fs/pipe-max-size`, 1 MiB by default): fewer, larger reads, and a command that writes in bursts
/// waits less. A refusal leaves the pipe as it is.
fn widen(pipe: &std::fs::File) {
    let size = libc::c_int::try_from(CHUNK).unwrap_or(libc::c_int::MAX);
    let _widened = nix::fcntl::fcntl(pipe, nix::fcntl::FcntlArg::F_SETPIPE_SZ(size));
}
