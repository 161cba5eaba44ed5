//! The redactor of two streams that a reader sees joined: a command's stdout and stderr, as a terminal or a coding
//! agent shows them.

use std::collections::VecDeque;
use std::io::Write;

use crate::redact::{Redactor, Sink, marker};

/// The redactor of two streams (a command's stdout and stderr) whose reader sees them joined, in the order their
/// bytes came. A credential split between them (`ghp_` and half a token on one, the rest on the other; a key's
/// lines alternating between them) is whole only in that joined sequence, so the joined sequence is what is
/// scanned: one [`Redactor`] over the bytes of both in the order they were taken, each byte then written to the
/// stream it came from. A credential that covers bytes of both is replaced by its marker on each; the bytes of
/// either that hold none are written as they lie. What is held back and when it goes out are the
/// [`Redactor`]'s: a line (of the joined sequence) until its end, a private-key block until its end line, a
/// value until its line has come.
///
/// An output that fails is given nothing more, and [`failed`](Self::failed) says so; the other goes on.
///
/// ```
/// use agent_secrets::Interleaved;
///
/// let mut joined = Interleaved::new();
/// let (mut out, mut err) = (Vec::new(), Vec::new());
/// joined.push_to(0, b"token: ghp_4fJ9kQ2mZx7LwP1n", &mut [&mut out, &mut err]);
/// joined.push_to(1, b"R8sT3vY6bC0dE5gH2jK7\n", &mut [&mut out, &mut err]);
/// joined.finish_to(&mut [&mut out, &mut err]);
/// assert_eq!(out, b"token: [redacted: GitHub token]");
/// assert_eq!(err, b"[redacted: GitHub token]\n");
/// ```
#[derive(Debug, Default)]
pub struct Interleaved {
    redactor: Redactor,
    /// Whose bytes the joined sequence holds: for each run of one stream's bytes, where it starts and ends
    /// (offsets into the joined sequence) and the stream; from the first run the redactor may still write.
    runs: VecDeque<(u64, u64, usize)>,
    /// How many bytes the joined sequence has taken.
    taken: u64,
    /// Which outputs failed.
    failed: [bool; 2],
    /// Bytes of one stream that wait because the other stopped inside a word that may be a credential's start:
    /// the stream and its bytes.
    waiting: Option<(usize, Vec<u8>)>,
}

/// How many characters of a credential (letters, digits, `_-+/=.`) end what a stream printed for it to count as
/// stopped inside a word: a provider's prefix (`ghp_`, `AKIA`, `xoxb`) is that long.
const WORD_MIN: usize = 4;

/// The most bytes that wait for the other stream: more are taken as they came.
const WAITING_MAX: usize = 64 << 10;

/// The outputs, with whose bytes each offset of the joined sequence is.
struct Demux<'a, 'w> {
    runs: &'a VecDeque<(u64, u64, usize)>,
    outs: &'a mut [&'w mut dyn Write; 2],
    failed: &'a mut [bool; 2],
}

impl Demux<'_, '_> {
    /// Writes `bytes` to the output `stream`, unless it failed (which it is then marked as).
    fn write(&mut self, stream: usize, bytes: &[u8]) {
        let (Some(out), Some(failed)) = (self.outs.get_mut(stream), self.failed.get_mut(stream)) else {
            return;
        };
        if !*failed && out.write_all(bytes).is_err() {
            *failed = true;
        }
    }

    /// The runs that hold the joined sequence's bytes from `start` to `end`: each stream's part, in order.
    fn parts(&self, start: u64, end: u64) -> Vec<(u64, u64, usize)> {
        self.runs
            .iter()
            .filter_map(|&(run_start, run_end, stream)| {
                let (from, to) = (start.max(run_start), end.min(run_end));
                (from < to).then_some((from, to, stream))
            })
            .collect()
    }
}

impl Sink for Demux<'_, '_> {
    fn text(&mut self, bytes: &[u8], at: u64) -> std::io::Result<()> {
        let end = at + u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        for (from, to, stream) in self.parts(at, end) {
            let range = usize::try_from(from - at).unwrap_or(usize::MAX)
                ..usize::try_from(to - at).unwrap_or(usize::MAX);
            if let Some(part) = bytes.get(range) {
                self.write(stream, part);
            }
        }
        Ok(())
    }

    fn marker(&mut self, kind: &str, start: u64, end: u64) -> std::io::Result<()> {
        let mut marked = [false; 2];
        for (_, _, stream) in self.parts(start, end) {
            if let Some(slot) = marked.get_mut(stream)
                && !*slot
            {
                *slot = true;
                self.write(stream, marker(kind).as_bytes());
            }
        }
        Ok(())
    }
}

/// How much of each side of where two pieces meet is scanned to choose their order: more than a token, a
/// secret's assignment or a key's line.
const JUNCTION: usize = 1 << 10;

