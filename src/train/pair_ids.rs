//! The merge loop's pair -> id table: open addressing with linear probing over 12-byte
//! slots, and deletion by shifting later entries back (no tombstones).
//!
//! The loop inserts and removes pairs all the time (a merge's new pairs come, the pairs
//! it takes to zero go). With backward-shift deletion a removal leaves the table as if
//! the pair had never been inserted, so no deleted markers pile up and probes stay as
//! short as the load allows. A lookup reads one slot array (a general map reads a
//! control-byte group, then the slot). The key is the two token ids in one `u64`, mixed
//! by one 64×64→128-bit multiply.

use super::rewrite::Pair;
use crate::hash_parts::fold;

/// A slot: the pair as `left << 32 | right`, and its id (`EMPTY` when free). Packed to
/// 4-byte alignment: 12 bytes, not 16.
#[derive(Clone, Copy)]
#[repr(C, packed(4))]
struct Slot {
    key: u64,
    id: u32,
}

/// The bytes of one slot; [`super::budget::merge_entry`] is derived from it.
pub const SLOT_BYTES: u64 = std::mem::size_of::<Slot>() as u64;

/// The id of a free slot (dense ids never reach it: there are fewer than 2^32 pairs).
const EMPTY: u32 = u32::MAX;

const FREE: Slot = Slot { key: 0, id: EMPTY };

/// The table starts at this many slots (a power of two).
const MIN_SLOTS: usize = 64;

/// Pair -> dense id.
pub struct PairIds {
    slots: Vec<Slot>,
    /// Pairs held.
    len: usize,
}

impl Default for PairIds {
    fn default() -> Self {
        Self { slots: vec![FREE; MIN_SLOTS], len: 0 }
    }
}

#[inline(always)]
fn key(pair: Pair) -> u64 {
    u64::from(pair.0) << 32 | u64::from(pair.1)
}

impl PairIds {
    /// The slot where `key`'s probe starts.
    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        // Any odd constant with mixed bits; the fold carries both ids into the low bits.
        (fold(key, 0x9E37_79B9_7F4A_7C15) as usize) & (self.slots.len() - 1)
    }

    /// The slot holding `key`, or the free slot where its probe ends.
    #[inline(always)]
    fn find(&self, key: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let slot = self.slots[i];
            if slot.id == EMPTY || slot.key == key {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// The id of `pair`, if it is held.
    #[inline]
    pub fn get(&self, pair: Pair) -> Option<u32> {
        let id = self.slots[self.find(key(pair))].id;
        (id != EMPTY).then_some(id)
    }

    /// The id of `pair`, inserting `new()` as its id if it is not held.
    #[inline]
    pub fn get_or_insert(&mut self, pair: Pair, new: impl FnOnce() -> u32) -> u32 {
        let key = key(pair);
        let mut i = self.find(key);
        if self.slots[i].id != EMPTY {
            return self.slots[i].id;
        }
        // At most 7/10 full, so probes stay short.
        if (self.len + 1) * 10 > self.slots.len() * 7 {
            self.grow();
            i = self.find(key);
        }
        let id = new();
        debug_assert_ne!(id, EMPTY, "pair ids must stay below u32::MAX");
        self.slots[i] = Slot { key, id };
        self.len += 1;
        id
    }

    /// Removes `pair`; returns its id if it was held.
    pub fn remove(&mut self, pair: Pair) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut hole = self.find(key(pair));
        let id = self.slots[hole].id;
        if id == EMPTY {
            return None;
        }
        // Shift back each later entry of the run whose probe starts at or before the hole
        // (cyclically), so every probe still reaches its entry without passing a free slot.
        let mut j = (hole + 1) & mask;
        while self.slots[j].id != EMPTY {
            let home = self.home(self.slots[j].key);
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                self.slots[hole] = self.slots[j];
                hole = j;
            }
            j = (j + 1) & mask;
        }
        self.slots[hole] = FREE;
        self.len -= 1;
        Some(id)
    }

    /// Every held pair and its id (in slot order: the hash's, not the pairs').
    pub fn iter(&self) -> impl Iterator<Item = (Pair, u32)> + '_ {
        self.slots
            .iter()
            .filter(|s| s.id != EMPTY)
            .map(|s| (((s.key >> 32) as u32, s.key as u32), s.id))
    }

    /// Doubles the slots and places every pair again.
    fn grow(&mut self) {
        let doubled = vec![FREE; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, doubled);
        for slot in old.into_iter().filter(|s| s.id != EMPTY) {
            let i = self.find(slot.key);
            self.slots[i] = slot;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ahash::AHashMap;

    /// Inserts and removes at random against a map, through several doublings, with
    /// pairs that share a side (as a merge's do) so runs and wrap-around get exercised.
    #[test]
    fn behaves_as_a_map() {
        let mut table = PairIds::default();
        let mut want: AHashMap<Pair, u32> = AHashMap::new();
        let mut seed = 3u64;
        let mut next_id = 0;
        for step in 0..60_000 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = seed >> 20;
            let pair = ((r % 7) as u32 * 1000, ((r >> 8) % 3000) as u32);
            if r % 3 == 0 {
                assert_eq!(table.remove(pair), want.remove(&pair), "step {step}");
            } else {
                let id = table.get_or_insert(pair, || {
                    next_id += 1;
                    next_id
                });
                assert_eq!(id, *want.entry(pair).or_insert(id), "step {step}");
            }
            if step % 5000 == 0 {
                let mut got: Vec<(Pair, u32)> = table.iter().collect();
                got.sort_unstable();
                let mut all: Vec<(Pair, u32)> = want.iter().map(|(&p, &id)| (p, id)).collect();
                all.sort_unstable();
                assert_eq!(got, all);
            }
        }
        assert_eq!(table.len, want.len());
        for (&pair, &id) in &want {
            assert_eq!(table.get(pair), Some(id));
        }
        assert_eq!(table.get((u32::MAX, u32::MAX)), None);
        assert!(table.slots.len() > MIN_SLOTS);
    }
}
