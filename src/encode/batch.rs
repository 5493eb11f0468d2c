//! Pieces encoded a batch at a time, so the whole-token lookups' cache misses overlap
//! (see "Encoding" in docs/design.md).

use super::cache::PieceCache;
use super::encode_piece_keyed;
use crate::pretokenize::{each_piece, Sink};
use crate::vocab::{PieceKey, Vocab};
use crate::Rank;

/// Pieces encoded together by [`PieceBatch`].
const BATCH: usize = 64;

/// The pieces of one text not yet encoded. [`super::encode_piece_cached`] for each, in
/// order, but a batch at a time: every piece's key is computed and its whole-token slot
/// asked for first, then the pieces are looked up and encoded, so the cache misses of
/// rare tokens' slots overlap instead of following one another.
pub struct PieceBatch<'t> {
    /// The text the pieces lie in (a piece's key is read there).
    data: &'t [u8],
    pieces: [&'t [u8]; BATCH],
    len: usize,
}

impl<'t> PieceBatch<'t> {
    /// A batch for the pieces of `data`.
    pub fn new(data: &'t [u8]) -> Self {
        Self { data, pieces: [&[]; BATCH], len: 0 }
    }

    /// Holds `piece` (of the batch's text), encoding the pieces held once there are [`BATCH`].
    #[inline(always)]
    pub fn push(
        &mut self,
        piece: &'t [u8],
        vocab: &Vocab,
        out: &mut Vec<Rank>,
        cache: &mut PieceCache,
    ) {
        // Below BATCH already; the modulo only spares a bounds check.
        self.pieces[self.len % BATCH] = piece;
        self.len += 1;
        if self.len == BATCH {
            self.flush(vocab, out, cache);
        }
    }

    /// [`PieceBatch::push`] of the pieces [`Sink::pieces`] is given, with the count of
    /// pieces held in a register.
    #[inline(always)]
    fn push_ends(
        &mut self,
        (bytes, from, pos, ends): (&'t [u8], usize, usize, u64),
        vocab: &Vocab,
        out: &mut Vec<Rank>,
        cache: &mut PieceCache,
    ) -> usize {
        let mut len = self.len;
        let end = each_piece(bytes, from, pos, ends, |piece| {
            // Below BATCH already; the modulo only spares a bounds check.
            self.pieces[len % BATCH] = piece;
            len += 1;
            if len == BATCH {
                self.len = len;
                self.flush(vocab, out, cache);
                len = 0;
            }
        });
        self.len = len;
        end
    }

    /// Appends the tokens of the pieces held to `out`, in order.
    #[inline(never)]
    pub fn flush(&mut self, vocab: &Vocab, out: &mut Vec<Rank>, cache: &mut PieceCache) {
        let pieces = &self.pieces[..self.len];
        let mut keys = [PieceKey::default(); BATCH];
        let bound = PieceKey::in_data_bound(self.data);
        let slots = cache.slots_ahead();
        for (&piece, key) in pieces.iter().zip(&mut keys) {
            *key = PieceKey::in_data(self.data, piece, bound);
            vocab.prefetch_rank(key);
            slots.prefetch(key);
        }
        for (&piece, key) in pieces.iter().zip(&keys) {
            encode_piece_keyed(vocab, piece, key, out, cache);
        }
        self.len = 0;
    }
}

/// The splitter's pieces, batched ([`PieceBatch`]) and encoded into `out`.
pub struct ToBatch<'b, 't> {
    pub batch: &'b mut PieceBatch<'t>,
    pub vocab: &'b Vocab,
    pub out: &'b mut Vec<Rank>,
    pub cache: &'b mut PieceCache,
}

impl<'t> Sink<'t> for ToBatch<'_, 't> {
    #[inline(always)]
    fn piece(&mut self, piece: &'t [u8]) {
        self.batch.push(piece, self.vocab, self.out, self.cache);
    }

    #[inline(always)]
    fn pieces(&mut self, bytes: &'t [u8], from: usize, pos: usize, ends: u64) -> usize {
        self.batch.push_ends((bytes, from, pos, ends), self.vocab, self.out, self.cache)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::tests::{lcg, random_vocab};
    use crate::encode::{cache, encode_piece, encode_piece_cached};

    /// Pieces encoded a batch at a time give the ids of encoding them one by one, for
    /// every count of pieces around the batch's size, pieces of every length class (one
    /// or two bytes, whole tokens, merged ones, past the cache's limit), through a cache
    /// that holds them all already and through an empty one.
    #[test]
    fn batches_encode_as_pieces_one_by_one() {
        let v = random_vocab(11, b"abcd", 300, 12);
        let mut next = lcg(5);
        let text: Vec<u8> = (0..40_000).map(|_| b"abcd"[next() % 4]).collect();
        for count in [0, 1, BATCH - 1, BATCH, BATCH + 1, 2 * BATCH, 3 * BATCH + 7] {
            let mut pieces: Vec<&[u8]> = Vec::new();
            let mut at = 0;
            for i in 0..count {
                let len = match i % 5 {
                    0 => 1 + next() % 2,
                    1 => 3 + next() % 6,
                    2 => 9 + next() % 40,
                    3 => cache::MAX_CACHED + 1 + next() % 30,
                    _ => 3 + next() % 3,
                };
                pieces.push(&text[at..at + len]);
                at += len;
            }
            let mut one_by_one = Vec::new();
            let mut cache = PieceCache::of_thread();
            for &piece in &pieces {
                encode_piece_cached(&v, piece, &mut one_by_one, &mut cache);
            }
            let mut reference = Vec::new();
            for &piece in &pieces {
                encode_piece(&v, piece, &mut reference);
            }
            assert_eq!(one_by_one, reference, "{count} pieces");
            // Through the cache that holds them all, then through an empty one (the
            // thread's is in use, so this one starts empty), where every piece is merged.
            let fresh = PieceCache::of_thread();
            for mut cache in [cache, fresh] {
                let mut batched = Vec::new();
                let mut batch = PieceBatch::new(&text);
                for &piece in &pieces {
                    batch.push(piece, &v, &mut batched, &mut cache);
                }
                batch.flush(&v, &mut batched, &mut cache);
                assert_eq!(batched, reference, "{count} pieces");
            }
        }
    }
}
