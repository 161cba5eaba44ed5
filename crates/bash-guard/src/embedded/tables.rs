//! The calls each language's code is read for, by name, and what each does with its arguments.

use super::Language;

/// What a call by a name of the tables does with its arguments.
#[derive(Debug, Clone, Copy)]
pub(super) enum Call {
    /// Runs its first argument as a shell line, or a list of strings (or, where the language takes them, several
    /// string arguments) as a program and its arguments.
    Runs,
    /// Runs its first argument as a program, with the list of its second argument as the program's arguments.
    Spawns,
    /// Removes the path of each argument (`unlink "a", "b"`).
    Removes { recursive: bool },
    /// Removes the path of its first argument (`os.unlink(path)`) or, given none, the path its receiver was made
    /// of (`Path('x').unlink()`).
    RemovesReceiver,
    /// Writes the path of its first argument (`File.write(path, …)`).
    Writes,
    /// Opens the path of its first argument, writing when its mode (the second argument or `mode=`) says so.
    Opens,
    /// Writes the path its receiver was made of (`Path('x').write_text(…)`).
    WritesReceiver,
    /// Moves (or, `copies`, copies) the path of its first argument to that of its second.
    Moves { copies: bool },
    /// A web request whose first argument is its method and second its URL (`requests.request('PUT', url)`).
    FetchesWithMethod,
    /// A web request to the URL of its first argument: one that sends whatever its other arguments say (`sends`),
    /// or with a body when they name one (`data=`, `body:`, a `method` other than GET or HEAD) or, where
    /// `positional_body`, when it has a second argument (`urlopen(url, data)`).
    Fetches { sends: bool, positional_body: bool },
}

/// The names of calls, each with what it does. A name that starts with `.` is a method or a qualified name's last
/// part (`.rmSync` is `fs.rmSync` and `require('fs').rmSync`); any other is matched whole (`::` read as `.`).
pub(super) type Table = &'static [(&'static str, Call)];

const FILE: Call = Call::Removes { recursive: false };
const MOVE: Call = Call::Moves { copies: false };
const COPY: Call = Call::Moves { copies: true };
const TREE: Call = Call::Removes { recursive: true };
const GET: Call = Call::Fetches {
    sends: false,
    positional_body: false,
};
const SEND: Call = Call::Fetches {
    sends: true,
    positional_body: false,
};

static PYTHON: Table = &[
    // By the last part of the name: `os.system`, `__import__('os').system`, `o.system` after `import os as o`.
    (".system", Call::Runs),
    (".popen", Call::Runs),
    ("subprocess.run", Call::Runs),
    ("subprocess.call", Call::Runs),
    ("subprocess.check_call", Call::Runs),
    ("subprocess.check_output", Call::Runs),
    ("subprocess.Popen", Call::Runs),
    ("subprocess.getoutput", Call::Runs),
    ("subprocess.getstatusoutput", Call::Runs),
    (".check_output", Call::Runs),
    (".check_call", Call::Runs),
    (".Popen", Call::Runs),
    (".rmtree", TREE),
    // `os.remove(path)` (a list's `remove` is no removal), `os.unlink(path)` and `__import__('os').unlink(path)`;
    // `Path('x').unlink()` without an argument removes its receiver.
    ("os.remove", FILE),
    ("remove", FILE),
    (".unlink", Call::RemovesReceiver),
    ("open", Call::Opens),
    ("io.open", Call::Opens),
    (".write_text", Call::WritesReceiver),
    (".write_bytes", Call::WritesReceiver),
    ("os.truncate", Call::Writes),
    ("os.rename", MOVE),
    ("os.renames", MOVE),
    ("os.replace", MOVE),
    ("shutil.move", MOVE),
    ("shutil.copy", COPY),
    ("shutil.copy2", COPY),
    ("shutil.copyfile", COPY),
    ("shutil.copytree", COPY),
    (
        ".urlopen",
        Call::Fetches {
            sends: false,
            positional_body: true,
        },
    ),
    (".urlretrieve", GET),
    (".Request", GET),
    ("requests.get", GET),
    ("requests.head", GET),
    ("requests.request", Call::FetchesWithMethod),
    ("requests.post", SEND),
    ("requests.put", SEND),
    ("requests.patch", SEND),
    ("requests.delete", SEND),
    ("httpx.get", GET),
    ("httpx.head", GET),
    ("httpx.request", Call::FetchesWithMethod),
    ("httpx.post", SEND),
    ("httpx.put", SEND),
    ("httpx.patch", SEND),
    ("httpx.delete", SEND),
];

