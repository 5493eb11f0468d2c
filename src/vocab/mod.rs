//! The mergeable vocabulary: token bytes by id, ids by bytes, and the merge log that
//! made them ([`MergeRecord`]); [`Growth`] adds tokens to it.

mod canonical;
mod chars;
mod growth;
mod joins;
mod lookup;
mod pairs;
mod perfect;
mod splits;

#[cfg(test)]
pub(crate) use canonical::CHECKED as CHECKED_SPLIT_LEN;
use chars::CharParts;
pub use growth::{next_free, Growth, Joined, TokenBytes};
pub(crate) use joins::Joins;
use lookup::TokenLookup;
pub use lookup::{hash as hash_bytes, PieceKey};

use std::sync::atomic::{AtomicU64, Ordering};

use ahash::AHashMap;

use crate::error::{Error, Result};
use crate::interrupt;
use crate::Rank;

/// [`Vocab::join_bytes`] of two bytes that join into no token.
pub(crate) const NO_JOIN: Rank = Rank::MAX;

/// One step of training: `left` and `right` joined into `token`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergeRecord {
    /// The left token's id.
    pub left: Rank,
    /// The right token's id.
    pub right: Rank,
    /// The resulting token: a new id, or an existing one when its bytes were already a token.
    pub token: Rank,
    /// The pair's count when it was merged (0 for a seed merge).
    pub count: u64,
}

/// Token bytes by id and ids by bytes. Trained vocabularies have ids 0..=255 for the
/// single bytes and merged tokens after them, with the merge log that made them; imported
/// ones (tiktoken, Hugging Face) may place the bytes anywhere and have no log, and
/// extended ones (warm start) have the log of their new tokens only.
/// Invariant: every id in 0..len is a token or a hole, no two tokens share bytes, and all
/// 256 single bytes are tokens. A hole (empty bytes) is an id reserved for a special
/// token: extending a tokenizer keeps its special ids, so new tokens are numbered around
/// them.
#[derive(Debug, Clone)]
pub struct Vocab {
    /// Token bytes by id; empty at a hole.
    tokens: Vec<Vec<u8>>,
    /// The merge log of the merged tokens it has one for, in order.
    merges: Vec<MergeRecord>,
    /// Id by token bytes (holes are not in it), in the layout encoding's whole-piece
    /// lookup wants; the only bytes-to-id map a vocabulary keeps.
    lookup: TokenLookup,
    /// (left, right) -> the token they join into, for each token's canonical split (the
    /// one merging can take, `canonical.rs`). Encoding joins parts through this instead of
    /// hashing their bytes. In 4-byte slots when the ids allow (`joins.rs`).
    pairs: Joins,
    /// The id of each single byte.
    bytes: [Rank; 256],
    /// `pairs` for two single bytes, by `first << 8 | second` (`NO_JOIN`: none): every
    /// piece's first joins are of bytes, and a direct read of a few rows (the lead bytes
    /// of one script) stays in the cache where hashed slots are spread over the table.
    byte_pairs: Box<[Rank]>,
    /// The multi-byte characters encoding may take as one part from the start
    /// (`chars.rs`).
    chars: CharParts,
    /// How many ids are holes.
    holes: usize,
    /// Unique to this vocabulary (and its clones): what encoding's piece cache, kept
    /// between calls, checks to hold one vocabulary's merges only.
    identity: u64,
}

impl Vocab {
    /// The 256 single bytes, nothing merged.
    pub fn bytes_only() -> Self {
        let tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        // A single byte has no split into two tokens.
        Self::with_splits(tokens, Vec::new(), Vec::new())
            .expect("nothing to interrupt in 256 single bytes")
    }

    /// Replays a merge log over the single bytes (see [`Vocab::extend`]).
    pub fn from_merges(merges: Vec<MergeRecord>, reserved: &[Rank]) -> Result<Self> {
        Self::bytes_only().extend(merges, reserved)
    }

