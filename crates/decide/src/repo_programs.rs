//! The files inside a project that its git configuration names as programs git runs (a hooks directory of
//! `core.hooksPath`, an `fsmonitor`, a filter, a diff or merge driver, a pager or an editor): a write to one is a
//! write to code that runs later, outside any sandbox, when the user runs git, so it is protected like `.git/hooks`.
//!
//! The configuration is read as git writes it (sections, `key = value`, quotes); what cannot be read names nothing.
//! Hand-written: the few keys needed do not justify a configuration parser crate, and git itself is not run to
//! decide.

use std::path::{Path, PathBuf};

/// The keys whose value is a program (its first word) or, for `core.hooksPath`, a directory of programs; the
/// sections of filters, diff and merge drivers are matched by their first part (`filter "lfs"` is `filter`).
const PROGRAM_KEYS: &[(&str, &str)] = &[
    ("core", "hookspath"),
    ("core", "fsmonitor"),
    ("core", "sshcommand"),
    ("core", "editor"),
    ("core", "pager"),
    ("sequence", "editor"),
    ("gpg", "program"),
    ("gpg.ssh", "program"),
    ("credential", "helper"),
    ("filter", "clean"),
    ("filter", "smudge"),
    ("filter", "process"),
    ("diff", "textconv"),
    ("diff", "command"),
    ("diff", "external"),
    ("merge", "driver"),
    ("pager", "*"),
    ("alias", "*"),
];

/// The protected-path patterns (anchored at `root`, `./…`, which covers what lies beneath) of the files below
/// `root` that the git configuration of the repository at `root` names as programs.
pub(crate) fn protected_patterns(root: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(root.join(".git/config")) else {
        return Vec::new();
    };
    let mut patterns = Vec::new();
    for place in named_programs(&text) {
        let path = if place.is_absolute() {
            match place.strip_prefix(root) {
                Ok(inside) => inside.to_path_buf(),
                Err(_) => continue,
            }
        } else {
            place
        };
        let relative = normalize(&path);
        if relative.as_os_str().is_empty() {
            continue;
        }
        // A name is matched as written: the glob characters in it are escaped.
        let literal: String = relative
            .to_string_lossy()
            .chars()
            .flat_map(|c| {
                let escape = matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\' | '!');
                escape.then_some('\\').into_iter().chain(std::iter::once(c))
            })
            .collect();
        // `./` anchors a protected-path pattern at its root; what lies beneath a match is covered with it.
        patterns.push(format!("./{literal}"));
    }
    patterns
}

/// The places the configuration text names as programs: each value's first word that is a path (holds a `/` or
/// starts with `.`), `core.hooksPath` whole.
fn named_programs(text: &str) -> Vec<PathBuf> {
    let mut section = String::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[').and_then(|rest| rest.split(']').next()) {
            // `[filter "lfs"]` and `[filter.lfs]` are both in `filter`; `[gpg "ssh"]` is `gpg.ssh`.
            let mut parts = header
                .split(|c: char| c == '"' || c.is_whitespace())
                .filter(|p| !p.is_empty());
            let first = parts.next().unwrap_or_default().to_ascii_lowercase();
            section = match (first.as_str(), parts.next()) {
                ("gpg", Some(sub)) => format!("gpg.{}", sub.to_ascii_lowercase()),
                _ => first.split('.').next().unwrap_or_default().to_owned(),
            };
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        let named = PROGRAM_KEYS
            .iter()
            .any(|(s, k)| *s == section && (*k == "*" || *k == key));
        if !named {
            continue;
        }
        let value = value.trim().trim_matches('"');
        let value = value.strip_prefix('!').unwrap_or(value).trim();
        let first = if key == "hookspath" {
            value
        } else {
            value.split_whitespace().next().unwrap_or_default()
        };
        // `core.hooksPath` is a directory whatever it looks like; a program's word is a path when it says so.
        if (key == "hookspath" && !first.is_empty()) || first.contains('/') || first.starts_with('.') {
            out.push(PathBuf::from(first));
        }
    }
    out
}

/// `path` without `.` components and leading `./`; `..` keeps it out (it leaves the root).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::Normal(name) => out.push(name),
            std::path::Component::CurDir => {}
            _ => return PathBuf::new(),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_programs_a_repository_configures_inside_it_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        let config = format!(
            "[core]\n\trepositoryformatversion = 0\n\thooksPath = .githooks\n\tfsmonitor = ./tools/watch.sh\n\
             [filter \"x\"]\n\tclean = scripts/clean --fast\n[alias]\n\tst = status\n\tsync = !./bin/sync\n\
             [diff \"img\"]\n\ttextconv = {}/conv.sh\n[pager]\n\tlog = /usr/bin/less\n\
             [merge \"m\"]\n\tdriver = ../outside.sh %O\n",
            root.display()
        );
        std::fs::write(root.join(".git/config"), config).unwrap();
        let patterns = protected_patterns(root);
        for expected in [
            "./.githooks",
            "./tools/watch.sh",
            "./scripts/clean",
            "./bin/sync",
            "./conv.sh",
        ] {
            assert!(patterns.iter().any(|p| p == expected), "{expected}: {patterns:?}");
        }
        // A program outside the root, a plain word and a path that leaves the root name nothing here.
        assert!(
            !patterns
                .iter()
                .any(|p| p.contains("less") || p.contains("status") || p.contains("outside"))
        );
    }

    #[test]
    fn a_name_with_glob_characters_is_matched_as_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(
            dir.path().join(".git/config"),
            "[core]\n\thooksPath = hooks[1]*\n",
        )
        .unwrap();
        let patterns = protected_patterns(dir.path());
        assert_eq!(patterns.first().map(String::as_str), Some("./hooks\\[1\\]\\*"));
        agent_fs_sandbox::ProtectedPaths::default()
            .with_extra_writes(&patterns)
            .unwrap();
    }

    #[test]
    fn no_configuration_names_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert!(protected_patterns(dir.path()).is_empty());
    }
}
