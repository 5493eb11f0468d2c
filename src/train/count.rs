//! Counting words: documents are pre-tokenized in parallel and each piece's bytes counted.

use ahash::AHashMap;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::parallel;
use crate::pretokenize::Pattern;
use crate::special::{Part, SpecialTokens};

/// Word bytes -> number of occurrences.
pub type WordCounts = AHashMap<Vec<u8>, u64>;

/// One document to count. `is_text` promises valid UTF-8 (it came from a `str`), which
/// skips validation; any other bytes go through the invalid-byte split.
#[derive(Debug, Clone, Copy)]
pub struct Document<'a> {
    pub data: &'a [u8],
    pub is_text: bool,
}

/// Accumulates word counts over any number of batches. The result depends only on the
/// multiset of documents, never on batching or thread count: counts are exact sums.
#[derive(Debug)]
pub struct WordCounter {
    pattern: Pattern,
    /// Special-token text in documents is cut out, not counted (as `encode` would do with
    /// `allowed_special="all"`).
    specials: SpecialTokens,
    counts: WordCounts,
    documents: u64,
    bytes: u64,
}

impl WordCounter {
    pub fn new(pattern: Pattern, specials: SpecialTokens) -> Self {
        Self { pattern, specials, counts: WordCounts::new(), documents: 0, bytes: 0 }
    }

    pub fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    pub fn specials(&self) -> &SpecialTokens {
        &self.specials
    }

    /// Documents counted so far.
    pub fn documents(&self) -> u64 {
        self.documents
    }

    /// Bytes of documents counted so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Distinct words so far.
    pub fn distinct_words(&self) -> usize {
        self.counts.len()
    }

    /// Counts a batch in parallel. `first_index` is the index of `docs[0]` in the whole
    /// input, used to name a failing document. On error nothing of the batch is counted.
    pub fn add_documents(
        &mut self,
        docs: &[Document<'_>],
        first_index: u64,
        threads: Option<usize>,
    ) -> Result<()> {
        if docs.is_empty() {
            return Ok(());
        }
        let pool = parallel::pool(threads);
        // A few chunks per thread balances uneven documents without many partial maps.
        let chunk = docs.len().div_ceil(pool.current_num_threads() * 4).max(1);
        let partials: Vec<Result<WordCounts>> = pool.install(|| {
            docs.par_chunks(chunk)
                .enumerate()
                .map(|(c, chunk_docs)| {
                    let mut counts = WordCounts::new();
                    for (i, doc) in chunk_docs.iter().enumerate() {
                        self.count_document(doc, &mut counts).map_err(|e| Error::PatternMatch {
                            document: first_index + (c * chunk + i) as u64,
                            message: e.to_string(),
                        })?;
                    }
                    Ok(counts)
                })
                .collect()
        });
        let partials = partials.into_iter().collect::<Result<Vec<_>>>()?;
        for partial in partials {
            self.absorb(partial);
        }
        self.documents += docs.len() as u64;
        self.bytes += docs.iter().map(|d| d.data.len() as u64).sum::<u64>();
        Ok(())
    }

    /// Adds a pre-counted word (not pre-tokenized).
    pub fn add_word(&mut self, word: &[u8], count: u64) -> Result<()> {
        if count == 0 || word.is_empty() {
            return Ok(());
        }
        let slot = match self.counts.get_mut(word) {
            Some(slot) => slot,
            None => self.counts.entry(word.to_vec()).or_insert(0),
        };
        *slot = slot.checked_add(count).ok_or_else(|| {
            Error::InvalidConfig(format!(
                "the total count of word {:?} exceeds 2**64-1",
                String::from_utf8_lossy(word)
            ))
        })?;
        Ok(())
    }

    /// The counted words, sorted by bytes (a deterministic order for training).
    pub fn into_words(self) -> Vec<(Vec<u8>, u64)> {
        let mut words: Vec<(Vec<u8>, u64)> = self.counts.into_iter().collect();
        words.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        words
    }

    fn count_document(
        &self,
        doc: &Document<'_>,
        counts: &mut WordCounts,
    ) -> Result<(), fancy_regex::Error> {
        let mut bump = |piece: &[u8]| match counts.get_mut(piece) {
            Some(c) => *c += 1,
            None => {
                counts.insert(piece.to_vec(), 1);
            }
        };
        self.specials.split(
            doc.data,
            |_| true,
            |part| match part {
                // Special-token text is cut out of training, not counted.
                Part::Special(_) => Ok(()),
                Part::Text(segment) => {
                    if doc.is_text {
                        // SAFETY: the document is valid UTF-8, and special tokens (valid UTF-8
                        // themselves) match only on character boundaries, so every segment
                        // between them is valid UTF-8 too.
                        let text = unsafe { std::str::from_utf8_unchecked(segment) };
                        self.pattern.split_text(text, &mut bump)
                    } else {
                        self.pattern.split_bytes(segment, &mut bump)
                    }
                }
            },
        )
    }

    fn absorb(&mut self, partial: WordCounts) {
        if self.counts.is_empty() {
            self.counts = partial;
            return;
        }
        for (word, n) in partial {
            // Cannot overflow: counted occurrences are bounded by the bytes of real input
            // (pre-counted words go through `add_word`, which checks).
            *self.counts.entry(word).or_insert(0) += n;
        }
    }
}
