//! The splitter's sink for counting: each piece is counted in a partial's `hot` slots as
//! the splitter hands it over, and what goes to the tables is queued and counted a batch
//! at a time (see "Counting" in docs/design.md).

use super::hot::HotSlots;
use super::table::{shard_of, Partial};
use super::word_hash::{hash, hash_short, InData};
use crate::pretokenize::{each_end, Sink};

/// Entries queued for the tables (each half).
const QUEUED: usize = 128;
/// The most pieces a window hands over at once (one per bit of its mask).
const WINDOW: usize = 64;

/// What goes to the tables, queued: the short words `hot` displaced (key, count and
/// hash), and the long pieces (where they start in the segment, their length and hash).
/// Kept in the partial so that no segment clears 5 KiB of stack; only the first
/// `shorts` and `longs` entries are read, each written first.
pub struct Queued {
    keys: [u64; QUEUED],
    counts: [u64; QUEUED],
    hashes: [u64; QUEUED],
    long_at: [usize; QUEUED],
    long_len: [usize; QUEUED],
    long_hashes: [u64; QUEUED],
}

impl Default for Queued {
    fn default() -> Self {
        let (none, at) = ([0; QUEUED], [0; QUEUED]);
        Self {
            keys: none,
            counts: none,
            hashes: none,
            long_at: at,
            long_len: at,
            long_hashes: none,
        }
    }
}

/// Counts the pieces of one segment into a partial; every piece must be a slice of the
/// segment (a long one is queued by its offset there, and a flush panics on one that is
/// not). [`CountSink::finish`] counts what is still queued once the segment is split.
pub struct CountSink<'p, 's> {
    counts: &'p mut Partial,
    data: InData<'s>,
    bytes: &'s [u8],
    shorts: usize,
    longs: usize,
}

impl<'p, 's> CountSink<'p, 's> {
    /// A sink for the pieces of the segment `data`.
    pub fn new(counts: &'p mut Partial, data: &'s [u8]) -> Self {
        Self { counts, data: InData::new(data), bytes: data, shorts: 0, longs: 0 }
    }

    /// Counts what is queued for the tables.
    pub fn finish(mut self) {
        self.flush();
    }

    /// What [`Tally::add`] needs, borrowed for one window (or piece), its counts as locals
    /// the compiler keeps in registers.
    #[inline(always)]
    fn tally(&mut self) -> Tally<'_, 's> {
        let (hot, queued) = self.counts.hot_and_queue();
        Tally { hot: hot.ready(), queued, data: self.data, shorts: self.shorts, longs: self.longs }
    }

    /// Flushes the queue if the next window's pieces (at most 64, each queued in one half
    /// at most) might not fit: after every piece or window neither half holds more than
    /// `QUEUED - WINDOW`, so a window's loop never checks for room.
    #[inline(always)]
    fn make_room(&mut self) {
        if self.shorts.max(self.longs) > QUEUED - WINDOW {
            self.flush();
        }
    }

    /// Counts the queued words into the tables: each hashed and its home slot asked for
    /// first, then all counted, so the cache misses of rare words' slots overlap.
    #[inline(never)]
    fn flush(&mut self) {
        let (shorts, longs, bytes) = (self.shorts, self.longs, self.bytes);
        let (shards, q) = self.counts.shards_and_queue();
        for i in 0..shorts {
            q.hashes[i] = hash_short(q.keys[i]);
            shards[shard_of(q.hashes[i])].prefetch_slot(q.hashes[i]);
        }
        for i in 0..longs {
            q.long_hashes[i] = hash(&bytes[q.long_at[i]..q.long_at[i] + q.long_len[i]]);
            shards[shard_of(q.long_hashes[i])].prefetch_slot(q.long_hashes[i]);
        }
        for i in 0..shorts {
            shards[shard_of(q.hashes[i])].add_short(q.keys[i], q.hashes[i], q.counts[i]);
        }
        for i in 0..longs {
            let h = q.long_hashes[i];
            let piece = &bytes[q.long_at[i]..q.long_at[i] + q.long_len[i]];
            *shards[shard_of(h)].entry(piece, h).0 += 1;
        }
        (self.shorts, self.longs) = (0, 0);
    }
}

