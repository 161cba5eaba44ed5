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
    ("core", "askpass"),
    ("core", "gitproxy"),
    ("remote", "uploadpack"),
    ("remote", "receivepack"),
    ("difftool", "cmd"),
    ("mergetool", "cmd"),
    ("browser", "cmd"),
    ("man", "cmd"),
    ("uploadpack", "packobjectshook"),
];

/// The protected-path patterns (anchored at `root`, `./…`, which covers what lies beneath) of the files below
/// `root` that git's configuration for the repository at `root` names as programs: the repository's own
/// configuration with the files it includes (which, inside the root, are protected too), and the user's global
/// configuration (`~/.gitconfig`, `~/.config/git/config`), whose relative places are relative to the repository.
pub(crate) fn protected_patterns(root: &Path, home: Option<&Path>) -> Vec<String> {
    let mut places = Vec::new();
    let mut files: Vec<PathBuf> = vec![root.join(".git/config")];
    if let Some(home) = home {
        files.push(home.join(".gitconfig"));
        files.push(home.join(".config/git/config"));
    }
    // Included files are followed one level: an include of an include is rare, and each level is read here.
    let mut included = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let named = named_programs(&text);
        places.extend(named.programs);
        for include in named.includes {
            let base = file.parent().unwrap_or(root);
            let path = if include.is_absolute() {
                include
            } else {
                base.join(include)
            };
            places.push(path.clone());
            included.push(path);
        }
    }
    for file in &included {
        if let Ok(text) = std::fs::read_to_string(file) {
            places.extend(named_programs(&text).programs);
        }
    }
    let mut patterns = Vec::new();
    for place in places {
        let absolute = normalize(&root.join(place));
        let Ok(relative) = absolute.strip_prefix(root) else {
            continue;
        };
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

/// What a configuration text names: programs, and files it includes.
#[derive(Debug, Default)]
struct Named {
    programs: Vec<PathBuf>,
    includes: Vec<PathBuf>,
}

/// Whether the configuration key `key` as `git config` names it (`core.fsmonitor`, `alias.st`,
/// `filter.lfs.clean`, `include.path`) makes git run a program or read more configuration.
pub(crate) fn is_program_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let section = key.split('.').next().unwrap_or_default();
    let name = key.rsplit('.').next().unwrap_or_default();
    let section = if section == "gpg" && key.matches('.').count() == 2 {
        key.rsplit_once('.').map_or(section, |(head, _)| head)
    } else {
        section
    };
    matches!(section, "include" | "includeif")
        || PROGRAM_KEYS
            .iter()
            .any(|(s, k)| *s == section && (*k == "*" || *k == name))
}

/// The places the configuration text names as programs: each word of a value that is a path (holds a `/` or
/// starts with `.`: `sh scripts/fsm.sh` names the script), `core.hooksPath` whole; and the files its `include` and
/// `includeIf` sections include.
fn named_programs(text: &str) -> Named {
    let mut section = String::new();
    let mut out = Named::default();
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
        if matches!(section.as_str(), "include" | "includeif") && key == "path" {
            let value = value.trim().trim_matches('"');
            if !value.is_empty() && !value.starts_with('~') {
                out.includes.push(PathBuf::from(value));
            }
            continue;
        }
        let named = PROGRAM_KEYS
            .iter()
            .any(|(s, k)| *s == section && (*k == "*" || *k == key));
        if !named {
            continue;
        }
        let value = value.trim().trim_matches('"');
        let value = value.strip_prefix('!').unwrap_or(value).trim();
        // `core.hooksPath` is a directory whatever it looks like; a program's word is a path when it says so.
        if key == "hookspath" {
            if !value.is_empty() {
                out.programs.push(PathBuf::from(value));
            }
            continue;
        }
        for word in value.split_whitespace() {
            let word = word.trim_matches(|c| c == '\'' || c == '"' || c == ';');
            if word.contains('/') || (word.starts_with('.') && word.len() > 1) {
                out.programs.push(PathBuf::from(word));
            }
        }
    }
    out
}

/// The absolute `path` with `.` and `..` taken lexically (a configuration names places as text).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
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
        let patterns = protected_patterns(root, None);
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
        let patterns = protected_patterns(dir.path(), None);
        assert_eq!(patterns.first().map(String::as_str), Some("./hooks\\[1\\]\\*"));
        agent_fs_sandbox::ProtectedPaths::default()
            .with_extra_writes(&patterns)
            .unwrap();
    }

    #[test]
    fn no_configuration_names_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert!(protected_patterns(dir.path(), None).is_empty());
    }

    #[test]
    fn every_path_word_an_included_file_and_the_users_configuration_count() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        let home = dir.path().join("home");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            root.join(".git/config"),
            "[core]\n\tfsmonitor = sh scripts/fsm.sh --fast\n[include]\n\tpath = ../.gitconfig.proj\n",
        )
        .unwrap();
        std::fs::write(
            root.join(".gitconfig.proj"),
            "[filter \"x\"]\n\tclean = python3 tools/clean.py\n",
        )
        .unwrap();
        std::fs::write(home.join(".gitconfig"), "[core]\n\thooksPath = .githooks\n").unwrap();
        let patterns = protected_patterns(&root, Some(&home));
        for expected in [
            "./scripts/fsm.sh",
            "./.gitconfig.proj",
            "./tools/clean.py",
            "./.githooks",
        ] {
            assert!(patterns.iter().any(|p| p == expected), "{expected}: {patterns:?}");
        }
        assert!(
            !patterns.iter().any(|p| p.contains("--fast") || p == "./sh"),
            "{patterns:?}"
        );
    }
}
