//! The product's safety invariants as properties of the one decision path (`Guard`, the runtime), each case in a
//! temporary project with real settings files, files and symbolic links inside and outside it.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use agent_bash_guard::{BashConfig, BashGuard};
use agent_core::{Runtime, RuntimeConfig, ScriptedChildren};
use agent_decide::{CallInput, Guard, GuardOptions, HookInput, HookOutput};
use agent_fs_sandbox::{Access, PathSandbox, SandboxConfig};
use agent_rules::{
    DenialTracker, Discovery, PermissionMode, Rule, SessionState, SessionTaint, Settings, TaintMark,
};
use agent_runtime_limits::{
    CompactionBreaker, DuplicateDetector, LimitsConfig, StepLimiter, TokenBudget, canonical_json,
    estimate_tokens,
};
use agent_subagent::{AgentDefinition, SubagentRequest, child_mode, narrow_tools};
use agent_tool_traits::{CancelRegistry, DecidedBy, Decision, HookOutcome, Layer, Source};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};

use crate::workspace::{SourceSettings, Workspace};

// ---------------------------------------------------------------------------------------------------------------
// The project every case runs in.
// ---------------------------------------------------------------------------------------------------------------

/// Files of the fixture, relative to the temporary directory (`proj/` is the working directory, `extra/` an
/// additional directory, `outside/` and `home/` are no root).
const FILES: [&str; 12] = [
    "proj/a.txt",
    "proj/notes.txt",
    "proj/src/lib.rs",
    "proj/src/x.rs",
    "proj/.env",
    "proj/.git/config",
    "proj/secrets/key.pem",
    "extra/e.txt",
    "outside/o.txt",
    "outside/dir/p.txt",
    "home/.ssh/id_rsa",
    "home/doc.txt",
];

/// Symbolic links of the fixture: (where, target as written in the link).
const LINKS: [(&str, &str); 13] = [
    ("proj/in_link", "a.txt"),
    ("proj/src_link", "src"),
    ("proj/out_link", "../outside/o.txt"),
    ("proj/out_dir", "../outside"),
    ("proj/dangling_in", "missing.txt"),
    ("proj/dangling_out", "../outside/new.txt"),
    ("proj/extra_link", "../extra"),
    ("proj/loop", "loop"),
    ("proj/src/up", ".."),
    ("proj/secret_link", "secrets/key.pem"),
    ("proj/src/secret_dir", "../secrets"),
    ("outside/to_proj", "../proj/a.txt"),
    ("home/proj_link", "{tmp}/proj"),
];

/// Builds the fixture in a fresh temporary directory.
fn project() -> Workspace {
    let ws = Workspace::new();
    for file in FILES {
        ws.write(file, "text\n");
    }
    for (link, target) in LINKS {
        ws.symlink(link, target);
    }
    ws
}

/// The roots of the fixture, canonical: the working directory and the additional directory.
fn roots(ws: &Workspace) -> [PathBuf; 2] {
    [ws.cwd(), ws.root().join("extra")]
}

// ---------------------------------------------------------------------------------------------------------------
// Generated settings.
// ---------------------------------------------------------------------------------------------------------------

/// Settings sources as the fixture writes them (`env` is the `AGENT_PERMISSIONS_*` variables).
const SOURCES: [&str; 6] = ["user", "project", "local", "cli", "policy", "env"];

const MODES: [PermissionMode; 7] = [
    PermissionMode::Default,
    PermissionMode::AcceptEdits,
    PermissionMode::Plan,
    PermissionMode::DontAsk,
    PermissionMode::BypassPermissions,
    PermissionMode::Auto,
    PermissionMode::Bubble,
];

/// Command prefixes of shell rules.
const RULE_COMMANDS: [&str; 14] = [
    "ls",
    "cat",
    "git",
    "npm run test",
    "rm",
    "curl",
    "echo",
    "sed",
    "find",
    "python",
    "cargo",
    "touch",
    "tee",
    "env",
];

/// Path patterns with every anchor: `./` and bare (working directory), `/` (the settings file's project), `~/`
/// (home), `//` (absolute).
const RULE_PATHS: [&str; 16] = [
    "./a.txt",
    "./src/**",
    "src/**",
    "/src/**",
    "~/.ssh/**",
    "~/**",
    "//{tmp}/outside/**",
    "//{tmp}/proj/**",
    "//{tmp}/extra/**",
    "//etc/hosts",
    "./.env",
    "**/*.txt",
    "./secrets/**",
    "./out_link",
    "./out_dir/**",
    "./notes.txt",
];

