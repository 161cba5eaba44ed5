//! The checked-in JSON Schema of settings files (docs/settings.schema.json) is the one the code generates.
//! `UPDATE_SCHEMA=1 cargo test -p agent-decide --test schema` rewrites it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[test]
fn settings_schema_is_fresh() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/settings.schema.json");
    let generated = serde_json::to_string_pretty(&agent_decide::settings_schema()).unwrap() + "\n";
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(path, &generated).unwrap();
    }
    let checked_in = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "docs/settings.schema.json is stale: run `UPDATE_SCHEMA=1 cargo test -p agent-decide --test schema`"
    );
    let schema: serde_json::Value = serde_json::from_str(&generated).unwrap();
    for key in ["permissions", "agentGuard", "hooks"] {
        assert!(schema["properties"][key].is_object(), "{key}");
    }
    assert!(schema["properties"]["agentGuard"]["properties"]["blockNetwork"].is_object());
}
