//! The shell's own state and the environment: `set`, `shopt`, `alias`, `enable`, `ulimit`/`umask`, what a
//! variable given to a command does, and the commands that print the environment (`env`, `printenv`, `ps e`).

use crate::analysis::{CommandClass, LocationKind};
use crate::knowledge::{self, DECLARE_PRINT, SET_OPTIONS, SHOPT, SHOPT_UNMODELLED};
use crate::options::{self, Reader, Token};
use crate::word::Word;

use super::{Classified, Code, State};

/// Whether a `*` pattern of the knowledge table (`LC_*`, `*_HOME`, `*PAGER*`) matches `name`.
fn matches_pattern(pattern: &str, name: &str) -> bool {
    match (pattern.strip_prefix('*'), pattern.strip_suffix('*')) {
        (Some(middle), Some(_)) if pattern.len() > 1 => {
            name.contains(middle.strip_suffix('*').unwrap_or(middle))
        }
        (Some(suffix), None) => name.ends_with(suffix),
        (None, Some(prefix)) => name.starts_with(prefix),
        _ => pattern == name,
    }
}

/// Whether giving `name` this value in a command's environment leaves what a read-only command does unchanged: an
/// allow-list of harmless variables (and of harmless values for a few), never a deny-list.
pub(crate) fn harmless_variable(name: &str, value: Option<&Word>) -> bool {
    knowledge::HARMLESS_VARIABLES
        .iter()
        .any(|p| matches_pattern(p, name))
        || harmless_value(name, value)
}

/// Whether `name` is harmless with this value (a pager that only prints, a trace to standard error), whatever
/// else its name may do.
pub(crate) fn harmless_value(name: &str, value: Option<&Word>) -> bool {
    let Some(value) = value.filter(|v| v.literal) else {
        return false;
    };
    if knowledge::PAGER_VARIABLES.contains(&name) {
        let mut words = value.text.split_whitespace();
        let pager = words.next().unwrap_or_default();
        return knowledge::HARMLESS_PAGERS.contains(&pager)
            && words.all(|w| {
                w.len() > 1 && w.starts_with('-') && w.chars().skip(1).all(|c| c.is_ascii_alphabetic())
            });
    }
    knowledge::HARMLESS_VALUES
        .iter()
        .any(|(pattern, values)| matches_pattern(pattern, name) && values.contains(&value.text.as_str()))
}

/// Whether a plain assignment to `name` (without `export`) may change what later commands run: the environment
/// may already export it.
pub(crate) fn environment_family(name: &str) -> bool {
    knowledge::ENVIRONMENT_FAMILIES
        .iter()
        .any(|p| matches_pattern(p, name))
        && !harmless_variable(name, None)
}

/// Whether a variable's name says it holds a credential (`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`): the
/// workspace's one list, which the kernel sandbox also keeps from a sandboxed command.
pub(crate) fn is_credential(name: &str) -> bool {
    agent_tool_traits::credential_variable(name).is_some()
}

/// The command prints the whole environment, where credentials live (API keys, tokens).
pub(super) fn prints_environment(name: &str, c: &mut Classified) {
    c.shows.push((
        format!("`{name}` prints the environment, which may hold credentials (API keys, tokens)"),
        Vec::new(),
    ));
}

/// `printenv [NAME…]`: every variable, or the named ones.
pub(super) fn printenv(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let parsed = options::read(args, &knowledge::GNU);
    if parsed.operands.is_empty() {
        prints_environment("printenv", c);
    }
    for name in parsed.operands {
        let reason = format!(
            "`printenv {}` prints a variable that may hold a credential",
            name.text
        );
        if !name.literal {
            c.ask(reason);
        } else if is_credential(&name.text) {
            c.shows.push((reason, vec![name.text.clone()]));
        }
    }
}

/// `ps`: BSD-style options without a dash that hold `e` print each process's environment.
pub(super) fn ps(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    for arg in args {
        let bsd =
            arg.literal && !arg.text.starts_with('-') && arg.text.chars().all(|ch| ch.is_ascii_alphabetic());
        if !arg.literal || (bsd && arg.text.contains('e')) {
            c.ask(format!(
                "`ps {}` may print the environment of every process, which holds credentials",
                arg.text
            ));
        }
    }
}

