//! The environment a sandboxed command gets: the caller's, without the variables that carry credentials or
//! point at sockets that act for the user.

use std::ffi::{OsStr, OsString};

use agent_tool_traits::{credential_variable, variable_matches};

use crate::error::{KernelSandboxError, Result};

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
/// A variable is removed when its name marks a credential (the workspace's one list,
/// [`credential_variable`](agent_tool_traits::credential_variable): `*TOKEN*`, `AWS_*`, `ANTHROPIC_*`, …; or a
/// pattern the settings add), when it points at an agent socket (`SSH_AUTH_SOCK`, the session bus,
/// `DOCKER_HOST`, …; kept for a command allowed the network, which needs `ssh-agent` for `git push`), or when its
/// value is a URL with a password (`postgres://user:secret@host`). A name on the keep-list is never removed.
#[derive(Debug, Clone, Default)]
pub struct EnvPolicy {
    /// Patterns the settings add to the credential names.
    remove: Vec<String>,
    keep: Vec<String>,
}

impl EnvPolicy {
    /// The default policy with more name patterns to remove and names (or patterns) to keep.
    ///
    /// # Errors
    /// [`KernelSandboxError::EnvPattern`] naming a pattern that is empty or holds something other than a variable
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
        if self.keep.iter().any(|pattern| variable_matches(pattern, &upper)) {
            return None;
        }
        // An agent socket is decided by the network alone: `SSH_AUTH_SOCK` matches `*_AUTH_*`, yet a `git push`
        // the user allowed needs it.
        if AGENTS.contains(&upper.as_str()) {
            return (!network).then_some("it points at a socket that acts for the user");
        }
        if credential_variable(&upper).is_some()
            || self
                .remove
                .iter()
                .any(|pattern| variable_matches(pattern, &upper))
        {
            return Some("its name marks a credential");
        }
        let value = value.to_string_lossy();
        if url_with_password(&value) {
            return Some("its value is a URL with a password");
        }
        if looks_like_a_credential(&value) {
            return Some("its value has the shape of a credential");
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
                Err(KernelSandboxError::EnvPattern(pattern.to_owned()))
            }
        })
        .collect()
}

/// The fixed prefixes of tokens that their issuers made recognisable (GitHub, GitLab, Slack, OpenAI and
/// Anthropic, Stripe, Hugging Face, npm, PyPI, Google, SendGrid) and of private keys.
const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxs-",
    "xapp-",
    "sk-",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "hf_",
    "npm_",
    "pypi-",
    "AIza",
    "SG.",
    "-----BEGIN",
];

/// Whether a value has the shape of a credential whatever its name: a token with an issuer's prefix, an AWS
/// access key id, a JSON Web Token, or a connection string with a password.
fn looks_like_a_credential(value: &str) -> bool {
    let value = value.trim();
    let token_like = |rest: &str| {
        rest.len() >= 8
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'='))
    };
    let prefixed = TOKEN_PREFIXES.iter().any(|prefix| {
        value
            .strip_prefix(prefix)
            .is_some_and(|rest| *prefix == "-----BEGIN" || token_like(rest))
    });
    // AKIA/ASIA followed by 16 upper-case letters and digits.
    let aws_key_id = (value.starts_with("AKIA") || value.starts_with("ASIA"))
        && value.len() == 20
        && value
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
    // Three base64url segments, the first a JSON header.
    let jwt = value.starts_with("eyJ")
        && value.split('.').count() == 3
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    let lower = value.to_ascii_lowercase();
    let connection_string = ["password=", "pwd=", "passwd="]
        .iter()
        .any(|key| lower.contains(key));
    prefixed || aws_key_id || jwt || connection_string
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
    fn credentials_by_value_are_removed() {
        for value in [
            "ghp_0123456789abcdefghijABCDEFGHIJ012345",
            "github_pat_11ABCDEFG0123456789",
            "sk-ant-api03-abcdefghijklmnop",
            "sk_live_51H8abcdefghijklmnop",
            "xoxb-123456789012-abcdefghij",
            "AKIAIOSFODNN7EXAMPLE",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
            "Server=db;User Id=app;Password=hunter2;",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
        ] {
            assert!(removed("NEUTRAL_NAME", value), "{value}");
        }
        for name in [
            "MYSQL_PWD",
            "SSHPASS",
            "REDIS_PASS",
            "SMTP_PASS",
            "LDAP_BIND_PW",
            "CI_JOB_JWT",
            "KEY",
            "SLACK_WEBHOOK_URL",
            "BUNDLE_GITHUB__COM",
            "AUTH_BEARER",
            "DB_CONNECTION_STRING",
        ] {
            assert!(removed(name, "x"), "{name}");
        }
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
            "PWD",
            "OLDPWD",
            "SHELL",
            "EDITOR",
            "PASSTHROUGH_MODE",
        ] {
            assert!(!removed(name, "x"), "{name}");
        }
        // A connection string is removed by its value when it holds a password, and by its name alone when the
        // name marks one: the shell analysis asks before such a name is printed, so the sandbox keeps it out.
        assert!(removed("DATABASE_URL", "postgres://db:5432/app"));
        assert!(!removed("DB_HOST", "postgres://db:5432/app"));
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
}
