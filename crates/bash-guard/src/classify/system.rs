//! Commands that act on processes, services and other machines: `kill`, `init`, `systemctl`, `rsync`, `openssl`.

use crate::analysis::{AccessVia, CommandClass};
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

/// `seq [FIRST [INCREMENT]] LAST`: as many numbers as the operands say; past the bound, or without end (`inf`), it
/// prints without (practical) end.
pub(super) fn seq(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let parsed = options::read(args, &knowledge::SEQ);
    let numbers: Option<Vec<f64>> = parsed
        .operands
        .iter()
        .map(|o| o.literal.then(|| o.text.parse::<f64>().ok()).flatten())
        .collect();
    let count = match numbers.as_deref() {
        Some([last]) => Some(*last),
        Some([first, last]) => Some(last - first),
        Some([first, step, last]) if *step != 0.0 => Some((last - first) / step),
        // A bound only known at run time may be anything; seq without numbers prints nothing.
        _ => None,
    };
    let literal = parsed.operands.iter().all(|o| o.literal);
    if literal && count.is_some_and(|n| !n.is_finite() || n > knowledge::MAX_GENERATED_WORDS as f64) {
        c.unbounded = Some(format!(
            "`seq {}` prints more than {} numbers",
            args.iter().map(|a| a.text.as_str()).collect::<Vec<_>>().join(" "),
            knowledge::MAX_GENERATED_WORDS
        ));
    }
}

/// `sleep DURATION…` (`5`, `1.5m`, `2h`, `infinity`): past ten minutes, or without end, it holds the line.
pub(super) fn sleep(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let mut total = 0.0f64;
    for arg in args.iter().filter(|a| a.literal && !a.text.starts_with('-')) {
        let text = arg.text.as_str();
        let (number, unit) = match text.char_indices().last() {
            Some((at, 's')) => (text.get(..at).unwrap_or_default(), 1.0),
            Some((at, 'm')) => (text.get(..at).unwrap_or_default(), 60.0),
            Some((at, 'h')) => (text.get(..at).unwrap_or_default(), 3600.0),
            Some((at, 'd')) => (text.get(..at).unwrap_or_default(), 86400.0),
            _ => (text, 1.0),
        };
        // `inf` and `infinity` parse as the infinite number.
        total += number.parse::<f64>().map_or(0.0, |n| n * unit);
    }
    if !total.is_finite() || total > knowledge::MAX_SLEEP_SECONDS {
        c.unbounded = Some(format!(
            "`sleep {}` waits longer than a shell call may run (ten minutes)",
            args.iter().map(|a| a.text.as_str()).collect::<Vec<_>>().join(" ")
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
        _ => {}
    }
}

/// `rsync`: a copy between local paths is a write; returns whether it reaches another machine.
pub(super) fn rsync(args: &[Word], c: &mut Classified) -> bool {
    let parsed = options::read(args, &knowledge::RSYNC);
    if parsed.has(&["-e", "--rsh"]) {
        c.ask("`rsync -e` runs a remote shell program".to_owned());
    }
    let remote = parsed.operands.iter().any(|a| {
        a.text.starts_with("rsync://")
            || a.text
                .split_once(':')
                .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'))
    });
    if remote {
        return true;
    }
    c.class = CommandClass::Write;
    if let Some((last, sources)) = parsed.operands.split_last() {
        sources.iter().for_each(|s| c.read(s, AccessVia::Operand));
        c.write(last, AccessVia::Operand);
    }
    false
}

/// `openssl`: returns whether the sub-command connects to or listens on the network.
pub(super) fn openssl(args: &[Word], c: &mut Classified) -> bool {
    c.class = CommandClass::Write;
    let sub = args.first().filter(|a| a.literal).map(|a| a.text.as_str());
    sub.is_some_and(|s| knowledge::OPENSSL_NETWORK.contains(&s))
}
