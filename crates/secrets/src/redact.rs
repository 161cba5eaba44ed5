//! The redactor: a command's output with each credential replaced by a marker naming its kind, streamed.

use std::borrow::Cow;
use std::io::Write;
use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};

use crate::rules::{BASE64_PEM_MAGIC, OPENSSH_KEY_MAGIC};
use crate::scan::{Finding, Located, opens_next_line, scan, scan_located};

/// Replaces each credential of `text` with `[redacted: <kind>]`; borrows `text` when it holds none.
pub fn redact(text: &[u8]) -> Cow<'_, [u8]> {
    let findings = scan(text);
    if findings.is_empty() {
        return Cow::Borrowed(text);
    }
    Cow::Owned(redact_found(text, &findings))
}

/// `text` with each of `findings` (a [`scan`] of it) replaced by its marker.
pub(crate) fn redact_found(text: &[u8], findings: &[Finding]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    // Writing to a vector does not fail.
    let _written = write_redacted(text, findings, 0, 0, &mut Plain(&mut out));
    out
}

/// [`redact`] of a text: each credential replaced with `[redacted: <kind>]`; borrows `text` when it holds none.
pub fn redact_str(text: &str) -> Cow<'_, str> {
    match redact(text.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        // A credential's bounds fall on ASCII bytes but where a value is cut at its longest; a character cut
        // there is replaced, never kept in part.
        Cow::Owned(bytes) => Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()),
    }
}

/// Replaces each credential in the strings of `value` (a tool call's input) with `[redacted: <kind>]`, and says
/// whether any was. Each string is scanned as the text it is (a file's content with its real line ends, so that
/// a private-key block is found whole), and a member's string also after its name as `name: value`, so that
/// `{"password": "…"}` is the assignment it would be in a file. The structure is kept: the value is still the
/// same JSON with the same members.
pub fn redact_json(value: &mut serde_json::Value) -> bool {
    redact_member(None, value)
}

