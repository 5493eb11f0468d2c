//! The crate's global allocator (the binding's, the examples' and the tests'): the
//! system's, with every block of 2 MiB or more asked to be backed by transparent huge
//! pages.
//!
//! Training touches hundreds of megabytes of fresh memory: the hand-over's buffers, the
//! merge loop's words, pair lists and tables, counting's per-thread tables. In pages of
//! 4 KiB each first touch is a fault into the kernel (about 100,000 training 100 MB of
//! multilingual text at 65,536), and the faults were a few percent of the run. Linux's
//! usual setting for transparent huge pages, "madvise", backs memory with 2 MiB pages
//! where the program asks (`MADV_HUGEPAGE`), so such memory faults once per 2 MiB: asking
//! for every large block halved the faults and made merging about 3% faster, with the peak
//! RSS unchanged (whole large blocks are touched anyway; benches/RESULTS.md, "large
//! allocations on huge pages"). Only the 2 MiB-aligned inside of a block is advised (a
//! huge page never spans memory the block does not own), and the advice changes no
//! contents. Where huge pages are off ("never") or always on, or the call fails, nothing
//! changes; other systems get the system allocator as is.

use std::alloc::{GlobalAlloc, Layout, System};

/// A huge page, and the smallest block advised (smaller ones hold no aligned huge page).
const HUGE_PAGE: usize = 2 << 20;

/// The system allocator, asking for huge pages under its large blocks.
pub struct HugePages;

// SAFETY: every call is the system allocator's, with the same arguments; the advice only
// names memory inside the block just handed out, and changes none of its contents.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's promises, passed on.
        advised(unsafe { System.alloc(layout) }, layout.size())
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        advised(unsafe { System.alloc_zeroed(layout) }, layout.size())
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        advised(unsafe { System.realloc(ptr, layout, new_size) }, new_size)
    }
}

/// `block` (of `size` bytes, or null), its aligned huge pages advised when it is large.
#[inline]
fn advised(block: *mut u8, size: usize) -> *mut u8 {
    if size >= HUGE_PAGE && !block.is_null() {
        let start = (block as usize).next_multiple_of(HUGE_PAGE);
        let end = (block as usize + size) / HUGE_PAGE * HUGE_PAGE;
        if end > start {
            advise_huge(start, end - start);
        }
    }
    block
}

#[cfg(target_os = "linux")]
fn advise_huge(start: usize, len: usize) {
    /// `MADV_HUGEPAGE` (the same number on every Linux architecture the wheels are for).
    const MADV_HUGEPAGE: i32 = 14;
    extern "C" {
        fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
    }
    // SAFETY: `start..start + len` lies inside a block the allocator just handed out
    // (page-aligned: huge pages are a multiple of every page size), and the advice keeps
    // its contents. A failure (huge pages not built in) leaves the memory as it was.
    unsafe { madvise(start as *mut std::ffi::c_void, len, MADV_HUGEPAGE) };
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_start: usize, _len: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of every size around the threshold allocate, grow, shrink and free through
    /// it with their contents kept.
    #[test]
    fn blocks_keep_their_contents() {
        for size in [1, 4096, HUGE_PAGE - 1, HUGE_PAGE, HUGE_PAGE + 1, 3 * HUGE_PAGE + 5] {
            let layout = Layout::from_size_align(size, 8).unwrap();
            // SAFETY: a layout of non-zero size; the block is written within its size,
            // reallocated with its layout and freed once.
            unsafe {
                let zeroed = HugePages.alloc_zeroed(layout);
                assert!(!zeroed.is_null());
                assert!(std::slice::from_raw_parts(zeroed, size).iter().all(|&b| b == 0));
                HugePages.dealloc(zeroed, layout);
                let block = HugePages.alloc(layout);
                assert!(!block.is_null());
                for i in 0..size {
                    *block.add(i) = i as u8;
                }
                let grown = HugePages.realloc(block, layout, 2 * size + HUGE_PAGE);
                assert!((0..size).all(|i| *grown.add(i) == i as u8));
                let bigger = Layout::from_size_align(2 * size + HUGE_PAGE, 8).unwrap();
                let shrunk = HugePages.realloc(grown, bigger, size);
                assert!((0..size).all(|i| *shrunk.add(i) == i as u8));
                HugePages.dealloc(shrunk, layout);
            }
        }
    }
}