/// One permission rule of any form the settings accept.
fn rule_text() -> impl Strategy<Value = String> {
    let command = prop::sample::select(&RULE_COMMANDS[..]);
    prop_oneof![
        3 => (command.clone(), 0..4u8).prop_map(|(c, form)| match form {
            0 => format!("Bash({c}:*)"),
            1 => format!("Bash({c} *)"),
            2 => format!("Bash({c}*)"),
            _ => format!("Bash(prefix:{c})"),
        }),
        1 => prop::sample::select(vec![
            "Bash", "Bash(ls -la)", "Bash(echo hi)", "Bash(rm -rf build)", "Bash(git * --stat)", "Bash(cat a.txt)",
        ])
        .prop_map(str::to_owned),
        4 => (
            prop::sample::select(vec!["Read", "Edit", "Write"]),
            prop::sample::select(&RULE_PATHS[..]),
        )
            .prop_map(|(tool, path)| format!("{tool}({path})")),
        1 => prop::sample::select(vec![
            "Read", "Edit", "Write", "WebFetch", "WebFetch(domain:example.com)", "WebFetch(domain:*.example.com)",
            "mcp__srv", "mcp__srv__*", "mcp__srv__tool", "Glob", "Grep", "Task(explore)", "Agent(general)", "*",
        ])
        .prop_map(str::to_owned),
    ]
}

fn behavior() -> impl Strategy<Value = Decision> {
    prop_oneof![Just(Decision::Allow), Just(Decision::Ask), Just(Decision::Deny)]
}

/// Rules of several sources, modes written in settings files, and a mode from the command line.
#[derive(Debug, Clone)]
struct Setup {
    rules: Vec<(usize, Decision, String)>,
    file_modes: Vec<(usize, PermissionMode)>,
    cli_mode: Option<PermissionMode>,
}

fn setup() -> impl Strategy<Value = Setup> {
    (
        prop::collection::vec((0..SOURCES.len(), behavior(), rule_text()), 0..8),
        prop::collection::vec((0..SOURCES.len(), prop::sample::select(&MODES[..])), 0..2),
        prop::option::of(prop::sample::select(&MODES[..])),
    )
        .prop_map(|(rules, file_modes, cli_mode)| Setup {
            rules,
            file_modes,
            cli_mode,
        })
}

impl Setup {
    /// The settings of each source in the fixture's short form, and the environment.
    fn files(&self) -> (BTreeMap<String, SourceSettings>, BTreeMap<String, String>) {
        let mut by_source: BTreeMap<String, SourceSettings> = BTreeMap::new();
        let mut env: BTreeMap<String, Vec<String>> = BTreeMap::new();
        // The additional directory is a root in every case, so containment has two roots to consider.
        by_source
            .entry("project".into())
            .or_default()
            .insert("additionalDirectories".into(), json!(["{tmp}/extra"]));
        for (source, behavior, text) in &self.rules {
            let source = SOURCES[*source];
            if source == "env" {
                let var = match behavior {
                    Decision::Allow => "AGENT_PERMISSIONS_ALLOW",
                    Decision::Ask => "AGENT_PERMISSIONS_ASK",
                    Decision::Deny => "AGENT_PERMISSIONS_DENY",
                };
                env.entry(var.into()).or_default().push(text.clone());
                continue;
            }
            let list = by_source
                .entry(source.into())
                .or_default()
                .entry(behavior.as_str().to_owned())
                .or_insert_with(|| json!([]));
            list.as_array_mut().unwrap().push(json!(text));
        }
        for (source, mode) in &self.file_modes {
            match SOURCES[*source] {
                "env" => {
                    env.insert("AGENT_PERMISSIONS_MODE".into(), vec![mode.as_str().to_owned()]);
                }
                source => {
                    by_source
                        .entry(source.into())
                        .or_default()
                        .insert("defaultMode".into(), json!(mode.as_str()));
                }
            }
        }
        let env = env.into_iter().map(|(k, v)| (k, v.join(","))).collect();
        (by_source, env)
    }

    /// The guard `agent-guard check` would build in `ws` with these settings.
    fn guard(&self, ws: &Workspace) -> Guard {
        let (by_source, env) = self.files();
        remove_settings(ws);
        ws.guard(&by_source, &env, self.cli_mode.map(PermissionMode::as_str))
    }

    /// The settings the runtime would load in `ws` (the same files, discovered the same way).
    fn settings(&self, ws: &Workspace) -> Settings {
        let (by_source, env) = self.files();
        remove_settings(ws);
        let (managed, cli_files) = ws.settings(&by_source);
        let mut settings = Settings::discover(&Discovery {
            cwd: ws.cwd(),
            home: Some(ws.home()),
            managed,
            cli_files,
        })
        .unwrap();
        settings
            .add_env(|name| {
                env.get(name)
                    .map(|v| v.replace("{tmp}", &ws.root().display().to_string()))
            })
            .unwrap();
        settings
    }
}

