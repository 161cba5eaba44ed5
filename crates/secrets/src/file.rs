//! The check of a file: the first credential in the whole file, read in pieces, cached by file identity and
//! modification; a file larger than the bound is not read and is reported as such.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::{LazyLock, Mutex};
use std::time::SystemTime;

use crate::scan::first;

/// The largest file that is checked, whole: at the scanner's speed (hundreds of MiB/s) a tenth of a second or
/// so. A larger file is not read: [`scan_file`] says it is too large, and the decision asks, as it cannot tell.
pub const FILE_LIMIT: u64 = 64 << 20;

/// How much of a file is read and scanned at once.
const PIECE: usize = 1 << 20;

/// How much of a piece's end is scanned again with the next piece, from a line's start: more than a private-key
/// block (16 KiB) and the longest value a rule reads, so that a credential across two pieces is whole in one.
const CARRY: usize = 64 << 10;

/// How many files' results are remembered before the cache starts over.
const CACHE_LIMIT: usize = 4096;

/// What the check of a file found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileScan {
    /// No credential in the whole file; or not a regular file, or unreadable (whoever opens it meets the same
    /// refusal).
    Clean,
    /// The kind of the first credential in it.
    Credential(&'static str),
    /// Larger than [`FILE_LIMIT`]: not read, so whether it holds a credential is not known.
    TooLarge,
}

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

/// The check of the regular file at `path` (links followed): the kind of its first credential, read whole in
/// pieces of a mebibyte (each scanned with the end of the one before it, so that a credential across two is
/// found), or [`FileScan::TooLarge`] when it is larger than [`FILE_LIMIT`]. The result is cached by device,
/// inode, modification time and size, so a file read again unchanged is not scanned again.
pub fn scan_file(path: &Path) -> FileScan {
    let Ok(metadata) = std::fs::metadata(path) else {
        return FileScan::Clean;
    };
    if !metadata.is_file() {
        return FileScan::Clean;
    }
    if metadata.len() > FILE_LIMIT {
        return FileScan::TooLarge;
    }
    let version = version(&metadata);
    if let Ok(cache) = CACHE.lock()
        && let Some(kind) = cache.get(&version)
    {
        return kind.map_or(FileScan::Clean, FileScan::Credential);
    }
    // A file that grows while it is read is read up to the bound.
    let Ok(kind) = std::fs::File::open(path).and_then(|file| scan_reader(file.take(FILE_LIMIT))) else {
        return FileScan::Clean;
    };
    if let Ok(mut cache) = CACHE.lock() {
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(version, kind);
    }
    kind.map_or(FileScan::Clean, FileScan::Credential)
}

/// The kind of the first credential in what `reader` gives, read [`PIECE`] bytes at a time; each piece is scanned
/// with the last [`CARRY`] bytes of the one before it, from the first line that starts there.
fn scan_reader(mut reader: impl Read) -> std::io::Result<Option<&'static str>> {
    let mut buffer: Vec<u8> = Vec::with_capacity(PIECE + CARRY);
    loop {
        let limit = u64::try_from(PIECE).unwrap_or(u64::MAX);
        let read = reader.by_ref().take(limit).read_to_end(&mut buffer)?;
        if let Some(finding) = first(&buffer) {
            return Ok(Some(finding.kind));
        }
        if read < PIECE {
            return Ok(None);
        }
        let tail = buffer.len().saturating_sub(CARRY);
        let start = buffer
            .get(tail..)
            .and_then(|rest| memchr::memchr(b'\n', rest))
            .map_or(tail, |newline| tail + newline + 1);
        buffer.drain(..start);
    }
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
        assert_eq!(scan_file(&path), FileScan::Clean);
        std::fs::write(&path, "gitlab: glpat-Zx8Kq2Lm9Pw4Rt7Yb3Nc\n").unwrap();
        assert_eq!(scan_file(&path), FileScan::Credential("GitLab token"));
        assert_eq!(
            scan_file(dir.path()),
            FileScan::Clean,
            "a directory is no file to scan"
        );
    }

    const TOKEN: &str = "npm_Xk3pQ9vL2mR7tZ1wB5nC8yH4jF6dG0sA2eQu";

    #[test]
    fn a_credential_past_the_first_mebibyte_and_across_two_pieces_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.log");
        let line = format!("{}\n", "x".repeat(99));
        let filler = line.repeat(3 * PIECE / line.len());
        // Far past the first mebibyte, and across the end of a piece at every distance.
        let mut cases = vec![filler.len() - 500];
        cases.extend(
            [0, 1, 2, 5, 20, TOKEN.len() + 3, TOKEN.len() + 4, TOKEN.len() + 5].map(|back| PIECE - back),
        );
        for at in cases {
            let mut text = filler.clone();
            text.insert_str(at, &format!("key {TOKEN} "));
            std::fs::write(&path, &text).unwrap();
            assert_eq!(scan_file(&path), FileScan::Credential("npm token"), "at {at}");
        }
        // A private-key block across two pieces, on a line of its own.
        let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAA\n-----END OPENSSH PRIVATE KEY-----\n";
        let mut text = filler.clone();
        text.insert_str(PIECE - PIECE % line.len() - line.len(), key);
        std::fs::write(&path, &text).unwrap();
        assert_eq!(scan_file(&path), FileScan::Credential("private key"));
        std::fs::write(&path, &filler).unwrap();
        assert_eq!(scan_file(&path), FileScan::Clean);
    }

    #[test]
    fn a_file_larger_than_the_bound_is_not_read_and_is_said_to_be_too_large() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge.bin");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(FILE_LIMIT + 1).unwrap();
        assert_eq!(scan_file(&path), FileScan::TooLarge);
        file.set_len(FILE_LIMIT).unwrap();
        assert_eq!(scan_file(&path), FileScan::Clean);
    }
}
