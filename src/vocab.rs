//! The mergeable vocabulary: token bytes by id, ids by bytes, and the merge log.

use ahash::AHashMap;

use crate::error::{Error, Result};
use crate::train::MergeRecord;
use crate::Rank;

/// Ids 0..=255 are the single bytes; merged tokens follow in creation order.
/// Invariant: no two ids share bytes, and every merge record replays to these tokens.
#[derive(Debug, Clone)]
pub struct Vocab {
    tokens: Vec<Vec<u8>>,
    ranks: AHashMap<Vec<u8>, Rank>,
    merges: Vec<MergeRecord>,
}

impl Vocab {
    /// Replays a merge log, checking that each record is consistent with the ones before:
    /// ids in range, and the token is the existing id of its bytes or the next new id.
    pub fn from_merges(merges: Vec<MergeRecord>) -> Result<Self> {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let mut ranks: AHashMap<Vec<u8>, Rank> = tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as Rank))
            .collect();
        for (i, m) in merges.iter().enumerate() {
            let known = tokens.len();
            let (Some(left), Some(right)) =
                (tokens.get(m.left as usize), tokens.get(m.right as usize))
            else {
                return Err(Error::Corrupt(format!(
                    "merge {i} joins ids ({}, {}) but only {known} tokens exist at that point",
                    m.left, m.right
                )));
            };
            let bytes = [left.as_slice(), right.as_slice()].concat();
            let expected = ranks.get(&bytes).copied().unwrap_or(known as Rank);
            if m.token != expected {
                return Err(Error::Corrupt(format!(
                    "merge {i} ({}, {}) should give token {expected}, not {}",
                    m.left, m.right, m.token
                )));
            }
            if expected as usize == known {
                ranks.insert(bytes.clone(), expected);
                tokens.push(bytes);
            }
        }
        Ok(Self {
            tokens,
            ranks,
            merges,
        })
    }

    /// Builds the vocabulary from training output, checking it against a replay.
    pub fn from_parts(tokens: Vec<Vec<u8>>, merges: Vec<MergeRecord>) -> Result<Self> {
        let vocab = Self::from_merges(merges)?;
        if vocab.tokens != tokens {
            return Err(Error::Corrupt(
                "training produced tokens that its merges do not".into(),
            ));
        }
        Ok(vocab)
    }

    /// Number of mergeable tokens (bytes + merged).
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    pub fn token(&self, id: Rank) -> Option<&[u8]> {
        self.tokens.get(id as usize).map(Vec::as_slice)
    }

    pub fn tokens(&self) -> &[Vec<u8>] {
        &self.tokens
    }

    pub fn rank(&self, bytes: &[u8]) -> Option<Rank> {
        self.ranks.get(bytes).copied()
    }

    pub fn ranks(&self) -> &AHashMap<Vec<u8>, Rank> {
        &self.ranks
    }

    pub fn merges(&self) -> &[MergeRecord] {
        &self.merges
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(left: Rank, right: Rank, token: Rank) -> MergeRecord {
        MergeRecord {
            left,
            right,
            token,
            count: 1,
        }
    }

    #[test]
    fn replays_and_reuses_duplicate_bytes() {
        let a = b'a' as Rank;
        let v = Vocab::from_merges(vec![m(a, a, 256), m(256, a, 257), m(a, 256, 257)]).unwrap();
        assert_eq!(v.len(), 258);
        assert_eq!(v.token(257), Some(&b"aaa"[..]));
        assert_eq!(v.rank(b"aaa"), Some(257));
    }

    #[test]
    fn rejects_inconsistent_logs() {
        let a = b'a' as Rank;
        assert!(Vocab::from_merges(vec![m(a, 300, 256)]).is_err());
        assert!(Vocab::from_merges(vec![m(a, a, 257)]).is_err());
        assert!(Vocab::from_merges(vec![m(a, a, 256), m(a, a, 257)]).is_err());
    }
}