fn redact_member(name: Option<&str>, value: &mut serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::String(text) => {
            let redacted = match name {
                Some(name) => redact_named(name, text),
                None => match redact_str(text) {
                    Cow::Borrowed(_) => None,
                    Cow::Owned(redacted) => Some(redacted),
                },
            };
            let changed = redacted.is_some();
            if let Some(redacted) = redacted {
                *text = redacted;
            }
            changed
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, item| redact_member(None, item) | changed),
        Value::Object(members) => {
            let mut changed = false;
            for (name, member) in members.iter_mut() {
                changed |= redact_member(Some(name), member);
            }
            // A credential used as a name (a header map keyed by token) is redacted too.
            let named: Vec<String> = members
                .keys()
                .filter(|name| matches!(redact_str(name), Cow::Owned(_)))
                .cloned()
                .collect();
            for name in named {
                if let Some(member) = members.remove(&name) {
                    members.insert(redact_str(&name).into_owned(), member);
                    changed = true;
                }
            }
            changed
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// `text`, the value of the member `name`, redacted as the line `name: text` would be; `None` when it holds
/// nothing.
fn redact_named(name: &str, text: &str) -> Option<String> {
    let line = format!("{name}: {text}");
    let offset = line.len() - text.len();
    let findings: Vec<Finding> = scan(line.as_bytes())
        .into_iter()
        .filter(|finding| finding.end > offset)
        .map(|finding| Finding {
            start: finding.start.saturating_sub(offset),
            end: finding.end - offset,
            ..finding
        })
        .collect();
    if findings.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(text.len());
    // Writing to a vector does not fail.
    let _written = write_redacted(text.as_bytes(), &findings, 0, 0, &mut Plain(&mut out));
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// A stream's redactor. Every stream is scanned line by line (lines of bytes: binary output too, whose bytes pass
/// unchanged but for the credentials in them, since a NUL byte printed first must not turn the scan off), so that
/// a credential split across two reads is still found. A
/// line is held until its end arrives (or [`flush`](Self::flush) is called when the stream is idle), a private-key
/// block until its end line (or a byte no key holds, or while its last line is still open), a line that leaves a
/// secret's value to the next (`password: |`, `"token":`) until that line has come, and a line longer than 64 KiB
/// is emitted in pieces, each
/// holding back its last 4 KiB for the next; nothing else is buffered. What an idle stream's flush writes of an open
/// line stays the context of the line's scan (a name written early still makes the value that follows an
/// assignment), and the flush keeps back the line's last word (its last 4 KiB, when longer) and a credential that
/// has begun and may still be completing (a secret's quoted value before its closing quote, a URL whose authority
/// is open): a credential printed a few bytes at a time, pausing between them, is whole in one scan when it ends. [`push_to`](Self::push_to) writes the lines
/// of a read that hold no credential straight from the read, copying only the open line it keeps.
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
    /// The open line's bytes: its first [`written`](Self::written) were written by an idle flush and are kept as
    /// the scan's context; the rest wait.
    pending: Vec<u8>,
    written: usize,
    /// The stream's offset of the first byte of `pending` (of the next byte taken, when nothing is held).
    base: u64,
}

/// The longest piece of a line held back while its end has not arrived.
pub(crate) const MAX_PENDING: usize = 64 << 10;
/// The longest end line of a private-key block (`-----END` and up to 20 characters, ` PRIVATE KEY BLOCK-----`).
const END_LINE_MAX: usize = 64;
/// How much of a long line's piece is kept for the next, so that a credential across the boundary is whole in one.
pub(crate) const OVERLAP: usize = 4 << 10;
/// The longest piece of the last word an idle flush keeps back: of a longer one, its last bytes as many.
const HELD_WORD_MAX: usize = 4 << 10;

/// How far back from the open line's end an [`OPEN`] credential is looked for: more than its longest
/// (a name with its qualifiers, a value of 512 bytes; a URL's scheme, user and password, 410).
const OPEN_REACH: usize = 2 << 10;

/// A constant pattern of this module, compiled as the scanner's rules are (bytes, no Unicode classes).
fn constant(pattern: &str) -> Regex {
    #[expect(clippy::expect_used, reason = "a constant pattern; the tests compile it")]
    RegexBuilder::new(pattern)
        .unicode(false)
        .build()
        .expect("a constant pattern of the redactor compiles")
}

/// The start of a credential that runs to the end of the open line and may still be completing there, which an
/// idle flush keeps back: the value of a secret's assignment that has begun (a quoted one before its closing
/// quote, spaces included; a bare one), and a URL from its scheme while its authority is open (no space,
/// and no `/` or `@` before the password's `:`; the password may hold either). Whatever precedes it.
static OPEN: LazyLock<Regex> = LazyLock::new(|| {
    constant(concat!(
        r#"(?:"#,
        crate::rules::assignment_head!(),
        r#"(?P<value>"[^"\n]{0,256}|'[^'\n]{0,256}|`[^`\n]{0,256}|["']?[^\s"',;`]{1,512})"#,
        r#"|(?P<url>[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s/:@'"<>]{0,128}(?::[^\s'"<>]{0,256})?))\z"#,
    ))
});
/// A line that leaves a secret's value to the next line (`password: |`, `"token":`), followed by blank lines at
/// most: what the next line's scan needs before it.
static NEXT_OPEN: LazyLock<Regex> =
    LazyLock::new(|| constant(concat!(crate::rules::next_line_head!(), r"\z")));

/// An XML start tag named as a secret that ends its line, followed by blank lines at most: as [`NEXT_OPEN`].
static NEXT_OPEN_XML: LazyLock<Regex> =
    LazyLock::new(|| constant(concat!(crate::rules::xml_next_line_head!(), r"\z")));

/// Where the complete lines of `text` before `cut` stop being ready: before the last line that is not blank when
/// it leaves a secret's value to the next line ([`NEXT_OPEN`]), which has not come, so that the value is scanned
/// with its name; `cut` otherwise.
fn before_an_open_value(text: &[u8], cut: usize) -> usize {
    let mut end = cut;
    // The blank lines the rule reads past, and the line before them.
    for _ in 0..=9 {
        let Some(before) = end.checked_sub(1).and_then(|last| text.get(..last)) else {
            return cut;
        };
        let start = memchr::memrchr(b'\n', before).map_or(0, |newline| newline + 1);
        let line = before.get(start..).unwrap_or_default();
        if line.iter().all(u8::is_ascii_whitespace) {
            end = start;
            continue;
        }
        let rest = text.get(start..cut).unwrap_or_default();
        let held = opens_next_line(line) && (NEXT_OPEN.is_match(rest) || NEXT_OPEN_XML.is_match(rest));
        return if held { start } else { cut };
    }
    cut
}

/// A secret's value that has begun on the line after its name ([`NEXT_OPEN`]) and may still be completing there.
static OPEN_NEXT: LazyLock<Regex> = LazyLock::new(|| {
    constant(concat!(
        crate::rules::next_line_head!(),
        r#"(?:"#,
        crate::rules::line_prefix!(),
        r#")?[ \t]*(?P<next>"[^"\n]{0,256}|'[^'\n]{0,256}|[^\s][^\n]{0,511})\z"#
    ))
});

/// A secret's value that has begun on the line after an XML start tag named as a secret: as [`OPEN_NEXT`].
static OPEN_NEXT_XML: LazyLock<Regex> = LazyLock::new(|| {
    constant(concat!(
        crate::rules::xml_next_line_head!(),
        r#"(?:"#,
        crate::rules::line_prefix!(),
        r#")?[ \t]*(?P<next>[^\s][^\n]{0,511})\z"#
    ))
});

/// How much of what a flush wrote of an open line is kept as the context of its scan.
const CONTEXT_MAX: usize = 1 << 10;

impl Redactor {
    /// A redactor for a new stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the next bytes of the stream and appends to `out` what can be written now, redacted.
    pub fn push(&mut self, input: &[u8], out: &mut Vec<u8>) {
        // Writing to a vector does not fail.
        let _written = self.push_to(input, out);
    }

    /// Takes the next bytes of the stream and writes to `to` what can be written now, redacted. What holds no
    /// credential is written from `input` as it lies, in one piece up to the last line end; only the line still
    /// open at the end of `input` (or a private-key block, or a credential running past it) is kept.
    ///
    /// # Errors
    /// The first error of `to`; the bytes this call took are then lost to `to`.
    pub fn push_to<W: Write + ?Sized>(&mut self, input: &[u8], to: &mut W) -> std::io::Result<()> {
        self.push_sink(input, &mut Plain(to))
    }

    /// [`push_to`](Self::push_to) to a [`Sink`].
    pub(crate) fn push_sink(&mut self, input: &[u8], to: &mut dyn Sink) -> std::io::Result<()> {
        let mut input = input;
        if !self.pending.is_empty() {
            // The held line ends in this input: it is completed and written first, and the rest is taken where it
            // lies, unless something is still held after it (an open block, a credential running on), which the
            // rest then joins.
            let Some(newline) = memchr::memchr(b'\n', input) else {
                self.pending.extend_from_slice(input);
                return self.emit_pending(to);
            };
            let (head, rest) = input.split_at(newline + 1);
            self.pending.extend_from_slice(head);
            self.emit_pending(to)?;
            if !self.pending.is_empty() {
                self.pending.extend_from_slice(rest);
                return self.emit_pending(to);
            }
            input = rest;
        }
        let cut = emit_ready(input, 0, self.base, to)?;
        self.base += u64::try_from(cut).unwrap_or(u64::MAX);
        if let Some(rest) = input.get(cut..) {
            self.pending.extend_from_slice(rest);
        }
        Ok(())
    }

    /// Whether an idle flush would write something now: bytes held back, waiting for the end of their line,
    /// before the line's last word.
    pub fn holds(&self) -> bool {
        self.flushable() > self.written
    }

    /// Where an idle flush stops: before the open line's last word (whitespace ends a word), or before the last
    /// [`HELD_WORD_MAX`] bytes of a longer one, and before a credential that has begun and may still be
    /// completing ([`OPEN`]: a secret's assigned value whose end has not come, a URL whose authority is still
    /// open), all of which the rest of the line may turn into a finding.
    fn flushable(&self) -> usize {
        let word = self
            .pending
            .iter()
            .rev()
            .take_while(|byte| !byte.is_ascii_whitespace())
            .count();
        let end = self.pending.len() - word.min(HELD_WORD_MAX);
        let open = OPEN
            .captures_at(&self.pending, self.pending.len().saturating_sub(OPEN_REACH))
            .and_then(|captures| captures.name("value").or_else(|| captures.name("url")))
            .map_or(end, |open| open.start());
        let from = self.pending.len().saturating_sub(OPEN_REACH);
        let next = [&*OPEN_NEXT, &*OPEN_NEXT_XML]
            .iter()
            .filter_map(|open_next| open_next.captures_at(&self.pending, from))
            .filter_map(|captures| captures.name("next"))
            .map(|open| open.start())
            .min()
            .unwrap_or(end);
        end.min(open).min(next)
    }

    /// Writes out, redacted, what is held back (the stream is idle: a prompt without a line end must show).
    pub fn flush(&mut self, out: &mut Vec<u8>) {
        let _written = self.flush_to(out);
    }

    /// [`flush`](Self::flush) to a writer.
    ///
    /// # Errors
    /// The first error of `to`.
    pub fn flush_to<W: Write + ?Sized>(&mut self, to: &mut W) -> std::io::Result<()> {
        self.flush_sink(&mut Plain(to))
    }

    /// [`flush_to`](Self::flush_to) to a [`Sink`].
    pub(crate) fn flush_sink(&mut self, to: &mut dyn Sink) -> std::io::Result<()> {
        let end = self.flushable();
        if end <= self.written {
            return Ok(());
        }
        // The whole open line is scanned, so that a credential that runs into the word kept back is not cut in
        // two: the flush stops before a finding that runs past its end.
        let findings = scan(&self.pending);
        let end = findings
            .iter()
            .filter(|finding| finding.start < end && finding.end > end)
            .map(|finding| finding.start.max(self.written))
            .min()
            .unwrap_or(end);
        let inside: Vec<Finding> = findings
            .into_iter()
            .filter(|finding| finding.start < end)
            .collect();
        let ready = self.pending.get(..end).unwrap_or_default();
        write_redacted(ready, &inside, self.written, self.base, to)?;
        self.written = end;
        // The context is bounded: what lies further back than that no longer goes with what follows.
        if self.written > CONTEXT_MAX {
            let drop = self.written - CONTEXT_MAX;
            self.pending.drain(..drop);
            self.written -= drop;
            self.base += u64::try_from(drop).unwrap_or(u64::MAX);
        }
        Ok(())
    }

    /// Writes out the rest at the end of the stream.
    pub fn finish(self, out: &mut Vec<u8>) {
        let _written = self.finish_to(out);
    }

    /// [`finish`](Self::finish) to a writer.
    ///
    /// # Errors
    /// The first error of `to`.
    pub fn finish_to<W: Write + ?Sized>(self, to: &mut W) -> std::io::Result<()> {
        self.finish_sink(&mut Plain(to))
    }

    /// [`finish_to`](Self::finish_to) to a [`Sink`].
    pub(crate) fn finish_sink(self, to: &mut dyn Sink) -> std::io::Result<()> {
        let findings = scan(&self.pending);
        write_redacted(&self.pending, &findings, self.written, self.base, to)
    }

    /// The last bytes held, at most `limit`: what the next bytes taken would be scanned after.
    pub(crate) fn held_tail(&self, limit: usize) -> &[u8] {
        self.pending
            .get(self.pending.len().saturating_sub(limit)..)
            .unwrap_or_default()
    }

    /// The stream's offset of the first byte this redactor may still write: what lies before has gone out.
    pub(crate) fn settled(&self) -> u64 {
        self.base
    }

    /// Writes out what is ready of the bytes held, and keeps the rest.
    fn emit_pending(&mut self, to: &mut dyn Sink) -> std::io::Result<()> {
        let cut = emit_ready(&self.pending, self.written, self.base, to)?;
        let drained = cut.min(self.pending.len());
        self.pending.drain(..drained);
        self.base += u64::try_from(drained).unwrap_or(u64::MAX);
        self.written = self.written.saturating_sub(cut);
        Ok(())
    }
}

/// Writes to `to` the complete lines of `text`, redacted, but not a credential that runs past them or a
/// private-key block whose end line has not arrived; returns how many bytes of `text` that took. A text longer
/// than [`MAX_PENDING`] without a line end is written but for its last [`OVERLAP`] bytes. The first `written` bytes
/// of `text` went out before (an idle flush's): they are scanned, not written again.
fn emit_ready(text: &[u8], written: usize, base: u64, to: &mut dyn Sink) -> std::io::Result<usize> {
    let overlong = text.len() > MAX_PENDING;
    let mut cut = memchr::memrchr(b'\n', text).map_or(0, |newline| newline + 1);
    if overlong {
        cut = cut.max(text.len() - OVERLAP);
    } else {
        cut = before_an_open_value(text, cut);
    }
    if cut == 0 {
        return Ok(0);
    }
    let located = scan_located(text);
    // The cut moves before every match it would split, the whole match: the name of an assignment goes with
    // its value (a piece that ends in `password=` would leave the value to the next piece, where no name
    // precedes it). Moving the cut back may split an earlier match, so this runs until none is split.
    loop {
        let split = located.iter().find(|Located { finding, from }| {
            // A block is open while its end line has not arrived and it runs to the end of what is held (within
            // an end line's length, which may have come in part): a block that stops before, at a byte no key
            // holds, is complete as far as it goes, and holding it would hold all that follows.
            let open_block = text.get(finding.start..finding.end).is_some_and(|held| {
                (held.starts_with(b"-----BEGIN")
                    || held.starts_with(OPENSSH_KEY_MAGIC.as_bytes())
                    || held.starts_with(BASE64_PEM_MAGIC.as_bytes()))
                    && !contains(held, b"-----END")
                    && (finding.end + END_LINE_MAX >= text.len()
                        || text
                            .get(finding.end..)
                            .is_some_and(|after| !after.contains(&b'\n')))
            });
            let straddles = *from < cut && finding.end > cut;
            (finding.start < cut && open_block) || straddles
        });
        match split {
            Some(Located { from, .. }) if !(overlong && *from == 0) && *from < cut => cut = *from,
            _ => break,
        }
    }
    let findings: Vec<Finding> = located.into_iter().map(|located| located.finding).collect();
    let Some(ready) = text.get(..cut) else {
        return Ok(0);
    };
    let inside: Vec<Finding> = findings
        .into_iter()
        .filter(|finding| finding.start < cut)
        .map(|finding| Finding {
            end: finding.end.min(cut),
            ..finding
        })
        .collect();
    if cut > written {
        write_redacted(ready, &inside, written, base, to)?;
    }
    Ok(cut)
}

/// Where a redactor's output goes: the bytes that pass and the markers that replace credentials, each with where
/// it lies in the stream (a byte offset from the stream's start), so that a sink that splits one stream into
/// several ([`Interleaved`](crate::Interleaved)) knows whose bytes each is.
pub(crate) trait Sink {
    /// `bytes`, as they lie, the stream's from offset `at` on.
    ///
    /// # Errors
    /// The output's.
    fn text(&mut self, bytes: &[u8], at: u64) -> std::io::Result<()>;

    /// The marker of a credential of `kind` that covered the stream's bytes from `start` to `end`.
    ///
    /// # Errors
    /// The output's.
    fn marker(&mut self, kind: &str, start: u64, end: u64) -> std::io::Result<()>;
}

/// A writer as a [`Sink`]: the bytes and markers in order.
struct Plain<'a, W: Write + ?Sized>(&'a mut W);

impl<W: Write + ?Sized> Sink for Plain<'_, W> {
    fn text(&mut self, bytes: &[u8], _at: u64) -> std::io::Result<()> {
        self.0.write_all(bytes)
    }

    fn marker(&mut self, kind: &str, _start: u64, _end: u64) -> std::io::Result<()> {
        self.0.write_all(marker(kind).as_bytes())
    }
}

