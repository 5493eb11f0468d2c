//! One shard of the word table: interned pieces and their counts, with no allocation per
//! word. An open-addressing table (linear probing, at most 7/10 full) holds 16-byte
//! slots: a key and the word's count. A word of up to 7 bytes (most pieces) is its own
//! key, its bytes in place: found by one comparison of the key, without reading anything
//! else. A longer word's bytes lie back to back with the others' in one arena, each after
//! its length as a varint; its key is where it starts with a tag of its hash. A piece is
//! hashed once ([`hash`]); the tag (the hash's low bits) rules out nearly every slot
//! without reading the arena, and places the word again when its table grows, is pruned
//! or is absorbed into another, without hashing it again.

use super::varint::{put_varint, take_varint};
use super::word_hash::{hash, hash_short, pack, same, SHORT, SHORT_MAX};

/// Bits of the hash kept in a slot to rule out other words without reading the arena.
const TAG_BITS: u32 = 24;
const TAG_MASK: u64 = (1 << TAG_BITS) - 1;
/// The arena may hold up to 2**39 - 2 bytes (the rest of a slot's key, below [`SHORT`]).
const MAX_ARENA: usize = (1 << (63 - TAG_BITS)) - 2;
/// Slots of a table's first allocation.
const MIN_SLOTS: usize = 64;

/// The bytes of one slot; [`super::budget::table_entry`] is derived from it.
pub const SLOT_BYTES: u64 = std::mem::size_of::<Slot>() as u64;

#[derive(Clone, Copy, Default)]
struct Slot {
    /// The key, little-endian (so a short word's bytes are its first bytes in memory,
    /// read in place): 0 for an empty slot; a short word's [`pack`]; else
    /// `(start + 1) << TAG_BITS | tag` for the word starting at `start` in the arena.
    key: [u8; 8],
    count: u64,
}

impl Slot {
    #[inline(always)]
    fn key(&self) -> u64 {
        u64::from_le_bytes(self.key)
    }

    /// The short word kept in the key, if it is one.
    #[inline(always)]
    fn short_word(&self) -> Option<&[u8]> {
        let last = self.key[7];
        (last >= 0x80).then(|| &self.key[..usize::from(last & 0x7f)])
    }
}

/// Where the arena word of `key` starts.
#[inline(always)]
fn start_of(key: u64) -> usize {
    (key >> TAG_BITS) as usize - 1
}

#[inline(always)]
fn tag(hash: u64) -> u64 {
    hash & TAG_MASK
}

/// Slots a table may have while a word's slot is found from its tag alone: the tag is
/// the hash's low bits, which are all the slot index takes up to this size, so a table
/// is grown or rebuilt without hashing its words again.
/// (Lower in tests, so the path that hashes again is exercised by small tables.)
const TAG_SLOTS: usize = if cfg!(test) { 1 << 10 } else { 1 << TAG_BITS };

/// Words -> counts (see the module comment).
#[derive(Default)]
pub struct PieceTable {
    /// Empty or a power of two long.
    slots: Vec<Slot>,
    /// Each word: its length as a varint, then its bytes.
    arena: Vec<u8>,
    /// Words held.
    len: usize,
    /// The slots are doubled before a word is added to a table holding this many (7/10
    /// of the slots; 0 while there are none).
    grow_at: usize,
}

impl std::fmt::Debug for PieceTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PieceTable({} words, {} arena bytes)", self.len, self.arena.len())
    }
}

impl PieceTable {
    /// An empty table with slots for `words` words (none below the first allocation's
    /// 7/10 of [`MIN_SLOTS`]: it is made at the first word).
    pub fn with_capacity(words: usize) -> Self {
        if words <= grow_at(MIN_SLOTS) {
            return Self::default();
        }
        let n = slots_for(words);
        Self { slots: vec![Slot::default(); n], arena: Vec::new(), len: 0, grow_at: grow_at(n) }
    }

    /// Whether the slots are at least 7/20 full, as a table is right after doubling
    /// (what the memory budget's estimate assumes of the run's table).
    pub fn is_dense(&self) -> bool {
        self.len * 20 >= self.slots.len() * 7
    }

