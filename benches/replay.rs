//! The replay set: shell commands that coding agents ran in real projects (benches/replay/README.md says where
//! they come from), and the scratch project they are decided in.
//!
//! Each line of the set names its working directory relative to the project and writes the project as
//! [`PROJECT_PLACEHOLDER`] and the home directory as [`HOME_PLACEHOLDER`]; [`Scratch::localize`] puts a scratch
//! project and home in their place, so that a decision sees the same containment as in the session it came from
//! while nothing real is touched.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The project directory as the replay set writes it.
pub const PROJECT_PLACEHOLDER: &str = "/home/user/project";
/// The home directory as the replay set writes it (the project is below it).
pub const HOME_PLACEHOLDER: &str = "/home/user";
/// The environment variable naming another replay set than [`default_path`].
pub const REPLAY_ENV: &str = "AGENT_GUARD_REPLAY";

/// One command of the replay set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayCommand {
    /// The public repository whose logs it comes from (`owner/name`).
    pub source: String,
    /// The working directory, relative to the project (`.` for the project itself).
    pub cwd: String,
    /// The shell line, with the placeholders for the project and the home directory.
    pub command: String,
}

/// Where the replay set is read from: `AGENT_GUARD_REPLAY` when set, else benches/replay/commands.jsonl.
pub fn default_path() -> PathBuf {
    std::env::var_os(REPLAY_ENV).map_or_else(
        || {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("replay")
                .join("commands.jsonl")
        },
        PathBuf::from,
    )
}

/// Reads a replay set: one JSON object a line with `source`, `cwd` and `command`.
pub fn load(path: &Path) -> io::Result<Vec<ReplayCommand>> {
    let text = std::fs::read_to_string(path)?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| parse_line(line).map_err(|why| bad_line(path, index + 1, &why)))
        .collect()
}

fn parse_line(line: &str) -> Result<ReplayCommand, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let field = |name: &str| {
        value
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("no string field `{name}`"))
    };
    let cwd = field("cwd")?;
    if Path::new(&cwd).is_absolute() || cwd.split('/').any(|part| part == "..") {
        return Err(format!("the working directory `{cwd}` is not inside the project"));
    }
    Ok(ReplayCommand {
        source: field("source")?,
        cwd,
        command: field("command")?,
    })
}

fn bad_line(path: &Path, line: usize, why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}: line {line}: {why}", path.display()),
    )
}

/// A scratch home directory with a project below it: a git repository with a Cargo, npm and Python manifest and
/// a few sources, and every working directory the replay set names. Deciding never runs a command, so the files
/// only give the decision what a real project shows it (markers, manifests, existing paths).
#[derive(Debug, Clone)]
pub struct Scratch {
    /// Stands for [`HOME_PLACEHOLDER`].
    pub home: PathBuf,
    /// Stands for [`PROJECT_PLACEHOLDER`].
    pub project: PathBuf,
}

