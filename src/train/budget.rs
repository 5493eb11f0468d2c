//! A memory budget for training: how the limit is split, what each structure is estimated
//! to cost, and the pruning rule that keeps the word table (and later the merge loop)
//! inside its share.
//!
//! Estimates are functions of the table's contents only (number of words and their
//! lengths), never of allocator state or hash-map capacity, so every pruning decision is
//! a function of the documents counted so far and the limit: the same for any thread
//! count or batching. Each constant is derived from a structure's layout (its size taken
//! from the structure itself) at its worst growth, and the whole was checked against
//! measured peak RSS (docs/design.md, "Memory budget"; `examples/budget_profile.rs`).

use super::word_hash::SHORT_MAX;
use crate::error::{Error, Result};

/// Memory the budget leaves to the interpreter, the loaded libraries, thread stacks and
/// allocator slack: data structures get `limit - RESERVED`.
pub const RESERVED: u64 = 48 << 20;

/// The smallest accepted limit (leaves the data structures 16 MiB).
pub const MIN_LIMIT: u64 = 64 << 20;

/// How a memory limit is spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The limit given, in bytes.
    pub limit: u64,
    /// At a checkpoint the word table is pruned when its estimate exceeds this...
    pub table_high: u64,
    /// ...down to at most this, so pruning is rare and keeps most of the table.
    pub table_low: u64,
    /// Checkpoints fall every this many bytes of input (documents, or pre-counted words).
    pub checkpoint_every: u64,
    /// Input bytes per batch handed to the counter (bounds batch and partial-table memory).
    pub batch_bytes: u64,
    /// The merge loop's estimate must stay under this (words are pruned before it starts).
    pub merge_bytes: u64,
    /// The most bytes of one document held at once without a point to cut it (a reader
    /// holding a document with no safe cut), and the longest word counted: either beyond
    /// this is refused with an error, since neither can be pruned.
    pub hold_bytes: u64,
}

impl Budget {
    pub fn new(limit: u64) -> Result<Self> {
        if limit < MIN_LIMIT {
            return Err(Error::InvalidConfig(format!(
                "memory_limit={limit} bytes is too small: it must be at least {MIN_LIMIT} bytes \
                 (64 MiB), of which {RESERVED} bytes (48 MiB) are left to the interpreter and \
                 libraries"
            )));
        }
        let avail = limit - RESERVED;
        // Between two checkpoints the table grows by at most a few times the input read
        // (a new word costs ~60 bytes for a piece of ~5-10 bytes); a checkpoint every
        // 1/128 of the budget keeps that growth small against the headroom above
        // `table_high`, and so does a batch of the same size for the per-chunk tables.
        let step = (avail / 128).clamp(64 << 10, 16 << 20);
        Ok(Self {
            limit,
            table_high: avail / 8 * 5,
            table_low: avail / 8 * 3,
            checkpoint_every: step,
            batch_bytes: step,
            merge_bytes: avail / 10 * 9,
            // A reader reads a quarter of this at a time, so a document it emits whole is at
            // most 1.25x this, held in a buffer that grew by doubling (2.5x) and copied
            // into a batch (1.25x): about 1/8 of `avail`, inside the room above
            // `table_high`.
            hold_bytes: avail / 32,
        })
    }
}

/// Returns free memory inside the allocator's heaps to the system (glibc's
/// `malloc_trim`). Pruning frees many small keys scattered through the heap; without
/// this they stay resident, and the merge loop's structures (large arrays that cannot
/// reuse them) would stack on top of the counting table's high-water mark.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: malloc_trim only releases unused pages; it is thread-safe (it takes
        // each arena's lock) and has no preconditions.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// What malloc (glibc, 64-bit) takes for `n` bytes: a 16-byte-aligned chunk with an
/// 8-byte header, at least 32 bytes.
pub const fn alloc_size(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let chunk = (n + 8 + 15) & !15;
    if chunk < 32 {
        32
    } else {
        chunk
    }
}

/// Slot bytes per word in the counting table (`pieces.rs`): a 16-byte slot at the lowest
/// load a table has right after it doubles (7/20), rounded up: never below the real size.
/// (A table rebuilt by pruning is sized to at most 7/10 full, so at least 7/20 too.)
const TABLE_SLOT: u64 = (super::pieces::SLOT_BYTES * 20).div_ceil(7);

