//! git: its own options, the sub-command, and when the sub-command only reads.

use crate::analysis::{AccessVia, CommandClass};
use crate::knowledge::{self, Effect, GitRule, Recursion};
use crate::options::{self, Reader, Token, abbreviates};
use crate::word::{self, Word};

use super::{Classified, Found, flags};

pub(super) fn git(args: &[Word], c: &mut Classified) {
    c.class = CommandClass::Write;
    let mut reader = Reader::new(args, &knowledge::GIT_GLOBAL);
    let mut global_ok = true;
    // Configuration set on the command line that shortens what git keeps of history (`git -c gc.pruneExpire=now
    // gc`): the sub-command's own effect is then not what its options say.
    let mut history_config = false;
    // Whether git runs a program besides itself that the line names or sets (`rebase -x CMD`, `-c core.pager=CMD`,
    // `--exec-path DIR`), or a word only known at run time may be such an option: then it is not git alone that
    // writes the repository.
    let mut runs_programs = false;
    // Whether git is given a working tree or a directory of its own (`--work-tree`, `-C`, `--git-dir`): what it
    // then removes or overwrites follows that tree's ignore rules, not those of the snapshots of the project.
    let mut elsewhere = false;
    // Whether the line sets git configuration for the command (`-c NAME=VALUE`, `--config-env`).
    let mut configured = false;
    // The git directory `--git-dir` names.
    let mut git_dir: Option<Word> = None;
    // The index of the sub-command.
    let mut i = args.len();
    for token in reader.by_ref() {
        match token {
            Token::Option(option) => {
                for effect in option.effects(&knowledge::GIT_GLOBAL) {
                    if let Effect::HiddenExec(reason) = effect {
                        c.ask_unseen(reason.to_owned());
                        let configures = matches!(option.name.as_ref(), "-c" | "--config-env");
                        runs_programs |=
                            !configures || option.value.as_ref().is_none_or(|v| !runs_nothing(v));
                    }
                    global_ok = false;
                }
                // `git -C DIR` runs there (the walker reads DIR as the place it enters); the repository it finds
                // there, or in a directory above, may be another than the project's, whose configuration can run
                // programs (`core.fsmonitor`, `core.pager`): its `.git`, or the `HEAD` of a bare repository, is a
                // file loaded where it exists. `--git-dir`/`--work-tree` read the repository there, which may be
                // outside the roots, and `--git-dir` loads its configuration.
                if matches!(option.name.as_ref(), "-c" | "--config-env") {
                    history_config |= option.value.as_ref().is_none_or(shortens_history);
                    configured = true;
                }
                elsewhere |=
                    option.name == "-C" || knowledge::GIT_GLOBAL_DIRS.contains(&option.name.as_ref());
                if option.name == "-C" {
                    c.directory.clone_from(&option.value);
                    c.loads.push((Word::literal(".git"), true));
                    c.loads.push((Word::literal("HEAD"), true));
                } else if knowledge::GIT_GLOBAL_DIRS.contains(&option.name.as_ref())
                    && let Some(dir) = &option.value
                {
                    c.read(dir, AccessVia::Flag);
                    // Another git directory's configuration may run programs (`core.hooksPath`, an alias)
                    // while the project's `.git` is writable: not git alone.
                    runs_programs |= option.name == "--git-dir";
                    if option.name == "--git-dir" {
                        git_dir = Some(dir.clone());
                    }
                    if option.name == "--git-dir"
                        && let Some(path) = dir.path()
                    {
                        c.loads.push((
                            word::path_word(&format!("{}/config", path.trim_end_matches('/'))),
                            false,
                        ));
                    }
                }
                if !option.known {
                    global_ok = false;
                }
            }
            Token::Operand { at, word } => {
                if !word.literal {
                    global_ok = false;
                    runs_programs = true;
                }
                i = at;
                break;
            }
        }
    }
    let rest = args.get(i + 1..).unwrap_or_default();
    // A sub-command with options of its own reads them with its own values and adds its own effects.
    let own = args
        .get(i)
        .filter(|sub| sub.literal)
        .and_then(|sub| {
            knowledge::GIT_SUB_OPTIONS
                .iter()
                .find(|(name, _)| *name == sub.text)
        })
        .map(|(_, own)| own);
    let syntax = match own {
        Some(own) => knowledge::Syntax {
            values: own.values,
            optional: own.optional,
            ..knowledge::GIT_SUB
        },
        None => knowledge::GIT_SUB,
    };
    let s = options::read(rest, &syntax);
    c.read_only = true;
    let writes_before = c.writes.len();
    let mut effects = s.effects(&syntax);
    if let Some(own) = own {
        effects.extend(s.effects(&knowledge::Syntax {
            effects: own.effects,
            ..knowledge::GIT_SUB
        }));
    }
    let no_program_options = args
        .get(i)
        .is_some_and(|sub| sub.literal && NO_PROGRAM_OPTIONS.contains(&sub.text.as_str()));
    runs_programs |= (s.dynamic && !no_program_options)
        || effects
            .iter()
            .any(|(effect, _)| matches!(effect, Effect::HiddenExec(_)));
    flags::effects(&effects, c);
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
        c.ask_unseen("`git grep -O` runs a pager program".to_owned());
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
        c.ask_unseen(
            "a `%G` placeholder in the format runs the signature program from configuration".to_owned(),
        );
    }
    // `git push` sends to another repository over the network (besides changing it, its effect).
    if sub_name == "push" {
        c.online("`git push` reaches another repository".to_owned());
    }
    // `git remote show NAME` asks the remote over the network unless `-n` is given.
    if sub_name == "remote"
        && s.operands.first().is_some_and(|o| o.text == "show")
        && s.operands.len() > 1
        && !s.has(&["-n"])
    {
        c.online("`git remote show NAME` asks the remote repository".to_owned());
    }
    // `git remote -v`, `get-url` and `show` print the remotes' URLs from the repository's configuration.
    if sub_name == "remote"
        && (s.has(&["-v", "--verbose"])
            || s.operands
                .first()
                .is_some_and(|o| !o.literal || ["get-url", "show"].contains(&o.text.as_str())))
    {
        repository_config(c);
    }
    paths(sub_name, rest, &s, c);
    runs_programs |= runs_given_command(sub_name, &s);
    c.effect = git_effect(sub_name, rest, &s, configured);
    if elsewhere {
        c.effect = std::mem::replace(&mut c.effect, crate::analysis::Effect::Local)
            .in_working_tree("the line gives git (`--work-tree`, `-C`, `--git-dir`)");
    }
    c.overwrites_ignored = from_revision(sub_name, rest, &s);
    c.git_dir_made =
        git_dir_made(sub_name, &s, git_dir.as_ref()).map(|dir| word::under(c.directory.as_ref(), &dir));
    let read_only = match rule {
        None => false,
        Some(GitRule::Always) => true,
        Some(GitRule::Listing {
            list_flags,
            write_flags,
        }) => !s.has(write_flags) && (s.operands.is_empty() || s.has(list_flags)),
        Some(GitRule::Sub { subs, bare, network }) => match s.operands.first() {
            None => bare,
            Some(first) if network.contains(&first.text.as_str()) => {
                c.online(format!(
                    "`git {sub_name} {}` reaches another repository",
                    first.text
                ));
                false
            }
            Some(first) => subs.contains(&first.text.as_str()),
        },
        Some(GitRule::Network) => {
            c.online(format!("`git {sub_name}` reaches another repository"));
            false
        }
        Some(GitRule::Runs(reason)) => {
            runs_programs = true;
            c.class = CommandClass::Exec;
            c.ask_unseen(reason.to_owned());
            false
        }
        Some(GitRule::Config) => {
            // `git config NAME` reads; `git config NAME VALUE` and the editing options write.
            let reads = s.has(knowledge::GIT_CONFIG_READ)
                || s.operands
                    .first()
                    .is_some_and(|o| knowledge::GIT_CONFIG_READ_SUBS.contains(&o.text.as_str()))
                || (s.operands.len() == 1 && !s.has(knowledge::GIT_CONFIG_WRITE));
            if reads {
                config_files(&s, c);
            } else {
                config_written(&s, c);
            }
            reads
        }
        Some(GitRule::Var) => {
            if s.has(&["-l"]) {
                config_files(&s, c);
            }
            true
        }
    };
    c.read_only = read_only && global_ok && effects_ok && !s.dynamic && c.network.is_none();
    if c.read_only {
        c.class = CommandClass::ReadOnly;
    }
    // A path git is given into a git directory (`--work-tree=.git`, `-C .git`, `mailinfo .git/logs/HEAD
    // .git/refs/heads/main`, `--export-marks=.git/refs/…`) makes git write its history as files it was told to:
    // not git keeping its own repository.
    let into_git_dir = args.iter().any(|w| {
        let value = w
            .text
            .split_once('=')
            .filter(|_| w.text.starts_with('-'))
            .map_or(w.text.as_str(), |(_, v)| v);
        value.split('/').any(names_git_dir)
    });
    c.git_writes = !c.read_only && !runs_programs && !into_git_dir && c.class != CommandClass::Exec;
    if history_config
        && matches!(
            c.effect,
            crate::analysis::Effect::Local | crate::analysis::Effect::Discards(_)
        )
        && !c.read_only
    {
        c.effect = crate::analysis::Effect::Destroys(
            "`git -c gc.…` or `core.logAllRefUpdates` changes how long git keeps unreachable commits and their record"
                .to_owned(),
        );
    }
}

