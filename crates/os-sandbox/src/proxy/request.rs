//! The head of a request a sandboxed command sends to the proxy: `CONNECT host:port` for a TLS tunnel, or a plain
//! HTTP request by its absolute URI (or, sent without a proxy in mind, its `Host` header).
//!
//! The parser is strict on purpose: what goes upstream is rebuilt from what was understood here (a request line in
//! origin form, the headers one by one, `Connection: close`), so that no byte the proxy did not judge reaches the
//! server, and one connection carries one request to one host.

/// The largest request head the proxy reads.
pub(crate) const MAX_HEAD: usize = 16 * 1024;

/// What a request asks of the proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestHead {
    /// The host as written (a name, or an address literal that the policy refuses), without brackets.
    pub(crate) host: String,
    /// The port.
    pub(crate) port: u16,
    /// A tunnel or a plain request.
    pub(crate) kind: RequestKind,
}

/// A tunnel or a plain request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RequestKind {
    /// `CONNECT`: a tunnel, which must carry TLS naming the same host.
    Tunnel,
    /// Plain HTTP: the head to send upstream, and the length of the body that follows it.
    Http {
        /// Request line in origin form, the client's headers without the hop-by-hop and proxy ones, the `Host`
        /// of the target, `Connection: close`.
        upstream_head: Vec<u8>,
        /// `Content-Length`, 0 without one.
        body: u64,
    },
}

/// Why a head is not forwarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeadError {
    /// The head is not a request this proxy understands.
    Malformed(&'static str),
    /// A request it understands but does not forward.
    Unsupported(&'static str),
}

impl HeadError {
    /// The reason, for the response body.
    pub(crate) const fn why(self) -> &'static str {
        match self {
            Self::Malformed(why) | Self::Unsupported(why) => why,
        }
    }
}

/// Headers that concern one hop (RFC 9110 §7.6.1) or the proxy itself: never sent upstream. `Upgrade` is left
/// out too: a connection switched to another protocol would carry bytes the proxy no longer reads as requests.
const NOT_FORWARDED: &[&str] = &[
    "connection",
    "proxy-connection",
    "keep-alive",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "upgrade",
    "host",
];

/// The end of the head in `bytes` (the index just past `\r\n\r\n`), if it has arrived.
pub(crate) fn head_end(bytes: &[u8]) -> Option<usize> {
    bytes.windows(4).position(|w| w == b"\r\n\r\n").map(|at| at + 4)
}

/// Parses a complete head (through its empty line).
pub(crate) fn parse(head: &[u8]) -> Result<RequestHead, HeadError> {
    let text = head.strip_suffix(b"\r\n\r\n").ok_or(HeadError::Malformed(
        "the request head does not end with an empty line",
    ))?;
    // Lines end with CRLF: a bare LF or CR anywhere is refused, since servers split such heads differently.
    let mut pieces = text.split(|&b| b == b'\n').peekable();
    let mut lines: Vec<&[u8]> = Vec::new();
    while let Some(piece) = pieces.next() {
        let line = if pieces.peek().is_some() {
            piece
                .strip_suffix(b"\r")
                .ok_or(HeadError::Malformed("a line does not end with CRLF"))?
        } else {
            piece
        };
        if line.contains(&b'\r') {
            return Err(HeadError::Malformed("a line does not end with CRLF"));
        }
        lines.push(line);
    }
    let mut lines = lines.into_iter();
    let request_line = lines.next().ok_or(HeadError::Malformed("no request line"))?;
    let (method, target) = request_line_parts(request_line)?;
    let mut headers: Vec<(&str, &[u8])> = Vec::new();
    for line in lines {
        headers.push(header(line)?);
    }
    if method == "CONNECT" {
        let (host, port) = authority(target, None)?;
        let port = port.ok_or(HeadError::Malformed("CONNECT names no port"))?;
        return Ok(RequestHead {
            host,
            port,
            kind: RequestKind::Tunnel,
        });
    }
    plain(method, target, &headers)
}

