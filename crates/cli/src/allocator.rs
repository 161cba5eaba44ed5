//! The global allocator: glibc's until the process says it decides many calls ([`for_many_decisions`]),
//! mimalloc's from then on.
//!
//! Two, because the two kinds of process want different ones. A decision is many small allocations freed soon
//! after (the shell parse, paths, reasons): over many decisions on several threads (`check --jsonl`, `serve`, the
//! runtime) glibc's `malloc`/`free` were a fifth of the CPU time, and mimalloc's thread-local free lists cost a
//! fraction of that. A process that decides one call and ends (the hook, `explain`, `sandbox`) pays instead for
//! mimalloc's start: its arena, and a fresh page for each size class it touches (a third more page faults than
//! with glibc's heap, which packs the same allocations together), about 0.4 ms of the hook's CPU time
//! (docs/PERFORMANCE.md).
//!
//! Each block is freed and resized by the allocator that made it, whatever the mode is by then: mimalloc knows its
//! own blocks (`mi_is_in_heap_region`, a look-up in its page map), and every other block is glibc's. The look-up is
//! asked only of a block that lies where glibc's blocks lie ([`GLIBC_SPAN`]): every block outside that span is
//! mimalloc's, which is nearly every block a process that decides many calls frees (the look-up on every `free` was
//! a twentieth of the instructions of `check --jsonl`).
//!
//! mimalloc is built without its transparent huge pages (`no_thp`): where the kernel makes them on request
//! (`madvise`, the usual setting), mimalloc asked for them on its arenas, and the first allocation of each thread
//! faulted in a 2 MiB page the kernel had to zero.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Whether new blocks come from mimalloc.
static MANY: AtomicBool = AtomicBool::new(false);

/// The addresses from the lowest byte of a block glibc ever made for this allocator to one past the highest:
/// every glibc block lies within it, so a block outside it is mimalloc's. It only grows, as glibc makes blocks
/// (before the switch, and when a block of its own is resized), and it is narrow: glibc's blocks are the few made
/// before the switch, in its heap, away from mimalloc's mappings.
static GLIBC_SPAN: Span = Span::new();

/// A span of addresses that only grows ([`GLIBC_SPAN`]). A thread that frees a block was handed it by the thread
/// that made it through something that orders the two, so it sees the span grown to hold the block.
struct Span {
    low: AtomicUsize,
    high: AtomicUsize,
}

impl Span {
    const fn new() -> Self {
        Self {
            low: AtomicUsize::new(usize::MAX),
            high: AtomicUsize::new(0),
        }
    }

    /// Grows the span to hold the `size` bytes at `ptr` (nothing for a null pointer, a failed allocation).
    fn hold(&self, ptr: *mut u8, size: usize) -> *mut u8 {
        if !ptr.is_null() {
            let at = ptr.addr();
            self.low.fetch_min(at, Ordering::Relaxed);
            self.high
                .fetch_max(at.saturating_add(size.max(1)), Ordering::Relaxed);
        }
        ptr
    }

    fn holds(&self, ptr: *mut u8) -> bool {
        let at = ptr.addr();
        at >= self.low.load(Ordering::Relaxed) && at < self.high.load(Ordering::Relaxed)
    }
}

/// From now on, new blocks come from mimalloc: for a process that decides many calls, on any of its threads.
pub(crate) fn for_many_decisions() {
    MANY.store(true, Ordering::Relaxed);
}

/// glibc's allocator (through [`System`]) or mimalloc's, as [`for_many_decisions`] says; each block back to its
/// own.
pub(crate) struct Allocator;

/// The alignment every mimalloc block has: mimalloc's blocks are whole words. Asked for a plain block wherever the
/// alignment wanted is at most this (nearly every allocation): mimalloc's aligned entry checks the alignment on
/// every call and, whenever the page of the size asked for is full, takes a block of a larger size class and
/// aligns within it, instead of refilling that size's page.
const WORD: usize = size_of::<usize>();

/// Whether mimalloc made the block at `ptr`: outside glibc's span it is mimalloc's; within it, mimalloc's page map
/// says.
#[expect(unsafe_code, reason = "mimalloc's page map is read through its C interface")]
fn mimallocs(ptr: *mut u8) -> bool {
    // SAFETY: `mi_is_in_heap_region` only looks `ptr` up in mimalloc's page map, for any address.
    !GLIBC_SPAN.holds(ptr) || unsafe { libmimalloc_sys::mi_is_in_heap_region(ptr.cast_const().cast()) }
}

