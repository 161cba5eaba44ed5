//! The content index: which files of a project hold a credential, kept on disk between runs so that a file is
//! scanned again only when it changed.
//!
//! `agent-guard sandbox` asks it about every file of the roots before a command runs and gives the command, in
//! place of a file that holds a credential, a view of it with each credential replaced by its marker: what the
//! command reads of it (whole, in part, transformed, sent anywhere) holds no credential, whatever the file is
//! called. A file is known by its device, inode, size, modification and status-change times; a write changes the
//! status-change time, which no program can set back, so an unchanged entry means unchanged content.

use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::scan::first;

/// How much of a file is scanned: its first mebibyte. A credential further in is left to the redaction of what
/// the command prints.
pub(crate) const INDEX_SCAN_LIMIT: u64 = 1 << 20;

/// How many bytes of files not yet known one run scans at most (about a quarter of a second at the scanner's
/// speed): the first run in a large project indexes part of it, each later run goes on where it stopped.
const RUN_BUDGET: u64 = 128 << 20;

/// How recently a file may have changed and still have its result kept: a change made in the same tick of the
/// file clock as the scan, after it, would leave the times as they were.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// The first line of the index file, with the version of its format.
const MAGIC: &[u8; 8] = b"AGCIDX1\n";

/// One record: device, inode, size, modification and status-change seconds and nanoseconds, and the kind's
/// number (0 for none).
const RECORD: usize = 8 * 3 + 12 * 2 + 2;

/// What the index knows of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    size: u64,
    modified: (i64, u32),
    changed: (i64, u32),
}

impl Stamp {
    fn of(metadata: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt as _;
        Self {
            size: metadata.len(),
            modified: (metadata.mtime(), nanos(metadata.mtime_nsec())),
            changed: (metadata.ctime(), nanos(metadata.ctime_nsec())),
        }
    }
}

/// What the index answers about a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Indexed {
    /// No credential in its first mebibyte.
    Clean,
    /// The kind of its first credential.
    Credential(&'static str),
    /// Not scanned: this run's budget of new bytes is spent.
    Unknown,
    /// It cannot be opened or read here (its mode, a path too long): not known to hold none.
    Unreadable,
}

#[derive(Debug, Default)]
struct State {
    entries: HashMap<(u64, u64), (Stamp, u16)>,
    /// Whether an entry was added or changed since the file was read.
    dirty: bool,
    /// The bytes of files scanned in this run.
    scanned: u64,
}

/// Which files hold a credential, by device and inode, loaded from and saved to one file.
#[derive(Debug)]
pub struct ContentIndex {
    path: PathBuf,
    state: Mutex<State>,
}

impl ContentIndex {
    /// The index kept at `path`; empty when the file does not exist, cannot be read, or was written for another
    /// rule table (a changed table must look at every file again).
    pub fn open(path: &Path) -> Self {
        let entries = std::fs::read(path)
            .ok()
            .and_then(|bytes| parse(&bytes))
            .unwrap_or_default();
        Self {
            path: path.to_path_buf(),
            state: Mutex::new(State {
                entries,
                ..State::default()
            }),
        }
    }

    /// Whether the regular file at `path` (with `metadata`, of the file itself) holds a credential in its first
    /// first mebibyte: from the index when the file is unchanged, else scanned now.
    pub fn check(&self, path: &Path, metadata: &std::fs::Metadata) -> Indexed {
        use std::os::unix::fs::MetadataExt as _;
        if !metadata.is_file() || metadata.len() == 0 {
            return Indexed::Clean;
        }
        let key = (metadata.dev(), metadata.ino());
        let stamp = Stamp::of(metadata);
        let Ok(mut state) = self.state.lock() else {
            return Indexed::Unknown;
        };
        if let Some((known, kind)) = state.entries.get(&key)
            && *known == stamp
        {
            return kind_of(*kind);
        }
        let cost = metadata.len().min(INDEX_SCAN_LIMIT);
        if state.scanned.saturating_add(cost) > RUN_BUDGET {
            return Indexed::Unknown;
        }
        state.scanned += cost;
        let Some(kind) = scan_start(path, cost) else {
            // Its owner could make it readable again from inside.
            return Indexed::Unreadable;
        };
        if settled(&stamp) {
            state.entries.insert(key, (stamp, kind));
            state.dirty = true;
        }
        kind_of(kind)
    }

