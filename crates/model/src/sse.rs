//! Server-sent events: the framing both protocols stream their answers in, parsed incrementally from bytes.

/// One event: its `event:` name, if any, and its `data:` lines joined by newlines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub(crate) name: Option<String>,
    pub(crate) data: String,
}

/// Reads events from chunks of bytes that may split a line, or a UTF-8 character, anywhere.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    /// Bytes of a line not yet ended.
    pending: Vec<u8>,
    name: Option<String>,
    data: Vec<String>,
}

impl SseParser {
    /// The events completed by `bytes`.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches('\n').trim_end_matches('\r');
            if let Some(event) = self.line(line) {
                events.push(event);
            }
        }
        events
    }

    /// The event left when the stream ends without a final blank line.
    pub(crate) fn finish(&mut self) -> Option<SseEvent> {
        let rest = std::mem::take(&mut self.pending);
        let rest = String::from_utf8_lossy(&rest);
        if !rest.trim().is_empty() {
            // A last line without its newline still counts.
            let _ = self.line(rest.trim_end_matches('\r'));
        }
        self.dispatch()
    }

    fn line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.name = Some(value.to_owned()),
            "data" => self.data.push(value.to_owned()),
            // `id`, `retry` and unknown fields carry nothing either protocol uses.
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let name = self.name.take();
        if self.data.is_empty() {
            return None;
        }
        let data = std::mem::take(&mut self.data).join("\n");
        Some(SseEvent { name, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_anywhere_across_chunks() {
        let stream = "event: message_start\r\ndata: {\"a\":\"é\"}\r\n\r\n: ping\n\ndata: one\ndata: two\n\ndata: [DONE]";
        let bytes = stream.as_bytes();
        for split in 0..bytes.len() {
            let mut parser = SseParser::default();
            let mut events = parser.push(&bytes[..split]);
            events.extend(parser.push(&bytes[split..]));
            events.extend(parser.finish());
            assert_eq!(
                events,
                vec![
                    SseEvent {
                        name: Some("message_start".into()),
                        data: "{\"a\":\"é\"}".into()
                    },
                    SseEvent {
                        name: None,
                        data: "one\ntwo".into()
                    },
                    SseEvent {
                        name: None,
                        data: "[DONE]".into()
                    },
                ],
                "split at byte {split}"
            );
        }
    }
}
