//! The merge loop's pair index: each pair present in the words gets a dense id, and its
//! count and the words it occurs in live in flat arrays at that id, so one hash lookup
//! reaches both. Ids of pairs that vanish are reused, so the arrays stay as long as the
//! most pairs present at once.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use smallvec::SmallVec;

use super::arena::{ArenaToken, WordArena};
use super::pair_ids::PairIds;
use super::rewrite::Pair;
use crate::error::Error;
use crate::parallel;

/// The words a pair occurs in. Most pairs occur in a few words (about half in one), so
/// up to 4 are held inline, in the 24 bytes a `Vec` takes: no allocation for most pairs.
pub type WordList = SmallVec<[u32; 4]>;

/// The bytes held per pair id ([`Entry`]: count and word list);
/// [`super::budget::merge_entry`] is derived from it.
pub const ID_BYTES: u64 = std::mem::size_of::<Entry>() as u64;

/// A pair's count and the words it occurs in, side by side: a gain reads and writes
/// both, and 32-byte alignment keeps them in one cache line.
#[derive(Default)]
#[repr(align(32))]
struct Entry {
    count: u64,
    words: WordList,
}

/// Pair counts and occurrence lists, keyed by dense pair ids.
#[derive(Default)]
pub struct PairIndex {
    /// The id of every pair with a positive count.
    ids: PairIds,
    /// By id: the pair's count (0 for a free id) and the words it occurs in, ascending
    /// with no repeats when built, then appended in word order per merge (may hold words
    /// that lost the pair since).
    entries: Vec<Entry>,
    /// Ids free for reuse.
    free: Vec<u32>,
}

impl PairIndex {
    /// The id of `pair`, if it is present.
    #[inline]
    pub fn id(&self, pair: Pair) -> Option<u32> {
        self.ids.get(pair)
    }

    /// Fetches where `pair`'s id is looked up into the cache (a hint).
    #[inline]
    pub fn prefetch(&self, pair: Pair) {
        self.ids.prefetch(pair);
    }

    /// The id of `pair`, given a fresh one (count 0, no words) if it is not present.
    #[inline]
    pub fn id_or_insert(&mut self, pair: Pair) -> u32 {
        let (entries, free) = (&mut self.entries, &mut self.free);
        self.ids.get_or_insert(pair, || match free.pop() {
            Some(id) => id,
            None => {
                entries.push(Entry::default());
                (entries.len() - 1) as u32
            }
        })
    }

    /// The current count of the pair with id `id`.
    #[inline]
    pub fn count(&self, id: u32) -> u64 {
        self.entries[id as usize].count
    }

    /// Adds `n` occurrences in word `w` to the pair with id `id`; false (nothing changed)
    /// if the count would pass u64.
    #[inline]
    pub fn gain(&mut self, id: u32, n: u64, w: u32) -> bool {
        let added = self.add(id, n);
        if added {
            self.list(id, w);
        }
        added
    }

    /// Adds `n` to the count of the pair with id `id`; false (nothing changed) if the
    /// count would pass u64.
    #[inline]
    pub fn add(&mut self, id: u32, n: u64) -> bool {
        let count = &mut self.entries[id as usize].count;
        let Some(sum) = count.checked_add(n) else {
            return false;
        };
        *count = sum;
        true
    }

    /// Lists word `w` among those the pair with id `id` occurs in.
    #[inline]
    pub fn list(&mut self, id: u32, w: u32) {
        let list = &mut self.entries[id as usize].words;
        if list.last() != Some(&w) {
            list.push(w);
        }
    }

    /// Lists `words` (ascending, each once) among those the pair with id `id` occurs in.
    #[inline]
    pub fn list_all(&mut self, id: u32, words: &[u32]) {
        let list = &mut self.entries[id as usize].words;
        let listed = usize::from(!words.is_empty() && list.last() == words.first());
        list.extend_from_slice(&words[listed..]);
    }

    /// Takes `n` occurrences from the pair with id `id`; returns the count left.
    #[inline]
    pub fn lose(&mut self, id: u32, n: u64) -> u64 {
        let count = &mut self.entries[id as usize].count;
        debug_assert!(*count >= n, "a pair count went negative");
        *count -= n;
        *count
    }

    /// Fetches the count and word list of the pair with id `id` into the cache (a hint).
    #[inline]
    pub fn prefetch_entry(&self, id: u32) {
        if let Some(entry) = self.entries.get(id as usize) {
            crate::prefetch::prefetch(entry);
        }
    }

    /// The words listed for the pair with id `id` (some may no longer hold it).
    #[inline]
    pub fn words(&self, id: u32) -> &[u32] {
        &self.entries[id as usize].words
    }

    /// Takes the word list of the pair with id `id`, leaving it empty.
    pub fn take_words(&mut self, id: u32) -> WordList {
        std::mem::take(&mut self.entries[id as usize].words)
    }

