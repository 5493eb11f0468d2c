//! Decoding ids back to bytes.

use crate::error::{Error, Result};
use crate::special::SpecialTokens;
use crate::vocab::Vocab;
use crate::Rank;

/// The bytes of `ids`; special tokens decode to their text, or to nothing with
/// `skip_special`.
pub fn decode_bytes(
    vocab: &Vocab,
    specials: &SpecialTokens,
    ids: &[Rank],
    skip_special: bool,
) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(ids.len() * 4);
    for (position, &id) in ids.iter().enumerate() {
        if let Some(bytes) = vocab.token(id) {
            out.extend_from_slice(bytes);
        } else if let Some(text) = specials.text(id) {
            if !skip_special {
                out.extend_from_slice(text.as_bytes());
            }
        } else {
            return Err(Error::UnknownToken { id: id.into(), position });
        }
    }
    Ok(out)
}
