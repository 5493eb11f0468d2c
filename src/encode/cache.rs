//! Piece encodings remembered within one document.
//!
//! Prose repeats its words: a piece that is not a whole token ("tokenizer", "ing,") tends
//! to come back many times in one document, and merging it again costs a pair-table
//! lookup per merge. The cache is direct-mapped by the piece's hash, owns copies of the
//! bytes and ids it holds (so a hit is an exact comparison of bytes, never a guess), and
//! lives for one encoding call: no state is shared between calls or threads, so the ids
//! never depend on what was encoded before or on the thread count.

use crate::vocab::{hash_bytes, Vocab};
use crate::Rank;

/// Pieces longer than this are merged without the cache (rare, and a slot keeps the
/// length in a byte).
pub const MAX_CACHED: usize = 255;

/// The most slots a cache has (12 bytes each: 48 KiB, well inside L2).
const MAX_SLOTS: usize = 4096;

/// Bytes or ids held before the cache starts afresh (a document of many distinct long
/// pieces would otherwise grow it with the document).
const DEFAULT_LIMIT: usize = 1 << 20;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// Where the piece's bytes and ids start in `bytes` and `ids`.
    bytes_at: u32,
    ids_at: u32,
    /// Bytes and ids of the piece; 0 bytes: an empty slot (cached pieces have 3 or more).
    len: u8,
    n_ids: u8,
}

#[derive(Debug)]
pub struct PieceCache {
    /// Empty until the first miss, then a power of two long.
    slots: Vec<Slot>,
    /// The number of slots to make at the first miss.
    size: usize,
    bytes: Vec<u8>,
    ids: Vec<Rank>,
    /// When `bytes` or `ids` would pass this, every slot is emptied.
    limit: usize,
}

impl PieceCache {
    /// A cache for a text of `text_len` bytes: about one slot per 64 bytes, 16 to
    /// [`MAX_SLOTS`]. Nothing is allocated until a piece is merged.
    pub fn for_text(text_len: usize) -> Self {
        Self::with_size((text_len / 64).clamp(16, MAX_SLOTS).next_power_of_two(), DEFAULT_LIMIT)
    }

    fn with_size(size: usize, limit: usize) -> Self {
        debug_assert!(size.is_power_of_two());
        Self { slots: Vec::new(), size, bytes: Vec::new(), ids: Vec::new(), limit }
    }

    /// Appends the tokens of `piece` (3 to [`MAX_CACHED`] bytes, not a whole token) to
    /// `out`, by [`super::encode_piece_parts`] or from an earlier identical piece.
    pub fn encode_parts(&mut self, vocab: &Vocab, piece: &[u8], out: &mut Vec<Rank>) {
        debug_assert!((3..=MAX_CACHED).contains(&piece.len()));
        if self.slots.is_empty() {
            self.slots = vec![Slot::default(); self.size];
        }
        let at = (hash_bytes(piece) >> 40) as usize & (self.slots.len() - 1);
        let slot = self.slots[at];
        if usize::from(slot.len) == piece.len() {
            let from = slot.bytes_at as usize;
            if self.bytes[from..from + piece.len()] == *piece {
                let from = slot.ids_at as usize;
                out.extend_from_slice(&self.ids[from..from + usize::from(slot.n_ids)]);
                return;
            }
        }
        let start = out.len();
        super::encode_piece_parts(vocab, piece, out);
        let new = &out[start..];
        if self.bytes.len() + piece.len() > self.limit || self.ids.len() + new.len() > self.limit {
            self.slots.fill(Slot::default());
            self.bytes.clear();
            self.ids.clear();
        }
        self.slots[at] = Slot {
            bytes_at: self.bytes.len() as u32,
            ids_at: self.ids.len() as u32,
            len: piece.len() as u8,
            n_ids: new.len() as u8,
        };
        self.bytes.extend_from_slice(piece);
        self.ids.extend_from_slice(new);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::tests::{lcg, random_vocab};

    #[test]
    fn cached_ids_are_the_merged_ids() {
        let v = random_vocab(7, b"abcde", 300, 6);
        let mut next = lcg(11);
        // A few hundred distinct pieces, each drawn many times: hits, misses, and (with 1
        // or 2 slots, and a small limit) collisions and fresh starts.
        let pieces: Vec<Vec<u8>> = (0..300)
            .map(|_| {
                let len = 3 + next() % 40;
                (0..len).map(|_| b'a' + (next() % 5) as u8).collect::<Vec<u8>>()
            })
            .filter(|p| v.rank(p).is_none())
            .collect();
        let mut caches = [
            PieceCache::for_text(1 << 20),
            PieceCache::with_size(1, DEFAULT_LIMIT),
            PieceCache::with_size(2, 100),
        ];
        let mut hits = [0; 3];
        for _ in 0..3000 {
            let piece = &pieces[next() % pieces.len()];
            let mut want = Vec::new();
            crate::encode::encode_piece_parts(&v, piece, &mut want);
            assert!(want.len() > 1, "{piece:?} is not a token");
            for (cache, hits) in caches.iter_mut().zip(&mut hits) {
                let mut got = vec![9]; // appends, never overwrites
                let before = cache.ids.len();
                cache.encode_parts(&v, piece, &mut got);
                assert_eq!(got[1..], want[..], "{:?}", String::from_utf8_lossy(piece));
                *hits += usize::from(cache.ids.len() == before);
            }
        }
        // About 300 distinct pieces in 3,000 draws: the big cache misses each about once.
        assert!(hits[0] > 2_000 && hits[1] > 0 && hits[2] > 0, "hits: {hits:?}");
    }
}
