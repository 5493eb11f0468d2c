//! The merge loop: incremental BPE over counted words.
//!
//! Pair counts live in a hash map; a d-ary max-heap holds candidates keyed by (count,
//! reversed pair bytes) so the pop order is exactly the contract's (highest count, then
//! the lexicographically smallest (left bytes, right bytes)). Heap entries are lazy: a
//! popped entry whose count is stale is re-queued with the current count. For each pair
//! we keep the words it occurs in, so a merge touches only those words.

use std::cmp::Ordering;
use std::rc::Rc;
use std::time::{Duration, Instant};

use ahash::AHashMap;
use dary_heap::OctonaryHeap;
use rayon::prelude::*;

use super::candidate::Candidate;
use super::long::LongWords;
use super::rewrite::{rewrite, Delta, Pair, Word};
use crate::error::{Error, Result};
use crate::parallel;
use crate::vocab::{Growth, MergeRecord};
use crate::Rank;

/// The merge loop's growing vocabulary: token bytes shared with the heap entries.
pub type Tokens = Growth<Rc<[u8]>>;

/// When training stops.
#[derive(Debug, Clone, Copy)]
pub struct StopRule {
    /// New tokens to create (duplicate-token merges do not count).
    pub new_tokens: usize,
    /// Stop when the best pair occurs fewer times than this.
    pub min_frequency: u64,
    /// Threads for the parallel parts (default: all cores); never changes the result.
    pub threads: Option<usize>,
}

/// What training reports, at most every `REPORT_EVERY` and once at the end.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    /// New tokens created so far (replayed ones included).
    pub created: usize,
    /// Merges made since the previous report, in order (never replayed ones).
    pub new_merges: &'a [MergeRecord],
}

/// Receives progress; returning an error (e.g. `Error::Interrupted`) stops training.
pub type Observer<'a> = dyn FnMut(Progress<'_>) -> Result<()> + 'a;

const REPORT_EVERY: Duration = Duration::from_millis(100);

/// The state of a training run.
struct Merger {
    /// Each distinct word as token ids (empty for a long word: see `long`).
    words: Vec<Word>,
    /// The words of `LONG_WORD` tokens or more, merged by position (`long.rs`).
    long: LongWords,
    /// How often each word occurs.
    word_counts: Vec<u64>,
    /// The tokens so far. Their bytes are shared with heap entries, which compare by bytes.
    growth: Tokens,
    /// The current count of every pair that occurs.
    pair_counts: AHashMap<Pair, u64>,
    /// Words each pair occurs in (may hold words that no longer have it).
    pair_words: AHashMap<Pair, Vec<u32>>,
    /// Candidates to merge (lazy: an entry's count may be stale, see `pop_best`).
    heap: OctonaryHeap<Candidate>,
    /// Threads for rewriting words in large merges.
    threads: usize,
}

