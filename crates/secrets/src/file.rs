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
    let Ok(scanned) = std::fs::File::open(path).and_then(|file| scan_reader(file.take(FILE_LIMIT))) else {
        return FileScan::Clean;
    };
    // What it holds compressed (`zcat creds.gz`, `tar -xzOf backup.tgz`, `unzip -p old.zip`, `bzcat`, `xzcat`)
    // or encoded (`base64 -d blob.b64`) is read in clear by the command as well.
    let kind = match scanned {
        Some(kind) => Some(kind),
        None => match scan_compressed(path) {
            Ok(Compressed::Found(kind)) => Some(kind),
            Ok(Compressed::TooLarge) => return FileScan::TooLarge,
            Ok(Compressed::Clean) | Err(_) => None,
        },
    };
    if let Ok(mut cache) = CACHE.lock() {
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(version, kind);
    }
    kind.map_or(FileScan::Clean, FileScan::Credential)
}

/// What the content a file holds compressed was found to hold.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Compressed {
    /// No credential, or no compressed content.
    Clean,
    /// The kind of the first credential.
    Found(&'static str),
    /// More than [`FILE_LIMIT`] once decompressed: not read past it.
    TooLarge,
}

/// The content of a gzip file (every member: `.gz`, `.tgz`, whose tar headers and files then lie in clear), of a
/// bzip2 or xz file (`.bz2`, `.tbz`, `.xz`, `.txz`), or of the deflated and bzip2 entries of a zip archive (a stored
/// entry lies in clear in the file itself), decompressed up to [`FILE_LIMIT`] in all, and scanned; or of a file that
/// is base64 text alone, decoded.
fn scan_compressed(path: &Path) -> std::io::Result<Compressed> {
    let mut head = Vec::new();
    std::fs::File::open(path)?
        .take(BASE64_LIMIT + 1)
        .read_to_end(&mut head)?;
    let whole = u64::try_from(head.len()).is_ok_and(|len| len <= BASE64_LIMIT);
    scan_packed(path, &head, whole, FILE_LIMIT)
}

/// What the file at `path`, whose first bytes are `head` (the whole file when `whole`), holds compressed (by its
/// magic number) or, when `head` is the whole file and base64 text alone, encoded: decompressed up to `budget`
/// bytes and scanned.
pub(crate) fn scan_packed(path: &Path, head: &[u8], whole: bool, budget: u64) -> std::io::Result<Compressed> {
    let reopened = || std::fs::File::open(path);
    match head.get(..head.len().min(6)) {
        Some([0x1f, 0x8b, ..]) => scan_decoded(flate2::read::MultiGzDecoder::new(reopened()?), budget, 0),
        Some([b'B', b'Z', b'h', ..]) => {
            scan_decoded(bzip2::read::MultiBzDecoder::new(reopened()?), budget, 0)
        }
        Some([0xfd, b'7', b'z', b'X', b'Z', 0x00]) => scan_xz(reopened()?, budget, 0),
        Some([b'P', b'K', 3, 4, ..]) if whole => scan_zip(head, budget, 0),
        Some([b'P', b'K', 3, 4, ..]) => scan_zip(&std::fs::read(path)?, budget, 0),
        _ if whole => Ok(scan_encoded_text(head, budget, 0)),
        _ => Ok(Compressed::Clean),
    }
}

/// How many times content found decoded is looked into again (`base64` of a gzip file, a `.gz` inside a zip, a
/// bzip2 file compressed twice).
const NESTED: u8 = 3;

/// The most of a decoded content kept to look into again.
const INNER: usize = 1 << 20;

