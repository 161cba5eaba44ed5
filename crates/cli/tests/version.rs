//! `agent-guard --version`: the version, the commit, the build profile and the linkage.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

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
        let (profile, linkage) = profile
            .strip_suffix(')')
            .and_then(|rest| rest.split_once(" build, "))
            .unwrap_or_else(|| panic!("{text}"));
        // The linkage said is the binary's: a static executable has no program interpreter.
        let interpreter = has_interpreter(env!("CARGO_BIN_EXE_agent-guard"));
        match linkage {
            "statically linked" => assert!(!interpreter, "{text}"),
            "dynamically linked" => assert!(interpreter, "{text}"),
            other => panic!("linkage `{other}` in {text}"),
        }
        let expected = if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        };
        assert_eq!(profile, expected, "{text}");
    }
}

/// Whether the 64-bit little-endian ELF file at `path` names a program interpreter (a `PT_INTERP` header), which
/// every dynamically linked executable does.
fn has_interpreter(path: &str) -> bool {
    const PT_INTERP: u32 = 3;
    let elf = std::fs::read(path).unwrap();
    assert_eq!(
        &elf[..6],
        b"\x7fELF\x02\x01",
        "not a 64-bit little-endian ELF file"
    );
    let u16_at = |at: usize| usize::from(u16::from_le_bytes(elf[at..at + 2].try_into().unwrap()));
    let phoff = usize::try_from(u64::from_le_bytes(elf[0x20..0x28].try_into().unwrap())).unwrap();
    let (size, count) = (u16_at(0x36), u16_at(0x38));
    (0..count).any(|i| {
        let at = phoff + i * size;
        u32::from_le_bytes(elf[at..at + 4].try_into().unwrap()) == PT_INTERP
    })
}

/// On Linux with glibc and its static archives (the machines CI runs on), the hook's binary is linked statically:
/// it starts once per tool call, and a dynamic start costs more than the decision.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_binary_is_linked_statically_where_glibc_allows() {
    let archives_present = ["libc.a", "libgcc_eh.a"].iter().all(|archive| {
        let out = Command::new("cc")
            .arg(format!("-print-file-name={archive}"))
            .output()
            .unwrap();
        std::path::Path::new(String::from_utf8(out.stdout).unwrap().trim()).is_absolute()
    });
    // `AGENT_GUARD_LINKAGE=dynamic` in the environment of the build asks for a dynamic binary.
    if archives_present && option_env!("AGENT_GUARD_LINKAGE") != Some("dynamic") {
        assert!(!has_interpreter(env!("CARGO_BIN_EXE_agent-guard")));
    }
}
