//! What the backtracking encoder (`src/encode/backtrack.rs`) needs of a vocabulary: which
//! tokens merging can make, each one's canonical split, a trie of those tokens for the
//! longest one starting at a position, and each one's longest such proper prefix.
//!
//! Why a piece's tokens can be found without merging. Call a token *reachable* when its
//! bytes alone merge into it, and two tokens `a`, `b` a *valid pair* when `a`'s bytes then
//! `b`'s merge into `[a, b]`. A sequence of tokens spelling a piece is the piece's merge
//! result exactly when its tokens are reachable and each adjacent pair is valid.
//! Necessary: the merges inside two adjacent result tokens happen in the piece in the
//! order they would for their bytes alone (each was the lowest (rank, position) of the
//! whole piece, so of those bytes too), and the pair is never merged. Sufficient: take
//! the first merge across a boundary of the sequence; up to it, every merge in the two
//! tokens beside it was the lowest of the piece, so also of their bytes alone, and it is
//! the lowest too, so their bytes alone would make it as well: the pair would not be
//! valid. So no merge crosses a boundary, and each token's bytes merge as alone, into it.
//! The result is the one sequence of reachable tokens with valid pairs, and a depth-first
//! search (longest token first) finds it; a position from which no search succeeded never
//! will (the token before it is the last of the unique result of the bytes before it).
//!
//! Checking a pair cheaply needs *monotone* ranks: every reachable token ranks after both
//! parts of its canonical split. Then each merge of a piece ranks after the one before
//! (a merge makes new pairs only with the token it made, which rank after it), so the
//! merges of `a`'s and `b`'s bytes come in rank order, and undoing them from the last
//! walks back through every state of the pair's boundary (see [`Backtrack::valid_pair`]).
//! A vocabulary without the property (tiktoken ranks may be in any order) gets no table,
//! and encoding keeps the merge by rank.

use super::canonical::merge_alone;
use super::pairs::PairTable;
use crate::error::Result;
use crate::interrupt;
use crate::Rank;
use super::Vocab;

/// Tokens (and so pieces) this encoder handles are shorter than this.
pub const MAX_LEN: usize = 128;

/// No token: in `next_prefix`, and in a trie node's low bits.
const NONE: u32 = u32::MAX >> 1;
/// In a trie node: it has children.
const HAS_CHILDREN: u32 = 1 << 31;
/// A free slot of the child table.
const FREE: u64 = u64::MAX;

#[derive(Debug, Clone)]
pub struct Backtrack {
    /// The canonical split of each reachable merged token; `[t, t]` for a single byte and
    /// for tokens merging never makes (never read for those).
    split: Vec<[Rank; 2]>,
    /// The longest reachable token that is a proper prefix of each reachable token.
    next_prefix: Vec<Rank>,
    /// Each token's length (0 past [`MAX_LEN`], never read there).
    len: Vec<u8>,
    /// The trie node of each single byte.
    root: [u32; 256],
    /// Per trie node: the reachable token ending there (or [`NONE`]), with [`HAS_CHILDREN`].
    nodes: Vec<u32>,
    /// Trie edges, open addressing: `child << 32 | parent << 8 | byte`.
    edges: Vec<u64>,
    /// 64 minus log2 of the number of edge slots.
    shift: u32,
}

impl Backtrack {
    /// The table of `tokens`, or None when their ranks are not monotone (or the trie would
    /// not fit its 24-bit node ids). `splits` are every (left, right, token), grouped by
    /// token in id order; `pairs` the canonical pair table built from them.
    pub(super) fn new(
        tokens: &[Vec<u8>],
        byte_ids: &[Rank; 256],
        splits: &[(Rank, Rank, Rank)],
        pairs: &PairTable,
    ) -> Result<Option<Self>> {
        let n = tokens.len();
        if n >= NONE as usize {
            return Ok(None);
        }
        let mut split: Vec<[Rank; 2]> = (0..n as Rank).map(|t| [t, t]).collect();
        let mut reachable = vec![false; n];
        for &b in byte_ids {
            reachable[b as usize] = true;
        }
        let mut parts = Vec::new();
        for group in splits.chunk_by(|a, b| a.2 == b.2) {
            let token = group[0].2;
            let bytes = &tokens[token as usize];
            interrupt::step(group.len())?;
            if bytes.len() >= MAX_LEN {
                continue;
            }
            let mut kept = group.iter().filter(|&&(l, r, _)| pairs.get(l, r) == Some(token));
            // Pairs with several splits keep one, the canonical one, when reachable (and
            // none otherwise); a single split or a long token's splits are unchecked.
            let canonical = if group.len() > 1 && bytes.len() <= super::canonical::CHECKED {
                kept.next().map(|&(l, r, _)| [l, r])
            } else {
                interrupt::step(bytes.len() * bytes.len())?;
                last_merge(pairs, byte_ids, bytes, &mut parts).filter(|_| parts == [token])
            };
            let Some([l, r]) = canonical else { continue };
            if l >= token || r >= token {
                return Ok(None);
            }
            split[token as usize] = [l, r];
            reachable[token as usize] = true;
        }
        let len = tokens.iter().map(|t| if t.len() < MAX_LEN { t.len() as u8 } else { 0 }).collect();
        let mut table = Self {
            split,
            next_prefix: vec![NONE; n],
            len,
            root: [0; 256],
            nodes: Vec::new(),
            edges: Vec::new(),
            shift: 0,
        };
        if !table.build_trie(tokens, byte_ids, &reachable)? {
            return Ok(None);
        }
        Ok(Some(table))
    }

