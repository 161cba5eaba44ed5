//! The one list of names of environment variables that carry credentials: the shell analysis asks before a
//! command expands or prints one, and the kernel sandbox keeps them from a sandboxed command's environment.

/// Names of variables that carry credentials, as patterns where `*` stands for any run of characters, compared
/// without regard to ASCII case. A name that matches one is a credential for every layer: a list kept per layer
/// drifts, and what one layer lets through the other must still catch.
pub(crate) const CREDENTIAL_VARIABLES: &[&str] = &[
    // What the name says the value is.
    "*TOKEN*",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*PASSPHRASE*",
    "*CREDENTIAL*",
    "*APIKEY*",
    "*API_KEY*",
    "*ACCESS_KEY*",
    "*PRIVATE_KEY*",
    "*AUTH*",
    "*BEARER*",
    "*JWT*",
    "*COOKIE*",
    "*SESSION*",
    "*WEBHOOK*",
    // Connection strings, which carry a password.
    "*DATABASE_URL*",
    "*_DSN*",
    "*CONNECTION_STRING*",
    "*CONN_STR*",
    // Short forms: `GPG_KEY`, `DB_PASS`, `MYSQL_PWD`, `GITLAB_PAT`.
    "KEY",
    "*_KEY",
    "*_KEY_*",
    "*PASS",
    "*_PASS_*",
    "*_PWD",
    "*_PW",
    "*_PAT",
    // Families whose variables configure an account: cloud and model providers, secret stores, registries.
    "AWS_*",
    "ANTHROPIC_*",
    "OPENAI_*",
    "AZURE_*",
    "VAULT_*",
    "BUNDLE_*",
];

/// Names that match a pattern of [`CREDENTIAL_VARIABLES`] and carry no credential: git's author, and the paths of
/// agent and display sockets (the kernel sandbox decides those as sockets, by the network a command has).
pub(crate) const NOT_CREDENTIAL_VARIABLES: &[&str] = &[
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "SSH_AUTH_SOCK",
    "XAUTHORITY",
    "GPG_AGENT_INFO",
];

/// The pattern of the one list of credential variable names (`*TOKEN*`, `*_KEY`, `AWS_*`, …; the list is in
/// this file) that the variable name `name` matches, unless the name is one that matches and carries no
/// credential (`GIT_AUTHOR_NAME`, `SSH_AUTH_SOCK`).
pub fn credential_variable(name: &str) -> Option<&'static str> {
    if NOT_CREDENTIAL_VARIABLES
        .iter()
        .any(|known| known.eq_ignore_ascii_case(name))
    {
        return None;
    }
    CREDENTIAL_VARIABLES
        .iter()
        .copied()
        .find(|pattern| variable_matches(pattern, name))
}

/// Whether the variable name `name` matches `pattern`, where `*` stands for any run of characters, without
/// regard to ASCII case.
pub fn variable_matches(pattern: &str, name: &str) -> bool {
    // Compared byte by byte, ASCII letters folded: no copy of either (this runs for every pattern of the list
    // against every variable a command names).
    let mut parts = pattern.as_bytes().split(|&b| b == b'*').peekable();
    let Some(first) = parts.next() else {
        return false;
    };
    let mut rest = match name.as_bytes().split_at_checked(first.len()) {
        Some((head, rest)) if head.eq_ignore_ascii_case(first) => rest,
        _ => return false,
    };
    if parts.peek().is_none() {
        // No `*`: the whole name.
        return rest.is_empty();
    }
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            // The last part ends the name.
            return rest
                .len()
                .checked_sub(part.len())
                .and_then(|at| rest.get(at..))
                .is_some_and(|tail| tail.eq_ignore_ascii_case(part));
        }
        match find_ignoring_case(rest, part) {
            Some(at) => rest = rest.get(at + part.len()..).unwrap_or_default(),
            None => return false,
        }
    }
    true
}

/// Where `needle` first occurs in `haystack`, ASCII letters folded.
fn find_ignoring_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    haystack
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names_match_without_regard_to_case() {
        for name in [
            "GITHUB_TOKEN",
            "aws_secret_access_key",
            "AWS_PROFILE",
            "DB_PASS",
            "MYSQL_PWD",
            "DATABASE_URL",
            "SENTRY_DSN",
            "NPM_AUTH_TOKEN",
            "KEY",
            "GPG_KEY",
            "TAILSCALE_AUTHKEY",
            "XDG_SESSION_ID",
        ] {
            assert!(credential_variable(name).is_some(), "{name}");
        }
        for name in [
            "HOME",
            "PATH",
            "KEYBOARD",
            "TERM",
            "LANG",
            "EDITOR",
            "GIT_AUTHOR_NAME",
            "SSH_AUTH_SOCK",
        ] {
            assert_eq!(credential_variable(name), None, "{name}");
        }
        assert_eq!(credential_variable("OPENAI_BASE_URL"), Some("OPENAI_*"));
    }

    #[test]
    fn matching_without_copies_matches_as_the_upper_cased_copies_did() {
        // The former definition: both upper-cased, then the parts between the stars found in turn.
        fn copied(pattern: &str, name: &str) -> bool {
            let pattern = pattern.to_ascii_uppercase();
            let name = name.to_ascii_uppercase();
            let mut parts = pattern.split('*');
            let Some(first) = parts.next() else {
                return false;
            };
            let Some(mut rest) = name.strip_prefix(first) else {
                return false;
            };
            let parts: Vec<&str> = parts.collect();
            let Some((last, middle)) = parts.split_last() else {
                return rest.is_empty();
            };
            for part in middle {
                match rest.find(part) {
                    Some(at) => rest = &rest[at + part.len()..],
                    None => return false,
                }
            }
            rest.len() >= last.len() && rest.ends_with(last)
        }
        let mut patterns: Vec<String> = CREDENTIAL_VARIABLES.iter().map(|p| (*p).to_owned()).collect();
        let mut names: Vec<String> = NOT_CREDENTIAL_VARIABLES.iter().map(|n| (*n).to_owned()).collect();
        // Every pattern and name of up to four characters from `a`, `B`, `_`, `*` and `é`.
        let alphabet = ["a", "B", "_", "*", "é"];
        let mut short = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = short
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            short.extend(longer);
            short.dedup();
        }
        short.sort();
        short.dedup();
        patterns.extend(short.iter().cloned());
        names.extend(short.iter().filter(|s| !s.contains('*')).cloned());
        names.extend(
            [
                "GITHUB_TOKEN",
                "aws_secret_access_key",
                "my_api_key",
                "KEY",
                "PATH",
                "HOME",
            ]
            .map(str::to_owned),
        );
        for pattern in &patterns {
            for name in &names {
                assert_eq!(
                    variable_matches(pattern, name),
                    copied(pattern, name),
                    "{pattern:?} {name:?}"
                );
            }
        }
    }

    #[test]
    fn stars_stand_for_any_run() {
        assert!(variable_matches("*_KEY_*", "A_KEY_B"));
        assert!(!variable_matches("*_KEY_*", "A_KEY"));
        assert!(variable_matches("A*B*C", "ABC"));
        assert!(!variable_matches("AB*BA", "ABA"));
        assert!(variable_matches("*", ""));
        assert!(!variable_matches("KEY", "KEYS"));
    }
}
