//! The server name (SNI) of a TLS ClientHello, read from the first bytes of a tunnel.
//!
//! Hand-written rather than a TLS library: the proxy needs one field of one message, never decrypts anything, and
//! must not pull a TLS stack (and its build) into the sandbox crate. The format is small and fixed (RFC 8446 §4.1.2,
//! RFC 6066 §3): records of type 22 carry the handshake; the ClientHello's extensions hold at most one `server_name`
//! with at most one host name. Anything else (a second name, a truncated length, an SSLv2 hello) is refused rather
//! than guessed at.

/// The largest ClientHello the proxy waits for (a post-quantum key share makes one about 1.8 KiB).
pub(crate) const MAX_HELLO: usize = 32 * 1024;

/// What the first bytes of a tunnel say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Hello {
    /// More bytes are needed.
    Incomplete,
    /// A ClientHello naming this server (as sent; compare it normalized).
    Name(String),
    /// A ClientHello without a server name.
    NoName,
    /// Not a TLS ClientHello, or one this parser refuses.
    NotTls(&'static str),
}

/// Reads the ClientHello at the start of `bytes`, which may span several handshake records.
pub(crate) fn client_hello(bytes: &[u8]) -> Hello {
    let mut handshake: Vec<u8> = Vec::new();
    let mut rest = bytes;
    loop {
        let mut record = Reader(rest);
        let (Some(kind), Some(_version), Some(length)) = (record.u8(), record.u16(), record.u16()) else {
            return Hello::Incomplete;
        };
        if kind != 22 {
            return Hello::NotTls("the tunnel does not start with a TLS handshake");
        }
        if length == 0 || length > 16_384 + 2_048 {
            return Hello::NotTls("a TLS record of impossible length");
        }
        let Some(fragment) = record.take(usize::from(length)) else {
            return Hello::Incomplete;
        };
        handshake.extend_from_slice(fragment);
        rest = record.0;
        let mut message = Reader(&handshake);
        let (Some(message_type), Some(message_length)) = (message.u8(), message.u24()) else {
            continue;
        };
        if message_type != 1 {
            return Hello::NotTls("the first handshake message is not a ClientHello");
        }
        if message_length > MAX_HELLO {
            return Hello::NotTls("a ClientHello longer than the proxy reads");
        }
        if let Some(body) = message.take(message_length) {
            return server_name(body);
        }
    }
}

/// The `server_name` extension of a ClientHello body.
fn server_name(body: &[u8]) -> Hello {
    let mut hello = Reader(body);
    let skipped = hello.take(2 + 32).is_some()
        && hello.u8().and_then(|n| hello.take(usize::from(n))).is_some()
        && hello.u16().and_then(|n| hello.take(usize::from(n))).is_some()
        && hello.u8().and_then(|n| hello.take(usize::from(n))).is_some();
    if !skipped {
        return Hello::NotTls("a truncated ClientHello");
    }
    if hello.0.is_empty() {
        return Hello::NoName;
    }
    let Some(extensions) = hello.u16().and_then(|n| hello.take(usize::from(n))) else {
        return Hello::NotTls("a truncated ClientHello");
    };
    let mut extensions = Reader(extensions);
    let mut found = None;
    while !extensions.0.is_empty() {
        let (Some(kind), Some(data)) = (
            extensions.u16(),
            extensions.u16().and_then(|n| extensions.take(usize::from(n))),
        ) else {
            return Hello::NotTls("a truncated ClientHello extension");
        };
        if kind != 0 {
            continue;
        }
        if found.is_some() {
            return Hello::NotTls("two server_name extensions");
        }
        found = Some(data);
    }
    let Some(data) = found else {
        return Hello::NoName;
    };
    let mut list = Reader(data);
    let Some(entries) = list.u16().and_then(|n| list.take(usize::from(n))) else {
        return Hello::NotTls("a truncated server_name extension");
    };
    let mut entries = Reader(entries);
    let mut name = None;
    while !entries.0.is_empty() {
        let (Some(kind), Some(value)) = (
            entries.u8(),
            entries.u16().and_then(|n| entries.take(usize::from(n))),
        ) else {
            return Hello::NotTls("a truncated server_name entry");
        };
        if kind != 0 {
            continue;
        }
        if name.is_some() {
            return Hello::NotTls("two host names in server_name");
        }
        name = Some(value);
    }
    match name.map(std::str::from_utf8) {
        Some(Ok(name)) => Hello::Name(name.to_owned()),
        Some(Err(_)) => Hello::NotTls("a server name that is not text"),
        None => Hello::NoName,
    }
}

