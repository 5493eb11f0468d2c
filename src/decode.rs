//! Decoding ids back to bytes.

use crate::error::{Error, Result};
use crate::special::SpecialTokens;
use crate::vocab::Vocab;
use crate::Rank;

/// The bytes of `ids`; special tokens decode to their text.
pub fn decode_bytes(vocab: &Vocab, specials: &SpecialTokens, ids: &[Rank]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(ids.len() * 4);
    for (position, &id) in ids.iter().enumerate() {
        if let Some(bytes) = vocab.token(id) {
            out.extend_from_slice(bytes);
        } else if let Some(text) = specials.text(id) {
            out.extend_from_slice(text.as_bytes());
        } else {
            return Err(Error::UnknownToken { id: id.into(), position });
        }
    }
    Ok(out)
}

/// The length (0..=3) of the end of `data` that starts a UTF-8 character without
/// finishing it: a streaming decoder holds those bytes back until more arrive.
pub fn incomplete_tail(data: &[u8]) -> usize {
    for len in 1..=data.len().min(3) {
        let tail = &data[data.len() - len..];
        if tail[0] & 0xC0 != 0x80 {
            // A lead byte: incomplete iff decoding stops at the end without an error.
            return match std::str::from_utf8(tail) {
                Err(e) if e.valid_up_to() == 0 && e.error_len().is_none() => len,
                _ => 0,
            };
        }
    }
    0
}

/// How many bytes of `data` are not part of valid UTF-8.
pub fn invalid_bytes(data: &[u8]) -> u64 {
    let mut ledger = crate::ledger::Ledger::default();
    ledger.tally_invalid(data, 0);
    ledger.invalid_bytes.iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incomplete_tails() {
        assert_eq!(incomplete_tail(b"abc"), 0);
        assert_eq!(incomplete_tail(b"ab\xe4"), 1);
        assert_eq!(incomplete_tail(b"ab\xe4\xb8"), 2);
        assert_eq!(incomplete_tail(b"ab\xe4\xb8\xad"), 0);
        assert_eq!(incomplete_tail(b"\xf0\x9f\x98"), 3);
        assert_eq!(incomplete_tail(b"ab\xff"), 0);
        assert_eq!(incomplete_tail(b"ab\xed\xa0"), 0, "a surrogate never completes");
        assert_eq!(invalid_bytes(b"a\xffb\xed\xa0\x80"), 4);
    }
}
