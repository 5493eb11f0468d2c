//! The merge loop: incremental BPE over counted words.
//!
//! Words live in one flat arena ([`WordArena`]); pair counts and the words each pair
//! occurs in live in flat arrays keyed by dense pair ids ([`PairIndex`]), so a merge
//! touches only the words that have the pair. A d-ary max-heap holds (count, pair)
//! candidates in exactly the contract's order (highest count, then the lexicographically
//! smallest (left bytes, right bytes), compared through byte-order keys of the tokens).
//! Heap entries are lazy: a popped entry whose count is stale is re-queued with the
//! current count.

use std::cmp::Ordering;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use super::arena::{ArenaToken, WordArena};
use super::byte_pairs;
use super::candidate::{Candidate, Order};
use super::long::{LongWords, LONG_WORD};
use super::near::{NearIds, Side};
use super::order::ByteOrder;
use super::pairs::{Halt, PairIndex};
use super::queue::Candidates;
use super::rewrite::{rewrite, rewrite_shared, Pair, Rewritten};
use super::stop::REPORT_EVERY;
use super::stop::{Observer, Progress, StopRule};
use crate::error::{Error, Result};
use crate::helpers::{with_helpers, Helpers};
use crate::parallel;
use crate::vocab::MergeRecord;
use crate::Rank;

/// The merge loop's growing vocabulary.
pub use super::order::Tokens;

/// The state of a training run.
struct Merger<T> {
    /// Each distinct word as token ids, rewritten in place (but the long ones).
    words: WordArena<T>,
    /// The words of `LONG_WORD` tokens or more, merged by position (`long.rs`).
    long: LongWords,
    /// The tokens so far.
    growth: Tokens,
    /// The tokens' byte-order keys, which the heap compares ties by.
    order: ByteOrder,
    /// Every present pair's count and the words it occurs in.
    pairs: PairIndex,
    /// Candidates to merge (lazy: an entry's count may be stale, see `pop_best`).
    heap: Candidates,
    /// The least count worth queueing: `min_frequency` (at least 1). A pair below it is
    /// never merged, and most pairs are (about half of all pairs occur once), so they are
    /// left out of the heap until a rise lifts them to it.
    floor: u64,
    /// Threads for the first pair count (large merges' rewrites run on the helpers, at
    /// most this many threads).
    threads: usize,
    /// A merge listing at least this many words rewrites them on the helpers too.
    parallel_words: usize,
    /// The ids of the pairs the current merge changes, by neighbour token.
    near: NearIds,
    /// The rewrite of the current merge (buffers kept from merge to merge).
    rewritten: Rewritten,
    /// One table per thread for a rewrite to number the pairs it changes.
    places: Vec<Mutex<NearIds>>,
    /// The id of the pair likely merged next (the queue's top once this merge's pair is
    /// taken), whose first words are fetched during this merge.
    next: Option<u32>,
    /// The pairs a merge took to zero and the pairs it raised, with their ids, and the
    /// ids of one chunk's changes, each with whether it is its first gain (kept from
    /// merge to merge).
    scratch: (Vec<PairId>, Vec<PairId>, Vec<(u32, bool)>),
}

/// A pair and its id in the pair index.
type PairId = (Pair, u32);

/// Trains on `words` (token ids of `growth`, count), growing `growth`. Returns it grown
/// and the merge log of the new merges. A new token's id must fit the words' `T` (an
/// error if not: the caller chooses `T` for the ids the run can make).
///
/// `replay` is a merge log from an earlier run on the same words (a resumed run): its
/// merges are recomputed and must match record for record, then training goes on. Only
/// merges past `replay` are reported as new.
pub fn train<T: ArenaToken>(
    words: WordArena<T>,
    growth: Tokens,
    stop: StopRule,
    replay: &[MergeRecord],
    observe: &mut Observer<'_>,
) -> Result<(Tokens, Vec<MergeRecord>)> {
    let threads = stop.threads.unwrap_or_else(parallel::default_threads);
    let mut merger = Merger::new(words, growth, threads, stop.min_frequency);
    // A second run's index is held beside the first for a moment: not under a budget.
    let parts = if stop.spare_memory { threads } else { 1 };
    merger.count_pairs(parts, &mut |created| observe(Progress { created, new_merges: &[] }))?;
    merger.long = LongWords::of(&merger.words);
    // The merge loop stays on this thread (it reports progress and looks for Ctrl-C);
    // large merges share their rewrites with the helpers. They spin between jobs, so
    // never more of them than the other cores.
    let helpers = threads.min(parallel::default_threads()).saturating_sub(1);
    let merges =
        with_helpers(helpers, |helpers| merge_all(&mut merger, stop, replay, observe, helpers))?;
    Ok((merger.growth, merges))
}