/// Python's calls of `subprocess` by a name of its own (`import subprocess as s; s.run([...])`), which count where
/// the code imports `subprocess`.
pub(super) static PYTHON_SUBPROCESS: Table = &[
    (".run", Call::Runs),
    (".call", Call::Runs),
    (".getoutput", Call::Runs),
];

static JAVASCRIPT: Table = &[
    (".execSync", Call::Runs),
    (".exec", Call::Runs),
    (".spawnSync", Call::Spawns),
    (".spawn", Call::Spawns),
    (".execFileSync", Call::Spawns),
    (".execFile", Call::Spawns),
    ("Bun.spawn", Call::Runs),
    ("Bun.spawnSync", Call::Runs),
    (".rmSync", TREE),
    (".rm", TREE),
    (".rmdirSync", TREE),
    (".rmdir", TREE),
    (".unlinkSync", FILE),
    (".unlink", FILE),
    (".writeFileSync", Call::Writes),
    (".writeFile", Call::Writes),
    (".appendFileSync", Call::Writes),
    (".appendFile", Call::Writes),
    (".truncateSync", Call::Writes),
    (".renameSync", MOVE),
    (".rename", MOVE),
    (".copyFileSync", COPY),
    (".copyFile", COPY),
    (".cpSync", COPY),
    (
        "fetch",
        Call::Fetches {
            sends: false,
            positional_body: true,
        },
    ),
    (".request", GET),
    ("http.get", GET),
    ("https.get", GET),
    ("http.request", GET),
    ("https.request", GET),
    ("axios.get", GET),
    ("axios.head", GET),
    ("axios.request", GET),
    ("axios.post", SEND),
    ("axios.put", SEND),
    ("axios.patch", SEND),
    ("axios.delete", SEND),
];

static PERL: Table = &[
    ("system", Call::Runs),
    ("exec", Call::Runs),
    ("unlink", FILE),
    (".rmtree", TREE),
    (".remove_tree", TREE),
    ("rename", MOVE),
    ("get", GET),
    ("getstore", GET),
    ("mirror", GET),
    (".post", SEND),
    (".put", SEND),
];

static RUBY: Table = &[
    ("system", Call::Runs),
    ("exec", Call::Runs),
    ("spawn", Call::Runs),
    (".system", Call::Runs),
    (".spawn", Call::Runs),
    (".popen", Call::Runs),
    (".capture2", Call::Runs),
    (".capture2e", Call::Runs),
    (".capture3", Call::Runs),
    (".popen2", Call::Runs),
    (".popen3", Call::Runs),
    ("File.delete", FILE),
    ("File.unlink", FILE),
    (".rm", FILE),
    (".rm_f", FILE),
    (".remove_file", FILE),
    (".rm_r", TREE),
    (".rm_rf", TREE),
    (".rmtree", TREE),
    (".remove_dir", TREE),
    (".remove_entry", TREE),
    (".remove_entry_secure", TREE),
    ("File.write", Call::Writes),
    ("IO.write", Call::Writes),
    ("File.rename", MOVE),
    (".mv", MOVE),
    (".cp", COPY),
    (".cp_r", COPY),
    ("Net.HTTP.get", GET),
    ("Net.HTTP.get_response", GET),
    ("URI.open", GET),
    ("Net.HTTP.post", SEND),
    ("Net.HTTP.post_form", SEND),
    ("Net.HTTP.put", SEND),
];

static PHP: Table = &[
    ("system", Call::Runs),
    ("exec", Call::Runs),
    ("shell_exec", Call::Runs),
    ("passthru", Call::Runs),
    ("popen", Call::Runs),
    ("proc_open", Call::Runs),
    ("unlink", FILE),
    ("file_put_contents", Call::Writes),
    ("rename", MOVE),
    ("copy", COPY),
    ("file_get_contents", GET),
];

static R: Table = &[
    ("system", Call::Runs),
    ("file.remove", FILE),
    ("unlink", TREE),
    ("file.rename", MOVE),
    ("file.copy", COPY),
];

static LUA: Table = &[
    ("os.execute", Call::Runs),
    ("io.popen", Call::Runs),
    ("os.remove", FILE),
    ("os.rename", MOVE),
    ("io.open", Call::Opens),
];

impl Language {
    pub(super) fn table(self) -> Table {
        match self {
            Self::Python => PYTHON,
            Self::JavaScript => JAVASCRIPT,
            Self::Perl => PERL,
            Self::Ruby => RUBY,
            Self::Php => PHP,
            Self::R => R,
            Self::Lua => LUA,
        }
    }

    /// Perl and Ruby call without brackets (`system "make"`, `unlink "a"`).
    pub(super) fn bare_calls(self) -> bool {
        matches!(self, Self::Perl | Self::Ruby)
    }
}