/// Estimated bytes of one word of `len` bytes in the counting table: its slot, and, for a
/// word too long to be its own key (over [`SHORT_MAX`] bytes), its bytes after a varint
/// length in the arena, which grows by half at a time (so holds at most 3/2 of its
/// contents).
pub const fn table_entry(len: u64) -> u64 {
    if len <= SHORT_MAX as u64 {
        return TABLE_SLOT;
    }
    TABLE_SLOT + (3 * (len + varint_len(len))).div_ceil(2)
}

/// Bytes of `n` as a varint.
const fn varint_len(mut n: u64) -> u64 {
    let mut bytes = 1;
    while n >= 0x80 {
        n >>= 7;
        bytes += 1;
    }
    bytes
}

/// Estimated bytes of one word of `len` bytes from the hand-over to the end of the merge
/// loop: the larger of its cost while the table is handed over and its cost in the loop
/// (a sum of per-word maxima bounds the maximum of the sums). Counted from the layouts;
/// only the distinct pairs per word are measured ([`PAIRS_PER_WORD`]).
pub const fn merge_entry(len: u64) -> u64 {
    max(hand_over(len), merge_loop(len))
}

/// A word while the table becomes the loop's arena (`table.rs`, `warm.rs`), at the worst
/// of its steps: the table's shards are freed as the sorted list is filled (table +
/// list), then the arena is filled from the list (list + arena); under a warm start the
/// list is encoded into an exact `Vec<u32>` per word (list + ids), freed before the arena
/// is filled from them (ids + arena).
const fn hand_over(len: u64) -> u64 {
    let list = SORTED_ENTRY + len;
    let arena = ARENA_ENTRY + 4 * len;
    let ids = WARM_ENTRY + alloc_size(4 * len);
    max(max(table_entry(len) + list, list + arena), max(list + ids, ids + arena))
}

/// A word in the merge loop (`arena.rs`, `pairs.rs`, `pair_ids.rs`, `candidate.rs`,
/// `long.rs`): its arena entry and 4 bytes per token (at most); up to `len - 1` occurrence-list
/// entries (one per distinct pair in it, [`LIST_BYTES`] each); its share of the distinct
/// pairs ([`PAIR_BYTES`] each): at most `len - 1`, allowed [`PAIRS_PER_WORD`]; and a long
/// word's index by position ([`LONG_TOKEN`] per token).
const fn merge_loop(len: u64) -> u64 {
    let pairs = len.saturating_sub(1);
    let pair_share = if pairs == 0 {
        0
    } else if pairs == 1 {
        PAIR_BYTES
    } else {
        PAIR_BYTES * PAIRS_PER_WORD.0 / PAIRS_PER_WORD.1
    };
    let long = if len >= super::long::LONG_WORD as u64 { LONG_TOKEN * len } else { 0 };
    ARENA_ENTRY + 4 * len + LIST_BYTES * pairs + pair_share + long
}

const fn max(a: u64, b: u64) -> u64 {
    if a > b {
        a
    } else {
        b
    }
}

/// A `SortedWords` entry (start, count, length); its bytes follow in one buffer (`len`
/// bytes). Both are allocated at their exact sizes.
const SORTED_ENTRY: u64 = super::sorted_words::ENTRY_BYTES;

/// A `WordArena` entry (start, count, length, packed); its tokens are 4 bytes each in one
/// vector (2 when every id fits 16 bits, which counting does not know: the estimate
/// takes the wider), both allocated at their exact sizes.
const ARENA_ENTRY: u64 = super::arena::ENTRY_BYTES;

/// Under a warm start, a word's `(Vec<u32>, u64)` in the list of encoded words (its ids'
/// chunk is counted apart, by [`alloc_size`]).
const WARM_ENTRY: u64 = super::warm::ENCODED_ENTRY;

/// One occurrence-list entry (`pairs.rs`): a 4-byte word id, in a list that spills past
/// its inline entries into a vector grown by doubling (2x); a merge appends the word to
/// the lists of the pairs it creates while the word's entries in the lists of the pairs
/// it lost stay, stale, until those lists are taken (one stale entry per live one
/// allowed: 46% of the words a merge visits were stale on 30 MB of English). 4 x 2 x 2.
const LIST_BYTES: u64 = 4 * 2 * 2;

