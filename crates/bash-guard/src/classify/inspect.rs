//! Tools that inspect data files: `sqlite3` (read-only when the SQL it runs only reads), `ffprobe` (media files)
//! and `tshark -r` (packet captures), each with the options that write, run code or reach further known.

use crate::analysis::{AccessVia, CommandClass, LocationKind};
use crate::knowledge;
use crate::options::{self, Opt};
use crate::sql::{self, SqlEffects};
use crate::word::Word;

use super::{Classified, Code, flags};
use crate::knowledge::Recursion;

/// Options are whole words with one dash (`-readonly`); `sqlite3` and `ffprobe` also take them with two.
fn single_dashed(args: &[Word]) -> Vec<Word> {
    args.iter()
        .map(|arg| match arg.text.strip_prefix("--") {
            Some(name) if arg.literal && !name.is_empty() => Word::literal(&format!("-{name}")),
            _ => arg.clone(),
        })
        .collect()
}

/// Whether an option is one of `names`.
fn is(option: &Opt<'_>, names: &[&str]) -> bool {
    names.contains(&option.name.as_ref())
}

/// `sqlite3 [OPTIONS] DATABASE [SQL…]`: reads the database, and is read-only when every statement and dot-command
/// it runs only reads (`SELECT`, `PRAGMA table_info(t)`, `.schema`). With `-readonly` the database refuses changes,
/// so statements that only change it are read-only too; what reaches beyond it (`ATTACH`, `VACUUM INTO`, `.output`,
/// `.shell`, `load_extension()`, `readfile()`) never is. Without SQL it runs what standard input holds.
pub(super) fn sqlite3(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let args = single_dashed(args);
    let parsed = options::read(&args, &knowledge::SQLITE3);
    if parsed.dynamic {
        c.read_only = false;
    }
    let mut read_only_database = false;
    let mut prints_only = false;
    let mut commands: Vec<&Word> = Vec::new();
    for option in &parsed.options {
        if !option.known {
            c.read_only = false;
        } else if is(option, &["-readonly"]) {
            read_only_database = true;
        } else if is(option, &["-version", "-help"]) {
            prints_only = true;
        } else if is(option, &["-cmd"]) {
            commands.extend(option.value.as_ref());
        } else if is(option, &["-init"]) {
            if let Some(file) = &option.value {
                c.read(file, AccessVia::Flag);
            }
            c.read_only = false;
            c.ask("`sqlite3 -init` runs statements from a file the analysis cannot see".to_owned());
        }
    }
    let mut operands = parsed.operands.into_iter();
    let named = operands.next();
    commands.extend(operands);
    // A `file:` name is a URI whose parameters choose how the file is opened (`file:app.db?mode=rw`): the file it
    // names is the database, and it is not taken as only read.
    let uri_file = named
        .filter(|db| db.literal)
        .and_then(|db| uri_path(&db.text))
        .map(|path| Word::literal(&path));
    let database = uri_file.as_ref().or(named);
    if named.is_some_and(|db| !db.literal || db.text.starts_with("file:")) {
        c.read_only = false;
    }
    if let Some(db) = database.filter(|db| db.literal && db.text != ":memory:" && !db.text.is_empty()) {
        c.read(db, AccessVia::Operand);
    }
    // Statements the analysis does not see (from standard input, a word only known at run time) may change the
    // database.
    let mut unseen = commands.is_empty() && !prints_only;
    let mut effects = SqlEffects::default();
    for command in commands {
        if command.literal {
            sql::sqlite(&command.text, &mut effects);
        } else {
            unseen = true;
        }
    }
    unseen |= effects.unknown.is_some();
    if unseen {
        c.read_only = false;
        if !read_only_database
            && let Some(db) = database.filter(|db| db.literal && db.text != ":memory:" && !db.text.is_empty())
        {
            c.changes_as(CommandClass::Write);
            c.write(db, AccessVia::Operand);
        }
    }
    sql_effects(effects, read_only_database, database, c);
}