/// The git directory `git init` or `git clone` makes under a name it is given, which need not be `.git`
/// ([`crate::SubCommand::git_dir_made`]): `--separate-git-dir DIR`, `git --git-dir=DIR init`, `git init --bare
/// [DIR]` (the working directory without one), `git clone --bare`/`--mirror URL [DIR]` (by default the URL's last
/// name with `.git`). `None` for a repository whose git directory is its working tree's `.git`.
fn git_dir_made(sub: &str, s: &options::Parsed<'_>, git_dir: Option<&Word>) -> Option<Word> {
    if !matches!(sub, "init" | "clone") {
        return None;
    }
    if let Some(dir) = s
        .options
        .iter()
        .rev()
        .find(|option| option.is("--separate-git-dir"))
        .and_then(|option| option.value.clone())
    {
        return Some(dir);
    }
    let bare = s.has(&["--bare", "--mirror"]);
    match sub {
        "init" => git_dir.cloned().or_else(|| {
            bare.then(|| {
                s.operands
                    .first()
                    .map_or_else(|| Word::literal("."), |dir| (*dir).clone())
            })
        }),
        _ if bare => match s.operands.get(1) {
            Some(dir) => Some((*dir).clone()),
            None => {
                let url = s.operands.first().filter(|url| url.literal)?;
                let url = url.text.trim_end_matches('/');
                let last = url.rsplit(['/', ':']).next()?;
                Some(Word::literal(&format!(
                    "{}.git",
                    last.strip_suffix(".git").unwrap_or(last)
                )))
            }
        },
        _ => None,
    }
}