/// One distinct pair (`pairs.rs`, `pair_ids.rs`, `candidate.rs`): its slot in the pair
/// table at load 7/20 or more (at most 7/10 full, grown by doubling), its count, word
/// and list header in vectors grown by doubling (2x), and its heap candidate in a
/// vector grown by doubling (2x): 12 x 20/7 + 32 x 2 + 16 x 2 = 130.3, rounded up.
const PAIR_BYTES: u64 = (super::pair_ids::SLOT_BYTES * 20).div_ceil(7)
    + 2 * super::pairs::ID_BYTES
    + 2 * super::candidate::CANDIDATE_BYTES;

/// Distinct pairs allowed per word of three or more bytes, as a fraction: measured at
/// vocabulary 32,768 on the shared corpora, the loop holds 0.95-1.15 distinct pairs per
/// word of two or more bytes at its peak (docs/design.md, "Memory budget"). An empirical
/// figure, not a bound: a much larger vocabulary creates more pairs per word.
const PAIRS_PER_WORD: (u64, u64) = (6, 5);

/// Per token of a long word (`long.rs`): its token and its next and previous positions
/// (12 bytes in exact vectors); its place among its pair's positions (4 bytes in a
/// vector grown by doubling, and as much again for the positions later merges add: 16);
/// and, at worst (every pair in the word distinct), one entry of the word's pair ->
/// positions map (a pair and a `Vec` header, 32 bytes at a hash map's lowest load after
/// growing, 7/16, 74 bytes, and the positions' allocation header, 8: 82).
const LONG_TOKEN: u64 = 12 + 16 + 82;

/// The entries of a table summarized by count, to pick a pruning threshold: for each
/// count, the estimated bytes of the words with that count.
#[derive(Debug, Default)]
pub struct CostByCount {
    /// `small[c]` for counts below `SMALL`.
    small: Vec<u64>,
    /// (count, bytes) for larger counts (few words).
    large: Vec<(u64, u64)>,
    /// The bytes of all entries.
    total: u64,
}

const SMALL: u64 = 1 << 16;

impl CostByCount {
    pub fn add(&mut self, count: u64, bytes: u64) {
        self.total += bytes;
        if count < SMALL {
            let c = count as usize;
            if self.small.len() <= c {
                self.small.resize(c + 1, 0);
            }
            self.small[c] += bytes;
        } else {
            self.large.push((count, bytes));
        }
    }

