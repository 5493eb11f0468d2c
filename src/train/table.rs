//! The word table: word bytes -> number of occurrences, split into shards by a fixed hash
//! of the word so a batch's partial counts fold in on all threads at once (each thread
//! owns whole shards), with a running estimate of its memory.

use ahash::AHashMap;
use rayon::prelude::*;
use rayon::ThreadPool;

use super::budget;
use crate::error::{Error, Result};
use crate::parallel;

/// Word bytes -> number of occurrences.
pub type WordCounts = AHashMap<Vec<u8>, u64>;

/// Shards of the table (a power of two).
const SHARDS: usize = 64;

/// The shard of a word: a hash with fixed keys, so a word always lands in one shard.
fn shard_of(word: &[u8]) -> usize {
    static HASHER: std::sync::OnceLock<ahash::RandomState> = std::sync::OnceLock::new();
    let hasher = HASHER.get_or_init(|| ahash::RandomState::with_seeds(1, 2, 3, 4));
    (hasher.hash_one(word) as usize) & (SHARDS - 1)
}

fn empty_shards() -> Vec<WordCounts> {
    (0..SHARDS).map(|_| WordCounts::new()).collect()
}

/// The counts of one chunk of a batch, sharded like the table they fold into.
pub struct Partial {
    /// One map per shard of the table.
    shards: Vec<WordCounts>,
}

impl Default for Partial {
    fn default() -> Self {
        Self { shards: empty_shards() }
    }
}

impl Partial {
    /// Counts one occurrence of `piece`. Called once per piece: inlined into the
    /// splitter's loop (as a call it cost counting ~6% more instructions).
    #[inline(always)]
    pub fn add_one(&mut self, piece: &[u8]) {
        let counts = &mut self.shards[shard_of(piece)];
        match counts.get_mut(piece) {
            Some(c) => *c += 1,
            None => {
                counts.insert(piece.to_vec(), 1);
            }
        }
    }
}

/// The run's word table.
#[derive(Debug)]
pub struct WordTable {
    /// Word `w` lives in `shards[shard_of(w)]`.
    pub(super) shards: Vec<WordCounts>,
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
        let per_shard = |s: &WordCounts| -> u64 { s.keys().map(|w| cost(w.len() as u64)).sum() };
        pool.install(|| self.shards.par_iter().map(per_shard).sum())
    }

    /// The words and counts sorted by bytes (equal tables give equal lists).
    pub fn sorted(&self) -> Vec<(&Vec<u8>, &u64)> {
        let mut words: Vec<(&Vec<u8>, &u64)> = self.shards.iter().flatten().collect();
        // On the project's pool, never Rayon's global one (which a forked child inherits
        // without its threads).
        parallel::pool(None).install(|| words.par_sort_unstable());
        words
    }

    /// Adds a word that is not in the table yet; false (and nothing added) if it is.
    pub fn insert_new(&mut self, word: &[u8], count: u64) -> bool {
        let shard = &mut self.shards[shard_of(word)];
        if shard.contains_key(word) {
            return false;
        }
        shard.insert(word.to_vec(), count);
        self.bytes += budget::table_entry(word.len() as u64);
        true
    }

    /// Adds `count` occurrences of `word`, refusing a total above u64.
    pub fn add(&mut self, word: &[u8], count: u64) -> Result<()> {
        let shard = &mut self.shards[shard_of(word)];
        let slot = match shard.get_mut(word) {
            Some(slot) => slot,
            None => {
                self.bytes += budget::table_entry(word.len() as u64);
                shard.entry(word.to_vec()).or_insert(0)
            }
        };
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
        let mut by_shard: Vec<Vec<WordCounts>> = (0..SHARDS).map(|_| Vec::new()).collect();
        for partial in partials {
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

    /// The words, sorted by bytes (a deterministic order for training).
    pub fn into_words(self) -> Vec<(Vec<u8>, u64)> {
        // Sized once; each shard's table is freed as soon as it is moved out.
        let mut words = Vec::with_capacity(self.distinct_words());
        for shard in self.shards {
            words.extend(shard);
        }
        parallel::pool(None).install(|| words.par_sort_unstable_by(|a, b| a.0.cmp(&b.0)));
        words
    }
}

/// Adds `partial` into `shard`; returns the estimated bytes of the words it added.
fn absorb(shard: &mut WordCounts, partial: WordCounts) -> u64 {
    let mut added = 0;
    if shard.is_empty() {
        added = partial.keys().map(|w| budget::table_entry(w.len() as u64)).sum();
        *shard = partial;
        return added;
    }
    for (word, n) in partial {
        // Cannot overflow: counted occurrences are bounded by the bytes of real input
        // (pre-counted words go through `add`, which checks).
        match shard.get_mut(&word) {
            Some(c) => *c += n,
            None => {
                added += budget::table_entry(word.len() as u64);
                shard.insert(word, n);
            }
        }
    }
    added
}
