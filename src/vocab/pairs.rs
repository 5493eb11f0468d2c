//! The pair table: (left id, right id) -> the id of their joined bytes, the lookup that
//! encoding does for every pair of adjacent parts.
//!
//! A general hash map (ahash over a tuple, buckets with control bytes) costs about twice
//! what this needs: the table is built once and never shrinks, and a miss is the common
//! answer. So: open addressing with linear probing, at most half full, with a
//! multiplicative (Fibonacci) hash whose high bits pick the slot. It is read at random,
//! once or twice per adjacent pair, and is larger than a core's L2 cache for a vocabulary
//! of 32,768 tokens, so its bytes per slot decide how often a lookup waits for memory:
//! - compact (every id below 2^21, so any real vocabulary): one `u64` per slot holding
//!   left, right and the joined id, 21 bits each. A lookup, hit or miss, reads one word;
//!   64 Ki slots are 512 KiB;
//! - wide (larger ids): the packed `left << 32 | right` keys in one array and the ids in
//!   another (a miss reads keys only): 12 bytes a slot.

use crate::error::Result;
use crate::interrupt;

/// A free slot (no pair of real ids packs to it, in either layout: ids are below
/// `u32::MAX`, and below `COMPACT_LIMIT` in a compact table).
const EMPTY: u64 = u64::MAX;

/// Bits per id in a compact slot.
const ID_BITS: u32 = 21;

/// Ids below this fit a compact slot, with the all-ones key left free for `EMPTY`.
const COMPACT_LIMIT: u32 = (1 << ID_BITS) - 1;

/// The id bits of a compact slot.
const ID_MASK: u64 = (1 << ID_BITS) - 1;

/// A compact slot's key: the bits above its id.
#[inline(always)]
fn compact_key(left: u32, right: u32) -> u64 {
    u64::from(left) << ID_BITS | u64::from(right)
}

/// A wide slot's key.
#[inline(always)]
fn wide_key(left: u32, right: u32) -> u64 {
    u64::from(left) << 32 | u64::from(right)
}

#[derive(Debug, Clone)]
pub struct PairTable {
    /// Compact: `(left << 21 | right) << 21 | id`. Wide: `left << 32 | right`. `EMPTY`:
    /// a free slot. The length is a power of two, at least twice the number of pairs.
    slots: Vec<u64>,
    /// Wide only (empty in a compact table): the joined id of the key in the same slot.
    ids: Vec<u32>,
    /// 64 minus log2 of the number of slots: `hash >> shift` is a slot index.
    shift: u32,
    /// Pairs held.
    len: usize,
}

impl PairTable {
    /// An empty table with room for `n` pairs without growing, of ids below `id_bound`.
    pub fn with_capacity(n: usize, id_bound: usize) -> Self {
        Self::cleared(n, id_bound, |_| Ok(())).expect("clearing without a check cannot fail")
    }

    /// [`Self::with_capacity`], looking for Ctrl-C while the slots are cleared: a
    /// vocabulary of long tokens has tens of millions of splits, and clearing their
    /// hundreds of megabytes of keys takes a large share of a second.
    pub fn with_capacity_interruptible(n: usize, id_bound: usize) -> Result<Self> {
        Self::cleared(n, id_bound, interrupt::step)
    }

    fn cleared(
        n: usize,
        id_bound: usize,
        mut step: impl FnMut(usize) -> Result<()>,
    ) -> Result<Self> {
        const CHUNK: usize = 1 << 20;
        let size = (2 * n).next_power_of_two().max(16);
        let mut slots = Vec::with_capacity(size);
        while slots.len() < size {
            let more = (size - slots.len()).min(CHUNK);
            slots.resize(slots.len() + more, EMPTY);
            step(more)?;
        }
        let ids = if id_bound <= COMPACT_LIMIT as usize { Vec::new() } else { vec![0; size] };
        Ok(Self { slots, ids, shift: 64 - size.trailing_zeros(), len: 0 })
    }

    #[inline]
    fn is_compact(&self) -> bool {
        self.ids.is_empty()
    }

    /// The word a slot holding (left, right) starts with: all of a wide slot's key, the
    /// bits above the id in a compact one.
    #[inline]
    fn key(&self, left: u32, right: u32) -> u64 {
        if self.is_compact() {
            compact_key(left, right)
        } else {
            wide_key(left, right)
        }
    }

