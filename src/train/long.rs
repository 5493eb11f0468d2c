//! Long words in the merge loop: merged where the pair occurs, not rescanned.
//!
//! A merge rewrites each word holding its pair from end to end, which is right for the
//! short words text is made of but quadratic for one long word that many merges touch
//! (200 kB of random letters as one piece: 9,000 merges, each a scan of the whole word).
//! A word of at least `LONG_WORD` tokens is kept instead as a linked list of positions
//! with the positions where each of its pairs starts; a merge visits only the positions
//! of its pair (some stale: those are checked and skipped), so a word's total cost is
//! proportional to its length plus the pairs its merges create.
//!
//! Same result as the rewrite: positions are taken left to right, and one whose left or
//! right token was consumed by the merge before it (or changed since it was listed) is
//! skipped, which is the left-to-right, non-overlapping rule. Each merge's count changes
//! are exact differences (an old pair touching a merged position loses the word's count,
//! a new one gains it), summed with the short words'.

use ahash::AHashMap;

use super::arena::{ArenaToken, WordArena};
use super::rewrite::Pair;
use crate::Rank;

/// What a merge changes in the long words, while it is summed.
#[derive(Default)]
struct Delta {
    /// Net change of each pair's count.
    counts: AHashMap<Pair, i128>,
    /// (pair, word) for each pair that appears in a word through the merge.
    words: Vec<(Pair, u32)>,
}

/// What a merge changed in the long words, with the net changes in pair order: the map's
/// order depends on its hash seed, and applying in pair order keeps every run identical.
pub struct NetChanges {
    /// (pair, net change), nonzero, sorted by pair.
    pub net: Vec<(Pair, i128)>,
    /// (pair, word) for each pair that appears in a word through the merge.
    pub words: Vec<(Pair, u32)>,
}

impl Delta {
    /// The nonzero changes in pair order.
    fn into_net(self) -> NetChanges {
        let mut net: Vec<(Pair, i128)> = self.counts.into_iter().filter(|&(_, d)| d != 0).collect();
        net.sort_unstable();
        NetChanges { net, words: self.words }
    }
}

/// Words of at least this many tokens are long. Below it a rescan costs less than the
/// index (about 16 bytes per token instead of 4).
pub const LONG_WORD: usize = 256;

/// No position (the ends of the list), or a position merged into its left neighbour.
const NONE: u32 = u32::MAX;

/// One long word as a linked list of positions.
struct LongWord {
    /// The token at each position; `NONE` once merged into its left neighbour.
    tokens: Vec<Rank>,
    /// The next and previous live positions (`NONE` at the ends).
    next: Vec<u32>,
    prev: Vec<u32>,
    /// Where each pair starts (may hold positions that no longer hold it).
    at: AHashMap<Pair, Vec<u32>>,
}

/// The long words of a training run, by word index.
#[derive(Default)]
pub struct LongWords {
    words: AHashMap<u32, LongWord>,
    /// One bit per word, set for the long ones: a merge asks about every word it
    /// touches, and a bit costs less than a hash lookup (1 bit a word; empty when no word
    /// is long).
    is_long: Vec<u64>,
}

impl LongWords {
    /// The long words of `words`, indexed. The arena keeps its copy, which the merge
    /// loop no longer rewrites (see `contains`).
    pub fn of<T: ArenaToken>(words: &WordArena<T>) -> Self {
        let mut long = AHashMap::new();
        let mut is_long = Vec::new();
        for w in (0..words.len() as u32).filter(|&w| words.word(w).len() >= LONG_WORD) {
            let tokens: Vec<Rank> = words.word(w).iter().map(|&t| t.into()).collect();
            let n = tokens.len() as u32;
            let next = (1..=n).map(|i| if i == n { NONE } else { i }).collect();
            let prev = (0..n).map(|i| if i == 0 { NONE } else { i - 1 }).collect();
            let mut at: AHashMap<Pair, Vec<u32>> = AHashMap::new();
            for (i, pair) in tokens.windows(2).enumerate() {
                at.entry((pair[0], pair[1])).or_default().push(i as u32);
            }
            long.insert(w, LongWord { tokens, next, prev, at });
            if is_long.is_empty() {
                is_long = vec![0; words.len().div_ceil(64)];
            }
            is_long[w as usize / 64] |= 1 << (w % 64);
        }
        Self { words: long, is_long }
    }

    /// True when there are no long words (the usual case: the merge loop skips them).
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// True when word `w` is a long one.
    #[inline]
    pub fn contains(&self, w: u32) -> bool {
        self.is_long.get(w as usize / 64).is_some_and(|bits| bits >> (w % 64) & 1 == 1)
    }

    /// Replaces `pair` by `token` in the long words among `word_ids`, and returns the
    /// count changes and the (pair, word) of every pair the merge creates.
    pub fn merge<T: ArenaToken>(
        &mut self,
        word_ids: &[u32],
        counts: &WordArena<T>,
        pair: Pair,
        token: Rank,
    ) -> NetChanges {
        let mut delta = Delta::default();
        for &w in word_ids {
            if !self.contains(w) {
                continue;
            }
            if let Some(word) = self.words.get_mut(&w) {
                word.merge(w, i128::from(counts.count(w)), pair, token, &mut delta);
            }
        }
        delta.into_net()
    }
}

