//! The page at `/` in a real headless Chromium, driven over the DevTools protocol: an ask made by `check
//! --server` appears within a second, a click on "Allow once" answers it, and the waiting `check` prints allow.
//! Chromium is Debian's `chromium` package (`cargo xtask ci` installs it); without it the test says it is
//! skipped, or fails under `AGENT_GUARD_REQUIRE_CHROMIUM=1` (tests/support/need.rs). `AGENT_GUARD_SCREENSHOT=FILE` keeps a screenshot of the
//! page with the ask (docs/server.md shows one).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

#[path = "../../../tests/support/need.rs"]
mod need;
mod served;

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use served::{TOKEN, decision_of, serve};
use tungstenite::{Message, WebSocket};

const CHROMIUM: &str = "/usr/bin/chromium";

/// A headless Chromium and one DevTools session attached to its page.
struct Browser {
    child: Child,
    socket: WebSocket<TcpStream>,
    session: String,
    next_id: u64,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    /// Starts Chromium with a phone-sized window and opens `url` in a new page.
    fn open(url: &str) -> Self {
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(CHROMIUM)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--remote-debugging-port=0",
                "--window-size=430,900",
                "--hide-scrollbars",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Chromium prints where its DevTools endpoint listens on stderr.
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let endpoint = loop {
            let mut line = String::new();
            assert!(
                stderr.read_line(&mut line).unwrap() > 0,
                "chromium ended before its DevTools endpoint"
            );
            if let Some(at) = line.find("ws://") {
                break line[at..].trim().to_owned();
            }
        };
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        let rest = endpoint.trim_start_matches("ws://");
        let host = &rest[..rest.find('/').unwrap()];
        let stream = TcpStream::connect(host).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let (socket, _) = tungstenite::client(endpoint.as_str(), stream).unwrap();
        let mut browser = Self {
            child,
            socket,
            session: String::new(),
            next_id: 0,
            _profile: profile,
        };
        let target = browser.call(None, "Target.createTarget", json!({ "url": url }));
        let attached = browser.call(
            None,
            "Target.attachToTarget",
            json!({ "targetId": target["targetId"], "flatten": true }),
        );
        browser.session = attached["sessionId"].as_str().unwrap().to_owned();
        browser
    }

    /// One DevTools command and its result (events in between are skipped).
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.socket.send(Message::text(message.to_string())).unwrap();
        loop {
            let Message::Text(text) = self.socket.read().unwrap() else {
                continue;
            };
            let reply: Value = serde_json::from_str(text.as_str()).unwrap();
            if reply["id"] == id {
                assert!(reply.get("error").is_none(), "{method}: {reply}");
                return reply["result"].clone();
            }
        }
    }

    fn page(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.call(Some(&session), method, params)
    }

    /// Evaluates `expression` in the page and returns its value.
    fn eval(&mut self, expression: &str) -> Value {
        let result = self.page(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        );
        result["result"]["value"].clone()
    }

    /// Waits (at most `limit`) until `expression` is true in the page.
    fn wait_until(&mut self, expression: &str, limit: Duration) -> Duration {
        let started = Instant::now();
        while started.elapsed() < limit {
            if self.eval(expression) == json!(true) {
                return started.elapsed();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("`{expression}` did not become true within {limit:?}");
    }

    /// Clicks the middle of the element `selector` with the mouse, as a person would.
    fn click(&mut self, selector: &str) {
        let rect = self.eval(&format!(
            "(() => {{ const r = document.querySelector({selector:?}).getBoundingClientRect(); \
             return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
        ));
        let (x, y) = (rect[0].as_f64().unwrap(), rect[1].as_f64().unwrap());
        for kind in ["mousePressed", "mouseReleased"] {
            self.page(
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 }),
            );
        }
    }

    fn screenshot(&mut self, file: &Path) {
        let shot = self.page("Page.captureScreenshot", json!({ "format": "png" }));
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap();
        std::fs::write(file, png).unwrap();
    }
}

