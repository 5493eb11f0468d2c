//! The merge loop's heap entry, ordered by the contract's tie-break rule: the highest
//! count first, then the lexicographically smallest (left bytes, right bytes).

use std::cmp::Ordering;
use std::rc::Rc;

use super::rewrite::Pair;

/// A heap entry. Ordered so that the max is the pair to merge next.
pub struct Candidate {
    /// The pair's count when the entry was pushed (stale once the count changed).
    pub count: u64,
    /// The pair.
    pub pair: Pair,
    /// The left token's bytes (shared with the growing vocabulary).
    pub left: Rc<[u8]>,
    /// The right token's bytes.
    pub right: Rc<[u8]>,
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        self.count
            .cmp(&other.count)
            // Smaller bytes win ties, so they compare as greater.
            .then_with(|| other.left.cmp(&self.left))
            .then_with(|| other.right.cmp(&self.right))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Candidate {}