    pub fn merge(mut self, other: CostByCount) -> CostByCount {
        if self.small.len() < other.small.len() {
            self.small.resize(other.small.len(), 0);
        }
        for (mine, theirs) in self.small.iter_mut().zip(other.small) {
            *mine += theirs;
        }
        self.large.extend(other.large);
        self.total += other.total;
        self
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// The smallest count threshold `t` such that the words with counts above `t` cost at
    /// most `target`, and what those words cost (`(0, total)` when everything fits).
    pub fn threshold(mut self, target: u64) -> (u64, u64) {
        let mut left = self.total;
        if left <= target {
            return (0, left);
        }
        for (count, &bytes) in self.small.iter().enumerate() {
            left -= bytes;
            if left <= target {
                return (count as u64, left);
            }
        }
        self.large.sort_unstable();
        let mut i = 0;
        while i < self.large.len() {
            let count = self.large[i].0;
            while i < self.large.len() && self.large[i].0 == count {
                left -= self.large[i].1;
                i += 1;
            }
            if left <= target {
                return (count, left);
            }
        }
        (u64::MAX, 0)
    }
}

/// Words at the threshold count are kept by a fixed hash of their bytes: those whose
/// hash falls in the first `k` of `TIE_BUCKETS` buckets, with `k` as large as the room
/// left allows. So the table is filled to its target instead of losing every word of
/// that count, and which words stay depends only on their bytes.
pub const TIE_BUCKETS: usize = 256;

/// How many tie buckets fit in `room`, given each bucket's cost.
pub fn tie_buckets(costs: &[u64; TIE_BUCKETS], room: u64) -> usize {
    let mut used = 0u64;
    for (k, &c) in costs.iter().enumerate() {
        used += c;
        if used > room {
            return k;
        }
    }
    TIE_BUCKETS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_checked_and_split() {
        assert!(Budget::new(MIN_LIMIT - 1).is_err());
        let b = Budget::new(1 << 30).unwrap();
        assert!(b.table_low < b.table_high && b.table_high < b.merge_bytes);
        assert!(b.merge_bytes + RESERVED <= b.limit);
        assert_eq!(b.batch_bytes, b.checkpoint_every);
        assert!(
            b.checkpoint_every <= b.hold_bytes
                && 4 * b.hold_bytes <= b.limit - RESERVED - b.table_high
        );
    }

    #[test]
    fn table_entries() {
        // A 16-byte slot at load 7/20; a word over 7 bytes adds 3/2 of (varint + bytes).
        assert_eq!(TABLE_SLOT, 46);
        assert_eq!((table_entry(0), table_entry(1), table_entry(7)), (46, 46, 46));
        assert_eq!(table_entry(8), 46 + 14);
        assert_eq!(table_entry(127), 46 + 192);
        assert_eq!(table_entry(128), 46 + 195);
    }

    #[test]
    fn merge_entries_follow_the_layouts() {
        // The sizes the constants are derived from (the reference in tests/reference.py
        // spells the same figures out).
        assert_eq!((SORTED_ENTRY, ARENA_ENTRY, WARM_ENTRY, LIST_BYTES), (24, 20, 32, 16));
        assert_eq!(PAIR_BYTES, 35 + 2 * 32 + 2 * 16);
        assert_eq!(LONG_TOKEN, 110);
        // One byte: no pair; the warm start's list + ids (25 + 32 + 32) is the worst step.
        assert_eq!(merge_entry(1), 89);
        // Two bytes: arena 28, one list entry, one whole pair.
        assert_eq!(merge_entry(2), 28 + 16 + 131);
        // Eight bytes: arena 52, 7 list entries, 6/5 of a pair.
        assert_eq!(merge_entry(8), 52 + 7 * 16 + 157);
        // A long word adds its index by position.
        assert_eq!(merge_entry(256), 20 + 1024 + 255 * 16 + 157 + 256 * 110);
    }

    #[test]
    fn merge_entries_bound_the_hand_over_and_the_table() {
        // Whatever the length, a word costs the merge loop at least what it costs in each
        // step of the hand-over, the counting table among them: pruning for the loop also
        // bounds the table and the sorted list held next to it.
        for len in (0..600).chain([1 << 12, 1 << 20]) {
            let list = SORTED_ENTRY + len;
            let arena = ARENA_ENTRY + 4 * len;
            let ids = WARM_ENTRY + alloc_size(4 * len);
            for step in [table_entry(len) + list, list + arena, list + ids, ids + arena] {
                assert!(merge_entry(len) >= step, "{len}");
            }
            assert!(merge_entry(len) >= ARENA_ENTRY + 4 * len + LIST_BYTES * len.saturating_sub(1));
        }
    }

    #[test]
    fn malloc_chunks() {
        assert_eq!(alloc_size(0), 0);
        assert_eq!(alloc_size(1), 32);
        assert_eq!(alloc_size(24), 32);
        assert_eq!(alloc_size(25), 48);
    }

    #[test]
    fn threshold_keeps_the_most_frequent() {
        let mut h = CostByCount::default();
        for (count, bytes) in [(1, 50), (1, 50), (2, 30), (7, 20), (1 << 20, 10)] {
            h.add(count, bytes);
        }
        assert_eq!(h.total(), 160);
        let t = |target| {
            let mut c = CostByCount::default();
            for (count, bytes) in [(1, 50), (1, 50), (2, 30), (7, 20), (1 << 20, 10)] {
                c.add(count, bytes);
            }
            c.threshold(target)
        };
        assert_eq!(t(160), (0, 160));
        assert_eq!(t(60), (1, 60));
        assert_eq!(t(30), (2, 30));
        assert_eq!(t(10), (7, 10));
        assert_eq!(t(9), (1 << 20, 0));
        assert_eq!(h.threshold(0), (1 << 20, 0));
    }

    #[test]
    fn tie_buckets_fill_the_room() {
        let mut costs = [10u64; TIE_BUCKETS];
        costs[3] = 100;
        assert_eq!(tie_buckets(&costs, 0), 0);
        assert_eq!(tie_buckets(&costs, 35), 3);
        assert_eq!(tie_buckets(&costs, 130), 4);
        assert_eq!(tie_buckets(&costs, u64::MAX), TIE_BUCKETS);
    }
}
