//! Container engines' command lines (`docker`, `podman`, `nerdctl`, `docker-compose`): the files of this machine
//! they hand to the engine. What the engine then does acts as root outside any sandbox (remote.rs says so); the
//! files are checked like any other: a bind mount's source (`-v SRC:DST`, `--mount type=bind,source=SRC`), read
//! with `ro`/`readonly` and written otherwise; an env file, a compose file or a Dockerfile (`-f`), a build's
//! secrets and SSH keys, `cp`'s side on this machine, `save -o`, `load -i`. The words after the image of `run`
//! and `create` (or the container of `exec`) are the container's command: its paths are the container's.
//!
//! A mount and a build context hand the engine every file below them: they are read as a recursive search is
//! (`grep -r`), so that one reaching a secret file asks.
//!
//! The engines read their options as Go's pflag does: anywhere before the first operand of a level, `--name=value`
//! or `--name value`, short options in clusters (`-it`), the last one of a cluster taking the rest or the next
//! word. An option not listed among a level's flags is read as taking a value: a value read as an operand would
//! end the options early and hide the mounts after it.

use crate::analysis::{AccessVia, CommandClass};
use crate::knowledge::Recursion;
use crate::word::{Word, path_word};

use super::Classified;

/// The engine's own flags (before the sub-command) that take no value.
const GLOBAL_FLAGS: &[&str] = &[
    "-D",
    "--debug",
    "--tls",
    "--tlsverify",
    "-v",
    "--version",
    "-h",
    "--help",
];

/// The engine's own options whose value is a file or directory it reads (its configuration holds credentials).
const GLOBAL_READS: &[&str] = &["--config", "--tlscacert", "--tlscert", "--tlskey"];

/// Groups of sub-commands (`docker container run`, `docker image build`), with the flags of their own level.
const GROUPS: &[&str] = &["container", "image", "builder", "buildx"];

/// The flags of `run` and `create` (`docker`, `podman`, `nerdctl`) that take no value.
const RUN_FLAGS: &[&str] = &[
    "-d",
    "--detach",
    "-i",
    "--interactive",
    "-t",
    "--tty",
    "--rm",
    "--privileged",
    "--init",
    "-P",
    "--publish-all",
    "--read-only",
    "--sig-proxy",
    "--no-healthcheck",
    "--oom-kill-disable",
    "--help",
    "-q",
    "--quiet",
    "--disable-content-trust",
    "--use-api-socket",
    "--replace",
    "--no-hosts",
    "--rmi",
];

/// The flags of `exec` that take no value.
const EXEC_FLAGS: &[&str] = &[
    "-d",
    "--detach",
    "-i",
    "--interactive",
    "-t",
    "--tty",
    "--privileged",
    "--help",
    "-T",
    "--no-TTY",
];

/// The flags of `cp` that take no value.
const CP_FLAGS: &[&str] = &[
    "-a",
    "--archive",
    "-L",
    "--follow-link",
    "-q",
    "--quiet",
    "--help",
];

/// The flags of `build` that take no value.
const BUILD_FLAGS: &[&str] = &[
    "--no-cache",
    "--pull",
    "-q",
    "--quiet",
    "--rm",
    "--force-rm",
    "--squash",
    "--load",
    "--push",
    "--help",
    "--compress",
    "--disable-content-trust",
    "--check",
];

/// The flags of `docker compose` (and `docker-compose`) before its sub-command that take no value.
const COMPOSE_FLAGS: &[&str] = &[
    "--compatibility",
    "--dry-run",
    "--all-resources",
    "--help",
    "-h",
    "--verbose",
    "--no-ansi",
    "-v",
    "--version",
];

/// The flags of `docker compose run` that take no value.
const COMPOSE_RUN_FLAGS: &[&str] = &[
    "-d",
    "--detach",
    "--rm",
    "-T",
    "--no-TTY",
    "--no-deps",
    "--service-ports",
    "-P",
    "--use-aliases",
    "-i",
    "--interactive",
    "-t",
    "--tty",
    "--build",
    "--remove-orphans",
    "--quiet-pull",
    "--help",
    "-q",
    "--quiet",
];

