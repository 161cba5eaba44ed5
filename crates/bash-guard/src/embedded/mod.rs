//! What an interpreter's own code spells out in the open: the shell commands it runs (`os.system("make")`,
//! `execSync('rm -rf dist')`, Perl's backticks), the files it removes (`shutil.rmtree('data')`,
//! `fs.rmSync('.', {recursive: true})`, `File.delete("app.db")`) and the web requests it makes
//! (`urlopen('https://…')`, `fetch(url, {method: 'POST', body})`, `requests.post(…)`). Each is read as the shell
//! command it amounts to, so that the analysis judges it as it judges that command:
//! `python3 -c "import shutil; shutil.rmtree('.')"` removes the project as `rm -rf .` does, and asks as that does;
//! a request that sends data is judged as `curl` sending a body (an upload, which changes another system).
//!
//! The reader tokenizes the languages' strings, comments, names and brackets; it does not parse the languages. No
//! crate reads calls out of seven languages' code at this cost (a tree-sitter grammar per language would be tens
//! of megabytes of tables for a few names). What it finds is a call by a name its tables hold, with the call's
//! first argument a plain string, a list of plain strings, or something only known at run time. A removal whose
//! path is only known at run time (`os.remove(f)`) stands as `rm` of a path only known at run time, which asks as
//! `rm -rf "$x"` does; a command only known at run time adds nothing to what the sandbox already bounds. Code that
//! reaches these effects by names the tables do not hold (`getattr(os, n)`, an alias, `eval`) runs in the sandbox
//! with its power and no more, as any code the analysis cannot see.

/// The language of an interpreter's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Language {
    Python,
    /// Node, Bun and Deno.
    JavaScript,
    Perl,
    Ruby,
    Php,
    R,
    Lua,
}

/// A text the code gives: a plain string, or `None` when it is only known at run time.
pub(crate) type Text = Option<String>;

/// A command the code spells out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Spelled {
    /// A shell command line (`os.system(LINE)`, backticks).
    Line(String),
    /// A program and its arguments, run without a shell (`subprocess.run([...])`, `spawnSync(p, [...])`).
    Argv(Vec<Text>),
    /// A file or directory removed, with everything below it when `recursive`.
    Removes { path: Text, recursive: bool },
    /// A web request to `url`; `sends`: with a body or a method that changes what the server holds.
    Fetches { url: Text, sends: bool },
    /// A file written, its content replaced or added to (`open('x', 'w')`, `fs.writeFileSync('x', …)`).
    Writes(Text),
    /// A file or directory moved (`os.rename(a, b)`), or copied over what is at `to` (`shutil.copy(a, b)`).
    Moves { from: Text, to: Text, copies: bool },
}

mod lexer;
mod tables;

use lexer::{Lexer, Token};
use tables::{Call, PYTHON_SUBPROCESS, Table};

/// The commands `code` spells out. `expanded`: the code is the text of a here-document the shell expands, so a
/// string holding `$` or a backtick holds what the shell put there.
pub(crate) fn read(language: Language, code: &str, expanded: bool) -> Vec<Spelled> {
    let tokens = Lexer::new(language, code, expanded).tokens();
    let table = language.table();
    // `exec` and `spawn` are also regular expressions' and other libraries' methods: in JavaScript they count
    // where the code loads `child_process`.
    let processes = language != Language::JavaScript || code.contains("child_process");
    // Python's `run` and `call` count where the code names `subprocess` (`import subprocess as s`), not where a
    // string or comment mentions it.
    let subprocess = language == Language::Python
        && tokens.iter().any(
            |token| matches!(token, Token::Name(name) if name.split('.').any(|part| part == "subprocess")),
        );
    let aliases = aliases(&tokens);
    let mut spelled = Vec::new();
    for (at, token) in tokens.iter().enumerate() {
        match token {
            Token::Command(Some(line)) => spelled.push(Spelled::Line(line.clone())),
            Token::Name(written) => {
                let name = &resolved(written, &aliases);
                let found = lookup(table, name)
                    .or_else(|| subprocess.then(|| lookup(PYTHON_SUBPROCESS, name)).flatten());
                let Some(call) = found else {
                    continue;
                };
                if !processes && matches!(call, Call::Runs | Call::Spawns) && name.starts_with('.') {
                    continue;
                }
                let Some((args, spanned)) = arguments(&tokens, at + 1, language.bare_calls()) else {
                    continue;
                };
                let call = Found {
                    call,
                    args: &args,
                    spanned,
                };
                spelled.extend(call.effects(&tokens, at, language));
            }
            _ => {}
        }
    }
    if changes_directory(&tokens) {
        return elsewhere(spelled);
    }
    spelled
}

