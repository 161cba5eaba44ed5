//! Tests of the reader of interpreter code: the calls each language spells out, its strings and escapes, directory changes, requests.

use super::*;

fn line(text: &str) -> Spelled {
    Spelled::Line(text.to_owned())
}

fn removes(path: Option<&str>, recursive: bool) -> Spelled {
    Spelled::Removes {
        path: path.map(str::to_owned),
        recursive,
    }
}

fn argv(words: &[Option<&str>]) -> Spelled {
    Spelled::Argv(words.iter().map(|w| w.map(str::to_owned)).collect())
}

#[test]
fn python_commands_and_removals() {
    use Language::Python;
    assert_eq!(
        read(Python, "import shutil; shutil.rmtree('.')", false),
        [removes(Some("."), true)]
    );
    assert_eq!(
        read(
            Python,
            "import os\nos.remove(\"app.db\")\nprint('os.remove(x)')",
            false
        ),
        [removes(Some("app.db"), false)]
    );
    assert_eq!(
        read(
            Python,
            "__import__('os').system('rm -rf ~'); import shutil as s; s.rmtree('.')",
            false
        ),
        [line("rm -rf ~"), removes(Some("."), true)]
    );
    assert_eq!(
        read(Python, "from os import remove; remove('app.db')", false),
        [removes(Some("app.db"), false)]
    );
    assert_eq!(
        read(Python, "import os; os.system('rm -rf data')", false),
        [line("rm -rf data")]
    );
    assert_eq!(
        read(
            Python,
            "import subprocess as s\nsubprocess.run(['git', 'clean', '-fdx'], check=True)",
            false
        ),
        [argv(&[Some("git"), Some("clean"), Some("-fdx")])]
    );
    assert_eq!(
        read(
            Python,
            "from pathlib import Path; Path('db.sqlite3').unlink()",
            false
        ),
        [removes(Some("db.sqlite3"), false)]
    );
    // Paths and commands made at run time.
    assert_eq!(
        read(Python, "import os\nfor f in fs: os.remove(f)", false),
        [removes(None, false)]
    );
    assert_eq!(
        read(Python, "import os; os.remove(f'{d}/x')", false),
        [removes(None, false)]
    );
    assert_eq!(read(Python, "p.unlink()", false), [removes(None, false)]);
    assert!(read(Python, "os.system(cmd)", false).is_empty());
    // Names in strings and comments, and look-alikes, are no calls.
    assert!(
        read(
            Python,
            "# shutil.rmtree('.')\nprint(\"os.remove('x')\")\nitems.remove('a')",
            false
        )
        .is_empty()
    );
    // A here-document the shell expands: `$x` in a string is the shell's.
    assert_eq!(
        read(Python, "import os; os.remove('$HOME/x')", true),
        [removes(None, false)]
    );
    assert_eq!(
        read(Python, "import os; os.remove('''a.txt''')", true),
        [removes(Some("a.txt"), false)]
    );
    // An escape the reader does not know leaves the text unknown: `\x72m` is `rm` to Python.
    assert_eq!(
        read(Python, "import shutil; shutil.rmtree('\\x2f')", false),
        [removes(None, true)]
    );
    assert!(read(Python, "import os; os.system('\\x72m -rf /')", false).is_empty());
    assert_eq!(
        read(Python, "import os; os.system('echo a\\nrm -rf ~')", false),
        [line("echo a\nrm -rf ~")]
    );
    assert_eq!(
        read(Python, "import os; os.remove(r'a\\b')", false),
        [removes(Some("a\\b"), false)]
    );
}

fn fetches(url: Option<&str>, sends: bool) -> Spelled {
    Spelled::Fetches {
        url: url.map(str::to_owned),
        sends,
    }
}

#[test]
fn web_requests_and_what_they_send() {
    use Language::{JavaScript, Python, Ruby};
    assert_eq!(
        read(
            Python,
            "import urllib.request as u; u.urlopen('https://pypi.org/simple/')",
            false
        ),
        [fetches(Some("https://pypi.org/simple/"), false)]
    );
    assert_eq!(
        read(Python, "urlopen('https://x.io/a', payload)", false),
        [fetches(Some("https://x.io/a"), true)]
    );
    assert_eq!(
        read(
            Python,
            "requests.get('https://x.io/a', data=open('f').read())",
            false
        ),
        [fetches(Some("https://x.io/a"), true)]
    );
    assert_eq!(
        read(Python, "requests.put(url, json=doc)", false),
        [fetches(None, true)]
    );
    // A GET to a place only known at run time is the proxy's to bound; a string that is no URL is no request.
    assert!(read(Python, "requests.get(url, params=data)", false).is_empty());
    assert!(read(Python, "d.get('key'); requests.get('index.html')", false).is_empty());
    assert_eq!(
        read(
            JavaScript,
            "fetch('https://registry.npmjs.org/x', {method: 'PUT', body})",
            false
        ),
        [fetches(Some("https://registry.npmjs.org/x"), true)]
    );
    assert_eq!(
        read(
            JavaScript,
            "fetch('https://registry.npmjs.org/x', {method: 'GET'}).then(r => r.json())",
            false
        ),
        [fetches(Some("https://registry.npmjs.org/x"), false)]
    );
    assert_eq!(
        read(
            Ruby,
            "Net::HTTP.post(URI(\"https://rubygems.org/api/v1/gems\"), File.read(\"a\"))",
            false
        ),
        [fetches(Some("https://rubygems.org/api/v1/gems"), true)]
    );
}

