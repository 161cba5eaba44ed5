//! `agent-guard serve` against hostile and careless clients, over real sockets on a free loopback port: every error
//! is JSON, query values are checked, slow and idle connections are dropped, requests through a foreign `Host` are
//! refused, weak tokens are refused at start and a token is printed once, the database is private, a client that
//! resumes after a restart is told to re-read, and cancelling a session answers whoever waits on its asks.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

mod served;

use std::io::{BufRead as _, BufReader, ErrorKind, Read as _, Write as _};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt as _;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use served::{TOKEN, client, command, decision_of, read_events, serve};

/// Polls `probe` until it gives a value, for at most `limit`.
fn wait_for<T>(limit: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "the condition never held within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn address(server: &served::Served) -> String {
    server.url.trim_start_matches("http://").to_owned()
}

/// Sends `request` as it is on a new connection and reads the answer until the server closes the connection.
fn raw(addr: &str, request: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in `{answer}`"));
    (status, answer)
}

/// Every way a request can fail is answered with a JSON `{"error": …}` that names the problem, with the security
/// headers, and the connection is answered, never dropped.
#[test]
fn every_error_is_json_with_the_problem_named() {
    let server = serve(&["--token", TOKEN]);
    let input = server.input("s-errors", "ls").to_string();
    let long = "x".repeat(300);
    // (method, path, token, body, status, part of the message)
    type Case<'a> = (&'a str, String, Option<&'a str>, Vec<u8>, u16, &'a str);
    let cases: Vec<Case<'_>> = vec![
        (
            "GET",
            "/v1/approvals".into(),
            None,
            vec![],
            401,
            "missing bearer token",
        ),
        (
            "GET",
            "/v1/approvals".into(),
            Some("wrong-token-0123456789abcdef"),
            vec![],
            401,
            "wrong bearer token",
        ),
        (
            "GET",
            "/v1/nothing".into(),
            Some(TOKEN),
            vec![],
            404,
            "no such endpoint",
        ),
        ("GET", "/nothing".into(), None, vec![], 404, "no such endpoint"),
        (
            "GET",
            "/v1/decide".into(),
            Some(TOKEN),
            vec![],
            405,
            "`GET` is not allowed on `/v1/decide`",
        ),
        (
            "DELETE",
            "/v1/approvals".into(),
            Some(TOKEN),
            vec![],
            405,
            "is not allowed",
        ),
        (
            "POST",
            "/v1/decide".into(),
            Some(TOKEN),
            vec![b' '; 2 << 20],
            413,
            "over 1024 KiB",
        ),
        (
            "POST",
            "/v1/decide".into(),
            Some(TOKEN),
            b"{\"cwd\": ".to_vec(),
            400,
            "invalid hook input",
        ),
        (
            "POST",
            "/v1/decide".into(),
            Some(TOKEN),
            vec![0xff, 0xfe],
            400,
            "UTF-8",
        ),
        (
            "POST",
            "/v1/decide".into(),
            Some(TOKEN),
            vec![],
            400,
            "the body is empty",
        ),
        (
            "GET",
            "/v1/approvals/abc?wait=1e20".into(),
            Some(TOKEN),
            vec![],
            400,
            "`wait` is 100000000000000000000",
        ),
        (
            "GET",
            "/v1/approvals/abc?wait=-1".into(),
            Some(TOKEN),
            vec![],
            400,
            "from 0 to 30",
        ),
        (
            "GET",
            "/v1/approvals/abc?wait=31".into(),
            Some(TOKEN),
            vec![],
            400,
            "from 0 to 30",
        ),
        (
            "GET",
            "/v1/approvals/abc?wait=NaN".into(),
            Some(TOKEN),
            vec![],
            400,
            "from 0 to 30",
        ),
        (
            "GET",
            "/v1/approvals/abc?wait=inf".into(),
            Some(TOKEN),
            vec![],
            400,
            "from 0 to 30",
        ),
        (
            "GET",
            "/v1/approvals/abc?wait=soon".into(),
            Some(TOKEN),
            vec![],
            400,
            "invalid query",
        ),
        (
            "GET",
            "/v1/approvals/abc?wait=1&also=2".into(),
            Some(TOKEN),
            vec![],
            400,
            "unknown field `also`",
        ),
        (
            "GET",
            "/v1/audit?limit=0".into(),
            Some(TOKEN),
            vec![],
            400,
            "`limit` is 0",
        ),
        (
            "GET",
            "/v1/audit?limit=99999999999".into(),
            Some(TOKEN),
            vec![],
            400,
            "invalid query",
        ),
        (
            "GET",
            "/v1/audit?decision=maybe".into(),
            Some(TOKEN),
            vec![],
            400,
            "`decision` is `maybe`",
        ),
        (
            "GET",
            format!("/v1/audit?session={long}"),
            Some(TOKEN),
            vec![],
            400,
            "`session` is longer",
        ),
        (
            "GET",
            "/v1/audit?tool=a%0Ab".into(),
            Some(TOKEN),
            vec![],
            400,
            "`tool` holds a control character",
        ),
        (
            "GET",
            "/v1/events?since=1".into(),
            Some(TOKEN),
            vec![],
            400,
            "unknown field `since`",
        ),
        (
            "POST",
            "/v1/approvals?agent=a%00".into(),
            Some(TOKEN),
            input.clone().into_bytes(),
            400,
            "`agent`",
        ),
        (
            "GET",
            "/v1/approvals/0123456789abcdef".into(),
            Some(TOKEN),
            vec![],
            404,
            "no ask has the id",
        ),
        (
            "POST",
            "/v1/approvals/0123456789abcdef".into(),
            Some(TOKEN),
            br#"{"answer":"deny"}"#.to_vec(),
            404,
            "no ask",
        ),
        (
            "POST",
            "/v1/approvals/0123456789abcdef".into(),
            Some(TOKEN),
            br#"{"answer":"sure"}"#.to_vec(),
            400,
            "invalid answer",
        ),
        (
            "POST",
            "/v1/sessions".into(),
            Some(TOKEN),
            b"[]".to_vec(),
            400,
            "must be a JSON object",
        ),
        (
            "GET",
            "/v1/sessions/nope".into(),
            Some(TOKEN),
            vec![],
            404,
            "no session",
        ),
        (
            "POST",
            "/v1/sessions/nope/cancel".into(),
            Some(TOKEN),
            vec![],
            404,
            "no session",
        ),
    ];
    let http = client();
    for (method, path, token, body, status, message) in cases {
        let mut request = http
            .request(method.parse().unwrap(), format!("{}{path}", server.url))
            .body(body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let headers = response.headers().clone();
        let got = response.status().as_u16();
        let text = response.text().unwrap();
        let case = format!("{method} {path}: {got} {text}");
        assert_eq!(got, status, "{case}");
        assert!(
            headers["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/json"),
            "{case}"
        );
        let error: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert!(
            error["error"].as_str().is_some_and(|e| e.contains(message)),
            "{case}: wanted `{message}`"
        );
        assert_eq!(headers["x-content-type-options"], "nosniff", "{case}");
        assert_eq!(headers["referrer-policy"], "no-referrer", "{case}");
        assert!(
            headers["content-security-policy"]
                .to_str()
                .unwrap()
                .contains("default-src 'none'"),
            "{case}"
        );
    }
    // Still serving.
    let (status, _) = server.get("/v1/approvals");
    assert_eq!(status, 200);
}

