//! The network of a sandboxed command for real: `agent-guard sandbox --allow-network` runs bash lines that try
//! every way out (the proxy with an allowed and a refused domain, a raw address, a tunnel whose TLS name differs,
//! DNS, a connection that ignores the proxy variables, a second process of the command) against a TCP and a UDP
//! server that listen on every interface of this machine and record whatever reaches them. The proxy's resolver
//! maps the test's domains to `127.0.0.1` through its test hook, `AGENT_GUARD_PROXY_RESOLVE`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::io::{Read, Write};
use std::net::{IpAddr, TcpListener, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_agent-guard");
const NOBODY: u32 = 65_534;

#[path = "../../../tests/support/need.rs"]
mod need;
#[path = "../../../tests/support/scratch.rs"]
mod scratch;

use scratch::text;
#[path = "../../../tests/support/poll.rs"]
mod poll;
#[path = "../../../tests/support/redirector.rs"]
mod redirector;

use redirector::Redirector;

/// Whether the kernel sandbox can be tested here (see sandbox.rs): skipped loudly, or failed under
/// `AGENT_GUARD_REQUIRE_SANDBOX=1`.
fn supported() -> bool {
    need::sandbox_report(BIN).is_some()
}

/// Whether Landlock has TCP rules here, which the sandbox without namespaces needs to give the network at all.
fn landlock_tcp() -> bool {
    let probe = Command::new(BIN).args(["sandbox", "--probe"]).output().unwrap();
    String::from_utf8_lossy(&probe.stdout).contains("landlock network: yes")
}

/// A TCP server and a UDP socket on every interface that record what reaches them; the TCP server answers each
/// connection with `200` and the body `reached`.
struct Servers {
    tcp: u16,
    udp: u16,
    seen: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    recorder: Option<JoinHandle<()>>,
}

impl Servers {
    fn start() -> Self {
        let tcp = TcpListener::bind("0.0.0.0:0").unwrap();
        let udp = UdpSocket::bind("0.0.0.0:0").unwrap();
        tcp.set_nonblocking(true).unwrap();
        udp.set_nonblocking(true).unwrap();
        let (tcp_port, udp_port) = (tcp.local_addr().unwrap().port(), udp.local_addr().unwrap().port());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (recording, stopping) = (Arc::clone(&seen), Arc::clone(&stop));
        let recorder = std::thread::spawn(move || {
            loop {
                // Look before each pass: the pass after the stop still drains what reached the sockets before it.
                let stop = stopping.load(Ordering::Acquire);
                let mut got_any = false;
                if let Ok((mut stream, _)) = tcp.accept() {
                    got_any = true;
                    stream.set_nonblocking(false).unwrap();
                    stream.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
                    let mut got = Vec::new();
                    let mut chunk = [0u8; 4096];
                    while let Ok(n) = stream.read(&mut chunk) {
                        if n == 0 {
                            break;
                        }
                        got.extend_from_slice(&chunk[..n]);
                        if got.windows(4).any(|w| w == b"\r\n\r\n") || got.first() == Some(&22) {
                            break;
                        }
                    }
                    let _ = stream.write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\nConnection: close\r\n\r\nreached",
                    );
                    recording
                        .lock()
                        .unwrap()
                        .push(format!("tcp: {}", String::from_utf8_lossy(&got)));
                }
                let mut buffer = [0u8; 512];
                if let Ok(n) = udp.recv(&mut buffer) {
                    got_any = true;
                    recording
                        .lock()
                        .unwrap()
                        .push(format!("udp: {}", String::from_utf8_lossy(&buffer[..n])));
                }
                if stop && !got_any {
                    return;
                }
                if !got_any {
                    // The interval between looks at non-blocking sockets, not a wait for anything.
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        });
        Self {
            tcp: tcp_port,
            udp: udp_port,
            seen,
            stop,
            recorder: Some(recorder),
        }
    }

    /// Everything that reached the servers, once the recorder has drained them.
    fn seen(mut self) -> Vec<String> {
        self.stop.store(true, Ordering::Release);
        self.recorder.take().unwrap().join().unwrap();
        self.seen.lock().unwrap().clone()
    }

    fn count(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

/// An address of this machine other than loopback (the source of its default route), through which a command with
/// the host's network would reach the servers; `None` on a machine without a route.
fn host_address() -> Option<IpAddr> {
    let socket = UdpSocket::bind("0.0.0.0:0").ok()?;
    // Connecting a UDP socket sends nothing: it only picks the route.
    socket
        .connect("192.0.2.123:9")
        .or_else(|_| socket.connect("8.8.8.8:53"))
        .ok()?;
    Some(socket.local_addr().ok()?.ip()).filter(|ip| !ip.is_loopback() && !ip.is_unspecified())
}

/// A project directory the command runs in, with the ClientHellos it sends, readable by `owner`.
struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    owner: Option<u32>,
    namespaces: bool,
}

impl Project {
    fn new(owner: Option<u32>, namespaces: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let root = dir.path().join("project");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(root.join("hello-allowed.bin"), client_hello("allowed.test")).unwrap();
        std::fs::write(root.join("hello-evil.bin"), client_hello("evil.test")).unwrap();
        if let Some(uid) = owner {
            for path in [
                dir.path(),
                &root,
                &home,
                &root.join("hello-allowed.bin"),
                &root.join("hello-evil.bin"),
            ] {
                let id = Some(nix::unistd::Uid::from_raw(uid));
                nix::unistd::chown(path, id, Some(nix::unistd::Gid::from_raw(uid))).unwrap();
            }
        }
        Self {
            _dir: dir,
            root,
            home,
            owner,
            namespaces,
        }
    }

    /// `agent-guard sandbox --allow-network --allow-domain allowed.test:PORT -- bash -c LINE`, with the test
    /// domains mapped to loopback in the proxy's resolver.
    fn run(&self, servers: &Servers, line: &str) -> Output {
        let mut command = Command::new(BIN);
        command
            .args([
                "sandbox",
                "--profile",
                "workspace-write",
                "--allow-network",
                "--allow-domain",
            ])
            .arg(format!("allowed.test:{}", servers.tcp))
            .args(["--", "bash", "-c", line])
            .current_dir(&self.root)
            .env("HOME", &self.home)
            .env(
                "AGENT_GUARD_PROXY_RESOLVE",
                "allowed.test=127.0.0.1,other.test=127.0.0.1",
            )
            .stdin(Stdio::null());
        if !self.namespaces {
            command.env("AGENT_GUARD_SANDBOX_NAMESPACES", "off");
        }
        if let Some(uid) = self.owner {
            command.uid(uid).gid(uid);
        }
        command.output().unwrap()
    }
}

/// A TLS 1.3 ClientHello naming `name`, as a client sends it first in a tunnel.
fn client_hello(name: &str) -> Vec<u8> {
    let mut body = vec![3, 3];
    body.extend([7u8; 32]);
    body.push(0);
    body.extend([0, 2, 0x13, 0x01, 1, 0]);
    let name_bytes = name.as_bytes();
    let entry_length = u16::try_from(name_bytes.len()).unwrap();
    let mut extension = Vec::new();
    extension.extend((entry_length + 3).to_be_bytes());
    extension.push(0);
    extension.extend(entry_length.to_be_bytes());
    extension.extend(name_bytes);
    let mut extensions = vec![0, 0];
    extensions.extend(u16::try_from(extension.len()).unwrap().to_be_bytes());
    extensions.extend(extension);
    body.extend(u16::try_from(extensions.len()).unwrap().to_be_bytes());
    body.extend(extensions);
    let mut handshake = vec![1];
    handshake.extend(&u32::try_from(body.len()).unwrap().to_be_bytes()[1..]);
    handshake.extend(body);
    let mut record = vec![22, 3, 1];
    record.extend(u16::try_from(handshake.len()).unwrap().to_be_bytes());
    record.extend(handshake);
    record
}
/// The worlds to prove it in: this user and (as root) an unprivileged one, with namespaces and (where Landlock
/// has TCP rules) without.
fn projects() -> Vec<Project> {
    let users = if nix::unistd::geteuid().is_root() {
        vec![None, Some(NOBODY)]
    } else {
        vec![None]
    };
    let without = landlock_tcp();
    users
        .into_iter()
        .flat_map(|owner| {
            let mut worlds = vec![Project::new(owner, true)];
            if without {
                worlds.push(Project::new(owner, false));
            }
            worlds
        })
        .collect()
}

/// A bash function `ask REQUEST-FILE-OR-TEXT` that sends bytes to the proxy the variables name and prints the
/// first line of the answer (or `no answer`).
const ASK: &str = r#"
proxy=${HTTP_PROXY#http://}; phost=${proxy%:*}; pport=${proxy##*:}
ask() {
  exec 3<>/dev/tcp/$phost/$pport || { echo "no proxy"; return; }
  printf "$1" >&3
  if [ -n "$2" ]; then cat "$2" >&3; fi
  local first; first=$(timeout 10 head -n 1 <&3)
  echo "${first%$'\r'}"
  exec 3<&-
}
"#;

#[test]
fn only_allowed_domains_are_reached_and_only_through_the_proxy() {
    if !supported() {
        return;
    }
    let host = host_address();
    for project in projects() {
        let world = (project.owner, project.namespaces);
        let servers = Servers::start();
        let (tcp, udp) = (servers.tcp, servers.udp);
        let direct_targets: Vec<String> = ["127.0.0.1".to_owned()]
            .into_iter()
            .chain(host.map(|ip| ip.to_string()))
            .collect();
        let mut line = String::from(ASK);
        line.push_str(&format!(
            "echo \"allowed: $(ask 'GET http://allowed.test:{tcp}/allowed HTTP/1.1\\r\\nHost: allowed.test:{tcp}\\r\\n\\r\\n')\"\n\
             echo \"tunnel: $(ask 'CONNECT allowed.test:{tcp} HTTP/1.1\\r\\nHost: allowed.test:{tcp}\\r\\n\\r\\n' hello-allowed.bin)\"\n\
             echo \"other: $(ask 'GET http://other.test:{tcp}/other HTTP/1.1\\r\\nHost: other.test:{tcp}\\r\\n\\r\\n')\"\n\
             echo \"raw: $(ask 'GET http://127.0.0.1:{tcp}/raw HTTP/1.1\\r\\nHost: 127.0.0.1:{tcp}\\r\\n\\r\\n')\"\n\
             echo \"raw tunnel: $(ask 'CONNECT 127.0.0.1:{tcp} HTTP/1.1\\r\\n\\r\\n' hello-allowed.bin)\"\n\
             echo \"evil tunnel: $(ask 'CONNECT allowed.test:{tcp} HTTP/1.1\\r\\n\\r\\n' hello-evil.bin)\"\n\
             if command -v perl >/dev/null; then perl -e 'use Socket; socket(my $s, 40, 1, 0) ? print \"vsock: opened\\n\" : print \"vsock: $!\\n\"'; else echo 'vsock: no perl'; fi\n\
             if command -v perl >/dev/null; then perl -e 'use Socket; socket(my $s, 1, 1, 0) ? print \"unix: opened\\n\" : print \"unix: $!\\n\"'; else echo 'unix: no perl'; fi\n\
             echo \"git: $(git config --get http.proxy)\"\n\
             getent hosts allowed.test && echo 'dns: resolved'\n\
             getent hosts example.com && echo 'dns: resolved'\n"
        ));
        let mut direct = String::new();
        for target in &direct_targets {
            direct.push_str(&format!(
                "(printf 'GET /direct HTTP/1.1\\r\\n\\r\\n' > /dev/tcp/{target}/{tcp}) 2>/dev/null && echo 'direct: sent'\n\
                 (echo dns-query > /dev/udp/{target}/{udp}) 2>/dev/null\n\
                 (echo dns-query > /dev/udp/{target}/53) 2>/dev/null\n\
                 setsid -w bash -c 'exec 3<>/dev/tcp/{target}/{tcp} && printf \"GET /relayed HTTP/1.1\\r\\n\\r\\n\" >&3' 2>/dev/null \
                 && echo 'relay: sent'\n"
            ));
        }
        line.push_str(&direct);
        // A second process of the command, detached from it, that asks the proxy for a refused domain.
        line.push_str(&format!(
            "setsid -w bash -c '{ASK_ESCAPED} echo \"second: $(ask \"GET http://other.test:{tcp}/second HTTP/1.1\\r\\nHost: other.test:{tcp}\\r\\n\\r\\n\")\"' &\nwait\necho done\n",
            ASK_ESCAPED = ASK.replace('\'', "'\\''"),
        ));
        // The control: outside the sandbox, the same direct attempts do reach the servers.
        if project.owner.is_none() && project.namespaces {
            let control = Servers::start();
            let attempts = direct
                .replace(&format!("/{tcp}"), &format!("/{}", control.tcp))
                .replace(&format!("/{udp}"), &format!("/{}", control.udp));
            let output = Command::new("bash").arg("-c").arg(&attempts).output().unwrap();
            assert!(
                text(&output).contains("direct: sent") && text(&output).contains("relay: sent"),
                "{}",
                text(&output)
            );
            poll::wait_until(
                Duration::from_secs(10),
                "the direct attempts reach the servers outside the sandbox",
                || control.count() >= 3 * direct_targets.len(),
            );
            let seen = control.seen();
            assert!(seen.iter().any(|s| s.starts_with("tcp: GET /direct")), "{seen:?}");
            assert!(
                seen.iter().any(|s| s.starts_with("tcp: GET /relayed")),
                "{seen:?}"
            );
            assert!(seen.iter().any(|s| s == "udp: dns-query\n"), "{seen:?}");
        }
        let output = project.run(&servers, &line);
        let all = text(&output);
        assert!(all.contains("done"), "{world:?}: {all}");
        assert!(all.contains("allowed: HTTP/1.1 200 OK"), "{world:?}: {all}");
        assert!(
            all.contains("tunnel: HTTP/1.1 200 Connection established"),
            "{world:?}: {all}"
        );
        for refused in ["other", "raw", "raw tunnel", "second"] {
            assert!(
                all.contains(&format!("{refused}: HTTP/1.1 403 Forbidden")),
                "{world:?} {refused}: {all}"
            );
        }
        // git reads its proxy from the environment too.
        assert!(all.contains("git: http://127.0.0.1:"), "{world:?}: {all}");
        // vsock reaches a virtual machine's host whatever the network namespace: refused like every family but
        // IPv4, IPv6 and netlink.
        if all.contains("vsock: no perl") {
            need::skip("perl is missing, so the vsock socket was not tried");
        } else {
            assert!(all.contains("vsock: Operation not permitted"), "{world:?}: {all}");
            // A Unix socket reaches any local service by its path (a terminal multiplexer in /tmp, a database in
            // /run), past Landlock: never opened.
            assert!(all.contains("unix: Operation not permitted"), "{world:?}: {all}");
        }
        for never in ["dns: resolved", "direct: sent", "relay: sent"] {
            assert!(!all.contains(never), "{world:?} {never}: {all}");
        }
        // The command's stderr names each refused domain once, with the setting to change.
        let stderr = String::from_utf8_lossy(&output.stderr);
        let other = "agent-guard: network to `other.test` refused: not in agentGuard.network.allow";
        assert_eq!(stderr.matches(other).count(), 1, "{world:?}: {stderr}");
        assert!(
            stderr.contains("agent-guard: network to `127.0.0.1` refused: a service on this machine"),
            "{stderr}"
        );
        assert!(
            stderr.contains(
                "agent-guard: network to `allowed.test` refused: the tunnel's TLS server name `evil.test`"
            ),
            "{world:?}: {stderr}"
        );
        if !project.namespaces {
            assert!(
                stderr.contains("without namespaces the network goes through the proxy"),
                "{stderr}"
            );
        }
        // The allowed request and the tunnel with the right name arrive (the recorder may still be reading
        // them), and nothing else ever does.
        poll::wait_until(
            Duration::from_secs(10),
            "the allowed request and tunnel reach the server",
            || servers.count() >= 2,
        );
        let seen = servers.seen();
        assert_eq!(seen.len(), 2, "{world:?}: {seen:?}");
        assert!(
            seen.iter().any(|s| s.starts_with(&format!(
                "tcp: GET /allowed HTTP/1.1\r\nHost: allowed.test:{tcp}\r\n"
            ))),
            "{world:?}: {seen:?}"
        );
        assert!(
            seen.iter().any(|s| s.starts_with("tcp: \u{16}")),
            "{world:?}: {seen:?}"
        );
    }
}

/// A build's own tests listen and connect on the loopback of the command's namespace, with the network through the
/// proxy and without it (perl, which git needs anyway, stands for a test suite).
#[test]
fn a_build_talks_to_itself_on_its_own_loopback() {
    if !supported() {
        return;
    }
    let has_perl = Command::new("perl")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_perl {
        need::skip("perl is missing, so no loopback server could be started");
        return;
    }
    let server_and_client = "perl -MIO::Socket::INET -e '\
        my $l = IO::Socket::INET->new(LocalAddr => \"127.0.0.1\", LocalPort => 0, Listen => 1) or die \"listen: $!\"; \
        my $p = $l->sockport; \
        if (!fork) { my $c = IO::Socket::INET->new(\"127.0.0.1:$p\") or die \"connect: $!\"; print $c \"ping\\n\"; exit } \
        my $s = $l->accept; print \"loopback: \", scalar <$s>'";
    let project = Project::new(None, true);
    for network in [&["--allow-network"][..], &[]] {
        let output = Command::new(BIN)
            .args(["sandbox", "--profile", "workspace-write"])
            .args(network)
            .args(["--", "bash", "-c", server_and_client])
            .current_dir(&project.root)
            .env("HOME", &project.home)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            text(&output).contains("loopback: ping"),
            "{network:?}: {}",
            text(&output)
        );
    }
}

#[test]
fn verbose_names_the_domains_and_a_domain_flag_needs_the_network() {
    let output = Command::new(BIN)
        .args(["sandbox", "--allow-domain", "example.com", "--", "true"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("--allow-network"),
        "{}",
        text(&output)
    );
    let output = Command::new(BIN)
        .args([
            "sandbox",
            "--allow-network",
            "--allow-domain",
            "10.0.0.1",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("`10.0.0.1` is not a domain pattern"),
        "{}",
        text(&output)
    );
    if !supported() {
        return;
    }
    let project = Project::new(None, true);
    let output = Command::new(BIN)
        .args([
            "sandbox",
            "--profile",
            "workspace-write",
            "--allow-network",
            "--allow-domain",
            "*.example.com",
            "--verbose",
        ])
        .args(["--", "true"])
        .current_dir(&project.root)
        .env("HOME", &project.home)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("  network through the proxy to "))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        line.contains(" crates.io ") && line.ends_with(" *.example.com"),
        "{line}"
    );
}

/// After untrusted content, a line nobody approved (a contained allow) reaches only the domains its session reached
/// before and those it names: through the hook's `updatedInput`, run as the coding agent runs it, a `curl -L` whose
/// redirect leads to a domain the session reached before gets there, one whose redirect leads to a domain the
/// settings allow but the session never reached is refused by the proxy, naming the taint and how to clear it. In
/// an untainted session, and once the taint is cleared, the same line reaches it.
#[test]
fn after_untrusted_content_a_contained_line_reaches_only_the_domains_its_session_reached() {
    if !supported() {
        return;
    }
    let server = Redirector::start();
    let port = server.port;
    let project = Project::new(None, true);
    std::fs::create_dir_all(project.root.join(".git")).unwrap();
    std::fs::create_dir_all(project.home.join(".claude")).unwrap();
    // The user's settings allow the three names (on the test server's port) to the proxy and to contained lines,
    // and trust `b.test`'s content: the session's untrusted content is the attacker's page.
    std::fs::write(
        project.home.join(".claude/settings.json"),
        serde_json::json!({
            "permissions": {"allow": ["WebFetch(domain:a.test)", "WebFetch(domain:b.test)", "WebFetch(domain:c.test)"]},
            "agentGuard": {
                "network": {"allow": [format!("a.test:{port}"), format!("b.test:{port}"), format!("c.test:{port}")]},
                "taint": {"trustedDomains": ["b.test"]},
            },
        })
        .to_string(),
    )
    .unwrap();
    let hook = |session: &str, tool: &str, input: serde_json::Value| -> serde_json::Value {
        let line = serde_json::json!({
            "session_id": session, "cwd": project.root, "permission_mode": "default",
            "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input,
        });
        let mut child = Command::new(BIN)
            .arg("check")
            .current_dir(&project.root)
            .env("HOME", &project.home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(line.to_string().as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", text(&output));
        serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()["hookSpecificOutput"].clone()
    };
    // The coding agent runs an allowed line's `updatedInput`; the wrapped line must be the contained allow.
    let runs = |session: &str, line: &str| -> (String, String) {
        let output = hook(session, "Bash", serde_json::json!({ "command": line }));
        assert_eq!(output["permissionDecision"], "allow", "{line}: {output}");
        let wrapped = output["updatedInput"]["command"].as_str().unwrap().to_owned();
        let ran = Command::new("bash")
            .arg("-c")
            .arg(&wrapped)
            .current_dir(&project.root)
            .env("HOME", &project.home)
            .env(
                "AGENT_GUARD_PROXY_RESOLVE",
                "a.test=127.0.0.1,b.test=127.0.0.1,c.test=127.0.0.1",
            )
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (wrapped, text(&ran))
    };
    let tainted = "7f3e-tainted";
    let first = format!("curl -s http://b.test:{port}/first");
    let (wrapped, out) = runs(tainted, &first);
    assert!(!wrapped.contains("--session-domains-only"), "{wrapped}");
    assert!(out.contains("reached b.test /first"), "{out}");
    // A page of a domain nobody trusts: the session now holds untrusted content.
    hook(
        tainted,
        "WebFetch",
        serde_json::json!({"url": "https://attacker.example/issue", "prompt": "summarise"}),
    );

    let to_b = format!("curl -sL http://a.test:{port}/to-b");
    let (wrapped, out) = runs(tainted, &to_b);
    assert!(wrapped.contains("--session-domains-only"), "{wrapped}");
    assert!(
        wrapped.contains("--session-domain 'b.test'") && wrapped.contains("--session-domain 'a.test'"),
        "{wrapped}"
    );
    assert!(out.contains("reached b.test /landed"), "{out}");

    let to_c = format!("curl -sL http://a.test:{port}/to-c");
    let (_, out) = runs(tainted, &to_c);
    assert!(
        out.contains(
            "agent-guard: network to `c.test` refused: this session has read untrusted content \
             (`WebFetch https://attacker.example/issue`: fetched a page of `attacker.example`)"
        ),
        "{out}"
    );
    assert!(
        out.contains(&format!("`agent-guard session clear {tainted}` resets its taint")),
        "{out}"
    );
    assert!(
        !server.seen().iter().any(|s| s.starts_with("c.test")),
        "{:?}",
        server.seen()
    );

    // A session without untrusted content is not limited.
    let (wrapped, out) = runs("7f3e-clean", &to_c);
    assert!(!wrapped.contains("--session-domains-only"), "{wrapped}");
    assert!(out.contains("reached c.test /landed"), "{out}");

    // Once a person has looked and cleared the taint, neither is the tainted one.
    let cleared = Command::new(BIN)
        .args(["session", "clear", tainted])
        .current_dir(&project.root)
        .env("HOME", &project.home)
        .output()
        .unwrap();
    assert!(cleared.status.success(), "{}", text(&cleared));
    let (wrapped, out) = runs(tainted, &to_c);
    assert!(!wrapped.contains("--session-domains-only"), "{wrapped}");
    assert_eq!(out.matches("reached c.test /landed").count(), 1, "{out}");
}

/// A service on this machine, end to end: the hook decides `curl localhost:PORT` under the user's `Bash(curl:*)`
/// rule with a grant of that host and port, and the line it hands back reaches the host's server through the
/// proxy (the command's own loopback is another). The same line run without the grant, and another port or
/// spelling with it, are refused by the proxy and reach nothing. Under the user's own rule the command piped into
/// an interpreter asks: the port would be open to the interpreter too.
#[test]
fn a_granted_service_on_this_machine_is_reached_and_nothing_else_of_the_loopback() {
    if !supported() {
        return;
    }
    if !Command::new("curl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        need::skip("curl is missing, so no request could be sent from inside the sandbox");
        return;
    }
    for project in projects() {
        let world = (project.owner, project.namespaces);
        let servers = Servers::start();
        let tcp = servers.tcp;
        // The user's own rule: the repository's settings open the sandbox to no host.
        std::fs::create_dir_all(project.home.join(".claude")).unwrap();
        std::fs::write(
            project.home.join(".claude/settings.json"),
            r#"{"permissions": {"allow": ["Bash(curl:*)"]}}"#,
        )
        .unwrap();
        let line = format!("curl -s -m 20 localhost:{tcp}/granted");
        let input = serde_json::json!({
            "session_id": format!("loopback-{}-{}", world.0.unwrap_or(0), world.1),
            "tool_name": "Bash",
            "tool_input": {"command": line},
            "cwd": project.root,
            "hook_event_name": "PreToolUse",
            "permission_mode": "default",
        });
        let mut check = Command::new(BIN)
            .arg("check")
            .current_dir(&project.root)
            .env("HOME", &project.home)
            .env("AGENT_GUARD_AUDIT", "off")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        check
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        let decided = check.wait_with_output().unwrap();
        let output: serde_json::Value = serde_json::from_slice(&decided.stdout).unwrap();
        let hook = &output["hookSpecificOutput"];
        assert_eq!(hook["permissionDecision"], "allow", "{world:?}: {output}");
        let sandboxed = hook["updatedInput"]["command"].as_str().unwrap().to_owned();
        assert!(
            sandboxed.contains(&format!("--allow-domain 'localhost:{tcp}'")),
            "{world:?}: {sandboxed}"
        );
        let run = |command: &str| {
            let mut bash = Command::new("bash");
            bash.args(["-c", command])
                .current_dir(&project.root)
                .env("HOME", &project.home)
                .env("AGENT_GUARD_AUDIT", "off")
                // What is looked at here is the network; snapshots (and their notes where the home directory
                // is not the user's to write) are tested in undo.rs.
                .env("AGENT_GUARD_UNDO", "off")
                .stdin(Stdio::null());
            if let Some(uid) = project.owner {
                bash.uid(uid).gid(uid);
            }
            bash.output().unwrap()
        };
        let granted = run(&sandboxed);
        assert_eq!(text(&granted), "reached", "{world:?}");
        // The grant is that host and port alone: another spelling of the loopback and another port are refused by
        // the proxy, and without the grant the same request reaches nothing.
        let others = run(&format!(
            "'{BIN}' sandbox --profile workspace-write --allow-network --allow-domain localhost:{tcp} -- bash -c \
             \"curl -s -m 20 -o /dev/null -w 'spelling: %{{http_code}}\\n' http://127.0.0.1:{tcp}/spelling; \
             curl -s -m 20 -o /dev/null -w 'port: %{{http_code}}\\n' localhost:{}/port\"",
            servers.udp
        ));
        assert!(
            text(&others).contains("spelling: 403"),
            "{world:?}: {}",
            text(&others)
        );
        assert!(
            text(&others).contains("port: 403"),
            "{world:?}: {}",
            text(&others)
        );
        let refused = run(&format!(
            "'{BIN}' sandbox --profile workspace-write --allow-network -- bash -c \
             \"curl -s -m 20 -o /dev/null -w 'ungranted: %{{http_code}}\\n' localhost:{tcp}/ungranted\""
        ));
        // Without a grant the command's loopback is its own (`NO_PROXY` sends curl there): nothing answers.
        let said = text(&refused);
        assert!(
            said.contains("ungranted: ") && !said.contains("ungranted: 200"),
            "{world:?}: {said}"
        );
        // The command piped into an interpreter asks: the rule names `curl` alone, and the port would be open to
        // the interpreter as well.
        let piped = format!("curl -s -m 20 localhost:{tcp}/piped | perl -ne print");
        let mut check = Command::new(BIN)
            .arg("check")
            .current_dir(&project.root)
            .env("HOME", &project.home)
            .env("AGENT_GUARD_AUDIT", "off")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut piped_input = input.clone();
        piped_input["tool_input"]["command"] = piped.into();
        check
            .stdin
            .take()
            .unwrap()
            .write_all(piped_input.to_string().as_bytes())
            .unwrap();
        let decided = check.wait_with_output().unwrap();
        let output: serde_json::Value = serde_json::from_slice(&decided.stdout).unwrap();
        assert_eq!(
            output["hookSpecificOutput"]["permissionDecision"], "ask",
            "{world:?}: {output}"
        );
        let seen = servers.seen();
        let requests: Vec<&String> = seen.iter().filter(|s| s.starts_with("tcp: GET")).collect();
        assert_eq!(requests.len(), 1, "{world:?}: {seen:?}");
        assert!(
            requests[0].starts_with("tcp: GET /granted HTTP/1.1\r\n"),
            "{world:?}: {seen:?}"
        );
    }
}

/// A `WebFetch(domain:…)` allow rule that "don't ask again" saved in the project's `.claude/settings.local.json`,
/// which git does not track, is the user's: its host joins the domains of the sandbox's proxy. Committed, the same
/// file is the repository's, whose allow rules add no domain.
#[test]
fn a_webfetch_rule_of_a_local_file_git_does_not_track_reaches_the_proxy() {
    if !supported() {
        return;
    }
    let project = Project::new(None, true);
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(&project.root)
            .env("HOME", &project.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out));
    };
    git(&["init", "-q"]);
    std::fs::create_dir_all(project.root.join(".claude")).unwrap();
    std::fs::write(
        project.root.join(".claude/settings.local.json"),
        r#"{"permissions": {"allow": ["WebFetch(domain:docs.example.org)"]}}"#,
    )
    .unwrap();
    std::fs::write(project.root.join(".gitignore"), ".claude/settings.local.json\n").unwrap();
    let domains = || {
        let output = Command::new(BIN)
            .args([
                "sandbox",
                "--profile",
                "workspace-write",
                "--allow-network",
                "--verbose",
                "--",
                "true",
            ])
            .current_dir(&project.root)
            .env("HOME", &project.home)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "{stderr}");
        stderr
            .lines()
            .find(|l| l.starts_with("  network through the proxy to "))
            .unwrap_or_else(|| panic!("{stderr}"))
            .to_owned()
    };
    let line = domains();
    assert!(line.contains(" docs.example.org"), "{line}");
    git(&["add", "-f", ".claude/settings.local.json"]);
    let line = domains();
    assert!(!line.contains("docs.example.org"), "{line}");
}
