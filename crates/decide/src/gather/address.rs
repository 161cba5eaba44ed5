//! Whether a URL reaches this machine or its private network: loopback, link-local (a cloud's credential
//! endpoint), private and unique-local ranges, in every spelling a URL parser accepts (decimal, octal and hex
//! numbers, IPv4-mapped IPv6, a trailing dot), since the parser the fetching tool uses accepts them all alike.
//!
//! A name is not resolved here (the decision makes no network request), so a name is internal by its form: one
//! that embeds an internal address (`169.254.169.254.nip.io`, `10-0-0-5.sslip.io`: wildcard DNS services answer
//! with the address a name spells, and anyone can run one), one of the names reserved for local networks
//! (`.local`, `.lan`, `.home.arpa`, `.internal`, …), or a name of one label, which the resolver completes with the
//! local network's search domains. A public name that merely resolves to an internal address is not caught here;
//! inside the sandbox, the proxy resolves names itself and refuses internal addresses.

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
            } else if !fetched_by_name(&parsed) {
                return None;
            } else if let Some(why) = embedded_address(&name).and_then(ipv4_place) {
                return Some(format!(
                    "`{url}` names {why} inside a host name, which wildcard DNS services resolve to it"
                ));
            } else if local_name(&name) {
                "a name of the local network (a reserved local domain, or one label the local resolver completes)"
            } else {
                return None;
            }
        }
    };
    Some(format!("`{url}` reaches {why}"))
}

/// Whether a client resolves the URL's host with DNS: a web or file-transfer scheme (an MCP resource's
/// `repo://name/…` names no host of a network).
fn fetched_by_name(url: &Url) -> bool {
    matches!(url.scheme(), "http" | "https" | "ws" | "wss" | "ftp" | "ftps")
}

/// Domains reserved or customary for names that only a local network resolves (RFC 6761, 6762, 8375, and the
/// names routers and companies give their own networks).
const LOCAL_DOMAINS: [&str; 9] = [
    "local",
    "lan",
    "home.arpa",
    "internal",
    "intranet",
    "corp",
    "home",
    "localdomain",
    "private",
];

/// Whether `name` (lower case, no trailing dot) is of the local network: one label, or below a local domain.
fn local_name(name: &str) -> bool {
    !name.contains('.')
        || LOCAL_DOMAINS
            .iter()
            .any(|domain| name.strip_suffix(domain).is_some_and(|head| head.ends_with('.')))
}

/// The IPv4 address a host name spells, the way wildcard DNS services read it: four decimal labels in a row
/// (`a.10.0.0.5.nip.io`), or one label of four numbers joined by dashes (`10-0-0-5.sslip.io`) or of eight hex
/// digits (`0a000005.nip.io`). Of several, the first internal one that is not broadcast or multicast.
fn embedded_address(name: &str) -> Option<Ipv4Addr> {
    let labels: Vec<&str> = name.split('.').collect();
    let dotted = labels
        .windows(4)
        .filter_map(|four| four_octets(four.iter().copied()));
    let single = labels.iter().filter_map(|label| {
        // The label may carry a prefix before the address (`app-10-0-0-5`): its last four dashed parts.
        let parts: Vec<&str> = label.split('-').collect();
        if let Some(ip) = parts
            .len()
            .checked_sub(4)
            .and_then(|start| four_octets(parts.iter().skip(start).copied()))
        {
            return Some(ip);
        }
        let hex = parts.last()?;
        (hex.len() == 8 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| u32::from_str_radix(hex, 16).ok())
            .flatten()
            .map(Ipv4Addr::from)
    });
    // Broadcast and multicast addresses are left out: no service answers there, and one random hex label in
    // sixteen spells one.
    dotted
        .chain(single)
        .find(|ip| ipv4_place(*ip).is_some() && !ip.is_multicast() && !ip.is_broadcast())
}

/// The address four labels spell, each a decimal number of at most three digits below 256.
fn four_octets<'a>(labels: impl Iterator<Item = &'a str>) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let mut count = 0;
    for (slot, label) in octets.iter_mut().zip(labels) {
        if label.is_empty() || label.len() > 3 || !label.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *slot = label.parse().ok()?;
        count += 1;
    }
    (count == 4).then(|| Ipv4Addr::from(octets))
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
            "http://169.254.169.254.nip.io/latest/meta-data/iam/",
            "http://127.0.0.1.nip.io:8080/",
            "http://app.10.0.0.5.sslip.io/",
            "http://10-0-0-5.sslip.io/",
            "http://web-192-168-1-1.sslip.io/",
            "http://7f000001.nip.io/",
            "http://router.lan/",
            "http://nas.local/",
            "http://printer.home.arpa/",
            "http://api.corp/",
            "http://intranet/",
            "http://db.internal./",
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
            "http://8.8.8.8.nip.io/",
            "https://release-1-2-3-4.example.com/",
            "https://deadbeef.example.com/",
            "https://example.local.example.com/",
            "https://v1.2.3.example.com/",
            "https://e0000001.cdn.example.com/",
            "not a url",
        ] {
            assert_eq!(internal_place(url), None, "{url}");
        }
    }
}
