//! How the anchors of one packed (Teddy) search are laid out in its buckets, so that few places of a text are
//! candidates.
//!
//! Teddy compares the first bytes of each place of the text against a fingerprint per bucket: for each of the first
//! (up to four) bytes, the set of low nybbles and the set of high nybbles of the anchors in the bucket at that byte.
//! A place whose bytes all fall in some bucket's sets is a candidate, and each anchor of the bucket is compared
//! there. A bucket whose anchors differ at a byte admits every mix of their nybbles (`pass` and `pcsk_` together
//! admit `pcss`, `pask`, `pasc`), and with letters that mix is often a common word: laid out in the order of the list
//! (the crate's bucket of a pattern is its id modulo the bucket count), the anchors' three searches found a
//! candidate every 26 bytes of this workspace's text, each costing a comparison of the bucket's anchors there.
//! Here each anchor joins the bucket whose fingerprint it widens the least, counting a fingerprint by how often
//! ordinary text (source code, prose; [`FREQUENT`]) falls in it: the common words (`token`, `pass`) each start a
//! bucket, and the provider prefixes of rare bytes (`ghp_`, `sk-`, `7q~`) fill them. The searches then find a
//! candidate every 180 bytes, a fifth of them an anchor.
//!
//! The aho-corasick crate chooses the bucket of each pattern by the order the patterns are added in (the pattern
//! with id `i` goes to bucket `buckets - 1 - i % buckets`, or to the bucket of an earlier pattern whose first bytes
//! have the same low nybbles); [`packed_order`] adds them in the order that gives each group its own bucket. That
//! is the crate's choice, not its promise: were it to change, the search would stay exact and only slower.

/// The buckets of a Teddy search of at most [`SLIM_PATTERNS`] patterns ("slim").
const SLIM_BUCKETS: usize = 8;

/// The most patterns a slim search takes; with more, up to 64, Teddy has [`FAT_BUCKETS`] buckets ("fat").
const SLIM_PATTERNS: usize = 32;

/// The buckets of a Teddy search of more than [`SLIM_PATTERNS`] patterns.
const FAT_BUCKETS: usize = 16;

/// How many bytes of each anchor Teddy's fingerprint holds, at most.
const FINGERPRINT: usize = 4;

/// How often each byte occurs in ordinary lowercased text, per ten thousand bytes: the bytes that occur more than
/// once in a thousand in source code and its documentation (this workspace's Rust, Markdown and TOML); any other
/// byte counts [`RARE`].
const FREQUENT: &[(u8, u16)] = &[
    (b' ', 2390),
    (b'e', 702),
    (b't', 557),
    (b's', 456),
    (b'a', 416),
    (b'o', 410),
    (b'r', 397),
    (b'n', 389),
    (b'i', 335),
    (b'l', 251),
    (b'\n', 241),
    (b'd', 234),
    (b'c', 217),
    (b'(', 172),
    (b'h', 172),
    (b')', 172),
    (b'u', 170),
    (b'p', 169),
    (b'm', 147),
    (b':', 147),
    (b'.', 143),
    (b',', 143),
    (b'"', 137),
    (b'f', 125),
    (b'_', 103),
    (b'w', 96),
    (b'g', 94),
    (b'/', 89),
    (b'b', 74),
    (b'`', 65),
    (b'y', 59),
    (b';', 58),
    (b'k', 57),
    (b'-', 53),
    (b'v', 51),
    (b'{', 49),
    (b'}', 48),
    (b'=', 46),
    (b'x', 39),
    (b'&', 39),
    (b'|', 28),
    (b'!', 24),
    (b'>', 24),
    (b'[', 22),
    (b']', 22),
    (b'\'', 19),
    (b'j', 17),
    (b'0', 16),
    (b'q', 13),
    (b'1', 12),
];

/// What a byte not in [`FREQUENT`] counts, per ten thousand bytes.
const RARE: u16 = 5;