/// A plain HTTP request: the target from the absolute URI or the `Host` header (which must agree when both are
/// given), and the head to send upstream.
fn plain(method: &str, target: &str, headers: &[(&str, &[u8])]) -> Result<RequestHead, HeadError> {
    let mut hosts = headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("host"));
    let host_header = hosts.next().map(|(_, value)| value);
    if hosts.next().is_some() {
        return Err(HeadError::Malformed("more than one Host header"));
    }
    let host_header = host_header
        .map(|value| {
            std::str::from_utf8(value).map_err(|_| HeadError::Malformed("the Host header is not text"))
        })
        .transpose()?
        .map(|value| authority(value, Some(80)))
        .transpose()?;
    let (host, port, path) = if let Some(rest) = strip_prefix_ignore_case(target, "http://") {
        let (authority_text, path) = rest.find(['/', '?']).map_or((rest, "/"), |at| rest.split_at(at));
        let (host, port) = authority(authority_text, Some(80))?;
        let port = port.unwrap_or(80);
        if let Some((header_host, header_port)) = &host_header
            && (!header_host.eq_ignore_ascii_case(&host) || header_port.unwrap_or(80) != port)
        {
            return Err(HeadError::Malformed(
                "the Host header names another host than the URI",
            ));
        }
        let path = if path.starts_with('?') {
            format!("/{path}")
        } else {
            path.to_owned()
        };
        (host, port, path)
    } else if target.starts_with('/') {
        let (host, port) = host_header.ok_or(HeadError::Malformed(
            "a request without a URI host has no Host header",
        ))?;
        (host, port.unwrap_or(80), target.to_owned())
    } else if target.contains("://") {
        return Err(HeadError::Unsupported(
            "only http:// is forwarded as a plain request; send https:// through CONNECT",
        ));
    } else {
        return Err(HeadError::Malformed(
            "the request target is neither a URI nor a path",
        ));
    };
    let mut body = 0u64;
    let mut lengths = headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("content-length"));
    if let Some((_, value)) = lengths.next() {
        body = std::str::from_utf8(value)
            .ok()
            .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|v| v.parse().ok())
            .ok_or(HeadError::Malformed("Content-Length is not a number"))?;
        if lengths.next().is_some() {
            return Err(HeadError::Malformed("more than one Content-Length header"));
        }
    }
    if headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("transfer-encoding"))
    {
        return Err(HeadError::Unsupported(
            "a request body with Transfer-Encoding is not forwarded; send it with a Content-Length",
        ));
    }
    let authority_text = if host.contains(':') {
        format!("[{host}]:{port}")
    } else if port == 80 {
        host.clone()
    } else {
        format!("{host}:{port}")
    };
    let mut upstream_head = format!("{method} {path} HTTP/1.1\r\nHost: {authority_text}\r\n").into_bytes();
    for (name, value) in headers {
        if NOT_FORWARDED.iter().any(|n| name.eq_ignore_ascii_case(n)) {
            continue;
        }
        upstream_head.extend_from_slice(name.as_bytes());
        upstream_head.extend_from_slice(b": ");
        upstream_head.extend_from_slice(value);
        upstream_head.extend_from_slice(b"\r\n");
    }
    upstream_head.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(RequestHead {
        host,
        port,
        kind: RequestKind::Http { upstream_head, body },
    })
}

/// `METHOD SP target SP HTTP/1.x`.
fn request_line_parts(line: &[u8]) -> Result<(&str, &str), HeadError> {
    let line = std::str::from_utf8(line).map_err(|_| HeadError::Malformed("the request line is not text"))?;
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HeadError::Malformed(
            "the request line is not `METHOD target HTTP/1.1`",
        ));
    };
    if method.is_empty() || !method.bytes().all(is_token) {
        return Err(HeadError::Malformed("the method is not a token"));
    }
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err(HeadError::Malformed("the version is not HTTP/1.0 or HTTP/1.1"));
    }
    if target.is_empty() || !target.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(HeadError::Malformed(
            "the request target holds a character a URI cannot",
        ));
    }
    Ok((method, target))
}

/// `name: value`; a line folded onto the previous (leading white space) and control characters are refused, so
/// that the headers mean one thing to the proxy and to the server.
fn header(line: &[u8]) -> Result<(&str, &[u8]), HeadError> {
    let colon = line
        .iter()
        .position(|&b| b == b':')
        .ok_or(HeadError::Malformed("a header line has no colon"))?;
    let (name, value) = line.split_at(colon);
    let value = value.get(1..).unwrap_or_default();
    if name.is_empty() || !name.iter().copied().all(is_token) {
        return Err(HeadError::Malformed("a header name is not a token"));
    }
    if value.iter().any(|&b| (b < 0x20 && b != b'\t') || b == 0x7f) {
        return Err(HeadError::Malformed("a header value holds a control character"));
    }
    let value = value.trim_ascii();
    let name = std::str::from_utf8(name).map_err(|_| HeadError::Malformed("a header name is not text"))?;
    Ok((name, value))
}

/// `host[:port]` or `[v6]:port`: the host without brackets, and the port if written (`default` when it is
/// optional).
fn authority(text: &str, default: Option<u16>) -> Result<(String, Option<u16>), HeadError> {
    if text.contains('@') {
        return Err(HeadError::Malformed("credentials in the authority"));
    }
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .ok_or(HeadError::Malformed("an unclosed `[` in the authority"))?;
        let port = match after {
            "" => None,
            _ => Some(
                after
                    .strip_prefix(':')
                    .ok_or(HeadError::Malformed("text after `]` in the authority"))?,
            ),
        };
        (host, port)
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    if host.is_empty() {
        return Err(HeadError::Malformed("the authority names no host"));
    }
    let port = port
        .map(|p| {
            p.parse::<u16>()
                .ok()
                .filter(|&p| p != 0)
                .ok_or(HeadError::Malformed("the port is not a number from 1 to 65535"))
        })
        .transpose()?;
    match (port, default) {
        (None, Some(default)) => Ok((host.to_owned(), Some(default))),
        (port, _) => Ok((host.to_owned(), port)),
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| text.get(prefix.len()..))
        .flatten()
}