/// One option of a level: its name (`-v`, `--volume`) and its value, when it takes one.
struct Opt<'a> {
    name: String,
    value: Option<std::borrow::Cow<'a, Word>>,
}

/// The options of one level of `args` (until its first operand or `--`), and where its operands start.
fn level<'a>(args: &'a [Word], flags: &[&str]) -> (Vec<Opt<'a>>, usize) {
    let mut options = Vec::new();
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let text = word.text.as_str();
        if text == "--" {
            return (options, i + 1);
        }
        if !word.literal || !text.starts_with('-') || text == "-" {
            return (options, i);
        }
        if let Some(long) = text.strip_prefix("--") {
            match long.split_once('=') {
                Some((name, _)) => options.push(Opt {
                    name: format!("--{name}"),
                    value: Some(std::borrow::Cow::Owned(word.after(&format!("--{name}=")))),
                }),
                None if flags.contains(&text) => options.push(Opt {
                    name: text.to_owned(),
                    value: None,
                }),
                None => {
                    i += 1;
                    options.push(Opt {
                        name: text.to_owned(),
                        value: args.get(i).map(std::borrow::Cow::Borrowed),
                    });
                }
            }
            i += 1;
            continue;
        }
        // A cluster of short options: flags, then at most one option taking the rest of the word or the next one.
        let letters = text.get(1..).unwrap_or_default();
        for (at, letter) in letters.char_indices() {
            let name = format!("-{letter}");
            if flags.contains(&name.as_str()) {
                options.push(Opt { name, value: None });
                continue;
            }
            let rest = letters.get(at + letter.len_utf8()..).unwrap_or_default();
            let value = if rest.is_empty() {
                i += 1;
                args.get(i).map(std::borrow::Cow::Borrowed)
            } else {
                let prefix = text.get(..text.len() - rest.len()).unwrap_or_default();
                let attached = word.after(prefix);
                Some(std::borrow::Cow::Owned(match attached.text.strip_prefix('=') {
                    Some(_) => attached.after("="),
                    None => attached,
                }))
            };
            options.push(Opt { name, value });
            break;
        }
        i += 1;
    }
    (options, i)
}

/// `docker`, `podman`, `nerdctl` (`compose`: `docker-compose`): never read-only; the files of this machine its
/// words name.
pub(super) fn container(name: &str, args: &[Word], c: &mut Classified) {
    c.changes_as(CommandClass::Write);
    if name == "docker-compose" {
        compose(args, c);
        return;
    }
    let (options, start) = level(args, GLOBAL_FLAGS);
    for option in &options {
        if GLOBAL_READS.contains(&option.name.as_str())
            && let Some(value) = &option.value
        {
            c.read(value, AccessVia::Flag);
        }
    }
    let rest = args.get(start..).unwrap_or_default();
    let Some((sub, rest)) = rest.split_first() else {
        return;
    };
    let (sub, rest) = if GROUPS.contains(&sub.text.as_str()) {
        let (_, at) = level(rest, &["--help"]);
        match rest.get(at..).unwrap_or_default().split_first() {
            Some((sub, rest)) => (sub, rest),
            None => return,
        }
    } else {
        (sub, rest)
    };
    match sub.text.as_str() {
        "compose" => compose(rest, c),
        _ => sub_command(&sub.text, rest, c, false),
    }
}

