//! Decoding ids back to bytes.
//!
//! The vocabulary keeps each token in its own vector, so decoding from it reads a pointer
//! per id and then copies a few bytes through a call to `memmove`: on 5.7 M ids of English
//! that call was a quarter of the time. [`DecodeTable`] lays every token's bytes back to
//! back, padded, beside one 8-byte span per id: a token of at most [`WORD`] bytes is
//! copied as one unaligned 16-byte move whatever its length, and the output advanced by
//! the length.

use crate::error::{Error, Result};
use crate::special::SpecialTokens;
use crate::vocab::Vocab;
use crate::Rank;

/// Tokens up to this long are copied as one fixed-size move.
const WORD: usize = 16;

/// A span of an id that is not a token (a hole, left for a special token).
const HOLE: u64 = u64::MAX;

/// Every token's bytes back to back, with [`WORD`] bytes of padding after them, and each
/// id's `start << 32 | length` in them.
#[derive(Debug, Clone)]
pub struct DecodeTable {
    bytes: Vec<u8>,
    spans: Vec<u64>,
}

impl DecodeTable {
    pub fn of(vocab: &Vocab) -> Self {
        let total: usize = vocab.tokens().iter().map(Vec::len).sum();
        let mut bytes = Vec::with_capacity(total + WORD);
        let spans = (0..vocab.len() as Rank)
            .map(|id| match vocab.token(id) {
                Some(token) => {
                    let start = bytes.len() as u64;
                    bytes.extend_from_slice(token);
                    start << 32 | token.len() as u64
                }
                None => HOLE,
            })
            .collect();
        bytes.resize(bytes.len() + WORD, 0);
        assert!(bytes.len() <= u32::MAX as usize, "a vocabulary's bytes fit u32 offsets");
        Self { bytes, spans }
    }

    /// The bytes of `ids`; special tokens decode to their text, or to nothing with
    /// `skip_special`.
    pub fn decode(
        &self,
        specials: &SpecialTokens,
        ids: &[Rank],
        skip_special: bool,
    ) -> Result<Vec<u8>> {
        let mut out: Vec<u8> = Vec::with_capacity(ids.len() * 4 + WORD);
        for (position, &id) in ids.iter().enumerate() {
            let span = self.spans.get(id as usize).copied().unwrap_or(HOLE);
            if span == HOLE {
                match specials.text(id) {
                    Some(text) if !skip_special => out.extend_from_slice(text.as_bytes()),
                    Some(_) => {}
                    None => return Err(Error::UnknownToken { id: id.into(), position }),
                }
                continue;
            }
            let (start, len) = ((span >> 32) as usize, (span & 0xFFFF_FFFF) as usize);
            if len <= WORD {
                out.reserve(WORD);
                // SAFETY: `bytes` holds WORD bytes from any token's start (the padding),
                // and `out` has room for WORD more; only `len` of them are kept, all
                // written (the rest are overwritten by the next token or cut off).
                unsafe {
                    let at = out.len();
                    std::ptr::copy_nonoverlapping(
                        self.bytes.as_ptr().add(start),
                        out.as_mut_ptr().add(at),
                        WORD,
                    );
                    out.set_len(at + len);
                }
            } else {
                out.extend_from_slice(&self.bytes[start..start + len]);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table against the tokens themselves: every token alone and all in a row,
    /// tokens longer and shorter than a word, holes, special tokens kept and skipped.
    #[test]
    fn decodes_as_the_tokens_bytes() {
        let long = vec![b'x'; 40];
        let ranks: Vec<(Vec<u8>, Rank)> = (0..=255u8)
            .map(|b| (vec![b], Rank::from(b)))
            .chain([
                (b"ab".to_vec(), 256),
                (b"0123456789abcdef".to_vec(), 257),
                (b"0123456789abcdefg".to_vec(), 258),
                (long.clone(), 259),
            ])
            .collect();
        let vocab = Vocab::from_ranks(ranks, &[]).unwrap();
        let specials = SpecialTokens::new(vec![("<|s|>".to_string(), 260)]).unwrap();
        let table = DecodeTable::of(&vocab);
        let ids: Vec<Rank> = (0..260).chain([260, 257, 97, 259, 258, 256, 0]).collect();
        let mut want: Vec<u8> = Vec::new();
        for &id in &ids {
            want.extend_from_slice(vocab.token(id).unwrap_or(b"<|s|>"));
        }
        assert_eq!(table.decode(&specials, &ids, false).unwrap(), want);
        let skipped: Vec<u8> = ids
            .iter()
            .filter(|&&id| id != 260)
            .flat_map(|&id| vocab.token(id).unwrap().to_vec())
            .collect();
        assert_eq!(table.decode(&specials, &ids, true).unwrap(), skipped);
        for id in 0..260 {
            assert_eq!(table.decode(&specials, &[id], false).unwrap(), vocab.token(id).unwrap());
        }
        assert_eq!(table.decode(&specials, &[], false).unwrap(), b"");
        match table.decode(&specials, &[97, 261], false) {
            Err(Error::UnknownToken { id: 261, position: 1 }) => {}
            other => panic!("{other:?}"),
        }
    }
}
