//! A trained tokenizer: vocabulary, pattern and special tokens, immutable once built.

use std::sync::OnceLock;

use rayon::prelude::*;

use crate::decode::DecodeTable;
use crate::document::Document;
use crate::encode::{self, PieceBatch, PieceCache, ToBatch};
use crate::error::{Error, Result};
use crate::parallel;
use crate::pretokenize::Pattern;
use crate::special::{Part, SpecialTokens};
use crate::vocab::Vocab;
use crate::Rank;

#[derive(Debug, Clone)]
pub struct Tokenizer {
    /// The mergeable tokens and their merge log.
    vocab: Vocab,
    /// How text is split into pieces before merging (training used the same).
    pattern: Pattern,
    /// Special tokens, with ids above the mergeable tokens or in their holes.
    specials: SpecialTokens,
    /// The tokens' bytes laid out for decoding, made at the first decode.
    decode_table: OnceLock<DecodeTable>,
}

/// The largest gap allowed between the ids in use (mergeable tokens, then special
/// tokens) and a special token's id: tiktoken's encodings leave a few unused ids before
/// their special tokens (cl100k_base: 20), nothing legitimate leaves thousands.
pub const MAX_SPECIAL_GAP: usize = 1 << 16;

/// Every id is below this (ids are `u32` in the core and `i32`-safe for NumPy users).
pub const MAX_ID: usize = 1 << 31;

/// Refuses special ids far beyond the vocabulary (see [`Tokenizer::with_special_ids`]),
/// before anything is sized by them.
pub fn check_special_ids(vocab_len: usize, specials: &[(String, Rank)]) -> Result<()> {
    let limit =
        vocab_len.saturating_add(specials.len()).saturating_add(MAX_SPECIAL_GAP).min(MAX_ID);
    match specials.iter().find(|&&(_, id)| id as usize >= limit) {
        Some((text, id)) => Err(Error::Corrupt(format!(
            "special token {text:?} has id {id}, far beyond the vocabulary of {vocab_len} \
             tokens and {} special tokens (ids must be below {limit})",
            specials.len()
        ))),
        None => Ok(()),
    }
}

impl Tokenizer {
    /// The one way a loaded tokenizer is built (a file's merge log, ranks or tokens): ids
    /// at [`MAX_ID`] and above are refused before `make` builds the vocabulary (given the
    /// special ids, which new ids skip), then the pattern is compiled and the special
    /// tokens placed. Every bad input is an error, never a panic (fuzzed).
    pub fn build(
        pattern: &str,
        specials: Vec<(String, Rank)>,
        make: impl FnOnce(&[Rank]) -> Result<Vocab>,
    ) -> Result<Self> {
        if let Some(&(_, id)) = specials.iter().find(|&&(_, id)| id as usize >= MAX_ID) {
            return Err(Error::Corrupt(format!(
                "special token id {id} is too large (ids must be below {MAX_ID})"
            )));
        }
        let reserved: Vec<Rank> = specials.iter().map(|&(_, id)| id).collect();
        let vocab = make(&reserved)?;
        Self::with_special_ids(vocab, Pattern::new(pattern)?, specials)
    }

    /// Special tokens get the ids right after the mergeable tokens, in the given order.
    pub fn new(vocab: Vocab, pattern: Pattern, special_texts: Vec<String>) -> Result<Self> {
        let first = vocab.len() as Rank;
        let specials =
            special_texts.into_iter().enumerate().map(|(i, t)| (t, first + i as Rank)).collect();
        Self::with_special_ids(vocab, pattern, specials)
    }

