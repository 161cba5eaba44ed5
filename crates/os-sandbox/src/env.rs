//! The environment a sandboxed command gets: of the caller's, the variables a shell and the tool chains need (an
//! allow list), without those that carry credentials or point at sockets that act for the user.

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

/// The variables a sandboxed command gets (names, or patterns with `*`, compared in upper case): what a shell, a
/// terminal and the locale need, the tool chains' homes and build settings, the trust stores and proxies of the
/// network, and the agent sockets of [`AGENTS`] (which the network decides). Every other variable of the caller is
/// left out, whatever its name: a credential under a name nobody listed does not reach the command. The patterns
/// are wide only where a tool's own prefix holds its settings (`CARGO_*`, `PIP_*`, `NPM_CONFIG_*`); the
/// credentials among them (`CARGO_REGISTRY_TOKEN`, `PIP_INDEX_URL` with a password) are still removed by name or
/// by value.
const PASSED: &[&str] = &[
    // The shell, the terminal, the locale and time.
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "PWD",
    "OLDPWD",
    "SHLVL",
    "TMPDIR",
    "TERM",
    "COLORTERM",
    "TERMINFO",
    "TERMINFO_DIRS",
    "COLUMNS",
    "LINES",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "LESS",
    "MANPATH",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CONFIG_DIRS",
    "XDG_DATA_DIRS",
    "CI",
    "DEBIAN_FRONTEND",
    "SOURCE_DATE_EPOCH",
    // git's identity when the caller sets it (its configuration comes from a generated file).
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    // Trust stores and proxies of the network.
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "CURL_CA_BUNDLE",
    "REQUESTS_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "GIT_SSL_CAINFO",
    "NIX_SSL_CERT_FILE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    // C and C++ builds.
    "CC",
    "CXX",
    "AR",
    "LD",
    "CFLAGS",
    "CXXFLAGS",
    "CPPFLAGS",
    "LDFLAGS",
    "MAKEFLAGS",
    "PKG_CONFIG_PATH",
    "LD_LIBRARY_PATH",
    "LIBRARY_PATH",
    "CPATH",
    "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH",
    // Rust.
    "CARGO_*",
    "RUSTUP_*",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "RUSTC_WRAPPER",
    "RUST_BACKTRACE",
    "RUST_LOG",
    // Go.
    "GOPATH",
    "GOROOT",
    "GOBIN",
    "GOMODCACHE",
    "GOCACHE",
    "GOFLAGS",
    "GOPROXY",
    "GONOPROXY",
    "GOPRIVATE",
    "GONOSUMDB",
    "GOSUMDB",
    "GOTOOLCHAIN",
    "GO111MODULE",
    "GOOS",
    "GOARCH",
    "CGO_ENABLED",
    // Python.
    "VIRTUAL_ENV",
    "VIRTUAL_ENV_PROMPT",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "CONDA_EXE",
    "CONDA_PYTHON_EXE",
    "CONDA_SHLVL",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUNBUFFERED",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
    "PYTHONWARNINGS",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "PIP_*",
    "UV_*",
    "POETRY_*",
    // JavaScript.
    "NODE_ENV",
    "NODE_OPTIONS",
    "NODE_PATH",
    "NVM_DIR",
    "NVM_BIN",
    "NVM_INC",
    "NPM_CONFIG_*",
    "YARN_*",
    "PNPM_HOME",
    "COREPACK_*",
    "BUN_INSTALL",
    "VOLTA_HOME",
    "DENO_DIR",
    // JVM, Ruby, .NET, version managers.
    "JAVA_HOME",
    "JAVA_TOOL_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "MAVEN_OPTS",
    "MAVEN_HOME",
    "M2_HOME",
    "GRADLE_USER_HOME",
    "GRADLE_OPTS",
    "SBT_OPTS",
    "SDKMAN_DIR",
    "GEM_HOME",
    "GEM_PATH",
    "RBENV_ROOT",
    "RBENV_VERSION",
    "DOTNET_ROOT",
    "DOTNET_CLI_TELEMETRY_OPTOUT",
    "NUGET_PACKAGES",
    "ASDF_DIR",
    "ASDF_DATA_DIR",
    "MISE_DATA_DIR",
];