    #[inline]
    fn slot(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// Sets the id of (left, right), replacing an earlier one. Ids must be below the
    /// table's `id_bound`.
    pub fn insert(&mut self, left: u32, right: u32, id: u32) {
        if self.is_compact() {
            assert!(left.max(right).max(id) < COMPACT_LIMIT, "ids below the table's bound");
        }
        if 2 * (self.len + 1) > self.slots.len() {
            let bound = if self.is_compact() { 0 } else { u32::MAX as usize };
            let mut bigger = Self::with_capacity(self.slots.len(), bound);
            for (left, right, id) in self.entries() {
                bigger.insert(left, right, id);
            }
            *self = bigger;
        }
        let key = self.key(left, right);
        let mask = self.slots.len() - 1;
        let mut i = self.slot(key);
        loop {
            let word = self.slots[i];
            if word == EMPTY {
                self.len += 1;
            } else if self.key_of(word) != key {
                i = (i + 1) & mask;
                continue;
            }
            if self.is_compact() {
                self.slots[i] = key << ID_BITS | u64::from(id);
            } else {
                self.slots[i] = key;
                self.ids[i] = id;
            }
            return;
        }
    }

    /// The key part of an occupied slot's word.
    #[inline]
    fn key_of(&self, word: u64) -> u64 {
        if self.is_compact() {
            word >> ID_BITS
        } else {
            word
        }
    }

    /// Every (left, right, id) held, in slot order.
    pub(super) fn entries(&self) -> Vec<(u32, u32, u32)> {
        (0..self.slots.len())
            .filter(|&i| self.slots[i] != EMPTY)
            .map(|i| {
                let word = self.slots[i];
                if self.is_compact() {
                    (
                        (word >> (2 * ID_BITS)) as u32,
                        (word >> ID_BITS & ID_MASK) as u32,
                        (word & ID_MASK) as u32,
                    )
                } else {
                    ((word >> 32) as u32, word as u32, self.ids[i])
                }
            })
            .collect()
    }

    /// The id of (left, right)'s joined bytes, if they are a token; any ids.
    #[inline]
    pub fn get(&self, left: u32, right: u32) -> Option<u32> {
        // Ids past a compact slot's bits are in no slot, and would alias another pair.
        if self.is_compact() && left.max(right) >= COMPACT_LIMIT {
            return None;
        }
        self.get_below_bound(left, right)
    }

    /// [`Self::get`] for ids below the table's `id_bound` (encoding's parts are always
    /// ids of the vocabulary), without checking them: the check is a tenth of the
    /// lookup's instructions. Past the bound the answer may be another pair's.
    #[inline]
    pub fn get_below_bound(&self, left: u32, right: u32) -> Option<u32> {
        if self.is_compact() {
            debug_assert!(left.max(right) < COMPACT_LIMIT, "ids below the bound");
            self.get_compact(left, right)
        } else {
            self.get_wide(left, right)
        }
    }

    #[inline]
    fn get_compact(&self, left: u32, right: u32) -> Option<u32> {
        let key = compact_key(left, right);
        let mask = self.slots.len() - 1;
        let mut i = self.slot(key);
        loop {
            // SAFETY: `i` is always masked to the table, whose length is a power of two.
            let word = unsafe { *self.slots.get_unchecked(i) };
            if word >> ID_BITS == key {
                return Some((word & ID_MASK) as u32);
            }
            if word == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    #[inline]
    fn get_wide(&self, left: u32, right: u32) -> Option<u32> {
        let key = wide_key(left, right);
        let mask = self.slots.len() - 1;
        let mut i = self.slot(key);
        loop {
            // SAFETY: `i` is always masked to the tables, whose length is a power of two.
            let k = unsafe { *self.slots.get_unchecked(i) };
            if k == key {
                // SAFETY: `ids` is as long as `slots` in a wide table.
                return Some(unsafe { *self.ids.get_unchecked(i) });
            }
            if k == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Pairs held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both layouts: the compact one (ids below 2^21) and the wide one.
    #[test]
    fn finds_what_it_holds_and_grows() {
        for (bound, base) in [(20_000, 0), (u32::MAX as usize, 4_000_000_000u32)] {
            let mut t = PairTable::with_capacity(1, bound);
            assert_eq!(t.is_compact(), bound == 20_000);
            for i in 0..10_000u32 {
                t.insert(i % 300, i / 300, base + i);
            }
            t.insert(5, 0, base + 99);
            assert_eq!(t.len(), 10_000);
            assert_eq!(t.is_compact(), bound == 20_000, "growing keeps the layout");
            for i in 0..10_000u32 {
                let want = if i == 5 { 99 } else { i };
                assert_eq!(t.get(i % 300, i / 300), Some(base + want));
            }
            assert_eq!(t.get(300, 0), None);
            assert_eq!(t.get(u32::MAX - 1, u32::MAX - 1), None);
        }
    }

    /// Ids past a compact table's 21 bits must not alias a pair it holds (the bits of a
    /// large right id would spill into the left's).
    #[test]
    fn ids_past_the_compact_bits_are_not_found() {
        let mut t = PairTable::with_capacity(4, 1000);
        t.insert(5, 7, 300);
        t.insert(0, 0, 301);
        assert_eq!(t.get(5, 7), Some(300));
        assert_eq!(t.get(4, (1 << ID_BITS) + 7), None);
        assert_eq!(t.get(5 + (1 << ID_BITS), 7), None);
        assert_eq!(t.get(COMPACT_LIMIT, COMPACT_LIMIT), None);
        assert_eq!(t.get(1 << 22, 0), None);
    }

    /// The largest ids a compact table takes round-trip through their 21 bits.
    #[test]
    fn the_largest_compact_ids_round_trip() {
        let top = COMPACT_LIMIT - 1;
        let mut t = PairTable::with_capacity(2, COMPACT_LIMIT as usize);
        assert!(t.is_compact());
        t.insert(top, top, top);
        t.insert(top, 0, 1);
        assert_eq!(t.get(top, top), Some(top));
        assert_eq!(t.get(top, 0), Some(1));
        assert_eq!(t.get(0, top), None);
        assert!(!PairTable::with_capacity(2, COMPACT_LIMIT as usize + 1).is_compact());
    }
}
