//! L5 of agent-guard: decides shell commands from a real parse of everything that would run.
//!
//! [`BashGuard::analyze`] parses a command line with a bash grammar, walks the syntax tree and lists every command
//! that could run — parts of pipelines and lists, subshells and groups, `$(…)` and backticks in any word,
//! process substitutions, function bodies, here-documents, `bash -c` and `eval` code, `find -exec` commands and the
//! commands behind wrappers like `env`, `timeout` or `sudo` — with the files they read and write. Each command is
//! classified flag by flag against one knowledge table (`knowledge.rs`). [`CommandAnalysis::verdict`] turns the
//! findings into bash-guard's own [`Verdict`](agent_tool_traits::Verdict): deny for destructive commands,
//! privilege escalation and fork bombs; ask for network commands (while the network is blocked, the default) and
//! for code the analysis cannot see, including a variable that arithmetic evaluates (`$((x))`, `[[ $x -eq 0 ]]`,
//! `${a[x]}`: bash runs the subscripts in its value) unless the line itself made it a number; allow only when every
//! command is known read-only and nothing is written.
//!
//! **Invariant:** never executes, expands against the file system, or reads anything; analysis is pure.
//! **Invariant:** never panics and never fails: trouble (a syntax error, code only known at run time, nesting
//! past the depth limit) is a safety-ask finding, never an allow.
//! **Invariant:** no count or size cap weakens a deny: every command is analysed, and a deny anywhere denies.
//! **Invariant:** text inside quotes never becomes a command; a command word that is not a literal is an ask.
//! **Invariant:** synchronous, no async runtime; `brush-parser` is only used inside the private `parse` module.
//!
//! ```
//! use agent_bash_guard::{BashConfig, BashGuard, CommandClass};
//! use agent_tool_traits::Decision;
//!
//! let guard = BashGuard::new(BashConfig { block_network: Some(true), ..BashConfig::default() });
//!
//! let analysis = guard.analyze(r#"grep -rn "sudo rm -rf /" src | head -5"#);
//! assert_eq!(analysis.verdict().decision, Decision::Allow);
//!
//! let analysis = guard.analyze("echo ok && env A=1 timeout 5 rm -rf ~/");
//! assert_eq!(analysis.verdict().decision, Decision::Deny);
//! let rm = &analysis.commands[1];
//! assert_eq!(rm.effective(), ["rm", "-rf", "~/"]);
//! assert_eq!(rm.class, CommandClass::Destructive);
//!
//! let analysis = guard.analyze("for i in 1 2 3; do echo $((i * 2)); done");
//! assert_eq!(analysis.verdict().decision, Decision::Allow);
//! let analysis = guard.analyze("x='a[$(rm -rf ~)]'; echo $((x))");
//! assert_eq!(analysis.verdict().decision, Decision::Deny);
//! let analysis = guard.analyze("read x < input.txt; echo $((x + 1))");
//! assert_eq!(analysis.verdict().decision, Decision::Ask);
//!
//! let analysis = guard.analyze("cat $(ls) > out.txt");
//! assert_eq!(analysis.commands.len(), 2);
//! assert_eq!(analysis.writes[0].path, "out.txt");
//! assert_eq!(analysis.verdict().decision, Decision::Ask);
//! ```

mod analysis;
mod analyze;
mod arith;
mod classify;
mod config;
mod embedded;
mod error;
mod knowledge;
mod options;
mod parse;
mod prescan;
mod scripts;
mod sql;
mod startup;
mod word;

pub use analysis::AccessVia;
pub use analysis::CommandAnalysis;
pub use analysis::CommandClass;
pub use analysis::Concern;
pub use analysis::Effect;
pub use analysis::FileAccess;
pub use analysis::Finding;
pub use analysis::Location;
pub use analysis::LocationKind;
pub use analysis::SubCommand;
pub use classify::names_git_dir;
pub use classify::remote::{is_loopback, request_hosts, url_host};
pub use config::BashConfig;
pub use config::CommandTableExtension;
pub use startup::{StartFile, start_file};

use classify::Table;
use error::ExtensionError;
use knowledge::Kind;

/// The compiled command knowledge: build once, analyse many commands (`Send + Sync`).
#[derive(Debug)]
pub struct BashGuard {
    table: Table,
    diagnostics: Vec<String>,
}

impl Default for BashGuard {
    fn default() -> Self {
        Self::new(BashConfig::default())
    }
}

static USER_WRAPPER: knowledge::Wrapper = knowledge::WRAPPER;