/// How many credentials run across where `before` meets `after`, scanned joined ([`JUNCTION`] bytes of
/// `after`).
fn meeting(before: &[u8], after: &[u8]) -> usize {
    if before.is_empty() || after.is_empty() {
        return 0;
    }
    let mut joined = before.to_vec();
    joined.extend_from_slice(after.get(..after.len().min(JUNCTION)).unwrap_or_default());
    crate::scan::scan(&joined)
        .iter()
        .filter(|finding| finding.start < before.len() && finding.end > before.len())
        .count()
}

impl Interleaved {
    /// A redactor for two new streams.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the next bytes of `stream` (0 or 1; any other number is 1) and writes to `outs` (stream 0's output,
    /// then stream 1's) what can be written now, redacted, each byte to its stream's output.
    ///
    /// When the other stream's last bytes end inside a word that may be a credential's start (`ghp_4fJ9`), these
    /// wait, until the other stream's next bytes or an idle flush. The other stream's next bytes and these are
    /// then taken in the order in which a credential runs across where they meet (as
    /// [`push_both_to`](Self::push_both_to) takes them), so that a credential continued on its own stream with
    /// these between is found as well as one continued on this stream; an idle flush takes them as they came.
    pub fn push_to(&mut self, stream: usize, input: &[u8], outs: &mut [&mut dyn Write; 2]) {
        let stream = stream.min(1);
        if let Some((waiting_stream, mut waiting)) = self.waiting.take() {
            if waiting_stream == stream {
                waiting.extend_from_slice(input);
                if waiting.len() <= WAITING_MAX {
                    self.waiting = Some((stream, waiting));
                } else {
                    self.take(stream, &waiting, outs);
                }
            } else {
                self.in_order((waiting_stream, &waiting), (stream, input), outs);
            }
            return;
        }
        if self.stopped_in_a_word(stream) {
            self.waiting = Some((stream, input.to_vec()));
            return;
        }
        self.take(stream, input, outs);
    }

