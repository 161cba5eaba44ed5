//! What a test does when the machine lacks something it needs (a kernel that enforces the sandbox, a PostgreSQL
//! server, a browser): it prints `skipped: <test> needs <what>: <why>` where the person running the tests sees it,
//! and returns; or, where the need's environment switch is `1`, it fails. `cargo xtask ci` sets each switch where
//! the thing is present (it installs PostgreSQL and Chromium, and asks `agent-guard sandbox --probe` whether the
//! kernel enforces the sandbox), so a green CI run has run every such test instead of skipping it.
//!
//! Only std is used, so that any test binary of the workspace can include this file with `#[path]`; it is not a
//! part of the scenarios binary of the package it sits in.

#![allow(dead_code, clippy::panic)]

use std::io::Write as _;

/// Something tests need from the machine, and the environment switch that makes its absence a failure.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Need {
    /// What is needed, as the messages name it.
    what: &'static str,
    /// The environment variable that, set to `1`, makes a missing [`Need::what`] fail the test.
    pub(crate) switch: &'static str,
}

/// A kernel that enforces the sandbox (Landlock and seccomp), as `agent-guard sandbox --probe` reports it.
pub(crate) const SANDBOX: Need = Need {
    what: "a kernel that enforces the sandbox",
    switch: "AGENT_GUARD_REQUIRE_SANDBOX",
};

/// A PostgreSQL server installation (`initdb` and `pg_ctl`), for a throwaway server per test binary.
pub(crate) const POSTGRES: Need = Need {
    what: "a PostgreSQL server",
    switch: "AGENT_GUARD_REQUIRE_POSTGRES",
};

/// Debian's Chromium, which the test of the server's page drives.
pub(crate) const CHROMIUM: Need = Need {
    what: "Chromium",
    switch: "AGENT_GUARD_REQUIRE_CHROMIUM",
};

/// What a test does about one of its needs.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// The need is met: the test goes on.
    Run,
    /// The need is missing and not required: this line is printed and the test returns.
    Skip(String),
    /// The need is missing although its switch requires it: the test fails with this message.
    Fail(String),
}

impl Need {
    /// Whether the test may go on: `true` when `missing` (why the need is not met) is `None`. Otherwise it prints
    /// why the test is skipped and returns `false`, or, when the switch is `1`, fails the test.
    ///
    /// # Panics
    /// When `missing` is `Some` and the switch is `1`.
    pub(crate) fn met(self, missing: Option<String>) -> bool {
        let switch = std::env::var(self.switch).ok();
        match self.outcome(&current_test(), missing, switch.as_deref()) {
            Outcome::Run => true,
            Outcome::Skip(line) => {
                say(&line);
                false
            }
            Outcome::Fail(message) => panic!("{message}"),
        }
    }

    fn outcome(self, test: &str, missing: Option<String>, switch: Option<&str>) -> Outcome {
        let Some(why) = missing else {
            return Outcome::Run;
        };
        let Self { what, switch: name } = self;
        if switch == Some("1") {
            Outcome::Fail(format!(
                "{test} needs {what}, which {name}=1 requires, but {why}; provide it or unset {name}"
            ))
        } else {
            Outcome::Skip(format!(
                "skipped: {test} needs {what}: {why} (set {name}=1 to make this a failure)"
            ))
        }
    }
}

/// Prints `skipped: <test>: <why>` for a test that returns without testing for a reason no switch governs (an
/// opt-in run against a live service).
pub(crate) fn skip(why: &str) {
    say(&format!("skipped: {}: {why}", current_test()));
}

/// Writes `line` to the standard error stream itself: libtest captures `eprintln!` of a test that passes.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The running test's name (libtest names its thread after it), else its binary's without cargo's hash (a test
/// binary without libtest's harness runs on the main thread).
fn current_test() -> String {
    let thread = std::thread::current();
    match thread.name() {
        Some(name) if name != "main" => name.to_owned(),
        _ => std::env::current_exe()
            .ok()
            .and_then(|exe| exe.file_stem().map(|name| name.to_string_lossy().into_owned()))
            .map(|name| match name.rsplit_once('-') {
                Some((binary, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
                    binary.to_owned()
                }
                _ => name,
            })
            .unwrap_or_else(|| "a test".to_owned()),
    }
}

/// What `BIN sandbox --probe` prints, and what in it stands in the way of enforcement: `None` when the kernel
/// enforces the sandbox here.
pub(crate) fn sandbox_probe(bin: &str) -> (String, Option<String>) {
    let probe = match std::process::Command::new(bin)
        .args(["sandbox", "--probe"])
        .output()
    {
        Ok(probe) => probe,
        Err(error) => {
            return (
                String::new(),
                Some(format!("cannot run `{bin} sandbox --probe`: {error}")),
            );
        }
    };
    let report = String::from_utf8_lossy(&probe.stdout).into_owned();
    let missing = if !probe.status.success() {
        Some(format!("`sandbox --probe` failed ({}): {report}", probe.status))
    } else {
        match report.lines().find_map(|line| line.strip_prefix("enforcement: ")) {
            Some(enforcement) if enforcement.contains("under the kernel sandbox") => None,
            Some(enforcement) => Some(format!("`sandbox --probe` says enforcement: {enforcement}")),
            None => Some(format!(
                "`sandbox --probe` printed no `enforcement:` line: {report}"
            )),
        }
    };
    (report, missing)
}

/// `BIN sandbox --probe`'s report when the kernel enforces the sandbox here; else `None`, after [`Need::met`]
/// said why the test is skipped (or failed it under [`SANDBOX`]'s switch).
pub(crate) fn sandbox_report(bin: &str) -> Option<String> {
    let (report, missing) = sandbox_probe(bin);
    SANDBOX.met(missing).then_some(report)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_missing_need_skips_unless_its_switch_requires_it() {
        // Imported here: a bench that includes this file is built with `cfg(test)` but without its tests.
        use super::{Outcome, SANDBOX};
        assert_eq!(SANDBOX.outcome("t", None, Some("1")), Outcome::Run);
        assert_eq!(SANDBOX.outcome("t", None, None), Outcome::Run);
        let why = || Some("the kernel has no Landlock".to_owned());
        assert_eq!(
            SANDBOX.outcome("t", why(), None),
            Outcome::Skip(
                "skipped: t needs a kernel that enforces the sandbox: the kernel has no Landlock (set \
                 AGENT_GUARD_REQUIRE_SANDBOX=1 to make this a failure)"
                    .to_owned()
            )
        );
        // Only `1` requires: a switch set to anything else is not a promise that the thing is here.
        assert!(matches!(SANDBOX.outcome("t", why(), Some("0")), Outcome::Skip(_)));
        assert_eq!(
            SANDBOX.outcome("t", why(), Some("1")),
            Outcome::Fail(
                "t needs a kernel that enforces the sandbox, which AGENT_GUARD_REQUIRE_SANDBOX=1 requires, but \
                 the kernel has no Landlock; provide it or unset AGENT_GUARD_REQUIRE_SANDBOX"
                    .to_owned()
            )
        );
    }
}
