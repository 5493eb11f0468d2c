//! Ends of ASCII runs, 16 bytes at a time: the run helpers of `scan.rs` call `run_end` for
//! the ASCII stretch of a letter, digit, whitespace or "other" run, then decode a character
//! only where the run stopped at a byte from 0x80.
//!
//! A piece of English is ~4 bytes, so one 16-byte test usually finds the end of its run
//! (a byte loop took ~7 instructions a byte). On x86_64 the test is SSE2 (in the
//! baseline, so no runtime detection); elsewhere, and in texts shorter than 16 bytes, a
//! byte loop over the same sets. Near the end of the text the last 16 bytes are loaded
//! again (overlapping what was tested) and the bytes before `i` shifted out, so no run
//! ends in a byte loop. The tests compare both paths on every set, start and terminator.

/// A set of ASCII bytes that a run is made of; no byte from 0x80 is in any of them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Set {
    /// `A`-`Z`, `a`-`z` (ASCII `\p{L}`).
    Letter,
    /// `a`-`z` (ASCII `\p{Ll}`, o200k's lowercase W).
    Lower,
    /// `A`-`Z` (ASCII `\p{Lu}`, o200k's uppercase U).
    Upper,
    /// `0`-`9` (ASCII `\p{N}`).
    Digit,
    /// `\t`, `\n`, U+000B, U+000C, `\r`, U+0020 (ASCII `\s`).
    Whitespace,
    /// Every other ASCII byte (ASCII `[^\s\p{L}\p{N}]`).
    Other,
}

impl Set {
    /// Whether `b` is in the set (the definition the vector tests must agree with).
    #[inline(always)]
    pub fn contains(self, b: u8) -> bool {
        match self {
            Set::Letter => b.is_ascii_alphabetic(),
            Set::Lower => b.is_ascii_lowercase(),
            Set::Upper => b.is_ascii_uppercase(),
            Set::Digit => b.is_ascii_digit(),
            Set::Whitespace => matches!(b, b'\t'..=b'\r' | b' '),
            Set::Other => {
                b.is_ascii() && !b.is_ascii_alphanumeric() && !matches!(b, b'\t'..=b'\r' | b' ')
            }
        }
    }
}

/// End of the maximal run from `i` of bytes in `set` (`i <= bytes.len()`).
#[inline(always)]
pub fn run_end(bytes: &[u8], i: usize, set: Set) -> usize {
    #[cfg(target_arch = "x86_64")]
    if bytes.len() >= 16 {
        return sse2::run_end(bytes, i, set);
    }
    scalar_run_end(bytes, i, set)
}

/// `run_end` one byte at a time.
#[inline(always)]
pub fn scalar_run_end(bytes: &[u8], mut i: usize, set: Set) -> usize {
    while i < bytes.len() && set.contains(bytes[i]) {
        i += 1;
    }
    i
}

