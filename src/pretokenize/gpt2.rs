//! The gpt2 / r50k_base pattern, by hand:
//!
//! ```text
//! '(?:[sdmt]|ll|ve|re) | ' '?\p{L}++ | ' '?\p{N}++ | ' '?[^\s\p{L}\p{N}]++ | \s++$ | \s+(?!\S) | \s
//! ```
//!
//! Alternatives are tried in order (leftmost-first). Every character is a letter, a
//! number, "other" or `\s`, so some alternative always matches where the previous piece
//! ended: the pieces tile the text.

use super::classes::{LETTER, NUMBER};
use super::scan::Text;

/// The end of the piece that starts at `i` (`i < text.len()`).
pub fn piece_end(text: &Text, i: usize) -> usize {
    // '(?:[sdmt]|ll|ve|re): case-sensitive contractions.
    if let Some(end) = text.contraction(i, false) {
        return end;
    }
    // ` ?\p{L}++`, ` ?\p{N}++`, ` ?[^\s\p{L}\p{N}]++`: an optional U+0020 then a maximal
    // run of one class. When the space is not followed by such a run, ` ?` backs off to
    // empty, and the space itself is no letter/number/other: those alternatives fail.
    let start = if text.bytes[i] == b' ' && i + 1 < text.len() { i + 1 } else { i };
    let (flags, _) = text.class(start);
    if flags & LETTER != 0 {
        return text.run(start, LETTER);
    }
    if flags & NUMBER != 0 {
        return text.run(start, NUMBER);
    }
    if text.is_other(start) {
        return text.run_other(start);
    }
    // Only `\s` at `i` is left (the character at `start` is `\s`, and `i` is either
    // `start` or a space).
    let spaces = text.spaces(i);
    if spaces.end == text.len() {
        // \s++$: the run reaches the end of the text.
        spaces.end
    } else if spaces.last > i {
        // \s+(?!\S): the run is followed by \S, so back off one character; the last space
        // then joins the next piece (" word") or stands alone.
        spaces.last
    } else {
        // \s: a single space before \S.
        i + text.class(i).1
    }
}
