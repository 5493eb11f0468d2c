//! The word table: word bytes -> number of occurrences, split into shards by a fixed hash
//! of the word so a batch's partial counts fold in on all threads at once (each thread
//! owns whole shards), with a running estimate of its memory. Each shard is a
//! [`PieceTable`]: the words interned in one arena, no allocation per word.

use rayon::prelude::*;
use rayon::ThreadPool;

use super::budget;
use super::hot::HotCounts;
use super::hot_long::{Displaced, HotLongs};
use super::pieces::PieceTable;
use super::sorted_words::SortedWords;
use super::word_hash::{hash, hash_short};
use crate::error::{Error, Result};
use crate::parallel;

/// Shards of the table (a power of two).
const SHARDS: usize = 64;

/// The shard of a word of hash `h`: its top bits (the slot within a shard takes the low
/// ones), so a word always lands in one shard.
#[inline(always)]
pub(super) fn shard_of(h: u64) -> usize {
    (h >> (64 - SHARDS.trailing_zeros())) as usize
}

fn empty_shards() -> Vec<PieceTable> {
    (0..SHARDS).map(|_| PieceTable::default()).collect()
}

/// The counts of one worker's share of a batch, sharded like the table they fold into.
/// A word's count is its count in `shards` plus, for a short word, its count in `hot`.
pub struct Partial {
    /// One table per shard of the table (an array: a shard index needs no bounds check).
    shards: [PieceTable; SHARDS],
    /// Recent short words counted by a [`CountSink`](super::count_sink::CountSink), moved
    /// into `shards` when displaced, and all at once by [`Partial::distinct`] or the fold.
    hot: HotCounts,
    /// Recent words of 8 to 16 bytes, moved into `shards` likewise.
    hot_longs: HotLongs,
    /// What goes to the tables, queued by a [`CountSink`](super::count_sink::CountSink).
    queued: Box<Queued>,
}

impl Default for Partial {
    fn default() -> Self {
        Self {
            shards: std::array::from_fn(|_| PieceTable::default()),
            hot: HotCounts::default(),
            hot_longs: HotLongs::default(),
            queued: Box::default(),
        }
    }
}

impl Partial {
    /// Partial counts with room for about `words` distinct words, so the shards do not
    /// double their way up from the first allocation (each doubling places every word
    /// again).
    pub fn with_capacity(words: usize) -> Self {
        let per_shard = words / SHARDS;
        Self {
            shards: std::array::from_fn(|_| PieceTable::with_capacity(per_shard)),
            hot: HotCounts::default(),
            hot_longs: HotLongs::default(),
            queued: Box::default(),
        }
    }

    /// Distinct words held (the hot counts are moved into the shards first, so only
    /// call it once every piece is added).
    pub fn distinct(&mut self) -> usize {
        self.spill();
        self.shards.iter().map(PieceTable::len).sum()
    }

    /// Moves the counts in `hot` and `hot_longs` into the shards.
    fn spill(&mut self) {
        for (key, n) in self.hot.take_all() {
            let h = hash_short(key);
            self.shards[shard_of(h)].add_short(key, h, n);
        }
        for word in self.hot_longs.take_all() {
            *self.shards[shard_of(word.hash)].entry(word.word(), word.hash).0 += word.count;
        }
    }

    /// Counts one occurrence of `piece`, hashing it once for shard and slot.
    #[inline(always)]
    pub fn add_one(&mut self, piece: &[u8]) {
        let h = hash(piece);
        *self.shards[shard_of(h)].entry(piece, h).0 += 1;
    }

    /// The hot slots and the queue for the tables, for a
    /// [`CountSink`](super::count_sink::CountSink).
    #[inline(always)]
    pub(super) fn hot_and_queue(&mut self) -> (&mut HotCounts, &mut Queued) {
        (&mut self.hot, &mut self.queued)
    }

    /// The shards, the recent long words and the queue for the tables, for a
    /// [`CountSink`](super::count_sink::CountSink).
    #[inline(always)]
    pub(super) fn shards_and_queue(
        &mut self,
    ) -> (&mut [PieceTable; SHARDS], &mut HotLongs, &mut Queued) {
        (&mut self.shards, &mut self.hot_longs, &mut self.queued)
    }
}

/// Entries queued for the tables (each half): a flush every 192 or more, so the
/// prefetches of many slots overlap (256 against 128: about 1% faster on code).
pub(super) const QUEUED: usize = 256;

/// What a partial's [`CountSink`](super::count_sink::CountSink) sends to its tables,
/// queued: the short words `hot` displaced (key, count and hash), the long pieces
/// (where they start in the segment, their length and hash), and, in a flush, the words
/// `hot_longs` displaced. Kept in the partial so that no segment clears 22 KiB of stack;
/// only the entries a flush writes are read.
pub struct Queued {
    pub(super) keys: [u64; QUEUED],
    pub(super) counts: [u64; QUEUED],
    pub(super) hashes: [u64; QUEUED],
    pub(super) long_at: [usize; QUEUED],
    pub(super) long_len: [usize; QUEUED],
    pub(super) long_hashes: [u64; QUEUED],
    pub(super) displaced: [Displaced; QUEUED],
}