/// Which variables a sandboxed command gets.
///
/// A variable is passed when its name is on the allow list (`PASSED` in env.rs: the shell's, the locale's, the tool
/// chains'), or on the settings' `pass` list (`agentGuard.sandbox.env`) or `keep` list (`agentGuard.sandboxEnv`);
/// every other variable is left out. Of the passed ones a variable is still removed when its name marks a
/// credential (the workspace's one list,
/// [`credential_variable`](agent_tool_traits::credential_variable): `*TOKEN*`, `AWS_*`, `ANTHROPIC_*`, …; or a
/// pattern the settings add), when it points at an agent socket (`SSH_AUTH_SOCK`, the session bus,
/// `DOCKER_HOST`, …; kept for a command allowed the network, which needs `ssh-agent` for `git push`), or when its
/// value has the shape of a credential (a URL with a password, a token with its issuer's prefix). A name on the
/// keep-list is never removed: `keep` is the user's word that the variable is a credential the command needs.
#[derive(Debug, Clone, Default)]
pub struct EnvPolicy {
    /// Patterns the settings add to the credential names.
    remove: Vec<String>,
    /// Names and patterns never removed.
    keep: Vec<String>,
    /// Names and patterns passed besides [`PASSED`], credentials still removed.
    pass: Vec<String>,
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