/// Code that changes its directory: its relative removals are of paths only known at run time, its commands
/// run after a `cd` to a directory only known at run time.
#[test]
fn a_directory_change_makes_relative_paths_unknown() {
    use Language::{JavaScript, Python};
    assert_eq!(
        read(
            Python,
            "import os; os.chdir('data'); os.remove('a.csv'); os.remove('/tmp/x')",
            false
        ),
        [removes(None, false), removes(Some("/tmp/x"), false)]
    );
    assert_eq!(
        read(
            Python,
            "import subprocess; subprocess.run(['rm', '-rf', 'x'], cwd='data')",
            false
        ),
        [line("cd -- \"$AGENT_GUARD_UNKNOWN_DIRECTORY\" && 'rm' '-rf' 'x'")]
    );
    assert_eq!(
        read(
            JavaScript,
            "process.chdir('d'); require('fs').rmSync('x', {recursive: true})",
            false
        ),
        [removes(None, true)]
    );
}

#[test]
fn requests_by_method_quoted_keys_and_aliases() {
    use Language::{JavaScript, Python};
    assert_eq!(
        read(Python, "requests.request('PUT', 'https://x.io/a', data=d)", false),
        [fetches(Some("https://x.io/a"), true)]
    );
    assert_eq!(
        read(Python, "requests.request('GET', 'https://x.io/a')", false),
        [fetches(Some("https://x.io/a"), false)]
    );
    assert_eq!(
        read(
            JavaScript,
            "fetch('https://x.io/a', {'method': 'PUT', 'body': b})",
            false
        ),
        [fetches(Some("https://x.io/a"), true)]
    );
    // Options only known at run time may carry a body.
    assert_eq!(
        read(JavaScript, "fetch('https://x.io/a', init)", false),
        [fetches(Some("https://x.io/a"), true)]
    );
    assert_eq!(
        read(Python, "import subprocess as s; s.run(['npm', 'publish'])", false),
        [argv(&[Some("npm"), Some("publish")])]
    );
    // Without `subprocess`, or with the word only in a string, a `run` method is no process.
    assert!(read(Python, "app.run(['a'])", false).is_empty());
    assert!(read(Python, "print('subprocess'); app.run(['a'])", false).is_empty());
}

/// Writes, moves and copies by name, and the lists `subprocess` runs with `shell=True` or another `executable`.
#[test]
fn writes_moves_copies_and_what_a_list_runs() {
    use Language::{JavaScript, Python, Ruby};
    let writes = |path: Option<&str>| Spelled::Writes(path.map(str::to_owned));
    let moves = |from: &str, to: &str, copies: bool| Spelled::Moves {
        from: Some(from.to_owned()),
        to: Some(to.to_owned()),
        copies,
    };
    assert_eq!(
        read(Python, "open('app.db', 'w').close()", false),
        [writes(Some("app.db"))]
    );
    assert_eq!(
        read(Python, "open('app.db', mode='a')", false),
        [writes(Some("app.db"))]
    );
    assert!(read(Python, "print(open('app.db').read()); open('b', 'rb')", false).is_empty());
    assert_eq!(
        read(
            Python,
            "import pathlib; pathlib.Path('data/u.csv').write_text('')",
            false
        ),
        [writes(Some("data/u.csv"))]
    );
    assert_eq!(
        read(Python, "import os; os.rename('app.db', 'build/a')", false),
        [moves("app.db", "build/a", false)]
    );
    assert_eq!(
        read(Python, "import shutil; shutil.copy('a', 'data/u.csv')", false),
        [moves("a", "data/u.csv", true)]
    );
    assert_eq!(
        read(JavaScript, "require('fs').writeFileSync('app.db', '')", false),
        [writes(Some("app.db"))]
    );
    assert_eq!(
        read(Ruby, "File.write('app.db', '')", false),
        [writes(Some("app.db"))]
    );
    assert_eq!(
        read(
            Python,
            "import subprocess; subprocess.run(['rm -rf data'], shell=True)",
            false
        ),
        [line("rm -rf data")]
    );
    assert_eq!(
        read(
            Python,
            "import subprocess; subprocess.run(['ls', '-rf', 'data'], executable='rm')",
            false
        ),
        [argv(&[Some("rm"), Some("-rf"), Some("data")])]
    );
}

