//! Files a protected configuration names to run. A configuration that runs programs later is protected (a write
//! to `.envrc` asks), but what it names is an ordinary file of the project: direnv sources the files `.envrc`
//! names on every `cd` (`source_env`, `dotenv`, the Nix files of `use flake`/`use nix`), yarn runs the JavaScript
//! file `.yarnrc.yml`'s `yarnPath` names as yarn itself (and its plugins' files), an editor runs the task
//! `.vscode/tasks.json` marks `runOn: folderOpen` when the folder opens, and lefthook and pre-commit run the
//! scripts their hooks' `run:` and `entry:` lines name on every commit. The user approved the configuration, not
//! a later change of what it names: such a file is protected as the configuration is.
//!
//! Only the configurations at the root of a project are read (where these tools look first), each of at most
//! 256 KiB; what they name is taken from the words that spell a path below the root (no `$`, no `..`, not an
//! option). The names found are kept for [`KEPT_FOR`]: a configuration changes by the user's hand only (it is
//! protected), and a file it names is protected whether it exists or not.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

/// How long the names a root's configurations give are kept before they are read again.
const KEPT_FOR: Duration = Duration::from_secs(10);

/// The largest configuration read.
const LARGEST: u64 = 256 << 10;

/// A file a configuration names, with the configuration.
type Named = Vec<(PathBuf, &'static str)>;

/// The names of each root, with when they were read.
type Kept = HashMap<PathBuf, (Instant, Arc<Named>)>;

static KEPT: LazyLock<Mutex<Kept>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// The reader of what a configuration's text names.
type Reader = fn(&str) -> Vec<String>;

/// Why a write to `absolute`, below `root`, changes what a protected configuration of `root` runs, or `None`.
pub(crate) fn named_reason(absolute: &Path, root: &Path) -> Option<String> {
    let named = named_in(root);
    let (_, config) = named.iter().find(|(path, _)| path == absolute)?;
    Some(format!(
        "`{config}` runs `{}`, a protected configuration's program (`{}`)",
        absolute.strip_prefix(root).unwrap_or(absolute).display(),
        absolute.display()
    ))
}

thread_local! {
    /// The root this thread asked about last, with its names: a scan of a root asks for each of its entries.
    static LAST: std::cell::RefCell<Option<(PathBuf, Instant, Arc<Named>)>> = const { std::cell::RefCell::new(None) };
}

/// The files the configurations of `root` name, kept for [`KEPT_FOR`].
fn named_in(root: &Path) -> Arc<Named> {
    let last = LAST.with_borrow(|last| {
        last.as_ref()
            .filter(|(kept, when, _)| kept == root && when.elapsed() < KEPT_FOR)
            .map(|(_, _, named)| Arc::clone(named))
    });
    if let Some(named) = last {
        return named;
    }
    let named = named_shared(root);
    LAST.set(Some((root.to_path_buf(), Instant::now(), Arc::clone(&named))));
    named
}

/// [`named_in`] through the names every thread keeps.
fn named_shared(root: &Path) -> Arc<Named> {
    if let Ok(kept) = KEPT.lock()
        && let Some((when, named)) = kept.get(root)
        && when.elapsed() < KEPT_FOR
    {
        return Arc::clone(named);
    }
    let named = Arc::new(read(root));
    if let Ok(mut kept) = KEPT.lock() {
        if kept.len() > 64 {
            kept.clear();
        }
        kept.insert(root.to_path_buf(), (Instant::now(), Arc::clone(&named)));
    }
    named
}

/// The configurations of `root`, each with the reader of what it names.
const CONFIGS: [(&str, Reader); 7] = [
    (".envrc", envrc),
    (".yarnrc.yml", yarnrc),
    (".vscode/tasks.json", folder_open_tasks),
    ("lefthook.yml", hook_commands),
    ("lefthook.yaml", hook_commands),
    (".lefthook.yml", hook_commands),
    (".pre-commit-config.yaml", hook_commands),
];

fn read(root: &Path) -> Named {
    let mut named = Vec::new();
    for (config, names) in CONFIGS {
        let path = root.join(config);
        let small = std::fs::metadata(&path).is_ok_and(|meta| meta.is_file() && meta.len() <= LARGEST);
        let Some(text) = small.then(|| std::fs::read_to_string(&path).ok()).flatten() else {
            continue;
        };
        for word in names(&text) {
            if let Some(below) = below_root(&word) {
                named.push((root.join(below), config));
            }
        }
    }
    named
}

/// `word` as a path below the root, when it spells one: relative (or `${workspaceFolder}/…`), with no `$`, no
/// `..`, not an option.
fn below_root(word: &str) -> Option<PathBuf> {
    let word = word.trim_matches(['"', '\'']);
    let word = word
        .strip_prefix("${workspaceFolder}/")
        .or_else(|| word.strip_prefix("$PWD/"))
        .unwrap_or(word);
    if word.is_empty() || word.starts_with(['-', '/', '~']) || word.contains(['$', '`', '*', '?']) {
        return None;
    }
    let path = Path::new(word);
    let mut below = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(name) => below.push(name),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (below.components().next().is_some()).then_some(below)
}

/// The words of a shell line, split at blanks, with a comment cut off (quotes are taken off the words, not
/// followed across blanks: a path with a blank in it is not found).
fn words(line: &str) -> Vec<&str> {
    let line = line.split_once(" #").map_or(line, |(code, _)| code);
    if line.trim_start().starts_with('#') {
        return Vec::new();
    }
    line.split_whitespace().collect()
}

/// What direnv's `.envrc` sources: `source_env[_if_exists] PATH`, `source PATH`, `. PATH`, `dotenv[_if_exists]
/// PATH`, and the Nix files of `use flake` (`flake.nix`) and `use nix` (`shell.nix`, `default.nix`).
fn envrc(text: &str) -> Vec<String> {
    let mut named = Vec::new();
    for line in text.lines() {
        // Each command of a line (`a; b`, `a && b`).
        for command in line.split([';', '&', '|']) {
            match words(command).as_slice() {
                [
                    "source_env" | "source_env_if_exists" | "source" | "." | "dotenv" | "dotenv_if_exists",
                    path,
                    ..,
                ] => {
                    named.push((*path).to_owned());
                }
                ["use" | "use_flake", "flake", ..] | ["use_flake", ..] => named.push("flake.nix".to_owned()),
                ["use" | "use_nix", "nix", ..] | ["use_nix", ..] => {
                    named.extend(["shell.nix".to_owned(), "default.nix".to_owned()]);
                }
                _ => {}
            }
        }
    }
    named
}

/// What `.yarnrc.yml` runs as yarn and as its plugins: `yarnPath:` and each plugin's `path:`.
fn yarnrc(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim_start().trim_start_matches("- ");
            line.strip_prefix("yarnPath:")
                .or_else(|| line.strip_prefix("path:"))
                .map(|value| value.trim().to_owned())
        })
        .collect()
}