#[test]
fn the_bearer_scheme_is_read_in_any_case_and_the_page_carries_its_policy() {
    let server = serve(&["--token", TOKEN]);
    for value in [
        format!("Bearer {TOKEN}"),
        format!("bearer {TOKEN}"),
        format!("BEARER {TOKEN}"),
        format!("Bearer   {TOKEN}  "),
    ] {
        let response = client()
            .get(format!("{}/v1/approvals", server.url))
            .header("authorization", &value)
            .send()
            .unwrap();
        assert_eq!(response.status().as_u16(), 200, "{value}");
    }
    for value in [
        format!("Basic {TOKEN}"),
        format!("Bearer{TOKEN}"),
        TOKEN.to_owned(),
    ] {
        let response = client()
            .get(format!("{}/v1/approvals", server.url))
            .header("authorization", &value)
            .send()
            .unwrap();
        assert_eq!(response.status().as_u16(), 401, "{value}");
    }
    let page = client().get(format!("{}/", server.url)).send().unwrap();
    assert_eq!(page.status().as_u16(), 200);
    let policy = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(
        policy.contains("script-src 'self'") && !policy.contains("unsafe-inline"),
        "{policy}"
    );
    assert_eq!(page.headers()["x-content-type-options"], "nosniff");
    assert_eq!(page.headers()["referrer-policy"], "no-referrer");
}

