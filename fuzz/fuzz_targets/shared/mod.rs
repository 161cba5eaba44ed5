//! What the fuzz targets share.

/// Lets panics raised inside brush-parser through without failing the run: bash-guard catches them and asks, so
/// they are part of the contract. libFuzzer's own hook aborts on every panic, so it is kept for all others.
pub fn tolerate_parser_panics() {
    let fuzzer_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !info.location().is_some_and(|l| l.file().contains("brush-parser")) {
            fuzzer_hook(info);
        }
    }));
}
