//! Small readers for the languages read-only tools embed: sed scripts, awk programs, jq and yq filters, and the
//! shape of a fork bomb in an interpreter's code.

/// What a sed script does besides printing.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct SedEffects {
    /// `e` alone or `s///e`: runs the pattern space, a command only known at run time.
    pub(crate) exec: bool,
    /// `e COMMAND`: the shell commands the script runs, as written.
    pub(crate) commands: Vec<String>,
    /// Files written by `w`, `W` or `s///w`.
    pub(crate) writes: Vec<String>,
    /// Files read by `r`, `R`.
    pub(crate) reads: Vec<String>,
    /// A command the reader does not know: not read-only.
    pub(crate) unknown: bool,
    /// A branch back to a label with no command between them that reads more input or ends (`:a;ba`): it loops
    /// without end.
    pub(crate) endless: bool,
}

/// Reads a sed script command by command (GNU syntax).
pub(crate) fn sed(script: &str) -> SedEffects {
    let mut out = SedEffects::default();
    // Labels defined so far, and whether a command that reads input or ends came after each.
    let mut labels: Vec<(String, bool)> = Vec::new();
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let rest_of_line = |i: &mut usize| -> String {
        let start = *i;
        while chars.get(*i).is_some_and(|c| *c != '\n') {
            *i += 1;
        }
        chars
            .get(start..*i)
            .unwrap_or_default()
            .iter()
            .collect::<String>()
            .trim()
            .to_owned()
    };
    while let Some(&c) = chars.get(i) {
        // Separators and addresses.
        match c {
            ' ' | '\t' | '\n' | ';' | '{' | '}' | '!' | ',' | '$' | '+' | '~' => {
                i += 1;
                continue;
            }
            '0'..='9' => {
                i += 1;
                continue;
            }
            '/' => {
                i = skip_delimited(&chars, i + 1, '/');
                i = skip_regex_flags(&chars, i);
                continue;
            }
            '\\' => {
                let Some(&delim) = chars.get(i + 1) else { break };
                i = skip_delimited(&chars, i + 2, delim);
                i = skip_regex_flags(&chars, i);
                continue;
            }
            _ => {}
        }
        i += 1;
        match c {
            '#' => {
                rest_of_line(&mut i);
            }
            ':' => {
                // GNU sed ends a label at `;` too.
                let start = i;
                while chars.get(i).is_some_and(|c| !matches!(c, '\n' | ';')) {
                    i += 1;
                }
                let label: String = chars.get(start..i).unwrap_or_default().iter().collect();
                labels.push((label.trim().to_owned(), false));
            }
            'a' | 'i' | 'c' => {
                // Text to the end of the line, with `\` continuations.
                loop {
                    let line = rest_of_line(&mut i);
                    if line.ends_with('\\') && chars.get(i).is_some() {
                        i += 1;
                    } else {
                        break;
                    }
                }
            }
            'b' | 't' | 'T' => {
                let start = i;
                while chars.get(i).is_some_and(|c| !matches!(c, '\n' | ';' | '}')) {
                    i += 1;
                }
                let label: String = chars.get(start..i).unwrap_or_default().iter().collect();
                let label = label.trim();
                if !label.is_empty() && labels.iter().any(|(l, consumed)| l == label && !consumed) {
                    out.endless = true;
                }
            }
            'r' | 'R' => out.reads.push(rest_of_line(&mut i)),
            'w' | 'W' => out.writes.push(rest_of_line(&mut i)),
            'e' => {
                let command = rest_of_line(&mut i);
                if command.is_empty() {
                    out.exec = true;
                } else {
                    out.commands.push(command);
                }
            }
            's' => {
                let Some(&delim) = chars.get(i) else {
                    out.unknown = true;
                    break;
                };
                i = skip_delimited(&chars, i + 1, delim);
                i = skip_delimited(&chars, i, delim);
                // Flags up to the end of the command.
                while let Some(&f) = chars.get(i) {
                    match f {
                        'e' => out.exec = true,
                        'w' => {
                            i += 1;
                            out.writes.push(rest_of_line(&mut i));
                            break;
                        }
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' | ' ' | '\t' => {}
                        _ => break,
                    }
                    i += 1;
                }
            }
            'y' => {
                let Some(&delim) = chars.get(i) else {
                    out.unknown = true;
                    break;
                };
                i = skip_delimited(&chars, i + 1, delim);
                i = skip_delimited(&chars, i, delim);
            }
            'l' | 'L' | 'q' | 'Q' => {
                if matches!(c, 'q' | 'Q') {
                    labels.iter_mut().for_each(|(_, consumed)| *consumed = true);
                }
                while chars.get(i).is_some_and(char::is_ascii_digit) {
                    i += 1;
                }
            }
            'v' => {
                while chars.get(i).is_some_and(|c| !matches!(c, '\n' | ';' | '}')) {
                    i += 1;
                }
            }
            'd' | 'D' | 'n' | 'N' => labels.iter_mut().for_each(|(_, consumed)| *consumed = true),
            '=' | 'F' | 'g' | 'G' | 'h' | 'H' | 'p' | 'P' | 'x' | 'z' => {}
            _ => {
                out.unknown = true;
                break;
            }
        }
    }
    out
}

