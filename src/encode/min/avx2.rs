//! `merge_by_min`'s rule for pieces of at most 64 bytes, with the keys held in AVX2
//! registers instead of an array on the stack.
//!
//! Each merge changes at most three keys (the merged part's, its left neighbour's, and
//! the absorbed part's, which goes). Written to the array, the next minimum's 32-byte
//! loads waited for those 4-byte stores (a store is not forwarded to a wider load), and
//! the minimum was taken only after both pair-table lookups. Here the lanes from the left
//! neighbour to the absorbed part are masked out (the lanes between them start no part,
//! so they hold no key) and the minimum of the other keys is taken while the lookups are
//! in flight; the next key is the least of that and the two new keys, which are then
//! blended into their lanes. Only the vectors the piece's bytes take are used. The keys
//! and the order of merges are `merge_by_min`'s.

use std::arch::x86_64::{
    __m256i, _mm256_and_si256, _mm256_blendv_epi8, _mm256_castsi256_si128, _mm256_cmpeq_epi32,
    _mm256_cmpgt_epi32, _mm256_extracti128_si256, _mm256_loadu_si256, _mm256_min_epi32,
    _mm256_set1_epi32, _mm256_setr_epi32, _mm_cvtsi128_si32, _mm_min_epi32, _mm_shuffle_epi32,
};

use std::hint::select_unpredictable;

use super::{key_at, Unmerged, NO_PART};
use crate::encode::push_parts;
use crate::vocab::{Joins, Vocab};
use crate::Rank;

/// Vectors of 8 keys for the longest piece taken here (64 bytes).
const MAX_VECTORS: usize = 8;

/// Merges `piece` (at most `N` bytes; N is 8, 16, 32 or 64, with the vocabulary's ids fitting
/// the keys, as `merge_by_min` checks) and appends its tokens to `out`.
///
/// Safety: the CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn merge_by_min_in_registers<const N: usize>(
    vocab: &Vocab,
    piece: &[u8],
    out: &mut Vec<Rank>,
) {
    // The table's layout is picked once a piece, so that each lookup in the loop is
    // inlined for the one layout (both in one closure made it a call).
    match vocab.joins() {
        Joins::Perfect(t) => merge_with::<N>(vocab, piece, out, |l, r, none| t.join(l, r, none)),
        // SAFETY: this function's caller promises AVX2.
        Joins::Hashed(t) => {
            merge_with::<N>(vocab, piece, out, |l, r, none| unsafe { t.join_avx2(l, r, none) })
        }
    }
}

