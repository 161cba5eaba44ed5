//! Between gathering and resolving: the session's taint. What the call adds to it (untrusted content, private
//! data, the domains it reaches), and whether it is a way out that the session's taint makes ask: once a session
//! has seen untrusted content and private data, every sink asks, in every mode; after untrusted content alone, a
//! sink that sends files does.

mod table;

use std::path::Path;
use std::sync::LazyLock;

use agent_bash_guard::{CommandAnalysis, CommandClass, Effect, LocationKind, SubCommand};
use agent_fs_sandbox::Places;
use agent_os_sandbox::DomainPattern;
use agent_rules::{CallTarget, SessionTaint, TaintFacts, TaintMark};
use agent_tool_traits::{Access, DecidedBy, Decision, Layer, Provenance, ToolKind, ToolName, Verdict};
use serde_json::Value;

use crate::bounded::CallInput;
use crate::decided::CheckedPath;
use crate::gather::Gathered;
use crate::guard::Guard;
use table::{DOWNLOADED_PLACES, Dumps, ENVIRONMENT_DUMPS, ENVIRONMENT_FILES, FETCHING, SYSTEM_PLACES};

/// `agentGuard.taint`: what the settings add to the table of sources and sinks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaintSettings {
    /// Tools whose results are untrusted content (`mcp__github__*`: an MCP server that reads issues), as names
    /// or prefixes ending in `*`, from every source.
    pub sources: Vec<String>,
    /// Tools that send data out of the session (`mcp__slack__post_message`), as names or prefixes ending in
    /// `*`, from every source.
    pub sinks: Vec<String>,
    /// Domains whose content is trusted and which data may reach (`docs.rs`, `*.internal.example`), from the
    /// user's settings only: a repository cannot trust its own domain.
    pub trusted_domains: Vec<DomainPattern>,
}

/// What the taint step concluded for one call: what it adds to the session, and the ask of a sink the session's
/// taint makes ask.
#[derive(Debug)]
pub(crate) struct Tainting {
    /// What the call adds to the session's taint.
    pub(crate) facts: TaintFacts,
    /// The ask, of layer [`Layer::Taint`], when the call is a sink the session's taint makes ask.
    pub(crate) finding: Option<Verdict>,
}

/// One way out of the session that a call takes.
#[derive(Debug)]
struct Sink {
    /// What it does, as the reason says it (`` `curl -d @f https://x` reaches `x` ``).
    what: String,
    /// It sends files the line reads, or the output of a command that reads them.
    sends_files: bool,
}

impl Guard {
    /// The taint step of `call`, whose facts are `gathered`, in a session that has been exposed to `session`.
    pub(crate) fn taint(
        &self,
        call: &CallInput,
        gathered: &Gathered<'_>,
        session: &SessionTaint,
    ) -> Tainting {
        let kind = ToolName::new(&call.tool).kind();
        let untrusted = self.untrusted(kind, call, gathered);
        let private = self.private(gathered);
        // The call as a mark shows it, built only when the call leaves a mark (most leave none).
        let shown = if untrusted.is_some() || private.is_some() {
            shown_call(call)
        } else {
            String::new()
        };
        let facts = TaintFacts {
            untrusted: untrusted.map(|why| TaintMark::new(&shown, why)),
            private: private.map(|why| TaintMark::new(&shown, why)),
            contacted: contacted(gathered),
        };
        let sinks = self.sinks(kind, call, gathered, session);
        let finding = self.taint_ask(&sinks, session, &facts);
        Tainting { facts, finding }
    }

    /// The ask of the first sink the taint makes ask: untrusted content seen before this call, and private data
    /// read before it or by it (the data flows within the line), make every sink ask; untrusted content alone makes
    /// a sink that sends files ask. Content this call brings in arrives after it runs, so it cannot steer it.
    fn taint_ask(&self, sinks: &[Sink], session: &SessionTaint, facts: &TaintFacts) -> Option<Verdict> {
        let untrusted = session.untrusted.as_ref()?;
        let private = session.private.as_ref().or(facts.private.as_ref());
        let reason = match private {
            Some(private) => {
                let sink = sinks.first()?;
                format!(
                    "session taint: this session has read untrusted content ({}) and private data ({}), so {} \
                     asks in every mode: it could carry that data out of the session",
                    named(untrusted),
                    named(private),
                    sink.what,
                )
            }
            None => {
                let sink = sinks.iter().find(|sink| sink.sends_files)?;
                format!(
                    "session taint: this session has read untrusted content ({}), and {} sends files out of the \
                     session, so it asks in every mode",
                    named(untrusted),
                    sink.what,
                )
            }
        };
        Some(Verdict::new(
            Decision::Ask,
            reason,
            Provenance::layer(Layer::Taint).at(DecidedBy::SafetyAsk),
        ))
    }

