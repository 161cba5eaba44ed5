//! The one list of the names build tools give the directories of their output, and the file that tags a directory
//! as a cache: what the kernel sandbox's scan for secrets may skip, what the decision takes as made again by a
//! build, and what `agent-guard undo`'s snapshots leave out among the files a project ignores.

use std::ffi::OsStr;

/// The file that marks a directory as a regenerable cache (the Cache Directory Tagging convention; cargo's
/// `target/` carries it).
pub const CACHE_TAG: &str = "CACHEDIR.TAG";

/// The names build tools give the directories of their output, which a build makes again: cargo, npm and the
/// JavaScript bundlers, Python's caches, its virtual environments (by their conventional names) and those of test
/// runners, Gradle, .NET, Dart, Zig, Elm, Haskell, Bazel, Elixir. A fixed list on purpose: it is the part of
/// "regenerable" (and of "a cache the scan may skip") no command can change.
const BUILD_OUTPUT_DIRS: &[&str] = &[
    "target",
    "build",
    "dist",
    "out",
    "node_modules",
    ".next",
    ".nuxt",
    ".svelte-kit",
    ".turbo",
    ".parcel-cache",
    ".cache",
    "coverage",
    ".nyc_output",
    "htmlcov",
    "__pycache__",
    ".venv",
    "venv",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
    ".gradle",
    "obj",
    ".dart_tool",
    "zig-cache",
    ".zig-cache",
    "zig-out",
    "elm-stuff",
    ".stack-work",
    "bazel-bin",
    "bazel-out",
    "_build",
    ".eggs",
];

/// Whether a directory's name is one build tools give their output (`target`, `dist`, `node_modules`, …).
pub fn is_build_output_name(name: &OsStr) -> bool {
    BUILD_OUTPUT_DIRS.iter().any(|known| name == *known)
}
