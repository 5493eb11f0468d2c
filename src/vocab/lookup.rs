//! Token bytes -> id, for the lookup encoding does once per piece ("is this whole piece a
//! token?", usually yes for prose).
//!
//! The general map (`AHashMap<Vec<u8>, Rank>`) hashes the bytes a few at a time and keeps
//! its keys behind pointers. Here a piece of at most 7 bytes is packed into one word (its
//! bytes and length) that is both hashed and kept in the slot, so a short token is found
//! without reading its bytes; a longer piece hashes its first and last 8 bytes and folds
//! any middle in 16-byte steps, and its slot's 32 bits of the hash, beside the id, decide
//! whether the token's bytes are compared. Those bytes are a copy kept here, the longer
//! tokens one after another, each after its length: one read where it starts (no
//! pointer to follow to a separate allocation), and for a token of up to 16 bytes two
//! 8-byte compares with the words the hash was made of instead of a call to `memcmp`.
//! Open addressing with linear probing, at most half full, built once: no input can add
//! to it, so a piece's probe length is bounded by the vocabulary's own layout.

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
    /// A token of at most [`INLINE`] bytes: packed by [`inline_key`] (at least
    /// [`SHORT_KEYS`]). A longer one: where its length and bytes start in `long`.
    inline: u64,
}

/// Tokens up to this long are compared through their packed key in the slot, without
/// reading their bytes.
const INLINE: usize = 7;

/// Every packed key is at least this (its top byte is the length, 1 to 7), and every
/// position in `long` below it.
const SHORT_KEYS: u64 = 1 << 56;

/// The bytes of a piece of 1 to [`INLINE`] bytes, little-endian, with the length in the top
/// byte (so no two pieces share a key, and no key is 0); 0 for any other length.
#[inline(always)]
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
    /// The tokens of more than [`INLINE`] bytes, each as its length (8 bytes,
    /// little-endian) then its bytes.
    long: Vec<u8>,
}

/// A 64-bit hash of a short byte string.
#[inline]
pub fn hash(b: &[u8]) -> u64 {
    PieceKey::of(b).hash
}

/// A piece's hash and the words it was hashed from, computed once per piece and shared by
/// encoding's piece cache and the token lookup. The words are exact for pieces of at most
/// 16 bytes: with the length they determine the bytes, so two such pieces are equal
/// exactly when their lengths and words are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PieceKey {
    /// 1 to [`INLINE`] bytes: their [`inline_key`], then 0; 8 or more: the first and the
    /// last 8 bytes (overlapping below 16); empty: 0, 0.
    pub words: [u64; 2],
    pub hash: u64,
}

/// The longest piece [`PieceKey::in_data`] reads in place.
const IN_DATA: usize = 16;

/// How [`PieceKey::in_data`] takes a piece of `n` bytes (`SHAPES[n]`) from the 8 bytes
/// at its start and the 8 bytes ending `back` bytes after it (its last 8 for `n >= 8`).
struct Shape {
    /// Keeps the piece's bytes of the first load.
    first: u64,
    /// Above them: the length of a piece of at most [`INLINE`] bytes, else 0.
    length: u64,
    /// Keeps the second load (0 for a piece of at most [`INLINE`] bytes).
    last: u64,
    back: usize,
}

const SHAPES: [Shape; IN_DATA + 1] = {
    let mut shapes = [const { Shape { first: 0, length: 0, last: 0, back: 0 } }; IN_DATA + 1];
    let mut n = 1;
    while n <= IN_DATA {
        shapes[n] = if n <= INLINE {
            Shape { first: (1 << (8 * n)) - 1, length: (n as u64) << 56, last: 0, back: n }
        } else {
            Shape { first: u64::MAX, length: 0, last: u64::MAX, back: 8 }
        };
        n += 1;
    }
    shapes
};

impl PieceKey {
    #[inline(always)]
    pub fn of(b: &[u8]) -> Self {
        let n = b.len();
        let (x, y) = match n {
            1..=INLINE => (inline_key(b), 0),
            // Empty: 0, 0; at least 8 bytes: the first and last 8.
            _ if n >= 8 => (read8(b, 0), read8(b, n - 8)),
            _ => (0, 0),
        };
        Self::of_words(b, x, y)
    }

