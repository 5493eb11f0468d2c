//! Piece encodings remembered between calls on one thread.
//!
//! Prose repeats its words: a piece that is not a whole token ("tokenizer", "ing,") tends
//! to come back many times, in one document and in the next, and merging it again costs a
//! pair-table lookup per merge. The cache is direct-mapped by the piece's hash, owns
//! copies of the bytes and ids it holds (so a hit is an exact comparison of bytes, never a
//! guess), and belongs to one thread: an encoding call takes the thread's cache and gives
//! it back when done, so no cache is ever shared between threads. It holds the merges of
//! one vocabulary (it empties itself when a call brings another), and a hit gives exactly
//! what merging gives, so ids never depend on what was encoded before or on the thread
//! count. Its memory is bounded per thread (slots, and the bytes and ids they point into).

use std::cell::Cell;

use crate::vocab::{hash_bytes, Vocab};
use crate::Rank;

/// Pieces longer than this are merged without the cache (rare, and a slot keeps the
/// length in a byte).
pub const MAX_CACHED: usize = 255;

/// The slots of a thread's cache (12 bytes each: 48 KiB, well inside L2).
const SLOTS: usize = 4096;

/// Bytes or ids held before the cache starts afresh (the bytes and ids of slots that were
/// overwritten stay until then): at most 1.3 MiB a thread with the slots.
const DEFAULT_LIMIT: usize = 1 << 18;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// Where the piece's bytes and ids start in `bytes` and `ids`.
    bytes_at: u32,
    ids_at: u32,
    /// Bytes and ids of the piece; 0 bytes: an empty slot (cached pieces have 3 or more).
    len: u8,
    n_ids: u8,
}

#[derive(Debug, Default)]
struct Store {
    /// The vocabulary whose merges the slots hold ([`Vocab::identity`]; 0: none yet).
    vocab: u64,
    /// Empty until the first miss, then a power of two long.
    slots: Vec<Slot>,
    bytes: Vec<u8>,
    ids: Vec<Rank>,
}

thread_local! {
    /// The thread's cache between calls (None while a call holds it).
    static KEPT: Cell<Option<Store>> = const { Cell::new(None) };
}

#[derive(Debug)]
pub struct PieceCache {
    store: Store,
    /// The number of slots to make at the first miss.
    size: usize,
    /// When `bytes` or `ids` would pass this, every slot is emptied.
    limit: usize,
    /// Whether the store goes back to the thread when done.
    kept: bool,
}

impl PieceCache {
    /// The calling thread's cache, given back when dropped (a fresh one if the thread's is
    /// in use further up the stack). Nothing is allocated until a piece is merged.
    pub fn of_thread() -> Self {
        let store = KEPT.try_with(Cell::take).ok().flatten().unwrap_or_default();
        Self { store, size: SLOTS, limit: DEFAULT_LIMIT, kept: true }
    }

    /// A cache of its own (not the thread's), for tests of collisions and fresh starts.
    #[cfg(test)]
    fn with_size(size: usize, limit: usize) -> Self {
        debug_assert!(size.is_power_of_two());
        Self { store: Store::default(), size, limit, kept: false }
    }

    /// Appends the tokens of `piece` (3 to [`MAX_CACHED`] bytes, not a whole token) to
    /// `out`, by [`super::encode_piece_parts`] or from an earlier identical piece.
    pub fn encode_parts(&mut self, vocab: &Vocab, piece: &[u8], out: &mut Vec<Rank>) {
        debug_assert!((3..=MAX_CACHED).contains(&piece.len()));
        let store = &mut self.store;
        if store.vocab != vocab.identity() {
            store.slots.clear();
            store.bytes.clear();
            store.ids.clear();
            store.vocab = vocab.identity();
        }
        if store.slots.is_empty() {
            store.slots = vec![Slot::default(); self.size];
        }
        let at = (hash_bytes(piece) >> 40) as usize & (store.slots.len() - 1);
        let slot = store.slots[at];
        if usize::from(slot.len) == piece.len() {
            let from = slot.bytes_at as usize;
            if store.bytes[from..from + piece.len()] == *piece {
                let from = slot.ids_at as usize;
                out.extend_from_slice(&store.ids[from..from + usize::from(slot.n_ids)]);
                return;
            }
        }
        let start = out.len();
        super::encode_piece_parts(vocab, piece, out);
        let new = &out[start..];
        if store.bytes.len() + piece.len() > self.limit || store.ids.len() + new.len() > self.limit
        {
            store.slots.fill(Slot::default());
            store.bytes.clear();
            store.ids.clear();
        }
        // The slot is written last, so it never points past what is stored.
        let slot = Slot {
            bytes_at: store.bytes.len() as u32,
            ids_at: store.ids.len() as u32,
            len: piece.len() as u8,
            n_ids: new.len() as u8,
        };
        store.bytes.extend_from_slice(piece);
        store.ids.extend_from_slice(new);
        store.slots[at] = slot;
    }
}