/// Whether a path component names a git directory (`.git`, in any case: some file systems ignore it).
pub fn names_git_dir(component: &str) -> bool {
    component.eq_ignore_ascii_case(".git")
}

/// Whether a refspec among `git fetch`'s operands after the repository stores outside the remote-tracking
/// references (`refs/x/*:refs/heads/*`, `main:main`), or may (a word only known at run time).
fn prunes_local_refs(s: &options::Parsed<'_>) -> bool {
    s.operands.iter().skip(1).any(|w| {
        w.text.contains(['$', '`'])
            || w.text.split_once(':').is_some_and(|(_, destination)| {
                !destination.is_empty() && !destination.starts_with("refs/remotes/")
            })
    })
}

/// Whether the options read give one of `names` as written: `--prune` is not taken as an abbreviation of
/// `--prune-tags`, as git takes no abbreviation that is another option's name.
fn named(s: &options::Parsed<'_>, names: &[&str]) -> bool {
    s.options.iter().any(|o| names.contains(&o.name.as_ref()))
}

/// What a git sub-command does beyond the repository's files: the sub-commands that change another repository,
/// and those that throw away work only the working tree holds.
fn git_effect(
    sub: &str,
    rest: &[Word],
    s: &options::Parsed<'_>,
    configured: bool,
) -> crate::analysis::Effect {
    use crate::analysis::Effect;
    if knowledge::GIT_REMOTE_WRITES.contains(&sub) {
        return Effect::Remote(format!("`git {sub}` changes another repository"));
    }
    // `git checkout -- FILE`, `git checkout .` and `git checkout -f` overwrite the working tree's changes; a bare
    // `git checkout BRANCH` refuses to.
    let paths = rest
        .iter()
        .any(|w| w.literal && (w.text == "--" || w.text == "."));
    let destroys = |why: &str| Effect::Destroys(why.to_owned());
    // A sub-command that deletes by a verb or an option (`git stash clear`, `git branch -D`, `git tag -d`) with a
    // word only known at run time may be asked to delete: `echo c | xargs -I{} git stash {}lear`.
    if matches!(
        sub,
        "stash"
            | "branch"
            | "tag"
            | "reflog"
            | "gc"
            | "repack"
            | "symbolic-ref"
            | "update-ref"
            | "prune"
            | "fetch"
            | "pull"
            | "worktree"
            | "clean"
            | "remote"
            | "notes"
            | "replace"
    ) && rest
        .iter()
        .any(|w| !w.literal && w.text.contains(['$', '`', '{', '"', '\\', '\'']))
    {
        return destroys(&format!(
            "`git {sub}` with a word only known at run time may delete what no snapshot holds"
        ));
    }
    let first = rest
        .iter()
        .find(|w| !w.text.starts_with('-'))
        .map(|w| w.text.as_str());
    match sub {
        "stash" if matches!(first, Some("clear" | "drop")) => destroys(
            "`git stash clear` and `drop` delete stashed work, which no snapshot of the working tree holds",
        ),
        "branch" if s.has(&["-D"]) || (s.has(&["-d", "--delete"]) && s.has(&["-f", "--force"])) => {
            destroys("`git branch -D` deletes a branch whose commits may be nowhere else")
        }
        // Renaming or copying over a branch (`-M`, `-C`, or `-m`/`-c` with `--force`) replaces it and its reflog:
        // its commits may be nowhere else.
        "branch"
            if s.has(&["-M", "-C"])
                || (s.has(&["-m", "--move", "-c", "--copy"]) && s.has(&["-f", "--force"])) =>
        {
            destroys(
                "`git branch -M` and `-C` overwrite a branch and its reflog, whose commits may be nowhere else",
            )
        }
        "reflog" if matches!(first, Some("expire" | "delete" | "drop")) => {
            destroys("`git reflog expire`, `delete` and `drop` drop the record that brings lost commits back")
        }
        // `git repack -a -d` writes one pack of what is reachable and deletes the old packs, with the unreachable
        // objects in them (`-A` leaves those loose, `-k` keeps them).
        // A cruft pack's expiration deletes the unreachable objects older than it (`now`: all of them).
        "repack" if s.has(&["-d"]) && named(s, &["--cruft-expiration"]) => destroys(
            "`git repack -d --cruft-expiration` deletes unreachable commits, which may be the only copy of work",
        ),
        "repack" if s.has(&["-a"]) && s.has(&["-d"]) && !s.has(&["-A", "-k", "--keep-unreachable"]) => {
            destroys(
                "`git repack -a -d` deletes the unreachable commits of the old packs, which may be the only copy of work",
            )
        }
        // `git update-ref` deletes (`-d`, `delete` lines of `--stdin`) or moves a reference (a tag keeps no
        // record of where it was).
        "prune" | "update-ref" => {
            destroys("it deletes objects or references that may be the only copy of work")
        }
        // `git fetch --prune . 'refs/x/*:refs/*'` deletes every local reference the refspec's destination covers
        // and the source lacks (branches, the stash, with their reflogs); `--prune-tags` deletes local tags.
        // Pruning only remote-tracking references (`refs/remotes/…`, the default) loses no work.
        "fetch" | "pull" if named(s, &["-P", "--prune-tags"]) => destroys(
            "`git fetch --prune-tags` deletes local tags, which may be the only name of their commits",
        ),
        "fetch" | "pull" if named(s, &["-p", "--prune"]) && prunes_local_refs(s) => destroys(
            "`git fetch --prune` with a refspec into local references deletes the branches it covers, with their \
             reflogs",
        ),
        "gc" if rest.iter().any(|w| w.text.starts_with("--prune")) => {
            destroys("`git gc --prune` deletes unreachable commits, which may be the only copy of work")
        }
        "tag" if s.has(&["-d", "--delete", "-f", "--force"]) => {
            destroys("`git tag -d` and `-f` drop a tag, which may be the only name of its commit")
        }
        "symbolic-ref" if s.has(&["-d", "--delete"]) => {
            destroys("`git symbolic-ref -d` deletes a reference, which may be the only name of its commits")
        }
        "filter-branch" | "filter-repo" => {
            destroys("it rewrites every commit of the branches and drops what the old ones held")
        }
        "worktree" if first == Some("remove") && s.has(&["-f", "--force"]) => Effect::Discards(
            "`git worktree remove --force` deletes a working tree with its changes not committed".to_owned(),
        ),
        "switch" if s.has(&["-f", "--force", "--discard-changes"]) => {
            Effect::Discards("`git switch -f` overwrites the changes not committed".to_owned())
        }
        "read-tree" if s.has(&["-u"]) && s.has(&["--reset"]) => {
            Effect::Discards("`git read-tree -u --reset` overwrites the changes not committed".to_owned())
        }
        "checkout-index" if s.has(&["-f", "--force"]) => {
            Effect::Discards("`git checkout-index -f` overwrites the changes not committed".to_owned())
        }
        // `git checkout TREE-ISH PATH…` takes the files from TREE-ISH: every operand after the first is a path.
        "checkout" if paths || s.has(&["-f", "--force", "--pathspec-from-file"]) || s.operands.len() > 1 => {
            Effect::Discards("`git checkout` of files overwrites the changes not committed".to_owned())
        }
        "restore" if !s.has(&["-S", "--staged"]) || s.has(&["-W", "--worktree"]) => {
            Effect::Discards("`git restore` overwrites the changes not committed".to_owned())
        }
        "reset" if s.has(&["--hard"]) => {
            Effect::Discards("`git reset --hard` discards the changes not committed".to_owned())
        }
        // `-f` given twice removes untracked nested repositories, their git directories with them.
        "clean" if forces(rest) >= 2 && !s.has(&["-n", "--dry-run"]) => destroys(
            "`git clean -ff` removes untracked nested repositories with their history, which no snapshot holds",
        ),
        // Configuration on the command line (`-c clean.requireForce=false`) lets `git clean` remove without `-f`.
        "clean" if (s.has(&["-f", "--force"]) || configured) && !s.has(&["-n", "--dry-run"]) => {
            // `-x` and `-X` in a cluster of short options too (`-fdx`); an `x` that is the value of `-e` in a
            // cluster (`-ex`) is taken as `-x` as well, which only asks more.
            // An exclusion that negates (`-e '!*'`) takes ignored files back in as `-x` does.
            let negated = s
                .options
                .iter()
                .filter(|o| o.is_any(&["-e", "--exclude"]))
                .any(|o| {
                    o.value
                        .as_ref()
                        .is_none_or(|v| !v.literal || v.text.starts_with('!'))
                });
            let ignored_too = negated
                || s.has(&["-x", "-X"])
                || rest.iter().any(|w| {
                    w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains(['x', 'X'])
                });
            if ignored_too {
                Effect::Destroys(
                    "`git clean -x` (or an exclusion that negates) removes the files git ignores, which no snapshot holds".to_owned(),
                )
            } else {
                Effect::Discards("`git clean -f` removes the files git does not track".to_owned())
            }
        }
        _ => Effect::Local,
    }
}

