//! The first pair count of a run whose words are still single bytes (every fresh run):
//! a pair of bytes is its own slot of a flat table (`left << 8 | right`), so no pair is
//! hashed, and each pair's word list is made at its final length. One pass counts, per
//! pair, the occurrences (weighted by the words' counts) and the words it occurs in; a
//! second writes the words into lists made to hold exactly those, each run of words into
//! its own range of every list. The generic count (`PairIndex::of_words`) asks the pair
//! table once per occurrence that the word before did not have at the same place, grows
//! every list by doubling, and folds the runs' indexes into one. Both give the same counts
//! and lists; only the dense ids differ (here they follow the pairs' order), and nothing
//! ordered reads them.

use std::ops::Range;

use super::arena::{ArenaToken, WordArena};
use super::pairs::{on_runs, Halt, PairIndex, WordList};
use crate::error::Error;
use crate::Rank;

/// Slots of the flat tables: one per pair of bytes.
const PAIRS: usize = 1 << 16;

/// No word seen yet (word ids are below it).
const NO_WORD: u32 = u32::MAX;

/// Words between two ticks.
const TICK_EVERY: u32 = 4096;

/// One run's first pass, by pair slot.
struct Tally {
    /// The occurrences, each weighted by its word's count.
    counts: Vec<u64>,
    /// The words the pair occurs in.
    words: Vec<u32>,
}

/// The first count of the pairs of `words`, on `parts` runs of words at once (on a pool
/// of `threads`; this thread takes the first run and calls `report` every 4,096 words):
/// in flat tables while every token is a byte, else [`PairIndex::of_runs`]. The counts
/// and lists are those of one pass; only the ids differ.
pub(super) fn first_count<T: ArenaToken>(
    words: &WordArena<T>,
    parts: usize,
    threads: usize,
    report: &mut dyn FnMut() -> Result<(), Error>,
) -> Result<PairIndex, Halt> {
    let runs = words.even_runs(parts);
    match of_byte_words(words, &runs, threads, report)? {
        Some(index) => Ok(index),
        None => PairIndex::of_runs(words, &runs, threads, report),
    }
}

/// The index of every pair of `words`, counted on `runs` at once (as
/// [`PairIndex::of_runs`]); None, having counted nothing, when some token is not a byte
/// (a run that extends a tokenizer), for the generic count.
fn of_byte_words<T: ArenaToken>(
    words: &WordArena<T>,
    runs: &[Range<u32>],
    threads: usize,
    report: &mut dyn FnMut() -> Result<(), Error>,
) -> Result<Option<PairIndex>, Halt> {
    let tallies = on_runs(runs, threads, report, |_, run, tick| tally(words, run, tick))?;
    let Some(tallies) = tallies.into_iter().collect::<Option<Vec<Tally>>>() else {
        return Ok(None);
    };
    // Each pair's total, and where each run's words start in its list.
    let mut starts: Vec<Vec<u32>> = Vec::with_capacity(tallies.len());
    let mut totals = vec![0u64; PAIRS];
    let mut listed = vec![0u32; PAIRS];
    for tally in &tallies {
        starts.push(listed.clone());
        for slot in 0..PAIRS {
            totals[slot] = (totals[slot].checked_add(tally.counts[slot]))
                .ok_or(Halt::Overflow(pair_of(slot)))?;
            listed[slot] += tally.words[slot];
        }
    }
    drop(tallies);
    let mut lists: Vec<Vec<u32>> = listed
        .iter()
        .map(|&n| if n > 0 { Vec::with_capacity(n as usize) } else { Vec::new() })
        .collect();
    let targets = Targets(lists.iter_mut().map(|l| l.as_mut_ptr()).collect());
    let filled = on_runs(runs, threads, report, |i, run, tick| {
        // SAFETY: run `i` writes the slots from `starts[i]` up to the next run's start (or
        // the list's length), the words it counted in the first pass, and nothing else
        // touches the lists until every run is done.
        unsafe { fill(words, run, starts[i].clone(), &targets, tick) }
    })?;
    // What makes `set_len` below sound, checked, not assumed: each run ended where the
    // next one starts, the last at the list's length (a few microseconds).
    let ends = starts.iter().skip(1).chain([&listed]);
    assert!(filled.iter().zip(ends).all(|(a, b)| a == b), "the passes saw the same words");
    let mut index = PairIndex::default();
    for (slot, mut list) in lists.drain(..).enumerate() {
        if listed[slot] > 0 {
            // SAFETY: the runs wrote every one of the `listed[slot]` places (checked above).
            unsafe { list.set_len(listed[slot] as usize) };
            index.insert_counted(pair_of(slot), totals[slot], WordList::from_vec(list));
        }
    }
    Ok(Some(index))
}

/// The pair of bytes of a slot.
fn pair_of(slot: usize) -> (Rank, Rank) {
    ((slot >> 8) as Rank, (slot & 0xFF) as Rank)
}

/// The slot of `pair`, or None when either token is not a byte.
#[inline(always)]
fn slot_of<T: ArenaToken>(pair: &[T]) -> Option<usize> {
    let (left, right): (Rank, Rank) = (pair[0].into(), pair[1].into());
    ((left | right) < 256).then_some((left << 8 | right) as usize)
}