impl Drop for PieceCache {
    fn drop(&mut self) {
        if self.kept {
            let store = std::mem::take(&mut self.store);
            // A thread being torn down has no place to keep it: then it is freed.
            let _ = KEPT.try_with(|kept| kept.set(Some(store)));
        }
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
            PieceCache::of_thread(),
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
                let before = cache.store.ids.len();
                cache.encode_parts(&v, piece, &mut got);
                assert_eq!(got[1..], want[..], "{:?}", String::from_utf8_lossy(piece));
                *hits += usize::from(cache.store.ids.len() == before);
            }
        }
        // About 300 distinct pieces in 3,000 draws: the big cache misses each about once.
        assert!(hits[0] > 2_000 && hits[1] > 0 && hits[2] > 0, "hits: {hits:?}");
    }

    /// Random pieces of `alphabet` that are not whole tokens of `v`.
    fn pieces(v: &Vocab, seed: u64, n: usize) -> Vec<Vec<u8>> {
        let mut next = lcg(seed);
        (0..n)
            .map(|_| (0..3 + next() % 30).map(|_| b'a' + (next() % 5) as u8).collect::<Vec<u8>>())
            .filter(|p| v.rank(p).is_none())
            .collect()
    }

    /// One call's worth of pieces through the thread's cache: whether any came from an
    /// earlier call.
    fn call(v: &Vocab, pieces: &[Vec<u8>]) -> bool {
        let mut cache = PieceCache::of_thread();
        let from_before = cache.store.vocab == v.identity() && !cache.store.ids.is_empty();
        for piece in pieces {
            let (mut want, mut got) = (Vec::new(), Vec::new());
            crate::encode::encode_piece_parts(v, piece, &mut want);
            cache.encode_parts(v, piece, &mut got);
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(piece));
        }
        from_before
    }

    /// Calls that alternate between two vocabularies over the same letters (the same
    /// pieces merge differently), on several threads at once: every id is the merged one,
    /// and a call finds the pieces of the calls before it.
    #[test]
    fn the_thread_cache_holds_one_vocabulary_between_calls() {
        let vocabs = [random_vocab(3, b"abcde", 300, 6), random_vocab(4, b"abcde", 300, 6)];
        let all = pieces(&vocabs[0], 5, 400);
        let differ = all.iter().any(|p| {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            crate::encode::encode_piece_parts(&vocabs[0], p, &mut a);
            crate::encode::encode_piece_parts(&vocabs[1], p, &mut b);
            a != b
        });
        assert!(differ, "the two vocabularies must merge some piece differently");
        std::thread::scope(|scope| {
            for t in 0..4 {
                let (vocabs, all) = (&vocabs, &all);
                scope.spawn(move || {
                    let mut reused = 0;
                    for round in 0..12 {
                        // Three calls on one vocabulary, then three on the other.
                        let v = &vocabs[(round / 3 + t) % 2];
                        let from = (round * 37 + t * 11) % all.len();
                        let these: Vec<Vec<u8>> =
                            all.iter().cycle().skip(from).take(150).cloned().collect();
                        reused += usize::from(call(v, &these));
                    }
                    // Two of each three calls follow one on the same vocabulary.
                    assert_eq!(reused, 8, "thread {t}");
                });
            }
        });
    }

    /// A call inside a call (the thread's cache is taken) gets a cache of its own.
    #[test]
    fn a_nested_call_gets_its_own_cache() {
        let v = random_vocab(8, b"abcde", 200, 6);
        let all = pieces(&v, 9, 100);
        let mut outer = PieceCache::of_thread();
        outer.encode_parts(&v, &all[0], &mut Vec::new());
        assert!(!call(&v, &all), "the inner call's cache is empty");
        drop(outer);
        assert!(call(&v, &all), "the kept cache is back");
    }

    #[test]
    fn vocabularies_have_their_own_identity() {
        let (a, b) = (random_vocab(1, b"ab", 10, 4), random_vocab(1, b"ab", 10, 4));
        assert_ne!(a.identity(), b.identity());
        assert_eq!(a.clone().identity(), a.identity());
    }
}
