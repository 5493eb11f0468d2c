//! Rewriting words for one merge: every occurrence of a pair replaced by its token, left
//! to right without overlap, in place, and every pair occurrence that goes or comes with
//! it, summed by pair.
//!
//! A rewrite writes only the words it is given, in a run of the arena of its own, so runs
//! of a large merge can be rewritten on several threads; the caller applies each run's
//! count changes in word order. Summing by pair happens on the run's thread, while each
//! word is still in its cache: the caller, alone, then reads one entry per pair changed
//! instead of one per occurrence.

use std::ops::Range;
use std::sync::Mutex;

use super::arena::{ArenaToken, WordArena, WordsMut};
use super::near::{NearIds, Side};
use crate::helpers::Helpers;
use crate::Rank;

/// Two adjacent token ids.
pub type Pair = (Rank, Rank);

/// The count changes rewriting some words gives, one entry per pair in the order first
/// met (word order). Buffers are reused from merge to merge.
#[derive(Default)]
pub struct Rewritten {
    /// Occurrences of the merged pair that went, weighted by word count (each shortened
    /// its word by one token). At most the pair's count, so it fits a `u64`.
    pub merged: u64,
    /// (pair, occurrences that left the words, weighted by word count): every old pair
    /// touching a merged position but the merged pair itself (counted in `merged`). At
    /// most the pair's count.
    pub lost: Vec<(Pair, u64)>,
    /// Every new pair touching a merged token.
    pub gained: Vec<Gained>,
    /// The words of the gained pairs, ascending for each ([`Gained::words`]); past the
    /// last range, what an earlier rewrite left (not cleared: see `group_words`).
    words: Vec<u32>,
    /// A gained pair whose occurrences here, weighted, pass u64 (its count would too;
    /// only possible when the merge's token is one the words already hold).
    pub overflow: Option<Pair>,
    /// (gained index, word) in word order, before they are grouped into `words`.
    listed: Vec<(u32, u32)>,
    /// For each gained pair while gathering: the last word listed for it, and how many.
    tally: Vec<(u32, u32)>,
}

/// A pair that appeared in some of the words rewritten.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gained {
    /// The pair, which holds the merge's new token.
    pub pair: Pair,
    /// Occurrences that appeared, weighted by word count.
    pub count: u64,
    /// Where its words are in [`Rewritten::words`] (each once).
    pub words: Range<u32>,
}

impl Rewritten {
    fn clear(&mut self) {
        self.merged = 0;
        self.lost.clear();
        self.gained.clear();
        self.overflow = None;
        self.listed.clear();
        self.tally.clear();
    }

    /// The words of `gained`, one of this rewrite's.
    pub fn words_of(&self, gained: &Gained) -> &[u32] {
        &self.words[gained.words.start as usize..gained.words.end as usize]
    }

    /// Groups `listed` into `words` by gained pair (a counting sort: stable, so each
    /// pair's words stay in word order).
    fn group_words(&mut self) {
        let mut start = 0;
        for (g, &(_, len)) in self.gained.iter_mut().zip(&self.tally) {
            g.words = start..start;
            start += len;
        }
        // Every place below `start` is written next: only a longer buffer is zeroed, not
        // the whole of it each merge.
        if self.words.len() < start as usize {
            self.words.resize(start as usize, 0);
        }
        for &(i, w) in &self.listed {
            let at = &mut self.gained[i as usize].words.end;
            self.words[*at as usize] = w;
            *at += 1;
        }
    }
}

/// Sums one rewrite's changes by pair as the words are rewritten.
struct Gather<'a> {
    out: &'a mut Rewritten,
    /// Each changed pair's place in `out.lost` or `out.gained`.
    places: &'a mut NearIds,
    pair: Pair,
    token: Rank,
}