    /// Where [`Self::in_data`] stops reading `data` in place: the first offset with fewer
    /// than 16 bytes after it. Computed once per text (or per batch of its pieces).
    #[inline]
    pub fn in_data_bound(data: &[u8]) -> usize {
        data.len().saturating_sub(IN_DATA - 1)
    }

    /// [`Self::of`] of `piece`, which lies in `data`, read in place before `bound`
    /// ([`Self::in_data_bound`] of `data`) when it has at most [`IN_DATA`] bytes. Pieces
    /// of 1 or 2, 3 to 7 and 8 to 16 bytes follow each other in no order a predictor
    /// learns, and branching on those classes mispredicted about one piece in three of
    /// English text; here the words come from two loads and masks read by the length.
    #[inline(always)]
    pub fn in_data(data: &[u8], piece: &[u8], bound: usize) -> Self {
        let n = piece.len();
        let at = (piece.as_ptr() as usize).wrapping_sub(data.as_ptr() as usize);
        // `at` below `bound`: the piece starts in `data` with 16 bytes to read; a piece
        // that does not lie there (never, in practice) takes `of`, the same key.
        if n.wrapping_sub(1) >= IN_DATA || at >= bound {
            return Self::of(piece);
        }
        let shape = &SHAPES[n];
        let x = (read8(data, at) & shape.first) | shape.length;
        let y = read8(data, at + n - shape.back) & shape.last;
        Self { words: [x, y], hash: fold(x ^ SEED, y ^ MUL ^ n as u64) }
    }

    /// The key of `b` from its words; pieces over 16 bytes also hash the bytes between
    /// them, 16 at a time (the last step may overlap bytes already read: harmless for a
    /// hash).
    #[inline(always)]
    fn of_words(b: &[u8], x: u64, y: u64) -> Self {
        let n = b.len();
        let mut h = fold(x ^ SEED, y ^ MUL ^ n as u64);
        if n > 16 {
            let mut at = 8;
            while at < n - 8 {
                let s = at.min(n - 16);
                h = fold(h ^ read8(b, s), read8(b, s + 8) ^ MUL);
                at += 16;
            }
        }
        Self { words: [x, y], hash: h }
    }
}

impl TokenLookup {
    /// The lookup of `tokens` (id = index; empty entries are holes, left out).
    pub fn new(tokens: &[Vec<u8>]) -> Self {
        let size = (2 * tokens.len()).next_power_of_two().max(16);
        let mut slots = vec![Slot { tag: 0, id: FREE, inline: 0 }; size];
        let mask = size - 1;
        let mut long = Vec::new();
        for (id, bytes) in tokens.iter().enumerate().filter(|(_, t)| !t.is_empty()) {
            let key = PieceKey::of(bytes);
            let mut i = key.hash as usize & mask;
            while slots[i].id != FREE {
                i = (i + 1) & mask;
            }
            let inline = if bytes.len() <= INLINE {
                key.words[0]
            } else {
                let at = long.len() as u64;
                long.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
                long.extend_from_slice(bytes);
                at
            };
            slots[i] = Slot { tag: (key.hash >> 32) as u32, id: id as u32, inline };
        }
        // Positions in `long` stay below the packed keys (memory runs out long before).
        assert!((long.len() as u64) < SHORT_KEYS, "token bytes beyond 2^56");
        Self { slots, mask, long }
    }

    /// Asks for the first slot a lookup of `piece` reads to be fetched into the cache.
    #[inline(always)]
    pub fn prefetch(&self, piece: &PieceKey) {
        crate::prefetch::prefetch(
            self.slots.as_ptr().wrapping_add(piece.hash as usize & self.mask),
        );
    }

    /// The id of `bytes`, if they are a token.
    #[inline]
    pub fn get(&self, bytes: &[u8]) -> Option<u32> {
        self.get_keyed(bytes, &PieceKey::of(bytes))
    }

