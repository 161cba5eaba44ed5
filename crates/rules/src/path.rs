//! Lexical path helpers used to present paths to the path rules.

use std::path::{Component, Path, PathBuf};

/// `path` made absolute against `cwd` (when relative) and lexically normal: no `.`, no empty or repeated
/// separators, no trailing separator, and each `..` removes the component before it. This is the form "the path as
/// written" is matched in; containment is decided on resolved paths by the sandbox, never on this form.
pub fn absolute_lexical(path: &Path, cwd: &Path) -> PathBuf {
    if path.is_absolute() {
        normalize(path)
    } else {
        normalize(&cwd.join(path))
    }
}

/// Lexical normalisation of an absolute path (see [`absolute_lexical`]).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    out
}

/// Expands a leading `~` or `~/` with `home`; other paths are returned as they are. `None` when the path needs a
/// home directory and there is none.
pub(crate) fn expand_home(path: &str, home: Option<&Path>) -> Option<PathBuf> {
    if path == "~" {
        return home.map(Path::to_path_buf);
    }
    match path.strip_prefix("~/") {
        Some(rest) => home.map(|h| h.join(rest)),
        None => Some(PathBuf::from(path)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_forms() {
        let cwd = Path::new("/proj");
        for (input, expected) in [
            ("a/./b//c/", "/proj/a/b/c"),
            ("../x", "/x"),
            ("/../../etc", "/etc"),
            ("a..b.txt", "/proj/a..b.txt"),
            ("~notes.md", "/proj/~notes.md"),
            ("//etc//hosts", "/etc/hosts"),
        ] {
            assert_eq!(
                absolute_lexical(Path::new(input), cwd),
                PathBuf::from(expected),
                "{input}"
            );
        }
        let home = Some(Path::new("/home/u"));
        assert_eq!(expand_home("~/.ssh", home), Some(PathBuf::from("/home/u/.ssh")));
        assert_eq!(expand_home("~", home), Some(PathBuf::from("/home/u")));
        assert_eq!(expand_home("~user/x", home), Some(PathBuf::from("~user/x")));
        assert_eq!(expand_home("~/x", None), None);
    }
}