/// How many times `git clean`'s words before `--` give `-f`: as `-f`, `--force` (or a prefix of it), or within
/// a cluster of short options (`-ffd`, `-dff`). `-e`'s value in the same cluster ends it (`-fe f`).
fn forces(rest: &[Word]) -> usize {
    rest.iter()
        .take_while(|w| !(w.literal && w.text == "--"))
        .map(|w| {
            let text = w.text.as_str();
            if let Some(long) = text.strip_prefix("--") {
                usize::from(long.len() >= 2 && "force".starts_with(long))
            } else if let Some(short) = text.strip_prefix('-') {
                let cluster = short.split('e').next().unwrap_or_default();
                cluster.chars().filter(|&c| c == 'f').count()
            } else {
                0
            }
        })
        .sum()
}

/// Whether the git sub-command `sub` writes the working tree from a commit other than `HEAD`: `reset --hard`,
/// `--merge` or `--keep` to another commit, `checkout` or `switch` of a branch or commit (not of a new branch from
/// `HEAD`, not `checkout -- PATH` or `checkout .` from the index), `restore --source`, `read-tree -u` of a tree.
/// A word only known at run time may name a commit.
fn from_revision(sub: &str, rest: &[Word], s: &options::Parsed<'_>) -> bool {
    let before_paths = rest
        .iter()
        .position(|w| w.literal && w.text == "--")
        .map_or(rest, |at| rest.get(..at).unwrap_or_default());
    // The words before `--` that are no option: commits, branches, or paths git tells apart at run time.
    let named: Vec<&Word> = before_paths
        .iter()
        .filter(|w| !w.literal || !w.text.starts_with('-'))
        .collect();
    let dynamic = || rest.iter().any(|w| !w.literal);
    match sub {
        // Any mode: a reset to another commit fills the index with that commit's files, which a checkout from the
        // index later in the line (`git reset REV && git checkout -- .`) writes over what git ignores.
        // `--soft` (the last mode given wins) moves `HEAD` alone and leaves the index as it is. Of the words
        // before `--`, only the first may be a commit (`git reset [COMMIT] [--] PATH…`): the rest are paths.
        "reset" => {
            let last_mode = before_paths.iter().rev().find(|w| {
                w.literal
                    && matches!(
                        w.text.as_str(),
                        "--soft" | "--mixed" | "--hard" | "--merge" | "--keep"
                    )
            });
            if last_mode.is_some_and(|w| w.text == "--soft") && !dynamic() {
                return false;
            }
            dynamic()
                || named
                    .first()
                    .is_some_and(|w| !matches!(w.text.as_str(), "HEAD" | "@"))
        }
        // Each of these writes the working tree from other commits than `HEAD` (a merge, a replay of commits, a
        // stash's files, a bisection's checkouts) or from an index they fill.
        "merge" | "pull" | "rebase" | "cherry-pick" | "revert" | "am" | "bisect" | "checkout-index" => true,
        "stash" => rest
            .iter()
            .any(|w| !w.literal || matches!(w.text.as_str(), "pop" | "apply" | "branch")),
        "checkout" | "switch" => {
            // A new branch (`-b NAME`, `-c NAME`) starts at `HEAD` unless a start point follows its name.
            // `--force` is an option of its own (`checkout --force REV`), not short for `--force-create`.
            let force_create =
                s.has(&["--force-create"]) && !rest.iter().any(|w| w.literal && w.text == "--force");
            let creates = s.has(&["-b", "-B", "-c", "-C", "--create", "--orphan"]) || force_create;
            let named = named
                .iter()
                .filter(|w| !(sub == "checkout" && w.literal && w.text == "."))
                .count();
            dynamic() || named > usize::from(creates)
        }
        "restore" => rest.iter().any(|w| {
            !w.literal
                || w.text.starts_with("--so")
                || (w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains('s'))
        }),
        "read-tree" => s.has(&["-u"]) && (dynamic() || !named.is_empty()),
        _ => false,
    }
}

