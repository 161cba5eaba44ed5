//! A web server on loopback that stands for the domains `a.test`, `b.test` and `c.test` (the sandbox's proxy maps
//! them to `127.0.0.1` through `AGENT_GUARD_PROXY_RESOLVE`): `/to-NAME` redirects to `http://NAME.test:PORT/landed`,
//! anything else answers `reached HOST PATH`. It records each `HOST PATH` it served.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The server, on a thread of its own for the rest of the test process.
pub(crate) struct Redirector {
    pub(crate) port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Redirector {
    pub(crate) fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let recording = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                let mut head = Vec::new();
                let mut chunk = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut chunk) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&chunk[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let path = head.split(' ').nth(1).unwrap_or_default().to_owned();
                let host = head
                    .lines()
                    .find_map(|l| l.strip_prefix("Host: "))
                    .unwrap_or_default()
                    .split(':')
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                recording.lock().unwrap().push(format!("{host} {path}"));
                let answer = match path.strip_prefix("/to-") {
                    Some(name) => format!(
                        "HTTP/1.1 302 Found\r\nLocation: http://{name}.test:{port}/landed\r\nContent-Length: 0\r\n\
                         Connection: close\r\n\r\n"
                    ),
                    None => {
                        let body = format!("reached {host} {path}\n");
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                            body.len()
                        )
                    }
                };
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        Self { port, seen }
    }

    /// Each `HOST PATH` served so far.
    pub(crate) fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}
