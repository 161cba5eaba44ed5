//! A reader for what `sqlite3` runs: its SQL statements and dot-commands, and whether each only reads.

/// What the statements and dot-commands given to `sqlite3` do besides reading the database.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct SqlEffects {
    /// The first statement that changes the database itself (`INSERT`, `CREATE`, `VACUUM`), which a database
    /// opened read-only refuses.
    pub(crate) changes_database: Option<String>,
    /// Files a dot-command writes (`.output FILE`, `.once FILE`, `.save FILE`, `.open FILE`).
    pub(crate) writes: Vec<String>,
    /// Files a dot-command reads (`.import FILE TABLE`, which also changes the database).
    pub(crate) reads: Vec<String>,
    /// Shell code a dot-command runs (`.shell CODE`, `.system CODE`).
    pub(crate) shell: Vec<String>,
    /// What reaches code or files the analysis cannot see (`load_extension()`, `readfile()`, `.read FILE`).
    pub(crate) unseen: Vec<String>,
    /// A statement or dot-command this reader does not know, or text it cannot read: not known to only read.
    pub(crate) unknown: Option<String>,
}

/// Statements that only read.
const READ_STATEMENTS: &[&str] = &[
    "select", "values", "explain", "begin", "commit", "end", "rollback", "detach",
];

/// Statements that change the database they run in, and nothing outside it.
const WRITE_STATEMENTS: &[&str] = &[
    "insert",
    "update",
    "delete",
    "replace",
    "create",
    "drop",
    "alter",
    "reindex",
    "analyze",
    "vacuum",
    "savepoint",
    "release",
    "upsert",
];

/// Pragmas that only report, written without a value (`PRAGMA page_count`).
const REPORTING_PRAGMAS: &[&str] = &[
    "application_id",
    "auto_vacuum",
    "automatic_index",
    "busy_timeout",
    "cache_size",
    "cache_spill",
    "cell_size_check",
    "collation_list",
    "compile_options",
    "data_version",
    "database_list",
    "defer_foreign_keys",
    "encoding",
    "foreign_key_check",
    "foreign_key_list",
    "foreign_keys",
    "freelist_count",
    "function_list",
    "index_info",
    "index_list",
    "index_xinfo",
    "integrity_check",
    "journal_mode",
    "journal_size_limit",
    "locking_mode",
    "max_page_count",
    "mmap_size",
    "module_list",
    "page_count",
    "page_size",
    "pragma_list",
    "query_only",
    "quick_check",
    "recursive_triggers",
    "schema_version",
    "secure_delete",
    "synchronous",
    "table_info",
    "table_list",
    "table_xinfo",
    "temp_store",
    "user_version",
    "wal_autocheckpoint",
];

/// Pragmas whose argument in parentheses names what to report on (`PRAGMA table_info(users)`); for every other
/// pragma, `PRAGMA name(value)` sets it.
const ARGUMENT_PRAGMAS: &[&str] = &[
    "foreign_key_check",
    "foreign_key_list",
    "index_info",
    "index_list",
    "index_xinfo",
    "integrity_check",
    "quick_check",
    "table_info",
    "table_list",
    "table_xinfo",
];

/// Functions the `sqlite3` shell provides that reach beyond the database, and what each does.
const REACHING_FUNCTIONS: &[(&str, &str)] = &[
    (
        "load_extension",
        "loads a native extension: code the analysis cannot see",
    ),
    (
        "writefile",
        "writes files the SQL names, which the path check cannot see",
    ),
    (
        "readfile",
        "reads files the SQL names, which the path check cannot see",
    ),
    (
        "fsdir",
        "lists directories the SQL names, which the path check cannot see",
    ),
    (
        "lsdir",
        "lists directories the SQL names, which the path check cannot see",
    ),
    (
        "zipfile",
        "reads or writes zip archives the SQL names, which the path check cannot see",
    ),
    ("edit", "opens an editor program"),
];

/// Dot-commands that only print or change how output looks.
const READ_COMMANDS: &[&str] = &[
    "tables",
    "schema",
    "fullschema",
    "indexes",
    "indices",
    "dump",
    "dbinfo",
    "databases",
    "show",
    "headers",
    "header",
    "mode",
    "width",
    "nullvalue",
    "separator",
    "print",
    "timer",
    "help",
    "eqp",
    "explain",
    "changes",
    "bail",
    "echo",
    "version",
    "stats",
];

/// Dot-commands whose first argument is a file they write (`stdout`, `stderr` and `off` are no files).
const WRITE_COMMANDS: &[&str] = &["output", "once", "save", "backup", "open", "log", "trace"];

/// One token of SQL.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A keyword or a bare identifier, in lower case.
    Word(String),
    /// A quoted identifier (`"x"`, `` `x` ``, `[x]`), in lower case.
    Quoted(String),
    /// A string or blob literal.
    Text,
    Semicolon,
    Punct(char),
}