/// Whether a `-c NAME=VALUE` (or `--config-env NAME=VAR`) sets a key that shortens what git keeps of history: the
/// expiry of unreachable objects and of the reflogs (`gc.*`), or the reflogs themselves
/// (`core.logAllRefUpdates`). A name only known at run time may be either.
fn shortens_history(value: &Word) -> bool {
    if !value.literal {
        return true;
    }
    let key = value
        .text
        .split_once('=')
        .map_or(value.text.as_str(), |(key, _)| key);
    let key = key.to_ascii_lowercase();
    key.starts_with("gc.") || key == "core.logallrefupdates"
}

/// Sub-commands none of whose options runs a program: a word of theirs only known at run time may be any option
/// and still leaves git alone writing the repository (`git add $FILES`, `git commit -m x $FLAGS`).
const NO_PROGRAM_OPTIONS: &[&str] = &[
    "add", "rm", "mv", "commit", "tag", "branch", "checkout", "switch", "restore", "reset", "stash", "notes",
    "apply",
];

/// The sub-commands that run a command given in their words, with the operand or the options that give it: the
/// command then runs while git writes the repository.
const RUNS_GIVEN: &[(&str, &[&str], &[&str])] = &[
    ("bisect", &["run"], &[]),
    ("submodule", &["foreach"], &[]),
    ("rebase", &[], &["-x", "--exec"]),
    ("difftool", &[], &["-x", "--extcmd"]),
    (
        "filter-branch",
        &[],
        &[
            "--env-filter",
            "--tree-filter",
            "--index-filter",
            "--parent-filter",
            "--msg-filter",
            "--commit-filter",
            "--tag-name-filter",
        ],
    ),
];

