//! Token bytes -> id, for the lookup encoding does once per piece ("is this whole piece a
//! token?", usually yes for prose).
//!
//! The general map (`AHashMap<Vec<u8>, Rank>`) hashes the bytes a few at a time and keeps
//! its keys behind pointers. Here a piece of at most 7 bytes is packed into one word (its
//! bytes and length) that is both hashed and kept in the slot, so a short token is found
//! without reading its bytes; a longer piece hashes its first and last 8 bytes and folds
//! any middle in 16-byte steps, and its slot's 32 bits of the hash, beside the id, decide
//! whether the token's bytes are compared. Open addressing with
//! linear probing, at most half full, built once: no input can add to it, so a piece's
//! probe length is bounded by the vocabulary's own layout.

use crate::hash_parts::{fold, read4, read8};

/// A free slot's id (ids are below `u32::MAX`).
const FREE: u32 = u32::MAX;
const SEED: u64 = 0x243F_6A88_85A3_08D3;
const MUL: u64 = 0x9E37_79B9_7F4A_7C15;

#[derive(Debug, Clone, Copy)]
struct Slot {
    /// High 32 bits of the hash.
    tag: u32,
    /// The token's id; `FREE`: a free slot.
    id: u32,
    /// A token of at most [`INLINE`] bytes, packed by [`inline_key`]; 0 for longer ones.
    inline: u64,
}

/// Tokens up to this long are compared through their packed key in the slot, without
/// reading their bytes.
const INLINE: usize = 7;

/// The bytes of a piece of 1 to [`INLINE`] bytes, little-endian, with the length in the top
/// byte (so no two pieces share a key, and no key is 0); 0 for any other length.
#[inline]
fn inline_key(b: &[u8]) -> u64 {
    let n = b.len();
    let packed = match n {
        4..=INLINE => {
            // The two reads overlap on the same bytes, so or-ing them is exact.
            read4(b, 0) | read4(b, n - 4) << (8 * (n - 4))
        }
        1..=3 => {
            u64::from(b[0])
                | u64::from(b[n / 2]) << (8 * (n / 2))
                | u64::from(b[n - 1]) << (8 * (n - 1))
        }
        _ => return 0,
    };
    packed | (n as u64) << 56
}

#[derive(Debug, Clone)]
pub struct TokenLookup {
    /// Open addressing; the length is a power of two, at least twice the number of tokens.
    slots: Vec<Slot>,
    /// Slot index mask (length - 1).
    mask: usize,
}

/// A 64-bit hash of a short byte string (also keys encoding's piece cache).
#[inline]
pub fn hash(b: &[u8]) -> u64 {
    hash_with(b, inline_key(b))
}

/// [`hash`], given the piece's [`inline_key`]: a short piece hashes its key alone.
#[inline]
fn hash_with(b: &[u8], key: u64) -> u64 {
    if key != 0 {
        return fold(key ^ SEED, MUL);
    }
    // Empty, or at least 8 bytes: the first and last 8, then the bytes between them 16 at
    // a time (the last step may overlap bytes already read: harmless for a hash).
    let n = b.len();
    let (x, y) = if n >= 8 { (read8(b, 0), read8(b, n - 8)) } else { (0, 0) };
    let mut h = fold(x ^ SEED, y ^ MUL ^ n as u64);
    if n > 16 {
        let mut at = 8;
        while at < n - 8 {
            let s = at.min(n - 16);
            h = fold(h ^ read8(b, s), read8(b, s + 8) ^ MUL);
            at += 16;
        }
    }
    h
}

impl TokenLookup {
    /// The lookup of `tokens` (id = index; empty entries are holes, left out).
    pub fn new(tokens: &[Vec<u8>]) -> Self {
        let size = (2 * tokens.len()).next_power_of_two().max(16);
        let mut slots = vec![Slot { tag: 0, id: FREE, inline: 0 }; size];
        let mask = size - 1;
        for (id, bytes) in tokens.iter().enumerate().filter(|(_, t)| !t.is_empty()) {
            let key = inline_key(bytes);
            let h = hash_with(bytes, key);
            let mut i = h as usize & mask;
            while slots[i].id != FREE {
                i = (i + 1) & mask;
            }
            slots[i] = Slot { tag: (h >> 32) as u32, id: id as u32, inline: key };
        }
        Self { slots, mask }
    }

    /// The id of `bytes` among `tokens` (the same list it was built from).
    #[inline]
    pub fn get(&self, tokens: &[Vec<u8>], bytes: &[u8]) -> Option<u32> {
        let key = inline_key(bytes);
        let h = hash_with(bytes, key);
        let tag = (h >> 32) as u32;
        let mut i = h as usize & self.mask;
        loop {
            let slot = self.slots[i];
            if slot.id == FREE {
                return None;
            }
            // A short piece matches on its packed key alone (a long token's key is 0).
            if slot.tag == tag
                && (if key != 0 { slot.inline == key } else { tokens[slot.id as usize] == bytes })
            {
                return Some(slot.id);
            }
            i = (i + 1) & self.mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_token_and_nothing_else() {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        for len in 2..70 {
            for k in 0..20u8 {
                tokens.push((0..len).map(|i| (i as u8).wrapping_mul(31) ^ k).collect());
            }
        }
        tokens.push(Vec::new()); // a hole
        let lookup = TokenLookup::new(&tokens);
        for (id, t) in tokens.iter().enumerate().filter(|(_, t)| !t.is_empty()) {
            assert_eq!(lookup.get(&tokens, t), Some(id as u32), "{t:?}");
        }
        assert_eq!(lookup.get(&tokens, b""), None);
        assert_eq!(lookup.get(&tokens, &[7; 40]), None);
        // Short pieces that differ from a token in one byte or in length only.
        for t in tokens.iter().filter(|t| (1..=INLINE).contains(&t.len())) {
            let mut other = t.clone();
            other[t.len() - 1] ^= 0x80;
            assert_ne!(lookup.get(&tokens, &other), lookup.get(&tokens, t), "{t:?}");
        }
        let short = |b: &[u8]| inline_key(b);
        assert_ne!(short(b"aaaa"), short(b"aaaaa"));
        assert_ne!(short(b"ab"), short(b"abb"));
        assert_ne!(short(b"\0"), short(b"\0\0"));
        let mut longer = tokens[300].clone();
        longer.push(0);
        assert_eq!(lookup.get(&tokens, &longer), None);
    }
}