#[test]
fn an_ask_appears_on_the_page_and_a_click_allows_it_once() {
    let missing = (!Path::new(CHROMIUM).exists()).then(|| {
        format!("{CHROMIUM} is missing (Debian's `chromium` package; `cargo xtask ci` installs it)")
    });
    if !need::CHROMIUM.met(missing) {
        return;
    }
    let server = serve(&["--token", TOKEN]);
    // An earlier decision, for the audit table.
    server.post("/v1/decide", &server.input("s-page", "git status"));
    let mut browser = Browser::open(&format!("{}/#token={TOKEN}", server.url));
    browser.wait_until(
        "document.getElementById('status').textContent === 'live'",
        Duration::from_secs(15),
    );
    assert_eq!(
        browser.eval("location.hash"),
        json!(""),
        "the token leaves the address bar"
    );
    browser.wait_until(
        "document.querySelectorAll('#audit tbody tr').length === 1",
        Duration::from_secs(5),
    );

    let waiting = server.spawn_client(&["check"], &server.input("s-page", "npm run build"), &[]);
    let seen = browser.wait_until(
        "document.querySelectorAll('.ask').length === 1",
        Duration::from_secs(5),
    );
    assert!(seen < Duration::from_secs(1), "the ask took {seen:?} to appear");
    assert_eq!(
        browser.eval("document.querySelector('.ask .what').textContent"),
        json!("npm run build")
    );
    let rule = browser.eval("document.querySelector('.ask .rule').textContent");
    assert!(rule.as_str().unwrap().contains("Bash(npm run build:*)"), "{rule}");
    assert_eq!(browser.eval("document.title"), json!("(1) agent-guard"));
    if let Some(file) = std::env::var_os("AGENT_GUARD_SCREENSHOT") {
        browser.screenshot(Path::new(&file));
    }

    browser.click(".ask button[data-answer='allow_once']");
    let output = waiting.wait_with_output().unwrap();
    assert_eq!(decision_of(&output), "allow");
    browser.wait_until(
        "document.querySelectorAll('.ask').length === 0",
        Duration::from_secs(5),
    );
    // The answer reaches the audit table too.
    browser.wait_until(
        "[...document.querySelectorAll('#audit tbody tr')].some(r => r.textContent.includes('allowed once'))",
        Duration::from_secs(5),
    );

    // The keyboard answers the selected ask.
    let waiting = server.spawn_client(&["check"], &server.input("s-page", "npm run lint"), &[]);
    browser.wait_until(
        "document.querySelectorAll('.ask').length === 1",
        Duration::from_secs(5),
    );
    browser.page(
        "Input.dispatchKeyEvent",
        json!({ "type": "keyDown", "key": "d", "text": "d" }),
    );
    browser.page("Input.dispatchKeyEvent", json!({ "type": "keyUp", "key": "d" }));
    assert_eq!(decision_of(&waiting.wait_with_output().unwrap()), "deny");

    // A session the server runs shows up with its events, and its Cancel button stops it.
    let (status, session) = server.post(
        "/v1/sessions",
        &json!({
            "name": "page-session",
            "settings": {"project": {"permissions": {"allow": ["Bash(sleep:*)"]}}},
            "turns": [
                {"calls": [{"id": "wait", "tool": "run_bash", "args": {"command": "sleep 2"}}]},
                {"calls": [{"id": "wait-more", "tool": "run_bash", "args": {"command": "sleep 2"}}]}
            ]
        }),
    );
    assert_eq!(status, 201, "{session}");
    browser.wait_until(
        "[...document.querySelectorAll('.session')].some(s => s.textContent.includes('sleep 2') \
         && !s.querySelector('.cancel').hidden)",
        Duration::from_secs(5),
    );
    browser.click(".session .cancel");
    browser.wait_until(
        "document.querySelector('.session .state').textContent === 'cancelled' \
         && document.querySelector('.session .log').textContent.includes('stopped (cancelled)')",
        Duration::from_secs(10),
    );
}