/// Trains on `words` (token ids of `growth`, count), growing `growth`. Returns it grown
/// and the merge log of the new merges.
///
/// `replay` is a merge log from an earlier run on the same words (a resumed run): its
/// merges are recomputed and must match record for record, then training goes on. Only
/// merges past `replay` are reported as new.
pub fn train(
    words: Vec<(Vec<Rank>, u64)>,
    growth: Tokens,
    stop: StopRule,
    replay: &[MergeRecord],
    observe: &mut Observer<'_>,
) -> Result<(Tokens, Vec<MergeRecord>)> {
    let threads = stop.threads.unwrap_or_else(parallel::default_threads);
    let mut merger = Merger::new(words, growth, threads);
    merger.count_pairs(&mut |created| observe(Progress { created, new_merges: &[] }))?;
    merger.long = LongWords::take(&mut merger.words);
    let mut merges = Vec::new();
    let mut created = 0;
    let mut reported = replay.len();
    let mut last_report = Instant::now();
    while created < stop.new_tokens {
        let Some((pair, count)) = merger.pop_best() else {
            break;
        };
        if count < stop.min_frequency {
            break;
        }
        let joined = merger.growth.join(pair.0, pair.1).ok_or_else(|| {
            Error::Corrupt(format!("the words hold ids {pair:?}, which are not both tokens"))
        })?;
        let token = joined.token;
        merger.merge(pair, token)?;
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
    Ok((merger.growth, merges))
}

impl Merger {
    fn new(words: Vec<(Vec<Rank>, u64)>, growth: Tokens, threads: usize) -> Self {
        let (words, word_counts) = words.into_iter().map(|(w, n)| (Word::from_vec(w), n)).unzip();
        Self {
            words,
            long: LongWords::default(),
            word_counts,
            growth,
            pair_counts: AHashMap::new(),
            pair_words: AHashMap::new(),
            heap: OctonaryHeap::new(),
            threads: threads.max(1),
        }
    }

    fn count_pairs(&mut self, observe: &mut dyn FnMut(usize) -> Result<()>) -> Result<()> {
        let mut last_report = Instant::now();
        for (w, word) in self.words.iter().enumerate() {
            let n = self.word_counts[w];
            for pair in word.windows(2) {
                let pair = (pair[0], pair[1]);
                add_count(&mut self.pair_counts, &self.growth, pair, n)?;
                let list = self.pair_words.entry(pair).or_default();
                if list.last() != Some(&(w as u32)) {
                    list.push(w as u32);
                }
            }
            if w % 4096 == 0 && last_report.elapsed() >= REPORT_EVERY {
                observe(0)?;
                last_report = Instant::now();
            }
        }
        let pairs: Vec<(Pair, u64)> = self.pair_counts.iter().map(|(&p, &c)| (p, c)).collect();
        for (pair, count) in pairs {
            self.push(pair, count);
        }
        Ok(())
    }

    fn push(&mut self, pair: Pair, count: u64) {
        let left = self.growth.bytes(pair.0).clone();
        let right = self.growth.bytes(pair.1).clone();
        self.heap.push(Candidate { count, pair, left, right });
    }

    /// The pair to merge next and its count.
    ///
    /// Invariant: every pair with a positive count has a heap entry whose count is at
    /// least the current one (entries are pushed whenever a count rises, and counts only
    /// fall otherwise). So an entry whose count is current is the true maximum.
    fn pop_best(&mut self) -> Option<(Pair, u64)> {
        while let Some(top) = self.heap.pop() {
            let current = self.pair_counts.get(&top.pair).copied().unwrap_or(0);
            match current.cmp(&top.count) {
                Ordering::Equal => return Some((top.pair, current)),
                Ordering::Less if current > 0 => self.push(top.pair, current),
                // Zero, or risen: a fresher entry for this pair is already queued.
                _ => {}
            }
        }
        None
    }

    /// Replaces `pair` by `token` in every word that has it, left to right without
    /// overlap, and updates the pair counts by the exact difference.
    ///
    /// Words are rewritten in parallel chunks when there are many (early merges touch
    /// most words); each chunk sums its count changes per pair, and the sums are applied
    /// once. Sums do not depend on the chunking, and word lists are sorted before use, so
    /// the result is the same for any thread count.
    fn merge(&mut self, pair: Pair, token: Rank) -> Result<()> {
        let mut word_ids = self.pair_words.remove(&pair).unwrap_or_default();
        word_ids.sort_unstable();
        word_ids.dedup();
        let long = (!self.long.is_empty()).then(|| {
            let delta = self.long.merge(&word_ids, &self.word_counts, pair, token);
            word_ids.retain(|&w| !self.long.contains(w));
            delta
        });
        let mut taken: Vec<(u32, Word)> =
            word_ids.iter().map(|&w| (w, std::mem::take(&mut self.words[w as usize]))).collect();
        let counts = &self.word_counts;
        let mut deltas: Vec<Delta> = if taken.len() >= PARALLEL_WORDS && self.threads > 1 {
            let chunk = taken.len().div_ceil(self.threads * 4);
            parallel::pool(Some(self.threads)).install(|| {
                taken.par_chunks_mut(chunk).map(|c| rewrite(c, counts, pair, token)).collect()
            })
        } else {
            vec![rewrite(&mut taken, counts, pair, token)]
        };
        deltas.extend(long);
        for (w, word) in taken {
            self.words[w as usize] = word;
        }
        // One chunk (the usual case) already holds the net changes; chunks are summed.
        let mut deltas = deltas.into_iter();
        let mut first = deltas.next().unwrap_or_default();
        let mut net = std::mem::take(&mut first.counts);
        let mut new_words = first.words;
        for delta in deltas {
            for (p, d) in delta.counts {
                *net.entry(p).or_insert(0i128) += d;
            }
            new_words.extend(delta.words);
        }
        let mut risen = Vec::new();
        for (p, d) in net {
            let current = self.pair_counts.get(&p).copied().unwrap_or(0);
            let updated = i128::from(current) + d;
            debug_assert!(updated >= 0, "a pair count went negative");
            if updated == 0 {
                self.pair_counts.remove(&p);
                // No word has the pair any more, so its word list is all stale.
                self.pair_words.remove(&p);
            } else {
                let updated = u64::try_from(updated).map_err(|_| Error::CountOverflow {
                    left: self.growth.bytes(p.0).to_vec(),
                    right: self.growth.bytes(p.1).to_vec(),
                })?;
                self.pair_counts.insert(p, updated);
                if d > 0 {
                    risen.push(p);
                }
            }
        }
        for (p, w) in new_words {
            let list = self.pair_words.entry(p).or_default();
            if list.last() != Some(&w) {
                list.push(w);
            }
        }
        risen.sort_unstable();
        for p in risen {
            let count = self.pair_counts[&p];
            self.push(p, count);
        }
        Ok(())
    }
}

/// Merges touching at least this many distinct words rewrite them in parallel. Below it
/// the hand-off costs more than it saves (measured on 100 MB of code: no gain at 2,048
/// words on 2 cores); the big early merges of multi-GB corpora are above it.
const PARALLEL_WORDS: usize = 32768;

/// Adds `n` to the count of `pair`, refusing to pass u64.
fn add_count(counts: &mut AHashMap<Pair, u64>, growth: &Tokens, pair: Pair, n: u64) -> Result<()> {
    let slot = counts.entry(pair).or_insert(0);
    *slot = slot.checked_add(n).ok_or_else(|| Error::CountOverflow {
        left: growth.bytes(pair.0).to_vec(),
        right: growth.bytes(pair.1).to_vec(),
    })?;
    Ok(())
}