    /// The whole content of the regular file at `path`, when it is no larger than a mebibyte (a view must be
    /// scanned whole) and can be read.
    pub fn read_whole(path: &Path) -> Option<Vec<u8>> {
        let file = std::fs::File::open(path).ok()?;
        let size = file
            .metadata()
            .map_or(0, |meta| meta.len().min(INDEX_SCAN_LIMIT + 1));
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        file.take(INDEX_SCAN_LIMIT + 1).read_to_end(&mut bytes).ok()?;
        u64::try_from(bytes.len())
            .is_ok_and(|len| len <= INDEX_SCAN_LIMIT)
            .then_some(bytes)
    }

    /// The view of a file's content that [`check`](Self::check) found to hold a credential: the bytes with each
    /// credential replaced by its marker; `None` when it no longer shows one (it changed since), so that the caller
    /// hides the file.
    ///
    /// A private key whose block the scanner does not follow to its `END` line (its body written in an encoding it
    /// does not read: `\/` or `\u000a` escapes, one string literal per line, XML character references) gives no
    /// view either: the view would leave every line after the first.
    pub fn view(content: &[u8]) -> Option<Vec<u8>> {
        let findings = crate::scan(content);
        let open_key = findings.iter().any(|finding| {
            finding.kind == crate::rules::PRIVATE_KEY
                && content
                    .get(finding.start..finding.end)
                    .is_none_or(|block| memchr::memmem::find(block, b"-----END").is_none())
        });
        (!findings.is_empty() && !open_key).then(|| crate::redact::redact_found(content, &findings))
    }

    /// Writes the index back when this run added to it: to a new file renamed over the old, so that a reader
    /// never sees half of it.
    ///
    /// # Errors
    /// The file cannot be written or renamed.
    pub fn save(&self) -> std::io::Result<()> {
        let Ok(mut state) = self.state.lock() else {
            return Ok(());
        };
        if !state.dirty {
            return Ok(());
        }
        let mut out = Vec::with_capacity(MAGIC.len() + 8 + state.entries.len() * RECORD);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&table_fingerprint().to_le_bytes());
        for (&(device, inode), &(stamp, kind)) in &state.entries {
            out.extend_from_slice(&device.to_le_bytes());
            out.extend_from_slice(&inode.to_le_bytes());
            out.extend_from_slice(&stamp.size.to_le_bytes());
            for (secs, nanos) in [stamp.modified, stamp.changed] {
                out.extend_from_slice(&secs.to_le_bytes());
                out.extend_from_slice(&nanos.to_le_bytes());
            }
            out.extend_from_slice(&kind.to_le_bytes());
        }
        let dir = self.path.parent().unwrap_or_else(|| Path::new("."));
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        std::io::Write::write_all(&mut file, &out)?;
        file.persist(&self.path).map_err(|e| e.error)?;
        state.dirty = false;
        Ok(())
    }
}

fn nanos(value: i64) -> u32 {
    u32::try_from(value).unwrap_or(0)
}

/// Whether the file with `stamp` last changed long enough ago that a write after the scan would have changed its
/// times.
fn settled(stamp: &Stamp) -> bool {
    let (secs, nanos) = stamp.changed;
    let changed = std::time::UNIX_EPOCH + std::time::Duration::new(u64::try_from(secs).unwrap_or(0), nanos);
    std::time::SystemTime::now()
        .duration_since(changed)
        .is_ok_and(|age| age >= SETTLE)
}

