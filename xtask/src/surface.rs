//! The surface check: every item a library crate exports (each `pub use` of its lib.rs) has a user in another
//! package of the repository, or an entry in [`ALLOWED`] that says why it is exported anyway.
//!
//! Hand-written on purpose, and plain: rustdoc's JSON output needs a nightly toolchain, and the tools that list a
//! public API (cargo-public-api, cargo-semver-checks) do not say which export nothing outside its crate uses.
//! The crates export each item with a `pub use` in their lib.rs, and their users name it as `crate_name::Item`
//! (alone or in a `use crate_name::{…}` group), so reading the one and looking for the other in the other
//! packages' sources answers the question without a compiler. Other packages' tests, benches and fuzz targets
//! count as users; the crate's own tests, benches and doc examples do not, and neither does a mention in prose.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Exports that no other package uses and stay exported, each with why: API a library user needs although the
/// workspace's own callers do not name it (a type they only receive, an error variant they only match).
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "agent-decide",
        "TaintSettings",
        "the type of `GuardSettings::taint`: the sources, sinks and trusted domains of `agentGuard.taint`",
    ),
    (
        "agent-os-sandbox",
        "run",
        "runs a prepared command without an output filter, as a library user launches one",
    ),
    (
        "agent-os-sandbox",
        "run_filtered",
        "runs a prepared command with its output redacted, as a library user launches one (ARCHITECTURE.md, \
         \"From a library\")",
    ),
    (
        "agent-secrets",
        "Finding",
        "the type `scan` returns: a credential's kind and span",
    ),
    (
        "agent-secrets",
        "first",
        "the first credential of a text, for a caller that only needs to know whether there is one",
    ),
    (
        "agent-telemetry",
        "Tally",
        "the counts `Telemetry::tally` returns, rendered as Prometheus text",
    ),
    (
        "agent-bash-guard",
        "Finding",
        "the type of `CommandAnalysis::findings`",
    ),
    (
        "agent-core",
        "BashLimits",
        "the limits of `RunBashTool`, for a runtime built with a shell tool of its own limits",
    ),
    (
        "agent-core",
        "BgNotification",
        "the type of `SessionReport::background`",
    ),
    (
        "agent-core",
        "BgNotificationQueue",
        "returned by `Runtime::background_queue`",
    ),
    (
        "agent-core",
        "GuardHandle",
        "what `RunBashTool::new` takes: the guard a tool confines its commands with",
    ),
    ("agent-core", "LimitEvent", "the type of `SessionReport::limits`"),
    ("agent-core", "OutputStore", "returned by `Runtime::output_store`"),
    (
        "agent-core",
        "PendingApproval",
        "what `ChannelApprover`'s receiver yields",
    ),
    ("agent-core", "Persisted", "returned by `OutputStore::persist`"),
    (
        "agent-core",
        "RunBashTool",
        "the shell tool by itself, for a runtime registered with `RuntimeBuilder::tool`",
    ),
    ("agent-core", "RuntimeBuilder", "returned by `Runtime::builder`"),
    (
        "agent-core",
        "RuntimeError",
        "the error of `RuntimeBuilder::build`",
    ),
    (
        "agent-core",
        "ScriptedCall",
        "the type of `ScriptedTurn::calls` (feature `testing`)",
    ),
    ("agent-core", "ToolRegistry", "returned by `Runtime::registry`"),
    (
        "agent-decide",
        "DECISION_TIMEOUT_ENV",
        "the name of the variable that sets `DecisionBound::from_env`, for a library user's documentation",
    ),
    (
        "agent-decide",
        "GuardProtection",
        "returned by `Guard::protection`",
    ),
    (
        "agent-decide",
        "Result",
        "the crate's result alias, beside its `Error`",
    ),
    (
        "agent-decide",
        "SandboxMode",
        "the type of `GuardSettings::sandbox`, returned by `Guard::sandbox_mode`",
    ),
    ("agent-decide", "Contained", "the type of `Decided::contained`"),
    ("agent-decide", "Outside", "the type of `Decided::outside`"),
    (
        "agent-decide",
        "SessionLimit",
        "the type of `Decided::session_limit`, taken by `sandboxed_input`",
    ),
    (
        "agent-fs-sandbox",
        "EntryKind",
        "the type of each entry `list_dir` returns: a directory, a link or anything else",
    ),
    (
        "agent-fs-sandbox",
        "GlobMatches",
        "returned by `PathSandbox::glob`",
    ),
    (
        "agent-fs-sandbox",
        "Reached",
        "returned by `PathSandbox::protected_beneath`",
    ),
    (
        "agent-fs-sandbox",
        "Result",
        "the crate's result alias, beside its `PathSandboxError`",
    ),
    (
        "agent-fs-sandbox",
        "open_beneath",
        "the race-free open by itself, which the crate's swap tests drive without a sandbox",
    ),
    (
        "agent-hooks",
        "CommandSpec",
        "returned by `HookSettings::commands`",
    ),
    (
        "agent-hooks",
        "MatcherGroup",
        "returned by `HookSettings::groups`",
    ),
    (
        "agent-hooks",
        "PreToolUseOutcome",
        "returned by `HookRegistry::run_pre_tool_use`",
    ),
    (
        "agent-hooks",
        "ToolMetrics",
        "the type of `MetricsSnapshot::tools`",
    ),
    ("agent-model", "ModelError", "the error of the model clients"),
    (
        "agent-model",
        "Result",
        "the crate's result alias, beside its `ModelError`",
    ),
    (
        "agent-os-sandbox",
        "CacheOverlay",
        "the type of `Plan::cache_overlays`",
    ),
    ("agent-os-sandbox", "Grant", "the type of `Plan::grants`"),
    ("agent-os-sandbox", "Isolation", "the type of `Plan::isolation`"),
    (
        "agent-os-sandbox",
        "KernelSandboxError",
        "the error of `Plan::build` and `run`",
    ),
    ("agent-os-sandbox", "Mask", "the type of `Plan::masks`"),
    (
        "agent-os-sandbox",
        "ReadOnlyBind",
        "the type of `Plan::read_only_binds`",
    ),
    ("agent-os-sandbox", "Rights", "the type of `Grant::rights`"),
    (
        "agent-rules",
        "AdditionalDirectory",
        "returned by `Settings::additional_directories`",
    ),
    (
        "agent-rules",
        "Classifier",
        "what `Policy::with_classifier` takes: the classifier of mode `auto`",
    ),
    (
        "agent-rules",
        "ClassifierInput",
        "what `Classifier::classify` takes",
    ),
    (
        "agent-rules",
        "ClassifierOutcome",
        "the type of `Resolution::classifier`",
    ),
    (
        "agent-rules",
        "ClassifierVerdict",
        "what `Classifier::classify` returns",
    ),
    ("agent-rules", "Conflict", "the type of `Resolution::conflicts`"),
    (
        "agent-rules",
        "DeterministicClassifier",
        "the default classifier of mode `auto`, for a classifier that falls back to it",
    ),
    (
        "agent-rules",
        "check_settings",
        "the one strict check of a settings file's text, for a library user that checks without loading",
    ),
    (
        "agent-rules",
        "ValueCheck",
        "the type of the value check `Settings::check_file` and `Settings::discover_with` take",
    ),
    (
        "agent-runtime-limits",
        "LimitsError",
        "returned by `LimitsConfig::with_vars` and `with_settings`",
    ),
    (
        "agent-server",
        "Result",
        "the crate's result alias, beside its `ServeError`",
    ),
    (
        "agent-server",
        "ServeError",
        "the error of `Server::bind` and `Server::run`",
    ),
    (
        "agent-subagent",
        "ChildMessage",
        "the type of `ChildPlan::messages`",
    ),
    ("agent-undo", "Change", "returned by `Store::changes`"),
    ("agent-undo", "Conflict", "the type of `UndoReport::conflicts`"),
    ("agent-undo", "Entry", "the type of `Step::now` and `Step::then`"),
    ("agent-undo", "Look", "returned by `look`"),
    ("agent-undo", "Recorded", "the type of `Finished::runs`"),
    (
        "agent-undo",
        "Result",
        "the crate's result alias, beside its `UndoError`",
    ),
    (
        "agent-undo",
        "RunId",
        "the type of `RunRecord::id` and `UndoRequest::from`",
    ),
    ("agent-undo", "Step", "the type of `UndoReport::steps`"),
];