/// The programs and script arguments of the tasks `.vscode/tasks.json` runs when the folder opens (`"runOptions":
/// {"runOn": "folderOpen"}`); lines that are comments (`//`) are passed by, as the editor reads them.
fn folder_open_tasks(text: &str) -> Vec<String> {
    let json: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&json) else {
        return Vec::new();
    };
    let tasks = value.get("tasks").and_then(serde_json::Value::as_array);
    let mut named = Vec::new();
    for task in tasks.into_iter().flatten() {
        let on_open = task
            .pointer("/runOptions/runOn")
            .and_then(serde_json::Value::as_str)
            == Some("folderOpen");
        if !on_open {
            continue;
        }
        if let Some(command) = task.get("command").and_then(serde_json::Value::as_str) {
            named.extend(words(command).into_iter().map(str::to_owned));
        }
        let args = task.get("args").and_then(serde_json::Value::as_array);
        named.extend(
            args.into_iter()
                .flatten()
                .filter_map(|a| a.as_str())
                .map(str::to_owned),
        );
    }
    named.retain(|word| word.contains('/') || has_script_suffix(word));
    named
}

/// The paths lefthook's `run:` and pre-commit's `entry:` lines name: their words that spell a path to a file
/// (holding a `/`, or a script's suffix).
fn hook_commands(text: &str) -> Vec<String> {
    let mut named = Vec::new();
    for line in text.lines() {
        let line = line.trim_start().trim_start_matches("- ");
        let Some(command) = line.strip_prefix("run:").or_else(|| line.strip_prefix("entry:")) else {
            continue;
        };
        named.extend(
            words(command)
                .into_iter()
                .filter(|word| word.contains('/') || has_script_suffix(word))
                .map(str::to_owned),
        );
    }
    named
}

fn has_script_suffix(word: &str) -> bool {
    [
        ".sh", ".bash", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".ps1",
    ]
    .iter()
    .any(|suffix| word.ends_with(suffix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_each_configuration_names() {
        assert_eq!(
            envrc(
                "# dev\nsource_env_if_exists scripts/dev.env\nuse flake\ndotenv .env.local; source ./x.sh\n"
            ),
            ["scripts/dev.env", "flake.nix", ".env.local", "./x.sh"]
        );
        assert_eq!(
            yarnrc("yarnPath: .yarn/releases/yarn-4.1.0.cjs\nplugins:\n  - path: .yarn/plugins/p.cjs\n"),
            [".yarn/releases/yarn-4.1.0.cjs", ".yarn/plugins/p.cjs"]
        );
        let tasks = r#"{
            // comments are allowed
            "version": "2.0.0",
            "tasks": [
                {"label": "open", "command": "./scripts/open.sh --fast", "runOptions": {"runOn": "folderOpen"}},
                {"label": "node", "command": "node", "args": ["${workspaceFolder}/tools/w.js"], "runOptions": {"runOn": "folderOpen"}},
                {"label": "build", "command": "scripts/build.sh"}
            ]
        }"#;
        assert_eq!(
            folder_open_tasks(tasks),
            ["./scripts/open.sh", "${workspaceFolder}/tools/w.js"]
        );
        assert_eq!(
            hook_commands("pre-commit:\n  commands:\n    lint:\n      run: scripts/lint.sh {staged_files}\n"),
            ["scripts/lint.sh"]
        );
        assert_eq!(
            hook_commands("repos:\n- repo: local\n  hooks:\n  - id: x\n    entry: bash tools/check.sh\n"),
            ["tools/check.sh"]
        );
    }

    #[test]
    fn only_paths_below_the_root_count() {
        assert_eq!(
            below_root("./scripts/dev.env"),
            Some(PathBuf::from("scripts/dev.env"))
        );
        assert_eq!(
            below_root("${workspaceFolder}/tools/w.js"),
            Some(PathBuf::from("tools/w.js"))
        );
        for outside in [
            "../x.sh",
            "/etc/profile",
            "~/.env",
            "$HOME/x",
            "-f",
            "a/../../b",
            "",
        ] {
            assert_eq!(below_root(outside), None, "{outside}");
        }
    }

    #[test]
    fn a_file_a_root_configuration_names_is_protected() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".envrc"), "source_env scripts/dev.env\n").unwrap();
        assert!(named_reason(&root.join("scripts/dev.env"), root).is_some());
        assert!(named_reason(&root.join("scripts/other.env"), root).is_none());
        assert!(named_reason(&root.join("src/main.rs"), root).is_none());
    }
}
