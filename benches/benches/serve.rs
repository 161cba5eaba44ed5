//! `POST /v1/decide` of a real server on loopback under load, against the same decisions in process.
//!
//! The server is `agent_server::Server` on a free loopback port with its audit log in a temporary SQLite file,
//! deciding through agent-decide's bounded entry (`DecisionBound::decide`) as `check` does; the load generator is
//! a number of clients on one thread, each on one keep-alive HTTP/1.1 connection, sending a mix of four calls for a
//! fixed time. The in-process baseline decides the same calls through the same bounded entry on as many threads as
//! the machine has cores. `cargo bench -p agent-guard-benches --bench serve` alternates the two for 7 rounds of 3 s
//! each and prints each round, the medians and the median ratio; without `--bench` (as `cargo test --benches` runs
//! it) it runs one short round to show it works.

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

use agent_decide::{
    CallInput, Decided, Deciders, DecisionBound, DecisionTimer, Guard, GuardOptions, HookInput, HookOutput,
};
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

/// The timer of a decision whose caller, the server, holds the bound.
struct CallerHolds;

impl DecisionTimer for CallerHolds {
    fn arm(&mut self, _limit: Duration, _past_the_bound: &Decided) {}
    fn disarm(&mut self) {}
}

/// As the `agent-guard` command's decider does: on the server's blocking thread, the server holding the bound.
impl Decide for Bench {
    fn decide_hook_input(&self, input: &HookInput, _explain: bool) -> Outcome {
        let call = CallInput::new(input.tool_name.as_str(), input.tool_input.clone());
        let decided = DecisionBound::from_env().decide_timed(
            &mut CallerHolds,
            &Deciders::new(Arc::clone(&self.guard)),
            &call,
            &SessionState::default(),
        );
        Outcome {
            output: HookOutput::from_verdict(decided.verdict()),
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

/// Sends `request` (a whole HTTP/1.1 request) on `stream` and reads the answer into `buffer`; its status.
async fn exchange(stream: &mut tokio::net::TcpStream, request: &[u8], buffer: &mut Vec<u8>) -> u16 {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    stream.write_all(request).await.unwrap();
    buffer.clear();
    let mut chunk = [0_u8; 16 << 10];
    let (head, length) = loop {
        let read = stream.read(&mut chunk).await.unwrap();
        assert!(read > 0, "the server closed the connection");
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = std::str::from_utf8(&buffer[..end]).unwrap().to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            break (end + 4, length);
        }
    };
    while buffer.len() < head + length {
        let read = stream.read(&mut chunk).await.unwrap();
        assert!(read > 0, "the server closed the connection");
        buffer.extend_from_slice(&chunk[..read]);
    }
    std::str::from_utf8(&buffer[9..12]).unwrap().parse().unwrap()
}

/// The in-process baseline: the inputs through the bounded entry, one loop per core, for `run_for`.
fn in_process(bench: &Arc<Bench>, parsed: &[HookInput], threads: usize, run_for: Duration) -> Measured {
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|n| {
            let (bench, parsed) = (Arc::clone(bench), parsed.to_vec());
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
    let latencies = workers.into_iter().flat_map(|w| w.join().unwrap()).collect();
    Measured::new(latencies, started.elapsed())
}

/// `POST /v1/decide` on `clients` keep-alive connections to `address` for `run_for`, from a load generator on a
/// thread of its own (one single-threaded runtime, as light a client as HTTP allows: each request written whole,
/// each answer read by its `Content-Length`).
fn over_http(
    address: std::net::SocketAddr,
    requests: &Arc<Vec<Vec<u8>>>,
    clients: usize,
    run_for: Duration,
) -> Measured {
    let requests = Arc::clone(requests);
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let started = Instant::now();
            let tasks: Vec<_> = (0..clients)
                .map(|n| {
                    let requests = Arc::clone(&requests);
                    tokio::spawn(async move {
                        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
                        stream.set_nodelay(true).unwrap();
                        let mut buffer = Vec::with_capacity(16 << 10);
                        let mut latencies = Vec::new();
                        let mut i = n;
                        while started.elapsed() < run_for {
                            let t = Instant::now();
                            let status =
                                exchange(&mut stream, &requests[i % requests.len()], &mut buffer).await;
                            assert_eq!(status, 200, "{}", String::from_utf8_lossy(&buffer));
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
            Measured::new(latencies, started.elapsed())
        })
    })
    .join()
    .unwrap()
}

/// One phase's decisions per second and latency percentiles.
struct Measured {
    rate: f64,
    p50: Duration,
    p99: Duration,
}

impl Measured {
    fn new(mut latencies: Vec<Duration>, elapsed: Duration) -> Self {
        latencies.sort_unstable();
        let at = |q: f64| latencies[((latencies.len() as f64 - 1.0) * q) as usize];
        Self {
            rate: latencies.len() as f64 / elapsed.as_secs_f64(),
            p50: at(0.50),
            p99: at(0.99),
        }
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    // `--http-only` skips the in-process phase, for a profile of the server alone (`perf record`).
    let http_only = std::env::args().any(|a| a == "--http-only");
    // Rounds of both phases in turn, so that the load of a shared machine falls on both alike; the figures are the
    // medians over the rounds, the ratio the median of each round's ratio.
    let (rounds, run_for) = if full {
        (7, Duration::from_secs(3))
    } else {
        (1, Duration::from_millis(300))
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

    // The server on its own runtime, as `agent-guard serve` runs it.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let config = ServeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        db: tmp.path().join("server.db").to_string_lossy().parse().unwrap(),
        token: TOKEN.to_owned(),
        approval_timeout: Duration::from_secs(120),
        header_timeout: agent_server::DEFAULT_HEADER_TIMEOUT,
    };
    let decider: Arc<dyn Decide> = Arc::clone(&bench) as Arc<dyn Decide>;
    let server = runtime.block_on(Server::bind(config, decider)).unwrap();
    let address = server.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = runtime.spawn(server.run(async {
        let _ = stopped.await;
    }));
    let requests: Arc<Vec<Vec<u8>>> = Arc::new(
        inputs
            .iter()
            .map(|input| {
                let body = input.to_string();
                format!(
                    "POST /v1/decide HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {TOKEN}\r\n\
                     Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                )
                .into_bytes()
            })
            .collect(),
    );

    let (mut local, mut remote, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=rounds {
        let a = if http_only {
            Measured::new(vec![Duration::ZERO], run_for)
        } else {
            in_process(&bench, &parsed, threads, run_for)
        };
        let b = over_http(address, &requests, clients, run_for);
        println!(
            "round {round}: in process {:>7.0}/s p50 {:>6.1} µs p99 {:>7.1} µs | HTTP {:>7.0}/s p50 {:>6.1} µs p99 {:>7.1} µs | ratio {:.2}",
            a.rate,
            a.p50.as_secs_f64() * 1e6,
            a.p99.as_secs_f64() * 1e6,
            b.rate,
            b.p50.as_secs_f64() * 1e6,
            b.p99.as_secs_f64() * 1e6,
            b.rate / a.rate,
        );
        ratios.push(b.rate / a.rate);
        local.push(a);
        remote.push(b);
    }
    let summary = |name: &str, runs: &[Measured]| {
        println!(
            "{name:<32} {:>9.0} decisions/s   p50 {:>7.1} µs   p99 {:>7.1} µs   (medians of {rounds} rounds of {run_for:?})",
            median(runs.iter().map(|m| m.rate).collect()),
            median(runs.iter().map(|m| m.p50.as_secs_f64() * 1e6).collect()),
            median(runs.iter().map(|m| m.p99.as_secs_f64() * 1e6).collect()),
        );
    };
    summary(&format!("in process ({threads} threads)"), &local);
    summary(&format!("POST /v1/decide ({clients} clients)"), &remote);
    println!(
        "HTTP / in process: {:.2} (median of the rounds' ratios)",
        median(ratios)
    );
    let _ = stop.send(());
    runtime.block_on(serving).unwrap().unwrap();
}