/// The names the code gives to others: Python's `from shutil import rmtree as r` and `import shutil as s`,
/// JavaScript's `const {rmSync: r} = require('fs')`, and an assignment of a name alone (`f = shutil.rmtree`,
/// `const r = require('fs').rmSync`), each as (the new name, what it stands for).
fn aliases(tokens: &[Token]) -> Vec<(String, String)> {
    let mut aliases = Vec::new();
    let name = |at: usize| match tokens.get(at) {
        Some(Token::Name(name)) => Some(name.as_str()),
        _ => None,
    };
    for at in 0..tokens.len() {
        match (name(at), name(at + 1), name(at + 2), name(at + 3)) {
            // `from MODULE import NAME as ALIAS` (and `, NAME as ALIAS` after it).
            (Some(item), Some("as"), Some(alias), _) if at >= 1 => {
                let module = (0..at).rev().find_map(|back| match (name(back), name(back + 1)) {
                    (Some("from"), Some(module)) => Some(Some(module)),
                    (Some("import"), _) => Some(None),
                    _ => None,
                });
                let full = match module {
                    Some(Some(module)) => format!("{module}.{item}"),
                    _ => item.to_owned(),
                };
                aliases.push((alias.to_owned(), full));
            }
            _ => {}
        }
        // `{NAME: ALIAS}` in a destructuring, and `ALIAS = NAME` or `const ALIAS = … NAME` up to the statement's end.
        match (
            tokens.get(at),
            tokens.get(at + 1),
            tokens.get(at + 2),
            tokens.get(at + 3),
        ) {
            (
                Some(Token::Open | Token::Comma),
                Some(Token::Name(item)),
                Some(Token::Other(':')),
                Some(Token::Name(alias)),
            ) => {
                aliases.push((alias.clone(), format!(".{item}")));
            }
            (Some(Token::Name(alias)), Some(Token::Other('=')), Some(next), _)
                if !matches!(next, Token::Other('=')) =>
            {
                let value = tokens.get(at + 2..).unwrap_or_default();
                let end = value
                    .iter()
                    .position(|t| matches!(t, Token::End))
                    .unwrap_or(value.len());
                if let Some(Token::Name(last)) = value.get(..end).and_then(<[Token]>::last)
                    && value
                        .get(end.saturating_sub(2))
                        .is_none_or(|t| !matches!(t, Token::Open))
                {
                    aliases.push((alias.clone(), last.clone()));
                }
            }
            _ => {}
        }
    }
    aliases
}

/// `name` with a leading alias replaced by what it stands for (`r` → `shutil.rmtree`, `s.rmtree` →
/// `shutil.rmtree`).
fn resolved(name: &str, aliases: &[(String, String)]) -> String {
    let (head, rest) = name
        .split_once('.')
        .map_or((name, None), |(head, rest)| (head, Some(rest)));
    match aliases.iter().rev().find(|(alias, _)| alias == head) {
        Some((_, full)) => match rest {
            Some(rest) => format!("{full}.{rest}"),
            None => full.clone(),
        },
        None => name.to_owned(),
    }
}

/// Whether the code changes its working directory (`os.chdir`, `process.chdir`, Perl's and Ruby's `chdir`, R's
/// `setwd`) or runs a program in another (`cwd=`, `cwd:`): its relative paths are then not the line's.
fn changes_directory(tokens: &[Token]) -> bool {
    tokens.windows(2).any(|pair| match pair {
        [Token::Name(name), _] if name.ends_with("chdir") || name == "setwd" => true,
        [Token::Name(key) | Token::Str(Some(key)), Token::Other('=' | ':')] => key == "cwd",
        _ => false,
    })
}

