//! Rewriting words for one merge: every occurrence of a pair replaced by its token, left
//! to right without overlap, in place, and every pair occurrence that goes or comes with
//! it.
//!
//! A rewrite writes only the words it is given, in a run of the arena of its own, so runs
//! of a large merge can be rewritten on several threads; the caller applies each run's
//! count changes in word order.

use super::arena::{ArenaToken, WordArena, WordsMut};
use crate::helpers::Helpers;
use crate::Rank;

/// Two adjacent token ids.
pub type Pair = (Rank, Rank);

/// The count changes rewriting some words gives. Buffers are reused from merge to merge.
#[derive(Default)]
pub struct Rewritten {
    /// Occurrences of the merged pair that went, weighted by word count (each shortened
    /// its word by one token). At most the pair's count, so it fits a `u64`.
    pub merged: u64,
    /// (pair, word count): one occurrence of the pair left a word (every old pair
    /// touching a merged position but the merged pair itself, counted in `merged`).
    pub lost: Vec<(Pair, u64)>,
    /// (pair, word): one occurrence of the pair appeared in the word (every new pair
    /// touching a merged token).
    pub gained: Vec<(Pair, u32)>,
}

/// How many words ahead a rewrite fetches tokens (and twice as far, entries).
const AHEAD: usize = 8;

/// Rewrites the words `word_ids` of `words` in place with `pair` replaced by `token`,
/// recording the changes in `into` (cleared first). Words that no longer hold the pair,
/// and words `skip` names (the long ones, merged elsewhere), are left as they are.
/// `pair` is two tokens of the words and `token` must fit the arena's ids (the merge loop
/// checks it): otherwise this panics.
pub fn rewrite<T: ArenaToken>(
    words: &mut WordsMut<'_, T>,
    word_ids: &[u32],
    skip: impl Fn(u32) -> bool,
    pair: Pair,
    token: Rank,
    into: &mut Rewritten,
) {
    // Filled on this thread's stack and put back at the end: the caller's buffers may
    // share a cache line with another thread's, and every push writes a length.
    let mut local = std::mem::take(into);
    let out = &mut local;
    out.merged = 0;
    out.lost.clear();
    out.gained.clear();
    let fit = |id: Rank| T::narrow(id).expect("a merge's ids fit the arena's");
    let (narrow, token) = ((fit(pair.0), fit(pair.1)), fit(token));
    for (i, &w) in word_ids.iter().enumerate() {
        // Each visit waits on memory (the word's entry, then its tokens) more than it
        // computes: fetch both a few words ahead.
        if let Some(&ahead) = word_ids.get(i + 2 * AHEAD) {
            words.prefetch_entry(ahead);
        }
        if let Some(&ahead) = word_ids.get(i + AHEAD) {
            words.prefetch_tokens(ahead);
        }
        if skip(w) {
            continue;
        }
        let n = words.count(w);
        let word = words.word_mut(w);
        // Many words listed for a pair no longer hold it (an earlier merge took it): a
        // plain scan answers for them without writing anything.
        let Some(first) = word.windows(2).position(|p| p[0] == narrow.0 && p[1] == narrow.1) else {
            continue;
        };
        let len = replace_from(word, first, (w, n), narrow, token, out);
        out.merged += n * (word.len() - len) as u64;
        words.set_len(w, len);
    }
    *into = local;
}

/// Chunks per thread of a shared rewrite: taken in turn by whichever thread is free, so
/// a helper that comes late still takes a share.
const CHUNKS_PER_THREAD: usize = 4;

