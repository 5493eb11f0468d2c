//! The cl100k_base pattern, by hand:
//!
//! ```text
//! '(?i:[sdmt]|ll|ve|re) | [^\r\n\p{L}\p{N}]?+\p{L}++ | \p{N}{1,3}+
//!   | ' '?[^\s\p{L}\p{N}]++[\r\n]*+ | \s++$ | \s*[\r\n] | \s+(?!\S) | \s
//! ```
//!
//! Alternatives are tried in order (leftmost-first). The possessive quantifiers never
//! change the result here (what follows each of them could not match what they would give
//! back); they only keep the backtracking engine from trying. Every character is a letter,
//! a number, "other" or `\s`, so the pieces tile the text.

use super::classes::{LETTER, NUMBER};
use super::scan::Text;

/// The end of the piece that starts at `i` (`i < text.len()`).
pub fn piece_end(text: &Text, i: usize) -> usize {
    // '(?i:[sdmt]|ll|ve|re): contractions, any case (Unicode simple folding: 'ſ too).
    if let Some(end) = text.contraction(i, true) {
        return end;
    }
    let c = text.bytes[i];
    let (flags, len) = text.class(i);
    // [^\r\n\p{L}\p{N}]?+\p{L}++: a letter run, optionally after one character that is
    // not \r, \n, a letter or a number (a space, a tab, punctuation, a mark, ...).
    if flags & LETTER != 0 {
        return text.run(i, LETTER);
    }
    let prefix = flags & NUMBER == 0 && c != b'\r' && c != b'\n';
    if prefix && text.is(i + len, LETTER) {
        return text.run(i + len, LETTER);
    }
    // \p{N}{1,3}+: numbers in groups of up to three.
    if flags & NUMBER != 0 {
        return text.run_at_most(i, NUMBER, 3);
    }
    // ` ?[^\s\p{L}\p{N}]++[\r\n]*+`: an optional U+0020, a run of "other", then any
    // newlines right after it.
    let start = if c == b' ' { i + 1 } else { i };
    if text.is_other(start) {
        return text.run_bytes(text.run_other(start), b"\r\n");
    }
    // Only `\s` at `i` is left.
    let spaces = text.spaces(i);
    if spaces.end == text.len() {
        // \s++$: the run reaches the end of the text.
        spaces.end
    } else if let Some(end) = spaces.newline_end {
        // \s*[\r\n]: \s* backs off to the last \r or \n of the run.
        end
    } else if spaces.last > i {
        // \s+(?!\S): all but the last character, which joins the next piece.
        spaces.last
    } else {
        // \s: a single space before \S.
        i + len
    }
}