    /// Words held.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The word starting at `start` in the arena.
    #[inline(always)]
    fn word_at(&self, start: usize) -> &[u8] {
        // Nearly every word is shorter than 128 bytes: a one-byte length.
        let first = self.arena[start];
        if first < 0x80 {
            return &self.arena[start + 1..start + 1 + first as usize];
        }
        let mut rest = &self.arena[start..];
        let len = take_varint(&mut rest).expect("the arena holds whole words") as usize;
        &rest[..len]
    }

    /// The bytes of the word in `slot` (not empty).
    #[inline(always)]
    fn word_of<'a>(&'a self, slot: &'a Slot) -> &'a [u8] {
        match slot.short_word() {
            Some(word) => word,
            None => self.word_at(start_of(slot.key())),
        }
    }

    /// The count of `word` (of hash `h`), inserted with count 0 if absent; and whether
    /// it was inserted.
    #[inline(always)]
    pub fn entry(&mut self, word: &[u8], h: u64) -> (&mut u64, bool) {
        if self.len >= self.grow_at {
            self.grow();
        }
        if word.len() <= SHORT_MAX {
            return self.entry_short(pack(word), h);
        }
        self.entry_placed(word, h, tag(h))
    }

    /// Asks for the home slot of a word of hash `h` to be fetched into the cache.
    #[inline(always)]
    pub fn prefetch_slot(&self, h: u64) {
        let mask = self.slots.len().wrapping_sub(1);
        crate::prefetch::prefetch(self.slots.as_ptr().wrapping_add((h as usize) & mask));
    }

    /// Adds `n` occurrences of the short word of key `key` ([`pack`]) and hash `h`
    /// ([`hash_short`] of the key).
    #[inline(always)]
    pub fn add_short(&mut self, key: u64, h: u64, n: u64) {
        if self.len >= self.grow_at {
            self.grow();
        }
        *self.entry_short(key, h).0 += n;
    }

    /// [`PieceTable::entry`] for a short word, by its key, once the table has room.
    #[inline(always)]
    fn entry_short(&mut self, key: u64, h: u64) -> (&mut u64, bool) {
        let mask = self.slots.len() - 1;
        let mut i = (h as usize) & mask;
        loop {
            let here = self.slots[i].key();
            if here == key {
                return (&mut self.slots[i].count, false);
            }
            if here == 0 {
                break;
            }
            i = (i + 1) & mask;
        }
        self.slots[i] = Slot { key: key.to_le_bytes(), count: 0 };
        self.len += 1;
        (&mut self.slots[i].count, true)
    }

    /// [`PieceTable::entry`] for a word longer than [`SHORT_MAX`] once the table has room,
    /// with the hash bits `h` that place the word (its hash, or its tag up to
    /// [`TAG_SLOTS`]).
    #[inline(always)]
    fn entry_placed(&mut self, word: &[u8], h: u64, tag: u64) -> (&mut u64, bool) {
        let mask = self.slots.len() - 1;
        let mut i = (h as usize) & mask;
        loop {
            let key = self.slots[i].key();
            if key == 0 {
                break;
            }
            if key & TAG_MASK == tag && key < SHORT && same(self.word_at(start_of(key)), word) {
                return (&mut self.slots[i].count, false);
            }
            i = (i + 1) & mask;
        }
        let start = self.push_word(word);
        let key = ((start as u64 + 1) << TAG_BITS) | tag;
        self.slots[i] = Slot { key: key.to_le_bytes(), count: 0 };
        self.len += 1;
        (&mut self.slots[i].count, true)
    }

    /// Adds the counts of `other` (a table of the same hash), placing its words by their
    /// tags where the table is small enough (no hashing); calls `new` with each word that
    /// was not here yet.
    pub fn absorb(&mut self, other: &PieceTable, mut new: impl FnMut(&[u8])) {
        for slot in other.slots.iter().filter(|s| s.key() != 0) {
            if self.len >= self.grow_at {
                self.grow();
            }
            let (word, (count, added)) = match slot.short_word() {
                // A short word is hashed again from its key, reading nothing more.
                Some(word) => (word, self.entry_short(slot.key(), hash_short(slot.key()))),
                None => {
                    let word = other.word_at(start_of(slot.key()));
                    let tag = slot.key() & TAG_MASK;
                    let h = if self.slots.len() <= TAG_SLOTS { tag } else { hash(word) };
                    (word, self.entry_placed(word, h, tag))
                }
            };
            // Cannot overflow: counted occurrences are bounded by the bytes of real input
            // (pre-counted words go through `WordTable::add`, which checks).
            *count += slot.count;
            if added {
                new(word);
            }
        }
    }

