//! The credential scanner's throughput on 100 MiB of mixed source text (this workspace's Rust, Markdown and TOML
//! repeated, one line in 2,000 a credential or a look-alike): `scan` of each mebibyte as a file check reads it,
//! and the streaming `Redactor` over 64 KiB reads, into a buffer and straight to a writer as `agent-guard sandbox`
//! pumps a command's output.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing
)]

use std::hint::black_box;
use std::path::Path;

use agent_secrets::Redactor;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const TOTAL: usize = 100 << 20;

/// Lines sprinkled into the text: credentials and the look-alikes that must stay.
const SPRINKLES: &[&str] = &[
    "export GITHUB_TOKEN=ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7",
    "  password: Qv7#mK2pLx9!wR4t",
    "DATABASE_URL=postgres://app:Zr8kQ2vLm5Tx@db.internal:5432/app",
    "password: changeme",
    "commit 3f2a9c1d7e4b5a6f8091a2b3c4d5e6f708192a3b",
    "request_id = \"123e4567-e89b-12d3-a456-426614174000\"",
    "token: ${{ secrets.GITHUB_TOKEN }}",
];

/// This workspace's source files, concatenated and repeated to [`TOTAL`] bytes.
fn mixed_source() -> Vec<u8> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    collect(&root.join("crates"), &mut files);
    collect(&root.join("docs"), &mut files);
    files.sort();
    let mut corpus = Vec::new();
    for file in files {
        corpus.extend(std::fs::read(file).unwrap());
    }
    let mut text = Vec::with_capacity(TOTAL + (1 << 20));
    let mut line = 0usize;
    while text.len() < TOTAL {
        for piece in corpus.split_inclusive(|byte| *byte == b'\n') {
            text.extend_from_slice(piece);
            line += 1;
            if line.is_multiple_of(2000) {
                text.extend_from_slice(SPRINKLES[line / 2000 % SPRINKLES.len()].as_bytes());
                text.push(b'\n');
            }
            if text.len() >= TOTAL {
                break;
            }
        }
    }
    text
}

fn collect(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else if path
            .extension()
            .is_some_and(|ext| ext == "rs" || ext == "md" || ext == "toml")
        {
            files.push(path);
        }
    }
}

fn scanner(c: &mut Criterion) {
    let text = mixed_source();
    let mut group = c.benchmark_group("secrets");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("scan_100MiB_in_1MiB_pieces", |b| {
        b.iter(|| {
            let found: usize = text
                .chunks(1 << 20)
                .map(|piece| agent_secrets::scan(black_box(piece)).len())
                .sum();
            black_box(found)
        });
    });
    group.bench_function("redact_100MiB_in_64KiB_reads", |b| {
        let mut out = Vec::with_capacity(1 << 20);
        b.iter(|| {
            let mut redactor = Redactor::new();
            let mut written = 0usize;
            for read in text.chunks(64 << 10) {
                redactor.push(black_box(read), &mut out);
                written += out.len();
                out.clear();
            }
            redactor.finish(&mut out);
            written += out.len();
            out.clear();
            black_box(written)
        });
    });
    group.bench_function("redact_100MiB_in_64KiB_reads_to_a_writer", |b| {
        // As the pump writes now: the lines without a credential straight from the read to the writer.
        b.iter(|| {
            let mut redactor = Redactor::new();
            let mut sink = std::io::sink();
            for read in text.chunks(64 << 10) {
                redactor.push_to(black_box(read), &mut sink).unwrap();
            }
            redactor.finish_to(&mut sink).unwrap();
        });
    });
    group.finish();
}

criterion_group!(benches, scanner);
criterion_main!(benches);