/// The merges of a run whose pairs are counted, in order, until `stop`.
fn merge_all<T: ArenaToken>(
    merger: &mut Merger<T>,
    stop: StopRule,
    replay: &[MergeRecord],
    observe: &mut Observer<'_>,
    helpers: &Helpers<'_>,
) -> Result<Vec<MergeRecord>> {
    let mut merges = Vec::new();
    let mut created = 0;
    let mut reported = replay.len();
    let mut last_report = Instant::now();
    while created < stop.new_tokens {
        let Some((pair, count, id)) = merger.pop_best() else {
            break;
        };
        if count < stop.min_frequency {
            break;
        }
        let joined = merger.growth.join(pair.0, pair.1).ok_or_else(|| {
            Error::Corrupt(format!("the words hold ids {pair:?}, which are not both tokens"))
        })?;
        let token = joined.token;
        if u64::from(token) >= T::LIMIT {
            return Err(Error::InvalidConfig(format!(
                "merge {} makes token id {token}, past the {}-bit ids this run's words hold",
                merges.len(),
                T::LIMIT.trailing_zeros()
            )));
        }
        if joined.is_new {
            merger.order.add(token, &merger.growth);
        }
        merger.foresee();
        merger.merge(pair, id, token, helpers)?;
        created += usize::from(joined.is_new);
        let record = MergeRecord { left: pair.0, right: pair.1, token, count };
        if let Some(expected) = replay.get(merges.len()) {
            if *expected != record {
                return Err(Error::Corrupt(format!(
                    "merge {} of the stored run is {expected:?}, but these words give \
                     {record:?}: the store belongs to other data or settings",
                    merges.len()
                )));
            }
        }
        merges.push(record);
        if last_report.elapsed() >= REPORT_EVERY {
            let new_merges = &merges[reported.min(merges.len())..];
            observe(Progress { created, new_merges })?;
            reported = reported.max(merges.len());
            last_report = Instant::now();
        }
    }
    if merges.len() < replay.len() {
        return Err(Error::Corrupt(format!(
            "the stored run has {} merges, but these words stop after {}",
            replay.len(),
            merges.len()
        )));
    }
    observe(Progress { created, new_merges: &merges[reported.min(merges.len())..] })?;
    Ok(merges)
}

impl<T: ArenaToken> Merger<T> {
    fn new(words: WordArena<T>, growth: Tokens, threads: usize, min_frequency: u64) -> Self {
        let order = ByteOrder::of(&growth);
        let parallel_words = parallel_words(&words);
        Self {
            words,
            long: LongWords::default(),
            growth,
            order,
            pairs: PairIndex::default(),
            heap: Candidates::default(),
            floor: min_frequency.max(1),
            threads: threads.max(1),
            parallel_words,
            near: NearIds::default(),
            rewritten: Rewritten::default(),
            places: (0..threads.max(1)).map(|_| Mutex::default()).collect(),
            scratch: Default::default(),
            next: None,
        }
    }

    /// Counts every pair of the words into the pair index, on `parts` threads (see
    /// [`byte_pairs::first_count`]), and queues those at or above the floor.
    fn count_pairs(
        &mut self,
        parts: usize,
        observe: &mut dyn FnMut(usize) -> Result<()>,
    ) -> Result<()> {
        let mut last_report = Instant::now();
        let mut report = || {
            if last_report.elapsed() >= REPORT_EVERY {
                observe(0)?;
                last_report = Instant::now();
            }
            Ok(())
        };
        let counted = byte_pairs::first_count(&self.words, parts, self.threads, &mut report);
        self.pairs = counted.map_err(|h| match h {
            Halt::Overflow(pair) => self.overflow(pair),
            Halt::Stopped(e) => e,
        })?;
        let floor = self.floor;
        let entries = (self.pairs.counts())
            .filter(|&(_, count)| count >= floor)
            .map(|(pair, count)| Candidate { count, pair });
        self.heap = Candidates::of(entries, Order { keys: &self.order, tokens: &self.growth });
        Ok(())
    }

    fn overflow(&self, pair: Pair) -> Error {
        Error::CountOverflow {
            left: self.growth.bytes(pair.0).to_vec(),
            right: self.growth.bytes(pair.1).to_vec(),
        }
    }

