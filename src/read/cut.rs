//! Safe cuts: where a long document may be split into chunks that pre-tokenize exactly
//! like the whole.
//!
//! For the built-in patterns (gpt2, cl100k, o200k) a cut is safe at position `p` when
//! `data[p-2]` is a printable ASCII byte (0x21..=0x7E), `data[p-1]` is `\n` and `data[p]`
//! is printable ASCII. Why:
//! - no piece of these patterns holds `\n` followed by a non-space character (newlines only
//!   occur in whitespace pieces and at the end of punctuation pieces), so no piece of the
//!   whole document spans the cut;
//! - the only look-ahead is `\s+(?!\S)`, one character. Before the cut the newline is a
//!   whitespace run of its own (the byte before it is not whitespace), which every
//!   pattern emits as the piece "\n" whether the text goes on with a non-space or ends
//!   there. (Without the printable byte before it, gpt2 splits " \n" + "x" as " ", "\n"
//!   but a chunk ending in " \n" as one piece, which the property test in
//!   `tests/test_files.py` finds.)
//! - none of the patterns looks behind, so the text after the cut splits as a document
//!   of its own would.
//!
//! All three bytes are ASCII, so a cut never splits a character or an invalid UTF-8
//! sequence. Special tokens are cut out before the pattern runs: a special token
//! holding a newline could span a cut, so such tokens turn cutting off (see
//! `cuts_allowed`).

/// True when a document may be cut before `data[p]` (see the module docs).
pub fn is_safe_cut(data: &[u8], p: usize) -> bool {
    p >= 2 && p < data.len() && printable(data[p - 2]) && data[p - 1] == b'\n' && printable(data[p])
}

/// The last safe cut in `data[..=last]` at or after `floor`, if any.
pub fn last_safe_cut(data: &[u8], floor: usize, last: usize) -> Option<usize> {
    let last = last.min(data.len().saturating_sub(1));
    (floor.max(2)..=last).rev().find(|&p| is_safe_cut(data, p))
}

/// Whether documents may be cut: only under a built-in pattern, and only when no special
/// token contains a newline (one could otherwise span a cut).
pub fn cuts_allowed(builtin_pattern: bool, special_tokens: &[&str]) -> bool {
    builtin_pattern && special_tokens.iter().all(|t| !t.contains('\n'))
}

fn printable(b: u8) -> bool {
    (0x21..=0x7E).contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_only_between_newline_and_printable() {
        let data = b"ab\ncd \n e\n\nf\nx";
        let cuts: Vec<usize> = (0..=data.len()).filter(|&p| is_safe_cut(data, p)).collect();
        assert_eq!(cuts, vec![3, 13]);
        assert_eq!(last_safe_cut(data, 0, data.len()), Some(13));
        assert_eq!(last_safe_cut(data, 4, 12), None);
        assert!(!cuts_allowed(true, &["<|a|>", "x\ny"]));
        assert!(cuts_allowed(true, &["<|a|>"]));
        assert!(!cuts_allowed(false, &[]));
    }
}
