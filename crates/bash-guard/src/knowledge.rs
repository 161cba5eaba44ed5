//! The command knowledge table: what each known command is, which options make it write or run code.
//!
//! Everything bash-guard knows about individual commands is data in this file; `classify/` only interprets it and
//! `options.rs` reads every command's options with the [`Syntax`] given here.
//! Option names follow getopt: `-x` is a short option (it may be clustered, `-rf`), `--xyz` a long one (it may be
//! written `--xyz=value` and, because getopt_long and git accept unique abbreviations, a prefix of a dangerous long
//! option counts as that option).

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
    /// A language interpreter: runs code.
    Interpreter,
    /// A package manager or build tool: runs repository code; `read_only` lists its read-only sub-commands.
    PackageManager { read_only: &'static [&'static str] },
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
}

/// How the operands of a command are used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operands {
    /// Every operand is a file it reads.
    Files,
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
    /// The option makes the command read every file below a directory operand (`grep -r`).
    Recursive,
}

/// The options of a command.
#[derive(Debug)]
pub(crate) struct Flags {
    /// Options that take the next word (or the rest of a short cluster, or `=value`) as their value.
    pub(crate) values: &'static [&'static str],
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
};

/// POSIX getopt: options before the first operand.
pub(crate) const POSIX: Syntax = Syntax { posix: true, ..GNU };