/// Walks the pairs of the words of `run` in order, calling `visit(slot, word, count,
/// new)` for each, `new` for the first time its word holds that pair (so both passes
/// list a word under the same pairs); false as soon as a token is not a byte. `tick`
/// runs every [`TICK_EVERY`] words.
#[inline(always)]
fn walk<T: ArenaToken>(
    words: &WordArena<T>,
    run: Range<u32>,
    tick: &mut dyn FnMut() -> Result<(), Error>,
    mut visit: impl FnMut(usize, u32, u64, bool) -> Result<(), Halt>,
) -> Result<bool, Halt> {
    let mut last = vec![NO_WORD; PAIRS];
    for w in run {
        let n = words.count(w);
        for pair in words.word(w).windows(2) {
            let Some(slot) = slot_of(pair) else { return Ok(false) };
            let new = last[slot] != w;
            last[slot] = w;
            visit(slot, w, n, new)?;
        }
        if w % TICK_EVERY == 0 {
            tick().map_err(Halt::Stopped)?;
        }
    }
    Ok(true)
}

/// The first pass over `run`; None as soon as a token is not a byte.
fn tally<T: ArenaToken>(
    words: &WordArena<T>,
    run: Range<u32>,
    tick: &mut dyn FnMut() -> Result<(), Error>,
) -> Result<Option<Tally>, Halt> {
    let mut counts = vec![0u64; PAIRS];
    let mut listed = vec![0u32; PAIRS];
    let bytes_only = walk(words, run, tick, |slot, _, n, new| {
        counts[slot] = counts[slot].checked_add(n).ok_or(Halt::Overflow(pair_of(slot)))?;
        listed[slot] += u32::from(new);
        Ok(())
    })?;
    Ok(bytes_only.then_some(Tally { counts, words: listed }))
}

/// Where each slot's list is written (dangling for an empty one), shared by the runs'
/// threads, each writing its own range of every list.
struct Targets(Vec<*mut u32>);

// SAFETY: the pointers are only written through, by runs that write disjoint ranges.
unsafe impl Sync for Targets {}

/// The second pass over `run`: writes each word into the lists of the pairs it holds,
/// from `next` (by slot, where this run's words start); returns where they end.
///
/// Safety: `run` must be the run the first pass counted with these starts, and no other
/// thread may write its range of any list.
unsafe fn fill<T: ArenaToken>(
    words: &WordArena<T>,
    run: Range<u32>,
    mut next: Vec<u32>,
    targets: &Targets,
    tick: &mut dyn FnMut() -> Result<(), Error>,
) -> Result<Vec<u32>, Halt> {
    let bytes_only = walk(words, run, tick, |slot, w, _, new| {
        if new {
            // SAFETY: the first pass walked this run the same way and counted this word
            // in this run's range (the caller's promise), so the place is inside the
            // list's capacity.
            unsafe { targets.0[slot].add(next[slot] as usize).write(w) };
            next[slot] += 1;
        }
        Ok(())
    })?;
    assert!(bytes_only, "the first pass saw only bytes");
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte words counted in the flat tables give the generic count's index, for every
    /// way of cutting them into runs; a token past the bytes leaves the count to it.
    #[test]
    fn byte_words_count_as_the_generic_count() {
        let mut rng = crate::test_rng::Rng(17);
        let words: Vec<(Vec<u32>, u64)> = (0..5_000)
            .map(|_| {
                let len = rng.below(12);
                // A few letters (long lists, pairs repeated in a word) and any byte.
                let byte = |rng: &mut crate::test_rng::Rng| match rng.below(3) {
                    0 => rng.below(256) as u32,
                    _ => 97 + rng.below(4) as u32,
                };
                ((0..len).map(|_| byte(&mut rng)).collect(), 1 + rng.below(1000) as u64)
            })
            .collect();
        let arena = WordArena::<u16>::new(words.clone()).unwrap();
        let n = arena.len() as u32;
        let generic = PairIndex::of_words(&arena, 0..n, &mut || Ok(())).unwrap();
        let want = generic.listing();
        assert!(want.iter().any(|p| p.2.len() > 500), "long lists");
        for parts in [1, 2, 3, 8] {
            let runs = arena.even_runs(parts);
            let flat = of_byte_words(&arena, &runs, 2, &mut || Ok(())).unwrap().unwrap();
            assert_eq!(flat.listing(), want, "{parts} runs");
            let first = first_count(&arena, parts, 2, &mut || Ok(())).unwrap();
            assert_eq!(first.listing(), want, "{parts} runs");
            let generic = PairIndex::of_runs(&arena, &runs, 2, &mut || Ok(())).unwrap();
            assert_eq!(generic.listing(), want, "{parts} runs");
        }
        let mut past = words;
        past[4_000].0 = vec![97, 256, 98];
        let arena = WordArena::<u16>::new(past).unwrap();
        let runs = arena.even_runs(2);
        assert!(of_byte_words(&arena, &runs, 2, &mut || Ok(())).unwrap().is_none());
        let n = arena.len() as u32;
        let generic = PairIndex::of_words(&arena, 0..n, &mut || Ok(())).unwrap();
        let first = first_count(&arena, 2, 2, &mut || Ok(())).unwrap();
        assert_eq!(first.listing(), generic.listing());
    }

    /// A count past u64, within a run or only once the runs are summed, names its pair; a
    /// tick's error stops the count.
    #[test]
    fn overflow_and_interrupts_stop_the_count() {
        let big = vec![(vec![1, 2], u64::MAX), (vec![3, 4], 1), (vec![1, 2], 1)];
        let arena = WordArena::<u16>::new(big).unwrap();
        for parts in [1, 2, 3] {
            let runs = arena.even_runs(parts);
            let over = of_byte_words(&arena, &runs, 2, &mut || Ok(()));
            assert!(matches!(over, Err(Halt::Overflow((1, 2)))), "{parts} runs");
        }
        let runs = arena.even_runs(1);
        let stopped = of_byte_words(&arena, &runs, 2, &mut || Err(Error::Interrupted));
        assert!(matches!(stopped, Err(Halt::Stopped(Error::Interrupted))));
    }
}
