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
    let home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
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
        .filter(|(path, exists)| *exists && is_canonical(path))
        .map(|(path, _)| path)
        .collect()
}

/// Whether `dir` (a directory of `PATH`, of a tool-chain variable or of `agentGuard.sandbox.read`) is the home
/// directory or holds it: granting it would grant the whole home directory (a `PATH` with `~` or `/` in it).
pub(crate) fn holds_home(dir: &Path, home: Option<&Path>) -> bool {
    let Some(home) = home else {
        return dir == Path::new("/");
    };
    let canonical_home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    let canonical_dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    home.starts_with(dir) || canonical_home.starts_with(&canonical_dir)
}

/// Whether the canonical form of `path` (which exists) is itself: no component of it is a symbolic link.
fn is_canonical(path: &Path) -> bool {
    std::fs::canonicalize(path).is_ok_and(|real| real == path)
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
        assert!(holds_home(Path::new("/"), Some(home)));
        assert!(holds_home(Path::new("/home"), Some(home)));
        assert!(holds_home(Path::new("/home/u"), Some(home)));
        assert!(!holds_home(Path::new("/home/u/.cargo/bin"), Some(home)));
        assert!(!holds_home(Path::new("/usr/bin"), Some(home)));
    }
}