/// Skips to just past the next unescaped `delim` (a `[…]` bracket expression protects it, as in GNU sed).
fn skip_delimited(chars: &[char], mut i: usize, delim: char) -> usize {
    let mut in_bracket = false;
    while let Some(&c) = chars.get(i) {
        i += 1;
        match c {
            '\\' => i += 1,
            '[' if !in_bracket && delim != '[' => in_bracket = true,
            ']' if in_bracket => in_bracket = false,
            c if c == delim && !in_bracket => return i,
            _ => {}
        }
    }
    i
}

fn skip_regex_flags(chars: &[char], mut i: usize) -> usize {
    while chars.get(i).is_some_and(|c| matches!(c, 'I' | 'M')) {
        i += 1;
    }
    i
}

/// What an awk program does besides reading and printing.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct AwkEffects {
    /// `system()` of an expression, a pipe to or from a command, `|&`, or `@load`/`@include`.
    pub(crate) exec: bool,
    /// The shell commands `system("COMMAND")` runs, each given as one string.
    pub(crate) commands: Vec<String>,
    /// `print > file` or `print >> file` to a file the program names by an expression (not one string).
    pub(crate) writes: bool,
    /// The files `print > "FILE"` and `print >> "FILE"` write, named by one string (`/dev/stdout`, `/dev/stderr`
    /// and `/dev/fd/N` aside, which are no files).
    pub(crate) written: Vec<String>,
    /// `getline < file`: a file named in the program is read.
    pub(crate) reads: bool,
    /// `ARGV` or `ARGC`: the program changes which files it reads.
    pub(crate) argv: bool,
    /// `ENVIRON`: the program reads the environment.
    pub(crate) environ: bool,
    /// `while (1)`, `for (;;)`: a loop whose condition never ends it.
    pub(crate) endless: bool,
}