    /// Appends `word` to the arena; returns where it starts. The arena grows by half its
    /// size at a time (not doubling), so at most a third of it is spare.
    fn push_word(&mut self, word: &[u8]) -> usize {
        let start = self.arena.len();
        let need = word.len() + 10;
        if self.arena.capacity() - start < need {
            self.arena.reserve_exact(need.max(self.arena.capacity() / 2).max(256));
        }
        // Nearly every word is shorter than 128 bytes: a one-byte length, written inline.
        if word.len() < 0x80 {
            self.arena.push(word.len() as u8);
        } else {
            put_varint(&mut self.arena, word.len() as u64);
        }
        self.arena.extend_from_slice(word);
        assert!(start <= MAX_ARENA, "a word-table shard holds over 512 GiB of words");
        start
    }

    /// Doubles the slots, placing every word again by its hash.
    #[cold]
    fn grow(&mut self) {
        let slots = (self.slots.len() * 2).max(MIN_SLOTS);
        self.place_all(slots);
    }

    /// Replaces the slots by `n` (a power of two) slots holding the same words.
    fn place_all(&mut self, n: usize) {
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); n]);
        self.grow_at = grow_at(n);
        let mask = n - 1;
        for slot in old.into_iter().filter(|s| s.key() != 0) {
            let h = self.home(&slot, n);
            let mut i = (h as usize) & mask;
            while self.slots[i].key() != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = slot;
        }
    }

    /// The hash bits that place the word of `slot` in a table of `slots` slots: a long
    /// word's tag up to [`TAG_SLOTS`], else the word's hash again.
    #[inline(always)]
    fn home(&self, slot: &Slot, slots: usize) -> u64 {
        match slot.short_word() {
            Some(_) => hash_short(slot.key()),
            None if slots <= TAG_SLOTS => slot.key() & TAG_MASK,
            None => hash(self.word_at(start_of(slot.key()))),
        }
    }

    /// The words and their counts, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> + '_ {
        self.slots.iter().filter(|s| s.key() != 0).map(|s| (self.word_of(s), s.count))
    }

    /// Keeps only the words for which `keep` holds, in a table sized for them (the slots
    /// at most 7/10 full, the arena exact).
    pub fn retain(&mut self, mut keep: impl FnMut(&[u8], u64) -> bool) {
        let kept: Vec<Slot> = self
            .slots
            .iter()
            .filter(|s| s.key() != 0 && keep(self.word_of(s), s.count))
            .copied()
            .collect();
        let arena_words = kept.iter().filter(|s| s.short_word().is_none());
        let bytes = arena_words.map(|s| self.entry_bytes(start_of(s.key()))).sum();
        let mut table =
            PieceTable { slots: Vec::new(), arena: Vec::with_capacity(bytes), len: 0, grow_at: 0 };
        if !kept.is_empty() {
            let n = slots_for(kept.len());
            table.slots = vec![Slot::default(); n];
            table.grow_at = grow_at(n);
        }
        for mut slot in kept {
            let mask = table.slots.len() - 1;
            let mut i = (self.home(&slot, table.slots.len()) as usize) & mask;
            while table.slots[i].key() != 0 {
                i = (i + 1) & mask;
            }
            if slot.short_word().is_none() {
                let start = start_of(slot.key());
                let new_start = table.arena.len();
                table.arena.extend_from_slice(&self.arena[start..start + self.entry_bytes(start)]);
                let key = ((new_start as u64 + 1) << TAG_BITS) | (slot.key() & TAG_MASK);
                slot.key = key.to_le_bytes();
            }
            table.slots[i] = slot;
            table.len += 1;
        }
        *self = table;
    }

    /// The arena bytes of the word starting at `start` (length prefix and bytes).
    fn entry_bytes(&self, start: usize) -> usize {
        let mut rest = &self.arena[start..];
        let len = take_varint(&mut rest).expect("the arena holds whole words") as usize;
        self.arena.len() - start - rest.len() + len
    }
}

