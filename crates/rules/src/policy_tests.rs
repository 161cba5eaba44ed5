//! Properties of the compiled matcher and the resolution: the compiled matcher agrees with a plain linear
//! reference; adding a deny rule never weakens a decision; `bypassPermissions` never overrides a deny or ask rule;
//! deciding is pure (the same call twice, the same resolution, the session untouched).

use std::path::{Path, PathBuf};

use agent_tool_traits::{Decision, Source};
use proptest::prelude::*;

use crate::classifier::{Classifier, ClassifierInput, ClassifierVerdict, DenialTracker};
use crate::facts::{CallFacts, CommandFact, PathFact, Request};
use crate::matcher::{Anchors, CompiledRules, Subject};
use crate::mode::PermissionMode;
use crate::policy::{ClassifierOutcome, Policy, Resolution};
use crate::rule::{Content, Rule, Target};
use crate::session::SessionState;
use crate::tool::{ToolName, split_mcp};
use agent_tool_traits::Access;
use agent_tool_traits::HookOutcome;
use std::sync::Arc;

const TOOLS: &[&str] = &[
    "Bash",
    "Read",
    "Edit",
    "Write",
    "WebFetch",
    "Agent",
    "Grep",
    "mcp__gh__issue",
    "mcp__gh",
    "mcp__gh__*",
    "*",
    "Task",
    "run_bash",
    "read_file",
];
const SHELL: &[&str] = &[
    "git:*",
    "git status",
    "git push:*",
    "npm run test *",
    "prefix:npm run",
    "ls*",
    "git * --stat",
    "rm -rf *",
    "echo 'a b'",
    "cat",
];
const PATHS: &[&str] = &[
    "src/**",
    "./.env",
    "*.pem",
    "~/.ssh/**",
    "//etc/hosts",
    "/docs/*.md",
    "secrets",
    "src/*.rs",
    ".",
];
const HOSTS: &[&str] = &["domain:example.com", "domain:*.example.com", "domain:docs.rs"];
const AGENTS: &[&str] = &["Explore", "Plan"];
const WORDS: &[&str] = &[
    "git", "status", "push", "npm", "run", "test", "testing", "ls", "lsof", "-la", "--stat", "rm", "-rf",
    "/", "a b", "echo", "cat", "origin",
];
const FILES: &[&str] = &[
    "/proj/src/main.rs",
    "/proj/src/a/b.rs",
    "/proj/.env",
    "/proj/x/key.pem",
    "/home/u/.ssh/id_rsa",
    "/etc/hosts",
    "/proj/docs/a.md",
    "/proj/deep/secrets/k",
    "/proj/README.md",
    "/elsewhere/f",
];
const CALL_HOSTS: &[&str] = &[
    "example.com",
    "a.example.com",
    "notexample.com",
    "example.com.evil.io",
    "docs.rs",
];

fn anchors() -> Anchors {
    Anchors {
        cwd: PathBuf::from("/proj"),
        home: Some(PathBuf::from("/home/u")),
    }
}

fn rule_text() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(TOOLS).prop_map(str::to_owned),
        proptest::sample::select(SHELL).prop_map(|c| format!("Bash({c})")),
        (
            proptest::sample::select(&["Read", "Edit", "Write", "Grep"][..]),
            proptest::sample::select(PATHS)
        )
            .prop_map(|(t, p)| format!("{t}({p})")),
        proptest::sample::select(HOSTS).prop_map(|h| format!("WebFetch({h})")),
        proptest::sample::select(AGENTS).prop_map(|a| format!("Agent({a})")),
    ]
}

fn source() -> impl Strategy<Value = Source> {
    proptest::sample::select(Source::ALL.to_vec())
}

fn behavior() -> impl Strategy<Value = Decision> {
    proptest::sample::select(vec![Decision::Allow, Decision::Ask, Decision::Deny])
}

fn rules() -> impl Strategy<Value = Vec<Rule>> {
    proptest::collection::vec((rule_text(), behavior(), source()), 0..24).prop_map(|specs| {
        specs
            .into_iter()
            .filter_map(|(t, b, s)| Rule::parse(&t, b, s).ok())
            .collect()
    })
}

