//! The directories a shell command line may move to with `cd`/`pushd` before it uses relative paths.

use agent_bash_guard::CommandAnalysis;

/// The moves of one command line. The analysis reports paths as written; the shell resolves them against its
/// working directory at that moment. Scoping (subshells, pipelines) is not modelled: a relative path used after a
/// move is checked both where it would be without the move and under every directory moved to before it, which
/// over-approximates and never misses one.
#[derive(Debug, Default)]
pub(super) struct DirectoryMoves {
    /// Every move whose target is known, in order.
    pub(super) moves: Vec<Move>,
    /// Why the target of some move cannot be known (a variable, `cd -`, `popd`, a directory-stack tilde, too many
    /// combinations).
    pub(super) unknown: Option<String>,
}

/// One `cd`, `pushd` or `chdir` of a command line.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Move {
    /// The index of the moving command in the analysis.
    pub(super) command: usize,
    /// The directories it may lead to, relative ones joined to the earlier moves.
    pub(super) targets: Vec<String>,
}

/// More combinations of chained relative moves than this are not followed; the call is asked instead.
const MAX_MOVE_TARGETS: usize = 16;

impl DirectoryMoves {
    /// The moves of the commands of `analysis`.
    pub(super) fn of(analysis: &CommandAnalysis) -> Self {
        let mut this = Self::default();
        for (index, command) in analysis.commands.iter().enumerate() {
            let effective = command.effective();
            let Some((name, args)) = effective.split_first() else {
                continue;
            };
            match move_target(name, args) {
                Target::NotAMove => {}
                Target::Unknown => {
                    this.unknown = Some(format!(
                        "`{}` moves to a directory only known at run time; later relative paths cannot be checked",
                        effective.join(" ")
                    ));
                }
                Target::Known(target) => this.push(index, target),
            }
        }
        this
    }

    /// Records a move of command `index` to `target`, joined to every earlier move when relative.
    fn push(&mut self, index: usize, target: String) {
        let mut targets = Vec::new();
        if !is_anchored(&target) {
            for earlier in &self.moves {
                targets.extend(
                    earlier
                        .targets
                        .iter()
                        .map(|dir| format!("{}/{target}", dir.trim_end_matches('/'))),
                );
            }
        }
        targets.push(target);
        targets.sort();
        targets.dedup();
        if targets.len() > MAX_MOVE_TARGETS {
            self.unknown = Some(
                "too many chained `cd` moves to follow; later relative paths cannot be checked".to_owned(),
            );
            targets.truncate(MAX_MOVE_TARGETS);
        }
        self.moves.push(Move {
            command: index,
            targets,
        });
    }