/// Reads the statements or dot-commands of one argument of `sqlite3` (or of `-cmd`), as the shell runs it: an
/// argument that starts with `.` is one dot-command, any other is SQL.
pub(crate) fn sqlite(text: &str, effects: &mut SqlEffects) {
    match text.strip_prefix('.') {
        Some(command) => dot_command(command, effects),
        None => statements(text, effects),
    }
}

fn dot_command(line: &str, effects: &mut SqlEffects) {
    let line = line.trim_end();
    let (name, rest) = line
        .split_once(char::is_whitespace)
        .map_or((line, ""), |(name, rest)| (name, rest.trim()));
    let first = rest
        .split_whitespace()
        .next()
        .map(|w| w.trim_matches(['"', '\'']));
    if READ_COMMANDS.contains(&name) {
        return;
    }
    if WRITE_COMMANDS.contains(&name) {
        match first {
            // `.output` alone, `.log off`, `.trace stdout`: back to the terminal.
            None if matches!(name, "output" | "log" | "trace") => {}
            Some("stdout" | "stderr" | "off") => {}
            // `.output |CMD`: the output goes to a command.
            Some(pipe) if pipe.starts_with('|') => {
                effects.shell.push(pipe.trim_start_matches('|').to_owned())
            }
            Some(file) if !file.starts_with('-') => effects.writes.push(file.to_owned()),
            // `.once -x` opens a spreadsheet, `.output -e` an editor; other options are not read.
            Some(_) | None => {
                effects
                    .unknown
                    .get_or_insert_with(|| format!("`.{name}` with options the analysis does not read"));
            }
        }
        return;
    }
    match name {
        "shell" | "system" => effects.shell.push(rest.to_owned()),
        "import" => {
            match first.filter(|f| !f.starts_with('-') && !f.starts_with('|')) {
                Some(file) => effects.reads.push(file.to_owned()),
                None => effects.unseen.push(
                    "`.import` reads a command's output or options the analysis does not read".to_owned(),
                ),
            }
            effects
                .changes_database
                .get_or_insert_with(|| "`.import` fills a table".to_owned());
        }
        "read" => effects
            .unseen
            .push("`.read` runs statements from a file the analysis cannot see".to_owned()),
        "load" => effects
            .unseen
            .push("`.load` loads a native extension: code the analysis cannot see".to_owned()),
        "excel" => effects
            .unseen
            .push("`.excel` opens a spreadsheet program".to_owned()),
        _ => {
            effects
                .unknown
                .get_or_insert_with(|| format!("`.{name}` is not a dot-command known to only read"));
        }
    }
}

fn statements(sql: &str, effects: &mut SqlEffects) {
    let Some(tokens) = tokens(sql) else {
        effects
            .unknown
            .get_or_insert_with(|| "the SQL has an unterminated quote or comment".to_owned());
        return;
    };
    for token in &tokens {
        if let Token::Word(name) | Token::Quoted(name) = token
            && let Some((function, what)) = REACHING_FUNCTIONS.iter().find(|(f, _)| f == name)
        {
            effects.unseen.push(format!("`{function}()` {what}"));
        }
    }
    for statement in tokens.split(|t| *t == Token::Semicolon).filter(|s| !s.is_empty()) {
        statement_effects(statement, effects);
    }
}

fn statement_effects(statement: &[Token], effects: &mut SqlEffects) {
    let words = || {
        statement.iter().filter_map(|t| match t {
            Token::Word(w) => Some(w.as_str()),
            _ => None,
        })
    };
    let Some(Token::Word(first)) = statement.first() else {
        effects
            .unknown
            .get_or_insert_with(|| "a statement that does not start with a keyword".to_owned());
        return;
    };
    let first = first.as_str();
    match first {
        "pragma" => pragma(statement.get(1..).unwrap_or_default(), effects),
        "attach" => effects
            .unseen
            .push("`ATTACH` opens (or creates) another database file".to_owned()),
        "vacuum" if words().any(|w| w == "into") => {
            effects
                .unseen
                .push("`VACUUM INTO` writes a new database file".to_owned());
        }
        // A common table expression leads any statement: it writes when one of them does.
        "with" | "explain" => {
            if let Some(write) = words().find(|w| WRITE_STATEMENTS.contains(w)) {
                changes(effects, write);
            }
        }
        _ if READ_STATEMENTS.contains(&first) => {}
        _ if WRITE_STATEMENTS.contains(&first) => changes(effects, first),
        _ => {
            effects.unknown.get_or_insert_with(|| {
                format!("`{}` is not a statement known to only read", first.to_uppercase())
            });
        }
    }
}

fn changes(effects: &mut SqlEffects, keyword: &str) {
    effects
        .changes_database
        .get_or_insert_with(|| format!("`{}` changes the database", keyword.to_uppercase()));
}

