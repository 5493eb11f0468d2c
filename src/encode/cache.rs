//! Piece encodings remembered between calls on one thread.
//!
//! Prose repeats its words: a piece that is not a whole token ("tokenizer", "ing,") tends
//! to come back many times, in one document and in the next, and merging it again costs a
//! pair-table lookup per merge. The cache is direct-mapped by the piece's hash (the one
//! the whole-token lookup just computed, [`PieceKey`]) and holds exact copies: a piece of
//! at most 16 bytes is kept as its key words (with its length they are its bytes), a
//! longer one as a copy of its bytes, so a hit is an exact comparison, never a guess, and
//! for most pieces reads one slot of 32 bytes: up to 3 ids live in the slot, more in a
//! side array. It belongs to one thread: an encoding call takes the thread's cache and
//! gives it back when done, so no cache is ever shared between threads. It holds the
//! merges of one vocabulary (it empties itself when a call brings another), and a hit
//! gives exactly what merging gives, so ids never depend on what was encoded before or on
//! the thread count. Its memory is bounded per thread (slots, and the bytes and ids they
//! point into).

use std::cell::Cell;

use crate::prefetch::prefetch;
use crate::vocab::{PieceKey, Vocab};
use crate::Rank;

/// Pieces longer than this are encoded without the cache (rare, and a slot keeps the
/// length in a byte).
pub const MAX_CACHED: usize = 255;

/// Pieces up to this long are compared through their key words in the slot.
const SHORT: usize = 16;

/// Ids kept in the slot itself.
const INLINE_IDS: usize = 3;

/// The slots of a thread's cache at its first piece (32 bytes each: 128 KiB, inside L2).
const FIRST_SLOTS: usize = 4096;

/// The most slots a cache grows to (2 MiB; their lines are asked for a batch ahead, see
/// `PieceBatch`). Text of many distinct words misses a small cache over and over: on the
/// held-out multilingual benchmark text, 4,096 slots miss 57% of the pieces they are
/// asked for and 65,536 miss 42% (30% are a piece's first time).
const MAX_SLOTS: usize = 1 << 16;

/// Bytes (and, apart, ids) held in the side arrays before the slots that point there are
/// emptied and the arrays start afresh: at most 1 MiB each beside the slots.
const SIDE_BYTES: usize = 1 << 20;
const SIDE_IDS: usize = 1 << 18;

#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(32))]
struct Slot {
    /// A piece of at most [`SHORT`] bytes: its [`PieceKey::words`]. A longer one: where
    /// its bytes start in `bytes`, and its hash.
    words: [u64; 2],
    /// At most [`INLINE_IDS`] ids: the ids; more: `ids[0]` is where they start in `ids`.
    ids: [Rank; INLINE_IDS],
    /// The piece's length; 0: an empty slot (cached pieces have 3 or more bytes).
    len: u8,
    n_ids: u8,
}

#[derive(Debug, Default)]
struct Store {
    /// The vocabulary whose encodings the slots hold ([`Vocab::identity`]; 0: none yet).
    vocab: u64,
    /// Empty until the first piece, then a power of two long.
    slots: Vec<Slot>,
    bytes: Vec<u8>,
    ids: Vec<Rank>,
    /// Pieces merged since the slots were made.
    merged: usize,
}

impl Store {
    /// `slots` empty slots and empty side arrays.
    fn start(&mut self, slots: usize) {
        self.slots = vec![Slot::default(); slots];
        self.bytes.clear();
        self.ids.clear();
        self.merged = 0;
    }

    /// Empties the slots whose bytes or ids are in the side arrays, and the arrays; the
    /// slots of short pieces of few ids (most of the frequent ones) stay.
    fn drop_side(&mut self) {
        for slot in &mut self.slots {
            if usize::from(slot.len) > SHORT || usize::from(slot.n_ids) > INLINE_IDS {
                *slot = Slot::default();
            }
        }
        self.bytes.clear();
        self.ids.clear();
    }
}

/// Where a cache's slots are, to ask for the slot of a piece before it is looked up.
pub struct SlotsAhead {
    first: *const Slot,
    mask: usize,
}

