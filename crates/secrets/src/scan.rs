//! The scanner: the rule table compiled once, and the findings of one text.

use std::sync::OnceLock;

use aho_corasick::packed::Searcher;
use regex::bytes::{Captures, Regex, RegexBuilder};

use crate::buckets::packed_order;
use crate::rules::{Check, PRIVATE_KEY, PRIVATE_KEY_BASE64, RULES, Rule};
use crate::value::{
    base64_start, begins_private_key, contains, port_and_path, qualifies, random, text_part, written_in,
};

/// One credential found in a text: its kind and the bytes that hold it (the value alone where the format names
/// it, as in `password: <value>`, so that a redaction keeps the name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The kind's name (`GitHub token`).
    pub kind: &'static str,
    /// Where the credential starts, a byte offset into the scanned text.
    pub start: usize,
    /// Where it ends (exclusive).
    pub end: usize,
}

/// The rule table compiled: the rules' anchors lowercased as packed literal searches (Teddy) over the text
/// lowercased, the rules each anchor belongs to, and each rule alone for its matches, compiled the first time an
/// anchor of it is found: a process that scans a few short texts (the hook redacting its audit row) pays for the
/// literal searches and for the rules its texts call on, not for the whole table.
struct Compiled {
    /// The literal searches: the anchors of four bytes or more first (Teddy compares four bytes of each, so a
    /// common three-byte start, `pas`, `tok`, of other words is ruled out before the literal is compared), then
    /// the anchors of three bytes (`sk-`, `://`), searched on their own: together with the others they would make
    /// the search compare three bytes only, and find three times as many candidates. Each search holds at most
    /// [`SEARCH_ANCHORS`] anchors.
    searches: Vec<Search>,
    /// The rules of each anchor, by the anchor's pattern id (the long ones, then the short ones).
    rules_of: Vec<RuleMask>,
    /// The pattern ids of a private key's anchors (`-----begin`, an OpenSSH key's magic), whose region runs on
    /// past their line.
    blocks: Vec<usize>,
    /// The rules of a value on the line after its name ([`Check::NextLine`]), by their bits in a rule mask: run on
    /// a line only when it leaves its value to the next.
    next_line: RuleMask,
    /// The longest anchor, in bytes: how far a window of the lowercased text reaches into the next.
    longest: usize,
    /// Each rule's expression, by the rule's index, compiled on its first use.
    each: Vec<OnceLock<Regex>>,
}

/// One packed literal search and the anchor of each of its patterns: its patterns are anchors laid out for its
/// buckets ([`packed_order`]), some of them twice.
struct Search {
    searcher: Searcher,
    /// The anchor's pattern id (an index into [`Compiled::rules_of`]) of each of the searcher's patterns.
    anchors: Vec<usize>,
}

/// A set of rules, one bit a rule by its index in [`RULES`].
pub(crate) type RuleMask = u128;

/// How far past its anchor a private-key block is looked for: more than the largest key's PEM.
const BLOCK_LIMIT: usize = 16 << 10;

/// The compiled-regex budget: the table's bounded repetitions need more than the default.
const SIZE_LIMIT: usize = 64 << 20;

/// The most anchors one literal search holds: Teddy's own bound, past which its candidates would cost more to
/// check than a second search over the text.
const SEARCH_ANCHORS: usize = 64;

/// The length from which an anchor is searched with the long ones.
const SHORT: usize = 4;

/// How much of the text is lowercased at once for the anchor search: small enough to stay in the cache.
const WINDOW: usize = 32 << 10;

/// The table, compiled on the first scan that needs it ([`compiled`]).
static COMPILED: OnceLock<Compiled> = OnceLock::new();

fn compiled() -> &'static Compiled {
    COMPILED.get_or_init(|| {
        #[expect(
            clippy::expect_used,
            reason = "the patterns are constants; the `every_rule_compiles` test compiles them"
        )]
        compile().expect("the credential patterns compile")
    })
}

/// The longest text that a process which has not compiled the table yet first searches for an anchor by
/// comparing each anchor at each byte ([`holds_an_anchor`]): a command line, an audit row's preview, a variable's
/// value. Compiling the table costs as much as that search over some thousands of bytes (it builds the packed
/// searchers and learns the processor's features), and a hook that scans one such text and ends need not pay it
/// when the text holds no anchor, which most do not.
const UNCOMPILED_SEARCH: usize = 512;

