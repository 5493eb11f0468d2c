//! The splitter's sink for counting: each piece is counted in a partial's `hot` slots as
//! the splitter hands it over, and what goes to the tables is queued and counted a batch
//! at a time (see "Counting" in docs/design.md).

use super::hot::HotSlots;
use super::hot_long;
use super::table::{shard_of, Partial, Queued, QUEUED};
use super::word_hash::{hash, hash_short, InData};
use crate::pretokenize::{each_end, Sink};

/// The most pieces a window hands over at once (one per bit of its mask).
const WINDOW: usize = 64;

/// Counts the pieces of one segment into a partial; every piece must be a slice of the
/// segment (a long one is queued by its offset there, and a flush panics on one that is
/// not). [`CountSink::finish`] counts what is still queued once the segment is split.
pub struct CountSink<'p, 's> {
    counts: &'p mut Partial,
    /// The segment.
    data: InData<'s>,
    shorts: usize,
    longs: usize,
}

impl<'p, 's> CountSink<'p, 's> {
    /// A sink for the pieces of the segment `data`.
    pub fn new(counts: &'p mut Partial, data: &'s [u8]) -> Self {
        Self { counts, data: InData::new(data), shorts: 0, longs: 0 }
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
    /// first, then all counted, so the cache misses of rare words' slots overlap. A long
    /// word of up to 16 bytes is counted in `hot_longs` instead, and the word it displaces,
    /// if any, goes to the tables.
    #[inline(never)]
    fn flush(&mut self) {
        let (shorts, longs, bytes) = (self.shorts, self.longs, self.data.bytes());
        let (shards, hot_longs, q) = self.counts.shards_and_queue();
        let Queued { keys, counts, hashes, long_at, long_len, long_hashes, displaced } = q;
        // Sliced once to their lengths, so no access below checks its bounds.
        let (keys, counts, hashes) = (&keys[..shorts], &counts[..shorts], &mut hashes[..shorts]);
        let (long_at, long_len) = (&mut long_at[..longs], &mut long_len[..longs]);
        let long_hashes = &mut long_hashes[..longs];
        for (h, &key) in hashes.iter_mut().zip(keys) {
            *h = hash_short(key);
            shards[shard_of(*h)].prefetch_slot(*h);
        }
        // The longs that go to the tables are moved to the front of their arrays (at
        // `kept`, never past the one being read), the words displaced into `displaced`.
        let (mut kept, mut moved) = (0, 0);
        for i in 0..longs {
            let (at, n) = (long_at[i], long_len[i]);
            let word = &bytes[at..at + n];
            let h = hash(word);
            if n <= hot_long::MAX_LEN {
                if let Some(word) = hot_longs.add(word, h) {
                    shards[shard_of(word.hash)].prefetch_slot(word.hash);
                    displaced[moved] = word;
                    moved += 1;
                }
            } else {
                shards[shard_of(h)].prefetch_slot(h);
                (long_at[kept], long_len[kept], long_hashes[kept]) = (at, n, h);
                kept += 1;
            }
        }
        for ((&key, &h), &n) in keys.iter().zip(hashes.iter()).zip(counts) {
            shards[shard_of(h)].add_short(key, h, n);
        }
        for ((&at, &n), &h) in
            long_at.iter().zip(long_len.iter()).zip(long_hashes.iter()).take(kept)
        {
            *shards[shard_of(h)].entry(&bytes[at..at + n], h).0 += 1;
        }
        for word in &displaced[..moved] {
            *shards[shard_of(word.hash)].entry(word.word(), word.hash).0 += word.count;
        }
        (self.shorts, self.longs) = (0, 0);
    }
}

impl<'s> Sink<'s> for CountSink<'_, 's> {
    #[inline(always)]
    fn piece(&mut self, piece: &'s [u8]) {
        let at = (piece.as_ptr() as usize).wrapping_sub(self.data.bytes().as_ptr() as usize);
        let mut tally = self.tally();
        tally.add(at, piece.len());
        (self.shorts, self.longs) = (tally.shorts, tally.longs);
        self.make_room();
    }