/// The files of the scratch project, relative to it, with their contents.
const PROJECT_FILES: &[(&str, &str)] = &[
    (".git/HEAD", "ref: refs/heads/main\n"),
    (
        ".git/config",
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n",
    ),
    (".gitignore", "target/\nnode_modules/\n.venv/\n"),
    (
        "Cargo.toml",
        "[package]\nname = \"scratch\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    ),
    ("src/main.rs", "fn main() {\n    println!(\"hello\");\n}\n"),
    (
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    ),
    (
        "package.json",
        "{\"name\": \"scratch\", \"version\": \"1.0.0\", \"scripts\": {\"test\": \"node test.js\", \"build\": \"tsc\"}}\n",
    ),
    (
        "pyproject.toml",
        "[project]\nname = \"scratch\"\nversion = \"0.1.0\"\n",
    ),
    ("scratch/__init__.py", ""),
    (
        "tests/test_scratch.py",
        "def test_add():\n    assert 1 + 1 == 2\n",
    ),
    ("README.md", "# scratch\n"),
    ("Makefile", "all:\n\tcargo build\n"),
];

impl Scratch {
    /// Makes the scratch home and project inside `base` (an empty directory the caller owns and removes), with
    /// the directories `commands` work in: their working directories and the project directories their `cd`s
    /// enter (they existed in the sessions the commands come from).
    pub fn create(base: &Path, commands: &[ReplayCommand]) -> io::Result<Self> {
        let base = base.canonicalize()?;
        let home = base.join("home").join("user");
        let project = home.join("project");
        for (path, contents) in PROJECT_FILES {
            let file = project.join(path);
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(file, contents)?;
        }
        for command in commands {
            for dir in directories(command) {
                std::fs::create_dir_all(project.join(dir))?;
            }
        }
        Ok(Self { home, project })
    }

    /// The working directory and the shell line of `command` with the scratch paths in place of the placeholders.
    pub fn localize(&self, command: &ReplayCommand) -> (PathBuf, String) {
        let cwd = match command.cwd.as_str() {
            "." | "" => self.project.clone(),
            relative => self.project.join(relative),
        };
        (cwd, self.replace_placeholders(&command.command))
    }

    /// `text` with each placeholder that ends a path component replaced, in one pass: the scratch paths are
    /// themselves below a `home/user` directory, and a second pass would replace inside them.
    fn replace_placeholders(&self, text: &str) -> String {
        let project = self.project.to_string_lossy();
        let home = self.home.to_string_lossy();
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find(HOME_PLACEHOLDER) {
            let (before, from) = rest.split_at(at);
            out.push_str(before);
            let (placeholder, scratch) = if ends_component(from, PROJECT_PLACEHOLDER) {
                (PROJECT_PLACEHOLDER, &*project)
            } else if ends_component(from, HOME_PLACEHOLDER) {
                (HOME_PLACEHOLDER, &*home)
            } else {
                // `/home/username`: another directory, kept as written.
                (HOME_PLACEHOLDER, HOME_PLACEHOLDER)
            };
            out.push_str(scratch);
            rest = from.get(placeholder.len()..).unwrap_or_default();
        }
        out.push_str(rest);
        out
    }
}

/// The directories below the project that `command` works in, relative to it: its working directory, and the
/// target of each `cd` that starts a line or follows `&&`, `;` or `||` when it names a path inside the project
/// (relative without `..`, or below [`PROJECT_PLACEHOLDER`]).
fn directories(command: &ReplayCommand) -> Vec<String> {
    let cwd = command.cwd.trim_start_matches("./");
    let mut dirs = vec![cwd.to_owned()];
    for part in command.command.split(['\n', ';', '&', '|']) {
        let Some(target) = part.trim().strip_prefix("cd ") else {
            continue;
        };
        let target = target.trim().trim_matches(|c| c == '"' || c == '\'');
        let inside = match target.strip_prefix(PROJECT_PLACEHOLDER) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                Some(rest.trim_start_matches('/').to_owned())
            }
            Some(_) => None,
            None if target.starts_with(['/', '~', '$', '-']) => None,
            None => Some(format!("{cwd}/{target}")),
        };
        if let Some(dir) = inside.filter(|dir| {
            !dir.split('/').any(|part| part == "..")
                && !dir.contains(|c: char| c.is_whitespace() || matches!(c, '*' | '?' | '`' | '(' | '{'))
        }) {
            dirs.push(dir);
        }
    }
    dirs
}

/// Whether `text` starts with `prefix` followed by the end of a path component.
fn ends_component(text: &str, prefix: &str) -> bool {
    text.strip_prefix(prefix)
        .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_its_fields_and_stays_inside_the_project() {
        let line = r#"{"source":"o/r","cwd":"app","command":"ls /home/user/project/src ~/x"}"#;
        assert_eq!(
            parse_line(line),
            Ok(ReplayCommand {
                source: "o/r".into(),
                cwd: "app".into(),
                command: "ls /home/user/project/src ~/x".into()
            })
        );
        assert!(parse_line(r#"{"source":"o/r","cwd":"../x","command":"ls"}"#).is_err());
        assert!(parse_line(r#"{"source":"o/r","cwd":"/etc","command":"ls"}"#).is_err());
        assert!(parse_line(r#"{"source":"o/r","cwd":"."}"#).is_err());
    }

    #[test]
    fn the_placeholders_become_the_scratch_paths() {
        let base = tempfile::tempdir().unwrap();
        let command = ReplayCommand {
            source: "o/r".into(),
            cwd: "app/web".into(),
            command:
                "cat /home/user/project/src/lib.rs /home/user/.bashrc /home/user/project-x /home/username"
                    .into(),
        };
        let entering = ReplayCommand {
            source: "o/r".into(),
            cwd: ".".into(),
            command: "cd api && ls; cd /home/user/project/web/src && ls; cd ../x; cd /etc; cd ~/y".into(),
        };
        let scratch = Scratch::create(base.path(), &[command.clone(), entering]).unwrap();
        assert!(scratch.project.join(".git").is_dir());
        for dir in ["app/web", "api", "web/src"] {
            assert!(scratch.project.join(dir).is_dir(), "{dir}");
        }
        assert!(!scratch.project.join("x").exists() && !scratch.project.join("etc").exists());
        let (cwd, line) = scratch.localize(&command);
        assert_eq!(cwd, scratch.project.join("app/web"));
        assert_eq!(
            line,
            format!(
                "cat {}/src/lib.rs {}/.bashrc {}/project-x /home/username",
                scratch.project.display(),
                scratch.home.display(),
                scratch.home.display()
            )
        );
    }
}