/// Whether `text` holds, in any case, an anchor of some rule: the search [`anchors_in`] makes, without the
/// compiled searchers. Without an anchor a text holds no credential (only the lines that hold one are scanned).
fn holds_an_anchor(text: &[u8]) -> bool {
    RULES.iter().flat_map(|rule| rule.anchors.iter()).any(|anchor| {
        let anchor = anchor.as_bytes();
        !anchor.is_empty()
            && text
                .windows(anchor.len())
                .any(|window| window.eq_ignore_ascii_case(anchor))
    })
}

fn compile() -> Result<Compiled, regex::Error> {
    // Each anchor once, lowercased: the search runs over the text lowercased, so that `token`, `TOKEN`, `Token`
    // and `tOkEn` are all found by one literal, and a provider's prefix in another case (`GHP_`) only costs its
    // rule's look at the line.
    let mut anchors: Vec<Vec<u8>> = RULES
        .iter()
        .flat_map(|rule| rule.anchors.iter())
        .map(|anchor| anchor.to_ascii_lowercase().into_bytes())
        .collect();
    // The long anchors first, then the short: a pattern id of the short search is counted after the long ones.
    anchors.sort_by(|a, b| (a.len() < SHORT).cmp(&(b.len() < SHORT)).then_with(|| a.cmp(b)));
    anchors.dedup();
    let split = anchors
        .iter()
        .position(|anchor| anchor.len() < SHORT)
        .unwrap_or(anchors.len());
    // The rules each anchor is written in.
    let mut own: Vec<RuleMask> = vec![0; anchors.len()];
    for (index, rule) in RULES.iter().enumerate() {
        for anchor in rule.anchors {
            let lowered = anchor.to_ascii_lowercase();
            if let Ok(at) = anchors.binary_search_by(|a| {
                (a.len() < SHORT)
                    .cmp(&(lowered.len() < SHORT))
                    .then_with(|| a.as_slice().cmp(lowered.as_bytes()))
            }) && let Some(mask) = own.get_mut(at)
            {
                *mask |= 1 << index;
            }
        }
    }
    // Anchors of which one holds the other (`sk-ant-` holds `sk-`) stand for each other's rules: the search
    // reports one anchor at a place. Each pair of distinct anchors is compared once (the hook compiles this table
    // in every process that redacts a row).
    // Anchors are a few bytes long: a comparison at each place is cheaper than a searcher built for each pair.
    let holds = |outer: &[u8], inner: &[u8]| {
        inner.len() <= outer.len()
            && inner.first().is_some_and(|first| outer.contains(first))
            && outer.windows(inner.len()).any(|place| place == inner)
    };
    let mut rules_of = own.clone();
    for (i, a) in anchors.iter().enumerate() {
        for (j, b) in anchors.iter().enumerate().skip(i + 1) {
            if holds(a, b) || holds(b, a) {
                let (mine, theirs) = (own.get(i).copied().unwrap_or(0), own.get(j).copied().unwrap_or(0));
                if let Some(mask) = rules_of.get_mut(i) {
                    *mask |= theirs;
                }
                if let Some(mask) = rules_of.get_mut(j) {
                    *mask |= mine;
                }
            }
        }
    }
    let blocks = RULES
        .iter()
        .filter(|rule| rule.kind == PRIVATE_KEY || rule.kind == PRIVATE_KEY_BASE64)
        .flat_map(|rule| rule.anchors.iter())
        .filter_map(|anchor| {
            let lowered = anchor.to_ascii_lowercase().into_bytes();
            anchors.iter().position(|a| *a == lowered)
        })
        .collect();
    let next_line = RULES
        .iter()
        .enumerate()
        .filter(|(_, rule)| rule.check == Check::NextLine)
        .fold(0, |mask: RuleMask, (index, _)| mask | 1 << index);
    let longest = anchors.iter().map(Vec::len).max().unwrap_or(0);
    let no_search = || regex::Error::Syntax("the anchors make no literal search".to_owned());
    let mut searches = Vec::new();
    for (base, group) in [(0, anchors.get(..split)), (split, anchors.get(split..))] {
        for (index, chunk) in group.unwrap_or_default().chunks(SEARCH_ANCHORS).enumerate() {
            searches.push(search(chunk, base + index * SEARCH_ANCHORS).ok_or_else(no_search)?);
        }
    }
    let each = RULES.iter().map(|_| OnceLock::new()).collect();
    Ok(Compiled {
        searches,
        rules_of,
        blocks,
        next_line,
        longest,
        each,
    })
}

