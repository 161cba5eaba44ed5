//! The bearer token: from `--token`, else `AGENT_GUARD_TOKEN`, else generated once and kept with mode 0600.

use std::io::Write as _;
use std::net::SocketAddr;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;

use crate::error::{Result, ServeError};

/// The least randomness a token must carry, in bits, as estimated by [`check_strength`].
pub(crate) const MIN_TOKEN_BITS: f64 = 128.0;

/// The fewest different characters a token may be made of: a random one of the shortest accepted length uses
/// far more.
const MIN_DISTINCT_CHARS: usize = 8;

/// The name of the generated token's file in the state directory.
pub const TOKEN_FILE: &str = "server-token";

/// Where the server's token came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenSource {
    /// `--token`.
    Flag,
    /// `AGENT_GUARD_TOKEN`.
    Environment,
    /// Generated now and stored in the state directory.
    Generated,
    /// Generated on an earlier start and read from the state directory.
    Stored,
}

/// The token a server uses and where it came from. A token named by the user (`flag`, then `env`) wins; without
/// one, a non-loopback `listen` address is refused, and on loopback the token of `state_dir/server-token` is
/// used, generated (32 random bytes as hex, mode 0600) on the first start. A stored file that others may read is
/// refused rather than trusted.
pub fn resolve_token(
    flag: Option<&str>,
    env: Option<&str>,
    state_dir: &Path,
    listen: SocketAddr,
) -> Result<(String, TokenSource)> {
    let chosen = flag.map(|t| (t, TokenSource::Flag)).or_else(|| {
        env.filter(|t| !t.is_empty())
            .map(|t| (t, TokenSource::Environment))
    });
    if let Some((token, source)) = chosen {
        check_strength(token)?;
        return Ok((token.to_owned(), source));
    }
    if !listen.ip().is_loopback() {
        return Err(ServeError::TokenRequired {
            listen: listen.to_string(),
        });
    }
    let path = state_dir.join(TOKEN_FILE);
    let file_error = |why: String| ServeError::TokenFile {
        path: path.clone(),
        why,
    };
    match std::fs::metadata(&path) {
        Ok(meta) => {
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(file_error(format!(
                    "mode {mode:o} lets others read it; `chmod 600` it or remove it to get a new token"
                )));
            }
            let token = std::fs::read_to_string(&path).map_err(|e| file_error(e.to_string()))?;
            let token = token.trim().to_owned();
            check_strength(&token)?;
            Ok((token, TokenSource::Stored))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            agent_hooks::create_dir_all_ignored(state_dir).map_err(|e| file_error(e.to_string()))?;
            let token = random_hex(32)?;
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
                .map_err(|e| file_error(e.to_string()))?;
            file.write_all(format!("{token}\n").as_bytes())
                .map_err(|e| file_error(e.to_string()))?;
            Ok((token, TokenSource::Generated))
        }
        Err(e) => Err(file_error(e.to_string())),
    }
}

/// Refuses a token that cannot be random enough: one with whitespace, control or non-ASCII characters (it travels
/// in an HTTP header, and whitespace around it would be lost), one made of few different characters or mostly of
/// one, and one whose length and alphabet carry fewer than [`MIN_TOKEN_BITS`]. The estimate is the length times
/// the bits of a character drawn from the classes the token uses (hex digits, or digits, lower case, upper case,
/// punctuation): an upper bound of its randomness, so a token that fails it is certainly weak, and 32 hex digits
/// (128 random bits) pass it.
pub(crate) fn check_strength(token: &str) -> Result<()> {
    let weak = |why: String| Err(ServeError::WeakToken { why });
    if token.is_empty() {
        return weak("it is empty".to_owned());
    }
    if let Some((at, c)) = token
        .chars()
        .enumerate()
        .find(|(_, c)| c.is_whitespace() || c.is_control())
    {
        return weak(format!(
            "it contains whitespace or a control character ({:?} at position {})",
            c,
            at + 1
        ));
    }
    if let Some(c) = token.chars().find(|c| !c.is_ascii_graphic()) {
        return weak(format!(
            "it contains `{c}`, which is not printable ASCII (the token travels in an HTTP header)"
        ));
    }
    let length = token.len();
    type Class = (fn(&u8) -> bool, u32);
    let classes: [Class; 4] = [
        (u8::is_ascii_digit, 10),
        (u8::is_ascii_lowercase, 26),
        (u8::is_ascii_uppercase, 26),
        (u8::is_ascii_punctuation, 32),
    ];
    let all = |accept: fn(&u8) -> bool| token.as_bytes().iter().all(accept);
    let hex = all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
        || all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(b));
    let alphabet: u32 = if hex {
        16
    } else {
        classes
            .iter()
            .filter(|(class, _)| token.as_bytes().iter().any(class))
            .map(|(_, size)| size)
            .sum()
    };
    #[expect(clippy::cast_precision_loss, reason = "a token's length is far below 2^52")]
    let bits = length as f64 * f64::from(alphabet.max(2)).log2();
    if bits < MIN_TOKEN_BITS {
        return weak(format!(
            "{length} characters from an alphabet of {alphabet} carry at most {bits:.0} random bits; at least \
             {MIN_TOKEN_BITS:.0} are needed (32 hex digits, or 22 letters and digits)"
        ));
    }
    let mut counts = [0_usize; 128];
    for byte in token.bytes() {
        if let Some(count) = counts.get_mut(usize::from(byte)) {
            *count += 1;
        }
    }
    let distinct = counts.iter().filter(|&&n| n > 0).count();
    let most = counts.iter().copied().max().unwrap_or(0);
    if distinct < MIN_DISTINCT_CHARS || most * 2 > length {
        return weak(format!(
            "it repeats characters: {length} characters, {distinct} different, the most common {most} times"
        ));
    }
    Ok(())
}

