//! The one table of the places that hold secrets: files known by their names wherever they are, and the entries
//! of the home directory that hold credentials. The path checks of this crate read the first; the agent's
//! decision hands both to the kernel sandbox, which hides them from a sandboxed command.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::places::Places;

/// Files that may hold secrets by their names or places ([`secret_files`] adds the kinds of key files): reading
/// one is never auto-approved. Glob patterns, compared without regard to ASCII case: a name matches the file's
/// name in any directory (`.env`), a pattern with `/` the last components of its path (`.aws/credentials`, a file
/// beneath `private-keys-v1.d`), one starting with `/` the absolute path.
const NAMED_SECRET_FILES: &[&str] = &[
    ".env",
    ".env.*",
    ".git-credentials",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    "credentials.json",
    "kubeconfig",
    "*.kubeconfig",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".aws/credentials",
    ".docker/config.json",
    ".kube/config",
    ".config/gh/hosts.yml",
    "private-keys-v1.d/*",
    "/proc/*/environ",
    // agent-guard's snapshots for `agent-guard undo`: copies of the project's files, those a rule or the kernel
    // keeps from a command included, as they were before each run.
    ".agent-guard/undo",
    ".agent-guard/undo/**",
];

/// Every file that may hold a secret: the names and places of [`NAMED_SECRET_FILES`], then the kinds of key files of
/// [`KEY_FILE_KINDS`] (after them, so that a key file in a secret place is secret by its place).
pub(crate) fn secret_files() -> &'static [&'static str] {
    static ALL: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| NAMED_SECRET_FILES.iter().chain(KEY_FILE_KINDS).copied().collect())
}

/// The patterns of [`secret_files`] that name a kind of file rather than a place: key and certificate files
/// (PEM, DER, PKCS#12, Java keystores, PuTTY keys), which may hold a private key or only certificates anyone may read (a CA bundle such as
/// certifi's `cacert.pem`, which every pip and requests installation carries). Where the content can be looked at
/// (the sandbox's scan of the roots), what such a file holds decides whether it is hidden, and one that a command
/// makes replaces nothing of the user's, so it is not taken back; elsewhere its name alone still protects it.
pub(crate) const KEY_FILE_KINDS: &[&str] = &[
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.pkcs12",
    "*.der",
    "*.jks",
    "*.keystore",
    "*.ppk",
];

/// Names that match [`secret_files`] and hold no secret: templates of `.env` meant to be read, public keys.
pub(crate) const NOT_SECRET: &[&str] = &[".env.example", ".env.sample", ".env.template", "*.pub"];

/// Entries of the home directory that hold credentials whatever their files are called, hidden whole by the
/// kernel sandbox (besides the files of [`secret_files`] it finds there by name: `.netrc`, `.npmrc`,
/// `.git-credentials`, …): keys, cloud and cluster credentials, registry tokens, password stores, shell and
/// database histories (tokens typed on a command line stay there), browser profiles (cookies and saved
/// passwords), agents' own credentials. Paths relative to the home directory.
pub(crate) const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".yarnrc",
    ".azure",
    ".config/gh",
    ".config/hub",
    ".config/op",
    ".config/rclone",
    ".password-store",
    ".local/share/keyrings",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    ".terraform.d/credentials.tfrc.json",
    ".s3cfg",
    ".boto",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".node_repl_history",
    ".lesshst",
    ".local/share/fish/fish_history",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".thunderbird",
    ".claude/.credentials.json",
    ".claude.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
    ".config/agent-guard/token",
    ".config/git/credentials",
    ".git-credential-cache",
    ".cache/git/credential",
    ".authinfo",
    ".authinfo.gpg",
    ".yarnrc.yml",
    ".terraformrc",
    ".databrickscfg",
    ".pulumi/credentials.json",
    ".kaggle",
    ".huggingface/token",
    ".cache/huggingface/token",
    ".config/github-copilot",
    ".config/sops",
    ".config/doctl",
    ".config/hcloud",
    ".config/heroku",
    ".config/configstore",
    ".config/netlify",
    ".config/.wrangler",
    ".wrangler",
    ".fly",
    ".mc",
    ".oci",
    ".ibmcloud",
    ".bluemix",
    ".config/openstack",
    ".local/share/com.vercel.cli",
    ".local/share/atuin",
    ".dbus-keyrings",
    ".config/containers/auth.json",
    ".composer/auth.json",
    ".config/composer/auth.json",
    ".bundle/config",
    ".ivy2/.credentials",
    ".sbt/credentials",
    ".sbt/.credentials",
    ".pub-cache/credentials.json",
    ".config/pip/pip.conf",
    ".pip/pip.conf",
    ".nuget/NuGet/NuGet.Config",
    ".subversion/auth",
    ".vercel",
    ".ngrok2",
    ".config/ngrok",
    ".wakatime.cfg",
    ".config/gitlab",
    ".config/glab-cli",
    ".config/Code/User/globalStorage",
];

/// Credential files inside the tool-chain installations the sandbox lets commands read, one `*` standing for
/// each installed version: the global npm configuration of each node install (an `_authToken`), pip's of each
/// pyenv Python (an index URL with a password).
const HOME_SECRET_GLOBS: &[(&str, &str)] = &[
    (".nvm/versions/node", "etc/npmrc"),
    (".volta/tools/image/node", "etc/npmrc"),
    (".pyenv/versions", "pip.conf"),
    (".pyenv/versions", "etc/pip.conf"),
];

