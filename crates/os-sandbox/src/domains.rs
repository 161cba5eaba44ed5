//! The domains a sandboxed command may reach (`agentGuard.network`): patterns, the default list of package
//! registries, and the verdict on a host.
//!
//! A host is reached by name only: an address literal (`93.184.216.34`, `[::1]`) never matches a pattern, so a
//! command cannot step around a name check by resolving the name itself. Ports 80 and 443 are implied; a pattern
//! that names a port (`registry.local:8080`) allows that port alone.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

/// The package registries the common tool chains fetch from, allowed unless a deny pattern names them: cargo,
/// npm and yarn, pip, the Go module proxy, Maven Central and RubyGems, with the hosts their files come from.
pub(crate) const REGISTRY_DOMAINS: &[&str] = &[
    "crates.io",
    "index.crates.io",
    "static.crates.io",
    "registry.npmjs.org",
    "registry.yarnpkg.com",
    "pypi.org",
    "files.pythonhosted.org",
    "proxy.golang.org",
    "sum.golang.org",
    "repo.maven.apache.org",
    "repo1.maven.org",
    "rubygems.org",
    "index.rubygems.org",
];

/// One domain pattern: a host name (`crates.io`), or every name below a domain (`*.npmjs.org`, which does not
/// match `npmjs.org` itself), with an optional port.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DomainPattern {
    /// The name, lower case, without the `*.` and without a trailing dot.
    name: String,
    /// Whether the pattern matches the names below `name` (written `*.name`) rather than `name` itself.
    below: bool,
    /// The one port allowed; `None` allows 80 and 443.
    port: Option<u16>,
}

/// Why a text is not a domain pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a domain pattern: {why} (write a host name such as `crates.io` or `*.npmjs.org`)")]
pub struct DomainPatternError {
    /// The pattern as written.
    pub text: String,
    /// What is wrong with it.
    pub why: &'static str,
}

impl FromStr for DomainPattern {
    type Err = DomainPatternError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let fail = |why| DomainPatternError {
            text: text.to_owned(),
            why,
        };
        let (host, port) = match text.rsplit_once(':') {
            Some((host, port)) => {
                let port = port.parse::<u16>().ok().filter(|p| *p != 0);
                (
                    host,
                    Some(port.ok_or_else(|| fail("the port is not a number from 1 to 65535"))?),
                )
            }
            None => (text, None),
        };
        let (below, host) = match host.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, host),
        };
        let name = normalize_host(host).ok_or_else(|| {
            if host.parse::<IpAddr>().is_ok() {
                fail("an address is not a domain; the proxy reaches hosts by name only")
            } else {
                fail("a host name is labels of letters, digits and `-` joined by dots, with `*.` only in front")
            }
        })?;
        Ok(Self { name, below, port })
    }
}

impl fmt::Display for DomainPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.below {
            f.write_str("*.")?;
        }
        f.write_str(&self.name)?;
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

impl DomainPattern {
    /// Whether the pattern matches `host` (lower case, without a trailing dot) on `port`.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        let port_ok = self.port.map_or(port == 80 || port == 443, |p| p == port);
        let name_ok = if self.below {
            host.strip_suffix(self.name.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.'))
        } else {
            host == self.name
        };
        port_ok && name_ok
    }
}

/// A host name in the form patterns are matched against: lower case, without a trailing dot; `None` for an
/// address literal or a text that is no host name (empty labels, characters outside letters, digits and `-`,
/// a label over 63 bytes, a name over 253).
pub(crate) fn normalize_host(host: &str) -> Option<String> {
    let host = host.strip_suffix('.').unwrap_or(host);
    let bracketed = host.starts_with('[');
    if bracketed || host.parse::<IpAddr>().is_ok() || host.is_empty() || host.len() > 253 {
        return None;
    }
    let valid_label = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    let labels_ok = host.split('.').all(valid_label);
    // A name of digits and dots alone (`2130706433`, `0x7f.1`) is an address in some resolver's spelling.
    let numeric = host
        .split('.')
        .next_back()
        .is_some_and(|last| last.bytes().all(|b| b.is_ascii_digit()) || last.starts_with("0x"));
    (labels_ok && !numeric).then(|| host.to_ascii_lowercase())
}

