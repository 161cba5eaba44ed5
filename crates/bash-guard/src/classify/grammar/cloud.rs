//! The cloud tools' words (`aws`, `gcloud`, `gsutil`, `az`, `doctl`): their service commands are too many to
//! list, so every word is data unless it names a place on this machine; their credential groups are understood
//! only to list what they hold.

use crate::analysis::AccessVia;
use crate::knowledge::Recursion;
use crate::word::{Word, path_word};

use super::{Classified, copies, looks_like_path};

/// The groups of the cloud tools that handle the tool's own credentials or configuration.
const CLOUD_CREDENTIALS: &[&str] = &["configure", "config", "auth", "login", "logout", "account", "sso"];

/// `aws`, `gcloud`, `gsutil`, `az`, `doctl`: the service commands are too many to list, so every word is read as
/// data unless it names a place on this machine (`~/…`, `/…`, `./…`, `file://…`, `fileb://…`, `@FILE`, an option
/// ending in `-file`), which is read and written; a storage copy's operands not in the cloud are paths. The
/// groups handling the tool's own credentials are not understood.
pub(super) fn cloud(name: &str, args: &[Word], c: &mut Classified) -> Result<(), String> {
    let words: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    // Listing what the group holds (`doctl auth list`, `gcloud auth list`, `aws configure list`) names accounts
    // and contexts and masks keys; every other verb of the group may print or change a credential
    // (`gcloud auth print-access-token`, `aws configure get`, `az account get-access-token`).
    let listing = |at: usize| words.get(at + 1) == Some(&"list");
    if let Some(group) = words
        .iter()
        .enumerate()
        .find(|&(at, w)| CLOUD_CREDENTIALS.contains(w) && !listing(at))
        .map(|(_, group)| group)
    {
        return Err(format!(
            "`{name} {group}` handles the tool's own credentials or configuration"
        ));
    }
    let operands: Vec<&Word> = args.iter().filter(|w| !w.text.starts_with('-')).collect();
    let storage_copy = match name {
        "aws" => matches!(
            words.as_slice(),
            [.., "s3", "cp" | "mv" | "sync", _, _] | ["s3", ..]
        ),
        "gcloud" => words
            .windows(2)
            .any(|p| p == ["storage", "cp"] || p == ["storage", "rsync"] || p == ["storage", "mv"]),
        "gsutil" => words.iter().any(|w| matches!(*w, "cp" | "mv" | "rsync")),
        _ => false,
    };
    if storage_copy {
        let copied: Vec<&Word> = operands
            .iter()
            .copied()
            .skip_while(|w| !matches!(w.text.as_str(), "cp" | "mv" | "sync" | "rsync"))
            .skip(1)
            .collect();
        copies(&copied, |w| !w.text.contains("://"), c);
        if words
            .iter()
            .any(|w| matches!(*w, "sync" | "rsync" | "--recursive" | "-r" | "-R"))
        {
            c.recursive = Recursion::All;
        }
    }
    for (index, word) in args.iter().enumerate() {
        let text = word.text.as_str();
        let value = text.split_once('=').map_or(text, |(_, v)| v);
        let file = value
            .strip_prefix("file://")
            .or_else(|| value.strip_prefix("fileb://"))
            .or_else(|| value.strip_prefix('@'));
        let option_file = index > 0
            && args.get(index - 1).is_some_and(|o| {
                o.text.starts_with('-') && o.text.ends_with("-file") && !o.text.contains('=')
            })
            || text.starts_with('-') && text.split_once('=').is_some_and(|(o, _)| o.ends_with("-file"));
        // `file://`, `fileb://`, `@` and an option ending in `-file` read; any other place may be written too (an
        // output operand: `aws s3api get-object … OUT`).
        let (path, written) = match file {
            Some(file) => (Some(file), false),
            None if option_file => (Some(value), false),
            None if looks_like_path(value) => (Some(value), true),
            None => (None, false),
        };
        if let Some(path) = path.filter(|p| !p.is_empty()) {
            let path = path_word(path);
            c.read(&path, AccessVia::Operand);
            if written {
                c.write(&path, AccessVia::Operand);
            }
        }
    }
    Ok(())
}