    /// Special tokens with explicit ids: above the mergeable tokens or in their holes
    /// (every hole must hold one). An id far beyond the vocabulary (more than
    /// [`MAX_SPECIAL_GAP`] past the mergeable tokens and the special tokens, or at
    /// [`MAX_ID`] and above) is refused as corrupt: ids index tables, so an id must stay
    /// in proportion to the vocabulary.
    pub fn with_special_ids(
        vocab: Vocab,
        pattern: Pattern,
        specials: Vec<(String, Rank)>,
    ) -> Result<Self> {
        check_special_ids(vocab.len(), &specials)?;
        let mut seen = std::collections::HashSet::new();
        for (text, id) in &specials {
            let free = (*id as usize) >= vocab.len() || vocab.is_hole(*id);
            if !free || !seen.insert(*id) {
                return Err(Error::InvalidConfig(format!(
                    "special token {text:?} has id {id}, which is taken"
                )));
            }
        }
        if let Some(hole) =
            (0..vocab.len() as Rank).find(|&id| vocab.is_hole(id) && !seen.contains(&id))
        {
            return Err(Error::Corrupt(format!(
                "id {hole} is neither a token nor a special token"
            )));
        }
        let specials = SpecialTokens::new(specials)?;
        Ok(Self { vocab, pattern, specials, decode_table: OnceLock::new() })
    }

    /// The ids of the special tokens (reserved when the vocabulary grows).
    pub fn special_ids(&self) -> Vec<Rank> {
        self.specials.tokens().iter().map(|&(_, id)| id).collect()
    }

    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    pub fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    pub fn specials(&self) -> &SpecialTokens {
        &self.specials
    }

    /// Mergeable tokens plus special tokens.
    pub fn vocab_size(&self) -> usize {
        self.vocab.n_tokens() + self.specials.len()
    }

    /// Encodes text, ignoring special tokens (their text is encoded as ordinary text).
    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<Rank>> {
        let mut out = Vec::with_capacity(ids_capacity(text.len()));
        self.encode_text_into(text, &mut out)?;
        Ok(out)
    }

    /// Encodes any bytes; bytes that are not valid UTF-8 become their byte tokens.
    pub fn encode_bytes(&self, data: &[u8]) -> Result<Vec<Rank>> {
        let mut out = Vec::with_capacity(ids_capacity(data.len()));
        let (vocab, mut cache, mut batch) =
            (&self.vocab, PieceCache::of_thread(), PieceBatch::new(data));
        self.pattern
            .split_bytes(data, |piece| batch.push(piece, vocab, &mut out, &mut cache))
            .map_err(match_error)?;
        batch.flush(vocab, &mut out, &mut cache);
        Ok(out)
    }

    /// Encodes text; special tokens whose text `allowed` accepts become their ids.
    pub fn encode(&self, text: &str, allowed: impl Fn(&[u8]) -> bool) -> Result<Vec<Rank>> {
        let mut out = Vec::with_capacity(ids_capacity(text.len()));
        self.specials.split(text.as_bytes(), allowed, |part| match part {
            Part::Special(id) => {
                out.push(id);
                Ok(())
            }
            Part::Text(segment) => {
                // SAFETY: splitting valid UTF-8 at special-token text (itself valid UTF-8)
                // leaves valid UTF-8 segments.
                let segment = unsafe { std::str::from_utf8_unchecked(segment) };
                self.encode_text_into(segment, &mut out)
            }
        })?;
        Ok(out)
    }

    /// Encodes many texts in parallel (ordinary encoding).
    pub fn encode_ordinary_batch(
        &self,
        texts: &[&str],
        threads: Option<usize>,
    ) -> Result<Vec<Vec<Rank>>> {
        parallel::pool(threads).install(|| {
            texts.par_iter().map(|t| self.encode_ordinary(t)).collect::<Result<Vec<_>>>()
        })
    }

    /// The ids of one document (text or bytes), with `eot` after them if given: a
    /// document of a flat batch (see [`encode::FlatBatch`]).
    pub fn encode_document(&self, doc: &Document<'_>, eot: Option<Rank>) -> Result<Vec<Rank>> {
        let mut ids = if doc.is_text {
            // SAFETY: `is_text` promises valid UTF-8.
            self.encode_ordinary(unsafe { std::str::from_utf8_unchecked(doc.data) })
        } else {
            self.encode_bytes(doc.data)
        }?;
        ids.extend(eot);
        Ok(ids)
    }