impl BashGuard {
    /// Compiles the built-in table with the user's extensions. Never fails: an extension that cannot be applied
    /// safely is left out and reported in [`BashGuard::diagnostics`] (the analysis stays as strict as without it).
    pub fn new(config: BashConfig) -> Self {
        let mut table = Table::default();
        let mut diagnostics = Vec::new();
        let extension = &config.commands;
        let added: [(&Vec<String>, Kind, &'static str); 4] = [
            (
                &extension.interpreters,
                Kind::Interpreter(&knowledge::INTERPRETER),
                "interpreters",
            ),
            (
                &extension.package_managers,
                Kind::Program(&knowledge::PROGRAM),
                "packageManagers",
            ),
            (&extension.wrappers, Kind::Wrapper(&USER_WRAPPER), "wrappers"),
            (&extension.network, Kind::Network, "network"),
        ];
        for (entries, kind, key) in added {
            for entry in entries {
                match plain_name(entry, key) {
                    // Only `network` may re-class a known command: it can only make it stricter.
                    Ok(name) => match table.named(&name) {
                        Some(known) if key != "network" => diagnostics.push(
                            ExtensionError::Known {
                                name,
                                list: key,
                                class: kind_name(known),
                            }
                            .to_string(),
                        ),
                        _ => {
                            table.added.insert(name, kind);
                        }
                    },
                    Err(error) => diagnostics.push(error.to_string()),
                }
            }
        }
        let mut deny = Vec::new();
        for entry in &extension.deny {
            match words_of(entry, "deny") {
                Ok(words) => deny.push(words),
                Err(error) => diagnostics.push(error.to_string()),
            }
        }
        let mut read_only = Vec::new();
        for entry in &extension.read_only {
            match words_of(entry, "readOnly") {
                Ok(words) => {
                    let known = words.first().and_then(|w| table.named(w));
                    // Only commands the table does not know can be declared read-only: for known ones the
                    // table's option rules decide (`sed` is read-only, `sed -i` is not).
                    match known {
                        Some(kind) => diagnostics.push(
                            ExtensionError::NotReadOnly {
                                name: entry.clone(),
                                class: kind_name(kind),
                            }
                            .to_string(),
                        ),
                        None => read_only.push(words),
                    }
                }
                Err(error) => diagnostics.push(error.to_string()),
            }
        }
        table.read_only = read_only;
        table.deny = deny;
        table.network_block = config.network_block();
        table.cdpath_unset = config.cdpath_unset;
        Self { table, diagnostics }
    }

    /// Analyses one command line. Never panics, never executes anything.
    pub fn analyze(&self, command: &str) -> CommandAnalysis {
        let mut analysis = analyze::analyze(&self.table, command);
        analysis.diagnostics.clone_from(&self.diagnostics);
        analysis
    }

    /// Problems with the configuration: extensions that were not applied.
    pub fn diagnostics(&self) -> &[String] {
        &self.diagnostics
    }

    /// Whether network commands are denied.
    pub fn network_blocked(&self) -> bool {
        self.table.network_block.is_some()
    }
}

fn plain_name(entry: &str, list: &'static str) -> Result<String, ExtensionError> {
    let name = entry.trim();
    if name.is_empty() {
        return Err(ExtensionError::Empty { list });
    }
    let bad = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '/' | '$' | '`' | '\'' | '"' | '*' | '?' | '[' | '\\' | ';' | '|' | '&'
            )
    };
    if name.contains(bad) {
        return Err(ExtensionError::InvalidName {
            name: entry.to_owned(),
            list,
        });
    }
    Ok(name.to_owned())
}

fn words_of(entry: &str, list: &'static str) -> Result<Vec<String>, ExtensionError> {
    let words: Vec<String> = entry.split_whitespace().map(str::to_owned).collect();
    let Some(first) = words.first() else {
        return Err(ExtensionError::Empty { list });
    };
    plain_name(first, list)?;
    Ok(words)
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Wrapper(_) => "a wrapper that runs other commands",
        Kind::Shell | Kind::Eval | Kind::Source | Kind::Trap => "a runner of shell code",
        Kind::Interpreter(_) => "an interpreter",
        Kind::Network => "a network command",
        Kind::Privileged => "a privileged command",
        Kind::Destructive(_) => "a destructive command",
        Kind::Editor | Kind::Interactive => "an interactive program",
        Kind::Program(_) => "a package manager or build tool that runs repository code",
        Kind::ReadOnly(_) | Kind::Special(_) => "a command whose options decide whether it is read-only",
        Kind::Write(_) => "a command that writes",
    }
}

#[cfg(test)]
mod tests {
    use agent_tool_traits::Decision;

    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn guard_is_send_and_sync() {
        assert_send_sync::<BashGuard>();
    }

    #[test]
    fn bad_extensions_are_reported_and_not_applied() {
        let config = BashConfig {
            block_network: Some(true),
            cdpath_unset: false,
            commands: CommandTableExtension {
                read_only: vec![
                    "bash".into(),
                    "mytool".into(),
                    "".into(),
                    "a/b".into(),
                    "sed".into(),
                    "make".into(),
                ],
                deny: vec!["git push".into()],
                interpreters: vec!["sudo".into()],
                wrappers: vec!["rm".into(), "mywrap".into()],
                network: vec!["ls".into()],
                ..CommandTableExtension::default()
            },
        };
        let guard = BashGuard::new(config);
        assert_eq!(guard.diagnostics().len(), 7, "{:?}", guard.diagnostics());
        assert!(guard.analyze("sudo id").verdict().is_denied());
        assert!(guard.analyze("rm -rf /").verdict().is_denied());
        assert!(guard.analyze("mywrap rm -rf /").verdict().is_denied());
        let ls = guard.analyze("ls");
        assert!(
            !ls.is_read_only() && ls.verdict().decision == Decision::Ask,
            "network extensions may only make a command stricter"
        );
        assert!(!guard.analyze("sed -i s/a/b/ f").is_read_only());
        assert!(!guard.analyze("make").is_read_only());
        assert!(guard.analyze("mytool --x").is_read_only());
        assert!(!guard.analyze("bash").is_read_only());
        assert!(guard.analyze("git push origin").verdict().is_denied());
        assert!(!guard.analyze("git status").verdict().is_denied());
        assert_eq!(guard.analyze("cat x").verdict().diagnostics.len(), 7);
    }
}
