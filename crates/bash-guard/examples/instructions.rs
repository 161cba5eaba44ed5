//! Analyses every command of the corpus files named on the command line a fixed number of times, for counting
//! instructions with `valgrind --tool=callgrind` (a deterministic figure on a noisy machine).
//!
//! `cargo run --release -p agent-bash-guard --example instructions -- 3 tests/corpus/benign.jsonl`

use agent_bash_guard::{BashConfig, BashGuard};

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(3);
    let mut commands = Vec::new();
    for file in args {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for line in text.lines().filter(|l| l.starts_with('{')) {
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(line)
                && let Some(cmd) = value.get("cmd").and_then(|c| c.as_str())
            {
                commands.push(cmd.to_owned());
            }
        }
    }
    let guard = BashGuard::new(BashConfig {
        block_network: Some(true),
        ..BashConfig::default()
    });
    let mut allowed = 0usize;
    for _ in 0..rounds {
        for command in &commands {
            let verdict = guard.analyze(command).verdict();
            allowed += usize::from(verdict.decision == agent_tool_traits::Decision::Allow);
        }
    }
    println!("{} commands, {rounds} rounds, {allowed} allowed", commands.len());
}
