//! Tests of config.rs.

use super::*;

fn settings(files: &[(Source, &str)]) -> (tempfile::TempDir, Settings) {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::new();
    for (i, (source, text)) in files.iter().enumerate() {
        let path = dir.path().join(format!("{i}.json"));
        std::fs::write(&path, text).unwrap();
        settings.add_file(&path, *source, dir.path()).unwrap();
    }
    (dir, settings)
}

#[test]
fn policy_tests_never_affect_loading() {
    for tests in ["[]", r#"[{"tool": "Bash"}]"#, r#"{"not": "a list"}"#, "7"] {
        let text = format!(r#"{{"agentGuard": {{"tests": {tests}}}}}"#);
        let (_dir, loaded) = settings(&[(Source::Project, &text)]);
        assert_eq!(
            GuardSettings::from_settings(&loaded).unwrap(),
            GuardSettings::default(),
            "{tests}"
        );
    }
}

fn problems(text: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(&path, text).unwrap();
    let shown = path.display().to_string();
    check_settings_file(&path)
        .iter()
        .map(|p| p.to_string().replacen(&shown, "s.json", 1))
        .collect()
}

#[test]
fn the_agent_guard_section_is_checked_with_positions_and_suggestions() {
    let text = "{\"agentGuard\": {\n  \"blockNetwrk\": false,\n  \"sandbox\": \"Off\",\n  \"sandboxEnv\": {\"kep\": []},\n  \"limits\": {\"maxStep\": 3}\n}}";
    assert_eq!(
        problems(text),
        [
            "s.json:2:3: unknown key `blockNetwrk` in `agentGuard`: did you mean `blockNetwork`?",
            "s.json:3:14: `agentGuard.sandbox` cannot be `\"Off\"`: expected one of `auto`, `required`, `off` (did you mean `off`?)",
            "s.json:4:18: unknown key `kep` in `agentGuard.sandboxEnv`: did you mean `keep`?",
            "s.json:5:14: unknown key `maxStep` in `agentGuard.limits`: did you mean `maxSteps`?",
        ]
    );
    assert_eq!(
        problems(r#"{"agentGuard": {"blockNetwork": "no"}}"#),
        ["s.json:1:33: `agentGuard.blockNetwork` must be a boolean, not `\"no\"`"]
    );
    assert_eq!(
        problems(r#"{"blockNetwork": false}"#),
        [
            "s.json:1:2: `blockNetwork` belongs inside `agentGuard`: write `\"agentGuard\": {\"blockNetwork\": …}`"
        ]
    );
    // The policy tests are `agent-guard test`'s to check; a good section passes.
    let good = r#"{"agentGuard": {"blockNetwork": false, "sandbox": "required", "tests": {"not": "a list"},
        "sandboxEnv": {"keep": ["X"]}, "limits": {"maxSteps": 4}, "commands": {"readOnly": ["x"]}}}"#;
    assert_eq!(problems(good), Vec::<String>::new());
}

#[test]
fn loading_refuses_what_the_check_finds_with_the_same_lines() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(".agent-guard/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, r#"{"agentGuard": {"sandbox": "Off"}}"#).unwrap();
    let discovery = Discovery {
        cwd: dir.path().into(),
        ..Discovery::default()
    };
    let err = discover_settings(&discovery).unwrap_err().to_string();
    let checked: Vec<String> = check_settings_file(&file)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(err, checked.join("; "));
    assert!(err.contains(":1:28: `agentGuard.sandbox` cannot be"), "{err}");
}

#[test]
fn a_repository_can_only_tighten_the_sandbox() {
    let off =
        r#"{"agentGuard": {"sandbox": "off", "sandboxEnv": {"keep": ["GITHUB_TOKEN"], "remove": ["X_*"]}}}"#;
    for source in [Source::Project, Source::Local] {
        let (_dir, loaded) = settings(&[(source, off)]);
        let merged = GuardSettings::from_settings(&loaded).unwrap();
        assert_eq!(merged.sandbox, SandboxMode::Auto, "{source}");
        assert!(merged.sandbox_env_keep.is_empty(), "{source}");
        assert_eq!(merged.sandbox_env_remove, vec!["X_*"], "{source}");
    }
    let (_dir, loaded) = settings(&[(Source::Project, r#"{"agentGuard": {"sandbox": "required"}}"#)]);
    assert_eq!(
        GuardSettings::from_settings(&loaded).unwrap().sandbox,
        SandboxMode::Required
    );
    // The user's own settings (and the command line, and a managed policy) decide freely.
    let (_dir, loaded) = settings(&[(Source::User, off)]);
    let merged = GuardSettings::from_settings(&loaded).unwrap();
    assert_eq!(merged.sandbox, SandboxMode::Off);
    assert_eq!(merged.sandbox_env_keep, vec!["GITHUB_TOKEN"]);
    // A repository cannot undo the user's `required` either: the highest source that may set it wins.
    let (_dir, loaded) = settings(&[
        (Source::Local, off),
        (Source::User, r#"{"agentGuard": {"sandbox": "required"}}"#),
    ]);
    assert_eq!(
        GuardSettings::from_settings(&loaded).unwrap().sandbox,
        SandboxMode::Required
    );
}

#[test]
fn the_sandbox_object_and_the_network_domains_are_read() {
    let text = r#"{"agentGuard": {"sandbox": {"mode": "required", "autoAllow": false, "memoryMax": "2GiB",
        "read": ["~/.config/app"], "env": ["MY_*"], "publish": [5173, "8000-8099", "3000"]},
        "network": {"allow": ["*.example.com"], "deny": ["pypi.org"]}}}"#;
    let (_dir, loaded) = settings(&[(Source::User, text)]);
    let merged = GuardSettings::from_settings(&loaded).unwrap();
    assert_eq!(merged.sandbox, SandboxMode::Required);
    assert_eq!(merged.auto_allow, Some(false));
    assert_eq!(merged.memory_max, Some(2 << 30));
    assert_eq!(merged.sandbox_read, ["~/.config/app"]);
    assert_eq!(merged.sandbox_env_pass, ["MY_*"]);
    let published: Vec<String> = merged.sandbox_publish.iter().map(ToString::to_string).collect();
    assert_eq!(published, ["5173", "8000-8099", "3000"]);
    assert!(merged.sandbox_publish.iter().any(|range| range.contains(8050)));
    assert!(!merged.sandbox_publish.iter().any(|range| range.contains(8100)));
    assert!(merged.network.allows("api.example.com", 443));
    assert!(merged.network.allows("crates.io", 443));
    assert!(!merged.network.allows("pypi.org", 443));
    // The short form still means the mode alone.
    let (_dir, loaded) = settings(&[(Source::User, r#"{"agentGuard": {"sandbox": "off"}}"#)]);
    let merged = GuardSettings::from_settings(&loaded).unwrap();
    assert_eq!(
        (merged.sandbox, merged.auto_allow, merged.memory_max),
        (SandboxMode::Off, None, None)
    );
}

#[test]
fn sizes_read_as_bytes_or_with_a_unit_and_bad_ones_are_named() {
    for (text, bytes) in [
        ("4096", 4096),
        ("\"512MiB\"", 512 << 20),
        ("\"4G\"", 4 << 30),
        ("\"1 tib\"", 1 << 40),
    ] {
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(parse_size(&value), Ok(bytes), "{text}");
    }
    for text in [
        "\"4 parsecs\"",
        "\"GiB\"",
        "0",
        "\"0M\"",
        "-1",
        "true",
        "\"99999999999T\"",
    ] {
        let value: Value = serde_json::from_str(text).unwrap();
        assert!(parse_size(&value).is_err(), "{text}");
    }
    let (_dir, loaded) = settings(&[(
        Source::User,
        r#"{"agentGuard": {"sandbox": {"memoryMax": "4 parsecs"}}}"#,
    )]);
    let err = GuardSettings::from_settings(&loaded).unwrap_err().to_string();
    assert!(
        err.contains("`agentGuard.sandbox.memoryMax`") && err.contains("`4 parsecs`"),
        "{err}"
    );
    let (_dir, loaded) = settings(&[(
        Source::User,
        r#"{"agentGuard": {"network": {"allow": ["10.0.0.1"]}}}"#,
    )]);
    let err = GuardSettings::from_settings(&loaded).unwrap_err().to_string();
    assert!(
        err.contains("`agentGuard.network.allow`") && err.contains("`10.0.0.1`"),
        "{err}"
    );
}

#[test]
fn a_repository_can_only_tighten_auto_allow_memory_reads_env_and_domains() {
    let loose = r#"{"agentGuard": {"sandbox": {"autoAllow": true, "memoryMax": "64GiB", "read": ["~"],
        "env": ["GITHUB_TOKEN"], "publish": [5432]}, "network": {"allow": ["evil.example"], "deny": ["rubygems.org"]}}}"#;
    let (_dir, loaded) = settings(&[
        (Source::Project, loose),
        (
            Source::User,
            r#"{"agentGuard": {"sandbox": {"memoryMax": "1GiB"}}}"#,
        ),
    ]);
    let merged = GuardSettings::from_settings(&loaded).unwrap();
    assert_eq!(merged.auto_allow, None);
    assert_eq!(merged.memory_max, Some(1 << 30));
    assert!(merged.sandbox_read.is_empty() && merged.sandbox_env_pass.is_empty());
    assert!(merged.sandbox_publish.is_empty());
    assert!(!merged.network.allows("evil.example", 443));
    assert!(!merged.network.allows("rubygems.org", 443));
    let tight = r#"{"agentGuard": {"sandbox": {"autoAllow": false, "memoryMax": "512MiB"}}}"#;
    let (_dir, loaded) = settings(&[
        (Source::Local, tight),
        (
            Source::User,
            r#"{"agentGuard": {"sandbox": {"autoAllow": true, "memoryMax": "1GiB"}}}"#,
        ),
    ]);
    let merged = GuardSettings::from_settings(&loaded).unwrap();
    assert_eq!(
        (merged.auto_allow, merged.memory_max),
        (Some(false), Some(512 << 20))
    );
}

#[test]
fn only_the_user_turns_telemetry_on_and_names_its_endpoint() {
    let on = r#"{"agentGuard": {"telemetry": {"enabled": true, "endpoint": "http://collector:4318"}}}"#;
    let (_dir, loaded) = settings(&[(Source::User, on)]);
    let telemetry = GuardSettings::from_settings(&loaded).unwrap().telemetry;
    assert!(telemetry.enabled);
    assert_eq!(telemetry.endpoint.as_deref(), Some("http://collector:4318"));
    let (_dir, loaded) = settings(&[(Source::Project, on)]);
    assert_eq!(
        GuardSettings::from_settings(&loaded).unwrap().telemetry,
        TelemetrySettings::default()
    );
    let off = r#"{"agentGuard": {"telemetry": {"enabled": false}}}"#;
    let (_dir, loaded) = settings(&[(Source::User, on), (Source::Local, off)]);
    assert!(!GuardSettings::from_settings(&loaded).unwrap().telemetry.enabled);
}

#[test]
fn a_repository_can_turn_undo_off_and_never_on() {
    let (_dir, loaded) = settings(&[
        (Source::Project, r#"{"agentGuard": {"undo": true}}"#),
        (Source::User, r#"{"agentGuard": {"undo": false}}"#),
    ]);
    assert_eq!(GuardSettings::from_settings(&loaded).unwrap().undo, Some(false));
    let (_dir, loaded) = settings(&[
        (Source::Local, r#"{"agentGuard": {"undo": false}}"#),
        (Source::User, r#"{"agentGuard": {"undo": true}}"#),
    ]);
    assert_eq!(GuardSettings::from_settings(&loaded).unwrap().undo, Some(false));
    let (_dir, loaded) = settings(&[(Source::Project, r#"{"agentGuard": {"undo": true}}"#)]);
    assert_eq!(GuardSettings::from_settings(&loaded).unwrap().undo, None);
}

#[test]
fn the_check_follows_the_form_of_the_sandbox_key() {
    assert_eq!(
        problems(r#"{"agentGuard": {"sandbox": {"autoAlow": true, "mode": "Off"}}}"#),
        [
            "s.json:1:29: unknown key `autoAlow` in `agentGuard.sandbox`: did you mean `autoAllow`?",
            "s.json:1:55: `agentGuard.sandbox.mode` cannot be `\"Off\"`: expected one of `auto`, `required`, `off` (did you mean `off`?)",
        ]
    );
    assert_eq!(
        problems(r#"{"agentGuard": {"sandbox": 3}}"#),
        ["s.json:1:28: `agentGuard.sandbox` must be a string or an object, not `3`"]
    );
    assert!(
        problems(r#"{"agentGuard": {"sandbox": {"autoAllow": false}, "network": {"allow": ["x.io"]}}}"#)
            .is_empty()
    );
}

#[test]
fn taint_settings_are_checked_and_a_repository_trusts_no_domain() {
    assert_eq!(
        problems(r#"{"agentGuard": {"taint": {"sorces": ["mcp__x__*"]}}}"#),
        ["s.json:1:27: unknown key `sorces` in `agentGuard.taint`: did you mean `sources`?"]
    );
    assert!(
        problems(
            r#"{"agentGuard": {"taint": {"sources": ["mcp__x__*"], "sinks": ["mcp__y__post"],
            "trustedDomains": ["docs.rs"]}}}"#
        )
        .is_empty()
    );
    let (_dir, loaded) = settings(&[
        (
            Source::Project,
            r#"{"agentGuard": {"taint": {"sinks": ["mcp__a__*"], "trustedDomains": ["evil.example"]}}}"#,
        ),
        (
            Source::User,
            r#"{"agentGuard": {"taint": {"sources": ["mcp__b__*"], "trustedDomains": ["docs.rs"]}}}"#,
        ),
    ]);
    let taint = GuardSettings::from_settings(&loaded).unwrap().taint;
    assert_eq!(taint.sources, ["mcp__b__*"]);
    assert_eq!(taint.sinks, ["mcp__a__*"]);
    let trusted: Vec<String> = taint.trusted_domains.iter().map(ToString::to_string).collect();
    assert_eq!(trusted, ["docs.rs"]);
    let (_dir, loaded) = settings(&[(Source::User, r#"{"agentGuard": {"taint": {"sinks": ["*"]}}}"#)]);
    let err = GuardSettings::from_settings(&loaded).unwrap_err().to_string();
    assert!(err.contains("agentGuard.taint.sinks"), "{err}");
}

/// What a repository's settings set that may only come from the user's is named, key by key; what tightens, or
/// may come from anywhere, is not.
#[test]
fn a_repository_setting_that_is_not_applied_is_named() {
    let loose = r#"{"agentGuard": {"blockNetwork": false, "sandbox": {"mode": "off", "autoAllow": false,
        "read": ["~/x"]}, "network": {"allow": ["x.example"], "deny": ["y.example"]}, "protectedPaths": ["d/**"]}}"#;
    let (_dir, loaded) = settings(&[(Source::Project, loose), (Source::User, r#"{"agentGuard": {}}"#)]);
    let named: Vec<String> = repository_settings_not_applied(&loaded)
        .into_iter()
        .map(|(file, why)| {
            assert!(file.ends_with("0.json"), "{}", file.display());
            why.split('`').nth(1).unwrap().to_owned()
        })
        .collect();
    assert_eq!(
        named,
        [
            "agentGuard.network.allow",
            "agentGuard.sandbox.mode",
            "agentGuard.sandbox.read"
        ]
    );
    // The same keys in the user's settings are applied, and tightening ones are never named.
    let (_dir, loaded) = settings(&[(Source::User, loose)]);
    assert!(repository_settings_not_applied(&loaded).is_empty());
    let tight =
        r#"{"agentGuard": {"sandbox": "required", "undo": false, "network": {"deny": ["y.example"]}}}"#;
    let (_dir, loaded) = settings(&[(Source::Project, tight)]);
    assert!(repository_settings_not_applied(&loaded).is_empty());
}