/// [`merge_by_min_in_registers`] with `join_rank(left, right, none)`: the rank of
/// (left, right)'s joined token, or `none`.
#[target_feature(enable = "avx2")]
fn merge_with<const N: usize>(
    vocab: &Vocab,
    piece: &[u8],
    out: &mut Vec<Rank>,
    join_rank: impl Fn(Rank, Rank, Rank) -> Rank,
) {
    let n = piece.len();
    assert!(n <= N && matches!(N, 8 | 16 | 32 | 64), "pieces of at most N <= 64 bytes");
    // The vectors the piece's keys take (the rest would hold no key).
    let vectors = n.div_ceil(8).max(1);
    let shift = N.trailing_zeros();
    // The rank a lookup answers for no token: above every rank (`fits_keys`), so the keys
    // it makes, at any position, are at least `no_key` and never taken (the loop needs
    // no test of the answer, which would be a branch no predictor learns).
    let no_rank = (i32::MAX as u32) >> shift;
    let no_key = key_at::<N>(no_rank, 0);
    let join = |left, right, at| key_at::<N>(join_rank(left, right, no_rank), at);
    // The key of a merged part with a neighbour, if it has one, without a branch on
    // whether it has (the part is the piece's first or last in no order a predictor
    // learns): a missing neighbour's lookup asks for the pair (0, 0) instead (one slot,
    // always cached) and its key is dropped.
    let neighbour_key = |has: bool, left, right, at| {
        let (left, right) =
            (select_unpredictable(has, left, 0), select_unpredictable(has, right, 0));
        select_unpredictable(has, join(left, right, at), i32::MAX)
    };
    let mut parts = Unmerged::<N>::new(vocab, piece, join);
    let Unmerged { token, next, prev, key: first } = &mut parts;
    let none = _mm256_set1_epi32(i32::MAX);
    let mut keys = [none; MAX_VECTORS];
    for (v, keys) in keys.iter_mut().enumerate().take(vectors) {
        // SAFETY: `first` holds N >= 8 * vectors keys, so 8 from 8 * v are inside it.
        *keys = unsafe { _mm256_loadu_si256(first.as_ptr().add(8 * v).cast()) };
    }
    // The lane of each key: its position in the piece.
    let lanes: [__m256i; MAX_VECTORS] = std::array::from_fn(|v| {
        let base = 8 * v as i32;
        _mm256_setr_epi32(
            base,
            base + 1,
            base + 2,
            base + 3,
            base + 4,
            base + 5,
            base + 6,
            base + 7,
        )
    });
    let mut least = none;
    for &k in &keys[..vectors] {
        least = _mm256_min_epi32(least, k);
    }
    let mut best = min_lane(least);
    while best < no_key {
        let (rank, at) = ((best as u32) >> shift, (best as usize) & (N - 1));
        // The part at `at` absorbs the next one, which stops being a part.
        let right = next[at] as usize;
        let after = next[right] as usize;
        let before = prev[at];
        token[at] = rank;
        next[at] = after as u8;
        let (has_after, has_before) = (after < n, before != NO_PART);
        // The keys that stay, while the lookups below are in flight: every lane from the
        // left neighbour (or `at`) to `right` leaves the minimum. Those between them are
        // no part's start, so they hold no key already.
        let first_lane = select_unpredictable(has_before, usize::from(before), at);
        let (from, to) =
            (_mm256_set1_epi32(first_lane as i32 - 1), _mm256_set1_epi32(right as i32 + 1));
        let mut least = none;
        for (k, &lane) in keys.iter_mut().zip(&lanes).take(vectors) {
            let changed =
                _mm256_and_si256(_mm256_cmpgt_epi32(lane, from), _mm256_cmpgt_epi32(to, lane));
            *k = _mm256_blendv_epi8(*k, none, changed);
            least = _mm256_min_epi32(least, *k);
        }
        let kept = min_lane(least);
        // The last part's `prev` is rewritten with its own value when nothing follows.
        prev[select_unpredictable(has_after, after, at) & (N - 1)] =
            select_unpredictable(has_after, at as u8, before);
        // The masks keep both reads inside the arrays; a missing neighbour's is dropped.
        let at_key = neighbour_key(has_after, rank, token[after & (N - 1)], at);
        let before = usize::from(before);
        let before_key = neighbour_key(has_before, token[before & (N - 1)], rank, before);
        best = kept.min(at_key).min(before_key);
        let (at_lane, before_lane) =
            (_mm256_set1_epi32(at as i32), _mm256_set1_epi32(before as i32));
        let (at_key, before_key) = (_mm256_set1_epi32(at_key), _mm256_set1_epi32(before_key));
        for (k, &lane) in keys.iter_mut().zip(&lanes).take(vectors) {
            *k = _mm256_blendv_epi8(*k, at_key, _mm256_cmpeq_epi32(lane, at_lane));
            *k = _mm256_blendv_epi8(*k, before_key, _mm256_cmpeq_epi32(lane, before_lane));
        }
    }
    push_parts(token, next, n, out);
}

/// The least of the 8 keys in `keys`.
#[inline]
#[target_feature(enable = "avx2")]
fn min_lane(keys: __m256i) -> i32 {
    let half = _mm_min_epi32(_mm256_castsi256_si128(keys), _mm256_extracti128_si256::<1>(keys));
    let quarter = _mm_min_epi32(half, _mm_shuffle_epi32::<0b11_10_11_10>(half));
    let eighth = _mm_min_epi32(quarter, _mm_shuffle_epi32::<0b01_01_01_01>(quarter));
    _mm_cvtsi128_si32(eighth)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::tests::{by_bytes, lcg, random_vocab, vocab};

    type Merger = unsafe fn(&Vocab, &[u8], &mut Vec<Rank>);

    /// Every length each size takes, on vocabularies whose merges make lower-ranked pairs
    /// and ties (runs of one byte), against the rule on bytes.
    #[test]
    fn registers_merge_as_the_rule_on_bytes() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let sizes: [(usize, Merger); 4] = [
            (8, merge_by_min_in_registers::<8>),
            (16, merge_by_min_in_registers::<16>),
            (32, merge_by_min_in_registers::<32>),
            (64, merge_by_min_in_registers::<64>),
        ];
        let runs = vocab(&[b"aa", b"aaaa", b"aaa", b"ab", b"ba", b"aba", b"bab"]);
        for seed in 0..6u64 {
            let alphabet: &[u8] = if seed % 2 == 0 { b"ab" } else { b"abcd " };
            let v = random_vocab(seed + 40, alphabet, 200, 12);
            let mut next = lcg(seed + 90);
            for (size, merger) in sizes {
                for len in 0..=size {
                    for v in [&v, &runs] {
                        let piece: Vec<u8> = match next() % 3 {
                            0 => vec![alphabet[next() % alphabet.len()]; len],
                            _ => (0..len).map(|_| alphabet[next() % alphabet.len()]).collect(),
                        };
                        let mut got = Vec::new();
                        // SAFETY: the CPU has AVX2 (checked above).
                        unsafe { merger(v, &piece, &mut got) };
                        let show = String::from_utf8_lossy(&piece);
                        assert_eq!(got, by_bytes(v, &piece), "{size}, seed {seed}: {show:?}");
                    }
                }
            }
        }
    }
}
