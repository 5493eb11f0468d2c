//! The merge loop's pair -> id table: open addressing with linear probing, and deletion
//! by shifting later entries back (no tombstones).
//!
//! The loop inserts and removes pairs all the time (a merge's new pairs come, the pairs
//! it takes to zero go). With backward-shift deletion a removal leaves the table as if
//! the pair had never been inserted, so no deleted markers pile up and probes stay as
//! short as the load allows. A lookup reads one slot array (a general map reads a
//! control-byte group, then the slot). The key is the two token ids in one `u64`, mixed
//! by one 64×64→128-bit multiply.
//!
//! The pairs present grow through the loop, and this table is one of its largest parts
//! (19 MB of the 74 MB heap at the peak of 100 MB of code at 65,536), so its slots are as
//! small as the ids allow:
//! - compact (token ids below 2^21, pair ids below 2^22 - 1: every run short of millions
//!   of pairs present at once): one `u64` per slot, `(left << 21 | right) << 22 | id`;
//! - wide (anything larger): the pair as `left << 32 | right` and the id, 12 bytes.
//!
//! A table starts compact and turns wide, once, at the first pair or id that does not fit
//! (every entry placed again); ids and answers do not depend on the layout.

use super::rewrite::Pair;
use crate::hash_parts::fold;
use crate::prefetch::prefetch;

/// A wide slot: the pair as `left << 32 | right`, and its id (`EMPTY` when free). Packed
/// to 4-byte alignment: 12 bytes, not 16.
#[derive(Clone, Copy)]
#[repr(C, packed(4))]
struct Wide {
    key: u64,
    id: u32,
}

/// The bytes of a wide slot, the larger layout; [`super::budget::merge_entry`] is derived
/// from it, so the budget holds whichever layout a run ends in.
pub const SLOT_BYTES: u64 = std::mem::size_of::<Wide>() as u64;

/// The id of a free slot (dense ids never reach it: there are fewer than 2^32 pairs).
const EMPTY: u32 = u32::MAX;

/// Bits of a token id in a compact slot.
const TOKEN_BITS: u32 = 21;

/// Bits of the pair id in a compact slot. The all-ones id is never stored, so no entry
/// packs to `u64::MAX`, a free compact slot.
const ID_BITS: u32 = 22;

/// A pair's key in both layouts, the hash's input: `left << 32 | right`.
#[inline(always)]
fn key(pair: Pair) -> u64 {
    u64::from(pair.0) << 32 | u64::from(pair.1)
}

/// How a layout stores a slot.
trait Layout: Copy {
    const FREE: Self;
    /// `key` as this layout compares it.
    fn stored_key(key: u64) -> u64;
    fn new(key: u64, id: u32) -> Self;
    /// The slot's key as [`Self::stored_key`] gives it.
    fn packed_key(self) -> u64;
    /// The slot's key as [`key`] gives it.
    fn key(self) -> u64;
    /// The id (`EMPTY` for a free slot).
    fn id(self) -> u32;
    /// Whether the slot is free (one compare, for the probe loops).
    fn is_free(self) -> bool;
}

impl Layout for Wide {
    const FREE: Self = Wide { key: 0, id: EMPTY };

    #[inline(always)]
    fn stored_key(key: u64) -> u64 {
        key
    }

    #[inline(always)]
    fn new(key: u64, id: u32) -> Self {
        Wide { key, id }
    }

    #[inline(always)]
    fn packed_key(self) -> u64 {
        self.key
    }

    #[inline(always)]
    fn key(self) -> u64 {
        self.key
    }

    #[inline(always)]
    fn id(self) -> u32 {
        self.id
    }

    #[inline(always)]
    fn is_free(self) -> bool {
        self.id == EMPTY
    }
}

/// A compact slot (see the module's notes).
#[derive(Clone, Copy)]
struct Compact(u64);

