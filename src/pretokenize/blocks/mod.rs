//! Pieces found 64 bytes at a time, as bit masks: the window engine, with the rules of
//! cl100k (`cl100k.rs` here), o200k (`o200k.rs`) and gpt2 (`gpt2.rs`).
//!
//! The per-piece splitters (`piece_end` of `super::cl100k`, `super::o200k`, ...) decide each
//! piece by a chain of tests on its first bytes; which test ends it changes from piece to
//! piece, so on English they mispredicted about 0.74 branches a piece (callgrind), most of
//! them there. Here the bytes of a window are classified into masks (bit k = byte k) and
//! the starts of all its pieces come out of a few shifts, ands and carry-propagating adds,
//! with no branch per piece.
//!
//! No built-in pattern has lookbehind, so what follows a piece start depends only on the text
//! from there: a window always begins at a known start (bit 0) and is read as if the
//! text began there. Each pattern's rules say which non-ASCII characters its masks can
//! take (`Rules::take_char`) and where its pieces start (`Rules::starts`).
//!
//! Non-ASCII characters are looked up one by one (`take_chars`), from the window's first
//! byte from 0x80, up to the first one the rules cannot take, which with every byte after
//! it stays in `high`; the bytes after a taken character's first are in `tail`, so a run
//! of "other" is known to be one character or more.
//!
//! Only starts that bytes inside the window decide are used: those up to the start of
//! the run that holds the window's first character not taken or its last byte (either
//! may go on past what the masks saw). Pieces are emitted up to the last such start, and
//! the next window begins there. A window that decides nothing (one run fills it) or
//! whose first character not taken comes early hands its 64 bytes to the pattern's
//! `piece_end`, which handles any text, so long runs pay one classification per 64 bytes.
//!
//! Unit tests compare each pattern's windows with its `piece_end` piece by piece on texts
//! built to cross every rule at every offset of a window; `tests/pretokenize_fast.rs` and
//! the fuzz target compare the whole splitters with fancy-regex.

use super::scan::Text;
use super::sink::Sink;

mod cl100k;
mod gpt2;
mod o200k;

pub use cl100k::Cl100k;
pub use gpt2::Gpt2;
pub use o200k::O200k;

/// Bytes classified at a time.
const WINDOW: usize = 64;

/// A window whose first character not taken (`take_chars`) comes before this goes piece
/// by piece: too little of it would be decided.
const EARLY_HIGH: u32 = 32;

/// A window's bytes by class, bit k for byte k.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Masks {
    /// `A`-`Z`, `a`-`z`, and the letters [`take_chars`] took.
    letter: u64,
    /// `A`-`Z`, and the taken letters that are uppercase or titlecase only (o200k's
    /// `\p{Lu}`, `\p{Lt}`).
    upper: u64,
    /// Taken letters that are both o200k's U and W (`\p{Lm}`, `\p{Lo}`, marks after a
    /// letter); none in ASCII.
    both: u64,
    /// `0`-`9`.
    digit: u64,
    /// U+0020.
    space: u64,
    /// ASCII `\s`: `\t`, `\n`, U+000B, U+000C, `\r`, U+0020.
    white: u64,
    /// `\r`, `\n`.
    newline: u64,
    /// `'`.
    apostrophe: u64,
    /// `/`.
    slash: u64,
    /// Bytes from 0x80, until [`take_chars`] takes the characters it can.
    high: u64,
    /// The bytes after the first of each character [`take_chars`] took.
    tail: u64,
}

impl Masks {
    /// "Other": every byte in no class (punctuation, symbols, and the taken characters
    /// that are neither letters nor, where a pattern takes them, numbers).
    #[inline(always)]
    fn other(&self) -> u64 {
        !(self.letter | self.digit | self.white | self.high)
    }

    /// The classes of `bytes` (64 of them), one byte at a time: the definition the vector
    /// version must agree with.
    #[cfg_attr(target_arch = "x86_64", allow(dead_code))]
    fn of_bytes(bytes: &[u8]) -> Self {
        let mut m = Masks::default();
        for (k, &b) in bytes[..WINDOW].iter().enumerate() {
            let bit = 1u64 << k;
            let set = |mask: &mut u64, yes: bool| *mask |= if yes { bit } else { 0 };
            set(&mut m.letter, b.is_ascii_alphabetic());
            set(&mut m.upper, b.is_ascii_uppercase());
            set(&mut m.digit, b.is_ascii_digit());
            set(&mut m.space, b == b' ');
            set(&mut m.white, matches!(b, b'\t'..=b'\r' | b' '));
            set(&mut m.newline, matches!(b, b'\r' | b'\n'));
            set(&mut m.apostrophe, b == b'\'');
            set(&mut m.slash, b == b'/');
            set(&mut m.high, b >= 0x80);
        }
        m
    }

