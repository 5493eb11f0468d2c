//! Token bytes -> id, for the lookup encoding does once per piece ("is this whole piece a
//! token?", usually yes for prose).
//!
//! The general map (`AHashMap<Vec<u8>, Rank>`) hashes the bytes a few at a time and keeps
//! its keys behind pointers. Here the hash reads the first and last 8 bytes (pieces are
//! short) and folds any middle in 16-byte steps; slots hold 32 bits of the hash beside
//! the id, so the token's bytes are read only when those bits match. Open addressing with
//! linear probing, at most half full, built once: no input can add to it, so a piece's
//! probe length is bounded by the vocabulary's own layout.

/// A free slot's id (ids are below `u32::MAX`).
const FREE: u32 = u32::MAX;
const SEED: u64 = 0x243F_6A88_85A3_08D3;
const MUL: u64 = 0x9E37_79B9_7F4A_7C15;

#[derive(Debug, Clone)]
pub struct TokenLookup {
    /// (high 32 bits of the hash, id); `FREE` ids are free slots. The length is a power of
    /// two, at least twice the number of tokens.
    slots: Vec<(u32, u32)>,
    /// Slot index mask (length - 1).
    mask: usize,
}

/// A 128-bit multiply folded to 64 bits (wyhash's mixer).
#[inline]
fn fold(a: u64, b: u64) -> u64 {
    let r = u128::from(a) * u128::from(b);
    (r as u64) ^ ((r >> 64) as u64)
}

#[inline]
fn word(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// A 64-bit hash of a short byte string (also keys encoding's piece cache).
#[inline]
pub fn hash(b: &[u8]) -> u64 {
    let n = b.len();
    let (x, y) = if n >= 8 {
        (word(b, 0), word(b, n - 8))
    } else if n >= 4 {
        let w = |at: usize| u64::from(u32::from_le_bytes(b[at..at + 4].try_into().expect("4")));
        (w(0), w(n - 4))
    } else if n > 0 {
        (u64::from(b[0]) | u64::from(b[n / 2]) << 8 | u64::from(b[n - 1]) << 16, 0)
    } else {
        (0, 0)
    };
    let mut h = fold(x ^ SEED, y ^ MUL ^ n as u64);
    // The bytes between the first and last 8 of a longer piece, 16 at a time (the last
    // step may overlap bytes already read: harmless for a hash).
    if n > 16 {
        let mut at = 8;
        while at < n - 8 {
            let s = at.min(n - 16);
            h = fold(h ^ word(b, s), word(b, s + 8) ^ MUL);
            at += 16;
        }
    }
    h
}

impl TokenLookup {
    /// The lookup of `tokens` (id = index; empty entries are holes, left out).
    pub fn new(tokens: &[Vec<u8>]) -> Self {
        let size = (2 * tokens.len()).next_power_of_two().max(16);
        let mut slots = vec![(0, FREE); size];
        let mask = size - 1;
        for (id, bytes) in tokens.iter().enumerate().filter(|(_, t)| !t.is_empty()) {
            let h = hash(bytes);
            let mut i = h as usize & mask;
            while slots[i].1 != FREE {
                i = (i + 1) & mask;
            }
            slots[i] = ((h >> 32) as u32, id as u32);
        }
        Self { slots, mask }
    }

    /// The id of `bytes` among `tokens` (the same list it was built from).
    #[inline]
    pub fn get(&self, tokens: &[Vec<u8>], bytes: &[u8]) -> Option<u32> {
        let h = hash(bytes);
        let tag = (h >> 32) as u32;
        let mut i = h as usize & self.mask;
        loop {
            let (t, id) = self.slots[i];
            if id == FREE {
                return None;
            }
            if t == tag && tokens[id as usize] == bytes {
                return Some(id);
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
        let mut longer = tokens[300].clone();
        longer.push(0);
        assert_eq!(lookup.get(&tokens, &longer), None);
    }
}
