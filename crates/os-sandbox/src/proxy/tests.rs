//! The proxy on real sockets: a server on loopback stands for an allowed domain (mapped by the resolver), and
//! what reaches it is recorded.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

use super::*;
use crate::domains::{DomainLimit, DomainPattern};

/// A server on loopback that records the bytes of each connection (until the client's end or a pause) and answers
/// a fixed response.
struct Server {
    port: u16,
    seen: mpsc::Receiver<Vec<u8>>,
}

impl Server {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (tell, seen) = mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let mut stream = stream.unwrap();
                let tell = tell.clone();
                std::thread::spawn(move || {
                    stream.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
                    let mut got = Vec::new();
                    let mut chunk = [0u8; 4096];
                    while let Ok(n) = stream.read(&mut chunk) {
                        if n == 0 {
                            break;
                        }
                        got.extend_from_slice(&chunk[..n]);
                    }
                    let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
                    tell.send(got).unwrap();
                });
            }
        });
        Self { port, seen }
    }

    /// What the next connection carried, if one arrives within a few seconds.
    fn next(&self) -> Option<Vec<u8>> {
        self.seen.recv_timeout(Duration::from_secs(5)).ok()
    }

    /// Whether no connection has arrived.
    fn saw_nothing(&self) -> bool {
        self.seen.try_recv().is_err()
    }
}

fn proxy(server: &Server) -> Proxy {
    let allow: DomainPattern = format!("allowed.test:{}", server.port).parse().unwrap();
    let localhost: DomainPattern = format!("localhost:{}", server.port).parse().unwrap();
    let resolver = Resolver {
        mapped: vec![("allowed.test".into(), "127.0.0.1".parse().unwrap())],
    };
    Proxy::start_with(
        DomainPolicy::new(vec![allow, localhost], Vec::new()),
        None,
        Entry::HostLoopback,
        resolver,
    )
    .unwrap()
}

/// Sends `bytes` to the proxy and reads its answer to the end.
fn exchange(proxy: &Proxy, bytes: &[u8]) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", proxy.port())).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(bytes).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

#[test]
fn a_plain_request_to_an_allowed_domain_goes_through_rebuilt() {
    let server = Server::start();
    let proxy = proxy(&server);
    let port = server.port;
    let answer = exchange(
        &proxy,
        format!(
            "POST http://allowed.test:{port}/p HTTP/1.1\r\nHost: allowed.test:{port}\r\nProxy-Connection: keep-alive\r\n\
             Content-Length: 4\r\n\r\nbodyGET http://other.test/ HTTP/1.1\r\n\r\n"
        )
        .as_bytes(),
    );
    assert!(answer.ends_with("ok"), "{answer}");
    let seen = String::from_utf8(server.next().unwrap()).unwrap();
    // One request, its body, nothing of what the client sent after it.
    assert_eq!(
        seen,
        format!(
            "POST /p HTTP/1.1\r\nHost: allowed.test:{port}\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbody"
        )
    );
    assert!(proxy.refusals().is_empty());
}

#[test]
fn other_domains_addresses_and_names_that_lead_to_loopback_are_refused_once_each() {
    let server = Server::start();
    let proxy = proxy(&server);
    let port = server.port;
    for (request, domain, why) in [
        (
            format!("GET http://other.test:{port}/ HTTP/1.1\r\n\r\n"),
            "other.test",
            "not in agentGuard.network.allow",
        ),
        (
            format!("GET http://other.test:{port}/again HTTP/1.1\r\n\r\n"),
            "other.test",
            "not in agentGuard.network.allow",
        ),
        (
            format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n"),
            "127.0.0.1",
            "a service on this machine",
        ),
        (
            format!("GET http://[::1]:{port}/ HTTP/1.1\r\n\r\n"),
            "::1",
            "a service on this machine",
        ),
        (
            format!("GET http://10.0.0.1:{port}/ HTTP/1.1\r\n\r\n"),
            "10.0.0.1",
            "an address, not a host name",
        ),
        (
            "GET http://allowed.test:1/ HTTP/1.1\r\n\r\n".to_owned(),
            "allowed.test",
            "not in agentGuard.network.allow",
        ),
        (
            format!("GET http://localhost:{port}/ HTTP/1.1\r\n\r\n"),
            "localhost",
            "a service on this machine",
        ),
        (
            format!("GET http://db.localhost:{port}/ HTTP/1.1\r\n\r\n"),
            "db.localhost",
            "a service on this machine",
        ),
    ] {
        let answer = exchange(&proxy, request.as_bytes());
        assert!(
            answer.starts_with("HTTP/1.1 403 Forbidden\r\n"),
            "{request}: {answer}"
        );
        assert!(
            answer.contains(&format!("network to `{domain}` refused: ")),
            "{answer}"
        );
        assert!(answer.contains(why), "{request}: {answer}");
    }
    let refusals = proxy.refusals();
    assert_eq!(refusals.len(), 7, "{refusals:?}");
    assert_eq!(
        refusals[0],
        "agent-guard: network to `other.test` refused: not in agentGuard.network.allow"
    );
    assert!(server.saw_nothing());
}