    /// The classes of the 64 bytes from `at` (`at + 64 <= bytes.len()`).
    #[inline(always)]
    fn of(bytes: &[u8], at: usize) -> Self {
        debug_assert!(at + WINDOW <= bytes.len());
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: the 64 bytes from `at` are in `bytes` (the callers' loop condition).
            unsafe { sse2::masks(bytes.as_ptr().add(at)) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            Self::of_bytes(&bytes[at..at + WINDOW])
        }
    }
}

/// Bit k set for each k where `mask` has k - 1 (nothing before bit 0: the window is read
/// as the start of the text).
#[inline(always)]
fn after(mask: u64) -> u64 {
    mask << 1
}

/// Bit k set for each k where `mask` has k + 1 (bit 63 gets nothing: that byte's
/// successor is unknown, and no start the result is used for depends on it).
#[inline(always)]
fn before(mask: u64) -> u64 {
    mask >> 1
}

/// The bits of `mask` reached from some bit of `seeds` (a subset) going up through
/// consecutive bits of `mask`: one add carries each seed through its run.
#[inline(always)]
fn fill_up(mask: u64, seeds: u64) -> u64 {
    (mask.wrapping_add(seeds) ^ mask) & mask
}

/// [`fill_up`] going down.
#[inline(always)]
fn fill_down(mask: u64, seeds: u64) -> u64 {
    fill_up(mask.reverse_bits(), seeds.reverse_bits()).reverse_bits()
}

/// What one pattern's windows need.
pub trait Rules {
    /// Takes the non-ASCII character at byte `k` of the window into `m` (its bytes are
    /// `bytes`, its flags from `classes.rs` are `flags`), or refuses it (false): the rules
    /// cannot place it from the masks. A character taken into no mask is "other".
    fn take_char(m: &mut Masks, flags: u8, k: usize, bytes: u64) -> bool;

    /// The piece starts of the window at `pos` of `text`, whose byte 0 starts a piece, and
    /// the last position the window decides: starts at or below it are exact. Its first
    /// [`EARLY_HIGH`] bytes are ASCII or taken characters.
    fn starts(m: &Masks, text: &Text, pos: usize) -> (u64, u32);

