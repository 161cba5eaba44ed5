//! The layering check: each crate depends on exactly the project crates the documented graph gives it, the
//! synchronous crates pull in no async runtime and no database, and docs/ARCHITECTURE.md draws the same graph.

#![expect(
    clippy::indexing_slicing,
    reason = "indexing a serde_json::Value yields Null instead of panicking"
)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// Every workspace crate and the exact set of project crates its code depends on (normal and build
/// dependencies), edge by edge, as the "Layers and crates" table of docs/ARCHITECTURE.md draws it. The graph is a
/// star, not a total order of layers: every layer stands on `agent-tool-traits` alone (the subagent planner also on
/// the rules), `agent-decide` composes the synchronous layers into the one decision, `agent-core` composes the
/// decision and the asynchronous layers into the runtime, and the CLI uses both and the layers it names. A crate may
/// not depend on a crate its row does not name, even one of a lower layer, and an edge the code no longer has must
/// leave the table too. Dev-dependencies are not checked: a test or bench may use any crate's public API.
const GRAPH: &[(&str, &[&str])] = &[
    ("agent-tool-traits", &[]),
    ("agent-rules", &["agent-tool-traits"]),
    ("agent-hooks", &["agent-tool-traits", "agent-secrets"]),
    ("agent-fs-sandbox", &["agent-tool-traits"]),
    ("agent-os-sandbox", &["agent-tool-traits"]),
    ("agent-secrets", &[]),
    ("agent-bash-guard", &["agent-tool-traits"]),
    ("agent-subagent", &["agent-tool-traits", "agent-rules"]),
    ("agent-runtime-limits", &["agent-tool-traits"]),
    ("agent-undo", &["agent-tool-traits", "agent-fs-sandbox"]),
    (
        "agent-decide",
        &[
            "agent-tool-traits",
            "agent-rules",
            "agent-fs-sandbox",
            "agent-os-sandbox",
            "agent-bash-guard",
            "agent-secrets",
            "agent-undo",
        ],
    ),
    (
        "agent-core",
        &[
            "agent-tool-traits",
            "agent-rules",
            "agent-hooks",
            "agent-fs-sandbox",
            "agent-os-sandbox",
            "agent-subagent",
            "agent-runtime-limits",
            "agent-decide",
            "agent-undo",
        ],
    ),
    (
        "agent-telemetry",
        &["agent-tool-traits", "agent-rules", "agent-hooks", "agent-secrets"],
    ),
    (
        "agent-model",
        &["agent-tool-traits", "agent-subagent", "agent-core"],
    ),
    (
        "agent-server",
        &[
            "agent-tool-traits",
            "agent-rules",
            "agent-hooks",
            "agent-decide",
            "agent-core",
            "agent-telemetry",
        ],
    ),
    (
        "agent-guard",
        &[
            "agent-tool-traits",
            "agent-rules",
            "agent-hooks",
            "agent-os-sandbox",
            "agent-bash-guard",
            "agent-decide",
            "agent-core",
            "agent-model",
            "agent-server",
            "agent-secrets",
            "agent-undo",
            "agent-telemetry",
        ],
    ),
    ("agent-guard-tests", &[]),
    ("agent-guard-benches", &[]),
    ("xtask", &["agent-guard-benches"]),
];

/// Crates that must stay synchronous and database-free: every crate below agent-core but the hook pipeline, and
/// the decision that composes them (the runtime awaits it on a blocking thread).
const SYNC_ONLY: &[&str] = &[
    "agent-tool-traits",
    "agent-rules",
    "agent-fs-sandbox",
    "agent-os-sandbox",
    "agent-secrets",
    "agent-bash-guard",
    "agent-subagent",
    "agent-runtime-limits",
    "agent-undo",
    "agent-decide",
];
/// The packages a synchronous crate must not reach, directly or through any dependency.
const FORBIDDEN_IN_SYNC: &[&str] = &[
    "tokio",
    "sqlx",
    "sqlx-core",
    "async-std",
    "smol",
    "rusqlite",
    "diesel",
];

