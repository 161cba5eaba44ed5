//! The command knowledge table: what each known command is, which options make it write or run code.
//!
//! Everything bash-guard knows about individual commands is data in this file; `classify/` only interprets it and
//! `options.rs` reads every command's options with the [`Syntax`] given here.
//! Option names follow getopt: `-x` is a short option (it may be clustered, `-rf`), `--xyz` a long one (it may be
//! written `--xyz=value` and, because getopt_long and git accept unique abbreviations, a prefix of a dangerous long
//! option counts as that option).

use crate::embedded::Language;

/// What a command is.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    /// Read-only with these options and operands, unless an option in `flags.effects` says otherwise.
    ReadOnly(&'static Flags),
    /// Changes files: its operands (per `flags.operands`) are written.
    Write(&'static Flags),
    /// Runs the command in its arguments.
    Wrapper(&'static Wrapper),
    /// A shell: `-c STRING` is parsed as code, a script file or standard input is code we cannot see.
    Shell,
    /// `eval`: its arguments joined are parsed as code.
    Eval,
    /// `source` / `.`: runs a file in this shell.
    Source,
    /// `trap CODE SIGNAL…`: the code runs later in this shell.
    Trap,
    /// A language interpreter: runs code, except for the options that only print its version or help.
    Interpreter(&'static Interpreter),
    /// A package manager or build tool: runs repository code, except in the forms its table says only read.
    Program(&'static Program),
    /// A network client.
    Network,
    /// Runs as another user.
    Privileged,
    /// Stops the machine or destroys file systems.
    Destructive(&'static str),
    /// An interactive editor.
    Editor,
    /// An interactive program (a pager can run commands, a terminal multiplexer runs shells).
    Interactive,
    /// Needs a rule of its own in `classify/`.
    Special(Special),
}

/// Commands whose arguments need more than a flag table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Special {
    Git,
    Sed,
    Awk,
    Find,
    Rm,
    Dd,
    /// `chmod`, `chown`, `chgrp`: the first operand is the mode or owner.
    Chmod,
    Kill,
    /// `init`/`telinit`: runlevel 0 or 6 stops the machine.
    Init,
    Systemctl,
    Rsync,
    /// `export`, `declare`, `local`, `readonly`, `typeset`: assignments as arguments.
    Declare,
    /// `let EXPR…`: arithmetic evaluated by the shell.
    Let,
    /// `jq`: options with two values, one of them a file read.
    Jq,
    /// `openssl`: some sub-commands are network clients or servers.
    Openssl,
    /// `mktemp`: creates a file or directory, unless `-u` only prints a name.
    Mktemp,
    /// `set`: shell options, some of which change how later words are read (`-k`) or what later commands get
    /// (`-a`); without arguments it prints every variable.
    Set,
    /// `shopt`: shell options, some of which change what globs match.
    Shopt,
    /// `alias NAME=VALUE`: text that replaces a command word.
    Alias,
    /// `enable`: turns builtins on or off, or loads them from a shared object (`-f`).
    Enable,
    /// `ulimit`, `umask`: print a setting, or change it with an operand.
    Setting,
    /// `env`, `printenv`: print the environment (or run a command: `env` is also a wrapper).
    Printenv,
    /// `ps`: BSD-style `e` prints every process's environment.
    Ps,
    /// `tar`: lists (`-t`), creates or extracts.
    Tar,
    /// Compressors and archivers that only read when they list, test or write to standard output.
    Archive(&'static Archive),
    /// `yq`: a YAML processor (mikefarah's or the jq wrapper).
    Yq,
    /// `seq`: prints a range of numbers, as many as its operands say.
    Seq,
    /// `yes`: prints forever.
    Yes,
    /// `cd`, `pushd`, `popd`: move the shell to another directory, for every later command.
    Cd,
    /// `sleep DURATION…`: waits, without end for `infinity`.
    Sleep,
    /// `factor [NUMBER…]`: the work grows with the numbers' size.
    Factor,
    /// `sqlite3`: read-only when the SQL and dot-commands it runs only read.
    Sqlite3,
    /// `ffprobe`: reads media files, unless an option writes or an input is a protocol URL.
    Ffprobe,
    /// `tshark`: reads a capture file with `-r`; without it, captures live traffic.
    Tshark,
    /// `tcpdump`: reads a capture file with `-r`; without it, captures live traffic.
    Tcpdump,
    /// `docker`, `podman`, `nerdctl`, `docker-compose`: the files of this machine a line hands to the engine
    /// (mount sources, env and compose files, `cp`'s side here).
    Container,
    /// `mediainfo`: prints what media files hold, unless `--LogFile` writes or an input is a URL.
    Mediainfo,
    /// `exiftool`: prints the metadata of files, unless an option or an assignment writes (`-o`, `-TAG=VALUE`)
    /// or runs Perl code (`-if`, `-p`, `-api`, `-config`).
    Exiftool,
}

/// A compressor or archiver: which options (or first operand, for `7z l`) make it only read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Archive {
    /// Options that list or test the archive, or decompress to standard output (`unzip -l`, `xz -t`, `gzip -c`).
    pub(crate) reads: &'static [&'static str],
    /// Sub-commands (the first operand) that only read (`7z l`, `ar t`).
    pub(crate) read_subs: &'static [&'static str],
    /// Options with a value.
    pub(crate) values: &'static [&'static str],
    /// Options whose value can only be attached (`xz --files[=FILE]`).
    pub(crate) optional: &'static [&'static str],
    /// Options with an effect (`zstd --filelist FILE` reads the files FILE lists).
    pub(crate) effects: &'static [(&'static str, Effect)],
    /// Read-only without any option (`zipinfo`, `lsar`).
    pub(crate) bare_reads: bool,
}

/// How the operands of a command are used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operands {
    /// Every operand is a file it reads.
    Files,
    /// Every operand is a file of which it reads only the name and metadata, or a directory of which it reads the
    /// names of the entries (`ls`, `stat`, `du`, `readlink`, `realpath`): never the content.
    Names,
    /// Operands are data, not files (`echo`, `tr`).
    Data,
    /// The first operand is a pattern unless `-e`/`-f` gave one, the rest are files (`grep`, `rg`).
    PatternThenFiles,
    /// The first operand is read, the second is written (`uniq IN OUT`, `xxd IN OUT`).
    InputThenOutput,
    /// Any operand makes it change something (`hostname NAME`).
    NoneWhenReadOnly,
    /// Every operand is written (`rm`, `touch`, `mkdir`, `tee`, `mv`).
    Written,
    /// The last operand is written, the others read (`cp`, `ln`, `install`).
    LastWritten,
}

/// What an option does to a read-only command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// The option's value is a file that is written (`sort -o FILE`).
    WriteValue,
    /// The option's value is a file that is read (`grep -f FILE`).
    ReadValue,
    /// The option gives the pattern or program, so the first operand is a file (`grep -e`).
    PatternGiven,
    /// The option runs code the analysis cannot see (`rg --pre`, `sort --compress-program`): a safety ask.
    HiddenExec(&'static str),
    /// The option makes the command change something (`date -s`): not read-only.
    NotReadOnly(&'static str),
    /// No effect: listed because a longer option with an effect starts with this name, and an exact name wins over
    /// an abbreviation (`git diff --text` is not `--textconv`).
    Distinct,
    /// The option makes the command read every file below a directory operand (`grep -r`), hidden ones included
    /// (`rg --hidden`, or a glob that names them: `rg -g '.env*'`).
    Recursive,
    /// Each one lifts one of ripgrep's filters: `-u` ignore files, `-uu` hidden files too.
    Unrestricted,
    /// The option's value is a file that lists the files to read (`wc --files0-from`, `md5sum -c`): which files
    /// is only known at run time.
    ListedFiles,
    /// The option makes each operand a file that lists files to read (`md5sum -c SUMS`).
    OperandsList,
    /// The option makes a recursive read follow symbolic links (`grep -R`, `rg -L`): it may read anywhere.
    FollowsLinks,
    /// The option makes the command reach the network (`pip --index-url`, `pip list --outdated`).
    Network(&'static str),
    /// The option makes the command run without end (`lsof -r`, `shuf -r`).
    Unbounded(&'static str),
    /// The option's value is a file type whose files alone a recursive search reads (`rg -t rust` reads `*.rs`),
    /// hidden ones included: see `SEARCH_TYPES`.
    OnlyType,
    /// The option's value is a glob whose files alone a recursive search reads (`rg -g '*.rs'`), hidden ones
    /// included; `!GLOB` leaves files out instead.
    OnlyGlob,
    /// The option defines or clears file types (`rg --type-add`), so a type names other files than its usual ones.
    DefinesTypes,
}

/// The options of a command.
#[derive(Debug)]
pub(crate) struct Flags {
    /// Options that take the next word (or the rest of a short cluster, or `=value`) as their value.
    pub(crate) values: &'static [&'static str],
    /// Options whose value can only be attached (`--color[=WHEN]`, `od -w[BYTES]`): the next word is not theirs.
    pub(crate) optional: &'static [&'static str],
    /// Options with an effect; an option listed here that takes a value must also be in `values`.
    pub(crate) effects: &'static [(&'static str, Effect)],
    pub(crate) operands: Operands,
    /// Read-only whatever arguments are added (so `xargs CMD` and words the analysis cannot see are fine).
    pub(crate) any_args: bool,
    /// Reads every file below a directory operand whatever its options (`rg`, `diff DIR DIR`), or below the
    /// working directory without one (`rg PATTERN`).
    pub(crate) recursive: Recursion,
}

/// How a command's words are read as options, for the one option reader (`options.rs`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Syntax {
    /// Options that take a value: the next word, the rest of a short cluster, or `=value` of a long option.
    pub(crate) values: &'static [&'static str],
    /// Options whose value can only be attached (`sed -i[SUFFIX]`, `--in-place[=SUFFIX]`).
    pub(crate) optional: &'static [&'static str],
    /// Options that take the next two words (`jq --arg NAME VALUE`, `find -fprintf FILE FORMAT`).
    pub(crate) pairs: &'static [&'static str],
    /// The other options the command knows (where an unknown option matters, and so that an option written in
    /// full is not read as an abbreviation of a longer one).
    pub(crate) flags: &'static [&'static str],
    /// Options with an effect; an option listed here that takes a value must also be in `values`.
    pub(crate) effects: &'static [(&'static str, Effect)],
    /// Options end at the first operand (POSIX getopt, builtins, wrappers) instead of anywhere before `--`.
    pub(crate) posix: bool,
    /// `+x` is an option too (`set +o`, `declare +i`, `bash +O`).
    pub(crate) plus: bool,
    /// Options are whole words with one dash (`find -name`, `kill -9`): no clusters, no abbreviations.
    pub(crate) single_dash: bool,
    /// `-N` is an option (`nice -5`).
    pub(crate) numeric: bool,
    /// A word that is a negative number is an operand (`seq -5 5`, `seq -1e9 1`), not a cluster of options.
    pub(crate) negative_operands: bool,
}

/// GNU getopt_long: options anywhere before `--`.
pub(crate) const GNU: Syntax = Syntax {
    values: &[],
    optional: &[],
    pairs: &[],
    flags: &[],
    effects: &[],
    posix: false,
    plus: false,
    single_dash: false,
    numeric: false,
    negative_operands: false,
};

/// POSIX getopt: options before the first operand.
pub(crate) const POSIX: Syntax = Syntax { posix: true, ..GNU };

impl Flags {
    /// The syntax of a command read with this table.
    pub(crate) const fn syntax(&self) -> Syntax {
        Syntax {
            values: self.values,
            optional: self.optional,
            effects: self.effects,
            ..GNU
        }
    }
}

impl Wrapper {
    /// The syntax of the wrapper's own options, before the command it runs.
    pub(crate) const fn syntax(&self) -> Syntax {
        Syntax {
            values: self.values,
            optional: self.optional,
            flags: self.flags,
            numeric: self.numeric_flags,
            ..POSIX
        }
    }
}

/// How a command reads below the directories it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Recursion {
    /// It reads what it names.
    No,
    /// Every file below, except hidden ones (`rg` skips names starting with `.` unless told otherwise).
    SkipsHidden,
    /// Every file below, hidden ones included (`grep -r`, `diff`).
    All,
}

/// A language interpreter.
#[derive(Debug)]
pub(crate) struct Interpreter {
    /// Arguments that, alone, only print the version or help, as the program's manual says (`python -V`; not
    /// `ruby -v`, which then runs standard input as code).
    pub(crate) version: &'static [&'static str],
    /// Options whose value is code it runs (`python -c`, `perl -e`), read for the shape of a fork bomb and for
    /// the commands it spells out.
    pub(crate) code: &'static [&'static str],
    /// The language of its code, whose commands and removals written in the open are read
    /// ([`crate::embedded`]).
    pub(crate) language: Option<Language>,
    /// Its options that take a value (the code options among them), so that the code option after one is found
    /// (`python3 -W ignore -c CODE`, `perl -I lib -e CODE`).
    pub(crate) values: &'static [&'static str],
    /// Its options whose value can only be attached (`perl -i[EXT]`).
    pub(crate) optional: &'static [&'static str],
    /// The option that edits its file operands in place (`perl -pi -e CODE FILE`, `ruby -i`).
    pub(crate) in_place: Option<&'static str>,
}

/// A package manager or build tool: what it does in each form.
#[derive(Debug)]
pub(crate) struct Program {
    /// Arguments that, alone, only print its version or help.
    pub(crate) version: &'static [&'static str],
    /// Sub-commands (its first operand) that only read, or reach the network.
    pub(crate) subs: &'static [(&'static str, Sub)],
    /// Its options, before and after the sub-command: which take a value, which write, run code or reach the
    /// network.
    pub(crate) options: Syntax,
    /// Options whose value is the directory it works in (`make -C DIR`, `go -C DIR`).
    pub(crate) directory: &'static [&'static str],
    /// Options whose value is a file in the directory it works in (`cargo --manifest-path DIR/Cargo.toml`).
    pub(crate) manifest: &'static [&'static str],
    /// Files it looks for in the directory it works in and in each directory above it, which make it run code the
    /// project controls even when it only prints (`rust-toolchain.toml` picks the toolchain that runs,
    /// `.yarnrc.yml` can name the JavaScript file that is yarn): its read-only forms are read-only only where
    /// none of them exists, which the caller checks on disk.
    pub(crate) loads: &'static [&'static str],
}

/// What a sub-command of a program does.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Sub {
    /// Only reads or prints, unless one of these options is given (`go env -w` writes).
    Reads { unless: &'static [&'static str] },
    /// Reads, and reaches the network with one of `with` (`pip list --outdated`), or without any of `without`
    /// when that list is not empty (`cargo tree` without `--offline`).
    Online {
        with: &'static [&'static str],
        without: &'static [&'static str],
    },
    /// Reaches the network (`npm view`, `go list`).
    Network,
    /// Only lists when nothing follows it but options (`npm run` prints the scripts; `npm run test` runs one).
    Lists,
    /// Runs, builds, installs or changes something; listed so that `SUB --help` is known to only print its help.
    Runs,
    /// A group of sub-commands of its own, judged with this table on the words after it (`uv pip list`).
    Group(&'static Program),
}

const READS: Sub = Sub::Reads { unless: &[] };

/// A program without a table of its own (a user's `packageManagers` extension): never read-only.
pub(crate) static PROGRAM: Program = Program {
    version: &[],
    subs: &[],
    options: GNU,
    directory: &[],
    manifest: &[],
    loads: &[],
};

/// An interpreter without a table of its own: `--version` and `--help` alone print.
pub(crate) static INTERPRETER: Interpreter = Interpreter {
    version: &["--version", "--help"],
    code: &[],
    language: None,
    values: &[],
    optional: &[],
    in_place: None,
};

