//! [`to_utf8`] 8 code points at a time with AVX2. Each step takes one of three shapes by
//! the largest of its 8 code points:
//! - all ASCII: the low bytes, packed;
//! - all below U+0800: every lane as its 1 or 2 bytes in a 16-bit word, then a byte
//!   shuffle (one of 256, by which lanes take 2 bytes) drops the 1-byte lanes' zero
//!   high bytes;
//! - all below U+10000, none a surrogate: every lane as its 1, 2 or 3 bytes in a 32-bit
//!   word, then per 4 lanes a shuffle (by each lane's length) packs them.
//!
//! Anything else (a 4-byte character, a surrogate, a value past U+10FFFF) goes a code
//! point at a time, as do the last few. A shuffle stores 16 bytes wherever it ends, so
//! `out` keeps 16 bytes of room past what it holds.

use std::arch::x86_64::{
    __m128i, _mm256_and_si256, _mm256_blendv_epi8, _mm256_castsi256_ps, _mm256_castsi256_si128,
    _mm256_cmpeq_epi32, _mm256_cmpgt_epi32, _mm256_extracti128_si256, _mm256_loadu_si256,
    _mm256_movemask_ps, _mm256_or_si256, _mm256_packus_epi16, _mm256_packus_epi32,
    _mm256_permute4x64_epi64, _mm256_set1_epi32, _mm256_slli_epi32, _mm256_srli_epi32,
    _mm256_testz_si256, _mm_loadu_si128, _mm_shuffle_epi8, _mm_storel_epi64, _mm_storeu_si128,
    _mm_unpacklo_epi32,
};

use super::{one_by_one, utf8_room};

/// Code points a step takes.
const STEP: usize = 8;

/// For 8 lanes of 2 bytes, bit i set where lane i is a 2-byte character: the shuffle
/// keeping lane i's low byte, and its high byte too where its bit is set.
static TWO_BYTE_LANES: [[u8; 16]; 256] = leading_bytes(8, 2, 1);

/// For 4 lanes of 4 bytes, each lane's length less one in 2 bits (lane i at bit 2i): the
/// shuffle keeping each lane's first bytes.
static THREE_BYTE_LANES: [[u8; 16]; 256] = leading_bytes(4, 4, 2);

/// The shuffles that pack `lanes` lanes of `width` bytes, for every key giving each
/// lane's length less one in `bits` bits (lane i at bit `bits * i`; `lanes * bits` is 8):
/// each lane's first bytes, in order, then zeros (index 0x80).
const fn leading_bytes(lanes: usize, width: usize, bits: usize) -> [[u8; 16]; 256] {
    let mut table = [[0x80u8; 16]; 256];
    let mut key = 0;
    while key < 256 {
        let (mut at, mut lane) = (0, 0);
        while lane < lanes {
            let len = (key >> (bits * lane) & ((1 << bits) - 1)) + 1;
            let mut k = 0;
            while k < len {
                table[key][at] = (width * lane + k) as u8;
                at += 1;
                k += 1;
            }
            lane += 1;
        }
        key += 1;
    }
    table
}

/// 4 bits spread to the even bits of a byte (bit i to bit 2i).
static SPREAD: [u8; 16] = {
    let mut table = [0u8; 16];
    let mut bits = 0;
    while bits < 16 {
        let mut lane = 0;
        while lane < 4 {
            table[bits] |= ((bits >> lane & 1) << (2 * lane)) as u8;
            lane += 1;
        }
        bits += 1;
    }
    table
};

