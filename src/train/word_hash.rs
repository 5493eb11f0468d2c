//! The counting table's word hash and word comparison, tuned to pieces: a word of up to
//! 7 bytes is packed into one 64-bit key (its bytes, its length, a flag bit) that is both
//! what the table stores in place of the word and what its hash is computed from; longer
//! words are hashed with rapidhash's construction.

use crate::hash_parts::{fold, mum, read4, read8};

/// Words of up to this many bytes are kept in their slot's key.
pub const SHORT_MAX: usize = 7;
/// The key's top bit marks a word kept in place (its length in the next 7 bits, its bytes
/// in the low 7 bytes); an arena word's key is below it.
pub const SHORT: u64 = 1 << 63;

/// rapidhash's default secret (its v1 constants).
const SECRET: [u64; 3] = [0x2d35_8dcc_aa6c_78a5, 0x8bb8_4b93_962e_acc9, 0x4b33_a62e_d433_d4a3];
/// The seed, premixed as rapidhash does with its default seed.
const SEED: u64 = fold(0xbdd8_9aa9_8270_4029 ^ SECRET[0], SECRET[1]) ^ 0xbdd8_9aa9_8270_4029;

/// The hash of a word. A word of up to [`SHORT_MAX`] bytes: [`hash_short`] of its key.
/// A longer one: rapidhash's construction (its v1 secret and default seed; a word of 8-16
/// bytes is read as two overlapping 8-byte loads where rapidhash reads four 4-byte ones,
/// the same bytes), a well-tested 64-bit hash whose words of up to 16 bytes cost two
/// 64x64->128 multiplies and longer ones one more per 16 bytes. Its top bits pick the
/// shard, its low bits the slot and the tag. The table's contents never depend on it
/// (only the order of slots, which every reader sorts away; pruning's tie buckets use a
/// hash of their own).
#[inline(always)]
pub fn hash(word: &[u8]) -> u64 {
    let n = word.len();
    if n <= SHORT_MAX {
        return hash_short(pack(word));
    }
    let mut seed = SEED ^ n as u64;
    let (a, b) = if n <= 16 {
        (read8(word, 0), read8(word, n - 8))
    } else {
        let mut at = 0;
        while n - at > 16 {
            seed = fold(read8(word, at) ^ SECRET[2], read8(word, at + 8) ^ seed ^ SECRET[1]);
            at += 16;
        }
        (read8(word, n - 16), read8(word, n - 8))
    };
    let (a, b) = mum(a ^ SECRET[1], b ^ seed);
    fold(a ^ SECRET[0] ^ n as u64, b ^ SECRET[1])
}

/// The hash of a short word from its key (which holds its bytes and length): one
/// 64x64->128 multiply of the key against itself under two secrets, the halves folded
/// (rapidhash's first round for a word of 4-7 bytes, whose second round it drops). Placing
/// a short word again (growing, absorbing, pruning) rehashes its key, reading nothing.
#[inline(always)]
pub fn hash_short(key: u64) -> u64 {
    fold(key ^ SECRET[1], key ^ SEED)
}

/// Whether two words are equal, comparing one of up to 16 bytes in at most two loads
/// each instead of calling `memcmp` (most words are that short).
#[inline(always)]
pub fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n > 16 {
        return a == b;
    }
    if n >= 8 {
        read8(a, 0) == read8(b, 0) && read8(a, n - 8) == read8(b, n - 8)
    } else if n >= 4 {
        read4(a, 0) == read4(b, 0) && read4(a, n - 4) == read4(b, n - 4)
    } else {
        // Bytes 0, n/2 and n-1 are all the bytes of a word of at most 3.
        n == 0 || (a[0] == b[0] && a[n >> 1] == b[n >> 1] && a[n - 1] == b[n - 1])
    }
}

/// The key of a word of at most [`SHORT_MAX`] bytes: its bytes (little-endian, zeros
/// after), its length above them and the [`SHORT`] bit.
#[inline(always)]
pub fn pack(word: &[u8]) -> u64 {
    let n = word.len();
    debug_assert!(n <= SHORT_MAX);
    // Overlapping loads OR the same bytes into the same places.
    let bytes = if n >= 4 {
        read4(word, 0) | read4(word, n - 4) << (8 * (n - 4))
    } else if n > 0 {
        let at = |i: usize| u64::from(word[i]) << (8 * i);
        at(0) | at(n >> 1) | at(n - 1)
    } else {
        0
    };
    SHORT | (n as u64) << 56 | bytes
}

/// A short word's key from the 8 bytes at its start, by its length: the mask that keeps
/// its bytes, and its length and the [`SHORT`] bit (what [`pack`] puts above them). The
/// last entry, for every longer word, makes its key 0.
const KEY_PARTS: [(u64, u64); SHORT_MAX + 2] = {
    let mut parts = [(0, 0); SHORT_MAX + 2];
    let mut n = 0;
    while n <= SHORT_MAX {
        parts[n] = ((1 << (8 * n)) - 1, SHORT | (n as u64) << 56);
        n += 1;
    }
    parts
};

/// A buffer whose words are packed in place ([`InData::key`]): where reading 8 bytes
/// stops being possible is found once, not at every word.
#[derive(Clone, Copy)]
pub struct InData<'d> {
    data: &'d [u8],
    /// The first offset with fewer than 8 bytes of `data` from it.
    bound: usize,
}

impl<'d> InData<'d> {
    #[inline]
    pub fn new(data: &'d [u8]) -> Self {
        Self { data, bound: data.len().saturating_sub(7) }
    }