/// How a wrapper finds the command it runs.
#[derive(Debug)]
pub(crate) struct Wrapper {
    /// Options that take a value.
    pub(crate) values: &'static [&'static str],
    /// Options whose value can only be attached (`env --block-signal[=SIG]`, `xargs --replace[=R]`).
    pub(crate) optional: &'static [&'static str],
    /// Options without a value. Any other option means the command cannot be found: a safety ask.
    pub(crate) flags: &'static [&'static str],
    /// Options whose value is a file the wrapper writes.
    pub(crate) writes: &'static [&'static str],
    /// Options after which nothing is run (`command -v`, `sudo -l`).
    pub(crate) no_run: &'static [&'static str],
    /// Options whose value is shell code (`flock -c CODE`).
    pub(crate) code: &'static [&'static str],
    /// Options whose value the wrapper splits into words itself, in place of the option (`env -S STRING`): its
    /// own quoting, no shell operators.
    pub(crate) split: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`, `chroot DIR`, `flock FILE`).
    pub(crate) leading: usize,
    /// `NAME=VALUE` words before the command set its environment (`env`).
    pub(crate) assignments: bool,
    /// Options of the form `-N` (`nice -5`).
    pub(crate) numeric_flags: bool,
    /// The command words are joined and run by `sh -c` (`watch`), unless one of `exec_flags` is given.
    pub(crate) joins: bool,
    pub(crate) exec_flags: &'static [&'static str],
    /// Runs the command as another user or under another root: why, for a deny.
    pub(crate) privileged: Option<&'static str>,
    /// Options whose value is the directory the command runs in (`env -C DIR`, `sudo -D DIR`).
    pub(crate) chdir: &'static [&'static str],
    /// The command keeps running after the line ends (`nohup`, `setsid`).
    pub(crate) detaches: bool,
    /// Words read from standard input are appended to the command (`xargs`); `-a FILE` reads them from a file.
    pub(crate) appends_input: bool,
    /// It runs the command again and again, without end (`watch`).
    pub(crate) repeats: bool,
    /// Runs its command through a shell once for each argument of its input sources (`:::`, `::::`, `-a`,
    /// standard input), and without a command runs the arguments as commands (GNU `parallel`).
    pub(crate) input_sources: bool,
    /// Without a command it does nothing harmful (`env` prints, `nice` prints).
    pub(crate) bare_is_read_only: bool,
    /// Without a command it prints the environment (`env`), which may hold credentials.
    pub(crate) bare_prints_environment: bool,
}

const fn flags(
    values: &'static [&'static str],
    effects: &'static [(&'static str, Effect)],
    operands: Operands,
) -> Flags {
    Flags {
        values,
        optional: &[],
        effects,
        operands,
        any_args: false,
        recursive: Recursion::No,
    }
}

const fn open(values: &'static [&'static str], operands: Operands) -> Flags {
    Flags {
        values,
        optional: &[],
        effects: &[],
        operands,
        any_args: true,
        recursive: Recursion::No,
    }
}

pub(crate) const WRAPPER: Wrapper = Wrapper {
    values: &[],
    optional: &[],
    flags: &[],
    writes: &[],
    no_run: &[],
    code: &[],
    split: &[],
    leading: 0,
    assignments: false,
    numeric_flags: false,
    joins: false,
    exec_flags: &[],
    privileged: None,
    chdir: &[],
    detaches: false,
    appends_input: false,
    input_sources: false,
    repeats: false,
    bare_is_read_only: false,
    bare_prints_environment: false,
};

use Effect::{
    DefinesTypes, Distinct, FollowsLinks, HiddenExec, ListedFiles, Network, NotReadOnly, OnlyGlob, OnlyType,
    OperandsList, PatternGiven, ReadValue, Recursive, Unbounded, Unrestricted, WriteValue,
};

#[rustfmt::skip]
static FILES: Flags = open(&[], Operands::Files);
/// `readlink` and `realpath`: a link's target and a path's resolution are metadata.
#[rustfmt::skip]
static NAMES: Flags = open(&[], Operands::Names);
/// Checksum tools: `-c FILE` reads FILE and then every file it lists.
#[rustfmt::skip]
static SUMS: Flags = Flags {
    effects: &[("-c", OperandsList), ("--check", OperandsList)],
    ..open(&[], Operands::Files)
};
/// `free`: `-s N` repeats the report every N seconds, without end unless `-c` counts.
#[rustfmt::skip]
static FREE: Flags = Flags {
    effects: &[
        ("-s", Unbounded("`free -s` repeats its report without end")),
        ("--seconds", Unbounded("`free --seconds` repeats its report without end")),
    ],
    ..open(&["-s", "-c", "--seconds", "--count"], Operands::Data)
};
/// `look STRING [FILE]`: the first operand is the prefix looked for.
#[rustfmt::skip]
static LOOK: Flags = open(&["-t"], Operands::PatternThenFiles);
/// `hexdump -f FORMAT_FILE`: the format file is read.
#[rustfmt::skip]
static HEXDUMP: Flags = Flags {
    effects: &[("-f", ReadValue), ("--format-file", ReadValue)],
    optional: &["-L", "--color"],
    ..open(&["-e", "-f", "-n", "-s", "--format", "--format-file", "--length", "--skip"], Operands::Files)
};
/// `od`: `-s` is a format letter and `-w[BYTES]`, `--strings[=BYTES]` take an attached value only.
#[rustfmt::skip]
static OD: Flags = Flags {
    optional: &["-w", "--width", "--strings"],
    ..open(&["-A", "-j", "-N", "-S", "-t", "--address-radix", "--skip-bytes", "--read-bytes", "--format",
        "--endian"], Operands::Files)
};
#[rustfmt::skip]
static DATA: Flags = open(&[], Operands::Data);
// The BSD and macOS `base64` write their output to the file given with `-o` and read the one given with `-i`.
#[rustfmt::skip]
static BASE64: Flags = flags(
    &["-w", "-b", "-o", "-i", "--wrap", "--break", "--output", "--input"],
    &[("-o", WriteValue), ("--output", WriteValue), ("-i", ReadValue), ("--input", ReadValue)],
    Operands::Files,
);
#[rustfmt::skip]
static HEAD: Flags = open(&["-n", "-c", "--lines", "--bytes"], Operands::Files);
#[rustfmt::skip]
static TAIL: Flags = Flags {
    effects: &[
        ("-f", Unbounded("`tail -f` follows the file without end")),
        ("-F", Unbounded("`tail -F` follows the file without end")),
        ("--follow", Unbounded("`tail --follow` follows the file without end")),
    ],
    ..open(&["-n", "-c", "--lines", "--bytes", "-s", "--sleep-interval", "--pid"], Operands::Files)
};
#[rustfmt::skip]
static GREP: Flags = Flags {
    values: &[
        "-e", "-f", "-m", "-A", "-B", "-C", "-d", "-D", "--regexp", "--file", "--max-count", "--context",
        "--after-context", "--before-context", "--label", "--include", "--exclude", "--exclude-from",
        "--exclude-dir", "--devices", "--directories", "--binary-files", "--group-separator"
    ],
    effects: &[
        ("-e", PatternGiven),
        ("--regexp", PatternGiven),
        ("-f", ReadValue),
        ("--file", ReadValue),
        ("--exclude-from", ReadValue),
        ("-r", Recursive),
        ("-R", Recursive),
        ("--recursive", Recursive),
        ("--dereference-recursive", Recursive),
        // `-R` follows every symbolic link it meets below the directory, wherever it points.
        ("-R", FollowsLinks),
        ("--dereference-recursive", FollowsLinks),
        // `-d recurse`; other actions only make the match larger.
        ("-d", Recursive),
        ("--directories", Recursive),
    ],
    optional: &[],
    operands: Operands::PatternThenFiles,
    any_args: true,
    recursive: Recursion::No,
};
#[rustfmt::skip]
static RG: Flags = Flags { recursive: Recursion::SkipsHidden, ..flags(
    &[
        "-e", "-f", "-g", "-t", "-T", "-m", "-A", "-B", "-C", "-M", "-j", "-E", "-r", "--regexp", "--file",
        "--glob", "--iglob", "--type", "--type-not", "--type-add", "--type-clear", "--max-count", "--context",
        "--after-context", "--before-context", "--max-columns", "--threads", "--encoding", "--replace",
        "--sort", "--sortr", "--colors", "--color", "--engine", "--max-depth", "--maxdepth", "--ignore-file",
        "--max-filesize", "--path-separator", "--context-separator", "--field-match-separator",
        "--field-context-separator", "--dfa-size-limit", "--regex-size-limit", "--pre", "--pre-glob",
        "--hostname-bin", "--hyperlink-format"
    ],
    &[
        ("-e", PatternGiven),
        ("--regexp", PatternGiven),
        ("-f", ReadValue),
        ("--file", ReadValue),
        ("--ignore-file", ReadValue),
        // Hidden files are searched with `--hidden`, and a glob or file type that names one whitelists it
        // (`rg -g '.env*'`, `rg -t sh` takes `.bashrc`); a type or a glob also leaves out every file it does not
        // name (`rg -t rust` reads only `*.rs`).
        ("--hidden", Recursive),
        ("-.", Recursive),
        ("-g", OnlyGlob),
        ("--glob", OnlyGlob),
        ("--iglob", OnlyGlob),
        ("-t", OnlyType),
        ("--type", OnlyType),
        ("--type-add", DefinesTypes),
        ("--type-clear", DefinesTypes),
        ("-u", Unrestricted),
        ("--unrestricted", Unrestricted),
        ("-L", FollowsLinks),
        ("--follow", FollowsLinks),
        ("--no-hidden", Distinct),
        (
            "--pre",
            HiddenExec("`rg --pre` runs a preprocessor program on every file"),
        ),
        (
            "--pre-glob",
            HiddenExec("`rg --pre-glob` runs a preprocessor program"),
        ),
        ("--hostname-bin", HiddenExec("`rg --hostname-bin` runs a program")),
        ("-z", HiddenExec("`rg -z` runs decompression programs found on the PATH")),
        (
            "--search-zip",
            HiddenExec("`rg --search-zip` runs decompression programs found on the PATH"),
        ),
    ],
    Operands::PatternThenFiles,
) };
#[rustfmt::skip]
static SORT: Flags = flags(
    &[
        "-k", "-t", "-S", "-T", "-o", "--key", "--field-separator", "--buffer-size", "--temporary-directory",
        "--output", "--parallel", "--batch-size", "--files0-from", "--compress-program", "--random-source",
        "--sort"
    ],
    &[
        ("-o", WriteValue),
        ("--output", WriteValue),
        ("--files0-from", ListedFiles),
        ("--random-source", ReadValue),
        (
            "--compress-program",
            HiddenExec("`sort --compress-program` runs a program"),
        ),
    ],
    Operands::Files,
);
#[rustfmt::skip]
static UNIQ: Flags = Flags {
    optional: &["--group", "--all-repeated"],
    ..flags(&["-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"], &[], Operands::InputThenOutput)
};
#[rustfmt::skip]
static XXD: Flags = flags(
    &["-c", "-g", "-l", "-o", "-s", "-n", "--cols", "--groupsize", "--len", "--seek", "--name"],
    &[],
    Operands::InputThenOutput,
);
#[rustfmt::skip]
static CUT: Flags = open(
    &[
        "-b", "-c", "-d", "-f", "--bytes", "--characters", "--delimiter", "--fields", "--output-delimiter"
    ],
    Operands::Files,
);
#[rustfmt::skip]
static TR: Flags = open(&[], Operands::Data);
#[rustfmt::skip]
static DIFF: Flags = Flags { recursive: Recursion::All, any_args: true, optional: &["--unified", "--context", "--color"], ..flags(
    &[
        "-C", "-U", "-I", "-x", "-X", "-F", "-W", "-L", "--label", "--exclude", "--exclude-from",
        "--ignore-matching-lines", "--width", "--tabsize", "--from-file", "--to-file", "--show-function-line",
        "--line-format", "--palette", "-o", "--output"
    ],
    &[
        ("-X", ReadValue),
        ("--exclude-from", ReadValue),
        ("--from-file", ReadValue),
        ("--to-file", ReadValue),
        // `sdiff -o FILE` writes the merged result.
        ("-o", WriteValue),
        ("--output", WriteValue),
    ],
    Operands::Files,
) };
#[rustfmt::skip]
static FILE: Flags = flags(
    &[
        "-m", "-f", "-F", "-e", "-P", "--magic-file", "--files-from", "--separator", "--exclude",
        "--parameter"
    ],
    &[
        ("-C", NotReadOnly("`file -C` writes a compiled magic file")),
        (
            "--compile",
            NotReadOnly("`file --compile` writes a compiled magic file"),
        ),
        ("-f", ListedFiles),
        ("--files-from", ListedFiles),
        ("-m", ReadValue),
        ("--magic-file", ReadValue),
    ],
    Operands::Files,
);
#[rustfmt::skip]
/// `tree`: `--gitfile`, `--infofile`, `--hintro` and `--houtro` read a file (the last two print it); `-R` runs tree
/// again in each directory at the depth limit, writing `00Tree.html` there.
static TREE: Flags = flags(
    &[
        "-L", "-P", "-I", "-o", "--output", "--filelimit", "--timefmt", "--charset", "--sort", "--fromfile",
        "-H", "-T", "--gitfile", "--infofile", "--hintro", "--houtro"
    ],
    &[
        ("-o", WriteValue), ("--output", WriteValue), ("--fromfile", ReadValue), ("--gitfile", ReadValue),
        ("--infofile", ReadValue), ("--hintro", ReadValue), ("--houtro", ReadValue), ("-l", FollowsLinks),
        ("-R", NotReadOnly("`tree -R` writes 00Tree.html in the directories at its depth limit")),
    ],
    Operands::Files,
);
#[rustfmt::skip]
static DATE: Flags = Flags { optional: &["-I", "--iso-8601"], ..flags(
    &[
        "-d", "-f", "-r", "-s", "--date", "--file", "--reference", "--set", "--rfc-3339"
    ],
    &[
        ("-s", NotReadOnly("`date -s` sets the system clock")),
        ("--set", NotReadOnly("`date --set` sets the system clock")),
        ("-f", ReadValue),
        ("--file", ReadValue),
        ("-r", ReadValue),
        ("--reference", ReadValue),
    ],
    Operands::Data,
) };
#[rustfmt::skip]
static HOSTNAME: Flags = flags(
    &["-F", "--file"],
    &[
        ("-F", NotReadOnly("`hostname -F` sets the host name")),
        ("--file", NotReadOnly("`hostname --file` sets the host name")),
    ],
    Operands::NoneWhenReadOnly,
);
#[rustfmt::skip]
static SHUF: Flags = flags(
    &["-n", "-o", "-i", "--head-count", "--output", "--input-range", "--random-source"],
    &[
        ("-o", WriteValue),
        ("--output", WriteValue),
        ("--random-source", ReadValue),
        ("-r", Unbounded("`shuf -r` prints without end")),
        ("--repeat", Unbounded("`shuf --repeat` prints without end")),
    ],
    Operands::Files,
);
#[rustfmt::skip]
static HASH: Flags = flags(
    &["-p", "-d"],
    &[("-p", NotReadOnly("`hash -p` changes which program a name runs"))],
    Operands::Data,
);
#[rustfmt::skip]
static PRINTF: Flags = open(&["-v"], Operands::Data);
#[rustfmt::skip]
static READ: Flags = open(READ_VALUES, Operands::Data);
/// `read`'s options with a value.
#[rustfmt::skip]
static READ_VALUES: &[&str] = &["-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"];
/// `mapfile`'s (and `readarray`'s) options with a value; `-C` is code it evaluates.
#[rustfmt::skip]
static MAPFILE_VALUES: &[&str] = &["-d", "-n", "-O", "-s", "-u", "-C", "-c"];
#[rustfmt::skip]
static MAPFILE: Flags = open(MAPFILE_VALUES, Operands::Data);
#[rustfmt::skip]
static LS: Flags = Flags { optional: &["--color", "--classify", "--hyperlink"], ..open(
    &[
        "-I", "-w", "-T", "--ignore", "--hide", "--width", "--tabsize", "--format", "--sort", "--time",
        "--time-style", "--block-size", "--quoting-style", "--indicator-style"
    ],
    Operands::Names,
) };
#[rustfmt::skip]
static DU: Flags = Flags {
    effects: &[
        ("-X", ReadValue),
        ("--exclude-from", ReadValue),
        ("--files0-from", ListedFiles),
    ],
    ..open(
        &[
            "-d", "-B", "-t", "-X", "--max-depth", "--block-size", "--threshold", "--exclude", "--exclude-from",
            "--time-style", "--files0-from"
        ],
        Operands::Names,
    )
};
#[rustfmt::skip]
static WC: Flags = Flags {
    effects: &[("--files0-from", ListedFiles)],
    ..open(&["--files0-from"], Operands::Files)
};
#[rustfmt::skip]
static STAT: Flags = open(&["-c", "--format", "--printf"], Operands::Names);
/// `lsof`: lists open files; `-r`/`+r` repeat the listing without end.
#[rustfmt::skip]
static LSOF: Flags = Flags {
    effects: &[
        ("-r", Unbounded("`lsof -r` repeats the listing without end")),
        ("+r", Unbounded("`lsof +r` repeats the listing until nothing is open")),
    ],
    ..open(&["-p", "-u", "-g", "-c", "-d", "-a", "-s", "-i", "-k", "-o", "-T", "-F", "-D", "-E", "-e", "-S"], Operands::Files)
};
/// `seq [FIRST [INCREMENT]] LAST`.
#[rustfmt::skip]
pub(crate) static SEQ: Syntax = Syntax {
    values: &["-f", "-s", "--format", "--separator"],
    flags: &["-w", "--equal-width"],
    negative_operands: true,
    ..GNU
};
// `stty` prints the settings (`-a`, `-g`); any setting given as an operand changes the terminal or the device.
#[rustfmt::skip]
static STTY: Flags = flags(&["-F", "--file", "-f"], &[], Operands::NoneWhenReadOnly);

#[rustfmt::skip]
static TOUCH: Flags = flags(
    &["-d", "-r", "-t", "--date", "--reference"],
    &[],
    Operands::Written,
);
#[rustfmt::skip]
static MKDIR: Flags = Flags { optional: &["--context"], ..flags(&["-m", "--mode"], &[], Operands::Written) };
#[rustfmt::skip]
static WRITTEN: Flags = flags(&[], &[], Operands::Written);
#[rustfmt::skip]
static TEE: Flags = Flags { optional: &["--output-error"], ..flags(&[], &[], Operands::Written) };
#[rustfmt::skip]
static TRUNCATE: Flags = flags(&["-s", "-r", "--size", "--reference"], &[], Operands::Written);
#[rustfmt::skip]
static CP: Flags = Flags { optional: &["--backup", "--reflink", "--preserve", "--context"], ..flags(
    &[
        "-t", "-S", "--target-directory", "--suffix", "--sparse", "--no-preserve", "-m", "--mode", "-o",
        "--owner", "-g", "--group"
    ],
    &[("-t", WriteValue), ("--target-directory", WriteValue)],
    Operands::LastWritten,
) };
#[rustfmt::skip]
static MV: Flags = Flags { optional: &["--backup"], ..flags(
    &["-t", "-S", "--target-directory", "--suffix"],
    &[("-t", WriteValue), ("--target-directory", WriteValue)],
    Operands::Written,
) };
#[rustfmt::skip]
static SHRED: Flags = Flags { optional: &["--remove"], ..flags(
    &["-n", "-s", "--iterations", "--size", "--random-source"],
    &[],
    Operands::Written,
) };

#[rustfmt::skip]
static ENV: Wrapper = Wrapper {
    values: &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
    optional: &["--block-signal", "--default-signal", "--ignore-signal"],
    flags: &["-i", "-", "--ignore-environment", "-0", "--null", "-v", "--debug", "--list-signal-handling"],
    split: &["-S", "--split-string"],
    chdir: &["-C", "--chdir"],
    assignments: true,
    bare_is_read_only: true,
    bare_prints_environment: true,
    ..WRAPPER
};
#[rustfmt::skip]
static XARGS: Wrapper = Wrapper {
    values: &[
        "-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args", "--max-procs",
        "--max-chars", "--process-slot-var"
    ],
    optional: &["--eof", "--replace", "--max-lines"],
    flags: &[
        "-0", "-r", "-t", "-p", "-x", "-o", "-e", "-i", "-l", "--null", "--no-run-if-empty", "--verbose",
        "--interactive", "--exit", "--open-tty", "--show-limits"
    ],
    appends_input: true,
    bare_is_read_only: true,
    ..WRAPPER
};
/// GNU `parallel`: the options it is known by; any other asks. `-S` and the like run the commands on other hosts.
#[rustfmt::skip]
static PARALLEL: Wrapper = Wrapper {
    values: &[
        "-j", "--jobs", "-P", "--max-procs", "-n", "--max-args", "-N", "-L", "--max-lines", "-d", "--delimiter",
        "-a", "--arg-file", "-I", "-C", "--colsep", "--halt", "--halt-on-error", "--joblog", "--results", "--res",
        "--timeout", "--retries", "--delay", "--nice", "--block", "--block-size", "--load", "--memfree",
        "--tagstring", "--header", "-E", "--eof", "-s", "--max-chars", "-S", "--sshlogin", "--slf",
        "--sshloginfile", "--sshdelay", "--tmpdir", "--tempdir", "--workdir", "--wd", "--rpl", "--env", "--trim"
    ],
    flags: &[
        "-k", "--keep-order", "-q", "--quote", "-X", "--xargs", "-m", "-u", "--ungroup", "--group",
        "--line-buffer", "--lb", "--tag", "-v", "--verbose", "-t", "--eta", "--bar", "--progress", "--dry-run",
        "--dryrun", "-0", "--null", "--no-notice", "--will-cite", "--shuf", "--xapply", "--link", "--plus",
        "-r", "--no-run-if-empty", "--pipe", "--spreadstdin", "--pipe-part", "--files", "--onall", "--nonall",
        "--silent", "--quiet"
    ],
    writes: &["--joblog", "--results", "--res"],
    no_run: &["--version", "--help", "--number-of-cpus", "--number-of-cores"],
    input_sources: true,
    ..WRAPPER
};
#[rustfmt::skip]
static TIMEOUT: Wrapper = Wrapper {
    values: &["-s", "-k", "--signal", "--kill-after"],
    flags: &["--preserve-status", "--foreground", "-v", "--verbose", "-f", "-p"],
    leading: 1,
    ..WRAPPER
};
#[rustfmt::skip]
static NICE: Wrapper = Wrapper {
    values: &["-n", "--adjustment"],
    numeric_flags: true,
    bare_is_read_only: true,
    ..WRAPPER
};
#[rustfmt::skip]
static NOHUP: Wrapper = Wrapper {
    detaches: true,
    ..WRAPPER
};
#[rustfmt::skip]
static TIME: Wrapper = Wrapper {
    values: &["-f", "--format", "-o", "--output"],
    flags: &["-p", "-v", "-a", "-q", "--append", "--portability", "--verbose", "--quiet"],
    writes: &["-o", "--output"],
    bare_is_read_only: true,
    ..WRAPPER
};
#[rustfmt::skip]
static STDBUF: Wrapper = Wrapper {
    values: &["-i", "-o", "-e", "--input", "--output", "--error"],
    ..WRAPPER
};
#[rustfmt::skip]
static COMMAND: Wrapper = Wrapper {
    flags: &["-p"],
    no_run: &["-v", "-V"],
    bare_is_read_only: true,
    ..WRAPPER
};
#[rustfmt::skip]
static BUILTIN: Wrapper = Wrapper {
    bare_is_read_only: true,
    ..WRAPPER
};
#[rustfmt::skip]
static EXEC: Wrapper = Wrapper {
    values: &["-a"],
    flags: &["-c", "-l"],
    bare_is_read_only: true,
    ..WRAPPER
};
#[rustfmt::skip]
static WATCH: Wrapper = Wrapper {
    values: &["-n", "--interval", "-q", "--equexit"],
    optional: &["-d", "--differences"],
    flags: &[
        "-b", "-e", "-g", "-t", "-x", "-c", "-p", "-w", "-r", "-C", "--beep", "--errexit", "--chgexit",
        "--no-title", "--exec", "--color", "--no-color", "--precise", "--no-wrap", "--no-rerun"
    ],
    joins: true,
    exec_flags: &["-x", "--exec"],
    repeats: true,
    ..WRAPPER
};
#[rustfmt::skip]
static SETSID: Wrapper = Wrapper {
    flags: &["-c", "-f", "-w", "--ctty", "--fork", "--wait"],
    detaches: true,
    ..WRAPPER
};
#[rustfmt::skip]
static IONICE: Wrapper = Wrapper {
    values: &["-c", "-n", "--class", "--classdata"],
    flags: &["-t", "--ignore"],
    no_run: &["-p", "-P", "-u", "--pid", "--pgid", "--uid"],
    bare_is_read_only: true,
    ..WRAPPER
};
#[rustfmt::skip]
static CHROOT: Wrapper = Wrapper {
    values: &["--userspec", "--groups"],
    flags: &["--skip-chdir"],
    leading: 1,
    privileged: Some("runs a command under another root directory, which takes root's privileges"),
    ..WRAPPER
};
#[rustfmt::skip]
static FLOCK: Wrapper = Wrapper {
    values: &["-w", "--timeout", "-E", "--conflict-exit-code", "-c", "--command"],
    flags: &[
        "-s", "-x", "-e", "-n", "-u", "-o", "-F", "--shared", "--exclusive", "--nonblock", "--nb", "--unlock",
        "--close", "--no-fork", "--verbose"
    ],
    code: &["-c", "--command"],
    leading: 1,
    ..WRAPPER
};
#[rustfmt::skip]
static UNBUFFER: Wrapper = Wrapper {
    flags: &["-p"],
    ..WRAPPER
};
#[rustfmt::skip]
static BUSYBOX: Wrapper = WRAPPER;
#[rustfmt::skip]
static SUDO: Wrapper = Wrapper {
    values: &[
        "-u", "-g", "-C", "-D", "-p", "-r", "-t", "-U", "-T", "-R", "--user", "--group", "--chdir", "--prompt",
        "--role", "--type", "--host", "--close-from", "--other-user", "--command-timeout", "--chroot"
    ],
    flags: &[
        "-A", "-b", "-E", "-H", "-k", "-n", "-P", "-S", "-B", "--askpass", "--background", "--preserve-env",
        "--set-home", "--non-interactive", "--stdin", "--bell", "-i", "-s", "--login", "--shell"
    ],
    no_run: &[
        "-l", "-v", "-V", "-K", "-e", "--list", "--validate", "--version", "--remove-timestamp", "--edit",
        "--help", "-h"
    ],
    chdir: &["-D", "--chdir"],
    privileged: Some("runs a command as another user"),
    ..WRAPPER
};
#[rustfmt::skip]
static TASKSET: Wrapper = Wrapper { flags: &["-a", "--all-tasks", "-c", "--cpu-list"], no_run: &["-p", "--pid"], leading: 1, ..WRAPPER };
#[rustfmt::skip]
static CHRT: Wrapper = Wrapper { flags: &["-b", "-d", "-e", "-f", "-i", "-o", "-r", "-R", "-a", "-v", "--batch", "--deadline", "--fifo", "--idle", "--other", "--rr", "--reset-on-fork", "--all-tasks", "--verbose"], values: &["-T", "-P", "-D", "--sched-runtime", "--sched-period", "--sched-deadline"], no_run: &["-p", "--pid", "-m", "--max"], leading: 1, ..WRAPPER };
#[rustfmt::skip]
static FD: Flags = flags(
    &["-e", "-E", "-t", "-d", "-j", "-S", "-o", "--extension", "--exclude", "--type", "--max-depth", "--min-depth", "--exact-depth", "--threads", "--size", "--owner", "--changed-within", "--changed-before", "--max-results", "--base-directory", "--path-separator", "--search-path", "--ignore-file", "--color"],
    &[
        ("--base-directory", ReadValue),
        ("--search-path", ReadValue),
        ("--ignore-file", ReadValue),
        ("-x", HiddenExec("`fd -x` runs a command for each result")),
        ("-X", HiddenExec("`fd -X` runs a command with the results")),
        ("--exec", HiddenExec("`fd --exec` runs a command for each result")),
        ("--exec-batch", HiddenExec("`fd --exec-batch` runs a command with the results")),
    ],
    Operands::PatternThenFiles,
);
#[rustfmt::skip]
static AG: Flags = Flags { recursive: Recursion::SkipsHidden, ..flags(
    &[
        "-A", "-B", "-C", "-G", "-g", "-m", "-p", "-W", "--after", "--before", "--context", "--file-search-regex",
        "--max-count", "--path-to-ignore", "--ignore", "--ignore-dir", "--depth", "--width", "--pager",
        "--workers", "--color-line-number", "--color-match", "--color-path"
    ],
    &[
        ("--pager", HiddenExec("`ag --pager` runs a pager program")),
        ("-p", ReadValue),
        ("--path-to-ignore", ReadValue),
        // `-g PATTERN` lists the files whose names match: the operands are directories.
        ("-g", PatternGiven),
        ("-f", FollowsLinks),
        ("--follow", FollowsLinks),
        ("--hidden", Recursive),
        ("-u", Recursive),
        ("--unrestricted", Recursive),
    ],
    Operands::PatternThenFiles,
)};
/// `ack` searches every file below (hidden ones too); a project's `.ackrc` may not set the options that run
/// programs (`--pager`, `--output`), which ack refuses there.
#[rustfmt::skip]
static ACK: Flags = Flags { recursive: Recursion::All, ..flags(
    &[
        "-A", "-B", "-C", "-m", "-t", "--after-context", "--before-context", "--context", "--max-count", "--type",
        "--ignore-dir", "--noignore-dir", "--ignore-file", "--type-set", "--type-add", "--type-del", "--files-from",
        "--match", "--output", "--pager", "--ackrc", "--color-filename", "--color-match", "--color-lineno",
        "--color-colno", "--range-start", "--range-end"
    ],
    &[
        ("--pager", HiddenExec("`ack --pager` runs a pager program")),
        ("--output", HiddenExec("`ack --output` formats each match with an expression ack evaluates")),
        ("--ackrc", ReadValue),
        ("--files-from", ListedFiles),
        ("-x", ListedFiles),
        ("--match", PatternGiven),
        // `-f` lists the files it would search: no pattern, every operand a directory.
        ("-f", PatternGiven),
        ("--follow", FollowsLinks),
    ],
    Operands::PatternThenFiles,
)};
/// `sqlite3`'s options (with one dash or two): any other option is not known to only read.
#[rustfmt::skip]
pub(crate) static SQLITE3: Syntax = Syntax {
    values: &["-cmd", "-init", "-separator", "-newline", "-nullvalue", "-mmap", "-maxsize", "-vfs", "-escape"],
    flags: &[
        "-readonly", "-version", "-help", "-bail", "-batch", "-echo", "-header", "-noheader", "-stats", "-nofollow",
        "-safe", "-column", "-csv", "-html", "-json", "-line", "-list", "-markdown", "-table", "-box", "-quote",
        "-tabs", "-ascii", "-interactive"
    ],
    single_dash: true,
    ..GNU
};
/// `ffprobe`'s options (with one dash or two): any other option (a demuxer's or protocol's own) is not known to
/// only read.
#[rustfmt::skip]
pub(crate) static FFPROBE: Syntax = Syntax {
    values: &[
        "-v", "-loglevel", "-of", "-print_format", "-output_format", "-select_streams", "-show_entries",
        "-read_intervals", "-show_data_hash", "-i", "-o", "-threads", "-analyzeduration", "-probesize"
    ],
    flags: &[
        "-hide_banner", "-show_format", "-show_streams", "-show_packets", "-show_frames", "-show_programs",
        "-show_stream_groups", "-show_chapters", "-show_error", "-show_data", "-show_private_data",
        "-show_program_version", "-show_library_versions", "-show_versions", "-show_pixel_formats", "-show_log",
        "-count_frames", "-count_packets", "-pretty", "-sexagesimal", "-unit", "-prefix", "-byte_binary_prefix",
        "-bitexact", "-version", "-h", "-help", "-formats", "-muxers", "-demuxers", "-devices", "-codecs",
        "-decoders", "-encoders", "-bsfs", "-protocols", "-filters", "-pix_fmts", "-layouts", "-sample_fmts",
        "-buildconf", "-L", "-nostdin", "-report"
    ],
    single_dash: true,
    ..GNU
};
/// `tcpdump`'s options: any other option is not known to only read.
#[rustfmt::skip]
pub(crate) static TCPDUMP: Syntax = Syntax {
    values: &[
        "-B", "-c", "-C", "-E", "-F", "-G", "-i", "-j", "-m", "-M", "-r", "-s", "-T", "-V", "-w", "-W", "-y", "-z",
        "-Z", "--buffer-size", "--interface", "--snapshot-length", "--time-stamp-type", "--time-stamp-precision",
        "--relinquish-privileges", "--count", "--print-sampling", "--micro", "--nano"
    ],
    flags: &[
        "-A", "-b", "-d", "-dd", "-ddd", "-D", "-e", "-f", "-h", "-H", "-I", "-J", "-K", "-l", "-L", "-n", "-N",
        "-#", "-O", "-p", "-q", "-Q", "-S", "-t", "-tt", "-ttt", "-tttt", "-ttttt", "-u", "-U", "-v", "-vv",
        "-vvv", "-x", "-xx", "-X", "-XX", "--help", "--version", "--list-interfaces", "--number", "--print",
        "--monitor-mode", "--no-optimize", "--no-promiscuous-mode", "--immediate-mode",
        "--list-time-stamp-types", "--packet-buffered"
    ],
    effects: &[
        ("-r", ReadValue),
        ("-F", ReadValue),
        ("-V", ReadValue),
        ("-m", ReadValue),
        ("-w", WriteValue),
        ("-i", NotReadOnly("`tcpdump -i` captures live traffic")),
        ("--interface", NotReadOnly("`tcpdump -i` captures live traffic")),
        ("-E", NotReadOnly("`tcpdump -E` takes ESP secrets, or a file of them")),
        ("-z", HiddenExec("`tcpdump -z` runs a command on every capture file it rotates")),
        ("-Z", NotReadOnly("`tcpdump -Z` changes the user it runs as")),
    ],
    ..GNU
};
/// `tshark`'s options: any other option is not known to only read.
#[rustfmt::skip]
pub(crate) static TSHARK: Syntax = Syntax {
    values: &[
        "-a", "-b", "-B", "-c", "-C", "-d", "-e", "-E", "-f", "-F", "-H", "-i", "-j", "-J", "-K", "-N", "-o", "-O",
        "-r", "-R", "-s", "-t", "-T", "-u", "-U", "-w", "-W", "-X", "-Y", "-y", "-z", "-M", "--read-file",
        "--display-filter", "--read-filter", "--interface", "--autostop", "--ring-buffer", "--snapshot-length",
        "--export-objects", "--export-tls-session-keys", "--log-file", "--temp-dir", "--capture-comment",
        "--elastic-mapping-filter", "--enable-protocol", "--disable-protocol", "--enable-heuristic",
        "--disable-heuristic", "--log-level", "--log-domains", "--log-fatal", "--compress", "--hexdump"
    ],
    flags: &[
        "-2", "-D", "-G", "-h", "-I", "-l", "-L", "-n", "-p", "-P", "-q", "-Q", "-S", "-v", "-V", "-x", "-g",
        "--version", "--help", "--list-interfaces", "--color", "--no-duplicate-keys", "--print"
    ],
    effects: &[
        ("-r", ReadValue),
        ("--read-file", ReadValue),
        ("-K", ReadValue),
        ("-H", ReadValue),
        ("-w", WriteValue),
        ("--export-tls-session-keys", WriteValue),
        ("--log-file", WriteValue),
        ("-b", NotReadOnly("`tshark -b` writes a ring buffer of capture files")),
        ("--ring-buffer", NotReadOnly("`tshark -b` writes a ring buffer of capture files")),
        ("-i", NotReadOnly("`tshark -i` captures live traffic")),
        ("--interface", NotReadOnly("`tshark -i` captures live traffic")),
        ("-U", NotReadOnly("`tshark -U` exports PDUs into a capture file")),
        ("--export-objects", NotReadOnly("`tshark --export-objects` writes the objects it finds into a directory")),
        ("--temp-dir", NotReadOnly("`tshark --temp-dir` writes temporary files into a directory")),
        ("-o", NotReadOnly("`tshark -o` sets preferences, some of which name files it reads or writes")),
        ("-C", NotReadOnly("`tshark -C` loads a configuration profile, whose preferences may name files")),
        ("-X", HiddenExec("`tshark -X` loads extensions such as Lua scripts: code the analysis cannot see")),
    ],
    ..GNU
};
#[rustfmt::skip]
static BAT: Flags = flags(
    &["-l", "-H", "-r", "-m", "--language", "--highlight-line", "--line-range", "--map-syntax", "--theme", "--style", "--tabs", "--wrap", "--terminal-width", "--color", "--italic-text", "--decorations", "--paging", "--file-name", "--diff-context", "--pager"],
    &[("--pager", HiddenExec("`bat --pager` runs a pager program"))],
    Operands::Files,
);
/// `capinfos`: prints facts about capture files; none of its options writes.
static CAPINFOS: Flags = flags(&[], &[], Operands::Files);
#[rustfmt::skip]
static DOAS: Wrapper = Wrapper {
    values: &["-u", "-C"],
    flags: &["-n", "-s"],
    no_run: &["-L"],
    privileged: Some("runs a command as another user"),
    ..WRAPPER
};

static PYTHON: Interpreter = Interpreter {
    version: &["--version", "-V", "-VV", "--help", "-h", "-?"],
    code: &["-c"],
    language: Some(Language::Python),
    values: &["-c", "-W", "-X", "-m", "--check-hash-based-pycs"],
    optional: &[],
    in_place: None,
};
static NODE: Interpreter = Interpreter {
    version: &["--version", "-v", "--help", "-h"],
    code: &["-e", "--eval", "-p", "--print"],
    language: Some(Language::JavaScript),
    values: &[
        "-e",
        "--eval",
        "-p",
        "--print",
        "-r",
        "--require",
        "--import",
        "--loader",
        "--experimental-loader",
        "-C",
        "--conditions",
        "--input-type",
        "--env-file",
        "--title",
    ],
    optional: &[],
    in_place: None,
};
static PERL: Interpreter = Interpreter {
    version: &["--version", "-v", "-V", "--help", "-h"],
    code: &["-e", "-E"],
    language: Some(Language::Perl),
    values: &["-e", "-E", "-I", "-M", "-m", "-F"],
    optional: &["-i", "-x", "-0", "-C", "-d", "-D"],
    in_place: Some("-i"),
};
// `ruby -v` prints the version and then runs standard input as a program: only `--version` only prints.
static RUBY: Interpreter = Interpreter {
    version: &["--version", "--help", "-h"],
    code: &["-e"],
    language: Some(Language::Ruby),
    values: &["-e", "-r", "-I", "-C", "-E", "-F"],
    optional: &["-i", "-x", "-0", "-W", "-K"],
    in_place: Some("-i"),
};
static PHP: Interpreter = Interpreter {
    version: &["--version", "-v", "--help", "-h"],
    code: &["-r", "-B", "-R", "-E"],
    language: Some(Language::Php),
    values: &["-r", "-B", "-R", "-E", "-d", "-c", "-z"],
    optional: &[],
    in_place: None,
};
static BUN: Interpreter = Interpreter {
    version: &["--version", "-v", "--help", "-h"],
    code: &["-e", "--eval", "-p", "--print"],
    language: Some(Language::JavaScript),
    values: &[
        "-e",
        "--eval",
        "-p",
        "--print",
        "-r",
        "--preload",
        "--cwd",
        "--env-file",
        "--tsconfig-override",
    ],
    optional: &[],
    in_place: None,
};
static DENO: Interpreter = Interpreter {
    version: &["--version", "-V", "--help", "-h"],
    code: &[],
    language: Some(Language::JavaScript),
    values: &[],
    optional: &[],
    in_place: None,
};
static LUA: Interpreter = Interpreter {
    version: &["-v"],
    code: &["-e"],
    language: Some(Language::Lua),
    values: &["-e", "-l"],
    optional: &[],
    in_place: None,
};
static RSCRIPT: Interpreter = Interpreter {
    version: &["--version", "--help"],
    code: &["-e"],
    language: Some(Language::R),
    values: &["-e"],
    optional: &[],
    in_place: None,
};
static JAVA: Interpreter = Interpreter {
    version: &["-version", "--version", "-help", "--help", "-h", "-?"],
    code: &[],
    language: None,
    values: &[],
    optional: &[],
    in_place: None,
};

/// The rustup proxies read `rust-toolchain.toml` (which can name a toolchain directory of the project), cargo also
/// `.cargo/config.toml` (a rustc wrapper, runners, aliases), in the directory and every one above it.
#[rustfmt::skip]
static RUST_TOOLCHAIN: &[&str] = &["rust-toolchain.toml", "rust-toolchain"];
#[rustfmt::skip]
static CARGO: Program = Program {
    version: &["--version", "-V", "-vV", "--help", "-h", "--list"],
    subs: &[
        // Without `--offline`/`--frozen` (or, for metadata, `--no-deps`) they may update the registry index and
        // download crates to resolve the dependencies.
        ("metadata", Sub::Online { with: &[], without: &["--offline", "--frozen", "--no-deps"] }),
        ("tree", Sub::Online { with: &[], without: &["--offline", "--frozen"] }),
        ("pkgid", Sub::Online { with: &[], without: &["--offline", "--frozen"] }),
        ("info", Sub::Online { with: &[], without: &["--offline", "--frozen"] }),
        ("search", Sub::Network),
        ("version", READS),
        ("locate-project", READS),
        ("verify-project", READS),
        ("help", READS),
        // Built-in sub-commands that build, run or change something, listed so that `SUB --help` is known to
        // only print its help (an external `cargo-SUB` would run for a name not listed).
        ("build", Sub::Runs), ("b", Sub::Runs), ("check", Sub::Runs), ("c", Sub::Runs), ("clean", Sub::Runs),
        ("doc", Sub::Runs), ("d", Sub::Runs), ("new", Sub::Runs), ("init", Sub::Runs), ("add", Sub::Runs),
        ("remove", Sub::Runs), ("run", Sub::Runs), ("r", Sub::Runs), ("test", Sub::Runs), ("t", Sub::Runs),
        ("bench", Sub::Runs), ("update", Sub::Runs), ("publish", Sub::Runs), ("install", Sub::Runs),
        ("uninstall", Sub::Runs), ("fetch", Sub::Runs), ("fix", Sub::Runs), ("package", Sub::Runs),
        ("vendor", Sub::Runs), ("generate-lockfile", Sub::Runs), ("rustc", Sub::Runs), ("rustdoc", Sub::Runs),
        ("login", Sub::Runs), ("logout", Sub::Runs), ("owner", Sub::Runs), ("yank", Sub::Runs),
    ],
    options: Syntax {
        values: &[
            "--manifest-path", "--config", "-Z", "--color", "-C", "--target-dir", "-p", "--package",
            "--format-version", "--features", "-F", "--target", "--filter-platform", "-e", "--edges", "-i",
            "--invert", "--prefix", "--charset", "-f", "--format", "--depth", "--prune", "--message-format",
            "--lockfile-path", "--index", "--registry", "--limit", "--exclude", "--explain", "-j", "--jobs",
            "--profile", "--bin", "--example", "--test", "--bench", "--workspace-root"
        ],
        effects: &[(
            "--config",
            HiddenExec("`cargo --config` sets configuration that can run programs (a rustc wrapper, runners)"),
        )],
        ..GNU
    },
    directory: &["-C"],
    manifest: &["--manifest-path"],
    loads: &["rust-toolchain.toml", "rust-toolchain", ".cargo/config.toml", ".cargo/config"],
};
#[rustfmt::skip]
static RUSTC: Program = Program {
    version: &["--version", "-V", "-vV", "--help", "-h"],
    loads: RUST_TOOLCHAIN,
    ..PROGRAM
};
#[rustfmt::skip]
static RUSTUP: Program = Program {
    version: &["--version", "-V", "--help", "-h"],
    subs: &[("show", READS), ("which", READS), ("help", READS)],
    loads: RUST_TOOLCHAIN,
    ..PROGRAM
};
#[rustfmt::skip]
static NPM: Program = Program {
    version: &["--version", "-v", "--help", "-h"],
    subs: &[
        ("ls", READS), ("list", READS), ("ll", READS), ("la", READS), ("help", READS), ("why", READS),
        ("explain", READS), ("prefix", READS), ("root", READS), ("run", Sub::Lists), ("run-script", Sub::Lists),
        ("rum", Sub::Lists), ("urn", Sub::Lists),
        ("outdated", Sub::Network), ("view", Sub::Network), ("v", Sub::Network), ("info", Sub::Network),
        ("show", Sub::Network), ("audit", Sub::Network), ("search", Sub::Network), ("ping", Sub::Network),
        ("whoami", Sub::Network), ("doctor", Sub::Network),
        // Listed so that `SUB --help` is known to only print its help.
        ("install", Sub::Runs), ("i", Sub::Runs), ("ci", Sub::Runs), ("uninstall", Sub::Runs),
        ("update", Sub::Runs), ("test", Sub::Runs), ("start", Sub::Runs), ("stop", Sub::Runs),
        ("restart", Sub::Runs), ("exec", Sub::Runs), ("init", Sub::Runs), ("publish", Sub::Runs),
        ("pack", Sub::Runs), ("link", Sub::Runs), ("rebuild", Sub::Runs), ("dedupe", Sub::Runs),
        ("prune", Sub::Runs), ("version", Sub::Runs), ("config", Sub::Runs), ("cache", Sub::Runs),
    ],
    options: Syntax {
        values: &[
            "--prefix", "-w", "--workspace", "--registry", "--depth", "--omit", "--include", "--userconfig",
            "--globalconfig", "--cache", "--loglevel"
        ],
        effects: &[
            ("--registry", Network("`npm --registry` names a registry it reaches")),
            ("--userconfig", HiddenExec("`npm --userconfig` loads another configuration")),
            ("--globalconfig", HiddenExec("`npm --globalconfig` loads another configuration")),
        ],
        ..GNU
    },
    directory: &["--prefix"],
    loads: &[".npmrc"],
    ..PROGRAM
};
// corepack runs the version of pnpm or yarn that `package.json` names (`packageManager`); yarn runs the file
// `yarnPath` of `.yarnrc.yml` names.
#[rustfmt::skip]
static PNPM: Program = Program {
    version: &["--version", "-v", "--help", "-h"],
    subs: &[
        ("ls", READS), ("list", READS), ("ll", READS), ("la", READS), ("why", READS), ("help", READS),
        ("root", READS), ("run", Sub::Lists), ("outdated", Sub::Network), ("view", Sub::Network),
        ("info", Sub::Network), ("audit", Sub::Network), ("search", Sub::Network),
    ],
    options: Syntax { values: &["-C", "--dir", "--filter", "-F", "--depth", "--reporter"], ..GNU },
    directory: &["-C", "--dir"],
    loads: &[".npmrc", ".pnpmfile.cjs", "package.json", "pnpm-workspace.yaml"],
    ..PROGRAM
};
#[rustfmt::skip]
static YARN: Program = Program {
    version: &["--version", "-v", "--help", "-h"],
    subs: &[
        ("list", READS), ("why", READS), ("help", READS), ("run", Sub::Lists), ("outdated", Sub::Network),
        ("info", Sub::Network), ("npm", Sub::Network), ("audit", Sub::Network),
    ],
    options: Syntax { values: &["--cwd", "--depth", "--pattern"], ..GNU },
    directory: &["--cwd"],
    loads: &[".yarnrc.yml", ".yarnrc", "package.json"],
    ..PROGRAM
};
#[rustfmt::skip]
static PIP: Program = Program {
    version: &["--version", "-V", "--help", "-h"],
    subs: &[
        ("list", Sub::Online { with: &["-o", "--outdated", "-u", "--uptodate"], without: &[] }),
        ("show", READS), ("freeze", READS), ("help", READS), ("check", READS), ("inspect", READS),
        ("download", Sub::Network), ("search", Sub::Network), ("index", Sub::Network),
    ],
    options: Syntax {
        values: &[
            "--log", "--log-file", "--cache-dir", "--proxy", "--cert", "--client-cert", "-i", "--index-url",
            "--extra-index-url", "-f", "--find-links", "--trusted-host", "--python", "--exists-action", "--src",
            "-t", "--target", "--root", "--prefix", "-c", "--constraint", "-r", "--requirement", "--retries",
            "--timeout", "--keyring-provider", "--format", "--exclude", "--path", "--progress-bar", "--platform",
            "--python-version", "--implementation", "--abi", "--only-binary", "--no-binary", "-e", "--editable",
            "--config-settings", "--global-option"
        ],
        effects: &[
            ("--log", WriteValue),
            ("--log-file", WriteValue),
            ("--path", ReadValue),
            ("--python", HiddenExec("`pip --python` runs another Python interpreter")),
            ("-i", Network("`pip --index-url` names a package index it reaches")),
            ("--index-url", Network("`pip --index-url` names a package index it reaches")),
            ("--extra-index-url", Network("`pip --extra-index-url` names a package index it reaches")),
            ("-f", Network("`pip --find-links` names a place it reaches")),
            ("--find-links", Network("`pip --find-links` names a place it reaches")),
            ("--proxy", Network("`pip --proxy` names a proxy it reaches")),
        ],
        ..GNU
    },
    ..PROGRAM
};
// Go flags are whole words with one dash (`-C dir`, `-mod=vendor`); a `go` or `toolchain` line of `go.mod` or
// `go.work` makes it download and run another toolchain.
#[rustfmt::skip]
static GO: Program = Program {
    version: &["--help", "-h"],
    subs: &[
        ("version", READS),
        ("help", READS),
        ("env", Sub::Reads { unless: &["-w", "-u"] }),
        // It downloads the modules it needs to list them (`go list -m -u` asks the proxy for updates).
        ("list", Sub::Network),
    ],
    options: Syntax {
        values: &[
            "-C", "-o", "-mod", "-modfile", "-tags", "-ldflags", "-gcflags", "-asmflags", "-toolexec", "-exec",
            "-overlay", "-pkgdir", "-p", "-f"
        ],
        effects: &[
            ("-toolexec", HiddenExec("`go -toolexec` runs a program for every tool")),
            ("-exec", HiddenExec("`go -exec` runs a program")),
        ],
        single_dash: true,
        ..GNU
    },
    directory: &["-C"],
    loads: &["go.mod", "go.work"],
    ..PROGRAM
};
#[rustfmt::skip]
static MAKE: Program = Program {
    version: &["--version", "-v", "--help", "-h"],
    directory: &["-C", "--directory"],
    ..PROGRAM
};
#[rustfmt::skip]
static MAVEN: Program = Program {
    version: &["--version", "-v", "-version", "--help", "-h"],
    loads: &[".mvn/jvm.config", ".mvn/maven.config", ".mvn/extensions.xml"],
    ..PROGRAM
};
#[rustfmt::skip]
static GRADLE: Program = Program {
    version: &["--version", "-v", "--help", "-h", "-?"],
    directory: &["-p", "--project-dir"],
    loads: &["gradle.properties"],
    ..PROGRAM
};
#[rustfmt::skip]
static DIRENV: Program = Program {
    version: &["--version", "--help", "version", "help"],
    subs: &[("status", READS), ("version", READS), ("help", READS)],
    loads: &[".envrc", ".env"],
    ..PROGRAM
};
#[rustfmt::skip]
static MISE: Program = Program {
    version: &["--version", "-V", "--help", "-h"],
    subs: &[
        ("ls", READS), ("list", READS), ("current", READS), ("which", READS), ("where", READS),
        ("version", READS), ("help", READS),
    ],
    loads: &[
        "mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml", ".mise/config.toml", "mise/config.toml",
        ".config/mise.toml", ".config/mise/config.toml", ".tool-versions", ".rtx.toml"
    ],
    ..PROGRAM
};
#[rustfmt::skip]
static ASDF: Program = Program {
    version: &["--version", "--help", "version", "help"],
    subs: &[
        ("current", READS), ("list", READS), ("version", READS), ("help", READS), ("info", READS),
        ("where", READS), ("which", READS),
    ],
    loads: &[".tool-versions"],
    ..PROGRAM
};
// tox loads `toxfile.py` and its configuration (which can require plugins it then installs) before it lists.
#[rustfmt::skip]
static TOX: Program = Program {
    version: &["--version", "--help", "-h", "-l", "-a", "--listenvs", "--listenvs-all"],
    subs: &[("list", READS), ("l", READS), ("config", READS), ("c", READS)],
    loads: &["toxfile.py", "tox.ini", "tox.toml", "pyproject.toml", "setup.cfg"],
    ..PROGRAM
};
// pytest imports `conftest.py` and the plugins its configuration names (`addopts = -p …`) before it prints.
#[rustfmt::skip]
static PYTEST: Program = Program {
    version: &["--version", "-V", "--help", "-h"],
    loads: &["conftest.py", "pytest.ini", ".pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"],
    ..PROGRAM
};
#[rustfmt::skip]
static DOTNET: Program = Program {
    version: &["--version", "--info", "--list-sdks", "--list-runtimes", "--help", "-h"],
    loads: &["global.json"],
    ..PROGRAM
};
// Bazelisk runs the version `.bazelversion` names; `.bazelrc` gives the server its start-up options.
#[rustfmt::skip]
static BAZEL: Program = Program {
    version: &["--version", "--help"],
    loads: &[".bazelversion", ".bazelrc"],
    ..PROGRAM
};
#[rustfmt::skip]
static COMPILER: Program = Program {
    version: &["--version", "-v", "--help", "-dumpversion", "-dumpmachine", "-dumpfullversion"],
    ..PROGRAM
};
#[rustfmt::skip]
static BUILD_TOOL: Program = Program {
    version: &["--version", "--help"],
    ..PROGRAM
};

/// `apt-cache`: its queries read the local package lists; `-o`, `-c` and the cache-file options may make it write a
/// cache elsewhere.
#[rustfmt::skip]
static APT_CACHE: Program = Program {
    version: &["--version", "-v", "--help", "-h"],
    subs: &[
        ("search", READS), ("show", READS), ("showpkg", READS), ("showsrc", READS), ("policy", READS),
        ("depends", READS), ("rdepends", READS), ("pkgnames", READS), ("madison", READS), ("stats", READS),
        ("unmet", READS), ("dump", READS), ("dotty", READS), ("xvcg", READS), ("gencaches", Sub::Runs),
    ],
    options: APT_OPTIONS,
    ..PROGRAM
};
/// `apt`: `list`, `search`, `show` and `policy` read the local package lists; everything else installs or
/// fetches.
#[rustfmt::skip]
static APT: Program = Program {
    version: &["--version", "-v", "--help", "-h"],
    subs: &[
        ("list", READS), ("search", READS), ("show", READS), ("policy", READS), ("depends", READS),
        ("rdepends", READS), ("install", Sub::Runs), ("remove", Sub::Runs), ("purge", Sub::Runs),
        ("update", Sub::Runs), ("upgrade", Sub::Runs), ("full-upgrade", Sub::Runs), ("autoremove", Sub::Runs),
        ("source", Sub::Runs), ("download", Sub::Runs), ("edit-sources", Sub::Runs), ("reinstall", Sub::Runs),
    ],
    options: APT_OPTIONS,
    ..PROGRAM
};
#[rustfmt::skip]
const APT_OPTIONS: Syntax = Syntax {
    values: &["-o", "--option", "-c", "--config-file", "-p", "--pkg-cache", "-s", "--src-cache", "-t", "--target-release"],
    effects: &[
        ("-o", NotReadOnly("`apt -o` sets any configuration option")),
        ("--option", NotReadOnly("`apt -o` sets any configuration option")),
        ("-c", NotReadOnly("`apt -c` loads another configuration file")),
        ("--config-file", NotReadOnly("`apt -c` loads another configuration file")),
        ("-p", NotReadOnly("`apt-cache -p` names the package cache it may write")),
        ("--pkg-cache", NotReadOnly("`apt-cache -p` names the package cache it may write")),
        ("-s", NotReadOnly("`apt-cache -s` names the source cache it may write")),
        ("--src-cache", NotReadOnly("`apt-cache -s` names the source cache it may write")),
    ],
    ..GNU
};
/// `uv`: every sub-command may sync an environment, fetch or run code, except `SUB --help`, which only prints.
#[rustfmt::skip]
static UV: Program = Program {
    version: &["--version", "-V", "--help", "-h"],
    subs: &[
        ("run", Sub::Runs), ("init", Sub::Runs), ("add", Sub::Runs), ("remove", Sub::Runs), ("version", Sub::Runs),
        ("sync", Sub::Runs), ("lock", Sub::Runs), ("export", Sub::Runs), ("tree", Sub::Runs), ("format", Sub::Runs),
        ("tool", Sub::Runs), ("python", Sub::Runs), ("pip", Sub::Group(&UV_PIP)), ("venv", Sub::Runs), ("build", Sub::Runs),
        ("publish", Sub::Runs), ("cache", Sub::Runs), ("self", Sub::Runs), ("help", READS),
    ],
    ..PROGRAM
};
/// `uv pip SUB`: pip's interface, run by uv. Listing, showing and freezing the installed packages only read the
/// environment (`--outdated` looks the packages up in the index).
#[rustfmt::skip]
static UV_PIP: Program = Program {
    version: &["--help", "-h"],
    subs: &[
        ("list", Sub::Online { with: &["--outdated"], without: &[] }),
        ("tree", Sub::Online { with: &["--outdated"], without: &[] }),
        ("show", READS), ("freeze", READS), ("check", READS),
        ("install", Sub::Runs), ("uninstall", Sub::Runs), ("sync", Sub::Runs), ("compile", Sub::Runs),
    ],
    options: Syntax {
        values: &[
            "-p", "--python", "--format", "--exclude", "-i", "--index-url", "--extra-index-url", "--default-index",
            "--index", "-f", "--find-links", "--directory", "--project", "--config-file", "--cache-dir", "--color",
            "--python-platform", "--python-version", "--target", "--prefix", "--keyring-provider",
            "--index-strategy", "--depth", "--prune", "--package", "--allow-insecure-host"
        ],
        effects: &[
            ("-p", HiddenExec("`uv pip --python` runs the Python interpreter it names")),
            ("--python", HiddenExec("`uv pip --python` runs the Python interpreter it names")),
            ("--config-file", ReadValue),
            ("-i", Network("`uv pip --index-url` names a package index it reaches")),
            ("--index-url", Network("`uv pip --index-url` names a package index it reaches")),
            ("--extra-index-url", Network("`uv pip --extra-index-url` names a package index it reaches")),
            ("--default-index", Network("`uv pip --default-index` names a package index it reaches")),
            ("--index", Network("`uv pip --index` names a package index it reaches")),
            ("-f", Network("`uv pip --find-links` names a place it reaches")),
            ("--find-links", Network("`uv pip --find-links` names a place it reaches")),
        ],
        ..GNU
    },
    directory: &["--directory"],
    ..PROGRAM
};
#[rustfmt::skip]
static UNZIP: Archive = Archive {
    reads: &["-l", "-v", "-t", "-Z", "-p", "-c", "-z"],
    read_subs: &[],
    values: &["-d", "-x", "-P"],
    optional: &[],
    // `unzip A.zip -d DIR`: the files are extracted below DIR.
    effects: &[("-d", WriteValue)],
    bare_reads: false,
};
#[rustfmt::skip]
static ZIPINFO: Archive = Archive { reads: &[], read_subs: &[], values: &[], optional: &[], effects: &[], bare_reads: true };
#[rustfmt::skip]
static GZIP: Archive = Archive {
    reads: &["-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test"],
    read_subs: &[],
    values: &["-S", "--suffix", "-b"],
    optional: &[],
    effects: &[],
    bare_reads: false,
};
/// `xz --files[=FILE]`, `--files0[=FILE]`: the files to work on are named in FILE (standard input without one).
#[rustfmt::skip]
static XZ: Archive = Archive {
    reads: &["-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test"],
    read_subs: &[],
    values: &["-S", "--suffix", "-T", "--threads", "-F", "--format", "-C", "--check", "-M", "--memlimit",
        "--block-size", "--block-list", "--filters"],
    optional: &["--files", "--files0"],
    effects: &[("--files", ListedFiles), ("--files0", ListedFiles)],
    bare_reads: false,
};
/// `zstd --filelist FILE` works on the files FILE names, `-D FILE` reads a dictionary, `-o` and the output
/// directories are written.
#[rustfmt::skip]
static ZSTD: Archive = Archive {
    reads: &["-c", "--stdout", "-l", "--list", "-t", "--test"],
    read_subs: &[],
    values: &["-o", "-D", "-T", "--threads", "-M", "--memory", "--filelist", "--output-dir-flat",
        "--output-dir-mirror"],
    optional: &[],
    effects: &[("--filelist", ListedFiles), ("-D", ReadValue), ("-o", WriteValue), ("--output-dir-flat", WriteValue),
        ("--output-dir-mirror", WriteValue)],
    bare_reads: false,
};
/// 7-Zip's switches take their values attached (`-oDIR`, `-pSECRET`, `-tzip`, `-xr!*.o`); `-o` names the directory
/// it extracts to, `-w` its working directory.
#[rustfmt::skip]
static SEVEN_Z: Archive = Archive {
    reads: &[],
    read_subs: &["l", "t", "i", "h"],
    values: &[],
    optional: &["-o", "-w", "-p", "-t", "-m", "-x", "-i", "-v", "-a", "-b", "-s", "-r", "-u", "-y"],
    effects: &[("-o", WriteValue), ("-w", WriteValue)],
    bare_reads: false,
};
#[rustfmt::skip]
static AR: Archive = Archive { reads: &[], read_subs: &["t", "tv", "p"], values: &[], optional: &[], effects: &[], bare_reads: false };

/// The built-in table: every name, and what it is.
#[rustfmt::skip]
pub(crate) static COMMANDS: &[(&[&str], Kind)] = &[
    // Read-only inspection of files and text.
    (
        &[
            "cat", "tac", "nl", "rev", "fold", "fmt", "pr", "expand", "unexpand", "paste", "join", "comm",
            "cmp", "strings", "sum", "column", "tsort", "zcat", "bzcat", "xzcat", "zstdcat", "lz4cat"
        ],
        Kind::ReadOnly(&FILES),
    ),
    (&["readlink", "realpath"], Kind::ReadOnly(&NAMES)),
    (
        &[
            "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum",
            "shasum"
        ],
        Kind::ReadOnly(&SUMS),
    ),
    (&["hexdump"], Kind::ReadOnly(&HEXDUMP)),
    (&["od"], Kind::ReadOnly(&OD)),
    (&["look"], Kind::ReadOnly(&LOOK)),
    (&["lsof"], Kind::ReadOnly(&LSOF)),
    (&["free"], Kind::ReadOnly(&FREE)),
    (&["base64", "base32", "basenc"], Kind::ReadOnly(&BASE64)),
    (&["head"], Kind::ReadOnly(&HEAD)),
    (&["tail"], Kind::ReadOnly(&TAIL)),
    (&["grep", "egrep", "fgrep", "zgrep"], Kind::ReadOnly(&GREP)),
    (&["rg"], Kind::ReadOnly(&RG)),
    (&["sort"], Kind::ReadOnly(&SORT)),
    (&["uniq"], Kind::ReadOnly(&UNIQ)),
    (&["xxd"], Kind::ReadOnly(&XXD)),
    (&["cut"], Kind::ReadOnly(&CUT)),
    (&["tr"], Kind::ReadOnly(&TR)),
    (&["diff", "diff3", "sdiff"], Kind::ReadOnly(&DIFF)),
    (&["file"], Kind::ReadOnly(&FILE)),
    (&["stat"], Kind::ReadOnly(&STAT)),
    (&["ls", "dir", "vdir", "exa", "eza", "lsd"], Kind::ReadOnly(&LS)),
    (&["du"], Kind::ReadOnly(&DU)),
    (&["wc"], Kind::ReadOnly(&WC)),
    (&["tree"], Kind::ReadOnly(&TREE)),
    (&["jq", "gojq", "jaq"], Kind::Special(Special::Jq)),
    (&["openssl"], Kind::Special(Special::Openssl)),
    (&["shuf"], Kind::ReadOnly(&SHUF)),
    (&["date"], Kind::ReadOnly(&DATE)),
    (&["hostname"], Kind::ReadOnly(&HOSTNAME)),
    (&["seq"], Kind::Special(Special::Seq)),
    (&["yes"], Kind::Special(Special::Yes)),
    (&["sleep"], Kind::Special(Special::Sleep)),
    (&["factor"], Kind::Special(Special::Factor)),
    (&["printenv"], Kind::Special(Special::Printenv)),
    (&["ps"], Kind::Special(Special::Ps)),
    (&["set"], Kind::Special(Special::Set)),
    (&["shopt"], Kind::Special(Special::Shopt)),
    (&["alias"], Kind::Special(Special::Alias)),
    (&["enable"], Kind::Special(Special::Enable)),
    (&["ulimit", "umask"], Kind::Special(Special::Setting)),
    (&["tar", "gtar", "bsdtar"], Kind::Special(Special::Tar)),
    (&["unzip"], Kind::Special(Special::Archive(&UNZIP))),
    (&["zipinfo"], Kind::Special(Special::Archive(&ZIPINFO))),
    (&["gzip", "gunzip", "bzip2", "bunzip2", "pigz", "lz4"], Kind::Special(Special::Archive(&GZIP))),
    (&["xz", "unxz", "lzma", "unlzma"], Kind::Special(Special::Archive(&XZ))),
    (&["zstd", "unzstd"], Kind::Special(Special::Archive(&ZSTD))),
    (&["7z", "7za", "7zz"], Kind::Special(Special::Archive(&SEVEN_Z))),
    (&["ar"], Kind::Special(Special::Archive(&AR))),
    (&["yq"], Kind::Special(Special::Yq)),
    (&["cd", "pushd", "popd", "chdir"], Kind::Special(Special::Cd)),
    (&["stty"], Kind::ReadOnly(&STTY)),
    (
        &[
            "echo", "pwd", "basename", "dirname", "true", "false", "test", "[", "which", "whereis", "type",
            "whoami", "id", "groups", "uname", "arch", "nproc", "uptime", "df",
            "locale", "tty", "cal", "expr", "numfmt", "getconf", "lscpu",
            "lsb_release", "users", "who", "w", "logname", "env_info", "dirs", "unset",
            "shift", "exit", "return", "break", "continue", ":", "wait", "jobs", "getopts", "times", "caller",
            "help", "tput", "clear", "pgrep", "pidof"
        ],
        Kind::ReadOnly(&DATA),
    ),
    (&["printf"], Kind::ReadOnly(&PRINTF)),
    (&["read"], Kind::ReadOnly(&READ)),
    (&["mapfile", "readarray"], Kind::ReadOnly(&MAPFILE)),
    (&["hash"], Kind::ReadOnly(&HASH)),
    (&["git"], Kind::Special(Special::Git)),
    (&["sed", "gsed"], Kind::Special(Special::Sed)),
    (&["awk", "gawk", "mawk", "nawk"], Kind::Special(Special::Awk)),
    (&["find", "gfind"], Kind::Special(Special::Find)),
    (
        &["export", "declare", "local", "readonly", "typeset"],
        Kind::Special(Special::Declare),
    ),
    (&["let"], Kind::Special(Special::Let)),
    (&["mktemp", "gmktemp"], Kind::Special(Special::Mktemp)),
    // Writes.
    (&["rm", "unlink"], Kind::Special(Special::Rm)),
    (&["rmdir", "mkfifo", "mknod"], Kind::Write(&WRITTEN)),
    (&["touch"], Kind::Write(&TOUCH)),
    (&["mkdir"], Kind::Write(&MKDIR)),
    (&["tee"], Kind::Write(&TEE)),
    (&["truncate", "fallocate"], Kind::Write(&TRUNCATE)),
    (&["cp", "ln", "install", "link"], Kind::Write(&CP)),
    (&["mv", "rename"], Kind::Write(&MV)),
    (&["shred", "wipe"], Kind::Write(&SHRED)),
    (
        &[
            "split", "csplit", "patch", "zip", "cpio", "sync", "unalias",
            "complete", "compgen", "bind", "disown", "fg", "bg", "history", "fc", "crontab", "at",
            "batch", "pkill", "killall", "chattr", "setfacl", "mount", "umount", "swapon", "swapoff", "iptables", "nft",
            "ip", "ifconfig", "route", "modprobe", "insmod", "rmmod", "sysctl", "service", "launchctl",
            "kubectl", "terraform", "ansible", "helm"
        ],
        Kind::Write(&WRITTEN),
    ),
    (&["docker", "podman", "nerdctl", "docker-compose"], Kind::Special(Special::Container)),
    (&["dd"], Kind::Special(Special::Dd)),
    (&["chmod", "chown", "chgrp"], Kind::Special(Special::Chmod)),
    (&["kill"], Kind::Special(Special::Kill)),
    (&["init", "telinit"], Kind::Special(Special::Init)),
    (&["systemctl"], Kind::Special(Special::Systemctl)),
    (&["rsync"], Kind::Special(Special::Rsync)),
    // Wrappers that run their arguments.
    (&["env"], Kind::Wrapper(&ENV)),
    (&["xargs"], Kind::Wrapper(&XARGS)),
    (&["parallel"], Kind::Wrapper(&PARALLEL)),
    (&["timeout", "gtimeout"], Kind::Wrapper(&TIMEOUT)),
    (&["nice", "renice"], Kind::Wrapper(&NICE)),
    (&["nohup"], Kind::Wrapper(&NOHUP)),
    (&["time"], Kind::Wrapper(&TIME)),
    (&["stdbuf"], Kind::Wrapper(&STDBUF)),
    (&["command"], Kind::Wrapper(&COMMAND)),
    (&["builtin"], Kind::Wrapper(&BUILTIN)),
    (&["exec"], Kind::Wrapper(&EXEC)),
    (&["watch"], Kind::Wrapper(&WATCH)),
    (&["setsid"], Kind::Wrapper(&SETSID)),
    (&["ionice"], Kind::Wrapper(&IONICE)),
    (&["chroot"], Kind::Wrapper(&CHROOT)),
    (&["flock"], Kind::Wrapper(&FLOCK)),
    (&["unbuffer"], Kind::Wrapper(&UNBUFFER)),
    (&["busybox", "toybox"], Kind::Wrapper(&BUSYBOX)),
    (&["sudo"], Kind::Wrapper(&SUDO)),
    (&["doas"], Kind::Wrapper(&DOAS)),
    (&["taskset"], Kind::Wrapper(&TASKSET)),
    (&["chrt"], Kind::Wrapper(&CHRT)),
    (&["fd", "fdfind"], Kind::ReadOnly(&FD)),
    (&["bat", "batcat"], Kind::ReadOnly(&BAT)),
    // Searchers, and tools that inspect databases, media files and packet captures.
    (&["ag"], Kind::ReadOnly(&AG)),
    (&["ack", "ack-grep"], Kind::ReadOnly(&ACK)),
    (&["sqlite3"], Kind::Special(Special::Sqlite3)),
    (&["ffprobe"], Kind::Special(Special::Ffprobe)),
    (&["mediainfo"], Kind::Special(Special::Mediainfo)),
    (&["exiftool"], Kind::Special(Special::Exiftool)),
    (&["tshark"], Kind::Special(Special::Tshark)),
    (&["tcpdump"], Kind::Special(Special::Tcpdump)),
    (&["capinfos"], Kind::ReadOnly(&CAPINFOS)),
    (&["apt-cache"], Kind::Program(&APT_CACHE)),
    (&["apt"], Kind::Program(&APT)),
    (&["uv"], Kind::Program(&UV)),
    // Code runners.
    (
        &[
            "bash", "sh", "zsh", "dash", "ksh", "mksh", "yash", "fish", "csh", "tcsh", "ash", "rbash",
        ],
        Kind::Shell,
    ),
    (&["eval"], Kind::Eval),
    (&["source", "."], Kind::Source),
    (&["trap"], Kind::Trap),
    (&["python", "python2", "python3", "pypy", "pypy3"], Kind::Interpreter(&PYTHON)),
    (&["node", "nodejs"], Kind::Interpreter(&NODE)),
    (&["perl"], Kind::Interpreter(&PERL)),
    (&["ruby"], Kind::Interpreter(&RUBY)),
    (&["php"], Kind::Interpreter(&PHP)),
    (&["bun"], Kind::Interpreter(&BUN)),
    (&["deno"], Kind::Interpreter(&DENO)),
    (&["lua", "luajit"], Kind::Interpreter(&LUA)),
    (&["java"], Kind::Interpreter(&JAVA)),
    (&["Rscript", "R"], Kind::Interpreter(&RSCRIPT)),
    (
        &[
            "julia", "tclsh", "wish", "expect", "osascript", "pwsh", "powershell", "irb", "ghci",
            "runghc", "runhaskell", "scala", "kotlin", "swift", "jshell", "groovy", "elixir", "iex", "erl",
            "escript", "guile", "racket", "sbcl", "clojure", "dart", "ts-node", "tsx", "dc", "gdb", "lldb",
            "strace", "ltrace", "valgrind", "script"
        ],
        Kind::Interpreter(&INTERPRETER),
    ),
    (&["cargo"], Kind::Program(&CARGO)),
    (&["rustc", "rustdoc"], Kind::Program(&RUSTC)),
    (&["rustup"], Kind::Program(&RUSTUP)),
    (&["npm"], Kind::Program(&NPM)),
    (&["pnpm"], Kind::Program(&PNPM)),
    (&["yarn"], Kind::Program(&YARN)),
    (&["pip", "pip3"], Kind::Program(&PIP)),
    (&["go"], Kind::Program(&GO)),
    (&["make", "gmake"], Kind::Program(&MAKE)),
    (&["mvn"], Kind::Program(&MAVEN)),
    (&["gradle"], Kind::Program(&GRADLE)),
    (&["direnv"], Kind::Program(&DIRENV)),
    (&["mise", "rtx"], Kind::Program(&MISE)),
    (&["asdf"], Kind::Program(&ASDF)),
    (&["tox"], Kind::Program(&TOX)),
    (&["pytest", "py.test"], Kind::Program(&PYTEST)),
    (&["dotnet"], Kind::Program(&DOTNET)),
    (&["bazel", "bazelisk"], Kind::Program(&BAZEL)),
    (&["cc", "gcc", "g++", "c++", "clang", "clang++", "ld"], Kind::Program(&COMPILER)),
    (
        &[
            "pipx", "npx", "pnpx", "bunx", "uvx", "poetry", "pdm", "conda", "mamba", "micromamba", "gem",
            "bundle", "bundler", "rake", "composer", "cmake", "ninja", "meson", "gradlew", "mvnw", "sbt", "ant",
            "tsc", "webpack", "vite", "jest", "vitest", "nox", "just", "task", "buck2", "brew", "apt-get",
            "dpkg", "dnf", "yum", "rpm", "pacman", "apk", "snap", "flatpak", "nix", "nix-env", "pre-commit",
            "hatch", "maturin", "wasm-pack", "trunk", "cross", "flutter", "rye", "pixi"
        ],
        Kind::Program(&BUILD_TOOL),
    ),
    // Network clients.
    (
        &[
            "curl", "wget", "nc", "ncat", "netcat", "socat", "ssh", "scp", "sftp", "ftp", "telnet", "lftp",
            "aria2c", "http", "https", "xh", "httpie", "mosh", "rsh", "rlogin", "tftp", "nmap", "ssh-copy-id",
            "ssh-keyscan", "sshpass", "ping", "ping6", "dig", "nslookup", "host", "whois", "traceroute",
            "tracepath", "links", "lynx", "w3m", "smbclient", "ldapsearch", "gh", "git-remote-http", "wget2",
            "axel", "curlie", "nc.openbsd", "nc.traditional"
        ],
        Kind::Network,
    ),
    // Privilege.
    (
        &[
            "su", "pkexec", "runuser", "run0", "sudoedit", "machinectl", "newgrp", "sg", "setpriv", "capsh",
            "setcap", "nsenter", "unshare", "useradd", "userdel", "usermod", "groupadd", "groupdel", "groupmod",
            "gpasswd", "passwd", "chpasswd", "chsh", "chfn", "visudo", "vipw", "vigr"
        ],
        Kind::Privileged,
    ),
    // Destructive.
    (
        &["shutdown", "reboot", "halt", "poweroff", "kexec"],
        Kind::Destructive("stops or restarts the machine"),
    ),
    (
        &[
            "mkfs", "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted",
            "mkdosfs", "badblocks", "blkdiscard", "cryptsetup", "lvremove", "vgremove", "pvremove", "zpool",
            "killall5"
        ],
        Kind::Destructive("destroys a file system or the whole system"),
    ),
    // Interactive programs.
    (
        &[
            "vi", "vim", "nvim", "view", "nano", "emacs", "emacsclient", "ed", "ex", "pico", "joe", "micro",
            "mcedit", "kak", "hx", "helix", "code", "subl", "gedit", "kate"
        ],
        Kind::Editor,
    ),
    (
        &[
            "less", "more", "most", "man", "info", "top", "htop", "btop", "atop", "tmux", "screen", "mc",
            "ranger", "nnn", "fzf", "watchman", "vimtutor",
        ],
        Kind::Interactive,
    ),
];

/// Name prefixes that mean a destructive tool whatever follows (`mkfs.ext4`).
#[rustfmt::skip]
pub(crate) static DESTRUCTIVE_PREFIXES: &[&str] = &["mkfs.", "mke2fs.", "fsck."];

/// Interpreter names that carry a version (`python3.12`, `ruby3.2`).
#[rustfmt::skip]
pub(crate) static VERSIONED_INTERPRETERS: &[&str] =
    &["python", "pypy", "ruby", "perl", "php", "node", "lua", "pip"];

/// Directories whose programs are the system's own, so `/usr/bin/rm` is `rm`.
#[rustfmt::skip]
pub(crate) static SYSTEM_BIN_DIRS: &[&str] = &["/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin", "/opt/homebrew/bin"];

/// Top-level directories of a system whose recursive removal or permission change is destructive.
#[rustfmt::skip]
pub(crate) static SYSTEM_DIRS: &[&str] = &[
    "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "opt", "proc", "root", "sbin",
    "srv", "sys", "usr", "var", "mnt", "media", "snap", "run", "Users", "System", "Library", "Applications",
    "Volumes", "private"
];

/// System directories whose children are the system's too (`/usr/lib`, `/etc/ssh`, `/var/lib`): removing one
/// recursively destroys the system.
#[rustfmt::skip]
pub(crate) static CORE_SYSTEM_DIRS: &[&str] = &[
    "bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "root", "sbin", "sys", "usr", "var",
    "System", "Library", "private"
];

/// Files a redirection may write without writing anything that persists.
#[rustfmt::skip]
pub(crate) static HARMLESS_TARGETS: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/stdin", "/dev/zero", "/dev/full"];

/// Device name prefixes (under `/dev/`) that are raw disks or memory: writing them destroys data.
#[rustfmt::skip]
pub(crate) static RAW_DEVICES: &[&str] = &[
    "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "loop", "md", "dm-", "mapper/", "sr", "mem",
    "kmem", "port", "fd0", "nbd", "zd", "bcache", "root",
];

/// Variables the shell itself keeps as numbers: a value from the environment does not survive into them, so
/// arithmetic may read them (checked against bash 5.2; `UID`, `EUID`, `COLUMNS` and `LINES` do take a value from
/// the environment and are not here). A line that assigns or unsets one makes it an ordinary variable.
pub(crate) static NUMERIC_VARIABLES: &[&str] = &[
    "RANDOM",
    "SRANDOM",
    "SECONDS",
    "LINENO",
    "BASHPID",
    "EPOCHSECONDS",
    "PPID",
    "BASH_SUBSHELL",
    "SHLVL",
    "HISTCMD",
    "OPTIND",
];

/// Commands that print only a number with these exact options (and up to that many integer operands), so their
/// output may be evaluated as arithmetic: `$(( $(nproc) * 2 ))`, `n=$(wc -l < f)`, `for i in $(seq 1 5)`.
/// `wc` with a file operand is not here: it prints the file name too, which arithmetic would evaluate.
pub(crate) static NUMERIC_OUTPUT: &[(&str, &[&str], usize)] = &[
    ("nproc", &["--all"], 0),
    ("wc", &["-l", "-c", "-w", "-m"], 0),
    ("date", &["+%s"], 0),
    ("id", &["-u", "-g", "-r"], 0),
    ("seq", &[], 3),
];

/// Commands that declare variables and may give them attributes (`declare -i`).
pub(crate) static DECLARES_VARIABLES: &[&str] = &["declare", "typeset", "local", "export", "readonly"];

/// Variables whose value changes which code later commands run (or how they run): setting one is a safety ask.
/// A trailing `*` matches a prefix.
#[rustfmt::skip]
pub(crate) static CODE_VARIABLES: &[&str] = &[
    "PATH", "LD_*", "DYLD_*", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS0", "PS1", "PS4", "IFS", "SHELLOPTS",
    "BASHOPTS", "BASH_FUNC_*", "BASH_LOADABLES_PATH", "GLOBIGNORE", "GIT_EXTERNAL_DIFF", "GIT_PAGER",
    "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "GIT_CONFIG*", "GIT_DIR",
    "GIT_WORK_TREE", "GIT_EXEC_PATH", "GIT_PROXY_COMMAND", "GIT_TEMPLATE_DIR", "PAGER", "MANPAGER",
    "SYSTEMD_PAGER", "EDITOR", "VISUAL", "LESSOPEN", "LESSCLOSE", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME",
    "PYTHONINSPECT", "NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB",
    "BROWSER", "SSH_ASKPASS", "SUDO_ASKPASS", "RIPGREP_CONFIG_PATH", "AWKPATH", "AWKLIBPATH", "TAR_OPTIONS",
    "GREP_OPTIONS", "RUSTC_WRAPPER", "CARGO_BUILD_RUSTC_WRAPPER", "RUSTC", "CC", "CXX", "MAKEFLAGS",
    "NPM_CONFIG_*", "npm_config_*", "ZDOTDIR", "HISTFILE", "TMPDIR", "HOME", "BASH_CMDS", "BASH_ALIASES",
    "EXECIGNORE"
];

/// Variables a command's environment may set without changing what a read-only command runs, reads or writes:
/// locale, time zone, terminal size and colours, output formats, and a few of git's that only name an author or
/// turn a prompt or lock off. A trailing `*` matches a prefix. Every other variable set for a command (`NAME=value
/// cmd`, `env NAME=value cmd`, `export NAME`, under `set -a`) makes it not read-only: allow-listed, never
/// deny-listed, because families of variables make programs load code or configuration (`GIT_*`, `PYTHON*`,
/// `*_OPTIONS`, `XDG_*`, editors, pagers).
#[rustfmt::skip]
pub(crate) static HARMLESS_VARIABLES: &[&str] = &[
    "LANG", "LANGUAGE", "LC_*", "TZ", "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "CLICOLOR",
    "CLICOLOR_FORCE", "COLUMNS", "LINES", "LS_COLORS", "LSCOLORS", "GREP_COLOR", "GREP_COLORS", "TIME_STYLE",
    "QUOTING_STYLE", "BLOCK_SIZE", "BLOCKSIZE", "DF_BLOCK_SIZE", "DU_BLOCK_SIZE", "LS_BLOCK_SIZE",
    "POSIXLY_CORRECT", "IFS", "GIT_TERMINAL_PROMPT", "GIT_OPTIONAL_LOCKS", "GIT_FLUSH", "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
    "GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS",
    "GIT_NO_REPLACE_OBJECTS", "GIT_ADVICE", "RUST_BACKTRACE", "RUST_LOG", "CARGO_TERM_COLOR",
    "CARGO_TERM_VERBOSE", "CARGO_TERM_QUIET", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONIOENCODING",
    "PYTHONHASHSEED", "NODE_ENV", "CI"
];