/// The packed search of `anchors`, whose first has the pattern id `first`: `None` when the processor has no packed
/// search.
fn search(anchors: &[Vec<u8>], first: usize) -> Option<Search> {
    let order = packed_order(anchors);
    let mut builder = aho_corasick::packed::Config::new().builder();
    for index in &order {
        builder.add(anchors.get(*index)?);
    }
    Some(Search {
        searcher: builder.build()?,
        anchors: order.iter().map(|index| first + index).collect(),
    })
}

/// `rule`'s expression as the scanner runs it.
fn expression(rule: &Rule) -> Result<Regex, regex::Error> {
    RegexBuilder::new(rule.pattern)
        .unicode(false)
        .size_limit(SIZE_LIMIT)
        .build()
}

impl Compiled {
    /// The expression of the rule at `index`, compiled the first time it is asked for.
    fn rule(&self, index: usize, rule: &Rule) -> Option<&Regex> {
        let cell = self.each.get(index)?;
        Some(cell.get_or_init(|| {
            #[expect(
                clippy::expect_used,
                reason = "the patterns are constants; the `every_rule_compiles` test compiles them"
            )]
            expression(rule).expect("the credential patterns compile")
        }))
    }
}

/// One anchor found: where it starts and ends in the text, and its pattern id.
struct Anchor {
    start: usize,
    end: usize,
    id: usize,
}

/// Every anchor in `text`, in order, each found in any case: the text is lowercased [`WINDOW`] bytes at a time
/// (each window reaching as far into the next as the longest anchor, so that an anchor across two is whole in the
/// first) and searched for the lowercased anchors, long and short.
fn anchors_in(compiled: &Compiled, text: &[u8], mut each: impl FnMut(Anchor)) {
    let reach = compiled.longest.saturating_sub(1);
    let mut lowered = Vec::with_capacity(text.len().min(WINDOW) + reach);
    let mut found: Vec<Anchor> = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let own = text.len().min(at + WINDOW);
        let Some(window) = text.get(at..text.len().min(own + reach)) else {
            return;
        };
        lowered.clear();
        lowered.extend_from_slice(window);
        lowered.make_ascii_lowercase();
        found.clear();
        for search in &compiled.searches {
            // Each search starts again one byte after the last anchor's start, not at its end: an anchor that
            // overlaps the end of another (`token` and `npm_` in `tokenpm_…`) is reported too, so its rules run.
            // Anchors that start at the same byte are one the other's prefix and stand for each other's rules.
            // The search costs more only within an anchor.
            let mut from = 0;
            while let Some(m) = search
                .searcher
                .find_in(&lowered, aho_corasick::Span::from(from..lowered.len()))
            {
                // One that starts in the reach belongs to the next window, which finds it again.
                if at + m.start() >= own {
                    break;
                }
                if let Some(id) = search.anchors.get(m.pattern().as_usize()) {
                    found.push(Anchor {
                        start: at + m.start(),
                        end: at + m.end(),
                        id: *id,
                    });
                }
                from = m.start() + 1;
            }
        }
        found.sort_unstable_by_key(|anchor| (anchor.start, anchor.id));
        for anchor in found.drain(..) {
            each(anchor);
        }
        at = own;
    }
}

/// A finding and where the match that holds it starts: the name of an assignment (`password=`), a URL's scheme,
/// before the value the finding names.
#[derive(Debug, Clone)]
pub(crate) struct Located {
    pub(crate) finding: Finding,
    /// Where the whole match starts, at or before the finding.
    pub(crate) from: usize,
}