    #[inline(always)]
    fn pieces(&mut self, bytes: &'s [u8], from: usize, pos: usize, ends: u64) -> usize {
        // Where the window's text starts in the segment, checked once: the pieces are
        // then taken by their offsets, never as slices.
        let segment = self.data.bytes();
        let off = (bytes.as_ptr() as usize).wrapping_sub(segment.as_ptr() as usize);
        assert!(
            off <= segment.len() && bytes.len() <= segment.len() - off,
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
    use crate::train::word_hash::SHORT_MAX;
    use std::collections::{BTreeMap, HashMap};

    /// Runs of single pieces of every length up to past the queue's size, each followed
    /// by a full window (as many pieces as its 64 bytes hold), of short words that
    /// nearly all displace one another and of long ones: every count exact, so neither
    /// half of the queue ever overflows between flushes.
    #[test]
    fn runs_of_pieces_and_full_windows_count_exactly() {
        let mut rng = Rng(11);
        let mut want: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        let mut partial = Partial::default();
        // Room for every run length from 0 to past the queue's size, in both word lengths.
        let data: Vec<u8> =
            (0..4 * (QUEUED + 3) * (QUEUED + 64) * 8 / 2).map(|_| rng.next() as u8).collect();
        let mut sink = CountSink::new(&mut partial, &data);
        let (mut at, mut longest_run) = (0, 0);
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
            longest_run = longest_run.max(round % (QUEUED + 3));
        }
        assert!(longest_run > QUEUED, "runs up to past the queue's size: {longest_run}");
        sink.finish();
        let mut table = WordTable::default();
        table.fold(&parallel::pool(Some(1)), vec![partial]);
        let got: BTreeMap<Vec<u8>, u64> =
            table.sorted().into_iter().map(|(w, n)| (w.to_vec(), n)).collect();
        assert_eq!(got, want);
    }

    /// Pieces counted through a `CountSink` and folded give each word's exact count: short
    /// words frequent and rare (many more than the hot slots, so most displace others),
    /// long ones, pieces at the end of their data (read without the one-load key), and
    /// the same words counted again in a second batch over a table that holds them.
    #[test]
    fn folded_counts_are_exact() {
        let mut rng = Rng(3);
        let mut next = move || rng.next() as usize;
        let mut want: HashMap<Vec<u8>, u64> = HashMap::new();
        let mut table = WordTable::default();
        let pool = parallel::pool(Some(2));
        for round in 0..2 {
            let mut data = Vec::new();
            let mut cuts = Vec::new();
            for i in 0..60_000 {
                let len = match i % 8 {
                    0 | 4 => 1 + next() % 3,
                    // Long words of a small alphabet, many of them repeated: found in
                    // `hot_longs`, and displacing one another there.
                    7 => 8 + next() % 12,
                    k if k % 4 == 3 => 1 + next() % 40,
                    _ => 1 + next() % SHORT_MAX,
                };
                // A small alphabet for the frequent words, a wide one for the rest.
                let wide = i % 4 != 0 && i % 8 != 7;
                let start = data.len();
                data.extend((0..len).map(|_| if wide { next() as u8 } else { b"ab"[next() % 2] }));
                cuts.push(start..data.len());
            }
            let mut partials = vec![Partial::default(), Partial::with_capacity(1000)];
            for (k, half) in cuts.chunks(cuts.len() / 2).enumerate() {
                // Each half in its own data, so its last pieces end the data.
                let own: Vec<u8> = data[half[0].start..half[half.len() - 1].end].to_vec();
                let base = half[0].start;
                let mut sink = CountSink::new(&mut partials[k], &own);
                let mut i = 0;
                while i < half.len() {
                    let (from, end) = (half[i].start - base, half[i].end - base);
                    *want.entry(own[from..end].to_vec()).or_default() += 1;
                    // Every other piece starts a window of the pieces that end in its
                    // 64 bytes, handed over at once as the splitter does.
                    if i % 2 == 1 || from + 63 >= own.len() {
                        sink.piece(&own[from..end]);
                        i += 1;
                        continue;
                    }
                    let mut ends = 0u64;
                    while i < half.len() && half[i].end - base <= from + 63 {
                        let r = &half[i];
                        if ends != 0 {
                            *want.entry(own[r.start - base..r.end - base].to_vec()).or_default() +=
                                1;
                        }
                        ends |= 1 << (r.end - base - from);
                        i += 1;
                    }
                    assert_eq!(sink.pieces(&own, from, from, ends), half[i - 1].end - base);
                }
                sink.finish();
            }
            // The second round is folded without asking first (the fold moves the hot
            // counts itself).
            if round == 0 {
                let distinct: usize = partials.iter_mut().map(Partial::distinct).sum();
                assert!(distinct > 4_000 && distinct < 120_000, "{distinct}");
            }
            table.fold(&pool, partials);
        }
        let mut want: Vec<(Vec<u8>, u64)> = want.into_iter().collect();
        want.sort();
        let got: Vec<(Vec<u8>, u64)> =
            table.sorted().into_iter().map(|(w, n)| (w.to_vec(), n)).collect();
        assert_eq!(got, want);
        assert!(got.iter().any(|(w, n)| w.len() <= 3 && *n > 1_000), "frequent short words");
        assert!(got.iter().any(|(w, n)| w.len() == 8 && *n > 4), "repeated long words");
    }
}
