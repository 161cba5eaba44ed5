//! Analysis time per command over the corpus, against a first-word allowlist/blacklist as a baseline.

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::path::Path;

use agent_bash_guard::{BashConfig, BashGuard};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// The commands of the corpus files named, in file order.
fn corpus(files: &[&str]) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut commands = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(dir.join(format!("{file}.jsonl"))).unwrap_or_default();
        for line in text.lines().filter(|l| l.starts_with('{')) {
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(line)
                && let Some(cmd) = value.get("cmd").and_then(|c| c.as_str())
            {
                commands.push(cmd.to_owned());
            }
        }
    }
    commands
}

/// The naive design a shell guard starts from: the first word against an allowlist, then a
/// blacklist and a few argument substrings; everything else runs.
mod first_word {
    const SAFE: &[&str] = &[
        "ls", "cat", "head", "tail", "find", "grep", "wc", "echo", "pwd", "sort", "uniq", "cut", "tr", "awk",
        "sed", "jq", "diff", "file", "stat", "du", "df", "env", "printenv", "which", "basename", "dirname",
        "realpath", "readlink", "xargs", "tee", "date", "sleep", "true", "false",
    ];
    const DANGEROUS: &[&str] = &[
        "rm", "sudo", "su", "chmod", "chown", "mkfs", "dd", "shutdown", "reboot", "halt", "poweroff", "kill",
        "killall", "pkill", "vim", "vi", "nano", "emacs", "less", "more", "top", "htop", "ssh", "scp",
        "curl", "wget", "nc", "netcat", "socat", "telnet", "ftp", "mount", "umount",
    ];
    const DANGEROUS_ARGS: &[&str] = &["-rf /", "--no-preserve-root", "> /dev/sd", ":(){", "/dev/tcp"];

    /// `true` when the command would be allowed to run.
    pub(crate) fn allowed(command: &str) -> bool {
        let command = command.trim();
        if command.is_empty() || command == "bash" || command.starts_with("bash -c") {
            return false;
        }
        if command.starts_with("$(") || command.starts_with('`') {
            return false;
        }
        let first = command.split_whitespace().next().unwrap_or_default();
        if SAFE.contains(&first) {
            return true;
        }
        if DANGEROUS.contains(&first) {
            return false;
        }
        let lower = command.to_lowercase();
        !DANGEROUS_ARGS.iter().any(|p| lower.contains(p))
    }
}

fn bench(c: &mut Criterion) {
    let guard = BashGuard::new(BashConfig {
        block_network: Some(true),
        ..BashConfig::default()
    });
    let slices = [
        ("typical", corpus(&["benign"])),
        (
            "corpus",
            corpus(&[
                "benign",
                "flags",
                "writes",
                "destructive",
                "privileged",
                "network",
                "nested",
                "hidden",
                "runners",
            ]),
        ),
    ];
    for (name, commands) in &slices {
        let mut group = c.benchmark_group(*name);
        group.throughput(Throughput::Elements(commands.len() as u64));
        group.bench_function("bash-guard", |b| {
            b.iter(|| {
                for command in commands {
                    black_box(guard.analyze(black_box(command)).verdict());
                }
            });
        });
        group.bench_function("first-word", |b| {
            b.iter(|| {
                for command in commands {
                    black_box(first_word::allowed(black_box(command)));
                }
            });
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