/// The file a `file:` URI of sqlite names (`file:app.db?mode=rw`, `file:///abs/app.db`, `file://localhost/x`), as
/// a path; `None` for another name, or one with percent escapes, which the analysis does not decode.
fn uri_path(text: &str) -> Option<String> {
    let rest = text.strip_prefix("file:")?;
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    if rest.contains('%') {
        return None;
    }
    let path = match rest.strip_prefix("//") {
        Some(authority_and_path) => authority_and_path.get(authority_and_path.find('/')?..)?,
        None => rest,
    };
    (!path.is_empty()).then(|| path.to_owned())
}

fn sql_effects(effects: SqlEffects, read_only_database: bool, database: Option<&Word>, c: &mut Classified) {
    if effects.changes_database.is_some() && !read_only_database {
        c.changes_as(CommandClass::Write);
        if let Some(db) = database.filter(|db| db.literal && db.text != ":memory:" && !db.text.is_empty()) {
            c.write(db, AccessVia::Operand);
        }
    }
    for file in &effects.writes {
        c.changes_as(CommandClass::Write);
        c.write(&Word::literal(file), AccessVia::Flag);
    }
    for file in &effects.reads {
        c.read(&Word::literal(file), AccessVia::Flag);
    }
    for code in effects.shell {
        c.changes_as(CommandClass::Exec);
        c.ask("a `sqlite3` dot-command runs shell code (`.shell`, `.system`, `.output |…`)".to_owned());
        c.code.push(Code {
            text: code,
            literal: true,
            kind: LocationKind::ShellString,
            via: "sqlite3 .shell".to_owned(),
        });
    }
    for reason in effects.unseen {
        c.changes_as(CommandClass::Exec);
        c.ask(format!("the SQL of `sqlite3`: {reason}"));
    }
    if effects.unknown.is_some() {
        c.read_only = false;
    }
}

/// `ffprobe [OPTIONS] INPUT`: reads the media file it is given and prints what it holds. `-o FILE` writes its
/// output to a file and `-report` a log in the working directory; an input that is a URL (`http://…`, `tcp:`,
/// `concat:`) reaches whatever the protocol reaches; an option the table does not know (a demuxer's own, such as
/// `-f concat -safe 0`) is not known to only read.
pub(super) fn ffprobe(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let args = single_dashed(args);
    let parsed = options::read(&args, &knowledge::FFPROBE);
    if parsed.dynamic {
        c.read_only = false;
    }
    let mut inputs: Vec<&Word> = Vec::new();
    for option in &parsed.options {
        if !option.known {
            c.read_only = false;
        } else if is(option, &["-o"]) {
            c.changes_as(CommandClass::Write);
            if let Some(file) = &option.value {
                c.write(file, AccessVia::Flag);
            }
        } else if is(option, &["-report"]) {
            c.changes_as(CommandClass::Write);
        } else if is(option, &["-i"]) {
            inputs.extend(option.value.as_ref());
        }
    }
    inputs.extend(parsed.operands);
    for input in inputs {
        media_input(input, c);
    }
}

/// An input of a media tool: a file (`file:` or a path), standard input (`-`, `pipe:`), or a protocol URL.
fn media_input(input: &Word, c: &mut Classified) {
    if !input.literal {
        c.read_only = false;
        return;
    }
    let text = input.text.as_str();
    // ffmpeg reads a protocol from any name with a `:` (`http:`, `tcp:`, `concat:`, `subfile,,start,…:`); only
    // `file:` and `pipe:` (standard input) read no more than a path names.
    match text.split_once(':') {
        None if text == "-" => {}
        None => c.read(input, AccessVia::Operand),
        Some(("file", _)) => c.read(&input.after("file:"), AccessVia::Operand),
        Some(("pipe", _)) => {}
        Some(_) => {
            c.read_only = false;
            c.online(format!(
                "`ffprobe {text}` opens a protocol URL, which may reach the network"
            ));
        }
    }
}

