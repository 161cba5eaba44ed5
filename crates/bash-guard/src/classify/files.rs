//! Commands that create, remove or change files, and what removing or changing a path would destroy.

use crate::analysis::{AccessVia, CommandClass, LocationKind};
use crate::knowledge::{self, Flags};
use crate::options::{self, Reader, Token};
use crate::word::{self, Anchor, Word};

use super::{Classified, Found, Nested, flags, shown};

/// `mv` and `shred` of `/`, a system directory or home destroy it where it stands.
pub(super) fn moves(name: &str, args: &[Word], c: &mut Classified) {
    let sources: Vec<Word> = c
        .writes
        .iter()
        .map(|(w, _)| word::under(c.directory.as_ref(), w))
        .collect();
    for source in &sources {
        let outside = source.anchor == Anchor::Home || source.text.starts_with('/');
        if let Some(risk) = path_risk(source).filter(|_| outside) {
            c.class = CommandClass::Destructive;
            c.deny(format!("`{}` moves away or destroys {risk}", shown(name, args)));
        }
    }
}

pub(super) fn find(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    // Leading options, then starting points up to the first expression word.
    let mut reader = Reader::new(args, &knowledge::FIND_START);
    let mut i = 0;
    loop {
        let before = reader.position();
        match reader.next() {
            Some(Token::Option(option))
                if option.known || (option.name.starts_with("-O") && option.name.len() > 2) =>
            {
                i = reader.position();
            }
            Some(_) | None => {
                i = i.max(before);
                break;
            }
        }
    }
    let mut starts: Vec<&Word> = Vec::new();
    while let Some(a) = args.get(i) {
        if a.literal && (a.text.starts_with('-') || matches!(a.text.as_str(), "(" | ")" | "!" | ",")) {
            break;
        }
        if !a.literal && a.could_be_option() {
            c.read_only = false;
        }
        starts.push(a);
        i += 1;
    }
    starts.iter().for_each(|s| c.read(s, AccessVia::Operand));
    let mut deletes = false;
    // Without a test (`-name`, `-type`, …) `-delete` removes everything under the starting points.
    let mut filtered = false;
    let mut commands: Vec<(LocationKind, Vec<Word>)> = Vec::new();
    // It prints only names, one per found file, unless an action prints something else or nothing.
    let mut prints_names = true;
    // The name patterns every found file matches, while the expression is a plain conjunction.
    let mut names: Vec<String> = Vec::new();
    let mut conjunction = true;
    let mut expression = Reader::new(args.get(i..).unwrap_or_default(), &knowledge::FIND_EXPRESSION);
    while let Some(token) = expression.next() {
        let option = match token {
            Token::Option(option) => option,
            Token::Operand { word, .. } => {
                if !word.literal {
                    c.read_only = false;
                }
                conjunction &= !matches!(word.text.as_str(), "!" | "(" | ")" | ",");
                continue;
            }
        };
        let t = option.name.as_ref();
        let effects: Vec<_> = option
            .effects(&knowledge::FIND_EXPRESSION)
            .map(|effect| (effect, option.value.clone()))
            .collect();
        flags::effects(&effects, c);
        conjunction &= !matches!(t, "-o" | "-or" | "-not");
        if matches!(t, "-name" | "-iname")
            && let Some(pattern) = option.value.as_ref().filter(|v| v.literal)
        {
            names.push(pattern.text.clone());
        }
        if knowledge::FIND_EXEC.contains(&t) {
            let (command, closed) = expression.take_until(&[";", "+"]);
            if closed && !command.is_empty() {
                commands.push((LocationKind::FindExec, command));
            }
            prints_names = false;
        } else if t == "-delete" {
            deletes = true;
            prints_names = false;
        } else if knowledge::FIND_WRITES.contains(&t) {
            if let Some(v) = &option.value {
                c.write(v, AccessVia::Flag);
            }
            c.changes_as(CommandClass::Write);
            prints_names = false;
        } else if knowledge::FIND_VALUES.contains(&t) {
            filtered |= !knowledge::FIND_UNFILTERED.contains(&t);
            prints_names &= t != "-printf";
        } else if t.starts_with("-newer") {
            // `-newerXY REFERENCE`.
            expression.take_word();
            filtered = true;
        } else {
            filtered |= knowledge::FIND_TESTS.contains(&t);
            prints_names &= !matches!(t, "-ls" | "-quit");
        }
    }
    // `-L` (and `-follow`) follow links below the starting points: what it finds may be anywhere.
    let follows = args
        .iter()
        .any(|a| a.literal && matches!(a.text.as_str(), "-L" | "-follow"));
    let starts_or_here: Vec<Word> = if starts.is_empty() {
        vec![Word::literal(".")]
    } else {
        starts.iter().map(|w| (*w).clone()).collect()
    };
    let found = Found {
        starts: starts_or_here,
        filtered,
        hidden: true,
        names: if conjunction { names } else { Vec::new() },
    };
    for (kind, argv) in commands {
        if follows {
            c.read_only = false;
        }
        c.argv.push(Nested {
            kind,
            argv,
            found: Some(found.clone()),
        });
    }
    if prints_names && !follows {
        c.lists = Some(found);
    }
    if deletes {
        c.changes_as(CommandClass::Write);
        c.effect = crate::analysis::Effect::RemovesTrees;
        for s in &starts {
            c.write(s, AccessVia::Operand);
            if let Some(risk) = path_risk(s).filter(|_| !filtered) {
                c.class = CommandClass::Destructive;
                c.deny(format!("`find {} -delete` removes {risk}", s.text));
            }
        }
        if starts.is_empty() && !filtered {
            c.deny("`find -delete` without a starting point removes the whole project".to_owned());
        }
    }
}

