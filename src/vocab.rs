//! The mergeable vocabulary: token bytes by id, ids by bytes, and the merge log.

use ahash::AHashMap;

use crate::error::{Error, Result};
use crate::train::MergeRecord;
use crate::Rank;

/// Token bytes by id and ids by bytes. Trained vocabularies have ids 0..=255 for the
/// single bytes and merged tokens after them, with the merge log that made them; imported
/// ones (tiktoken, Hugging Face) may place the bytes anywhere and have no log.
/// Invariant: ids are 0..len, no two ids share bytes, and all 256 single bytes are tokens.
#[derive(Debug, Clone)]
pub struct Vocab {
    tokens: Vec<Vec<u8>>,
    ranks: AHashMap<Vec<u8>, Rank>,
    merges: Vec<MergeRecord>,
    /// Every way to write a token as two tokens: (left, right) -> the token. Encoding
    /// joins parts through this instead of hashing their bytes.
    pairs: AHashMap<(Rank, Rank), Rank>,
    /// The id of each single byte.
    bytes: [Rank; 256],
}

impl Vocab {
    /// Replays a merge log, checking that each record is consistent with the ones before:
    /// ids in range, and the token is the existing id of its bytes or the next new id.
    pub fn from_merges(merges: Vec<MergeRecord>) -> Result<Self> {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let mut ranks: AHashMap<Vec<u8>, Rank> =
            tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as Rank)).collect();
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
        Ok(Self::assemble(tokens, ranks, merges))
    }

    fn assemble(
        tokens: Vec<Vec<u8>>,
        ranks: AHashMap<Vec<u8>, Rank>,
        merges: Vec<MergeRecord>,
    ) -> Self {
        let mut pairs = AHashMap::with_capacity(tokens.len() * 2);
        for (id, bytes) in tokens.iter().enumerate() {
            for k in 1..bytes.len() {
                if let (Some(&l), Some(&r)) = (ranks.get(&bytes[..k]), ranks.get(&bytes[k..])) {
                    pairs.insert((l, r), id as Rank);
                }
            }
        }
        let bytes = std::array::from_fn(|b| ranks[&[b as u8][..]]);
        Self { tokens, ranks, merges, pairs, bytes }
    }

    /// Builds a vocabulary from (bytes, id) pairs, as tiktoken's `mergeable_ranks`.
    pub fn from_ranks(mut ranks: Vec<(Vec<u8>, Rank)>) -> Result<Self> {
        ranks.sort_unstable_by_key(|&(_, id)| id);
        let mut by_bytes = AHashMap::with_capacity(ranks.len());
        for (expected, (bytes, id)) in ranks.iter().enumerate() {
            if *id as usize != expected {
                return Err(Error::Corrupt(format!(
                    "token ids must be 0..{} without gaps or repeats; id {expected} is {}",
                    ranks.len(),
                    if (*id as usize) > expected { "missing" } else { "repeated" }
                )));
            }
            if bytes.is_empty() {
                return Err(Error::Corrupt(format!("token {id} has no bytes")));
            }
            if let Some(other) = by_bytes.insert(bytes.clone(), *id) {
                return Err(Error::Corrupt(format!(
                    "tokens {other} and {id} have the same bytes {:?}",
                    String::from_utf8_lossy(bytes)
                )));
            }
        }
        if let Some(b) = (0..=255u8).find(|b| !by_bytes.contains_key(&[*b][..])) {
            return Err(Error::Corrupt(format!(
                "the single byte 0x{b:02x} is not a token; byte-level BPE needs all 256"
            )));
        }
        let tokens = ranks.into_iter().map(|(bytes, _)| bytes).collect();
        Ok(Self::assemble(tokens, by_bytes, Vec::new()))
    }

    /// Builds the vocabulary from training output, checking it against a replay.
    pub fn from_parts(tokens: Vec<Vec<u8>>, merges: Vec<MergeRecord>) -> Result<Self> {
        let vocab = Self::from_merges(merges)?;
        if vocab.tokens != tokens {
            return Err(Error::Corrupt("training produced tokens that its merges do not".into()));
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

    /// The token whose bytes are `left`'s then `right`'s, if any.
    #[inline]
    pub fn pair_rank(&self, left: Rank, right: Rank) -> Option<Rank> {
        self.pairs.get(&(left, right)).copied()
    }

    /// The id of a single byte.
    #[inline]
    pub fn byte_rank(&self, byte: u8) -> Rank {
        self.bytes[byte as usize]
    }

    pub fn merges(&self) -> &[MergeRecord] {
        &self.merges
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(left: Rank, right: Rank, token: Rank) -> MergeRecord {
        MergeRecord { left, right, token, count: 1 }
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
    fn ranks_need_contiguous_unique_ids_and_all_bytes() {
        let bytes: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![255 - b], b as Rank)).collect();
        let v = Vocab::from_ranks(bytes.clone()).unwrap();
        assert_eq!(v.rank(b"\xff"), Some(0));
        let mut gap = bytes.clone();
        gap.push((b"ab".to_vec(), 257));
        assert!(Vocab::from_ranks(gap).unwrap_err().to_string().contains("256 is missing"));
        let mut dup = bytes.clone();
        dup.push((b"a".to_vec(), 256));
        assert!(Vocab::from_ranks(dup).unwrap_err().to_string().contains("same bytes"));
        assert!(Vocab::from_ranks(bytes[1..].to_vec()).is_err());
    }

    #[test]
    fn rejects_inconsistent_logs() {
        let a = b'a' as Rank;
        assert!(Vocab::from_merges(vec![m(a, 300, 256)]).is_err());
        assert!(Vocab::from_merges(vec![m(a, a, 257)]).is_err());
        assert!(Vocab::from_merges(vec![m(a, a, 256), m(a, a, 257)]).is_err());
    }
}