/// What decoded `bytes` (the whole content when `whole`, else its start) hold compressed or encoded once more,
/// `depth` levels down, decoded up to `budget` bytes and scanned; a read error ends what is read.
fn scan_inner(bytes: &[u8], whole: bool, budget: u64, depth: u8) -> Compressed {
    if depth >= NESTED {
        return Compressed::Clean;
    }
    let deeper = depth + 1;
    let found = match bytes.get(..bytes.len().min(6)) {
        Some([0x1f, 0x8b, ..]) => scan_decoded(flate2::read::MultiGzDecoder::new(bytes), budget, deeper),
        Some([b'B', b'Z', b'h', ..]) => scan_decoded(bzip2::read::MultiBzDecoder::new(bytes), budget, deeper),
        Some([0xfd, b'7', b'z', b'X', b'Z', 0x00]) => scan_xz(bytes, budget, deeper),
        Some([b'P', b'K', 3, 4, ..]) => scan_zip(bytes, budget, deeper),
        _ if whole => Ok(scan_encoded_text(bytes, budget, deeper)),
        _ => Ok(Compressed::Clean),
    };
    found.unwrap_or(Compressed::Clean)
}

/// An xz stream decompressed into memory up to `budget` bytes, and scanned: the decoder writes what it decodes
/// rather than being read, so its output is kept whole (at most the budget) before the scan reads it.
fn scan_xz(source: impl Read, budget: u64, depth: u8) -> std::io::Result<Compressed> {
    let mut output = Bounded {
        kept: Vec::new(),
        budget: usize::try_from(budget).unwrap_or(usize::MAX),
        over: false,
    };
    // A stream that ends in an error (cut short, a wrong check) is read up to it, as `xzcat` prints it.
    let _ended = lzma_rs::xz_decompress(&mut std::io::BufReader::new(source), &mut output);
    if let Some(kind) = scan_reader(output.kept.as_slice())? {
        return Ok(Compressed::Found(kind));
    }
    if output.over {
        return Ok(Compressed::TooLarge);
    }
    let left = budget.saturating_sub(u64::try_from(output.kept.len()).unwrap_or(u64::MAX));
    Ok(scan_inner(&output.kept, true, left, depth))
}

/// A writer that keeps what it is given up to a budget, and fails past it.
struct Bounded {
    kept: Vec<u8>,
    budget: usize,
    over: bool,
}

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = self.budget.saturating_sub(self.kept.len());
        if buf.len() > room {
            self.kept.extend_from_slice(buf.get(..room).unwrap_or_default());
            self.over = true;
            return Err(std::io::Error::other("past the bound"));
        }
        self.kept.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The most a file of base64 text alone is decoded of: a mebibyte of text.
const BASE64_LIMIT: u64 = 1 << 20;

/// A content `text` that is base64 text alone (the standard or URL-safe alphabet, in lines, padding at the end
/// only) or hex digits alone, decoded and scanned, and looked into again: `base64 -d blob.b64` and `xxd -r -p
/// hex.txt` print what it holds.
fn scan_encoded_text(text: &[u8], budget: u64, depth: u8) -> Compressed {
    // Hex digits are base64 letters too: a text of them alone is read both ways.
    for decoded in [decode_hex(text), decode_base64(text)].into_iter().flatten() {
        let found = match scan_reader(decoded.as_slice()) {
            Ok(Some(kind)) => Compressed::Found(kind),
            Ok(None) => scan_inner(&decoded, true, budget, depth),
            Err(_) => Compressed::Clean,
        };
        if found != Compressed::Clean {
            return found;
        }
    }
    Compressed::Clean
}

/// `text` decoded when it is base64 alone.
fn decode_base64(text: &[u8]) -> Option<Vec<u8>> {
    use base64::Engine as _;
    // Most files stop at their first byte or word: a space, a dot, a bracket.
    let alphabet = |b: &u8| b.is_ascii_alphanumeric() || b"+/-_=".contains(b);
    if !text.iter().all(|b| alphabet(b) || b.is_ascii_whitespace()) {
        return None;
    }
    let compact: Vec<u8> = text.iter().copied().filter(alphabet).collect();
    let body = compact
        .strip_suffix(b"==")
        .or_else(|| compact.strip_suffix(b"="))
        .unwrap_or(&compact);
    // Shorter runs are words and hashes; a credential's encoding is longer than this.
    if body.len() < 24 || body.contains(&b'=') {
        return None;
    }
    let engine = if body.iter().any(|b| b"-_".contains(b)) {
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
    } else {
        &base64::engine::general_purpose::STANDARD_NO_PAD
    };
    engine.decode(body).ok()
}