/// [`rewrite`] of `words` in chunks of consecutive `word_ids` (ascending), about
/// [`CHUNKS_PER_THREAD`] per thread of `threads`, each chunk's words a run of the arena
/// of their own ([`WordArena::runs_mut`]) rewritten in place by this thread or a helper.
/// Returns each chunk's changes, in word order.
pub fn rewrite_shared<T: ArenaToken>(
    words: &mut WordArena<T>,
    word_ids: &[u32],
    skip: impl Fn(u32) -> bool + Sync,
    pair: Pair,
    token: Rank,
    threads: usize,
    helpers: &Helpers<'_>,
) -> Vec<Rewritten> {
    let chunk = word_ids.len().div_ceil(threads * CHUNKS_PER_THREAD).max(1);
    let cuts: Vec<u32> = word_ids.chunks(chunk).skip(1).map(|ids| ids[0]).collect();
    let runs = words.runs_mut(&cuts);
    // Fresh buffers each time (freed after the merge): the largest merges come first,
    // and kept buffers would hold their size to the end of the run.
    let mut out: Vec<Rewritten> = runs.iter().map(|_| Rewritten::default()).collect();
    let items: Vec<_> = runs.into_iter().zip(word_ids.chunks(chunk)).zip(&mut out).collect();
    helpers.run(items, |((mut run, ids), out)| rewrite(&mut run, ids, &skip, pair, token, out));
    out
}