/// What `spelled` amounts to run in a directory only known at run time: a relative removal removes a path only
/// known at run time, and a command runs after a `cd` to a directory only known at run time (a program and its
/// arguments as the shell line that quotes them).
pub(crate) fn elsewhere(spelled: Vec<Spelled>) -> Vec<Spelled> {
    let unknown = "cd -- \"$AGENT_GUARD_UNKNOWN_DIRECTORY\" && ";
    spelled
        .into_iter()
        .map(|spelled| match spelled {
            Spelled::Removes { path, recursive } => Spelled::Removes {
                path: path.filter(|path| path.starts_with('/')),
                recursive,
            },
            Spelled::Line(line) => Spelled::Line(format!("{unknown}{line}")),
            Spelled::Argv(words) => {
                let quoted: Option<Vec<String>> = words
                    .iter()
                    .map(|word| word.as_ref().map(|w| format!("'{}'", w.replace('\'', "'\\''"))))
                    .collect();
                match quoted {
                    Some(quoted) => Spelled::Line(format!("{unknown}{}", quoted.join(" "))),
                    None => Spelled::Argv(words),
                }
            }
            Spelled::Writes(path) => Spelled::Writes(path.filter(|path| path.starts_with('/'))),
            Spelled::Moves { from, to, copies } => Spelled::Moves {
                from: from.filter(|path| path.starts_with('/')),
                to: to.filter(|path| path.starts_with('/')),
                copies,
            },
            fetches @ Spelled::Fetches { .. } => fetches,
        })
        .collect()
}

fn lookup(table: Table, name: &str) -> Option<Call> {
    table.iter().find_map(|(rule, call)| {
        let matches = match rule.strip_prefix('.') {
            Some(last) => name == last || name.strip_suffix(last).is_some_and(|head| head.ends_with('.')),
            None => name == *rule,
        };
        matches.then_some(*call)
    })
}

/// An argument of a call.
#[derive(Debug)]
enum Arg {
    One(Text),
    List(Vec<Text>),
    /// An object or dictionary written in brackets (`{method: 'PUT'}`), whose keys the call's reader looks at.
    Object,
    /// Anything else: only known at run time.
    Dynamic,
}