#[cfg(target_arch = "x86_64")]
pub(super) mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi8, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8,
        _mm_or_si128, _mm_set1_epi8,
    };

    use super::Set;

    /// `run_end` for `bytes.len() >= 16`.
    #[inline(always)]
    pub fn run_end(bytes: &[u8], mut i: usize, set: Set) -> usize {
        let len = bytes.len();
        debug_assert!(len >= 16 && i <= len);
        while i + 16 <= len {
            // SAFETY: i + 16 <= len, so the 16 bytes from i are in `bytes`.
            let stop = unsafe { stops(load(bytes, i), set) };
            if stop != 0 {
                return i + stop.trailing_zeros() as usize;
            }
            i += 16;
        }
        if i == len {
            return len;
        }
        // The last 16 bytes (len >= 16), the ones before `i` shifted out.
        let base = len - 16;
        // SAFETY: base + 16 == len.
        let stop = unsafe { stops(load(bytes, base), set) } >> (i - base);
        if stop != 0 {
            i + stop.trailing_zeros() as usize
        } else {
            len
        }
    }

    /// The 16 bytes from `at`.
    ///
    /// # Safety
    /// `at + 16 <= bytes.len()`.
    #[inline(always)]
    unsafe fn load(bytes: &[u8], at: usize) -> __m128i {
        _mm_loadu_si128(bytes.as_ptr().add(at).cast())
    }

    /// Bit k set where byte k of `v` is not in `set` (bits 16 and up clear).
    ///
    /// # Safety
    /// SSE2 is in the x86_64 baseline, so these intrinsics are always available; the
    /// function is `unsafe` only because the intrinsics are.
    #[inline(always)]
    unsafe fn stops(v: __m128i, set: Set) -> u32 {
        let members = match set {
            Set::Letter => letter(v),
            Set::Lower => within(v, b'a', 26),
            Set::Upper => within(v, b'A', 26),
            Set::Digit => within(v, b'0', 10),
            Set::Whitespace => whitespace(v),
            Set::Other => {
                // A byte stops an "other" run when it is a letter, digit or whitespace, or
                // from 0x80 (its own top bit).
                let word =
                    _mm_or_si128(_mm_or_si128(letter(v), within(v, b'0', 10)), whitespace(v));
                return _mm_movemask_epi8(_mm_or_si128(word, v)) as u32;
            }
        };
        (_mm_movemask_epi8(members) as u32) ^ 0xFFFF
    }

    /// 0xFF in each byte of `v` in `lo..lo + n` (bytes from 0x80 never are), as one signed
    /// compare: b + (0x80 - lo) wraps the range onto -128..-128 + n and every other byte
    /// above it.
    ///
    /// # Safety
    /// None beyond SSE2, which is in the x86_64 baseline (`unsafe` as the intrinsics are).
    #[inline(always)]
    pub unsafe fn within(v: __m128i, lo: u8, n: u8) -> __m128i {
        let shifted = _mm_add_epi8(v, _mm_set1_epi8(0x80u8.wrapping_sub(lo) as i8));
        _mm_cmplt_epi8(shifted, _mm_set1_epi8((0x80u8 + n) as i8))
    }

    /// 0xFF in each ASCII letter byte of `v`: b | 0x20 folds `A`-`Z` onto `a`-`z` and no
    /// other byte onto them.
    ///
    /// # Safety
    /// As [`within`].
    #[inline(always)]
    pub unsafe fn letter(v: __m128i) -> __m128i {
        within(_mm_or_si128(v, _mm_set1_epi8(0x20)), b'a', 26)
    }

    /// 0xFF in each ASCII `\s` byte of `v` (`\t`..`\r`, U+0020).
    ///
    /// # Safety
    /// As [`within`].
    #[inline(always)]
    pub unsafe fn whitespace(v: __m128i) -> __m128i {
        _mm_or_si128(within(v, b'\t', 5), _mm_cmpeq_epi8(v, _mm_set1_epi8(b' ' as i8)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SETS: [Set; 6] =
        [Set::Letter, Set::Lower, Set::Upper, Set::Digit, Set::Whitespace, Set::Other];

    #[test]
    fn sets_are_the_ascii_classes() {
        use super::super::classes::{self, LETTER, LL, LU, NUMBER, SPACE, WORDISH};
        for b in 0..=0xFFu8 {
            let flags = if b < 0x80 { classes::table().get(b as u32) } else { 0 };
            let ascii = b < 0x80;
            assert_eq!(Set::Letter.contains(b), flags & LETTER != 0, "{b:#04x}");
            assert_eq!(Set::Lower.contains(b), flags & LL != 0, "{b:#04x}");
            assert_eq!(Set::Upper.contains(b), flags & LU != 0, "{b:#04x}");
            assert_eq!(Set::Digit.contains(b), flags & NUMBER != 0, "{b:#04x}");
            assert_eq!(Set::Whitespace.contains(b), flags & SPACE != 0, "{b:#04x}");
            assert_eq!(Set::Other.contains(b), ascii && flags & WORDISH == 0, "{b:#04x}");
        }
    }

    /// Every byte value at every position of 48 bytes of members, from starts inside the
    /// first block, on its edges and in the overlapping last load.
    #[test]
    fn every_byte_at_every_offset_is_classified_alike() {
        for set in SETS {
            let member = (0..=0x7Fu8).find(|&b| set.contains(b)).unwrap();
            for at in 0..48 {
                for b in 0..=0xFFu8 {
                    let mut bytes = [member; 48];
                    bytes[at] = b;
                    for start in [0, 1, 15, 16, 17, 31, 32, 33, at, 47, 48] {
                        assert_eq!(
                            run_end(&bytes, start, set),
                            scalar_run_end(&bytes, start, set),
                            "{set:?} from {start}, {b:#04x} at {at}"
                        );
                    }
                }
            }
        }
    }

    /// Runs of every length from every start in texts of 0 to 70 bytes, each ended by a
    /// non-member (0x00, 0x7F, 0x80, 0xFF, or an ASCII byte of another set) or by the end:
    /// runs that end inside the first block, on a block's last or first byte, cross one
    /// or more blocks, end in the overlapping last load, or reach the end of the text.
    #[test]
    fn runs_of_every_length_agree_with_the_byte_loop() {
        for set in SETS {
            let member = (0..=0x7Fu8).find(|&b| set.contains(b)).unwrap();
            let ascii_stop = (0..=0x7Fu8).find(|&b| !set.contains(b)).unwrap();
            for len in 0..=70 {
                for start in 0..=len {
                    for stop_at in start..=len {
                        for terminator in [0x00, 0x7F, 0x80, 0xFF, ascii_stop] {
                            let mut bytes = vec![member; len];
                            if stop_at < len {
                                bytes[stop_at] = terminator;
                            }
                            let want = if set.contains(terminator) { len } else { stop_at };
                            assert_eq!(
                                run_end(&bytes, start, set),
                                want,
                                "{set:?} len {len} from {start}, {terminator:#04x} at {stop_at}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// Mixed bytes, every start: the first non-member decides, whatever follows it.
    #[test]
    fn vector_runs_agree_on_mixed_bytes() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for round in 0..400 {
            let len = 16 + round % 60;
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    state =
                        state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    // Mostly members of some set, now and then any byte.
                    let r = (state >> 33) as u8;
                    if r.is_multiple_of(8) {
                        r
                    } else {
                        b"aZq 0\t\n'.,"[(r as usize / 8) % 10]
                    }
                })
                .collect();
            for set in SETS {
                for start in 0..=len {
                    assert_eq!(
                        run_end(&bytes, start, set),
                        scalar_run_end(&bytes, start, set),
                        "{set:?} from {start} in {bytes:?}"
                    );
                }
            }
        }
    }
}