/// Directories besides `crates/*` whose sources use the crates.
const OTHER_USERS: &[&str] = &["tests", "benches", "xtask", "fuzz/fuzz_targets"];

pub(crate) fn check() -> Result<()> {
    let root = crate::workspace_root();
    let unused = unused_exports(&root)?;
    let mut failures = Vec::new();
    for (package, item) in &unused {
        if !ALLOWED.iter().any(|(p, i, _)| p == package && i == item) {
            failures.push(format!(
                "`{package}` exports `{item}`, which no other package uses: make it `pub(crate)`, or list it in \
                 xtask/src/surface.rs with the reason it is exported"
            ));
        }
    }
    for (package, item, _) in ALLOWED {
        if !unused.contains(&((*package).to_owned(), (*item).to_owned())) {
            failures.push(format!(
                "`{package}` `{item}` is listed as an export without users, but it is used or no longer exported: \
                 remove it from the list in xtask/src/surface.rs"
            ));
        }
    }
    if failures.is_empty() {
        eprintln!(
            "surface: every export has a user outside its crate ({} listed as deliberate API)",
            ALLOWED.len()
        );
        return Ok(());
    }
    for failure in &failures {
        eprintln!("surface: {failure}");
    }
    bail!("{} export(s) need a decision", failures.len())
}

