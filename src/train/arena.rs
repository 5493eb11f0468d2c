//! The merge loop's words in one flat array: every word's token ids back to back, each
//! word at a fixed start with its current length. A merge only shortens a word, so it is
//! rewritten in place: no allocation per word, and 12 bytes of bookkeeping per word
//! instead of a vector each.

use crate::error::{Error, Result};
use crate::Rank;

/// Token ids of every distinct word.
#[derive(Default)]
pub struct WordArena {
    /// All words' tokens; word `w` occupies `tokens[starts[w]..starts[w] + lens[w]]`.
    tokens: Vec<Rank>,
    /// Where each word begins in `tokens`.
    starts: Vec<usize>,
    /// Each word's current number of tokens.
    lens: Vec<u32>,
}

impl WordArena {
    /// The arena of `words` (token ids, count) and the counts, in the same order. Each
    /// word's own vector is freed as soon as it is copied.
    pub fn new(words: Vec<(Vec<Rank>, u64)>) -> Result<(Self, Vec<u64>)> {
        let total = words.iter().map(|(w, _)| w.len()).sum();
        let mut arena = Self {
            tokens: Vec::with_capacity(total),
            starts: Vec::with_capacity(words.len()),
            lens: Vec::with_capacity(words.len()),
        };
        let mut counts = Vec::with_capacity(words.len());
        for (i, (word, count)) in words.into_iter().enumerate() {
            let len = u32::try_from(word.len()).map_err(|_| {
                Error::InvalidConfig(format!(
                    "word {i} has {} tokens; the merge loop takes words of at most 2**32-1",
                    word.len()
                ))
            })?;
            arena.starts.push(arena.tokens.len());
            arena.lens.push(len);
            arena.tokens.extend_from_slice(&word);
            counts.push(count);
        }
        Ok((arena, counts))
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// The tokens of word `w`.
    #[inline]
    pub fn word(&self, w: u32) -> &[Rank] {
        let start = self.starts[w as usize];
        &self.tokens[start..start + self.lens[w as usize] as usize]
    }

    /// Replaces word `w` by `tokens`, which must not be longer than it; returns by how
    /// many tokens it shrank.
    #[inline]
    pub fn shorten(&mut self, w: u32, tokens: &[Rank]) -> usize {
        let len = self.lens[w as usize] as usize;
        assert!(tokens.len() <= len, "a merge lengthened a word");
        let start = self.starts[w as usize];
        self.tokens[start..start + tokens.len()].copy_from_slice(tokens);
        self.lens[w as usize] = tokens.len() as u32;
        len - tokens.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_their_place_when_shortened() {
        let (mut arena, counts) =
            WordArena::new(vec![(vec![1, 2, 3], 5), (vec![], 1), (vec![4, 5], 2)]).unwrap();
        assert_eq!(counts, [5, 1, 2]);
        assert_eq!(arena.len(), 3);
        assert_eq!(arena.shorten(0, &[9, 3]), 1);
        assert_eq!(arena.word(0), [9, 3]);
        assert_eq!(arena.word(1), [] as [Rank; 0]);
        assert_eq!(arena.word(2), [4, 5]);
    }

    #[test]
    #[should_panic(expected = "lengthened")]
    fn a_longer_word_is_refused() {
        let (mut arena, _) = WordArena::new(vec![(vec![1], 1)]).unwrap();
        arena.shorten(0, &[1, 2]);
    }
}
