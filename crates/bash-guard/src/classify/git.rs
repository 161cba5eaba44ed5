//! git: its own options, the sub-command, and when the sub-command only reads.

use crate::analysis::{AccessVia, CommandClass};
use crate::knowledge::{self, Effect, GitRule};
use crate::options::{self, Reader, Token, abbreviates};
use crate::word::Word;

use super::{Classified, flags};

pub(super) fn git(args: &[Word], c: &mut Classified) {
    c.class = CommandClass::Write;
    let mut reader = Reader::new(args, &knowledge::GIT_GLOBAL);
    let mut global_ok = true;
    // The index of the sub-command.
    let mut i = args.len();
    for token in reader.by_ref() {
        match token {
            Token::Option(option) => {
                for effect in option.effects(&knowledge::GIT_GLOBAL) {
                    if let Effect::HiddenExec(reason) = effect {
                        c.ask(reason.to_owned());
                    }
                    global_ok = false;
                }
                // `git -C DIR` and `--git-dir`/`--work-tree` read the repository there, which may be outside the
                // roots.
                if knowledge::GIT_GLOBAL_DIRS.contains(&option.name.as_str())
                    && let Some(dir) = &option.value
                {
                    c.read(dir, AccessVia::Flag);
                }
                if !option.known {
                    global_ok = false;
                }
            }
            Token::Operand { at, word } => {
                if !word.literal {
                    global_ok = false;
                }
                i = at;
                break;
            }
        }
    }
    let rest = args.get(i + 1..).unwrap_or_default();
    let s = options::read(rest, &knowledge::GIT_SUB);
    c.read_only = true;
    let writes_before = c.writes.len();
    flags::effects(&s.effects(&knowledge::GIT_SUB), c);
    let effects_ok = c.read_only && c.writes.len() == writes_before;
    let Some(sub) = args.get(i) else {
        // `git`, `git --version`: prints.
        c.class = CommandClass::ReadOnly;
        c.read_only = global_ok;
        return;
    };
    let rule = knowledge::GIT_SUBCOMMANDS
        .iter()
        .find(|(name, _)| sub.literal && *name == sub.text)
        .map(|(_, r)| *r);
    let sub_name = if sub.literal { sub.text.as_str() } else { "" };
    if sub_name == "grep" && s.has(knowledge::GIT_GREP_PAGER) {
        c.class = CommandClass::Exec;
        c.ask("`git grep -O` runs a pager program".to_owned());
    }
    // A format only known at run time may hold such a placeholder too.
    let signed_format = s.options.iter().any(|option| {
        knowledge::GIT_FORMATS
            .iter()
            .any(|f| option.name == *f || abbreviates(&option.name, f))
            && option
                .value
                .as_ref()
                .is_some_and(|v| !v.literal || verifies_signatures(&v.text))
    });
    if signed_format {
        c.class = CommandClass::Exec;
        c.ask("a `%G` placeholder in the format runs the signature program from configuration".to_owned());
    }
    // `git SUB --help` and `git help TOPIC` show a manual page through `man` or a configured viewer program.
    let manual = s.options.iter().any(|o| o.is("--help"))
        || (sub_name == "help" && s.operands.first().is_some_and(|o| !o.text.starts_with('-')));
    // `git remote show NAME` asks the remote over the network unless `-n` is given.
    let queries_remote = sub_name == "remote"
        && s.operands.first().is_some_and(|o| o.text == "show")
        && s.operands.len() > 1
        && !s.has(&["-n"]);
    let read_only = match rule {
        None => false,
        Some(GitRule::Always) => true,
        Some(GitRule::Listing {
            list_flags,
            write_flags,
        }) => !s.has(write_flags) && (s.operands.is_empty() || s.has(list_flags)),
        Some(GitRule::Sub { subs, bare }) => match s.operands.first() {
            None => bare,
            Some(first) => subs.contains(&first.text.as_str()),
        },
        Some(GitRule::Config) => {
            // `git config NAME` reads; `git config NAME VALUE` and the editing options write.
            s.has(knowledge::GIT_CONFIG_READ)
                || s.operands
                    .first()
                    .is_some_and(|o| knowledge::GIT_CONFIG_READ_SUBS.contains(&o.text.as_str()))
                || (s.operands.len() == 1 && !s.has(knowledge::GIT_CONFIG_WRITE))
        }
    };
    c.read_only = read_only && global_ok && effects_ok && !s.dynamic && !manual && !queries_remote;
    if c.read_only {
        c.class = CommandClass::ReadOnly;
    }
}

/// Whether a git pretty format has a `%G…` placeholder (`%%` is a literal percent sign).
fn verifies_signatures(format: &str) -> bool {
    let mut chars = format.chars();
    while let Some(ch) = chars.next() {
        // The character after `%` is consumed either way, so `%%G` is a percent sign and a `G`.
        if ch == '%' && chars.next() == Some('G') {
            return true;
        }
    }
    false
}