    /// The end of the piece at `i`, one piece at a time: the pattern's own splitter.
    fn piece_end(text: &Text, i: usize) -> usize;
}

/// The last position a window's masks decide (starts at or below it are exact): the
/// start of the run holding the first byte the masks cannot see past (the first character
/// not taken, else the last byte), since whether that run starts a piece depends only on
/// what precedes it.
#[inline(always)]
fn decided(m: &Masks) -> u32 {
    let unknown = m.high.trailing_zeros(); // 64 without one
    debug_assert!(unknown >= EARLY_HIGH);
    let edge = 1u64 << (unknown - 1);
    let class = [m.letter, m.digit, m.white, m.other()].into_iter().find(|c| c & edge != 0);
    let below = edge | (edge - 1);
    let outside = !class.unwrap_or(0) & below;
    if outside == 0 {
        0
    } else {
        64 - outside.leading_zeros()
    }
}

/// Every bit when `yes`, none otherwise (a mask chosen without a branch).
#[inline(always)]
fn all_if(yes: bool) -> u64 {
    0u64.wrapping_sub(yes as u64)
}

/// The starts of the digits in `digit`: every run's start, then every three digits
/// (`\p{N}{1,3}`, one shift per group).
#[inline(always)]
fn digit_starts(digit: u64) -> u64 {
    let mut groups = digit & !after(digit);
    let mut starts = groups;
    let three = digit & after(digit) & after(after(digit));
    while groups != 0 {
        groups = (groups << 3) & three;
        starts |= groups;
    }
    starts
}

/// The starts of the whitespace in `white_left` (the window's `\s` less newlines that
/// "other" before them takes), the same in cl100k and o200k: each run's start, the byte after
/// its last newline when more whitespace follows (`\s*[\r\n]` ends there), and its last
/// byte when that is not a newline (`\s+(?!\S)` leaves it to the next piece).
#[inline(always)]
fn white_starts(m: &Masks, white_left: u64) -> u64 {
    let run_starts = white_left & !after(white_left);
    let not_newline = white_left & !m.newline;
    let last = not_newline & !before(m.white);
    // The stretch after a run's last newline (or the whole run, without one).
    let trailing = fill_down(not_newline, last);
    run_starts | (trailing & !after(trailing)) | last
}

/// "Other" runs (`run_other`, after whatever a rule takes out) and the window's U+0020:
/// the starts of the runs (a U+0020 before one is its start) and the lone ones (one
/// character, not after U+0020: a prefix when letters follow).
#[inline(always)]
fn other_starts(m: &Masks, run_other: u64) -> (u64, u64) {
    let starts = run_other & !after(run_other);
    let later_chars = run_other & !m.tail & !starts;
    let lone = starts & !fill_down(run_other, later_chars);
    (starts & !after(m.space), lone & !after(m.space))
}

/// The end (a window position, maybe past the window) of the contraction at the
/// apostrophe `k` of the window at `pos`, if one is there: the per-piece splitters' own
/// test, so with `fold` (`(?i:...)`) `'ſ` is one too.
#[inline(never)]
fn contraction_at(text: &Text, pos: usize, k: u32, fold: bool) -> Option<usize> {
    text.contraction(pos + k as usize, fold).map(|end| end - pos)
}

/// `starts` where each apostrophe of `apostrophes` (each starting a piece, a letter after
/// it) that begins a contraction takes only the contraction (cl100k's and gpt2's
/// `'(?:[sdmt]|ll|ve|re)`, folded with `fold`): no start inside it, one at its end.
#[inline(always)]
fn contraction_pieces(
    mut starts: u64,
    mut apostrophes: u64,
    text: &Text,
    pos: usize,
    fold: bool,
) -> u64 {
    while apostrophes != 0 {
        let k = apostrophes.trailing_zeros();
        apostrophes &= apostrophes - 1;
        if let Some(end) = contraction_at(text, pos, k, fold) {
            starts = around_contraction(starts, k + 1, end);
        }
    }
    starts
}

/// `starts` with none from `from` up to a contraction's `end` and one at `end`, when that
/// is in the window (past it, none from `from` on).
#[inline(always)]
fn around_contraction(starts: u64, from: u32, end: usize) -> u64 {
    let from_on = u64::MAX << from;
    if end >= WINDOW {
        return starts & !from_on;
    }
    (starts & !(from_on & ((1u64 << end) - 1))) | 1 << end
}

/// Takes the window's non-ASCII characters (at `pos` of `text`) into the masks, one by
/// one from the first, up to the first that `R` refuses, which with every byte after it
/// stays in `high`, past what the masks decide.
#[inline(always)]
fn take_chars<R: Rules>(m: &mut Masks, text: &Text, pos: usize) {
    let mut rest = m.high;
    while rest != 0 {
        // Every byte before `k` is ASCII or a taken character's, so `k` starts one.
        let k = rest.trailing_zeros() as usize;
        let (flags, len) = text.class(pos + k);
        // A character that runs past the window marks what is in it.
        let bytes = ((1u64 << len) - 1) << k;
        if !R::take_char(m, flags, k, bytes) {
            break;
        }
        m.tail |= bytes & !(1 << k);
        rest &= !bytes;
    }
    m.high = rest;
}

/// Sends the pieces of `text` under `R` to `sink`: a window's at once where windows
/// decide, one by one from `R::piece_end` elsewhere.
#[inline(always)]
pub fn split<'t, R: Rules>(text: &'t str, sink: &mut impl Sink<'t>) {
    let scan = Text::new(text);
    let bytes = text.as_bytes();
    let mut pos = 0;
    // Positions below this go piece by piece (a window here would decide little).
    let mut scalar_until = 0;
    while pos < bytes.len() {
        if pos >= scalar_until && pos + WINDOW <= bytes.len() {
            let mut masks = Masks::of(bytes, pos);
            if masks.high != 0 {
                take_chars::<R>(&mut masks, &scan, pos);
            }
            if masks.high.trailing_zeros() < EARLY_HIGH {
                scalar_until = pos + WINDOW;
            } else {
                let (all, decided) = R::starts(&masks, &scan, pos);
                // Bits 1..=decided.
                let kept = all & (u64::MAX >> (63 - decided)) & !1;
                if kept == 0 {
                    // One run fills the window (digits would decide three at a time).
                    scalar_until = pos + WINDOW;
                } else {
                    pos = sink.pieces(bytes, pos, pos, kept);
                    continue;
                }
            }
        }
        let end = R::piece_end(&scan, pos);
        sink.piece(&bytes[pos..end]);
        pos = end;
    }
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };

    use super::super::runs::sse2::{letter, whitespace, within};
    use super::Masks;

    /// The classes of the 64 bytes at `p`, 16 at a time, by the range tests the run scans
    /// use (`runs.rs`).
    ///
    /// # Safety
    /// The 64 bytes from `p` must be readable. (SSE2 is in the x86_64 baseline.)
    #[inline(always)]
    pub unsafe fn masks(p: *const u8) -> Masks {
        let mut m = Masks::default();
        for part in 0..4 {
            let v = _mm_loadu_si128(p.add(16 * part).cast::<__m128i>());
            let bits = |x: __m128i| (_mm_movemask_epi8(x) as u32 as u64) << (16 * part);
            let eq = |b: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8));
            m.letter |= bits(letter(v));
            m.upper |= bits(within(v, b'A', 26));
            m.digit |= bits(within(v, b'0', 10));
            m.space |= bits(eq(b' '));
            m.white |= bits(whitespace(v));
            m.newline |= bits(_mm_or_si128(eq(b'\n'), eq(b'\r')));
            m.apostrophe |= bits(eq(b'\''));
            m.slash |= bits(eq(b'/'));
            m.high |= bits(v);
        }
        m
    }
}

#[cfg(test)]
mod tests;