/// A `tchar` of RFC 9110.
const fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'!' | b'#'
                | b'$'
                | b'%'
                | b'&'
                | b'\''
                | b'*'
                | b'+'
                | b'-'
                | b'.'
                | b'^'
                | b'_'
                | b'`'
                | b'|'
                | b'~'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> Result<RequestHead, HeadError> {
        parse(text.as_bytes())
    }

    fn upstream(text: &str) -> (String, u16, String, u64) {
        match head(text).unwrap() {
            RequestHead {
                host,
                port,
                kind: RequestKind::Http { upstream_head, body },
            } => (host, port, String::from_utf8(upstream_head).unwrap(), body),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn connect_names_host_and_port() {
        assert_eq!(
            head("CONNECT crates.io:443 HTTP/1.1\r\nHost: crates.io:443\r\n\r\n").unwrap(),
            RequestHead {
                host: "crates.io".into(),
                port: 443,
                kind: RequestKind::Tunnel
            }
        );
        let v6 = head("CONNECT [::1]:443 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 443));
        assert_eq!(
            head("CONNECT crates.io HTTP/1.1\r\n\r\n"),
            Err(HeadError::Malformed("CONNECT names no port"))
        );
    }

    #[test]
    fn a_plain_request_is_rebuilt_in_origin_form_for_one_request() {
        let (host, port, sent, body) = upstream(
            "POST http://Example.com:8080/a/b?q=1 HTTP/1.1\r\nHost: example.com:8080\r\nProxy-Authorization: x\r\n\
             Connection: keep-alive\r\nUser-Agent: t\r\nContent-Length: 3\r\n\r\n",
        );
        assert_eq!((host.as_str(), port, body), ("Example.com", 8080, 3));
        assert_eq!(
            sent,
            "POST /a/b?q=1 HTTP/1.1\r\nHost: Example.com:8080\r\nUser-Agent: t\r\nContent-Length: 3\r\n\
             Connection: close\r\n\r\n"
        );
        let (_, port, sent, _) = upstream("GET http://a.io HTTP/1.0\r\n\r\n");
        assert_eq!(port, 80);
        assert!(sent.starts_with("GET / HTTP/1.1\r\nHost: a.io\r\n"), "{sent}");
        // Sent without a proxy in mind: the Host header names the target.
        let (host, port, _, _) = upstream("GET /x HTTP/1.1\r\nHost: b.io:81\r\n\r\n");
        assert_eq!((host.as_str(), port), ("b.io", 81));
    }

    #[test]
    fn ambiguous_heads_are_refused() {
        for (text, why) in [
            (
                "GET http://allowed.io/ HTTP/1.1\r\nHost: evil.io\r\n\r\n",
                "the Host header names another host than the URI",
            ),
            (
                "GET / HTTP/1.1\r\nHost: a.io\r\nHost: b.io\r\n\r\n",
                "more than one Host header",
            ),
            (
                "GET / HTTP/1.1\r\n\r\n",
                "a request without a URI host has no Host header",
            ),
            (
                "GET http://a.io/ HTTP/1.1\r\n X-Folded: y\r\n\r\n",
                "a header name is not a token",
            ),
            (
                "GET http://a.io/ HTTP/1.1\r\nX: a\rb\r\n\r\n",
                "a line does not end with CRLF",
            ),
            (
                "GET http://a.io/ HTTP/1.1\r\nX: a\x01b\r\n\r\n",
                "a header value holds a control character",
            ),
            (
                "GET http://a.io/ HTTP/1.1\nX: y\r\n\r\n",
                "a line does not end with CRLF",
            ),
            (
                "GET http://u:p@a.io/ HTTP/1.1\r\n\r\n",
                "credentials in the authority",
            ),
            (
                "GET http://a.io:0/ HTTP/1.1\r\n\r\n",
                "the port is not a number from 1 to 65535",
            ),
            (
                "POST http://a.io/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                "more than one Content-Length header",
            ),
            (
                "GET http://a.io/ HTTP/2\r\n\r\n",
                "the version is not HTTP/1.0 or HTTP/1.1",
            ),
        ] {
            assert_eq!(head(text).map_err(HeadError::why), Err(why), "{text:?}");
        }
        assert!(matches!(
            head("POST http://a.io/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Err(HeadError::Unsupported(_))
        ));
        assert!(matches!(
            head("GET https://a.io/ HTTP/1.1\r\n\r\n"),
            Err(HeadError::Unsupported(_))
        ));
    }

    #[test]
    fn the_end_of_the_head_is_found() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: a\r\n\r\nbody"), Some(27));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: a\r\n"), None);
    }
}