/// The number of the first credential's kind in the first mebibyte of the file at `path` (`size` bytes long, at
/// most a mebibyte, as its metadata said; 0 for none), or `None` when it cannot be opened or read. A binary file is scanned as any other: a database or an
/// archive holds credentials as text too.
fn scan_start(path: &Path, size: u64) -> Option<u16> {
    let file = std::fs::File::open(path).ok()?;
    // Room for the whole file and the one byte past the limit: read in one call, not grown from a small probe.
    let mut bytes = Vec::with_capacity(usize::try_from(size.saturating_add(1)).unwrap_or(0));
    file.take(INDEX_SCAN_LIMIT + 1).read_to_end(&mut bytes).ok()?;
    let whole = u64::try_from(bytes.len()).is_ok_and(|len| len <= INDEX_SCAN_LIMIT);
    bytes.truncate(usize::try_from(INDEX_SCAN_LIMIT).unwrap_or(usize::MAX));
    let kind = first(&bytes).map(|finding| finding.kind).or_else(|| {
        // A file of a mebibyte or less that holds one compressed or encoded (`creds.txt.gz`, `blob.b64`) has no
        // view to show: a credential found decoded hides the file. Past the decoded bound, what it holds is not
        // known and it stays as it is (the decision asks before a command names it).
        match crate::file::scan_packed(path, &bytes, whole, PACKED_LIMIT) {
            Ok(crate::file::Compressed::Found(kind)) if whole => Some(kind),
            _ => None,
        }
    });
    Some(kind.map_or(0, kind_number))
}

/// The most a small compressed file of the roots is decompressed to when it is first seen.
const PACKED_LIMIT: u64 = 16 << 20;

/// The kinds of the rule table, each once, in the table's order: a kind's number is its place here plus one.
fn kinds() -> &'static [&'static str] {
    static KINDS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
        let mut kinds: Vec<&'static str> = Vec::new();
        for rule in crate::rules::RULES {
            if !kinds.contains(&rule.kind) {
                kinds.push(rule.kind);
            }
        }
        kinds
    });
    &KINDS
}

fn kind_number(kind: &'static str) -> u16 {
    kinds()
        .iter()
        .position(|known| *known == kind)
        .and_then(|at| u16::try_from(at + 1).ok())
        // A kind outside the table cannot be: the first kind still says "a credential".
        .unwrap_or(1)
}

fn kind_of(number: u16) -> Indexed {
    match number {
        0 => Indexed::Clean,
        n => Indexed::Credential(kinds().get(usize::from(n) - 1).copied().unwrap_or("credential")),
    }
}

/// A fingerprint of the rule table (FNV-1a over every rule's kind, anchors, pattern and check) and of the
/// index's own bounds: an index written under another table or other bounds is not trusted.
fn table_fingerprint() -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut add = |bytes: &[u8]| {
        for &byte in bytes.iter().chain(&[0xff]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for rule in crate::rules::RULES {
        add(rule.kind.as_bytes());
        for anchor in rule.anchors {
            add(anchor.as_bytes());
        }
        add(rule.pattern.as_bytes());
        add(format!("{:?}", rule.check).as_bytes());
    }
    add(&INDEX_SCAN_LIMIT.to_le_bytes());
    hash
}

fn parse(bytes: &[u8]) -> Option<HashMap<(u64, u64), (Stamp, u16)>> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let (fingerprint, records) = rest.split_first_chunk::<8>()?;
    if u64::from_le_bytes(*fingerprint) != table_fingerprint() || records.len() % RECORD != 0 {
        return None;
    }
    let max_kind = u16::try_from(kinds().len()).unwrap_or(u16::MAX);
    let mut entries = HashMap::with_capacity(records.len() / RECORD);
    for record in records.chunks_exact(RECORD) {
        let mut fields = Fields(record);
        let key = (fields.u64()?, fields.u64()?);
        let stamp = Stamp {
            size: fields.u64()?,
            modified: (fields.i64()?, fields.u32()?),
            changed: (fields.i64()?, fields.u32()?),
        };
        let kind = fields.u16()?;
        if kind > max_kind {
            return None;
        }
        entries.insert(key, (stamp, kind));
    }
    Some(entries)
}

