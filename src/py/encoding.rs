//! The core calls behind the binding's encode methods: one text with the special tokens
//! it allows, and a batch's texts in order up to the first that fails.

use std::collections::HashSet;

use crate::{Rank, Tokenizer};

/// The ids of `text`, the special tokens in `allowed` as their ids (None: none, as
/// `encode_ordinary`).
pub(super) fn encode_allowing(
    tokenizer: &Tokenizer,
    text: &str,
    allowed: Option<&HashSet<String>>,
) -> crate::Result<Vec<Rank>> {
    match allowed {
        None => tokenizer.encode_ordinary(text),
        Some(allowed) => tokenizer.encode(text, |special| {
            std::str::from_utf8(special).is_ok_and(|s| allowed.contains(s))
        }),
    }
}

/// The ids of documents `range`, in order, by `encode`, up to and including the first
/// that fails: a batch stops at its first failing document.
pub(super) fn encode_until_failure(
    range: std::ops::Range<usize>,
    encode: impl Fn(usize) -> crate::Result<Vec<Rank>>,
) -> Vec<crate::Result<Vec<Rank>>> {
    let mut out = Vec::with_capacity(range.len());
    for i in range {
        let ids = encode(i);
        let failed = ids.is_err();
        out.push(ids);
        if failed {
            break;
        }
    }
    out
}