/// [`super::to_utf8`], appending (on an error, the caller truncates). Safety: the CPU
/// must have AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn to_utf8(code_points: &[u32], out: &mut Vec<u8>) -> Result<(), usize> {
    // At most 3 bytes a code point in the vector steps; a step that goes one by one
    // reserves for itself.
    out.reserve(utf8_room(code_points.len()));
    let steps = code_points.len() / STEP;
    let (ascii_max, two_max, three_max) =
        (_mm256_set1_epi32(0x7F), _mm256_set1_epi32(0x7FF), _mm256_set1_epi32(0xFFFF));
    let (surrogate_bits, surrogate) =
        (_mm256_set1_epi32(0xFFFF_F800u32 as i32), _mm256_set1_epi32(0xD800));
    let (low6, cont, lead2, lead3) = (
        _mm256_set1_epi32(0x3F),
        _mm256_set1_epi32(0x80),
        _mm256_set1_epi32(0xC0),
        _mm256_set1_epi32(0xE0),
    );
    for step in 0..steps {
        let at = step * STEP;
        // SAFETY: the 8 code points from `at` are in `code_points` (at + 8 <= len).
        let v = unsafe { _mm256_loadu_si256(code_points.as_ptr().add(at).cast()) };
        // Lanes compare as signed: a value from 2^31 reads as negative, so it is looked
        // at first (it goes one by one, which refuses it).
        let negative = _mm256_movemask_ps(_mm256_castsi256_ps(v));
        let over_ascii = _mm256_cmpgt_epi32(v, ascii_max);
        let multi = _mm256_movemask_ps(_mm256_castsi256_ps(over_ascii)) as u32;
        let len = out.len();
        // SAFETY: `reserve` left `utf8_room`: 3 bytes a code point and the slack past them.
        let dst = unsafe { out.as_mut_ptr().add(len) };
        if negative == 0 && multi == 0 {
            let words = _mm256_packus_epi32(v, v);
            let bytes = _mm256_packus_epi16(words, words);
            let low = _mm_unpacklo_epi32(
                _mm256_castsi256_si128(bytes),
                _mm256_extracti128_si256::<1>(bytes),
            );
            // SAFETY: 8 bytes at `dst` are reserved.
            unsafe {
                _mm_storel_epi64(dst.cast(), low);
                out.set_len(len + STEP);
            }
            continue;
        }
        let over_two = _mm256_cmpgt_epi32(v, two_max);
        let three = _mm256_movemask_ps(_mm256_castsi256_ps(over_two)) as u32;
        // Lead byte and last continuation byte of a 2-byte character.
        let two_bytes = _mm256_or_si256(
            _mm256_or_si256(_mm256_srli_epi32::<6>(v), lead2),
            _mm256_slli_epi32::<8>(_mm256_or_si256(_mm256_and_si256(v, low6), cont)),
        );
        if negative == 0 && three == 0 {
            let lanes = _mm256_blendv_epi8(v, two_bytes, over_ascii);
            let words = _mm256_permute4x64_epi64::<0b1000>(_mm256_packus_epi32(lanes, lanes));
            let packed = shuffle(_mm256_castsi256_si128(words), &TWO_BYTE_LANES[multi as usize]);
            // SAFETY: the step writes at most 16 bytes (reserved with the slack).
            unsafe {
                _mm_storeu_si128(dst.cast(), packed);
                out.set_len(len + STEP + multi.count_ones() as usize);
            }
            continue;
        }
        let unusual = _mm256_or_si256(
            _mm256_cmpgt_epi32(v, three_max),
            _mm256_cmpeq_epi32(_mm256_and_si256(v, surrogate_bits), surrogate),
        );
        if negative == 0 && _mm256_testz_si256(unusual, unusual) == 1 {
            let three_bytes = _mm256_or_si256(
                _mm256_or_si256(_mm256_srli_epi32::<12>(v), lead3),
                _mm256_or_si256(
                    _mm256_slli_epi32::<8>(_mm256_or_si256(
                        _mm256_and_si256(_mm256_srli_epi32::<6>(v), low6),
                        cont,
                    )),
                    _mm256_slli_epi32::<16>(_mm256_or_si256(_mm256_and_si256(v, low6), cont)),
                ),
            );
            let lanes = _mm256_blendv_epi8(
                _mm256_blendv_epi8(v, two_bytes, over_ascii),
                three_bytes,
                over_two,
            );
            // Each lane's length less one: 1 for a multi-byte lane, 1 more for 3 bytes.
            let key = |shift: u32| {
                let (m, t) = ((multi >> shift & 0xF) as usize, (three >> shift & 0xF) as usize);
                (usize::from(SPREAD[m] + SPREAD[t]), 4 + m.count_ones() + t.count_ones())
            };
            let ((low_key, low_len), (high_key, high_len)) = (key(0), key(4));
            let low = shuffle(_mm256_castsi256_si128(lanes), &THREE_BYTE_LANES[low_key]);
            let high = shuffle(_mm256_extracti128_si256::<1>(lanes), &THREE_BYTE_LANES[high_key]);
            // SAFETY: the step writes at most 24 bytes, the second store ending at most
            // 12 + 16 past `dst`, within 3 * 8 and the 16 bytes of slack (`utf8_room`).
            unsafe {
                _mm_storeu_si128(dst.cast(), low);
                _mm_storeu_si128(dst.add(low_len as usize).cast(), high);
                out.set_len(len + (low_len + high_len) as usize);
            }
            continue;
        }
        one_by_one(&code_points[at..at + STEP], out).map_err(|i| at + i)?;
        // One by one may have taken 4 bytes a code point: room for the rest again.
        out.reserve(utf8_room(code_points.len() - at - STEP));
    }
    one_by_one(&code_points[steps * STEP..], out).map_err(|i| steps * STEP + i)
}

/// `bytes` shuffled by `order` (an index per output byte; 0x80: zero).
#[inline]
#[target_feature(enable = "avx2")]
fn shuffle(bytes: __m128i, order: &[u8; 16]) -> __m128i {
    // SAFETY: `order` is 16 bytes.
    _mm_shuffle_epi8(bytes, unsafe { _mm_loadu_si128(order.as_ptr().cast()) })
}
