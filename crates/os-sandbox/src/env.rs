//! The environment a sandboxed command gets: the caller's, without the variables that carry credentials or
//! point at sockets that act for the user.

use std::ffi::{OsStr, OsString};

use crate::error::{Result, SandboxError};

/// Names of variables that carry credentials, as patterns with `*` (compared without regard to ASCII case).
const CREDENTIALS: &[&str] = &[
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
    "*_KEY",
    "*_AUTH",
    "*_AUTH_*",
    "*_PAT",
    "*COOKIE*",
    "*_DSN",
    "AWS_*",
    "ANTHROPIC_*",
    "OPENAI_*",
    "AZURE_*",
    "VAULT_*",
    "GITHUB_TOKEN",
    "GH_TOKEN",
];

/// Variables that point at a socket or a credential cache that acts for the user: an ssh agent signs as the
/// user, the session bus starts programs, the Docker socket is root, an X server takes keystrokes.
const AGENTS: &[&str] = &[
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "DOCKER_HOST",
    "CONTAINER_HOST",
    "KRB5CCNAME",
    "XAUTHORITY",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "PULSE_SERVER",
    "XDG_RUNTIME_DIR",
];

/// Which variables a sandboxed command does not get.
///
/// A variable is removed when its name matches a credential pattern (`*_TOKEN`-like names, `AWS_*`,
/// `ANTHROPIC_*`, …, extended by settings), when it points at an agent socket (`SSH_AUTH_SOCK`, the session bus,
/// `DOCKER_HOST`, …; kept for a command allowed the network, which needs `ssh-agent` for `git push`), or when its
/// value is a URL with a password (`postgres://user:secret@host`). A name on the keep-list is never removed.
#[derive(Debug, Clone)]
pub struct EnvPolicy {
    remove: Vec<String>,
    keep: Vec<String>,
}

impl Default for EnvPolicy {
    fn default() -> Self {
        Self {
            remove: CREDENTIALS.iter().map(|p| p.to_ascii_uppercase()).collect(),
            keep: Vec::new(),
        }
    }
}

impl EnvPolicy {
    /// The default policy with more name patterns to remove and names (or patterns) to keep.
    ///
    /// # Errors
    /// [`SandboxError::EnvPattern`] naming a pattern that is empty or holds something other than a variable
    /// name's characters and `*`.
    pub fn with_settings<R, K>(mut self, remove: R, keep: K) -> Result<Self>
    where
        R: IntoIterator,
        R::Item: AsRef<str>,
        K: IntoIterator,
        K::Item: AsRef<str>,
    {
        for (list, patterns) in [
            (&mut self.remove, collect(remove)?),
            (&mut self.keep, collect(keep)?),
        ] {
            list.extend(patterns);
        }
        Ok(self)
    }

    /// Why the variable `name=value` is removed for a command with or without the network, or `None` when it
    /// is kept.
    pub fn removes(&self, name: &OsStr, value: &OsStr, network: bool) -> Option<&'static str> {
        let upper = name.to_string_lossy().to_ascii_uppercase();
        if self.keep.iter().any(|pattern| matches(pattern, &upper)) {
            return None;
        }
        // An agent socket is decided by the network alone: `SSH_AUTH_SOCK` matches `*_AUTH_*`, yet a `git push`
        // the user allowed needs it.
        if AGENTS.contains(&upper.as_str()) {
            return (!network).then_some("it points at a socket that acts for the user");
        }
        if self.remove.iter().any(|pattern| matches(pattern, &upper)) {
            return Some("its name marks a credential");
        }
        if url_with_password(&value.to_string_lossy()) {
            return Some("its value is a URL with a password");
        }
        None
    }

    /// `vars` without the removed ones.
    pub fn filter<I>(&self, vars: I, network: bool) -> Vec<(OsString, OsString)>
    where
        I: IntoIterator<Item = (OsString, OsString)>,
    {
        vars.into_iter()
            .filter(|(name, value)| self.removes(name, value, network).is_none())
            .collect()
    }
}

fn collect<I>(patterns: I) -> Result<Vec<String>>
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    patterns
        .into_iter()
        .map(|pattern| {
            let pattern = pattern.as_ref();
            let valid = !pattern.is_empty()
                && pattern
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'*');
            if valid {
                Ok(pattern.to_ascii_uppercase())
            } else {
                Err(SandboxError::EnvPattern(pattern.to_owned()))
            }
        })
        .collect()
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters. Both are upper case.
fn matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return false;
    };
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*`: the whole name.
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = rest.get(at + part.len()..).unwrap_or_default(),
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// A `scheme://user:password@host` URL anywhere in the value.
fn url_with_password(value: &str) -> bool {
    value.match_indices("://").any(|(at, sep)| {
        let authority = value
            .get(at + sep.len()..)
            .unwrap_or_default()
            .split(['/', '?', '#', ' '])
            .next()
            .unwrap_or_default();
        authority
            .rsplit_once('@')
            .is_some_and(|(userinfo, _)| userinfo.split_once(':').is_some_and(|(_, pw)| !pw.is_empty()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn removed(name: &str, value: &str) -> bool {
        EnvPolicy::default()
            .removes(OsStr::new(name), OsStr::new(value), false)
            .is_some()
    }

    #[test]
    fn credentials_are_removed() {
        for name in [
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "NPM_TOKEN",
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_PROFILE",
            "STRIPE_SECRET",
            "DB_PASSWORD",
            "my_api_key",
            "SIGNING_KEY",
            "SSH_AUTH_SOCK",
            "DBUS_SESSION_BUS_ADDRESS",
            "DOCKER_HOST",
        ] {
            assert!(removed(name, "x"), "{name}");
        }
        assert!(removed("DATABASE_URL", "postgres://app:hunter2@db:5432/app"));
    }

    #[test]
    fn ordinary_variables_stay() {
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "TERM",
            "USER",
            "CARGO_HOME",
            "KEYBOARD",
            "MONKEY",
            "GIT_AUTHOR_NAME",
        ] {
            assert!(!removed(name, "x"), "{name}");
        }
        assert!(!removed("DATABASE_URL", "postgres://db:5432/app"));
        assert!(!removed("URL", "https://user@example.com/"));
        let policy = EnvPolicy::default();
        assert!(
            policy
                .removes(OsStr::new("SSH_AUTH_SOCK"), OsStr::new("/tmp/a"), true)
                .is_none()
        );
    }

    #[test]
    fn settings_extend_and_keep() {
        let policy = EnvPolicy::default()
            .with_settings(["INTERNAL_*"], ["CI_JOB_TOKEN"])
            .unwrap();
        assert!(
            policy
                .removes(OsStr::new("INTERNAL_URL"), OsStr::new("x"), false)
                .is_some()
        );
        assert!(
            policy
                .removes(OsStr::new("CI_JOB_TOKEN"), OsStr::new("x"), false)
                .is_none()
        );
        let error = EnvPolicy::default()
            .with_settings(["A-B"], Vec::<String>::new())
            .unwrap_err();
        assert!(error.to_string().contains("`A-B`"), "{error}");
    }

    #[test]
    fn patterns() {
        assert!(matches("*_KEY", "A_KEY"));
        assert!(!matches("*_KEY", "KEYBOARD"));
        assert!(matches("*TOKEN*", "TOKEN"));
        assert!(matches("AWS_*", "AWS_"));
        assert!(matches("A*B*C", "AXXBYYC"));
        assert!(!matches("A*B*C", "ACB"));
        assert!(matches("PATH", "PATH"));
        assert!(!matches("PATH", "PATHS"));
    }
}
