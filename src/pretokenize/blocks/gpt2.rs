//! gpt2's pieces in a window's masks. Simpler than cl100k's (`cl100k.rs` here):
//!
//! - a run of letters, of numbers or of "other" starts a piece unless U+0020 comes before
//!   it, which it takes (` ?\p{L}++`, ` ?\p{N}++`, ` ?[^\s\p{L}\p{N}]++`); numbers are
//!   not grouped, and no run takes the newlines after it.
//! - an apostrophe that starts a piece before a contraction (`'s`, `'ll`, ..., lowercase
//!   only) takes only the contraction; the rest of the letters start anew.
//! - a whitespace run starts a piece, and so does its last character (`\s+(?!\S)` leaves
//!   it to the next piece, which it starts as a U+0020 prefix or alone); newlines are no
//!   different from other whitespace.
//!
//! Non-ASCII letters join the letter mask and numbers the digit mask (a run of numbers is
//! one piece, however many characters); marks, punctuation and symbols are "other".
//! Spaces from 0x80 are refused: a run's last character would have to be found by
//! characters.

use super::super::classes::{LETTER, NUMBER, SPACE};
use super::super::{gpt2, scan::Text};
use super::{after, all_if, before, contraction_pieces, decided, Masks, Rules};

/// The rules of tiktoken's gpt2 / r50k_base pattern.
pub struct Gpt2;

impl Rules for Gpt2 {
    #[inline(always)]
    fn take_char(m: &mut Masks, flags: u8, _k: usize, bytes: u64) -> bool {
        if flags & SPACE != 0 {
            return false;
        }
        // Without a branch: letters, numbers and "other" alternate.
        m.letter |= bytes & all_if(flags & LETTER != 0);
        m.digit |= bytes & all_if(flags & NUMBER != 0);
        true
    }

    #[inline(always)]
    fn starts(m: &Masks, text: &Text, pos: usize) -> (u64, u32) {
        let Masks { letter, digit, space, white, apostrophe, .. } = *m;
        let other = m.other();

        let white_starts = (white & !after(white)) | (white & !before(white));
        let run_starts =
            (letter & !after(letter)) | (digit & !after(digit)) | (other & !after(other));
        let piece_starts = run_starts & !after(space);

        let all = 1 | white_starts | piece_starts;
        let contractions = apostrophe & piece_starts & before(letter);
        let all = contraction_pieces(all, contractions, text, pos, false);
        (all, decided(m))
    }

    #[inline(always)]
    fn piece_end(text: &Text, i: usize) -> usize {
        gpt2::piece_end(text, i)
    }
}