/// Variables that are harmless with these values only: a trace to standard error, a toolchain kept local. (A
/// pager is harmless when it only prints: `cat`, or `less`/`more` with letter options.)
#[rustfmt::skip]
pub(crate) static HARMLESS_VALUES: &[(&str, &[&str])] = &[
    ("GIT_TRACE*", &["", "0", "1", "2", "true", "false"]),
    ("GOTOOLCHAIN", &["local"]),
    ("GOWORK", &["off"]),
    ("CARGO_NET_OFFLINE", &["true", "1"]),
];

/// Variables that choose a pager.
#[rustfmt::skip]
pub(crate) static PAGER_VARIABLES: &[&str] = &["PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "BAT_PAGER", "AWS_PAGER"];

/// Pagers that only print when their output is not a terminal, or at all (`cat`).
#[rustfmt::skip]
pub(crate) static HARMLESS_PAGERS: &[&str] = &["", "cat", "less", "more", "most"];

/// Families of variables the environment may already export, whose value makes programs load code or
/// configuration: assigning one, even without `export`, may change what every later command runs. A trailing
/// `*` matches a prefix, a leading one a suffix.
#[rustfmt::skip]
pub(crate) static ENVIRONMENT_FAMILIES: &[&str] = &[
    "GIT_*", "XDG_*", "*_HOME", "RUSTUP_*", "CARGO_*", "RUSTC*", "RUSTDOC*", "RUSTFLAGS", "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "MAVEN_*", "GRADLE_*", "NODE_*", "NPM_*", "npm_*", "YARN_*", "PYTHON*",
    "PIP_*", "VIRTUAL_ENV", "PERL*", "RUBY*", "GEM_*", "BUNDLE_*", "LD_*", "DYLD_*", "BASH_*", "ENV", "EDITOR",
    "VISUAL", "*PAGER", "LESS*", "BROWSER", "GO*", "CGO_*", "*_OPTIONS", "*_OPTS", "CDPATH"
];

/// How many words a brace expansion, or numbers a `seq`, may make before the line asks: bash builds every word
/// in memory first.
pub(crate) const MAX_GENERATED_WORDS: u64 = 100_000;

/// The longest wait (`sleep`) or field (`printf '%*s'`) that is not taken as without end: ten minutes of waiting
/// (the longest a coding agent's shell call runs), ten million characters of padding.
pub(crate) const MAX_SLEEP_SECONDS: f64 = 600.0;
pub(crate) const MAX_PRINTF_WIDTH: u64 = 10_000_000;

/// The most digits of a number `factor` is given before the line asks: up to 64 bits it is immediate, past that the
/// time to factor a product of two large primes grows without practical bound.
pub(crate) const MAX_FACTOR_DIGITS: usize = 19;

/// Devices that never end when read (`cat /dev/zero`).
#[rustfmt::skip]
pub(crate) static ENDLESS_DEVICES: &[&str] = &["/dev/zero", "/dev/urandom", "/dev/random"];

/// Commands that stop reading by themselves (`head -c 10 /dev/urandom`).
#[rustfmt::skip]
pub(crate) static BOUNDED_READERS: &[&str] = &["head", "dd"];

/// Commands that print whole lines of their standard input, some of them or in another order, and nothing else,
/// with these options only: what they print of a lister's output (`rg -l X src | grep -v test |`) is still names
/// of the files it found. Per command: its names, its one-letter options (combinable), its long options, and its
/// options that take a value (`-e PATTERN`, `-n 5`). Any other option (`grep -o`, `-n` line numbers, `-c`,
/// `rg --replace`, `uniq -c`, `sort -o`) prints something else.
#[rustfmt::skip]
pub(crate) static LINE_SELECTORS: &[LineSelector] = &[
    LineSelector {
        names: &["grep", "egrep", "fgrep", "rg"],
        options: &["-v", "-i", "-E", "-F", "-P", "-w", "-x", "-s", "-q", "-e", "-m", "--invert-match",
            "--ignore-case", "--extended-regexp", "--fixed-strings", "--perl-regexp", "--word-regexp",
            "--line-regexp", "--no-messages", "--quiet", "--silent", "--smart-case", "--regexp", "--max-count"],
        counts: false,
        pattern: true,
        narrows: true,
    },
    LineSelector { names: &["head", "tail"], options: &["-n", "--lines"], counts: true, pattern: false, narrows: true },
    LineSelector {
        names: &["sort"],
        options: &["-u", "-r", "-n", "-V", "-f", "-h", "-s", "-b", "-d", "-g", "--unique", "--reverse",
            "--numeric-sort", "--version-sort", "--ignore-case", "--human-numeric-sort", "--stable"],
        counts: false,
        pattern: false,
        narrows: false,
    },
    LineSelector {
        names: &["uniq"],
        options: &["-u", "-d", "-i", "--unique", "--repeated", "--ignore-case"],
        counts: false,
        pattern: false,
        narrows: false,
    },
];

/// `grep -l`/`rg -l` (and `-L`) print the names of the files among their operands that match, and nothing else,
/// with these options only: after `xargs` fed the names a walk found, what they print are names found too
/// (`find src -name '*.ts' | xargs grep -l X | while read -r f`). A `--label`, `-o` or `-c` prints something else;
/// an operand beside the pattern adds a file of its own.
#[rustfmt::skip]
pub(crate) static NAME_PRINTERS: LineSelector = LineSelector {
    names: &["grep", "egrep", "fgrep", "rg"],
    options: &["-l", "-L", "-i", "-E", "-F", "-P", "-w", "-x", "-s", "-r", "-R", "-H", "-v", "-n", "-e", "-m",
        "-g", "-t", "--files-with-matches", "--files-without-match", "--ignore-case", "--extended-regexp",
        "--fixed-strings", "--perl-regexp", "--word-regexp", "--line-regexp", "--no-messages", "--recursive",
        "--invert-match", "--smart-case", "--hidden", "--regexp", "--max-count", "--glob", "--type", "--include",
        "--exclude"],
    counts: false,
    pattern: true,
    narrows: true,
};

/// The options of [`NAME_PRINTERS`] that make them print names alone.
pub(crate) static NAMES_ONLY: &[&str] = &["-l", "-L", "--files-with-matches", "--files-without-match"];

/// One command of [`LINE_SELECTORS`] or [`NAME_PRINTERS`], its options read by its own syntax.
pub(crate) struct LineSelector {
    pub(crate) names: &'static [&'static str],
    /// The options it may be given (a value taken by the command's syntax, `-e PATTERN`, `-n 5`).
    pub(crate) options: &'static [&'static str],
    /// A count may be written as an option (`head -5`).
    pub(crate) counts: bool,
    /// Its first operand is a pattern (when no `-e` gives one); any other operand is a file it reads instead.
    pub(crate) pattern: bool,
    /// It may leave lines out: what it prints is not every name found.
    pub(crate) narrows: bool,
}

