//! The building blocks the hand-written splitters share: a cursor over valid UTF-8 that
//! classifies characters, maximal runs of a class, whitespace runs, contractions.
//!
//! Every function here looks at each character it passes once, so a splitter that calls
//! them a bounded number of times per piece (over the text that piece and its neighbours
//! cover) runs in linear time.

use super::ascii::{DIGIT, KIND, OTHER};
use super::classes::{self, Table, FOLDS, LETTER, LOWERISH, NUMBER, SPACE, UPPERISH, WORDISH};
use super::runs::{self, Set};

/// A text being split. Positions are byte offsets on character boundaries.
#[derive(Clone, Copy)]
pub struct Text<'t> {
    /// The text's bytes: valid UTF-8, from the `str` given to `new` (private, so the
    /// unchecked reads of `decode` stay within a character).
    bytes: &'t [u8],
    /// Flags by byte (ASCII flags, none from 0x80), for the ASCII fast path.
    by_byte: &'static [u8; 256],
    /// Flags of every character.
    table: &'static Table,
}

/// What a run of `\s` starting at some position looks like.
pub struct Spaces {
    /// End of the maximal run.
    pub end: usize,
    /// Start of its last character (> start when the run has two or more characters).
    pub last: usize,
    /// End of its last `\r` or `\n`, if it has one.
    pub newline_end: Option<usize>,
}

