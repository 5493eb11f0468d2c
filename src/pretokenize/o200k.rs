//! The o200k_base pattern, by hand (U = `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`,
//! W = `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`, P = `[^\r\n\p{L}\p{N}]`, C = the contractions
//! `(?i:'s|'t|'re|'ve|'m|'ll|'d)`):
//!
//! ```text
//! P?U*W+C? | P?U+W*C? | \p{N}{1,3} | ' '?[^\s\p{L}\p{N}]+[\r\n/]* | \s*[\r\n]+ | \s+(?!\S) | \s+
//! ```
//!
//! Nothing is possessive here, so backtracking matters: the first two alternatives are
//! tried with the prefix P taken, then without it (a mark is both in P and in U and W),
//! and `U*` gives characters back until `W+` can match (possible because Lm, Lo and marks
//! are in both U and W). Every character is a letter, a number, "other" or `\s`, so the
//! pieces tile the text.

use super::ascii::{self, DIGIT, NEWLINE, NOT_SPACE, SPACE, TAB, UPPER};
use super::classes::{LETTER, LOWERISH, NUMBER, UPPERISH};
use super::runs::Set;
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
/// text), from the kinds of the bytes at `i` and `i + 1` and of the word there; `None`
/// hands the piece to `general_piece_end`.
#[inline(always)]
fn ascii_piece_end(text: &Text, i: usize) -> Option<usize> {
    // Tests in order of frequency in English and code.
    let kind = text.kind(i);
    if kind & ascii::LETTER != 0 {
        return ascii_word(text, i, kind);
    }
    let next = text.kind(i + 1);
    // In P = `[^\r\n\p{L}\p{N}]`: a prefix before a word.
    if kind & (SPACE | TAB | ascii::OTHER) != 0 {
        if next & ascii::LETTER != 0 {
            return ascii_word(text, i + 1, next);
        }
        if next == 0 && i + 1 < text.len() {
            // A non-ASCII character after the prefix: maybe a letter or a mark.
            return None;
        }
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    if kind == SPACE && next & ascii::OTHER != 0 {
        return Some(text.run_bytes(text.run_other(i + 2), b"\r\n/"));
    }
    if kind & ascii::OTHER != 0 {
        return Some(text.run_bytes(text.run_other(i + 1), b"\r\n/"));
    }
    if kind & (SPACE | TAB | NEWLINE) != 0 {
        if next & NOT_SPACE != 0 {
            // `\s*[\r\n]+` (a newline) or `\s+` (any other): the one character.
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

/// `U*W+C? | U+W*C?` at the ASCII letter `j` when ASCII decides it: ASCII letters are
/// either U (uppercase) or W (lowercase), so the word is the uppercase run and the
/// lowercase run after it, and no backtracking can change that unless a non-ASCII
/// character (which may be U, W or both) ends one of the runs (then `None`).
#[inline(always)]
fn ascii_word(text: &Text, j: usize, kind: u8) -> Option<usize> {
    // `kind` is the letter's at `j`: a lowercase one starts the lowercase run (most words),
    // so only a capital needs the uppercase scan.
    let lower_start = if kind == UPPER { text.run_set(j + 1, Set::Upper) } else { j };
    let end = text.run_set(lower_start, Set::Lower);
    if !text.ends_ascii(end) {
        return None;
    }
    Some(text.contraction(end, true).unwrap_or(end))
}

/// The end of the piece that starts at `i`, any characters.
#[inline(never)]
fn general_piece_end(text: &Text, i: usize) -> usize {
    let c = text.byte(i);
    let (flags, len) = text.class(i);
    // P?: tried taken first (when the character is in P), then empty.
    let prefix = flags & (LETTER | NUMBER) == 0 && c != b'\r' && c != b'\n';
    // P?U*W+C?
    if prefix {
        if let Some(end) = lower_word(text, i + len) {
            return end;
        }
    }
    if let Some(end) = lower_word(text, i) {
        return end;
    }
    // P?U+W*C?
    if prefix {
        if let Some(end) = upper_word(text, i + len) {
            return end;
        }
    }
    if let Some(end) = upper_word(text, i) {
        return end;
    }
    // \p{N}{1,3}
    if flags & NUMBER != 0 {
        return text.run_at_most(i, NUMBER, 3);
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`: an optional U+0020, a run of "other" (which takes any
    // `/` itself), then newlines and slashes.
    let start = if c == b' ' { i + 1 } else { i };
    if text.is_other(start) {
        return text.run_bytes(text.run_other(start), b"\r\n/");
    }
    // Only `\s` at `i` is left.
    spaces_end(text, i, text.spaces(i))
}

/// The end of the piece at `i` when only the `\s` alternatives are left; `spaces` is the
/// `\s` run from `i`.
#[inline(always)]
fn spaces_end(text: &Text, i: usize, spaces: Spaces) -> usize {
    if let Some(end) = spaces.newline_end {
        // \s*[\r\n]+: \s* backs off to the last \r or \n of the run, and [\r\n]+ takes
        // just that one (nothing after it in the run is a newline). No `\s++$` comes
        // first in o200k, so this applies at the end of the text too.
        end
    } else if spaces.end == text.len() {
        // \s+(?!\S) at the end of the text: the whole run.
        spaces.end
    } else if spaces.last > i {
        // \s+(?!\S): all but the last character, which joins the next piece.
        spaces.last
    } else {
        // \s+: a single space before \S.
        i + text.class(i).1
    }
}

/// `U*W+C?` from `start`.
#[inline(always)]
fn lower_word(text: &Text, start: usize) -> Option<usize> {
    // U* takes a maximal run; remember where its last W character ends.
    // No ASCII character is both U and W: an ASCII stretch of U (uppercase letters) moves
    // `j` without touching `last_lower_end`. Non-ASCII characters are taken one at a
    // time, back to the vector scan only at an ASCII capital (as in `Text::run`).
    let (mut j, mut last_lower_end) = (text.run_ascii(start, UPPERISH), None);
    while j < text.len() && text.byte(j) >= 0x80 {
        let (flags, len) = text.class(j);
        if flags & UPPERISH == 0 {
            break;
        }
        j += len;
        if flags & LOWERISH != 0 {
            last_lower_end = Some(j);
        }
        if text.ascii_member(j, UPPERISH) {
            j = text.run_ascii(j + 1, UPPERISH);
        }
    }
    let end = if text.is(j, LOWERISH) {
        // W+ right after the whole U* run (a lowercase letter): a maximal W run.
        text.run(j, LOWERISH)
    } else {
        // U* gives characters back until W+ can start: at the run's last W character,
        // which W+ takes alone (what follows it in the run is Lu/Lt, or the run ended).
        last_lower_end?
    };
    Some(text.contraction(end, true).unwrap_or(end))
}

/// `U+W*C?` from `start`.
#[inline(always)]
fn upper_word(text: &Text, start: usize) -> Option<usize> {
    let upper_end = text.run(start, UPPERISH);
    if upper_end == start {
        return None;
    }
    let end = text.run(upper_end, LOWERISH);
    Some(text.contraction(end, true).unwrap_or(end))
}