#[derive(Debug, Clone)]
struct Call {
    tool: &'static str,
    commands: Vec<(Vec<String>, usize, bool)>,
    files: Vec<(bool, &'static str)>,
    host: Option<&'static str>,
    agent: Option<&'static str>,
}

fn call() -> impl Strategy<Value = Call> {
    let command = (
        proptest::collection::vec(proptest::sample::select(WORDS).prop_map(str::to_owned), 1..5),
        0usize..3,
        any::<bool>(),
    );
    (
        proptest::sample::select(TOOLS)
            .prop_filter("a call names one tool", |t| !t.contains('*') && *t != "mcp__gh"),
        proptest::collection::vec(command, 0..3),
        proptest::collection::vec((any::<bool>(), proptest::sample::select(FILES)), 0..3),
        proptest::option::of(proptest::sample::select(CALL_HOSTS)),
        proptest::option::of(proptest::sample::select(AGENTS)),
    )
        .prop_map(|(tool, commands, files, host, agent)| Call {
            tool,
            commands: commands
                .into_iter()
                .map(|(argv, inner, ro)| {
                    let inner = inner.min(argv.len().saturating_sub(1));
                    (argv, inner, ro)
                })
                .collect(),
            files,
            host,
            agent,
        })
}

fn decide(policy: &Policy, call: &Call) -> Decision {
    resolve(policy, call, &SessionState::default()).verdict.decision
}

/// The resolution of `call` in a session that has accumulated `session`.
fn resolve(policy: &Policy, call: &Call, session: &SessionState) -> Resolution {
    let shell = (!call.commands.is_empty()).then(|| {
        call.commands
            .iter()
            .map(|(argv, inner, ro)| CommandFact {
                argv,
                inner: *inner,
                read_only: *ro,
                why: None,
            })
            .collect()
    });
    let paths = call
        .files
        .iter()
        .map(|(write, f)| PathFact {
            access: if *write { Access::Write } else { Access::Read },
            written: Path::new(f),
            resolved: Some(Path::new(f)),
            inside_roots: Some(f.starts_with("/proj/")),
        })
        .collect();
    let facts = CallFacts {
        shell,
        paths,
        host: call.host,
        agent: call.agent,
    };
    let hooks = HookOutcome::default();
    policy.decide(
        &Request {
            tool: call.tool,
            facts: &facts,
            findings: &[],
            hooks: &hooks,
        },
        session,
    )
}

/// A classifier that blocks every call that is not read-only, so that the session's denial tracker matters.
#[derive(Debug)]
struct BlocksWrites;

impl Classifier for BlocksWrites {
    fn classify(&self, input: &ClassifierInput<'_>) -> ClassifierVerdict {
        if input.read_only {
            ClassifierVerdict::Approve("read-only".to_owned())
        } else {
            ClassifierVerdict::Block("not read-only".to_owned())
        }
    }
}

fn mode() -> impl Strategy<Value = PermissionMode> {
    proptest::sample::select(vec![
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::DontAsk,
        PermissionMode::BypassPermissions,
        PermissionMode::Auto,
        PermissionMode::Bubble,
    ])
}

/// A session that has recorded the classifier's denials (`true`) and approvals (`false`) in this order.
fn session() -> impl Strategy<Value = SessionState> {
    proptest::collection::vec(any::<bool>(), 0..30).prop_map(|history| {
        let mut denials = DenialTracker::default();
        for denial in history {
            if denial {
                denials.record_denial();
            } else {
                denials.record_approval();
            }
        }
        SessionState::with_denials(denials)
    })
}

/// The linear reference: every rule checked one by one, the best by source then load order.
fn reference(rules: &[Rule], behavior: Decision, subject: Subject<'_>) -> Option<usize> {
    let anchors = anchors();
    let mut best: Option<usize> = None;
    for (i, rule) in rules.iter().enumerate().filter(|(_, r)| r.behavior == behavior) {
        let hit = match (&rule.target, subject) {
            (Target::AnyTool, Subject::Tool(_)) => true,
            (Target::McpServer(server), Subject::Tool(name)) => {
                split_mcp(name.as_str()).is_some_and(|(s, _)| s == server)
            }
            (Target::Tool { name, content: None }, Subject::Tool(tool)) => name == tool,
            (
                Target::Tool {
                    content: Some(Content::Shell(p)),
                    ..
                },
                Subject::Command(words),
            ) => regex::Regex::new(&p.regex).is_ok_and(|re| re.is_match(words)),
            (
                Target::Tool {
                    name,
                    content: Some(Content::Path(_)),
                },
                Subject::Path { tool, path },
            ) if name.as_str() == tool => {
                let single = CompiledRules::compile(vec![rule.clone()], &anchors);
                single.is_ok_and(|c| c.lookup(behavior, Subject::Path { tool, path }).is_some())
            }
            (
                Target::Tool {
                    content: Some(Content::Domain(d)),
                    ..
                },
                Subject::Host(host),
            ) => d.matches(host),
            (
                Target::Tool {
                    content: Some(Content::Agent(a)),
                    ..
                },
                Subject::Agent(agent),
            ) => a == agent,
            _ => false,
        };
        if hit {
            best = match best {
                Some(b) if rules.get(b).is_some_and(|rb| rb.source >= rule.source) => Some(b),
                _ => Some(i),
            };
        }
    }
    best
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn compiled_matcher_agrees_with_linear_reference(rules in rules(), call in call()) {
        let compiled = CompiledRules::compile(rules.clone(), &anchors()).unwrap();
        let tool = ToolName::new(call.tool);
        let mut subjects = vec![Subject::Tool(&tool)];
        let joined: Vec<String> = call.commands.iter().map(|(argv, _, _)| argv.join("\0")).collect();
        subjects.extend(joined.iter().map(|w| Subject::Command(w)));
        for (_, file) in &call.files {
            for family in ["Read", "Edit", "Write", "Grep"] {
                subjects.push(Subject::Path { tool: family, path: Path::new(file) });
            }
        }
        subjects.extend(call.host.map(Subject::Host));
        subjects.extend(call.agent.map(Subject::Agent));
        for behavior in [Decision::Allow, Decision::Ask, Decision::Deny] {
            for subject in &subjects {
                prop_assert_eq!(compiled.lookup(behavior, *subject), reference(&rules, behavior, *subject), "{:?} {:?}", behavior, subject);
            }
        }
    }

    #[test]
    fn adding_a_deny_rule_never_weakens(rules in rules(), extra in rule_text(), src in source(), call in call(),
                                        mode in proptest::sample::select(vec![PermissionMode::Default, PermissionMode::AcceptEdits, PermissionMode::Plan, PermissionMode::DontAsk, PermissionMode::BypassPermissions])) {
        let Ok(extra) = Rule::parse(&extra, Decision::Deny, src) else { return Ok(()) };
        let before = Policy::from_rules(rules.clone(), mode, &anchors()).unwrap();
        let mut more = rules;
        more.push(extra);
        let after = Policy::from_rules(more, mode, &anchors()).unwrap();
        prop_assert!(decide(&after, &call) >= decide(&before, &call));
    }

    #[test]
    fn deciding_is_pure(rules in rules(), call in call(), mode in mode(), session in session(), strict in any::<bool>()) {
        let mut policy = Policy::from_rules(rules, mode, &anchors()).unwrap();
        if strict {
            policy = policy.with_classifier(Arc::new(BlocksWrites));
        }
        let before = session.clone();
        let first = resolve(&policy, &call, &session);
        let second = resolve(&policy, &call, &session);
        prop_assert_eq!(&first.verdict, &second.verdict);
        prop_assert_eq!(&first.considered, &second.considered);
        prop_assert_eq!(&first.conflicts, &second.conflicts);
        prop_assert_eq!(first.classifier, second.classifier);
        prop_assert_eq!(&session, &before, "deciding changed the session");
        // Only the owner's recording changes the session, and only by what the classifier did.
        let mut recorded = session;
        recorded.record(&first);
        let (consecutive, total) = before.denials().counts();
        match first.classifier {
            None => prop_assert_eq!(&recorded, &before),
            Some(ClassifierOutcome::Approved) => prop_assert_eq!(recorded.denials().counts(), (0, total)),
            Some(ClassifierOutcome::Blocked) => prop_assert_eq!(recorded.denials().counts(), (consecutive + 1, total + 1)),
        }
        prop_assert!(first.classifier.is_none() || mode == PermissionMode::Auto);
    }

    #[test]
    fn bypass_never_overrides_deny_or_ask_rules(rules in rules(), call in call()) {
        let default = Policy::from_rules(rules.clone(), PermissionMode::Default, &anchors()).unwrap();
        let bypass = Policy::from_rules(rules, PermissionMode::BypassPermissions, &anchors()).unwrap();
        let base = decide(&default, &call);
        let relaxed = decide(&bypass, &call);
        // Whatever a rule denies or asks in the default mode stays so: bypass only lifts the defaults.
        let shell = (!call.commands.is_empty()).then(|| call.commands.iter().map(|(a, i, r)| CommandFact { argv: a, inner: *i, read_only: *r, why: None }).collect());
        let facts = CallFacts { shell, paths: call.files.iter().map(|(w, f)| PathFact { access: if *w { Access::Write } else { Access::Read }, written: Path::new(f), resolved: Some(Path::new(f)), inside_roots: Some(f.starts_with("/proj/")) }).collect(), host: call.host, agent: call.agent };
        let hooks = HookOutcome::default();
        let resolution = default.decide(&Request { tool: call.tool, facts: &facts, findings: &[], hooks: &hooks }, &SessionState::default());
        let by_rule = matches!(resolution.verdict.provenance.step, Some(agent_tool_traits::DecidedBy::DenyRule | agent_tool_traits::DecidedBy::AskRule));
        if by_rule {
            prop_assert_eq!(relaxed, base);
        } else {
            prop_assert!(relaxed <= base || base == Decision::Allow);
        }
    }
}

#[test]
fn deny_rules_beneath_a_directory_are_those_a_search_of_it_meets() {
    let rules = [
        ("Read(./secrets/**)", Decision::Deny),
        ("Grep(./build/cache)", Decision::Deny),
        ("Read(~/.ssh/**)", Decision::Deny),
        ("Read(.env)", Decision::Deny),
        ("Read(./docs/**)", Decision::Ask),
    ]
    .into_iter()
    .map(|(text, behavior)| Rule::parse(text, behavior, Source::User).unwrap())
    .collect();
    let policy = Policy::from_rules(rules, PermissionMode::Default, &anchors()).unwrap();
    let beneath = |tool: &str, dir: &str| -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = policy
            .deny_rules_beneath(tool, Path::new(dir))
            .into_iter()
            .map(|(rule, place)| (rule.text.clone(), place.to_owned()))
            .collect();
        found.sort();
        found
    };
    let secrets = ("Read(./secrets/**)".to_owned(), "/proj/secrets".to_owned());
    let cache = ("Grep(./build/cache)".to_owned(), "/proj/build/cache".to_owned());
    assert_eq!(beneath("Grep", "/proj"), [cache.clone(), secrets.clone()]);
    assert_eq!(
        beneath("grep_files", "/proj"),
        [cache, secrets.clone()],
        "either family"
    );
    assert_eq!(beneath("Read", "/proj"), [secrets]);
    assert!(
        beneath("Grep", "/proj/src").is_empty(),
        "a sibling directory meets none"
    );
    assert!(
        beneath("Grep", "/proj/secrets").is_empty(),
        "the directory itself is the rule's own match"
    );
    assert_eq!(
        beneath("Grep", "/home/u"),
        [("Read(~/.ssh/**)".to_owned(), "/home/u/.ssh".to_owned())]
    );
}