/// `bytes` random bytes from the operating system, as lowercase hex: tokens and the ids of asks.
pub(crate) fn random_hex(bytes: usize) -> Result<String> {
    let mut buffer = vec![0_u8; bytes];
    getrandom::fill(&mut buffer).map_err(|e| ServeError::Random(e.to_string()))?;
    Ok(buffer.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares a presented token with the server's in time independent of where they differ.
pub(crate) fn token_matches(presented: &[u8], expected: &[u8]) -> bool {
    presented.len() == expected.len()
        && presented
            .iter()
            .zip(expected)
            .fold(0_u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local() -> SocketAddr {
        "127.0.0.1:0".parse().unwrap()
    }

    #[test]
    fn flag_then_environment_then_a_stored_file() {
        let dir = tempfile::tempdir().unwrap();
        let strong = "3f9c0a7e5b21d8446c0e9f1a2b7d5c83";
        assert_eq!(
            resolve_token(Some(strong), Some("ignored-ignored-ignored"), dir.path(), local()).unwrap(),
            (strong.to_owned(), TokenSource::Flag)
        );
        assert_eq!(
            resolve_token(None, Some(strong), dir.path(), local()).unwrap().1,
            TokenSource::Environment
        );
        let (made, source) = resolve_token(None, None, dir.path(), local()).unwrap();
        assert_eq!(source, TokenSource::Generated);
        assert_eq!(made.len(), 64);
        let mode = std::fs::metadata(dir.path().join(TOKEN_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            resolve_token(None, None, dir.path(), local()).unwrap(),
            (made, TokenSource::Stored)
        );
    }

    #[test]
    fn refusals() {
        let dir = tempfile::tempdir().unwrap();
        let public: SocketAddr = "0.0.0.0:8787".parse().unwrap();
        assert!(matches!(
            resolve_token(None, None, dir.path(), public),
            Err(ServeError::TokenRequired { .. })
        ));
        std::fs::write(dir.path().join(TOKEN_FILE), "3f9c0a7e5b21d8446c0e9f1a2b7d5c83\n").unwrap();
        std::fs::set_permissions(
            dir.path().join(TOKEN_FILE),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let error = resolve_token(None, None, dir.path(), local())
            .unwrap_err()
            .to_string();
        assert!(error.contains("mode 644"), "{error}");
    }

    /// Each weak kind of token is refused with its problem named; random ones of the shortest lengths pass.
    #[test]
    fn strength() {
        let refused = [
            ("", "empty"),
            ("                ", "whitespace"),
            ("3f9c0a7e5b21d844 6c0e9f1a2b7d5c83", "whitespace"),
            ("3f9c0a7e5b21d8446c0e9f1a2b7d5c83\u{7}", "control"),
            ("3f9c0a7e5b21d8446c0e9f1a2b7d5c83é", "not printable ASCII"),
            (&"a".repeat(64), "repeats characters"),
            (&"ab".repeat(40), "repeats characters"),
            (
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa0123456789",
                "repeats characters",
            ),
            ("short", "random bits"),
            ("3f9c0a7e5b21d8446c0e9f1a2b7d5c8", "124 random bits"),
            ("3F9C0A7E5B21D8446C0E9F1A2B7D5C8", "124 random bits"),
            ("Zq8vR2mK7xP4wL9nT3bY6", "at most 125 random bits"),
            ("correct-horse-battery", "random bits"),
        ];
        for (token, problem) in refused {
            let error = check_strength(token).map(|()| token).unwrap_err().to_string();
            assert!(error.contains(problem), "{token:?}: {error}");
        }
        for token in [
            "3f9c0a7e5b21d8446c0e9f1a2b7d5c83",
            "3F9C0A7E5B21D8446C0E9F1A2B7D5C83",
            "Zq8vR2mK7xP4wL9nT3bY6h",
            "test-token-0123456789abcdef",
            &random_hex(32).unwrap(),
        ] {
            assert!(check_strength(token).is_ok(), "{token}");
        }
    }

    #[test]
    fn comparison() {
        assert!(token_matches(b"abc", b"abc"));
        assert!(!token_matches(b"abd", b"abc"));
        assert!(!token_matches(b"ab", b"abc"));
    }
}
