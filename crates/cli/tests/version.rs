//! `agent-guard --version`: the version, the commit and the build profile.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::process::Command;

#[test]
fn version_names_the_commit_and_the_profile() {
    for flag in ["--version", "-V"] {
        let out = Command::new(env!("CARGO_BIN_EXE_agent-guard"))
            .arg(flag)
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let rest = text
            .trim()
            .strip_prefix(concat!("agent-guard ", env!("CARGO_PKG_VERSION"), " (commit "))
            .unwrap_or_else(|| panic!("{text}"));
        let (commit, profile) = rest.split_once(", ").unwrap_or_else(|| panic!("{text}"));
        let hash = commit.strip_suffix("+dirty").unwrap_or(commit);
        assert!(
            hash == "unknown" || (hash.len() == 12 && hash.bytes().all(|b| b.is_ascii_hexdigit())),
            "{text}"
        );
        let profile = profile
            .strip_suffix(" build)")
            .unwrap_or_else(|| panic!("{text}"));
        let expected = if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        };
        assert_eq!(profile, expected, "{text}");
    }
}