/// A cursor over big-endian fields.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1)?.first().copied()
    }

    fn u16(&mut self) -> Option<u16> {
        let bytes = self.take(2)?;
        Some(u16::from_be_bytes(bytes.try_into().ok()?))
    }

    fn u24(&mut self) -> Option<usize> {
        let bytes = self.take(3)?;
        Some(bytes.iter().fold(0usize, |n, &b| (n << 8) | usize::from(b)))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A ClientHello as a TLS 1.3 client sends it, with `names` in its server_name extension (none: no extension)
    /// and a filler extension, split into records of at most `record` bytes.
    pub(crate) fn hello(names: &[&str], record: usize) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend([7u8; 32]);
        body.extend([32]);
        body.extend([9u8; 32]);
        body.extend([0, 4, 0x13, 0x01, 0x13, 0x02]);
        body.extend([1, 0]);
        let mut extensions = Vec::new();
        // supported_versions, then server_name.
        extensions.extend([0, 43, 0, 3, 2, 3, 4]);
        if !names.is_empty() {
            let mut list = Vec::new();
            for name in names {
                list.push(0);
                list.extend(u16::try_from(name.len()).unwrap().to_be_bytes());
                list.extend(name.as_bytes());
            }
            let mut data = u16::try_from(list.len()).unwrap().to_be_bytes().to_vec();
            data.extend(list);
            extensions.extend([0, 0]);
            extensions.extend(u16::try_from(data.len()).unwrap().to_be_bytes());
            extensions.extend(data);
        }
        body.extend(u16::try_from(extensions.len()).unwrap().to_be_bytes());
        body.extend(extensions);
        let mut handshake = vec![1];
        handshake.extend(&u32::try_from(body.len()).unwrap().to_be_bytes()[1..]);
        handshake.extend(body);
        let mut out = Vec::new();
        for chunk in handshake.chunks(record) {
            out.extend([22, 3, 1]);
            out.extend(u16::try_from(chunk.len()).unwrap().to_be_bytes());
            out.extend(chunk);
        }
        out
    }

    #[test]
    fn the_server_name_is_read_from_one_or_several_records() {
        for record in [16_384, 50, 7] {
            let bytes = hello(&["crates.io"], record);
            assert_eq!(client_hello(&bytes), Hello::Name("crates.io".into()), "{record}");
            // Every proper prefix asks for more.
            for end in 0..bytes.len() {
                assert_eq!(client_hello(&bytes[..end]), Hello::Incomplete, "{record} {end}");
            }
        }
    }

    #[test]
    fn no_name_two_names_and_other_protocols_are_told_apart() {
        assert_eq!(client_hello(&hello(&[], 16_384)), Hello::NoName);
        assert!(matches!(
            client_hello(&hello(&["a.io", "b.io"], 16_384)),
            Hello::NotTls(_)
        ));
        assert!(matches!(
            client_hello(b"GET / HTTP/1.1\r\n\r\n"),
            Hello::NotTls(_)
        ));
        assert!(matches!(
            client_hello(b"SSH-2.0-OpenSSH_9.6\r\n"),
            Hello::NotTls(_)
        ));
        // A handshake record whose message is not a ClientHello (a ServerHello).
        let mut server = hello(&["a.io"], 16_384);
        server[5] = 2;
        assert!(matches!(client_hello(&server), Hello::NotTls(_)));
        // A length that runs past the message.
        let mut truncated = hello(&["crates.io"], 16_384);
        let last = truncated.len() - 1;
        truncated.truncate(last);
        let body_length = truncated.len() - 9;
        truncated[6..9].copy_from_slice(&u32::try_from(body_length).unwrap().to_be_bytes()[1..]);
        let record_length = u16::try_from(truncated.len() - 5).unwrap();
        truncated[3..5].copy_from_slice(&record_length.to_be_bytes());
        assert!(
            matches!(client_hello(&truncated), Hello::NotTls(_)),
            "{:?}",
            client_hello(&truncated)
        );
    }
}