/// Whether `git sub` runs a command its words give (`git bisect run CMD`, `git submodule foreach CMD`, `git rebase
/// -x CMD`); a first operand only known at run time may be the one that does.
fn runs_given_command(sub: &str, s: &options::Parsed<'_>) -> bool {
    RUNS_GIVEN
        .iter()
        .filter(|(name, _, _)| *name == sub)
        .any(|(_, operands, options)| {
            s.has(options)
                || (!operands.is_empty()
                    && s.operands
                        .first()
                        .is_some_and(|o| !o.literal || operands.contains(&o.text.as_str())))
        })
}

/// Whether a `-c NAME=VALUE` (or `--config-env NAME=VAR`) sets a key that makes git run no program: the
/// identity of commits and tags, whether they are signed (with the program the user's configuration names), the
/// default branch, colours, advice and how paths are quoted. A name only known at run time may be any key.
fn runs_nothing(value: &Word) -> bool {
    if !value.literal {
        return false;
    }
    let key = value
        .text
        .split_once('=')
        .map_or(value.text.as_str(), |(key, _)| key)
        .to_ascii_lowercase();
    let identity = ["user.", "author.", "committer."].iter().any(|section| {
        key.strip_prefix(section)
            .is_some_and(|k| ["name", "email"].contains(&k))
    });
    identity
        || [
            "commit.gpgsign",
            "tag.gpgsign",
            "init.defaultbranch",
            "core.quotepath",
            "color.ui",
        ]
        .contains(&key.as_str())
        || key.starts_with("advice.")
}

/// Sections of git's configuration whose values are never credentials.
const GIT_CONFIG_PLAIN_SECTIONS: &[&str] = &[
    "user", "core", "init", "pull", "push", "merge", "rebase", "branch", "color", "diff", "commit", "log",
    "status", "fetch", "tag", "advice", "safe",
];