/// Git options (before the sub-command).
#[rustfmt::skip]
pub(crate) static GIT_GLOBAL_VALUES: &[&str] = &[
    "-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "-c", "--config-env", "--list-cmds",
    "--attr-source"
];
#[rustfmt::skip]
pub(crate) static GIT_GLOBAL_FLAGS: &[&str] = &[
    "-p", "--paginate", "-P", "--no-pager", "--bare", "--no-replace-objects", "--literal-pathspecs",
    "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--no-advice",
    "--version", "--help", "-v", "-h", "--html-path", "--man-path", "--info-path"
];
#[rustfmt::skip]
pub(crate) static GIT_GLOBAL_EFFECTS: &[(&str, Effect)] = &[
    ("-p", HiddenExec("`git -p` runs the pager program from configuration")),
    (
        "--paginate",
        HiddenExec("`git --paginate` runs the pager program from configuration"),
    ),
    (
        "-c",
        HiddenExec("`git -c` sets configuration that can run programs (core.pager, core.fsmonitor, …)"),
    ),
    (
        "--config-env",
        HiddenExec("`git --config-env` sets configuration that can run programs"),
    ),
    (
        "--exec-path",
        HiddenExec("`git --exec-path` runs git programs from another directory"),
    ),
];

/// Git sub-command options that write or run programs, whatever the sub-command.
#[rustfmt::skip]
pub(crate) static GIT_EFFECTS: &[(&str, Effect)] = &[
    ("--output", WriteValue),
    // `git blame --contents FILE`, `--ignore-revs-file FILE`, `git config --file FILE`, `git grep -f FILE`.
    ("--contents", ReadValue),
    ("--ignore-revs-file", ReadValue),
    ("--file", ReadValue),
    ("-f", ReadValue),
    // `git diff -O FILE`, `git log -O FILE`: the order of the files comes from FILE (for `git grep`, `-O` also
    // runs a pager, `GIT_GREP_PAGER`).
    ("-O", ReadValue),
    ("--remote", Network("`--remote` reaches another repository")),
    (
        "--ext-diff",
        HiddenExec("`git --ext-diff` runs the external diff program from configuration"),
    ),
    ("--exec", HiddenExec("`--exec` runs a program")),
    ("--upload-pack", HiddenExec("`--upload-pack` runs a program")),
    ("--receive-pack", HiddenExec("`--receive-pack` runs a program")),
    ("--text", Distinct),
    ("--filter", Distinct),
    (
        "--textconv",
        HiddenExec("`--textconv` runs the text conversion programs from configuration"),
    ),
    (
        "--filters",
        HiddenExec("`git cat-file --filters` runs the filter programs from configuration"),
    ),
    (
        "--show-signature",
        HiddenExec("`--show-signature` runs the signature program from configuration"),
    ),
];
/// The options of the sub-commands whose options differ from the common ones (`GIT_VALUES`, `GIT_EFFECTS`): the
/// options that take a value in their stead, those whose value may only be attached, and effects besides the
/// common ones.
#[derive(Debug)]
pub(crate) struct GitOptions {
    pub(crate) values: &'static [&'static str],
    pub(crate) optional: &'static [&'static str],
    pub(crate) effects: &'static [(&'static str, Effect)],
}

