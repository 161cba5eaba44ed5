//! PEM files that hold only what anyone may read: certificates, certificate revocation lists, public keys,
//! certificate requests. A CA bundle (certifi's `cacert.pem`, which every pip and requests installation carries)
//! is such a file; a file named like a key (`*.pem`, `*.key`) that is one holds no secret.
//!
//! Hand-written: only the file's lines are read (armour, base64, comments), which needs no PEM parser (a parser
//! would decode the base64 of every certificate of a bundle for nothing).

/// The labels of the PEM blocks (`-----BEGIN <label>-----`) that hold nothing secret (RFC 7468).
const PUBLIC_LABELS: [&[u8]; 7] = [
    b"CERTIFICATE",
    b"TRUSTED CERTIFICATE",
    b"X509 CRL",
    b"PUBLIC KEY",
    b"CERTIFICATE REQUEST",
    b"NEW CERTIFICATE REQUEST",
    b"PKCS7",
];

/// Whether `content` is a file of public PEM blocks alone: at least one block, every block public (a certificate,
/// a CRL, a public key, a certificate request) with a base64 body, and outside the blocks nothing but blank lines
/// and `#` comments (as a CA bundle has them). Anything else (a private key, a block of another kind, key material
/// without armour beside a certificate, a JWK, a PuTTY key, hex, binary bytes) makes the file not public.
pub fn public_pem(content: &[u8]) -> bool {
    let mut blocks = 0usize;
    // The label of the block the line is in, if any.
    let mut open: Option<&[u8]> = None;
    for line in content.split(|&byte| byte == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let trimmed = line.trim_ascii();
        match open {
            None if trimmed.is_empty() || trimmed.starts_with(b"#") => {}
            None => match armour(trimmed, b"BEGIN") {
                Some(label) if PUBLIC_LABELS.contains(&label) => open = Some(label),
                _ => return false,
            },
            Some(label) => {
                if let Some(end) = armour(trimmed, b"END") {
                    if end != label {
                        return false;
                    }
                    open = None;
                    blocks += 1;
                } else if !trimmed
                    .iter()
                    .all(|&byte| byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'='))
                {
                    return false;
                }
            }
        }
    }
    open.is_none() && blocks > 0
}

/// The label of an armour line `-----BEGIN <label>-----` (or `END`), if `line` is one.
fn armour<'a>(line: &'a [u8], which: &[u8]) -> Option<&'a [u8]> {
    let rest = line
        .strip_prefix(b"-----")?
        .strip_prefix(which)?
        .strip_prefix(b" ")?;
    rest.strip_suffix(b"-----")
}

#[cfg(test)]
mod tests {
    use super::public_pem;

    const CERT: &str = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n";

    #[test]
    fn a_bundle_of_certificates_is_public() {
        let bundle = format!("# Issuer: CN=Root CA\n{CERT}\n# Issuer: CN=Other\n{CERT}");
        assert!(public_pem(bundle.as_bytes()));
        assert!(public_pem(bundle.replace('\n', "\r\n").as_bytes()));
        assert!(public_pem(
            b"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n"
        ));
    }

    #[test]
    fn a_private_key_or_anything_else_is_not() {
        for block in [
            "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49\n-----END PRIVATE KEY-----\n",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n",
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqhkiG\n-----END ENCRYPTED PRIVATE KEY-----\n",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXkt\n-----END OPENSSH PRIVATE KEY-----\n",
            "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n",
            "-----BEGIN UNKNOWN",
        ] {
            // Alone, or after a certificate (a certificate and its key in one file).
            assert!(!public_pem(block.as_bytes()), "{block}");
            assert!(!public_pem(format!("{CERT}{block}").as_bytes()), "{block}");
        }
        // Key material without armour beside a certificate: a PKCS#8 body, a JWK, a PuTTY key, hex, SSH2 markers.
        for beside in [
            "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n",
            "{\"kty\":\"EC\",\"d\":\"Vc8_UNPxalR9zDYAjQIfjojUDiQuGnSJrFEEzZPT\"}\n",
            "PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\nAAAAIHb1\n",
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n",
            "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nP2/56wAAA\n---- END SSH2 ENCRYPTED PRIVATE KEY ----\n",
        ] {
            assert!(!public_pem(format!("{CERT}{beside}").as_bytes()), "{beside}");
            assert!(!public_pem(format!("{beside}{CERT}").as_bytes()), "{beside}");
        }
        // A block left open, or closed under another label.
        assert!(!public_pem(b"-----BEGIN CERTIFICATE-----\nMIIB\n"));
        assert!(!public_pem(
            b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END PRIVATE KEY-----\n"
        ));
        // No block at all (a DER or PKCS#12 file, or text), or binary content around a certificate.
        assert!(!public_pem(b"0\x82\x04\xa40\x82\x03\x8c"));
        assert!(!public_pem(b"just text\n"));
        assert!(!public_pem(format!("{CERT}\0").as_bytes()));
    }
}