    /// Whether the bytes taken last are the other stream's than `stream`'s and end inside a word of a
    /// credential's characters, [`WORD_MIN`] of them at least.
    fn stopped_in_a_word(&self, stream: usize) -> bool {
        let tail = self.redactor.held_tail(WORD_MIN);
        self.runs.back().is_some_and(|(_, _, last)| *last != stream)
            && tail.len() == WORD_MIN
            && tail.iter().all(|byte| {
                byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'+' | b'/' | b'=' | b'.')
            })
    }

    /// Takes the bytes that wait as they came.
    fn release(&mut self, outs: &mut [&mut dyn Write; 2]) {
        if let Some((stream, waiting)) = self.waiting.take() {
            self.take(stream, &waiting, outs);
        }
    }

    /// Takes `a` and `b` (each a stream and its bytes) in the order in which more credentials run across where
    /// one piece meets the next (the bytes held and the first piece, the first piece and the second); `a` first
    /// when both orders make as many.
    fn in_order(&mut self, a: (usize, &[u8]), b: (usize, &[u8]), outs: &mut [&mut dyn Write; 2]) {
        let held = self.redactor.held_tail(JUNCTION);
        let across = |first: &[u8], second: &[u8]| {
            meeting(held, first)
                + meeting(
                    first
                        .get(first.len().saturating_sub(JUNCTION)..)
                        .unwrap_or_default(),
                    second,
                )
        };
        let (first, second) = if across(b.1, a.1) > across(a.1, b.1) {
            (b, a)
        } else {
            (a, b)
        };
        self.take(first.0, first.1, outs);
        self.take(second.0, second.1, outs);
    }

    /// Takes the next bytes of `stream` into the joined sequence.
    fn take(&mut self, stream: usize, input: &[u8], outs: &mut [&mut dyn Write; 2]) {
        let start = self.taken;
        self.taken += u64::try_from(input.len()).unwrap_or(u64::MAX);
        match self.runs.back_mut() {
            Some((_, end, last)) if *last == stream => *end = self.taken,
            _ => self.runs.push_back((start, self.taken, stream)),
        }
        let mut demux = Demux {
            runs: &self.runs,
            outs,
            failed: &mut self.failed,
        };
        // The demultiplexer does not fail: an output that does is marked.
        let _written = self.redactor.push_sink(input, &mut demux);
        self.forget();
    }

    /// Takes bytes of both streams that came at once (both pipes were ready when looked at), whose order is not
    /// known: they are taken in the order in which more credentials run across where one piece meets the next
    /// (the bytes held and the first piece, the first piece and the second), so that a credential that either
    /// order makes whole is redacted; stream 0's first when both make as many.
    pub fn push_both_to(&mut self, zero: &[u8], one: &[u8], outs: &mut [&mut dyn Write; 2]) {
        // Bytes that waited go before their stream's new ones.
        let (mut zero, mut one) = (std::borrow::Cow::Borrowed(zero), std::borrow::Cow::Borrowed(one));
        if let Some((stream, mut waiting)) = self.waiting.take() {
            let new = if stream == 0 { &mut zero } else { &mut one };
            waiting.extend_from_slice(new);
            *new = std::borrow::Cow::Owned(waiting);
        }
        self.in_order((0, &zero), (1, &one), outs);
    }

    /// Whether an idle flush would write something now: bytes that wait for the other stream, or what
    /// [`Redactor::holds`].
    pub fn holds(&self) -> bool {
        self.waiting.is_some() || self.redactor.holds()
    }

    /// Writes out, redacted, what is held back: both streams are idle ([`Redactor::flush_to`]); bytes that waited
    /// for the other stream are taken first, as they came.
    pub fn flush_to(&mut self, outs: &mut [&mut dyn Write; 2]) {
        self.release(outs);
        let mut demux = Demux {
            runs: &self.runs,
            outs,
            failed: &mut self.failed,
        };
        let _written = self.redactor.flush_sink(&mut demux);
        self.forget();
    }

    /// Writes out the rest: both streams have ended.
    pub fn finish_to(mut self, outs: &mut [&mut dyn Write; 2]) {
        self.release(outs);
        let mut demux = Demux {
            runs: &self.runs,
            outs,
            failed: &mut self.failed,
        };
        let _written = self.redactor.finish_sink(&mut demux);
    }

    /// Whether the output of `stream` failed: it is given nothing more.
    pub fn failed(&self, stream: usize) -> bool {
        self.failed.get(stream.min(1)).copied().unwrap_or(true)
    }

    /// Forgets the runs of bytes the redactor will not write again.
    fn forget(&mut self) {
        let settled = self.redactor.settled();
        while self.runs.front().is_some_and(|(_, end, _)| *end <= settled) {
            self.runs.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7";

    /// Both outputs after `pieces` (each a stream and its bytes), with an idle flush after each when `idle`.
    fn joined(pieces: &[(usize, &[u8])], idle: bool) -> (String, String) {
        let mut redactor = Interleaved::new();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        for (stream, bytes) in pieces {
            redactor.push_to(*stream, bytes, &mut [&mut out, &mut err]);
            if idle {
                redactor.flush_to(&mut [&mut out, &mut err]);
            }
        }
        redactor.finish_to(&mut [&mut out, &mut err]);
        (String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
    }

    #[test]
    fn a_token_split_between_the_streams_is_redacted_on_both_wherever_it_is_cut() {
        let text = format!("ci {TOKEN} done\n");
        let start = 3;
        for cut in start + 1..start + TOKEN.len() {
            let (a, b) = text.as_bytes().split_at(cut);
            for (first, second) in [(0, 1), (1, 0)] {
                for idle in [false, true] {
                    let (out, err) = joined(&[(first, a), (second, b)], idle);
                    let both = format!("{out}{err}");
                    // No piece of the token long enough to tell shows on either.
                    for piece in TOKEN.as_bytes().windows(8) {
                        let piece = std::str::from_utf8(piece).unwrap();
                        assert!(!both.contains(piece), "cut {cut}, idle {idle}: {out:?} {err:?}");
                    }
                    assert!(out.contains("[redacted: GitHub token]"), "{out:?}");
                    assert!(err.contains("[redacted: GitHub token]"), "{err:?}");
                }
            }
        }
    }

    #[test]
    fn a_keys_lines_alternating_between_the_streams_are_redacted_on_both() {
        let lines = [
            "-----BEGIN OPENSSH PRIVATE KEY-----\n",
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n",
            "QyNTUxOQAAACAy86j+kTDgMVcmU6KEMI/YJP1aI4w5IRtgLAvTHcMixAAAAIgHiXtaB4l7\n",
            "/VojjDkhG2AsC9MdwyLEAAAAC3NzaC1lZDI1NTE5AAAAIDLzqP6RMOAxVyZTooQwj9gk\n",
            "-----END OPENSSH PRIVATE KEY-----\n",
        ];
        for first in [0, 1] {
            for idle in [false, true] {
                let pieces: Vec<(usize, &[u8])> = lines
                    .iter()
                    .enumerate()
                    .map(|(at, line)| ((first + at) % 2, line.as_bytes()))
                    .chain([(first, &b"after\n"[..])])
                    .collect();
                let (out, err) = joined(&pieces, idle);
                for body in &lines[1..4] {
                    let body = &body[..20];
                    assert!(!out.contains(body) && !err.contains(body), "{out:?} {err:?}");
                }
                assert!(out.contains("after\n") || err.contains("after\n"));
            }
        }
    }

    #[test]
    fn output_without_a_credential_reaches_each_stream_as_it_was() {
        let pieces: [(usize, &[u8]); 6] = [
            (0, b"name? "),
            (1, b"warning: slow\nprogress 10%"),
            (0, b"bob\nline two\n"),
            (1, b"\rprogress 100%\n"),
            (0, b"password: changeme\n"),
            (1, b"\xff\x00binary"),
        ];
        for idle in [false, true] {
            let (out, err) = {
                let mut redactor = Interleaved::new();
                let (mut out, mut err) = (Vec::new(), Vec::new());
                for (stream, bytes) in pieces {
                    redactor.push_to(stream, bytes, &mut [&mut out, &mut err]);
                    if idle {
                        redactor.flush_to(&mut [&mut out, &mut err]);
                    }
                }
                redactor.finish_to(&mut [&mut out, &mut err]);
                (out, err)
            };
            assert_eq!(out, b"name? bob\nline two\npassword: changeme\n");
            assert_eq!(err, b"warning: slow\nprogress 10%\rprogress 100%\n\xff\x00binary");
        }
    }

    #[test]
    fn a_credential_on_one_stream_is_redacted_there_alone() {
        let token_line = format!("export GH={TOKEN}\n");
        let (out, err) = joined(&[(0, b"build "), (1, token_line.as_bytes()), (0, b"ok\n")], false);
        assert_eq!(out, "build ok\n");
        assert_eq!(err, "export GH=[redacted: GitHub token]\n");
    }

    #[test]
    fn pieces_of_both_streams_that_came_at_once_are_taken_in_the_order_that_makes_a_credential() {
        let (head, tail) = TOKEN.split_at(12);
        // The token's start was on stdout; its rest on stderr and more of stdout came before they were read.
        let mut redactor = Interleaved::new();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        redactor.push_to(0, format!("ci {head}").as_bytes(), &mut [&mut out, &mut err]);
        redactor.flush_to(&mut [&mut out, &mut err]);
        redactor.push_both_to(
            b"after
",
            format!(
                "{tail} done
"
            )
            .as_bytes(),
            &mut [&mut out, &mut err],
        );
        redactor.finish_to(&mut [&mut out, &mut err]);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "ci [redacted: GitHub token]after
"
        );
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "[redacted: GitHub token] done
"
        );
        // A token that one stream goes on with stays whole when the other stream's bytes came at once.
        let mut redactor = Interleaved::new();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        redactor.push_to(1, format!("ci {head}").as_bytes(), &mut [&mut out, &mut err]);
        redactor.push_both_to(
            b"progress 10%
",
            format!(
                "{tail} done
"
            )
            .as_bytes(),
            &mut [&mut out, &mut err],
        );
        redactor.finish_to(&mut [&mut out, &mut err]);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "progress 10%
"
        );
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "ci [redacted: GitHub token] done
"
        );
    }

    #[test]
    fn a_token_continued_on_its_own_stream_after_the_others_bytes_is_redacted() {
        // The other stream's bytes wait while the first goes on within the idle time.
        let (head, tail) = TOKEN.split_at(12);
        let (out, err) = joined(
            &[
                (0, format!("ci {head}").as_bytes()),
                (1, b"warning: slow\n"),
                (0, format!("{tail} done\n").as_bytes()),
            ],
            false,
        );
        assert_eq!(out, "ci [redacted: GitHub token] done\n");
        assert_eq!(err, "warning: slow\n");
        // Bytes that wait are taken as they came at an idle flush, and at the end.
        let mut redactor = Interleaved::new();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        redactor.push_to(0, b"name? abcd", &mut [&mut out, &mut err]);
        redactor.push_to(1, b"warning\n", &mut [&mut out, &mut err]);
        assert!(err.is_empty() && redactor.holds());
        redactor.flush_to(&mut [&mut out, &mut err]);
        assert_eq!(err, b"warning\n");
        redactor.push_to(1, b"more\n", &mut [&mut out, &mut err]);
        redactor.finish_to(&mut [&mut out, &mut err]);
        assert_eq!(
            (out.as_slice(), err.as_slice()),
            (&b"name? abcd"[..], &b"warning\nmore\n"[..])
        );
    }

    /// A writer that fails every write.
    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn an_output_that_fails_is_given_nothing_more_and_the_other_goes_on() {
        let mut redactor = Interleaved::new();
        let (mut closed, mut err) = (Closed, Vec::new());
        redactor.push_to(0, b"one\n", &mut [&mut closed, &mut err]);
        redactor.push_to(1, b"two\n", &mut [&mut closed, &mut err]);
        redactor.finish_to(&mut [&mut closed, &mut err]);
        assert_eq!(err, b"two\n");
        let mut redactor = Interleaved::new();
        redactor.push_to(0, b"one\n", &mut [&mut closed, &mut err]);
        assert!(redactor.failed(0) && !redactor.failed(1));
    }
}
