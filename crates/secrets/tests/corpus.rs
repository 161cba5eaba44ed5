//! The scanner against its corpus: every `+ ` line must hold a credential and every `- ` line none; precision and
//! recall are printed and bounded.

const CORPUS: &str = include_str!("corpus.txt");

#[test]
fn the_corpus_is_recognised_with_high_precision_and_recall() {
    let (mut true_positives, mut false_positives, mut false_negatives, mut lines) = (0u32, 0u32, 0u32, 0u32);
    let mut misses = Vec::new();
    for line in CORPUS.lines().filter(|line| !line.starts_with('#')) {
        let (expected, text) = match line.split_at(2) {
            ("+ ", text) => (true, text),
            ("- ", text) => (false, text),
            _ => panic!("a corpus line starts with `+ ` or `- `: {line}"),
        };
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
        "scanner corpus: {lines} lines, {} credentials; precision {precision:.3}, recall {recall:.3}",
        true_positives + false_negatives
    );
    for miss in &misses {
        println!("  {miss}");
    }
    assert!(lines >= 200, "the corpus has {lines} lines");
    assert!(precision >= 0.95, "precision {precision:.3}: {misses:#?}");
    assert!(recall >= 0.95, "recall {recall:.3}: {misses:#?}");
}

#[test]
fn a_redacted_line_keeps_its_shape_and_loses_the_value() {
    let found = CORPUS
        .lines()
        .filter_map(|line| line.strip_prefix("+ "))
        .filter(|line| agent_secrets::first(line.as_bytes()).is_some());
    for line in found {
        let redacted = agent_secrets::redact(line.as_bytes());
        let redacted = String::from_utf8_lossy(&redacted);
        assert!(redacted.contains("[redacted: "), "{line}");
        assert!(agent_secrets::first(redacted.as_bytes()).is_none(), "{redacted}");
    }
}