    /// This vocabulary with `merges` appended, checking that each record is consistent
    /// with the ones before: ids in range, and the token is the existing id of its bytes
    /// or the next new id. New ids skip `reserved` ones (the ids of special tokens), which
    /// become holes.
    pub fn extend(&self, merges: Vec<MergeRecord>, reserved: &[Rank]) -> Result<Self> {
        let mut growth: Growth = self.growth(reserved);
        for (i, m) in merges.iter().enumerate() {
            interrupt::step(64)?;
            let known = growth.len();
            let Some(joined) = growth.join(m.left, m.right) else {
                return Err(Error::Corrupt(format!(
                    "merge {i} joins ids ({}, {}) but only {known} tokens exist at that point",
                    m.left, m.right
                )));
            };
            if m.token != joined.token {
                return Err(Error::Corrupt(format!(
                    "merge {i} ({}, {}) should give token {}, not {}",
                    m.left, m.right, joined.token, m.token
                )));
            }
        }
        growth.finish(merges)
    }

    /// The tokens and log, to grow (see [`Growth`]); new ids skip `reserved`.
    pub fn growth<T: TokenBytes>(&self, reserved: &[Rank]) -> Growth<T> {
        Growth::of(self, reserved)
    }

    /// Builds a vocabulary from token bytes by id (empty bytes: a hole) and the merge log
    /// of some of them, checking that each record joins two tokens into the third.
    pub fn from_tokens(tokens: Vec<Vec<u8>>, merges: Vec<MergeRecord>) -> Result<Self> {
        check_unique(&tokens)?;
        for (i, m) in merges.iter().enumerate() {
            let parts = (token_at(&tokens, m.left), token_at(&tokens, m.right));
            interrupt::step(parts.0.map_or(0, <[u8]>::len) + parts.1.map_or(0, <[u8]>::len))?;
            let joined = match parts {
                (Some(l), Some(r)) => Some([l, r].concat()),
                _ => None,
            };
            if joined.is_none() || joined.as_deref() != token_at(&tokens, m.token) {
                return Err(Error::Corrupt(format!(
                    "merge {i} ({}, {}) -> {} does not join two tokens into the third",
                    m.left, m.right, m.token
                )));
            }
        }
        Self::assemble(tokens, merges)
    }

    /// The vocabulary of `tokens` (checked unique, every single byte among them), with the
    /// pair table: every split of every token into two tokens, found in time linear in
    /// the total token bytes (`splits.rs`), cut down to the one split merging can take
    /// (`canonical.rs`). Interruptible (see [`interrupt`]).
    fn assemble(tokens: Vec<Vec<u8>>, merges: Vec<MergeRecord>) -> Result<Self> {
        let splits = splits::token_splits(&tokens)?;
        Self::with_splits(tokens, merges, splits)
    }

    /// The vocabulary, given the (left, right, token) triples of every split.
    fn with_splits(
        tokens: Vec<Vec<u8>>,
        merges: Vec<MergeRecord>,
        splits: Vec<(Rank, Rank, Rank)>,
    ) -> Result<Self> {
        let lookup = TokenLookup::new(&tokens);
        let mut bytes = [0; 256];
        for (b, id) in bytes.iter_mut().enumerate() {
            *id = lookup.get(&[b as u8]).ok_or_else(|| missing_byte(b as u8))?;
        }
        let pairs = canonical::pair_table(&tokens, &bytes, &splits)?;
        let byte_pairs = (0..1usize << 16)
            .map(|ab| pairs.get(bytes[ab >> 8], bytes[ab & 0xFF]).unwrap_or(NO_JOIN))
            .collect();
        let chars = CharParts::new(&tokens, &bytes, &pairs);
        let pairs = Joins::new(pairs, tokens.len());
        let holes = tokens.iter().filter(|t| t.is_empty()).count();
        // Ids from 1, so 0 never names a vocabulary.
        static NEXT_IDENTITY: AtomicU64 = AtomicU64::new(1);
        let identity = NEXT_IDENTITY.fetch_add(1, Ordering::Relaxed);
        Ok(Self { tokens, merges, lookup, pairs, bytes, byte_pairs, chars, holes, identity })
    }