/// `set`: without arguments it prints every variable; `-k` and `-a` change how later commands get their
/// environment; the other options are modelled or change nothing a path or command check depends on.
pub(super) fn set(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    if args.is_empty() {
        c.ask("`set` prints every variable, which may hold credentials".to_owned());
        return;
    }
    let mut reader = Reader::new(args, &knowledge::SET);
    for token in reader.by_ref() {
        let Token::Option(option) = token else { break };
        let on = option.name.starts_with('-');
        let name = match option.name.get(1..) {
            Some("o") => match &option.value {
                // `set -o` alone prints the options.
                None => continue,
                Some(value) if value.literal => value.text.clone(),
                Some(value) => {
                    c.unmodelled(format!(
                        "`set -o {}` sets an option only known at run time",
                        value.text
                    ));
                    continue;
                }
            },
            Some(letter) => letter.to_owned(),
            None => continue,
        };
        match name.as_str() {
            "k" | "keyword" if on => c.state.push(State::Keyword),
            "a" | "allexport" if on => c.state.push(State::AllExport),
            other if SET_OPTIONS.contains(&other) => {}
            other => c.unmodelled(format!(
                "`set` changes the shell option `{other}`, which the analysis does not follow"
            )),
        }
    }
    if reader.saw_dynamic() {
        c.unmodelled("`set` sets options only known at run time".to_owned());
    }
}

/// `shopt [-pq] [-su] [-o] [NAME…]`: prints, or sets options; some make later globs match what the path check
/// does not expand (`dotglob`, `nocaseglob`, `nullglob`, `extglob`), or later words expand as aliases.
pub(super) fn shopt(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let parsed = options::read(args, &SHOPT);
    let sets = parsed.has(&["-s"]);
    let unsets = parsed.has(&["-u"]);
    if !sets && !unsets {
        return;
    }
    c.class = CommandClass::Write;
    if parsed.dynamic {
        c.unmodelled("`shopt` sets options only known at run time".to_owned());
    }
    for name in &parsed.operands {
        if !name.literal {
            c.unmodelled(format!(
                "`shopt` sets the option `{}`, only known at run time",
                name.text
            ));
        } else if sets && SHOPT_UNMODELLED.contains(&name.text.as_str()) {
            c.unmodelled(format!(
                "`shopt -s {}` changes what later globs match or how later words expand, which the analysis does not follow",
                name.text
            ));
        }
    }
}

/// `alias` prints; `alias NAME=VALUE` defines text that replaces the command word `NAME`: the text is code.
pub(super) fn alias(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    for arg in options::read(args, &knowledge::POSIX).operands {
        let Some((_, value)) = arg.text.split_once('=') else {
            continue;
        };
        c.class = CommandClass::Write;
        c.read_only = false;
        c.code.push(Code {
            text: value.to_owned(),
            literal: arg.literal,
            kind: LocationKind::Alias,
            via: "alias".to_owned(),
        });
    }
}

/// `enable` lists builtins; with names it turns them on or off; `-f FILE` loads one from a shared object.
pub(super) fn enable(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let parsed = options::read(args, &knowledge::ENABLE);
    if parsed.has(&["-f"]) {
        c.changes_as(CommandClass::Exec);
        c.ask_unseen("`enable -f` loads a builtin from a shared object, which runs its code".to_owned());
    }
    if !parsed.operands.is_empty() || parsed.has(&["-d"]) || parsed.dynamic {
        c.changes_as(CommandClass::Write);
    }
}

/// `ulimit` and `umask` print their setting, or change it with an operand.
pub(super) fn setting(args: &[Word], c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let parsed = options::read(args, &knowledge::SETTING);
    if !parsed.operands.is_empty() || parsed.dynamic {
        c.changes_as(CommandClass::Write);
    }
}

