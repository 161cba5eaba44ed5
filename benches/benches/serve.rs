//! `POST /v1/decide` of a real server on loopback under load, against the same decisions in process.
//!
//! The server is `agent_server::Server` on a free loopback port with its audit log in a temporary SQLite file,
//! deciding through agent-decide's bounded entry (`DecisionBound::decide`) as `check` does; the load generator is
//! a number of clients, each on one keep-alive HTTP/1.1 connection, sending a mix of four calls for a fixed time.
//! The in-process baseline decides the same calls through the same bounded entry on as many threads as the machine
//! has cores. `cargo bench -p agent-guard-benches --bench serve` measures for 10 s each; without `--bench` (as
//! `cargo test --benches` runs it) it sends a few hundred requests to show it works.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::cast_precision_loss
)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_decide::{CallInput, Deciders, DecisionBound, Guard, GuardOptions, HookInput, HookOutput};
use agent_rules::{Rule, SessionState, Settings};
use agent_server::{Decide, Outcome, ServeConfig, Server};
use agent_tool_traits::{Decision, Source};
use serde_json::{Value, json};

const TOKEN: &str = "bench-token-0123456789abcdef";

/// Decides as `check` does: one bounded decision per input with the guard of the project.
struct Bench {
    guard: Arc<Guard>,
}

impl Bench {
    fn decide_input(&self, input: &HookInput) -> HookOutput {
        let call = CallInput::new(input.tool_name.as_str(), input.tool_input.clone());
        let decided = DecisionBound::from_env().decide(
            &Deciders::new(Arc::clone(&self.guard)),
            call,
            SessionState::default(),
        );
        HookOutput::from_verdict(decided.verdict())
    }
}

impl Decide for Bench {
    fn decide_hook_input(&self, input: &HookInput, _explain: bool) -> Outcome {
        Outcome {
            output: self.decide_input(input),
            decided: None,
            explanation: String::new(),
        }
    }

    fn settings_changed(&self, _cwd: &Path) {}
}

fn inputs(cwd: &Path) -> Vec<Value> {
    let call = |tool: &str, input: Value| json!({"session_id": "bench", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input});
    vec![
        call(
            "Bash",
            json!({"command": "git log --oneline -5 | grep fix | head -3"}),
        ),
        call("Bash", json!({"command": "npm run test -- --watch=false"})),
        call("Read", json!({"file_path": cwd.join("src/lib.rs")})),
        call("Bash", json!({"command": "rm -rf /"})),
    ]
}

/// Requests per second and latency percentiles of `latencies` over `elapsed`.
fn report(name: &str, latencies: &mut [Duration], elapsed: Duration) {
    latencies.sort_unstable();
    let at = |q: f64| latencies[((latencies.len() as f64 - 1.0) * q) as usize];
    println!(
        "{name:<32} {:>9.0} decisions/s   p50 {:>7.1} µs   p99 {:>7.1} µs   ({} decisions)",
        latencies.len() as f64 / elapsed.as_secs_f64(),
        at(0.50).as_secs_f64() * 1e6,
        at(0.99).as_secs_f64() * 1e6,
        latencies.len(),
    );
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let run_for = if full {
        Duration::from_secs(10)
    } else {
        Duration::from_millis(300)
    };
    let clients = 8;
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());

    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().canonicalize().unwrap().join("proj");
    std::fs::create_dir_all(cwd.join("src")).unwrap();
    std::fs::write(cwd.join("src/lib.rs"), "x").unwrap();
    let mut settings = Settings::new();
    for (text, behavior) in [
        ("Bash(npm run test:*)", Decision::Allow),
        ("Read(./.env)", Decision::Deny),
    ] {
        settings.add_rule(Rule::parse(text, behavior, Source::Project).unwrap());
    }
    let options = GuardOptions {
        cwd: cwd.clone(),
        home: None,
        mode: None,
        extra_roots: Vec::new(),
        project: None,
        auto_allow: None,
    };
    let bench = Arc::new(Bench {
        guard: Arc::new(Guard::new(&settings, &options).unwrap()),
    });
    let inputs = inputs(&cwd);
    let parsed: Vec<HookInput> = inputs
        .iter()
        .map(|v| HookInput::parse(&v.to_string()).unwrap())
        .collect();

    // In process: the same inputs through the same bounded entry, one loop per core.
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|n| {
            let (bench, parsed) = (Arc::clone(&bench), parsed.clone());
            std::thread::spawn(move || {
                let mut latencies = Vec::new();
                let mut i = n;
                while started.elapsed() < run_for {
                    let t = Instant::now();
                    std::hint::black_box(bench.decide_input(&parsed[i % parsed.len()]));
                    latencies.push(t.elapsed());
                    i += 1;
                }
                latencies
            })
        })
        .collect();
    let mut latencies: Vec<Duration> = workers.into_iter().flat_map(|w| w.join().unwrap()).collect();
    report(
        &format!("in process ({threads} threads)"),
        &mut latencies,
        started.elapsed(),
    );

    // Over HTTP: a server on loopback and `clients` keep-alive connections.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let config = ServeConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            db: tmp.path().join("server.db").to_string_lossy().parse().unwrap(),
            token: TOKEN.to_owned(),
            approval_timeout: Duration::from_secs(120),
            header_timeout: agent_server::DEFAULT_HEADER_TIMEOUT,
        };
        let server = Server::bind(config, bench).await.unwrap();
        let url = format!("http://{}/v1/decide", server.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(server.run(async {
            let _ = stopped.await;
        }));
        let bodies: Arc<Vec<String>> = Arc::new(inputs.iter().map(Value::to_string).collect());
        let started = Instant::now();
        let tasks: Vec<_> = (0..clients)
            .map(|n| {
                let (url, bodies) = (url.clone(), Arc::clone(&bodies));
                tokio::spawn(async move {
                    // One connection per client, kept alive.
                    let client = reqwest::Client::builder()
                        .pool_max_idle_per_host(1)
                        .build()
                        .unwrap();
                    let mut latencies = Vec::new();
                    let mut i = n;
                    while started.elapsed() < run_for {
                        let t = Instant::now();
                        let response = client
                            .post(&url)
                            .bearer_auth(TOKEN)
                            .header("content-type", "application/json")
                            .body(bodies[i % bodies.len()].clone())
                            .send()
                            .await
                            .unwrap();
                        assert_eq!(response.status().as_u16(), 200);
                        std::hint::black_box(response.bytes().await.unwrap());
                        latencies.push(t.elapsed());
                        i += 1;
                    }
                    latencies
                })
            })
            .collect();
        let mut latencies = Vec::new();
        for task in tasks {
            latencies.extend(task.await.unwrap());
        }
        report(
            &format!("POST /v1/decide ({clients} clients)"),
            &mut latencies,
            started.elapsed(),
        );
        let _ = stop.send(());
        serving.await.unwrap().unwrap();
    });
}