    /// Why the call brings untrusted content into the session, when it does.
    fn untrusted(&self, kind: ToolKind, call: &CallInput, gathered: &Gathered<'_>) -> Option<String> {
        match kind {
            ToolKind::WebFetch => {
                return gathered
                    .host
                    .as_deref()
                    .filter(|host| !self.trusted(host))
                    .map(|host| format!("fetched a page of `{host}`"));
            }
            ToolKind::WebSearch => return Some("searched the web".to_owned()),
            ToolKind::Shell
            | ToolKind::Read
            | ToolKind::Glob
            | ToolKind::Grep
            | ToolKind::Write
            | ToolKind::Edit
            | ToolKind::NotebookEdit
            | ToolKind::Agent
            | ToolKind::Mcp
            | ToolKind::Harmless
            | ToolKind::Other => {}
        }
        if names_tool(&self.taint.sources, &call.tool) {
            return Some(format!(
                "`{}` is a source of untrusted content (`agentGuard.taint.sources`)",
                call.tool
            ));
        }
        if let Some(analysis) = &gathered.analysis
            && let Some(why) = analysis.commands.iter().find_map(|c| self.fetches(c))
        {
            return Some(why);
        }
        gathered
            .paths
            .iter()
            // A secret of the user's is private data, not content someone else wrote.
            .filter(|path| {
                path.access == Access::Read && path.check.root.is_none() && path.check.protected.is_none()
            })
            .find_map(|path| match self.place(path) {
                Place::Downloaded => Some(format!(
                    "read `{}`, which a package manager downloaded",
                    path.check.absolute.display()
                )),
                Place::Elsewhere => Some(format!(
                    "read `{}`, outside the project",
                    path.check.absolute.display()
                )),
                Place::System | Place::Environment | Place::Secret => None,
            })
    }

    /// Why `command` brings content from elsewhere into the session, when it does: it names a host that is not
    /// trusted, or it clones, pulls or installs.
    fn fetches(&self, command: &SubCommand) -> Option<String> {
        let shown = command.effective().join(" ");
        if let Effect::Network { hosts } = &command.effect
            && !hosts.is_empty()
        {
            // A server of this project run in the background inside its own sandbox is the project's own code,
            // as a test run is: what it answers is no more someone else's than what the project's files hold.
            return hosts
                .iter()
                .find(|host| !self.trusted(host) && self.sandboxed_service(host).is_none())
                .map(|host| format!("`{shown}` fetched from `{host}`"));
        }
        let words = command.effective();
        let name = words.first().map(|w| program_name(w))?;
        let (_, subcommands) = FETCHING.iter().find(|(program, _)| *program == name)?;
        let subcommand = words.iter().skip(1).find(|w| !w.starts_with('-'));
        let fetching =
            subcommands.is_empty() || subcommand.is_some_and(|sub| subcommands.contains(&sub.as_str()));
        fetching.then(|| format!("`{shown}` brings in content from elsewhere"))
    }

    /// Why the call reads private data, when it does: a secret file by its name or its content, a file outside
    /// the roots, the environment.
    fn private(&self, gathered: &Gathered<'_>) -> Option<String> {
        for path in gathered.paths.iter().filter(|p| p.access == Access::Read) {
            let shown = path.check.absolute.display();
            if let Some(why) = &path.check.protected {
                return Some(format!("read `{shown}`: {why}"));
            }
            if path.check.root.is_some() {
                continue;
            }
            match self.place(path) {
                Place::Elsewhere => return Some(format!("read `{shown}`, outside the project")),
                Place::Environment => return Some(format!("read the environment (`{shown}`)")),
                Place::Secret => {
                    return Some(format!(
                        "read `{shown}`, where the home directory keeps credentials"
                    ));
                }
                Place::System | Place::Downloaded => {}
            }
        }
        if let Some((path, kind)) = gathered.credentials.first() {
            return Some(format!(
                "read `{}`, which holds a credential ({kind})",
                path.display()
            ));
        }
        let analysis = gathered.analysis.as_ref()?;
        analysis.commands.iter().find_map(|command| {
            dumps_environment(command).then(|| {
                format!(
                    "`{}` prints the environment, which holds credentials",
                    command.effective().join(" ")
                )
            })
        })
    }

