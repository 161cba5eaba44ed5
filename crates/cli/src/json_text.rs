//! Editing JSON text in place: a parser that keeps the byte span of every value, and insertions and removals that
//! leave every other byte as it was (formatting, key order, unknown keys, the final newline).
//!
//! A removal is the exact inverse of an insertion at the end of a container: inserting writes `,` + newline +
//! indentation + the item after the last item, and removing the last item cuts from the end of the one before it.
//! An emptied container becomes `{}` or `[]`, the way the coding agent writes an empty one.

use anyhow::{Result, bail};
use serde_json::Value;

/// A parsed value and where it is in the text: `start..end` covers it exactly (brackets and quotes included).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) kind: Kind,
}

/// What a [`Node`] is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    /// A string, number, `true`, `false` or `null`.
    Scalar,
}

/// One `"key": value` of an object; `start` is where its key's opening quote is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Member {
    pub(crate) key: String,
    pub(crate) start: usize,
    pub(crate) value: Node,
}

impl Node {
    /// The value of `key` in an object (the last one when a key repeats, as JSON readers take it).
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        self.members()?
            .iter()
            .rev()
            .find(|m| m.key == key)
            .map(|m| &m.value)
    }

    /// The members of an object.
    pub(crate) fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(members) => Some(members),
            Kind::Array(_) | Kind::Scalar => None,
        }
    }

    /// The items of an array.
    pub(crate) fn items(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(items) => Some(items),
            Kind::Object(_) | Kind::Scalar => None,
        }
    }

    /// The value as serde_json reads it.
    pub(crate) fn value(&self, text: &str) -> Option<Value> {
        serde_json::from_str(text.get(self.start..self.end)?).ok()
    }

    /// The spans of the container's items (members from their key on).
    fn spans(&self) -> Vec<(usize, usize)> {
        match &self.kind {
            Kind::Object(members) => members.iter().map(|m| (m.start, m.value.end)).collect(),
            Kind::Array(items) => items.iter().map(|i| (i.start, i.end)).collect(),
            Kind::Scalar => Vec::new(),
        }
    }
}

/// Parses `text`, which serde_json has already accepted; an error means the two disagree, never a panic.
pub(crate) fn parse(text: &str) -> Result<Node> {
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    let root = parser.value(0)?;
    parser.whitespace();
    if parser.pos != text.len() {
        bail!("unexpected text after the JSON value at byte {}", parser.pos);
    }
    Ok(root)
}

/// How deeply values may nest (serde_json refuses deeper ones already).
const MAX_DEPTH: usize = 256;

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<()> {
        if self.peek() != Some(byte) {
            bail!("expected `{}` at byte {}", char::from(byte), self.pos);
        }
        self.pos += 1;
        Ok(())
    }

    fn value(&mut self, depth: usize) -> Result<Node> {
        if depth > MAX_DEPTH {
            bail!("JSON nested more than {MAX_DEPTH} deep");
        }
        self.whitespace();
        let start = self.pos;
        let kind = match self.peek() {
            Some(b'{') => Kind::Object(self.object(depth)?),
            Some(b'[') => Kind::Array(self.array(depth)?),
            Some(b'"') => {
                self.string()?;
                Kind::Scalar
            }
            Some(_) => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.pos += 1;
                }
                if self.pos == start {
                    bail!("expected a value at byte {start}");
                }
                Kind::Scalar
            }
            None => bail!("expected a value at the end of the text"),
        };
        Ok(Node {
            start,
            end: self.pos,
            kind,
        })
    }

    /// Skips a string; the position is on its opening quote.
    fn string(&mut self) -> Result<()> {
        self.expect(b'"')?;
        loop {
            match self.peek() {
                Some(b'\\') => self.pos += 2,
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(_) => self.pos += 1,
                None => bail!("unterminated string"),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Vec<Member>> {
        self.expect(b'{')?;
        let mut members = Vec::new();
        self.whitespace();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(members);
        }
        loop {
            self.whitespace();
            let start = self.pos;
            self.string()?;
            let key = self
                .text
                .get(start..self.pos)
                .and_then(|raw| serde_json::from_str::<String>(raw).ok())
                .ok_or_else(|| anyhow::anyhow!("bad key at byte {start}"))?;
            self.whitespace();
            self.expect(b':')?;
            let value = self.value(depth + 1)?;
            members.push(Member { key, start, value });
            self.whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(members);
                }
                _ => bail!("expected `,` or `}}` at byte {}", self.pos),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Vec<Node>> {
        self.expect(b'[')?;
        let mut items = Vec::new();
        self.whitespace();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(items);
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(items);
                }
                _ => bail!("expected `,` or `]` at byte {}", self.pos),
            }
        }
    }
}

/// How a file lays out its JSON: its newline, and the indentation unit of its pretty printing (`None`: on one line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Style {
    pub(crate) newline: &'static str,
    pub(crate) unit: Option<String>,
}

impl Style {
    /// The coding agent's own: two spaces, `\n`.
    pub(crate) fn standard() -> Self {
        Self {
            newline: "\n",
            unit: Some("  ".to_owned()),
        }
    }

