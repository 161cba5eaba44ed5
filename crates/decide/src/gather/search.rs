//! What a search of a directory reaches: the places below it that deny rules or the secret-file list protect.

use std::path::Path;

use agent_fs_sandbox::{PathCheck, Reach};
use agent_tool_traits::{Decision, Layer};

use super::Gathering;

impl Gathering<'_> {
    /// A search of a directory reads everything below it (hidden files only when `reach.hidden`, only files of
    /// the names it lists when it lists some): a deny rule on reads that protects a place there which exists, or a
    /// secret file there (a protected read: `.env`, `*.pem`, …), makes the search ask, naming it, so that a
    /// narrower search can leave the place out.
    pub(super) fn search(&mut self, tool: &str, check: &PathCheck, reach: &Reach<'_>) {
        // The path as written and as resolved; the second only when a link made them differ.
        let resolved = check.resolved.as_deref().filter(|r| *r != check.absolute);
        for dir in [Some(check.absolute.as_path()), resolved]
            .into_iter()
            .flatten()
            .filter(|dir| dir.is_dir())
        {
            if let Some((layer, why)) = self.search_reaches(tool, dir, reach) {
                self.find(Decision::Ask, why, layer);
                return;
            }
        }
    }

    /// Why a search of `dir` must ask, and the layer that says so: the first protected place it reaches, or a
    /// directory too large to check.
    fn search_reaches(&self, tool: &str, dir: &Path, reach: &Reach<'_>) -> Option<(Layer, String)> {
        let reached = |place: &str| {
            let hidden = Path::new(place).strip_prefix(dir).is_ok_and(|below| {
                below
                    .components()
                    .any(|c| c.as_os_str().as_encoded_bytes().starts_with(b"."))
            });
            (reach.hidden || !hidden) && std::fs::symlink_metadata(place).is_ok()
        };
        let denied = self
            .guard
            .policy
            .deny_rules_beneath(tool, dir)
            .into_iter()
            .find(|(_, place)| reached(place));
        if let Some((rule, place)) = denied {
            return Some((
                Layer::Rules,
                format!(
                    "searching `{}` reads `{place}`, which `{}` denies; a narrower search can leave it out",
                    dir.display(),
                    rule.text
                ),
            ));
        }
        let sandbox = self.guard.sandbox.as_ref()?;
        let reached = sandbox.protected_beneath(dir, reach);
        if let Some((file, why)) = reached.protected {
            return Some((
                Layer::Sandbox,
                format!(
                    "searching `{}` reads `{}`: {why}; a narrower search can leave it out",
                    dir.display(),
                    file.display()
                ),
            ));
        }
        reached.incomplete.map(|why| {
            (
                Layer::Sandbox,
                format!(
                    "searching `{}` cannot be checked for secret files: {why}",
                    dir.display()
                ),
            )
        })
    }
}
