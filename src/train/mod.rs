//! Training: count words ([`counter`]), then merge pairs ([`merge`]).
//!
//! Counting: `words.rs` splits a segment into words, `table.rs` holds their counts (in
//! shards, each a `pieces.rs` table, hashed by `word_hash.rs`, with `hot.rs` in front for
//! frequent short words and `hot_long.rs` for frequent words of 8 to 16 bytes) and hands
//! them over as `sorted_words.rs`, `snapshot.rs` serializes the table (`varint.rs` is the
//! length encoding both use), `prune.rs` and [`budget`] keep it inside a memory limit,
//! [`feed`] counts straight from a file reader.
//! Merging: [`merge`] is the loop, `queue.rs` its candidates (the highest counts in a
//! heap, `candidate.rs`, which holds the tie-break rule; the lower set aside by band),
//! `order.rs` the tokens' byte-order labels the heap compares, `arena.rs` its words
//! (16-bit tokens when the run's ids allow), `pairs.rs` its pair counts and occurrence
//! lists (and the first count of them, on runs of words at once), `rewrite.rs` the word
//! rewriting of one merge, `long.rs` the same for long words, by position; `stop.rs`
//! says when training stops and what it reports; [`warm`] starts from an existing
//! tokenizer.

mod arena;
pub mod batch;
pub mod budget;
mod byte_pairs;
mod candidate;
mod checkpoints;
pub mod combine;
mod count_sink;
pub mod counter;
pub mod feed;
mod hot;
mod hot_long;
mod long;
pub mod merge;
mod near;
mod order;
mod pair_ids;
mod pairs;
mod pieces;
mod prune;
mod queue;
mod rewrite;
mod snapshot;
mod sorted_words;
mod stop;
mod table;
mod varint;
pub mod warm;
mod word_hash;
mod words;

pub use budget::Budget;
pub use counter::WordCounter;
pub use sorted_words::SortedWords;
pub use stop::{Observer, Progress, StopRule};

use crate::error::{Error, Result};
use crate::tokenizer::Tokenizer;
use crate::vocab::{MergeRecord, Vocab};
use crate::Rank;
use arena::ArenaToken;

/// What to train towards.
#[derive(Debug, Clone, Copy)]
pub struct TrainConfig {
    /// Total vocabulary size: the tokens training starts from (256 bytes, or the
    /// tokenizer it extends) + merged tokens + special tokens.
    pub vocab_size: usize,
    /// Stop when the best pair occurs fewer times than this (0 acts as 1).
    pub min_frequency: u64,
    /// Threads for the merge loop's parallel parts (default: all cores).
    pub threads: Option<usize>,
}

impl TrainConfig {
    /// The stop rule for training from `floor` ids (the mergeable tokens and special
    /// tokens training starts with): `vocab_size` must hold them, and ids must fit a
    /// `Rank`. `extends` names the start in the error: a tokenizer, or the 256 bytes.
    /// `budgeted`: the run has a memory budget, so nothing may hold memory it does not
    /// count (see [`StopRule::spare_memory`]).
    fn stop_rule(&self, floor: usize, extends: bool, budgeted: bool) -> Result<StopRule> {
        if self.vocab_size > Rank::MAX as usize {
            return Err(Error::InvalidConfig(format!(
                "vocab_size={} exceeds 2**32-1",
                self.vocab_size
            )));
        }
        let new_tokens = self.vocab_size.checked_sub(floor).ok_or_else(|| {
            Error::InvalidConfig(match extends {
                true => format!(
                    "vocab_size={} is smaller than the tokenizer it extends ({floor} tokens \
                     with the special tokens)",
                    self.vocab_size
                ),
                false => format!(
                    "vocab_size={} is too small: it counts the 256 byte tokens and the {} \
                     special tokens, so it must be at least {floor}",
                    self.vocab_size,
                    floor - 256
                ),
            })
        })?;
        Ok(StopRule {
            new_tokens,
            min_frequency: self.min_frequency,
            threads: self.threads,
            spare_memory: !budgeted,
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
    let extends = start.is_some();
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
    let floor = start.vocab().n_tokens() + start.specials().len() + new_specials.len();
    let budgeted = counter.budget().is_some();
    let stop = config.stop_rule(floor, extends, budgeted)?;
    let words = counter.into_words(config.threads);
    if budgeted {
        // The counting table's hash maps are gone: give their pages back before the
        // merge loop allocates its own (docs/design.md, "Memory budget").
        budget::release_free_memory();
    }
    let growth = start.vocab().growth(&start.special_ids());
    let (vocab, threads) = (start.vocab(), config.threads);
    // Two bytes a token in the loop's words when no id of this run can pass 65,535.
    let (growth, merges) = if growth.id_bound(stop.new_tokens) <= <u16 as ArenaToken>::LIMIT {
        let words = warm::segment::<u16>(words, vocab, threads)?;
        merge::train(words, growth, stop, replay, observe)?
    } else {
        let words = warm::segment::<Rank>(words, vocab, threads)?;
        merge::train(words, growth, stop, replay, observe)?
    };
    warm::with_specials(start, growth.finish(merges)?, &new_specials)
}