impl SlotsAhead {
    /// Asks for the slot a piece of key `key` would be kept in (pieces of any length: a
    /// test of the length cost more than fetching the lines of pieces never cached).
    #[inline(always)]
    pub fn prefetch(&self, key: &PieceKey) {
        prefetch(self.first.wrapping_add(slot_of(key, self.mask)));
    }
}

/// The slot of a piece of key `key` among slots numbering `mask + 1` (a power of two, at
/// most 2^24).
#[inline(always)]
fn slot_of(key: &PieceKey, mask: usize) -> usize {
    (key.hash >> 40) as usize & mask
}

thread_local! {
    /// The thread's cache between calls (None while a call holds it).
    static KEPT: Cell<Option<Store>> = const { Cell::new(None) };
}

#[derive(Debug)]
pub struct PieceCache {
    store: Store,
    /// The number of slots to make at the first piece.
    size: usize,
    /// The most slots it grows to.
    max_size: usize,
    /// When `bytes` or `ids` would pass these, the slots that point into them are emptied.
    side_bytes: usize,
    side_ids: usize,
    /// Whether the store goes back to the thread when done.
    kept: bool,
    /// Pieces not found, for the tests.
    #[cfg(test)]
    misses: usize,
}

impl PieceCache {
    /// The calling thread's cache, given back when dropped (a fresh one if the thread's is
    /// in use further up the stack). Nothing is allocated until a piece is encoded.
    pub fn of_thread() -> Self {
        let store = KEPT.try_with(Cell::take).ok().flatten().unwrap_or_default();
        Self {
            store,
            size: FIRST_SLOTS,
            max_size: MAX_SLOTS,
            side_bytes: SIDE_BYTES,
            side_ids: SIDE_IDS,
            kept: true,
            #[cfg(test)]
            misses: 0,
        }
    }

    /// A cache of its own (not the thread's) of `size` slots growing to `max_size`, with
    /// `limit` bytes and ids beside them, for tests of collisions, growth and fresh starts.
    #[cfg(test)]
    fn with_size(size: usize, max_size: usize, limit: usize) -> Self {
        debug_assert!(size.is_power_of_two() && max_size.is_power_of_two());
        let store = Store::default();
        Self { store, size, max_size, side_bytes: limit, side_ids: limit, kept: false, misses: 0 }
    }

    /// The slots as they are now, for asking for a batch's slots ahead of
    /// [`Self::encode_parts`].
    #[inline(always)]
    pub fn slots_ahead(&self) -> SlotsAhead {
        let slots = &self.store.slots;
        // No slots yet: every piece asks for the first slot's address, which is harmless.
        SlotsAhead { first: slots.as_ptr(), mask: slots.len().saturating_sub(1) }
    }

    /// Appends the tokens of `piece` (3 to [`MAX_CACHED`] bytes, not a whole token, `key`
    /// its [`PieceKey`]) to `out`, by [`super::encode_piece_parts`] or from an earlier
    /// identical piece.
    pub fn encode_parts(
        &mut self,
        vocab: &Vocab,
        piece: &[u8],
        key: &PieceKey,
        out: &mut Vec<Rank>,
    ) {
        debug_assert!((3..=MAX_CACHED).contains(&piece.len()));
        debug_assert_eq!(*key, PieceKey::of(piece));
        let store = &mut self.store;
        if store.vocab != vocab.identity() || store.slots.is_empty() {
            store.start(self.size);
            store.vocab = vocab.identity();
        }
        let at = slot_of(key, store.slots.len() - 1);
        let slot = &store.slots[at];
        let n = piece.len();
        if usize::from(slot.len) == n {
            let same = if n <= SHORT {
                slot.words == key.words
            } else {
                let from = slot.words[0] as usize;
                slot.words[1] == key.hash && store.bytes[from..from + n] == *piece
            };
            if same {
                // Fixed-size appends for the usual few ids (a slice's would call memcpy).
                match (slot.n_ids, slot.ids) {
                    (1, [a, ..]) => out.push(a),
                    (2, [a, b, _]) => out.extend([a, b]),
                    (3, ids) => out.extend(ids),
                    (n, [from, ..]) => {
                        let from = from as usize;
                        out.extend_from_slice(&store.ids[from..from + usize::from(n)]);
                    }
                }
                return;
            }
        }
        let start = out.len();
        super::encode_piece_parts(vocab, piece, out);
        let store = &mut self.store;
        store.merged += 1;
        let at = if store.merged >= store.slots.len() && store.slots.len() < self.max_size {
            // As many merged as slots since the last start: twice the slots, afresh.
            store.start(2 * store.slots.len());
            slot_of(key, store.slots.len() - 1)
        } else {
            at
        };
        self.insert(at, piece, key, &out[start..]);
    }

