//! A fixed list of places, asked whether a path lies at or beneath one of them.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Component, Path};

/// A list of places grouped once by their first name (the first component after the root, if any): a path lies
/// at or beneath a place ([`Path::starts_with`], component by component) only if its own first name is the
/// place's, so it is compared only with the places of that name instead of with every one.
#[derive(Debug)]
pub struct Places {
    by_name: HashMap<&'static OsStr, Vec<&'static Path>>,
    /// Places without a name (`/`), compared with every path.
    unnamed: Vec<&'static Path>,
}

impl Places {
    /// The places of `list`.
    pub fn new(list: &[&'static str]) -> Self {
        let mut places = Self {
            by_name: HashMap::new(),
            unnamed: Vec::new(),
        };
        for place in list.iter().map(|place| Path::new(*place)) {
            match first_name(place) {
                Some(name) => places.by_name.entry(name).or_default().push(place),
                None => places.unnamed.push(place),
            }
        }
        places
    }

    /// Whether `path` is one of the places or beneath one, as `list.iter().any(|p| path.starts_with(p))` says.
    pub fn hold(&self, path: &Path) -> bool {
        let named = first_name(path)
            .and_then(|name| self.by_name.get(name))
            .map(Vec::as_slice)
            .unwrap_or_default();
        named
            .iter()
            .chain(&self.unnamed)
            .any(|place| path.starts_with(place))
    }
}

/// The first component of `path` after its root, if any.
fn first_name(path: &Path) -> Option<&OsStr> {
    match path.components().find(|c| *c != Component::RootDir)? {
        Component::Normal(name) => Some(name),
        Component::CurDir => Some(OsStr::new(".")),
        Component::ParentDir => Some(OsStr::new("..")),
        Component::Prefix(prefix) => Some(prefix.as_os_str()),
        Component::RootDir => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The places grouped by their first names hold what comparing the path with every place holds: for each
    /// place, what lies beneath it, a name it starts with, each of its ancestors, and the same relative or rooted.
    #[test]
    fn the_places_by_name_hold_what_every_place_holds() {
        let list: &[&'static str] = &[
            ".ssh",
            ".config/gh",
            ".config/gcloud",
            "/usr",
            "/nix/store",
            "/",
            "./x",
            "../y",
            "a//b",
        ];
        for list in [list, &list[..list.len() - 4], &[]] {
            let places = Places::new(list);
            let every = |path: &Path| list.iter().any(|place| path.starts_with(place));
            let mut paths = vec![
                String::new(),
                ".".to_owned(),
                "/etc".to_owned(),
                "notes.txt".to_owned(),
            ];
            for place in list {
                let place = place.trim_start_matches('/');
                for root in ["", "/", "//"] {
                    paths.extend([
                        format!("{root}{place}"),
                        format!("{root}{place}/"),
                        format!("{root}{place}/x"),
                        format!("{root}{place}x"),
                        format!("{root}{place}//x"),
                        format!("{root}{place}/./x"),
                        format!("{root}./{place}"),
                        format!("{root}x/{place}"),
                    ]);
                }
                let mut ancestor = Path::new(place);
                while let Some(parent) = ancestor.parent() {
                    paths.push(parent.to_string_lossy().into_owned());
                    ancestor = parent;
                }
            }
            for path in &paths {
                let path = Path::new(path);
                assert_eq!(places.hold(path), every(path), "{list:?} {}", path.display());
            }
        }
    }
}
