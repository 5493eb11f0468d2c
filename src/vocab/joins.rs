//! The pair table a vocabulary keeps for encoding, in the layout its ids allow: the
//! perfect hash in 4-byte slots (`perfect.rs`) for at most 2^16 ids, else the hashed
//! table (`pairs.rs`). Built from the hashed table, which building the vocabulary needs
//! anyway; a vocabulary that gets the perfect one drops it.

use super::pairs::PairTable;
use super::perfect::PerfectPairs;
use crate::Rank;

#[derive(Debug, Clone)]
pub enum Joins {
    Perfect(PerfectPairs),
    Hashed(PairTable),
}

impl Joins {
    /// The pairs of `table`, every id below `id_bound`: as a perfect hash when that is
    /// smaller (more than 16,384 pairs and at most 2^16 ids: 264 or 528 KiB where the
    /// hashed table takes 512 KiB or 1 MiB; with fewer pairs the hashed table is smaller).
    pub fn new(table: PairTable, id_bound: usize) -> Self {
        if PerfectPairs::bytes_for(id_bound).is_some_and(|bytes| bytes < table.bytes()) {
            if let Some(perfect) = PerfectPairs::build(&table.entries(), id_bound) {
                return Self::Perfect(perfect);
            }
        }
        Self::Hashed(table)
    }

    /// The id of (left, right)'s joined token, if they make one; any ids.
    #[inline]
    pub fn get(&self, left: Rank, right: Rank) -> Option<Rank> {
        match self {
            Self::Perfect(t) => t.get(left, right),
            Self::Hashed(t) => t.get(left, right),
        }
    }

    /// [`Self::get`] for ids of the vocabulary, unchecked (past them the answer may be
    /// another pair's).
    #[inline]
    pub fn get_below_bound(&self, left: Rank, right: Rank) -> Option<Rank> {
        match self {
            Self::Perfect(t) => t.get_below_bound(left, right),
            Self::Hashed(t) => t.get_below_bound(left, right),
        }
    }
}
