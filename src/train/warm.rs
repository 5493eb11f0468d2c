//! Starting from an existing tokenizer: segmenting words under its vocabulary, seed
//! merges, and appending new merges while every existing id stays where it is.

use rayon::prelude::*;

use super::arena::WordArena;
use crate::encode::encode_piece;
use crate::error::{Error, Result};
use crate::parallel;
use crate::vocab::{Growth, MergeRecord, Vocab};
use crate::{Rank, Tokenizer};

/// The merge loop's words: each word as the tokens `vocab` encodes it to, true
/// rank-ordered BPE, as `encode` does (not greedy longest match), so training continues
/// from what encoding gives. Over bytes alone, each byte's rank, written straight into
/// the arena.
pub fn segment(words: Vec<(Vec<u8>, u64)>, vocab: &Vocab) -> Result<WordArena> {
    if vocab.n_tokens() == 256 {
        return WordArena::of_bytes(words, |b| vocab.byte_rank(b));
    }
    // On the project's pool, never Rayon's global one (see `parallel`).
    let words = parallel::pool(None).install(|| {
        words
            .into_par_iter()
            .map(|(bytes, n)| {
                let mut ids = Vec::with_capacity(bytes.len());
                encode_piece(vocab, &bytes, &mut ids);
                (ids, n)
            })
            .collect()
    });
    WordArena::new(words)
}

/// `start` with `merges` appended (new ids skip its special ids) and `new_specials` after
/// every id in use. Existing ids never move.
pub fn extend(
    start: &Tokenizer,
    merges: Vec<MergeRecord>,
    new_specials: &[String],
) -> Result<Tokenizer> {
    let vocab = start.vocab().extend(merges, &start.special_ids())?;
    with_specials(start, vocab, new_specials)
}

/// `vocab` (grown from `start`'s, its special ids kept as holes) with `start`'s pattern and
/// special tokens, and `new_specials` after every id in use.
pub fn with_specials(
    start: &Tokenizer,
    vocab: Vocab,
    new_specials: &[String],
) -> Result<Tokenizer> {
    let mut specials = start.specials().tokens().to_vec();
    let first = specials.iter().map(|&(_, id)| id as usize + 1).max().unwrap_or(0).max(vocab.len());
    for (i, text) in new_specials.iter().enumerate() {
        specials.push((text.clone(), (first + i) as Rank));
    }
    Tokenizer::with_special_ids(vocab, start.pattern().clone(), specials)
}

/// `start` with tokens for `seeds` (in order) made before any training: each seed is
/// encoded, then its tokens are joined left to right, each join a merge with count 0. A
/// seed that is already a token adds nothing. Each must be one piece of the pattern, or
/// encoding could never produce it.
/// The longest seed accepted: a seed of n bytes can make up to n - 1 tokens of up to n
/// bytes each (quadratic in n), so seeds are short strings (digits, indentation).
pub const MAX_SEED_BYTES: usize = 1024;

pub fn seed(start: &Tokenizer, seeds: &[Vec<u8>]) -> Result<Tokenizer> {
    // Checked before anything is built.
    if let Some((i, seed)) = seeds.iter().enumerate().find(|(_, s)| s.len() > MAX_SEED_BYTES) {
        return Err(Error::InvalidConfig(format!(
            "seed_merges[{i}] is {} bytes long; a seed is at most {MAX_SEED_BYTES} bytes",
            seed.len()
        )));
    }
    let mut growth: Growth = start.vocab().growth(&start.special_ids());
    let mut merges = Vec::new();
    for (i, seed) in seeds.iter().enumerate() {
        let mut pieces = Vec::new();
        start
            .pattern()
            .split_bytes(seed, |p| pieces.push(p.to_vec()))
            .map_err(|e| Error::InvalidConfig(e.to_string()))?;
        if pieces.len() != 1 {
            let shown: Vec<String> =
                pieces.iter().map(|p| format!("{:?}", String::from_utf8_lossy(p))).collect();
            return Err(Error::InvalidConfig(format!(
                "seed_merges[{i}] {:?} is split by the pattern into [{}], so it could never \
                 be one token",
                String::from_utf8_lossy(seed),
                shown.join(", ")
            )));
        }
        let mut parts = encode_local(&growth, seed);
        while parts.len() > 1 {
            let (left, right) = (parts[0], parts[1]);
            let token = growth.join(left, right).expect("encoded parts are tokens").token;
            merges.push(MergeRecord { left, right, token, count: 0 });
            parts.splice(0..2, [token]);
        }
    }
    with_specials(start, growth.finish(merges)?, &[])
}

/// Rank-ordered BPE of a short string over a growing table (seeds are a few bytes).
fn encode_local(growth: &Growth, bytes: &[u8]) -> Vec<Rank> {
    if let Some(id) = growth.id(bytes) {
        return vec![id];
    }
    let mut parts: Vec<Vec<u8>> = bytes.iter().map(|&b| vec![b]).collect();
    loop {
        let best = (0..parts.len().saturating_sub(1))
            .filter_map(|i| {
                growth.id(&[parts[i].as_slice(), &parts[i + 1]].concat()).map(|r| (r, i))
            })
            .min();
        let Some((_, i)) = best else { break };
        let right = parts.remove(i + 1);
        parts[i].extend(right);
    }
    parts.iter().map(|p| growth.id(p).expect("every part is a token")).collect()
}
