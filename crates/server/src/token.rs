//! The bearer token: from `--token`, else `AGENT_GUARD_TOKEN`, else generated once and kept with mode 0600.

use std::io::Write as _;
use std::net::SocketAddr;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;

use crate::error::{Result, ServeError};

/// The shortest token accepted: 16 characters of a generated token carry 64 bits.
pub(crate) const MIN_TOKEN_CHARS: usize = 16;

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

fn check_strength(token: &str) -> Result<()> {
    let length = token.chars().count();
    if length < MIN_TOKEN_CHARS {
        return Err(ServeError::WeakToken {
            length,
            minimum: MIN_TOKEN_CHARS,
        });
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
        let strong = "0123456789abcdef0123";
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
        assert!(matches!(
            resolve_token(Some("short"), None, dir.path(), local()),
            Err(ServeError::WeakToken { length: 5, .. })
        ));
        std::fs::write(dir.path().join(TOKEN_FILE), "0123456789abcdef0123\n").unwrap();
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

    #[test]
    fn comparison() {
        assert!(token_matches(b"abc", b"abc"));
        assert!(!token_matches(b"abd", b"abc"));
        assert!(!token_matches(b"ab", b"abc"));
    }
}
