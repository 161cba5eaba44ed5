//! File accesses: redirections, operands and option values as paths, the paths variables make, and devices.

use agent_tool_traits::{Access, Decision};

use crate::analysis::{AccessVia, Concern, FileAccess, LocationKind};
use crate::classify::{Classified, Found};
use crate::knowledge;
use crate::parse::{RedirOp, Redirect, Target};
use crate::word::{self, Segment, Word};

use super::vars::{Moment, Value};
use super::{Ctx, PROCESS_SUBSTITUTION, Walker};

/// How many paths the values of the variables in one word may combine into before the word counts as only known
/// at run time.
const PATH_LIMIT: usize = 64;

/// A file access whose path holds variables.
#[derive(Debug)]
pub(super) struct VariablePath {
    /// The word as written, for a reason.
    pub(super) text: String,
    pub(super) segments: Vec<Segment>,
    pub(super) via: AccessVia,
    pub(super) command: Option<usize>,
    pub(super) access: Access,
    /// Where the word is expanded: a variable the line had not certainly set there comes from elsewhere.
    pub(super) moment: Moment,
}

/// A path being built from the segments of a word.
#[derive(Debug, Clone, Default)]
pub(super) struct Partial {
    pub(super) path: String,
    /// An unquoted value in it holds blanks: bash splits it into words there.
    pub(super) split: bool,
    /// It ends with `~` or `.` standing for a directory, which only `/` or the end may follow (`${PWD}x` is a
    /// sibling of the working directory, not a file in it).
    pub(super) open: bool,
}

impl Partial {
    /// Appends text, or an anchor; `None` when the text would make an open anchor into another name.
    fn push(&mut self, text: &str, anchor: bool) -> Option<()> {
        if self.open && !text.is_empty() && !text.starts_with('/') {
            return None;
        }
        self.path.push_str(text);
        if anchor || !text.is_empty() {
            self.open = anchor;
        }
        Some(())
    }
}

