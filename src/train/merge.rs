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
use smallvec::SmallVec;

use crate::error::{Error, Result};
use crate::parallel;
use crate::vocab::next_free;
use crate::Rank;

/// Two adjacent token ids.
pub type Pair = (Rank, Rank);

/// A word as token ids, inline up to 6 tokens: most words are short, and a merge touches
/// words scattered over memory, so keeping the tokens beside the word's slot saves a cache
/// miss per word touched (the merge loop's main cost).
type Word = SmallVec<[Rank; 6]>;

/// One step of training.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergeRecord {
    pub left: Rank,
    pub right: Rank,
    /// The resulting token: a new id, or an existing one when its bytes were already a token.
    pub token: Rank,
    /// The pair's count when it was merged.
    pub count: u64,
}

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

/// A heap entry. Ordered so that the max is the pair to merge next.
struct Candidate {
    count: u64,
    pair: Pair,
    left: Rc<[u8]>,
    right: Rc<[u8]>,
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        self.count
            .cmp(&other.count)
            // Smaller bytes win ties, so they compare as greater.
            .then_with(|| other.left.cmp(&self.left))
            .then_with(|| other.right.cmp(&self.right))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Candidate {}

/// The state of a training run.
struct Merger {
    /// Each distinct word as token ids.
    words: Vec<Word>,
    /// How often each word occurs.
    word_counts: Vec<u64>,
    /// Token id -> bytes (empty: a hole). Shared with heap entries, which compare by bytes.
    tokens: Vec<Rc<[u8]>>,
    /// Ids new tokens skip (special tokens of the tokenizer training started from).
    reserved: Vec<Rank>,
    /// Bytes -> token id, to reuse a token when a merge reaches existing bytes.
    ids: AHashMap<Rc<[u8]>, Rank>,
    pair_counts: AHashMap<Pair, u64>,
    /// Words each pair occurs in (may hold words that no longer have it).
    pair_words: AHashMap<Pair, Vec<u32>>,
    heap: OctonaryHeap<Candidate>,
    /// Threads for rewriting words in large merges.
    threads: usize,
}

/// Where training starts: token bytes by id (empty: a hole) and the ids new tokens skip.
/// A fresh run starts from the 256 single bytes; a warm start from an existing vocabulary.
pub struct Start {
    pub tokens: Vec<Vec<u8>>,
    pub reserved: Vec<Rank>,
}

/// Trains on `words` (token ids of `start`, count). Returns the token bytes by id and the
/// merge log of the new merges.
///
/// `replay` is a merge log from an earlier run on the same words (a resumed run): its
/// merges are recomputed and must match record for record, then training goes on. Only
/// merges past `replay` are reported as new.
pub fn train(
    words: Vec<(Vec<Rank>, u64)>,
    start: Start,
    stop: StopRule,
    replay: &[MergeRecord],
    observe: &mut Observer<'_>,
) -> Result<(Vec<Vec<u8>>, Vec<MergeRecord>)> {
    let threads = stop.threads.unwrap_or_else(parallel::default_threads);
    let mut merger = Merger::new(words, start, threads);
    merger.count_pairs(&mut |created| observe(Progress { created, new_merges: &[] }))?;
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
        let (token, is_new) = merger.token_for(pair);
        merger.merge(pair, token)?;
        created += usize::from(is_new);
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
    if std::env::var_os("BYTEBPE_DEBUG_MEM").is_some() {
        let lists: usize = merger.pair_words.values().map(|v| v.capacity()).sum();
        let wlen: usize = merger.words.iter().map(|v| v.capacity()).sum();
        eprintln!(
            "words {} word_ids_cap {} pairs {} pair_words {} list_cap {} heap {} heap_cap {}",
            merger.words.len(),
            wlen,
            merger.pair_counts.len(),
            merger.pair_words.len(),
            lists,
            merger.heap.len(),
            merger.heap.capacity()
        );
    }
    observe(Progress { created, new_merges: &merges[reported.min(merges.len())..] })?;
    let tokens = merger.tokens.iter().map(|t| t.to_vec()).collect();
    Ok((tokens, merges))
}

impl Merger {
    fn new(words: Vec<(Vec<Rank>, u64)>, start: Start, threads: usize) -> Self {
        let tokens: Vec<Rc<[u8]>> = start.tokens.into_iter().map(Rc::from).collect();
        let ids = tokens
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.is_empty())
            .map(|(i, t)| (t.clone(), i as Rank))
            .collect();
        let (words, word_counts) = words.into_iter().map(|(w, n)| (Word::from_vec(w), n)).unzip();
        Self {
            words,
            word_counts,
            tokens,
            reserved: start.reserved,
            ids,
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
                add_count(&mut self.pair_counts, &self.tokens, pair, n)?;
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
        let left = self.tokens[pair.0 as usize].clone();
        let right = self.tokens[pair.1 as usize].clone();
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

    /// The token for merging `pair`, and whether it is new.
    fn token_for(&mut self, pair: Pair) -> (Rank, bool) {
        let mut bytes = self.tokens[pair.0 as usize].to_vec();
        bytes.extend_from_slice(&self.tokens[pair.1 as usize]);
        if let Some(&id) = self.ids.get(bytes.as_slice()) {
            return (id, false);
        }
        let id = next_free(self.tokens.len(), &self.reserved);
        self.tokens.resize(id, Rc::from(&[][..]));
        let id = id as Rank;
        let bytes: Rc<[u8]> = Rc::from(bytes);
        self.tokens.push(bytes.clone());
        self.ids.insert(bytes, id);
        (id, true)
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
        let mut taken: Vec<(u32, Word)> =
            word_ids.iter().map(|&w| (w, std::mem::take(&mut self.words[w as usize]))).collect();
        let counts = &self.word_counts;
        let deltas: Vec<Delta> = if taken.len() >= PARALLEL_WORDS && self.threads > 1 {
            let chunk = taken.len().div_ceil(self.threads * 4);
            parallel::pool(Some(self.threads)).install(|| {
                taken.par_chunks_mut(chunk).map(|c| rewrite(c, counts, pair, token)).collect()
            })
        } else {
            vec![rewrite(&mut taken, counts, pair, token)]
        };
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
                    left: self.tokens[p.0 as usize].to_vec(),
                    right: self.tokens[p.1 as usize].to_vec(),
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

/// What rewriting some words changed.
#[derive(Default)]
struct Delta {
    /// Net change of each pair's count.
    counts: AHashMap<Pair, i128>,
    /// (pair, word) for each pair that appears in a word through the merge.
    words: Vec<(Pair, u32)>,
}

/// Rewrites `words` (id, tokens) with `pair` replaced by `token`, and returns how the
/// pair counts change: every old pair touching a merged position loses the word's count,
/// every new pair touching a merged token gains it.
fn rewrite(words: &mut [(u32, Word)], counts: &[u64], pair: Pair, token: Rank) -> Delta {
    let mut delta = Delta::default();
    let (mut merged, mut consumed, mut created) = (Word::new(), Vec::new(), Vec::new());
    for (w, word) in words.iter_mut() {
        if !replace_pair(word, pair, token, &mut merged, &mut consumed, &mut created) {
            continue;
        }
        let n = i128::from(counts[*w as usize]);
        for j in 0..word.len() - 1 {
            if consumed[j] || consumed[j + 1] {
                *delta.counts.entry((word[j], word[j + 1])).or_insert(0) -= n;
            }
        }
        for k in 0..merged.len().saturating_sub(1) {
            if created[k] || created[k + 1] {
                let p = (merged[k], merged[k + 1]);
                *delta.counts.entry(p).or_insert(0) += n;
                if delta.words.last() != Some(&(p, *w)) {
                    delta.words.push((p, *w));
                }
            }
        }
        std::mem::swap(word, &mut merged);
    }
    delta
}

/// Writes `word` with `pair` replaced by `token` into `out`; `consumed[i]` marks old
/// positions that were merged, `created[k]` new positions holding a merged token.
/// Returns false (and leaves the outputs unspecified) when the word lacks the pair.
fn replace_pair(
    word: &[Rank],
    pair: Pair,
    token: Rank,
    out: &mut Word,
    consumed: &mut Vec<bool>,
    created: &mut Vec<bool>,
) -> bool {
    out.clear();
    consumed.clear();
    consumed.resize(word.len(), false);
    created.clear();
    let mut i = 0;
    let mut changed = false;
    while i < word.len() {
        if i + 1 < word.len() && word[i] == pair.0 && word[i + 1] == pair.1 {
            out.push(token);
            created.push(true);
            consumed[i] = true;
            consumed[i + 1] = true;
            changed = true;
            i += 2;
        } else {
            out.push(word[i]);
            created.push(false);
            i += 1;
        }
    }
    changed
}

fn add_count(
    counts: &mut AHashMap<Pair, u64>,
    tokens: &[Rc<[u8]>],
    pair: Pair,
    n: u64,
) -> Result<()> {
    let slot = counts.entry(pair).or_insert(0);
    *slot = slot.checked_add(n).ok_or_else(|| Error::CountOverflow {
        left: tokens[pair.0 as usize].to_vec(),
        right: tokens[pair.1 as usize].to_vec(),
    })?;
    Ok(())
}
