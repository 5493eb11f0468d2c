//! cl100k's pieces found 64 bytes at a time, as bit masks.
//!
//! The per-piece splitter (`cl100k::piece_end`) decides each piece by a chain of tests on
//! its first bytes; which test ends it changes from piece to piece, so on English it
//! mispredicted about 0.74 branches a piece (callgrind), most of them there. Here the
//! bytes of a window are classified into masks (bit k = byte k) and the starts of all its
//! pieces come out of a few shifts, ands and two carry-propagating adds, with no branch
//! per piece.
//!
//! The pattern has no lookbehind, so what follows a piece start depends only on the text
//! from there: a window always begins at a known start (bit 0) and is read as if the
//! text began there. The starts of ASCII text, given that (see `starts`):
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
//! Non-ASCII characters are looked up one by one (`take_chars`): a letter's bytes join
//! the letter mask, and any character that is neither a number nor a space (a mark,
//! punctuation, a symbol) is "other", its bytes after the first marked so that a lone
//! "other" is one character, not one byte. The rules above then hold as written: a
//! letter run is a run of letter bytes, and a prefix is the one character before it.
//! Non-ASCII numbers and spaces (grouped or left by characters) stop the lookup.
//!
//! Only starts that bytes inside the window decide are used: those up to the start of
//! the run that holds the window's first character not taken (a number or space from
//! 0x80) or its last byte (either may go on past what the masks saw). Pieces are emitted
//! up to the last such start, and the next window begins there. A window that decides
//! nothing (one run fills it) or whose first character not taken comes early hands its
//! 64 bytes to `cl100k::piece_end`, which handles any text, so long runs pay one
//! classification per 64 bytes.
//!
//! Unit tests compare the result with `cl100k::piece_end` piece by piece on texts built
//! to cross every rule at every offset of a window; `tests/pretokenize_fast.rs` and the
//! fuzz target compare the whole splitter with fancy-regex.

use super::cl100k;
use super::classes::{LETTER, NUMBER, SPACE};
use super::scan::Text;

/// Bytes classified at a time.
const WINDOW: usize = 64;

/// A window whose first character not taken (`take_chars`) comes before this goes piece
/// by piece: too little of it would be decided.
const EARLY_HIGH: u32 = 32;

/// A window's bytes by class, bit k for byte k.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Masks {
    /// `A`-`Z`, `a`-`z`.
    letter: u64,
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
    /// Bytes from 0x80, until [`take_chars`] takes the characters it can.
    high: u64,
    /// The bytes after the first of each character [`take_chars`] took.
    tail: u64,
}

