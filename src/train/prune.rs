//! Pruning the word table to fit a memory budget: the rarest words go first, and words
//! at the threshold count are kept by a fixed hash of their bytes (see
//! [`budget::TIE_BUCKETS`]), so the choice depends only on the table's contents.

use rayon::prelude::*;
use rayon::ThreadPool;

use super::budget::{self, CostByCount};
use super::table::WordTable;
use crate::fingerprint::{eat, EMPTY_FINGERPRINT};

/// What pruning dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dropped {
    /// Word occurrences dropped.
    pub mass: u64,
    /// Bytes of text those occurrences covered (count x word length).
    pub bytes: u64,
}

impl WordTable {
    /// Drops the rarest words until the estimate (`cost` per word length) is at most
    /// `target`: every word below the smallest count threshold `t` that fits, and of the
    /// words at `t`, those outside the tie buckets that fit. The choice depends only on
    /// the table's contents, never on its layout in memory. None when everything fits.
    pub fn prune(
        &mut self,
        pool: &ThreadPool,
        target: u64,
        cost: fn(u64) -> u64,
    ) -> Option<Dropped> {
        let histogram = pool.install(|| {
            self.shards
                .par_iter()
                .map(|s| {
                    let mut h = CostByCount::default();
                    for (w, n) in s.iter() {
                        h.add(n, cost(w.len() as u64));
                    }
                    h
                })
                .reduce(CostByCount::default, CostByCount::merge)
        });
        let (threshold, above) = histogram.threshold(target);
        if threshold == 0 {
            return None;
        }
        let ties = pool.install(|| {
            self.shards
                .par_iter()
                .map(|s| {
                    let mut costs = [0u64; budget::TIE_BUCKETS];
                    for (w, n) in s.iter() {
                        if n == threshold {
                            costs[tie_bucket(w)] += cost(w.len() as u64);
                        }
                    }
                    costs
                })
                .reduce(
                    || [0u64; budget::TIE_BUCKETS],
                    |mut a, b| {
                        for (x, y) in a.iter_mut().zip(b) {
                            *x += y;
                        }
                        a
                    },
                )
        });
        let keep_ties = budget::tie_buckets(&ties, target - above);
        let (mass, bytes, kept): (u64, u64, u64) = pool.install(|| {
            self.shards
                .par_iter_mut()
                .map(|s| {
                    let (mut mass, mut bytes, mut kept) = (0u64, 0u64, 0u64);
                    s.retain(|w, n| {
                        if n < threshold || (n == threshold && tie_bucket(w) >= keep_ties) {
                            mass = mass.saturating_add(n);
                            bytes = bytes.saturating_add(n.saturating_mul(w.len() as u64));
                            false
                        } else {
                            kept += budget::table_entry(w.len() as u64);
                            true
                        }
                    });
                    (mass, bytes, kept)
                })
                .reduce(
                    || (0, 0, 0),
                    |a, b| (a.0.saturating_add(b.0), a.1.saturating_add(b.1), a.2 + b.2),
                )
        });
        self.bytes = kept;
        Some(Dropped { mass, bytes })
    }
}

/// The tie bucket of a word when pruning: FNV-1a with a splitmix64 finish, spelled out
/// here because the choice must be the same on every machine and build (ahash depends
/// on CPU features and its version), or a run would not resume elsewhere.
fn tie_bucket(word: &[u8]) -> usize {
    let mut h = eat(EMPTY_FINGERPRINT, word);
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((h ^ (h >> 31)) >> 56) as usize
}