/// What [`DomainPolicy::verdict`] says of a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DomainVerdict<'a> {
    /// An allow pattern matches and no deny pattern does.
    Allowed(&'a DomainPattern),
    /// A deny pattern matches (deny wins over allow).
    Denied(&'a DomainPattern),
    /// No pattern matches, or the host is no name (an address literal).
    NotListed,
}

/// The domains a sandboxed command may reach: allow patterns (the registries by default, then the user's) and deny
/// patterns, which win.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainPolicy {
    allow: Vec<DomainPattern>,
    deny: Vec<DomainPattern>,
    /// The services on this machine the proxy forwards to, each one host and port a deliberate allow granted.
    loopback: Vec<LoopbackGrant>,
    /// The ports of this machine's loopback that the proxy reaches in the namespace of a background run of the
    /// same project (a run that writes one of `service_roots`) listening there, through that run: a server the
    /// agent started, contained by its own sandbox.
    services: Vec<u16>,
    service_roots: Vec<std::path::PathBuf>,
    /// Whether the proxy reaches the `services` alone, no domain and no other service on this machine.
    services_only: bool,
}

impl Default for DomainPolicy {
    /// The package registries (crates.io, npm, PyPI, the Go module proxy, Maven Central, RubyGems) and nothing else.
    fn default() -> Self {
        let allow = REGISTRY_DOMAINS
            .iter()
            .filter_map(|name| name.parse().ok())
            .collect();
        Self {
            allow,
            deny: Vec::new(),
            loopback: Vec::new(),
            services: Vec::new(),
            service_roots: Vec::new(),
            services_only: false,
        }
    }
}

impl DomainPolicy {
    /// A policy of exactly these patterns, without the registries.
    pub const fn new(allow: Vec<DomainPattern>, deny: Vec<DomainPattern>) -> Self {
        Self {
            allow,
            deny,
            loopback: Vec::new(),
            services: Vec::new(),
            service_roots: Vec::new(),
            services_only: false,
        }
    }

    /// Adds services on this machine the proxy forwards to.
    pub fn allow_loopback(&mut self, grants: impl IntoIterator<Item = LoopbackGrant>) {
        self.loopback.extend(grants);
    }

    /// The services on this machine the proxy forwards to.
    pub fn loopback(&self) -> &[LoopbackGrant] {
        &self.loopback
    }

    /// Adds ports of this machine's loopback reached only where a background run of the project of `roots`
    /// listens on them, in that run's namespace.
    pub fn allow_services(&mut self, ports: impl IntoIterator<Item = u16>, roots: &[std::path::PathBuf]) {
        self.services.extend(ports);
        self.service_roots.extend(roots.iter().cloned());
    }

    /// Makes the proxy reach the servers of [`allow_services`](Self::allow_services) alone.
    pub const fn only_services(&mut self) {
        self.services_only = true;
    }

    /// Whether the proxy reaches the servers of [`allow_services`](Self::allow_services) alone.
    pub const fn services_only(&self) -> bool {
        self.services_only
    }

    /// The ports of [`allow_services`](Self::allow_services).
    pub fn services(&self) -> &[u16] {
        &self.services
    }

    /// The background run of the same project listening on `port` of a loopback `host`, when the port is one of
    /// [`allow_services`](Self::allow_services).
    #[cfg(target_os = "linux")]
    pub(crate) fn service(&self, host: &str, port: u16) -> Option<crate::SandboxedService> {
        (loopback_host(host) && self.services.contains(&port))
            .then(|| crate::sandboxed_service(port, &self.service_roots))
            .flatten()
    }

    /// The grant of the service at `host` (as a request names it) and `port`, when there is one.
    pub(crate) fn loopback_grant(&self, host: &str, port: u16) -> Option<&LoopbackGrant> {
        let host = loopback_spelling(host)?;
        self.loopback.iter().find(|g| g.host == host && g.port == port)
    }

    /// Adds allow patterns.
    pub fn allow(&mut self, patterns: impl IntoIterator<Item = DomainPattern>) {
        self.allow.extend(patterns);
    }

    /// Adds deny patterns.
    pub fn deny(&mut self, patterns: impl IntoIterator<Item = DomainPattern>) {
        self.deny.extend(patterns);
    }

    /// The allow patterns, registries first.
    pub fn allowed(&self) -> &[DomainPattern] {
        &self.allow
    }

    /// The deny patterns.
    pub fn denied(&self) -> &[DomainPattern] {
        &self.deny
    }

    /// The verdict on `host` (any spelling; normalized here) at `port`.
    pub fn verdict(&self, host: &str, port: u16) -> DomainVerdict<'_> {
        let Some(host) = normalize_host(host) else {
            return DomainVerdict::NotListed;
        };
        if let Some(denied) = self.deny.iter().find(|p| p.matches(&host, port)) {
            return DomainVerdict::Denied(denied);
        }
        self.allow
            .iter()
            .find(|p| p.matches(&host, port))
            .map_or(DomainVerdict::NotListed, DomainVerdict::Allowed)
    }

    /// Whether `host` at `port` may be reached.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        matches!(self.verdict(host, port), DomainVerdict::Allowed(_))
    }
}