/// Every credential in `text`, in order, none overlapping another. Where two overlap, the one that starts first
/// wins, and at the same start the rule listed first.
pub fn scan(text: &[u8]) -> Vec<Finding> {
    scan_located(text)
        .into_iter()
        .map(|located| located.finding)
        .collect()
}

/// [`scan`], each finding with where its match starts. A text that holds a terminal's escape sequences (colour,
/// a title: `grep --color=always` prints them inside a match) is scanned as a terminal shows it, without them, so
/// that one between two halves of a token does not hide it; each finding then covers the bytes of the text it
/// stands for, the sequences inside it included. A text without an escape byte is scanned as it lies.
pub(crate) fn scan_located(text: &[u8]) -> Vec<Located> {
    // An empty text holds nothing, and its scan would compile the patterns (the end of a command that printed
    // nothing).
    if text.is_empty() {
        return Vec::new();
    }
    if memchr::memchr(ESC, text).is_none() && !contains(text, &C1_CSI) {
        return scan_plain(text);
    }
    let (view, removed) = without_escapes(text);
    if removed.is_empty() {
        return scan_plain(text);
    }
    // The text's offset of the view's byte at `at`: `at` plus what was removed before that byte.
    let original = |at: usize| {
        let before = removed.partition_point(|(view_at, _)| *view_at <= at);
        at + before
            .checked_sub(1)
            .and_then(|last| removed.get(last))
            .map_or(0, |(_, total)| *total)
    };
    // The text as it lies is scanned too: a sequence's final byte may be a credential's first (`ESC g` before
    // `ghp_…`), which the view loses and a reader that does not consume it shows.
    let mut all: Vec<Located> = scan_plain(&view)
        .into_iter()
        .map(|located| Located {
            finding: Finding {
                start: original(located.finding.start),
                end: original(located.finding.end.saturating_sub(1)) + 1,
                ..located.finding
            },
            from: original(located.from),
        })
        .chain(scan_plain(text))
        .collect();
    all.sort_by_key(|located| located.finding.start);
    // Findings that overlap are one, covering both.
    let mut merged: Vec<Located> = Vec::with_capacity(all.len());
    for located in all {
        match merged.last_mut() {
            Some(last) if located.finding.start < last.finding.end => {
                last.finding.end = last.finding.end.max(located.finding.end);
                last.from = last.from.min(located.from);
            }
            _ => merged.push(located),
        }
    }
    merged
}

/// The escape byte that starts a terminal's escape sequence.
const ESC: u8 = 0x1b;

/// The 8-bit control sequence introducer (U+009B), as UTF-8 writes it: what `ESC [` is in 7 bits.
const C1_CSI: [u8; 2] = [0xc2, 0x9b];

/// `text` without its terminal escape sequences, as ECMA-48 defines them and a terminal consumes them (and
/// `strip-ansi` removes them): a control sequence (`ESC [` or U+009B, parameters, intermediate bytes, a final
/// byte: colour, cursor moves), an operating-system command (`ESC ]` to a BEL or `ESC \`, within its line: a title,
/// a link), and any other escape sequence: `ESC`, intermediate bytes, one final byte (a character set chosen,
/// `ESC ( B`; the cursor saved, `ESC 7`; a reset, `ESC c`). An escape byte that starts none, or one left
/// unfinished, stays. With it, where each removal is: the view's offset it was removed before, and how many bytes
/// were removed up to and including it.
fn without_escapes(text: &[u8]) -> (Vec<u8>, Vec<(usize, usize)>) {
    let mut view = Vec::with_capacity(text.len());
    let mut removed: Vec<(usize, usize)> = Vec::new();
    let mut total = 0;
    let mut at = 0;
    while let Some(found) = text
        .get(at..)
        .and_then(|rest| memchr::memchr2(ESC, C1_CSI[0], rest))
    {
        let escape = at + found;
        view.extend_from_slice(text.get(at..escape).unwrap_or_default());
        let length = text.get(escape..).map_or(0, escape_length);
        if length == 0 {
            view.extend_from_slice(text.get(escape..=escape).unwrap_or_default());
            at = escape + 1;
            continue;
        }
        total += length;
        removed.push((view.len(), total));
        at = escape + length;
    }
    view.extend_from_slice(text.get(at..).unwrap_or_default());
    (view, removed)
}