    /// [`Self::get`] with the piece's key already computed (`PieceKey::of(bytes)`).
    /// Inlined into encoding's loop over pieces (a call there costs as much as a probe).
    #[inline(always)]
    pub fn get_keyed(&self, bytes: &[u8], piece: &PieceKey) -> Option<u32> {
        let n = bytes.len();
        let tag = (piece.hash >> 32) as u32;
        let mut i = piece.hash as usize & self.mask;
        loop {
            // SAFETY: `mask` is the slots' length (a power of two) minus one, so `i` is in
            // bounds (the check would cost a compare and branch per probe).
            let slot = unsafe { *self.slots.get_unchecked(i) };
            if slot.id == FREE {
                return None;
            }
            if slot.tag == tag
                && if n <= INLINE {
                    // A short piece matches on its packed key alone (an empty one on
                    // nothing: its key is 0, below every slot's).
                    slot.inline == piece.words[0] && n > 0
                } else {
                    slot.inline < SHORT_KEYS
                        && self.long_matches(slot.inline as usize, bytes, piece)
                }
            {
                return Some(slot.id);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Whether the long token stored at `at` is `bytes` (more than [`INLINE`] bytes).
    #[inline(always)]
    fn long_matches(&self, at: usize, bytes: &[u8], piece: &PieceKey) -> bool {
        let n = bytes.len();
        let from = at + 8;
        if read8(&self.long, at) != n as u64 {
            return false;
        }
        if n <= 16 {
            // The first and last 8 bytes cover all of them.
            read8(&self.long, from) == piece.words[0]
                && read8(&self.long, from + n - 8) == piece.words[1]
        } else {
            self.long[from..from + n] == *bytes
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
            assert_eq!(lookup.get(t), Some(id as u32), "{t:?}");
        }
        assert_eq!(lookup.get(b""), None);
        assert_eq!(lookup.get(&[7; 40]), None);
        // Short pieces that differ from a token in one byte or in length only.
        for t in tokens.iter().filter(|t| (1..=INLINE).contains(&t.len())) {
            let mut other = t.clone();
            other[t.len() - 1] ^= 0x80;
            assert_ne!(lookup.get(&other), lookup.get(t), "{t:?}");
        }
        let short = |b: &[u8]| inline_key(b);
        assert_ne!(short(b"aaaa"), short(b"aaaaa"));
        assert_ne!(short(b"ab"), short(b"abb"));
        assert_ne!(short(b"\0"), short(b"\0\0"));
        let mut longer = tokens[300].clone();
        longer.push(0);
        assert_eq!(lookup.get(&longer), None);
    }

    /// A piece's key read in place is its key: at every offset and length (up to past
    /// [`IN_DATA`]), near both ends of the data, in data shorter than 16 bytes, and for a
    /// piece that lies in another buffer.
    #[test]
    fn keys_read_in_place_are_the_keys_of_the_pieces() {
        let mut rng = crate::test_rng::Rng(3);
        for len in [0, 1, 7, 15, 16, 17, 40] {
            let data: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            let bound = PieceKey::in_data_bound(&data);
            for at in 0..=len {
                for n in 0..=(len - at) {
                    let piece = &data[at..at + n];
                    assert_eq!(PieceKey::in_data(&data, piece, bound), PieceKey::of(piece));
                }
            }
        }
        let (data, other) = ([7u8; 64], *b"elsewhere");
        let bound = PieceKey::in_data_bound(&data);
        assert_eq!(PieceKey::in_data(&data, &other, bound), PieceKey::of(&other));
    }

    /// Runs of one byte (0x00, 0xFF, 'a') share their key words across lengths 8 to 16
    /// (the first and last 8 bytes are the same), so only the length tells them apart;
    /// every length class, found or not found, next to tokens one byte longer or shorter.
    #[test]
    fn runs_of_one_byte_differ_by_length_alone() {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        // Every other length is a token, so each missing length sits between two present.
        for byte in [0x00, 0xFF, b'a'] {
            for len in (2..=40).step_by(2) {
                tokens.push(vec![byte; len]);
            }
        }
        let lookup = TokenLookup::new(&tokens);
        for (id, t) in tokens.iter().enumerate() {
            assert_eq!(lookup.get(t), Some(id as u32), "{t:?}");
        }
        for byte in [0x00, 0xFF, b'a'] {
            for len in (3..=41).step_by(2) {
                assert_eq!(lookup.get(&vec![byte; len]), None, "{len} x {byte:#x}");
            }
            // A token's bytes with its last byte changed, at every length class.
            for len in (2..=40).step_by(2) {
                let mut other = vec![byte; len];
                *other.last_mut().unwrap() ^= 1;
                assert_eq!(lookup.get(&other), None, "{other:?}");
            }
        }
        assert_eq!(PieceKey::of(&[0; 9]).words, PieceKey::of(&[0; 10]).words);
    }
}
