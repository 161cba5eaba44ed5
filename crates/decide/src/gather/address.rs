//! Whether a URL reaches this machine or its private network: loopback, link-local (a cloud's credential
//! endpoint), private and unique-local ranges, in every spelling a URL parser accepts (decimal, octal and hex
//! numbers, IPv4-mapped IPv6, a trailing dot), since the parser the fetching tool uses accepts them all alike.

use std::net::{Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

/// What internal place `url` reaches, in words for a reason; `None` for a public host or a URL without one.
pub(super) fn internal_place(url: &str) -> Option<String> {
    let parsed = Url::parse(url.trim()).ok()?;
    let why = match parsed.host()? {
        Host::Ipv4(ip) => ipv4_place(ip)?,
        Host::Ipv6(ip) => match ip.to_ipv4_mapped() {
            Some(v4) => ipv4_place(v4)?,
            None => ipv6_place(ip)?,
        },
        Host::Domain(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            if name == "localhost" || name.ends_with(".localhost") {
                "this machine (loopback)"
            } else if name == "metadata.google.internal" || name == "metadata" {
                "the cloud's instance metadata, which serves credentials"
            } else {
                return None;
            }
        }
    };
    Some(format!("`{url}` reaches {why}"))
}

fn ipv4_place(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() || ip.is_unspecified() {
        Some("this machine (loopback)")
    } else if ip.is_link_local() {
        Some("a link-local address (where clouds serve instance credentials)")
    } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        Some("a private network address")
    } else if ip.is_broadcast() || ip.is_multicast() {
        Some("a broadcast or multicast address")
    } else {
        None
    }
}

fn ipv6_place(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments().first().copied().unwrap_or_default();
    if ip.is_loopback() || ip.is_unspecified() {
        Some("this machine (loopback)")
    } else if first & 0xffc0 == 0xfe80 {
        Some("a link-local address (where clouds serve instance credentials)")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a unique-local (private) address")
    } else if let Some(v4) = ip.to_ipv4() {
        ipv4_place(v4)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_an_internal_address_is_found() {
        for url in [
            "http://127.0.0.1:8080/",
            "http://localhost:3000/health",
            "http://LOCALHOST./",
            "http://app.localhost/",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://017700000001/",
            "http://127.1/",
            "http://0.0.0.0:9000/",
            "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:a9fe:a9fe]/",
            "http://[fd00:ec2::254]/",
            "http://[fe80::1]/",
            "http://10.0.0.5/",
            "http://172.16.3.4/",
            "http://192.168.1.1/",
            "http://100.100.100.200/",
            "https://127.0.0.1./",
        ] {
            assert!(internal_place(url).is_some(), "{url}");
        }
    }

    #[test]
    fn public_hosts_are_not_internal() {
        for url in [
            "https://example.com/",
            "https://docs.rs/url",
            "http://8.8.8.8/",
            "http://[2606:4700::1111]/",
            "https://localhost.example.com/",
            "not a url",
        ] {
            assert_eq!(internal_place(url), None, "{url}");
        }
    }
}