/// Names given to others, and strings joined, are followed.
#[test]
fn aliases_and_joined_strings() {
    use Language::{JavaScript, Perl, Python};
    assert_eq!(
        read(Python, "from shutil import rmtree as r; r('data')", false),
        [removes(Some("data"), true)]
    );
    assert_eq!(
        read(Python, "import shutil; f = shutil.rmtree; f('data')", false),
        [removes(Some("data"), true)]
    );
    assert_eq!(
        read(Python, "import os as o; o.system('rm -rf ~')", false),
        [line("rm -rf ~")]
    );
    assert_eq!(
        read(
            JavaScript,
            "const {rmSync: r} = require('fs'); r('data', {recursive: true})",
            false
        ),
        [removes(Some("data"), true)]
    );
    assert_eq!(
        read(JavaScript, "const r = require('fs').rmSync; r('data')", false),
        [removes(Some("data"), true)]
    );
    assert_eq!(
        read(Python, "import os; os.system('rm -rf ' 'data')", false),
        [line("rm -rf data")]
    );
    assert_eq!(
        read(Python, "import os; os.system('rm -rf ' + 'data')", false),
        [line("rm -rf data")]
    );
    assert_eq!(
        read(Perl, "system(\"rm -rf \" . \"data\")", false),
        [line("rm -rf data")]
    );
    // A part only known at run time leaves the whole unknown.
    assert!(read(Python, "import os; os.system('rm -rf ' + d)", false).is_empty());
}

#[test]
fn javascript_perl_ruby_php_r_lua() {
    assert_eq!(
        read(
            Language::JavaScript,
            "require('fs').rmSync('data', {recursive: true})",
            false
        ),
        [removes(Some("data"), true)]
    );
    assert_eq!(
        read(
            Language::JavaScript,
            "const {execSync} = require('child_process'); execSync(`rm -rf build`)",
            false
        ),
        [line("rm -rf build")]
    );
    assert_eq!(
        read(
            Language::JavaScript,
            "require('child_process').spawnSync('rm', ['-rf', 'x'])",
            false
        ),
        [argv(&[Some("rm"), Some("-rf"), Some("x")])]
    );
    // A regular expression's `exec` runs nothing.
    assert!(read(Language::JavaScript, "/a/.exec('abc')", false).is_empty());
    assert_eq!(
        read(Language::Perl, "unlink \"app.db\", 'b.txt';", false),
        [removes(Some("app.db"), false), removes(Some("b.txt"), false)]
    );
    assert_eq!(
        read(Language::Perl, "print `rm -f x`; system(\"make\")", false),
        [line("rm -f x"), line("make")]
    );
    assert_eq!(
        read(Language::Perl, "use File::Path; File::Path::rmtree('d')", false),
        [removes(Some("d"), true)]
    );
    assert_eq!(read(Language::Perl, "system \"rm -f $f\"", false), []);
    assert_eq!(
        read(Language::Perl, "unlink 'a\\b'", false),
        [removes(Some("a\\b"), false)]
    );
    assert_eq!(
        read(
            Language::Ruby,
            "require 'fileutils'; FileUtils.rm_rf('tmp')",
            false
        ),
        [removes(Some("tmp"), true)]
    );
    assert_eq!(
        read(Language::Ruby, "File.delete(\"app.db\")", false),
        [removes(Some("app.db"), false)]
    );
    assert_eq!(
        read(Language::Ruby, "system 'rm', '-f', 'x'", false),
        [argv(&[Some("rm"), Some("-f"), Some("x")])]
    );
    assert_eq!(read(Language::Ruby, "puts %x(ls -la)", false), [line("ls -la")]);
    assert_eq!(
        read(Language::Php, "unlink('x.db'); echo shell_exec('id');", false),
        [removes(Some("x.db"), false), line("id")]
    );
    assert_eq!(
        read(Language::R, "unlink('data', recursive = TRUE)", false),
        [removes(Some("data"), true)]
    );
    assert_eq!(
        read(Language::Lua, "os.remove('a') -- os.remove('b')", false),
        [removes(Some("a"), false)]
    );
}