/// The arguments of the call whose name ends before `at`: in brackets, or (where `bare`) up to the end of the
/// statement, with the tokens they span. `None` when no call follows the name (`os.system` passed as a value).
fn arguments(tokens: &[Token], at: usize, bare: bool) -> Option<(Vec<Arg>, &[Token])> {
    let (start, bracketed) = match tokens.get(at) {
        Some(Token::Open) => (at + 1, true),
        Some(Token::Str(_) | Token::Command(_)) if bare => (at, false),
        _ => return None,
    };
    let mut args = Vec::new();
    let mut current: Vec<&Token> = Vec::new();
    let mut depth = 0usize;
    let mut end = start;
    for token in tokens.get(start..).unwrap_or_default() {
        end += 1;
        match token {
            Token::Open => depth += 1,
            Token::Close if depth == 0 => break,
            Token::Close => depth -= 1,
            Token::End if !bracketed && depth == 0 => break,
            // A line break inside brackets only continues the call.
            Token::End if bracketed => continue,
            Token::Comma if depth == 0 => {
                args.push(argument(&current));
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(token);
    }
    if !current.is_empty() {
        args.push(argument(&current));
    }
    Some((args, tokens.get(start..end).unwrap_or_default()))
}

fn argument(tokens: &[&Token]) -> Arg {
    if let Some(text) = joined(tokens) {
        return Arg::One(text);
    }
    match tokens {
        // Ruby's `URI("https://…")`, `URI.parse("…")`: the string.
        [Token::Name(uri), Token::Open, Token::Str(text), Token::Close]
            if uri == "URI" || uri == "URI.parse" =>
        {
            Arg::One(text.clone())
        }
        [Token::Open, inner @ .., Token::Close] => {
            let mut items = Vec::new();
            for (i, token) in inner.iter().enumerate() {
                match (i % 2, token) {
                    (0, Token::Str(text)) => items.push(text.clone()),
                    (1, Token::Comma) => {}
                    _ => return Arg::Object,
                }
            }
            Arg::List(items)
        }
        _ => Arg::Dynamic,
    }
}

/// Strings joined into one, by being written side by side (`'rm -rf ' 'data'`) or by `+` or `.` between them
/// (`'rm -rf ' + 'data'`, Perl's and PHP's `"a" . "b"`, Lua's `..`): the whole text, unknown when a part is;
/// `None` when `tokens` are not strings alone.
fn joined(tokens: &[&Token]) -> Option<Text> {
    let mut text = String::new();
    let mut known = true;
    let mut strings = 0;
    for token in tokens {
        match token {
            Token::Str(Some(part)) => text.push_str(part),
            Token::Str(None) => known = false,
            Token::Other('+' | '.') if strings > 0 => continue,
            _ => return None,
        }
        strings += 1;
    }
    (strings > 0).then(|| known.then_some(text))
}

/// A call of a name of the tables, with its arguments and the tokens they span.
struct Found<'a> {
    call: Call,
    args: &'a [Arg],
    spanned: &'a [Token],
}

impl Found<'_> {
    /// What the call does; `tokens` are the code's, the call's name at `at`.
    fn effects(&self, tokens: &[Token], at: usize, language: Language) -> Vec<Spelled> {
        let args = self.args;
        match self.call {
            Call::Runs if matches!(args.first(), Some(Arg::List(_))) => self.runs_list(),
            Call::Runs => match args {
                [Arg::One(Some(line))] => vec![Spelled::Line(line.clone())],
                [Arg::List(items), ..] => vec![Spelled::Argv(items.clone())],
                // Perl's and Ruby's `system("rm", "-f", "x")`: a program and its arguments, no shell.
                [Arg::One(_), Arg::One(_), ..] if language.bare_calls() => vec![Spelled::Argv(
                    args.iter()
                        .map_while(|arg| match arg {
                            Arg::One(text) => Some(text.clone()),
                            _ => None,
                        })
                        .collect(),
                )],
                [Arg::One(Some(line)), ..] => vec![Spelled::Line(line.clone())],
                _ => Vec::new(),
            },
            Call::Spawns => match args {
                [Arg::One(program), Arg::List(items), ..] => {
                    let mut argv = vec![program.clone()];
                    argv.extend(items.iter().cloned());
                    vec![Spelled::Argv(argv)]
                }
                [Arg::One(program), ..] => vec![Spelled::Argv(vec![program.clone()])],
                _ => Vec::new(),
            },
            Call::Removes { recursive } => {
                // Perl's `unlink` takes a list of paths; the others' later arguments are options.
                let taken = if language == Language::Perl { args.len() } else { 1 };
                let mut paths = Vec::new();
                for arg in args.iter().take(taken) {
                    match arg {
                        Arg::One(text) => paths.push(text.clone()),
                        Arg::List(items) => paths.extend(items.iter().cloned()),
                        Arg::Object | Arg::Dynamic => paths.push(None),
                    }
                }
                if paths.is_empty() {
                    paths.push(None);
                }
                paths
                    .into_iter()
                    .map(|path| Spelled::Removes { path, recursive })
                    .collect()
            }
            Call::RemovesReceiver => vec![Spelled::Removes {
                path: match args.first() {
                    Some(Arg::One(path)) => path.clone(),
                    Some(_) => None,
                    None => receiver_path(tokens, at),
                },
                recursive: false,
            }],
            Call::Fetches {
                sends,
                positional_body,
            } => self.fetches(sends, positional_body),
            Call::Writes => vec![Spelled::Writes(self.text(0))],
            Call::Opens => {
                let mode = self.text(1).or_else(|| keyword(self.spanned, "mode"));
                let writes = mode.is_none_or(|mode| mode.contains(['w', 'a', 'x', '+']));
                // `open(path)` reads; a mode only known at run time may write.
                if self.args.len() < 2 && keyword(self.spanned, "mode").is_none() {
                    return Vec::new();
                }
                if writes {
                    vec![Spelled::Writes(self.text(0))]
                } else {
                    Vec::new()
                }
            }
            Call::WritesReceiver => vec![Spelled::Writes(receiver_path(tokens, at))],
            Call::Moves { copies } => vec![Spelled::Moves {
                from: self.text(0),
                to: self.text(1),
                copies,
            }],
            Call::FetchesWithMethod => {
                let sends = !matches!(self.args.first(), Some(Arg::One(Some(method))) if crate::classify::reading_method(method));
                let rest = Found {
                    call: self.call,
                    args: self.args.get(1..).unwrap_or_default(),
                    spanned: self.spanned,
                };
                rest.fetches(sends, false)
            }
        }
    }

    /// A list of words run: with `shell=True` its first word is a shell line; `executable=` names the program
    /// run in place of the first word.
    fn runs_list(&self) -> Vec<Spelled> {
        let Some(Arg::List(items)) = self.args.first() else {
            return Vec::new();
        };
        let shell = self.spanned.windows(3).any(|three| {
            matches!(three, [Token::Name(key), Token::Other('=' | ':'), value]
                if key == "shell" && !matches!(value, Token::Name(no) if no == "False" || no == "false"))
        });
        if shell {
            return match items.first() {
                Some(Some(line)) => vec![Spelled::Line(line.clone())],
                _ => Vec::new(),
            };
        }
        let mut argv = items.clone();
        if self
            .spanned
            .iter()
            .any(|t| matches!(t, Token::Name(key) if key == "executable"))
            && let Some(first) = argv.first_mut()
        {
            *first = keyword(self.spanned, "executable");
        }
        vec![Spelled::Argv(argv)]
    }

    /// The plain string of argument `at`, if it is one.
    fn text(&self, at: usize) -> Text {
        match self.args.get(at) {
            Some(Arg::One(text)) => text.clone(),
            _ => None,
        }
    }

    /// A web request: to the URL of the first argument, sending what the call or its arguments say.
    fn fetches(&self, sends: bool, positional_body: bool) -> Vec<Spelled> {
        let url = match self.args.first() {
            Some(Arg::One(text)) => text.clone(),
            _ => None,
        };
        // A plain string that is no URL makes no request (a dictionary's `get('key')`).
        if url.as_deref().is_some_and(|url| !url.contains("://")) {
            return Vec::new();
        }
        // A second argument written as an object is looked into (`{method: 'GET'}`); any other may hold a body.
        let second = self.args.get(1).is_some_and(|arg| !matches!(arg, Arg::Object));
        let sends = sends || (positional_body && second) || names_a_body(self.spanned);
        // A request only known at run time that sends nothing is bounded by the sandbox's proxy as it is.
        if url.is_none() && !sends {
            return Vec::new();
        }
        vec![Spelled::Fetches { url, sends }]
    }
}

