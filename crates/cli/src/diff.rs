//! A unified diff of two texts by lines, for `install --dry-run` and `uninstall --dry-run`.

use std::fmt::Write as _;

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// Past this many cells the middle of the two texts is shown as removed and added whole, not aligned line by line.
const MAX_CELLS: usize = 4_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Same,
    Removed,
    Added,
}

/// The changes from `old` to `new` as `@@ -a,b +c,d @@` hunks of ` `, `-` and `+` lines; empty when they are equal.
pub(crate) fn unified(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = align(&a, &b);
    if ops.iter().all(|(op, _)| *op == Op::Same) {
        return String::new();
    }
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    // Which entries to show: every change and CONTEXT lines around it.
    let changed: Vec<usize> = (0..ops.len())
        .filter(|&i| ops.get(i).is_some_and(|(op, _)| *op != Op::Same))
        .collect();
    let mut shown = vec![false; ops.len()];
    for &i in &changed {
        let from = i.saturating_sub(CONTEXT);
        let to = (i + CONTEXT + 1).min(ops.len());
        for flag in shown.get_mut(from..to).unwrap_or_default() {
            *flag = true;
        }
    }
    let (mut line_a, mut line_b) = (1_usize, 1_usize);
    let mut i = 0;
    while i < ops.len() {
        if !shown.get(i).copied().unwrap_or(false) {
            match ops.get(i).map(|(op, _)| *op) {
                Some(Op::Same) => {
                    line_a += 1;
                    line_b += 1;
                }
                Some(Op::Removed) => line_a += 1,
                Some(Op::Added) => line_b += 1,
                None => {}
            }
            i += 1;
            continue;
        }
        let end = (i..ops.len())
            .find(|&j| !shown.get(j).copied().unwrap_or(false))
            .unwrap_or(ops.len());
        let hunk = ops.get(i..end).unwrap_or_default();
        let count_a = hunk.iter().filter(|(op, _)| *op != Op::Added).count();
        let count_b = hunk.iter().filter(|(op, _)| *op != Op::Removed).count();
        let _ = writeln!(
            out,
            "@@ -{},{count_a} +{},{count_b} @@",
            if count_a == 0 { line_a - 1 } else { line_a },
            if count_b == 0 { line_b - 1 } else { line_b },
        );
        for (op, line) in hunk {
            let mark = match op {
                Op::Same => ' ',
                Op::Removed => '-',
                Op::Added => '+',
            };
            let _ = writeln!(out, "{mark}{line}");
        }
        line_a += count_a;
        line_b += count_b;
        i = end;
    }
    out
}

/// Both texts as one sequence of kept, removed and added lines: common lines at both ends are kept, the middle is
/// aligned by a longest common subsequence.
fn align<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(Op, &'a str)> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let rest_a = a.get(prefix..).unwrap_or_default();
    let rest_b = b.get(prefix..).unwrap_or_default();
    let suffix = rest_a
        .iter()
        .rev()
        .zip(rest_b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mid_a = rest_a.get(..rest_a.len() - suffix).unwrap_or_default();
    let mid_b = rest_b.get(..rest_b.len() - suffix).unwrap_or_default();
    let mut ops: Vec<(Op, &str)> = a
        .get(..prefix)
        .unwrap_or_default()
        .iter()
        .map(|l| (Op::Same, *l))
        .collect();
    ops.extend(middle(mid_a, mid_b));
    ops.extend(
        rest_a
            .get(rest_a.len() - suffix..)
            .unwrap_or_default()
            .iter()
            .map(|l| (Op::Same, *l)),
    );
    ops
}

fn middle<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(Op, &'a str)> {
    let width = b.len() + 1;
    if a.len().saturating_mul(b.len()) > MAX_CELLS {
        let mut ops: Vec<(Op, &str)> = a.iter().map(|l| (Op::Removed, *l)).collect();
        ops.extend(b.iter().map(|l| (Op::Added, *l)));
        return ops;
    }
    // lcs[i * width + j]: the length of the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![0_u32; (a.len() + 1) * width];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            let value = if a.get(i) == b.get(j) {
                lcs.get((i + 1) * width + j + 1).copied().unwrap_or(0) + 1
            } else {
                let down = lcs.get((i + 1) * width + j).copied().unwrap_or(0);
                let right = lcs.get(i * width + j + 1).copied().unwrap_or(0);
                down.max(right)
            };
            if let Some(cell) = lcs.get_mut(i * width + j) {
                *cell = value;
            }
        }
    }
    let at = |i: usize, j: usize| lcs.get(i * width + j).copied().unwrap_or(0);
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::new();
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x == y => {
                ops.push((Op::Same, *x));
                i += 1;
                j += 1;
            }
            (Some(x), Some(_)) if at(i + 1, j) >= at(i, j + 1) => {
                ops.push((Op::Removed, *x));
                i += 1;
            }
            (Some(x), None) => {
                ops.push((Op::Removed, *x));
                i += 1;
            }
            (_, Some(y)) => {
                ops.push((Op::Added, *y));
                j += 1;
            }
            (None, None) => break,
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_have_no_diff() {
        assert_eq!(unified("a\nb\n", "a\nb\n", "x", "y"), "");
    }

    #[test]
    fn hunks_carry_context_and_line_numbers() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let new = "1\n2\n3\n4\n5\nfive and a half\n6\n7\n8\n9\nten\n";
        assert_eq!(
            unified(old, new, "a", "b"),
            "--- a\n+++ b\n@@ -3,8 +3,9 @@\n 3\n 4\n 5\n+five and a half\n 6\n 7\n 8\n 9\n-10\n+ten\n"
        );
        assert_eq!(
            unified("", "{}\n", "a", "b"),
            "--- a\n+++ b\n@@ -0,0 +1,1 @@\n+{}\n"
        );
        let far = (1..=20).map(|n| format!("{n}\n")).collect::<String>();
        let changed = (1..=20)
            .map(|n| match n {
                2 => "two\n".to_owned(),
                19 => "nineteen\n".to_owned(),
                n => format!("{n}\n"),
            })
            .collect::<String>();
        let diff = unified(&far, &changed, "a", "b");
        assert_eq!(diff.matches("@@ -").count(), 2, "{diff}");
    }
}