/// A service on this machine a sandboxed command may reach through the proxy: one loopback host, in the spelling
/// the command uses (`localhost`, `127.0.0.1`, `[::1]`, `0.0.0.0`, a name below `localhost`), and one port,
/// written `host:port`. The command's network namespace has a loopback of its own, so the host's services are out
/// of its reach but through the proxy, which runs outside the sandbox; a grant is what a deliberate allow of a line
/// that names the service gives it, nothing wider (no other port, no other spelling).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LoopbackGrant {
    /// The host, lower case, without brackets or a trailing dot.
    host: String,
    port: u16,
}

impl FromStr for LoopbackGrant {
    type Err = DomainPatternError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let fail = |why| DomainPatternError {
            text: text.to_owned(),
            why,
        };
        let (host, port) = text
            .rsplit_once(':')
            .ok_or_else(|| fail("a service on this machine is written `host:port`"))?;
        let port = port
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| fail("the port is not a number from 1 to 65535"))?;
        let host = loopback_spelling(host).ok_or_else(|| fail("the host is not this machine's loopback"))?;
        Ok(Self { host, port })
    }
}

impl fmt::Display for LoopbackGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

impl LoopbackGrant {
    /// The port.
    #[must_use]
    pub const fn port(&self) -> u16 {
        self.port
    }

    /// The addresses the proxy connects to: the address itself, `127.0.0.1` and `::1` for a name (and for
    /// `0.0.0.0` and `::`, which a client on this machine reaches its own services by).
    pub(crate) fn addresses(&self) -> Vec<std::net::SocketAddr> {
        let v4 = std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, self.port));
        let v6 = std::net::SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, self.port));
        match self.host.parse::<IpAddr>() {
            Ok(address) if address.is_unspecified() => vec![v4, v6],
            Ok(address) => vec![std::net::SocketAddr::new(address, self.port)],
            Err(_) => vec![v4, v6],
        }
    }
}

/// Whether `host` (as a request names it) is this machine's loopback in a spelling a grant can name.
pub(crate) fn loopback_host(host: &str) -> bool {
    loopback_spelling(host).is_some()
}

/// `host` (brackets and a trailing dot allowed) in the form a [`LoopbackGrant`] keeps, when it names this machine:
/// `localhost` or a name below it, an address of `127.0.0.0/8`, `::1`, `0.0.0.0` or `::`.
fn loopback_spelling(host: &str) -> Option<String> {
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .map_or(host.clone(), str::to_owned);
    let local = match host.parse::<IpAddr>() {
        Ok(address) => address.is_loopback() || address.is_unspecified(),
        Err(_) => host == "localhost" || (host.ends_with(".localhost") && normalize_host(&host).is_some()),
    };
    local.then_some(host)
}

/// A limit over a [`DomainPolicy`]: of the hosts the policy allows, only these names are reached (on any port the
/// policy allows), and each other one is refused saying `why`. A session that has read untrusted content reaches
/// only the domains it reached before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainLimit {
    /// The names, lower case, without a port or a trailing dot.
    names: Vec<String>,
    /// Why the others are refused, as the refusal says it.
    why: String,
}

impl DomainLimit {
    /// The limit to `names` (host names, a `:port` after one ignored; an address or a text that is no name is left
    /// out, so it is refused), refusing the others because `why`.
    pub fn new<S: AsRef<str>>(names: impl IntoIterator<Item = S>, why: impl Into<String>) -> Self {
        let mut kept: Vec<String> = Vec::new();
        for name in names {
            let name = name.as_ref();
            let host = match name.rsplit_once(':') {
                Some((host, port)) if port.parse::<u16>().is_ok() => host,
                _ => name,
            };
            if let Some(host) = normalize_host(host)
                && !kept.contains(&host)
            {
                kept.push(host);
            }
        }
        Self {
            names: kept,
            why: why.into(),
        }
    }

    /// Whether `host` (any spelling) is one of the names.
    pub fn allows(&self, host: &str) -> bool {
        normalize_host(host).is_some_and(|host| self.names.contains(&host))
    }

