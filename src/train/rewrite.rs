//! Rewriting words for one merge: every occurrence of a pair replaced by its token, left
//! to right without overlap, and the exact change of every pair count that follows.

use ahash::AHashMap;
use smallvec::SmallVec;

use crate::Rank;

/// Two adjacent token ids.
pub type Pair = (Rank, Rank);

/// A word as token ids, inline up to 6 tokens: most words are short, and a merge touches
/// words scattered over memory, so keeping the tokens beside the word's slot saves a cache
/// miss per word touched (the merge loop's main cost).
pub type Word = SmallVec<[Rank; 6]>;

/// What rewriting some words changed.
#[derive(Default)]
pub struct Delta {
    /// Net change of each pair's count.
    pub counts: AHashMap<Pair, i128>,
    /// (pair, word) for each pair that appears in a word through the merge.
    pub words: Vec<(Pair, u32)>,
}

/// Rewrites `words` (id, tokens) with `pair` replaced by `token`, and returns how the
/// pair counts change: every old pair touching a merged position loses the word's count,
/// every new pair touching a merged token gains it.
pub fn rewrite(words: &mut [(u32, Word)], counts: &[u64], pair: Pair, token: Rank) -> Delta {
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
    // Many words listed for a pair no longer hold it (an earlier merge took it): a plain
    // scan answers for them without writing the outputs.
    if !word.windows(2).any(|w| w[0] == pair.0 && w[1] == pair.1) {
        return false;
    }
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