impl Compact {
    /// Whether the pair and its id fit a compact slot.
    #[inline(always)]
    fn fits(pair: Pair, id: u32) -> bool {
        (pair.0 | pair.1) < 1 << TOKEN_BITS && id < (1 << ID_BITS) - 1
    }
}

impl Layout for Compact {
    const FREE: Self = Compact(u64::MAX);

    #[inline(always)]
    fn stored_key(key: u64) -> u64 {
        (key >> 32) << TOKEN_BITS | (key & 0xFFFF_FFFF)
    }

    #[inline(always)]
    fn new(key: u64, id: u32) -> Self {
        Compact(Self::stored_key(key) << ID_BITS | u64::from(id))
    }

    #[inline(always)]
    fn packed_key(self) -> u64 {
        self.0 >> ID_BITS
    }

    #[inline(always)]
    fn key(self) -> u64 {
        let packed = self.packed_key();
        (packed >> TOKEN_BITS) << 32 | (packed & ((1 << TOKEN_BITS) - 1))
    }

    #[inline(always)]
    fn id(self) -> u32 {
        match self.0 {
            u64::MAX => EMPTY,
            v => (v & ((1 << ID_BITS) - 1)) as u32,
        }
    }

    #[inline(always)]
    fn is_free(self) -> bool {
        self.0 == u64::MAX
    }
}

/// The table starts at this many slots (a power of two).
const MIN_SLOTS: usize = 64;

/// Open addressing over one layout's slots.
struct Slots<S: Layout>(Vec<S>);

impl<S: Layout> Slots<S> {
    fn new(len: usize) -> Self {
        Slots(vec![S::FREE; len])
    }