#[test]
fn path_rules_and_their_places() {
    use agent_tool_traits::Access;
    let anchors = Anchors {
        cwd: "/proj".into(),
        home: Some("/home/u".into()),
    };
    let rules = [
        ("Read(~/.aws/**)", Decision::Deny),
        ("Read(//etc/*.key)", Decision::Deny),
        ("Read(.env)", Decision::Deny),
        ("Read", Decision::Deny),
        ("Edit(./deploy/**)", Decision::Ask),
    ]
    .iter()
    .map(|(text, behavior)| Rule::parse(text, *behavior, Source::Project).unwrap())
    .collect();
    let policy = Policy::from_rules(rules, PermissionMode::Default, &anchors).unwrap();
    let read = |path: &str| {
        policy
            .path_rule(Decision::Deny, Access::Read, Path::new(path))
            .map(|r| r.text.clone())
    };
    assert_eq!(
        read("/home/u/.aws/credentials").as_deref(),
        Some("Read(~/.aws/**)")
    );
    assert_eq!(read("/home/u/.aws").as_deref(), Some("Read(~/.aws/**)"));
    assert_eq!(read("/etc/ssl/a.key"), None, "`*` stays in its directory");
    assert_eq!(read("/etc/a.key").as_deref(), Some("Read(//etc/*.key)"));
    assert_eq!(read("/proj/sub/.env").as_deref(), Some("Read(.env)"));
    // The tool-wide `Read` deny is not a rule on any file.
    assert_eq!(read("/proj/src/main.rs"), None);
    assert_eq!(
        policy.rule_places(Decision::Deny, Access::Read),
        vec!["/etc", "/home/u/.aws"]
    );
    assert_eq!(
        policy.rule_places(Decision::Ask, Access::Write),
        vec!["/proj/deploy"]
    );
    assert!(
        policy
            .path_rule(Decision::Ask, Access::Write, Path::new("/proj/deploy/x.sh"))
            .is_some()
    );
}

