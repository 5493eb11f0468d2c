//! Growing a vocabulary one merge at a time: the one place where joining two tokens makes
//! a token (the existing id of the joined bytes, or the next free id). Replaying a merge
//! log, making seed tokens and the merge loop all grow tokens through [`Growth::join`].

use std::borrow::Borrow;
use std::hash::Hash;
use std::rc::Rc;

use ahash::AHashMap;

use super::{MergeRecord, Vocab};
use crate::error::Result;
use crate::Rank;

/// How a growing vocabulary holds token bytes: `Vec<u8>` by default; `Rc<[u8]>` in the
/// merge loop, where the list by id and the map by bytes then share one copy of each
/// new token's bytes.
pub trait TokenBytes: Borrow<[u8]> + Clone + Eq + Hash + From<Vec<u8>> {
    /// The bytes as a `Vec` (a move for `Vec<u8>`, a copy for `Rc<[u8]>`).
    fn into_vec(self) -> Vec<u8>;
}

impl TokenBytes for Vec<u8> {
    fn into_vec(self) -> Vec<u8> {
        self
    }
}

impl TokenBytes for Rc<[u8]> {
    fn into_vec(self) -> Vec<u8> {
        self.to_vec()
    }
}

/// Tokens while merges are added: bytes by id and ids by bytes. New ids skip `reserved`
/// ones (special tokens' ids), which become holes. Made by [`Vocab::growth`], turned back
/// into a vocabulary by [`Growth::finish`].
#[derive(Debug, Clone)]
pub struct Growth<T: TokenBytes = Vec<u8>> {
    /// Token bytes by id; empty at a hole.
    tokens: Vec<T>,
    /// Id by token bytes (holes are not in it).
    ids: AHashMap<T, Rank>,
    /// Ids new tokens skip, sorted.
    reserved: Vec<Rank>,
    /// The merge log of the vocabulary this growth started from.
    log: Vec<MergeRecord>,
}

/// The token a join gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Joined {
    /// The token's id.
    pub token: Rank,
    /// True when the join made a new token; false when its bytes already were one.
    pub is_new: bool,
}

impl<T: TokenBytes> Growth<T> {
    /// Growth from `vocab`'s tokens and log; new ids skip `reserved`.
    pub(super) fn of(vocab: &Vocab, reserved: &[Rank]) -> Self {
        let tokens: Vec<T> = vocab.tokens().iter().map(|t| T::from(t.clone())).collect();
        let ids = tokens
            .iter()
            .enumerate()
            .filter(|(_, t)| !<T as Borrow<[u8]>>::borrow(t).is_empty())
            .map(|(id, t)| (t.clone(), id as Rank))
            .collect();
        Self { tokens, ids, reserved: sorted(reserved), log: vocab.merges().to_vec() }
    }

    /// The token of `left`'s bytes then `right`'s: the existing id of those bytes, or a
    /// new one (the next id not reserved). None if either id is not a token.
    pub fn join(&mut self, left: Rank, right: Rank) -> Option<Joined> {
        let bytes = [self.token(left)?, self.token(right)?].concat();
        if let Some(&token) = self.ids.get(bytes.as_slice()) {
            return Some(Joined { token, is_new: false });
        }
        let id = next_free(self.tokens.len(), &self.reserved);
        self.tokens.resize(id, T::from(Vec::new()));
        let bytes = T::from(bytes);
        self.ids.insert(bytes.clone(), id as Rank);
        self.tokens.push(bytes);
        Some(Joined { token: id as Rank, is_new: true })
    }

    /// Ids in use or reserved (tokens and holes).
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// True when there are no ids at all.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Every id in use, and every id `new` more tokens can take, is below this: new ids
    /// come after the last one, skipping the reserved ids there.
    pub fn id_bound(&self, new: usize) -> u64 {
        let skipped = self.reserved.iter().filter(|&&r| r as usize >= self.tokens.len()).count();
        (self.tokens.len() + new + skipped) as u64
    }

    /// The bytes of token `id`; None for a hole or an id past the end.
    pub fn token(&self, id: Rank) -> Option<&[u8]> {
        let bytes: &[u8] = self.tokens.get(id as usize)?.borrow();
        (!bytes.is_empty()).then_some(bytes)
    }

    /// The stored bytes of `id` (empty for a hole), to share. Panics past the end: the
    /// caller holds ids of tokens of this growth.
    #[inline]
    pub fn bytes(&self, id: Rank) -> &T {
        &self.tokens[id as usize]
    }

    /// The id of `bytes`, if they are a token.
    pub fn id(&self, bytes: &[u8]) -> Option<Rank> {
        self.ids.get(bytes).copied()
    }

    /// The vocabulary grown, with the log it started from followed by `merges` (the
    /// merges that grew it, in order).
    pub fn finish(self, merges: Vec<MergeRecord>) -> Result<Vocab> {
        let mut log = self.log;
        log.extend(merges);
        // Freed before the vocabulary is built, not after (the bytes map is not kept).
        drop(self.ids);
        let tokens = self.tokens.into_iter().map(T::into_vec).collect();
        Vocab::assemble(tokens, log)
    }
}

/// The first id at or after `id` that is not reserved (`reserved` sorted: a binary search,
/// not a scan, so a file with many special tokens is not quadratic to load).
pub fn next_free(mut id: usize, reserved: &[Rank]) -> usize {
    debug_assert!(reserved.windows(2).all(|w| w[0] < w[1]), "reserved ids must be sorted");
    while Rank::try_from(id).is_ok_and(|r| reserved.binary_search(&r).is_ok()) {
        id += 1;
    }
    id
}

/// `reserved` sorted, without repeats, for [`next_free`].
pub(super) fn sorted(reserved: &[Rank]) -> Vec<Rank> {
    let mut sorted = reserved.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    sorted
}
