//! Fuzz `BashGuard::analyze` on arbitrary UTF-8: it must never panic, and its verdict must follow its findings.

#![no_main]

use std::sync::OnceLock;

use agent_bash_guard::{BashConfig, BashGuard};
use agent_tool_traits::Decision;
use libfuzzer_sys::fuzz_target;

mod shared;

fn guard() -> &'static BashGuard {
    static GUARD: OnceLock<BashGuard> = OnceLock::new();
    GUARD.get_or_init(|| {
        shared::tolerate_parser_panics();
        BashGuard::new(BashConfig { block_network: Some(true), ..BashConfig::default() })
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(command) = std::str::from_utf8(data) else { return };
    let analysis = guard().analyze(command);
    let verdict = analysis.verdict();
    let denied = analysis.findings.iter().any(|f| f.decision == Decision::Deny);
    assert_eq!(verdict.decision == Decision::Deny, denied);
    if analysis.parse_error.is_some() {
        assert_ne!(verdict.decision, Decision::Allow);
    }
    for command in &analysis.commands {
        assert!(command.inner < command.argv.len().max(1));
        if let Some(parent) = command.location.parent {
            assert!(parent < analysis.commands.len());
        }
    }
});
