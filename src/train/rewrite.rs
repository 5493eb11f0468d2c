//! Rewriting words for one merge: every occurrence of a pair replaced by its token, left
//! to right without overlap, and every pair occurrence that goes or comes with it.
//!
//! Words are read, never written, so chunks of a large merge can be rewritten on several
//! threads; the caller applies each chunk's result in word order.

use super::arena::WordArena;
use crate::Rank;

/// Two adjacent token ids.
pub type Pair = (Rank, Rank);

/// What rewriting some words gives. Buffers are reused from merge to merge.
#[derive(Default)]
pub struct Rewritten {
    /// (word, end of its new tokens in `tokens`) for each word that held the pair, in
    /// the order given.
    pub words: Vec<(u32, usize)>,
    /// The rewritten words' tokens, back to back.
    pub tokens: Vec<Rank>,
    /// (pair, word): one occurrence of the pair left the word (every old pair touching a
    /// merged position but the merged pair itself: each of its occurrences shortens the
    /// word by one token, so the caller takes them from the length).
    pub lost: Vec<(Pair, u32)>,
    /// (pair, word): one occurrence of the pair appeared in the word (every new pair
    /// touching a merged token).
    pub gained: Vec<(Pair, u32)>,
}

impl Rewritten {
    fn clear(&mut self) {
        self.words.clear();
        self.tokens.clear();
        self.lost.clear();
        self.gained.clear();
    }
}

/// Rewrites the words `word_ids` of `arena` with `pair` replaced by `token` into `out`
/// (cleared first). Words that no longer hold the pair are skipped.
pub fn rewrite(arena: &WordArena, word_ids: &[u32], pair: Pair, token: Rank, out: &mut Rewritten) {
    out.clear();
    for &w in word_ids {
        let word = arena.word(w);
        // Many words listed for a pair no longer hold it (an earlier merge took it): a
        // plain scan answers for them without writing anything.
        let Some(first) = word.windows(2).position(|p| p[0] == pair.0 && p[1] == pair.1) else {
            continue;
        };
        out.tokens.extend_from_slice(&word[..first]);
        replace_from(word, first, w, pair, token, out);
        out.words.push((w, out.tokens.len()));
    }
}

/// Appends `word[first..]` with `pair` replaced by `token` (left to right, without
/// overlap; `first` is its first occurrence) to `out.tokens`, and records each old pair
/// touching a merged position as lost and each new pair touching a merged token as
/// gained, once per occurrence, in word `w`.
fn replace_from(word: &[Rank], first: usize, w: u32, pair: Pair, token: Rank, out: &mut Rewritten) {
    // Old positions before `merged_until` are merged up to there (so the pair ending at
    // it is already counted as lost); `last_merged` says the last token written is one.
    let (mut merged_until, mut last_merged) = (0, false);
    let mut i = first;
    while i < word.len() {
        if i + 1 < word.len() && word[i] == pair.0 && word[i + 1] == pair.1 {
            if i > 0 && merged_until != i {
                out.lost.push(((word[i - 1], word[i]), w));
            }
            if i + 2 < word.len() {
                out.lost.push(((word[i + 1], word[i + 2]), w));
            }
            // The pair this token makes with the one before it (the one after comes
            // with the next token written).
            if let Some(&before) = out.tokens.last().filter(|_| i > 0) {
                out.gained.push(((before, token), w));
            }
            out.tokens.push(token);
            merged_until = i + 2;
            last_merged = true;
            i += 2;
        } else {
            if last_merged {
                out.gained.push(((token, word[i]), w));
            }
            out.tokens.push(word[i]);
            last_merged = false;
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_occurrences_merge_left_to_right() {
        let (arena, _) =
            WordArena::new(vec![(vec![1, 1, 1, 2], 1), (vec![3, 4], 1), (vec![2, 1, 1], 1)])
                .unwrap();
        let mut out = Rewritten::default();
        rewrite(&arena, &[0, 1, 2], (1, 1), 9, &mut out);
        assert_eq!(out.words, [(0, 3), (2, 5)]);
        assert_eq!(out.tokens, [9, 1, 2, 2, 9]);
        // Word 0 loses the (1, 1) at 1 (the one at 0 is merged: not listed), not (1, 2).
        assert_eq!(out.lost, [((1, 1), 0), ((2, 1), 2)]);
        assert_eq!(out.gained, [((9, 1), 0), ((2, 9), 2)]);
    }
}