    /// Keeps `piece`'s `new` ids in slot `at`.
    fn insert(&mut self, at: usize, piece: &[u8], key: &PieceKey, new: &[Rank]) {
        #[cfg(test)]
        {
            self.misses += 1;
        }
        let store = &mut self.store;
        let (side_bytes, side_ids) = (
            if piece.len() > SHORT { piece.len() } else { 0 },
            if new.len() > INLINE_IDS { new.len() } else { 0 },
        );
        if store.bytes.len() + side_bytes > self.side_bytes
            || store.ids.len() + side_ids > self.side_ids
        {
            store.drop_side();
        }
        let mut slot =
            Slot { words: key.words, ids: [0; INLINE_IDS], len: piece.len() as u8, n_ids: 0 };
        if side_bytes > 0 {
            slot.words = [store.bytes.len() as u64, key.hash];
            store.bytes.extend_from_slice(piece);
        }
        // A piece of at most 255 bytes merges into at most 255 ids.
        slot.n_ids = new.len() as u8;
        if side_ids > 0 {
            slot.ids[0] = store.ids.len() as Rank;
            store.ids.extend_from_slice(new);
        } else {
            slot.ids[..new.len()].copy_from_slice(new);
        }
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
    use crate::encode::encode_piece_cached;
    use crate::encode::tests::{lcg, random_vocab};

    /// What the cache must give: the lookup, else merging.
    fn uncached(v: &Vocab, piece: &[u8]) -> Vec<Rank> {
        let mut want = Vec::new();
        crate::encode::encode_piece(v, piece, &mut want);
        want
    }

    /// Pieces of every length class (inline, key words, side bytes), whole tokens and not,
    /// of few and of many ids, with bytes 0x00 and 0xFF, drawn many times: hits, misses,
    /// and (with 1 or 2 slots, and a small limit) collisions and fresh starts.
    #[test]
    fn cached_ids_are_the_encoded_ids() {
        let v = random_vocab(7, b"a\0\xffb", 600, 24);
        let mut next = lcg(11);
        let tokens: Vec<&Vec<u8>> = v.tokens().iter().filter(|t| t.len() >= 3).collect();
        assert!(tokens.iter().any(|t| t.len() > SHORT), "tokens of every length class");
        let mut pieces: Vec<Vec<u8>> = tokens.iter().map(|t| t.to_vec()).collect();
        for len in 3..=MAX_CACHED {
            for _ in 0..2 {
                pieces.push((0..len).map(|_| b"a\0\xffb"[next() % 4]).collect());
            }
        }
        let (mut whole, mut many) = (0, 0);
        for p in &pieces {
            let want = uncached(&v, p);
            whole += usize::from(want.len() == 1);
            many += usize::from(want.len() > INLINE_IDS);
        }
        assert!(whole > 100 && many > 100, "{whole} tokens, {many} of many ids");
        let mut caches = [
            PieceCache::of_thread(),
            PieceCache::with_size(1, 1, SIDE_IDS),
            PieceCache::with_size(2, 2, 100),
            PieceCache::with_size(1, 64, 100),
        ];
        let before = caches[0].misses;
        for _ in 0..20_000 {
            let piece = &pieces[next() % pieces.len()];
            let want = uncached(&v, piece);
            for cache in &mut caches {
                let mut got = vec![9]; // appends, never overwrites
                encode_piece_cached(&v, piece, &mut got, cache);
                assert_eq!(got[1..], want[..], "{:?}", String::from_utf8_lossy(piece));
            }
        }
        let misses = [caches[0].misses - before, caches[1].misses, caches[2].misses];
        // About 1,000 distinct pieces in 20,000 draws: the big cache misses each about
        // once; the small ones miss more and still hit.
        assert!(misses[0] < 2_000, "misses: {misses:?}");
        assert!(misses[1] < 20_000 && misses[2] < 20_000, "misses: {misses:?}");
        // The one that grows reached its most slots, and missed less than the fixed ones.
        assert_eq!(caches[3].store.slots.len(), 64);
        assert!(caches[3].misses < misses[1].min(misses[2]), "{} misses", caches[3].misses);
    }

    /// Side arrays filled past their limit empty only the slots that point into them: a
    /// short piece of few ids stays found, the long ones merge again, every id exact.
    #[test]
    fn full_side_arrays_keep_the_short_pieces() {
        let v = random_vocab(9, b"abc", 200, 8);
        let mut next = lcg(3);
        let mut draw = |len: usize| -> Vec<u8> { (0..len).map(|_| b"abc"[next() % 3]).collect() };
        let ids = |p: &[u8]| uncached(&v, p);
        let short = std::iter::repeat_with(|| draw(5))
            .find(|p| v.rank(p).is_none() && ids(p).len() <= INLINE_IDS)
            .unwrap();
        let home = slot_of(&PieceKey::of(&short), 63);
        let longs: Vec<Vec<u8>> = std::iter::repeat_with(|| draw(20))
            .filter(|p| slot_of(&PieceKey::of(p), 63) != home)
            .take(6)
            .collect();
        let mut cache = PieceCache::with_size(64, 64, 50);
        let encode = |cache: &mut PieceCache, p: &[u8]| {
            let mut got = Vec::new();
            encode_piece_cached(&v, p, &mut got, cache);
            assert_eq!(got, ids(p), "{:?}", String::from_utf8_lossy(p));
        };
        encode(&mut cache, &short);
        for long in &longs {
            encode(&mut cache, long);
        }
        // 120 bytes of long pieces passed the limit of 50 twice.
        assert!(cache.store.bytes.len() < 50, "the side bytes started afresh");
        let misses = cache.misses;
        encode(&mut cache, &short);
        assert_eq!(cache.misses, misses, "the short piece is still held");
        encode(&mut cache, &longs[0]);
        assert_eq!(cache.misses, misses + 1, "the first long piece was let go");
    }

    /// Pieces that differ from each other in one byte only, at every position and every
    /// length, through one slot: a slot's piece is never taken for another.
    #[test]
    fn pieces_one_byte_apart_share_no_slot() {
        let v = random_vocab(2, b"ab\0\xff", 300, 20);
        let mut cache = PieceCache::with_size(1, 1, SIDE_IDS);
        for len in 3..=40 {
            let piece: Vec<u8> = (0..len).map(|i| b"ab\0\xff"[i * 7 % 4]).collect();
            for at in 0..len {
                for flip in [1u8, 0x80, 0xff] {
                    let mut other = piece.clone();
                    other[at] ^= flip;
                    for p in [&piece, &other, &piece, &other] {
                        let mut got = Vec::new();
                        encode_piece_cached(&v, p, &mut got, &mut cache);
                        assert_eq!(got, uncached(&v, p), "{len} bytes, byte {at} ^ {flip}");
                    }
                }
            }
        }
    }

    /// Every token of a vocabulary with tokens of 1 to 40 bytes (all 256 bytes among
    /// them) is its own id through the cache, the first time and again.
    #[test]
    fn whole_tokens_of_every_length() {
        let v = random_vocab(5, &(0..=255u8).collect::<Vec<u8>>(), 3000, 40);
        assert!((3..=40).all(|n| v.tokens().iter().any(|t| t.len() == n)), "every length");
        let mut cache = PieceCache::with_size(64, 64, SIDE_IDS);
        for _ in 0..2 {
            for (id, t) in v.tokens().iter().enumerate().filter(|(_, t)| t.len() >= 3) {
                let mut got = Vec::new();
                encode_piece_cached(&v, t, &mut got, &mut cache);
                assert_eq!(got, [id as Rank], "{t:?}");
            }
        }
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
        let from_before = cache.store.vocab == v.identity() && !cache.store.slots.is_empty();
        for piece in pieces {
            let (mut want, mut got) = (Vec::new(), Vec::new());
            crate::encode::encode_piece(v, piece, &mut want);
            encode_piece_cached(v, piece, &mut got, &mut cache);
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
        encode_piece_cached(&v, &all[0], &mut Vec::new(), &mut outer);
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
