//! Training: count words ([`count`]), then merge pairs ([`merge`]).

pub mod budget;
pub mod count;
pub mod merge;

pub use budget::Budget;

pub use count::{Document, WordCounter};
pub use merge::{MergeRecord, Observer, Progress, StopRule};

use crate::error::{Error, Result};
use crate::tokenizer::Tokenizer;
use crate::vocab::Vocab;

/// What to train towards.
#[derive(Debug, Clone, Copy)]
pub struct TrainConfig {
    /// Total vocabulary size: 256 bytes + merged tokens + special tokens.
    pub vocab_size: usize,
    /// Stop when the best pair occurs fewer times than this (at least 1).
    pub min_frequency: u64,
    /// Threads for the merge loop's parallel parts (default: all cores).
    pub threads: Option<usize>,
}

impl TrainConfig {
    /// Checks the config against the number of special tokens.
    pub fn validate(&self, special_tokens: usize) -> Result<StopRule> {
        let floor = 256 + special_tokens;
        if self.vocab_size < floor {
            return Err(Error::InvalidConfig(format!(
                "vocab_size={} is too small: it counts the 256 byte tokens and the {} special \
                 tokens, so it must be at least {floor}",
                self.vocab_size, special_tokens
            )));
        }
        if self.min_frequency == 0 {
            return Err(Error::InvalidConfig("min_frequency must be at least 1".into()));
        }
        if self.vocab_size > u32::MAX as usize {
            return Err(Error::InvalidConfig(format!(
                "vocab_size={} exceeds 2**32-1",
                self.vocab_size
            )));
        }
        Ok(StopRule {
            new_tokens: self.vocab_size - floor,
            min_frequency: self.min_frequency,
            threads: self.threads,
        })
    }
}

/// Trains a tokenizer from counted words. Special tokens get the ids after the merged
/// tokens, in the order the counter was given them. `replay` resumes a stored run (see
/// [`merge::train`]).
pub fn train(
    counter: WordCounter,
    config: TrainConfig,
    replay: &[MergeRecord],
    observe: &mut Observer<'_>,
) -> Result<Tokenizer> {
    let special_texts: Vec<String> =
        counter.specials().tokens().iter().map(|(t, _)| t.clone()).collect();
    let stop = config.validate(special_texts.len())?;
    let pattern = counter.pattern().clone();
    let budgeted = counter.budget().is_some();
    let words = counter.into_words();
    if budgeted {
        // The counting table's hash maps are gone: give their pages back before the
        // merge loop allocates its own (docs/design.md, "Memory budget").
        budget::release_free_memory();
    }
    let (tokens, merges) = merge::train(words, stop, replay, observe)?;
    let vocab = Vocab::from_parts(tokens, merges)?;
    Tokenizer::new(vocab, pattern, special_texts)
}