    /// Queues `pair` with its current `count`, if that is at least the floor.
    fn push(&mut self, pair: Pair, count: u64) {
        if count < self.floor {
            return;
        }
        let order = Order { keys: &self.order, tokens: &self.growth };
        self.heap.push(Candidate { count, pair }, order);
    }

    /// The pair to merge next, its count and its id.
    ///
    /// Invariant: every pair with a count at or above the floor has a heap entry whose
    /// count is at least the current one (entries are pushed whenever a count rises to or
    /// above the floor, and counts only fall otherwise). So an entry whose count is
    /// current is the true maximum; when none is left, every count is below the floor
    /// and training stops, as it would on popping a count below `min_frequency`.
    fn pop_best(&mut self) -> Option<(Pair, u64, u32)> {
        let order = Order { keys: &self.order, tokens: &self.growth };
        while let Some(top) = self.heap.peek(order) {
            // The next top is one of these: its place in the pair table is fetched while
            // this one's count is read.
            for next in self.heap.after_first() {
                self.pairs.prefetch(next.pair);
            }
            let id = self.pairs.id(top.pair);
            let current = id.map_or(0, |id| self.pairs.count(id));
            match (current.cmp(&top.count), id) {
                (Ordering::Equal, Some(id)) => {
                    self.heap.pop(order);
                    return Some((top.pair, current, id));
                }
                // Stale: requeued with the current count, in place.
                (Ordering::Less, _) if current >= self.floor => {
                    self.heap.replace_top(Candidate { count: current, pair: top.pair }, order);
                }
                // Below the floor, or risen (a fresher entry for this pair is queued).
                _ => {
                    self.heap.pop(order);
                }
            }
        }
        None
    }

    /// Guesses the next merge (the queue's top, unless this merge raises a pair past it
    /// or the top is stale) and fetches its pair's entry. A merge's first words wait for
    /// memory with nothing fetched ahead of them: during this merge, the guess's entry,
    /// then its first words' entries and tokens are fetched.
    fn foresee(&mut self) {
        let order = Order { keys: &self.order, tokens: &self.growth };
        self.next = self.heap.peek(order).and_then(|top| self.pairs.id(top.pair));
        if let Some(id) = self.next {
            self.pairs.prefetch_entry(id);
        }
    }

    /// Fetches the first [`NEXT_WORDS`] words listed for the guessed next merge with
    /// `fetch` (their entries, or their tokens).
    fn fetch_next(&self, fetch: fn(&WordArena<T>, u32)) {
        if let Some(id) = self.next {
            for &w in self.pairs.words(id).iter().take(NEXT_WORDS) {
                fetch(&self.words, w);
            }
        }
    }