/// A command of [`knowledge::LISTERS`] (`fd PATTERN DIR…`, `rg --files DIR…`, `rg -l PATTERN DIR…`, `grep -l
/// PATTERN FILE…`, `ls DIR…`) prints the names of files below its operands (the working directory without one),
/// when its options make it print names alone.
pub(super) fn lister(lister: &knowledge::Lister, table: &Flags, args: &[Word], c: &mut Classified) {
    let syntax = table.syntax();
    let parsed = options::read(args, &syntax);
    if parsed.dynamic
        || (!lister.with.is_empty() && !parsed.has(lister.with))
        || parsed.has(lister.not_with)
        || (lister.bare_names
            && parsed
                .options
                .iter()
                .any(|o| !lister.only.iter().any(|name| o.is(name))))
    {
        return;
    }
    let mut operands = parsed.operands.iter();
    if lister.pattern && !parsed.has(lister.pattern_options) {
        operands.next();
    }
    let mut starts: Vec<Word> = operands.map(|w| (*w).clone()).collect();
    if starts.is_empty() || lister.bare_names {
        starts.push(Word::literal("."));
    }
    let filtered =
        lister.pattern || lister.bare_names || parsed.operands.len() > 1 || parsed.options.len() > 1;
    c.lists = Some(Found {
        starts,
        filtered,
        hidden: lister.hidden_with.is_empty() || parsed.has(lister.hidden_with),
        names: Vec::new(),
    });
}