    /// Builds a vocabulary from (bytes, id) pairs, as tiktoken's `mergeable_ranks`. Ids
    /// run from 0 without gaps, except at `reserved` ids (special tokens), which are holes.
    pub fn from_ranks(mut ranks: Vec<(Vec<u8>, Rank)>, reserved: &[Rank]) -> Result<Self> {
        ranks.sort_unstable_by_key(|&(_, id)| id);
        let reserved = growth::sorted(reserved);
        let mut tokens: Vec<Vec<u8>> = Vec::with_capacity(ranks.len());
        for (bytes, id) in ranks {
            interrupt::step(bytes.len())?;
            if reserved.binary_search(&id).is_ok() {
                return Err(Error::Corrupt(format!(
                    "id {id} is the rank of a token and also a special token's id"
                )));
            }
            let expected = next_free(tokens.len(), &reserved);
            if id as usize != expected {
                return Err(Error::Corrupt(format!(
                    "token ids must be 0..{} without gaps or repeats (but for special-token \
                     ids); id {expected} is {}",
                    expected + 1,
                    if (id as usize) > expected { "missing" } else { "repeated" }
                )));
            }
            if bytes.is_empty() {
                return Err(Error::Corrupt(format!("token {id} has no bytes")));
            }
            tokens.resize(expected, Vec::new());
            tokens.push(bytes);
        }
        check_unique(&tokens)?;
        Self::assemble(tokens, Vec::new())
    }

    /// Ids in use or reserved (tokens and holes): the next new token's id is at least this.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// True when there are no ids at all (never for a built vocabulary).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Mergeable tokens (bytes + merged), holes not counted.
    pub fn n_tokens(&self) -> usize {
        self.tokens.len() - self.holes
    }

    /// Whether `id` is a hole: below `len` but not a token (a special token's id).
    pub fn is_hole(&self, id: Rank) -> bool {
        self.tokens.get(id as usize).is_some_and(Vec::is_empty)
    }

    /// The bytes of token `id`; None for a hole or an id past the end.
    pub fn token(&self, id: Rank) -> Option<&[u8]> {
        token_at(&self.tokens, id)
    }

    /// Token bytes by id; a hole is empty.
    pub fn tokens(&self) -> &[Vec<u8>] {
        &self.tokens
    }

    /// The id of `bytes`, if they are a token.
    #[inline]
    pub fn rank(&self, bytes: &[u8]) -> Option<Rank> {
        self.lookup.get(bytes)
    }

    /// [`Self::rank`] with the piece's key already computed (`PieceKey::of(bytes)`).
    #[inline(always)]
    pub fn rank_keyed(&self, bytes: &[u8], key: &PieceKey) -> Option<Rank> {
        self.lookup.get_keyed(bytes, key)
    }

    /// Asks for the memory [`Self::rank_keyed`] of this key reads first to be fetched.
    #[inline(always)]
    pub fn prefetch_rank(&self, key: &PieceKey) {
        self.lookup.prefetch(key);
    }

    /// The token that merging `left` and `right` makes: their joined bytes' token when
    /// (left, right) is its canonical split, the only one merging can take; None for any
    /// other pair (`canonical.rs`).
    #[inline]
    pub fn pair_rank(&self, left: Rank, right: Rank) -> Option<Rank> {
        self.pairs.get(left, right)
    }

    /// [`Self::pair_rank`] of two ids of this vocabulary (as every part an encoder holds
    /// is: a byte's id or a joined id), without checking that they are: past the ids of
    /// the vocabulary the answer may be another pair's.
    #[inline]
    pub(crate) fn join_parts(&self, left: Rank, right: Rank) -> Option<Rank> {
        self.pairs.get_below_bound(left, right)
    }

    /// The pair table itself, for a merger that picks its lookup once per piece.
    #[inline]
    pub(crate) fn joins(&self) -> &Joins {
        &self.pairs
    }

    /// [`Self::join_parts`] of two single bytes' tokens, read directly; `NO_JOIN`: none.
    #[inline]
    pub(crate) fn join_bytes(&self, first: u8, second: u8) -> Rank {
        // SAFETY: the table has 2^16 entries, one for each two bytes.
        unsafe { *self.byte_pairs.get_unchecked(usize::from(first) << 8 | usize::from(second)) }
    }

