//! What of the home directory a sandboxed command may read: the tool chains' installations and package caches, by
//! allow list, and the places that must never be granted whole (the home directory and what holds it).

use std::path::{Path, PathBuf};

/// Entries of the home directory that tool chains read: their installed programs and toolchains, and the package
/// and build caches they resolve dependencies from. Nothing else of the home directory is granted (its dotfiles,
/// other projects, downloads, and whatever a program keeps under a name no list knows), so a credential there
/// stays out whatever it is called. A name ending in `*` stands for the entries of its directory that start with
/// the rest (`.local/lib/python*`). `agentGuard.sandbox.read` adds places; the directories of `PATH` and of the
/// tool-chain variables (`CARGO_HOME`, `PYENV_ROOT`, `NVM_DIR`, …) are granted besides.
const HOME_READS: &[&str] = &[
    // Rust: the programs rustup installs, the toolchains and which one is the default, the crate caches.
    ".cargo/bin",
    ".cargo/registry",
    ".cargo/git",
    ".rustup/toolchains",
    ".rustup/settings.toml",
    ".rustup/update-hashes",
    // Python: user installs, interpreter managers, the package caches of pip, uv and poetry.
    ".local/bin",
    ".local/lib/python*",
    ".pyenv",
    ".cache/pip",
    ".cache/uv",
    ".cache/pypoetry/cache",
    ".cache/pypoetry/artifacts",
    // JavaScript: nvm's and volta's node installs, the npm, yarn, pnpm, bun and deno caches.
    ".nvm/versions",
    ".nvm/nvm.sh",
    ".volta/bin",
    ".volta/tools",
    ".npm/_cacache",
    ".cache/yarn",
    ".yarn/berry/cache",
    ".local/share/pnpm",
    ".bun/bin",
    ".bun/install/cache",
    ".deno",
    // Go: the module and build caches and installed programs.
    "go/pkg/mod",
    "go/bin",
    ".cache/go-build",
    // JVM: Gradle's caches and wrapper distributions, Maven's repository, sdkman's and coursier's installs.
    ".gradle/caches",
    ".gradle/wrapper/dists",
    ".m2/repository",
    ".ivy2/cache",
    ".sdkman/candidates",
    ".cache/coursier",
    // Ruby: rbenv's rubies and the gems.
    ".rbenv",
    ".gem/ruby",
    ".gem/specs",
    // .NET (its installation, not `~/.dotnet/corefx`, where its certificate stores keep private keys), Haskell,
    // version managers, Nix.
    ".dotnet/dotnet",
    ".dotnet/host",
    ".dotnet/sdk",
    ".dotnet/sdk-manifests",
    ".dotnet/shared",
    ".dotnet/packs",
    ".dotnet/templates",
    ".dotnet/tools",
    ".nuget/packages",
    ".ghcup/bin",
    ".ghcup/ghc",
    ".cabal/packages",
    ".asdf/installs",
    ".asdf/shims",
    ".local/share/mise/installs",
    ".local/share/mise/shims",
    ".nix-profile",
    // git's global ignore and attributes files (patterns, no credentials); its identity comes from a generated
    // configuration instead of `~/.gitconfig` (see gitconfig.rs).
    ".config/git/ignore",
    ".config/git/attributes",
];

/// The places of [`HOME_READS`] that exist in `home` and are reached without a symbolic link.
///
/// An entry reached through a link is not granted: its target is readable only when it is granted on its own (a
/// `~/.nix-profile` pointing into `/nix`, already a system directory). Otherwise a link a sandboxed command
/// planted in a cache it may write (`~/.cache/pip -> ~` or `-> /proc`) would be granted to every later command.
pub(crate) fn home_reads(home: &Path, presence: &mut crate::presence::Presence) -> Vec<PathBuf> {
    // A home directory that does not resolve holds nothing.
    let Ok(home) = std::fs::canonicalize(home) else {
        return Vec::new();
    };
    let mut reads = Vec::new();
    for entry in HOME_READS {
        match entry.strip_suffix('*') {
            Some(prefix) => {
                let path = home.join(prefix);
                let (Some(dir), Some(start)) = (path.parent(), path.file_name()) else {
                    continue;
                };
                let start = start.to_string_lossy();
                reads.extend(crate::scan::prefixed(dir, &start));
            }
            None => reads.push(home.join(entry)),
        }
    }
    // Most entries do not exist: they are looked up together (crate::presence), the links among the rest after.
    let exists = presence.existing(&reads);
    reads
        .into_iter()
        .zip(exists)
        .filter(|(path, exists)| *exists && no_link_below(&home, path))
        .map(|(path, _)| path)
        .collect()
}

