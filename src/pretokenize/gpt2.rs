//! The gpt2 / r50k_base pattern, by hand:
//!
//! ```text
//! '(?:[sdmt]|ll|ve|re) | ' '?\p{L}++ | ' '?\p{N}++ | ' '?[^\s\p{L}\p{N}]++ | \s++$ | \s+(?!\S) | \s
//! ```
//!
//! Alternatives are tried in order (leftmost-first). Every character is a letter, a
//! number, "other" or `\s`, so some alternative always matches where the previous piece
//! ended: the pieces tile the text.

use super::ascii::{self, APOSTROPHE, DIGIT, NOT_SPACE, PUNCT, SPACE, WHITESPACE};
use super::classes::{LETTER, NUMBER};
use super::scan::{Spaces, Text};

/// The end of the piece that starts at `i` (`i < text.len()`).
#[inline(always)]
pub fn piece_end(text: &Text, i: usize) -> usize {
    match ascii_piece_end(text, i) {
        Some(end) => end,
        None => general_piece_end(text, i),
    }
}

/// The end of the piece at `i` when the ASCII bytes there decide it (most pieces of most
/// text), from the kind of the byte at `i` and, after a space or other whitespace, of the
/// next one; `None` hands the piece to `general_piece_end`.
#[inline(always)]
fn ascii_piece_end(text: &Text, i: usize) -> Option<usize> {
    // Tests in order of frequency in English and code.
    let kind = text.kind(i);
    if kind & ascii::LETTER != 0 {
        return Some(text.run(i + 1, LETTER));
    }
    let next = text.kind(i + 1);
    if kind == SPACE {
        // ` ?\p{L}++`, ` ?\p{N}++`, ` ?[^\s\p{L}\p{N}]++` with the space taken.
        if next & ascii::LETTER != 0 {
            return Some(text.run(i + 2, LETTER));
        }
        if next & ascii::OTHER != 0 {
            return Some(text.run_other(i + 2));
        }
        if next == DIGIT {
            return Some(text.run(i + 2, NUMBER));
        }
    }
    if kind == PUNCT {
        return Some(text.run_other(i + 1));
    }
    if kind & WHITESPACE != 0 {
        if next & NOT_SPACE != 0 {
            // `\s`: one `\s` before `\S`.
            return Some(i + 1);
        }
        return Some(spaces_end(text, i, text.ascii_spaces(i)?));
    }
    if kind == DIGIT {
        return Some(text.run(i + 1, NUMBER));
    }
    if kind == APOSTROPHE {
        return Some(text.contraction(i, false).unwrap_or_else(|| text.run_other(i + 1)));
    }
    // A non-ASCII character at `i`.
    None
}

/// The end of the piece that starts at `i`, any characters.
#[inline(never)]
fn general_piece_end(text: &Text, i: usize) -> usize {
    // '(?:[sdmt]|ll|ve|re): case-sensitive contractions.
    if let Some(end) = text.contraction(i, false) {
        return end;
    }
    // ` ?\p{L}++`, ` ?\p{N}++`, ` ?[^\s\p{L}\p{N}]++`: an optional U+0020 then a maximal
    // run of one class. When the space is not followed by such a run, ` ?` backs off to
    // empty, and the space itself is no letter/number/other: those alternatives fail.
    let start = if text.byte(i) == b' ' && i + 1 < text.len() { i + 1 } else { i };
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
    spaces_end(text, i, text.spaces(i))
}

/// The end of the piece at `i` when only the `\s` alternatives are left; `spaces` is the
/// `\s` run from `i`.
#[inline(always)]
fn spaces_end(text: &Text, i: usize, spaces: Spaces) -> usize {
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