/// A page of another site whose name resolves to 127.0.0.1 (DNS rebinding) reaches the port with its own name as
/// `Host`: refused. The names of loopback itself, with the port, are served.
#[test]
fn a_loopback_server_answers_only_to_its_own_names() {
    let server = serve(&["--token", TOKEN]);
    let addr = address(&server);
    let port = addr.rsplit_once(':').unwrap().1.to_owned();
    let request = |host: &str| {
        format!(
            "GET /v1/approvals HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
        )
    };
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("LocalHost:{port}"),
        format!("[::1]:{port}"),
    ] {
        let (status, answer) = raw(&addr, &request(&host));
        assert_eq!(status, 200, "{host}: {answer}");
    }
    for host in [
        format!("attacker.example:{port}"),
        format!("127.0.0.1.nip.io:{port}"),
        "localhost".to_owned(),
        "127.0.0.1:1".to_owned(),
        String::new(),
    ] {
        let (status, answer) = raw(&addr, &request(&host));
        assert_eq!(status, 421, "{host}: {answer}");
        let body = answer.split("\r\n\r\n").nth(1).unwrap();
        let error: Value = serde_json::from_str(body).unwrap();
        assert!(
            error["error"].as_str().unwrap().contains("not this server"),
            "{answer}"
        );
    }
    // The page too.
    let (status, _) = raw(
        &addr,
        &format!("GET / HTTP/1.1\r\nHost: attacker.example:{port}\r\nConnection: close\r\n\r\n"),
    );
    assert_eq!(status, 421);
}

/// Raises this process's limit of open files to its ceiling; the number it allows.
fn open_files_allowed() -> u64 {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
    getrlimit(Resource::RLIMIT_NOFILE).unwrap().0
}