/// Prints every export without a user outside its crate, allowed or not, for `cargo xtask surface --list`.
pub(crate) fn list() -> Result<()> {
    for (package, item) in unused_exports(&crate::workspace_root())? {
        let reason = ALLOWED
            .iter()
            .find(|(p, i, _)| *p == package && *i == item)
            .map_or("(not listed)", |(_, _, why)| why);
        println!("{package} {item}: {reason}");
    }
    Ok(())
}

/// One library crate of the workspace.
struct Library {
    /// The package name (`agent-fs-sandbox`).
    package: String,
    /// The name code uses for it (`agent_fs_sandbox`).
    ident: String,
    /// Its directory.
    dir: PathBuf,
}

/// Every (package, item) whose export no other package names.
fn unused_exports(root: &Path) -> Result<BTreeSet<(String, String)>> {
    let libraries = libraries(root)?;
    let mut sources: Vec<(PathBuf, String)> = Vec::new();
    let crates = root.join("crates");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&crates)
        .with_context(|| format!("cannot list {}", crates.display()))?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    dirs.extend(OTHER_USERS.iter().map(|dir| root.join(dir)));
    for dir in &dirs {
        for file in rust_files(dir)? {
            let text =
                std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
            sources.push((file, code_of(&text)));
        }
    }
    let mut unused = BTreeSet::new();
    for library in &libraries {
        let lib_rs = library.dir.join("src/lib.rs");
        let text =
            std::fs::read_to_string(&lib_rs).with_context(|| format!("cannot read {}", lib_rs.display()))?;
        let exports = exports_of(&text);
        let mut named: BTreeMap<&str, bool> = exports.iter().map(|e| (e.as_str(), false)).collect();
        for (file, code) in &sources {
            if file.starts_with(&library.dir) {
                continue;
            }
            for name in names_used(code, &library.ident) {
                if let Some(seen) = named.get_mut(name.as_str()) {
                    *seen = true;
                }
            }
        }
        unused.extend(
            named
                .into_iter()
                .filter(|(_, seen)| !seen)
                .map(|(item, _)| (library.package.clone(), item.to_owned())),
        );
    }
    Ok(unused)
}

/// The library crates under `crates/`: those with a `src/lib.rs`.
fn libraries(root: &Path) -> Result<Vec<Library>> {
    let mut libraries = Vec::new();
    let crates = root.join("crates");
    let entries = std::fs::read_dir(&crates).with_context(|| format!("cannot list {}", crates.display()))?;
    for entry in entries {
        let dir = entry?.path();
        if !dir.join("src/lib.rs").is_file() {
            continue;
        }
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml"))
            .with_context(|| format!("cannot read {}/Cargo.toml", dir.display()))?;
        let package = manifest
            .lines()
            .find_map(|line| line.trim().strip_prefix("name = \""))
            .and_then(|rest| rest.strip_suffix('"'))
            .with_context(|| format!("no package name in {}/Cargo.toml", dir.display()))?
            .to_owned();
        libraries.push(Library {
            ident: package.replace('-', "_"),
            package,
            dir,
        });
    }
    libraries.sort_by(|a, b| a.package.cmp(&b.package));
    Ok(libraries)
}

/// The `.rs` files beneath `dir` (none when it does not exist), leaving out build output.
fn rust_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut queue = vec![dir.to_path_buf()];
    while let Some(dir) = queue.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                if path.file_name().is_none_or(|name| name != "target") {
                    queue.push(path);
                }
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                files.push(path);
            }
        }
    }
    Ok(files)
}