/// Reads an awk program token by token, skipping strings, regular expressions and comments.
pub(crate) fn awk(program: &str) -> AwkEffects {
    let mut out = AwkEffects::default();
    let chars: Vec<char> = program.chars().collect();
    let mut i = 0;
    // Whether a `/` here starts a regular expression (an operand is expected) rather than dividing.
    let mut operand_expected = true;
    // The parenthesis depth at which the current `print` statement started, if inside one.
    let mut print_depth: Option<usize> = None;
    let mut depth = 0usize;
    // The parenthesis depth of a `getline` whose input may still be redirected with `<`.
    let mut getline_depth: Option<usize> = None;
    while let Some(&c) = chars.get(i) {
        i += 1;
        match c {
            '<' if getline_depth == Some(depth) => {
                out.reads = true;
                operand_expected = true;
            }
            '"' => {
                while let Some(&s) = chars.get(i) {
                    i += 1;
                    match s {
                        '\\' => i += 1,
                        '"' => break,
                        _ => {}
                    }
                }
                operand_expected = false;
            }
            '/' if operand_expected => {
                i = skip_delimited(&chars, i, '/');
                operand_expected = false;
            }
            '#' => {
                while chars.get(i).is_some_and(|c| *c != '\n') {
                    i += 1;
                }
            }
            '@' => out.exec = true,
            '|' => {
                if chars.get(i) == Some(&'|') {
                    i += 1;
                } else {
                    out.exec = true;
                }
                operand_expected = true;
            }
            '>' => {
                if print_depth == Some(depth) {
                    if chars.get(i) == Some(&'>') {
                        i += 1;
                    }
                    match string_target(&chars, i) {
                        Some((file, end)) => {
                            if !(file == "/dev/stdout"
                                || file == "/dev/stderr"
                                || file.starts_with("/dev/fd/"))
                            {
                                out.written.push(file);
                            }
                            i = end;
                            operand_expected = false;
                            continue;
                        }
                        None => out.writes = true,
                    }
                }
                operand_expected = true;
            }
            '(' => {
                depth += 1;
                operand_expected = true;
            }
            ')' => {
                if getline_depth == Some(depth) {
                    getline_depth = None;
                }
                depth = depth.saturating_sub(1);
                operand_expected = false;
            }
            ';' | '\n' | '{' | '}' => {
                print_depth = None;
                getline_depth = None;
                operand_expected = true;
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = i - 1;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    i += 1;
                }
                let word: String = chars.get(start..i).unwrap_or_default().iter().collect();
                match word.as_str() {
                    "system" => match system_command(&chars, i) {
                        Some((command, end)) => {
                            out.commands.push(command);
                            i = end;
                        }
                        None => out.exec = true,
                    },
                    "ARGV" | "ARGC" => out.argv = true,
                    "while" | "for" => {
                        // The condition in the parentheses after it: a nonzero number, or none at all.
                        let rest: String = chars.get(i..).unwrap_or_default().iter().collect();
                        let condition = rest
                            .trim_start()
                            .strip_prefix('(')
                            .and_then(|r| r.split_once(')'))
                            .map(|(inside, _)| inside.split_whitespace().collect::<String>());
                        out.endless |= condition.is_some_and(|c| {
                            c == ";;" || (word == "while" && c.parse::<f64>().is_ok_and(|n| n != 0.0))
                        });
                    }
                    "ENVIRON" | "PROCINFO" => out.environ = true,
                    "getline" => {
                        getline_depth = Some(depth);
                        operand_expected = true;
                        continue;
                    }
                    "print" | "printf" => {
                        print_depth = Some(depth);
                        operand_expected = true;
                        continue;
                    }
                    _ => {}
                }
                operand_expected = false;
            }
            c if c.is_ascii_digit() || c == '$' => operand_expected = c == '$',
            c if c.is_whitespace() => {}
            _ => operand_expected = true,
        }
    }
    out
}

/// The file of an awk output redirection at `i` when it is one string and nothing else (`> "out.txt";`), with
/// where the string ends: its text with the escapes awk reads in it (`\"`, `\\`); `None` for an expression
/// (`> "out" n`, `> f`, `> ("a" "b")`).
fn string_target(chars: &[char], i: usize) -> Option<(String, usize)> {
    let (text, i) = one_string(chars, i)?;
    let k = skip_blanks(chars, i);
    matches!(chars.get(k), None | Some(';' | '}' | '\n')).then_some((text, i))
}

/// The command of `system` at `i` when its argument is one string and nothing else (`system("make")`), with
/// where the call ends.
fn system_command(chars: &[char], i: usize) -> Option<(String, usize)> {
    let i = skip_blanks(chars, i);
    if chars.get(i) != Some(&'(') {
        return None;
    }
    let (text, i) = one_string(chars, i + 1)?;
    let i = skip_blanks(chars, i);
    (chars.get(i) == Some(&')')).then_some((text, i + 1))
}

/// The string at `i` (after blanks), with the escapes awk reads in it, and where it ends; `None` for an escape
/// this does not read (octal, `x72` after the backslash): the string's text is then not known.
fn one_string(chars: &[char], i: usize) -> Option<(String, usize)> {
    let mut i = skip_blanks(chars, i);
    if chars.get(i) != Some(&'"') {
        return None;
    }
    i += 1;
    let mut text = String::new();
    loop {
        match chars.get(i)? {
            '\\' => {
                text.push(match chars.get(i + 1)? {
                    'n' => '\n',
                    't' => '\t',
                    c @ ('"' | '\\' | '/') => *c,
                    _ => return None,
                });
                i += 2;
            }
            '"' => return Some((text, i + 1)),
            c => {
                text.push(*c);
                i += 1;
            }
        }
    }
}

