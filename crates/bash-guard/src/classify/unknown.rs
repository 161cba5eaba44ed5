//! What the words of a program the analysis does not know still say it does.

use crate::word::Word;

/// The words by which a command line says what it does is to delete or reset something: `fastly service delete`,
/// `restic forget`, `rclone purge remote:`, `velero backup delete`, `vault kv destroy`.
const DESTROYING_VERBS: &[&str] = &[
    "delete",
    "del",
    "remove",
    "rm",
    "purge",
    "prune",
    "destroy",
    "drop",
    "uninstall",
    "unregister",
    "reset",
    "forget",
    "wipe",
    "erase",
    "flush",
    "truncate",
    "revoke",
];

/// The word among the first operands of a program the analysis does not know that says it deletes or resets
/// something ([`DESTROYING_VERBS`], in any case): alone (`service delete`, `-X DELETE`), or as the first or last part
/// of a compound word (`delete-job`, `drop_table`, `db:drop`, `force-delete`). A path, a file name or a word only
/// known at run time is none. Such a program's effect is for no snapshot to take back: whatever it deletes, a
/// service's resources or a database, is not the project's files, or it would be a command the analysis knows.
pub(super) fn destroying_verb(args: &[Word]) -> Option<&str> {
    args.iter()
        .filter(|w| !w.text.starts_with('-'))
        .take(4)
        .filter(|w| w.literal && !w.text.contains(['/', '.', '=', ' ']))
        .map(|w| w.text.as_str())
        .find(|word| {
            let lower = word.to_ascii_lowercase();
            let parts: Vec<&str> = lower.split(['-', '_', ':']).filter(|p| !p.is_empty()).collect();
            let ends = [parts.first(), parts.last()];
            ends.iter().flatten().any(|part| DESTROYING_VERBS.contains(part))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program the analysis does not know says by a word among its first operands that it deletes or resets
    /// something: alone, in any case, or as an end of a compound word; never a path, a file name, an option or a
    /// word only known at run time.
    #[test]
    fn a_destroying_verb_among_the_first_operands() {
        let words = |line: &str| -> Vec<Word> { line.split(' ').map(Word::literal).collect() };
        for (args, verb) in [
            ("service delete --service-id abc", Some("delete")),
            ("-X DELETE projects/1/variables/FOO", Some("DELETE")),
            ("forget --keep-last 3 --prune", Some("forget")),
            ("-s http://j.local/ delete-job my-job", Some("delete-job")),
            ("db:drop", Some("db:drop")),
            ("kv force_destroy secret", Some("force_destroy")),
            ("purge remote:bucket", Some("purge")),
            ("list --all", None),
            ("status", None),
            ("build ./delete", None),
            ("open delete.txt", None),
            ("--delete status", None),
            ("deleted", None),
            ("a b c d delete", None),
        ] {
            assert_eq!(destroying_verb(&words(args)), verb, "{args}");
        }
        let mut dynamic = Word::literal("delete");
        dynamic.literal = false;
        assert_eq!(destroying_verb(&[dynamic]), None);
    }
}