/// The length of the escape sequence at the start of `text` (which starts with ESC or U+009B's first byte), or 0
/// when none is whole.
fn escape_length(text: &[u8]) -> usize {
    if text.starts_with(&C1_CSI) {
        return control_sequence_length(text.get(2..).unwrap_or_default()).map_or(0, |body| 2 + body);
    }
    if text.first() != Some(&ESC) {
        return 0;
    }
    match text.get(1) {
        Some(b'[') => control_sequence_length(text.get(2..).unwrap_or_default()).map_or(0, |body| 2 + body),
        Some(b']') => {
            let body = text.get(2..).unwrap_or_default();
            for (index, byte) in body.iter().enumerate() {
                match byte {
                    0x07 => return 2 + index + 1,
                    &ESC if body.get(index + 1) == Some(&b'\\') => return 2 + index + 2,
                    b'\n' | &ESC => return 0,
                    _ => {}
                }
            }
            0
        }
        _ => {
            // Intermediate bytes, then one final byte.
            let body = text.get(1..).unwrap_or_default();
            let intermediates = body.iter().take_while(|b| (0x20..=0x2f).contains(*b)).count();
            match body.get(intermediates) {
                Some(0x30..=0x7e) => 1 + intermediates + 1,
                _ => 0,
            }
        }
    }
}

/// The length of a control sequence's body after its introducer (parameter bytes, intermediate bytes, one final
/// byte), or `None` when it is not whole.
fn control_sequence_length(body: &[u8]) -> Option<usize> {
    let parameters = body.iter().take_while(|b| (0x30..=0x3f).contains(*b)).count();
    let intermediates = body
        .iter()
        .skip(parameters)
        .take_while(|b| (0x20..=0x2f).contains(*b))
        .count();
    match body.get(parameters + intermediates) {
        Some(0x40..=0x7e) => Some(parameters + intermediates + 1),
        _ => None,
    }
}

/// [`scan_located`] of a text scanned as it lies.
fn scan_plain(text: &[u8]) -> Vec<Located> {
    if COMPILED.get().is_none() && text.len() <= UNCOMPILED_SEARCH && !holds_an_anchor(text) {
        return Vec::new();
    }
    let compiled = compiled();
    let mut found: Vec<(usize, Located)> = Vec::new();
    // Only the lines that hold an anchor are scanned, each once, by the rules of the anchors it holds; a
    // private-key block's region runs on to its end.
    let mut line: Option<(usize, usize, RuleMask)> = None;
    anchors_in(compiled, text, |anchor| {
        let rules = compiled.rules_of.get(anchor.id).copied().unwrap_or(RuleMask::MAX);
        // The anchor's line; one that leaves its value to the next (`password: |`, `"token":`) is read with that
        // line, by the rules of such a value, which no other line needs.
        let line_end = text
            .get(anchor.end..)
            .and_then(|after| memchr::memchr(b'\n', after))
            .map_or(text.len(), |newline| anchor.end + newline);
        let line_start = text
            .get(..anchor.start)
            .and_then(|before| memchr::memrchr(b'\n', before))
            .map_or(0, |newline| newline + 1);
        let opens = text.get(line_start..line_end).is_some_and(opens_next_line);
        let (rules, reach_end) = match opens {
            true => (rules, next_line_end(text, line_end)),
            false => (rules & !compiled.next_line, line_end),
        };
        if let Some((_, end, mask)) = line.as_mut()
            && anchor.start < *end
        {
            *mask |= rules;
            *end = (*end).max(reach_end);
            return;
        }
        if let Some((start, end, mask)) = line.take() {
            scan_region(compiled, text, start..end, mask, &mut found);
        }
        let start = line_start;
        let reach = if compiled.blocks.contains(&anchor.id) {
            anchor.end.saturating_add(BLOCK_LIMIT).min(text.len())
        } else {
            anchor.end
        };
        let end = text
            .get(reach..)
            .and_then(|after| memchr::memchr(b'\n', after))
            .map_or(text.len(), |newline| reach + newline);
        line = Some((start, end.max(reach_end), rules));
    });
    if let Some((start, end, mask)) = line {
        scan_region(compiled, text, start..end, mask, &mut found);
    }
    found.sort_by_key(|(index, located)| (located.finding.start, *index));
    let mut findings: Vec<Located> = Vec::with_capacity(found.len());
    for (_, located) in found {
        if findings
            .last()
            .is_none_or(|last| located.finding.start >= last.finding.end)
        {
            findings.push(located);
        }
    }
    findings
}