// `lose` and `gain` run at every occurrence, from four places in `replace_from`: LLVM
// left them (and `NearIds::id` in them) as calls, which cost 4.6% of the merge loop's
// instructions on the mix at 65,536 (benches/RESULTS.md, "2026-12-07 07:25").
impl Gather<'_> {
    /// One occurrence of `p` left a word of count `n`.
    #[inline(always)]
    fn lose(&mut self, p: Pair, n: u64) {
        let (side, other) = Side::of_lost(p, self.pair);
        let lost = &mut self.out.lost;
        let (i, _) = self.places.id(side, other, || {
            lost.push((p, 0));
            (lost.len() - 1) as u32
        });
        // A sum of some of the pair's occurrences: at most its count.
        lost[i as usize].1 += n;
    }

    /// One occurrence of `p` appeared in word `w` of count `n`.
    #[inline(always)]
    fn gain(&mut self, p: Pair, w: u32, n: u64) {
        let (side, other) = Side::of_gained(p, self.token);
        let gained = &mut self.out.gained;
        let (i, first) = self.places.id(side, other, || {
            gained.push(Gained { pair: p, count: 0, words: 0..0 });
            (gained.len() - 1) as u32
        });
        let g = &mut gained[i as usize];
        match g.count.checked_add(n) {
            Some(sum) => g.count = sum,
            None => {
                self.out.overflow.get_or_insert(p);
            }
        }
        if first {
            self.out.tally.push((w, 0));
        }
        // Words come in order, so a word already listed for the pair is its last one.
        let tally = &mut self.out.tally[i as usize];
        if first || tally.0 != w {
            *tally = (w, tally.1 + 1);
            self.out.listed.push((i, w));
        }
    }
}

/// How many words ahead a rewrite fetches tokens (and twice as far, entries).
const AHEAD: usize = 8;

/// Rewrites the words `word_ids` of `words` in place with `pair` replaced by `token`,
/// recording the changes in `into` (cleared first), numbered by `places` (forgotten
/// first). Words that no longer hold the pair, and words `skip` names (the long ones,
/// merged elsewhere), are left as they are. `pair` is two tokens of the words and `token`
/// must fit the arena's ids (the merge loop checks it): otherwise this panics.
pub fn rewrite<T: ArenaToken>(
    words: &mut WordsMut<'_, T>,
    word_ids: &[u32],
    skip: impl Fn(u32) -> bool,
    (pair, token): (Pair, Rank),
    into: &mut Rewritten,
    places: &mut NearIds,
) {
    // Filled on this thread's stack and put back at the end: the caller's buffers may
    // share a cache line with another thread's, and every push writes a length.
    let mut local = std::mem::take(into);
    local.clear();
    places.forget();
    let mut gather = Gather { out: &mut local, places, pair, token };
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
        let Some(first) = find_pair(word, narrow) else {
            continue;
        };
        let len = replace_from(word, first, (w, n), narrow, token, &mut gather);
        gather.out.merged += n * (word.len() - len) as u64;
        words.set_len(w, len);
    }
    local.group_words();
    *into = local;
}

/// [`rewrite`] of `words` in chunks of consecutive `word_ids` (ascending), one per thread
/// of `helpers` (taken in turn by whichever thread is free: a helper that comes late
/// leaves its chunk to this thread), each chunk's words a run of the arena
/// of their own ([`WordArena::runs_mut`]) rewritten in place by this thread or a helper,
/// numbering its changes with one of `places` that no other thread holds (there must be
/// one for each thread, this one and the helpers). Returns each chunk's changes, in word
/// order.
pub fn rewrite_shared<T: ArenaToken>(
    words: &mut WordArena<T>,
    word_ids: &[u32],
    skip: impl Fn(u32) -> bool + Sync,
    merge: (Pair, Rank),
    helpers: &Helpers<'_>,
    places: &[Mutex<NearIds>],
) -> Vec<Rewritten> {
    // One chunk a thread: each chunk restates every pair it shares with the others (the
    // same neighbours recur in all), so more chunks give the serial apply more entries;
    // 4 a thread were 7-15% slower on multilingual text (benches/RESULTS.md, "one chunk
    // a thread").
    let chunk = word_ids.len().div_ceil(helpers.threads()).max(1);
    let cuts: Vec<u32> = word_ids.chunks(chunk).skip(1).map(|ids| ids[0]).collect();
    let runs = words.runs_mut(&cuts);
    // Fresh buffers each time (freed after the merge): the largest merges come first,
    // and kept buffers would hold their size to the end of the run.
    let mut out: Vec<Rewritten> = runs.iter().map(|_| Rewritten::default()).collect();
    let items: Vec<_> = runs.into_iter().zip(word_ids.chunks(chunk)).zip(&mut out).collect();
    helpers.run(items, |((mut run, ids), out)| {
        // At most one item runs per thread, so one table is always free.
        let mut places = (places.iter().find_map(|p| p.try_lock().ok()))
            .expect("a table of places for each thread");
        rewrite(&mut run, ids, &skip, merge, out, &mut places);
    });
    out
}