    /// The trie of the reachable tokens and their `next_prefix`; false when it has too
    /// many nodes for 24-bit ids.
    fn build_trie(
        &mut self,
        tokens: &[Vec<u8>],
        byte_ids: &[Rank; 256],
        reachable: &[bool],
    ) -> Result<bool> {
        let mut nodes: Vec<u32> = vec![NONE];
        for (b, &id) in byte_ids.iter().enumerate() {
            self.root[b] = nodes.len() as u32;
            nodes.push(id);
        }
        // Nodes first, in a map, then laid into the open-addressed table once their
        // number is known.
        let mut edges: ahash::AHashMap<u32, u32> = ahash::AHashMap::new();
        for (id, bytes) in tokens.iter().enumerate() {
            if !reachable[id] || bytes.len() < 2 || bytes.len() >= MAX_LEN {
                continue;
            }
            interrupt::step(bytes.len())?;
            let mut node = self.root[bytes[0] as usize];
            for &b in &bytes[1..] {
                if nodes.len() >= 1 << 24 {
                    return Ok(false);
                }
                nodes[node as usize] |= HAS_CHILDREN;
                node = *edges.entry(node << 8 | u32::from(b)).or_insert_with(|| {
                    nodes.push(NONE);
                    nodes.len() as u32 - 1
                });
            }
            nodes[node as usize] = nodes[node as usize] & HAS_CHILDREN | id as u32;
        }
        let size = (edges.len() * 3 / 2).next_power_of_two().max(16);
        self.edges = vec![FREE; size];
        self.shift = 64 - size.trailing_zeros();
        let mask = size - 1;
        for (&key, &child) in &edges {
            let mut i = self.slot(key);
            while self.edges[i] != FREE {
                i = (i + 1) & mask;
            }
            self.edges[i] = u64::from(child) << 32 | u64::from(key);
        }
        self.nodes = nodes;
        // Each token's longest reachable proper prefix, by walking its bytes.
        for (id, bytes) in tokens.iter().enumerate() {
            if reachable[id] && bytes.len() >= 2 && bytes.len() < MAX_LEN {
                self.next_prefix[id] = self.longest(&bytes[..bytes.len() - 1]);
            }
        }
        Ok(true)
    }

