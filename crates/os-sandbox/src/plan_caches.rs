//! The package caches of the home directory a `workspace-write` command writes: each through an overlay whose
//! writes land in a layer of its own (the project's `.agent-guard/caches/`), with the entries that configure a
//! tool cleared from the layer before each run.

use std::path::{Path, PathBuf};

use crate::scan::prefixed;

use super::{CACHE_CONFIG, CACHE_CONFIG_PREFIXES, CacheOverlay, HOME_CACHES, Isolation, SandboxSpec};

/// The caches a `workspace-write` command writes, and the overlays they are written through.
pub(super) struct WritableCaches {
    /// The cache directories granted for writing: each overlaid one, and one that lies inside a writable root
    /// (the project's own, written like the rest of it).
    pub(super) writable: Vec<PathBuf>,
    /// The overlays of the caches outside the roots.
    pub(super) overlays: Vec<CacheOverlay>,
}

/// Which package caches `spec` writes, and how. A shared cache is never written: code planted there (a crate's
/// `build.rs` rewritten, a future version with cargo's `.cargo-ok`, a wheel, a Go module) would run later
/// outside the sandbox, in a build of any other project. With namespaces each existing cache is mounted as an
/// overlay whose upper layer is the project's (`<store>/<name>/upper`): downloads persist for the project's later
/// sandboxed runs, other projects and the user's own builds never see them. Without namespaces (Landlock cannot
/// redirect a path) or without a store, the shared caches are read, not written: a build that must download
/// does so outside the sandbox, where the decision asks. A cache beneath a writable root is the project's own
/// and stays writable; one that holds a root or the store, or whose path an overlay's options cannot carry
/// (`,`, `:`, `\`), stays read-only. The layers' directories are made here, a `.agent-guard` among them with a
/// `.gitignore` of `*`.
pub(super) fn writable_caches(
    spec: &SandboxSpec,
    writes: bool,
    isolation: Isolation,
    notes: &mut Vec<String>,
) -> WritableCaches {
    let mut out = WritableCaches {
        writable: Vec::new(),
        overlays: Vec::new(),
    };
    if !writes {
        return out;
    }
    let home = spec.home.as_deref();
    let holders = spec
        .toolchains
        .iter()
        .any(|t| t.cache)
        .then(|| crate::home::HomeHolders::new(home));
    let places: Vec<PathBuf> = home
        .iter()
        .flat_map(|home| HOME_CACHES.iter().map(move |c| home.join(c)))
        .chain(
            spec.toolchains
                .iter()
                .filter(|t| t.cache && holders.as_ref().is_some_and(|h| !h.holds(&t.dir)))
                .map(|t| t.dir.clone()),
        )
        .collect();
    // Most do not exist: looked up together (crate::presence); what exists and is no directory itself may be a
    // link to one.
    let kinds = crate::presence::kinds(&places);
    let mut caches: Vec<PathBuf> = places
        .into_iter()
        .zip(kinds)
        .filter(|(dir, kind)| kind.is_some_and(|is_dir| is_dir || dir.is_dir()))
        .map(|(dir, _)| dir)
        .collect();
    caches.sort();
    caches.dedup();
    let store = spec
        .cache_store
        .as_ref()
        .filter(|_| matches!(isolation, Isolation::Namespaces { .. }));
    for cache in &caches {
        if spec.roots.iter().any(|root| cache.starts_with(root)) {
            out.writable.push(cache.clone());
            continue;
        }
        let Some(store) = store else { continue };
        // Beneath a cache that is overlaid already: the outer overlay holds it.
        if out.overlays.iter().any(|o| cache.starts_with(&o.cache)) {
            out.writable.push(cache.clone());
            continue;
        }
        let holds_root = spec
            .roots
            .iter()
            .chain(&spec.read_only_roots)
            .any(|root| root.starts_with(cache));
        let tangled = store.starts_with(cache) || cache.starts_with(store);
        let unspeakable = cache
            .as_os_str()
            .as_encoded_bytes()
            .iter()
            .chain(store.as_os_str().as_encoded_bytes())
            .any(|b| matches!(b, b',' | b':' | b'\\'));
        if holds_root || tangled || unspeakable {
            notes.push(format!(
                "the package cache `{}` is read-only: no overlay can hold it",
                cache.display()
            ));
            continue;
        }
        let layer = store.join(layer_name(cache));
        let overlay = CacheOverlay {
            cache: cache.clone(),
            upper: layer.join("upper"),
            work: layer.join("work"),
        };
        match make_layer(&overlay).and_then(|()| clear_config(spec, &overlay)) {
            Ok(()) => {
                out.writable.push(cache.clone());
                out.overlays.push(overlay);
            }
            Err(error) => notes.push(format!(
                "the package cache `{}` is read-only: cannot make its layer `{}`: {error}",
                cache.display(),
                layer.display()
            )),
        }
    }
    out
}