#[test]
fn a_granted_service_on_this_machine_is_reached_by_its_host_and_port_alone() {
    let server = Server::start();
    let port = server.port;
    let mut policy = DomainPolicy::new(Vec::new(), Vec::new());
    policy.allow_loopback([format!("localhost:{port}").parse().unwrap()]);
    let proxy =
        Proxy::start_with(policy, None, Entry::HostLoopback, Resolver { mapped: Vec::new() }).unwrap();
    let answer = exchange(
        &proxy,
        format!("GET http://localhost:{port}/health HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n").as_bytes(),
    );
    assert!(answer.ends_with("ok"), "{answer}");
    let seen = String::from_utf8(server.next().unwrap()).unwrap();
    assert!(seen.starts_with("GET /health HTTP/1.1\r\n"), "{seen}");
    // A tunnel to it carries what the client sends, TLS or not.
    let mut stream = TcpStream::connect(("127.0.0.1", proxy.port())).unwrap();
    stream
        .write_all(format!("CONNECT LOCALHOST:{port} HTTP/1.1\r\n\r\nping").as_bytes())
        .unwrap();
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(
        answer.starts_with("HTTP/1.1 200 Connection established\r\n\r\n"),
        "{answer}"
    );
    assert_eq!(server.next().unwrap(), b"ping");
    // Another spelling of the loopback, another port: refused, and nothing reaches the server.
    for request in [
        format!("GET http://127.0.0.1:{port}/ HTTP/1.1\r\n\r\n"),
        format!(
            "GET http://localhost:{}/ HTTP/1.1\r\n\r\n",
            port.wrapping_add(1).max(1)
        ),
    ] {
        let answer = exchange(&proxy, request.as_bytes());
        assert!(
            answer.starts_with("HTTP/1.1 403 Forbidden\r\n"),
            "{request}: {answer}"
        );
        assert!(answer.contains("a service on this machine"), "{answer}");
    }
    assert!(server.saw_nothing());
    // Its clients must send the loopback to the proxy: `NO_PROXY` names nothing.
    let mut env = Vec::new();
    proxy.set_env(&mut env);
    let no_proxy = env
        .iter()
        .find(|(name, _)| name == "NO_PROXY")
        .map(|(_, v)| v.clone());
    assert_eq!(no_proxy, Some(OsString::new()));
}

#[test]
fn a_limit_lets_through_only_its_names_of_what_the_policy_allows() {
    let server = Server::start();
    let port = server.port;
    let patterns: Vec<DomainPattern> = ["allowed.test", "known.test", "new.test"]
        .iter()
        .map(|name| format!("{name}:{port}").parse().unwrap())
        .collect();
    let resolver = Resolver {
        mapped: ["allowed.test", "known.test", "new.test"]
            .iter()
            .map(|name| ((*name).to_owned(), "127.0.0.1".parse().unwrap()))
            .collect(),
    };
    let limit = DomainLimit::new(
        ["known.test", "allowed.test:443", "denied.test"],
        "the session is tainted",
    );
    let proxy = Proxy::start_with(
        DomainPolicy::new(patterns, Vec::new()),
        Some(limit),
        Entry::HostLoopback,
        resolver,
    )
    .unwrap();
    // A name of the limit goes through on the policy's port, whatever port the limit wrote.
    for name in ["known.test", "allowed.test"] {
        let answer = exchange(
            &proxy,
            format!("GET http://{name}:{port}/ HTTP/1.1\r\nHost: {name}:{port}\r\n\r\n").as_bytes(),
        );
        assert!(answer.ends_with("ok"), "{name}: {answer}");
        assert!(server.next().is_some());
    }
    // One the policy allows but the limit does not name is refused with the limit's why; one the limit names but
    // the policy does not is refused by the policy.
    let answer = exchange(
        &proxy,
        format!("GET http://new.test:{port}/ HTTP/1.1\r\n\r\n").as_bytes(),
    );
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
    assert!(
        answer.contains("agent-guard: network to `new.test` refused: the session is tainted"),
        "{answer}"
    );
    let answer = exchange(
        &proxy,
        format!("GET http://denied.test:{port}/ HTTP/1.1\r\n\r\n").as_bytes(),
    );
    assert!(answer.contains("not in agentGuard.network.allow"), "{answer}");
    assert_eq!(proxy.refusals().len(), 2);
    assert!(server.saw_nothing());
}