/// `PRAGMA [schema.]name`, `PRAGMA name(arg)` or `PRAGMA name = value`: only the first, or the second for the
/// pragmas whose argument names a table or index, reports without changing anything.
fn pragma(rest: &[Token], effects: &mut SqlEffects) {
    let rest = match rest {
        [Token::Word(_) | Token::Quoted(_), Token::Punct('.'), tail @ ..] => tail,
        _ => rest,
    };
    let (name, tail) = match rest.split_first() {
        Some((Token::Word(name) | Token::Quoted(name), tail)) => (name.as_str(), tail),
        _ => {
            effects
                .unknown
                .get_or_insert_with(|| "a `PRAGMA` the analysis cannot read".to_owned());
            return;
        }
    };
    let reports = match tail {
        [] => REPORTING_PRAGMAS.contains(&name),
        [Token::Punct('('), .., Token::Punct(')')] => ARGUMENT_PRAGMAS.contains(&name),
        _ => false,
    };
    if !reports {
        effects.unknown.get_or_insert_with(|| {
            format!("`PRAGMA {name}` in this form sets something, or is not known to only report")
        });
    }
}

/// The tokens of `sql`; `None` when a quote or comment does not end.
fn tokens(sql: &str) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '-' if chars.peek() == Some(&'-') => {
                for next in chars.by_ref() {
                    if next == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut star = false;
                let mut closed = false;
                for next in chars.by_ref() {
                    if star && next == '/' {
                        closed = true;
                        break;
                    }
                    star = next == '*';
                }
                if !closed {
                    return None;
                }
            }
            '\'' => {
                quoted(&mut chars, '\'')?;
                out.push(Token::Text);
            }
            '"' | '`' => out.push(Token::Quoted(quoted(&mut chars, c)?.to_lowercase())),
            '[' => {
                let mut name = String::new();
                loop {
                    match chars.next()? {
                        ']' => break,
                        next => name.push(next),
                    }
                }
                out.push(Token::Quoted(name.to_lowercase()));
            }
            ';' => out.push(Token::Semicolon),
            c if c.is_alphanumeric() || c == '_' || c == '$' => {
                let mut word = String::from(c);
                while let Some(&next) = chars.peek() {
                    if !(next.is_alphanumeric() || next == '_' || next == '$') {
                        break;
                    }
                    word.push(next);
                    chars.next();
                }
                out.push(Token::Word(word.to_lowercase()));
            }
            c => out.push(Token::Punct(c)),
        }
    }
    Some(out)
}

/// The text of a quoted token after its opening quote, a doubled quote standing for one.
fn quoted(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, quote: char) -> Option<String> {
    let mut text = String::new();
    loop {
        let c = chars.next()?;
        if c == quote {
            if chars.peek() == Some(&quote) {
                chars.next();
                text.push(quote);
                continue;
            }
            return Some(text);
        }
        text.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effects(args: &[&str]) -> SqlEffects {
        let mut out = SqlEffects::default();
        for arg in args {
            sqlite(arg, &mut out);
        }
        out
    }

    #[test]
    fn reads() {
        for sql in [
            "SELECT * FROM users WHERE name = 'x; DROP TABLE users'",
            "select count(*) from t; select 1",
            "WITH r AS (SELECT 1) SELECT * FROM r",
            "EXPLAIN QUERY PLAN SELECT * FROM t",
            "PRAGMA table_info(users)",
            "PRAGMA main.page_count",
            "SELECT 1 -- INSERT INTO t\n",
            "SELECT \"insert\" FROM t",
            ".tables",
            ".schema users",
            ".mode json",
        ] {
            assert_eq!(effects(&[sql]), SqlEffects::default(), "{sql}");
        }
    }

    #[test]
    fn writes_to_the_database() {
        for sql in [
            "INSERT INTO t VALUES (1)",
            "SELECT 1; DELETE FROM t",
            "WITH r AS (SELECT 1) INSERT INTO t SELECT * FROM r",
            "create table x (a)",
            "VACUUM",
        ] {
            let found = effects(&[sql]);
            assert!(found.changes_database.is_some(), "{sql}");
            assert!(found.unseen.is_empty() && found.unknown.is_none(), "{sql}");
        }
    }

    #[test]
    fn reaches_beyond_the_database() {
        for sql in [
            "ATTACH 'other.db' AS o",
            "VACUUM INTO '/tmp/copy.db'",
            "SELECT load_extension('./evil')",
            "SELECT writefile('x', 'y')",
            "SELECT \"readfile\"('/etc/passwd')",
            ".read script.sql",
            ".load ./evil",
        ] {
            assert!(!effects(&[sql]).unseen.is_empty(), "{sql}");
        }
        let found = effects(&[
            ".output out.txt",
            ".once -x",
            ".shell rm -rf /tmp/x",
            ".import data.csv t",
        ]);
        assert_eq!(found.writes, ["out.txt"]);
        assert_eq!(found.shell, ["rm -rf /tmp/x"]);
        assert_eq!(found.reads, ["data.csv"]);
        assert!(found.changes_database.is_some() && found.unknown.is_some());
    }

    #[test]
    fn unknown_forms_are_not_reads() {
        for sql in [
            "PRAGMA journal_mode = WAL",
            "PRAGMA journal_mode(WAL)",
            "PRAGMA optimize",
            "SELECT 'unterminated",
            "SELECT 1 /* open",
            ".cd /tmp",
            "GRANT x",
        ] {
            assert!(effects(&[sql]).unknown.is_some(), "{sql}");
        }
    }
}