#[expect(
    unsafe_code,
    reason = "the global allocator's interface is unsafe: each call hands an allocator the layout's size (and its \
              alignment) or a pointer that allocator gave, as its functions require"
)]
// SAFETY: a block comes from glibc through `System` (which keeps the layout's contract) or from mimalloc, whose
// blocks are aligned to a word and at least `size` bytes long, and aligned to `align` when asked through its
// aligned entry. A pointer is freed or resized by the allocator whose block it is (`mimallocs`): `mi_free` takes
// any pointer mimalloc gave, `mi_realloc` keeps the block's word alignment (`mi_realloc_aligned` keeps a larger
// one), and `System` gets back only its own blocks with the layout they were made with.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe {
            if !MANY.load(Ordering::Relaxed) {
                GLIBC_SPAN.hold(System.alloc(layout), layout.size())
            } else if layout.align() <= WORD {
                libmimalloc_sys::mi_malloc(layout.size()).cast()
            } else {
                libmimalloc_sys::mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe {
            if !MANY.load(Ordering::Relaxed) {
                GLIBC_SPAN.hold(System.alloc_zeroed(layout), layout.size())
            } else if layout.align() <= WORD {
                libmimalloc_sys::mi_zalloc(layout.size()).cast()
            } else {
                libmimalloc_sys::mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: see the impl.
        unsafe {
            if mimallocs(ptr) {
                libmimalloc_sys::mi_free(ptr.cast());
            } else {
                System.dealloc(ptr, layout);
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe {
            if !mimallocs(ptr) {
                GLIBC_SPAN.hold(System.realloc(ptr, layout, new_size), new_size)
            } else if layout.align() <= WORD {
                libmimalloc_sys::mi_realloc(ptr.cast(), new_size).cast()
            } else {
                libmimalloc_sys::mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A block glibc made (before the switch) is freed and resized by glibc after it; blocks made after it are
    /// mimalloc's, aligned as asked, zeroed when asked, and resized by mimalloc.
    #[test]
    fn each_block_goes_back_to_the_allocator_that_made_it() {
        let wide = layout(64, 64);
        #[expect(
            unsafe_code,
            reason = "calls the allocator's interface directly, as Rust calls the global allocator"
        )]
        // SAFETY: every layout has a non-zero size; each block is freed once, with the layout it has then.
        unsafe {
            // What `Allocator` hands out before the switch (which another test may have made already).
            let glibc = GLIBC_SPAN.hold(System.alloc(wide), wide.size());
            assert!(!glibc.is_null() && !mimallocs(glibc));
            for_many_decisions();
            let mi = Allocator.alloc(wide);
            assert!(!mi.is_null() && mimallocs(mi));
            assert_eq!(mi as usize % 64, 0);
            let zeroed = Allocator.alloc_zeroed(layout(24, 8));
            assert!(mimallocs(zeroed));
            assert!(std::slice::from_raw_parts(zeroed, 24).iter().all(|b| *b == 0));
            glibc.write_bytes(5, 64);
            let grown = Allocator.realloc(glibc, wide, 4096);
            assert!(!mimallocs(grown), "a glibc block stays glibc's");
            assert!(std::slice::from_raw_parts(grown, 64).iter().all(|b| *b == 5));
            mi.write_bytes(9, 64);
            let mi_grown = Allocator.realloc(mi, wide, 4096);
            assert!(mimallocs(mi_grown));
            assert_eq!(mi_grown as usize % 64, 0);
            assert!(std::slice::from_raw_parts(mi_grown, 64).iter().all(|b| *b == 9));
            Allocator.dealloc(grown, layout(4096, 64));
            Allocator.dealloc(mi_grown, layout(4096, 64));
            Allocator.dealloc(zeroed, layout(24, 8));
        }
        // Blocks made and freed on other threads after the switch.
        let sums: Vec<usize> = (0..4)
            .map(|n| std::thread::spawn(move || (0..1000).map(|i| vec![n; i % 97 + 1].len()).sum::<usize>()))
            .map(|t| t.join().expect("the thread ends"))
            .collect();
        assert!(sums.iter().all(|s| Some(s) == sums.first()));
    }

    /// A span holds every byte of the blocks it was grown to hold and nothing outside them all.
    #[test]
    fn a_span_holds_what_it_was_grown_to_hold() {
        let span = Span::new();
        let at = |addr: usize| std::ptr::without_provenance_mut::<u8>(addr);
        assert!(!span.holds(at(0)) && !span.holds(at(4096)));
        assert!(span.hold(std::ptr::null_mut(), 8).is_null());
        assert!(!span.holds(at(0)));
        span.hold(at(4096), 16);
        span.hold(at(8192), 0);
        for inside in [4096, 4111, 6000, 8192] {
            assert!(span.holds(at(inside)), "{inside}");
        }
        for outside in [0, 4095, 8193, usize::MAX] {
            assert!(!span.holds(at(outside)), "{outside}");
        }
    }
}
