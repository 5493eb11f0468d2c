//! Starting from an existing tokenizer: segmenting words under its vocabulary, seed
//! merges, and appending new merges while every existing id stays where it is.

use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::arena::{ArenaToken, WordArena};
use super::sorted_words::SortedWords;
use crate::encode::encode_piece;
use crate::error::{Error, Result};
use crate::vocab::{Growth, MergeRecord, Vocab};
use crate::{interrupt, parallel, Rank, Tokenizer};

/// How long a round of segmenting aims to take: the calling thread checks for Ctrl-C
/// between rounds (pool workers cannot), and the pool waits for a round's last word once
/// per round. Rounds start at [`FIRST_ROUND_BYTES`] of words and double or halve toward
/// this, since a byte costs from nanoseconds (short words) to microseconds (long pieces
/// under a deep vocabulary).
const ROUND_TIME: Duration = Duration::from_millis(25);
const FIRST_ROUND_BYTES: usize = 64 << 10;
const MAX_ROUND_BYTES: usize = 64 << 20;

/// The bytes of one encoded word in the list [`segment`] builds under a warm start (its
/// ids' allocation apart); [`super::budget::merge_entry`] is derived from it.
pub const ENCODED_ENTRY: u64 = std::mem::size_of::<(Vec<Rank>, u64)>() as u64;

/// The merge loop's words: each word as the tokens `vocab` encodes it to, true
/// rank-ordered BPE, as `encode` does (not greedy longest match), so training continues
/// from what encoding gives; over bytes alone, each byte's rank, written straight into
/// the arena. Ctrl-C stops it between rounds (see [`ROUND_TIME`]; one word is not cut
/// short). A stopped call keeps nothing: merging has not started, and the counts are the
/// caller's (the store's). The result does not depend on the rounds: each word is
/// encoded alone.
pub fn segment<T: ArenaToken>(
    words: SortedWords,
    vocab: &Vocab,
    threads: Option<usize>,
) -> Result<WordArena<T>> {
    // On the project's pool, never Rayon's global one (see `parallel`).
    let pool = parallel::pool(threads);
    if vocab.n_tokens() == 256 {
        return WordArena::of_bytes(&words, |b| vocab.byte_rank(b), &pool);
    }
    let mut out = Vec::with_capacity(words.len());
    let (mut start, mut round_bytes) = (0, FIRST_ROUND_BYTES);
    while start < words.len() {
        let (mut end, mut bytes) = (start, 0);
        while end < words.len() && bytes < round_bytes {
            bytes += words.get(end).0.len();
            end += 1;
        }
        let began = Instant::now();
        pool.install(|| {
            out.par_extend((start..end).into_par_iter().map_init(Vec::new, |scratch, i| {
                // Encoded into a reused buffer, then copied at its exact length: the ids
                // held until the arena is built take no more than they need.
                let (bytes, n) = words.get(i);
                scratch.clear();
                encode_piece(vocab, bytes, scratch);
                (scratch.clone(), n)
            }));
        });
        let took = began.elapsed();
        if took < ROUND_TIME / 2 {
            round_bytes = (round_bytes * 2).min(MAX_ROUND_BYTES);
        } else if took > ROUND_TIME * 2 {
            round_bytes = (round_bytes / 2).max(1);
        }
        interrupt::step(usize::MAX)?; // a forced look: the check runs if it is due
        start = end;
    }
    // The words' bytes are freed before the arena is built next to the ids.
    drop(words);
    WordArena::new(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn stop() -> Result<()> {
        Err(Error::Interrupted)
    }

    /// Words of a few bytes over "ab", `total` bytes in all, and a vocabulary that
    /// merges "aa" and "ab" (so segmenting encodes, rather than mapping bytes).
    fn words_and_vocab(total: usize) -> (SortedWords, Vocab) {
        let words: Vec<(Vec<u8>, u64)> = (0..total / 8)
            .map(|i| ((0..8).map(|k| if (i >> k) & 1 == 1 { b'a' } else { b'b' }).collect(), 1))
            .collect();
        let (a, b) = (Rank::from(b'a'), Rank::from(b'b'));
        let merges = vec![
            MergeRecord { left: a, right: a, token: 256, count: 0 },
            MergeRecord { left: a, right: b, token: 257, count: 0 },
        ];
        (SortedWords::of(&words), Vocab::from_merges(merges, &[]).unwrap())
    }

    #[test]
    fn segmenting_encodes_each_word_in_order() {
        let (words, vocab) = words_and_vocab(3 * FIRST_ROUND_BYTES + 24);
        let wide = segment::<Rank>(words.clone(), &vocab, None).unwrap();
        let narrow = segment::<u16>(words.clone(), &vocab, None).unwrap();
        assert_eq!((wide.len(), narrow.len()), (words.len(), words.len()));
        for (w, (bytes, n)) in words.iter().enumerate() {
            let mut want = Vec::new();
            encode_piece(&vocab, bytes, &mut want);
            let w = w as u32;
            assert_eq!((wide.word(w), wide.count(w)), (&want[..], n));
            assert_eq!((narrow.ranks(w), narrow.count(w)), (want, n));
        }
    }

    #[test]
    fn ctrl_c_stops_segmenting_under_either_vocabulary() {
        // More than one round (or, for the 256 bytes, more work than one look at the
        // clock waits for): the check runs and stops the call.
        let (words, vocab) = words_and_vocab(2 * FIRST_ROUND_BYTES);
        assert_eq!(
            interrupt::with_check(stop, || segment::<u16>(words.clone(), &vocab, None)).err(),
            Some(Error::Interrupted)
        );
        let bytes = Vocab::bytes_only();
        assert_eq!(
            interrupt::with_check(stop, || segment::<Rank>(words.clone(), &bytes, None)).err(),
            Some(Error::Interrupted)
        );
        let n = words.len();
        assert_eq!(segment::<u16>(words, &bytes, None).map(|w| w.len()).ok(), Some(n));
    }
}