    /// The token of the multi-byte character that starts at `piece[i]` and its length,
    /// when merging that piece is sure to make the character's token whatever else is in
    /// it (`chars.rs`), so the mergers may start from it.
    #[inline(always)]
    pub(crate) fn char_part(&self, piece: &[u8], i: usize) -> Option<(Rank, usize)> {
        self.chars.part_at(piece, i)
    }

    /// Whether some character can be taken whole ([`Self::char_part`]).
    #[inline(always)]
    pub(crate) fn has_char_parts(&self) -> bool {
        !self.chars.is_empty()
    }

    /// A number no other vocabulary of this process has (clones share it: they have the
    /// same tokens), so a cache can tell whose merges it holds.
    pub fn identity(&self) -> u64 {
        self.identity
    }

    /// The id of a single byte.
    #[inline]
    pub fn byte_rank(&self, byte: u8) -> Rank {
        self.bytes[byte as usize]
    }

    /// The merge log (see the field).
    pub fn merges(&self) -> &[MergeRecord] {
        &self.merges
    }

    /// Every split of every token into two tokens, as (left, right, token), by token id
    /// then length of the left part; linear in the total token bytes. Interruptible.
    pub fn splits(&self) -> Result<Vec<(Rank, Rank, Rank)>> {
        splits::token_splits(&self.tokens)
    }
}

/// The single bytes at ids 0..=255, then `extra` in order: the vocabularies tests build
/// by hand.
#[cfg(test)]
pub(crate) fn bytes_then(extra: &[&[u8]]) -> Vocab {
    let mut ranks: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
    for (i, t) in extra.iter().enumerate() {
        ranks.push((t.to_vec(), 256 + i as Rank));
    }
    Vocab::from_ranks(ranks, &[]).unwrap()
}

fn token_at(tokens: &[Vec<u8>], id: Rank) -> Option<&[u8]> {
    tokens.get(id as usize).map(Vec::as_slice).filter(|t| !t.is_empty())
}

/// Refuses tokens (holes skipped) that repeat bytes or leave out a single byte.
fn check_unique(tokens: &[Vec<u8>]) -> Result<()> {
    let mut ranks: AHashMap<&[u8], Rank> = AHashMap::with_capacity(tokens.len());
    for (id, bytes) in tokens.iter().enumerate().filter(|(_, t)| !t.is_empty()) {
        interrupt::step(bytes.len())?;
        if let Some(other) = ranks.insert(bytes, id as Rank) {
            return Err(Error::Corrupt(format!(
                "tokens {other} and {id} have the same bytes {:?}",
                String::from_utf8_lossy(bytes)
            )));
        }
    }
    match (0..=255u8).find(|b| !ranks.contains_key(&[*b][..])) {
        Some(b) => Err(missing_byte(b)),
        None => Ok(()),
    }
}

