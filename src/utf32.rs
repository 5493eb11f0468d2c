//! Code points (UTF-32) to UTF-8: how the binding reads a Python `str` that is not ASCII.
//!
//! The stable ABI gives a `str`'s text only as a copy: its UTF-8 through CPython's
//! encoder (a loop over characters, about 1.5-1.9 ns each on multilingual text) or its
//! code points (`PyUnicode_AsUCS4`, a widening copy). Copying the code points and writing
//! their UTF-8 here, 8 at a time where the CPU has AVX2 (`avx2.rs`), takes under half of
//! the encoder's time; reading a batch of multilingual documents for counting spent more
//! in that encoder than in counting a third of them.

#[cfg(target_arch = "x86_64")]
mod avx2;

/// Room kept past the bytes written: a vector step's 16-byte store.
const SLACK: usize = 16;

/// Room for the UTF-8 of `code_points` code points, in which [`to_utf8`] writes any of
/// them below U+10000 (3 bytes each at most), whole or a part at a time, without
/// growing the buffer. A long `str` is written a part at a time: made with this capacity,
/// its buffer is not copied to a larger one part after part (each copy wrote pages never
/// touched before, and made the kernel flush the other cores' address caches).
pub fn utf8_room(code_points: usize) -> usize {
    3 * code_points + SLACK
}

/// Whether [`to_utf8`] runs 8 code points at a time on this CPU (else it goes one by one,
/// no faster than CPython's own encoder, which the binding then keeps using).
pub fn is_vectorized() -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        return true;
    }
    false
}

/// Appends the UTF-8 of `code_points` to `out`. `Err(i)`: `code_points[i]` is not a
/// Unicode scalar value (a surrogate, or past U+10FFFF), the first such; nothing is
/// appended then.
pub fn to_utf8(code_points: &[u32], out: &mut Vec<u8>) -> Result<(), usize> {
    let start = out.len();
    #[cfg(target_arch = "x86_64")]
    if is_vectorized() {
        // SAFETY: the CPU has AVX2 (checked just above).
        let written = unsafe { avx2::to_utf8(code_points, out) };
        return written.inspect_err(|_| out.truncate(start));
    }
    one_by_one(code_points, out).inspect_err(|_| out.truncate(start))
}

/// [`to_utf8`] a code point at a time (what the vectorized version does where 8 code
/// points are not all below U+10000, and at the end).
fn one_by_one(code_points: &[u32], out: &mut Vec<u8>) -> Result<(), usize> {
    for (i, &c) in code_points.iter().enumerate() {
        let c = char::from_u32(c).ok_or(i)?;
        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    /// Code points from every length of UTF-8 and their edges, mostly valid.
    fn random_code_points(rng: &mut Rng, n: usize, invalid: bool) -> Vec<u32> {
        const EDGES: [u32; 12] =
            [0, 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF, 0x20, 0xFF];
        // Runs of one kind, as real text has, and mixes.
        let kind = rng.below(6);
        (0..n)
            .map(|_| {
                let k = if kind == 5 { rng.below(5) } else { kind };
                match k {
                    0 => rng.below(0x80) as u32,
                    1 => 0x80 + rng.below(0x780) as u32,
                    2 => match 0x800 + rng.below(0xF800) as u32 {
                        s @ 0xD800..=0xDFFF if !invalid => s + 0x800,
                        c => c,
                    },
                    3 => 0x10000 + rng.below(0x10_0000) as u32,
                    _ => EDGES[rng.below(EDGES.len())],
                }
            })
            .collect()
    }

    fn expected(code_points: &[u32]) -> Result<Vec<u8>, usize> {
        let mut s = String::new();
        for (i, &c) in code_points.iter().enumerate() {
            s.push(char::from_u32(c).ok_or(i)?);
        }
        Ok(s.into_bytes())
    }

    /// Both paths write what `String` does, after whatever `out` held, for every length
    /// up to 70 (the vector steps and every tail); a bad code point is found at its index,
    /// leaving `out` as it was.
    #[test]
    fn writes_what_the_standard_library_does() {
        let mut rng = Rng(7);
        for round in 0..3000 {
            let n = round % 71;
            let invalid = round % 3 == 0;
            let mut cps = random_code_points(&mut rng, n, invalid);
            if invalid && n > 0 && rng.below(2) == 0 {
                let bad = [0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0x11_0000, 0x8000_0000, u32::MAX];
                cps[rng.below(n)] = bad[rng.below(bad.len())];
            }
            let want = expected(&cps);
            let mut fast = b"before".to_vec();
            let mut slow = b"before".to_vec();
            let got = (to_utf8(&cps, &mut fast), one_by_one(&cps, &mut slow));
            match &want {
                Ok(bytes) => {
                    assert_eq!(got.0, Ok(()), "{cps:x?}");
                    assert_eq!(&fast[6..], &bytes[..], "{cps:x?}");
                    assert_eq!(got.1, Ok(()));
                    assert_eq!(&slow[6..], &bytes[..]);
                }
                Err(i) => {
                    assert_eq!(got.0, Err(*i), "{cps:x?}");
                    assert_eq!(fast, b"before", "nothing appended on an error");
                    assert_eq!(got.1, Err(*i));
                }
            }
        }
    }

    /// A text below U+10000 written a part at a time into a buffer of `utf8_room` never
    /// moves it (no part grows it), whatever its parts' lengths and scripts, and is what
    /// `String` writes.
    #[test]
    fn written_in_parts_within_its_room() {
        let mut rng = Rng(9);
        for round in 0..400 {
            let n = rng.below(3000);
            let cps: Vec<u32> = random_code_points(&mut rng, n, false)
                .into_iter()
                .map(|c| if c >= 0x10000 || round % 4 == 0 { 0x800 + c % 0xD000 } else { c })
                .collect();
            let mut out = Vec::with_capacity(utf8_room(n));
            let start = out.as_ptr();
            let mut at = 0;
            while at < n {
                let part = (1 + rng.below(700)).min(n - at);
                to_utf8(&cps[at..at + part], &mut out).expect("valid code points");
                assert_eq!(out.as_ptr(), start, "round {round}: the buffer moved at {at}");
                at += part;
            }
            assert_eq!(out, expected(&cps).expect("valid"));
        }
    }
}