/// Adds the findings of the rules in `mask` within `range` of `text` to `found`.
fn scan_region(
    compiled: &Compiled,
    text: &[u8],
    range: std::ops::Range<usize>,
    mask: RuleMask,
    found: &mut Vec<(usize, Located)>,
) {
    let Some(region) = text.get(range.clone()) else {
        return;
    };
    for (index, rule) in RULES.iter().enumerate() {
        if mask & (1 << index) == 0 {
            continue;
        }
        let Some(regex) = compiled.rule(index, rule) else {
            continue;
        };
        let mut at = 0;
        while let Some(captures) = regex.captures_at(region, at) {
            let Some(whole) = captures.get(0) else {
                break;
            };
            let accepted = accept(rule, &captures);
            // The next match is looked for after this one; after a value on the next line that is no value, from
            // that next line, which may name a secret of its own (`credentials:`, then `token:` and its value).
            at = match (&accepted, rule.check) {
                (None, Check::NextLine) => whole.start() + 1,
                _ => whole.end().max(whole.start() + 1),
            };
            if let Some(located) = accepted {
                found.push((
                    index,
                    Located {
                        finding: Finding {
                            start: located.finding.start + range.start,
                            end: located.finding.end + range.start,
                            ..located.finding
                        },
                        from: located.from + range.start,
                    },
                ));
            }
            if at > region.len() {
                break;
            }
        }
    }
}

/// The first credential in `text`, if any.
pub fn first(text: &[u8]) -> Option<Finding> {
    scan(text).into_iter().next()
}

/// The finding of one match of `rule`, when the match passes the rule's check.
fn accept(rule: &Rule, captures: &Captures<'_>) -> Option<Located> {
    let whole = captures.get(0)?;
    let suffix = captures.name("suffix");
    let group = (1..captures.len())
        .filter_map(|index| captures.get(index))
        .find(|group| suffix.is_none_or(|suffix| suffix.range() != group.range()));
    let mut value = group.map_or(whole.as_bytes(), |group| group.as_bytes());
    if matches!(rule.check, Check::Value | Check::UrlPassword) {
        value = text_part(value);
    }
    let passes = match rule.check {
        Check::Format => true,
        Check::NotExample => {
            // The key's own length decides, as for a token, not what is glued after it.
            let own = whole.as_bytes().get(..20).unwrap_or(whole.as_bytes());
            !contains(own, b"EXAMPLE") && (value.is_empty() || own.iter().skip(4).any(u8::is_ascii_digit))
        }
        Check::Random(own) => random(value, own, false),
        Check::RandomLetters(own) => random(value, own, true),
        Check::Value => written_in(value, 8) && suffix.is_none_or(|suffix| qualifies(suffix.as_bytes())),
        // `host:8443/path?to=a@b` is a port and a path before an `@` in the query, not a password.
        Check::UrlPassword => written_in(value, 3) && !port_and_path(value),
        Check::NextLine => return next_line_value(rule, captures),
        Check::Base64PrivateKey => begins_private_key(&base64_start(whole.as_bytes())),
    };
    if !passes {
        return None;
    }
    // A value named by an assignment or a URL is redacted alone; a token is redacted whole, prefix included.
    let span = match (rule.check, group) {
        (Check::Value | Check::UrlPassword, Some(group)) => group.start()..group.start() + value.len(),
        _ => whole.range(),
    };
    Some(Located {
        finding: Finding {
            kind: rule.kind,
            start: span.start,
            end: span.end,
        },
        from: whole.start(),
    })
}