/// Where `pair` first occurs in `tokens`: the scan for a word's first occurrence and
/// for each next one.
#[inline(always)]
fn find_pair<T: PartialEq>(tokens: &[T], pair: (T, T)) -> Option<usize> {
    tokens.windows(2).position(|p| p[0] == pair.0 && p[1] == pair.1)
}

/// Rewrites `word[first..]` in place with `pair` replaced by `token` (left to right,
/// without overlap; `first` is its first occurrence), gathering each old pair touching a
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
    out: &mut Gather<'_>,
) -> usize {
    let len = word.len();
    // `i` is at an occurrence; the pair ending at `merged_until` was counted as lost (the
    // right pair of the occurrence before), so one right after it loses no left pair.
    let (mut i, mut write, mut merged_until) = (first, first, 0);
    loop {
        if i > 0 && merged_until != i {
            out.lose((word[i - 1].into(), word[i].into()), n);
        }
        if i + 2 < len {
            out.lose((word[i + 1].into(), word[i + 2].into()), n);
        }
        // The pair this token makes with the one before it (the one after comes with
        // the next token written).
        if write > 0 {
            out.gain((word[write - 1].into(), token.into()), w, n);
        }
        word[write] = token;
        (i, write, merged_until) = (i + 2, write + 1, i + 2);
        // Most words hold the pair once: the tokens up to the next occurrence (or the
        // end) move down in one copy instead of a test and a move each.
        let next = find_pair(&word[i..], pair);
        let end = next.map_or(len, |k| i + k);
        if end > i {
            out.gain((token.into(), word[i].into()), w, n);
            word.copy_within(i..end, write);
            (i, write) = (end, write + end - i);
        }
        if next.is_none() {
            return write;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

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

    /// `rewrite` with a table of its own.
    fn rewrite_alone<T: ArenaToken>(
        arena: &mut WordArena<T>,
        ids: &[u32],
        skip: impl Fn(u32) -> bool,
        merge: (Pair, Rank),
        out: &mut Rewritten,
    ) {
        rewrite(&mut arena.all_mut(), ids, skip, merge, out, &mut NearIds::default());
    }

    /// Each gained pair with its count and words.
    fn gains(out: &Rewritten) -> Vec<(Pair, u64, Vec<u32>)> {
        out.gained.iter().map(|g| (g.pair, g.count, out.words_of(g).to_vec())).collect()
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
        let merge = ((HIGH + 1, HIGH + 1), HIGH + 9);
        rewrite_alone(&mut arena, &[0, 1, 2], |_| false, merge, &mut out);
        assert_eq!(arena.ranks(0), [9, 1, 2].map(|t| HIGH + t));
        assert_eq!(arena.ranks(1), [3, 4].map(|t| HIGH + t));
        assert_eq!(arena.ranks(2), [2, 9].map(|t| HIGH + t));
        assert_eq!(out.merged, 1 + 3);
        // Word 0 loses the (1, 1) at 1 (the one at 0 is merged: not listed), not (1, 2).
        let lost: Vec<_> = high_pairs([(1, 1), (2, 1)]).into_iter().zip([1, 3]).collect();
        assert_eq!(out.lost, lost);
        let [a, b] = high_pairs([(9, 1), (2, 9)]);
        assert_eq!(gains(&out), [(a, 1, vec![0]), (b, 3, vec![2])]);
        assert_eq!(out.overflow, None);
    }

    /// On words of three tokens (so occurrences are adjacent, overlapping and at both
    /// ends), each rewrite matches the plain left-to-right replacement, and its changes
    /// are the pair counts' difference: a pair without the token lost what the words no
    /// longer hold (the merged occurrences apart), a pair with it gained what they now
    /// hold, each word listed once.
    #[test]
    fn changes_are_the_difference_of_pair_counts() {
        counts_difference::<u16>();
        counts_difference::<Rank>();
    }

    fn counts_difference<T: ArenaToken>() {
        let mut rng = crate::test_rng::Rng(23);
        for merge in [(1, 2), (1, 1), (2, 1)] {
            let words: Vec<(Vec<Rank>, u64)> = (0..500)
                .map(|i| {
                    ((0..rng.below(15)).map(|_| 1 + rng.below(3) as Rank).collect(), 1 + i % 4)
                })
                .collect();
            let mut arena = WordArena::<T>::new(words.clone()).unwrap();
            let mut out = Rewritten::default();
            let ids: Vec<u32> = (0..500).collect();
            rewrite_alone(&mut arena, &ids, |_| false, (merge, 9), &mut out);
            let replaced = |w: &[Rank]| {
                let (mut new, mut i) = (Vec::new(), 0);
                while i < w.len() {
                    let hit = i + 1 < w.len() && (w[i], w[i + 1]) == merge;
                    new.push(if hit { 9 } else { w[i] });
                    i += if hit { 2 } else { 1 };
                }
                new
            };
            let (mut diff, mut merged, mut gained) = (BTreeMap::new(), 0, BTreeMap::new());
            for (w, (old, n)) in words.iter().enumerate() {
                let new = replaced(old);
                assert_eq!(arena.ranks(w as u32), new, "{merge:?} {old:?}");
                merged += (old.len() - new.len()) as u64 * n;
                for p in old.windows(2).map(|p| (p[0], p[1])) {
                    *diff.entry(p).or_insert(0i64) += *n as i64;
                }
                for p in new.windows(2).map(|p| (p[0], p[1])) {
                    if p.0 == 9 || p.1 == 9 {
                        let entry = gained.entry(p).or_insert((0, Vec::new()));
                        entry.0 += n;
                        if entry.1.last() != Some(&(w as u32)) {
                            entry.1.push(w as u32);
                        }
                    } else {
                        *diff.entry(p).or_insert(0) -= *n as i64;
                    }
                }
            }
            // The occurrences merged are counted apart; others of the pair (overlapping
            // a merged one) are lost like any pair.
            *diff.entry(merge).or_insert(0) -= merged as i64;
            diff.retain(|_, d| *d != 0);
            let lost: BTreeMap<Pair, i64> = out.lost.iter().map(|&(p, n)| (p, n as i64)).collect();
            assert_eq!(lost, diff, "{merge:?}");
            assert_eq!(out.merged, merged, "{merge:?}");
            let got: BTreeMap<_, _> =
                gains(&out).into_iter().map(|(p, n, w)| (p, (n, w))).collect();
            assert_eq!(got, gained, "{merge:?}");
        }
    }

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
        rewrite_alone(&mut one, &ids, skip, ((1, 2), 9), &mut want);
        let want = totals(std::slice::from_ref(&want));
        for helpers in [0, 1, 2] {
            let threads = helpers + 1;
            let mut shared = WordArena::<u16>::new(words.clone()).unwrap();
            let places: Vec<Mutex<NearIds>> = (0..threads).map(|_| Mutex::default()).collect();
            let chunks = crate::helpers::with_helpers(helpers, |h| {
                rewrite_shared(&mut shared, &ids, skip, ((1, 2), 9), h, &places)
            });
            assert_eq!(chunks.len(), threads, "one chunk a thread");
            assert_eq!(totals(&chunks), want, "{threads} threads");
            assert!((0..2_000).all(|w| shared.word(w) == one.word(w)), "{threads} threads");
        }
        assert!(want.0 > 100 && want.1.len() == 5 && want.2.len() > 4, "{:?}", want.2.keys());
    }

    /// Chunks' changes summed by pair, each gained pair's words joined in chunk order.
    #[allow(clippy::type_complexity)]
    fn totals(chunks: &[Rewritten]) -> (u64, BTreeMap<Pair, u64>, BTreeMap<Pair, (u64, Vec<u32>)>) {
        let (mut lost, mut gained) = (BTreeMap::new(), BTreeMap::<Pair, (u64, Vec<u32>)>::new());
        for c in chunks {
            for &(p, n) in &c.lost {
                *lost.entry(p).or_insert(0) += n;
            }
            for (p, n, words) in gains(c) {
                let entry = gained.entry(p).or_default();
                entry.0 += n;
                entry.1.extend(words);
            }
        }
        (chunks.iter().map(|c| c.merged).sum(), lost, gained)
    }

    /// A gained pair whose weighted occurrences pass u64 is named, not wrapped. Each
    /// gained occurrence stands for a lost one, so only a merge into a token the words
    /// already hold (two pairs joining into one token) can gain a pair from two lost
    /// pairs' counts: here (3, 3) from (3, 1) and from (2, 3).
    #[test]
    fn a_gain_past_u64_is_named() {
        let half = u64::MAX / 2 + 1;
        let mut arena = WordArena::<u16>::new(vec![(vec![3, 1, 2, 3], half)]).unwrap();
        let mut out = Rewritten::default();
        rewrite_alone(&mut arena, &[0], |_| false, ((1, 2), 3), &mut out);
        assert_eq!((out.merged, out.lost.clone()), (half, vec![((3, 1), half), ((2, 3), half)]));
        assert_eq!(out.overflow, Some((3, 3)));
        let mut arena = WordArena::<u16>::new(vec![(vec![1, 2, 3], half)]).unwrap();
        rewrite_alone(&mut arena, &[0], |_| false, ((1, 2), 3), &mut out);
        assert_eq!((out.overflow, gains(&out)), (None, vec![((3, 3), half, vec![0])]));
    }

    /// In place, a merged token lands where the old tokens before it were already moved
    /// left: each lost and gained pair must still be read from the old word. Changes are
    /// summed by pair, and a word is listed once for a pair it gains twice.

    #[test]
    fn rewriting_in_place_reads_the_old_tokens() {
        in_place::<u16>();
        in_place::<Rank>();
    }

    fn in_place<T: ArenaToken>() {
        let words = high(&[(vec![5, 1, 2, 1, 2, 7, 1, 2, 1, 2], 1)]);
        let mut arena = WordArena::<T>::new(words).unwrap();
        let mut out = Rewritten::default();
        rewrite_alone(&mut arena, &[0], |_| false, ((HIGH + 1, HIGH + 2), HIGH + 9), &mut out);
        let merged = [5, 9, 9, 7, 9, 9].map(|t| HIGH + t);
        assert_eq!(arena.ranks(0), merged);
        assert_eq!(out.merged, 4);
        let lost = high_pairs([(5, 1), (2, 1), (2, 7), (7, 1)]).into_iter().zip([1, 2, 1, 1]);
        assert_eq!(out.lost, lost.collect::<Vec<_>>());
        let gained = high_pairs([(5, 9), (9, 9), (9, 7), (7, 9)]).into_iter().zip([1, 2, 1, 1]);
        let gained: Vec<_> = gained.map(|(p, n)| (p, n, vec![0])).collect();
        assert_eq!(gains(&out), gained);
        assert!(out.gained.iter().all(|g| out.words_of(g) == [0]));
        // A skipped word is left alone.
        rewrite_alone(&mut arena, &[0], |_| true, ((HIGH + 9, HIGH + 9), HIGH + 10), &mut out);
        assert_eq!(arena.ranks(0), merged);
        assert_eq!((out.merged, out.lost.len(), out.gained.len()), (0, 0, 0));
    }
}