/// The files a reading `git config` prints from: the user's own (`~/.gitconfig`, `~/.config/git/config`, where
/// tokens live: `http.extraHeader`, URLs with a password) and the repository's (`.git/config`, where a remote's
/// URL may hold a token), each unless a scope option limits it to the other; the system's with `--system`; none
/// when an option names the file (which the option reader reports as a read).
fn config_files(s: &options::Parsed<'_>, c: &mut Classified) {
    if s.has(&["-f", "--file", "--blob"]) {
        return;
    }
    // One key of a section that holds no credentials (`git config user.name`, `git config --get core.editor`)
    // prints only that key's values.
    // Compared as written: `--get` also abbreviates `--get-regexp`, which lists.
    let listing = s.options.iter().any(|o| {
        ["--list", "-l", "--get-regexp", "--get-urlmatch"].contains(&o.name.as_ref())
            || (o.name.starts_with("--get-") && !"--get-all".starts_with(o.name.as_ref()))
            || (o.name.starts_with("--li") && "--list".starts_with(o.name.as_ref()))
    }) || s.operands.first().is_some_and(|o| o.text == "list");
    let key = s
        .options
        .iter()
        .filter(|o| o.is("--get") || o.is("--get-all"))
        .find_map(|o| o.value.as_ref())
        .or_else(|| s.operands.iter().copied().find(|o| o.text != "get"));
    if !listing
        && let Some(key) = key
        && key.literal
        && key.text.split_once('.').is_some_and(|(section, _)| {
            GIT_CONFIG_PLAIN_SECTIONS.contains(&section.to_ascii_lowercase().as_str())
        })
    {
        return;
    }
    if s.has(&["--system"]) {
        c.read(&Word::literal("/etc/gitconfig"), AccessVia::Operand);
        return;
    }
    let repository = s.has(&["--local", "--worktree"]);
    if !repository {
        for file in ["~/.gitconfig", "~/.config/git/config"] {
            c.read(&crate::word::path_word(file), AccessVia::Operand);
        }
    }
    if repository || !s.has(&["--global"]) {
        repository_config(c);
    }
}

/// The configuration file `git config` changes when it is not the repository's (which the sandbox keeps from git):
/// the user's with `--global`, the machine's with `--system`, the one `--file` names.
fn config_written(s: &options::Parsed<'_>, c: &mut Classified) {
    if let Some(file) = s
        .options
        .iter()
        .filter(|o| o.is_any(&["-f", "--file"]))
        .find_map(|o| o.value.as_ref())
    {
        c.write(file, AccessVia::Flag);
    } else if s.has(&["--global"]) {
        c.write(&crate::word::path_word("~/.gitconfig"), AccessVia::Operand);
    } else if s.has(&["--system"]) {
        c.write(&Word::literal("/etc/gitconfig"), AccessVia::Operand);
    }
}

/// A read of the repository's configuration where git runs (`.git/config`, relative to the working directory or
/// `-C`): the content check of the decision sees a token in a remote's URL before git prints it.
fn repository_config(c: &mut Classified) {
    c.read(&Word::literal(".git/config"), AccessVia::Discovered);
}