/// The file whose "Layers and crates" table must draw [`GRAPH`], relative to the workspace root.
const ARCHITECTURE: &str = "docs/ARCHITECTURE.md";
/// The heading of that table's section.
const TABLE_HEADING: &str = "## Layers and crates";

pub(crate) fn check() -> Result<()> {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .args(["metadata", "--format-version", "1", "--locked"])
        .output()
        .context("cannot run `cargo metadata`")?;
    if !output.status.success() {
        bail!(
            "`cargo metadata` failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let metadata: Value =
        serde_json::from_slice(&output.stdout).context("`cargo metadata` printed invalid JSON")?;
    let root = metadata["workspace_root"]
        .as_str()
        .context("no `workspace_root` in cargo metadata")?;
    let architecture_path = Path::new(root).join(ARCHITECTURE);
    let architecture = std::fs::read_to_string(&architecture_path)
        .with_context(|| format!("cannot read `{}`", architecture_path.display()))?;
    let mut problems = problems(&metadata)?;
    problems.extend(docs_problems(&architecture));
    if problems.is_empty() {
        eprintln!(
            "layering: every crate depends on exactly the crates of the documented graph; the synchronous crates \
             reach no async runtime or database"
        );
        Ok(())
    } else {
        for problem in &problems {
            eprintln!("layering: {problem}");
        }
        bail!("{} layering problem(s)", problems.len())
    }
}

/// What in `metadata` (the output of `cargo metadata`) breaks [`GRAPH`] or [`SYNC_ONLY`].
fn problems(metadata: &Value) -> Result<Vec<String>> {
    let packages = metadata["packages"]
        .as_array()
        .context("no `packages` in cargo metadata")?;
    let name_of: HashMap<&str, &str> = packages
        .iter()
        .filter_map(|p| Some((p["id"].as_str()?, p["name"].as_str()?)))
        .collect();
    // The members of the workspace: a path dependency that is none (a crate patched in `vendor/`) is a
    // dependency like one of a registry.
    let members: BTreeSet<&str> = metadata["workspace_members"]
        .as_array()
        .context("no `workspace_members` in cargo metadata")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let workspace: BTreeSet<&str> = packages
        .iter()
        .filter(|p| p["id"].as_str().is_some_and(|id| members.contains(id)))
        .filter_map(|p| p["name"].as_str())
        .collect();
    let nodes = metadata["resolve"]["nodes"]
        .as_array()
        .context("no `resolve.nodes` in cargo metadata")?;
    // The edges of code (normal and build dependencies, not dev-dependencies) by package id.
    let mut code_edges: HashMap<&str, Vec<&str>> = HashMap::new();
    for node in nodes {
        let Some(id) = node["id"].as_str() else { continue };
        for dep in node["deps"].as_array().into_iter().flatten() {
            let Some(dep_id) = dep["pkg"].as_str() else {
                continue;
            };
            let kinds = dep["dep_kinds"].as_array().cloned().unwrap_or_default();
            if kinds.iter().any(|k| k["kind"].as_str() != Some("dev")) {
                code_edges.entry(id).or_default().push(dep_id);
            }
        }
    }
    let graph: BTreeMap<&str, BTreeSet<&str>> = GRAPH
        .iter()
        .map(|(name, deps)| (*name, deps.iter().copied().collect()))
        .collect();
    let mut problems = Vec::new();
    for name in workspace.difference(&graph.keys().copied().collect()) {
        problems.push(format!(
            "workspace crate `{name}` is not in the dependency graph of xtask/src/layering.rs"
        ));
    }
    for name in graph.keys().filter(|name| !workspace.contains(*name)) {
        problems.push(format!(
            "`{name}` is in the dependency graph of xtask/src/layering.rs but not in the workspace"
        ));
    }
    for package in packages {
        let (Some(id), Some(name)) = (package["id"].as_str(), package["name"].as_str()) else {
            continue;
        };
        if !workspace.contains(name) {
            continue;
        }
        if let Some(allowed) = graph.get(name) {
            let actual: BTreeSet<&str> = code_edges
                .get(id)
                .into_iter()
                .flatten()
                .filter_map(|dep| name_of.get(dep).copied())
                .filter(|dep| workspace.contains(dep))
                .collect();
            for dep in actual.difference(allowed) {
                problems.push(format!(
                    "`{name}` depends on `{dep}`, an edge the documented graph does not have ({ARCHITECTURE}, \
                     \"Layers and crates\")"
                ));
            }
            for dep in allowed.difference(&actual) {
                problems.push(format!(
                    "`{name}` no longer depends on `{dep}`: remove the edge from xtask/src/layering.rs and \
                     {ARCHITECTURE}"
                ));
            }
        }
        if !SYNC_ONLY.contains(&name) {
            continue;
        }
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut stack = vec![id];
        while let Some(current) = stack.pop() {
            for dep in code_edges.get(current).into_iter().flatten() {
                if seen.insert(dep) {
                    stack.push(dep);
                }
            }
        }
        for dep in seen {
            if let Some(dep_name) = name_of.get(dep)
                && FORBIDDEN_IN_SYNC.contains(dep_name)
            {
                problems.push(format!(
                    "`{name}` must stay synchronous but its dependencies reach `{dep_name}`"
                ));
            }
        }
    }
    for name in SYNC_ONLY.iter().filter(|name| !graph.contains_key(*name)) {
        problems.push(format!(
            "`{name}` is in the synchronous list but not in the dependency graph of xtask/src/layering.rs"
        ));
    }
    problems.sort();
    problems.dedup();
    Ok(problems)
}

/// Where the "Layers and crates" table of `architecture` (the text of docs/ARCHITECTURE.md) draws another graph
/// than [`GRAPH`].
fn docs_problems(architecture: &str) -> Vec<String> {
    let drawn = match documented_graph(architecture) {
        Ok(drawn) => drawn,
        Err(problem) => return vec![problem],
    };
    let graph: BTreeMap<&str, BTreeSet<&str>> = GRAPH
        .iter()
        .map(|(name, deps)| (*name, deps.iter().copied().collect()))
        .collect();
    let mut problems = Vec::new();
    for (name, deps) in &graph {
        match drawn.get(name) {
            None => problems.push(format!(
                "`{name}` is in the dependency graph of xtask/src/layering.rs but not in the table of {ARCHITECTURE}"
            )),
            Some(documented) if documented != deps => problems.push(format!(
                "{ARCHITECTURE} says `{name}` depends on {}, xtask/src/layering.rs says {}",
                list(documented),
                list(deps)
            )),
            Some(_) => {}
        }
    }
    for name in drawn.keys().filter(|name| !graph.contains_key(*name)) {
        problems.push(format!(
            "`{name}` is in the table of {ARCHITECTURE} but not in the dependency graph of xtask/src/layering.rs"
        ));
    }
    problems
}

/// The graph the table under [`TABLE_HEADING`] draws: each row names its crates in backticks in the second
/// column and the crates they depend on in backticks in the third (none for `—`).
fn documented_graph(architecture: &str) -> Result<BTreeMap<&str, BTreeSet<&str>>, String> {
    let Some(section) = architecture
        .split_once(&format!("\n{TABLE_HEADING}\n"))
        .map(|(_, section)| section)
    else {
        return Err(format!("{ARCHITECTURE} has no section `{TABLE_HEADING}`"));
    };
    let rows = section
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        // The header and the line under it.
        .skip(2);
    let mut drawn = BTreeMap::new();
    for row in rows {
        let cells: Vec<&str> = row.split('|').collect();
        let (Some(crates), Some(deps)) = (cells.get(2), cells.get(3)) else {
            return Err(format!(
                "{ARCHITECTURE}: a row of `{TABLE_HEADING}` has fewer than three columns: `{row}`"
            ));
        };
        let deps: BTreeSet<&str> = quoted(deps).collect();
        for name in quoted(crates) {
            if drawn.insert(name, deps.clone()).is_some() {
                return Err(format!(
                    "{ARCHITECTURE}: `{name}` has two rows in `{TABLE_HEADING}`"
                ));
            }
        }
    }
    if drawn.is_empty() {
        return Err(format!("{ARCHITECTURE}: no table under `{TABLE_HEADING}`"));
    }
    Ok(drawn)
}

/// The words between backticks in `text`.
fn quoted(text: &str) -> impl Iterator<Item = &str> {
    text.split('`').skip(1).step_by(2)
}

/// `{`a`, `b`}`, or `nothing`.
fn list(names: &BTreeSet<&str>) -> String {
    if names.is_empty() {
        return "nothing".to_owned();
    }
    let names: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
    format!("{{{}}}", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Metadata of a workspace of `crates` with the code edges `edges` (a kind of `Some("dev")` is a
    /// dev-dependency); any other name is a crate of a registry.
    fn metadata(crates: &[&str], edges: &[(&str, &str, Option<&str>)]) -> Value {
        let names: BTreeSet<&str> = crates
            .iter()
            .copied()
            .chain(edges.iter().flat_map(|(a, b, _)| [*a, *b]))
            .collect();
        let packages: Vec<Value> = names
            .iter()
            .map(|n| {
                let source = if crates.contains(n) {
                    Value::Null
                } else {
                    json!("registry")
                };
                json!({"id": n, "name": n, "source": source})
            })
            .collect();
        let nodes: Vec<Value> = names
            .iter()
            .map(|n| {
                let deps: Vec<Value> = edges
                    .iter()
                    .filter(|(a, _, _)| a == n)
                    .map(|(_, b, kind)| json!({"pkg": b, "dep_kinds": [{"kind": kind}]}))
                    .collect();
                json!({"id": n, "deps": deps})
            })
            .collect();
        json!({"packages": packages, "workspace_members": crates, "resolve": {"nodes": nodes}})
    }

    /// The crates of [`GRAPH`].
    fn crates() -> Vec<&'static str> {
        GRAPH.iter().map(|(name, _)| *name).collect()
    }

    /// The edges of [`GRAPH`], plus `extra`.
    fn edges<'a>(extra: &[(&'a str, &'a str, Option<&'a str>)]) -> Vec<(&'a str, &'a str, Option<&'a str>)> {
        GRAPH
            .iter()
            .flat_map(|(name, deps)| deps.iter().map(move |dep| (*name, *dep, None)))
            .chain(extra.iter().copied())
            .collect()
    }

    #[test]
    fn the_documented_graph_passes() {
        let problems = problems(&metadata(&crates(), &edges(&[]))).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
    }

    #[test]
    fn an_edge_the_graph_does_not_have_fails_even_down_the_layers() {
        // runtime-limits (L7) on bash-guard (L5) went down a total order of layers and passed; the graph has no
        // such edge.
        let forbidden = metadata(
            &crates(),
            &edges(&[("agent-runtime-limits", "agent-bash-guard", None)]),
        );
        assert_eq!(
            problems(&forbidden).unwrap(),
            [
                "`agent-runtime-limits` depends on `agent-bash-guard`, an edge the documented graph does not have \
              (docs/ARCHITECTURE.md, \"Layers and crates\")"
            ]
        );
        let sideways = metadata(&crates(), &edges(&[("agent-subagent", "agent-hooks", None)]));
        assert_eq!(problems(&sideways).unwrap().len(), 1);
        let up = metadata(&crates(), &edges(&[("agent-rules", "agent-core", None)]));
        assert_eq!(problems(&up).unwrap().len(), 1);
        let build = metadata(&crates(), &edges(&[("agent-rules", "agent-core", Some("build"))]));
        assert_eq!(problems(&build).unwrap().len(), 1, "a build dependency is code");
        let dev = metadata(&crates(), &edges(&[("agent-rules", "agent-core", Some("dev"))]));
        assert!(problems(&dev).unwrap().is_empty(), "a test may use any crate");
    }

    #[test]
    fn an_edge_the_code_no_longer_has_fails() {
        let all = edges(&[]);
        let fewer: Vec<_> = all
            .iter()
            .copied()
            .filter(|edge| *edge != ("agent-subagent", "agent-rules", None))
            .collect();
        assert_eq!(fewer.len() + 1, all.len());
        let problems = problems(&metadata(&crates(), &fewer)).unwrap();
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].starts_with("`agent-subagent` no longer depends on `agent-rules`"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_crate_missing_from_the_graph_fails() {
        let mut with_new = crates();
        with_new.push("agent-serve");
        let problems = problems(&metadata(
            &with_new,
            &edges(&[("agent-serve", "agent-tool-traits", None)]),
        ))
        .unwrap();
        assert_eq!(
            problems,
            ["workspace crate `agent-serve` is not in the dependency graph of xtask/src/layering.rs"]
        );
    }

    #[test]
    fn a_crate_of_the_graph_missing_from_the_workspace_fails() {
        let without: Vec<&str> = crates()
            .into_iter()
            .filter(|name| *name != "agent-guard-tests")
            .collect();
        let problems = problems(&metadata(&without, &edges(&[]))).unwrap();
        assert_eq!(
            problems,
            [
                "`agent-guard-tests` is in the dependency graph of xtask/src/layering.rs but not in the workspace"
            ]
        );
    }

    #[test]
    fn every_synchronous_crate_is_kept_from_async_runtimes_and_databases() {
        for name in SYNC_ONLY {
            let reaches = metadata(&crates(), &edges(&[(name, "mid", None), ("mid", "tokio", None)]));
            let problems = problems(&reaches).unwrap();
            assert!(
                problems.contains(&format!(
                    "`{name}` must stay synchronous but its dependencies reach `tokio`"
                )),
                "{problems:?}"
            );
            // The crates that stand on it reach tokio too; they are synchronous crates as well.
            assert!(
                problems.iter().all(|problem| SYNC_ONLY
                    .iter()
                    .any(|sync| problem.starts_with(&format!("`{sync}`")))),
                "{problems:?}"
            );
        }
        let hooks = metadata(
            &crates(),
            &edges(&[("agent-hooks", "sqlx", None), ("agent-core", "tokio", None)]),
        );
        assert!(
            problems(&hooks).unwrap().is_empty(),
            "the hook pipeline and the runtime are asynchronous"
        );
    }

    #[test]
    fn the_architecture_document_draws_the_graph() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(ARCHITECTURE);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(docs_problems(&text), Vec::<String>::new());
    }

    #[test]
    fn a_table_that_draws_another_graph_fails() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(ARCHITECTURE);
        let text = std::fs::read_to_string(&path).unwrap();
        let row = text
            .lines()
            .find(|line| line.contains("`agent-runtime-limits` (crates/runtime-limits)"))
            .unwrap();
        let wider = row.replace(
            "| `agent-tool-traits` |",
            "| `agent-tool-traits`, `agent-bash-guard` |",
        );
        assert_ne!(wider, row);
        let problems = docs_problems(&text.replace(row, &wider));
        assert_eq!(
            problems,
            [
                "docs/ARCHITECTURE.md says `agent-runtime-limits` depends on {`agent-bash-guard`, \
              `agent-tool-traits`}, xtask/src/layering.rs says {`agent-tool-traits`}"
            ]
        );
        let without = docs_problems(&text.replace(&format!("{row}\n"), ""));
        assert_eq!(
            without,
            [
                "`agent-runtime-limits` is in the dependency graph of xtask/src/layering.rs but not in the table of \
              docs/ARCHITECTURE.md"
            ]
        );
        assert_eq!(
            docs_problems("# Architecture\n"),
            ["docs/ARCHITECTURE.md has no section `## Layers and crates`"]
        );
    }
}