fn skip_blanks(chars: &[char], mut i: usize) -> usize {
    while chars.get(i).is_some_and(|c| *c == ' ' || *c == '\t') {
        i += 1;
    }
    i
}

/// What a jq (or yq) filter does besides transforming its input.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct FilterEffects {
    /// `$ENV`, `env`, or yq's `env(…)`/`strenv(…)`: the environment is read.
    pub(crate) environment: bool,
    /// yq's `load(…)` and its kin: files named in the filter are read.
    pub(crate) loads: bool,
    /// `range` past the bound, `repeat`, `infinite`: output without (practical) end.
    pub(crate) unbounded: bool,
    /// `import "PATH" as $NAME;`: a JSON file jq reads as data, looked for as `PATH.json` (and
    /// `PATH/jq/main.json`, `PATH/LAST.json`) in each directory of its search path; `None` when the path or the
    /// search path is only known at run time (an interpolated string, a `{search: …}` directive).
    pub(crate) data_imports: Vec<Option<String>>,
    /// `import "PATH" as NAME;`, `include "PATH";`, `modulemeta`: jq code from a module file, which the analysis
    /// cannot see (and which may import more files, or read the environment).
    pub(crate) modules: bool,
}

/// What a module directive that starts at `rest` (just after the word `import` or `include`) loads: `None` when
/// the word is not a directive (a key `{import: 1}`), else whether it is a data import and its path (`None` when
/// only known at run time).
fn directive(rest: &[char], import: bool) -> Option<(bool, Option<String>)> {
    let mut at = rest.iter().take_while(|c| c.is_whitespace()).count();
    if rest.get(at) != Some(&'"') {
        return None;
    }
    at += 1;
    let mut path = String::new();
    let mut known = true;
    loop {
        match rest.get(at) {
            None => return Some((false, None)),
            Some('"') => break,
            // An escape or an interpolation: a path the analysis does not decode.
            Some('\\') => {
                known = false;
                at += 2;
                continue;
            }
            Some(c) => path.push(*c),
        }
        at += 1;
    }
    at += 1;
    if !import {
        return Some((false, None));
    }
    let after: String = rest.get(at..).unwrap_or_default().iter().collect();
    let after = after.trim_start();
    let Some(name) = after.strip_prefix("as") else {
        return Some((false, None));
    };
    let name = name.trim_start();
    if !name.starts_with('$') {
        return Some((false, None));
    }
    // `import "P" as $x {search: "…"};`: the directive names its own search path.
    let metadata = name
        .trim_start_matches(|c: char| c == '$' || c.is_ascii_alphanumeric() || c == '_')
        .trim_start()
        .starts_with('{');
    Some((true, (known && !metadata).then_some(path)))
}