/// Words a table of `slots` slots holds before it doubles: as many as keep it at most 7/10
/// full.
fn grow_at(slots: usize) -> usize {
    slots * 7 / 10
}

/// The fewest slots (a power of two, at least [`MIN_SLOTS`]) that hold `n` words at most
/// 7/10 full.
fn slots_for(n: usize) -> usize {
    let mut slots = MIN_SLOTS;
    while n > grow_at(slots) {
        slots *= 2;
    }
    slots
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(t: &mut PieceTable, w: &[u8], n: u64) -> bool {
        let (c, new) = t.entry(w, hash(w));
        *c += n;
        new
    }

    fn sorted(t: &PieceTable) -> Vec<(Vec<u8>, u64)> {
        let mut v: Vec<_> = t.iter().map(|(w, c)| (w.to_vec(), c)).collect();
        v.sort();
        v
    }

    /// Bytes the table has allocated (capacities, not lengths).
    fn allocated(t: &PieceTable) -> u64 {
        (t.slots.capacity() as u64) * SLOT_BYTES + t.arena.capacity() as u64
    }

    #[test]
    fn the_budgets_estimate_bounds_what_the_table_allocates() {
        use crate::train::budget::table_entry;
        // Past a table's first allocations (64 slots, a 256-byte arena), what it holds
        // never exceeds the estimate, after every word (right after each doubling too) and
        // after pruning; words of 1-7 bytes (in their slots), 8-127 and 128-300 (a two-byte
        // length), one in four of them long.
        let first = MIN_SLOTS as u64 * SLOT_BYTES + 256;
        let mut t = PieceTable::default();
        let mut estimate = 0;
        for i in 0..40_000u64 {
            let len = match i % 4 {
                0 => 1 + i % 7,
                1 | 2 => 8 + i % 120,
                _ => 128 + i % 173,
            } as usize;
            let mut w = vec![b'a' + (i % 26) as u8; len];
            w[..8.min(len)].copy_from_slice(&i.to_le_bytes()[..8.min(len)]);
            if add(&mut t, &w, 1) {
                estimate += table_entry(len as u64);
            }
            assert!(allocated(&t) <= estimate + first, "{i}: {} > {estimate}", allocated(&t));
        }
        assert!(t.len() > 30_000, "{}", t.len());
        let mut kept = 0;
        t.retain(|w, _| {
            let keep = w[0] % 3 == 0;
            kept += if keep { table_entry(w.len() as u64) } else { 0 };
            keep
        });
        assert!(allocated(&t) <= kept + first, "{} > {kept}", allocated(&t));
    }

    #[test]
    fn counts_survive_growth_and_retain() {
        let mut t = PieceTable::default();
        let words: Vec<Vec<u8>> = (0..5000u32)
            .map(|i| {
                if i % 7 == 0 {
                    vec![b'x'; 200 + i as usize % 50]
                } else {
                    i.to_string().into_bytes()
                }
            })
            .collect();
        let mut want = std::collections::BTreeMap::new();
        for (i, w) in words.iter().enumerate() {
            for _ in 0..(i % 3 + 1) {
                add(&mut t, w, 1);
                *want.entry(w.clone()).or_insert(0u64) += 1;
            }
        }
        assert_eq!(t.len(), want.len());
        assert_eq!(sorted(&t), want.clone().into_iter().collect::<Vec<_>>());
        assert!(t.len() * 10 <= t.slots.len() * 7);
        t.retain(|_, c| c >= 2);
        want.retain(|_, c| *c >= 2);
        assert_eq!(sorted(&t), want.clone().into_iter().collect::<Vec<_>>());
        assert_eq!(t.len(), want.len());
        assert_eq!(t.slots.len(), slots_for(want.len()));
        // Still a working table after retain.
        assert!(!add(&mut t, b"11", 5));
        assert!(add(&mut t, b"fresh", 1));
        assert_eq!(t.len(), want.len() + 1);
    }

    /// Words on both sides of the short-word limit, with every byte value (zeros and
    /// bytes of 0x80 and above included, which a key's length byte must not be taken for).
    #[test]
    fn short_and_arena_words_are_told_apart() {
        let mut words = std::collections::BTreeSet::new();
        for len in 0..=12usize {
            for v in 0..=255u8 {
                words.insert(vec![v; len]);
                let mut w: Vec<u8> = (0..len as u8).map(|i| i.wrapping_mul(97) ^ v).collect();
                words.insert(w.clone());
                if len > 0 {
                    w[len - 1] = 0x80 | (len as u8);
                    words.insert(w);
                }
            }
        }
        let mut t = PieceTable::default();
        for (i, w) in words.iter().enumerate() {
            assert!(add(&mut t, w, i as u64 + 1), "{w:?} added once");
        }
        for (i, w) in words.iter().enumerate() {
            assert!(!add(&mut t, w, i as u64 + 1), "{w:?} found again");
        }
        let want: Vec<(Vec<u8>, u64)> =
            words.iter().enumerate().map(|(i, w)| (w.clone(), 2 * (i as u64 + 1))).collect();
        assert_eq!(sorted(&t), want);
        // Only the long words take arena bytes (a length byte and the bytes).
        let long: usize = words.iter().filter(|w| w.len() > SHORT_MAX).map(|w| w.len() + 1).sum();
        assert_eq!(t.arena.len(), long);
        t.retain(|w, _| w.len() % 2 == 0);
        let even: Vec<_> = want.into_iter().filter(|(w, _)| w.len() % 2 == 0).collect();
        assert_eq!(sorted(&t), even);
    }

    #[test]
    fn absorbing_adds_counts_placed_by_tag_or_by_hash() {
        // Tables below and above TAG_SLOTS (1,024 slots in tests) on both sides.
        for (mine, theirs) in [(50u32, 60u32), (50, 3000), (3000, 50), (3000, 4000)] {
            let (mut a, mut b) = (PieceTable::default(), PieceTable::default());
            let mut want = std::collections::BTreeMap::new();
            for i in 0..mine {
                let w = format!("w{i}").into_bytes();
                add(&mut a, &w, u64::from(i % 5 + 1));
                *want.entry(w).or_insert(0) += u64::from(i % 5 + 1);
            }
            for i in mine / 2..mine / 2 + theirs {
                let w = format!("w{i}").into_bytes();
                add(&mut b, &w, 2);
                *want.entry(w).or_insert(0) += 2;
            }
            let mut new = 0;
            a.absorb(&b, |w| {
                assert!(!w.is_empty());
                new += 1;
            });
            assert_eq!(new, want.len() - mine as usize);
            assert_eq!(sorted(&a), want.into_iter().collect::<Vec<_>>());
            // Each word is found again where it was placed.
            for (w, _) in sorted(&b) {
                assert!(!add(&mut a, &w, 0));
            }
        }
    }

    #[test]
    fn a_table_sized_ahead_counts_the_same() {
        let words: Vec<Vec<u8>> =
            (0..3000u32).map(|i| format!("w{}", i % 1700).into_bytes()).collect();
        let (mut grown, mut sized) = (PieceTable::default(), PieceTable::with_capacity(5000));
        assert!(sized.is_empty() && !sized.is_dense(), "room for 5,000, none held");
        for w in &words {
            assert_eq!(add(&mut grown, w, 1), add(&mut sized, w, 1), "{w:?}");
        }
        assert_eq!(sorted(&grown), sorted(&sized));
        assert!(grown.is_dense() && !sized.is_dense());
        assert_eq!(sized.slots.len(), slots_for(5000), "sized once, never grown");
        assert_eq!(PieceTable::with_capacity(10).slots.len(), 0, "small: made at the first word");
    }

    #[test]
    fn empty_retain_and_lookup() {
        let mut t = PieceTable::default();
        assert!(t.is_empty());
        t.retain(|_, _| true);
        assert!(add(&mut t, b"a", 1));
        t.retain(|_, _| false);
        assert!(t.is_empty() && t.iter().next().is_none());
        assert!(add(&mut t, b"a", 1));
        assert_eq!(sorted(&t), vec![(b"a".to_vec(), 1)]);
    }
}