impl Flags {
    /// The syntax of a command read with this table.
    pub(crate) const fn syntax(&self) -> Syntax {
        Syntax {
            values: self.values,
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

/// How a wrapper finds the command it runs.
#[derive(Debug)]
pub(crate) struct Wrapper {
    /// Options that take a value.
    pub(crate) values: &'static [&'static str],
    /// Options without a value. Any other option means the command cannot be found: a safety ask.
    pub(crate) flags: &'static [&'static str],
    /// Options whose value is a file the wrapper writes.
    pub(crate) writes: &'static [&'static str],
    /// Options after which nothing is run (`command -v`, `sudo -l`).
    pub(crate) no_run: &'static [&'static str],
    /// Options whose value is shell code (`flock -c CODE`, `env -S STRING`).
    pub(crate) code: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`, `chroot DIR`, `flock FILE`).
    pub(crate) leading: usize,
    /// `NAME=VALUE` words before the command set its environment (`env`).
    pub(crate) assignments: bool,
    /// Options of the form `-N` (`nice -5`).
    pub(crate) numeric_flags: bool,
    /// The command words are joined and run by `sh -c` (`watch`), unless one of `exec_flags` is given.
    pub(crate) joins: bool,
    pub(crate) exec_flags: &'static [&'static str],
    /// Runs the command as another user.
    pub(crate) privileged: bool,
    /// Without a command it does nothing harmful (`env` prints, `nice` prints).
    pub(crate) bare_is_read_only: bool,
}

const fn flags(
    values: &'static [&'static str],
    effects: &'static [(&'static str, Effect)],
    operands: Operands,
) -> Flags {
    Flags {
        values,
        effects,
        operands,
        any_args: false,
        recursive: Recursion::No,
    }
}

const fn open(values: &'static [&'static str], operands: Operands) -> Flags {
    Flags {
        values,
        effects: &[],
        operands,
        any_args: true,
        recursive: Recursion::No,
    }
}

pub(crate) const WRAPPER: Wrapper = Wrapper {
    values: &[],
    flags: &[],
    writes: &[],
    no_run: &[],
    code: &[],
    leading: 0,
    assignments: false,
    numeric_flags: false,
    joins: false,
    exec_flags: &[],
    privileged: false,
    bare_is_read_only: false,
};

use Effect::{Distinct, HiddenExec, NotReadOnly, PatternGiven, ReadValue, Recursive, WriteValue};

#[rustfmt::skip]
static FILES: Flags = open(&[], Operands::Files);
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
static TAIL: Flags = open(
    &["-n", "-c", "--lines", "--bytes", "-s", "--sleep-interval", "--pid"],
    Operands::Files,
);
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
        ("-r", Recursive),
        ("-R", Recursive),
        ("--recursive", Recursive),
        ("--dereference-recursive", Recursive),
        // `-d recurse`; other actions only make the match larger.
        ("-d", Recursive),
        ("--directories", Recursive),
    ],
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
        ("--files0-from", ReadValue),
        (
            "--compress-program",
            HiddenExec("`sort --compress-program` runs a program"),
        ),
    ],
    Operands::Files,
);
#[rustfmt::skip]
static UNIQ: Flags = flags(
    &["-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars", "--group", "--all-repeated"],
    &[],
    Operands::InputThenOutput,
);
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
static DIFF: Flags = Flags { recursive: Recursion::All, ..open(
    &[
        "-C", "-U", "-I", "-x", "-X", "-F", "-W", "-L", "--label", "--exclude", "--exclude-from",
        "--ignore-matching-lines", "--width", "--tabsize", "--from-file", "--to-file", "--show-function-line",
        "--unified", "--context", "--line-format", "--color", "--palette"
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
        ("-f", ReadValue),
        ("--files-from", ReadValue),
    ],
    Operands::Files,
);
#[rustfmt::skip]
static TREE: Flags = flags(
    &[
        "-L", "-P", "-I", "-o", "--output", "--filelimit", "--timefmt", "--charset", "--sort", "--fromfile",
        "-H", "-T"
    ],
    &[("-o", WriteValue), ("--output", WriteValue)],
    Operands::Files,
);
#[rustfmt::skip]
static DATE: Flags = flags(
    &[
        "-d", "-f", "-r", "-s", "-I", "--date", "--file", "--reference", "--set", "--iso-8601", "--rfc-3339"
    ],
    &[
        ("-s", NotReadOnly("`date -s` sets the system clock")),
        ("--set", NotReadOnly("`date --set` sets the system clock")),
        ("-f", ReadValue),
        ("--file", ReadValue),
    ],
    Operands::Data,
);
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
    &[("-o", WriteValue), ("--output", WriteValue)],
    Operands::Files,
);
#[rustfmt::skip]
static HASH: Flags = flags(
    &["-p", "-d"],
    &[("-p", NotReadOnly("`hash -p` changes which program a name runs"))],
    Operands::Data,
);
#[rustfmt::skip]
static SET: Flags = flags(&["-o"], &[], Operands::Data);
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
static LS: Flags = open(
    &[
        "-I", "-w", "-T", "--ignore", "--hide", "--width", "--tabsize", "--format", "--sort", "--time",
        "--time-style", "--color", "--block-size", "--quoting-style", "--indicator-style"
    ],
    Operands::Files,
);
#[rustfmt::skip]
static DU: Flags = open(
    &[
        "-d", "-B", "-t", "-X", "--max-depth", "--block-size", "--threshold", "--exclude", "--exclude-from",
        "--time-style", "--files0-from"
    ],
    Operands::Files,
);
#[rustfmt::skip]
static WC: Flags = open(&["--files0-from"], Operands::Files);
#[rustfmt::skip]
static STAT: Flags = open(&["-c", "-f", "--format", "--printf"], Operands::Files);
// `stty` prints the settings (`-a`, `-g`); any setting given as an operand changes the terminal or the device.
#[rustfmt::skip]
static STTY: Flags = flags(&["-F", "--file", "-f"], &[], Operands::NoneWhenReadOnly);
#[rustfmt::skip]
static SEQ: Flags = open(&["-f", "-s", "--format", "--separator"], Operands::Data);

#[rustfmt::skip]
static TOUCH: Flags = flags(
    &["-d", "-r", "-t", "--date", "--reference"],
    &[],
    Operands::Written,
);
#[rustfmt::skip]
static MKDIR: Flags = flags(&["-m", "--mode", "--context"], &[], Operands::Written);
#[rustfmt::skip]
static WRITTEN: Flags = flags(&[], &[], Operands::Written);
#[rustfmt::skip]
static TEE: Flags = flags(&["--output-error"], &[], Operands::Written);
#[rustfmt::skip]
static TRUNCATE: Flags = flags(&["-s", "-r", "--size", "--reference"], &[], Operands::Written);
#[rustfmt::skip]
static CP: Flags = flags(
    &[
        "-t", "-S", "--target-directory", "--suffix", "--backup", "--sparse", "--reflink", "--preserve",
        "--no-preserve", "-m", "--mode", "-o", "--owner", "-g", "--group"
    ],
    &[("-t", WriteValue), ("--target-directory", WriteValue)],
    Operands::LastWritten,
);
#[rustfmt::skip]
static MV: Flags = flags(
    &["-t", "-S", "--target-directory", "--suffix", "--backup"],
    &[("-t", WriteValue), ("--target-directory", WriteValue)],
    Operands::Written,
);
#[rustfmt::skip]
static SHRED: Flags = flags(
    &["-n", "-s", "--iterations", "--size", "--random-source", "--remove"],
    &[],
    Operands::Written,
);

#[rustfmt::skip]
static ENV: Wrapper = Wrapper {
    values: &[
        "-u", "--unset", "-C", "--chdir", "-S", "--split-string", "--block-signal", "--default-signal",
        "--ignore-signal"
    ],
    flags: &["-i", "-", "--ignore-environment", "-0", "--null", "-v", "--debug", "--list-signal-handling"],
    code: &["-S", "--split-string"],
    assignments: true,
    bare_is_read_only: true,
    ..WRAPPER
};
#[rustfmt::skip]
static XARGS: Wrapper = Wrapper {
    values: &[
        "-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--eof", "--replace",
        "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"
    ],
    flags: &[
        "-0", "-r", "-t", "-p", "-x", "-o", "-e", "-i", "-l", "--null", "--no-run-if-empty", "--verbose",
        "--interactive", "--exit", "--open-tty", "--show-limits"
    ],
    bare_is_read_only: true,
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
static NOHUP: Wrapper = WRAPPER;
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
    values: &["-n", "--interval", "-q", "--equexit", "-d", "--differences"],
    flags: &[
        "-b", "-e", "-g", "-t", "-x", "-c", "-p", "-w", "-r", "-C", "--beep", "--errexit", "--chgexit",
        "--no-title", "--exec", "--color", "--no-color", "--precise", "--no-wrap", "--no-rerun"
    ],
    joins: true,
    exec_flags: &["-x", "--exec"],
    ..WRAPPER
};
#[rustfmt::skip]
static SETSID: Wrapper = Wrapper {
    flags: &["-c", "-f", "-w", "--ctty", "--fork", "--wait"],
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
    privileged: true,
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
        ("-x", HiddenExec("`fd -x` runs a command for each result")),
        ("-X", HiddenExec("`fd -X` runs a command with the results")),
        ("--exec", HiddenExec("`fd --exec` runs a command for each result")),
        ("--exec-batch", HiddenExec("`fd --exec-batch` runs a command with the results")),
    ],
    Operands::PatternThenFiles,
);
#[rustfmt::skip]
static BAT: Flags = flags(
    &["-l", "-H", "-r", "-m", "--language", "--highlight-line", "--line-range", "--map-syntax", "--theme", "--style", "--tabs", "--wrap", "--terminal-width", "--color", "--italic-text", "--decorations", "--paging", "--file-name", "--diff-context", "--pager"],
    &[("--pager", HiddenExec("`bat --pager` runs a pager program"))],
    Operands::Files,
);
#[rustfmt::skip]
static DOAS: Wrapper = Wrapper {
    values: &["-u", "-C"],
    flags: &["-n", "-s"],
    no_run: &["-L"],
    privileged: true,
    ..WRAPPER
};

/// The built-in table: every name, and what it is.
#[rustfmt::skip]
pub(crate) static COMMANDS: &[(&[&str], Kind)] = &[
    // Read-only inspection of files and text.
    (
        &[
            "cat", "tac", "nl", "rev", "fold", "fmt", "pr", "expand", "unexpand", "paste", "join", "comm",
            "cmp", "od", "hexdump", "strings", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum",
            "sha512sum", "b2sum", "cksum", "sum", "column", "tsort", "look",
            "zcat", "bzcat", "xzcat", "zstdcat", "lz4cat", "readlink", "realpath"
        ],
        Kind::ReadOnly(&FILES),
    ),
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
    (&["seq"], Kind::ReadOnly(&SEQ)),
    (&["stty"], Kind::ReadOnly(&STTY)),
    (
        &[
            "echo", "pwd", "basename", "dirname", "true", "false", "test", "[", "which", "whereis", "type",
            "whoami", "id", "groups", "uname", "arch", "nproc", "uptime", "free", "df", "ps", "printenv",
            "locale", "tty", "cal", "expr", "yes", "sleep", "numfmt", "factor", "getconf", "lscpu",
            "lsb_release", "users", "who", "w", "logname", "env_info", "cd", "pushd", "popd", "dirs", "unset",
            "shift", "exit", "return", "break", "continue", ":", "wait", "jobs", "getopts", "times", "caller",
            "help", "tput", "clear", "pgrep", "pidof"
        ],
        Kind::ReadOnly(&DATA),
    ),
    (&["printf"], Kind::ReadOnly(&PRINTF)),
    (&["read"], Kind::ReadOnly(&READ)),
    (&["mapfile", "readarray"], Kind::ReadOnly(&MAPFILE)),
    (&["hash"], Kind::ReadOnly(&HASH)),
    (&["set"], Kind::ReadOnly(&SET)),
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
            "split", "csplit", "patch", "tar", "zip", "unzip", "gzip", "gunzip", "bzip2", "bunzip2", "xz",
            "unxz", "zstd", "7z", "ar", "cpio", "sync", "ulimit", "umask", "alias", "unalias", "shopt",
            "enable", "complete", "compgen", "bind", "disown", "fg", "bg", "history", "fc", "crontab", "at",
            "batch", "pkill", "killall", "chattr", "setfacl", "mount", "umount", "swapon", "swapoff",
            "useradd", "userdel", "usermod", "passwd", "chpasswd", "groupadd", "visudo", "iptables", "nft",
            "ip", "ifconfig", "route", "modprobe", "insmod", "rmmod", "sysctl", "service", "launchctl",
            "docker", "podman", "kubectl", "terraform", "ansible", "helm"
        ],
        Kind::Write(&WRITTEN),
    ),
    (&["dd"], Kind::Special(Special::Dd)),
    (&["chmod", "chown", "chgrp"], Kind::Special(Special::Chmod)),
    (&["kill"], Kind::Special(Special::Kill)),
    (&["init", "telinit"], Kind::Special(Special::Init)),
    (&["systemctl"], Kind::Special(Special::Systemctl)),
    (&["rsync"], Kind::Special(Special::Rsync)),
    // Wrappers that run their arguments.
    (&["env"], Kind::Wrapper(&ENV)),
    (&["xargs"], Kind::Wrapper(&XARGS)),
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
    (
        &[
            "python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "perl", "ruby", "php", "deno",
            "bun", "lua", "luajit", "Rscript", "R", "julia", "tclsh", "wish", "expect", "osascript", "pwsh",
            "powershell", "irb", "ghci", "runghc", "runhaskell", "scala", "kotlin", "swift", "java", "jshell",
            "groovy", "elixir", "iex", "erl", "escript", "guile", "racket", "sbcl", "clojure", "dart",
            "ts-node", "tsx", "dc", "gdb", "lldb", "strace", "ltrace", "valgrind", "parallel", "script"
        ],
        Kind::Interpreter,
    ),
    (
        &["cargo"],
        Kind::PackageManager {
            read_only: &["metadata", "version", "tree", "locate-project", "pkgid", "verify-project", "help"],
        },
    ),
    (
        &["npm", "pnpm", "yarn"],
        Kind::PackageManager {
            read_only: &["ls", "list", "ll", "la", "help", "why", "-v"],
        },
    ),
    (
        &["pip", "pip3", "pipx"],
        Kind::PackageManager {
            read_only: &["list", "show", "freeze", "help"],
        },
    ),
    (
        &["go"],
        Kind::PackageManager {
            read_only: &["version", "help"],
        },
    ),
    (
        &["rustup"],
        Kind::PackageManager {
            read_only: &["show", "which", "help"],
        },
    ),
    (
        &[
            "npx", "pnpx", "bunx", "uv", "uvx", "poetry", "pdm", "conda", "mamba", "micromamba", "gem",
            "bundle", "bundler", "rake", "composer", "make", "gmake", "cmake", "ninja", "meson", "gradle",
            "gradlew", "mvn", "mvnw", "sbt", "ant", "dotnet", "rustc", "cc", "gcc", "g++", "clang", "clang++",
            "ld", "tsc", "webpack", "vite", "jest", "vitest", "pytest", "tox", "nox", "just", "task", "bazel",
            "bazelisk", "buck2", "brew", "apt", "apt-get", "dpkg", "dnf", "yum", "rpm", "pacman", "apk",
            "snap", "flatpak", "nix", "nix-env", "pre-commit", "hatch", "maturin", "wasm-pack", "trunk",
            "cross"
        ],
        Kind::PackageManager { read_only: &["help"] },
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
        &["su", "pkexec", "runuser", "run0", "sudoedit", "machinectl", "newgrp", "sg", "setpriv", "capsh"],
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
    "NPM_CONFIG_*", "npm_config_*", "ZDOTDIR", "HISTFILE", "TMPDIR", "HOME"
];

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
    "--output", "--format", "--pretty", "-n", "--max-count", "--skip", "--since", "--until", "--after",
    "--before", "--author", "--committer", "--grep", "-S", "-G", "-L", "-U", "--unified", "--abbrev", "--date",
    "--encoding", "-e", "-f", "--exec", "--upload-pack", "--receive-pack", "-O", "--open-files-in-pager",
    "--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--color", "-m", "-M",
    "-C", "--diff-filter", "--relative", "--stat", "--contents", "--ignore-rev", "--ignore-revs-file"
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
    /// Read-only when the first operand is one of these (or there is none, if `bare` is true).
    Sub {
        subs: &'static [&'static str],
        bare: bool,
    },
    /// `git config`: read-only with a reading option or sub-command.
    Config,
}

#[rustfmt::skip]
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
    ("var", GitRule::Always),
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
    ("verify-commit", GitRule::Always),
    ("verify-tag", GitRule::Always),
    (
        "branch",
        GitRule::Listing {
            list_flags: &[
                "--list", "-l", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at",
                "--show-current"
            ],
            write_flags: &[
                "-d", "-D", "-m", "-M", "-c", "-C", "-f", "-u", "--delete", "--move", "--copy", "--force",
                "--set-upstream-to", "--unset-upstream", "--edit-description", "--track", "--no-track"
            ],
        },
    ),
    (
        "tag",
        GitRule::Listing {
            list_flags: &[
                "--list", "-l", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "-v",
                "--verify"
            ],
            write_flags: &[
                "-d", "-a", "-s", "-f", "-m", "-F", "-u", "--delete", "--annotate", "--sign", "--force",
                "--message", "--file", "--local-user", "--edit"
            ],
        },
    ),
    (
        "remote",
        GitRule::Sub {
            subs: &["show", "get-url"],
            bare: true,
        },
    ),
    (
        "stash",
        GitRule::Sub {
            subs: &["list", "show"],
            bare: false,
        },
    ),
    (
        "worktree",
        GitRule::Sub {
            subs: &["list"],
            bare: false,
        },
    ),
    (
        "reflog",
        GitRule::Sub {
            subs: &["show"],
            bare: true,
        },
    ),
    (
        "notes",
        GitRule::Sub {
            subs: &["list", "show"],
            bare: true,
        },
    ),
    (
        "submodule",
        GitRule::Sub {
            subs: &["status", "summary"],
            bare: true,
        },
    ),
    (
        "sparse-checkout",
        GitRule::Sub {
            subs: &["list"],
            bare: false,
        },
    ),
    ("config", GitRule::Config),
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

/// jq: `--arg NAME VALUE` and its kin take two words (for `--slurpfile` and `--rawfile` the second is a file
/// read); jq takes no abbreviations, so an abbreviation here only ever makes a reading stricter.
#[rustfmt::skip]
pub(crate) static JQ: Syntax = Syntax {
    values: &["-f", "--from-file", "--indent", "-L", "--library-path"],
    pairs: &["--arg", "--argjson", "--slurpfile", "--rawfile"],
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

/// find's expression: primaries are whole words; `-fprintf` takes a file and a format.
#[rustfmt::skip]
pub(crate) static FIND_EXPRESSION: Syntax = Syntax {
    values: FIND_VALUES,
    pairs: &["-fprintf"],
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

/// `rsync`: `-e`/`--rsh` name the remote shell program.
#[rustfmt::skip]
pub(crate) static RSYNC: Syntax = Syntax {
    values: &["-e", "--rsh"],
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
/// syntax, and the options whose value names a variable (`read -a NAME`, `printf -v NAME`).
#[rustfmt::skip]
pub(crate) static NAMES_VARIABLES: &[(&str, Syntax, &[&str])] = &[
    ("read", Syntax { values: READ_VALUES, posix: true, ..GNU }, &["-a"]),
    ("mapfile", Syntax { values: MAPFILE_VALUES, posix: true, ..GNU }, &[]),
    ("readarray", Syntax { values: MAPFILE_VALUES, posix: true, ..GNU }, &[]),
    ("getopts", POSIX, &[]),
    ("unset", POSIX, &[]),
    ("printf", Syntax { values: &["-v"], posix: true, ..GNU }, &["-v"]),
];