/// Rewrites `word[first..]` in place with `pair` replaced by `token` (left to right,
/// without overlap; `first` is its first occurrence), recording each old pair touching a
/// merged position as lost and each new pair touching a merged token as gained, once per
/// occurrence, for word `w` of count `n`. Returns the word's new length.
///
/// Tokens are written at `write` while read at `i >= write`, and an old pair is read
/// before anything is written over it: the token before `i` is still the old one, since
/// either nothing merged yet (it was copied onto itself) or `write < i` (not yet written).
fn replace_from<T: ArenaToken>(
    word: &mut [T],
    first: usize,
    (w, n): (u32, u64),
    pair: (T, T),
    token: T,
    out: &mut Rewritten,
) -> usize {
    // Old positions before `merged_until` are merged up to there (so the pair ending at
    // it is already counted as lost); `last_merged` says the last token written is one.
    let (mut merged_until, mut last_merged) = (0, false);
    let (mut i, mut write) = (first, first);
    while i < word.len() {
        if i + 1 < word.len() && word[i] == pair.0 && word[i + 1] == pair.1 {
            if i > 0 && merged_until != i {
                out.lost.push(((word[i - 1].into(), word[i].into()), n));
            }
            if i + 2 < word.len() {
                out.lost.push(((word[i + 1].into(), word[i + 2].into()), n));
            }
            // The pair this token makes with the one before it (the one after comes
            // with the next token written).
            if write > 0 {
                out.gained.push(((word[write - 1].into(), token.into()), w));
            }
            word[write] = token;
            merged_until = i + 2;
            last_merged = true;
            i += 2;
        } else {
            if last_merged {
                out.gained.push(((token.into(), word[i].into()), w));
            }
            word[write] = word[i];
            last_merged = false;
            i += 1;
        }
        write += 1;
    }
    write
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::arena::WordArena;

    /// Each test runs on both widths of arena token, with ids near the top of `u16`'s.
    const HIGH: Rank = 65_000;

    fn high(words: &[(Vec<Rank>, u64)]) -> Vec<(Vec<Rank>, u64)> {
        words.iter().map(|(w, n)| (w.iter().map(|&t| HIGH + t).collect(), *n)).collect()
    }

    fn high_pairs<const N: usize>(pairs: [Pair; N]) -> [Pair; N] {
        pairs.map(|(a, b)| (HIGH + a, HIGH + b))
    }

    #[test]
    fn overlapping_occurrences_merge_left_to_right() {
        overlapping_occurrences::<u16>();
        overlapping_occurrences::<Rank>();
    }

    fn overlapping_occurrences<T: ArenaToken>() {
        let words = high(&[(vec![1, 1, 1, 2], 1), (vec![3, 4], 2), (vec![2, 1, 1], 3)]);
        let mut arena = WordArena::<T>::new(words).unwrap();
        let mut out = Rewritten::default();
        let (pair, token) = ((HIGH + 1, HIGH + 1), HIGH + 9);
        rewrite(&mut arena.all_mut(), &[0, 1, 2], |_| false, pair, token, &mut out);
        assert_eq!(arena.ranks(0), [9, 1, 2].map(|t| HIGH + t));
        assert_eq!(arena.ranks(1), [3, 4].map(|t| HIGH + t));
        assert_eq!(arena.ranks(2), [2, 9].map(|t| HIGH + t));
        assert_eq!(out.merged, 1 + 3);
        // Word 0 loses the (1, 1) at 1 (the one at 0 is merged: not listed), not (1, 2).
        let lost: Vec<_> = high_pairs([(1, 1), (2, 1)]).into_iter().zip([1, 3]).collect();
        assert_eq!(out.lost, lost);
        let gained: Vec<_> = high_pairs([(9, 1), (2, 9)]).into_iter().zip([0, 2]).collect();
        assert_eq!(out.gained, gained);
    }

    /// In place, a merged token lands where the old tokens before it were already moved
    /// left: each lost and gained pair must still be read from the old word.
    /// Chunks rewritten on helpers give, in word order, what one rewrite of every word
    /// gives, and the same words.
    #[test]
    fn shared_chunks_add_up_to_one_rewrite() {
        let mut rng = crate::test_rng::Rng(5);
        let words: Vec<(Vec<Rank>, u64)> = (0..2_000)
            .map(|i| ((0..rng.below(12)).map(|_| rng.below(3) as Rank).collect(), 1 + i % 5))
            .collect();
        let ids: Vec<u32> = (0..2_000).filter(|w| w % 3 != 1).collect();
        let skip = |w: u32| w % 50 == 7;
        let mut one = WordArena::<u16>::new(words.clone()).unwrap();
        let mut want = Rewritten::default();
        rewrite(&mut one.all_mut(), &ids, skip, (1, 2), 9, &mut want);
        for (threads, helpers) in [(1, 0), (2, 1), (3, 2)] {
            let mut shared = WordArena::<u16>::new(words.clone()).unwrap();
            let chunks = crate::helpers::with_helpers(helpers, |h| {
                rewrite_shared(&mut shared, &ids, skip, (1, 2), 9, threads, h)
            });
            assert!(chunks.len() > threads, "{threads} threads: several chunks each");
            let merged: u64 = chunks.iter().map(|c| c.merged).sum();
            let lost: Vec<_> = chunks.iter().flat_map(|c| c.lost.iter().copied()).collect();
            let gained: Vec<_> = chunks.iter().flat_map(|c| c.gained.iter().copied()).collect();
            assert_eq!(
                (merged, lost, gained),
                (want.merged, want.lost.clone(), want.gained.clone())
            );
            assert!((0..2_000).all(|w| shared.word(w) == one.word(w)), "{threads} threads");
        }
        assert!(want.merged > 100 && !want.gained.is_empty());
    }

    #[test]
    fn rewriting_in_place_reads_the_old_tokens() {
        in_place::<u16>();
        in_place::<Rank>();
    }

    fn in_place<T: ArenaToken>() {
        let words = high(&[(vec![5, 1, 2, 1, 2, 7, 1, 2, 1, 2], 1)]);
        let mut arena = WordArena::<T>::new(words).unwrap();
        let mut out = Rewritten::default();
        rewrite(&mut arena.all_mut(), &[0], |_| false, (HIGH + 1, HIGH + 2), HIGH + 9, &mut out);
        let merged = [5, 9, 9, 7, 9, 9].map(|t| HIGH + t);
        assert_eq!(arena.ranks(0), merged);
        assert_eq!(out.merged, 4);
        let lost = high_pairs([(5, 1), (2, 1), (2, 7), (7, 1), (2, 1)]).map(|p| (p, 1));
        assert_eq!(out.lost, lost);
        let gained = high_pairs([(5, 9), (9, 9), (9, 7), (7, 9), (9, 9)]).map(|p| (p, 0));
        assert_eq!(out.gained, gained);
        // A skipped word is left alone.
        rewrite(&mut arena.all_mut(), &[0], |_| true, (HIGH + 9, HIGH + 9), HIGH + 10, &mut out);
        assert_eq!(arena.ranks(0), merged);
        assert_eq!((out.merged, out.lost.len(), out.gained.len()), (0, 0, 0));
    }
}
