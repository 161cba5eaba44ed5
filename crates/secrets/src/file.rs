//! The check of a file: the first credential in its first mebibyte, cached by file identity and modification.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::{LazyLock, Mutex};
use std::time::SystemTime;

use crate::scan::first;

/// How much of a file is scanned: a credential past its first mebibyte is not looked for.
pub const FILE_LIMIT: u64 = 1 << 20;

/// How many files' results are remembered before the cache starts over.
const CACHE_LIMIT: usize = 4096;

/// A file's identity and version: device, inode, modification time and size.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Version {
    device: u64,
    inode: u64,
    modified: Option<SystemTime>,
    size: u64,
}

static CACHE: LazyLock<Mutex<HashMap<Version, Option<&'static str>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The kind of the first credential in the first [`FILE_LIMIT`] bytes of the regular file at `path` (links
/// followed), or `None`: no credential, not a regular file, or unreadable (whoever opens it meets the same
/// refusal). The result is cached by device, inode, modification time and size, so a file read again unchanged is
/// not scanned again.
pub fn scan_file(path: &Path) -> Option<&'static str> {
    let metadata = std::fs::metadata(path).ok()?;
    if !metadata.is_file() {
        return None;
    }
    let version = version(&metadata);
    if let Ok(cache) = CACHE.lock()
        && let Some(kind) = cache.get(&version)
    {
        return *kind;
    }
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(FILE_LIMIT).read_to_end(&mut head))
        .ok()?;
    let kind = first(&head).map(|finding| finding.kind);
    if let Ok(mut cache) = CACHE.lock() {
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(version, kind);
    }
    kind
}

#[cfg(unix)]
fn version(metadata: &std::fs::Metadata) -> Version {
    use std::os::unix::fs::MetadataExt;
    Version {
        device: metadata.dev(),
        inode: metadata.ino(),
        modified: metadata.modified().ok(),
        size: metadata.len(),
    }
}

#[cfg(not(unix))]
fn version(metadata: &std::fs::Metadata) -> Version {
    Version {
        device: 0,
        inode: 0,
        modified: metadata.modified().ok(),
        size: metadata.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_scanned_by_content_and_rescanned_when_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        std::fs::write(&path, "nothing here\n").unwrap();
        assert_eq!(scan_file(&path), None);
        std::fs::write(&path, "gitlab: glpat-Zx8Kq2Lm9Pw4Rt7Yb3Nc\n").unwrap();
        assert_eq!(scan_file(&path), Some("GitLab token"));
        assert_eq!(scan_file(dir.path()), None, "a directory is no file to scan");
    }

    #[test]
    fn only_the_first_mebibyte_is_scanned() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.log");
        let mut text = "x".repeat(usize::try_from(FILE_LIMIT).unwrap());
        text.push_str("\nnpm_Xk3pQ9vL2mR7tZ1wB5nC8yH4jF6dG0sA2eQu\n");
        std::fs::write(&path, &text).unwrap();
        assert_eq!(scan_file(&path), None);
        // The same token inside the limit is found.
        std::fs::write(&path, &text[usize::try_from(FILE_LIMIT).unwrap()..]).unwrap();
        assert_eq!(scan_file(&path), Some("npm token"));
    }
}
