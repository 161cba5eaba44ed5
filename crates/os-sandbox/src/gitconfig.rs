//! git's identity without `~/.gitconfig`: the few keys a sandboxed git needs, read from the user's global
//! configuration outside the sandbox and written into a minimal file the command's `GIT_CONFIG_GLOBAL` names.
//!
//! The global configuration is not granted to a sandboxed command: it can hold a token (`http.extraHeader`, a
//! credential helper's arguments, a URL with a password in `url.*.insteadOf`) and settings that run programs.
//! What git needs of it to commit is the author's name and e-mail; the generated file carries those, the default
//! branch and the directories marked safe, nothing else.

use std::path::{Path, PathBuf};

/// The keys carried over, as git compares them (section and key names in lower case). A key not listed here
/// never reaches the command.
const CARRIED: &[&str] = &[
    "user.name",
    "user.email",
    "author.name",
    "author.email",
    "committer.name",
    "committer.email",
    "init.defaultbranch",
    "safe.directory",
];

/// Keys that may be given many times; of the others the last value holds, as in git.
const MULTI_VALUED: &[&str] = &["safe.directory"];

/// How deep `include.path` is followed (git's own bound is 10).
const MAX_INCLUDE_DEPTH: usize = 10;

/// The largest configuration file read.
const MAX_FILE: u64 = 1024 * 1024;

/// The generated global configuration of a sandboxed git: the carried keys of the user's global configuration
/// (`$GIT_CONFIG_GLOBAL` when this process has it, else `$XDG_CONFIG_HOME/git/config` and `~/.gitconfig`, with
/// their unconditional `include.path` files), in git's configuration syntax. Conditional includes
/// (`includeIf`) are not followed: an identity chosen by a condition comes from the repository's own
/// configuration, or not at all. It also sets `safe.bareRepository = explicit`: a sandboxed git uses a bare
/// repository only where `--git-dir` or `GIT_DIR` names it, so that a directory a command made to look like one
/// (`HEAD`, `objects`, `refs` and a `config` of its own, with `core.hooksPath` or an alias) is not found by a later
/// `git commit` run in it, which would run that configuration's programs while the project's `.git` is writable.
/// git reads the key only from the global, system and command-line configuration, never from a repository's.
pub(crate) fn generated(home: Option<&Path>) -> String {
    let mut values: Vec<(String, String)> = Vec::new();
    for file in global_files(home) {
        read_into(&file, home, 0, &mut values);
    }
    values.push(("safe.bareRepository".to_owned(), "explicit".to_owned()));
    render(&values)
}

/// The files of the user's global configuration, in the order git reads them (a later value wins).
fn global_files(home: Option<&Path>) -> Vec<PathBuf> {
    if let Some(global) = std::env::var_os("GIT_CONFIG_GLOBAL") {
        return vec![PathBuf::from(global)];
    }
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| home.map(|home| home.join(".config")))
        .map(|dir| dir.join("git/config"));
    xdg.into_iter()
        .chain(home.map(|home| home.join(".gitconfig")))
        .collect()
}

/// Reads the carried keys of `file` into `values`, following its `include.path` entries where they stand.
fn read_into(file: &Path, home: Option<&Path>, depth: usize, values: &mut Vec<(String, String)>) {
    if depth > MAX_INCLUDE_DEPTH {
        return;
    }
    let Ok(meta) = std::fs::metadata(file) else {
        return;
    };
    if !meta.is_file() || meta.len() > MAX_FILE {
        return;
    }
    let Ok(text) = std::fs::read_to_string(file) else {
        return;
    };
    let mut section = String::new();
    for line in text.lines() {
        let line = line.trim_start();
        if let Some(header) = line.strip_prefix('[') {
            section = section_name(header);
            continue;
        }
        let Some((key, value)) = entry(line) else {
            continue;
        };
        let name = format!("{section}.{key}");
        if name == "include.path" {
            let included = expand(&value, file, home);
            read_into(&included, home, depth + 1, values);
        } else if CARRIED.contains(&name.as_str()) {
            if !MULTI_VALUED.contains(&name.as_str()) {
                values.retain(|(k, _)| *k != name);
            }
            values.push((name, value));
        }
    }
}

/// The name of the section a header opens (`core]`, `user]`, `remote "origin"]`), in lower case; a section with
/// a subsection gets a name no carried key has, so its keys are skipped.
fn section_name(header: &str) -> String {
    let inside = header.split(']').next().unwrap_or_default().trim();
    if inside.contains(['"', ' ', '.']) {
        return "\u{0}subsection".to_owned();
    }
    inside.to_ascii_lowercase()
}