    /// Problems with the vocabulary, empty when it is sound. Construction already
    /// guarantees all 256 bytes, unique bytes and contiguous ids; this checks that every
    /// token is reachable: encoding its own bytes gives exactly that token.
    pub fn verify(&self, threads: Option<usize>) -> Vec<String> {
        let vocab = &self.vocab;
        let mut problems: Vec<(usize, String)> = parallel::pool(threads).install(|| {
            self.vocab
                .tokens()
                .par_iter()
                .enumerate()
                .filter(|(_, bytes)| bytes.len() > 1)
                .filter_map(|(id, bytes)| {
                    let mut got = Vec::new();
                    encode::encode_piece_parts(vocab, bytes, &mut got);
                    (got != [id as Rank]).then(|| {
                        (
                            id,
                            format!(
                                "token {id} ({:?}) is unreachable: its bytes encode as {got:?}",
                                String::from_utf8_lossy(bytes)
                            ),
                        )
                    })
                })
                .collect()
        });
        problems.sort();
        problems.into_iter().map(|(_, p)| p).collect()
    }

    pub fn decode_bytes(&self, ids: &[Rank]) -> Result<Vec<u8>> {
        self.decode_bytes_skipping(ids, false)
    }

    /// [`Self::decode_bytes`], leaving special tokens out when `skip_special`.
    pub fn decode_bytes_skipping(&self, ids: &[Rank], skip_special: bool) -> Result<Vec<u8>> {
        let table = self.decode_table.get_or_init(|| DecodeTable::of(&self.vocab));
        table.decode(&self.specials, ids, skip_special)
    }

    fn encode_text_into(&self, text: &str, out: &mut Vec<Rank>) -> Result<()> {
        let (vocab, mut cache, mut batch) =
            (&self.vocab, PieceCache::of_thread(), PieceBatch::new(text.as_bytes()));
        let mut sink = ToBatch { batch: &mut batch, vocab, out: &mut *out, cache: &mut cache };
        self.pattern.split_text_into(text, &mut sink, &mut 0).map_err(match_error)?;
        batch.flush(vocab, out, &mut cache);
        Ok(())
    }
}

/// Room for the ids of `len` bytes, so most calls never grow their output: text and code
/// average 3 to 4 bytes a token, and a short text has more tokens a byte (one growth
/// costs a short call more than its encoding).
fn ids_capacity(len: usize) -> usize {
    len / 3 + 16
}

fn match_error(e: fancy_regex::Error) -> Error {
    Error::PatternMatch { document: 0, message: e.to_string() }
}

#[cfg(test)]
mod special_id_tests {
    use super::*;

    fn with_id(id: Rank) -> Result<Tokenizer> {
        let specials = vec![("<s>".to_owned(), id)];
        let vocab = Vocab::from_merges(Vec::new(), &[id])?;
        Tokenizer::with_special_ids(vocab, Pattern::new("gpt2")?, specials)
    }

    #[test]
    fn special_ids_far_beyond_the_vocabulary_are_corrupt() {
        for id in [u32::MAX, 1 << 31, 256 + 1 + MAX_SPECIAL_GAP as Rank] {
            assert!(matches!(with_id(id), Err(Error::Corrupt(_))), "id {id}");
        }
        // Small gaps (as in cl100k_base) are fine.
        assert!(with_id(256).is_ok());
        assert!(with_id(300).is_ok());
    }

    #[test]
    fn build_refuses_huge_ids_before_making_the_vocabulary() {
        let specials = vec![("<s>".to_owned(), u32::MAX)];
        let made = Tokenizer::build("gpt2", specials, |_| panic!("must not be built"));
        assert!(matches!(made, Err(Error::Corrupt(_))));
    }

    #[test]
    fn build_refuses_a_rank_that_is_also_a_special_id() {
        let ranks: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
        let specials = vec![("<s>".to_owned(), 250)];
        let made =
            Tokenizer::build("gpt2", specials, |reserved| Vocab::from_ranks(ranks, reserved));
        match made {
            Err(Error::Corrupt(message)) => assert!(message.contains("id 250"), "{message}"),
            other => panic!("expected Corrupt, got {other:?}"),
        }
    }
}