    /// Replaces `pair` (id `merged_id`) by `token` in every word that has it, left to
    /// right without overlap, and updates the pair counts by the exact difference.
    ///
    /// Words are rewritten in parallel chunks when there are many (early merges touch
    /// most words); the chunks' results are applied in word order, so the result is the
    /// same for any thread count. All losses are applied before any gain, so a count
    /// passes u64 during the gains only if its final value does.
    fn merge(
        &mut self,
        pair: Pair,
        merged_id: u32,
        token: Rank,
        helpers: &Helpers<'_>,
    ) -> Result<()> {
        self.near.forget();
        let mut word_ids = self.pairs.take_words(merged_id);
        // A list is appended in word order by each merge that adds to it, so many lists
        // (all those one merge made) are sorted already.
        if !word_ids.windows(2).all(|p| p[0] <= p[1]) {
            word_ids.sort_unstable();
        }
        word_ids.dedup();
        let long =
            (!self.long.is_empty()).then(|| self.long.merge(&word_ids, &self.words, pair, token));
        // The long words are merged above; the rewrite skips them.
        let long_words = &self.long;
        let is_long = |w: u32| long_words.contains(w);
        let mut single = std::mem::take(&mut self.rewritten);
        let parallel: Vec<Rewritten>;
        let shared = word_ids.len() >= self.parallel_words && helpers.threads() > 1;
        let chunks: &[Rewritten] = if shared {
            let (words, places) = (&mut self.words, &self.places);
            let merge = (pair, token);
            parallel = rewrite_shared(words, &word_ids, is_long, merge, helpers, places);
            &parallel
        } else {
            let places = self.places[0].get_mut().unwrap_or_else(PoisonError::into_inner);
            let words = &mut self.words.all_mut();
            rewrite(words, &word_ids, is_long, (pair, token), &mut single, places);
            std::slice::from_ref(&single)
        };
        if let Some(p) = chunks.iter().find_map(|out| out.overflow) {
            return Err(self.overflow(p));
        }
        self.fetch_next(WordArena::prefetch_entry);
        let (mut gone, mut risen, mut ids) = std::mem::take(&mut self.scratch);
        for out in chunks {
            // Each occurrence merged shortened its word by one token.
            if self.pairs.lose(merged_id, out.merged) == 0 {
                gone.push((pair, merged_id));
            }
            // Every id first, each one's entry fetched once it is known; then the counts,
            // whose entries have come in meanwhile (each is a cache miss of its own).
            ids.clear();
            for (k, &(p, _)) in out.lost.iter().enumerate() {
                if let Some(&(ahead, _)) = out.lost.get(k + LOOKUP_AHEAD) {
                    self.pairs.prefetch(ahead);
                }
                let (side, other) = Side::of_lost(p, pair);
                let pairs = &self.pairs;
                let id = self.near.get(side, other, || pairs.id(p)).ok_or_else(|| {
                    Error::Corrupt(format!("a word loses the pair {p:?}, which is not counted"))
                })?;
                self.pairs.prefetch_entry(id);
                ids.push((id, false));
            }
            for (&(p, n), &(id, _)) in out.lost.iter().zip(&ids) {
                if self.pairs.lose(id, n) == 0 {
                    gone.push((p, id));
                }
            }
        }
        for &(p, d) in long.iter().flat_map(|c| &c.net).filter(|(_, d)| *d < 0) {
            let id = self.pairs.id(p).ok_or_else(|| {
                Error::Corrupt(format!("a long word loses the pair {p:?}, which is not counted"))
            })?;
            let n = u64::try_from(-d).map_err(|_| self.overflow(p))?;
            if self.pairs.lose(id, n) == 0 {
                gone.push((p, id));
            }
        }
        self.fetch_next(WordArena::prefetch_tokens);
        for out in chunks {
            // As for the losses: ids (new pairs inserted), then counts and lists.
            ids.clear();
            for (k, g) in out.gained.iter().enumerate() {
                if let Some(ahead) = out.gained.get(k + LOOKUP_AHEAD) {
                    self.pairs.prefetch(ahead.pair);
                }
                let (id, first) = self.gained_id(g.pair, token);
                self.pairs.prefetch_entry(id);
                ids.push((id, first));
            }
            for (g, &(id, first)) in out.gained.iter().zip(&ids) {
                self.raise(g.pair, id, first, g.count, &mut risen)?;
                self.pairs.list_all(id, out.words_of(g));
            }
        }
        if let Some(changes) = &long {
            // A pair that rose touches the new token, as those above.
            for &(p, d) in changes.net.iter().filter(|(_, d)| *d > 0) {
                let n = u64::try_from(d).map_err(|_| self.overflow(p))?;
                let (id, first) = self.gained_id(p, token);
                self.raise(p, id, first, n, &mut risen)?;
            }
            for &(p, w) in &changes.words {
                let id = self.pairs.id_or_insert(p);
                self.pairs.list(id, w);
            }
        }
        for &(p, id) in &gone {
            self.pairs.drop_if_gone(p, id);
        }
        self.rewritten = single;
        // Each pair once, in the order first gained (word order: the same for any threads).
        // A risen pair's count is above 0, so its id was not freed above.
        for &(p, id) in &risen {
            let count = self.pairs.count(id);
            self.push(p, count);
        }
        gone.clear();
        risen.clear();
        self.scratch = (gone, risen, ids);
        Ok(())
    }

    /// The id of `p`, a pair a merge into `token` made (found by neighbour in `near`, or
    /// inserted), and whether this is its first gain in the merge: each gained pair has
    /// one slot in `near` (the new token's side), so its first lookup is its first gain.
    fn gained_id(&mut self, p: Pair, token: Rank) -> (u32, bool) {
        let (side, other) = Side::of_gained(p, token);
        let pairs = &mut self.pairs;
        self.near.id(side, other, || pairs.id_or_insert(p))
    }

    /// Adds `n` occurrences of `p` (id `id`), a pair a merge made, to its count; `p` joins
    /// `risen` on its `first` gain in the merge.
    fn raise(
        &mut self,
        p: Pair,
        id: u32,
        first: bool,
        n: u64,
        risen: &mut Vec<PairId>,
    ) -> Result<()> {
        if !self.pairs.add(id, n) {
            return Err(self.overflow(p));
        }
        if first {
            risen.push((p, id));
        }
        Ok(())
    }
}