    /// This policy with more names (or patterns) passed besides the shell's and the tool chains' variables
    /// (`agentGuard.sandbox.env`); a credential among them is still removed, by its name or its value.
    ///
    /// # Errors
    /// [`KernelSandboxError::EnvPattern`] naming a pattern that is empty or holds something other than a variable
    /// name's characters and `*`.
    pub fn with_passed<P>(mut self, pass: P) -> Result<Self>
    where
        P: IntoIterator,
        P::Item: AsRef<str>,
    {
        self.pass.extend(collect(pass)?);
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
        let passed = PASSED
            .iter()
            .copied()
            .chain(self.pass.iter().map(String::as_str))
            .any(|pattern| name_matches(pattern, &upper));
        if !passed {
            return Some("it is not a variable of the shell or a tool chain");
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

    /// Whether the variable `name` never reaches a sandboxed command, whatever its value and whether the command
    /// has the network: it is not passed, or its name marks a credential, and no keep-list entry keeps it.
    pub fn withholds(&self, name: &str) -> bool {
        let name = OsStr::new(name);
        let empty = OsStr::new("");
        self.removes(name, empty, true).is_some() && self.removes(name, empty, false).is_some()
    }

    /// The keep-list (`agentGuard.sandboxEnv.keep`): variables passed to a sandboxed command whatever they hold,
    /// credentials included, upper case.
    pub fn kept(&self) -> &[String] {
        &self.keep
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

/// Whether the upper-case name `upper` matches the upper-case `pattern`: the allow list is compared on every
/// variable of every command, so a plain name or a prefix pattern is compared without allocating.
fn name_matches(pattern: &str, upper: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == upper,
        Some((prefix, "")) => upper.starts_with(prefix),
        Some(_) => variable_matches(pattern, upper),
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

    /// Whether a policy that passes every name still removes `name=value`: the credential checks alone.
    fn removed_as_credential(name: &str, value: &str) -> bool {
        EnvPolicy::default()
            .with_passed(["*"])
            .unwrap()
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
            assert!(removed_as_credential("NEUTRAL_NAME", value), "{value}");
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
            assert!(removed_as_credential(name, "x"), "{name}");
        }
    }

    #[test]
    fn ordinary_variables_stay() {
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "LC_ALL",
            "TERM",
            "USER",
            "CARGO_HOME",
            "RUSTFLAGS",
            "GOFLAGS",
            "VIRTUAL_ENV",
            "NODE_ENV",
            "GIT_AUTHOR_NAME",
            "PWD",
            "OLDPWD",
            "SHELL",
            "EDITOR",
            "CI",
            "TZ",
            "npm_config_cache",
            "http_proxy",
        ] {
            assert!(!removed(name, "x"), "{name}");
        }
        // Names that only look like credentials are not removed as such (a setting may pass them).
        for name in ["KEYBOARD", "MONKEY", "PASSTHROUGH_MODE"] {
            assert!(!removed_as_credential(name, "x"), "{name}");
        }
        // A connection string is removed by its value when it holds a password, and by its name alone when the
        // name marks one: the shell analysis asks before such a name is printed, so the sandbox keeps it out.
        assert!(removed_as_credential("DATABASE_URL", "postgres://db:5432/app"));
        assert!(!removed_as_credential("DB_HOST", "postgres://db:5432/app"));
        assert!(!removed_as_credential("URL", "https://user@example.com/"));
        let policy = EnvPolicy::default();
        assert!(
            policy
                .removes(OsStr::new("SSH_AUTH_SOCK"), OsStr::new("/tmp/a"), true)
                .is_none()
        );
    }

    #[test]
    fn variables_off_the_allow_list_are_left_out_whatever_their_names() {
        for name in [
            "AUTHORIZATION",
            "HTTP_AUTHORIZATION",
            "MNEMONIC",
            "SEED_PHRASE",
            "DSN",
            "SENTRY_DSN",
            "LICENSE",
            "X_MY_APP_CONFIG",
            "GIT_CONFIG_PARAMETERS",
            "GIT_CONFIG_GLOBAL",
            "GIT_ASKPASS",
            "LD_PRELOAD",
        ] {
            assert!(removed(name, "ordinary"), "{name}");
        }
        // The shell's and the tool chains' variables still lose a credential by value or by name.
        assert!(removed(
            "PIP_INDEX_URL",
            "https://u:hunter2@pypi.example.com/simple"
        ));
        assert!(removed("CARGO_REGISTRY_TOKEN", "x"));
        assert!(removed(
            "NODE_OPTIONS",
            "ghp_0123456789abcdefghijABCDEFGHIJ012345"
        ));
    }

    #[test]
    fn passed_names_lose_credentials_and_kept_names_do_not() {
        let policy = EnvPolicy::default()
            .with_passed(["MY_APP_*"])
            .unwrap()
            .with_settings(Vec::<String>::new(), ["MY_DEPLOY_TOKEN"])
            .unwrap();
        let removes = |name: &str, value: &str| policy.removes(OsStr::new(name), OsStr::new(value), false);
        assert_eq!(removes("MY_APP_MODE", "fast"), None);
        assert!(removes("MY_APP_URL", "postgres://app:hunter2@db/app").is_some());
        assert!(removes("MY_APP_TOKEN", "x").is_some());
        assert_eq!(
            removes("MY_DEPLOY_TOKEN", "ghp_0123456789abcdefghijABCDEFGHIJ012345"),
            None
        );
        assert!(removes("OTHER", "x").is_some());
    }

    #[test]
    fn settings_extend_and_keep() {
        // `remove` applies to what the allow list and `sandbox.env` pass.
        let policy = EnvPolicy::default()
            .with_settings(["INTERNAL_*", "NODE_OPTIONS"], ["CI_JOB_TOKEN"])
            .unwrap()
            .with_passed(["INTERNAL_*"])
            .unwrap();
        for name in ["INTERNAL_URL", "NODE_OPTIONS"] {
            assert!(
                policy.removes(OsStr::new(name), OsStr::new("x"), false).is_some(),
                "{name}"
            );
        }
        assert!(
            policy
                .removes(OsStr::new("NODE_ENV"), OsStr::new("x"), false)
                .is_none()
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
    fn a_variable_is_withheld_whatever_its_value_unless_passed_or_kept() {
        let policy = EnvPolicy::default()
            .with_settings(Vec::<String>::new(), ["CI_JOB_TOKEN"])
            .unwrap()
            .with_passed(["MY_APP_*"])
            .unwrap();
        // Off the allow list, or a credential by name among the passed ones.
        for name in [
            "MY_API_TOKEN",
            "GITHUB_TOKEN",
            "CARGO_REGISTRY_TOKEN",
            "MY_APP_SECRET",
            "AUTHORIZATION",
        ] {
            assert!(policy.withholds(name), "{name}");
        }
        // Passed (its value may still be removed at run time, but not by its name alone), or kept.
        for name in ["PATH", "HOME", "MY_APP_URL", "CI_JOB_TOKEN"] {
            assert!(!policy.withholds(name), "{name}");
        }
        // An agent socket is passed to a command with the network.
        assert!(!policy.withholds("SSH_AUTH_SOCK"));
        assert_eq!(policy.kept(), ["CI_JOB_TOKEN"]);
        assert!(EnvPolicy::default().kept().is_empty());
    }
}