/// The plain string given to the keyword argument `name` (`mode='w'`, `executable='rm'`) among `tokens`.
fn keyword(tokens: &[Token], name: &str) -> Text {
    tokens.windows(3).find_map(|three| match three {
        [Token::Name(key), Token::Other('=' | ':'), Token::Str(value)] if key == name => value.clone(),
        _ => None,
    })
}

/// The names of a request's body among its options (`data=`, `json=`, `body:`, `files=`).
const BODY: [&str; 6] = ["data", "json", "body", "files", "content", "form"];

/// Whether a request's arguments give it a body, or a method other than GET or HEAD (or one only known at run
/// time).
fn names_a_body(tokens: &[Token]) -> bool {
    tokens.windows(2).enumerate().any(|(i, pair)| match pair {
        [
            Token::Name(name) | Token::Str(Some(name)),
            Token::Other('=' | ':'),
        ] if BODY.contains(&name.as_str()) => true,
        // `{body}`, `urlopen(url, data)`: the name alone, as an element.
        [Token::Name(name), Token::Comma | Token::Close]
            if BODY.contains(&name.as_str())
                && matches!(
                    i.checked_sub(1).and_then(|j| tokens.get(j)),
                    Some(Token::Open | Token::Comma)
                ) =>
        {
            true
        }
        [
            Token::Name(name) | Token::Str(Some(name)),
            Token::Other('=' | ':'),
        ] if name == "method" => match tokens.get(i + 2) {
            Some(Token::Str(Some(method))) => {
                !method.eq_ignore_ascii_case("get") && !method.eq_ignore_ascii_case("head")
            }
            _ => true,
        },
        _ => false,
    })
}

/// The path a method's receiver was made of, when the receiver is `Path('x')` (or `pathlib.Path("x")`, …)
/// written just before the method.
fn receiver_path(tokens: &[Token], at: usize) -> Text {
    let before = tokens.get(..at)?;
    match before {
        [
            ..,
            Token::Name(maker),
            Token::Open,
            Token::Str(path),
            Token::Close,
        ] if maker.ends_with("Path") => path.clone(),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
