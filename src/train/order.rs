//! Token byte order, mostly without reading bytes: every token keeps its first 8 bytes as a
//! big-endian `u64` (zero-padded), and two tokens whose keys differ compare as their keys
//! do. Only tokens that share their first 8 bytes (or differ only in trailing zero bytes
//! there) fall back to comparing bytes. The merge loop's tie-break (smallest left bytes,
//! then smallest right bytes) is thereby two integer comparisons per side. Why a differing
//! key decides: see [`prefix_key`].

use std::cmp::Ordering;
use std::rc::Rc;

use crate::hash_parts::prefix_key;
use crate::vocab::Growth;
use crate::Rank;

/// The merge loop's growing vocabulary (bytes shared by the id table and the bytes map).
pub type Tokens = Growth<Rc<[u8]>>;

/// The 8-byte key of every token id (0 at a hole: holes never occur in words).
#[derive(Default)]
pub struct ByteOrder {
    keys: Vec<u64>,
}

impl ByteOrder {
    /// The keys of every token of `tokens`.
    pub fn of(tokens: &Tokens) -> Self {
        Self { keys: (0..tokens.len() as Rank).map(|id| prefix_key(tokens.bytes(id))).collect() }
    }

    /// Adds the key of token `id` (new, or any id past the last one keyed) from `tokens`.
    pub fn add(&mut self, id: Rank, tokens: &Tokens) {
        if self.keys.len() <= id as usize {
            self.keys.resize(id as usize + 1, 0);
        }
        self.keys[id as usize] = prefix_key(tokens.bytes(id));
    }

    /// Tokens `a` and `b` in the order of their bytes (`tokens` holds the bytes).
    #[inline]
    pub fn cmp(&self, a: Rank, b: Rank, tokens: &Tokens) -> Ordering {
        if a == b {
            return Ordering::Equal;
        }
        match self.keys[a as usize].cmp(&self.keys[b as usize]) {
            Ordering::Equal => cold_cmp(tokens.bytes(a), tokens.bytes(b)),
            decided => decided,
        }
    }
}

#[cold]
fn cold_cmp(a: &[u8], b: &[u8]) -> Ordering {
    a.cmp(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Vocab;

    /// Keys order tokens as their bytes, including prefixes, zero bytes and long tokens
    /// that share their first 8 bytes.
    #[test]
    fn tokens_compare_as_bytes() {
        let mut tokens: Tokens = Vocab::bytes_only().growth(&[]);
        // Each token made by joining its bytes one at a time onto the token so far.
        let make = |tokens: &mut Tokens, bytes: &[u8]| {
            let first = Rank::from(bytes[0]);
            bytes[1..].iter().fold(first, |id, &b| tokens.join(id, Rank::from(b)).unwrap().token)
        };
        let words: [&[u8]; 12] = [
            b"a\x00",
            b"ab",
            b"abcdefgh",
            b"abcdefghi",
            b"abcdefgh\x00",
            b"abcdefgha",
            b"abcdefg",
            b"abcdefg\x00\x00",
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff",
            b"\x00\x00",
            b"b\x00",
            b"\x00",
        ];
        let mut ids: Vec<Rank> = words.iter().map(|w| make(&mut tokens, w)).collect();
        let mut order = ByteOrder::of(&tokens);
        for late in [&b"abcdefgh\x01"[..], b"abcdefgh\x00\x00", b"a\x00\x00"] {
            let id = make(&mut tokens, late);
            order.add(id, &tokens);
            ids.push(id);
        }
        ids.extend([0, 1, 97, 98, 255]);
        for &a in &ids {
            for &b in &ids {
                let want = tokens.bytes(a)[..].cmp(&tokens.bytes(b)[..]);
                assert_eq!(order.cmp(a, b, &tokens), want, "{a} {b}");
            }
        }
    }
}