/// `mediainfo [OPTIONS] FILE…`: prints what media files hold. `--LogFile=FILE` writes FILE, `--Output=file://T`
/// and `--Inform=file://T` read the template T, an input that is a URL (`https://…`) is fetched, and an option
/// this list does not know is not known to only read. Its options are `--Name=value`, the name in any case.
pub(super) fn mediainfo(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let mut operands_only = false;
    for arg in args {
        if !arg.literal {
            c.read_only = false;
            continue;
        }
        let text = arg.text.as_str();
        if operands_only || !text.starts_with('-') || text == "-" {
            media_url_or_file(arg, "mediainfo", c);
            continue;
        }
        if text == "--" {
            operands_only = true;
            continue;
        }
        let (name, value) = text.split_once('=').unwrap_or((text, ""));
        match name.to_ascii_lowercase().as_str() {
            "-f" | "--full" | "-h" | "--help" | "--version" | "--details" | "--language" | "--parsespeed"
            | "--info-parameters" | "--info-codecs" | "--info-version" => {}
            "--output" | "--inform" => {
                if let Some(template) = value.strip_prefix("file://") {
                    c.read(&Word::literal(template), AccessVia::Flag);
                }
            }
            "--logfile" => {
                c.changes_as(CommandClass::Write);
                c.write(&Word::literal(value), AccessVia::Flag);
            }
            _ => c.read_only = false,
        }
    }
}

/// An input of `mediainfo` or `exiftool`: a file, standard input (`-`), or a URL it fetches.
fn media_url_or_file(input: &Word, tool: &str, c: &mut Classified) {
    let text = input.text.as_str();
    if text == "-" {
        return;
    }
    if text.contains("://") {
        c.read_only = false;
        c.online(format!("`{tool} {text}` fetches a URL"));
        return;
    }
    c.read(input, AccessVia::Operand);
}

/// exiftool's options that only change how it prints, in lower case (`-j`, `-G1`, `-s2` are matched by their
/// letters, with a group or level number after them).
#[rustfmt::skip]
const EXIFTOOL_FLAGS: &[&str] = &[
    "a", "duplicates", "b", "binary", "e", "composite", "ee", "extractembedded", "f", "forceprint", "h",
    "htmlformat", "hex", "j", "json", "l", "long", "latin", "m", "ignoreminorerrors", "n", "printconv", "php", "q",
    "quiet", "r", "r.", "recurse", "csv", "struct", "t", "tab", "table", "u", "unknown", "unknown2", "v",
    "verbose", "x", "xmlformat", "z", "zip", "fast", "s", "short", "veryshort", "sort", "scanforxmp", "validate",
    "ver", "list", "listw", "listf", "listr", "listwf", "listg", "listd", "listx", "listgeo", "progress", "g",
];

/// exiftool's options that take the next word as a value that names no file, in lower case.
#[rustfmt::skip]
const EXIFTOOL_VALUES: &[&str] = &[
    "d", "dateformat", "c", "coordformat", "ext", "ext+", "extension", "x", "exclude", "lang", "charset", "sep",
    "separator", "i", "ignore", "listitem", "echo", "echo1", "echo2", "echo3", "echo4", "password", "fileorder",
    "csvdelim",
];

/// exiftool's options that write files, by their start in lower case: never read-only.
#[rustfmt::skip]
const EXIFTOOL_WRITES: &[&str] = &[
    "o", "out", "w", "textout", "tagout", "overwrite_original", "delete_original", "restore_original",
    "tagsfromfile", "geo", "efile", "srcfile", "wm", "writemode",
];

/// exiftool's options that run Perl code (`-if EXPR`, advanced formatting of `-p FMT`, `-api Filter=…`, a
/// `-config` file, a `-use`d module), read more arguments from a file or standard input (`-@`, `-stay_open`), or
/// wait for a key (`-k`), by their start in lower case.
#[rustfmt::skip]
const EXIFTOOL_RUNS: &[&str] = &[
    "config", "execute", "stay_open", "if", "p", "printformat", "p-", "api", "userparam", "use", "@", "k", "pause",
];

