//! PEM files that hold only what anyone may read: certificates, certificate revocation lists, public keys,
//! certificate requests. A CA bundle (certifi's `cacert.pem`, which every pip and requests installation carries)
//! is such a file; a file named like a key (`*.pem`, `*.key`) that is one holds no secret.
//!
//! Hand-written: only the block labels are read, which needs no PEM parser (a parser would decode the base64 of
//! every certificate of a bundle for nothing).

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

const BEGIN: &[u8] = b"-----BEGIN ";

/// Whether `content` is text holding at least one PEM block and every one of its blocks is public (a certificate,
/// a CRL, a public key, a certificate request): no private key, no block of another kind, no binary content (a
/// DER or PKCS#12 key has no PEM block to tell it by).
pub fn public_pem(content: &[u8]) -> bool {
    if content.contains(&0) {
        return false;
    }
    let mut blocks = 0usize;
    let mut rest = content;
    while let Some(at) = find(rest, BEGIN) {
        let after = rest.get(at + BEGIN.len()..).unwrap_or_default();
        let Some(end) = find(after, b"-----") else {
            return false;
        };
        let label = after.get(..end).unwrap_or_default();
        if !PUBLIC_LABELS.contains(&label) {
            return false;
        }
        blocks += 1;
        rest = after.get(end..).unwrap_or_default();
    }
    blocks > 0
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

#[cfg(test)]
mod tests {
    use super::public_pem;

    const CERT: &str = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n";

    #[test]
    fn a_bundle_of_certificates_is_public() {
        let bundle = format!("# Issuer: CN=Root CA\n{CERT}\n# Issuer: CN=Other\n{CERT}");
        assert!(public_pem(bundle.as_bytes()));
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
        // No block at all (a DER or PKCS#12 file, or text), or binary content around a certificate.
        assert!(!public_pem(b"0\x82\x04\xa40\x82\x03\x8c"));
        assert!(!public_pem(b"just text\n"));
        assert!(!public_pem(format!("{CERT}\0").as_bytes()));
    }
}
