//! Commands that act on processes, services and other machines: `kill`, `init`, `systemctl`, `rsync`, `openssl`.

use crate::analysis::{AccessVia, CommandClass, Effect};
use crate::knowledge;
use crate::options::{self, Reader, Token};
use crate::word::Word;

use super::Classified;

pub(super) fn kill(args: &[Word], c: &mut Classified) {
    c.class = CommandClass::Write;
    let mut reader = Reader::new(args, &knowledge::KILL);
    while let Some(token) = reader.next() {
        match token {
            Token::Option(option) => {
                if option.is_any(&["-l", "-L", "--list", "--table"]) {
                    c.read_only_as(CommandClass::ReadOnly);
                    return;
                }
                // The signal (`-9`, `-KILL`, `-s KILL`): every word after it is a process.
                reader.end_options();
            }
            Token::Operand { word, .. } => {
                if word.text == "-1" {
                    c.class = CommandClass::Destructive;
                    c.deny("`kill -1` signals every process the user can reach".to_owned());
                }
            }
        }
    }
}

/// `seq [FIRST [INCREMENT]] LAST`: as many numbers as the operands say; past the bound, without end (`inf`, an
/// increment that is zero or rounds to it), or not known before it runs (a word only known at run time, a number
/// written in a form read here differently than by `seq`, such as hex or with blanks), it asks. A negative number
/// is an operand, as `seq` reads it (`seq -5 5`, [`knowledge::SEQ`]).
pub(super) fn seq(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let parsed = options::read(args, &knowledge::SEQ);
    let operands = &parsed.operands;
    let numbers: Option<Vec<f64>> = operands
        .iter()
        .map(|o| plain_number(&o.text, o.literal))
        .collect();
    let count = match numbers.as_deref() {
        Some([]) => Some(0.0),
        Some([last]) => Some(*last),
        Some([first, last]) => Some(last - first),
        Some([first, step, last]) if *step != 0.0 => Some((last - first) / step),
        Some([_, _, _]) => Some(f64::INFINITY),
        // Too many operands: seq refuses them.
        Some(_) => Some(0.0),
        None => None,
    };
    if parsed.dynamic || count.is_none_or(|n| !n.is_finite() || n > knowledge::MAX_GENERATED_WORDS as f64) {
        c.unbounded = Some(format!(
            "`seq {}` prints more than {} numbers, or as many as only the run knows",
            args.iter().map(|a| a.text.as_str()).collect::<Vec<_>>().join(" "),
            knowledge::MAX_GENERATED_WORDS
        ));
    }
}

/// The value of a literal number written in decimal (`5`, `-1.5`, `1e3`, `inf`); `None` for anything else (a word
/// only known at run time, hex, blanks), whose value this does not read the way the command does.
fn plain_number(text: &str, literal: bool) -> Option<f64> {
    let infinite = matches!(text.trim_start_matches(['-', '+']), "inf" | "infinity");
    let decimal = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'));
    if !literal || !(infinite || decimal) {
        return None;
    }
    text.parse::<f64>().ok()
}

/// `sleep DURATION…` (`5`, `1.5m`, `2h`, `infinity`): the durations add up, and a number in a form read here
/// differently than by `sleep` (hex, blanks) or only known at run time counts as without end. The walker judges the
/// wait with the line's others (`classify::Classified::waits`).
pub(super) fn sleep(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let mut total = 0.0f64;
    for arg in args.iter().filter(|a| !(a.literal && a.text.starts_with('-'))) {
        let text = arg.text.as_str();
        let (number, unit) = match text.char_indices().last() {
            Some((at, 's')) => (text.get(..at).unwrap_or_default(), 1.0),
            Some((at, 'm')) => (text.get(..at).unwrap_or_default(), 60.0),
            Some((at, 'h')) => (text.get(..at).unwrap_or_default(), 3600.0),
            Some((at, 'd')) => (text.get(..at).unwrap_or_default(), 86400.0),
            _ => (text, 1.0),
        };
        // `inf` and `infinity` are the infinite number; what cannot be read is taken as without end.
        total += plain_number(number, arg.literal).map_or(f64::INFINITY, |n| n * unit);
    }
    c.waits = total;
}

/// `factor [NUMBER…]` (without numbers it reads them from standard input): a number of more than
/// [`knowledge::MAX_FACTOR_DIGITS`] digits, or one only known at run time, may take without practical end.
pub(super) fn factor(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let small = |a: &Word| {
        let digits = a.text.trim_start_matches('+');
        digits.len() <= knowledge::MAX_FACTOR_DIGITS && digits.chars().all(|c| c.is_ascii_digit())
    };
    let large = args
        .iter()
        .find(|a| !(a.literal && (a.text.starts_with('-') || small(a))));
    if let Some(large) = large {
        c.unbounded = Some(format!(
            "`factor {}` may take without end: a number of more than {} digits, or one only the run knows",
            large.text,
            knowledge::MAX_FACTOR_DIGITS
        ));
    }
}

