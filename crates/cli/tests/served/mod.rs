//! A real `agent-guard serve` on a free loopback port, and the clients the tests drive it with.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

pub(crate) const TOKEN: &str = "test-token-0123456789abcdef";

/// A server process in a temporary directory (its state directory and HOME), killed when dropped.
pub(crate) struct Served {
    pub(crate) child: Child,
    pub(crate) url: String,
    pub(crate) dir: tempfile::TempDir,
    pub(crate) project: PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The binary with an empty HOME and no inherited `AGENT_*` variables.
pub(crate) fn command(home: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-guard"));
    command.env("HOME", home);
    for (key, _) in std::env::vars() {
        if key.starts_with("AGENT_") {
            command.env_remove(key);
        }
    }
    command
}

/// Starts `agent-guard serve` with `args` (besides `--listen 127.0.0.1:0`) and waits for its address.
pub(crate) fn serve(args: &[&str]) -> Served {
    let dir = tempfile::tempdir().unwrap();
    serve_in(dir, args)
}

/// The user's settings of the served tests' HOME. The queue's tests need lines that ask: the server and its
/// clients (the same HOME) decide with the analysis alone, so that `npm test` asks instead of running inside the
/// sandbox.
pub(crate) const USER_SETTINGS: &str = r#"{"agentGuard": {"sandbox": {"autoAllow": false}}}"#;

pub(crate) fn serve_in(dir: tempfile::TempDir, args: &[&str]) -> Served {
    serve_with(dir, args, USER_SETTINGS, &[])
}

/// [`serve_in`] with `env` set for the server's process.
pub(crate) fn serve_in_with_env(dir: tempfile::TempDir, args: &[&str], env: &[(&str, &str)]) -> Served {
    serve_with(dir, args, USER_SETTINGS, env)
}

/// [`serve_in`] with the user's settings `settings` and more environment variables.
pub(crate) fn serve_with(
    dir: tempfile::TempDir,
    args: &[&str],
    settings: &str,
    env: &[(&str, &str)],
) -> Served {
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
    std::fs::write(dir.path().join(".claude/settings.json"), settings).unwrap();
    let mut child = command(dir.path())
        .current_dir(dir.path())
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in `{first}`"))
        .trim_end_matches('/')
        .to_owned();
    let project = project.canonicalize().unwrap();
    Served {
        child,
        url,
        dir,
        project,
    }
}

pub(crate) fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

impl Served {
    pub(crate) fn input(&self, session: &str, command: &str) -> Value {
        json!({
            "session_id": session, "cwd": self.project, "permission_mode": "default",
            "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command},
        })
    }

    pub(crate) fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let response = client()
            .post(format!("{}{path}", self.url))
            .bearer_auth(TOKEN)
            .json(body)
            .send()
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().unwrap_or(Value::Null))
    }

    pub(crate) fn get(&self, path: &str) -> (u16, Value) {
        let response = client()
            .get(format!("{}{path}", self.url))
            .bearer_auth(TOKEN)
            .send()
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().unwrap_or(Value::Null))
    }

    /// Puts the command to the queue and returns the ask.
    pub(crate) fn enqueue(&self, session: &str, command: &str) -> Value {
        let (status, ask) = self.post("/v1/approvals", &self.input(session, command));
        assert_eq!(status, 201, "{ask}");
        ask
    }

    /// Starts `agent-guard check --server` (or another client subcommand) on `input`; it waits for an answer.
    pub(crate) fn spawn_client(&self, args: &[&str], input: &Value, env: &[(&str, &str)]) -> Child {
        let mut child = command(self.dir.path())
            .args(args)
            .env("AGENT_GUARD_SERVER", &self.url)
            .env("AGENT_GUARD_TOKEN", TOKEN)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        child
    }

    /// The pending asks.
    pub(crate) fn pending(&self) -> Vec<Value> {
        let (status, list) = self.get("/v1/approvals");
        assert_eq!(status, 200);
        list.as_array().unwrap().clone()
    }

    /// Waits until `n` asks are pending (at most 10 s).
    pub(crate) fn wait_pending(&self, n: usize) -> Vec<Value> {
        for _ in 0..200 {
            let pending = self.pending();
            if pending.len() >= n {
                return pending;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{n} asks never became pending");
    }
}

/// The decision a finished client printed.
pub(crate) fn decision_of(output: &Output) -> String {
    let text = String::from_utf8_lossy(&output.stdout);
    let value: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): `{text}` / {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    value["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// One SSE event as read from a stream.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sse {
    /// `INSTANCE-N`.
    pub(crate) id: String,
    pub(crate) event: String,
    pub(crate) data: Value,
}

impl Sse {
    /// The run of the server the event comes from.
    pub(crate) fn instance(&self) -> &str {
        self.id.rsplit_once('-').unwrap().0
    }

    /// Its number on that run.
    pub(crate) fn number(&self) -> u64 {
        self.id.rsplit_once('-').unwrap().1.parse().unwrap()
    }
}

/// Reads `n` events from an SSE response.
pub(crate) fn read_events(reader: &mut impl BufRead, n: usize) -> Vec<Sse> {
    let mut events = Vec::new();
    let (mut id, mut event, mut data) = (String::new(), String::new(), String::new());
    while events.len() < n {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if !data.is_empty() {
                events.push(Sse {
                    id: id.clone(),
                    event: std::mem::take(&mut event),
                    data: serde_json::from_str(&data).unwrap(),
                });
                data.clear();
            }
            continue;
        }
        if let Some(v) = line.strip_prefix("id:") {
            id = v.trim().to_owned();
        } else if let Some(v) = line.strip_prefix("event:") {
            event = v.trim().to_owned();
        } else if let Some(v) = line.strip_prefix("data:") {
            data.push_str(v.trim_start());
        }
    }
    events
}