    /// The style of `text`, read from the indentation of the root's first member (the standard one for an empty
    /// root).
    pub(crate) fn of(text: &str, root: &Node) -> Self {
        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let Some(first) = root.spans().first().copied() else {
            return Self {
                newline,
                ..Self::standard()
            };
        };
        let lead = text.get(root.start + 1..first.0).unwrap_or_default();
        let unit = lead
            .rfind('\n')
            .map(|at| lead.get(at + 1..).unwrap_or_default().to_owned());
        Self { newline, unit }
    }
}

/// A value to write, with its keys in the order given.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fresh {
    Object(Vec<(&'static str, Fresh)>),
    Array(Vec<Fresh>),
    String(String),
    Number(u64),
}

impl Fresh {
    /// The value as text in `style`, its first line starting at the cursor and the others indented from `indent`.
    pub(crate) fn render(&self, style: &Style, indent: &str) -> String {
        let quote = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned());
        let (open, close, items): (&str, &str, Vec<(Option<&str>, &Fresh)>) = match self {
            Self::String(s) => return quote(s),
            Self::Number(n) => return n.to_string(),
            Self::Object(members) => ("{", "}", members.iter().map(|(k, v)| (Some(*k), v)).collect()),
            Self::Array(items) => ("[", "]", items.iter().map(|v| (None, v)).collect()),
        };
        if items.is_empty() {
            return format!("{open}{close}");
        }
        let Some(unit) = &style.unit else {
            let inner: Vec<String> = items
                .iter()
                .map(|(key, value)| {
                    let key = key.map(|k| format!("{}:", quote(k))).unwrap_or_default();
                    format!("{key}{}", value.render(style, indent))
                })
                .collect();
            return format!("{open}{}{close}", inner.join(","));
        };
        let inner_indent = format!("{indent}{unit}");
        let inner: Vec<String> = items
            .iter()
            .map(|(key, value)| {
                let key = key.map(|k| format!("{}: ", quote(k))).unwrap_or_default();
                format!(
                    "{}{inner_indent}{key}{}",
                    style.newline,
                    value.render(style, &inner_indent)
                )
            })
            .collect();
        format!("{open}{}{}{indent}{close}", inner.join(","), style.newline)
    }
}

/// `"key": value` as an object's item, rendered like [`Fresh::render`].
pub(crate) fn member(key: &str, value: &Fresh, style: &Style, indent: &str) -> String {
    let key = serde_json::to_string(key).unwrap_or_else(|_| "\"\"".to_owned());
    let colon = if style.unit.is_some() { ": " } else { ":" };
    format!("{key}{colon}{}", value.render(style, indent))
}

/// `text` with `item` added at the end of `container` (an object's item is a [`member`]); `item` gets the style
/// and the indentation of the container's items.
pub(crate) fn append(
    text: &str,
    container: &Node,
    style: &Style,
    item: impl Fn(&Style, &str) -> String,
) -> Result<String> {
    if matches!(container.kind, Kind::Scalar) {
        bail!("not an object or a list at byte {}", container.start);
    }
    let spans = container.spans();
    let (Some(first), Some(last)) = (spans.first(), spans.last()) else {
        // An empty container: `{}` becomes `{` newline, the item one unit deeper than the container's line,
        // newline, `}`.
        let interior = match &style.unit {
            Some(unit) => {
                let outer = line_indent(text, container.start);
                let inner = format!("{outer}{unit}");
                format!(
                    "{nl}{inner}{}{nl}{outer}",
                    item(style, &inner),
                    nl = style.newline
                )
            }
            None => item(style, ""),
        };
        return splice(text, container.start + 1, container.end - 1, &interior);
    };
    let lead = text.get(container.start + 1..first.0).unwrap_or_default();
    let insertion = match lead.rfind('\n') {
        Some(at) => {
            let indent = lead.get(at + 1..).unwrap_or_default();
            format!(",{}{indent}{}", style.newline, item(style, indent))
        }
        // A container on one line stays on one line.
        None => {
            let one_line = Style {
                unit: None,
                ..style.clone()
            };
            format!(",{lead}{}", item(&one_line, ""))
        }
    };
    splice(text, last.1, last.1, &insertion)
}

/// `text` without item `index` of `container`: the last item goes with the separator before it, another with the
/// separator after it, the only one leaves `{}` or `[]`.
pub(crate) fn remove(text: &str, container: &Node, index: usize) -> Result<String> {
    if matches!(container.kind, Kind::Scalar) {
        bail!("not an object or a list at byte {}", container.start);
    }
    let spans = container.spans();
    let Some(&(start, end)) = spans.get(index) else {
        bail!("no item {index} to remove");
    };
    if spans.len() == 1 {
        return splice(text, container.start + 1, container.end - 1, "");
    }
    match (
        index.checked_sub(1).and_then(|i| spans.get(i)),
        spans.get(index + 1),
    ) {
        (_, Some(next)) => splice(text, start, next.0, ""),
        (Some(before), None) => splice(text, before.1, end, ""),
        (None, None) => bail!("no item {index} to remove"),
    }
}