/// The marker that replaces a credential of `kind`.
pub(crate) fn marker(kind: &str) -> String {
    format!("[redacted: {kind}]")
}

/// Writes `text` from `from` on to `to` with each finding replaced by its marker: the bytes between findings as
/// they lie. A finding that began before `from` (in what went out before) has the rest of it replaced. `base` is
/// the stream's offset of `text`'s first byte.
fn write_redacted(
    text: &[u8],
    findings: &[Finding],
    from: usize,
    base: u64,
    to: &mut dyn Sink,
) -> std::io::Result<()> {
    let offset = |at: usize| base + u64::try_from(at).unwrap_or(u64::MAX);
    let mut at = from;
    for finding in findings.iter().filter(|finding| finding.end > from) {
        if let Some(before) = text.get(at..finding.start.max(at))
            && !before.is_empty()
        {
            to.text(before, offset(at))?;
        }
        to.marker(finding.kind, offset(finding.start.max(at)), offset(finding.end))?;
        at = finding.end.max(at);
    }
    match text.get(at..) {
        Some(rest) if !rest.is_empty() => to.text(rest, offset(at)),
        _ => Ok(()),
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
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

    /// The stream of `chunks` with an idle flush after each, as the pump does when nothing more arrives in time.
    fn dribbled(chunks: &[&[u8]]) -> Vec<u8> {
        let mut redactor = Redactor::new();
        let mut out = Vec::new();
        for chunk in chunks {
            redactor.push(chunk, &mut out);
            redactor.flush(&mut out);
        }
        redactor.finish(&mut out);
        out
    }

    #[test]
    fn a_credential_printed_a_few_bytes_at_a_time_with_pauses_is_still_redacted() {
        let lines = [
            format!("api_token: {TOKEN}\n"),
            format!("export GH={TOKEN} # mine\n"),
            "password: Xk9pQ2mZ7wLr4tYv\n".to_owned(),
            TOKEN.to_owned(),
        ];
        for line in &lines {
            let expected = String::from_utf8(stream(&[line.as_bytes()])).unwrap();
            assert!(expected.contains("[redacted:"), "{expected}");
            // Every split into pieces of one to five bytes, each followed by an idle flush.
            for size in 1..=5 {
                let pieces: Vec<&[u8]> = line.as_bytes().chunks(size).collect();
                let out = String::from_utf8(dribbled(&pieces)).unwrap();
                assert!(
                    !out.contains("Xk9pQ2mZ7w") && !out.contains(&TOKEN[4..20]),
                    "{size}: {out}"
                );
                assert!(out.contains("[redacted:"), "{size}: {out}");
            }
            // And split in two at every byte.
            for split in 1..line.len() {
                let (a, b) = line.as_bytes().split_at(split);
                let out = String::from_utf8(dribbled(&[a, b])).unwrap();
                assert!(
                    !out.contains("Xk9pQ2mZ7w") && !out.contains(&TOKEN[4..20]),
                    "{split}: {out}"
                );
            }
        }
    }

    #[test]
    fn an_idle_flush_never_writes_the_start_of_a_credential_still_completing() {
        let filler = "0".repeat(5000);
        for (line, secrets) in [
            (
                "password = \"correct horse battery staple\"\n".to_owned(),
                &["correct", "horse", "battery"][..],
            ),
            (
                "token: 'Xk9p Qv7m Zr8k Lw2n'\n".to_owned(),
                &["Xk9p", "Qv7m", "Zr8k"][..],
            ),
            (
                "url: postgres://deploy:Xk9pQ2mZ7wLr4tYv@db.internal/app\n".to_owned(),
                &["Xk9pQ2"][..],
            ),
            (
                format!("{filler}=postgres://deploy:Xk9pQ2mZ7wLr4tYv@db.internal/app\n"),
                &["Xk9pQ2"][..],
            ),
            (format!("{filler}={TOKEN}\n"), &[&TOKEN[4..20]][..]),
        ] {
            let expected = String::from_utf8(stream(&[line.as_bytes()])).unwrap();
            assert!(expected.contains("[redacted:"), "{expected}");
            let mut cuts: Vec<Vec<&[u8]>> = (1..=5)
                .map(|size| line.as_bytes().chunks(size).collect())
                .collect();
            for split in 1..line.len() {
                let (a, b) = line.as_bytes().split_at(split);
                cuts.push(vec![a, b]);
            }
            for pieces in cuts {
                let out = String::from_utf8(dribbled(&pieces)).unwrap();
                for secret in secrets {
                    assert!(!out.contains(secret), "{} pieces: {out}", pieces.len());
                }
                assert!(out.contains("[redacted:"), "{out}");
            }
        }
        // A prompt that names a secret, whose value has not begun, still shows.
        let mut redactor = Redactor::new();
        let mut out = Vec::new();
        redactor.push(b"[sudo] password for app: ", &mut out);
        redactor.flush(&mut out);
        assert_eq!(out, b"[sudo] password for app: ");
    }

    #[test]
    fn an_idle_flush_shows_a_prompt_and_keeps_back_only_the_last_word() {
        let mut redactor = Redactor::new();
        let mut out = Vec::new();
        redactor.push(b"Continue? [y/N] ", &mut out);
        assert!(redactor.holds());
        redactor.flush(&mut out);
        assert_eq!(out, b"Continue? [y/N] ");
        assert!(!redactor.holds());
        redactor.push(b"y\nProgress 40%", &mut out);
        redactor.flush(&mut out);
        assert_eq!(out, b"Continue? [y/N] y\nProgress ");
        redactor.finish(&mut out);
        assert_eq!(out, b"Continue? [y/N] y\nProgress 40%");
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
    fn an_openssh_key_body_without_its_begin_line_is_held_and_redacted_whole() {
        let block = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACAy86j+kTDgMVcmU6KEMI/YJP1aI4w5IRtgLAvTHcMixAAAAIgHiXtaB4l7\n/VojjDkhG2AsC9MdwyLEAAAAAXgBAgME\n";
        for end in ["-----END OPENSSH PRIVATE KEY-----\n", ""] {
            let text = format!("before\n{block}{end}total 8\n");
            let lines: Vec<&[u8]> = text.as_bytes().split_inclusive(|b| *b == b'\n').collect();
            for out in [stream(&lines), dribbled(&lines)] {
                let out = String::from_utf8(out).unwrap();
                assert!(!out.contains("QyNTUx") && !out.contains("/Vojj"), "{out}");
                assert!(out.starts_with("before\n[redacted: private key]\n"), "{out}");
                assert!(out.ends_with("\ntotal 8\n"), "{out}");
            }
        }
    }

    #[test]
    fn a_token_cut_by_terminal_escapes_is_redacted_in_a_stream() {
        let line = "api_token: \x1b[01;31m\x1b[Kghp\x1b[m\x1b[K_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7\nnext\n";
        let expected = "api_token: \x1b[01;31m\x1b[K[redacted: GitHub token]\nnext\n";
        for split in 1..line.len() {
            let (a, b) = line.as_bytes().split_at(split);
            assert_eq!(String::from_utf8(stream(&[a, b])).unwrap(), expected, "{split}");
            let out = String::from_utf8(dribbled(&[a, b])).unwrap();
            assert!(!out.contains("R8sT3vY6"), "{split}: {out:?}");
        }
    }

    #[test]
    fn a_value_on_the_line_after_its_name_is_redacted_wherever_the_stream_is_cut() {
        // The name's line is held until the value's line has come, also across an idle flush; what follows is
        // written as it comes.
        for (text, expected) in [
            (
                "a\npassword: |\n\n  Xk9pQ2mZ7wLr4tYv\nb\n",
                "a\npassword: |\n\n  [redacted: password or secret assignment]\nb\n",
            ),
            (
                "{\n  \"token\":\n    \"Tq7vLm2XpR9kWz4N\"\n}\n",
                "{\n  \"token\":\n    \"[redacted: password or secret assignment]\"\n}\n",
            ),
            (
                "DB_PASSWORD: >-\n  correct horse battery staple\nnext\n",
                "DB_PASSWORD: >-\n  [redacted: password or secret assignment]\nnext\n",
            ),
        ] {
            assert_eq!(String::from_utf8(stream(&[text.as_bytes()])).unwrap(), expected);
            for split in 1..text.len() {
                let (a, b) = text.as_bytes().split_at(split);
                assert_eq!(String::from_utf8(stream(&[a, b])).unwrap(), expected, "{split}");
                let out = String::from_utf8(dribbled(&[a, b])).unwrap();
                for secret in ["Xk9pQ2", "Tq7vLm", "horse", "battery"] {
                    assert!(!out.contains(secret), "{split}: {out:?}");
                }
            }
        }
        // A line that ends with a name's `:` and holds no secret's name is not held.
        let mut redactor = Redactor::new();
        let mut out = Vec::new();
        redactor.push(b"services:\n", &mut out);
        assert_eq!(out, b"services:\n");
    }

    #[test]
    fn a_private_key_printed_by_grep_is_held_and_redacted_whole_wherever_the_stream_is_cut() {
        let text = "keys/id_ed25519:-----BEGIN OPENSSH PRIVATE KEY-----\n\
            keys/id_ed25519:b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n\
            keys/id_ed25519:QyNTUxOQAAACAy86j+kTDgMVcmU6KEMI/YJP1aI4w5IRtgLAvTHcMixAAAAIgHiXtaB4l7\n\
            keys/id_ed25519:-----END OPENSSH PRIVATE KEY-----\nsrc/main.rs:fn main() {}\n";
        let expected = "keys/id_ed25519:[redacted: private key]\nsrc/main.rs:fn main() {}\n";
        for split in 1..text.len() {
            let (a, b) = text.as_bytes().split_at(split);
            assert_eq!(String::from_utf8(stream(&[a, b])).unwrap(), expected, "{split}");
            let out = String::from_utf8(dribbled(&[a, b])).unwrap();
            assert!(
                !out.contains("QyNTUx") && !out.contains("b3Bl"),
                "{split}: {out:?}"
            );
        }
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

    #[test]
    fn a_long_lines_piece_never_ends_between_a_name_and_its_value() {
        // A line longer than the held limit is cut a fixed distance before its end; wherever that cut falls in an
        // assignment, a URL with a password or an authorization header (in the name, in the separator, in the
        // value), the value is redacted, and the rest of the line passes as it was.
        for (secret, value) in [
            ("password=Xk9pQ2mZ7wLr4tYv", "Xk9pQ2mZ7wLr4tYv"),
            ("api_key = \"Xk9pQ2mZ7wLr4tYv\"", "Xk9pQ2mZ7wLr4tYv"),
            (
                "postgres://app:Xk9pQ2mZ7wLr4tYv@db.internal/app",
                "Xk9pQ2mZ7wLr4tYv",
            ),
            ("Authorization: Bearer Xk9pQ2mZ7wLr4tYvQ3", "Xk9pQ2mZ7wLr4tYvQ3"),
        ] {
            let total = MAX_PENDING + 100;
            for before_cut in 0..=secret.len() + 2 {
                // The secret starts `before_cut` bytes before where the piece is cut.
                let start = total - OVERLAP - before_cut;
                let text = format!(
                    "{} {secret} {}",
                    "a".repeat(start - 1),
                    "b".repeat(total - start - secret.len() - 1)
                );
                assert_eq!(text.len(), total);
                let reads: [Vec<&[u8]>; 2] = [
                    vec![&text.as_bytes()[..60_000], &text.as_bytes()[60_000..], b"\n"],
                    text.as_bytes().chunks(4096).chain([&b"\n"[..]]).collect(),
                ];
                for chunks in reads {
                    let out = String::from_utf8(stream(&chunks)).unwrap();
                    assert!(
                        !out.contains(value),
                        "{secret} cut {before_cut} bytes in: {}",
                        &out[start - 10..]
                    );
                    assert!(out.contains("[redacted: "), "{secret} cut {before_cut} bytes in");
                    assert_eq!(
                        out.as_bytes(),
                        redact(format!("{text}\n").as_bytes()).as_ref(),
                        "{secret} at {before_cut}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_block_without_its_end_line_holds_the_stream_only_while_it_can_go_on() {
        // A line that names a key's header without a key (grep's output, a test's fixture) is not an open block
        // once a byte that no key holds follows it: the lines after it are written as they come.
        let mut redactor = Redactor::new();
        let mut out = Vec::new();
        redactor.push(b"fixtures/a.pem:-----BEGIN RSA PRIVATE KEY-----\n", &mut out);
        assert!(out.starts_with(b"fixtures/a.pem:"), "{out:?}");
        for line in 0..100 {
            redactor.push(format!("src/main_{line}.rs: \"quoted\"\n").as_bytes(), &mut out);
        }
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.contains("src/main_98.rs"), "{text}");
        assert!(text.contains("[redacted: private key]"), "{text}");
        // A block whose key lines still come is held, and redacted whole.
        let mut redactor = Redactor::new();
        let mut out = Vec::new();
        redactor.push(
            b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5v\n",
            &mut out,
        );
        assert!(out.is_empty(), "{out:?}");
        redactor.push(
            b"bm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIV",
            &mut out,
        );
        assert!(out.is_empty(), "{out:?}");
        redactor.push(b"ATE KEY-----\nnext\n", &mut out);
        assert_eq!(out, b"[redacted: private key]\nnext\n");
    }

    #[test]
    fn a_calls_input_keeps_its_shape_and_loses_its_credentials() {
        let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFc\n-----END RSA PRIVATE KEY-----\n";
        let mut input = serde_json::json!({
            "command": format!("curl -H 'Authorization: token {TOKEN}' https://api.github.com"),
            "file_path": "deploy/id_rsa",
            "content": format!("# deploy key\n{key}"),
            "env": {"password": "Qv7#mK2pLx9!wR4t", "AWS_KEY": "AKIAYLNKMKFJSA45HBK7", "user": "app"},
            "args": ["--token", TOKEN, 3, true],
        });
        assert!(redact_json(&mut input));
        assert_eq!(
            input,
            serde_json::json!({
                "command": "curl -H 'Authorization: token [redacted: GitHub token]' https://api.github.com",
                "file_path": "deploy/id_rsa",
                "content": "# deploy key\n[redacted: private key]\n",
                "env": {"password": "[redacted: password or secret assignment]", "AWS_KEY": "[redacted: AWS access key]", "user": "app"},
                "args": ["--token", "[redacted: GitHub token]", 3, true],
            })
        );
        let mut clean = serde_json::json!({"command": "git status", "file_path": "src/token.rs"});
        let before = clean.clone();
        assert!(!redact_json(&mut clean));
        assert_eq!(clean, before);
    }
}
