//! Training: count words ([`count`]), then merge pairs ([`merge`]).

pub mod budget;
pub mod count;
pub mod merge;
pub mod warm;

pub use budget::Budget;
pub use count::{Document, Fingerprinter, Segment, WordCounter};
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

/// Trains a tokenizer from counted words, starting from `start` (warm start: its ids,
/// pattern and special tokens are kept and new tokens appended) or from the 256 bytes.
/// Special tokens the counter has that `start` lacks get ids after every other id.
/// `replay` resumes a stored run (see [`merge::train`]).
pub fn train(
    counter: WordCounter,
    config: TrainConfig,
    start: Option<&Tokenizer>,
    replay: &[MergeRecord],
    observe: &mut Observer<'_>,
) -> Result<Tokenizer> {
    let fresh;
    let start = match start {
        Some(start) => {
            if start.pattern().as_str() != counter.pattern().as_str() {
                return Err(Error::InvalidConfig(format!(
                    "the tokenizer to extend splits text with {:?}, not {:?}; a warm start \
                     keeps the pattern",
                    start.pattern().as_str(),
                    counter.pattern().as_str()
                )));
            }
            start
        }
        None => {
            fresh = Tokenizer::new(Vocab::bytes_only(), counter.pattern().clone(), Vec::new())?;
            &fresh
        }
    };
    let new_specials: Vec<String> = counter
        .specials()
        .tokens()
        .iter()
        .map(|(t, _)| t.clone())
        .filter(|t| start.specials().id(t.as_bytes()).is_none())
        .collect();
    let specials = start.specials().len() + new_specials.len();
    let mut stop = config.validate(specials)?;
    let floor = start.vocab().n_tokens() + specials;
    stop.new_tokens = config.vocab_size.checked_sub(floor).ok_or_else(|| {
        Error::InvalidConfig(format!(
            "vocab_size={} is smaller than the tokenizer it extends ({floor} tokens with the \
             special tokens)",
            config.vocab_size
        ))
    })?;
    let budgeted = counter.budget().is_some();
    let words = counter.into_words();
    if budgeted {
        // The counting table's hash maps are gone: give their pages back before the
        // merge loop allocates its own (docs/design.md, "Memory budget").
        budget::release_free_memory();
    }
    let words = warm::segment(words, start.vocab());
    let begin =
        merge::Start { tokens: start.vocab().tokens().to_vec(), reserved: start.special_ids() };
    let (tokens, merges) = merge::train(words, begin, stop, replay, observe)?;
    let tokenizer = warm::extend(start, merges, &new_specials)?;
    if tokenizer.vocab().tokens() != tokens.as_slice() {
        return Err(Error::Corrupt("training produced tokens that its merges do not".into()));
    }
    Ok(tokenizer)
}