/// `text` decoded when it is hex digits alone (`xxd -p`), at least 40 of them in pairs.
fn decode_hex(text: &[u8]) -> Option<Vec<u8>> {
    let digits: Vec<u8> = text
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    if digits.len() < 40 || digits.len() % 2 == 1 || !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect()
}

/// [`scan_reader`] of what `decoder` gives ([`Counted`]), up to `budget` bytes: more is [`Compressed::TooLarge`]
/// (a decompression bomb, or a log too large to tell).
fn scan_decoded(decoder: impl Read, budget: u64, depth: u8) -> std::io::Result<Compressed> {
    let mut counted = Counted {
        inner: decoder,
        read: 0,
        head: Vec::new(),
    };
    let found = scan_reader(counted.by_ref().take(budget))?;
    if let Some(kind) = found {
        return Ok(Compressed::Found(kind));
    }
    if counted.read >= budget && counted.read(&mut [0_u8; 1]).unwrap_or(0) > 0 {
        return Ok(Compressed::TooLarge);
    }
    // What it decoded may be compressed or encoded once more (`base64 x.gz > blob`, a `.tgz` zipped).
    let whole = counted.head.len() < INNER;
    Ok(scan_inner(
        &counted.head,
        whole,
        budget.saturating_sub(counted.read),
        depth,
    ))
}

/// A decoder's output as the command that decompresses the file sees it: what it gave, counted, up to its first
/// error, which ends it (a wrong checksum in a gzip trailer comes after the text it covers, which `zcat` prints).
struct Counted<R> {
    inner: R,
    read: u64,
    /// The first [`INNER`] bytes it gave, to look into again.
    head: Vec<u8>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf).unwrap_or(0);
        self.read += u64::try_from(n).unwrap_or(u64::MAX);
        let room = INNER.saturating_sub(self.head.len()).min(n);
        self.head.extend_from_slice(buf.get(..room).unwrap_or_default());
        Ok(n)
    }
}