/// How many of the guessed next merge's words are fetched during a merge.
const NEXT_WORDS: usize = 16;

/// How many changed pairs ahead the apply fetches each one's place in the pair table.
const LOOKUP_AHEAD: usize = 4;

/// Merges touching at least this many distinct words of [`PARALLEL_WORDS_LEN`] tokens
/// rewrite them in parallel ([`parallel_words`] scales it to the run's words). The
/// helpers are awake for a while after each job and this thread never waits for one to
/// start, so a hand-off pays from about a tenth of a millisecond of rewriting: 100 MB at
/// 8,192 and 65,536 on 2 cores were fastest from 1,024-4,096 (benches/RESULTS.md, "the
/// helper thread"); under Rayon's `install` it took 32,768.
const PARALLEL_WORDS: usize = 2048;

/// The words a merge must list to be rewritten in parallel: [`PARALLEL_WORDS`] for words
/// of [`PARALLEL_WORDS_LEN`] tokens on average, fewer for longer words (each costs more to
/// rewrite, so a hand-off pays sooner), more for shorter ones. The long words are merged
/// apart and left out of the mean (a few huge ones would skew it).
fn parallel_words<T: ArenaToken>(words: &WordArena<T>) -> usize {
    let mean = words.mean_len_below(LONG_WORD).max(1.0);
    (PARALLEL_WORDS as f64 * PARALLEL_WORDS_LEN / mean) as usize
}

/// The mean word length [`PARALLEL_WORDS`] was measured at (English, 10 tokens a word).
const PARALLEL_WORDS_LEN: f64 = 10.0;

#[cfg(test)]
mod tests {
    use super::*;

    /// A token id past what the words' `T` holds stops training with an error (the
    /// caller's choice of width rules it out): never an id cut to 16 bits.
    #[test]
    fn a_token_past_the_arena_width_is_an_error() {
        // 65,535 ids (65,279 of them three-byte filler tokens): the first merge takes id
        // 65,535, the last a u16 holds; the second would take 65,536.
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        tokens.extend((0..65_279u32).map(|i| vec![0xFF, (i >> 8) as u8, i as u8]));
        let vocab = crate::vocab::Vocab::from_tokens(tokens, Vec::new()).unwrap();
        let words = || WordArena::<u16>::new(vec![(vec![1, 2, 3], 5)]).unwrap();
        let stop = |new_tokens| StopRule {
            new_tokens,
            min_frequency: 1,
            threads: Some(1),
            spare_memory: false,
        };
        let (_, one) = train(words(), vocab.growth(&[]), stop(1), &[], &mut |_| Ok(())).unwrap();
        assert_eq!(one.iter().map(|m| m.token).collect::<Vec<_>>(), [65_535]);
        let two = train(words(), vocab.growth(&[]), stop(2), &[], &mut |_| Ok(()));
        let err = two.expect_err("refused").to_string();
        assert!(err.contains("merge 1 makes token id 65536, past the 16-bit ids"), "{err}");
        // The same run on 32-bit ids goes on.
        let wide = WordArena::<Rank>::new(vec![(vec![1, 2, 3], 5)]).unwrap();
        let (_, two) = train(wide, vocab.growth(&[]), stop(2), &[], &mut |_| Ok(())).unwrap();
        assert_eq!(two.iter().map(|m| m.token).collect::<Vec<_>>(), [65_535, 65_536]);
    }

    /// The threshold follows the mean length of the words below `LONG_WORD` tokens.
    #[test]
    fn longer_words_go_parallel_sooner() {
        let arena = |lens: &[usize]| {
            WordArena::<Rank>::new(lens.iter().map(|&n| (vec![1; n], 1)).collect()).unwrap()
        };
        assert_eq!(parallel_words(&arena(&[10, 10])), PARALLEL_WORDS);
        assert_eq!(parallel_words(&arena(&[20, 20])), PARALLEL_WORDS / 2);
        assert_eq!(parallel_words(&arena(&[5, 5])), PARALLEL_WORDS * 2);
        // A long word does not count; no words, or only empty ones, act as 1 token.
        assert_eq!(parallel_words(&arena(&[10, LONG_WORD * 40])), PARALLEL_WORDS);
        assert_eq!(parallel_words(&arena(&[])), PARALLEL_WORDS * 10);
        assert_eq!(parallel_words(&arena(&[0])), PARALLEL_WORDS * 10);
    }
}