/// `mktemp [-d] [-p DIR|--tmpdir[=DIR]|-t] [TEMPLATE]` creates the file (or directory) it names: in the current
/// directory for a template alone, in DIR, or in the temporary directory; `-u`/`--dry-run` only prints a name.
pub(super) fn mktemp(args: &[Word], c: &mut Classified) {
    c.class = CommandClass::Write;
    let mut dry_run = false;
    let mut dir: Option<Word> = None;
    let mut in_temp = false;
    let mut template: Option<&Word> = None;
    let mut reader = Reader::new(args, &knowledge::MKTEMP);
    while let Some(token) = reader.next() {
        match token {
            Token::Operand { word, .. } => {
                // An option only known at run time may be any of them: a write as well.
                if !word.could_be_option() || reader.ended_by_dashes() {
                    template = template.or(Some(word));
                }
            }
            Token::Option(option) => {
                if option.is_any(&["-u", "--dry-run"]) {
                    dry_run = true;
                } else if option.is("--tmpdir") {
                    in_temp = true;
                    dir = option.value.filter(|v| !v.text.is_empty());
                } else if option.is("-t") {
                    in_temp = true;
                } else if option.is("-p") {
                    in_temp = true;
                    dir = option.value;
                }
            }
        }
    }
    if dry_run {
        c.read_only_as(CommandClass::ReadOnly);
        return;
    }
    c.read_only = false;
    // The system's temporary directory (`TMPDIR`, else `/tmp`) is where temporary files belong: creating one there
    // is a write to ask about, not a path for the sandbox to refuse as outside the roots.
    let name = template.map_or("tmp.XXXXXXXXXX", |t| t.text.as_str());
    match (dir, in_temp, template) {
        (Some(dir), _, _) if dir.literal && template.is_none_or(|t| t.literal) => {
            let path = format!("{}/{name}", dir.text.trim_end_matches('/'));
            c.write(&Word::literal(&path), AccessVia::Operand);
        }
        (Some(dir), _, _) => c.write(&dir, AccessVia::Flag),
        (None, false, Some(template)) => c.write(template, AccessVia::Operand),
        (None, true, _) | (None, false, None) => {}
    }
}

pub(super) fn rm(name: &str, args: &[Word], c: &mut Classified) {
    c.class = CommandClass::Write;
    let s = options::read(args, &knowledge::RM);
    let recursive_or_forced = s.has(knowledge::RM_FORCED);
    let shown = shown(name, args);
    // A removal of trees, or of files named only at run time (`find … -exec rm {} +`, `rm $files`): whether that
    // deletes the project is for a caller that looks at the disk. Without an operand `rm` removes nothing (`rm -rf
    // 2>/dev/null`).
    if (s.has(&["-r", "-R", "--recursive"]) && !s.operands.is_empty())
        || s.operands.iter().any(|o| !o.literal)
    {
        c.effect = crate::analysis::Effect::RemovesTrees;
    }
    for operand in &s.operands {
        c.write(operand, AccessVia::Operand);
        if !recursive_or_forced {
            continue;
        }
        // Judged where it is: `env -C / rm -rf usr` removes `/usr`.
        let placed = word::under(c.directory.as_ref(), operand);
        match path_risk(&placed) {
            Some(risk) => {
                c.class = CommandClass::Destructive;
                c.deny(format!("`{shown}` removes {risk}"));
            }
            None if operand.anchor == Anchor::Dynamic && empty_prefix_is_root(operand) => {
                c.ask(format!(
                    "`{shown}` removes the root directory if `{}` is empty",
                    operand.text
                ));
            }
            None => {}
        }
    }
}

pub(super) fn dd(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    for a in args {
        if a.text.starts_with("if=") {
            c.read(&a.after("if="), AccessVia::Operand);
        } else if let Some(output) = a.text.strip_prefix("of=") {
            c.changes_as(CommandClass::Write);
            let target = a.after("of=");
            if output.starts_with("/dev/") && !knowledge::HARMLESS_TARGETS.contains(&output) {
                c.class = CommandClass::Destructive;
                c.deny(format!("`dd of={output}` writes a device"));
            }
            c.write(&target, AccessVia::Operand);
        } else if !a.literal {
            c.read_only = false;
        }
    }
}

pub(super) fn chmod(name: &str, args: &[Word], c: &mut Classified) {
    c.class = CommandClass::Write;
    let s = options::read(args, &knowledge::CHMOD);
    let recursive = s.has(&["-R", "--recursive"]);
    let reference = s.options.iter().any(|o| o.name.starts_with("--reference"));
    let mut operands = s.operands.into_iter();
    if !reference {
        operands.next();
    }
    for operand in operands {
        c.write(operand, AccessVia::Operand);
        let operand = &word::under(c.directory.as_ref(), operand);
        // Only the system and home count here: `chmod -R u+w .` is an ordinary change inside the project.
        let outside = operand.anchor == Anchor::Home || operand.text.starts_with('/');
        if let Some(risk) = path_risk(operand).filter(|_| outside)
            && (recursive || operand.text.trim_end_matches('/').is_empty())
        {
            c.class = CommandClass::Destructive;
            c.deny(format!("`{}` changes {risk}", shown(name, args)));
        }
    }
}

