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

use super::ascii::{self, APOSTROPHE, DIGIT, NEWLINE, NOT_SPACE, PUNCT, SPACE, TAB};
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
/// text), from the kinds of the bytes at `i` and `i + 1`; `None` hands the piece to
/// `general_piece_end`.
#[inline(always)]
fn ascii_piece_end(text: &Text, i: usize) -> Option<usize> {
    // Tests in order of frequency in English and code.
    let kind = text.kind(i);
    if kind & ascii::LETTER != 0 {
        return Some(text.run(i + 1, LETTER));
    }
    let next = text.kind(i + 1);
    if kind == APOSTROPHE {
        if let Some(end) = text.contraction(i, true) {
            return Some(end);
        }
    }
    // Not \r, \n, a letter or a number: a prefix `[^\r\n\p{L}\p{N}]?+` before letters.
    if kind & (SPACE | TAB | PUNCT | APOSTROPHE) != 0 {
        if next & ascii::LETTER != 0 {
            return Some(text.run(i + 2, LETTER));
        }
        if next == 0 && i + 1 < text.len() {
            // A non-ASCII character after the prefix: maybe a letter.
            return None;
        }
    }
    // ` ?[^\s\p{L}\p{N}]++[\r\n]*+`
    if kind == SPACE && next & ascii::OTHER != 0 {
        return Some(text.run_bytes(text.run_other(i + 2), b"\r\n"));
    }
    if kind & ascii::OTHER != 0 {
        return Some(text.run_bytes(text.run_other(i + 1), b"\r\n"));
    }
    if kind & (SPACE | TAB | NEWLINE) != 0 {
        if next & NOT_SPACE != 0 {
            // `\s*[\r\n]` (a newline) or `\s` (any other): the one character.
            return Some(i + 1);
        }
        return Some(spaces_end(text, i, text.ascii_spaces(i)?));
    }
    if kind == DIGIT {
        return text.ascii_digits(i);
    }
    // A non-ASCII character at `i`.
    None
}

/// The end of the piece that starts at `i`, any characters.
#[inline(never)]
fn general_piece_end(text: &Text, i: usize) -> usize {
    // '(?i:[sdmt]|ll|ve|re): contractions, any case (Unicode simple folding: 'ſ too).
    if let Some(end) = text.contraction(i, true) {
        return end;
    }
    let c = text.byte(i);
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
    spaces_end(text, i, text.spaces(i))
}

/// The end of the piece at `i` when only the `\s` alternatives are left; `spaces` is the
/// `\s` run from `i`.
#[inline(always)]
fn spaces_end(text: &Text, i: usize, spaces: Spaces) -> usize {
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
        i + text.class(i).1
    }
}