/// A `key = value` line (or a bare `key`, which is true) without its comment: the key in lower case, the value
/// unquoted and unescaped.
fn entry(line: &str) -> Option<(String, String)> {
    let (key, rest) = match line.split_once('=') {
        Some((key, rest)) => (key.trim(), Some(rest)),
        None => (line.split(['#', ';']).next().unwrap_or_default().trim(), None),
    };
    if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return None;
    }
    let value = rest.map(unquote).unwrap_or_else(|| "true".to_owned());
    Some((key.to_ascii_lowercase(), value))
}

/// A configuration value as git reads it: quotes removed, `\\`, `\"`, `\n`, `\t` unescaped, a comment outside
/// quotes dropped, surrounding blanks outside quotes trimmed.
fn unquote(raw: &str) -> String {
    let mut value = String::new();
    let mut quoted = false;
    let mut pending_space = String::new();
    let mut chars = raw.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '#' | ';' if !quoted => break,
            '\\' => {
                value.push_str(&pending_space);
                pending_space.clear();
                match chars.next() {
                    Some('n') => value.push('\n'),
                    Some('t') => value.push('\t'),
                    Some(other) => value.push(other),
                    None => {}
                }
            }
            c if c.is_whitespace() && !quoted => pending_space.push(c),
            c => {
                if !value.is_empty() {
                    value.push_str(&pending_space);
                }
                pending_space.clear();
                value.push(c);
            }
        }
    }
    value
}

/// The path an `include.path` names: `~/` in `home`, relative to the including file's directory.
fn expand(path: &str, including: &Path, home: Option<&Path>) -> PathBuf {
    if let (Some(rest), Some(home)) = (path.strip_prefix("~/"), home) {
        return home.join(rest);
    }
    let path = PathBuf::from(path);
    if path.is_absolute() {
        return path;
    }
    including.parent().map(|dir| dir.join(&path)).unwrap_or(path)
}

/// `values` in git's syntax, one section per key, each value quoted; a value with a line break (which no
/// identity has) is left out.
fn render(values: &[(String, String)]) -> String {
    let mut text = String::new();
    for (name, value) in values {
        let Some((section, key)) = name.split_once('.') else {
            continue;
        };
        if value.contains(['\n', '\r', '\0']) {
            continue;
        }
        let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
        text.push_str(&format!("[{section}]\n\t{key} = \"{escaped}\"\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_identity_and_the_harmless_keys_are_carried() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join(".gitconfig"),
            "[user]\n\tname = \"Ada \\\"L\\\" Lovelace\" ; a comment\n\temail = ada@example.com\n\
             [http]\n\textraHeader = Authorization: Bearer ghp_0123456789abcdefghijklmnopqrstuvwxyz\n\
             [credential]\n\thelper = store\n[core]\n\tfsmonitor = /tmp/x\n[user \"x\"]\n\tname = Other\n\
             [include]\n\tpath = more.inc\n[safe]\n\tdirectory = /srv/a\n",
        )
        .unwrap();
        std::fs::write(
            home.path().join("more.inc"),
            "[init]\n\tdefaultBranch = trunk\n[safe]\n\tdirectory = /srv/b\n",
        )
        .unwrap();
        let text = {
            let mut values = Vec::new();
            read_into(&home.path().join(".gitconfig"), Some(home.path()), 0, &mut values);
            render(&values)
        };
        assert!(text.contains("name = \"Ada \\\"L\\\" Lovelace\""), "{text}");
        assert!(text.contains("email = \"ada@example.com\""), "{text}");
        assert!(text.contains("defaultbranch = \"trunk\""), "{text}");
        assert!(text.contains("directory = \"/srv/a\"") && text.contains("directory = \"/srv/b\""));
        for absent in ["ghp_", "Bearer", "store", "fsmonitor", "Other"] {
            assert!(!text.contains(absent), "{absent} in {text}");
        }
    }

    #[test]
    fn a_sandboxed_git_uses_a_bare_repository_only_where_it_is_named() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join(".gitconfig"),
            "[safe]\n\tbareRepository = all\n[user]\n\tname = A\n",
        )
        .unwrap();
        let text = generated(Some(home.path()));
        assert!(
            text.ends_with("[safe]\n\tbareRepository = \"explicit\"\n"),
            "{text}"
        );
        assert!(!text.contains("= \"all\""), "{text}");
    }

    #[test]
    fn includes_that_loop_end() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join(".gitconfig"),
            "[include]\npath = ~/.gitconfig\n[user]\nname = A\n",
        )
        .unwrap();
        let mut values = Vec::new();
        read_into(&home.path().join(".gitconfig"), Some(home.path()), 0, &mut values);
        assert_eq!(render(&values), "[user]\n\tname = \"A\"\n");
    }
}