impl Masks {
    /// The classes of `bytes` (64 of them), one byte at a time: the definition the vector
    /// version must agree with.
    #[cfg_attr(target_arch = "x86_64", allow(dead_code))]
    fn of_bytes(bytes: &[u8]) -> Self {
        let mut m = Masks::default();
        for (k, &b) in bytes[..WINDOW].iter().enumerate() {
            let bit = 1u64 << k;
            let set = |mask: &mut u64, yes: bool| *mask |= if yes { bit } else { 0 };
            set(&mut m.letter, b.is_ascii_alphabetic());
            set(&mut m.digit, b.is_ascii_digit());
            set(&mut m.space, b == b' ');
            set(&mut m.white, matches!(b, b'\t'..=b'\r' | b' '));
            set(&mut m.newline, matches!(b, b'\r' | b'\n'));
            set(&mut m.apostrophe, b == b'\'');
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

/// The piece starts of the window at `pos` of `text`, whose byte 0 starts a piece, and the
/// last position the window decides: starts at or below it are exact. Its first
/// [`EARLY_HIGH`] bytes are ASCII or taken characters ([`take_chars`]).
#[inline(always)]
fn starts(m: &Masks, text: &Text, pos: usize) -> (u64, u32) {
    let Masks { letter, digit, space, white, newline, apostrophe, high, tail } = *m;
    let other = !(letter | digit | white | high);
    let tab = white & !newline & !space;

    // Whitespace. Newlines right after "other" belong to its piece.
    let taken = fill_up(newline, newline & after(other));
    let white_left = white & !taken;
    let run_starts = white_left & !after(white_left);
    let not_newline = white_left & !newline;
    let last = not_newline & !before(white);
    // The stretch after a run's last newline (or the whole run, without one).
    let trailing = fill_down(not_newline, last);
    let white_starts = run_starts | (trailing & !after(trailing)) | last;

    // "Other": its runs, and the lone ones (one character: a prefix candidate).
    let other_starts = other & !after(other);
    let later_chars = other & !tail & !other_starts;
    let lone = other_starts & !fill_down(other, later_chars);
    let lone_start = lone & !after(space);
    let other_piece_starts = other_starts & !after(space);

    // Letters: a run starts a piece unless its prefix does.
    let letter_starts = letter & !after(letter);
    let prefixes = space | tab | fill_up(other, lone_start);
    let mut letter_piece_starts = letter_starts & !after(prefixes);
    let mut contractions = apostrophe & lone_start & before(letter_starts);
    while contractions != 0 {
        let k = contractions.trailing_zeros() as usize;
        contractions &= contractions - 1;
        letter_piece_starts |= contraction_rest(text, pos, k) & letter;
    }

    // Digits: in threes from each run's start.
    let mut groups = digit & !after(digit);
    let mut digit_starts = groups;
    let three = digit & after(digit) & after(after(digit));
    while groups != 0 {
        groups = (groups << 3) & three;
        digit_starts |= groups;
    }

    let all = 1 | white_starts | other_piece_starts | letter_piece_starts | digit_starts;

    // Decided up to the start of the run holding the first byte the masks cannot see
    // past: the first character not taken, else the last byte.
    let unknown = high.trailing_zeros(); // 64 without one
    debug_assert!(unknown >= EARLY_HIGH);
    let edge = 1u64 << (unknown - 1);
    let class = [letter, digit, white, other].into_iter().find(|c| c & edge != 0).unwrap_or(0);
    let below = edge | (edge - 1);
    let outside = !class & below;
    let decided = if outside == 0 { 0 } else { 64 - outside.leading_zeros() };
    (all, decided)
}

/// The bit of the piece start that follows a contraction at the apostrophe `k` of the
/// window at `pos` (a lone apostrophe starting a piece, a letter after it), or 0 if the
/// letters after it are no contraction or the start would lie past the window. The
/// per-piece splitter's own test, so `'ſ` (which `(?i:s)` matches) is one too.
#[inline(never)]
fn contraction_rest(text: &Text, pos: usize, k: usize) -> u64 {
    match text.contraction(pos + k, true) {
        Some(end) if end - pos < WINDOW => 1 << (end - pos),
        _ => 0,
    }
}

/// Takes the window's non-ASCII characters (at `pos` of `text`) into the masks, one by
/// one from the first, up to the first that is a number or a space (`\p{N}`, `\s`: the
/// rules count those by characters), which with every byte after it stays in `high`,
/// past what the masks decide. A letter's bytes are letter bytes; the bytes of any other
/// character (a mark, punctuation, a symbol) are left in no mask, which is "other"; the
/// bytes after a character's first are in `tail`, so a run of "other" is known to be one
/// character or more.
#[inline(always)]
fn take_chars(m: &mut Masks, text: &Text, pos: usize) {
    let mut rest = m.high;
    while rest != 0 {
        // Every byte before `k` is ASCII or a taken character's, so `k` starts one.
        let k = rest.trailing_zeros() as usize;
        let (flags, len) = text.class(pos + k);
        if flags & (NUMBER | SPACE) != 0 {
            break;
        }
        // A character that runs past the window marks what is in it.
        let bytes = ((1u64 << len) - 1) << k;
        if flags & LETTER != 0 {
            m.letter |= bytes;
        }
        m.tail |= bytes & !(1 << k);
        rest &= !bytes;
    }
    m.high = rest;
}

/// Emits the pieces of `text` (cl100k), windows where they decide, `cl100k::piece_end`
/// elsewhere.
#[inline(always)]
pub fn split<'t>(text: &'t str, mut emit: impl FnMut(&'t [u8])) {
    let scan = Text::new(text);
    let bytes = text.as_bytes();
    let mut pos = 0;
    // Positions below this go piece by piece (a window here would decide little).
    let mut scalar_until = 0;
    while pos < bytes.len() {
        if pos >= scalar_until && pos + WINDOW <= bytes.len() {
            let mut masks = Masks::of(bytes, pos);
            if masks.high != 0 {
                take_chars(&mut masks, &scan, pos);
            }
            if masks.high.trailing_zeros() < EARLY_HIGH {
                scalar_until = pos + WINDOW;
            } else {
                let (all, decided) = starts(&masks, &scan, pos);
                // Bits 1..=decided.
                let mut kept = all & (u64::MAX >> (63 - decided)) & !1;
                if kept == 0 {
                    // One run fills the window (digits would decide three at a time).
                    scalar_until = pos + WINDOW;
                } else {
                    let mut from = pos;
                    while kept != 0 {
                        let to = pos + kept.trailing_zeros() as usize;
                        emit(&bytes[from..to]);
                        from = to;
                        kept &= kept - 1;
                    }
                    pos = from;
                    continue;
                }
            }
        }
        let end = cl100k::piece_end(&scan, pos);
        emit(&bytes[pos..end]);
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
            m.digit |= bits(within(v, b'0', 10));
            m.space |= bits(eq(b' '));
            m.white |= bits(whitespace(v));
            m.newline |= bits(_mm_or_si128(eq(b'\n'), eq(b'\r')));
            m.apostrophe |= bits(eq(b'\''));
            m.high |= bits(v);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    /// `cl100k::piece_end` piece by piece (the split loop of the other patterns): the
    /// reference.
    fn one_by_one(text: &str) -> Vec<&[u8]> {
        let mut out = Vec::new();
        super::super::split_with(text, |p| out.push(p), cl100k::piece_end);
        out
    }

    fn by_windows(text: &str) -> Vec<&[u8]> {
        let mut out = Vec::new();
        split(text, |p| out.push(p));
        out
    }

    fn check(text: &str) {
        let (want, got) = (one_by_one(text), by_windows(text));
        if got != want {
            let at = got.iter().zip(&want).take_while(|(g, w)| g == w).count();
            panic!(
                "{text:?}: piece {at} is {:?}, piece by piece it is {:?}",
                got.get(at).map(|p| String::from_utf8_lossy(p)),
                want.get(at).map(|p| String::from_utf8_lossy(p)),
            );
        }
    }

    /// Atoms that cross every rule: contractions and their near misses, lone and runs of
    /// punctuation, each kind of whitespace with and without newlines, digit runs of
    /// every length mod 3, non-ASCII letters, spaces, digits, punctuation and marks.
    // Kept compact by hand: rustfmt puts one atom a line once any is over 10 characters.
    #[rustfmt::skip]
    const ATOMS: &[&str] = &[
        "a", "Ab", "word", "s", "ll", "ve", "re", "'", "'s", "'S", "'t", "'d", "'m", "'ll", "'LL",
        "'Ve", "'re", "'x", "'l", "'v", "'r", "'e", ".", ",", "!?", "...", "\"", "(", " ", "  ",
        "   ", "\t", "\n", "\r\n", "\n\n", " \n", "\n ", "\x0b", "\x0c", " \t", "1", "12", "123",
        "1234", "12345", "é", "ß", "中文", "\u{a0}", "\u{3000}", "\u{85}", "٣", "—", "’", "ſ",
        "\u{301}", "'ſ", "'é", "слово", " мир", "λόγος", "𝐀", "😀", "e\u{301}", "ǅ", "ʰ", "«", "…",
        "—x", "ที่", "किताब", "\u{301}\u{301}", "a\u{301}b",
    ];

    /// Which atoms a random text is made of.
    #[derive(Clone, Copy)]
    enum Pool {
        Ascii,
        /// Atoms whose non-ASCII characters are neither numbers nor spaces: windows
        /// that decide text of several scripts ([`take_chars`]).
        Taken,
        All,
    }

    fn random_text(rng: &mut Rng, atoms: usize, pool: Pool) -> String {
        let taken =
            |c: char| crate::pretokenize::classes::table().get(c as u32) & (NUMBER | SPACE) == 0;
        let pool: Vec<&str> = (ATOMS.iter().copied())
            .filter(|a| match pool {
                Pool::Ascii => a.is_ascii(),
                Pool::Taken => a.chars().all(|c| c.is_ascii() || taken(c)),
                Pool::All => true,
            })
            .collect();
        (0..atoms).map(|_| pool[rng.below(pool.len())]).collect()
    }

    #[test]
    fn windows_split_as_piece_by_piece() {
        let mut rng = Rng(0xB10C);
        for round in 0..30_000 {
            let atoms = 10 + rng.below(120);
            let pool = [Pool::Ascii, Pool::Ascii, Pool::Taken, Pool::All][round % 4];
            check(&random_text(&mut rng, atoms, pool));
        }
    }

    /// Every atom pair at every offset around the window edges, in text otherwise of
    /// plain words, so each rule meets the edge of a window and of a first non-ASCII byte.
    #[test]
    fn rules_at_every_offset_split_as_piece_by_piece() {
        for a in ATOMS {
            for b in ATOMS {
                for offset in 0..70 {
                    let mut text: String = "x".repeat(offset % 3) + &" y".repeat(offset / 2);
                    text.truncate(offset);
                    text.push_str(a);
                    text.push_str(b);
                    text.push_str(" tail of plain words to fill the window, and then more");
                    check(&text);
                }
            }
        }
    }

    #[test]
    fn vector_masks_are_the_byte_classes() {
        let mut bytes = [0u8; 64];
        for start in (0..=255u8).step_by(64) {
            for (k, b) in bytes.iter_mut().enumerate() {
                *b = start.wrapping_add(k as u8);
            }
            assert_eq!(Masks::of(&bytes, 0), Masks::of_bytes(&bytes), "bytes from {start}");
        }
    }
}