/// The order in which to add `anchors` (lowercased, none empty) to one packed search: indexes into `anchors`, some
/// repeated to fill a bucket's turn (a repeated pattern joins the bucket of its first; it costs one comparison
/// more at a candidate of that bucket). Every anchor is in it; its length is a multiple of the bucket count, at most
/// 64, and more than [`SLIM_PATTERNS`] exactly when `anchors` are.
pub(crate) fn packed_order(anchors: &[Vec<u8>]) -> Vec<usize> {
    let buckets = if anchors.len() > SLIM_PATTERNS {
        FAT_BUCKETS
    } else {
        SLIM_BUCKETS
    };
    let depth = anchors.len().div_ceil(buckets);
    let width = anchors.iter().map(Vec::len).min().unwrap_or(0).min(FINGERPRINT);
    let groups = group(anchors, buckets, depth, width);
    let mut order = Vec::with_capacity(buckets * depth);
    for row in 0..depth {
        for turn in 0..buckets {
            // A group with fewer anchors than the others (or none) repeats its first, or the list's first.
            let member = groups
                .get(turn)
                .and_then(|group| group.get(row).or_else(|| group.first()))
                .copied()
                .unwrap_or(0);
            order.push(member);
        }
    }
    order
}

/// A bucket's fingerprint: at each of its first bytes, the low and the high nybbles of its anchors there, one bit
/// each.
#[derive(Clone, Copy, Default)]
struct Fingerprint {
    low: [u16; FINGERPRINT],
    high: [u16; FINGERPRINT],
}

impl Fingerprint {
    /// This fingerprint with `anchor`'s first `width` bytes added.
    fn with(mut self, anchor: &[u8], width: usize) -> Fingerprint {
        for (at, byte) in anchor.iter().take(width).enumerate() {
            if let (Some(low), Some(high)) = (self.low.get_mut(at), self.high.get_mut(at)) {
                *low |= 1 << (byte & 0x0f);
                *high |= 1 << (byte >> 4);
            }
        }
        self
    }

    /// How often a place of ordinary text falls in this fingerprint, its bytes taken as independent: the product,
    /// over the first `width` bytes, of the share of the bytes whose nybbles both are in the sets.
    fn likelihood(&self, weights: &[f64; 256], width: usize) -> f64 {
        self.low
            .iter()
            .zip(&self.high)
            .take(width)
            .map(|(low, high)| {
                let mut share = 0.0;
                for high_nybble in nybbles(*high) {
                    for low_nybble in nybbles(*low) {
                        share += weights.get(high_nybble << 4 | low_nybble).copied().unwrap_or(0.0);
                    }
                }
                share
            })
            .product()
    }
}

/// The nybbles whose bits are set in `set`, lowest first.
fn nybbles(mut set: u16) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        let nybble = set.trailing_zeros();
        set &= set.wrapping_sub(1);
        (nybble < 16).then_some(nybble as usize)
    })
}

/// Each byte's share of ordinary text, from [`FREQUENT`] and [`RARE`].
fn weights() -> [f64; 256] {
    let mut weights = [f64::from(RARE) / 10_000.0; 256];
    for (byte, count) in FREQUENT {
        if let Some(weight) = weights.get_mut(usize::from(*byte)) {
            *weight = f64::from(*count) / 10_000.0;
        }
    }
    weights
}

