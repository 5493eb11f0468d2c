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

/// Slots after the table that repeat its first ones, so that [`PairTable::join_avx2`]
/// reads 4 slots from any slot without wrapping.
const PAD: usize = 3;

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
        while slots.len() < size + PAD {
            let more = (size + PAD - slots.len()).min(CHUNK);
            slots.resize(slots.len() + more, EMPTY);
            step(more)?;
        }
        let ids = if id_bound <= COMPACT_LIMIT as usize { Vec::new() } else { vec![0; size] };
        Ok(Self { slots, ids, shift: 64 - size.trailing_zeros(), len: 0 })
    }

    /// Slots of the table proper (a power of two), without the [`PAD`] copies after them.
    #[inline]
    fn size(&self) -> usize {
        self.slots.len() - PAD
    }

    /// The bytes the table takes.
    pub(super) fn bytes(&self) -> usize {
        self.slots.len() * 8 + self.ids.len() * 4
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
        if 2 * (self.len + 1) > self.size() {
            let bound = if self.is_compact() { 0 } else { u32::MAX as usize };
            let mut bigger = Self::with_capacity(self.size(), bound);
            for (left, right, id) in self.entries() {
                bigger.insert(left, right, id);
            }
            *self = bigger;
        }
        let key = self.key(left, right);
        let mask = self.size() - 1;
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
            if i < PAD {
                let size = self.size();
                self.slots[size + i] = self.slots[i];
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
        (0..self.size())
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
        let mask = self.size() - 1;
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

    /// [`Self::get_below_bound`] as an id, `none` for none, for the AVX2 merger:
    /// a compact table compares 4 slots at a time and picks the answer without a branch,
    /// going on only past 4 taken slots that hold other pairs (a probe's end, where a
    /// plain loop mispredicts, is no branch at all: most lookups miss, and a miss at half
    /// load ends after 2.5 slots on average).
    ///
    /// Safety: the CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    #[cfg(target_arch = "x86_64")]
    pub unsafe fn join_avx2(&self, left: u32, right: u32, none: u32) -> u32 {
        use std::arch::x86_64::{
            _mm256_castsi256_pd, _mm256_cmpeq_epi64, _mm256_loadu_si256, _mm256_movemask_pd,
            _mm256_set1_epi64x, _mm256_srli_epi64,
        };
        if !self.is_compact() {
            return self.get_wide(left, right).unwrap_or(none);
        }
        let key = compact_key(left, right);
        let mask = self.size() - 1;
        let mut i = self.slot(key);
        let (want, free) = (_mm256_set1_epi64x(key as i64), _mm256_set1_epi64x(EMPTY as i64));
        loop {
            // SAFETY: `i` is at most `mask`, and `PAD` slots follow the table.
            let four = unsafe { _mm256_loadu_si256(self.slots.as_ptr().add(i).cast()) };
            let keys = _mm256_srli_epi64::<{ ID_BITS as i32 }>(four);
            let hits = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(keys, want)));
            let frees = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(four, free)));
            if (hits | frees) != 0 {
                // The hit's slot (a key is held once), or any of the four when none hit.
                let lane = (hits as u32).trailing_zeros() as usize & 3;
                // SAFETY: as above.
                let word = unsafe { *self.slots.get_unchecked(i + lane) };
                return found_or(hits, (word & ID_MASK) as u32, none);
            }
            i = (i + 4) & mask;
        }
    }

    #[inline]
    fn get_wide(&self, left: u32, right: u32) -> Option<u32> {
        let key = wide_key(left, right);
        let mask = self.size() - 1;
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

/// `$answer`, or `$none` where the flags that `$test` (of `{x}` and maybe `{answer}`)
/// sets make `$cmov` move it, between registers. Whether a pair is in the table follows
/// no pattern a predictor learns, and LLVM turned every plain select of a lookup's
/// answer (`select_unpredictable` too) back into a branch once it was inlined into the
/// merger, which tests the answer next; the asm is opaque to that.
#[cfg(target_arch = "x86_64")]
macro_rules! conditional_move {
    ($test:literal, $x:expr, $cmov:literal, $answer:expr, $none:expr) => {{
        let mut answer: u32 = $answer;
        // SAFETY: a test or compare and a conditional move between registers; no memory,
        // no stack.
        unsafe {
            std::arch::asm!(
                $test,
                concat!($cmov, " {answer:e}, {none:e}"),
                x = in(reg) $x,
                answer = inout(reg) answer,
                none = in(reg) $none,
                options(pure, nomem, nostack),
            );
        }
        answer
    }};
}

/// `id` when `hits` is not 0, else `none`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn found_or(hits: i32, id: u32, none: u32) -> u32 {
    conditional_move!("test {x:e}, {x:e}", hits, "cmovz", id, none)
}

/// `value` when it is at most `limit`, else `none`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn at_most_or(value: u32, limit: u32, none: u32) -> u32 {
    conditional_move!("cmp {answer:e}, {x:e}", limit, "cmova", value, none)
}

/// [`at_most_or`] elsewhere: a select, which the compiler may make a branch.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(super) fn at_most_or(value: u32, limit: u32, none: u32) -> u32 {
    std::hint::select_unpredictable(value <= limit, value, none)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX2 lookup answers as the plain one, pair by pair, at every load up to the
    /// table's limit (runs of taken slots longer than 4, and runs that wrap past the
    /// table's end, which it reads in the copies after it), in both layouts.
    #[test]
    fn four_slots_at_a_time_answer_as_one_by_one() {
        use super::super::NO_JOIN;
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut rng = crate::test_rng::Rng(11);
        for bound in [50_000, u32::MAX as usize] {
            let mut t = PairTable::with_capacity(1_000, bound);
            // Six pairs at home in the last slot: a run that wraps to slot 4.
            let last = t.size() - 1;
            let mut held: Vec<(u32, u32)> = (0..3_000u32)
                .flat_map(|l| (0..3_000u32).map(move |r| (l, r)))
                .filter(|&(l, r)| t.slot(t.key(l, r)) == last)
                .take(6)
                .collect();
            for (k, &(l, r)) in held.iter().enumerate() {
                t.insert(l, r, k as u32);
            }
            assert!(held.len() == 6 && t.slots[4] != EMPTY, "a run wraps past the end");
            while 2 * (t.len + 1) <= t.size() {
                let (l, r) = (rng.next() as u32 % 3_000, rng.next() as u32 % 3_000);
                t.insert(l, r, rng.next() as u32 % 40_000);
                held.push((l, r));
                let probes = held.iter().copied().chain((0..50).map(|k| (3_000 + k, k)));
                for (l, r) in probes {
                    // SAFETY: AVX2 was checked above.
                    let none = [NO_JOIN, 1 << 25][(l & 1) as usize];
                    let got = unsafe { t.join_avx2(l, r, none) };
                    assert_eq!(got, t.get_below_bound(l, r).unwrap_or(none), "{l} {r}");
                }
            }
        }
    }

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
