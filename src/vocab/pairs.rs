//! The pair table: (left id, right id) -> the id of their joined bytes, the lookup that
//! encoding does for every pair of adjacent parts.
//!
//! A general hash map (ahash over a tuple, buckets with control bytes) costs about twice
//! what this needs: keys are two u32 packed into one u64, the table is built once and never
//! shrinks, and a miss is the common answer. So: open addressing with linear probing over
//! a power-of-two array of packed keys, at most half full, with a multiplicative
//! (Fibonacci) hash whose high bits pick the slot. The ids sit in an array of their own:
//! a miss reads keys only, 8 bytes a slot instead of 16, so more of the table stays in
//! the cache (it is read at random, once or twice per adjacent pair).

use crate::error::Result;
use crate::interrupt;

/// A slot's key when it holds nothing (no pair of real ids packs to it: ids < u32::MAX).
const EMPTY: u64 = u64::MAX;

#[derive(Debug, Clone)]
pub struct PairTable {
    /// left << 32 | right; `EMPTY`: a free slot. The length is a power of two, at least
    /// twice the number of pairs.
    keys: Vec<u64>,
    /// The joined id of the key in the same slot.
    ids: Vec<u32>,
    /// 64 minus log2 of the number of slots: `hash >> shift` is a slot index.
    shift: u32,
    /// Pairs held.
    len: usize,
}

#[inline]
fn pack(left: u32, right: u32) -> u64 {
    u64::from(left) << 32 | u64::from(right)
}

impl PairTable {
    /// An empty table with room for `n` pairs without growing.
    pub fn with_capacity(n: usize) -> Self {
        Self::cleared(n, |_| Ok(())).expect("clearing without a check cannot fail")
    }

    /// [`Self::with_capacity`], looking for Ctrl-C while the slots are cleared: a
    /// vocabulary of long tokens has tens of millions of splits, and clearing their
    /// hundreds of megabytes of keys takes a large share of a second.
    pub fn with_capacity_interruptible(n: usize) -> Result<Self> {
        Self::cleared(n, interrupt::step)
    }

    fn cleared(n: usize, mut step: impl FnMut(usize) -> Result<()>) -> Result<Self> {
        const CHUNK: usize = 1 << 20;
        let size = (2 * n).next_power_of_two().max(16);
        let mut keys = Vec::with_capacity(size);
        while keys.len() < size {
            let more = (size - keys.len()).min(CHUNK);
            keys.resize(keys.len() + more, EMPTY);
            step(more)?;
        }
        Ok(Self { keys, ids: vec![0; size], shift: 64 - size.trailing_zeros(), len: 0 })
    }

    #[inline]
    fn slot(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// Sets the id of (left, right), replacing an earlier one.
    pub fn insert(&mut self, left: u32, right: u32, id: u32) {
        if 2 * (self.len + 1) > self.keys.len() {
            let mut bigger = Self::with_capacity(self.keys.len());
            for (&key, &value) in self.keys.iter().zip(&self.ids).filter(|s| *s.0 != EMPTY) {
                bigger.insert((key >> 32) as u32, key as u32, value);
            }
            *self = bigger;
        }
        let key = pack(left, right);
        let mask = self.keys.len() - 1;
        let mut i = self.slot(key);
        loop {
            if self.keys[i] == EMPTY {
                self.keys[i] = key;
                self.len += 1;
            }
            if self.keys[i] == key {
                self.ids[i] = id;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// The id of (left, right)'s joined bytes, if they are a token.
    #[inline]
    pub fn get(&self, left: u32, right: u32) -> Option<u32> {
        let key = pack(left, right);
        let mask = self.keys.len() - 1;
        let mut i = self.slot(key);
        loop {
            // SAFETY: `i` is always masked to the tables, whose length is a power of two.
            let k = unsafe { *self.keys.get_unchecked(i) };
            if k == key {
                // SAFETY: `ids` is as long as `keys`.
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

    #[test]
    fn finds_what_it_holds_and_grows() {
        let mut t = PairTable::with_capacity(1);
        for i in 0..10_000u32 {
            t.insert(i % 300, i / 300, i);
        }
        t.insert(5, 0, 99);
        assert_eq!(t.len(), 10_000);
        for i in 0..10_000u32 {
            let want = if i == 5 { 99 } else { i };
            assert_eq!(t.get(i % 300, i / 300), Some(want));
        }
        assert_eq!(t.get(300, 0), None);
        assert_eq!(t.get(u32::MAX - 1, u32::MAX - 1), None);
    }
}