impl<'t> Text<'t> {
    pub fn new(text: &'t str) -> Self {
        let table = classes::table();
        Self { bytes: text.as_bytes(), by_byte: table.by_byte(), table }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// The byte at `i` (`i < len`).
    #[inline(always)]
    pub fn byte(&self, i: usize) -> u8 {
        self.bytes[i]
    }

    /// The flags and UTF-8 length of the character at `i` (`i < len`, and `i` starts a
    /// character: every position the splitters pass is the start of the text or the end
    /// of a character they stepped over).
    #[inline(always)]
    pub fn class(&self, i: usize) -> (u8, usize) {
        let b = self.bytes[i];
        if b < 0x80 {
            return (self.by_byte[b as usize], 1);
        }
        let (cp, len) = self.decode(i);
        // SAFETY: decoded from valid UTF-8, so at most U+10FFFF.
        (unsafe { self.table.get_unchecked(cp) }, len)
    }

    /// Decodes the character that starts at `i`, a byte from 0x80.
    #[inline(always)]
    fn decode(&self, i: usize) -> (u32, usize) {
        let b0 = self.bytes[i] as u32;
        debug_assert!(b0 >= 0xC0, "byte {i} does not start a multi-byte character");
        // SAFETY: `bytes` is valid UTF-8 and `i` starts a character (see `class`; debug
        // builds check it above), so the continuation bytes its lead byte announces are
        // in `bytes`: up to `i + 1`, `i + 2` or `i + 3`, read only in those branches.
        let cont = |k: usize| (unsafe { *self.bytes.get_unchecked(i + k) } & 0x3F) as u32;
        if b0 < 0xE0 {
            (((b0 & 0x1F) << 6) | cont(1), 2)
        } else if b0 < 0xF0 {
            (((b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2), 3)
        } else {
            (((b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3), 4)
        }
    }

    /// The ASCII kind (`ascii.rs`) of the byte at `i`; none (0) from 0x80 and at the end.
    #[inline(always)]
    pub fn kind(&self, i: usize) -> u8 {
        self.bytes.get(i).map_or(0, |&b| KIND[b as usize])
    }

    /// Whether `i` is the end of the text or an ASCII byte: an ASCII run that stops at `i`
    /// stops there whatever the classes of non-ASCII characters.
    #[inline(always)]
    pub fn ends_ascii(&self, i: usize) -> bool {
        !matches!(self.bytes.get(i), Some(&b) if b >= 0x80)
    }

    /// End of the maximal run from `i` of ASCII bytes in `set`.
    #[inline(always)]
    pub fn run_set(&self, i: usize, set: Set) -> usize {
        runs::run_end(self.bytes, i, set)
    }

    /// `\p{N}{1,3}` at an ASCII digit `i`, when the ASCII bytes decide it: `None` when the
    /// run of ASCII digits stops short of three at a non-ASCII character (which may be a
    /// number).
    #[inline(always)]
    pub fn ascii_digits(&self, i: usize) -> Option<usize> {
        let mut end = i + 1;
        while end < i + 3 && self.kind(end) == DIGIT {
            end += 1;
        }
        (end == i + 3 || self.ends_ascii(end)).then_some(end)
    }

    /// Whether a character starts at `i` (not the end) and has one of the `mask` flags.
    #[inline]
    pub fn is(&self, i: usize, mask: u8) -> bool {
        i < self.len() && self.class(i).0 & mask != 0
    }

    /// Whether a character starts at `i` and is in `[^\s\p{L}\p{N}]`.
    #[inline]
    pub fn is_other(&self, i: usize) -> bool {
        i < self.len() && self.class(i).0 & WORDISH == 0
    }

    /// End of the maximal run from `i` of ASCII characters with one of the `mask` flags,
    /// stopping at the first non-ASCII byte too: 16 bytes at a time for the masks the
    /// splitters use (constants once inlined), else one table lookup per byte.
    #[inline(always)]
    pub fn run_ascii(&self, mut i: usize, mask: u8) -> usize {
        let set = match mask {
            LETTER => Set::Letter,
            NUMBER => Set::Digit,
            SPACE => Set::Whitespace,
            // ASCII members of o200k's U and W: uppercase and lowercase letters.
            UPPERISH => Set::Upper,
            LOWERISH => Set::Lower,
            _ => {
                while i < self.len() && self.by_byte[self.bytes[i] as usize] & mask != 0 {
                    i += 1;
                }
                return i;
            }
        };
        self.run_set(i, set)
    }

    /// End of the maximal run from `i` of characters with one of the `mask` flags.
    #[inline(always)]
    pub fn run(&self, i: usize, mask: u8) -> usize {
        // ASCII first (most runs in most text are ASCII), then one character at a time by
        // the Unicode table while the bytes are non-ASCII; back to the vector scan only at
        // an ASCII member (a vector test per character of a non-ASCII run was slower).
        let mut i = self.run_ascii(i, mask);
        loop {
            if i == self.len() || self.bytes[i] < 0x80 {
                return i;
            }
            let (flags, len) = self.class(i);
            if flags & mask == 0 {
                return i;
            }
            i += len;
            if self.ascii_member(i, mask) {
                i = self.run_ascii(i + 1, mask);
            }
        }
    }

    /// Whether the byte at `i` is an ASCII character with one of the `mask` flags.
    #[inline(always)]
    pub fn ascii_member(&self, i: usize, mask: u8) -> bool {
        i < self.len() && self.by_byte[self.bytes[i] as usize] & mask != 0
    }

    /// End of the run from `i` of at most `max` characters with one of the `mask` flags.
    #[inline(always)]
    pub fn run_at_most(&self, mut i: usize, mask: u8, max: usize) -> usize {
        for _ in 0..max {
            if !self.is(i, mask) {
                break;
            }
            i += self.class(i).1;
        }
        i
    }

    /// End of the maximal run from `i` of `[^\s\p{L}\p{N}]`.
    #[inline(always)]
    pub fn run_other(&self, i: usize) -> usize {
        // As `run`: ASCII 16 bytes at a time, non-ASCII one character at a time. Most
        // punctuation stands alone (`,` `.` before a space), so the byte at `i` is tested
        // first and the vector scan (the widest set, ~20 instructions) only follows one.
        let mut i = if self.kind(i) & OTHER != 0 { self.run_set(i + 1, Set::Other) } else { i };
        loop {
            if i == self.len() || self.bytes[i] < 0x80 {
                return i;
            }
            let (flags, len) = self.class(i);
            if flags & WORDISH != 0 {
                return i;
            }
            i += len;
            if self.kind(i) & OTHER != 0 {
                i = self.run_set(i + 1, Set::Other);
            }
        }
    }

    /// End of the maximal run from `i` of the ASCII bytes in `set` (`[\r\n]*`, `[\r\n/]*`).
    #[inline]
    pub fn run_bytes(&self, mut i: usize, set: &[u8]) -> usize {
        while i < self.len() && set.contains(&self.bytes[i]) {
            i += 1;
        }
        i
    }

    /// The maximal `\s` run from `i` (the character at `i` must be `\s`).
    #[inline(always)]
    pub fn spaces(&self, start: usize) -> Spaces {
        let (mut i, mut last, mut newline_end) = (start, start, None);
        while i < self.len() {
            // ASCII spaces first: the last character of the stretch and its last newline.
            let ascii_end = self.run_ascii(i, SPACE);
            if ascii_end > i {
                last = ascii_end - 1;
                if let Some(k) = self.bytes[i..ascii_end].iter().rposition(|b| b"\r\n".contains(b))
                {
                    newline_end = Some(i + k + 1);
                }
                i = ascii_end;
                if i == self.len() || self.bytes[i] < 0x80 {
                    break;
                }
            }
            let (flags, len) = self.class(i);
            if flags & SPACE == 0 {
                break;
            }
            if matches!(self.bytes[i], b'\r' | b'\n') {
                newline_end = Some(i + 1);
            }
            last = i;
            i += len;
        }
        Spaces { end: i, last, newline_end }
    }

    /// The maximal `\s` run from `i` when it is all ASCII and ends at an ASCII byte or the
    /// end of the text (`None` otherwise: `spaces` then decides). `i` must be ASCII `\s`.
    #[inline(always)]
    pub fn ascii_spaces(&self, i: usize) -> Option<Spaces> {
        let end = self.run_set(i + 1, Set::Whitespace);
        if !self.ends_ascii(end) {
            return None;
        }
        let newline_end = self.bytes[i..end].iter().rposition(|b| b"\r\n".contains(b));
        Some(Spaces { end, last: end - 1, newline_end: newline_end.map(|k| i + k + 1) })
    }

    /// The end of `'s`, `'t`, `'re`, `'ve`, `'m`, `'ll` or `'d` at `i`, if one is there.
    /// With `fold`, letters match as under `(?i:...)` (so `'S`, `'LL` and `'ſ` count).
    /// The alternatives start with different letters, so their order does not matter.
    #[inline]
    pub fn contraction(&self, i: usize, fold: bool) -> Option<usize> {
        if self.bytes.get(i) != Some(&b'\'') {
            return None;
        }
        let (first, after) = self.letter_at(i + 1, fold)?;
        let second = match first {
            's' | 't' | 'd' | 'm' => return Some(after),
            'r' | 'v' => 'e',
            'l' => 'l',
            _ => return None,
        };
        match self.letter_at(after, fold)? {
            (c, end) if c == second => Some(end),
            _ => None,
        }
    }

    /// The contraction letter at `i` (folded to lowercase ASCII) and the end of its char.
    #[inline]
    fn letter_at(&self, i: usize, fold: bool) -> Option<(char, usize)> {
        let b = *self.bytes.get(i)?;
        if b.is_ascii_lowercase() || (fold && b.is_ascii_uppercase()) {
            return Some((b.to_ascii_lowercase() as char, i + 1));
        }
        if fold && b >= 0x80 {
            // Non-ASCII members of the fold sets (only U+017F ſ for `s`).
            let (cp, len) = self.decode(i);
            let c = char::from_u32(cp)?;
            let (letter, _) = FOLDS.iter().find(|(_, set)| !c.is_ascii() && set.contains(&c))?;
            return Some((*letter, i + len));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::classes::{LETTER, LOWERISH, NUMBER, UPPERISH};
    use super::*;

    /// The characters of `text` from `i`, each with its flags from the Unicode table
    /// alone (the path every character took before the ASCII fast paths).
    fn unicode_chars(text: &str, i: usize) -> impl Iterator<Item = (usize, u8)> + '_ {
        text[i..].char_indices().map(move |(k, c)| (i + k, classes::table().get(c as u32)))
    }

    /// End of the maximal run from `i` of characters whose flags satisfy `keep`.
    fn unicode_run(text: &str, i: usize, keep: impl Fn(u8) -> bool) -> usize {
        unicode_chars(text, i).find(|&(_, f)| !keep(f)).map_or(text.len(), |(at, _)| at)
    }

    fn unicode_spaces(text: &str, i: usize) -> (usize, usize, Option<usize>) {
        let end = unicode_run(text, i, |f| f & SPACE != 0);
        let last = text[..end].char_indices().next_back().map_or(i, |(at, _)| at.max(i));
        let newline_end = text[i..end].rfind(['\r', '\n']).map(|k| i + k + 1);
        (end, last, newline_end)
    }

    /// ASCII-heavy text: mostly ASCII letters, digits, spaces, newlines and punctuation,
    /// with a non-ASCII character of each class now and then.
    fn ascii_heavy(seed: u64, len: usize) -> String {
        const ASCII: &[u8] = b"aZsT09 '  \t\n\r.,/!-";
        const OTHER: &[char] =
            &['é', 'É', 'ſ', '\u{301}', '\u{a0}', '\u{3000}', 'ǅ', 'ʰ', '中', '²', '€'];
        let mut state = seed;
        (0..len)
            .map(|_| {
                // A 64-bit LCG is plenty for picking characters.
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let r = (state >> 33) as usize;
                if r.is_multiple_of(10) {
                    OTHER[(r / 10) % OTHER.len()]
                } else {
                    ASCII[(r / 10) % ASCII.len()] as char
                }
            })
            .collect()
    }

    #[test]
    fn ascii_fast_paths_agree_with_the_unicode_path() {
        for seed in 0..300 {
            let s = ascii_heavy(seed, 1 + (seed as usize % 60));
            let text = Text::new(&s);
            for (i, _) in s.char_indices() {
                for mask in [LETTER, NUMBER, SPACE, UPPERISH, LOWERISH] {
                    let want = unicode_run(&s, i, |f| f & mask != 0);
                    assert_eq!(text.run(i, mask), want, "run({i}, {mask:#x}) on {s:?}");
                }
                let want = unicode_run(&s, i, |f| f & WORDISH == 0);
                assert_eq!(text.run_other(i), want, "run_other({i}) on {s:?}");
                if text.is(i, SPACE) {
                    let got = text.spaces(i);
                    let want = unicode_spaces(&s, i);
                    assert_eq!((got.end, got.last, got.newline_end), want, "spaces({i}) on {s:?}");
                }
            }
        }
    }
}