/// Reads a jq or yq filter token by token, skipping strings and comments.
pub(crate) fn filter(program: &str) -> FilterEffects {
    let mut out = FilterEffects::default();
    let chars: Vec<char> = program.chars().collect();
    let mut i = 0;
    let mut previous = String::new();
    while let Some(&c) = chars.get(i) {
        i += 1;
        match c {
            '"' => {
                while let Some(&s) = chars.get(i) {
                    i += 1;
                    match s {
                        // `"\(expr)"`: string interpolation runs an expression.
                        '\\' if chars.get(i) == Some(&'(') => {
                            let start = i + 1;
                            let mut depth = 0usize;
                            while let Some(&c) = chars.get(i) {
                                i += 1;
                                match c {
                                    '(' => depth += 1,
                                    ')' => {
                                        depth = depth.saturating_sub(1);
                                        if depth == 0 {
                                            break;
                                        }
                                    }
                                    _ => {}
                                }
                            }
                            let inner: String = chars
                                .get(start..i.saturating_sub(1))
                                .unwrap_or_default()
                                .iter()
                                .collect();
                            let nested = filter(&inner);
                            out.environment |= nested.environment;
                            out.loads |= nested.loads;
                            out.unbounded |= nested.unbounded;
                            out.modules |= nested.modules;
                            out.data_imports.extend(nested.data_imports);
                        }
                        '\\' => i += 1,
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '#' => {
                while chars.get(i).is_some_and(|c| *c != '\n') {
                    i += 1;
                }
            }
            c if c.is_ascii_alphabetic() || c == '_' || c == '$' => {
                let start = i - 1;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    i += 1;
                }
                let word: String = chars.get(start..i).unwrap_or_default().iter().collect();
                // `.env` is a field named `env`; `$env` a variable.
                let field = previous == ".";
                match word.as_str() {
                    "$ENV" => out.environment = true,
                    "env" | "strenv" if !field => out.environment = true,
                    "load" | "load_str" | "load_xml" | "load_props" | "load_base64" | "strload" if !field => {
                        out.loads = true;
                    }
                    "import" | "include" if !field => {
                        match directive(chars.get(i..).unwrap_or_default(), word == "import") {
                            Some((true, path)) => out.data_imports.push(path),
                            Some((false, _)) => out.modules = true,
                            None => {}
                        }
                    }
                    // `"NAME" | modulemeta` reads the module file NAME names, found only at run time.
                    "modulemeta" if !field => out.modules = true,
                    "repeat" | "infinite" | "recurse_down" | "while" | "until" if !field => {
                        out.unbounded = true
                    }
                    // `def f: …f…;`: a definition that calls itself may never end.
                    "def" if !field => {
                        let rest: String = chars.get(i..).unwrap_or_default().iter().collect();
                        let name: String = rest
                            .trim_start()
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                            .collect();
                        let body = rest.split_once(':').map_or("", |(_, body)| body);
                        let body = body.split_once(';').map_or(body, |(body, _)| body);
                        let calls_itself = !name.is_empty()
                            && body
                                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                                .any(|token| token == name);
                        out.unbounded |= calls_itself;
                    }
                    // `recurse(f)` ends only when `f` gives nothing; without a condition or an iteration in `f`
                    // (`recurse(.+1)`) it never does.
                    "recurse" if !field => {
                        let args: String = chars.get(i..).unwrap_or_default().iter().collect();
                        if let Some((inside, _)) = args.strip_prefix('(').and_then(|r| r.split_once(')'))
                            && !inside.contains(['[', ';'])
                        {
                            out.unbounded = true;
                        }
                    }
                    "range" if !field => {
                        // `range(N)`, `range(A; B)`, `range(A; B; STEP)` with literal numbers.
                        let args: String = chars.get(i..).unwrap_or_default().iter().collect();
                        let count = args
                            .strip_prefix('(')
                            .and_then(|rest| rest.split_once(')'))
                            .map(|(inside, _)| range_count(inside));
                        if count.is_none_or(|n| n.is_none_or(|n| n > crate::knowledge::MAX_GENERATED_WORDS)) {
                            out.unbounded = true;
                        }
                    }
                    _ => {}
                }
                previous = word;
                continue;
            }
            c if c.is_whitespace() => continue,
            _ => {}
        }
        previous = c.to_string();
    }
    out
}

/// How many numbers `range(…)` makes from literal bounds, or `None` when a bound is not a literal number.
fn range_count(inside: &str) -> Option<u64> {
    let numbers: Option<Vec<f64>> = inside.split(';').map(|n| n.trim().parse::<f64>().ok()).collect();
    let count = match numbers?.as_slice() {
        [n] => *n,
        [from, to] => to - from,
        [from, to, step] if *step != 0.0 => (to - from) / step,
        _ => return None,
    };
    // A negative or empty range makes nothing; a non-finite one never ends.
    if !count.is_finite() {
        return None;
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "clamped to the range of u64"
    )]
    Some(count.clamp(0.0, u64::MAX as f64) as u64)
}

/// Whether interpreter code has the shape of a fork bomb: a call that duplicates the running process or starts
/// one without waiting for it (`fork`, `os.fork()`, `Process.fork`, `pcntl_fork`, `child_process.spawn`,
/// `subprocess.Popen`) where an unbounded loop repeats it (`while`, `until`, `loop`, `for(;;)`): processes pile up
/// without end.
pub(crate) fn fork_bomb(code: &str) -> bool {
    let mut forks = false;
    let mut loops = false;
    let mut word = String::new();
    let mut tokens: Vec<String> = Vec::new();
    for c in code.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            tokens.push(std::mem::take(&mut word));
        }
        if !c.is_whitespace() {
            tokens.push(c.to_string());
        }
    }
    for (k, token) in tokens.iter().enumerate() {
        let lower = token.to_ascii_lowercase();
        // Calls that start a process without waiting for it: each copy, or each started one, keeps going.
        if matches!(
            lower.as_str(),
            "fork" | "forkpty" | "spawn" | "posix_spawn" | "popen" | "proc_open"
        ) || lower.ends_with("_fork")
        {
            forks = true;
        }
        match lower.as_str() {
            "while" | "until" | "loop" => loops = true,
            // `for (;;)` and `for(;;)`.
            "for" => {
                let rest: String = tokens.get(k + 1..k + 4).unwrap_or_default().concat();
                loops |= rest == "(;;";
            }
            _ => {}
        }
    }
    forks && loops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fork_bombs_in_interpreter_code() {
        for code in [
            "fork while fork",
            "import os\nwhile True: os.fork()",
            "while(1){fork}",
            "loop { fork }",
            "Process.fork while true",
            "for(;;) require('child_process').fork(__filename)",
            "while (true) { pcntl_fork(); }",
            "for(;;)require('child_process').spawn(process.execPath)",
            "import subprocess\nwhile True: subprocess.Popen(['sleep', '9'])",
        ] {
            assert!(fork_bomb(code), "{code}");
        }
        for code in [
            "import os; print(os.getpid())",
            "print(1)",
            "while read: pass",
            "pid = os.fork()",
            "for x in range(3): print(x)",
        ] {
            assert!(!fork_bomb(code), "{code}");
        }
    }

    #[test]
    fn filters() {
        assert!(filter("$ENV.HOME").environment);
        assert!(filter("env | keys").environment);
        assert!(!filter(".env").environment);
        assert!(!filter(".a | .b").environment);
        assert!(filter("[range(1e9)]").unbounded);
        assert!(filter("[range(0; 100000000)]").unbounded);
        assert!(!filter("[range(10)]").unbounded);
        assert!(filter("repeat(1)").unbounded);
        assert!(filter("load(\"x.yaml\")").loads);
        let data = filter("import \"cfg/app\" as $app; $app");
        assert_eq!(data.data_imports, [Some("cfg/app".to_owned())]);
        assert!(!data.modules);
        assert_eq!(
            filter("import \"a\" as $a {search: \"~\"}; $a").data_imports,
            [None]
        );
        assert_eq!(filter("import \"\\(1)\" as $a; $a").data_imports, [None]);
        assert!(filter("import \"lib\" as lib; lib::f").modules);
        assert!(filter("include \"lib\"; f").modules);
        assert!(filter("\"lib\" | modulemeta").modules);
        assert!(!filter("{import: 1} | .include").modules);
        assert!(filter("{import: 1} | .include").data_imports.is_empty());
        assert!(!filter(".load").loads);
        assert!(!filter("\"range(1e9)\"").unbounded);
        assert!(filter("\"\\(env.GITHUB_TOKEN)\"").environment);
        assert!(filter("\"token: \\($ENV.X)\"").environment);
        assert!(!filter("\"env\"").environment);
        assert!(filter("def f: 1, f; f").unbounded);
        assert!(!filter("def f: . + 1; f").unbounded);
    }

    #[test]
    fn endless_loops_in_programs() {
        assert!(sed(":a;ba").endless);
        assert!(sed(":a\ns/x/x/\nta").endless);
        assert!(!sed(":a;N;$!ba;s/\\n/ /g").endless);
        assert!(!sed("s/a/b/;tx;:x").endless);
        assert!(awk("BEGIN { while (1) print }").endless);
        assert!(awk("BEGIN { for (;;) x++ }").endless);
        assert!(!awk("{ while ((getline l) > 0) n++ }").endless);
        assert!(!awk("{ for (i = 1; i <= NF; i++) print $i }").endless);
        assert!(filter("0 | recurse(. + 1)").unbounded);
        assert!(!filter("recurse(.children[]?)").unbounded);
        assert!(filter("0 | while(true; . + 1)").unbounded);
    }

    #[test]
    fn awk_argv_and_environ() {
        assert!(awk("BEGIN { ARGV[1] = \"/etc/shadow\"; ARGC = 2 } { print }").argv);
        assert!(awk("BEGIN { print ENVIRON[\"HOME\"] }").environ);
        assert!(!awk("{ print $1 }").argv);
    }

    #[test]
    fn awk_getline_from_a_file_reads_it() {
        assert!(awk(r#"{ getline line < "notes.txt"; print line }"#).reads);
        assert!(awk("{ while ((getline l < f) > 0) print l }").reads);
        assert!(!awk("{ while ((getline line) > 0) n++; if (n < 3) print }").reads);
        assert!(!awk("{ if ($1 < 10) print }").reads);
    }

    #[test]
    fn sed_read_only_scripts() {
        for script in [
            "s/a/b/g",
            "1,5p",
            "/x/d",
            "s|/|\\\\|g",
            "y/abc/xyz/",
            "$!N;P;D",
            "s/[/]/x/",
            "/^#/!s/e/w/",
        ] {
            let effects = sed(script);
            assert!(
                !effects.exec && effects.writes.is_empty() && !effects.unknown,
                "{script}: {effects:?}"
            );
        }
    }

    #[test]
    fn sed_exec_and_writes() {
        // `e COMMAND` runs the command as written; `e` alone and `s///e` run the pattern space.
        assert_eq!(sed("e id").commands, ["id"]);
        assert!(!sed("e id").exec);
        assert_eq!(sed("1e rm -rf /").commands, ["rm -rf /"]);
        assert_eq!(sed("1e rm -f a; rm -f b\np").commands, ["rm -f a; rm -f b"]);
        assert!(sed("s/x/id/e").exec);
        assert!(sed("1e").exec);
        assert_eq!(sed("w out.txt").writes, vec!["out.txt".to_owned()]);
        assert_eq!(sed("s/a/b/w /tmp/x").writes, vec!["/tmp/x".to_owned()]);
        assert_eq!(sed("/a/r secret").reads, vec!["secret".to_owned()]);
    }

    #[test]
    fn awk_programs() {
        for program in [
            "{print $1}",
            "$3 > 100",
            "/a|b/ {print}",
            "{ if ($1 > 2) print $2 }",
            "NR==1 || NR==2",
            "{ print ($1 > 2) }",
            "{ x = \"a|b\"; print x }",
        ] {
            assert_eq!(awk(program), AwkEffects::default(), "{program}");
        }
        // `system` of one string runs that command; of an expression, one only known at run time.
        assert_eq!(awk("BEGIN{system(\"id\")}").commands, ["id"]);
        assert!(!awk("BEGIN{system(\"id\")}").exec);
        assert_eq!(
            awk("BEGIN { system( \"rm -f \\\"a b\\\"\" ) }").commands,
            ["rm -f \"a b\""]
        );
        assert!(awk("{system(\"rm \" $1)}").exec);
        assert!(awk("{system(cmd)}").exec);
        assert_eq!(
            awk("BEGIN{system(\"echo a\\nrm -rf ~\")}").commands,
            ["echo a\nrm -rf ~"]
        );
        assert!(awk("BEGIN{system(\"\\162m -rf ~\")}").exec);
        assert!(awk("{print | \"sh\"}").exec);
        assert!(awk("{\"date\" | getline d}").exec);
        // A file named by one string is written by name; by an expression, only known at run time.
        assert_eq!(awk("{print > \"out\"}").written, ["out"]);
        assert_eq!(awk("{printf \"%s\", $1 >> \"/tmp/x\"; n++}").written, ["/tmp/x"]);
        assert!(!awk("{print > \"out\"}").writes);
        assert!(awk("{print > $1 \".txt\"}").writes);
        assert!(awk("{print > \"out\" NR}").writes);
        assert!(awk("{print > (\"a\" \"b\")}").writes);
        let stderr = awk("{print > \"/dev/stderr\"}");
        assert!(stderr.written.is_empty() && !stderr.writes);
    }
}