/// What removing or changing a path would destroy, judged by what the path means.
pub(crate) fn path_risk(word: &Word) -> Option<String> {
    let all = |components: &[String]| components.iter().all(|c| matches!(c.as_str(), "*" | ".*" | "**"));
    match word.anchor {
        Anchor::Static => {
            let text = word.text.as_str();
            if let Some(absolute) = text.strip_prefix('/') {
                let components = normalize(absolute, true);
                match components.as_slice() {
                    [] => Some("the root directory".to_owned()),
                    [only] if word.glob && all(&components) => {
                        Some(format!("everything under `/` (`{only}`)"))
                    }
                    [dir] if knowledge::SYSTEM_DIRS.contains(&dir.as_str()) => {
                        Some(format!("the system directory `/{dir}`"))
                    }
                    [dir, child] if !word.glob && knowledge::CORE_SYSTEM_DIRS.contains(&dir.as_str()) => {
                        Some(format!("the system directory `/{dir}/{child}`"))
                    }
                    [dir, rest]
                        if word.glob
                            && all(std::slice::from_ref(rest))
                            && knowledge::SYSTEM_DIRS.contains(&dir.as_str()) =>
                    {
                        Some(format!("everything in the system directory `/{dir}`"))
                    }
                    _ => None,
                }
            } else {
                let components = normalize(text, false);
                match components.as_slice() {
                    [] => Some("the whole working directory".to_owned()),
                    [first, ..] if first == ".." => {
                        let rest = components.get(1..).unwrap_or_default();
                        let escapes = rest.iter().take_while(|c| *c == "..").count();
                        let after = rest.get(escapes..).unwrap_or_default();
                        (after.is_empty() || (word.glob && all(after)))
                            .then(|| "a directory above the project".to_owned())
                    }
                    _ if word.glob && all(&components) => {
                        Some("everything in the working directory".to_owned())
                    }
                    _ => None,
                }
            }
        }
        Anchor::Home => {
            let components = normalize(&word.rest, true);
            (components.is_empty() || (word.glob && all(&components)))
                .then(|| "the home directory".to_owned())
        }
        Anchor::WorkingDir => {
            let components = normalize(&word.rest, true);
            (components.is_empty() || (word.glob && all(&components)))
                .then(|| "the whole working directory".to_owned())
        }
        Anchor::Dynamic => None,
    }
}

/// `$DIR/` or `$DIR/*`: the root directory when the variable is empty.
fn empty_prefix_is_root(word: &Word) -> bool {
    word.rest.starts_with('/')
        && normalize(&word.rest, true)
            .iter()
            .all(|c| matches!(c.as_str(), "*" | ".*"))
}

/// Lexical normalisation: drops `.` and empty components, resolves `..`. For an absolute path `..` stops at the
/// root; for a relative one it stays as a leading `..`.
fn normalize(path: &str, absolute: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for component in path.split('/') {
        match component {
            "" | "." => {}
            ".." => match out.last() {
                Some(last) if last != ".." => {
                    out.pop();
                }
                _ if absolute => {}
                _ => out.push("..".to_owned()),
            },
            other => out.push(other.to_owned()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::word::expand;

    fn risk(raw: &str) -> Option<String> {
        path_risk(&expand(raw))
    }

    #[test]
    fn path_meaning_decides_destruction() {
        for raw in [
            "/",
            "//",
            "/.",
            "/tmp/..",
            "/*",
            "~",
            "~/",
            "$HOME",
            "\"$HOME\"/",
            ".",
            "./",
            "..",
            "*",
            "./*",
            "../*",
            "/usr",
            "/etc/",
            "$(pwd)",
            "\"$PWD\"/*",
            "src/../",
        ] {
            assert!(risk(raw).is_some(), "{raw}");
        }
        for raw in [
            "build",
            "./target",
            "/tmp/x",
            "~/project/build",
            "'*'",
            "../sibling",
            "src/*.o",
            "/usr/local/lib/x",
        ] {
            assert!(risk(raw).is_none(), "{raw}");
        }
    }
}