    /// The buffer.
    #[inline(always)]
    pub fn bytes(&self) -> &'d [u8] {
        self.data
    }

    /// [`pack`] of the word `data[at..at + n]` if it has at most [`SHORT_MAX`] bytes, 0
    /// if it is longer; panics if it is not in `data`. For a word with 8 bytes of `data`
    /// from its start (most pieces of a document), one unaligned load masked and tagged
    /// by a table read: no shifts by the length, and no branch on it, so short and long
    /// words in no learnable order cost no mispredicts. A word near the end takes
    /// [`pack`] itself.
    #[inline(always)]
    pub fn key_at(&self, at: usize, n: usize) -> u64 {
        if at < self.bound {
            let (mask, tag) = KEY_PARTS[n.min(SHORT_MAX + 1)];
            // SAFETY: `at < bound = data.len() - 7`, so the 8 bytes from `at` are in
            // `data`; read unaligned, as `read8` does, without its bounds check.
            let bytes = unsafe { self.data.as_ptr().add(at).cast::<[u8; 8]>().read_unaligned() };
            return (u64::from_le_bytes(bytes) & mask) | tag;
        }
        let word = &self.data[at..at + n];
        if n <= SHORT_MAX {
            pack(word)
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Near-identical words: every word of a family differs from a base word in one byte,
    /// or only in length, or is a counter in fixed-width text.
    fn near_identical_words() -> Vec<Vec<Vec<u8>>> {
        let mut one_byte = std::collections::BTreeSet::new();
        for len in [1usize, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33, 48, 63, 100] {
            let base: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8 | 0x40).collect();
            for at in 0..len {
                for v in 0..=255u8 {
                    let mut w = base.clone();
                    w[at] = v;
                    one_byte.insert(w);
                }
            }
        }
        let long: Vec<u8> =
            (0..3000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let mut by_length: Vec<Vec<u8>> = (0..=3000).map(|n| long[..n].to_vec()).collect();
        by_length.extend((1..=3000).map(|n| vec![b' '; n]));
        by_length.extend((1..=3000).map(|n| vec![0u8; n]));
        let counters: Vec<Vec<u8>> = (0..300_000u32)
            .flat_map(|i| [format!(" w{i:08}"), format!("{i}"), format!("{i:016x}")])
            .map(String::into_bytes)
            .collect();
        // Short words alone (hashed from their keys): every word of up to 2 bytes, and
        // counters of up to 7 digits.
        let mut short: Vec<Vec<u8>> =
            (0..=0xffffu32).flat_map(|v| [vec![v as u8], vec![v as u8, (v >> 8) as u8]]).collect();
        short.sort();
        short.dedup();
        short.extend((0..400_000u32).map(|i| format!("{i}").into_bytes()));
        short.extend((0..100_000u32).map(|i| format!("{:07}", i * 97).into_bytes()));
        vec![one_byte.into_iter().collect(), by_length, counters, short]
    }

    /// Every distinct word hashes apart in all 64 bits, and the bits that pick a shard, a
    /// slot and a tag spread each family evenly: no bucket strays more than 8 standard
    /// deviations (of a uniform hash's load) from the mean.
    #[test]
    fn near_identical_words_neither_collide_nor_cluster() {
        let families = near_identical_words();
        let mut all: Vec<(u64, &[u8])> = Vec::new();
        for words in &families {
            let hashes: Vec<u64> = words.iter().map(|w| hash(w)).collect();
            let n = hashes.len() as u64;
            // Bucket counts that leave at least 32 words per bucket.
            let bits = (63 - (n / 32).leading_zeros()).min(16);
            let fields = [(0, bits, "slot and tag"), (16, bits, "tag"), (58, 6, "shard")];
            for (shift, width, what) in fields {
                let mut loads = vec![0u64; 1 << width];
                for h in &hashes {
                    loads[((h >> shift) & ((1 << width) - 1)) as usize] += 1;
                }
                let mean = n as f64 / loads.len() as f64;
                let spread = 8.0 * mean.sqrt();
                let (lo, hi) = (loads.iter().min().unwrap(), loads.iter().max().unwrap());
                assert!(
                    (*lo as f64) >= mean - spread && (*hi as f64) <= mean + spread,
                    "{what} bits of {n} words: loads {lo}..{hi}, mean {mean:.1}"
                );
            }
            all.extend(hashes.into_iter().zip(words.iter().map(Vec::as_slice)));
        }
        all.sort_unstable();
        all.dedup_by(|a, b| a.1 == b.1);
        let collisions = all.windows(2).filter(|p| p[0].0 == p[1].0).count();
        assert_eq!(collisions, 0, "full 64-bit collisions among {} words", all.len());
    }

    /// Every word at every place of a buffer (its end included) gets the same key read
    /// in place as read alone: a short word's [`pack`], a longer one's 0.
    #[test]
    fn keys_in_place_are_the_keys_read_alone() {
        let data: Vec<u8> = (0..40u32).map(|i| (i * 73 + 200) as u8).collect();
        for start in 0..=data.len() {
            for n in 0..=(data.len() - start) {
                let word = &data[start..start + n];
                let want = if n <= SHORT_MAX { pack(word) } else { 0 };
                assert_eq!(InData::new(&data).key_at(start, n), want, "{start}+{n}");
                let end = &data[..start + n];
                assert_eq!(InData::new(end).key_at(start, n), want, "{start}+{n} at the end");
            }
        }
    }

    #[test]
    fn short_words_compare_byte_for_byte() {
        let words: Vec<Vec<u8>> = (0..=20usize)
            .flat_map(|n| (0..n.max(1)).map(move |at| (n, at)))
            .flat_map(|(n, at)| {
                let base = vec![b'q'; n];
                let mut changed = base.clone();
                if n > 0 {
                    changed[at] = b'r';
                }
                [base, changed]
            })
            .collect();
        for a in &words {
            for b in &words {
                assert_eq!(same(a, b), a == b, "{a:?} vs {b:?}");
            }
        }
    }
}