/// Removes every settings file a previous guard of the same case wrote, so that a source dropped from the
/// configuration does not linger.
fn remove_settings(ws: &Workspace) {
    for file in [
        "home/.claude/settings.json",
        "proj/.claude/settings.json",
        "proj/.claude/settings.local.json",
        "cli-settings.json",
        "managed-settings.json",
    ] {
        let _ = std::fs::remove_file(ws.root().join(file));
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Generated calls.
// ---------------------------------------------------------------------------------------------------------------

/// Path components: plain names, `..` and `.`, every link of the fixture, names that do not exist.
const SEGMENTS: [&str; 30] = [
    "a.txt",
    "notes.txt",
    "src",
    "lib.rs",
    "x.rs",
    "..",
    ".",
    "in_link",
    "src_link",
    "out_link",
    "out_dir",
    "dangling_in",
    "dangling_out",
    "extra_link",
    "loop",
    "up",
    "missing",
    "new.txt",
    ".env",
    ".git",
    "config",
    "secrets",
    "key.pem",
    "o.txt",
    "dir",
    "to_proj",
    "a..b.txt",
    ".ssh",
    "secret_link",
    "secret_dir",
];

/// A path as a model would write it: relative, `./`, `~/`, absolute under the temporary directory, in the
/// project, or in the system.
fn path() -> impl Strategy<Value = String> {
    let body = prop::collection::vec(prop::sample::select(&SEGMENTS[..]), 1..5).prop_map(|s| s.join("/"));
    (0..7u8, body).prop_map(|(start, body)| match start {
        0 | 1 => body,
        2 => format!("./{body}"),
        3 => format!("~/{body}"),
        4 => format!("{{tmp}}/{body}"),
        5 => format!("{{tmp}}/proj/{body}"),
        _ => format!("/etc/{body}"),
    })
}

/// One shell command over generated paths.
fn simple_command() -> impl Strategy<Value = String> {
    (0..24u8, path(), path()).prop_map(|(form, p, q)| match form {
        0 => "ls -la".to_owned(),
        1 => format!("cat {p}"),
        2 => "git status".to_owned(),
        3 => "git log --stat".to_owned(),
        4 => "npm run test".to_owned(),
        5 => "npm run testing".to_owned(),
        6 => format!("rm {p}"),
        7 => format!("rm -rf {p}"),
        8 => "curl https://example.com".to_owned(),
        9 => "echo hi".to_owned(),
        10 => format!("grep -r x {p}"),
        11 => "find . -name x".to_owned(),
        12 => "find . -delete".to_owned(),
        13 => format!("sed -i s/a/b/ {p}"),
        14 => "python script.py".to_owned(),
        15 => "sudo ls".to_owned(),
        16 => "cargo build".to_owned(),
        17 => format!("touch {p}"),
        18 => format!("cp {p} {q}"),
        19 => format!("tee {p}"),
        20 => format!("head -n 3 {p}"),
        21 => format!("cd {p}"),
        22 => "rm -rf /".to_owned(),
        _ => format!("wc -l < {p}"),
    })
}

/// A command line: simple commands under wrappers, with redirections and substitutions, joined by operators.
fn command_line() -> impl Strategy<Value = String> {
    let wrapped = (simple_command(), 0..8u8, path()).prop_map(|(c, how, p)| match how {
        0 => format!("env X=1 {c}"),
        1 => format!("timeout 5 {c}"),
        2 => format!("echo {p} | xargs {c}"),
        3 => format!("echo $({c})"),
        4 => format!("{c} > {p}"),
        5 => format!("{c} >> {p}"),
        6 => format!("{c} 2>/dev/null"),
        _ => c,
    });
    prop::collection::vec(
        (wrapped, prop::sample::select(vec![" && ", " || ", "; ", " | "])),
        1..4,
    )
    .prop_map(|parts| {
        let mut line = String::new();
        for (i, (command, op)) in parts.iter().enumerate() {
            if i > 0 {
                line.push_str(op);
            }
            line.push_str(command);
        }
        line
    })
}

/// One tool call of any family, with generated arguments.
fn call() -> impl Strategy<Value = (String, Value)> {
    prop_oneof![
        4 => command_line().prop_map(|c| ("Bash".to_owned(), json!({"command": c}))),
        2 => path().prop_map(|p| ("Read".to_owned(), json!({"file_path": p}))),
        2 => path().prop_map(|p| ("Write".to_owned(), json!({"file_path": p, "content": "x"}))),
        2 => path().prop_map(|p| (
            "Edit".to_owned(),
            json!({"file_path": p, "old_string": "text", "new_string": "t"})
        )),
        1 => path().prop_map(|p| ("Glob".to_owned(), json!({"pattern": "*.rs", "path": p}))),
        1 => path().prop_map(|p| ("Grep".to_owned(), json!({"pattern": "x", "path": p}))),
        1 => prop::sample::select(vec![
            "https://example.com/x", "https://api.example.com/v1", "http://example.com.evil.io/",
            "https://notexample.com", "file:///etc/passwd", "ftp://example.com", "https://EXAMPLE.com",
        ])
        .prop_map(|u| ("WebFetch".to_owned(), json!({"url": u, "prompt": "p"}))),
        1 => prop::sample::select(vec!["mcp__srv__tool", "mcp__srv__other", "mcp__other__tool"])
            .prop_map(|t| (t.to_owned(), json!({"q": 1}))),
        1 => prop::sample::select(vec!["explore", "general"])
            .prop_map(|a| ("Task".to_owned(), json!({"prompt": "p", "subagent_type": a}))),
    ]
}

// ---------------------------------------------------------------------------------------------------------------
// Invariant 1: a deny rule never weakens a decision; removing an allow rule never loosens one.
// ---------------------------------------------------------------------------------------------------------------

/// Whether `rule` names every call of `tool` (the tool's own name without content, or `*`), so that adding it as
/// a deny rule must deny the call outright.
fn denies_every_call_of(rule: &str, tool: &str) -> bool {
    rule == "*"
        || rule == tool
        || (tool.starts_with("mcp__srv__") && (rule == "mcp__srv" || rule == "mcp__srv__*"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_deny_rule_never_weakens_and_removing_an_allow_never_loosens(
        config in setup(),
        extra in rule_text(),
        extra_source in 0..SOURCES.len(),
        removed in any::<prop::sample::Index>(),
        calls in prop::collection::vec(call(), 1..5),
    ) {
        let ws = project();
        let before = config.guard(&ws);
        let mut stricter = config.clone();
        stricter.rules.push((extra_source, Decision::Deny, extra.clone()));
        let after = stricter.guard(&ws);
        let allows: Vec<usize> = (0..config.rules.len())
            .filter(|i| config.rules[*i].1 == Decision::Allow)
            .collect();
        let fewer = (!allows.is_empty()).then(|| {
            let mut fewer = config.clone();
            let dropped = fewer.rules.remove(allows[removed.index(allows.len())]);
            (fewer.guard(&ws), dropped)
        });
        for (tool, args) in &calls {
            let args = ws.expand(args);
            let was = before.decide(tool, &args);
            let now = after.decide(tool, &args);
            prop_assert!(
                now.verdict().decision >= was.verdict().decision,
                "deny rule `{}` ({}) weakened {} {}: {:?} -> {:?}",
                extra, SOURCES[extra_source], tool, args, was.verdict(), now.verdict()
            );
            if denies_every_call_of(&extra, tool) {
                prop_assert_eq!(
                    now.verdict().decision, Decision::Deny,
                    "deny rule `{}` does not deny {} {}: {:?}", extra, tool, args, now.verdict()
                );
            }
            if let Some((fewer, dropped)) = &fewer {
                let loose = fewer.decide(tool, &args);
                prop_assert!(
                    loose.verdict().decision >= was.verdict().decision,
                    "removing allow rule {:?} loosened {} {}: {:?} -> {:?}",
                    dropped, tool, args, was.verdict(), loose.verdict()
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Invariant 1b: deciding is pure.
// ---------------------------------------------------------------------------------------------------------------

/// A session that has read untrusted content and private data: its ways out ask.
fn tainted_session() -> SessionState {
    let mark = |call: &str| Some(TaintMark::new(call, "in a generated session"));
    SessionState::default().with_taint(SessionTaint {
        untrusted: mark("WebFetch https://attacker.example/"),
        private: mark("Bash cat ~/.ssh/config"),
        contacted: Vec::new(),
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    /// The session's taint only adds asks: a call decided in a tainted session is never looser than in a fresh
    /// one, and where it is stricter, the taint decided.
    #[test]
    fn a_tainted_session_never_loosens_a_decision(config in setup(), calls in prop::collection::vec(call(), 1..5)) {
        let ws = project();
        let guard = config.guard(&ws);
        let tainted = tainted_session();
        for (tool, args) in &calls {
            let call = CallInput::new(tool.as_str(), ws.expand(args));
            let fresh = guard.decide_in_session(&call, &SessionState::default());
            let in_taint = guard.decide_in_session(&call, &tainted);
            let (was, now) = (fresh.verdict(), in_taint.verdict());
            prop_assert!(now.decision >= was.decision, "{} {}: {} then {}", tool, args, was.decision, now.decision);
            if now.decision > was.decision {
                prop_assert_eq!(now.provenance.layer, Layer::Taint, "{} {}: {}", tool, args, now.reason());
            }
        }
    }
}

/// A session that has recorded the classifier's denials (`true`) and approvals (`false`) in this order.
fn session_of(history: &[bool]) -> SessionState {
    let mut denials = DenialTracker::default();
    for denial in history {
        if *denial {
            denials.record_denial();
        } else {
            denials.record_approval();
        }
    }
    SessionState::with_denials(denials)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn deciding_a_call_twice_gives_the_same_decision_and_changes_nothing(
        config in setup(),
        auto in any::<bool>(),
        history in prop::collection::vec(any::<bool>(), 0..8),
        calls in prop::collection::vec(call(), 1..5),
    ) {
        let mut config = config;
        if auto {
            config.cli_mode = Some(PermissionMode::Auto);
        }
        let ws = project();
        let guard = config.guard(&ws);
        let session = session_of(&history);
        let before = session.clone();
        let hooks = HookOutcome::default();
        for (tool, args) in &calls {
            let args = ws.expand(args);
            let call = CallInput {
                hooks: hooks.clone(),
                ..CallInput::new(tool.as_str(), args.clone())
            };
            let first = guard.decide_in_session(&call, &session);
            let second = guard.decide_in_session(&call, &session);
            prop_assert_eq!(format!("{first:?}"), format!("{second:?}"), "{} {}", tool, args);
            prop_assert_eq!(&session, &before, "deciding {} {} changed the session", tool, args);
            // A call decided alone (the hook's path) is a call decided in a fresh session.
            let alone = guard.decide(tool, &args);
            let fresh = guard.decide_in_session(&call, &SessionState::default());
            prop_assert_eq!(format!("{alone:?}"), format!("{fresh:?}"));
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Invariant 2: a child agent's permissions are a subset of its parent's.
// ---------------------------------------------------------------------------------------------------------------

/// Tool names a `Task` call may restrict its child to, in both families.
const CHILD_TOOLS: [&str; 10] = [
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Glob",
    "Grep",
    "read_file",
    "run_bash",
    "file_edit",
    "WebFetch",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_child_may_do_nothing_its_parent_may_not(
        config in setup(),
        children in prop::collection::vec(child_request(), 1..4),
        calls in prop::collection::vec(call(), 4..10),
    ) {
        let ws = project();
        let settings = config.settings(&ws);
        let mut runtime_config = RuntimeConfig::new(ws.cwd());
        runtime_config.home = Some(ws.home());
        runtime_config.mode = config.cli_mode.map(|m| (m, Source::CliArg));
        let cancel = CancelRegistry::new();
        let parent = Runtime::builder(settings, runtime_config)
            .cancel_registry(cancel.clone())
            .subagent_models(Arc::new(ScriptedChildren::new(cancel, "p")))
            .build()
            .unwrap();
        let calls: Vec<(String, Value)> = calls.iter().map(|(tool, args)| (tool.clone(), ws.expand(args))).collect();
        let by_parent: Vec<Decision> = calls.iter().map(|(tool, args)| parent.decide(tool, args).decision).collect();
        for args in &children {
            let plan = parent.plan_subagent(args).unwrap().unwrap();
            let child = parent.subagent(&plan).unwrap().unwrap();
            for ((tool, call_args), by_parent) in calls.iter().zip(&by_parent) {
                let by_child = child.decide(tool, call_args);
                // Allow < ask < deny: a child's decision is never looser than its parent's, so whatever the child
                // may do the parent may do, and whatever the parent denies the child denies.
                prop_assert!(
                    by_child.decision >= *by_parent,
                    "child {} ({:?}, tools {:?}) of a {:?} parent: {} {}: child {:?}, parent {:?}",
                    args, plan.mode, plan.tools, config.cli_mode, tool, call_args, by_child, by_parent
                );
            }
        }
    }
}

/// The arguments of a `Task` call: a type, maybe a tool list, usually a mode.
fn child_request() -> impl Strategy<Value = Value> {
    (
        any::<bool>(),
        prop::option::of(prop::collection::vec(
            prop::sample::select(&CHILD_TOOLS[..]),
            0..5,
        )),
        prop::option::weighted(0.8, prop::sample::select(&MODES[..])),
    )
        .prop_map(|(explore, tools, mode)| {
            let mut args =
                json!({"prompt": "p", "subagent_type": if explore { "explore" } else { "general" }});
            if let Some(tools) = tools {
                args["tools"] = json!(tools);
            }
            if let Some(mode) = mode {
                args["mode"] = json!(mode.as_str());
            }
            args
        })
}

// ---------------------------------------------------------------------------------------------------------------
// Invariant 3: what the guard lets through canonicalises inside a root.
// ---------------------------------------------------------------------------------------------------------------

/// Where the kernel would lead `path` (absolute): symbolic links followed one component at a time (a `..` after a
/// link steps up from its target), a missing tail kept as written (a `..` in it removes the missing part first).
/// `None` when the kernel would refuse the path (a loop, a file used as a directory).
fn kernel_resolve(path: &Path) -> Option<PathBuf> {
    let mut stack: Vec<OsString> = Vec::new();
    let push = |stack: &mut Vec<OsString>, path: &Path| {
        let mut parts: Vec<OsString> = path
            .components()
            .filter_map(|c| match c {
                Component::Normal(name) => Some(name.to_owned()),
                Component::ParentDir => Some("..".into()),
                Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
            })
            .collect();
        parts.reverse();
        stack.extend(parts);
    };
    push(&mut stack, path);
    let mut resolved = PathBuf::from("/");
    let mut missing = 0usize;
    let mut links = 0usize;
    while let Some(name) = stack.pop() {
        if name == ".." {
            missing = missing.saturating_sub(1);
            resolved.pop();
            continue;
        }
        let next = resolved.join(&name);
        if missing > 0 {
            resolved = next;
            missing += 1;
            continue;
        }
        match std::fs::symlink_metadata(&next) {
            Err(_) => {
                resolved = next;
                missing = 1;
            }
            Ok(meta) if meta.file_type().is_symlink() => {
                links += 1;
                if links > 40 {
                    return None;
                }
                let target = std::fs::read_link(&next).ok()?;
                if target.is_absolute() {
                    resolved = PathBuf::from("/");
                }
                push(&mut stack, &target);
            }
            Ok(meta) if !meta.is_dir() && !stack.is_empty() => return None,
            Ok(_) => resolved = next,
        }
    }
    Some(resolved)
}

/// The absolute path `input` names from the project (`~` is the fixture's home).
fn absolute(ws: &Workspace, input: &str) -> PathBuf {
    match input.strip_prefix("~/") {
        Some(rest) => ws.home().join(rest),
        None if input == "~" => ws.home(),
        None => ws.cwd().join(input),
    }
}

/// Whether `input` leads inside a root, and whether it leads below the project's `secrets/`; `None` when the
/// kernel would refuse it.
fn leads_to(ws: &Workspace, input: &str) -> Option<(bool, bool)> {
    let resolved = kernel_resolve(&absolute(ws, input))?;
    let inside = roots(ws).iter().any(|root| resolved.starts_with(root));
    // `secrets/**` matches what is below the directory, not the directory itself.
    let secret = resolved
        .strip_prefix(ws.cwd().join("secrets"))
        .is_ok_and(|below| below.components().next().is_some());
    Some((inside, secret))
}

/// A shell command that reads or writes one file, and whether it writes it.
fn file_command(p: &str, form: u8) -> (String, bool) {
    match form % 8 {
        0 => (format!("cat {p}"), false),
        1 => (format!("head -n 1 {p}"), false),
        2 => (format!("wc -l < {p}"), false),
        3 => (format!("grep x {p}"), false),
        4 => (format!("echo x > {p}"), true),
        5 => (format!("echo x >> {p}"), true),
        6 => (format!("printf x | tee {p}"), true),
        _ => (format!("ls 2> {p}"), true),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn what_the_guard_lets_through_canonicalises_inside_a_root(
        config in setup(),
        secrets_source in 0..SOURCES.len(),
        inputs in prop::collection::vec((path(), 0..3u8, any::<u8>()), 1..6),
    ) {
        let ws = project();
        // Deny rules on the target of links: they hold whichever link or `..` leads there.
        let mut config = config;
        for rule in ["Read(./secrets/**)", "Edit(./secrets/**)"] {
            config.rules.push((secrets_source, Decision::Deny, rule.to_owned()));
        }
        let guard = config.guard(&ws);
        for (input, tool, form) in &inputs {
            let input = ws.expand(&json!(input)).as_str().unwrap().to_owned();
            let Some((inside, secret)) = leads_to(&ws, &input) else { continue };
            let (tool, args) = match tool {
                0 => ("Read", json!({"file_path": input})),
                1 => ("Write", json!({"file_path": input, "content": "x"})),
                _ => ("Edit", json!({"file_path": input, "old_string": "text", "new_string": "t"})),
            };
            let verdict = guard.decide(tool, &args).verdict().clone();
            prop_assert!(
                inside || verdict.decision == Decision::Deny,
                "{} {:?} leads outside the roots but is not denied: {:?}", tool, input, verdict
            );
            prop_assert!(
                !secret || verdict.decision == Decision::Deny,
                "{} {:?} leads into `secrets/` but is not denied: {:?}", tool, input, verdict
            );
            let (command, writes) = file_command(&input, *form);
            let verdict = guard.decide("Bash", &json!({"command": command})).verdict().clone();
            prop_assert!(
                !secret || verdict.decision == Decision::Deny,
                "`{}` reaches into `secrets/` but is not denied: {:?}", command, verdict
            );
            if writes {
                prop_assert!(
                    inside || verdict.decision == Decision::Deny,
                    "`{}` writes outside the roots but is not denied: {:?}", command, verdict
                );
            } else if !inside && verdict.decision == Decision::Allow {
                // A shell command may read system files, but only an explicit allow rule or bypass lets it
                // read outside the roots without asking.
                prop_assert!(
                    matches!(verdict.provenance.step, Some(DecidedBy::AllowRule | DecidedBy::BypassMode)),
                    "`{}` reads outside the roots and was allowed by {:?}: {:?}",
                    command, verdict.provenance.step, verdict
                );
            }
        }
    }
}

/// Found by the property above: mode `auto` approved a shell command reading outside the roots, which every other
/// mode asks about (the classifier took it for read-only).
#[test]
fn auto_mode_asks_before_a_shell_read_outside_the_roots() {
    let ws = project();
    let guard = Setup {
        rules: Vec::new(),
        file_modes: Vec::new(),
        cli_mode: Some(PermissionMode::Auto),
    }
    .guard(&ws);
    for command in ["cat ~/.ssh/id_rsa", "head -n 1 ../outside/o.txt", "cat out_link"] {
        let verdict = guard
            .decide("Bash", &json!({ "command": command }))
            .verdict()
            .clone();
        assert_eq!(verdict.decision, Decision::Ask, "{command}: {verdict:?}");
    }
    let inside = guard.decide("Bash", &json!({"command": "cat a.txt src/lib.rs"}));
    assert_eq!(
        inside.verdict().decision,
        Decision::Allow,
        "{:?}",
        inside.verdict()
    );
}

// ---------------------------------------------------------------------------------------------------------------
// Invariant 4: no public entry point panics.
// ---------------------------------------------------------------------------------------------------------------

/// Strings that mean something to some entry point, and short arbitrary ones.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,24}",
        prop::collection::vec(any::<u8>(), 0..64).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        path(),
        command_line().prop_filter("short shell text", |c| c.len() < 200),
        prop::sample::select(vec![
            "",
            "~",
            "/",
            "..",
            "\0",
            "Bash(",
            "Bash(:*)",
            "mcp__",
            "domain:",
            "//",
            "~/",
            "$(",
            "${x@P}",
            "plan",
            "bypassPermissions",
            "-1",
            "18446744073709551616",
            "1e999",
        ])
        .prop_map(str::to_owned),
    ]
}

/// Keys the entry points look at, and arbitrary ones.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "command",
            "file_path",
            "path",
            "pattern",
            "url",
            "prompt",
            "content",
            "old_string",
            "new_string",
            "edits",
            "notebook_path",
            "subagent_type",
            "tools",
            "mode",
            "permissions",
            "allow",
            "deny",
            "ask",
            "defaultMode",
            "additionalDirectories",
            "agentGuard",
            "hooks",
            "libraryDir",
            "skillsDir",
            "readOnlyDirectories",
            "protectedPaths",
            "commands",
            "blockNetwork",
            "limits",
            "maxSteps",
            "tokenSoftLimit",
            "tokenHardLimit",
            "duplicateLimit",
            "cwd",
            "tool_name",
            "tool_input",
            "hook_event_name",
            "permission_mode",
            "session_id",
            "read_only",
            "wrappers",
            "tool",
            "args",
        ])
        .prop_map(str::to_owned),
        "\\PC{0,8}",
    ]
}

/// Any JSON value, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A tool name of either family, a close miss, or anything.
fn tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "Bash",
            "run_bash",
            "Read",
            "read_file",
            "Write",
            "file_write",
            "Edit",
            "MultiEdit",
            "file_edit",
            "Glob",
            "glob_files",
            "Grep",
            "grep_files",
            "WebFetch",
            "WebSearch",
            "Task",
            "Agent",
            "subagent",
            "NotebookEdit",
            "ask_user",
            "bg_task_run",
            "mcp__srv__tool",
            "mcp__",
            "mcp____",
            "*",
            "",
        ])
        .prop_map(str::to_owned),
        "\\PC{0,16}",
    ]
}

/// Runs `cases` cases of `strategy` through `test`, without persisting failures.
fn run<S: Strategy>(cases: u32, strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>) {
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    if let Err(error) = runner.run(&strategy, test) {
        panic!("{error}");
    }
}

#[test]
fn no_decision_entry_point_panics() {
    let ws = project();
    let guard = Setup {
        rules: vec![
            (1, Decision::Deny, "Read(./secrets/**)".into()),
            (0, Decision::Allow, "Bash(git:*)".into()),
        ],
        file_modes: Vec::new(),
        cli_mode: None,
    }
    .guard(&ws);
    let sandbox = PathSandbox::new(SandboxConfig::new(ws.cwd()).with_home(ws.home())).unwrap();
    let bash = BashGuard::new(BashConfig::default());
    let mut config = RuntimeConfig::new(ws.cwd());
    config.home = Some(ws.home());
    let cancel = CancelRegistry::new();
    let runtime = Runtime::builder(Settings::new(), config)
        .cancel_registry(cancel.clone())
        .subagent_models(Arc::new(ScriptedChildren::new(cancel, "n")))
        .build()
        .unwrap();
    // Guard::decide and Runtime::decide (the tools' own checks, `bg_task_run`, subagent planning) with any tool
    // name and any arguments, the shell analysis and the sandbox on any text.
    run(160, (tool_name(), json_value(), text()), |(tool, args, text)| {
        let _ = guard.decide(&tool, &args);
        let _ = runtime.decide(&tool, &args);
        let _ = runtime.plan_subagent(&args);
        let _ = guard.decide("Bash", &json!({ "command": text }));
        let _ = bash.analyze(&text);
        for access in [Access::Read, Access::Write] {
            let _ = sandbox.check(&text, access);
            let _ = sandbox.resolve(&text, access);
        }
        Ok(())
    });
    // A hook input as text, and as JSON of roughly the right shape; a parsed one decided like `agent-guard check`.
    run(
        96,
        (text(), tool_name(), json_value(), prop::option::of(text())),
        |(raw, tool, tool_input, mode)| {
            let _ = HookInput::parse(&raw);
            let shaped = json!({
                "session_id": "s", "cwd": ws.cwd(), "hook_event_name": "PreToolUse",
                "tool_name": tool, "tool_input": tool_input, "permission_mode": mode,
            });
            if let Ok(input) = HookInput::parse(&shaped.to_string()) {
                let decided = guard.decide(&input.tool_name, &input.tool_input);
                let line = HookOutput::from_verdict(decided.verdict()).to_json();
                prop_assert!(serde_json::from_str::<Value>(&line).is_ok(), "{}", line);
            }
            Ok(())
        },
    );
}

#[test]
fn no_loading_entry_point_panics() {
    let ws = project();
    let behaviors = [Decision::Allow, Decision::Ask, Decision::Deny];
    // Rule::parse and PermissionMode parsing on any text.
    run(
        256,
        (text(), 0..3usize, 0..Source::ALL.len(), text()),
        |(body, behavior, source, mode)| {
            let behavior = behaviors[behavior];
            let source = Source::ALL[source];
            let _ = Rule::parse(&body, behavior, source);
            let _ = Rule::parse(&format!("Bash({body})"), behavior, source);
            let _ = Rule::parse(&format!("Read({body})"), behavior, source);
            let _ = mode.parse::<PermissionMode>();
            Ok(())
        },
    );
    // Settings files holding any text or any JSON, loaded and made into a guard (an error is fine, a panic not).
    let file = ws.cwd().join(".agent-guard/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    run(
        64,
        prop_oneof![
            text(),
            json_value().prop_map(|v| v.to_string()),
            (json_value(), json_value())
                .prop_map(|(p, g)| json!({"permissions": p, "agentGuard": g}).to_string()),
        ],
        |text| {
            std::fs::write(&file, &text).unwrap();
            let discovered = Settings::discover(&Discovery {
                cwd: ws.cwd(),
                home: Some(ws.home()),
                managed: Vec::new(),
                cli_files: Vec::new(),
            });
            if let Ok(settings) = discovered {
                let options = GuardOptions {
                    cwd: ws.cwd(),
                    home: Some(ws.home()),
                    mode: None,
                    extra_roots: Vec::new(),
                    project: None,
                    auto_allow: None,
                };
                if let Ok(guard) = Guard::new(&settings, &options) {
                    let _ = guard.decide("Read", &json!({"file_path": "a.txt"}));
                }
            }
            Ok(())
        },
    );
}

#[test]
fn no_limits_or_subagent_entry_point_panics() {
    let modes = prop::option::of(prop::sample::select(&MODES[..]));
    run(
        256,
        (
            json_value(),
            prop::collection::vec((key(), text()), 0..4),
            tool_name(),
            json_value(),
            text(),
            any::<u64>(),
            (modes.clone(), modes),
            prop::collection::vec(tool_name(), 0..4),
        ),
        |(limits, vars, tool, args, text, used, (parent, requested), names)| {
            let (config, _) = LimitsConfig::default().with_settings(&limits);
            let (config, _) = config.with_vars(|name| {
                vars.iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
                    .or_else(|| vars.first().map(|(_, v)| v.clone()))
            });
            let _ = estimate_tokens(&text);
            let _ = canonical_json(&args);
            let mut budget = TokenBudget::new(&config);
            budget.add_text(&text);
            let _ = budget.record_step([text.as_str(), ""]);
            budget.compacted(used);
            let _ = budget.action();
            let mut breaker = CompactionBreaker::new(&config);
            breaker.record_failure();
            let _ = breaker.allows_compaction();
            let mut steps = StepLimiter::new(&config);
            for _ in 0..3 {
                let _ = steps.next_step();
            }
            let mut duplicates = DuplicateDetector::new(&config);
            for _ in 0..4 {
                let _ = duplicates.check(&tool, &args);
            }
            let _ = SubagentRequest::from_args(&args);
            let _ = AgentDefinition::builtin(&text);
            if let Some(parent) = parent {
                let _ = child_mode(parent, requested);
            }
            let parent_tools: Vec<&str> = names.iter().map(String::as_str).collect();
            let limit = [tool.clone(), text.clone()];
            let _ = narrow_tools(&parent_tools, &[Some(&limit[..]), None]);
            Ok(())
        },
    );
}