/// `exiftool [OPTIONS] [-TAG…] FILE…`: prints the metadata of files (the tags `-TAG` names, or all), with
/// options that change how it prints. It writes with an assignment (`-TAG=VALUE`, `-TAG<SRC`, `-all=`), with
/// `-o`, `-w`, `-overwrite_original`, `-tagsFromFile`, `-geotag`, …, and runs Perl code with `-if`, `-p`
/// (advanced formatting), `-api Filter=…`, `-config`, `-use`: an option this list does not know as printing, and
/// whose name is not a tag's, is not known to only read. Options are whole words with one dash, in any case.
pub(super) fn exiftool(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let mut words = args.iter();
    let mut operands_only = false;
    while let Some(arg) = words.next() {
        if !arg.literal {
            c.read_only = false;
            continue;
        }
        let text = arg.text.as_str();
        let name = match text.strip_prefix('-') {
            Some(name) if !operands_only && !name.is_empty() => name,
            _ => {
                if text == "--" && !operands_only {
                    operands_only = true;
                } else {
                    media_url_or_file(arg, "exiftool", c);
                }
                continue;
            }
        };
        // `--NAME` excludes a tag, but an option spelt with two dashes is judged as the option would be.
        let lower = name.trim_start_matches('-').to_ascii_lowercase();
        // `-TAG=VALUE`, `-TAG+=VALUE`, `-TAG<SRC`, `-TAG>DST`, `-csv=FILE`: an assignment writes.
        if lower.contains(['=', '<', '>']) {
            c.changes_as(CommandClass::Write);
            continue;
        }
        let base = lower.trim_end_matches(|ch: char| ch.is_ascii_digit() || matches!(ch, ':' | '+' | '!'));
        let named = |list: &[&str]| {
            list.iter().any(|prefix| {
                lower == *prefix || base == *prefix || (prefix.len() > 2 && lower.starts_with(prefix))
            })
        };
        if named(EXIFTOOL_RUNS) {
            c.changes_as(CommandClass::Exec);
            continue;
        }
        if named(EXIFTOOL_WRITES) {
            c.changes_as(CommandClass::Write);
            continue;
        }
        if EXIFTOOL_VALUES.contains(&lower.as_str()) {
            if words.next().is_none_or(|value| !value.literal) {
                c.read_only = false;
            }
            continue;
        }
        if lower == "diff" {
            match words.next() {
                Some(other) if other.literal => c.read(other, AccessVia::Flag),
                _ => c.read_only = false,
            }
            continue;
        }
        if EXIFTOOL_FLAGS.contains(&base) {
            continue;
        }
        // `-Model`, `-EXIF:All`, `--GPS*`, `-XMP-dc:Subject#`: a tag it prints (or leaves out).
        let tag = name
            .trim_start_matches('-')
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '_' | ':' | '*' | '?' | '#' | '-'));
        if !tag || name.trim_start_matches('-').is_empty() {
            c.read_only = false;
        }
    }
    if args
        .iter()
        .any(|a| a.literal && matches!(a.text.to_ascii_lowercase().as_str(), "-r" | "-r." | "-recurse"))
    {
        c.recursive = Recursion::All;
    }
}

/// `tshark -r FILE`: reads a capture file and prints its packets. Without `-r` it captures live traffic (not
/// read-only); `-w FILE` and the export options write files, `-X lua_script:…` runs a Lua script, `-o` sets
/// preferences (some of which name files), and an option the table does not know is not known to only read.
pub(super) fn tshark(args: &[Word], c: &mut Classified) {
    let prints = &["-v", "--version", "-h", "--help", "-G", "-D", "--list-interfaces"];
    capture_reader(args, &knowledge::TSHARK, prints, c);
}

/// `tcpdump -r FILE`: reads a capture file (`-w` writes one); without `-r` it captures live traffic.
pub(super) fn tcpdump(args: &[Word], c: &mut Classified) {
    // `-v` is verbose output here, not the version.
    let prints = &[
        "--version",
        "-h",
        "--help",
        "-D",
        "--list-interfaces",
        "-J",
        "--list-time-stamp-types",
    ];
    capture_reader(args, &knowledge::TCPDUMP, prints, c);
}

/// A packet analyser (`tshark`, `tcpdump`): read-only when it reads a capture file (`-r`) or only prints, with its
/// options' effects (`-w` writes); otherwise it captures live traffic. `prints`: its options that only print
/// (its version, its help, the list of interfaces).
fn capture_reader(args: &[Word], syntax: &knowledge::Syntax, prints: &[&str], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let parsed = options::read(args, syntax);
    if parsed.dynamic || parsed.options.iter().any(|o| !o.known) {
        c.read_only = false;
    }
    flags::effects(&parsed.effects(syntax), c);
    let reads_a_file = parsed.has(&["-r", "--read-file"]);
    let prints_only = parsed.has(prints);
    if !reads_a_file && !prints_only {
        // Its operands are then a capture filter; a read filter after `-r` names no file either.
        c.changes_as(CommandClass::Interactive);
    }
}