    /// The ways out of the session the call takes: a web fetch of a domain that is not trusted, a web search, a tool the settings name a sink, and each shell command that reaches the network (its hosts not
    /// all trusted) or changes another system.
    fn sinks(
        &self,
        kind: ToolKind,
        call: &CallInput,
        gathered: &Gathered<'_>,
        session: &SessionTaint,
    ) -> Vec<Sink> {
        let mut sinks = Vec::new();
        match kind {
            // A URL carries what is written into it, to a domain reached before as well as to a new one (the
            // page an injection came from is on a domain the session reached).
            ToolKind::WebFetch => {
                if let Some(host) = gathered.host.as_deref()
                    && !self.trusted(host)
                {
                    let what = if session.has_contacted(host) {
                        format!(
                            "`{}` reaches `{host}`, whose URL can carry what the session read",
                            call.tool
                        )
                    } else {
                        format!(
                            "`{}` reaches `{host}`, a domain this session has not reached before",
                            call.tool
                        )
                    };
                    sinks.push(Sink {
                        what,
                        sends_files: false,
                    });
                }
            }
            ToolKind::WebSearch => sinks.push(Sink {
                what: format!("`{}` sends its query out", call.tool),
                sends_files: false,
            }),
            ToolKind::Shell
            | ToolKind::Read
            | ToolKind::Glob
            | ToolKind::Grep
            | ToolKind::Write
            | ToolKind::Edit
            | ToolKind::NotebookEdit
            | ToolKind::Agent
            | ToolKind::Mcp
            | ToolKind::Harmless
            | ToolKind::Other => {}
        }
        if names_tool(&self.taint.sinks, &call.tool) {
            sinks.push(Sink {
                what: format!(
                    "`{}`, which sends data out (`agentGuard.taint.sinks`),",
                    call.tool
                ),
                sends_files: true,
            });
        }
        if let Some(analysis) = &gathered.analysis {
            for (index, command) in analysis.commands.iter().enumerate() {
                if let Some(what) = self.command_sink(command) {
                    sinks.push(Sink {
                        what,
                        sends_files: sends_files(analysis, index),
                    });
                }
            }
        }
        sinks
    }

    /// What `command` does that takes data out of the session, when it does.
    fn command_sink(&self, command: &SubCommand) -> Option<String> {
        let shown = command.effective().join(" ");
        match &command.effect {
            Effect::Network { hosts } if hosts.is_empty() => {
                Some(format!("`{shown}`, which reaches the network,"))
            }
            Effect::Network { hosts } => hosts
                .iter()
                .find(|host| !self.trusted(host))
                .map(|host| format!("`{shown}`, which reaches `{host}`,")),
            Effect::Remote(why) => Some(format!("`{shown}` ({why})")),
            Effect::Local if command.class == CommandClass::Network => {
                Some(format!("`{shown}`, a network client,"))
            }
            Effect::Local | Effect::RemovesTrees | Effect::Discards(_) | Effect::Destroys(_) => None,
        }
    }

    /// Whether `host` is a trusted domain (`agentGuard.taint.trustedDomains`).
    fn trusted(&self, host: &str) -> bool {
        let host = host.rsplit_once(':').map_or(host, |(name, port)| {
            if port.chars().all(|c| c.is_ascii_digit()) {
                name
            } else {
                host
            }
        });
        self.taint
            .trusted_domains
            .iter()
            .any(|pattern| pattern.matches(host, 443))
    }

    /// What kind of place outside the roots `path` is.
    fn place(&self, path: &CheckedPath) -> Place {
        let at: &Path = path.check.resolved.as_deref().unwrap_or(&path.check.absolute);
        let written = path.check.absolute.as_path();
        let environment = |p: &Path| {
            ENVIRONMENT_FILES.iter().any(|f| p == Path::new(f))
                || (p.starts_with("/proc") && p.file_name().is_some_and(|n| n == "environ"))
        };
        if environment(at) || environment(written) {
            return Place::Environment;
        }
        if let Some(home) = &self.home
            && (agent_fs_sandbox::in_home_secret_place(home, at)
                || agent_fs_sandbox::in_home_secret_place(home, written))
        {
            return Place::Secret;
        }
        static SYSTEM: LazyLock<Places> = LazyLock::new(|| Places::new(SYSTEM_PLACES));
        static DOWNLOADED: LazyLock<Places> = LazyLock::new(|| Places::new(DOWNLOADED_PLACES));
        if SYSTEM.hold(at) {
            return Place::System;
        }
        // Beneath `home.join(place)` for one of the (relative) places: the path below the home starts with it.
        let downloaded = self
            .home
            .as_ref()
            .is_some_and(|home| at.strip_prefix(home).is_ok_and(|below| DOWNLOADED.hold(below)));
        if downloaded {
            Place::Downloaded
        } else {
            Place::Elsewhere
        }
    }
}