/// The deflated and bzip2 entries of the zip archive `bytes`, each found by its local header in turn, decompressed and
/// scanned, `budget` bytes in all. Walked by hand rather than with an archive crate: only the local headers and
/// raw deflate streams are needed, a deflate stream ends by itself (so an entry whose sizes follow its data, flag
/// bit 3, is read as well), and anything else (a stored entry, already scanned in the file; encryption; another
/// method) is skipped or ends the walk.
fn scan_zip(bytes: &[u8], budget: u64, depth: u8) -> std::io::Result<Compressed> {
    const LOCAL: &[u8] = b"PK\x03\x04";
    const HEADER: usize = 30;
    let le16 = |at: usize| -> usize {
        bytes
            .get(at..at + 2)
            .and_then(|b| <[u8; 2]>::try_from(b).ok())
            .map_or(0, |b| usize::from(u16::from_le_bytes(b)))
    };
    let mut budget = budget;
    let mut at = 0;
    while bytes.get(at..at + 4) == Some(LOCAL) {
        let method = le16(at + 8);
        let encrypted = le16(at + 6) & 1 == 1;
        let data = at + HEADER + le16(at + 26) + le16(at + 28);
        let Some(stream) = bytes.get(data..) else {
            break;
        };
        // Deflated (8) and bzip2 (12) entries are read; anything else is skipped.
        if !matches!(method, 8 | 12) || encrypted {
            // The next header is found by the sizes, which a stored entry with flag bit 3 does not give: the
            // walk ends, having scanned what the file holds in clear.
            let size = bytes
                .get(at + 18..at + 22)
                .and_then(|b| <[u8; 4]>::try_from(b).ok())
                .map_or(0, u32::from_le_bytes);
            if size == 0 {
                break;
            }
            at = data + usize::try_from(size).unwrap_or(usize::MAX);
            continue;
        }
        let (found, read, given) = if method == 12 {
            let mut decoder = bzip2::bufread::BzDecoder::new(stream);
            let found = scan_decoded(&mut decoder, budget, depth)?;
            (found, decoder.total_in(), decoder.total_out())
        } else {
            let mut decoder = flate2::bufread::DeflateDecoder::new(stream);
            let found = scan_decoded(&mut decoder, budget, depth)?;
            (found, decoder.total_in(), decoder.total_out())
        };
        if found != Compressed::Clean {
            return Ok(found);
        }
        let consumed = usize::try_from(read).unwrap_or(usize::MAX);
        budget = budget.saturating_sub(given);
        if consumed == 0 || budget == 0 {
            break;
        }
        at = data.saturating_add(consumed);
        // The sizes after the data (flag bit 3), with or without their signature.
        if le16(at) == 0x4b50 && le16(at + 2) == 0x0807 {
            at += 16;
        } else if bytes.get(at..at + 4) != Some(LOCAL) {
            at += 12;
        }
    }
    Ok(Compressed::Clean)
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

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write as _;
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    /// A zip archive of `entries` (name, content, deflated), each deflated entry written with its sizes after its
    /// data (flag bit 3) when `descriptors`, as streaming archivers do.
    fn zip(entries: &[(&str, &[u8], bool)], descriptors: bool) -> Vec<u8> {
        use std::io::Write as _;
        let mut out = Vec::new();
        for (name, content, deflated) in entries {
            let data = if *deflated {
                let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
                encoder.write_all(content).unwrap();
                encoder.finish().unwrap()
            } else {
                content.to_vec()
            };
            let later = descriptors && *deflated;
            let size = u32::try_from(data.len()).unwrap();
            let plain = u32::try_from(content.len()).unwrap();
            out.extend_from_slice(b"PK\x03\x04");
            out.extend_from_slice(&20_u16.to_le_bytes());
            out.extend_from_slice(&(if later { 8_u16 } else { 0 }).to_le_bytes());
            out.extend_from_slice(&(if *deflated { 8_u16 } else { 0 }).to_le_bytes());
            out.extend_from_slice(&[0; 8]);
            out.extend_from_slice(&(if later { 0 } else { size }).to_le_bytes());
            out.extend_from_slice(&(if later { 0 } else { plain }).to_le_bytes());
            out.extend_from_slice(&u16::try_from(name.len()).unwrap().to_le_bytes());
            out.extend_from_slice(&0_u16.to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&data);
            if later {
                out.extend_from_slice(b"PK\x07\x08");
                out.extend_from_slice(&[0; 4]);
                out.extend_from_slice(&size.to_le_bytes());
                out.extend_from_slice(&plain.to_le_bytes());
            }
        }
        // The central directory's start: the walk stops at what is no local header.
        out.extend_from_slice(b"PK\x01\x02");
        out
    }

    /// A credential a file holds compressed (gzip, a gzipped tar, a zip's deflated entries, after other entries and
    /// with their sizes after the data or before it) is found as a command that decompresses it reads it; the same
    /// archives without one are clean.
    #[test]
    fn a_credential_inside_a_gzip_or_zip_file_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let secret = format!("deploy:\n  token: {TOKEN}\n");
        let filler = "lorem ipsum dolor sit amet\n".repeat(5000);
        let check = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            scan_file(&path)
        };
        assert_eq!(
            check("creds.txt.gz", &gzip(secret.as_bytes())),
            FileScan::Credential("npm token")
        );
        // Two members, the credential in the second (`cat a.gz b.gz > c.gz`).
        let mut two = gzip(filler.as_bytes());
        two.extend(gzip(secret.as_bytes()));
        assert_eq!(check("two.gz", &two), FileScan::Credential("npm token"));
        let tar = [vec![0_u8; 512], secret.clone().into_bytes(), vec![0_u8; 1024]].concat();
        assert_eq!(
            check("backup.tgz", &gzip(&tar)),
            FileScan::Credential("npm token")
        );
        assert_eq!(check("clean.gz", &gzip(filler.as_bytes())), FileScan::Clean);
        for descriptors in [false, true] {
            let archive = zip(
                &[
                    ("readme.txt", filler.as_bytes(), true),
                    ("notes.txt", b"nothing\n", false),
                    ("config/settings.yml", secret.as_bytes(), true),
                ],
                descriptors,
            );
            assert_eq!(
                check("old.zip", &archive),
                FileScan::Credential("npm token"),
                "{descriptors}"
            );
            let clean = zip(&[("readme.txt", filler.as_bytes(), true)], descriptors);
            assert_eq!(check("clean.zip", &clean), FileScan::Clean, "{descriptors}");
        }
    }

    /// A zip entry compressed with bzip2 (method 12) is read as `unzip -p` reads it.
    #[test]
    fn a_credential_in_a_bzip2_zip_entry_is_found() {
        use std::io::Write as _;
        let secret = format!("deploy:\n  token: {TOKEN}\n");
        let mut encoder = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
        encoder.write_all(secret.as_bytes()).unwrap();
        let data = encoder.finish().unwrap();
        let mut archive = b"PK\x03\x04".to_vec();
        archive.extend_from_slice(&46_u16.to_le_bytes());
        archive.extend_from_slice(&0_u16.to_le_bytes());
        archive.extend_from_slice(&12_u16.to_le_bytes());
        archive.extend_from_slice(&[0; 8]);
        archive.extend_from_slice(&u32::try_from(data.len()).unwrap().to_le_bytes());
        archive.extend_from_slice(&u32::try_from(secret.len()).unwrap().to_le_bytes());
        archive.extend_from_slice(&5_u16.to_le_bytes());
        archive.extend_from_slice(&0_u16.to_le_bytes());
        archive.extend_from_slice(b"a.yml");
        archive.extend_from_slice(&data);
        archive.extend_from_slice(b"PK\x01\x02");
        assert_eq!(
            scan_zip(&archive, FILE_LIMIT, 0).unwrap(),
            Compressed::Found("npm token")
        );
    }

    /// The same for bzip2, xz and a file of base64 text: each decoded as `bzcat`, `xzcat` and `base64 -d` would.
    #[test]
    fn a_credential_inside_a_bzip2_xz_or_base64_file_is_found() {
        use base64::Engine as _;
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let secret = format!("GITHUB_TOKEN=x\nkey {TOKEN}\n");
        let filler = "lorem ipsum dolor sit amet\n".repeat(2000);
        let check = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            scan_file(&path)
        };
        let bzip2 = |bytes: &[u8]| {
            let mut encoder = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
            encoder.write_all(bytes).unwrap();
            encoder.finish().unwrap()
        };
        let xz = |bytes: &[u8]| {
            let mut out = Vec::new();
            lzma_rs::xz_compress(&mut std::io::Cursor::new(bytes), &mut out).unwrap();
            out
        };
        let wrapped = |bytes: &[u8]| {
            let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
            let lines: Vec<String> = encoded
                .as_bytes()
                .chunks(76)
                .map(|l| String::from_utf8_lossy(l).into_owned())
                .collect();
            lines.join("\n") + "\n"
        };
        let found = FileScan::Credential("npm token");
        assert_eq!(check("creds.txt.bz2", &bzip2(secret.as_bytes())), found);
        assert_eq!(check("creds.txt.xz", &xz(secret.as_bytes())), found);
        assert_eq!(check("blob.b64", wrapped(secret.as_bytes()).as_bytes()), found);
        assert_eq!(check("clean.bz2", &bzip2(filler.as_bytes())), FileScan::Clean);
        assert_eq!(check("clean.xz", &xz(filler.as_bytes())), FileScan::Clean);
        assert_eq!(
            check("clean.b64", wrapped(filler.as_bytes()).as_bytes()),
            FileScan::Clean
        );
        // Text that only looks like base64 (a word, a hash) is left as it is.
        assert_eq!(
            check(
                "hash.txt",
                b"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n"
            ),
            FileScan::Clean
        );
    }

    /// What is compressed or encoded more than once (base64 of a gzip file, gzip of base64, bzip2 twice, a gzip
    /// file in a zip) or written in hex is found as the commands that decode it in turn print it.
    #[test]
    fn a_credential_encoded_twice_or_in_hex_is_found() {
        use base64::Engine as _;
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let secret = format!("GITHUB_TOKEN=x\nkey {TOKEN}\n");
        let check = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            scan_file(&path)
        };
        let b64 = |bytes: &[u8]| {
            base64::engine::general_purpose::STANDARD
                .encode(bytes)
                .into_bytes()
        };
        let bz = |bytes: &[u8]| {
            let mut encoder = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
            encoder.write_all(bytes).unwrap();
            encoder.finish().unwrap()
        };
        let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
        let found = FileScan::Credential("npm token");
        assert_eq!(check("gz.b64", &b64(&gzip(secret.as_bytes()))), found);
        assert_eq!(check("b64.gz", &gzip(&b64(secret.as_bytes()))), found);
        assert_eq!(check("tok.bz2.bz2", &bz(&bz(secret.as_bytes()))), found);
        let inner = gzip(secret.as_bytes());
        let archive = zip(&[("creds.gz", &inner, true)], false);
        assert_eq!(check("nested.zip", &archive), found);
        assert_eq!(check("hex.txt", hex.as_bytes()), found);
        // Four levels down is past what is looked into.
        assert_eq!(
            check("deep.b64", &b64(&gzip(&b64(&gzip(&b64(secret.as_bytes())))))),
            FileScan::Clean
        );
    }

    /// An xz file past the bound once decompressed is too large; up to it, read whole.
    #[test]
    fn an_xz_file_past_the_bound_is_too_large() {
        let bound = 1 << 16;
        let compressed = |bytes: &[u8]| {
            let mut out = Vec::new();
            lzma_rs::xz_compress(&mut std::io::Cursor::new(bytes), &mut out).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("x.xz");
            std::fs::write(&path, out).unwrap();
            scan_xz(std::fs::File::open(&path).unwrap(), bound, 0).unwrap()
        };
        let zeros = vec![0_u8; usize::try_from(bound).unwrap()];
        assert_eq!(compressed(&zeros), Compressed::Clean);
        assert_eq!(
            compressed(&[zeros.as_slice(), b"x"].concat()),
            Compressed::TooLarge
        );
    }

    /// More than the bound once decompressed is not read past it, and is said to be too large; as much as the
    /// bound is read whole (a smaller bound than [`FILE_LIMIT`], the same code).
    #[test]
    fn a_compressed_file_past_the_bound_once_decompressed_is_too_large() {
        let bound = 1 << 20;
        let decoded =
            |bytes: &[u8]| scan_decoded(flate2::read::MultiGzDecoder::new(bytes), bound, 0).unwrap();
        let zeros = vec![0_u8; usize::try_from(bound).unwrap()];
        assert_eq!(decoded(&gzip(&zeros)), Compressed::Clean);
        let one_more = [zeros.as_slice(), b"x"].concat();
        assert_eq!(decoded(&gzip(&one_more)), Compressed::TooLarge);
        let secret = format!("{}\nkey {TOKEN}\n", "x".repeat(1000));
        assert_eq!(decoded(&gzip(secret.as_bytes())), Compressed::Found("npm token"));
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