/// The directories a grant must not be: the home directory and every directory that holds it, by their identity
/// (device and inode), so that each place is compared with one lookup, and a place that reaches one of them by
/// another path (a link, a bind mount) is known as well.
pub(crate) struct HomeHolders {
    home: Option<PathBuf>,
    ids: Vec<(u64, u64)>,
}

impl HomeHolders {
    pub(crate) fn new(home: Option<&Path>) -> Self {
        use std::os::unix::fs::MetadataExt as _;
        let ids = home
            .map(|home| {
                let canonical = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
                canonical
                    .ancestors()
                    .filter_map(|dir| std::fs::metadata(dir).ok())
                    .map(|meta| (meta.dev(), meta.ino()))
                    .collect()
            })
            .unwrap_or_default();
        Self {
            home: home.map(Path::to_path_buf),
            ids,
        }
    }

    /// Whether `dir` (a directory of `PATH`, of a tool-chain variable or of `agentGuard.sandbox.read`) is the home
    /// directory or holds it: granting it would grant the whole home directory (a `PATH` with `~` or `/` in it).
    pub(crate) fn holds(&self, dir: &Path) -> bool {
        use std::os::unix::fs::MetadataExt as _;
        let Some(home) = &self.home else {
            return dir == Path::new("/");
        };
        home.starts_with(dir)
            || std::fs::metadata(dir).is_ok_and(|meta| self.ids.contains(&(meta.dev(), meta.ino())))
    }
}

/// Whether no component of `path` below the canonical `home` is a symbolic link, so that `path` (which exists) is
/// its own canonical form; a lookup per component below the home directory, where making it canonical would look
/// up every component from the root.
fn no_link_below(home: &Path, path: &Path) -> bool {
    let Ok(below) = path.strip_prefix(home) else {
        return false;
    };
    let mut at = home.to_path_buf();
    below.components().all(|component| {
        at.push(component);
        matches!(component, std::path::Component::Normal(_))
            && std::fs::symlink_metadata(&at).is_ok_and(|meta| !meta.file_type().is_symlink())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_listed_entries_reached_without_a_link_are_read() {
        let home = tempfile::tempdir().unwrap();
        let home_path = std::fs::canonicalize(home.path()).unwrap();
        for dir in [
            ".cargo/registry",
            ".local/lib/python3.12",
            ".local/lib/other",
            "projects",
            ".cache",
        ] {
            std::fs::create_dir_all(home_path.join(dir)).unwrap();
        }
        std::os::unix::fs::symlink(&home_path, home_path.join(".cache/pip")).unwrap();
        std::os::unix::fs::symlink("/proc", home_path.join(".cache/uv")).unwrap();
        let reads = home_reads(&home_path, &mut crate::presence::Presence::default());
        assert!(reads.contains(&home_path.join(".cargo/registry")));
        assert!(reads.contains(&home_path.join(".local/lib/python3.12")));
        for not_read in [
            ".local/lib/other",
            "projects",
            ".cache",
            ".cache/pip",
            ".cache/uv",
        ] {
            assert!(!reads.contains(&home_path.join(not_read)), "{not_read}");
        }
        assert!(reads.iter().all(|p| p.starts_with(&home_path) && *p != home_path));
    }

    #[test]
    fn a_directory_that_holds_the_home_directory_is_named() {
        let home = Path::new("/home/u");
        let holders = HomeHolders::new(Some(home));
        assert!(holders.holds(Path::new("/")));
        assert!(holders.holds(Path::new("/home")));
        assert!(holders.holds(Path::new("/home/u")));
        assert!(!holders.holds(Path::new("/home/u/.cargo/bin")));
        assert!(!holders.holds(Path::new("/usr/bin")));
        // An existing home directory, reached through a link: the link and the directories above the home
        // directory's own path hold it too.
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(base.join("real/u/.cargo/bin")).unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        let holders = HomeHolders::new(Some(&base.join("link/u")));
        assert!(holders.holds(&base.join("real")));
        assert!(holders.holds(&base.join("real/u")));
        assert!(holders.holds(&base.join("link")));
        assert!(holders.holds(&base));
        assert!(!holders.holds(&base.join("real/u/.cargo/bin")));
        assert!(!holders.holds(Path::new("/usr/bin")));
        assert!(!HomeHolders::new(None).holds(Path::new("/usr")));
        assert!(HomeHolders::new(None).holds(Path::new("/")));
    }
}
