//! One shard of the word table: interned pieces and their counts, with no allocation per
//! word. Every word's bytes lie back to back in one arena, each after its length as a
//! varint; an open-addressing table (linear probing, at most 7/10 full) holds 16-byte
//! slots: where the word starts in the arena with a tag of its hash, and its count.
//! A word is hashed once per table it enters ([`hash`]), and the tag rules out nearly
//! every slot without reading the arena.

use super::varint::{put_varint, take_varint};

/// The hash of a word, with fixed keys: its top bits pick the shard, its low bits the
/// slot, bits 32.. the tag. The table's contents never depend on it (only the order of
/// slots, which every reader sorts away).
#[inline(always)]
pub fn hash(word: &[u8]) -> u64 {
    static HASHER: std::sync::OnceLock<ahash::RandomState> = std::sync::OnceLock::new();
    HASHER.get_or_init(|| ahash::RandomState::with_seeds(1, 2, 3, 4)).hash_one(word)
}

/// Bits of the hash kept in a slot to rule out other words without reading the arena.
const TAG_BITS: u32 = 24;
const TAG_MASK: u64 = (1 << TAG_BITS) - 1;
/// The arena may hold up to 2**40 - 2 bytes (the rest of a slot's key).
const MAX_ARENA: usize = (1 << (64 - TAG_BITS)) - 2;
/// Slots of a table's first allocation.
const MIN_SLOTS: usize = 16;

/// The bytes of one slot; [`super::budget::table_entry`] is derived from it.
pub const SLOT_BYTES: u64 = std::mem::size_of::<Slot>() as u64;

#[derive(Clone, Copy, Default)]
struct Slot {
    /// 0 for an empty slot; else `(start + 1) << TAG_BITS | tag`.
    key: u64,
    count: u64,
}

#[inline(always)]
fn tag(hash: u64) -> u64 {
    (hash >> 32) & TAG_MASK
}

/// Words -> counts (see the module comment).
#[derive(Default)]
pub struct PieceTable {
    /// Empty or a power of two long.
    slots: Vec<Slot>,
    /// Each word: its length as a varint, then its bytes.
    arena: Vec<u8>,
    /// Words held.
    len: usize,
}

impl std::fmt::Debug for PieceTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PieceTable({} words, {} arena bytes)", self.len, self.arena.len())
    }
}

impl PieceTable {
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

    /// The count of `word` (of hash `h`), inserted with count 0 if absent; and whether
    /// it was inserted.
    #[inline(always)]
    pub fn entry(&mut self, word: &[u8], h: u64) -> (&mut u64, bool) {
        if (self.len + 1) * 10 > self.slots.len() * 7 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let tag = tag(h);
        let mut i = (h as usize) & mask;
        loop {
            let key = self.slots[i].key;
            if key == 0 {
                break;
            }
            if key & TAG_MASK == tag && self.word_at((key >> TAG_BITS) as usize - 1) == word {
                return (&mut self.slots[i].count, false);
            }
            i = (i + 1) & mask;
        }
        let start = self.push_word(word);
        self.slots[i] = Slot { key: ((start as u64 + 1) << TAG_BITS) | tag, count: 0 };
        self.len += 1;
        (&mut self.slots[i].count, true)
    }

    /// Appends `word` to the arena; returns where it starts. The arena grows by half its
    /// size at a time (not doubling), so at most a third of it is spare.
    fn push_word(&mut self, word: &[u8]) -> usize {
        let start = self.arena.len();
        let need = word.len() + 10;
        if self.arena.capacity() - start < need {
            self.arena.reserve_exact(need.max(self.arena.capacity() / 2).max(256));
        }
        put_varint(&mut self.arena, word.len() as u64);
        self.arena.extend_from_slice(word);
        assert!(start <= MAX_ARENA, "a word-table shard holds over 1 TiB of words");
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
        let mask = n - 1;
        for slot in old.into_iter().filter(|s| s.key != 0) {
            let h = hash(self.word_at((slot.key >> TAG_BITS) as usize - 1));
            let mut i = (h as usize) & mask;
            while self.slots[i].key != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = slot;
        }
    }

    /// The words and their counts, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> + '_ {
        self.slots
            .iter()
            .filter(|s| s.key != 0)
            .map(|s| (self.word_at((s.key >> TAG_BITS) as usize - 1), s.count))
    }

    /// Keeps only the words for which `keep` holds, in a table sized for them (the slots
    /// at most 7/10 full, the arena exact).
    pub fn retain(&mut self, mut keep: impl FnMut(&[u8], u64) -> bool) {
        let kept: Vec<(usize, u64)> = self
            .slots
            .iter()
            .filter(|s| s.key != 0)
            .map(|s| ((s.key >> TAG_BITS) as usize - 1, s.count))
            .filter(|&(start, count)| keep(self.word_at(start), count))
            .collect();
        let bytes = kept.iter().map(|&(start, _)| self.entry_bytes(start)).sum();
        let mut table = PieceTable { slots: Vec::new(), arena: Vec::with_capacity(bytes), len: 0 };
        if !kept.is_empty() {
            table.slots = vec![Slot::default(); slots_for(kept.len())];
        }
        for (start, count) in kept {
            let word = self.word_at(start);
            let new_start = table.arena.len();
            table.arena.extend_from_slice(&self.arena[start..start + self.entry_bytes(start)]);
            let h = hash(word);
            let mask = table.slots.len() - 1;
            let mut i = (h as usize) & mask;
            while table.slots[i].key != 0 {
                i = (i + 1) & mask;
            }
            table.slots[i] = Slot { key: ((new_start as u64 + 1) << TAG_BITS) | tag(h), count };
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

/// The fewest slots (a power of two, at least [`MIN_SLOTS`]) that hold `n` words at most
/// 7/10 full.
fn slots_for(n: usize) -> usize {
    let mut slots = MIN_SLOTS;
    while n * 10 > slots * 7 {
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
