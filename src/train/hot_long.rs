//! The counts of recent words of 8 to 16 bytes, in front of a partial's tables.
//!
//! A word longer than a short key ([`super::word_hash::SHORT_MAX`]) lives in a shard's
//! arena, so counting it in the table costs two cache misses one after the other: its
//! slot, then its bytes in the arena to compare (on 100 MB of code that second read was
//! 28% of the flush's samples). Most such pieces are a few frequent words (indentation,
//! `#include`, ` return`...), so like [`super::hot`] for short words, a small
//! direct-mapped array keeps the recent ones, each whole in its slot: its hash, its first
//! and last 8 bytes (which, with its length, are all its bytes) and its count. A hit is a
//! compare and an add in an array of 128 KiB. A word that lands on a taken slot takes it,
//! and the word it displaces leaves with its count for its owner to add to the table:
//! counts only move, so every word's total is unchanged.

use crate::hash_parts::read8;

/// Slots (32 bytes each: 128 KiB). On the 20 MB samples they find 73% of code's pieces
/// of 8 bytes or more, 70% of English's and 50% of multilingual's (1,024 slots: 68% of
/// code's).
const SLOTS: usize = 1 << 12;

/// The longest word held.
pub const MAX_LEN: usize = 16;

/// The shortest: a word of 8 bytes or more is read as two overlapping 8-byte loads.
const MIN_LEN: usize = 8;

/// A slot's count sits above its word's length, which takes the low bits.
const LEN_BITS: u32 = 5;

#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct Slot {
    hash: u64,
    first: u64,
    last: u64,
    /// `count << LEN_BITS | len`; 0: empty (a word held has 8 bytes or more).
    count_len: u64,
}

impl Slot {
    /// The length of the word held (0: none).
    fn len(&self) -> usize {
        (self.count_len & ((1 << LEN_BITS) - 1)) as usize
    }
}

/// A word that left its slot, with the occurrences counted while it was held.
#[derive(Clone, Copy, Default)]
pub struct Displaced {
    pub hash: u64,
    pub count: u64,
    bytes: [u8; MAX_LEN],
    len: u8,
}

impl Displaced {
    /// The word's bytes.
    pub fn word(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    fn of(slot: &Slot) -> Self {
        let len = slot.len();
        let mut bytes = [0; MAX_LEN];
        bytes[..8].copy_from_slice(&slot.first.to_le_bytes());
        // The last 8 bytes overlap the first 8 with the same bytes.
        bytes[len - 8..len].copy_from_slice(&slot.last.to_le_bytes());
        Self { hash: slot.hash, count: slot.count_len >> LEN_BITS, bytes, len: len as u8 }
    }
}

/// Recent words of [`MIN_LEN`]`..=`[`MAX_LEN`] bytes and their counts; allocated at the
/// first word.
#[derive(Default)]
pub struct HotLongs {
    slots: Vec<Slot>,
}

impl HotLongs {
    /// Counts one occurrence of `word` (8 to 16 bytes) of hash `h` (its table hash).
    /// Returns the word it displaced, if any, which the caller must add to its table.
    #[inline(always)]
    pub fn add(&mut self, word: &[u8], h: u64) -> Option<Displaced> {
        let n = word.len();
        debug_assert!((MIN_LEN..=MAX_LEN).contains(&n));
        if self.slots.is_empty() {
            self.slots = vec![Slot::default(); SLOTS];
        }
        // The hash's low bits place the word in its shard's table and its top bits pick
        // the shard; the slot here takes bits from the middle.
        let slot = &mut self.slots[(h >> 32) as usize & (SLOTS - 1)];
        let (first, last) = (read8(word, 0), read8(word, n - 8));
        if slot.hash == h && slot.first == first && slot.last == last && slot.len() == n {
            slot.count_len += 1 << LEN_BITS;
            return None;
        }
        let old = *slot;
        *slot = Slot { hash: h, first, last, count_len: 1 << LEN_BITS | n as u64 };
        (old.count_len != 0).then(|| Displaced::of(&old))
    }

    /// Every word held with its count, leaving none held (and the slots freed).
    pub fn take_all(&mut self) -> impl Iterator<Item = Displaced> {
        std::mem::take(&mut self.slots)
            .into_iter()
            .filter(|slot| slot.count_len != 0)
            .map(|slot| Displaced::of(&slot))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;
    use crate::train::word_hash::hash;
    use std::collections::HashMap;

    /// Counts displaced and taken at the end add up to every word's count, for words of
    /// every length held (including ones equal in their first and last 8 bytes but not in
    /// length, such as runs of one byte), far more of them than slots.
    #[test]
    fn counts_only_move() {
        let mut hot = HotLongs::default();
        let mut want: HashMap<Vec<u8>, u64> = HashMap::new();
        let mut got: HashMap<Vec<u8>, u64> = HashMap::new();
        let mut rng = Rng(5);
        for i in 0..300_000u64 {
            let x = rng.next();
            let len = MIN_LEN + (x % (MAX_LEN - MIN_LEN + 1) as u64) as usize;
            let word: Vec<u8> = match i % 3 {
                0 => vec![b' '; len],
                1 => (0..len).map(|k| b"ab"[((x >> (8 + k)) & 1) as usize]).collect(),
                _ => (0..len).map(|k| (x >> (4 * (k % 12))) as u8).collect(),
            };
            *want.entry(word.clone()).or_default() += 1;
            if let Some(d) = hot.add(&word, hash(&word)) {
                assert_eq!(d.hash, hash(d.word()), "a displaced word keeps its hash");
                *got.entry(d.word().to_vec()).or_default() += d.count;
            }
        }
        let displaced: u64 = got.values().sum();
        assert!(displaced > 100_000, "most words displace others: {displaced}");
        for d in hot.take_all() {
            *got.entry(d.word().to_vec()).or_default() += d.count;
        }
        assert_eq!(got, want);
        assert_eq!(hot.take_all().count(), 0, "nothing is held after taking all");
    }
}