/// The whitespace that starts the line holding byte `at`.
fn line_indent(text: &str, at: usize) -> &str {
    let before = text.get(..at).unwrap_or_default();
    let line = before
        .rfind('\n')
        .map_or(before, |nl| before.get(nl + 1..).unwrap_or_default());
    let width = line.len() - line.trim_start_matches([' ', '\t']).len();
    line.get(..width).unwrap_or_default()
}

fn splice(text: &str, from: usize, to: usize, with: &str) -> Result<String> {
    match (text.get(..from), text.get(to..)) {
        (Some(head), Some(tail)) => Ok(format!("{head}{with}{tail}")),
        _ => bail!("cannot edit the text between bytes {from} and {to}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook() -> Fresh {
        Fresh::Object(vec![
            ("type", Fresh::String("command".to_owned())),
            ("timeout", Fresh::Number(30)),
        ])
    }

    fn add_member(text: &str, key: &'static str, value: &Fresh) -> String {
        let root = parse(text).unwrap();
        let style = Style::of(text, &root);
        append(text, &root, &style, |style, indent| {
            member(key, value, style, indent)
        })
        .unwrap()
    }

    #[test]
    fn spans_cover_values_exactly() {
        let text = " { \"a\" : [1, {\"b\":\"x\\\"]\"}] , \"\\u0063\": null } ";
        let root = parse(text).unwrap();
        assert_eq!(&text[root.start..root.end], text.trim());
        let a = root.get("a").unwrap();
        assert_eq!(&text[a.start..a.end], "[1, {\"b\":\"x\\\"]\"}]");
        assert_eq!(a.items().unwrap().len(), 2);
        assert!(root.get("c").is_some(), "escaped keys are decoded");
        assert!(parse("{\"a\":1} x").is_err());
        assert!(parse("[").is_err());
    }

    #[test]
    fn styles_are_read_from_the_root() {
        let pretty = "{\n    \"a\": 1\n}\n";
        assert_eq!(
            Style::of(pretty, &parse(pretty).unwrap()).unit.as_deref(),
            Some("    ")
        );
        let compact = "{\"a\":1}";
        assert_eq!(Style::of(compact, &parse(compact).unwrap()).unit, None);
        let crlf = "{\r\n\t\"a\": 1\r\n}";
        let style = Style::of(crlf, &parse(crlf).unwrap());
        assert_eq!((style.newline, style.unit.as_deref()), ("\r\n", Some("\t")));
        assert_eq!(Style::of("{}", &parse("{}").unwrap()), Style::standard());
    }

    #[test]
    fn appending_then_removing_gives_back_every_byte() {
        for text in [
            "{\n  \"a\": 1\n}\n",
            "{\n    \"a\": [\n        1\n    ]\n}",
            "{\"a\":1}",
            "{ \"a\": 1, \"b\": 2 }",
            "{}\n",
            "{\r\n\t\"a\": {}\r\n}\r\n",
        ] {
            let added = add_member(text, "hooks", &hook());
            assert!(serde_json::from_str::<Value>(&added).is_ok(), "{added}");
            let root = parse(&added).unwrap();
            let last = root.members().unwrap().len() - 1;
            assert_eq!(remove(&added, &root, last).unwrap(), text, "{added}");
        }
    }

    #[test]
    fn appended_items_take_the_file_s_layout() {
        assert_eq!(
            add_member("{\n  \"a\": 1\n}\n", "h", &hook()),
            "{\n  \"a\": 1,\n  \"h\": {\n    \"type\": \"command\",\n    \"timeout\": 30\n  }\n}\n"
        );
        assert_eq!(
            add_member("{\"a\":1}", "h", &hook()),
            "{\"a\":1,\"h\":{\"type\":\"command\",\"timeout\":30}}"
        );
        assert_eq!(
            add_member("{}", "h", &Fresh::Array(Vec::new())),
            "{\n  \"h\": []\n}"
        );
        // An empty nested container gets the item one unit deeper than the line it is on.
        let text = "{\n  \"list\": []\n}";
        let root = parse(text).unwrap();
        let style = Style::of(text, &root);
        let list = root.get("list").unwrap();
        let added = append(text, list, &style, |s, i| hook().render(s, i)).unwrap();
        assert_eq!(
            added,
            "{\n  \"list\": [\n    {\n      \"type\": \"command\",\n      \"timeout\": 30\n    }\n  ]\n}"
        );
        let list = parse(&added).unwrap().get("list").unwrap().clone();
        assert_eq!(remove(&added, &list, 0).unwrap(), text);
    }

    #[test]
    fn removing_a_middle_or_first_item_keeps_the_others_tidy() {
        let text = "[\n  1,\n  2,\n  3\n]";
        let root = parse(text).unwrap();
        assert_eq!(remove(text, &root, 1).unwrap(), "[\n  1,\n  3\n]");
        assert_eq!(remove(text, &root, 0).unwrap(), "[\n  2,\n  3\n]");
        assert_eq!(remove(text, &root, 2).unwrap(), "[\n  1,\n  2\n]");
        assert!(remove(text, &root, 3).is_err());
    }
}