/// The files a read-only sub-command reads by name: the paths of `REV:PATH` (a file's content in history,
/// `git show HEAD:.env`), pathspecs after `--` (`git log -p -- .env`), every operand of `diff`, `blame` and
/// `annotate` (`git diff --no-index A B` reads any two files), and everything `git grep` searches.
fn paths(sub: &str, rest: &[Word], s: &options::Parsed<'_>, c: &mut Classified) {
    let dashes = rest.iter().position(|w| w.literal && w.text == "--");
    let after_dashes = |word: &Word| {
        dashes.is_some_and(|at| {
            rest.get(at + 1..)
                .is_some_and(|r| r.iter().any(|w| std::ptr::eq(w, word)))
        })
    };
    let blobs = s
        .options
        .iter()
        .filter(|o| o.is("--blob"))
        .filter_map(|o| o.value.as_ref());
    for word in s.operands.iter().copied().chain(blobs) {
        if let Some((_, path)) = word
            .text
            .split_once(':')
            .filter(|_| word.literal && !word.text.starts_with(":("))
            .filter(|(_, path)| !path.is_empty() && !path.starts_with("//"))
        {
            c.read(&Word::literal(path), AccessVia::Operand);
        } else if matches!(sub, "diff" | "blame" | "annotate") || after_dashes(word) {
            c.read(word, AccessVia::Operand);
        }
    }
    // `git worktree add /elsewhere`: the working trees it makes, moves or deletes are written.
    if sub == "worktree"
        && let Some((verb, rest)) = s.operands.split_first()
        && let Some((_, count)) = knowledge::GIT_WORKTREE_WRITES
            .iter()
            .find(|(name, _)| verb.literal && *name == verb.text)
    {
        for word in rest.iter().take(count.unwrap_or(usize::MAX)) {
            c.write(word, AccessVia::Operand);
        }
    }
    // `git rm PATH` removes the files from the working tree too (not with `--cached`): every word that is no
    // option, since git's common options would take `-f`'s next word as a value.
    if sub == "rm" && !s.has(&["--cached"]) {
        for word in rest.iter().filter(|w| !w.literal || !w.text.starts_with('-')) {
            c.write(word, AccessVia::Operand);
        }
    }
    // `git mailinfo MSG PATCH` writes the message and the patch it splits from its input; `git merge-file CURRENT
    // BASE OTHER` reads the three and writes the merge into CURRENT unless it prints it.
    let written = match sub {
        "mailinfo" => s.operands.get(..2).unwrap_or(&s.operands),
        "merge-file" if !s.has(&["-p", "--stdout"]) => s.operands.get(..1).unwrap_or_default(),
        _ => &[],
    };
    for word in written {
        c.write(word, AccessVia::Operand);
    }
    if sub == "merge-file" {
        for word in &s.operands {
            c.read(word, AccessVia::Operand);
        }
    }
    // `git clone URL DIR` and `git init DIR` make the repository at DIR, `git bundle create FILE` the bundle.
    let made = match sub {
        "clone" => s.operands.get(1),
        "init" => s.operands.first(),
        "bundle"
            if s.operands
                .first()
                .is_some_and(|o| o.literal && o.text == "create") =>
        {
            s.operands.get(1)
        }
        _ => None,
    };
    if let Some(dir) = made {
        c.write(dir, AccessVia::Operand);
    }
    if sub == "grep" {
        // It reads every tracked file below the working directory (or the pathspecs), hidden ones included.
        c.recursive = Recursion::All;
    }
    // `git ls-files` prints the names of the tracked files below the working directory (or the pathspecs).
    let formats = s.has(&[
        "-s",
        "--stage",
        "-t",
        "-v",
        "-f",
        "--debug",
        "--format",
        "--eol",
        "-u",
        "--unmerged",
    ]);
    if sub == "ls-files" && !formats {
        let mut starts: Vec<Word> = s.operands.iter().map(|w| (*w).clone()).collect();
        let filtered = !starts.is_empty() || !s.options.is_empty();
        if starts.is_empty() {
            starts.push(Word::literal("."));
        }
        c.lists = Some(Found {
            starts,
            filtered,
            hidden: true,
            names: Vec::new(),
        });
    }
    // `git diff --name-only` prints the paths of the changed files relative to the top of the repository, which the
    // command reading them finds from the working directory: below it, whatever the revisions and pathspecs. Only
    // with options that print those names alone (`--no-index` prints the paths it is given, `--line-prefix` text
    // of the line's own).
    let names_alone = s.options.iter().all(|o| {
        o.is_any(&[
            "--name-only",
            "--cached",
            "--staged",
            "--relative",
            "-z",
            "--diff-filter",
            "-M",
            "-C",
            "-R",
            "--find-renames",
            "--find-copies",
            "--no-renames",
            "--ignore-submodules",
            "--merge-base",
            "-a",
            "--text",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
        ])
    });
    if sub == "diff" && s.has(&["--name-only"]) && names_alone && !s.dynamic {
        c.lists = Some(Found {
            starts: vec![Word::literal(".")],
            filtered: true,
            hidden: true,
            names: Vec::new(),
        });
    }
}

/// Whether a git format verifies signatures: a pretty format's `%G…` placeholder, or the `%(signature…)` atom of
/// `for-each-ref`, `branch` and `tag` (`%%` is a literal percent sign).
fn verifies_signatures(format: &str) -> bool {
    let mut rest = format;
    while let Some(at) = rest.find('%') {
        let after = rest.get(at + 1..).unwrap_or_default();
        if after.starts_with('G') || after.starts_with("(signature") {
            return true;
        }
        // The character after `%` is consumed either way, so `%%G` is a percent sign and a `G`.
        let skip = after.chars().next().map_or(0, char::len_utf8);
        rest = after.get(skip..).unwrap_or_default();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Word> {
        text.split_whitespace().map(Word::literal).collect()
    }

    #[test]
    fn the_forces_of_a_cleaning_are_counted_in_every_spelling() {
        for (args, count) in [
            ("-fd", 1),
            ("-ffd", 2),
            ("-dff", 2),
            ("-f -f -d", 2),
            ("--force --force", 2),
            ("--fo -f", 2),
            ("-fe f", 1),
            ("-ef", 0),
            ("-d -- -f -f", 0),
            ("-n -d", 0),
        ] {
            assert_eq!(forces(&words(args)), count, "{args}");
        }
    }

    #[test]
    fn a_component_named_git_is_a_git_directory_in_any_case() {
        assert!(names_git_dir(".git") && names_git_dir(".GIT"));
        assert!(!names_git_dir(".gitignore") && !names_git_dir("repo.git") && !names_git_dir("git"));
    }
}