/// What a place outside the roots holds, for the taint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// The system's and the tool chains' installed files: neither untrusted nor private.
    System,
    /// What package managers downloaded: untrusted, not private.
    Downloaded,
    /// The process's environment: private.
    Environment,
    /// An entry of the home directory that holds credentials (`~/.ssh`, `~/.aws`): private.
    Secret,
    /// Anything else: the user's files, downloads, temporary files: untrusted and private.
    Elsewhere,
}

/// The call as a mark shows it: the tool and what it is given.
fn shown_call(call: &CallInput) -> String {
    let detail = match agent_rules::describe(&call.tool, &call.args) {
        Ok(CallTarget::Shell(line)) => Some(line.to_owned()),
        Ok(CallTarget::Web { url, .. }) => Some(url.to_owned()),
        Ok(CallTarget::Files(_, files)) => Some(files.join(" ")),
        Ok(CallTarget::Agent(_) | CallTarget::Opaque) | Err(_) => ["query", "url", "path"]
            .iter()
            .find_map(|key| call.args.get(key).and_then(Value::as_str))
            .map(str::to_owned),
    };
    match detail {
        Some(detail) => format!("{} {detail}", call.tool),
        None => call.tool.clone(),
    }
}

/// A mark as a reason names it: the call and why it counts.
fn named(mark: &TaintMark) -> String {
    format!("`{}`: {}", mark.call, mark.why)
}

/// The domains the call reaches: a web fetch's host and the hosts its shell commands name.
fn contacted(gathered: &Gathered<'_>) -> Vec<String> {
    let mut domains: Vec<String> = gathered.host.iter().cloned().collect();
    for command in gathered.analysis.iter().flat_map(|a| &a.commands) {
        if let Effect::Network { hosts } = &command.effect {
            domains.extend(hosts.iter().cloned());
        }
    }
    domains.sort_unstable();
    domains.dedup();
    domains
}

/// Whether `patterns` (names, or prefixes ending in `*`) name `tool`.
fn names_tool(patterns: &[String], tool: &str) -> bool {
    patterns.iter().any(|pattern| match pattern.strip_suffix('*') {
        Some(prefix) => tool.starts_with(prefix),
        None => pattern == tool,
    })
}

/// The program a command word names: its last path component (`/usr/bin/curl` is `curl`).
fn program_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Whether the command at `index` sends files: it reads files itself (`curl -d @f`, `scp f host:`, `< f`), or a
/// command before it in its pipeline reads files or prints the environment (`cat f | curl -d @- …`).
fn sends_files(analysis: &CommandAnalysis, index: usize) -> bool {
    let reads = |i: usize| analysis.reads.iter().any(|read| read.command == Some(i));
    if reads(index) {
        return true;
    }
    let Some(command) = analysis.commands.get(index) else {
        return false;
    };
    if command.location.kind != LocationKind::Pipeline {
        return false;
    }
    analysis
        .commands
        .iter()
        .enumerate()
        .take(index)
        .filter(|(_, earlier)| {
            earlier.location.kind == LocationKind::Pipeline
                && earlier.location.depth == command.location.depth
                && earlier.location.parent == command.location.parent
        })
        .any(|(i, earlier)| reads(i) || dumps_environment(earlier))
}

/// Whether `command` prints the environment's variables.
fn dumps_environment(command: &SubCommand) -> bool {
    let words = command.effective();
    let Some(name) = words.first().map(|w| program_name(w)) else {
        return false;
    };
    let Some(dump) = ENVIRONMENT_DUMPS.iter().find(|d| d.command == name) else {
        return false;
    };
    let rest = words.get(1..).unwrap_or_default();
    match dump.dumps {
        Dumps::Always => true,
        // `env` with a command to run is a wrapper: its words hold an assignment or option, then the command.
        Dumps::WithoutCommand => rest.iter().all(|w| w.starts_with('-') || w.contains('=')),
        Dumps::WithoutOperandOr(options) => {
            rest.is_empty() || (rest.len() == 1 && rest.iter().all(|w| options.contains(&w.as_str())))
        }
        Dumps::WithOption(options) => rest.iter().any(|w| options.contains(&w.as_str())),
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