#[rustfmt::skip]
pub(crate) static GIT_SUB_OPTIONS: &[(&str, GitOptions)] = &[
    // `-X FILE`/`--exclude-from FILE` read exclude patterns from FILE.
    ("ls-files", GitOptions {
        values: &["-x", "--exclude", "-X", "--exclude-from", "--exclude-per-directory", "--with-tree", "--format"],
        optional: &["--abbrev"],
        effects: &[("-X", ReadValue), ("--exclude-from", ReadValue)],
    }),
    // `-S REVS_FILE` reads the revisions from a file; `-C`, `-M` and `--abbrev` take an attached number only.
    ("blame", GitOptions {
        values: &["-L", "-S", "--contents", "--ignore-rev", "--ignore-revs-file", "--date", "--encoding"],
        optional: &["-C", "-M", "--abbrev"],
        effects: &[("-S", ReadValue)],
    }),
    // `git grep -n` numbers lines (no value), `-O[PAGER]` takes an attached pager only (`GIT_GREP_PAGER`).
    ("grep", GitOptions {
        values: &[
            "-e", "-f", "-A", "-B", "-C", "--context", "--after-context", "--before-context", "--max-depth",
            "--threads", "-m", "--max-count"
        ],
        optional: &["-O", "--open-files-in-pager", "--color"],
        effects: &[],
    }),
    // `git fast-export` and `fast-import` save their marks to a file (`--export-marks FILE`, and `fast-import`'s
    // `--export-pack-edges FILE`) and read them from one.
    ("fast-export", GitOptions {
        values: &[
            "--export-marks", "--import-marks", "--import-marks-if-exists", "--signed-tags", "--signed-commits",
            "--tag-of-filtered-object", "--refspec", "--anonymize-map", "--reencode"
        ],
        optional: &[],
        effects: &[
            ("--export-marks", WriteValue), ("--import-marks", ReadValue), ("--import-marks-if-exists", ReadValue),
        ],
    }),
    ("fast-import", GitOptions {
        values: &[
            "--export-marks", "--import-marks", "--import-marks-if-exists", "--export-pack-edges", "--cat-blob-fd",
            "--date-format", "--active-branches", "--max-pack-size", "--big-file-threshold", "--depth",
            "--rewrite-submodules-from", "--rewrite-submodules-to", "--signed-commits", "--signed-tags"
        ],
        optional: &[],
        effects: &[
            ("--export-marks", WriteValue), ("--export-pack-edges", WriteValue), ("--import-marks", ReadValue),
            ("--import-marks-if-exists", ReadValue),
        ],
    }),
    // `git checkout-index --prefix=DIR/` writes the files it checks out below DIR (the value is attached only).
    ("checkout-index", GitOptions {
        values: &[],
        optional: &["--prefix", "--stage"],
        effects: &[("--prefix", WriteValue)],
    }),
    // `git help -w` starts the web browser the configuration names (`web.browser`, `browser.<tool>.cmd`), `-i`
    // runs info; `-m` and a page alone print the manual page.
    ("help", GitOptions {
        values: &[],
        optional: &[],
        effects: &[
            ("-w", HiddenExec("`git help -w` starts the web browser from configuration")),
            ("--web", HiddenExec("`git help --web` starts the web browser from configuration")),
            ("-i", NotReadOnly("`git help -i` runs info")),
            ("--info", NotReadOnly("`git help --info` runs info")),
        ],
    }),
    // `git tag -v` verifies signatures with the program from configuration (`gpg.program`). A message (`-m MSG`)
    // is a value, not an operand; `-F FILE` reads the message from FILE.
    ("tag", GitOptions {
        values: &[
            "-m", "--message", "-F", "--file", "-u", "--local-user", "--cleanup", "--contains", "--no-contains",
            "--merged", "--no-merged", "--points-at", "--sort", "--format", "-n"
        ],
        optional: GIT_OPTIONAL,
        effects: &[
            ("-v", HiddenExec("`git tag -v` runs the signature program from configuration")),
            ("--verify", HiddenExec("`git tag --verify` runs the signature program from configuration")),
            ("-F", ReadValue),
        ],
    }),
    // The sub-commands that take a message: the message (`git commit -m "feat: …"`) is a value, never an operand
    // (which `REV:PATH` would read as a file in history); `-F FILE`, `-t FILE` and `--pathspec-from-file FILE`
    // read FILE.
    ("commit", GitOptions {
        values: &[
            "-m", "--message", "-F", "--file", "-C", "--reuse-message", "-c", "--reedit-message", "--fixup",
            "--squash", "--author", "--date", "-t", "--template", "--cleanup", "--trailer", "--pathspec-from-file"
        ],
        optional: &["-S", "--gpg-sign", "-u", "--untracked-files"],
        effects: &[
            ("-F", ReadValue), ("-t", ReadValue), ("--template", ReadValue), ("--pathspec-from-file", ReadValue),
        ],
    }),
    ("merge", GitOptions {
        values: &[
            "-m", "--message", "-F", "--file", "-s", "--strategy", "-X", "--strategy-option", "--cleanup",
            "--into-name"
        ],
        optional: &["-S", "--gpg-sign", "--log"],
        effects: &[("-F", ReadValue)],
    }),
    ("stash", GitOptions {
        values: &["-m", "--message", "--pathspec-from-file"],
        optional: &[],
        effects: &[("--pathspec-from-file", ReadValue)],
    }),
    ("notes", GitOptions {
        values: &["-m", "--message", "-F", "--file", "-C", "--reuse-message", "-c", "--reedit-message", "--ref"],
        optional: &[],
        effects: &[("-F", ReadValue)],
    }),
    // `git clone -b NAME URL DIR`: the values before the operands; the directory is written (`classify::git`).
    ("clone", GitOptions {
        values: &[
            "-b", "--branch", "-o", "--origin", "--depth", "-c", "--config", "--reference", "--reference-if-able",
            "--separate-git-dir", "--template", "-u", "--upload-pack", "-j", "--jobs", "--filter",
            "--shallow-since", "--shallow-exclude", "--server-option", "--bundle-uri", "--revision"
        ],
        optional: &[],
        effects: &[
            ("--separate-git-dir", WriteValue), ("--template", ReadValue), ("--reference", ReadValue),
            ("--reference-if-able", ReadValue),
            ("-c", HiddenExec("`git clone -c` sets configuration, which may name programs to run")),
            ("--config", HiddenExec("`git clone --config` sets configuration, which may name programs to run")),
        ],
    }),
    ("init", GitOptions {
        values: &["--template", "--separate-git-dir", "-b", "--initial-branch", "--object-format", "--ref-format"],
        optional: &["--shared"],
        effects: &[("--separate-git-dir", WriteValue), ("--template", ReadValue)],
    }),
    // `git archive -o FILE`, `git format-patch -o DIR`: what they write.
    ("archive", GitOptions {
        values: &[
            "-o", "--output", "--format", "--prefix", "--remote", "--exec", "--add-file", "--add-virtual-file",
            "--mtime"
        ],
        optional: &[],
        effects: &[("-o", WriteValue), ("--add-file", ReadValue)],
    }),
    ("format-patch", GitOptions {
        values: &[
            "-o", "--output-directory", "--subject-prefix", "--in-reply-to", "--to", "--cc", "--from",
            "--signature", "--signature-file", "--suffix", "--start-number", "-v", "--reroll-count", "--base",
            "--interdiff", "--range-diff", "--creation-factor", "--add-header", "--cover-from-description",
            "--filename-max-length", "--output", "--format"
        ],
        optional: &[],
        effects: &[("-o", WriteValue), ("--output-directory", WriteValue), ("--signature-file", ReadValue)],
    }),
    // `git checkout -b NAME START`: the new branch is a value, not a path to take from START.
    ("checkout", GitOptions {
        values: &["-b", "-B", "--orphan", "--conflict", "--pathspec-from-file"],
        optional: &[],
        effects: &[("--pathspec-from-file", ReadValue)],
    }),
    // `git worktree add -b NAME PATH`: the branch is a value, the path an operand.
    ("worktree", GitOptions {
        values: &["-b", "-B", "--reason", "--expire"],
        optional: &[],
        effects: &[],
    }),
];