/// A sub-command of an engine, or of compose (`compose`: its `run` takes a service, not an image).
fn sub_command(sub: &str, args: &[Word], c: &mut Classified, compose: bool) {
    let flags = match (sub, compose) {
        ("run", true) => COMPOSE_RUN_FLAGS,
        ("run" | "create", false) => RUN_FLAGS,
        ("exec", _) => EXEC_FLAGS,
        ("cp", _) => CP_FLAGS,
        ("build", false) => BUILD_FLAGS,
        ("save" | "load" | "export" | "import", false) => &["-q", "--quiet", "--help"],
        // Other sub-commands name no file of this machine (`ps`, `logs -f`, `up -d`, `images`).
        _ => return,
    };
    let (options, start) = level(args, flags);
    for option in &options {
        let Some(value) = option.value.as_deref() else {
            continue;
        };
        match (sub, option.name.as_str()) {
            ("run" | "create", "-v" | "--volume") => volume(value, c),
            ("run" | "create", "--mount") => mount(value, c),
            ("run" | "create" | "exec", "--env-file" | "--label-file") => c.read(value, AccessVia::Flag),
            ("run" | "create", "--cidfile") => c.write(value, AccessVia::Flag),
            ("build", "-f" | "--file") | ("load", "-i" | "--input") => c.read(value, AccessVia::Flag),
            ("build", "--iidfile" | "--metadata-file") | ("save" | "export", "-o" | "--output") => {
                c.write(value, AccessVia::Flag);
            }
            ("build", "--secret" | "--ssh") => build_secret(value, c),
            _ => {}
        }
    }
    let operands = args.get(start..).unwrap_or_default();
    match sub {
        "cp" => copy(operands, c),
        // The build context is read whole (but what `.dockerignore` leaves out) and sent to the engine.
        "build" => {
            if let Some(context) = operands.first().filter(|w| !is_url(&w.text) && w.text != "-") {
                c.read(context, AccessVia::Operand);
                c.recursive = Recursion::All;
            }
        }
        "import" => {
            if let Some(file) = operands.first().filter(|w| !is_url(&w.text) && w.text != "-") {
                c.read(file, AccessVia::Operand);
            }
        }
        _ => {}
    }
}

/// `docker compose [OPTIONS] SUB …`: its files (`-f`, `--env-file`, `--project-directory`), then its `run`, `exec`
/// and `cp` as the engine's.
fn compose(args: &[Word], c: &mut Classified) {
    let (options, start) = level(args, COMPOSE_FLAGS);
    for option in &options {
        if let Some(value) = option.value.as_deref()
            && matches!(
                option.name.as_str(),
                "-f" | "--file" | "--env-file" | "--project-directory"
            )
        {
            c.read(value, AccessVia::Flag);
        }
    }
    if let Some((sub, rest)) = args.get(start..).unwrap_or_default().split_first() {
        match sub.text.as_str() {
            "run" | "exec" | "cp" => sub_command(&sub.text, rest, c, true),
            _ => {}
        }
    }
}

/// Whether a mount's source names a place on this machine rather than a named volume: a path (`/data`, `./data`,
/// `~/x`, `a/b`).
fn host_path(source: &str) -> bool {
    source.starts_with(['/', '.', '~']) || source.contains('/')
}

/// `-v SRC:DST[:OPTIONS]`: the source, when it is a place on this machine, read with `ro` (or `readonly`) among
/// the options and written otherwise. A value only known at run time is a write to a place only known then.
pub(super) fn volume(value: &Word, c: &mut Classified) {
    let Some(text) = value.path() else {
        unseen(value, c);
        return;
    };
    let mut parts = text.splitn(3, ':');
    let (Some(source), Some(_)) = (parts.next(), parts.next()) else {
        // `-v /data`: an anonymous volume at that place inside the container.
        return;
    };
    if !host_path(source) {
        return;
    }
    let read_only = parts
        .next()
        .is_some_and(|options| options.split(',').any(|o| o == "ro" || o == "readonly"));
    mounted(source, read_only, c);
}

/// `--mount type=bind,source=SRC,target=DST[,readonly]`: the source, when it is a place on this machine. The
/// engine reads the value as CSV (a field may be quoted) and its keys in any case (`SOURCE=`, `Src=`); a volume of
/// the local driver binds the place its `volume-opt=device=…` names.
pub(super) fn mount(value: &Word, c: &mut Classified) {
    let Some(text) = value.path() else {
        unseen(value, c);
        return;
    };
    let mut source = None;
    let mut read_only = false;
    let mut devices = Vec::new();
    for field in csv_fields(&text) {
        let (key, value) = field.split_once('=').unwrap_or((field.as_str(), "true"));
        match key.to_ascii_lowercase().as_str() {
            "source" | "src" => source = Some(value.to_owned()),
            "readonly" | "ro" => read_only = matches!(value.to_ascii_lowercase().as_str(), "true" | "1"),
            "volume-opt" => {
                if let Some((option, device)) = value.split_once('=')
                    && option.eq_ignore_ascii_case("device")
                {
                    devices.push(device.to_owned());
                }
            }
            _ => {}
        }
    }
    if let Some(source) = source.filter(|s| host_path(s)) {
        mounted(&source, read_only, c);
    }
    for device in devices {
        mounted(&device, read_only, c);
    }
}