    /// Forgets `pair` (id `id`) if its count is 0: no word holds it any more, so its word
    /// list is all stale; the id is free for the next new pair.
    pub fn drop_if_gone(&mut self, pair: Pair, id: u32) {
        if self.entries[id as usize].count == 0 && self.ids.remove(pair).is_some() {
            self.entries[id as usize].words = WordList::new();
            self.free.push(id);
        }
    }

    /// The index of every pair in `words[range]`: each occurrence counted with its word's
    /// count, each word listed once per pair, in word order. `tick` runs every 4,096 words;
    /// its error stops the count.
    pub fn of_words<T: ArenaToken>(
        words: &WordArena<T>,
        range: Range<u32>,
        tick: &mut dyn FnMut() -> Result<(), Error>,
    ) -> Result<Self, Halt> {
        let mut index = Self::default();
        // The pair last seen at each position, with its id: words come sorted by bytes, so
        // a word often starts as the one before it did, and a match skips a hash lookup.
        let mut seen: Vec<(Pair, u32)> = Vec::new();
        for w in range {
            let n = words.count(w);
            for (i, pair) in words.word(w).windows(2).enumerate() {
                let pair = (pair[0].into(), pair[1].into());
                let id = match seen.get(i) {
                    Some(&(p, id)) if p == pair => id,
                    _ => {
                        let id = index.id_or_insert(pair);
                        match seen.get_mut(i) {
                            Some(slot) => *slot = (pair, id),
                            None => seen.push((pair, id)),
                        }
                        id
                    }
                };
                if !index.gain(id, n, w) {
                    return Err(Halt::Overflow(pair));
                }
            }
            if w % 4096 == 0 {
                tick().map_err(Halt::Stopped)?;
            }
        }
        Ok(index)
    }

    /// The index of every pair of `words`, counted on `runs` at once (on a pool of
    /// `threads`): this thread takes the first run and calls `report` as
    /// [`PairIndex::of_words`] does, and the runs are folded in word order, so the counts
    /// and lists are those of one pass; only the ids, which nothing ordered depends on,
    /// differ with the number of runs.
    pub fn of_runs<T: ArenaToken>(
        words: &WordArena<T>,
        runs: &[Range<u32>],
        threads: usize,
        report: &mut dyn FnMut() -> Result<(), Error>,
    ) -> Result<Self, Halt> {
        let counted =
            on_runs(runs, threads, report, |_, run, tick| Self::of_words(words, run, tick))?;
        let mut counted = counted.into_iter();
        let mut pairs = counted.next().expect("at least one run");
        for later in counted {
            pairs.absorb(later).map_err(Halt::Overflow)?;
        }
        Ok(pairs)
    }

    /// Gives `pair`, not present, its count and the words it occurs in (ascending, each
    /// once).
    pub(super) fn insert_counted(&mut self, pair: Pair, count: u64, words: WordList) {
        let id = self.id_or_insert(pair);
        let entry = &mut self.entries[id as usize];
        debug_assert!(entry.count == 0 && entry.words.is_empty(), "{pair:?} was present");
        *entry = Entry { count, words };
    }

    /// Adds the counts and word lists of `later`, an index of words that all come after
    /// this one's (so each list stays in word order). Err: a count would pass u64.
    pub fn absorb(&mut self, later: PairIndex) -> Result<(), Pair> {
        let PairIndex { ids, mut entries, .. } = later;
        for (pair, from) in ids.iter() {
            let id = self.id_or_insert(pair);
            let from = &mut entries[from as usize];
            if !self.add(id, from.count) {
                return Err(pair);
            }
            let list = std::mem::take(&mut from.words);
            let into = &mut self.entries[id as usize].words;
            if into.is_empty() {
                *into = list;
            } else {
                into.extend_from_slice(&list);
            }
        }
        Ok(())
    }

    /// Every present pair and its count (in no particular order).
    pub fn counts(&self) -> impl Iterator<Item = (Pair, u64)> + '_ {
        self.ids.iter().map(|(p, id)| (p, self.entries[id as usize].count))
    }
}

#[cfg(test)]
impl PairIndex {
    /// Every present pair with its count and word list, in pair order.
    pub(super) fn listing(&self) -> Vec<(Pair, u64, Vec<u32>)> {
        let mut pairs: Vec<(Pair, u64, Vec<u32>)> = (self.ids.iter())
            .map(|(p, id)| (p, self.count(id), self.entries[id as usize].words.to_vec()))
            .collect();
        pairs.sort_unstable();
        pairs
    }
}

/// Why [`PairIndex::of_words`] stopped before the end.
#[derive(Debug)]
pub enum Halt {
    /// The pair's count would pass u64.
    Overflow(Pair),
    /// The tick's error.
    Stopped(Error),
}