/// `git worktree` sub-commands and the operands each writes (from the second on): `add PATH`, `move OLD NEW`,
/// `remove PATH`, `repair PATH…` make, move, delete or rewrite a working tree at those places.
#[rustfmt::skip]
pub(crate) static GIT_WORKTREE_WRITES: &[(&str, Option<usize>)] = &[
    ("add", Some(1)), ("move", None), ("remove", None), ("repair", None),
];

/// `git grep` options that run a pager program (for `diff`, `log` and `show`, `-O` names an order file).
#[rustfmt::skip]
pub(crate) static GIT_GREP_PAGER: &[&str] = &["-O", "--open-files-in-pager"];
/// Options whose value is a pretty format: `%G…` placeholders verify signatures with a program.
#[rustfmt::skip]
pub(crate) static GIT_FORMATS: &[&str] = &["--format", "--pretty"];
/// Git options before the sub-command whose value is a directory it reads.
#[rustfmt::skip]
pub(crate) static GIT_GLOBAL_DIRS: &[&str] = &["-C", "--git-dir", "--work-tree"];
#[rustfmt::skip]
pub(crate) static GIT_VALUES: &[&str] = &[
    "--output", "--format", "-n", "--max-count", "--skip", "--since", "--until", "--after", "--before",
    "--author", "--committer", "--grep", "-S", "-G", "-L", "--date", "--encoding", "-e", "-f", "--exec",
    "--upload-pack", "--receive-pack", "-O", "--open-files-in-pager", "--contains", "--no-contains", "--merged",
    "--no-merged", "--points-at", "--sort", "--diff-filter", "--contents", "--ignore-rev", "--ignore-revs-file",
    "--file", "--blob", "--remote"
];
/// Git options whose value can only be attached (`--stat[=WIDTH]`, `-M[N]`, `--abbrev[=N]`, `-U[N]`): the next
/// word is another option or an operand (`git log --abbrev --ext-diff` runs the external diff program).
#[rustfmt::skip]
pub(crate) static GIT_OPTIONAL: &[&str] = &[
    "--pretty", "-U", "--unified", "--abbrev", "--color", "-M", "-C", "--relative", "--stat", "--find-renames",
    "--find-copies", "--dirstat", "-X", "--word-diff", "--word-diff-regex", "--color-moved", "--submodule",
    "--ignore-submodules", "--decorate", "--notes", "--show-notes"
];

