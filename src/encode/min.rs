//! The mergers on packed keys: tiktoken's rule for pieces of up to 128 bytes as the
//! minimum of `rank << log2(N) | position` keys over a fixed array (or, with AVX2 and up
//! to 64 bytes, over vector registers: `avx2.rs`), starting from the piece's bytes or
//! from whole characters where the vocabulary allows (`Unmerged`).

use super::push_parts;
use crate::vocab::{Vocab, NO_JOIN};
use crate::Rank;

#[cfg(target_arch = "x86_64")]
mod avx2;

/// Whether every `rank << log2(N) | position` key stays below `i32::MAX` (N a power of two).
pub(super) fn fits_keys<const N: usize>(vocab: &Vocab) -> bool {
    (vocab.len() as u64) < (1u64 << (31 - N.trailing_zeros()))
}

/// tiktoken's rule for pieces of at most `N` bytes (N a power of two, at most 128, with
/// [`fits_keys`]): each part's candidate merge is one key, `rank << log2(N) | the part's
/// first byte`, in an array indexed by that byte (`i32::MAX`: none), so the lowest key is
/// the lowest rank and then the leftmost part, exactly tiktoken's choice, and finding it
/// is a minimum over N keys with no branches. Keys are i32 because baseline x86-64 (SSE2)
/// compares signed 32-bit lanes, so the minimum vectorizes. On x86-64 with AVX2 the same
/// code is compiled for it ([`merge_by_min_avx2`]): one `vpminsd` per 8 keys instead of
/// four SSE2 instructions per 4 keys, the minimum being most of the work per merge.
pub(super) fn merge_by_min<const N: usize>(vocab: &Vocab, piece: &[u8], out: &mut Vec<Rank>) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above; the check reads a cached flag).
        return unsafe {
            if N <= 64 {
                avx2::merge_by_min_in_registers::<N>(vocab, piece, out)
            } else {
                merge_by_min_avx2::<N>(vocab, piece, out)
            }
        };
    }
    merge_by_min_portable::<N>(vocab, piece, out);
}

/// [`merge_by_min_portable`] compiled for AVX2. Safety: the CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn merge_by_min_avx2<const N: usize>(vocab: &Vocab, piece: &[u8], out: &mut Vec<Rank>) {
    merge_by_min_portable::<N>(vocab, piece, out);
}

/// [`merge_by_min`] for any CPU (inlined into each caller, so it is compiled for the
/// caller's target features).
#[inline(always)]
pub(super) fn merge_by_min_portable<const N: usize>(
    vocab: &Vocab,
    piece: &[u8],
    out: &mut Vec<Rank>,
) {
    let n = piece.len();
    assert!(n <= N && N <= 128 && N.is_power_of_two(), "pieces of at most N <= 128 bytes");
    let shift = N.trailing_zeros();
    let Unmerged { mut token, mut next, mut prev, mut key } =
        Unmerged::<N>::new(vocab, piece, |left, right, at| join_key::<N>(vocab, left, right, at));
    loop {
        let best = key.iter().fold(i32::MAX, |m, &k| m.min(k));
        if best == i32::MAX {
            break;
        }
        let (rank, at) = ((best as u32) >> shift, (best as usize) & (N - 1));
        // The part at `at` absorbs the next one, which stops being a part.
        let right = next[at] as usize;
        key[right] = i32::MAX;
        token[at] = rank;
        let after = next[right] as usize;
        next[at] = after as u8;
        key[at] = if after < n {
            prev[after] = at as u8;
            join_key::<N>(vocab, rank, token[after], at)
        } else {
            i32::MAX
        };
        let before = prev[at];
        if before != NO_PART {
            key[before as usize] =
                join_key::<N>(vocab, token[before as usize], rank, before as usize);
        }
    }
    push_parts(&token, &next, n, out);
}

/// `prev` of a piece's first part: no part before it.
const NO_PART: u8 = u8::MAX;

/// A piece of at most `N` bytes before any merge, for the mergers on packed keys: each
/// byte's token, each part linked to the next (`n`: none) and to the previous
/// ([`NO_PART`]: none), and each part's key with the next (`join`, [`join_key`]'s rule;
/// the first joins are of two bytes, read directly, not hashed).
struct Unmerged<const N: usize> {
    token: [Rank; N],
    next: [u8; N],
    prev: [u8; N],
    key: [i32; N],
}

impl<const N: usize> Unmerged<N> {
    #[inline(always)]
    fn new(vocab: &Vocab, piece: &[u8], join: impl Fn(Rank, Rank, usize) -> i32) -> Self {
        let mut parts =
            Self { token: [0; N], next: [0; N], prev: [NO_PART; N], key: [i32::MAX; N] };
        if vocab.has_char_parts() && piece.iter().fold(false, |lead, &b| lead | (b >= 0xC0)) {
            parts.take_chars(vocab, piece, join);
            return parts;
        }
        for (i, &b) in piece.iter().enumerate() {
            parts.token[i] = vocab.byte_rank(b);
            parts.next[i] = (i + 1) as u8;
            parts.prev[i] = (i as u8).wrapping_sub(1);
        }
        for i in 0..piece.len().saturating_sub(1) {
            parts.key[i] = pack::<N>(vocab.join_bytes(piece[i], piece[i + 1]), i);
        }
        parts
    }

    /// Fills the parts of a piece with multi-byte characters: a character the vocabulary
    /// lets merging start from ([`Vocab::char_part`]) is one part, every other byte one.
    #[inline(always)]
    fn take_chars(&mut self, vocab: &Vocab, piece: &[u8], join: impl Fn(Rank, Rank, usize) -> i32) {
        let n = piece.len();
        // The previous part's start and length.
        let (mut before, mut before_len) = (usize::from(NO_PART), 0);
        let mut i = 0;
        while i < n {
            let (token, len) = match piece[i] {
                0xC0.. => vocab.char_part(piece, i),
                _ => None,
            }
            .unwrap_or((vocab.byte_rank(piece[i]), 1));
            self.token[i] = token;
            if before != usize::from(NO_PART) {
                self.next[before] = i as u8;
                self.prev[i] = before as u8;
                self.key[before] = if before_len == 1 && len == 1 {
                    pack::<N>(vocab.join_bytes(piece[before], piece[i]), before)
                } else {
                    join(self.token[before], token, before)
                };
            }
            (before, before_len) = (i, len);
            i += len;
        }
        if before != usize::from(NO_PART) {
            self.next[before] = n as u8;
        }
    }
}

/// The key of a merge of rank `rank` at the part starting at `at`: `rank << log2(N) | at`
/// (ranks fit the keys: [`fits_keys`]).
#[inline(always)]
fn key_at<const N: usize>(rank: Rank, at: usize) -> i32 {
    (rank << N.trailing_zeros() | at as u32) as i32
}

/// [`key_at`] of a rank read from the two-byte table (`NO_JOIN`: `i32::MAX`, no merge).
#[inline(always)]
fn pack<const N: usize>(rank: Rank, at: usize) -> i32 {
    match rank {
        NO_JOIN => i32::MAX,
        rank => key_at::<N>(rank, at),
    }
}

/// The key of joining the parts `left` and `right`, the left one starting at `at`
/// (`i32::MAX`: they join into no token).
#[inline(always)]
fn join_key<const N: usize>(vocab: &Vocab, left: Rank, right: Rank, at: usize) -> i32 {
    match vocab.join_parts(left, right) {
        Some(rank) => key_at::<N>(rank, at),
        None => i32::MAX,
    }
}