/// `anchors` in `buckets` groups of at most `depth` each (indexes into `anchors`): the most common anchor first,
/// each into the group whose fingerprint of `width` bytes it makes the least more likely.
fn group(anchors: &[Vec<u8>], buckets: usize, depth: usize, width: usize) -> Vec<Vec<usize>> {
    let weights = weights();
    let alone: Vec<f64> = anchors
        .iter()
        .map(|anchor| {
            Fingerprint::default()
                .with(anchor, width)
                .likelihood(&weights, width)
        })
        .collect();
    let mut by_likelihood: Vec<usize> = (0..anchors.len()).collect();
    by_likelihood.sort_by(|a, b| {
        let (a_alone, b_alone) = (alone.get(*a).copied(), alone.get(*b).copied());
        b_alone
            .unwrap_or(0.0)
            .total_cmp(&a_alone.unwrap_or(0.0))
            .then(a.cmp(b))
    });
    let mut groups: Vec<Group> = vec![Group::default(); buckets];
    for index in by_likelihood {
        let Some(anchor) = anchors.get(index) else {
            continue;
        };
        // Each group with room, with what the anchor would make of its fingerprint and of its likelihood.
        let best = groups
            .iter_mut()
            .filter(|group| group.members.len() < depth)
            .map(|group| {
                let fingerprint = group.fingerprint.with(anchor, width);
                let likelihood = fingerprint.likelihood(&weights, width);
                (likelihood - group.likelihood, fingerprint, likelihood, group)
            })
            .min_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((_, fingerprint, likelihood, group)) = best {
            group.fingerprint = fingerprint;
            group.likelihood = likelihood;
            group.members.push(index);
        }
    }
    groups.into_iter().map(|group| group.members).collect()
}

/// A bucket being filled: its anchors (indexes), their fingerprint and its likelihood.
#[derive(Clone, Default)]
struct Group {
    fingerprint: Fingerprint,
    likelihood: f64,
    members: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowered(anchors: &[&str]) -> Vec<Vec<u8>> {
        anchors.iter().map(|anchor| anchor.as_bytes().to_vec()).collect()
    }

    /// Every anchor is added, and the count of patterns makes Teddy choose the bucket count the layout is for.
    #[test]
    fn every_anchor_is_added_in_a_whole_number_of_turns() {
        for count in [1, 5, 8, 9, 27, 32, 33, 63, 64] {
            let anchors: Vec<Vec<u8>> = (0..count).map(|n| format!("a{n:03}_").into_bytes()).collect();
            let order = packed_order(&anchors);
            let buckets = if count > SLIM_PATTERNS {
                FAT_BUCKETS
            } else {
                SLIM_BUCKETS
            };
            assert_eq!(order.len() % buckets, 0, "{count}");
            assert!(
                order.len() <= 64 && (order.len() > SLIM_PATTERNS) == (count > SLIM_PATTERNS),
                "{count}"
            );
            for index in 0..count {
                assert!(order.contains(&index), "{count}: {index}");
            }
        }
    }

    /// The common words each have a bucket of their own, and the layout is less likely to be met than the
    /// crate's own (the pattern of id `i` in bucket `i % buckets`).
    #[test]
    fn common_words_do_not_share_a_bucket_and_the_layout_beats_the_crates() {
        let anchors = lowered(&[
            "token", "ghp_", "gho_", "pass", "ghu_", "ghs_", "npm_", "secret", "hvs.", "hvb.", "ntn_",
            "pnu_", "curl", "pnb_", "sgp_", "sbp_",
        ]);
        let groups = group(&anchors, 4, 4, FINGERPRINT);
        let bucket_of = |index: usize| groups.iter().position(|group| group.contains(&index));
        for (a, b) in [(0, 3), (0, 7), (0, 12), (3, 7), (3, 12), (7, 12)] {
            assert_ne!(bucket_of(a), bucket_of(b), "{a} and {b}");
        }
        let weights = weights();
        let likelihood = |groups: &[Vec<usize>]| -> f64 {
            groups
                .iter()
                .map(|group| {
                    group
                        .iter()
                        .fold(Fingerprint::default(), |fingerprint, index| {
                            fingerprint.with(&anchors[*index], FINGERPRINT)
                        })
                        .likelihood(&weights, FINGERPRINT)
                })
                .sum()
        };
        let crates: Vec<Vec<usize>> = (0..4).map(|bucket| (bucket..16).step_by(4).collect()).collect();
        assert!(likelihood(&groups) < likelihood(&crates) / 2.0);
    }
}