/// How a git sub-command is read-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GitRule {
    /// Read-only with any operands.
    Always,
    /// Read-only when listing: no operands, or a listing option present, and no option from the list.
    Listing {
        list_flags: &'static [&'static str],
        write_flags: &'static [&'static str],
    },
    /// Read-only when the first operand is one of `subs` (or there is none, if `bare` is true); one of
    /// `network` reaches another repository.
    Sub {
        subs: &'static [&'static str],
        bare: bool,
        network: &'static [&'static str],
    },
    /// `git config`: read-only with a reading option or sub-command.
    Config,
    /// `git var`: read-only; `-l` also prints every configuration variable, as `git config -l` does.
    Var,
    /// Reaches another repository over the network (`git fetch`, `git ls-remote`).
    Network,
    /// Runs a program from configuration, for this reason (`git verify-commit` runs `gpg.program`).
    Runs(&'static str),
}

#[rustfmt::skip]
/// git sub-commands that change another repository: what no local sandbox can undo.
pub(crate) const GIT_REMOTE_WRITES: &[&str] = &["push", "send-email", "svn"];

pub(crate) static GIT_SUBCOMMANDS: &[(&str, GitRule)] = &[
    ("status", GitRule::Always),
    ("log", GitRule::Always),
    ("diff", GitRule::Always),
    ("show", GitRule::Always),
    ("rev-parse", GitRule::Always),
    ("ls-files", GitRule::Always),
    ("ls-tree", GitRule::Always),
    ("blame", GitRule::Always),
    ("annotate", GitRule::Always),
    ("describe", GitRule::Always),
    ("shortlog", GitRule::Always),
    ("cat-file", GitRule::Always),
    ("rev-list", GitRule::Always),
    ("merge-base", GitRule::Always),
    ("name-rev", GitRule::Always),
    ("show-ref", GitRule::Always),
    ("for-each-ref", GitRule::Always),
    ("count-objects", GitRule::Always),
    ("check-ignore", GitRule::Always),
    ("check-attr", GitRule::Always),
    ("var", GitRule::Var),
    ("version", GitRule::Always),
    ("help", GitRule::Always),
    ("grep", GitRule::Always),
    ("whatchanged", GitRule::Always),
    ("cherry", GitRule::Always),
    ("diff-tree", GitRule::Always),
    ("diff-files", GitRule::Always),
    ("diff-index", GitRule::Always),
    ("show-branch", GitRule::Always),
    ("range-diff", GitRule::Always),
    // Verifying a signature runs the program of `gpg.program` (or `gpg.ssh.program`, `gpg.x509.program`).
    (
        "verify-commit",
        GitRule::Runs("`git verify-commit` runs the signature program from configuration"),
    ),
    (
        "verify-tag",
        GitRule::Runs("`git verify-tag` runs the signature program from configuration"),
    ),
    (
        "branch",
        GitRule::Listing {
            list_flags: &[
                "--list",
                "-l",
                "--contains",
                "--no-contains",
                "--merged",
                "--no-merged",
                "--points-at",
                "--show-current",
            ],
            write_flags: &[
                "-d",
                "-D",
                "-m",
                "-M",
                "-c",
                "-C",
                "-f",
                "-u",
                "--delete",
                "--move",
                "--copy",
                "--force",
                "--set-upstream-to",
                "--unset-upstream",
                "--edit-description",
                "--track",
                "--no-track",
            ],
        },
    ),
    (
        "tag",
        GitRule::Listing {
            list_flags: &[
                "--list",
                "-l",
                "--contains",
                "--no-contains",
                "--merged",
                "--no-merged",
                "--points-at",
            ],
            write_flags: &[
                "-d",
                "-a",
                "-s",
                "-f",
                "-m",
                "-F",
                "-u",
                "--delete",
                "--annotate",
                "--sign",
                "--force",
                "--message",
                "--file",
                "--local-user",
                "--edit",
            ],
        },
    ),
    (
        "remote",
        GitRule::Sub {
            subs: &["show", "get-url"],
            bare: true,
            network: &["update", "prune", "set-head"],
        },
    ),
    (
        "stash",
        GitRule::Sub {
            subs: &["list", "show"],
            bare: false,
            network: &[],
        },
    ),
    (
        "worktree",
        GitRule::Sub {
            subs: &["list"],
            bare: false,
            network: &[],
        },
    ),
    (
        "reflog",
        GitRule::Sub {
            subs: &["show"],
            bare: true,
            network: &[],
        },
    ),
    (
        "notes",
        GitRule::Sub {
            subs: &["list", "show"],
            bare: true,
            network: &[],
        },
    ),
    (
        "submodule",
        GitRule::Sub {
            subs: &["status", "summary"],
            bare: true,
            network: &["update", "add", "sync"],
        },
    ),
    (
        "sparse-checkout",
        GitRule::Sub {
            subs: &["list"],
            bare: false,
            network: &[],
        },
    ),
    ("config", GitRule::Config),
    ("ls-remote", GitRule::Network),
    ("fetch", GitRule::Network),
    ("pull", GitRule::Network),
    ("clone", GitRule::Network),
    ("fetch-pack", GitRule::Network),
];
#[rustfmt::skip]
pub(crate) static GIT_CONFIG_READ: &[&str] = &[
    "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color", "--get-colorbool"
];
#[rustfmt::skip]
pub(crate) static GIT_CONFIG_WRITE: &[&str] = &[
    "--unset", "--unset-all", "--add", "--replace-all", "--edit", "-e", "--rename-section", "--remove-section",
];
#[rustfmt::skip]
pub(crate) static GIT_CONFIG_READ_SUBS: &[&str] = &["get", "list"];

/// find primaries that take one value (`-fprintf` takes two).
#[rustfmt::skip]
pub(crate) static FIND_VALUES: &[&str] = &[
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-type", "-xtype",
    "-size", "-perm", "-user", "-group", "-uid", "-gid", "-mtime", "-mmin", "-atime", "-amin", "-ctime",
    "-cmin", "-newer", "-anewer", "-cnewer", "-samefile", "-links", "-inum", "-maxdepth", "-mindepth",
    "-fstype", "-context", "-used", "-printf", "-regextype", "-lname", "-ilname", "-files0-from", "-fprint",
    "-fprint0", "-fls"
];
/// find primaries with a value that select nothing by themselves.
#[rustfmt::skip]
pub(crate) static FIND_UNFILTERED: &[&str] = &["-maxdepth", "-mindepth", "-regextype", "-files0-from", "-printf"];
/// find tests without a value.
#[rustfmt::skip]
pub(crate) static FIND_TESTS: &[&str] =
    &["-empty", "-nouser", "-nogroup", "-readable", "-writable", "-executable", "-true", "-false"];
/// find primaries that run a command given in the following words, up to `;` or `+`.
#[rustfmt::skip]
pub(crate) static FIND_EXEC: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];
/// find primaries whose value is a file written.
#[rustfmt::skip]
pub(crate) static FIND_WRITES: &[&str] = &["-fprint", "-fprint0", "-fls", "-fprintf"];

/// `openssl` sub-commands that connect to or listen on the network.
#[rustfmt::skip]
pub(crate) static OPENSSL_NETWORK: &[&str] = &["s_client", "s_server", "s_time", "ocsp"];
/// `openssl` options whose value is a file it reads (`-in KEY`, `-inkey`, `-CAfile`, `-config`, `-passin
/// file:PATH`) or writes (`-out`, `-keyout`, `-outdir`).
#[rustfmt::skip]
pub(crate) static OPENSSL_READS: &[&str] = &[
    "-in", "-inkey", "-key", "-cert", "-certfile", "-CAfile", "-CA", "-CAkey", "-signkey", "-config", "-extfile",
    "-verify", "-prverify", "-signature", "-kfile", "-peerkey", "-untrusted", "-chain", "-crl", "-CRL",
    "-sigfile", "-paramfile", "-dhparam", "-inform-file",
];
#[rustfmt::skip]
pub(crate) static OPENSSL_WRITES: &[&str] = &["-out", "-keyout", "-outdir", "-sigout"];
/// `openssl` options that load a shared library (an engine, a provider), code the analysis cannot see.
#[rustfmt::skip]
pub(crate) static OPENSSL_LOADS: &[&str] = &["-engine", "-provider", "-provider-path", "-keygen_engine"];

/// `systemctl` verbs that stop the machine.
#[rustfmt::skip]
pub(crate) static SYSTEMCTL_STOPS: &[&str] = &["poweroff", "reboot", "halt", "kexec", "emergency", "rescue", "suspend", "hibernate", "soft-reboot"];
/// `systemctl` verbs that only read.
#[rustfmt::skip]
pub(crate) static SYSTEMCTL_READS: &[&str] = &[
    "status", "show", "list-units", "list-unit-files", "list-timers", "list-sockets", "is-active",
    "is-enabled", "is-failed", "cat", "help", "--version"
];

/// Options that only print the version or help of a program, run nothing else.
#[rustfmt::skip]
pub(crate) static VERSION_FLAGS: &[&str] = &["--version", "--help"];

/// sed: scripts with `-e`, files of script with `-f`, in-place editing with an optional attached suffix (`-i.bak`;
/// the BSD and macOS `-I` edits in place too).
#[rustfmt::skip]
pub(crate) static SED: Syntax = Syntax {
    values: &["-e", "-f", "-l", "--expression", "--file", "--line-length"],
    optional: &["-i", "-I", "--in-place"],
    flags: &[
        "-n", "-E", "-r", "-s", "-u", "-z", "--quiet", "--silent", "--debug", "--posix", "--regexp-extended",
        "--separate", "--sandbox", "--unbuffered", "--null-data", "--zero-terminated", "--follow-symlinks",
        "--help", "--version"
    ],
    ..GNU
};

/// awk (gawk, mawk, busybox): `-W NAME[=VALUE]` spells `--NAME[=VALUE]`.
#[rustfmt::skip]
pub(crate) static AWK: Syntax = Syntax {
    values: &[
        "-F", "-v", "-f", "-e", "-E", "-i", "-l", "-W", "--field-separator", "--assign", "--file", "--source",
        "--exec", "--include", "--load"
    ],
    optional: &[
        "-d", "-D", "-o", "-p", "-L", "--dump-variables", "--debug", "--pretty-print", "--profile", "--lint"
    ],
    flags: &[
        "-b", "-c", "-C", "-g", "-h", "-M", "-n", "-N", "-O", "-P", "-r", "-s", "-S", "-t", "-V",
        "--characters-as-bytes", "--traditional", "--copyright", "--gen-pot", "--help", "--no-optimize",
        "--optimize", "--posix", "--re-interval", "--sandbox", "--use-lc-numeric", "--version", "--bignum",
        "--csv", "--non-decimal-data", "--persist", "--lint-old"
    ],
    // gawk and mawk stop at the program text, busybox's awk does not: an option after it is read as one.
    ..GNU
};

/// jq: `--arg NAME VALUE` and its kin take two words (for `--slurpfile`, `--rawfile` and jq 1.6's `--argfile`
/// the second is a file read); jq takes no abbreviations, so an abbreviation here only ever makes a reading stricter.
#[rustfmt::skip]
pub(crate) static JQ: Syntax = Syntax {
    values: &["-f", "--from-file", "--indent", "-L", "--library-path"],
    pairs: &["--arg", "--argjson", "--slurpfile", "--rawfile", "--argfile"],
    flags: &[
        "-n", "-r", "-j", "-a", "-s", "-c", "-C", "-M", "-S", "-e", "-R", "-h", "-V", "--null-input",
        "--raw-input", "--slurp", "--compact-output", "--tab", "--color-output", "--monochrome-output",
        "--ascii-output", "--unbuffered", "--sort-keys", "--raw-output", "--raw-output0", "--join-output",
        "--exit-status", "--seq", "--stream", "--stream-errors", "--args", "--jsonargs", "--help", "--version"
    ],
    ..GNU
};

/// find's options before its starting points.
#[rustfmt::skip]
pub(crate) static FIND_START: Syntax = Syntax {
    values: &["-D"],
    flags: &["-H", "-L", "-P"],
    posix: true,
    single_dash: true,
    ..GNU
};

/// find's expression: primaries are whole words; `-fprintf` takes a file and a format. `-files0-from FILE` reads
/// the starting points from FILE (and prints each name it cannot find, so FILE's content, in its errors); the
/// other primaries that name a file (`-newer`, `-anewer`, `-cnewer`, `-newerXY`, `-samefile`) only look at its
/// metadata, as `stat` would.
#[rustfmt::skip]
pub(crate) static FIND_EXPRESSION: Syntax = Syntax {
    values: FIND_VALUES,
    pairs: &["-fprintf"],
    effects: &[("-files0-from", ListedFiles)],
    single_dash: true,
    ..GNU
};

/// `mktemp [-d] [-u] [-q] [-p DIR|--tmpdir[=DIR]|-t] [--suffix=SUFF] [TEMPLATE]`.
#[rustfmt::skip]
pub(crate) static MKTEMP: Syntax = Syntax {
    values: &["-p", "--suffix"],
    optional: &["--tmpdir"],
    flags: &["-d", "-u", "-q", "-t", "--directory", "--dry-run", "--quiet", "--help", "--version"],
    ..GNU
};

/// `kill [-s SIG | -n NUM | -SIG] PID…` and `kill -l`: the first option-like word is the signal, after it every
/// word is a process (`kill -9 -1`).
#[rustfmt::skip]
pub(crate) static KILL: Syntax = Syntax {
    values: &["-s", "-n"],
    flags: &["-l", "-L", "--list", "--table"],
    posix: true,
    single_dash: true,
    ..GNU
};

/// The options of a shell (`bash -euo pipefail -c CODE`, `sh +x script`); `--rcfile`/`--init-file` name a
/// start-up file it runs.
#[rustfmt::skip]
pub(crate) static SHELL: Syntax = Syntax {
    values: &["-o", "+o", "-O", "+O", "--rcfile", "--init-file"],
    flags: &[
        "-c", "-i", "-l", "-r", "-s", "-D", "-e", "-u", "-x", "-v", "-n", "-f", "-h", "-m", "-p", "-a", "-b",
        "-k", "-t", "-B", "-C", "-E", "-H", "-P", "-T", "--login", "--noediting", "--noprofile", "--norc",
        "--posix", "--restricted", "--verbose", "--version", "--help", "--debugger", "--dump-po-strings",
        "--dump-strings", "--pretty-print"
    ],
    posix: true,
    plus: true,
    ..GNU
};

/// `rm` and `unlink`: `--interactive[=WHEN]` takes its value attached only.
#[rustfmt::skip]
pub(crate) static RM: Syntax = Syntax {
    optional: &["--interactive"],
    flags: &[
        "-r", "-R", "-f", "-i", "-I", "-d", "-v", "--recursive", "--force", "--dir", "--verbose",
        "--no-preserve-root", "--preserve-root", "--one-file-system", "--help", "--version"
    ],
    ..GNU
};