/// The finding of a match of a rule checked by [`Check::NextLine`]: its value, on the line after the name.
fn next_line_value(rule: &Rule, captures: &Captures<'_>) -> Option<Located> {
    let whole = captures.get(0)?;
    let width = |name: &str| captures.name(name).map_or(0, |group| group.len());
    let block = captures.name("block").is_some();
    let (value, quoted) = match (captures.name("dq"), captures.name("sq"), captures.name("bare")) {
        (Some(value), _, _) | (_, Some(value), _) => (value, true),
        (_, _, Some(value)) => (value, false),
        _ => return None,
    };
    let text = text_part(value.as_bytes());
    // YAML's content of a block or of a plain scalar is indented further than its name; JSON's is anywhere.
    let indented = width("inner") > width("indent");
    let placed = if block || !quoted { indented } else { true };
    // A plain value that is a mapping (`type: string`), a list (`- a`), a comment or an anchor is not a value.
    let structure = !block
        && !quoted
        && (contains(text, b": ")
            || text.ends_with(b":")
            || text.starts_with(b"- ")
            || matches!(text.first(), Some(b'#' | b'&' | b'*' | b'!' | b'{' | b'[')));
    let suffix = captures.name("suffix");
    let passes = placed
        && !structure
        && written_in(text, 8)
        && suffix.is_none_or(|suffix| qualifies(suffix.as_bytes()));
    passes.then(|| Located {
        finding: Finding {
            kind: rule.kind,
            start: value.start(),
            end: value.start() + text.len(),
        },
        from: whole.start(),
    })
}

/// Whether the line `line` leaves its value to the next line: it ends with a mapping's `:`, with a YAML block
/// scalar's indicator after one (`password: |`, `token: >-`), or with an XML start tag (`<password>`). What
/// [`Check::NextLine`]'s rules read past the line.
pub(crate) fn opens_next_line(line: &[u8]) -> bool {
    let trimmed = trim_end(line);
    let before_indicator = trimmed
        .iter()
        .rev()
        .take(3)
        .position(|byte| matches!(byte, b'|' | b'>'))
        .and_then(|back| {
            let at = trimmed.len() - 1 - back;
            let modifiers = trimmed.get(at + 1..).unwrap_or_default();
            modifiers
                .iter()
                .all(|byte| byte.is_ascii_digit() || matches!(byte, b'+' | b'-'))
                .then(|| trim_end(trimmed.get(..at).unwrap_or_default()))
        });
    before_indicator.unwrap_or(trimmed).ends_with(b":") || ends_with_start_tag(trimmed)
}

/// Whether `line` ends with an XML start tag (`<password>`, `<add name="x">`), not an end tag or an empty
/// element's (`</password>`, `<password/>`).
fn ends_with_start_tag(line: &[u8]) -> bool {
    let Some(open) = line
        .strip_suffix(b">")
        .and_then(|before| memchr::memrchr(b'<', before))
    else {
        return false;
    };
    let tag = line.get(open + 1..line.len() - 1).unwrap_or_default();
    tag.first().is_some_and(u8::is_ascii_alphabetic) && !tag.ends_with(b"/") && !tag.contains(&b'>')
}

/// `bytes` without the blanks and carriage returns at its end.
fn trim_end(bytes: &[u8]) -> &[u8] {
    let kept = bytes
        .iter()
        .rposition(|byte| !matches!(byte, b' ' | b'\t' | b'\r'))
        .map_or(0, |last| last + 1);
    bytes.get(..kept).unwrap_or_default()
}

/// Where the next line that is not blank ends, after the line that ends at `end` in `text` (at most eight blank
/// lines later, as [`Check::NextLine`]'s rule reads); `end` when there is none.
pub(crate) fn next_line_end(text: &[u8], end: usize) -> usize {
    let mut at = end;
    for _ in 0..=8 {
        let Some(start) = text.get(at..).and_then(|rest| rest.first()).map(|_| at + 1) else {
            return end;
        };
        let line_end = text
            .get(start..)
            .and_then(|rest| memchr::memchr(b'\n', rest))
            .map_or(text.len(), |newline| start + newline);
        if !trim_end(text.get(start..line_end).unwrap_or_default())
            .iter()
            .all(|byte| *byte == b' ' || *byte == b'\t')
        {
            return line_end;
        }
        at = line_end;
    }
    end
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;