#[test]
fn the_session_owner_records_denials_and_the_tracker_trips_across_decisions() {
    let policy = Policy::from_rules(Vec::new(), PermissionMode::Auto, &anchors())
        .unwrap()
        .with_classifier(Arc::new(BlocksWrites));
    let write = Call {
        tool: "Write",
        commands: Vec::new(),
        files: vec![(true, "/proj/a.txt")],
        host: None,
        agent: None,
    };
    let mut session = SessionState::default();
    for round in 1..=2 {
        let resolution = resolve(&policy, &write, &session);
        assert_eq!(resolution.verdict.decision, Decision::Deny, "block {round}");
        assert_eq!(resolution.classifier, Some(ClassifierOutcome::Blocked));
        session.record(&resolution);
    }
    // The third block in a row trips the tracker: asking takes its place.
    let third = resolve(&policy, &write, &session);
    assert_eq!(
        third.verdict.decision,
        Decision::Ask,
        "{}",
        third.verdict.reason()
    );
    assert!(third.verdict.reason().contains("3 in a row"));
    // A fresh session (what `check` decides every input with) still blocks: the policy kept nothing.
    assert_eq!(
        resolve(&policy, &write, &SessionState::default())
            .verdict
            .decision,
        Decision::Deny
    );
}

/// A chain of tool-wide rules decided by name alone: aliases share rules, a tool no rule names gets its default,
/// every ask beats every allow, `dontAsk` turns an ask into a deny, and neither an ask rule nor a deny rule yields
/// to `bypassPermissions`.
#[test]
fn tool_wide_rules_decide_by_name_and_alias() {
    let rules = |mode: PermissionMode| {
        let rules = [
            ("run_bash", Decision::Deny),
            ("download_paper", Decision::Deny),
            ("file_write", Decision::Ask),
            ("search_papers", Decision::Allow),
            ("WebFetch(domain:docs.rs)", Decision::Allow),
        ]
        .into_iter()
        .map(|(text, behavior)| Rule::parse(text, behavior, Source::Session).unwrap())
        .collect();
        Policy::from_rules(rules, PermissionMode::Default, &anchors())
            .unwrap()
            .with_mode(mode, Source::CliArg)
    };
    let by_name = |policy: &Policy, tool: &'static str, host: Option<&'static str>| {
        let call = Call {
            tool,
            commands: Vec::new(),
            files: Vec::new(),
            host,
            agent: None,
        };
        decide(policy, &call)
    };
    let default = rules(PermissionMode::Default);
    assert_eq!(by_name(&default, "search_papers", None), Decision::Allow);
    assert_eq!(by_name(&default, "run_bash", None), Decision::Deny);
    assert_eq!(
        by_name(&default, "Bash", None),
        Decision::Deny,
        "aliases share rules"
    );
    assert_eq!(
        by_name(&default, "Write", None),
        Decision::Ask,
        "aliases share rules"
    );
    assert_eq!(
        by_name(&default, "mcp__x__y", None),
        Decision::Ask,
        "unknown tools ask"
    );
    assert_eq!(by_name(&default, "WebFetch", Some("docs.rs")), Decision::Allow);
    let dont_ask = rules(PermissionMode::DontAsk);
    assert_eq!(by_name(&dont_ask, "file_write", None), Decision::Deny);
    let bypass = rules(PermissionMode::BypassPermissions);
    assert_eq!(
        by_name(&bypass, "file_write", None),
        Decision::Ask,
        "an ask rule is bypass-immune"
    );
    assert_eq!(by_name(&bypass, "run_bash", None), Decision::Deny);
    assert_eq!(by_name(&bypass, "mcp__x__y", None), Decision::Allow);
    // Every ask beats every allow, whatever their sources.
    let mut with_ask = default.rules().to_vec();
    with_ask.push(Rule::parse("*", Decision::Ask, Source::User).unwrap());
    let with_ask = Policy::from_rules(with_ask, PermissionMode::Default, &anchors()).unwrap();
    assert_eq!(by_name(&with_ask, "WebFetch", Some("docs.rs")), Decision::Ask);
    assert_eq!(by_name(&with_ask, "search_papers", None), Decision::Ask);
}