    #[inline]
    fn slot(&self, key: u32) -> usize {
        (u64::from(key).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The child of trie node `node` by `byte`.
    #[inline]
    fn child(&self, node: u32, byte: u8) -> Option<u32> {
        let key = node << 8 | u32::from(byte);
        let mask = self.edges.len() - 1;
        let mut i = self.slot(key);
        loop {
            // SAFETY: `i` is masked to the table, whose length is a power of two.
            let e = unsafe { *self.edges.get_unchecked(i) };
            if e as u32 == key {
                return Some((e >> 32) as u32);
            }
            if e == FREE {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// The longest reachable token that `bytes` (not empty) starts with.
    #[inline]
    pub fn longest(&self, bytes: &[u8]) -> Rank {
        let mut node = self.root[bytes[0] as usize];
        let mut info = self.nodes[node as usize];
        let mut best = info & !HAS_CHILDREN;
        for &b in &bytes[1..] {
            if info & HAS_CHILDREN == 0 {
                break;
            }
            let Some(child) = self.child(node, b) else { break };
            node = child;
            info = self.nodes[node as usize];
            if info & !HAS_CHILDREN != NONE {
                best = info & !HAS_CHILDREN;
            }
        }
        best
    }

    /// The longest reachable token that is a proper prefix of `token`, if any.
    #[inline]
    pub fn shorter(&self, token: Rank) -> Option<Rank> {
        let p = self.next_prefix[token as usize];
        (p != NONE).then_some(p)
    }

    /// The length of a token [`Self::longest`] or [`Self::shorter`] gave.
    #[inline]
    pub fn len(&self, token: Rank) -> usize {
        self.len[token as usize] as usize
    }

    /// Whether reachable `a` then reachable `b` merge into `[a, b]`: no state of their
    /// merges has a pair across the boundary that is merged before the next merge. The
    /// merges come in rank order (monotone ranks), so walking back from the end, undoing
    /// the later of the two last merges each time (`b`'s on equal ranks: it is to the
    /// right), gives every boundary pair with the merge that ended it. A pair across
    /// the boundary is merged first when it ranks below a merge in `a` (which is to its
    /// left) or at most as high as one in `b`.
    #[inline]
    pub fn valid_pair(&self, vocab: &Vocab, mut a: Rank, mut b: Rank) -> bool {
        // The rank of the merge that ended the current state (none after the last).
        let mut limit = Rank::MAX;
        loop {
            if vocab.pair_rank(a, b).is_some_and(|joined| joined < limit) {
                return false;
            }
            let [_, a_right] = self.split[a as usize];
            let [b_left, _] = self.split[b as usize];
            let a_whole = a_right == a;
            let b_whole = b_left == b;
            if !a_whole && (b_whole || a > b) {
                limit = a;
                a = a_right;
            } else if !b_whole {
                limit = b + 1;
                b = b_left;
            } else {
                return true;
            }
        }
    }
}

/// Merges `bytes` alone through `pairs` (into `parts`) and returns the last merge's two
/// parts, if any.
fn last_merge(
    pairs: &PairTable,
    byte_ids: &[Rank; 256],
    bytes: &[u8],
    parts: &mut Vec<Rank>,
) -> Option<[Rank; 2]> {
    let mut last = None;
    merge_alone(pairs, byte_ids, bytes, parts, |l, r| last = Some([l, r]));
    last
}

#[cfg(test)]
mod tests {
    use crate::vocab::Vocab;
    use crate::Rank;

    fn vocab(extra: &[&[u8]]) -> Vocab {
        let mut ranks: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
        for (i, t) in extra.iter().enumerate() {
            ranks.push((t.to_vec(), 256 + i as Rank));
        }
        Vocab::from_ranks(ranks, &[]).unwrap()
    }

    #[test]
    fn monotone_ranks_get_a_table_others_do_not() {
        assert!(vocab(&[b"ab", b"bc", b"abc"]).backtrack().is_some());
        // "aba" alone merges "ab" (257) then "ab" + "a": its split ranks after it.
        assert!(vocab(&[b"aba", b"ab"]).backtrack().is_none());
        // An unreachable token ranked before its split is no obstacle: "abcd" alone
        // merges "bc" (257) first, and a | bc | d joins no further.
        let v = vocab(&[b"abcd", b"bc", b"ab", b"cd"]);
        let table = v.backtrack().expect("monotone where it matters");
        assert_eq!(table.longest(b"abcde"), 258, "the unreachable 'abcd' is not matched");
        assert_eq!(table.shorter(258), Some(b'a' as Rank));
        assert_eq!((table.len(258), table.len(b'a' as Rank)), (2, 1));
    }

    #[test]
    fn pairs_are_valid_when_their_bytes_merge_into_them() {
        let v = vocab(&[b"ab", b"bc", b"abc", b"aa"]);
        let t = v.backtrack().unwrap();
        let (a, b, c) = (b'a' as Rank, b'b' as Rank, b'c' as Rank);
        assert!(!t.valid_pair(&v, 256, c), "ab + c makes abc");
        assert!(t.valid_pair(&v, 258, a));
        assert!(!t.valid_pair(&v, a, 257), "a + bc: ab merges first");
        assert!(t.valid_pair(&v, c, 256));
        // "aaa": the left "aa" merges first, so a + aa is not valid but aa + a is.
        assert!(!t.valid_pair(&v, a, 259));
        assert!(t.valid_pair(&v, 259, a));
        assert!(!t.valid_pair(&v, a, b));
    }
}