    /// The paths a relative `path` used by command `command` may name after the moves before it (all moves when
    /// the user is not known, as for a redirection of a compound command).
    pub(super) fn candidates(&self, path: &str, command: Option<usize>) -> Vec<String> {
        if is_anchored(path) {
            return Vec::new();
        }
        let mut out: Vec<String> = self
            .moves
            .iter()
            .filter(|m| command.is_none_or(|c| m.command < c))
            .flat_map(|m| {
                m.targets
                    .iter()
                    .map(|dir| format!("{}/{path}", dir.trim_end_matches('/')))
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

/// Where one command moves.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    /// It does not change the working directory.
    NotAMove,
    /// It moves somewhere only known at run time.
    Unknown,
    /// It moves to this directory, as written (`~` kept).
    Known(String),
}

/// Where the command `name args` moves. Options come first (`cd -P DIR`, `pushd -n DIR`); `--` ends them; `-`
/// alone and `+N`/`-N` of the directory stack are operands.
fn move_target(name: &str, args: &[String]) -> Target {
    if !matches!(name, "cd" | "pushd" | "popd" | "chdir") {
        return Target::NotAMove;
    }
    let options: Vec<&String> = args
        .iter()
        .take_while(|a| a.starts_with('-') && a.len() > 1 && a.as_str() != "--")
        .filter(|a| !a.get(1..).is_some_and(|n| n.chars().all(|c| c.is_ascii_digit())))
        .collect();
    let rest = args.get(options.len()..).unwrap_or_default();
    let rest = rest.strip_prefix(&["--".to_owned()][..]).unwrap_or(rest);
    // `pushd -n`/`popd -n` only change the stack.
    if matches!(name, "pushd" | "popd") && options.iter().any(|o| o.contains('n')) {
        return Target::NotAMove;
    }
    match (name, rest.first()) {
        ("popd", _) | ("pushd", None) => Target::Unknown,
        (_, None) => Target::Known("~".to_owned()),
        (_, Some(t))
            if t == "-"
                || t.starts_with(['+', '-'])
                || t.contains(['$', '`', '*', '?', '['])
                || (t.starts_with('~')
                    && !(t == "~" || t.starts_with("~/") || t == "~+" || t.starts_with("~+/"))) =>
        {
            Target::Unknown
        }
        // `~+` is the directory it is in.
        (_, Some(t)) if t == "~+" => Target::Known(".".to_owned()),
        (_, Some(t)) => Target::Known(t.strip_prefix("~+/").map_or_else(|| t.clone(), str::to_owned)),
    }
}

/// Whether `path` does not depend on the working directory: absolute, or under `~`.
fn is_anchored(path: &str) -> bool {
    path.starts_with('/') || path == "~" || path.starts_with("~/")
}

#[cfg(test)]
mod tests {
    use agent_bash_guard::{BashConfig, BashGuard};

    use super::*;

    fn moves(line: &str) -> DirectoryMoves {
        DirectoryMoves::of(&BashGuard::new(BashConfig::default()).analyze(line))
    }

    fn words(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn options_come_before_the_directory() {
        assert_eq!(
            move_target("cd", &words(&["-P", "src"])),
            Target::Known("src".into())
        );
        assert_eq!(
            move_target("cd", &words(&["--", "src"])),
            Target::Known("src".into())
        );
        assert_eq!(move_target("cd", &[]), Target::Known("~".into()));
        assert_eq!(move_target("pushd", &words(&["-n", "src"])), Target::NotAMove);
        assert_eq!(move_target("ls", &words(&["src"])), Target::NotAMove);
    }

    #[test]
    fn run_time_targets_are_unknown() {
        for args in [&["-"][..], &["+1"], &["$DIR"], &["~user"], &["src*"]] {
            assert_eq!(move_target("cd", &words(args)), Target::Unknown, "{args:?}");
        }
        assert_eq!(move_target("popd", &[]), Target::Unknown);
        assert_eq!(
            move_target("cd", &words(&["~+/src"])),
            Target::Known("src".into())
        );
    }

    #[test]
    fn a_relative_path_after_a_move_names_every_place_it_may_mean() {
        let moves = moves("cd a && cd b && cat key");
        assert_eq!(moves.unknown, None);
        let cat = moves.moves.last().map_or(0, |m| m.command) + 1;
        assert_eq!(moves.candidates("key", Some(cat)), ["a/b/key", "a/key", "b/key"]);
        // Absolute and home paths do not depend on the moves.
        assert!(moves.candidates("/etc/passwd", Some(cat)).is_empty());
        assert!(moves.candidates("~/.ssh/id_rsa", Some(cat)).is_empty());
    }

    #[test]
    fn a_path_used_before_the_move_is_not_moved() {
        let moves = moves("cat key; cd secrets");
        assert_eq!(moves.candidates("key", Some(0)), Vec::<String>::new());
        // A redirection of a compound command is not tied to one command: every move counts.
        assert_eq!(moves.candidates("key", None), ["secrets/key"]);
    }

    #[test]
    fn too_many_chained_moves_are_not_followed() {
        let line: Vec<String> = (0..6).map(|i| format!("cd d{i}")).collect();
        let moves = moves(&line.join(" && "));
        assert!(moves.unknown.is_some_and(|why| why.contains("too many")));
        assert!(moves.moves.iter().all(|m| m.targets.len() <= MAX_MOVE_TARGETS));
    }
}