impl Walker<'_> {
    /// A project file the command at `index` looks for in its directory (and, with `above`, in every directory
    /// above it): a load the caller checks on disk.
    pub(super) fn load(&mut self, directory: Option<&Word>, file: &Word, above: bool, index: usize) {
        let Some(path) = word::under(directory, file).path() else {
            self.contained(
                format!(
                    "the command works in a directory only known at run time, where `{}` may run code the project controls",
                    file.text
                ),
                Some(index),
            );
            return;
        };
        let mut paths = vec![path.clone()];
        // The file's own name may hold directories (`.cargo/config.toml`): the directories above are those of the
        // place the command works in, never of the name. `F` in `a/b` is looked for as `a/b/F`, `a/F` and `F`;
        // in `/x/y` up to `/F`, in `~/p` up to `~/F`.
        let name = file.text.as_str();
        let dir = path
            .strip_suffix(name)
            .and_then(|dir| dir.strip_suffix('/'))
            .filter(|dir| !dir.is_empty());
        if above && let Some(mut dir) = dir {
            loop {
                match dir.rsplit_once('/') {
                    Some((parent, _)) => {
                        paths.push(format!("{parent}/{name}"));
                        if parent.is_empty() {
                            break;
                        }
                        dir = parent;
                    }
                    None => {
                        if !dir.starts_with('~') {
                            paths.push(name.to_owned());
                        }
                        break;
                    }
                }
            }
        }
        for path in paths {
            let access = FileAccess {
                path,
                command: Some(index),
                via: AccessVia::Discovered,
                literal: false,
            };
            if !self.out.loads.contains(&access) {
                self.out.loads.push(access);
            }
        }
    }

    /// Files found under starting points that the command at `index` reads (or writes) as `{}`: it reads (or
    /// writes) below those places, every file there, hidden ones included when they are among them.
    pub(super) fn found_files(&mut self, found: &Found, classified: &Classified, index: usize, ctx: Ctx) {
        let reads = classified.reads.iter().any(|(w, _)| w.text.contains("{}"))
            || classified
                .reads
                .iter()
                .any(|(w, _)| found.starts.iter().any(|s| s.text == w.text));
        let writes = classified.writes.iter().any(|(w, _)| w.text.contains("{}"));
        if reads {
            if let Some(command) = self.out.commands.get_mut(index) {
                // A command that already read below its directories whatever their names keeps reading them all.
                if !command.recursive {
                    command.names.clone_from(&found.names);
                } else if !command.names.is_empty() {
                    command.names.retain(|n| found.names.contains(n));
                }
                command.recursive = true;
                command.reads_hidden |= found.hidden;
            }
            for start in &found.starts {
                self.access(start, &AccessVia::Operand, Some(index), Access::Read, ctx);
            }
        }
        if writes {
            self.out.writes_unseen = true;
            for start in &found.starts {
                self.access(start, &AccessVia::Operand, Some(index), Access::Write, ctx);
            }
        }
    }

    /// Every path the values the line gives the variables of a file's word make is a path the file may have; a
    /// word with a variable whose value is only known at run time (or that the line may not have set there) names a
    /// file no path check can see, which is a safety ask.
    pub(super) fn resolve_variable_paths(&mut self) {
        for unseen in std::mem::take(&mut self.variable_paths) {
            let Some(paths) = self.variable_path_values(&unseen) else {
                self.unseen_file(&unseen.text, unseen.access, unseen.command);
                continue;
            };
            for path in paths {
                self.device(&path, unseen.command, unseen.access);
                if unseen.access == Access::Write
                    && matches!(device_write(&path), Some(DeviceWrite::Harmless))
                {
                    continue;
                }
                let access = FileAccess {
                    path,
                    command: unseen.command,
                    via: unseen.via,
                    literal: false,
                };
                let list = self.files_for(unseen.access);
                if !list.contains(&access) {
                    list.push(access);
                }
            }
        }
    }

    /// The paths a word of text and variables may expand to, or `None` when one of its variables is only known
    /// at run time or they combine into more than [`PATH_LIMIT`] paths.
    pub(super) fn variable_path_values(&self, unseen: &VariablePath) -> Option<Vec<String>> {
        let mut paths = vec![Partial::default()];
        for segment in &unseen.segments {
            match segment {
                Segment::Text(text) => {
                    for partial in &mut paths {
                        partial.push(text, false)?;
                    }
                }
                Segment::Anchor(anchor) => {
                    for partial in &mut paths {
                        partial.push(anchor, true)?;
                    }
                }
                Segment::Variable { name, quoted } => {
                    let values = self.path_values(name, unseen.moment)?;
                    let mut next = Vec::new();
                    for partial in &paths {
                        for value in &values {
                            let mut longer = partial.clone();
                            match value {
                                // A `~` in a value is text: at the start of the path it names a file `~` here.
                                Value::Text(text) if partial.path.is_empty() && text.starts_with('~') => {
                                    longer.push(&format!("./{text}"), false)?;
                                }
                                Value::Text(text) => longer.push(text, false)?,
                                Value::Path(path) => longer.push(path, path == "~" || path == ".")?,
                                Value::Unknown => return None,
                            }
                            longer.split |= !quoted && longer.path.contains(char::is_whitespace);
                            next.push(longer);
                        }
                        if next.len() > PATH_LIMIT {
                            return None;
                        }
                    }
                    paths = next;
                }
            }
        }
        let mut out = Vec::new();
        for partial in paths {
            // Each word an unquoted value splits into may be a file (blanks of quoted text split too here: more
            // paths to check, never fewer).
            if partial.split {
                out.extend(partial.path.split_whitespace().map(str::to_owned));
            }
            out.push(partial.path);
        }
        out.retain(|p| !p.is_empty());
        out.dedup();
        Some(out)
    }

    /// Every value `name` may have at `moment`: the values the line gives it when it had certainly set it there;
    /// `$HOME` and `$PWD` are the home and working directories unless the line sets them. `None` when a value is
    /// only known at run time, or comes from the environment.
    pub(super) fn path_values(&self, name: &str, moment: Moment) -> Option<Vec<Value>> {
        let facts = self.vars.get(name);
        let anchor = match name {
            "HOME" => Some("~"),
            "PWD" => Some("."),
            _ => None,
        };
        let mut values: Vec<Value> = Vec::new();
        if let Some(facts) = facts {
            if facts.unknown {
                return None;
            }
            values.extend(facts.values.iter().cloned().map(Value::Text));
            values.extend(facts.paths.iter().cloned().map(Value::Path));
        }
        match anchor {
            Some(anchor) => values.push(Value::Path(anchor.to_owned())),
            None if facts.is_none() || !self.was_assigned(name, moment) => return None,
            None => {}
        }
        Some(values)
    }

    /// Reading a device that never ends (`cat /dev/zero`): without end, unless the reader stops by itself (`head`).
    fn endless_input(&mut self, path: &str, command: Option<usize>) {
        let reader = command
            .and_then(|index| self.out.commands.get(index))
            .and_then(|c| c.effective().first().cloned());
        match (command, reader) {
            (Some(_), Some(name)) if knowledge::BOUNDED_READERS.contains(&name.as_str()) => {}
            (Some(index), _) => {
                self.unbounded
                    .entry(index)
                    .or_insert_with(|| format!("reading `{path}` never ends"));
            }
            (None, _) => self.contained(
                format!("reading `{path}` never ends; in a hook nothing stops it"),
                None,
            ),
        }
    }

    /// A file a command reads or writes whose name is only known at run time.
    pub(super) fn unseen_file(&mut self, text: &str, access: Access, command: Option<usize>) {
        let verb = match access {
            Access::Read => "reads",
            Access::Write => "writes",
        };
        // A write goes where the kernel lets it (inside the roots); a read may reach a secret outside them under a
        // name no list knows, which the kernel does not hide.
        let reason =
            format!("{verb} a file named only at run time (`{text}`), which the path check cannot see");
        self.out.writes_unseen |= access == Access::Write;
        if access == Access::Write {
            self.unseen_start_file(text, command);
        }
        match access {
            Access::Read => self.finding(Decision::Ask, reason, command),
            Access::Write => self.contained(reason, command),
        }
    }

    /// A write whose target is only known at run time but whose name is written out, and is a file an interpreter
    /// runs by itself at a later start (`> "$1/x.pth"`): wherever it lands inside the roots, the user's python, pip
    /// or shell runs it later, outside the sandbox, so the sandbox does not contain it.
    fn unseen_start_file(&mut self, text: &str, command: Option<usize>) {
        if let Some(kind) = crate::startup::unseen_target(text) {
            self.finding(
                Decision::Ask,
                format!(
                    "writes `{text}`, named only at run time but a start-up file: {}, later, outside the sandbox",
                    kind.why()
                ),
                command,
            );
        }
    }

    /// A device or a special file among the paths a command accesses: raw disks, network connections.
    pub(super) fn device(&mut self, path: &str, command: Option<usize>, access: Access) {
        let Some(device) = device_write(path) else {
            return;
        };
        let (decision, reason) = match device {
            DeviceWrite::Harmless => return,
            DeviceWrite::Raw if access == Access::Read => return,
            DeviceWrite::Raw => (Decision::Deny, format!("writes the raw device `{path}`")),
            DeviceWrite::Network => {
                let reason = format!("`{path}` opens a network connection");
                match self.table.network_block {
                    // A raw connection bypasses the sandbox's proxy, which only speaks HTTP.
                    Some(block) => self.caution_about(
                        format!("{reason}, which is blocked by {block}"),
                        command,
                        Concern::Guarded,
                    ),
                    None => self.finding(Decision::Ask, reason, command),
                }
                return;
            }
        };
        self.finding(decision, reason, command);
    }

    /// The list of the analysis that files of `access` go to.
    fn files_for(&mut self, access: Access) -> &mut Vec<FileAccess> {
        match access {
            Access::Read => &mut self.out.reads,
            Access::Write => &mut self.out.writes,
        }
    }

    pub(super) fn access(
        &mut self,
        w: &Word,
        via: &AccessVia,
        command: Option<usize>,
        access: Access,
        ctx: Ctx,
    ) {
        self.device(&w.text, command, access);
        if access == Access::Read && knowledge::ENDLESS_DEVICES.contains(&w.text.as_str()) {
            self.endless_input(&w.text, command);
        }
        // Writing `/dev/null` or a descriptor writes no file.
        if access == Access::Write && matches!(device_write(&w.text), Some(DeviceWrite::Harmless)) {
            return;
        }
        let plain = !w.reexpands && w.error.is_none() && w.embedded.is_empty();
        // Variables, `$HOME` and `$PWD` among them, are resolved with every value the line gives them once it is
        // all known (`PWD=/etc; cat $PWD/shadow` reads `/etc/shadow`).
        if let Some(segments) = w.segments.as_deref().filter(|_| plain)
            && segments.iter().any(|s| matches!(s, Segment::Variable { .. }))
        {
            let moment = self.moment(ctx);
            self.variable_paths.push(VariablePath {
                text: w.text.clone(),
                segments: segments.to_vec(),
                via: *via,
                command,
                access,
                moment,
            });
            return;
        }
        let Some(path) = w.path() else {
            match w.segments.as_deref() {
                None if !w.literal && w.text == PROCESS_SUBSTITUTION => {}
                // Text alone that is not a path: the `{}` of `find -exec`, a file `find` found under its starting
                // points, which are checked; climbing out of them with `..` is not.
                Some(segments)
                    if plain
                        && segments.iter().all(|s| matches!(s, Segment::Text(_)))
                        && w.text.contains("{}")
                        && !w.text.split('/').any(|c| c == "..") => {}
                Some(_) | None => self.unseen_file(&w.text, access, command),
            }
            return;
        };
        let file = FileAccess {
            path,
            command,
            via: *via,
            literal: w.literal,
        };
        let list = self.files_for(access);
        if !list.contains(&file) {
            list.push(file);
        }
    }

    pub(super) fn redirect(&mut self, r: &Redirect, command: Option<usize>, ctx: Ctx) {
        let target = match &r.target {
            Target::Fd => return,
            Target::ProcSub(script) => {
                let mark = self.known.len();
                self.script(
                    script,
                    Ctx {
                        parent: command,
                        ..ctx.nested(LocationKind::ProcessSubstitution)
                    },
                );
                self.forget(mark);
                return;
            }
            Target::Word(raw) => raw,
        };
        match r.op {
            RedirOp::HereDoc { expands } => {
                if expands {
                    let body = word::expand_heredoc(target);
                    self.word_code(&body, ctx, command, Some(LocationKind::HereDocument));
                }
            }
            RedirOp::HereString => {
                let w = word::expand(target);
                self.word_code(&w, ctx, command, None);
            }
            RedirOp::Read | RedirOp::Write | RedirOp::ReadWrite | RedirOp::Duplicate { .. } => {
                let w = word::expand(target);
                self.word_code(&w, ctx, command, None);
                if let RedirOp::Duplicate { output } = r.op {
                    let t = w.text.trim_end_matches('-');
                    if w.literal && (t.is_empty() || t.chars().all(|c| c.is_ascii_digit())) {
                        return;
                    }
                    if !output {
                        if !w.literal {
                            self.finding(
                                Decision::Ask,
                                format!("redirection from `{}` only known at run time", w.text),
                                command,
                            );
                        }
                        return;
                    }
                }
                let variables = w
                    .segments
                    .as_deref()
                    .is_some_and(|s| s.iter().any(|s| matches!(s, Segment::Variable { .. })));
                // A variable's value is neither split nor globbed in a redirection: it names one file. A pattern
                // (`< config/*.yml`) names the one file it matches (bash refuses a pattern that matches more): its
                // matches are checked as an operand's are.
                let pattern = w.glob && w.path().is_some();
                if !w.literal && ((w.path().is_none() && !variables) || (w.glob && !pattern)) {
                    self.out.writes_unseen |= !matches!(r.op, RedirOp::Read);
                    if !matches!(r.op, RedirOp::Read) {
                        self.unseen_start_file(&w.text, command);
                    }
                    self.contained(
                        format!("the redirection target `{}` is only known at run time", w.text),
                        command,
                    );
                    return;
                }
                let via = AccessVia::Redirect;
                if matches!(r.op, RedirOp::Read | RedirOp::ReadWrite) {
                    self.access(&w, &via, command, Access::Read, ctx);
                }
                if matches!(
                    r.op,
                    RedirOp::Write | RedirOp::ReadWrite | RedirOp::Duplicate { output: true }
                ) {
                    self.access(&w, &via, command, Access::Write, ctx);
                }
            }
        }
    }
}

