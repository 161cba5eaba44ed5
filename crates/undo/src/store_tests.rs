//! Tests of store.rs.

use super::*;

#[test]
fn secret_patterns_match_at_any_depth_in_any_case() {
    // In lower case, matched against paths in lower case (the walk's own test sees `.ENV` left out).
    assert_eq!(ignore_line(".env").unwrap(), ".env");
    assert_eq!(ignore_line("*.PEM").unwrap(), "*.pem");
    assert_eq!(ignore_line(".aws/credentials").unwrap(), "**/.aws/credentials");
    assert_eq!(ignore_line("/proc/*/environ"), None);
}

#[test]
fn the_lines_for_one_entry_are_the_root_s_lines_that_name_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for tagged in ["cache", "target"] {
        std::fs::create_dir(root.join(tagged)).unwrap();
        std::fs::write(root.join(tagged).join("CACHEDIR.TAG"), "Signature").unwrap();
    }
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(root.join("file"), "x").unwrap();
    std::os::unix::fs::symlink(root.join("cache"), root.join("link")).unwrap();
    let prefix = Path::new("sub");
    let all = exclude_lines(root, prefix);
    assert!(all.contains(&"/sub/cache/".to_owned()) && all.contains(&"/sub/target/".to_owned()));
    for name in ["cache", "target", "src", "file", "link", "missing"] {
        let line = format!("/sub/{name}/");
        let expected: Vec<String> = all
            .iter()
            .filter(|l| !l.starts_with('/') || **l == line)
            .cloned()
            .collect();
        let only = exclude_lines_of(root, prefix, Some(std::ffi::OsStr::new(name)));
        assert_eq!(only, expected, "{name}");
    }
    assert_eq!(exclude_lines_of(root, prefix, None), all);
}

#[test]
fn names_with_pattern_characters_match_only_themselves() {
    assert_eq!(escape_ignore("a[1]*b"), "a\\[1\\]\\*b");
}

#[test]
fn store_names_are_stable() {
    assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
}
