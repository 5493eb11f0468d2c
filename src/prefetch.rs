//! A hint that memory will be read soon, for loops that know the addresses they will read
//! a few steps ahead (a merge's next words, the next words' bytes): their cache misses
//! then overlap instead of following one another.

/// Asks the CPU to fetch the cache line at `p` (nothing on targets other than x86-64).
/// Never changes a result.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and cannot fault, whatever the
    // address. SSE is part of x86_64.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