    /// The names, in the order given.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Why the other hosts are refused.
    pub fn why(&self) -> &str {
        &self.why
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(text: &str) -> DomainPattern {
        text.parse().unwrap()
    }

    #[test]
    fn patterns_parse_and_print_back() {
        for text in ["crates.io", "*.npmjs.org", "registry.local:8080"] {
            assert_eq!(pattern(text).to_string(), text);
        }
        assert_eq!(pattern("Crates.IO.").to_string(), "crates.io");
    }

    #[test]
    fn bad_patterns_are_refused_naming_the_text() {
        for text in [
            "",
            "*",
            "*.",
            "a..b",
            "-a.com",
            "a_b.com",
            "1.2.3.4",
            "[::1]",
            "::1",
            "x.com:0",
            "x.com:http",
            "a.*.com",
            "2130706433",
            "0x7f.0x1",
            "ex ample.com",
        ] {
            let error = text.parse::<DomainPattern>().unwrap_err();
            assert_eq!(error.text, text);
            assert!(error.to_string().contains(&format!("`{text}`")), "{error}");
        }
    }

    #[test]
    fn wildcards_match_names_below_only() {
        let p = pattern("*.npmjs.org");
        assert!(p.matches("registry.npmjs.org", 443));
        assert!(p.matches("a.b.npmjs.org", 443));
        assert!(!p.matches("npmjs.org", 443));
        assert!(!p.matches("evilnpmjs.org", 443));
        assert!(!p.matches("npmjs.org.evil.com", 443));
    }

    #[test]
    fn ports_other_than_web_need_a_pattern_naming_them() {
        assert!(pattern("crates.io").matches("crates.io", 80));
        assert!(!pattern("crates.io").matches("crates.io", 22));
        assert!(pattern("r.local:8080").matches("r.local", 8080));
        assert!(!pattern("r.local:8080").matches("r.local", 443));
    }

    #[test]
    fn the_default_is_the_registries_and_deny_wins() {
        let mut policy = DomainPolicy::default();
        assert!(policy.allows("crates.io", 443));
        assert!(policy.allows("FILES.pythonhosted.org.", 443));
        assert!(!policy.allows("example.com", 443));
        policy.deny([pattern("crates.io")]);
        assert_eq!(
            policy.verdict("crates.io", 443),
            DomainVerdict::Denied(&pattern("crates.io"))
        );
        policy.allow([pattern("*.example.com")]);
        assert!(policy.allows("api.example.com", 443));
    }

    #[test]
    fn a_limit_keeps_names_whatever_their_port_and_spelling() {
        let limit = DomainLimit::new(["Docs.Example.", "api.example:8443", "10.0.0.1", "a b"], "why");
        assert_eq!(limit.names(), ["docs.example", "api.example"]);
        assert!(limit.allows("DOCS.example") && limit.allows("api.example."));
        assert!(!limit.allows("other.example") && !limit.allows("10.0.0.1"));
        assert_eq!(limit.why(), "why");
    }

    #[test]
    fn addresses_are_never_listed() {
        let mut policy = DomainPolicy::default();
        policy.allow([pattern("*.com")]);
        for host in [
            "127.0.0.1",
            "[::1]",
            "::ffff:7f00:1",
            "169.254.169.254",
            "0x7f000001",
            "017700000001",
        ] {
            assert_eq!(policy.verdict(host, 443), DomainVerdict::NotListed, "{host}");
        }
    }
}

/// Ports of a command's own loopback that are published on this machine's `127.0.0.1` while the command runs in the
/// background (`agentGuard.sandbox.publish`, `agent-guard sandbox --publish`): one port (`5173`) or a range
/// (`8000-8099`), from 1 to 65535.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PortRange {
    low: u16,
    high: u16,
}

impl PortRange {
    /// The range of the one port `port`, which must not be 0.
    #[must_use]
    pub fn single(port: u16) -> Option<Self> {
        (port != 0).then_some(Self {
            low: port,
            high: port,
        })
    }

    /// Whether `port` is in the range.
    #[must_use]
    pub const fn contains(&self, port: u16) -> bool {
        self.low <= port && port <= self.high
    }
}

impl FromStr for PortRange {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let port = |part: &str| {
            part.trim()
                .parse::<u16>()
                .ok()
                .filter(|port| *port != 0)
                .ok_or_else(|| {
                    format!("`{text}` is not a port from 1 to 65535 or a range of them (`8000-8099`)")
                })
        };
        let (low, high) = match text.split_once('-') {
            Some((low, high)) => (port(low)?, port(high)?),
            None => (port(text)?, port(text)?),
        };
        if low > high {
            return Err(format!("`{text}` is a range whose first port is above its last"));
        }
        Ok(Self { low, high })
    }
}

impl fmt::Display for PortRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.low == self.high {
            write!(f, "{}", self.low)
        } else {
            write!(f, "{}-{}", self.low, self.high)
        }
    }
}