/// The code of a source file: its lines without comments, but with the code of the examples in its doc
/// comments (a doc example is a test that uses the crates).
fn code_of(text: &str) -> String {
    let mut code = String::new();
    let mut in_example = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let doc = trimmed
            .strip_prefix("///")
            .or_else(|| trimmed.strip_prefix("//!"));
        match doc {
            Some(doc) => {
                let doc = doc.trim_start();
                if doc.starts_with("```") {
                    in_example = !in_example;
                } else if in_example {
                    code.push_str(doc.strip_prefix("# ").unwrap_or(doc));
                    code.push('\n');
                }
            }
            None if trimmed.starts_with("//") => {}
            None => {
                code.push_str(line);
                code.push('\n');
            }
        }
    }
    code
}

/// The names a lib.rs exports: the last segment (or the alias) of each leaf of each `pub use`, outside
/// comments. A glob (`pub use x::*`) exports nothing this check can name.
fn exports_of(lib_rs: &str) -> Vec<String> {
    let code: String = lib_rs
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut exports = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("pub use ") {
        let after = rest.get(at + "pub use ".len()..).unwrap_or_default();
        let end = after.find(';').unwrap_or(after.len());
        exports.extend(leaves(after.get(..end).unwrap_or_default()));
        rest = after.get(end..).unwrap_or_default();
    }
    exports
}

/// The names a use tree (`a::b::{C, d::{E as F}, self}`) brings in.
fn leaves(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    if let (Some(open), Some(close)) = (tree.find('{'), tree.rfind('}')) {
        let prefix = tree.get(..open).unwrap_or_default().trim_end_matches("::");
        let inner = tree.get(open + 1..close).unwrap_or_default();
        return split_top_level(inner)
            .into_iter()
            .flat_map(|part| {
                if part.trim() == "self" {
                    vec![last_segment(prefix)]
                } else {
                    leaves(part)
                }
            })
            .filter(|name| !name.is_empty())
            .collect();
    }
    let name = match tree.split_once(" as ") {
        Some((_, alias)) => alias.trim().to_owned(),
        None => last_segment(tree),
    };
    if name.is_empty() || name == "*" || name == "_" {
        Vec::new()
    } else {
        vec![name]
    }
}

fn last_segment(path: &str) -> String {
    path.rsplit("::").next().unwrap_or_default().trim().to_owned()
}

/// `text` split at the commas outside braces.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0_usize;
    let mut start = 0;
    for (at, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(text.get(start..at).unwrap_or_default());
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(text.get(start..).unwrap_or_default());
    parts.into_iter().filter(|part| !part.trim().is_empty()).collect()
}

/// The names `code` takes from the crate `ident`: `ident::Name`, and every name of `ident::{…}`.
fn names_used(code: &str, ident: &str) -> Vec<String> {
    let mut names = Vec::new();
    let needle = format!("{ident}::");
    let mut rest = code;
    while let Some(at) = rest.find(&needle) {
        // `other_agent_core::` is not `agent_core::`.
        let before = rest.get(..at).and_then(|head| head.chars().next_back());
        let after = rest.get(at + needle.len()..).unwrap_or_default();
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = after.strip_prefix('{') {
            let mut depth = 1_usize;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map_or(group.len(), |(at, _)| at);
            names.extend(words(group.get(..end).unwrap_or_default()));
        } else {
            names.extend(words(after).into_iter().take(1));
        }
    }
    names
}

/// The identifiers of `text`, in order.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exports_are_the_leaves_of_each_pub_use() {
        let lib = "//! ```\n//! pub use not::This;\n//! ```\nmod a;\npub use a::One;\npub use b::{\n    Two, \
                   c::{Three as Four, self},\n    five,\n};\npub use d::*;\npub(crate) use e::Hidden;\n";
        assert_eq!(exports_of(lib), ["One", "Two", "Four", "c", "five"]);
    }

    #[test]
    fn uses_are_paths_and_groups_of_the_crate() {
        let code = code_of(
            "use agent_x::{A, b::{C as D}};\nlet e = agent_x::E::new();\nlet f = other_agent_x::F;\n\
             // agent_x::G in a comment\n/// ```\n/// agent_x::H\n/// ```\n/// [`I`](agent_x::I)\n",
        );
        assert_eq!(names_used(&code, "agent_x"), ["A", "b", "C", "as", "D", "E", "H"]);
    }
}