/// Whether the server has closed `stream` (its answer, if any, read and dropped).
fn closed(stream: &mut TcpStream) -> bool {
    let mut buffer = [0_u8; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}

/// 1,100 clients that open a connection and never finish their headers: all are disconnected within the header
/// timeout, the server holds at most a bounded number of them meanwhile, and it serves normal clients after.
#[test]
fn clients_that_never_finish_their_headers_are_dropped() {
    const CLIENTS: usize = 1100;
    if open_files_allowed() < CLIENTS as u64 + 100 {
        eprintln!("skipped: this process may not open {CLIENTS} connections (RLIMIT_NOFILE)");
        return;
    }
    let server = serve(&["--token", TOKEN, "--header-timeout", "2"]);
    let addr = address(&server);
    let started = Instant::now();
    let mut open: Vec<TcpStream> = (0..CLIENTS)
        .map(|_| {
            let mut stream = TcpStream::connect(&addr).unwrap();
            // Headers begun, never finished.
            let _ = stream.write_all(format!("GET /v1/approvals HTTP/1.1\r\nHost: {addr}\r\n").as_bytes());
            stream.set_nonblocking(true).unwrap();
            stream
        })
        .collect();
    let connected = started.elapsed();
    // Soon after, only the bounded number of half-open connections is still held.
    wait_for(Duration::from_millis(500), || {
        open.retain_mut(|stream| !closed(stream));
        (open.len() <= 256).then_some(())
    });
    assert!(
        !open.is_empty(),
        "no connection was held at all: the test shows nothing"
    );
    // Those are dropped at the header timeout.
    wait_for(Duration::from_secs(6), || {
        open.retain_mut(|stream| !closed(stream));
        open.is_empty().then_some(())
    });
    let all_closed = started.elapsed();
    assert!(
        all_closed < connected + Duration::from_secs(5),
        "closed after {all_closed:?}"
    );
    let (status, _) = server.get("/v1/approvals");
    assert_eq!(status, 200);
}

/// A keep-alive connection with the token is closed once idle for the header timeout; one without the token is
/// closed right after its answer; a body that never ends is a `408`.
#[test]
fn idle_and_unauthorized_connections_are_closed() {
    let server = serve(&["--token", TOKEN, "--header-timeout", "1"]);
    let addr = address(&server);
    let read_answer = |stream: &mut TcpStream| {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut length = 0;
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        status
    };
    let mut kept = TcpStream::connect(&addr).unwrap();
    kept.write_all(
        format!("GET /v1/approvals HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n")
            .as_bytes(),
    )
    .unwrap();
    assert!(read_answer(&mut kept).contains("200"));
    let idle_since = Instant::now();
    kept.set_nonblocking(true).unwrap();
    wait_for(Duration::from_secs(5), || closed(&mut kept).then_some(()));
    assert!(
        idle_since.elapsed() >= Duration::from_millis(900),
        "{:?}",
        idle_since.elapsed()
    );

    let mut stranger = TcpStream::connect(&addr).unwrap();
    stranger
        .write_all(format!("GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .unwrap();
    assert!(read_answer(&mut stranger).contains("200"));
    stranger.set_nonblocking(true).unwrap();
    wait_for(Duration::from_millis(500), || closed(&mut stranger).then_some(()));

    let mut slow = TcpStream::connect(&addr).unwrap();
    slow.write_all(
        format!(
            "POST /v1/decide HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: 100\r\n\r\n{{"
        )
        .as_bytes(),
    )
    .unwrap();
    let status = read_answer(&mut slow);
    assert!(status.contains("408"), "{status}");
}

#[test]
fn weak_tokens_are_refused_at_start_with_the_problem_named() {
    let dir = tempfile::tempdir().unwrap();
    let start = |token: Option<&str>, env: Option<&str>| {
        let mut serve = command(dir.path());
        serve
            .current_dir(dir.path())
            .args(["serve", "--listen", "127.0.0.1:0"]);
        if let Some(token) = token {
            serve.args(["--token", token]);
        }
        if let Some(env) = env {
            serve.env("AGENT_GUARD_TOKEN", env);
        }
        serve.output().unwrap()
    };
    let sixteen_spaces = " ".repeat(16);
    let one_letter = "a".repeat(48);
    let two_letters = "xy".repeat(24);
    for (token, problem) in [
        ("short", "random bits"),
        (sixteen_spaces.as_str(), "whitespace"),
        ("3f9c0a7e5b21d844 6c0e9f1a2b7d5c83", "whitespace"),
        (one_letter.as_str(), "repeats characters"),
        (two_letters.as_str(), "repeats characters"),
        ("0123456789abcdef", "random bits"),
    ] {
        for (flag, env) in [(Some(token), None), (None, Some(token))] {
            let output = start(flag, env);
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(1), "{token:?}: {stderr}");
            assert!(
                stderr.contains("token is refused") && stderr.contains(problem),
                "{token:?}: {stderr}"
            );
        }
    }
}

/// Starts `serve` in `dir` and returns its first `lines` lines of output, then stops it.
fn first_lines(dir: &std::path::Path, args: &[&str], lines: usize) -> String {
    let mut child = command(dir)
        .current_dir(dir)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut text = String::new();
    for _ in 0..lines {
        reader.read_line(&mut text).unwrap();
    }
    child.kill().unwrap();
    child.wait().unwrap();
    reader.read_to_string(&mut text).unwrap();
    text
}

#[test]
fn a_generated_token_is_printed_once_and_a_given_one_never() {
    let dir = tempfile::tempdir().unwrap();
    let first = first_lines(dir.path(), &[], 3);
    let token = std::fs::read_to_string(dir.path().join(".agent-guard/server-token"))
        .unwrap()
        .trim()
        .to_owned();
    assert!(first.contains(&format!("#token={token}")), "{first}");
    let again = first_lines(dir.path(), &[], 2);
    assert!(!again.contains(&token), "{again}");
    assert!(
        again.contains("token: read from .agent-guard/server-token"),
        "{again}"
    );
    let given = first_lines(dir.path(), &["--token", TOKEN], 2);
    assert!(
        !given.contains(TOKEN) && given.contains("token: from --token"),
        "{given}"
    );
}

#[test]
fn the_database_and_its_wal_are_private() {
    let server = serve(&["--token", TOKEN]);
    server.post("/v1/decide", &server.input("s-modes", "ls"));
    let db = server.dir.path().join(".agent-guard/server.db");
    for suffix in ["", "-wal", "-shm"] {
        let file = std::path::PathBuf::from(format!("{}{suffix}", db.display()));
        let mode = wait_for(Duration::from_secs(5), || {
            std::fs::metadata(&file)
                .ok()
                .map(|m| m.permissions().mode() & 0o777)
        });
        assert_eq!(mode, 0o600, "{}", file.display());
    }

    // A database an earlier version left readable by others is narrowed.
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.db");
    std::fs::write(&old, "").unwrap();
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
    let server = serve(&["--token", TOKEN, "--db", old.to_str().unwrap()]);
    let (status, _) = server.get("/v1/approvals");
    assert_eq!(status, 200);
    assert_eq!(
        std::fs::metadata(&old).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

fn stream(server: &served::Served, last_event_id: Option<&str>) -> BufReader<reqwest::blocking::Response> {
    let mut request = client()
        .get(format!("{}/v1/events", server.url))
        .bearer_auth(TOKEN);
    if let Some(id) = last_event_id {
        request = request.header("Last-Event-ID", id);
    }
    let response = request.send().unwrap();
    assert_eq!(response.status().as_u16(), 200);
    BufReader::new(response)
}

/// Event ids name the run of the server: a client that resumes with an id of the run before a restart is told to
/// re-read (`resync`) rather than shown as live while it misses what came since; one that resumes within the
/// same run gets what it missed.
#[test]
fn a_client_resuming_across_a_restart_is_told_to_resync() {
    let mut first = serve(&["--token", TOKEN]);
    let db = first.dir.path().join(".agent-guard/server.db");
    let mut events = stream(&first, None);
    first.post("/v1/decide", &first.input("s-restart", "ls"));
    let seen = read_events(&mut events, 1).remove(0);
    assert_eq!(seen.event, "decision");
    drop(events);
    // The list says where the stream stood when it was read: resuming there misses nothing after it.
    let listed = client()
        .get(format!("{}/v1/approvals", first.url))
        .bearer_auth(TOKEN)
        .send()
        .unwrap();
    let listed_at = listed.headers()["x-event-id"].to_str().unwrap().to_owned();
    assert_eq!(listed_at, seen.id);
    // A page of the queue names the same place, written as the stream writes its ids.
    let (status, page) = first.get("/v1/queue?limit=0");
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["event_id"].as_str(), Some(listed_at.as_str()), "{page}");
    let mut resumed = stream(&first, Some(&listed_at));
    first.post("/v1/decide", &first.input("s-restart", "pwd"));
    let next = read_events(&mut resumed, 1).remove(0);
    assert_eq!(
        (next.event.as_str(), next.number()),
        ("decision", seen.number() + 1)
    );
    drop(resumed);

    first.child.kill().unwrap();
    first.child.wait().unwrap();
    let second = serve(&["--token", TOKEN, "--db", db.to_str().unwrap()]);
    let (_, page) = second.get("/v1/queue?limit=0");
    let page_at = page["event_id"].as_str().unwrap();
    assert_ne!(page_at.rsplit_once('-').unwrap().0, seen.instance(), "{page}");
    for stale in [seen.id.as_str(), "17", "garbage"] {
        let mut events = stream(&second, Some(stale));
        let resync = read_events(&mut events, 1).remove(0);
        assert_eq!(resync.event, "resync", "{stale}");
        assert!(resync.data["reason"].is_string());
        assert_ne!(resync.instance(), seen.instance());
        second.post("/v1/decide", &second.input("s-restart", "ls"));
        let after = read_events(&mut events, 1).remove(0);
        assert_eq!(after.event, "decision");
        assert_eq!(after.instance(), resync.instance());
        assert!(after.number() > resync.number());
    }
}

/// Cancelling a coding agent's session answers the `check` waiting on its ask with a deny at once, takes the ask
/// off the queue, and a second cancel is a conflict.
#[test]
fn cancelling_a_session_answers_the_check_waiting_on_its_ask() {
    let server = serve(&["--token", TOKEN]);
    let mut events = stream(&server, None);
    let waiting = server.spawn_client(&["check"], &server.input("s-cancel", "npm test"), &[]);
    let pending = server.wait_pending(1);
    let id = pending[0]["id"].as_str().unwrap().to_owned();
    let (status, cancelled) = server.post("/v1/sessions/s-cancel/cancel", &json!({}));
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["cancelled_asks"], json!([id]));
    assert!(server.pending().is_empty());
    let output = waiting.wait_with_output().unwrap();
    assert_eq!(decision_of(&output), "deny");
    assert!(String::from_utf8_lossy(&output.stdout).contains("cancelled"));
    let resolved = read_events(&mut events, 2);
    assert_eq!(resolved[1].event, "permission_resolved");
    assert_eq!(resolved[1].data["state"], "cancelled");

    let (status, again) = server.post("/v1/sessions/s-cancel/cancel", &json!({}));
    assert_eq!(status, 409, "{again}");
    let (status, late) = server.post(&format!("/v1/approvals/{id}"), &json!({"answer": "allow_once"}));
    assert_eq!(status, 409, "{late}");
    assert!(late["error"].as_str().unwrap().contains("cancelled"));
    let (_, ask) = server.get(&format!("/v1/approvals/{id}"));
    assert_eq!(ask["output"]["hookSpecificOutput"]["permissionDecision"], "deny");
}

/// Cancelling a session the server runs while it waits on an ask: the ask ends at once, the session stops
/// without running the call, and a second cancel is a conflict.
#[test]
fn cancelling_a_server_session_waiting_on_an_ask_stops_it() {
    let server = serve(&["--token", TOKEN]);
    let scenario = json!({
        "name": "waits",
        "files": {"README.md": "# x\n"},
        "settings": {"project": {"agentGuard": {"sandbox": {"autoAllow": false}}}},
        "turns": [
            {"calls": [{"id": "build", "tool": "run_bash", "args": {"command": "make build"}}]},
            {"calls": [{"id": "never", "tool": "read_file", "args": {"file_path": "README.md"}}]}
        ],
        "final_answer": "done"
    });
    let (status, started) = server.post("/v1/sessions", &scenario);
    assert_eq!(status, 201, "{started}");
    let session = started["id"].as_str().unwrap().to_owned();
    let pending = server.wait_pending(1);
    assert_eq!(pending[0]["session_id"], session.as_str());
    let (status, cancelling) = server.post(&format!("/v1/sessions/{session}/cancel"), &json!({}));
    assert_eq!(status, 202, "{cancelling}");
    assert_eq!(cancelling["cancelled_asks"], json!([pending[0]["id"]]));
    assert!(server.pending().is_empty(), "the ask left the queue at once");
    let (status, again) = server.post(&format!("/v1/sessions/{session}/cancel"), &json!({}));
    assert_eq!(status, 409, "{again}");
    let ended = wait_for(Duration::from_secs(10), || {
        let (_, row) = server.get(&format!("/v1/sessions/{session}"));
        (row["state"] != "running").then_some(row)
    });
    assert_eq!(ended["state"], "cancelled", "{ended}");
    let (_, rows) = server.get(&format!("/v1/audit?session={session}"));
    assert!(
        rows.as_array()
            .unwrap()
            .iter()
            .all(|row| row["tool_name"] != "read_file"),
        "a call ran after the cancel: {rows}"
    );
}

/// The server holds the decision's bound itself: a decision past it is the bound's deny, and a decision that
/// panics is a deny, each with its audit row, and the server goes on.
#[test]
fn a_decision_past_its_bound_or_panicking_is_denied_over_http() {
    for (variable, value, reason) in [
        (
            "AGENT_GUARD_DECISION_TIMEOUT_MS",
            "0",
            "did not finish within 0 ms",
        ),
        ("AGENT_GUARD_FAILPOINT", "decide", "internal error while deciding"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let server = served::serve_in_with_env(dir, &["--token", TOKEN], &[(variable, value)]);
        let (status, output) = server.post("/v1/decide", &server.input("s-bound", "ls"));
        assert_eq!(status, 200, "{variable}");
        assert_eq!(
            output["hookSpecificOutput"]["permissionDecision"], "deny",
            "{variable}"
        );
        assert!(
            output["hookSpecificOutput"]["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .contains(reason),
            "{variable}: {output}"
        );
        let rows = wait_for(Duration::from_secs(5), || {
            let (_, rows) = server.get("/v1/audit?session=s-bound");
            (!rows.as_array().unwrap().is_empty()).then_some(rows)
        });
        assert_eq!(rows[0]["decision"], "deny");
        assert_eq!(rows[0]["tool_name"], "Bash");
    }
}