/// The fields of a CSV record as Go's `encoding/csv` reads one line: a field that starts with `"` runs to the
/// closing quote, `""` inside it being one quote.
fn csv_fields(text: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        let mut field = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(ch) = chars.next() {
                if ch == '"' {
                    if chars.peek() == Some(&'"') {
                        chars.next();
                        field.push('"');
                    } else {
                        break;
                    }
                } else {
                    field.push(ch);
                }
            }
        }
        for ch in chars.by_ref() {
            if ch == ',' {
                break;
            }
            field.push(ch);
        }
        let end = chars.peek().is_none();
        fields.push(field);
        if end {
            return fields;
        }
    }
}

/// A value holding a place of this machine that is only known at run time (`src=$DIR/x`): a write (the stricter
/// access) where it names, which the analysis cannot see, so the line asks.
fn unseen(value: &Word, c: &mut Classified) {
    c.write(&Word::unknown(&value.text), AccessVia::Flag);
}

/// A place of this machine mounted into a container: what the container may read, every file below it (a
/// search of it, as `grep -r`), and, unless mounted read-only, write.
pub(super) fn mounted(source: &str, read_only: bool, c: &mut Classified) {
    let word = path_word(source);
    c.read(&word, AccessVia::Operand);
    c.recursive = Recursion::All;
    if !read_only {
        c.write(&word, AccessVia::Flag);
    }
}

/// `build --secret id=x,src=FILE|env=NAME` and `--ssh default=KEY[,KEY]`: the files and the host's variables the
/// build is given (CSV, keys in any case). A secret with neither `src` nor `env` is the variable named by its id,
/// else the file of that name.
pub(super) fn build_secret(value: &Word, c: &mut Classified) {
    let Some(text) = value.path() else {
        unseen(value, c);
        return;
    };
    let mut id = None;
    let mut given = false;
    for field in csv_fields(&text) {
        let (key, rest) = match field.split_once('=') {
            Some((key, rest)) => (Some(key.to_ascii_lowercase()), rest.to_owned()),
            None => (None, field.clone()),
        };
        let file = match key.as_deref() {
            Some("src" | "source") => rest,
            Some("env") => {
                given = true;
                c.host_env.push(rest);
                continue;
            }
            Some("id") => {
                id = Some(rest);
                continue;
            }
            Some("type" | "required") => continue,
            // `--ssh default=~/.ssh/id_ed25519`; `--ssh default` alone is the agent's socket.
            Some(_) => rest,
            None if host_path(&field) => field,
            None => continue,
        };
        given = true;
        c.read(&path_word(&file), AccessVia::Flag);
    }
    if let Some(id) = id.filter(|_| !given) {
        c.read(&path_word(&id), AccessVia::Flag);
        c.host_env.push(id);
    }
}

/// `cp SRC DST`: the side that is not `CONTAINER:PATH` is a place on this machine, read as the source and written
/// as the destination; `-` is a tar stream on standard input or output.
fn copy(operands: &[Word], c: &mut Classified) {
    let in_container = |w: &Word| {
        w.literal
            && w.text
                .split_once(':')
                .is_some_and(|(name, _)| !name.is_empty() && !name.contains('/'))
    };
    let last = operands.len().saturating_sub(1);
    for (index, word) in operands.iter().enumerate() {
        if word.text == "-" || in_container(word) {
            continue;
        }
        if index == last && index > 0 {
            c.write(word, AccessVia::Operand);
        } else {
            c.read(word, AccessVia::Operand);
        }
    }
}

/// Whether a build context or an import names a URL (`https://…`, `git@host:…`) rather than a file.
fn is_url(text: &str) -> bool {
    text.contains("://") || text.starts_with("git@")
}