/// The entries of the home directory `home` that hold credentials whatever their files are called, whether or
/// not they exist, and the credential files of each installed tool-chain version that exists: what the kernel
/// sandbox hides from a sandboxed command besides the secret files it finds.
pub fn home_secret_places(home: &Path) -> Vec<PathBuf> {
    let versions = HOME_SECRET_GLOBS.iter().flat_map(|(dir, file)| {
        std::fs::read_dir(home.join(dir))
            .into_iter()
            .flatten()
            .filter_map(std::result::Result::ok)
            .map(move |version| version.path().join(file))
            .filter(|place| std::fs::symlink_metadata(place).is_ok())
    });
    HOME_SECRETS
        .iter()
        .map(|entry| home.join(entry))
        .chain(versions)
        .collect()
}

/// Whether `path` is one of [`home_secret_places`] of `home` or beneath one, as a decision asks it of every path it
/// reads: compared component by component, without listing the tool-chain folders, so that a call pays one
/// `lstat` only for a path that lies where a version's credential file would (the same places, since a version is
/// an entry of its folder and only a file that exists is one).
pub fn in_home_secret_place(home: &Path, path: &Path) -> bool {
    let Ok(in_home) = path.strip_prefix(home) else {
        return false;
    };
    if home_secrets().hold(in_home) {
        return true;
    }
    HOME_SECRET_GLOBS.iter().any(|(dir, file)| {
        let Ok(in_dir) = in_home.strip_prefix(dir) else {
            return false;
        };
        let mut components = in_dir.components();
        match components.next() {
            Some(std::path::Component::Normal(version)) => {
                components.as_path().starts_with(file)
                    && std::fs::symlink_metadata(home.join(dir).join(version).join(file)).is_ok()
            }
            _ => false,
        }
    })
}

/// [`HOME_SECRETS`] as [`Places`], grouped once.
fn home_secrets() -> &'static Places {
    static PLACES: OnceLock<Places> = OnceLock::new();
    PLACES.get_or_init(|| Places::new(HOME_SECRETS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_secret_places_lie_in_the_home_directory() {
        let places = home_secret_places(Path::new("/home/u"));
        assert_eq!(places.len(), HOME_SECRETS.len(), "no version is installed there");
        assert!(
            places
                .iter()
                .all(|place| place.starts_with("/home/u/.") && place != Path::new("/home/u"))
        );
        for credentials in [
            "/home/u/.ssh",
            "/home/u/.aws",
            "/home/u/.config/gh",
            "/home/u/.bash_history",
        ] {
            assert!(places.contains(&PathBuf::from(credentials)), "{credentials}");
        }
    }

    #[test]
    fn the_credential_files_of_each_installed_version_are_secret_places() {
        let home = tempfile::tempdir().unwrap();
        for file in [
            ".nvm/versions/node/v20.1.0/etc/npmrc",
            ".pyenv/versions/3.12.1/pip.conf",
        ] {
            let path = home.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "//registry.npmjs.org/:_authToken=x").unwrap();
        }
        std::fs::create_dir_all(home.path().join(".nvm/versions/node/v18.0.0/bin")).unwrap();
        let places = home_secret_places(home.path());
        assert!(places.contains(&home.path().join(".nvm/versions/node/v20.1.0/etc/npmrc")));
        assert!(places.contains(&home.path().join(".pyenv/versions/3.12.1/pip.conf")));
        assert!(
            !places
                .iter()
                .any(|p| p.starts_with(home.path().join(".nvm/versions/node/v18.0.0")))
        );
    }

    #[test]
    fn a_path_is_in_a_secret_place_exactly_when_it_is_beneath_one_of_the_listed_places() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path();
        for file in [
            ".nvm/versions/node/v20.1.0/etc/npmrc",
            ".pyenv/versions/3.12.1/etc/pip.conf",
        ] {
            let path = home.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "x").unwrap();
        }
        std::fs::create_dir_all(home.join(".pyenv/versions/3.11.0/bin")).unwrap();
        let places = home_secret_places(home);
        for relative in [
            ".ssh",
            ".ssh/id_ed25519",
            ".aws/credentials",
            ".config/gh/hosts.yml",
            ".nvm/versions/node/v20.1.0/etc/npmrc",
            ".pyenv/versions/3.12.1/etc/pip.conf",
            ".pyenv/versions/3.12.1/pip.conf",
            ".pyenv/versions/3.11.0/pip.conf",
            ".pyenv/versions/3.11.0/bin/python",
            ".pyenv/versions/../versions/3.12.1/etc/pip.conf",
            ".nvm/versions/node/v20.1.0/etc",
            ".sshx",
            "project/.ssh",
            "notes.txt",
            "",
        ] {
            let path = home.join(relative);
            let listed = places.iter().any(|place| path.starts_with(place));
            assert_eq!(in_home_secret_place(home, &path), listed, "{relative}");
        }
        assert!(!in_home_secret_place(home, Path::new("/etc/passwd")));
    }
}