impl LongWord {
    fn merge(&mut self, w: u32, n: i128, pair: Pair, token: Rank, delta: &mut Delta) {
        let Some(mut starts) = self.at.remove(&pair) else {
            return;
        };
        starts.sort_unstable();
        starts.dedup();
        // The pairs on each side come in runs (a run of spaces gives the same ones at
        // every position), so changes are summed per run before touching a map.
        let mut merged = 0i128;
        let [mut left_old, mut left_new, mut right_old, mut right_new] = [Run::default(); 4];
        let (mut left_at, mut right_at) = (Vec::new(), Vec::new());
        for p in starts {
            let q = self.next[p as usize];
            if self.tokens[p as usize] != pair.0 || q == NONE || self.tokens[q as usize] != pair.1 {
                continue; // merged away, or changed since it was listed
            }
            let (before, after) = (self.prev[p as usize], self.next[q as usize]);
            merged += n;
            if before != NONE {
                let left = self.tokens[before as usize];
                left_old.add((left, pair.0), -n, &mut delta.counts);
                left_new.add((left, token), n, &mut delta.counts);
                left_at.push(((left, token), before));
            }
            if after != NONE {
                let right = self.tokens[after as usize];
                right_old.add((pair.1, right), -n, &mut delta.counts);
                right_new.add((token, right), n, &mut delta.counts);
                right_at.push(((token, right), p));
                self.prev[after as usize] = p;
            }
            self.tokens[p as usize] = token;
            self.tokens[q as usize] = NONE;
            self.next[p as usize] = after;
        }
        *delta.counts.entry(pair).or_insert(0) -= merged;
        for mut run in [left_old, left_new, right_old, right_new] {
            run.flush(&mut delta.counts);
        }
        for created in [left_at, right_at] as [Vec<(Pair, u32)>; 2] {
            self.index(w, &created, delta);
        }
    }

    /// Lists the positions of pairs a merge created (one map lookup per run of equal
    /// pairs), and the word under each pair.
    fn index(&mut self, w: u32, created: &[(Pair, u32)], delta: &mut Delta) {
        for run in created.chunk_by(|a, b| a.0 == b.0) {
            let p = run[0].0;
            self.at.entry(p).or_default().extend(run.iter().map(|&(_, position)| position));
            if delta.words.last() != Some(&(p, w)) {
                delta.words.push((p, w));
            }
        }
    }
}

/// A change to one pair's count, summed while the same pair repeats.
#[derive(Default, Clone, Copy)]
struct Run {
    pair: Option<Pair>,
    sum: i128,
}

impl Run {
    #[inline]
    fn add(&mut self, pair: Pair, d: i128, counts: &mut AHashMap<Pair, i128>) {
        if self.pair != Some(pair) {
            self.flush(counts);
            self.pair = Some(pair);
        }
        self.sum += d;
    }

    fn flush(&mut self, counts: &mut AHashMap<Pair, i128>) {
        if let Some(pair) = self.pair.take() {
            *counts.entry(pair).or_insert(0) += std::mem::take(&mut self.sum);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::near::NearIds;
    use super::super::rewrite::{rewrite, Rewritten};
    use super::*;

    /// The long path and the rewrite agree on the words and the count changes, merge
    /// after merge, on words where pairs overlap and repeat.
    #[test]
    fn merges_like_the_rewrite() {
        let mut seed = 11u64;
        let mut rand = move |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let n = 3u64;
        for round in 0..20 {
            let len = LONG_WORD + rand(600) as usize;
            let alphabet = 1 + rand(3) as u32;
            let word: Vec<Rank> = (0..len).map(|_| 97 + rand(u64::from(alphabet)) as u32).collect();
            let mut arena = WordArena::new(vec![(word, n)]).unwrap();
            let mut long = LongWords::of(&arena);
            let (mut out, mut places) = (Rewritten::default(), NearIds::default());
            for next_token in 256..296 {
                // Merge a pair the word holds (the first, or one at a random place).
                let current = arena.word(0).to_vec();
                if current.len() < 2 {
                    break;
                }
                let i = if rand(2) == 0 { 0 } else { rand(current.len() as u64 - 1) as usize };
                let pair = (current[i], current[i + 1]);
                // The long word's copy in the arena is rewritten as a short one would be.
                let merge = (pair, next_token);
                rewrite(&mut arena.all_mut(), &[0], |_| false, merge, &mut out, &mut places);
                let mut want: AHashMap<Pair, i128> = AHashMap::new();
                *want.entry(pair).or_insert(0) -= i128::from(out.merged);
                for &(p, c) in &out.lost {
                    *want.entry(p).or_insert(0) -= i128::from(c);
                }
                for g in &out.gained {
                    *want.entry(g.pair).or_insert(0) += i128::from(g.count);
                }
                let got = long.merge(&[0], &arena, pair, next_token);
                let live: Vec<Rank> = {
                    let word = &long.words[&0];
                    let mut p = 0u32;
                    let mut out = Vec::new();
                    while p != NONE {
                        out.push(word.tokens[p as usize]);
                        p = word.next[p as usize];
                    }
                    out
                };
                assert_eq!(live, arena.word(0), "round {round}");
                let mut want: Vec<(Pair, i128)> =
                    want.into_iter().filter(|&(_, c)| c != 0).collect();
                want.sort_unstable();
                assert_eq!(got.net, want, "round {round}");
            }
        }
    }
}