/// `cd`, `pushd`, `popd`: a move to a place only known at run time (`cd -`, `cd ~-`, `cd ~2`, `pushd +1`,
/// `popd`, `cd $DIR`), or to a bare name bash first looks for in each directory of `CDPATH` (which the
/// environment may set), leaves every later command's working directory unknown. `cd ./NAME`, `cd ../NAME`,
/// absolute and home paths do not search, and nor does any where the commands run without `CDPATH` in their
/// environment (`cdpath_unset`; a line that sets it is followed by the walker as a change of the environment).
pub(super) fn cd(name: &str, args: &[Word], cdpath_unset: bool, c: &mut Classified) {
    c.read_only_as(CommandClass::ReadOnly);
    let parsed = options::read(args, &knowledge::CD);
    // `pushd -n`/`popd -n` only change the stack.
    if name != "cd" && name != "chdir" && parsed.has(&["-n"]) {
        return;
    }
    let target = parsed.operands.first();
    let unknown = match (name, target) {
        ("popd", _) | ("pushd", None) => true,
        (_, None) => false,
        (_, Some(t)) if !t.literal => t.path().is_none(),
        (_, Some(t)) => t.text == "-" || t.text.starts_with(['+', '-']),
    };
    let shown = || {
        std::iter::once(name)
            .chain(args.iter().map(|a| a.text.as_str()))
            .collect::<Vec<_>>()
            .join(" ")
    };
    if unknown || parsed.dynamic {
        c.unmodelled(format!(
            "`{}` moves to a directory only known at run time",
            shown()
        ));
        return;
    }
    if let Some(t) = target.filter(|t| t.literal) {
        let text = t.text.as_str();
        let searches = !(text.starts_with('/')
            || text == "."
            || text == ".."
            || text.starts_with("./")
            || text.starts_with("../"));
        if searches && !cdpath_unset {
            c.unmodelled(format!(
                "`{}` looks for `{text}` in each directory of `CDPATH` first, which the environment may set",
                shown()
            ));
        }
    }
}

/// `declare -p`, `export -p`, `declare -x` and their kin without names print variables, and with them the
/// credentials of the environment.
pub(super) fn prints_variables(name: &str, args: &[Word], c: &mut Classified) -> bool {
    let parsed = options::read(args, &knowledge::DECLARE);
    let prints = parsed.operands.is_empty()
        && (args.is_empty() || parsed.has(DECLARE_PRINT) || (name == "export" && parsed.options.is_empty()));
    // `declare -p NAME` prints the variables it names.
    if parsed.has(&["-p"]) {
        for operand in &parsed.operands {
            if !operand.literal || is_credential(&operand.text) {
                c.ask(format!(
                    "`{name} -p {}` prints a variable that may hold a credential",
                    operand.text
                ));
            }
        }
    }
    if prints && !parsed.has(&["-f", "-F"]) {
        c.ask(format!(
            "`{}` prints variables, which may hold credentials",
            std::iter::once(name)
                .chain(args.iter().map(|a| a.text.as_str()))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    prints
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables() {
        assert!(harmless_variable("LC_ALL", None));
        assert!(harmless_variable("PAGER", Some(&Word::literal("cat"))));
        assert!(harmless_variable("GIT_PAGER", Some(&Word::literal("less -R"))));
        assert!(!harmless_variable("GIT_PAGER", Some(&Word::literal("sh -c x"))));
        assert!(!harmless_variable("GIT_DIR", None));
        assert!(harmless_variable("GIT_TRACE", Some(&Word::literal("1"))));
        assert!(!harmless_variable("GIT_TRACE", Some(&Word::literal("/tmp/x"))));
        assert!(
            environment_family("JAVA_HOME") && environment_family("GIT_SSH") && !environment_family("dir")
        );
        assert!(!environment_family("GIT_AUTHOR_NAME"));
        assert!(
            is_credential("GITHUB_TOKEN")
                && is_credential("aws_secret_access_key")
                && is_credential("DB_PASS")
        );
        assert!(!is_credential("SSH_AUTH_SOCK") && !is_credential("HOME") && !is_credential("PATH"));
    }
}