impl Default for Queued {
    fn default() -> Self {
        let (none, at) = ([0; QUEUED], [0; QUEUED]);
        Self {
            keys: none,
            counts: none,
            hashes: none,
            long_at: at,
            long_len: at,
            long_hashes: none,
            displaced: [Displaced::default(); QUEUED],
        }
    }
}

/// The run's word table.
#[derive(Debug)]
pub struct WordTable {
    /// Word `w` lives in `shards[shard_of(hash(w))]`.
    pub(super) shards: Vec<PieceTable>,
    /// The estimated memory: [`budget::table_entry`] summed over the words.
    pub(super) bytes: u64,
}

impl Default for WordTable {
    fn default() -> Self {
        Self { shards: empty_shards(), bytes: 0 }
    }
}

impl WordTable {
    /// The estimated memory in bytes.
    pub fn estimate(&self) -> u64 {
        self.bytes
    }

    /// Distinct words.
    pub fn distinct_words(&self) -> usize {
        self.shards.iter().map(|s| s.len()).sum()
    }

    /// `cost` (of a word's length) summed over the words, in parallel.
    pub fn cost(&self, pool: &ThreadPool, cost: fn(u64) -> u64) -> u64 {
        let per_shard =
            |s: &PieceTable| -> u64 { s.iter().map(|(w, _)| cost(w.len() as u64)).sum() };
        pool.install(|| self.shards.par_iter().map(per_shard).sum())
    }

    /// The words and counts sorted by bytes (equal tables give equal lists).
    pub fn sorted(&self) -> Vec<(&[u8], u64)> {
        let mut words: Vec<(&[u8], u64)> = self.shards.iter().flat_map(|s| s.iter()).collect();
        // On the project's pool, never Rayon's global one (which a forked child inherits
        // without its threads).
        parallel::pool(None).install(|| words.par_sort_unstable());
        words
    }

    /// Adds a word that is not in the table yet; false (and nothing added) if it is.
    pub fn insert_new(&mut self, word: &[u8], count: u64) -> bool {
        let h = hash(word);
        let (slot, new) = self.shards[shard_of(h)].entry(word, h);
        if !new {
            return false;
        }
        *slot = count;
        self.bytes += budget::table_entry(word.len() as u64);
        true
    }

    /// Adds `count` occurrences of `word`, refusing a total above u64.
    pub fn add(&mut self, word: &[u8], count: u64) -> Result<()> {
        let h = hash(word);
        let (slot, new) = self.shards[shard_of(h)].entry(word, h);
        if new {
            self.bytes += budget::table_entry(word.len() as u64);
        }
        *slot = slot.checked_add(count).ok_or_else(|| {
            Error::InvalidConfig(format!(
                "the total count of word {:?} exceeds 2**64-1",
                String::from_utf8_lossy(word)
            ))
        })?;
        Ok(())
    }

    /// Folds the partial counts of a batch in, each thread owning whole shards.
    pub fn fold(&mut self, pool: &ThreadPool, partials: Vec<Partial>) {
        let mut by_shard: Vec<Vec<PieceTable>> = (0..SHARDS).map(|_| Vec::new()).collect();
        for mut partial in partials {
            partial.spill();
            for (shard, counts) in by_shard.iter_mut().zip(partial.shards) {
                shard.push(counts);
            }
        }
        let added: u64 = pool.install(|| {
            self.shards
                .par_iter_mut()
                .zip(by_shard)
                .map(|(shard, partials)| {
                    partials.into_iter().map(|partial| absorb(shard, partial)).sum::<u64>()
                })
                .sum()
        });
        self.bytes += added;
    }

    /// The words, sorted by bytes (a deterministic order for training), in one buffer
    /// (no allocation per word), copied out and sorted on `threads`. Each shard is freed
    /// as soon as its words are copied out.
    pub fn into_words(self, threads: Option<usize>) -> SortedWords {
        let pool = parallel::pool(threads);
        let sizes: Vec<(usize, usize)> = pool.install(|| {
            (self.shards.par_iter())
                .map(|s| s.iter().fold((0, 0), |(n, b), (w, _)| (n + 1, b + w.len())))
                .collect()
        });
        let mut words = SortedWords::gathered(
            self.shards,
            &sizes,
            |shard, push| shard.iter().for_each(|(w, n)| push(w, n)),
            &pool,
        );
        words.sort(&pool);
        words
    }
}

/// Adds `partial` into `shard`; returns the estimated bytes of the words it added.
fn absorb(shard: &mut PieceTable, partial: PieceTable) -> u64 {
    // Taken whole when it is as dense as a doubled table (one sized ahead may not be).
    if shard.is_empty() && partial.is_dense() {
        let added = partial.iter().map(|(w, _)| budget::table_entry(w.len() as u64)).sum();
        *shard = partial;
        return added;
    }
    let mut added = 0;
    shard.absorb(&partial, |word| added += budget::table_entry(word.len() as u64));
    added
}