/// Little-endian fields read off the front of a record.
struct Fields<'a>(&'a [u8]);

impl Fields<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }
    fn i64(&mut self) -> Option<i64> {
        self.take().map(i64::from_le_bytes)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    fn u16(&mut self) -> Option<u16> {
        self.take().map(u16::from_le_bytes)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt as _;

    use super::*;

    const TOKEN: &str = "api_token: ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7\n";

    /// What `index` answers about the file at `path` as it is now.
    fn checked(index: &ContentIndex, path: &Path) -> Indexed {
        index.check(path, &std::fs::metadata(path).unwrap())
    }

    /// How many entries the index at `store` holds once opened.
    fn entries(store: &Path) -> usize {
        ContentIndex::open(store).state.lock().unwrap().entries.len()
    }

    #[test]
    fn a_file_is_known_by_its_content_and_looked_at_again_when_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.yml");
        std::fs::write(&file, "name: x\n").unwrap();
        let index = ContentIndex::open(&dir.path().join("index"));
        assert_eq!(checked(&index, &file), Indexed::Clean);
        std::fs::write(&file, TOKEN).unwrap();
        assert_eq!(checked(&index, &file), Indexed::Credential("GitHub token"));
        // A binary file (a database) holds credentials as text too.
        let binary = dir.path().join("app.db");
        std::fs::write(&binary, [b"\0\x01".as_slice(), TOKEN.as_bytes()].concat()).unwrap();
        assert_eq!(checked(&index, &binary), Indexed::Credential("GitHub token"));
    }

    /// A small file that holds a credential compressed or base64-encoded is known to hold it, and has no view (its
    /// bytes show nothing to replace): the sandbox hides it.
    #[test]
    fn a_credential_held_compressed_or_encoded_is_found_and_gives_no_view() {
        use base64::Engine as _;
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let index = ContentIndex::open(&dir.path().join("index"));
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gzip.write_all(format!("{}{TOKEN}", "lorem ipsum\n".repeat(50)).as_bytes())
            .unwrap();
        let encoded = base64::engine::general_purpose::STANDARD.encode(TOKEN);
        for (name, bytes) in [
            ("creds.gz", gzip.finish().unwrap()),
            ("blob.b64", encoded.into_bytes()),
        ] {
            let file = dir.path().join(name);
            std::fs::write(&file, &bytes).unwrap();
            assert_eq!(
                checked(&index, &file),
                Indexed::Credential("GitHub token"),
                "{name}"
            );
            assert_eq!(ContentIndex::view(&bytes), None, "{name}");
        }
        let clean = dir.path().join("clean.b64");
        std::fs::write(
            &clean,
            base64::engine::general_purpose::STANDARD.encode("name: x\n".repeat(10)),
        )
        .unwrap();
        assert_eq!(checked(&index, &clean), Indexed::Clean);
    }

    #[test]
    fn an_entry_on_disk_is_believed_while_the_stamp_holds_and_a_fresh_result_is_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("index");
        let file = dir.path().join("notes.txt");
        std::fs::write(&file, TOKEN).unwrap();
        let index = ContentIndex::open(&store);
        let meta = std::fs::metadata(&file).unwrap();
        assert_eq!(index.check(&file, &meta), Indexed::Credential("GitHub token"));
        index.save().unwrap();
        // Just changed: not kept, so nothing was written.
        assert!(!store.exists());

        // An entry saved for this stamp (here: "clean", which the content is not) is what a later run answers,
        // without reading the file: the stamp stands for the content.
        let stamp = Stamp::of(&meta);
        let kept = ContentIndex::open(&store);
        {
            let mut state = kept.state.lock().unwrap();
            state.entries.insert((meta.dev(), meta.ino()), (stamp, 0));
            state.dirty = true;
        }
        kept.save().unwrap();
        let reopened = ContentIndex::open(&store);
        assert_eq!(reopened.check(&file, &meta), Indexed::Clean);
        // Once the file changes, its stamp does too, and it is read again.
        std::fs::write(&file, format!("{TOKEN}more\n")).unwrap();
        assert_eq!(checked(&reopened, &file), Indexed::Credential("GitHub token"));
    }

    #[test]
    fn an_index_of_another_table_or_with_a_cut_record_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("index");
        let file = |fingerprint: u64, record: usize| {
            let mut bytes = Vec::from(MAGIC.as_slice());
            bytes.extend_from_slice(&fingerprint.to_le_bytes());
            bytes.extend_from_slice(&vec![0u8; record]);
            std::fs::write(&store, bytes).unwrap();
        };
        file(table_fingerprint(), RECORD);
        assert_eq!(entries(&store), 1);
        // Written under another table: a file clean then may hold a credential now.
        file(table_fingerprint() ^ 1, RECORD);
        assert_eq!(entries(&store), 0);
        file(table_fingerprint(), RECORD - 1);
        assert_eq!(entries(&store), 0);
    }

    #[test]
    fn a_view_replaces_each_credential_and_a_file_too_large_or_clean_has_none() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("values.yaml");
        std::fs::write(&file, format!("name: x\n{TOKEN}other: y\n")).unwrap();
        let content = ContentIndex::read_whole(&file).unwrap();
        assert_eq!(
            ContentIndex::view(&content).unwrap(),
            b"name: x\napi_token: [redacted: GitHub token]\nother: y\n"
        );
        assert_eq!(ContentIndex::view(b"name: x\n"), None);
        let large = dir.path().join("large.txt");
        let mut text = TOKEN.to_owned();
        text.push_str(&"x".repeat(usize::try_from(INDEX_SCAN_LIMIT).unwrap()));
        std::fs::write(&large, text).unwrap();
        assert_eq!(ContentIndex::read_whole(&large), None);
    }

    #[test]
    fn a_file_that_cannot_be_read_is_not_taken_for_clean() {
        let dir = tempfile::tempdir().unwrap();
        let index = ContentIndex::open(&dir.path().join("index"));
        // Gone since it was listed: it cannot be opened.
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let listed = std::fs::metadata(&file).unwrap();
        std::fs::remove_file(&file).unwrap();
        assert_eq!(index.check(&file, &listed), Indexed::Unreadable);
        // What is no regular file holds no content of its own.
        assert_eq!(checked(&index, dir.path()), Indexed::Clean);
    }

    #[test]
    fn a_run_scans_new_files_within_its_budget() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, TOKEN).unwrap();
        let index = ContentIndex::open(&dir.path().join("index"));
        index.state.lock().unwrap().scanned = RUN_BUDGET;
        assert_eq!(checked(&index, &file), Indexed::Unknown);
    }

    /// A view is made only where each private key's block is followed to its end: a body in an encoding the
    /// scanner does not read would be left in the view, so such a file gives none (the caller hides it).
    #[test]
    fn a_private_key_the_scanner_cannot_follow_gives_no_view() {
        let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj";
        let whole = format!("a: 1\n-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\nb: 2\n");
        let view = ContentIndex::view(whole.as_bytes()).unwrap();
        assert!(!String::from_utf8_lossy(&view).contains(body));
        for escaped in [
            format!(
                "{{\"key\": \"-----BEGIN PRIVATE KEY-----\\u000a{body}\\u000a-----END PRIVATE KEY-----\"}}"
            ),
            format!("{{\"key\": \"-----BEGIN PRIVATE KEY-----\\n{body}\\/x\\n-----END PRIVATE KEY-----\"}}"),
            format!(
                "key := \"-----BEGIN PRIVATE KEY-----\\n\" +\n\t\"{body}\\n\" +\n\t\"-----END PRIVATE KEY-----\\n\""
            ),
            format!("<key>-----BEGIN PRIVATE KEY-----&#10;{body}&#10;-----END PRIVATE KEY-----</key>"),
        ] {
            assert_eq!(ContentIndex::view(escaped.as_bytes()), None, "{escaped}");
        }
    }
}
