//! The layering check: no crate depends on a higher layer, and the synchronous layers pull in no async runtime
//! and no database, read from `cargo metadata`.

#![expect(
    clippy::indexing_slicing,
    reason = "indexing a serde_json::Value yields Null instead of panicking"
)]

use std::collections::{BTreeSet, HashMap};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// The project's crates by layer; a crate may depend only on crates of a lower layer.
const LAYERS: &[(&str, u8)] = &[
    ("agent-tool-traits", 1),
    ("agent-rules", 2),
    ("agent-hooks", 3),
    ("agent-fs-sandbox", 4),
    ("agent-os-sandbox", 4),
    ("agent-bash-guard", 5),
    ("agent-subagent", 6),
    ("agent-runtime-limits", 7),
    ("agent-core", 8),
    ("agent-guard", 9),
    ("agent-guard-tests", 10),
    ("agent-guard-benches", 10),
    ("xtask", 10),
];

/// Crates that must stay synchronous and database-free, and the packages they must not reach.
const SYNC_ONLY: &[&str] = &[
    "agent-tool-traits",
    "agent-rules",
    "agent-fs-sandbox",
    "agent-os-sandbox",
    "agent-bash-guard",
];
const FORBIDDEN_IN_SYNC: &[&str] = &[
    "tokio",
    "sqlx",
    "sqlx-core",
    "async-std",
    "smol",
    "rusqlite",
    "diesel",
];

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
    let problems = problems(&metadata)?;
    if problems.is_empty() {
        eprintln!(
            "layering: every edge goes down a layer; the synchronous layers reach no async runtime or database"
        );
        Ok(())
    } else {
        for problem in &problems {
            eprintln!("layering: {problem}");
        }
        bail!("{} layering problem(s)", problems.len())
    }
}

fn problems(metadata: &Value) -> Result<Vec<String>> {
    let packages = metadata["packages"]
        .as_array()
        .context("no `packages` in cargo metadata")?;
    let name_of: HashMap<&str, &str> = packages
        .iter()
        .filter_map(|p| Some((p["id"].as_str()?, p["name"].as_str()?)))
        .collect();
    let nodes = metadata["resolve"]["nodes"]
        .as_array()
        .context("no `resolve.nodes` in cargo metadata")?;
    // Normal (non-dev, non-build) dependency edges by package id.
    let mut normal: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut all_edges: Vec<(&str, &str, bool)> = Vec::new();
    for node in nodes {
        let Some(id) = node["id"].as_str() else { continue };
        for dep in node["deps"].as_array().into_iter().flatten() {
            let Some(dep_id) = dep["pkg"].as_str() else {
                continue;
            };
            let kinds = dep["dep_kinds"].as_array().cloned().unwrap_or_default();
            let is_normal = kinds.iter().any(|k| k["kind"].is_null());
            if is_normal {
                normal.entry(id).or_default().push(dep_id);
            }
            all_edges.push((id, dep_id, is_normal));
        }
    }
    let layer: HashMap<&str, u8> = LAYERS.iter().copied().collect();
    let mut problems = Vec::new();
    for (from, to, is_normal) in &all_edges {
        let (Some(from_name), Some(to_name)) = (name_of.get(from), name_of.get(to)) else {
            continue;
        };
        let (Some(from_layer), Some(to_layer)) = (layer.get(from_name), layer.get(to_name)) else {
            if to_name.starts_with("agent-") && layer.contains_key(from_name) && !layer.contains_key(to_name)
            {
                problems.push(format!(
                    "`{to_name}` is not in the layer table of xtask/src/layering.rs"
                ));
            }
            continue;
        };
        // Dev-dependencies may reach up for tests, but never sideways into a crate's own layer or above for normal
        // code.
        if *is_normal && to_layer >= from_layer {
            problems.push(format!(
                "`{from_name}` (layer {from_layer}) depends on `{to_name}` (layer {to_layer})"
            ));
        }
    }
    for package in packages {
        let (Some(id), Some(name)) = (package["id"].as_str(), package["name"].as_str()) else {
            continue;
        };
        if !layer.contains_key(name) && package["source"].is_null() {
            problems.push(format!(
                "workspace crate `{name}` is not in the layer table of xtask/src/layering.rs"
            ));
        }
        if !SYNC_ONLY.contains(&name) {
            continue;
        }
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut stack = vec![id];
        while let Some(current) = stack.pop() {
            for dep in normal.get(current).into_iter().flatten() {
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
    problems.sort();
    problems.dedup();
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn metadata(edges: &[(&str, &str, Option<&str>)]) -> Value {
        let names: BTreeSet<&str> = edges.iter().flat_map(|(a, b, _)| [*a, *b]).collect();
        let packages: Vec<Value> = names
            .iter()
            .map(|n| json!({"id": n, "name": n, "source": if n.starts_with("agent") { Value::Null } else { json!("registry") }}))
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
        json!({"packages": packages, "resolve": {"nodes": nodes}})
    }

    #[test]
    fn upward_edges_and_async_in_sync_layers_are_problems() {
        let ok = metadata(&[
            ("agent-rules", "agent-tool-traits", None),
            ("agent-core", "agent-rules", None),
        ]);
        assert!(problems(&ok).unwrap().is_empty());
        let up = metadata(&[("agent-rules", "agent-core", None)]);
        assert_eq!(problems(&up).unwrap().len(), 1);
        let dev_up = metadata(&[("agent-rules", "agent-core", Some("dev"))]);
        assert!(
            problems(&dev_up).unwrap().is_empty(),
            "dev-dependencies may reach up"
        );
        let tokio = metadata(&[("agent-rules", "mid", None), ("mid", "tokio", None)]);
        assert!(problems(&tokio).unwrap().iter().any(|p| p.contains("tokio")));
    }
}