fn missing_byte(b: u8) -> Error {
    Error::Corrupt(format!(
        "the single byte 0x{b:02x} is not a token; byte-level BPE needs all 256"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(left: Rank, right: Rank, token: Rank) -> MergeRecord {
        MergeRecord { left, right, token, count: 1 }
    }

    /// `id_bound` bounds every id a growth holds and every id its next tokens take,
    /// reserved ids past the end included, and is tight when none are reserved.
    #[test]
    fn id_bound_covers_the_ids_new_tokens_take() {
        let a = b'a' as Rank;
        let v = Vocab::from_merges(vec![m(a, a, 256)], &[]).unwrap();
        for reserved in [&[][..], &[3, 258, 259, 400], &[257, 256]] {
            let mut growth: Growth = v.growth(reserved);
            let bound = growth.id_bound(5);
            // "aa" + "a", then that + "a": five new tokens.
            let mut last = 256;
            for _ in 0..5 {
                last = growth.join(last, a).unwrap().token;
            }
            assert!(u64::from(last) < bound, "{reserved:?}: {last} < {bound}");
            if reserved.is_empty() {
                assert_eq!(u64::from(last) + 1, bound);
            }
        }
    }

    #[test]
    fn replays_and_reuses_duplicate_bytes() {
        let a = b'a' as Rank;
        let v =
            Vocab::from_merges(vec![m(a, a, 256), m(256, a, 257), m(a, 256, 257)], &[]).unwrap();
        assert_eq!(v.len(), 258);
        assert_eq!(v.token(257), Some(&b"aaa"[..]));
        assert_eq!(v.rank(b"aaa"), Some(257));
    }

    #[test]
    fn ranks_need_contiguous_unique_ids_and_all_bytes() {
        let bytes: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![255 - b], b as Rank)).collect();
        let v = Vocab::from_ranks(bytes.clone(), &[]).unwrap();
        assert_eq!(v.rank(b"\xff"), Some(0));
        let mut gap = bytes.clone();
        gap.push((b"ab".to_vec(), 257));
        assert!(Vocab::from_ranks(gap.clone(), &[])
            .unwrap_err()
            .to_string()
            .contains("256 is missing"));
        let mut dup = bytes.clone();
        dup.push((b"a".to_vec(), 256));
        assert!(Vocab::from_ranks(dup, &[]).unwrap_err().to_string().contains("same bytes"));
        assert!(Vocab::from_ranks(bytes[1..].to_vec(), &[]).is_err());
        // A gap at a reserved id (a special token's) is a hole.
        let holed = Vocab::from_ranks(gap, &[256]).unwrap();
        assert!(holed.is_hole(256) && holed.token(256).is_none());
        assert_eq!((holed.len(), holed.n_tokens()), (258, 257));
    }

    /// The direct table of two bytes answers as the pair table does, for every two bytes,
    /// with byte ids permuted and two-byte tokens ranked in no merge order.
    #[test]
    fn joined_bytes_match_the_pair_table() {
        let mut ranks: Vec<(Vec<u8>, Rank)> =
            (0..=255u8).map(|b| (vec![b.wrapping_mul(7).wrapping_add(3)], b as Rank)).collect();
        let two: [&[u8]; 5] = [b"ab", b"\xd0\xbf", b"\xbf\xd0", b"  ", b"\xff\x00"];
        for (i, t) in two.iter().enumerate() {
            ranks.push((t.to_vec(), 256 + i as Rank));
        }
        let v = Vocab::from_ranks(ranks, &[]).unwrap();
        let mut joined = 0;
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let want = v.pair_rank(v.byte_rank(a), v.byte_rank(b)).unwrap_or(NO_JOIN);
                assert_eq!(v.join_bytes(a, b), want, "{a} {b}");
                joined += usize::from(want != NO_JOIN);
            }
        }
        assert_eq!(joined, two.len());
        assert_eq!(v.join_bytes(0xD0, 0xBF), 257);
    }

    #[test]
    fn rejects_inconsistent_logs() {
        let a = b'a' as Rank;
        assert!(Vocab::from_merges(vec![m(a, 300, 256)], &[]).is_err());
        assert!(Vocab::from_merges(vec![m(a, a, 257)], &[]).is_err());
        assert!(Vocab::from_merges(vec![m(a, a, 256), m(a, a, 257)], &[]).is_err());
    }

    #[test]
    fn new_ids_skip_reserved_ones() {
        let a = b'a' as Rank;
        let v = Vocab::from_merges(vec![m(a, a, 256), m(256, 256, 258)], &[257]).unwrap();
        assert!(v.is_hole(257));
        assert_eq!(v.token(258), Some(&b"aaaa"[..]));
        assert_eq!(v.n_tokens(), 258);
        assert!(Vocab::from_merges(vec![m(a, a, 257)], &[257]).is_err());
        let same = Vocab::from_tokens(v.tokens().to_vec(), v.merges().to_vec()).unwrap();
        assert_eq!(same.rank(b"aaaa"), Some(258));
        let bad = vec![m(a, a, 258)];
        assert!(Vocab::from_tokens(v.tokens().to_vec(), bad).is_err());
    }
}