/// The guard's own caution (a network command while the network is blocked) asks unless the user's allow rule or a
/// hook's allow covers the whole call; a safety ask stands against both, and a mode lifts neither.
#[test]
fn only_the_users_allow_lifts_a_caution_ask() {
    use agent_tool_traits::{DecidedBy, Layer, Provenance, Verdict};

    let argv = ["git".to_owned(), "fetch".to_owned()];
    let facts = CallFacts {
        shell: Some(vec![CommandFact {
            argv: &argv,
            inner: 0,
            read_only: false,
            why: None,
        }]),
        ..CallFacts::default()
    };
    let caution = Verdict::new(
        Decision::Ask,
        "`git fetch` reaches another repository",
        Provenance::layer(Layer::Bash).at(DecidedBy::CautionAsk),
    );
    let safety = Verdict::new(
        Decision::Ask,
        "a protected path",
        Provenance::layer(Layer::Sandbox),
    );
    let decide = |rules: &[&str], mode: PermissionMode, findings: &[Verdict], hook_allow: bool| {
        let rules = rules
            .iter()
            .map(|text| Rule::parse(text, Decision::Allow, Source::User).unwrap())
            .collect();
        let policy = Policy::from_rules(rules, mode, &anchors()).unwrap();
        let hooks = HookOutcome {
            allow: hook_allow.then(|| "fine".to_owned()),
            ..HookOutcome::default()
        };
        let request = Request {
            tool: "Bash",
            facts: &facts,
            findings,
            hooks: &hooks,
        };
        let verdict = policy.decide(&request, &SessionState::default()).verdict;
        (verdict.decision, verdict.provenance.step)
    };
    let default = PermissionMode::Default;
    let with_caution = std::slice::from_ref(&caution);
    assert_eq!(
        decide(&[], default, with_caution, false),
        (Decision::Ask, Some(DecidedBy::CautionAsk))
    );
    assert_eq!(
        decide(&["Bash(git fetch:*)"], default, with_caution, false),
        (Decision::Allow, Some(DecidedBy::AllowRule))
    );
    assert_eq!(
        decide(&[], default, with_caution, true),
        (Decision::Allow, Some(DecidedBy::HookAllow))
    );
    assert_eq!(
        decide(&[], PermissionMode::BypassPermissions, with_caution, false),
        (Decision::Ask, Some(DecidedBy::CautionAsk)),
        "a mode does not answer the caution"
    );
    assert_eq!(
        decide(&["Bash(npm test:*)"], default, with_caution, false).0,
        Decision::Ask,
        "a rule for another command does not cover the call"
    );
    let both = [caution.clone(), safety];
    assert_eq!(
        decide(&["Bash(git fetch:*)"], default, &both, true),
        (Decision::Ask, Some(DecidedBy::SafetyAsk))
    );
}

