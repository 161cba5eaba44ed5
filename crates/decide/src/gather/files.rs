//! The facts of a file tool's call (Read, Write, Edit, Grep, …): the sandbox's report on each file it names.

use agent_fs_sandbox::Reach;
use agent_tool_traits::{Access, ToolKind};
use serde_json::Value;

use super::Gathering;
use super::search::{MAX_EXCLUDES, plain_name};
use crate::hook_io::shell_quote;

impl Gathering<'_> {
    /// Checks each file of `list` for `access`. A coding agent's search tool reads hidden files too: a directory
    /// it searches is checked for the protected places below it that its `glob` and `type` let it reach.
    pub(super) fn files(&mut self, tool: &str, args: &Value, access: Access, list: &[String]) {
        let searched = (agent_tool_traits::kind_of(tool) == ToolKind::Grep).then(|| search_names(self, args));
        let narrow = args.get("glob").is_none();
        // The places running sandboxed commands may redirect, read once for the call where a path needs them.
        let running = std::cell::OnceCell::new();
        for path in list {
            let Some(check) = self.check_path(path, access) else {
                continue;
            };
            if let Some(names) = &searched {
                let reach = Reach {
                    hidden: true,
                    follow_links: false,
                    ignores: true,
                    names,
                };
                self.search(tool, &check, &reach, false, narrow);
                if reveals_content(tool) {
                    self.search_content(&check, &reach, narrow);
                }
            }
            if access == Access::Read {
                self.content(&check);
            } else {
                self.start_file_written(&check);
            }
            self.redirectable(&check, searched.is_some().then_some(narrow), &running);
            self.keep(access, check);
        }
    }

    /// A file tool acts on its path after the decision checked it: where a sandboxed command running now may make a
    /// symbolic link or move a directory on the way to the path (a line of the session run in the background,
    /// beneath a build output of the project or a package cache's layer), the path may lead elsewhere by then (out
    /// of the project, onto a protected file), and the call asks. A search also reads what lies below its path:
    /// such a place there is left out of it by name where the call can be narrowed (`search` is `Some(narrow)`),
    /// else it asks. `running` holds the places once read ([`agent_os_sandbox::running_redirects`]).
    fn redirectable(
        &mut self,
        check: &agent_fs_sandbox::PathCheck,
        search: Option<bool>,
        running: &std::cell::OnceCell<Vec<(u32, std::path::PathBuf)>>,
    ) {
        if check.root.is_none() || check.verdict.decision == agent_tool_traits::Decision::Deny {
            return;
        }
        let places = running.get_or_init(agent_os_sandbox::running_redirects);
        if places.is_empty() {
            return;
        }
        let paths = [Some(check.absolute.as_path()), check.resolved.as_deref()];
        let on_the_way = places
            .iter()
            .find(|(_, place)| paths.iter().flatten().any(|path| path.starts_with(place)));
        // What a search reaches below its path is left out by the name its walk meets first on the way there (the
        // entry of the searched directory that holds the place): a glob leaves out what the walk meets, never the
        // path the search was given, nor what lies below an entry it lets through.
        let mut names: Vec<&str> = Vec::new();
        let mut unnamed = None;
        let mut first_below = None;
        for (pid, place) in places.iter().filter(|_| search.is_some()) {
            let Some(entry) = paths
                .iter()
                .flatten()
                .find_map(|path| place.strip_prefix(path).ok()?.components().next())
            else {
                continue;
            };
            first_below = first_below.or(Some((*pid, place)));
            match entry.as_os_str().to_str() {
                Some(name) if search == Some(true) && plain_name(name) => {
                    if !names.contains(&name) && !self.search_excludes.iter().any(|excluded| excluded == name)
                    {
                        names.push(name);
                    }
                }
                _ => unnamed = unnamed.or(Some((*pid, place))),
            }
        }
        if self.search_excludes.len() + names.len() > MAX_EXCLUDES {
            unnamed = unnamed.or(first_below);
        }
        let Some((pid, place)) = on_the_way.map(|(pid, place)| (*pid, place)).or(unnamed) else {
            self.search_excludes.extend(names.into_iter().map(str::to_owned));
            return;
        };
        self.find(
            agent_tool_traits::Decision::Ask,
            format!(
                "a sandboxed command running now (process {pid}) may make a symbolic link or move a directory in \
                 `{}` before the tool acts, leading `{}` elsewhere",
                place.display(),
                check.absolute.display()
            ),
            agent_tool_traits::Layer::Sandbox,
        );
    }
}

/// Whether what a search tool's call answers depends on the content of the files it reads: the coding agent's
/// Grep in every mode, since a count or a file's name listed because it matched tells one bit of the file per
/// pattern (a pattern guessed a character at a time reads a token out of a file that holds it). The runtime's
/// `grep_files` skips by itself every file whose read would not be allowed, a file holding a credential among
/// them.
fn reveals_content(tool: &str) -> bool {
    tool != "grep_files"
}

/// The file names a search tool's call reaches, as globs every file it reads matches (empty: any name). The tool
/// runs ripgrep with its `glob` and `type`, hidden files included: the same search spelled as an `rg` line is
/// analysed by the shell analysis, which knows ripgrep's options and types, so both read one table.
fn search_names(gathering: &Gathering<'_>, args: &Value) -> Vec<String> {
    let mut line = "rg --hidden".to_owned();
    let mut add = |option: &str, value: &str| {
        line.push(' ');
        line.push_str(option);
        line.push(' ');
        line.push_str(&shell_quote(value));
    };
    if let Some(glob) = args.get("glob").and_then(Value::as_str) {
        for pattern in tool_globs(glob) {
            add("-g", pattern);
        }
    }
    if let Some(kind) = args.get("type").and_then(Value::as_str) {
        add("-t", kind);
    }
    line.push_str(" -e x .");
    let analysis = gathering.guard.bash.analyze(&line);
    match analysis.commands.as_slice() {
        [command] => command.names.clone(),
        // A line the analysis did not read as one search narrows nothing.
        _ => Vec::new(),
    }
}

/// The globs the coding agent's search tool hands ripgrep for its `glob` argument, each as one `--glob`: the
/// argument split at blanks, and a part without braces split at commas too (`*.md,*.yml`, `*.txt *.yml`); a
/// part with braces (`*.{ts,tsx}`) is one glob.
fn tool_globs(glob: &str) -> Vec<&str> {
    glob.split_whitespace()
        .flat_map(|part| {
            if part.contains('{') && part.contains('}') {
                vec![part]
            } else {
                part.split(',').filter(|piece| !piece.is_empty()).collect()
            }
        })
        .collect()
}