/// `count(i, runs[i], tick)` for every run at once (on a pool of `threads`), the results
/// in run order: this thread takes the first run, whose tick is `report`; the other
/// runs' ticks stop them as soon as the first run fails (an interrupt, say). The first
/// failure in run order is returned.
pub(super) fn on_runs<R: Send>(
    runs: &[Range<u32>],
    threads: usize,
    report: &mut dyn FnMut() -> Result<(), Error>,
    count: impl Fn(usize, Range<u32>, &mut dyn FnMut() -> Result<(), Error>) -> Result<R, Halt> + Sync,
) -> Result<Vec<R>, Halt> {
    let stop = AtomicBool::new(false);
    let mut later: Vec<Option<Result<R, Halt>>> = runs.iter().skip(1).map(|_| None).collect();
    let first = if later.is_empty() {
        count(0, runs[0].clone(), report)
    } else {
        parallel::pool(Some(threads)).in_place_scope(|scope| {
            for (i, (run, out)) in runs[1..].iter().cloned().zip(&mut later).enumerate() {
                let (stop, count) = (&stop, &count);
                scope.spawn(move |_| {
                    let mut tick = || match stop.load(Relaxed) {
                        true => Err(Error::Interrupted),
                        false => Ok(()),
                    };
                    *out = Some(count(i + 1, run, &mut tick));
                });
            }
            let first = count(0, runs[0].clone(), report);
            stop.store(first.is_err(), Relaxed);
            first
        })
    };
    let mut all = vec![first?];
    for run in later {
        all.push(run.expect("the scope ran every run")?);
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count_of(index: &PairIndex, pair: Pair) -> u64 {
        index.id(pair).map_or(0, |id| index.count(id))
    }

    #[test]
    fn ids_are_reused_once_a_pair_is_gone() {
        let mut index = PairIndex::default();
        let a = index.id_or_insert((1, 2));
        assert!(index.gain(a, 3, 0));
        assert!(index.gain(a, 1, 0));
        assert!(index.gain(a, 1, 4));
        assert_eq!(count_of(&index, (1, 2)), 5);
        assert_eq!(index.take_words(a).as_slice(), [0, 4]);
        assert_eq!(index.lose(a, 5), 0);
        index.drop_if_gone((1, 2), a);
        assert_eq!(index.id((1, 2)), None);
        assert_eq!(count_of(&index, (1, 2)), 0);
        assert_eq!(index.id_or_insert((7, 8)), a);
    }

    /// Runs of words counted apart and folded in order give the index of one pass: the
    /// same counts and the same word lists, for every way of cutting the words.
    #[test]
    fn runs_counted_apart_fold_into_one_pass() {
        let mut rng = crate::test_rng::Rng(9);
        let words: Vec<(Vec<u32>, u64)> = (0..3_000)
            .map(|_| {
                let len = rng.below(9);
                ((0..len).map(|_| rng.below(6) as u32).collect(), 1 + rng.below(4) as u64)
            })
            .collect();
        let arena = WordArena::<crate::Rank>::new(words).unwrap();
        let all = PairIndex::listing;
        let n = arena.len() as u32;
        let one = PairIndex::of_words(&arena, 0..n, &mut || Ok(())).unwrap();
        let want = all(&one);
        assert!(want.len() == 36 && want.iter().any(|p| p.2.len() > 100), "every pair, long lists");
        for parts in [2, 3, 7] {
            let runs = arena.even_runs(parts);
            let mut folded = PairIndex::of_words(&arena, runs[0].clone(), &mut || Ok(())).unwrap();
            for run in &runs[1..] {
                let later = PairIndex::of_words(&arena, run.clone(), &mut || Ok(())).unwrap();
                folded.absorb(later).unwrap();
            }
            assert_eq!(all(&folded), want, "{parts} runs");
        }
        // A tick's error stops the count; so does a count past u64, naming the pair.
        let stopped = PairIndex::of_words(&arena, 0..n, &mut || Err(Error::Interrupted));
        assert!(matches!(stopped, Err(Halt::Stopped(Error::Interrupted))));
        let big =
            WordArena::<crate::Rank>::new(vec![(vec![1, 2], u64::MAX), (vec![1, 2], 1)]).unwrap();
        let over = PairIndex::of_words(&big, 0..2, &mut || Ok(()));
        assert!(matches!(over, Err(Halt::Overflow((1, 2)))));
        let mut first = PairIndex::of_words(&big, 0..1, &mut || Ok(())).unwrap();
        let second = PairIndex::of_words(&big, 1..2, &mut || Ok(())).unwrap();
        assert_eq!(first.absorb(second), Err((1, 2)));
    }

    #[test]
    fn a_count_past_u64_is_refused() {
        let mut index = PairIndex::default();
        let a = index.id_or_insert((1, 2));
        assert!(index.gain(a, u64::MAX, 0));
        assert!(!index.gain(a, 1, 1));
        assert_eq!(count_of(&index, (1, 2)), u64::MAX);
    }
}
