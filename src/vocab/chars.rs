//! The characters a piece's merge may start from whole (see docs/design.md, "Encoding":
//! whole-character starts).
//!
//! Merging a piece starts from its single bytes. A multi-byte character `c` that is a
//! token can instead start as that token when the vocabulary guarantees the byte start
//! would make it first, whatever surrounds it:
//!
//! 1. merging `c`'s bytes alone gives the one token `c`; let `R` be the highest rank that
//!    run merges;
//! 2. every token made of a proper part of `c` and bytes outside it (`Y + c[..j]` or
//!    `c[j..] + Z`, `Y`, `Z` non-empty, `0 < j < len(c)`) ranks above `R`: while `c` is
//!    still in pieces, one of its own merges (rank at most `R`) is always ahead of any
//!    merge across its edge, so its bytes become `c` exactly as alone;
//! 3. every token `Y + c` or `c + Z` (non-empty `Y`, `Z`) ranks above `R`: merging `c`
//!    early cannot let such a pair jump ahead of a merge the byte start makes while `c`
//!    is still in pieces (that merge ranks at most `R`).
//!
//! Then the byte start's merges, less those inside such characters, are the whole-
//! character start's merges in the same order, so both give the same ids.

use ahash::AHashMap;

use super::Vocab;
use crate::Rank;

/// Code points per block of the table.
const BLOCK: usize = 256;
/// Blocks covering every code point (U+0000 to U+10FFFF).
const BLOCKS: usize = 0x11_0000 / BLOCK;

/// The token a character starts as, by code point: a block index per 256 code points
/// (0: no character of the block starts whole), then the tokens of the block's
/// characters (`Rank::MAX`: starts as bytes). A lookup is two loads.
#[derive(Debug, Clone)]
pub struct CharStarts {
    block_of: Vec<u16>,
    /// Block `i` (from 1) is `tokens[(i - 1) * BLOCK..][..BLOCK]`.
    tokens: Vec<Rank>,
}

/// A key for at most 4 bytes: the bytes, then their count.
fn short_key(bytes: &[u8]) -> u64 {
    debug_assert!(bytes.len() <= 4);
    bytes.iter().rev().fold(0u64, |k, &b| k << 8 | u64::from(b)) | (bytes.len() as u64) << 32
}

/// Whether `bytes` is one well-formed UTF-8 character of 2 to 4 bytes; its code point.
fn one_char(bytes: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(bytes).ok()?;
    let mut chars = s.chars();
    let c = chars.next()?;
    (chars.next().is_none() && bytes.len() >= 2).then_some(c as u32)
}

/// Byte-pair merging of a few bytes (one character) by rank, the tiktoken rule: the
/// final parts and the highest rank merged.
fn merge_alone(vocab: &Vocab, bytes: &[u8]) -> (Vec<Rank>, Rank) {
    let mut parts: Vec<Rank> = bytes.iter().map(|&b| vocab.byte_rank(b)).collect();
    let mut highest = 0;
    loop {
        let best = (0..parts.len().saturating_sub(1))
            .filter_map(|i| vocab.pair_rank(parts[i], parts[i + 1]).map(|r| (r, i)))
            .min();
        let Some((rank, i)) = best else { break };
        parts[i] = rank;
        parts.remove(i + 1);
        highest = highest.max(rank);
    }
    (parts, highest)
}

impl CharStarts {
    /// The characters of `vocab` that satisfy the conditions above.
    pub fn new(vocab: &Vocab) -> Self {
        // The lowest rank of a token that ends with the key's bytes and has more bytes
        // before them, or starts with them and has more after, for keys of 1 to 4 bytes
        // that a character can begin (a lead byte first) or end (a character's tail).
        let (mut ends, mut starts) = (AHashMap::new(), AHashMap::new());
        let mut chars = Vec::new();
        for (id, t) in vocab.tokens().iter().enumerate() {
            let id = id as Rank;
            if let Some(cp) = one_char(t) {
                chars.push((cp, id));
            }
            for j in 1..t.len().min(5) {
                let tail = &t[t.len() - j..];
                if tail[0] >= 0xC0 {
                    ends.entry(short_key(tail))
                        .and_modify(|r: &mut Rank| *r = (*r).min(id))
                        .or_insert(id);
                }
                let head = &t[..j];
                if head[0] >= 0x80 {
                    starts
                        .entry(short_key(head))
                        .and_modify(|r: &mut Rank| *r = (*r).min(id))
                        .or_insert(id);
                }
            }
        }
        let lowest = |map: &AHashMap<u64, Rank>, bytes: &[u8]| {
            map.get(&short_key(bytes)).copied().unwrap_or(Rank::MAX)
        };
        let mut table = Self { block_of: vec![0; BLOCKS], tokens: Vec::new() };
        for (cp, id) in chars {
            let c = vocab.token(id).expect("a listed token");
            let (parts, highest) = merge_alone(vocab, c);
            let safe = parts == [id]
                && (1..=c.len()).all(|j| lowest(&ends, &c[..j]) > highest)
                && (0..c.len()).all(|j| lowest(&starts, &c[j..]) > highest);
            if safe {
                table.insert(cp, id);
            }
        }
        table
    }

    fn insert(&mut self, cp: u32, id: Rank) {
        let block = cp as usize / BLOCK;
        if self.block_of[block] == 0 {
            self.tokens.extend([Rank::MAX; BLOCK]);
            self.block_of[block] = (self.tokens.len() / BLOCK) as u16;
        }
        let at = (usize::from(self.block_of[block]) - 1) * BLOCK + cp as usize % BLOCK;
        self.tokens[at] = id;
    }

    /// The token the character with code point `cp` starts as, if it starts whole.
    #[inline]
    pub fn get(&self, cp: u32) -> Option<Rank> {
        let block = *self.block_of.get(cp as usize / BLOCK)?;
        if block == 0 {
            return None;
        }
        let id = self.tokens[(usize::from(block) - 1) * BLOCK + cp as usize % BLOCK];
        (id != Rank::MAX).then_some(id)
    }

    /// How many characters start whole.
    pub fn len(&self) -> usize {
        self.tokens.iter().filter(|&&t| t != Rank::MAX).count()
    }

    /// Whether no character starts whole.
    pub fn is_empty(&self) -> bool {
        self.tokens.iter().all(|&t| t == Rank::MAX)
    }
}
