//! o200k's pieces in a window's masks. The rules are cl100k's (`cl100k.rs` here) for
//! whitespace, digits, "other" and prefixes, with three differences:
//!
//! - a word is `U*W+` or `U+W*` (U: uppercase, titlecase, `\p{Lm}`, `\p{Lo}`, marks; W:
//!   lowercase, `\p{Lm}`, `\p{Lo}`, marks), so a letter run is cut into words. Call u a
//!   letter that is only U, l one that is only W, and b one that is both (none in ASCII).
//!   From a word's start, `U*` takes u and b; once an l comes, `W+` takes l and b, and the
//!   next u starts a word. Without an l, `U*` gives back to the run's last b, and the u
//!   after it start a word (`U+W*` takes them). So inside a run, a u starts a word when
//!   it follows an l, or a b reached from an l through b only, or a b when only u follow
//!   to the run's end.
//! - a contraction (`(?i:'s|'t|'re|'ve|'m|'ll|'d)`) is the end of the word before it, not
//!   a piece of its own: an apostrophe after a letter is checked with the per-piece
//!   splitter's test, and the piece after it starts where the contraction ends.
//! - a run of "other" takes the newlines and slashes after it (`[\r\n/]*`), not only the
//!   newlines.
//!
//! Non-ASCII letters are taken by case. A mark is a b when a letter, digit or whitespace
//! comes before it (or it starts the window): there it starts or continues a word exactly
//! as a b would. After "other" it is refused, since a run of "other" (`[^\s\p{L}\p{N}]+`)
//! may take it. Numbers and spaces are refused, as in cl100k.

use super::super::classes::{LETTER, LL, LT, LU, MARK, NUMBER, SPACE};
use super::super::{o200k, scan::Text};
use super::{
    after, all_if, around_contraction, before, contraction_at, decided, digit_starts, fill_down,
    fill_up, other_starts, white_starts, Masks, Rules, WINDOW,
};

/// The rules of tiktoken's o200k_base pattern.
pub struct O200k;

impl Rules for O200k {
    #[inline(always)]
    fn take_char(m: &mut Masks, flags: u8, k: usize, bytes: u64) -> bool {
        if flags & (NUMBER | SPACE) != 0 {
            return false;
        }
        if flags & MARK != 0 {
            let before_it = (1u64 << k) >> 1;
            if k != 0 && before_it & (m.letter | m.digit | m.white) == 0 {
                return false;
            }
            m.letter |= bytes;
            m.both |= bytes;
        } else {
            // Without a branch: letters of each case and "other" alternate.
            let letter = bytes & all_if(flags & LETTER != 0);
            m.letter |= letter;
            m.upper |= letter & all_if(flags & (LU | LT) != 0);
            m.both |= letter & all_if(flags & (LU | LT | LL) == 0);
        }
        true
    }

    #[inline(always)]
    fn starts(m: &Masks, text: &Text, pos: usize) -> (u64, u32) {
        let Masks { letter, upper, both, digit, space, white, newline, apostrophe, slash, .. } = *m;
        let other = m.other();
        let tab = white & !newline & !space;

        // `[\r\n/]*` after a run of "other" (a slash right after it is in the run). Every
        // newline after a slash is a seed, so one stretch may hold several.
        let taken = fill_up_seeds(newline | slash, newline & after(other));
        let run_other = other & !taken;
        let (other_piece_starts, lone_start) = other_starts(m, run_other);

        // Letters: a run starts a piece unless its prefix does; inside it, words.
        let letter_starts = letter & !after(letter);
        let prefixes = space | tab | fill_up(run_other, lone_start);
        let lower = letter & !upper & !both;
        let lower_phase = lower | fill_up(both, both & after(lower));
        let trailing_upper = fill_down(upper, upper & !before(letter));
        let words = (letter_starts & !after(prefixes))
            | (upper & after(lower_phase))
            | (trailing_upper & !after(upper) & after(both));

        let mut all =
            1 | white_starts(m, white & !taken) | other_piece_starts | words | digit_starts(digit);
        let mut decided = decided(m);
        // An apostrophe right after a contraction starts a piece, whatever letter precedes.
        let mut contraction_end = 0;
        let mut contractions = apostrophe & after(letter);
        while contractions != 0 {
            let k = contractions.trailing_zeros();
            contractions &= contractions - 1;
            if k as usize == contraction_end {
                continue;
            }
            if let Some(end) = contraction_at(text, pos, k, true) {
                contraction_end = end;
                all = around_contraction(all, k, end);
                // A b after it would start its word in `U*`, where the masks carry on the
                // contraction's case: a non-ASCII character there is left undecided.
                if end < WINDOW && text.byte(pos + end) >= 0x80 {
                    decided = decided.min(k);
                }
            }
        }
        (all, decided)
    }

    #[inline(always)]
    fn piece_end(text: &Text, i: usize) -> usize {
        o200k::piece_end(text, i)
    }
}

/// [`fill_up`] for any number of seeds in a run of `mask` (the add carries only the first):
/// each round doubles how far the seeds reach.
#[inline(always)]
fn fill_up_seeds(mut mask: u64, seeds: u64) -> u64 {
    let mut reached = seeds;
    for shift in [1, 2, 4, 8, 16, 32] {
        reached |= (reached << shift) & mask;
        mask &= mask << shift;
    }
    reached
}