#[test]
fn a_tunnel_carries_tls_only_to_the_name_it_was_opened_to() {
    let server = Server::start();
    let proxy = proxy(&server);
    let port = server.port;
    let connect = format!("CONNECT allowed.test:{port} HTTP/1.1\r\nHost: allowed.test:{port}\r\n\r\n");
    // The ClientHello names the host: the tunnel opens and carries it.
    let hello = tls::tests::hello(&["allowed.test"], 100);
    let mut request = connect.clone().into_bytes();
    request.extend(&hello);
    let answer = exchange(&proxy, &request);
    assert!(
        answer.starts_with("HTTP/1.1 200 Connection established\r\n\r\n"),
        "{answer}"
    );
    assert_eq!(server.next().unwrap(), hello);
    // Another name, no TLS, or no name at all: the tunnel closes before the server hears of it, and the
    // command's stderr is told why (a fresh proxy each, since a domain is reported once).
    for (first, why) in [
        (
            tls::tests::hello(&["evil.test"], 16_384),
            "TLS server name `evil.test` is not the host",
        ),
        (
            b"GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n".to_vec(),
            "a tunnel carries TLS only",
        ),
        (tls::tests::hello(&[], 16_384), "names no server"),
        (
            tls::tests::hello(&["\u{1b}]52;c;x\u{7}"], 16_384),
            "name `\\u{1b}]52;c;x\\u{7}` is not the host",
        ),
    ] {
        let proxy = self::proxy(&server);
        let mut request = connect.clone().into_bytes();
        request.extend(&first);
        let answer = exchange(&proxy, &request);
        assert_eq!(answer, "HTTP/1.1 200 Connection established\r\n\r\n");
        let refusals = proxy.refusals();
        assert_eq!(refusals.len(), 1, "{refusals:?}");
        assert!(
            refusals[0].starts_with("agent-guard: network to `allowed.test` refused: ")
                && refusals[0].contains(why),
            "{refusals:?}"
        );
    }
    assert!(server.saw_nothing());
}

#[test]
fn malformed_and_unsupported_requests_are_answered_without_a_refusal_line() {
    let server = Server::start();
    let proxy = proxy(&server);
    let answer = exchange(
        &proxy,
        b"GET http://allowed.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 400 Bad Request"), "{answer}");
    let answer = exchange(&proxy, b"GET https://allowed.test/ HTTP/1.1\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 501 Not Implemented"), "{answer}");
    assert!(proxy.refusals().is_empty());
    assert!(server.saw_nothing());
}

#[test]
fn the_command_environment_points_every_tool_at_the_proxy() {
    let server = Server::start();
    let proxy = proxy(&server);
    let url = format!("http://127.0.0.1:{}", proxy.port());
    let mut env: Vec<(OsString, OsString)> = vec![
        ("HTTPS_PROXY".into(), "http://corporate:8080".into()),
        ("GIT_CONFIG_COUNT".into(), "1".into()),
        ("GIT_CONFIG_KEY_0".into(), "safe.directory".into()),
        ("GIT_CONFIG_VALUE_0".into(), "*".into()),
    ];
    proxy.set_env(&mut env);
    let get = |name: &str| {
        let found: Vec<&OsString> = env.iter().filter(|(n, _)| n == name).map(|(_, v)| v).collect();
        assert_eq!(found.len(), 1, "{name}");
        found[0].to_str().unwrap().to_owned()
    };
    for name in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "npm_config_proxy",
        "npm_config_https_proxy",
        "PIP_PROXY",
        "CARGO_HTTP_PROXY",
        "GIT_CONFIG_VALUE_1",
    ] {
        assert_eq!(get(name), url, "{name}");
    }
    assert_eq!(get("GIT_CONFIG_KEY_1"), "http.proxy");
    assert_eq!(get("GIT_CONFIG_KEY_0"), "safe.directory");
    assert_eq!(get("GIT_CONFIG_COUNT"), "2");
    assert_eq!(get("NO_PROXY"), "localhost,127.0.0.1,::1");
}

#[test]
fn the_hook_takes_loopback_addresses_only() {
    let parsed = Resolver::parse("a.test=127.0.0.1, b.test=10.0.0.1,c.test=::1,junk");
    assert_eq!(
        parsed.mapped,
        vec![
            ("a.test".to_owned(), "127.0.0.1".parse().unwrap()),
            ("c.test".to_owned(), "::1".parse().unwrap())
        ]
    );
}

#[test]
fn a_proxy_for_servers_of_the_project_alone_refuses_every_domain_and_every_other_service() {
    let server = Server::start();
    let port = server.port;
    let allow: DomainPattern = format!("allowed.test:{port}").parse().unwrap();
    let mut policy = DomainPolicy::new(vec![allow], Vec::new());
    policy.allow_loopback([format!("localhost:{port}").parse().unwrap()]);
    // No background run of this project serves the port: nothing is reached there, and nothing else either.
    policy.allow_services([port], &[std::path::PathBuf::from("/nonexistent-project")]);
    policy.only_services();
    let resolver = Resolver {
        mapped: vec![("allowed.test".into(), "127.0.0.1".parse().unwrap())],
    };
    let proxy = Proxy::start_with(policy, None, Entry::HostLoopback, resolver).unwrap();
    for request in [
        format!("POST http://allowed.test:{port}/x HTTP/1.1\r\nContent-Length: 1\r\n\r\nx"),
        format!("CONNECT allowed.test:{port} HTTP/1.1\r\n\r\n"),
        format!("GET http://localhost:{port}/ HTTP/1.1\r\n\r\n"),
    ] {
        let answer = exchange(&proxy, request.as_bytes());
        assert!(
            answer.starts_with("HTTP/1.1 403 Forbidden\r\n"),
            "{request}: {answer}"
        );
    }
    assert!(server.saw_nothing());
}