enum DeviceWrite {
    Harmless,
    Raw,
    Network,
}

fn device_write(path: &str) -> Option<DeviceWrite> {
    if knowledge::HARMLESS_TARGETS.contains(&path)
        || path.starts_with("/dev/fd/")
        || path.starts_with("/proc/self/fd/")
    {
        return Some(DeviceWrite::Harmless);
    }
    if path == "/proc/sysrq-trigger" {
        // Writing it crashes or reboots the machine.
        return Some(DeviceWrite::Raw);
    }
    let device = path.strip_prefix("/dev/")?;
    if device.starts_with("tcp/") || device.starts_with("udp/") {
        return Some(DeviceWrite::Network);
    }
    knowledge::RAW_DEVICES
        .iter()
        .any(|p| device.starts_with(p))
        .then_some(DeviceWrite::Raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices() {
        assert!(matches!(device_write("/dev/null"), Some(DeviceWrite::Harmless)));
        assert!(matches!(device_write("/dev/sda"), Some(DeviceWrite::Raw)));
        assert!(matches!(device_write("/dev/nvme0n1"), Some(DeviceWrite::Raw)));
        assert!(matches!(
            device_write("/dev/tcp/1.2.3.4/80"),
            Some(DeviceWrite::Network)
        ));
        assert!(device_write("out.txt").is_none());
    }
}
