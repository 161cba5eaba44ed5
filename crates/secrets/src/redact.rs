//! The redactor: a command's output with each credential replaced by a marker naming its kind, streamed.

use std::borrow::Cow;

use crate::scan::{Finding, scan};

/// Replaces each credential of `text` with `[redacted: <kind>]`; borrows `text` when it holds none.
pub fn redact(text: &[u8]) -> Cow<'_, [u8]> {
    let findings = scan(text);
    if findings.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = Vec::with_capacity(text.len());
    write_redacted(text, &findings, &mut out);
    Cow::Owned(out)
}

/// A stream's redactor. Every stream is scanned line by line (lines of bytes: binary output too, whose bytes pass
/// unchanged but for the credentials in them, since a NUL byte printed first must not turn the scan off), so that
/// a credential split across two reads is still found. A
/// line is held until its end arrives (or [`flush`](Self::flush) is called when the stream is idle), a private-key
/// block until its end line, and a line longer than 64 KiB is emitted in pieces, each holding back its last 4 KiB
/// for the next; nothing else is buffered.
///
/// ```
/// use agent_secrets::Redactor;
///
/// let mut redactor = Redactor::new();
/// let mut out = Vec::new();
/// redactor.push(b"key: npm_Xk3pQ9vL2m", &mut out);
/// redactor.push(b"R7tZ1wB5nC8yH4jF6dG0sA2eQu\n", &mut out);
/// redactor.finish(&mut out);
/// assert_eq!(out, b"key: [redacted: npm token]\n");
/// ```
#[derive(Debug, Default)]
pub struct Redactor {
    pending: Vec<u8>,
}

/// The longest piece of a line held back while its end has not arrived.
pub(crate) const MAX_PENDING: usize = 64 << 10;
/// How much of a long line's piece is kept for the next, so that a credential across the boundary is whole in one.
pub(crate) const OVERLAP: usize = 4 << 10;

impl Redactor {
    /// A redactor for a new stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the next bytes of the stream and appends to `out` what can be written now, redacted.
    pub fn push(&mut self, input: &[u8], out: &mut Vec<u8>) {
        self.pending.extend_from_slice(input);
        self.emit_ready(out);
    }

    /// Whether bytes are held back, waiting for the end of their line.
    pub fn holds(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Writes out, redacted, what is held back (the stream is idle: a prompt without a line end must show).
    pub fn flush(&mut self, out: &mut Vec<u8>) {
        if self.pending.is_empty() {
            return;
        }
        let findings = scan(&self.pending);
        write_redacted(&self.pending, &findings, out);
        self.pending.clear();
    }

    /// Writes out the rest at the end of the stream.
    pub fn finish(mut self, out: &mut Vec<u8>) {
        self.flush(out);
    }

    /// Writes out the complete lines held, but not a credential that runs past them or a private-key block whose
    /// end line has not arrived.
    fn emit_ready(&mut self, out: &mut Vec<u8>) {
        let pending = &self.pending;
        let overlong = pending.len() > MAX_PENDING;
        let mut cut = pending
            .iter()
            .rposition(|byte| *byte == b'\n')
            .map_or(0, |newline| newline + 1);
        if overlong {
            cut = cut.max(pending.len() - OVERLAP);
        }
        if cut == 0 {
            return;
        }
        let findings = scan(pending);
        for finding in &findings {
            let open_block = pending
                .get(finding.start..finding.end)
                .is_some_and(|held| held.starts_with(b"-----BEGIN") && !contains(held, b"-----END"));
            let straddles = finding.start < cut && finding.end > cut;
            if finding.start < cut && (straddles || open_block) && !(overlong && finding.start == 0) {
                cut = finding.start;
                break;
            }
        }
        let Some(ready) = pending.get(..cut) else {
            return;
        };
        let inside: Vec<Finding> = findings
            .into_iter()
            .filter(|finding| finding.start < cut)
            .map(|finding| Finding {
                end: finding.end.min(cut),
                ..finding
            })
            .collect();
        write_redacted(ready, &inside, out);
        self.pending.drain(..cut);
    }
}

/// Appends `text` to `out` with each finding replaced by its marker.
fn write_redacted(text: &[u8], findings: &[Finding], out: &mut Vec<u8>) {
    let mut at = 0;
    for finding in findings {
        if let Some(before) = text.get(at..finding.start) {
            out.extend_from_slice(before);
        }
        out.extend_from_slice(b"[redacted: ");
        out.extend_from_slice(finding.kind.as_bytes());
        out.push(b']');
        at = finding.end;
    }
    if let Some(rest) = text.get(at..) {
        out.extend_from_slice(rest);
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7";

    fn stream(chunks: &[&[u8]]) -> Vec<u8> {
        let mut redactor = Redactor::new();
        let mut out = Vec::new();
        for chunk in chunks {
            redactor.push(chunk, &mut out);
        }
        redactor.finish(&mut out);
        out
    }

    #[test]
    fn a_token_split_at_every_byte_is_still_redacted() {
        let text = format!("a line\nexport GH={TOKEN} # mine\nlast\n");
        for split in 1..text.len() {
            let (a, b) = text.as_bytes().split_at(split);
            let out = String::from_utf8(stream(&[a, b])).unwrap();
            assert_eq!(
                out, "a line\nexport GH=[redacted: GitHub token] # mine\nlast\n",
                "split at {split}"
            );
        }
    }

    #[test]
    fn a_private_key_block_across_reads_is_redacted_whole() {
        let block = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACBqJmS1vWc3nN0y0sbm9uZQAAAAAAAAABAAAA\n-----END OPENSSH PRIVATE KEY-----\n";
        let text = format!("before\n{block}after\n");
        let lines: Vec<&[u8]> = text.as_bytes().split_inclusive(|b| *b == b'\n').collect();
        let out = String::from_utf8(stream(&lines)).unwrap();
        assert_eq!(out, "before\n[redacted: private key]\nafter\n");
    }

    #[test]
    fn binary_output_passes_byte_for_byte_but_for_its_credentials() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        assert_eq!(stream(&[&bytes[..100], &bytes[100..]]), bytes);
        // A NUL byte (or bytes that are not UTF-8) printed first does not turn the scan off.
        for first in [&b"\0"[..], &b"\xff\n"[..]] {
            let mut with_token = first.to_vec();
            with_token.extend_from_slice(format!("key={TOKEN}\n").as_bytes());
            let out = stream(&[first, &with_token[first.len()..]]);
            assert!(!contains(&out, TOKEN.as_bytes()), "{out:?}");
            assert!(contains(&out, b"[redacted: GitHub token]"), "{out:?}");
        }
    }

    #[test]
    fn a_long_line_is_emitted_in_pieces_and_a_token_at_a_boundary_is_found() {
        let filler = "a".repeat(MAX_PENDING + 10);
        let text = format!("{filler} {TOKEN} {filler}\n");
        let chunks: Vec<&[u8]> = text.as_bytes().chunks(4096).collect();
        let out = String::from_utf8(stream(&chunks)).unwrap();
        let expected = format!("{filler} [redacted: GitHub token] {filler}\n");
        assert!(
            out == expected,
            "the token is not redacted alone: {} bytes out",
            out.len()
        );
    }
}
