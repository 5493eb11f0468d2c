//! cl100k's pieces in a window's masks. In ASCII text:
//!
//! - a letter run starts a piece unless the character before it is U+0020,
//!   `\t`/U+000B/U+000C, or a lone "other" character not after U+0020: that character is
//!   the run's prefix (`[^\r\n\p{L}\p{N}]?+\p{L}++`). A lone apostrophe before a
//!   contraction (`'s`, `'ll`, `'ſ`, ...) takes only the contraction; the rest of the run
//!   starts anew.
//! - a digit run starts a piece, and again every three digits (`\p{N}{1,3}+`).
//! - a run of "other" starts a piece unless U+0020 comes before it, which it takes
//!   (` ?[^\s\p{L}\p{N}]++`); it also takes the `\r`/`\n` right after it (`[\r\n]*+`).
//! - a whitespace run (less newlines taken by "other" before it) starts a piece; so does
//!   the byte after its last newline when more whitespace follows (`\s*[\r\n]` ends
//!   there), and its last byte when that is not a newline (`\s+(?!\S)` leaves it to the
//!   next piece, which it starts as a prefix, a U+0020 before "other", or alone).
//!
//! Non-ASCII letters join the letter mask, and any character that is neither a number nor
//! a space (a mark, punctuation, a symbol) is "other", so the rules hold as written: a
//! letter run is a run of letter bytes, and a prefix is the one character before it.
//! Non-ASCII numbers and spaces (grouped or left by characters) are refused.

use super::super::classes::{LETTER, NUMBER, SPACE};
use super::super::{cl100k, scan::Text};
use super::{
    after, all_if, before, contraction_pieces, decided, digit_starts, fill_up, other_starts,
    white_starts, Masks, Rules,
};

/// The rules of tiktoken's cl100k_base pattern.
pub struct Cl100k;

impl Rules for Cl100k {
    #[inline(always)]
    fn take_char(m: &mut Masks, flags: u8, _k: usize, bytes: u64) -> bool {
        if flags & (NUMBER | SPACE) != 0 {
            return false;
        }
        // Without a branch: letters and "other" alternate in most scripts' text.
        m.letter |= bytes & all_if(flags & LETTER != 0);
        true
    }

    #[inline(always)]
    fn starts(m: &Masks, text: &Text, pos: usize) -> (u64, u32) {
        let Masks { letter, digit, space, white, newline, apostrophe, .. } = *m;
        let other = m.other();
        let tab = white & !newline & !space;

        // Newlines right after "other" belong to its piece.
        let taken = fill_up(newline, newline & after(other));
        let (other_piece_starts, lone_start) = other_starts(m, other);

        // Letters: a run starts a piece unless its prefix does.
        let letter_starts = letter & !after(letter);
        let prefixes = space | tab | fill_up(other, lone_start);
        let letter_piece_starts = letter_starts & !after(prefixes);

        let all = 1
            | white_starts(m, white & !taken)
            | other_piece_starts
            | letter_piece_starts
            | digit_starts(digit);
        // A lone apostrophe before a contraction takes only the contraction.
        let contractions = apostrophe & lone_start & before(letter_starts);
        let all = contraction_pieces(all, contractions, text, pos, true);
        (all, decided(m))
    }

    #[inline(always)]
    fn piece_end(text: &Text, i: usize) -> usize {
        cl100k::piece_end(text, i)
    }
}
