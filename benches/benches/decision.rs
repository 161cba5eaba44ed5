//! One full in-process decision through `Guard::decide` (describe the call, shell analysis, sandbox checks, rule
//! resolution) for typical calls, against a naive design for the same calls: a first-word allow/deny list
//! for commands, `canonicalize` plus a string-prefix check for paths, and a linear scan of tool-name rules.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};

use agent_decide::{Guard, GuardOptions};
use agent_rules::{Rule, Settings};
use agent_tool_traits::{Decision, Source};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

/// The naive design's rule, path and command checks, reimplemented small.
struct Seed {
    rules: Vec<(String, Decision)>,
    roots: Vec<PathBuf>,
    cwd: PathBuf,
}

const SAFE: &[&str] = &[
    "ls", "cat", "head", "tail", "find", "grep", "wc", "echo", "pwd", "sort", "git",
];
const DANGEROUS: &[&str] = &["rm", "sudo", "curl", "wget", "dd", "mkfs", "shutdown"];

impl Seed {
    fn decide(&self, tool: &str, args: &Value) -> Decision {
        for (name, behavior) in &self.rules {
            if name == "*" || name == tool {
                return *behavior;
            }
        }
        match tool {
            "Bash" => {
                let command = args["command"].as_str().unwrap_or_default();
                let first = command.split_whitespace().next().unwrap_or_default();
                if first.starts_with("$(") || first.starts_with('`') {
                    Decision::Deny
                } else if SAFE.contains(&first) {
                    Decision::Allow
                } else if DANGEROUS.contains(&first) {
                    Decision::Deny
                } else {
                    Decision::Ask
                }
            }
            _ => {
                let path = args["file_path"].as_str().unwrap_or_default();
                if path.contains("..") || path.contains('~') {
                    return Decision::Deny;
                }
                let full = self.cwd.join(path);
                let canonical = full
                    .canonicalize()
                    .or_else(|_| full.parent().unwrap_or(Path::new("/")).canonicalize());
                match canonical {
                    Ok(c)
                        if self
                            .roots
                            .iter()
                            .any(|r| c.to_string_lossy().starts_with(&*r.to_string_lossy())) =>
                    {
                        Decision::Allow
                    }
                    _ => Decision::Deny,
                }
            }
        }
    }
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().canonicalize().unwrap().join("proj");
    std::fs::create_dir_all(cwd.join("src/module/inner")).unwrap();
    std::fs::write(cwd.join("src/module/inner/lib.rs"), "x").unwrap();
    // Twenty files for a glob to match, each then checked like a path.
    for n in 0..20 {
        std::fs::write(cwd.join(format!("src/module/part{n}.rs")), "x").unwrap();
    }
    let mut settings = Settings::new();
    for (text, behavior) in [
        ("Bash(npm run test:*)", Decision::Allow),
        ("Bash(git push:*)", Decision::Ask),
        ("Read(./.env)", Decision::Deny),
        ("Edit(/src/**)", Decision::Allow),
        ("WebFetch(domain:docs.rs)", Decision::Allow),
    ] {
        settings.add_rule(Rule::parse(text, behavior, Source::Project).unwrap());
    }
    let guard = Guard::new(
        &settings,
        &GuardOptions {
            cwd: cwd.clone(),
            home: None,
            mode: None,
            extra_roots: Vec::new(),
            project: None,
            auto_allow: None,
        },
    )
    .unwrap();
    let seed = Seed {
        rules: vec![("mcp__x".to_owned(), Decision::Deny)],
        roots: vec![cwd.clone()],
        cwd: cwd.clone(),
    };
    let calls: [(&str, &str, Value); 5] = [
        (
            "bash_pipeline",
            "Bash",
            json!({"command": "git log --oneline -5 | grep fix | head -3"}),
        ),
        (
            "bash_allowed_rule",
            "Bash",
            json!({"command": "npm run test -- --watch=false"}),
        ),
        (
            "bash_glob_20_files",
            "Bash",
            json!({"command": "wc -l src/module/*.rs"}),
        ),
        (
            "read_deep",
            "Read",
            json!({"file_path": "src/module/inner/lib.rs"}),
        ),
        (
            "write_deep",
            "Write",
            json!({"file_path": "src/module/inner/new.rs", "content": "x"}),
        ),
    ];
    let mut group = c.benchmark_group("decision");
    for (name, tool, args) in &calls {
        group.bench_function(format!("guard/{name}"), |b| {
            b.iter(|| black_box(guard.decide(tool, args).resolution.verdict.decision))
        });
        group.bench_function(format!("seed/{name}"), |b| {
            b.iter(|| black_box(seed.decide(tool, args)))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(std::time::Duration::from_millis(500)).measurement_time(std::time::Duration::from_secs(2)).sample_size(30);
    targets = bench
}
criterion_main!(benches);