impl<'s> Sink<'s> for CountSink<'_, 's> {
    #[inline(always)]
    fn piece(&mut self, piece: &'s [u8]) {
        let at = (piece.as_ptr() as usize).wrapping_sub(self.bytes.as_ptr() as usize);
        let mut tally = self.tally();
        tally.add(at, piece.len());
        (self.shorts, self.longs) = (tally.shorts, tally.longs);
        self.make_room();
    }

    #[inline(always)]
    fn pieces(&mut self, bytes: &'s [u8], from: usize, pos: usize, ends: u64) -> usize {
        // Where the window's text starts in the segment, checked once: the pieces are
        // then taken by their offsets, never as slices.
        let off = (bytes.as_ptr() as usize).wrapping_sub(self.bytes.as_ptr() as usize);
        assert!(
            off <= self.bytes.len() && bytes.len() <= self.bytes.len() - off,
            "a window outside the segment"
        );
        let mut tally = self.tally();
        // In the segment's offsets, so the window's offset is not one more value the loop
        // keeps (its registers are all taken).
        let end = each_end(off + from, off + pos, ends, |from, to| tally.add(from, to - from));
        (self.shorts, self.longs) = (tally.shorts, tally.longs);
        self.make_room();
        end - off
    }
}

/// A segment's counting state for one window: `hot`'s slots, the queue, and how much of
/// each half of the queue is taken.
struct Tally<'a, 's> {
    hot: HotSlots<'a>,
    queued: &'a mut Queued,
    data: InData<'s>,
    shorts: usize,
    longs: usize,
}

impl Tally<'_, '_> {
    /// Counts the piece of `n` bytes at `at` in the segment into `hot`, with no branch on
    /// it: short and long pieces, and words found and displaced, follow each other in no
    /// order a predictor learns. A long piece (key 0) counts nowhere in `hot`; the
    /// displaced word and the long piece are stored every time and kept by moving a
    /// count past them.
    #[inline(always)]
    fn add(&mut self, at: usize, n: usize) {
        let key = self.data.key_at(at, n);
        let (old, count) = self.hot.add(key);
        let q = &mut *self.queued;
        // Below QUEUED (flushed before a window could pass it); the modulo spares bounds
        // checks.
        (q.keys[self.shorts % QUEUED], q.counts[self.shorts % QUEUED]) = (old, count);
        self.shorts += (old != 0) as usize;
        (q.long_at[self.longs % QUEUED], q.long_len[self.longs % QUEUED]) = (at, n);
        self.longs += (key == 0) as usize;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel;
    use crate::test_rng::Rng;
    use crate::train::table::WordTable;
    use std::collections::BTreeMap;

    /// Runs of single pieces of every length up to past the queue's size, each followed
    /// by a full window (as many pieces as its 64 bytes hold), of short words that
    /// nearly all displace one another and of long ones: every count exact, so neither
    /// half of the queue ever overflows between flushes.
    #[test]
    fn runs_of_pieces_and_full_windows_count_exactly() {
        let mut rng = Rng(11);
        let mut want: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        let mut partial = Partial::default();
        let data: Vec<u8> = (0..400_000).map(|_| rng.next() as u8).collect();
        let mut sink = CountSink::new(&mut partial, &data);
        let mut at = 0;
        for round in 0.. {
            // Two-byte words (65,536 of them, far more than hot's slots) or eight-byte ones.
            let len = if round % 2 == 0 { 2 } else { 8 };
            if at + (QUEUED + 64) * len + 64 >= data.len() {
                break;
            }
            for _ in 0..round % (QUEUED + 3) {
                *want.entry(data[at..at + len].to_vec()).or_default() += 1;
                sink.piece(&data[at..at + len]);
                at += len;
            }
            let mut ends = 0u64;
            let mut end = at;
            while end + len <= at + 63 {
                *want.entry(data[end..end + len].to_vec()).or_default() += 1;
                end += len;
                ends |= 1 << (end - at);
            }
            assert_eq!(sink.pieces(&data, at, at, ends), end);
            at = end;
        }
        sink.finish();
        let mut table = WordTable::default();
        table.fold(&parallel::pool(Some(1)), vec![partial]);
        let got: BTreeMap<Vec<u8>, u64> =
            table.sorted().into_iter().map(|(w, n)| (w.to_vec(), n)).collect();
        assert_eq!(got, want);
    }
}