/// `init`/`telinit`: runlevel 0 or 6 stops the machine.
pub(super) fn init(name: &str, args: &[Word], c: &mut Classified) {
    c.class = CommandClass::Write;
    if args.iter().any(|a| a.text == "0" || a.text == "6") {
        c.class = CommandClass::Destructive;
        c.deny(format!("`{name}` to runlevel 0 or 6 stops the machine"));
    }
}

pub(super) fn systemctl(args: &[Word], c: &mut Classified) {
    c.class = CommandClass::Write;
    let parsed = options::read(args, &knowledge::SYSTEMCTL);
    match parsed.operands.first().map(|v| v.text.as_str()) {
        Some(v) if knowledge::SYSTEMCTL_STOPS.contains(&v) => {
            c.class = CommandClass::Destructive;
            c.deny(format!("`systemctl {v}` stops the machine"));
        }
        Some(v) if knowledge::SYSTEMCTL_READS.contains(&v) => {
            c.class = CommandClass::ReadOnly;
            c.read_only = args.iter().all(|a| a.literal);
        }
        None if args.is_empty() => c.read_only_as(CommandClass::ReadOnly),
        // `systemctl start`, `enable --now`, `--user daemon-reload`: the service manager acts, outside the sandbox.
        verb => {
            c.effect = Effect::Remote(format!(
                "`systemctl{}` has the service manager start, stop or change services, outside the sandbox",
                verb.map(|v| format!(" {v}")).unwrap_or_default()
            ));
        }
    }
}

/// `rsync`: a copy between local paths is a write; returns whether it reaches another machine.
pub(super) fn rsync(args: &[Word], c: &mut Classified) -> bool {
    let parsed = options::read(args, &knowledge::RSYNC);
    if parsed.has(&["-e", "--rsh"]) {
        c.ask("`rsync -e` runs a remote shell program".to_owned());
    }
    for option in &parsed.options {
        let Some(value) = option.value.as_ref().filter(|v| v.text != "-") else {
            continue;
        };
        if option.is_any(knowledge::RSYNC_READS) {
            c.read(value, AccessVia::Flag);
        } else if option.is_any(knowledge::RSYNC_WRITES) {
            c.write(value, AccessVia::Flag);
        }
    }
    let remote = |a: &Word| super::remote::names_host(&a.text);
    let Some((last, sources)) = parsed.operands.split_last() else {
        return parsed.operands.iter().any(|a| remote(a));
    };
    // Each local source is read, and sent when the destination is another machine's (an upload); a local
    // destination is written, from another machine when a source is its (a download).
    // With `--remove-source-files` each local source file is removed once sent.
    let removes_sources = parsed.has(&["--remove-source-files"]);
    sources.iter().filter(|s| !remote(s)).for_each(|s| {
        c.read(s, AccessVia::Operand);
        if removes_sources {
            c.write(s, AccessVia::Operand);
        }
    });
    if !remote(last) {
        if sources.is_empty() {
            // `rsync DIR` lists it.
            c.read(last, AccessVia::Operand);
        } else {
            c.write(last, AccessVia::Operand);
        }
    }
    if remote(last) || sources.iter().any(|s| remote(s)) {
        return true;
    }
    c.class = CommandClass::Write;
    false
}

/// `openssl`: returns whether the sub-command connects to or listens on the network.
pub(super) fn openssl(args: &[Word], c: &mut Classified) -> bool {
    c.class = CommandClass::Write;
    // Its options are single-dash words, each followed by its value.
    let mut words = args.iter().skip(1);
    while let Some(word) = words.next() {
        let option = word.text.as_str();
        if !word.literal || !option.starts_with('-') {
            continue;
        }
        let is = |names: &[&str]| names.contains(&option);
        if is(knowledge::OPENSSL_LOADS) {
            c.ask_unseen(format!(
                "`openssl {option}` loads a shared library, code the analysis cannot see"
            ));
        }
        if !is(knowledge::OPENSSL_READS)
            && !is(knowledge::OPENSSL_WRITES)
            && !matches!(option, "-passin" | "-passout")
        {
            continue;
        }
        let Some(value) = words.next() else { break };
        if matches!(option, "-passin" | "-passout") {
            // `-passin file:PATH` reads the password from PATH.
            if let Some(path) = value.text.strip_prefix("file:").filter(|_| value.literal) {
                c.read(&Word::literal(path), AccessVia::Flag);
            }
        } else if is(knowledge::OPENSSL_WRITES) {
            c.write(value, AccessVia::Flag);
        } else {
            c.read(value, AccessVia::Flag);
        }
    }
    let sub = args.first().filter(|a| a.literal).map(|a| a.text.as_str());
    sub.is_some_and(|s| knowledge::OPENSSL_NETWORK.contains(&s))
}