    /// The slot where `key`'s probe starts.
    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        // Any odd constant with mixed bits; the fold carries both ids into the low bits.
        (fold(key, 0x9E37_79B9_7F4A_7C15) as usize) & (self.0.len() - 1)
    }

    /// The slot holding `key`, or the free slot where its probe ends.
    #[inline(always)]
    fn find(&self, key: u64) -> usize {
        let mask = self.0.len() - 1;
        let stored = S::stored_key(key);
        let mut i = self.home(key);
        loop {
            let slot = self.0[i];
            if slot.is_free() || slot.packed_key() == stored {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// [`Self::find`] and the id there (`EMPTY`: not held).
    #[inline(always)]
    fn lookup(&self, key: u64) -> (usize, u32) {
        let i = self.find(key);
        (i, self.0[i].id())
    }

    /// Stores `slot`, of key `key`, where `key`'s probe ends.
    fn put(&mut self, key: u64, slot: S) {
        let i = self.find(key);
        self.0[i] = slot;
    }

    /// Empties slot `hole`, shifting back each later entry of its run whose probe starts
    /// at or before the hole (cyclically), so every probe still reaches its entry
    /// without passing a free slot.
    fn remove_at(&mut self, mut hole: usize) {
        let mask = self.0.len() - 1;
        let mut j = (hole + 1) & mask;
        while !self.0[j].is_free() {
            let home = self.home(self.0[j].key());
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                self.0[hole] = self.0[j];
                hole = j;
            }
            j = (j + 1) & mask;
        }
        self.0[hole] = S::FREE;
    }

    /// Every held entry as (key, id).
    fn entries(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.0.iter().filter(|s| !s.is_free()).map(|s| (s.key(), s.id()))
    }

    /// A table of `len` slots holding `entries`.
    fn of(len: usize, entries: impl Iterator<Item = (u64, u32)>) -> Self {
        let mut table = Self::new(len);
        for (key, id) in entries {
            table.put(key, S::new(key, id));
        }
        table
    }
}

enum Table {
    Compact(Slots<Compact>),
    Wide(Slots<Wide>),
}

/// Pair -> dense id.
pub struct PairIds {
    table: Table,
    /// Pairs held.
    len: usize,
}

impl Default for PairIds {
    fn default() -> Self {
        Self { table: Table::Compact(Slots::new(MIN_SLOTS)), len: 0 }
    }
}

impl PairIds {
    /// The id of `pair`, if it is held.
    #[inline]
    pub fn get(&self, pair: Pair) -> Option<u32> {
        let id = match &self.table {
            Table::Compact(t) => t.lookup(key(pair)).1,
            Table::Wide(t) => t.lookup(key(pair)).1,
        };
        (id != EMPTY).then_some(id)
    }

    /// Fetches the slot where `pair`'s probe starts into the cache (a hint: a lookup of
    /// it soon waits less).
    #[inline]
    pub fn prefetch(&self, pair: Pair) {
        let key = key(pair);
        match &self.table {
            Table::Compact(t) => prefetch(&raw const t.0[t.home(key)]),
            Table::Wide(t) => prefetch(&raw const t.0[t.home(key)]),
        }
    }

    /// The id of `pair`, inserting `new()` as its id if it is not held.
    #[inline]
    pub fn get_or_insert(&mut self, pair: Pair, new: impl FnOnce() -> u32) -> u32 {
        let key = key(pair);
        let (at, held) = match &self.table {
            Table::Compact(t) => t.lookup(key),
            Table::Wide(t) => t.lookup(key),
        };
        if held != EMPTY {
            return held;
        }
        let id = new();
        debug_assert_ne!(id, EMPTY, "pair ids must stay below u32::MAX");
        // At most 7/10 full, so probes stay short.
        let full = (self.len + 1) * 10 > self.slots() * 7;
        match &mut self.table {
            Table::Compact(t) if !full && Compact::fits(pair, id) => {
                t.0[at] = Compact::new(key, id)
            }
            Table::Wide(t) if !full => t.0[at] = Wide::new(key, id),
            _ => {
                let slots = if full { 2 * self.slots() } else { self.slots() };
                match self.table {
                    Table::Compact(_) if Compact::fits(pair, id) => self.relayout::<Compact>(slots),
                    _ => self.relayout::<Wide>(slots),
                }
                match &mut self.table {
                    Table::Compact(t) => t.put(key, Compact::new(key, id)),
                    Table::Wide(t) => t.put(key, Wide::new(key, id)),
                }
            }
        }
        self.len += 1;
        id
    }

    /// Removes `pair`; returns its id if it was held.
    pub fn remove(&mut self, pair: Pair) -> Option<u32> {
        let key = key(pair);
        let id = match &mut self.table {
            Table::Compact(t) => remove_from(t, key),
            Table::Wide(t) => remove_from(t, key),
        }?;
        self.len -= 1;
        Some(id)
    }

    /// Every held pair and its id (in slot order: the hash's, not the pairs').
    pub fn iter(&self) -> impl Iterator<Item = (Pair, u32)> + '_ {
        let entries: Box<dyn Iterator<Item = (u64, u32)> + '_> = match &self.table {
            Table::Compact(t) => Box::new(t.entries()),
            Table::Wide(t) => Box::new(t.entries()),
        };
        entries.map(|(key, id)| (((key >> 32) as u32, key as u32), id))
    }

    fn slots(&self) -> usize {
        match &self.table {
            Table::Compact(t) => t.0.len(),
            Table::Wide(t) => t.0.len(),
        }
    }

    /// Places every pair again in `slots` slots of layout `S` (a doubling, or the turn to
    /// wide slots).
    fn relayout<S: Layout>(&mut self, slots: usize)
    where
        Table: From<Slots<S>>,
    {
        let old = std::mem::replace(&mut self.table, Table::Compact(Slots(Vec::new())));
        self.table = match old {
            Table::Compact(t) => Slots::<S>::of(slots, t.entries()),
            Table::Wide(t) => Slots::<S>::of(slots, t.entries()),
        }
        .into();
    }
}

impl From<Slots<Compact>> for Table {
    fn from(slots: Slots<Compact>) -> Self {
        Table::Compact(slots)
    }
}