/// Options of `rm` that remove recursively or without asking.
#[rustfmt::skip]
pub(crate) static RM_FORCED: &[&str] = &["-r", "-R", "-f", "--recursive", "--force", "--no-preserve-root"];

/// `chmod`, `chown`, `chgrp`.
#[rustfmt::skip]
pub(crate) static CHMOD: Syntax = Syntax {
    values: &["--from"],
    flags: &[
        "-R", "-c", "-f", "-v", "-h", "-H", "-L", "-P", "--recursive", "--changes", "--silent", "--quiet",
        "--verbose", "--no-dereference", "--dereference", "--preserve-root", "--no-preserve-root", "--help",
        "--version"
    ],
    ..GNU
};

/// Git's own options before the sub-command.
#[rustfmt::skip]
pub(crate) static GIT_GLOBAL: Syntax = Syntax {
    values: GIT_GLOBAL_VALUES,
    flags: GIT_GLOBAL_FLAGS,
    effects: GIT_GLOBAL_EFFECTS,
    posix: true,
    ..GNU
};

/// The options of a git sub-command.
#[rustfmt::skip]
pub(crate) static GIT_SUB: Syntax = Syntax {
    values: GIT_VALUES,
    optional: GIT_OPTIONAL,
    effects: GIT_EFFECTS,
    ..GNU
};

/// `declare`, `typeset`, `local`, `export`, `readonly`: attribute options, `+x` removes one.
#[rustfmt::skip]
pub(crate) static DECLARE: Syntax = Syntax {
    flags: &[
        "-a", "-A", "-f", "-F", "-g", "-i", "-I", "-l", "-n", "-r", "-t", "-u", "-x", "-p", "+a", "+A", "+f",
        "+F", "+g", "+i", "+I", "+l", "+n", "+r", "+t", "+u", "+x"
    ],
    posix: true,
    plus: true,
    ..GNU
};

/// `trap [-lpP] [[CODE] SIGNAL…]`.
#[rustfmt::skip]
pub(crate) static TRAP: Syntax = Syntax {
    flags: &["-l", "-p", "-P"],
    posix: true,
    ..GNU
};

/// `rsync`: the options that take a value (`-e`/`--rsh` name the remote shell program), so that a value written
/// as the next word (`--exclude target`) is not read as a file to copy.
#[rustfmt::skip]
pub(crate) static RSYNC: Syntax = Syntax {
    values: &[
        "-e", "--rsh", "-B", "--block-size", "-T", "--temp-dir", "-f", "--filter", "-M", "--remote-option", "-@",
        "--modify-window", "--backup-dir", "--suffix", "--chmod", "--chown", "--usermap", "--groupmap",
        "--rsync-path", "--max-delete", "--max-size", "--min-size", "--max-alloc", "--partial-dir",
        "--compare-dest", "--copy-dest", "--link-dest", "--compress-choice", "--zc", "--compress-level", "--zl",
        "--skip-compress", "--exclude", "--exclude-from", "--include", "--include-from", "--files-from",
        "--address", "--port", "--sockopts", "--out-format", "--log-file", "--log-file-format", "--password-file",
        "--early-input", "--bwlimit", "--stop-after", "--stop-at", "--write-batch", "--only-write-batch",
        "--read-batch", "--protocol", "--iconv", "--checksum-choice", "--cc", "--checksum-seed", "--timeout",
        "--contimeout", "--info", "--debug", "--stderr", "--outbuf", "--config",
    ],
    ..GNU
};

/// `rsync`'s options whose value is a file it reads (`-` is standard input): the lists of files and patterns,
/// the daemon's password, what it sends a daemon first, a batch it replays.
pub(crate) const RSYNC_READS: &[&str] = &[
    "--exclude-from",
    "--include-from",
    "--files-from",
    "--password-file",
    "--early-input",
    "--read-batch",
];

/// `rsync`'s options whose value is a file it writes: its log and the batches it records.
pub(crate) const RSYNC_WRITES: &[&str] = &["--log-file", "--write-batch", "--only-write-batch"];

/// `scp`'s options that take a value (OpenSSH), so that its operands are found after them.
#[rustfmt::skip]
pub(crate) static SCP: Syntax = Syntax {
    values: &["-c", "-D", "-F", "-i", "-J", "-l", "-o", "-P", "-S", "-X"],
    flags: &["-3", "-4", "-6", "-A", "-B", "-C", "-O", "-p", "-q", "-R", "-r", "-s", "-T", "-v"],
    ..GNU
};

/// `systemctl`'s options with a value, so that the verb is found after them.
#[rustfmt::skip]
pub(crate) static SYSTEMCTL: Syntax = Syntax {
    values: &[
        "-t", "-p", "-H", "-M", "-n", "-o", "-s", "--type", "--property", "--host", "--machine", "--lines",
        "--output", "--signal", "--state", "--root", "--kill-whom", "--kill-value", "--job-mode", "--what",
        "--timestamp", "--boot-loader-entry", "--boot-loader-menu", "--reboot-argument", "--image", "--drop-in",
        "--when", "--message", "--preset-mode", "--check-inhibitors"
    ],
    ..GNU
};

/// Builtins that set the variables named by their operands (and by the options listed with them): their
/// syntax, and the options whose value names a variable (`read -a NAME`, `printf -v NAME`, `wait -p NAME`). Bash
/// evaluates a subscript in such a name as arithmetic (`a[$(cmd)]` runs `cmd`). The other builtins that take
/// names or numbers (`shift`, `exit`, `return`, `break`, `ulimit`, `kill -l`, `read -n`/`-t`/`-u`, `mapfile
/// -O`/`-n`/`-u`, `printf %d`, `test -eq`, `dirs +N`) read their operands as plain numbers, not as arithmetic;
/// `test -v` and the declaring builtins are followed by the walk (`analyze/vars.rs`).
#[rustfmt::skip]
pub(crate) static NAMES_VARIABLES: &[(&str, Syntax, &[&str])] = &[
    ("read", Syntax { values: READ_VALUES, posix: true, ..GNU }, &["-a"]),
    ("mapfile", Syntax { values: MAPFILE_VALUES, posix: true, ..GNU }, &[]),
    ("readarray", Syntax { values: MAPFILE_VALUES, posix: true, ..GNU }, &[]),
    ("getopts", POSIX, &[]),
    ("unset", POSIX, &[]),
    ("printf", Syntax { values: &["-v"], posix: true, ..GNU }, &["-v"]),
    // `wait -p NAME [ID…]` (bash 5.1+) sets NAME to the id of the job that ended; the operands are ids.
    ("wait", Syntax { values: &["-p"], flags: &["-f", "-n"], posix: true, ..GNU }, &["-p"]),
];

/// `tar`: options with a value, and those that run programs, write or read files besides the archive.
#[rustfmt::skip]
pub(crate) static TAR: Syntax = Syntax {
    values: &[
        "-f", "--file", "-C", "--directory", "-I", "--use-compress-program", "--to-command", "--checkpoint-action",
        "-F", "--info-script", "--new-volume-script", "--rsh-command", "--rmt-command", "--index-file", "-g",
        "--listed-incremental", "--volno-file", "-T", "--files-from", "-X", "--exclude-from", "-b",
        "--blocking-factor", "-H", "--format", "-K", "--starting-file", "-N", "--newer", "--after-date", "--owner",
        "--group", "--mode", "--mtime", "--exclude", "-L", "--tape-length", "-V", "--label", "--transform",
        "--xform", "--strip-components", "--suffix", "--warning", "--sort", "--quoting-style", "--record-size",
        "--pax-option", "--hole-detection", "--newer-mtime", "--owner-map", "--group-map"
    ],
    optional: &["--backup", "--checkpoint", "--occurrence", "--atime-preserve", "--one-top-level"],
    effects: &[
        ("-I", HiddenExec("`tar -I` runs a compression program")),
        ("--use-compress-program", HiddenExec("`tar --use-compress-program` runs a program")),
        ("--to-command", HiddenExec("`tar --to-command` runs a program for every member")),
        ("--checkpoint-action", HiddenExec("`tar --checkpoint-action` can run a program")),
        ("-F", HiddenExec("`tar -F` runs a script at the end of every volume")),
        ("--info-script", HiddenExec("`tar --info-script` runs a script")),
        ("--new-volume-script", HiddenExec("`tar --new-volume-script` runs a script")),
        ("--rsh-command", HiddenExec("`tar --rsh-command` runs a remote shell program")),
        ("--rmt-command", HiddenExec("`tar --rmt-command` runs a program")),
        ("--index-file", WriteValue),
        ("-g", WriteValue),
        ("--listed-incremental", WriteValue),
        ("--volno-file", WriteValue),
        ("-T", ListedFiles),
        ("--files-from", ListedFiles),
        ("-X", ReadValue),
        ("--exclude-from", ReadValue),
    ],
    ..GNU
};

/// `set`: `-o NAME`, `+o NAME`, letters with `-` or `+`.
#[rustfmt::skip]
pub(crate) static SET: Syntax = Syntax {
    values: &["-o", "+o"],
    posix: true,
    plus: true,
    ..GNU
};

/// Shell options (`set` letters and `-o` names, `shopt -o` names) that change nothing the analysis depends on, or
/// that it models already (`noglob` and `+B` make globs and braces literal, which it treats as expanding: more
/// paths to check, never fewer; `functrace` only passes traps on, and trap code is analysed).
#[rustfmt::skip]
pub(crate) static SET_OPTIONS: &[&str] = &[
    "e", "u", "x", "v", "n", "C", "b", "m", "h", "H", "P", "p", "t", "E", "B", "f", "T", "errexit", "nounset",
    "xtrace", "verbose", "noexec", "noclobber", "notify", "monitor", "hashall", "histexpand", "physical",
    "privileged", "errtrace", "functrace", "history", "ignoreeof", "interactive-comments", "posix", "emacs", "vi",
    "onecmd", "braceexpand", "noglob", "pipefail"
];

/// `shopt`.
#[rustfmt::skip]
pub(crate) static SHOPT: Syntax = Syntax {
    flags: &["-p", "-q", "-s", "-u", "-o"],
    posix: true,
    ..GNU
};

/// `shopt -s` options that change what later globs match (`dotglob` lets `*` match `.env`, `nocaseglob` lets
/// `.ENV*` match it, `nullglob` makes an unmatched glob vanish, `extglob` adds patterns), how later words expand
/// (`expand_aliases`) or what `echo` prints (`xpg_echo`): the analysis does not follow them.
#[rustfmt::skip]
pub(crate) static SHOPT_UNMODELLED: &[&str] = &[
    "dotglob", "nocaseglob", "nullglob", "extglob", "expand_aliases", "xpg_echo", "globasciiranges"
];

/// `enable`.
#[rustfmt::skip]
pub(crate) static ENABLE: Syntax = Syntax {
    values: &["-f"],
    flags: &["-a", "-d", "-n", "-p", "-s"],
    posix: true,
    ..GNU
};

/// `ulimit` and `umask`: options only choose what is printed or set; an operand sets it.
#[rustfmt::skip]
pub(crate) static SETTING: Syntax = Syntax {
    flags: &[
        "-a", "-b", "-c", "-d", "-e", "-f", "-i", "-k", "-l", "-m", "-n", "-p", "-q", "-r", "-s", "-t", "-u", "-v",
        "-x", "-P", "-R", "-T", "-H", "-S"
    ],
    ..GNU
};

/// `declare`/`typeset`/`export` options that, without names, print variables.
#[rustfmt::skip]
pub(crate) static DECLARE_PRINT: &[&str] = &["-p", "-x"];

/// `yq`: mikefarah's options and the jq wrapper's (which passes jq's on).
#[rustfmt::skip]
pub(crate) static YQ: Syntax = Syntax {
    values: &[
        "-o", "--output-format", "-p", "--input-format", "-s", "--split-exp", "--from-file", "-f", "-I", "--indent",
        "--front-matter", "-w", "--width", "--yaml-output-grammar-version", "--expression", "--xml-attribute-prefix",
        "--xml-content-name", "--lua-prefix", "--properties-separator", "--csv-separator", "--indent", "-L",
        "--library-path"
    ],
    pairs: &["--arg", "--argjson", "--slurpfile", "--rawfile"],
    flags: &["-i", "--inplace", "--in-place", "-n", "--null-input", "-e", "--exit-status", "-y", "-Y", "-r", "-j", "-c"],
    ..GNU
};

/// ripgrep's file types whose globs are the same in every version this table knows (13 and 14, a glob added
/// later included): `rg -t TYPE` searches only the files they match. A type not listed here, or one whose list
/// a version may grow by a hidden name (`sh` takes `.bashrc`, `.profile`), narrows nothing.
#[rustfmt::skip]
pub(crate) static SEARCH_TYPES: &[(&str, &[&str])] = &[
    ("c", &["*.[chH]", "*.[chH].in", "*.cats"]),
    ("cpp", &["*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in", "*.cc", "*.cc.in", "*.hh", "*.hh.in", "*.inl"]),
    ("cs", &["*.cs"]),
    ("csharp", &["*.cs"]),
    ("css", &["*.css", "*.scss"]),
    ("dart", &["*.dart"]),
    ("go", &["*.go"]),
    ("h", &["*.h", "*.hh", "*.hpp"]),
    ("html", &["*.ejs", "*.htm", "*.html"]),
    ("java", &["*.java", "*.jsp", "*.jspx", "*.properties"]),
    ("js", &["*.js", "*.jsx", "*.vue", "*.cjs", "*.mjs"]),
    ("json", &["*.json", "composer.lock", "*.sarif"]),
    ("kotlin", &["*.kt", "*.kts"]),
    ("lua", &["*.lua"]),
    ("markdown", &["*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mkd", "*.mkdn", "*.mdx"]),
    ("md", &["*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mkd", "*.mkdn", "*.mdx"]),
    ("php", &["*.php", "*.php3", "*.php4", "*.php5", "*.php7", "*.php8", "*.pht", "*.phtml"]),
    ("py", &["*.py", "*.pyi"]),
    ("python", &["*.py", "*.pyi"]),
    ("rust", &["*.rs"]),
    ("scala", &["*.sbt", "*.scala"]),
    ("sql", &["*.psql", "*.sql"]),
    ("swift", &["*.swift"]),
    ("toml", &["*.toml", "Cargo.lock"]),
    ("ts", &["*.ts", "*.tsx", "*.cts", "*.mts"]),
    ("typescript", &["*.ts", "*.tsx", "*.cts", "*.mts"]),
    ("txt", &["*.txt"]),
    ("yaml", &["*.yaml", "*.yml"]),
    ("zig", &["*.zig"]),
];

/// Network clients' arguments that only print their version or their help and reach nothing: the whole argument
/// list is one of `alone`, or a word of `topics` followed by help topics (`gh help repo`, `curl --help all`). Only
/// forms whose parsing the client does before it connects, and which no configuration turns into a connection.
#[rustfmt::skip]
pub(crate) static NETWORK_PRINTS: &[(&[&str], &[&str], &[&str])] = &[
    (&["curl", "curlie"], &["--version", "-V", "--help", "-h", "--manual", "-M"], &["--help", "-h"]),
    (&["wget", "wget2"], &["--version", "-V", "--help", "-h"], &[]),
    (&["gh"], &["--version", "version", "--help", "-h", "help"], &["help"]),
    (&["ssh"], &["-V"], &[]),
    (&["http", "https", "xh", "httpie"], &["--version", "--help"], &[]),
    (&["aria2c"], &["--version", "-v", "--help", "-h"], &[]),
    (&["nmap"], &["--version", "-V", "--help", "-h"], &[]),
    (&["ncat"], &["--version", "--help", "-h"], &[]),
    (&["socat"], &["-V", "-h"], &[]),
    (&["dig"], &["-v", "-h"], &[]),
    (&["ping", "ping6"], &["-V"], &[]),
    (&["whois"], &["--version", "--help"], &[]),
    (&["lftp"], &["--version", "--help"], &[]),
];

/// A command that prints the names of files drawn from its operands (`fd`, `rg --files`, `rg -l`, `grep -l`,
/// `ls DIR`): its output, read by `xargs` or substituted as words, names files below those places.
#[derive(Debug)]
pub(crate) struct Lister {
    /// Its command names.
    pub(crate) names: &'static [&'static str],
    /// It prints names only with one of these options; empty: always.
    pub(crate) with: &'static [&'static str],
    /// The first operand is a pattern, unless one of `pattern_options` gave one (`grep -e`).
    pub(crate) pattern: bool,
    /// The options that give the pattern, so that the first operand is a path.
    pub(crate) pattern_options: &'static [&'static str],
    /// With one of these it prints something else than the names it finds (`grep --label=NAME` prints NAME).
    pub(crate) not_with: &'static [&'static str],
    /// It prints the names of a directory's entries alone (`ls DIR` prints `a.rs`, not `DIR/a.rs`), which the
    /// command reading them finds from the working directory: the working directory is among the places too.
    /// Only the options of `only` may be given then (`ls -l` also prints where links lead).
    pub(crate) bare_names: bool,
    /// With `bare_names`: the only options it may have and still print names alone.
    pub(crate) only: &'static [&'static str],
    /// Hidden files are among the names only with one of these (`ls -a`); empty: always.
    pub(crate) hidden_with: &'static [&'static str],
}

const LISTER: Lister = Lister {
    names: &[],
    with: &[],
    pattern: false,
    pattern_options: &[],
    not_with: &[],
    bare_names: false,
    only: &[],
    hidden_with: &[],
};

/// The commands that print the names of files drawn from their operands ([`Lister`]).
#[rustfmt::skip]
pub(crate) static LISTERS: &[Lister] = &[
    Lister { names: &["fd", "fdfind"], pattern: true, ..LISTER },
    Lister { names: &["rg"], with: &["--files"], ..LISTER },
    Lister {
        names: &["rg"],
        with: &["-l", "--files-with-matches", "--files-without-match"],
        pattern: true,
        pattern_options: &["-e", "--regexp", "-f", "--file"],
        ..LISTER
    },
    Lister {
        names: &["grep", "egrep", "fgrep"],
        with: &["-l", "-L", "--files-with-matches", "--files-without-match"],
        pattern: true,
        pattern_options: &["-e", "--regexp", "-f", "--file"],
        not_with: &["--label"],
        ..LISTER
    },
    Lister {
        names: &["ls", "dir"],
        bare_names: true,
        only: &[
            "-1", "-a", "-A", "-C", "-x", "-m", "-r", "-t", "-S", "-U", "-X", "-v", "-c", "-u", "-d", "-R", "-F",
            "-p", "-f", "-N", "-b", "-q", "-Q", "-B", "-I", "-w", "-T", "--all", "--almost-all", "--reverse",
            "--recursive", "--directory", "--classify", "--file-type", "--indicator-style", "--color",
            "--group-directories-first", "--ignore", "--hide", "--ignore-backups", "--sort", "--time", "--width",
            "--tabsize", "--literal", "--escape", "--hide-control-chars", "--quote-name", "--quoting-style"
        ],
        hidden_with: &["-a", "-A", "-f", "--all", "--almost-all"],
        ..LISTER
    },
];

/// `cd`, `pushd`, `popd`: options before the directory (`+N`/`-N` of the directory stack are operands).
#[rustfmt::skip]
pub(crate) static CD: Syntax = Syntax {
    flags: &["-L", "-P", "-e", "-@", "-n"],
    posix: true,
    numeric: false,
    ..GNU
};