/// The name of a cache's layer in the store: its absolute path with `%` and `/` escaped, so that two caches never
/// share a layer.
fn layer_name(cache: &Path) -> String {
    cache.to_string_lossy().replace('%', "%25").replace('/', "%2F")
}

/// Removes from the project's layer of `overlay` what would configure the tools or run as a program
/// ([`CACHE_CONFIG`], the start-up files of [`CACHE_CONFIG_PREFIXES`], a toolchain's guarded files): such an entry
/// that the shared cache lacks is not mounted read-only (there is nothing to mount), so a command may have made it
/// in the layer; each run starts without it, as the real cache is.
fn clear_config(spec: &SandboxSpec, overlay: &CacheOverlay) -> std::io::Result<()> {
    let in_layer = |path: &Path| {
        path.strip_prefix(&overlay.cache)
            .ok()
            .filter(|rel| !rel.as_os_str().is_empty())
            .map(|rel| overlay.upper.join(rel))
    };
    let home = spec.home.as_deref();
    let listed = home
        .iter()
        .flat_map(|home| CACHE_CONFIG.iter().map(move |e| home.join(e)))
        .chain(spec.toolchains.iter().flat_map(|t| t.guarded.iter().cloned()))
        .filter_map(|path| in_layer(&path));
    let prefixed_ones = home
        .iter()
        .flat_map(|home| {
            CACHE_CONFIG_PREFIXES
                .iter()
                .map(move |(dir, p)| (home.join(dir), *p))
        })
        .filter_map(|(dir, p)| {
            let layer_dir = if dir == overlay.cache {
                overlay.upper.clone()
            } else {
                in_layer(&dir)?
            };
            Some(prefixed(&layer_dir, p))
        })
        .flatten();
    for path in listed.chain(prefixed_ones) {
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&path)?,
            Ok(_) => std::fs::remove_file(&path)?,
            Err(_) => {}
        }
    }
    Ok(())
}

/// Makes the upper and work directories of `overlay` (mode 0700), writing a `.gitignore` of `*` in each
/// `.agent-guard` directory made on the way and in the store itself (a `.agent-guard` the user keeps without one
/// would otherwise show the layers to git).
fn make_layer(overlay: &CacheOverlay) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    let store = overlay.upper.parent().and_then(Path::parent);
    let made: Vec<PathBuf> = overlay
        .upper
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .filter(|a| a.file_name().is_some_and(|n| n == ".agent-guard") || Some(*a) == store)
        .map(Path::to_path_buf)
        .collect();
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true).mode(0o700);
    builder.create(&overlay.upper)?;
    builder.create(&overlay.work)?;
    for dir in made {
        let ignore = dir.join(".gitignore");
        if !ignore.exists() {
            std::fs::write(
                ignore,
                "# Written by agent-guard when it made this directory: what it keeps here stays out of git.\n*\n",
            )?;
        }
    }
    Ok(())
}