impl From<Slots<Wide>> for Table {
    fn from(slots: Slots<Wide>) -> Self {
        Table::Wide(slots)
    }
}

/// Removes `key` from `table`; returns its id if it was held.
fn remove_from<S: Layout>(table: &mut Slots<S>, key: u64) -> Option<u32> {
    let hole = table.find(key);
    let id = table.0[hole].id();
    if id == EMPTY {
        return None;
    }
    table.remove_at(hole);
    Some(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ahash::AHashMap;

    /// Inserts and removes at random against a map, through several doublings, with
    /// pairs that share a side (as a merge's do) so runs and wrap-around get exercised.
    /// From step `wide_from` on, pairs or ids come that only a wide slot holds (`big`:
    /// what grows past the compact bits), so the table turns wide in the middle.
    fn behaves_as_a_map(wide_from: usize, big: Big) {
        let mut table = PairIds::default();
        let mut want: AHashMap<Pair, u32> = AHashMap::new();
        let mut seed = 3u64;
        let mut next_id = 0;
        let mut turned = false;
        for step in 0..60_000 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = seed >> 20;
            let mut pair = ((r % 7) as u32 * 1000, ((r >> 8) % 3000) as u32);
            if step >= wide_from && big == Big::Token && r.is_multiple_of(5) {
                pair.1 += 1 << TOKEN_BITS;
            }
            if r.is_multiple_of(3) {
                assert_eq!(table.remove(pair), want.remove(&pair), "step {step}");
            } else {
                let id = table.get_or_insert(pair, || {
                    next_id += 1;
                    if step >= wide_from && big == Big::Id {
                        // From here on, ids past what a compact slot holds.
                        next_id = next_id.max((1 << ID_BITS) - 1);
                    }
                    next_id
                });
                assert_eq!(id, *want.entry(pair).or_insert(id), "step {step}");
            }
            // Compact until the first pair or id that does not fit, wide from then on.
            let wide = matches!(table.table, Table::Wide(_));
            assert!(!wide || step >= wide_from, "step {step}");
            assert!(wide || !turned, "step {step}: wide slots never turn compact again");
            turned |= wide;
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
        assert_eq!(table.get((1 << TOKEN_BITS, 0)), None);
        assert!(table.slots() > MIN_SLOTS);
        assert_eq!(turned, wide_from < 60_000);
    }

    #[derive(Clone, Copy, PartialEq)]
    enum Big {
        Token,
        Id,
    }

    #[test]
    fn compact_slots_behave_as_a_map() {
        behaves_as_a_map(usize::MAX, Big::Id);
    }

    #[test]
    fn a_table_turned_wide_by_a_large_id_behaves_as_a_map() {
        behaves_as_a_map(20_000, Big::Id);
    }

    #[test]
    fn a_table_turned_wide_by_a_large_token_behaves_as_a_map() {
        behaves_as_a_map(20_000, Big::Token);
    }

    /// The largest ids a compact slot holds come back as they went in; one more turns the
    /// table wide.
    #[test]
    fn compact_limits() {
        let top = (1 << TOKEN_BITS) - 1;
        let mut table = PairIds::default();
        assert_eq!(table.get_or_insert((top, top), || (1 << ID_BITS) - 2), (1 << ID_BITS) - 2);
        assert!(matches!(table.table, Table::Compact(_)));
        assert_eq!(table.iter().collect::<Vec<_>>(), [((top, top), (1 << ID_BITS) - 2)]);
        assert_eq!(table.get_or_insert((0, 0), || (1 << ID_BITS) - 1), (1 << ID_BITS) - 1);
        assert!(matches!(table.table, Table::Wide(_)));
        assert_eq!(table.get((top, top)), Some((1 << ID_BITS) - 2));
        assert_eq!(table.remove((0, 0)), Some((1 << ID_BITS) - 1));
        assert_eq!(table.get((0, 0)), None);
    }
}
