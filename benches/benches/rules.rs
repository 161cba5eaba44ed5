//! One rule check at 10 / 1,000 / 10,000 rules: the compiled policy against a linear scan of individually
//! compiled rules (a rule chain by tool name, extended with content matching). `decide/*` is a whole
//! resolution (matching, verdict, reasons); `compiled_match/*` is the matching alone for all three behaviours, the
//! like-for-like comparison with `linear/*`.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};

use agent_rules::{Anchors, CallFacts, CommandFact, PathFact, PermissionMode, Policy, Request, Rule};
use agent_tool_traits::{Decision, HookOutcome, Source};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

/// A realistic mix: shell prefixes, path globs, tool-wide MCP rules, domains.
fn rule_texts(n: usize) -> Vec<(String, Decision)> {
    (0..n)
        .map(|i| {
            let behavior = [Decision::Allow, Decision::Ask, Decision::Deny][i % 3];
            let text = match i % 4 {
                0 => format!("Bash(tool{i} run:*)"),
                1 => format!("Read(src/mod{i}/**)"),
                2 => format!("mcp__server{i}"),
                _ => format!("WebFetch(domain:host{i}.example.com)"),
            };
            (text, behavior)
        })
        .collect()
}

/// The linear reference: each rule compiled on its own, scanned in order.
struct Linear {
    rules: Vec<(String, Option<regex::Regex>, Decision)>,
}

impl Linear {
    fn new(texts: &[(String, Decision)]) -> Self {
        let rules = texts
            .iter()
            .map(|(text, behavior)| {
                let (tool, content) = match text.split_once('(') {
                    Some((tool, rest)) => (tool.to_owned(), Some(rest.trim_end_matches(')').to_owned())),
                    None => (text.clone(), None),
                };
                let regex = content.map(|c| {
                    let body = c.trim_end_matches(":*").replace('*', ".*").replace(' ', "\0");
                    regex::Regex::new(&format!("^{body}(\0.*)?$")).unwrap()
                });
                (tool, regex, *behavior)
            })
            .collect();
        Self { rules }
    }

    fn check(&self, tool: &str, subject: &str) -> Decision {
        let mut found = [false; 3];
        for (rule_tool, regex, behavior) in &self.rules {
            if rule_tool == tool && regex.as_ref().is_none_or(|re| re.is_match(subject)) {
                found[*behavior as usize] = true;
            }
        }
        if found[2] {
            Decision::Deny
        } else if found[1] {
            Decision::Ask
        } else if found[0] {
            Decision::Allow
        } else {
            Decision::Ask
        }
    }
}

fn bench(c: &mut Criterion) {
    let anchors = Anchors {
        cwd: PathBuf::from("/proj"),
        home: None,
    };
    let argv: Vec<String> = ["git", "status", "--short"].map(String::from).to_vec();
    let mut group = c.benchmark_group("rules");
    for n in [10usize, 1_000, 10_000] {
        let texts = rule_texts(n);
        let rules: Vec<Rule> = texts
            .iter()
            .map(|(t, b)| Rule::parse(t, *b, Source::User).unwrap())
            .collect();
        let policy = Policy::from_rules(rules, PermissionMode::Default, &anchors).unwrap();
        let linear = Linear::new(&texts);
        let hooks = HookOutcome::default();
        group.bench_with_input(BenchmarkId::new("decide/shell", n), &n, |b, _| {
            b.iter(|| {
                let facts = CallFacts {
                    shell: Some(vec![CommandFact {
                        argv: &argv,
                        inner: 0,
                        read_only: true,
                        why: None,
                    }]),
                    ..CallFacts::default()
                };
                black_box(
                    policy
                        .decide(
                            &Request {
                                tool: "Bash",
                                facts: &facts,
                                findings: &[],
                                hooks: &hooks,
                            },
                            &agent_rules::SessionState::default(),
                        )
                        .verdict
                        .decision,
                )
            });
        });
        group.bench_with_input(BenchmarkId::new("compiled_match/shell", n), &n, |b, _| {
            b.iter(|| {
                let facts = CallFacts {
                    shell: Some(vec![CommandFact {
                        argv: &argv,
                        inner: 0,
                        read_only: true,
                        why: None,
                    }]),
                    ..CallFacts::default()
                };
                let request = Request {
                    tool: "Bash",
                    facts: &facts,
                    findings: &[],
                    hooks: &hooks,
                };
                black_box(
                    [Decision::Deny, Decision::Ask, Decision::Allow]
                        .map(|d| policy.matching_rule(d, &request).is_some()),
                )
            });
        });
        group.bench_with_input(BenchmarkId::new("linear/shell", n), &n, |b, _| {
            b.iter(|| black_box(linear.check("Bash", "git\0status\0--short")));
        });
        group.bench_with_input(BenchmarkId::new("decide/path", n), &n, |b, _| {
            b.iter(|| {
                let facts = CallFacts {
                    paths: vec![PathFact {
                        access: agent_tool_traits::Access::Read,
                        written: Path::new("/proj/src/lib.rs"),
                        resolved: Some(Path::new("/proj/src/lib.rs")),
                        inside_roots: Some(true),
                    }],
                    ..CallFacts::default()
                };
                black_box(
                    policy
                        .decide(
                            &Request {
                                tool: "Read",
                                facts: &facts,
                                findings: &[],
                                hooks: &hooks,
                            },
                            &agent_rules::SessionState::default(),
                        )
                        .verdict
                        .decision,
                )
            });
        });
        group.bench_with_input(BenchmarkId::new("linear/path", n), &n, |b, _| {
            b.iter(|| black_box(linear.check("Read", "/proj/src/lib.rs")));
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