/// A shell allow rule covers what its commands write inside the roots; a write outside them needs a path rule.
#[test]
fn a_command_rule_covers_writes_inside_the_roots_only() {
    let argv = ["touch".to_owned(), "x".to_owned()];
    let decide = |path: &str, inside: bool| {
        let facts = CallFacts {
            shell: Some(vec![CommandFact {
                argv: &argv,
                inner: 0,
                read_only: false,
                why: None,
            }]),
            paths: vec![PathFact {
                access: Access::Write,
                written: Path::new(path),
                resolved: Some(Path::new(path)),
                inside_roots: Some(inside),
            }],
            ..CallFacts::default()
        };
        let rules = vec![Rule::parse("Bash(touch:*)", Decision::Allow, Source::User).unwrap()];
        let policy = Policy::from_rules(rules, PermissionMode::Default, &anchors()).unwrap();
        let request = Request {
            tool: "Bash",
            facts: &facts,
            findings: &[],
            hooks: &HookOutcome::default(),
        };
        policy.decide(&request, &SessionState::default()).verdict.decision
    };
    assert_eq!(decide("/proj/x", true), Decision::Allow);
    assert_eq!(decide("/elsewhere/x", false), Decision::Ask);
}

/// A mode of the user's own local settings file takes the place of a lower source's, never a higher one's, nor
/// `bypassPermissions` where a managed policy disabled it; the note of its refusal goes.
#[test]
fn a_users_local_mode_keeps_the_order_of_sources() {
    use crate::settings::Settings;
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join(".claude/settings.local.json");
    std::fs::create_dir_all(local.parent().unwrap()).unwrap();
    std::fs::write(&local, r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#).unwrap();
    let project = dir.path().join(".claude/settings.json");
    std::fs::write(&project, r#"{"permissions": {"defaultMode": "acceptEdits"}}"#).unwrap();
    let mut settings = Settings::new();
    settings.add_file(&local, Source::Local, dir.path()).unwrap();
    settings.add_file(&project, Source::Project, dir.path()).unwrap();
    let (mode, file) = settings
        .refused_local_mode()
        .map(|(m, f)| (m, f.to_owned()))
        .unwrap();
    let file = file.as_path();
    let anchors = Anchors {
        cwd: dir.path().to_owned(),
        home: None,
    };
    let policy = |settings: &Settings| Policy::new(settings, &anchors).unwrap();
    assert_eq!(policy(&settings).notes().len(), 1);
    let users = policy(&settings).with_users_local_mode(mode, file);
    assert_eq!(
        (users.mode(), users.mode_source()),
        (PermissionMode::BypassPermissions, Some(Source::Local))
    );
    assert!(users.notes().is_empty(), "{:?}", users.notes());
    // The command line's mode stays.
    let cli = policy(&settings)
        .with_mode(PermissionMode::Plan, Source::CliArg)
        .with_users_local_mode(mode, file);
    assert_eq!(cli.mode(), PermissionMode::Plan);
    // A managed policy that disabled `bypassPermissions` keeps it off, and says so.
    let managed = dir.path().join("managed.json");
    std::fs::write(
        &managed,
        r#"{"permissions": {"disableBypassPermissionsMode": "disable"}}"#,
    )
    .unwrap();
    settings.add_file(&managed, Source::Policy, dir.path()).unwrap();
    let disabled = policy(&settings).with_users_local_mode(mode, file);
    assert_eq!(disabled.mode(), PermissionMode::AcceptEdits);
    assert!(
        disabled.notes().iter().any(|n| n.contains("disabled by policy")),
        "{:?}",
        disabled.notes()
    );
}
