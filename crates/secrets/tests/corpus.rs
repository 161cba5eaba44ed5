//! The scanner against its corpus: every `+ ` entry must hold a credential and every `- ` entry none; precision
//! and recall are printed and must be 1. An entry is a line, and the lines after it that start with `| ` (its
//! next lines: a YAML block, a key printed by `grep -r`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test: a failed write or a malformed corpus is a failed test"
)]

const CORPUS: &str = include_str!("corpus.txt");

/// The corpus's entries: whether each holds a credential, and its text (its lines joined by line ends).
fn entries() -> Vec<(bool, String)> {
    let mut entries: Vec<(bool, String)> = Vec::new();
    for line in CORPUS.lines().filter(|line| !line.starts_with('#')) {
        match line.split_at(2) {
            ("+ ", text) => entries.push((true, text.to_owned())),
            ("- ", text) => entries.push((false, text.to_owned())),
            ("| ", text) => {
                let (_, last) = entries.last_mut().expect("a `| ` line continues an entry");
                last.push('\n');
                last.push_str(text);
            }
            _ => panic!("a corpus line starts with `+ `, `- ` or `| `: {line}"),
        }
    }
    entries
}

#[test]
fn the_corpus_is_recognised_with_high_precision_and_recall() {
    let (mut true_positives, mut false_positives, mut false_negatives, mut lines) = (0u32, 0u32, 0u32, 0u32);
    let mut misses = Vec::new();
    for (expected, text) in entries() {
        let text = text.as_str();
        lines += 1;
        let found = agent_secrets::first(text.as_bytes());
        match (expected, &found) {
            (true, Some(_)) => true_positives += 1,
            (true, None) => {
                false_negatives += 1;
                misses.push(format!("missed: {text}"));
            }
            (false, Some(finding)) => {
                false_positives += 1;
                misses.push(format!("false {}: {text}", finding.kind));
            }
            (false, None) => {}
        }
    }
    let precision = f64::from(true_positives) / f64::from(true_positives + false_positives);
    let recall = f64::from(true_positives) / f64::from(true_positives + false_negatives);
    println!(
        "scanner corpus: {lines} entries, {} credentials; precision {precision:.3}, recall {recall:.3}",
        true_positives + false_negatives
    );
    for miss in &misses {
        println!("  {miss}");
    }
    assert!(lines >= 200, "the corpus has {lines} entries");
    assert!(
        misses.is_empty(),
        "precision {precision:.3}, recall {recall:.3}: {misses:#?}"
    );
}

#[test]
fn a_redacted_line_keeps_its_shape_and_loses_the_value() {
    let found = entries()
        .into_iter()
        .filter(|(expected, line)| *expected && agent_secrets::first(line.as_bytes()).is_some());
    for (_, line) in found {
        let redacted = agent_secrets::redact(line.as_bytes());
        let redacted = String::from_utf8_lossy(&redacted);
        assert!(redacted.contains("[redacted: "), "{line}");
        assert!(agent_secrets::first(redacted.as_bytes()).is_none(), "{redacted}");
    }
}

/// The text of the corpus's lines, `+`, `-` and `|` alike, one per line.
fn corpus_text() -> String {
    CORPUS
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| format!("{}\n", line.get(2..).unwrap_or_default()))
        .collect()
}

fn streamed(text: &[u8], read: usize) -> Vec<u8> {
    let mut redactor = agent_secrets::Redactor::new();
    let mut out = Vec::new();
    for piece in text.chunks(read) {
        redactor.push_to(piece, &mut out).unwrap();
    }
    redactor.finish_to(&mut out).unwrap();
    out
}

#[test]
fn the_stream_redacts_as_the_whole_text_does_whatever_the_reads() {
    let text = corpus_text();
    let whole = agent_secrets::redact(text.as_bytes()).into_owned();
    assert!(whole.len() < text.len(), "the corpus holds credentials");
    // Reads of one byte split every anchor and every credential; the others fall anywhere in a line, and the
    // largest takes the corpus in one.
    for read in [1, 2, 3, 7, 64, 333, 4096, 65_536, text.len()] {
        let out = streamed(text.as_bytes(), read);
        let same = out.iter().zip(&whole).take_while(|(a, b)| a == b).count();
        assert!(
            out == whole,
            "reads of {read} bytes differ after {same}: {:?} against {:?}",
            String::from_utf8_lossy(&out[same.saturating_sub(200)..(same + 200).min(out.len())]),
            String::from_utf8_lossy(&whole[same.saturating_sub(200)..(same + 200).min(whole.len())]),
        );
    }
}

#[test]
fn a_credential_at_the_very_end_of_the_output_is_redacted() {
    let token = "ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7";
    // No line end after it: the stream's end is the credential's.
    for text in [
        format!("done\nexport GH={token}"),
        token.to_owned(),
        format!("password: Qv7#mK2pLx9!wR4t\n{token}"),
    ] {
        for read in [1, 5, text.len()] {
            let out = String::from_utf8(streamed(text.as_bytes(), read)).unwrap();
            assert!(!out.contains(token), "reads of {read}: {out}");
            assert!(
                out.ends_with("[redacted: GitHub token]"),
                "reads of {read}: {out}"
            );
        }
    }
}

#[test]
fn a_long_output_without_a_line_end_has_each_credential_redacted() {
    // A minified file or a binary blob: hundreds of kilobytes without a newline, credentials anywhere in it,
    // including the last bytes; the redactor must not hold it all, and must not let one through a piece's edge.
    let token = "ghp_4fJ9kQ2mZx7LwP1nR8sT3vY6bC0dE5gH2jK7";
    let key = "AKIAYLNKMKFJSA45HBK7";
    let mut text = String::new();
    let mut planted = 0;
    while text.len() < 400_000 {
        text.push_str(&"x".repeat(997 + text.len() % 4096));
        text.push(' ');
        text.push_str(if planted % 2 == 0 { token } else { key });
        text.push(' ');
        planted += 1;
    }
    text.push_str(token);
    for read in [4096, 65_536, 100_000] {
        let mut redactor = agent_secrets::Redactor::new();
        let mut out = Vec::new();
        let mut taken = 0;
        for piece in text.as_bytes().chunks(read) {
            redactor.push_to(piece, &mut out).unwrap();
            taken += piece.len();
            // What is held stays bounded (64 KiB and the read; a marker is at most 16 bytes shorter than its
            // credential), so the stream shows as it comes.
            assert!(
                taken <= out.len() + (64 << 10) + read + 16 * planted,
                "reads of {read}: {taken} taken, {} written",
                out.len()
            );
        }
        redactor.finish_to(&mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(!out.contains(token) && !out.contains(key), "reads of {read}");
        assert_eq!(out.matches("[redacted: ").count(), planted + 1, "reads of {read}");
        assert!(!out.contains('\n'));
    }
}
