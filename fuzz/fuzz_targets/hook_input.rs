//! Fuzz the PreToolUse hook input parser and one decision on what it accepts.

#![no_main]

use std::sync::OnceLock;

use agent_decide::{Guard, GuardOptions, HookInput, HookOutput};
use agent_rules::Settings;
use libfuzzer_sys::fuzz_target;

mod shared;

fn guard() -> &'static Guard {
    static GUARD: OnceLock<Guard> = OnceLock::new();
    GUARD.get_or_init(|| {
        // Shell commands in the input reach bash-guard, which catches the parser's panics.
        shared::tolerate_parser_panics();
        let cwd = std::env::temp_dir();
        let options = GuardOptions { cwd, ..GuardOptions::default() };
        Guard::new(&Settings::new(), &options).unwrap_or_else(|e| panic!("{e}"))
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(input) = HookInput::parse(text) else { return };
    let decided = guard().decide(&input.tool_name, &input.tool_input);
    let line = HookOutput::from_verdict(decided.verdict()).to_json();
    assert!(line.starts_with("{\"hookSpecificOutput\""));
});
